//! Issue 13, items 2, 4 and 5 against a real server on loopback, each test
//! written as the attack it stops (twice: SQLite and PostgreSQL, see
//! `support/databases.rs`): bodies refused from their headers before they
//! are read, the shared in-flight body budget, ids that cannot be probed
//! without credentials, `/metrics` for the administrator only, insecure
//! parameters checked per ceremony, duplicate and weak identity keys,
//! control characters escaped in errors, and the append-only audit trail.

use fedhe_api::signing::{
    fresh_nonce, now_ms, request_headers, request_message, HEADER_MEMBER, HEADER_NONCE,
    HEADER_SIGNATURE, HEADER_TIMESTAMP,
};
use fedhe_api::{AuditLog, Identity, Problem};
use fedhe_server::{start, Config, Running};
use reqwest::StatusCode;
use std::io::{Read, Write};
use std::time::{Duration, Instant};
use support::databases::{Kind, TestDb};

#[macro_use]
mod support {
    #[macro_use]
    pub mod databases;
}

const ADMIN: &str = "hardening-admin-token";

/// The parameters of the ceremonies these tests make.
fn toy_params() -> std::sync::Arc<fedhe_crypto::Params> {
    fedhe_crypto::ParameterSet::TOY_N1024
        .validate(fedhe_crypto::InsecurePolicy::Allow)
        .unwrap()
}

/// The exact length of alpha's public-key share.
fn key_share_len(params: &fedhe_crypto::Params) -> usize {
    fedhe_crypto::wire::public_key_share_len(params, &fedhe_crypto::MemberId::new("alpha").unwrap())
}

struct Server {
    running: Option<Running>,
    base: String,
    addr: String,
    http: reqwest::Client,
    db: TestDb,
    alpha: Identity,
}

impl Server {
    async fn start(kind: Kind, tune: impl FnOnce(&mut Config)) -> Self {
        let db = TestDb::new(kind);
        let mut config = Config {
            listen: "127.0.0.1:0".parse().unwrap(),
            database_url: db.url(),
            admin_token: ADMIN.into(),
            allow_insecure_params: true,
            max_upload_bytes: 4 << 20,
            max_inflight_body_bytes: 16 << 20,
            ..Config::default()
        };
        tune(&mut config);
        let running = start(config).await.unwrap();
        Self {
            base: format!("http://{}", running.addr),
            addr: running.addr.to_string(),
            running: Some(running),
            http: reqwest::Client::new(),
            db,
            alpha: Identity::generate(),
        }
    }

    async fn stop(mut self) {
        self.running.take().unwrap().shutdown().await.unwrap();
        drop(self.db);
    }

    /// Creates ceremony `id` (toy parameters) with `members`.
    async fn create_ceremony(
        &self,
        id: &str,
        members: &[(&str, String)],
        allow_insecure: bool,
    ) -> reqwest::Response {
        let spec = serde_json::json!({
            "id": id, "parameter_set": "toy-n1024", "allow_insecure": allow_insecure,
            "deadline_secs": 600,
            "admin_key": admin_identity().public_key_hex(),
            "members": members.iter().map(|(m, k)| serde_json::json!({"id": m, "identity_key": k}))
                .collect::<Vec<_>>(),
        });
        self.http
            .post(format!("{}/v1/ceremonies", self.base))
            .bearer_auth(ADMIN)
            .json(&spec)
            .send()
            .await
            .unwrap()
    }

    /// Ceremony `c1` with alpha, and study `s1` under it (signed by
    /// [`admin_identity`]).
    async fn ceremony_and_study(&self) {
        let r = self
            .create_ceremony("c1", &[("alpha", self.alpha.public_key_hex())], true)
            .await;
        assert_eq!(
            r.status(),
            StatusCode::CREATED,
            "{}",
            r.text().await.unwrap()
        );
        let r = self
            .http
            .post(format!("{}/v1/studies", self.base))
            .bearer_auth(ADMIN)
            .json(&fedhe_api::SignedStudySpec::sign(
                fedhe_api::StudySpec {
                    id: "s1".into(),
                    ceremony: "c1".into(),
                    algorithm: "sum".into(),
                    config: serde_json::Value::Null,
                    min_contributors: 1,
                    round_timeout_secs: 600,
                    decrypt_timeout_secs: 600,
                    bound: 100.0,
                    precision: Default::default(),
                    round_cap: None,
                },
                &admin_identity(),
            ))
            .send()
            .await
            .unwrap();
        assert_eq!(
            r.status(),
            StatusCode::CREATED,
            "{}",
            r.text().await.unwrap()
        );
    }

