//! A typed, blocking client of the server's REST API: every member request
//! signed (`fedhe_api::signing`), transient failures retried with exponential
//! backoff (every write is an idempotent PUT or POST, so a retry is safe), and
//! problem+json errors surfaced with their detail.

use crate::ClientError;
use fedhe_api::routes;
use fedhe_api::signing::{
    contribution_statement, request_headers, round_commitment_statement, share_digest_statement,
    sum_digest_statement, upload_statement, HEADER_UPLOAD_SIGNATURE,
};
use fedhe_api::*;
pub use in_process::Exchange;
use in_process::Wire;
use reqwest::blocking::Client as Http;
use reqwest::{Method, StatusCode};
use std::sync::Arc;
use std::time::Duration;

mod audit;
mod ceremonies;
mod in_process;
mod studies;

const OCTET: &str = "application/octet-stream";
const JSON: &str = "application/json";
const CONTENT_TYPE_HEADER: &str = "content-type";

/// Who the client speaks as.
#[derive(Clone)]
pub enum Auth {
    /// Nobody (operational routes only).
    Anonymous,
    /// The administrator, by bearer token.
    Admin(zeroize::Zeroizing<String>),
    /// A member, signing with its identity key.
    Member {
        /// Member id.
        id: String,
        /// Its identity.
        identity: Arc<Identity>,
    },
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Anonymous => f.write_str("Anonymous"),
            Self::Admin(_) => f.write_str("Admin(<redacted>)"),
            Self::Member { id, .. } => write!(f, "Member({id})"),
        }
    }
}

/// How failed requests are retried.
#[derive(Clone, Copy, Debug)]
pub struct RetryPolicy {
    /// Attempts in all (1 = no retry).
    pub attempts: u32,
    /// The first backoff; doubled after every failure.
    pub initial_backoff: Duration,
    /// The largest backoff.
    pub max_backoff: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            attempts: 8,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
        }
    }
}

/// The client.
#[derive(Clone, Debug)]
pub struct Client {
    base: String,
    wire: Wire,
    auth: Auth,
    retry: RetryPolicy,
    bytes_sent: Arc<std::sync::atomic::AtomicU64>,
    bytes_received: Arc<std::sync::atomic::AtomicU64>,
    requests_sent: Arc<std::sync::atomic::AtomicU64>,
    /// Whether a private CA replaced the built-in roots (for error hints).
    private_ca: bool,
    /// Whether members may sign over plain http to a non-loopback server
    /// (`Tls::allow_plain_http`).
    allow_plain_http: bool,
}

/// The most bytes a JSON (or compact list) answer may have: far above any
/// status or list a federation of thousands makes, far below what would
/// exhaust a member (issue 45, finding 9).
pub const MAX_JSON_RESPONSE: usize = 32 << 20;

/// The most bytes of an error answer read (a problem report is small; the
/// rest is not read).
pub const MAX_PROBLEM_RESPONSE: usize = 64 << 10;

/// The most bytes a binary answer (an aggregate, a contribution, a share)
/// may have: an aggregate of the server's largest round (2^24 values) at
/// the default parameter set.
pub const MAX_BINARY_RESPONSE: usize = 1 << 30;

/// A response that succeeded.
struct Answer {
    status: StatusCode,
    /// The media type of `Content-Type` (parameters dropped; empty if none).
    content_type: String,
    body: Vec<u8>,
}

fn transient(status: StatusCode) -> bool {
    matches!(
        status,
        StatusCode::REQUEST_TIMEOUT
            | StatusCode::TOO_MANY_REQUESTS
            | StatusCode::INTERNAL_SERVER_ERROR
            | StatusCode::BAD_GATEWAY
            | StatusCode::SERVICE_UNAVAILABLE
            | StatusCode::GATEWAY_TIMEOUT
    )
}

/// How the client trusts the server's TLS certificate (`https://` URLs).
#[derive(Clone, Debug, Default)]
pub struct Tls {
    ca_cert_pem: Option<Vec<u8>>,
    allow_plain_http: bool,
}

