//! Operational routes: liveness, readiness, Prometheus metrics, the OpenAPI
//! document, the administrator's audit trail (`/v1/audit`), and a
//! ceremony's hash-chained trail as its members read it
//! (`/v1/ceremonies/{c}/audit`) with the heads they sign
//! (`/v1/ceremonies/{c}/audit-heads/{m}`; issue 45, item 9).

use super::{created_or_ok, verify_upload_signature, Incoming, Shared, P};
use crate::auth;
use crate::problem::{ApiError, ApiResult};
use crate::AppState;
use axum::extract::State;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use fedhe_api::*;
use std::sync::Arc;
use utoipa_axum::{router::OpenApiRouter, routes};

/// The routes of this module.
pub(crate) fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(get_audit))
        .routes(routes!(get_ceremony_audit))
        .routes(routes!(put_audit_head))
        .routes(routes!(healthz))
        .routes(routes!(readyz))
        .routes(routes!(metrics))
        .routes(routes!(openapi_json))
}

/// The audit trail of a study (`?study=S`) or a ceremony (`?ceremony=C`),
/// oldest first: every state change with its actor, ids and hashes
/// (administrator). `after=SEQ` and `limit=N` (at most 10000) page it.
#[utoipa::path(get, path = fedhe_api::routes::AUDIT, tag = "audit",
    params(("study" = Option<String>, Query, description = "The study's entries"),
        ("ceremony" = Option<String>, Query, description = "The ceremony's entries"),
        ("after" = Option<i64>, Query, description = "Only entries with a larger seq"),
        ("limit" = Option<i64>, Query, description = "At most this many (default and maximum 10000)")),
    security(("admin" = [])),
    responses((status = 200, body = AuditLog),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 401, body = Problem, content_type = "application/problem+json")))]
async fn get_audit(State(state): Shared, req: Incoming) -> ApiResult<Json<AuditLog>> {
    let req = req.read(&state, 0).await?;
    auth::require_admin(&state, &req.headers)?;
    let (after, limit) = page(&req)?;
    let (study, ceremony) = (req.query("study")?, req.query("ceremony")?);
    let filter = match (&study, &ceremony) {
        (Some(s), None) => crate::store::audit::AuditFilter::Study(s),
        (None, Some(c)) => crate::store::audit::AuditFilter::Ceremony(c),
        _ => {
            return Err(ApiError::bad_request(
                "give exactly one of ?study=ID or ?ceremony=ID",
            ))
        }
    };
    Ok(Json(AuditLog {
        entries: state.store.audit(filter, after, limit).await?,
    }))
}

/// `after` and `limit` of an audit request.
fn page(req: &super::Received) -> ApiResult<(i64, i64)> {
    let number = |name: &str, default: i64| -> ApiResult<i64> {
        match req.query(name)? {
            None => Ok(default),
            Some(v) => v.parse::<i64>().map_err(|_| {
                ApiError::bad_request(format!(
                    "{name}={} is not an integer",
                    fedhe_crypto::text::quote(&v, 40)
                ))
            }),
        }
    };
    Ok((
        number("after", 0)?,
        number("limit", 10_000)?.clamp(1, 10_000),
    ))
}

/// A ceremony's hash-chained audit trail (its own entries and its
/// studies'), oldest first, with every entry's `prev` and `chain` value
/// (`fedhe_api::audit`): for the administrator and the ceremony's members,
/// who verify it (`fedhe audit --verify`). `after=SEQ` and `limit=N` (at
/// most 10000) page it.
#[utoipa::path(get, path = fedhe_api::routes::CEREMONY_AUDIT, tag = "audit",
    params(("ceremony" = String, Path, description = "Ceremony id"),
        ("after" = Option<i64>, Query, description = "Only entries with a larger seq"),
        ("limit" = Option<i64>, Query, description = "At most this many (default and maximum 10000)")),
    security(("admin" = []), ("member" = [])),
    responses((status = 200, body = AuditLog),
        (status = 400, body = Problem, content_type = "application/problem+json"),
        (status = 401, body = Problem, content_type = "application/problem+json")))]
