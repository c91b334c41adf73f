//! `fedhe audit`: the server's audit trail of a study (administrator; token
//! from FEDHE_ADMIN_TOKEN).

use super::ceremony::{admin_client, ServerArgs};
use super::say;
use crate::error::CliError;
use clap::Args;
use fedhe_crypto::text::escape_controls;

/// Arguments of `fedhe audit`.
#[derive(Args, Debug)]
pub struct AuditArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// The study whose trail to show.
    #[arg(long)]
    study: String,
    /// Print the entries as one JSON document.
    #[arg(long)]
    json: bool,
}

/// Runs `fedhe audit`: one line per state change (seq, time in unix ms,
/// actor, action, round, member, hash prefix, detail), or `--json`.
pub fn run(args: AuditArgs) -> Result<(), CliError> {
    let log = admin_client(&args.server)?.audit(&args.study)?;
    if args.json {
        say!(
            "{}",
            serde_json::to_string_pretty(&log).map_err(|e| CliError::Usage(e.to_string()))?
        )?;
        return Ok(());
    }
    for e in &log.entries {
        let round = e.round.map(|r| format!("round {r}")).unwrap_or_default();
        let hash = e
            .hash
            .as_deref()
            .map(|h| h.chars().take(16).collect::<String>())
            .unwrap_or_default();
        // The trail quotes ids members chose: printed with control characters escaped.
        say!(
            "{}",
            escape_controls(&format!(
                "{:>6} {} {:<10} {:<28} {:<9} {:<12} {:<16} {}",
                e.seq,
                e.at,
                e.actor,
                e.action,
                round,
                e.member.as_deref().unwrap_or(""),
                hash,
                e.detail.as_deref().unwrap_or("")
            ))
        )?;
    }
    Ok(())
}
