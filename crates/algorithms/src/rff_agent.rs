//! The agent of the Thompson-sampling family (TS, FTS, DP-FTS-DE): its private
//! history, the random-Fourier-feature model every agent shares by seed, and
//! the two things it does with it — a Thompson-sampling step and a posterior
//! draw `ω_{n,t}` to send (paper 002 §2, paper 000 eq. 2).
//!
//! Only the vectors sent are RFF weight draws. For its own TS step an agent
//! samples its exact GP posterior (paper 000 §3.1 step ⑤ and Alg. 2 line 6,
//! paper 002 Alg. 1 line 4: `f_t ~ GP(μ_t, β²σ_t²)`, eq. 1, with `β = 1` as
//! paper 002 §5 sets it); `gp_prior_features = 0` restores the earlier
//! shortcut of sampling the shared `M`-feature weight posterior instead.
//!
//! Results of these algorithms measure *simple regret*: agent `n`'s regret
//! after round `t` is `u(f^n(x^{n,*})) − max_{s ≤ t} u(f^n(x^n_s))` (initial
//! points included, `u` the task's utility), and a run reports its mean over
//! the agents, as paper 000 §5 does. On a task whose optimum is unknown (the
//! real federated tasks of `fedhe-tasks`) there is no regret: agent `n`'s
//! score is then its best noise-free value so far in the task's own units
//! (e.g. its best validation error), and a run reports the mean of that, as
//! paper 000 Fig. 3 reports the agents' mean validation error. Cumulative
//! regret is left out of such a run's result.

use crate::error::{config, positive};
use crate::{AlgorithmError, RunResult};
use fedhe_bo::acquisition::maximize_rff_sample;
use fedhe_bo::optim::{maximize, Bounds, Maximum, OptimizerConfig};
use fedhe_bo::schedule::MixingSchedule;
use fedhe_crypto::MemberId;
use fedhe_gp::rff::{RandomFourierFeatures, RffPosterior};
use fedhe_gp::{KernelParams, PosteriorPath, SquaredExponential};
use fedhe_tasks::{Evaluation, Task};
use nalgebra::{DMatrix, DVector};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::time::Instant;

/// The model settings every agent shares, before validation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RffModelParams {
    /// Number of random features `M`.
    pub features: usize,
    /// SE kernel length-scale (unit cube).
    pub lengthscale: f64,
    /// The regulariser `λ` of eq. 2 (the observation-noise variance).
    pub noise_variance: f64,
    /// Uniform candidates scored by the acquisition optimiser.
    pub acq_candidates: usize,
    /// Best candidates polished by L-BFGS.
    pub acq_polish: usize,
    /// L-BFGS iterations per polish.
    pub acq_iters: u64,
    /// How an agent samples its *own* posterior for a TS step: with `F > 0`,
    /// a draw from the exact GP posterior of paper 000 eq. 1 (Alg. 2 line 6;
    /// paper 002 Alg. 1 line 4) by pathwise conditioning on `F` fresh random
    /// features ([`fedhe_gp::PosteriorPath`]: exact mean and covariance); with
    /// 0, a draw `φᵀω̃` from the shared `M`-feature weight posterior of eq. 2.
    pub gp_prior_features: usize,
}

impl RffModelParams {
    /// Checks every setting; the error names it.
    pub fn validate(self) -> Result<Self, AlgorithmError> {
        if self.features == 0 {
            return Err(config("features", "at least one random feature"));
        }
        positive("lengthscale", self.lengthscale)?;
        positive("noise_variance", self.noise_variance)?;
        if self.acq_candidates == 0 {
            return Err(config("acq_candidates", "at least one candidate"));
        }
        Ok(self)
    }

    /// The shared model of a `dim`-dimensional task: SE features of unit signal
    /// variance drawn from `seed` (every agent uses the same seed, so the same
    /// `φ`, paper 002 §2).
    pub fn model(&self, dim: usize, seed: u64) -> Result<RffModel, AlgorithmError> {
        let kernel = SquaredExponential::new(KernelParams::isotropic(dim, self.lengthscale, 1.0)?);
        Ok(RffModel {
            features: RandomFourierFeatures::new(&kernel, self.features, seed)?,
            kernel,
            lambda: self.noise_variance,
            params: *self,
        })
    }
}

/// The validated settings TS, FTS and DP-FTS-DE share.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedSettings {
    /// Agents `N`.
    pub members: usize,
    /// Rounds `T`.
    pub rounds: usize,
    /// Initial points per agent `N_init`.
    pub initial_points: usize,
    /// The shared model.
    pub model: RffModelParams,
    /// `p_t = 1 − t^(−c)`.
    pub schedule: MixingSchedule,
}

