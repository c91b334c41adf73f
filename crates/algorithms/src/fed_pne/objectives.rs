//! The federation a federated X-armed bandit plays (paper 003 App. E.2): the
//! clients' local objectives (per-client offsets of a shared task,
//! [`fedhe_tasks::offsets`], or a task's own per-client objectives) and the
//! global objective regret is measured on.

use crate::AlgorithmError;
use fedhe_tasks::offsets::PerturbedObjectives;
use fedhe_tasks::Task;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};
use std::sync::Arc;

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
            Some(_) => (base.clone(), pull_noise(noise_std)?),
        };
        Ok(Self {
            base: base.clone(),
            local,
            clients,
            optimum: base.utility(optimum),
            extra_noise,
        })
    }

    /// The federation as one member running alone sees it (an agent): its
    /// own objective from a per-client `base`, `noise_std` noise on every
    /// pull, and no regret (the global objective averages every member's
    /// objective, which no member can evaluate).
    pub fn for_member(base: &Task, clients: usize, noise_std: f64) -> Result<Self, AlgorithmError> {
        if base.clients().is_none_or(|n| n < clients) {
            return Err(crate::error::config(
                "members",
                format!(
                    "a member's task {} must have an objective for each of the {clients} members",
                    base.name()
                ),
            ));
        }
        Ok(Self {
            base: base.clone(),
            local: base.clone(),
            clients,
            optimum: f64::NAN,
            extra_noise: pull_noise(noise_std)?,
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
            None => Ok(self.base.noise_free(0, x, &mut scratch)?),
            Some(_) => {
                let mut sum = 0.0;
                for m in 0..self.clients {
                    sum += self.base.noise_free(m, x, &mut scratch)?;
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

/// The noise a per-client task's pulls get: `N(0, sd²)`, none for `sd = 0`.
fn pull_noise(sd: f64) -> Result<Option<Normal<f64>>, AlgorithmError> {
    if sd > 0.0 {
        Normal::new(0.0, sd)
            .map(Some)
            .map_err(|e| crate::error::config("noise_std", e.to_string()))
    } else {
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_global_objective_of_a_shared_task_is_the_original() {
        // The offsets themselves are checked in fedhe_tasks::offsets.
        let base = fedhe_tasks::by_name("garland", 1, 0).unwrap();
        let fed = Federation::new(&base, 10, 1.0, 0.0, None, 3).unwrap();
        let r = fed.regret(&[std::f64::consts::PI / 6.0]).unwrap();
        assert!(r.abs() < 1e-6, "{r}");
        // A known optimum leaves no room for an assumed one.
        let err = Federation::new(&base, 10, 1.0, 0.0, Some(1.0), 3).unwrap_err();
        assert!(err.to_string().contains("assumed_optimum"), "{err}");
    }

    #[test]
    fn a_per_client_task_has_the_average_as_global_objective_and_an_assumed_optimum() {
        let task = fedhe_tasks::by_name(fedhe_tasks::seir::TASK_NAME, 1, 0).unwrap();
        let regions = fedhe_tasks::seir::regions();
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
