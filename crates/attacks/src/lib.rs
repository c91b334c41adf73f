//! Reconstruction attacks on the decrypted dPITC summary sum (FBO-FedGP,
//! paper 004; [`fedhe_gp::sparse`]). Test code for privacy claims, not a
//! product crate: a privacy mechanism is shown to work by an attack of this
//! crate that succeeds on the noise-free sum and fails on the protected one.
//!
//! # Attack (a): one release ([`subspace_attack`])
//!
//! **Threat model.** An honest-but-curious member (the attacker) knows its own
//! data `(X_me, y_me)`, the public model — kernel with its length-scales and
//! signal variance, noise variance `σ_n²`, prior mean `μ`, support set `S` —
//! the decrypted sum `Σ_i L_i` of every member's local summary (which every
//! member learns), and the public schedule: how many points the others hold
//! in all (`m`), and, for value grouping, per member ([`MemberView`]).
//!
//! **Formulas.** Subtracting its own summary, the attacker gets
//!
//! `M = Σ_{j≠me} K̇_SS⁽ʲ⁾ = A R⁻¹ Aᵀ`,  `ṁ = Σ_{j≠me} ṁ_S⁽ʲ⁾ = A R⁻¹ (y − μ) = A z`,
//!
//! with `A = k(S, X_others)` (`|S| × m`) and `R = blockdiag_j C_j`, `C_j` the
//! PITC block `Σ_{D_j D_j} + σ_n² I − Σ_{D_j S} Σ_SS⁻¹ Σ_{S D_j}`. For
//! `m < |S|` the column space of `M` (its top `m` eigenvectors, or those
//! above an eigenvalue threshold, [`RankRule`]) is `span{k(S, x)}` over the
//! others' points, so each such `x` is a zero of
//!
//! `r(x) = ‖P⊥ k(S,x)‖² / ‖k(S,x)‖²`  (`P⊥` the projector off that space).
//!
//! As `A` has full column rank, `M⁺ = A⁺ᵀ R A⁺` and so `Aᵀ M⁺ A = R`: with
//! `G(a, b) = k(S,a)ᵀ M⁺ k(S,b)`, every other point satisfies
//! `G(x, x) = C(x, x)` (added to `r` as a second residual), and every pair
//! `G(a, b) = C(a, b)` (same member) or `G(a, b) = 0` (different members).
//! The subspace conditions alone are `|S| − m` equations in `D` unknowns:
//! for `|S| − m ≥ D` (the 2-D tests) the zeros are isolated, but for the
//! tested 10-D case (`|S| = 16`, `m = 8`) each point's zero set is a curve
//! and only the pair conditions pin the points: two points on their curves
//! meet one pair condition along a curve of pairs, three in isolated
//! (often spurious) triples, four or more only at the true points.
//!
//! **Search.** Random starts in `[0,1]^D` (1000 by default) with a
//! box-constrained Levenberg–Marquardt fit of the per-point residual
//! (analytic Jacobian, from the kernel's `grad_x`) give candidates: points
//! spread along the zero curves, few of them near a true point. For every
//! pair of candidates the pair inconsistency `min(|G|, |G − C|) / √(C C)` is
//! computed; for every candidate a set of four is grown greedily (each next
//! candidate the one whose largest inconsistency with the set is least);
//! these seed sets are refined jointly (every per-point and pair condition,
//! pair residual `G (G − C)`, which vanishes either way) in order of their
//! inconsistency, and the first whose joint cost is below the threshold is
//! grown point by point — each further candidate fitted alone against the
//! set, in order of consistency with the seed, then fresh random starts —
//! and refined jointly at the end.
//!
//! **Acceptance.** The pair and diagonal conditions go through `M⁺`; with
//! noise of size `ε` on the sum their error is about `ε / λ_r` (`λ_r` the
//! smallest eigenvalue kept). The attack estimates `ε` from the sum itself,
//! as the largest |eigenvalue| of `M` outside the column space (round-off,
//! ~1e-16·‖M‖, for an exact sum), and accepts a joint fit when its cost is
//! below `max(accept, noise_factor · (ε / λ_r)²)` ([`AttackOptions`]); the
//! true points' joint cost measured 0.01–0.06 of `(ε / λ_r)²`.
//!
//! Values: `z = A⁺ ṁ` (least squares), then `y = μ + R z`, with
//! `R = Aᵀ M⁺ A` (no grouping needed, [`ValueMethod::Moment`]) or with
//! `R = R_g`, the PITC blocks computed from the recovered inputs for the
//! assignment `g` of points to members (of the public sizes) that best
//! matches `G` ([`ValueMethod::Grouped`], the default; branch and bound).
//!
//! **Clipped releases** ([`BlockScales::Unknown`]). A private FBO-FedGP
//! study releases, per member, the sum of every point's own dPITC term
//! (FITC: each point its own block, `R` diagonal), each term scaled by
//! `c_j = min(1, clip / ‖term_j‖)`, unknown to the attacker. As `ṁ` and `K̇`
//! of a point scale alike, this is `R_jj = C(x_j, x_j) / c_j`: the column
//! space and the pair conditions `G(a, b) = 0` are unchanged (the pair
//! residual is then `G / σ_f²`), but the diagonal condition fails and is
//! dropped. Each point's zero set gains a dimension (a surface in the
//! tested 10-D case), so the seed sets are of six points (twelve unknowns,
//! fifteen pair conditions) instead of four. Values need no scale:
//! `y − μ = R z` with `R = Aᵀ M⁺ A` holds for the scaled release
//! ([`ValueMethod::Moment`]; [`ValueMethod::Grouped`] keeps its diagonal).
//!
//! # Attack (b): consecutive releases
//!
//! [`difference_attack`] ([`difference`]): between two releases of one
//! model and support set, each member that added a point changes its PITC
//! summary by a rank-one update whose direction `u = k(S, x) − A C⁻¹ c`
//! follows from its earlier points, which the attacker holds from attack (a)
//! or the rounds before; each new point is a zero of the projection of
//! `u(x)` off the difference's column space, and its value follows from
//! `Δṁ`. See the module for the formulas.
//!
//! # Attack (c): a whole run at once
//!
//! [`reconstruction_attack`] ([`reconstruction`]): every other member's
//! points fitted to every summary a run decrypted (values by least squares
//! for given inputs, inputs by Levenberg–Marquardt from random starts and
//! an iterated local search), needing no rank condition and no earlier
//! points. See the module.
//!
//! # What the tests show
//!
//! `tests/subspace.rs`, on [`Federation::synthetic`] (Matérn 5/2,
//! length-scale `0.25·√D`, signal variance 1, noise variance `1e-2`, prior
//! mean 0, max-min spread support set, values of a shifted sphere):
//! with the noise-free sum the attacker (member 0 of 3) recovers every other
//! point, inputs within L∞ 0.01 and values within 1 % of their range, in 10-D
//! (2 others × 4 points, `|S| = 16`) and in 2-D (2 × 3, `|S| = 16`), far
//! outside the random-guess baseline ([`Recovery`]); in 10-D it does so for
//! five federations (seeds 1–5) with the sum perturbed by Gaussian noise of
//! 1e-12 and 1e-9 of its median |entry| ([`noised`]; it also did at 1e-6,
//! measured, not tested). With noise of a standard deviation of the sum's
//! median |entry| (2-D) or of 1e-2 of it (10-D) the attack is within the
//! random-guess baseline. `tests/product_releases.rs` attacks the product's
//! own releases (`fedhe_algorithms::fbo_fedgp::Client`): the noise-free PITC
//! summary and the private release's per-point format without noise —
//! unclipped, and clipped at the product's clip `1/n_max` with the
//! unknown-scale attack — give every point and value away; the private
//! release at ε = 4 with its noise, under the same attack, is within the
//! baseline. (At the product's clip no term of the tested federation is
//! actually clipped, the terms' norms being 4e-4–1.4e-3 against 1/19; at a
//! clip of 3e-4, which clips every term, the known-scale attack finds
//! nothing and the unknown-scale one every point and value.) Attack (b),
//! on two consecutive releases in which members 1 and 2 each added a point,
//! finds both new points and values from noise-free summaries and from
//! private releases whose noise was re-drawn from the same seeds, and
//! nothing from private releases at ε = 4 with fresh noise. The ignored
//! `noise_table`, `recovery_against_epsilon` and
//! `recovery_against_noise_multiplier` tests print recovery against the
//! noise level, against ε and against the noise multiplier: the
//! unknown-scale attack starts recovering points near a millionth of the
//! ε = 4 release's noise multiplier, close to the smallest noise the
//! mechanism's grid allows. This attacker's
//! acceptance threshold is a heuristic and a stronger attack may survive
//! more noise, so the level where it stops working is a lower bound on the
//! noise a DP mechanism needs, not a sufficient level.