impl SharedSettings {
    /// Checks `N ≥ 2`, `T ≥ 1`, `c` and the model; the errors name the field.
    pub fn validate(
        members: usize,
        rounds: usize,
        initial_points: usize,
        mixing_exponent: f64,
        model: RffModelParams,
    ) -> Result<Self, AlgorithmError> {
        if members < 2 {
            return Err(config("members", format!("{members}: at least 2 agents")));
        }
        if rounds == 0 {
            return Err(config("rounds", "at least one round"));
        }
        let schedule = MixingSchedule::power(mixing_exponent)
            .map_err(|e| config("mixing_exponent", e.to_string()))?;
        Ok(Self {
            members,
            rounds,
            initial_points,
            model: model.validate()?,
            schedule,
        })
    }
}

/// The shared features `φ`, the regulariser `λ` and the optimiser settings.
#[derive(Debug, Clone)]
pub struct RffModel {
    features: RandomFourierFeatures,
    /// The SE kernel the features approximate (unit signal variance).
    kernel: SquaredExponential,
    lambda: f64,
    params: RffModelParams,
}

impl RffModel {
    /// The features `φ`.
    pub fn features(&self) -> &RandomFourierFeatures {
        &self.features
    }

    /// `M`.
    pub fn len(&self) -> usize {
        self.features.len()
    }

    /// Always false.
    pub fn is_empty(&self) -> bool {
        self.features.is_empty()
    }

    /// Uniform candidates the acquisition optimiser scores.
    pub fn candidates(&self) -> usize {
        self.params.acq_candidates
    }

    fn optimizer(&self, candidates: usize, seed: u64) -> OptimizerConfig {
        OptimizerConfig {
            n_candidates: candidates.max(1),
            n_polish: self.params.acq_polish,
            max_iters: self.params.acq_iters,
            seed,
            ..OptimizerConfig::default()
        }
    }
}

/// One agent: its private history (inputs in the unit cube, utilities of the
/// observations), its RNG, and its regret bookkeeping.
#[derive(Debug, Clone)]
pub struct RffAgent {
    id: MemberId,
    index: usize,
    x: Vec<Vec<f64>>,
    utility: Vec<f64>,
    best: f64,
    /// The best noise-free value and the index of its point in `x`.
    best_value: Option<(f64, usize)>,
    optimum: f64,
    cumulative_regret: f64,
    rng: ChaCha8Rng,
}

impl RffAgent {
    /// Agent number `index` of `task` (which per-client objective it evaluates),
    /// with its own seeded RNG.
    pub fn new(
        id: MemberId,
        index: usize,
        task: &Task,
        seed: impl Into<crate::roster::PrivateSeed>,
    ) -> Self {
        Self {
            id,
            index,
            x: Vec::new(),
            utility: Vec::new(),
            best: f64::NEG_INFINITY,
            best_value: None,
            optimum: task.utility(task.client_optimum(index)),
            cumulative_regret: 0.0,
            rng: seed.into().rng(),
        }
    }

    /// The member identity.
    pub fn id(&self) -> &MemberId {
        &self.id
    }

    /// The agent's index in the federation.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The agent's private RNG.
    pub fn rng(&mut self) -> &mut ChaCha8Rng {
        &mut self.rng
    }

    /// Queries `x` ([`Task::canonical`] of it when the task has a typed
    /// space) and adds the observation to the history; `counts` says
    /// whether the query adds to the cumulative regret (not the initial design).
    pub fn query(
        &mut self,
        task: &Task,
        x: Vec<f64>,
        counts: bool,
    ) -> Result<Evaluation, AlgorithmError> {
        let x = task.canonical(x);
        let e = task.evaluate(self.index, &x, &mut self.rng)?;
        let u = task.utility(e.noise_free);
        self.best = self.best.max(u);
        if self
            .best_value
            .is_none_or(|(b, _)| task.better(e.noise_free, b))
        {
            self.best_value = Some((e.noise_free, self.x.len()));
        }
        if counts {
            self.cumulative_regret += self.optimum - u;
        }
        self.x.push(x);
        self.utility.push(task.utility(e.observed));
        Ok(e)
    }

    /// `count` initial points uniform in `bounds` (paper 000 Alg. 2, line 2).
    pub fn initial_design(
        &mut self,
        task: &Task,
        count: usize,
        bounds: &Bounds,
    ) -> Result<(), AlgorithmError> {
        for _ in 0..count {
            let x = bounds.sample(&mut self.rng);
            self.query(task, x, false)?;
        }
        Ok(())
    }