impl Tls {
    /// Trust only the certificate authorities in this PEM bundle (a private
    /// CA, or a self-signed server certificate itself) instead of the
    /// built-in web PKI roots: a federation's server is then accepted only
    /// with a certificate its operator issued.
    pub fn ca_cert_pem(pem: &[u8]) -> Result<Self, ClientError> {
        let certs = reqwest::Certificate::from_pem_bundle(pem)
            .map_err(|e| ClientError::Usage(format!("CA certificate: not PEM: {e}")))?;
        if certs.is_empty() {
            return Err(ClientError::Usage(
                "CA certificate: no PEM certificate (-----BEGIN CERTIFICATE-----) in it".into(),
            ));
        }
        Ok(Self {
            ca_cert_pem: Some(pem.to_vec()),
            allow_plain_http: false,
        })
    }

    /// [`Self::ca_cert_pem`] from a file.
    pub fn ca_cert_file(path: &std::path::Path) -> Result<Self, ClientError> {
        let pem = std::fs::read(path)
            .map_err(|e| ClientError::Usage(format!("CA certificate {}: {e}", path.display())))?;
        Self::ca_cert_pem(&pem).map_err(|e| match e {
            ClientError::Usage(m) => ClientError::Usage(m.replacen(
                "CA certificate",
                &format!("CA certificate {}", path.display()),
                1,
            )),
            e => e,
        })
    }

    /// The same trust, and whether a member may speak plain `http://` to a
    /// host other than loopback (`--allow-plain-http`: study metadata and
    /// results then cross the network in clear text). Off by default.
    pub fn allow_plain_http(mut self, allow: bool) -> Self {
        self.allow_plain_http = allow;
        self
    }

    /// Whether a private CA replaces the built-in roots.
    pub fn has_ca_cert(&self) -> bool {
        self.ca_cert_pem.is_some()
    }
}

/// Whether `e` (or what caused it) is a TLS certificate failure: retrying
/// cannot fix it, and the user needs to hear about `--ca-cert`.
fn is_certificate_error(e: &reqwest::Error) -> bool {
    matches!(
        find_rustls_error(e, 0),
        Some(
            rustls::Error::InvalidCertificate(_)
                | rustls::Error::NoCertificatesPresented
                | rustls::Error::UnsupportedNameType
        )
    )
}

/// The rustls error among `err`'s causes. Causes hide behind boxes and
/// `io::Error`s (whose `source` skips the error they wrap), so each layer is
/// looked into as well as followed.
fn find_rustls_error<'a>(
    err: &'a (dyn std::error::Error + 'static),
    depth: usize,
) -> Option<&'a rustls::Error> {
    if depth > 16 {
        return None;
    }
    if let Some(tls) = err.downcast_ref::<rustls::Error>() {
        return Some(tls);
    }
    let inner: Option<&(dyn std::error::Error + 'static)> = err
        .downcast_ref::<std::io::Error>()
        .and_then(|io| io.get_ref())
        .map(|e| e as _);
    inner
        .and_then(|e| find_rustls_error(e, depth + 1))
        .or_else(|| err.source().and_then(|e| find_rustls_error(e, depth + 1)))
}

/// Whether the host of `base` is a loopback address (`127.0.0.0/8`, `::1` or
/// `localhost`); a URL that does not parse is not.
fn is_loopback_url(base: &str) -> bool {
    let Some(url) = reqwest::Url::parse(base).ok() else {
        return false;
    };
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    match host.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => host.eq_ignore_ascii_case("localhost"),
    }
}

/// `e` with its causes (reqwest's own message omits why a connection failed).
fn describe(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(err) = cause {
        text.push_str(": ");
        text.push_str(&err.to_string());
        cause = err.source();
    }
    text
}

impl Client {
    /// A client of the server at `base` (e.g. `http://127.0.0.1:8080`).
    /// `https://` URLs are checked against the built-in web PKI roots; see
    /// [`Self::with_tls`] for a private CA.
    pub fn new(base: &str, auth: Auth) -> Result<Self, ClientError> {
        Self::with_tls(base, auth, &Tls::default())
    }

