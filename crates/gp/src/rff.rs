//! Random Fourier features (Rahimi & Recht 2008; paper 002 §2) and the Bayesian
//! linear-regression posterior over their weights (paper 000, eq. 2).
//!
//! `φ(x) = √(2σ²/M) cos(Ω x + b)` with the rows of `Ω` drawn from the kernel's
//! spectral density divided by the length-scales and `b ~ U[0, 2π)`, so that
//! `E[φ(x)ᵀφ(y)] = k(x, y)`. Clients share the features by sharing the seed.

use crate::error::{check_finite, check_positive};
use crate::kernels::Kernel;
use crate::linalg::JitteredCholesky;
use crate::GpError;
use nalgebra::{DMatrix, DVector};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

/// `M` random Fourier features of a stationary kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct RandomFourierFeatures {
    /// Frequencies, `M × D`, already divided by the length-scales.
    omega: DMatrix<f64>,
    /// Phases, `M`.
    phase: DVector<f64>,
    /// `√(2σ²/M)`.
    amplitude: f64,
}

impl RandomFourierFeatures {
    /// `n_features` features of `kernel`, drawn from a ChaCha8 stream seeded by
    /// `seed`: every client with the same kernel, `n_features` and seed gets the
    /// same features.
    pub fn new<K: Kernel>(kernel: &K, n_features: usize, seed: u64) -> Result<Self, GpError> {
        if n_features == 0 {
            return Err(GpError::Empty {
                what: "random features",
            });
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let d = kernel.dim();
        let ls = kernel.params().lengthscales();
        let mut omega = DMatrix::zeros(n_features, d);
        for m in 0..n_features {
            let w = kernel.sample_frequency(&mut rng);
            for j in 0..d {
                omega[(m, j)] = w[j] / ls[j];
            }
        }
        let phase = DVector::from_fn(n_features, |_, _| rng.gen_range(0.0..std::f64::consts::TAU));
        Ok(Self {
            omega,
            phase,
            amplitude: (2.0 * kernel.signal_variance() / n_features as f64).sqrt(),
        })
    }

    /// The number of features `M`.
    pub fn len(&self) -> usize {
        self.phase.len()
    }

    /// Always false (there is at least one feature).
    pub fn is_empty(&self) -> bool {
        self.phase.is_empty()
    }

    /// The input dimension `D`.
    pub fn dim(&self) -> usize {
        self.omega.ncols()
    }

    fn check_point(&self, x: &[f64]) -> Result<(), GpError> {
        if x.len() != self.dim() {
            return Err(GpError::Dimension {
                what: "point vs feature dimension",
                expected: self.dim(),
                got: x.len(),
            });
        }
        check_finite("point", x)
    }

    /// `φ(x)`, length `M`.
    pub fn features(&self, x: &[f64]) -> Result<DVector<f64>, GpError> {
        self.check_point(x)?;
        Ok(DVector::from_fn(self.len(), |m, _| {
            let arg: f64 =
                (0..x.len()).map(|j| self.omega[(m, j)] * x[j]).sum::<f64>() + self.phase[m];
            self.amplitude * arg.cos()
        }))
    }

    /// `Φ` with rows `φ(x_i)ᵀ` for the rows of `x` (`n × M`).
    pub fn feature_matrix(&self, x: &DMatrix<f64>) -> Result<DMatrix<f64>, GpError> {
        let mut phi = DMatrix::zeros(x.nrows(), self.len());
        for (i, row) in x.row_iter().enumerate() {
            let r: Vec<f64> = row.iter().copied().collect();
            phi.row_mut(i).copy_from(&self.features(&r)?.transpose());
        }
        Ok(phi)
    }

    /// `g(x) = φ(x)ᵀω` and its gradient `−√(2σ²/M) Σ_m ω_m sin(Ω_m x + b_m) Ω_m`
    /// (a sampled function for Thompson sampling).
    pub fn evaluate_weights(
        &self,
        weights: &DVector<f64>,
        x: &[f64],
    ) -> Result<(f64, Vec<f64>), GpError> {
        self.check_point(x)?;
        if weights.len() != self.len() {
            return Err(GpError::Dimension {
                what: "weights vs features",
                expected: self.len(),
                got: weights.len(),
            });
        }
        let mut value = 0.0;
        let mut grad = vec![0.0; x.len()];
        for m in 0..self.len() {
            let arg: f64 =
                (0..x.len()).map(|j| self.omega[(m, j)] * x[j]).sum::<f64>() + self.phase[m];
            value += weights[m] * self.amplitude * arg.cos();
            let s = -weights[m] * self.amplitude * arg.sin();
            for (j, g) in grad.iter_mut().enumerate() {
                *g += s * self.omega[(m, j)];
            }
        }
        Ok((value, grad))
    }
}

/// The Bayesian linear-regression posterior over RFF weights (paper 000, eq. 2):
/// `Σ = ΦᵀΦ + λI`, `ν = Σ⁻¹Φᵀy`, `ω ~ N(ν, λΣ⁻¹)`.
#[derive(Debug, Clone)]
pub struct RffPosterior {
    nu: DVector<f64>,
    sigma_chol: JitteredCholesky,
    lambda: f64,
}

impl RffPosterior {
    /// The posterior from data `(x, y)` under features `rff` and regulariser `λ > 0`
    /// (the noise variance).
    pub fn fit(
        rff: &RandomFourierFeatures,
        x: &DMatrix<f64>,
        y: &DVector<f64>,
        lambda: f64,
    ) -> Result<Self, GpError> {
        check_positive("lambda", lambda)?;
        if x.nrows() != y.len() {
            return Err(GpError::Dimension {
                what: "outputs vs input rows",
                expected: x.nrows(),
                got: y.len(),
            });
        }
        check_finite("outputs", y.iter())?;
        let phi = rff.feature_matrix(x)?;
        let mut sigma = phi.transpose() * &phi;
        for m in 0..rff.len() {
            sigma[(m, m)] += lambda;
        }
        let sigma_chol = JitteredCholesky::new(&sigma)?;
        let nu = sigma_chol.solve_vec(&(phi.transpose() * y));
        Ok(Self {
            nu,
            sigma_chol,
            lambda,
        })
    }

