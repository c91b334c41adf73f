//! The exact GP posterior (paper 004, eq. 5) by Cholesky with jitter escalation.
//!
//! Built linfa-style: [`ExactGpParams`] holds the kernel, the noise variance and the
//! output-standardisation switch; [`ExactGpParams::fit`] validates them and the data
//! and returns the conditioned [`ExactGp`].

use crate::error::{check_finite, check_positive};
use crate::kernels::{rows, Kernel};
use crate::linalg::JitteredCholesky;
use crate::GpError;
use nalgebra::{DMatrix, DVector};
use rand::Rng;

/// The prior mean of an exact GP: a linear combination `h(x)ᵀβ` of fixed
/// basis functions whose weights are fitted by generalised least squares,
/// `β = (Hᵀ(K + σ_n² I)⁻¹H)⁻¹ Hᵀ(K + σ_n² I)⁻¹ y`, the maximiser of the
/// likelihood in `β` for the given kernel and noise (Rasmussen & Williams
/// 2006, §2.7, eq. 2.41 with a vague prior on `β`, `B⁻¹ → 0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MeanFunction {
    /// Zero (the default).
    #[default]
    Zero,
    /// A constant, `h(x) = 1` (GPyTorch's fitted `ConstantMean`, profiled out).
    Constant,
    /// An isotropic quadratic trend around the centre of the unit cube,
    /// `h(x) = (1, u_1, …, u_D, ‖u‖²)` with `u = x − ½`: a bowl of any centre
    /// and one curvature, `D + 2` weights. Fitted only from `D + 4` points
    /// on; with fewer, or a degenerate design, the fit falls back to a
    /// constant ([`ExactGp::mean_function`] says which was fitted).
    Quadratic,
}

impl MeanFunction {
    /// The number of basis functions in `dim` dimensions.
    pub fn basis_len(self, dim: usize) -> usize {
        match self {
            Self::Zero => 0,
            Self::Constant => 1,
            Self::Quadratic => dim + 2,
        }
    }

    /// The fewest training points a fit of this trend needs (more than its
    /// weights, so that the residual keeps some freedom).
    fn min_points(self, dim: usize) -> usize {
        match self {
            Self::Quadratic => dim + 4,
            other => other.basis_len(dim),
        }
    }

    /// `h(x)`, appended to `out` (cleared first).
    fn basis(self, x: &[f64], out: &mut Vec<f64>) {
        out.clear();
        match self {
            Self::Zero => {}
            Self::Constant => out.push(1.0),
            Self::Quadratic => {
                out.push(1.0);
                out.extend(x.iter().map(|v| v - 0.5));
                out.push(x.iter().map(|v| (v - 0.5) * (v - 0.5)).sum());
            }
        }
    }
}

/// Hyper-parameters of an exact GP, before it has seen data.
#[derive(Debug, Clone)]
pub struct ExactGpParams<K: Kernel> {
    kernel: K,
    noise_variance: f64,
    standardize: bool,
    mean: MeanFunction,
}

impl<K: Kernel> ExactGpParams<K> {
    /// A GP with the given kernel, noise variance 1e-6, no output
    /// standardisation and a zero prior mean.
    pub fn new(kernel: K) -> Self {
        Self {
            kernel,
            noise_variance: 1e-6,
            standardize: false,
            mean: MeanFunction::Zero,
        }
    }

    /// If true, the prior mean is a constant `m` (in standardised units)
    /// estimated from the data by generalised least squares,
    /// `m = 1ᵀ(K + σ_n² I)⁻¹y / 1ᵀ(K + σ_n² I)⁻¹1`, the maximiser of the
    /// likelihood in `m` for the given kernel and noise (GPyTorch's fitted
    /// `ConstantMean`, profiled out); if false (the default) it is zero.
    pub fn constant_mean(mut self, constant_mean: bool) -> Self {
        self.mean = if constant_mean {
            MeanFunction::Constant
        } else {
            MeanFunction::Zero
        };
        self
    }

    /// Whether the prior mean is a fitted constant.
    pub fn get_constant_mean(&self) -> bool {
        self.mean == MeanFunction::Constant
    }

    /// Sets the prior mean's basis ([`MeanFunction`]; its weights are
    /// fitted by generalised least squares).
    pub fn mean_function(mut self, mean: MeanFunction) -> Self {
        self.mean = mean;
        self
    }

