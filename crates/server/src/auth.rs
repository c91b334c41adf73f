//! Who is asking: members sign every request with their ed25519 identity key
//! (method, path, body digest, time, nonce — `fedhe_api::signing`), the
//! administrator presents a bearer token. Unsigned, stale, replayed and
//! unknown-member requests are refused with 401 before anything is written
//! (except the nonce that makes a replay detectable).

use crate::problem::{ApiError, ApiResult};
use crate::AppState;
use axum::http::{HeaderMap, Method, Uri};
use fedhe_api::signing::{
    self, request_message, verify_hex, HEADER_MEMBER, HEADER_NONCE, HEADER_SIGNATURE,
    HEADER_TIMESTAMP, MAX_CLOCK_SKEW_MS,
};

/// The authenticated caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Caller {
    /// The administrator (bearer token).
    Admin,
    /// A member of the ceremony in scope.
    Member(String),
}

impl Caller {
    /// The member id, if a member.
    pub fn member(&self) -> Option<&str> {
        match self {
            Self::Admin => None,
            Self::Member(m) => Some(m),
        }
    }
}

/// The parts of a request that are signed.
pub struct RequestParts<'a> {
    /// Method.
    pub method: &'a Method,
    /// URI (path and query are signed).
    pub uri: &'a Uri,
    /// Headers.
    pub headers: &'a HeaderMap,
    /// The body.
    pub body: &'a [u8],
}

fn header<'h>(headers: &'h HeaderMap, name: &'static str) -> ApiResult<Option<&'h str>> {
    headers
        .get(name)
        .map(|v| {
            v.to_str()
                .map_err(|_| ApiError::unauthorized(format!("header {name} is not ASCII")))
        })
        .transpose()
}

/// Whether the request carries the administrator's bearer token (compared in
/// constant time, through BLAKE3 digests).
pub fn is_admin(state: &AppState, headers: &HeaderMap) -> bool {
    let Some(value) = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let Some(token) = value.strip_prefix("Bearer ") else {
        return false;
    };
    !state.config.admin_token.is_empty()
        && blake3::hash(token.as_bytes()) == blake3::hash(state.config.admin_token.as_bytes())
}

/// Requires the administrator's bearer token.
pub fn require_admin(state: &AppState, headers: &HeaderMap) -> ApiResult<Caller> {
    if is_admin(state, headers) {
        Ok(Caller::Admin)
    } else if headers.contains_key(axum::http::header::AUTHORIZATION) {
        Err(ApiError::unauthorized(
            "the bearer token is not the administrator's",
        ))
    } else {
        Err(ApiError::unauthorized(
            "this action needs the administrator's bearer token (Authorization: Bearer ...)",
        ))
    }
}

/// The signature headers of a member's request, checked for presence and
/// form (the timestamp within the allowed skew), not yet against a key.
#[derive(Debug)]
pub struct SignedHeaders<'h> {
    /// `fedhe-member`.
    pub member: &'h str,
    /// `fedhe-timestamp`, unix milliseconds.
    pub timestamp: i64,
    /// `fedhe-nonce`, 32 hex digits.
    pub nonce: &'h str,
    /// `fedhe-signature`, 128 hex digits.
    pub signature: &'h str,
    /// The server's clock when checked.
    pub now: i64,
}

/// Reads and checks the signature headers (everything that needs neither
/// the store nor the body).
pub fn signed_headers(headers: &HeaderMap) -> ApiResult<SignedHeaders<'_>> {
    let member = header(headers, HEADER_MEMBER)?.ok_or_else(|| {
        ApiError::unauthorized(format!(
            "unsigned request: header {HEADER_MEMBER} is missing"
        ))
    })?;
    let timestamp = header(headers, HEADER_TIMESTAMP)?
        .ok_or_else(|| ApiError::unauthorized(format!("header {HEADER_TIMESTAMP} is missing")))?;
    let nonce = header(headers, HEADER_NONCE)?
        .ok_or_else(|| ApiError::unauthorized(format!("header {HEADER_NONCE} is missing")))?;
    let signature = header(headers, HEADER_SIGNATURE)?
        .ok_or_else(|| ApiError::unauthorized(format!("header {HEADER_SIGNATURE} is missing")))?;
    let timestamp: i64 = timestamp.parse().map_err(|_| {
        ApiError::unauthorized(format!("{HEADER_TIMESTAMP} is not an integer (unix ms)"))
    })?;
    let now = signing::now_ms();
    if (now - timestamp).abs() > MAX_CLOCK_SKEW_MS {
        return Err(ApiError::unauthorized(format!(
            "stale request: timestamp {timestamp} is {} ms from the server's clock (at most {MAX_CLOCK_SKEW_MS} allowed)",
            now - timestamp
        )));
    }
    if nonce.len() != 32 || !nonce.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(ApiError::unauthorized(format!(
            "{HEADER_NONCE} must be 32 hex digits"
        )));
    }
    if signature.len() != 128 || !signature.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(ApiError::unauthorized(format!(
            "{HEADER_SIGNATURE} must be 128 hex digits (an ed25519 signature)"
        )));
    }
    Ok(SignedHeaders {
        member,
        timestamp,
        nonce,
        signature,
        now,
    })
}

