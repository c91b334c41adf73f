//! One federation, in process: Alg. 2 of paper 004 over any `SecureSum`, its
//! ablations, and the plaintext baselines under the same protocol (each
//! member alone, random search, and every member's data pooled).

use super::model::choose_warping_and_scaling;
use super::params::{
    FitStart, GlobalSteps, GlobalTrend, HyperLikelihood, HyperparameterMode, InitialDesign,
    KernelKind, LocalScaling, LocalSteps, Method, PriorMean, SupportSelection, ValidParams,
};
use super::private::PrivateFbo;
use super::{Client, Hyperparameters, OutputScaling, OutputWarping, Server, SummaryScaling};
use crate::surrogate::{AcquisitionStep, GlobalPosterior, Projected, Surrogate};
use crate::{AlgorithmError, RunResult};
use fedhe_bo::clustering::{global_clustering, kmeans_plus_plus, uniform_random_support};
use fedhe_bo::optim::Bounds;
use fedhe_bo::schedule::MixingSchedule;
use fedhe_crypto::{MemberId, SecureSum};
use fedhe_gp::exact::MeanFunction;
use fedhe_gp::sparse::{packed_len, Dpitc};
use fedhe_gp::trend::{determinable_points, quadratic_len, QuadraticTrend, TrendSums};
use fedhe_gp::{Kernel, KernelParams, Matern52, SquaredExponential};
use fedhe_tasks::Task;
use nalgebra::DMatrix;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::Instant;

/// How many times [`determinable_points`] a release of
/// [`GlobalTrend::QuadraticSpaced`] must hold in new unclipped points of
/// others, in every member's view: the count of unknowns alone is a
/// necessary condition, so the release rule keeps a margin above it.
const TREND_RELEASE_MARGIN: usize = 2;

/// [`GlobalTrend::QuadraticSpaced`] between releases.
#[derive(Debug, Default)]
struct SpacedTrend {
    /// The last released trend, in utility units (`u ≈ m(x)`), unclamped.
    kept: Option<QuadraticTrend>,
    /// The federation's unclipped points at the last release.
    points_at_release: f64,
    /// The points each member held at the last release (public: one a round).
    held_at_release: usize,
}

/// The factor `c` of a warping linear inside its clip (`w(u) = c·u` there),
/// which a kept trend needs to change standardisation; `None` for a
/// logarithmic one.
fn linear_warp_factor(warp: OutputWarping) -> Option<f64> {
    match warp {
        OutputWarping::None => Some(1.0),
        OutputWarping::Clipped(t) => Some(1.0 / t),
        OutputWarping::SignedLog | OutputWarping::ScaledLog(_) => None,
    }
}

/// A trend fitted to standardised warped utilities `z = (c·u − μ)/σ` of a
/// warping linear inside its clip (`c` from [`linear_warp_factor`]) as a
/// trend of the utility itself: `u = (σ/c)·z + μ/c`.
fn in_utility_units(
    trend: &QuadraticTrend,
    factor: f64,
    scaling: &OutputScaling,
) -> Result<QuadraticTrend, AlgorithmError> {
    Ok(trend.affine(scaling.std / factor, scaling.mean / factor)?)
}

/// The inverse of [`in_utility_units`] for another (or the same) warping
/// and standardisation: `z = (c/σ)·u − μ/σ`.
fn in_standardised_units(
    trend: &QuadraticTrend,
    factor: f64,
    scaling: &OutputScaling,
) -> Result<QuadraticTrend, AlgorithmError> {
    Ok(trend.affine(factor / scaling.std, -scaling.mean / scaling.std)?)
}

/// A trend in standardised units clamped to the standardised clip of a
/// clipped warping (where the values it was fitted to stop).
fn clamped_to_warp(
    trend: QuadraticTrend,
    warp: OutputWarping,
    scaling: &OutputScaling,
) -> Result<QuadraticTrend, AlgorithmError> {
    Ok(match warp {
        OutputWarping::Clipped(_) => trend.clamped(
            scaling.standardise(warp.apply(f64::NEG_INFINITY)),
            scaling.standardise(warp.apply(f64::INFINITY)),
        )?,
        _ => trend,
    })
}

/// The ridge of the global quadratic trend's least squares, relative to the
/// mean diagonal of its Gram matrix: negligible once the trend takes effect
/// (twice as many points as weights), it only keeps the solve defined.
const TREND_RIDGE: f64 = 1e-10;

/// What happened in one round, for progress reports.
#[derive(Debug, Clone, PartialEq)]
pub struct RoundEvent {
    /// The round `t` (from 1).
    pub round: usize,
    /// Clients that took a local step.
    pub local_steps: usize,
    /// Clients that took a global step.
    pub global_steps: usize,
    /// Whether the clients' summaries were aggregated this round.
    pub aggregated: bool,
    /// The best noise-free value evaluated this round (by the clients this
    /// process runs: every client in [`run`], one in [`run_member`]).
    pub round_best: f64,
    /// The best so far, over the same clients.
    pub best_so_far: f64,
    /// A private study's ε spent so far (one evaluation of one member, at
    /// the study's δ); `None` when noise-free.
    pub epsilon: Option<f64>,
}

/// Runs `method` on `task` with `members` (who must be the channel's members)
/// from `seed`, every client in this process. The plaintext baselines
/// `independent-bo`, `random-search` and `pooled-bo` never touch the channel.
pub fn run(
    task: &Task,
    method: Method,
    params: &ValidParams,
    channel: &mut dyn SecureSum,
    members: &[MemberId],
    seed: u64,
) -> Result<RunResult, AlgorithmError> {
    run_observed(task, method, params, channel, members, seed, &mut |_| {})
}

/// [`run`], calling `observer` after every round.
pub fn run_observed(
    task: &Task,
    method: Method,
    params: &ValidParams,
    channel: &mut dyn SecureSum,
    members: &[MemberId],
    seed: u64,
    observer: &mut dyn FnMut(&RoundEvent),
) -> Result<RunResult, AlgorithmError> {
    let roster = crate::roster::Roster::simulation(members, seed);
    run_roster(task, method, params, channel, &roster, seed, observer)
}

/// The private seed [`run`] gives client `index` of a federation seeded with
/// `seed` (so a run of [`run_member`] per member can reproduce it).
pub fn simulated_client_seed(seed: u64, index: usize) -> crate::roster::PrivateSeed {
    crate::roster::simulated_private_seed(seed, index)
}

/// Refuses settings a member running alone cannot follow.
pub fn check_networked(params: &ValidParams) -> Result<(), AlgorithmError> {
    if params.support_selection_resolved() == SupportSelection::PaperClustering {
        // Alg. 1 pools every client's local centres in one place.
        return Err(crate::error::config(
            "support_selection",
            "paper-clustering needs every member's local centres in one process; \
             a member running alone uses secure-kmeans or random",
        ));
    }
    if params.global_trend == GlobalTrend::Quadratic {
        // The differences of its sums between two fits are the degree-≤ 4
        // moments of the points added in between, which identify them.
        return Err(crate::error::config(
            "global_trend",
            "the quadratic trend's sums (the pooled Gram matrix of quadratic features) \
             change between two fits by the moments of the points added in between, \
             which reveal those points' inputs and values (SECURITY.md): a simulation \
             setting only, refused for members running apart (quadratic-spaced releases \
             its sums only where they cannot)",
        ));
    }
    Ok(())
}

/// One institution's side of a federation whose members run in separate
/// processes (the service's agent): the same protocol as [`run`], with only
/// `me`'s client here. `seed` is the federation's public seed (support-set
/// starts, hyper-parameter candidates, everyone's local/global draws) and must
/// be the same for every member; `private_seed` drives this client's own
/// randomness (initial points, acquisition search) and should be secret.
/// `channel` sums this member's contribution with the others'. The result's
/// `best` and `best_per_member` are this client's.
#[allow(clippy::too_many_arguments)]
pub fn run_member(
    task: &Task,
    method: Method,
    params: &ValidParams,
    channel: &mut dyn SecureSum,
    members: &[MemberId],
    me: &MemberId,
    seed: u64,
    private_seed: crate::roster::PrivateSeed,
    observer: &mut dyn FnMut(&RoundEvent),
) -> Result<RunResult, AlgorithmError> {
    let roster = crate::roster::Roster::member(members, me, private_seed)?;
    run_roster(task, method, params, channel, &roster, seed, observer)
}

