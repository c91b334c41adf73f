//! Attack (c): a general reconstruction from every statistic a run decrypts,
//! its summaries and its output moments ([`reconstruction_attack`]).
//!
//! **Threat model.** The attacker of attack (a) after a whole run: it has
//! every decrypted summary (its own part subtracted), the public model and
//! support set, and the public schedule of how many points each other
//! member held at each release, but none of their points. Unlike attack (a)
//! it needs no rank condition (the others may hold more points than `|S|`)
//! and unlike attack (b) no earlier points. It also uses each release of the
//! output moments (the sums `Σy`, `Σy²` of the values from which the
//! federation standardises them), in the summaries' units.
//!
//! **Formulas.** For the others' inputs `X_j` (member `j`'s first `c_rj`
//! points at release `r`), the model predicts release `r` as
//! `K̇_r = Σ_j B_rj A_rjᵀ` and `ṁ_r = Σ_j B_rj (y_j[..c_rj] − μ)` with
//! `A = k(S, X)`, `B = A C⁻¹` and `C` the PITC block (paper 004, eqs. 6-7).
//! `ṁ` is linear in the values, so for given inputs the values are the
//! least-squares solution over every release (variable projection; each
//! moment release's `Σy` is one more linear row), and the inputs minimise
//!
//! `Σ_r ‖K̇_r − K̇_r(X)‖² + ‖ṁ_r − ṁ_r(X, y(X))‖² + Σ_q (Σy_q − Σy_q(X))² + (Σy²_q − Σy²_q(X))²`
//!
//! (each release divided by its norm, or, when the releases are private,
//! each entry by its public noise scale: the maximum-likelihood fit under
//! Gaussian noise), by box-constrained Levenberg–Marquardt
//! from random starts in `[0, 1]^{m·D}` and from any points given (attack
//! (a)'s or (b)'s), then an iterated local search from the best fit (one
//! point moved anywhere, the whole fit refined, kept if better); the fit of
//! least cost is the answer, whatever its cost: the attacker has nothing
//! better.

use crate::lm;
use crate::pitc::Pitc;
use crate::AttackError;
use fedhe_gp::kernels::Kernel;
use fedhe_gp::sparse::LocalSummary;
use nalgebra::{DMatrix, DVector};
use rand::Rng;

/// What the attacker of [`reconstruction_attack`] knows after a run.
#[derive(Debug, Clone)]
pub struct RunView<K: Kernel> {
    /// The public kernel (hyper-parameters included), the same in every release.
    pub kernel: K,
    /// The public noise variance `σ_n²`.
    pub noise_variance: f64,
    /// The public constant prior mean `μ`.
    pub prior_mean: f64,
    /// The public support set `S`, one point per row.
    pub support: DMatrix<f64>,
    /// Every release: the others' part of its summary, and per other member
    /// how many of its points (its first ones) the release covers.
    pub releases: Vec<(LocalSummary, Vec<usize>)>,
    /// Every release of the output moments: the others' part of it.
    pub moments: Vec<MomentRelease>,
    /// The public scale of the noise on each release, when the releases are
    /// private: the fit then weights every entry by it (the maximum-
    /// likelihood fit under Gaussian noise) instead of each release by its
    /// norm.
    pub noise: Option<NoiseScales>,
}

/// The standard deviations of the noise each release carries, in the
/// summaries' units: public, since the mechanism, its noise multiplier, the
/// clip and the codec's factors are in the signed spec.
#[derive(Debug, Clone, PartialEq)]
pub struct NoiseScales {
    /// Per summary release, the noise on each entry of `ṁ_S` and on each
    /// entry of `K̇_SS`.
    pub releases: Vec<(f64, f64)>,
    /// Per moment release, the noise on `Σy` and on `Σy²`.
    pub moments: Vec<(f64, f64)>,
}

/// The others' part of one release of the output moments, in the
/// summaries' units (the values before the prior mean is subtracted): what
/// a member derives from a release of `(Σw, Σw²)` and the public output
/// scaling `y = a·w + b` (`Σy = a·Σw + b·n`, `Σy² = a²·Σw² + 2ab·Σw + b²·n`).
#[derive(Debug, Clone, PartialEq)]
pub struct MomentRelease {
    /// Per other member, how many of its points (its first ones) it covers.
    pub counts: Vec<usize>,
    /// `Σy` over those points.
    pub sum: f64,
    /// `Σy²` over those points.
    pub sum_of_squares: f64,
}

