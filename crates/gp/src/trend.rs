//! A full quadratic trend fitted by least squares from sums.
//!
//! # Why
//!
//! A stationary GP with a constant mean forgets, away from its data, the
//! bowl that a smooth objective traces: the sparse global posterior of a
//! federation, whose inducing points are few in ten dimensions, does so
//! everywhere but near them. Several CEC-2005 tasks are quadratics
//! (F1 a sphere, F2 and F4 Schwefel's 1.2, F3 a rotated elliptic), which a
//! model with a quadratic trend of all `p = 1 + D + D(D+1)/2` terms
//! predicts exactly once it has seen `p` points in general position, and
//! whose minimiser it then names. COBYQA (Ragonneau & Zhang) reaches those
//! minima through the same kind of model.
//!
//! # From sums
//!
//! The ordinary least-squares weights `β = (ΦᵀΦ + λI)⁻¹ Φᵀz` need only the
//! Gram matrix `ΦᵀΦ = Σ_i Φ_iᵀΦ_i` and `Φᵀz = Σ_i Φ_iᵀz_i`: sums over the
//! members, so each member adds its own and only the total is decrypted
//! ([`TrendSums`]). The features are taken around the centre of the unit
//! cube (`u = x − ½`), which keeps `ΦᵀΦ` well-conditioned there.

use crate::error::check_finite;
use crate::GpError;
use nalgebra::{DMatrix, DVector};

/// The number of weights of a full quadratic in `dim` dimensions:
/// `1 + D + D(D+1)/2` (66 for `D = 10`).
pub fn quadratic_len(dim: usize) -> usize {
    1 + dim + dim * (dim + 1) / 2
}

/// The features `φ(x) = (1, u_1, …, u_D, u_1u_1, u_1u_2, …, u_Du_D)` with
/// `u = x − ½`, the products in row-major upper-triangular order.
pub fn quadratic_features(x: &[f64], out: &mut Vec<f64>) {
    out.clear();
    out.push(1.0);
    out.extend(x.iter().map(|v| v - 0.5));
    for i in 0..x.len() {
        for j in i..x.len() {
            out.push((x[i] - 0.5) * (x[j] - 0.5));
        }
    }
}

/// The number of distinct values a [`TrendSums`] holds about its points:
/// the monomials of degree at most 4 in `D` inputs, `C(D + 4, 4)` (the
/// entries of `ΦᵀΦ`, which repeat every product of two quadratic
/// monomials, and the point count among them), and `Φᵀz`'s `p`
/// ([`quadratic_len`]) value-weighted quadratic monomials: 1,067 in 10-D.
pub fn moment_equations(dim: usize) -> usize {
    // C(D + 4, 4), computed without overflow for any practical D.
    let monomials = (1..=4).fold(1usize, |c, k| c * (dim + k) / k);
    monomials + quadratic_len(dim)
}

/// The most points the sums of [`TrendSums`] can determine by a count of
/// unknowns (100 in 10-D). `m` points carry `m·D` input unknowns and `m`
/// value unknowns. The point count itself is public (it is one of the
/// moments, and a spaced trend decrypts it first), so the Gram matrix's
/// other `C(D + 4, 4) − 1` moments constrain the inputs alone:
/// `⌈(C(D+4,4) − 1)/D⌉`; with `Φᵀz`, inputs and values together:
/// `⌈(C(D+4,4) − 1 + p)/(D + 1)⌉`. The larger of the two. Beyond it the
/// moment equations leave a continuum of point sets with the same sums, so
/// no decomposition, however clever, singles out the true points. A
/// necessary condition for privacy, not a proof of it: a release rule adds
/// a margin (`fbo_fedgp`'s spaced trend releases only sums whose new points
/// from others number twice this).
pub fn determinable_points(dim: usize) -> usize {
    let gram = moment_equations(dim) - quadratic_len(dim) - 1;
    gram.div_ceil(dim.max(1))
        .max((gram + quadratic_len(dim)).div_ceil(dim + 1))
}

