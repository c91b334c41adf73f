//! Functions sampled from a GP prior on a box, as the papers' synthetic tasks use.
//!
//! A sample is represented by random Fourier features with standard-normal
//! weights, `f(x) = φ(x)ᵀw`, `w ~ N(0, I)`: a smooth function defined everywhere
//! in the box (not only on a grid) whose covariance approaches the kernel as the
//! number of features grows. The same kernel, feature count and seed give the same
//! function on every machine.

use crate::TaskError;
use fedhe_gp::kernels::Kernel;
use fedhe_gp::rff::RandomFourierFeatures;
use nalgebra::DVector;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

/// A function drawn from `GP(0, k)` on a box.
#[derive(Debug, Clone)]
pub struct GpSampledFunction {
    features: RandomFourierFeatures,
    weights: DVector<f64>,
    bounds: Vec<(f64, f64)>,
}

impl GpSampledFunction {
    /// Draws a function on the box `bounds` (`[lo, hi]` per coordinate) with
    /// `n_features` random features from a stream seeded by `seed`.
    pub fn new<K: Kernel>(
        kernel: &K,
        bounds: Vec<(f64, f64)>,
        n_features: usize,
        seed: u64,
    ) -> Result<Self, TaskError> {
        if bounds.len() != kernel.dim() {
            return Err(fedhe_gp::GpError::Dimension {
                what: "bounds vs kernel",
                expected: kernel.dim(),
                got: bounds.len(),
            }
            .into());
        }
        if !bounds
            .iter()
            .all(|(lo, hi)| lo.is_finite() && hi.is_finite() && lo < hi)
        {
            return Err(crate::error::invalid(
                "bounds",
                "need finite lower < upper in every coordinate",
            ));
        }
        let features = RandomFourierFeatures::new(kernel, n_features, seed)?;
        // Weights come from a second stream so that they are independent of the features.
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x9e37_79b9_7f4a_7c15);
        let weights = DVector::from_fn(n_features, |_, _| StandardNormal.sample(&mut rng));
        Ok(Self {
            features,
            weights,
            bounds,
        })
    }

    /// The domain, `[lo, hi]` per coordinate.
    pub fn bounds(&self) -> &[(f64, f64)] {
        &self.bounds
    }

    /// `f(x)`; `x` must lie in the box.
    pub fn evaluate(&self, x: &[f64]) -> Result<f64, TaskError> {
        Ok(self.evaluate_with_gradient(x)?.0)
    }

    /// `f(x)` and `∇f(x)`.
    pub fn evaluate_with_gradient(&self, x: &[f64]) -> Result<(f64, Vec<f64>), TaskError> {
        if x.len() != self.bounds.len() {
            return Err(fedhe_gp::GpError::Dimension {
                what: "point",
                expected: self.bounds.len(),
                got: x.len(),
            }
            .into());
        }
        let inside = x
            .iter()
            .zip(&self.bounds)
            .all(|(v, (lo, hi))| (*lo..=*hi).contains(v));
        if !inside {
            return Err(crate::error::invalid(
                "point",
                "outside the function's domain",
            ));
        }
        Ok(self.features.evaluate_weights(&self.weights, x)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fedhe_gp::kernels::{KernelParams, SquaredExponential};

    #[test]
    fn samples_are_seeded_and_have_the_prior_covariance() {
        let k = SquaredExponential::new(KernelParams::isotropic(1, 0.2, 2.0).unwrap());
        let b = vec![(0.0, 1.0)];
        let f = GpSampledFunction::new(&k, b.clone(), 256, 1).unwrap();
        let g = GpSampledFunction::new(&k, b.clone(), 256, 1).unwrap();
        assert_eq!(f.evaluate(&[0.3]).unwrap(), g.evaluate(&[0.3]).unwrap());
        // Across seeds, E[f(x) f(y)] ≈ k(x, y) (Monte Carlo over 2000 draws).
        let n = 2000;
        let (mut vxx, mut vxy) = (0.0, 0.0);
        for s in 0..n {
            let f = GpSampledFunction::new(&k, b.clone(), 256, s).unwrap();
            let (a, c) = (f.evaluate(&[0.3]).unwrap(), f.evaluate(&[0.5]).unwrap());
            vxx += a * a;
            vxy += a * c;
        }
        let (vxx, vxy) = (vxx / n as f64, vxy / n as f64);
        assert!((vxx - 2.0).abs() < 0.25, "{vxx}");
        assert!((vxy - k.eval(&[0.3], &[0.5])).abs() < 0.25, "{vxy}");
        assert!(f.evaluate(&[1.5]).is_err());
    }
}
