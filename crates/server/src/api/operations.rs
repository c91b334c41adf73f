//! Operational routes: liveness, readiness, Prometheus metrics, the OpenAPI
//! document, and the administrator's audit trail (`/v1/audit`).

use super::{Incoming, Shared};
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
        .routes(routes!(healthz))
        .routes(routes!(readyz))
        .routes(routes!(metrics))
        .routes(routes!(openapi_json))
}

/// The audit trail of a study (`?study=S`) or a ceremony (`?ceremony=C`),
/// oldest first: every state change with its actor, ids and hashes
/// (administrator). `after=SEQ` and `limit=N` (at most 10000) page it.
#[utoipa::path(get, path = "/v1/audit", tag = "audit",
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
    let after = number("after", 0)?;
    let limit = number("limit", 10_000)?.clamp(1, 10_000);
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

/// Liveness: the process answers.
#[utoipa::path(get, path = "/healthz", tag = "operations", responses((status = 200, description = "ok")))]
async fn healthz() -> &'static str {
    "ok\n"
}

/// Readiness: the store answers (and, on SQLite, no commit failed to reach
/// the disk).
#[utoipa::path(get, path = "/readyz", tag = "operations",
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
#[utoipa::path(get, path = "/metrics", tag = "operations", security(("admin" = [])),
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
#[utoipa::path(get, path = "/openapi.json", tag = "operations",
    responses((status = 200, description = "OpenAPI 3.1", content_type = "application/json", body = Object)))]
async fn openapi_json(
    axum::Extension(doc): axum::Extension<Arc<utoipa::openapi::OpenApi>>,
) -> Json<utoipa::openapi::OpenApi> {
    Json((*doc).clone())
}
