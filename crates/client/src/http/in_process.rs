//! A client of a server in this process: its requests, signed and retried
//! exactly as over the network, are handed to an [`Exchange`] instead of a
//! connection (`fedhe_server::InProcess` is one: the member's phases are
//! unit-tested against the real server with no socket).

use super::{Auth, Client, Http, RetryPolicy};
use std::sync::Arc;

/// A server reached without a network.
pub trait Exchange: Send + Sync {
    /// The answer to one request (`path` with its query; `headers` as a
    /// connection would carry them): its status, `Content-Type` and body.
    /// An error is a request that never reached the server (retried like a
    /// connection failure).
    fn exchange(
        &self,
        method: &str,
        path: &str,
        headers: &[(String, String)],
        body: &[u8],
    ) -> Result<(u16, String, Vec<u8>), String>;
}

/// How a client's requests reach its server.
#[derive(Clone)]
pub(super) enum Wire {
    /// Over the network (HTTP or HTTPS).
    Network(Http),
    /// To a server in this process ([`Client::in_process`]).
    InProcess(Arc<dyn Exchange>),
}

impl std::fmt::Debug for Wire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Wire::Network(http) => http.fmt(f),
            Wire::InProcess(_) => f.write_str("InProcess"),
        }
    }
}

impl Client {
    /// A client of the server `server` in this process, speaking as `auth`.
    /// Its base URL is `http://in-process` (what its errors name).
    pub fn in_process(server: Arc<dyn Exchange>, auth: Auth) -> Self {
        Self {
            base: "http://in-process".into(),
            wire: Wire::InProcess(server),
            auth,
            retry: RetryPolicy::default(),
            bytes_sent: Arc::default(),
            bytes_received: Arc::default(),
            requests_sent: Arc::default(),
            private_ca: false,
            allow_plain_http: false,
        }
    }
}
