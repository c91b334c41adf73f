//! Checks 5-8: the aggregate, before a member makes its decryption share.

use super::*;

/// Runs checks 1-7 and returns the decoded aggregate.
///
/// Check 7's sum is checked on digests (`fedhe_crypto::sum_digest`): every
/// listed contribution counts by the digest this member computes from its
/// bytes, if it fetched them (and then a signed digest of it, if any, must
/// be the same), or else by its contributor's signed digest on the
/// challenge of this aggregate and list. The aggregate must have the
/// encoding of the contributions fetched (at least one must be), and its
/// digest must be the sum of theirs.
///
/// With [`Evidence::c1_carries`], also the c1 check (module docs, check 7).
///
/// One signature per contributor is checked, all in one batch: its digest
/// statement, which names the contribution's hash and the commitment list
/// it was revealed against and so says all its reveal says, or, if it sent
/// no digest, its reveal.
pub fn verify_before_decrypt(
    params: &Arc<Params>,
    ev: &Evidence<'_>,
) -> Result<EncryptedVector, Refusal> {
    let c = &ev.commitments;
    let refuse = |kind: RefusalKind, reason: String| Refusal {
        study: c.study.to_string(),
        round: c.round,
        kind,
        reason,
    };
    let list_hash = verify_commitments(c)?;
    let aggregate_hash = blake3::hash(ev.aggregate);
    if ev.list.aggregate_hash.as_deref() != Some(aggregate_hash.to_hex().as_str()) {
        return Err(refuse(
            RefusalKind::Substituted,
            format!(
                "the aggregate's hash {} is not the listed {:?}",
                aggregate_hash.to_hex(),
                ev.list.aggregate_hash
            ),
        ));
    }
    let aggregate = EncryptedVector::from_bytes(params, ev.aggregate)
        .map_err(|e| refuse(RefusalKind::Malformed, format!("the aggregate: {e}")))?;
    let entries_hash = ev.list.entries_hash(c.study, c.round);
    let challenge = SumChallenge::derive(
        params,
        c.study,
        c.round,
        &entries_hash,
        aggregate_hash.as_bytes(),
    );
    let challenge = challenge.expand(params, 2 * aggregate.ciphertexts().len());
    let committed = by_member(&c.list.commitments, |e| e.member.as_str());
    let digests = by_member(&ev.digests.digests, |d| d.member.as_str());
    let fetched = by_member(ev.contributions, |(m, _)| m.as_str());
    // First every listed entry's shape and signature, then the bytes.
    let mut seen = BTreeSet::new();
    let mut batch = SignatureBatch::new();
    let mut listed = Vec::with_capacity(ev.list.contributions.len());
    let chosen = ev
        .signatures
        .chosen(ev.list.contributions.len(), CONTRIBUTION_SAMPLE);
    for (upload, chosen) in ev.list.contributions.iter().zip(chosen) {
        let member = upload.member.as_str();
        let key = c
            .members
            .key(member)
            .map_err(|e| refuse(RefusalKind::Unaccounted, e))?;
        let check = chosen || fetched.contains_key(member);
        if !seen.insert(member) {
            return Err(refuse(
                RefusalKind::Duplicate,
                format!("{member} is listed twice"),
            ));
        }
        let commitment = committed.get(member).ok_or_else(|| {
            refuse(
                RefusalKind::Unaccounted,
                format!("{member} contributed without a commitment in the list I checked"),
            )
        })?;
        if commitment.hash != upload.hash {
            return Err(refuse(
                RefusalKind::Substituted,
                format!("the contribution listed for {member} is not the one it committed to"),
            ));
        }
        let hash: [u8; 32] = fedhe_api::signing::decode_fixed(&upload.hash, "hash")
            .map_err(|e| refuse(RefusalKind::Malformed, e.to_string()))?;
        let signed = match digests.get(member) {
            None => {
                if check {
                    let statement =
                        contribution_statement(c.study, member, c.round, &hash, &list_hash);
                    batch
                        .push(
                            key,
                            statement,
                            &upload.signature,
                            "contribution",
                            Signed::Reveal(member),
                        )
                        .map_err(|(s, e)| refuse(RefusalKind::Signature, s.refusal(e)))?;
                }
                None
            }
            Some(d) => {
                let bytes = fedhe_api::signing::decode_hex(&d.digest).map_err(|e| {
                    refuse(
                        RefusalKind::Malformed,
                        format!("the digest listed for {member}: {e}"),
                    )
                })?;
                if check {
                    let statement = sum_digest_statement(
                        c.study,
                        member,
                        c.round,
                        &hash,
                        &list_hash,
                        &entries_hash,
                        aggregate_hash.as_bytes(),
                        &bytes,
                    );
                    batch
                        .push(
                            key,
                            statement,
                            &d.signature,
                            "sum digest",
                            Signed::SumDigest(member),
                        )
                        .map_err(|(s, e)| refuse(RefusalKind::Signature, s.refusal(e)))?;
                }
                Some(ContributorDigest::from_bytes(params, &bytes).map_err(|e| {
                    refuse(
                        RefusalKind::Malformed,
                        format!("the digest listed for {member}: {e}"),
                    )
                })?)
            }
        };
        listed.push((member, hash, signed, *commitment));
    }
    batch
        .verify()
        .map_err(|(s, e)| refuse(RefusalKind::Signature, s.refusal(e)))?;
    let mut total = SumDigest::zero(params);
    let mut fetched_any = false;
    let mut c1_commitments = Vec::new();
    for (member, hash, signed, commitment) in listed {
        if ev.c1_carries.is_some() {
            let own_c1 = c
                .own
                .filter(|(me, _)| *me == member)
                .and(c.own_c1_commitment_hash);
            let c1 = match (fetched.get(member), &signed) {
                // This member's own, as it computed it when it committed: no
                // second multiscalar multiplication.
                (_, Some(s)) if own_c1.is_some_and(|h| h == s.c1.hash()) => s.c1.clone(),
                (Some((_, bytes)), signed) => {
                    let v = EncryptedVector::from_bytes(params, bytes).map_err(|e| {
                        refuse(
                            RefusalKind::Malformed,
                            format!("the contribution of {member}: {e}"),
                        )
                    })?;
                    let computed = C1Commitment::commit(params, &v);
                    if signed.as_ref().is_some_and(|s| s.c1 != computed) {
                        return Err(refuse(
                            RefusalKind::Signature,
                            format!(
                                "{member} signed a c1 commitment that is not its contribution's"
                            ),
                        ));
                    }
                    computed
                }
                (None, Some(s)) => s.c1.clone(),
                (None, None) => {
                    return Err(refuse(
                        RefusalKind::Unaccounted,
                        format!(
                            "the contribution of {member} was neither fetched nor digested by it"
                        ),
                    ))
                }
            };
            if c1.hash()
                != committed_c1_hash(commitment).map_err(|e| refuse(RefusalKind::Malformed, e))?
            {
                return Err(refuse(
                    RefusalKind::Substituted,
                    format!("the c1 commitment of {member} is not the one it committed to"),
                ));
            }
            c1_commitments.push(c1);
        }
        let signed = signed.map(|s| s.sum);
        let digest = match fetched.get(member) {
            Some((_, bytes)) => {
                if blake3::hash(bytes).as_bytes() != &hash {
                    return Err(refuse(
                        RefusalKind::Substituted,
                        format!("the bytes served for {member} do not have the signed hash"),
                    ));
                }
                let v = EncryptedVector::from_bytes(params, bytes).map_err(|e| {
                    refuse(
                        RefusalKind::Malformed,
                        format!("the contribution of {member}: {e}"),
                    )
                })?;
                if v.encoding() != aggregate.encoding() || v.len() != aggregate.len() {
                    return Err(refuse(
                        RefusalKind::Shape,
                        format!("the contribution of {member} is not encoded like the aggregate"),
                    ));
                }
                fetched_any = true;
                let computed = challenge.digest(params, &v);
                if signed.as_ref().is_some_and(|s| *s != computed) {
                    return Err(refuse(
                        RefusalKind::Signature,
                        format!("{member} signed a digest that is not its contribution's"),
                    ));
                }
                computed
            }
            None => signed.ok_or_else(|| {
                refuse(
                    RefusalKind::Unaccounted,
                    format!("the contribution of {member} was neither fetched nor digested by it"),
                )
            })?,
        };
        total.add_assign(params, &digest);
    }
    if seen.len() < c.min_contributors.max(1) {
        return Err(refuse(
            RefusalKind::TooFew,
            format!(
                "{} distinct members contributed; at least {} are required",
                seen.len(),
                c.min_contributors.max(1)
            ),
        ));
    }
    if let Some((me, own)) = c.own {
        let listed = ev.list.contributions.iter().find(|u| u.member == me);
        match listed {
            None => {
                return Err(refuse(
                    RefusalKind::Own,
                    format!("my own contribution ({me}) is not included"),
                ))
            }
            Some(u) if u.hash != blake3::hash(own).to_hex().as_str() => {
                return Err(refuse(
                    RefusalKind::Own,
                    format!("the contribution listed for me ({me}) is not the one I sent"),
                ))
            }
            Some(_) => {}
        }
    }
    if !fetched_any {
        return Err(refuse(
            RefusalKind::Unaccounted,
            "no listed contribution was fetched to check the aggregate's encoding against".into(),
        ));
    }
    if challenge.digest(params, &aggregate) != total {
        return Err(refuse(RefusalKind::NotTheSum,
            "the aggregate is not the sum of the listed contributions (its digest is not the sum of theirs)"
                .into(),
        ));
    }
    if let Some(carries) = ev.c1_carries {
        let carries = C1Carries::from_bytes(params, carries).map_err(|e| {
            refuse(
                RefusalKind::Malformed,
                format!("the aggregate's carries: {e}"),
            )
        })?;
        check_c1_aggregate(params, &aggregate, &carries, &c1_commitments)
            .map_err(|e| refuse(RefusalKind::C1Check, format!("{C1_CHECK_FAILED}: {e}")))?;
    }
    Ok(aggregate)
}
