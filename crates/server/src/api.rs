//! The REST API under `/v1` and the operational routes. Every route is
//! registered through `utoipa_axum::routes!`, so `/openapi.json` lists
//! exactly the routes served.
//!
//! Uploads are idempotent PUTs keyed by member: the same bytes again answer
//! 200 (`created: false`), different bytes for a filled slot 409. A write is
//! answered 2xx only after its transaction committed.

use crate::auth::{self, RequestParts};
use crate::engine;
use crate::problem::{ApiError, ApiResult};
use crate::store::{Upload, UploadTable};
use crate::AppState;
use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, FromRequestParts, Request, State};
use axum::http::{header, request::Parts, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Json;
use fedhe_api::signing::{
    contribution_statement, decode_fixed, now_ms, parse_public_key, round_commitment_statement,
    share_digest_statement, study_spec_statement, sum_digest_statement, upload_statement,
    verify_hex, HEADER_UPLOAD_SIGNATURE,
};
use fedhe_api::*;
use fedhe_crypto::{
    CeremonyId, CommonRandomPoly, DecryptionShare, EncryptedVector, MemberId, PublicKeyShare,
    SumDigest, ThresholdDecryptionShare, WireObject,
};
use std::sync::Arc;
use std::time::Duration;
use utoipa::OpenApi;
use utoipa_axum::{router::OpenApiRouter, routes};

type Shared = State<Arc<AppState>>;

const OCTET: &str = "application/octet-stream";

/// The OpenAPI document's header.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "fedhe",
        description = "Federated Bayesian optimisation over a multiparty-RLWE encrypted-sum channel: the coordinating server.",
        license(name = "Apache-2.0")
    ),
    tags(
        (name = "ceremonies", description = "Key ceremonies: commit-then-reveal of public-key shares"),
        (name = "studies", description = "Studies and their rounds"),
        (name = "audit", description = "The append-only audit trail of state changes (administrator)"),
        (name = "operations", description = "Health, readiness, metrics, this document")
    ),
    components(schemas(Problem)),
    modifiers(&SecuritySchemes)
)]
struct ApiDoc;

struct SecuritySchemes;

impl utoipa::Modify for SecuritySchemes {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{
            ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme,
        };
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "admin",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
        components.add_security_scheme(
            "member",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                fedhe_api::signing::HEADER_SIGNATURE,
                "ed25519 signature over method, path, BLAKE3(body), fedhe-timestamp and fedhe-nonce, by the member named in fedhe-member",
            ))),
        );
    }
}

/// The router with every route, the OpenAPI document at `/openapi.json`
/// (browsable with Swagger UI at `/docs`),
/// problem+json fallbacks, the request timeout and the response counter.
pub fn router(state: Arc<AppState>) -> axum::Router {
    let (router, openapi) = OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(create_ceremony))
        .routes(routes!(get_ceremony))
        .routes(routes!(put_commitment))
        .routes(routes!(put_public_key_share, get_public_key_share))
        .routes(routes!(get_transcript))
        .routes(routes!(get_collective_key))
        .routes(routes!(put_dealing))
        .routes(routes!(get_dealing_for))
        .routes(routes!(put_dealing_verdict))
        .routes(routes!(create_study))
        .routes(routes!(get_study))
        .routes(routes!(open_round, get_round))
        .routes(routes!(put_round_commitment))
        .routes(routes!(list_round_commitments))
        .routes(routes!(put_contribution, get_contribution))
        .routes(routes!(put_decryption_claim))
        .routes(routes!(list_contributions))
        .routes(routes!(put_sum_digest))
        .routes(routes!(list_sum_digests))
        .routes(routes!(put_share_digest))
        .routes(routes!(list_share_digests))
        .routes(routes!(get_combined_share))
        .routes(routes!(get_aggregate))
        .routes(routes!(put_decryption_share, get_decryption_share))
        .routes(routes!(list_decryption_shares))
        .routes(routes!(get_result))
        .routes(routes!(get_audit))
        .routes(routes!(healthz))
        .routes(routes!(readyz))
        .routes(routes!(metrics))
        .routes(routes!(openapi_json))
        .routes(routes!(crate::ui::create_ticket))
        .split_for_parts();
    let router = router
        .route("/ui", axum::routing::get(crate::ui::index))
        .route("/ui/login", axum::routing::get(crate::ui::login))
        .route("/ui/studies/{study}", axum::routing::get(crate::ui::study));
    let openapi = Arc::new(openapi);
    let timeout = Duration::from_millis(state.config.request_timeout_ms);
    router
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            crate::gate::gate,
        ))
        .layer(axum::Extension(openapi))
        .layer(
            tower::ServiceBuilder::new()
                .layer(axum::error_handling::HandleErrorLayer::new(
                    |_: tower::BoxError| async {
                        ApiError::timeout(
                            "the request did not complete within the server's time limit",
                        )
                    },
                ))
                .timeout(timeout),
        )
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            count_responses,
        ))
        .with_state(state)
        .merge(swagger_ui_dist::generate_routes(
            swagger_ui_dist::ApiDefinition {
                uri_prefix: "/docs",
                api_definition: swagger_ui_dist::OpenApiSource::Uri("/openapi.json"),
                title: Some("fedhe API"),
            },
        ))
}

