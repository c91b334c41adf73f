//! The groups of [`FboFedGpParams`](super::FboFedGpParams): the support
//! set, the acquisition step, the model, its hyper-parameters and the
//! mixing of local and global steps. A config file writes every group's
//! settings flat, by the names given here (`support_size`,
//! `acq_candidates`, …); each group's defaults are the paper's protocol
//! (§5.1) with fedhe's MAP fit.

use super::*;

fn default_support_size() -> usize {
    16
}
fn default_kmeans_tol() -> f64 {
    1e-3
}
fn default_kmeans_max_iters() -> usize {
    20
}
fn default_ucb_beta() -> f64 {
    1.0
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
fn default_warping() -> Warping {
    Warping::Auto
}
fn default_refit_every() -> usize {
    5
}
fn default_hyper_candidates() -> usize {
    128
}
fn default_fit_starts() -> usize {
    4
}
fn default_fit_iters() -> u64 {
    50
}
fn default_true() -> bool {
    true
}
fn default_schedule_exponent() -> f64 {
    0.5
}
fn default_global_batch() -> usize {
    10
}

/// The shared support set `Z` (Alg. 1): its size, growth and selection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SupportParams {
    /// `support_size`: `|S|` (the starting size when it grows; default 16,
    /// the paper's §5.1).
    #[serde(rename = "support_size", default = "default_support_size")]
    pub size: usize,
    /// `support_growth`: optional growth of `|S|`.
    #[serde(rename = "support_growth", default)]
    pub growth: Option<SupportGrowth>,
    /// `support_selection`: how `Z` is chosen.
    #[serde(rename = "support_selection", default)]
    pub selection: SupportSelection,
    /// k-means tolerance on the largest centre move (unit cube).
    #[serde(default = "default_kmeans_tol")]
    pub kmeans_tol: f64,
    /// k-means iteration cap.
    #[serde(default = "default_kmeans_max_iters")]
    pub kmeans_max_iters: usize,
}

impl Default for SupportParams {
    fn default() -> Self {
        Self {
            size: default_support_size(),
            growth: None,
            selection: SupportSelection::default(),
            kmeans_tol: default_kmeans_tol(),
            kmeans_max_iters: default_kmeans_max_iters(),
        }
    }
}

/// The acquisition step: the function and how it is maximised.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AcquisitionParams {
    /// `acquisition`: `"ucb"` (with `ucb_beta` or `ucb_beta_schedule`),
    /// `"ei"` (maximised as LogEI, Ament et al. 2023), `"pi"` or `"ts"`.
    /// Unset: the method's default (see [`ValidParams::acquisition_for`]).
    #[serde(
        rename = "acquisition",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub kind: Option<AcquisitionKind>,
    /// The fixed UCB `β` (default 1; see [`crate::surrogate::UcbBeta`]).
    #[serde(default = "default_ucb_beta")]
    pub ucb_beta: f64,
    /// A growing `β_t` instead: `"kandasamy"` or `"srinivas"` (δ = 0.1).
    #[serde(default)]
    pub ucb_beta_schedule: Option<BetaSchedule>,
    /// `acq_candidates`: random candidates of the acquisition optimiser.
    #[serde(rename = "acq_candidates", default = "default_acq_candidates")]
    pub candidates: usize,
    /// `acq_polish`: candidates polished by L-BFGS.
    #[serde(rename = "acq_polish", default = "default_acq_polish")]
    pub polish: usize,
    /// `acq_iters`: L-BFGS iterations per polish.
    #[serde(rename = "acq_iters", default = "default_acq_iters")]
    pub iters: u64,
    /// `acq_raw`: how the optimiser draws its raw candidates.
    #[serde(rename = "acq_raw", default)]
    pub raw: AcqRaw,
    /// `acq_restarts`: which raw candidates the optimiser polishes.
    #[serde(rename = "acq_restarts", default)]
    pub restarts: AcqRestarts,
    /// Candidates of a Thompson sample.
    #[serde(default = "default_ts_candidates")]
    pub ts_candidates: usize,
    /// Whether a lone agent's steps (`independent-bo`, and a federation's
    /// local steps with `local_steps = "lone"`) maximise the acquisition in
    /// a trust region around the agent's best point rather than the whole
    /// cube (TuRBO-1, Eriksson et al. 2019; `fedhe_bo::trust_region`). A
    /// categorical's choice is searched whole, inside the region or not: on
    /// CoCaBO's Func2C, 200 lone agents found the negative region in 80
    /// cases against 48 with the choice boxed too (paired Wilcoxon
    /// p = 0.0001; `docs/results/mixed-2026-12-07b`).
    /// Unset: the method's default ([`ValidParams::trust_region_for`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust_region: Option<bool>,
}

