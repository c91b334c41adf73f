//! `fedhe simulate`: runs the federations an experiment config describes, in
//! parallel across runs, and writes `results.json` and `results.csv`.

use super::member_names;
use super::say;
use crate::error::CliError;
use clap::Args;
use fedhe_algorithms::{FederatedMethod, ResultsFile, RunResult};
use fedhe_crypto::{CeremonyId, HeSum, PlainSum, Precision, SecureSum};
use fedhe_ring::Csprng;
use fedhe_tasks::Task;
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Arguments of `fedhe simulate`.
#[derive(Args, Debug)]
pub struct SimulateArgs {
    /// The experiment config (TOML; see `configs/experiments/`, every run
    /// private, and `experiments/`, the papers' protocols and records).
    #[arg(long)]
    pub config: PathBuf,
    /// Where to write `results.json` and `results.csv`.
    #[arg(long, default_value = "results")]
    pub out: PathBuf,
    /// Seeds per (task, run), overriding the config.
    #[arg(long)]
    pub seeds: Option<u64>,
    /// Only these functions, e.g. `f1,f6` or `cec2005-f1`.
    #[arg(long, value_delimiter = ',')]
    pub functions: Option<Vec<String>>,
    /// The channel: `he` (real multiparty encryption) or `plain`.
    #[arg(long)]
    pub channel: Option<ChannelKind>,
    /// Parallel runs (default: one per core).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Only validate the config and list the runs; run nothing.
    #[arg(long)]
    pub check: bool,
}

/// The channel a simulation uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum ChannelKind {
    /// `HeSum`: the real protocol, every member in this process.
    He,
    /// `PlainSum`: no cryptography.
    Plain,
}

fn default_channel() -> ChannelKind {
    ChannelKind::He
}
fn default_params() -> String {
    fedhe_crypto::ParameterSet::DEFAULT.name.to_string()
}
fn default_seeds() -> u64 {
    10
}

/// An experiment config file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentConfig {
    /// Its name.
    pub name: String,
    /// Task names (`fedhe objective list`).
    pub functions: Vec<String>,
    /// Input dimension.
    pub dim: usize,
    /// Seeds per (task, run): 0..seeds.
    #[serde(default = "default_seeds")]
    pub seeds: u64,
    /// The channel.
    #[serde(default = "default_channel")]
    pub channel: ChannelKind,
    /// The HE parameter set.
    #[serde(default = "default_params")]
    pub params: String,
    /// The settings every run shares (FBO-FedGP's, see `FboFedGpParams`).
    pub algorithm: toml::Table,
    /// The runs: a method, an optional label, and overrides of `algorithm`.
    pub runs: Vec<RunSpec>,
}

/// One configured run.
#[derive(Debug, Clone, Deserialize)]
pub struct RunSpec {
    /// The method (see [`configure`]).
    pub method: String,
    /// Its name in the results (default: the method's).
    #[serde(default)]
    pub label: Option<String>,
    /// Settings that override the shared `algorithm` table.
    #[serde(flatten)]
    pub overrides: toml::Table,
}

/// The method called `method` (see `fedhe_algorithms::method::names`), with
/// settings from `table`; the error names the method or the setting.
pub fn configure(method: &str, table: toml::Table) -> Result<Arc<dyn FederatedMethod>, String> {
    let settings = serde_json::to_value(table).map_err(|e| e.to_string())?;
    fedhe_algorithms::configure(method, settings)
        .map(Arc::from)
        .map_err(|e| e.to_string())
}

/// One job: a task, a configured method, a seed.
struct Job {
    task: Task,
    label: String,
    method: Arc<dyn FederatedMethod>,
    seed: u64,
}

fn invalid(path: &Path, reason: impl Into<String>) -> CliError {
    CliError::Invalid {
        path: path.display().to_string(),
        reason: reason.into(),
    }
}

/// `f6` → `cec2005-f6`; full names pass through.
fn task_name(name: &str) -> String {
    match name.strip_prefix('f') {
        Some(n) if n.parse::<u8>().is_ok() => format!("cec2005-f{n}"),
        _ => name.to_string(),
    }
}

/// The task `name` for trial `seed`, from the one registry
/// (`fedhe objective list` lists every name it accepts).
fn resolve_task(name: &str, dim: usize, seed: u64) -> Result<Task, String> {
    fedhe_tasks::by_name(name, dim, seed).map_err(|e| e.to_string())
}

