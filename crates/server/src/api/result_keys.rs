//! The members' result key under `/v1/ceremonies/{ceremony}/result-keys`
//! (issue 44; `fedhe_crypto::result_key`): the ceremony's first member
//! uploads the key sealed to every member, and each member fetches the one
//! sealed to it. The server relays sealed keys it can neither open nor forge,
//! and every decryption share it later combines is blinded with the key.

use super::{created_or_ok, octet_response, Incoming, Shared, OCTET, P};
use crate::auth;
use crate::problem::{ApiError, ApiResult};
use crate::AppState;
use axum::extract::State;
use axum::response::Response;
use fedhe_api::*;
use fedhe_crypto::{result_key_dealer, MemberId, ResultKeyDealing};
use std::sync::Arc;
use utoipa_axum::{router::OpenApiRouter, routes};

/// The routes of this module.
pub(crate) fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(put_result_keys))
        .routes(routes!(get_result_key))
}

/// Upload the result key sealed to every member of the ceremony
/// (`fedhe_crypto::ResultKeyDealing` bytes). Only the ceremony's first member
/// by id deals; the same dealing again is 200, another 409.
#[utoipa::path(put, path = fedhe_api::routes::RESULT_KEYS, tag = "ceremonies",
    params(("ceremony" = String, Path)),
    request_body(content = String, content_type = "application/octet-stream", description = "ResultKeyDealing wire bytes"),
    security(("member" = [])),
    responses((status = 201, body = UploadReceipt), (status = 200, body = UploadReceipt),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 409, body = Problem, content_type = "application/problem+json"),
        (status = 422, body = Problem, content_type = "application/problem+json")))]
async fn put_result_keys(
    State(state): Shared,
    P(id): P<String>,
    req: Incoming,
) -> ApiResult<Response> {
    let req = req.read(&state, state.config.max_upload_bytes).await?;
    state.store.ceremony(&id).await?;
    let caller = auth::require_member(&state, &id, &req.parts()).await?;
    req.require_content_type(OCTET)?;
    let members: Vec<MemberId> = state
        .store
        .members(&id)
        .await?
        .into_iter()
        .map(|m| MemberId::new(m.member))
        .collect::<Result<_, _>>()
        .map_err(|e| ApiError::internal(e.to_string()))?;
    let dealer = result_key_dealer(&members)
        .ok_or_else(|| ApiError::internal("a ceremony without members"))?
        .clone();
    let me = caller.member().unwrap_or_default();
    if me != dealer.as_str() {
        return Err(ApiError::forbidden(format!(
            "the result key of ceremony {id} is dealt by {dealer}, not by {me}"
        )));
    }
    let dealing = ResultKeyDealing::from_bytes(&req.body, members.len())
        .map_err(|e| ApiError::unprocessable(e.to_string()))?;
    if dealing.dealer != dealer {
        return Err(ApiError::unprocessable(format!(
            "the dealing names dealer {}, not {dealer}",
            dealing.dealer
        )));
    }
    let mut recipients: Vec<&MemberId> = dealing.sealed.iter().map(|s| &s.recipient).collect();
    recipients.sort();
    if recipients != members.iter().collect::<Vec<_>>() {
        return Err(ApiError::unprocessable(
            "the dealing must hold one sealed result key for every member of the ceremony",
        ));
    }
    let hash = *blake3::hash(&req.body).as_bytes();
    let slices: Vec<(String, Vec<u8>)> = dealing
        .sealed
        .iter()
        .map(|s| (s.recipient.as_str().to_string(), s.to_bytes()))
        .collect();
    let created = state
        .store
        .put_result_keys(&id, dealer.as_str(), &hash, &slices)
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

/// The result key sealed to `member` (`fedhe_crypto::SealedResultKey`
/// bytes), to that member only; 404 until the dealer has dealt.
#[utoipa::path(get, path = fedhe_api::routes::RESULT_KEY, tag = "ceremonies",
    params(("ceremony" = String, Path), ("member" = String, Path)),
    security(("member" = [])),
    responses((status = 200, content_type = "application/octet-stream", body = String),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json")))]
async fn get_result_key(
    State(state): Shared,
    P((id, member)): P<(String, String)>,
    req: Incoming,
) -> ApiResult<Response> {
    let req = req.read(&state, 0).await?;
    state.store.ceremony(&id).await?;
    let caller = auth::require_member(&state, &id, &req.parts()).await?;
    if caller.member() != Some(member.as_str()) {
        return Err(ApiError::forbidden(format!(
            "only {member} fetches the result key sealed to it"
        )));
    }
    Ok(octet_response(state.store.result_key(&id, &member).await?))
}