/// Tuning of [`reconstruction_attack`].
#[derive(Debug, Clone, PartialEq)]
pub struct ReconstructionOptions {
    /// Random starts.
    pub starts: usize,
    /// Levenberg–Marquardt iterations per start.
    pub max_iter: usize,
    /// Hops of the iterated local search from the best start: one point
    /// moved to a random place, the whole fit refined, kept if better.
    pub hops: usize,
}

impl Default for ReconstructionOptions {
    fn default() -> Self {
        Self {
            starts: 20,
            max_iter: 100,
            hops: 150,
        }
    }
}

/// What [`reconstruction_attack`] returns: every other member's points and
/// values (member by member, in the order of the release counts) and the
/// fit's relative cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Reconstruction {
    /// Per other member, its points' inputs.
    pub inputs: Vec<Vec<Vec<f64>>>,
    /// Per other member, its points' values.
    pub values: Vec<Vec<f64>>,
    /// The fit's cost: each release's residual relative to its norm, or,
    /// with noise scales, each entry's relative to its noise.
    pub cost: f64,
}

struct Fit<'a, K: Kernel> {
    view: &'a RunView<K>,
    pitc: Pitc<'a, K>,
    /// Per other member, its most points in any release.
    sizes: Vec<usize>,
    dim: usize,
    /// Per release, the weights of its `ṁ` and its `K̇` entries:
    /// `1 / ‖(K̇, ṁ)‖` both, or one over each one's noise scale.
    weights: Vec<(f64, f64)>,
    /// Per moment release, the weights of `Σy` and `Σy²`: `1 / ‖(Σy, Σy²)‖`
    /// both, or one over each one's noise scale.
    moment_weights: Vec<(f64, f64)>,
}

impl<K: Kernel> Fit<'_, K> {
    /// The points of `flat` (every member's, in order) as rows per member.
    fn points<'f>(&self, flat: &'f [f64]) -> Vec<Vec<&'f [f64]>> {
        let mut at = 0;
        self.sizes
            .iter()
            .map(|&n| {
                (0..n)
                    .map(|_| {
                        let p = &flat[at..at + self.dim];
                        at += self.dim;
                        p
                    })
                    .collect()
            })
            .collect()
    }

    /// `B = A C⁻¹` and `A` of `points` (PITC block, noise on the diagonal),
    /// or `None` when the block is not positive definite.
    fn block(&self, points: &[&[f64]]) -> Option<(DMatrix<f64>, DMatrix<f64>)> {
        let n = points.len();
        let ks: Vec<DVector<f64>> = points.iter().map(|p| self.pitc.kvec(p)).collect();
        let a = DMatrix::from_fn(self.pitc.srows.len(), n, |i, j| ks[j][i]);
        let c = DMatrix::from_fn(n, n, |i, j| {
            self.pitc.cond(points[i], &ks[i], points[j], &ks[j], i == j)
        });
        let chol = c.cholesky()?;
        let b = chol.solve(&a.transpose()).transpose();
        Some((b, a))
    }

    /// The residual of `flat` and the values that minimise it.
    fn evaluate(&self, flat: &[f64]) -> (Vec<f64>, Vec<Vec<f64>>) {
        let points = self.points(flat);
        let s = self.pitc.srows.len();
        let total: usize = self.sizes.iter().sum();
        let offsets: Vec<usize> = self
            .sizes
            .iter()
            .scan(0, |at, &n| {
                let o = *at;
                *at += n;
                Some(o)
            })
            .collect();
        let mut residual = Vec::new();
        // The values' linear system over every release: ṁ_r = Σ_j B_rj (y_j − μ),
        // and Σ_j Σ_{i < c_qj} (y_ji − μ) = Σy_q − μ·Σ_j c_qj per moment release.
        let summary_rows = s * self.view.releases.len();
        let rows = summary_rows + self.view.moments.len();
        let mut design = DMatrix::zeros(rows, total);
        let mut target = DVector::zeros(rows);
        let failed = || {
            let len =
                self.view.releases.len() * (s * (s + 1) / 2 + s) + 2 * self.view.moments.len();
            (vec![1e3; len], Vec::new())
        };
        for (r, (summary, counts)) in self.view.releases.iter().enumerate() {
            let (w_m, w_k) = self.weights[r];
            let mut k = DMatrix::zeros(s, s);
            for (j, &c) in counts.iter().enumerate() {
                if c == 0 {
                    continue;
                }
                let Some((b, a)) = self.block(&points[j][..c]) else {
                    return failed();
                };
                k += &b * a.transpose();
                for col in 0..c {
                    for i in 0..s {
                        design[(r * s + i, offsets[j] + col)] = w_m * b[(i, col)];
                    }
                }
            }
            for i in 0..s {
                for l in i..s {
                    residual.push(w_k * (summary.k_ss[(i, l)] - k[(i, l)]));
                }
                target[r * s + i] = w_m * summary.m_s[i];
            }
        }
        for (q, release) in self.view.moments.iter().enumerate() {
            let w = self.moment_weights[q].0;
            let mut n = 0;
            for (j, &c) in release.counts.iter().enumerate() {
                for col in 0..c {
                    design[(summary_rows + q, offsets[j] + col)] = w;
                }
                n += c;
            }
            target[summary_rows + q] = w * (release.sum - self.view.prior_mean * n as f64);
        }
        let y = design
            .clone()
            .svd(true, true)
            .solve(&target, 1e-12)
            .unwrap_or_else(|_| DVector::zeros(total));
        let fitted = &design * &y;
        residual.extend((&target - fitted).iter().copied());
        let values: Vec<Vec<f64>> = self
            .sizes
            .iter()
            .zip(&offsets)
            .map(|(&n, &o)| (0..n).map(|i| y[o + i] + self.view.prior_mean).collect())
            .collect();
        // Σy² is not linear in the values: a residual of the outer fit.
        for (q, release) in self.view.moments.iter().enumerate() {
            let squares: f64 = release
                .counts
                .iter()
                .zip(&values)
                .flat_map(|(&c, v)| &v[..c])
                .map(|v| v * v)
                .sum();
            residual.push(self.moment_weights[q].1 * (release.sum_of_squares - squares));
        }
        (residual, values)
    }
}

