//! FBO-FedGP in a private study ([`crate::privacy::Privacy::Dp`]): what it
//! releases, at which sensitivity, and the post-processing that keeps the
//! noisy releases usable.
//!
//! The unit of privacy is one member's whole data (`crate::privacy`): each
//! release is a function of everything the member evaluated, chosen
//! adaptively, and the member clips its whole contribution. A private
//! federation releases two statistics:
//!
//! | release | when | a member's contribution | L2 sensitivity (one member's data replaced) |
//! | --- | --- | --- | --- |
//! | output statistics | at the start and every refit | `Σ_j (w_j/W, (w_j/W)²)/n_max`, `w_j` its signed-log utilities clamped to `[−W, W]`, `W` = [`STATISTICS_BOUND`] (coordinates in `[−1, 1]` and `[0, 1]`) | `√5` |
//! | summary | every round with a global step | its dPITC summary (eqs. 6-7, its own PITC block, as a noise-free federation sends it) scaled to L2 norm at most `B` = `clip` × the norm of the summary of `n_max` public uniform points with unit values ([`summary_clip`]) | `2B` |
//!
//! Scaling a member's summary by `c ≤ 1` is the same as raising its noise
//! variance by `1/c`, so the clipped summary is still a dPITC summary of its
//! data. The count of a member's points is public (one evaluation a round),
//! so it is not released. Everything else a noise-free federation may
//! release is refused by name ([`check_recipe`]): per-candidate likelihoods
//! (`hyperparameters` must be `fixed`), secure k-means (`support_selection`
//! `public` or `random`), log-magnitudes (`warping` `signed-log`), trend
//! sums (`global_trend` `none`) and the GLS mean's terms (`prior_mean`
//! `zero`). The noise multiplier is calibrated once, before the first
//! release, for the releases the study will make: the rounds with a global
//! step are fixed in advance by the mixing schedule's public coins
//! (`Federation::steps`); each release is spent on the ledger before it is
//! made, and one past the budget is refused.
//!
//! Post-processing, free under DP: the noisy `K̇_SS` sum is projected onto
//! the positive semi-definite cone (negative eigenvalues set to 0), and a
//! noisy variance is floored.

use super::params::{GlobalTrend, HyperparameterMode, PriorMean, SupportSelection, ValidParams};
use super::{Client, Method, OutputScaling, OutputWarping, Server, SummaryScaling, Warping};
use crate::privacy::{PrivateReleases, SignalCeiling, ValidDp};
use crate::AlgorithmError;
use fedhe_dp::distributed::ReleaseShape;
use fedhe_dp::ClipParams;
use fedhe_gp::sparse::{packed_len, Dpitc, LocalSummary};
use fedhe_gp::Kernel;
use fedhe_tasks::Task;
use nalgebra::{DMatrix, DVector, SymmetricEigen};
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The clamp `W` on a signed-log utility in the private output statistics:
/// `ln(1 + |u|) ≤ 30` holds for `|u| < 10¹³` (CEC-2005 reaches 10¹⁰).
pub const STATISTICS_BOUND: f64 = 30.0;

/// Refuses, naming the setting, every release a private study cannot make
/// yet (module docs). Plaintext methods release nothing and pass.
pub fn check_recipe(params: &ValidParams, method: Method) -> Result<(), AlgorithmError> {
    if params.privacy.is_noise_free() || method.is_plaintext() {
        return Ok(());
    }
    let refuse = |field: &'static str, why: &str| {
        Err(crate::error::config(
            field,
            format!("a private study (privacy.mode = \"dp\") {why}"),
        ))
    };
    if params.hypers.mode != HyperparameterMode::Fixed {
        return refuse(
            "hyperparameters",
            "releases no per-candidate likelihoods: set hyperparameters = \"fixed\" \
             (with lengthscale, signal_variance, noise_variance)",
        );
    }
    if !matches!(
        params.support_selection_resolved(),
        SupportSelection::Public | SupportSelection::Random
    ) {
        return refuse(
            "support_selection",
            "releases no k-means sums or local centres: set support_selection = \"public\" \
             or \"random\"",
        );
    }
    if params.model.warping != Warping::SignedLog {
        return refuse(
            "warping",
            "releases no log-magnitudes or per-warping likelihoods: set warping = \"signed-log\"",
        );
    }
    if params.model.global_trend != GlobalTrend::None {
        return refuse(
            "global_trend",
            "releases no trend sums: set global_trend = \"none\"",
        );
    }
    if params.model.prior_mean.resolve(method) != PriorMean::Zero {
        return refuse(
            "prior_mean",
            "releases no GLS mean terms: the global posterior takes prior_mean = \"zero\"",
        );
    }
    Ok(())
}

