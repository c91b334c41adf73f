//! The server role of FBO-FedGP: it runs the secure sums (Alg. 2, lines 20-21),
//! keeps the round numbering and the traffic accounting, and makes the
//! coordinator's decisions from what the sums release: summed k-means
//! statistics into public centres ([`kmeans_update`]), and a refit round's
//! sums into the federation's warping, scaling and hyper-parameters
//! ([`refit_decision`], through [`sparse_evidences`] and [`pooled_map`]).
//! These read released sums and public settings only, so every member makes
//! the same decision from the same sums (over the network nobody else does).

use super::model::choose_warping_and_scaling;
use super::{Hyperparameters, OutputScaling, OutputWarping, SummaryScaling};
pub use crate::channel::Aggregator;
use crate::AlgorithmError;
use fedhe_gp::hyperfit::HyperPrior;
use fedhe_gp::sparse::Dpitc;
use fedhe_gp::Kernel;
use nalgebra::DMatrix;

/// The server role of FBO-FedGP: the generic [`Aggregator`] plus the
/// k-means update of the support-set selection.
pub type Server<'c> = Aggregator<'c>;

/// One Lloyd step of secure federated k-means from the summed per-cluster
/// coordinate sums (`k·d`, row by row) and counts (`k`), as produced by
/// [`super::Client::kmeans_contribution`]: the new centres (an empty cluster
/// keeps its centre) and the largest centre move.
pub fn kmeans_update(
    centres: &DMatrix<f64>,
    summed: &[f64],
) -> Result<(DMatrix<f64>, f64), AlgorithmError> {
    let (k, d) = (centres.nrows(), centres.ncols());
    if summed.len() != k * (d + 1) {
        return Err(crate::error::config(
            "k-means sums",
            format!("expected {} values, got {}", k * (d + 1), summed.len()),
        ));
    }
    let mut next = centres.clone();
    let mut shift: f64 = 0.0;
    for r in 0..k {
        let count = summed[k * d + r];
        // Counts arrive as fixed-point sums of 1/n_max; far below one point is rounding.
        if count <= 1e-6 {
            continue;
        }
        let mut moved = 0.0;
        for j in 0..d {
            let c = summed[r * d + j] / count;
            moved += (c - centres[(r, j)]).powi(2);
            next[(r, j)] = c;
        }
        shift = shift.max(f64::sqrt(moved));
    }
    Ok((next, shift))
}

/// What a refit round's summed statistics decide: the warping and scaling
/// ([`choose_warping_and_scaling`] on the first `1 + 3·|warps|` sums), and
/// the hyper-parameter candidate with the largest pooled likelihood plus
/// log prior ([`pooled_map`]) — scored by the global dPITC evidence on
/// `support` when `sparse` ([`sparse_evidences`]) — or `current` when no
/// candidate scored.
#[allow(clippy::too_many_arguments)]
pub fn refit_decision<K: Kernel>(
    warps: &[OutputWarping],
    candidates: &[Hyperparameters],
    current: &Hyperparameters,
    summed: &[f64],
    sparse: Option<(&K, &DMatrix<f64>)>,
    n_max: f64,
    prior: Option<&HyperPrior>,
) -> Result<(OutputWarping, OutputScaling, Hyperparameters), AlgorithmError> {
    let split = 1 + 3 * warps.len();
    if summed.len() < split {
        return Err(crate::error::config(
            "refit sums",
            format!("expected at least {split} values, got {}", summed.len()),
        ));
    }
    let (warp, scaling) = choose_warping_and_scaling(warps, &summed[..split])?;
    let best = match sparse {
        Some((family, support)) => {
            let evidence = sparse_evidences(candidates, family, support, &summed[split..], n_max)?;
            // No candidate scored: keep the current hyper-parameters.
            if evidence.iter().any(|v| v.is_finite()) {
                pooled_map(candidates, &evidence, 1.0, prior)
            } else {
                None
            }
        }
        None => pooled_map(candidates, &summed[split..], n_max, prior),
    };
    let hyper = match best {
        Some(best) => candidates[best].clone(),
        None => current.clone(),
    };
    Ok((warp, scaling, hyper))
}

