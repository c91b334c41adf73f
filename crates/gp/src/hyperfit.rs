//! Log marginal likelihood, its analytic gradient in log-parameters, and
//! multi-start L-BFGS fitting of the hyper-parameters within bounds.
//!
//! The parameter vector is `θ = [log ℓ_1, …, log ℓ_D, log σ², log σ_n²]`.
//! argmin's L-BFGS is unconstrained, so the box `lo ≤ θ ≤ hi` is enforced by the
//! reparameterisation `θ = lo + (hi − lo)·sigmoid(u)`: every iterate is inside the
//! bounds, and the gradient picks up the factor `(hi − lo)·s(1 − s)`.

use crate::exact::{validate_data, ExactGpParams};
use crate::kernels::{Kernel, KernelParams};
use crate::{ExactGp, GpError};
use argmin::core::{CostFunction, Executor, Gradient, State};
use argmin::solver::linesearch::MoreThuenteLineSearch;
use argmin::solver::quasinewton::LBFGS;
use nalgebra::{DMatrix, DVector};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::Mutex;

/// The log marginal likelihood of `params` on `(x, y)` and its gradient with
/// respect to `θ = [log ℓ_1..log ℓ_D, log σ², log σ_n²]` (Rasmussen & Williams eq. 5.9):
///
/// `∂ log p(y)/∂θ_j = ½ tr((α αᵀ − (K + σ_n² I)⁻¹) ∂(K + σ_n² I)/∂θ_j)`,
/// with `∂/∂ log σ_n² = σ_n² I`. Outputs are standardised first if `params` says so.
pub fn log_marginal_likelihood_with_gradient<K: Kernel>(
    params: &ExactGpParams<K>,
    x: &DMatrix<f64>,
    y: &DVector<f64>,
) -> Result<(f64, Vec<f64>), GpError> {
    let gp = params.fit(x, y)?;
    let lml = gp.log_marginal_likelihood();
    let n = x.nrows();
    let alpha = gp.alpha();
    // W = α αᵀ − (K + σ_n² I)⁻¹; ∂ log p = ½ Σ_ij W_ij ∂K_ij (both symmetric).
    let w = alpha * alpha.transpose() - gp.cholesky().solve(&DMatrix::identity(n, n));
    let mut grad: Vec<f64> = params
        .kernel()
        .gram_log_gradients(x)
        .iter()
        .map(|dk| 0.5 * w.component_mul(dk).sum())
        .collect();
    grad.push(0.5 * params.get_noise_variance() * w.trace());
    Ok((lml, grad))
}

/// Bounds on the hyper-parameters (in natural units; the fit works in logs).
#[derive(Debug, Clone, PartialEq)]
pub struct HyperBounds {
    /// Bounds on every length-scale.
    pub lengthscale: (f64, f64),
    /// Bounds on the signal variance (equal bounds fix it).
    pub signal_variance: (f64, f64),
    /// Bounds on the noise variance.
    pub noise_variance: (f64, f64),
}

impl Default for HyperBounds {
    /// Bounds suited to inputs scaled to the unit cube and standardised outputs.
    fn default() -> Self {
        Self {
            lengthscale: (1e-2, 1e2),
            signal_variance: (1e-2, 1e2),
            noise_variance: (1e-6, 1.0),
        }
    }
}

/// A log-normal prior `p(v) = LogNormal(v; μ, σ)` on a positive
/// hyper-parameter `v`, as GPyTorch's `LogNormalPrior` (a density in `v`
/// itself, not in `log v`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogNormalPrior {
    /// `μ`, the mean of `log v`.
    pub loc: f64,
    /// `σ > 0`, the standard deviation of `log v`.
    pub scale: f64,
}

impl LogNormalPrior {
    /// The dimension-scaled length-scale prior of Hvarfner, Hellsten & Nardi
    /// (2024, "Vanilla Bayesian optimization performs great in high
    /// dimensions", §4, eq. 6): `ℓ_d ~ LogNormal(√2 + ½ log D, √3)`, BoTorch's
    /// default for inputs in the unit cube. Its median `√2·e^{…}` grows as `√D`.
    pub fn dim_scaled_lengthscale(dim: usize) -> Self {
        Self {
            loc: std::f64::consts::SQRT_2 + 0.5 * (dim.max(1) as f64).ln(),
            scale: 3f64.sqrt(),
        }
    }