/// `method` for the members of `roster` (every one in the simulator, one in
/// an agent): the one code path of [`run`] and [`run_member`].
pub fn run_roster(
    task: &Task,
    method: Method,
    params: &ValidParams,
    channel: &mut dyn SecureSum,
    roster: &crate::roster::Roster<'_>,
    seed: u64,
    observer: &mut dyn FnMut(&RoundEvent),
) -> Result<RunResult, AlgorithmError> {
    if !roster.is_simulation() {
        if method == Method::PooledBo {
            return Err(crate::error::config(
                "method",
                "pooled-bo pools every member's data in one place without privacy: \
                 it is a simulation reference and never runs as a member",
            ));
        }
        check_networked(params)?;
    }
    let members = roster.members();
    let roster = Roster {
        members,
        local: roster
            .local()
            .iter()
            .map(|l| Client::new(members[l.index].clone(), l.index, l.private_seed))
            .collect(),
        diagnostics: roster.is_simulation(),
    };
    dispatch(task, method, params, channel, roster, seed, observer)
}

/// Who takes part and which of them run here.
struct Roster<'m> {
    /// Every member, in the federation's order.
    members: &'m [MemberId],
    /// The clients this process runs.
    local: Vec<Client>,
    /// Whether to compute simulation-only diagnostics (they evaluate the
    /// objective outside the protocol).
    diagnostics: bool,
}

fn dispatch(
    task: &Task,
    method: Method,
    params: &ValidParams,
    channel: &mut dyn SecureSum,
    roster: Roster<'_>,
    seed: u64,
    observer: &mut dyn FnMut(&RoundEvent),
) -> Result<RunResult, AlgorithmError> {
    crate::error::check_task_members(task, roster.members, params.members)?;
    let dim = task.dim();
    match params.kernel {
        KernelKind::Se => {
            let family = SquaredExponential::new(KernelParams::isotropic(dim, 1.0, 1.0)?);
            Federation::new(task, method, params, roster, seed, family, observer).run(channel)
        }
        KernelKind::Matern52 => {
            let family = Matern52::new(KernelParams::isotropic(dim, 1.0, 1.0)?);
            Federation::new(task, method, params, roster, seed, family, observer).run(channel)
        }
    }
}

use crate::error::stream_seed as mix;

/// The best value of one round's evaluations.
struct RoundBest<'t> {
    task: &'t Task,
    value: f64,
}

impl<'t> RoundBest<'t> {
    fn new(task: &'t Task) -> Self {
        Self {
            task,
            value: f64::NAN,
        }
    }

    fn add(&mut self, v: f64) {
        if self.value.is_nan() || self.task.better(v, self.value) {
            self.value = v;
        }
    }
}

/// A lone agent's step on one client's own data: its own warping and
/// scaling, its own MAP (or ML) fit every `refit_every` steps, the lone
/// prior mean and acquisition (`independent-bo`, and FBO-FedGP's local steps
/// with [`LocalSteps::Lone`] or [`LocalSteps::LoneDefaults`]). Nothing of it
/// leaves the client.
struct LoneRecipe<'a, K: Kernel> {
    task: &'a Task,
    params: std::borrow::Cow<'a, ValidParams>,
    step: AcquisitionStep,
    fit: fedhe_gp::hyperfit::FitConfig,
    initial: Hyperparameters,
    /// The prior means a refit fits (the one of largest BIC kept when more
    /// than one, unless `alternate`).
    means: Vec<MeanFunction>,
    /// Whether the steps take the fits of `means` in turn
    /// ([`PriorMean::Alternate`]).
    alternate: bool,
    /// Whether the steps take a trust region
    /// ([`ValidParams::trust_region_for`]).
    trust_region: bool,
    family: K,
}

/// A lone agent's current fits: every prior mean's hyper-parameters of the
/// last refit (in the order of the recipe's `means`; the initial ones before
/// the first), and which of them BIC kept.
#[derive(Debug, Clone)]
struct LoneFit {
    fits: Vec<(Hyperparameters, MeanFunction)>,
    kept: usize,
}

impl LoneFit {
    /// The fit BIC kept: what a non-alternating recipe steps on, the start
    /// of the next refit and the scale of a trust region.
    fn kept(&self) -> &Hyperparameters {
        &self.fits[self.kept].0
    }

    /// The hyper-parameters and prior mean of round `t`'s step: an
    /// alternating recipe's fits in turn (round `t` on fit `t mod n`, so
    /// consecutive steps take different models), every other recipe's the
    /// fit BIC kept.
    fn for_step(&self, t: usize, alternate: bool) -> (&Hyperparameters, MeanFunction) {
        let i = match self.fits.len() {
            n if alternate && n > 1 => t % n,
            _ => self.kept,
        };
        let (hyper, mean) = &self.fits[i];
        (hyper, *mean)
    }
}

impl<'a, K: Kernel> LoneRecipe<'a, K> {
    fn new(federation: &Federation<'a, K>) -> Result<Self, AlgorithmError> {
        Self::resolve(
            federation.task,
            federation.params,
            federation.method,
            federation.family.clone(),
        )
    }

    /// The lone recipe of `method`'s steps under `params`: these settings
    /// for a plaintext baseline's steps and [`LocalSteps::Lone`] local
    /// steps, the lone agent's defaults for [`LocalSteps::LoneDefaults`]
    /// ones ([`ValidParams::lone_defaults`]).
    fn resolve(
        task: &'a Task,
        params: &'a ValidParams,
        method: Method,
        family: K,
    ) -> Result<Self, AlgorithmError> {
        let (params, method) = match params.local_steps {
            LocalSteps::LoneDefaults if method.uses_channel() => (
                std::borrow::Cow::Owned(params.lone_defaults()),
                Method::IndependentBo,
            ),
            _ => (std::borrow::Cow::Borrowed(params), method),
        };
        let p = &*params;
        Ok(Self {
            task,
            step: p.acquisition_step(Method::IndependentBo),
            fit: p.fit_config(task.dim()),
            initial: initial_hyperparameters(p, task.dim())?,
            means: p.prior_mean.mean_functions(method),
            alternate: p.prior_mean.resolve_lone(method) == PriorMean::Alternate,
            trust_region: p.trust_region_for(method),
            family,
            params,
        })
    }

    /// The next point of client `c` at round `t`; `hyper` is its fit so far
    /// (`None` before its first step, which fits).
    fn propose(
        &self,
        c: &mut Client,
        hyper: &mut Option<LoneFit>,
        t: usize,
    ) -> Result<Vec<f64>, AlgorithmError> {
        let (gp, incumbent) = self.model(c, hyper, t)?;
        let region = match hyper {
            Some(fit) if self.trust_region => Some(&fit.kept().log()[..self.task.dim()]),
            _ => None,
        };
        c.propose(self.task, &self.step, &gp, t, incumbent, region, None)
    }

    /// `size` points for round `t` by local penalisation on `c`'s model
    /// (`pooled-bo`, whose `c` holds every member's data).
    fn propose_batch(
        &self,
        c: &mut Client,
        hyper: &mut Option<LoneFit>,
        t: usize,
        size: usize,
    ) -> Result<Vec<Vec<f64>>, AlgorithmError> {
        let (gp, incumbent) = self.model(c, hyper, t)?;
        c.propose_batch(
            self.task,
            &self.step,
            &gp,
            t,
            incumbent,
            size,
            PENALTY_SAMPLE,
            self.params.global_batch_optimism,
        )
    }

