//! The service end to end on loopback: a real server (SQLite in a temporary
//! folder) and members in their own threads, each with its own key folder,
//! running the ceremony (join, verify) and rounds through `NetworkSum`, the
//! same `SecureSum` trait the algorithms use.

use fedhe_api::{CeremonySpec, Identity, MemberSpec, SignedStudySpec, StudySpec, ValuePrecision};
use fedhe_client::keys::{self, KeyDir};
use fedhe_client::member::{join_ceremony, verify_ceremony};
use fedhe_client::{Auth, Client, ClientError, MemberSession, NetworkSum};
use fedhe_crypto::{MemberId, RoundId, SecureSum};
use std::sync::Arc;
use std::time::Duration;

const ADMIN: &str = "service-test-admin";

/// A server on its own runtime thread; stops when dropped.
struct Server {
    url: String,
    stop: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    _db: tempfile::TempDir,
}

impl Server {
    fn start() -> Self {
        let db = tempfile::tempdir().unwrap();
        let config = fedhe_server::Config {
            listen: "127.0.0.1:0".parse().unwrap(),
            database_url: format!("sqlite://{}", db.path().join("fedhe.db").display()),
            admin_token: ADMIN.into(),
            allow_insecure_params: true,
            sweep_interval_ms: 50,
            ..Default::default()
        };
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let running = fedhe_server::start(config).await.unwrap();
                addr_tx.send(running.addr).unwrap();
                let _ = tokio::task::spawn_blocking(move || stop_rx.recv()).await;
                running.shutdown().await.unwrap();
            });
        });
        let addr = addr_rx.recv().unwrap();
        Self {
            url: format!("http://{addr}"),
            stop: Some(stop_tx),
            thread: Some(thread),
            _db: db,
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn admin(url: &str) -> Client {
    Client::new(url, Auth::Admin(ADMIN.to_string().into())).unwrap()
}

/// Creates identities in key folders, the ceremony, and the study.
fn federation(
    server: &Server,
    root: &std::path::Path,
    names: &[&str],
) -> Vec<(String, KeyDir, Arc<Identity>)> {
    let members: Vec<(String, KeyDir, Arc<Identity>)> = names
        .iter()
        .map(|n| {
            let dir = KeyDir::open_or_create(root.join(n)).unwrap();
            let id = Identity::generate();
            dir.write(keys::IDENTITY_FILE, &id.seed()[..], false)
                .unwrap();
            (n.to_string(), dir, Arc::new(id))
        })
        .collect();
    admin(&server.url)
        .create_ceremony(&CeremonySpec {
            id: "c1".into(),
            parameter_set: "toy-n1024".into(),
            members: members
                .iter()
                .map(|(n, _, id)| MemberSpec {
                    id: n.clone(),
                    identity_key: id.public_key_hex(),
                })
                .collect(),
            deadline_secs: 600,
            allow_insecure: true,
            admin_key: admin_identity().public_key_hex(),
            threshold: None,
        })
        .unwrap();
    members
}

/// The administrator's signing identity (a fixed test key of the toy set).
fn admin_identity() -> Identity {
    Identity::from_seed(&[42; 32])
}

fn create_study(
    server: &Server,
    min_contributors: u32,
    round_secs: u64,
    decrypt_secs: u64,
    precision: ValuePrecision,
) {
    create_capped_study(
        server,
        min_contributors,
        round_secs,
        decrypt_secs,
        precision,
        None,
    )
}

/// As [`create_study`], with a round cap.
fn create_capped_study(
    server: &Server,
    min_contributors: u32,
    round_secs: u64,
    decrypt_secs: u64,
    precision: ValuePrecision,
    round_cap: Option<u64>,
) {
    let spec = StudySpec {
        id: "s1".into(),
        ceremony: "c1".into(),
        algorithm: "sum".into(),
        config: serde_json::json!({}),
        min_contributors,
        round_timeout_secs: round_secs,
        decrypt_timeout_secs: decrypt_secs,
        bound: 100.0,
        precision,
        round_cap,
    };
    admin(&server.url)
        .create_study(&SignedStudySpec::sign(spec, &admin_identity()))
        .unwrap();
}

/// One member's whole life: join, verify, then `rounds` sums through NetworkSum.
fn member_thread(
    url: String,
    name: String,
    dir: KeyDir,
    identity: Arc<Identity>,
    state: std::path::PathBuf,
    rounds: Vec<Option<Vec<f64>>>,
) -> std::thread::JoinHandle<Result<Vec<Vec<f64>>, ClientError>> {
    std::thread::spawn(move || {
        let client = Client::new(
            &url,
            Auth::Member {
                id: name.clone(),
                identity,
            },
        )?;
        join_ceremony(&client, &dir, "c1", true, false, Duration::from_secs(60))?;
        let own = dir.read(keys::PUBLIC_SHARE_FILE)?;
        let verified = loop {
            match verify_ceremony(&client, "c1", Some((&name, &own)), true) {
                Ok(v) => break v,
                Err(ClientError::Problem { problem, .. }) if problem.status == 409 => {
                    std::thread::sleep(Duration::from_millis(100))
                }
                Err(e) => return Err(e),
            }
        };
        let secret = MemberSession::load_secret(&dir, &verified.params)?;
        let study = client.study("s1")?;
        let mut session =
            MemberSession::new(client, &verified, secret, state, 2)?.with_result_key_from(&dir)?;
        session.round_timeout = Duration::from_secs(60);
        session.accept_study(&study)?;
        let mut channel = NetworkSum::new(session, "s1", 100.0, 0);
        let me = MemberId::new(name).unwrap();
        let mut sums = Vec::new();
        for (i, values) in rounds.into_iter().enumerate() {
            let contributions = values.map(|v| vec![(me.clone(), v)]).unwrap_or_default();
            let sum = channel
                .sum(RoundId(i as u64 + 1), contributions)
                .map_err(|e| ClientError::Verification(e.to_string()))?;
            sums.push(sum);
        }
        Ok(sums)
    })
}

#[test]
fn members_run_the_ceremony_and_rounds_over_http() {
    let server = Server::start();
    let root = tempfile::tempdir().unwrap();
    let members = federation(&server, root.path(), &["alpha", "beta", "gamma"]);
    // Two limbs, as `fedhe study create` makes by default: the server's shape
    // check and the members' codec agree on the encoding the spec fixes.
    create_study(&server, 2, 10, 600, ValuePrecision::TwoLimb);
    let inputs: Vec<Vec<Option<Vec<f64>>>> = vec![
        vec![Some(vec![1.0, 2.0]), Some(vec![10.0, 0.5])],
        vec![Some(vec![-3.0, 0.25]), None],
        vec![Some(vec![0.5, -1.0]), Some(vec![-2.0, 2.0])],
    ];
    let threads: Vec<_> = members
        .into_iter()
        .zip(inputs)
        .map(|((name, dir, id), rounds)| {
            let state = root.path().join(format!("{name}-state"));
            member_thread(server.url.clone(), name, dir, id, state, rounds)
        })
        .collect();
    let results: Vec<Vec<Vec<f64>>> = threads
        .into_iter()
        .map(|t| t.join().unwrap().unwrap())
        .collect();
    for r in &results {
        assert!(
            (r[0][0] + 1.5).abs() < 1e-6 && (r[0][1] - 1.25).abs() < 1e-6,
            "{r:?}"
        );
        // Round 2: beta did not contribute; all three decrypted.
        assert!(
            (r[1][0] - 8.0).abs() < 1e-6 && (r[1][1] - 2.5).abs() < 1e-6,
            "{r:?}"
        );
    }
    // Key folders are private and hold the secret key share.
    let meta = std::fs::metadata(root.path().join("alpha").join(keys::SECRET_SHARE_FILE)).unwrap();
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
}

#[test]
fn a_member_that_drops_out_before_decrypting_fails_the_round_cleanly() {
    let server = Server::start();
    let root = tempfile::tempdir().unwrap();
    let members = federation(&server, root.path(), &["alpha", "beta", "gamma"]);
    // A failed round is retried (issue 45, item 5): the cap of 2 ends the
    // study after the retry fails too.
    create_capped_study(&server, 2, 2, 2, ValuePrecision::OneLimb, Some(2));
    // gamma joins the ceremony but never answers for round 1.
    let mut threads = Vec::new();
    for (name, dir, id) in members {
        let state = root.path().join(format!("{name}-state"));
        let rounds = if name == "gamma" {
            vec![]
        } else {
            vec![Some(vec![1.0])]
        };
        threads.push((
            name.clone(),
            member_thread(server.url.clone(), name, dir, id, state, rounds),
        ));
    }
    for (name, t) in threads {
        let outcome = t.join().unwrap();
        if name == "gamma" {
            assert!(outcome.is_ok());
        } else {
            let err = outcome.unwrap_err().to_string();
            assert!(
                err.contains("reached its round cap")
                    && err.contains("round 2 failed")
                    && err.contains("missing: gamma"),
                "{name}: {err}"
            );
        }
    }
}

#[test]
fn a_member_restarted_after_the_federation_moved_on_replays_a_finished_round() {
    let server = Server::start();
    let root = tempfile::tempdir().unwrap();
    let members = federation(&server, root.path(), &["alpha", "beta"]);
    create_study(&server, 2, 60, 600, ValuePrecision::OneLimb);
    let rounds = |a: f64| vec![Some(vec![a, 1.0]), Some(vec![2.0 * a, 0.5])];
    let mut dirs = Vec::new();
    let threads: Vec<_> = members
        .into_iter()
        .zip([1.0, 3.0])
        .map(|((name, dir, id), a)| {
            let state = root.path().join(format!("{name}-state"));
            dirs.push((name.clone(), dir.clone(), id.clone(), state.clone()));
            member_thread(server.url.clone(), name, dir, id, state, rounds(a))
        })
        .collect();
    let sums: Vec<Vec<Vec<f64>>> = threads
        .into_iter()
        .map(|t| t.join().unwrap().unwrap())
        .collect();
    // alpha "crashed" after its decryption share for round 1 but before it
    // recorded the result; the federation has since finished round 2, so
    // round 1 can no longer be opened.
    let (name, dir, identity, state) = dirs.remove(0);
    std::fs::remove_file(state.join("s1.1.result")).unwrap();
    let client = Client::new(
        &server.url,
        Auth::Member {
            id: name.clone(),
            identity,
        },
    )
    .unwrap();
    let own = dir.read(keys::PUBLIC_SHARE_FILE).unwrap();
    let verified = verify_ceremony(&client, "c1", Some((&name, &own)), true).unwrap();
    let secret = MemberSession::load_secret(&dir, &verified.params).unwrap();
    let study = client.study("s1").unwrap();
    let mut session = MemberSession::new(client, &verified, secret, &state, 2)
        .unwrap()
        .with_result_key_from(&dir)
        .unwrap();
    session.round_timeout = Duration::from_secs(30);
    session.accept_study(&study).unwrap();
    // The replay resends the recorded ciphertext and share and gets round 1's sum.
    let replayed = session
        .run_round("s1", 1, Some(&[1.0, 1.0]), 100.0)
        .unwrap();
    assert_eq!(replayed, sums[0][0]);
    assert!((replayed[0] - 4.0).abs() < 1e-6, "{replayed:?}");
}
