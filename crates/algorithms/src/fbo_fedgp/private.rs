//! FBO-FedGP in a private study ([`crate::privacy::Privacy::Dp`]): what it
//! releases, at which sensitivity, and the post-processing that keeps the
//! noisy releases usable.
//!
//! A private federation releases two statistics, each a sum of clipped
//! per-evaluation terms, so that one evaluation's influence is bounded:
//!
//! | release | when | terms (per evaluation) | L2 sensitivity |
//! | --- | --- | --- | --- |
//! | output statistics | at the start and every refit | `(w/W, (w/W)²)/n_max`, `w` the signed-log utility clamped to `[−W, W]`, `W` = [`STATISTICS_BOUND`] | `√2/n_max` |
//! | summary | every round with a global step | the point's own dPITC term, scaled to norm ≤ `clip/n_max` ([`super::Client::clipped_summary_contribution`]) | `clip/n_max` |
//!
//! The count of a member's points is public (one evaluation a round), so
//! it is not released. Everything else a noise-free federation may release
//! is refused by name ([`check_recipe`]): per-candidate likelihoods
//! (`hyperparameters` must be `fixed`), secure k-means (`support_selection`
//! `public` or `random`), log-magnitudes (`warping` `signed-log`), trend
//! sums (`global_trend` `none`) and the GLS mean's terms (`prior_mean`
//! `zero`). The noise multiplier is calibrated once, before the first
//! release, for the releases the study will make: the rounds with a global
//! step are fixed in advance by the mixing schedule's public coins
//! (`Federation::steps`), so the whole budget is spent and never exceeded;
//! the ledger reports what was released.
//!
//! Post-processing, free under DP: the noisy `K̇_SS` sum is projected onto
//! the positive semi-definite cone (negative eigenvalues set to 0), and a
//! noisy variance is floored.

use super::params::{GlobalTrend, HyperparameterMode, PriorMean, SupportSelection, ValidParams};
use super::{Client, Method, OutputScaling, OutputWarping, Server, SummaryScaling, Warping};
use crate::privacy::{PrivateReleases, ValidDp};
use crate::AlgorithmError;
use fedhe_dp::distributed::ReleaseShape;
use fedhe_gp::sparse::{packed_len, Dpitc, LocalSummary};
use fedhe_gp::Kernel;
use fedhe_tasks::Task;
use nalgebra::SymmetricEigen;
use rand::RngCore;

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
    if params.hyperparameters != HyperparameterMode::Fixed {
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
    if params.warping != Warping::SignedLog {
        return refuse(
            "warping",
            "releases no log-magnitudes or per-warping likelihoods: set warping = \"signed-log\"",
        );
    }
    if params.global_trend != GlobalTrend::None {
        return refuse(
            "global_trend",
            "releases no trend sums: set global_trend = \"none\"",
        );
    }
    if params.prior_mean.resolve(method) != PriorMean::Zero {
        return refuse(
            "prior_mean",
            "releases no GLS mean terms: the global posterior takes prior_mean = \"zero\"",
        );
    }
    Ok(())
}

/// The L2 sensitivity of one evaluation in the output statistics.
fn statistics_sensitivity(n_max: f64) -> f64 {
    std::f64::consts::SQRT_2 / n_max
}

/// The releases of a study of `params`: the output statistics at the start
/// and at every refit, and a summary in each of `summary_rounds` (the rounds
/// with a global step, which the public coins of the mixing schedule fix in
/// advance, so every member computes the same plan).
pub fn plan(
    params: &ValidParams,
    dp: &ValidDp,
    summary_rounds: &[usize],
) -> Vec<(ReleaseShape, u64)> {
    let n_max = params.max_points();
    let refits = match params.refit_every {
        0 => 0,
        every => (params.rounds.saturating_sub(1) / every) as u64,
    };
    let mut plan = vec![(
        ReleaseShape {
            dim: 2,
            l2_sensitivity: statistics_sensitivity(n_max),
        },
        1 + refits,
    )];
    for &t in summary_rounds {
        plan.push((
            ReleaseShape {
                dim: packed_len(params.support_size_at(t - 1)),
                l2_sensitivity: dp.clip / n_max,
            },
            1,
        ));
    }
    plan
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
        let z = dp.noise_multiplier(&plan(params, &dp, summary_rounds), params.channel_bound)?;
        let seeds = clients
            .iter_mut()
            .map(|c| {
                let mut seed = [0u8; 32];
                c.rng().fill_bytes(&mut seed);
                seed
            })
            .collect();
        let n_max = params.max_points();
        Ok(Some(Self {
            releases: PrivateReleases::new(dp, z, seeds, n_max),
            n_max,
            clip: dp.clip / n_max,
            members,
            initial_points: params.initial_points,
        }))
    }

    /// ε spent so far (one evaluation of one member).
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
        let l2 = statistics_sensitivity(self.n_max);
        let mut contributions = Vec::with_capacity(clients.len());
        for (position, c) in clients.iter().enumerate() {
            let v = c.clipped_statistics_contribution(
                task,
                self.warping(),
                STATISTICS_BOUND,
                self.n_max,
            );
            contributions.push((c.id().clone(), self.releases.share(position, l2, &v)?));
        }
        let sum = server.aggregate("private output statistics", contributions)?;
        self.releases.record(2, l2)?;
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
    /// client's [`Client::clipped_summary_contribution`], `K̇_SS` projected
    /// onto the positive semi-definite cone.
    #[allow(clippy::too_many_arguments)]
    pub fn summary<K: Kernel>(
        &mut self,
        server: &mut Server<'_>,
        clients: &[Client],
        task: &Task,
        scaling: &OutputScaling,
        model: &Dpitc<K>,
        channel_scaling: &SummaryScaling,
    ) -> Result<LocalSummary, AlgorithmError> {
        let mut contributions = Vec::with_capacity(clients.len());
        for (position, c) in clients.iter().enumerate() {
            let v = c.clipped_summary_contribution(
                task,
                self.warping(),
                scaling,
                model,
                channel_scaling,
                self.clip,
            )?;
            contributions.push((
                c.id().clone(),
                self.releases.share(position, self.clip, &v)?,
            ));
        }
        let sum = server.aggregate("private local summaries", contributions)?;
        self.releases.record(sum.len(), self.clip)?;
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