    /// Client `c`'s GP at round `t`, refitted when due (for each prior mean
    /// of the recipe, the one of largest BIC kept), and its incumbent.
    fn model(
        &self,
        c: &mut Client,
        fit: &mut Option<LoneFit>,
        t: usize,
    ) -> Result<(fedhe_gp::ExactGp<K>, f64), AlgorithmError> {
        let (p, task) = (&*self.params, self.task);
        let (warp, scaling) = c.own_warping(task, p.warping.for_lone_agent())?;
        let scheduled = p.refit_every > 0 && (t - 1).is_multiple_of(p.refit_every);
        let refit = fit.is_none() || scheduled;
        let current = fit.get_or_insert_with(|| LoneFit {
            fits: vec![(self.initial.clone(), self.means[0])],
            kept: 0,
        });
        if refit && p.hyperparameters == HyperparameterMode::FederatedMle {
            let from = match p.fit_start {
                FitStart::Previous => current.kept(),
                FitStart::Initial => &self.initial,
            };
            let mut best: Option<(f64, usize)> = None;
            let mut fits = Vec::with_capacity(self.means.len());
            for &mean in &self.means {
                let start = from.gp_params(&self.family, mean)?;
                if let Ok((log, bic)) =
                    c.fit_hyperparameters(task, warp, &scaling, &start, &self.fit)
                {
                    if best.is_none_or(|(b, _)| bic > b) {
                        best = Some((bic, fits.len()));
                    }
                    fits.push((Hyperparameters::from_log(log)?, mean));
                }
            }
            if let Some((_, kept)) = best {
                *current = LoneFit { fits, kept };
            }
        }
        let (hyper, mean) = current.for_step(t, self.alternate);
        let gp = c.local_gp(task, warp, &scaling, hyper, &self.family, mean)?;
        Ok((gp, c.incumbent(task, warp, &scaling)))
    }
}

/// The hyper-parameters before any fit: the fixed ones, or a first fit's
/// start.
fn initial_hyperparameters(p: &ValidParams, dim: usize) -> Result<Hyperparameters, AlgorithmError> {
    match p.hyperparameters {
        HyperparameterMode::Fixed => Hyperparameters::new(
            vec![p.lengthscale.unwrap_or(1.0); dim],
            p.signal_variance.unwrap_or(1.0),
            p.noise_variance.unwrap_or(1e-2),
        ),
        // A start for the first fit: the prior's mode e^{μ − σ²} with the
        // length-scale prior, else a quarter of the unit cube's diagonal.
        HyperparameterMode::FederatedMle => {
            let l = match p.fit_config(dim).prior {
                Some(prior) => {
                    let ls = prior.lengthscale;
                    (ls.loc - ls.scale * ls.scale).exp()
                }
                None => 0.25 * (dim as f64).sqrt(),
            };
            Hyperparameters::new(vec![l; dim], 1.0, 1e-2)
        }
    }
}

/// Public anchors of a penalised global batch: the support points of
/// highest posterior mean.
const GLOBAL_ANCHORS: usize = 5;

/// The smallest distance (unit cube) between a point added to a public
/// support set and the points already in it.
const SUPPORT_MIN_DISTANCE: f64 = 1e-3;

/// Uniform points (besides the anchors) on which a penalised batch estimates
/// the Lipschitz constant and the maximum of the posterior mean.
const PENALTY_SAMPLE: usize = 256;

struct Federation<'a, K: Kernel> {
    task: &'a Task,
    method: Method,
    params: &'a ValidParams,
    seed: u64,
    family: K,
    members: &'a [MemberId],
    clients: Vec<Client>,
    diagnostics: bool,
    public: ChaCha8Rng,
    observer: &'a mut dyn FnMut(&RoundEvent),
    /// A private study's releases (`None` when noise-free).
    private: Option<PrivateFbo>,
    /// ε spent after each round of a private study.
    spent: Vec<f64>,
}

impl<'a, K: Kernel> Federation<'a, K> {
    fn new(
        task: &'a Task,
        method: Method,
        params: &'a ValidParams,
        roster: Roster<'a>,
        seed: u64,
        family: K,
        observer: &'a mut dyn FnMut(&RoundEvent),
    ) -> Self {
        Self {
            task,
            method,
            params,
            seed,
            family,
            members: roster.members,
            clients: roster.local,
            diagnostics: roster.diagnostics,
            public: ChaCha8Rng::seed_from_u64(mix(seed, 0)),
            observer,
            private: None,
            spent: Vec::new(),
        }
    }

    fn dim(&self) -> usize {
        self.task.dim()
    }

    fn initial_design(&mut self) -> Result<(), AlgorithmError> {
        let (dim, m) = (self.dim(), self.members.len());
        for c in self.clients.iter_mut() {
            let i = c.index();
            let (mut lo, mut hi) = (vec![0.0; dim], vec![1.0; dim]);
            if self.params.initial_design == InitialDesign::SubBox {
                lo[0] = i as f64 / m as f64;
                hi[0] = (i + 1) as f64 / m as f64;
            }
            c.initial_design(self.task, self.params.initial_points, &lo, &hi)?;
        }
        Ok(())
    }

    /// Every member's draw of round `t` (Alg. 2, lines 14-15): `true` for a
    /// local step. The draws come from public streams, one per member and
    /// round, so every member computes everyone's and knows without a message
    /// whether anyone steps globally (the aggregation runs then). They are
    /// coin flips independent of any data, so making them public reveals
    /// nothing about an institution.
    fn steps(&self, t: usize, schedule: &MixingSchedule) -> Result<Vec<bool>, AlgorithmError> {
        let round_seed = mix(mix(self.seed, u64::MAX), t as u64);
        (0..self.members.len())
            .map(|i| {
                Ok(match self.method {
                    Method::LocalOnly => true,
                    Method::GlobalOnly => false,
                    _ => {
                        let mut coin = ChaCha8Rng::seed_from_u64(mix(round_seed, i as u64));
                        schedule.choose_local(t, &mut coin)?
                    }
                })
            })
            .collect()
    }

    /// The public batch of a penalised global step
    /// ([`GlobalSteps::Penalised`]): as many points as the slots this
    /// process's global steppers take, from the global posterior, the
    /// support points of highest posterior mean as anchors, the largest
    /// posterior mean there as the incumbent (EI, PI), and a seed of the
    /// round: inputs every member holds alike, so each computes the same batch.
    fn global_batch(
        &self,
        global: &GlobalPosterior<K>,
        step: &AcquisitionStep,
        t: usize,
        local: &[bool],
    ) -> Result<Vec<Vec<f64>>, AlgorithmError> {
        let size = self
            .clients
            .iter()
            .filter_map(|c| global_slot(local, c.index(), self.params.global_batch))
            .max()
            .map_or(0, |s| s + 1);
        let seed = mix(mix(self.seed, u64::MAX - 1), t as u64);
        self.penalised_batch(global, step, t, size, seed)
    }

    /// `size` points of a penalised batch on `global`: the support points of
    /// highest posterior mean as anchors, the largest posterior mean there as
    /// the incumbent (EI, PI), and the public stream `seed`.
    fn penalised_batch(
        &self,
        global: &GlobalPosterior<K>,
        step: &AcquisitionStep,
        t: usize,
        size: usize,
        seed: u64,
    ) -> Result<Vec<Vec<f64>>, AlgorithmError> {
        if size == 0 {
            return Ok(Vec::new());
        }
        let support = global.model.support();
        let mut ranked = (0..support.nrows())
            .map(|r| {
                let z: Vec<f64> = support.row(r).iter().copied().collect();
                Ok((global.predict_point(&z)?.mean, z))
            })
            .collect::<Result<Vec<_>, AlgorithmError>>()?;
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
        let incumbent = ranked.first().map_or(0.0, |(m, _)| *m);
        let anchors: Vec<Vec<f64>> = ranked
            .into_iter()
            .take(GLOBAL_ANCHORS)
            .map(|(_, z)| z)
            .collect();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let projected = Projected::maybe(global, self.task.space());
        step.propose_batch(
            projected.get(),
            t,
            incumbent,
            &anchors,
            size,
            PENALTY_SAMPLE,
            self.params.global_batch_optimism,
            &mut rng,
        )
    }