pub mod difference;
mod lm;
mod metrics;
mod pitc;
pub mod reconstruction;
mod synthetic;

pub use difference::{difference_attack, ConsecutiveView, DifferenceOptions, NewPoints};
pub use metrics::Recovery;
pub use reconstruction::{
    reconstruction_attack, MomentRelease, NoiseScales, Reconstruction, ReconstructionOptions,
    RunView,
};
pub use synthetic::{noised, test_function, Federation};

use fedhe_gp::kernels::Kernel;
use fedhe_gp::sparse::{Dpitc, LocalSummary};
use fedhe_gp::GpError;
use nalgebra::{DMatrix, DVector, SymmetricEigen};
use rand::Rng;

/// Errors of the attacks.
#[derive(Debug, thiserror::Error)]
pub enum AttackError {
    /// The GP layer refused the attacker's own data or model.
    #[error("gp: {0}")]
    Gp(#[from] GpError),
    /// Inputs of inconsistent sizes.
    #[error("dimension mismatch: {0}")]
    Dimension(&'static str),
    /// The others hold at least as many points as the support set has rows:
    /// the sum's column space is then the whole space and says nothing.
    #[error("{others} other points with a support set of {support}: not identifiable")]
    NotIdentifiable {
        /// The others' point count.
        others: usize,
        /// `|S|`.
        support: usize,
    },
}

/// What one member (the attacker) knows after a release: its own data, the
/// public model (kernel with its hyper-parameters, noise variance, prior mean,
/// support set `S`), the decrypted sum of every member's local summary and the
/// public schedule (how many points the others hold).
#[derive(Debug, Clone)]
pub struct MemberView<K: Kernel> {
    /// The public kernel (length-scales and signal variance included).
    pub kernel: K,
    /// The public noise variance `σ_n²`.
    pub noise_variance: f64,
    /// The public constant prior mean `μ`.
    pub prior_mean: f64,
    /// The public support set `S`, one point per row.
    pub support: DMatrix<f64>,
    /// The attacker's own inputs (unit cube), one point per row.
    pub x: DMatrix<f64>,
    /// The attacker's own outputs.
    pub y: DVector<f64>,
    /// The decrypted sum `Σ_i L_i` of every member's local summary.
    pub sum: LocalSummary,
    /// How many points the other members hold in all.
    pub others_count: usize,
    /// How many points each other member holds (public schedule), if known;
    /// [`ValueMethod::Grouped`] needs it.
    pub others_sizes: Option<Vec<usize>>,
}

/// How the rank of the others' part of the sum (their point count) is set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RankRule {
    /// The public count [`MemberView::others_count`].
    KnownCount,
    /// The number of eigenvalues above this fraction of the largest.
    Threshold(f64),
}

/// How the attack recovers the others' values once their inputs are found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueMethod {
    /// Inputs only.
    None,
    /// Without any grouping: `R = Aᵀ M⁺ A` (exact for `M = A R⁻¹ Aᵀ` with `A`
    /// of full column rank), `z = A⁺ ṁ`, `y = μ + R z`.
    Moment,
    /// With the public per-member counts: the assignment of the recovered
    /// points to members whose block-diagonal `R_g` (the PITC blocks computed
    /// from the recovered inputs) best matches `Aᵀ M⁺ A`, then `y = μ + R_g z`.
    Grouped,
}

