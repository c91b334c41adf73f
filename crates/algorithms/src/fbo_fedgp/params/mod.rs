//! Settings of an FBO-FedGP run: params → validated params (linfa style).

use crate::error::config;
use crate::surrogate::{AcquisitionKind, AcquisitionStep, UcbBeta};
use crate::AlgorithmError;
use fedhe_bo::optim::{OptimizerConfig, RawSampling, RestartSelection};
use fedhe_gp::exact::MeanFunction;
use fedhe_gp::hyperfit::{FitConfig, HyperBounds, HyperPrior, LogNormalPrior};
use serde::{Deserialize, Serialize};

use super::model::Warping;

mod settings;

pub use settings::*;

fn default_initial_points() -> usize {
    4
}
fn default_support_size() -> usize {
    16
}
fn default_schedule_exponent() -> f64 {
    0.5
}
fn default_refit_every() -> usize {
    5
}
fn default_kmeans_tol() -> f64 {
    1e-3
}
fn default_kmeans_max_iters() -> usize {
    20
}
fn default_hyper_candidates() -> usize {
    128
}
fn default_acq_candidates() -> usize {
    1000
}
fn default_acq_polish() -> usize {
    2
}
fn default_acq_iters() -> u64 {
    30
}
fn default_ts_candidates() -> usize {
    256
}
fn default_global_batch() -> usize {
    10
}
fn default_channel_bound() -> f64 {
    1024.0
}
fn default_ucb_beta() -> f64 {
    1.0
}
fn default_warping() -> Warping {
    Warping::Auto
}
fn default_fit_starts() -> usize {
    4
}
fn default_fit_iters() -> u64 {
    50
}
fn default_fit_signal_variance() -> bool {
    true
}

