//! The settings' kinds: each choice of FBO-FedGP's recipe (the method,
//! support selection, kernel, hyper-parameters, prior mean, trend, steps…),
//! documented where it is defined; their defaults are `FboFedGpParams`'s.

use super::*;

/// The methods the simulator runs, named as in `results.json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// FBO-FedGP as configured (Alg. 2).
    #[serde(rename = "fbo-fedgp")]
    FboFedGp,
    /// Ablation: local steps only (`p_t = 1`); support, scaling and
    /// hyper-parameters are still federated.
    LocalOnly,
    /// Ablation: global steps only (`p_t = 0`).
    GlobalOnly,
    /// Ablation: the support set uniform at random in the domain.
    RandomSupport,
    /// Baseline: every client runs BO on its own data, no federation.
    IndependentBo,
    /// Baseline: uniform random points.
    RandomSearch,
    /// Upper reference without privacy: one exact GP on every member's data
    /// pooled in one place, fitted as a lone agent fits its own (the same
    /// recipe and settings), and each round a batch of one point per member
    /// by local penalisation. A simulation reference only: it never runs as
    /// a study.
    PooledBo,
}

impl Method {
    /// Whether it works on plaintext data without the channel: each client
    /// alone on its own data (`independent-bo`, `random-search`) or every
    /// client's data in one place (`pooled-bo`). Nothing it computes goes
    /// through the channel, so the `"auto"` settings resolve to the lone
    /// agent's recipe.
    pub fn is_plaintext(self) -> bool {
        matches!(
            self,
            Method::IndependentBo | Method::RandomSearch | Method::PooledBo
        )
    }
}

impl Method {
    /// Whether it aggregates through the channel (the plaintext baselines
    /// never do).
    pub fn uses_channel(self) -> bool {
        !self.is_plaintext()
    }

    /// The kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            Method::FboFedGp => "fbo-fedgp",
            Method::LocalOnly => "local-only",
            Method::GlobalOnly => "global-only",
            Method::RandomSupport => "random-support",
            Method::IndependentBo => "independent-bo",
            Method::RandomSearch => "random-search",
            Method::PooledBo => "pooled-bo",
        }
    }

    /// Every method.
    pub fn all() -> [Method; 7] {
        [
            Method::FboFedGp,
            Method::LocalOnly,
            Method::GlobalOnly,
            Method::RandomSupport,
            Method::IndependentBo,
            Method::RandomSearch,
            Method::PooledBo,
        ]
    }
}

/// How the shared support set `Z` is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SupportSelection {
    /// [`SupportSelection::SecureKmeans`] for a fixed support size, where it
    /// runs once on the uniform initial points;
    /// [`SupportSelection::Public`] when the set grows (`support_growth`),
    /// so that growing reveals no cluster of the points a search chose. The
    /// default.
    #[default]
    Auto,
    /// Secure federated k-means: the centres are public, each client's
    /// per-cluster sums and counts go through `SecureSum`; no client's centres
    /// or points are revealed, but each Lloyd step's sums and counts are
    /// (see [`SupportSelection::Public`]).
    SecureKmeans,
    /// Paper 004, Alg. 1: local k-means, local centres sent in plaintext, global
    /// farthest-first initialisation and k-means on the server.
    PaperClustering,
    /// Uniform random points of the domain (the ablation baseline).
    Random,
    /// From public information only, so no client's points are revealed at
    /// any size: the starting set is k-means++ over public uniform points
    /// (secure k-means' own starting centres, with no Lloyd step on data),
    /// and each growth (`support_growth`) adds the points of a penalised
    /// batch on the last global posterior, which every member holds alike
    /// (public uniform points before the first global step). Secure k-means
    /// reveals each Lloyd step's per-cluster sums and counts: a cluster of
    /// one point is that point, and so is the change of a cluster's sums
    /// when one point moves; harmless on the uniform initial points, not on
    /// the points a search chose, which a growing set re-clusters.
    Public,
}

/// Where the clients' initial points come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum InitialDesign {
    /// Uniform in the whole domain (the paper's protocol).
    #[default]
    Uniform,
    /// Client `i` of `M` samples the slab `[i/M, (i+1)/M]` of the first
    /// coordinate (a non-IID start).
    SubBox,
}

/// The kernel family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KernelKind {
    /// Squared exponential with ARD length-scales.
    Se,
    /// Matérn 5/2 with ARD length-scales.
    #[default]
    Matern52,
}

