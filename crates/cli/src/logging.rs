//! The `fedhe` binary's logger (tracing-subscriber) on stderr: the
//! server's state changes, refusals, store errors and deadline-sweep
//! failures. Events carry ids and hashes, never secret keys, plaintext
//! values, passphrases or the administrator's token.

use std::io::IsTerminal;
use tracing_subscriber::EnvFilter;

/// How log lines are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines (coloured on a terminal).
    Human,
    /// One JSON object a line.
    Json,
}

/// The filter when RUST_LOG is unset: info for fedhe's crates, warnings
/// from the rest.
pub const DEFAULT_FILTER: &str =
    "warn,fedhe=info,fedhe_server=info,fedhe_client=info,fedhe_cli=info,fedhe_api=info";

/// Installs the global logger: level by RUST_LOG (else [`DEFAULT_FILTER`]),
/// to stderr in `format`. An invalid RUST_LOG is reported and the default used.
pub fn install(format: LogFormat) {
    let filter = match std::env::var("RUST_LOG") {
        Ok(spec) if !spec.trim().is_empty() => EnvFilter::try_new(&spec).unwrap_or_else(|e| {
            eprintln!(
                "fedhe: RUST_LOG {}: {e}; using {DEFAULT_FILTER}",
                fedhe_crypto::text::quote(&spec, 200)
            );
            EnvFilter::new(DEFAULT_FILTER)
        }),
        _ => EnvFilter::new(DEFAULT_FILTER),
    };
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    // A second install (never in the binary) is not an error worth stopping for.
    let _ = match format {
        LogFormat::Human => builder
            .with_ansi(std::io::stderr().is_terminal())
            .try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}
