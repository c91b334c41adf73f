//! Studies under `/v1/studies`: creation from a spec the ceremony's
//! administrator key signed, and their status.

use super::{check_id, created_or_ok, Incoming, Shared, P};
use crate::auth;
use crate::engine;
use crate::problem::{ApiError, ApiResult};
use crate::AppState;
use axum::extract::State;
use axum::response::Response;
use axum::Json;
use fedhe_api::signing::{now_ms, parse_public_key, study_spec_statement, verify_hex};
use fedhe_api::*;
use std::sync::Arc;
use utoipa_axum::{router::OpenApiRouter, routes};

/// The routes of this module.
pub(crate) fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(create_study))
        .routes(routes!(get_study))
}

/// Create a study (administrator).
#[utoipa::path(post, path = fedhe_api::routes::STUDIES, tag = "studies",
    request_body = SignedStudySpec,
    security(("admin" = [])),
    responses((status = 201, body = StudyStatus), (status = 200, body = StudyStatus),
        (status = 409, body = Problem, content_type = "application/problem+json")))]
async fn create_study(State(state): Shared, req: Incoming) -> ApiResult<Response> {
    let req = req.read(&state, state.config.max_json_bytes).await?;
    auth::require_admin(&state, &req.headers)?;
    let signed: SignedStudySpec = req.json()?;
    let spec = signed.spec;
    check_id("study id", &spec.id)?;
    let c = state.store.ceremony(&spec.ceremony).await?;
    let members = state.store.members(&spec.ceremony).await?.len();
    let admin_key = c.admin_key.as_deref().ok_or_else(|| {
        ApiError::conflict(format!(
            "ceremony {} has no administrator key to sign study specs with; create a new ceremony",
            spec.ceremony
        ))
    })?;
    let admin_key = parse_public_key(admin_key)
        .map_err(|_| ApiError::internal("a stored administrator key is invalid"))?;
    verify_hex(
        &admin_key,
        &study_spec_statement(&spec.hash_hex()),
        &signed.signature,
        "study spec",
    )
    .map_err(|e| {
        ApiError::unprocessable(format!(
            "the study spec is not signed by the ceremony's administrator key: {e}"
        ))
    })?;
    let params = state.params(&c.parameter_set, c.allow_insecure)?;
    engine::contribution_shape(&params, members, &spec, 1)
        .map_err(|e| ApiError::bad_request(format!("bound: {e}")))?;
    if spec.min_contributors == 0 || spec.min_contributors as usize > members {
        return Err(ApiError::bad_request(format!(
            "min_contributors must be between 1 and the ceremony's {members} members, is {}",
            spec.min_contributors
        )));
    }
    if spec.round_timeout_secs == 0 || spec.decrypt_timeout_secs == 0 {
        return Err(ApiError::bad_request(
            "round and decryption timeouts must be at least one second",
        ));
    }
    if spec.round_cap == Some(0) {
        return Err(ApiError::bad_request(
            "round_cap must be at least 1 (leave it out for no cap)",
        ));
    }
    if c.phase == CeremonyPhase::Failed {
        return Err(ApiError::conflict(format!(
            "ceremony {} failed",
            spec.ceremony
        )));
    }
    let created = state
        .store
        .create_study(&spec, &signed.signature, now_ms())
        .await?;
    if created {
        let entry = crate::store::audit::NewAudit {
            actor: "admin",
            action: "study.created",
            ceremony: Some(&spec.ceremony),
            study: Some(&spec.id),
            hash: Some(spec.hash_hex()),
            detail: Some(format!("min_contributors {}", spec.min_contributors)),
            ..Default::default()
        };
        state.store.append_audit(&entry).await;
    }
    Ok(created_or_ok(
        created,
        study_status(&state, &spec.id).await?,
    ))
}

async fn study_status(state: &AppState, id: &str) -> ApiResult<StudyStatus> {
    let row = state.store.study(id).await?;
    let spec = row.spec;
    let members = state.store.member_names(&spec.ceremony).await?;
    Ok(StudyStatus {
        latest_round: state.store.latest_round(id).await?,
        spec_hash: spec.hash_hex(),
        admin_signature: row.admin_signature.unwrap_or_default(),
        spec,
        members,
    })
}

/// A study.
#[utoipa::path(get, path = fedhe_api::routes::STUDY, tag = "studies",
    params(("study" = String, Path)),
    security(("admin" = []), ("member" = [])),
    responses((status = 200, body = StudyStatus), (status = 404, body = Problem, content_type = "application/problem+json")))]
async fn get_study(
    State(state): Shared,
    P(id): P<String>,
    req: Incoming,
) -> ApiResult<Json<StudyStatus>> {
    let req = req.read(&state, 0).await?;
    let spec = state.store.study(&id).await?.spec;
    auth::require_reader(&state, &spec.ceremony, &req.parts()).await?;
    Ok(Json(study_status(&state, &id).await?))
}
