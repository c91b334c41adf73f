//! `fedhe-server`: the coordinating server of a federation (DESIGN.md §5).
//!
//! It runs key ceremonies (commit-then-reveal of public-key shares, the
//! collective key), studies and their rounds (collect encrypted
//! contributions, add them, collect decryption shares, combine), over a REST
//! API under `/v1` with RFC 9457 errors, member-signed requests and a durable
//! store (an SQLite file, or PostgreSQL shared by several replicas). It never holds a secret key share: it only adds ciphertexts
//! and combines flooded decryption shares once every member sent one.
//!
//! | module | what |
//! | --- | --- |
//! | [`api`] | the routes and their handlers (a module per resource), the OpenAPI document |
//! | [`auth`] | member request signatures, the administrator's token |
//! | [`engine`] | the ceremony and round state machines |
//! | [`store`] | the SQLite or PostgreSQL store: migrations, transactions, compare-and-swap, queries grouped per resource, the audit table ([`store::audit`]) |
//! | [`problem`] | `application/problem+json` errors |
//! | [`metrics`] | Prometheus counters |
//! | [`tls`] | the rustls configuration from PEM files |
//! | [`listener`] | the accept loop: connection cap, header-read and idle timeouts |
//! | [`gate`] | authentication from the headers before a body is read; the in-flight body budget |
//!
//! The server speaks HTTPS when given a certificate and key
//! ([`Config::tls_cert`], [`Config::tls_key`]); plain HTTP is refused on an
//! address other than loopback unless [`Config::allow_plain_http`].

pub mod api;
pub mod auth;
pub mod engine;
pub mod gate;
pub mod in_process;
pub mod listener;
pub mod metrics;
pub mod problem;
pub mod slots;
pub mod store;
pub mod tls;
pub mod ui;

use fedhe_crypto::{InsecurePolicy, ParameterSet, Params};
pub use in_process::InProcess;
use problem::{ApiError, ApiResult};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
pub use store::Store;
use tokio::sync::Notify;

/// The server's configuration (`configs/server.toml`).
#[derive(Clone, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Address to listen on.
    pub listen: SocketAddr,
    /// `sqlite://PATH` (a file, created if missing) or
    /// `postgres://USER:PASSWORD@HOST:PORT/DATABASE` (several replicas may
    /// share one). An in-memory SQLite database is refused: reads and writes
    /// use separate connections.
    pub database_url: String,
    /// The administrator's bearer token (empty: no admin actions possible).
    pub admin_token: String,
    /// Whether ceremonies may use an insecure (test-only) parameter set.
    pub allow_insecure_params: bool,
    /// Limit on a whole request, milliseconds.
    pub request_timeout_ms: u64,
    /// Limit on receiving a request body, milliseconds (slow-body deadline).
    pub body_timeout_ms: u64,
    /// Largest `?wait=` a long poll may ask for, seconds.
    pub max_wait_secs: u64,
    /// Largest binary upload (contribution, share), bytes.
    pub max_upload_bytes: usize,
    /// Largest JSON body, bytes.
    pub max_json_bytes: usize,
    /// Interval of the deadline sweep, milliseconds.
    pub sweep_interval_ms: u64,
    /// PEM certificate chain to serve HTTPS with (with [`Self::tls_key`]).
    pub tls_cert: Option<PathBuf>,
    /// PEM private key of [`Self::tls_cert`].
    pub tls_key: Option<PathBuf>,
    /// Serve plain HTTP on an address other than loopback (bearer tokens and
    /// request bodies then cross the network in the clear: only behind a
    /// TLS-terminating proxy on a trusted network).
    pub allow_plain_http: bool,
    /// Limit on receiving a request's head (request line and headers),
    /// milliseconds; also how long a kept-alive connection may wait for its
    /// next request head (hyper starts the same timer then).
    pub header_read_timeout_ms: u64,
    /// A connection with no request in flight for this long is closed,
    /// milliseconds.
    pub idle_timeout_ms: u64,
    /// Most connections open at once (TLS handshakes included). At the cap a
    /// new connection closes the oldest idle one, or is closed itself if none
    /// is idle. Lowered at start to what the process's descriptor limit allows.
    pub max_connections: usize,
    /// Most request-body bytes being received and held at once, over all
    /// requests (declared `Content-Length`s, reserved before a body is read).
    /// At least [`Self::max_upload_bytes`].
    pub max_inflight_body_bytes: usize,
    /// Most long polls one caller (a member, or the administrator) may hold
    /// open at once; one more is refused (429), so no caller can pin the
    /// server's connections with waits (issue 45, item 2).
    pub max_polls_per_caller: usize,
    /// Most request bodies one member may have being received at once; one
    /// more is refused (429) from its headers, so no member can hold the
    /// server's connections or its body budget alone (issue 45, item 1).
    pub max_uploads_per_member: usize,
    /// The slowest a body may arrive, bytes per second: a body of `n` bytes
    /// is cut (408) when it is not in after [`BODY_GRACE`] plus `n` at this
    /// rate (or [`Self::body_timeout_ms`], whichever is sooner), so a body
    /// trickled a byte at a time holds its connection for seconds, not for
    /// the whole slow-body deadline.
    pub min_body_bytes_per_sec: u64,
}

