//! The agent of one institution (issue 5, deliverable 5): it runs FBO-FedGP's
//! client role against the server — the same [`run_member`] code the
//! simulator's in-process federation runs, over [`NetworkSum`] — and evaluates
//! the institution's own objective by running a command.
//!
//! # Crash and resume
//!
//! Everything the agent must not redo or must redo identically is on its own
//! disk, in `KEYS/studies/STUDY/` (0700, like the key folder):
//!
//! | file | what |
//! | --- | --- |
//! | `agent.json` | the private seed of this member's randomness (created once) |
//! | `evaluations.jsonl` | every point evaluated and its value, appended and synced before use |
//! | `STUDY.R.contribution`, `STUDY.R.share`, `STUDY.R.result` | what [`MemberSession`] sent and received in round `R` |
//! | `progress.json` | the last finished round, for `fedhe agent status` |
//! | `agent.lock` | locked while an agent runs, so a second one is refused |
//!
//! A restarted agent replays the protocol from the start: the algorithm is
//! deterministic given its seeds, the rounds already finished return their
//! recorded results without a request, and the evaluations already made return
//! their journaled values without running the command again (a point that
//! differs from the journal's is an error: the study or the agent changed).
//! The round that was in flight resumes with the recorded ciphertext and
//! decryption share, which the server accepts idempotently.

use crate::keys::{self, KeyDir};
use crate::member::{verify_ceremony, MemberSession, NetworkSum};
use crate::{Client, ClientError};
use fedhe_algorithms::fbo_fedgp::{
    run_member, FboFedGpParams, Method, RoundEvent, SupportSelection, ValidParams,
};
use fedhe_algorithms::task::{ClientObjectives, Evaluation};
use fedhe_algorithms::{AlgorithmError, RunResult, Task};
use fedhe_bo::objectives::Sense;
use fedhe_crypto::MemberId;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The algorithm name of studies the agent runs.
pub const ALGORITHM: &str = "fbo-fedgp";
/// The agent's seed file.
pub const AGENT_FILE: &str = "agent.json";
/// The evaluation journal.
pub const JOURNAL_FILE: &str = "evaluations.jsonl";
/// The progress file.
pub const PROGRESS_FILE: &str = "progress.json";
/// The final result.
pub const RESULT_FILE: &str = "result.json";
/// Held (`flock`) while an agent runs.
pub const LOCK_FILE: &str = "agent.lock";

/// A study's algorithm configuration (`StudySpec::config` of an `fbo-fedgp`
/// study): the problem every institution evaluates on its own data, the
/// federation's public seed and the FBO-FedGP settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StudyConfig {
    /// A name for the objective (reports only).
    pub objective: String,
    /// Lower corner of the search box, one entry per dimension.
    pub lower: Vec<f64>,
    /// Upper corner of the search box.
    pub upper: Vec<f64>,
    /// `"minimise"` or `"maximise"`.
    pub sense: String,
    /// The optimum value when known (reports regret).
    #[serde(default)]
    pub optimum: Option<f64>,
    /// The federation's public seed (support-set starts, hyper-parameter
    /// candidates, local/global draws); not a secret.
    pub seed: u64,
    /// The algorithm's settings; `members` must be the ceremony's member count.
    pub fbo_fedgp: FboFedGpParams,
}

/// A [`StudyConfig`] that passed validation.
#[derive(Clone, Debug)]
pub struct ValidStudyConfig {
    /// The configuration.
    pub config: StudyConfig,
    /// Its sense.
    pub sense: Sense,
    /// The validated algorithm settings.
    pub params: ValidParams,
}

fn invalid(field: &str, reason: impl std::fmt::Display) -> ClientError {
    ClientError::Usage(format!("study config `{field}`: {reason}"))
}

