//! Log-space helpers and special functions for the RDP computation, ported
//! from dp-accounting's `rdp_privacy_accountant.py` (same operation order, so
//! that the results agree to rounding).

use std::f64::consts::PI;

/// log(e^x + e^y) = log1p(e^(a−b)) + b with a = min, b = max (dp-accounting `_log_add`).
pub(crate) fn log_add(logx: f64, logy: f64) -> f64 {
    let (a, b) = if logx < logy {
        (logx, logy)
    } else {
        (logy, logx)
    };
    if a == f64::NEG_INFINITY {
        return b;
    }
    (a - b).exp().ln_1p() + b
}

/// log C(n, k) = lnΓ(n+1) − lnΓ(k+1) − lnΓ(n−k+1), with lnΓ = log|Γ| as
/// scipy's `gammaln` (dp-accounting `_log_comb`; n may be fractional and
/// n − k + 1 negative, where |C(n, k)| is what the series uses).
pub(crate) fn log_comb(n: f64, k: f64) -> f64 {
    libm::lgamma(n + 1.0) - libm::lgamma(k + 1.0) - libm::lgamma(n - k + 1.0)
}

/// log Φ(x) for the standard normal CDF Φ, accurate far into the lower tail.
///
/// As scipy's `log_ndtr`: for x ≥ −1, log1p(−erfc(x/√2)/2); below,
/// log(erfc(u)/2) with u = −x/√2, and for u ≥ 26 (where erfc underflows) the
/// asymptotic series erfc(u) = e^(−u²)/(u√π) · (1 − 1/(2u²) + 3/(4u⁴) −
/// 15/(8u⁶) + 105/(16u⁸) − …), whose truncation error there is below 1e−12.
pub(crate) fn log_ndtr(x: f64) -> f64 {
    let t = x * std::f64::consts::FRAC_1_SQRT_2;
    if x >= -1.0 {
        return (-libm::erfc(t) / 2.0).ln_1p();
    }
    let u = -t;
    if u < 26.0 {
        return (libm::erfc(u) / 2.0).ln();
    }
    let v = 1.0 / (2.0 * u * u);
    let series = 1.0 - v + 3.0 * v * v - 15.0 * v * v * v + 105.0 * v * v * v * v;
    -u * u - (u * PI.sqrt()).ln() + series.ln() - std::f64::consts::LN_2
}

/// log erfc(x) = log 2 + log Φ(−x√2) (dp-accounting `_log_erfc`).
pub(crate) fn log_erfc(x: f64) -> f64 {
    std::f64::consts::LN_2 + log_ndtr(-x * std::f64::consts::SQRT_2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_add_adds_in_log_space() {
        let s = log_add(2f64.ln(), 3f64.ln());
        assert!((s - 5f64.ln()).abs() < 1e-15);
        assert_eq!(log_add(f64::NEG_INFINITY, 1.5), 1.5);
        assert_eq!(log_add(1.5, f64::NEG_INFINITY), 1.5);
    }

    #[test]
    fn log_comb_matches_binomials() {
        assert!((log_comb(10.0, 3.0) - 120f64.ln()).abs() < 1e-12);
        assert!((log_comb(33.0, 16.0) - 1_166_803_110f64.ln()).abs() < 1e-12);
        // |C(1.5, 3)| = |1.5 · 0.5 · (−0.5) / 6| = 0.0625.
        assert!((log_comb(1.5, 3.0) - 0.0625f64.ln()).abs() < 1e-12);
    }

    #[test]
    fn log_ndtr_is_continuous_across_branches_and_matches_tail() {
        // Φ(0) = 1/2.
        assert!((log_ndtr(0.0) - 0.5f64.ln()).abs() < 1e-15);
        // Branch at x = −1 and at u = 26 (x = −26√2): both sides agree.
        let (a, b) = (log_ndtr(-1.0), log_ndtr(-1.0 - 1e-12));
        assert!((a - b).abs() < 1e-9, "{a} {b}");
        let x = -26.0 * std::f64::consts::SQRT_2;
        let (a, b) = (log_ndtr(x + 1e-9), log_ndtr(x - 1e-9));
        assert!((a - b).abs() < 1e-6, "{a} {b}");
        // Φ(−40) from the Mills ratio series evaluated independently:
        // log Φ(−40) = −800 − log(40√(2π)) + log(1 − 1/1600 + 3/1600² − …).
        let reference = -800.0 - (40.0 * (2.0 * PI).sqrt()).ln()
            + (1.0 - 1.0 / 1600.0 + 3.0 / 1600f64.powi(2) - 15.0 / 1600f64.powi(3)).ln();
        let got = log_ndtr(-40.0);
        assert!(
            (got - reference).abs() < 1e-13 * reference.abs(),
            "{got} vs {reference}"
        );
        // Upper tail: log Φ(10) ≈ −Φ(−10) ≈ −7.62e−24.
        assert!((log_ndtr(10.0) + 7.619853024160527e-24).abs() < 1e-30);
    }
}
