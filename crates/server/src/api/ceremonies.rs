//! Key ceremonies under `/v1/ceremonies`: creation, commit-then-reveal of
//! public-key shares, the transcript and the collective key, and the
//! threshold dealings of a t-of-n ceremony with their verdicts.

use super::{
    created_or_ok, long_poll, octet_response, upload_signature, verify_upload_signature, Incoming,
    Shared, OCTET, P,
};
use crate::auth;
use crate::engine;
use crate::problem::{ApiError, ApiResult};
use crate::AppState;
use axum::extract::State;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use fedhe_api::signing::{decode_fixed, now_ms, parse_public_key, upload_statement};
use fedhe_api::*;
use fedhe_crypto::{CeremonyId, CommonRandomPoly, MemberId, PublicKeyShare, WireObject};
use std::sync::Arc;
use utoipa_axum::{router::OpenApiRouter, routes};

/// The routes of this module.
pub(crate) fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(create_ceremony))
        .routes(routes!(get_ceremony))
        .routes(routes!(put_commitment))
        .routes(routes!(put_public_key_share, get_public_key_share))
        .routes(routes!(get_transcript))
        .routes(routes!(get_collective_key))
        .routes(routes!(put_dealing))
        .routes(routes!(get_dealing_for))
        .routes(routes!(put_dealing_verdict))
}

async fn ceremony_status(state: &AppState, id: &str) -> ApiResult<CeremonyStatus> {
    let c = state.store.ceremony(id).await?;
    let members = state.store.members(id).await?;
    let (dealt, confirmed) = if c.threshold.is_some() {
        (
            state
                .store
                .dealings(id)
                .await?
                .into_iter()
                .map(|(m, _)| m)
                .collect(),
            state
                .store
                .dealing_verdicts(id)
                .await?
                .into_iter()
                .filter(|v| v.accepted)
                .map(|v| v.member)
                .collect(),
        )
    } else {
        (Vec::new(), Vec::new())
    };
    let transcript_hash = c
        .transcript
        .as_deref()
        .and_then(|t| serde_json::from_str::<Transcript>(t).ok())
        .map(|t| t.hash_hex());
    Ok(CeremonyStatus {
        id: c.id,
        parameter_set: c.parameter_set,
        phase: c.phase,
        committed: members
            .iter()
            .filter(|m| m.share_hash.is_some())
            .map(|m| m.member.clone())
            .collect(),
        revealed: members
            .iter()
            .filter(|m| m.revealed)
            .map(|m| m.member.clone())
            .collect(),
        members: members
            .iter()
            .map(|m| MemberSpec {
                id: m.member.clone(),
                identity_key: hex::encode(m.identity_key),
            })
            .collect(),
        deadline_at: c.deadline_at,
        crs_seed: hex::encode(&c.crs_seed),
        admin_key: c.admin_key.unwrap_or_default(),
        transcript_hash,
        reason: c.reason,
        threshold: c.threshold,
        dealt,
        confirmed,
    })
}