impl StudyConfig {
    /// Checks the box, the sense and the settings against a ceremony of
    /// `members` members.
    pub fn validate(self, members: usize) -> Result<ValidStudyConfig, ClientError> {
        if self.lower.is_empty() || self.lower.len() != self.upper.len() {
            return Err(invalid(
                "lower/upper",
                format!(
                    "need one bound per dimension on each side, got {} and {}",
                    self.lower.len(),
                    self.upper.len()
                ),
            ));
        }
        for (j, (l, u)) in self.lower.iter().zip(&self.upper).enumerate() {
            if !(l.is_finite() && u.is_finite() && l < u) {
                return Err(invalid(
                    "lower/upper",
                    format!("dimension {j}: need finite lower < upper, got [{l}, {u}]"),
                ));
            }
        }
        let sense = match self.sense.as_str() {
            "minimise" => Sense::Minimise,
            "maximise" => Sense::Maximise,
            other => {
                return Err(invalid(
                    "sense",
                    format!("{other:?} is neither \"minimise\" nor \"maximise\""),
                ))
            }
        };
        if self.fbo_fedgp.members != members {
            return Err(invalid(
                "fbo_fedgp.members",
                format!(
                    "{} configured, but the ceremony has {members} members",
                    self.fbo_fedgp.members
                ),
            ));
        }
        let params = self
            .fbo_fedgp
            .clone()
            .validate()
            .map_err(|e| invalid("fbo_fedgp", e))?;
        if params.support_selection == SupportSelection::PaperClustering {
            return Err(invalid(
                "fbo_fedgp.support_selection",
                "\"paper-clustering\" pools every member's local centres in one place; \
                 over the network use \"secure-kmeans\" (the default) or \"random\"",
            ));
        }
        Ok(ValidStudyConfig {
            config: self,
            sense,
            params,
        })
    }
}

/// One journaled evaluation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct JournalEntry {
    x: Vec<f64>,
    y: f64,
}

/// The append-only journal of evaluations, replayed after a restart.
#[derive(Debug)]
struct Journal {
    path: PathBuf,
    entries: Vec<JournalEntry>,
    next: usize,
}

impl Journal {
    /// Loads the journal; a last line cut short by a crash is dropped (its
    /// evaluation runs again).
    fn open(path: PathBuf, repair: bool) -> Result<Self, ClientError> {
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(ClientError::Keys(format!("{}: {e}", path.display()))),
        };
        let mut entries = Vec::new();
        let mut valid_len = 0;
        for (i, line) in text.split_inclusive('\n').enumerate() {
            // An unterminated last line: the write was interrupted by a crash.
            if !line.ends_with('\n') {
                break;
            }
            let entry = serde_json::from_str::<JournalEntry>(line.trim_end()).map_err(|e| {
                ClientError::Decode(format!("{} line {}: {e}", path.display(), i + 1))
            })?;
            entries.push(entry);
            valid_len += line.len();
        }
        // Only the agent (holding the lock) repairs; a reader must not cut a
        // line the running agent is writing.
        if repair && valid_len < text.len() {
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .map_err(|e| ClientError::Keys(format!("{}: {e}", path.display())))?;
            f.set_len(valid_len as u64)
                .map_err(|e| ClientError::Keys(format!("{}: {e}", path.display())))?;
        }
        Ok(Self {
            path,
            entries,
            next: 0,
        })
    }

    /// The journaled value of the next evaluation, if it was made before the
    /// restart; an error if it was made at another point.
    fn replay(&mut self, x: &[f64]) -> Result<Option<f64>, AlgorithmError> {
        let Some(e) = self.entries.get(self.next) else {
            return Ok(None);
        };
        if e.x != x {
            return Err(AlgorithmError::Evaluation(format!(
                "evaluation {} of the journal {} was at {:?}, the replay asks for {:?}: \
                 the study or the agent changed since, and this member cannot resume the study",
                self.next + 1,
                self.path.display(),
                e.x,
                x
            )));
        }
        self.next += 1;
        Ok(Some(e.y))
    }

    /// Appends a new evaluation and syncs it before the value is used.
    fn record(&mut self, x: &[f64], y: f64) -> Result<(), AlgorithmError> {
        let fail = |e: std::io::Error| {
            AlgorithmError::Evaluation(format!("journal {}: {e}", self.path.display()))
        };
        let mut line = serde_json::to_string(&JournalEntry { x: x.to_vec(), y })
            .map_err(|e| AlgorithmError::Evaluation(e.to_string()))?;
        line.push('\n');
        use std::os::unix::fs::OpenOptionsExt;
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&self.path)
            .map_err(fail)?;
        f.write_all(line.as_bytes()).map_err(fail)?;
        f.sync_data().map_err(fail)?;
        self.entries.push(JournalEntry { x: x.to_vec(), y });
        self.next += 1;
        Ok(())
    }
}

/// The institution's objective: a command run by `sh -c` that reads the point
/// (in the study's box) as a JSON array on stdin and prints one number.
#[derive(Debug)]
pub struct CommandObjective {
    command: String,
    lower: Vec<f64>,
    upper: Vec<f64>,
    members: usize,
    index: usize,
    journal: Mutex<Journal>,
}

