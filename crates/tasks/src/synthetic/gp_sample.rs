//! The synthetic federation of DP-FTS-DE (paper 000, §5.1 and App. B.1.1): one
//! function sampled from a GP with the SE kernel, and many agents whose
//! objectives are small random perturbations of it.
//!
//! - domain: an equally spaced grid of `|X| = 1000` points on `[0, 1]`
//!   (a point of the unit interval is evaluated at its nearest grid point);
//! - base function `f`: a draw from `GP(0, k_SE)` with length-scale 0.03,
//!   normalised so that `min f = 0` and `max f = 1` on the grid;
//! - agent `n`: `f^n(x) = f(x) + d_{n,x}` with `d_{n,x} = ±0.02`, each sign
//!   independent with probability ½ for every agent and grid point;
//! - observations `y = f^n(x) + ζ`, `ζ ~ N(0, σ²)`, `σ² = 0.01`.
//!
//! The registry knows it as `gp-sample` (function seed 0) or
//! `gp-sample-<seed>`, at `dim = 1` only. The signs `d_{n,x}` are a hash of
//! (seed, agent, grid index), so any number of agents is supported.

use super::gp_function::GpSampledFunction;
use crate::problem::{Evaluation, Problem};
use crate::TaskError;
use fedhe_gp::{KernelParams, SquaredExponential};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};

/// Grid size `|X|` (App. B.1.1).
pub const GRID: usize = 1000;
/// Length-scale of the SE kernel the base function is drawn from.
pub const LENGTHSCALE: f64 = 0.03;
/// Magnitude of each agent's perturbation `|d|`.
pub const PERTURBATION: f64 = 0.02;
/// Observation noise variance `σ²`.
pub const NOISE_VARIANCE: f64 = 0.01;
/// Random features used to draw the base function (enough for `ℓ = 0.03`).
const SAMPLE_FEATURES: usize = 2000;

/// The perturbed GP-sample objectives of paper 000 §5.1 (module docs).
#[derive(Debug, Clone)]
pub struct PerturbedGpSample {
    seed: u64,
    /// `f` on the grid, normalised to `[0, 1]`.
    base: Vec<f64>,
}

impl PerturbedGpSample {
    /// The task for function seed `seed`.
    pub fn new(seed: u64) -> Result<Self, TaskError> {
        let kernel = SquaredExponential::new(KernelParams::isotropic(1, LENGTHSCALE, 1.0)?);
        let f = GpSampledFunction::new(&kernel, vec![(0.0, 1.0)], SAMPLE_FEATURES, seed)?;
        let raw = (0..GRID)
            .map(|g| f.evaluate(&[grid_point(g)]))
            .collect::<Result<Vec<f64>, _>>()?;
        let lo = raw.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = raw.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let base = raw.iter().map(|v| (v - lo) / (hi - lo)).collect();
        Ok(Self { seed, base })
    }

    /// The seed of a `gp-sample[-<seed>]` name, or `None` for any other name.
    pub fn seed_of(name: &str) -> Option<u64> {
        match name.strip_prefix("gp-sample") {
            Some("") => Some(0),
            Some(rest) => rest.strip_prefix('-')?.parse().ok(),
            None => None,
        }
    }

    /// The base function `f` at grid index `g`.
    pub fn base(&self, g: usize) -> f64 {
        self.base[g]
    }

    /// `d_{n,g} = ±0.02` from a SplitMix64 hash of (seed, agent, grid index).
    fn perturbation(&self, client: usize, g: usize) -> f64 {
        let mut z = self.seed
            ^ (client as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ (g as u64).wrapping_mul(0xD1B5_4A32_D192_ED03);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        if z & 1 == 0 {
            PERTURBATION
        } else {
            -PERTURBATION
        }
    }

    /// `f^n` at grid index `g`.
    pub fn value(&self, client: usize, g: usize) -> f64 {
        self.base[g] + self.perturbation(client, g)
    }
}

/// The `g`-th grid point `g / (|X| − 1)`.
fn grid_point(g: usize) -> f64 {
    g as f64 / (GRID - 1) as f64
}

/// The nearest grid index of `x ∈ [0, 1]`.
fn nearest(x: f64) -> usize {
    ((x.clamp(0.0, 1.0) * (GRID - 1) as f64).round() as usize).min(GRID - 1)
}

impl Problem for PerturbedGpSample {
    /// Any number: the perturbations are hashed, not stored.
    fn clients(&self) -> usize {
        usize::MAX
    }

    fn evaluate(
        &self,
        client: usize,
        unit: &[f64],
        rng: &mut ChaCha8Rng,
    ) -> Result<Evaluation, TaskError> {
        if unit.len() != 1 || !unit[0].is_finite() {
            return Err(crate::error::config(
                "point",
                format!("gp-sample is one-dimensional and finite, got {unit:?}"),
            ));
        }
        let noise_free = self.value(client, nearest(unit[0]));
        let noise = Normal::new(0.0, NOISE_VARIANCE.sqrt()).expect("σ > 0");
        Ok(Evaluation {
            observed: noise_free + noise.sample(rng),
            noise_free,
        })
    }

    fn optimum(&self, client: usize) -> Option<f64> {
        Some(
            (0..GRID)
                .map(|g| self.value(client, g))
                .fold(f64::NEG_INFINITY, f64::max),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn names_parse_and_functions_are_normalised_and_perturbed() {
        assert_eq!(PerturbedGpSample::seed_of("gp-sample"), Some(0));
        assert_eq!(PerturbedGpSample::seed_of("gp-sample-7"), Some(7));
        assert_eq!(PerturbedGpSample::seed_of("gp-samplex"), None);
        assert_eq!(PerturbedGpSample::seed_of("garland"), None);
        let t = PerturbedGpSample::new(3).unwrap();
        let (lo, hi) = t
            .base
            .iter()
            .fold((1.0f64, 0.0f64), |(l, h), v| (l.min(*v), h.max(*v)));
        assert_eq!((lo, hi), (0.0, 1.0));
        // Every agent differs from f by exactly ±0.02, with both signs common.
        let plus = (0..GRID)
            .filter(|&g| (t.value(5, g) - t.base(g) - PERTURBATION).abs() < 1e-15)
            .count();
        assert!((400..600).contains(&plus), "{plus}");
        assert!((0..GRID).all(|g| ((t.value(5, g) - t.base(g)).abs() - PERTURBATION).abs() < 1e-15));
        assert_ne!(
            (0..GRID).map(|g| t.value(1, g)).collect::<Vec<_>>(),
            (0..GRID).map(|g| t.value(2, g)).collect::<Vec<_>>()
        );
        let opt = t.optimum(5).unwrap();
        assert!((opt - 1.0).abs() <= PERTURBATION + 1e-12);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let e = t.evaluate(5, &[0.5], &mut rng).unwrap();
        assert_eq!(e.noise_free, t.value(5, nearest(0.5)));
        assert_ne!(e.observed, e.noise_free);
        assert!(t.evaluate(5, &[0.5, 0.5], &mut rng).is_err());
    }
}