/// The settings of an FBO-FedGP federation, as written in a config file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FboFedGpParams {
    /// Number of clients `M` (at least 2).
    pub members: usize,
    /// Rounds `T`; each client evaluates one point per round.
    pub rounds: usize,
    /// Initial points per client `|D_i|` (default 4, the paper's §5.1).
    #[serde(default = "default_initial_points")]
    pub initial_points: usize,
    /// Support-set size `|S|` (the starting size when it grows; default 16,
    /// the paper's §5.1).
    #[serde(default = "default_support_size")]
    pub support_size: usize,
    /// Optional growth of `|S|`.
    #[serde(default)]
    pub support_growth: Option<SupportGrowth>,
    /// How `Z` is chosen.
    #[serde(default)]
    pub support_selection: SupportSelection,
    /// Where the initial points come from.
    #[serde(default)]
    pub initial_design: InitialDesign,
    /// The acquisition function: `"ucb"` (with `ucb_beta` or
    /// `ucb_beta_schedule`), `"ei"` (maximised as LogEI, Ament et al. 2023),
    /// `"pi"` or `"ts"`. Unset: the method's default (see
    /// [`ValidParams::acquisition_for`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acquisition: Option<AcquisitionKind>,
    /// The fixed UCB `β` (default 1; see [`crate::surrogate::UcbBeta`]).
    #[serde(default = "default_ucb_beta")]
    pub ucb_beta: f64,
    /// A growing `β_t` instead: `"kandasamy"` or `"srinivas"` (δ = 0.1).
    #[serde(default)]
    pub ucb_beta_schedule: Option<BetaSchedule>,
    /// The mixing schedule `p_t = 1 − t^(−c)`; `c` (Table 4: 0.25, 0.5, 0.75, 1).
    #[serde(default = "default_schedule_exponent")]
    pub schedule_exponent: f64,
    /// The kernel family.
    #[serde(default)]
    pub kernel: KernelKind,
    /// The output warping: `"auto"` (the default: standardised for a lone
    /// agent, standardised and clipped far in the tail in a federation; see
    /// [`Warping::Auto`]), `"clipped"`, `"signed-log"`, `"none"`
    /// (standardised; beyond the channel's bound in a federation on
    /// objectives of large magnitude), or `"likelihood"` (chosen by the data;
    /// see [`Warping::Likelihood`] for its limit through the channel). A
    /// lone agent's default is the measured best lone recipe together with
    /// LogEI, two prior means in turn ([`PriorMean::Auto`]) and a trust
    /// region ([`ValidParams::trust_region_for`]).
    #[serde(default = "default_warping")]
    pub warping: Warping,
    /// The length-scale prior of the hyper-parameter fit.
    #[serde(default)]
    pub lengthscale_prior: LengthscalePrior,
    /// Starts of a lone agent's multi-start L-BFGS hyper-parameter fit.
    #[serde(default = "default_fit_starts")]
    pub fit_starts: usize,
    /// L-BFGS iterations per start of that fit.
    #[serde(default = "default_fit_iters")]
    pub fit_iters: u64,
    /// The output standardisation of a local step's GP (with `local_steps =
    /// "federated"`; a lone local step standardises by its own data).
    #[serde(default)]
    pub local_scaling: LocalScaling,
    /// How hyper-parameters are set.
    #[serde(default)]
    pub hyperparameters: HyperparameterMode,
    /// Fixed length-scale (all dimensions, unit cube), for `hyperparameters = "fixed"`.
    #[serde(default)]
    pub lengthscale: Option<f64>,
    /// Fixed signal variance (standardised outputs).
    #[serde(default)]
    pub signal_variance: Option<f64>,
    /// Fixed noise variance (standardised outputs).
    #[serde(default)]
    pub noise_variance: Option<f64>,
    /// Rounds between hyper-parameter refits (0: fit once at the start).
    #[serde(default = "default_refit_every")]
    pub refit_every: usize,
    /// The likelihood a federation scores its hyper-parameter candidates by.
    #[serde(default)]
    pub hyper_likelihood: HyperLikelihood,
    /// k-means tolerance on the largest centre move (unit cube).
    #[serde(default = "default_kmeans_tol")]
    pub kmeans_tol: f64,
    /// k-means iteration cap.
    #[serde(default = "default_kmeans_max_iters")]
    pub kmeans_max_iters: usize,
    /// Public hyper-parameter candidates scored by the federated likelihood at
    /// each refit.
    #[serde(default = "default_hyper_candidates")]
    pub hyper_candidates: usize,
    /// Random candidates of the acquisition optimiser.
    #[serde(default = "default_acq_candidates")]
    pub acq_candidates: usize,
    /// Candidates polished by L-BFGS.
    #[serde(default = "default_acq_polish")]
    pub acq_polish: usize,
    /// L-BFGS iterations per polish.
    #[serde(default = "default_acq_iters")]
    pub acq_iters: u64,
    /// How the acquisition optimiser draws its raw candidates.
    #[serde(default)]
    pub acq_raw: AcqRaw,
    /// Which raw candidates the acquisition optimiser polishes.
    #[serde(default)]
    pub acq_restarts: AcqRestarts,
    /// The prior on the noise variance of the hyper-parameter fit.
    #[serde(default)]
    pub noise_prior: NoisePrior,
    /// Where a lone agent's fit starts (see [`FitStart`]).
    #[serde(default)]
    pub fit_start: FitStart,
    /// The prior mean of the GP (see [`PriorMean`]; `"auto"` by default).
    #[serde(default)]
    pub prior_mean: PriorMean,
    /// Whether the signal variance `σ_f²` is fitted (in (0.05, 20), the
    /// default) or fixed at 1 on the standardised outputs (`false`, as
    /// BoTorch's `SingleTaskGP`, which has no `ScaleKernel` since 0.12).
    #[serde(default = "default_fit_signal_variance")]
    pub fit_signal_variance: bool,
    /// Candidates of a Thompson sample.
    #[serde(default = "default_ts_candidates")]
    pub ts_candidates: usize,
    /// Whether a lone agent's steps (`independent-bo`, and a federation's
    /// local steps with `local_steps = "lone"`) maximise the acquisition in
    /// a trust region around the agent's best point rather than the whole
    /// cube (TuRBO-1, Eriksson et al. 2019; `fedhe_bo::trust_region`).
    /// Unset: the method's default ([`ValidParams::trust_region_for`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust_region: Option<bool>,
    /// The trend the global posterior is fitted around (see
    /// [`GlobalTrend`]; default none).
    #[serde(default)]
    pub global_trend: GlobalTrend,
    /// How local steps choose their points (see [`LocalSteps`]).
    #[serde(default)]
    pub local_steps: LocalSteps,
    /// How global steps choose their points (see [`GlobalSteps`]).
    #[serde(default)]
    pub global_steps: GlobalSteps,
    /// The size of the penalised batch of global steps (at least 1).
    #[serde(default = "default_global_batch")]
    pub global_batch: usize,
    /// The `κ` of the maximum `M = max (μ + κσ)` against which the penalised
    /// batch's balls are measured (0, the default: the paper's `M`; see
    /// `fedhe_bo::penalty::lipschitz_and_max`).
    #[serde(default)]
    pub global_batch_optimism: f64,
    /// The bound every contribution must respect (the channel's codec bound).
    #[serde(default = "default_channel_bound")]
    pub channel_bound: f64,
    /// Output privacy: `{ mode = "noise-free" }` (releases exact sums; the
    /// default, labelled so) or `{ mode = "dp", epsilon, delta, .. }`, every
    /// release with distributed discrete Gaussian noise within the budget
    /// (`crate::privacy`; what a private federation releases:
    /// `fbo_fedgp::private`).
    #[serde(default)]
    pub privacy: crate::privacy::Privacy,
}