/// The evidence of the global dPITC model on `support` under each candidate,
/// from the channel's sum of every client's [`super::Client::sparse_evidence`]
/// (`summed`, one block of `|S|(|S|+3)/2 + 3` values per candidate):
/// [`Dpitc::log_marginal_likelihood`] of the unscaled sums. A candidate whose
/// model cannot be built, or whose sums cannot be factorised, gets `−∞`.
pub fn sparse_evidences<K: Kernel>(
    candidates: &[Hyperparameters],
    family: &K,
    support: &DMatrix<f64>,
    summed: &[f64],
    n_max: f64,
) -> Result<Vec<f64>, AlgorithmError> {
    let s = support.nrows();
    let per = fedhe_gp::sparse::packed_len(s) + 3;
    if summed.len() != per * candidates.len() {
        return Err(crate::error::config(
            "hyper_likelihood",
            format!(
                "expected {} summed evidence values for {} candidates, got {}",
                per * candidates.len(),
                candidates.len(),
                summed.len()
            ),
        ));
    }
    Ok(candidates
        .iter()
        .zip(summed.chunks(per))
        .map(|(h, block)| {
            let evidence = || -> Option<f64> {
                let model =
                    Dpitc::new(h.kernel(family).ok()?, h.noise(), 0.0, support.clone()).ok()?;
                let summary = SummaryScaling::new(s, h, n_max)
                    .from_channel(&block[..per - 3])
                    .ok()?;
                let quadratic = block[per - 3] * n_max / h.noise();
                let log_det = block[per - 2] * n_max;
                let points = (block[per - 1] * n_max).round().max(0.0) as usize;
                model
                    .log_marginal_likelihood(&summary, quadratic, log_det, points)
                    .ok()
                    .filter(|v| v.is_finite())
            };
            evidence().unwrap_or(f64::NEG_INFINITY)
        })
        .collect())
}

/// The index of the candidate maximising the pooled log marginal likelihood
/// plus the log prior: `argmax_k n_max · Σ_i s_ik + log p(θ_k)`, where
/// `s_ik = log p(y_i | θ_k) / n_max` is client `i`'s clamped contribution
/// ([`super::Client::log_likelihoods`]) and `summed[k] = Σ_i s_ik` comes from the
/// channel. Independent clients' data sets give `log p(y | θ) = Σ_i log p(y_i | θ)`
/// (the product-of-experts likelihood the local fits share). `None` without
/// candidates.
pub fn pooled_map(
    candidates: &[Hyperparameters],
    summed: &[f64],
    n_max: f64,
    prior: Option<&HyperPrior>,
) -> Option<usize> {
    candidates
        .iter()
        .zip(summed)
        .map(|(c, s)| n_max * s + prior.map_or(0.0, |p| p.log_prior(c.log()).0))
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i)
}

/// The coordinator's release rule of the spaced quadratic trend
/// ([`super::GlobalTrend::QuadraticSpaced`]): the trend's sums are let out
/// only when, in every member's view, they hold `needed` unclipped points of
/// others that the last release did not hold (`TREND_RELEASE_MARGIN ·`
/// [`fedhe_gp::trend::determinable_points`] in a run), so no release pins a
/// member's new points down. Only public numbers and released sums enter it.
#[derive(Clone, Debug, Default)]
pub struct TrendReleases {
    /// The federation's unclipped points at the last release.
    points_at_release: f64,
    /// The points each member held at the last release (public: one a round).
    held_at_release: usize,
}

impl TrendReleases {
    /// Whether the public schedule allows a release in a round whose
    /// members (`members` of them) each hold `held` points: the others' new
    /// points since the last release, at most `(members − 1)·Δheld`, reach
    /// `needed`. Only then is the one-value count summed.
    pub fn worth_counting(&self, members: usize, held: usize, needed: f64) -> bool {
        let own_new = held.saturating_sub(self.held_at_release);
        (members.saturating_sub(1) * own_new) as f64 >= needed
    }

    /// Whether the summed unclipped count `points` holds `needed` points of
    /// others beyond the last release's: its increase less this member's
    /// own `Δheld` (which a member can subtract).
    pub fn due(&self, points: f64, held: usize, needed: f64) -> bool {
        let own_new = held.saturating_sub(self.held_at_release);
        points - self.points_at_release - own_new as f64 >= needed
    }