impl CommandObjective {
    /// The objective of member `index` of `members`, with its journal in `state`.
    fn new(
        command: &str,
        config: &StudyConfig,
        members: usize,
        index: usize,
        state: &Path,
    ) -> Result<Self, ClientError> {
        if command.trim().is_empty() {
            return Err(ClientError::Usage("the objective command is empty".into()));
        }
        Ok(Self {
            command: command.to_string(),
            lower: config.lower.clone(),
            upper: config.upper.clone(),
            members,
            index,
            journal: Mutex::new(Journal::open(state.join(JOURNAL_FILE), true)?),
        })
    }

    /// Runs the command at `x` (the study's box).
    fn run_command(&self, x: &[f64]) -> Result<f64, AlgorithmError> {
        use std::process::{Command, Stdio};
        let fail = |what: String| {
            AlgorithmError::Evaluation(format!("objective command `{}`: {what}", self.command))
        };
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(&self.command)
            // The institution's command (perhaps third-party code) never sees
            // the key folder's passphrase.
            .env_remove(crate::keys::PASSPHRASE_ENV)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| fail(format!("cannot start: {e}")))?;
        let point = serde_json::to_string(x).map_err(|e| fail(e.to_string()))?;
        if let Some(mut stdin) = child.stdin.take() {
            // A command that does not read its input may close stdin early.
            let _ = stdin.write_all(point.as_bytes());
        }
        let out = child
            .wait_with_output()
            .map_err(|e| fail(format!("cannot wait: {e}")))?;
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let tail: String = stderr
                .chars()
                .rev()
                .take(400)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            return Err(fail(format!("{} at {point}: {}", out.status, tail.trim())));
        }
        let text = String::from_utf8_lossy(&out.stdout);
        match text.trim().parse::<f64>() {
            Ok(y) if y.is_finite() => Ok(y),
            _ => Err(fail(format!(
                "printed {:?} at {point}, not one finite number",
                text.trim()
            ))),
        }
    }
}

impl ClientObjectives for CommandObjective {
    fn clients(&self) -> usize {
        self.members
    }

    fn evaluate(
        &self,
        client: usize,
        unit: &[f64],
        _rng: &mut ChaCha8Rng,
    ) -> Result<Evaluation, AlgorithmError> {
        if client != self.index {
            return Err(AlgorithmError::Evaluation(format!(
                "this agent evaluates for member {}, not {client}",
                self.index
            )));
        }
        let x: Vec<f64> = unit
            .iter()
            .zip(self.lower.iter().zip(&self.upper))
            .map(|(u, (l, h))| l + (h - l) * u)
            .collect();
        let mut journal = self
            .journal
            .lock()
            .map_err(|_| AlgorithmError::Evaluation("journal lock poisoned".into()))?;
        let y = match journal.replay(&x)? {
            Some(y) => y,
            None => {
                let y = self.run_command(&x)?;
                journal.record(&x, y)?;
                y
            }
        };
        Ok(Evaluation {
            observed: y,
            noise_free: y,
        })
    }
}

/// What `agent.json` holds.
#[derive(Serialize, Deserialize)]
struct AgentFile {
    study: String,
    member: String,
    /// The private seed of this member's randomness, hex.
    private_seed: String,
}

/// The last finished round, as `progress.json` records it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    /// The study.
    pub study: String,
    /// The member.
    pub member: String,
    /// Rounds configured.
    pub rounds: usize,
    /// The last finished round (0: initialisation).
    pub round: usize,
    /// This member's best value so far.
    pub best: f64,
    /// Whether the run finished.
    pub finished: bool,
}

/// Where an agent keeps its state for `study`.
pub fn state_dir(keys: &KeyDir, study: &str) -> PathBuf {
    keys.path().join("studies").join(study)
}

fn create_private_dir(path: &Path) -> Result<(), ClientError> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(path)
        .map_err(|e| ClientError::Keys(format!("{}: {e}", path.display())))
}

