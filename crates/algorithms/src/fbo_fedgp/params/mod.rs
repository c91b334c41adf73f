//! Settings of an FBO-FedGP run: params → validated params (linfa style).
//! The params are the federation's own settings and five groups
//! ([`groups`]: support, acquisition, model, hyper-parameters, steps),
//! written flat in a config file; [`FboFedGpParams::validate`] checks them
//! all and gives the [`ValidParams`] every run takes.

use crate::error::config;
use crate::surrogate::{AcquisitionKind, AcquisitionStep, UcbBeta};
use crate::AlgorithmError;
use fedhe_bo::optim::{OptimizerConfig, RawSampling, RestartSelection};
use fedhe_gp::exact::MeanFunction;
use fedhe_gp::hyperfit::{FitConfig, HyperBounds, HyperPrior, LogNormalPrior};
use fedhe_tasks::Task;
use serde::{Deserialize, Serialize};

use super::model::Warping;

pub mod groups;
mod settings;

pub use groups::{
    AcquisitionParams, HyperParams, ModelParams, StepParams, SupportParams,
    DEFAULT_CATEGORICAL_LENGTHSCALE,
};
pub use settings::*;

fn default_initial_points() -> usize {
    4
}
fn default_channel_bound() -> f64 {
    1024.0
}

/// The settings of an FBO-FedGP federation: the federation's own (members,
/// rounds, initial design, channel bound, privacy) and five groups. A
/// config file writes them flat, each group's settings by their own names
/// (see [`SupportParams`] and the other groups); a name no group has is
/// refused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Written")]
pub struct FboFedGpParams {
    /// Number of clients `M` (at least 2).
    pub members: usize,
    /// Rounds `T`; each client evaluates one point per round.
    pub rounds: usize,
    /// Initial points per client `|D_i|` (default 4, the paper's §5.1).
    pub initial_points: usize,
    /// Where the initial points come from.
    pub initial_design: InitialDesign,
    /// The shared support set.
    #[serde(flatten)]
    pub support: SupportParams,
    /// The acquisition step.
    #[serde(flatten)]
    pub acquisition: AcquisitionParams,
    /// The model.
    #[serde(flatten)]
    pub model: ModelParams,
    /// The kernel hyper-parameters.
    #[serde(flatten)]
    pub hypers: HyperParams,
    /// The mixing of local and global steps.
    #[serde(flatten)]
    pub steps: StepParams,
    /// The bound every contribution must respect (the channel's codec bound).
    pub channel_bound: f64,
    /// Output privacy: `{ mode = "noise-free" }` (releases exact sums; the
    /// default, labelled so) or `{ mode = "dp", epsilon, delta, .. }`, every
    /// release with distributed discrete Gaussian noise within the budget
    /// (`crate::privacy`; what a private federation releases:
    /// `fbo_fedgp::private`).
    pub privacy: crate::privacy::Privacy,
}

/// [`FboFedGpParams`] as a config file writes it: the federation's own
/// settings with their defaults, every group's flat, and the names no group
/// took, refused by [`TryFrom`] (serde's `deny_unknown_fields` does not
/// combine with `flatten`).
#[derive(Deserialize)]
struct Written {
    members: usize,
    rounds: usize,
    #[serde(default = "default_initial_points")]
    initial_points: usize,
    #[serde(default)]
    initial_design: InitialDesign,
    #[serde(flatten)]
    support: SupportParams,
    #[serde(flatten)]
    acquisition: AcquisitionParams,
    #[serde(flatten)]
    model: ModelParams,
    #[serde(flatten)]
    hypers: HyperParams,
    #[serde(flatten)]
    steps: StepParams,
    #[serde(default = "default_channel_bound")]
    channel_bound: f64,
    #[serde(default)]
    privacy: crate::privacy::Privacy,
    /// Every name no field or group took.
    #[serde(flatten)]
    unknown: std::collections::BTreeMap<String, serde::de::IgnoredAny>,
}

