//! The error type of the task crate.

use fedhe_gp::GpError;
use thiserror::Error;

/// A failure to name, build or evaluate a task; every variant names what is wrong.
#[derive(Debug, Error)]
pub enum TaskError {
    /// No task has this name.
    #[error("unknown task {name:?} (known: {known}; see `fedhe objective list`)")]
    UnknownTask {
        /// The name asked for.
        name: String,
        /// The names there are, comma separated.
        known: String,
    },
    /// A data file does not parse.
    #[error("{file} line {line}: {reason}")]
    Parse {
        /// The embedded file.
        file: &'static str,
        /// The 1-based line (the header is line 1).
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// A task setting is out of range or inconsistent (the dimension asked
    /// for, the number of members, a noise level).
    #[error("invalid setting `{field}`: {reason}")]
    Config {
        /// The setting, as it is named in a config file.
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// A search space (issue 46) is malformed, or a value lies outside it.
    #[error("search space `{field}`: {reason}")]
    Space {
        /// The parameter and field, as `params[i] (name).field`, or the
        /// parameter's name for a value.
        field: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The classifier could not be trained.
    #[error("training the classifier of client {client}: {reason}")]
    Training {
        /// The client.
        client: usize,
        /// The learner's error.
        reason: String,
    },
    /// An institution's objective could not be evaluated (its command failed,
    /// printed something other than a number, or its journal disagrees).
    #[error("evaluation: {0}")]
    Evaluation(String),
    /// A malformed input (`Invalid`, `Dimension`, `NonFinite`: their one
    /// home is [`GpError`]) or a GP computation (a GP-sampled function's
    /// features) failed.
    #[error(transparent)]
    Gp(#[from] GpError),
}

/// A [`TaskError::Config`] error.
pub(crate) fn config(field: &'static str, reason: impl Into<String>) -> TaskError {
    TaskError::Config {
        field,
        reason: reason.into(),
    }
}

/// A [`GpError::Invalid`] (the one home of input errors) with a formatted reason.
pub(crate) fn invalid(what: &'static str, reason: impl Into<String>) -> TaskError {
    GpError::Invalid {
        what,
        reason: reason.into(),
    }
    .into()
}
