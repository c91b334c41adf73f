//! Attack (b): the difference of two consecutive releases
//! ([`difference_attack`]).
//!
//! **Threat model.** The attacker of attack (a), after two releases of the
//! same public model and support set `S` between which some other members
//! each added one evaluation (the public schedule says who). It knows those
//! members' earlier points and values — from attack (a) on an earlier
//! release, or from this attack on the rounds before — which is the
//! strongest position a curious member can reach, and attacks only the new
//! points.
//!
//! **Formulas.** A member's PITC summary (paper 004, eqs. 6-7) is
//! `K̇ = A C⁻¹ Aᵀ`, `ṁ = A C⁻¹ (y − μ)` with `A = k(S, X)` and `C` its block
//! `Σ_XX + σ_n² I − Σ_XS Σ_SS⁻¹ Σ_SX`. A new point `x` with value `y'` borders
//! `A` by `a = k(S, x)` and `C` by `c = C(X, x)`, `γ = C(x, x)`; the bordered
//! inverse gives the change of the summary as a rank-one update:
//!
//! `ΔK̇ = u uᵀ / s`, `Δṁ = u (y' − μ − cᵀ C⁻¹ (y − μ)) / s`,
//!
//! with `u = a − A C⁻¹ c` and `s = γ − cᵀ C⁻¹ c`. So the difference of the
//! others' parts of two releases has rank `k`, the number of new points, and
//! each new point of member `j` makes `u_j(x)` lie in its column space: a
//! zero of `‖P⊥ u_j(x)‖² / ‖u_j(x)‖²`, `|S| − k` equations in `D` unknowns
//! (isolated zeros when `|S| − k ≥ D`, as for one point a member a round and
//! `|S| ≥ 16` in 10-D). Each is found by a box-constrained Levenberg–Marquardt
//! fit from random starts, accepted below a threshold that follows the
//! noise the difference shows (its eigenvalues outside the column space).
//! Values: `Δṁ = Σ_j u_j w_j` by least squares, then
//! `y'_j = μ + cᵀ C_j⁻¹ (y_j − μ) + s_j w_j`.

use crate::lm;
use crate::pitc::Pitc;
use crate::AttackError;
use fedhe_gp::kernels::Kernel;
use fedhe_gp::sparse::LocalSummary;
use nalgebra::{DMatrix, DVector, SymmetricEigen};
use rand::Rng;

/// What the attacker of [`difference_attack`] knows: the public model, the
/// others' parts of two consecutive releases (its own contribution to each
/// subtracted), and the earlier points of the members that added one.
#[derive(Debug, Clone)]
pub struct ConsecutiveView<K: Kernel> {
    /// The public kernel (hyper-parameters included), the same in both releases.
    pub kernel: K,
    /// The public noise variance `σ_n²`.
    pub noise_variance: f64,
    /// The public constant prior mean `μ`.
    pub prior_mean: f64,
    /// The public support set `S` of both releases, one point per row.
    pub support: DMatrix<f64>,
    /// The others' part of the earlier release.
    pub earlier: LocalSummary,
    /// The others' part of the later release.
    pub later: LocalSummary,
    /// Per member that added one point in between: its points and values
    /// as of the earlier release (inputs in the unit cube, one per row).
    pub known: Vec<(DMatrix<f64>, DVector<f64>)>,
}

/// Tuning of [`difference_attack`].
#[derive(Debug, Clone, PartialEq)]
pub struct DifferenceOptions {
    /// Random starts per member.
    pub starts: usize,
    /// Levenberg–Marquardt iterations per start.
    pub max_iter: usize,
    /// A fit is accepted below this cost or below
    /// `noise_factor · (floor / λ_k)²`, whichever is larger (`floor` the
    /// largest |eigenvalue| of the difference outside its column space,
    /// `λ_k` the smallest inside).
    pub accept: f64,
    /// The factor of the noise-based threshold.
    pub noise_factor: f64,
}

impl Default for DifferenceOptions {
    fn default() -> Self {
        Self {
            starts: 200,
            max_iter: 60,
            accept: 1e-18,
            noise_factor: 1.0,
        }
    }
}

/// What [`difference_attack`] recovered: per member of
/// [`ConsecutiveView::known`], its new point and value, or `None` when no
/// fit was accepted.
#[derive(Debug, Clone, PartialEq)]
pub struct NewPoints {
    /// Per member, the recovered new input.
    pub inputs: Vec<Option<Vec<f64>>>,
    /// Per member, the recovered new value (where its input was found).
    pub values: Vec<Option<f64>>,
}

/// One member's earlier block: what `u(x)` and `s(x)` need.
struct Block {
    /// Its earlier inputs, as rows.
    rows: Vec<Vec<f64>>,
    /// `A = k(S, X)`.
    a: DMatrix<f64>,
    /// `C⁻¹`.
    c_inv: DMatrix<f64>,
    /// `C⁻¹ (y − μ)`.
    c_inv_r: DVector<f64>,
}

struct Model<'a, K: Kernel> {
    pitc: Pitc<'a, K>,
    prior_mean: f64,
}