    /// The prior mean's basis.
    pub fn get_mean_function(&self) -> MeanFunction {
        self.mean
    }

    /// Sets the Gaussian observation-noise variance `σ_n²`.
    pub fn noise_variance(mut self, noise_variance: f64) -> Self {
        self.noise_variance = noise_variance;
        self
    }

    /// If true, `y` is shifted to mean 0 and scaled to standard deviation 1 before
    /// conditioning (the kernel and noise then describe the standardised outputs),
    /// and predictions are mapped back to the original units.
    pub fn standardize(mut self, standardize: bool) -> Self {
        self.standardize = standardize;
        self
    }

    /// The kernel.
    pub fn kernel(&self) -> &K {
        &self.kernel
    }

    /// The noise variance.
    pub fn get_noise_variance(&self) -> f64 {
        self.noise_variance
    }

    /// Whether outputs are standardised.
    pub fn get_standardize(&self) -> bool {
        self.standardize
    }

    /// Conditions the GP on `x` (`n × D`, one point per row) and `y` (`n`).
    pub fn fit(&self, x: &DMatrix<f64>, y: &DVector<f64>) -> Result<ExactGp<K>, GpError> {
        check_positive("noise variance", self.noise_variance)?;
        let (offset, scale) = validate_data(self.kernel.dim(), x, y, self.standardize)?;
        let y_std = y.map(|v| (v - offset) / scale);
        let mut cov = self.kernel.gram(x);
        for i in 0..x.nrows() {
            cov[(i, i)] += self.noise_variance;
        }
        let chol = JitteredCholesky::new(&cov)?;
        let mut alpha = chol.solve_vec(&y_std);
        let mut prior_mean = 0.0;
        let mut trend = Vec::new();
        let mut fitted = MeanFunction::Zero;
        if self.mean == MeanFunction::Quadratic {
            if let Some((beta, a)) = gls_weights(MeanFunction::Quadratic, x, &chol, &alpha) {
                alpha -= a * DVector::from_column_slice(&beta);
                prior_mean = beta[0];
                trend = beta;
                fitted = MeanFunction::Quadratic;
            }
        }
        if self.mean != MeanFunction::Zero && fitted == MeanFunction::Zero {
            // The constant's closed form, kept as it was so that seeded
            // constant-mean runs do not move by a rounding.
            let ones = DVector::from_element(y_std.len(), 1.0);
            let a = chol.solve_vec(&ones);
            let denom = a.sum();
            if denom.is_finite() && denom > 0.0 {
                prior_mean = alpha.sum() / denom;
                alpha -= a * prior_mean;
                trend = vec![prior_mean];
                fitted = MeanFunction::Constant;
            }
        }
        Ok(ExactGp {
            params: self.clone(),
            x: x.clone(),
            y_std,
            offset,
            scale,
            prior_mean,
            mean: fitted,
            trend,
            chol,
            alpha,
        })
    }
}

/// The GLS weights `β = (HᵀA)⁻¹ Hᵀα₀` of `mean`'s basis `H` at the rows of
/// `x`, with `A = (K + σ_n² I)⁻¹H` (returned, to correct `α₀ = (K + σ_n²
/// I)⁻¹y`), or `None` when there are too few points or `HᵀA` is singular.
fn gls_weights(
    mean: MeanFunction,
    x: &DMatrix<f64>,
    chol: &JitteredCholesky,
    alpha0: &DVector<f64>,
) -> Option<(Vec<f64>, DMatrix<f64>)> {
    let (n, dim) = (x.nrows(), x.ncols());
    let p = mean.basis_len(dim);
    if p == 0 || n < mean.min_points(dim) {
        return None;
    }
    let mut h = DMatrix::zeros(n, p);
    let mut row = Vec::with_capacity(p);
    for i in 0..n {
        let xi: Vec<f64> = x.row(i).iter().copied().collect();
        mean.basis(&xi, &mut row);
        for (j, v) in row.iter().enumerate() {
            h[(i, j)] = *v;
        }
    }
    let a = chol.solve(&h);
    let m = h.transpose() * &a;
    let b = h.transpose() * alpha0;
    let beta = m.cholesky()?.solve(&b);
    beta.iter()
        .all(|v| v.is_finite())
        .then(|| (beta.iter().copied().collect(), a))
}