    fn best(&self) -> f64 {
        self.clients
            .iter()
            .filter_map(Client::best)
            .fold(None, |b: Option<f64>, v| match b {
                Some(b) if !self.task.better(v, b) => Some(b),
                _ => Some(v),
            })
            .unwrap_or(f64::NAN)
    }

    /// Records the end of round `t`: the trace and the observer.
    fn end_round(
        &mut self,
        t: usize,
        local: &[bool],
        aggregated: bool,
        round_best: f64,
        trace: &mut Vec<f64>,
    ) {
        let best = self.best();
        trace.push(best);
        let local_steps = local.iter().filter(|l| **l).count();
        (self.observer)(&RoundEvent {
            round: t,
            local_steps,
            global_steps: local.len() - local_steps,
            aggregated,
            round_best,
            best_so_far: best,
            epsilon: self.spent.last().copied(),
        });
    }

    fn result(
        &self,
        trace: Vec<f64>,
        start: Instant,
        server: Option<&Server<'_>>,
        global_steps: usize,
    ) -> RunResult {
        let bytes = server.map_or(0, |s| {
            self.clients
                .iter()
                .map(|c| s.bytes_sent(c.id()))
                .sum::<u64>()
                / self.clients.len() as u64
        });
        RunResult {
            task: self.task.name().to_string(),
            method: self.method.name().to_string(),
            seed: self.seed,
            members: self.members.len(),
            rounds: trace.len(),
            best: self.best(),
            best_per_member: self
                .clients
                .iter()
                .map(|c| c.best().unwrap_or(f64::NAN))
                .collect(),
            trace,
            seconds: start.elapsed().as_secs_f64(),
            bytes_sent_per_member: bytes,
            aggregations: server.map_or(0, Server::aggregations),
            global_steps,
            cumulative_regret: None,
            epsilon: (!self.spent.is_empty()).then(|| self.spent.clone()),
            surrogate_rmse: None,
            surrogate_rmse_constant: None,
            releases: None,
            maximised: Some(self.task.is_maximised()),
        }
    }

    fn run(mut self, channel: &mut dyn SecureSum) -> Result<RunResult, AlgorithmError> {
        let start = Instant::now();
        if self.params.global_trend != GlobalTrend::None && self.method.is_plaintext() {
            return Err(crate::error::config(
                "global_trend",
                format!(
                    "a trend of the federation's global posterior; {} has none",
                    self.method.name()
                ),
            ));
        }
        self.initial_design()?;
        match self.method {
            Method::RandomSearch => self.random_search(start),
            Method::IndependentBo => self.independent_bo(start),
            Method::PooledBo => self.pooled_bo(start),
            _ => self.federated(channel, start),
        }
    }

    fn random_search(&mut self, start: Instant) -> Result<RunResult, AlgorithmError> {
        let dim = self.dim();
        let mut trace = Vec::with_capacity(self.params.rounds);
        for t in 1..=self.params.rounds {
            let mut round_best = RoundBest::new(self.task);
            for c in self.clients.iter_mut() {
                let x: Vec<f64> = (0..dim).map(|_| c.rng().gen::<f64>()).collect();
                round_best.add(c.evaluate(self.task, x)?.noise_free);
            }
            let local = vec![true; self.members.len()];
            self.end_round(t, &local, false, round_best.value, &mut trace);
        }
        Ok(self.result(trace, start, None, 0))
    }

    fn initial_hyperparameters(&self) -> Result<Hyperparameters, AlgorithmError> {
        initial_hyperparameters(self.params, self.dim())
    }

    /// Each client on its own data: its own warping, scaling and MAP (or ML)
    /// fit, local steps only.
    fn independent_bo(&mut self, start: Instant) -> Result<RunResult, AlgorithmError> {
        let p = self.params;
        let lone = LoneRecipe::new(self)?;
        let mut hypers = vec![None; self.clients.len()];
        let mut trace = Vec::with_capacity(p.rounds);
        for t in 1..=p.rounds {
            let mut round_best = RoundBest::new(self.task);
            for (c, hyper) in self.clients.iter_mut().zip(hypers.iter_mut()) {
                let x = lone.propose(c, hyper, t)?;
                round_best.add(c.evaluate(self.task, x)?.noise_free);
            }
            let local = vec![true; self.members.len()];
            self.end_round(t, &local, false, round_best.value, &mut trace);
        }
        Ok(self.result(trace, start, None, 0))
    }

    /// Every client's data in one place, no privacy (the upper reference):
    /// each round one exact GP on the pooled data, fitted as a lone agent
    /// fits its own ([`LoneRecipe`]), proposes a batch of one point per
    /// member by local penalisation, and member `i` evaluates point `i`.
    fn pooled_bo(&mut self, start: Instant) -> Result<RunResult, AlgorithmError> {
        let (p, task) = (self.params, self.task);
        let lone = LoneRecipe::new(self)?;
        let mut pooled = Client::new(self.members[0].clone(), 0, mix(self.seed, u64::MAX - 2));
        for c in &self.clients {
            pooled.absorb(task, c);
        }
        let mut hyper = None;
        let mut trace = Vec::with_capacity(p.rounds);
        for t in 1..=p.rounds {
            let batch = lone.propose_batch(&mut pooled, &mut hyper, t, self.clients.len())?;
            let mut round_best = RoundBest::new(task);
            for (c, x) in self.clients.iter_mut().zip(batch) {
                let e = c.evaluate(task, x.clone())?;
                pooled.record(task, x, &e);
                round_best.add(e.noise_free);
            }
            let local = vec![true; self.members.len()];
            self.end_round(t, &local, false, round_best.value, &mut trace);
        }
        Ok(self.result(trace, start, None, 0))
    }

    /// A refit round, one secure sum: every client's warp contribution among
    /// `warps` (from [`Self::warp_candidates`] on the current data; the
    /// output statistics of every candidate warping, see
    /// [`super::model::warp_contribution`]) and, with federated
    /// hyper-parameters, its log-likelihoods of the public candidates around
    /// the current values (under the current warping and scaling). The
    /// warping and scaling follow from the summed statistics; the candidate
    /// with the largest summed likelihood plus the public log prior wins: the
    /// pooled MAP over the candidates, a stochastic search that never reveals
    /// a client's own likelihood or fit.
    ///
    /// With [`HyperLikelihood::Sparse`] the candidates are scored instead by
    /// the evidence of the global dPITC model on `support`
    /// ([`Client::sparse_evidence`], [`sparse_evidences`]).
    fn refit(
        &mut self,
        server: &mut Server<'_>,
        warps: &[OutputWarping],
        warp: OutputWarping,
        scaling: &OutputScaling,
        hyper: &Hyperparameters,
        support: &DMatrix<f64>,
    ) -> Result<(OutputWarping, OutputScaling, Hyperparameters), AlgorithmError> {
        let p = self.params;
        let (task, n_max) = (self.task, p.max_points());
        let federated = p.hyperparameters == HyperparameterMode::FederatedMle;
        let sparse = p.hyper_likelihood == HyperLikelihood::Sparse;
        let fit = p.fit_config(self.dim());
        let candidates = if federated {
            hyper.candidates(&fit.bounds, p.hyper_candidates, &mut self.public)
        } else {
            Vec::new()
        };
        let family = &self.family;
        let contributions = self
            .clients
            .iter()
            .map(|c| {
                let mut v = c.warp_contribution(task, warps, n_max);
                if sparse {
                    v.extend(c.sparse_evidence(
                        task,
                        warp,
                        scaling,
                        &candidates,
                        family,
                        support,
                        n_max,
                    ));
                } else {
                    v.extend(c.log_likelihoods(task, warp, scaling, &candidates, family, n_max));
                }
                (c.id().clone(), v)
            })
            .collect();
        let sum = server.aggregate("statistics and log-likelihoods", contributions)?;
        let split = 1 + 3 * warps.len();
        let (new_warp, new_scaling) = choose_warping_and_scaling(warps, &sum[..split])?;
        let best = if sparse {
            let evidence = sparse_evidences(&candidates, family, support, &sum[split..], n_max)?;
            // No candidate scored: keep the current hyper-parameters.
            if evidence.iter().any(|v| v.is_finite()) {
                pooled_map(&candidates, &evidence, 1.0, fit.prior.as_ref())
            } else {
                None
            }
        } else {
            pooled_map(&candidates, &sum[split..], n_max, fit.prior.as_ref())
        };
        let hyper = match best {
            Some(best) => candidates[best].clone(),
            None => hyper.clone(),
        };
        Ok((new_warp, new_scaling, hyper))
    }