/// What every body gets on top of its size at
/// [`Config::min_body_bytes_per_sec`]: a connection's first round trips.
pub const BODY_GRACE: std::time::Duration = std::time::Duration::from_secs(3);

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("listen", &self.listen)
            .field("database_url", &self.database_url)
            .field("admin_token", &"<redacted>")
            .field("allow_insecure_params", &self.allow_insecure_params)
            .field("tls_cert", &self.tls_cert)
            .field("tls_key", &self.tls_key)
            .field("allow_plain_http", &self.allow_plain_http)
            .field("max_connections", &self.max_connections)
            .finish_non_exhaustive()
    }
}

impl Default for Config {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            database_url: "sqlite://data/fedhe.db".into(),
            admin_token: String::new(),
            allow_insecure_params: false,
            request_timeout_ms: 120_000,
            body_timeout_ms: 60_000,
            max_wait_secs: 60,
            max_upload_bytes: 256 << 20,
            max_json_bytes: 256 << 10,
            sweep_interval_ms: 500,
            tls_cert: None,
            tls_key: None,
            allow_plain_http: false,
            header_read_timeout_ms: 10_000,
            max_polls_per_caller: 16,
            max_uploads_per_member: 4,
            min_body_bytes_per_sec: 64 << 10,
            idle_timeout_ms: 60_000,
            max_connections: 1024,
            max_inflight_body_bytes: 256 << 20,
        }
    }
}

/// Keys of state machines being advanced right now (one task per key), and
/// whether a request arrived meanwhile.
#[derive(Default, Debug)]
pub struct Busy {
    inner: Mutex<HashMap<String, bool>>,
}

/// Holds a key of [`Busy`] until dropped.
pub struct BusyGuard<'a> {
    busy: &'a Busy,
    key: String,
}

impl Busy {
    /// Claims `key`, or marks it dirty and returns `None` if it is held.
    pub fn try_claim(&self, key: String) -> Option<BusyGuard<'_>> {
        let mut map = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        match map.get_mut(&key) {
            Some(dirty) => {
                *dirty = true;
                None
            }
            None => {
                map.insert(key.clone(), false);
                Some(BusyGuard { busy: self, key })
            }
        }
    }
}

impl BusyGuard<'_> {
    /// Whether another request arrived since the last call (and resets it).
    pub fn take_dirty(&self) -> bool {
        let mut map = self.busy.inner.lock().unwrap_or_else(|p| p.into_inner());
        map.get_mut(&self.key).map(std::mem::take).unwrap_or(false)
    }
}

impl Drop for BusyGuard<'_> {
    fn drop(&mut self) {
        let mut map = self.busy.inner.lock().unwrap_or_else(|p| p.into_inner());
        map.remove(&self.key);
    }
}

