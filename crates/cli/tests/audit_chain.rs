//! The hash-chained audit trail (issue 45, item 9) against an operator who
//! edits the server's SQLite file: three agent processes run a study on a
//! real server on loopback, each recording the trail's head after every
//! round; then copies of the database are tampered with (a row rewritten
//! after its trigger was dropped, a row deleted, the triggers dropped and
//! several rows edited, a row rewritten with every later chain value
//! recomputed), a server started on each, and `fedhe audit --verify`, run
//! by a member with its journal, names the first entry that breaks by its
//! seq and exits non-zero; on the untouched trail it verifies clean.

#[allow(dead_code)] // each test binary uses its own part of the helpers
mod common;
mod server_process;

use common::{fedhe, Killed};
use fedhe_api::{AuditEntry, SignedStudySpec, StudySpec};
use fedhe_client::{Auth, Client};
use sqlx::{Connection, Row};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const ADMIN: &str = "audit-chain-admin";

fn keys_of(root: &Path, name: &str) -> PathBuf {
    root.join("keys").join(name)
}

fn admin_identity() -> fedhe_api::Identity {
    fedhe_api::Identity::from_seed(&[42; 32])
}

fn study(url: &str, rounds: usize) {
    let admin = Client::new(url, Auth::Admin(ADMIN.to_string().into())).unwrap();
    let config = serde_json::json!({
        "objective": "cec2005-f1",
        "lower": [-100.0, -100.0],
        "upper": [100.0, 100.0],
        "sense": "minimise",
        "optimum": -450.0,
        "seed": 5,
        "fbo_fedgp": {
            "members": 3,
            "rounds": rounds,
            "initial_points": 3,
            "support_size": 6,
            "acq_candidates": 100,
        },
    });
    let spec = StudySpec {
        id: "s".into(),
        ceremony: "c".into(),
        algorithm: "fbo-fedgp".into(),
        config,
        min_contributors: 3,
        round_timeout_secs: 600,
        decrypt_timeout_secs: 600,
        bound: 1024.0,
        precision: fedhe_api::ValuePrecision::TwoLimb,
        round_cap: None,
    };
    admin
        .create_study(&SignedStudySpec::sign(spec, &admin_identity()))
        .unwrap();
}

fn agent(url: &str, root: &Path, name: &str) -> std::process::Child {
    let objective = format!(
        "exec '{}' objective value --function cec2005-f1 --dim 2",
        env!("CARGO_BIN_EXE_fedhe")
    );
    Command::new(env!("CARGO_BIN_EXE_fedhe"))
        .args(["agent", "run", "--server", url, "--study", "s", "--json"])
        .args(["--allow-insecure", "--objective", &objective, "--keys"])
        .arg(keys_of(root, name))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// `fedhe audit --verify` as `north`, with its journal.
fn verify(url: &str, root: &Path) -> Output {
    fedhe(&[
        "audit",
        "--verify",
        "--server",
        url,
        "--study",
        "s",
        "--keys",
        &keys_of(root, "north").display().to_string(),
    ])
}

/// Runs `sql` (statements separated by `;`) on the SQLite file `db`.
fn tamper(db: &Path, sql: &str) {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite://{}", db.display()))
                .await
                .unwrap();
            sqlx::raw_sql(sql).execute(&mut conn).await.unwrap();
            conn.close().await.unwrap();
        });
}

/// The ceremony's rows of `db` (seq, action), by seq.
fn rows(db: &Path) -> Vec<(i64, String)> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite://{}", db.display()))
                .await
                .unwrap();
            let rows =
                sqlx::query("SELECT seq, action FROM audit WHERE ceremony = 'c' ORDER BY seq")
                    .fetch_all(&mut conn)
                    .await
                    .unwrap();
            rows.iter()
                .map(|r| (r.get::<i64, _>(0), r.get::<String, _>(1)))
                .collect()
        })
}

/// A copy of the server's database files of `root` in a new folder `name`.
fn copy_of(root: &Path, name: &str) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["fedhe.db", "fedhe.db-wal", "fedhe.db-shm"] {
        if root.join(f).exists() {
            std::fs::copy(root.join(f), dir.join(f)).unwrap();
        }
    }
    dir
}

/// Asserts that `out` is a verification failure at `seq` saying `why`.
fn assert_breaks_at(out: &Output, seq: i64, why: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "the tampered trail verified: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.contains(&format!("the audit trail breaks at seq {seq}:")),
        "expected a break at seq {seq}: {stderr}"
    );
    assert!(stderr.contains(why), "expected {why:?} in {stderr}");
}