    /// `log p(v)` at `θ = log v` and its derivative in `θ`:
    /// `log p = −θ − log(σ√(2π)) − (θ − μ)²/(2σ²)`, `d/dθ = −1 − (θ − μ)/σ²`.
    pub fn log_density_in_log_space(&self, theta: f64) -> (f64, f64) {
        let z = (theta - self.loc) / self.scale;
        let value = -theta - (self.scale * (2.0 * std::f64::consts::PI).sqrt()).ln() - 0.5 * z * z;
        (value, -1.0 - z / self.scale)
    }
}

/// Priors that turn the maximum-likelihood fit into a MAP fit: the log prior
/// is added to the log marginal likelihood.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HyperPrior {
    /// The prior on every length-scale.
    pub lengthscale: LogNormalPrior,
    /// An optional prior on the noise variance.
    pub noise_variance: Option<LogNormalPrior>,
}

impl HyperPrior {
    /// [`LogNormalPrior::dim_scaled_lengthscale`] on the length-scales, no
    /// prior on the noise (its box bounds it).
    pub fn dim_scaled(dim: usize) -> Self {
        Self {
            lengthscale: LogNormalPrior::dim_scaled_lengthscale(dim),
            noise_variance: None,
        }
    }

    /// `log p(θ)` and its gradient for `θ = [log ℓ_1..log ℓ_D, log σ², log σ_n²]`
    /// (no prior on `σ²`).
    pub fn log_prior(&self, theta: &[f64]) -> (f64, Vec<f64>) {
        let n = theta.len();
        let mut grad = vec![0.0; n];
        let mut value = 0.0;
        for (i, t) in theta.iter().enumerate().take(n.saturating_sub(2)) {
            let (v, g) = self.lengthscale.log_density_in_log_space(*t);
            value += v;
            grad[i] = g;
        }
        if let (Some(p), Some(t)) = (self.noise_variance, theta.last()) {
            let (v, g) = p.log_density_in_log_space(*t);
            value += v;
            grad[n - 1] = g;
        }
        (value, grad)
    }
}

/// Settings of the multi-start L-BFGS fit.
#[derive(Debug, Clone, PartialEq)]
pub struct FitConfig {
    /// Box on the hyper-parameters.
    pub bounds: HyperBounds,
    /// A prior for a MAP fit (`None`: maximum likelihood).
    pub prior: Option<HyperPrior>,
    /// Number of starts: the initial hyper-parameters (clamped into the box) and
    /// `n_starts − 1` log-uniform random draws.
    pub n_starts: usize,
    /// L-BFGS iterations per start.
    pub max_iters: u64,
    /// Seed of the random starts.
    pub seed: u64,
    /// Length-scales held at a value, `(coordinate, ℓ)`: the fit leaves
    /// them there (the box is that one value) instead of fitting them.
    pub held: Vec<(usize, f64)>,
}

impl Default for FitConfig {
    fn default() -> Self {
        Self {
            bounds: HyperBounds::default(),
            prior: None,
            n_starts: 5,
            max_iters: 100,
            seed: 0,
            held: Vec::new(),
        }
    }
}

impl FitConfig {
    /// Lower and upper bounds of `θ` (log space) for a `dim`-dimensional kernel.
    fn log_box(&self, dim: usize) -> Result<(Vec<f64>, Vec<f64>), GpError> {
        let b = &self.bounds;
        let mut lo = Vec::with_capacity(dim + 2);
        let mut hi = Vec::with_capacity(dim + 2);
        for (what, (l, h), count) in [
            ("length-scale", b.lengthscale, dim),
            ("signal variance", b.signal_variance, 1),
            ("noise variance", b.noise_variance, 1),
        ] {
            // `l == h` fixes the parameter (e.g. a unit signal variance).
            if !(l.is_finite() && h.is_finite() && l > 0.0 && l <= h) {
                return Err(GpError::Bounds {
                    what,
                    lower: l,
                    upper: h,
                });
            }
            for _ in 0..count {
                lo.push(l.ln());
                hi.push(h.ln());
            }
        }
        for &(d, l) in &self.held {
            if d >= dim || !(l.is_finite() && l > 0.0) {
                return Err(GpError::Bounds {
                    what: "held length-scale",
                    lower: l,
                    upper: l,
                });
            }
            lo[d] = l.ln();
            hi[d] = l.ln();
        }
        Ok((lo, hi))
    }
}

/// The last `(u, cost, gradient)` evaluated: argmin asks for the cost and the
/// gradient at the same point separately, and each costs an `O(n³)` factorisation.
type Memo = Mutex<Option<(DVector<f64>, f64, DVector<f64>)>>;