/// Create a ceremony (administrator).
#[utoipa::path(post, path = fedhe_api::routes::CEREMONIES, tag = "ceremonies",
    request_body = CeremonySpec,
    security(("admin" = [])),
    responses(
        (status = 201, description = "Created", body = CeremonyStatus),
        (status = 200, description = "Already exists with this specification", body = CeremonyStatus),
        (status = 400, description = "Invalid specification", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Not the administrator", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "Exists with another specification", body = Problem, content_type = "application/problem+json")))]
async fn create_ceremony(State(state): Shared, req: Incoming) -> ApiResult<Response> {
    let req = req.read(&state, state.config.max_json_bytes).await?;
    auth::require_admin(&state, &req.headers)?;
    let spec: CeremonySpec = req.json()?;
    let id = CeremonyId::new(spec.id.clone()).map_err(|e| ApiError::bad_request(e.to_string()))?;
    let params = state.params(&spec.parameter_set, spec.allow_insecure)?;
    if spec.members.is_empty() {
        return Err(ApiError::bad_request(
            "a ceremony needs at least one member",
        ));
    }
    let mut members = Vec::with_capacity(spec.members.len());
    let mut ids = Vec::with_capacity(spec.members.len());
    for m in &spec.members {
        let mid = MemberId::new(m.id.clone()).map_err(|e| ApiError::bad_request(e.to_string()))?;
        let key = parse_public_key(&m.identity_key)
            .map_err(|e| ApiError::bad_request(format!("identity key of {}: {e}", m.id)))?;
        // One key for two members would let one holder sign as both.
        if let Some((other, _)) = members.iter().find(|(_, k)| *k == key.to_bytes()) {
            return Err(ApiError::bad_request(format!(
                "identity key of {}: the same key is given for {other}; each member needs its own",
                m.id
            )));
        }
        members.push((m.id.clone(), key.to_bytes()));
        ids.push(mid);
    }
    if let Some(t) = spec.threshold {
        fedhe_crypto::AccessStructure::new(&ids, t as usize)
            .map_err(|e| ApiError::bad_request(e.to_string()))?;
    }
    let admin_key = parse_public_key(&spec.admin_key)
        .map_err(|e| ApiError::bad_request(format!("admin_key: {e}")))?;
    let admin_key = hex::encode(admin_key.as_bytes());
    let seed = CommonRandomPoly::derive_seed(&params, &id, &ids)
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    let now = now_ms();
    let deadline = now.saturating_add((spec.deadline_secs.min(10 * 365 * 86_400) * 1000) as i64);
    let created = state
        .store
        .create_ceremony(
            &spec.id,
            params.set().name,
            spec.allow_insecure,
            now,
            deadline,
            &seed,
            &members,
            &admin_key,
            spec.threshold,
        )
        .await?;
    Ok(created_or_ok(
        created,
        ceremony_status(&state, &spec.id).await?,
    ))
}

/// A ceremony's status. With `wait`, a long poll: it answers once the
/// ceremony has left `phase`, or once at least `dealt` members have dealt
/// (whichever is given), or after `wait` seconds, so that members waiting
/// on each other make one request per step rather than one per poll (at 100
/// members, polling every 100 ms was tens of thousands of signed requests
/// per ceremony).
#[utoipa::path(get, path = fedhe_api::routes::CEREMONY, tag = "ceremonies",
    params(("ceremony" = String, Path, description = "Ceremony id"),
        ("wait" = Option<f64>, Query, description = "Seconds to wait for the condition below"),
        ("phase" = Option<CeremonyPhase>, Query, description = "Answer once the ceremony is no longer in this phase"),
        ("dealt" = Option<u64>, Query, description = "Answer once at least this many members have dealt")),
    security(("admin" = []), ("member" = [])),
    responses((status = 200, body = CeremonyStatus),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json")))]
async fn get_ceremony(
    State(state): Shared,
    P(id): P<String>,
    req: Incoming,
) -> ApiResult<Json<CeremonyStatus>> {
    let req = req.read(&state, 0).await?;
    state.store.ceremony(&id).await?;
    auth::require_reader(&state, &id, &req.parts()).await?;
    let wait = req.wait(&state)?;
    let phase = match req.query("phase")? {
        None => None,
        Some(p) => Some(CeremonyPhase::parse(&p).ok_or_else(|| {
            ApiError::bad_request(format!("phase={p:?} is not a ceremony phase"))
        })?),
    };
    let dealt = match req.query("dealt")? {
        None => None,
        Some(d) => Some(
            d.parse::<usize>()
                .map_err(|_| ApiError::bad_request(format!("dealt={d:?} is not a count")))?,
        ),
    };
    if !wait.is_zero() && (phase.is_some() || dealt.is_some()) {
        let st = &state;
        let id = &id;
        long_poll(st, wait, || async move {
            let (now, count) = st.store.ceremony_progress(id).await?;
            let left = phase.is_some_and(|p| p != now);
            let reached = dealt.is_some_and(|k| count >= k);
            Ok((left || reached).then_some(()))
        })
        .await?;
    }
    Ok(Json(ceremony_status(&state, &id).await?))
}

/// Commit to a public-key share: BLAKE3 of its wire bytes, signed.
#[utoipa::path(put, path = fedhe_api::routes::CEREMONY_COMMITMENT, tag = "ceremonies",
    params(("ceremony" = String, Path), ("member" = String, Path)),
    request_body = Commitment,
    security(("member" = [])),
    responses((status = 201, body = UploadReceipt), (status = 200, body = UploadReceipt),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 409, body = Problem, content_type = "application/problem+json")))]