#[test]
fn audit_verify_detects_rewritten_deleted_and_edited_rows_of_the_sqlite_file() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let names = ["north", "south", "west"];
    let url;
    {
        let server = server_process::serve_sqlite(root, ADMIN);
        url = server.url.clone();
        common::toy_ceremony(&url, ADMIN, &admin_identity(), &names, None, &|n| {
            keys_of(root, n)
        });
        let rounds = 2;
        study(&url, rounds);
        let mut agents = Killed(names.iter().map(|n| agent(&url, root, n)).collect());
        for c in agents.0.drain(..) {
            let out = c.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        // A head journaled after every round, and signed into the trail.
        let journal = std::fs::read_to_string(
            keys_of(root, "north")
                .join("studies/s")
                .join(fedhe_client::audit::AUDIT_HEADS_FILE),
        )
        .unwrap();
        // (The initial design's evaluations are secure sums too: more rounds on
        // the server than the method's.)
        let recorded = journal.lines().count();
        assert!(recorded >= rounds, "{journal}");
        let out = verify(&url, root);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains("the audit trail verifies"), "{stdout}");
        assert!(
            stdout.contains(&format!(
                "{recorded} recorded heads of mine and {} signed heads",
                recorded * 3
            )),
            "{stdout}"
        );
    }
    let trail = rows(&root.join("fedhe.db"));
    let heads = fedhe_client::audit::read_heads(&keys_of(root, "north").join("studies/s")).unwrap();
    let first_head = heads[0].seq;
    let seq_of = |action: &str| {
        trail
            .iter()
            .find(|(s, a)| a == action && *s < first_head)
            .unwrap_or_else(|| panic!("no {action} before seq {first_head}: {trail:?}"))
            .0
    };
    let next_after = |seq: i64| trail.iter().find(|(s, _)| *s > seq).unwrap().0;

    // The triggers refuse an edit while they stand.
    let db = copy_of(root, "triggers");
    let refused =
        std::panic::catch_unwind(|| tamper(&db.join("fedhe.db"), "UPDATE audit SET detail = 'x'"));
    assert!(
        refused.is_err(),
        "the append-only trigger let an update through"
    );

    // 1. A row's detail rewritten after its trigger was dropped.
    let rewritten = seq_of("contribution.accepted");
    let db = copy_of(root, "rewritten");
    tamper(
        &db.join("fedhe.db"),
        &format!("DROP TRIGGER audit_no_update; UPDATE audit SET detail = '1 bytes' WHERE seq = {rewritten}"),
    );
    let server = server_process::serve_sqlite(&db, ADMIN);
    assert_breaks_at(
        &verify(&server.url, root),
        rewritten,
        "the entry was rewritten",
    );
    drop(server);

    // 2. A row deleted: the next one of the ceremony no longer links.
    let deleted = seq_of("round.aggregated");
    let db = copy_of(root, "deleted");
    tamper(
        &db.join("fedhe.db"),
        &format!("DROP TRIGGER audit_no_delete; DELETE FROM audit WHERE seq = {deleted}"),
    );
    let server = server_process::serve_sqlite(&db, ADMIN);
    assert_breaks_at(
        &verify(&server.url, root),
        next_after(deleted),
        "an entry was deleted",
    );
    drop(server);

    // 3. Both triggers dropped, several rows edited, nothing recomputed:
    // the first edited row is named.
    let opened = seq_of("round.opened");
    let db = copy_of(root, "edited");
    tamper(
        &db.join("fedhe.db"),
        "DROP TRIGGER audit_no_update; DROP TRIGGER audit_no_delete; \
         UPDATE audit SET actor = 'admin' WHERE action = 'round.opened'; \
         UPDATE audit SET hash = NULL WHERE action = 'round.result_published'",
    );
    let server = server_process::serve_sqlite(&db, ADMIN);
    assert_breaks_at(
        &verify(&server.url, root),
        opened,
        "the entry was rewritten",
    );
    drop(server);

    // 4. A row rewritten and every later chain value (and the head table)
    // recomputed, as an operator who knows the layout would: the chain
    // holds, the member's first recorded head does not.
    let db = copy_of(root, "recomputed");
    let served: Vec<AuditEntry> = {
        let server = server_process::serve_sqlite(&db, ADMIN);
        let admin = Client::new(&server.url, Auth::Admin(ADMIN.to_string().into())).unwrap();
        admin.ceremony_audit("c", 0).unwrap().entries
    };
    let mut sql = String::from("DROP TRIGGER audit_no_update; ");
    let mut prev = fedhe_api::audit::genesis("c");
    for e in &served {
        let mut e = e.clone();
        if e.seq == rewritten {
            e.detail = Some("1 bytes".into());
            sql.push_str(&format!(
                "UPDATE audit SET detail = '1 bytes' WHERE seq = {rewritten}; "
            ));
        }
        let value = e.chain_value(&prev);
        sql.push_str(&format!(
            "UPDATE audit SET prev = X'{}', chain = X'{}' WHERE seq = {}; ",
            hex::encode(prev),
            hex::encode(value),
            e.seq
        ));
        prev = value;
    }
    sql.push_str(&format!(
        "UPDATE audit_heads SET chain = X'{}' WHERE ceremony = 'c'",
        hex::encode(prev)
    ));
    tamper(&db.join("fedhe.db"), &sql);
    let server = server_process::serve_sqlite(&db, ADMIN);
    // The first head at or after the rewritten row: this member's, or one a
    // member signed into the trail.
    let signed = served
        .iter()
        .filter_map(|e| fedhe_api::audit::signed_head_of(e).map(|(h, _)| h.seq));
    let expected = heads
        .iter()
        .map(|h| h.seq)
        .chain(signed)
        .filter(|s| *s >= rewritten)
        .min()
        .unwrap();
    assert!(expected <= first_head);
    assert_breaks_at(
        &verify(&server.url, root),
        expected,
        "rewritten since it was seen",
    );
    drop(server);
}