/// Everything a handler needs.
pub struct AppState {
    /// The store.
    pub store: Store,
    /// The configuration.
    pub config: Config,
    /// Signalled on every state change (wakes long polls): by
    /// [`Self::notify_change`] in this process, and by the other replicas'
    /// `NOTIFY` on PostgreSQL ([`store::Store::listen_for_changes`]).
    pub changed: Notify,
    /// Long polls open per caller ([`Config::max_polls_per_caller`]).
    pub polls: Arc<slots::CallerSlots>,
    /// Bodies being received per member ([`Config::max_uploads_per_member`]).
    pub uploads: Arc<slots::CallerSlots>,
    /// State machines being advanced.
    pub busy: Busy,
    /// Counters.
    pub metrics: metrics::Metrics,
    /// What is left of [`Config::max_inflight_body_bytes`] ([`gate`]).
    pub body_budget: Arc<tokio::sync::Semaphore>,
    /// Encoded answers for lists that can no longer change.
    pub final_bodies: api::FinalBodies,
    params: Mutex<HashMap<&'static str, Arc<Params>>>,
}

impl AppState {
    /// State over an open store.
    pub fn new(store: Store, config: Config) -> Self {
        let body_budget = gate::body_budget(&config);
        Self {
            store,
            config,
            changed: Notify::new(),
            polls: slots::CallerSlots::new(slots::SlotKind::LongPoll),
            uploads: slots::CallerSlots::new(slots::SlotKind::Upload),
            busy: Busy::default(),
            metrics: metrics::Metrics::default(),
            body_budget,
            final_bodies: api::FinalBodies::default(),
            params: Mutex::new(HashMap::new()),
        }
    }

    /// Wakes this process's long polls after a state change, and, on
    /// PostgreSQL, the other replicas' (`NOTIFY`, not waited for: a replica
    /// that misses it still looks again within [`api::POLL_FALLBACK`]).
    pub fn notify_change(&self) {
        self.changed.notify_waiters();
        self.store.notify_replicas();
    }

    /// The validated parameters of a set (cached: building NTT tables costs).
    pub fn params(&self, name: &str, allow_insecure: bool) -> ApiResult<Arc<Params>> {
        let set = ParameterSet::by_name(name).map_err(|e| ApiError::bad_request(e.to_string()))?;
        let policy = if allow_insecure && self.config.allow_insecure_params {
            InsecurePolicy::Allow
        } else {
            InsecurePolicy::Refuse
        };
        let mut cache = self.params.lock().unwrap_or_else(|p| p.into_inner());
        // The cache holds sets validated for earlier ceremonies; an insecure
        // set is only handed out under this caller's own policy.
        if let Some(p) = cache.get(set.name) {
            if set.is_secure() || policy == InsecurePolicy::Allow {
                return Ok(p.clone());
            }
        }
        let params = set
            .validate(policy)
            .map_err(|e| ApiError::bad_request(e.to_string()))?;
        cache.insert(set.name, params.clone());
        Ok(params)
    }
}

/// A running server.
pub struct Running {
    /// The address it listens on.
    pub addr: SocketAddr,
    /// Whether it speaks HTTPS.
    pub tls: bool,
    /// The shared state.
    pub state: Arc<AppState>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Running {
    /// The base URL of the server (`https://ADDR` or `http://ADDR`).
    pub fn url(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}", self.addr)
    }

    /// Stops accepting, lets running requests finish, closes the store.
    pub async fn shutdown(mut self) -> std::io::Result<()> {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        let result = self.task.await.unwrap_or(Ok(()));
        self.state.store.close().await;
        result
    }
}

