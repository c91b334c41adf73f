//! The error type of the task crate.

use thiserror::Error;

/// A failure to build or evaluate a federated task.
#[derive(Debug, Error)]
pub enum TaskError {
    /// No task has this name.
    #[error("unknown task {name:?} (known: {known})")]
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
    /// A task setting is out of range or inconsistent.
    #[error("invalid task setting `{field}`: {reason}")]
    Config {
        /// The setting.
        field: &'static str,
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
}