impl TryFrom<Written> for FboFedGpParams {
    type Error = String;

    fn try_from(w: Written) -> Result<Self, String> {
        if let Some(name) = w.unknown.keys().next() {
            return Err(format!(
                "unknown field {}",
                fedhe_crypto::text::quote(name, 40)
            ));
        }
        Ok(Self {
            members: w.members,
            rounds: w.rounds,
            initial_points: w.initial_points,
            initial_design: w.initial_design,
            support: w.support,
            acquisition: w.acquisition,
            model: w.model,
            hypers: w.hypers,
            steps: w.steps,
            channel_bound: w.channel_bound,
            privacy: w.privacy,
        })
    }
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
            initial_design: InitialDesign::default(),
            support: SupportParams::default(),
            acquisition: AcquisitionParams::default(),
            model: ModelParams::default(),
            hypers: HyperParams::default(),
            steps: StepParams::default(),
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
    /// `docs/results/privacy-2026-12-07`), with a categorical's one-hot
    /// coordinates held, as everywhere, at
    /// [`DEFAULT_CATEGORICAL_LENGTHSCALE`] in the global model and in the
    /// members' own fits, made
    /// private at `epsilon` per member by [`FboFedGpParams::private`].
    pub fn private_recipe(members: usize, rounds: usize, epsilon: f64) -> Self {
        let paper = Self::paper_defaults();
        Self {
            members,
            rounds,
            support: SupportParams {
                growth: Some(SupportGrowth { step: 4, every: 1 }),
                ..paper.support
            },
            steps: StepParams {
                global: GlobalSteps::Shared,
                global_batch: members.max(1),
                schedule_exponent: 2.0,
                local: LocalSteps::LoneDefaults,
                ..paper.steps
            },
            hypers: HyperParams {
                lengthscale: Some(0.25),
                signal_variance: Some(4.0),
                ..paper.hypers
            },
            ..paper
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
            hypers: HyperParams {
                mode: HyperparameterMode::Fixed,
                lengthscale: Some(self.hypers.lengthscale.unwrap_or(1.0)),
                signal_variance: Some(self.hypers.signal_variance.unwrap_or(1.0)),
                noise_variance: Some(self.hypers.noise_variance.unwrap_or(1e-2)),
                ..self.hypers
            },
            support: SupportParams {
                selection: SupportSelection::Public,
                ..self.support
            },
            model: ModelParams {
                warping: Warping::SignedLog,
                prior_mean: PriorMean::Zero,
                global_trend: GlobalTrend::None,
                ..self.model
            },
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
        if self.support.size < 1 {
            return Err(config("support_size", "|S| must be at least 1"));
        }
        if let Some(g) = self.support.growth {
            if g.step < 1 || g.every < 1 {
                return Err(config(
                    "support_growth",
                    "step and every must be at least 1",
                ));
            }
        }
        positive("schedule_exponent", self.steps.schedule_exponent)?;
        positive("kmeans_tol", self.support.kmeans_tol)?;
        positive("channel_bound", self.channel_bound)?;
        self.privacy.validate(self.members)?;
        if !(self.steps.global_batch_optimism.is_finite()
            && self.steps.global_batch_optimism >= 0.0)
        {
            return Err(config(
                "global_batch_optimism",
                format!(
                    "must be finite and ≥ 0, got {}",
                    self.steps.global_batch_optimism
                ),
            ));
        }
        if !(self.acquisition.ucb_beta.is_finite() && self.acquisition.ucb_beta >= 0.0) {
            return Err(config(
                "ucb_beta",
                format!("must be finite and ≥ 0, got {}", self.acquisition.ucb_beta),
            ));
        }
        for (field, n) in [
            ("kmeans_max_iters", self.support.kmeans_max_iters),
            ("acq_candidates", self.acquisition.candidates),
            ("hyper_candidates", self.hypers.candidates),
            ("ts_candidates", self.acquisition.ts_candidates),
            ("fit_starts", self.hypers.fit_starts),
            ("global_batch", self.steps.global_batch),
        ] {
            if n < 1 {
                return Err(config(field, "must be at least 1"));
            }
        }
        if self.hypers.noise_prior != NoisePrior::None
            && self.hypers.lengthscale_prior == LengthscalePrior::None
        {
            return Err(config(
                "noise_prior",
                "a noise prior needs lengthscale_prior = \"dim-scaled\" (the MAP fit)",
            ));
        }
        if self.hypers.mode == HyperparameterMode::Fixed {
            for (field, v) in [
                ("lengthscale", self.hypers.lengthscale),
                ("signal_variance", self.hypers.signal_variance),
                ("noise_variance", self.hypers.noise_variance),
            ] {
                match v {
                    Some(v) => positive(field, v)?,
                    None => return Err(config(field, "required when hyperparameters = \"fixed\"")),
                }
            }
        }
        if let Some(l) = self.hypers.categorical_lengthscale {
            positive("categorical_lengthscale", l)?;
        }
        if self.model.global_trend == GlobalTrend::QuadraticSpaced
            && matches!(self.model.warping, Warping::SignedLog | Warping::Likelihood)
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
        let p = self.0.clone();
        ValidParams(FboFedGpParams {
            hypers: HyperParams {
                mode: HyperparameterMode::FederatedMle,
                lengthscale: None,
                signal_variance: None,
                noise_variance: None,
                ..p.hypers
            },
            model: ModelParams {
                warping: Warping::Auto,
                prior_mean: PriorMean::Auto,
                ..p.model
            },
            acquisition: AcquisitionParams {
                kind: None,
                trust_region: None,
                ..p.acquisition
            },
            ..p
        })
    }

    /// The acquisition function of `method`: the one set, else LogEI for a
    /// lone agent (BoTorch's default, and better than UCB with `β = 1` on
    /// CEC-2005 F1-F20 with standardised outputs and a constant mean:
    /// `docs/results/optimiser-2026-11-24`) and GP-UCB in a federation (the
    /// paper's Alg. 2, whose mixing schedule was tuned with it).
    pub fn acquisition_for(&self, method: Method) -> AcquisitionKind {
        match self.acquisition.kind {
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
        self.acquisition
            .trust_region
            .unwrap_or(method == Method::IndependentBo)
    }

    /// The acquisition step every client of `method` uses.
    pub fn acquisition_step(&self, method: Method) -> AcquisitionStep {
        AcquisitionStep {
            kind: self.acquisition_for(method),
            ucb_beta: match self.acquisition.ucb_beta_schedule {
                None => UcbBeta::Fixed(self.acquisition.ucb_beta),
                Some(BetaSchedule::Kandasamy) => UcbBeta::Kandasamy,
                Some(BetaSchedule::Srinivas) => UcbBeta::Srinivas { delta: 0.1 },
            },
            optimizer: OptimizerConfig {
                n_candidates: self.acquisition.candidates,
                n_polish: self.acquisition.polish,
                max_iters: self.acquisition.iters,
                seed: 0,
                raw: match self.acquisition.raw {
                    AcqRaw::Uniform => RawSampling::Uniform,
                    AcqRaw::Sobol => RawSampling::Sobol,
                },
                restarts: match self.acquisition.restarts {
                    AcqRestarts::TopK => RestartSelection::TopK,
                    AcqRestarts::Boltzmann => RestartSelection::Boltzmann { eta: 1.0 },
                },
            },
            ts_candidates: self.acquisition.ts_candidates,
        }
    }

    /// The local hyper-parameter fit: bounds for the unit cube and
    /// standardised outputs, the length-scale prior (MAP) if one is set, and
    /// `fit_starts` starts (the current values and random ones) of `fit_iters`
    /// L-BFGS iterations. Its bounds also span the federation's candidates.
    pub fn fit_config(&self, task: &Task) -> FitConfig {
        let held = self.held_lengthscales(task);
        // The prior's `D` counts the coordinates the fit learns: a held
        // categorical's one-hot coordinates are not among them. On CoCaBO's
        // Func2C and Func3C, 200 lone agents each, `D` = 2 (the floats)
        // against 10 and 14 (every coordinate): median best −0.0292 →
        // −0.0730 and 0.0071 → −0.0409, the negative region found 117
        // against 109 and 104 against 87 times
        // (`docs/results/mixed-2026-12-07c`). A box holds none.
        let dim = task.dim().saturating_sub(held.len()).max(1);
        let (lengthscale, mut prior) = match self.hypers.lengthscale_prior {
            LengthscalePrior::None => ((0.02, 20.0), None),
            LengthscalePrior::DimScaled => ((1e-2, 1e2), Some(HyperPrior::dim_scaled(dim))),
        };
        // `validate` refuses a noise prior without the length-scale prior.
        if let (NoisePrior::LogNormal, Some(p)) = (self.hypers.noise_prior, prior.as_mut()) {
            p.noise_variance = Some(LogNormalPrior {
                loc: -4.0,
                scale: 1.0,
            });
        }
        FitConfig {
            bounds: HyperBounds {
                lengthscale,
                signal_variance: if self.hypers.fit_signal_variance {
                    (0.05, 20.0)
                } else {
                    (1.0, 1.0)
                },
                noise_variance: (1e-4, 1.0),
            },
            prior,
            n_starts: self.hypers.fit_starts,
            max_iters: self.hypers.fit_iters,
            seed: 0,
            held,
        }
    }

    /// The length-scale a categorical's one-hot coordinates are held at:
    /// `categorical_lengthscale`, or [`DEFAULT_CATEGORICAL_LENGTHSCALE`]
    /// when it is unset.
    pub fn categorical_lengthscale(&self) -> f64 {
        self.hypers
            .categorical_lengthscale
            .unwrap_or(DEFAULT_CATEGORICAL_LENGTHSCALE)
    }

    /// The length-scales held on `task`: each of a categorical's one-hot
    /// coordinates at [`ValidParams::categorical_lengthscale`] (none when
    /// the task has no typed space or no categorical).
    pub fn held_lengthscales(&self, task: &Task) -> Vec<(usize, f64)> {
        let l = self.categorical_lengthscale();
        match task.space() {
            Some(space) => space
                .one_hot()
                .into_iter()
                .enumerate()
                .filter(|(_, one_hot)| *one_hot)
                .map(|(d, _)| (d, l))
                .collect(),
            None => Vec::new(),
        }
    }

    /// The public cap on one client's data, `|D_i| + T`.
    pub fn max_points(&self) -> f64 {
        (self.initial_points + self.rounds) as f64
    }

    /// The concrete support selection: [`SupportSelection::Auto`] resolved
    /// (public when the set grows, secure k-means otherwise).
    pub fn support_selection_resolved(&self) -> SupportSelection {
        match (self.support.selection, self.support.growth) {
            (SupportSelection::Auto, Some(_)) => SupportSelection::Public,
            (SupportSelection::Auto, None) => SupportSelection::SecureKmeans,
            (explicit, _) => explicit,
        }
    }

    /// The support size at round `t` (`t = 0` before the loop).
    pub fn support_size_at(&self, t: usize) -> usize {
        match self.support.growth {
            None => self.support.size,
            Some(g) => self.support.size + g.step * (t / g.every),
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
        assert_eq!((parsed.initial_points, parsed.support.size), (4, 16));
    }

    /// The groups are written flat: every group's setting by its own name
    /// at the top level (the names a config file has always used), read
    /// back into the same groups; a name no group has — a typo of a group's
    /// setting, or a group's Rust field name — is refused naming it, as
    /// `deny_unknown_fields` did before the groups.
    #[test]
    fn the_groups_are_written_flat_and_an_unknown_name_is_refused() {
        let mut every = FboFedGpParams::private_recipe(3, 7, 2.0);
        every.acquisition.kind = Some(AcquisitionKind::Ei);
        every.acquisition.trust_region = Some(true);
        let written = serde_json::to_value(&every).unwrap();
        let map = written.as_object().unwrap();
        for (name, value) in [
            ("support_size", serde_json::json!(16)),
            ("support_growth", serde_json::json!({"step": 4, "every": 1})),
            ("support_selection", serde_json::json!("public")),
            ("acquisition", serde_json::json!("ei")),
            ("acq_candidates", serde_json::json!(1000)),
            ("trust_region", serde_json::json!(true)),
            ("warping", serde_json::json!("signed-log")),
            ("hyperparameters", serde_json::json!("fixed")),
            ("lengthscale", serde_json::json!(0.25)),
            ("hyper_candidates", serde_json::json!(128)),
            ("local_steps", serde_json::json!("lone-defaults")),
            ("global_steps", serde_json::json!("shared")),
            ("global_batch", serde_json::json!(3)),
        ] {
            assert_eq!(map.get(name), Some(&value), "{name}");
        }
        for group in ["support", "model", "hypers", "steps"] {
            assert!(!map.contains_key(group), "{group} is written flat");
        }
        let back: FboFedGpParams = serde_json::from_value(written.clone()).unwrap();
        assert_eq!(back, every);
        for (name, value) in [
            ("acq_candidate", serde_json::json!(10)),
            ("candidates", serde_json::json!(10)),
            ("support", serde_json::json!({"size": 3})),
            ("size", serde_json::json!(3)),
        ] {
            let mut bad = map.clone();
            bad.insert(name.to_string(), value);
            let e = serde_json::from_value::<FboFedGpParams>(serde_json::Value::Object(bad))
                .unwrap_err()
                .to_string();
            assert!(e.contains(&format!("unknown field \"{name}\"")), "{e}");
        }
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
            {
                let mut p = FboFedGpParams::private_recipe(3, 7, 1.0);
                p.support.size = 8;
                p
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
            ("support_size", Box::new(|p| p.support.size = 0)),
            ("rounds", Box::new(|p| p.rounds = 0)),
            ("global_batch", Box::new(|p| p.steps.global_batch = 0)),
            (
                "global_batch_optimism",
                Box::new(|p| p.steps.global_batch_optimism = -1.0),
            ),
            (
                "schedule_exponent",
                Box::new(|p| p.steps.schedule_exponent = f64::NAN),
            ),
            (
                "lengthscale",
                Box::new(|p| p.hypers.mode = HyperparameterMode::Fixed),
            ),
            ("ucb_beta", Box::new(|p| p.acquisition.ucb_beta = -0.5)),
            (
                "categorical_lengthscale",
                Box::new(|p| {
                    p.hypers.mode = HyperparameterMode::Fixed;
                    p.hypers.lengthscale = Some(0.25);
                    p.hypers.signal_variance = Some(1.0);
                    p.hypers.noise_variance = Some(0.01);
                    p.hypers.categorical_lengthscale = Some(f64::NAN);
                }),
            ),
            ("fit_starts", Box::new(|p| p.hypers.fit_starts = 0)),
            (
                "noise_prior",
                Box::new(|p| {
                    p.hypers.noise_prior = NoisePrior::LogNormal;
                    p.hypers.lengthscale_prior = LengthscalePrior::None;
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
        p.support.size = 8;
        p.support.growth = Some(SupportGrowth { step: 4, every: 7 });
        let v = p.validate().unwrap();
        assert_eq!(v.support_size_at(0), 8);
        assert_eq!(v.support_size_at(6), 8);
        assert_eq!(v.support_size_at(7), 12);
        assert_eq!(v.support_size_at(14), 16);
    }
}