async fn get_ceremony_audit(
    State(state): Shared,
    P(id): P<String>,
    req: Incoming,
) -> ApiResult<Json<AuditLog>> {
    let req = req.read(&state, 0).await?;
    state.store.ceremony(&id).await?;
    auth::require_reader(&state, &id, &req.parts()).await?;
    let (after, limit) = page(&req)?;
    Ok(Json(AuditLog {
        entries: state
            .store
            .audit(
                crate::store::audit::AuditFilter::Ceremony(&id),
                after,
                limit,
            )
            .await?,
    }))
}

/// A member's signed statement of a head of its ceremony's trail it saw
/// (`fedhe_api::audit::head_statement`): the head must be an entry of the
/// ceremony's chain with that value; it is recorded as an entry of the
/// trail (`audit.head_signed`, the signature in its detail), so every
/// member verifying the trail holds the server to it.
#[utoipa::path(put, path = fedhe_api::routes::AUDIT_HEAD, tag = "audit",
    params(("ceremony" = String, Path), ("member" = String, Path)),
    request_body = SignedAuditHead,
    security(("member" = [])),
    responses((status = 201, body = SignedAuditHead),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 422, body = Problem, content_type = "application/problem+json")))]
async fn put_audit_head(
    State(state): Shared,
    P((id, member)): P<(String, String)>,
    req: Incoming,
) -> ApiResult<Response> {
    let req = req.read(&state, state.config.max_json_bytes).await?;
    state.store.ceremony(&id).await?;
    let caller = auth::require_member(&state, &id, &req.parts()).await?;
    auth::require_self(&caller, &member)?;
    let signed: SignedAuditHead = req.json()?;
    let chain: [u8; 32] = fedhe_api::signing::decode_fixed(&signed.head.chain, "chain")
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    verify_upload_signature(
        &state,
        &id,
        &member,
        &fedhe_api::audit::head_statement(&id, &member, &signed.head),
        &signed.signature,
    )
    .await?;
    if state.store.audit_chain_value(&id, signed.head.seq).await? != Some(chain) {
        return Err(ApiError::unprocessable(format!(
            "seq {} with chain value {} is not an entry of ceremony {id}'s trail",
            signed.head.seq,
            hex::encode(chain)
        )));
    }
    let entry = crate::store::audit::NewAudit {
        actor: &member,
        action: fedhe_api::audit::HEAD_ACTION,
        ceremony: Some(&id),
        member: Some(&member),
        hash: Some(hex::encode(chain)),
        detail: Some(format!(
            "seq {} signature {}",
            signed.head.seq,
            signed.signature.to_ascii_lowercase()
        )),
        ..Default::default()
    };
    state.store.append_audit_checked(&entry).await?;
    Ok(created_or_ok(true, signed))
}

/// Liveness: the process answers.
#[utoipa::path(get, path = fedhe_api::routes::HEALTHZ, tag = "operations", responses((status = 200, description = "ok")))]
async fn healthz() -> &'static str {
    "ok\n"
}

/// Readiness: the store answers (and, on SQLite, no commit failed to reach
/// the disk).
#[utoipa::path(get, path = fedhe_api::routes::READYZ, tag = "operations",
    responses((status = 200, description = "ready"), (status = 503, body = Problem, content_type = "application/problem+json")))]
async fn readyz(State(state): Shared) -> ApiResult<&'static str> {
    state.store.ping().await.map_err(|_| {
        ApiError::unavailable(
            "the store is not ready: it does not answer, or a commit could not be synced to disk",
        )
    })?;
    Ok("ready\n")
}

/// Prometheus metrics (text format; administrator's bearer token).
#[utoipa::path(get, path = fedhe_api::routes::METRICS, tag = "operations", security(("admin" = [])),
    responses((status = 200, description = "Prometheus text exposition", content_type = "text/plain", body = String)))]
async fn metrics(State(state): Shared) -> ApiResult<Response> {
    let rounds = state.store.round_counts().await?;
    let mut r = (StatusCode::OK, state.metrics.render(&rounds)).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4"),
    );
    Ok(r)
}

/// This OpenAPI 3.1 document.
#[utoipa::path(get, path = fedhe_api::routes::OPENAPI, tag = "operations",
    responses((status = 200, description = "OpenAPI 3.1", content_type = "application/json", body = Object)))]
async fn openapi_json(
    axum::Extension(doc): axum::Extension<Arc<utoipa::openapi::OpenApi>>,
) -> Json<utoipa::openapi::OpenApi> {
    Json((*doc).clone())
}
