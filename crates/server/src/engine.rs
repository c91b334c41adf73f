//! The state machines (DESIGN.md §2, §5, §6): ceremonies
//! `committing → revealing → complete | failed` and rounds
//! `committing → collecting → decrypting → done | failed`. A round's
//! contributions are committed (signed hashes) before any can be uploaded or
//! read, so no member can make its contribution depend on another's. Each step reads the stored
//! state, computes outside any transaction (aggregation, combining) and then
//! commits with a compare-and-swap on the version it read; a step that lost
//! the race simply reads again. Steps run after every upload and from a
//! periodic sweep (deadlines are columns, so a restarted server picks up
//! where the last one stopped).

use crate::problem::{ApiError, ApiResult};
use crate::store::{MemberRow, RoundRow, UploadTable};
use crate::AppState;
use fedhe_api::signing::now_ms;
use fedhe_api::{CeremonyPhase, RoundState, Transcript, TranscriptEntry};
use fedhe_crypto::{
    Aggregate, CarryingSum, CommonRandomPoly, EncryptedVector, FixedPointCodec, KeyAggregation,
    MemberId, PublicKeyShare, ShareCombination, WireObject,
};
use std::sync::Arc;

/// How often a step retries after losing a compare-and-swap.
const CAS_RETRIES: usize = 8;

/// Moves a round forward if it can: freezes the commitments once every
/// member committed or, at the deadline, with at least `min_contributors`
/// (keeping the commitments of the most common value count: one member
/// cannot impose its shape on the others); closes collection once every
/// frozen commitment is revealed or, at the deadline, with at least
/// `min_contributors`; fails it at a deadline otherwise; combines once every member's decryption share is
/// in; fails it when the decryption deadline passes.
pub async fn advance_round(state: &AppState, study: &str, round: u64) -> ApiResult<()> {
    // One task advances a round at a time; a request arriving meanwhile marks
    // it dirty, and the running task makes another pass.
    let Some(guard) = state.busy.try_claim(format!("round/{study}/{round}")) else {
        return Ok(());
    };
    loop {
        advance_round_once(state, study, round).await?;
        if !guard.take_dirty() {
            return Ok(());
        }
    }
}

