//! `report.md`: the tables of the report as Markdown.

use super::baseline::BaselineTable;
use super::compare::{mean_best, AcrossTasks, Tally, TaskComparisons};
use super::peers::PeerComparison;
use super::results::{natural_cmp, Grouped, MethodRuns, TaskRuns};
use fedhe_stats::Summary;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Everything the Markdown needs.
pub struct ReportInput<'a> {
    /// The grouped runs.
    pub grouped: &'a Grouped,
    /// The reference method.
    pub reference: &'a str,
    /// The published table's column of the method the reference runs
    /// (`None`: the column named like the reference).
    pub paper_method: Option<&'a str>,
    /// Significance level.
    pub alpha: f64,
    /// Per-task comparisons (Table 1 style).
    pub per_task: &'a [TaskComparisons],
    /// Across-task comparisons (Table 5 style).
    pub across: &'a [AcrossTasks],
    /// The published table and the path it came from.
    pub baseline: Option<(&'a BaselineTable, &'a str)>,
    /// Other libraries' runs under the same protocol, against the reference.
    pub peers: &'a [PeerComparison],
    /// (task, plot path relative to the report).
    pub plots: &'a [(String, String)],
}

/// A value with about six significant digits: the precise form of the
/// per-method table, so that the report can be checked against `results.json`.
pub fn format_precise(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let e = x.abs().log10().floor() as i32;
    if !(-3..6).contains(&e) {
        format!("{x:.5e}")
    } else {
        format!("{x:.*}", (5 - e) as usize)
    }
}

/// A value as the paper prints them: two decimals, or three significant
/// digits in scientific form when very large or small (`1.05e8`).
pub fn format_compact(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let e = x.abs().log10().floor() as i32;
    if !(-2..5).contains(&e) {
        format!("{x:.2e}")
    } else if e < 0 {
        format!("{x:.4}")
    } else {
        format!("{x:.2}")
    }
}

/// A p-value: four significant digits.
fn format_p(p: f64) -> String {
    if !p.is_finite() {
        "–".to_string()
    } else if p >= 1e-3 {
        format!("{p:.4}")
    } else {
        format!("{p:.3e}")
    }
}

/// The summary of one method's best values on one task.
fn summary(grouped: &Grouped, task: usize, method: &str) -> Option<Summary> {
    let runs = grouped.tasks[task].methods.get(method)?;
    let values: Vec<f64> = runs.best_by_seed.values().copied().collect();
    Summary::of(&values)
}

/// Which way is better, for the header: lower, except on maximised objectives.
fn sense_sentence(g: &Grouped) -> String {
    let maximised: Vec<String> = g
        .tasks
        .iter()
        .filter(|t| t.maximised)
        .map(|t| format!("`{}`", t.task))
        .collect();
    if maximised.is_empty() {
        "Every objective is minimised: lower is better.".to_string()
    } else {
        format!(
            "Lower `best` is better, except on the maximised {}, where higher is better; \
             the comparisons are oriented accordingly.",
            maximised.join(", ")
        )
    }
}

