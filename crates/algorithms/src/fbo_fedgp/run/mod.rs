//! One federation, in process: Alg. 2 of paper 004 over any `SecureSum`, its
//! ablations, and the plaintext baselines under the same protocol (each
//! member alone, random search, and every member's data pooled).

use super::model::choose_warping_and_scaling;
use super::params::{
    FitStart, GlobalSteps, GlobalTrend, HyperLikelihood, HyperparameterMode, InitialDesign,
    KernelKind, LocalScaling, LocalSteps, Method, PriorMean, SupportSelection, ValidParams,
};
use super::private::PrivateFbo;
use super::{
    refit_decision, Client, Hyperparameters, OutputScaling, OutputWarping, Server, SummaryScaling,
    TrendReleases,
};
use crate::roster::Roster;
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

mod baselines;
mod federated;
mod fit;
mod lone;
mod support;
mod trend;

use lone::{LoneFit, LoneRecipe};
use trend::SpacedTrend;
#[cfg(test)]
use trend::{in_standardised_units, in_utility_units, linear_warp_factor};
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
    let roster = Roster::simulation(members, seed);
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
    if params.model.global_trend == GlobalTrend::Quadratic {
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
    let roster = Roster::member(members, me, private_seed)?;
    run_roster(task, method, params, channel, &roster, seed, observer)
}

/// `method` for the members of `roster` (every one in the simulator, one in
/// an agent): the one code path of [`run`] and [`run_member`].
pub fn run_roster(
    task: &Task,
    method: Method,
    params: &ValidParams,
    channel: &mut dyn SecureSum,
    roster: &Roster<'_>,
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
    dispatch(task, method, params, channel, roster, seed, observer)
}