    /// A client of the server at `base` (`http://` or `https://`), trusting
    /// server certificates as `tls` says.
    pub fn with_tls(base: &str, auth: Auth, tls: &Tls) -> Result<Self, ClientError> {
        let https = base.starts_with("https://");
        if !https && !base.starts_with("http://") {
            return Err(ClientError::Usage(format!(
                "server URL {base:?}: expected http://HOST:PORT or https://HOST:PORT"
            )));
        }
        if matches!(auth, Auth::Admin(_)) && !https && !is_loopback_url(base) {
            // The bearer token is the whole of the administrator's credential
            // (member requests are signed instead), so it never crosses a
            // network in clear text, even when the server allows plain HTTP.
            return Err(ClientError::Usage(format!(
                "server URL {base}: the administrator token would cross the network in clear \
                 text; serve with --tls-cert/--tls-key and use https://, or run the \
                 administrator command on the server's host against a loopback address"
            )));
        }
        if matches!(auth, Auth::Member { .. })
            && !https
            && !tls.allow_plain_http
            && !is_loopback_url(base)
        {
            // Signatures protect integrity, not confidentiality: study
            // metadata, aggregates and results would be readable on the way.
            return Err(ClientError::Usage(format!(
                "server URL {base}: a member's requests and the results it reads would cross \
                 the network in clear text; use https:// (the server with --tls-cert/--tls-key), \
                 or give --allow-plain-http if a trusted network or a TLS proxy protects it"
            )));
        }
        let mut builder = Http::builder()
            .use_rustls_tls()
            .timeout(Duration::from_secs(180))
            .connect_timeout(Duration::from_secs(10));
        if let Some(pem) = &tls.ca_cert_pem {
            if !https {
                return Err(ClientError::Usage(format!(
                    "a CA certificate was given but the server URL {base} is not https://"
                )));
            }
            builder = builder.tls_built_in_root_certs(false);
            for cert in reqwest::Certificate::from_pem_bundle(pem)
                .map_err(|e| ClientError::Usage(format!("CA certificate: {e}")))?
            {
                builder = builder.add_root_certificate(cert);
            }
        }
        let http = builder
            .build()
            .map_err(|e| ClientError::Transport(describe(&e)))?;
        Ok(Self {
            base: base.trim_end_matches('/').to_string(),
            wire: Wire::Network(http),
            auth,
            retry: RetryPolicy::default(),
            bytes_sent: Arc::default(),
            bytes_received: Arc::default(),
            requests_sent: Arc::default(),
            private_ca: tls.has_ca_cert(),
            allow_plain_http: tls.allow_plain_http,
        })
    }

    /// A client of the same server signing as `auth`, sharing this one's
    /// HTTP connections and the thread that runs them, with byte and
    /// request counters of its own: many members driven from one process
    /// (`fedhe bench service`) then keep a few connections and one I/O
    /// thread instead of one of each per member. `auth` is held to the
    /// same rules as in [`Self::with_tls`]: an administrator token only
    /// over https or loopback, a member over plain http only where this
    /// client was allowed it.
    pub fn with_auth(&self, auth: Auth) -> Result<Self, ClientError> {
        // In this process nothing crosses a network.
        let https = self.base.starts_with("https://") || matches!(self.wire, Wire::InProcess(_));
        let plain_ok = https || is_loopback_url(&self.base) || self.allow_plain_http;
        let allowed = match &auth {
            Auth::Admin(_) => https || is_loopback_url(&self.base),
            _ => plain_ok,
        };
        if !allowed {
            return Err(ClientError::Usage(format!(
                "server URL {}: this client may not sign as another identity in clear text; use https://",
                self.base
            )));
        }
        Ok(Self {
            base: self.base.clone(),
            wire: self.wire.clone(),
            auth,
            retry: self.retry,
            bytes_sent: Arc::default(),
            bytes_received: Arc::default(),
            requests_sent: Arc::default(),
            private_ca: self.private_ca,
            allow_plain_http: self.allow_plain_http,
        })
    }

    /// The same client with another retry policy.
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// The member this client signs as.
    pub fn member(&self) -> Option<&str> {
        match &self.auth {
            Auth::Member { id, .. } => Some(id),
            _ => None,
        }
    }