/// One member's (or the federation's summed) least-squares statistics of a
/// full quadratic: the upper triangle of `ΦᵀΦ` (row-major), `Φᵀz` and the
/// number of points, each divided by a public constant `scale` so that every
/// entry stays small for a fixed-point channel. Linear in the data, so the
/// sum of members' packed sums is the packed sum of the pooled data.
#[derive(Debug, Clone, PartialEq)]
pub struct TrendSums {
    dim: usize,
    packed: Vec<f64>,
}

impl TrendSums {
    /// The length of a packed vector for `dim`: `p(p+1)/2 + p + 1`.
    pub fn packed_len(dim: usize) -> usize {
        let p = quadratic_len(dim);
        p * (p + 1) / 2 + p + 1
    }

    /// The sums of the points `xs` (unit cube, one per entry) with targets
    /// `zs`, divided by `scale`.
    pub fn from_data(dim: usize, xs: &[&[f64]], zs: &[f64], scale: f64) -> Result<Self, GpError> {
        if xs.len() != zs.len() {
            return Err(GpError::Dimension {
                what: "trend targets vs points",
                expected: xs.len(),
                got: zs.len(),
            });
        }
        crate::error::check_positive("trend scale", scale)?;
        check_finite("trend targets", zs)?;
        let p = quadratic_len(dim);
        let mut packed = vec![0.0; Self::packed_len(dim)];
        let mut phi = Vec::with_capacity(p);
        for (x, z) in xs.iter().zip(zs) {
            if x.len() != dim {
                return Err(GpError::Dimension {
                    what: "trend point",
                    expected: dim,
                    got: x.len(),
                });
            }
            check_finite("trend point", x.iter())?;
            quadratic_features(x, &mut phi);
            let mut at = 0;
            for a in 0..p {
                for b in a..p {
                    packed[at] += phi[a] * phi[b] / scale;
                    at += 1;
                }
            }
            for a in 0..p {
                packed[at + a] += phi[a] * z / scale;
            }
            packed[at + p] += 1.0 / scale;
        }
        Ok(Self { dim, packed })
    }

    /// The sums as they go into the channel.
    pub fn packed(&self) -> &[f64] {
        &self.packed
    }

    /// Summed sums back from the channel (still divided by the constant,
    /// which cancels in the fit).
    pub fn unpack(dim: usize, packed: &[f64]) -> Result<Self, GpError> {
        if packed.len() != Self::packed_len(dim) {
            return Err(GpError::Dimension {
                what: "packed trend sums length",
                expected: Self::packed_len(dim),
                got: packed.len(),
            });
        }
        check_finite("packed trend sums", packed)?;
        Ok(Self {
            dim,
            packed: packed.to_vec(),
        })
    }

    /// The number of points behind the sums, given the constant they were
    /// divided by.
    pub fn points(&self, scale: f64) -> f64 {
        self.packed.last().copied().unwrap_or(0.0) * scale
    }

    /// The least-squares quadratic `z ≈ φ(x)ᵀβ`, `β = (ΦᵀΦ + λI)⁻¹Φᵀz` with
    /// the ridge `λ = ridge · tr(ΦᵀΦ)/p` (which keeps the solve defined at
    /// the edge of identifiability and is negligible beyond it), or `None`
    /// while the sums hold fewer than `min_points` points (given the
    /// constant `scale` they were divided by) or the system cannot be
    /// factorised.
    pub fn fit(&self, scale: f64, min_points: f64, ridge: f64) -> Option<QuadraticTrend> {
        let points = self.points(scale);
        if points.is_nan() || points < min_points {
            return None;
        }
        let p = quadratic_len(self.dim);
        let mut gram = DMatrix::zeros(p, p);
        let mut at = 0;
        for a in 0..p {
            for b in a..p {
                gram[(a, b)] = self.packed[at];
                gram[(b, a)] = self.packed[at];
                at += 1;
            }
        }
        let rhs = DVector::from_column_slice(&self.packed[at..at + p]);
        let lambda = ridge * gram.trace() / p as f64;
        for a in 0..p {
            gram[(a, a)] += lambda;
        }
        let beta = gram.cholesky()?.solve(&rhs);
        beta.iter()
            .all(|b| b.is_finite())
            .then_some(QuadraticTrend {
                dim: self.dim,
                beta,
                clamp: None,
            })
    }
}