fn dispatch(
    task: &Task,
    method: Method,
    params: &ValidParams,
    channel: &mut dyn SecureSum,
    roster: &Roster<'_>,
    seed: u64,
    observer: &mut dyn FnMut(&RoundEvent),
) -> Result<RunResult, AlgorithmError> {
    crate::error::check_task_members(task, roster.members(), params.members)?;
    let dim = task.dim();
    match params.model.kernel {
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

/// Every member's draw of round `t` (Alg. 2, lines 14-15) in a federation
/// of `members` seeded with `seed`: `true` for a local step. The draws come
/// from public streams, one per member and round, so every member computes
/// everyone's and knows without a message whether anyone steps globally (the
/// aggregation runs then). They are coin flips independent of any data, so
/// making them public reveals nothing about an institution.
fn public_steps(
    seed: u64,
    method: Method,
    members: usize,
    t: usize,
    schedule: &MixingSchedule,
) -> Result<Vec<bool>, AlgorithmError> {
    let round_seed = mix(mix(seed, u64::MAX), t as u64);
    (0..members)
        .map(|i| {
            Ok(match method {
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

/// The rounds of a federation of `params` seeded with `seed` in which some
/// member steps globally (so the members' summaries are summed), fixed in
/// advance by the mixing schedule's public coins (`public_steps`): what
/// a private study plans its releases for before the first one.
pub fn global_step_rounds(
    method: Method,
    params: &ValidParams,
    seed: u64,
) -> Result<Vec<usize>, AlgorithmError> {
    let schedule = MixingSchedule::power(params.steps.schedule_exponent)?;
    let mut rounds = Vec::new();
    for t in 1..=params.rounds {
        if !public_steps(seed, method, params.members, t, &schedule)?
            .iter()
            .all(|local| *local)
        {
            rounds.push(t);
        }
    }
    Ok(rounds)
}

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

/// The hyper-parameters before any fit on `task`: the fixed ones, or a
/// first fit's start; a categorical's one-hot coordinates at their held
/// length-scale ([`ValidParams::held_lengthscales`]).
fn initial_hyperparameters(
    p: &ValidParams,
    task: &Task,
) -> Result<Hyperparameters, AlgorithmError> {
    let dim = task.dim();
    let fit = p.fit_config(task);
    let mut start = match p.hypers.mode {
        HyperparameterMode::Fixed => Hyperparameters::new(
            vec![p.hypers.lengthscale.unwrap_or(1.0); dim],
            p.hypers.signal_variance.unwrap_or(1.0),
            p.hypers.noise_variance.unwrap_or(1e-2),
        )?,
        // A start for the first fit: the prior's mode e^{μ − σ²} with the
        // length-scale prior, else a quarter of the unit cube's diagonal.
        HyperparameterMode::FederatedMle => {
            let l = match fit.prior {
                Some(prior) => {
                    let ls = prior.lengthscale;
                    (ls.loc - ls.scale * ls.scale).exp()
                }
                None => 0.25 * (dim as f64).sqrt(),
            };
            Hyperparameters::new(vec![l; dim], 1.0, 1e-2)?
        }
    };
    start.hold(&fit.held);
    Ok(start)
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
        roster: &Roster<'a>,
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
            members: roster.members(),
            // The clients this process runs, each with its private seed.
            clients: roster
                .local()
                .iter()
                .map(|l| Client::new(roster.members()[l.index].clone(), l.index, l.private_seed))
                .collect(),
            // Simulation-only diagnostics evaluate the objective outside
            // the protocol.
            diagnostics: roster.is_simulation(),
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

    /// Every member's draw of round `t` (`public_steps`).
    fn steps(&self, t: usize, schedule: &MixingSchedule) -> Result<Vec<bool>, AlgorithmError> {
        public_steps(self.seed, self.method, self.members.len(), t, schedule)
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
            .filter_map(|c| global_slot(local, c.index(), self.params.steps.global_batch))
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
            self.params.steps.global_batch_optimism,
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
            best_point: crate::BestPoint::of(
                self.task,
                self.clients.iter().filter_map(Client::best_point),
            ),
            maximised: Some(self.task.is_maximised()),
        }
    }

    fn run(mut self, channel: &mut dyn SecureSum) -> Result<RunResult, AlgorithmError> {
        let start = Instant::now();
        if self.params.model.global_trend != GlobalTrend::None && self.method.is_plaintext() {
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

#[cfg(test)]
mod tests {
    use super::{
        global_slot, in_standardised_units, in_utility_units, initial_hyperparameters,
        linear_warp_factor, quadratic_len, LoneFit, LoneRecipe, OutputScaling, OutputWarping,
        QuadraticTrend,
    };
    use crate::fbo_fedgp::{FboFedGpParams, Hyperparameters, LocalSteps, Method};
    use fedhe_gp::exact::MeanFunction;
    use fedhe_gp::{KernelParams, Matern52};

    /// The private recipe's fixed length-scales: 3 (the default) on a
    /// categorical's one-hot coordinates of a typed space (Func2C: two
    /// floats, then 3 + 5 one-hot coordinates), 0.25 on the floats and on
    /// every coordinate of a box; `categorical_lengthscale` moves the held
    /// value. Its members' own fits (the lone defaults) and a fitted start
    /// hold the same coordinates, and the fit's length-scale prior counts
    /// the two floats only.
    #[test]
    fn the_fixed_categorical_length_scale_holds_only_the_one_hot_coordinates() {
        use fedhe_tasks::mixed;
        let lengthscales = |p: &FboFedGpParams, task: &fedhe_tasks::Task| -> Vec<f64> {
            let h = initial_hyperparameters(&p.validate().unwrap(), task).unwrap();
            h.log()[..task.dim()].iter().map(|v| v.exp()).collect()
        };
        let close = |a: &[f64], b: &[f64]| {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12)
        };
        let recipe = FboFedGpParams::private_recipe(3, 10, 4.0);
        let func2c = mixed::task(mixed::FUNC2C, 10).unwrap().unwrap();
        let mut want = vec![0.25, 0.25];
        want.extend([3.0; 8]);
        assert!(close(&lengthscales(&recipe, &func2c), &want));
        let box_task = fedhe_tasks::by_name("cec2005-f1", 2, 0).unwrap();
        assert!(close(&lengthscales(&recipe, &box_task), &[0.25; 2]));
        let mut set = recipe.clone();
        set.hypers.categorical_lengthscale = Some(1.5);
        want[2..].fill(1.5);
        assert!(close(&lengthscales(&set, &func2c), &want));
        let held: Vec<(usize, f64)> = (2..10).map(|d| (d, 3.0)).collect();
        let members = recipe.validate().unwrap().lone_defaults();
        assert_eq!(members.fit_config(&func2c).held, held);
        assert!(members.fit_config(&box_task).held.is_empty());
        // Hvarfner et al.'s prior with D = 2, the fitted coordinates, and
        // with D = 2 on the two-dimensional box: the same location.
        let loc = |task| members.fit_config(task).prior.unwrap().lengthscale.loc;
        let two = std::f64::consts::SQRT_2 + 0.5 * 2f64.ln();
        assert!((loc(&func2c) - two).abs() < 1e-12, "{}", loc(&func2c));
        assert!((loc(&box_task) - two).abs() < 1e-12);
        let start = initial_hyperparameters(&members, &func2c).unwrap();
        let start: Vec<f64> = start.log()[..10].iter().map(|v| v.exp()).collect();
        assert!(
            start[2..].iter().all(|l| (l - 3.0).abs() < 1e-12),
            "{start:?}"
        );
        assert!(
            start[..2].iter().all(|l| (l - 3.0).abs() > 0.1),
            "{start:?}"
        );
    }

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
            {
                let mut p = FboFedGpParams::paper_defaults();
                p.steps.local = local_steps;
                p.hypers.lengthscale = Some(0.25);
                p.hypers.signal_variance = Some(4.0);
                p.acquisition.candidates = 123;
                p
            }
            .private(4.0)
            .validate()
            .unwrap()
        };
        let lone = {
            let mut p = FboFedGpParams::paper_defaults();
            p.acquisition.candidates = 123;
            p
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
                r.params.hypers.mode,
                r.params.model.warping.for_lone_agent(),
                r.params.hypers.refit_every,
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
