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
    /// Bounds on the signal variance.
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

/// Settings of the multi-start L-BFGS fit.
#[derive(Debug, Clone, PartialEq)]
pub struct FitConfig {
    /// Box on the hyper-parameters.
    pub bounds: HyperBounds,
    /// Number of starts: the initial hyper-parameters (clamped into the box) and
    /// `n_starts − 1` log-uniform random draws.
    pub n_starts: usize,
    /// L-BFGS iterations per start.
    pub max_iters: u64,
    /// Seed of the random starts.
    pub seed: u64,
}

impl Default for FitConfig {
    fn default() -> Self {
        Self {
            bounds: HyperBounds::default(),
            n_starts: 5,
            max_iters: 100,
            seed: 0,
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
            if !(l.is_finite() && h.is_finite() && l > 0.0 && l < h) {
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
            .standardize(self.base.get_standardize()))
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
        let (lml, grad) =
            log_marginal_likelihood_with_gradient(&self.params_at(&theta)?, self.x, self.y)?;
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
/// the log marginal likelihood with multi-start L-BFGS inside `config.bounds`,
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
            .map(|(l, h)| rng.gen_range(*l..*h))
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
}
