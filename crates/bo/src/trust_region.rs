//! A trust region for an agent's own steps: TuRBO-1 (Eriksson et al. 2019,
//! "Scalable Global Optimization via Local Bayesian Optimization", §2).
//!
//! The acquisition is maximised in a box around the agent's best point
//! instead of the whole unit cube. The box's base side `L` doubles after
//! `τ_succ = 3` successes in a row and halves after `τ_fail = max(4, D)`
//! failures in a row (a success improves the best value by more than
//! `10⁻³·|best|`), within `[L_min, L_max] = [2⁻⁷, 1.6]`; below `L_min` it
//! restarts at `L_init = 0.8`. Each side is `L` scaled by the GP's
//! length-scale in that direction over their geometric mean, so the box is
//! longer where the model varies slowly (TuRBO's weighting), and it is
//! clipped to the unit cube. Coordinates marked free (a categorical's
//! one-hot coordinates, [`TrustRegion::bounds_with_free`]) span the whole
//! cube: the region bounds how far the continuous inputs move, never which
//! choice a categorical takes.
//!
//! The agent keeps its data across a restart (TuRBO starts a fresh design):
//! in fedhe the region is one of several uses of the same data set, and a
//! restart only widens the search again.

use crate::error::invalid;
use crate::optim::Bounds;
use crate::BoError;

/// `L_init`: the base side at the start and after a restart.
pub const LENGTH_INIT: f64 = 0.8;
/// `L_min`: below it the region restarts.
pub const LENGTH_MIN: f64 = 1.0 / 128.0;
/// `L_max`.
pub const LENGTH_MAX: f64 = 1.6;
/// `τ_succ`: successes in a row that double the side.
pub const SUCCESS_TOLERANCE: usize = 3;
/// The relative improvement that counts as a success.
pub const SUCCESS_MARGIN: f64 = 1e-3;

/// The state of one agent's trust region.
#[derive(Debug, Clone, PartialEq)]
pub struct TrustRegion {
    length: f64,
    successes: usize,
    failures: usize,
    failure_tolerance: usize,
    best: Option<f64>,
    restarts: usize,
}

impl TrustRegion {
    /// A region at `L_init` in dimension `dim` (`τ_fail = max(4, dim)`: TuRBO's
    /// `⌈max(4/q, D/q)⌉` with one point a step).
    pub fn new(dim: usize) -> Self {
        Self {
            length: LENGTH_INIT,
            successes: 0,
            failures: 0,
            failure_tolerance: dim.max(4),
            best: None,
            restarts: 0,
        }
    }

    /// The base side `L`.
    pub fn length(&self) -> f64 {
        self.length
    }

    /// How many times the region has restarted.
    pub fn restarts(&self) -> usize {
        self.restarts
    }

    /// Records the best utility (larger is better) the agent holds before its
    /// next step: a success when it improved on the best at the previous call
    /// by more than `10⁻³·|best|`, a failure otherwise (the first call only
    /// records it). Updates the side as TuRBO does.
    pub fn observe(&mut self, best: f64) {
        let Some(previous) = self.best else {
            self.best = Some(best);
            return;
        };
        if best > previous + SUCCESS_MARGIN * previous.abs() {
            self.successes += 1;
            self.failures = 0;
        } else {
            self.successes = 0;
            self.failures += 1;
        }
        self.best = Some(best.max(previous));
        if self.successes == SUCCESS_TOLERANCE {
            self.length = (2.0 * self.length).min(LENGTH_MAX);
            self.successes = 0;
        } else if self.failures == self.failure_tolerance {
            self.length /= 2.0;
            self.failures = 0;
        }
        if self.length < LENGTH_MIN {
            self.length = LENGTH_INIT;
            self.restarts += 1;
        }
    }

    /// The box around `centre` (a point of the unit cube): side
    /// `L·λ_i / (Π λ_j)^(1/D)` in direction `i` for the length-scales
    /// `exp(log_lengthscales)` (all equal when `None`), clipped to the cube.
    pub fn bounds(
        &self,
        centre: &[f64],
        log_lengthscales: Option<&[f64]>,
    ) -> Result<Bounds, BoError> {
        self.bounds_with_free(centre, log_lengthscales, &vec![false; centre.len()])
    }