    /// Records a release of sums over `points` points, each member holding
    /// `held`.
    pub fn released(&mut self, points: f64, held: usize) {
        (self.points_at_release, self.held_at_release) = (points, held);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fbo_fedgp::Client;
    use fedhe_crypto::MemberId;

    #[test]
    fn secure_kmeans_step_equals_a_pooled_lloyd_step() {
        let task = fedhe_tasks::by_name("cec2005-f1", 2, 0).unwrap();
        let mut a = Client::new(MemberId::new("a").unwrap(), 0, 1);
        let mut b = Client::new(MemberId::new("b").unwrap(), 1, 2);
        for (c, pts) in [
            (&mut a, vec![[0.1, 0.1], [0.2, 0.1]]),
            (&mut b, vec![[0.9, 0.8], [0.15, 0.2]]),
        ] {
            for p in pts {
                c.evaluate(&task, p.to_vec()).unwrap();
            }
        }
        let centres = DMatrix::from_row_slice(3, 2, &[0.0, 0.0, 1.0, 1.0, 0.5, 0.9]);
        let mut sum = a.kmeans_contribution(&centres, 10.0);
        for (s, v) in sum.iter_mut().zip(b.kmeans_contribution(&centres, 10.0)) {
            *s += v;
        }
        let (next, shift) = kmeans_update(&centres, &sum).unwrap();
        // Cluster 0 holds the three points near the origin; cluster 1 the far one;
        // cluster 2 is empty and keeps its centre.
        assert!((next[(0, 0)] - 0.15).abs() < 1e-12 && (next[(0, 1)] - 0.4 / 3.0).abs() < 1e-12);
        assert!((next[(1, 0)] - 0.9).abs() < 1e-12 && (next[(1, 1)] - 0.8).abs() < 1e-12);
        assert_eq!((next[(2, 0)], next[(2, 1)]), (0.5, 0.9));
        let expected_shift = f64::hypot(0.15, 0.4 / 3.0).max(f64::hypot(0.1, 0.2));
        assert!((shift - expected_shift).abs() < 1e-12);
        assert!(kmeans_update(&centres, &sum[1..]).is_err());
    }

    #[test]
    fn a_contribution_beyond_the_bound_is_refused_before_sending() {
        let mut channel = fedhe_crypto::PlainSum;
        let mut server = Server::new(&mut channel, 10.0);
        let m = MemberId::new("a").unwrap();
        let err = server
            .aggregate("statistics", vec![(m.clone(), vec![1.0, -11.0])])
            .unwrap_err();
        assert!(err.to_string().contains("statistics"), "{err}");
        assert_eq!(server.aggregations(), 0);
        assert_eq!(server.bytes_sent(&m), 0);
        let sum = server
            .aggregate("statistics", vec![(m.clone(), vec![1.0, 2.0])])
            .unwrap();
        assert_eq!(sum, vec![1.0, 2.0]);
        assert_eq!(server.bytes_sent(&m), 32, "two values, split in four");
    }

    /// A refit round's decision is the warping the statistics choose and
    /// the candidate the pooled likelihood (plus prior) picks, the current
    /// hyper-parameters when there is no candidate, and short sums are
    /// refused by name.
    #[test]
    fn a_refit_decision_is_the_chosen_warping_and_the_pooled_map_candidate() {
        use crate::fbo_fedgp::{warp_contribution, Hyperparameters, Warping};
        use fedhe_gp::{KernelParams, Matern52};
        let warps = Warping::Likelihood.candidates(None).unwrap();
        let stats = warp_contribution(&warps, &[0.3, -1.2, 2.5, 0.9, 1.7], 1.0);
        let current = Hyperparameters::new(vec![0.5; 2], 1.0, 1e-2).unwrap();
        let candidates = vec![
            Hyperparameters::new(vec![0.2; 2], 1.0, 1e-2).unwrap(),
            Hyperparameters::new(vec![0.9; 2], 2.0, 1e-3).unwrap(),
        ];
        let mut summed = stats.clone();
        summed.extend([-3.0, -1.0]);
        let (warp, scaling, hyper) =
            refit_decision::<Matern52>(&warps, &candidates, &current, &summed, None, 10.0, None)
                .unwrap();
        let (want_warp, want_scaling) = choose_warping_and_scaling(&warps, &stats).unwrap();
        assert_eq!(warp, want_warp);
        assert_eq!(scaling.mean, want_scaling.mean);
        assert_eq!(hyper.log(), candidates[1].log());
        // No candidate: the current hyper-parameters stay.
        let (_, _, kept) =
            refit_decision::<Matern52>(&warps, &[], &current, &stats, None, 10.0, None).unwrap();
        assert_eq!(kept.log(), current.log());
        let family = Matern52::new(KernelParams::isotropic(2, 1.0, 1.0).unwrap());
        let support = DMatrix::from_row_slice(2, 2, &[0.1, 0.2, 0.7, 0.9]);
        let err = refit_decision(
            &warps,
            &candidates,
            &current,
            &stats[1..],
            Some((&family, &support)),
            10.0,
            None,
        )
        .unwrap_err();
        assert!(err.to_string().contains("refit sums"), "{err}");
    }

    /// The spaced trend's rule, worked by hand with 4 members and 12
    /// points needed: the schedule allows counting once the others may
    /// hold 12 new points (3 · Δheld), and a release is due once the count
    /// rose by 12 beyond the member's own new points; both restart from the
    /// last release.
    #[test]
    fn the_spaced_trend_is_released_only_past_its_margin_of_others_new_points() {
        let mut r = TrendReleases::default();
        assert!(!r.worth_counting(4, 2, 12.0));
        assert!(r.worth_counting(4, 4, 12.0));
        assert!(!r.due(15.0, 4, 12.0));
        assert!(r.due(16.0, 4, 12.0));
        r.released(20.0, 4);
        assert!(!r.worth_counting(4, 6, 12.0));
        assert!(r.worth_counting(4, 8, 12.0));
        assert!(!r.due(35.0, 8, 12.0));
        assert!(r.due(36.0, 8, 12.0));
        // One member alone never counts others' points.
        assert!(!r.worth_counting(1, 1000, 12.0));
    }
}