async fn count_responses(
    State(state): Shared,
    request: Request,
    next: axum::middleware::Next,
) -> Response {
    let response = next.run(request).await;
    state.metrics.response(response.status().as_u16());
    response
}

async fn not_found(uri: Uri) -> ApiError {
    ApiError::not_found(format!("no route {}", uri.path()))
}

async fn method_not_allowed(method: Method, uri: Uri) -> ApiError {
    ApiError::method_not_allowed(format!("{method} is not allowed on {}", uri.path()))
}

/// Path parameters with problem+json rejections.
pub struct P<T>(pub T);

impl<S: Send + Sync, T> FromRequestParts<S> for P<T>
where
    T: serde::de::DeserializeOwned + Send,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|p| P(p.0))
            .map_err(|e| ApiError::bad_request(format!("path: {}", e.body_text())))
    }
}

/// A whole request, read by the handler itself (its body limit depends on the route).
pub struct Incoming {
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
}

impl<S: Send + Sync> FromRequest<S> for Incoming {
    type Rejection = ApiError;

    async fn from_request(req: Request, _: &S) -> Result<Self, Self::Rejection> {
        let (parts, body) = req.into_parts();
        Ok(Self {
            method: parts.method,
            uri: parts.uri,
            headers: parts.headers,
            body,
        })
    }
}

/// A request whose body has been read.
struct Received {
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
}

impl Received {
    fn parts(&self) -> RequestParts<'_> {
        RequestParts {
            method: &self.method,
            uri: &self.uri,
            headers: &self.headers,
            body: &self.body,
        }
    }

    /// The `?wait=` of a long poll, capped by the configuration.
    fn wait(&self, state: &AppState) -> ApiResult<Duration> {
        Ok(match self.query("wait")? {
            None => Duration::ZERO,
            Some(v) => {
                let secs: f64 = v
                    .parse()
                    .ok()
                    .filter(|s: &f64| s.is_finite() && *s >= 0.0)
                    .ok_or_else(|| {
                        ApiError::bad_request(format!("wait={v:?} is not a number of seconds"))
                    })?;
                Duration::from_secs_f64(secs.min(state.config.max_wait_secs as f64))
            }
        })
    }

    fn query(&self, name: &str) -> ApiResult<Option<String>> {
        let Some(q) = self.uri.query() else {
            return Ok(None);
        };
        for pair in q.split('&') {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            if k == name {
                return Ok(Some(v.to_string()));
            }
        }
        Ok(None)
    }

    fn require_content_type(&self, expected: &str) -> ApiResult<()> {
        let got = self
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        if got.split(';').next().map(str::trim) == Some(expected) {
            Ok(())
        } else {
            Err(ApiError::unsupported_media_type(format!(
                "the body must be {expected}, not {:?}",
                got
            )))
        }
    }

    fn json<T: serde::de::DeserializeOwned>(&self) -> ApiResult<T> {
        self.require_content_type("application/json")?;
        serde_json::from_slice(&self.body)
            .map_err(|e| ApiError::bad_request(format!("invalid JSON body: {e}")))
    }
}

impl Incoming {
    /// Reads the body: at most `limit` bytes, within the slow-body deadline.
    async fn read(self, state: &AppState, limit: usize) -> ApiResult<Received> {
        if let Some(declared) = self
            .headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok())
        {
            if declared > limit as u64 {
                return Err(ApiError::payload_too_large(format!(
                    "the body has {declared} bytes; this route accepts at most {limit}"
                )));
            }
        }
        let deadline = Duration::from_millis(state.config.body_timeout_ms);
        let body = tokio::time::timeout(deadline, axum::body::to_bytes(self.body, limit))
            .await
            .map_err(|_| {
                ApiError::request_timeout(format!(
                    "the body did not arrive within {} ms",
                    deadline.as_millis()
                ))
            })?
            .map_err(|e| {
                if e.to_string().contains("length limit") {
                    ApiError::payload_too_large(format!(
                        "the body exceeds this route's limit of {limit} bytes"
                    ))
                } else {
                    ApiError::bad_request(format!("the body could not be read: {e}"))
                }
            })?;
        Ok(Received {
            method: self.method,
            uri: self.uri,
            headers: self.headers,
            body,
        })
    }
}

fn octet_response(bytes: Vec<u8>) -> Response {
    let mut r = (StatusCode::OK, bytes).into_response();
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(OCTET));
    r
}

fn created_or_ok<T: serde::Serialize>(created: bool, body: T) -> Response {
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    (status, Json(body)).into_response()
}

fn parse_round(text: &str) -> ApiResult<u64> {
    text.parse::<u64>()
        .ok()
        .filter(|r| (1..=i64::MAX as u64).contains(r))
        .ok_or_else(|| ApiError::bad_request(format!("round {text:?} is not a number ≥ 1")))
}

fn check_id(what: &'static str, id: &str) -> ApiResult<()> {
    MemberId::new(id).map(|_| ()).map_err(|_| {
        ApiError::bad_request(format!(
            "{what} {:?} is not 1-64 characters of [A-Za-z0-9._-]",
            id.chars().take(80).collect::<String>()
        ))
    })
}

