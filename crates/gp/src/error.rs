//! The error type of the GP layer.

use thiserror::Error;

/// A failure of a GP computation; every variant names what is wrong.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum GpError {
    /// A hyper-parameter is not finite and positive.
    #[error("{name} must be finite and positive, got {value}")]
    NonPositive {
        /// Which hyper-parameter.
        name: &'static str,
        /// The offending value.
        value: f64,
    },
    /// An argument is out of range (the one home of this error for the
    /// numerical crates: `fedhe-bo` and `fedhe-tasks` wrap [`GpError`]).
    #[error("invalid {what}: {reason}")]
    Invalid {
        /// Which argument.
        what: &'static str,
        /// Why it is invalid.
        reason: String,
    },
    /// Two inputs disagree in size.
    #[error("dimension mismatch in {what}: expected {expected}, got {got}")]
    Dimension {
        /// What was being checked.
        what: &'static str,
        /// The size required.
        expected: usize,
        /// The size given.
        got: usize,
    },
    /// An input contains NaN or infinity.
    #[error("{what} contains a non-finite value")]
    NonFinite {
        /// Which input.
        what: &'static str,
    },
    /// An input set is empty where at least one point is required.
    #[error("{what} is empty")]
    Empty {
        /// Which input.
        what: &'static str,
    },
    /// A covariance matrix stayed indefinite after the largest jitter.
    #[error("matrix is not positive definite even with jitter {jitter:e}")]
    NotPositiveDefinite {
        /// The largest jitter tried.
        jitter: f64,
    },
    /// A bound interval is empty or not finite.
    #[error("invalid bounds for {what}: [{lower}, {upper}]")]
    Bounds {
        /// Which parameter.
        what: &'static str,
        /// Lower bound.
        lower: f64,
        /// Upper bound.
        upper: f64,
    },
    /// A computation from summaries made at prior mean zero was given a
    /// model with another prior mean.
    #[error(
        "{what} needs summaries made at prior mean zero; the model's prior mean is {prior_mean}"
    )]
    NotZeroMean {
        /// What was being computed.
        what: &'static str,
        /// The model's prior mean.
        prior_mean: f64,
    },
    /// The optimiser failed on every start.
    #[error("optimisation failed: {0}")]
    Optimisation(String),
}

/// Checks that `value` is finite and strictly positive.
pub fn check_positive(name: &'static str, value: f64) -> Result<f64, GpError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(GpError::NonPositive { name, value })
    }
}

/// Checks that every entry of `values` is finite.
pub fn check_finite<'a>(
    what: &'static str,
    values: impl IntoIterator<Item = &'a f64>,
) -> Result<(), GpError> {
    if values.into_iter().all(|v| v.is_finite()) {
        Ok(())
    } else {
        Err(GpError::NonFinite { what })
    }
}
