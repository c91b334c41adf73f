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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ClientError;

    /// A server that answers every request with `status` and `body`.
    struct Answers(u16, Vec<u8>);

    impl Exchange for Answers {
        fn exchange(
            &self,
            _: &str,
            _: &str,
            _: &[(String, String)],
            _: &[u8],
        ) -> Result<(u16, String, Vec<u8>), String> {
            Ok((self.0, "text/plain; charset=utf-8".into(), self.1.clone()))
        }
    }

    /// The in-process wire holds answers to the same limits as the
    /// network's (a success over its request's limit is refused, an error
    /// is cut to the problem limit), and, crossing no network, lets a
    /// client speak as any identity.
    #[test]
    fn the_in_process_wire_keeps_the_answer_limits_and_takes_any_identity() {
        let client =
            |status, body| Client::in_process(Arc::new(Answers(status, body)), Auth::Anonymous);
        assert_eq!(client(200, b"ok".to_vec()).metrics().unwrap(), "ok");
        let huge = vec![b'x'; super::super::MAX_JSON_RESPONSE + 1];
        match client(200, huge.clone()).study("s") {
            Err(ClientError::Transport(m)) => assert!(m.contains("over the"), "{m}"),
            other => panic!("{:?}", other.map(|_| "a study")),
        }
        match client(404, huge).study("s") {
            Err(ClientError::Problem { problem, .. }) => {
                assert_eq!(problem.status, 404);
                assert!(problem.detail.len() <= 500, "{}", problem.detail.len());
            }
            other => panic!("{:?}", other.map(|_| "a study")),
        }
        let admin = client(200, Vec::new())
            .with_auth(Auth::Admin(zeroize::Zeroizing::new("t".into())))
            .unwrap();
        assert!(admin.member().is_none());
    }
}
