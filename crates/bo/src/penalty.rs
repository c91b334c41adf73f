//! Local penalisation of a batch (González, Dai, Hennig & Lawrence 2016,
//! "Batch Bayesian optimization via local penalization", AISTATS): the next
//! point of a batch maximises the acquisition times one penalty per point
//! already chosen, each the probability that the chosen point `x_j` is not
//! the maximiser's ball, so the batch spreads without new evaluations.
//!
//! Everything here works in log space: `log g(x) + Σ_j log φ(x; x_j)`, where
//! `g` is a positive transform of the acquisition (LogEI and LogPI are
//! already logarithms; UCB goes through a softplus, as in the paper §3.3).

use crate::acquisition::{dlog_normal_cdf, log_normal_cdf};
use crate::error::invalid;
use crate::BoError;
use fedhe_gp::exact::PointPrediction;

/// The penalty of one chosen point `x_j`:
/// `φ(x; x_j) = ½ erfc(−z)`, `z = (L‖x_j − x‖ − M + μ(x_j)) / √(2σ²(x_j))`
/// (González et al. 2016, eq. 4 with Lemma 1's ball radius
/// `r_j = (M − f(x_j))/L`), i.e. `Φ((L‖x_j − x‖ − M + μ(x_j))/σ(x_j))`.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalPenalty {
    centre: Vec<f64>,
    mean: f64,
    sigma: f64,
    lipschitz: f64,
    max: f64,
}

/// The smallest posterior deviation a penalty divides by.
const MIN_SIGMA: f64 = 1e-9;

impl LocalPenalty {
    /// The penalty around `centre`, where the posterior is `at_centre`, for a
    /// function with Lipschitz constant `lipschitz` and maximum `max` (both
    /// estimates; see [`lipschitz_and_max`]).
    pub fn new(
        centre: Vec<f64>,
        at_centre: &PointPrediction,
        lipschitz: f64,
        max: f64,
    ) -> Result<Self, BoError> {
        if !(lipschitz.is_finite() && lipschitz > 0.0) {
            return Err(invalid(
                "lipschitz",
                format!("must be finite and > 0, got {lipschitz}"),
            ));
        }
        if !(max.is_finite() && at_centre.mean.is_finite() && at_centre.variance.is_finite()) {
            return Err(invalid(
                "max",
                "the maximum and the posterior must be finite",
            ));
        }
        Ok(Self {
            centre,
            mean: at_centre.mean,
            sigma: at_centre.variance.max(0.0).sqrt().max(MIN_SIGMA),
            lipschitz,
            max,
        })
    }

    /// `log φ(x; x_j)` and its gradient in `x`. At the centre itself the
    /// gradient is zero (the distance is not differentiable there).
    pub fn log_value_and_grad(&self, x: &[f64]) -> (f64, Vec<f64>) {
        let diff: Vec<f64> = x.iter().zip(&self.centre).map(|(a, c)| a - c).collect();
        let distance = diff.iter().map(|d| d * d).sum::<f64>().sqrt();
        let w = (self.lipschitz * distance - self.max + self.mean) / self.sigma;
        let value = log_normal_cdf(w);
        let grad = if distance > 1e-12 {
            let slope = dlog_normal_cdf(w) * self.lipschitz / (self.sigma * distance);
            diff.iter().map(|d| slope * d).collect()
        } else {
            vec![0.0; x.len()]
        };
        (value, grad)
    }
}

/// `log softplus(u) = log ln(1 + eᵘ)` and its derivative in `u`: the positive
/// transform of an acquisition that can be negative (UCB) before its log is
/// penalised.
pub fn log_softplus(u: f64) -> (f64, f64) {
    if u < -30.0 {
        // softplus(u) = eᵘ (1 − eᵘ/2 + …): log is u, slope 1.
        (u, 1.0)
    } else {
        let softplus = if u > 30.0 {
            u + (-u).exp().ln_1p()
        } else {
            u.exp().ln_1p()
        };
        let sigmoid = 1.0 / (1.0 + (-u).exp());
        (softplus.ln(), sigmoid / softplus)
    }
}