/// `−log p(y)` as a function of the unconstrained `u`.
struct NegLogLikelihood<'a, K: Kernel> {
    base: &'a ExactGpParams<K>,
    x: &'a DMatrix<f64>,
    y: &'a DVector<f64>,
    lo: Vec<f64>,
    hi: Vec<f64>,
    prior: Option<HyperPrior>,
    memo: Memo,
}

impl<K: Kernel> Clone for NegLogLikelihood<'_, K> {
    fn clone(&self) -> Self {
        Self {
            base: self.base,
            x: self.x,
            y: self.y,
            lo: self.lo.clone(),
            hi: self.hi.clone(),
            prior: self.prior,
            memo: Mutex::new(None),
        }
    }
}

fn sigmoid(u: f64) -> f64 {
    1.0 / (1.0 + (-u).exp())
}

impl<K: Kernel> NegLogLikelihood<'_, K> {
    fn theta(&self, u: &DVector<f64>) -> Vec<f64> {
        u.iter()
            .zip(self.lo.iter().zip(&self.hi))
            .map(|(u, (lo, hi))| lo + (hi - lo) * sigmoid(*u))
            .collect()
    }

    fn u_of_theta(&self, theta: &[f64]) -> DVector<f64> {
        DVector::from_iterator(
            theta.len(),
            theta
                .iter()
                .zip(self.lo.iter().zip(&self.hi))
                .map(|(t, (lo, hi))| {
                    if hi <= lo {
                        return 0.0;
                    }
                    let s = ((t - lo) / (hi - lo)).clamp(1e-6, 1.0 - 1e-6);
                    (s / (1.0 - s)).ln()
                }),
        )
    }

    fn params_at(&self, theta: &[f64]) -> Result<ExactGpParams<K>, GpError> {
        let dim = theta.len() - 1;
        let kernel = self
            .base
            .kernel()
            .with_params(KernelParams::from_log(&theta[..dim])?);
        Ok(ExactGpParams::new(kernel)
            .noise_variance(theta[dim].exp())
            .standardize(self.base.get_standardize())
            .mean_function(self.base.get_mean_function()))
    }

    fn eval(&self, u: &DVector<f64>) -> Result<(f64, DVector<f64>), GpError> {
        let mut memo = self
            .memo
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((mu, cost, grad)) = memo.as_ref() {
            if mu == u {
                return Ok((*cost, grad.clone()));
            }
        }
        let (cost, grad) = self.eval_uncached(u)?;
        *memo = Some((u.clone(), cost, grad.clone()));
        Ok((cost, grad))
    }

    fn eval_uncached(&self, u: &DVector<f64>) -> Result<(f64, DVector<f64>), GpError> {
        let theta = self.theta(u);
        let (mut lml, mut grad) =
            log_marginal_likelihood_with_gradient(&self.params_at(&theta)?, self.x, self.y)?;
        if let Some(prior) = &self.prior {
            let (lp, g) = prior.log_prior(&theta);
            lml += lp;
            for (a, b) in grad.iter_mut().zip(g) {
                *a += b;
            }
        }
        let du = DVector::from_fn(u.len(), |i, _| {
            let s = sigmoid(u[i]);
            -grad[i] * (self.hi[i] - self.lo[i]) * s * (1.0 - s)
        });
        Ok((-lml, du))
    }
}

impl<K: Kernel> CostFunction for NegLogLikelihood<'_, K> {
    type Param = DVector<f64>;
    type Output = f64;
    fn cost(&self, u: &Self::Param) -> Result<f64, argmin::core::Error> {
        Ok(self.eval(u)?.0)
    }
}

impl<K: Kernel> Gradient for NegLogLikelihood<'_, K> {
    type Param = DVector<f64>;
    type Gradient = DVector<f64>;
    fn gradient(&self, u: &Self::Param) -> Result<DVector<f64>, argmin::core::Error> {
        Ok(self.eval(u)?.1)
    }
}

