//! The member's objective: a command run per point, or asked of the
//! user and told back (`fedhe agent ask` / `tell`).

use super::*;

/// How an institution evaluates a point.
#[derive(Clone, Copy, Debug)]
pub enum Evaluator<'a> {
    /// A command run by `sh -c` that reads the point on stdin and prints one
    /// number (`fedhe agent run`): a JSON array in the study's box, or a JSON
    /// object of named values in a study with a typed space.
    Command(&'a str),
    /// Ask and tell (`fedhe agent ask`, `fedhe agent tell`): a point not in
    /// the journal is written to [`PENDING_FILE`] and the agent stops; `tell`
    /// journals its value, and the next `ask` replays up to the next point.
    Ask,
}

/// The point `fedhe agent ask` hands out, waiting in [`PENDING_FILE`] for its
/// value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PendingPoint {
    /// The study.
    pub study: String,
    /// Which evaluation of this member it is (1-based: the journal's next line).
    pub evaluation: usize,
    /// The point: in the study's box, or the unit-cube point of a typed
    /// space.
    pub point: Vec<f64>,
    /// The named values the objective is asked for, in a study with a typed
    /// space (issue 46): `{"lr": 0.0031, "depth": 7, "kernel": "rbf"}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<serde_json::Map<String, serde_json::Value>>,
    /// The study's typed space, so `tell` can check a told point against it
    /// without the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub space: Option<fedhe_tasks::SpaceSpec>,
    /// Whether the study minimises or maximises (`"minimise"`,
    /// `"maximise"`), so a client (the Optuna sampler) can check its own
    /// direction; absent in a file written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sense: Option<String>,
    /// What `tell --failed` records: the worst value journaled so far (the
    /// largest when minimising), none before any value.
    pub failure_value: Option<f64>,
    /// The largest `|value|` the study's method carries through its channel
    /// ([`fedhe_algorithms::FederatedMethod::value_bound`]): `tell` refuses
    /// one beyond it before journaling. None in a file of an older agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_bound: Option<f64>,
}

/// The institution's objective for the algorithm: every evaluation goes
/// through the journal (replayed after a restart), and a new one to the
/// [`Evaluator`].
#[derive(Debug)]
pub(super) struct MemberObjective {
    pub(super) evaluator: OwnedEvaluator,
    pub(super) study: String,
    /// The study's validated config: its box or typed space.
    pub(super) config: ValidStudyConfig,
    pub(super) members: usize,
    pub(super) index: usize,
    /// [`fedhe_algorithms::FederatedMethod::value_bound`]: a command's value
    /// beyond it is refused before it is journaled.
    pub(super) value_bound: f64,
    pub(super) journal: Mutex<Journal>,
}

#[derive(Debug)]
pub(super) enum OwnedEvaluator {
    Command(String),
    Ask { state: PathBuf, sense: Sense },
}

/// The message an asking agent stops with (the point is in [`PENDING_FILE`]).
pub(super) const ASKED: &str = "a point waits for its value (fedhe agent tell)";

impl MemberObjective {
    /// The objective of member `index` of `members`, with its journal in `state`.
    pub(super) fn new(
        evaluator: Evaluator<'_>,
        study: &str,
        config: &ValidStudyConfig,
        members: usize,
        index: usize,
        state: &Path,
    ) -> Result<Self, ClientError> {
        let evaluator = match evaluator {
            Evaluator::Command(c) if c.trim().is_empty() => {
                return Err(ClientError::Usage("the objective command is empty".into()))
            }
            Evaluator::Command(c) => OwnedEvaluator::Command(c.to_string()),
            Evaluator::Ask => OwnedEvaluator::Ask {
                state: state.to_path_buf(),
                sense: config.sense,
            },
        };
        Ok(Self {
            evaluator,
            study: study.to_string(),
            config: config.clone(),
            members,
            index,
            value_bound: config.method.value_bound(),
            journal: Mutex::new(Journal::open(state.join(JOURNAL_FILE), true)?),
        })
    }

