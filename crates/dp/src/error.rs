//! The one error type of `fedhe-dp`.

use thiserror::Error;

/// A refused privacy parameter or an input a mechanism cannot handle exactly.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum DpError {
    /// A parameter is outside its domain. `name` is the parameter as users
    /// know it (`q`, `z`, `delta`, `S`, …), `domain` what it must satisfy.
    #[error("invalid {name} = {value}: must be {domain}")]
    InvalidParameter {
        /// The parameter's name.
        name: &'static str,
        /// The value that was given.
        value: f64,
        /// The allowed domain, in words.
        domain: &'static str,
    },
    /// An input value is not finite.
    #[error("input value at index {index} is not finite")]
    NonFiniteInput {
        /// Index of the offending coordinate.
        index: usize,
    },
    /// An input value is too large for the mechanism's grid: `|x|/γ` must stay
    /// below 2^52 so that every output is exactly representable.
    #[error("input value at index {index} is too large for the noise grid (|x| >= {limit})")]
    InputOutOfRange {
        /// Index of the offending coordinate.
        index: usize,
        /// The largest magnitude the mechanism accepts.
        limit: f64,
    },
}

impl DpError {
    /// Shorthand for [`DpError::InvalidParameter`].
    pub(crate) fn invalid(name: &'static str, value: f64, domain: &'static str) -> Self {
        Self::InvalidParameter {
            name,
            value,
            domain,
        }
    }
}