async fn put_commitment(
    State(state): Shared,
    P((id, member)): P<(String, String)>,
    req: Incoming,
) -> ApiResult<Response> {
    let req = req.read(&state, state.config.max_json_bytes).await?;
    state.store.ceremony(&id).await?;
    let caller = auth::require_member(&state, &id, &req.parts()).await?;
    auth::require_self(&caller, &member)?;
    let commitment: Commitment = req.json()?;
    let hash: [u8; 32] = decode_fixed(&commitment.share_hash, "share_hash")
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    verify_upload_signature(
        &state,
        &id,
        &member,
        &upload_statement(UploadKind::Commitment, &id, &member, 0, &hash),
        &commitment.signature,
    )
    .await?;
    let created = state
        .store
        .put_commitment(&id, &member, &hash, &commitment.signature)
        .await?;
    state.notify_change();
    Ok(created_or_ok(
        created,
        UploadReceipt {
            hash: commitment.share_hash,
            created,
        },
    ))
}

/// Reveal a public-key share (its hash must match the commitment).
#[utoipa::path(put, path = fedhe_api::routes::PUBLIC_KEY_SHARE, tag = "ceremonies",
    params(("ceremony" = String, Path), ("member" = String, Path)),
    request_body(content = String, content_type = "application/octet-stream", description = "PublicKeyShare wire object"),
    security(("member" = [])),
    responses((status = 201, body = UploadReceipt), (status = 200, body = UploadReceipt),
        (status = 409, body = Problem, content_type = "application/problem+json"),
        (status = 422, body = Problem, content_type = "application/problem+json")))]
async fn put_public_key_share(
    State(state): Shared,
    P((id, member)): P<(String, String)>,
    req: Incoming,
) -> ApiResult<Response> {
    let req = req.read(&state, state.config.max_upload_bytes).await?;
    let c = state.store.ceremony(&id).await?;
    let caller = auth::require_member(&state, &id, &req.parts()).await?;
    auth::require_self(&caller, &member)?;
    req.require_content_type(OCTET)?;
    let hash = *blake3::hash(&req.body).as_bytes();
    let committed = state
        .store
        .members(&id)
        .await?
        .into_iter()
        .find(|m| m.member == member)
        .and_then(|m| m.share_hash);
    match committed {
        None => {
            return Err(ApiError::conflict(format!(
                "{member} has not committed to a share in ceremony {id}"
            )))
        }
        Some(h) if h != hash => {
            return Err(ApiError::unprocessable(format!(
                "the share's hash {} is not the committed {}",
                hex::encode(hash),
                hex::encode(h)
            )))
        }
        Some(_) => {}
    }
    let params = state.params(&c.parameter_set, c.allow_insecure)?;
    let body = req.body.clone();
    let share = tokio::task::spawn_blocking(move || PublicKeyShare::from_bytes(&params, &body))
        .await
        .map_err(|_| ApiError::internal("decoding task failed"))?
        .map_err(|e| ApiError::unprocessable(format!("not a public-key share: {e}")))?;
    if share.member().as_str() != member {
        return Err(ApiError::unprocessable(format!(
            "the share names member {}, not {member}",
            share.member()
        )));
    }
    if share.crs_seed()[..] != c.crs_seed[..] {
        return Err(ApiError::unprocessable(
            "the share was made against another ceremony's common reference polynomial",
        ));
    }
    let created = state
        .store
        .put_public_key_share(&id, &member, &req.body)
        .await?;
    state.metrics.uploaded(req.body.len());
    engine::advance_ceremony(&state, &id).await?;
    state.notify_change();
    Ok(created_or_ok(
        created,
        UploadReceipt {
            hash: hex::encode(hash),
            created,
        },
    ))
}

