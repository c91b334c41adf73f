//! The agent of one institution (issue 5, deliverable 5; every method since
//! issue 17): it runs the study's method — any of the registry
//! ([`fedhe_algorithms::configure`]) that aggregates — for this member alone
//! ([`Roster::member`]), the same code the simulator's in-process federation
//! runs, over [`NetworkSum`], and evaluates the institution's own objective
//! by running a command.
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
//! | `agent.lock` | locked while an agent (or a `tell`) runs, so a second one is refused |
//! | `pending.json` | the point `fedhe agent ask` handed out, until `tell` journals its value |
//!
//! # Ask and tell
//!
//! With [`Evaluator::Ask`] the agent stops at the first point its journal
//! cannot answer, writes it to `pending.json` and returns it
//! ([`ask_agent`]); [`tell_agent`] journals the value (synced) and removes
//! the file; the next ask replays the study from the start as a restarted
//! agent would, the journal answering every point told so far. Both are
//! crash-safe at every step (a point is journaled once, or not at all), and
//! `run` and `ask` share one code path: only where a new value comes from
//! differs.
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
use crate::policy::MemberPolicy;
use crate::{Client, ClientError};
use fedhe_algorithms::{
    AlgorithmError, FederatedMethod, PrivateSeed, Roster, RoundProgress, RunResult,
};
use fedhe_crypto::MemberId;
use fedhe_tasks::{Evaluation, Problem, Sense, Task, TaskError};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

mod ask_tell;
mod journal;
mod objective;

pub use ask_tell::{agent_status, ask_agent, tell_agent, AgentStatus, Asked, TellReceipt, Told};
use journal::{Journal, JournalEntry};
#[cfg(test)]
use objective::drain;
pub use objective::{Evaluator, PendingPoint};
use objective::{MemberObjective, ASKED};

/// The method a study runs when it names none (`fedhe study create`'s default).
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
/// The point `fedhe agent ask` handed out, until `tell` journals its value.
pub const PENDING_FILE: &str = "pending.json";

/// A study's algorithm configuration (`StudySpec::config`): the problem every
/// institution evaluates on its own data, the federation's public seed and
/// the settings of the method `StudySpec::algorithm` names.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StudyConfig {
    /// A name for the objective (reports only).
    pub objective: String,
    /// Lower corner of the search box, one entry per dimension (a box of
    /// unnamed floats; empty when `space` is given).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lower: Vec<f64>,
    /// Upper corner of the search box.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub upper: Vec<f64>,
    /// The typed, named search space (issue 46), instead of the box: the
    /// objective receives a JSON object of named values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub space: Option<fedhe_tasks::SpaceSpec>,
    /// `"minimise"` or `"maximise"`.
    pub sense: String,
    /// The optimum value when known (reports regret).
    #[serde(default)]
    pub optimum: Option<f64>,
    /// The federation's public seed (support-set starts, hyper-parameter
    /// candidates, local/global draws); not a secret.
    pub seed: u64,
    /// The method's settings (its parameters as `fedhe simulate`'s
    /// `[algorithm]` table names them); `members` must be the ceremony's
    /// member count. Studies written before issue 17 call it `fbo_fedgp`.
    #[serde(alias = "fbo_fedgp")]
    pub settings: serde_json::Value,
}

/// A [`StudyConfig`] that passed validation.
#[derive(Clone, Debug)]
pub struct ValidStudyConfig {
    /// The configuration.
    pub config: StudyConfig,
    /// Its sense.
    pub sense: Sense,
    /// The method, configured and validated.
    pub method: std::sync::Arc<dyn FederatedMethod>,
    /// The validated typed space, when the config has one.
    pub space: Option<Arc<fedhe_tasks::Space>>,
}

fn invalid(field: &str, reason: impl std::fmt::Display) -> ClientError {
    ClientError::Usage(format!("study config `{field}`: {reason}"))
}

impl ValidStudyConfig {
    /// The dimension of the unit cube the method searches: the space's
    /// encoding, or the box's.
    pub fn dim(&self) -> usize {
        match &self.space {
            Some(space) => space.dim(),
            None => self.config.lower.len(),
        }
    }

    /// What the objective receives for the cube point `unit`: the named
    /// values of the space as a JSON object, or the box point as an array.
    pub fn point(&self, unit: &[f64]) -> serde_json::Value {
        match &self.space {
            Some(space) => serde_json::Value::Object(space.decode(unit)),
            None => self
                .config
                .lower
                .iter()
                .zip(&self.config.upper)
                .zip(unit)
                .map(|((l, h), u)| l + (h - l) * u)
                .collect::<Vec<f64>>()
                .into(),
        }
    }

    /// Refuses, naming the setting, settings whose privacy argument needs
    /// more contributors than a study that decrypts rounds with
    /// `min_contributors` of `members` has
    /// ([`FederatedMethod::check_contributors`]).
    pub fn check_contributors(
        &self,
        min_contributors: usize,
        members: usize,
    ) -> Result<(), ClientError> {
        self.method
            .check_contributors(min_contributors, members)
            .map_err(|e| invalid("settings", e))
    }
}

impl StudyConfig {
    /// Checks the box, the sense and the settings of `method` against a
    /// ceremony of `members` members, and that a member can run the method
    /// alone over the network.
    pub fn validate(self, method: &str, members: usize) -> Result<ValidStudyConfig, ClientError> {
        let valid = self.check(method)?;
        if valid.method.members() != members {
            return Err(invalid(
                "settings.members",
                format!(
                    "{} configured, but the ceremony has {members} members",
                    valid.method.members()
                ),
            ));
        }
        Ok(valid)
    }

