//! Exact samplers on tfhe's CSPRNG ([`Csprng`]): every decision is an integer
//! comparison against uniform random words, with no floating-point arithmetic
//! on random values.
//!
//! The discrete Laplace and discrete Gaussian samplers are Algorithms 1–3 of
//! Canonne, Kamath, Steinke 2020, "The discrete Gaussian for differential
//! privacy" (NeurIPS 2020, arXiv:2004.00010), with all rationals held as u128
//! numerator/denominator pairs. Their output distributions are exactly
//!
//! - DLap(t/s):  P[Y = y] ∝ exp(−|y|·s/t), y ∈ ℤ;
//! - N_ℤ(0, σ²): P[Y = y] ∝ exp(−y²/(2σ²)), y ∈ ℤ, for rational σ² = a/b,
//!
//! except for one documented truncation: draws with |Y| ≥ 2^43 are rejected
//! (for the mechanisms' scales, ~2^21, that event has probability below
//! exp(−2^22)), which keeps every intermediate product inside u128.
//!
//! Why not a floating-point sampler: Mironov (2012, "On significance of the
//! least significant bits for differential privacy") showed that textbook
//! Laplace noise computed as −b·log(U) in doubles leaves holes in the set of
//! reachable outputs that depend on the input, so single outputs can reveal
//! the input exactly. Integer noise on a fixed grid has no such holes.

use fedhe_ring::Csprng;

/// Largest |Y| the integer samplers return (documented truncation).
pub const MAX_ABS_SAMPLE: u128 = 1 << 43;

/// Uniform on [0, n) for n ≥ 1, by rejection sampling of ⌈log2 n⌉-bit words.
///
/// # Panics
/// If n = 0.
pub fn uniform_below_u128(rng: &mut Csprng, n: u128) -> u128 {
    assert!(n > 0, "uniform_below_u128 needs n >= 1");
    if n == 1 {
        return 0;
    }
    if let Ok(n64) = u64::try_from(n) {
        return u128::from(rng.uniform_below(n64));
    }
    let mask = u128::MAX >> (n - 1).leading_zeros();
    loop {
        let v = ((u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64())) & mask;
        if v < n {
            return v;
        }
    }
}

/// Bernoulli(n/d) for 0 ≤ n, d ≥ 1 (certain when n ≥ d): U < n for U uniform on [0, d).
pub fn bernoulli_ratio(rng: &mut Csprng, n: u128, d: u128) -> bool {
    if n >= d {
        return true;
    }
    if n == 0 {
        return false;
    }
    uniform_below_u128(rng, d) < n
}

/// Bernoulli(p) for an f64 p ∈ [0, 1], exactly: compares a uniform real U ∈ [0, 1),
/// drawn bit by bit, with the binary expansion of p (at most 1074 fractional
/// bits); returns U < p. Two random bits are needed on average.
pub fn bernoulli_f64(rng: &mut Csprng, p: f64) -> bool {
    if p.is_nan() || p <= 0.0 {
        return false;
    }
    if p >= 1.0 {
        return true;
    }
    // p = m · 2^(−k) with m an integer below 2^53 and k ≤ 1074.
    let bits = p.to_bits();
    let exp_field = ((bits >> 52) & 0x7ff) as i64;
    let frac = bits & ((1u64 << 52) - 1);
    let (m, k) = if exp_field == 0 {
        (frac, 1074i64)
    } else {
        (frac | (1u64 << 52), 1075 - exp_field)
    };
    // Fractional bit number i (1-based) of p is bit (k − i) of m.
    let mut word = 0u64;
    let mut left = 0;
    for i in 1..=k {
        if left == 0 {
            word = rng.next_u64();
            left = 64;
        }
        let u_bit = word & 1;
        word >>= 1;
        left -= 1;
        let shift = k - i;
        let p_bit = if shift < 64 { (m >> shift) & 1 } else { 0 };
        if u_bit != p_bit {
            return u_bit < p_bit;
        }
    }
    false
}

