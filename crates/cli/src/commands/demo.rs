//! `fedhe demo`: a 10-member ceremony and three secure-sum rounds in one
//! process, printing what each party sent, the sum, and the check against the
//! plaintext sum. (Later issues extend the demo to FBO-FedGP.)

use super::{max_abs_difference, member_names, random_round, resolve_params};
use crate::error::CliError;
use clap::Args;
use fedhe_crypto::wire::{fingerprint, WireObject};
use fedhe_crypto::{CeremonyId, HeSum, RoundId};
use fedhe_ring::Csprng;

/// Arguments of `fedhe demo`.
#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Number of members (institutions).
    #[arg(long, default_value_t = 10)]
    members: usize,
    /// Number of secure-sum rounds.
    #[arg(long, default_value_t = 3)]
    rounds: u64,
    /// Values each member contributes per round.
    #[arg(long, default_value_t = 8)]
    values: usize,
    /// Parameter set.
    #[arg(long, default_value = "n8192-q124")]
    params: String,
    /// Allow parameter sets below 128-bit security (tests only).
    #[arg(long)]
    allow_insecure: bool,
}

fn kib(bytes: usize) -> String {
    format!("{:.1} KiB", bytes as f64 / 1024.0)
}

fn preview(values: &[f64]) -> String {
    let shown: Vec<String> = values
        .iter()
        .take(4)
        .map(|v| format!("{v:>10.4}"))
        .collect();
    let more = if values.len() > 4 { ", …" } else { "" };
    format!("[{}{more}]", shown.join(", "))
}

/// Runs the demo; fails (exit 2) if any round's sum disagrees with the plaintext sum.
pub fn run(args: DemoArgs) -> Result<(), CliError> {
    if args.members == 0 || args.rounds == 0 || args.values == 0 {
        return Err(CliError::Usage(
            "--members, --rounds and --values must be at least 1".into(),
        ));
    }
    let params = resolve_params(&args.params, args.allow_insecure)?;
    let set = params.set();
    let bound = 100.0;
    println!(
        "fedhe demo: {} institutions, parameter set {} (N = {}, log2 q = {}, {}-bit security)",
        args.members,
        set.name,
        set.degree,
        set.modulus_bits(),
        set.security_bits()
    );
    println!("Every contribution is encrypted under a key no single institution holds;");
    println!("only the sum over all institutions is ever decrypted.\n");

    let members = member_names(args.members)?;
    let mut channel = HeSum::new(
        params.clone(),
        &CeremonyId::new("demo")?,
        members.clone(),
        bound,
        Csprng::from_entropy(),
    )?;
    println!("Key ceremony 'demo'");
    for share in channel.public_key_shares() {
        let bytes = share.to_bytes(&params);
        println!(
            "  {} sent its public-key share b_i = -a*s_i + e_i  ({}, fingerprint {})",
            share.member(),
            kib(bytes.len()),
            fingerprint(&bytes)
        );
    }
    println!(
        "  collective public key b = sum of b_i            fingerprint {}\n",
        fingerprint(&channel.public_key().to_bytes(&params))
    );

    let mut inputs = Csprng::from_entropy();
    for r in 1..=args.rounds {
        let (contributions, expect) = random_round(&members, &mut inputs, args.values, bound)?;
        let t = channel.run_round(RoundId(r), contributions)?;
        println!(
            "Round {r}: each institution contributes {} values in [-{bound}, {bound}]",
            args.values
        );
        for (m, v) in &t.contributions {
            let bytes = v.to_bytes(&params);
            println!(
                "  {m} sent an encrypted vector      ({}, fingerprint {})",
                kib(bytes.len()),
                fingerprint(&bytes)
            );
        }
        let agg = t.aggregate.to_bytes(&params);
        println!(
            "  server added them: aggregate        ({}, fingerprint {})",
            kib(agg.len()),
            fingerprint(&agg)
        );
        for s in &t.shares {
            let bytes = s.to_bytes(&params);
            println!(
                "  {} sent its decryption share   ({}, fingerprint {})",
                s.member(),
                kib(bytes.len()),
                fingerprint(&bytes)
            );
        }
        let err = max_abs_difference(&t.sum, &expect);
        println!("  decrypted sum  {}", preview(&t.sum));
        println!("  plaintext sum  {}", preview(&expect));
        let ok = err <= t.codec.error_bound();
        println!(
            "  check: max |decrypted - plaintext| = {err:.3e} <= bound {:.3e} ({} fractional bits): {}\n",
            t.codec.error_bound(),
            t.codec.fractional_bits(),
            if ok { "OK" } else { "FAILED" }
        );
        if !ok {
            return Err(CliError::Usage(format!(
                "round {r}: decrypted sum differs from the plaintext sum by {err:e}"
            )));
        }
    }
    println!("All {} rounds decrypted to the plaintext sum.", args.rounds);
    Ok(())
}
