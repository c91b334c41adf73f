//! Errors as RFC 9457 `application/problem+json`, each with a precise `detail`.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use fedhe_api::{Problem, RoundConflict, RoundState, PROBLEM_JSON};

/// An error answered to the client: a status, a problem type and a detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// The problem type's short name (the last segment of its `type` URI).
    pub kind: &'static str,
    /// What went wrong, for this request. Never holds secret material.
    pub detail: String,
    /// On a 409 of a round's route: the round's state ([`Self::in_round`]).
    pub round: Option<Box<RoundConflict>>,
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.status.as_u16(), self.kind, self.detail)
    }
}

impl std::error::Error for ApiError {}

macro_rules! constructors {
    ($($(#[$doc:meta])* $name:ident => $status:ident, $kind:literal;)*) => {
        impl ApiError {
            $(
                $(#[$doc])*
                ///
                /// Control characters in `detail` (an id or path it quotes)
                /// are escaped ([`fedhe_crypto::text::escape_controls`]).
                pub fn $name(detail: impl Into<String>) -> Self {
                    let detail = fedhe_crypto::text::escape_controls(&detail.into());
                    Self { status: StatusCode::$status, kind: $kind, detail, round: None }
                }
            )*
        }
    };
}

constructors! {
    /// 400: the request is malformed.
    bad_request => BAD_REQUEST, "bad-request";
    /// 401: missing, stale, replayed or invalid request signature.
    unauthorized => UNAUTHORIZED, "unauthorized";
    /// 403: authenticated, but not allowed to do this.
    forbidden => FORBIDDEN, "forbidden";
    /// 404: no such resource.
    not_found => NOT_FOUND, "not-found";
    /// 405: the route exists, not with this method.
    method_not_allowed => METHOD_NOT_ALLOWED, "method-not-allowed";
    /// 408: the body did not arrive in time.
    request_timeout => REQUEST_TIMEOUT, "request-timeout";
    /// 411: a request body without a `Content-Length`.
    length_required => LENGTH_REQUIRED, "length-required";
    /// 409: conflicts with the stored state (different bytes in a slot, wrong phase).
    conflict => CONFLICT, "conflict";
    /// 413: the body exceeds the route's limit.
    payload_too_large => PAYLOAD_TOO_LARGE, "payload-too-large";
    /// 415: wrong content type.
    unsupported_media_type => UNSUPPORTED_MEDIA_TYPE, "unsupported-media-type";
    /// 422: well-formed, but not a valid object for this slot.
    unprocessable => UNPROCESSABLE_ENTITY, "unprocessable";
    /// 429: the caller holds as many of something (long polls) as it may.
    too_many_requests => TOO_MANY_REQUESTS, "too-many-requests";
    /// 500: a fault of the server.
    internal => INTERNAL_SERVER_ERROR, "internal";
    /// 503: the server cannot answer now (store unavailable, shutting down).
    unavailable => SERVICE_UNAVAILABLE, "unavailable";
    /// 504: the handler did not finish in time.
    timeout => GATEWAY_TIMEOUT, "timeout";
}

impl ApiError {
    /// This refusal with the state of the round it concerns (a 409 of a
    /// round's route: the caller reads the state from the answer instead of
    /// asking again), `holds_yours` whether the round holds the caller's
    /// own upload for the refused slot.
    pub fn in_round(mut self, state: RoundState, reason: Option<&str>, holds_yours: bool) -> Self {
        self.round = Some(Box::new(RoundConflict {
            state,
            reason: reason.map(fedhe_crypto::text::escape_controls),
            holds_yours,
        }));
        self
    }

    /// The RFC 9457 body.
    pub fn problem(&self) -> Problem {
        Problem {
            kind: format!("https://fedhe.invalid/problems/{}", self.kind),
            title: self
                .status
                .canonical_reason()
                .unwrap_or("Error")
                .to_string(),
            status: self.status.as_u16(),
            detail: self.detail.clone(),
            round: self.round.as_deref().cloned(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        // Inside the request's span (method, path, member): a refusal is a
        // state change of the conversation the administrator may need to see.
        if self.status.is_server_error() {
            tracing::warn!(status = self.status.as_u16(), reason = %self.detail, "request failed");
        } else {
            tracing::info!(status = self.status.as_u16(), reason = %self.detail, "request refused");
        }
        let body = serde_json::to_vec(&self.problem()).unwrap_or_default();
        let mut response = (self.status, body).into_response();
        response
            .headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
        response
    }
}

impl From<sqlx::Error> for ApiError {
    fn from(e: sqlx::Error) -> Self {
        tracing::error!(error = %e, "store error");
        match e {
            sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_) => {
                Self::unavailable("the store is unavailable; retry later")
            }
            // Races between replicas on PostgreSQL that the store's row locks
            // do not prevent (a key inserted concurrently, a serialization
            // failure or deadlock victim): nothing was written, and the same
            // request again will see the other side's commit.
            sqlx::Error::Database(db)
                if db.is_unique_violation()
                    || matches!(db.code().as_deref(), Some("40001" | "40P01")) =>
            {
                Self::unavailable("the request raced a concurrent change; retry it")
            }
            _ => Self::internal("the store failed to complete the request"),
        }
    }
}

impl From<fedhe_api::SignatureError> for ApiError {
    fn from(e: fedhe_api::SignatureError) -> Self {
        Self::unauthorized(e.to_string())
    }
}

/// The result type of handlers.
pub type ApiResult<T> = Result<T, ApiError>;