/// The budget ε per member (its whole data, δ = 1e-6) of the private recipe
/// when none is named: `fedhe demo`'s, `fedhe study create`'s and a
/// `recipe = "private"` config's.
pub const PRIVATE_RECIPE_EPSILON: f64 = 4.0;

impl FboFedGpParams {
    /// The paper's synthetic protocol (§5.1): `M` = 10, `|D_i|` = 4, `T` = 50,
    /// GP-UCB, `|S|` = 16, `p_t = 1 − 1/√t`, with fedhe's MAP fit.
    pub fn paper_defaults() -> Self {
        Self {
            members: 10,
            rounds: 50,
            initial_points: default_initial_points(),
            support_size: default_support_size(),
            support_growth: None,
            support_selection: SupportSelection::default(),
            initial_design: InitialDesign::default(),
            acquisition: None,
            ucb_beta: default_ucb_beta(),
            ucb_beta_schedule: None,
            schedule_exponent: default_schedule_exponent(),
            kernel: KernelKind::default(),
            warping: default_warping(),
            lengthscale_prior: LengthscalePrior::default(),
            fit_starts: default_fit_starts(),
            fit_iters: default_fit_iters(),
            local_scaling: LocalScaling::default(),
            hyperparameters: HyperparameterMode::default(),
            lengthscale: None,
            signal_variance: None,
            noise_variance: None,
            refit_every: default_refit_every(),
            hyper_likelihood: HyperLikelihood::default(),
            kmeans_tol: default_kmeans_tol(),
            kmeans_max_iters: default_kmeans_max_iters(),
            hyper_candidates: default_hyper_candidates(),
            acq_candidates: default_acq_candidates(),
            acq_polish: default_acq_polish(),
            acq_iters: default_acq_iters(),
            acq_raw: AcqRaw::default(),
            acq_restarts: AcqRestarts::default(),
            noise_prior: NoisePrior::default(),
            fit_start: FitStart::default(),
            prior_mean: PriorMean::default(),
            fit_signal_variance: default_fit_signal_variance(),
            ts_candidates: default_ts_candidates(),
            trust_region: None,
            global_trend: GlobalTrend::default(),
            local_steps: LocalSteps::default(),
            global_steps: GlobalSteps::default(),
            global_batch: default_global_batch(),
            global_batch_optimism: 0.0,
            channel_bound: default_channel_bound(),
            privacy: crate::privacy::Privacy::default(),
        }
    }

    /// The private recipe a study starts from (`fedhe demo`'s and `fedhe
    /// study create`'s defaults): the paper's protocol for `members` and
    /// `rounds`, a support set growing by 4 points a round from the global
    /// posterior, every member stepping globally on the shared posterior
    /// (one batch of `members`), and the settings tuned for it under DP on
    /// the demo's protocol (length-scale 0.25, signal variance 4,
    /// `p_t = 1 − t^−2`; `docs/results/privacy-2026-12-01`), with local steps
    /// a lone agent's at its own defaults ([`LocalSteps::LoneDefaults`]: on
    /// the demo's protocol at ε = 4, 10 of 10 seeds reach F1's optimum −450,
    /// against a median of 447 with the global model's fixed settings;
    /// neutral on Table 1, 32 of 60 seed-paired runs at least as good;
    /// `docs/results/privacy-2026-12-07`), made private at `epsilon` per
    /// member by [`FboFedGpParams::private`].
    pub fn private_recipe(members: usize, rounds: usize, epsilon: f64) -> Self {
        Self {
            members,
            rounds,
            support_growth: Some(SupportGrowth { step: 4, every: 1 }),
            global_steps: GlobalSteps::Shared,
            global_batch: members.max(1),
            lengthscale: Some(0.25),
            signal_variance: Some(4.0),
            schedule_exponent: 2.0,
            local_steps: LocalSteps::LoneDefaults,
            ..Self::paper_defaults()
        }
        .private(epsilon)
    }

