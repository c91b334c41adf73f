//! The error type of the BO layer.

use fedhe_gp::GpError;
use thiserror::Error;

/// A failure in the BO layer; every variant names what is wrong.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum BoError {
    /// An argument is out of range.
    #[error("invalid {what}: {reason}")]
    Invalid {
        /// Which argument.
        what: &'static str,
        /// Why it is invalid.
        reason: String,
    },
    /// A point has the wrong dimension.
    #[error("dimension mismatch in {what}: expected {expected}, got {got}")]
    Dimension {
        /// What was being checked.
        what: &'static str,
        /// The dimension required.
        expected: usize,
        /// The dimension given.
        got: usize,
    },
    /// A point contains NaN or infinity.
    #[error("{what} contains a non-finite value")]
    NonFinite {
        /// Which input.
        what: &'static str,
    },
    /// A GP computation failed.
    #[error(transparent)]
    Gp(#[from] GpError),
}

/// An [`BoError::Invalid`] with a formatted reason.
pub(crate) fn invalid(what: &'static str, reason: impl Into<String>) -> BoError {
    BoError::Invalid {
        what,
        reason: reason.into(),
    }
}
