//! The audit trail (`GET /v1/audit`, `GET /v1/ceremonies/{c}/audit`) and its
//! hash chain (issue 45, item 9).
//!
//! # The chain
//!
//! Every entry of a ceremony — its own and those of its studies, whose rows
//! name it too — is chained to the one before it in that ceremony:
//!
//! ```text
//! genesis(c)  = BLAKE3("fedhe-audit-genesis-v1\n" ‖ str(c))
//! chain(e)    = BLAKE3("fedhe-audit-chain-v1\n" ‖ prev ‖ be64(seq) ‖ be64(at)
//!                      ‖ str(actor) ‖ str(action) ‖ opt(ceremony) ‖ opt(study)
//!                      ‖ optu64(round) ‖ opt(member) ‖ opt(hash) ‖ opt(detail))
//! str(s)      = be32(len(s)) ‖ s (UTF-8)
//! opt(None)   = 0x00            opt(Some(s))    = 0x01 ‖ str(s)
//! optu64(None)= 0x00            optu64(Some(r)) = 0x01 ‖ be64(r)
//! ```
//!
//! where `prev` is the chain value of the ceremony's previous entry, or
//! `genesis(c)` for its first. The server stores both with each row. A
//! member records the head it saw (seq, chain) in its study folder after a
//! round's result ([`AuditHead`]), and signs it to the server
//! ([`SignedAuditHead`], itself an entry of the trail), so
//! [`verify_chain`] run with that journal detects a rewritten, deleted,
//! inserted or reordered entry at or before any recorded head, even if the
//! server recomputed every chain value after its edit.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use utoipa::ToSchema;

/// The domain tag of an entry's chain value.
pub const CHAIN_DOMAIN: &[u8] = b"fedhe-audit-chain-v1\n";
/// The domain tag of a ceremony's genesis value.
pub const GENESIS_DOMAIN: &[u8] = b"fedhe-audit-genesis-v1\n";
/// The label of the statement a member signs of a head it saw.
pub const HEAD_STATEMENT: &str = "fedhe-audit-head-v1";
/// The action of the entry that records a member's signed head.
pub const HEAD_ACTION: &str = "audit.head_signed";

/// One state change of the server, as recorded in its append-only audit
/// table. Ids and hashes only: never a secret key, a plaintext value, a
/// passphrase or a token.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct AuditEntry {
    /// Position in the trail (increasing; gaps are possible on PostgreSQL,
    /// and between a ceremony's entries, which share the numbering with
    /// other ceremonies').
    pub seq: i64,
    /// When, unix milliseconds.
    pub at: i64,
    /// Who caused it: `admin`, a member id, or `server` (deadlines,
    /// aggregation, combining).
    pub actor: String,
    /// What happened, e.g. `ceremony.created`, `contribution.accepted`,
    /// `round.aggregated`, `round.result_published`, `round.failed`.
    pub action: String,
    /// The ceremony concerned.
    pub ceremony: Option<String>,
    /// The study concerned.
    pub study: Option<String>,
    /// The round concerned.
    pub round: Option<u64>,
    /// The member concerned.
    pub member: Option<String>,
    /// BLAKE3 (hex) of the object concerned: an upload, an aggregate, a
    /// commitment, a collective key.
    pub hash: Option<String>,
    /// More about it (a failure's reason, a parameter set).
    pub detail: Option<String>,
    /// The chain value of the ceremony's entry before this one (hex), or its
    /// genesis ([`genesis`]); `None` for an entry written before the chain
    /// existed.
    #[serde(default)]
    pub prev: Option<String>,
    /// This entry's chain value (hex, [`AuditEntry::chain_value`]); `None`
    /// for an entry written before the chain existed.
    #[serde(default)]
    pub chain: Option<String>,
}

/// `GET /v1/audit?study=S` (or `?ceremony=C`): the trail, oldest first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct AuditLog {
    /// The entries, by `seq`.
    pub entries: Vec<AuditEntry>,
}

/// A chain head a member saw: the seq of the latest entry of its
/// ceremony's trail, and that entry's chain value (hex). One JSON line of
/// the member's journal (`KEYS/studies/STUDY/audit-heads.jsonl`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct AuditHead {
    /// The entry's seq.
    pub seq: i64,
    /// Its chain value, hex.
    pub chain: String,
}