/// What the attacker assumes about the scale of the others' blocks of `R`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockScales {
    /// `R = blockdiag_j C_j` exactly (the PITC summary as the model computes
    /// it): every other point satisfies `G(x, x) = C(x, x)`, every pair
    /// `G(a, b) = C(a, b)` or `G(a, b) = 0`.
    Known,
    /// Every other point is its own block (FITC, `R` diagonal) and its term
    /// `(ṁ, K̇)` is scaled by an unknown positive factor `c_j` (a clipped
    /// release: `c_j = min(1, clip / ‖term_j‖)`), i.e. `R_jj = C(x_j, x_j) / c_j`.
    /// The column space is unchanged; the diagonal condition is dropped
    /// (`G(x, x)` is free) and every pair satisfies `G(a, b) = 0`. Values need
    /// no scale: `y − μ = R z` with `R = Aᵀ M⁺ A` still holds.
    Unknown,
}

/// Tuning of [`subspace_attack`].
#[derive(Debug, Clone, PartialEq)]
pub struct AttackOptions {
    /// How the rank (the others' point count) is found.
    pub rank: RankRule,
    /// Random starts of the per-point search in the unit cube.
    pub starts: usize,
    /// Levenberg–Marquardt iterations per start.
    pub max_iter: usize,
    /// A fit is accepted when its cost (squared residual) is below this or
    /// below the noise-based threshold `noise_factor · (floor / λ_r)²`,
    /// whichever is larger (`floor` the largest |eigenvalue| of the others'
    /// `K̇_SS` outside its column space, `λ_r` the smallest inside).
    pub accept: f64,
    /// The factor of the noise-based threshold (see [`AttackOptions::accept`]).
    pub noise_factor: f64,
    /// Random orders of the greedy growth tried at most.
    pub attempts: usize,
    /// A growth from three or more points is abandoned after this many
    /// candidates in a row fail to join it.
    pub patience: usize,
    /// Two candidates closer than this (L∞) are the same point.
    pub distinct: f64,
    /// Refine all recovered inputs jointly against `Aᵀ M⁺ A = R_g` (needs
    /// the per-member counts; skipped without them).
    pub joint_refine: bool,
    /// How values are recovered.
    pub values: ValueMethod,
    /// What is assumed about the scale of the others' blocks.
    pub block_scales: BlockScales,
}

impl Default for AttackOptions {
    fn default() -> Self {
        Self {
            rank: RankRule::KnownCount,
            starts: 1000,
            max_iter: 60,
            accept: 1e-18,
            noise_factor: 1.0,
            attempts: 200,
            patience: 20,
            distinct: 0.02,
            joint_refine: true,
            values: ValueMethod::Grouped,
            block_scales: BlockScales::Known,
        }
    }
}

/// What the attack recovered about the other members' points.
#[derive(Debug, Clone, PartialEq)]
pub struct Recovered {
    /// Recovered inputs (unit cube), in no particular order.
    pub inputs: Vec<Vec<f64>>,
    /// Recovered values, aligned with `inputs`, if asked for.
    pub values: Option<Vec<f64>>,
    /// The member (index into [`MemberView::others_sizes`]) each recovered
    /// point was assigned to, with [`ValueMethod::Grouped`].
    pub grouping: Option<Vec<usize>>,
    /// The rank used (the number of points looked for).
    pub rank: usize,
}

/// The others' part of the sum and its spectral pieces.
struct Others {
    /// `ṁ_sum − ṁ_own`.
    m_s: DVector<f64>,
    /// Orthonormal basis of the numerical column space (`|S| × r`).
    basis: DMatrix<f64>,
    /// `M⁺` restricted to that space.
    pinv: DMatrix<f64>,
    /// The noise floor: the largest |eigenvalue| of `M` outside the column
    /// space (round-off for an exact sum, the noise level for a noised one).
    floor: f64,
    /// The smallest eigenvalue kept.
    smallest: f64,
}