/// Fits the kernel hyper-parameters and noise variance of `params` by maximising
/// the log marginal likelihood (plus `config.prior`'s log density, if any: a
/// MAP fit) with multi-start L-BFGS inside `config.bounds`,
/// and returns the GP conditioned with the best hyper-parameters found.
pub fn fit_hyperparameters<K: Kernel>(
    params: &ExactGpParams<K>,
    x: &DMatrix<f64>,
    y: &DVector<f64>,
    config: &FitConfig,
) -> Result<ExactGp<K>, GpError> {
    let dim = params.kernel().dim();
    validate_data(dim, x, y, params.get_standardize())?;
    let (lo, hi) = config.log_box(dim)?;
    let problem = NegLogLikelihood {
        base: params,
        x,
        y,
        lo: lo.clone(),
        hi: hi.clone(),
        prior: config.prior,
        memo: Mutex::new(None),
    };
    let mut initial = params.kernel().params().to_log();
    initial.push(params.get_noise_variance().ln());
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
    let mut starts = vec![problem.u_of_theta(&initial)];
    for _ in 1..config.n_starts.max(1) {
        let theta: Vec<f64> = lo
            .iter()
            .zip(&hi)
            .map(|(l, h)| if l < h { rng.gen_range(*l..*h) } else { *l })
            .collect();
        starts.push(problem.u_of_theta(&theta));
    }

    let mut best: Option<(f64, DVector<f64>)> = None;
    let mut last_error = String::from("no start converged");
    for u0 in starts {
        // A start whose initial point already fails is skipped, not fatal.
        let start_cost = match problem.eval(&u0) {
            Ok((c, _)) => c,
            Err(e) => {
                last_error = e.to_string();
                continue;
            }
        };
        let solver = LBFGS::new(MoreThuenteLineSearch::new(), 7);
        let run = Executor::new(problem.clone(), solver)
            .configure(|s| s.param(u0.clone()).max_iters(config.max_iters))
            .run();
        let (cost, u) = match run {
            Ok(res) => {
                let state = res.state();
                match state.get_best_param() {
                    Some(u) => (state.get_best_cost(), u.clone()),
                    None => (start_cost, u0),
                }
            }
            Err(e) => {
                last_error = e.to_string();
                (start_cost, u0)
            }
        };
        if cost.is_finite() && best.as_ref().is_none_or(|(c, _)| cost < *c) {
            best = Some((cost, u));
        }
    }
    let (_, u) = best.ok_or(GpError::Optimisation(last_error))?;
    problem.params_at(&problem.theta(&u))?.fit(x, y)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::{Matern52, SquaredExponential};

    fn data(seed: u64, n: usize) -> (DMatrix<f64>, DVector<f64>) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let x = DMatrix::from_fn(n, 2, |_, _| rng.gen_range(0.0..1.0));
        let y = DVector::from_fn(n, |i, _| {
            (6.0_f64 * x[(i, 0)]).sin() + 0.5 * x[(i, 1)] + 0.05 * rng.gen_range(-1.0..1.0)
        });
        (x, y)
    }

    fn check_gradient<K: Kernel>(kernel: K) {
        let (x, y) = data(1, 12);
        let params = ExactGpParams::new(kernel.clone())
            .noise_variance(0.02)
            .standardize(true);
        let (_, grad) = log_marginal_likelihood_with_gradient(&params, &x, &y).unwrap();
        let mut theta = kernel.params().to_log();
        theta.push(0.02f64.ln());
        let h = 1e-5;
        let lml_at = |t: &[f64]| {
            let d = t.len() - 1;
            let p =
                ExactGpParams::new(kernel.with_params(KernelParams::from_log(&t[..d]).unwrap()))
                    .noise_variance(t[d].exp())
                    .standardize(true);
            p.fit(&x, &y).unwrap().log_marginal_likelihood()
        };
        for j in 0..theta.len() {
            let mut up = theta.clone();
            up[j] += h;
            let mut dn = theta.clone();
            dn[j] -= h;
            let fd = (lml_at(&up) - lml_at(&dn)) / (2.0 * h);
            assert!(
                (fd - grad[j]).abs() < 1e-6 * (1.0 + fd.abs()),
                "θ_{j}: {fd} vs {}",
                grad[j]
            );
        }
    }

    #[test]
    fn lml_gradient_matches_finite_differences() {
        let p = KernelParams::new(vec![0.3, 0.9], 1.4).unwrap();
        check_gradient(SquaredExponential::new(p.clone()));
        check_gradient(Matern52::new(p));
    }

    #[test]
    fn lml_of_one_point_is_the_normal_log_density() {
        // n = 1: log N(y; 0, σ² + σ_n²).
        let x = DMatrix::from_row_slice(1, 1, &[0.3]);
        let y = DVector::from_vec(vec![1.7]);
        let p = ExactGpParams::new(SquaredExponential::new(
            KernelParams::isotropic(1, 1.0, 2.0).unwrap(),
        ))
        .noise_variance(0.5);
        let lml = p.fit(&x, &y).unwrap().log_marginal_likelihood();
        let v: f64 = 2.5;
        let want = -0.5 * 1.7 * 1.7 / v - 0.5 * (2.0 * std::f64::consts::PI * v).ln();
        assert!((lml - want).abs() < 1e-14);
    }

    #[test]
    fn fit_improves_likelihood_stays_in_bounds_and_is_deterministic() {
        let (x, y) = data(2, 30);
        let start = ExactGpParams::new(SquaredExponential::new(
            KernelParams::isotropic(2, 5.0, 1.0).unwrap(),
        ))
        .noise_variance(0.5)
        .standardize(true);
        let config = FitConfig {
            n_starts: 3,
            max_iters: 50,
            seed: 11,
            ..FitConfig::default()
        };
        let before = start.fit(&x, &y).unwrap().log_marginal_likelihood();
        let fitted = fit_hyperparameters(&start, &x, &y, &config).unwrap();
        let after = fitted.log_marginal_likelihood();
        assert!(after > before + 1.0, "{before} -> {after}");
        let kp = fitted.params().kernel().params();
        let b = &config.bounds;
        for l in kp.lengthscales() {
            assert!(*l >= b.lengthscale.0 && *l <= b.lengthscale.1);
        }
        let nv = fitted.params().get_noise_variance();
        assert!(nv >= b.noise_variance.0 && nv <= b.noise_variance.1);
        // The optimum is stationary: the LML gradient in θ is small unless at a bound.
        let (_, grad) = log_marginal_likelihood_with_gradient(fitted.params(), &x, &y).unwrap();
        let mut theta = kp.to_log();
        theta.push(nv.ln());
        let (lo, hi) = config.log_box(2).unwrap();
        for j in 0..theta.len() {
            let at_bound = theta[j] - lo[j] < 1e-3 || hi[j] - theta[j] < 1e-3;
            assert!(at_bound || grad[j].abs() < 1e-3, "θ_{j} grad {}", grad[j]);
        }
        let again = fit_hyperparameters(&start, &x, &y, &config).unwrap();
        assert_eq!(again.log_marginal_likelihood(), after);
    }

    #[test]
    fn equal_bounds_fix_the_signal_variance_and_the_constant_mean_gradient_is_exact() {
        let (x, y) = data(4, 20);
        let y = y.map(|v| v + 2.0);
        let start =
            ExactGpParams::new(Matern52::new(KernelParams::isotropic(2, 0.5, 1.0).unwrap()))
                .noise_variance(0.1)
                .constant_mean(true);
        let mut config = FitConfig {
            n_starts: 3,
            max_iters: 50,
            seed: 5,
            ..FitConfig::default()
        };
        config.bounds.signal_variance = (1.0, 1.0);
        let fitted = fit_hyperparameters(&start, &x, &y, &config).unwrap();
        assert_eq!(fitted.params().kernel().params().signal_variance(), 1.0);
        assert!(fitted.params().get_constant_mean());
        assert!(
            fitted.log_marginal_likelihood() > start.fit(&x, &y).unwrap().log_marginal_likelihood()
        );
        // The profile likelihood's gradient (m re-estimated at every θ)
        // equals the analytic one at fixed m.
        let p = fitted.params();
        let (_, grad) = log_marginal_likelihood_with_gradient(p, &x, &y).unwrap();
        let mut theta = p.kernel().params().to_log();
        theta.push(p.get_noise_variance().ln());
        let lml_at = |t: &[f64]| {
            let d = t.len() - 1;
            ExactGpParams::new(
                p.kernel()
                    .with_params(KernelParams::from_log(&t[..d]).unwrap()),
            )
            .noise_variance(t[d].exp())
            .constant_mean(true)
            .fit(&x, &y)
            .unwrap()
            .log_marginal_likelihood()
        };
        let h = 1e-5;
        for j in 0..theta.len() {
            let (mut up, mut dn) = (theta.clone(), theta.clone());
            up[j] += h;
            dn[j] -= h;
            let fd = (lml_at(&up) - lml_at(&dn)) / (2.0 * h);
            assert!(
                (fd - grad[j]).abs() < 1e-5 * (1.0 + fd.abs()),
                "θ_{j}: {fd} vs {}",
                grad[j]
            );
        }
    }

    #[test]
    fn invalid_bounds_are_rejected() {
        let (x, y) = data(3, 5);
        let p = ExactGpParams::new(SquaredExponential::new(
            KernelParams::isotropic(2, 1.0, 1.0).unwrap(),
        ));
        let mut config = FitConfig::default();
        config.bounds.noise_variance = (1.0, 0.1);
        assert!(matches!(
            fit_hyperparameters(&p, &x, &y, &config),
            Err(GpError::Bounds { .. })
        ));
    }

    /// A held length-scale stays at its value to the bit while the others
    /// are fitted; a held coordinate outside the kernel or a length-scale
    /// that is not positive is refused.
    #[test]
    fn a_held_length_scale_is_not_fitted() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let x = DMatrix::from_fn(20, 3, |_, _| rng.gen::<f64>());
        let y = DVector::from_fn(20, |i, _| (6.0 * x[(i, 0)]).sin() + x[(i, 1)]);
        let start =
            ExactGpParams::new(Matern52::new(KernelParams::isotropic(3, 0.5, 1.0).unwrap()))
                .noise_variance(1e-2);
        let config = FitConfig {
            held: vec![(2, 3.0)],
            ..FitConfig::default()
        };
        let fitted = fit_hyperparameters(&start, &x, &y, &config).unwrap();
        let ls = fitted.params().kernel().params().lengthscales().to_vec();
        assert_eq!(ls[2], 3.0f64.ln().exp(), "{ls:?}");
        assert!(
            (ls[0] - 0.5).abs() > 1e-3 && (ls[1] - 0.5).abs() > 1e-3,
            "{ls:?}"
        );
        for held in [vec![(3, 3.0)], vec![(0, 0.0)], vec![(1, f64::NAN)]] {
            let bad = FitConfig {
                held,
                ..FitConfig::default()
            };
            assert!(fit_hyperparameters(&start, &x, &y, &bad).is_err());
        }
    }
}