/// Checks shapes and finiteness; returns the output offset and scale.
pub(crate) fn validate_data(
    dim: usize,
    x: &DMatrix<f64>,
    y: &DVector<f64>,
    standardize: bool,
) -> Result<(f64, f64), GpError> {
    if x.nrows() == 0 {
        return Err(GpError::Empty {
            what: "training inputs",
        });
    }
    if x.ncols() != dim {
        return Err(GpError::Dimension {
            what: "training input columns vs kernel dimension",
            expected: dim,
            got: x.ncols(),
        });
    }
    if y.len() != x.nrows() {
        return Err(GpError::Dimension {
            what: "training outputs vs input rows",
            expected: x.nrows(),
            got: y.len(),
        });
    }
    check_finite("training inputs", x.iter())?;
    check_finite("training outputs", y.iter())?;
    if !standardize {
        return Ok((0.0, 1.0));
    }
    let n = y.len() as f64;
    let mean = y.sum() / n;
    let sd = (y.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt();
    // A constant output has no scale; keep it in its own units.
    Ok((mean, if sd > 0.0 { sd } else { 1.0 }))
}

/// Checks test inputs against the kernel dimension.
pub(crate) fn validate_test(dim: usize, xs: &DMatrix<f64>) -> Result<(), GpError> {
    if xs.ncols() != dim {
        return Err(GpError::Dimension {
            what: "test input columns vs kernel dimension",
            expected: dim,
            got: xs.ncols(),
        });
    }
    check_finite("test inputs", xs.iter())
}

/// An exact GP conditioned on data.
#[derive(Debug, Clone)]
pub struct ExactGp<K: Kernel> {
    params: ExactGpParams<K>,
    x: DMatrix<f64>,
    y_std: DVector<f64>,
    offset: f64,
    scale: f64,
    prior_mean: f64,
    /// The basis fitted (the one asked for, or a constant it fell back to).
    mean: MeanFunction,
    /// Its GLS weights `β` (standardised units).
    trend: Vec<f64>,
    chol: JitteredCholesky,
    alpha: DVector<f64>,
}

/// A point prediction with its gradient in `x`, for acquisition optimisation.
#[derive(Debug, Clone, PartialEq)]
pub struct PointPrediction {
    /// Posterior mean.
    pub mean: f64,
    /// Posterior variance of the latent `f`.
    pub variance: f64,
    /// `∂mean/∂x`.
    pub mean_grad: Vec<f64>,
    /// `∂variance/∂x`.
    pub variance_grad: Vec<f64>,
}

impl<K: Kernel> ExactGp<K> {
    /// The hyper-parameters the GP was fitted with.
    pub fn params(&self) -> &ExactGpParams<K> {
        &self.params
    }

    /// The training inputs.
    pub fn train_x(&self) -> &DMatrix<f64> {
        &self.x
    }

    /// The training outputs after standardisation.
    pub fn train_y_standardized(&self) -> &DVector<f64> {
        &self.y_std
    }

    /// `(offset, scale)` with `y = offset + scale · y_standardised`.
    pub fn output_transform(&self) -> (f64, f64) {
        (self.offset, self.scale)
    }

    /// The constant prior mean in standardised units (0 unless
    /// [`ExactGpParams::constant_mean`]); with a quadratic trend, its weight
    /// of `h_0 = 1`.
    pub fn prior_mean(&self) -> f64 {
        self.prior_mean
    }

    /// The prior mean's basis fitted: the one asked for, or
    /// [`MeanFunction::Constant`] where a quadratic trend had too few points.
    pub fn mean_function(&self) -> MeanFunction {
        self.mean
    }

    /// The prior mean's GLS weights `β` in standardised units (empty for a
    /// zero mean).
    pub fn trend_weights(&self) -> &[f64] {
        &self.trend
    }

    /// The prior mean `h(x)ᵀβ` at `x`, standardised units.
    fn mean_at(&self, x: &[f64]) -> f64 {
        match self.mean {
            MeanFunction::Quadratic => {
                let mut h = Vec::with_capacity(self.trend.len());
                self.mean.basis(x, &mut h);
                h.iter().zip(&self.trend).map(|(a, b)| a * b).sum()
            }
            _ => self.prior_mean,
        }
    }

    /// The prior mean at each row of `xs`.
    fn means_at(&self, xs: &DMatrix<f64>) -> DVector<f64> {
        DVector::from_fn(xs.nrows(), |i, _| {
            let xi: Vec<f64> = xs.row(i).iter().copied().collect();
            self.mean_at(&xi)
        })
    }

    /// The jitter the Cholesky factorisation needed (0 if none).
    pub fn jitter(&self) -> f64 {
        self.chol.jitter
    }

    /// Posterior mean and latent variance at the rows of `xs` (paper 004, eq. 5
    /// without the `σ²I` term, i.e. the variance of `f`, not of `y`):
    ///
    /// `μ = m + s·K_*ᵀ α`, `α = (K + σ_n² I)⁻¹ y`, `v = s² (k_** − ‖L⁻¹ K_*‖²)`.
    pub fn predict(&self, xs: &DMatrix<f64>) -> Result<(DVector<f64>, DVector<f64>), GpError> {
        validate_test(self.params.kernel.dim(), xs)?;
        let k = &self.params.kernel;
        let cross = k.cross(&self.x, xs);
        let mean = (cross.transpose() * &self.alpha + self.means_at(xs))
            .map(|m| self.offset + self.scale * m);
        let v = self.chol.solve_lower(&cross);
        let s2 = self.scale * self.scale;
        let var = DVector::from_fn(xs.nrows(), |j, _| {
            let reduction: f64 = v.column(j).norm_squared();
            (s2 * (k.signal_variance() - reduction)).max(0.0)
        });
        Ok((mean, var))
    }

    /// Posterior mean and joint covariance of the latent `f` at the rows of `xs`:
    /// `Σ = s² (K_** − K_*ᵀ (K + σ_n² I)⁻¹ K_*)`.
    pub fn predict_joint(
        &self,
        xs: &DMatrix<f64>,
    ) -> Result<(DVector<f64>, DMatrix<f64>), GpError> {
        validate_test(self.params.kernel.dim(), xs)?;
        let k = &self.params.kernel;
        let cross = k.cross(&self.x, xs);
        let mean = (cross.transpose() * &self.alpha + self.means_at(xs))
            .map(|m| self.offset + self.scale * m);
        let v = self.chol.solve_lower(&cross);
        let mut cov = k.gram(xs) - v.transpose() * v;
        cov *= self.scale * self.scale;
        // Restore exact symmetry lost to rounding.
        let cov = (&cov + cov.transpose()) * 0.5;
        Ok((mean, cov))
    }

    /// A joint sample of `f` at the rows of `xs` (Thompson sampling on a candidate set).
    pub fn sample_joint<R: Rng + ?Sized>(
        &self,
        xs: &DMatrix<f64>,
        rng: &mut R,
    ) -> Result<DVector<f64>, GpError> {
        let (mean, cov) = self.predict_joint(xs)?;
        crate::linalg::sample_gaussian(mean, &cov, rng)
    }

    /// Mean, latent variance and their gradients in `x` at one point.
    ///
    /// `∂μ/∂x = s Σ_i α_i ∂k(x, x_i)/∂x`, `∂v/∂x = −2 s² (∂k_*/∂x)ᵀ (K + σ_n² I)⁻¹ k_*`.
    pub fn predict_point(&self, x: &[f64]) -> Result<PointPrediction, GpError> {
        let xs = DMatrix::from_row_slice(1, x.len(), x);
        validate_test(self.params.kernel.dim(), &xs)?;
        let k = &self.params.kernel;
        let train = rows(&self.x);
        let kstar = DVector::from_fn(train.len(), |i, _| k.eval(x, &train[i]));
        let w = self.chol.solve_vec(&kstar);
        let dim = x.len();
        let mut mean_grad = vec![0.0; dim];
        let mut variance_grad = vec![0.0; dim];
        for (i, xi) in train.iter().enumerate() {
            let g = k.grad_x(x, xi);
            for d in 0..dim {
                mean_grad[d] += self.scale * self.alpha[i] * g[d];
                variance_grad[d] -= 2.0 * self.scale * self.scale * w[i] * g[d];
            }
        }
        if self.mean == MeanFunction::Quadratic {
            // ∂(h(x)ᵀβ)/∂x_d = β_{1+d} + 2 β_{D+1} (x_d − ½).
            let curvature = self.trend[dim + 1];
            for d in 0..dim {
                mean_grad[d] += self.scale * (self.trend[1 + d] + 2.0 * curvature * (x[d] - 0.5));
            }
        }
        let s2 = self.scale * self.scale;
        Ok(PointPrediction {
            mean: self.offset + self.scale * (self.mean_at(x) + kstar.dot(&self.alpha)),
            variance: (s2 * (k.signal_variance() - kstar.dot(&w))).max(0.0),
            mean_grad,
            variance_grad,
        })
    }

    /// The log marginal likelihood of the standardised outputs,
    /// `log p(y) = −½ (y − m)ᵀα − Σ log L_ii − (n/2) log 2π` (`m` the prior
    /// mean; with a fitted constant this is the profile likelihood, whose
    /// gradient in the kernel's parameters is the one at fixed `m`).
    pub fn log_marginal_likelihood(&self) -> f64 {
        let n = self.y_std.len() as f64;
        let residual = match self.mean {
            MeanFunction::Quadratic => &self.y_std - self.means_at(&self.x),
            _ => self.y_std.map(|v| v - self.prior_mean),
        };
        -0.5 * residual.dot(&self.alpha)
            - 0.5 * self.chol.log_det()
            - 0.5 * n * (2.0 * std::f64::consts::PI).ln()
    }

    /// The Cholesky factorisation of `K + σ_n² I` (standardised units).
    pub fn cholesky(&self) -> &JitteredCholesky {
        &self.chol
    }

    /// `α = (K + σ_n² I)⁻¹ (y − m)` (standardised units).
    pub fn alpha(&self) -> &DVector<f64> {
        &self.alpha
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::{KernelParams, SquaredExponential};

    fn data() -> (DMatrix<f64>, DVector<f64>) {
        let x = DMatrix::from_row_slice(4, 1, &[0.0, 0.3, 0.7, 1.0]);
        let y = DVector::from_vec(vec![0.1, 0.8, -0.4, 0.3]);
        (x, y)
    }

    fn params() -> ExactGpParams<SquaredExponential> {
        ExactGpParams::new(SquaredExponential::new(
            KernelParams::isotropic(1, 0.4, 1.5).unwrap(),
        ))
        .noise_variance(0.01)
    }

    #[test]
    fn one_point_posterior_is_the_scalar_formula() {
        // n = 1 at x0: μ(x) = k(x,x0) y0 / (σ² + σ_n²), v(x) = σ² − k(x,x0)²/(σ² + σ_n²).
        let x = DMatrix::from_row_slice(1, 1, &[0.2]);
        let y = DVector::from_vec(vec![2.0]);
        let gp = params().fit(&x, &y).unwrap();
        let (m, v) = gp.predict(&DMatrix::from_row_slice(1, 1, &[0.5])).unwrap();
        let k = 1.5 * (-0.5f64 * (0.3f64 / 0.4).powi(2)).exp();
        assert!((m[0] - k * 2.0 / 1.51).abs() < 1e-14);
        assert!((v[0] - (1.5 - k * k / 1.51)).abs() < 1e-14);
    }

    #[test]
    fn joint_covariance_diagonal_equals_marginal_variance() {
        let (x, y) = data();
        let gp = params().standardize(true).fit(&x, &y).unwrap();
        let xs = DMatrix::from_row_slice(3, 1, &[0.1, 0.5, 1.2]);
        let (m1, v) = gp.predict(&xs).unwrap();
        let (m2, c) = gp.predict_joint(&xs).unwrap();
        assert!((m1 - m2).amax() < 1e-12);
        assert!((c.diagonal() - v).amax() < 1e-12);
    }

    #[test]
    fn point_gradients_match_finite_differences() {
        let x = DMatrix::from_row_slice(3, 2, &[0.0, 0.1, 0.4, 0.9, 0.8, 0.3]);
        let y = DVector::from_vec(vec![0.3, -0.2, 0.5]);
        let kernel = crate::Matern52::new(KernelParams::new(vec![0.5, 0.8], 1.2).unwrap());
        let gp = ExactGpParams::new(kernel)
            .noise_variance(1e-3)
            .standardize(true)
            .fit(&x, &y)
            .unwrap();
        assert_point_gradients_match_finite_differences(&gp, [0.3, 0.4]);
    }

    /// `predict_point`'s mean and variance gradients at `at` against central
    /// differences.
    fn assert_point_gradients_match_finite_differences<K: Kernel>(gp: &ExactGp<K>, at: [f64; 2]) {
        let p = gp.predict_point(&at).unwrap();
        let h = 1e-6;
        for d in 0..2 {
            let (mut up, mut dn) = (at, at);
            up[d] += h;
            dn[d] -= h;
            let (pu, pd) = (
                gp.predict_point(&up).unwrap(),
                gp.predict_point(&dn).unwrap(),
            );
            assert!(((pu.mean - pd.mean) / (2.0 * h) - p.mean_grad[d]).abs() < 1e-6);
            assert!(((pu.variance - pd.variance) / (2.0 * h) - p.variance_grad[d]).abs() < 1e-6);
        }
    }

    #[test]
    fn constant_mean_is_the_gls_estimate_and_maximises_the_likelihood() {
        let (x, y) = data();
        let y = y.map(|v| v + 3.0);
        let gp = params().constant_mean(true).fit(&x, &y).unwrap();
        // m = 1ᵀK⁻¹y / 1ᵀK⁻¹1, computed here by a dense inverse.
        let mut k = params().kernel().gram(&x);
        for i in 0..4 {
            k[(i, i)] += 0.01;
        }
        let kinv = k.clone().try_inverse().unwrap();
        let ones = DVector::from_element(4, 1.0);
        let m = (ones.transpose() * &kinv * &y)[0] / (ones.transpose() * &kinv * &ones)[0];
        assert!(
            (gp.prior_mean() - m).abs() < 1e-9,
            "{} vs {m}",
            gp.prior_mean()
        );
        // The likelihood of y − c under a zero mean is largest at c = m.
        let lml_at = |c: f64| {
            params()
                .fit(&x, &y.map(|v| v - c))
                .unwrap()
                .log_marginal_likelihood()
        };
        let at_m = gp.log_marginal_likelihood();
        assert!((at_m - lml_at(m)).abs() < 1e-9);
        assert!(at_m > lml_at(m + 0.1) && at_m > lml_at(m - 0.1));
        // Far from the data the posterior mean reverts to m, not to 0.
        let (far, _) = gp.predict(&DMatrix::from_row_slice(1, 1, &[50.0])).unwrap();
        assert!((far[0] - m).abs() < 1e-9);
        let zero = params().fit(&x, &y).unwrap();
        assert_eq!(zero.prior_mean(), 0.0);
    }

    /// Eight points in 2-D of a bowl `3‖x − c‖² + 1` with `c = (0.7, 0.35)`
    /// plus a wiggle the trend cannot fit.
    fn bowl_data() -> (DMatrix<f64>, DVector<f64>) {
        let pts = [
            0.05, 0.1, 0.9, 0.2, 0.3, 0.8, 0.6, 0.5, 0.15, 0.55, 0.8, 0.9, 0.45, 0.05, 0.95, 0.6,
        ];
        let x = DMatrix::from_row_slice(8, 2, &pts);
        let y = DVector::from_fn(8, |i, _| {
            let (a, b): (f64, f64) = (x[(i, 0)], x[(i, 1)]);
            3.0 * ((a - 0.7).powi(2) + (b - 0.35).powi(2)) + 1.0 + 0.05 * (9.0 * a).sin()
        });
        (x, y)
    }

    fn params_2d() -> ExactGpParams<SquaredExponential> {
        ExactGpParams::new(SquaredExponential::new(
            KernelParams::isotropic(2, 0.3, 0.5).unwrap(),
        ))
        .noise_variance(1e-3)
        .mean_function(MeanFunction::Quadratic)
    }

    #[test]
    fn a_quadratic_trend_is_the_gls_estimate_maximises_the_likelihood_and_is_what_remains_far_away()
    {
        let (x, y) = bowl_data();
        let gp = params_2d().fit(&x, &y).unwrap();
        assert_eq!(gp.mean_function(), MeanFunction::Quadratic);
        // β = (HᵀK⁻¹H)⁻¹HᵀK⁻¹y by dense inverses, H written out by hand:
        // (1, x₁ − ½, x₂ − ½, (x₁ − ½)² + (x₂ − ½)²).
        let mut k = params_2d().kernel().gram(&x);
        for i in 0..8 {
            k[(i, i)] += 1e-3;
        }
        let kinv = k.try_inverse().unwrap();
        let h = DMatrix::from_fn(8, 4, |i, j| {
            let (a, b) = (x[(i, 0)] - 0.5, x[(i, 1)] - 0.5);
            [1.0, a, b, a * a + b * b][j]
        });
        let beta = (h.transpose() * &kinv * &h).try_inverse().unwrap() * h.transpose() * &kinv * &y;
        for (got, want) in gp.trend_weights().iter().zip(beta.iter()) {
            assert!((got - want).abs() < 1e-8, "{got} vs {want}");
        }
        // Close to the bowl's own weights: curvature 3, and the linear part
        // −6(c − ½), for the wiggle is small.
        assert!((beta[3] - 3.0).abs() < 0.5, "curvature {}", beta[3]);
        assert!((beta[1] + 6.0 * 0.2).abs() < 0.3 && (beta[2] - 6.0 * 0.15).abs() < 0.3);
        // The likelihood is that of y − Hβ under a zero mean, and lower at
        // any other weights.
        let lml_at = |b: &DVector<f64>| {
            params_2d()
                .mean_function(MeanFunction::Zero)
                .fit(&x, &(&y - &h * b))
                .unwrap()
                .log_marginal_likelihood()
        };
        let at_beta = gp.log_marginal_likelihood();
        assert!((at_beta - lml_at(&beta)).abs() < 1e-9);
        for j in 0..4 {
            for step in [-0.05, 0.05] {
                let mut moved = beta.clone();
                moved[j] += step;
                assert!(at_beta > lml_at(&moved), "weight {j} moved by {step}");
            }
        }
        // Far from the data the mean is the trend, in 2-D and at a point
        // outside the cube: h(x)ᵀβ.
        let far = [4.0, -3.0];
        let (m, _) = gp.predict(&DMatrix::from_row_slice(1, 2, &far)).unwrap();
        let trend = beta[0] + beta[1] * 3.5 + beta[2] * -3.5 + beta[3] * (3.5f64.powi(2) * 2.0);
        assert!(
            (m[0] - trend).abs() < 1e-6 * trend.abs(),
            "{} vs {trend}",
            m[0]
        );
        // predict, predict_joint and predict_point agree.
        let xs = DMatrix::from_row_slice(2, 2, &[0.2, 0.7, 0.65, 0.4]);
        let (m1, _) = gp.predict(&xs).unwrap();
        let (m2, _) = gp.predict_joint(&xs).unwrap();
        assert!((&m1 - &m2).amax() < 1e-12);
        assert!((gp.predict_point(&[0.65, 0.4]).unwrap().mean - m1[1]).abs() < 1e-12);
    }

    #[test]
    fn a_quadratic_trend_has_exact_point_gradients_and_falls_back_to_a_constant_on_few_points() {
        let (x, y) = bowl_data();
        let gp = params_2d().standardize(true).fit(&x, &y).unwrap();
        assert_point_gradients_match_finite_differences(&gp, [0.3, 0.75]);
        // D + 4 = 6 points are needed in 2-D: with 5 the fit is the constant's.
        let (x5, y5) = (x.rows(0, 5).into_owned(), y.rows(0, 5).into_owned());
        let few = params_2d().fit(&x5, &y5).unwrap();
        let constant = params_2d()
            .mean_function(MeanFunction::Constant)
            .fit(&x5, &y5)
            .unwrap();
        assert_eq!(few.mean_function(), MeanFunction::Constant);
        assert_eq!(few.trend_weights(), constant.trend_weights());
        assert_eq!(few.prior_mean(), constant.prior_mean());
        let six = params_2d()
            .fit(&x.rows(0, 6).into_owned(), &y.rows(0, 6).into_owned())
            .unwrap();
        assert_eq!(six.mean_function(), MeanFunction::Quadratic);
    }

    #[test]
    fn bad_inputs_are_errors() {
        let (x, y) = data();
        assert!(params().noise_variance(0.0).fit(&x, &y).is_err());
        let y_short = DVector::from_vec(vec![1.0]);
        assert!(matches!(
            params().fit(&x, &y_short),
            Err(GpError::Dimension { .. })
        ));
        let mut y_nan = y.clone();
        y_nan[1] = f64::NAN;
        assert!(matches!(
            params().fit(&x, &y_nan),
            Err(GpError::NonFinite { .. })
        ));
        let gp = params().fit(&x, &y).unwrap();
        assert!(gp.predict(&DMatrix::zeros(1, 2)).is_err());
    }
}
