//! `fedhe demo`: the main job end to end. By default on loopback with real
//! processes: a coordinating server (`fedhe serve`, a temporary SQLite file),
//! one `fedhe ceremony join` and one `fedhe agent run` process per institution,
//! a key ceremony, then a short FBO-FedGP study on a CEC-2005 function whose
//! every aggregation runs through the real multiparty encryption, each
//! institution evaluating the function with `fedhe objective value` as its
//! own command. `--in-process` runs the same federation in one process.

use super::say;
use super::{member_names, resolve_params};
use crate::error::CliError;
use clap::Args;
use fedhe_algorithms::fbo_fedgp::{
    run_observed, FboFedGpParams, GlobalSteps, HyperLikelihood, Method, PriorMean, RoundEvent,
    SupportGrowth,
};
use fedhe_algorithms::privacy::Privacy;
use fedhe_crypto::wire::{fingerprint, WireObject};
use fedhe_crypto::{CeremonyId, HeSum};
use fedhe_ring::Csprng;
use fedhe_tasks::Task;

/// Arguments of `fedhe demo`.
#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Number of institutions.
    #[arg(long, default_value_t = 5)]
    pub(super) members: usize,
    /// Rounds of the federation.
    #[arg(long, default_value_t = 15)]
    pub(super) rounds: usize,
    /// The objective (see `fedhe objective list`).
    #[arg(long, default_value = "cec2005-f1")]
    pub(super) function: String,
    /// Its dimension.
    #[arg(long, default_value_t = 10)]
    pub(super) dim: usize,
    /// Seed of the federation's own randomness (initial points, acquisition
    /// search); the cryptography always draws fresh entropy.
    #[arg(long, default_value_t = 1)]
    pub(super) seed: u64,
    /// Parameter set.
    #[arg(long, default_value = "n8192-q124")]
    pub(super) params: String,
    /// Allow parameter sets below 128-bit security (tests only).
    #[arg(long)]
    pub(super) allow_insecure: bool,
    /// Run every institution in this process through the channel directly,
    /// without a server.
    #[arg(long)]
    in_process: bool,
    /// End the output with one JSON line: rounds, best, optimum, the value at
    /// the domain centre, bytes sent and seconds.
    #[arg(long)]
    pub(super) json: bool,
    /// Keep the demo's files here (made if missing; must be empty): the
    /// server's database and log, each institution's key folder, journal and
    /// logs. Without it they go to a temporary folder that is removed.
    #[arg(long, value_name = "DIR", conflicts_with = "in_process")]
    pub(super) workdir: Option<std::path::PathBuf>,
    /// The privacy budget ε per institution (all its data) for the whole
    /// study (δ = 1e-6): every release carries distributed discrete Gaussian
    /// noise, added by each institution to its own contribution before
    /// encryption.
    #[arg(long, default_value_t = 4.0)]
    pub(super) epsilon: f64,
    /// Release noise-free sums instead (the recipe measured best without
    /// privacy). Not private: the attack suite reconstructs the others'
    /// points from such sums.
    #[arg(long, conflicts_with = "epsilon")]
    pub(super) noise_free: bool,
}

fn kib(bytes: u64) -> String {
    format!("{:.1} KiB", bytes as f64 / 1024.0)
}

/// Runs the demo.
pub fn run(args: DemoArgs) -> Result<(), CliError> {
    if args.in_process {
        run_in_process(args)
    } else {
        super::demo_network::run(args)
    }
}

/// The federation's settings for the demo: the paper's protocol, a support
/// set that grows by 4 points a round from the global posterior (public
/// information only) and one penalised batch of global steps, and
///
/// - by default, private at `--epsilon` per institution (δ = 1e-6): the
///   releases `fedhe_algorithms::fbo_fedgp::private` allows (fixed public
///   hyper-parameters, the signed-log warping, a zero prior mean), each with
///   distributed discrete Gaussian noise within the budget, and the
///   settings tuned for it on this protocol (length-scale 0.25, signal
///   variance 4, `p_t = 1 − t^−2`, every member stepping globally on the
///   shared posterior);
/// - with `--noise-free`, the recipe measured best without privacy on the
///   demo's own protocol (F1, 5 members, 15 rounds, 10 seeds: median −402,
///   9 of 10 runs at or below −350; `docs/results/optimiser-2026-11-25` §6):
///   the global posterior's constant mean fitted from sums and the
///   hyper-parameters scored by the global model's evidence — sums from
///   which the attack suite reconstructs the others' points.
pub(super) fn settings(args: &DemoArgs) -> Result<FboFedGpParams, CliError> {
    let settings = if args.noise_free {
        let mut settings = FboFedGpParams::paper_defaults();
        settings.members = args.members;
        settings.rounds = args.rounds;
        settings.support_growth = Some(SupportGrowth { step: 4, every: 1 });
        settings.global_steps = GlobalSteps::Penalised;
        settings.global_batch = args.members.max(1);
        settings.prior_mean = PriorMean::Constant;
        settings.hyper_likelihood = HyperLikelihood::Sparse;
        settings.privacy = Privacy::NoiseFree;
        settings
    } else {
        FboFedGpParams::private_recipe(args.members, args.rounds, args.epsilon)
    };
    settings.clone().validate()?;
    Ok(settings)
}

/// What the demo says of its privacy, before the run.
pub(super) fn privacy_lines(settings: &FboFedGpParams) -> [String; 2] {
    match settings.privacy {
        Privacy::NoiseFree => [
            "Privacy: noise-free. The decrypted sums are NOT private: the attack suite".into(),
            "reconstructs the other institutions' points from them (SECURITY.md).".into(),
        ],
        Privacy::Dp(d) => [
            format!(
                "Privacy: ε = {} per institution, all its data, for the whole study (δ = {:e}):",
                d.epsilon, d.delta
            ),
            "each institution adds its share of discrete Gaussian noise before encrypting.".into(),
        ],
    }
}

/// The demo's closing line on privacy: the ε the releases spent, or that
/// they were noise-free.
pub(super) fn spent_line(spent: Option<f64>) -> String {
    match spent {
        Some(e) => format!("Privacy spent: ε = {e:.3} per institution, all its data (δ = 1e-6)."),
        None => "Privacy spent: none accounted (noise-free releases).".into(),
    }
}

/// What the demo's initialisation sums besides the points.
pub(super) fn initial_sums(settings: &FboFedGpParams) -> &'static str {
    if settings.privacy.is_noise_free() {
        "statistics and hyper-parameter likelihoods"
    } else {
        "statistics (fixed public hyper-parameters)"
    }
}

/// The value at the centre of the task's box.
pub(super) fn centre_value(task: &Task) -> Result<f64, CliError> {
    let objective = fedhe_tasks::registry::benchmark(task.name(), task.dim())?;
    Ok(objective.evaluate(&task.to_domain(&vec![0.5; task.dim()]))?)
}

fn run_in_process(args: DemoArgs) -> Result<(), CliError> {
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
        settings.support_size
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
