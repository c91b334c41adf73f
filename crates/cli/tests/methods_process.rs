//! Every method as a study over the network (issue 17, item 3): for
//! FBO-FedGP, FTS, DP-FTS-DE, an LDP-BO learner and Fed-PNE, a real
//! `fedhe serve` and three `fedhe agent run` processes run a study, and each
//! member evaluates exactly the points, in order, with the same values, that
//! its client evaluates in the in-process simulation of the same method with
//! the same seeds over the same encrypted channel (`HeSum`, same parameter
//! set, bound and precision). The methods are deterministic given their
//! seeds and the decrypted sums, and the sums are exact, so the comparison
//! is bit for bit.

#[allow(dead_code)] // each test binary uses its own part of the helpers
mod common;
mod server_process;

use common::fedhe;
use fedhe_api::{SignedStudySpec, StudySpec};
use fedhe_client::{Auth, Client};
use fedhe_crypto::{CeremonyId, HeSum, MemberId, ParameterSet, Precision, RoundId, SecureSum};
use fedhe_ring::Csprng;
use fedhe_tasks::{Evaluation, Problem, Task, TaskError};
use rand_chacha::ChaCha8Rng;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

const ADMIN: &str = "methods-test-admin";
const MEMBERS: [&str; 3] = ["m1", "m2", "m3"];
const SEED: u64 = 11;
const PARAMS: &str = "toy-n1024";

use common::Killed;

fn admin_identity() -> fedhe_api::Identity {
    fedhe_api::Identity::from_seed(&[43; 32])
}

fn keys_of(root: &Path, name: &str) -> PathBuf {
    root.join("keys").join(name)
}

/// A toy ceremony of [`MEMBERS`], joined by `fedhe ceremony join` processes.
fn ceremony(url: &str, root: &Path) {
    common::toy_ceremony(url, ADMIN, &admin_identity(), &MEMBERS, None, &|n| {
        keys_of(root, n)
    });
}

/// The objective every member evaluates (its own copy: the same function).
fn base_task() -> Task {
    fedhe_tasks::by_name("garland", 1, 0).unwrap()
}

/// What the members evaluate: the Garland function on a box, or (issue 46)
/// a mixed typed space of a log float, an int and a categorical, whose
/// objective reads named values.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Objective {
    Garland,
    Mixed,
}

/// The mixed space (issue 46): what `fedhe study create --space` reads.
fn mixed_space() -> serde_json::Value {
    serde_json::json!({"params": [
        {"name": "lr", "type": "float", "low": 1e-5, "high": 0.1, "log": true},
        {"name": "depth", "type": "int", "low": 2, "high": 12},
        {"name": "kernel", "type": "categorical", "choices": ["rbf", "poly", "linear"]},
    ]})
}

/// The mixed objective at named values; [`MIXED_COMMAND`] computes the same
/// in Python, operation for operation, so the values agree bit for bit.
fn mixed_value(p: &serde_json::Map<String, serde_json::Value>) -> f64 {
    let a = 100.0 * p["lr"].as_f64().unwrap() - 0.3;
    let d = p["depth"].as_f64().unwrap() - 7.0;
    let penalty = match p["kernel"].as_str().unwrap() {
        "rbf" => 0.0,
        "poly" => 0.5,
        _ => 1.0,
    };
    a * a + 0.1 * (d * d) + penalty
}

/// The member's objective command for [`Objective::Mixed`]: it reads the
/// JSON object of named values on stdin.
const MIXED_COMMAND: &str = "python3 -c 'import json,sys; p=json.load(sys.stdin); \
    a=100.0*p[\"lr\"]-0.3; d=p[\"depth\"]-7.0; \
    print(repr(a*a+0.1*(d*d)+{\"rbf\":0.0,\"poly\":0.5,\"linear\":1.0}[p[\"kernel\"]]))'";

/// The study's configuration: the public problem and the method's settings.
fn study_config(settings: serde_json::Value) -> serde_json::Value {
    study_config_on(Objective::Garland, settings)
}

/// [`study_config`] for `objective`.
fn study_config_on(objective: Objective, settings: serde_json::Value) -> serde_json::Value {
    if objective == Objective::Mixed {
        return serde_json::json!({
            "objective": "mixed",
            "space": mixed_space(),
            "sense": "minimise",
            "seed": SEED,
            "settings": settings,
        });
    }
    let task = base_task();
    serde_json::json!({
        "objective": "garland",
        "lower": task.to_domain(&[0.0]),
        "upper": task.to_domain(&[1.0]),
        "sense": task.sense().as_str(),
        "optimum": task.optimum(),
        "seed": SEED,
        "settings": settings,
    })
}