/// Waits (up to `wait`) until `ready` returns `Some`, waking on every state
/// change and at least every 250 ms (other replicas change the store too).
async fn long_poll<T, F, Fut>(
    state: &AppState,
    wait: Duration,
    mut ready: F,
) -> ApiResult<Option<T>>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = ApiResult<Option<T>>>,
{
    let until = tokio::time::Instant::now() + wait;
    loop {
        let notified = state.changed.notified();
        if let Some(v) = ready().await? {
            return Ok(Some(v));
        }
        let now = tokio::time::Instant::now();
        if now >= until {
            return Ok(None);
        }
        let slice = (until - now).min(Duration::from_millis(250));
        let _ = tokio::time::timeout(slice, notified).await;
    }
}

// ---- ceremonies -------------------------------------------------------------

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
#[utoipa::path(post, path = "/v1/ceremonies", tag = "ceremonies",
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
#[utoipa::path(get, path = "/v1/ceremonies/{ceremony}", tag = "ceremonies",
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
#[utoipa::path(put, path = "/v1/ceremonies/{ceremony}/commitments/{member}", tag = "ceremonies",
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
    state.changed.notify_waiters();
    Ok(created_or_ok(
        created,
        UploadReceipt {
            hash: commitment.share_hash,
            created,
        },
    ))
}

/// The upload signature an octet-stream upload carries in its header.
fn upload_signature(headers: &HeaderMap) -> ApiResult<String> {
    headers
        .get(HEADER_UPLOAD_SIGNATURE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .ok_or_else(|| {
            ApiError::bad_request(format!("header {HEADER_UPLOAD_SIGNATURE} is missing"))
        })
}

/// Verifies `member`'s signature of `statement` under its identity key in
/// `ceremony`.
async fn verify_upload_signature(
    state: &AppState,
    ceremony: &str,
    member: &str,
    statement: &[u8],
    signature: &str,
) -> ApiResult<()> {
    let key = state
        .store
        .member_key(ceremony, member)
        .await?
        .ok_or_else(|| {
            ApiError::unauthorized(format!("{member} is not a member of ceremony {ceremony}"))
        })?;
    let key = ed25519_dalek::VerifyingKey::from_bytes(&key)
        .map_err(|_| ApiError::internal("a stored identity key is invalid"))?;
    verify_hex(&key, statement, signature, "upload")
        .map_err(|e| ApiError::unprocessable(e.to_string()))
}

/// Reveal a public-key share (its hash must match the commitment).
#[utoipa::path(put, path = "/v1/ceremonies/{ceremony}/public-key-shares/{member}", tag = "ceremonies",
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
    state.changed.notify_waiters();
    Ok(created_or_ok(
        created,
        UploadReceipt {
            hash: hex::encode(hash),
            created,
        },
    ))
}

/// A revealed public-key share.
#[utoipa::path(get, path = "/v1/ceremonies/{ceremony}/public-key-shares/{member}", tag = "ceremonies",
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
#[utoipa::path(get, path = "/v1/ceremonies/{ceremony}/transcript", tag = "ceremonies",
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
#[utoipa::path(get, path = "/v1/ceremonies/{ceremony}/collective-key", tag = "ceremonies",
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
#[utoipa::path(put, path = "/v1/ceremonies/{ceremony}/dealings/{member}", tag = "ceremonies",
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
    state.changed.notify_waiters();
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
#[utoipa::path(get, path = "/v1/ceremonies/{ceremony}/dealings/{dealer}/for/{recipient}", tag = "ceremonies",
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
#[utoipa::path(put, path = "/v1/ceremonies/{ceremony}/dealing-verdicts/{member}", tag = "ceremonies",
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
        reason: verdict
            .reason
            .as_ref()
            .map(|r| r.chars().take(500).collect()),
    };
    let created = state.store.put_dealing_verdict(&id, &row).await?;
    engine::advance_ceremony(&state, &id).await?;
    state.changed.notify_waiters();
    Ok(created_or_ok(created, verdict))
}

// ---- studies and rounds -------------------------------------------------------

/// Create a study (administrator).
#[utoipa::path(post, path = "/v1/studies", tag = "studies",
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
#[utoipa::path(get, path = "/v1/studies/{study}", tag = "studies",
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
#[utoipa::path(put, path = "/v1/studies/{study}/rounds/{round}", tag = "studies",
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
    let now = now_ms();
    let deadline =
        now.saturating_add((spec.round_timeout_secs.min(10 * 365 * 86_400) * 1000) as i64);
    let actor = caller.member().unwrap_or("admin");
    state
        .store
        .open_round(&study, round, now, deadline, actor)
        .await?;
    state.changed.notify_waiters();
    Ok(Json(round_status(&state, &study, round).await?))
}

