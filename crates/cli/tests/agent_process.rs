//! The institution's agent as real processes on loopback (issue 5,
//! deliverables 5-7): the networked `fedhe demo`, and an agent killed with
//! `kill -9` in the middle of a study that resumes from its own records
//! without evaluating any point twice.

#[allow(dead_code)] // each test binary uses its own part of the helpers
mod common;
mod server_process;

use common::fedhe;
use fedhe_api::{SignedStudySpec, StudySpec};
use fedhe_client::{Auth, Client};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const ADMIN: &str = "agent-test-admin";

use common::Killed;

/// `fedhe serve` on a loopback port with an SQLite file under `root`.
fn serve(root: &std::path::Path) -> server_process::ServerProcess {
    server_process::serve_sqlite(root, ADMIN)
}

fn last_json_line(stdout: &[u8]) -> serde_json::Value {
    let text = String::from_utf8_lossy(stdout);
    serde_json::from_str(text.lines().last().expect("some output")).expect("a JSON line")
}

#[test]
fn the_demo_runs_a_server_and_five_agent_processes_and_improves_on_the_centre() {
    // The default parameter set (n = 8192, 124-bit q), 15 rounds, as in the
    // README; its folder kept to search the server's files afterwards.
    let root = tempfile::tempdir().unwrap();
    let work = root.path().join("demo");
    let out = fedhe(&["demo", "--json", "--workdir", work.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "stdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = last_json_line(&out.stdout);
    assert_eq!(v["rounds"], 15, "{v}");
    let (best, centre, optimum) = (
        v["best"].as_f64().unwrap(),
        v["centre_value"].as_f64().unwrap(),
        v["optimum"].as_f64().unwrap(),
    );
    assert!(
        best < centre,
        "best {best} is not below the centre's {centre}"
    );
    assert!(best >= optimum, "best {best} below the optimum {optimum}");
    assert!(v["bytes_sent"].as_u64().unwrap() > 5 * 100_000, "{v}");
    // Five agents' progress and a ceremony on the real parameter set.
    assert!(stdout.contains("n8192-q124") && stdout.contains("all 5 institutions joined"));
    assert!(stdout.contains("member-01: round 15/15"), "{stdout}");
    // Private by default: every release within ε = 4 per member, reported
    // each round and at the end.
    let spent = v["epsilon"].as_f64().expect("the demo reports its ε");
    assert!(spent > 0.0 && spent <= 4.0 + 1e-9, "{v}");
    assert!(stdout.contains("privacy loss ε = "), "{stdout}");
    assert!(
        stdout.contains("Privacy: ε = 4 per institution"),
        "{stdout}"
    );
    // The server learns no released value (issue 44): every round's result,
    // as each member decoded and recorded it, appears nowhere in the
    // server's database, its write-ahead log or its log, neither as the
    // text a JSON encoder writes nor as the f64's bytes.
    let (searched, results) = server_holds_no_result(&work);
    assert!(
        results >= 5 && results % 5 == 0,
        "{results} result records: every member records every release"
    );
    assert!(searched > results * 10, "{searched} values searched");
}

/// Searches the server's files of a demo folder for every value the
/// members recorded as a round's result (`*.result` in their state
/// folders); panics naming a value found. Returns how many values and how
/// many result records were searched.
fn server_holds_no_result(work: &Path) -> (usize, usize) {
    let mut server = Vec::new();
    for name in ["fedhe.db", "fedhe.db-wal", "server.log"] {
        if let Ok(bytes) = std::fs::read(work.join(name)) {
            server.extend_from_slice(&bytes);
            server.push(0);
        }
    }
    assert!(server.len() > 100_000, "the server's database is there");
    let mut records = Vec::new();
    let mut stack = vec![work.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "result") {
                records.push(path);
            }
        }
    }
    // Every needle (a value's JSON text and its f64 bytes) with the record it
    // came from, all found in one Aho-Corasick pass over the server's bytes
    // (a search per value took six minutes; a pass per needle length with a
    // hash lookup per window, about a minute).
    let mut needles: Vec<(Vec<u8>, String)> = Vec::new();
    let mut searched = 0;
    for record in &records {
        let values: Vec<f64> = serde_json::from_slice(&std::fs::read(record).unwrap()).unwrap();
        for v in values {
            // A value with few digits ("0", "1.5") could be any number's text.
            let text = serde_json::to_string(&v).unwrap();
            if text.len() < 10 {
                continue;
            }
            searched += 1;
            let of = format!("{text}, a value of {}", record.display());
            needles.push((v.to_le_bytes().to_vec(), format!("the bytes of {of}")));
            needles.push((text.into_bytes(), of));
        }
    }
    let search = aho_corasick::AhoCorasick::new(needles.iter().map(|(n, _)| n)).unwrap();
    if let Some(found) = search.find(&server[..]) {
        panic!("the server's files hold {}", needles[found.pattern()].1);
    }
    // The search finds what it looks for: a recorded value planted in the
    // server's bytes is found.
    let mut planted = server.clone();
    planted.extend_from_slice(&needles[needles.len() / 2].0);
    assert!(
        search.find(&planted[..]).is_some(),
        "a planted value is found"
    );
    (searched, records.len())
}

