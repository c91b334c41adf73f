//! `results.json` as `fedhe simulate` writes it, read and checked for the report.

use std::collections::{BTreeMap, BTreeSet};

/// The file and one run of it: the simulator's own types, so the two never
/// disagree on a field.
pub use fedhe_algorithms::{ResultsFile, RunResult as Run};

/// The runs of one method on one task, ordered by seed.
#[derive(Clone, Debug, Default)]
pub struct MethodRuns {
    /// seed → best value.
    pub best_by_seed: BTreeMap<u64, f64>,
    /// Best-so-far traces, in seed order; all of one length per task.
    pub traces: Vec<Vec<f64>>,
    /// The privacy loss ε after the last round, one per private run.
    pub final_epsilon: Vec<f64>,
    /// The cumulative regret after the last round, one per run that reports it.
    pub final_regret: Vec<f64>,
    /// The aggregations of the runs that report a cumulative regret.
    pub aggregations: Vec<usize>,
    /// What the runs let out of the members' data, one per run that says.
    pub releases: Vec<fedhe_algorithms::Releases>,
    /// The best named point over the runs that report one, and its seed.
    pub best_point: Option<(u64, fedhe_algorithms::BestPoint)>,
}

/// The runs grouped by task, then method, in report order.
#[derive(Debug)]
pub struct Grouped {
    /// Tasks in natural order (`cec2005-f2` before `cec2005-f10`).
    pub tasks: Vec<TaskRuns>,
    /// Every method seen, in report order (see [`method_order`]).
    pub methods: Vec<String>,
    /// Total number of runs.
    pub run_count: usize,
}

/// The runs of one task.
#[derive(Debug)]
pub struct TaskRuns {
    /// Task name.
    pub task: String,
    /// Whether the task's objective is maximised (Garland, DoubleSine), so a
    /// higher `best` is better; every other task is minimised.
    pub maximised: bool,
    /// Number of rounds (the common trace length).
    pub rounds: usize,
    /// method → runs.
    pub methods: BTreeMap<String, MethodRuns>,
}

/// The methods `fedhe simulate` knows, in the order the report shows them
/// after the reference method; any other method follows alphabetically.
const KNOWN_METHODS: [&str; 7] = [
    "fbo-fedgp",
    "local-only",
    "global-only",
    "random-support",
    "pooled-bo",
    "independent-bo",
    "random-search",
];

/// Whether `task` names an objective that `fedhe objective list` marks as
/// maximised: the fallback for files without the runs' `maximised` field.
/// Other tasks (CEC-2005, the classifier tasks, regrets) are minimised.
pub fn is_maximised(task: &str) -> bool {
    fedhe_tasks::info(task).is_some_and(|i| i.sense == fedhe_tasks::Sense::Maximise)
}

/// Checks the runs and groups them. The error names the first problem found:
/// no runs, an empty or non-finite field, a repeated (task, method, seed),
/// traces of different lengths within one task (the plots average them round
/// by round, so they must align), or runs of one task that disagree on whether
/// it is maximised.
pub fn group(runs: Vec<Run>, reference: &str) -> Result<Grouped, String> {
    if runs.is_empty() {
        return Err("\"runs\" is empty".to_string());
    }
    let run_count = runs.len();
    let mut by_task: BTreeMap<String, TaskRuns> = BTreeMap::new();
    let mut methods = BTreeSet::new();
    for (i, run) in runs.into_iter().enumerate() {
        let at = format!(
            "run {i} ({} / {} / seed {})",
            run.task, run.method, run.seed
        );
        if run.task.is_empty() || run.method.is_empty() {
            return Err(format!("run {i}: empty task or method name"));
        }
        if !run.best.is_finite() {
            return Err(format!("{at}: \"best\" is not finite"));
        }
        if run.trace.is_empty() {
            return Err(format!("{at}: \"trace\" is empty"));
        }
        if run.trace.iter().any(|v| !v.is_finite()) {
            return Err(format!("{at}: \"trace\" has a non-finite value"));
        }
        let task = by_task.entry(run.task.clone()).or_insert_with(|| TaskRuns {
            task: run.task.clone(),
            maximised: run.maximised.unwrap_or_else(|| is_maximised(&run.task)),
            rounds: run.trace.len(),
            methods: BTreeMap::new(),
        });
        if run.maximised.is_some_and(|m| m != task.maximised) {
            return Err(format!(
                "{at}: \"maximised\" disagrees with earlier runs of task {}",
                task.task
            ));
        }
        if run.trace.len() != task.rounds {
            return Err(format!(
                "{at}: inconsistent trace lengths in task {}: {} rounds, earlier runs have {}",
                run.task,
                run.trace.len(),
                task.rounds
            ));
        }
        methods.insert(run.method.clone());
        let entry = task.methods.entry(run.method.clone()).or_default();
        if entry.best_by_seed.insert(run.seed, run.best).is_some() {
            return Err(format!("{at}: the same task, method and seed appear twice"));
        }
        entry.traces.push(run.trace);
        entry.releases.extend(run.releases);
        if let Some(point) = run.best_point {
            let better = |a: f64, b: f64| if task.maximised { a > b } else { a < b };
            if entry
                .best_point
                .as_ref()
                .is_none_or(|(_, kept)| better(point.value, kept.value))
            {
                entry.best_point = Some((run.seed, point));
            }
        }
        if let Some(&e) = run.epsilon.as_ref().and_then(|e| e.last()) {
            entry.final_epsilon.push(e);
        }
        if let Some(&r) = run.cumulative_regret.as_ref().and_then(|r| r.last()) {
            if !r.is_finite() {
                return Err(format!("{at}: \"cumulative_regret\" is not finite"));
            }
            entry.final_regret.push(r);
            entry.aggregations.push(run.aggregations);
        }
    }
    let mut tasks: Vec<TaskRuns> = by_task.into_values().collect();
    tasks.sort_by(|a, b| natural_cmp(&a.task, &b.task));
    Ok(Grouped {
        tasks,
        methods: method_order(methods, reference),
        run_count,
    })
}

