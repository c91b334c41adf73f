//! Curator 1 of paper 001: Convert-to-Laplace, CTL(ε).

use crate::error::config;
use crate::AlgorithmError;
use fedhe_dp::{LaplaceMechanism, LaplaceParams};
use fedhe_ring::Csprng;

/// CTL(ε) (paper 001, Curator 1): a reward `y = f(x) + η` with `|f| ≤ B` and
/// `|η| ≤ R` leaves the user as `ȳ = y + L`, `L ~ Laplace(𝓛)`,
/// `𝓛 = 2(B + R)/ε`. Rewards lie in an interval of width `2(B + R)`, so this
/// is the Laplace mechanism at sensitivity `2(B + R)`, hence ε-LDP (Lemma 1).
/// The noise is `fedhe_dp`'s exact discrete Laplace on a fine grid.
#[derive(Debug, Clone)]
pub struct ConvertToLaplace {
    mechanism: LaplaceMechanism,
    epsilon: f64,
}

impl ConvertToLaplace {
    /// CTL(ε) for `|f| ≤ B`, `|η| ≤ R`; errors name `epsilon`, `rkhs_bound`, `noise_bound`.
    pub fn new(epsilon: f64, b: f64, r: f64) -> Result<Self, AlgorithmError> {
        for (field, v) in [("epsilon", epsilon), ("rkhs_bound", b), ("noise_bound", r)] {
            crate::error::positive(field, v)?;
        }
        let mechanism = LaplaceParams::for_epsilon(epsilon, 2.0 * (b + r))
            .and_then(LaplaceParams::validate)
            .map_err(|e| config("epsilon", e.to_string()))?;
        Ok(Self { mechanism, epsilon })
    }

    /// The Laplace scale `𝓛 = 2(B + R)/ε`.
    pub fn scale(&self) -> f64 {
        self.mechanism.scale()
    }

    /// The budget ε.
    pub fn epsilon(&self) -> f64 {
        self.epsilon
    }

    /// The private response `ȳ = y + L`.
    pub fn privatize(&self, y: f64, rng: &mut Csprng) -> Result<f64, AlgorithmError> {
        let v = self
            .mechanism
            .privatize(rng, &[y])
            .map_err(|e| config("reward", e.to_string()))?;
        Ok(v[0])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_is_two_b_plus_r_over_epsilon_and_noise_has_laplace_moments() {
        let ctl = ConvertToLaplace::new(0.5, 1.5, 1.0).unwrap();
        assert!((ctl.scale() - 10.0).abs() < 1e-12);
        let mut rng = Csprng::from_u128_seed(11);
        let n = 20_000;
        let draws: Vec<f64> = (0..n)
            .map(|_| ctl.privatize(0.25, &mut rng).unwrap())
            .collect();
        let mean = draws.iter().sum::<f64>() / n as f64;
        let var = draws.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / n as f64;
        // Mean 0.25, variance 2𝓛² = 200; standard errors 0.1 and ≈ 4.5 (kurtosis 6).
        assert!((mean - 0.25).abs() < 0.5, "{mean}");
        assert!((var - 200.0).abs() < 20.0, "{var}");
        // P(|L| > 𝓛 ln 10) = 1/10.
        let tail = draws
            .iter()
            .filter(|d| (*d - 0.25).abs() > 10.0 * 10f64.ln())
            .count();
        assert!((tail as f64 / n as f64 - 0.1).abs() < 0.01, "{tail}");
    }

    #[test]
    fn invalid_budgets_are_refused_by_name() {
        for (e, b, r, field) in [
            (0.0, 1.0, 1.0, "epsilon"),
            (f64::INFINITY, 1.0, 1.0, "epsilon"),
            (1.0, -1.0, 1.0, "rkhs_bound"),
            (1.0, 1.0, 0.0, "noise_bound"),
        ] {
            let err = ConvertToLaplace::new(e, b, r).unwrap_err().to_string();
            assert!(err.contains(field), "{err}");
        }
    }
}
