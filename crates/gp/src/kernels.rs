//! Stationary covariance functions with ARD length-scales.
//!
//! Both kernels are radial in the scaled distance
//! `r² = Σ_d (x_d − y_d)² / ℓ_d²` and are written `k(x, y) = σ² g(r²)` with a
//! *profile* `g`. The gradients every caller needs (with respect to log
//! length-scales, log signal variance and the input `x`) follow from `g` and its
//! derivative `g'(r²)` by the chain rule, so a new kernel only supplies the profile
//! and its spectral density.

use crate::error::check_positive;
use crate::GpError;
use nalgebra::{DMatrix, DVector};
use rand::Rng;
use rand_distr::{ChiSquared, Distribution, StandardNormal};

/// ARD length-scales `ℓ_1..ℓ_D` and signal variance `σ²`.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelParams {
    lengthscales: Vec<f64>,
    signal_variance: f64,
}

impl KernelParams {
    /// Validated parameters: every length-scale and the variance finite and positive.
    pub fn new(lengthscales: Vec<f64>, signal_variance: f64) -> Result<Self, GpError> {
        if lengthscales.is_empty() {
            return Err(GpError::Empty {
                what: "length-scales",
            });
        }
        for &l in &lengthscales {
            check_positive("length-scale", l)?;
        }
        check_positive("signal variance", signal_variance)?;
        Ok(Self {
            lengthscales,
            signal_variance,
        })
    }

    /// The same length-scale `ℓ` in every one of `dim` dimensions.
    pub fn isotropic(dim: usize, lengthscale: f64, signal_variance: f64) -> Result<Self, GpError> {
        Self::new(vec![lengthscale; dim], signal_variance)
    }

    /// The ARD length-scales.
    pub fn lengthscales(&self) -> &[f64] {
        &self.lengthscales
    }

    /// The signal variance `σ² = k(x, x)`.
    pub fn signal_variance(&self) -> f64 {
        self.signal_variance
    }

    /// The input dimension `D`.
    pub fn dim(&self) -> usize {
        self.lengthscales.len()
    }

    /// `[log ℓ_1, …, log ℓ_D, log σ²]`, the coordinates the optimiser works in.
    pub fn to_log(&self) -> Vec<f64> {
        self.lengthscales
            .iter()
            .map(|l| l.ln())
            .chain(std::iter::once(self.signal_variance.ln()))
            .collect()
    }

    /// Inverse of [`KernelParams::to_log`].
    pub fn from_log(log: &[f64]) -> Result<Self, GpError> {
        let (ls, var) = log.split_at(log.len().saturating_sub(1));
        Self::new(
            ls.iter().map(|v| v.exp()).collect(),
            var.first().map_or(f64::NAN, |v| v.exp()),
        )
    }
}

/// A stationary kernel `k(x, y) = σ² g(r²)` with ARD scaled distance `r²`.
pub trait Kernel: Clone + std::fmt::Debug + Send + Sync {
    /// The kernel's hyper-parameters.
    fn params(&self) -> &KernelParams;

    /// The same kernel family with other hyper-parameters.
    fn with_params(&self, params: KernelParams) -> Self;

    /// The profile `g(r²)`, with `g(0) = 1`.
    fn profile(&self, r2: f64) -> f64;

    /// The derivative `dg/d(r²)`.
    fn profile_derivative(&self, r2: f64) -> f64;

    /// One frequency from the kernel's normalised spectral density (length-scales
    /// one): by Bochner's theorem `g(r²) = E_ω[cos(ωᵀ(x − y))]` for `ω` drawn here
    /// and the inputs divided by the length-scales.
    fn sample_frequency<R: Rng + ?Sized>(&self, rng: &mut R) -> DVector<f64>;

    /// The input dimension `D`.
    fn dim(&self) -> usize {
        self.params().dim()
    }

    /// The signal variance `σ²`.
    fn signal_variance(&self) -> f64 {
        self.params().signal_variance()
    }

    /// `r² = Σ_d (x_d − y_d)² / ℓ_d²`.
    fn scaled_sq_dist(&self, x: &[f64], y: &[f64]) -> f64 {
        x.iter()
            .zip(y)
            .zip(self.params().lengthscales())
            .map(|((a, b), l)| ((a - b) / l).powi(2))
            .sum()
    }

    /// `k(x, y)`.
    fn eval(&self, x: &[f64], y: &[f64]) -> f64 {
        self.signal_variance() * self.profile(self.scaled_sq_dist(x, y))
    }

    /// The cross-covariance matrix `[k(a_i, b_j)]` for points in the rows of `a`, `b`.
    fn cross(&self, a: &DMatrix<f64>, b: &DMatrix<f64>) -> DMatrix<f64> {
        let ra = rows(a);
        let rb = rows(b);
        DMatrix::from_fn(a.nrows(), b.nrows(), |i, j| self.eval(&ra[i], &rb[j]))
    }