/// The 401 for a request that is not signed by a member of the ceremony in
/// scope: the member is unknown there, the ceremony or study does not exist,
/// or the signature does not verify. One text for all, so neither ids nor
/// member names can be probed.
pub fn unknown_member(member: &str) -> ApiError {
    ApiError::unauthorized(format!(
        "unknown member or wrong signature: {} is not a member here, or the request signature does not verify under its identity key",
        fedhe_crypto::text::quote(member, 64)
    ))
}

/// Verifies a member's request signature from its headers alone (issue 45,
/// finding 1), before any byte of the body is read: the signature must
/// verify under `key` over the method, `path_and_query`, the body digest
/// the request declares in `fedhe-content-digest` (required when a body is
/// declared; an empty body's digest otherwise), time and nonce. A failure
/// is [`unknown_member`]'s answer, the same whether or not the member
/// exists. The nonce is not consumed: [`require_member`] checks the whole
/// request, body included, and records it.
pub fn verify_headers(
    key: &[u8; 32],
    method: &Method,
    path_and_query: &str,
    headers: &HeaderMap,
    signed: &SignedHeaders<'_>,
    has_body: bool,
) -> ApiResult<()> {
    let declared = header(headers, signing::HEADER_CONTENT_DIGEST)?;
    let digest = match declared {
        Some(d) => d.to_string(),
        None if has_body => return Err(unknown_member(signed.member)),
        None => signing::digest_hex(b""),
    };
    let key = ed25519_dalek::VerifyingKey::from_bytes(key)
        .map_err(|_| ApiError::internal("a stored identity key is invalid"))?;
    let message = signing::request_message_for_digest(
        method.as_str(),
        path_and_query,
        &digest,
        signed.timestamp,
        signed.nonce,
    );
    verify_hex(&key, &message, signed.signature, "request")
        .map_err(|_| unknown_member(signed.member))
}

/// Verifies a member's request signature within `ceremony`: the member is one
/// of its members, the timestamp is within the allowed skew, the signature
/// verifies under the member's identity key, and the nonce is new.
pub async fn require_member(
    state: &AppState,
    ceremony: &str,
    req: &RequestParts<'_>,
) -> ApiResult<Caller> {
    let SignedHeaders {
        member,
        timestamp,
        nonce,
        signature,
        now,
    } = signed_headers(req.headers)?;
    let key_bytes = state
        .store
        .member_key(ceremony, member)
        .await?
        .ok_or_else(|| unknown_member(member))?;
    let key = ed25519_dalek::VerifyingKey::from_bytes(&key_bytes)
        .map_err(|_| ApiError::internal("a stored identity key is invalid"))?;
    let path = req.uri.path_and_query().map(|p| p.as_str()).unwrap_or("/");
    if let Some(declared) = header(req.headers, signing::HEADER_CONTENT_DIGEST)? {
        if declared != signing::digest_hex(req.body) {
            return Err(ApiError::unauthorized(
                "the body does not have the digest the request declares and signs",
            ));
        }
    }
    let message = request_message(req.method.as_str(), path, req.body, timestamp, nonce);
    verify_hex(&key, &message, signature, "request").map_err(|_| unknown_member(member))?;
    if !state
        .store
        .record_nonce(&key_bytes, nonce, now, now - 2 * MAX_CLOCK_SKEW_MS)
        .await?
    {
        return Err(ApiError::unauthorized(
            "replayed request: this nonce was already used",
        ));
    }
    Ok(Caller::Member(member.to_string()))
}

/// The administrator, or else a member of `ceremony` with a valid signature.
pub async fn require_reader(
    state: &AppState,
    ceremony: &str,
    req: &RequestParts<'_>,
) -> ApiResult<Caller> {
    if is_admin(state, req.headers) {
        return Ok(Caller::Admin);
    }
    require_member(state, ceremony, req).await
}

/// Requires the caller to be `member` itself (the slot it writes).
pub fn require_self(caller: &Caller, member: &str) -> ApiResult<()> {
    match caller.member() {
        Some(m) if m == member => Ok(()),
        Some(m) => Err(ApiError::forbidden(format!(
            "{m} cannot write the slot of {member}"
        ))),
        None => Err(ApiError::forbidden(
            "the administrator cannot write a member's slot",
        )),
    }
}