/// A fitted quadratic `m(x) = φ(x)ᵀβ` ([`quadratic_features`]), optionally
/// clamped to `[lo, hi]`: a trend fitted to values that a warping clips at
/// known bounds follows them there, instead of running past them.
#[derive(Debug, Clone, PartialEq)]
pub struct QuadraticTrend {
    dim: usize,
    beta: DVector<f64>,
    clamp: Option<(f64, f64)>,
}

impl QuadraticTrend {
    /// The trend with weights `beta` (length [`quadratic_len`]`(dim)`).
    pub fn new(dim: usize, beta: Vec<f64>) -> Result<Self, GpError> {
        if beta.len() != quadratic_len(dim) {
            return Err(GpError::Dimension {
                what: "quadratic trend weights",
                expected: quadratic_len(dim),
                got: beta.len(),
            });
        }
        check_finite("quadratic trend weights", beta.iter())?;
        Ok(Self {
            dim,
            beta: DVector::from_vec(beta),
            clamp: None,
        })
    }

    /// The unclamped trend `scale · m(x) + shift` (the same quadratic in
    /// other units, e.g. another standardisation of the same values).
    pub fn affine(&self, scale: f64, shift: f64) -> Result<Self, GpError> {
        check_finite("trend scale and shift", [scale, shift].iter())?;
        let mut beta = &self.beta * scale;
        beta[0] += shift;
        check_finite("quadratic trend weights", beta.iter())?;
        Ok(Self {
            dim: self.dim,
            beta,
            clamp: None,
        })
    }

    /// This trend clamped to `[lo, hi]`.
    pub fn clamped(mut self, lo: f64, hi: f64) -> Result<Self, GpError> {
        check_finite("trend clamp", [lo, hi].iter())?;
        if lo > hi {
            return Err(GpError::Bounds {
                what: "trend clamp",
                lower: lo,
                upper: hi,
            });
        }
        self.clamp = Some((lo, hi));
        Ok(self)
    }

    /// The weights `β`.
    pub fn weights(&self) -> &[f64] {
        self.beta.as_slice()
    }

    /// The input dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// `m(x)` and `∂m/∂x` (zero where the clamp holds).
    pub fn value_and_gradient(&self, x: &[f64]) -> (f64, Vec<f64>) {
        let d = self.dim;
        let b = self.beta.as_slice();
        let u: Vec<f64> = x.iter().map(|v| v - 0.5).collect();
        let mut value = b[0];
        let mut grad = vec![0.0; d];
        for i in 0..d {
            value += b[1 + i] * u[i];
            grad[i] += b[1 + i];
        }
        let mut at = 1 + d;
        for i in 0..d {
            for j in i..d {
                value += b[at] * u[i] * u[j];
                grad[i] += b[at] * u[j];
                grad[j] += b[at] * u[i];
                at += 1;
            }
        }
        match self.clamp {
            Some((lo, _)) if value < lo => (lo, vec![0.0; d]),
            Some((_, hi)) if value > hi => (hi, vec![0.0; d]),
            _ => (value, grad),
        }
    }

    /// `m(x)`.
    pub fn value(&self, x: &[f64]) -> f64 {
        self.value_and_gradient(x).0
    }