async fn advance_round_once(state: &AppState, study: &str, round: u64) -> ApiResult<()> {
    let spec = state.store.study(study).await?.spec;
    let ceremony = state.store.ceremony(&spec.ceremony).await?;
    let params = state.params(&ceremony.parameter_set, ceremony.allow_insecure)?;
    // A step runs after every upload: it counts (on the tables' indexes)
    // before it reads any list of n rows, so a round's n uploads cost O(n)
    // row reads, not O(n²) (issue 16). The lists are read once a count says
    // the step can move.
    let member_count = state.store.member_count(&spec.ceremony).await?;
    for _ in 0..CAS_RETRIES {
        let r = state.store.round(study, round).await?;
        let now = now_ms();
        let moved = match r.state {
            RoundState::Committing => {
                let count = state
                    .store
                    .round_commitment_count(study, round, None)
                    .await?;
                let required = spec.min_contributors.max(1) as usize;
                if count == member_count || (now >= r.deadline_at && count >= required) {
                    let all = state.store.round_commitments(study, round, None).await?;
                    let values = plurality_values(&all);
                    let frozen: Vec<_> = all.into_iter().filter(|c| c.values == values).collect();
                    if frozen.len() < required {
                        let reason = format!(
                            "only {} commitments share the most common value count {values}; {required} are required",
                            frozen.len()
                        );
                        state.store.fail_round(&r, &reason).await?
                    } else {
                        let list_hash =
                            fedhe_api::CommitmentList::canonical_hash(study, round, &frozen);
                        let shape = contribution_shape(&params, member_count, &spec, values)
                            .map_err(ApiError::internal)?;
                        let deadline = now.saturating_add(secs_ms(spec.round_timeout_secs));
                        state
                            .store
                            .freeze_commitments(&r, values as i64, &list_hash, &shape, deadline)
                            .await?
                    }
                } else if now >= r.deadline_at {
                    let reason = format!(
                        "the commitment deadline passed with {count} of {required} required commitments"
                    );
                    state.store.fail_round(&r, &reason).await?
                } else {
                    return Ok(());
                }
            }
            RoundState::Collecting => {
                let count = state
                    .store
                    .upload_count(UploadTable::Contributions, study, round)
                    .await?;
                let required = spec.min_contributors.max(1) as usize;
                let committed = state
                    .store
                    .round_commitment_count(study, round, r.value_count)
                    .await?;
                if count == committed || (now >= r.deadline_at && count >= required) {
                    let list = state
                        .store
                        .uploads(UploadTable::Contributions, study, round)
                        .await?;
                    let (aggregate, carries, parts) = aggregate(state, &params, &r, &list).await?;
                    let deadline = now.saturating_add(secs_ms(spec.decrypt_timeout_secs));
                    let entries_hash =
                        fedhe_api::ContributionList::entries_hash_of(study, round, &list);
                    state
                        .store
                        .begin_decrypting(&r, &aggregate, &carries, &entries_hash, parts, deadline)
                        .await?
                } else if now >= r.deadline_at {
                    let reason = format!(
                        "the collection deadline passed with {count} of {required} required contributions"
                    );
                    state.store.fail_round(&r, &reason).await?
                } else {
                    return Ok(());
                }
            }
            RoundState::Decrypting => {
                // Not every share in yet, and the deadline ahead: nothing
                // to do (a share is accepted only from a decrypting member,
                // so fewer shares than decrypting members is not complete).
                let needed = ceremony.threshold.map_or(member_count, |t| t as usize);
                if now < r.deadline_at
                    && state
                        .store
                        .upload_count(UploadTable::DecryptionShares, study, round)
                        .await?
                        < needed
                {
                    return Ok(());
                }
                let members = state.store.member_names(&spec.ceremony).await?;
                let list = state
                    .store
                    .uploads(UploadTable::DecryptionShares, study, round)
                    .await?;
                // n-of-n: every member decrypts; t-of-n: the round's full
                // decrypting set (the first T claimants).
                let decrypting: Vec<String> = match ceremony.threshold {
                    None => members.clone(),
                    Some(t) => {
                        let set = state.store.decrypting_set(study, round, Some(t)).await?;
                        if set.len() == t as usize {
                            set
                        } else {
                            Vec::new()
                        }
                    }
                };
                let have: Vec<&str> = list.iter().map(|s| s.member.as_str()).collect();
                if !decrypting.is_empty() && decrypting.iter().all(|m| have.contains(&m.as_str())) {
                    match decrypt(
                        state,
                        &params,
                        &r,
                        &members,
                        &decrypting,
                        ceremony.threshold,
                    )
                    .await
                    {
                        Ok(combined) => {
                            // What share digests are made against: the list
                            // of the shares combined (all of them: no share
                            // is accepted once the round is done) and, t-of-n,
                            // the decrypting set.
                            let set: Vec<String> = match ceremony.threshold {
                                None => Vec::new(),
                                Some(_) => {
                                    let mut set = decrypting.clone();
                                    set.sort();
                                    set
                                }
                            };
                            let entries_hash = fedhe_api::DecryptionShareList::entries_hash_of(
                                study, round, &list, &set,
                            );
                            state.store.finish(&r, &combined, &entries_hash).await?
                        }
                        Err(reason) => state.store.fail_round(&r, &reason).await?,
                    }
                } else if now >= r.deadline_at {
                    let reason = if decrypting.is_empty() {
                        format!(
                            "the decryption deadline passed before {} members claimed a place in the decrypting set",
                            ceremony.threshold.unwrap_or_default()
                        )
                    } else {
                        let missing: Vec<&str> = decrypting
                            .iter()
                            .map(String::as_str)
                            .filter(|m| !have.contains(m))
                            .collect();
                        format!(
                            "the decryption deadline passed with {} of {} decryption shares (missing: {})",
                            list.len(),
                            decrypting.len(),
                            missing.join(", ")
                        )
                    };
                    state.store.fail_round(&r, &reason).await?
                } else {
                    return Ok(());
                }
            }
            RoundState::Done | RoundState::Failed => return Ok(()),
        };
        if moved {
            state.metrics.transition();
            state.notify_change();
            if matches!(r.state, RoundState::Committing | RoundState::Collecting) {
                continue; // the new state may be ready to move at once
            }
            return Ok(());
        }
    }
    Ok(())
}