/// Bernoulli(exp(−n/d)) for n/d ∈ [0, 1] (CKS 2020, Alg. 1): K ← 1; while
/// Bernoulli(γ/K) succeeds, K ← K + 1; return K odd. Bernoulli(γ/K) is drawn
/// as Bernoulli(n/d) ∧ Bernoulli(1/K), which needs no product d·K.
fn bernoulli_exp_neg_unit(rng: &mut Csprng, n: u128, d: u128) -> bool {
    let mut k: u128 = 1;
    while bernoulli_ratio(rng, n, d) && bernoulli_ratio(rng, 1, k) {
        k += 1;
    }
    k % 2 == 1
}

/// Bernoulli(exp(−γ)) for rational γ = n/d ≥ 0, d ≥ 1 (CKS 2020, Alg. 1 with
/// the reduction for γ > 1): ⌊γ⌋ independent Bernoulli(e^(−1)) draws must all
/// succeed, then Bernoulli(exp(−(γ − ⌊γ⌋))).
///
/// # Panics
/// If d = 0.
pub fn bernoulli_exp_neg(rng: &mut Csprng, n: u128, d: u128) -> bool {
    assert!(d > 0, "bernoulli_exp_neg needs d >= 1");
    let whole = n / d;
    let mut i = 0;
    while i < whole {
        if !bernoulli_exp_neg_unit(rng, 1, 1) {
            return false;
        }
        i += 1;
    }
    bernoulli_exp_neg_unit(rng, n % d, d)
}

/// Discrete Laplace DLap(t/s) for integers s, t ≥ 1: P[Y = y] ∝ exp(−|y|·s/t)
/// (CKS 2020, Alg. 2). U uniform on [0, t), kept with probability exp(−U/t);
/// V ~ Geometric(1 − e^(−1)); X = U + t·V (so X ~ Geometric(1 − e^(−1/t)));
/// Y = ⌊X/s⌋ with a fair sign, rejecting (−, 0) so 0 is not counted twice.
///
/// # Panics
/// If s or t is 0.
pub fn discrete_laplace(rng: &mut Csprng, s: u128, t: u128) -> i64 {
    assert!(s > 0 && t > 0, "discrete_laplace needs s, t >= 1");
    loop {
        let u = uniform_below_u128(rng, t);
        if !bernoulli_exp_neg(rng, u, t) {
            continue;
        }
        let mut v: u128 = 0;
        while bernoulli_exp_neg_unit(rng, 1, 1) {
            v += 1;
        }
        let Some(x) = t.checked_mul(v).and_then(|tv| tv.checked_add(u)) else {
            continue;
        };
        let y = x / s;
        let negative = bernoulli_ratio(rng, 1, 2);
        if negative && y == 0 {
            continue;
        }
        if y >= MAX_ABS_SAMPLE {
            continue;
        }
        let y = y as i64;
        return if negative { -y } else { y };
    }
}

/// Discrete Gaussian N_ℤ(0, σ²) for rational σ² = a/b > 0 (CKS 2020, Alg. 3):
/// with t = ⌊σ⌋ + 1, draw Y ~ DLap(t) and keep it with probability
/// exp(−(|Y| − σ²/t)²/(2σ²)) = exp(−(|Y|·b·t − a)² / (2·a·b·t²)).
///
/// # Panics
/// If a or b is 0, or 2·a·b·t² overflows u128 (the mechanisms use b = 1 and
/// a ≤ 2^42, far inside).
pub fn discrete_gaussian(rng: &mut Csprng, a: u128, b: u128) -> i64 {
    assert!(a > 0 && b > 0, "discrete_gaussian needs a, b >= 1");
    let t = floor_sqrt_ratio(a, b) + 1;
    // Denominator 2·a·b·t²; parameters so large that it overflows are refused
    // by the mechanisms before they get here.
    let d = 2u128
        .checked_mul(a)
        .and_then(|x| x.checked_mul(b))
        .and_then(|x| x.checked_mul(t))
        .and_then(|x| x.checked_mul(t))
        .expect("discrete Gaussian parameters within u128");
    loop {
        let y = discrete_laplace(rng, 1, t);
        let mag = u128::from(y.unsigned_abs());
        let Some(diff) = mag
            .checked_mul(b)
            .and_then(|x| x.checked_mul(t))
            .map(|ybt| ybt.abs_diff(a))
        else {
            continue; // |Y| beyond u128 range: acceptance probability ≈ 0
        };
        let Some(n) = diff.checked_mul(diff) else {
            continue;
        };
        if bernoulli_exp_neg(rng, n, d) {
            return y;
        }
    }
}

