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
    /// A file's content is malformed.
    #[error("{path}: {reason}")]
    Invalid {
        /// The file involved.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An error from the channel.
    #[error(transparent)]
    Channel(#[from] fedhe_crypto::ChannelError),
    /// An error from the fixed-point codec.
    #[error(transparent)]
    Codec(#[from] fedhe_crypto::CodecError),
    /// A GP computation rejected its input.
    #[error(transparent)]
    Gp(#[from] fedhe_gp::GpError),
    /// An algorithm run failed.
    #[error(transparent)]
    Algorithm(#[from] fedhe_algorithms::AlgorithmError),
    /// A BO computation (acquisitions) rejected its input.
    #[error(transparent)]
    Bo(#[from] fedhe_bo::BoError),
    /// A task name, dimension or evaluation was refused.
    #[error(transparent)]
    Task(#[from] fedhe_tasks::TaskError),
    /// The server or the member's side of the protocol failed.
    #[error(transparent)]
    Client(#[from] fedhe_client::ClientError),
}