fn keys_of(root: &Path, name: &str) -> PathBuf {
    root.join("keys").join(name)
}

/// A toy ceremony of `names`, joined by `fedhe ceremony join` processes.
fn ceremony(url: &str, root: &Path, names: &[&str]) {
    ceremony_with(url, root, names, None)
}

/// As [`ceremony`], t-of-n when `threshold` is given.
fn ceremony_with(url: &str, root: &Path, names: &[&str], threshold: Option<u32>) {
    common::toy_ceremony(url, ADMIN, &admin_identity(), names, threshold, &|n| {
        keys_of(root, n)
    });
}

fn study(url: &str, id: &str, members: usize, rounds: usize) {
    study_with(url, id, members, rounds, 3, 600)
}

/// As [`study`] with a quorum and a round deadline (seconds).
fn study_with(
    url: &str,
    id: &str,
    members: usize,
    rounds: usize,
    min_contributors: u32,
    round_timeout_secs: u64,
) {
    let admin = Client::new(url, Auth::Admin(ADMIN.to_string().into())).unwrap();
    let config = serde_json::json!({
        "objective": "cec2005-f1",
        "lower": [-100.0, -100.0],
        "upper": [100.0, 100.0],
        "sense": "minimise",
        "optimum": -450.0,
        "seed": 5,
        "fbo_fedgp": {
            "members": members,
            "rounds": rounds,
            "initial_points": 3,
            "support_size": 6,
            "acq_candidates": 200,
        },
    });
    let spec = StudySpec {
        id: id.into(),
        ceremony: "c".into(),
        algorithm: "fbo-fedgp".into(),
        config,
        min_contributors,
        round_timeout_secs,
        decrypt_timeout_secs: 600,
        bound: 1024.0,
        precision: fedhe_api::ValuePrecision::TwoLimb,
        round_cap: None,
    };
    admin
        .create_study(&SignedStudySpec::sign(spec, &admin_identity()))
        .unwrap();
}

/// The administrator's signing identity (a fixed test key).
fn admin_identity() -> fedhe_api::Identity {
    fedhe_api::Identity::from_seed(&[42; 32])
}

/// `fedhe agent run` for `name`, whose objective appends the point it is
/// called with to `NAME.calls` at every evaluation and takes a little time.
fn agent(url: &str, root: &Path, name: &str, study: &str) -> Child {
    let calls = root.join(format!("{name}.calls"));
    let objective = format!(
        "p=$(cat); echo \"$p\" >> '{}'; sleep 0.1; echo \"$p\" | exec '{}' objective value --function cec2005-f1 --dim 2",
        calls.display(),
        env!("CARGO_BIN_EXE_fedhe")
    );
    Command::new(env!("CARGO_BIN_EXE_fedhe"))
        .args(["agent", "run", "--server", url, "--study", study, "--json"])
        .args(["--allow-insecure", "--objective", &objective, "--keys"])
        .arg(keys_of(root, name))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn progress_round(root: &Path, name: &str, study: &str) -> Option<u64> {
    let path = keys_of(root, name)
        .join("studies")
        .join(study)
        .join("progress.json");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).ok()?).ok()?;
    v["round"].as_u64()
}

