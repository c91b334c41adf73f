//! Recovery metrics against the truth, with a random-guess baseline.

use crate::linf;
use rand::Rng;

/// How much of the others' data an attack recovered, next to what the same
/// number of uniform random guesses recovers.
#[derive(Debug, Clone, PartialEq)]
pub struct Recovery {
    /// Fraction of true points matched (one-to-one, greedy nearest) by a
    /// recovered input within L∞ 0.01.
    pub inputs_1pct: f64,
    /// The same within 0.05.
    pub inputs_5pct: f64,
    /// Fraction matched within L∞ 0.01 in inputs and 1 % of the true values'
    /// range in value (0 without recovered values).
    pub both_1pct: f64,
    /// The same at 5 %.
    pub both_5pct: f64,
    /// Mean over the random draws of the guesses' `inputs_5pct`.
    pub baseline_mean: f64,
    /// The 0.975 quantile over the draws of the guesses' `inputs_5pct`.
    pub baseline_upper: f64,
}

/// Fraction of `truth` matched one-to-one by `guess` (greedy over the pairs by
/// increasing L∞ distance) within `tol` in inputs and, when values are given,
/// within `vtol` in value.
fn matched(
    truth: &[Vec<f64>],
    truth_values: &[f64],
    guess: &[Vec<f64>],
    guess_values: Option<&[f64]>,
    tol: f64,
    vtol: f64,
) -> f64 {
    if truth.is_empty() {
        return 0.0;
    }
    let mut pairs: Vec<(f64, usize, usize)> = Vec::new();
    for (i, t) in truth.iter().enumerate() {
        for (j, g) in guess.iter().enumerate() {
            let d = linf(t, g);
            let ok_value = match guess_values {
                None => true,
                Some(v) => (v[j] - truth_values[i]).abs() <= vtol,
            };
            if d <= tol && ok_value {
                pairs.push((d, i, j));
            }
        }
    }
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut used_t = vec![false; truth.len()];
    let mut used_g = vec![false; guess.len()];
    let mut count = 0usize;
    for (_, i, j) in pairs {
        if !used_t[i] && !used_g[j] {
            used_t[i] = true;
            used_g[j] = true;
            count += 1;
        }
    }
    count as f64 / truth.len() as f64
}

impl Recovery {
    /// Scores `recovered` (inputs, optional values) against the true
    /// `(inputs, values)`; the baseline draws `draws` sets of as many uniform
    /// guesses (values uniform in the true values' range).
    pub fn evaluate<R: Rng + ?Sized>(
        truth: &[Vec<f64>],
        truth_values: &[f64],
        inputs: &[Vec<f64>],
        values: Option<&[f64]>,
        draws: usize,
        rng: &mut R,
    ) -> Self {
        let lo = truth_values.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = truth_values
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        let range = (hi - lo).max(f64::MIN_POSITIVE);
        let dim = truth.first().map_or(0, Vec::len);
        let both = |tol: f64, vtol: f64| match values {
            None => 0.0,
            Some(v) => matched(truth, truth_values, inputs, Some(v), tol, vtol * range),
        };
        let count = inputs.len().max(truth.len());
        let mut base: Vec<f64> = (0..draws.max(1))
            .map(|_| {
                let g: Vec<Vec<f64>> = (0..count)
                    .map(|_| (0..dim).map(|_| rng.gen::<f64>()).collect())
                    .collect();
                matched(truth, truth_values, &g, None, 0.05, 0.0)
            })
            .collect();
        base.sort_by(f64::total_cmp);
        let mean = base.iter().sum::<f64>() / base.len() as f64;
        let upper = base[((base.len() as f64 * 0.975).ceil() as usize).clamp(1, base.len()) - 1];
        Self {
            inputs_1pct: matched(truth, truth_values, inputs, None, 0.01, 0.0),
            inputs_5pct: matched(truth, truth_values, inputs, None, 0.05, 0.0),
            both_1pct: both(0.01, 0.01),
            both_5pct: both(0.05, 0.05),
            baseline_mean: mean,
            baseline_upper: upper,
        }
    }

    /// Whether the attack did no better than random guessing: its
    /// `inputs_5pct` at most the baseline's 95 % upper limit.
    pub fn within_random_baseline(&self) -> bool {
        self.inputs_5pct <= self.baseline_upper
    }
}