    /// The BLR posterior `N(ν, λΣ⁻¹)` of the weights given the history
    /// (paper 000 eq. 2; paper 002 eqs. 2-3).
    pub fn posterior(&self, model: &RffModel) -> Result<RffPosterior, AlgorithmError> {
        let (x, y) = self.history(model.features.dim());
        Ok(RffPosterior::fit(&model.features, &x, &y, model.lambda)?)
    }

    /// The history as `(X, y)`: inputs one per row, observed utilities.
    fn history(&self, dim: usize) -> (DMatrix<f64>, DVector<f64>) {
        let x = DMatrix::from_fn(self.x.len(), dim, |i, j| self.x[i][j]);
        (x, DVector::from_column_slice(&self.utility))
    }

    /// `ω_{n,t} ~ N(ν, λΣ⁻¹)`: the vector the agent sends (paper 000 Alg. 2,
    /// line 10; paper 002 §3.1).
    pub fn sample_weights(&mut self, model: &RffModel) -> Result<DVector<f64>, AlgorithmError> {
        let posterior = self.posterior(model)?;
        Ok(posterior.sample(&mut self.rng))
    }

    /// The arg max of `φ(x)ᵀω` over `bounds`, scoring `candidates` uniform points.
    pub fn maximize(
        &mut self,
        model: &RffModel,
        weights: &DVector<f64>,
        bounds: &Bounds,
        candidates: usize,
    ) -> Result<Maximum, AlgorithmError> {
        let seed = self.rng.gen();
        Ok(maximize_rff_sample(
            &model.features,
            weights,
            bounds,
            &model.optimizer(candidates, seed),
        )?)
    }

    /// A Thompson-sampling step: draw `f_t` from the agent's own posterior and
    /// return its arg max over `bounds` (paper 000 Alg. 2 line 6 and paper 002
    /// Alg. 1 line 4, `β = 1`). `f_t` is a draw from the exact GP posterior
    /// (eq. 1), or `φᵀω̃` from the RFF weight posterior (eq. 2) when
    /// [`RffModelParams::gp_prior_features`] is 0.
    pub fn thompson_step(
        &mut self,
        model: &RffModel,
        bounds: &Bounds,
    ) -> Result<Vec<f64>, AlgorithmError> {
        let candidates = model.params.acq_candidates;
        if model.params.gp_prior_features == 0 {
            let w = self.sample_weights(model)?;
            return Ok(self.maximize(model, &w, bounds, candidates)?.x);
        }
        let (x, y) = self.history(model.features.dim());
        let path = PosteriorPath::draw(
            &model.kernel,
            model.lambda,
            &x,
            &y,
            model.params.gp_prior_features,
            &mut self.rng,
        )?;
        let seed = self.rng.gen();
        let dim = bounds.dim();
        let best = maximize(
            |x| {
                path.evaluate(x)
                    .unwrap_or((f64::NEG_INFINITY, vec![0.0; dim]))
            },
            bounds,
            &model.optimizer(candidates, seed),
        )?;
        Ok(best.x)
    }

    /// Simple regret `u(f^n(x^*)) − max_s u(f^n(x_s))` (NaN when the optimum is unknown).
    pub fn simple_regret(&self) -> f64 {
        self.optimum - self.best
    }

    /// The best noise-free value found so far, in the task's units, and its
    /// point (unit cube); `None` before the first query.
    pub fn best_point(&self) -> Option<(f64, &[f64])> {
        self.best_value
            .map(|(value, at)| (value, self.x[at].as_slice()))
    }

    /// The best noise-free value found so far, in the task's units (NaN
    /// before the first query).
    pub fn best_value(&self) -> f64 {
        self.best_value.map_or(f64::NAN, |(value, _)| value)
    }

    /// Whether the agent's optimum is known, so that regret is defined.
    pub fn knows_optimum(&self) -> bool {
        self.optimum.is_finite()
    }

    /// What a run reports for this agent (module docs): its simple regret when
    /// the optimum is known, else its best value so far (lower is better for a
    /// minimised task, such as every real federated task).
    pub fn score(&self) -> f64 {
        if self.knows_optimum() {
            self.simple_regret()
        } else {
            self.best_value()
        }
    }

    /// Cumulative regret of the counted queries.
    pub fn cumulative_regret(&self) -> f64 {
        self.cumulative_regret
    }
}

/// Per-round bookkeeping of a run of agents, turned into a [`RunResult`].
#[derive(Debug)]
pub struct RegretTrace {
    start: Instant,
    simple: Vec<f64>,
    cumulative: Vec<f64>,
    epsilon: Vec<f64>,
}

