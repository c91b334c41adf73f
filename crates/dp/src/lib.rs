//! `fedhe-dp`: differential privacy for fedhe.
//!
//! - [`mechanism`]: the Gaussian and Laplace mechanisms, with exact discrete
//!   noise on a fine grid (Canonne, Kamath, Steinke 2020), immune to the
//!   floating-point attack of Mironov 2012;
//! - [`sampling`]: the exact samplers behind them (Bernoulli, Bernoulli(e^−γ),
//!   discrete Laplace, discrete Gaussian) on tfhe's CSPRNG ([`fedhe_ring::Csprng`]);
//! - [`clipping`]: L2 clipping;
//! - [`distributed`]: the distributed discrete Gaussian for secure sums
//!   (each member's noise share, the RDP of the sum, a study's ledger and
//!   the calibration of noise to a budget);
//! - [`subsampling`]: Poisson subsampling;
//! - [`accountant`]: the privacy loss of T steps of the Poisson-subsampled
//!   Gaussian — the moments accountant as DP-FTS-DE uses it, and an RDP
//!   accountant that agrees with Google's `dp-accounting`.
//!
//! Every parameter set is a plain `…Params` value that `validate`s into the
//! type the algorithms take; a refused parameter gives [`DpError`] naming it.

pub mod accountant;
pub mod clipping;
pub mod distributed;
mod error;
pub mod mechanism;
pub mod sampling;
mod special;
pub mod subsampling;

pub use accountant::{
    privacy_loss, AccountantKind, PrivacyAccountant, PrivacyLoss, SubsampledGaussian,
    SubsampledGaussianParams,
};
pub use clipping::{ClipParams, L2Clip};
pub use distributed::{
    calibrate, DistributedGaussian, DistributedGaussianParams, PrivacyBudget, PrivacyBudgetParams,
    PrivacyLedger, ReleaseShape,
};
pub use error::DpError;
pub use mechanism::{GaussianMechanism, GaussianParams, LaplaceMechanism, LaplaceParams};
pub use subsampling::PoissonSampling;