#[test]
fn an_agent_killed_mid_study_resumes_and_evaluates_no_point_twice() {
    let root = tempfile::tempdir().unwrap();
    let server = serve(root.path());
    let url = server.url.clone();
    let names = ["north", "south", "west"];
    ceremony(&url, root.path(), &names);
    let rounds = 8;
    study(&url, "s", 3, rounds);

    // A study whose settings do not fit the ceremony is refused with a reason.
    study(&url, "bad", 4, rounds);
    let out = fedhe(&[
        "agent",
        "run",
        "--server",
        &url,
        "--study",
        "bad",
        "--allow-insecure",
        "--objective",
        "echo 1",
        "--keys",
        &keys_of(root.path(), "north").display().to_string(),
    ]);
    common::assert_fails_with(&out, "settings.members");

    // The member's own policy: a floor of 4 refuses a study with quorum 3
    // (from the flag, and from the key folder's policy.toml), before it
    // opens or contributes to any round.
    let north = keys_of(root.path(), "north").display().to_string();
    let with_policy = |extra: &[&str]| {
        let mut args = vec![
            "agent",
            "run",
            "--server",
            &url,
            "--study",
            "s",
            "--allow-insecure",
            "--objective",
            "echo 1",
            "--keys",
            &north,
        ];
        args.extend_from_slice(extra);
        fedhe(&args)
    };
    // A privacy ceiling refuses a noise-free study.
    let out = with_policy(&["--max-epsilon", "4"]);
    common::assert_fails_with(&out, "max_epsilon");
    common::assert_fails_with(&out, "releases noise-free sums");
    let out = with_policy(&["--min-contributors", "4"]);
    common::assert_fails_with(&out, "min_contributors");
    common::assert_fails_with(&out, "I require at least 4");
    let policy = keys_of(root.path(), "north").join("policy.toml");
    std::fs::write(&policy, "min_contributors = 4\n").unwrap();
    std::fs::set_permissions(&policy, std::fs::Permissions::from_mode(0o600)).unwrap();
    common::assert_fails_with(&with_policy(&[]), "I require at least 4");
    let out = with_policy(&["--parameter-set", "n8192-q124"]);
    common::assert_fails_with(&out, "the ceremony uses toy-n1024");
    // Refused by its policy, the member wrote nothing for the study.
    let state = keys_of(root.path(), "north").join("studies").join("s");
    assert!(!state.exists(), "{} was made", state.display());
    std::fs::remove_file(&policy).unwrap();
    let admin = Client::new(&url, Auth::Admin(ADMIN.to_string().into())).unwrap();
    assert_eq!(
        admin.study("s").unwrap().latest_round,
        0,
        "a round was opened"
    );

    let mut others = Killed(
        names[1..]
            .iter()
            .map(|n| agent(&url, root.path(), n, "s"))
            .collect(),
    );
    let mut victim = agent(&url, root.path(), "north", "s");
    let start = Instant::now();
    let wait_for_round = |round: u64, victim: &mut Child| {
        while progress_round(root.path(), "north", "s").unwrap_or(0) < round {
            assert!(start.elapsed() < Duration::from_secs(300), "no progress");
            assert!(
                victim.try_wait().unwrap().is_none(),
                "the agent ended early"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    wait_for_round(1, &mut victim);
    // A second agent for the same member and study is refused while one runs.
    let twin = agent(&url, root.path(), "north", "s")
        .wait_with_output()
        .unwrap();
    common::assert_fails_with(&twin, "another agent is running study s");
    wait_for_round(3, &mut victim);
    victim.kill().unwrap(); // SIGKILL
    victim.wait().unwrap();
    let killed_at = progress_round(root.path(), "north", "s").unwrap();
    assert!(killed_at < rounds as u64, "killed after the end");

    let resumed = agent(&url, root.path(), "north", "s");
    let outputs: Vec<_> = std::iter::once(resumed)
        .chain(others.0.drain(..))
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    for out in &outputs {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v = last_json_line(&out.stdout);
        assert_eq!(v["rounds"], rounds, "{v}");
        // Every member saw the same secure sums.
        assert_eq!(
            v["aggregations"],
            last_json_line(&outputs[0].stdout)["aggregations"]
        );
    }
    // Three initial points and one per round, each evaluated once although
    // the agent ran twice: no point whose value was journaled is evaluated
    // again. The one evaluation the kill may have cut short (its value never
    // journaled) runs again, so at most one call is extra, and it repeats a
    // point. (Counted by calls, not by distinct values: the optimiser may
    // propose the same point, a corner of the box, in two rounds.)
    // A line that is not a point is a call the kill cut off before the
    // agent wrote the point to its stdin (the orphaned shell logs an empty
    // `$p`, as in one CI run): nothing was evaluated there.
    let calls = std::fs::read_to_string(root.path().join("north.calls")).unwrap();
    let mut called: Vec<&str> = calls
        .lines()
        .filter(|l| serde_json::from_str::<Vec<f64>>(l).is_ok())
        .collect();
    let total = called.len();
    called.sort();
    called.dedup();
    assert!(
        (3 + rounds..=3 + rounds + 1).contains(&total),
        "killed at round {killed_at}: {total} calls for {} points: {calls}",
        3 + rounds
    );
    assert!(
        total == 3 + rounds || called.len() < total,
        "killed at round {killed_at}: the extra call evaluated a new point: {calls}"
    );
    let status = fedhe(&[
        "agent",
        "status",
        "--study",
        "s",
        "--server",
        &url,
        "--keys",
        &keys_of(root.path(), "north").display().to_string(),
    ]);
    let v = common::json_stdout(&status);
    assert_eq!(v["evaluations"], 3 + rounds, "{v}");
    assert_eq!(v["progress"]["finished"], true, "{v}");
    assert_eq!(v["progress"]["round"], rounds, "{v}");
    assert!(
        v["server_latest_round"].as_u64().unwrap() >= rounds as u64,
        "{v}"
    );
}

/// `fedhe agent ask` for `name`.
fn ask(url: &str, root: &Path, name: &str, study: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_fedhe"));
    c.args(["agent", "ask", "--server", url, "--study", study])
        .args(["--allow-insecure", "--keys"])
        .arg(keys_of(root, name))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// `fedhe agent tell` for `name`.
fn tell(root: &Path, name: &str, study: &str, value: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_fedhe"))
        .args([
            "agent", "tell", "--study", study, "--value", value, "--keys",
        ])
        .arg(keys_of(root, name))
        .output()
        .unwrap()
}

/// The value of CEC-2005 F1 at `point`, by `fedhe objective value` (what the
/// other members' agents run as their command).
fn f1(point: &serde_json::Value) -> f64 {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_fedhe"))
        .args([
            "objective",
            "value",
            "--function",
            "cec2005-f1",
            "--dim",
            "2",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(point.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

/// Issue 18: one member evaluates by ask and tell (a lab measurement, a job
/// on a scheduler) while two run their command. An `ask` is killed with
/// `kill -9` while it runs the study between a tell and the next point, and
/// another is asked again while a point waits; the study finishes for all
/// three, and the asking member's journal holds exactly one evaluation per
/// ask, each the value it was told.
#[test]
fn a_member_evaluating_by_ask_and_tell_survives_kill_9_and_the_study_finishes() {
    let root = tempfile::tempdir().unwrap();
    let server = serve(root.path());
    let url = server.url.clone();
    let names = ["north", "south", "west"];
    ceremony(&url, root.path(), &names);
    let rounds = 3;
    study(&url, "at", 3, rounds);
    let mut others = Killed(
        names[1..]
            .iter()
            .map(|n| agent(&url, root.path(), n, "at"))
            .collect(),
    );
    let mut told = Vec::new();
    let mut killed = false;
    let start = Instant::now();
    loop {
        assert!(start.elapsed() < Duration::from_secs(300), "no end");
        if told.len() == 2 && !killed {
            // Between a tell and the next point: the asking agent runs the
            // study's rounds, and dies mid-way.
            let mut running = ask(&url, root.path(), "north", "at").spawn().unwrap();
            std::thread::sleep(Duration::from_millis(700));
            running.kill().unwrap(); // SIGKILL
            running.wait().unwrap();
            killed = true;
        }
        let out = ask(&url, root.path(), "north", "at").output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v = last_json_line(&out.stdout);
        if v["finished"] == true {
            assert_eq!(v["rounds"], rounds, "{v}");
            break;
        }
        assert_eq!(v["evaluation"], told.len() + 1, "{v}");
        if told.is_empty() {
            // Asking again while a point waits hands out the same point.
            let again = ask(&url, root.path(), "north", "at").output().unwrap();
            assert_eq!(last_json_line(&again.stdout), v);
        }
        let y = f1(&v["point"]);
        if told.is_empty() {
            // Issue 45, finding 8: a value the channel cannot carry is
            // refused before it is journaled, and the seat goes on with the
            // real value.
            let beyond = tell(root.path(), "north", "at", "1e308");
            common::assert_fails_with(&beyond, "is beyond ±");
            common::assert_fails_with(&beyond, "nothing was journaled");
        }
        let receipt = tell(root.path(), "north", "at", &y.to_string());
        assert!(
            receipt.status.success(),
            "{}",
            String::from_utf8_lossy(&receipt.stderr)
        );
        assert_eq!(last_json_line(&receipt.stdout)["recorded"], true);
        if told.is_empty() {
            // The same answer again is a no-op; another one is refused.
            let repeat = tell(root.path(), "north", "at", &y.to_string());
            assert_eq!(last_json_line(&repeat.stdout)["recorded"], false);
            let other = tell(root.path(), "north", "at", "12345");
            common::assert_fails_with(&other, "no point of study at waits for a value");
        }
        told.push((v["point"].clone(), y));
    }
    assert!(killed, "the study ended before the kill");
    for out in others
        .0
        .drain(..)
        .map(|c| c.wait_with_output().unwrap())
        .collect::<Vec<_>>()
    {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(last_json_line(&out.stdout)["rounds"], rounds);
    }
    let journal =
        std::fs::read_to_string(keys_of(root.path(), "north").join("studies/at/evaluations.jsonl"))
            .unwrap();
    let entries: Vec<serde_json::Value> = journal
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(entries.len(), told.len(), "{journal}");
    // One line per ask, in order: with each ask numbered one past the
    // values told before it (checked above), a point handed out again after
    // the kill, or a tell journaled twice, breaks this. Equal `x` on two
    // lines is not such a repeat: the optimiser may propose a point again
    // (a clipped box corner, in one CI run) and it is then asked again.
    for (e, (point, y)) in entries.iter().zip(&told) {
        assert_eq!(&e["x"], point, "{journal}");
        assert_eq!(e["y"].as_f64().unwrap(), *y, "{journal}");
    }
}

/// t-of-n over real agent processes (issue 15): five agents on a 3-of-5
/// ceremony, quorum 3, a round closing at a 2-second deadline without the
/// absent. Two agents are killed with `kill -9` (just after a round of
/// theirs finished), the other three go on without them (rounds with three
/// contributions, decrypted by three), and the two, restarted, rejoin from
/// their journals: every agent finishes every round.
#[test]
fn a_three_of_five_study_survives_two_agents_killed_and_they_rejoin() {
    let root = tempfile::tempdir().unwrap();
    let server = serve(root.path());
    let url = server.url.clone();
    let names = ["a1", "a2", "a3", "a4", "a5"];
    ceremony_with(&url, root.path(), &names, Some(3));
    let rounds = 6;
    study_with(&url, "s", names.len(), rounds, 3, 2);
    let mut agents = Killed(
        names
            .iter()
            .map(|n| agent(&url, root.path(), n, "s"))
            .collect(),
    );
    let start = Instant::now();
    let progress = |name: &str| progress_round(root.path(), name, "s").unwrap_or(0);
    let wait_until = |what: &str, done: &dyn Fn() -> bool| {
        while !done() {
            assert!(start.elapsed() < Duration::from_secs(400), "{what}");
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    // Killed right after a round of theirs finished (while they evaluate
    // their next point), not between a claim and a decryption share.
    let mut killed_at = Vec::new();
    for i in [3, 4] {
        wait_until("the victims reach round 2", &|| progress(names[i]) >= 2);
        agents.0[i].kill().unwrap();
        agents.0[i].wait().unwrap();
        killed_at.push(progress(names[i]));
    }
    let last = *killed_at.iter().max().unwrap();
    assert!(last + 2 < rounds as u64, "killed too late: {killed_at:?}");
    // The three others go on alone for two rounds.
    wait_until("the survivors go on without the victims", &|| {
        names[..3].iter().all(|n| progress(n) >= last + 2)
    });
    for i in [3, 4] {
        agents.0[i] = agent(&url, root.path(), names[i], "s");
    }
    let outputs: Vec<_> = agents
        .0
        .drain(..)
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    for (name, out) in names.iter().zip(&outputs) {
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v = last_json_line(&out.stdout);
        assert_eq!(v["rounds"], rounds, "{name}: {v}");
    }
    // Rounds really ran without the victims: some had three contributions,
    // and every round was decrypted by a set of three.
    let admin = Client::new(&url, Auth::Admin(ADMIN.to_string().into())).unwrap();
    let latest = admin.study("s").unwrap().latest_round;
    let mut three = 0;
    for r in 1..=latest {
        let st = admin.round("s", r, Duration::ZERO, None).unwrap();
        assert_eq!(st.state, fedhe_api::RoundState::Done, "{st:?}");
        assert_eq!(st.decrypting_set.len(), 3, "{st:?}");
        assert_eq!(st.shares.len(), 3, "{st:?}");
        if st.received == 3 {
            three += 1;
        }
    }
    assert!(three >= 2, "{three} rounds with three contributions");
}

/// Issue 45, finding 5: in a 2-of-3 study one member (a3) opens round 1
/// before the others start and commits nothing, and opens round 2 as soon as
/// round 1 has failed; both fail at their deadlines. The two others, started
/// after that, retry the first sum under round 3 and finish every round of
/// the study together (an agent before the fix exited 2, "round 1 failed",
/// on every restart). Restarted, an agent replays the failed rounds from
/// its records and ends where it ended.
#[test]
fn a_member_that_opens_rounds_and_goes_silent_does_not_stop_a_two_of_three_study() {
    let root = tempfile::tempdir().unwrap();
    let server = serve(root.path());
    let url = server.url.clone();
    let names = ["a1", "a2", "a3"];
    ceremony_with(&url, root.path(), &names, Some(2));
    let rounds = 3;
    study_with(&url, "s", names.len(), rounds, 2, 2);
    let admin = Client::new(&url, Auth::Admin(ADMIN.to_string().into())).unwrap();
    let identity = fedhe_client::keys::KeyDir::open(keys_of(root.path(), "a3"))
        .unwrap()
        .read_identity()
        .unwrap();
    let silent = Client::new(
        &url,
        Auth::Member {
            id: "a3".into(),
            identity: std::sync::Arc::new(identity),
        },
    )
    .unwrap();
    let start = Instant::now();
    for round in [1, 2] {
        silent.open_round("s", round).unwrap();
        while admin.round("s", round, Duration::ZERO, None).unwrap().state
            != fedhe_api::RoundState::Failed
        {
            assert!(start.elapsed() < Duration::from_secs(60), "round {round}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    let run = |name: &str| {
        let out = agent(&url, root.path(), name, "s")
            .wait_with_output()
            .unwrap();
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v = last_json_line(&out.stdout);
        assert_eq!(v["rounds"], rounds, "{name}: {v}");
        // The operator is told of each retry.
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("round 2 failed (the commitment deadline passed")
                && err.contains("retrying its sum as round 3"),
            "{name}: {err}"
        );
        v
    };
    let finished: Vec<serde_json::Value> = std::thread::scope(|s| {
        let handles: Vec<_> = ["a1", "a2"]
            .into_iter()
            .map(|n| s.spawn(move || run(n)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let latest = admin.study("s").unwrap().latest_round;
    assert!(latest > 2, "{latest}");
    for r in 1..=latest {
        let st = admin.round("s", r, Duration::ZERO, None).unwrap();
        if r <= 2 {
            assert_eq!(st.state, fedhe_api::RoundState::Failed, "{st:?}");
            assert_eq!(st.received, 0, "{st:?}");
        } else if st.state == fedhe_api::RoundState::Done {
            assert_eq!(st.received, 2, "{st:?}");
        }
    }
    let state = |name: &str| keys_of(root.path(), name).join("studies").join("s");
    for name in ["a1", "a2"] {
        for r in [1, 2] {
            let reason = std::fs::read_to_string(state(name).join(format!("s.{r}.failed")))
                .unwrap_or_else(|e| panic!("{name}: no record of round {r}'s failure: {e}"));
            assert!(reason.contains("deadline"), "{name}: {reason}");
        }
        assert!(!state(name).join("s.1.result").exists(), "{name}");
    }
    // Restarted, each agent replays the failures from its records and ends
    // with the same result, without a new round.
    let calls = std::fs::read_to_string(root.path().join("a1.calls")).unwrap();
    let again = run("a1");
    assert_eq!(
        again["best"], finished[0]["best"],
        "{again} vs {}",
        finished[0]
    );
    assert_eq!(
        std::fs::read_to_string(root.path().join("a1.calls")).unwrap(),
        calls,
        "the restarted agent evaluated again"
    );
    assert_eq!(admin.study("s").unwrap().latest_round, latest);
}