/// A revealed public-key share.
#[utoipa::path(get, path = fedhe_api::routes::PUBLIC_KEY_SHARE, tag = "ceremonies",
    params(("ceremony" = String, Path), ("member" = String, Path)),
    security(("admin" = []), ("member" = [])),
    responses((status = 200, content_type = "application/octet-stream", body = String),
        (status = 404, body = Problem, content_type = "application/problem+json")))]
async fn get_public_key_share(
    State(state): Shared,
    P((id, member)): P<(String, String)>,
    req: Incoming,
) -> ApiResult<Response> {
    let req = req.read(&state, 0).await?;
    state.store.ceremony(&id).await?;
    auth::require_reader(&state, &id, &req.parts()).await?;
    Ok(octet_response(
        state.store.public_key_share(&id, &member).await?,
    ))
}

/// The transcript of a complete ceremony.
#[utoipa::path(get, path = fedhe_api::routes::TRANSCRIPT, tag = "ceremonies",
    params(("ceremony" = String, Path)),
    security(("admin" = []), ("member" = [])),
    responses((status = 200, body = Transcript),
        (status = 409, description = "Not complete", body = Problem, content_type = "application/problem+json")))]
async fn get_transcript(
    State(state): Shared,
    P(id): P<String>,
    req: Incoming,
) -> ApiResult<Response> {
    let req = req.read(&state, 0).await?;
    let c = state.store.ceremony(&id).await?;
    auth::require_reader(&state, &id, &req.parts()).await?;
    let text = c.transcript.ok_or_else(|| {
        ApiError::conflict(format!(
            "ceremony {id} is {}; the transcript exists once it is complete",
            c.phase.as_str()
        ))
    })?;
    let mut r = (StatusCode::OK, text).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Ok(r)
}

/// The collective public key (CollectivePublicKey wire object).
#[utoipa::path(get, path = fedhe_api::routes::COLLECTIVE_KEY, tag = "ceremonies",
    params(("ceremony" = String, Path)),
    security(("admin" = []), ("member" = [])),
    responses((status = 200, content_type = "application/octet-stream", body = String),
        (status = 404, body = Problem, content_type = "application/problem+json")))]
async fn get_collective_key(
    State(state): Shared,
    P(id): P<String>,
    req: Incoming,
) -> ApiResult<Response> {
    let req = req.read(&state, 0).await?;
    state.store.ceremony(&id).await?;
    auth::require_reader(&state, &id, &req.parts()).await?;
    Ok(octet_response(state.store.collective_key(&id).await?))
}

/// The ceremony's threshold setting, or 409 for an n-of-n ceremony.
fn threshold_of(c: &crate::store::CeremonyRow) -> ApiResult<usize> {
    c.threshold.map(|t| t as usize).ok_or_else(|| {
        ApiError::conflict(format!(
            "ceremony {} is n-of-n: it has no threshold dealing",
            c.id
        ))
    })
}

/// Upload a threshold dealing: the member's Shamir commitment and its
/// shares sealed to every member (t-of-n ceremonies, phase `dealing`).
#[utoipa::path(put, path = fedhe_api::routes::DEALING, tag = "ceremonies",
    params(("ceremony" = String, Path), ("member" = String, Path)),
    request_body(content = String, content_type = "application/octet-stream", description = "ThresholdDealing wire object"),
    security(("member" = [])),
    responses((status = 201, body = UploadReceipt), (status = 200, body = UploadReceipt),
        (status = 409, body = Problem, content_type = "application/problem+json"),
        (status = 422, body = Problem, content_type = "application/problem+json")))]
