//! `fedhe agent run|ask|tell|status`: an institution's agent (issue 5). It
//! runs the member's side of an FBO-FedGP study against the server and
//! evaluates the institution's own objective with a command (`run`) or hands
//! each point out and takes its value back (`ask`, `tell`: lab measurements,
//! scheduler jobs, notebooks); it resumes after a crash from what it recorded
//! in the key folder (see `fedhe_client::agent`).

use super::ceremony::{member_client, PassphraseArgs, ServerArgs};
use super::say;
use crate::error::CliError;
use clap::{Args, Subcommand};
use fedhe_client::agent::{
    agent_status, ask_agent, run_agent, tell_agent, AgentOptions, Asked, Evaluator, Told,
};
use fedhe_client::keys::{self, KeyDir};
use fedhe_client::policy::MemberPolicy;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

/// `fedhe agent …`
#[derive(Subcommand, Debug)]
pub enum AgentCommand {
    /// Run (or resume) this member's side of a study, evaluating with a command.
    Run(AgentRunArgs),
    /// Print the next point to evaluate (JSON) and stop until `tell` gives
    /// its value; the study runs on (and resumes) between the two.
    Ask(AgentAskArgs),
    /// Record the value of the point `ask` printed.
    Tell(AgentTellArgs),
    /// What this member's agent recorded for a study.
    Status(AgentStatusArgs),
}

/// The member's seat in a study: what `run` and `ask` share.
#[derive(Args, Debug)]
pub struct AgentSeatArgs {
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
    /// Seconds one round may take before the agent gives up.
    #[arg(long, default_value_t = 600)]
    round_timeout_secs: u64,
    /// Accept an insecure (test-only) parameter set.
    #[arg(long)]
    allow_insecure: bool,
    /// My policy: decrypt no round with fewer distinct contributors (a study
    /// whose quorum is lower is refused). Replaces `min_contributors` of the
    /// key folder's policy.toml.
    #[arg(long, value_name = "N")]
    min_contributors: Option<u32>,
    /// My policy: accept only these parameter sets (repeatable). Replaces
    /// `parameter_sets` of policy.toml.
    #[arg(long = "parameter-set", value_name = "NAME")]
    parameter_sets: Vec<String>,
    /// My policy: decrypt no round past this one. Replaces `max_rounds` of
    /// policy.toml.
    #[arg(long, value_name = "N")]
    max_rounds: Option<u64>,
    /// My policy: also download this many digested contributions at random
    /// per round to check their signed digests and c1 commitments (default
    /// none: the c1 check replaced them). Replaces `spot_checks` of
    /// policy.toml.
    #[arg(long, value_name = "N")]
    spot_checks: Option<usize>,
    /// My policy: λ of the listed signatures checked at random before
    /// revealing and before decrypting in an n-of-n ceremony, ⌈λ·L/n⌉ of a
    /// list of L (default 16: a forged entry escapes a whole decryption with
    /// probability at most e^−16; at least n checks them all; t-of-n always
    /// checks them all). Replaces `signature_sampling` of policy.toml.
    #[arg(long, value_name = "λ")]
    signature_sampling: Option<usize>,
    /// My policy: join only studies that cost me at most this privacy loss ε
    /// (a noise-free study is refused). Replaces `max_epsilon` of policy.toml.
    #[arg(long, value_name = "ε")]
    max_epsilon: Option<f64>,
    /// My policy: join only private studies whose δ is at most this (a
    /// noise-free study is refused). Replaces `max_delta` of policy.toml.
    #[arg(long, value_name = "δ")]
    max_delta: Option<f64>,
}

impl AgentSeatArgs {
    /// The agent's options with `evaluator`.
    fn options<'a>(&'a self, evaluator: Evaluator<'a>) -> AgentOptions<'a> {
        AgentOptions {
            study: &self.study,
            evaluator,
            allow_insecure: self.allow_insecure,
            round_timeout: Duration::from_secs(self.round_timeout_secs),
            policy: MemberPolicy {
                min_contributors: self.min_contributors,
                parameter_sets: (!self.parameter_sets.is_empty())
                    .then(|| self.parameter_sets.clone()),
                max_rounds: self.max_rounds,
                spot_checks: self.spot_checks,
                signature_sampling: self.signature_sampling,
                max_epsilon: self.max_epsilon,
                max_delta: self.max_delta,
            },
        }
    }

    /// The key folder, the member it belongs to, and a client signing as it.
    fn open(&self) -> Result<(KeyDir, String, fedhe_client::Client), CliError> {
        let dir = self.passphrase.open(&self.keys)?;
        let member = member_of(&dir)?;
        let client = member_client(&self.server, &member, &dir)?;
        Ok((dir, member, client))
    }
}

/// Arguments of `fedhe agent run`.
#[derive(Args, Debug)]
pub struct AgentRunArgs {
    #[command(flatten)]
    seat: AgentSeatArgs,
    /// The objective: a shell command that reads a point (a JSON array, in the
    /// study's box) on stdin and prints one number.
    #[arg(long)]
    objective: String,
    /// Print the member's result as one JSON line at the end.
    #[arg(long)]
    json: bool,
}

/// Arguments of `fedhe agent ask`.
#[derive(Args, Debug)]
pub struct AgentAskArgs {
    #[command(flatten)]
    seat: AgentSeatArgs,
}