/// Creates study `id` running `method` with `settings`.
fn create_study(url: &str, id: &str, method: &str, settings: &serde_json::Value) -> f64 {
    create_study_on(Objective::Garland, url, id, method, settings)
}

/// [`create_study`] for `objective`.
fn create_study_on(
    objective: Objective,
    url: &str,
    id: &str,
    method: &str,
    settings: &serde_json::Value,
) -> f64 {
    let configured = fedhe_algorithms::configure(method, settings.clone()).unwrap();
    let admin = Client::new(url, Auth::Admin(ADMIN.to_string().into())).unwrap();
    let spec = StudySpec {
        id: id.into(),
        ceremony: "c".into(),
        algorithm: method.into(),
        config: study_config_on(objective, settings.clone()),
        min_contributors: MEMBERS.len() as u32,
        round_timeout_secs: 600,
        decrypt_timeout_secs: 600,
        bound: configured.channel_bound(),
        precision: fedhe_api::ValuePrecision::TwoLimb,
        round_cap: None,
    };
    admin
        .create_study(&SignedStudySpec::sign(spec, &admin_identity()))
        .unwrap();
    configured.channel_bound()
}

/// Gives member `index` the private seed the simulator gives it, by writing
/// the agent's seed file before its first run (an agent creates it from
/// entropy otherwise).
fn seed_agent(root: &Path, name: &str, index: usize, study: &str) {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let dir = keys_of(root, name).join("studies").join(study);
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .unwrap();
    let seed = fedhe_algorithms::method::simulated_private_seed(SEED, index);
    let file = serde_json::json!({
        "study": study,
        "member": name,
        "private_seed": hex::encode(seed.expose_bytes()),
    });
    let mut f = std::fs::OpenOptions::new()
        .create_new(true)
        .write(true)
        .mode(0o600)
        .open(dir.join("agent.json"))
        .unwrap();
    std::io::Write::write_all(&mut f, file.to_string().as_bytes()).unwrap();
}

fn agent(url: &str, root: &Path, name: &str, study: &str) -> Child {
    agent_with_delay(url, root, name, study, 0.0)
}

/// `fedhe agent run` for `name`, its objective taking `delay` seconds more.
fn agent_with_delay(url: &str, root: &Path, name: &str, study: &str, delay: f64) -> Child {
    agent_on(Objective::Garland, url, root, name, study, delay)
}

/// [`agent_with_delay`] evaluating `objective`.
fn agent_on(
    objective: Objective,
    url: &str,
    root: &Path,
    name: &str,
    study: &str,
    delay: f64,
) -> Child {
    let objective = match objective {
        Objective::Garland => format!(
            "sleep {delay}; exec '{}' objective value --function garland --dim 1",
            env!("CARGO_BIN_EXE_fedhe")
        ),
        Objective::Mixed => format!("sleep {delay}; {MIXED_COMMAND}"),
    };
    Command::new(env!("CARGO_BIN_EXE_fedhe"))
        .args(["agent", "run", "--server", url, "--study", study, "--json"])
        .args(["--allow-insecure", "--objective", &objective, "--keys"])
        .arg(keys_of(root, name))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// One evaluation: the point in the objective's box and its value.
type Evaluated = (Vec<f64>, f64);

/// The member's journal.
fn journal(root: &Path, name: &str, study: &str) -> Vec<Evaluated> {
    let path = keys_of(root, name)
        .join("studies")
        .join(study)
        .join("evaluations.jsonl");
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let x = v["x"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_f64().unwrap())
                .collect();
            (x, v["y"].as_f64().unwrap())
        })
        .collect()
}

/// Every client's copy of the base objective, recording each evaluation an
/// algorithm makes for a client (not the simulator's diagnostics, which ask
/// [`Problem::noise_free`]).
#[derive(Debug)]
struct Recorder {
    base: Task,
    /// The typed space of [`Objective::Mixed`]: the point is then the unit
    /// point, as the agent journals it, and the value [`mixed_value`]'s.
    space: Option<Arc<fedhe_tasks::Space>>,
    log: Mutex<Vec<Vec<Evaluated>>>,
}