/// The reference method first, then the known methods in their order, then
/// the rest alphabetically.
pub fn method_order(methods: BTreeSet<String>, reference: &str) -> Vec<String> {
    let rank = |m: &str| {
        if m == reference {
            0
        } else {
            KNOWN_METHODS
                .iter()
                .position(|k| *k == m)
                .map_or(usize::MAX, |p| p + 1)
        }
    };
    let mut ordered: Vec<String> = methods.into_iter().collect();
    // Stable: equal ranks (unknown methods) keep the alphabetical order of the set.
    ordered.sort_by_key(|m| rank(m));
    ordered
}

/// Compares strings so that runs of digits compare as numbers: `f2` < `f10`.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    fn chunks(s: &str) -> Vec<(bool, &str)> {
        let mut out = Vec::new();
        let mut start = 0;
        let bytes = s.as_bytes();
        for i in 1..=bytes.len() {
            if i == bytes.len() || bytes[i].is_ascii_digit() != bytes[start].is_ascii_digit() {
                out.push((bytes[start].is_ascii_digit(), &s[start..i]));
                start = i;
            }
        }
        out
    }
    let (ca, cb) = (chunks(a), chunks(b));
    for ((da, sa), (db, sb)) in ca.iter().zip(&cb) {
        let ord = if *da && *db {
            // Compare numerically without parsing: fewer significant digits is smaller.
            let (ta, tb) = (sa.trim_start_matches('0'), sb.trim_start_matches('0'));
            ta.len().cmp(&tb.len()).then(ta.cmp(tb))
        } else {
            sa.cmp(sb)
        };
        if ord != std::cmp::Ordering::Equal {
            return ord;
        }
    }
    ca.len().cmp(&cb.len()).then(a.cmp(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(task: &str, method: &str, seed: u64, trace: &[f64]) -> Run {
        Run {
            task: task.into(),
            method: method.into(),
            seed,
            best: *trace.last().unwrap(),
            trace: trace.to_vec(),
            ..Run::default()
        }
    }

    #[test]
    fn the_runs_maximised_field_decides_the_sense_and_must_agree() {
        // `my-task` is not in `fedhe objective list`: only the field says it
        // is maximised.
        let mut mine = run("my-task", "a", 0, &[1.0, 2.0]);
        mine.maximised = Some(true);
        let g = group(vec![mine], "a").unwrap();
        assert!(g.tasks[0].maximised);
        let g = group(vec![run("my-task", "a", 0, &[1.0, 2.0])], "a").unwrap();
        assert!(!g.tasks[0].maximised, "without the field the name decides");
        // The registry lists `kernel-sum-se` as maximised (issue 17: it was
        // read as minimised when only the CEC list was consulted).
        let g = group(vec![run("kernel-sum-se", "a", 0, &[1.0, 2.0])], "a").unwrap();
        assert!(g.tasks[0].maximised);
        let mut up = run("kernel-sum-se", "a", 0, &[1.0, 2.0]);
        up.maximised = Some(true);
        let mut down = run("kernel-sum-se", "b", 0, &[1.0, 2.0]);
        down.maximised = Some(false);
        let err = group(vec![up, down], "a").unwrap_err();
        assert!(err.contains("\"maximised\" disagrees"), "{err}");
    }

    #[test]
    fn natural_order_of_tasks() {
        let mut v = vec!["cec2005-f10", "cec2005-f2", "cec2005-f1", "garland"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, ["cec2005-f1", "cec2005-f2", "cec2005-f10", "garland"]);
    }

    #[test]
    fn reference_first_then_known_then_alphabetical() {
        let set: BTreeSet<String> = ["zeta", "random-search", "local-only", "alpha", "fbo-fedgp"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            method_order(set.clone(), "fbo-fedgp"),
            ["fbo-fedgp", "local-only", "random-search", "alpha", "zeta"]
        );
        assert_eq!(method_order(set, "zeta")[0], "zeta");
    }

    #[test]
    fn refuses_bad_runs() {
        assert!(group(vec![], "fbo-fedgp").unwrap_err().contains("empty"));
        let err = group(
            vec![run("t", "m", 0, &[3.0, 2.0]), run("t", "n", 0, &[3.0])],
            "m",
        )
        .unwrap_err();
        assert!(err.contains("inconsistent trace lengths"), "{err}");
        let err = group(
            vec![run("t", "m", 0, &[1.0]), run("t", "m", 0, &[1.0])],
            "m",
        )
        .unwrap_err();
        assert!(err.contains("twice"), "{err}");
        // Different tasks may have different lengths.
        let g = group(
            vec![run("a", "m", 0, &[1.0]), run("b", "m", 0, &[2.0, 1.0])],
            "m",
        )
        .unwrap();
        assert_eq!(g.tasks.len(), 2);
        assert_eq!(g.tasks[1].rounds, 2);
    }
}