/// The public model and the others' part of a release.
struct Context<'a, K: Kernel> {
    view: &'a MemberView<K>,
    /// The public model: `k(S, x)`, `C(a, b)`, `Σ_SS⁻¹`.
    pitc: pitc::Pitc<'a, K>,
    /// Directions to project out besides the column space's complement
    /// (known points): orthonormal `|S| × q`, possibly empty.
    known: DMatrix<f64>,
    others: Others,
    /// [`BlockScales::Unknown`]: singleton blocks of unknown scales.
    scaled: bool,
}

impl<K: Kernel> Context<'_, K> {
    fn kvec(&self, x: &[f64]) -> DVector<f64> {
        self.pitc.kvec(x)
    }

    /// `k(S, x)` and its Jacobian `∂k(S, x)/∂x` (`|S| × D`).
    fn kvec_jac(&self, x: &[f64]) -> (DVector<f64>, DMatrix<f64>) {
        let s = self.pitc.srows.len();
        let k = self.kvec(x);
        let mut jac = DMatrix::zeros(s, x.len());
        for i in 0..s {
            for (d, g) in self
                .view
                .kernel
                .grad_x(x, &self.pitc.srows[i])
                .into_iter()
                .enumerate()
            {
                jac[(i, d)] = g;
            }
        }
        (k, jac)
    }

    /// [`Context::point_residual`] and its Jacobian (no known directions).
    fn point_residual_jac(&self, x: &[f64]) -> (Vec<f64>, DMatrix<f64>) {
        let (k, jk) = self.kvec_jac(x);
        let r = self.point_residual_k(x, &k);
        let b = &self.others.basis;
        let norm = k.norm().max(1e-300);
        let perp = &k - b * (b.transpose() * &k);
        // d(P k / ‖k‖) = P J / ‖k‖ − P k (kᵀ J) / ‖k‖³.
        let pj = &jk - b * (b.transpose() * &jk);
        let ktj = k.transpose() * &jk;
        let mut jac = DMatrix::zeros(r.len(), x.len());
        let s = k.len();
        for i in 0..s {
            for d in 0..x.len() {
                jac[(i, d)] = pj[(i, d)] / norm - perp[i] * ktj[(0, d)] / norm.powi(3);
            }
        }
        if r.len() > s {
            let sf = self.view.kernel.signal_variance();
            // d(C − G)/dx = −2 kᵀ (Σ_SS⁻¹ + M⁺) J.
            let w = (&self.pitc.sigma_ss_inv + &self.others.pinv) * &k;
            let g = w.transpose() * &jk;
            for d in 0..x.len() {
                jac[(s, d)] = -2.0 * g[(0, d)] / sf;
            }
        }
        (r, jac)
    }

    /// `k` with the known directions projected out.
    fn reduced(&self, k: &DVector<f64>) -> DVector<f64> {
        if self.known.ncols() == 0 {
            k.clone()
        } else {
            let c = self.known.transpose() * k;
            k - &self.known * c
        }
    }

    /// The PITC conditional covariance `C(a, b)` (noise on the diagonal when `same`).
    fn cond(&self, a: &[f64], ka: &DVector<f64>, b: &[f64], kb: &DVector<f64>, same: bool) -> f64 {
        self.pitc.cond(a, ka, b, kb, same)
    }

    /// Per-point residual: the relative part of `k(S, x)` outside the column
    /// space, and the diagonal condition `C(x, x) = k(S,x)ᵀ M⁺ k(S,x)`.
    fn point_residual(&self, x: &[f64]) -> Vec<f64> {
        self.point_residual_k(x, &self.kvec(x))
    }

    /// [`Context::point_residual`] with `k = k(S, x)` given.
    fn point_residual_k(&self, x: &[f64], k: &DVector<f64>) -> Vec<f64> {
        let kr = self.reduced(k);
        let norm = kr.norm().max(1e-300);
        let b = &self.others.basis;
        let coef = b.transpose() * &kr;
        let perp = &kr - b * &coef;
        let mut out: Vec<f64> = perp.iter().map(|v| v / norm).collect();
        if self.known.ncols() == 0 && !self.scaled {
            let sf = self.view.kernel.signal_variance();
            let diag = self.cond(x, k, x, k, true) - k.dot(&(&self.others.pinv * k));
            out.push(diag / sf);
        }
        out
    }

    /// `G(a, b) = k(S,a)ᵀ M⁺ k(S,b)`: the others' `R` entry for a pair of
    /// their points (`Aᵀ M⁺ A = R`).
    fn gmat(&self, ka: &DVector<f64>, kb: &DVector<f64>) -> f64 {
        ka.dot(&(&self.others.pinv * kb))
    }

    /// The pair residual of two points: `G (G − C) / σ_f⁴` (zero for a pair
    /// of different members, `G = 0`, or of the same one, `G = C`), or
    /// `G / σ_f²` with singleton blocks of unknown scales.
    fn pair_term(&self, a: &[f64], ka: &DVector<f64>, b: &[f64], kb: &DVector<f64>) -> f64 {
        let sf2 = self.view.kernel.signal_variance().powi(2);
        let g = self.gmat(ka, kb);
        if self.scaled {
            return g / self.view.kernel.signal_variance();
        }
        let c = self.cond(a, ka, b, kb, false);
        g * (g - c) / sf2
    }

    /// Joint residual of `n` points (flattened): every point's own residual
    /// and, for every pair, `G(a,b) · (G(a,b) − C(a,b)) / σ_f⁴`, which vanishes
    /// when the pair belongs to different members (`G = 0`, `R` block
    /// diagonal) or to the same one (`G = C`), whichever it is.
    fn joint_residual(&self, flat: &[f64], dim: usize) -> Vec<f64> {
        let pts: Vec<&[f64]> = flat.chunks(dim).collect();
        let ks: Vec<DVector<f64>> = pts.iter().map(|p| self.kvec(p)).collect();
        let mut out = Vec::new();
        for (p, k) in pts.iter().zip(&ks) {
            out.extend(self.point_residual_k(p, k));
        }
        for i in 0..pts.len() {
            for j in i + 1..pts.len() {
                out.push(self.pair_term(pts[i], &ks[i], pts[j], &ks[j]));
            }
        }
        out
    }

    /// The pair term `G(a,b)·(G(a,b) − C(a,b))/σ_f⁴` and its gradient with
    /// respect to `a` (`ja = ∂k(S,a)/∂a`).
    fn pair_term_grad(
        &self,
        a: &[f64],
        ka: &DVector<f64>,
        ja: &DMatrix<f64>,
        b: &[f64],
        kb: &DVector<f64>,
    ) -> (f64, Vec<f64>) {
        let sf2 = self.view.kernel.signal_variance().powi(2);
        let pk = &self.others.pinv * kb;
        let g = ka.dot(&pk);
        let dg = pk.transpose() * ja;
        if self.scaled {
            let sf = self.view.kernel.signal_variance();
            return (g / sf, dg.iter().map(|v| v / sf).collect());
        }
        let sk = &self.pitc.sigma_ss_inv * kb;
        let c = self.cond(a, ka, b, kb, false);
        let dc0 = self.view.kernel.grad_x(a, b);
        let dsk = sk.transpose() * ja;
        let grad = (0..a.len())
            .map(|d| ((2.0 * g - c) * dg[(0, d)] - g * (dc0[d] - dsk[(0, d)])) / sf2)
            .collect();
        (g * (g - c) / sf2, grad)
    }

    /// The Jacobian of [`Context::joint_residual`] (analytic): moving one
    /// point changes only its own residual and its pair terms.
    fn joint_jacobian(&self, flat: &[f64], dim: usize, m: usize) -> DMatrix<f64> {
        let n = flat.len() / dim;
        let pts: Vec<&[f64]> = flat.chunks(dim).collect();
        let kj: Vec<(DVector<f64>, DMatrix<f64>)> = pts.iter().map(|p| self.kvec_jac(p)).collect();
        let per = (m - n * (n - 1) / 2) / n.max(1);
        let mut jac = DMatrix::zeros(m, flat.len());
        for (i, p) in pts.iter().enumerate() {
            let (_, pj) = self.point_residual_jac(p);
            jac.view_mut((i * per, i * dim), (per, dim)).copy_from(&pj);
        }
        let mut row = n * per;
        for i in 0..n {
            for j in i + 1..n {
                let (_, gi) = self.pair_term_grad(pts[i], &kj[i].0, &kj[i].1, pts[j], &kj[j].0);
                let (_, gj) = self.pair_term_grad(pts[j], &kj[j].0, &kj[j].1, pts[i], &kj[i].0);
                for d in 0..dim {
                    jac[(row, i * dim + d)] = gi[d];
                    jac[(row, j * dim + d)] = gj[d];
                }
                row += 1;
            }
        }
        jac
    }

    /// The Jacobian of [`Context::new_point_residual`] with respect to `x`.
    fn new_point_jacobian(&self, x: &[f64], set: &[Vec<f64>], ks: &[DVector<f64>]) -> DMatrix<f64> {
        let (own, pj) = self.point_residual_jac(x);
        let (kx, jx) = self.kvec_jac(x);
        let mut jac = DMatrix::zeros(own.len() + set.len(), x.len());
        jac.view_mut((0, 0), (own.len(), x.len())).copy_from(&pj);
        for (r, (p, kp)) in set.iter().zip(ks).enumerate() {
            let (_, g) = self.pair_term_grad(x, &kx, &jx, p, kp);
            for (d, v) in g.into_iter().enumerate() {
                jac[(own.len() + r, d)] = v;
            }
        }
        jac
    }

    /// Residual of a new point `x` against fixed points `set` (with their
    /// `k(S, ·)` in `ks`): its own residual and the pair terms.
    fn new_point_residual(&self, x: &[f64], set: &[Vec<f64>], ks: &[DVector<f64>]) -> Vec<f64> {
        let kx = self.kvec(x);
        let mut out = self.point_residual(x);
        for (p, kp) in set.iter().zip(ks) {
            out.push(self.pair_term(x, &kx, p, kp));
        }
        out
    }

    /// A new point from `x0` consistent with `set` (its own residual and
    /// every pair condition with the set below `accept`) and distinct from
    /// the set's points, if the fit finds one.
    fn join(
        &self,
        set: &[Vec<f64>],
        x0: &[f64],
        accept: f64,
        options: &AttackOptions,
    ) -> Option<Vec<f64>> {
        let ks: Vec<DVector<f64>> = set.iter().map(|p| self.kvec(p)).collect();
        let f = |x: &[f64]| self.new_point_residual(x, set, &ks);
        let (x, cost) = lm::minimise_with(
            &f,
            |x, _| self.new_point_jacobian(x, set, &ks),
            x0,
            options.max_iter,
        );
        (cost < accept && set.iter().all(|p| linf(p, &x) > options.distinct)).then_some(x)
    }

    /// Refines `points` jointly; returns them and the joint cost.
    fn refine(&self, points: &[Vec<f64>], max_iter: usize) -> (Vec<Vec<f64>>, f64) {
        let dim = self.view.support.ncols();
        let flat: Vec<f64> = points.iter().flatten().copied().collect();
        let f = |f: &[f64]| self.joint_residual(f, dim);
        let (x, cost) =
            lm::minimise_with(&f, |x, m| self.joint_jacobian(x, dim, m), &flat, max_iter);
        (x.chunks(dim).map(<[f64]>::to_vec).collect(), cost)
    }
}

