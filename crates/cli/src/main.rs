//! The `fedhe` command: one binary for demos, checks, inspection and benchmarks.
//!
//! Each subcommand lives in its own module under `commands/`. A subcommand
//! returns `Result<(), CliError>`; any error is printed as one line on stderr
//! and the process exits with status 2 (never a panic, never status 101).

mod commands;
#[allow(dead_code)]
mod error;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// fedhe: federated Bayesian optimisation over a multiparty RLWE encrypted-sum channel.
#[derive(Parser, Debug)]
#[command(name = "fedhe", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print the version of every layer.
    Version,
    /// Benchmark objectives: list them, evaluate them.
    #[command(subcommand)]
    Objective(commands::objective::ObjectiveCommand),
    /// Gaussian-process regression.
    #[command(subcommand)]
    Gp(commands::gp::GpCommand),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome: Result<(), error::CliError> = match cli.command {
        Command::Version => {
            println!("fedhe {}", env!("CARGO_PKG_VERSION"));
            Ok(())
        }
        Command::Objective(command) => commands::objective::run(command),
        Command::Gp(command) => commands::gp::run(command),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("fedhe: error: {err}");
            ExitCode::from(2)
        }
    }
}
