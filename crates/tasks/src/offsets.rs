//! Per-client offsets of a shared task, the local objectives of a federated
//! X-armed bandit (paper 003 App. E.2): each client's objective is the shared
//! function plus a consistent random offset, so the global objective (their
//! average) is the original function.

use crate::problem::{Evaluation, Problem};
use crate::{Task, TaskError};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal, StandardNormal};

/// `f_m(x) = f(x) + s_m` with `s_m ~ N(0, σ_p²)` drawn once per client and
/// centred (`Σ s_m = 0`, so `(1/M) Σ f_m = f` exactly), observed with fresh
/// `N(0, σ_n²)` noise on every pull.
#[derive(Debug, Clone)]
pub struct PerturbedObjectives {
    base: Task,
    offsets: Vec<f64>,
    noise_std: f64,
}

impl PerturbedObjectives {
    /// Offsets for `clients` clients with standard deviation `perturbation`, from `seed`.
    pub fn draw(base: Task, clients: usize, perturbation: f64, noise_std: f64, seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x0ff5_e75e_ed00);
        let raw: Vec<f64> = (0..clients)
            .map(|_| {
                let z: f64 = StandardNormal.sample(&mut rng);
                perturbation * z
            })
            .collect();
        let mean = raw.iter().sum::<f64>() / clients.max(1) as f64;
        Self {
            base,
            offsets: raw.iter().map(|s| s - mean).collect(),
            noise_std,
        }
    }

    /// The offsets `s_m`.
    pub fn offsets(&self) -> &[f64] {
        &self.offsets
    }
}

impl Problem for PerturbedObjectives {
    fn clients(&self) -> usize {
        self.offsets.len()
    }

    fn evaluate(
        &self,
        client: usize,
        unit: &[f64],
        rng: &mut ChaCha8Rng,
    ) -> Result<Evaluation, TaskError> {
        let f = self.base.evaluate(client, unit, rng)?.noise_free + self.offsets[client];
        let noise = if self.noise_std > 0.0 {
            Normal::new(0.0, self.noise_std)
                .map_err(|e| crate::error::config("noise_std", e.to_string()))?
                .sample(rng)
        } else {
            0.0
        };
        Ok(Evaluation {
            observed: f + noise,
            noise_free: f,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_average_to_zero_so_the_global_objective_is_the_original() {
        let base = crate::by_name("garland", 1, 0).unwrap();
        let p = PerturbedObjectives::draw(base.clone(), 10, 1.0, 0.0, 3);
        assert!(p.offsets().iter().sum::<f64>().abs() < 1e-12);
        assert!(p.offsets().iter().any(|s| s.abs() > 0.1));
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let x = [0.3];
        let mean: f64 = (0..10)
            .map(|m| p.evaluate(m, &x, &mut rng).unwrap().observed)
            .sum::<f64>()
            / 10.0;
        let f = base.evaluate(0, &x, &mut rng).unwrap().noise_free;
        assert!((mean - f).abs() < 1e-12);
    }
}