/// A round's status; `?wait=SECS&since=VERSION` waits until its version exceeds `since`.
#[utoipa::path(get, path = "/v1/studies/{study}/rounds/{round}", tag = "studies",
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
#[utoipa::path(put, path = "/v1/studies/{study}/rounds/{round}/commitments/{member}", tag = "studies",
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
        &round_commitment_statement(&study, &member, round, &hash, body.values, &spec.hash_hex()),
        &body.signature,
    )
    .await?;
    let entry = CommittedContribution {
        member: member.clone(),
        hash: hex::encode(hash),
        values: body.values,
        signature: body.signature,
    };
    let created = state
        .store
        .put_round_commitment(&study, round, &entry, &hash, now_ms())
        .await?;
    if created {
        state.changed.notify_waiters();
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
#[utoipa::path(get, path = "/v1/studies/{study}/rounds/{round}/commitments", tag = "studies",
    params(("study" = String, Path), ("round" = u64, Path)),
    security(("admin" = []), ("member" = [])),
    responses((status = 200, body = CommitmentList), (status = 404, body = Problem, content_type = "application/problem+json")))]
async fn list_round_commitments(
    State(state): Shared,
    P((study, round)): P<(String, String)>,
    req: Incoming,
) -> ApiResult<Json<CommitmentList>> {
    let req = req.read(&state, 0).await?;
    let round = parse_round(&round)?;
    let spec = state.store.study(&study).await?.spec;
    auth::require_reader(&state, &spec.ceremony, &req.parts()).await?;
    let r = state.store.round(&study, round).await?;
    Ok(Json(CommitmentList {
        state: r.state,
        values: r.value_count.map(|v| v as u64),
        commitments: state
            .store
            .listed_commitments(&study, round, r.value_count, r.state)
            .await?
            .to_vec(),
        list_hash: r.commitment_list_hash,
    }))
}

/// Claim a place in a t-of-n round's decrypting set (once the aggregate
/// exists): the first T claimants form the set, and only they upload
/// decryption shares. Answers the round's status with the set so far.
#[utoipa::path(put, path = "/v1/studies/{study}/rounds/{round}/decryption-claims/{member}", tag = "studies",
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
        state.changed.notify_waiters();
    }
    Ok(Json(round_status(&state, &study, round).await?))
}

/// Upload (reveal) a committed contribution: an EncryptedVector under the
/// ceremony's collective key whose hash is the member's commitment, with the
/// member's signature of (study, round, hash, frozen commitment list's hash)
/// in `fedhe-upload-signature`.
#[utoipa::path(put, path = "/v1/studies/{study}/rounds/{round}/contributions/{member}", tag = "studies",
    params(("study" = String, Path), ("round" = u64, Path), ("member" = String, Path),
        ("fedhe-upload-signature" = String, Header, description = "ed25519 signature of the upload statement, hex")),
    request_body(content = String, content_type = "application/octet-stream", description = "EncryptedVector wire object"),
    security(("member" = [])),
    responses((status = 201, body = UploadReceipt), (status = 200, description = "The same bytes again", body = UploadReceipt),
        (status = 409, description = "Different bytes for this slot, or the round is not collecting", body = Problem, content_type = "application/problem+json"),
        (status = 413, body = Problem, content_type = "application/problem+json"),
        (status = 422, body = Problem, content_type = "application/problem+json")))]
async fn put_contribution(
    State(state): Shared,
    P((study, round, member)): P<(String, String, String)>,
    req: Incoming,
) -> ApiResult<Response> {
    put_upload(state, study, round, member, req, UploadTable::Contributions).await
}

/// Upload a decryption share of the round's aggregate, signed like a contribution.
#[utoipa::path(put, path = "/v1/studies/{study}/rounds/{round}/decryption-shares/{member}", tag = "studies",
    params(("study" = String, Path), ("round" = u64, Path), ("member" = String, Path),
        ("fedhe-upload-signature" = String, Header, description = "ed25519 signature of the upload statement, hex")),
    request_body(content = String, content_type = "application/octet-stream", description = "DecryptionShare wire object"),
    security(("member" = [])),
    responses((status = 201, body = UploadReceipt), (status = 200, body = UploadReceipt),
        (status = 409, body = Problem, content_type = "application/problem+json"),
        (status = 422, body = Problem, content_type = "application/problem+json")))]
async fn put_decryption_share(
    State(state): Shared,
    P((study, round, member)): P<(String, String, String)>,
    req: Incoming,
) -> ApiResult<Response> {
    put_upload(
        state,
        study,
        round,
        member,
        req,
        UploadTable::DecryptionShares,
    )
    .await
}

