//! `fedhe privacy`: the privacy loss ε of T steps of the Poisson-subsampled
//! Gaussian mechanism (DP-FTS-DE's per-iteration release) at a given δ.

use super::print_stdout;
use crate::error::CliError;
use clap::{Args, ValueEnum};
use fedhe_dp::{privacy_loss, AccountantKind};
use serde_json::json;

/// Which accountant computes ε.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum AccountantArg {
    /// Abadi et al.'s moments accountant as DP-FTS-DE reports it: integer
    /// orders 2..=33, ε = min_α T·RDP(α) + log(1/δ)/(α−1).
    Moments,
    /// dp-accounting's RdpAccountant: its default (fractional) orders and improved conversion.
    Rdp,
}

/// Arguments of `fedhe privacy`.
#[derive(Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct PrivacyArgs {
    /// Poisson sampling rate q ∈ (0, 1].
    #[arg(long)]
    q: f64,
    /// Noise multiplier z > 0 (noise standard deviation over L2 sensitivity).
    #[arg(long = "noise-multiplier")]
    noise_multiplier: f64,
    /// Number of steps (iterations) T.
    #[arg(long)]
    steps: u64,
    /// Target δ ∈ (0, 1).
    #[arg(long)]
    delta: f64,
    /// The accountant.
    #[arg(long, value_enum, default_value = "moments")]
    accountant: AccountantArg,
    /// Print `{"epsilon": ..., "order": ...}` (order: the minimising RDP order α; moment order λ = α − 1).
    #[arg(long)]
    json: bool,
}

/// Validates the parameters (an invalid one is named in the one-line error) and prints ε.
pub fn run(args: PrivacyArgs) -> Result<(), CliError> {
    let (kind, name) = match args.accountant {
        AccountantArg::Moments => (AccountantKind::Moments, "moments"),
        AccountantArg::Rdp => (AccountantKind::Rdp, "rdp"),
    };
    let loss = privacy_loss(kind, args.q, args.noise_multiplier, args.steps, args.delta)
        .map_err(|e| CliError::Usage(e.to_string()))?;
    if args.json {
        print_stdout(&json!({ "epsilon": loss.epsilon, "order": loss.order }).to_string())
    } else {
        print_stdout(&format!(
            "epsilon = {:.4} at delta = {} after {} steps (q = {}, z = {}; {name} accountant, RDP order {})",
            loss.epsilon, args.delta, args.steps, args.q, args.noise_multiplier, loss.order
        ))
    }
}

/// What a private run's largest releases can carry at best (in its seed's
/// public schedule), and when that is too little to help: a clause that
/// `fedhe simulate --check` and `fedhe study create` append to the budget.
pub(crate) fn ceiling_clause(c: &fedhe_algorithms::privacy::SignalCeiling) -> String {
    let verdict = if c.ratio < 1.0 {
        format!(
            ": below 1 the noise outweighs the most signal they can hold, whatever the data, \
             so its global steps are not expected to beat its members alone ({} members would \
             reach 1 at this ε)",
            c.members_for_one
        )
    } else {
        String::new()
    };
    format!(
        "; its {} global summaries of {} values carry signal at most {:.3} times their noise \
         (z = {:.2}){verdict}",
        c.releases, c.values, c.ratio, c.noise_multiplier
    )
}
