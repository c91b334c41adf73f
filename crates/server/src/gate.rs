//! The gate every request passes before its handler reads a body
//! (DESIGN.md §5: "checked from the headers before a body is read").
//!
//! From the method, the path and the headers alone it decides:
//!
//! - who may call the route: the administrator's bearer token for
//!   administrative routes (creating ceremonies and studies, the audit
//!   trail, `/metrics`); for anything under `/v1/ceremonies/{c}` or
//!   `/v1/studies/{s}` the administrator or a member of that ceremony (of
//!   the study's ceremony) whose signature headers are present, well formed
//!   and fresh. Whether the ceremony or study exists is not revealed: an
//!   unknown id, an id the caller is not a member of and a signature that
//!   does not verify (found by the handler) get the same 401
//!   ([`crate::auth::unknown_member`]).
//! - how large the body may be: a body needs a `Content-Length` (chunked
//!   bodies are refused with 411) within the route's limit (413). An upload
//!   whose size the stored state fixes (a public-key share, a contribution
//!   once the round's commitments are frozen, a decryption share once the
//!   aggregate exists) must declare exactly that size (422), and one the
//!   round does not take yet is refused (409) before its body is read
//!   ([`crate::engine::expected_upload_len`]).
//! - whether the server has room for it: the declared length is reserved
//!   from a budget of [`crate::Config::max_inflight_body_bytes`] shared by
//!   all requests, held until the response; a request that cannot get its
//!   share within half the slow-body deadline is answered 503.
//!
//! - how much one member holds: a member's request with a body takes one of
//!   its [`crate::Config::max_uploads_per_member`] upload slots (429 past
//!   them), and its body must arrive at
//!   [`crate::Config::min_body_bytes_per_sec`] ([`crate::api::body_deadline`]).
//!
//! The handler then reads the body and verifies the signature over it (its
//! digest is signed) and records the nonce, as before
//! ([`crate::auth::require_member`]).

use crate::auth::{self, signed_headers};
use crate::engine::{self, SizedUpload};
use crate::problem::{ApiError, ApiResult};
use crate::slots::CallerSlot;
use crate::store::UploadTable;
use crate::{AppState, Config};
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The unit of the body budget (a semaphore counts at most `u32` permits per
/// acquisition; bodies are reserved in KiB, rounded up).
const BUDGET_UNIT: usize = 1024;

/// What receiving, decoding and slicing a dealing of `n` bytes holds at
/// most, in multiples of `n`: the body, the decoded shares, and every
/// recipient's slice.
pub const DEALING_HOLDS: usize = 3;

/// The in-flight body budget: [`crate::Config::max_inflight_body_bytes`] in
/// KiB permits.
pub fn body_budget(config: &Config) -> Arc<Semaphore> {
    let units = config
        .max_inflight_body_bytes
        .div_ceil(BUDGET_UNIT)
        .min(Semaphore::MAX_PERMITS);
    Arc::new(Semaphore::new(units))
}

/// Who may call a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope<'p> {
    /// No credentials (health, readiness, this API's document).
    Open,
    /// The administrator only.
    Admin,
    /// The administrator or a member of this ceremony.
    Ceremony(&'p str),
    /// The administrator or a member of this study's ceremony.
    Study(&'p str),
}

/// What the gate knows of a route from its method and path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Route<'p> {
    /// Who may call it.
    scope: Scope<'p>,
    /// The largest body it takes (bytes).
    limit: usize,
    /// An upload whose exact length the stored state fixes.
    sized: Option<SizedUpload<'p>>,
}

/// A route's caller scope, body limit (bytes) and, for uploads, what fixes
/// their exact size, from the API's route table ([`fedhe_api::routes`]): a
/// route under a ceremony or a study is that ceremony's or study's (its first
/// capture), the administrative ones are the administrator's, and a path
/// outside the table (the router's 404, `/ui`'s pages) needs no credentials.
fn classify<'p>(method: &Method, path: &'p str, config: &Config) -> Route<'p> {
    use fedhe_api::routes;
    let writes = method == Method::PUT || method == Method::POST;
    let upload = config.max_upload_bytes;
    // Any other write (a JSON body) gets the JSON limit.
    let json = if writes { config.max_json_bytes } else { 0 };
    let route = |scope, limit, sized| Route {
        scope,
        limit,
        sized,
    };
    let Some((template, values)) = routes::route_of(path) else {
        return route(Scope::Open, json, None);
    };
    let scope = match (routes::captures(template).first(), values.first()) {
        (Some(&"ceremony"), Some(c)) => Scope::Ceremony(c),
        (Some(&"study"), Some(s)) => Scope::Study(s),
        _ => match template {
            routes::METRICS
            | routes::AUDIT
            | routes::UI_TICKETS
            | routes::CEREMONIES
            | routes::STUDIES => Scope::Admin,
            _ => Scope::Open,
        },
    };
    let round_table = match template {
        routes::CONTRIBUTION => Some(UploadTable::Contributions),
        routes::DECRYPTION_SHARE => Some(UploadTable::DecryptionShares),
        routes::SUM_DIGEST => Some(UploadTable::SumDigests),
        routes::SHARE_DIGEST => Some(UploadTable::ShareDigests),
        _ => None,
    };
    match (template, values.as_slice()) {
        (routes::METRICS | routes::AUDIT, _) => route(scope, 0, None),
        (routes::PUBLIC_KEY_SHARE, &[ceremony, member]) if writes => route(
            scope,
            upload,
            Some(SizedUpload::PublicKeyShare { ceremony, member }),
        ),
        (routes::DEALING, &[ceremony, member]) if writes => route(
            scope,
            upload,
            Some(SizedUpload::Dealing { ceremony, member }),
        ),
        // A result-key dealing grows with the member count (137 bytes a
        // member at most): the upload limit, not the JSON one.
        (routes::RESULT_KEYS, _) if writes => route(scope, upload, None),
        (_, &[study, round, member]) if writes && round_table.is_some() => route(
            scope,
            upload,
            round_table.map(|table| SizedUpload::Round {
                table,
                study,
                round,
                member,
            }),
        ),
        _ => route(scope, json, None),
    }
}

