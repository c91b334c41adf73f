//! The synthetic objective of paper 001 §5.1: `f = Σ_{i=1}^p a_i k(·, x_i)` with
//! `a_i ~ U[−1, 1]` and support points `x_i` uniform in the 100-point grid of
//! `[0, 1]`, `p = 100`, drawn afresh for every trial (seed).

use crate::problem::{Evaluation, Problem, Sense};
use crate::{Task, TaskError};
use fedhe_gp::{Kernel, KernelParams, Matern52, SquaredExponential};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

/// The kernel a [`KernelSum`] is a sum of (the LDP-BO learners' `kernel`
/// setting chooses the same two for their models).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SumKernel {
    /// Squared exponential.
    Se,
    /// Matérn ν = 5/2.
    Matern,
}

/// Points of the §5.1 domain and support points drawn.
pub const GRID_POINTS: usize = 100;

/// `f = Σ a_i k(·, x_i)` on `[0, 1]`, the same function for every client.
#[derive(Debug, Clone)]
pub struct KernelSum {
    kernel: SumKernel,
    lengthscale: f64,
    support: Vec<f64>,
    weights: Vec<f64>,
}

impl KernelSum {
    /// Draws `p` weights and support points from `seed`.
    pub fn draw(kernel: SumKernel, lengthscale: f64, p: usize, seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed_1d9b_0001);
        let grid = |i: usize| i as f64 / (GRID_POINTS - 1) as f64;
        let support = (0..p)
            .map(|_| grid(rng.gen_range(0..GRID_POINTS)))
            .collect();
        let weights = (0..p).map(|_| rng.gen_range(-1.0..=1.0)).collect();
        Self {
            kernel,
            lengthscale,
            support,
            weights,
        }
    }

    /// `f(x)`.
    pub fn value(&self, x: f64) -> f64 {
        let k = |a: f64, b: f64| -> f64 {
            let p =
                KernelParams::isotropic(1, self.lengthscale, 1.0).expect("positive lengthscale");
            match self.kernel {
                SumKernel::Se => SquaredExponential::new(p).eval(&[a], &[b]),
                SumKernel::Matern => Matern52::new(p).eval(&[a], &[b]),
            }
        };
        self.support
            .iter()
            .zip(&self.weights)
            .map(|(s, a)| a * k(x, *s))
            .sum()
    }

    /// `max f` over the 100-point grid.
    pub fn grid_maximum(&self) -> f64 {
        (0..GRID_POINTS)
            .map(|i| self.value(i as f64 / (GRID_POINTS - 1) as f64))
            .fold(f64::NEG_INFINITY, f64::max)
    }
}

impl Problem for KernelSum {
    fn clients(&self) -> usize {
        usize::MAX
    }

    fn evaluate(
        &self,
        _client: usize,
        unit: &[f64],
        _rng: &mut ChaCha8Rng,
    ) -> Result<Evaluation, TaskError> {
        let v = self.value(unit[0]);
        Ok(Evaluation::exact(v))
    }
}

/// The name of the SE kernel sum.
pub const KERNEL_SUM_SE: &str = "kernel-sum-se";
/// The name of the Matérn kernel sum.
pub const KERNEL_SUM_MATERN: &str = "kernel-sum-matern";

/// The task `kernel-sum-se` or `kernel-sum-matern` (`l = 0.2`, `ν = 2.5`) for
/// trial `seed`; `None` for any other name.
pub fn kernel_sum_task(name: &str, seed: u64) -> Option<Task> {
    let kernel = match name {
        KERNEL_SUM_SE => SumKernel::Se,
        KERNEL_SUM_MATERN => SumKernel::Matern,
        _ => return None,
    };
    let f = KernelSum::draw(kernel, 0.2, GRID_POINTS, seed);
    let optimum = f.grid_maximum();
    Some(Task::per_client(
        name,
        1,
        Sense::Maximise,
        Some(optimum),
        Arc::new(f),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_repeat_for_a_seed_and_differ_across_seeds() {
        let a = KernelSum::draw(SumKernel::Se, 0.2, 100, 1);
        let b = KernelSum::draw(SumKernel::Se, 0.2, 100, 1);
        let c = KernelSum::draw(SumKernel::Se, 0.2, 100, 2);
        assert_eq!(a.value(0.37), b.value(0.37));
        assert_ne!(a.value(0.37), c.value(0.37));
        // One support point with weight a: f(x_1) = a (k(x, x) = 1).
        let one = KernelSum {
            kernel: SumKernel::Matern,
            lengthscale: 0.2,
            support: vec![0.5],
            weights: vec![-0.3],
        };
        assert!((one.value(0.5) + 0.3).abs() < 1e-12);
        let t = kernel_sum_task("kernel-sum-matern", 4).unwrap();
        assert_eq!(t.dim(), 1);
        assert!(kernel_sum_task("garland", 0).is_none());
    }
}