    /// `GET path` with the administrator's token.
    async fn admin_get(&self, path: &str) -> reqwest::Response {
        self.http
            .get(format!("{}{path}", self.base))
            .bearer_auth(ADMIN)
            .send()
            .await
            .unwrap()
    }

    /// Signature headers of `who` for a request with an empty body.
    fn signed(&self, who: &Identity, member: &str, method: &str, path: &str) -> String {
        self.signed_body(who, member, method, path, b"")
    }

    /// Signature headers of `who` for a request with `body`.
    fn signed_body(
        &self,
        who: &Identity,
        member: &str,
        method: &str,
        path: &str,
        body: &[u8],
    ) -> String {
        request_headers(member, method, path, body, |m| who.sign_hex(m))
            .iter()
            .map(|(name, value)| format!("{name}: {value}\r\n"))
            .collect()
    }

    /// Sends a request head (no body at all, whatever it declares) and reads
    /// the response: its status and how long it took. A server that waits
    /// for the body never answers, and the read times out after 10 s.
    async fn head_only(&self, head: String) -> (Option<u16>, Duration) {
        let (status, _, took) = self.head_answer(head).await;
        (status, took)
    }

    /// [`Self::head_only`] with the answer's body.
    async fn head_answer(&self, head: String) -> (Option<u16>, String, Duration) {
        let addr = self.addr.clone();
        tokio::task::spawn_blocking(move || {
            let started = Instant::now();
            let mut stream = std::net::TcpStream::connect(&addr).unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            stream.write_all(head.as_bytes()).unwrap();
            let mut buf = [0u8; 4096];
            let n = stream.read(&mut buf).unwrap_or(0);
            let text = String::from_utf8_lossy(&buf[..n]).into_owned();
            let status = text
                .split_whitespace()
                .nth(1)
                .and_then(|s| s.parse::<u16>().ok());
            let body = text
                .split_once("\r\n\r\n")
                .map(|(_, b)| b.to_string())
                .unwrap_or_default();
            (status, body, started.elapsed())
        })
        .await
        .unwrap()
    }
}

async fn problem(r: reqwest::Response) -> (StatusCode, Problem) {
    let status = r.status();
    (status, r.json().await.unwrap())
}