    /// The candidate warpings of the setting; for one that needs the
    /// federation's log-magnitudes ([`super::Warping::Clipped`], and
    /// [`super::Warping::Auto`] in a federation) one secure sum of every
    /// client's `(n_i, Σℓ, Σℓ²)` first.
    fn warp_candidates(
        &self,
        server: &mut Server<'_>,
    ) -> Result<Vec<OutputWarping>, AlgorithmError> {
        let p = self.params;
        if !p.warping.needs_magnitudes() {
            return p.warping.candidates(None);
        }
        let contributions = self
            .clients
            .iter()
            .map(|c| {
                (
                    c.id().clone(),
                    c.magnitude_contribution(self.task, p.max_points()),
                )
            })
            .collect();
        let sum = server.aggregate("log-magnitudes", contributions)?;
        p.warping.candidates(Some(&sum))
    }

    /// Simulation-only diagnostic: the RMSE of the last global posterior mean
    /// against the true standardised utility at 256 public uniform points, and
    /// at the same points the RMSE of the best constant predictor (the
    /// targets' standard deviation), for a shared objective (`None` for
    /// per-client ones). It evaluates the objective outside the protocol, so
    /// the service never computes it.
    fn surrogate_rmse(
        &mut self,
        global: &GlobalPosterior<K>,
        warp: OutputWarping,
        scaling: &OutputScaling,
    ) -> Result<Option<(f64, f64)>, AlgorithmError> {
        if self.task.clients().is_some() {
            return Ok(None);
        }
        let dim = self.dim();
        const POINTS: usize = 256;
        let mut targets = Vec::with_capacity(POINTS);
        let mut sq = 0.0;
        for _ in 0..POINTS {
            let x: Vec<f64> = (0..dim).map(|_| self.public.gen::<f64>()).collect();
            let truth = self.task.noise_free(0, &x, &mut self.public)?;
            let target = scaling.standardise(warp.apply(self.task.utility(truth)));
            sq += (global.predict_point(&x)?.mean - target).powi(2);
            targets.push(target);
        }
        let mean = targets.iter().sum::<f64>() / POINTS as f64;
        let spread = targets.iter().map(|t| (t - mean).powi(2)).sum::<f64>();
        Ok(Some((
            (sq / POINTS as f64).sqrt(),
            (spread / POINTS as f64).sqrt(),
        )))
    }

    /// The federation's quadratic trend ([`GlobalTrend::Quadratic`]) from
    /// one secure sum of every member's [`Client::trend_contribution`], in
    /// standardised units, clamped to the standardised clip of a clipped
    /// warping; `None` while the sums hold fewer than twice as many points
    /// as the trend has weights.
    fn quadratic_trend(
        &self,
        server: &mut Server<'_>,
        warp: OutputWarping,
        scaling: &OutputScaling,
    ) -> Result<Option<QuadraticTrend>, AlgorithmError> {
        let Some(trend) = self.fitted_trend(server, warp, scaling)?.0 else {
            return Ok(None);
        };
        Ok(Some(clamped_to_warp(trend, warp, scaling)?))
    }

    /// One secure sum of every member's [`Client::trend_contribution`]: its
    /// least-squares trend in standardised units, unclamped (`None` while
    /// the sums hold fewer than twice as many points as the trend has
    /// weights), and the number of points the sums hold.
    fn fitted_trend(
        &self,
        server: &mut Server<'_>,
        warp: OutputWarping,
        scaling: &OutputScaling,
    ) -> Result<(Option<QuadraticTrend>, f64), AlgorithmError> {
        let (task, n_max, dim) = (self.task, self.params.max_points(), self.dim());
        let contributions = self
            .clients
            .iter()
            .map(|c| {
                Ok((
                    c.id().clone(),
                    c.trend_contribution(task, warp, scaling, n_max)?,
                ))
            })
            .collect::<Result<Vec<_>, AlgorithmError>>()?;
        let sums = TrendSums::unpack(dim, &server.aggregate("trend sums", contributions)?)?;
        let min_points = 2.0 * quadratic_len(dim) as f64;
        Ok((
            sums.fit(n_max, min_points, TREND_RIDGE),
            sums.points(n_max).round(),
        ))
    }

    /// The federation's trend under [`GlobalTrend::QuadraticSpaced`] in a
    /// round whose members each hold `held` points, and whether its sums
    /// were released in this round. A release needs, in every member's
    /// view, `TREND_RELEASE_MARGIN ·` [`determinable_points`] unclipped
    /// points of others that the last release did not hold: the public
    /// schedule bounds them first (the others' new points, at most
    /// `(members − 1)·Δheld`), then a one-value secure sum of the unclipped
    /// counts (its increase less this member's own `Δheld`, which a member
    /// can subtract). Between releases the kept trend is re-expressed in
    /// this round's warping and standardisation.
    fn spaced_trend(
        &self,
        server: &mut Server<'_>,
        state: &mut SpacedTrend,
        warp: OutputWarping,
        scaling: &OutputScaling,
        held: usize,
    ) -> Result<(Option<QuadraticTrend>, bool), AlgorithmError> {
        let (task, n_max, dim) = (self.task, self.params.max_points(), self.dim());
        let factor = linear_warp_factor(warp).ok_or_else(|| {
            crate::error::config(
                "global_trend",
                "quadratic-spaced needs a warping linear inside its clip",
            )
        })?;
        let needed = (TREND_RELEASE_MARGIN * determinable_points(dim)) as f64;
        let own_new = held.saturating_sub(state.held_at_release);
        let mut refitted = false;
        if ((self.members.len() - 1) * own_new) as f64 >= needed {
            let counts = self
                .clients
                .iter()
                .map(|c| {
                    (
                        c.id().clone(),
                        vec![c.unclipped_count(task, warp) as f64 / n_max],
                    )
                })
                .collect();
            let points = (server.aggregate("trend count", counts)?[0] * n_max).round();
            if points - state.points_at_release - own_new as f64 >= needed {
                let (fitted, summed) = self.fitted_trend(server, warp, scaling)?;
                // The release rule counted `points`; sums over other points
                // (a false count, or a round with other contributors) end the
                // run before anything more is decrypted.
                if (summed - points).abs() > 0.5 {
                    return Err(crate::error::config(
                        "global_trend",
                        format!(
                            "the trend's sums hold {summed} points but the count sum said \
                             {points}: a member's count or sums are false, or the two rounds \
                             had different contributors"
                        ),
                    ));
                }
                // Released whether or not it fits: the sums are public now.
                (state.points_at_release, state.held_at_release) = (points, held);
                if let Some(trend) = fitted {
                    state.kept = Some(in_utility_units(&trend, factor, scaling)?);
                    refitted = true;
                }
            }
        }
        let current = match &state.kept {
            Some(kept) => Some(clamped_to_warp(
                in_standardised_units(kept, factor, scaling)?,
                warp,
                scaling,
            )?),
            None => None,
        };
        Ok((current, refitted))
    }

    /// The support selection this method uses (`random-support` forces
    /// [`SupportSelection::Random`]).
    fn support_selection(&self) -> SupportSelection {
        if self.method == Method::RandomSupport {
            SupportSelection::Random
        } else {
            self.params.support_selection_resolved()
        }
    }

    /// `k` well-spread public points: k-means++ over public uniform points
    /// (the starting centres of secure k-means; [`SupportSelection::Public`]'s
    /// starting set).
    fn public_centres(&mut self, k: usize) -> Result<DMatrix<f64>, AlgorithmError> {
        let dim = self.dim();
        let pool = DMatrix::from_fn(1024.max(4 * k), dim, |_, _| self.public.gen::<f64>());
        Ok(kmeans_plus_plus(&pool, k, &mut self.public)?)
    }

