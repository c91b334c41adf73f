//! `fedhe demo --in-process`: every institution in this process, through the
//! channel directly, without a server.

use super::recipe::{centre_value, initial_sums, privacy_lines, settings, spent_line, DemoArgs};
use crate::commands::say;
use crate::commands::{member_names, resolve_params};
use crate::error::CliError;
use fedhe_algorithms::fbo_fedgp::{run_observed, Method, RoundEvent};
use fedhe_crypto::wire::{fingerprint, WireObject};
use fedhe_crypto::{CeremonyId, HeSum};
use fedhe_ring::Csprng;

fn kib(bytes: u64) -> String {
    format!("{:.1} KiB", bytes as f64 / 1024.0)
}

/// Runs the demo in this process, every institution through the channel
/// directly, without a server.
pub(super) fn run(args: DemoArgs) -> Result<(), CliError> {
    let params = resolve_params(&args.params, args.allow_insecure)?;
    let task = fedhe_tasks::by_name(&args.function, args.dim, 0)?;
    let settings = settings(&args)?.validate()?;
    let set = params.set();
    say!(
        "fedhe demo: {} institutions optimise {} (D = {}) together with FBO-FedGP.",
        args.members,
        task.name(),
        task.dim()
    )?;
    say!(
        "Parameter set {} (N = {}, log2 q = {}, {}-bit security). Every summary an",
        set.name,
        set.degree,
        set.modulus_bits(),
        set.security_bits()
    )?;
    say!("institution shares is encrypted under a key no single institution holds;")?;
    say!("only sums over all institutions are ever decrypted.")?;
    for line in privacy_lines(&settings) {
        say!("{line}")?;
    }
    say!("")?;

    let members = member_names(args.members)?;
    let mut channel = HeSum::new(
        params.clone(),
        &CeremonyId::new("demo")?,
        members.clone(),
        settings.channel_bound,
        Csprng::from_entropy(),
    )?
    .with_precision(fedhe_crypto::Precision::TwoLimb)?;
    say!("Key ceremony 'demo'")?;
    for share in channel.public_key_shares() {
        let bytes = share.to_bytes(&params);
        say!(
            "  {} sent its public-key share ({}, fingerprint {})",
            share.member(),
            kib(bytes.len() as u64),
            fingerprint(&bytes)
        )?;
    }
    say!(
        "  collective public key: fingerprint {}\n",
        fingerprint(&channel.public_key().to_bytes(&params))
    )?;
    say!(
        "Initialisation: {} random points per institution, secure sums of the output",
        settings.initial_points
    )?;
    say!(
        "{}; |S| = {} shared support points from",
        initial_sums(&settings),
        settings.support.size
    )?;
    say!("public information, which grow from the global posterior each round.\n")?;
    say!("round  local  global  aggregated  round best      best so far")?;
    // The observer cannot fail: it keeps the first write error for after the run.
    let mut printed = Ok(());
    let mut print_round = |e: &RoundEvent| {
        if printed.is_err() {
            return;
        }
        printed = say!(
            "{:>5}  {:>5}  {:>6}  {:>10}  {:>14.4}  {:>14.4}",
            e.round,
            e.local_steps,
            e.global_steps,
            if e.aggregated { "yes" } else { "no" },
            e.round_best,
            e.best_so_far
        );
    };
    let result = run_observed(
        &task,
        Method::FboFedGp,
        &settings,
        &mut channel,
        &members,
        args.seed,
        &mut print_round,
    )?;
    printed?;
    say!(
        "\nBest value found: {:.4}; optimum {:.4}; regret {:.4}.",
        result.best,
        task.optimum(),
        (result.best - task.optimum()).abs()
    )?;
    say!(
        "Secure sums: {} ({} global steps); each institution sent {} of encrypted vectors",
        result.aggregations,
        result.global_steps,
        kib(result.bytes_sent_per_member)
    )?;
    say!("and decryption shares; {:.1} s in all.", result.seconds)?;
    let spent = result.epsilon.as_ref().and_then(|e| e.last().copied());
    say!("{}", spent_line(spent))?;
    if args.json {
        say!(
            "{}",
            serde_json::json!({
                "rounds": result.rounds,
                "best": result.best,
                "optimum": task.optimum(),
                "centre_value": centre_value(&task)?,
                "bytes_sent": result.bytes_sent_per_member * args.members as u64,
                "seconds": result.seconds,
                "privacy": settings.privacy.label(),
                "epsilon": spent,
            })
        )?;
    }
    Ok(())
}
