//! From an RDP curve to (ε, δ)-DP.

use super::PrivacyLoss;

/// The classic conversion (Mironov 2017, "Rényi differential privacy",
/// Prop. 3; Abadi et al. 2016, Thm. 2 with α_M(λ) = λ·ε(λ+1)):
///
/// ε = min_α [ ε_RDP(α) + log(1/δ) / (α − 1) ].
///
/// `rdp[i]` is the (already composed) RDP at `orders[i]`; ties go to the
/// first order. Orders ≤ 1 are skipped.
pub fn epsilon_classic(orders: &[f64], rdp: &[f64], delta: f64) -> PrivacyLoss {
    let log_inv_delta = -delta.ln();
    let mut best = PrivacyLoss {
        epsilon: f64::INFINITY,
        order: orders.first().copied().unwrap_or(f64::NAN),
    };
    for (&a, &r) in orders.iter().zip(rdp) {
        if a <= 1.0 {
            continue;
        }
        let eps = r + log_inv_delta / (a - 1.0);
        if eps < best.epsilon {
            best = PrivacyLoss {
                epsilon: eps,
                order: a,
            };
        }
    }
    best
}

/// The improved conversion of dp-accounting's `compute_epsilon` (Balle et al.
/// 2020, "Hypothesis testing interpretations and Rényi DP", Prop. 12;
/// Asoodeh et al. 2020, eq. 20):
///
/// ε(α) = ε_RDP(α) + log(1 − 1/α) − log(δ·α)/(α − 1)   for α > 1.01,
///
/// with ε(α) = 0 when δ² + expm1(−ε_RDP) > 0 (then δ ≥ √(1 − e^(−KL)) already
/// bounds the total variation) or ε_RDP < 0, and ∞ for α ≤ 1.01. The result is
/// max(0, min_α ε(α)) at the first minimising order, exactly as dp-accounting.
pub fn epsilon_improved(orders: &[f64], rdp: &[f64], delta: f64) -> PrivacyLoss {
    let mut best: Option<PrivacyLoss> = None;
    for (&a, &r) in orders.iter().zip(rdp) {
        let eps = if r < 0.0 || delta * delta + (-r).exp_m1() > 0.0 {
            0.0
        } else if a > 1.01 {
            r + (-1.0 / a).ln_1p() - (delta * a).ln() / (a - 1.0)
        } else {
            f64::INFINITY
        };
        if best.is_none_or(|b| eps < b.epsilon) {
            best = Some(PrivacyLoss {
                epsilon: eps,
                order: a,
            });
        }
    }
    let best = best.unwrap_or(PrivacyLoss {
        epsilon: f64::INFINITY,
        order: f64::NAN,
    });
    PrivacyLoss {
        epsilon: best.epsilon.max(0.0),
        order: best.order,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classic_picks_the_minimising_order() {
        // ε_RDP(α) = α/2 (Gaussian, z = 1): ε(α) = α/2 + L/(α−1), minimum near α = 1 + √(2L).
        let orders: Vec<f64> = (2..=33).map(f64::from).collect();
        let rdp: Vec<f64> = orders.iter().map(|a| a / 2.0).collect();
        let delta: f64 = 1e-5;
        let l = -delta.ln();
        let loss = epsilon_classic(&orders, &rdp, delta);
        let brute = orders
            .iter()
            .map(|a| a / 2.0 + l / (a - 1.0))
            .fold(f64::INFINITY, f64::min);
        assert_eq!(loss.epsilon, brute);
        assert_eq!(loss.order, (1.0 + (2.0 * l).sqrt()).round());
    }

    #[test]
    fn improved_is_tighter_than_classic() {
        let orders: Vec<f64> = (2..=64).map(f64::from).collect();
        let rdp: Vec<f64> = orders.iter().map(|a| 0.1 * a).collect();
        for delta in [1e-8, 1e-5, 1e-2] {
            let c = epsilon_classic(&orders, &rdp, delta);
            let i = epsilon_improved(&orders, &rdp, delta);
            assert!(i.epsilon < c.epsilon, "{delta}: {i:?} vs {c:?}");
        }
    }

    #[test]
    fn improved_is_zero_when_kl_bound_suffices() {
        // δ² > 1 − e^(−ε_RDP): tiny divergence, large δ.
        let loss = epsilon_improved(&[2.0, 3.0], &[1e-6, 2e-6], 0.1);
        assert_eq!(loss.epsilon, 0.0);
        assert_eq!(loss.order, 2.0);
    }

    #[test]
    fn improved_skips_infinite_orders() {
        let loss = epsilon_improved(&[1.5, 2.0, 3.0], &[f64::INFINITY, 1.0, f64::INFINITY], 1e-5);
        let expected = 1.0 + (-0.5f64).ln_1p() - (1e-5f64 * 2.0).ln();
        assert_eq!(loss.order, 2.0);
        assert!((loss.epsilon - expected).abs() < 1e-12);
    }
}