/// The estimates the penalties need from posterior predictions at sample
/// points: `L = max ‖∇μ‖` and `M = max (μ + κσ)` (González et al. 2016, §3.2,
/// with the maximum over a sample instead of an inner optimisation). The
/// paper's `M` is the largest observed value (`κ = 0`); then a chosen point
/// where the posterior is near its maximum and nearly certain gets a ball of
/// radius `(M − μ(x_j))/L ≈ 0` and the batch does not spread (the test of
/// `propose_batch` in `fedhe-algorithms` sees four points within 10⁻³). An
/// optimistic `κ > 0` keeps every ball open by the posterior's own
/// uncertainty elsewhere. A flat mean (`L < 10⁻⁷`) gets the paper's fallback
/// `L = 10`. `None` for no sample.
pub fn lipschitz_and_max(predictions: &[PointPrediction], kappa: f64) -> Option<(f64, f64)> {
    let max = predictions
        .iter()
        .map(|p| p.mean + kappa * p.variance.max(0.0).sqrt())
        .filter(|m| m.is_finite())
        .reduce(f64::max)?;
    let lipschitz = predictions
        .iter()
        .map(|p| p.mean_grad.iter().map(|g| g * g).sum::<f64>().sqrt())
        .filter(|l| l.is_finite())
        .fold(0.0, f64::max);
    Some((if lipschitz < 1e-7 { 10.0 } else { lipschitz }, max))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::acquisition::normal_cdf;

    fn at(mean: f64, variance: f64) -> PointPrediction {
        PointPrediction {
            mean,
            variance,
            mean_grad: vec![0.0, 0.0],
            variance_grad: vec![0.0, 0.0],
        }
    }

    /// The paper's form `½ erfc(−z)`, `z = (L d − M + μ)/√(2σ²)`, computed
    /// directly, against the log-space implementation; and the gradient
    /// against central differences.
    #[test]
    fn the_penalty_is_the_papers_formula_with_its_gradient() {
        let (l, m, mu, var) = (3.0, 1.5, 0.4, 0.25);
        let p = LocalPenalty::new(vec![0.2, 0.7], &at(mu, var), l, m).unwrap();
        for x in [[0.2, 0.7], [0.3, 0.6], [0.9, 0.1], [0.21, 0.69]] {
            let d = ((x[0] - 0.2f64).powi(2) + (x[1] - 0.7f64).powi(2)).sqrt();
            let z = (l * d - m + mu) / (2.0 * var).sqrt();
            let paper = 0.5 * libm::erfc(-z);
            let (log_value, grad) = p.log_value_and_grad(&x);
            assert!((log_value.exp() - paper).abs() < 1e-14, "{x:?}");
            if d > 0.0 {
                for k in 0..2 {
                    let h = 1e-6;
                    let (mut a, mut b) = (x, x);
                    a[k] += h;
                    b[k] -= h;
                    let fd = (p.log_value_and_grad(&a).0 - p.log_value_and_grad(&b).0) / (2.0 * h);
                    assert!(
                        (fd - grad[k]).abs() < 1e-6 * (1.0 + fd.abs()),
                        "{k}: {fd} vs {}",
                        grad[k]
                    );
                }
            }
        }
        // At the centre the penalty is Φ((μ − M)/σ) (< ½ when μ < M) and far
        // away it tends to 1.
        let centre = p.log_value_and_grad(&[0.2, 0.7]).0.exp();
        assert!((centre - normal_cdf((mu - m) / var.sqrt())).abs() < 1e-15);
        assert!(p.log_value_and_grad(&[5.0, 5.0]).0 > -1e-12);
    }

    #[test]
    fn log_softplus_is_stable_and_has_its_slope() {
        for u in [-50.0, -31.0, -29.0, -3.0, 0.0, 2.5, 29.0, 31.0, 200.0] {
            let (v, slope) = log_softplus(u);
            let reference = u.exp().ln_1p();
            if u < 30.0 && u > -700.0 {
                assert!((v - reference.ln()).abs() < 1e-9 * (1.0 + v.abs()), "{u}");
            }
            let h = 1e-5;
            let fd = (log_softplus(u + h).0 - log_softplus(u - h).0) / (2.0 * h);
            assert!((fd - slope).abs() < 1e-5, "{u}: {fd} vs {slope}");
        }
    }

    #[test]
    fn estimates_take_the_largest_gradient_and_mean_and_refuse_bad_input() {
        let mut a = at(0.3, 1.0);
        a.mean_grad = vec![3.0, 4.0];
        let b = at(0.9, 1.0);
        assert_eq!(
            lipschitz_and_max(&[a.clone(), b.clone()], 0.0),
            Some((5.0, 0.9))
        );
        assert_eq!(
            lipschitz_and_max(std::slice::from_ref(&b), 0.0),
            Some((10.0, 0.9))
        );
        // κ = 2 with unit variances: M = max(μ + 2).
        assert_eq!(lipschitz_and_max(&[a, b.clone()], 2.0), Some((5.0, 2.9)));
        assert_eq!(lipschitz_and_max(&[], 2.0), None);
        let err = LocalPenalty::new(vec![0.0], &b, 0.0, 1.0).unwrap_err();
        assert!(err.to_string().contains("lipschitz"), "{err}");
    }
}
