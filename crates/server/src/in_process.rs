//! The server without a socket: the same store, state, router, deadline
//! sweep and change listener as [`crate::start`], answering requests handed
//! to it in this process ([`InProcess::answer`]). A member's round protocol
//! is unit-tested through it (`fedhe_client::Client::in_process`) against
//! the real handlers, their checks and a real database file, with no
//! listener, port or second process.

use crate::{api, background, check_limits, AppState, Config, StartError, Store};
use axum::body::Body;
use std::sync::Arc;
use tower::ServiceExt;

/// A request to [`InProcess::answer`].
#[derive(Clone, Debug)]
pub struct Request<'a> {
    /// `GET`, `PUT`, `POST`, …
    pub method: &'a str,
    /// The path with its query (`/v1/studies/s1/rounds/1?wait=20`).
    pub path: &'a str,
    /// Header names and values (`Content-Length` is set from the body).
    pub headers: &'a [(String, String)],
    /// The body.
    pub body: &'a [u8],
}

/// The server's answer to a [`Request`].
#[derive(Clone, Debug)]
pub struct Answer {
    /// HTTP status.
    pub status: u16,
    /// Its `Content-Type` (empty if none).
    pub content_type: String,
    /// The whole body.
    pub body: Vec<u8>,
}

/// A server in this process ([`InProcess::open`]); dropping it stops its
/// tasks.
pub struct InProcess {
    /// Taken only when dropped.
    runtime: Option<tokio::runtime::Runtime>,
    router: axum::Router,
    state: Arc<AppState>,
}

impl InProcess {
    /// Opens `config`'s store and starts the server's background tasks on a
    /// runtime of its own (two workers); `config.listen` and TLS are not
    /// used. The same limits as [`crate::start`] are refused.
    pub fn open(config: Config) -> Result<Self, StartError> {
        check_limits(&config)?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()?;
        let state = runtime.block_on(async {
            let store = Store::open(&config.database_url).await?;
            let state = Arc::new(AppState::new(store, config));
            // Aborted when the runtime is dropped.
            let _ = background(&state);
            Ok::<_, StartError>(state)
        })?;
        Ok(Self {
            router: api::router(state.clone()),
            runtime: Some(runtime),
            state,
        })
    }

    /// The server's state (its store, counters and configuration).
    pub fn state(&self) -> &Arc<AppState> {
        &self.state
    }

    /// The router's answer to `request`, as a connection would have
    /// received it. Blocks the calling thread (which must not be one of a
    /// runtime's); several threads may call at once. A request the router
    /// cannot take (a method or header that is not HTTP) is an error.
    pub fn answer(&self, request: Request<'_>) -> Result<Answer, String> {
        let mut builder = axum::http::Request::builder()
            .method(request.method)
            .uri(request.path);
        for (name, value) in request.headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        let http = builder
            .header(axum::http::header::CONTENT_LENGTH, request.body.len())
            .body(Body::from(request.body.to_vec()))
            .map_err(|e| format!("{} {}: {e}", request.method, request.path))?;
        let router = self.router.clone();
        let Some(runtime) = &self.runtime else {
            return Err("the server is stopped".into());
        };
        runtime.block_on(async move {
            let response = router
                .oneshot(http)
                .await
                .map_err(|e| format!("the router failed: {e}"))?;
            let status = response.status().as_u16();
            let content_type = response
                .headers()
                .get(axum::http::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string();
            let body = axum::body::to_bytes(response.into_body(), usize::MAX)
                .await
                .map_err(|e| format!("the answer's body: {e}"))?;
            Ok(Answer {
                status,
                content_type,
                body: body.to_vec(),
            })
        })
    }
}

impl Drop for InProcess {
    /// Closes the store (its pool and, on SQLite, the WAL sync) and stops
    /// the runtime's tasks; inside another runtime, where blocking would
    /// panic, the tasks are only stopped.
    fn drop(&mut self) {
        let Some(runtime) = self.runtime.take() else {
            return;
        };
        if tokio::runtime::Handle::try_current().is_ok() {
            runtime.shutdown_background();
        } else {
            let state = self.state.clone();
            runtime.block_on(async move { state.store.close().await });
        }
    }
}