    /// `given` settings over [`FboFedGpParams::private_recipe`] for their own
    /// `members` and `rounds` at `epsilon` (each setting given replaces the
    /// recipe's, `privacy` included): how a study's or a config's settings
    /// resolve to the private recipe, in one place (`fedhe study create`,
    /// and a `fedhe simulate` run naming `recipe = "private"`).
    pub fn over_private_recipe(
        members: usize,
        rounds: usize,
        epsilon: f64,
        given: serde_json::Map<String, serde_json::Value>,
    ) -> Result<serde_json::Map<String, serde_json::Value>, AlgorithmError> {
        let recipe = Self::private_recipe(members, rounds, epsilon);
        let mut settings = match serde_json::to_value(recipe) {
            Ok(serde_json::Value::Object(map)) => map,
            _ => return Err(config("recipe", "the private recipe did not serialise")),
        };
        settings.extend(given);
        Ok(settings)
    }

    /// `settings` with a `recipe` key resolved: `"private"` starts from
    /// [`FboFedGpParams::over_private_recipe`] (`members` and `rounds` then
    /// required, ε = 4 unless `privacy` says otherwise), `"paper"` (as no
    /// key) from the paper's defaults. Any other value is refused by name.
    pub fn resolve_recipe(
        mut settings: serde_json::Map<String, serde_json::Value>,
    ) -> Result<serde_json::Map<String, serde_json::Value>, AlgorithmError> {
        let Some(recipe) = settings.remove("recipe") else {
            return Ok(settings);
        };
        match recipe.as_str() {
            Some("paper") => Ok(settings),
            Some("private") => {
                let count = |key: &'static str| {
                    settings
                        .get(key)
                        .and_then(serde_json::Value::as_u64)
                        .and_then(|n| usize::try_from(n).ok())
                        .ok_or_else(|| config(key, "the private recipe needs it, as a count"))
                };
                let (members, rounds) = (count("members")?, count("rounds")?);
                Self::over_private_recipe(members, rounds, PRIVATE_RECIPE_EPSILON, settings)
            }
            _ => Err(config(
                "recipe",
                format!(
                    "expected \"private\" or \"paper\", got {}",
                    fedhe_crypto::text::quote(&recipe.to_string(), 40)
                ),
            )),
        }
    }

    /// These settings made a private study at `epsilon` per member (its
    /// whole data; δ = 1e-6, one colluder, clip 2): the releases `fbo_fedgp::private` allows — fixed public
    /// hyper-parameters (length-scale 1 in the unit cube, unit signal
    /// variance, noise variance 1e-2, unless already set), a public support
    /// set, the signed-log warping, a zero prior mean, no trend — each with
    /// distributed discrete Gaussian noise within the budget. The demo's
    /// recipe (`docs/results/privacy-2026-12-01`).
    pub fn private(self, epsilon: f64) -> Self {
        Self {
            hyperparameters: HyperparameterMode::Fixed,
            lengthscale: Some(self.lengthscale.unwrap_or(1.0)),
            signal_variance: Some(self.signal_variance.unwrap_or(1.0)),
            noise_variance: Some(self.noise_variance.unwrap_or(1e-2)),
            support_selection: SupportSelection::Public,
            warping: Warping::SignedLog,
            prior_mean: PriorMean::Zero,
            global_trend: GlobalTrend::None,
            privacy: crate::privacy::Privacy::Dp(crate::privacy::DpSettings {
                epsilon,
                delta: 1e-6,
                quorum: None,
                colluders: 1,
                clip: 2.0,
            }),
            ..self
        }
    }

    /// Checks every setting; the error names the first bad one.
    pub fn validate(&self) -> Result<ValidParams, AlgorithmError> {
        use crate::error::positive;
        if self.members < 2 {
            return Err(config(
                "members",
                format!(
                    "a federation needs at least 2 members, got {}",
                    self.members
                ),
            ));
        }
        if self.rounds < 1 {
            return Err(config("rounds", "at least one round"));
        }
        if self.initial_points < 1 {
            return Err(config(
                "initial_points",
                "at least one initial point per client",
            ));
        }
        if self.support_size < 1 {
            return Err(config("support_size", "|S| must be at least 1"));
        }
        if let Some(g) = self.support_growth {
            if g.step < 1 || g.every < 1 {
                return Err(config(
                    "support_growth",
                    "step and every must be at least 1",
                ));
            }
        }
        positive("schedule_exponent", self.schedule_exponent)?;
        positive("kmeans_tol", self.kmeans_tol)?;
        positive("channel_bound", self.channel_bound)?;
        self.privacy.validate(self.members)?;
        if !(self.global_batch_optimism.is_finite() && self.global_batch_optimism >= 0.0) {
            return Err(config(
                "global_batch_optimism",
                format!("must be finite and ≥ 0, got {}", self.global_batch_optimism),
            ));
        }
        if !(self.ucb_beta.is_finite() && self.ucb_beta >= 0.0) {
            return Err(config(
                "ucb_beta",
                format!("must be finite and ≥ 0, got {}", self.ucb_beta),
            ));
        }
        for (field, n) in [
            ("kmeans_max_iters", self.kmeans_max_iters),
            ("acq_candidates", self.acq_candidates),
            ("hyper_candidates", self.hyper_candidates),
            ("ts_candidates", self.ts_candidates),
            ("fit_starts", self.fit_starts),
            ("global_batch", self.global_batch),
        ] {
            if n < 1 {
                return Err(config(field, "must be at least 1"));
            }
        }
        if self.noise_prior != NoisePrior::None && self.lengthscale_prior == LengthscalePrior::None
        {
            return Err(config(
                "noise_prior",
                "a noise prior needs lengthscale_prior = \"dim-scaled\" (the MAP fit)",
            ));
        }
        if self.hyperparameters == HyperparameterMode::Fixed {
            for (field, v) in [
                ("lengthscale", self.lengthscale),
                ("signal_variance", self.signal_variance),
                ("noise_variance", self.noise_variance),
            ] {
                match v {
                    Some(v) => positive(field, v)?,
                    None => return Err(config(field, "required when hyperparameters = \"fixed\"")),
                }
            }
        }
        if self.global_trend == GlobalTrend::QuadraticSpaced
            && matches!(self.warping, Warping::SignedLog | Warping::Likelihood)
        {
            return Err(config(
                "global_trend",
                "quadratic-spaced keeps a trend between releases, which needs a warping \
                 linear inside its clip: set warping to \"auto\", \"clipped\" or \"none\"",
            ));
        }
        Ok(ValidParams(self.clone()))
    }
}