/// The L2 sensitivity of the output statistics to one member's data
/// replaced: its first coordinate moves by at most 2, its second by 1.
pub const STATISTICS_SENSITIVITY: f64 = 2.236_067_977_499_79; // √5

/// The L2 sensitivity of a summary sent in units of its clip, to one
/// member's data replaced.
const SUMMARY_SENSITIVITY: f64 = 2.0;

/// The clip `B` of a member's summary in a round: `clip` times the L2 norm
/// of the channel-scaled summary (`channel`) of `n_max` uniform points of
/// the unit cube with unit values, drawn from the public stream `seed`, under
/// the round's public `model`. Every member computes the same `B` from
/// public information only; it follows the length-scales, the support set
/// and the noise variance, whose change moves a member's summary by orders
/// of magnitude.
pub fn summary_clip<K: Kernel>(
    model: &Dpitc<K>,
    channel: &SummaryScaling,
    n_max: f64,
    clip: f64,
    seed: u64,
) -> Result<f64, AlgorithmError> {
    let dim = model.support().ncols();
    let n = n_max.round().max(1.0) as usize;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x = DMatrix::from_fn(n, dim, |_, _| rng.gen::<f64>());
    let y = DVector::from_element(n, 1.0);
    let reference = channel.to_channel(&model.local_summary(&x, &y)?);
    let norm = reference.iter().map(|v| v * v).sum::<f64>().sqrt();
    Ok(clip * norm)
}

/// A member's contribution to a private summary: its dPITC summary (as a
/// noise-free federation sends it, without trend or mean terms, under the
/// private warping) scaled to L2 norm at most `bound`.
pub fn clipped_summary<K: Kernel>(
    client: &Client,
    task: &Task,
    scaling: &OutputScaling,
    model: &Dpitc<K>,
    channel: &SummaryScaling,
    bound: f64,
) -> Result<Vec<f64>, AlgorithmError> {
    let clip = ClipParams { norm: bound }
        .validate()
        .map_err(|e| crate::error::config("privacy.clip", e.to_string()))?;
    let v = client.summary_contribution(
        task,
        OutputWarping::SignedLog,
        scaling,
        model,
        channel,
        false,
        None,
    )?;
    Ok(clip.clip(&v)?)
}

/// The releases of a study of `params`: the output statistics at the start
/// and at every refit, and a summary in each of `summary_rounds` (the rounds
/// with a global step, which the public coins of the mixing schedule fix in
/// advance, so every member computes the same plan). A summary is sent in
/// units of its clip ([`summary_clip`], known only in its round), so its
/// sensitivity is 2 whatever the round.
pub fn plan(
    params: &ValidParams,
    _dp: &ValidDp,
    summary_rounds: &[usize],
) -> Vec<(ReleaseShape, u64)> {
    let refits = match params.hypers.refit_every {
        0 => 0,
        every => (params.rounds.saturating_sub(1) / every) as u64,
    };
    let mut plan = vec![(
        ReleaseShape {
            dim: 2,
            l2_sensitivity: STATISTICS_SENSITIVITY,
        },
        1 + refits,
    )];
    for &t in summary_rounds {
        plan.push((
            ReleaseShape {
                dim: packed_len(params.support_size_at(t - 1)),
                l2_sensitivity: SUMMARY_SENSITIVITY,
            },
            1,
        ));
    }
    plan
}