/// The private seed of this member in this study, created on first use.
fn private_seed(state: &Path, study: &str, member: &str) -> Result<u64, ClientError> {
    let path = state.join(AGENT_FILE);
    if !path.exists() {
        let mut seed = [0u8; 8];
        fedhe_ring::Csprng::from_entropy().fill_bytes(&mut seed);
        let file = AgentFile {
            study: study.into(),
            member: member.into(),
            private_seed: hex::encode(seed),
        };
        let bytes =
            serde_json::to_vec_pretty(&file).map_err(|e| ClientError::Decode(e.to_string()))?;
        keys::write_atomic(state, AGENT_FILE, &bytes, false)?;
    }
    let bytes =
        std::fs::read(&path).map_err(|e| ClientError::Keys(format!("{}: {e}", path.display())))?;
    let file: AgentFile = serde_json::from_slice(&bytes)
        .map_err(|e| ClientError::Decode(format!("{}: {e}", path.display())))?;
    if file.study != study || file.member != member {
        return Err(ClientError::Keys(format!(
            "{} belongs to member {} of study {}",
            path.display(),
            file.member,
            file.study
        )));
    }
    let seed: [u8; 8] = hex::decode(&file.private_seed)
        .ok()
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| {
            ClientError::Decode(format!(
                "{}: private_seed is not 8 hex bytes",
                path.display()
            ))
        })?;
    Ok(u64::from_le_bytes(seed))
}

/// What `fedhe agent run` needs.
#[derive(Debug)]
pub struct AgentOptions<'a> {
    /// The study.
    pub study: &'a str,
    /// The objective command.
    pub objective: &'a str,
    /// Accept an insecure (test-only) parameter set.
    pub allow_insecure: bool,
    /// How long one round may take.
    pub round_timeout: std::time::Duration,
}

/// What an agent run ends with.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AgentOutcome {
    /// The study's configuration.
    pub config: StudyConfig,
    /// This member's side of the run (`best` is this member's).
    pub result: RunResult,
}

/// Runs (or resumes) this member's side of an `fbo-fedgp` study: checks the
/// ceremony (its own share is in the transcript, the collective key is
/// recomputed), then runs [`run_member`] over [`NetworkSum`], calling
/// `on_round` after every round.
pub fn run_agent(
    client: Client,
    keys: &KeyDir,
    options: &AgentOptions<'_>,
    on_round: &mut dyn FnMut(&RoundEvent, &ValidStudyConfig),
) -> Result<AgentOutcome, ClientError> {
    let member_file: keys::MemberFile = serde_json::from_slice(&keys.read(keys::MEMBER_FILE)?)
        .map_err(|e| ClientError::Keys(format!("{}: {e}", keys::MEMBER_FILE)))?;
    let study = client.study(options.study)?;
    if study.spec.algorithm != ALGORITHM {
        return Err(ClientError::Usage(format!(
            "study {} runs {:?}; the agent runs {ALGORITHM:?}",
            options.study, study.spec.algorithm
        )));
    }
    if study.spec.ceremony != member_file.ceremony {
        return Err(ClientError::Usage(format!(
            "study {} uses ceremony {}, but {} holds keys of ceremony {}",
            options.study,
            study.spec.ceremony,
            keys.path().display(),
            member_file.ceremony
        )));
    }
    let own = keys.read(keys::PUBLIC_SHARE_FILE)?;
    let verified = verify_ceremony(
        &client,
        &study.spec.ceremony,
        Some((&member_file.member, &own)),
        options.allow_insecure,
    )?;
    let members = verified
        .transcript
        .entries
        .iter()
        .map(|e| MemberId::new(e.member.clone()))
        .collect::<Result<Vec<_>, _>>()?;
    let me = MemberId::new(member_file.member.clone())?;
    let index = members
        .iter()
        .position(|m| *m == me)
        .ok_or_else(|| ClientError::Verification(format!("{me} is not in the transcript")))?;
    let config: StudyConfig =
        serde_json::from_value(study.spec.config.clone()).map_err(|e| invalid("config", e))?;
    let valid = config.validate(members.len())?;

    let state = state_dir(keys, options.study);
    create_private_dir(&state)?;
    // One agent per member and study: a second would interleave the journal.
    // The operating system releases the lock when the process ends, however.
    let lock_path = state.join(LOCK_FILE);
    let lock = {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(&lock_path)
            .map_err(|e| ClientError::Keys(format!("{}: {e}", lock_path.display())))?
    };
    match lock.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            return Err(ClientError::Usage(format!(
                "another agent is running study {} with {}",
                options.study,
                keys.path().display()
            )))
        }
        Err(std::fs::TryLockError::Error(e)) => {
            return Err(ClientError::Keys(format!("{}: {e}", lock_path.display())))
        }
    }
    let private_seed = private_seed(&state, options.study, &member_file.member)?;
    let objective = CommandObjective::new(
        options.objective,
        &valid.config,
        members.len(),
        index,
        &state,
    )?;
    let task = Task::per_client(
        valid.config.objective.clone(),
        valid.config.lower.len(),
        valid.sense,
        valid.config.optimum,
        Arc::new(objective),
    );
    let secret = MemberSession::load_secret(keys, &verified.params)?;
    let mut session = MemberSession::new(
        client,
        &verified,
        secret,
        &state,
        study.spec.min_contributors as usize,
    )?;
    session.round_timeout = options.round_timeout;
    // The administrator's signature, and the hash recorded before the first
    // contribution: a spec changed or split by the server is refused.
    session.accept_study(&study)?;
    if study.spec.bound != valid.params.channel_bound {
        return Err(invalid(
            "fbo_fedgp.channel_bound",
            format!(
                "{} is not the study's signed bound {}",
                valid.params.channel_bound, study.spec.bound
            ),
        ));
    }
    let mut channel = NetworkSum::new(session, options.study, valid.params.channel_bound, 0);
    let write_progress = |round: usize, best: f64, finished: bool| {
        let p = Progress {
            study: options.study.to_string(),
            member: member_file.member.clone(),
            rounds: valid.params.rounds,
            round,
            best,
            finished,
        };
        if let Ok(bytes) = serde_json::to_vec_pretty(&p) {
            // Progress is informational; a failed write must not stop the run.
            let _ = keys::write_atomic(&state, PROGRESS_FILE, &bytes, true);
        }
    };
    let result = run_member(
        &task,
        Method::FboFedGp,
        &valid.params,
        &mut channel,
        &members,
        &me,
        valid.config.seed,
        private_seed,
        &mut |e| {
            write_progress(e.round, e.best_so_far, false);
            on_round(e, &valid);
        },
    )?;
    write_progress(result.rounds, result.best, true);
    let outcome = AgentOutcome {
        config: valid.config.clone(),
        result,
    };
    let bytes =
        serde_json::to_vec_pretty(&outcome).map_err(|e| ClientError::Decode(e.to_string()))?;
    keys::write_atomic(&state, RESULT_FILE, &bytes, true)?;
    Ok(outcome)
}