/// The value count most commitments declare (the smallest of a tie), which
/// becomes the round's shape.
fn plurality_values(commitments: &[fedhe_api::CommittedContribution]) -> u64 {
    let mut counts = std::collections::BTreeMap::<u64, usize>::new();
    for c in commitments {
        *counts.entry(c.values).or_default() += 1;
    }
    let mut best = (0u64, 0usize);
    for (values, n) in counts {
        if n > best.1 {
            best = (values, n);
        }
    }
    best.0
}

/// The codec the study spec fixes: the ceremony's member count, the spec's
/// bound and precision (the codec's fractional bits and limbs for them).
pub fn study_codec(
    params: &Arc<fedhe_crypto::Params>,
    members: usize,
    spec: &fedhe_api::StudySpec,
) -> Result<FixedPointCodec, String> {
    spec.codec(params, members).map_err(|e| {
        format!(
            "the study's bound {} and precision {:?} give no encoding: {e}",
            spec.bound, spec.precision
        )
    })
}

/// The shape every contribution of a study's round must have: the encoding
/// the study spec fixes ([`study_codec`]) and the round's value count.
pub fn contribution_shape(
    params: &Arc<fedhe_crypto::Params>,
    members: usize,
    spec: &fedhe_api::StudySpec,
    values: u64,
) -> Result<String, String> {
    Ok(shape_text(
        study_codec(params, members, spec)?.info(),
        values,
    ))
}

/// An upload whose exact size the round fixes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizedUpload<'p> {
    /// A member's public-key share in a ceremony.
    PublicKeyShare {
        /// The ceremony.
        ceremony: &'p str,
        /// The uploading member (the path's).
        member: &'p str,
    },
    /// A member's threshold dealing in a t-of-n ceremony.
    Dealing {
        /// The ceremony.
        ceremony: &'p str,
        /// The uploading member (the path's).
        member: &'p str,
    },
    /// A contribution or a decryption share in a study's round.
    Round {
        /// Which of the two.
        table: UploadTable,
        /// The study.
        study: &'p str,
        /// The round, as the path has it (parsed here).
        round: &'p str,
        /// The uploading member (the path's).
        member: &'p str,
    },
}