    /// [`SupportSelection::Public`]'s growth at round `t`: `support` and `add`
    /// more points, those of a penalised batch on the last global posterior
    /// (inputs every member holds alike, as for [`GlobalSteps::Penalised`],
    /// with a stream of its own), or public uniform points before the first
    /// global step. A point within [`SUPPORT_MIN_DISTANCE`] of one already in
    /// the set (a batch may start at a support point and stay there) is
    /// replaced by a public uniform point, which keeps `K_SS` well-conditioned.
    fn grow_public_support(
        &mut self,
        support: &DMatrix<f64>,
        global: Option<&GlobalPosterior<K>>,
        step: &AcquisitionStep,
        t: usize,
        add: usize,
    ) -> Result<DMatrix<f64>, AlgorithmError> {
        let dim = self.dim();
        let proposed = match global {
            Some(g) if add > 0 => {
                let seed = mix(mix(self.seed, u64::MAX - 2), t as u64);
                self.penalised_batch(g, step, t, add, seed)?
            }
            _ => Vec::new(),
        };
        let mut rows: Vec<Vec<f64>> = support
            .row_iter()
            .map(|r| r.iter().copied().collect())
            .collect();
        let far = |z: &[f64], rows: &[Vec<f64>]| {
            rows.iter().all(|r| {
                r.iter().zip(z).map(|(a, b)| (a - b).powi(2)).sum::<f64>()
                    >= SUPPORT_MIN_DISTANCE.powi(2)
            })
        };
        for i in 0..add {
            let z = match proposed.get(i) {
                Some(z) if z.len() == dim && far(z, &rows) => z.clone(),
                _ => (0..dim).map(|_| self.public.gen::<f64>()).collect(),
            };
            rows.push(z);
        }
        Ok(DMatrix::from_fn(rows.len(), dim, |i, j| rows[i][j]))
    }

    fn select_support(
        &mut self,
        server: &mut Server<'_>,
        k: usize,
    ) -> Result<DMatrix<f64>, AlgorithmError> {
        let p = self.params;
        let dim = self.dim();
        match self.support_selection() {
            SupportSelection::Random => Ok(uniform_random_support(
                &Bounds::unit(dim)?,
                k,
                &mut self.public,
            )),
            SupportSelection::Public => self.public_centres(k),
            // `Auto` is resolved by `support_selection`; it never gets here.
            SupportSelection::SecureKmeans | SupportSelection::Auto => {
                let mut centres = self.public_centres(k)?;
                let n_max = p.max_points();
                for _ in 0..p.kmeans_max_iters {
                    let contributions = self
                        .clients
                        .iter()
                        .map(|c| (c.id().clone(), c.kmeans_contribution(&centres, n_max)))
                        .collect();
                    let sum = server.aggregate("k-means sums and counts", contributions)?;
                    let (next, shift) = super::kmeans_update(&centres, &sum)?;
                    centres = next;
                    if shift < p.kmeans_tol {
                        break;
                    }
                }
                Ok(centres)
            }
            SupportSelection::PaperClustering => {
                let mut local = Vec::with_capacity(self.clients.len());
                for c in self.clients.iter_mut() {
                    let centres = c.local_centres(k, p.kmeans_tol, p.kmeans_max_iters)?;
                    server.record_plaintext(c.id(), (centres.len() * 8) as u64);
                    local.push(centres);
                }
                let pooled: usize = local.iter().map(DMatrix::nrows).sum();
                if pooled < k {
                    return Err(crate::error::config(
                        "support_size",
                        format!("|S| = {k} exceeds the {pooled} pooled local centres"),
                    ));
                }
                let seed_client = self.public.gen_range(0..local.len());
                Ok(
                    global_clustering(&local, seed_client, k, p.kmeans_tol, p.kmeans_max_iters)?
                        .centres,
                )
            }
        }
    }