    /// The posterior mean `ν`.
    pub fn mean(&self) -> &DVector<f64> {
        &self.nu
    }

    /// The posterior covariance `λΣ⁻¹`.
    pub fn covariance(&self) -> DMatrix<f64> {
        let m = self.nu.len();
        self.sigma_chol.solve(&DMatrix::identity(m, m)) * self.lambda
    }

    /// One draw `ω = ν + √λ L⁻ᵀ z`, `z ~ N(0, I)`, with `Σ = L Lᵀ`, so that
    /// `Cov(ω) = λ (L Lᵀ)⁻¹ = λΣ⁻¹`.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> DVector<f64> {
        let m = self.nu.len();
        let z = DVector::from_fn(m, |_, _| StandardNormal.sample(rng));
        let lt = self
            .sigma_chol
            .factor
            .l_dirty()
            .lower_triangle()
            .transpose();
        let w = lt
            .solve_upper_triangular(&z)
            .expect("Cholesky factor has a non-zero diagonal");
        &self.nu + w * self.lambda.sqrt()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::{KernelParams, Matern52, SquaredExponential};

    fn check_kernel_approximation<K: Kernel>(k: &K) {
        let rff = RandomFourierFeatures::new(k, 20_000, 3).unwrap();
        for (x, y) in [
            ([0.1, 0.2], [0.3, -0.1]),
            ([0.0, 0.0], [0.0, 0.0]),
            ([0.5, 0.5], [-0.2, 0.9]),
        ] {
            let approx = rff.features(&x).unwrap().dot(&rff.features(&y).unwrap());
            // RFF error is O(σ²/√M) ≈ 0.01 here.
            assert!(
                (approx - k.eval(&x, &y)).abs() < 0.05,
                "{approx} vs {}",
                k.eval(&x, &y)
            );
        }
    }