/// How the kernel hyper-parameters are set (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HyperparameterMode {
    /// The pooled MAP over public candidates: the candidate maximising the
    /// summed log-likelihoods of the clients' data (one secure sum) plus the
    /// public log prior (see the module docs). The default.
    #[default]
    FederatedMle,
    /// The configured `lengthscale`, `signal_variance` and `noise_variance`.
    Fixed,
}

/// Which output standardisation a client's local GP uses in a local step
/// (Alg. 2, lines 9 and 16: the local GP `GP^(i)` on `D_i`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LocalScaling {
    /// The federation's scaling (the one the global summary uses): the prior
    /// mean is the federation's average, so a client whose data are below it
    /// is drawn away from its own points. The default: on Table 1 (20
    /// functions × 10 seeds) [`LocalScaling::Own`] was better on 111 of 200
    /// paired runs, not a significant difference.
    #[default]
    Federation,
    /// The client's own mean and standard deviation of `D_i`, as a GP fitted
    /// on `D_i` alone standardises it: the prior mean is the client's own
    /// average, so a local step looks for improvement on what it has seen.
    Own,
}

/// A growing UCB `β_t` (see [`UcbBeta`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BetaSchedule {
    /// `0.2 · D · ln(2t)`.
    Kandasamy,
    /// Srinivas et al. with δ = 0.1.
    Srinivas,
}

/// Growth of `|S|` (paper 004, App. C.7: start small, add `step` points every
/// `every` rounds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SupportGrowth {
    /// Points added at each growth.
    pub step: usize,
    /// Rounds between growths.
    pub every: usize,
}

/// The prior on the kernel's length-scales (a MAP fit; see
/// [`fedhe_gp::hyperfit::HyperPrior`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LengthscalePrior {
    /// Maximum likelihood within the box (0.02, 20) of the unit cube (the
    /// behaviour before issue 14).
    None,
    /// `LogNormal(√2 + ½ ln D, √3)` (Hvarfner et al. 2024), in the box
    /// (0.01, 100), `D` the coordinates the fit learns (a categorical's
    /// held one-hot coordinates not among them). The default.
    #[default]
    DimScaled,
}

/// How the acquisition optimiser draws its raw candidates (the half not
/// around the client's best points); see [`fedhe_bo::optim::RawSampling`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AcqRaw {
    /// Independent uniform points.
    #[default]
    Uniform,
    /// A scrambled Sobol' sequence (BoTorch's `raw_samples`).
    Sobol,
}

/// Which raw candidates start an L-BFGS polish; see
/// [`fedhe_bo::optim::RestartSelection`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AcqRestarts {
    /// The `acq_polish` best.
    #[default]
    TopK,
    /// A Boltzmann sample with `η = 1`, the best always included
    /// (BoTorch's `initialize_q_batch`).
    Boltzmann,
}

/// The prior on the noise variance of the hyper-parameter fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NoisePrior {
    /// None: the noise variance is bounded by its box (1e-4, 1) only.
    #[default]
    None,
    /// `σ_n² ~ LogNormal(−4, 1)` on standardised outputs, BoTorch's default
    /// for `SingleTaskGP` (its `get_gaussian_likelihood_with_lognormal_prior`),
    /// which favours a small noise on deterministic objectives.
    LogNormal,
}

/// A trend the federation's global posterior is fitted around.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GlobalTrend {
    /// None (the default): the global posterior's own prior mean only.
    #[default]
    None,
    /// A full quadratic in the unit cube (`1 + D + D(D+1)/2` weights, 66 in
    /// 10-D; `fedhe_gp::trend`), fitted by least squares from one more
    /// secure sum in each round with a global step (its Gram matrix and
    /// right-hand side, summed over the members' unclipped standardised
    /// values), clamped to the clip of a clipped warping. The members'
    /// summaries are then of the residuals, and the trend is added back to
    /// the global posterior. It takes effect once the federation holds
    /// twice as many unclipped points as it has weights. **Simulation
    /// only**: the change of its sums between two fits reveals the points
    /// added in between (SECURITY.md), so members running apart refuse it.
    Quadratic,
    /// The same quadratic, but its sums are decrypted only when every
    /// member's view of them holds at least twice
    /// [`fedhe_gp::trend::determinable_points`] (200 in 10-D) unclipped
    /// points of others that no earlier release held: a one-value secure sum
    /// of the unclipped counts decides, before the trend's own sum, in
    /// rounds where the public schedule allows it. Between releases the
    /// last trend is kept (re-expressed in each round's standardisation),
    /// and the first member stepping globally in a release round evaluates
    /// its maximiser. Neither one release nor the difference of two
    /// determines the points behind it by a count of unknowns, so members
    /// running apart may use it, in studies that decrypt a round only with
    /// every member's contribution (SECURITY.md). The trend's sums must
    /// hold the points the count said, or the run ends naming this field.
    /// Needs a warping that is
    /// linear inside its clip (`auto`, `clipped` or `none`), so that a kept
    /// trend is the same quadratic in a later standardisation.
    QuadraticSpaced,
}

