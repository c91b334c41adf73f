//! The REST API under `/v1` and the operational routes. Every route is
//! registered through `utoipa_axum::routes!`, so `/openapi.json` lists
//! exactly the routes served.
//!
//! Uploads are idempotent PUTs keyed by member: the same bytes again answer
//! 200 (`created: false`), different bytes for a filled slot 409. A write is
//! answered 2xx only after its transaction committed.
//!
//! Each resource's module owns its handlers and its router, merged here:
//!
//! | module | routes |
//! | --- | --- |
//! | `ceremonies` | `/v1/ceremonies/…`: key ceremonies, threshold dealings and verdicts |
//! | `result_keys` | `/v1/ceremonies/{ceremony}/result-keys…`: the members' result key, sealed to each |
//! | `studies` | `/v1/studies`, `/v1/studies/{study}` |
//! | `rounds` | `/v1/studies/{study}/rounds/{round}`: opening, status, commitments, decryption claims, the aggregate, the (blinded) combined share and the result's hashes |
//! | `uploads` | a round's contributions, decryption shares, sum and share digests |
//! | `operations` | `/healthz`, `/readyz`, `/metrics`, `/openapi.json`, `/v1/audit` |
//!
//! This module keeps what they share: the extractors ([`P`], [`Incoming`]),
//! body reading, long polls and the upload-signature check.

mod ceremonies;
mod operations;
mod result_keys;
mod rounds;
mod studies;
mod uploads;