async fn put_upload(
    state: Arc<AppState>,
    study: String,
    round: String,
    member: String,
    req: Incoming,
    table: UploadTable,
) -> ApiResult<Response> {
    let req = req.read(&state, state.config.max_upload_bytes).await?;
    let round = parse_round(&round)?;
    let spec = state.store.study(&study).await?.spec;
    let caller = auth::require_member(&state, &spec.ceremony, &req.parts()).await?;
    auth::require_self(&caller, &member)?;
    req.require_content_type(OCTET)?;
    let r = state.store.round(&study, round).await?;
    let hash = *blake3::hash(&req.body).as_bytes();
    let signature = upload_signature(&req.headers)?;
    let statement = match table {
        // A reveal names the frozen commitment list the member saw.
        UploadTable::Contributions => {
            let list_hash = r.commitment_list_hash.as_deref().ok_or_else(|| {
                ApiError::conflict(format!(
                    "round {round} of study {study} is {}: contributions are revealed only once the commitments are frozen",
                    r.state.as_str()
                ))
            })?;
            contribution_statement(&study, &member, round, &hash, list_hash)
        }
        UploadTable::DecryptionShares => {
            upload_statement(UploadKind::DecryptionShare, &study, &member, round, &hash)
        }
        // A digest names the contributor's own contribution, the list and the
        // aggregate whose challenge it was made on.
        // The list's entries hash is stored when the round aggregates: one
        // row read per digest, not the whole list.
        UploadTable::SumDigests => {
            let aggregate_hash = r.aggregate_hash.ok_or_else(|| not_ready(&r, "aggregate"))?;
            let contribution_hash = state
                .store
                .upload_hash(UploadTable::Contributions, &study, round, &member)
                .await?
                .ok_or_else(|| {
                    ApiError::unprocessable(format!(
                        "{member} has no contribution in round {round} of study {study} to digest"
                    ))
                })?;
            let entries_hash = match r.contribution_entries_hash {
                Some(h) => h,
                // A round aggregated before the column existed.
                None => ContributionList::entries_hash_of(
                    &study,
                    round,
                    &state
                        .store
                        .uploads(UploadTable::Contributions, &study, round)
                        .await?,
                ),
            };
            sum_digest_statement(
                &study,
                &member,
                round,
                &contribution_hash,
                &entries_hash,
                &aggregate_hash,
                &req.body,
            )
        }
        // A share digest names the maker's own decryption share, the share
        // list and combined share stored with the result, the aggregate and,
        // t-of-n, the decrypting set.
        UploadTable::ShareDigests => {
            let (Some(aggregate_hash), Some(combined_hash), Some(entries_hash)) =
                (r.aggregate_hash, r.combined_hash, r.share_entries_hash)
            else {
                return Err(not_ready(&r, "combined decryption share"));
            };
            let share_hash = state
                .store
                .upload_hash(UploadTable::DecryptionShares, &study, round, &member)
                .await?
                .ok_or_else(|| {
                    ApiError::unprocessable(format!(
                        "{member} has no decryption share in round {round} of study {study} to digest"
                    ))
                })?;
            let set = match state.store.ceremony(&spec.ceremony).await?.threshold {
                None => Vec::new(),
                Some(t) => {
                    let mut set = state.store.decrypting_set(&study, round, Some(t)).await?;
                    set.sort();
                    set
                }
            };
            share_digest_statement(
                &study,
                &member,
                round,
                &share_hash,
                &entries_hash,
                &combined_hash,
                &aggregate_hash,
                &set,
                &req.body,
            )
        }
    };
    verify_upload_signature(&state, &spec.ceremony, &member, &statement, &signature).await?;
    let c = state.store.ceremony(&spec.ceremony).await?;
    let params = state.params(&c.parameter_set, c.allow_insecure)?;
    // Only a contribution's encoding is checked against the member count.
    let members = match table {
        UploadTable::Contributions => state.store.member_count(&spec.ceremony).await?,
        _ => 0,
    };
    let body = req.body.clone();
    let expected_parts = r.parts;
    let check_member = member.clone();
    // t-of-n: a decryption share is made for the round's full decrypting
    // set, by one of its members.
    let decrypting_set = match (table, c.threshold) {
        (UploadTable::DecryptionShares, Some(t)) => {
            let mut set = state.store.decrypting_set(&study, round, Some(t)).await?;
            if set.len() < t as usize {
                return Err(ApiError::conflict(format!(
                    "round {round} of study {study} has {} of the {t} members of its decrypting set",
                    set.len()
                )));
            }
            if !set.contains(&member) {
                return Err(ApiError::unprocessable(format!(
                    "{member} is not in the decrypting set of round {round} ({})",
                    set.join(", ")
                )));
            }
            set.sort();
            Some(set)
        }
        _ => None,
    };
    // Decode fully (bounds, residues, checksum) before anything is stored.
    let shape = tokio::task::spawn_blocking(move || -> ApiResult<Option<String>> {
        match table {
            UploadTable::Contributions => {
                let v = EncryptedVector::from_bytes(&params, &body)
                    .map_err(|e| ApiError::unprocessable(format!("not an encrypted vector: {e}")))?;
                let e = v.encoding();
                if (e.members as usize) < members {
                    return Err(ApiError::unprocessable(format!(
                        "the vector is encoded for {} members; the ceremony has {members}, so sums could wrap",
                        e.members
                    )));
                }
                Ok(Some(engine::shape_text(e, v.len() as u64)))
            }
            UploadTable::SumDigests | UploadTable::ShareDigests => {
                SumDigest::from_bytes(&params, &body)
                    .map_err(|e| ApiError::unprocessable(format!("not a digest: {e}")))?;
                Ok(None)
            }
            UploadTable::DecryptionShares => {
                let s = match &decrypting_set {
                    None => DecryptionShare::from_bytes(&params, &body).map_err(|e| {
                        ApiError::unprocessable(format!("not a decryption share: {e}"))
                    })?,
                    Some(set) => {
                        let t = ThresholdDecryptionShare::from_bytes(&params, &body).map_err(|e| {
                            ApiError::unprocessable(format!(
                                "not a threshold decryption share: {e}"
                            ))
                        })?;
                        let named: Vec<&str> = t.active().iter().map(|m| m.as_str()).collect();
                        if named != set.iter().map(String::as_str).collect::<Vec<_>>() {
                            return Err(ApiError::unprocessable(format!(
                                "the share was made for the decrypting set {}, not the round's {}",
                                named.join(", "),
                                set.join(", ")
                            )));
                        }
                        t.share().clone()
                    }
                };
                if s.member().as_str() != check_member {
                    return Err(ApiError::unprocessable(format!(
                        "the share names member {}, not {check_member}",
                        s.member()
                    )));
                }
                if let Some(parts) = expected_parts {
                    if s.polys().len() as i64 != parts {
                        return Err(ApiError::unprocessable(format!(
                            "the share has {} polynomials; the aggregate has {parts} ciphertexts",
                            s.polys().len()
                        )));
                    }
                }
                Ok(None)
            }
        }
    })
    .await
    .map_err(|_| ApiError::internal("decoding task failed"))??;
    let created = state
        .store
        .put_upload(
            table,
            &Upload {
                study: &study,
                round,
                member: &member,
                bytes: &req.body,
                hash,
                signature: &signature,
                shape,
            },
            now_ms(),
        )
        .await?;
    if created {
        state.metrics.uploaded(req.body.len());
        state.changed.notify_waiters();
        // A digest changes no round state.
        if !matches!(table, UploadTable::SumDigests | UploadTable::ShareDigests) {
            engine::advance_round(&state, &study, round).await?;
        }
    }
    Ok(created_or_ok(
        created,
        UploadReceipt {
            hash: hex::encode(hash),
            created,
        },
    ))
}

