//! `fedhe agent ask`, `tell` and `status`: the pending point, a value told
//! for it, and what the agent has done.

use super::*;

/// The point waiting for its value, if any (a point already journaled, by a
/// `tell` that stopped before removing the file, is not waiting).
fn pending_point(state: &Path, journal: &Journal) -> Result<Option<PendingPoint>, ClientError> {
    let path = state.join(PENDING_FILE);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(ClientError::Keys(format!("{}: {e}", path.display()))),
    };
    let p: PendingPoint = serde_json::from_slice(&bytes)
        .map_err(|e| ClientError::Decode(format!("{}: {e}", path.display())))?;
    Ok((journal.entries.len() < p.evaluation).then_some(p))
}

/// What `fedhe agent ask` ends with.
#[derive(Clone, Debug)]
pub enum Asked {
    /// The next point to evaluate.
    Point(PendingPoint),
    /// The study is over for this member.
    Finished(Box<AgentOutcome>),
}

/// `fedhe agent ask`: the point waiting for its value if there is one (asked
/// before and not yet told: asking again changes nothing); else runs (or
/// resumes) this member's side of the study like [`run_agent`], the journal
/// answering every point evaluated before, until the study ends or needs a
/// new point, which is written to [`PENDING_FILE`] and returned.
pub fn ask_agent(
    client: Client,
    keys: &KeyDir,
    options: &AgentOptions<'_>,
) -> Result<Asked, ClientError> {
    let state = state_dir(keys, options.study)?;
    if state.is_dir() {
        let journal = Journal::open(state.join(JOURNAL_FILE), false)?;
        if let Some(p) = pending_point(&state, &journal)? {
            return Ok(Asked::Point(p));
        }
    }
    let asking = AgentOptions {
        evaluator: Evaluator::Ask,
        policy: options.policy.clone(),
        ..*options
    };
    match run_agent(client, keys, &asking, &mut |_, _| {}) {
        Ok(outcome) => Ok(Asked::Finished(Box::new(outcome))),
        Err(e) => {
            let journal = Journal::open(state.join(JOURNAL_FILE), false)?;
            match pending_point(&state, &journal)? {
                Some(p) if e.to_string().contains(ASKED) => Ok(Asked::Point(p)),
                _ => Err(e),
            }
        }
    }
}

/// What `fedhe agent tell` is told.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Told {
    /// The objective's value at the pending point.
    Value(f64),
    /// The evaluation failed: the point is journaled with the failure value
    /// ([`PendingPoint::failure_value`]).
    Failed,
}

/// What `fedhe agent tell` did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TellReceipt {
    /// Which evaluation it is (1-based).
    pub evaluation: usize,
    /// The point.
    pub point: Vec<f64>,
    /// Its named values, in a study with a typed space.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<serde_json::Map<String, serde_json::Value>>,
    /// The value journaled.
    pub value: f64,
    /// Whether it was told as failed.
    pub failed: bool,
    /// False when the same answer had been journaled already (a no-op).
    pub recorded: bool,
}