/// Arguments of `fedhe agent tell`.
#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("answer").required(true).args(["value", "failed"])))]
pub struct AgentTellArgs {
    /// The member's key folder.
    #[arg(long)]
    keys: PathBuf,
    #[command(flatten)]
    passphrase: PassphraseArgs,
    /// The study.
    #[arg(long)]
    study: String,
    /// The objective's value at the point `ask` printed.
    #[arg(long, allow_negative_numbers = true)]
    value: Option<f64>,
    /// The evaluation failed: record the worst value this member has seen
    /// (the largest when minimising) for the point.
    #[arg(long)]
    failed: bool,
    /// In a study with a typed space, the values (a JSON object, as `ask`
    /// printed them) the objective was evaluated at: refused, and nothing
    /// journaled, unless they lie in the space and are the pending point's.
    #[arg(long, value_name = "JSON")]
    params: Option<String>,
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
pub(crate) fn member_of(dir: &KeyDir) -> Result<String, CliError> {
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
        AgentCommand::Ask(a) => {
            let (dir, member, client) = a.seat.open()?;
            let line = match ask_agent(client, &dir, &a.seat.options(Evaluator::Ask))? {
                Asked::Point(p) => serde_json::json!({
                    "member": member,
                    "study": p.study,
                    "evaluation": p.evaluation,
                    // Named values in a study with a typed space (issue 46).
                    "point": p.params.map(serde_json::Value::Object)
                        .unwrap_or_else(|| p.point.into()),
                }),
                Asked::Finished(outcome) => serde_json::json!({
                    "member": member,
                    "study": a.seat.study,
                    "finished": true,
                    "rounds": outcome.result.rounds,
                    "best": outcome.result.best,
                }),
            };
            say!("{line}")?;
            Ok(())
        }
        AgentCommand::Tell(a) => {
            let dir = a.passphrase.open(&a.keys)?;
            let told = match a.value {
                Some(v) => Told::Value(v),
                None => Told::Failed,
            };
            let at = match &a.params {
                Some(text) => Some(
                    serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(text)
                        .map_err(|e| {
                            CliError::Usage(format!("--params: not a JSON object: {e}"))
                        })?,
                ),
                None => None,
            };
            let receipt = tell_agent(&dir, &a.study, told, at.as_ref())?;
            say!(
                "{}",
                serde_json::to_string(&receipt).map_err(|e| CliError::Usage(e.to_string()))?
            )?;
            Ok(())
        }
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
            say!("{}", serde_json::to_string_pretty(&out).unwrap_or_default())?;
            Ok(())
        }
    }
}

fn run_command(a: AgentRunArgs) -> Result<(), CliError> {
    let (dir, member, client) = a.seat.open()?;
    let options = a.seat.options(Evaluator::Command(&a.objective));
    let bar = ProgressBar::hidden();
    let interactive = std::io::stderr().is_terminal();
    let outcome = run_agent(client, &dir, &options, &mut |e, study| {
        if interactive {
            if bar.is_hidden() {
                bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
                bar.set_length(study.method.rounds() as u64);
                bar.set_style(
                    ProgressStyle::with_template("{bar:30} round {pos}/{len} {elapsed} {msg}")
                        .expect("template is valid"),
                );
            }
            bar.set_position(e.round as u64);
            bar.set_message(format!("best {:.6}{}", e.best_so_far, spent(e.epsilon)));
        } else {
            // Logs and pipes get one line per round.
            eprintln!(
                "{member}: round {}/{} of {}: my best {:.6}{}",
                e.round,
                study.method.rounds(),
                study.method.name(),
                e.best_so_far,
                spent(e.epsilon)
            );
        }
    })?;
    bar.finish_and_clear();
    let r = &outcome.result;
    // This member's best evaluation, named in a typed space (the journal's).
    let best_at = agent_status(&dir, &a.seat.study)
        .ok()
        .and_then(|s| s.best_evaluation);
    if a.json {
        say!(
            "{}",
            serde_json::json!({
                "member": member,
                "study": a.seat.study,
                "rounds": r.rounds,
                "best": r.best,
                "best_evaluation": best_at,
                "optimum": outcome.config.optimum,
                "epsilon": r.epsilon.as_ref().and_then(|e| e.last()),
                "aggregations": r.aggregations,
                "bytes_sent": r.bytes_sent_per_member,
                "seconds": r.seconds,
            })
        )?;
    } else {
        say!(
            "{member}: study {} finished {} rounds; best {:.6}{}; {} secure sums; sent {} bytes",
            a.seat.study,
            r.rounds,
            r.best,
            spent(r.epsilon.as_ref().and_then(|e| e.last().copied())),
            r.aggregations,
            r.bytes_sent_per_member
        )?;
        if let Some(b) = best_at {
            let at = match &b.params {
                Some(p) => serde_json::Value::Object(p.clone()).to_string(),
                None => serde_json::to_string(&b.x).unwrap_or_default(),
            };
            say!("{member}: my best evaluation {} at {at}", b.value)?;
        }
    }
    Ok(())
}

/// `; privacy loss ε = …` for a differentially private method, else nothing.
fn spent(epsilon: Option<f64>) -> String {
    epsilon.map_or(String::new(), |e| format!("; privacy loss ε = {e:.4}"))
}