    fn federated(
        &mut self,
        channel: &mut dyn SecureSum,
        start: Instant,
    ) -> Result<RunResult, AlgorithmError> {
        let p = self.params;
        let (task, step, n_max) = (self.task, p.acquisition_step(self.method), p.max_points());
        // Refused before the first secure sum, so that nothing is aggregated
        // for a run that cannot go on.
        let prior_mean = p.prior_mean.resolve(self.method);
        if !prior_mean.is_federated() {
            return Err(crate::error::config(
                "prior_mean",
                "\"quadratic\", \"bic\" and \"alternate\" are fitted by a lone agent or a \
                 plaintext method only; a federation's global posterior takes \"constant\" \
                 (fitted from sums) or \"zero\"",
            ));
        }
        if p.trust_region == Some(true) && p.local_steps == LocalSteps::Federated {
            return Err(crate::error::config(
                "trust_region",
                "a trust region bounds a lone agent's steps: with local_steps = \"federated\" \
                 no step takes it (set local_steps = \"lone\")",
            ));
        }
        let lone = LoneRecipe::new(self)?;
        let mut lone_hypers = vec![None; self.clients.len()];
        let mut server = Server::new(channel, p.channel_bound);
        let schedule = MixingSchedule::power(p.schedule_exponent)?;
        if !p.privacy.is_noise_free() {
            // The rounds with a global step, from the schedule's public coins.
            let mut summary_rounds = Vec::new();
            for t in 1..=p.rounds {
                if !self.steps(t, &schedule)?.iter().all(|l| *l) {
                    summary_rounds.push(t);
                }
            }
            self.private = PrivateFbo::start(
                p,
                self.method,
                &mut self.clients,
                self.members.len(),
                &summary_rounds,
            )?;
        }
        // Output warping and scaling, then hyper-parameters fitted on them
        // (Alg. 2, line 9).
        let (warps, mut warp, mut scaling) = match self.private.as_mut() {
            Some(private) => {
                let scaling = private.scaling(&mut server, &self.clients, task, 1)?;
                (vec![private.warping()], private.warping(), scaling)
            }
            None => {
                let warps = self.warp_candidates(&mut server)?;
                let stats = self
                    .clients
                    .iter()
                    .map(|c| (c.id().clone(), c.warp_contribution(task, &warps, n_max)))
                    .collect();
                let (warp, scaling) =
                    choose_warping_and_scaling(&warps, &server.aggregate("statistics", stats)?)?;
                (warps, warp, scaling)
            }
        };
        let mut hyper = self.initial_hyperparameters()?;
        let sparse = p.hyper_likelihood == HyperLikelihood::Sparse;
        // The global posterior's constant mean: fitted from sums, or zero.
        let gls_mean = prior_mean == PriorMean::Constant;
        // The shared support set (Alg. 2, lines 3-7): before the first fit
        // when the fit scores candidates on it, else after (the paper's order).
        let mut k = p.support_size_at(0);
        let mut support = if sparse {
            Some(self.select_support(&mut server, k)?)
        } else {
            None
        };
        if p.hyperparameters == HyperparameterMode::FederatedMle {
            let on = support
                .clone()
                .unwrap_or_else(|| DMatrix::zeros(0, self.dim()));
            // The data have not changed since `warps` was chosen.
            hyper = self
                .refit(&mut server, &warps, warp, &scaling, &hyper, &on)?
                .2;
        }
        let mut support = match support.take() {
            Some(s) => s,
            None => self.select_support(&mut server, k)?,
        };
        let mut trace = Vec::with_capacity(p.rounds);
        let mut global_steps = 0;
        let mut last_global: Option<(GlobalPosterior<K>, OutputWarping, OutputScaling)> = None;
        let mut spaced = SpacedTrend::default();
        for t in 1..=p.rounds {
            if t > 1 && p.refit_every > 0 && (t - 1) % p.refit_every == 0 {
                if let Some(private) = self.private.as_mut() {
                    // Fixed hyper-parameters: only the standardisation moves.
                    scaling = private.scaling(&mut server, &self.clients, task, t)?;
                } else {
                    let warps = self.warp_candidates(&mut server)?;
                    (warp, scaling, hyper) =
                        self.refit(&mut server, &warps, warp, &scaling, &hyper, &support)?;
                }
            }
            if p.support_size_at(t - 1) != k {
                let next = p.support_size_at(t - 1);
                support = match (self.support_selection(), next.checked_sub(k)) {
                    (SupportSelection::Public, Some(add)) => {
                        let global = last_global.as_ref().map(|(g, _, _)| g);
                        self.grow_public_support(&support, global, &step, t, add)?
                    }
                    _ => self.select_support(&mut server, next)?,
                };
                k = next;
            }
            // Alg. 2, lines 14-15: each client draws its step.
            let local = self.steps(t, &schedule)?;
            // Lines 19-22: every client's summary, only when someone steps globally.
            let mut trend_is_new = false;
            let global = if local.iter().all(|l| *l) {
                None
            } else {
                let model = Dpitc::new(
                    hyper.kernel(&self.family)?,
                    hyper.noise(),
                    0.0,
                    support.clone(),
                )?;
                let summary_scaling = SummaryScaling::new(k, &hyper, n_max);
                let trend = match p.global_trend {
                    GlobalTrend::None => None,
                    GlobalTrend::Quadratic => {
                        let trend = self.quadratic_trend(&mut server, warp, &scaling)?;
                        trend_is_new = trend.is_some();
                        trend
                    }
                    GlobalTrend::QuadraticSpaced => {
                        let held = p.initial_points + (t - 1);
                        let trend;
                        (trend, trend_is_new) =
                            self.spaced_trend(&mut server, &mut spaced, warp, &scaling, held)?;
                        trend
                    }
                };
                let (model, summed) = if let Some(private) = self.private.as_mut() {
                    // `check_recipe` refused a trend and the GLS mean.
                    let summed = private.summary(
                        &mut server,
                        &self.clients,
                        task,
                        &scaling,
                        &model,
                        &summary_scaling,
                        mix(mix(self.seed, u64::MAX - 5), t as u64),
                    )?;
                    global_steps += 1;
                    (model, summed)
                } else {
                    let contributions = self
                        .clients
                        .iter()
                        .map(|c| {
                            let v = c.summary_contribution(
                                task,
                                warp,
                                &scaling,
                                &model,
                                &summary_scaling,
                                gls_mean,
                                trend.as_ref(),
                            )?;
                            Ok((c.id().clone(), v))
                        })
                        .collect::<Result<Vec<_>, AlgorithmError>>()?;
                    let sum = server.aggregate("local summaries", contributions)?;
                    global_steps += 1;
                    if gls_mean {
                        // The constant mean from the same sum (Dpitc::gls_mean).
                        let at = packed_len(k).min(sum.len());
                        let summed = summary_scaling.from_channel(&sum[..at])?;
                        let terms = summary_scaling.mean_terms_from_channel(&sum[at..])?;
                        let mu = model.gls_mean(&summed, &terms)?;
                        model.with_prior_mean(mu, &summed, &terms)?
                    } else {
                        let summed = summary_scaling.from_channel(&sum)?;
                        (model, summed)
                    }
                };
                let summary = model.global_summary(&summed)?;
                Some(GlobalPosterior {
                    model,
                    summary,
                    trend,
                })
            };
            let mut round_best = RoundBest::new(task);
            if let Some(g) = &global {
                last_global = Some((g.clone(), warp, scaling));
            }
            let batch = match (&global, p.global_steps) {
                (Some(g), GlobalSteps::Penalised) => self.global_batch(g, &step, t, &local)?,
                _ => Vec::new(),
            };
            // Where the trend peaks: the same for every member this round.
            let trend_best = global
                .as_ref()
                .and_then(|g| g.trend.as_ref())
                .map(|m| m.maximiser_in_unit_cube());
            for (position, c) in self.clients.iter_mut().enumerate() {
                let is_local = local[c.index()];
                if let (false, Some(x)) = (
                    is_local,
                    global_slot(&local, c.index(), p.global_batch).and_then(|s| batch.get(s)),
                ) {
                    round_best.add(c.evaluate(task, x.clone())?.noise_free);
                    continue;
                }
                if is_local && p.local_steps != LocalSteps::Federated {
                    let x = lone.propose(c, &mut lone_hypers[position], t)?;
                    round_best.add(c.evaluate(task, x)?.noise_free);
                    continue;
                }
                let local_gp;
                let (surrogate, incumbent): (&dyn Surrogate, f64) = match (&global, is_local) {
                    (Some(g), false) => (g, c.incumbent(task, warp, &scaling)),
                    _ => {
                        let own = match p.local_scaling {
                            LocalScaling::Own => c.own_scaling(task, warp)?,
                            LocalScaling::Federation => scaling,
                        };
                        local_gp =
                            c.local_gp(task, warp, &own, &hyper, &self.family, MeanFunction::Zero)?;
                        (&local_gp, c.incumbent(task, warp, &own))
                    }
                };
                // The first member stepping globally (a public rank) takes a
                // new trend's maximiser, unless it has evaluated there already:
                // on the standardised scale of a wide bowl, the trend's best
                // is barely above the incumbent and an acquisition prefers
                // to explore, so the trend's optimum would go untried. (A kept
                // trend's maximiser was taken in its release round.)
                let also_from = trend_best.as_ref().filter(|_| !is_local);
                if let Some(x) = also_from.filter(|x| {
                    trend_is_new
                        && global_slot(&local, c.index(), usize::MAX) == Some(0)
                        && !c.has_evaluated_near(x)
                }) {
                    round_best.add(c.evaluate(task, x.clone())?.noise_free);
                    continue;
                }
                let x = c.propose(
                    task,
                    &step,
                    surrogate,
                    t,
                    incumbent,
                    None,
                    also_from.cloned(),
                )?;
                round_best.add(c.evaluate(task, x)?.noise_free);
            }
            if let Some(private) = &self.private {
                self.spent.push(private.epsilon()?);
            }
            self.end_round(t, &local, global.is_some(), round_best.value, &mut trace);
        }
        let mut result = self.result(trace, start, Some(&server), global_steps);
        if let Some((g, w, scaling)) = &last_global {
            if self.diagnostics {
                if let Some((rmse, constant)) = self.surrogate_rmse(g, *w, scaling)? {
                    result.surrogate_rmse = Some(rmse);
                    result.surrogate_rmse_constant = Some(constant);
                }
            }
        }
        Ok(result)
    }
}

/// The slot of the penalised global batch that member `index` takes in a
/// round with steps `local`: its rank among the members stepping globally,
/// modulo the batch size (the draws are public, so every member knows every
/// rank). `None` for a member stepping locally.
fn global_slot(local: &[bool], index: usize, batch: usize) -> Option<usize> {
    if local.get(index).copied().unwrap_or(true) {
        return None;
    }
    Some(local[..index].iter().filter(|l| !**l).count() % batch.max(1))
}

/// The evidence of the global dPITC model on `support` under each candidate,
/// from the channel's sum of every client's [`Client::sparse_evidence`]
/// (`summed`, one block of `|S|(|S|+3)/2 + 3` values per candidate):
/// [`Dpitc::log_marginal_likelihood`] of the unscaled sums. A candidate whose
/// model cannot be built, or whose sums cannot be factorised, gets `−∞`.
pub fn sparse_evidences<K: Kernel>(
    candidates: &[Hyperparameters],
    family: &K,
    support: &DMatrix<f64>,
    summed: &[f64],
    n_max: f64,
) -> Result<Vec<f64>, AlgorithmError> {
    let s = support.nrows();
    let per = fedhe_gp::sparse::packed_len(s) + 3;
    if summed.len() != per * candidates.len() {
        return Err(crate::error::config(
            "hyper_likelihood",
            format!(
                "expected {} summed evidence values for {} candidates, got {}",
                per * candidates.len(),
                candidates.len(),
                summed.len()
            ),
        ));
    }
    Ok(candidates
        .iter()
        .zip(summed.chunks(per))
        .map(|(h, block)| {
            let evidence = || -> Option<f64> {
                let model =
                    Dpitc::new(h.kernel(family).ok()?, h.noise(), 0.0, support.clone()).ok()?;
                let summary = SummaryScaling::new(s, h, n_max)
                    .from_channel(&block[..per - 3])
                    .ok()?;
                let quadratic = block[per - 3] * n_max / h.noise();
                let log_det = block[per - 2] * n_max;
                let points = (block[per - 1] * n_max).round().max(0.0) as usize;
                model
                    .log_marginal_likelihood(&summary, quadratic, log_det, points)
                    .ok()
                    .filter(|v| v.is_finite())
            };
            evidence().unwrap_or(f64::NEG_INFINITY)
        })
        .collect())
}

