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
    /// No method of the registry has this name.
    #[error("unknown method {name:?} (known: {known})")]
    UnknownMethod {
        /// The name asked for.
        name: String,
        /// The registry's names, comma-separated.
        known: String,
    },
    /// A method's settings do not parse (a wrong type, an unknown key or value).
    #[error("settings of {method}: {reason}")]
    Settings {
        /// The method.
        method: String,
        /// The parser's message, with the key when it omits it.
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
    /// A task could not be built or evaluated (its name, dimension or members;
    /// an institution's objective command).
    #[error(transparent)]
    Task(#[from] fedhe_tasks::TaskError),
}

/// A [`AlgorithmError::Config`] error.
pub(crate) fn config(field: &'static str, reason: impl Into<String>) -> AlgorithmError {
    AlgorithmError::Config {
        field,
        reason: reason.into(),
    }
}

/// Refuses `v` unless it is finite and positive, naming `field`.
pub(crate) fn positive(field: &'static str, v: f64) -> Result<(), AlgorithmError> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(config(
            field,
            format!("must be finite and positive, got {v}"),
        ))
    }
}

/// Refuses a run whose channel members are not the `configured` number.
pub(crate) fn check_members(configured: usize, given: usize) -> Result<(), AlgorithmError> {
    if configured == given {
        Ok(())
    } else {
        Err(config(
            "members",
            format!("{configured} configured but {given} channel members given"),
        ))
    }
}

/// Checks that `task` has objectives for every one of `members` and that
/// they are the `configured` number; the error names `members`.
pub(crate) fn check_task_members(
    task: &fedhe_tasks::Task,
    members: &[fedhe_crypto::MemberId],
    configured: usize,
) -> Result<(), AlgorithmError> {
    if let Some(n) = task.clients() {
        if n < members.len() {
            return Err(config(
                "members",
                format!(
                    "task {} has objectives for {n} clients, {} configured",
                    task.name(),
                    members.len()
                ),
            ));
        }
    }
    check_members(configured, members.len())
}

/// A seed for stream `i` of a run from its `seed` (SplitMix64 finaliser), so
/// that clients, server and noise draw from independent streams.
pub(crate) fn stream_seed(seed: u64, i: u64) -> u64 {
    let mut z = seed ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