/// Attack: send the headers of a 100 MiB upload (unsigned, or signed by a
/// stranger, or chunked, or over the limit) and make the server buffer the
/// body before it finds out. Each is answered from its headers alone,
/// without one byte of body sent, within a second.
async fn bodies_are_refused_from_their_headers_before_they_are_read(kind: Kind) {
    let s = Server::start(kind, |_| {}).await;
    s.ceremony_and_study().await;
    let mallory = Identity::generate();
    let upload = "/v1/studies/s1/rounds/1/contributions/alpha";
    let key_share = "/v1/ceremonies/c1/public-key-shares/alpha";
    let commitment = "/v1/ceremonies/c1/commitments/alpha";
    let json_host = format!("host: {}\r\ncontent-type: application/json\r\n", s.addr);
    let host = format!(
        "host: {}\r\ncontent-type: application/octet-stream\r\n",
        s.addr
    );
    let cases = [
        (
            "unsigned",
            format!("PUT {upload} HTTP/1.1\r\n{host}content-length: 104857600\r\n\r\n"),
            401,
        ),
        (
            "signed by a stranger",
            format!(
                "PUT {upload} HTTP/1.1\r\n{host}content-length: 104857600\r\n{}\r\n",
                s.signed(&mallory, "mallory", "PUT", upload)
            ),
            401,
        ),
        (
            "a member, over the route's limit",
            format!(
                "PUT {upload} HTTP/1.1\r\n{host}content-length: 104857600\r\n{}\r\n",
                s.signed(&s.alpha, "alpha", "PUT", upload)
            ),
            413,
        ),
        (
            "a member, chunked",
            format!(
                "PUT {upload} HTTP/1.1\r\n{host}transfer-encoding: chunked\r\n{}\r\n",
                s.signed(&s.alpha, "alpha", "PUT", upload)
            ),
            411,
        ),
        (
            "a member, a public-key share of another size than the set's",
            format!(
                "PUT {key_share} HTTP/1.1\r\n{host}content-length: {}\r\n{}\r\n",
                key_share_len(&toy_params()) + 1,
                s.signed(&s.alpha, "alpha", "PUT", key_share)
            ),
            422,
        ),
        (
            "a member, a contribution to a round that has none yet",
            format!(
                "PUT {upload} HTTP/1.1\r\n{host}content-length: 1000\r\n{}\r\n",
                s.signed(&s.alpha, "alpha", "PUT", upload)
            ),
            404,
        ),
        (
            // Issue 45, finding 1: a known member's id, a forged signature
            // and a large body, sent slowly: refused from the headers (the
            // signature names the declared body digest), before one byte.
            "a member's id with a forged signature",
            format!(
                "PUT {commitment} HTTP/1.1\r\n{json_host}content-length: 200000\r\n{}\r\n",
                s.signed(&mallory, "alpha", "PUT", commitment)
            ),
            401,
        ),
        (
            "a bad bearer token on an admin route",
            format!(
                "POST /v1/ceremonies HTTP/1.1\r\n{host}authorization: Bearer nope\r\ncontent-length: 200000\r\n\r\n"
            ),
            401,
        ),
    ];
    for (what, head, expected) in cases {
        let (status, took) = s.head_only(head).await;
        assert_eq!(
            status,
            Some(expected),
            "{what}: answered {status:?} after {took:?}"
        );
        assert!(took < Duration::from_secs(2), "{what}: took {took:?}");
    }
    // Issue 45, finding 6: an outsider's forged request gets the same answer,
    // status and body, whether its ids exist (alpha in c1, s1) or not (c9,
    // s9); sizes and states are for authenticated callers only.
    for (real, unknown) in [
        (
            commitment.to_string(),
            "/v1/ceremonies/c9/commitments/alpha".to_string(),
        ),
        (
            upload.to_string(),
            "/v1/studies/s9/rounds/1/contributions/alpha".to_string(),
        ),
        (
            key_share.to_string(),
            "/v1/ceremonies/c9/public-key-shares/alpha".to_string(),
        ),
    ] {
        let ask = |path: &str| {
            format!(
                "PUT {path} HTTP/1.1\r\n{host}content-length: 1000\r\n{}\r\n",
                s.signed(&mallory, "alpha", "PUT", path)
            )
        };
        let (a, body_a, _) = s.head_answer(ask(&real)).await;
        let (b, body_b, _) = s.head_answer(ask(&unknown)).await;
        assert_eq!((a, &body_a), (b, &body_b), "{real} and {unknown}");
        assert_eq!(a, Some(401), "{body_a}");
    }
    s.stop().await;
}

/// Attack: hold the server's memory with bodies a member declares but sends
/// slowly. All bodies in flight share `max_inflight_body_bytes`: a second
/// request that would exceed it waits (half the slow-body deadline), then
/// gets 503, and is never read.
async fn bodies_in_flight_share_one_budget(kind: Kind) {
    // A public-key share is exactly this long; the budget holds one.
    let len = key_share_len(&toy_params());
    let s = Server::start(kind, |c| {
        c.max_upload_bytes = len;
        c.max_inflight_body_bytes = len;
        c.body_timeout_ms = 1500;
    })
    .await;
    s.ceremony_and_study().await;
    let path = "/v1/ceremonies/c1/public-key-shares/alpha";
    let head = |s: &Server| {
        format!(
            "PUT {path} HTTP/1.1\r\nhost: {}\r\ncontent-type: application/octet-stream\r\ncontent-length: {}\r\n{}\r\n",
            s.addr,
            len,
            s.signed(&s.alpha, "alpha", "PUT", path)
        )
    };
    // The first request takes the whole budget and trickles its body.
    let mut holder = std::net::TcpStream::connect(&s.addr).unwrap();
    holder.write_all(head(&s).as_bytes()).unwrap();
    holder.write_all(&[0u8; 1024]).unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (status, took) = s.head_only(head(&s)).await;
    assert_eq!(status, Some(503), "after {took:?}");
    // It waited for room (half the 1.5 s body deadline), then gave up.
    assert!(
        took >= Duration::from_millis(600) && took < Duration::from_secs(5),
        "{took:?}"
    );
    drop(holder);
    s.stop().await;
}