/// ⌊√(a/b)⌋ for a ≥ 0, b ≥ 1: the largest r with r²·b ≤ a.
fn floor_sqrt_ratio(a: u128, b: u128) -> u128 {
    let (mut lo, mut hi) = (0u128, 1u128 << 64);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        match mid.checked_mul(mid).and_then(|m| m.checked_mul(b)) {
            Some(v) if v <= a => lo = mid,
            _ => hi = mid,
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pearson χ² of `counts` against `probs` over the bins expected to hold
    /// more than 5 draws (the rest lumped into one tail bin), and the 0.999
    /// quantile of χ² with that many bins as degrees of freedom
    /// (Wilson–Hilferty approximation).
    fn chi_square(counts: &[u64], probs: &[f64], total: u64) -> (f64, f64) {
        let n = total as f64;
        let (mut stat, mut bins) = (0.0, 0usize);
        let (mut rest_p, mut rest_c) = (1.0, total as f64);
        for (&c, &p) in counts.iter().zip(probs) {
            if p * n > 5.0 {
                stat += (c as f64 - p * n).powi(2) / (p * n);
                rest_p -= p;
                rest_c -= c as f64;
                bins += 1;
            }
        }
        if rest_p * n > 5.0 {
            stat += (rest_c - rest_p * n).powi(2) / (rest_p * n);
        }
        let k = bins as f64;
        let h = 2.0 / (9.0 * k);
        (stat, k * (1.0 - h + 3.09 * h.sqrt()).powi(3))
    }

    #[test]
    fn floor_sqrt_ratio_is_exact() {
        assert_eq!(floor_sqrt_ratio(0, 1), 0);
        assert_eq!(floor_sqrt_ratio(15, 1), 3);
        assert_eq!(floor_sqrt_ratio(16, 1), 4);
        assert_eq!(floor_sqrt_ratio(9, 4), 1); // √2.25 = 1.5
        assert_eq!(floor_sqrt_ratio(1 << 42, 1), 1 << 21);
    }

    #[test]
    fn uniform_below_wide_moduli_is_in_range_and_balanced() {
        let mut rng = Csprng::from_u128_seed(7);
        let n = (1u128 << 100) + 12345;
        let mut high = 0;
        for _ in 0..10_000 {
            let v = uniform_below_u128(&mut rng, n);
            assert!(v < n);
            if v >= n / 2 {
                high += 1;
            }
        }
        // Binomial(10^4, 1/2): sd 50, allow 5 sd.
        assert!((high as i64 - 5000).abs() < 250, "{high}");
    }

    #[test]
    fn bernoulli_f64_has_the_right_frequency() {
        let mut rng = Csprng::from_u128_seed(11);
        let n = 200_000;
        for p in [0.25, 0.1, 0.7, 1e-3, 1.0 / 3.0] {
            let hits = (0..n).filter(|_| bernoulli_f64(&mut rng, p)).count() as f64;
            let sd = (n as f64 * p * (1.0 - p)).sqrt();
            assert!((hits - n as f64 * p).abs() < 5.0 * sd, "p = {p}: {hits}");
        }
        assert!(!bernoulli_f64(&mut rng, 0.0));
        assert!(bernoulli_f64(&mut rng, 1.0));
        // A subnormal probability is (practically) never hit.
        assert!(!(0..1000).any(|_| bernoulli_f64(&mut rng, 5e-324)));
    }

    #[test]
    fn bernoulli_exp_neg_has_the_right_frequency() {
        let mut rng = Csprng::from_u128_seed(12);
        let n = 200_000;
        for (num, den) in [
            (0u128, 1u128),
            (1, 2),
            (1, 1),
            (5, 2),
            (7, 3),
            (1 << 70, 3 << 69),
        ] {
            let p = (-(num as f64) / den as f64).exp();
            let hits = (0..n)
                .filter(|_| bernoulli_exp_neg(&mut rng, num, den))
                .count() as f64;
            let sd = (n as f64 * p * (1.0 - p)).sqrt().max(1.0);
            assert!(
                (hits - n as f64 * p).abs() < 5.0 * sd,
                "{num}/{den}: {hits} vs {}",
                n as f64 * p
            );
        }
    }

    /// χ² goodness of fit of DLap(t/s) against P[y] = (1 − e^(−s/t))/(1 + e^(−s/t)) · e^(−|y|s/t).
    #[test]
    fn discrete_laplace_fits_its_pmf() {
        let mut rng = Csprng::from_u128_seed(13);
        let total = 100_000u64;
        for (s, t) in [(1u128, 1u128), (2, 3), (1, 4)] {
            let r = (-(s as f64) / t as f64).exp();
            let norm = (1.0 - r) / (1.0 + r);
            let support: Vec<i64> = (-12..=12).collect();
            let probs: Vec<f64> = support
                .iter()
                .map(|&y| norm * r.powi(y.abs() as i32))
                .collect();
            let mut counts = vec![0u64; support.len()];
            for _ in 0..total {
                let y = discrete_laplace(&mut rng, s, t);
                if let Some(i) = support.iter().position(|&v| v == y) {
                    counts[i] += 1;
                }
            }
            let (stat, limit) = chi_square(&counts, &probs, total);
            assert!(stat < limit, "s = {s}, t = {t}: χ² = {stat} >= {limit}");
        }
    }

    /// χ² goodness of fit of N_ℤ(0, σ²) against its pmf, normalised over ±12σ.
    #[test]
    fn discrete_gaussian_fits_its_pmf() {
        let mut rng = Csprng::from_u128_seed(14);
        let total = 100_000u64;
        for (a, b) in [(1u128, 1u128), (9, 4), (10, 1)] {
            let s2 = a as f64 / b as f64;
            let range = (12.0 * s2.sqrt()).ceil() as i64;
            let support: Vec<i64> = (-range..=range).collect();
            let w: Vec<f64> = support
                .iter()
                .map(|&y| (-(y * y) as f64 / (2.0 * s2)).exp())
                .collect();
            let z: f64 = w.iter().sum();
            let probs: Vec<f64> = w.iter().map(|x| x / z).collect();
            let mut counts = vec![0u64; support.len()];
            let (mut sum, mut sum_sq) = (0.0, 0.0);
            for _ in 0..total {
                let y = discrete_gaussian(&mut rng, a, b);
                counts[(y + range) as usize] += 1;
                sum += y as f64;
                sum_sq += (y * y) as f64;
            }
            let (stat, limit) = chi_square(&counts, &probs, total);
            assert!(stat < limit, "σ² = {s2}: χ² = {stat} >= {limit}");
            // Mean 0, variance Σ y² p(y) (slightly below σ² for small σ, CKS 2020 §2).
            let var: f64 = support
                .iter()
                .zip(&probs)
                .map(|(&y, p)| (y * y) as f64 * p)
                .sum();
            let n = total as f64;
            assert!((sum / n).abs() < 5.0 * (var / n).sqrt());
            assert!(
                (sum_sq / n - var).abs() < 0.03 * var,
                "{} vs {var}",
                sum_sq / n
            );
        }
    }
}
