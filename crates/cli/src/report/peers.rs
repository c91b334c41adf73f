//! Peers beside fedhe (`fedhe report --peers FILE`): the runs of another
//! library under the same protocol (e.g. BoTorch, from
//! `scripts/peers_botorch.py`), compared with the reference method task by
//! task. A peer's seeds are not fedhe's, so the samples are independent: the
//! test is the two-sided Mann-Whitney U (Wilcoxon rank-sum) test, Holm-corrected
//! over the tasks of one peer.

use super::compare::Mark;
use super::results::{Grouped, MethodRuns};
use fedhe_stats::{holm, mann_whitney, MannWhitney};
use serde::Deserialize;
use std::collections::BTreeMap;

/// A peer's fixture as the scripts write it: `runs` keyed `"function/seed"`.
#[derive(Debug, Deserialize)]
struct PeerFile {
    /// A short column name; the file's stem when absent.
    #[serde(default)]
    label: Option<String>,
    /// What the peer is (library, model, acquisition).
    #[serde(default)]
    method: Option<String>,
    runs: BTreeMap<String, serde_json::Value>,
}

/// One run of the peer.
#[derive(Debug, Deserialize)]
struct PeerRun {
    /// The task (`f1`, or fedhe's full name `cec2005-f1`).
    function: String,
    seed: u64,
    /// The best value the run found.
    best: f64,
}

/// A peer's best values, by task.
#[derive(Clone, Debug)]
pub struct Peer {
    /// The column name.
    pub label: String,
    /// What the peer is, from the file (may be empty).
    pub description: String,
    /// The file it came from.
    pub source: String,
    /// task as the file names it → best values, in seed order.
    by_task: BTreeMap<String, Vec<f64>>,
}

impl Peer {
    /// Reads a peer fixture; `stem` names the column when the file has no
    /// `label`. The error names the first bad run.
    pub fn parse(text: &str, stem: &str, source: &str) -> Result<Self, String> {
        let file: PeerFile = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if file.runs.is_empty() {
            return Err("\"runs\" is empty".to_string());
        }
        let mut by_task: BTreeMap<String, BTreeMap<u64, f64>> = BTreeMap::new();
        for (key, value) in file.runs {
            let run: PeerRun =
                serde_json::from_value(value).map_err(|e| format!("run {key:?}: {e}"))?;
            if key != format!("{}/{}", run.function, run.seed) {
                return Err(format!(
                    "run {key:?} holds function {:?}, seed {}: the key must be \"function/seed\"",
                    run.function, run.seed
                ));
            }
            if !run.best.is_finite() {
                return Err(format!("run {key:?}: best {} is not finite", run.best));
            }
            by_task
                .entry(run.function)
                .or_default()
                .insert(run.seed, run.best);
        }
        let label = match file.label {
            Some(l) if !l.trim().is_empty() => l,
            _ => stem.to_string(),
        };
        Ok(Self {
            label,
            description: file.method.unwrap_or_default(),
            source: source.to_string(),
            by_task: by_task
                .into_iter()
                .map(|(task, seeds)| (task, seeds.into_values().collect()))
                .collect(),
        })
    }

    /// The peer's best values on fedhe's `task`: the file may name it in
    /// full or by the function alone (`f1` for `cec2005-f1`).
    pub fn values(&self, task: &str) -> Option<&[f64]> {
        self.by_task
            .get(task)
            .or_else(|| {
                task.strip_prefix("cec2005-")
                    .and_then(|f| self.by_task.get(f))
            })
            .map(Vec::as_slice)
    }
}

/// The reference against a peer on one task.
#[derive(Clone, Debug)]
pub struct PeerCell {
    /// The task.
    pub task: String,
    /// The reference's median best and its number of runs.
    pub reference_median: f64,
    /// How many runs of the reference.
    pub reference_runs: usize,
    /// The peer's median best.
    pub peer_median: f64,
    /// How many runs of the peer.
    pub peer_runs: usize,
    /// The rank-sum test of the reference's bests against the peer's,
    /// oriented so that lower is better.
    pub test: MannWhitney,
    /// Holm-adjusted p-value over the peer's tasks.
    pub adjusted_p: f64,
    /// How the peer does against the reference, as in the Table 1 marks:
    /// `+` significantly better, `≈` no significant difference, `−` worse.
    pub mark: Mark,
    /// Whether the reference's median is at least as good as the peer's.
    pub reference_at_least_as_good: bool,
}