    /// The Gram matrix `[k(a_i, a_j)]`, exactly symmetric.
    fn gram(&self, a: &DMatrix<f64>) -> DMatrix<f64> {
        let ra = rows(a);
        let n = a.nrows();
        let mut k = DMatrix::zeros(n, n);
        for i in 0..n {
            for j in 0..=i {
                let v = self.eval(&ra[i], &ra[j]);
                k[(i, j)] = v;
                k[(j, i)] = v;
            }
        }
        k
    }

    /// `∂k(x, y)/∂x = σ² g'(r²) · 2 (x − y) / ℓ²`.
    fn grad_x(&self, x: &[f64], y: &[f64]) -> Vec<f64> {
        let p = self.params();
        let scale = 2.0 * p.signal_variance() * self.profile_derivative(self.scaled_sq_dist(x, y));
        x.iter()
            .zip(y)
            .zip(p.lengthscales())
            .map(|((a, b), l)| scale * (a - b) / (l * l))
            .collect()
    }

    /// Gradients of the Gram matrix with respect to `[log ℓ_1..log ℓ_D, log σ²]`:
    ///
    /// `∂K/∂log ℓ_d = σ² g'(r²) · (−2 (x_d − y_d)² / ℓ_d²)`, `∂K/∂log σ² = K`.
    fn gram_log_gradients(&self, a: &DMatrix<f64>) -> Vec<DMatrix<f64>> {
        let p = self.params();
        let n = a.nrows();
        let dim = p.dim();
        let ra = rows(a);
        let mut grads = vec![DMatrix::zeros(n, n); dim + 1];
        for i in 0..n {
            for j in 0..=i {
                let r2 = self.scaled_sq_dist(&ra[i], &ra[j]);
                let g = self.profile(r2);
                let dg = self.profile_derivative(r2);
                for (d, l) in p.lengthscales().iter().enumerate() {
                    let t = (ra[i][d] - ra[j][d]) / l;
                    let v = p.signal_variance() * dg * (-2.0 * t * t);
                    grads[d][(i, j)] = v;
                    grads[d][(j, i)] = v;
                }
                let v = p.signal_variance() * g;
                grads[dim][(i, j)] = v;
                grads[dim][(j, i)] = v;
            }
        }
        grads
    }
}

/// The rows of `a` as contiguous vectors (nalgebra stores columns contiguously).
pub fn rows(a: &DMatrix<f64>) -> Vec<Vec<f64>> {
    a.row_iter().map(|r| r.iter().copied().collect()).collect()
}

/// Squared exponential `k(x, y) = σ² exp(−r²/2)` (scikit-learn `RBF`).
#[derive(Debug, Clone, PartialEq)]
pub struct SquaredExponential {
    params: KernelParams,
}

impl SquaredExponential {
    /// The SE kernel with the given hyper-parameters.
    pub fn new(params: KernelParams) -> Self {
        Self { params }
    }
}

impl Kernel for SquaredExponential {
    fn params(&self) -> &KernelParams {
        &self.params
    }
    fn with_params(&self, params: KernelParams) -> Self {
        Self::new(params)
    }
    fn profile(&self, r2: f64) -> f64 {
        (-0.5 * r2).exp()
    }
    fn profile_derivative(&self, r2: f64) -> f64 {
        -0.5 * (-0.5 * r2).exp()
    }
    /// The SE spectral density is the standard normal `N(0, I)`.
    fn sample_frequency<R: Rng + ?Sized>(&self, rng: &mut R) -> DVector<f64> {
        DVector::from_fn(self.dim(), |_, _| StandardNormal.sample(rng))
    }
}

/// Matérn 5/2 `k(x, y) = σ² (1 + √5 r + 5r²/3) exp(−√5 r)` (scikit-learn `Matern(nu=2.5)`).
#[derive(Debug, Clone, PartialEq)]
pub struct Matern52 {
    params: KernelParams,
}

impl Matern52 {
    /// The Matérn 5/2 kernel with the given hyper-parameters.
    pub fn new(params: KernelParams) -> Self {
        Self { params }
    }
}

const SQRT5: f64 = 2.236_067_977_499_79;

