//! The error type of the algorithms.

use thiserror::Error;

/// A failure of an algorithm run.
#[derive(Debug, Error)]
pub enum AlgorithmError {
    /// A setting is missing, out of range or inconsistent.
    #[error("invalid setting `{field}`: {reason}")]
    Config {
        /// The setting, as it is named in a config file.
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// A contribution does not fit the channel's declared bound; the round is
    /// not run rather than letting the fixed-point encoding refuse it later.
    #[error("{what}: |value| = {value:e} exceeds the channel bound {bound:e}")]
    OutOfBound {
        /// Which contribution.
        what: &'static str,
        /// The largest magnitude in it.
        value: f64,
        /// The bound.
        bound: f64,
    },
    /// The channel failed.
    #[error(transparent)]
    Channel(#[from] fedhe_crypto::ChannelError),
    /// A GP computation failed.
    #[error(transparent)]
    Gp(#[from] fedhe_gp::GpError),
    /// A privacy parameter was refused (q, z, δ, S) or a mechanism failed.
    #[error(transparent)]
    Privacy(#[from] fedhe_dp::DpError),
    /// A BO computation failed.
    #[error(transparent)]
    Bo(#[from] fedhe_bo::BoError),
}

/// A [`AlgorithmError::Config`] error.
pub(crate) fn config(field: &'static str, reason: impl Into<String>) -> AlgorithmError {
    AlgorithmError::Config {
        field,
        reason: reason.into(),
    }
}
