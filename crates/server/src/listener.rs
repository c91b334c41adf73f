//! The accept loop: plain HTTP or HTTPS connections served by hyper under
//! limits that hold before any request is authenticated (DESIGN.md §5):
//!
//! - a request head must arrive within [`Config::header_read_timeout_ms`]
//!   (hyper's own timer, which also runs while a kept-alive connection waits
//!   for its next request; a TLS handshake gets the same time);
//! - a connection with no request in flight for [`Config::idle_timeout_ms`]
//!   is closed;
//! - at most [`Config::max_connections`] connections are open: at the cap a
//!   new connection closes the oldest idle one (an idle-socket flood then
//!   only recycles itself, and `/healthz` or a member still get in), and is
//!   closed itself only when every open connection has a request in flight.
//!
//! Each connection runs in its own task; the accept loop never waits on a
//! client. Shutdown stops accepting, asks every connection to close after
//! its running request and waits for them.

use crate::Config;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::{watch, Notify};
use tokio::time::Instant;

/// How long a connection asked to close (idle, evicted) may take to do so
/// before it is dropped.
const CLOSE_GRACE: Duration = Duration::from_secs(1);

/// The connection limits of [`serve`], from the configuration.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Request head (and TLS handshake) deadline.
    pub header_read_timeout: Duration,
    /// Idle connections are closed after this.
    pub idle_timeout: Duration,
    /// Most connections open at once.
    pub max_connections: usize,
    /// How long running requests may take to finish at shutdown.
    pub shutdown_grace: Duration,
}

impl Limits {
    /// The limits `config` sets, with `max_connections` lowered to what the
    /// process's open-file limit leaves room for (the store's connections, the
    /// listener and the log need some).
    pub fn from_config(config: &Config) -> Self {
        let mut max_connections = config.max_connections.max(1);
        if let Some(fds) = open_file_limit() {
            let room = fds.saturating_sub(64).max(16);
            if max_connections > room {
                tracing::warn!(
                    configured = max_connections,
                    open_file_limit = fds,
                    lowered_to = room,
                    "max_connections exceeds what the open-file limit allows; lowered (raise it with ulimit -n)"
                );
                max_connections = room;
            }
        }
        Self {
            header_read_timeout: Duration::from_millis(config.header_read_timeout_ms.max(1)),
            idle_timeout: Duration::from_millis(config.idle_timeout_ms.max(1)),
            max_connections,
            shutdown_grace: Duration::from_millis(config.request_timeout_ms)
                .saturating_add(Duration::from_secs(1)),
        }
    }
}

/// The soft limit on open file descriptors of this process, if known
/// (Linux: `/proc/self/limits`).
fn open_file_limit() -> Option<usize> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    limits
        .lines()
        .find(|l| l.starts_with("Max open files"))?
        .split_whitespace()
        .nth(3)?
        .parse()
        .ok()
}

/// One open connection, as the accept loop sees it.
struct Conn {
    /// Requests being answered right now.
    in_flight: AtomicUsize,
    /// When the last request finished (or the connection opened), in
    /// milliseconds since the registry's epoch.
    last_active_ms: AtomicU64,
    /// Asks the connection to close.
    close: Notify,
}

/// The open connections, oldest first.
struct Registry {
    epoch: Instant,
    conns: Mutex<BTreeMap<u64, Arc<Conn>>>,
    next_id: AtomicU64,
}

