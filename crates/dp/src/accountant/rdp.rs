//! Rényi DP of the Poisson-subsampled Gaussian mechanism.
//!
//! For sampling rate q and noise multiplier z (noise σ = z·Δ₂), one step
//! satisfies (α, ε(α))-RDP with ε(α) = log A_α / (α − 1) (Mironov, Talwar,
//! Zhang 2019, "Rényi differential privacy of the sampled Gaussian mechanism",
//! arXiv:1908.10530, §3), where A_α = E_{x∼μ₀}[(μ(x)/μ₀(x))^α] for
//! μ₀ = N(0, z²), μ = (1−q)μ₀ + q·N(1, z²).
//!
//! - Integer α (§3.2, eq. for A_α as a binomial expansion; the log moment of
//!   Abadi et al. 2016 at λ = α − 1):
//!   A_α = Σ_{k=0}^{α} C(α, k) (1−q)^{α−k} q^k exp((k² − k)/(2z²)).
//! - Fractional α (§3.3): A_α = A₀ + A₁, the integrals over (−∞, z₀] and
//!   [z₀, ∞) with z₀ = z² log(1/q − 1) + 1/2, each an infinite series
//!   Σ_i |C(α, i)| q^i (1−q)^{α−i} e^{(i²−i)/(2z²)} · ½ erfc((i − z₀)/(√2 z))
//!   (and the mirror term with j = α − i), summed until both terms decrease
//!   and are e^30 below the total, at most 1000 terms; a series that has not
//!   converged gives RDP = ∞ at that order, which the conversion then skips.
//! - q = 1 (plain Gaussian): ε(α) = α/(2z²) exactly.
//!
//! This is a faithful port of dp-accounting's
//! `_compute_rdp_poisson_subsampled_gaussian` (`_compute_log_a_int`,
//! `_compute_log_a_frac`, `_log_erfc`), term for term, so that the `rdp`
//! accountant agrees with `RdpAccountant` to rounding.

use crate::special::{log_add, log_comb, log_erfc};

/// The RDP orders α = 2, …, 33 of the moments accountant (moment orders
/// λ = α − 1 = 1, …, 32, as in Abadi et al. 2016 and DP-FTS-DE).
pub fn moments_orders() -> Vec<f64> {
    (2..=33).map(f64::from).collect()
}

/// dp-accounting's `DEFAULT_RDP_ORDERS`: 1.1, 1.2, …, 10.9 (as 1 + x/10),
/// 11, …, 63, then 128, 256, 512, 1024.
pub fn dp_accounting_default_orders() -> Vec<f64> {
    (1..100)
        .map(|x| 1.0 + f64::from(x) / 10.0)
        .chain((11..64).map(f64::from))
        .chain([128.0, 256.0, 512.0, 1024.0])
        .collect()
}

/// log A_α for integer α ≥ 1 and 0 < q < 1 (module docs; `_compute_log_a_int`).
pub(crate) fn log_a_int(q: f64, sigma: f64, alpha: u32) -> f64 {
    let mut log_a = f64::NEG_INFINITY;
    let log1mq = (-q).ln_1p();
    let a = f64::from(alpha);
    for i in 0..=alpha {
        let i = f64::from(i);
        let log_coef_i = log_comb(a, i) + i * q.ln() + (a - i) * log1mq;
        let s = log_coef_i + (i * i - i) / (2.0 * (sigma * sigma));
        log_a = log_add(log_a, s);
    }
    log_a
}

/// Terms of the fractional-order series before it is declared divergent.
const MAX_STEPS_LOG_A_FRAC: u32 = 1000;

/// log A_α for fractional α > 1 and 0 < q < 1 (module docs; `_compute_log_a_frac`).
/// ∞ when the series has not converged after 1000 terms.
pub(crate) fn log_a_frac(q: f64, sigma: f64, alpha: f64) -> f64 {
    let (mut log_a0, mut log_a1) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
    let z0 = (sigma * sigma) * (1.0 / q - 1.0).ln() + 0.5;
    let log1mq = (-q).ln_1p();
    let (mut last_s0, mut last_s1) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
    for i in 0..MAX_STEPS_LOG_A_FRAC {
        let i = f64::from(i);
        let log_coef = log_comb(alpha, i);
        let j = alpha - i;

        let log_t0 = log_coef + i * q.ln() + j * log1mq;
        let log_t1 = log_coef + j * q.ln() + i * log1mq;

        let log_e0 = 0.5f64.ln() + log_erfc((i - z0) / (std::f64::consts::SQRT_2 * sigma));
        let log_e1 = 0.5f64.ln() + log_erfc((z0 - j) / (std::f64::consts::SQRT_2 * sigma));

        let log_s0 = log_t0 + (i * i - i) / (2.0 * (sigma * sigma)) + log_e0;
        let log_s1 = log_t1 + (j * j - j) / (2.0 * (sigma * sigma)) + log_e1;

        log_a0 = log_add(log_a0, log_s0);
        log_a1 = log_add(log_a1, log_s1);
        let total = log_add(log_a0, log_a1);

        if log_s0 < last_s0 && log_s1 < last_s1 && log_s0.max(log_s1) < total - 30.0 {
            return total;
        }
        last_s0 = log_s0;
        last_s1 = log_s1;
    }
    f64::INFINITY
}

