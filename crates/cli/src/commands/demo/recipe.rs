//! What both ways of running `fedhe demo` share: its arguments, the
//! federation's settings and the lines it prints about privacy.

use crate::error::CliError;
use clap::Args;
use fedhe_algorithms::fbo_fedgp::{
    FboFedGpParams, GlobalSteps, HyperLikelihood, PriorMean, SupportGrowth,
};
use fedhe_algorithms::privacy::Privacy;
use fedhe_tasks::Task;

/// Arguments of `fedhe demo`.
#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Number of institutions.
    #[arg(long, default_value_t = 5)]
    pub(crate) members: usize,
    /// Rounds of the federation.
    #[arg(long, default_value_t = 15)]
    pub(crate) rounds: usize,
    /// The objective (see `fedhe objective list`).
    #[arg(long, default_value = "cec2005-f1")]
    pub(crate) function: String,
    /// Its dimension.
    #[arg(long, default_value_t = 10)]
    pub(crate) dim: usize,
    /// Seed of the federation's own randomness (initial points, acquisition
    /// search); the cryptography always draws fresh entropy.
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// Parameter set.
    #[arg(long, default_value = "n8192-q124")]
    pub(crate) params: String,
    /// Allow parameter sets below 128-bit security (tests only).
    #[arg(long)]
    pub(crate) allow_insecure: bool,
    /// Run every institution in this process through the channel directly,
    /// without a server.
    #[arg(long)]
    pub(crate) in_process: bool,
    /// End the output with one JSON line: rounds, best, optimum, the value at
    /// the domain centre, bytes sent and seconds.
    #[arg(long)]
    pub(crate) json: bool,
    /// Keep the demo's files here (made if missing; must be empty): the
    /// server's database and log, each institution's key folder, journal and
    /// logs. Without it they go to a temporary folder that is removed.
    #[arg(long, value_name = "DIR", conflicts_with = "in_process")]
    pub(crate) workdir: Option<std::path::PathBuf>,
    /// The privacy budget ε per institution (all its data) for the whole
    /// study (δ = 1e-6): every release carries distributed discrete Gaussian
    /// noise, added by each institution to its own contribution before
    /// encryption.
    #[arg(long, default_value_t = fedhe_algorithms::fbo_fedgp::PRIVATE_RECIPE_EPSILON)]
    pub(crate) epsilon: f64,
    /// Release noise-free sums instead (the recipe measured best without
    /// privacy). Not private: the attack suite reconstructs the others'
    /// points from such sums.
    #[arg(long, conflicts_with = "epsilon")]
    pub(crate) noise_free: bool,
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
pub(crate) fn settings(args: &DemoArgs) -> Result<FboFedGpParams, CliError> {
    let settings = if args.noise_free {
        let mut settings = FboFedGpParams::paper_defaults();
        settings.members = args.members;
        settings.rounds = args.rounds;
        settings.support.growth = Some(SupportGrowth { step: 4, every: 1 });
        settings.steps.global = GlobalSteps::Penalised;
        settings.steps.global_batch = args.members.max(1);
        settings.model.prior_mean = PriorMean::Constant;
        settings.hypers.likelihood = HyperLikelihood::Sparse;
        settings.privacy = Privacy::NoiseFree;
        settings
    } else {
        FboFedGpParams::private_recipe(args.members, args.rounds, args.epsilon)
    };
    settings.clone().validate()?;
    Ok(settings)
}

/// What the demo says of its privacy, before the run.
pub(crate) fn privacy_lines(settings: &FboFedGpParams) -> [String; 2] {
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
pub(crate) fn spent_line(spent: Option<f64>) -> String {
    match spent {
        Some(e) => format!("Privacy spent: ε = {e:.3} per institution, all its data (δ = 1e-6)."),
        None => "Privacy spent: none accounted (noise-free releases).".into(),
    }
}

/// What the demo's initialisation sums besides the points.
pub(crate) fn initial_sums(settings: &FboFedGpParams) -> &'static str {
    if settings.privacy.is_noise_free() {
        "statistics and hyper-parameter likelihoods"
    } else {
        "statistics (fixed public hyper-parameters)"
    }
}

/// The value at the centre of the task's box.
pub(crate) fn centre_value(task: &Task) -> Result<f64, CliError> {
    let objective = fedhe_tasks::registry::benchmark(task.name(), task.dim())?;
    Ok(objective.evaluate(&task.to_domain(&vec![0.5; task.dim()]))?)
}