/// `PUT /v1/ceremonies/{c}/audit-heads/{member}`: a head the member saw,
/// signed ([`head_statement`]), so that every member can hold the server to
/// it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct SignedAuditHead {
    /// The head.
    #[serde(flatten)]
    pub head: AuditHead,
    /// The member's ed25519 signature (hex) of [`head_statement`].
    pub signature: String,
}

/// The statement a member signs of a head it saw in `ceremony`'s trail.
pub fn head_statement(ceremony: &str, member: &str, head: &AuditHead) -> Vec<u8> {
    format!(
        "{HEAD_STATEMENT}\n{ceremony}\n{member}\n{}\n{}",
        head.seq,
        head.chain.to_ascii_lowercase()
    )
    .into_bytes()
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    // An id, hash or detail longer than 4 GiB cannot be stored; saturating
    // keeps the encoding total without a panic.
    out.extend_from_slice(&u32::try_from(s.len()).unwrap_or(u32::MAX).to_be_bytes());
    out.extend_from_slice(s.as_bytes());
}

fn put_opt(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        None => out.push(0),
        Some(s) => {
            out.push(1);
            put_str(out, s);
        }
    }
}

/// The chain value a ceremony's first entry links to.
pub fn genesis(ceremony: &str) -> [u8; 32] {
    let mut bytes = GENESIS_DOMAIN.to_vec();
    put_str(&mut bytes, ceremony);
    *blake3::hash(&bytes).as_bytes()
}

impl AuditEntry {
    /// The bytes [`Self::chain_value`] hashes after `prev` is prepended
    /// (the module's layout, without the domain tag and `prev`).
    pub fn canonical_fields(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(128);
        out.extend_from_slice(&self.seq.to_be_bytes());
        out.extend_from_slice(&self.at.to_be_bytes());
        put_str(&mut out, &self.actor);
        put_str(&mut out, &self.action);
        put_opt(&mut out, self.ceremony.as_deref());
        put_opt(&mut out, self.study.as_deref());
        match self.round {
            None => out.push(0),
            Some(r) => {
                out.push(1);
                out.extend_from_slice(&r.to_be_bytes());
            }
        }
        put_opt(&mut out, self.member.as_deref());
        put_opt(&mut out, self.hash.as_deref());
        put_opt(&mut out, self.detail.as_deref());
        out
    }

    /// This entry's chain value after `prev` (its stored `prev` and `chain`
    /// are not part of it).
    pub fn chain_value(&self, prev: &[u8; 32]) -> [u8; 32] {
        let mut h = blake3::Hasher::new();
        h.update(CHAIN_DOMAIN);
        h.update(prev);
        h.update(&self.canonical_fields());
        *h.finalize().as_bytes()
    }

    /// The head this entry makes: its seq and its stored chain value.
    pub fn head(&self) -> Option<AuditHead> {
        Some(AuditHead {
            seq: self.seq,
            chain: self.chain.clone()?,
        })
    }
}

/// Where and why a trail does not verify.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChainBreak {
    /// The seq of the first entry (or recorded head) that does not verify.
    pub seq: i64,
    /// What is wrong there.
    pub reason: String,
}

impl std::fmt::Display for ChainBreak {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the audit trail breaks at seq {}: {}",
            self.seq, self.reason
        )
    }
}

impl std::error::Error for ChainBreak {}

/// What [`verify_chain`] checked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChainCheck {
    /// Entries whose chain value was recomputed and matched.
    pub entries: usize,
    /// Entries written before the chain existed (at the trail's start,
    /// not covered).
    pub legacy: usize,
    /// Recorded heads found in the recomputed chain.
    pub heads: usize,
    /// Heads signed by members into the trail ([`HEAD_ACTION`]) found in
    /// the recomputed chain.
    pub signed_heads: usize,
    /// The recomputed head of the trail.
    pub head: Option<AuditHead>,
}

fn hex32(text: &str) -> Option<[u8; 32]> {
    let mut out = [0u8; 32];
    (text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| hex::decode_to_slice(text, &mut out).ok())
        .flatten()
        .map(|()| out)
}

/// The head a [`HEAD_ACTION`] entry records: `hash` is the chain value,
/// `detail` starts `seq N `.
pub fn signed_head_of(entry: &AuditEntry) -> Option<(AuditHead, String)> {
    if entry.action != HEAD_ACTION {
        return None;
    }
    let detail = entry.detail.as_deref()?;
    let mut words = detail.split(' ');
    let (Some("seq"), Some(seq), Some("signature"), Some(sig)) =
        (words.next(), words.next(), words.next(), words.next())
    else {
        return None;
    };
    Some((
        AuditHead {
            seq: seq.parse().ok()?,
            chain: entry.hash.clone()?,
        },
        sig.to_string(),
    ))
}

