//! `fedhe serve` as a real process on loopback:
//!
//! - `kill -9` of the server in each round phase, then a restart on the same
//!   store: every acknowledged upload is still there and the round finishes
//!   with the same aggregate. Twice: on an SQLite file and on a PostgreSQL
//!   database (`FEDHE_TEST_POSTGRES_URL`, see
//!   `crates/server/tests/support/databases.rs`);
//! - `fedhe bench service` (issue 16), which replaced the ignored 100-member
//!   test of issue 5: `fedhe bench service --members 100 --json` measures
//!   that round now.

use fedhe_client::keys::{self, KeyDir};
use fedhe_client::member::{join_ceremony, verify_ceremony};
use fedhe_client::{Auth, Client, MemberSession};
use std::time::Duration;
use support::databases::{Kind, TestDb};

// The server's test support, shared rather than copied.
#[macro_use]
#[path = "../../server/tests/support"]
mod support {
    #[macro_use]
    pub mod databases;
}

#[allow(dead_code)] // each test binary uses its own part of the helpers
mod common;
mod server_process;
use server_process::ServerProcess;
mod toy_federation;
use toy_federation::{toy_ceremony, toy_federation, Terms};

const ADMIN: &str = "scale-admin";

/// Starts `fedhe serve` on `listen` with its store at `database_url`; returns
/// once it listens.
fn serve_on(database_url: &str, listen: &str) -> ServerProcess {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_fedhe"));
    command
        .args([
            "serve",
            "--allow-insecure",
            "--listen",
            listen,
            "--database-url",
            database_url,
        ])
        .env("FEDHE_ADMIN_TOKEN", ADMIN);
    server_process::spawn(command)
}

/// A loopback address no one listens on, so a restarted server keeps its URL.
fn free_loopback_address() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!("127.0.0.1:{port}")
}

fn kill_9_in_every_round_phase_loses_no_acknowledged_upload(kind: Kind) {
    let root = tempfile::tempdir().unwrap();
    let db = TestDb::new(kind);
    let listen = free_loopback_address();
    let mut server = serve_on(&db.url(), &listen);
    let (sessions, _) = toy_federation(
        &server.url,
        ADMIN,
        root.path(),
        &["alpha", "beta", "gamma"],
        &Terms {
            min_contributors: 3,
            round_secs: 600,
            bound: 10.0,
        },
    );
    let mut sessions: Vec<MemberSession> = sessions.into_iter().map(|(s, _)| s).collect();
    let admin = Client::new(&server.url, Auth::Admin(ADMIN.to_string().into())).unwrap();
    let crash = |server: &mut ServerProcess| {
        // SIGKILL: no shutdown path runs.
        server.child.kill().unwrap();
        server.child.wait().unwrap();
        *server = serve_on(&db.url(), &listen);
    };
    // Committing: one commitment acknowledged, then the server dies.
    let first = sessions[0].commit("s1", 1, &[1.0, 2.0], 10.0).unwrap();
    crash(&mut server);
    let committed = admin.round_commitments("s1", 1).unwrap();
    assert_eq!(committed.commitments.len(), 1);
    assert_eq!(
        committed.commitments[0].hash,
        blake3::hash(&first).to_hex().to_string()
    );
    sessions[1].commit("s1", 1, &[3.0, 4.0], 10.0).unwrap();
    sessions[2].commit("s1", 1, &[5.0, 6.0], 10.0).unwrap();
    // Collecting: one contribution revealed, then the server dies.
    sessions[0].reveal("s1", 1).unwrap();
    crash(&mut server);
    let listed = admin.contributions("s1", 1).unwrap();
    assert_eq!(listed.contributions.len(), 1);
    assert_eq!(
        listed.contributions[0].hash,
        blake3::hash(&first).to_hex().to_string()
    );
    sessions[1].reveal("s1", 1).unwrap();
    sessions[2].reveal("s1", 1).unwrap();
    // Decrypting: the aggregate and one share acknowledged, then the server dies.
    let before = admin.contributions("s1", 1).unwrap();
    assert!(before.aggregate_hash.is_some());
    sessions[0].decrypt("s1", 1).unwrap();
    crash(&mut server);
    let after = admin.contributions("s1", 1).unwrap();
    assert_eq!(
        after.aggregate_hash, before.aggregate_hash,
        "the same aggregate"
    );
    let round = admin.round("s1", 1, Duration::ZERO, None).unwrap();
    assert_eq!(round.shares, vec!["alpha".to_string()]);
    sessions[1].decrypt("s1", 1).unwrap();
    sessions[2].decrypt("s1", 1).unwrap();
    // Done: the result survives too.
    let result = sessions[0].result("s1", 1).unwrap();
    crash(&mut server);
    let again = admin.result("s1", 1, Duration::ZERO).unwrap();
    // After the crash another member decodes the same values from what the
    // server kept (it holds no value itself).
    assert_eq!(sessions[1].result("s1", 1).unwrap(), result);
    assert_eq!(Some(again.aggregate_hash), before.aggregate_hash);
    assert!((result[0] - 9.0).abs() < 1e-6 && (result[1] - 12.0).abs() < 1e-6);
    // A member restarted after its share was recorded resends the same share
    // (idempotent), never a second one.
    sessions[0].decrypt("s1", 1).unwrap();
}

