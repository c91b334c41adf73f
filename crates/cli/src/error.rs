//! The one error type of the command line: every failure becomes one line and exit status 2.

use thiserror::Error;

/// A failure of a `fedhe` subcommand.
#[derive(Debug, Error)]
pub enum CliError {
    /// The arguments are inconsistent or out of range.
    #[error("{0}")]
    Usage(String),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file involved.
        path: String,
        /// What went wrong.
        source: std::io::Error,
    },
    /// JSON input could not be parsed.
    #[error("{path}: malformed JSON: {source}")]
    Json {
        /// The file involved.
        path: String,
        /// What the parser said.
        source: serde_json::Error,
    },
    /// A GP computation rejected its input.
    #[error(transparent)]
    Gp(#[from] fedhe_gp::GpError),
    /// A BO computation (objectives, acquisitions) rejected its input.
    #[error(transparent)]
    Bo(#[from] fedhe_bo::BoError),
}