impl Registry {
    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Arc<Conn>>> {
        self.conns.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers a new connection if there is room, closing the oldest idle
    /// one to make room at the cap; `None` if every connection is busy.
    fn admit(&self, max: usize) -> Option<(u64, Arc<Conn>)> {
        let mut conns = self.lock();
        if conns.len() >= max {
            let idle = conns
                .iter()
                .find(|(_, c)| c.in_flight.load(Ordering::Acquire) == 0)
                .map(|(id, _)| *id)?;
            if let Some(evicted) = conns.remove(&idle) {
                evicted.close.notify_one();
            }
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let conn = Arc::new(Conn {
            in_flight: AtomicUsize::new(0),
            last_active_ms: AtomicU64::new(self.now_ms()),
            close: Notify::new(),
        });
        conns.insert(id, conn.clone());
        Some((id, conn))
    }

    fn remove(&self, id: u64) {
        self.lock().remove(&id);
    }

    fn len(&self) -> usize {
        self.lock().len()
    }
}

/// Counts a request in flight on its connection while alive.
struct InFlight {
    conn: Arc<Conn>,
    registry: Arc<Registry>,
}

impl InFlight {
    fn new(conn: Arc<Conn>, registry: Arc<Registry>) -> Self {
        conn.in_flight.fetch_add(1, Ordering::AcqRel);
        Self { conn, registry }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.conn
            .last_active_ms
            .store(self.registry.now_ms(), Ordering::Release);
        self.conn.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Serves `app` on `listener` (HTTPS if `tls`) under `limits` until
/// `shutdown` fires, then lets running requests finish (up to the shutdown
/// grace) and returns.
pub async fn serve(
    listener: TcpListener,
    app: axum::Router,
    tls: Option<Arc<rustls::ServerConfig>>,
    limits: Limits,
    shutdown: tokio::sync::oneshot::Receiver<()>,
) -> std::io::Result<()> {
    let registry = Arc::new(Registry {
        epoch: Instant::now(),
        conns: Mutex::new(BTreeMap::new()),
        next_id: AtomicU64::new(0),
    });
    let tls = tls.map(tokio_rustls::TlsAcceptor::from);
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut tasks = tokio::task::JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => accepted,
        };
        // Reap finished connection tasks so the set does not grow.
        while tasks.try_join_next().is_some() {}
        let (stream, peer) = match accepted {
            Ok(a) => a,
            Err(e) => {
                // Out of descriptors or a connection reset before accept:
                // back off a little instead of spinning.
                tracing::warn!(error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Some((id, conn)) = registry.admit(limits.max_connections) else {
            tracing::warn!(%peer, max_connections = limits.max_connections,
                "connection refused: every connection has a request in flight");
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let tls = tls.clone();
        let registry = registry.clone();
        let stop = stop_rx.clone();
        tasks.spawn(async move {
            match tls {
                None => serve_connection(stream, app, &conn, &registry, limits, stop).await,
                Some(acceptor) => {
                    let handshake = tokio::select! {
                        h = tokio::time::timeout(limits.header_read_timeout, acceptor.accept(stream)) => h,
                        _ = conn.close.notified() => Ok(Err(std::io::Error::other("evicted"))),
                    };
                    match handshake {
                        Ok(Ok(stream)) => {
                            serve_connection(stream, app, &conn, &registry, limits, stop).await
                        }
                        Ok(Err(e)) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                        Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                    }
                }
            }
            registry.remove(id);
        });
    }
    drop(listener);
    let _ = stop_tx.send(true);
    let deadline = Instant::now() + limits.shutdown_grace + CLOSE_GRACE;
    while !tasks.is_empty() {
        if tokio::time::timeout_at(deadline, tasks.join_next())
            .await
            .is_err()
        {
            tracing::warn!(
                open = registry.len(),
                "connections still open at the end of the shutdown grace; dropped"
            );
            tasks.abort_all();
            break;
        }
    }
    Ok(())
}

/// Serves one connection until the client closes it, it is idle too long,
/// it is evicted, or the server shuts down.
async fn serve_connection<I>(
    io: I,
    app: axum::Router,
    conn: &Arc<Conn>,
    registry: &Arc<Registry>,
    limits: Limits,
    mut stop: watch::Receiver<bool>,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = {
        let conn = conn.clone();
        let registry = registry.clone();
        hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
            let guard = InFlight::new(conn.clone(), registry.clone());
            let app = app.clone();
            async move {
                let response =
                    tower::ServiceExt::oneshot(app, request.map(axum::body::Body::new)).await;
                drop(guard);
                response
            }
        })
    };
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .keep_alive(true);
    let http = builder.serve_connection(TokioIo::new(io), service);
    tokio::pin!(http);
    // When set, the connection was asked to close and is dropped at this time.
    let mut close_by: Option<Instant> = None;
    loop {
        let idle_check = if conn.in_flight.load(Ordering::Acquire) > 0 {
            Instant::now() + limits.idle_timeout
        } else {
            let last = conn.last_active_ms.load(Ordering::Acquire);
            registry.epoch + Duration::from_millis(last) + limits.idle_timeout
        };
        tokio::select! {
            result = http.as_mut() => {
                if let Err(e) = result {
                    tracing::debug!(error = %e, "connection ended with an error");
                }
                return;
            }
            _ = conn.close.notified(), if close_by.is_none() => {
                // Evicted at the cap: an idle connection (perhaps one that
                // never sent a byte) is closed at once; one whose request
                // started meanwhile may finish it.
                if conn.in_flight.load(Ordering::Acquire) == 0 {
                    return;
                }
                http.as_mut().graceful_shutdown();
                close_by = Some(Instant::now() + CLOSE_GRACE);
            }
            _ = stop.changed(), if close_by.is_none() => {
                http.as_mut().graceful_shutdown();
                close_by = Some(Instant::now() + limits.shutdown_grace);
            }
            _ = tokio::time::sleep_until(idle_check), if close_by.is_none() => {
                let idle_since = conn.last_active_ms.load(Ordering::Acquire);
                if conn.in_flight.load(Ordering::Acquire) == 0
                    && registry.now_ms().saturating_sub(idle_since) >= limits.idle_timeout.as_millis() as u64
                {
                    http.as_mut().graceful_shutdown();
                    close_by = Some(Instant::now() + CLOSE_GRACE);
                }
            }
            _ = tokio::time::sleep_until(close_by.unwrap_or_else(Instant::now)), if close_by.is_some() => {
                return;
            }
        }
    }
}