/// One member's contribution.
#[utoipa::path(get, path = "/v1/studies/{study}/rounds/{round}/contributions/{member}", tag = "studies",
    params(("study" = String, Path), ("round" = u64, Path), ("member" = String, Path)),
    security(("admin" = []), ("member" = [])),
    responses((status = 200, content_type = "application/octet-stream", body = String),
        (status = 404, body = Problem, content_type = "application/problem+json")))]
async fn get_contribution(
    State(state): Shared,
    P((study, round, member)): P<(String, String, String)>,
    req: Incoming,
) -> ApiResult<Response> {
    get_upload(state, study, round, member, req, UploadTable::Contributions).await
}

/// One member's decryption share.
#[utoipa::path(get, path = "/v1/studies/{study}/rounds/{round}/decryption-shares/{member}", tag = "studies",
    params(("study" = String, Path), ("round" = u64, Path), ("member" = String, Path)),
    security(("admin" = []), ("member" = [])),
    responses((status = 200, content_type = "application/octet-stream", body = String),
        (status = 404, body = Problem, content_type = "application/problem+json")))]
async fn get_decryption_share(
    State(state): Shared,
    P((study, round, member)): P<(String, String, String)>,
    req: Incoming,
) -> ApiResult<Response> {
    get_upload(
        state,
        study,
        round,
        member,
        req,
        UploadTable::DecryptionShares,
    )
    .await
}

async fn get_upload(
    state: Arc<AppState>,
    study: String,
    round: String,
    member: String,
    req: Incoming,
    table: UploadTable,
) -> ApiResult<Response> {
    let req = req.read(&state, 0).await?;
    let round = parse_round(&round)?;
    let spec = state.store.study(&study).await?.spec;
    auth::require_reader(&state, &spec.ceremony, &req.parts()).await?;
    if table == UploadTable::Contributions {
        // No member may see another's contribution before the round's
        // contributions are fixed and summed (the copy attack, DESIGN.md §6).
        let r = state.store.round(&study, round).await?;
        if r.aggregate_hash.is_none() {
            return Err(ApiError::conflict(format!(
                "round {round} of study {study} is {}: contributions can be read only once the aggregate exists",
                r.state.as_str()
            )));
        }
    }
    Ok(octet_response(
        state
            .store
            .upload_bytes(table, &study, round, &member)
            .await?,
    ))
}

/// The decryption shares of a round, each with its member's signature, and
/// the hash of the aggregate they decrypt: a member recombines them itself
/// rather than trust the result this server decoded.
#[utoipa::path(get, path = "/v1/studies/{study}/rounds/{round}/decryption-shares", tag = "studies",
    params(("study" = String, Path), ("round" = u64, Path)),
    security(("admin" = []), ("member" = [])),
    responses((status = 200, body = DecryptionShareList), (status = 404, body = Problem, content_type = "application/problem+json")))]
async fn list_decryption_shares(
    State(state): Shared,
    P((study, round)): P<(String, String)>,
    req: Incoming,
) -> ApiResult<Json<DecryptionShareList>> {
    let req = req.read(&state, 0).await?;
    let round = parse_round(&round)?;
    let spec = state.store.study(&study).await?.spec;
    auth::require_reader(&state, &spec.ceremony, &req.parts()).await?;
    let r = state.store.round(&study, round).await?;
    Ok(Json(DecryptionShareList {
        state: r.state,
        shares: state
            .store
            .listed_uploads(UploadTable::DecryptionShares, &study, round, r.state)
            .await?
            .to_vec(),
        aggregate_hash: r.aggregate_hash.map(hex::encode),
    }))
}

