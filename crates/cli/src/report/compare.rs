//! The reference method against every other method: per task paired by seed
//! (the `+ / ≈ / −` of the paper's Table 1) and across tasks paired by task on
//! the per-task means (the paper's Table 5).

use super::results::{Grouped, MethodRuns};
use fedhe_stats::{holm, wilcoxon, Summary, Wilcoxon};

/// The outcome of one comparison, seen from the *other* method as in the
/// paper's Table 1 ("wins, ties and losses of the algorithm compared to
/// FBO-FedGP").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// `+`: the other method is significantly better (lower; higher on a
    /// maximised task) than the reference.
    Better,
    /// `≈`: no significant difference after Holm's correction.
    Tie,
    /// `−`: the other method is significantly worse than the reference.
    Worse,
}

impl Mark {
    /// The symbol the paper prints.
    pub fn symbol(self) -> &'static str {
        match self {
            Self::Better => "+",
            Self::Tie => "≈",
            Self::Worse => "−",
        }
    }

    /// The mark of a test on d_i = reference_i − other_i whose Holm-adjusted
    /// p-value is `adjusted`: significant at `alpha` when adjusted ≤ alpha, in
    /// the direction of the larger rank sum (W⁺ > W⁻: the reference is higher,
    /// so the other method is better).
    pub fn of(test: &Wilcoxon, adjusted: f64, alpha: f64) -> Self {
        if adjusted > alpha || test.rank_sum_positive == test.rank_sum_negative {
            Self::Tie
        } else if test.rank_sum_positive > test.rank_sum_negative {
            Self::Better
        } else {
            Self::Worse
        }
    }
}

/// Counts of `+`, `≈`, `−`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Number of `+`.
    pub better: usize,
    /// Number of `≈`.
    pub tie: usize,
    /// Number of `−`.
    pub worse: usize,
}

impl Tally {
    /// Adds one mark.
    pub fn add(&mut self, mark: Mark) {
        match mark {
            Mark::Better => self.better += 1,
            Mark::Tie => self.tie += 1,
            Mark::Worse => self.worse += 1,
        }
    }

    /// `b/t/w` as the paper's summary row prints it.
    pub fn to_paper_string(self) -> String {
        format!("{}/{}/{}", self.better, self.tie, self.worse)
    }
}

/// A paired test of the reference against one method.
#[derive(Clone, Debug)]
pub struct Comparison {
    /// The other method.
    pub method: String,
    /// The test on d = reference − other; `None` when there is no pair.
    pub test: Option<Wilcoxon>,
    /// Holm-adjusted p-value within the comparison's family.
    pub adjusted_p: f64,
    /// The resulting mark (`Tie` when there is no test).
    pub mark: Mark,
}

/// The comparisons on one task.
#[derive(Clone, Debug)]
pub struct TaskComparisons {
    /// Task name.
    pub task: String,
    /// One per other method that ran on the task, in report order.
    pub comparisons: Vec<Comparison>,
}

/// One family of tests: runs the tests, adjusts their p-values together with
/// Holm's procedure and marks them. Comparisons without a test (no common
/// seed) are left out of the family.
fn family(tests: Vec<(String, Option<Wilcoxon>)>, alpha: f64) -> Vec<Comparison> {
    let tested: Vec<f64> = tests
        .iter()
        .filter_map(|(_, t)| t.map(|t| t.p_value))
        .collect();
    let mut adjusted = holm(&tested).into_iter();
    tests
        .into_iter()
        .map(|(method, test)| match test {
            Some(t) => {
                let adjusted_p = adjusted.next().unwrap_or(1.0);
                Comparison {
                    method,
                    mark: Mark::of(&t, adjusted_p, alpha),
                    test: Some(t),
                    adjusted_p,
                }
            }
            None => Comparison {
                method,
                test: None,
                adjusted_p: f64::NAN,
                mark: Mark::Tie,
            },
        })
        .collect()
}

/// A `best` value oriented so that lower is better: negated on a maximised task.
fn loss(maximised: bool, best: f64) -> f64 {
    if maximised {
        -best
    } else {
        best
    }
}

/// The paired-by-seed test of `reference` against `other`, over their common
/// seeds, on values oriented so that lower is better.
pub fn paired_by_seed(
    reference: &MethodRuns,
    other: &MethodRuns,
    maximised: bool,
) -> Option<Wilcoxon> {
    let (a, b): (Vec<f64>, Vec<f64>) = reference
        .best_by_seed
        .iter()
        .filter_map(|(seed, r)| {
            other
                .best_by_seed
                .get(seed)
                .map(|o| (loss(maximised, *r), loss(maximised, *o)))
        })
        .unzip();
    if a.is_empty() {
        None
    } else {
        wilcoxon(&a, &b)
    }
}

/// Per task, the reference against every other method, paired by seed.
///
/// Holm's family is the comparisons of one task (one row of Table 1). A
/// family of all tasks × methods could never reject anything at 10 seeds:
/// the smallest two-sided exact p-value with n = 10 pairs is 2/2^10 ≈ 0.002,
/// above 0.05/m once m > 25.
pub fn per_task(grouped: &Grouped, reference: &str, alpha: f64) -> Vec<TaskComparisons> {
    grouped
        .tasks
        .iter()
        .map(|task| {
            let reference_runs = task.methods.get(reference);
            let tests = grouped
                .methods
                .iter()
                .filter(|m| m.as_str() != reference)
                .filter_map(|m| task.methods.get(m).map(|runs| (m, runs)))
                .map(|(m, runs)| {
                    let test = reference_runs.and_then(|r| paired_by_seed(r, runs, task.maximised));
                    (m.clone(), test)
                })
                .collect();
            TaskComparisons {
                task: task.task.clone(),
                comparisons: family(tests, alpha),
            }
        })
        .collect()
}

