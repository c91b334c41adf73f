//! A function drawn from the exact GP posterior (paper 000 eq. 1) by pathwise
//! conditioning (Matheron's rule, Wilson et al. 2020):
//!
//! `f_t(·) = f₀(·) + k(·, X)ᵀ (K + λI)⁻¹ (y − f₀(X) − ε)`, `ε ~ N(0, λI)`,
//!
//! where `f₀(x) = φ(x)ᵀw`, `w ~ N(0, I)`, is a prior draw on `F` random Fourier
//! features drawn afresh for this sample. Over the feature draw
//! `E[φ(x)ᵀφ(x')] = k(x, x')`, so `f₀` has exactly the prior's mean 0 and
//! covariance `k`; the update is linear in `(f₀, ε)`, so `f_t` has exactly the
//! posterior mean `μ_t(x) = k_t(x)ᵀ(K_t + λI)⁻¹y_t` and covariance
//! `σ_t²(x, x') = k(x, x') − k_t(x)ᵀ(K_t + λI)⁻¹k_t(x')` of eq. 1 whatever `F`;
//! only its higher moments depart from a Gaussian's (by O(1/F)). Unlike a joint
//! draw on a candidate set (a Cholesky of the candidates' covariance), the
//! sample is a function: it can be evaluated, with its gradient, anywhere.

use crate::error::check_finite;
use crate::kernels::{rows, Kernel};
use crate::linalg::JitteredCholesky;
use crate::rff::RandomFourierFeatures;
use crate::GpError;
use nalgebra::{DMatrix, DVector};
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};

/// One function drawn from the GP posterior (module docs).
#[derive(Debug, Clone)]
pub struct PosteriorPath<K: Kernel> {
    kernel: K,
    prior_features: RandomFourierFeatures,
    prior_weights: DVector<f64>,
    train: Vec<Vec<f64>>,
    /// `(K + λI)⁻¹ (y − f₀(X) − ε)`.
    update: DVector<f64>,
}

impl<K: Kernel + Clone> PosteriorPath<K> {
    /// Draws `f_t` given data `x` (`n × D`, one point per row; `n` may be 0)
    /// and `y`, noise variance `λ > 0` and `prior_features` random features for
    /// the prior draw `f₀`, all randomness from `rng`.
    pub fn draw<R: Rng + ?Sized>(
        kernel: &K,
        noise_variance: f64,
        x: &DMatrix<f64>,
        y: &DVector<f64>,
        prior_features: usize,
        rng: &mut R,
    ) -> Result<Self, GpError> {
        crate::error::check_positive("noise variance", noise_variance)?;
        if x.nrows() != y.len() {
            return Err(GpError::Dimension {
                what: "outputs vs input rows",
                expected: x.nrows(),
                got: y.len(),
            });
        }
        if x.ncols() != kernel.dim() {
            return Err(GpError::Dimension {
                what: "input columns vs kernel dimension",
                expected: kernel.dim(),
                got: x.ncols(),
            });
        }
        check_finite("outputs", y.iter())?;
        let features = RandomFourierFeatures::new(kernel, prior_features, rng.gen())?;
        let prior_weights =
            DVector::from_fn(prior_features, |_, _| StandardNormal.sample(&mut *rng));
        let update = if x.nrows() == 0 {
            DVector::zeros(0)
        } else {
            let prior_at_data = features.feature_matrix(x)? * &prior_weights;
            let sd = noise_variance.sqrt();
            let residual = DVector::from_fn(y.len(), |i, _| {
                let eps: f64 = StandardNormal.sample(&mut *rng);
                y[i] - prior_at_data[i] - sd * eps
            });
            let mut cov = kernel.gram(x);
            for i in 0..x.nrows() {
                cov[(i, i)] += noise_variance;
            }
            JitteredCholesky::new(&cov)?.solve_vec(&residual)
        };
        Ok(Self {
            kernel: kernel.clone(),
            prior_features: features,
            prior_weights,
            train: rows(x),
            update,
        })
    }