impl Default for AcquisitionParams {
    fn default() -> Self {
        Self {
            kind: None,
            ucb_beta: default_ucb_beta(),
            ucb_beta_schedule: None,
            candidates: default_acq_candidates(),
            polish: default_acq_polish(),
            iters: default_acq_iters(),
            raw: AcqRaw::default(),
            restarts: AcqRestarts::default(),
            ts_candidates: default_ts_candidates(),
            trust_region: None,
        }
    }
}

/// The model: kernel family, output warping and scaling, prior mean and
/// trend.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelParams {
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
    /// The output standardisation of a local step's GP (with `local_steps =
    /// "federated"`; a lone local step standardises by its own data).
    #[serde(default)]
    pub local_scaling: LocalScaling,
    /// The prior mean of the GP (see [`PriorMean`]; `"auto"` by default).
    #[serde(default)]
    pub prior_mean: PriorMean,
    /// The trend the global posterior is fitted around (see
    /// [`GlobalTrend`]; default none).
    #[serde(default)]
    pub global_trend: GlobalTrend,
}

impl Default for ModelParams {
    fn default() -> Self {
        Self {
            kernel: KernelKind::default(),
            warping: default_warping(),
            local_scaling: LocalScaling::default(),
            prior_mean: PriorMean::default(),
            global_trend: GlobalTrend::default(),
        }
    }
}

/// The length-scale a categorical's one-hot coordinates are held at when
/// `categorical_lengthscale` is unset, in every model: fixed, a lone
/// agent's MAP fit, a federation's public candidates. Two choices of one
/// categorical are `√2` apart, so at 3 a model holds what one choice
/// teaches as most of what it expects of the others (correlation 0.83
/// under Matérn 5/2). A fit cannot learn these from a few dozen points: a
/// choice never tried never moves its coordinate, and the fitted
/// length-scales of the tried ones ran to 10–28 on Func2C, so that the
/// model held the choices for one. On CoCaBO's Func2C and Func3C, 200 lone
/// agents each, held at 3 against fitted: median best 0.0033 → −0.0292 and
/// 0.0241 → 0.0071; the private recipe's 200 members 0.0012 → −0.0341 and
/// 0.0263 → 0.0123; the noise-free defaults' (20 seeds on Func2C) 0.0082 →
/// −0.0165 (paired Wilcoxon, better on each at p < 0.05;
/// `docs/results/mixed-2026-12-07b`).
pub const DEFAULT_CATEGORICAL_LENGTHSCALE: f64 = 3.0;