    /// Request bodies sent so far (bytes, retries included).
    pub fn bytes_sent(&self) -> u64 {
        self.bytes_sent.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Response body bytes received so far (by this client and its clones).
    pub fn bytes_received(&self) -> u64 {
        self.bytes_received
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// HTTP requests sent so far (by this client and its clones, retries
    /// included).
    pub fn requests_sent(&self) -> u64 {
        self.requests_sent
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    fn send(
        &self,
        method: Method,
        path: &str,
        body: Vec<u8>,
        content_type: &str,
        extra: &[(&str, String)],
    ) -> Result<Answer, ClientError> {
        self.send_capped(method, path, body, content_type, extra, MAX_JSON_RESPONSE)
    }

    /// [`Self::send`], reading at most `limit` bytes of a successful answer
    /// (refused if it has more, by its `Content-Length` before any byte is
    /// read, or once `limit` is passed) and [`MAX_PROBLEM_RESPONSE`] of an
    /// error.
    fn send_capped(
        &self,
        method: Method,
        path: &str,
        body: Vec<u8>,
        content_type: &str,
        extra: &[(&str, String)],
        limit: usize,
    ) -> Result<Answer, ClientError> {
        let too_large = |got: String| {
            ClientError::Transport(format!(
                "{method} {path}: the server's answer has {got} bytes, over the {limit}-byte limit of this request"
            ))
        };
        // The most bytes read of an answer with this status.
        let cap_of = |status: StatusCode| {
            if status.is_success() {
                limit
            } else {
                MAX_PROBLEM_RESPONSE
            }
        };
        let mut backoff = self.retry.initial_backoff;
        let mut last = ClientError::Transport("no attempt made".into());
        for attempt in 0..self.retry.attempts.max(1) {
            if attempt > 0 {
                std::thread::sleep(backoff);
                backoff = (backoff * 2).min(self.retry.max_backoff);
            }
            // A fresh timestamp and nonce per attempt: a retry is a new request.
            let signed = match &self.auth {
                Auth::Member { id, identity } => {
                    request_headers(id, method.as_str(), path, &body, |m| identity.sign_hex(m))
                        .to_vec()
                }
                _ => Vec::new(),
            };
            let bearer = match &self.auth {
                Auth::Admin(token) => Some(token.as_str()),
                _ => None,
            };
            self.bytes_sent
                .fetch_add(body.len() as u64, std::sync::atomic::Ordering::Relaxed);
            self.requests_sent
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let (status, content_type, mut bytes) = match &self.wire {
                Wire::Network(http) => {
                    let mut rb = http
                        .request(method.clone(), format!("{}{path}", self.base))
                        .header(reqwest::header::CONTENT_TYPE, content_type);
                    if let Some(token) = bearer {
                        rb = rb.bearer_auth(token);
                    }
                    for (name, value) in signed {
                        rb = rb.header(name, value);
                    }
                    for (k, v) in extra {
                        rb = rb.header(*k, v);
                    }
                    let response = match rb.body(body.clone()).send() {
                        Ok(r) => r,
                        Err(e) if is_certificate_error(&e) => {
                            let hint = if self.private_ca {
                                "it must be issued by the --ca-cert certificate (or be it), name the server's host, and not be a CA certificate itself"
                            } else {
                                "for a private CA or a self-signed certificate give --ca-cert PEM"
                            };
                            return Err(ClientError::Transport(format!(
                                "{method} {path}: the server's TLS certificate is not trusted ({}); {hint}",
                                describe(&e)
                            )));
                        }
                        Err(e) => {
                            last = ClientError::Transport(format!(
                                "{method} {path}: {}",
                                describe(&e)
                            ));
                            continue;
                        }
                    };
                    let status = response.status();
                    let content_type = response
                        .headers()
                        .get(reqwest::header::CONTENT_TYPE)
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("")
                        .to_string();
                    let cap = cap_of(status);
                    if let Some(len) = response.content_length() {
                        if status.is_success() && len > cap as u64 {
                            return Err(too_large(len.to_string()));
                        }
                    }
                    let mut bytes = Vec::new();
                    let mut response = response;
                    if let Err(e) = std::io::Read::read_to_end(
                        &mut std::io::Read::take(&mut response, cap as u64 + 1),
                        &mut bytes,
                    ) {
                        last = ClientError::Transport(format!("{method} {path}: {e}"));
                        continue;
                    }
                    (status, content_type, bytes)
                }
                Wire::InProcess(server) => {
                    let mut headers: Vec<(String, String)> =
                        vec![(CONTENT_TYPE_HEADER.into(), content_type.into())];
                    // The token in a buffer wiped on drop, like the client's own.
                    let authorization =
                        bearer.map(|token| zeroize::Zeroizing::new(format!("Bearer {token}")));
                    if let Some(value) = &authorization {
                        headers.push(("authorization".into(), value.to_string()));
                    }
                    headers.extend(signed.into_iter().map(|(k, v)| (k.to_string(), v)));
                    headers.extend(extra.iter().map(|(k, v)| (k.to_string(), v.clone())));
                    let answer = server.exchange(method.as_str(), path, &headers, &body);
                    for (name, value) in &mut headers {
                        if name == "authorization" {
                            zeroize::Zeroize::zeroize(value);
                        }
                    }
                    match answer {
                        Ok((status, content_type, body)) => {
                            let status = StatusCode::from_u16(status).map_err(|e| {
                                ClientError::Transport(format!("{method} {path}: {e}"))
                            })?;
                            (status, content_type, body)
                        }
                        Err(e) => {
                            last = ClientError::Transport(format!("{method} {path}: {e}"));
                            continue;
                        }
                    }
                }
            };
            // The media type only (parameters dropped).
            let content_type = content_type
                .split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_string();
            let cap = cap_of(status);
            if bytes.len() > cap {
                if status.is_success() {
                    return Err(too_large(format!("more than {cap}")));
                }
                bytes.truncate(cap);
            }
            self.bytes_received
                .fetch_add(bytes.len() as u64, std::sync::atomic::Ordering::Relaxed);
            if status.is_success() {
                return Ok(Answer {
                    status,
                    content_type,
                    body: bytes,
                });
            }
            let problem = serde_json::from_slice::<Problem>(&bytes).unwrap_or_else(|_| Problem {
                kind: "about:blank".into(),
                title: status.canonical_reason().unwrap_or("error").into(),
                status: status.as_u16(),
                detail: String::from_utf8_lossy(&bytes).chars().take(500).collect(),
                round: None,
            });
            // The server's words reach a terminal: no control characters.
            let problem = Problem {
                detail: fedhe_crypto::text::escape_controls(&problem.detail),
                title: fedhe_crypto::text::escape_controls(&problem.title),
                round: problem.round.map(|r| fedhe_api::RoundConflict {
                    reason: r.reason.as_deref().map(fedhe_crypto::text::escape_controls),
                    ..r
                }),
                ..problem
            };
            last = ClientError::Problem {
                method: method.to_string(),
                path: path.to_string(),
                problem: Box::new(problem),
            };
            if !transient(status) {
                break;
            }
        }
        Err(last)
    }

    fn json<T: serde::de::DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<&impl serde::Serialize>,
    ) -> Result<T, ClientError> {
        let bytes = match body {
            Some(b) => serde_json::to_vec(b).map_err(|e| ClientError::Decode(e.to_string()))?,
            None => Vec::new(),
        };
        let answer = self.send(method, path, bytes, JSON, &[])?;
        serde_json::from_slice(&answer.body)
            .map_err(|e| ClientError::Decode(format!("{path}: {e}")))
    }

    fn bytes(&self, path: &str) -> Result<Vec<u8>, ClientError> {
        Ok(self
            .send_capped(
                Method::GET,
                path,
                Vec::new(),
                JSON,
                &[],
                MAX_BINARY_RESPONSE,
            )?
            .body)
    }

    /// The member id and identity this client signs with (the ceremony's
    /// record of this member).
    pub fn identity(&self) -> Result<(&str, &Identity), ClientError> {
        match &self.auth {
            Auth::Member { id, identity } => Ok((id, identity)),
            _ => Err(ClientError::Usage(
                "this action needs a member identity".into(),
            )),
        }
    }
}

/// What of a signed list to fetch (`?signatures=`, `?members=` of the
/// commitment, contribution, digest and decryption-share lists; issue 16).
#[derive(Clone, Copy, Debug)]
pub enum ListPart<'a> {
    /// Every entry with its signature.
    All,
    /// Every entry, without signatures.
    WithoutSignatures,
    /// Only these members' entries, with their signatures (none, if empty).
    Entries(&'a [String]),
}

impl ListPart<'_> {
    fn query(&self) -> String {
        match self {
            ListPart::All => String::new(),
            ListPart::WithoutSignatures => "?signatures=none".into(),
            ListPart::Entries(members) => format!("?members={}", members.join(",")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn admin() -> Auth {
        Auth::Admin(zeroize::Zeroizing::new("token".to_string()))
    }

    #[test]
    fn the_admin_token_is_refused_over_plain_http_off_loopback() {
        for url in [
            "http://10.1.2.3:8080",
            "http://fedhe.example.org",
            "http://[2001:db8::1]:80",
        ] {
            let err = Client::new(url, admin()).unwrap_err().to_string();
            assert!(
                err.contains("clear text") && err.contains(url),
                "{url}: {err}"
            );
            assert!(
                !err.contains("token\""),
                "the token itself is never in the message"
            );
        }
    }

    #[test]
    fn the_admin_token_is_allowed_over_https_or_loopback() {
        for url in [
            "https://10.1.2.3:8443",
            "http://127.0.0.1:8080",
            "http://127.5.0.1:8080",
            "http://[::1]:8080",
            "http://localhost:8080",
        ] {
            assert!(Client::new(url, admin()).is_ok(), "{url}");
        }
        // Operational routes (health) carry nothing private.
        assert!(Client::new("http://10.1.2.3:8080", Auth::Anonymous).is_ok());
    }

    fn member() -> Auth {
        Auth::Member {
            id: "alpha".into(),
            identity: Arc::new(Identity::generate()),
        }
    }

    #[test]
    fn a_member_refuses_plain_http_off_loopback_unless_allowed() {
        for url in ["http://10.1.2.3:8080", "http://fedhe.example.org"] {
            let err = Client::new(url, member()).unwrap_err().to_string();
            assert!(err.contains("--allow-plain-http"), "{url}: {err}");
            let tls = Tls::default().allow_plain_http(true);
            assert!(Client::with_tls(url, member(), &tls).is_ok(), "{url}");
        }
        for url in [
            "http://127.0.0.1:8080",
            "http://localhost:1",
            "https://10.1.2.3:8443",
        ] {
            assert!(Client::new(url, member()).is_ok(), "{url}");
        }
    }

    /// A client made from another for a new identity (`with_auth`) keeps
    /// the rules of plain http: an anonymous client off loopback cannot
    /// become a member or the administrator unless members were allowed
    /// plain http (the administrator never); it signs as the new identity
    /// and counts its own bytes.
    #[test]
    fn a_client_for_another_identity_keeps_the_plain_http_rules_and_its_own_counts() {
        let url = "http://10.1.2.3:8080";
        let anonymous = Client::new(url, Auth::Anonymous).unwrap();
        for auth in [member(), admin()] {
            let err = anonymous.with_auth(auth).unwrap_err().to_string();
            assert!(err.contains("clear text") && err.contains(url), "{err}");
        }
        let tls = Tls::default().allow_plain_http(true);
        let allowed = Client::with_tls(url, Auth::Anonymous, &tls).unwrap();
        let alpha = allowed.with_auth(member()).unwrap();
        assert_eq!(alpha.member(), Some("alpha"));
        assert!(allowed.with_auth(admin()).is_err());
        let local = Client::new("http://127.0.0.1:1", Auth::Anonymous).unwrap();
        let (a, b) = (
            local.with_auth(member()).unwrap(),
            local.with_auth(admin()).unwrap(),
        );
        a.requests_sent
            .fetch_add(2, std::sync::atomic::Ordering::Relaxed);
        assert_eq!((a.requests_sent(), b.requests_sent()), (2, 0));
    }
}
