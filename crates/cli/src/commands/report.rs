//! `fedhe report DIR`: reads `DIR/results.json`, writes `DIR/report.md` and
//! `DIR/plots/<task>.png`.

use super::json_input::read_json;
use super::print_stdout;
use crate::error::CliError;
use crate::report::baseline::BaselineTable;
use crate::report::peers::{self, Peer};
use crate::report::results::{group, ResultsFile};
use crate::report::table::{render, ReportInput};
use crate::report::{compare, plot};
use clap::Args;
use fedhe_tasks::Sense;
use std::path::{Path, PathBuf};

/// `fedhe report …`
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Directory with `results.json` (from `fedhe simulate`); `report.md` and
    /// `plots/` are written there.
    pub dir: PathBuf,
    /// Published results to put beside fedhe's: CSV `task,method,mean,std`
    /// (e.g. experiments/papers/paper004_table1.csv).
    #[arg(long)]
    pub baseline_table: Option<PathBuf>,
    /// Another library's runs under the same protocol, put beside the
    /// reference method with a rank-sum test per task (repeatable): JSON
    /// `{"label"?, "method"?, "runs": {"f1/0": {"function", "seed", "best"}, ...}}`
    /// as `scripts/peers_botorch.py` writes it.
    #[arg(long = "peers", value_name = "FILE")]
    pub peers: Vec<PathBuf>,
    /// The method every other method is compared with.
    #[arg(long, default_value = "fbo-fedgp")]
    pub reference: String,
    /// The published table's column of the method the reference runs, when
    /// the reference is a labelled variant (e.g. `FBO-FedGP` for a run
    /// labelled `clipped-grow`): it is "the paper" and not a baseline. By
    /// default the column named like the reference, if any.
    #[arg(long, value_name = "METHOD", requires = "baseline_table")]
    pub paper_method: Option<String>,
    /// Significance level of the Holm-corrected tests.
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
}

/// Runs `fedhe report`.
pub fn run(args: ReportArgs) -> Result<(), CliError> {
    if !(args.alpha > 0.0 && args.alpha < 1.0) {
        return Err(CliError::Usage(format!(
            "--alpha {} must lie strictly between 0 and 1",
            args.alpha
        )));
    }
    let results_path = args.dir.join("results.json");
    let results_name = results_path.display().to_string();
    let file: ResultsFile = read_json(&results_name)?;
    let grouped = group(file.runs, &args.reference).map_err(|reason| CliError::Invalid {
        path: results_name.clone(),
        reason,
    })?;
    if !grouped.methods.contains(&args.reference) {
        return Err(CliError::Usage(format!(
            "reference method {:?} has no runs in {results_name} (methods: {}); choose one with --reference",
            args.reference,
            grouped.methods.join(", ")
        )));
    }
    let baseline = match &args.baseline_table {
        Some(path) => {
            let name = path.display().to_string();
            let text = std::fs::read_to_string(path).map_err(|source| CliError::Io {
                path: name.clone(),
                source,
            })?;
            let table = BaselineTable::parse(&text).map_err(|reason| CliError::Invalid {
                path: name.clone(),
                reason,
            })?;
            if let Some(m) = &args.paper_method {
                if table.find_method(m).is_none() {
                    return Err(CliError::Usage(format!(
                        "--paper-method {m:?} is not a method of {name} (methods: {})",
                        table.methods.join(", ")
                    )));
                }
            }
            Some((table, name))
        }
        None => None,
    };

    let mut peers = Vec::with_capacity(args.peers.len());
    for path in &args.peers {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| CliError::Io {
            path: name.clone(),
            source,
        })?;
        let stem = path
            .file_stem()
            .map_or("peer".into(), |s| s.to_string_lossy().into_owned());
        let peer = Peer::parse(&text, &stem, &name).map_err(|reason| CliError::Invalid {
            path: name.clone(),
            reason,
        })?;
        let comparison = peers::compare(&grouped, &args.reference, peer, args.alpha);
        if comparison.cells.is_empty() {
            return Err(CliError::Invalid {
                path: name,
                reason: format!(
                    "no task in common with {results_name} (its tasks: {})",
                    grouped
                        .tasks
                        .iter()
                        .map(|t| t.task.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
        }
        peers.push(comparison);
    }

    let per_task = compare::per_task(&grouped, &args.reference, args.alpha);
    let across = compare::across_tasks(&grouped, &args.reference, args.alpha);

    let plot_dir = args.dir.join("plots");
    create_dir(&plot_dir)?;
    let mut plots = Vec::new();
    for task in &grouped.tasks {
        let file_name = format!("{}.png", file_stem(&task.task));
        let path = plot_dir.join(&file_name);
        // The optimum line only makes sense for a minimised objective.
        let optimum = fedhe_tasks::info(&task.task)
            .filter(|o| o.sense == Sense::Minimise)
            .and_then(|o| o.optimum);
        let curves = plot::curves(task, &grouped.methods);
        plot::draw(&path, &task.task, &curves, optimum).map_err(|reason| CliError::Invalid {
            path: path.display().to_string(),
            reason,
        })?;
        plots.push((task.task.clone(), format!("plots/{file_name}")));
    }

    let markdown = render(&ReportInput {
        grouped: &grouped,
        reference: &args.reference,
        paper_method: args.paper_method.as_deref(),
        alpha: args.alpha,
        per_task: &per_task,
        across: &across,
        baseline: baseline.as_ref().map(|(t, n)| (t, n.as_str())),
        peers: &peers,
        plots: &plots,
    });
    let report_path = args.dir.join("report.md");
    std::fs::write(&report_path, markdown).map_err(|source| CliError::Io {
        path: report_path.display().to_string(),
        source,
    })?;
    print_stdout(&format!(
        "wrote {} and {} plots in {}",
        report_path.display(),
        plots.len(),
        plot_dir.display()
    ))
}

/// Creates a directory (and its parents).
fn create_dir(path: &Path) -> Result<(), CliError> {
    std::fs::create_dir_all(path).map_err(|source| CliError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// A task name as a file name: anything but ASCII letters, digits, `-`, `_`
/// and `.` becomes `_`, so a task name cannot leave the plots directory.
fn file_stem(task: &str) -> String {
    let stem: String = task
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    stem
}