/// Every task the reference and a peer both ran.
#[derive(Clone, Debug)]
pub struct PeerComparison {
    /// The peer.
    pub peer: Peer,
    /// One per common task, in report order.
    pub cells: Vec<PeerCell>,
    /// The reference's tasks the peer did not run.
    pub missing: Vec<String>,
}

impl PeerComparison {
    /// Tasks on which the reference's median is at least as good as the peer's.
    pub fn reference_at_least_as_good(&self) -> usize {
        self.cells
            .iter()
            .filter(|c| c.reference_at_least_as_good)
            .count()
    }

    /// Tasks with the peer significantly better (`+`), tied, worse (`−`).
    pub fn marks(&self) -> (usize, usize, usize) {
        let count = |m: Mark| self.cells.iter().filter(|c| c.mark == m).count();
        (count(Mark::Better), count(Mark::Tie), count(Mark::Worse))
    }
}

/// The median of `values` (the mean of the two middle values for an even count).
pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The reference against `peer` on every task both ran: medians, a rank-sum
/// test per task, Holm's correction over those tasks, marks at `alpha`.
pub fn compare(grouped: &Grouped, reference: &str, peer: Peer, alpha: f64) -> PeerComparison {
    let mut missing = Vec::new();
    let mut rows: Vec<(String, &MethodRuns, bool, &[f64])> = Vec::new();
    for task in &grouped.tasks {
        let Some(runs) = task.methods.get(reference) else {
            continue;
        };
        match peer.values(&task.task) {
            Some(values) => rows.push((task.task.clone(), runs, task.maximised, values)),
            None => missing.push(task.task.clone()),
        }
    }
    let oriented = |maximised: bool, v: &[f64]| -> Vec<f64> {
        v.iter().map(|x| if maximised { -x } else { *x }).collect()
    };
    let tested: Vec<(String, Vec<f64>, Vec<f64>, bool)> = rows
        .into_iter()
        .map(|(task, runs, maximised, values)| {
            let ours: Vec<f64> = runs.best_by_seed.values().copied().collect();
            (task, ours, values.to_vec(), maximised)
        })
        .collect();
    let tests: Vec<Option<MannWhitney>> = tested
        .iter()
        .map(|(_, ours, theirs, maximised)| {
            mann_whitney(&oriented(*maximised, ours), &oriented(*maximised, theirs))
        })
        .collect();
    let p_values: Vec<f64> = tests.iter().flatten().map(|t| t.p_value).collect();
    let mut adjusted = holm(&p_values).into_iter();
    let cells = tested
        .into_iter()
        .zip(tests)
        .filter_map(|((task, ours, theirs, maximised), test)| {
            let test = test?;
            let adjusted_p = adjusted.next().unwrap_or(1.0);
            let (reference_median, peer_median) = (median(&ours), median(&theirs));
            let mark = if adjusted_p > alpha {
                Mark::Tie
            } else if test.first_is_lower() {
                // The reference's values are the lower (better): the peer is worse.
                Mark::Worse
            } else {
                Mark::Better
            };
            let reference_at_least_as_good = if maximised {
                reference_median >= peer_median
            } else {
                reference_median <= peer_median
            };
            Some(PeerCell {
                task,
                reference_median,
                reference_runs: ours.len(),
                peer_median,
                peer_runs: theirs.len(),
                test,
                adjusted_p,
                mark,
                reference_at_least_as_good,
            })
        })
        .collect();
    PeerComparison {
        peer,
        cells,
        missing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::results::{group, Run};

    fn run(task: &str, method: &str, seed: u64, best: f64) -> Run {
        Run {
            task: task.to_string(),
            method: method.to_string(),
            seed,
            members: 2,
            rounds: 1,
            best,
            best_per_member: vec![best, best],
            trace: vec![best],
            seconds: 0.1,
            bytes_sent_per_member: 0,
            aggregations: 0,
            global_steps: 0,
            cumulative_regret: None,
            epsilon: None,
            surrogate_rmse: None,
            surrogate_rmse_constant: None,
            releases: None,
            best_point: None,
            maximised: Some(false),
        }
    }

    fn peer_json(runs: &[(&str, u64, f64)]) -> String {
        let runs: serde_json::Map<String, serde_json::Value> = runs
            .iter()
            .map(|(f, s, b)| {
                (
                    format!("{f}/{s}"),
                    serde_json::json!({"function": f, "seed": s, "best": b, "trace": [b]}),
                )
            })
            .collect();
        serde_json::json!({"method": "a peer", "runs": runs}).to_string()
    }

    #[test]
    fn a_peer_is_matched_by_function_tested_by_rank_sum_and_holm_corrected() {
        // f1: fedhe's ten seeds all below the peer's five (fedhe better);
        // f2: interleaved; f3: the peer ran nothing.
        let mut runs = Vec::new();
        for seed in 0..10 {
            runs.push(run("cec2005-f1", "fbo-fedgp", seed, seed as f64));
            runs.push(run("cec2005-f2", "fbo-fedgp", seed, 2.0 * seed as f64));
            runs.push(run("cec2005-f3", "fbo-fedgp", seed, 1.0));
        }
        let grouped = group(runs, "fbo-fedgp").unwrap();
        let mut peer_runs = Vec::new();
        for seed in 0..5u64 {
            peer_runs.push(("f1", seed, 100.0 + seed as f64));
            peer_runs.push(("f2", seed, 4.0 * seed as f64 + 1.0));
        }
        let peer = Peer::parse(&peer_json(&peer_runs), "botorch", "peer.json").unwrap();
        assert_eq!(peer.label, "botorch");
        let c = compare(&grouped, "fbo-fedgp", peer, 0.05);
        assert_eq!(c.missing, vec!["cec2005-f3".to_string()]);
        assert_eq!(c.cells.len(), 2);
        let f1 = &c.cells[0];
        assert_eq!((f1.reference_median, f1.peer_median), (4.5, 102.0));
        // Completely separated 10 against 5: p = 2/C(15, 5) = 2/3003,
        // doubled by Holm over two tasks (the smaller p of the family).
        assert!((f1.test.p_value - 2.0 / 3003.0).abs() < 1e-15);
        assert!((f1.adjusted_p - 4.0 / 3003.0).abs() < 1e-15);
        assert_eq!(f1.mark, Mark::Worse, "the peer is significantly worse");
        assert!(f1.reference_at_least_as_good);
        let f2 = &c.cells[1];
        assert_eq!(f2.mark, Mark::Tie);
        // fedhe's median 9 against the peer's 9: at least as good.
        assert_eq!((f2.reference_median, f2.peer_median), (9.0, 9.0));
        assert_eq!(c.reference_at_least_as_good(), 2);
        assert_eq!(c.marks(), (0, 1, 1));
    }

    #[test]
    fn a_bad_peer_file_is_refused_naming_the_run() {
        let err = Peer::parse(
            &peer_json(&[("f1", 0, 1.0)]).replace("f1/0", "f1/7"),
            "p",
            "x",
        )
        .unwrap_err();
        assert!(
            err.contains("\"f1/7\"") && err.contains("function/seed"),
            "{err}"
        );
        let err = Peer::parse(r#"{"runs": {}}"#, "p", "x").unwrap_err();
        assert!(err.contains("empty"), "{err}");
        let err = Peer::parse(
            r#"{"runs": {"f1/0": {"function": "f1", "seed": 0, "best": null}}}"#,
            "p",
            "x",
        )
        .unwrap_err();
        assert!(err.contains("\"f1/0\"") && err.contains("null"), "{err}");
        assert!(Peer::parse("[1, 2]", "p", "x").is_err());
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&[]).is_nan());
    }
}
