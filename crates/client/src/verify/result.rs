//! Checks 9-10: the published result, before a member uses it.

use super::*;

/// A round's published result, and what a member checks it against.
pub struct ResultEvidence<'a> {
    /// The study.
    pub study: &'a str,
    /// The round.
    pub round: u64,
    /// The ceremony's members with their identity keys.
    pub members: &'a IdentityKeys,
    /// The aggregate this member verified before it decrypted.
    pub aggregate: &'a EncryptedVector,
    /// BLAKE3 of that aggregate's bytes (as recorded when it was verified).
    pub aggregate_hash: &'a [u8; 32],
    /// The server's list of decryption shares.
    pub list: &'a DecryptionShareList,
    /// The bytes of the listed shares this member holds or fetched (its
    /// own, those without a signed digest and its spot checks).
    pub shares: &'a [(String, Vec<u8>)],
    /// The combined decryption share `D = Σ_j d_j` as fetched
    /// (`fedhe_crypto::CombinedShare` bytes).
    pub combined: &'a [u8],
    /// The share makers' signed digests on the combined share's challenge.
    pub digests: &'a SumDigestList,
    /// The members' result key: the listed shares are blinded with it
    /// (`fedhe_crypto::result_key`), and the combined share is unblinded
    /// before it is decoded.
    pub result_key: &'a fedhe_crypto::ResultKey,
    /// The ceremony (part of every mask's derivation).
    pub ceremony: &'a fedhe_crypto::CeremonyId,
    /// T of a t-of-n ceremony: the shares are threshold shares of one
    /// decrypting set of T members. `None`: every member's share (n-of-n).
    pub threshold: Option<usize>,
}