use crate::auth::RequestParts;
use crate::problem::{ApiError, ApiResult};
use crate::AppState;
use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, FromRequestParts, Request, State};
use axum::http::{header, request::Parts, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Json;
use fedhe_api::signing::{verify_hex, HEADER_UPLOAD_SIGNATURE};
use fedhe_api::*;
use fedhe_crypto::MemberId;
use std::collections::HashMap;
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
        .merge(ceremonies::router())
        .merge(result_keys::router())
        .merge(studies::router())
        .merge(rounds::router())
        .merge(uploads::router())
        .merge(operations::router())
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

/// The longest a long poll waits, whatever `Config::max_wait_secs` says
/// (an hour): a wait is a deadline added to the clock.
pub const MAX_LONG_POLL_SECS: u64 = 3600;

/// How often a long poll looks at the store without being woken: a safety
/// net only, since every state change wakes it, in this process and, on
/// PostgreSQL, from the other replicas (`LISTEN`/`NOTIFY`). (It was 250 ms,
/// which cost a core a quarter of its time at 1,000 open polls, issue 45.)
pub const POLL_FALLBACK: Duration = Duration::from_secs(5);

/// A long poll's wait (`?wait=`), holding its caller's slot while it lasts.
#[derive(Debug)]
struct Wait {
    duration: Duration,
    _slot: Option<crate::slots::CallerSlot>,
}

impl Wait {
    fn is_zero(&self) -> bool {
        self.duration.is_zero()
    }
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

    /// The `?wait=` of a long poll, capped by the configuration, with one of
    /// the caller's poll slots ([`Config::max_polls_per_caller`]) if it waits.
    /// The caller is the member the gate authenticated, or the administrator.
    ///
    /// [`Config::max_polls_per_caller`]: crate::Config::max_polls_per_caller
    fn wait(&self, state: &AppState) -> ApiResult<Wait> {
        let duration = self.wait_duration(state)?;
        let slot = if duration.is_zero() {
            None
        } else {
            let caller = self
                .headers
                .get(fedhe_api::signing::HEADER_MEMBER)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("admin");
            Some(
                state
                    .polls
                    .take(caller, state.config.max_polls_per_caller)?,
            )
        };
        Ok(Wait {
            duration,
            _slot: slot,
        })
    }

    fn wait_duration(&self, state: &AppState) -> ApiResult<Duration> {
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
                // Clamped whatever the configuration says: a deadline
                // `now + wait` must not overflow (issue 45, finding 12).
                let cap = state.config.max_wait_secs.min(MAX_LONG_POLL_SECS);
                Duration::from_secs_f64(secs.min(cap as f64))
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

    /// Whether `Accept` names `media_type` with a quality above 0 (RFC 9110
    /// §12.5.1: `q=0` means "not acceptable"; other qualities are not
    /// weighed, a client that names the type takes it).
    fn accepts(&self, media_type: &str) -> bool {
        self.headers
            .get_all(header::ACCEPT)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|range| {
                let mut parts = range.split(';').map(str::trim);
                parts.next() == Some(media_type)
                    && !parts.any(|p| {
                        p.split_once('=').is_some_and(|(k, v)| {
                            k.trim().eq_ignore_ascii_case("q")
                                && v.trim().parse::<f64>().is_ok_and(|q| q == 0.0)
                        })
                    })
            })
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
        let deadline = body_deadline(&state.config, self.headers.get(header::CONTENT_LENGTH));
        let declared = self
            .headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or(0)
            .min(limit);
        let body = tokio::time::timeout(deadline, collect_body(self.body, declared, limit))
            .await
            .map_err(|_| {
                ApiError::request_timeout(format!(
                    "the body did not arrive within {} ms",
                    deadline.as_millis()
                ))
            })??;
        Ok(Received {
            method: self.method,
            uri: self.uri,
            headers: self.headers,
            body,
        })
    }
}

/// Reads `body` into one buffer of its declared size (`declared`, at most
/// `limit`): no chunk list copied into a second buffer at the end, so a body
/// costs its size once (issue 45, item 3); more than `limit` bytes is 413.
async fn collect_body(
    mut body: axum::body::Body,
    declared: usize,
    limit: usize,
) -> ApiResult<Bytes> {
    use http_body_util::BodyExt;
    let mut buf = Vec::with_capacity(declared);
    while let Some(frame) = body.frame().await {
        let frame =
            frame.map_err(|e| ApiError::bad_request(format!("the body could not be read: {e}")))?;
        if let Ok(data) = frame.into_data() {
            if buf.len() + data.len() > limit {
                return Err(ApiError::payload_too_large(format!(
                    "the body exceeds this route's limit of {limit} bytes"
                )));
            }
            buf.extend_from_slice(&data);
        }
    }
    Ok(Bytes::from(buf))
}

/// How long a body of the declared length may take to arrive: the grace
/// ([`crate::BODY_GRACE`]) plus its size at
/// [`crate::Config::min_body_bytes_per_sec`], at most the slow-body deadline
/// ([`crate::Config::body_timeout_ms`]). A body trickled below the rate is
/// cut (issue 45, item 1).
pub fn body_deadline(config: &crate::Config, declared: Option<&HeaderValue>) -> Duration {
    let declared = declared
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0);
    let at_rate =
        Duration::from_secs_f64(declared as f64 / config.min_body_bytes_per_sec.max(1) as f64);
    (crate::BODY_GRACE + at_rate).min(Duration::from_millis(config.body_timeout_ms))
}

fn octet_response(bytes: Vec<u8>) -> Response {
    let mut r = (StatusCode::OK, bytes).into_response();
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(OCTET));
    r
}

/// A signed list (commitments, contributions, digests, decryption shares):
/// compact bytes ([`fedhe_api::compact`]) when the request's `Accept` names
/// [`COMPACT_LIST`], JSON otherwise (issue 16: a member's download at 1,000
/// members is mostly these lists, and hex JSON doubles them).
fn list_response<T: serde::Serialize + CompactList>(
    req: &Received,
    list: T,
) -> ApiResult<Response> {
    let compact = req.accepts(COMPACT_LIST);
    Ok(body_response(
        list_type(compact),
        encoded_list(&list, compact)?,
    ))
}

/// A list's bytes: compact ([`COMPACT_LIST`]) or JSON.
fn encoded_list<T: serde::Serialize + CompactList>(list: &T, compact: bool) -> ApiResult<Bytes> {
    let bytes = if compact {
        list.to_compact().map_err(|e| e.to_string())
    } else {
        serde_json::to_vec(list).map_err(|e| e.to_string())
    };
    bytes
        .map(Bytes::from)
        .map_err(|e| ApiError::internal(format!("the list could not be encoded: {e}")))
}

