//! FBO-FedGP (paper 004): federated BO on a secure distributed sparse GP.
//!
//! The [`Client`] role holds one institution's data and computes what it
//! contributes; the [`Server`] role runs the secure sums and the support-set
//! selection; [`run`] drives one federation in process through any
//! [`fedhe_crypto::SecureSum`] (the simulator, the benchmarks and the service
//! share this code; only the channel differs).
//!
//! # Kernel hyper-parameters
//!
//! By default ([`HyperparameterMode::FederatedMle`]) they stay private too: every
//! `refit_every` rounds the server draws public candidates (the current values,
//! an isotropic grid and random perturbations), every client computes the log
//! marginal likelihood of its own data under each candidate, and one secure sum
//! gives the pooled likelihood `Σ_i log p(y_i | θ)` of each; the federation takes
//! the candidate maximising it plus the public log prior
//! ([`LengthscalePrior`]), i.e. the pooled MAP over the candidates. No client's
//! own likelihood or fit is revealed. A fixed prior
//! ([`HyperparameterMode::Fixed`]) is available as a configured option. A lone
//! agent (`independent-bo`) fits the MAP hyper-parameters on its own data by
//! multi-start L-BFGS every `refit_every` rounds; so does `pooled-bo`, the
//! upper reference without privacy, on every member's data in one place.
//!
//! # Output warping
//!
//! By default ([`Warping::Auto`]) both a federation and a lone agent
//! standardise the utility itself, as BoTorch's `Standardize` does. A
//! federation's sums must stay within the channel's bound, so it clips
//! every value to `[−T, T]` ([`Warping::Clipped`]) at a public threshold `T`
//! far in the tail of its data's magnitudes, learnt from one secure sum of
//! `(n_i, Σ ln(1 + |u|), Σ ln²(1 + |u|))` before the sum of its output
//! statistics. [`Warping::None`], [`Warping::SignedLog`] or
//! [`Warping::Clipped`] set one for both. With
//! [`Warping::Likelihood`] the warping is chosen by the data among public
//! candidates ([`WARP_SCALES`]) by the Gaussian likelihood of the warped values
//! with their Jacobian; a federation computes it from the secure sum of every
//! client's `(n_i, Σw, Σw², Σ log w')` per candidate, the same sum that gives
//! the output scaling.
//!
//! # Acquisition
//!
//! By default GP-UCB in a federation and expected improvement, maximised as
//! LogEI (Ament et al. 2023), for a lone agent, which fits two GPs at each
//! refit, one with a fitted constant prior mean and one with an isotropic
//! quadratic trend, and steps on them in turn ([`PriorMean::Auto`]), each
//! step in a TuRBO-1 trust region around its best point
//! ([`ValidParams::trust_region_for`]): the best lone recipe measured on
//! CEC-2005 F1-F20 (`docs/results/optimiser-2026-11-24`,
//! `docs/results/optimiser-2026-11-29` sections 7, 9 and 10). `pooled-bo` and a
//! federation's local steps fit a constant. A federation's
//! global posterior has a zero mean by default; with `prior_mean =
//! "constant"` it takes the GLS constant mean of every client's data under
//! the dPITC covariance, from `|S| + 2` more values in the same secure sum as
//! the summaries (`fedhe_gp::sparse::Dpitc::gls_mean`). The acquisition optimiser scores uniform or Sobol' raw candidates plus
//! perturbations of the client's best points and polishes the best few or a
//! Boltzmann sample of them with L-BFGS (`acq_raw`, `acq_restarts`).
//!
//! # Global and local steps
//!
//! By default every member stepping globally maximises the acquisition on the
//! global posterior on its own, so they find nearly the same point.
//! [`GlobalSteps::Penalised`] makes them take the slots of one public batch
//! built by local penalisation (González et al. 2016), which every member
//! computes alike from what it already holds (the global posterior, the
//! support set, a seed of the round, the public coin flips of the mixing
//! schedule). By default ([`LocalSteps::Lone`]) a local step is the step a
//! lone agent would take on the member's own data with this config's model
//! settings; [`LocalSteps::LoneDefaults`] takes the lone agent's own defaults
//! for them (a private study's recipe, whose global model is held to fixed
//! public hyper-parameters); [`LocalSteps::Federated`] is the paper's local
//! step on the federation's warping and hyper-parameters. None of them sends
//! anything new.
//!
//! # A quadratic trend
//!
//! With [`GlobalTrend::Quadratic`] the global posterior is fitted around a
//! full quadratic in the unit cube (`fedhe_gp::trend`; 66 weights in 10-D),
//! the least-squares fit of the members' unclipped standardised values from
//! one more secure sum in each round with a global step (each member's Gram
//! matrix and right-hand side, so only their total is decrypted). Each
//! member's summary is then of its residuals, the trend is added back to the
//! global posterior, and the first member stepping globally (a public rank)
//! evaluates the trend's maximiser in the cube unless it has already. A
//! sparse posterior with a constant mean forgets a bowl away from its few
//! support points; the trend keeps it, and on a quadratic objective names
//! its minimum once the federation holds `2p` unclipped points. It is a
//! simulation setting: between two fits its sums change by the moments of
//! the points added in between, which reveal them (SECURITY.md), so
//! members running apart ([`run_member`]) refuse it.
//! [`GlobalTrend::QuadraticSpaced`] decrypts the same sums only when, in
//! every member's view, they hold twice
//! [`fedhe_gp::trend::determinable_points`] unclipped points of others that
//! no earlier release held (200 in 10-D: too many for the moments to
//! determine), keeps the last trend between releases, and may run apart
//! in studies that decrypt a round only with every member's contribution.
//!
//! # Output scaling
//!
//! The summaries of a global step must share one standardisation, so they use
//! the federation's; by default a local step's GP (Alg. 2, lines 9 and 16)
//! uses it too. [`LocalScaling::Own`] standardises `D_i` by its own mean and
//! deviation instead, as a GP fitted on `D_i` alone would.

mod client;
mod model;
mod params;
pub mod private;
mod run;
mod server;

pub use client::Client;
pub use model::{
    choose_warping, choose_warping_and_scaling, clip_threshold, magnitude_contribution,
    value_bound, warp_contribution, warp_log_likelihood, Hyperparameters, OutputScaling,
    OutputWarping, SummaryScaling, Warping, CLIP_DEVIATIONS, WARP_SCALES,
};
pub use params::{
    AcquisitionParams, BetaSchedule, FboFedGpParams, FitStart, GlobalSteps, GlobalTrend,
    HyperLikelihood, HyperParams, HyperparameterMode, InitialDesign, KernelKind, LengthscalePrior,
    LocalScaling, LocalSteps, Method, ModelParams, PriorMean, StepParams, SupportGrowth,
    SupportParams, SupportSelection, ValidParams, DEFAULT_CATEGORICAL_LENGTHSCALE,
    PRIVATE_RECIPE_EPSILON,
};
pub use run::{
    check_networked, global_step_rounds, run, run_member, run_observed, run_roster,
    simulated_client_seed, RoundEvent,
};
pub use server::{
    kmeans_update, pooled_map, refit_decision, sparse_evidences, Server, TrendReleases,
};