/// The paper's Table 5 for one method: the test over tasks.
#[derive(Clone, Debug)]
pub struct AcrossTasks {
    /// The comparison (test, Holm-adjusted p across methods, mark).
    pub comparison: Comparison,
    /// Number of tasks both methods ran.
    pub tasks: usize,
    /// The paper's "rank-biserial" as Table 5 defines it, (n⁺ − n⁻)/n, with
    /// n⁺ (n⁻) the tasks where the reference's mean is higher (lower): a
    /// sign-count statistic, printed beside the rank-based one for comparison.
    pub sign_effect: f64,
}

/// Across tasks: per method, the Wilcoxon test on the pairs (mean of the
/// reference, mean of the method) over the tasks both ran, Holm across methods.
pub fn across_tasks(grouped: &Grouped, reference: &str, alpha: f64) -> Vec<AcrossTasks> {
    let mut tests = Vec::new();
    let mut extras = Vec::new();
    for method in grouped.methods.iter().filter(|m| m.as_str() != reference) {
        let (a, b): (Vec<f64>, Vec<f64>) = grouped
            .tasks
            .iter()
            .filter_map(|t| Some((t, t.methods.get(reference)?, t.methods.get(method)?)))
            .map(|(t, r, o)| {
                (
                    loss(t.maximised, mean_best(r)),
                    loss(t.maximised, mean_best(o)),
                )
            })
            .unzip();
        let higher = a.iter().zip(&b).filter(|(r, o)| r > o).count() as f64;
        let lower = a.iter().zip(&b).filter(|(r, o)| r < o).count() as f64;
        let sign_effect = if a.is_empty() {
            0.0
        } else {
            (higher - lower) / a.len() as f64
        };
        extras.push((a.len(), sign_effect));
        let test = if a.is_empty() { None } else { wilcoxon(&a, &b) };
        tests.push((method.clone(), test));
    }
    family(tests, alpha)
        .into_iter()
        .zip(extras)
        .map(|(comparison, (tasks, sign_effect))| AcrossTasks {
            comparison,
            tasks,
            sign_effect,
        })
        .collect()
}

/// Mean best value of some runs.
pub fn mean_best(runs: &MethodRuns) -> f64 {
    let values: Vec<f64> = runs.best_by_seed.values().copied().collect();
    Summary::of(&values).map_or(f64::NAN, |s| s.mean)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::results::{group, Run};

    fn runs(task: &str, method: &str, bests: &[f64]) -> Vec<Run> {
        bests
            .iter()
            .enumerate()
            .map(|(seed, &best)| Run {
                task: task.into(),
                method: method.into(),
                seed: seed as u64,
                best,
                trace: vec![best],
                ..Run::default()
            })
            .collect()
    }

    #[test]
    fn marks_follow_the_paper_convention() {
        // "ref" is lower on every seed than "worse" and higher than "better".
        let base: Vec<f64> = (0..10).map(|i| i as f64).collect();
        let plus = |k: f64| base.iter().map(|v| v + k + 0.01 * v).collect::<Vec<_>>();
        let mut all = runs("t", "ref", &base);
        all.extend(runs("t", "worse", &plus(1.0)));
        all.extend(runs("t", "better", &plus(-1.0)));
        all.extend(runs(
            "t",
            "same",
            &base
                .iter()
                .map(|v| v + [0.5, -0.5][*v as usize % 2])
                .collect::<Vec<_>>(),
        ));
        let g = group(all, "ref").unwrap();
        let rows = per_task(&g, "ref", 0.05);
        let marks: Vec<(&str, &str)> = rows[0]
            .comparisons
            .iter()
            .map(|c| (c.method.as_str(), c.mark.symbol()))
            .collect();
        assert_eq!(marks, [("better", "+"), ("same", "≈"), ("worse", "−")]);
        // Family of three: the two p = 2/1024 are adjusted by 3 and 2, and the
        // running maximum makes both 3·2/1024.
        let better = &rows[0].comparisons[0];
        assert!((better.adjusted_p - 6.0 / 1024.0).abs() < 1e-15);
        assert!(better.test.unwrap().rank_biserial() == 1.0);
    }

    #[test]
    fn on_a_maximised_objective_higher_is_better() {
        // Garland is maximised: "higher" beats "ref" on every seed.
        let base: Vec<f64> = (0..10).map(|i| 0.5 + 0.01 * i as f64).collect();
        let mut all = runs("garland", "ref", &base);
        all.extend(runs(
            "garland",
            "higher",
            &base.iter().map(|v| v + 0.1).collect::<Vec<_>>(),
        ));
        all.extend(runs("cec2005-f1", "ref", &base));
        all.extend(runs(
            "cec2005-f1",
            "higher",
            &base.iter().map(|v| v + 0.1).collect::<Vec<_>>(),
        ));
        let g = group(all, "ref").unwrap();
        let marks: Vec<(String, &str)> = per_task(&g, "ref", 0.05)
            .iter()
            .map(|t| (t.task.clone(), t.comparisons[0].mark.symbol()))
            .collect();
        assert_eq!(
            marks,
            [
                ("cec2005-f1".to_string(), "−"),
                ("garland".to_string(), "+")
            ]
        );
        // Across the two tasks the method is better once and worse once.
        let across = across_tasks(&g, "ref", 0.05);
        assert_eq!(across[0].sign_effect, 0.0);
    }
}