/// The noise multiplier `z` (every release's σ = z·Δ₂) that spends the
/// budget of `dp` over the releases of a study of `params` with a summary in
/// each of `summary_rounds` ([`plan`]).
fn noise_multiplier(
    params: &ValidParams,
    dp: &ValidDp,
    summary_rounds: &[usize],
) -> Result<f64, AlgorithmError> {
    dp.noise_multiplier(&plan(params, dp, summary_rounds), params.channel_bound)
}

/// What the summed summaries of a private study of `params` (FBO-FedGP's
/// `method`, public seed `seed`) can carry at best; `None` when it releases
/// no summary (noise-free, plaintext, or no round with a global step).
///
/// A member sends its summary in units of its clip, so its contribution has
/// L2 norm at most 1 and the sum of `m` members at most `m`, while every
/// release carries noise of standard deviation at least `z·Δ₂` (`Δ₂` = 2,
/// one member's data replaced) on each of its `values` entries, an expected
/// L2 norm of about `2·z·√values`. Below a ratio of 1 the global posterior is
/// mostly noise even if every member's summary pointed the same way, whatever
/// the data (measured against the federation's quality in
/// docs/results/ceiling-2026-12-07).
pub fn signal_ceiling(
    params: &ValidParams,
    method: Method,
    seed: u64,
) -> Result<Option<SignalCeiling>, AlgorithmError> {
    if method.is_plaintext() {
        return Ok(None);
    }
    let Some(dp) = params.privacy.validate(params.members)? else {
        return Ok(None);
    };
    let rounds = super::global_step_rounds(method, params, seed)?;
    let Some(&first) = rounds.first() else {
        return Ok(None);
    };
    let z = noise_multiplier(params, &dp, &rounds)?;
    let values = packed_len(params.support_size_at(first - 1));
    let noise = SUMMARY_SENSITIVITY * z * (values as f64).sqrt();
    Ok(Some(SignalCeiling {
        noise_multiplier: z,
        releases: rounds.len(),
        values,
        ratio: params.members as f64 / noise,
        members_for_one: noise.ceil() as usize,
    }))
}

/// A private federation's releases (module docs).
pub struct PrivateFbo {
    releases: PrivateReleases,
    n_max: f64,
    clip: f64,
    members: usize,
    initial_points: usize,
}

impl PrivateFbo {
    /// For a private `params` (`None` when noise-free): checks the recipe,
    /// calibrates the noise to the budget for the releases of the public
    /// schedule (a summary in each of `summary_rounds`) and seeds each local
    /// member's noise from its own private randomness.
    pub fn start(
        params: &ValidParams,
        method: Method,
        clients: &mut [Client],
        members: usize,
        summary_rounds: &[usize],
    ) -> Result<Option<Self>, AlgorithmError> {
        let Some(dp) = params.privacy.validate(params.members)? else {
            return Ok(None);
        };
        check_recipe(params, method)?;
        let z = noise_multiplier(params, &dp, summary_rounds)?;
        let seeds = clients
            .iter_mut()
            .map(|c| {
                let mut seed = [0u8; 32];
                c.rng().fill_bytes(&mut seed);
                seed
            })
            .collect();
        Ok(Some(Self {
            releases: PrivateReleases::new(dp, z, seeds),
            n_max: params.max_points(),
            clip: dp.clip,
            members,
            initial_points: params.initial_points,
        }))
    }

    /// ε spent so far (one member, its whole data).
    pub fn epsilon(&self) -> Result<f64, AlgorithmError> {
        self.releases.epsilon()
    }

    /// The warping of a private study (the only one it releases statistics for).
    pub fn warping(&self) -> OutputWarping {
        OutputWarping::SignedLog
    }