impl Default for RegretTrace {
    fn default() -> Self {
        Self::new()
    }
}

/// What a run adds to its regret trace in [`RegretTrace::finish`].
#[derive(Debug, Clone)]
pub struct RunTotals {
    /// The method's name.
    pub method: String,
    /// The seed.
    pub seed: u64,
    /// Mean bytes each agent sent.
    pub bytes_sent_per_member: u64,
    /// Secure sums run.
    pub aggregations: usize,
    /// Rounds with a global step (a broadcast or message used).
    pub global_steps: usize,
}

impl RegretTrace {
    /// Starts the clock.
    pub fn new() -> Self {
        Self {
            start: Instant::now(),
            simple: Vec::new(),
            cumulative: Vec::new(),
            epsilon: Vec::new(),
        }
    }

    /// Records the end of a round: the agents' mean score ([`RffAgent::score`]:
    /// simple regret, or the best value when the optimum is unknown) and mean
    /// cumulative regret, and the privacy loss so far (for private
    /// algorithms). Returns the mean score.
    pub fn end_round(&mut self, agents: &[RffAgent], epsilon: Option<f64>) -> f64 {
        let n = agents.len().max(1) as f64;
        let simple = agents.iter().map(RffAgent::score).sum::<f64>() / n;
        self.simple.push(simple);
        self.cumulative
            .push(agents.iter().map(RffAgent::cumulative_regret).sum::<f64>() / n);
        if let Some(e) = epsilon {
            self.epsilon.push(e);
        }
        simple
    }

    /// The result: `trace` and `best` are the agents' mean score (module docs),
    /// `best_per_member` each agent's final score; cumulative regret only when
    /// every agent's optimum is known.
    pub fn finish(self, task: &Task, agents: &[RffAgent], totals: RunTotals) -> RunResult {
        let regret_known = agents.iter().all(RffAgent::knows_optimum);
        RunResult {
            task: task.name().to_string(),
            method: totals.method,
            seed: totals.seed,
            members: agents.len(),
            rounds: self.simple.len(),
            best: self.simple.last().copied().unwrap_or(f64::NAN),
            best_per_member: agents.iter().map(RffAgent::score).collect(),
            trace: self.simple,
            seconds: self.start.elapsed().as_secs_f64(),
            bytes_sent_per_member: totals.bytes_sent_per_member,
            aggregations: totals.aggregations,
            global_steps: totals.global_steps,
            cumulative_regret: regret_known.then_some(self.cumulative),
            surrogate_rmse: None,
            surrogate_rmse_constant: None,
            releases: None,
            best_point: crate::BestPoint::of(task, agents.iter().filter_map(RffAgent::best_point)),
            epsilon: (!self.epsilon.is_empty()).then_some(self.epsilon),
            // Scores are simple regrets or errors: lower is better whatever the task's sense.
            maximised: Some(false),
        }
    }
}

/// The agents this process plays: one per local member of `roster`, with its
/// RNG from the member's private seed.
pub fn agents(task: &Task, roster: &crate::roster::Roster<'_>) -> Vec<RffAgent> {
    roster
        .local()
        .iter()
        .map(|l| {
            RffAgent::new(
                roster.members()[l.index].clone(),
                l.index,
                task,
                l.private_seed,
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thompson_steps_find_good_points_of_a_smooth_function() {
        let task = fedhe_tasks::by_name("gp-sample-1", 1, 0).unwrap();
        // Both samplers of the agent's own posterior: the RFF weight posterior
        // (0) and the exact GP posterior (pathwise, 200 prior features).
        for gp_prior_features in [0, 200] {
            let model = RffModelParams {
                features: 50,
                lengthscale: 0.03,
                noise_variance: 0.01,
                acq_candidates: 500,
                acq_polish: 2,
                acq_iters: 30,
                gp_prior_features,
            }
            .validate()
            .unwrap()
            .model(1, 9)
            .unwrap();
            let bounds = Bounds::unit(1).unwrap();
            let mut a = RffAgent::new(MemberId::new("a").unwrap(), 0, &task, 4);
            a.initial_design(&task, 5, &bounds).unwrap();
            let start = a.simple_regret();
            for _ in 0..30 {
                let x = a.thompson_step(&model, &bounds).unwrap();
                a.query(&task, x, true).unwrap();
            }
            let end = a.simple_regret();
            assert!(end <= start, "{gp_prior_features}: {end} > {start}");
            assert!(end < 0.15, "{gp_prior_features}: {end}");
            assert!(a.cumulative_regret() > 0.0);
        }
    }
}
