//! The agent's journal of evaluations (`evaluations.jsonl`): appended and
//! synced before a value is used, replayed on restart.

use super::*;

/// One journaled evaluation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct JournalEntry {
    /// The point: in the study's box, or the unit-cube point of a typed
    /// space (issue 46).
    pub(super) x: Vec<f64>,
    /// The named values `x` stands for, in a study with a typed space.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) params: Option<serde_json::Map<String, serde_json::Value>>,
    pub(super) y: f64,
    /// Told as failed (`fedhe agent tell --failed`): `y` is the failure value.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(super) failed: bool,
}

/// The append-only journal of evaluations, replayed after a restart.
#[derive(Debug)]
pub(super) struct Journal {
    pub(super) path: PathBuf,
    pub(super) entries: Vec<JournalEntry>,
    pub(super) next: usize,
}

impl Journal {
    /// Loads the journal; a last line cut short by a crash is dropped (its
    /// evaluation runs again).
    pub(super) fn open(path: PathBuf, repair: bool) -> Result<Self, ClientError> {
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
    pub(super) fn replay(&mut self, x: &[f64]) -> Result<Option<f64>, TaskError> {
        let Some(e) = self.entries.get(self.next) else {
            return Ok(None);
        };
        if e.x != x {
            return Err(TaskError::Evaluation(format!(
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

    /// The best evaluation journaled (the smallest value when minimising),
    /// leaving out the evaluations told as failed.
    pub(super) fn best(&self, sense: Sense) -> Option<BestEvaluation> {
        self.entries
            .iter()
            .filter(|e| !e.failed)
            .fold(None::<&JournalEntry>, |best, e| match best {
                Some(b) if !sense.better(e.y, b.y) => Some(b),
                _ => Some(e),
            })
            .map(|e| BestEvaluation {
                x: e.x.clone(),
                params: e.params.clone(),
                value: e.y,
            })
    }

    /// The worst value journaled so far (the largest when minimising), the
    /// value a failed evaluation stands for.
    pub(super) fn worst(&self, sense: Sense) -> Option<f64> {
        let ys = self.entries.iter().map(|e| e.y);
        match sense {
            Sense::Minimise => ys.reduce(f64::max),
            Sense::Maximise => ys.reduce(f64::min),
        }
    }

    /// Appends a new evaluation and syncs it before the value is used.
    pub(super) fn record(
        &mut self,
        x: &[f64],
        params: Option<serde_json::Map<String, serde_json::Value>>,
        y: f64,
    ) -> Result<(), TaskError> {
        self.append(JournalEntry {
            x: x.to_vec(),
            params,
            y,
            failed: false,
        })
    }

    /// Appends `entry` and syncs it.
    pub(super) fn append(&mut self, entry: JournalEntry) -> Result<(), TaskError> {
        let fail = |e: std::io::Error| {
            TaskError::Evaluation(format!("journal {}: {e}", self.path.display()))
        };
        let mut line =
            serde_json::to_string(&entry).map_err(|e| TaskError::Evaluation(e.to_string()))?;
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
        self.entries.push(entry);
        self.next += 1;
        Ok(())
    }
}