    /// The federation's output standardisation from one private release of
    /// every client's [`Client::clipped_statistics_contribution`], in round
    /// `t` (each member then holds `initial_points + t − 1` evaluations, a
    /// public count; `t = 1` before the first round).
    pub fn scaling(
        &mut self,
        server: &mut Server<'_>,
        clients: &[Client],
        task: &Task,
        t: usize,
    ) -> Result<OutputScaling, AlgorithmError> {
        let mut contributions = Vec::with_capacity(clients.len());
        for (position, c) in clients.iter().enumerate() {
            let v = c.clipped_statistics_contribution(
                task,
                self.warping(),
                STATISTICS_BOUND,
                self.n_max,
            );
            let share = self.releases.share(position, STATISTICS_SENSITIVITY, &v)?;
            contributions.push((c.id().clone(), share));
        }
        self.releases.spend(2, STATISTICS_SENSITIVITY)?;
        let sum = server.aggregate("private output statistics", contributions)?;
        let held = (self.initial_points + t.saturating_sub(1)) as f64;
        let n = self.members as f64 * held / self.n_max;
        let w = STATISTICS_BOUND;
        // The noisy second moment can fall below the squared mean: floor the
        // variance at a hundredth of the clamp's range, squared.
        let mean = w * sum[0] / n;
        let second = (w * w * sum[1] / n).max(mean * mean + (w / 100.0).powi(2));
        OutputScaling::from_sums(&[1.0, mean, second])
    }

    /// The summed summary of a global step from one private release of every
    /// client's dPITC summary clipped to [`summary_clip`] (from the public
    /// stream `reference_seed`), `K̇_SS` projected onto the positive
    /// semi-definite cone.
    #[allow(clippy::too_many_arguments)]
    pub fn summary<K: Kernel>(
        &mut self,
        server: &mut Server<'_>,
        clients: &[Client],
        task: &Task,
        scaling: &OutputScaling,
        model: &Dpitc<K>,
        channel_scaling: &SummaryScaling,
        reference_seed: u64,
    ) -> Result<LocalSummary, AlgorithmError> {
        let bound = summary_clip(
            model,
            channel_scaling,
            self.n_max,
            self.clip,
            reference_seed,
        )?;
        // Sent in units of the clip, so that every release's sensitivity is
        // the plan's (2: one member's data replaced) and its noise far above
        // the finest grid; the sum is scaled back after decryption.
        let mut contributions = Vec::with_capacity(clients.len());
        for (position, c) in clients.iter().enumerate() {
            let v: Vec<f64> = clipped_summary(c, task, scaling, model, channel_scaling, bound)?
                .iter()
                .map(|x| x / bound)
                .collect();
            let share = self.releases.share(position, SUMMARY_SENSITIVITY, &v)?;
            contributions.push((c.id().clone(), share));
        }
        self.releases
            .spend(packed_len(model.support_size()), SUMMARY_SENSITIVITY)?;
        let sum: Vec<f64> = server
            .aggregate("private local summaries", contributions)?
            .iter()
            .map(|x| x * bound)
            .collect();
        let mut summed = channel_scaling.from_channel(&sum)?;
        summed.k_ss = project_psd(&summed.k_ss);
        Ok(summed)
    }
}

/// The nearest positive semi-definite matrix in Frobenius norm: the
/// symmetric part with its negative eigenvalues set to 0 (Higham 1988).
pub fn project_psd(m: &nalgebra::DMatrix<f64>) -> nalgebra::DMatrix<f64> {
    let sym = (m + m.transpose()) * 0.5;
    let eig = SymmetricEigen::new(sym);
    let clamped = eig.eigenvalues.map(|v| v.max(0.0));
    &eig.eigenvectors * nalgebra::DMatrix::from_diagonal(&clamped) * eig.eigenvectors.transpose()
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::DMatrix;

    #[test]
    fn psd_projection_clears_negative_eigenvalues_and_keeps_psd_matrices() {
        let a = DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 2.0, 1.0]); // eigenvalues 3, -1
        let p = project_psd(&a);
        let eig = SymmetricEigen::new(p.clone()).eigenvalues;
        assert!(eig.iter().all(|v| *v > -1e-12), "{eig}");
        // The projection of [[1,2],[2,1]] is 1.5·[[1,1],[1,1]].
        assert!((p - DMatrix::from_element(2, 2, 1.5)).norm() < 1e-12);
        let b = DMatrix::from_row_slice(2, 2, &[2.0, 0.5, 0.5, 1.0]);
        assert!((project_psd(&b) - &b).norm() < 1e-12);
    }
}
