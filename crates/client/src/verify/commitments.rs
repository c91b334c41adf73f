//! Checks 1-4: the frozen commitment list, before a member reveals.

use super::*;

/// Checks 1-4: the frozen commitment list before revealing. Returns the
/// list's hash.
pub fn verify_commitments(ev: &CommitmentEvidence<'_>) -> Result<String, Refusal> {
    let refuse = |kind: RefusalKind, reason: String| Refusal {
        study: ev.study.to_string(),
        round: ev.round,
        kind,
        reason,
    };
    let list_hash = ev.list.list_hash.clone().ok_or_else(|| {
        refuse(
            RefusalKind::Malformed,
            "the commitment list is not frozen".into(),
        )
    })?;
    if matches!(
        ev.signatures,
        CommitmentSignatures::VerifiedInThisSession(_)
    ) {
        return Ok(list_hash);
    }
    let values = ev.list.values.ok_or_else(|| {
        refuse(
            RefusalKind::Malformed,
            "the commitment list has no value count".into(),
        )
    })?;
    let mut entries = ev.list.commitments.clone();
    entries.sort_by(|a, b| a.member.cmp(&b.member));
    if CommitmentList::canonical_hash(ev.study, ev.round, &entries) != list_hash {
        return Err(refuse(
            RefusalKind::Substituted,
            "the commitment list's hash is not the hash of its entries".into(),
        ));
    }
    let chosen = match &ev.signatures {
        CommitmentSignatures::Check(checks) => checks.chosen(entries.len(), COMMITMENT_SAMPLE),
        CommitmentSignatures::CheckedWhenRecorded
        | CommitmentSignatures::VerifiedInThisSession(_) => {
            vec![false; entries.len()]
        }
    };
    let mut seen = BTreeSet::new();
    // One ciphertext (or one c1) under two members' names would be summed
    // twice: a colluding server and member could double one contribution.
    let mut hashes = std::collections::BTreeMap::new();
    let mut c1_hashes = std::collections::BTreeMap::new();
    let mut batch = SignatureBatch::new();
    for (c, check) in entries.iter().zip(chosen) {
        if !seen.insert(c.member.as_str()) {
            return Err(refuse(
                RefusalKind::Duplicate,
                format!("{} is listed twice", c.member),
            ));
        }
        let key = ev
            .members
            .key(&c.member)
            .map_err(|e| refuse(RefusalKind::Unaccounted, e))?;
        let hash: [u8; 32] = fedhe_api::signing::decode_fixed(&c.hash, "hash")
            .map_err(|e| refuse(RefusalKind::Malformed, e.to_string()))?;
        let c1_hash = committed_c1_hash(c).map_err(|e| refuse(RefusalKind::Malformed, e))?;
        if let Some(other) = hashes.insert(hash, c.member.as_str()) {
            return Err(refuse(
                RefusalKind::Duplicate,
                format!("{} and {other} committed to the same ciphertext", c.member),
            ));
        }
        if let Some(other) = c1_hashes.insert(c1_hash, c.member.as_str()) {
            return Err(refuse(
                RefusalKind::Duplicate,
                format!(
                    "{} and {other} committed to the same c1 commitment",
                    c.member
                ),
            ));
        }
        if c.values != values {
            return Err(refuse(
                RefusalKind::Shape,
                format!(
                    "the commitment of {} holds {} values; the list's value count is {values}",
                    c.member, c.values
                ),
            ));
        }
        if check {
            let statement = round_commitment_statement(
                ev.study,
                &c.member,
                ev.round,
                &hash,
                c.values,
                ev.spec_hash,
                &c1_hash,
            );
            batch
                .push(key, statement, &c.signature, "commitment", &c.member)
                .map_err(|(m, e)| refuse(RefusalKind::Signature, commitment_not_verified(m, e)))?;
        }
    }
    batch
        .verify()
        .map_err(|(m, e)| refuse(RefusalKind::Signature, commitment_not_verified(m, e)))?;
    if seen.len() < ev.min_contributors.max(1) {
        return Err(refuse(
            RefusalKind::TooFew,
            format!(
                "{} distinct members committed; at least {} are required",
                seen.len(),
                ev.min_contributors.max(1)
            ),
        ));
    }
    if let Some((me, own)) = ev.own {
        match entries.iter().find(|c| c.member == me) {
            None => {
                return Err(refuse(
                    RefusalKind::Own,
                    format!("my own commitment ({me}) is not listed"),
                ))
            }
            Some(c)
                if c.hash != blake3::hash(own).to_hex().as_str()
                    || ev
                        .own_c1_commitment_hash
                        .is_some_and(|h| c.c1_commitment_hash != hex::encode(h)) =>
            {
                return Err(refuse(
                    RefusalKind::Own,
                    format!("the commitment listed for me ({me}) is not the one I made"),
                ))
            }
            Some(_) => {}
        }
    }
    Ok(list_hash)
}

/// The hash of a committed contribution's c1 commitment, which its signed
/// statement names.
pub(super) fn committed_c1_hash(c: &fedhe_api::CommittedContribution) -> Result<[u8; 32], String> {
    fedhe_api::signing::decode_fixed(&c.c1_commitment_hash, "c1_commitment_hash").map_err(|e| {
        format!(
            "the commitment of {} names no valid c1 commitment hash ({e})",
            c.member
        )
    })
}

fn commitment_not_verified(member: &str, e: SignatureError) -> String {
    format!(
        "the commitment of {member} does not verify for the study spec I recorded ({e}): \
         it was made for another spec, or forged"
    )
}