    /// [`StudyConfig::validate`] short of the ceremony: the box, the sense,
    /// the settings of `method`, and that a member can run it alone over the
    /// network (what `fedhe study create` checks before it asks the server).
    pub fn check(self, method: &str) -> Result<ValidStudyConfig, ClientError> {
        let space = match &self.space {
            Some(_) if !(self.lower.is_empty() && self.upper.is_empty()) => {
                return Err(invalid(
                    "lower/upper",
                    "a study with a `space` has no box: give one or the other",
                ))
            }
            Some(spec) => Some(Arc::new(
                spec.clone().validate().map_err(|e| invalid("space", e))?,
            )),
            None => None,
        };
        if space.is_none() && (self.lower.is_empty() || self.lower.len() != self.upper.len()) {
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
        let sense = Sense::from_name(&self.sense).ok_or_else(|| {
            invalid(
                "sense",
                format!("{:?} is neither \"minimise\" nor \"maximise\"", self.sense),
            )
        })?;
        let configured = fedhe_algorithms::configure(method, self.settings.clone())
            .map_err(|e| invalid("settings", e))?;
        configured
            .check_networked()
            .map_err(|e| invalid("settings", e))?;
        if space.is_some() && !configured.takes_space() {
            return Err(invalid(
                "space",
                format!(
                    "method {} cannot search a typed space (it searches a fixed grid or a \
                     partition of a box of floats): give `lower` and `upper`",
                    configured.name()
                ),
            ));
        }
        Ok(ValidStudyConfig {
            config: self,
            sense,
            method: configured.into(),
            space,
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
    /// This member's best value so far (the Thompson-sampling family: its
    /// simple regret, or its best value when the optimum is unknown).
    pub best: f64,
    /// The privacy loss ε spent so far, for differentially private methods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epsilon: Option<f64>,
    /// Whether the run finished.
    pub finished: bool,
    /// The study's sense (`minimise` or `maximise`), which orders the
    /// journal's values for [`AgentStatus::best_evaluation`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sense: Option<String>,
}

/// This member's best evaluation in its journal: the point, the named
/// values it stands for in a typed space, and the value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BestEvaluation {
    /// The point (in the study's box, or the unit cube of a typed space).
    pub x: Vec<f64>,
    /// The named values, in a study with a typed space.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<serde_json::Map<String, serde_json::Value>>,
    /// The value the objective gave.
    pub value: f64,
}

/// Where an agent keeps its state for `study`: a folder of the key folder
/// named by the study id, which must be a plain path component (1 to 64
/// characters from `A-Z a-z 0-9 . _ -`, not `.` or `..`), so that no study
/// id (`/abs/path`, `../x`) puts a file outside the key folder (issue 45,
/// finding 12).
pub fn state_dir(keys: &KeyDir, study: &str) -> Result<PathBuf, ClientError> {
    let plain = (1..=64).contains(&study.len())
        && study
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        && study != "."
        && study != "..";
    if !plain {
        return Err(ClientError::Usage(format!(
            "study id {} is not 1 to 64 characters from A-Z a-z 0-9 . _ - (nor . or ..)",
            fedhe_crypto::text::quote(study, 64)
        )));
    }
    Ok(keys.path().join("studies").join(study))
}

fn create_private_dir(path: &Path) -> Result<(), ClientError> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(path)
        .map_err(|e| ClientError::Keys(format!("{}: {e}", path.display())))
}

/// The private seed of this member in this study, created on first use:
/// 32 bytes from the operating system's entropy. A folder an older agent
/// made holds an 8-byte seed, which is still read (its study replays as
/// before) but gives its noise only 64 bits of entropy.
fn private_seed(state: &Path, study: &str, member: &str) -> Result<PrivateSeed, ClientError> {
    let path = state.join(AGENT_FILE);
    if !path.exists() {
        let mut seed = zeroize::Zeroizing::new([0u8; 32]);
        fedhe_ring::Csprng::from_entropy().fill_bytes(seed.as_mut());
        let file = AgentFile {
            study: study.into(),
            member: member.into(),
            private_seed: hex::encode(seed.as_slice()),
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
    let bytes = zeroize::Zeroizing::new(
        fedhe_api::signing::decode_hex(&file.private_seed).unwrap_or_default(),
    );
    if let Ok(seed) = <[u8; 32]>::try_from(bytes.as_slice()) {
        return Ok(PrivateSeed::from_bytes(seed));
    }
    if let Ok(legacy) = <[u8; 8]>::try_from(bytes.as_slice()) {
        return Ok(PrivateSeed::from(u64::from_le_bytes(legacy)));
    }
    Err(ClientError::Decode(format!(
        "{}: private_seed is not 32 hex bytes",
        path.display()
    )))
}

/// What `fedhe agent run` needs.
#[derive(Debug)]
pub struct AgentOptions<'a> {
    /// The study.
    pub study: &'a str,
    /// How this member evaluates a point.
    pub evaluator: Evaluator<'a>,
    /// Accept an insecure (test-only) parameter set.
    pub allow_insecure: bool,
    /// How long one round may take.
    pub round_timeout: std::time::Duration,
    /// Policy settings given on the command line; they replace those of the
    /// key folder's [`crate::policy::POLICY_FILE`].
    pub policy: MemberPolicy,
}

/// What an agent run ends with.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AgentOutcome {
    /// The study's configuration.
    pub config: StudyConfig,
    /// This member's side of the run (`best` is this member's).
    pub result: RunResult,
}

/// Runs (or resumes) this member's side of a study: checks the ceremony
/// (its own share is in the transcript, the collective key is recomputed),
/// then runs the study's method for this member alone over [`NetworkSum`],
/// calling `on_round` after every round.
pub fn run_agent(
    client: Client,
    keys: &KeyDir,
    options: &AgentOptions<'_>,
    on_round: &mut dyn FnMut(&RoundProgress, &ValidStudyConfig),
) -> Result<AgentOutcome, ClientError> {
    let member_file = keys.read_member_file()?;
    let study = client.study(options.study)?;
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
    let valid = config.validate(&study.spec.algorithm, members.len())?;
    valid.check_contributors(study.spec.min_contributors as usize, members.len())?;
    // The member's own policy, before anything is written, evaluated or
    // sent: its refusal leaves no trace in the key folder.
    let policy = MemberPolicy::load(keys)?.overridden_by(options.policy.clone())?;
    policy.check_privacy(options.study, valid.method.privacy_budget())?;
    policy.check_parameter_set(verified.params.set().name)?;
    policy.check_study(options.study, study.spec.min_contributors)?;

    let state = state_dir(keys, options.study)?;
    create_private_dir(&state)?;
    let _lock = lock_agent(keys, options.study)?;
    let private_seed = private_seed(&state, options.study, &member_file.member)?;
    let objective = MemberObjective::new(
        options.evaluator,
        options.study,
        &valid,
        members.len(),
        index,
        &state,
    )?;
    let mut task = Task::per_client(
        valid.config.objective.clone(),
        valid.dim(),
        valid.sense,
        valid.config.optimum,
        Arc::new(objective),
    );
    if let Some(space) = &valid.space {
        task = task
            .with_space(Arc::clone(space))
            .map_err(|e| invalid("space", e))?;
    }
    let secret = MemberSession::load_secret(keys, &verified.params)?;
    let mut session = MemberSession::new(
        client,
        &verified,
        secret,
        &state,
        study.spec.min_contributors as usize,
    )?
    .with_policy(policy)?
    .with_threshold_share_from(keys)?
    .with_result_key_from(keys)?;
    session.round_timeout = options.round_timeout;
    // The administrator's signature, and the hash recorded before the first
    // contribution: a spec changed or split by the server is refused.
    session.accept_study(&study)?;
    let bound = valid.method.channel_bound();
    if study.spec.bound != bound {
        return Err(invalid(
            "settings.channel_bound",
            format!(
                "{bound} is not the study's signed bound {}",
                study.spec.bound
            ),
        ));
    }
    if valid.method.privacy_quorum().is_some() {
        // The bound is the spec's (checked above): the study's own codec.
        let codec = study
            .spec
            .codec(&verified.params, members.len())
            .map_err(|e| invalid("settings.channel_bound", e))?;
        check_noise_grid(&codec)?;
    }
    // A failed round is retried under the next number (issue 45, item 5);
    // the operator sees each failure on stderr (stdout may be JSON).
    let mut channel =
        NetworkSum::new(session, options.study, bound, 0).on_retry(|round, reason| {
            eprintln!(
                "fedhe: round {round} failed ({}); retrying its sum as round {}",
                fedhe_crypto::text::escape_controls(reason),
                round + 1
            )
        });
    let write_progress = |round: usize, best: f64, epsilon: Option<f64>, finished: bool| {
        let p = Progress {
            study: options.study.to_string(),
            member: member_file.member.clone(),
            rounds: valid.method.rounds(),
            round,
            best,
            epsilon,
            finished,
            sense: Some(valid.sense.as_str().to_string()),
        };
        if let Ok(bytes) = serde_json::to_vec_pretty(&p) {
            // Progress is informational; a failed write must not stop the run.
            let _ = keys::write_atomic(&state, PROGRESS_FILE, &bytes, true);
        }
    };
    let roster = Roster::member(&members, &me, private_seed)?;
    let result = valid
        .method
        .run(&task, &mut channel, &roster, valid.config.seed, &mut |e| {
            write_progress(e.round, e.best_so_far, e.epsilon, false);
            on_round(e, &valid);
        })
        .map_err(|e| match e {
            // A sum the member itself ended: its own error, typed (a
            // refusal keeps its kind), not the channel's text of it.
            fedhe_algorithms::AlgorithmError::Channel(fedhe_crypto::ChannelError::Transport(_)) => {
                channel.take_failure().unwrap_or(ClientError::Algorithm(e))
            }
            e => ClientError::Algorithm(e),
        })?;
    let spent = result.epsilon.as_ref().and_then(|e| e.last().copied());
    write_progress(result.rounds, result.best, spent, true);
    let outcome = AgentOutcome {
        config: valid.config.clone(),
        result,
    };
    let bytes =
        serde_json::to_vec_pretty(&outcome).map_err(|e| ClientError::Decode(e.to_string()))?;
    keys::write_atomic(&state, RESULT_FILE, &bytes, true)?;
    Ok(outcome)
}

/// Refuses a private study whose codec cannot carry the noise shares exactly:
/// shares are multiples of `fedhe_algorithms::privacy::FINEST_GRID` (2^−24),
/// which a codec of fewer fractional bits would round member by member, so
/// the decrypted sum would no longer be the sum of discrete Gaussians the
/// ledger accounts (the error names the settings that decide it).
fn check_noise_grid(codec: &fedhe_crypto::FixedPointCodec) -> Result<(), ClientError> {
    let needed = (-fedhe_algorithms::privacy::FINEST_GRID.log2()).round() as u32;
    if codec.fractional_bits() < needed {
        return Err(invalid(
            "settings.channel_bound",
            format!(
                "a private study's noise shares sit on a 2^-{needed} grid, but this study's codec \
                 keeps {} fractional bits (its bound, member count and parameter set): lower the \
                 bound or use a wider parameter set",
                codec.fractional_bits()
            ),
        ));
    }
    Ok(())
}

/// Takes the agent lock of `study` in a key folder: one agent (or `tell`) per
/// member and study at a time, since a second would interleave the journal.
/// The operating system releases the lock when the process ends, however.
fn lock_agent(keys: &KeyDir, study: &str) -> Result<std::fs::File, ClientError> {
    let lock_path = state_dir(keys, study)?.join(LOCK_FILE);
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
    // A lock released a moment ago may still be held for a moment by a
    // child forked meanwhile (between its fork and its exec it shares the
    // descriptor); a running agent holds it for good.
    for attempt in 0.. {
        match lock.try_lock() {
            Ok(()) => return Ok(lock),
            Err(std::fs::TryLockError::WouldBlock) if attempt < 20 => {
                std::thread::sleep(std::time::Duration::from_millis(50))
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(ClientError::Usage(format!(
                    "another agent is running study {study} with {}",
                    keys.path().display()
                )))
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(ClientError::Keys(format!("{}: {e}", lock_path.display())))
            }
        }
    }
    unreachable!("the loop returns")
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn config() -> StudyConfig {
        let mut p = fedhe_algorithms::FboFedGpParams::paper_defaults();
        p.members = 3;
        StudyConfig {
            objective: "sphere".into(),
            lower: vec![-2.0, 0.0],
            upper: vec![2.0, 10.0],
            space: None,
            sense: "minimise".into(),
            optimum: None,
            seed: 1,
            settings: serde_json::to_value(p).unwrap(),
        }
    }

    /// A spaced quadratic trend's release rule counts every member's
    /// points: a study that decrypts rounds with fewer contributors refuses
    /// it, naming the setting; other settings, or every member required,
    /// pass.
    #[test]
    fn a_spaced_trend_is_refused_by_a_study_that_decrypts_rounds_without_every_member() {
        let mut c = config();
        c.settings["global_trend"] = "quadratic-spaced".into();
        c.settings["warping"] = "auto".into();
        let spaced = c.validate("fbo-fedgp", 3).unwrap();
        let err = spaced.check_contributors(2, 3).unwrap_err().to_string();
        assert!(
            err.contains("`settings`") && err.contains("`global_trend`") && err.contains("2 of 3"),
            "{err}"
        );
        assert!(spaced.check_contributors(3, 3).is_ok());
        let plain = config().validate("fbo-fedgp", 3).unwrap();
        assert!(plain.check_contributors(2, 3).is_ok());
    }

    /// A private study's noise shares are exact multiples of 2^−24: a codec
    /// with fewer fractional bits is refused, naming the setting.
    #[test]
    fn a_private_study_needs_a_codec_that_carries_its_noise_grid() {
        let params = fedhe_crypto::ParameterSet::DEFAULT
            .validate(fedhe_crypto::InsecurePolicy::Refuse)
            .unwrap();
        let wide = fedhe_crypto::FixedPointCodec::new(&params, 5, 1024.0).unwrap();
        assert!(wide.fractional_bits() >= 24, "{}", wide.fractional_bits());
        check_noise_grid(&wide).unwrap();
        let coarse =
            fedhe_crypto::FixedPointCodec::with_fractional_bits(&params, 5, 1024.0, 20).unwrap();
        let err = check_noise_grid(&coarse).unwrap_err().to_string();
        assert!(
            err.contains("settings.channel_bound") && err.contains("2^-24"),
            "{err}"
        );
        let exact =
            fedhe_crypto::FixedPointCodec::with_fractional_bits(&params, 5, 1024.0, 24).unwrap();
        check_noise_grid(&exact).unwrap();
    }

    /// A private study's noise shares are sized for its privacy quorum: a
    /// study spec that decrypts rounds with fewer contributors is refused,
    /// naming the setting (each such round would carry less noise than its
    /// ε says).
    #[test]
    fn a_private_study_is_refused_by_a_spec_whose_quorum_is_below_its_privacy_quorum() {
        let p = fedhe_algorithms::FboFedGpParams {
            members: 3,
            ..fedhe_algorithms::FboFedGpParams::paper_defaults()
        }
        .private(4.0);
        let c = StudyConfig {
            settings: serde_json::to_value(p).unwrap(),
            ..config()
        };
        let private = c.validate("fbo-fedgp", 3).unwrap();
        let err = private.check_contributors(2, 3).unwrap_err().to_string();
        assert!(
            err.contains("`settings`") && err.contains("`privacy.quorum`"),
            "{err}"
        );
        assert!(private.check_contributors(3, 3).is_ok());
        // A privacy quorum of 2 fits a spec that decrypts with 2.
        let mut c = config();
        c.settings["privacy"] = serde_json::json!({"mode": "dp", "epsilon": 4.0, "quorum": 2});
        for (k, v) in [
            ("hyperparameters", "fixed"),
            ("support_selection", "public"),
            ("warping", "signed-log"),
        ] {
            c.settings[k] = v.into();
        }
        for k in ["lengthscale", "signal_variance", "noise_variance"] {
            c.settings[k] = 0.5.into();
        }
        let two = c.validate("fbo-fedgp", 3).unwrap();
        assert!(two.check_contributors(2, 3).is_ok());
    }

    #[test]
    fn study_configs_are_validated_with_named_fields() {
        assert!(config().validate("fbo-fedgp", 3).is_ok());
        let err = config().validate("fbo-fedgp", 4).unwrap_err().to_string();
        assert!(
            err.contains("settings.members") && err.contains("4 members"),
            "{err}"
        );
        let mut c = config();
        c.upper[1] = -1.0;
        let err = c.validate("fbo-fedgp", 3).unwrap_err().to_string();
        assert!(err.contains("dimension 1"), "{err}");
        let mut c = config();
        c.sense = "min".into();
        let err = c.validate("fbo-fedgp", 3).unwrap_err().to_string();
        assert!(err.contains("sense"), "{err}");
        let mut c = config();
        c.settings["support_selection"] = "paper-clustering".into();
        let err = c.validate("fbo-fedgp", 3).unwrap_err().to_string();
        assert!(err.contains("support_selection"), "{err}");
        let mut c = config();
        c.upper.pop();
        let err = c.validate("fbo-fedgp", 3).unwrap_err().to_string();
        assert!(err.contains("2 and 1"), "{err}");
        // Any method of the registry; one a member cannot run alone is
        // refused with the setting named.
        let err = config().validate("fbo-fedgpp", 3).unwrap_err().to_string();
        assert!(
            err.contains("unknown method") && err.contains("fed-pne"),
            "{err}"
        );
        let err = config()
            .validate("independent-bo", 3)
            .unwrap_err()
            .to_string();
        assert!(err.contains("run it alone"), "{err}");
        let dp = serde_json::json!({ "members": 3, "rounds": 4, "noise": "central" });
        let c = StudyConfig {
            settings: dp,
            ..config()
        };
        let err = c.validate("dp-fts-de", 3).unwrap_err().to_string();
        assert!(
            err.contains("noise") && err.contains("distributed"),
            "{err}"
        );
    }

    #[test]
    fn a_study_config_written_before_the_registry_still_reads() {
        let text = r#"{"objective":"f","lower":[0],"upper":[1],"sense":"minimise",
            "seed":3,"fbo_fedgp":{"members":3,"rounds":4,"initial_points":3,"support_size":6}}"#;
        let c: StudyConfig = serde_json::from_str(text).unwrap();
        assert_eq!(c.settings["rounds"], 4);
        let valid = c.validate("fbo-fedgp", 3).unwrap();
        assert_eq!(valid.method.rounds(), 4);
    }

    /// Issue 45, finding 9: an objective printing 300 MB (on stdout, or on
    /// stderr before failing) took the agent to 901 MB and was echoed whole
    /// into the error. Now the streams are drained but only their first
    /// (stdout) or last (stderr) kilobytes are kept, and the error quotes a
    /// short escaped prefix.
    #[test]
    fn a_command_printing_hundreds_of_megabytes_gives_a_short_error() {
        let dir = tempfile::tempdir().unwrap();
        for (cmd, stream) in [
            ("head -c 300000000 /dev/zero | tr '\\0' 7", "stdout"),
            (
                "head -c 300000000 /dev/zero | tr '\\0' e >&2; exit 3",
                "stderr",
            ),
        ] {
            let obj = MemberObjective::new(
                Evaluator::Command(cmd),
                "s",
                &config().validate("fbo-fedgp", 3).unwrap(),
                3,
                1,
                dir.path(),
            )
            .unwrap();
            let mut rng = ChaCha8Rng::seed_from_u64(0);
            let e = obj
                .evaluate(1, &[0.5, 0.5], &mut rng)
                .unwrap_err()
                .to_string();
            assert!(e.len() < 1000, "{stream}: an error of {} bytes", e.len());
            if stream == "stdout" {
                assert!(e.contains("300000000 bytes"), "{e}");
            } else {
                assert!(e.contains("exit status: 3") && e.contains("eee"), "{e}");
            }
        }
        let (head, tail, total) = drain(&b"abcdefgh"[..], 3, 2);
        assert_eq!((&head[..], &tail[..], total), (&b"abc"[..], &b"gh"[..], 8));
    }

    /// Issue 45, finding 8: a value the study's channel cannot carry, from a
    /// command, is refused before it is journaled (the journal replays every
    /// value into every later contribution, so one such line broke the seat).
    #[test]
    fn a_command_value_beyond_the_methods_bound_is_not_journaled() {
        let dir = tempfile::tempdir().unwrap();
        let valid = config().validate("fbo-fedgp", 3).unwrap();
        let bound = valid.method.value_bound();
        assert!(bound.is_finite() && bound > 1.0, "{bound}");
        let obj = MemberObjective::new(
            Evaluator::Command("echo 1e308"),
            "s",
            &valid,
            3,
            1,
            dir.path(),
        )
        .unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let e = obj
            .evaluate(1, &[0.5, 0.5], &mut rng)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("1e308 is beyond") && e.contains("nothing was journaled"),
            "{e}"
        );
        drop(obj);
        let journal = Journal::open(dir.path().join(JOURNAL_FILE), false).unwrap();
        assert!(journal.entries.is_empty());
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
        let obj = MemberObjective::new(
            Evaluator::Command(&cmd),
            "s",
            &config().validate("fbo-fedgp", 3).unwrap(),
            3,
            1,
            dir.path(),
        )
        .unwrap();
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
        let obj = MemberObjective::new(
            Evaluator::Command(&cmd),
            "s",
            &config().validate("fbo-fedgp", 3).unwrap(),
            3,
            1,
            dir.path(),
        )
        .unwrap();
        assert_eq!(
            obj.evaluate(1, &[0.75, 0.5], &mut rng).unwrap().observed,
            26.0
        );
        assert_eq!(
            std::fs::read_to_string(&counter).unwrap().lines().count(),
            1
        );
        // A different point than the journal's: the replay diverged.
        let obj = MemberObjective::new(
            Evaluator::Command(&cmd),
            "s",
            &config().validate("fbo-fedgp", 3).unwrap(),
            3,
            1,
            dir.path(),
        )
        .unwrap();
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
            let obj = MemberObjective::new(
                Evaluator::Command(cmd),
                "s",
                &config().validate("fbo-fedgp", 3).unwrap(),
                3,
                0,
                &sub,
            )
            .unwrap();
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
        assert!(MemberObjective::new(
            Evaluator::Command("  "),
            "s",
            &config().validate("fbo-fedgp", 3).unwrap(),
            3,
            0,
            dir.path()
        )
        .is_err());
    }