/// The prior mean of a lone agent's GP on its standardised outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PriorMean {
    /// [`PriorMean::Alternate`] for a lone agent (`independent-bo`),
    /// [`PriorMean::Constant`] for `pooled-bo` and a federation's local steps
    /// on the lone recipe, [`PriorMean::Zero`] for a federation's global
    /// posterior. On CEC-2005 F1-F20 (100 lone agents per function, paired)
    /// the alternation is better than BIC's choice on F2, F5, F6, F7, F13,
    /// F15, F16 and worse on F11 (`docs/results/optimiser-2026-11-29`,
    /// section 9); BIC's choice was better than the constant on the round
    /// bowls (F1, F6, F9, F10, F13) and F16, F17, worse on the rotated,
    /// ill-conditioned ones (F2-F4, F7) and F18 (section 7). The constant beat
    /// the zero mean in 123 of 200 paired agents, worse on no function
    /// (`docs/results/optimiser-2026-11-24`, Addendum 2). The
    /// federation's references keep the constant: `pooled-bo` takes the
    /// settings a federation can take, and a federation's global posterior
    /// refuses the BIC's trend.
    #[default]
    Auto,
    /// Zero, i.e. the mean of the agent's (warped) data.
    Zero,
    /// A constant fitted with the hyper-parameters (its GLS estimate, the
    /// likelihood's maximiser; BoTorch's `ConstantMean`). In a federation,
    /// the global posterior's GLS constant mean under the dPITC covariance,
    /// from `|S| + 2` more values in each summary's secure sum
    /// (`fedhe_gp::sparse::Dpitc::gls_mean`); local steps on the lone recipe
    /// fit their own.
    Constant,
    /// An isotropic quadratic trend `h(x)ᵀβ`, `h(x) = (1, x − ½, ‖x − ½‖²)`
    /// on the unit cube, fitted by GLS with the hyper-parameters
    /// ([`fedhe_gp::exact::MeanFunction::Quadratic`]; a constant until the
    /// agent holds `D + 4` points). Lone agents and plaintext methods only:
    /// a federation's global posterior refuses it (its weights would take
    /// more sums than the constant's).
    Quadratic,
    /// At each refit of a lone agent, [`PriorMean::Constant`] or
    /// [`PriorMean::Quadratic`], whichever fitted model has the larger
    /// Bayesian information criterion `log p(y | θ̂, β̂) − ½·k·log n` (`k`
    /// the trend's weights, `n` the points): the quadratic's `D + 1` extra
    /// weights must buy `½(D + 1)·log n` nats of likelihood. Lone agents
    /// and plaintext methods only, as the quadratic.
    Bic,
    /// Both [`PriorMean::Constant`] and [`PriorMean::Quadratic`] fitted at
    /// each refit, as [`PriorMean::Bic`] fits them, and the agent's steps
    /// taking the two models in turn, one step each: a portfolio of two
    /// surrogates (in the spirit of GP-Hedge, Hoffman et al. 2011, with a
    /// fixed rotation instead of learned weights). The trend brings the
    /// search down fast on round bowls, where BIC keeps it; on rotated,
    /// ill-conditioned ones (CEC-2005 F2, F7) its isotropic shape holds the
    /// search near its own minimum, and the constant's steps get past it.
    /// Lone agents and plaintext methods only, as the quadratic.
    Alternate,
}

impl PriorMean {
    /// The concrete prior mean of `method`'s model (a lone agent's GP,
    /// `pooled-bo`'s, a federation's global posterior): `Auto` resolved.
    pub fn resolve(self, method: Method) -> PriorMean {
        match self {
            PriorMean::Auto if method.is_plaintext() => self.resolve_lone(method),
            PriorMean::Auto => PriorMean::Zero,
            m => m,
        }
    }