/// Settings that passed [`FboFedGpParams::validate`].
#[derive(Debug, Clone, PartialEq)]
pub struct ValidParams(FboFedGpParams);

impl std::ops::Deref for ValidParams {
    type Target = FboFedGpParams;
    fn deref(&self) -> &FboFedGpParams {
        &self.0
    }
}

impl ValidParams {
    /// The settings a [`LocalSteps::LoneDefaults`] step resolves as
    /// `independent-bo`: these with the lone agent's defaults for the model
    /// (its own MAP fit, warping, prior mean, acquisition and trust region).
    pub fn lone_defaults(&self) -> ValidParams {
        ValidParams(FboFedGpParams {
            hyperparameters: HyperparameterMode::FederatedMle,
            lengthscale: None,
            signal_variance: None,
            noise_variance: None,
            warping: Warping::Auto,
            prior_mean: PriorMean::Auto,
            acquisition: None,
            trust_region: None,
            ..self.0.clone()
        })
    }

    /// The acquisition function of `method`: the one set, else LogEI for a
    /// lone agent (BoTorch's default, and better than UCB with `β = 1` on
    /// CEC-2005 F1-F20 with standardised outputs and a constant mean:
    /// `docs/results/optimiser-2026-11-24`) and GP-UCB in a federation (the
    /// paper's Alg. 2, whose mixing schedule was tuned with it).
    pub fn acquisition_for(&self, method: Method) -> AcquisitionKind {
        match self.acquisition {
            Some(kind) => kind,
            None if method.is_plaintext() => AcquisitionKind::Ei,
            None => AcquisitionKind::Ucb,
        }
    }