    /// Issue 45, finding 12: `agent tell --study /abs/path` wrote
    /// `agent.lock` outside the key folder. A study id that is not a plain
    /// path component is refused, naming it, and nothing is written.
    #[test]
    fn a_study_id_that_is_not_a_path_component_is_refused_and_writes_nothing() {
        let (_dir, keys) = asked("", Some(pending(1, None)));
        let outside = tempfile::tempdir().unwrap();
        let absolute = outside.path().to_str().unwrap().to_string();
        let nested = format!("../{}", "x");
        for study in [absolute.as_str(), "..", ".", nested.as_str(), "", "a/b"] {
            let e = tell_agent(&keys, study, Told::Value(1.0), None)
                .unwrap_err()
                .to_string();
            assert!(e.contains("is not 1 to 64 characters"), "{study}: {e}");
            let e = ask_agent_state_check(&keys, study);
            assert!(e.contains("is not 1 to 64 characters"), "{study}: {e}");
        }
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
        assert!(!keys.path().join("x").exists());
        // A plain id is still a folder of the key folder.
        assert_eq!(
            state_dir(&keys, "s-1.b_2").unwrap(),
            keys.path().join("studies").join("s-1.b_2")
        );
    }

    /// The state check every agent command makes first.
    fn ask_agent_state_check(keys: &KeyDir, study: &str) -> String {
        agent_status(keys, study).unwrap_err().to_string()
    }

