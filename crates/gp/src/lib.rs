//! Gaussian processes for fedhe.
//!
//! - [`kernels`]: squared exponential and Matérn 5/2 with ARD length-scales, behind
//!   the [`kernels::Kernel`] trait so that every algorithm is generic over the kernel.
//! - [`exact`]: the exact GP posterior (mean, variance, joint covariance) by Cholesky
//!   with jitter escalation, optional output standardisation.
//! - [`hyperfit`]: log marginal likelihood, its analytic gradient in log-parameters and
//!   multi-start L-BFGS fitting within bounds.
//! - [`sparse`]: the distributed sparse GP (dPITC) of paper 004, Appendix A.
//! - [`rff`]: random Fourier features and the Bayesian linear-regression posterior of
//!   paper 000, eq. (2).
//! - [`nystrom`]: the Nyström embedding of paper 001, Algorithm 4.
//! - [`trend`]: a full quadratic trend fitted by least squares from sums.
//!
//! Inputs are matrices with one point per row (`n × d`).

pub mod error;
pub mod exact;
pub mod hyperfit;
pub mod kernels;
pub mod linalg;
pub mod nystrom;
pub mod pathwise;
pub mod rff;
pub mod sparse;
pub mod trend;

pub use error::GpError;
pub use exact::{ExactGp, ExactGpParams};
pub use kernels::{Kernel, KernelParams, Matern52, SquaredExponential};
pub use pathwise::PosteriorPath;