    /// Whether the lone recipe's steps in `method` take a trust region: the
    /// setting, or by default for `independent-bo` only. With the lone
    /// default's alternating prior means, 100 lone agents per function on
    /// CEC-2005 F1-F20 were better with it on F2, F3, F4, F6, F11, F14 and
    /// F20 and worse on F1 (paired; `docs/results/optimiser-2026-11-29`,
    /// section 10), where with BIC's choice it had been neutral
    /// (`docs/results/optimiser-2026-11-28`, "Trust regions for the lone
    /// agent's steps"). A federation's local steps
    /// keep the whole cube unless it is set (the federation's measured
    /// recipe sets it).
    pub fn trust_region_for(&self, method: Method) -> bool {
        self.trust_region.unwrap_or(method == Method::IndependentBo)
    }

    /// The acquisition step every client of `method` uses.
    pub fn acquisition_step(&self, method: Method) -> AcquisitionStep {
        AcquisitionStep {
            kind: self.acquisition_for(method),
            ucb_beta: match self.ucb_beta_schedule {
                None => UcbBeta::Fixed(self.ucb_beta),
                Some(BetaSchedule::Kandasamy) => UcbBeta::Kandasamy,
                Some(BetaSchedule::Srinivas) => UcbBeta::Srinivas { delta: 0.1 },
            },
            optimizer: OptimizerConfig {
                n_candidates: self.acq_candidates,
                n_polish: self.acq_polish,
                max_iters: self.acq_iters,
                seed: 0,
                raw: match self.acq_raw {
                    AcqRaw::Uniform => RawSampling::Uniform,
                    AcqRaw::Sobol => RawSampling::Sobol,
                },
                restarts: match self.acq_restarts {
                    AcqRestarts::TopK => RestartSelection::TopK,
                    AcqRestarts::Boltzmann => RestartSelection::Boltzmann { eta: 1.0 },
                },
            },
            ts_candidates: self.ts_candidates,
        }
    }

    /// The local hyper-parameter fit: bounds for the unit cube and
    /// standardised outputs, the length-scale prior (MAP) if one is set, and
    /// `fit_starts` starts (the current values and random ones) of `fit_iters`
    /// L-BFGS iterations. Its bounds also span the federation's candidates.
    pub fn fit_config(&self, dim: usize) -> FitConfig {
        let (lengthscale, mut prior) = match self.lengthscale_prior {
            LengthscalePrior::None => ((0.02, 20.0), None),
            LengthscalePrior::DimScaled => ((1e-2, 1e2), Some(HyperPrior::dim_scaled(dim))),
        };
        // `validate` refuses a noise prior without the length-scale prior.
        if let (NoisePrior::LogNormal, Some(p)) = (self.noise_prior, prior.as_mut()) {
            p.noise_variance = Some(LogNormalPrior {
                loc: -4.0,
                scale: 1.0,
            });
        }
        FitConfig {
            bounds: HyperBounds {
                lengthscale,
                signal_variance: if self.fit_signal_variance {
                    (0.05, 20.0)
                } else {
                    (1.0, 1.0)
                },
                noise_variance: (1e-4, 1.0),
            },
            prior,
            n_starts: self.fit_starts,
            max_iters: self.fit_iters,
            seed: 0,
        }
    }

    /// The public cap on one client's data, `|D_i| + T`.
    pub fn max_points(&self) -> f64 {
        (self.initial_points + self.rounds) as f64
    }

    /// The concrete support selection: [`SupportSelection::Auto`] resolved
    /// (public when the set grows, secure k-means otherwise).
    pub fn support_selection_resolved(&self) -> SupportSelection {
        match (self.support_selection, self.support_growth) {
            (SupportSelection::Auto, Some(_)) => SupportSelection::Public,
            (SupportSelection::Auto, None) => SupportSelection::SecureKmeans,
            (explicit, _) => explicit,
        }
    }

