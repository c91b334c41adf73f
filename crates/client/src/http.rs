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
use reqwest::blocking::Client as Http;
use reqwest::{Method, StatusCode};
use std::sync::Arc;
use std::time::Duration;

const OCTET: &str = "application/octet-stream";
const JSON: &str = "application/json";

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
    http: Http,
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
            http,
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
        let https = self.base.starts_with("https://");
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
            http: self.http.clone(),
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
        let mut backoff = self.retry.initial_backoff;
        let mut last = ClientError::Transport("no attempt made".into());
        for attempt in 0..self.retry.attempts.max(1) {
            if attempt > 0 {
                std::thread::sleep(backoff);
                backoff = (backoff * 2).min(self.retry.max_backoff);
            }
            let mut rb = self
                .http
                .request(method.clone(), format!("{}{path}", self.base))
                .header(reqwest::header::CONTENT_TYPE, content_type);
            match &self.auth {
                Auth::Anonymous => {}
                Auth::Admin(token) => rb = rb.bearer_auth(token.as_str()),
                Auth::Member { id, identity } => {
                    // A fresh timestamp and nonce per attempt: a retry is a new request.
                    for (name, value) in
                        request_headers(id, method.as_str(), path, &body, |m| identity.sign_hex(m))
                    {
                        rb = rb.header(name, value);
                    }
                }
            }
            for (k, v) in extra {
                rb = rb.header(*k, v);
            }
            self.bytes_sent
                .fetch_add(body.len() as u64, std::sync::atomic::Ordering::Relaxed);
            self.requests_sent
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
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
                    last = ClientError::Transport(format!("{method} {path}: {}", describe(&e)));
                    continue;
                }
            };
            let status = response.status();
            let content_type = response
                .headers()
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.split(';').next())
                .unwrap_or("")
                .trim()
                .to_string();
            let cap = if status.is_success() {
                limit
            } else {
                MAX_PROBLEM_RESPONSE
            };
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

    // ---- audit -------------------------------------------------------------

    /// The audit trail of a study, oldest first (administrator), every page.
    pub fn audit(&self, study: &str) -> Result<AuditLog, ClientError> {
        let study = fedhe_crypto::MemberId::new(study)
            .map_err(|e| ClientError::Usage(format!("study id: {e}")))?;
        let mut entries = Vec::new();
        loop {
            let after = entries.last().map_or(0, |e: &AuditEntry| e.seq);
            let page: AuditLog = self.json(
                Method::GET,
                &format!("{}?study={}&after={after}", routes::AUDIT, study.as_str()),
                None::<&()>,
            )?;
            if page.entries.is_empty() {
                return Ok(AuditLog { entries });
            }
            entries.extend(page.entries);
        }
    }

    /// A ceremony's hash-chained audit trail (its studies' entries too),
    /// oldest first, the entries with a seq above `after`, every page
    /// (administrator or a member of the ceremony).
    pub fn ceremony_audit(&self, ceremony: &str, after: i64) -> Result<AuditLog, ClientError> {
        let ceremony = fedhe_crypto::MemberId::new(ceremony)
            .map_err(|e| ClientError::Usage(format!("ceremony id: {e}")))?;
        let mut entries: Vec<AuditEntry> = Vec::new();
        loop {
            let from = entries.last().map_or(after, |e| e.seq);
            let page: AuditLog = self.json(
                Method::GET,
                &format!(
                    "{}?after={from}",
                    routes::fill(routes::CEREMONY_AUDIT, &[&ceremony.as_str()])
                ),
                None::<&()>,
            )?;
            if page.entries.is_empty() {
                return Ok(AuditLog { entries });
            }
            if page.entries.iter().any(|e| e.seq <= from) {
                return Err(ClientError::Verification(format!(
                    "the server answered the audit trail after seq {from} with an entry at or before it"
                )));
            }
            entries.extend(page.entries);
        }
    }

    /// Signs `head`, a head of `ceremony`'s trail this member saw, to the
    /// server (`fedhe_api::audit::head_statement`), which records it in the
    /// trail.
    pub fn put_audit_head(
        &self,
        ceremony: &str,
        head: &fedhe_api::AuditHead,
    ) -> Result<fedhe_api::SignedAuditHead, ClientError> {
        let (member, identity) = self.identity()?;
        let signed = fedhe_api::SignedAuditHead {
            head: head.clone(),
            signature: identity.sign_hex(&fedhe_api::audit::head_statement(ceremony, member, head)),
        };
        self.json(
            Method::PUT,
            &routes::fill(routes::AUDIT_HEAD, &[&ceremony, &member]),
            Some(&signed),
        )
    }

    // ---- ceremonies ------------------------------------------------------

    /// Creates a ceremony (administrator).
    pub fn create_ceremony(&self, spec: &CeremonySpec) -> Result<CeremonyStatus, ClientError> {
        self.json(Method::POST, routes::CEREMONIES, Some(spec))
    }

    /// A ceremony's status.
    pub fn ceremony(&self, id: &str) -> Result<CeremonyStatus, ClientError> {
        self.json(
            Method::GET,
            &routes::fill(routes::CEREMONY, &[&id]),
            None::<&()>,
        )
    }

    /// A ceremony's status once it has left `phase` or at least `dealt`
    /// members have dealt (whichever is given), or after `wait` (a long
    /// poll; the server caps `wait`).
    pub fn ceremony_wait(
        &self,
        id: &str,
        wait: Duration,
        phase: Option<CeremonyPhase>,
        dealt: Option<usize>,
    ) -> Result<CeremonyStatus, ClientError> {
        let mut path = format!(
            "{}?wait={}",
            routes::fill(routes::CEREMONY, &[&id]),
            wait.as_secs_f64()
        );
        if let Some(p) = phase {
            path.push_str(&format!("&phase={}", p.as_str()));
        }
        if let Some(d) = dealt {
            path.push_str(&format!("&dealt={d}"));
        }
        self.json(Method::GET, &path, None::<&()>)
    }

    /// Commits to a public-key share (its wire bytes), signed.
    pub fn commit(&self, ceremony: &str, share: &[u8]) -> Result<UploadReceipt, ClientError> {
        let (member, identity) = self.identity()?;
        let hash = blake3::hash(share);
        let commitment = Commitment {
            share_hash: hash.to_hex().to_string(),
            signature: identity.sign_hex(&upload_statement(
                UploadKind::Commitment,
                ceremony,
                member,
                0,
                hash.as_bytes(),
            )),
        };
        self.json(
            Method::PUT,
            &routes::fill(routes::CEREMONY_COMMITMENT, &[&ceremony, &member]),
            Some(&commitment),
        )
    }

    /// Reveals the committed public-key share.
    pub fn reveal(&self, ceremony: &str, share: &[u8]) -> Result<UploadReceipt, ClientError> {
        let (member, _) = self.identity()?;
        let answer = self.send(
            Method::PUT,
            &routes::fill(routes::PUBLIC_KEY_SHARE, &[&ceremony, &member]),
            share.to_vec(),
            OCTET,
            &[],
        )?;
        serde_json::from_slice(&answer.body).map_err(|e| ClientError::Decode(e.to_string()))
    }

    /// One member's revealed public-key share.
    pub fn public_key_share(&self, ceremony: &str, member: &str) -> Result<Vec<u8>, ClientError> {
        self.bytes(&routes::fill(
            routes::PUBLIC_KEY_SHARE,
            &[&ceremony, &member],
        ))
    }

    /// The transcript of a complete ceremony.
    pub fn transcript(&self, ceremony: &str) -> Result<Transcript, ClientError> {
        self.json(
            Method::GET,
            &routes::fill(routes::TRANSCRIPT, &[&ceremony]),
            None::<&()>,
        )
    }

    /// The collective public key's wire bytes.
    pub fn collective_key(&self, ceremony: &str) -> Result<Vec<u8>, ClientError> {
        self.bytes(&routes::fill(routes::COLLECTIVE_KEY, &[&ceremony]))
    }

    /// Uploads this member's threshold dealing (its wire bytes), signed.
    pub fn put_dealing(
        &self,
        ceremony: &str,
        dealing: &[u8],
    ) -> Result<UploadReceipt, ClientError> {
        let (member, identity) = self.identity()?;
        let hash = blake3::hash(dealing);
        let signature = identity.sign_hex(&upload_statement(
            UploadKind::Dealing,
            ceremony,
            member,
            0,
            hash.as_bytes(),
        ));
        let answer = self.send(
            Method::PUT,
            &routes::fill(routes::DEALING, &[&ceremony, &member]),
            dealing.to_vec(),
            OCTET,
            &[(HEADER_UPLOAD_SIGNATURE, signature)],
        )?;
        serde_json::from_slice(&answer.body).map_err(|e| ClientError::Decode(e.to_string()))
    }

    /// `dealer`'s dealing with only the share sealed to this member.
    pub fn dealing_for_me(&self, ceremony: &str, dealer: &str) -> Result<Vec<u8>, ClientError> {
        let (member, _) = self.identity()?;
        self.bytes(&routes::fill(
            routes::DEALING_FOR,
            &[&ceremony, &dealer, &member],
        ))
    }

    /// Uploads the ceremony's result-key dealing (this member must be its
    /// first member by id; `fedhe_crypto::ResultKeyDealing` bytes).
    pub fn put_result_keys(
        &self,
        ceremony: &str,
        dealing: &[u8],
    ) -> Result<UploadReceipt, ClientError> {
        let answer = self.send(
            Method::PUT,
            &routes::fill(routes::RESULT_KEYS, &[&ceremony]),
            dealing.to_vec(),
            OCTET,
            &[],
        )?;
        serde_json::from_slice(&answer.body).map_err(|e| ClientError::Decode(e.to_string()))
    }

    /// The result key sealed to this member (`fedhe_crypto::SealedResultKey`
    /// bytes), or `None` while it has not been dealt (404).
    pub fn result_key_for_me(&self, ceremony: &str) -> Result<Option<Vec<u8>>, ClientError> {
        let (member, _) = self.identity()?;
        match self.bytes(&routes::fill(routes::RESULT_KEY, &[&ceremony, &member])) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(ClientError::Problem { problem, .. }) if problem.status == 404 => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// This member's verdict on the Shamir shares it received.
    pub fn put_dealing_verdict(
        &self,
        ceremony: &str,
        verdict: &DealingVerdict,
    ) -> Result<DealingVerdict, ClientError> {
        let (member, _) = self.identity()?;
        self.json(
            Method::PUT,
            &routes::fill(routes::DEALING_VERDICT, &[&ceremony, &member]),
            Some(verdict),
        )
    }

    // ---- studies and rounds ----------------------------------------------

    /// Creates a study (administrator): the spec and the administrator's
    /// signature of its hash.
    pub fn create_study(&self, spec: &SignedStudySpec) -> Result<StudyStatus, ClientError> {
        self.json(Method::POST, routes::STUDIES, Some(spec))
    }

    /// A study.
    ///
    /// The spec served must be the study's own: one whose id is another
    /// study's (a server serving study C's signed spec for study D, issue 45
    /// item 8) is refused here, before anything uses it.
    pub fn study(&self, id: &str) -> Result<StudyStatus, ClientError> {
        let status: StudyStatus = self.json(
            Method::GET,
            &routes::fill(routes::STUDY, &[&id]),
            None::<&()>,
        )?;
        if status.spec.id != id {
            return Err(ClientError::Verification(format!(
                "the server served the spec of study {} for study {}",
                fedhe_crypto::text::quote(&status.spec.id, 64),
                fedhe_crypto::text::quote(id, 64)
            )));
        }
        Ok(status)
    }

    /// Opens a round (idempotent).
    pub fn open_round(&self, study: &str, round: u64) -> Result<RoundStatus, ClientError> {
        self.json(
            Method::PUT,
            &routes::fill(routes::ROUND, &[&study, &round]),
            None::<&()>,
        )
    }

    /// A round's status, waiting up to `wait` for its version to pass `since`.
    pub fn round(
        &self,
        study: &str,
        round: u64,
        wait: Duration,
        since: Option<i64>,
    ) -> Result<RoundStatus, ClientError> {
        let mut path = format!(
            "{}?wait={}",
            routes::fill(routes::ROUND, &[&study, &round]),
            wait.as_secs_f64()
        );
        if let Some(v) = since {
            path.push_str(&format!("&since={v}"));
        }
        self.json(Method::GET, &path, None::<&()>)
    }

    /// Claims a place in a t-of-n round's decrypting set; the round's status
    /// with the set so far.
    pub fn claim_decryption(&self, study: &str, round: u64) -> Result<RoundStatus, ClientError> {
        let (member, _) = self.identity()?;
        self.json(
            Method::PUT,
            &routes::fill(routes::DECRYPTION_CLAIM, &[&study, &round, &member]),
            None::<&()>,
        )
    }

    /// Uploads `bytes` to this member's slot of a round (`slot`, a route
    /// with captures study, round and member), with `signature` of the
    /// upload's statement.
    fn upload(
        &self,
        slot: &'static str,
        study: &str,
        round: u64,
        bytes: &[u8],
        signature: String,
    ) -> Result<UploadReceipt, ClientError> {
        let (member, _) = self.identity()?;
        let answer = self.send(
            Method::PUT,
            &routes::fill(slot, &[&study, &round, &member]),
            bytes.to_vec(),
            OCTET,
            &[(HEADER_UPLOAD_SIGNATURE, signature)],
        )?;
        let receipt: UploadReceipt =
            serde_json::from_slice(&answer.body).map_err(|e| ClientError::Decode(e.to_string()))?;
        debug_assert!(answer.status.is_success());
        Ok(receipt)
    }

    /// Commits to this member's contribution (an encrypted vector's wire
    /// bytes holding `values` values, whose c1 commitment has hash
    /// `c1_commitment_hash`) under the study spec of hash `spec_hash`
    /// (DESIGN.md §6).
    pub fn put_round_commitment(
        &self,
        study: &str,
        round: u64,
        bytes: &[u8],
        values: u64,
        spec_hash: &str,
        c1_commitment_hash: &[u8; 32],
    ) -> Result<UploadReceipt, ClientError> {
        let (member, identity) = self.identity()?;
        let hash = blake3::hash(bytes);
        let commitment = RoundCommitment {
            hash: hash.to_hex().to_string(),
            values,
            c1_commitment_hash: hex::encode(c1_commitment_hash),
            signature: identity.sign_hex(&round_commitment_statement(
                study,
                member,
                round,
                hash.as_bytes(),
                values,
                spec_hash,
                c1_commitment_hash,
            )),
        };
        self.json(
            Method::PUT,
            &routes::fill(routes::ROUND_COMMITMENT, &[&study, &round, &member]),
            Some(&commitment),
        )
    }

    /// A round's signed commitments.
    pub fn round_commitments(
        &self,
        study: &str,
        round: u64,
    ) -> Result<CommitmentList, ClientError> {
        self.round_commitments_part(study, round, ListPart::All)
    }

    /// `part` of a round's commitments ([`ListPart`]: a member checking a
    /// sample asks for the list without signatures, then for its sample's
    /// entries, issue 16).
    pub fn round_commitments_part(
        &self,
        study: &str,
        round: u64,
        part: ListPart<'_>,
    ) -> Result<CommitmentList, ClientError> {
        self.list_part(routes::ROUND_COMMITMENTS, study, round, part)
    }

    /// Reveals (uploads) this member's committed contribution, signed with
    /// the hash of the frozen commitment list it saw.
    pub fn put_contribution(
        &self,
        study: &str,
        round: u64,
        bytes: &[u8],
        list_hash: &str,
    ) -> Result<UploadReceipt, ClientError> {
        let (member, identity) = self.identity()?;
        let hash = blake3::hash(bytes);
        let signature = identity.sign_hex(&contribution_statement(
            study,
            member,
            round,
            hash.as_bytes(),
            list_hash,
        ));
        self.upload(routes::CONTRIBUTION, study, round, bytes, signature)
    }

    /// Uploads this member's decryption share.
    pub fn put_decryption_share(
        &self,
        study: &str,
        round: u64,
        bytes: &[u8],
    ) -> Result<UploadReceipt, ClientError> {
        let (member, identity) = self.identity()?;
        let hash = blake3::hash(bytes);
        let signature = identity.sign_hex(&upload_statement(
            UploadKind::DecryptionShare,
            study,
            member,
            round,
            hash.as_bytes(),
        ));
        self.upload(routes::DECRYPTION_SHARE, study, round, bytes, signature)
    }

    /// Uploads this member's signed digest of its own contribution
    /// (`fedhe_crypto::sum_digest`), made on the challenge of the aggregate
    /// with hash `aggregate_hash` and the contribution list with entries hash
    /// `list_hash`, naming the frozen commitment list it revealed against.
    #[allow(clippy::too_many_arguments)]
    pub fn put_sum_digest(
        &self,
        study: &str,
        round: u64,
        contribution_hash: &[u8; 32],
        commitment_list_hash: &str,
        list_hash: &[u8; 32],
        aggregate_hash: &[u8; 32],
        digest: &[u8],
    ) -> Result<UploadReceipt, ClientError> {
        let (member, identity) = self.identity()?;
        let signature = identity.sign_hex(&sum_digest_statement(
            study,
            member,
            round,
            contribution_hash,
            commitment_list_hash,
            list_hash,
            aggregate_hash,
            digest,
        ));
        self.upload(routes::SUM_DIGEST, study, round, digest, signature)
    }

    /// The contributors' signed digests of a round, waiting up to `wait` until
    /// at least `count` are in (or the round is done or failed).
    pub fn sum_digests(
        &self,
        study: &str,
        round: u64,
        count: usize,
        wait: Duration,
    ) -> Result<SumDigestList, ClientError> {
        self.digests(
            routes::SUM_DIGESTS,
            study,
            round,
            count,
            wait,
            ListPart::All,
        )
    }

    /// `part` of [`Self::sum_digests`] (as for
    /// [`Self::round_commitments_part`]).
    pub fn sum_digests_part(
        &self,
        study: &str,
        round: u64,
        count: usize,
        wait: Duration,
        part: ListPart<'_>,
    ) -> Result<SumDigestList, ClientError> {
        self.digests(routes::SUM_DIGESTS, study, round, count, wait, part)
    }

    /// Uploads this member's signed digest of its own decryption share, made
    /// on the challenge of the combined share with hash `combined_hash`
    /// (`fedhe_crypto::SumChallenge::derive_for_shares`; `decrypting_set`
    /// empty for n-of-n).
    #[allow(clippy::too_many_arguments)]
    pub fn put_share_digest(
        &self,
        study: &str,
        round: u64,
        share_hash: &[u8; 32],
        share_list_hash: &[u8; 32],
        combined_hash: &[u8; 32],
        aggregate_hash: &[u8; 32],
        decrypting_set: &[String],
        digest: &[u8],
    ) -> Result<UploadReceipt, ClientError> {
        let (member, identity) = self.identity()?;
        let signature = identity.sign_hex(&share_digest_statement(
            study,
            member,
            round,
            share_hash,
            share_list_hash,
            combined_hash,
            aggregate_hash,
            decrypting_set,
            digest,
        ));
        self.upload(routes::SHARE_DIGEST, study, round, digest, signature)
    }

    /// The share makers' signed digests of their decryption shares, waiting
    /// up to `wait` until at least `count` are in (or the round failed).
    pub fn share_digests(
        &self,
        study: &str,
        round: u64,
        count: usize,
        wait: Duration,
    ) -> Result<SumDigestList, ClientError> {
        self.digests(
            routes::SHARE_DIGESTS,
            study,
            round,
            count,
            wait,
            ListPart::All,
        )
    }

    /// `part` of the signed list `list` (a route with captures study and
    /// round) of a round (`?signatures=`, `?members=`).
    fn list_part<T: serde::de::DeserializeOwned + CompactList>(
        &self,
        list: &'static str,
        study: &str,
        round: u64,
        part: ListPart<'_>,
    ) -> Result<T, ClientError> {
        self.list(&format!(
            "{}{}",
            routes::fill(list, &[&study, &round]),
            part.query()
        ))
    }

    fn digests(
        &self,
        kind: &'static str,
        study: &str,
        round: u64,
        count: usize,
        wait: Duration,
        part: ListPart<'_>,
    ) -> Result<SumDigestList, ClientError> {
        let signatures = part.query().replace('?', "&");
        self.list(&format!(
            "{}?count={count}&wait={}{signatures}",
            routes::fill(kind, &[&study, &round]),
            wait.as_secs_f64()
        ))
    }

    /// A signed list, asked for in the compact encoding
    /// (`fedhe_api::compact`: raw hashes and signatures, under half the
    /// bytes of hex JSON) and decoded from whichever of the two the server
    /// answers (a server without it answers JSON).
    fn list<T: serde::de::DeserializeOwned + CompactList>(
        &self,
        path: &str,
    ) -> Result<T, ClientError> {
        let answer = self.send(
            Method::GET,
            path,
            Vec::new(),
            JSON,
            &[("accept", format!("{COMPACT_LIST}, {JSON}"))],
        )?;
        if answer.content_type == COMPACT_LIST {
            T::from_compact(&answer.body).map_err(|e| ClientError::Decode(format!("{path}: {e}")))
        } else {
            serde_json::from_slice(&answer.body)
                .map_err(|e| ClientError::Decode(format!("{path}: {e}")))
        }
    }

    /// The combined decryption share of a finished round
    /// (`fedhe_crypto::CombinedShare` bytes).
    pub fn combined_share(&self, study: &str, round: u64) -> Result<Vec<u8>, ClientError> {
        self.bytes(&routes::fill(routes::COMBINED_SHARE, &[&study, &round]))
    }

    /// The signed contributions of a round and the aggregate's hash.
    pub fn contributions(&self, study: &str, round: u64) -> Result<ContributionList, ClientError> {
        self.contributions_part(study, round, ListPart::All)
    }

    /// `part` of a round's contribution list ([`ListPart`]): a member checks
    /// a contribution's own signature only where its contributor sent no
    /// signed digest (issue 16).
    pub fn contributions_part(
        &self,
        study: &str,
        round: u64,
        part: ListPart<'_>,
    ) -> Result<ContributionList, ClientError> {
        self.list_part(routes::CONTRIBUTIONS, study, round, part)
    }

    /// The server's counters, Prometheus text (administrator).
    pub fn metrics(&self) -> Result<String, ClientError> {
        Ok(String::from_utf8_lossy(&self.bytes("/metrics")?).into_owned())
    }

    /// A link to the server's `/ui` pages for a browser (administrator).
    pub fn ui_ticket(&self) -> Result<UiTicket, ClientError> {
        self.json(Method::POST, routes::UI_TICKETS, None::<&()>)
    }

    /// The signed decryption shares of a round and the aggregate's hash.
    pub fn decryption_shares(
        &self,
        study: &str,
        round: u64,
    ) -> Result<DecryptionShareList, ClientError> {
        self.decryption_shares_part(study, round, ListPart::All)
    }

    /// `part` of a round's signed decryption shares (as for
    /// [`Self::contributions_part`]).
    pub fn decryption_shares_part(
        &self,
        study: &str,
        round: u64,
        part: ListPart<'_>,
    ) -> Result<DecryptionShareList, ClientError> {
        self.list_part(routes::DECRYPTION_SHARES, study, round, part)
    }

    /// One member's decryption share.
    pub fn decryption_share(
        &self,
        study: &str,
        round: u64,
        member: &str,
    ) -> Result<Vec<u8>, ClientError> {
        self.bytes(&routes::fill(
            routes::DECRYPTION_SHARE,
            &[&study, &round, &member],
        ))
    }

    /// One member's contribution.
    pub fn contribution(
        &self,
        study: &str,
        round: u64,
        member: &str,
    ) -> Result<Vec<u8>, ClientError> {
        self.bytes(&routes::fill(
            routes::CONTRIBUTION,
            &[&study, &round, &member],
        ))
    }

    /// The aggregate, waiting up to `wait` for it.
    pub fn aggregate(
        &self,
        study: &str,
        round: u64,
        wait: Duration,
    ) -> Result<Vec<u8>, ClientError> {
        self.bytes(&format!(
            "{}?wait={}",
            routes::fill(routes::AGGREGATE, &[&study, &round]),
            wait.as_secs_f64()
        ))
    }

    /// The carries of a round's aggregate (`fedhe_crypto::C1Carries` bytes).
    pub fn aggregate_carries(&self, study: &str, round: u64) -> Result<Vec<u8>, ClientError> {
        self.bytes(&routes::fill(routes::AGGREGATE_CARRIES, &[&study, &round]))
    }

    /// The result, waiting up to `wait` for it.
    pub fn result(
        &self,
        study: &str,
        round: u64,
        wait: Duration,
    ) -> Result<RoundResult, ClientError> {
        self.json(
            Method::GET,
            &format!(
                "{}?wait={}",
                routes::fill(routes::RESULT, &[&study, &round]),
                wait.as_secs_f64()
            ),
            None::<&()>,
        )
    }

    /// `GET /readyz` answers 200.
    pub fn ready(&self) -> bool {
        self.send(Method::GET, routes::READYZ, Vec::new(), JSON, &[])
            .is_ok()
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