/// What `fedhe agent status` shows: the agent's own records of a study.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AgentStatus {
    /// The state folder.
    pub state_dir: String,
    /// Evaluations journaled.
    pub evaluations: usize,
    /// Rounds whose result this member holds.
    pub rounds_with_result: usize,
    /// The last progress record, if any round finished.
    pub progress: Option<Progress>,
}

/// Reads an agent's records of `study` from its key folder.
pub fn agent_status(keys: &KeyDir, study: &str) -> Result<AgentStatus, ClientError> {
    let state = state_dir(keys, study);
    if !state.is_dir() {
        return Err(ClientError::Usage(format!(
            "no agent state for study {study} in {} (has `fedhe agent run` started?)",
            keys.path().display()
        )));
    }
    let journal = Journal::open(state.join(JOURNAL_FILE), false)?;
    let suffix = ".result";
    let rounds_with_result = std::fs::read_dir(&state)
        .map_err(|e| ClientError::Keys(format!("{}: {e}", state.display())))?
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with(&format!("{study}.")) && name.ends_with(suffix)
        })
        .count();
    let progress = match std::fs::read(state.join(PROGRESS_FILE)) {
        Ok(bytes) => Some(
            serde_json::from_slice(&bytes)
                .map_err(|e| ClientError::Decode(format!("{PROGRESS_FILE}: {e}")))?,
        ),
        Err(_) => None,
    };
    Ok(AgentStatus {
        state_dir: state.display().to_string(),
        evaluations: journal.entries.len(),
        rounds_with_result,
        progress,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn config() -> StudyConfig {
        let mut p = FboFedGpParams::paper_defaults();
        p.members = 3;
        StudyConfig {
            objective: "sphere".into(),
            lower: vec![-2.0, 0.0],
            upper: vec![2.0, 10.0],
            sense: "minimise".into(),
            optimum: None,
            seed: 1,
            fbo_fedgp: p,
        }
    }

    #[test]
    fn study_configs_are_validated_with_named_fields() {
        assert!(config().validate(3).is_ok());
        let err = config().validate(4).unwrap_err().to_string();
        assert!(
            err.contains("fbo_fedgp.members") && err.contains("4 members"),
            "{err}"
        );
        let mut c = config();
        c.upper[1] = -1.0;
        let err = c.validate(3).unwrap_err().to_string();
        assert!(err.contains("dimension 1"), "{err}");
        let mut c = config();
        c.sense = "min".into();
        assert!(c.validate(3).unwrap_err().to_string().contains("sense"));
        let mut c = config();
        c.fbo_fedgp.support_selection = SupportSelection::PaperClustering;
        let err = c.validate(3).unwrap_err().to_string();
        assert!(err.contains("support_selection"), "{err}");
        let mut c = config();
        c.upper.pop();
        assert!(c.validate(3).unwrap_err().to_string().contains("2 and 1"));
    }

    #[test]
    fn the_command_sees_the_point_in_the_box_and_the_journal_replays_it() {
        let dir = tempfile::tempdir().unwrap();
        let counter = dir.path().join("calls");
        // Sum of squares of the JSON array, counting calls in a file.
        let cmd = format!(
            "echo x >> {}; python3 -c 'import json,sys; print(sum(v*v for v in json.load(sys.stdin)))'",
            counter.display()
        );
        let obj = CommandObjective::new(&cmd, &config(), 3, 1, dir.path()).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let e = obj.evaluate(1, &[0.75, 0.5], &mut rng).unwrap();
        // (−2 + 4·0.75)² + (10·0.5)² = 1 + 25.
        assert!((e.observed - 26.0).abs() < 1e-12, "{e:?}");
        assert!(
            obj.evaluate(0, &[0.5, 0.5], &mut rng).is_err(),
            "another member's objective"
        );
        drop(obj);
        // A restart replays the journal without running the command again.
        let obj = CommandObjective::new(&cmd, &config(), 3, 1, dir.path()).unwrap();
        assert_eq!(
            obj.evaluate(1, &[0.75, 0.5], &mut rng).unwrap().observed,
            26.0
        );
        assert_eq!(
            std::fs::read_to_string(&counter).unwrap().lines().count(),
            1
        );
        // A different point than the journal's: the replay diverged.
        let obj = CommandObjective::new(&cmd, &config(), 3, 1, dir.path()).unwrap();
        let err = obj
            .evaluate(1, &[0.5, 0.5], &mut rng)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("replay") && err.contains("evaluation 1"),
            "{err}"
        );
    }

    #[test]
    fn a_failing_or_chatty_command_is_an_error_that_says_what_it_printed() {
        let dir = tempfile::tempdir().unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        for (cmd, expect) in [
            ("echo boom >&2; exit 3", "boom"),
            ("echo 'loss: 0.3'", "not one finite number"),
            ("echo nan", "not one finite number"),
        ] {
            let sub = dir
                .path()
                .join(expect.len().to_string() + cmd.len().to_string().as_str());
            std::fs::create_dir_all(&sub).unwrap();
            let obj = CommandObjective::new(cmd, &config(), 3, 0, &sub).unwrap();
            let err = obj
                .evaluate(0, &[0.1, 0.2], &mut rng)
                .unwrap_err()
                .to_string();
            assert!(err.contains(expect), "{cmd}: {err}");
            // Nothing was journaled.
            assert_eq!(
                Journal::open(sub.join(JOURNAL_FILE), false)
                    .unwrap()
                    .entries
                    .len(),
                0
            );
        }
        assert!(CommandObjective::new("  ", &config(), 3, 0, dir.path()).is_err());
    }

    #[test]
    fn a_journal_line_cut_by_a_crash_is_dropped_and_a_corrupt_one_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(JOURNAL_FILE);
        std::fs::write(&path, "{\"x\":[1.0],\"y\":2.0}\n{\"x\":[0.5],\"y\"").unwrap();
        // A reader leaves the file alone; the agent repairs it.
        let j = Journal::open(path.clone(), false).unwrap();
        assert_eq!(j.entries.len(), 1);
        assert!(std::fs::read_to_string(&path).unwrap().ends_with("\"y\""));
        let j = Journal::open(path.clone(), true).unwrap();
        assert_eq!(
            j.entries,
            vec![JournalEntry {
                x: vec![1.0],
                y: 2.0
            }]
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"x\":[1.0],\"y\":2.0}\n"
        );
        std::fs::write(&path, "garbage\n{\"x\":[1.0],\"y\":2.0}\n").unwrap();
        let err = Journal::open(path, false).unwrap_err().to_string();
        assert!(err.contains("line 1"), "{err}");
    }
}