/// One step's RDP ε(α) of the Poisson-subsampled Gaussian with rate `q` ∈ [0, 1]
/// and noise multiplier `z` ≥ 0 at order `alpha` > 1 (module docs):
/// 0 if q = 0; ∞ if α = ∞ or z = 0; α/(2z²) if q = 1; else log A_α/(α − 1).
pub fn rdp_poisson_subsampled_gaussian(q: f64, z: f64, alpha: f64) -> f64 {
    if q == 0.0 {
        return 0.0;
    }
    if alpha.is_infinite() || z == 0.0 {
        return f64::INFINITY;
    }
    if q == 1.0 {
        return alpha / (2.0 * (z * z));
    }
    let log_a = if alpha.fract() == 0.0 && alpha <= f64::from(u32::MAX) {
        log_a_int(q, z, alpha as u32)
    } else {
        log_a_frac(q, z, alpha)
    };
    log_a / (alpha - 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_orders_are_dp_accountings() {
        let o = dp_accounting_default_orders();
        assert_eq!(o.len(), 99 + 53 + 4);
        assert_eq!(o[0], 1.1);
        assert_eq!(o[9], 2.0);
        assert_eq!(o[98], 10.9);
        assert_eq!(o[99], 11.0);
        assert_eq!(o[151], 63.0);
        assert_eq!(o[155], 1024.0);
        assert_eq!(
            moments_orders(),
            (2..=33).map(f64::from).collect::<Vec<_>>()
        );
    }

    #[test]
    fn full_batch_is_alpha_over_two_z_squared() {
        for &(a, z) in &[(2.0, 1.0), (1.5, 0.7), (33.0, 2.5), (1024.0, 10.0)] {
            assert_eq!(
                rdp_poisson_subsampled_gaussian(1.0, z, a),
                a / (2.0 * z * z)
            );
        }
    }

    #[test]
    fn degenerate_rates_and_noise() {
        assert_eq!(rdp_poisson_subsampled_gaussian(0.0, 1.0, 2.0), 0.0);
        assert_eq!(
            rdp_poisson_subsampled_gaussian(0.3, 0.0, 2.0),
            f64::INFINITY
        );
        assert_eq!(
            rdp_poisson_subsampled_gaussian(0.3, 1.0, f64::INFINITY),
            f64::INFINITY
        );
    }

    /// A₂ has the closed form (1−q)² + 2q(1−q) + q² e^{1/z²} = 1 + q²(e^{1/z²} − 1),
    /// so ε(2) = log(1 + q²(e^{1/z²} − 1)).
    #[test]
    fn order_two_closed_form() {
        for &(q, z) in &[(0.01f64, 1.0f64), (0.25, 1.0), (0.5, 0.8), (0.9, 3.0)] {
            let exact = (q * q * ((1.0 / (z * z)).exp_m1())).ln_1p();
            let got = rdp_poisson_subsampled_gaussian(q, z, 2.0);
            assert!(
                (got - exact).abs() <= 1e-12 * exact,
                "{q} {z}: {got} vs {exact}"
            );
        }
    }

    /// Integer orders by the brute-force sum in linear space (small α, no overflow).
    #[test]
    fn integer_orders_match_linear_space_sum() {
        for &(q, z, a) in &[
            (0.25f64, 1.0f64, 3u32),
            (0.15, 1.2, 5),
            (0.5, 1.5, 9),
            (0.05, 0.9, 12),
        ] {
            let mut sum = 0.0;
            let mut binom = 1.0;
            for k in 0..=a {
                if k > 0 {
                    binom = binom * f64::from(a - k + 1) / f64::from(k);
                }
                let kf = f64::from(k);
                sum += binom
                    * (1.0 - q).powi((a - k) as i32)
                    * q.powi(k as i32)
                    * ((kf * kf - kf) / (2.0 * z * z)).exp();
            }
            let exact = sum.ln() / f64::from(a - 1);
            let got = rdp_poisson_subsampled_gaussian(q, z, f64::from(a));
            assert!(
                (got - exact).abs() <= 1e-12 * exact,
                "{q} {z} {a}: {got} vs {exact}"
            );
        }
    }

    /// The fractional series evaluated at an integer order (α = 3 + 1e−9) must
    /// approach the exact integer value: the two code paths describe the same A_α.
    #[test]
    fn fractional_series_is_continuous_at_integer_orders() {
        for &(q, z) in &[(0.01, 1.0), (0.25, 1.0), (0.5, 2.0)] {
            for a in [2.0, 3.0, 7.0] {
                let int = rdp_poisson_subsampled_gaussian(q, z, a);
                let frac = log_a_frac(q, z, a + 1e-9) / (a + 1e-9 - 1.0);
                assert!(
                    (int - frac).abs() <= 1e-6 * int,
                    "{q} {z} {a}: {int} vs {frac}"
                );
            }
        }
    }

    /// RDP is non-decreasing in the order (Rényi divergences are monotone in
    /// α). Checked at integer orders, where A_α is an exact finite sum; the
    /// fractional series of dp-accounting (ported as is) can be non-monotone
    /// or diverge (∞), e.g. q = 0.15, z = 3 or q = 0.25, z = 1 near α = 1.
    #[test]
    fn rdp_is_monotone_in_integer_order() {
        for &(q, z) in &[(0.01, 1.0), (0.25, 1.0), (0.15, 3.0)] {
            let values: Vec<f64> = (2..=256)
                .map(f64::from)
                .map(|a| rdp_poisson_subsampled_gaussian(q, z, a))
                .collect();
            for w in values.windows(2) {
                assert!(w[1] >= w[0] * (1.0 - 1e-9), "{q} {z}: {w:?}");
            }
        }
    }
}
