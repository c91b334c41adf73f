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
    /// The privacy loss ε after each round, for differentially private algorithms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epsilon: Option<Vec<f64>>,
    /// Whether the task is maximised (`best` and `trace` are then highest-is-best),
    /// so a report orients its comparisons without knowing every task. Every
    /// run writes it; in files written before the field existed it is absent
    /// and the task's name decides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximised: Option<bool>,
}