/// Renders the whole report.
pub fn render(input: &ReportInput) -> String {
    let g = input.grouped;
    let reference = input.reference;
    let others: Vec<&String> = g.methods.iter().filter(|m| *m != reference).collect();
    let mut out = String::new();
    let w = &mut out;

    let _ = writeln!(w, "# fedhe report\n");
    let _ = writeln!(
        w,
        "From `results.json`: {} runs, {} tasks, methods {}. Reference method: `{reference}`. \
         {}\n",
        g.run_count,
        g.tasks.len(),
        g.methods
            .iter()
            .map(|m| format!("`{m}`"))
            .collect::<Vec<_>>()
            .join(", "),
        sense_sentence(g)
    );

    // 0. What the runs let out of the members' data.
    render_releases(w, g);

    // 1. Summaries.
    let _ = writeln!(w, "## Best value per task and method\n");
    let _ = writeln!(
        w,
        "`best` over the seeds: n runs, mean and sample standard deviation (n − 1 in the denominator).\n"
    );
    let _ = writeln!(w, "| task | method | n | mean | std |");
    let _ = writeln!(w, "| --- | --- | ---: | ---: | ---: |");
    for (t, task) in g.tasks.iter().enumerate() {
        for method in &g.methods {
            if let Some(s) = summary(g, t, method) {
                let _ = writeln!(
                    w,
                    "| {} | {method} | {} | {} | {} |",
                    task.task,
                    s.n,
                    format_precise(s.mean),
                    format_precise(s.std)
                );
            }
        }
    }

    // 1b. Privacy losses of the differentially private methods.
    render_privacy(w, g);

    // 1c. Cumulative regret of the bandit methods.
    render_regret(w, g);

    // 1d. The best named points of the runs on a typed space.
    render_best_points(w, g);

    // 2. Table 1 style.
    let _ = writeln!(w, "\n## Comparison with `{reference}` (Table 1 style)\n");
    let _ = writeln!(
        w,
        "Mean ± std of `best`. The mark after each other method says how it does \
         against `{reference}`, as in the paper's Table 1: `+` significantly better \
         (lower), `≈` no significant difference, `−` significantly worse. Test: \
         two-sided Wilcoxon signed-rank on the runs paired by seed, Holm-corrected \
         over the comparisons of the task's row, α = {}.\n",
        input.alpha
    );
    let mut header = String::from("| task |");
    let mut rule = String::from("| --- |");
    for m in &others {
        let _ = write!(header, " {m} |");
        rule.push_str(" ---: |");
    }
    let _ = write!(header, " {reference} (reference) |");
    rule.push_str(" ---: |");
    let _ = writeln!(w, "{header}\n{rule}");
    let mut tallies: BTreeMap<&str, Tally> = BTreeMap::new();
    for (t, (task, comparisons)) in g.tasks.iter().zip(input.per_task).enumerate() {
        let _ = write!(w, "| {} |", task.task);
        for m in &others {
            let cell = match (
                summary(g, t, m),
                comparisons.comparisons.iter().find(|c| &&c.method == m),
            ) {
                (Some(s), Some(c)) => {
                    let mark = if c.test.is_some() {
                        tallies.entry(m.as_str()).or_default().add(c.mark);
                        c.mark.symbol()
                    } else {
                        "n/a"
                    };
                    format!(
                        "{} ± {} {mark}",
                        format_compact(s.mean),
                        format_compact(s.std)
                    )
                }
                _ => "–".to_string(),
            };
            let _ = write!(w, " {cell} |");
        }
        let cell = summary(g, t, reference).map_or("–".to_string(), |s| {
            format!("{} ± {}", format_compact(s.mean), format_compact(s.std))
        });
        let _ = writeln!(w, " {cell} |");
    }
    let _ = write!(w, "| +/≈/− |");
    for m in &others {
        let tally = tallies.get(m.as_str()).copied().unwrap_or_default();
        let _ = write!(w, " {} |", tally.to_paper_string());
    }
    let _ = writeln!(w, " – |");
    let total = tallies.values().fold(Tally::default(), |mut acc, t| {
        acc.better += t.better;
        acc.tie += t.tie;
        acc.worse += t.worse;
        acc
    });
    let _ = writeln!(
        w,
        "\nOver all {} comparisons: {} `+`, {} `≈`, {} `−` (other methods against `{reference}`).",
        total.better + total.tie + total.worse,
        total.better,
        total.tie,
        total.worse
    );

    // 3. The tests behind Table 1.
    let _ = writeln!(w, "\n## Tests per task\n");
    let _ = writeln!(
        w,
        "d = `{reference}` − method per seed. W = min(W⁺, W⁻) over the non-zero d \
         (zero differences dropped, as scipy's default `zero_method=\"wilcox\"`). \
         r_rb = (W⁺ − W⁻)/(W⁺ + W⁻), the matched-pairs rank-biserial correlation: \
         negative when `{reference}` is lower (better). p: `exact` null distribution \
         (no ties or zeros), `sign-flip` enumeration of all 2^n sign changes (ties or \
         zeros, ≤ 13 pairs), or `normal` approximation with tie and continuity \
         corrections.\n"
    );
    let _ = writeln!(
        w,
        "| task | method | pairs | non-zero | W | p | p (Holm) | r_rb | p by | mark |"
    );
    let _ = writeln!(
        w,
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | :-: |"
    );
    for row in input.per_task {
        for c in &row.comparisons {
            match &c.test {
                Some(t) => {
                    let _ = writeln!(
                        w,
                        "| {} | {} | {} | {} | {} | {} | {} | {:.3} | {} | {} |",
                        row.task,
                        c.method,
                        t.pairs,
                        t.n,
                        t.statistic(),
                        format_p(t.p_value),
                        format_p(c.adjusted_p),
                        t.rank_biserial(),
                        t.method.as_str(),
                        c.mark.symbol()
                    );
                }
                None => {
                    let _ = writeln!(
                        w,
                        "| {} | {} | 0 | – | – | – | – | – | no common seed | n/a |",
                        row.task, c.method
                    );
                }
            }
        }
    }

    // 4. Table 5 style.
    let _ = writeln!(w, "\n## Across tasks (Table 5 style)\n");
    let _ = writeln!(
        w,
        "As the paper's Table 5: per method, the Wilcoxon signed-rank test on the pairs \
         (mean of `{reference}`, mean of the method) over the tasks both ran; Holm across \
         the methods; α = {}. r_rb is rank-based as above; (n⁺ − n⁻)/n is the paper's \
         formula (n⁺ tasks where `{reference}`'s mean is higher, n⁻ lower), a sign count.\n",
        input.alpha
    );
    let _ = writeln!(
        w,
        "| method | tasks | W | p | p (Holm) | r_rb | (n⁺ − n⁻)/n | p by | significant |"
    );
    let _ = writeln!(
        w,
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | :-: |"
    );
    for a in input.across {
        let c = &a.comparison;
        match &c.test {
            Some(t) => {
                let sig = if c.adjusted_p <= input.alpha {
                    "yes"
                } else {
                    "no"
                };
                let _ = writeln!(
                    w,
                    "| {} | {} | {} | {} | {} | {:.3} | {:.3} | {} | {sig} |",
                    c.method,
                    a.tasks,
                    t.statistic(),
                    format_p(t.p_value),
                    format_p(c.adjusted_p),
                    t.rank_biserial(),
                    a.sign_effect,
                    t.method.as_str()
                );
            }
            None => {
                let _ = writeln!(
                    w,
                    "| {} | 0 | – | – | – | – | – | – | no common task |",
                    c.method
                );
            }
        }
    }

    // 5. The published table.
    if let Some((table, path)) = input.baseline {
        render_baseline(w, g, reference, input.paper_method, table, path);
    }

    // 6. Plots.
    render_peers(w, reference, input.alpha, input.peers);

    let _ = writeln!(w, "\n## Convergence\n");
    let _ = writeln!(
        w,
        "Mean best-so-far after each round over the seeds, with a band of ±1 standard \
         error; the black line is the function's optimum where `fedhe objective list` knows it.\n"
    );
    for (task, path) in input.plots {
        let _ = writeln!(w, "### {task}\n\n![{task}]({path})\n");
    }
    out
}

