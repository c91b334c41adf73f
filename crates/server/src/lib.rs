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
//! | [`api`] | the routes and their handlers, the OpenAPI document |
//! | [`auth`] | member request signatures, the administrator's token |
//! | [`engine`] | the ceremony and round state machines |
//! | [`store`] | the SQLite or PostgreSQL store: migrations, transactions, compare-and-swap |
//! | [`problem`] | `application/problem+json` errors |
//! | [`metrics`] | Prometheus counters |
//! | [`tls`] | the rustls configuration from PEM files |
//!
//! The server speaks HTTPS when given a certificate and key
//! ([`Config::tls_cert`], [`Config::tls_key`]); plain HTTP is refused on an
//! address other than loopback unless [`Config::allow_plain_http`].

pub mod api;
pub mod auth;
pub mod engine;
pub mod metrics;
pub mod problem;
pub mod store;
pub mod tls;

use fedhe_crypto::{InsecurePolicy, ParameterSet, Params};
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
}

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
    /// Signalled on every state change (wakes long polls).
    pub changed: Notify,
    /// State machines being advanced.
    pub busy: Busy,
    /// Counters.
    pub metrics: metrics::Metrics,
    params: Mutex<HashMap<&'static str, Arc<Params>>>,
}

impl AppState {
    /// State over an open store.
    pub fn new(store: Store, config: Config) -> Self {
        Self {
            store,
            config,
            changed: Notify::new(),
            busy: Busy::default(),
            metrics: metrics::Metrics::default(),
            params: Mutex::new(HashMap::new()),
        }
    }

    /// The validated parameters of a set (cached: building NTT tables costs).
    pub fn params(&self, name: &str, allow_insecure: bool) -> ApiResult<Arc<Params>> {
        let set = ParameterSet::by_name(name).map_err(|e| ApiError::bad_request(e.to_string()))?;
        let mut cache = self.params.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(p) = cache.get(set.name) {
            return Ok(p.clone());
        }
        let policy = if allow_insecure && self.config.allow_insecure_params {
            InsecurePolicy::Allow
        } else {
            InsecurePolicy::Refuse
        };
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
    let store = Store::open(&config.database_url).await?;
    let listener = tokio::net::TcpListener::bind(config.listen).await?;
    let addr = listener.local_addr()?;
    let state = Arc::new(AppState::new(store, config));
    let app = api::router(state.clone());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let sweeper_state = state.clone();
    let sweeper = tokio::spawn(async move {
        let interval = Duration::from_millis(sweeper_state.config.sweep_interval_ms.max(10));
        loop {
            if let Err(e) = engine::sweep(&sweeper_state).await {
                tracing::warn!(error = %e, "deadline sweep failed");
            }
            tokio::time::sleep(interval).await;
        }
    });
    let is_tls = tls.is_some();
    let task = match tls {
        None => tokio::spawn(async move {
            let result = axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = rx.await;
                })
                .await;
            sweeper.abort();
            result
        }),
        Some(tls) => {
            // axum-server does the TLS handshake per connection, in the
            // connection's task and under a handshake timeout, so a slow
            // client cannot hold up the accept loop.
            let handle = axum_server::Handle::new();
            let server = axum_server::from_tcp_rustls(
                listener.into_std()?,
                axum_server::tls_rustls::RustlsConfig::from_config(tls),
            )?
            .handle(handle.clone());
            tokio::spawn(async move {
                tokio::spawn(async move {
                    let _ = rx.await;
                    // Like axum::serve's graceful shutdown: running requests
                    // finish (each is bounded by the request timeout).
                    handle.graceful_shutdown(None);
                });
                let result = server.serve(app.into_make_service()).await;
                sweeper.abort();
                result
            })
        }
    };
    Ok(Running {
        addr,
        tls: is_tls,
        state,
        shutdown: Some(tx),
        task,
    })
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