    /// Runs the command at `point` (what [`ValidStudyConfig::point`] gives).
    fn run_command(&self, command: &str, point: &serde_json::Value) -> Result<f64, TaskError> {
        use std::process::{Command, Stdio};
        let fail =
            |what: String| TaskError::Evaluation(format!("objective command `{command}`: {what}"));
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(command)
            // The institution's command (perhaps third-party code) never sees
            // the key folder's passphrase.
            .env_remove(crate::keys::PASSPHRASE_ENV)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| fail(format!("cannot start: {e}")))?;
        let point = serde_json::to_string(point).map_err(|e| fail(e.to_string()))?;
        if let Some(mut stdin) = child.stdin.take() {
            // A command that does not read its input may close stdin early.
            let _ = stdin.write_all(point.as_bytes());
        }
        // Both streams are drained to the end (the command never blocks on
        // a full pipe) but only their first (stdout) or last (stderr) bytes
        // are kept: a command printing 300 MB costs no memory (issue 45,
        // finding 9).
        let stdout = child.stdout.take().expect("piped");
        let stderr = child.stderr.take().expect("piped");
        let err_thread = std::thread::spawn(move || drain(stderr, 0, OBJECTIVE_STDERR_TAIL));
        let (head, _, printed) = drain(stdout, MAX_OBJECTIVE_OUTPUT, 0);
        let (_, tail, _) = err_thread.join().unwrap_or_default();
        let status = child
            .wait()
            .map_err(|e| fail(format!("cannot wait: {e}")))?;
        if !status.success() {
            let tail = String::from_utf8_lossy(&tail);
            let tail: String = tail
                .chars()
                .rev()
                .take(400)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            return Err(fail(format!(
                "{status} at {point}: {}",
                fedhe_crypto::text::escape_controls(tail.trim())
            )));
        }
        let text = String::from_utf8_lossy(&head);
        match (
            printed as usize <= MAX_OBJECTIVE_OUTPUT,
            text.trim().parse::<f64>(),
        ) {
            (true, Ok(y)) if y.is_finite() => Ok(y),
            _ => Err(fail(format!(
                "printed {} ({printed} bytes) at {point}, not one finite number",
                fedhe_crypto::text::quote(text.trim(), 80)
            ))),
        }
    }
}

/// The most an objective command's standard output may hold (one number).
const MAX_OBJECTIVE_OUTPUT: usize = 64 << 10;

/// How much of an objective command's standard error is kept (its end).
const OBJECTIVE_STDERR_TAIL: usize = 4 << 10;

/// Reads `r` to its end, keeping its first `head` bytes and its last `tail`
/// bytes; returns them with the number of bytes read.
pub(super) fn drain(
    mut r: impl std::io::Read,
    head: usize,
    tail: usize,
) -> (Vec<u8>, Vec<u8>, u64) {
    let (mut first, mut last) = (Vec::new(), std::collections::VecDeque::new());
    let mut total = 0u64;
    let mut buf = [0u8; 8192];
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        total += n as u64;
        let take = head.saturating_sub(first.len()).min(n);
        first.extend_from_slice(&buf[..take]);
        last.extend(&buf[n.saturating_sub(tail)..n]);
        if last.len() > tail {
            last.drain(..last.len() - tail);
        }
    }
    (first, last.into(), total)
}

impl Problem for MemberObjective {
    fn clients(&self) -> usize {
        self.members
    }

    fn evaluate(
        &self,
        client: usize,
        unit: &[f64],
        _rng: &mut ChaCha8Rng,
    ) -> Result<Evaluation, TaskError> {
        if client != self.index {
            return Err(TaskError::Evaluation(format!(
                "this agent evaluates for member {}, not {client}",
                self.index
            )));
        }
        // What the objective is asked for, and what the journal records: the
        // box point, or the unit point with its named values.
        let shown = self.config.point(unit);
        let (x, params): (Vec<f64>, _) = match &shown {
            serde_json::Value::Object(named) => (unit.to_vec(), Some(named.clone())),
            _ => (
                shown
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|v| v.as_f64())
                    .collect(),
                None,
            ),
        };
        let mut journal = self
            .journal
            .lock()
            .map_err(|_| TaskError::Evaluation("journal lock poisoned".into()))?;
        let y = match (journal.replay(&x)?, &self.evaluator) {
            (Some(y), _) => y,
            (None, OwnedEvaluator::Command(command)) => {
                let y = self.run_command(command, &shown)?;
                if y.abs() > self.value_bound {
                    return Err(TaskError::Evaluation(format!(
                        "objective command `{command}`: its value {y:e} is beyond ±{:e}, the \
                         largest study {}'s method carries through its channel; nothing was journaled",
                        self.value_bound,
                        self.study
                    )));
                }
                journal.record(&x, params, y)?;
                y
            }
            (None, OwnedEvaluator::Ask { state, sense }) => {
                let pending = PendingPoint {
                    study: self.study.clone(),
                    evaluation: journal.entries.len() + 1,
                    point: x,
                    params,
                    space: self.config.config.space.clone(),
                    sense: Some(sense.as_str().to_string()),
                    failure_value: journal.worst(*sense),
                    value_bound: Some(self.value_bound),
                };
                let bytes = serde_json::to_vec_pretty(&pending)
                    .map_err(|e| TaskError::Evaluation(e.to_string()))?;
                keys::write_atomic(state, PENDING_FILE, &bytes, true)
                    .map_err(|e| TaskError::Evaluation(e.to_string()))?;
                return Err(TaskError::Evaluation(ASKED.into()));
            }
        };
        Ok(Evaluation::exact(y))
    }
}
