//! The black-box problems: a named objective on a box, evaluated in the unit
//! cube the models work in.

use crate::synthetic::PerturbedGpSample;
use crate::AlgorithmError;
use fedhe_bo::objectives::{self, Objective, Sense};
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

/// Per-client objectives: each institution evaluates its own function (its own
/// data, a perturbed copy of a shared function), on the unit cube.
pub trait ClientObjectives: Send + Sync + std::fmt::Debug {
    /// How many clients the task has objectives for.
    fn clients(&self) -> usize;

    /// Client `client`'s evaluation at `unit` (the unit cube); `noise_free` is
    /// the value reported as the client's result.
    fn evaluate(
        &self,
        client: usize,
        unit: &[f64],
        rng: &mut ChaCha8Rng,
    ) -> Result<Evaluation, AlgorithmError>;

    /// Client `client`'s optimum (noise-free) value, when known; simple regret
    /// is measured against it.
    fn optimum(&self, _client: usize) -> Option<f64> {
        None
    }
}

/// What a task evaluates.
#[derive(Debug, Clone)]
enum Objectives {
    /// One objective on the box `[lo, hi]^D` that every client shares.
    Shared {
        objective: Objective,
        bounds: (f64, f64),
    },
    /// One objective per client.
    PerClient(Arc<dyn ClientObjectives>),
}

/// A black-box problem: a name, a dimension, a sense, the optimum value when
/// known, and the objective(s) the clients evaluate in the unit cube.
#[derive(Debug, Clone)]
pub struct Task {
    name: String,
    dim: usize,
    sense: Sense,
    optimum: Option<f64>,
    objectives: Objectives,
}

/// One evaluation: what the client observes and the noise-free value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Evaluation {
    /// The observed value (with the objective's own noise, e.g. F4, F17).
    pub observed: f64,
    /// The noise-free value, used only to report the best found.
    pub noise_free: f64,
}

impl Task {
    /// The objective `name` (as `fedhe objective list` prints it) at dimension
    /// `dim`, shared by every client; or the per-client synthetic task
    /// `gp-sample[-<seed>]` of paper 000 §5.1 ([`crate::synthetic`], `dim = 1`),
    /// or the per-region vaccine-dosage task `covid-seir` of paper 003 App. E.2
    /// ([`crate::seir`], `dim = 1`, minimised, optimum unknown).
    pub fn by_name(name: &str, dim: usize) -> Result<Self, AlgorithmError> {
        if name == crate::seir::TASK_NAME {
            if dim != 1 {
                return Err(crate::error::config(
                    "dim",
                    format!("{name} tunes one dose, got dim = {dim}"),
                ));
            }
            return Ok(Self::per_client(
                name,
                1,
                Sense::Minimise,
                None,
                Arc::new(crate::seir::CovidRegions::new()),
            ));
        }
        if let Some(seed) = PerturbedGpSample::seed_of(name) {
            if dim != 1 {
                return Err(crate::error::config(
                    "dim",
                    format!("{name} is one-dimensional, got dim = {dim}"),
                ));
            }
            let objectives = Arc::new(PerturbedGpSample::new(seed)?);
            return Ok(Self::per_client(
                name,
                1,
                Sense::Maximise,
                Some(1.0),
                objectives,
            ));
        }
        let objective = Objective::by_name(name, dim)?;
        let info = objectives::list()
            .into_iter()
            .find(|i| i.name == name)
            .ok_or_else(|| crate::error::config("task", format!("unknown function {name:?}")))?;
        // The box searched: for CEC-2005 its search range (F7's contains the optimum).
        let bounds = match &objective {
            Objective::Cec2005(f) => fedhe_bo::objectives::cec2005::search_bounds_of(f.number()),
            _ => info.bounds,
        };
        Ok(Self {
            name: name.to_string(),
            dim: objective.dim(),
            sense: info.sense,
            optimum: Some(info.optimum_value),
            objectives: Objectives::Shared { objective, bounds },
        })
    }

    /// [`Task::by_name`], or a task drawn afresh for each trial `seed`: the
    /// kernel sums of paper 001 §5.1 (`kernel-sum-se`, `kernel-sum-matern`).
    pub fn by_name_seeded(name: &str, dim: usize, seed: u64) -> Result<Self, AlgorithmError> {
        match crate::ldp_bo::synthetic::kernel_sum_task(name, seed) {
            Some(task) if dim == 1 => Ok(task),
            Some(_) => Err(crate::error::config(
                "dim",
                format!("{name} is one-dimensional"),
            )),
            None => Self::by_name(name, dim),
        }
    }