    /// `f_t(x)` and its gradient in `x`.
    pub fn evaluate(&self, x: &[f64]) -> Result<(f64, Vec<f64>), GpError> {
        let (mut value, mut grad) = self
            .prior_features
            .evaluate_weights(&self.prior_weights, x)?;
        // k(x, x_i) and ∂k/∂x = σ² g'(r²) · 2 (x − x_i)/ℓ² inline (as
        // `Kernel::grad_x`, without a vector per data point: this runs for
        // every candidate of every TS step).
        let params = self.kernel.params();
        let ls = params.lengthscales();
        let var = params.signal_variance();
        for (xi, v) in self.train.iter().zip(self.update.iter()) {
            let r2 = self.kernel.scaled_sq_dist(x, xi);
            value += v * var * self.kernel.profile(r2);
            let scale = v * 2.0 * var * self.kernel.profile_derivative(r2);
            for (d, g) in grad.iter_mut().enumerate() {
                *g += scale * (x[d] - xi[d]) / (ls[d] * ls[d]);
            }
        }
        Ok((value, grad))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{KernelParams, SquaredExponential};
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    /// Eq. 1 with one observation `y₁` at `x₁` and `k(x, x) = 1`:
    /// `μ(x) = k(x, x₁) y₁ / (1 + λ)`, `σ²(x) = 1 − k(x, x₁)² / (1 + λ)`.
    #[test]
    fn samples_have_the_posterior_mean_and_variance_of_eq_1() {
        let ls = 0.2;
        let kernel = SquaredExponential::new(KernelParams::isotropic(1, ls, 1.0).unwrap());
        let lambda = 0.1;
        let x = DMatrix::from_row_slice(1, 1, &[0.5]);
        let y = DVector::from_vec(vec![2.0]);
        // At 0.6: k = exp(−0.1²/(2·0.2²)) = exp(−0.125) = 0.882497;
        // μ = 0.882497·2/1.1 = 1.604540, σ² = 1 − 0.882497²/1.1 = 0.291999.
        let (mu, var) = (1.604540, 0.291999);
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let mut draws_at = |point: f64, count: usize| -> Vec<f64> {
            (0..count)
                .map(|_| {
                    PosteriorPath::draw(&kernel, lambda, &x, &y, 20, &mut rng)
                        .unwrap()
                        .evaluate(&[point])
                        .unwrap()
                        .0
                })
                .collect()
        };
        let draws = 20_000;
        let values = draws_at(0.6, draws);
        let mean = values.iter().sum::<f64>() / draws as f64;
        let sample_var =
            values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (draws - 1) as f64;
        // Standard errors: √(σ²/n) = 0.0038 for the mean, ≈ σ²√(2/n) = 0.0029
        // for the variance; allow 5 of them.
        assert!((mean - mu).abs() < 0.02, "mean {mean} vs {mu}");
        assert!(
            (sample_var - var).abs() < 0.015,
            "var {sample_var} vs {var}"
        );
        // Far from the data the sample is a prior draw: mean 0, variance 1.
        let far = draws_at(5.0, 4000);
        let far_var = far.iter().map(|v| v * v).sum::<f64>() / far.len() as f64;
        assert!((far_var - 1.0).abs() < 0.1, "{far_var}");
    }

    #[test]
    fn gradient_matches_finite_differences_and_bad_data_is_refused() {
        let kernel = SquaredExponential::new(KernelParams::isotropic(1, 0.1, 1.0).unwrap());
        let x = DMatrix::from_row_slice(3, 1, &[0.1, 0.4, 0.8]);
        let y = DVector::from_vec(vec![0.3, -0.2, 0.9]);
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let f = PosteriorPath::draw(&kernel, 0.01, &x, &y, 100, &mut rng).unwrap();
        let h = 1e-6;
        let (_, g) = f.evaluate(&[0.3]).unwrap();
        let fd =
            (f.evaluate(&[0.3 + h]).unwrap().0 - f.evaluate(&[0.3 - h]).unwrap().0) / (2.0 * h);
        assert!(
            (g[0] - fd).abs() < 1e-5 * (1.0 + fd.abs()),
            "{} vs {fd}",
            g[0]
        );
        let short = DVector::from_vec(vec![0.3]);
        assert!(PosteriorPath::draw(&kernel, 0.01, &x, &short, 10, &mut rng).is_err());
        assert!(PosteriorPath::draw(&kernel, 0.0, &x, &y, 10, &mut rng).is_err());
    }
}
