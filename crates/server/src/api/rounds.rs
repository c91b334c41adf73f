//! A study's rounds under `/v1/studies/{study}/rounds/{round}`: opening and
//! status (long-polled), the contributions' commitments, t-of-n decryption
//! claims, and what a round produces: the aggregate, the combined decryption
//! share and the result.

use super::{
    created_or_ok, long_poll, not_ready, octet_response, parse_round, verify_upload_signature,
    Incoming, Shared, P,
};
use crate::auth;
use crate::engine;
use crate::problem::{ApiError, ApiResult};
use crate::store::UploadTable;
use crate::AppState;
use axum::extract::State;
use axum::response::Response;
use axum::Json;
use fedhe_api::signing::{decode_fixed, now_ms, round_commitment_statement};
use fedhe_api::*;
use std::sync::Arc;
use utoipa_axum::{router::OpenApiRouter, routes};

/// The routes of this module.
pub(crate) fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(open_round, get_round))
        .routes(routes!(put_round_commitment))
        .routes(routes!(list_round_commitments))
        .routes(routes!(put_decryption_claim))
        .routes(routes!(get_aggregate))
        .routes(routes!(get_aggregate_carries))
        .routes(routes!(get_combined_share))
        .routes(routes!(get_result))
}

async fn round_status(state: &AppState, study: &str, round: u64) -> ApiResult<RoundStatus> {
    let spec = state.store.study(study).await?.spec;
    let threshold = state.store.ceremony(&spec.ceremony).await?.threshold;
    let r = state.store.round(study, round).await?;
    let members = state.store.member_count(&spec.ceremony).await? as u32;
    let contributors = state
        .store
        .listed_uploads(UploadTable::Contributions, study, round, r.state)
        .await?;
    let shares = state
        .store
        .listed_uploads(UploadTable::DecryptionShares, study, round, r.state)
        .await?;
    Ok(RoundStatus {
        study: study.to_string(),
        round,
        state: r.state,
        received: contributors.len() as u32,
        required: spec.min_contributors,
        members,
        contributors: contributors.iter().map(|u| u.member.clone()).collect(),
        shares: shares.iter().map(|u| u.member.clone()).collect(),
        deadline_at: r.deadline_at,
        version: r.version,
        reason: r.reason,
        decrypting_set: state.store.decrypting_set(study, round, threshold).await?,
        threshold,
    })
}

/// Open a round (idempotent; only the next round after a done or failed one).
#[utoipa::path(put, path = fedhe_api::routes::ROUND, tag = "studies",
    params(("study" = String, Path), ("round" = u64, Path)),
    security(("admin" = []), ("member" = [])),
    responses((status = 200, body = RoundStatus),
        (status = 409, description = "Not the next round", body = Problem, content_type = "application/problem+json")))]
async fn open_round(
    State(state): Shared,
    P((study, round)): P<(String, String)>,
    req: Incoming,
) -> ApiResult<Json<RoundStatus>> {
    let req = req.read(&state, 0).await?;
    let round = parse_round(&round)?;
    let spec = state.store.study(&study).await?.spec;
    let caller = auth::require_reader(&state, &spec.ceremony, &req.parts()).await?;
    let c = state.store.ceremony(&spec.ceremony).await?;
    if c.phase != CeremonyPhase::Complete {
        return Err(ApiError::conflict(format!(
            "ceremony {} is {}; rounds open once it is complete",
            spec.ceremony,
            c.phase.as_str()
        )));
    }
    if let Some(cap) = spec.round_cap.filter(|cap| round > *cap) {
        return Err(ApiError::conflict(format!(
            "study {study} reached its round cap: round {round} is past the last round, {cap}"
        )));
    }
    let now = now_ms();
    let deadline =
        now.saturating_add((spec.round_timeout_secs.min(10 * 365 * 86_400) * 1000) as i64);
    let actor = caller.member().unwrap_or("admin");
    state
        .store
        .open_round(&study, round, now, deadline, actor)
        .await?;
    state.notify_change();
    Ok(Json(round_status(&state, &study, round).await?))
}

/// A round's status; `?wait=SECS&since=VERSION` waits until its version exceeds `since`.
#[utoipa::path(get, path = fedhe_api::routes::ROUND, tag = "studies",
    params(("study" = String, Path), ("round" = u64, Path),
        ("wait" = Option<f64>, Query, description = "Long poll: seconds to wait for a change"),
        ("since" = Option<i64>, Query, description = "The version the caller has seen")),
    security(("admin" = []), ("member" = [])),
    responses((status = 200, body = RoundStatus), (status = 404, body = Problem, content_type = "application/problem+json")))]