impl Problem for Recorder {
    fn clients(&self) -> usize {
        MEMBERS.len()
    }

    fn evaluate(
        &self,
        client: usize,
        unit: &[f64],
        rng: &mut ChaCha8Rng,
    ) -> Result<Evaluation, TaskError> {
        if let Some(space) = &self.space {
            let e = Evaluation::exact(mixed_value(&space.decode(unit)));
            self.log.lock().unwrap()[client].push((unit.to_vec(), e.noise_free));
            return Ok(e);
        }
        let e = self.base.evaluate(0, unit, rng)?;
        // The agent maps a unit point to the box as the task does.
        self.log.lock().unwrap()[client].push((self.base.to_domain(unit), e.noise_free));
        Ok(e)
    }

    fn noise_free(
        &self,
        _client: usize,
        unit: &[f64],
        rng: &mut ChaCha8Rng,
    ) -> Result<f64, TaskError> {
        if let Some(space) = &self.space {
            return Ok(mixed_value(&space.decode(unit)));
        }
        self.base.noise_free(0, unit, rng)
    }
}

/// A channel that keeps every sum it returns.
struct RecordingSum<C> {
    inner: C,
    sums: Vec<Vec<f64>>,
}

impl<C: SecureSum> SecureSum for RecordingSum<C> {
    fn sum(
        &mut self,
        round: RoundId,
        contributions: Vec<(MemberId, Vec<f64>)>,
    ) -> Result<Vec<f64>, fedhe_crypto::ChannelError> {
        let sum = self.inner.sum(round, contributions)?;
        self.sums.push(sum.clone());
        Ok(sum)
    }

    fn bytes_per_round(&self, member: &MemberId, len: usize) -> u64 {
        self.inner.bytes_per_round(member, len)
    }
}

/// What the simulation did: each client's evaluations, every decrypted sum
/// in order, and the result.
struct Simulated {
    evaluations: Vec<Vec<Evaluated>>,
    sums: Vec<Vec<f64>>,
    result: fedhe_algorithms::RunResult,
}

/// The in-process simulation of `method` with the study's seeds over `HeSum`.
fn simulate(
    objective: Objective,
    method: &str,
    settings: &serde_json::Value,
    bound: f64,
) -> Simulated {
    let base = base_task();
    let space = (objective == Objective::Mixed).then(|| {
        Arc::new(
            serde_json::from_value::<fedhe_tasks::SpaceSpec>(mixed_space())
                .unwrap()
                .validate()
                .unwrap(),
        )
    });
    let recorder = Arc::new(Recorder {
        base: base.clone(),
        space: space.clone(),
        log: Mutex::new(vec![Vec::new(); MEMBERS.len()]),
    });
    let task = match &space {
        None => Task::per_client(
            "garland",
            1,
            base.sense(),
            Some(base.optimum()),
            recorder.clone(),
        ),
        Some(space) => Task::per_client(
            "mixed",
            space.dim(),
            fedhe_tasks::Sense::Minimise,
            None,
            recorder.clone(),
        )
        .with_space(Arc::clone(space))
        .unwrap(),
    };
    let members: Vec<MemberId> = MEMBERS.iter().map(|m| MemberId::new(*m).unwrap()).collect();
    let params = ParameterSet::by_name(PARAMS)
        .unwrap()
        .validate(fedhe_crypto::InsecurePolicy::Allow)
        .unwrap();
    let he = HeSum::new(
        params,
        &CeremonyId::new("sim").unwrap(),
        members.clone(),
        bound,
        Csprng::from_entropy(),
    )
    .unwrap()
    .with_precision(Precision::TwoLimb)
    .unwrap();
    let mut channel = RecordingSum {
        inner: he,
        sums: Vec::new(),
    };
    let configured = fedhe_algorithms::configure(method, settings.clone()).unwrap();
    let result = fedhe_algorithms::method::simulate(
        configured.as_ref(),
        &task,
        &mut channel,
        &members,
        SEED,
    )
    .unwrap();
    let evaluations = recorder.log.lock().unwrap().clone();
    Simulated {
        evaluations,
        sums: channel.sums,
        result,
    }
}