/// The exact byte length of an upload, from what the store already holds:
/// a public-key share from the ceremony's parameter set; a threshold dealing
/// from the set, the members and T; a contribution from
/// the value count frozen with the round's commitments and the study's
/// encoding (its members and bound); a decryption share from the same, once
/// the aggregate exists. An upload the round does not accept yet (no frozen
/// commitments, no aggregate) is refused here, so no body is read for it.
pub async fn expected_upload_len(state: &AppState, upload: SizedUpload<'_>) -> ApiResult<usize> {
    let member_id = |m: &str| {
        MemberId::new(m).map_err(|_| ApiError::bad_request("the path's member id is not valid"))
    };
    match upload {
        SizedUpload::PublicKeyShare { ceremony, member } => {
            let c = state.store.ceremony(ceremony).await?;
            let params = state.params(&c.parameter_set, c.allow_insecure)?;
            Ok(fedhe_crypto::wire::public_key_share_len(
                &params,
                &member_id(member)?,
            ))
        }
        SizedUpload::Dealing { ceremony, member } => {
            let c = state.store.ceremony(ceremony).await?;
            let threshold = c.threshold.ok_or_else(|| {
                ApiError::conflict(format!(
                    "ceremony {ceremony} is n-of-n: it takes no threshold dealing"
                ))
            })?;
            // Out of phase, a dealing is refused before its body is read,
            // unless its dealer has one stored (a resend, answered without
            // decoding: issue 45, finding 3).
            if c.phase != fedhe_api::CeremonyPhase::Dealing
                && state.store.dealing_hash(ceremony, member).await?.is_none()
            {
                return Err(ApiError::conflict(format!(
                    "ceremony {ceremony} is {}, not accepting a dealing",
                    c.phase.as_str()
                )));
            }
            let params = state.params(&c.parameter_set, c.allow_insecure)?;
            let members = state
                .store
                .members(ceremony)
                .await?
                .into_iter()
                .map(|m| member_id(&m.member))
                .collect::<ApiResult<Vec<_>>>()?;
            Ok(fedhe_crypto::wire::threshold_dealing_len(
                &params,
                &member_id(member)?,
                &members,
                threshold as usize,
            ))
        }
        SizedUpload::Round {
            table,
            study,
            round,
            member,
        } => {
            let round_number = round
                .parse::<u64>()
                .ok()
                .filter(|r| (1..=i64::MAX as u64).contains(r))
                .ok_or_else(|| ApiError::bad_request("the path's round is not a number ≥ 1"))?;
            let r = state.store.round(study, round_number).await?;
            let waiting = |what: &str| {
                ApiError::conflict(format!(
                    "round {round_number} of study {study} is {}: {what}",
                    r.state.as_str()
                ))
            };
            let values = match (table, r.value_count, r.parts) {
                (UploadTable::Contributions, Some(v), _) => v,
                (UploadTable::Contributions, None, _) => {
                    return Err(waiting(
                        "contributions are revealed only once the commitments are frozen",
                    ))
                }
                (UploadTable::ShareDigests, _, _) if r.combined_hash.is_none() => {
                    return Err(waiting("the decryption shares are not combined yet"))
                }
                (
                    UploadTable::DecryptionShares
                    | UploadTable::SumDigests
                    | UploadTable::ShareDigests,
                    Some(v),
                    Some(_),
                ) => v,
                (
                    UploadTable::DecryptionShares
                    | UploadTable::SumDigests
                    | UploadTable::ShareDigests,
                    _,
                    _,
                ) => return Err(waiting("there is no aggregate to decrypt yet")),
            };
            let spec = state.store.study(study).await?.spec;
            let c = state.store.ceremony(&spec.ceremony).await?;
            let params = state.params(&c.parameter_set, c.allow_insecure)?;
            let members = state.store.member_count(&spec.ceremony).await?;
            let codec = study_codec(&params, members, &spec).map_err(ApiError::unprocessable)?;
            let values = values as usize;
            Ok(match table {
                UploadTable::Contributions => {
                    fedhe_crypto::wire::encrypted_vector_len(&params, &codec, values)
                }
                UploadTable::DecryptionShares if c.threshold.is_some() => {
                    let active = state
                        .store
                        .decrypting_set(study, round_number, c.threshold)
                        .await?
                        .iter()
                        .map(|m| member_id(m))
                        .collect::<ApiResult<Vec<_>>>()?;
                    fedhe_crypto::wire::threshold_decryption_share_len(
                        &params,
                        &codec,
                        &member_id(member)?,
                        &active,
                        values,
                    )
                }
                UploadTable::DecryptionShares => fedhe_crypto::wire::decryption_share_len(
                    &params,
                    &codec,
                    &member_id(member)?,
                    values,
                ),
                // A contributor's digest carries its c1 commitment, one
                // point per ciphertext (fedhe_crypto::ContributorDigest).
                UploadTable::SumDigests => fedhe_crypto::ContributorDigest::len(
                    &params,
                    r.parts.unwrap_or_default() as usize,
                ),
                UploadTable::ShareDigests => fedhe_crypto::SumDigest::len(&params),
            })
        }
    }
}

/// The text form of a shape, as stored with each contribution. A one-limb
/// shape reads as it did before two limbs existed.
pub fn shape_text(e: &fedhe_crypto::EncodingInfo, values: u64) -> String {
    let limbs = match e.limbs {
        fedhe_crypto::Limbs::One => String::new(),
        fedhe_crypto::Limbs::Two { split_bits } => format!(" split_bits={split_bits}"),
    };
    format!(
        "members={} bound={} fractional_bits={}{limbs} values={values}",
        e.members, e.bound, e.fractional_bits
    )
}