/// `fedhe agent tell`: journals the value of the point `ask` handed out
/// (synced before it returns). Telling the same answer again is a no-op;
/// another answer for a point already answered is refused. `at`, when given,
/// names the values the objective was evaluated at (`--params`, the Python
/// sampler's trial): they must lie in the study's typed space and be the
/// pending point's, or nothing is journaled.
pub fn tell_agent(
    keys: &KeyDir,
    study: &str,
    told: Told,
    at: Option<&serde_json::Map<String, serde_json::Value>>,
) -> Result<TellReceipt, ClientError> {
    let state = state_dir(keys, study)?;
    if !state.is_dir() {
        return Err(ClientError::Usage(format!(
            "no agent state for study {study} in {} (run `fedhe agent ask` first)",
            keys.path().display()
        )));
    }
    let _lock = lock_agent(keys, study)?;
    if let Told::Value(v) = told {
        if !v.is_finite() {
            return Err(ClientError::Usage(format!(
                "--value {v} is not a finite number (use --failed for an evaluation that failed)"
            )));
        }
    }
    let mut journal = Journal::open(state.join(JOURNAL_FILE), true)?;
    let Some(p) = pending_point(&state, &journal)? else {
        // Nothing waits: the same answer as the last one is a repeat.
        let last = journal.entries.last().ok_or_else(|| {
            ClientError::Usage(format!(
                "no point of study {study} waits for a value (run `fedhe agent ask` first)"
            ))
        })?;
        let same = match told {
            Told::Value(v) => !last.failed && last.y == v,
            Told::Failed => last.failed,
        };
        if !same {
            return Err(ClientError::Usage(format!(
                "no point of study {study} waits for a value: evaluation {} at {:?} was answered with {}{}; \
                 run `fedhe agent ask` for the next point",
                journal.entries.len(),
                last.x,
                last.y,
                if last.failed { " (failed)" } else { "" }
            )));
        }
        return Ok(TellReceipt {
            evaluation: journal.entries.len(),
            point: last.x.clone(),
            params: last.params.clone(),
            value: last.y,
            failed: last.failed,
            recorded: false,
        });
    };
    if let Some(at) = at {
        check_told_point(&p, at)?;
    }
    if journal.entries.len() + 1 != p.evaluation {
        return Err(ClientError::Usage(format!(
            "{PENDING_FILE} is for evaluation {} but the journal holds {}: the state folder was changed by hand",
            p.evaluation,
            journal.entries.len()
        )));
    }
    if let (Told::Value(v), Some(bound)) = (told, p.value_bound) {
        if v.abs() > bound {
            return Err(ClientError::Usage(format!(
                "--value {v:e} is beyond ±{bound:e}, the largest magnitude study {study}'s method \
                 carries through its channel; nothing was journaled (tell it in other units, or \
                 --failed)"
            )));
        }
    }
    let (value, failed) = match told {
        Told::Value(v) => (v, false),
        Told::Failed => (
            p.failure_value.ok_or_else(|| {
                ClientError::Usage(
                    "the first evaluation cannot be told as failed: no value observed yet stands for a failure; tell a value"
                        .into(),
                )
            })?,
            true,
        ),
    };
    journal
        .append(JournalEntry {
            x: p.point.clone(),
            params: p.params.clone(),
            y: value,
            failed,
        })
        .map_err(AlgorithmError::from)?;
    // The journal line is synced: the pending file is now only a leftover.
    let _ = std::fs::remove_file(state.join(PENDING_FILE));
    Ok(TellReceipt {
        evaluation: p.evaluation,
        point: p.point,
        params: p.params,
        value,
        failed,
        recorded: true,
    })
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
    /// This member's best evaluation so far, with its named values in a
    /// typed space (once a progress record gives the study's sense).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_evaluation: Option<BestEvaluation>,
}

/// Refuses told values `at` that lie outside the pending point's typed space
/// (naming the parameter) or are not the pending point's values.
fn check_told_point(
    p: &PendingPoint,
    at: &serde_json::Map<String, serde_json::Value>,
) -> Result<(), ClientError> {
    let (Some(spec), Some(asked)) = (&p.space, &p.params) else {
        return Err(ClientError::ToldPoint {
            reason: format!(
                "study {} searches a box of unnamed floats, not a typed space",
                p.study
            ),
        });
    };
    let space = spec.clone().validate().map_err(|e| invalid("space", e))?;
    space.encode(at).map_err(|e| ClientError::ToldPoint {
        reason: e.to_string(),
    })?;
    // Values compare as numbers (7 and 7.0 are one integer); a log float's
    // re-encoding may move by an ulp, so the values, not their codes, are
    // compared.
    let same = |a: Option<&serde_json::Value>, b: Option<&serde_json::Value>| match (a, b) {
        (Some(a), Some(b)) if a.is_number() && b.is_number() => a.as_f64() == b.as_f64(),
        (a, b) => a == b,
    };
    if let Some(q) = space
        .params()
        .iter()
        .find(|q| !same(at.get(&q.name), asked.get(&q.name)))
    {
        let differs = q.name.as_str();
        return Err(ClientError::ToldPoint {
            reason: format!(
                "the told values are not the pending point's (evaluation {}): `{differs}` \
                 differs; nothing was journaled",
                p.evaluation
            ),
        });
    }
    Ok(())
}

/// Reads an agent's records of `study` from its key folder.
pub fn agent_status(keys: &KeyDir, study: &str) -> Result<AgentStatus, ClientError> {
    let state = state_dir(keys, study)?;
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
    let progress: Option<Progress> = match std::fs::read(state.join(PROGRESS_FILE)) {
        Ok(bytes) => Some(
            serde_json::from_slice(&bytes)
                .map_err(|e| ClientError::Decode(format!("{PROGRESS_FILE}: {e}")))?,
        ),
        Err(_) => None,
    };
    let best_evaluation = progress
        .as_ref()
        .and_then(|p| p.sense.as_deref())
        .and_then(Sense::from_name)
        .and_then(|sense| journal.best(sense));
    Ok(AgentStatus {
        state_dir: state.display().to_string(),
        evaluations: journal.entries.len(),
        rounds_with_result,
        progress,
        best_evaluation,
    })
}