/// Checks 9-10: the round's result is this member's decoding of
/// `C0 + D − Σ r_j` (the makers' result-key masks removed) for the
/// verified aggregate and a combined share `D` that is the sum of every
/// listed member's signed decryption share (DESIGN.md §2 step 5, finished
/// by the member itself). `D` is checked on digests, on a challenge fixed
/// after it (`SumChallenge::derive_for_shares`): each share counts by its
/// bytes, if this member holds them (and then a signed digest of it, if
/// any, must be the same), or else by its maker's signed digest. Returns the
/// values this member decoded.
pub fn verify_after_decrypt(
    params: &Arc<Params>,
    ev: &ResultEvidence<'_>,
) -> Result<Vec<f64>, Refusal> {
    let refuse = |kind: RefusalKind, reason: String| Refusal {
        study: ev.study.to_string(),
        round: ev.round,
        kind,
        reason,
    };
    let parts = ev.aggregate.ciphertexts().len();
    let combined = CombinedShare::from_bytes(params, ev.combined, parts).map_err(|e| {
        refuse(
            RefusalKind::Malformed,
            format!("the combined decryption share: {e}"),
        )
    })?;
    let combined_hash = blake3::hash(ev.combined);
    // t-of-n: the decrypting set is the listed share makers, T of them at
    // least; every share and every share digest must name it.
    let set: Vec<String> = match ev.threshold {
        None => Vec::new(),
        Some(t) => {
            let mut set: Vec<String> = ev.list.shares.iter().map(|u| u.member.clone()).collect();
            set.sort();
            set.dedup();
            if set.len() < t {
                return Err(refuse(
                    RefusalKind::TooFew,
                    format!(
                        "{} decryption shares are listed; the threshold is {t}",
                        set.len()
                    ),
                ));
            }
            set
        }
    };
    let entries_hash = ev.list.entries_hash(ev.study, ev.round, &set);
    let challenge = SumChallenge::derive_for_shares(
        params,
        ev.study,
        ev.round,
        &entries_hash,
        combined_hash.as_bytes(),
        ev.aggregate_hash,
    );
    let challenge = challenge.expand(params, parts);
    let mut seen = BTreeSet::new();
    for upload in &ev.list.shares {
        if !seen.insert(upload.member.as_str()) {
            return Err(refuse(
                RefusalKind::Duplicate,
                format!("the decryption share of {} is listed twice", upload.member),
            ));
        }
    }
    // n-of-n: every ceremony member's share.
    if ev.threshold.is_none() {
        if let Some(missing) = ev.members.ids().find(|m| !seen.contains(m)) {
            return Err(refuse(
                RefusalKind::TooFew,
                format!("the decryption shares do not combine: the share of {missing} is missing"),
            ));
        }
    }
    // First every listed share's signature (its share digest statement,
    // which names the share's hash and so says all its upload says, or, if
    // its maker sent no digest, its upload), in one batch; then the bytes.
    let digests = by_member(&ev.digests.digests, |d| d.member.as_str());
    let held = by_member(ev.shares, |(m, _)| m.as_str());
    let mut batch = SignatureBatch::new();
    let mut listed = Vec::with_capacity(ev.list.shares.len());
    for upload in &ev.list.shares {
        let member = upload.member.as_str();
        let key = ev
            .members
            .key(member)
            .map_err(|e| refuse(RefusalKind::Unaccounted, e))?;
        let hash: [u8; 32] = fedhe_api::signing::decode_fixed(&upload.hash, "hash")
            .map_err(|e| refuse(RefusalKind::Malformed, e.to_string()))?;
        let signed = match digests.get(member) {
            None => {
                let statement = upload_statement(
                    UploadKind::DecryptionShare,
                    ev.study,
                    member,
                    ev.round,
                    &hash,
                );
                batch
                    .push(
                        key,
                        statement,
                        &upload.signature,
                        "decryption share",
                        Signed::Share(member),
                    )
                    .map_err(|(s, e)| refuse(RefusalKind::Signature, s.refusal(e)))?;
                None
            }
            Some(d) => {
                let bytes = fedhe_api::signing::decode_hex(&d.digest).map_err(|e| {
                    refuse(
                        RefusalKind::Malformed,
                        format!("the share digest listed for {member}: {e}"),
                    )
                })?;
                let statement = share_digest_statement(
                    ev.study,
                    member,
                    ev.round,
                    &hash,
                    &entries_hash,
                    combined_hash.as_bytes(),
                    ev.aggregate_hash,
                    &set,
                    &bytes,
                );
                batch
                    .push(
                        key,
                        statement,
                        &d.signature,
                        "share digest",
                        Signed::ShareDigest(member),
                    )
                    .map_err(|(s, e)| refuse(RefusalKind::Signature, s.refusal(e)))?;
                Some(SumDigest::from_bytes(params, &bytes).map_err(|e| {
                    refuse(
                        RefusalKind::Malformed,
                        format!("the share digest listed for {member}: {e}"),
                    )
                })?)
            }
        };
        listed.push((member, hash, signed));
    }
    batch
        .verify()
        .map_err(|(s, e)| refuse(RefusalKind::Signature, s.refusal(e)))?;
    let mut total = SumDigest::zero(params);
    for (member, hash, signed) in listed {
        let digest = match held.get(member) {
            Some((_, bytes)) => {
                if blake3::hash(bytes).as_bytes() != &hash {
                    return Err(refuse(RefusalKind::Substituted, format!(
                        "the bytes served for the decryption share of {member} do not have the signed hash"
                    )));
                }
                let share = AnyDecryptionShare::from_bytes(params, bytes, ev.threshold.is_some())
                    .map_err(|e| {
                    refuse(
                        RefusalKind::Malformed,
                        format!("the decryption share of {member}: {e}"),
                    )
                })?;
                if share.member().as_str() != member {
                    return Err(refuse(
                        RefusalKind::Substituted,
                        format!("the share listed for {member} names {}", share.member()),
                    ));
                }
                if let Some(active) = share.active() {
                    if !active
                        .iter()
                        .map(|m| m.as_str())
                        .eq(set.iter().map(String::as_str))
                    {
                        return Err(refuse(RefusalKind::Unaccounted, format!(
                            "the share of {member} was made for another decrypting set than the listed shares'"
                        )));
                    }
                }
                if share.polys().len() != parts {
                    return Err(refuse(RefusalKind::Shape, format!(
                        "the share of {member} has {} polynomials for an aggregate of {parts} ciphertexts",
                        share.polys().len()
                    )));
                }
                let polys: Vec<&fedhe_ring::Poly> = share.polys().iter().collect();
                let computed = challenge.digest_polys(params, &polys);
                if signed.as_ref().is_some_and(|s| *s != computed) {
                    return Err(refuse(
                        RefusalKind::Signature,
                        format!("{member} signed a digest that is not its decryption share's"),
                    ));
                }
                computed
            }
            None => signed.ok_or_else(|| {
                refuse(
                    RefusalKind::Unaccounted,
                    format!(
                        "the decryption share of {member} was neither fetched nor digested by it"
                    ),
                )
            })?,
        };
        total.add_assign(params, &digest);
    }
    let polys: Vec<&fedhe_ring::Poly> = combined.polys().iter().collect();
    if challenge.digest_polys(params, &polys) != total {
        return Err(refuse(RefusalKind::NotTheSum,
            "the combined decryption share is not the sum of the listed shares (its digest is not the sum of theirs)"
                .into(),
        ));
    }
    // D = D' − Σ r_j over the listed makers: only a holder of the result
    // key can decode (the server cannot).
    let makers = ev
        .list
        .shares
        .iter()
        .map(|u| MemberId::new(u.member.clone()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| refuse(RefusalKind::Malformed, e.to_string()))?;
    let mut combined = combined;
    ev.result_key
        .unblind(
            params,
            &fedhe_crypto::BlindingContext {
                ceremony: ev.ceremony,
                study: ev.study,
                round: ev.round,
                aggregate_hash: ev.aggregate_hash,
            },
            &makers,
            &mut combined,
        )
        .map_err(|e| {
            refuse(
                RefusalKind::Malformed,
                format!("the combined decryption share: {e}"),
            )
        })?;
    let plaintexts = combined.decrypt(ev.aggregate).map_err(|e| {
        refuse(
            RefusalKind::Malformed,
            format!("the combined decryption share: {e}"),
        )
    })?;
    let codec = FixedPointCodec::from_info(params, ev.aggregate.encoding()).map_err(|e| {
        refuse(
            RefusalKind::Malformed,
            format!("the aggregate's encoding: {e}"),
        )
    })?;
    let values = codec
        .decode(&plaintexts, ev.aggregate.len())
        .map_err(|e| {
            refuse(RefusalKind::Undecodable, format!(
                "the combined shares do not decode (a share maker's share is false, or it was blinded with another result key): {e}"
            ))
        })?;
    Ok(values)
}
