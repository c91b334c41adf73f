//! What a run of any algorithm reports: one row of `results.json`, the file
//! `fedhe simulate` writes and `fedhe report` reads ([`ResultsFile`]).

use serde::{Deserialize, Serialize};

/// `results.json`: `{"runs": [...]}`. Unknown fields are ignored and the
/// fields a report does not need have defaults, so files of earlier versions
/// (and hand-written ones) still read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResultsFile {
    /// One entry per (task, method, seed).
    pub runs: Vec<RunResult>,
}

/// What one run reports (one row of `results.json`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// The task, as `fedhe objective list` names it.
    pub task: String,
    /// The method (or a configured label for it).
    pub method: String,
    /// The seed.
    pub seed: u64,
    /// Number of clients.
    #[serde(default)]
    pub members: usize,
    /// Rounds run.
    #[serde(default)]
    pub rounds: usize,
    /// The best noise-free value found by the federation (initial points included).
    pub best: f64,
    /// Each client's best.
    #[serde(default)]
    pub best_per_member: Vec<f64>,
    /// The federation's best-so-far after each round.
    pub trace: Vec<f64>,
    /// Wall-clock seconds of the run.
    #[serde(default)]
    pub seconds: f64,
    /// Mean bytes each client sent (wire objects: encrypted vectors and
    /// decryption shares with the HE channel; 8 bytes a value otherwise).
    #[serde(default)]
    pub bytes_sent_per_member: u64,
    /// Secure sums run (statistics, hyper-parameters, k-means, summaries).
    #[serde(default)]
    pub aggregations: usize,
    /// Rounds with a global step (FBO-FedGP: a summary aggregation).
    #[serde(default)]
    pub global_steps: usize,
    /// Cumulative regret after each round, when the algorithm tracks it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cumulative_regret: Option<Vec<f64>>,
    /// FBO-FedGP in simulation: RMSE of the last global posterior mean against
    /// the true standardised utility at random points (surrogate accuracy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub surrogate_rmse: Option<f64>,
    /// At the same points as `surrogate_rmse`: the RMSE of the best constant
    /// predictor (the targets' standard deviation), the bar a surrogate that
    /// has learnt anything is below.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub surrogate_rmse_constant: Option<f64>,
    /// What the run's members let out of their data (the simulator sets it,
    /// [`method::simulate`](crate::method::simulate)), so a report labels a
    /// noise-free run as not private. Absent in files written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub releases: Option<Releases>,
    /// The privacy loss ε after each round, for differentially private algorithms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epsilon: Option<Vec<f64>>,
    /// The best point the run evaluated, named by the task's typed space
    /// (issue 46): absent for a task without one (a box of unnamed floats),
    /// and in files written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_point: Option<BestPoint>,
    /// Whether the task is maximised (`best` and `trace` are then highest-is-best),
    /// so a report orients its comparisons without knowing every task. Every
    /// run writes it; in files written before the field existed it is absent
    /// and the task's name decides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximised: Option<bool>,
}

/// A run's best evaluated point with its names ([`RunResult::best_point`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BestPoint {
    /// Its noise-free value, in the task's units.
    pub value: f64,
    /// Its parameters by name, as the objective received them.
    pub params: serde_json::Map<String, serde_json::Value>,
}

impl BestPoint {
    /// The best of `points` (value, unit-cube point) for `task`, named by its
    /// typed space; `None` without a space or a point.
    pub fn of<'p>(
        task: &fedhe_tasks::Task,
        points: impl IntoIterator<Item = (f64, &'p [f64])>,
    ) -> Option<Self> {
        let space = task.space()?;
        let (value, x) = points
            .into_iter()
            .reduce(|a, b| if task.better(b.0, a.0) { b } else { a })?;
        Some(Self {
            value,
            params: space.decode(x),
        })
    }
}

/// What a run's members let out of their data: the privacy label of a
/// simulated run (issue 44: a noise-free run stays possible, labelled so),
/// known from its settings ([`FederatedMethod::releases`](crate::method::FederatedMethod::releases)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Releases {
    /// Nothing: each member alone on its own data (a lone agent, random
    /// search, Thompson sampling on its own posterior).
    Nothing,
    /// Every member's data in one place: a reference with no privacy at all.
    PooledData,
    /// Sums (or messages) decrypted without noise: not private. The attack
    /// suite reconstructs the members' points from such sums (SECURITY.md).
    NoiseFree,
    /// Every release private by differential privacy, within the budget
    /// the run's `epsilon` reports.
    Private,
}

impl Releases {
    /// How a report says it.
    pub fn label(self) -> &'static str {
        match self {
            Self::Nothing => "releases nothing (each member alone)",
            Self::PooledData => "pools every member's data: no privacy (a reference)",
            Self::NoiseFree => "noise-free releases: NOT private",
            Self::Private => "private (differential privacy, ε below)",
        }
    }
}