/// Reads and checks a config; every error names the file and the field.
pub fn load(path: &Path) -> Result<ExperimentConfig, CliError> {
    let text = std::fs::read_to_string(path).map_err(|source| CliError::Io {
        path: path.display().to_string(),
        source,
    })?;
    toml::from_str(&text).map_err(|e| invalid(path, e.message().to_string()))
}

fn jobs(config: &ExperimentConfig, args: &SimulateArgs) -> Result<Vec<Job>, CliError> {
    let path = &args.config;
    let names: Vec<String> = match &args.functions {
        Some(f) => f.iter().map(|n| task_name(n)).collect(),
        None => config.functions.iter().map(|n| task_name(n)).collect(),
    };
    if names.is_empty() {
        return Err(invalid(path, "functions: no task to run"));
    }
    if config.runs.is_empty() {
        return Err(invalid(path, "runs: no run configured"));
    }
    let make_task = |name: &str, seed: u64| {
        resolve_task(name, config.dim, seed).map_err(|e| invalid(path, format!("functions: {e}")))
    };
    let tasks = names
        .iter()
        .map(|n| make_task(n, 0))
        .collect::<Result<Vec<_>, _>>()?;
    let seeds = args.seeds.unwrap_or(config.seeds);
    // Each task of each seed built once, whatever the number of runs: a
    // seeded task can be costly to build (gp-sample draws a GP on a grid).
    let seeded = tasks
        .iter()
        .map(|task| {
            (0..seeds)
                .map(|seed| make_task(task.name(), seed))
                .collect::<Result<Vec<_>, _>>()
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut out = Vec::new();
    for spec in &config.runs {
        let mut table = config.algorithm.clone();
        for (k, v) in &spec.overrides {
            table.insert(k.clone(), v.clone());
        }
        let label = spec.label.clone().unwrap_or_else(|| spec.method.clone());
        let method = configure(&spec.method, table)
            .map_err(|e| invalid(path, format!("run {label:?}: {e}")))?;
        for per_seed in &seeded {
            for (seed, task) in (0..seeds).zip(per_seed) {
                out.push(Job {
                    task: task.clone(),
                    label: label.clone(),
                    method: method.clone(),
                    seed,
                });
            }
        }
    }
    Ok(out)
}

/// Runs one job on a fresh channel (a new key ceremony for HE).
pub fn run_job(
    task: &Task,
    method: &dyn FederatedMethod,
    seed: u64,
    channel: ChannelKind,
    he_params: &str,
) -> Result<RunResult, CliError> {
    let members = member_names(method.members())?;
    let channel = if method.uses_channel() {
        channel
    } else {
        ChannelKind::Plain
    };
    let mut sum: Box<dyn SecureSum> = match channel {
        ChannelKind::Plain => Box::new(PlainSum),
        ChannelKind::He => {
            let set = super::resolve_params(he_params, false)?;
            let ceremony = CeremonyId::new(format!("sim-{}-{seed}", task.name()))?;
            Box::new(
                HeSum::new(
                    set,
                    &ceremony,
                    members.clone(),
                    method.channel_bound(),
                    Csprng::from_entropy(),
                )?
                .with_precision(Precision::TwoLimb)?,
            )
        }
    };
    Ok(fedhe_algorithms::method::simulate(
        method,
        task,
        sum.as_mut(),
        &members,
        seed,
    )?)
}

fn write_results(dir: &Path, results: &ResultsFile) -> Result<(), CliError> {
    let io = |path: &Path| {
        let path = path.display().to_string();
        move |source| CliError::Io { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let json = serde_json::to_string_pretty(results).expect("results serialise");
    let json_path = dir.join("results.json");
    write_atomically(&json_path, json.as_bytes()).map_err(io(&json_path))?;
    let mut csv = String::from(
        "task,method,seed,members,rounds,best,seconds,bytes_sent_per_member,aggregations,global_steps\n",
    );
    for r in &results.runs {
        csv.push_str(&format!(
            "{},{},{},{},{},{},{:.3},{},{},{}\n",
            r.task,
            r.method,
            r.seed,
            r.members,
            r.rounds,
            r.best,
            r.seconds,
            r.bytes_sent_per_member,
            r.aggregations,
            r.global_steps
        ));
    }
    let csv_path = dir.join("results.csv");
    write_atomically(&csv_path, csv.as_bytes()).map_err(io(&csv_path))
}

/// Writes through a temporary file and a rename, so a reader never sees half a file.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

/// Runs `fedhe simulate`.
pub fn run_command(args: SimulateArgs) -> Result<(), CliError> {
    let config = load(&args.config)?;
    let channel = args.channel.unwrap_or(config.channel);
    if channel == ChannelKind::He {
        super::resolve_params(&config.params, false)
            .map_err(|e| invalid(&args.config, format!("params: {e}")))?;
    }
    let jobs = jobs(&config, &args)?;
    if args.check {
        say!(
            "{}: valid, {} runs ({} task(s))",
            config.name,
            jobs.len(),
            args.functions
                .as_ref()
                .map_or(config.functions.len(), Vec::len)
        )?;
        let mut labels: Vec<(&str, fedhe_algorithms::Releases)> = Vec::new();
        for job in &jobs {
            let releases = job.method.releases();
            if labels.contains(&(job.label.as_str(), releases)) {
                continue;
            }
            labels.push((job.label.as_str(), releases));
            let said = match (releases, job.method.privacy_budget()) {
                (fedhe_algorithms::Releases::Private, Some((epsilon, delta))) => {
                    let ceiling = job
                        .method
                        .signal_ceiling(job.seed)
                        .map_err(|e| invalid(&args.config, format!("{}: {e}", job.label)))?;
                    format!(
                        "private: ε = {epsilon:.4} at δ = {delta:e} per member by its end{}",
                        ceiling.map_or(String::new(), |c| super::privacy::ceiling_clause(&c))
                    )
                }
                (fedhe_algorithms::Releases::Private, None) => {
                    "private: every value noised before it leaves its member (local DP)".into()
                }
                (other, _) => other.label().into(),
            };
            say!("  {}: {said}", job.label)?;
        }
        return say_noise_free(labels.into_iter());
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.jobs.unwrap_or(0))
        .build()
        .map_err(|e| CliError::Usage(format!("--jobs: {e}")))?;
    let bar = ProgressBar::new(jobs.len() as u64);
    bar.set_style(
        ProgressStyle::with_template(
            "{bar:40} {pos}/{len} runs, {elapsed} elapsed, eta {eta} {msg}",
        )
        .expect("template is valid"),
    );
    let outcomes: Vec<Result<RunResult, CliError>> = pool.install(|| {
        jobs.par_iter()
            .map(|job| {
                let mut r = run_job(
                    &job.task,
                    job.method.as_ref(),
                    job.seed,
                    channel,
                    &config.params,
                )
                .map_err(|e| {
                    CliError::Usage(format!(
                        "{} / {} / seed {}: {e}",
                        job.task.name(),
                        job.label,
                        job.seed
                    ))
                })?;
                r.method = job.label.clone();
                bar.inc(1);
                bar.set_message(format!("{} {} seed {}", r.task, r.method, r.seed));
                Ok(r)
            })
            .collect()
    });
    bar.finish_and_clear();
    let runs = outcomes.into_iter().collect::<Result<Vec<_>, _>>()?;
    let results = ResultsFile { runs };
    write_results(&args.out, &results)?;
    let seconds: Vec<f64> = results.runs.iter().map(|r| r.seconds).collect();
    say!(
        "{}: {} runs ({} channel) written to {} (median run {:.2} s)",
        config.name,
        results.runs.len(),
        match channel {
            ChannelKind::He => "he",
            ChannelKind::Plain => "plain",
        },
        args.out.join("results.json").display(),
        super::median_ms(
            &seconds
                .iter()
                .map(|s| std::time::Duration::from_secs_f64(*s))
                .collect::<Vec<_>>()
        ) / 1e3
    )?;
    say_noise_free(
        results
            .runs
            .iter()
            .filter_map(|r| Some((r.method.as_str(), r.releases?))),
    )
}

/// Says which runs released noise-free sums, if any (issue 44: a noise-free
/// run stays possible, labelled so).
fn say_noise_free<'a>(
    runs: impl Iterator<Item = (&'a str, fedhe_algorithms::Releases)>,
) -> Result<(), CliError> {
    let mut noise_free: Vec<&str> = runs
        .filter(|(_, r)| *r == fedhe_algorithms::Releases::NoiseFree)
        .map(|(label, _)| label)
        .collect();
    noise_free.sort_unstable();
    noise_free.dedup();
    if !noise_free.is_empty() {
        say!(
            "not private: {} released noise-free sums (the attack suite reconstructs the members' points from them; SECURITY.md)",
            noise_free.join(", ")
        )?;
    }
    Ok(())
}
