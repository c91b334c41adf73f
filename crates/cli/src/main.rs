//! The `fedhe` command: one binary for demos, checks, inspection and benchmarks.
//!
//! Each subcommand lives in its own module under `commands/`. A subcommand
//! returns `Result<(), CliError>`; any error is printed as one line on stderr
//! and the process exits with status 2 (never a panic, never status 101).

mod commands;
mod error;
mod logging;
mod report;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// fedhe: federated Bayesian optimisation over a multiparty RLWE encrypted-sum channel.
#[derive(Parser, Debug)]
#[command(name = "fedhe", version, about, long_about = None)]
struct Cli {
    /// Log format on stderr: `human` (the default) or `json` (one object a
    /// line). The level comes from RUST_LOG (default: info for fedhe).
    #[arg(long, global = true, value_enum, default_value_t = logging::LogFormat::Human)]
    log_format: logging::LogFormat,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the main job end to end in one process and explain what happens.
    Demo(commands::demo::DemoArgs),
    /// Encrypted-sum channel tools.
    #[command(subcommand)]
    Channel(commands::channel::ChannelCommand),
    /// Decode any fedhe wire object and describe it.
    Inspect(commands::inspect::InspectArgs),
    /// Benchmarks that print JSON.
    #[command(subcommand)]
    Bench(commands::bench::BenchCommand),
    /// Tasks: list every name `simulate` accepts; evaluate the benchmark functions.
    #[command(subcommand)]
    Objective(commands::objective::ObjectiveCommand),
    /// Gaussian-process regression.
    #[command(subcommand)]
    Gp(commands::gp::GpCommand),
    /// Run the federations of an experiment config and write results.json.
    Simulate(commands::simulate::SimulateArgs),
    /// Privacy loss of the Poisson-subsampled Gaussian mechanism (DP-FTS-DE).
    Privacy(commands::privacy::PrivacyArgs),
    /// Tables, significance tests and convergence plots from a `fedhe simulate` output.
    Report(commands::report::ReportArgs),
    /// Run the coordinating server (REST API; SQLite or PostgreSQL store).
    Serve(commands::serve::ServeArgs),
    /// Key ceremony: identity, create, join, status, verify.
    #[command(subcommand)]
    Ceremony(commands::ceremony::CeremonyCommand),
    /// Studies: create.
    #[command(subcommand)]
    Study(commands::ceremony::StudyCommand),
    /// An institution's agent: run its side of a study, or show its records.
    #[command(subcommand)]
    Agent(commands::agent::AgentCommand),
    /// The server's audit trail of a study (administrator).
    Audit(commands::audit::AuditArgs),
    /// A link to the server's live study page for a browser (administrator).
    Ui(commands::ui::UiArgs),
}

/// jemalloc rather than glibc's malloc, which handed the large buffers a
/// member frees every round (262 kB ciphertexts; the c1 commitment's 2.6 MB
/// of multiscalar-multiplication tables) back to the kernel at once, to fault
/// every page in again on the next use: a tenth of `fedhe bench service`'s
/// CPU at 100 members (issue 16). jemalloc returns unused pages only after
/// they stay unused for seconds (docs/results/scale-2026-11-25b).
#[cfg(target_os = "linux")]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    logging::install(cli.log_format);
    let outcome = match cli.command {
        Command::Demo(args) => commands::demo::run(args),
        Command::Channel(cmd) => commands::channel::run(cmd),
        Command::Inspect(args) => commands::inspect::run(args),
        Command::Bench(cmd) => commands::bench::run(cmd),
        Command::Objective(command) => commands::objective::run(command),
        Command::Gp(command) => commands::gp::run(command),
        Command::Simulate(args) => commands::simulate::run_command(args),
        Command::Privacy(args) => commands::privacy::run(args),
        Command::Report(args) => commands::report::run(args),
        Command::Serve(args) => commands::serve::run(args),
        Command::Ceremony(cmd) => commands::ceremony::run(cmd),
        Command::Study(cmd) => commands::ceremony::run_study(cmd),
        Command::Agent(cmd) => commands::agent::run(cmd),
        Command::Audit(args) => commands::audit::run(args),
        Command::Ui(args) => commands::ui::run(args),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // Errors quote input (ids, paths, fields of a file): never let
            // one drive the terminal.
            eprintln!(
                "fedhe: error: {}",
                fedhe_crypto::text::escape_controls(&err.to_string())
            );
            ExitCode::from(2)
        }
    }
}