async fn get_round(
    State(state): Shared,
    P((study, round)): P<(String, String)>,
    req: Incoming,
) -> ApiResult<Json<RoundStatus>> {
    let req = req.read(&state, 0).await?;
    let round = parse_round(&round)?;
    let spec = state.store.study(&study).await?.spec;
    auth::require_reader(&state, &spec.ceremony, &req.parts()).await?;
    let wait = req.wait(&state)?;
    let since = match req.query("since")? {
        None => None,
        Some(s) => Some(
            s.parse::<i64>()
                .map_err(|_| ApiError::bad_request(format!("since={s:?} is not an integer")))?,
        ),
    };
    let st = &state;
    // Every upload bumps the version and wakes the waiters: each looks at
    // the round's row first and renders the status (its lists of n names)
    // only once it changed.
    let status = long_poll(st, wait, || async {
        let r = st.store.round(&study, round).await?;
        let changed = since.is_none_or(|v| r.version > v) || r.state.is_terminal();
        if !changed {
            return Ok(None);
        }
        round_status(st, &study, round).await.map(Some)
    })
    .await?;
    match status {
        Some(s) => Ok(Json(s)),
        None => Ok(Json(round_status(&state, &study, round).await?)),
    }
}

/// Commit to a contribution while the round is `committing`: BLAKE3 of its
/// wire bytes and its value count, signed with the study spec's hash.
#[utoipa::path(put, path = fedhe_api::routes::ROUND_COMMITMENT, tag = "studies",
    params(("study" = String, Path), ("round" = u64, Path), ("member" = String, Path)),
    request_body = RoundCommitment,
    security(("member" = [])),
    responses((status = 201, body = UploadReceipt), (status = 200, description = "The same commitment again", body = UploadReceipt),
        (status = 409, description = "A different commitment, or the round is not committing", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "The signature does not verify", body = Problem, content_type = "application/problem+json")))]
async fn put_round_commitment(
    State(state): Shared,
    P((study, round, member)): P<(String, String, String)>,
    req: Incoming,
) -> ApiResult<Response> {
    let req = req.read(&state, state.config.max_json_bytes).await?;
    let round = parse_round(&round)?;
    let spec = state.store.study(&study).await?.spec;
    let caller = auth::require_member(&state, &spec.ceremony, &req.parts()).await?;
    auth::require_self(&caller, &member)?;
    let body: RoundCommitment = req.json()?;
    let hash: [u8; 32] =
        decode_fixed(&body.hash, "hash").map_err(|e| ApiError::bad_request(e.to_string()))?;
    let c1_commitment_hash: [u8; 32] = decode_fixed(&body.c1_commitment_hash, "c1_commitment_hash")
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    if body.values == 0 || body.values > MAX_VALUES {
        return Err(ApiError::bad_request(format!(
            "values must be between 1 and {MAX_VALUES}, is {}",
            body.values
        )));
    }
    verify_upload_signature(
        &state,
        &spec.ceremony,
        &member,
        &round_commitment_statement(
            &study,
            &member,
            round,
            &hash,
            body.values,
            &spec.hash_hex(),
            &c1_commitment_hash,
        ),
        &body.signature,
    )
    .await?;
    let entry = CommittedContribution {
        member: member.clone(),
        hash: hex::encode(hash),
        values: body.values,
        c1_commitment_hash: hex::encode(c1_commitment_hash),
        signature: body.signature,
    };
    let created = state
        .store
        .put_round_commitment(&study, round, &entry, &hash, now_ms())
        .await?;
    if created {
        state.notify_change();
        engine::advance_round(&state, &study, round).await?;
    }
    Ok(created_or_ok(
        created,
        UploadReceipt {
            hash: entry.hash,
            created,
        },
    ))
}

/// The most values one contribution may hold.
const MAX_VALUES: u64 = 1 << 24;

/// A round's signed commitments; frozen (with its hash) once the round
/// leaves `committing`.
#[utoipa::path(get, path = fedhe_api::routes::ROUND_COMMITMENTS, tag = "studies",
    params(("study" = String, Path), ("round" = u64, Path),
        ("members" = Option<String>, Query, description = "Only these members' entries: member ids separated by commas (default: every entry)"),
        ("signatures" = Option<String>, Query, description = "Whose signatures to include: member ids separated by commas, `none`, or `all` (the default); the others' are empty (the list's hash does not cover signatures)")),
    security(("admin" = []), ("member" = [])),
    responses((status = 200, description = "The list: JSON, or compact bytes (`fedhe_api::compact`) when `Accept` names application/vnd.fedhe.list", content((CommitmentList = "application/json"), (Vec<u8> = "application/vnd.fedhe.list"))), (status = 404, body = Problem, content_type = "application/problem+json")))]