impl Kernel for Matern52 {
    fn params(&self) -> &KernelParams {
        &self.params
    }
    fn with_params(&self, params: KernelParams) -> Self {
        Self::new(params)
    }
    fn profile(&self, r2: f64) -> f64 {
        let r = r2.sqrt();
        (1.0 + SQRT5 * r + 5.0 * r2 / 3.0) * (-SQRT5 * r).exp()
    }
    /// `dg/dr = −(5/3) r (1 + √5 r) e^{−√5 r}`, so `dg/d(r²) = dg/dr / (2r)
    /// = −(5/6)(1 + √5 r) e^{−√5 r}`, finite at `r = 0`.
    fn profile_derivative(&self, r2: f64) -> f64 {
        let r = r2.sqrt();
        -(5.0 / 6.0) * (1.0 + SQRT5 * r) * (-SQRT5 * r).exp()
    }
    /// The Matérn-ν spectral density is a multivariate Student t with `2ν = 5`
    /// degrees of freedom: `ω = z / √(u/5)`, `z ~ N(0, I)`, `u ~ χ²_5`.
    fn sample_frequency<R: Rng + ?Sized>(&self, rng: &mut R) -> DVector<f64> {
        let chi = ChiSquared::new(5.0).expect("5 degrees of freedom is valid");
        let u: f64 = chi.sample(rng);
        let scale = (5.0 / u).sqrt();
        DVector::from_fn(self.dim(), |_, _| {
            let z: f64 = StandardNormal.sample(rng);
            z * scale
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn se() -> SquaredExponential {
        SquaredExponential::new(KernelParams::new(vec![0.7, 1.3], 2.0).unwrap())
    }
    fn m52() -> Matern52 {
        Matern52::new(KernelParams::new(vec![0.7, 1.3], 2.0).unwrap())
    }

    #[test]
    fn se_matches_closed_form() {
        // r² = (0.7/0.7)² + (1.3/1.3)² = 2, k = 2 exp(-1).
        let k = se().eval(&[0.7, 1.3], &[0.0, 0.0]);
        assert!((k - 2.0 * (-1.0f64).exp()).abs() < 1e-15);
    }

    #[test]
    fn matern_matches_closed_form() {
        // r = 1: (1 + √5 + 5/3) e^{-√5}.
        let k = m52().eval(&[0.7, 0.0], &[0.0, 0.0]);
        let want = 2.0 * (1.0 + 5f64.sqrt() + 5.0 / 3.0) * (-(5f64.sqrt())).exp();
        assert!((k - want).abs() < 1e-15);
    }

    #[test]
    fn invalid_params_are_rejected() {
        assert!(KernelParams::new(vec![1.0, 0.0], 1.0).is_err());
        assert!(KernelParams::new(vec![1.0], f64::NAN).is_err());
        assert!(KernelParams::new(vec![], 1.0).is_err());
    }

    fn check_gradients<K: Kernel>(k: &K) {
        let x = DMatrix::from_row_slice(3, 2, &[0.1, 0.2, 0.5, -0.3, 1.0, 0.9]);
        let grads = k.gram_log_gradients(&x);
        let log = k.params().to_log();
        let h = 1e-6;
        for (p, g) in grads.iter().enumerate() {
            let mut up = log.clone();
            up[p] += h;
            let mut dn = log.clone();
            dn[p] -= h;
            let kp = k.with_params(KernelParams::from_log(&up).unwrap()).gram(&x);
            let km = k.with_params(KernelParams::from_log(&dn).unwrap()).gram(&x);
            let fd = (kp - km) / (2.0 * h);
            assert!((fd - g).amax() < 1e-7, "parameter {p}");
        }
        let (a, b) = ([0.3, -0.2], [0.1, 0.4]);
        let gx = k.grad_x(&a, &b);
        for d in 0..2 {
            let mut up = a;
            up[d] += h;
            let mut dn = a;
            dn[d] -= h;
            let fd = (k.eval(&up, &b) - k.eval(&dn, &b)) / (2.0 * h);
            assert!((fd - gx[d]).abs() < 1e-7);
        }
    }

    #[test]
    fn analytic_gradients_match_finite_differences() {
        check_gradients(&se());
        check_gradients(&m52());
    }

    fn check_spectral<K: Kernel>(k: &K) {
        // Monte Carlo E[cos(ωᵀ δ)] must approach g(|δ|²) (Bochner).
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let delta = [0.4, -0.6];
        let n = 200_000;
        let mean: f64 = (0..n)
            .map(|_| {
                let w = k.sample_frequency(&mut rng);
                (w[0] * delta[0] + w[1] * delta[1]).cos()
            })
            .sum::<f64>()
            / n as f64;
        let want = k.profile(delta[0] * delta[0] + delta[1] * delta[1]);
        // Standard error ≤ 1/√(2n) ≈ 0.0016.
        assert!((mean - want).abs() < 0.01, "{mean} vs {want}");
    }

    #[test]
    fn spectral_samples_reproduce_the_kernel() {
        check_spectral(&se());
        check_spectral(&m52());
    }
}