/// The TLS configuration `config` asks for (none for plain HTTP), after the
/// plain-HTTP policy: plain HTTP only on loopback unless allowed.
pub fn tls_config(config: &Config) -> Result<Option<Arc<rustls::ServerConfig>>, StartError> {
    let tls = match (&config.tls_cert, &config.tls_key) {
        (Some(cert), Some(key)) => Some(tls::server_config(cert, key).map_err(StartError::Tls)?),
        (None, None) => None,
        _ => {
            return Err(StartError::Config(
                "a TLS certificate needs its private key and the other way round: give both --tls-cert and --tls-key".into(),
            ))
        }
    };
    if tls.is_none() && !config.listen.ip().is_loopback() {
        if !config.allow_plain_http {
            return Err(StartError::Config(format!(
                "refusing plain HTTP on the non-loopback address {}: give --tls-cert and --tls-key, or --allow-plain-http if a TLS-terminating proxy protects this network",
                config.listen
            )));
        }
        tracing::warn!(listen = %config.listen, "serving plain HTTP on a non-loopback address");
    }
    Ok(tls)
}

/// Opens the store, binds `config.listen` and serves (HTTPS if the
/// configuration has a certificate) in a background task, with the deadline
/// sweep, until [`Running::shutdown`].
pub async fn start(config: Config) -> Result<Running, StartError> {
    let tls = tls_config(&config)?;
    check_limits(&config)?;
    let store = Store::open(&config.database_url).await?;
    let listener = tokio::net::TcpListener::bind(config.listen).await?;
    let addr = listener.local_addr()?;
    let state = Arc::new(AppState::new(store, config));
    let app = api::router(state.clone());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let (sweeper, change_listener) = background(&state);
    let is_tls = tls.is_some();
    let limits = listener::Limits::from_config(&state.config);
    let task = tokio::spawn(async move {
        let result = listener::serve(listener, app, tls, limits, rx).await;
        sweeper.abort();
        change_listener.abort();
        result
    });
    Ok(Running {
        addr,
        tls: is_tls,
        state,
        shutdown: Some(tx),
        task,
    })
}

/// The limits of `config` that would leave the server unable to serve,
/// refused by name (shared by [`start`] and [`InProcess::open`]).
fn check_limits(config: &Config) -> Result<(), StartError> {
    if config.max_inflight_body_bytes < config.max_upload_bytes {
        return Err(StartError::Config(format!(
            "max_inflight_body_bytes ({}) is below max_upload_bytes ({}): no upload could ever be received",
            config.max_inflight_body_bytes, config.max_upload_bytes
        )));
    }
    if config.max_polls_per_caller == 0 {
        return Err(StartError::Config(
            "max_polls_per_caller is 0: no member could wait for a round; give at least 1".into(),
        ));
    }
    if config.max_uploads_per_member == 0 {
        return Err(StartError::Config(
            "max_uploads_per_member is 0: no member could upload anything; give at least 1".into(),
        ));
    }
    if config.min_body_bytes_per_sec == 0 {
        return Err(StartError::Config(
            "min_body_bytes_per_sec is 0: give the slowest rate a body may arrive at (bytes per second, at least 1)".into(),
        ));
    }
    Ok(())
}

/// The server's background tasks on `state`: the deadline sweep and the
/// store's change listener (which wakes long polls on another replica's
/// writes).
fn background(state: &Arc<AppState>) -> (tokio::task::JoinHandle<()>, tokio::task::JoinHandle<()>) {
    let listener_state = state.clone();
    let change_listener = tokio::spawn(async move {
        listener_state
            .store
            .listen_for_changes(&listener_state.changed)
            .await
    });
    let sweeper_state = state.clone();
    let sweeper = tokio::spawn(async move {
        let interval = Duration::from_millis(sweeper_state.config.sweep_interval_ms.max(10));
        loop {
            if let Err(e) = engine::sweep(&sweeper_state).await {
                tracing::error!(error = %e, "deadline sweep failed");
            }
            tokio::time::sleep(interval).await;
        }
    });
    (sweeper, change_listener)
}

/// Why the server did not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The configuration is refused.
    #[error("configuration: {0}")]
    Config(String),
    /// The store did not open or migrate (the message names the database and
    /// what failed).
    #[error("store: {0}")]
    Store(#[from] store::OpenError),
    /// The TLS certificate or key did not load.
    #[error("{0}")]
    Tls(String),
    /// The socket did not bind.
    #[error("listen: {0}")]
    Io(#[from] std::io::Error),
}