/// The sums member `name` decrypted, round by round (its `STUDY.R.result` records).
fn decrypted_sums(root: &Path, name: &str, study: &str, rounds: usize) -> Vec<Vec<f64>> {
    let dir = keys_of(root, name).join("studies").join(study);
    (1..=rounds)
        .map(|r| {
            let bytes = std::fs::read(dir.join(format!("{study}.{r}.result"))).unwrap();
            serde_json::from_slice(&bytes).unwrap()
        })
        .collect()
}

/// Runs `method` as a study of three agent processes and compares each
/// member with the simulation; returns the agents' final JSON lines.
fn study_equals_simulation(method: &str, settings: serde_json::Value) -> Vec<serde_json::Value> {
    run_study(Objective::Garland, method, settings, None)
}

/// The last round `name`'s agent recorded as finished.
fn progress_round(root: &Path, name: &str, study: &str) -> Option<u64> {
    let path = keys_of(root, name)
        .join("studies")
        .join(study)
        .join("progress.json");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).ok()?).ok()?;
    v["round"].as_u64()
}

/// [`study_equals_simulation`]; with `kill_after = Some(r)`, the first
/// member's agent is killed with `kill -9` once it finished round `r` and
/// started again (every evaluation then takes 0.2 s, so the kill lands
/// mid-study).
fn run_study(
    objective: Objective,
    method: &str,
    settings: serde_json::Value,
    kill_after: Option<u64>,
) -> Vec<serde_json::Value> {
    let root = tempfile::tempdir().unwrap();
    let server = server_process::serve_sqlite(root.path(), ADMIN);
    let url = server.url.clone();
    ceremony(&url, root.path());
    let study = format!("study-{method}");
    let bound = create_study_on(objective, &url, &study, method, &settings);
    for (i, name) in MEMBERS.iter().enumerate() {
        seed_agent(root.path(), name, i, &study);
    }
    let delay = if kill_after.is_some() { 0.2 } else { 0.0 };
    let mut agents = Killed(
        MEMBERS
            .iter()
            .map(|n| agent_on(objective, &url, root.path(), n, &study, delay))
            .collect(),
    );
    if let Some(round) = kill_after {
        let started = std::time::Instant::now();
        while progress_round(root.path(), MEMBERS[0], &study).is_none_or(|r| r < round) {
            assert!(
                started.elapsed() < std::time::Duration::from_secs(120),
                "{method}: round {round} never finished"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        agents.0[0].kill().unwrap(); // SIGKILL
        agents.0[0].wait().unwrap();
        let at = progress_round(root.path(), MEMBERS[0], &study).unwrap();
        let rounds = settings["rounds"].as_u64().unwrap();
        assert!(at < rounds, "{method}: killed after the study ended");
        agents.0[0] = agent_on(objective, &url, root.path(), MEMBERS[0], &study, delay);
    }
    let mut lines = Vec::new();
    for (child, name) in agents.0.iter_mut().zip(MEMBERS) {
        let out = std::mem::replace(
            child,
            Command::new("true").spawn().unwrap(), // placeholder, reaped on drop
        )
        .wait_with_output()
        .unwrap();
        assert!(
            out.status.success(),
            "{method}: agent {name} failed\nstdout: {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout);
        let line: serde_json::Value =
            serde_json::from_str(text.lines().last().expect("a JSON line")).unwrap();
        lines.push(line);
    }
    let simulated = simulate(objective, method, &settings, bound);
    let result = &simulated.result;
    assert!(result.aggregations > 0, "{method} aggregated nothing");
    assert_eq!(simulated.sums.len(), result.aggregations);
    for (i, name) in MEMBERS.iter().enumerate() {
        let networked = journal(root.path(), name, &study);
        assert!(
            networked.len() > 3,
            "{method}: {name} evaluated only {} points",
            networked.len()
        );
        assert_eq!(
            networked, simulated.evaluations[i],
            "{method}: member {name}'s evaluations differ from its simulated client's"
        );
        if objective == Objective::Mixed {
            // The command was given the named values the journal records
            // beside each unit point, and they are the point's decoding.
            let space = serde_json::from_value::<fedhe_tasks::SpaceSpec>(mixed_space())
                .unwrap()
                .validate()
                .unwrap();
            let path = keys_of(root.path(), name)
                .join("studies")
                .join(&study)
                .join("evaluations.jsonl");
            for (line, (x, y)) in std::fs::read_to_string(path)
                .unwrap()
                .lines()
                .zip(&networked)
            {
                let entry: serde_json::Value = serde_json::from_str(line).unwrap();
                let params = entry["params"].as_object().expect("named values");
                assert_eq!(params, &space.decode(x), "{method}: {line}");
                // The method evaluated the point that stands for the values
                // (an integer at its cell's centre, a choice at its vertex).
                assert_eq!(&space.canonical(x), x, "{method}: {line}");
                assert_eq!(mixed_value(params), *y, "{method}: {line}");
                assert!(params["depth"].is_i64() && params["kernel"].is_string());
            }
        }
        assert_eq!(
            decrypted_sums(root.path(), name, &study, result.aggregations),
            simulated.sums,
            "{method}: member {name}'s decrypted sums differ from the simulation's"
        );
        assert_eq!(lines[i]["rounds"], result.rounds, "{method}: {}", lines[i]);
        assert_eq!(
            lines[i]["aggregations"], result.aggregations,
            "{method}: {}",
            lines[i]
        );
    }
    // The privacy loss a DP method spent, in the agent's status and its
    // final line, is the simulation's.
    let spent = result.epsilon.as_ref().and_then(|e| e.last().copied());
    for (i, name) in MEMBERS.iter().enumerate() {
        assert_eq!(
            lines[i]["epsilon"].as_f64(),
            spent,
            "{method}: {}",
            lines[i]
        );
        let dir = keys_of(root.path(), name).display().to_string();
        let out = fedhe(&["agent", "status", "--keys", &dir, "--study", &study]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(status["progress"]["finished"], true, "{status}");
        assert_eq!(status["progress"]["epsilon"].as_f64(), spent, "{status}");
    }
    drop(server);
    lines
}

fn rff_settings() -> serde_json::Value {
    serde_json::json!({
        "members": 3,
        "rounds": 4,
        "initial_points": 2,
        "features": 20,
        "lengthscale": 0.1,
        "acq_candidates": 100,
        "acq_polish": 1,
        "acq_iters": 10,
        "gp_prior_features": 50,
    })
}

#[test]
fn fbo_fedgp_as_a_study_equals_its_simulation() {
    study_equals_simulation(
        "fbo-fedgp",
        serde_json::json!({
            "members": 3,
            "rounds": 4,
            "initial_points": 3,
            "support_size": 6,
            "acq_candidates": 200,
        }),
    );
}

#[test]
fn a_private_fbo_fedgp_study_equals_its_simulation_and_reports_epsilon() {
    // The private recipe (fedhe_algorithms::fbo_fedgp::private): each
    // agent's noise shares come from its private seed, so its journal and
    // the decrypted sums equal the simulation's bit for bit.
    let mut settings = fedhe_algorithms::FboFedGpParams {
        members: 3,
        rounds: 4,
        initial_points: 3,
        ..fedhe_algorithms::FboFedGpParams::paper_defaults()
    };
    settings.support.size = 6;
    settings.acquisition.candidates = 200;
    settings.hypers.lengthscale = Some(0.5);
    let settings = settings.private(4.0);
    let lines = study_equals_simulation("fbo-fedgp", serde_json::to_value(settings).unwrap());
    let epsilon = lines[0]["epsilon"]
        .as_f64()
        .expect("a private study spends ε");
    assert!(epsilon > 0.0 && epsilon <= 4.0 + 1e-9, "{}", lines[0]);
}

/// Issue 46: a study of a typed space (a log float, an int, a categorical)
/// whose members' commands read named values equals its simulation bit for
/// bit, for FBO-FedGP and FTS.
#[test]
fn studies_of_a_typed_space_equal_their_simulations() {
    run_study(
        Objective::Mixed,
        "fbo-fedgp",
        serde_json::json!({
            "members": 3,
            "rounds": 4,
            "initial_points": 3,
            "support_size": 6,
            "acq_candidates": 200,
        }),
        None,
    );
    run_study(Objective::Mixed, "fts", rff_settings(), None);
}

#[test]
fn fts_as_a_study_equals_its_simulation() {
    study_equals_simulation("fts", rff_settings());
}

#[test]
fn dp_fts_de_with_distributed_noise_as_a_study_equals_its_simulation_and_reports_epsilon() {
    let mut settings = rff_settings();
    settings["subregions"] = 2.into();
    settings["noise"] = "distributed".into();
    let lines = study_equals_simulation("dp-fts-de", settings);
    let epsilon = lines[0]["epsilon"].as_f64().expect("a DP method spends ε");
    assert!(epsilon > 0.0 && epsilon.is_finite(), "{}", lines[0]);
}

#[test]
fn an_ldp_bo_learner_as_a_study_equals_its_simulation_and_reports_epsilon() {
    let lines = study_equals_simulation(
        "ldp-tgp-ucb",
        serde_json::json!({
            "members": 3,
            "rounds": 8,
            "grid_points": 30,
            "epsilon": 1.0,
            "rkhs_bound": 1.0,
        }),
    );
    assert!(lines[0]["epsilon"].as_f64().is_some(), "{}", lines[0]);
}

#[test]
fn fed_pne_as_a_study_equals_its_simulation() {
    study_equals_simulation(
        "fed-pne",
        serde_json::json!({
            "members": 3,
            "rounds": 40,
            "noise_std": 0.1,
        }),
    );
}

#[test]
fn a_dp_fts_de_agent_killed_mid_study_resumes_and_still_equals_the_simulation() {
    // Equality with the simulation after the restart means the restarted
    // agent evaluated no point twice and replayed its noise shares exactly.
    let mut settings = rff_settings();
    settings["subregions"] = 2.into();
    settings["noise"] = "distributed".into();
    settings["rounds"] = 6.into();
    run_study(Objective::Garland, "dp-fts-de", settings, Some(2));
}

#[test]
fn a_method_a_member_cannot_run_alone_is_refused_with_the_setting_named() {
    let root = tempfile::tempdir().unwrap();
    let server = server_process::serve_sqlite(root.path(), ADMIN);
    ceremony(&server.url, root.path());
    let mut settings = rff_settings();
    settings["noise"] = "central".into();
    create_study(&server.url, "central", "dp-fts-de", &settings);
    let out = agent(&server.url, root.path(), MEMBERS[0], "central")
        .wait_with_output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("noise") && stderr.contains("distributed"),
        "{stderr}"
    );
    // `study create` compares the settings' federation with the ceremony's
    // before it signs anything.
    let mut four = rff_settings();
    four["members"] = 4.into();
    let out = Command::new(env!("CARGO_BIN_EXE_fedhe"))
        .args(["study", "create", "--server", &server.url, "--id", "s4"])
        .args([
            "--ceremony",
            "c",
            "--min-contributors",
            "3",
            "--algorithm",
            "fts",
        ])
        .args(["--admin-keys", "/nonexistent/admin-keys", "--config"])
        .arg(study_config(four).to_string())
        .env("FEDHE_ADMIN_TOKEN", ADMIN)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("settings.members") && stderr.contains("ceremony c has 3 members"),
        "{stderr}"
    );
}

#[test]
fn study_create_refuses_a_method_the_agents_cannot_run_before_anything_is_sent() {
    // No server listens on port 9 and no admin key exists: the refusals come
    // from the method's settings, before the key is read or a request sent.
    let create = |method: &str, settings: serde_json::Value| {
        let config = study_config(settings).to_string();
        fedhe(&[
            "study",
            "create",
            "--server",
            "http://127.0.0.1:9",
            "--allow-plain-http",
            "--admin-keys",
            "/nonexistent/admin-keys",
            "--id",
            "s",
            "--ceremony",
            "c",
            "--min-contributors",
            "3",
            "--algorithm",
            method,
            "--config",
            &config,
        ])
    };
    let mut central = rff_settings();
    central["noise"] = "central".into();
    for (method, settings, expected) in [
        ("dp-fts-de", central, "distributed"),
        ("fbo-fedgpp", rff_settings(), "unknown method"),
        (
            "independent-bo",
            serde_json::json!({ "members": 3, "rounds": 4, "initial_points": 3, "support_size": 6 }),
            "run it alone",
        ),
        ("fts", serde_json::json!({ "members": 3 }), "rounds"),
        (
            "ldp-tgp-ucb",
            serde_json::json!({ "members": 3, "rounds": 4, "epsilon": 1.0 }),
            "rkhs_bound",
        ),
    ] {
        let out = create(method, settings);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{method}");
        assert!(stderr.contains(expected), "{method}: {stderr}");
        assert!(!stderr.contains("admin-keys"), "{method}: {stderr}");
    }
}