async fn list_round_commitments(
    State(state): Shared,
    P((study, round)): P<(String, String)>,
    req: Incoming,
) -> ApiResult<Response> {
    let req = req.read(&state, 0).await?;
    let round = parse_round(&round)?;
    let selection = super::uploads::ListSelection::of(&req)?;
    let spec = state.store.study(&study).await?.spec;
    auth::require_reader(&state, &spec.ceremony, &req.parts()).await?;
    let r = state.store.round(&study, round).await?;
    let key = super::BodyKey::of(&req, &selection, "commitments", &study, round, r.state);
    if let Some(kept) = state.final_bodies.response(key.as_ref(), 0) {
        return Ok(kept);
    }
    let commitments = state
        .store
        .listed_commitments(&study, round, r.value_count, r.state)
        .await?;
    state.final_bodies.encode(
        &req,
        // Frozen once the round left committing (Store::listed_commitments).
        key.filter(|_| r.state != RoundState::Committing),
        CommitmentList {
            state: r.state,
            values: r.value_count.map(|v| v as u64),
            commitments: selection.apply(
                &commitments,
                |c| c.member.as_str(),
                |c| c.signature.clear(),
            ),
            list_hash: r.commitment_list_hash,
        },
        commitments.len(),
    )
}

/// Claim a place in a t-of-n round's decrypting set (once the aggregate
/// exists): the first T claimants form the set, and only they upload
/// decryption shares. Answers the round's status with the set so far.
#[utoipa::path(put, path = fedhe_api::routes::DECRYPTION_CLAIM, tag = "studies",
    params(("study" = String, Path), ("round" = u64, Path), ("member" = String, Path)),
    security(("member" = [])),
    responses((status = 200, body = RoundStatus),
        (status = 409, description = "Not decrypting, or the ceremony is n-of-n", body = Problem, content_type = "application/problem+json")))]
async fn put_decryption_claim(
    State(state): Shared,
    P((study, round, member)): P<(String, String, String)>,
    req: Incoming,
) -> ApiResult<Json<RoundStatus>> {
    let req = req.read(&state, state.config.max_json_bytes).await?;
    let round = parse_round(&round)?;
    let spec = state.store.study(&study).await?.spec;
    let caller = auth::require_member(&state, &spec.ceremony, &req.parts()).await?;
    auth::require_self(&caller, &member)?;
    let c = state.store.ceremony(&spec.ceremony).await?;
    let threshold = c.threshold.ok_or_else(|| {
        ApiError::conflict(format!(
            "study {study} runs on n-of-n ceremony {}: every member decrypts, nobody claims",
            c.id
        ))
    })?;
    let set = state
        .store
        .claim_decryption(&study, round, &member, threshold as usize)
        .await?;
    if set.len() == threshold as usize {
        state.notify_change();
    }
    Ok(Json(round_status(&state, &study, round).await?))
}

/// The aggregate C = Σ c_i (EncryptedVector wire object); `?wait=SECS` waits
/// for it. Its hash and the contributions it sums are listed at
/// `/contributions`.
#[utoipa::path(get, path = fedhe_api::routes::AGGREGATE, tag = "studies",
    params(("study" = String, Path), ("round" = u64, Path),
        ("wait" = Option<f64>, Query, description = "Long poll: seconds to wait for the aggregate")),
    security(("admin" = []), ("member" = [])),
    responses((status = 200, content_type = "application/octet-stream", body = String),
        (status = 409, description = "Still collecting, or failed", body = Problem, content_type = "application/problem+json")))]
async fn get_aggregate(
    State(state): Shared,
    P((study, round)): P<(String, String)>,
    req: Incoming,
) -> ApiResult<Response> {
    let req = req.read(&state, 0).await?;
    let round = parse_round(&round)?;
    let spec = state.store.study(&study).await?.spec;
    auth::require_reader(&state, &spec.ceremony, &req.parts()).await?;
    let st = &state;
    let study_ref = &study;
    let ready = long_poll(st, req.wait(st)?, || async move {
        let r = st.store.round(study_ref, round).await?;
        Ok((r.aggregate_hash.is_some() || r.state == RoundState::Failed).then_some(r))
    })
    .await?;
    let r = match ready {
        Some(r) => r,
        None => state.store.round(&study, round).await?,
    };
    if r.aggregate_hash.is_none() {
        return Err(not_ready(&r, "aggregate"));
    }
    Ok(octet_response(state.store.aggregate(&study, round).await?))
}