    /// A key folder whose agent state for study `s` holds `journal` lines
    /// and, if given, a pending point.
    fn asked(journal: &str, pending: Option<PendingPoint>) -> (tempfile::TempDir, KeyDir) {
        let dir = tempfile::tempdir().unwrap();
        let keys = KeyDir::open_or_create(dir.path().join("k")).unwrap();
        let state = state_dir(&keys, "s").unwrap();
        create_private_dir(&state).unwrap();
        std::fs::write(state.join(JOURNAL_FILE), journal).unwrap();
        if let Some(p) = pending {
            std::fs::write(state.join(PENDING_FILE), serde_json::to_vec(&p).unwrap()).unwrap();
        }
        (dir, keys)
    }

    fn pending(evaluation: usize, failure_value: Option<f64>) -> PendingPoint {
        PendingPoint {
            study: "s".into(),
            evaluation,
            point: vec![0.5, -1.0],
            params: None,
            space: None,
            sense: None,
            failure_value,
            value_bound: None,
        }
    }

    #[test]
    fn tell_journals_the_pending_point_once_and_refuses_another_answer() {
        let (_d, keys) = asked("{\"x\":[1.0,2.0],\"y\":7.0}\n", Some(pending(2, Some(7.0))));
        let r = tell_agent(&keys, "s", Told::Value(3.5), None).unwrap();
        assert_eq!((r.evaluation, r.value, r.recorded), (2, 3.5, true));
        // Again: a no-op; another value, or a failure: refused.
        assert!(
            !tell_agent(&keys, "s", Told::Value(3.5), None)
                .unwrap()
                .recorded
        );
        for other in [Told::Value(4.0), Told::Failed] {
            let e = tell_agent(&keys, "s", other, None).unwrap_err().to_string();
            assert!(e.contains("no point of study s waits"), "{e}");
        }
        let journal =
            Journal::open(state_dir(&keys, "s").unwrap().join(JOURNAL_FILE), false).unwrap();
        assert_eq!(journal.entries.len(), 2);
        assert_eq!(journal.entries[1].x, vec![0.5, -1.0]);
        assert!(!state_dir(&keys, "s").unwrap().join(PENDING_FILE).exists());
        let e = tell_agent(&keys, "s", Told::Value(f64::NAN), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a finite number"), "{e}");
    }

    /// Issue 46: the status names this member's best evaluation by the
    /// study's sense, with its named values, leaving out failed ones.
    #[test]
    fn the_status_names_the_best_evaluation_by_the_studys_sense() {
        let journal = concat!(
            "{\"x\":[0.1],\"params\":{\"kernel\":\"rbf\"},\"y\":0.3}\n",
            "{\"x\":[0.2],\"params\":{\"kernel\":\"poly\"},\"y\":0.1}\n",
            "{\"x\":[0.3],\"params\":{\"kernel\":\"linear\"},\"y\":0.9}\n",
            "{\"x\":[0.4],\"y\":0.0,\"failed\":true}\n",
        );
        let (_d, keys) = asked(journal, None);
        // No progress record yet: no sense to order by.
        assert_eq!(agent_status(&keys, "s").unwrap().best_evaluation, None);
        for (sense, x, kernel, value) in [
            ("minimise", 0.2, "poly", 0.1),
            ("maximise", 0.3, "linear", 0.9),
        ] {
            let progress = Progress {
                study: "s".into(),
                member: "m".into(),
                rounds: 3,
                round: 1,
                best: value,
                epsilon: None,
                finished: false,
                sense: Some(sense.into()),
            };
            let state = state_dir(&keys, "s").unwrap();
            std::fs::write(
                state.join(PROGRESS_FILE),
                serde_json::to_vec(&progress).unwrap(),
            )
            .unwrap();
            let best = agent_status(&keys, "s").unwrap().best_evaluation.unwrap();
            assert_eq!((best.x, best.value), (vec![x], value), "{sense}");
            assert_eq!(best.params.unwrap()["kernel"], kernel, "{sense}");
        }
    }

    /// Issue 44: a new agent's private seed is 32 bytes of fresh entropy,
    /// kept 0600 and read back the same; a legacy 8-byte seed still reads as
    /// the stream it gave; any other length is refused naming the field.
    #[test]
    fn the_private_seed_is_256_bits_and_a_legacy_seed_still_reads() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        create_private_dir(&a).unwrap();
        let seed = private_seed(&a, "s", "m1").unwrap();
        let file: serde_json::Value =
            serde_json::from_slice(&std::fs::read(a.join(AGENT_FILE)).unwrap()).unwrap();
        let stored = file["private_seed"].as_str().unwrap();
        assert_eq!(stored.len(), 64, "{stored}");
        assert_eq!(stored, hex::encode(seed.expose_bytes()));
        let mode = std::fs::metadata(a.join(AGENT_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(private_seed(&a, "s", "m1").unwrap(), seed);
        let b = dir.path().join("b");
        create_private_dir(&b).unwrap();
        assert_ne!(private_seed(&b, "s", "m1").unwrap(), seed);
        for (hex_seed, expected) in [
            ("0700000000000000", Some(PrivateSeed::from(7u64))),
            ("0700", None),
            ("zz", None),
        ] {
            let c = dir.path().join(format!("c{}", hex_seed.len()));
            create_private_dir(&c).unwrap();
            let body = serde_json::json!({"study": "s", "member": "m1", "private_seed": hex_seed});
            std::fs::write(c.join(AGENT_FILE), body.to_string()).unwrap();
            match expected {
                Some(e) => assert_eq!(private_seed(&c, "s", "m1").unwrap(), e),
                None => {
                    let err = private_seed(&c, "s", "m1").unwrap_err().to_string();
                    assert!(err.contains("private_seed is not 32 hex bytes"), "{err}");
                }
            }
        }
    }

    /// Issue 45, finding 8: `tell` refuses a value beyond the pending point's
    /// bound, naming it, journals nothing, and the seat takes a value within.
    #[test]
    fn tell_refuses_a_value_the_channel_cannot_carry_and_the_seat_goes_on() {
        let mut p = pending(2, Some(7.0));
        p.value_bound = Some(7.9e13);
        let (_d, keys) = asked("{\"x\":[1.0,2.0],\"y\":7.0}\n", Some(p));
        for v in [1e308, -8e13] {
            let e = tell_agent(&keys, "s", Told::Value(v), None)
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("is beyond ±7.9e13") && e.contains("nothing was journaled"),
                "{e}"
            );
        }
        let state = state_dir(&keys, "s").unwrap();
        assert_eq!(
            Journal::open(state.join(JOURNAL_FILE), false)
                .unwrap()
                .entries
                .len(),
            1
        );
        assert!(state.join(PENDING_FILE).exists());
        let r = tell_agent(&keys, "s", Told::Value(-7.8e13), None).unwrap();
        assert_eq!((r.evaluation, r.value, r.recorded), (2, -7.8e13, true));
    }

    #[test]
    fn a_failed_evaluation_is_journaled_with_the_worst_value_seen() {
        let lines = "{\"x\":[1.0],\"y\":7.0}\n{\"x\":[2.0],\"y\":9.0}\n";
        let (_d0, told) = asked(lines, None);
        let journal =
            Journal::open(state_dir(&told, "s").unwrap().join(JOURNAL_FILE), false).unwrap();
        // The worst: the largest when minimising, the smallest when maximising.
        assert_eq!(journal.worst(Sense::Minimise), Some(9.0));
        assert_eq!(journal.worst(Sense::Maximise), Some(7.0));
        let (_d, keys) = asked(lines, Some(pending(3, Some(9.0))));
        let r = tell_agent(&keys, "s", Told::Failed, None).unwrap();
        assert_eq!((r.value, r.failed, r.recorded), (9.0, true, true));
        assert!(!tell_agent(&keys, "s", Told::Failed, None).unwrap().recorded);
        // The first evaluation has nothing to stand for a failure.
        let (_d, keys) = asked("", Some(pending(1, None)));
        let e = tell_agent(&keys, "s", Told::Failed, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot be told as failed"), "{e}");
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
                params: None,
                y: 2.0,
                failed: false,
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

    /// Issue 46: a mixed space of a log float, an int, a categorical and a
    /// fixed value.
    fn spaced_config() -> StudyConfig {
        StudyConfig {
            lower: vec![],
            upper: vec![],
            space: Some(
                serde_json::from_str(
                    r#"{"params": [
                        {"name": "lr", "type": "float", "low": 1e-5, "high": 0.1, "log": true},
                        {"name": "depth", "type": "int", "low": 2, "high": 12},
                        {"name": "kernel", "type": "categorical", "choices": ["rbf", "poly", "linear"]},
                        {"name": "epochs", "type": "fixed", "value": 5}
                    ]}"#,
                )
                .unwrap(),
            ),
            ..config()
        }
    }

    /// Issue 46: the command reads a JSON object of named values (the
    /// space's decoding of the point the method proposed), the journal
    /// records them beside the unit point, and a restart replays them.
    #[test]
    fn a_spaced_command_receives_named_values_and_the_journal_records_them() {
        let dir = tempfile::tempdir().unwrap();
        let seen = dir.path().join("seen");
        let cmd = format!(
            "python3 -c 'import json,sys; p=json.load(sys.stdin); open(\"{}\",\"a\").write(json.dumps(p)+\"\\n\"); \
             print(p[\"lr\"]*1000 + p[\"depth\"] + 10*(p[\"kernel\"]==\"poly\") + p[\"epochs\"])'",
            seen.display()
        );
        let valid = spaced_config().validate("fbo-fedgp", 3).unwrap();
        assert_eq!(valid.dim(), 1 + 1 + 3);
        let obj =
            MemberObjective::new(Evaluator::Command(&cmd), "s", &valid, 3, 1, dir.path()).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        // lr = 1e-5·10^(4·0.5) = 1e-3; depth: 1.5 + 11·0.5 = 7 (the centre
        // of the cell [6.5, 7.5)); kernel: argmax = poly.
        let unit = [0.5, 0.5, 0.1, 0.9, 0.3];
        let e = obj.evaluate(1, &unit, &mut rng).unwrap();
        let got: serde_json::Value =
            serde_json::from_str(std::fs::read_to_string(&seen).unwrap().trim()).unwrap();
        let want = valid.point(&unit);
        assert_eq!(got, want);
        assert_eq!(got["depth"], 7);
        assert_eq!(got["kernel"], "poly");
        assert_eq!(got["epochs"], 5);
        let lr = got["lr"].as_f64().unwrap();
        assert!((lr - 1e-3).abs() < 1e-15, "{lr}");
        assert!((e.observed - (lr * 1000.0 + 7.0 + 10.0 + 5.0)).abs() < 1e-9);
        drop(obj);
        let journal = Journal::open(dir.path().join(JOURNAL_FILE), false).unwrap();
        assert_eq!(journal.entries.len(), 1);
        assert_eq!(journal.entries[0].x, unit.to_vec());
        assert_eq!(
            serde_json::Value::Object(journal.entries[0].params.clone().unwrap()),
            want
        );
        // A restart replays the journal without running the command.
        let obj =
            MemberObjective::new(Evaluator::Command(&cmd), "s", &valid, 3, 1, dir.path()).unwrap();
        assert_eq!(
            obj.evaluate(1, &unit, &mut rng).unwrap().observed,
            e.observed
        );
        assert_eq!(std::fs::read_to_string(&seen).unwrap().lines().count(), 1);
    }

    /// Issue 46: `tell --params` takes the pending point's own values (over
    /// 500 random points of a log float, whose re-encoding may move by an
    /// ulp), and refuses, journaling nothing, values outside the space or
    /// not the pending point's, naming the parameter, and named values for a
    /// study that searches a box.
    #[test]
    fn tell_params_must_be_the_pending_points_values_in_the_space() {
        let valid = spaced_config().validate("fbo-fedgp", 3).unwrap();
        let space = valid.space.clone().unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let spaced = |unit: Vec<f64>| PendingPoint {
            study: "s".into(),
            evaluation: 1,
            params: Some(space.decode(&unit)),
            point: unit,
            space: valid.config.space.clone(),
            sense: Some("minimise".into()),
            failure_value: None,
            value_bound: None,
        };
        for _ in 0..500 {
            let unit: Vec<f64> = (0..5).map(|_| rng.gen::<f64>()).collect();
            let p = spaced(unit);
            let (_d, keys) = asked("", Some(p.clone()));
            let r = tell_agent(&keys, "s", Told::Value(1.0), p.params.as_ref()).unwrap();
            assert!(r.recorded);
            assert_eq!(r.params, p.params);
        }
        let p = spaced(vec![0.5, 0.5, 0.1, 0.9, 0.3]);
        let told = p.params.clone().unwrap();
        let with = |name: &str, v: serde_json::Value| {
            let mut m = told.clone();
            m.insert(name.into(), v);
            m
        };
        let mut missing = told.clone();
        missing.remove("kernel");
        for (at, expect) in [
            (with("lr", 0.5.into()), "lr"),
            (with("depth", 13.into()), "depth"),
            (with("depth", 7.5.into()), "depth"),
            (with("kernel", "sigmoid".into()), "kernel"),
            (with("epochs", 6.into()), "epochs"),
            (with("momentum", 0.9.into()), "momentum"),
            (missing, "kernel"),
            (with("depth", 9.into()), "`depth` differs"),
            (with("kernel", "rbf".into()), "`kernel` differs"),
        ] {
            let (_d, keys) = asked("", Some(p.clone()));
            let e = tell_agent(&keys, "s", Told::Value(1.0), Some(&at)).unwrap_err();
            // A typed refusal (the Python module raises fedhe.Refused for it).
            assert!(
                matches!(e, ClientError::ToldPoint { .. }),
                "{expect}: {e:?}"
            );
            let e = e.to_string();
            assert!(
                e.contains("--params") && e.contains(expect),
                "{expect}: {e}"
            );
            let journal =
                Journal::open(state_dir(&keys, "s").unwrap().join(JOURNAL_FILE), false).unwrap();
            assert!(journal.entries.is_empty(), "{expect}");
            assert!(state_dir(&keys, "s").unwrap().join(PENDING_FILE).exists());
        }
        // 7 and 7.0 are one integer.
        let (_d, keys) = asked("", Some(p.clone()));
        assert!(
            tell_agent(
                &keys,
                "s",
                Told::Value(1.0),
                Some(&with("depth", 7.0.into()))
            )
            .unwrap()
            .recorded
        );
        let (_d, keys) = asked("", Some(pending(1, None)));
        let e = tell_agent(&keys, "s", Told::Value(1.0), Some(&told))
            .unwrap_err()
            .to_string();
        assert!(e.contains("searches a box of unnamed floats"), "{e}");
    }
}