/// Attack: probe which ceremony and study ids exist (404 against 401)
/// without credentials, or with a key that is no member's; and read the
/// server's counters without the administrator's token.
async fn ids_cannot_be_probed_and_metrics_need_the_token(kind: Kind) {
    let s = Server::start(kind, |_| {}).await;
    s.ceremony_and_study().await;
    let mallory = Identity::generate();
    for (existing, missing) in [
        ("/v1/ceremonies/c1", "/v1/ceremonies/c9"),
        (
            "/v1/ceremonies/c1/transcript",
            "/v1/ceremonies/c9/transcript",
        ),
        ("/v1/studies/s1", "/v1/studies/s9"),
        ("/v1/studies/s1/rounds/1", "/v1/studies/s9/rounds/1"),
    ] {
        let mut answers = Vec::new();
        for path in [existing, missing] {
            let unsigned = problem(
                s.http
                    .get(format!("{}{path}", s.base))
                    .send()
                    .await
                    .unwrap(),
            );
            let ts = now_ms();
            let nonce = fresh_nonce();
            let sig = mallory.sign_hex(&request_message("GET", path, b"", ts, &nonce));
            let stranger = s
                .http
                .get(format!("{}{path}", s.base))
                .header(HEADER_MEMBER, "alpha")
                .header(HEADER_TIMESTAMP, ts.to_string())
                .header(HEADER_NONCE, nonce)
                .header(HEADER_SIGNATURE, sig)
                .send();
            let unknown_member = s
                .http
                .get(format!("{}{path}", s.base))
                .header(HEADER_MEMBER, "mallory")
                .header(HEADER_TIMESTAMP, ts.to_string())
                .header(HEADER_NONCE, fresh_nonce())
                .header(HEADER_SIGNATURE, "ab".repeat(64))
                .send();
            let (a, b, c) = (
                unsigned.await,
                problem(stranger.await.unwrap()).await,
                problem(unknown_member.await.unwrap()).await,
            );
            // Ids in the answer are the caller's own input; compare without them.
            let strip = |(st, p): (StatusCode, Problem)| {
                (st, p.detail.replace("c9", "c1").replace("s9", "s1"))
            };
            answers.push((strip(a), strip(b), strip(c)));
        }
        let (unsigned, stranger, unknown) = &answers[0];
        assert_eq!(
            unsigned.0,
            StatusCode::UNAUTHORIZED,
            "{existing}: {unsigned:?}"
        );
        assert_eq!(
            unknown.0,
            StatusCode::UNAUTHORIZED,
            "{existing}: {unknown:?}"
        );
        assert_eq!(
            stranger.0,
            StatusCode::UNAUTHORIZED,
            "{existing}: {stranger:?}"
        );
        // The same answers whether the id exists or not: unsigned, signed
        // with a wrong key under a real member's name, and an unknown member.
        assert_eq!(answers[0], answers[1], "{existing} vs {missing}");
    }
    let metrics = s
        .http
        .get(format!("{}/metrics", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(metrics.status(), StatusCode::UNAUTHORIZED);
    let metrics = s.admin_get("/metrics").await;
    assert_eq!(metrics.status(), StatusCode::OK);
    assert!(metrics
        .text()
        .await
        .unwrap()
        .contains("fedhe_http_responses_total"));
    s.stop().await;
}

/// Attack: on a server that allows insecure sets for the ceremonies that ask
/// for them, create a ceremony on the toy set without asking, after another
/// ceremony put the set in the parameter cache.
async fn insecure_parameters_are_checked_per_ceremony(kind: Kind) {
    let s = Server::start(kind, |_| {}).await;
    let key = s.alpha.public_key_hex();
    let r = s
        .create_ceremony("c1", &[("alpha", key.clone())], true)
        .await;
    assert_eq!(r.status(), StatusCode::CREATED);
    let (status, p) = problem(s.create_ceremony("c2", &[("alpha", key)], false).await).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{p:?}");
    assert!(p.detail.contains("toy-n1024"), "{}", p.detail);
    assert_eq!(
        s.admin_get("/v1/ceremonies/c2").await.status(),
        StatusCode::NOT_FOUND
    );
    s.stop().await;
}

/// Attack: one identity key for two members (one holder signs as both), or
/// a small-order key (all zeros, the identity point) under which signatures
/// can be forged. Refused at creation, naming the member; nothing created.
async fn duplicate_and_weak_identity_keys_are_refused_at_creation(kind: Kind) {
    let s = Server::start(kind, |_| {}).await;
    let key = s.alpha.public_key_hex();
    let mut identity_point = [0u8; 32];
    identity_point[0] = 1;
    let cases = [
        (
            vec![("alpha", key.clone()), ("beta", key.clone())],
            "identity key of beta",
        ),
        (
            vec![("alpha", key.clone()), ("gamma", "00".repeat(32))],
            "identity key of gamma",
        ),
        (
            vec![
                ("delta", hex::encode(identity_point)),
                ("alpha", key.clone()),
            ],
            "identity key of delta",
        ),
    ];
    for (members, needle) in cases {
        let (status, p) = problem(s.create_ceremony("c1", &members, true).await).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{members:?}: {p:?}");
        assert!(p.detail.contains(needle), "{members:?}: {}", p.detail);
    }
    assert_eq!(
        s.admin_get("/v1/ceremonies/c1").await.status(),
        StatusCode::NOT_FOUND
    );
    s.stop().await;
}

/// Attack: an id with terminal escape sequences, echoed into an error a
/// member's or an administrator's terminal prints.
async fn errors_escape_control_characters_of_the_input(kind: Kind) {
    let s = Server::start(kind, |_| {}).await;
    let r = s
        .admin_get("/v1/ceremonies/%1B%5B2J%1B%5D0%3Bpwned%07")
        .await;
    let (status, p) = problem(r).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(!p.detail.chars().any(char::is_control), "{:?}", p.detail);
    assert!(p.detail.contains("\\u{1b}[2J"), "{}", p.detail);
    let spec = serde_json::json!({
        "id": "bad\u{1b}[31mid", "parameter_set": "toy-n1024", "allow_insecure": true,
        "deadline_secs": 600, "admin_key": admin_identity().public_key_hex(),
        "members": [{"id": "alpha", "identity_key": s.alpha.public_key_hex()}],
    });
    let r = s
        .http
        .post(format!("{}/v1/ceremonies", s.base))
        .bearer_auth(ADMIN)
        .json(&spec)
        .send()
        .await
        .unwrap();
    let (status, p) = problem(r).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(!p.detail.chars().any(char::is_control), "{:?}", p.detail);
    assert!(p.detail.contains("\\u{1b}[31m"), "{}", p.detail);
    s.stop().await;
}

/// Attack: rewrite history. The audit trail is the administrator's to read,
/// records creations with their ids and hashes, and the store refuses to
/// update or delete its rows.
async fn the_audit_trail_is_admin_only_and_append_only(kind: Kind) {
    let s = Server::start(kind, |_| {}).await;
    s.ceremony_and_study().await;
    let url = format!("{}/v1/audit?ceremony=c1", s.base);
    assert_eq!(
        s.http.get(&url).send().await.unwrap().status(),
        StatusCode::UNAUTHORIZED
    );
    let log: AuditLog = s
        .admin_get("/v1/audit?ceremony=c1")
        .await
        .json()
        .await
        .unwrap();
    let actions: Vec<&str> = log.entries.iter().map(|e| e.action.as_str()).collect();
    assert_eq!(actions, ["ceremony.created", "study.created"], "{log:?}");
    assert_eq!(log.entries[0].actor, "admin");
    assert!(log.entries[0].detail.as_deref().unwrap().contains("alpha"));
    let study: AuditLog = s
        .admin_get("/v1/audit?study=s1")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(study.entries.len(), 1);
    assert_eq!(study.entries[0].action, "study.created");
    assert_eq!(study.entries[0].hash.as_deref().map(str::len), Some(64));
    // Straight to the database, past the server: the table refuses.
    sqlx::any::install_default_drivers();
    let mut conn = <sqlx::AnyConnection as sqlx::Connection>::connect(&s.db.url())
        .await
        .unwrap();
    for sql in ["UPDATE audit SET actor = 'mallory'", "DELETE FROM audit"] {
        let err = sqlx::query(sql).execute(&mut conn).await.unwrap_err();
        assert!(err.to_string().contains("append-only"), "{sql}: {err}");
    }
    drop(conn);
    let again: AuditLog = s
        .admin_get("/v1/audit?ceremony=c1")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(again, log);
    s.stop().await;
}

/// Issue 45, finding 12: a configured long-poll cap near `i64::MAX` and
/// `?wait=1e19` panicked a worker (the deadline `now + wait` overflowed);
/// the wait is clamped, and the answer comes as for any long poll that is
/// ready at once.
async fn a_huge_wait_is_clamped_instead_of_panicking_a_worker(kind: Kind) {
    let s = Server::start(kind, |c| c.max_wait_secs = i64::MAX as u64).await;
    s.ceremony_and_study().await;
    let asked = Instant::now();
    let r = s
        .http
        .get(format!(
            "{}/v1/ceremonies/c1?wait=1e19&phase=revealing",
            s.base
        ))
        .bearer_auth(ADMIN)
        .send()
        .await
        .expect("an answer, not a connection dropped by a panicking worker");
    assert_eq!(r.status(), StatusCode::OK);
    assert!(asked.elapsed() < Duration::from_secs(10));
    s.stop().await;
}

/// Issue 45, finding 4: 1,030 signed long polls by one member held every
/// connection slot, and `/healthz` and the other members were refused. A
/// caller holds at most `max_polls_per_caller` (16) long polls: the 17th is
/// refused at once (429, naming the count), a poll without `?wait=` is still
/// answered, the administrator's polls are its own, and a poll that ends
/// gives its slot back.
async fn one_callers_long_polls_are_capped(kind: Kind) {
    let s = Server::start(kind, |_| {}).await;
    s.ceremony_and_study().await;
    let phase = s.admin_get("/v1/ceremonies/c1").await;
    let phase: fedhe_api::CeremonyStatus = phase.json().await.unwrap();
    let phase = phase.phase.as_str();
    let poll = |wait: &str| {
        let path = format!("/v1/ceremonies/c1?wait={wait}&phase={phase}");
        let mut rb = s.http.get(format!("{}{path}", s.base));
        for line in s.signed(&s.alpha, "alpha", "GET", &path).lines() {
            let (k, v) = line.split_once(": ").unwrap();
            rb = rb.header(k, v);
        }
        rb.send()
    };
    let state = s.running.as_ref().unwrap().state.clone();
    let limit = state.config.max_polls_per_caller;
    assert_eq!(limit, 16);
    let held: Vec<_> = (0..limit).map(|_| tokio::spawn(poll("3"))).collect();
    let started = Instant::now();
    while state.polls.open("alpha") < limit {
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "the polls did not start"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let (status, body) = problem(poll("3").await.unwrap()).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body:?}");
    assert!(
        body.detail.contains("alpha has 16 long polls open"),
        "{body:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(poll("0").await.unwrap().status(), StatusCode::OK);
    let admin = s
        .http
        .get(format!(
            "{}/v1/ceremonies/c1?wait=0.2&phase={phase}",
            s.base
        ))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap();
    assert_eq!(admin.status(), StatusCode::OK);
    for h in held {
        assert_eq!(h.await.unwrap().unwrap().status(), StatusCode::OK);
    }
    assert_eq!(state.polls.open("alpha"), 0);
    assert_eq!(poll("0.1").await.unwrap().status(), StatusCode::OK);
    s.stop().await;
}

/// Attack (issue 45, item 1): a member holds connections with validly
/// signed bodies it trickles a byte at a time, as many as it likes. A body
/// must arrive at `min_body_bytes_per_sec` after the grace: a trickled one is
/// cut (408) after the grace plus its size at that rate, not at the 60 s
/// slow-body deadline; and a member has at most `max_uploads_per_member`
/// bodies being received, one more refused at once (429, naming the count)
/// while the other members' uploads go on.
async fn a_members_slow_bodies_are_cut_and_capped(kind: Kind) {
    let len = key_share_len(&toy_params());
    let s = Server::start(kind, |c| {
        c.max_uploads_per_member = 2;
        c.min_body_bytes_per_sec = 100_000;
    })
    .await;
    assert_eq!(
        s.running.as_ref().unwrap().state.config.body_timeout_ms,
        60_000
    );
    s.ceremony_and_study().await;
    let path = "/v1/ceremonies/c1/public-key-shares/alpha";
    let body = vec![0u8; len];
    let head = |s: &Server| {
        format!(
            "PUT {path} HTTP/1.1\r\nhost: {}\r\ncontent-type: application/octet-stream\r\ncontent-length: {len}\r\n{}\r\n",
            s.addr,
            s.signed_body(&s.alpha, "alpha", "PUT", path, &body)
        )
    };
    let trickle = |head: String| {
        let addr = s.addr.clone();
        std::thread::spawn(move || {
            let started = Instant::now();
            let mut stream = std::net::TcpStream::connect(&addr).unwrap();
            stream
                .set_read_timeout(Some(Duration::from_millis(200)))
                .unwrap();
            stream.write_all(head.as_bytes()).unwrap();
            let mut buf = [0u8; 4096];
            // One byte every 200 ms until the server answers (or 20 s).
            while started.elapsed() < Duration::from_secs(20) {
                if stream.write_all(&[0u8]).is_err() {
                    break;
                }
                match stream.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        let text = String::from_utf8_lossy(&buf[..n]).into_owned();
                        return (
                            text.split_whitespace().nth(1).map(str::to_string),
                            started.elapsed(),
                        );
                    }
                    Err(_) => {}
                }
            }
            (None, started.elapsed())
        })
    };
    let held: Vec<_> = (0..2).map(|_| trickle(head(&s))).collect();
    let uploads = s.running.as_ref().unwrap().state.uploads.clone();
    let started = Instant::now();
    while uploads.open("alpha") < 2 {
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "the uploads did not start"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // A third body of alpha's: refused from its headers, at once.
    let (status, answer, took) = s.head_answer(head(&s)).await;
    assert_eq!(status, Some(429), "{answer}");
    assert!(
        answer.contains("alpha has 2 uploads being received"),
        "{answer}"
    );
    assert!(took < Duration::from_secs(1), "{took:?}");
    // The trickled bodies are cut at the grace plus their size at the rate,
    // long before the slow-body deadline.
    let expected = fedhe_server::BODY_GRACE + Duration::from_secs_f64(len as f64 / 100_000.0);
    for h in held {
        let (status, took) = h.join().unwrap();
        assert_eq!(status.as_deref(), Some("408"), "after {took:?}");
        assert!(
            took >= expected - Duration::from_millis(300)
                && took < expected + Duration::from_secs(3),
            "cut after {took:?}, expected about {expected:?}"
        );
    }
    assert_eq!(uploads.open("alpha"), 0);
    // Alpha's slots are back: its real upload is taken.
    let r = s
        .http
        .put(format!("{}{path}", s.base))
        .header("content-type", "application/octet-stream");
    let mut r = r;
    for line in s.signed_body(&s.alpha, "alpha", "PUT", path, &body).lines() {
        let (k, v) = line.split_once(": ").unwrap();
        r = r.header(k, v);
    }
    let r = r.body(body.clone()).send().await.unwrap();
    assert_ne!(r.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_ne!(r.status(), StatusCode::REQUEST_TIMEOUT);
    s.stop().await;
}

on_both_backends!(
    async;
    a_members_slow_bodies_are_cut_and_capped,
    one_callers_long_polls_are_capped,
    a_huge_wait_is_clamped_instead_of_panicking_a_worker,
    bodies_are_refused_from_their_headers_before_they_are_read,
    bodies_in_flight_share_one_budget,
    ids_cannot_be_probed_and_metrics_need_the_token,
    insecure_parameters_are_checked_per_ceremony,
    duplicate_and_weak_identity_keys_are_refused_at_creation,
    errors_escape_control_characters_of_the_input,
    the_audit_trail_is_admin_only_and_append_only,
);

/// The administrator's signing identity (a fixed test key).
fn admin_identity() -> fedhe_api::Identity {
    fedhe_api::Identity::from_seed(&[42; 32])
}