    /// A task whose clients each evaluate their own objective.
    pub fn per_client(
        name: impl Into<String>,
        dim: usize,
        sense: Sense,
        optimum: Option<f64>,
        objectives: Arc<dyn ClientObjectives>,
    ) -> Self {
        Self {
            name: name.into(),
            dim,
            sense,
            optimum,
            objectives: Objectives::PerClient(objectives),
        }
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The input dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Whether the objective is minimised or maximised.
    pub fn sense(&self) -> Sense {
        self.sense
    }

    /// Whether the objective is maximised.
    pub fn is_maximised(&self) -> bool {
        self.sense == Sense::Maximise
    }

    /// The optimum value (NaN when unknown).
    pub fn optimum(&self) -> f64 {
        self.optimum.unwrap_or(f64::NAN)
    }

    /// Client `client`'s optimum value: its own when its objective knows it,
    /// else the task's (NaN when unknown).
    pub fn client_optimum(&self, client: usize) -> f64 {
        match &self.objectives {
            Objectives::PerClient(o) => o.optimum(client).unwrap_or_else(|| self.optimum()),
            Objectives::Shared { .. } => self.optimum(),
        }
    }

    /// How many clients the task supports (`None`: any number).
    pub fn clients(&self) -> Option<usize> {
        match &self.objectives {
            Objectives::Shared { .. } => None,
            Objectives::PerClient(o) => Some(o.clients()),
        }
    }

    /// Maps a point of the unit cube to a shared objective's box (per-client
    /// objectives take the unit cube as it is).
    pub fn to_domain(&self, unit: &[f64]) -> Vec<f64> {
        match &self.objectives {
            Objectives::Shared {
                bounds: (lo, hi), ..
            } => unit.iter().map(|u| lo + (hi - lo) * u).collect(),
            Objectives::PerClient(_) => unit.to_vec(),
        }
    }

    /// Client `client` evaluates at a point of the unit cube; the objective's
    /// noise (F4, F17) comes from `rng`.
    pub fn evaluate(
        &self,
        client: usize,
        unit: &[f64],
        rng: &mut ChaCha8Rng,
    ) -> Result<Evaluation, AlgorithmError> {
        match &self.objectives {
            Objectives::Shared { objective, .. } => {
                let x = self.to_domain(unit);
                let noise_free = objective.evaluate(&x)?;
                let observed = match objective {
                    Objective::Cec2005(f) if f.is_noisy() => f.evaluate_noisy(&x, rng)?,
                    _ => noise_free,
                };
                Ok(Evaluation {
                    observed,
                    noise_free,
                })
            }
            Objectives::PerClient(o) => {
                if client >= o.clients() {
                    return Err(crate::error::config(
                        "members",
                        format!(
                            "task {} has objectives for {} clients, not client {client}",
                            self.name,
                            o.clients()
                        ),
                    ));
                }
                o.evaluate(client, unit, rng)
            }
        }
    }

    /// Checks that the task has objectives for every one of `members` and that
    /// they are the `configured` number; the error names `members`.
    pub fn check_members(
        &self,
        members: &[fedhe_crypto::MemberId],
        configured: usize,
    ) -> Result<(), AlgorithmError> {
        if let Some(n) = self.clients() {
            if n < members.len() {
                return Err(crate::error::config(
                    "members",
                    format!(
                        "task {} has objectives for {n} clients, {} configured",
                        self.name,
                        members.len()
                    ),
                ));
            }
        }
        crate::error::check_members(configured, members.len())
    }

    /// Whether `a` is a better value than `b`.
    pub fn better(&self, a: f64, b: f64) -> bool {
        match self.sense {
            Sense::Minimise => a < b,
            Sense::Maximise => a > b,
        }
    }

    /// The value the optimisers maximise: `v` for a maximised objective, `−v` otherwise.
    pub fn utility(&self, v: f64) -> f64 {
        match self.sense {
            Sense::Minimise => -v,
            Sense::Maximise => v,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn unit_cube_maps_to_the_box_and_the_optimum_value_is_the_bias() {
        let t = Task::by_name("cec2005-f1", 10).unwrap();
        assert_eq!(t.to_domain(&[0.0; 10]), vec![-100.0; 10]);
        assert_eq!(t.to_domain(&[1.0; 10]), vec![100.0; 10]);
        assert_eq!(t.optimum(), -450.0);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let e = t.evaluate(0, &[0.5; 10], &mut rng).unwrap();
        assert_eq!(e.observed, e.noise_free);
        assert!(t.better(-1.0, 0.0) && t.utility(3.0) == -3.0);
        assert!(Task::by_name("cec2005-f99", 10).is_err());
    }

    #[test]
    fn noisy_functions_observe_noise_but_report_the_clean_value() {
        let t = Task::by_name("cec2005-f4", 10).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let e = t.evaluate(0, &[0.3; 10], &mut rng).unwrap();
        assert_ne!(e.observed, e.noise_free);
        let clean = Task::by_name("cec2005-f4", 10).unwrap();
        let again = clean.evaluate(3, &[0.3; 10], &mut rng).unwrap();
        assert_eq!(again.noise_free, e.noise_free);
    }

    #[derive(Debug)]
    struct Offsets(Vec<f64>);

    impl ClientObjectives for Offsets {
        fn clients(&self) -> usize {
            self.0.len()
        }
        fn evaluate(
            &self,
            client: usize,
            unit: &[f64],
            _rng: &mut ChaCha8Rng,
        ) -> Result<Evaluation, AlgorithmError> {
            let v = unit.iter().sum::<f64>() + self.0[client];
            Ok(Evaluation {
                observed: v,
                noise_free: v,
            })
        }
    }

    #[test]
    fn per_client_objectives_are_evaluated_by_their_client() {
        let t = Task::per_client(
            "offsets",
            2,
            Sense::Maximise,
            None,
            Arc::new(Offsets(vec![1.0, 5.0])),
        );
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        assert_eq!(
            t.evaluate(1, &[0.25, 0.25], &mut rng).unwrap().observed,
            5.5
        );
        assert_eq!(
            t.evaluate(0, &[0.25, 0.25], &mut rng).unwrap().observed,
            1.5
        );
        assert!(t.evaluate(2, &[0.25, 0.25], &mut rng).is_err());
        assert_eq!(t.clients(), Some(2));
        assert!(t.optimum().is_nan());
        assert_eq!(t.to_domain(&[0.3]), vec![0.3]);
    }
}