/// Attack (c): every other member's points and values from every summary a
/// run decrypted (see the module docs), the fit started at random and from
/// `from` (candidate points per member, each of its full count, e.g. attack
/// (a)'s).
pub fn reconstruction_attack<K: Kernel, R: Rng + ?Sized>(
    view: &RunView<K>,
    from: &[Vec<Vec<Vec<f64>>>],
    options: &ReconstructionOptions,
    rng: &mut R,
) -> Result<Reconstruction, AttackError> {
    let s = view.support.nrows();
    let dim = view.support.ncols();
    let members = view
        .releases
        .first()
        .map(|(_, c)| c.len())
        .ok_or(AttackError::Dimension("no release"))?;
    let mut sizes = vec![0; members];
    for release in &view.moments {
        if release.counts.len() != members {
            return Err(AttackError::Dimension(
                "moment release counts of another member list",
            ));
        }
    }
    for (summary, counts) in &view.releases {
        if counts.len() != members {
            return Err(AttackError::Dimension(
                "release counts of another member list",
            ));
        }
        if summary.m_s.len() != s || summary.k_ss.nrows() != s || summary.k_ss.ncols() != s {
            return Err(AttackError::Dimension("release vs support set"));
        }
        for (m, &c) in sizes.iter_mut().zip(counts) {
            *m = (*m).max(c);
        }
    }
    let scale = |sd: f64| 1.0 / sd.max(f64::MIN_POSITIVE);
    let weights = match &view.noise {
        Some(noise) => {
            if noise.releases.len() != view.releases.len()
                || noise.moments.len() != view.moments.len()
            {
                return Err(AttackError::Dimension("noise scales vs releases"));
            }
            noise
                .releases
                .iter()
                .map(|&(m, k)| (scale(m), scale(k)))
                .collect()
        }
        None => view
            .releases
            .iter()
            .map(|(summary, _)| {
                let w = scale((summary.k_ss.norm_squared() + summary.m_s.norm_squared()).sqrt());
                (w, w)
            })
            .collect(),
    };
    for release in &view.moments {
        for (j, &c) in release.counts.iter().enumerate() {
            if c > sizes[j] {
                return Err(AttackError::Dimension(
                    "a moment release covers points no summary does",
                ));
            }
        }
    }
    let moment_weights = match &view.noise {
        Some(noise) => noise
            .moments
            .iter()
            .map(|&(sum, squares)| (scale(sum), scale(squares)))
            .collect(),
        None => view
            .moments
            .iter()
            .map(|m| {
                let w = scale(m.sum.hypot(m.sum_of_squares));
                (w, w)
            })
            .collect(),
    };
    let fit = Fit {
        view,
        pitc: Pitc::new(&view.kernel, view.noise_variance, &view.support),
        sizes: sizes.clone(),
        dim,
        weights,
        moment_weights,
    };
    let unknowns = sizes.iter().sum::<usize>() * dim;
    let mut starts: Vec<Vec<f64>> = from
        .iter()
        .filter(|c| c.len() == members && c.iter().zip(&sizes).all(|(p, &n)| p.len() == n))
        .map(|c| c.iter().flatten().flatten().copied().collect())
        .filter(|v: &Vec<f64>| v.len() == unknowns)
        .collect();
    for _ in 0..options.starts {
        starts.push((0..unknowns).map(|_| rng.gen::<f64>()).collect());
    }
    let mut best: Option<(f64, Vec<f64>)> = None;
    for x0 in starts {
        let (x, cost) = lm::minimise(|x| fit.evaluate(x).0, &x0, options.max_iter);
        if cost.is_finite() && best.as_ref().is_none_or(|b| cost < b.0) {
            best = Some((cost, x));
        }
    }
    let (mut cost, mut flat) = best.ok_or(AttackError::Dimension("no start was fitted"))?;
    // Iterated local search: a point at a wrong local minimum is moved
    // anywhere and the whole fit refined.
    let points = unknowns / dim.max(1);
    for _ in 0..options.hops {
        if points == 0 {
            break;
        }
        let p = rng.gen_range(0..points);
        let mut x0 = flat.clone();
        for v in &mut x0[p * dim..(p + 1) * dim] {
            *v = rng.gen::<f64>();
        }
        let (x, c) = lm::minimise(|x| fit.evaluate(x).0, &x0, options.max_iter);
        if c.is_finite() && c < cost {
            cost = c;
            flat = x;
        }
    }
    let values = fit.evaluate(&flat).1;
    let inputs = fit
        .points(&flat)
        .into_iter()
        .map(|m| m.into_iter().map(<[f64]>::to_vec).collect())
        .collect();
    Ok(Reconstruction {
        inputs,
        values,
        cost,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::Federation;
    use rand_chacha::rand_core::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    /// Member 0 attacks a federation whose other member holds one point more
    /// than `|S|`: its summary leaves the values a line of solutions, and
    /// the moments of the output statistics pin them. At the true inputs,
    /// with the summary alone the least-squares values miss the truth; with
    /// the moment release they are the truth, and a moment release that is
    /// not the truth's moves them (so the moments are what decides).
    #[test]
    fn the_output_moments_pin_the_values_a_summary_leaves_free() {
        let fed = Federation::synthetic(2, 2, 5, 4, 11).unwrap();
        let (x, y) = &fed.members[1];
        let truth: Vec<Vec<f64>> = (0..x.nrows())
            .map(|r| x.row(r).iter().copied().collect())
            .collect();
        let view = |moments: Vec<MomentRelease>| RunView {
            kernel: fed.kernel.clone(),
            noise_variance: fed.noise_variance,
            prior_mean: fed.prior_mean,
            support: fed.support.clone(),
            releases: vec![(fed.summaries[1].clone(), vec![x.nrows()])],
            moments,
            noise: None,
        };
        let at_truth = ReconstructionOptions {
            starts: 0,
            max_iter: 0,
            hops: 0,
        };
        let values = |v: &RunView<_>| {
            let mut rng = ChaCha20Rng::seed_from_u64(1);
            reconstruction_attack(v, &[vec![truth.clone()]], &at_truth, &mut rng)
                .unwrap()
                .values
                .remove(0)
        };
        let error = |found: &[f64]| {
            found
                .iter()
                .zip(y.iter())
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max)
        };
        let summary_only = values(&view(Vec::new()));
        assert!(error(&summary_only) > 1e-3, "{summary_only:?} vs {y}");
        let moments = MomentRelease {
            counts: vec![x.nrows()],
            sum: y.sum(),
            sum_of_squares: y.norm_squared(),
        };
        let with_moments = values(&view(vec![moments.clone()]));
        assert!(error(&with_moments) < 1e-8, "{with_moments:?} vs {y}");
        let shifted = values(&view(vec![MomentRelease {
            sum: moments.sum + 1.0,
            ..moments.clone()
        }]));
        assert!(error(&shifted) > 1e-3, "{shifted:?} vs {y}");
        // A moment release over points no summary covers is refused.
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let over = view(vec![MomentRelease {
            counts: vec![x.nrows() + 1],
            ..moments
        }]);
        let e = reconstruction_attack(&over, &[], &at_truth, &mut rng).unwrap_err();
        assert!(e.to_string().contains("moment release"), "{e}");
    }
}
