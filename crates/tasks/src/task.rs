//! The black-box problem an algorithm optimises: a name, a sense, and either
//! one benchmark every client shares or a [`Problem`] with an objective per
//! client, evaluated in the unit cube the models work in.
//!
//! Tasks are built by name in [`crate::registry`]; this module does not import
//! the registry or the families of problems (only the benchmark functions a
//! shared task holds), so nothing here closes an import circle.

use crate::benchmarks::Objective;
use crate::problem::{Evaluation, Problem, Sense};
use crate::space::Space;
use crate::TaskError;
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

/// What a task evaluates.
#[derive(Debug, Clone)]
enum Objectives {
    /// One objective on the box `[lo, hi]^D` that every client shares.
    Shared {
        objective: Objective,
        bounds: (f64, f64),
    },
    /// One objective per client.
    PerClient(Arc<dyn Problem>),
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
    /// The typed space the cube encodes (issue 46); none for a box of floats.
    space: Option<Arc<Space>>,
}

impl Task {
    /// A task every client evaluates on the same benchmark `objective`, in
    /// the box `bounds` (the same in every coordinate).
    pub fn shared(
        name: impl Into<String>,
        objective: Objective,
        bounds: (f64, f64),
        sense: Sense,
        optimum: Option<f64>,
    ) -> Self {
        Self {
            name: name.into(),
            dim: objective.dim(),
            sense,
            optimum,
            objectives: Objectives::Shared { objective, bounds },
            space: None,
        }
    }

    /// A task whose clients each evaluate their own objective.
    pub fn per_client(
        name: impl Into<String>,
        dim: usize,
        sense: Sense,
        optimum: Option<f64>,
        objectives: Arc<dyn Problem>,
    ) -> Self {
        Self {
            name: name.into(),
            dim,
            sense,
            optimum,
            objectives: Objectives::PerClient(objectives),
            space: None,
        }
    }

    /// The task searching the typed `space` (issue 46): its cube is the
    /// space's encoding, so the dimensions must agree.
    pub fn with_space(mut self, space: Arc<Space>) -> Result<Self, TaskError> {
        if space.dim() != self.dim {
            return Err(crate::error::config(
                "space",
                format!(
                    "the space encodes to {} coordinates, but task {} has {}",
                    space.dim(),
                    self.name,
                    self.dim
                ),
            ));
        }
        self.space = Some(space);
        Ok(self)
    }

    /// The typed space, when the task has one.
    pub fn space(&self) -> Option<&Space> {
        self.space.as_deref()
    }

    /// The point a method evaluates and records for its proposal `unit`:
    /// [`Space::canonical`] when the task has a typed space (an integer at its
    /// cell, a choice at its vertex), `unit` itself otherwise. Every method
    /// that takes a space calls it before [`Task::evaluate`], so its model
    /// sees only points that can be evaluated.
    pub fn canonical(&self, unit: Vec<f64>) -> Vec<f64> {
        match &self.space {
            Some(space) => space.canonical(&unit),
            None => unit,
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
    ) -> Result<Evaluation, TaskError> {
        match &self.objectives {
            Objectives::Shared { objective, .. } => {
                let x = self.to_domain(unit);
                let noise_free = objective.evaluate(&x)?;
                let observed = objective.observe(&x, rng)?;
                Ok(Evaluation {
                    observed,
                    noise_free,
                })
            }
            Objectives::PerClient(o) => {
                self.check_client(o.as_ref(), client)?;
                o.evaluate(client, unit, rng)
            }
        }
    }

    /// [`Self::evaluate`] by client `client` at each of `units` in order,
    /// the noise from one ChaCha8 stream seeded by `seed`: what `fedhe
    /// objective eval --client` prints.
    pub fn evaluate_seeded(
        &self,
        client: usize,
        units: &[Vec<f64>],
        seed: u64,
    ) -> Result<Vec<Evaluation>, TaskError> {
        use rand::SeedableRng;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        units
            .iter()
            .map(|u| self.evaluate(client, u, &mut rng))
            .collect()
    }

    /// Client `client`'s noise-free value at a point of the unit cube, for
    /// diagnostics ([`Problem::noise_free`]); `rng` is drawn from as
    /// [`Task::evaluate`] draws from it.
    pub fn noise_free(
        &self,
        client: usize,
        unit: &[f64],
        rng: &mut ChaCha8Rng,
    ) -> Result<f64, TaskError> {
        match &self.objectives {
            Objectives::Shared { .. } => self.evaluate(client, unit, rng).map(|e| e.noise_free),
            Objectives::PerClient(o) => {
                self.check_client(o.as_ref(), client)?;
                o.noise_free(client, unit, rng)
            }
        }
    }

    fn check_client(&self, o: &dyn Problem, client: usize) -> Result<(), TaskError> {
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
        Ok(())
    }

    /// Whether `a` is a better value than `b`.
    pub fn better(&self, a: f64, b: f64) -> bool {
        self.sense.better(a, b)
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

    #[derive(Debug)]
    struct Offsets(Vec<f64>);

    impl Problem for Offsets {
        fn clients(&self) -> usize {
            self.0.len()
        }
        fn evaluate(
            &self,
            client: usize,
            unit: &[f64],
            _rng: &mut ChaCha8Rng,
        ) -> Result<Evaluation, TaskError> {
            let v = unit.iter().sum::<f64>() + self.0[client];
            Ok(Evaluation::exact(v))
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