/// C = Σ c_i over the listed contributions (DESIGN.md §2 step 3), decoding
/// one at a time so memory stays at one contribution plus the sum; with the
/// carries of its c1 (`fedhe_crypto::c1_commitment`), by which members check
/// it against the contributors' c1 commitments. Returns the aggregate's and
/// the carries' wire bytes and the number of ciphertexts.
async fn aggregate(
    state: &AppState,
    params: &Arc<fedhe_crypto::Params>,
    r: &RoundRow,
    list: &[fedhe_api::SignedUpload],
) -> ApiResult<(Vec<u8>, Vec<u8>, usize)> {
    let mut sum: Option<CarryingSum> = None;
    for upload in list {
        let bytes = state
            .store
            .upload_bytes(
                UploadTable::Contributions,
                &r.study,
                r.round,
                &upload.member,
            )
            .await?;
        let params = params.clone();
        let previous = sum.take();
        sum = Some(
            tokio::task::spawn_blocking(move || -> Result<CarryingSum, String> {
                let v = EncryptedVector::from_bytes(&params, &bytes).map_err(|e| e.to_string())?;
                match previous {
                    None => Ok(CarryingSum::new(&params, v)),
                    Some(mut acc) => {
                        acc.add(&params, &v).map_err(|e| e.to_string())?;
                        Ok(acc)
                    }
                }
            })
            .await
            .map_err(|_| ApiError::internal("aggregation task failed"))?
            .map_err(|e| {
                ApiError::internal(format!(
                    "a stored contribution of {} cannot be added: {e}",
                    upload.member
                ))
            })?,
        );
    }
    let (sum, carries) = sum
        .ok_or_else(|| ApiError::internal("no contribution to aggregate"))?
        .into_parts();
    let parts = sum.ciphertexts().len();
    let params = params.clone();
    let (bytes, carries) =
        tokio::task::spawn_blocking(move || (sum.to_bytes(&params), carries.to_bytes(&params)))
            .await
            .map_err(|_| ApiError::internal("aggregation task failed"))?;
    Ok((bytes, carries, parts))
}

