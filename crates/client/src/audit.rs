//! The member's side of the hash-chained audit trail (issue 45, item 9;
//! `fedhe_api::audit`): after every round's verified result the member
//! reads its ceremony's trail since the head it recorded last, verifies that
//! the new entries chain on from it, appends the new head to its journal
//! (`audit-heads.jsonl` in its study folder, one JSON [`AuditHead`] a line,
//! synced) and signs it to the server, which records it in the trail.
//! `fedhe audit --verify` later recomputes the whole chain and checks every
//! head of the journal.

use crate::ClientError;
use fedhe_api::audit::{verify_chain_after, AuditHead};
use std::io::Write;
use std::path::Path;

/// The member's journal of the heads it saw, in its study folder.
pub const AUDIT_HEADS_FILE: &str = "audit-heads.jsonl";

/// The heads recorded in `state_dir`'s journal, oldest first (none if there
/// is no journal). A line that is not a head is an error naming it.
pub fn read_heads(state_dir: &Path) -> Result<Vec<AuditHead>, ClientError> {
    let path = state_dir.join(AUDIT_HEADS_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(ClientError::Keys(format!("{}: {e}", path.display()))),
    };
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| {
                ClientError::Keys(format!(
                    "{} line {}: not a recorded audit head ({{\"seq\": N, \"chain\": HEX}}): {e}",
                    path.display(),
                    i + 1
                ))
            })
        })
        .collect()
}

/// Appends `head` to `state_dir`'s journal and syncs it.
pub fn append_head(state_dir: &Path, head: &AuditHead) -> Result<(), ClientError> {
    let path = state_dir.join(AUDIT_HEADS_FILE);
    let err = |e: std::io::Error| ClientError::Keys(format!("{}: {e}", path.display()));
    let mut line = serde_json::to_string(head).map_err(|e| ClientError::Decode(e.to_string()))?;
    line.push('\n');
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(err)?;
    f.write_all(line.as_bytes()).map_err(err)?;
    f.sync_all().map_err(err)
}

/// Reads `ceremony`'s trail after the last head `state_dir`'s journal
/// holds, verifies that it chains on from that head (from the ceremony's
/// genesis if none), records the new head and signs it to the server.
/// Returns the new head (`None` if the trail has no chained entry yet, or
/// nothing new). A trail that does not chain on is a verification error
/// naming the first entry that breaks.
pub fn observe_head(
    client: &dyn crate::member::Transport,
    ceremony: &str,
    state_dir: &Path,
) -> Result<Option<AuditHead>, ClientError> {
    let heads = read_heads(state_dir)?;
    let last = heads.iter().max_by_key(|h| h.seq);
    let log = client.ceremony_audit(ceremony, last.map_or(0, |h| h.seq))?;
    let check = verify_chain_after(ceremony, last, &log.entries, &[]).map_err(|b| {
        ClientError::Verification(fedhe_crypto::text::escape_controls(&b.to_string()))
    })?;
    let Some(head) = check.head.filter(|h| last.is_none_or(|l| h.seq > l.seq)) else {
        return Ok(None);
    };
    append_head(state_dir, &head)?;
    client.put_audit_head(ceremony, &head)?;
    Ok(Some(head))
}