#[cfg(test)]
mod prior_tests {
    use super::*;
    use crate::kernels::Matern52;

    #[test]
    fn dim_scaled_prior_has_hvarfners_constants() {
        let p = LogNormalPrior::dim_scaled_lengthscale(10);
        assert!((p.loc - (2f64.sqrt() + 0.5 * 10f64.ln())).abs() < 1e-15);
        assert!((p.scale - 3f64.sqrt()).abs() < 1e-15);
        // At θ = μ: log p = −μ − log(σ √(2π)); slope −1.
        let (v, g) = p.log_density_in_log_space(p.loc);
        let want = -p.loc - (3f64.sqrt() * (2.0 * std::f64::consts::PI).sqrt()).ln();
        assert!((v - want).abs() < 1e-14 && (g + 1.0).abs() < 1e-15);
        // The density in v integrates to one: ∫ p(e^θ) e^θ dθ = 1.
        let (mut sum, h) = (0.0, 1e-3);
        let mut t = p.loc - 12.0 * p.scale;
        while t < p.loc + 12.0 * p.scale {
            sum += (p.log_density_in_log_space(t).0 + t).exp() * h;
            t += h;
        }
        assert!((sum - 1.0).abs() < 1e-6, "{sum}");
    }

    #[test]
    fn map_fit_of_one_point_lands_on_the_prior_mode() {
        // With one observation the likelihood does not depend on ℓ, so the MAP
        // length-scale is the log-normal mode e^{μ − σ²} in every dimension.
        let x = DMatrix::from_row_slice(1, 3, &[0.2, 0.5, 0.9]);
        let y = DVector::from_vec(vec![0.7]);
        let start =
            ExactGpParams::new(Matern52::new(KernelParams::isotropic(3, 0.3, 1.0).unwrap()))
                .noise_variance(0.1);
        let prior = HyperPrior {
            lengthscale: LogNormalPrior {
                loc: 0.5,
                scale: 0.5,
            },
            noise_variance: None,
        };
        let config = FitConfig {
            prior: Some(prior),
            n_starts: 2,
            max_iters: 200,
            seed: 3,
            ..FitConfig::default()
        };
        let fitted = fit_hyperparameters(&start, &x, &y, &config).unwrap();
        let mode = (0.5f64 - 0.25).exp();
        for l in fitted.params().kernel().params().lengthscales() {
            assert!((l - mode).abs() < 1e-4, "{l} vs {mode}");
        }
        // Without the prior the length-scales stay where they started.
        let ml = fit_hyperparameters(
            &start,
            &x,
            &y,
            &FitConfig {
                prior: None,
                n_starts: 1,
                ..config
            },
        )
        .unwrap();
        let l0 = ml.params().kernel().params().lengthscales()[0];
        assert!((l0 - mode).abs() > 1e-2, "{l0}");
    }
}