/// `kill -9` of the server in each phase of a key ceremony (created,
/// committing with one commitment, revealing, revealing with one share,
/// complete), then a restart on the same store: every acknowledged
/// commitment and share is still there, the phases carry on, the collective
/// key and transcript are those of before the crash, every member verifies
/// the ceremony, and a member that re-runs `join_ceremony` (a restarted
/// `fedhe ceremony join`) resends the same share idempotently.
fn kill_9_in_every_ceremony_phase_loses_nothing_acknowledged(kind: Kind) {
    use fedhe_api::CeremonyPhase;
    use fedhe_crypto::{
        CeremonyId, CommonRandomPoly, MemberId, PublicKeyShare, SecretKeyShare, WireObject,
    };
    let root = tempfile::tempdir().unwrap();
    let db = TestDb::new(kind);
    let listen = free_loopback_address();
    let mut server = serve_on(&db.url(), &listen);
    let crash = |server: &mut ServerProcess| {
        server.child.kill().unwrap();
        server.child.wait().unwrap();
        *server = serve_on(&db.url(), &listen);
    };
    let names = ["alpha", "beta", "gamma"];
    let admin = Client::new(&server.url, Auth::Admin(ADMIN.to_string().into())).unwrap();
    let clients = toy_ceremony(&server.url, ADMIN, &names);
    // Created: the acknowledged ceremony survives.
    crash(&mut server);
    let status = admin.ceremony("c1").unwrap();
    assert_eq!(status.phase, CeremonyPhase::Committing);
    // Each member's key folder and share, as `fedhe ceremony join` makes them.
    let params = fedhe_client::member::params_by_name("toy-n1024", true).unwrap();
    let ids: Vec<MemberId> = names.iter().map(|m| MemberId::new(*m).unwrap()).collect();
    let crs =
        CommonRandomPoly::for_ceremony(&params, &CeremonyId::new("c1").unwrap(), &ids).unwrap();
    assert_eq!(hex::encode(crs.seed()), status.crs_seed);
    let dirs: Vec<KeyDir> = names
        .iter()
        .map(|m| KeyDir::open_or_create(root.path().join(m)).unwrap())
        .collect();
    let mut shares = Vec::new();
    for ((m, id), dir) in ids.iter().zip(names).zip(&dirs) {
        let mut rng = fedhe_ring::Csprng::from_entropy();
        let sk = SecretKeyShare::generate(&params, m.clone(), &mut rng);
        let pk = PublicKeyShare::generate(&params, &sk, &crs, &mut rng)
            .unwrap()
            .to_bytes(&params);
        dir.write_secret(keys::SECRET_SHARE_FILE, &sk.to_key_bytes(&params), false)
            .unwrap();
        dir.write(keys::PUBLIC_SHARE_FILE, &pk, false).unwrap();
        let file = keys::MemberFile {
            member: id.to_string(),
            ceremony: "c1".into(),
            server: String::new(),
            parameter_set: "toy-n1024".into(),
        };
        dir.write(
            keys::MEMBER_FILE,
            &serde_json::to_vec(&file).unwrap(),
            false,
        )
        .unwrap();
        shares.push(pk);
    }
    // Committing, one commitment acknowledged.
    clients[0].commit("c1", &shares[0]).unwrap();
    crash(&mut server);
    let status = admin.ceremony("c1").unwrap();
    assert_eq!(status.phase, CeremonyPhase::Committing);
    assert_eq!(status.committed, vec!["alpha".to_string()]);
    clients[1].commit("c1", &shares[1]).unwrap();
    clients[2].commit("c1", &shares[2]).unwrap();
    // Revealing.
    crash(&mut server);
    let status = admin.ceremony("c1").unwrap();
    assert_eq!(status.phase, CeremonyPhase::Revealing);
    assert_eq!(status.committed.len(), 3);
    // Revealing, one share acknowledged.
    clients[0].reveal("c1", &shares[0]).unwrap();
    crash(&mut server);
    let status = admin.ceremony("c1").unwrap();
    assert_eq!(status.phase, CeremonyPhase::Revealing);
    assert_eq!(status.revealed, vec!["alpha".to_string()]);
    assert_eq!(
        clients[1].public_key_share("c1", "alpha").unwrap(),
        shares[0]
    );
    clients[1].reveal("c1", &shares[1]).unwrap();
    clients[2].reveal("c1", &shares[2]).unwrap();
    // Complete.
    let mut status = admin.ceremony("c1").unwrap();
    for _ in 0..50 {
        if status.phase == CeremonyPhase::Complete {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        status = admin.ceremony("c1").unwrap();
    }
    assert_eq!(status.phase, CeremonyPhase::Complete, "{:?}", status.reason);
    let key = admin.collective_key("c1").unwrap();
    let transcript = admin.transcript("c1").unwrap();
    crash(&mut server);
    let after = admin.ceremony("c1").unwrap();
    assert_eq!(after.phase, CeremonyPhase::Complete);
    assert_eq!(after.transcript_hash, status.transcript_hash);
    assert_eq!(admin.collective_key("c1").unwrap(), key);
    assert_eq!(admin.transcript("c1").unwrap(), transcript);
    // A restarted `fedhe ceremony join` resends the same share (idempotent),
    // and every member verifies the ceremony against its own share.
    join_ceremony(
        &clients[0],
        &dirs[0],
        "c1",
        true,
        false,
        Duration::from_secs(10),
    )
    .unwrap();
    for ((client, dir), m) in clients.iter().zip(&dirs).zip(names) {
        let own = dir.read(keys::PUBLIC_SHARE_FILE).unwrap();
        let verified = verify_ceremony(client, "c1", Some((m, &own)), true).unwrap();
        assert_eq!(verified.key.to_bytes(&params), key, "{m}");
    }
}

/// Two `fedhe serve` replicas on one store (issue 16 item 4): alpha and beta
/// work through replica A, gamma and delta through replica B. A round is
/// committed through both; A is killed with `kill -9` right after alpha's
/// reveal was acknowledged; alpha and beta restart against B (new sessions
/// from their key folders and journals, as a restarted agent given B's URL
/// would) and the round completes through B: alpha's acknowledged
/// contribution is kept, every member verifies and decodes the plaintext
/// sum.
fn a_round_survives_one_of_two_replicas_killed(kind: Kind) {
    let root = tempfile::tempdir().unwrap();
    let db = TestDb::new(kind);
    let mut a = serve_on(&db.url(), &free_loopback_address());
    let b = serve_on(&db.url(), &free_loopback_address());
    let names = ["alpha", "beta", "gamma", "delta"];
    let (seats, study) = toy_federation(
        &a.url,
        ADMIN,
        root.path(),
        &names,
        &Terms {
            min_contributors: 4,
            round_secs: 600,
            bound: 10.0,
        },
    );
    // The same member, restarted against another replica: a new session
    // from its key folder and state folder.
    let at = |url: &str, client: &Client| -> MemberSession {
        let (me, identity) = client.identity().unwrap();
        let me = me.to_string();
        let identity = std::sync::Arc::new(fedhe_api::Identity::from_seed(
            &identity.signing_key().to_bytes(),
        ));
        let client = Client::new(
            url,
            Auth::Member {
                id: me.clone(),
                identity,
            },
        )
        .unwrap();
        let dir = KeyDir::open(root.path().join(&me)).unwrap();
        let own = dir.read(keys::PUBLIC_SHARE_FILE).unwrap();
        let verified = verify_ceremony(&client, "c1", Some((&me, &own)), true).unwrap();
        let secret = MemberSession::load_secret(&dir, &verified.params).unwrap();
        let mut session =
            MemberSession::new(client, &verified, secret, dir.path().join("state"), 4)
                .unwrap()
                .with_result_key_from(&dir)
                .unwrap();
        session.round_timeout = Duration::from_secs(60);
        session.accept_study(&study).unwrap();
        session
    };
    let clients: Vec<Client> = seats.iter().map(|(_, c)| c.clone()).collect();
    let mut sessions: Vec<MemberSession> = seats.into_iter().map(|(s, _)| s).collect();
    sessions[2] = at(&b.url, &clients[2]);
    sessions[3] = at(&b.url, &clients[3]);
    let values = |i: usize| vec![i as f64 + 0.25, -(i as f64) * 1.5];
    for (i, session) in sessions.iter_mut().enumerate() {
        session.commit("s1", 1, &values(i), 10.0).unwrap();
    }
    let alpha = sessions[0].reveal("s1", 1).unwrap();
    // SIGKILL: no shutdown path runs.
    a.child.kill().unwrap();
    a.child.wait().unwrap();
    sessions[0] = at(&b.url, &clients[0]);
    sessions[1] = at(&b.url, &clients[1]);
    let admin = Client::new(&b.url, Auth::Admin(ADMIN.to_string().into())).unwrap();
    let listed = admin.contributions("s1", 1).unwrap();
    assert_eq!(listed.contributions.len(), 1, "{listed:?}");
    assert_eq!(
        listed.contributions[0].hash,
        blake3::hash(&alpha).to_hex().to_string()
    );
    // Alpha's restarted session resends the same reveal (idempotent).
    for session in &mut sessions {
        session.reveal("s1", 1).unwrap();
    }
    for session in &mut sessions {
        session.decrypt("s1", 1).unwrap();
    }
    let expected: Vec<f64> = (0..2).map(|k| (0..4).map(|i| values(i)[k]).sum()).collect();
    for (session, name) in sessions.iter_mut().zip(names) {
        let got = session.result("s1", 1).unwrap();
        for (g, e) in got.iter().zip(&expected) {
            assert!((g - e).abs() < 1e-6, "{name}: {got:?} vs {expected:?}");
        }
    }
    let round = admin.round("s1", 1, Duration::ZERO, None).unwrap();
    assert_eq!(round.received, 4, "{round:?}");
    assert_eq!(round.shares.len(), 4, "{round:?}");
}

on_both_backends!(sync;
    kill_9_in_every_round_phase_loses_no_acknowledged_upload,
    kill_9_in_every_ceremony_phase_loses_nothing_acknowledged,
    a_round_survives_one_of_two_replicas_killed
);

/// `fedhe bench service` (issue 16): a real server process, members in
/// process; the JSON document has a run per member count with every phase,
/// the bytes per member and the server's peak memory, and every member
/// decoded the plaintext sum (the command fails otherwise).
#[test]
fn bench_service_reports_every_phase_per_member_count() {
    let dir = tempfile::tempdir().unwrap();
    let plot = dir.path().join("cost.png");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fedhe"))
        .args([
            "bench",
            "service",
            "--members",
            "2,5",
            "--params",
            "toy-n1024",
        ])
        .args([
            "--allow-insecure",
            "--values",
            "100",
            "--concurrency",
            "4",
            "--json",
        ])
        .arg("--plot")
        .arg(&plot)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for (run, n) in runs.iter().zip([2, 5]) {
        assert_eq!(run["members"], n);
        let phases = &run["phases"];
        let total: f64 = ["commit", "reveal", "digest", "decrypt", "result"]
            .iter()
            .map(|p| phases[p].as_f64().unwrap())
            .sum();
        let round = run["round_seconds"].as_f64().unwrap();
        assert!(total > 0.0 && total <= round + 1e-3, "{run}");
        // The members' offline phase ran, before and apart from the round.
        assert!(run["prepare_seconds"].as_f64().unwrap() > 0.0, "{run}");
        for m in [
            "aggregate_wait",
            "verify",
            "decryption_share",
            "result_wait",
            "result_verify",
        ] {
            assert!(
                phases["member_medians"][m].as_f64().unwrap() >= 0.0,
                "{m}: {run}"
            );
        }
        // A member sends at least its contribution, and reads at least the
        // aggregate and the other members' contributions it verifies.
        let up = run["upload_bytes_per_member"].as_f64().unwrap();
        let down = run["download_bytes_per_member"].as_f64().unwrap();
        assert!(up > 10_000.0 && down > up, "{run}");
        // At least its six uploads (the round opened, commitment,
        // contribution, sum digest, share digest, decryption share) and the
        // reads between them; the count must not grow with n (checked below).
        let requests = run["requests_per_member"].as_f64().unwrap();
        assert!((12.0..=40.0).contains(&requests), "{run}");
        assert!(
            run["server_peak_rss_bytes"].as_u64().unwrap() > 1 << 20,
            "{run}"
        );
    }
    // A member's requests do not grow with the federation (2 and 5 members;
    // a retried request or a second poll may add one or two).
    let requests = |run: &serde_json::Value| run["requests_per_member"].as_f64().unwrap();
    assert!(requests(&runs[1]) <= requests(&runs[0]) + 3.0, "{v}");
    let png = std::fs::read(&plot).unwrap();
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "{} bytes",
        png.len()
    );
    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_fedhe"))
        .args(["bench", "service", "--members", "1", "--json"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("at least 2"));
}

/// `fedhe bench service --threshold majority` (issue 15): the members join a
/// t-of-n ceremony as `fedhe ceremony join` does (deal, open and verify their
/// Shamir shares), then run the round with its decrypting set; the run
/// reports T, the ceremony's time and its bytes per member, and every member
/// decoded the plaintext sum (the command fails otherwise), having checked
/// the aggregate mostly on digests (`--spot-checks 1`).
#[test]
fn bench_service_runs_a_threshold_ceremony_and_round() {
    let v = common::json_stdout(&common::fedhe(&[
        "bench",
        "service",
        "--members",
        "5",
        "--threshold",
        "majority",
        "--params",
        "toy-n1024",
        "--allow-insecure",
        "--values",
        "50",
        "--concurrency",
        "2",
        // One contribution downloaded besides its own: the others count by
        // their contributors' signed digests (issue 16), end to end.
        "--spot-checks",
        "1",
        "--json",
    ]));
    let run = &v["runs"][0];
    assert_eq!(run["members"], 5, "{run}");
    assert_eq!(run["threshold"], 3, "{run}");
    assert_eq!(run["spot_checks"], 1, "{run}");
    assert!(run["ceremony_seconds"].as_f64().unwrap() > 0.0, "{run}");
    // Each member uploads a dealing (five sealed shares, each at least one
    // polynomial of 1024 residues) and downloads five slices of that size.
    let share = 1024.0 * 8.0;
    for field in [
        "ceremony_upload_bytes_per_member",
        "ceremony_download_bytes_per_member",
    ] {
        assert!(run[field].as_f64().unwrap() > 5.0 * share, "{field}: {run}");
    }
    let refused = common::fedhe(&[
        "bench",
        "service",
        "--members",
        "4",
        "--threshold",
        "2",
        "--params",
        "toy-n1024",
        "--allow-insecure",
        "--json",
    ]);
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("threshold 2 is out of range"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
}