    #[test]
    fn features_approximate_the_kernel() {
        let p = KernelParams::new(vec![0.4, 0.7], 1.5).unwrap();
        check_kernel_approximation(&SquaredExponential::new(p.clone()));
        check_kernel_approximation(&Matern52::new(p));
    }

    #[test]
    fn same_seed_same_features_other_seed_other_features() {
        let k = SquaredExponential::new(KernelParams::isotropic(3, 0.5, 1.0).unwrap());
        let a = RandomFourierFeatures::new(&k, 16, 99).unwrap();
        assert_eq!(a, RandomFourierFeatures::new(&k, 16, 99).unwrap());
        assert_ne!(a, RandomFourierFeatures::new(&k, 16, 100).unwrap());
    }

    fn data() -> (DMatrix<f64>, DVector<f64>) {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let x = DMatrix::from_fn(15, 2, |_, _| rng.gen_range(0.0..1.0));
        let y = DVector::from_fn(15, |i, _| (4.0_f64 * x[(i, 0)]).sin() - x[(i, 1)]);
        (x, y)
    }

    #[test]
    fn posterior_mean_matches_the_dual_form() {
        // Push-through identity: (ΦᵀΦ + λI)⁻¹Φᵀ = Φᵀ(ΦΦᵀ + λI)⁻¹.
        let k = Matern52::new(KernelParams::isotropic(2, 0.3, 1.0).unwrap());
        let rff = RandomFourierFeatures::new(&k, 40, 1).unwrap();
        let (x, y) = data();
        let post = RffPosterior::fit(&rff, &x, &y, 0.1).unwrap();
        let phi = rff.feature_matrix(&x).unwrap();
        let gram = &phi * phi.transpose() + DMatrix::identity(15, 15) * 0.1;
        let dual = phi.transpose() * gram.try_inverse().unwrap() * &y;
        assert!((post.mean() - dual).amax() < 1e-9);
    }

    #[test]
    fn samples_have_the_posterior_moments() {
        let k = SquaredExponential::new(KernelParams::isotropic(2, 0.5, 1.0).unwrap());
        let rff = RandomFourierFeatures::new(&k, 4, 2).unwrap();
        let (x, y) = data();
        let post = RffPosterior::fit(&rff, &x, &y, 0.5).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let n = 40_000;
        let draws: Vec<DVector<f64>> = (0..n).map(|_| post.sample(&mut rng)).collect();
        let mean = draws.iter().fold(DVector::zeros(4), |a, d| a + d) / n as f64;
        let cov = draws.iter().fold(DMatrix::zeros(4, 4), |a, d| {
            a + (d - &mean) * (d - &mean).transpose()
        }) / (n as f64 - 1.0);
        let want = post.covariance();
        let scale = want.amax();
        assert!((mean - post.mean()).amax() < 0.05 * scale.sqrt());
        assert!((cov - want).amax() < 0.05 * scale, "covariance mismatch");
    }

    #[test]
    fn weight_gradient_matches_finite_differences() {
        let k = SquaredExponential::new(KernelParams::isotropic(2, 0.5, 1.0).unwrap());
        let rff = RandomFourierFeatures::new(&k, 8, 5).unwrap();
        let w = DVector::from_fn(8, |i, _| (i as f64 - 3.5) / 4.0);
        let (_, g) = rff.evaluate_weights(&w, &[0.2, 0.6]).unwrap();
        let h = 1e-6;
        let fd = (rff.evaluate_weights(&w, &[0.2 + h, 0.6]).unwrap().0
            - rff.evaluate_weights(&w, &[0.2 - h, 0.6]).unwrap().0)
            / (2.0 * h);
        assert!((fd - g[0]).abs() < 1e-6);
        assert!(rff.evaluate_weights(&w, &[0.2]).is_err());
    }
}
