//! The error type of the BO layer.

use fedhe_gp::GpError;
use thiserror::Error;

/// A failure in the BO layer: a malformed input (`Invalid`, `Dimension`,
/// `NonFinite`, whose one home is [`GpError`]) or a GP computation.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum BoError {
    /// A malformed input or a failed GP computation.
    #[error(transparent)]
    Gp(#[from] GpError),
}

/// A [`GpError::Invalid`] (the one home of input errors) with a formatted reason.
pub(crate) fn invalid(what: &'static str, reason: impl Into<String>) -> BoError {
    GpError::Invalid {
        what,
        reason: reason.into(),
    }
    .into()
}
