//! Verify before decrypt (DESIGN.md §2 step 4, §6). A member produces a
//! decryption share of an aggregate only if
//!
//! 1. the aggregate's hash is the one the server lists with the contributions;
//! 2. every listed contribution is signed by a distinct ceremony member over
//!    (study, round, hash), and the bytes it fetched have that hash;
//! 3. at least `min_contributors` members contributed (the member's own
//!    floor, not the server's word);
//! 4. its own contribution, if it sent one, is listed byte for byte;
//! 5. the aggregate is exactly the sum of the listed contributions;
//! 6. it never produced a share for this round before ([`crate::ShareLedger`]).
//!
//! So a server that deviates cannot have one member's contribution decrypted
//! alone, cannot decrypt a round twice over different member sets, and cannot
//! slip in contributions no member signed.

use fedhe_api::signing::{parse_public_key, upload_statement, verify_hex};
use fedhe_api::{ContributionList, MemberSpec, UploadKind};
use fedhe_crypto::{EncryptedVector, Params, WireObject};
use std::collections::BTreeSet;
use std::sync::Arc;

/// Why a member refused to produce a decryption share.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("refusing to decrypt round {round} of study {study}: {reason}")]
pub struct Refusal {
    /// The study.
    pub study: String,
    /// The round.
    pub round: u64,
    /// What check failed.
    pub reason: String,
}

/// What a member checks before decrypting.
pub struct Evidence<'a> {
    /// The study.
    pub study: &'a str,
    /// The round.
    pub round: u64,
    /// The ceremony's members with their identity keys (from the member's own
    /// verified transcript, not from the server's word of the moment).
    pub members: &'a [MemberSpec],
    /// The member's own floor on distinct contributors.
    pub min_contributors: usize,
    /// The server's list of contributions.
    pub list: &'a ContributionList,
    /// The bytes of each listed contribution, as fetched.
    pub contributions: &'a [(String, Vec<u8>)],
    /// The aggregate's bytes, as fetched.
    pub aggregate: &'a [u8],
    /// This member and its own contribution, if it sent one.
    pub own: Option<(&'a str, &'a [u8])>,
}

/// Runs checks 1-5 and returns the decoded aggregate.
pub fn verify_before_decrypt(
    params: &Arc<Params>,
    ev: &Evidence<'_>,
) -> Result<EncryptedVector, Refusal> {
    let refuse = |reason: String| Refusal {
        study: ev.study.to_string(),
        round: ev.round,
        reason,
    };
    let aggregate_hash = blake3::hash(ev.aggregate).to_hex().to_string();
    if ev.list.aggregate_hash.as_deref() != Some(aggregate_hash.as_str()) {
        return Err(refuse(format!(
            "the aggregate's hash {aggregate_hash} is not the listed {:?}",
            ev.list.aggregate_hash
        )));
    }
    let mut seen = BTreeSet::new();
    for upload in &ev.list.contributions {
        let member = ev
            .members
            .iter()
            .find(|m| m.id == upload.member)
            .ok_or_else(|| refuse(format!("{} is not a ceremony member", upload.member)))?;
        if !seen.insert(upload.member.as_str()) {
            return Err(refuse(format!("{} is listed twice", upload.member)));
        }
        let key = parse_public_key(&member.identity_key)
            .map_err(|e| refuse(format!("identity key of {}: {e}", member.id)))?;
        let hash: [u8; 32] = fedhe_api::signing::decode_fixed(&upload.hash, "hash")
            .map_err(|e| refuse(e.to_string()))?;
        verify_hex(
            &key,
            &upload_statement(
                UploadKind::Contribution,
                ev.study,
                &member.id,
                ev.round,
                &hash,
            ),
            &upload.signature,
            "contribution",
        )
        .map_err(|e| refuse(format!("the contribution listed for {}: {e}", member.id)))?;
        let bytes = ev
            .contributions
            .iter()
            .find(|(m, _)| *m == upload.member)
            .map(|(_, b)| b)
            .ok_or_else(|| {
                refuse(format!(
                    "the contribution of {} was not fetched",
                    upload.member
                ))
            })?;
        if blake3::hash(bytes).as_bytes() != &hash {
            return Err(refuse(format!(
                "the bytes served for {} do not have the signed hash",
                upload.member
            )));
        }
    }
    if seen.len() < ev.min_contributors.max(1) {
        return Err(refuse(format!(
            "{} distinct members contributed; at least {} are required",
            seen.len(),
            ev.min_contributors.max(1)
        )));
    }
    if let Some((me, own)) = ev.own {
        let listed = ev.list.contributions.iter().find(|u| u.member == me);
        match listed {
            None => {
                return Err(refuse(format!(
                    "my own contribution ({me}) is not included"
                )))
            }
            Some(u) if u.hash != blake3::hash(own).to_hex().as_str() => {
                return Err(refuse(format!(
                    "the contribution listed for me ({me}) is not the one I sent"
                )))
            }
            Some(_) => {}
        }
    }
    let mut sum: Option<EncryptedVector> = None;
    for upload in &ev.list.contributions {
        let bytes = ev
            .contributions
            .iter()
            .find(|(m, _)| *m == upload.member)
            .map(|(_, b)| b)
            .ok_or_else(|| {
                refuse(format!(
                    "the contribution of {} was not fetched",
                    upload.member
                ))
            })?;
        let v = EncryptedVector::from_bytes(params, bytes)
            .map_err(|e| refuse(format!("the contribution of {}: {e}", upload.member)))?;
        match &mut sum {
            None => sum = Some(v),
            Some(acc) => acc
                .add_assign(&v)
                .map_err(|e| refuse(format!("the contribution of {}: {e}", upload.member)))?,
        }
    }
    let sum = sum.ok_or_else(|| refuse("no contributions are listed".into()))?;
    if sum.to_bytes(params) != ev.aggregate {
        return Err(refuse(
            "the aggregate is not the sum of the listed contributions".into(),
        ));
    }
    Ok(sum)
}