/// Upload the digest of this member's contribution on the round's challenge
/// (`fedhe_crypto::sum_digest`), once the aggregate exists; signed (header
/// `fedhe-upload-signature`) over `fedhe_api::signing::sum_digest_statement`.
#[utoipa::path(put, path = "/v1/studies/{study}/rounds/{round}/sum-digests/{member}", tag = "studies",
    params(("study" = String, Path), ("round" = u64, Path), ("member" = String, Path),
        ("fedhe-upload-signature" = String, Header, description = "ed25519 signature of the sum-digest statement, hex")),
    request_body(content = String, content_type = "application/octet-stream", description = "SumDigest bytes"),
    security(("member" = [])),
    responses((status = 201, body = UploadReceipt), (status = 200, body = UploadReceipt),
        (status = 409, body = Problem, content_type = "application/problem+json"),
        (status = 422, body = Problem, content_type = "application/problem+json")))]
async fn put_sum_digest(
    State(state): Shared,
    P((study, round, member)): P<(String, String, String)>,
    req: Incoming,
) -> ApiResult<Response> {
    put_upload(state, study, round, member, req, UploadTable::SumDigests).await
}

/// The contributors' signed digests of a round; `?wait=SECS&count=K` waits
/// until at least K are in (or the round is done or failed).
#[utoipa::path(get, path = "/v1/studies/{study}/rounds/{round}/sum-digests", tag = "studies",
    params(("study" = String, Path), ("round" = u64, Path),
        ("wait" = Option<f64>, Query, description = "Long poll: seconds to wait"),
        ("count" = Option<u64>, Query, description = "Long poll: the number of digests to wait for")),
    security(("admin" = []), ("member" = [])),
    responses((status = 200, body = SumDigestList), (status = 404, body = Problem, content_type = "application/problem+json")))]
async fn list_sum_digests(
    State(state): Shared,
    P((study, round)): P<(String, String)>,
    req: Incoming,
) -> ApiResult<Json<SumDigestList>> {
    list_digests(state, study, round, req, UploadTable::SumDigests).await
}

/// Upload the digest of this member's decryption share on the challenge of
/// the round's combined share (`SumChallenge::derive_for_shares`), once the
/// result is published; signed (header `fedhe-upload-signature`) over
/// `fedhe_api::signing::share_digest_statement`.
#[utoipa::path(put, path = "/v1/studies/{study}/rounds/{round}/share-digests/{member}", tag = "studies",
    params(("study" = String, Path), ("round" = u64, Path), ("member" = String, Path),
        ("fedhe-upload-signature" = String, Header, description = "ed25519 signature of the share-digest statement, hex")),
    request_body(content = String, content_type = "application/octet-stream", description = "SumDigest bytes"),
    security(("member" = [])),
    responses((status = 201, body = UploadReceipt), (status = 200, body = UploadReceipt),
        (status = 409, body = Problem, content_type = "application/problem+json"),
        (status = 422, body = Problem, content_type = "application/problem+json")))]
async fn put_share_digest(
    State(state): Shared,
    P((study, round, member)): P<(String, String, String)>,
    req: Incoming,
) -> ApiResult<Response> {
    put_upload(state, study, round, member, req, UploadTable::ShareDigests).await
}

/// The share makers' signed digests of their decryption shares;
/// `?wait=SECS&count=K` waits until at least K are in (or the round failed).
#[utoipa::path(get, path = "/v1/studies/{study}/rounds/{round}/share-digests", tag = "studies",
    params(("study" = String, Path), ("round" = u64, Path),
        ("wait" = Option<f64>, Query, description = "Long poll: seconds to wait"),
        ("count" = Option<u64>, Query, description = "Long poll: the number of digests to wait for")),
    security(("admin" = []), ("member" = [])),
    responses((status = 200, body = SumDigestList), (status = 404, body = Problem, content_type = "application/problem+json")))]
async fn list_share_digests(
    State(state): Shared,
    P((study, round)): P<(String, String)>,
    req: Incoming,
) -> ApiResult<Json<SumDigestList>> {
    list_digests(state, study, round, req, UploadTable::ShareDigests).await
}

