//! fedhe: federated Bayesian optimisation over a multiparty RLWE encrypted-sum channel.
//!
//! This facade re-exports the workspace crates and owns the cross-crate tests in
//! `tests/` and the benchmarks in `benches/`.

pub use fedhe_algorithms as algorithms;
pub use fedhe_bo as bo;
pub use fedhe_crypto as crypto;
pub use fedhe_dp as dp;
pub use fedhe_gp as gp;
pub use fedhe_ring as ring;