pub(crate) fn rows_of(x: &DMatrix<f64>) -> Vec<Vec<f64>> {
    (0..x.nrows())
        .map(|i| x.row(i).iter().copied().collect())
        .collect()
}

fn build_others<K: Kernel>(
    view: &MemberView<K>,
    rank_rule: RankRule,
    count: usize,
) -> Result<Others, AttackError> {
    let s = view.support.nrows();
    if view.sum.m_s.len() != s || view.sum.k_ss.nrows() != s || view.sum.k_ss.ncols() != s {
        return Err(AttackError::Dimension("sum vs support set"));
    }
    let model = Dpitc::new(
        view.kernel.clone(),
        view.noise_variance,
        view.prior_mean,
        view.support.clone(),
    )?;
    let own = model.local_summary(&view.x, &view.y)?;
    let m = &view.sum.k_ss - &own.k_ss;
    let m = (&m + m.transpose()) * 0.5;
    let m_s = &view.sum.m_s - &own.m_s;
    let eig = SymmetricEigen::new(m.clone());
    let mut order: Vec<usize> = (0..s).collect();
    order.sort_by(|&a, &b| eig.eigenvalues[b].total_cmp(&eig.eigenvalues[a]));
    let top = eig.eigenvalues[order[0]].max(0.0);
    let rank = match rank_rule {
        RankRule::KnownCount => count,
        RankRule::Threshold(t) => order
            .iter()
            .filter(|&&i| eig.eigenvalues[i] > t * top)
            .count(),
    };
    if rank >= s {
        return Err(AttackError::NotIdentifiable {
            others: rank,
            support: s,
        });
    }
    let basis = DMatrix::from_fn(s, rank, |i, j| eig.eigenvectors[(i, order[j])]);
    let inv = DVector::from_fn(rank, |j, _| {
        let l = eig.eigenvalues[order[j]];
        if l > 0.0 {
            1.0 / l
        } else {
            0.0
        }
    });
    let pinv = &basis * DMatrix::from_diagonal(&inv) * basis.transpose();
    let floor = order[rank..]
        .iter()
        .map(|&i| eig.eigenvalues[i].abs())
        .fold(0.0, f64::max);
    let smallest = eig.eigenvalues[order[rank.max(1) - 1]].max(f64::MIN_POSITIVE);
    Ok(Others {
        m_s,
        basis,
        pinv,
        floor,
        smallest,
    })
}