/// The digests of a round in `table` (sum or share digests), long-polled
/// until `count` are in or no more can come: sum digests stop with the
/// round (done or failed), share digests, made once it is done, only if it
/// failed.
async fn list_digests(
    state: Arc<AppState>,
    study: String,
    round: String,
    req: Incoming,
    table: UploadTable,
) -> ApiResult<Json<SumDigestList>> {
    let req = req.read(&state, 0).await?;
    let round = parse_round(&round)?;
    let spec = state.store.study(&study).await?.spec;
    auth::require_reader(&state, &spec.ceremony, &req.parts()).await?;
    let count: usize = match req.query("count")? {
        None => 0,
        Some(v) => v
            .parse()
            .map_err(|_| ApiError::bad_request(format!("count={v:?} is not a number")))?,
    };
    let st = &state;
    let study_ref = &study;
    let read = || async move {
        let r = st.store.round(study_ref, round).await?;
        let rows = st.store.uploads_with_bytes(table, study_ref, round).await?;
        Ok::<_, ApiError>((r, rows))
    };
    // A waiter wakes on every upload of the round: it counts the digests
    // (on the index) and reads their n rows only once enough are in.
    let ready = long_poll(st, req.wait(st)?, || async move {
        let r = st.store.round(study_ref, round).await?;
        let settled = match table {
            UploadTable::ShareDigests => r.state == RoundState::Failed,
            _ => matches!(r.state, RoundState::Done | RoundState::Failed),
        };
        if !settled && st.store.upload_count(table, study_ref, round).await? < count {
            return Ok(None);
        }
        read().await.map(Some)
    })
    .await?;
    let (r, rows) = match ready {
        Some(v) => v,
        None => read().await?,
    };
    Ok(Json(SumDigestList {
        state: r.state,
        digests: rows
            .into_iter()
            .map(|(member, bytes, signature)| SignedSumDigest {
                member,
                digest: hex::encode(bytes),
                signature,
            })
            .collect(),
        aggregate_hash: r.aggregate_hash.map(hex::encode),
    }))
}

/// The contributions of a round, each with its member's signature, and the
/// hash of their aggregate once it exists.
#[utoipa::path(get, path = "/v1/studies/{study}/rounds/{round}/contributions", tag = "studies",
    params(("study" = String, Path), ("round" = u64, Path)),
    security(("admin" = []), ("member" = [])),
    responses((status = 200, body = ContributionList), (status = 404, body = Problem, content_type = "application/problem+json")))]
async fn list_contributions(
    State(state): Shared,
    P((study, round)): P<(String, String)>,
    req: Incoming,
) -> ApiResult<Json<ContributionList>> {
    let req = req.read(&state, 0).await?;
    let round = parse_round(&round)?;
    let spec = state.store.study(&study).await?.spec;
    auth::require_reader(&state, &spec.ceremony, &req.parts()).await?;
    let r = state.store.round(&study, round).await?;
    Ok(Json(ContributionList {
        state: r.state,
        contributions: state
            .store
            .listed_uploads(UploadTable::Contributions, &study, round, r.state)
            .await?
            .to_vec(),
        aggregate_hash: r.aggregate_hash.map(hex::encode),
    }))
}

/// The aggregate C = Σ c_i (EncryptedVector wire object); `?wait=SECS` waits
/// for it. Its hash and the contributions it sums are listed at
/// `/contributions`.
#[utoipa::path(get, path = "/v1/studies/{study}/rounds/{round}/aggregate", tag = "studies",
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

/// The combined decryption share `D = Σ_j d_j` of a finished round
/// (`fedhe_crypto::CombinedShare` bytes; its hash is the result's
/// `combined_hash`): a member decodes `C0 + D` itself.
#[utoipa::path(get, path = "/v1/studies/{study}/rounds/{round}/combined-share", tag = "studies",
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

fn not_ready(r: &crate::store::RoundRow, what: &str) -> ApiError {
    ApiError::conflict(format!(
        "round {} of study {} is {}{}; no {what} yet",
        r.round,
        r.study,
        r.state.as_str(),
        r.reason
            .as_deref()
            .map(|x| format!(" ({x})"))
            .unwrap_or_default()
    ))
}

/// The decoded sum with the hashes of the lists of signed contributions and
/// shares it came from (the lists themselves at `.../contributions` and
/// `.../decryption-shares`); `?wait=SECS` waits for it.
#[utoipa::path(get, path = "/v1/studies/{study}/rounds/{round}/result", tag = "studies",
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
    let (Some(result), Some(hash)) = (&r.result, r.aggregate_hash) else {
        return Err(not_ready(&r, "result"));
    };
    let values: Vec<f64> = serde_json::from_str(result)
        .map_err(|_| ApiError::internal("a stored result is malformed"))?;
    Ok(Json(RoundResult {
        round,
        values,
        aggregate_hash: hex::encode(hash),
        // The lists' hashes, stored with the round: a result request reads
        // one row whatever the number of members.
        contribution_entries_hash: r.contribution_entries_hash.map(hex::encode),
        share_entries_hash: r.share_entries_hash.map(hex::encode),
        combined_hash: r.combined_hash.map(hex::encode),
    }))
}

// ---- audit ---------------------------------------------------------------------

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

// ---- operations -----------------------------------------------------------------

/// Liveness: the process answers.
#[utoipa::path(get, path = "/healthz", tag = "operations", responses((status = 200, description = "ok")))]
async fn healthz() -> &'static str {
    "ok\n"
}

/// Readiness: the store answers.
#[utoipa::path(get, path = "/readyz", tag = "operations",
    responses((status = 200, description = "ready"), (status = 503, body = Problem, content_type = "application/problem+json")))]
async fn readyz(State(state): Shared) -> ApiResult<&'static str> {
    state
        .store
        .ping()
        .await
        .map_err(|_| ApiError::unavailable("the store does not answer"))?;
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