    /// The concrete prior mean of the lone recipe's exact GP in `method`: a
    /// lone agent's, `pooled-bo`'s, or a federation member's local steps'.
    /// `Auto` is [`PriorMean::Alternate`] for `independent-bo` and
    /// [`PriorMean::Constant`] otherwise (see [`PriorMean::Auto`]).
    pub fn resolve_lone(self, method: Method) -> PriorMean {
        match self {
            PriorMean::Auto if method == Method::IndependentBo => PriorMean::Alternate,
            PriorMean::Auto => PriorMean::Constant,
            m => m,
        }
    }

    /// The exact GP mean functions the lone recipe of `method` fits at each
    /// refit ([`Self::resolve_lone`]): one, or two for [`PriorMean::Bic`]
    /// and [`PriorMean::Alternate`], in order of preference on a tie.
    pub fn mean_functions(self, method: Method) -> Vec<MeanFunction> {
        match self.resolve_lone(method) {
            PriorMean::Constant => vec![MeanFunction::Constant],
            PriorMean::Quadratic => vec![MeanFunction::Quadratic],
            PriorMean::Bic | PriorMean::Alternate => {
                vec![MeanFunction::Constant, MeanFunction::Quadratic]
            }
            PriorMean::Zero | PriorMean::Auto => vec![MeanFunction::Zero],
        }
    }

    /// Whether a federation's global posterior can take this prior mean
    /// (its weights must come from sums a summary carries).
    pub fn is_federated(self) -> bool {
        !matches!(
            self,
            PriorMean::Quadratic | PriorMean::Bic | PriorMean::Alternate
        )
    }
}

/// How the members that step globally in a round choose their points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GlobalSteps {
    /// Each maximises the acquisition on the global posterior on its own
    /// (Alg. 2, lines 22-23): they all find nearly the same point.
    #[default]
    Shared,
    /// One public batch of `global_batch` points by local penalisation
    /// (González et al. 2016), computed by every member alike from the global
    /// posterior, public anchors (the support points of highest posterior
    /// mean) and a seed of the round; the member at position `i` of the
    /// federation takes point `i mod global_batch`. Nothing new is revealed:
    /// the batch depends only on what every member already holds.
    Penalised,
}

/// Which likelihood a federation's hyper-parameter candidates are scored by
/// (with [`HyperparameterMode::FederatedMle`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HyperLikelihood {
    /// `Σ_i log p(y_i | θ)`: every client's exact GP evidence on its own
    /// data, summed (a product of experts; it ignores the covariance between
    /// clients). One number per candidate. The default.
    #[default]
    Experts,
    /// The evidence of the global dPITC model on every client's data
    /// (`fedhe_gp::sparse::Dpitc::log_marginal_likelihood`), from each
    /// client's local summary and two scalars per candidate: the likelihood
    /// of the model the global steps use, covariance between clients
    /// included through the support set. `|S|(|S|+3)/2 + 3` numbers per
    /// candidate; the support set is chosen before the first fit.
    Sparse,
}

/// How a federation's members take their local steps (Alg. 2, lines 16-17).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LocalSteps {
    /// On a local GP with the federation's warping, hyper-parameters and
    /// acquisition (the paper's Alg. 2, lines 16-17).
    Federated,
    /// As a lone agent would (`independent-bo`'s recipe on the member's own
    /// data: its own warping, fit, prior mean and acquisition). Private: a
    /// local step sends nothing. The default: on the Table 1 protocol over
    /// CEC-2005 F1-F20 (3 seeds) the federation's median best is then at
    /// most a lone agent's on 20 of 20 functions (16 of 20 with
    /// `federated`), at the cost of each member's own fit every
    /// `refit_every` local steps (`docs/results/optimiser-2026-11-24`,
    /// Addendum 4).
    #[default]
    Lone,
    /// As a lone agent at its own defaults would (`independent-bo` with
    /// this config's acquisition optimiser and refit period, but its own
    /// MAP fit, output standardisation, alternating prior means, LogEI and
    /// trust region), whatever the federation's model settings: a private
    /// study fixes the global model's hyper-parameters, warping and prior
    /// mean, which constrain what it releases, not what a member does alone.
    LoneDefaults,
}

/// Where a lone agent's hyper-parameter fit starts (its first start; the
/// other `fit_starts − 1` are log-uniform random draws in the box).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FitStart {
    /// The previous fit (a warm start). The default.
    #[default]
    Previous,
    /// The initial hyper-parameters at every refit (length-scales at the
    /// prior's mode, `σ_f² = 1`, `σ_n² = 10⁻²`), as BoTorch fits a fresh
    /// `SingleTaskGP` from its initial values at every step.
    Initial,
}
