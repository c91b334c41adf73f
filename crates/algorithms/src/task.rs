//! The black-box problems: a named objective on a box, evaluated in the unit
//! cube the models work in.

use crate::AlgorithmError;
use fedhe_bo::objectives::{self, Objective, Sense};
use rand::Rng;

/// A named objective on its box `[lo, hi]^D`, with its sense and optimum.
#[derive(Debug, Clone)]
pub struct Task {
    name: String,
    objective: Objective,
    bounds: (f64, f64),
    sense: Sense,
    optimum: f64,
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
    /// The objective `name` (as `fedhe objective list` prints it) at dimension `dim`.
    pub fn by_name(name: &str, dim: usize) -> Result<Self, AlgorithmError> {
        let objective = Objective::by_name(name, dim)?;
        let info = objectives::list()
            .into_iter()
            .find(|i| i.name == name)
            .ok_or_else(|| crate::error::config("task", format!("unknown function {name:?}")))?;
        Ok(Self {
            name: name.to_string(),
            objective,
            bounds: info.bounds,
            sense: info.sense,
            optimum: info.optimum_value,
        })
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The input dimension.
    pub fn dim(&self) -> usize {
        self.objective.dim()
    }

    /// Whether the objective is minimised or maximised.
    pub fn sense(&self) -> Sense {
        self.sense
    }

    /// The optimum value.
    pub fn optimum(&self) -> f64 {
        self.optimum
    }

    /// Maps a point of the unit cube to the task's box.
    pub fn to_domain(&self, unit: &[f64]) -> Vec<f64> {
        let (lo, hi) = self.bounds;
        unit.iter().map(|u| lo + (hi - lo) * u).collect()
    }

    /// Evaluates at a point of the unit cube; the objective's noise (F4, F17)
    /// comes from `rng`.
    pub fn evaluate<R: Rng + ?Sized>(
        &self,
        unit: &[f64],
        rng: &mut R,
    ) -> Result<Evaluation, AlgorithmError> {
        let x = self.to_domain(unit);
        let noise_free = self.objective.evaluate(&x)?;
        let observed = match &self.objective {
            Objective::Cec2005(f) if f.is_noisy() => f.evaluate_noisy(&x, rng)?,
            _ => noise_free,
        };
        Ok(Evaluation {
            observed,
            noise_free,
        })
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
        let e = t.evaluate(&[0.5; 10], &mut rng).unwrap();
        assert_eq!(e.observed, e.noise_free);
        assert!(t.better(-1.0, 0.0) && t.utility(3.0) == -3.0);
        assert!(Task::by_name("cec2005-f99", 10).is_err());
    }

    #[test]
    fn noisy_functions_observe_noise_but_report_the_clean_value() {
        let t = Task::by_name("cec2005-f4", 10).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let e = t.evaluate(&[0.3; 10], &mut rng).unwrap();
        assert_ne!(e.observed, e.noise_free);
        let clean = Task::by_name("cec2005-f4", 10).unwrap();
        let again = clean.evaluate(&[0.3; 10], &mut rng).unwrap();
        assert_eq!(again.noise_free, e.noise_free);
    }
}