    /// The Hessian `∇²m` of the unclamped quadratic (constant).
    fn hessian(&self) -> DMatrix<f64> {
        let d = self.dim;
        let mut h = DMatrix::zeros(d, d);
        let mut at = 1 + d;
        for i in 0..d {
            for j in i..d {
                let w = self.beta[at];
                if i == j {
                    h[(i, i)] += 2.0 * w;
                } else {
                    h[(i, j)] += w;
                    h[(j, i)] += w;
                }
                at += 1;
            }
        }
        h
    }

    /// A maximiser of the unclamped quadratic in the unit cube: its
    /// stationary point when the quadratic is concave there and the point
    /// lies inside, else projected gradient ascent with step `1/ρ(∇²m)`
    /// (which converges to the box-constrained maximum of a concave
    /// quadratic, and to a local one otherwise) from the stationary point
    /// pulled into the cube, or from the centre. An acquisition optimiser
    /// starting from this point finds the trend's optimum even where it is
    /// a narrow ridge that multi-start L-BFGS from random points misses.
    pub fn maximiser_in_unit_cube(&self) -> Vec<f64> {
        let d = self.dim;
        let h = self.hessian();
        let g0 = DVector::from_iterator(d, (0..d).map(|i| self.beta[1 + i]));
        let eig = h.clone().symmetric_eigenvalues();
        let radius = eig.iter().fold(0.0_f64, |r, e| r.max(e.abs()));
        let concave = eig.iter().all(|e| *e < 0.0);
        let stationary = concave
            .then(|| h.clone().lu().solve(&(-&g0)))
            .flatten()
            .map(|u| u.iter().map(|v| v + 0.5).collect::<Vec<f64>>());
        if let Some(x) = &stationary {
            if x.iter().all(|v| (0.0..=1.0).contains(v)) {
                return x.clone();
            }
        }
        let mut x = stationary
            .map(|x| x.iter().map(|v| v.clamp(0.0, 1.0)).collect())
            .unwrap_or_else(|| vec![0.5; d]);
        if !(radius > 0.0 && radius.is_finite()) {
            return x;
        }
        for _ in 0..MAXIMISER_STEPS {
            // ∇m at x, unclamped: g0 + H u.
            let u = DVector::from_iterator(d, x.iter().map(|v| v - 0.5));
            let grad = &g0 + &h * u;
            let mut moved = 0.0_f64;
            for (xi, gi) in x.iter_mut().zip(grad.iter()) {
                let next = (*xi + gi / radius).clamp(0.0, 1.0);
                moved = moved.max((next - *xi).abs());
                *xi = next;
            }
            if moved < 1e-12 {
                break;
            }
        }
        x
    }
}