/// The index of the candidate maximising the pooled log marginal likelihood
/// plus the log prior: `argmax_k n_max · Σ_i s_ik + log p(θ_k)`, where
/// `s_ik = log p(y_i | θ_k) / n_max` is client `i`'s clamped contribution
/// ([`Client::log_likelihoods`]) and `summed[k] = Σ_i s_ik` comes from the
/// channel. Independent clients' data sets give `log p(y | θ) = Σ_i log p(y_i | θ)`
/// (the product-of-experts likelihood the local fits share). `None` without
/// candidates.
pub fn pooled_map(
    candidates: &[Hyperparameters],
    summed: &[f64],
    n_max: f64,
    prior: Option<&fedhe_gp::hyperfit::HyperPrior>,
) -> Option<usize> {
    candidates
        .iter()
        .zip(summed)
        .map(|(c, s)| n_max * s + prior.map_or(0.0, |p| p.log_prior(c.log()).0))
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::{
        global_slot, in_standardised_units, in_utility_units, linear_warp_factor, quadratic_len,
        LoneFit, LoneRecipe, OutputScaling, OutputWarping, QuadraticTrend,
    };
    use crate::fbo_fedgp::{FboFedGpParams, Hyperparameters, LocalSteps, Method};
    use fedhe_gp::exact::MeanFunction;
    use fedhe_gp::{KernelParams, Matern52};

    /// A private federation's `lone-defaults` local step is the step of
    /// `independent-bo` at its defaults (with the config's acquisition
    /// optimiser): its own fit from the same start, LogEI, alternating prior
    /// means and a trust region, not the private global model's fixed
    /// hyper-parameters, signed-log warping and zero mean; `lone` keeps the
    /// config's, and a plaintext baseline ignores the setting.
    #[test]
    fn lone_defaults_local_steps_are_an_independent_agents_at_its_defaults() {
        let task = fedhe_tasks::by_name("cec2005-f1", 2, 0).unwrap();
        let family = Matern52::new(KernelParams::isotropic(2, 1.0, 1.0).unwrap());
        let private = |local_steps| {
            FboFedGpParams {
                local_steps,
                lengthscale: Some(0.25),
                signal_variance: Some(4.0),
                acq_candidates: 123,
                ..FboFedGpParams::paper_defaults()
            }
            .private(4.0)
            .validate()
            .unwrap()
        };
        let lone = FboFedGpParams {
            acq_candidates: 123,
            ..FboFedGpParams::paper_defaults()
        }
        .validate()
        .unwrap();
        let recipe = |p, method| LoneRecipe::resolve(&task, p, method, family.clone()).unwrap();
        let summary = |r: &LoneRecipe<'_, Matern52>| {
            (
                r.step.clone(),
                r.fit.clone(),
                r.initial.log().to_vec(),
                r.means.clone(),
                r.alternate,
                r.trust_region,
                r.params.hyperparameters,
                r.params.warping.for_lone_agent(),
                r.params.refit_every,
            )
        };
        let defaults = private(LocalSteps::LoneDefaults);
        let independent = summary(&recipe(&lone, Method::IndependentBo));
        assert_eq!(summary(&recipe(&defaults, Method::FboFedGp)), independent);
        assert!(
            independent.4 && independent.5,
            "alternating means, trust region"
        );
        let own = private(LocalSteps::Lone);
        assert_ne!(summary(&recipe(&own, Method::FboFedGp)), independent);
        assert_eq!(
            recipe(&own, Method::FboFedGp).initial.log()[0],
            0.25f64.ln()
        );
        assert_eq!(
            summary(&recipe(&defaults, Method::PooledBo)),
            summary(&recipe(&own, Method::PooledBo))
        );
    }

    /// `prior_mean = "alternate"`: consecutive steps take the constant's and
    /// the quadratic's fits in turn, whichever BIC kept; every other recipe
    /// steps on the kept fit, and an alternating one whose refit produced a
    /// single fit steps on that one.
    #[test]
    fn an_alternating_lone_fit_takes_its_models_in_turn() {
        let hyper = |l: f64| Hyperparameters::from_log(vec![l, l, 0.0, -4.0]).unwrap();
        let kept = LoneFit {
            fits: vec![
                (hyper(-2.0), MeanFunction::Constant),
                (hyper(-1.0), MeanFunction::Quadratic),
            ],
            kept: 1,
        };
        let step = |fit: &LoneFit, t: usize, alternate: bool| {
            let (h, m) = fit.for_step(t, alternate);
            (h.log()[0], m)
        };
        for t in 1..=6 {
            let want = if t % 2 == 0 {
                (-2.0, MeanFunction::Constant)
            } else {
                (-1.0, MeanFunction::Quadratic)
            };
            assert_eq!(step(&kept, t, true), want, "round {t}");
            assert_eq!(step(&kept, t, false), (-1.0, MeanFunction::Quadratic));
        }
        let single = LoneFit {
            fits: vec![(hyper(-3.0), MeanFunction::Constant)],
            kept: 0,
        };
        assert_eq!(step(&single, 2, true), (-3.0, MeanFunction::Constant));
        assert_eq!(step(&single, 3, true), (-3.0, MeanFunction::Constant));
    }

    /// A kept trend's units: in utility units it predicts the utility whose
    /// warped, standardised value the fitted trend predicted (checked with
    /// the production `OutputWarping::apply` and `OutputScaling::standardise`
    /// inside the clip), and it comes back under another clip and scaling
    /// as the same utilities standardised there.
    #[test]
    fn a_kept_trend_predicts_the_same_utilities_in_every_standardisation() {
        let beta: Vec<f64> = (0..quadratic_len(2))
            .map(|i| 0.1 * i as f64 - 0.2)
            .collect();
        let fitted = QuadraticTrend::new(2, beta).unwrap();
        let (w1, s1) = (
            OutputWarping::Clipped(50.0),
            OutputScaling {
                mean: 0.3,
                std: 0.2,
            },
        );
        let (w2, s2) = (
            OutputWarping::Clipped(80.0),
            OutputScaling {
                mean: -0.1,
                std: 0.05,
            },
        );
        let c1 = linear_warp_factor(w1).unwrap();
        let c2 = linear_warp_factor(w2).unwrap();
        let kept = in_utility_units(&fitted, c1, &s1).unwrap();
        let again = in_standardised_units(&kept, c2, &s2).unwrap();
        for x in [[0.1, 0.9], [0.5, 0.5], [0.7, 0.2]] {
            let u = kept.value(&x);
            assert!(u.abs() < 50.0, "inside both clips: {u}");
            let z1 = s1.standardise(w1.apply(u));
            assert!((z1 - fitted.value(&x)).abs() < 1e-12, "{z1}");
            let z2 = s2.standardise(w2.apply(u));
            assert!((z2 - again.value(&x)).abs() < 1e-9, "{z2}");
        }
        assert_eq!(linear_warp_factor(OutputWarping::None), Some(1.0));
        assert_eq!(linear_warp_factor(OutputWarping::SignedLog), None);
    }

    #[test]
    fn global_steppers_take_slots_by_rank_modulo_the_batch() {
        let local = [true, false, false, true, false];
        let slots: Vec<Option<usize>> = (0..5).map(|i| global_slot(&local, i, 10)).collect();
        assert_eq!(slots, vec![None, Some(0), Some(1), None, Some(2)]);
        assert_eq!(global_slot(&local, 4, 2), Some(0));
        assert_eq!(
            global_slot(&local, 9, 2),
            None,
            "an unknown member steps locally"
        );
    }
}
