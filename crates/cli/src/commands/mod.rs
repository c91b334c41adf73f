//! One module per `fedhe` subcommand.

pub mod agent;
pub mod audit;
pub mod bench;
pub mod bench_service;
pub mod ceremony;
pub mod channel;
mod children;
pub mod demo;
pub mod gp;
pub mod inspect;
pub mod json_input;
pub mod objective;
pub mod privacy;
pub mod report;
pub mod serve;
pub mod simulate;
pub mod ui;

use crate::error::CliError;
use fedhe_crypto::{InsecurePolicy, ParameterSet, Params};
use std::sync::Arc;
use std::time::Duration;

/// Resolves `--params NAME` under `--allow-insecure`.
pub fn resolve_params(name: &str, allow_insecure: bool) -> Result<Arc<Params>, CliError> {
    let policy = if allow_insecure {
        InsecurePolicy::Allow
    } else {
        InsecurePolicy::Refuse
    };
    Ok(ParameterSet::by_name(name)?.validate(policy)?)
}

/// The median of some durations, in milliseconds.
pub fn median_ms(times: &[Duration]) -> f64 {
    let mut ms: Vec<f64> = times.iter().map(|d| d.as_secs_f64() * 1e3).collect();
    ms.sort_by(f64::total_cmp);
    match ms.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => ms[n / 2],
        n => (ms[n / 2 - 1] + ms[n / 2]) / 2.0,
    }
}

/// `count` values uniform in [−bound, bound] from a CSPRNG.
pub fn uniform_values(rng: &mut fedhe_ring::Csprng, count: usize, bound: f64) -> Vec<f64> {
    (0..count)
        .map(|_| ((rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) * bound)
        .collect()
}

/// Each member's contribution to one round.
pub type Contributions = Vec<(fedhe_crypto::MemberId, Vec<f64>)>;

/// One round of random contributions (values uniform in [−bound, bound]) and
/// their plaintext sum, computed by [`fedhe_crypto::PlainSum`] as the reference.
pub fn random_round(
    members: &[fedhe_crypto::MemberId],
    rng: &mut fedhe_ring::Csprng,
    count: usize,
    bound: f64,
) -> Result<(Contributions, Vec<f64>), CliError> {
    use fedhe_crypto::SecureSum;
    let contributions: Vec<_> = members
        .iter()
        .map(|m| (m.clone(), uniform_values(rng, count, bound)))
        .collect();
    let expected = fedhe_crypto::PlainSum.sum(fedhe_crypto::RoundId(0), contributions.clone())?;
    Ok((contributions, expected))
}

/// The largest |a_i − b_i|.
pub fn max_abs_difference(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// The members `member-01`, `member-02`, ….
pub fn member_names(n: usize) -> Result<Vec<fedhe_crypto::MemberId>, CliError> {
    (1..=n)
        .map(|i| Ok(fedhe_crypto::MemberId::new(format!("member-{i:02}"))?))
        .collect()
}

/// `println!` through [`print_stdout`]: formats its arguments and writes
/// them with a newline, ending quietly when the reader went away; evaluates
/// to `Result<(), CliError>`.
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::commands::print_stdout(&format!($($arg)*))
    };
}
pub(crate) use say;

/// Writes `text` and a newline to stdout. A reader that went away
/// (`fedhe objective list | head -1`) ends the output quietly, as Unix
/// tools do; `println!` would panic there (Rust ignores SIGPIPE, so the
/// write fails with EPIPE). Any other write failure is an error.
pub fn print_stdout(text: &str) -> Result<(), CliError> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(CliError::Io {
            path: "stdout".into(),
            source: e,
        }),
        _ => Ok(()),
    }
}
