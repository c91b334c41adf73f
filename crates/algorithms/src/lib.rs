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
//!   and the baselines Fed1-UCB and HCT, with clients' local means summed by the channel.
//! - [`method`]: the registry of methods by name, the [`FederatedMethod`]
//!   trait they share and the [`Roster`] of members a process plays.
//! - [`channel`]: the server side of `SecureSum` every algorithm shares
//!   (round numbers, bound checks, precision, traffic).
//! - [`fts`]: federated Thompson sampling (paper 002, Alg. 1), the plaintext
//!   baseline, and standard TS.
//! - [`dp_fts_de`]: DP-FTS-DE (paper 000, Algs. 1-2) over the channel, with
//!   FTS-DE and DP-FTS as configurations.
//! - [`privacy`]: output privacy, the distributed discrete Gaussian on every
//!   release of a private study and its ledger.
//! - [`rff_agent`]: the agent the Thompson-sampling family shares.
//! - The black-box problems the algorithms optimise ([`fedhe_tasks::Task`],
//!   built by name by [`fedhe_tasks::by_name`]) live in `fedhe-tasks`, below
//!   this crate.
//! - [`surrogate`]: the posterior an acquisition reads, local (exact GP) or global
//!   (dPITC), and the acquisition step on it.

pub mod channel;
pub mod dp_fts_de;
pub mod error;
pub mod fbo_fedgp;
pub mod fed_pne;
pub mod fts;
pub mod ldp_bo;
pub mod method;
pub mod privacy;
pub mod result;
pub mod rff_agent;
pub mod roster;
pub mod surrogate;

pub use error::AlgorithmError;
pub use fbo_fedgp::{FboFedGpParams, Method};
pub use method::{
    configure, FederatedMethod, PrivateSeed, Roster, RoundProgress, Shape, VALUE_BOUND_CAP,
};
pub use result::{BestPoint, Releases, ResultsFile, RunResult};