/// `D' = Σ d'_j` (step 5, blinded): combines the decryption shares of
/// `decrypting` (every member for n-of-n, the round's decrypting set for
/// t-of-n) and returns `D'`'s bytes ([`fedhe_crypto::CombinedShare`],
/// published for members to check and unblind). The shares carry the
/// members' result-key masks (`fedhe_crypto::result_key`), so the server
/// cannot decode `C0 + D'` and does not try: a share that does not decode is
/// found by the members, who refuse the round naming it. The reason on
/// failure becomes the round's.
async fn decrypt(
    state: &AppState,
    params: &Arc<fedhe_crypto::Params>,
    r: &RoundRow,
    members: &[String],
    decrypting: &[String],
    threshold: Option<u32>,
) -> Result<Vec<u8>, String> {
    let internal = |e: ApiError| e.detail;
    let failed = |_| "the decryption task failed".to_string();
    let aggregate = state
        .store
        .aggregate(&r.study, r.round)
        .await
        .map_err(internal)?;
    let aggregate =
        Arc::new(EncryptedVector::from_bytes(params, &aggregate).map_err(|e| e.to_string())?);
    let ids = members
        .iter()
        .map(|m| MemberId::new(m.clone()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    let mut combiner = ShareCombination::new(&ids, threshold.map(|t| t as usize), &aggregate)
        .map_err(|e| e.to_string())?;
    // One share read, decoded and added at a time: the server holds one
    // share and the sum, not n shares (issue 16).
    for m in decrypting {
        let bytes = state
            .store
            .upload_bytes(UploadTable::DecryptionShares, &r.study, r.round, m)
            .await
            .map_err(internal)?;
        let params = params.clone();
        combiner = tokio::task::spawn_blocking(move || -> Result<ShareCombination, String> {
            let share = combiner
                .decode(&params, &bytes)
                .map_err(|e| e.to_string())?;
            combiner.add(&share).map_err(|e| e.to_string())?;
            Ok(combiner)
        })
        .await
        .map_err(failed)??;
    }
    tokio::task::spawn_blocking(move || -> Result<Vec<u8>, String> {
        Ok(combiner.finish().map_err(|e| e.to_string())?.to_bytes())
    })
    .await
    .map_err(failed)?
}

/// The collective key of a ceremony whose members all revealed, its shares
/// read, decoded and added one at a time (the server holds one share and
/// the sum, not n shares; issue 16), as bytes; `Err(reason)` if they do not
/// aggregate.
async fn aggregate_key(
    state: &AppState,
    id: &str,
    params: &Arc<fedhe_crypto::Params>,
    seed: [u8; 32],
    members: &[MemberRow],
) -> ApiResult<Result<Vec<u8>, String>> {
    let failed = |_| ApiError::internal("the key aggregation task failed");
    let ids = match members
        .iter()
        .map(|m| MemberId::new(m.member.clone()))
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(ids) => ids,
        Err(e) => return Ok(Err(e.to_string())),
    };
    let p = params.clone();
    let mut aggregation = tokio::task::spawn_blocking(move || {
        KeyAggregation::new(&CommonRandomPoly::from_seed(&p, seed), &ids)
    })
    .await
    .map_err(failed)?;
    for m in members {
        let bytes = state.store.public_key_share(id, &m.member).await?;
        let params = params.clone();
        let added = tokio::task::spawn_blocking(move || -> Result<KeyAggregation, String> {
            let share = PublicKeyShare::from_bytes(&params, &bytes).map_err(|e| e.to_string())?;
            aggregation.add(&share).map_err(|e| e.to_string())?;
            Ok(aggregation)
        })
        .await
        .map_err(failed)?;
        aggregation = match added {
            Ok(aggregation) => aggregation,
            Err(reason) => return Ok(Err(reason)),
        };
    }
    let params = params.clone();
    tokio::task::spawn_blocking(move || {
        aggregation
            .finish()
            .map(|key| key.to_bytes(&params))
            .map_err(|e| e.to_string())
    })
    .await
    .map_err(failed)
}

/// Moves a ceremony forward: completes it once every share is revealed
/// (recomputing the collective key from the shares), fails it at its deadline.
pub async fn advance_ceremony(state: &AppState, id: &str) -> ApiResult<()> {
    let Some(guard) = state.busy.try_claim(format!("ceremony/{id}")) else {
        return Ok(());
    };
    loop {
        advance_ceremony_once(state, id).await?;
        if !guard.take_dirty() {
            return Ok(());
        }
    }
}

async fn advance_ceremony_once(state: &AppState, id: &str) -> ApiResult<()> {
    for _ in 0..CAS_RETRIES {
        let c = state.store.ceremony(id).await?;
        if !matches!(
            c.phase,
            CeremonyPhase::Committing | CeremonyPhase::Revealing | CeremonyPhase::Dealing
        ) {
            return Ok(());
        }
        let members = state.store.members(id).await?;
        let now = now_ms();
        let moved = if c.phase == CeremonyPhase::Dealing {
            // A refusal names the dealer and fails the ceremony; every
            // member's acceptance completes it.
            let verdicts = state.store.dealing_verdicts(id).await?;
            if let Some(v) = verdicts.iter().find(|v| !v.accepted) {
                let reason = format!(
                    "{} refused the Shamir share dealt by {}: {}",
                    v.member,
                    v.dealer.as_deref().unwrap_or("an unnamed dealer"),
                    v.reason.as_deref().unwrap_or("no reason given")
                );
                state.store.fail_ceremony(id, c.version, &reason).await?
            } else if verdicts.len() == members.len() {
                state.store.finish_dealing(id, c.version).await?
            } else if now >= c.deadline_at {
                let dealt: Vec<String> = state
                    .store
                    .dealings(id)
                    .await?
                    .into_iter()
                    .map(|(m, _)| m)
                    .collect();
                let missing = |have: &dyn Fn(&str) -> bool| {
                    members
                        .iter()
                        .map(|m| m.member.as_str())
                        .filter(|m| !have(m))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                let reason = format!(
                    "the deadline passed while dealing (dealings missing from: {}; confirmations missing from: {})",
                    missing(&|m| dealt.iter().any(|d| d == m)),
                    missing(&|m| verdicts.iter().any(|v| v.member == m)),
                );
                state.store.fail_ceremony(id, c.version, &reason).await?
            } else {
                return Ok(());
            }
        } else if c.phase == CeremonyPhase::Revealing && members.iter().all(|m| m.revealed) {
            let params = state.params(&c.parameter_set, c.allow_insecure)?;
            let seed: [u8; 32] = c
                .crs_seed
                .clone()
                .try_into()
                .map_err(|_| ApiError::internal("a stored CRS seed is malformed"))?;
            let key = aggregate_key(state, id, &params, seed, &members).await?;
            match key {
                Ok(key) => {
                    let transcript = Transcript {
                        ceremony: c.id.clone(),
                        parameter_set: c.parameter_set.clone(),
                        crs_seed: hex::encode(&c.crs_seed),
                        entries: members
                            .iter()
                            .map(|m| TranscriptEntry {
                                member: m.member.clone(),
                                identity_key: hex::encode(m.identity_key),
                                share_hash: m.share_hash.map(hex::encode).unwrap_or_default(),
                                signature: m.commitment_signature.clone().unwrap_or_default(),
                            })
                            .collect(),
                        collective_key_hash: blake3::hash(&key).to_hex().to_string(),
                        admin_key: c.admin_key.clone().unwrap_or_default(),
                        threshold: c.threshold,
                    };
                    let text = serde_json::to_string(&transcript)
                        .map_err(|_| ApiError::internal("transcript encoding failed"))?;
                    state
                        .store
                        .complete_ceremony(id, c.version, &key, &text, c.threshold.is_some())
                        .await?
                }
                Err(reason) => {
                    let reason = format!("the public-key shares do not aggregate: {reason}");
                    state.store.fail_ceremony(id, c.version, &reason).await?
                }
            }
        } else if now >= c.deadline_at {
            let waiting: Vec<&str> = members
                .iter()
                .filter(|m| match c.phase {
                    CeremonyPhase::Committing => m.share_hash.is_none(),
                    _ => !m.revealed,
                })
                .map(|m| m.member.as_str())
                .collect();
            let reason = format!(
                "the deadline passed while {} (waiting for: {})",
                c.phase.as_str(),
                waiting.join(", ")
            );
            state.store.fail_ceremony(id, c.version, &reason).await?
        } else {
            return Ok(());
        };
        if moved {
            state.notify_change();
            return Ok(());
        }
    }
    Ok(())
}

/// One pass over every open ceremony and active round (the deadline sweep).
pub async fn sweep(state: &AppState) -> ApiResult<()> {
    for id in state.store.open_ceremonies().await? {
        advance_ceremony(state, &id).await?;
    }
    for (study, round) in state.store.active_rounds().await? {
        advance_round(state, &study, round).await?;
    }
    Ok(())
}

fn secs_ms(secs: u64) -> i64 {
    secs.min(i64::MAX as u64 / 1000) as i64 * 1000
}

#[cfg(test)]
mod tests {
    use super::*;
    use fedhe_crypto::{InsecurePolicy, ParameterSet, Precision};

    /// The shape the server freezes for a round names the limbs the spec
    /// fixes, so a dishonest member cannot reveal a vector of the other
    /// encoding (which would make the aggregation fail for everyone): the
    /// one-limb and two-limb shapes of one bound differ, and each is what
    /// a vector encoded that way reports.
    #[test]
    fn a_rounds_shape_names_the_specs_limbs() {
        let params = ParameterSet::TOY_N1024
            .validate(InsecurePolicy::Allow)
            .unwrap();
        let spec = |precision| fedhe_api::StudySpec {
            id: "s1".into(),
            ceremony: "c1".into(),
            algorithm: "sum".into(),
            config: serde_json::json!({}),
            min_contributors: 2,
            round_timeout_secs: 60,
            decrypt_timeout_secs: 60,
            bound: 10.0,
            precision,
            round_cap: None,
        };
        let one = contribution_shape(&params, 3, &spec(fedhe_api::ValuePrecision::OneLimb), 4);
        let two = contribution_shape(&params, 3, &spec(fedhe_api::ValuePrecision::TwoLimb), 4);
        assert_ne!(one, two);
        for (shape, precision) in [(one, Precision::OneLimb), (two, Precision::TwoLimb)] {
            let codec = FixedPointCodec::with_precision(&params, 3, 10.0, precision).unwrap();
            assert_eq!(shape.unwrap(), shape_text(codec.info(), 4));
        }
    }
}