/// The most projected-gradient steps [`QuadraticTrend::maximiser_in_unit_cube`]
/// takes (each costs one `D × D` product).
const MAXIMISER_STEPS: usize = 5_000;

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn points(n: usize, dim: usize, rng: &mut ChaCha8Rng) -> Vec<Vec<f64>> {
        (0..n)
            .map(|_| (0..dim).map(|_| rng.gen::<f64>()).collect())
            .collect()
    }

    /// A rotated, ill-conditioned bowl in raw coordinates (not in the
    /// features' basis): `(x − c)ᵀ A (x − c) + 3`.
    fn bowl(x: &[f64], a: &DMatrix<f64>, c: &[f64]) -> f64 {
        let d = DVector::from_iterator(x.len(), x.iter().zip(c).map(|(v, c)| v - c));
        (d.transpose() * a * &d)[(0, 0)] + 3.0
    }

    /// The count of distinct moments against an enumeration of the
    /// monomials that `φφᵀ` and `φz` actually produce (exponent vectors of
    /// every product of two features, and of each feature times `z`).
    #[test]
    fn the_moment_count_is_the_distinct_monomials_the_sums_hold() {
        for dim in 1..=6 {
            // Each feature's exponent vector, in quadratic_features' order.
            let mut features: Vec<Vec<u8>> = vec![vec![0; dim]];
            for i in 0..dim {
                let mut e = vec![0; dim];
                e[i] = 1;
                features.push(e);
            }
            for i in 0..dim {
                for j in i..dim {
                    let mut e = vec![0; dim];
                    e[i] += 1;
                    e[j] += 1;
                    features.push(e);
                }
            }
            assert_eq!(features.len(), quadratic_len(dim));
            let mut gram = std::collections::BTreeSet::new();
            for a in &features {
                for b in &features {
                    gram.insert(a.iter().zip(b).map(|(x, y)| x + y).collect::<Vec<u8>>());
                }
            }
            // Φᵀz's entries are distinct from the Gram's (they carry z).
            assert_eq!(
                gram.len() + features.len(),
                moment_equations(dim),
                "dim {dim}"
            );
        }
        assert_eq!(moment_equations(10), 1001 + 66);
        // The count is public: 1,000 Gram moments against 10 inputs a point
        // (100), and 1,066 with Φᵀz against 11 unknowns a point (97).
        assert_eq!(determinable_points(10), 100);
        assert_eq!(determinable_points(2), 7);
    }

    #[test]
    fn an_affine_trend_is_the_same_quadratic_in_other_units_and_unclamped() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let beta: Vec<f64> = (0..quadratic_len(3))
            .map(|_| rng.gen::<f64>() - 0.5)
            .collect();
        let trend = QuadraticTrend::new(3, beta)
            .unwrap()
            .clamped(-0.1, 0.1)
            .unwrap();
        let unclamped = QuadraticTrend::new(3, trend.weights().to_vec()).unwrap();
        let moved = trend.affine(-2.5, 7.0).unwrap();
        for x in points(20, 3, &mut rng) {
            let (v, g) = unclamped.value_and_gradient(&x);
            let (w, h) = moved.value_and_gradient(&x);
            assert!((w - (-2.5 * v + 7.0)).abs() < 1e-12, "{w} vs {v}");
            for (a, b) in h.iter().zip(&g) {
                assert!((a + 2.5 * b).abs() < 1e-12);
            }
        }
        assert!(trend.affine(f64::NAN, 0.0).is_err());
        assert!(trend.affine(1.0, f64::INFINITY).is_err());
    }

    #[test]
    fn the_feature_count_is_one_plus_d_plus_the_upper_triangle() {
        assert_eq!(quadratic_len(10), 66);
        assert_eq!(quadratic_len(2), 6);
        let mut phi = Vec::new();
        quadratic_features(&[0.75, 0.25], &mut phi);
        assert_eq!(phi, vec![1.0, 0.25, -0.25, 0.0625, -0.0625, 0.0625]);
        assert_eq!(TrendSums::packed_len(2), 21 + 6 + 1);
    }

    #[test]
    fn members_sums_add_up_to_the_pooled_sums_and_fit_the_pooled_least_squares() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let dim = 3;
        let xs = points(40, dim, &mut rng);
        let zs: Vec<f64> = xs
            .iter()
            .map(|x| x.iter().map(|v| (v * 7.0).sin()).sum::<f64>())
            .collect();
        let refs: Vec<&[f64]> = xs.iter().map(Vec::as_slice).collect();
        let pooled = TrendSums::from_data(dim, &refs, &zs, 50.0).unwrap();
        let a = TrendSums::from_data(dim, &refs[..15], &zs[..15], 50.0).unwrap();
        let b = TrendSums::from_data(dim, &refs[15..], &zs[15..], 50.0).unwrap();
        let summed: Vec<f64> = a
            .packed()
            .iter()
            .zip(b.packed())
            .map(|(x, y)| x + y)
            .collect();
        let summed = TrendSums::unpack(dim, &summed).unwrap();
        for (s, p) in summed.packed().iter().zip(pooled.packed()) {
            assert!((s - p).abs() < 1e-12);
        }
        assert!((summed.points(50.0) - 40.0).abs() < 1e-9);
        // Independent reference: least squares on the design matrix by SVD.
        let p = quadratic_len(dim);
        let mut phi = Vec::new();
        let design = DMatrix::from_fn(40, p, |r, c| {
            quadratic_features(&xs[r], &mut phi);
            phi[c]
        });
        let reference = design
            .clone()
            .svd(true, true)
            .solve(&DVector::from_vec(zs.clone()), 1e-14)
            .unwrap();
        let fitted = summed.fit(50.0, 20.0, 0.0).unwrap();
        for (f, r) in fitted.weights().iter().zip(reference.iter()) {
            assert!((f - r).abs() < 1e-8, "{f} vs {r}");
        }
        assert!(summed.fit(50.0, 41.0, 0.0).is_none(), "too few points");
    }

    #[test]
    fn a_rotated_ill_conditioned_bowl_is_recovered_with_its_minimiser_and_gradient() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let dim = 4;
        // A = Q diag(1, 10, 100, 1000) Qᵀ with Q from a random matrix.
        let q = DMatrix::from_fn(dim, dim, |_, _| rng.gen::<f64>() - 0.5)
            .qr()
            .q();
        let a = &q
            * DMatrix::from_diagonal(&DVector::from_vec(vec![1.0, 10.0, 100.0, 1000.0]))
            * q.transpose();
        let c = [0.3, 0.7, 0.55, 0.2];
        let xs = points(3 * quadratic_len(dim), dim, &mut rng);
        let zs: Vec<f64> = xs.iter().map(|x| bowl(x, &a, &c)).collect();
        let refs: Vec<&[f64]> = xs.iter().map(Vec::as_slice).collect();
        let trend = TrendSums::from_data(dim, &refs, &zs, 100.0)
            .unwrap()
            .fit(100.0, 1.0, 1e-14)
            .unwrap();
        let (at_min, grad) = trend.value_and_gradient(&c);
        assert!((at_min - 3.0).abs() < 1e-6, "{at_min}");
        assert!(grad.iter().all(|g| g.abs() < 1e-5), "{grad:?}");
        let probe = [0.9, 0.1, 0.4, 0.6];
        assert!((trend.value(&probe) - bowl(&probe, &a, &c)).abs() < 1e-6);
        // The gradient against central differences.
        let (_, g) = trend.value_and_gradient(&probe);
        for i in 0..dim {
            let (mut up, mut down) = (probe, probe);
            up[i] += 1e-6;
            down[i] -= 1e-6;
            let fd = (trend.value(&up) - trend.value(&down)) / 2e-6;
            assert!(
                (fd - g[i]).abs() < 1e-4 * (1.0 + fd.abs()),
                "{fd} vs {}",
                g[i]
            );
        }
    }

    #[test]
    fn the_maximiser_is_the_bowls_centre_inside_the_cube_and_the_box_maximum_outside() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let dim = 2;
        let q = DMatrix::from_fn(dim, dim, |_, _| rng.gen::<f64>() - 0.5)
            .qr()
            .q();
        let a = &q * DMatrix::from_diagonal(&DVector::from_vec(vec![1.0, 300.0])) * q.transpose();
        for c in [[0.3, 0.8], [1.4, -0.2]] {
            let xs = points(3 * quadratic_len(dim), dim, &mut rng);
            // The trend of the utility −bowl, whose maximum is the bowl's minimum.
            let zs: Vec<f64> = xs.iter().map(|x| -bowl(x, &a, &c)).collect();
            let refs: Vec<&[f64]> = xs.iter().map(Vec::as_slice).collect();
            let trend = TrendSums::from_data(dim, &refs, &zs, 1.0)
                .unwrap()
                .fit(1.0, 1.0, 1e-14)
                .unwrap();
            let found = trend.maximiser_in_unit_cube();
            // The reference: the best point of a fine grid of the cube.
            let steps = 400;
            let mut best = (f64::NEG_INFINITY, vec![0.0; 2]);
            for i in 0..=steps {
                for j in 0..=steps {
                    let x = vec![i as f64 / steps as f64, j as f64 / steps as f64];
                    let v = -bowl(&x, &a, &c);
                    if v > best.0 {
                        best = (v, x);
                    }
                }
            }
            let v = -bowl(&found, &a, &c);
            assert!(found.iter().all(|x| (0.0..=1.0).contains(x)), "{found:?}");
            assert!(
                v >= best.0 - 1e-6,
                "{c:?}: {found:?} ({v}) vs grid {:?}",
                best
            );
        }
    }

    /// Why `global_trend = "quadratic"` is simulation-only (SECURITY.md): the sums are
    /// cumulative, so two fits' decrypted totals differ by the added points'
    /// terms, and one added point's input and value come straight out of
    /// the difference (its `φ` is the Gram matrix's first row, its `z` the
    /// first entry of `Φᵀz`).
    #[test]
    fn the_difference_of_two_fits_sums_reveals_a_point_added_in_between() {
        let mut rng = ChaCha8Rng::seed_from_u64(13);
        let dim = 3;
        let xs = points(20, dim, &mut rng);
        let zs: Vec<f64> = (0..21).map(|_| rng.gen::<f64>()).collect();
        let added = [0.2, 0.9, 0.45];
        let before: Vec<&[f64]> = xs.iter().map(Vec::as_slice).collect();
        let mut after = before.clone();
        after.push(&added);
        let scale = 54.0;
        let a = TrendSums::from_data(dim, &before, &zs[..20], scale).unwrap();
        let b = TrendSums::from_data(dim, &after, &zs, scale).unwrap();
        let diff: Vec<f64> = b
            .packed()
            .iter()
            .zip(a.packed())
            .map(|(y, x)| (y - x) * scale)
            .collect();
        let p = quadratic_len(dim);
        for (i, v) in added.iter().enumerate() {
            assert!((diff[1 + i] + 0.5 - v).abs() < 1e-12, "input {i}");
        }
        let rhs = p * (p + 1) / 2;
        assert!((diff[rhs] - zs[20]).abs() < 1e-12, "value");
    }

    #[test]
    fn a_clamped_trend_holds_at_its_bounds_with_zero_gradient() {
        let trend = QuadraticTrend::new(1, vec![0.0, 0.0, -100.0])
            .unwrap()
            .clamped(-1.0, 1.0)
            .unwrap();
        assert_eq!(trend.value_and_gradient(&[0.5]), (0.0, vec![0.0]));
        assert_eq!(trend.value_and_gradient(&[1.0]), (-1.0, vec![0.0]));
        let (v, g) = trend.value_and_gradient(&[0.55]);
        assert!((v + 0.25).abs() < 1e-12 && (g[0] + 10.0).abs() < 1e-9);
        assert!(QuadraticTrend::new(1, vec![0.0, 0.0]).is_err());
        assert!(QuadraticTrend::new(1, vec![0.0; 3])
            .unwrap()
            .clamped(1.0, -1.0)
            .is_err());
    }

    #[test]
    fn bad_sums_are_refused_naming_what_was_wrong() {
        let err = TrendSums::unpack(2, &[0.0; 5]).unwrap_err().to_string();
        assert!(err.contains("packed trend sums length"), "{err}");
        let mut nan = vec![0.0; TrendSums::packed_len(2)];
        nan[3] = f64::NAN;
        assert!(TrendSums::unpack(2, &nan).is_err());
        let x = [0.5, 0.5];
        assert!(TrendSums::from_data(2, &[&x], &[1.0, 2.0], 1.0).is_err());
        assert!(TrendSums::from_data(2, &[&x[..1]], &[1.0], 1.0).is_err());
        assert!(TrendSums::from_data(2, &[&x], &[1.0], 0.0).is_err());
    }
}