async fn put_dealing(
    State(state): Shared,
    P((id, member)): P<(String, String)>,
    req: Incoming,
) -> ApiResult<Response> {
    let req = req.read(&state, state.config.max_upload_bytes).await?;
    let c = state.store.ceremony(&id).await?;
    let caller = auth::require_member(&state, &id, &req.parts()).await?;
    auth::require_self(&caller, &member)?;
    req.require_content_type(OCTET)?;
    let threshold = threshold_of(&c)?;
    let hash = *blake3::hash(&req.body).as_bytes();
    let signature = upload_signature(&req.headers)?;
    verify_upload_signature(
        &state,
        &id,
        &member,
        &upload_statement(UploadKind::Dealing, &id, &member, 0, &hash),
        &signature,
    )
    .await?;
    // A resend is answered from the stored hash, and a dealing out of phase
    // refused, before anything is decoded (issue 45, finding 3: 180 resends
    // of a valid 25 MiB dealing, each decoded and sliced before its 409,
    // took the server from 127 to 1,602 MiB).
    match state.store.dealing_hash(&id, &member).await? {
        Some(existing) if existing == hash => {
            return Ok(created_or_ok(
                false,
                UploadReceipt {
                    hash: hex::encode(hash),
                    created: false,
                },
            ))
        }
        Some(_) => {
            return Err(ApiError::conflict(format!(
                "{member} already sent a different dealing in ceremony {id}"
            )))
        }
        None if c.phase != CeremonyPhase::Dealing => {
            return Err(ApiError::conflict(format!(
                "ceremony {id} is {}, not accepting a dealing",
                c.phase.as_str()
            )))
        }
        None => {}
    }
    // Decoding and slicing hold about twice the body again: the gate
    // reserved that with the body (`gate::DEALING_HOLDS`), so concurrent
    // dealings cannot take the server past its in-flight budget.
    let params = state.params(&c.parameter_set, c.allow_insecure)?;
    let members: Vec<String> = state
        .store
        .members(&id)
        .await?
        .into_iter()
        .map(|m| m.member)
        .collect();
    let body = req.body.clone();
    let uploader = member.clone();
    // Decode fully, check it deals to exactly this ceremony's members, and
    // cut each recipient's slice once (served as is).
    let (commitment, slices) = tokio::task::spawn_blocking(move || -> ApiResult<_> {
        let d = fedhe_crypto::ThresholdDealing::from_bytes(&params, &body)
            .map_err(|e| ApiError::unprocessable(format!("not a threshold dealing: {e}")))?;
        if d.dealer().as_str() != uploader {
            return Err(ApiError::unprocessable(format!(
                "the dealing names dealer {}, not {uploader}",
                d.dealer()
            )));
        }
        if d.commitment.threshold() != threshold {
            return Err(ApiError::unprocessable(format!(
                "the dealing is for threshold {}; the ceremony's is {threshold}",
                d.commitment.threshold()
            )));
        }
        let recipients: Vec<&str> = d.sealed.iter().map(|s| s.recipient.as_str()).collect();
        if recipients != members.iter().map(String::as_str).collect::<Vec<_>>() {
            return Err(ApiError::unprocessable(
                "the dealing must hold one sealed share for every member of the ceremony",
            ));
        }
        let slices = d
            .sealed
            .iter()
            .map(|s| {
                let slice = d.for_recipient(&s.recipient).map_err(|e| {
                    ApiError::unprocessable(format!("not a threshold dealing: {e}"))
                })?;
                Ok((s.recipient.as_str().to_string(), slice.to_bytes(&params)))
            })
            .collect::<ApiResult<Vec<_>>>()?;
        Ok((d.commitment.to_bytes(&params), slices))
    })
    .await
    .map_err(|_| ApiError::internal("decoding task failed"))??;
    let created = state
        .store
        .put_dealing(&id, &member, &hash, &commitment, &slices, &signature)
        .await?;
    state.metrics.uploaded(req.body.len());
    state.notify_change();
    Ok(created_or_ok(
        created,
        UploadReceipt {
            hash: hex::encode(hash),
            created,
        },
    ))
}