impl<K: Kernel> Model<'_, K> {
    fn block(&self, x: &DMatrix<f64>, y: &DVector<f64>) -> Result<Block, AttackError> {
        let rows: Vec<Vec<f64>> = (0..x.nrows())
            .map(|i| x.row(i).iter().copied().collect())
            .collect();
        let ks: Vec<DVector<f64>> = rows.iter().map(|r| self.pitc.kvec(r)).collect();
        let n = rows.len();
        let a = DMatrix::from_fn(self.pitc.srows.len(), n, |i, j| ks[j][i]);
        let c = DMatrix::from_fn(n, n, |i, j| {
            self.pitc.cond(&rows[i], &ks[i], &rows[j], &ks[j], i == j)
        });
        let c_inv = c
            .cholesky()
            .ok_or(AttackError::Dimension(
                "a known block that is not positive definite",
            ))?
            .inverse();
        let r = y.map(|v| v - self.prior_mean);
        let c_inv_r = &c_inv * r;
        Ok(Block {
            rows,
            a,
            c_inv,
            c_inv_r,
        })
    }

    /// `u(x) = a − A C⁻¹ c`, `s(x) = γ − cᵀ C⁻¹ c` and `cᵀ C⁻¹ (y − μ)` for a
    /// new point `x` of `block`'s member.
    fn update(&self, block: &Block, x: &[f64]) -> (DVector<f64>, f64, f64) {
        let kx = self.pitc.kvec(x);
        let c = DVector::from_fn(block.rows.len(), |i, _| {
            let ki = block.a.column(i).into_owned();
            self.pitc.cond(&block.rows[i], &ki, x, &kx, false)
        });
        let gamma = self.pitc.cond(x, &kx, x, &kx, true);
        let ci_c = &block.c_inv * &c;
        let u = &kx - &block.a * &ci_c;
        (u, gamma - c.dot(&ci_c), c.dot(&block.c_inv_r))
    }
}

/// Attack (b): the new points of the members in [`ConsecutiveView::known`]
/// (one each) from the difference of two consecutive releases. See the
/// module docs for the formulas.
pub fn difference_attack<K: Kernel, R: Rng + ?Sized>(
    view: &ConsecutiveView<K>,
    options: &DifferenceOptions,
    rng: &mut R,
) -> Result<NewPoints, AttackError> {
    let s = view.support.nrows();
    let dim = view.support.ncols();
    for part in [&view.earlier, &view.later] {
        if part.m_s.len() != s || part.k_ss.nrows() != s || part.k_ss.ncols() != s {
            return Err(AttackError::Dimension("release vs support set"));
        }
    }
    let k = view.known.len();
    if k >= s {
        return Err(AttackError::NotIdentifiable {
            others: k,
            support: s,
        });
    }
    let model = Model {
        pitc: Pitc::new(&view.kernel, view.noise_variance, &view.support),
        prior_mean: view.prior_mean,
    };
    let blocks = view
        .known
        .iter()
        .map(|(x, y)| model.block(x, y))
        .collect::<Result<Vec<_>, _>>()?;
    // The difference, its column space and its noise floor.
    let d = &view.later.k_ss - &view.earlier.k_ss;
    let d = (&d + d.transpose()) * 0.5;
    let dm = &view.later.m_s - &view.earlier.m_s;
    let eig = SymmetricEigen::new(d);
    let mut order: Vec<usize> = (0..s).collect();
    order.sort_by(|&a, &b| eig.eigenvalues[b].total_cmp(&eig.eigenvalues[a]));
    let basis = DMatrix::from_fn(s, k, |i, j| eig.eigenvectors[(i, order[j])]);
    let floor = order[k..]
        .iter()
        .map(|&i| eig.eigenvalues[i].abs())
        .fold(0.0, f64::max);
    let smallest = if k == 0 {
        f64::MIN_POSITIVE
    } else {
        eig.eigenvalues[order[k - 1]].max(f64::MIN_POSITIVE)
    };
    let accept = options
        .accept
        .max(options.noise_factor * (floor / smallest).powi(2));
    let residual = |block: &Block, x: &[f64]| -> Vec<f64> {
        let (u, _, _) = model.update(block, x);
        let norm = u.norm().max(f64::MIN_POSITIVE);
        let off = &u - &basis * (basis.transpose() * &u);
        (off / norm).iter().copied().collect()
    };
    let mut inputs = Vec::with_capacity(k);
    for block in &blocks {
        let mut best: Option<(f64, Vec<f64>)> = None;
        for _ in 0..options.starts {
            let x0: Vec<f64> = (0..dim).map(|_| rng.gen::<f64>()).collect();
            let (x, cost) = lm::minimise(|x| residual(block, x), &x0, options.max_iter);
            if cost.is_finite() && cost < accept && best.as_ref().is_none_or(|b| cost < b.0) {
                best = Some((cost, x));
            }
        }
        inputs.push(best.map(|b| b.1));
    }
    // Values: Δṁ = Σ_j u_j w_j over the members whose point was found.
    let found: Vec<usize> = (0..k).filter(|&j| inputs[j].is_some()).collect();
    let mut values = vec![None; k];
    if !found.is_empty() {
        let updates: Vec<(DVector<f64>, f64, f64)> = found
            .iter()
            .map(|&j| model.update(&blocks[j], inputs[j].as_ref().expect("found")))
            .collect();
        let u = DMatrix::from_fn(s, found.len(), |i, c| updates[c].0[i]);
        if let Ok(pinv) = u.svd(true, true).pseudo_inverse(1e-12) {
            let w = pinv * &dm;
            for (c, &j) in found.iter().enumerate() {
                let (_, s_j, known_part) = &updates[c];
                values[j] = Some(view.prior_mean + known_part + s_j * w[c]);
            }
        }
    }
    Ok(NewPoints { inputs, values })
}
