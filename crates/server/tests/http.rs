//! The server over real HTTP on loopback, each test twice: on an SQLite file
//! in a temporary folder and on a fresh PostgreSQL database (see
//! `support/databases.rs`; PostgreSQL needs `FEDHE_TEST_POSTGRES_URL`): a
//! whole ceremony and round, idempotent uploads, deadlines, restarts,
//! and the refusal of unsigned, replayed, stale, oversized and malformed
//! requests (each a 4xx problem+json that changes nothing).

use fedhe_api::signing::{
    contribution_statement, decode_fixed, fresh_nonce, now_ms, request_headers, request_message,
    round_commitment_statement, share_digest_statement, sum_digest_statement, upload_statement,
    HEADER_MEMBER, HEADER_NONCE, HEADER_SIGNATURE, HEADER_TIMESTAMP, HEADER_UPLOAD_SIGNATURE,
};
use fedhe_api::*;
use fedhe_crypto::{
    check_c1_aggregate, C1Carries, C1Commitment, CeremonyId, CollectivePublicKey, CombinedShare,
    CommonRandomPoly, ContributorDigest, DecryptionShare, EncryptedVector, FixedPointCodec,
    InsecurePolicy, MemberId, ParameterSet, Params, PublicKeyShare, SecretKeyShare, SumChallenge,
    WireObject,
};
use fedhe_ring::Csprng;
use fedhe_server::{start, Config, Running};
use reqwest::{Method, StatusCode};
use std::sync::Arc;
use support::databases::{Kind, TestDb};

#[macro_use]
mod support {
    #[macro_use]
    pub mod databases;
}

const ADMIN: &str = "test-admin-token";

struct Member {
    id: String,
    identity: Identity,
    secret: Option<SecretKeyShare>,
}

struct Harness {
    server: Option<Running>,
    base: String,
    http: reqwest::Client,
    db: TestDb,
    params: Arc<Params>,
    members: Vec<Member>,
    /// The administrator's signing identity.
    admin: Identity,
    /// Each study's spec hash.
    specs: std::sync::Mutex<std::collections::HashMap<String, String>>,
}

fn config(db: &TestDb) -> Config {
    Config {
        listen: "127.0.0.1:0".parse().unwrap(),
        database_url: db.url(),
        admin_token: ADMIN.into(),
        allow_insecure_params: true,
        sweep_interval_ms: 50,
        max_upload_bytes: 4 << 20,
        ..Config::default()
    }
}

impl Harness {
    async fn new(kind: Kind, names: &[&str]) -> Self {
        let db = TestDb::new(kind);
        let server = start(config(&db)).await.unwrap();
        let base = format!("http://{}", server.addr);
        let params = ParameterSet::TOY_N1024
            .validate(InsecurePolicy::Allow)
            .unwrap();
        let members = names
            .iter()
            .map(|n| Member {
                id: n.to_string(),
                identity: Identity::generate(),
                secret: None,
            })
            .collect();
        Self {
            server: Some(server),
            base,
            http: reqwest::Client::new(),
            db,
            params,
            members,
            admin: Identity::generate(),
            specs: Default::default(),
        }
    }

    async fn restart(&mut self) {
        self.server.take().unwrap().shutdown().await.unwrap();
        let mut cfg = config(&self.db);
        cfg.listen = self.base.trim_start_matches("http://").parse().unwrap();
        let server = start(cfg).await.unwrap();
        self.server = Some(server);
    }

    fn member(&self, id: &str) -> &Member {
        self.members.iter().find(|m| m.id == id).unwrap()
    }

    /// A request signed by `member` (or the admin if `None`).
    async fn send(
        &self,
        who: Option<&str>,
        method: Method,
        path: &str,
        body: Vec<u8>,
        content_type: &str,
        extra: &[(&str, String)],
    ) -> reqwest::Response {
        let mut rb = self
            .http
            .request(method.clone(), format!("{}{path}", self.base))
            .header("content-type", content_type);
        match who {
            None => rb = rb.bearer_auth(ADMIN),
            Some(m) => {
                let identity = &self.member(m).identity;
                for (name, value) in request_headers(m, method.as_str(), path, &body, |msg| {
                    identity.sign_hex(msg)
                }) {
                    rb = rb.header(name, value);
                }
            }
        }
        for (k, v) in extra {
            rb = rb.header(*k, v);
        }
        rb.body(body).send().await.unwrap()
    }

    /// An oversized upload sent the way a client that respects an early 413
    /// would: the signed headers with the full `Content-Length`, then only the
    /// first 64 KiB of the body, then the response is read. (Sending the whole
    /// body races the server closing the connection after its 413, which the
    /// client then sees as a broken pipe instead of the response.)
    async fn send_headers_then_read(
        &self,
        who: &str,
        method: Method,
        path: &str,
        body: Vec<u8>,
        content_type: &str,
        extra: &[(&str, String)],
    ) -> (u16, String, String) {
        use std::io::{Read, Write};
        let identity = &self.member(who).identity;
        let addr = self.base.trim_start_matches("http://").to_string();
        let mut head = format!(
            "{} {path} HTTP/1.1\r\nhost: {addr}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n",
            method.as_str(),
            body.len(),
        );
        for (name, value) in request_headers(who, method.as_str(), path, &body, |msg| {
            identity.sign_hex(msg)
        }) {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        for (k, v) in extra {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        tokio::task::spawn_blocking(move || {
            let mut stream = std::net::TcpStream::connect(&addr).unwrap();
            stream
                .set_read_timeout(Some(std::time::Duration::from_secs(20)))
                .unwrap();
            stream.write_all(head.as_bytes()).unwrap();
            // The server may already have answered and closed; that is fine.
            let _ = stream.write_all(&body[..body.len().min(64 << 10)]);
            let mut response = Vec::new();
            let _ = stream.read_to_end(&mut response);
            let text = String::from_utf8_lossy(&response).into_owned();
            let (head, rest) = text.split_once("\r\n\r\n").expect("a response head");
            let status: u16 = head.split_whitespace().nth(1).unwrap().parse().unwrap();
            let content_type = head
                .lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("content-type")
                        .then(|| v.trim().to_string())
                })
                .unwrap_or_default();
            let json = match (rest.find('{'), rest.rfind('}')) {
                (Some(a), Some(b)) => rest[a..=b].to_string(),
                _ => String::new(),
            };
            (status, content_type, json)
        })
        .await
        .unwrap()
    }

    async fn json<T: serde::de::DeserializeOwned>(
        &self,
        who: Option<&str>,
        method: Method,
        path: &str,
        body: Option<serde_json::Value>,
        expect: StatusCode,
    ) -> T {
        let bytes = body
            .map(|b| serde_json::to_vec(&b).unwrap())
            .unwrap_or_default();
        let r = self
            .send(who, method.clone(), path, bytes, "application/json", &[])
            .await;
        let status = r.status();
        let text = r.text().await.unwrap();
        assert_eq!(status, expect, "{method} {path}: {text}");
        serde_json::from_str(&text).unwrap()
    }

    /// Creates the ceremony and runs commit-then-reveal for every member.
    /// The spec of ceremony `id` of this harness's members (toy set).
    fn ceremony_spec(&self, id: &str) -> serde_json::Value {
        serde_json::json!({
            "id": id,
            "parameter_set": "toy-n1024",
            "allow_insecure": true,
            "deadline_secs": 600,
            "admin_key": self.admin.public_key_hex(),
            "members": self.members.iter().map(|m| serde_json::json!({
                "id": m.id, "identity_key": m.identity.public_key_hex()
            })).collect::<Vec<_>>(),
        })
    }

    /// `m`'s signed commitment to the public-key share whose hash is `hash`.
    async fn commit_key_share(&self, ceremony: &str, m: &Member, hash: [u8; 32]) {
        let sig = m.identity.sign_hex(&upload_statement(
            UploadKind::Commitment,
            ceremony,
            &m.id,
            0,
            &hash,
        ));
        let _: UploadReceipt = self
            .json(
                Some(&m.id),
                Method::PUT,
                &format!("/v1/ceremonies/{ceremony}/commitments/{}", m.id),
                Some(serde_json::json!({"share_hash": hex::encode(hash), "signature": sig})),
                StatusCode::CREATED,
            )
            .await;
    }