/// `Σ_SS⁻¹` of `kernel` on `support` (a 1e-10 relative jitter).
pub(crate) fn sigma_ss_inv_of<K: Kernel>(kernel: &K, support: &DMatrix<f64>) -> DMatrix<f64> {
    let mut g = kernel.gram(support);
    for i in 0..g.nrows() {
        g[(i, i)] += 1e-10 * kernel.signal_variance();
    }
    g.cholesky()
        .map(|c| c.inverse())
        .unwrap_or_else(|| DMatrix::identity(support.nrows(), support.nrows()))
}

/// The acceptance threshold of a joint fit: [`AttackOptions::accept`], or
/// `noise_factor · (floor / λ_r)²` when larger — the pair and diagonal
/// conditions go through `M⁺`, whose error is about the noise floor over
/// the smallest kept eigenvalue.
fn threshold<K: Kernel>(ctx: &Context<'_, K>, options: &AttackOptions) -> f64 {
    let scale = ctx.others.floor / ctx.others.smallest;
    options.accept.max(options.noise_factor * scale * scale)
}

/// Runs the per-point search: random starts, local minimisation, and the
/// greedy growth of a jointly consistent set of up to `want` points.
fn search<K: Kernel, R: Rng + ?Sized>(
    ctx: &Context<'_, K>,
    want: usize,
    options: &AttackOptions,
    rng: &mut R,
) -> Vec<Vec<f64>> {
    let dim = ctx.view.support.ncols();
    let accept = threshold(ctx, options);
    let mut cands: Vec<(f64, Vec<f64>)> = Vec::new();
    for _ in 0..options.starts {
        let x0: Vec<f64> = (0..dim).map(|_| rng.gen::<f64>()).collect();
        let f = |x: &[f64]| ctx.point_residual(x);
        let (x, cost) = if ctx.known.ncols() == 0 {
            lm::minimise_with(
                &f,
                |x, _| ctx.point_residual_jac(x).1,
                &x0,
                options.max_iter,
            )
        } else {
            lm::minimise(f, &x0, options.max_iter)
        };
        if cost.is_finite() && cost < accept {
            cands.push((cost, x));
        }
    }
    cands.sort_by(|a, b| a.0.total_cmp(&b.0));
    let cands: Vec<Vec<f64>> = cands.into_iter().map(|c| c.1).collect();
    if !options.joint_refine || ctx.known.ncols() > 0 {
        return pick_distinct(&cands, want, options.distinct);
    }
    grow(ctx, &cands, want, accept, options, rng)
}