/// Verifies `entries`, the whole trail of `ceremony` as served (oldest
/// first), against the `heads` a member recorded: every entry must name the
/// ceremony, follow the one before by a larger seq, link to its chain value
/// (`prev`) and hash to its own (`chain`); every recorded head, and every
/// head a member signed into the trail, must be an entry of the recomputed
/// chain with that value. Entries written before the chain existed are
/// allowed only at the start. Returns the first break by seq.
pub fn verify_chain(
    ceremony: &str,
    entries: &[AuditEntry],
    heads: &[AuditHead],
) -> Result<ChainCheck, ChainBreak> {
    verify_chain_after(ceremony, None, entries, heads)
}

/// [`verify_chain`] of the entries after `start`, a head verified before
/// (the trail's start if `None`): the first entry must link to it. Heads
/// (recorded or signed into the trail) before `start` are not checked (a
/// full [`verify_chain`] checks them).
pub fn verify_chain_after(
    ceremony: &str,
    start: Option<&AuditHead>,
    entries: &[AuditEntry],
    heads: &[AuditHead],
) -> Result<ChainCheck, ChainBreak> {
    let mut check = ChainCheck::default();
    let mut prev = genesis(ceremony);
    let mut last: Option<i64> = None;
    let mut computed: BTreeMap<i64, [u8; 32]> = BTreeMap::new();
    if let Some(h) = start {
        prev = hex32(&h.chain).ok_or_else(|| ChainBreak {
            seq: h.seq,
            reason: "the head to start from is not 64 hex digits".into(),
        })?;
        last = Some(h.seq);
        computed.insert(h.seq, prev);
    }
    let floor = start.map_or(i64::MIN, |h| h.seq);
    let mut signed = Vec::new();
    for e in entries {
        let broken = |reason: String| ChainBreak { seq: e.seq, reason };
        if let Some(l) = last {
            if e.seq <= l {
                return Err(broken(format!(
                    "it follows seq {l}: the trail is out of order (entries reordered or duplicated)"
                )));
            }
        }
        if e.ceremony.as_deref() != Some(ceremony) {
            return Err(broken(
                "the entry does not name this ceremony (an entry of another trail, or its ceremony rewritten)"
                    .into(),
            ));
        }
        let (stored_prev, stored_chain) =
            match (e.prev.as_deref(), e.chain.as_deref()) {
                (None, None) if computed.is_empty() => {
                    check.legacy += 1;
                    last = Some(e.seq);
                    continue;
                }
                (None, None) => return Err(broken(
                    "the entry has no chain value, after chained entries (its chain was erased)"
                        .into(),
                )),
                (Some(p), Some(c)) => match (hex32(p), hex32(c)) {
                    (Some(p), Some(c)) => (p, c),
                    _ => {
                        return Err(broken(
                            "its prev or chain value is not 64 hex digits".into(),
                        ))
                    }
                },
                _ => return Err(broken("it has one of prev and chain, not both".into())),
            };
        if stored_prev != prev {
            let before = last.map_or_else(|| "the genesis".to_string(), |l| format!("seq {l}"));
            return Err(broken(format!(
                "it does not link to the entry before it ({before}): an entry was deleted, inserted or reordered before it"
            )));
        }
        let value = e.chain_value(&prev);
        if value != stored_chain {
            return Err(broken(
                "its fields do not hash to its chain value: the entry was rewritten".into(),
            ));
        }
        if let Some(s) = signed_head_of(e) {
            signed.push((e.seq, s.0));
        }
        computed.insert(e.seq, value);
        check.entries += 1;
        prev = value;
        last = Some(e.seq);
    }
    let held = |head: &AuditHead, whose: &str| -> Result<(), ChainBreak> {
        let broken = |reason: String| ChainBreak {
            seq: head.seq,
            reason,
        };
        match computed.get(&head.seq) {
            None if last.is_some_and(|l| head.seq > l) => Err(broken(format!(
                "{whose} head at seq {} is past the trail's end (seq {}): entries were deleted from its end",
                head.seq,
                last.unwrap_or(0)
            ))),
            None => Err(broken(format!(
                "{whose} head is not an entry of the recomputed chain: the entry was deleted or renumbered"
            ))),
            Some(v) if Some(*v) != hex32(&head.chain) => Err(broken(format!(
                "the recomputed chain value here is not {whose} head: the trail at or before seq {} was rewritten since it was seen",
                head.seq
            ))),
            Some(_) => Ok(()),
        }
    };
    // The earliest break first: the member's heads and the signed ones in
    // order of seq.
    let mut all: Vec<(&AuditHead, &str)> = heads.iter().map(|h| (h, "my recorded")).collect();
    all.extend(signed.iter().map(|(_, h)| (h, "a member's signed")));
    all.retain(|(h, _)| h.seq >= floor);
    all.sort_by_key(|(h, _)| h.seq);
    for (h, whose) in all {
        held(h, whose)?;
    }
    check.heads = heads.iter().filter(|h| h.seq >= floor).count();
    check.signed_heads = signed.len();
    check.head = last.and_then(|l| {
        computed.get(&l).map(|v| AuditHead {
            seq: l,
            chain: hex::encode(v),
        })
    });
    Ok(check)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(seq: i64, action: &str, detail: Option<&str>) -> AuditEntry {
        AuditEntry {
            seq,
            at: 1_700_000_000_000 + seq,
            actor: "server".into(),
            action: action.into(),
            ceremony: Some("c".into()),
            study: Some("s".into()),
            round: Some(3),
            member: None,
            hash: Some("ab".repeat(32)),
            detail: detail.map(str::to_string),
            prev: None,
            chain: None,
        }
    }

    /// A chained trail of `n` entries as the server stores them.
    fn trail(n: i64) -> Vec<AuditEntry> {
        let mut prev = genesis("c");
        (1..=n)
            .map(|seq| {
                let mut e = entry(seq * 2, "round.opened", Some("deadline 9"));
                let value = e.chain_value(&prev);
                e.prev = Some(hex::encode(prev));
                e.chain = Some(hex::encode(value));
                prev = value;
                e
            })
            .collect()
    }

    #[test]
    fn the_chain_value_is_blake3_of_the_documented_layout() {
        // Written out byte by byte, independently of the encoder.
        let mut g = b"fedhe-audit-genesis-v1\n".to_vec();
        g.extend_from_slice(&[0, 0, 0, 1, b'c']);
        assert_eq!(genesis("c"), *blake3::hash(&g).as_bytes());

        let prev = [7u8; 32];
        let e = AuditEntry {
            seq: 258,
            at: 5,
            actor: "m1".into(),
            action: "x.y".into(),
            ceremony: Some("c".into()),
            study: None,
            round: Some(2),
            member: Some("m1".into()),
            hash: None,
            detail: Some("é".into()),
            prev: Some("ignored".into()),
            chain: Some("ignored".into()),
        };
        let mut b = b"fedhe-audit-chain-v1\n".to_vec();
        b.extend_from_slice(&[7; 32]);
        b.extend_from_slice(&[0, 0, 0, 0, 0, 0, 1, 2]); // seq 258
        b.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 5]); // at
        b.extend_from_slice(&[0, 0, 0, 2, b'm', b'1']); // actor
        b.extend_from_slice(&[0, 0, 0, 3, b'x', b'.', b'y']); // action
        b.extend_from_slice(&[1, 0, 0, 0, 1, b'c']); // ceremony
        b.push(0); // study: none
        b.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0, 2]); // round 2
        b.extend_from_slice(&[1, 0, 0, 0, 2, b'm', b'1']); // member
        b.push(0); // hash: none
        b.extend_from_slice(&[1, 0, 0, 0, 2, 0xc3, 0xa9]); // detail "é"
        assert_eq!(e.chain_value(&prev), *blake3::hash(&b).as_bytes());
        // None and the empty string differ.
        let mut empty = e.clone();
        empty.study = Some(String::new());
        assert_ne!(empty.chain_value(&prev), e.chain_value(&prev));
    }

    #[test]
    fn an_untouched_trail_verifies_and_each_tampering_is_named_by_seq() {
        let t = trail(5);
        let heads = [t[1].head().unwrap(), t[4].head().unwrap()];
        let ok = verify_chain("c", &t, &heads).unwrap();
        assert_eq!((ok.entries, ok.heads, ok.legacy), (5, 2, 0));
        assert_eq!(ok.head, t[4].head());

        // Rewritten: the detail of seq 6.
        let mut r = t.clone();
        r[2].detail = Some("deadline 10".into());
        let b = verify_chain("c", &r, &[]).unwrap_err();
        assert_eq!(b.seq, 6, "{b}");
        assert!(b.reason.contains("rewritten"), "{b}");

        // Deleted: seq 6; seq 8 no longer links.
        let mut d = t.clone();
        d.remove(2);
        let b = verify_chain("c", &d, &[]).unwrap_err();
        assert_eq!(b.seq, 8, "{b}");
        assert!(b.reason.contains("deleted"), "{b}");

        // Reordered: two entries swapped.
        let mut o = t.clone();
        o.swap(1, 2);
        assert_eq!(verify_chain("c", &o, &[]).unwrap_err().seq, 6);

        // Rewritten and every later chain value recomputed: only the
        // member's recorded head catches it.
        let mut again = t.clone();
        again[2].detail = Some("deadline 10".into());
        let mut prev = hex32(again[1].chain.as_deref().unwrap()).unwrap();
        for e in &mut again[2..] {
            let v = e.chain_value(&prev);
            e.prev = Some(hex::encode(prev));
            e.chain = Some(hex::encode(v));
            prev = v;
        }
        verify_chain("c", &again, &[]).unwrap();
        let b = verify_chain("c", &again, &heads).unwrap_err();
        assert_eq!(b.seq, 10, "{b}");
        assert!(b.reason.contains("rewritten"), "{b}");

        // Truncated after a recorded head.
        let b = verify_chain("c", &t[..3], &heads).unwrap_err();
        assert!(b.reason.contains("past the trail's end"), "{b}");

        // Another ceremony's trail does not verify as this one's.
        assert_eq!(verify_chain("d", &t, &[]).unwrap_err().seq, 2);
        // Malformed chain values are a break, not a panic.
        let mut m = t.clone();
        m[0].chain = Some("zz".into());
        assert_eq!(verify_chain("c", &m, &[]).unwrap_err().seq, 2);
    }

    #[test]
    fn a_trail_verifies_on_from_a_head_and_legacy_entries_only_lead() {
        let t = trail(4);
        let start = t[1].head().unwrap();
        let check = verify_chain_after("c", Some(&start), &t[2..], &[]).unwrap();
        assert_eq!((check.entries, check.head), (2, t[3].head()));
        // The entries after another head do not chain on.
        let other = t[0].head().unwrap();
        assert_eq!(
            verify_chain_after("c", Some(&other), &t[2..], &[])
                .unwrap_err()
                .seq,
            6
        );
        // Unchained entries before the chain: counted, not covered; after
        // it: a break.
        let mut legacy = vec![entry(1, "ceremony.created", None)];
        legacy.extend(trail(2));
        assert_eq!(verify_chain("c", &legacy, &[]).unwrap().legacy, 1);
        let mut erased = trail(3);
        erased[1].prev = None;
        erased[1].chain = None;
        assert_eq!(verify_chain("c", &erased, &[]).unwrap_err().seq, 4);
    }

    #[test]
    fn a_signed_head_in_the_trail_must_be_in_the_chain() {
        let mut t = trail(2);
        let head = t[0].head().unwrap();
        let mut e = entry(
            10,
            HEAD_ACTION,
            Some(&format!("seq {} signature ff", head.seq)),
        );
        e.hash = Some(head.chain.clone());
        let prev = hex32(t[1].chain.as_deref().unwrap()).unwrap();
        let v = e.chain_value(&prev);
        e.prev = Some(hex::encode(prev));
        e.chain = Some(hex::encode(v));
        t.push(e);
        assert_eq!(verify_chain("c", &t, &[]).unwrap().signed_heads, 1);
        assert_eq!(signed_head_of(&t[2]), Some((head, "ff".to_string())));
        // The head it names rewritten (its chain value recomputed too).
        let mut r = t.clone();
        r[0].at += 1;
        let mut prev = genesis("c");
        for e in &mut r {
            let v = e.chain_value(&prev);
            e.prev = Some(hex::encode(prev));
            e.chain = Some(hex::encode(v));
            prev = v;
        }
        let b = verify_chain("c", &r, &[]).unwrap_err();
        assert!(b.reason.contains("signed head"), "{b}");
    }
}