/// Every (task, method, runs) that `keep` accepts, tasks then methods in report order.
fn method_rows(
    g: &Grouped,
    keep: impl Fn(&MethodRuns) -> bool,
) -> Vec<(&TaskRuns, &str, &MethodRuns)> {
    let keep = &keep;
    g.tasks
        .iter()
        .flat_map(|t| {
            g.methods.iter().filter_map(move |m| {
                let runs = t.methods.get(m)?;
                keep(runs).then_some((t, m.as_str(), runs))
            })
        })
        .collect()
}

/// What each method's runs let out of the members' data
/// (`RunResult::releases`, issue 44), first in the report, with a run that
/// released noise-free sums named as not private. Nothing when no run says
/// (files written before the label).
/// The best point each method found on each task with a typed space, by
/// name (issue 46): what a user would take away from a tuning run.
fn render_best_points(w: &mut String, g: &Grouped) {
    let rows: Vec<(&str, &String, &(u64, fedhe_algorithms::BestPoint))> = g
        .tasks
        .iter()
        .flat_map(|t| {
            g.methods.iter().filter_map(move |m| {
                let point = t.methods.get(m)?.best_point.as_ref()?;
                Some((t.task.as_str(), m, point))
            })
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(w, "## Best point per task and method\n");
    let _ = writeln!(
        w,
        "The best point over the seeds, by name, with its noise-free value.\n"
    );
    let _ = writeln!(w, "| task | method | value | seed | point |");
    let _ = writeln!(w, "| --- | --- | ---: | ---: | --- |");
    for (task, method, (seed, point)) in rows {
        let named: Vec<String> = point
            .params
            .iter()
            .map(|(name, value)| match value {
                serde_json::Value::String(s) => format!("{name} = {s}"),
                other => format!("{name} = {other}"),
            })
            .collect();
        let _ = writeln!(
            w,
            "| {task} | {method} | {} | {seed} | {} |",
            format_precise(point.value),
            named.join(", ")
        );
    }
    let _ = writeln!(w);
}

fn render_releases(w: &mut String, g: &Grouped) {
    use fedhe_algorithms::Releases;
    let rows: Vec<(&String, Vec<Releases>)> = g
        .methods
        .iter()
        .filter_map(|m| {
            let mut labels: Vec<Releases> = g
                .tasks
                .iter()
                .filter_map(|t| t.methods.get(m))
                .flat_map(|r| r.releases.iter().copied())
                .collect();
            labels.sort();
            labels.dedup();
            (!labels.is_empty()).then_some((m, labels))
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(w, "## Privacy of the runs\n");
    let noise_free: Vec<String> = rows
        .iter()
        .filter(|(_, l)| l.contains(&Releases::NoiseFree))
        .map(|(m, _)| format!("`{m}`"))
        .collect();
    if !noise_free.is_empty() {
        let _ = writeln!(
            w,
            "**Not private:** {} released noise-free sums; the attack suite \
             reconstructs the members' points from such sums (SECURITY.md).\n",
            noise_free.join(", ")
        );
    }
    let _ = writeln!(w, "| method | what its runs let out |");
    let _ = writeln!(w, "| --- | --- |");
    for (m, labels) in rows {
        let said: Vec<&str> = labels.iter().map(|l| l.label()).collect();
        let _ = writeln!(w, "| {m} | {} |", said.join("; "));
    }
}

/// The privacy-utility table (paper 000 Fig. 3): for every task on which some
/// method reports ε, each method's privacy loss ε after its last round, as
/// the run's accountant reports it (the same for every seed of a
/// configuration; a range shows if not; "no DP" for a method without ε), beside
/// its utility, the mean of `best` over the seeds ± its standard error. Sorted
/// by ε, the methods without DP last. Nothing when no run reports ε.
fn render_privacy(w: &mut String, g: &Grouped) {
    let mut rows: Vec<(&str, &str, &[f64], Summary)> = Vec::new();
    for (t, task) in g.tasks.iter().enumerate() {
        if task.methods.values().all(|r| r.final_epsilon.is_empty()) {
            continue;
        }
        let mut task_rows: Vec<(&str, &str, &[f64], Summary)> = g
            .methods
            .iter()
            .filter_map(|m| {
                let runs = task.methods.get(m)?;
                Some((
                    task.task.as_str(),
                    m.as_str(),
                    runs.final_epsilon.as_slice(),
                    summary(g, t, m)?,
                ))
            })
            .collect();
        let key = |eps: &[f64]| eps.iter().copied().fold(f64::INFINITY, f64::min);
        task_rows.sort_by(|a, b| key(a.2).total_cmp(&key(b.2)));
        rows.extend(task_rows);
    }
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(w, "\n## Privacy loss and utility\n");
    let _ = writeln!(
        w,
        "ε after the last round, as the run's accountant reports it (at the run's δ), \
         beside the utility: the mean of `best` over the seeds ± its standard error \
         s/√n (lower is better). Sorted by ε; methods without differential privacy last.\n"
    );
    let _ = writeln!(w, "| task | method | runs | ε | mean ± s.e. |");
    let _ = writeln!(w, "| --- | --- | ---: | ---: | ---: |");
    for (task, method, eps, s) in rows {
        let shown = if eps.is_empty() {
            "no DP".to_string()
        } else {
            let lo = eps.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = eps.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            if hi - lo <= 1e-9 * hi.abs().max(1.0) {
                format!("{lo:.2}")
            } else {
                format!("{lo:.2} – {hi:.2}")
            }
        };
        let _ = writeln!(
            w,
            "| {task} | {method} | {} | {shown} | {} ± {} |",
            s.n,
            format_compact(s.mean),
            format_compact(s.standard_error())
        );
    }
}

/// The final cumulative regret of the runs that report one (the bandit
/// methods of papers 001 and 003; for Fed-PNE, Fed1-UCB and HCT it is the
/// average cumulative regret per client), with the rounds and the mean number
/// of aggregations (communication rounds). Nothing when no run reports one.
fn render_regret(w: &mut String, g: &Grouped) {
    let rows = method_rows(g, |r| !r.final_regret.is_empty());
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(w, "\n## Cumulative regret\n");
    let _ = writeln!(
        w,
        "Cumulative regret after the last round T over the runs: n, mean, sample \
         standard deviation, mean per round, and the mean number of aggregations \
         (communication rounds through the channel).\n"
    );
    let _ = writeln!(
        w,
        "| task | method | n | T | mean | std | mean / T | aggregations |"
    );
    let _ = writeln!(w, "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (task, method, runs) in rows {
        let (task, rounds) = (task.task.as_str(), task.rounds);
        let Some(s) = Summary::of(&runs.final_regret) else {
            continue;
        };
        let aggregations =
            runs.aggregations.iter().sum::<usize>() as f64 / runs.aggregations.len() as f64;
        let _ = writeln!(
            w,
            "| {task} | {method} | {} | {rounds} | {} | {} | {} | {aggregations:.1} |",
            s.n,
            format_precise(s.mean),
            format_precise(s.std),
            format_precise(s.mean / rounds as f64),
        );
    }
}

/// The comparison with a published table: its columns beside fedhe's
/// reference method, and the counts of the acceptance criterion.
/// The peers' section: per task the medians, the rank-sum test and the mark,
/// and per peer the counts the acceptance of issue 14 reads.
fn render_peers(w: &mut String, reference: &str, alpha: f64, peers: &[PeerComparison]) {
    if peers.is_empty() {
        return;
    }
    let _ = writeln!(w, "\n## Against peers\n");
    let _ = writeln!(
        w,
        "Median `best` of `{reference}` and of each peer (another library under the same \
         protocol, its own seeds). Test: two-sided Mann-Whitney U (Wilcoxon rank-sum) on \
         the two independent samples, Holm-corrected over the peer's tasks, α = {alpha}. \
         The mark says how the peer does against `{reference}`: `+` significantly better, \
         `≈` no significant difference, `−` significantly worse.\n"
    );
    for c in peers {
        let peer = &c.peer;
        let _ = writeln!(w, "### {}\n", peer.label);
        let what = if peer.description.is_empty() {
            String::new()
        } else {
            format!("{}; ", peer.description)
        };
        let _ = writeln!(w, "{what}from `{}`.\n", peer.source);
        let _ = writeln!(
            w,
            "| task | {reference} median (n) | {} median (n) | U | p | p (Holm) | mark |",
            peer.label
        );
        let _ = writeln!(w, "| --- | ---: | ---: | ---: | ---: | ---: | :---: |");
        // p is exact without ties when a sample has at most 8 runs, else normal.
        for cell in &c.cells {
            let _ = writeln!(
                w,
                "| {} | {} ({}) | {} ({}) | {} | {} ({}) | {} | {} |",
                cell.task,
                format_compact(cell.reference_median),
                cell.reference_runs,
                format_compact(cell.peer_median),
                cell.peer_runs,
                cell.test.u1,
                format_p(cell.test.p_value),
                cell.test.method.as_str(),
                format_p(cell.adjusted_p),
                cell.mark.symbol()
            );
        }
        let (better, tie, worse) = c.marks();
        let _ = writeln!(
            w,
            "\n`{reference}`'s median ≤ {}'s on **{} of {}** tasks; {} significantly better \
             on {better}, no significant difference on {tie}, significantly worse on {worse} \
             (+/≈/− = {better}/{tie}/{worse}).",
            peer.label,
            c.reference_at_least_as_good(),
            c.cells.len(),
            peer.label,
        );
        if !c.missing.is_empty() {
            let _ = writeln!(
                w,
                "\n{} has no runs on {}.",
                peer.label,
                c.missing
                    .iter()
                    .map(|t| format!("`{t}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        let _ = writeln!(w);
    }
}

fn render_baseline(
    w: &mut String,
    g: &Grouped,
    reference: &str,
    paper_method: Option<&str>,
    table: &BaselineTable,
    path: &str,
) {
    let paper_reference = table.find_method(paper_method.unwrap_or(reference));
    let paper_baselines: Vec<&String> = table
        .methods
        .iter()
        .filter(|m| Some(m.as_str()) != paper_reference)
        .collect();
    let _ = writeln!(w, "\n## Against the published table\n");
    let _ = writeln!(
        w,
        "Published means from `{path}` beside fedhe's `{reference}` mean. \"≤ best \
         baseline\": fedhe's mean is at or below the lowest of the table's other methods \
         ({}); \"≤ paper\": at or below the table's own `{}` column.\n",
        paper_baselines
            .iter()
            .map(|m| m.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        paper_reference.unwrap_or("(none: no column matches the reference)")
    );
    let mut header = String::from("| task |");
    let mut rule = String::from("| --- |");
    for m in &table.methods {
        let _ = write!(header, " {m} (paper) |");
        rule.push_str(" ---: |");
    }
    let _ = writeln!(
        w,
        "{header} fedhe {reference} | ≤ best baseline | ≤ paper |\n{rule} ---: | :-: | :-: |"
    );
    let mut tasks: Vec<&String> = table.values.keys().collect();
    tasks.sort_by(|a, b| natural_cmp(a, b));
    let (mut compared, mut beat_baselines, mut beat_paper, mut paper_rows) = (0, 0, 0, 0);
    for task in tasks {
        let row = &table.values[task];
        let _ = write!(w, "| {task} |");
        for m in &table.methods {
            let cell = row.get(m).map_or("–".to_string(), |v| match v.std {
                Some(s) => format!("{} ± {}", format_compact(v.mean), format_compact(s)),
                None => format_compact(v.mean),
            });
            let _ = write!(w, " {cell} |");
        }
        let fedhe = g
            .tasks
            .iter()
            .find(|t| &t.task == task)
            .and_then(|t| t.methods.get(reference))
            .map(mean_best);
        let best_baseline = paper_baselines
            .iter()
            .filter_map(|m| row.get(*m).map(|v| v.mean))
            .min_by(f64::total_cmp);
        let paper = paper_reference.and_then(|m| row.get(m)).map(|v| v.mean);
        let verdict = |ok: bool| if ok { "yes" } else { "no" };
        match fedhe {
            Some(f) => {
                compared += 1;
                let vs_baselines = best_baseline.map(|b| f <= b);
                let vs_paper = paper.map(|p| f <= p);
                beat_baselines += usize::from(vs_baselines == Some(true));
                beat_paper += usize::from(vs_paper == Some(true));
                paper_rows += usize::from(vs_paper.is_some());
                let _ = writeln!(
                    w,
                    " {} | {} | {} |",
                    format_compact(f),
                    vs_baselines.map_or("–", verdict),
                    vs_paper.map_or("–", verdict)
                );
            }
            None => {
                let _ = writeln!(w, " not run | – | – |");
            }
        }
    }
    let _ = writeln!(
        w,
        "\nfedhe's `{reference}` mean ≤ the best published baseline on **{beat_baselines} of {compared}** \
         tasks run; ≤ the published `{}` on **{beat_paper} of {paper_rows}**.",
        paper_reference.unwrap_or(reference)
    );
    let unknown: Vec<&str> = g
        .tasks
        .iter()
        .filter(|t| !table.values.contains_key(&t.task))
        .map(|t| t.task.as_str())
        .collect();
    if !unknown.is_empty() {
        let _ = writeln!(
            w,
            "\nTasks run but not in the table: {}.",
            unknown.join(", ")
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_formats() {
        assert_eq!(format_precise(-449.8731234), "-449.873");
        assert_eq!(format_precise(0.0123456789), "0.0123457");
        assert_eq!(format_precise(1.05e8), "1.05000e8");
        assert_eq!(format_precise(0.0), "0");
        assert_eq!(format_compact(-268.4912), "-268.49");
        assert_eq!(format_compact(1.05e8), "1.05e8");
        assert_eq!(format_compact(0.01234), "0.0123");
        assert_eq!(format_compact(14200.0), "14200.00");
    }

    #[test]
    fn cumulative_regret_is_summarised_per_task_and_method() {
        use super::super::results::{group, Run};
        let run = |method: &str, seed: u64, regret: Option<Vec<f64>>, aggregations| Run {
            task: "garland".into(),
            method: method.into(),
            seed,
            best: 0.0,
            trace: vec![0.0; 4],
            cumulative_regret: regret,
            aggregations,
            ..Run::default()
        };
        let g = group(
            vec![
                run("fed-pne", 0, Some(vec![1.0, 2.0, 3.0, 4.0]), 3),
                run("fed-pne", 1, Some(vec![1.0, 2.0, 3.0, 6.0]), 5),
                run("random-search", 0, None, 0),
            ],
            "fed-pne",
        )
        .unwrap();
        let mut w = String::new();
        render_regret(&mut w, &g);
        // Mean 5, std √2, 5/4 per round, 4 aggregations; no row without regret.
        assert!(
            w.contains("| garland | fed-pne | 2 | 4 | 5.00000 | 1.41421 | 1.25000 | 4.0 |"),
            "{w}"
        );
        assert!(!w.contains("random-search"), "{w}");
        let g = group(vec![run("random-search", 0, None, 0)], "x").unwrap();
        let mut w = String::new();
        render_regret(&mut w, &g);
        assert!(w.is_empty());
    }

    #[test]
    fn the_report_opens_with_what_each_method_lets_out_and_names_noise_free_runs() {
        use super::super::results::{MethodRuns, TaskRuns};
        use fedhe_algorithms::Releases;
        let runs = |releases: Vec<Releases>| MethodRuns {
            best_by_seed: (0..releases.len() as u64).map(|s| (s, 1.0)).collect(),
            traces: vec![vec![1.0]; releases.len()],
            releases,
            ..MethodRuns::default()
        };
        let grouped = |methods: BTreeMap<String, MethodRuns>| Grouped {
            methods: methods.keys().cloned().collect(),
            run_count: 4,
            tasks: vec![TaskRuns {
                task: "t".to_string(),
                maximised: false,
                rounds: 1,
                methods,
            }],
        };
        let mut methods = BTreeMap::new();
        methods.insert("fbo".to_string(), runs(vec![Releases::NoiseFree; 2]));
        methods.insert("dp".to_string(), runs(vec![Releases::Private]));
        methods.insert("lone".to_string(), runs(vec![Releases::Nothing]));
        let mut out = String::new();
        render_releases(&mut out, &grouped(methods));
        assert!(out.contains("## Privacy of the runs"), "{out}");
        let warning: Vec<&str> = out.lines().filter(|l| l.contains("Not private")).collect();
        assert_eq!(warning.len(), 1, "{out}");
        assert!(
            warning[0].contains("`fbo`") && !warning[0].contains("`dp`"),
            "{out}"
        );
        assert!(
            out.contains("| fbo | noise-free releases: NOT private |"),
            "{out}"
        );
        assert!(out.contains("| dp | private"), "{out}");
        assert!(out.contains("| lone | releases nothing"), "{out}");
        // Every run private: no warning. No run labelled: no section.
        let mut methods = BTreeMap::new();
        methods.insert("dp".to_string(), runs(vec![Releases::Private]));
        let mut out = String::new();
        render_releases(&mut out, &grouped(methods));
        assert!(!out.contains("Not private"), "{out}");
        let mut methods = BTreeMap::new();
        methods.insert("old".to_string(), runs(vec![]));
        let mut out = String::new();
        render_releases(&mut out, &grouped(methods));
        assert!(out.is_empty(), "{out}");
    }

    #[test]
    fn privacy_table_puts_epsilon_beside_mean_and_standard_error() {
        use super::super::results::{MethodRuns, TaskRuns};
        let runs = |best: &[f64], eps: Option<f64>| MethodRuns {
            best_by_seed: best
                .iter()
                .copied()
                .enumerate()
                .map(|(i, b)| (i as u64, b))
                .collect(),
            traces: vec![vec![0.0]; best.len()],
            final_epsilon: eps.map_or(vec![], |e| vec![e; best.len()]),
            final_regret: vec![],
            aggregations: vec![],
            releases: vec![],
            best_point: None,
        };
        let mut methods = BTreeMap::new();
        methods.insert("ref".to_string(), runs(&[0.1, 0.3], None));
        methods.insert("loose".to_string(), runs(&[0.2, 0.4, 0.6], Some(9.91)));
        methods.insert("tight".to_string(), runs(&[0.5, 0.7], Some(1.5)));
        let mut plain = BTreeMap::new();
        plain.insert("ref".to_string(), runs(&[1.0], None));
        let g = Grouped {
            tasks: vec![
                TaskRuns {
                    task: "real".to_string(),
                    maximised: false,
                    rounds: 1,
                    methods,
                },
                TaskRuns {
                    task: "no-dp".to_string(),
                    maximised: false,
                    rounds: 1,
                    methods: plain,
                },
            ],
            methods: vec!["ref".into(), "loose".into(), "tight".into()],
            run_count: 8,
        };
        let mut out = String::new();
        render_privacy(&mut out, &g);
        let rows: Vec<&str> = out.lines().filter(|l| l.starts_with("| real")).collect();
        // Sorted by ε, no DP last; s.e. of (0.2, 0.4, 0.6) is 0.2/√3.
        assert_eq!(
            rows,
            vec![
                "| real | tight | 2 | 1.50 | 0.6000 ± 0.1000 |",
                "| real | loose | 3 | 9.91 | 0.4000 ± 0.1155 |",
                "| real | ref | 2 | no DP | 0.2000 ± 0.1000 |",
            ]
        );
        assert!(!out.contains("no-dp"), "{out}");
        let mut none = String::new();
        render_privacy(
            &mut none,
            &Grouped {
                tasks: vec![],
                methods: vec![],
                run_count: 0,
            },
        );
        assert!(none.is_empty());
    }
}
