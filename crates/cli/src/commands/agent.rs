//! `fedhe agent run|status`: an institution's agent (issue 5). It runs the
//! member's side of an FBO-FedGP study against the server and evaluates the
//! institution's own objective with a command; it resumes after a crash from
//! what it recorded in the key folder (see `fedhe_client::agent`).

use super::ceremony::{member_client, PassphraseArgs, ServerArgs};
use crate::error::CliError;
use clap::{Args, Subcommand};
use fedhe_client::agent::{agent_status, run_agent, AgentOptions};
use fedhe_client::keys::{self, KeyDir};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

/// `fedhe agent …`
#[derive(Subcommand, Debug)]
pub enum AgentCommand {
    /// Run (or resume) this member's side of a study.
    Run(AgentRunArgs),
    /// What this member's agent recorded for a study.
    Status(AgentStatusArgs),
}

/// Arguments of `fedhe agent run`.
#[derive(Args, Debug)]
pub struct AgentRunArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// The member's key folder (from `fedhe ceremony join`).
    #[arg(long)]
    keys: PathBuf,
    #[command(flatten)]
    passphrase: PassphraseArgs,
    /// The study.
    #[arg(long)]
    study: String,
    /// The objective: a shell command that reads a point (a JSON array, in the
    /// study's box) on stdin and prints one number.
    #[arg(long)]
    objective: String,
    /// Seconds one round may take before the agent gives up.
    #[arg(long, default_value_t = 600)]
    round_timeout_secs: u64,
    /// Accept an insecure (test-only) parameter set.
    #[arg(long)]
    allow_insecure: bool,
    /// Print the member's result as one JSON line at the end.
    #[arg(long)]
    json: bool,
}

/// Arguments of `fedhe agent status`.
#[derive(Args, Debug)]
pub struct AgentStatusArgs {
    /// The member's key folder.
    #[arg(long)]
    keys: PathBuf,
    /// The study.
    #[arg(long)]
    study: String,
    /// Also ask the server (URL) for the study's latest round.
    #[arg(long)]
    server: Option<String>,
    /// Trust only this PEM CA certificate for an https:// server.
    #[arg(long, value_name = "PEM")]
    ca_cert: Option<PathBuf>,
    /// Allow plain http:// to a host other than loopback (see `agent run`).
    #[arg(long)]
    allow_plain_http: bool,
    #[command(flatten)]
    passphrase: PassphraseArgs,
}

/// The member named in a key folder.
fn member_of(dir: &KeyDir) -> Result<String, CliError> {
    let file: keys::MemberFile =
        serde_json::from_slice(&dir.read(keys::MEMBER_FILE)?).map_err(|e| CliError::Invalid {
            path: dir.path().join(keys::MEMBER_FILE).display().to_string(),
            reason: e.to_string(),
        })?;
    Ok(file.member)
}

/// Runs `fedhe agent …`.
pub fn run(command: AgentCommand) -> Result<(), CliError> {
    match command {
        AgentCommand::Run(a) => run_command(a),
        AgentCommand::Status(a) => {
            let dir = a.passphrase.open(&a.keys)?;
            let status = agent_status(&dir, &a.study)?;
            let mut out =
                serde_json::to_value(&status).map_err(|e| CliError::Usage(e.to_string()))?;
            if let Some(server) = a.server {
                let server = ServerArgs {
                    server,
                    ca_cert: a.ca_cert,
                    allow_plain_http: a.allow_plain_http,
                };
                let client = member_client(&server, &member_of(&dir)?, &dir)?;
                out["server_latest_round"] = client.study(&a.study)?.latest_round.into();
            }
            println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
            Ok(())
        }
    }
}

fn run_command(a: AgentRunArgs) -> Result<(), CliError> {
    let dir = a.passphrase.open(&a.keys)?;
    let member = member_of(&dir)?;
    let client = member_client(&a.server, &member, &dir)?;
    let options = AgentOptions {
        study: &a.study,
        objective: &a.objective,
        allow_insecure: a.allow_insecure,
        round_timeout: Duration::from_secs(a.round_timeout_secs),
    };
    let bar = ProgressBar::hidden();
    let interactive = std::io::stderr().is_terminal();
    let outcome = run_agent(client, &dir, &options, &mut |e, study| {
        if interactive {
            if bar.is_hidden() {
                bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
                bar.set_length(study.params.rounds as u64);
                bar.set_style(
                    ProgressStyle::with_template("{bar:30} round {pos}/{len} {elapsed} {msg}")
                        .expect("template is valid"),
                );
            }
            bar.set_position(e.round as u64);
            bar.set_message(format!("best {:.6}", e.best_so_far));
        } else {
            // Logs and pipes get one line per round.
            eprintln!(
                "{member}: round {}/{}: {} of {} members stepped globally; my best {:.6}",
                e.round,
                study.params.rounds,
                e.global_steps,
                e.global_steps + e.local_steps,
                e.best_so_far
            );
        }
    })?;
    bar.finish_and_clear();
    let r = &outcome.result;
    if a.json {
        println!(
            "{}",
            serde_json::json!({
                "member": member,
                "study": a.study,
                "rounds": r.rounds,
                "best": r.best,
                "optimum": outcome.config.optimum,
                "aggregations": r.aggregations,
                "bytes_sent": r.bytes_sent_per_member,
                "seconds": r.seconds,
            })
        );
    } else {
        println!(
            "{member}: study {} finished {} rounds; best {:.6}; {} secure sums; sent {} bytes",
            a.study, r.rounds, r.best, r.aggregations, r.bytes_sent_per_member
        );
    }
    Ok(())
}
