//! `fedhe channel check`: the whole protocol in one process on random inputs.

use super::say;
use super::{max_abs_difference, median_ms, member_names, random_round, resolve_params};
use crate::error::CliError;
use clap::{Args, Subcommand};
use fedhe_crypto::wire::WireObject;
use fedhe_crypto::{CeremonyId, HeSum, RoundId};
use fedhe_ring::Csprng;
use serde_json::json;
use std::path::PathBuf;

/// Channel subcommands.
#[derive(Subcommand, Debug)]
pub enum ChannelCommand {
    /// Run a ceremony and secure-sum rounds on random inputs and report accuracy, sizes and times.
    Check(CheckArgs),
}

/// Arguments of `fedhe channel check`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Number of members.
    #[arg(long, default_value_t = 10)]
    members: usize,
    /// Values per contribution.
    #[arg(long, default_value_t = 2144)]
    values: usize,
    /// Number of rounds.
    #[arg(long, default_value_t = 3)]
    rounds: u64,
    /// Parameter set.
    #[arg(long, default_value = "n8192-q124")]
    params: String,
    /// Allow parameter sets below 128-bit security (tests only).
    #[arg(long)]
    allow_insecure: bool,
    /// Inputs are uniform in [−B, B].
    #[arg(long, default_value_t = 1000.0)]
    bound: f64,
    /// Seed for a reproducible run (default: fresh entropy).
    #[arg(long)]
    seed: Option<u64>,
    /// Write one sample of each wire object here.
    #[arg(long)]
    dump_dir: Option<PathBuf>,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
    /// Run the t-of-n path: a Shamir ceremony with this threshold T
    /// (⌊n/2⌋ < T ≤ n), then each round decrypted by T members only.
    #[arg(long, value_name = "T")]
    threshold: Option<usize>,
}

/// Runs a channel subcommand.
pub fn run(cmd: ChannelCommand) -> Result<(), CliError> {
    match cmd {
        ChannelCommand::Check(args) => check(args),
    }
}

fn check(args: CheckArgs) -> Result<(), CliError> {
    if args.members == 0 || args.rounds == 0 {
        return Err(CliError::Usage(
            "--members and --rounds must be at least 1".into(),
        ));
    }
    if !(args.bound.is_finite() && args.bound > 0.0) {
        return Err(CliError::Usage(format!(
            "--bound must be positive and finite, got {}",
            args.bound
        )));
    }
    let params = resolve_params(&args.params, args.allow_insecure)?;
    let rng = |offset: u64| match args.seed {
        Some(s) => Csprng::from_u128_seed(((s as u128) << 8) | offset as u128),
        None => Csprng::from_entropy(),
    };
    let members = member_names(args.members)?;
    let ceremony = CeremonyId::new("channel-check")?;
    let mut channel = HeSum::new(
        params.clone(),
        &ceremony,
        members.clone(),
        args.bound,
        rng(0),
    )?;
    if let Some(t) = args.threshold {
        channel = channel.with_threshold(&ceremony, t)?;
    }
    let mut inputs = rng(1);
    let (mut max_err, mut timings) = (0f64, Vec::new());
    let mut last = None;
    for r in 0..args.rounds {
        let (contributions, expected) =
            random_round(&members, &mut inputs, args.values, args.bound)?;
        let transcript = channel.run_round(RoundId(r + 1), contributions)?;
        max_err = max_err.max(max_abs_difference(&transcript.sum, &expected));
        timings.push(transcript.timings.clone());
        last = Some(transcript);
    }
    let t = last.ok_or_else(|| CliError::Usage("no round ran".into()))?;
    // Collusion experiment: every share but one (n − 1 of n, or T − 1 of the
    // round's T decrypting members).
    let omitted = match &t.threshold {
        Some(round) => &round.active[0],
        None => &members[0],
    };
    let missing_mad = t.median_deviation_without(omitted)?;
    let threshold_t = channel.access_structure().map(|a| a.threshold());
    let threshold_report = match (&t.threshold, threshold_t) {
        (Some(round), Some(threshold)) => {
            let below = channel.median_deviation_below_threshold(&t)?;
            let (deal, aggregate) = channel.threshold_ceremony_times();
            json!({
                "threshold": threshold,
                "decrypting_members": round.active.iter().map(|m| m.as_str()).collect::<Vec<_>>(),
                "ms": {
                    "deal": median_ms(deal),
                    "verify_and_aggregate": median_ms(aggregate),
                },
                "below_threshold": {
                    "shares": threshold - 1,
                    "median_abs_deviation_of_the_round_shares": missing_mad,
                    "median_abs_deviation_reinterpolated": below,
                },
            })
        }
        _ => serde_json::Value::Null,
    };

    let pk_share = channel.public_key_shares()[0].to_bytes(&params);
    let ciphertext = t.contributions[0].1.to_bytes(&params);
    let share = t.shares[0].to_bytes(&params);
    if let Some(dir) = &args.dump_dir {
        std::fs::create_dir_all(dir).map_err(|source| CliError::Io {
            path: dir.display().to_string(),
            source,
        })?;
        let objects = [
            ("public-key-share.bin", pk_share.clone()),
            (
                "collective-public-key.bin",
                channel.public_key().to_bytes(&params),
            ),
            ("ciphertext.bin", ciphertext.clone()),
            ("aggregate.bin", t.aggregate.to_bytes(&params)),
            ("decryption-share.bin", share.clone()),
        ];
        for (name, bytes) in objects {
            let path = dir.join(name);
            std::fs::write(&path, bytes).map_err(|source| CliError::Io {
                path: path.display().to_string(),
                source,
            })?;
        }
    }
    let all = |f: fn(&fedhe_crypto::RoundTimings) -> Vec<std::time::Duration>| {
        timings.iter().flat_map(f).collect::<Vec<_>>()
    };
    let report = json!({
        "params": params.set().name,
        "security_bits": params.set().security_bits(),
        "members": args.members,
        "values": args.values,
        "rounds": args.rounds,
        "fractional_bits": t.codec.fractional_bits(),
        "plaintext_bits": (t.codec.plaintext_modulus_value() as f64).log2(),
        "max_abs_error": max_err,
        "error_bound": t.codec.error_bound(),
        "bytes": {
            "public_key_share": pk_share.len(),
            "ciphertext": ciphertext.len(),
            "decryption_share": share.len(),
        },
        "ms": {
            "key_share": median_ms(channel.key_share_times()),
            "encrypt": median_ms(&all(|t| t.encrypt.clone())),
            "aggregate": median_ms(&all(|t| vec![t.aggregate])),
            "decryption_share": median_ms(&all(|t| t.decryption_share.clone())),
            "combine": median_ms(&all(|t| vec![t.combine])),
        },
        "missing_share": { "median_abs_deviation": missing_mad },
        "flooding_bits": params.set().flooding_bits_for(args.members),
        "flooding_margin_bits": params.set().flooding_margin_bits(args.members),
        "threshold": threshold_report,
    });
    if args.json {
        say!("{report}")?;
    } else {
        say!(
            "{}",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        )?;
    }
    Ok(())
}
