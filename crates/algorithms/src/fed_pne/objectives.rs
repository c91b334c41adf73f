//! Local objectives of a federated X-armed bandit (paper 003 App. E.2): each
//! client's objective is the shared function plus a consistent random offset,
//! so the global objective (their average) is the original function.

use crate::task::{ClientObjectives, Evaluation};
use crate::{AlgorithmError, Task};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal, StandardNormal};
use std::sync::Arc;

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

impl ClientObjectives for PerturbedObjectives {
    fn clients(&self) -> usize {
        self.offsets.len()
    }

    fn evaluate(
        &self,
        client: usize,
        unit: &[f64],
        rng: &mut ChaCha8Rng,
    ) -> Result<Evaluation, AlgorithmError> {
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

/// The federation's view of a task: the clients' objectives and the global
/// objective's utility (what regret is measured on).
///
/// For a shared objective the local objectives are its perturbed copies and
/// the global objective is the objective itself; for a task with its own
/// per-client objectives (a data set per institution, a parameter set per
/// country) the global objective is the average of the `M` clients'
/// noise-free values (paper 003 §2.1, App. E.2).
#[derive(Debug, Clone)]
pub struct Federation {
    base: Task,
    local: Task,
    clients: usize,
    optimum: f64,
    /// Fresh noise added on a per-client task's pulls (a shared task's
    /// perturbed copies add their own).
    extra_noise: Option<Normal<f64>>,
}

impl Federation {
    /// The local objectives of `clients` clients on `base`: a shared objective
    /// gets perturbed copies; per-client objectives are used as they are, with
    /// `noise_std` noise on every pull. Regret is measured against the task's
    /// optimum, or else `assumed_optimum` (the paper's "we assume the unknown
    /// global optimal to be 0", App. E.2), in the task's units.
    pub fn new(
        base: &Task,
        clients: usize,
        perturbation: f64,
        noise_std: f64,
        assumed_optimum: Option<f64>,
        seed: u64,
    ) -> Result<Self, AlgorithmError> {
        let optimum = match (base.optimum(), assumed_optimum) {
            (o, None) if o.is_finite() => o,
            (o, Some(_)) if o.is_finite() => {
                return Err(crate::error::config(
                    "assumed_optimum",
                    format!(
                    "{} has a known optimum ({o}); assumed_optimum is only for tasks without one",
                    base.name()
                ),
                ))
            }
            (_, Some(a)) if a.is_finite() => a,
            (_, Some(a)) => {
                return Err(crate::error::config(
                    "assumed_optimum",
                    format!("must be finite, got {a}"),
                ))
            }
            (_, None) => {
                return Err(crate::error::config(
                    "assumed_optimum",
                    format!(
                        "{} has no known optimum to measure regret against: set assumed_optimum",
                        base.name()
                    ),
                ))
            }
        };
        let noise = |sd: f64| -> Result<Option<Normal<f64>>, AlgorithmError> {
            if sd > 0.0 {
                Normal::new(0.0, sd)
                    .map(Some)
                    .map_err(|e| crate::error::config("noise_std", e.to_string()))
            } else {
                Ok(None)
            }
        };
        let (local, extra_noise) = match base.clients() {
            None => (
                Task::per_client(
                    base.name(),
                    base.dim(),
                    base.sense(),
                    Some(optimum),
                    Arc::new(PerturbedObjectives::draw(
                        base.clone(),
                        clients,
                        perturbation,
                        noise_std,
                        seed,
                    )),
                ),
                None,
            ),
            Some(n) if n < clients => {
                return Err(crate::error::config(
                    "members",
                    format!(
                        "task {} has objectives for {n} clients, {clients} configured",
                        base.name()
                    ),
                ))
            }
            Some(_) => (base.clone(), noise(noise_std)?),
        };
        Ok(Self {
            base: base.clone(),
            local,
            clients,
            optimum: base.utility(optimum),
            extra_noise,
        })
    }

    /// Client `m`'s reward (utility of its observation) at `x`.
    pub fn pull(&self, m: usize, x: &[f64], rng: &mut ChaCha8Rng) -> Result<f64, AlgorithmError> {
        let mut v = self.local.evaluate(m, x, rng)?.observed;
        if let Some(noise) = &self.extra_noise {
            v += noise.sample(rng);
        }
        Ok(self.local.utility(v))
    }

    /// The global objective's value at `x` (task units): the shared function,
    /// or the average of the clients' noise-free values for per-client tasks.
    pub fn global_value(&self, x: &[f64]) -> Result<f64, AlgorithmError> {
        let mut scratch = ChaCha8Rng::seed_from_u64(0);
        match self.base.clients() {
            None => Ok(self.base.evaluate(0, x, &mut scratch)?.noise_free),
            Some(_) => {
                let mut sum = 0.0;
                for m in 0..self.clients {
                    sum += self.base.evaluate(m, x, &mut scratch)?.noise_free;
                }
                Ok(sum / self.clients as f64)
            }
        }
    }

    /// The regret `f* − f(x)` of one pull at `x`.
    pub fn regret(&self, x: &[f64]) -> Result<f64, AlgorithmError> {
        Ok(self.optimum - self.base.utility(self.global_value(x)?))
    }

    /// The base task.
    pub fn task(&self) -> &Task {
        &self.base
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_average_to_zero_so_the_global_objective_is_the_original() {
        let base = Task::by_name("garland", 1).unwrap();
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
        let fed = Federation::new(&base, 10, 1.0, 0.0, None, 3).unwrap();
        let r = fed.regret(&[std::f64::consts::PI / 6.0]).unwrap();
        assert!(r.abs() < 1e-6, "{r}");
        // A known optimum leaves no room for an assumed one.
        let err = Federation::new(&base, 10, 1.0, 0.0, Some(1.0), 3).unwrap_err();
        assert!(err.to_string().contains("assumed_optimum"), "{err}");
    }

    #[test]
    fn a_per_client_task_has_the_average_as_global_objective_and_an_assumed_optimum() {
        let task = Task::by_name(crate::seir::TASK_NAME, 1).unwrap();
        let regions = crate::seir::regions();
        let err = Federation::new(&task, 4, 1.0, 0.0, None, 0).unwrap_err();
        assert!(err.to_string().contains("assumed_optimum"), "{err}");
        let err = Federation::new(&task, regions.len() + 1, 1.0, 0.0, Some(0.0), 0).unwrap_err();
        assert!(err.to_string().contains("members"), "{err}");
        // Four regions: the global objective is their mean infected percentage.
        let fed = Federation::new(&task, 4, 1.0, 0.0, Some(0.0), 0).unwrap();
        let x = 0.8;
        let mean = regions[..4]
            .iter()
            .map(|r| r.infected_percentage(x))
            .sum::<f64>()
            / 4.0;
        assert!((fed.global_value(&[x]).unwrap() - mean).abs() < 1e-12);
        assert!(regions[..4]
            .iter()
            .any(|r| (r.infected_percentage(x) - mean).abs() > 1.0));
        // Minimised with assumed optimum 0: regret = the value itself.
        assert!((fed.regret(&[x]).unwrap() - mean).abs() < 1e-12);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        // Without noise a pull is region 3's own utility (−value).
        let own = regions[3].infected_percentage(x);
        assert_eq!(fed.pull(3, &[x], &mut rng).unwrap(), -own);
        let noisy = Federation::new(&task, 4, 1.0, 0.5, Some(0.0), 0).unwrap();
        assert_ne!(noisy.pull(3, &[x], &mut rng).unwrap(), -own);
    }
}
