//! What a client evaluates: the [`Problem`] trait, one [`Evaluation`], and
//! whether the optimum is a minimum or a maximum ([`Sense`]).
//!
//! This module imports nothing else of the crate, so that every family of
//! problems (benchmarks, synthetic federations, SEIR, SVM) and the [`Task`]
//! that wraps them can depend on it without an import circle.
//!
//! [`Task`]: crate::Task

use crate::TaskError;
use rand_chacha::ChaCha8Rng;

/// Per-client objectives: each institution evaluates its own function (its own
/// data, a perturbed copy of a shared function), on the unit cube.
pub trait Problem: Send + Sync + std::fmt::Debug {
    /// How many clients the task has objectives for.
    fn clients(&self) -> usize;

    /// Client `client`'s evaluation at `unit` (the unit cube); `noise_free` is
    /// the value reported as the client's result.
    fn evaluate(
        &self,
        client: usize,
        unit: &[f64],
        rng: &mut ChaCha8Rng,
    ) -> Result<Evaluation, TaskError>;

    /// Client `client`'s noise-free value at `unit`, for a simulator's
    /// diagnostics (regret, the trace of a run): it is never one of an
    /// institution's evaluations, so an objective that counts or records its
    /// evaluations (a journal, a test's recorder) may answer it apart. By
    /// default the noise-free part of [`Problem::evaluate`].
    fn noise_free(
        &self,
        client: usize,
        unit: &[f64],
        rng: &mut ChaCha8Rng,
    ) -> Result<f64, TaskError> {
        self.evaluate(client, unit, rng).map(|e| e.noise_free)
    }

    /// Client `client`'s optimum (noise-free) value, when known; simple regret
    /// is measured against it.
    fn optimum(&self, _client: usize) -> Option<f64> {
        None
    }
}

/// One evaluation: what the client observes and the noise-free value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Evaluation {
    /// The observed value (with the objective's own noise, e.g. F4, F17).
    pub observed: f64,
    /// The noise-free value, used only to report the best found.
    pub noise_free: f64,
}

impl Evaluation {
    /// The evaluation of an objective without observation noise: what is
    /// observed is the value.
    pub fn exact(value: f64) -> Self {
        Self {
            observed: value,
            noise_free: value,
        }
    }
}

/// Whether an objective's optimum is its minimum or its maximum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sense {
    /// The optimum is the minimum.
    Minimise,
    /// The optimum is the maximum.
    Maximise,
}

impl Sense {
    /// `"minimise"` or `"maximise"`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Sense::Minimise => "minimise",
            Sense::Maximise => "maximise",
        }
    }

    /// Whether `a` is a better value than `b` (smaller when minimising).
    pub fn better(&self, a: f64, b: f64) -> bool {
        match self {
            Sense::Minimise => a < b,
            Sense::Maximise => a > b,
        }
    }

    /// The sense [`Sense::as_str`] prints, or `None` for any other text
    /// (configs and study files spell it out; no abbreviation is guessed).
    pub fn from_name(name: &str) -> Option<Self> {
        [Sense::Minimise, Sense::Maximise]
            .into_iter()
            .find(|s| s.as_str() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn senses_round_trip_through_their_names() {
        for s in [Sense::Minimise, Sense::Maximise] {
            assert_eq!(Sense::from_name(s.as_str()), Some(s));
        }
        assert_eq!(Sense::from_name("min"), None);
    }
}