    async fn ceremony(&mut self, id: &str) -> CollectivePublicKey {
        let spec = self.ceremony_spec(id);
        let status: CeremonyStatus = self
            .json(
                None,
                Method::POST,
                "/v1/ceremonies",
                Some(spec.clone()),
                StatusCode::CREATED,
            )
            .await;
        assert_eq!(status.phase, CeremonyPhase::Committing);
        // Retrying the creation is idempotent.
        let _: CeremonyStatus = self
            .json(
                None,
                Method::POST,
                "/v1/ceremonies",
                Some(spec),
                StatusCode::OK,
            )
            .await;
        let ids: Vec<MemberId> = self
            .members
            .iter()
            .map(|m| MemberId::new(m.id.clone()).unwrap())
            .collect();
        let cid = CeremonyId::new(id).unwrap();
        let crs = CommonRandomPoly::for_ceremony(&self.params, &cid, &ids).unwrap();
        assert_eq!(hex::encode(crs.seed()), status.crs_seed);
        let mut rng = Csprng::from_u128_seed(7);
        let mut shares = Vec::new();
        for m in &mut self.members {
            let sk = SecretKeyShare::generate(
                &self.params,
                MemberId::new(m.id.clone()).unwrap(),
                &mut rng,
            );
            let pk = PublicKeyShare::generate(&self.params, &sk, &crs, &mut rng).unwrap();
            m.secret = Some(sk);
            shares.push(pk);
        }
        for (m, pk) in self.members.iter().zip(&shares) {
            let hash = *blake3::hash(&pk.to_bytes(&self.params)).as_bytes();
            self.commit_key_share(id, m, hash).await;
        }
        for (m, pk) in self.members.iter().zip(&shares) {
            let r = self
                .send(
                    Some(&m.id),
                    Method::PUT,
                    &format!("/v1/ceremonies/{id}/public-key-shares/{}", m.id),
                    pk.to_bytes(&self.params),
                    "application/octet-stream",
                    &[],
                )
                .await;
            assert_eq!(
                r.status(),
                StatusCode::CREATED,
                "{}",
                r.text().await.unwrap()
            );
        }
        // The last reveal's request may finish before the step that
        // completes the ceremony (one runs at a time; a sweep may hold it).
        let mut status: CeremonyStatus;
        let mut polls = 0;
        loop {
            status = self
                .json(
                    Some(&self.members[0].id),
                    Method::GET,
                    &format!("/v1/ceremonies/{id}"),
                    None,
                    StatusCode::OK,
                )
                .await;
            polls += 1;
            if status.phase != CeremonyPhase::Revealing || polls == 100 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        assert_eq!(status.phase, CeremonyPhase::Complete);
        let key = CollectivePublicKey::aggregate(&crs, &ids, &shares).unwrap();
        let served = self
            .send(
                Some(&self.members[1].id),
                Method::GET,
                &format!("/v1/ceremonies/{id}/collective-key"),
                vec![],
                "application/json",
                &[],
            )
            .await
            .bytes()
            .await
            .unwrap();
        assert_eq!(
            served.to_vec(),
            key.to_bytes(&self.params),
            "the server's key is the members' sum"
        );
        let transcript: Transcript = self
            .json(
                None,
                Method::GET,
                &format!("/v1/ceremonies/{id}/transcript"),
                None,
                StatusCode::OK,
            )
            .await;
        assert_eq!(Some(transcript.hash_hex()), status.transcript_hash);
        assert_eq!(
            transcript.collective_key_hash,
            blake3::hash(&served).to_hex().to_string()
        );
        key
    }

    async fn study(&self, id: &str, ceremony: &str, min: u32, round_secs: u64) {
        self.study_capped(id, ceremony, min, round_secs, None).await
    }

    /// As [`Self::study`], with a round cap.
    async fn study_capped(
        &self,
        id: &str,
        ceremony: &str,
        min: u32,
        round_secs: u64,
        round_cap: Option<u64>,
    ) {
        let spec = StudySpec {
            id: id.into(),
            ceremony: ceremony.into(),
            algorithm: "sum".into(),
            config: serde_json::Value::Null,
            min_contributors: min,
            round_timeout_secs: round_secs,
            decrypt_timeout_secs: 600,
            bound: 100.0,
            precision: Default::default(),
            round_cap,
        };
        let signed = SignedStudySpec::sign(spec, &self.admin);
        let status: StudyStatus = self
            .json(
                None,
                Method::POST,
                "/v1/studies",
                Some(serde_json::to_value(&signed).unwrap()),
                StatusCode::CREATED,
            )
            .await;
        assert_eq!(status.spec_hash, signed.spec.hash_hex());
        assert_eq!(status.admin_signature, signed.signature);
        self.specs
            .lock()
            .unwrap()
            .insert(id.into(), status.spec_hash);
    }

    /// `who` commits to `bytes` (a contribution of `values` values).
    async fn commit(
        &self,
        who: &str,
        study: &str,
        round: u64,
        bytes: &[u8],
        values: u64,
    ) -> reqwest::Response {
        let spec = self.specs.lock().unwrap()[study].clone();
        let hash = blake3::hash(bytes);
        let sig = self
            .member(who)
            .identity
            .sign_hex(&round_commitment_statement(
                study,
                who,
                round,
                hash.as_bytes(),
                values,
                &spec,
                &c1_hash_of(bytes),
            ));
        self.send(
            Some(who),
            Method::PUT,
            &format!("/v1/studies/{study}/rounds/{round}/commitments/{who}"),
            serde_json::to_vec(&RoundCommitment {
                hash: hash.to_hex().to_string(),
                values,
                c1_commitment_hash: hex::encode(c1_hash_of(bytes)),
                signature: sig,
            })
            .unwrap(),
            "application/json",
            &[],
        )
        .await
    }

    /// The round's commitment list as `who` sees it.
    async fn commitments(&self, who: &str, study: &str, round: u64) -> CommitmentList {
        self.json(
            Some(who),
            Method::GET,
            &format!("/v1/studies/{study}/rounds/{round}/commitments"),
            None,
            StatusCode::OK,
        )
        .await
    }

    /// Every `(member, bytes, values)` commits, then (the list frozen) reveals.
    async fn contribute(&self, study: &str, round: u64, all: &[(&str, Vec<u8>, u64)]) {
        for (who, bytes, values) in all {
            let r = self.commit(who, study, round, bytes, *values).await;
            assert_eq!(
                r.status(),
                StatusCode::CREATED,
                "{}",
                r.text().await.unwrap()
            );
        }
        for (who, bytes, _) in all {
            let r = self
                .upload(who, "contributions", study, round, bytes.clone())
                .await;
            assert_eq!(
                r.status(),
                StatusCode::CREATED,
                "{}",
                r.text().await.unwrap()
            );
        }
    }

    /// `who`'s signature of the upload statement of `bytes`: a reveal
    /// against the round's frozen commitment list, or a decryption share.
    async fn upload_signature(
        &self,
        who: &str,
        what: &str,
        study: &str,
        round: u64,
        bytes: &[u8],
    ) -> String {
        let hash = blake3::hash(bytes);
        let statement = if what == "contributions" {
            // The freeze may be made by the deadline sweep just after the
            // last commitment was acknowledged: wait for it a little.
            let mut list = self.commitments(who, study, round).await;
            for _ in 0..50 {
                if list.list_hash.is_some() {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                list = self.commitments(who, study, round).await;
            }
            contribution_statement(
                study,
                who,
                round,
                hash.as_bytes(),
                list.list_hash.as_deref().unwrap_or("not-frozen"),
            )
        } else {
            upload_statement(
                UploadKind::DecryptionShare,
                study,
                who,
                round,
                hash.as_bytes(),
            )
        };
        self.member(who).identity.sign_hex(&statement)
    }

    fn encrypt(&self, key: &CollectivePublicKey, values: &[f64], seed: u128) -> Vec<u8> {
        let codec = FixedPointCodec::new(&self.params, self.members.len(), 100.0).unwrap();
        let mut rng = Csprng::from_u128_seed(seed);
        EncryptedVector::encrypt(&self.params, key, &codec, values, &mut rng)
            .unwrap()
            .to_bytes(&self.params)
    }

    async fn upload(
        &self,
        who: &str,
        what: &str,
        study: &str,
        round: u64,
        bytes: Vec<u8>,
    ) -> reqwest::Response {
        let sig = self.upload_signature(who, what, study, round, &bytes).await;
        self.send(
            Some(who),
            Method::PUT,
            &format!("/v1/studies/{study}/rounds/{round}/{what}/{who}"),
            bytes,
            "application/octet-stream",
            &[(HEADER_UPLOAD_SIGNATURE, sig)],
        )
        .await
    }

    async fn round(&self, study: &str, round: u64) -> RoundStatus {
        self.json(
            None,
            Method::GET,
            &format!("/v1/studies/{study}/rounds/{round}"),
            None,
            StatusCode::OK,
        )
        .await
    }

    /// Every member fetches the aggregate and sends its decryption share.
    async fn decrypt(&self, study: &str, round: u64, who: &[&str]) {
        let agg = self
            .send(
                Some(who[0]),
                Method::GET,
                &format!("/v1/studies/{study}/rounds/{round}/aggregate?wait=10"),
                vec![],
                "application/json",
                &[],
            )
            .await;
        assert_eq!(agg.status(), StatusCode::OK);
        let agg = EncryptedVector::from_bytes(&self.params, &agg.bytes().await.unwrap()).unwrap();
        let mut rng = Csprng::from_u128_seed(99);
        for m in who {
            let share = DecryptionShare::generate(
                &self.params,
                self.member(m).secret.as_ref().unwrap(),
                &agg,
                &mut rng,
            )
            .unwrap();
            let r = self
                .upload(
                    m,
                    "decryption-shares",
                    study,
                    round,
                    share.to_bytes(&self.params),
                )
                .await;
            assert_eq!(
                r.status(),
                StatusCode::CREATED,
                "{}",
                r.text().await.unwrap()
            );
        }
    }
}

async fn assert_problem(r: reqwest::Response, status: StatusCode, needle: &str) -> Problem {
    assert_eq!(r.status(), status);
    assert_eq!(
        r.headers().get("content-type").unwrap(),
        "application/problem+json"
    );
    let p: Problem = r.json().await.unwrap();
    assert_eq!(p.status, status.as_u16());
    assert!(
        p.detail.contains(needle),
        "detail {:?} lacks {needle:?}",
        p.detail
    );
    p
}

/// A 409 of a round's route that says the round's state (issue 47: the
/// member reads it from the answer, with no GET of the round after it):
/// `state`, and whether the round holds the caller's own upload for the
/// slot.
async fn assert_round_conflict(
    r: reqwest::Response,
    needle: &str,
    state: RoundState,
    holds_yours: bool,
) -> RoundConflict {
    let p = assert_problem(r, StatusCode::CONFLICT, needle).await;
    let round = p
        .round
        .unwrap_or_else(|| panic!("no round state in {:?}", p.detail));
    assert_eq!(
        (round.state, round.holds_yours),
        (state, holds_yours),
        "{round:?}"
    );
    round
}

/// `GET .../{what}?signatures=` of round 1 of study s1 (issue 16): the
/// entries of the list under `key` of the answer with every signature, each
/// with its signature only where its member is named, and nothing else
/// changed; a malformed selection is refused by name.
async fn check_signature_selection(h: &Harness, what: &str, key: &str, entries: usize) {
    let path = format!("/v1/studies/s1/rounds/1/{what}");
    let list = |query: &'static str| {
        let url = format!("{path}{query}");
        async move {
            let got: serde_json::Value = h
                .json(Some("beta"), Method::GET, &url, None, StatusCode::OK)
                .await;
            got[key].as_array().unwrap().clone()
        }
    };
    let full = list("").await;
    assert_eq!(full.len(), entries, "{what}");
    for (query, signed) in [
        ("?signatures=none", vec![]),
        ("?signatures=beta", vec!["beta"]),
        ("?signatures=alpha,gamma", vec!["alpha", "gamma"]),
        ("?signatures=all", vec!["alpha", "beta", "gamma"]),
    ] {
        let got = list(query).await;
        assert_eq!(got.len(), full.len(), "{what}{query}");
        for (g, f) in got.iter().zip(&full) {
            let member = f["member"].as_str().unwrap();
            assert_eq!(f["signature"].as_str().unwrap().len(), 128);
            let mut unsigned = f.clone();
            unsigned.as_object_mut().unwrap().remove("signature");
            if signed.contains(&member) {
                assert_eq!(g, f, "{what}{query}");
            } else {
                assert_eq!(g, &unsigned, "{what}{query}: {member} kept its signature");
            }
        }
    }
    // `?members=`: only the named members' entries (those listed).
    for (query, members, signed) in [
        ("?members=beta", vec!["beta"], true),
        ("?members=alpha,gamma", vec!["alpha", "gamma"], true),
        (
            "?members=gamma,alpha&signatures=none",
            vec!["alpha", "gamma"],
            false,
        ),
        ("?members=omega", vec![], true),
    ] {
        let got = list(query).await;
        let expected: Vec<serde_json::Value> = full
            .iter()
            .filter(|f| members.contains(&f["member"].as_str().unwrap()))
            .map(|f| {
                let mut f = f.clone();
                if !signed {
                    f.as_object_mut().unwrap().remove("signature");
                }
                f
            })
            .collect();
        assert_eq!(got, expected, "{what}{query}");
    }
    // `Accept: application/vnd.fedhe.list`: the same lists, compact.
    for query in [
        "",
        "?signatures=none",
        "?members=alpha,gamma&signatures=alpha",
    ] {
        let url = format!("{path}{query}");
        let json: serde_json::Value = h
            .json(Some("beta"), Method::GET, &url, None, StatusCode::OK)
            .await;
        let r = h
            .send(
                Some("beta"),
                Method::GET,
                &url,
                Vec::new(),
                "application/json",
                &[("accept", format!("text/plain, {COMPACT_LIST};q=0.9"))],
            )
            .await;
        assert_eq!(r.status(), StatusCode::OK, "{what}{query}");
        assert_eq!(
            r.headers()["content-type"].to_str().unwrap(),
            COMPACT_LIST,
            "{what}{query}"
        );
        let bytes = r.bytes().await.unwrap();
        assert!(bytes.len() < serde_json::to_vec(&json).unwrap().len() / 2 + 64);
        let compact = match what {
            "contributions" => {
                serde_json::to_value(ContributionList::from_compact(&bytes).unwrap())
            }
            "commitments" => serde_json::to_value(CommitmentList::from_compact(&bytes).unwrap()),
            "decryption-shares" => {
                serde_json::to_value(DecryptionShareList::from_compact(&bytes).unwrap())
            }
            _ => serde_json::to_value(SumDigestList::from_compact(&bytes).unwrap()),
        }
        .unwrap();
        assert_eq!(compact, json, "{what}{query}");
    }
    // Not asked for, or refused with q=0: JSON.
    for accept in [
        "application/json",
        "application/vnd.fedhe.list;q=0, application/json",
    ] {
        let r = h
            .send(
                Some("beta"),
                Method::GET,
                &path,
                Vec::new(),
                "application/json",
                &[("accept", accept.to_string())],
            )
            .await;
        assert_eq!(r.status(), StatusCode::OK, "{what}: {accept}");
        assert_eq!(
            r.headers()["content-type"].to_str().unwrap(),
            "application/json",
            "{what}: {accept}"
        );
    }
    for bad in [
        "members=beta,",
        "members=",
        "signatures=beta,",
        "signatures=be%20ta",
        "signatures=",
    ] {
        assert_problem(
            h.send(
                Some("beta"),
                Method::GET,
                &format!("{path}?{bad}"),
                Vec::new(),
                "application/json",
                &[],
            )
            .await,
            StatusCode::BAD_REQUEST,
            bad.split('=').next().unwrap(),
        )
        .await;
    }
}

async fn a_round_runs_end_to_end_over_http(kind: Kind) {
    let mut h = Harness::new(kind, &["alpha", "beta", "gamma"]).await;
    let key = h.ceremony("c1").await;
    h.study("s1", "c1", 3, 600).await;
    let r: RoundStatus = h
        .json(
            Some("alpha"),
            Method::PUT,
            "/v1/studies/s1/rounds/1",
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(
        (r.state, r.received, r.members),
        (RoundState::Committing, 0, 3)
    );
    let inputs = [
        vec![1.5, -2.0, 3.25],
        vec![0.5, 4.0, -1.0],
        vec![-3.0, 1.0, 0.125],
    ];
    let names = ["alpha", "beta", "gamma"];
    let all: Vec<(&str, Vec<u8>, u64)> = names
        .iter()
        .zip(&inputs)
        .enumerate()
        .map(|(i, (m, v))| (*m, h.encrypt(&key, v, i as u128 + 1), 3))
        .collect();
    let first = all[0].1.clone();
    // Before the list is frozen, nothing can be revealed.
    assert_eq!(
        h.commit("alpha", "s1", 1, &first, 3).await.status(),
        StatusCode::CREATED
    );
    assert_problem(
        h.upload("alpha", "contributions", "s1", 1, first.clone())
            .await,
        StatusCode::CONFLICT,
        "only once the commitments are frozen",
    )
    .await;
    // A commitment is idempotent; another one for the same slot is refused.
    assert_eq!(
        h.commit("alpha", "s1", 1, &first, 3).await.status(),
        StatusCode::OK
    );
    assert_round_conflict(
        h.commit("alpha", "s1", 1, b"other", 3).await,
        "different",
        RoundState::Committing,
        true,
    )
    .await;
    h.contribute("s1", 1, &all[1..]).await;
    assert_eq!(
        h.round("s1", 1).await.state,
        RoundState::Collecting,
        "alpha has not revealed"
    );
    let frozen = h.commitments("beta", "s1", 1).await;
    assert_eq!(frozen.commitments.len(), 3);
    assert_eq!(frozen.values, Some(3));
    // The aggregate is not there yet; the answer says why.
    assert_round_conflict(
        h.send(
            Some("gamma"),
            Method::GET,
            "/v1/studies/s1/rounds/1/aggregate",
            vec![],
            "application/json",
            &[],
        )
        .await,
        "no aggregate yet",
        RoundState::Collecting,
        false,
    )
    .await;
    // No contribution can be read before the aggregate exists.
    assert_problem(
        h.send(
            Some("gamma"),
            Method::GET,
            "/v1/studies/s1/rounds/1/contributions/beta",
            vec![],
            "application/json",
            &[],
        )
        .await,
        StatusCode::CONFLICT,
        "only once the aggregate exists",
    )
    .await;
    let r = h
        .upload("alpha", "contributions", "s1", 1, first.clone())
        .await;
    assert_eq!(r.status(), StatusCode::CREATED);
    // Idempotent: the same bytes again are 200; different bytes 409.
    let again = h
        .upload("alpha", "contributions", "s1", 1, first.clone())
        .await;
    assert_eq!(again.status(), StatusCode::OK);
    let other = h.encrypt(&key, &[0.0, 0.0, 0.0], 42);
    assert_problem(
        h.upload("alpha", "contributions", "s1", 1, other).await,
        StatusCode::CONFLICT,
        "different",
    )
    .await;
    let list: ContributionList = h
        .json(
            Some("beta"),
            Method::GET,
            "/v1/studies/s1/rounds/1/contributions",
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(list.contributions.len(), 3);
    assert_eq!(list.state, RoundState::Decrypting);
    // `?signatures=` (issue 16): the same entries, with only the named
    // members' upload signatures; a malformed selection is refused by name.
    check_signature_selection(&h, "contributions", "contributions", 3).await;
    check_signature_selection(&h, "commitments", "commitments", 3).await;
    // Sum digests: a contributor signs the digest of its own contribution on
    // the challenge of this aggregate and list; the server checks the
    // statement against what it holds, and the digest's length.
    let aggregate_hash: [u8; 32] =
        decode_fixed(list.aggregate_hash.as_deref().unwrap(), "hash").unwrap();
    let entries = list.entries_hash("s1", 1);
    let challenge = SumChallenge::derive(&h.params, "s1", 1, &entries, &aggregate_hash);
    // A contributor's digest: its sum digest, then its c1 commitment.
    let digest_of = |bytes: &[u8]| {
        let v = EncryptedVector::from_bytes(&h.params, bytes).unwrap();
        ContributorDigest {
            sum: challenge.digest(&h.params, &v),
            c1: C1Commitment::commit(&h.params, &v),
        }
        .to_bytes()
    };
    let own = |who: &str| all.iter().find(|(m, _, _)| *m == who).unwrap().1.clone();
    // The digest statement names the frozen commitment list (issue 16), so
    // it says all the reveal says.
    let frozen_list = h.commitments("alpha", "s1", 1).await.list_hash.unwrap();
    let put_digest_on =
        |who: &'static str, digest: Vec<u8>, signed_aggregate: [u8; 32], signed_list: &str| {
            let signature = h.member(who).identity.sign_hex(&sum_digest_statement(
                "s1",
                who,
                1,
                blake3::hash(&own(who)).as_bytes(),
                signed_list,
                &entries,
                &signed_aggregate,
                &digest,
            ));
            let h = &h;
            async move {
                h.send(
                    Some(who),
                    Method::PUT,
                    &format!("/v1/studies/s1/rounds/1/sum-digests/{who}"),
                    digest,
                    "application/octet-stream",
                    &[(HEADER_UPLOAD_SIGNATURE, signature)],
                )
                .await
            }
        };
    let put_digest = |who: &'static str, digest: Vec<u8>, signed_aggregate: [u8; 32]| {
        put_digest_on(who, digest, signed_aggregate, &frozen_list)
    };
    let alpha_digest = digest_of(&all[0].1);
    // Signed naming another commitment list: refused.
    assert_problem(
        put_digest_on(
            "alpha",
            alpha_digest.clone(),
            aggregate_hash,
            &"0".repeat(64),
        )
        .await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "does not verify",
    )
    .await;
    let r = put_digest("alpha", alpha_digest.clone(), aggregate_hash).await;
    assert_eq!(
        r.status(),
        StatusCode::CREATED,
        "{}",
        r.text().await.unwrap()
    );
    let r = put_digest("alpha", alpha_digest.clone(), aggregate_hash).await;
    assert_eq!(r.status(), StatusCode::OK);
    // Signed for another aggregate: refused.
    assert_problem(
        put_digest("beta", digest_of(&all[1].1), [7; 32]).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "does not verify",
    )
    .await;
    // Not a digest of this parameter set's length: refused, nothing stored.
    let r = put_digest("beta", vec![1, 2, 3], aggregate_hash).await;
    assert!(r.status().is_client_error(), "{}", r.status());
    let digests: SumDigestList = h
        .json(
            Some("gamma"),
            Method::GET,
            "/v1/studies/s1/rounds/1/sum-digests?count=1&wait=5",
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(digests.digests.len(), 1);
    assert_eq!(digests.digests[0].member, "alpha");
    assert_eq!(digests.digests[0].digest, hex::encode(&alpha_digest));
    assert_eq!(digests.aggregate_hash, list.aggregate_hash);
    check_signature_selection(&h, "sum-digests", "digests", 1).await;
    // The other two digests. The list was asked for whole above, in both
    // encodings, while it lacked them: it is served with all three now (a
    // list missing digests is never kept), and the same whatever is asked.
    for who in ["beta", "gamma"] {
        let r = put_digest(who, digest_of(&own(who)), aggregate_hash).await;
        assert_eq!(
            r.status(),
            StatusCode::CREATED,
            "{}",
            r.text().await.unwrap()
        );
    }
    check_signature_selection(&h, "sum-digests", "digests", 3).await;
    // Complete, it can no longer change and is kept (issue 16: every member
    // reads it): a row changed behind the server's back (nothing in it
    // does) is not read again, whole or sampled.
    let complete: SumDigestList = h
        .json(
            Some("gamma"),
            Method::GET,
            "/v1/studies/s1/rounds/1/sum-digests",
            None,
            StatusCode::OK,
        )
        .await;
    {
        sqlx::any::install_default_drivers();
        let db = sqlx::AnyPool::connect(&h.db.url()).await.unwrap();
        sqlx::query("UPDATE sum_digests SET signature = $1 WHERE member = 'beta'")
            .bind("00".repeat(64))
            .execute(&db)
            .await
            .unwrap();
        db.close().await;
    }
    for query in ["", "?signatures=all", "?members=beta"] {
        let served: SumDigestList = h
            .json(
                Some("alpha"),
                Method::GET,
                &format!("/v1/studies/s1/rounds/1/sum-digests{query}"),
                None,
                StatusCode::OK,
            )
            .await;
        let expected: Vec<_> = complete
            .digests
            .iter()
            .filter(|d| query != "?members=beta" || d.member == "beta")
            .cloned()
            .collect();
        assert_eq!(served.digests, expected, "sum-digests{query}");
    }
    // The aggregate's carries, served beside it, open the sum of the three
    // contributions' c1 commitments (fedhe_crypto::c1_commitment), and not
    // of two of them.
    let r = h
        .send(
            Some("gamma"),
            Method::GET,
            "/v1/studies/s1/rounds/1/aggregate-carries",
            vec![],
            "application/json",
            &[],
        )
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    let carries = C1Carries::from_bytes(&h.params, &r.bytes().await.unwrap()).unwrap();
    let served = h
        .send(
            Some("gamma"),
            Method::GET,
            "/v1/studies/s1/rounds/1/aggregate",
            vec![],
            "application/json",
            &[],
        )
        .await;
    let aggregate = EncryptedVector::from_bytes(&h.params, &served.bytes().await.unwrap()).unwrap();
    let commitments: Vec<C1Commitment> = all
        .iter()
        .map(|(_, bytes, _)| {
            C1Commitment::commit(
                &h.params,
                &EncryptedVector::from_bytes(&h.params, bytes).unwrap(),
            )
        })
        .collect();
    check_c1_aggregate(&h.params, &aggregate, &carries, &commitments).unwrap();
    assert!(check_c1_aggregate(&h.params, &aggregate, &carries, &commitments[1..]).is_err());
    h.decrypt("s1", 1, &["alpha", "beta", "gamma"]).await;
    let result: RoundResult = h
        .json(
            Some("gamma"),
            Method::GET,
            "/v1/studies/s1/rounds/1/result?wait=10",
            None,
            StatusCode::OK,
        )
        .await;
    // The result carries no value: the server holds none.
    let text = serde_json::to_string(&result).unwrap();
    assert!(!text.contains("values"), "{text}");
    assert_eq!(Some(result.aggregate_hash.clone()), list.aggregate_hash);
    // The result names the contribution list by its hash (not its n rows).
    assert_eq!(
        result.contribution_entries_hash,
        Some(hex::encode(list.entries_hash("s1", 1)))
    );
    // The combined share D is published with its hash; it is the sum of the
    // three shares (summed here) and C0 + D decodes to the published values.
    let get_bytes = |path: String| {
        let h = &h;
        async move {
            let r = h
                .send(
                    Some("gamma"),
                    Method::GET,
                    &path,
                    vec![],
                    "application/json",
                    &[],
                )
                .await;
            assert_eq!(r.status(), StatusCode::OK, "{path}");
            r.bytes().await.unwrap().to_vec()
        }
    };
    let combined = get_bytes("/v1/studies/s1/rounds/1/combined-share".into()).await;
    assert_eq!(
        result.combined_hash.as_deref(),
        Some(blake3::hash(&combined).to_hex().as_str())
    );
    let aggregate = EncryptedVector::from_bytes(
        &h.params,
        &get_bytes("/v1/studies/s1/rounds/1/aggregate".into()).await,
    )
    .unwrap();
    let d = CombinedShare::from_bytes(&h.params, &combined, aggregate.ciphertexts().len()).unwrap();
    let mut shares = Vec::new();
    for m in ["alpha", "beta", "gamma"] {
        shares.push(get_bytes(format!("/v1/studies/s1/rounds/1/decryption-shares/{m}")).await);
    }
    let decoded: Vec<DecryptionShare> = shares
        .iter()
        .map(|b| DecryptionShare::from_bytes(&h.params, b).unwrap())
        .collect();
    let mut sum: Vec<_> = decoded[0].polys().to_vec();
    for s in &decoded[1..] {
        for (a, b) in sum.iter_mut().zip(s.polys()) {
            a.add_assign(b).unwrap();
        }
    }
    assert_eq!(d.polys(), &sum[..]);
    // These test shares are not blinded, so C0 + D decodes here to the sum
    // (members blind theirs: fedhe_crypto::result_key).
    let codec = FixedPointCodec::from_info(&h.params, aggregate.encoding()).unwrap();
    let values = codec
        .decode(&d.decrypt(&aggregate).unwrap(), aggregate.len())
        .unwrap();
    for (got, want) in values.iter().zip([-1.0, 3.0, 2.375]) {
        assert!((got - want).abs() < 1e-6, "{values:?}");
    }
    // Share digests: a share maker signs the digest of its own share on the
    // challenge of D and the share list; the server checks the statement.
    let share_list: DecryptionShareList = h
        .json(
            Some("gamma"),
            Method::GET,
            "/v1/studies/s1/rounds/1/decryption-shares",
            None,
            StatusCode::OK,
        )
        .await;
    let share_entries = share_list.entries_hash("s1", 1, &[]);
    // The result names the three shares combined by the list's hash.
    assert_eq!(share_list.shares.len(), 3);
    check_signature_selection(&h, "decryption-shares", "shares", 3).await;
    assert_eq!(result.share_entries_hash, Some(hex::encode(share_entries)));
    let combined_hash = *blake3::hash(&combined).as_bytes();
    let share_challenge = SumChallenge::derive_for_shares(
        &h.params,
        "s1",
        1,
        &share_entries,
        &combined_hash,
        &aggregate_hash,
    );
    let put_share_digest =
        |i: usize, who: &'static str, digest: Vec<u8>, signed_combined: [u8; 32]| {
            let signature = h.member(who).identity.sign_hex(&share_digest_statement(
                "s1",
                who,
                1,
                blake3::hash(&shares[i]).as_bytes(),
                &share_entries,
                &signed_combined,
                &aggregate_hash,
                &[],
                &digest,
            ));
            let h = &h;
            async move {
                h.send(
                    Some(who),
                    Method::PUT,
                    &format!("/v1/studies/s1/rounds/1/share-digests/{who}"),
                    digest,
                    "application/octet-stream",
                    &[(HEADER_UPLOAD_SIGNATURE, signature)],
                )
                .await
            }
        };
    let alpha_share_digest = share_challenge
        .digest_polys(&h.params, decoded[0].polys())
        .to_bytes();
    let r = put_share_digest(0, "alpha", alpha_share_digest.clone(), combined_hash).await;
    assert_eq!(r.status(), StatusCode::CREATED);
    let r = put_share_digest(0, "alpha", alpha_share_digest.clone(), combined_hash).await;
    assert_eq!(r.status(), StatusCode::OK);
    // Signed for another combined share: refused.
    let beta_share_digest = share_challenge
        .digest_polys(&h.params, decoded[1].polys())
        .to_bytes();
    assert_problem(
        put_share_digest(1, "beta", beta_share_digest, [7; 32]).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "does not verify",
    )
    .await;
    let share_digests: SumDigestList = h
        .json(
            Some("gamma"),
            Method::GET,
            "/v1/studies/s1/rounds/1/share-digests?count=1&wait=5",
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(share_digests.digests.len(), 1);
    assert_eq!(share_digests.digests[0].member, "alpha");
    assert_eq!(
        share_digests.digests[0].digest,
        hex::encode(&alpha_share_digest)
    );
    // The next round opens; a round beyond it does not.
    let _: RoundStatus = h
        .json(
            None,
            Method::PUT,
            "/v1/studies/s1/rounds/2",
            None,
            StatusCode::OK,
        )
        .await;
    let r = h
        .send(
            None,
            Method::PUT,
            "/v1/studies/s1/rounds/4",
            vec![],
            "application/json",
            &[],
        )
        .await;
    assert_problem(r, StatusCode::CONFLICT, "latest round is 2").await;
    // Every state change of the round is in the audit trail, in order, with
    // who did it and the hashes; the refused upload (409) is not.
    let audit: AuditLog = h
        .json(
            None,
            Method::GET,
            "/v1/audit?study=s1",
            None,
            StatusCode::OK,
        )
        .await;
    let trail: Vec<(&str, &str, Option<u64>)> = audit
        .entries
        .iter()
        .map(|e| (e.action.as_str(), e.actor.as_str(), e.round))
        .collect();
    let mut expected = vec![
        ("study.created", "admin", None),
        ("round.opened", "alpha", Some(1)),
    ];
    for m in ["alpha", "beta", "gamma"] {
        expected.push(("round.commitment_accepted", m, Some(1)));
    }
    expected.push(("round.commitments_frozen", "server", Some(1)));
    // alpha revealed last (the test first checked that it could not reveal early).
    for m in ["beta", "gamma", "alpha"] {
        expected.push(("contribution.accepted", m, Some(1)));
    }
    expected.push(("round.aggregated", "server", Some(1)));
    // Every contributor's digest; beta's two refused ones left no trace.
    for m in ["alpha", "beta", "gamma"] {
        expected.push(("sum_digest.accepted", m, Some(1)));
    }
    for m in ["alpha", "beta", "gamma"] {
        expected.push(("decryption_share.accepted", m, Some(1)));
    }
    expected.push(("round.result_published", "server", Some(1)));
    // alpha's share digest; beta's refused one left no trace.
    expected.push(("share_digest.accepted", "alpha", Some(1)));
    expected.push(("round.opened", "admin", Some(2)));
    assert_eq!(trail, expected);
    let published = audit
        .entries
        .iter()
        .find(|e| e.action == "round.result_published");
    assert_eq!(published.and_then(|e| e.hash.clone()), list.aggregate_hash);
    // The ceremony's trail (its own entries and the study's), read by a
    // member: one hash chain from the genesis (issue 45, item 9).
    let chained: AuditLog = h
        .json(
            Some("beta"),
            Method::GET,
            "/v1/ceremonies/c1/audit",
            None,
            StatusCode::OK,
        )
        .await;
    let check = fedhe_api::audit::verify_chain("c1", &chained.entries, &[]).unwrap();
    assert_eq!(check.entries, chained.entries.len());
    assert!(check.entries > audit.entries.len(), "{check:?}");
    assert!(chained.entries[0].action == "ceremony.created");
    // beta signs the head it saw; the server records it in the chain.
    let head = check.head.clone().unwrap();
    let beta = &h.members.iter().find(|m| m.id == "beta").unwrap().identity;
    let signed = |head: &fedhe_api::AuditHead| {
        serde_json::json!({
            "seq": head.seq,
            "chain": head.chain,
            "signature": beta.sign_hex(&fedhe_api::audit::head_statement("c1", "beta", head)),
        })
    };
    let _: fedhe_api::SignedAuditHead = h
        .json(
            Some("beta"),
            Method::PUT,
            "/v1/ceremonies/c1/audit-heads/beta",
            Some(signed(&head)),
            StatusCode::CREATED,
        )
        .await;
    // A head that is not in the trail, or another member's slot, is refused.
    let wrong = fedhe_api::AuditHead {
        seq: head.seq,
        chain: "00".repeat(32),
    };
    let r = h
        .send(
            Some("beta"),
            Method::PUT,
            "/v1/ceremonies/c1/audit-heads/beta",
            serde_json::to_vec(&signed(&wrong)).unwrap(),
            "application/json",
            &[],
        )
        .await;
    assert_problem(r, StatusCode::UNPROCESSABLE_ENTITY, "is not an entry").await;
    let r = h
        .send(
            Some("alpha"),
            Method::PUT,
            "/v1/ceremonies/c1/audit-heads/beta",
            serde_json::to_vec(&signed(&head)).unwrap(),
            "application/json",
            &[],
        )
        .await;
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let after: AuditLog = h
        .json(
            None,
            Method::GET,
            &format!("/v1/ceremonies/c1/audit?after={}", head.seq),
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(after.entries.len(), 1);
    assert_eq!(after.entries[0].action, fedhe_api::audit::HEAD_ACTION);
    let check = fedhe_api::audit::verify_chain(
        "c1",
        &chained
            .entries
            .iter()
            .chain(&after.entries)
            .cloned()
            .collect::<Vec<_>>(),
        &[head],
    )
    .unwrap();
    assert_eq!(check.signed_heads, 1);
    h.server.take().unwrap().shutdown().await.unwrap();
}

async fn bad_requests_get_problems_and_change_nothing(kind: Kind) {
    let mut h = Harness::new(kind, &["alpha", "beta"]).await;
    let key = h.ceremony("c1").await;
    h.study("s1", "c1", 2, 600).await;
    let _: RoundStatus = h
        .json(
            None,
            Method::PUT,
            "/v1/studies/s1/rounds/1",
            None,
            StatusCode::OK,
        )
        .await;
    let bytes = h.encrypt(&key, &[1.0], 1);
    // Both commit, so the list is frozen and alpha may reveal.
    for (who, b) in [
        ("alpha", bytes.clone()),
        ("beta", h.encrypt(&key, &[2.0], 2)),
    ] {
        assert_eq!(
            h.commit(who, "s1", 1, &b, 1).await.status(),
            StatusCode::CREATED
        );
    }
    // The freeze may be made by the deadline sweep just after the last
    // commitment was acknowledged.
    let mut frozen = h.round("s1", 1).await;
    for _ in 0..50 {
        if frozen.state != RoundState::Committing {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        frozen = h.round("s1", 1).await;
    }
    assert_eq!(frozen.state, RoundState::Collecting);
    let path = "/v1/studies/s1/rounds/1/contributions/alpha";
    let sig = h
        .upload_signature("alpha", "contributions", "s1", 1, &bytes)
        .await;
    let url = format!("{}{path}", h.base);

    // Unsigned.
    let r = h
        .http
        .put(&url)
        .header("content-type", "application/octet-stream")
        .body(bytes.clone())
        .send()
        .await
        .unwrap();
    assert_problem(r, StatusCode::UNAUTHORIZED, "unsigned").await;

    // Stale: signed correctly, ten minutes ago.
    let signed = |ts: i64, nonce: &str, who: &str, body: &[u8]| {
        let s = h
            .member(who)
            .identity
            .sign_hex(&request_message("PUT", path, body, ts, nonce));
        h.http
            .put(&url)
            .header("content-type", "application/octet-stream")
            .header(HEADER_MEMBER, who)
            .header(HEADER_TIMESTAMP, ts.to_string())
            .header(HEADER_NONCE, nonce.to_string())
            .header(HEADER_SIGNATURE, s)
            .header(
                fedhe_api::signing::HEADER_CONTENT_DIGEST,
                fedhe_api::signing::digest_hex(body),
            )
            .header(HEADER_UPLOAD_SIGNATURE, sig.clone())
    };
    let r = signed(now_ms() - 600_000, &fresh_nonce(), "alpha", &bytes)
        .body(bytes.clone())
        .send()
        .await
        .unwrap();
    assert_problem(r, StatusCode::UNAUTHORIZED, "stale").await;

    // Signed over another body.
    let r = signed(now_ms(), &fresh_nonce(), "alpha", b"other")
        .body(bytes.clone())
        .send()
        .await
        .unwrap();
    // (It names the other body's digest, which the server checks from the
    // headers, then the body against it.)
    assert_problem(r, StatusCode::UNAUTHORIZED, "does not have the digest").await;

    // A member's id, this very body, signed with another key (a forgery):
    // the signature does not verify under alpha's identity key.
    let mallory = Identity::generate();
    let ts = now_ms();
    let nonce = fresh_nonce();
    let r = h
        .http
        .put(&url)
        .header("content-type", "application/octet-stream")
        .header(HEADER_MEMBER, "alpha")
        .header(HEADER_TIMESTAMP, ts.to_string())
        .header(HEADER_NONCE, nonce.clone())
        .header(
            HEADER_SIGNATURE,
            mallory.sign_hex(&request_message("PUT", path, &bytes, ts, &nonce)),
        )
        .header(
            fedhe_api::signing::HEADER_CONTENT_DIGEST,
            fedhe_api::signing::digest_hex(&bytes),
        )
        .header(HEADER_UPLOAD_SIGNATURE, sig.clone())
        .body(bytes.clone())
        .send()
        .await
        .unwrap();
    assert_problem(r, StatusCode::UNAUTHORIZED, "does not verify").await;

    // Unknown member.
    let ts = now_ms();
    let nonce = fresh_nonce();
    let r = h
        .http
        .put(&url)
        .header("content-type", "application/octet-stream")
        .header(HEADER_MEMBER, "mallory")
        .header(HEADER_TIMESTAMP, ts.to_string())
        .header(HEADER_NONCE, nonce.clone())
        .header(
            HEADER_SIGNATURE,
            mallory.sign_hex(&request_message("PUT", path, &bytes, ts, &nonce)),
        )
        .body(bytes.clone())
        .send()
        .await
        .unwrap();
    assert_problem(r, StatusCode::UNAUTHORIZED, "unknown member").await;

    // Another member's slot.
    let r = h
        .send(
            Some("beta"),
            Method::PUT,
            path,
            bytes.clone(),
            "application/octet-stream",
            &[(HEADER_UPLOAD_SIGNATURE, sig.clone())],
        )
        .await;
    assert_problem(r, StatusCode::FORBIDDEN, "cannot write the slot of alpha").await;

    // Malformed wire object, correctly signed.
    let mut corrupt = bytes.clone();
    corrupt[100] ^= 1;
    let csig = h
        .upload_signature("alpha", "contributions", "s1", 1, &corrupt)
        .await;
    let r = h
        .send(
            Some("alpha"),
            Method::PUT,
            path,
            corrupt,
            "application/octet-stream",
            &[(HEADER_UPLOAD_SIGNATURE, csig)],
        )
        .await;
    assert_problem(
        r,
        StatusCode::UNPROCESSABLE_ENTITY,
        "not an encrypted vector",
    )
    .await;

    // A body longer than the committed value count's encoding, correctly
    // signed: refused from its Content-Length, before it is read.
    let mut longer = bytes.clone();
    longer.extend_from_slice(&[0u8; 8]);
    let lsig = h
        .upload_signature("alpha", "contributions", "s1", 1, &longer)
        .await;
    let r = h
        .send(
            Some("alpha"),
            Method::PUT,
            path,
            longer,
            "application/octet-stream",
            &[(HEADER_UPLOAD_SIGNATURE, lsig)],
        )
        .await;
    assert_problem(
        r,
        StatusCode::UNPROCESSABLE_ENTITY,
        &format!("this upload is exactly {} bytes", bytes.len()),
    )
    .await;

    // Bad upload signature.
    let r = h
        .send(
            Some("alpha"),
            Method::PUT,
            path,
            bytes.clone(),
            "application/octet-stream",
            &[(HEADER_UPLOAD_SIGNATURE, "00".repeat(64))],
        )
        .await;
    assert_problem(r, StatusCode::UNPROCESSABLE_ENTITY, "does not verify").await;

    // Oversized (the limit is 4 MiB in this configuration).
    let big = vec![0u8; 5 << 20];
    let (status, content_type, json) = h
        .send_headers_then_read(
            "alpha",
            Method::PUT,
            path,
            big,
            "application/octet-stream",
            &[(HEADER_UPLOAD_SIGNATURE, sig.clone())],
        )
        .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE.as_u16());
    assert_eq!(content_type, "application/problem+json");
    let p: Problem = serde_json::from_str(&json).unwrap();
    assert_eq!(p.status, 413);
    assert!(p.detail.contains("at most"), "{}", p.detail);

    // Malformed JSON and a wrong content type.
    let r = h
        .send(
            None,
            Method::POST,
            "/v1/studies",
            b"{\"id\":".to_vec(),
            "application/json",
            &[],
        )
        .await;
    assert_problem(r, StatusCode::BAD_REQUEST, "invalid JSON").await;
    let r = h
        .send(
            Some("alpha"),
            Method::PUT,
            path,
            bytes.clone(),
            "text/plain",
            &[(HEADER_UPLOAD_SIGNATURE, sig.clone())],
        )
        .await;
    assert_problem(
        r,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "application/octet-stream",
    )
    .await;

    // Admin actions without the token, and bad paths.
    let r = h
        .http
        .post(format!("{}/v1/studies", h.base))
        .bearer_auth("wrong")
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_problem(r, StatusCode::UNAUTHORIZED, "bearer token").await;
    let r = h
        .send(
            None,
            Method::GET,
            "/v1/studies/s1/rounds/zero",
            vec![],
            "application/json",
            &[],
        )
        .await;
    assert_problem(r, StatusCode::BAD_REQUEST, "not a number").await;
    let r = h
        .send(
            None,
            Method::GET,
            "/v1/nowhere",
            vec![],
            "application/json",
            &[],
        )
        .await;
    assert_problem(r, StatusCode::NOT_FOUND, "no route").await;
    let r = h
        .send(
            None,
            Method::DELETE,
            "/v1/studies/s1",
            vec![],
            "application/json",
            &[],
        )
        .await;
    assert_problem(r, StatusCode::METHOD_NOT_ALLOWED, "DELETE").await;

    // Nothing changed.
    let st = h.round("s1", 1).await;
    assert_eq!((st.received, st.version), (0, frozen.version), "{st:?}");

    // A valid request goes through once; its replay is refused.
    let nonce = fresh_nonce();
    let ts = now_ms();
    let ok = signed(ts, &nonce, "alpha", &bytes)
        .body(bytes.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), StatusCode::CREATED);
    let replay = signed(ts, &nonce, "alpha", &bytes)
        .body(bytes.clone())
        .send()
        .await
        .unwrap();
    assert_problem(replay, StatusCode::UNAUTHORIZED, "replayed").await;
    let st = h.round("s1", 1).await;
    assert_eq!((st.received, st.version), (1, frozen.version + 1), "{st:?}");
    h.server.take().unwrap().shutdown().await.unwrap();
}

async fn a_round_fails_at_its_deadline_and_the_next_one_opens(kind: Kind) {
    let mut h = Harness::new(kind, &["alpha", "beta", "gamma"]).await;
    let key = h.ceremony("c1").await;
    h.study("s1", "c1", 2, 1).await;
    let _: RoundStatus = h
        .json(
            None,
            Method::PUT,
            "/v1/studies/s1/rounds/1",
            None,
            StatusCode::OK,
        )
        .await;
    let r = h
        .commit("alpha", "s1", 1, &h.encrypt(&key, &[1.0], 1), 1)
        .await;
    assert_eq!(r.status(), StatusCode::CREATED);
    let st: RoundStatus = h
        .json(
            None,
            Method::GET,
            "/v1/studies/s1/rounds/1?wait=5&since=2",
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(st.state, RoundState::Failed, "{st:?}");
    assert!(
        st.reason.as_deref().unwrap().contains("1 of 2 required"),
        "{st:?}"
    );
    let r = h
        .commit("beta", "s1", 1, &h.encrypt(&key, &[1.0], 2), 1)
        .await;
    let conflict = assert_round_conflict(r, "failed", RoundState::Failed, false).await;
    assert_eq!(
        conflict.reason, st.reason,
        "the failure's reason, in the answer"
    );
    // Round 2: two of three contribute; it closes at the deadline with both and
    // every member (including the one that did not contribute) decrypts.
    let _: RoundStatus = h
        .json(
            Some("gamma"),
            Method::PUT,
            "/v1/studies/s1/rounds/2",
            None,
            StatusCode::OK,
        )
        .await;
    let two: Vec<(&str, Vec<u8>, u64)> = ["alpha", "beta"]
        .iter()
        .enumerate()
        .map(|(i, m)| (*m, h.encrypt(&key, &[2.0, i as f64], 10 + i as u128), 2))
        .collect();
    for (who, bytes, values) in &two {
        let r = h.commit(who, "s1", 2, bytes, *values).await;
        assert_eq!(r.status(), StatusCode::CREATED);
    }
    // The commitments freeze at the deadline with the two.
    let st: RoundStatus = h
        .json(
            None,
            Method::GET,
            "/v1/studies/s1/rounds/2?wait=5&since=3",
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(st.state, RoundState::Collecting, "{st:?}");
    for (who, bytes, _) in &two {
        let r = h.upload(who, "contributions", "s1", 2, bytes.clone()).await;
        assert_eq!(r.status(), StatusCode::CREATED);
    }
    h.decrypt("s1", 2, &["alpha", "beta", "gamma"]).await;
    let result: RoundResult = h
        .json(
            None,
            Method::GET,
            "/v1/studies/s1/rounds/2/result?wait=10",
            None,
            StatusCode::OK,
        )
        .await;
    let values = h.decoded("s1", 2).await;
    assert!(
        (values[0] - 4.0).abs() < 1e-6 && (values[1] - 1.0).abs() < 1e-6,
        "{result:?} {values:?}"
    );
    // The result's sum is of the two contributions listed.
    let listed: ContributionList = h
        .json(
            None,
            Method::GET,
            "/v1/studies/s1/rounds/2/contributions",
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(listed.contributions.len(), 2);
    assert_eq!(
        result.contribution_entries_hash,
        Some(hex::encode(listed.entries_hash("s1", 2)))
    );
    // A failed round is retried under the next number (issue 45, item 5),
    // so a study's round cap, not a failure, ends it: past the cap no round
    // opens, whatever the latest round's state.
    h.study_capped("s2", "c1", 2, 1, Some(1)).await;
    for round in [1, 2] {
        let path = format!("/v1/studies/s2/rounds/{round}");
        let r = h
            .send(
                Some("alpha"),
                Method::PUT,
                &path,
                Vec::new(),
                "application/json",
                &[],
            )
            .await;
        if round == 1 {
            assert_eq!(r.status(), StatusCode::OK);
        } else {
            assert_problem(
                r,
                StatusCode::CONFLICT,
                "reached its round cap: round 2 is past the last round, 1",
            )
            .await;
        }
    }
    h.server.take().unwrap().shutdown().await.unwrap();
}

async fn acknowledged_uploads_survive_a_restart(kind: Kind) {
    let mut h = Harness::new(kind, &["alpha", "beta"]).await;
    let key = h.ceremony("c1").await;
    h.study("s1", "c1", 2, 600).await;
    let _: RoundStatus = h
        .json(
            None,
            Method::PUT,
            "/v1/studies/s1/rounds/1",
            None,
            StatusCode::OK,
        )
        .await;
    let a = h.encrypt(&key, &[1.0, 2.0], 1);
    let b = h.encrypt(&key, &[3.0, 4.0], 2);
    assert_eq!(
        h.commit("alpha", "s1", 1, &a, 2).await.status(),
        StatusCode::CREATED
    );
    h.restart().await;
    assert_eq!(
        h.commit("alpha", "s1", 1, &a, 2).await.status(),
        StatusCode::OK,
        "the commitment is still stored"
    );
    assert_eq!(
        h.commit("beta", "s1", 1, &b, 2).await.status(),
        StatusCode::CREATED
    );
    assert_eq!(
        h.upload("alpha", "contributions", "s1", 1, a.clone())
            .await
            .status(),
        StatusCode::CREATED
    );
    h.restart().await;
    assert_eq!(
        h.upload("alpha", "contributions", "s1", 1, a)
            .await
            .status(),
        StatusCode::OK,
        "still stored"
    );
    assert_eq!(
        h.upload("beta", "contributions", "s1", 1, b).await.status(),
        StatusCode::CREATED
    );
    h.decrypt("s1", 1, &["alpha"]).await;
    h.restart().await;
    h.decrypt_rest("s1", 1, "beta").await;
    let result: RoundResult = h
        .json(
            None,
            Method::GET,
            "/v1/studies/s1/rounds/1/result?wait=10",
            None,
            StatusCode::OK,
        )
        .await;
    let values = h.decoded("s1", 1).await;
    assert!(result.combined_hash.is_some());
    assert!((values[0] - 4.0).abs() < 1e-6 && (values[1] - 6.0).abs() < 1e-6);
    h.server.take().unwrap().shutdown().await.unwrap();
}

impl Harness {
    async fn decrypt_rest(&self, study: &str, round: u64, who: &str) {
        self.decrypt(study, round, &[who]).await;
    }

    /// `C0 + D` of a finished round, decoded here: the server publishes no
    /// values, and this harness's shares are not blinded (a member's are).
    async fn decoded(&self, study: &str, round: u64) -> Vec<f64> {
        let mut get = Vec::new();
        for what in ["aggregate", "combined-share"] {
            let r = self
                .send(
                    None,
                    Method::GET,
                    &format!("/v1/studies/{study}/rounds/{round}/{what}"),
                    vec![],
                    "application/json",
                    &[],
                )
                .await;
            assert_eq!(r.status(), StatusCode::OK, "{what}");
            get.push(r.bytes().await.unwrap().to_vec());
        }
        let aggregate = EncryptedVector::from_bytes(&self.params, &get[0]).unwrap();
        let d = CombinedShare::from_bytes(&self.params, &get[1], aggregate.ciphertexts().len())
            .unwrap();
        FixedPointCodec::from_info(&self.params, aggregate.encoding())
            .unwrap()
            .decode(&d.decrypt(&aggregate).unwrap(), aggregate.len())
            .unwrap()
    }
}

async fn operational_routes_and_the_openapi_document(kind: Kind) {
    let mut h = Harness::new(kind, &["alpha"]).await;
    let get = |p: &str| h.http.get(format!("{}{p}", h.base)).send();
    assert_eq!(get("/healthz").await.unwrap().status(), StatusCode::OK);
    assert_eq!(get("/readyz").await.unwrap().status(), StatusCode::OK);
    // /metrics is the administrator's (bearer token).
    assert_eq!(
        get("/metrics").await.unwrap().status(),
        StatusCode::UNAUTHORIZED
    );
    let metrics = h
        .http
        .get(format!("{}/metrics", h.base))
        .bearer_auth(ADMIN)
        .send();
    let metrics = metrics.await.unwrap().text().await.unwrap();
    assert!(metrics.contains("fedhe_http_responses_total"), "{metrics}");
    // A `/ui` ticket opens one session (issue 45, finding 12): the second
    // use of the same link gets the login page and no cookie.
    let ticket: fedhe_api::UiTicket = h
        .json(
            None,
            Method::POST,
            "/v1/ui-tickets",
            None,
            StatusCode::CREATED,
        )
        .await;
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    for attempt in 0..2 {
        let r = browser
            .get(format!("{}{}", h.base, ticket.path))
            .send()
            .await
            .unwrap();
        let cookie = r.headers().get("set-cookie").is_some();
        if attempt == 0 {
            assert_eq!((r.status(), cookie), (StatusCode::SEE_OTHER, true));
        } else {
            assert_eq!((r.status(), cookie), (StatusCode::UNAUTHORIZED, false));
        }
    }
    let ui = get("/docs").await.unwrap();
    assert_eq!(ui.status(), StatusCode::OK);
    assert!(
        ui.text().await.unwrap().contains("swagger"),
        "Swagger UI at /docs"
    );
    let doc: serde_json::Value = get("/openapi.json").await.unwrap().json().await.unwrap();
    assert!(
        doc["openapi"].as_str().unwrap().starts_with("3.1"),
        "{}",
        doc["openapi"]
    );
    let paths = doc["paths"].as_object().unwrap();
    let expected: &[(&str, &[&str])] = &[
        ("/v1/ceremonies", &["post"]),
        ("/v1/ceremonies/{ceremony}", &["get"]),
        ("/v1/ceremonies/{ceremony}/commitments/{member}", &["put"]),
        (
            "/v1/ceremonies/{ceremony}/public-key-shares/{member}",
            &["put", "get"],
        ),
        ("/v1/ceremonies/{ceremony}/transcript", &["get"]),
        ("/v1/ceremonies/{ceremony}/collective-key", &["get"]),
        ("/v1/ceremonies/{ceremony}/dealings/{member}", &["put"]),
        (
            "/v1/ceremonies/{ceremony}/dealings/{dealer}/for/{recipient}",
            &["get"],
        ),
        (
            "/v1/ceremonies/{ceremony}/dealing-verdicts/{member}",
            &["put"],
        ),
        ("/v1/studies", &["post"]),
        ("/v1/studies/{study}", &["get"]),
        ("/v1/studies/{study}/rounds/{round}", &["put", "get"]),
        ("/v1/studies/{study}/rounds/{round}/commitments", &["get"]),
        (
            "/v1/studies/{study}/rounds/{round}/commitments/{member}",
            &["put"],
        ),
        ("/v1/studies/{study}/rounds/{round}/contributions", &["get"]),
        (
            "/v1/studies/{study}/rounds/{round}/contributions/{member}",
            &["put", "get"],
        ),
        (
            "/v1/studies/{study}/rounds/{round}/decryption-claims/{member}",
            &["put"],
        ),
        ("/v1/studies/{study}/rounds/{round}/aggregate", &["get"]),
        (
            "/v1/studies/{study}/rounds/{round}/decryption-shares",
            &["get"],
        ),
        (
            "/v1/studies/{study}/rounds/{round}/decryption-shares/{member}",
            &["put", "get"],
        ),
        ("/v1/studies/{study}/rounds/{round}/result", &["get"]),
        ("/v1/studies/{study}/rounds/{round}/sum-digests", &["get"]),
        ("/v1/studies/{study}/rounds/{round}/share-digests", &["get"]),
        (
            "/v1/studies/{study}/rounds/{round}/share-digests/{member}",
            &["put"],
        ),
        (
            "/v1/studies/{study}/rounds/{round}/combined-share",
            &["get"],
        ),
        (
            "/v1/studies/{study}/rounds/{round}/aggregate-carries",
            &["get"],
        ),
        (
            "/v1/studies/{study}/rounds/{round}/sum-digests/{member}",
            &["put"],
        ),
        ("/v1/ceremonies/{ceremony}/result-keys", &["put"]),
        ("/v1/ceremonies/{ceremony}/result-keys/{member}", &["get"]),
        ("/healthz", &["get"]),
        ("/readyz", &["get"]),
        ("/metrics", &["get"]),
        ("/v1/audit", &["get"]),
        ("/v1/ceremonies/{ceremony}/audit", &["get"]),
        ("/v1/ceremonies/{ceremony}/audit-heads/{member}", &["put"]),
        ("/v1/ui-tickets", &["post"]),
        ("/openapi.json", &["get"]),
    ];
    assert_eq!(
        paths.len(),
        expected.len(),
        "{:?}",
        paths.keys().collect::<Vec<_>>()
    );
    for (path, methods) in expected {
        for m in *methods {
            assert!(paths[*path][m].is_object(), "{m} {path} is missing");
        }
    }
    // The document's paths are the route table's, which the client fills.
    let mut documented: Vec<&str> = paths.keys().map(String::as_str).collect();
    let mut table = fedhe_api::routes::ALL.to_vec();
    documented.sort_unstable();
    table.sort_unstable();
    assert_eq!(documented, table);
    h.server.take().unwrap().shutdown().await.unwrap();
}

/// `GET /v1/ceremonies/{id}?wait=&phase=&dealt=` is a long poll: it holds
/// while the ceremony is in `phase`, answers at once when it is not (or when
/// `dealt` members have dealt), wakes when the last commitment moves the
/// ceremony on, and refuses an unknown phase or count naming it.
async fn a_ceremony_status_long_polls_until_its_phase_changes(kind: Kind) {
    let h = Harness::new(kind, &["alpha", "beta"]).await;
    let spec = h.ceremony_spec("c1");
    let _: CeremonyStatus = h
        .json(
            None,
            Method::POST,
            "/v1/ceremonies",
            Some(spec),
            StatusCode::CREATED,
        )
        .await;
    let get = |query: &'static str| {
        let h = &h;
        async move {
            let started = std::time::Instant::now();
            let s: CeremonyStatus = h
                .json(
                    Some("alpha"),
                    Method::GET,
                    &format!("/v1/ceremonies/c1?{query}"),
                    None,
                    StatusCode::OK,
                )
                .await;
            (s.phase, started.elapsed())
        }
    };
    let (phase, took) = get("wait=0.6&phase=committing").await;
    assert_eq!(phase, CeremonyPhase::Committing);
    assert!(took >= std::time::Duration::from_millis(550), "{took:?}");
    for query in ["wait=20&phase=revealing", "wait=20&dealt=0"] {
        let (phase, took) = get(query).await;
        assert_eq!(phase, CeremonyPhase::Committing, "{query}");
        assert!(
            took < std::time::Duration::from_secs(5),
            "{query}: {took:?}"
        );
    }
    // Both commit while a long poll waits for the phase to change.
    let commits = async {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        for m in &h.members {
            let hash = *blake3::hash(m.id.as_bytes()).as_bytes();
            h.commit_key_share("c1", m, hash).await;
        }
    };
    let ((phase, took), ()) = tokio::join!(get("wait=20&phase=committing"), commits);
    assert_eq!(phase, CeremonyPhase::Revealing);
    assert!(took < std::time::Duration::from_secs(5), "{took:?}");
    for (query, needle) in [
        (
            "wait=1&phase=bogus",
            "phase=\"bogus\" is not a ceremony phase",
        ),
        ("wait=1&dealt=-1", "dealt=\"-1\" is not a count"),
    ] {
        let r = h
            .send(
                Some("alpha"),
                Method::GET,
                &format!("/v1/ceremonies/c1?{query}"),
                Vec::new(),
                "application/json",
                &[],
            )
            .await;
        assert_problem(r, StatusCode::BAD_REQUEST, needle).await;
    }
}

on_both_backends!(
    async;
    a_round_runs_end_to_end_over_http,
    a_ceremony_status_long_polls_until_its_phase_changes,
    bad_requests_get_problems_and_change_nothing,
    a_round_fails_at_its_deadline_and_the_next_one_opens,
    acknowledged_uploads_survive_a_restart,
    operational_routes_and_the_openapi_document,
);

/// A stand-in for the hash of a contribution's c1 commitment: the server
/// stores and lists it without opening it (members check it).
fn c1_hash_of(bytes: &[u8]) -> [u8; 32] {
    *blake3::hash(&[b"c1 ", bytes].concat()).as_bytes()
}
