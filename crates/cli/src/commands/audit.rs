//! `fedhe audit`: the server's audit trail of a study (administrator; token
//! from FEDHE_ADMIN_TOKEN), or, with `--verify`, a member's check of its
//! ceremony's hash-chained trail against the heads it recorded (issue 45,
//! item 9; `fedhe_api::audit`).

use super::agent::member_of;
use super::ceremony::{admin_client, member_client, PassphraseArgs, ServerArgs};
use super::say;
use crate::error::CliError;
use clap::Args;
use fedhe_api::audit::head_statement;
use fedhe_api::audit::{signed_head_of, verify_chain, ChainBreak, HEAD_ACTION};
use fedhe_api::signing::verify_hex;
use fedhe_client::{agent::state_dir, audit::read_heads, ClientError};
use fedhe_crypto::text::escape_controls;
use std::path::PathBuf;

/// Arguments of `fedhe audit`.
#[derive(Args, Debug)]
pub struct AuditArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// The study whose trail to show (with `--verify`: whose ceremony's
    /// trail to verify, against the heads recorded in the study's folder).
    #[arg(long)]
    study: String,
    /// Print the entries as one JSON document.
    #[arg(long, conflicts_with = "verify")]
    json: bool,
    /// As a member (`--keys`): fetch the ceremony's whole trail, recompute
    /// its hash chain from the genesis, and check every head this member
    /// recorded (`KEYS/studies/STUDY/audit-heads.jsonl`) and every head a
    /// member signed into the trail; the first entry that breaks is named by
    /// its seq, and the exit status is non-zero.
    #[arg(long, requires = "keys")]
    verify: bool,
    /// The member's key folder (with `--verify`).
    #[arg(long, value_name = "DIR")]
    keys: Option<PathBuf>,
    #[command(flatten)]
    passphrase: PassphraseArgs,
}

/// Runs `fedhe audit`: one line per state change (seq, time in unix ms,
/// actor, action, round, member, hash prefix, detail), or `--json`, or
/// `--verify`.
pub fn run(args: AuditArgs) -> Result<(), CliError> {
    if args.verify {
        return verify(&args);
    }
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

/// `fedhe audit --verify`.
fn verify(args: &AuditArgs) -> Result<(), CliError> {
    let keys = args
        .keys
        .as_deref()
        .ok_or_else(|| CliError::Usage("--verify needs the member's --keys DIR".into()))?;
    let dir = args.passphrase.open(keys)?;
    let member = member_of(&dir)?;
    let heads = read_heads(&state_dir(&dir, &args.study)?)?;
    let client = member_client(&args.server, &member, &dir)?;
    let ceremony = client.study(&args.study)?.spec.ceremony;
    let log = client.ceremony_audit(&ceremony, 0)?;
    let broken = |b: ChainBreak| {
        CliError::Client(ClientError::Verification(escape_controls(&format!(
            "ceremony {ceremony}: {b}"
        ))))
    };
    let check = verify_chain(&ceremony, &log.entries, &heads).map_err(broken)?;
    // Every head a member signed into the trail, under its identity key in
    // the ceremony's transcript (the head itself was checked above).
    let transcript = client.transcript(&ceremony)?;
    for e in log.entries.iter().filter(|e| e.action == HEAD_ACTION) {
        let Some((head, signature)) = signed_head_of(e) else {
            return Err(broken(ChainBreak {
                seq: e.seq,
                reason: "a signed head whose detail is not `seq N signature HEX`".into(),
            }));
        };
        let signer = e.member.as_deref().unwrap_or("");
        let key = transcript
            .entries
            .iter()
            .find(|t| t.member == signer)
            .and_then(|t| fedhe_api::signing::parse_public_key(&t.identity_key).ok());
        let valid = key.is_some_and(|k| {
            verify_hex(
                &k,
                &head_statement(&ceremony, signer, &head),
                &signature,
                "audit head",
            )
            .is_ok()
        });
        if !valid {
            return Err(broken(ChainBreak {
                seq: e.seq,
                reason: format!(
                    "the head signed by {signer} does not verify under its identity key (a forged or rewritten statement)"
                ),
            }));
        }
    }
    let head = check.head.as_ref().map_or_else(
        || "none".to_string(),
        |h| format!("seq {} chain {}", h.seq, h.chain),
    );
    say!(
        "{}",
        escape_controls(&format!(
            "ceremony {ceremony}: the audit trail verifies: {} entries chained from the genesis{}, {} recorded heads of mine and {} signed heads checked; head {head}",
            check.entries,
            if check.legacy > 0 {
                format!(" (after {} entries written before the chain existed, not covered)", check.legacy)
            } else {
                String::new()
            },
            check.heads,
            check.signed_heads,
        ))
    )?;
    Ok(())
}