/// The carries of the aggregate's c1 (`fedhe_crypto::C1Carries` wire
/// object): with them a member checks the aggregate against the
/// contributors' c1 commitments (`fedhe_crypto::c1_commitment`). Served
/// once the aggregate exists.
#[utoipa::path(get, path = fedhe_api::routes::AGGREGATE_CARRIES, tag = "studies",
    params(("study" = String, Path), ("round" = u64, Path)),
    security(("admin" = []), ("member" = [])),
    responses((status = 200, content_type = "application/octet-stream", body = String),
        (status = 404, description = "No aggregate yet, or one made before carries were kept", body = Problem, content_type = "application/problem+json")))]
async fn get_aggregate_carries(
    State(state): Shared,
    P((study, round)): P<(String, String)>,
    req: Incoming,
) -> ApiResult<Response> {
    let req = req.read(&state, 0).await?;
    let round = parse_round(&round)?;
    let spec = state.store.study(&study).await?.spec;
    auth::require_reader(&state, &spec.ceremony, &req.parts()).await?;
    Ok(octet_response(
        state.store.aggregate_carries(&study, round).await?,
    ))
}

/// The combined decryption share `D = Σ_j d_j` of a finished round
/// (`fedhe_crypto::CombinedShare` bytes; its hash is the result's
/// `combined_hash`): a member decodes `C0 + D` itself.
#[utoipa::path(get, path = fedhe_api::routes::COMBINED_SHARE, tag = "studies",
    params(("study" = String, Path), ("round" = u64, Path)),
    security(("admin" = []), ("member" = [])),
    responses((status = 200, content_type = "application/octet-stream", body = String),
        (status = 409, body = Problem, content_type = "application/problem+json")))]
async fn get_combined_share(
    State(state): Shared,
    P((study, round)): P<(String, String)>,
    req: Incoming,
) -> ApiResult<Response> {
    let req = req.read(&state, 0).await?;
    let round = parse_round(&round)?;
    let spec = state.store.study(&study).await?.spec;
    auth::require_reader(&state, &spec.ceremony, &req.parts()).await?;
    let r = state.store.round(&study, round).await?;
    if r.combined_hash.is_none() {
        return Err(not_ready(&r, "combined decryption share"));
    }
    Ok(octet_response(state.store.combined(&study, round).await?))
}

/// A finished round: the hashes of its aggregate, of the lists of signed
/// contributions and shares it came from (the lists themselves at
/// `.../contributions` and `.../decryption-shares`) and of its blinded
/// combined share; never a value (the server holds none). `?wait=SECS`
/// waits for it.
#[utoipa::path(get, path = fedhe_api::routes::RESULT, tag = "studies",
    params(("study" = String, Path), ("round" = u64, Path),
        ("wait" = Option<f64>, Query, description = "Long poll: seconds to wait for the result")),
    security(("admin" = []), ("member" = [])),
    responses((status = 200, body = RoundResult),
        (status = 409, description = "Not done, or failed", body = Problem, content_type = "application/problem+json")))]
async fn get_result(
    State(state): Shared,
    P((study, round)): P<(String, String)>,
    req: Incoming,
) -> ApiResult<Json<RoundResult>> {
    let req = req.read(&state, 0).await?;
    let round = parse_round(&round)?;
    let spec = state.store.study(&study).await?.spec;
    auth::require_reader(&state, &spec.ceremony, &req.parts()).await?;
    let st = &state;
    let study_ref = &study;
    let ready = long_poll(st, req.wait(st)?, || async move {
        let r = st.store.round(study_ref, round).await?;
        Ok(r.state.is_terminal().then_some(r))
    })
    .await?;
    let r = match ready {
        Some(r) => r,
        None => state.store.round(&study, round).await?,
    };
    let (Some(hash), Some(_), RoundState::Done) = (r.aggregate_hash, r.combined_hash, r.state)
    else {
        return Err(not_ready(&r, "result"));
    };
    Ok(Json(RoundResult {
        round,
        aggregate_hash: hex::encode(hash),
        // The lists' hashes, stored with the round: a result request reads
        // one row whatever the number of members.
        contribution_entries_hash: r.contribution_entries_hash.map(hex::encode),
        share_entries_hash: r.share_entries_hash.map(hex::encode),
        combined_hash: r.combined_hash.map(hex::encode),
    }))
}