/// The media type of [`encoded_list`]'s bytes.
fn list_type(compact: bool) -> &'static str {
    if compact {
        COMPACT_LIST
    } else {
        "application/json"
    }
}

fn body_response(content_type: &'static str, body: Bytes) -> Response {
    let mut r = (StatusCode::OK, body).into_response();
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    r
}

/// The encoded bodies of whole lists that can no longer change (issue 16):
/// every member of a round fetches each signed list once or twice, most
/// without signatures, and at 1,000 members encoding the same n entries
/// for each was a tenth of the server's work. A body is kept only for a
/// list its store calls final (commitments once frozen, uploads once
/// their round moved on, digests once complete), under the round's state
/// (which the body names), its encoding and whether it carries the
/// signatures; a sample (`?members=`) is never kept. A replica's copy
/// cannot go stale: a final list is the same for every replica.
#[derive(Debug, Default)]
pub struct FinalBodies(std::sync::Mutex<HashMap<BodyKey, (Bytes, usize)>>);

/// What a kept body is the answer to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BodyKey {
    list: &'static str,
    study: String,
    round: u64,
    state: &'static str,
    compact: bool,
    signatures: bool,
}

/// How many bodies [`FinalBodies`] keeps before it starts over: a round has
/// five lists, each asked for in up to two encodings and with or without
/// signatures.
const FINAL_BODIES: usize = 128;

impl BodyKey {
    /// The key of `req`'s answer from `list` of a round in `state`, if the
    /// request asks for the whole list (with every signature or none).
    fn of(
        req: &Received,
        selection: &uploads::ListSelection,
        list: &'static str,
        study: &str,
        round: u64,
        state: RoundState,
    ) -> Option<Self> {
        selection.whole().map(|signatures| Self {
            list,
            study: study.to_string(),
            round,
            state: state.as_str(),
            compact: req.accepts(COMPACT_LIST),
            signatures,
        })
    }

    fn content_type(&self) -> &'static str {
        list_type(self.compact)
    }
}

impl FinalBodies {
    /// The kept answer under `key`, if one holds at least `entries` entries.
    fn response(&self, key: Option<&BodyKey>, entries: usize) -> Option<Response> {
        let key = key?;
        let kept = self
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(key)
            .filter(|(_, n)| *n >= entries)
            .map(|(body, _)| body.clone())?;
        Some(body_response(key.content_type(), kept))
    }

    /// Encodes `list` as `req` asks and, for a final list (`key`), keeps
    /// the body.
    fn encode<T: serde::Serialize + CompactList>(
        &self,
        req: &Received,
        key: Option<BodyKey>,
        list: T,
        entries: usize,
    ) -> ApiResult<Response> {
        let Some(key) = key else {
            return list_response(req, list);
        };
        let body = encoded_list(&list, key.compact)?;
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if map.len() >= FINAL_BODIES {
            map.clear();
        }
        let content_type = key.content_type();
        map.insert(key, (body.clone(), entries));
        Ok(body_response(content_type, body))
    }
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
/// change (this replica's or, on PostgreSQL, another's) and at least every
/// [`POLL_FALLBACK`].
async fn long_poll<T, F, Fut>(state: &AppState, wait: Wait, mut ready: F) -> ApiResult<Option<T>>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = ApiResult<Option<T>>>,
{
    let until = tokio::time::Instant::now() + wait.duration;
    loop {
        let notified = state.changed.notified();
        if let Some(v) = ready().await? {
            return Ok(Some(v));
        }
        let now = tokio::time::Instant::now();
        if now >= until {
            return Ok(None);
        }
        let slice = (until - now).min(POLL_FALLBACK);
        let _ = tokio::time::timeout(slice, notified).await;
    }
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
    .in_round(r.state, r.reason.as_deref(), false)
}
