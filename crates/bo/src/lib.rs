//! Bayesian optimisation for fedhe, on top of [`fedhe_gp`].
//!
//! Convention: every objective is **maximised**, and every acquisition is larger
//! where a point is more worth evaluating.
//!
//! - [`acquisition`]: GP-UCB, EI, numerically stable log-EI, PI, Thompson sampling.
//! - [`optim`]: the acquisition optimiser in a box (uniform or Sobol' raw
//!   candidates, then multi-start L-BFGS).
//! - [`sobol`]: scrambled Sobol' points.
//! - [`trust_region`]: TuRBO's trust region for an agent's own steps.
//! - [`schedule`]: the mixing schedules `p_t` of FBO-FedGP and FTS.
//! - [`clustering`]: support-set selection (paper 004, Alg. 1) and its baseline.
//!
//! The objectives themselves (benchmarks, synthetic federations) live in
//! `fedhe-tasks`, which does not depend on this crate.

pub mod acquisition;
pub mod clustering;
pub mod error;
pub mod optim;
pub mod penalty;
pub mod schedule;
pub mod sobol;
pub mod trust_region;

pub use error::BoError;
