//! Mixing schedules `p_t`: the probability, at round `t ≥ 1`, of taking a *local*
//! step (own surrogate) rather than a *global* one (aggregate).
//!
//! Paper 004 §4.3 uses `p_t = 1 − t^{−c}` for `0 < c ≤ 1`, which satisfies its
//! eq. (3) (`Σ (1 − p_t) = ∞`, monotone increasing); FTS (paper 002) uses
//! `1 − 1/t²` and `1 − 1/√t`. All are one family, `1 − t^{−c}`, so they are one type.

use crate::error::invalid;
use crate::BoError;
use rand::Rng;

/// `p_t = 1 − t^{−c}`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MixingSchedule {
    exponent: f64,
}

impl MixingSchedule {
    /// `p_t = 1 − t^{−c}` for a finite `c > 0`.
    pub fn power(c: f64) -> Result<Self, BoError> {
        if c.is_finite() && c > 0.0 {
            Ok(Self { exponent: c })
        } else {
            Err(invalid(
                "mixing exponent",
                format!("{c} is not finite and positive"),
            ))
        }
    }

    /// The paper 004 choices `c ∈ {0.25, 0.5, 0.75, 1}`.
    pub fn fbo_fedgp_choices() -> [Self; 4] {
        [0.25, 0.5, 0.75, 1.0].map(|c| Self { exponent: c })
    }

    /// FTS's `p_t = 1 − 1/t²` (`c = 2`).
    pub fn fts_inverse_square() -> Self {
        Self { exponent: 2.0 }
    }

    /// FTS's and FBO-FedGP's default `p_t = 1 − 1/√t` (`c = 0.5`).
    pub fn fts_inverse_sqrt() -> Self {
        Self { exponent: 0.5 }
    }

    /// The exponent `c`.
    pub fn exponent(&self) -> f64 {
        self.exponent
    }

    /// `p_t` for round `t ≥ 1` (`p_1 = 0`: the first round is always global).
    pub fn probability(&self, t: usize) -> Result<f64, BoError> {
        if t == 0 {
            return Err(invalid("round", "rounds are numbered from 1"));
        }
        Ok(1.0 - (t as f64).powf(-self.exponent))
    }

    /// Draws whether round `t` takes a local step (probability `p_t`).
    pub fn choose_local<R: Rng + ?Sized>(&self, t: usize, rng: &mut R) -> Result<bool, BoError> {
        let p = self.probability(t)?;
        Ok(rng.gen::<f64>() < p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn values_match_closed_forms() {
        let s = MixingSchedule::fts_inverse_sqrt();
        assert_eq!(s.probability(1).unwrap(), 0.0);
        assert!((s.probability(4).unwrap() - 0.5).abs() < 1e-15);
        assert!(
            (MixingSchedule::fts_inverse_square()
                .probability(10)
                .unwrap()
                - 0.99)
                .abs()
                < 1e-15
        );
        assert!(
            (MixingSchedule::power(0.25)
                .unwrap()
                .probability(16)
                .unwrap()
                - 0.5)
                .abs()
                < 1e-15
        );
        assert!((MixingSchedule::power(1.0).unwrap().probability(5).unwrap() - 0.8).abs() < 1e-15);
    }

    #[test]
    fn schedules_increase_towards_one() {
        for s in MixingSchedule::fbo_fedgp_choices() {
            let ps: Vec<f64> = (1..200).map(|t| s.probability(t).unwrap()).collect();
            assert!(ps.windows(2).all(|w| w[1] > w[0]));
            assert!(ps.iter().all(|p| (0.0..1.0).contains(p)));
        }
    }

    #[test]
    fn draws_follow_the_probability() {
        let s = MixingSchedule::fts_inverse_sqrt();
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let n = 20_000;
        let local = (0..n)
            .filter(|_| s.choose_local(4, &mut rng).unwrap())
            .count();
        // p_4 = 0.5; standard error 0.0035.
        assert!((local as f64 / n as f64 - 0.5).abs() < 0.02);
        assert!(!s.choose_local(1, &mut rng).unwrap());
    }

    #[test]
    fn invalid_inputs_are_rejected() {
        assert!(MixingSchedule::power(0.0).is_err());
        assert!(MixingSchedule::power(f64::NAN).is_err());
        assert!(MixingSchedule::fts_inverse_sqrt().probability(0).is_err());
    }
}
