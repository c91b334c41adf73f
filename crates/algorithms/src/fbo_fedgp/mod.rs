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
//! `refit_every` rounds each client fits the maximum-likelihood log-parameters on
//! its own data (standardised by the federation's output scaling) and the
//! federation uses their average, computed through the same `SecureSum`; the
//! output scaling itself comes from a secure sum of `(n_i, Σu, Σu²)`. A fixed
//! prior ([`HyperparameterMode::Fixed`]) is available as a configured option.
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
mod run;
mod server;

pub use client::Client;
pub use model::{Hyperparameters, OutputScaling, OutputWarping, SummaryScaling};
pub use params::{
    BetaSchedule, FboFedGpParams, HyperparameterMode, InitialDesign, KernelKind, LocalScaling,
    Method, SupportGrowth, SupportSelection, ValidParams,
};
pub use run::{run, run_member, run_observed, simulated_client_seed, RoundEvent};
pub use server::{kmeans_update, Server};