    /// The support size at round `t` (`t = 0` before the loop).
    pub fn support_size_at(&self, t: usize) -> usize {
        match self.support_growth {
            None => self.support_size,
            Some(g) => self.support_size + g.step * (t / g.every),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Settings that name only the members and rounds take every other
    /// setting's default: the paper's protocol (§5.1) otherwise.
    #[test]
    fn members_and_rounds_are_all_a_config_must_name() {
        let parsed: FboFedGpParams =
            serde_json::from_str(r#"{"members": 3, "rounds": 7}"#).expect("defaults fill the rest");
        assert_eq!(
            parsed,
            FboFedGpParams {
                members: 3,
                rounds: 7,
                ..FboFedGpParams::paper_defaults()
            }
        );
        assert_eq!((parsed.initial_points, parsed.support_size), (4, 16));
    }

    /// `recipe = "private"` resolves to the private recipe for the settings'
    /// own members and rounds, each other setting given replacing the
    /// recipe's; `"paper"` is the paper's defaults; anything else, or a
    /// private recipe without its counts, is refused naming the field.
    #[test]
    fn a_named_recipe_is_the_private_recipe_or_the_papers() {
        let resolve = |json: &str| -> Result<FboFedGpParams, AlgorithmError> {
            let map = serde_json::from_str(json).unwrap();
            let settings = FboFedGpParams::resolve_recipe(map)?;
            Ok(serde_json::from_value(serde_json::Value::Object(settings)).unwrap())
        };
        assert_eq!(
            resolve(r#"{"recipe": "private", "members": 3, "rounds": 7}"#).unwrap(),
            FboFedGpParams::private_recipe(3, 7, PRIVATE_RECIPE_EPSILON)
        );
        assert_eq!(
            resolve(
                r#"{"recipe": "private", "members": 3, "rounds": 7, "support_size": 8,
                    "privacy": {"mode": "dp", "epsilon": 1.0}}"#
            )
            .unwrap(),
            FboFedGpParams {
                support_size: 8,
                ..FboFedGpParams::private_recipe(3, 7, 1.0)
            }
        );
        assert_eq!(
            resolve(r#"{"recipe": "paper", "members": 3, "rounds": 7}"#).unwrap(),
            FboFedGpParams {
                members: 3,
                rounds: 7,
                ..FboFedGpParams::paper_defaults()
            }
        );
        for (json, field) in [
            (
                r#"{"recipe": "privat", "members": 3, "rounds": 7}"#,
                "recipe",
            ),
            (r#"{"recipe": 1, "members": 3, "rounds": 7}"#, "recipe"),
            (r#"{"recipe": "private", "rounds": 7}"#, "members"),
            (
                r#"{"recipe": "private", "members": 3, "rounds": -1}"#,
                "rounds",
            ),
        ] {
            let e = resolve(json).unwrap_err().to_string();
            assert!(e.contains(field), "{json}: {e}");
        }
    }

    #[test]
    fn bad_settings_name_their_field() {
        type Mutation = Box<dyn Fn(&mut FboFedGpParams)>;
        let cases: Vec<(&str, Mutation)> = vec![
            ("members", Box::new(|p| p.members = 1)),
            ("support_size", Box::new(|p| p.support_size = 0)),
            ("rounds", Box::new(|p| p.rounds = 0)),
            ("global_batch", Box::new(|p| p.global_batch = 0)),
            (
                "global_batch_optimism",
                Box::new(|p| p.global_batch_optimism = -1.0),
            ),
            (
                "schedule_exponent",
                Box::new(|p| p.schedule_exponent = f64::NAN),
            ),
            (
                "lengthscale",
                Box::new(|p| p.hyperparameters = HyperparameterMode::Fixed),
            ),
            ("ucb_beta", Box::new(|p| p.ucb_beta = -0.5)),
            ("fit_starts", Box::new(|p| p.fit_starts = 0)),
            (
                "noise_prior",
                Box::new(|p| {
                    p.noise_prior = NoisePrior::LogNormal;
                    p.lengthscale_prior = LengthscalePrior::None;
                }),
            ),
        ];
        for (field, mutate) in cases {
            let mut p = FboFedGpParams::paper_defaults();
            mutate(&mut p);
            let err = p.validate().unwrap_err().to_string();
            assert!(err.contains(field), "{field}: {err}");
        }
        assert!(FboFedGpParams::paper_defaults().validate().is_ok());
    }

    #[test]
    fn support_grows_by_step_every_k_rounds() {
        let mut p = FboFedGpParams::paper_defaults();
        p.support_size = 8;
        p.support_growth = Some(SupportGrowth { step: 4, every: 7 });
        let v = p.validate().unwrap();
        assert_eq!(v.support_size_at(0), 8);
        assert_eq!(v.support_size_at(6), 8);
        assert_eq!(v.support_size_at(7), 12);
        assert_eq!(v.support_size_at(14), 16);
    }
}