/// The middleware: refuses what the headers already show to be refused,
/// reserves the body's share of the budget, then runs the handler.
pub async fn gate(State(state): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    let span = tracing::info_span!(
        "request",
        method = %method,
        path = %fedhe_crypto::text::escape_controls(&path),
        member = tracing::field::Empty,
    );
    if let Some(m) = request
        .headers()
        .get(fedhe_api::signing::HEADER_MEMBER)
        .and_then(|v| v.to_str().ok())
    {
        span.record("member", fedhe_crypto::text::escape_controls(m).as_str());
    }
    let headers = request.headers().clone();
    let path_and_query = request
        .uri()
        .path_and_query()
        .map_or_else(|| path.clone(), |p| p.as_str().to_string());
    let admitted = tracing::Instrument::instrument(
        admit(&state, &method, &path, &path_and_query, &headers),
        span.clone(),
    )
    .await;
    match admitted {
        Ok(Admission::Run(admitted)) => {
            let response = tracing::Instrument::instrument(next.run(request), span.clone()).await;
            drop(admitted);
            response
        }
        Ok(Admission::Answered(mut response)) => {
            // The body is left unread (as for a refusal).
            if has_body(&headers) {
                response
                    .headers_mut()
                    .insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            response
        }
        Err(e) => span.in_scope(|| {
            let mut response = e.into_response();
            // The body (if any) is left unread: the connection cannot carry
            // another request, and a client must not reuse it.
            if has_body(&headers) {
                response
                    .headers_mut()
                    .insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            response
        }),
    }
}

/// Whether a request declares a body (a non-zero `Content-Length`, or any
/// `Transfer-Encoding`).
fn has_body(headers: &HeaderMap) -> bool {
    headers.contains_key(header::TRANSFER_ENCODING)
        || headers
            .get(header::CONTENT_LENGTH)
            .is_some_and(|v| v.as_bytes() != b"0")
}

/// What an admitted request holds until its response: its body's share of
/// the budget, and its member's upload slot.
struct Admitted {
    _permit: Option<OwnedSemaphorePermit>,
    _upload: Option<CallerSlot>,
}

/// What [`admit`] decided: run the handler, or the answer is already known.
enum Admission {
    /// Run the handler, holding what it was admitted with.
    Run(Admitted),
    /// Answered from the headers and the store (a dealing sent again).
    Answered(Response),
}

/// The checks of [`gate`].
async fn admit(
    state: &AppState,
    method: &Method,
    path: &str,
    path_and_query: &str,
    headers: &HeaderMap,
) -> ApiResult<Admission> {
    let Route {
        scope,
        limit,
        sized,
    } = classify(method, path, &state.config);
    let mut upload = None;
    let mut signer = None;
    match scope {
        Scope::Open => {}
        Scope::Admin => {
            auth::require_admin(state, headers)?;
        }
        Scope::Ceremony(_) | Scope::Study(_) if auth::is_admin(state, headers) => {}
        Scope::Ceremony(_) | Scope::Study(_) if headers.contains_key(header::AUTHORIZATION) => {
            auth::require_admin(state, headers)?;
        }
        // A member's request is authenticated from its headers (the
        // signature names the body's declared digest) before anything else,
        // sizes included: a forged request gets the same 401 whether its
        // ids exist or not, and never a body slot (issue 45, findings 1, 2
        // and 6).
        Scope::Ceremony(_) | Scope::Study(_) => {
            let signed = signed_headers(headers)?;
            let ceremony = match scope {
                Scope::Study(id) => match state.store.study(id).await {
                    Ok(study) => study.spec.ceremony,
                    Err(e) if e.status == StatusCode::NOT_FOUND => {
                        return Err(auth::unknown_member(signed.member))
                    }
                    Err(e) => return Err(e),
                },
                Scope::Ceremony(id) => id.to_string(),
                _ => unreachable!("a member scope"),
            };
            let key = state
                .store
                .member_key(&ceremony, signed.member)
                .await?
                .ok_or_else(|| auth::unknown_member(signed.member))?;
            auth::verify_headers(
                &key,
                method,
                path_and_query,
                headers,
                &signed,
                has_body(headers),
            )?;
            signer = Some(signed.member);
            // A member's bodies being received are capped (issue 45, item 1).
            if has_body(headers) {
                upload = Some(
                    state
                        .uploads
                        .take(signed.member, state.config.max_uploads_per_member)?,
                );
            }
        }
    }
    let declared = declared_length(headers, limit)?;
    // A dealer's dealing sent again is answered from the stored hash and
    // the signed digest of the body, without reading it (issue 45, finding
    // 3: 180 resends of a valid 25 MiB dealing were each read and decoded).
    if let Some(SizedUpload::Dealing { ceremony, member }) = sized.filter(|_| signer.is_some()) {
        if signer != Some(member) {
            return Err(ApiError::forbidden(format!(
                "{} cannot write the slot of {member}",
                signer.unwrap_or_default()
            )));
        }
        if let Some(stored) = state.store.dealing_hash(ceremony, member).await? {
            let digest = headers
                .get(fedhe_api::signing::HEADER_CONTENT_DIGEST)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            if !digest.eq_ignore_ascii_case(&hex::encode(&stored)) {
                return Err(ApiError::conflict(format!(
                    "{member} already sent a different dealing in ceremony {ceremony}"
                )));
            }
            let receipt = fedhe_api::UploadReceipt {
                hash: hex::encode(&stored),
                created: false,
            };
            return Ok(Admission::Answered(
                (StatusCode::OK, axum::Json(receipt)).into_response(),
            ));
        }
    }
    if let Some(upload) = sized {
        // The round fixes the exact size: anything else is refused unread,
        // so a caller with well-formed signature headers (checked only with
        // the body) can make the server read no more than one real upload.
        let expected = engine::expected_upload_len(state, upload).await?;
        if declared != expected as u64 {
            return Err(ApiError::unprocessable(format!(
                "the body has {declared} bytes; this upload is exactly {expected} bytes \
                 (the round's value count and the study's encoding fix it)"
            )));
        }
    }
    // A dealing is decoded and sliced after it is read, which holds about
    // twice its size again: that is reserved here with the body, at once,
    // so no request holds its body's share while it waits for more (two
    // waits on one budget starve each other: issue 45, item 3).
    let hold = match sized {
        Some(SizedUpload::Dealing { .. }) => (declared as usize).saturating_mul(DEALING_HOLDS),
        _ => declared as usize,
    };
    let permit = if declared == 0 {
        None
    } else {
        Some(reserve(state, hold).await?)
    };
    Ok(Admission::Run(Admitted {
        _permit: permit,
        _upload: upload,
    }))
}

/// Reserves `bytes` of the in-flight budget ([`crate::Config::max_inflight_body_bytes`])
/// for as long as the permit lives: a body being received, or what decoding
/// one holds. Waits up to half the slow-body deadline (a request that waited
/// for room still has the other half to send its body), then 503.
pub async fn reserve(state: &AppState, bytes: usize) -> ApiResult<OwnedSemaphorePermit> {
    // At most the whole budget: a request larger than it would never get in.
    let units = bytes
        .min(state.config.max_inflight_body_bytes)
        .div_ceil(BUDGET_UNIT)
        .min(Semaphore::MAX_PERMITS)
        .min(u32::MAX as usize) as u32;
    let wait = Duration::from_millis(state.config.body_timeout_ms / 2);
    match tokio::time::timeout(wait, state.body_budget.clone().acquire_many_owned(units)).await {
        Ok(Ok(permit)) => Ok(permit),
        _ => Err(ApiError::unavailable(format!(
            "the server is receiving too many request bodies at once (max_inflight_body_bytes = {}); retry later",
            state.config.max_inflight_body_bytes
        ))),
    }
}

/// The body's declared length: a `Content-Length` within `limit`, or no body
/// at all (neither `Content-Length` nor `Transfer-Encoding`).
fn declared_length(headers: &HeaderMap, limit: usize) -> ApiResult<u64> {
    let declared = match headers.get(header::CONTENT_LENGTH) {
        None => None,
        Some(v) => Some(
            v.to_str()
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .ok_or_else(|| ApiError::bad_request("Content-Length is not a number"))?,
        ),
    };
    match declared {
        None if headers.contains_key(header::TRANSFER_ENCODING) => Err(ApiError::length_required(
            "a request body needs a Content-Length (chunked bodies are refused)",
        )),
        None => Ok(0),
        Some(n) if n > limit as u64 => Err(ApiError::payload_too_large(format!(
            "the body has {n} bytes; this route accepts at most {limit}"
        ))),
        Some(n) => Ok(n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_are_classified_with_their_scope_and_body_limit() {
        let config = Config::default();
        let up = config.max_upload_bytes;
        let json = config.max_json_bytes;
        let contribution = Some(SizedUpload::Round {
            table: UploadTable::Contributions,
            study: "s",
            round: "1",
            member: "a",
        });
        let share = Some(SizedUpload::Round {
            table: UploadTable::DecryptionShares,
            study: "s",
            round: "1",
            member: "a",
        });
        let key_share = Some(SizedUpload::PublicKeyShare {
            ceremony: "c1",
            member: "a",
        });
        let dealing = Some(SizedUpload::Dealing {
            ceremony: "c1",
            member: "a",
        });
        let cases: &[(Method, &str, Scope<'_>, usize, Option<SizedUpload<'_>>)] = &[
            (Method::GET, "/healthz", Scope::Open, 0, None),
            (
                Method::PUT,
                "/v1/ceremonies/c1/dealings/a",
                Scope::Ceremony("c1"),
                up,
                dealing,
            ),
            (
                Method::GET,
                "/v1/ceremonies/c1/dealings/a/for/b",
                Scope::Ceremony("c1"),
                0,
                None,
            ),
            (
                Method::PUT,
                "/v1/ceremonies/c1/dealing-verdicts/a",
                Scope::Ceremony("c1"),
                json,
                None,
            ),
            (Method::GET, "/metrics", Scope::Admin, 0, None),
            (Method::GET, "/v1/audit", Scope::Admin, 0, None),
            (Method::POST, "/v1/ceremonies", Scope::Admin, json, None),
            (Method::POST, "/v1/studies", Scope::Admin, json, None),
            (
                Method::GET,
                "/v1/ceremonies/c1",
                Scope::Ceremony("c1"),
                0,
                None,
            ),
            (
                Method::PUT,
                "/v1/ceremonies/c1/commitments/a",
                Scope::Ceremony("c1"),
                json,
                None,
            ),
            (
                Method::PUT,
                "/v1/ceremonies/c1/public-key-shares/a",
                Scope::Ceremony("c1"),
                up,
                key_share,
            ),
            (
                Method::GET,
                "/v1/ceremonies/c1/public-key-shares/a",
                Scope::Ceremony("c1"),
                0,
                None,
            ),
            (
                Method::PUT,
                "/v1/studies/s/rounds/1",
                Scope::Study("s"),
                json,
                None,
            ),
            (
                Method::PUT,
                "/v1/studies/s/rounds/1/commitments/a",
                Scope::Study("s"),
                json,
                None,
            ),
            (
                Method::PUT,
                "/v1/studies/s/rounds/1/contributions/a",
                Scope::Study("s"),
                up,
                contribution,
            ),
            (
                Method::PUT,
                "/v1/studies/s/rounds/1/decryption-shares/a",
                Scope::Study("s"),
                up,
                share,
            ),
            (
                Method::GET,
                "/v1/studies/s/rounds/1/contributions/a",
                Scope::Study("s"),
                0,
                None,
            ),
        ];
        for (method, path, scope, limit, sized) in cases {
            assert_eq!(
                classify(method, path, &config),
                Route {
                    scope: *scope,
                    limit: *limit,
                    sized: *sized
                },
                "{method} {path}"
            );
        }
    }

    /// Every route of the API's table is classified from the table: a
    /// route under a ceremony or a study by its first capture, whatever the
    /// method; a path outside the table needs no credentials (the router
    /// answers 404 without saying whether a ceremony or study exists).
    #[test]
    fn every_route_of_the_table_is_classified_by_its_first_capture() {
        use fedhe_api::routes;
        let config = Config::default();
        let admin = [
            routes::METRICS,
            routes::AUDIT,
            routes::UI_TICKETS,
            routes::CEREMONIES,
            routes::STUDIES,
        ];
        for template in routes::ALL {
            let names = routes::captures(template);
            let values: Vec<String> = names.iter().map(|n| format!("{n}-1")).collect();
            let shown: Vec<&dyn std::fmt::Display> =
                values.iter().map(|v| v as &dyn std::fmt::Display).collect();
            let path = routes::fill(template, &shown);
            let want = match names.first() {
                Some(&"ceremony") => Scope::Ceremony("ceremony-1"),
                Some(&"study") => Scope::Study("study-1"),
                Some(other) => panic!("{template}: first capture {other}"),
                None if admin.contains(template) => Scope::Admin,
                None => Scope::Open,
            };
            for method in [Method::GET, Method::PUT, Method::POST] {
                let route = classify(&method, &path, &config);
                assert_eq!(route.scope, want, "{method} {path}");
                assert!(route.sized.is_none() || method != Method::GET, "{path}");
            }
        }
        for path in [
            "/v1/ceremonies/c1/unknown",
            "/v1/studies/s/rounds/1/unknown/a",
            "/v1/studies//rounds/1",
            "/ui/studies/s",
        ] {
            assert_eq!(
                classify(&Method::PUT, path, &config).scope,
                Scope::Open,
                "{path}"
            );
        }
    }

    #[test]
    fn a_body_needs_a_content_length_within_the_limit() {
        let mut h = HeaderMap::new();
        assert_eq!(declared_length(&h, 10).unwrap(), 0);
        h.insert(header::TRANSFER_ENCODING, "chunked".parse().unwrap());
        assert_eq!(
            declared_length(&h, 10).unwrap_err().status,
            StatusCode::LENGTH_REQUIRED
        );
        h.insert(header::CONTENT_LENGTH, "11".parse().unwrap());
        assert_eq!(
            declared_length(&h, 10).unwrap_err().status,
            StatusCode::PAYLOAD_TOO_LARGE
        );
        h.insert(header::CONTENT_LENGTH, "10".parse().unwrap());
        assert_eq!(declared_length(&h, 10).unwrap(), 10);
    }
}