/// The pair inconsistency of candidates `i` and `j`: `min(|G|, |G − C|)`
/// over `√(C_ii C_jj)` (zero for two true points, of the same member or not);
/// `|G|` over the same with [`BlockScales::Unknown`].
fn pair_errors<K: Kernel>(ctx: &Context<'_, K>, cands: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let ks: Vec<DVector<f64>> = cands.iter().map(|p| ctx.kvec(p)).collect();
    let pk: Vec<DVector<f64>> = ks.iter().map(|k| &ctx.others.pinv * k).collect();
    let sk: Vec<DVector<f64>> = ks.iter().map(|k| &ctx.pitc.sigma_ss_inv * k).collect();
    let diag: Vec<f64> = (0..cands.len())
        .map(|i| {
            ctx.cond(&cands[i], &ks[i], &cands[i], &ks[i], true)
                .abs()
                .max(1e-300)
        })
        .collect();
    let n = cands.len();
    let mut e = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in i + 1..n {
            let g = ks[i].dot(&pk[j]);
            let v = if ctx.scaled {
                g.abs()
            } else {
                let c = ctx.view.kernel.eval(&cands[i], &cands[j]) - ks[i].dot(&sk[j]);
                g.abs().min((g - c).abs())
            } / (diag[i] * diag[j]).sqrt();
            e[i][j] = v;
            e[j][i] = v;
        }
    }
    e
}

/// Finds a jointly consistent set of up to `want` points among the
/// candidates (points of the per-point zero curves). For every candidate a
/// seed set of four (six with [`BlockScales::Unknown`]) is built greedily, each next candidate the one of the
/// smallest largest pair inconsistency with the set; the seed sets are
/// refined jointly in order of that inconsistency, and the first one whose
/// joint cost is below `accept` (four points on their curves, six pair
/// conditions: spurious fits are rare) is grown point by point.
fn grow<K: Kernel, R: Rng + ?Sized>(
    ctx: &Context<'_, K>,
    cands: &[Vec<f64>],
    want: usize,
    accept: f64,
    options: &AttackOptions,
    rng: &mut R,
) -> Vec<Vec<f64>> {
    let dim = ctx.view.support.ncols();
    let n = cands.len();
    if n == 0 || want == 0 {
        return Vec::new();
    }
    let core = want.min(if ctx.scaled { 6 } else { 4 });
    let e = pair_errors(ctx, cands);
    let mut seeds: Vec<(f64, Vec<usize>)> = (0..n)
        .map(|a| {
            let mut set = vec![a];
            let mut worst = 0.0f64;
            while set.len() < core {
                let next = (0..n)
                    .filter(|&j| {
                        set.iter()
                            .all(|&s| linf(&cands[s], &cands[j]) > options.distinct)
                    })
                    .map(|j| (set.iter().map(|&s| e[s][j]).fold(0.0, f64::max), j))
                    .min_by(|x, y| x.0.total_cmp(&y.0));
                let Some((v, j)) = next else { break };
                worst = worst.max(v);
                set.push(j);
            }
            (worst, set)
        })
        .filter(|(_, set)| set.len() == core)
        .collect();
    seeds.sort_by(|x, y| x.0.total_cmp(&y.0));
    let mut best: Vec<Vec<f64>> = Vec::new();
    for (_, seed) in seeds.iter().take(options.attempts) {
        let pick: Vec<Vec<f64>> = seed.iter().map(|&i| cands[i].clone()).collect();
        let (mut set, cost) = ctx.refine(&pick, options.max_iter);
        let distinct = (0..set.len())
            .all(|i| (i + 1..set.len()).all(|j| linf(&set[i], &set[j]) > options.distinct));
        if !(cost < accept && distinct) {
            continue;
        }
        // Grow: the candidates most consistent with the seed first.
        let mut order: Vec<(f64, usize)> = (0..n)
            .filter(|j| !seed.contains(j))
            .map(|j| (seed.iter().map(|&s| e[s][j]).fold(0.0, f64::max), j))
            .collect();
        order.sort_by(|x, y| x.0.total_cmp(&y.0));
        let mut misses = 0usize;
        for &(_, c) in &order {
            if set.len() == want || misses > options.patience {
                break;
            }
            if set.iter().any(|p| linf(p, &cands[c]) <= options.distinct) {
                continue;
            }
            match ctx.join(&set, &cands[c], accept, options) {
                Some(x) => {
                    set.push(x);
                    misses = 0;
                }
                None => misses += 1,
            }
        }
        // A set of four or more pins its members: complete it from the
        // remaining candidates and fresh random starts (a point whose zero
        // curve the candidates missed).
        let mut tries = 0;
        let mut rest = order.iter().map(|o| o.1);
        while set.len() < want && tries < options.starts {
            tries += 1;
            let x0: Vec<f64> = match rest.next() {
                Some(c) => cands[c].clone(),
                None => (0..dim).map(|_| rng.gen::<f64>()).collect(),
            };
            if let Some(x) = ctx.join(&set, &x0, accept, options) {
                set.push(x);
            }
        }
        if set.len() > best.len() {
            best = set;
            if best.len() == want {
                best = ctx.refine(&best, 4 * options.max_iter).0;
                break;
            }
        }
    }
    best
}