/// A dealer's commitment with only the share sealed to `recipient`
/// (ThresholdDealing wire object). The sealed share authenticates its dealer
/// to its recipient; the commitment is checked against it.
#[utoipa::path(get, path = fedhe_api::routes::DEALING_FOR, tag = "ceremonies",
    params(("ceremony" = String, Path), ("dealer" = String, Path), ("recipient" = String, Path)),
    security(("member" = [])),
    responses((status = 200, content_type = "application/octet-stream", body = String),
        (status = 404, body = Problem, content_type = "application/problem+json")))]
async fn get_dealing_for(
    State(state): Shared,
    P((id, dealer, recipient)): P<(String, String, String)>,
    req: Incoming,
) -> ApiResult<Response> {
    let req = req.read(&state, 0).await?;
    let c = state.store.ceremony(&id).await?;
    auth::require_reader(&state, &id, &req.parts()).await?;
    threshold_of(&c)?;
    let recipient =
        MemberId::new(recipient).map_err(|e| ApiError::bad_request(format!("recipient: {e}")))?;
    let slice = state
        .store
        .dealing_slice(&id, &dealer, recipient.as_str())
        .await?;
    Ok(octet_response(slice))
}

/// A member's verdict on the Shamir shares it received (t-of-n
/// ceremonies): every member accepting completes the ceremony, a refusal
/// naming the dealer fails it.
#[utoipa::path(put, path = fedhe_api::routes::DEALING_VERDICT, tag = "ceremonies",
    params(("ceremony" = String, Path), ("member" = String, Path)),
    request_body = DealingVerdict,
    security(("member" = [])),
    responses((status = 201, body = DealingVerdict), (status = 200, body = DealingVerdict),
        (status = 409, body = Problem, content_type = "application/problem+json"),
        (status = 422, body = Problem, content_type = "application/problem+json")))]
async fn put_dealing_verdict(
    State(state): Shared,
    P((id, member)): P<(String, String)>,
    req: Incoming,
) -> ApiResult<Response> {
    let req = req.read(&state, state.config.max_json_bytes).await?;
    let c = state.store.ceremony(&id).await?;
    let caller = auth::require_member(&state, &id, &req.parts()).await?;
    auth::require_self(&caller, &member)?;
    threshold_of(&c)?;
    let verdict: DealingVerdict = req.json()?;
    if verdict.accepted == verdict.dealer.is_some() {
        return Err(ApiError::unprocessable(
            "a verdict either accepts (no dealer) or refuses naming the dealer",
        ));
    }
    if let Some(d) = &verdict.dealer {
        if state.store.member_key(&id, d).await?.is_none() {
            return Err(ApiError::unprocessable(format!(
                "dealer {d} is not a member of ceremony {id}"
            )));
        }
    }
    let row = crate::store::VerdictRow {
        member: member.clone(),
        accepted: verdict.accepted,
        dealer: verdict.dealer.clone(),
        // Stored escaped (control, bidi and zero-width characters as
        // `\u{..}`): the ceremony's failure reason quotes it to every member.
        reason: verdict
            .reason
            .as_ref()
            .map(|r| fedhe_crypto::text::escape_controls(&r.chars().take(500).collect::<String>())),
    };
    let created = state.store.put_dealing_verdict(&id, &row).await?;
    engine::advance_ceremony(&state, &id).await?;
    state.notify_change();
    Ok(created_or_ok(created, verdict))
}