/// The kernel hyper-parameters: fixed or fitted, and how they are fitted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HyperParams {
    /// `hyperparameters`: how they are set.
    #[serde(rename = "hyperparameters", default)]
    pub mode: HyperparameterMode,
    /// Fixed length-scale (all dimensions, unit cube), for
    /// `hyperparameters = "fixed"`.
    #[serde(default)]
    pub lengthscale: Option<f64>,
    /// The length-scale of a categorical's one-hot coordinates, held there:
    /// fixed hyper-parameters take it, and a fit (a lone agent's MAP fit, a
    /// federation's public candidates) leaves those coordinates at it and
    /// fits the others. Unset: [`DEFAULT_CATEGORICAL_LENGTHSCALE`]; no
    /// setting fits them, since no fit measured could.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub categorical_lengthscale: Option<f64>,
    /// Fixed signal variance (standardised outputs).
    #[serde(default)]
    pub signal_variance: Option<f64>,
    /// Fixed noise variance (standardised outputs).
    #[serde(default)]
    pub noise_variance: Option<f64>,
    /// Rounds between hyper-parameter refits (0: fit once at the start).
    #[serde(default = "default_refit_every")]
    pub refit_every: usize,
    /// `hyper_likelihood`: the likelihood a federation scores its
    /// candidates by.
    #[serde(rename = "hyper_likelihood", default)]
    pub likelihood: HyperLikelihood,
    /// `hyper_candidates`: public candidates scored by the federated
    /// likelihood at each refit.
    #[serde(rename = "hyper_candidates", default = "default_hyper_candidates")]
    pub candidates: usize,
    /// The length-scale prior of the fit.
    #[serde(default)]
    pub lengthscale_prior: LengthscalePrior,
    /// The prior on the noise variance of the fit.
    #[serde(default)]
    pub noise_prior: NoisePrior,
    /// Starts of a lone agent's multi-start L-BFGS fit.
    #[serde(default = "default_fit_starts")]
    pub fit_starts: usize,
    /// L-BFGS iterations per start of that fit.
    #[serde(default = "default_fit_iters")]
    pub fit_iters: u64,
    /// Where a lone agent's fit starts (see [`FitStart`]).
    #[serde(default)]
    pub fit_start: FitStart,
    /// Whether the signal variance `σ_f²` is fitted (in (0.05, 20), the
    /// default) or fixed at 1 on the standardised outputs (`false`, as
    /// BoTorch's `SingleTaskGP`, which has no `ScaleKernel` since 0.12).
    #[serde(default = "default_true")]
    pub fit_signal_variance: bool,
}

impl Default for HyperParams {
    fn default() -> Self {
        Self {
            mode: HyperparameterMode::default(),
            lengthscale: None,
            categorical_lengthscale: None,
            signal_variance: None,
            noise_variance: None,
            refit_every: default_refit_every(),
            likelihood: HyperLikelihood::default(),
            candidates: default_hyper_candidates(),
            lengthscale_prior: LengthscalePrior::default(),
            noise_prior: NoisePrior::default(),
            fit_starts: default_fit_starts(),
            fit_iters: default_fit_iters(),
            fit_start: FitStart::default(),
            fit_signal_variance: true,
        }
    }
}

/// The steps (Alg. 2): the mixing schedule of local and global steps and
/// how each kind chooses its points.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepParams {
    /// The mixing schedule `p_t = 1 − t^(−c)`; `c` (Table 4: 0.25, 0.5,
    /// 0.75, 1).
    #[serde(default = "default_schedule_exponent")]
    pub schedule_exponent: f64,
    /// `local_steps`: how local steps choose their points (see
    /// [`LocalSteps`]).
    #[serde(rename = "local_steps", default)]
    pub local: LocalSteps,
    /// `global_steps`: how global steps choose their points (see
    /// [`GlobalSteps`]).
    #[serde(rename = "global_steps", default)]
    pub global: GlobalSteps,
    /// The size of the penalised batch of global steps (at least 1).
    #[serde(default = "default_global_batch")]
    pub global_batch: usize,
    /// The `κ` of the maximum `M = max (μ + κσ)` against which the penalised
    /// batch's balls are measured (0, the default: the paper's `M`; see
    /// `fedhe_bo::penalty::lipschitz_and_max`).
    #[serde(default)]
    pub global_batch_optimism: f64,
}

impl Default for StepParams {
    fn default() -> Self {
        Self {
            schedule_exponent: default_schedule_exponent(),
            local: LocalSteps::default(),
            global: GlobalSteps::default(),
            global_batch: default_global_batch(),
            global_batch_optimism: 0.0,
        }
    }
}