    /// [`TrustRegion::bounds`] with the coordinates where `free` holds
    /// spanning the whole `[0, 1]`, and the others' sides weighted by their
    /// own length-scales' geometric mean (`D` the number of those). A
    /// categorical's one-hot coordinates are free: a box around the best
    /// point's vertex would hold every candidate to the best point's choice
    /// (its canonical point is the largest coordinate's choice), so the
    /// search could not leave that choice while the side is under 1. The
    /// continuous box should not decide the choice: CASMOPOLITAN (Wan et
    /// al. 2021) bounds the categories by a Hamming ball of their own; here
    /// that ball holds every combination. Without a free coordinate this is
    /// [`TrustRegion::bounds`] to the bit.
    pub fn bounds_with_free(
        &self,
        centre: &[f64],
        log_lengthscales: Option<&[f64]>,
        free: &[bool],
    ) -> Result<Bounds, BoError> {
        let dim = centre.len();
        if centre.iter().any(|c| !(0.0..=1.0).contains(c)) {
            return Err(invalid("trust region centre", "must lie in the unit cube"));
        }
        if free.len() != dim {
            return Err(fedhe_gp::GpError::Dimension {
                what: "trust region free coordinates",
                expected: dim,
                got: free.len(),
            }
            .into());
        }
        let weights: Vec<f64> = match log_lengthscales {
            None => vec![1.0; dim],
            Some(log) => {
                if log.len() != dim || log.iter().any(|v| !v.is_finite()) {
                    return Err(fedhe_gp::GpError::Dimension {
                        what: "trust region length-scales",
                        expected: dim,
                        got: log.len(),
                    }
                    .into());
                }
                let bound: Vec<f64> = log
                    .iter()
                    .zip(free)
                    .filter(|(_, f)| !**f)
                    .map(|(l, _)| *l)
                    .collect();
                let mean = bound.iter().sum::<f64>() / bound.len().max(1) as f64;
                log.iter().map(|l| (l - mean).exp()).collect()
            }
        };
        let (lower, upper) = centre
            .iter()
            .zip(&weights)
            .zip(free)
            .map(|((c, w), f)| {
                if *f {
                    return (0.0, 1.0);
                }
                let half = 0.5 * self.length * w;
                ((c - half).max(0.0), (c + half).min(1.0))
            })
            .unzip();
        Bounds::new(lower, upper)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_side_follows_turbo_s_schedule() {
        let mut tr = TrustRegion::new(10);
        tr.observe(-100.0);
        assert_eq!(tr.length(), LENGTH_INIT);
        // Three successes double it.
        for b in [-90.0, -80.0, -70.0] {
            tr.observe(b);
        }
        assert_eq!(tr.length(), 1.6);
        // Three more are capped at L_max.
        for b in [-60.0, -50.0, -40.0] {
            tr.observe(b);
        }
        assert_eq!(tr.length(), LENGTH_MAX);
        // τ_fail = max(4, 10) = 10 failures halve it; an improvement under
        // 10⁻³·|best| is a failure.
        for _ in 0..9 {
            tr.observe(-40.0 + 0.03);
        }
        assert_eq!(tr.length(), LENGTH_MAX);
        tr.observe(-40.0);
        assert_eq!(tr.length(), 0.8);
        // A success resets the failures.
        for _ in 0..5 {
            tr.observe(-40.0);
        }
        tr.observe(-30.0);
        for _ in 0..9 {
            tr.observe(-30.0);
        }
        assert_eq!(tr.length(), 0.8);
        // Halving below 2⁻⁷ restarts at L_init: 0.8 / 2⁷ = 0.00625 < 1/128,
        // the 7th halving, after 1 + 6 · 10 more failures.
        for _ in 0..61 {
            tr.observe(-30.0);
        }
        assert_eq!(tr.restarts(), 1);
        assert_eq!(tr.length(), LENGTH_INIT);
        // In 2-D the failure tolerance is 4.
        let mut small = TrustRegion::new(2);
        for _ in 0..5 {
            small.observe(1.0);
        }
        assert_eq!(small.length(), 0.4);
    }

    #[test]
    fn the_box_is_weighted_by_length_scales_and_clipped_to_the_cube() {
        let tr = TrustRegion::new(2);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        let b = tr.bounds(&[0.5, 0.5], None).unwrap();
        assert!((0..2).all(|i| close(b.lower()[i], 0.1) && close(b.upper()[i], 0.9)));
        // Length-scales 0.4 and 0.1: weights 2 and 1/2 (geometric mean 0.2).
        let log = [0.4f64.ln(), 0.1f64.ln()];
        let b = tr.bounds(&[0.5, 0.95], Some(&log)).unwrap();
        assert!(close(b.lower()[0], 0.0) && close(b.upper()[0], 1.0));
        assert!(close(b.lower()[1], 0.75) && close(b.upper()[1], 1.0));
        // The product of the unclipped sides is L^D whatever the weights.
        let b = tr.bounds(&[0.5, 0.5], Some(&[0.0, 0.8f64.ln()])).unwrap();
        let volume: f64 = (0..2).map(|i| b.upper()[i] - b.lower()[i]).product();
        assert!(close(volume, 0.8 * 0.8));
        assert!(tr.bounds(&[1.5, 0.5], None).is_err());
        assert!(tr.bounds(&[0.5, 0.5], Some(&[0.0])).is_err());
    }

    #[test]
    fn a_free_coordinate_spans_the_cube_and_the_others_share_the_weights() {
        let tr = TrustRegion::new(3);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        // Length-scales 0.4, 0.1 and 50 (a one-hot coordinate the model
        // ignores): the bound two are weighted by their own geometric mean,
        // 0.2, as in the 2-D case above, whatever the free one's.
        let log = [0.4f64.ln(), 0.1f64.ln(), 50f64.ln()];
        let b = tr
            .bounds_with_free(&[0.5, 0.5, 1.0], Some(&log), &[false, false, true])
            .unwrap();
        assert!(close(b.lower()[0], 0.0) && close(b.upper()[0], 1.0));
        assert!(close(b.lower()[1], 0.3) && close(b.upper()[1], 0.7));
        assert!(close(b.lower()[2], 0.0) && close(b.upper()[2], 1.0));
        // Nothing free: `bounds` to the bit.
        let none = [false; 3];
        for centre in [[0.5, 0.5, 1.0], [0.1, 0.9, 0.3]] {
            assert_eq!(
                tr.bounds_with_free(&centre, Some(&log), &none).unwrap(),
                tr.bounds(&centre, Some(&log)).unwrap()
            );
        }
        // Everything free: the cube.
        let all = tr
            .bounds_with_free(&[0.2, 0.7, 0.0], Some(&log), &[true; 3])
            .unwrap();
        assert_eq!(all, Bounds::unit(3).unwrap());
        assert!(tr
            .bounds_with_free(&[0.5, 0.5, 0.5], None, &[true])
            .is_err());
    }
}