fn pick_distinct(cands: &[Vec<f64>], want: usize, distinct: f64) -> Vec<Vec<f64>> {
    let mut picked: Vec<Vec<f64>> = Vec::new();
    for x in cands {
        if picked.len() == want {
            break;
        }
        if picked.iter().all(|p| linf(p, x) > distinct) {
            picked.push(x.clone());
        }
    }
    picked
}

/// The L∞ distance.
pub fn linf(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// Attack (a): recovers the other members' inputs (and values) from one
/// decrypted sum. See the crate docs for the threat model and formulas.
pub fn subspace_attack<K: Kernel, R: Rng + ?Sized>(
    view: &MemberView<K>,
    options: &AttackOptions,
    rng: &mut R,
) -> Result<Recovered, AttackError> {
    let others = build_others(view, options.rank, view.others_count)?;
    let rank = others.basis.ncols();
    let ctx = Context {
        view,
        pitc: pitc::Pitc::new(&view.kernel, view.noise_variance, &view.support),
        known: DMatrix::zeros(view.support.nrows(), 0),
        others,
        scaled: options.block_scales == BlockScales::Unknown,
    };
    let inputs = search(&ctx, rank, options, rng);
    let (values, grouping) = recover_values(&ctx, &inputs, options.values);
    Ok(Recovered {
        inputs,
        values,
        grouping,
        rank,
    })
}

/// Values of the recovered inputs (see [`ValueMethod`]).
fn recover_values<K: Kernel>(
    ctx: &Context<'_, K>,
    inputs: &[Vec<f64>],
    method: ValueMethod,
) -> (Option<Vec<f64>>, Option<Vec<usize>>) {
    let n = inputs.len();
    if method == ValueMethod::None || n == 0 {
        return (None, None);
    }
    let ks: Vec<DVector<f64>> = inputs.iter().map(|p| ctx.kvec(p)).collect();
    let a = DMatrix::from_fn(ctx.pitc.srows.len(), n, |i, j| ks[j][i]);
    // z = A⁺ ṁ (least squares; A has full column rank).
    let Ok(svd) = a.clone().svd(true, true).pseudo_inverse(1e-12) else {
        return (None, None);
    };
    let z = svd * &ctx.others.m_s;
    let g = DMatrix::from_fn(n, n, |i, j| ctx.gmat(&ks[i], &ks[j]));
    let c = DMatrix::from_fn(n, n, |i, j| {
        ctx.cond(&inputs[i], &ks[i], &inputs[j], &ks[j], i == j)
    });
    let (r, grouping) = match (method, &ctx.view.others_sizes) {
        // Singleton blocks of unknown scales: `R` is diagonal, `R_jj = G(x_j, x_j)`.
        (ValueMethod::Grouped, _) if ctx.scaled => (
            DMatrix::from_diagonal(&g.diagonal()),
            Some((0..n).collect()),
        ),
        (ValueMethod::Grouped, Some(sizes)) if sizes.iter().sum::<usize>() == n => {
            let labels = best_grouping(&g, &c, sizes);
            let r = DMatrix::from_fn(n, n, |i, j| {
                if labels[i] == labels[j] {
                    c[(i, j)]
                } else {
                    0.0
                }
            });
            (r, Some(labels))
        }
        _ => (g, None),
    };
    let y = r * z;
    (
        Some(y.iter().map(|v| v + ctx.view.prior_mean).collect()),
        grouping,
    )
}

/// The assignment of points to members of the given sizes minimising
/// `Σ_{i<j} (same ? (G − C)² : G²)` (branch and bound over all assignments).
fn best_grouping(g: &DMatrix<f64>, c: &DMatrix<f64>, sizes: &[usize]) -> Vec<usize> {
    struct Search<'a> {
        g: &'a DMatrix<f64>,
        c: &'a DMatrix<f64>,
        left: Vec<usize>,
        labels: Vec<usize>,
        best: Vec<usize>,
        best_cost: f64,
        nodes: usize,
    }
    impl Search<'_> {
        fn go(&mut self, i: usize, cost: f64) {
            self.nodes += 1;
            if cost >= self.best_cost || self.nodes > 2_000_000 {
                return;
            }
            if i == self.labels.len() {
                self.best_cost = cost;
                self.best = self.labels.clone();
                return;
            }
            for m in 0..self.left.len() {
                if self.left[m] == 0 {
                    continue;
                }
                let add: f64 = (0..i)
                    .map(|j| {
                        let gij = self.g[(i, j)];
                        if self.labels[j] == m {
                            (gij - self.c[(i, j)]).powi(2)
                        } else {
                            gij * gij
                        }
                    })
                    .sum();
                self.left[m] -= 1;
                self.labels[i] = m;
                self.go(i + 1, cost + add);
                self.left[m] += 1;
            }
        }
    }
    let n = g.nrows();
    let mut search = Search {
        g,
        c,
        left: sizes.to_vec(),
        labels: vec![0; n],
        best: vec![0; n],
        best_cost: f64::INFINITY,
        nodes: 0,
    };
    search.go(0, 0.0);
    search.best
}
