//! Federated Bayesian optimisation algorithms, each written once as a *client
//! role* (what an institution computes and contributes) and a *server role* (what
//! the coordinator does with aggregates), talking to the channel only through
//! [`fedhe_crypto::SecureSum`] (DESIGN.md §1).
//!
//! - [`fbo_fedgp`]: FBO-FedGP (paper 004, Algs. 1-2), its ablations and the
//!   plaintext baselines run under the same protocol.
//! - [`ldp_bo`]: local-DP GP-UCB (paper 001, Algs. 1-4) and its heavy-tailed
//!   non-private versions, with institutions' private rewards summed by the channel.
//! - [`fed_pne`]: the federated X-armed bandit (paper 003): Fed-PNE, DP-Fed-PNE
//!   and Fed1-UCB, with clients' local means summed by the channel.
//! - [`channel`]: the server side of `SecureSum` every algorithm shares
//!   (round numbers, bound checks, precision, traffic).
//! - [`task`]: the black-box problems the algorithms optimise.
//! - [`surrogate`]: the posterior an acquisition reads, local (exact GP) or global
//!   (dPITC), and the acquisition step on it.

pub mod channel;
pub mod error;
pub mod fbo_fedgp;
pub mod fed_pne;
pub mod ldp_bo;
pub mod result;
pub mod surrogate;
pub mod task;

pub use error::AlgorithmError;
pub use fbo_fedgp::{FboFedGpParams, Method};
pub use result::RunResult;
pub use task::Task;
