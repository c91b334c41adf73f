//! The statistics of `fedhe report`: summaries, the Wilcoxon signed-rank
//! test, the Mann-Whitney U test, Holm's step-down correction and the
//! matched-pairs rank-biserial correlation. A library crate of their own
//! (they lived in the binary), checked against scipy as before.
//!
//! The Wilcoxon test reproduces `scipy.stats.wilcoxon(x, y,
//! zero_method="wilcox", correction=True, alternative="two-sided",
//! method="auto")` (scipy ≥ 1.13); `tests/data/wilcoxon.json`, written by
//! `scripts/report_fixtures.py`, holds scipy's values for the tests.

/// Mean, sample standard deviation and count of some values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    /// Number of values.
    pub n: usize,
    /// x̄ = (1/n) Σ x_i.
    pub mean: f64,
    /// s = √(Σ (x_i − x̄)² / (n − 1)), the sample standard deviation (ddof = 1);
    /// 0 when n = 1, because a single run has no spread to estimate.
    pub std: f64,
}

impl Summary {
    /// Summarises `values`; `None` when there are none.
    pub fn of(values: &[f64]) -> Option<Self> {
        let n = values.len();
        if n == 0 {
            return None;
        }
        let mean = values.iter().sum::<f64>() / n as f64;
        let std = if n > 1 {
            let ss: f64 = values.iter().map(|v| (v - mean).powi(2)).sum();
            (ss / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        Some(Self { n, mean, std })
    }

    /// The standard error of the mean, s/√n.
    pub fn standard_error(&self) -> f64 {
        self.std / (self.n as f64).sqrt()
    }
}

/// How the p-value of a [`Wilcoxon`] test was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PValueMethod {
    /// The exact null distribution of W⁺ (no ties, no zero differences, n ≤ 50).
    Exact,
    /// All 2^n sign flips of the observed ranks enumerated (ties or zero
    /// differences with at most 13 pairs): exact conditional on the ties.
    SignFlip,
    /// The normal approximation with tie and continuity corrections.
    Normal,
    /// Every difference is zero: nothing to test, p = 1.
    AllZero,
}

impl PValueMethod {
    /// A short name for the report.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Exact => "exact",
            Self::SignFlip => "sign-flip",
            Self::Normal => "normal",
            Self::AllZero => "all zero",
        }
    }
}

/// The result of a two-sided Wilcoxon signed-rank test on paired differences.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Wilcoxon {
    /// Number of pairs, zero differences included.
    pub pairs: usize,
    /// Number of non-zero differences (the sample the test ranks).
    pub n: usize,
    /// W⁺: the sum of the ranks of |d_i| over the positive d_i.
    pub rank_sum_positive: f64,
    /// W⁻: the sum of the ranks of |d_i| over the negative d_i.
    pub rank_sum_negative: f64,
    /// Two-sided p-value.
    pub p_value: f64,
    /// How `p_value` was computed.
    pub method: PValueMethod,
}

impl Wilcoxon {
    /// The statistic scipy reports for a two-sided test: W = min(W⁺, W⁻).
    pub fn statistic(&self) -> f64 {
        self.rank_sum_positive.min(self.rank_sum_negative)
    }

    /// The matched-pairs rank-biserial correlation (Kerby 2014),
    /// r = (W⁺ − W⁻) / (W⁺ + W⁻) ∈ [−1, 1], over the non-zero differences;
    /// 0 when every difference is zero. With d_i = a_i − b_i, r < 0 means a
    /// tends to be lower than b.
    pub fn rank_biserial(&self) -> f64 {
        let total = self.rank_sum_positive + self.rank_sum_negative;
        if total == 0.0 {
            0.0
        } else {
            (self.rank_sum_positive - self.rank_sum_negative) / total
        }
    }
}

/// Largest number of pairs with ties or zeros for which all 2^n sign flips are
/// enumerated: scipy's `permutation_test` is exact while 2^n ≤ 9999 resamples.
const SIGN_FLIP_MAX_PAIRS: usize = 13;
/// Largest number of pairs for which scipy's `method="auto"` uses the exact
/// null distribution.
const EXACT_MAX_PAIRS: usize = 50;

/// The two-sided Wilcoxon signed-rank test of H0 "the differences
/// d_i = a_i − b_i are symmetric about 0".
///
/// Zero differences are dropped before ranking (Wilcoxon's original
/// treatment, scipy's default `zero_method="wilcox"`). |d_i| are ranked with
/// average ranks for ties. The p-value is, as scipy's `method="auto"`:
/// - no ties and no zeros, n ≤ 50: exact, p = 2·min(P(W⁺ ≤ w), P(W⁺ ≥ w));
/// - ties or zeros, at most 13 pairs: the same from the 2^n equally likely
///   sign flips of the observed ranks;
/// - otherwise the normal approximation z = (W⁺ − n(n+1)/4 ∓ ½) / σ with
///   σ² = n(n+1)(2n+1)/24 − Σ_ties (t³ − t)/48, p = 2·Φ(−|z|).
///
/// Returns `None` when `a` and `b` differ in length or hold a non-finite value.
pub fn wilcoxon(a: &[f64], b: &[f64]) -> Option<Wilcoxon> {
    if a.len() != b.len() || a.iter().chain(b).any(|v| !v.is_finite()) {
        return None;
    }
    let pairs = a.len();
    let d: Vec<f64> = a
        .iter()
        .zip(b)
        .map(|(x, y)| x - y)
        .filter(|d| *d != 0.0)
        .collect();
    let n = d.len();
    let abs: Vec<f64> = d.iter().map(|v| v.abs()).collect();
    let (ranks, tie_sizes) = average_ranks(&abs);
    // A fold from +0.0, not `sum()`: the empty f64 sum is −0.0, printed "-0".
    let rank_sum = |positive: bool| {
        d.iter()
            .zip(&ranks)
            .filter(|(v, _)| (**v > 0.0) == positive)
            .fold(0.0, |acc, (_, r)| acc + r)
    };
    let (rank_sum_positive, rank_sum_negative) = (rank_sum(true), rank_sum(false));
    let has_ties = tie_sizes.iter().any(|&t| t > 1);
    let has_zeros = n < pairs;

    let (p_value, method) = if n == 0 {
        (1.0, PValueMethod::AllZero)
    } else if !has_ties && !has_zeros && pairs <= EXACT_MAX_PAIRS {
        (exact_p(n, rank_sum_positive), PValueMethod::Exact)
    } else if pairs <= SIGN_FLIP_MAX_PAIRS {
        (
            sign_flip_p(&ranks, rank_sum_positive),
            PValueMethod::SignFlip,
        )
    } else {
        (
            normal_p(n, rank_sum_positive, &tie_sizes),
            PValueMethod::Normal,
        )
    };
    Some(Wilcoxon {
        pairs,
        n,
        rank_sum_positive,
        rank_sum_negative,
        p_value,
        method,
    })
}

/// Average ranks (1-based) of `values` and the sizes of their tie groups.
fn average_ranks(values: &[f64]) -> (Vec<f64>, Vec<usize>) {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&i, &j| values[i].total_cmp(&values[j]));
    let mut ranks = vec![0.0; values.len()];
    let mut ties = Vec::new();
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && values[order[end]] == values[order[start]] {
            end += 1;
        }
        // Positions start..end (0-based) share the mean of ranks start+1..=end.
        let rank = (start + 1 + end) as f64 / 2.0;
        for &i in &order[start..end] {
            ranks[i] = rank;
        }
        ties.push(end - start);
        start = end;
    }
    (ranks, ties)
}

/// Exact two-sided p-value of W⁺ = `w` with n untied non-zero differences.
///
/// Under H0 each rank 1..n enters W⁺ independently with probability ½, so
/// P(W⁺ = k) = c_n(k)/2^n with c_n(k) the number of subsets of {1..n} summing
/// to k, counted by the recursion c_j(k) = c_{j−1}(k) + c_{j−1}(k − j).
fn exact_p(n: usize, w: f64) -> f64 {
    let max = n * (n + 1) / 2;
    let mut counts = vec![0.0f64; max + 1];
    counts[0] = 1.0;
    for j in 1..=n {
        for k in (j..=max).rev() {
            counts[k] += counts[k - j];
        }
    }
    let total = 2f64.powi(n as i32);
    // scipy rounds a non-integral W⁺ conservatively: down for the upper tail,
    // up for the lower; without ties W⁺ is an integer and both are W⁺.
    let upper_from = w.floor() as usize;
    let lower_to = (w.ceil() as usize).min(max);
    let cdf: f64 = counts[..=lower_to].iter().sum::<f64>() / total;
    let sf: f64 = counts[upper_from.min(max + 1)..].iter().sum::<f64>() / total;
    (2.0 * cdf.min(sf)).min(1.0)
}

/// Two-sided p-value of W⁺ = `w` over the 2^n sign flips of `ranks`.
fn sign_flip_p(ranks: &[f64], w: f64) -> f64 {
    // Doubled average ranks are integers, so the enumeration compares exactly.
    let doubled: Vec<u64> = ranks.iter().map(|r| (2.0 * r).round() as u64).collect();
    let observed = (2.0 * w).round() as u64;
    let flips = 1u64 << ranks.len();
    let (mut at_most, mut at_least) = (0u64, 0u64);
    for mask in 0..flips {
        let sum: u64 = doubled
            .iter()
            .enumerate()
            .filter(|(i, _)| mask & (1 << i) != 0)
            .map(|(_, r)| r)
            .sum();
        at_most += u64::from(sum <= observed);
        at_least += u64::from(sum >= observed);
    }
    (2.0 * at_most.min(at_least) as f64 / flips as f64).min(1.0)
}

/// Σ_ties (t³ − t) over the tie groups of sizes `tie_sizes` (the variance
/// correction of both rank tests' normal approximations).
fn tie_correction(tie_sizes: &[usize]) -> f64 {
    tie_sizes
        .iter()
        .map(|&t| {
            let t = t as f64;
            t * t * t - t
        })
        .sum()
}

/// Two-sided p-value of the normal approximation with tie and continuity corrections.
fn normal_p(n: usize, w: f64, tie_sizes: &[usize]) -> f64 {
    let n = n as f64;
    let mean = n * (n + 1.0) / 4.0;
    let tie_term = tie_correction(tie_sizes);
    let sd = ((n * (n + 1.0) * (2.0 * n + 1.0) - tie_term / 2.0) / 24.0).sqrt();
    let mut z = (w - mean) / sd;
    // The continuity correction moves z half a rank towards 0.
    z -= z.signum() * 0.5 / sd;
    // 2·Φ(−|z|) = erfc(|z|/√2).
    libm::erfc(z.abs() / std::f64::consts::SQRT_2).min(1.0)
}

/// How the p-value of a [`MannWhitney`] test was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RankSumMethod {
    /// The exact null distribution of U (no ties, one sample of at most 8).
    Exact,
    /// The normal approximation with tie and continuity corrections.
    Normal,
}

impl RankSumMethod {
    /// A short name for the report.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Exact => "exact",
            Self::Normal => "normal",
        }
    }
}

/// The result of a two-sided Mann-Whitney U (Wilcoxon rank-sum) test of two
/// independent samples, e.g. fedhe's seeds against a peer's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MannWhitney {
    /// Size of the first sample.
    pub n1: usize,
    /// Size of the second sample.
    pub n2: usize,
    /// U₁ = R₁ − n₁(n₁+1)/2, R₁ the first sample's rank sum in the pooled
    /// sample (average ranks for ties): the number of pairs (a_i, b_j) with
    /// a_i > b_j, ties counting ½. scipy's `statistic`.
    pub u1: f64,
    /// Two-sided p-value.
    pub p_value: f64,
    /// How `p_value` was computed.
    pub method: RankSumMethod,
}

impl MannWhitney {
    /// Whether the first sample tends to be lower: U₁ below its null mean
    /// n₁n₂/2.
    pub fn first_is_lower(&self) -> bool {
        self.u1 < (self.n1 * self.n2) as f64 / 2.0
    }
}

/// Largest smaller sample for which scipy's `mannwhitneyu(method="auto")`
/// uses the exact null distribution (when nothing is tied).
const RANK_SUM_EXACT_MAX: usize = 8;

/// The two-sided Mann-Whitney U test (Mann & Whitney 1947; Wilcoxon's
/// rank-sum test) of H0 "a and b come from one distribution", as scipy's
/// `mannwhitneyu(a, b, use_continuity=True, alternative="two-sided",
/// method="auto")`:
/// - no ties and min(n₁, n₂) ≤ 8: exact, p = 2·P(U ≥ max(U₁, n₁n₂ − U₁));
/// - otherwise the normal approximation
///   z = (max(U₁, n₁n₂ − U₁) − n₁n₂/2 − ½) / σ with
///   σ² = n₁n₂/12 · ((n + 1) − Σ_ties (t³ − t) / (n(n − 1))), n = n₁ + n₂,
///   p = 2·Φ(−z).
///
/// Returns `None` when a sample is empty or holds a non-finite value.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<MannWhitney> {
    if a.is_empty() || b.is_empty() || a.iter().chain(b).any(|v| !v.is_finite()) {
        return None;
    }
    let (n1, n2) = (a.len(), b.len());
    let pooled: Vec<f64> = a.iter().chain(b).copied().collect();
    let (ranks, tie_sizes) = average_ranks(&pooled);
    let r1: f64 = ranks[..n1].iter().sum();
    let u1 = r1 - (n1 * (n1 + 1)) as f64 / 2.0;
    let product = (n1 * n2) as f64;
    let u = u1.max(product - u1);
    let has_ties = tie_sizes.iter().any(|&t| t > 1);
    let (p_value, method) = if !has_ties && n1.min(n2) <= RANK_SUM_EXACT_MAX {
        (rank_sum_exact_p(n1, n2, u), RankSumMethod::Exact)
    } else {
        let n = (n1 + n2) as f64;
        let tie_term = tie_correction(&tie_sizes);
        let sd = (product / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)))).sqrt();
        let p = if sd > 0.0 {
            let z = (u - product / 2.0 - 0.5) / sd;
            // 2·Φ(−z) = erfc(z/√2).
            libm::erfc(z / std::f64::consts::SQRT_2)
        } else {
            1.0
        };
        (p.min(1.0), RankSumMethod::Normal)
    };
    Some(MannWhitney {
        n1,
        n2,
        u1,
        p_value,
        method,
    })
}

/// Exact two-sided p-value 2·P(U ≥ `u`) of the Mann-Whitney U of untied
/// samples of sizes `n1` and `n2`, `u` ≥ n₁n₂/2.
///
/// Under H0 all C(n₁+n₂, n₁) orderings are equally likely; the number with
/// U = k is c(n₁, n₂, k), counted by the recursion
/// c(i, j, k) = c(i − 1, j, k − j) + c(i, j − 1, k) (the largest value is
/// from the first sample, beating all j of the second, or from the second).
fn rank_sum_exact_p(n1: usize, n2: usize, u: f64) -> f64 {
    let max = n1 * n2;
    // counts[i][j] over k for the current i, built row by row.
    let mut previous: Vec<Vec<f64>> = (0..=n2)
        .map(|_| {
            let mut c = vec![0.0; max + 1];
            c[0] = 1.0;
            c
        })
        .collect();
    for _ in 1..=n1 {
        let mut row: Vec<Vec<f64>> = Vec::with_capacity(n2 + 1);
        for j in 0..=n2 {
            let mut c = vec![0.0; max + 1];
            for (k, slot) in c.iter_mut().enumerate() {
                let from_first = if k >= j { previous[j][k - j] } else { 0.0 };
                let from_second = if j > 0 { row[j - 1][k] } else { 0.0 };
                *slot = from_first + from_second;
            }
            row.push(c);
        }
        previous = row;
    }
    let counts = &previous[n2];
    let total: f64 = counts.iter().sum();
    let from = (u.ceil() as usize).min(max + 1);
    let upper: f64 = counts[from..].iter().sum();
    (2.0 * upper / total).min(1.0)
}

/// Holm's step-down adjusted p-values (Holm 1979), in the order given.
///
/// With p_(1) ≤ … ≤ p_(m) sorted, p̃_(i) = max_{j ≤ i} min(1, (m − j + 1)·p_(j));
/// rejecting every hypothesis with p̃ ≤ α controls the family-wise error rate at α.
pub fn holm(p_values: &[f64]) -> Vec<f64> {
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| p_values[i].total_cmp(&p_values[j]));
    let mut adjusted = vec![0.0; m];
    let mut running_max: f64 = 0.0;
    for (j, &i) in order.iter().enumerate() {
        let scaled = ((m - j) as f64 * p_values[i]).min(1.0);
        running_max = running_max.max(scaled);
        adjusted[i] = running_max;
    }
    adjusted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_uses_the_sample_standard_deviation() {
        let s = Summary::of(&[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert_eq!(s.n, 4);
        assert_eq!(s.mean, 2.5);
        // Σ(x − 2.5)² = 5, / 3.
        assert!((s.std - (5.0f64 / 3.0).sqrt()).abs() < 1e-15);
        assert!((s.standard_error() - (5.0f64 / 3.0).sqrt() / 2.0).abs() < 1e-15);
        assert_eq!(Summary::of(&[7.0]).unwrap().std, 0.0);
        assert!(Summary::of(&[]).is_none());
    }

    #[test]
    fn average_ranks_share_tied_positions() {
        let (r, t) = average_ranks(&[3.0, 1.0, 3.0, 2.0, 3.0]);
        assert_eq!(r, vec![4.0, 1.0, 4.0, 2.0, 4.0]);
        assert_eq!(t, vec![1, 1, 3]);
    }

    #[test]
    fn holm_on_a_hand_computed_family() {
        // Sorted: 0.01 (×4 = 0.04), 0.02 (×3 = 0.06), 0.03 (×2 = 0.06), 0.04 (×1,
        // but the running maximum keeps 0.06).
        let adj = holm(&[0.03, 0.01, 0.04, 0.02]);
        let want = [0.06, 0.04, 0.06, 0.06];
        for (a, w) in adj.iter().zip(want) {
            assert!((a - w).abs() < 1e-15, "{adj:?}");
        }
        // Capped at 1.
        assert_eq!(holm(&[0.5, 0.6]), vec![1.0, 1.0]);
        assert!(holm(&[]).is_empty());
    }

    #[test]
    fn exact_test_all_one_sign() {
        // Ten positive untied differences: W⁺ = 55, W⁻ = 0, p = 2/2^10.
        let a: Vec<f64> = (1..=10).map(|i| i as f64).collect();
        let b = vec![0.0; 10];
        let w = wilcoxon(&a, &b).unwrap();
        assert_eq!(w.method, PValueMethod::Exact);
        assert_eq!(w.statistic().to_string(), "0");
        assert!((w.p_value - 2.0 / 1024.0).abs() < 1e-15);
        assert_eq!(w.rank_biserial(), 1.0);
    }

    #[test]
    fn zeros_are_dropped_and_all_zero_gives_one() {
        let w = wilcoxon(&[1.0, 2.0, 5.0], &[1.0, 2.0, 5.0]).unwrap();
        assert_eq!((w.n, w.p_value, w.method), (0, 1.0, PValueMethod::AllZero));
        let w = wilcoxon(&[1.0, 3.0, 5.0], &[1.0, 2.0, 7.0]).unwrap();
        assert_eq!((w.pairs, w.n), (3, 2));
        assert_eq!(w.method, PValueMethod::SignFlip);
    }

    #[test]
    fn refuses_unpaired_or_non_finite_input() {
        assert!(wilcoxon(&[1.0], &[1.0, 2.0]).is_none());
        assert!(wilcoxon(&[f64::NAN], &[1.0]).is_none());
    }

    #[test]
    fn rank_sum_null_counts_are_the_binomial_total_and_match_the_published_table() {
        // U's null distribution for 5 and 5: C(10, 5) = 252 orderings; the
        // smallest U are 0 (1 ordering), 1 (1), 2 (2), 3 (3), so
        // 2·P(U ≤ 2) = 8/252 and 2·P(U ≤ 3) = 14/252.
        let p = |a: &[f64], b: &[f64]| mann_whitney(a, b).unwrap();
        let low: Vec<f64> = vec![1.0, 2.0, 4.0, 6.0, 7.0];
        let high: Vec<f64> = vec![3.0, 5.0, 8.0, 9.0, 10.0];
        // U₁ = pairs with a > b: 4 > 3, 6 > 3, 6 > 5, 7 > 3, 7 > 5 → 5.
        let t = p(&low, &high);
        assert_eq!((t.u1, t.method), (5.0, RankSumMethod::Exact));
        let separated = p(&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0]);
        assert_eq!(separated.u1, 0.0);
        assert!((separated.p_value - 2.0 / 252.0).abs() < 1e-15);
        assert!(separated.first_is_lower());
        let u2 = p(&[1.0, 2.0, 3.0, 6.0, 7.0], &[4.0, 5.0, 8.0, 9.0, 10.0]);
        assert_eq!(u2.u1, 4.0, "6 and 7 each beat 4 and 5");
        // 2·P(U ≤ 4) = 2·(1 + 1 + 2 + 3 + 5)/252.
        assert!((u2.p_value - 24.0 / 252.0).abs() < 1e-15, "{}", u2.p_value);
        // The published two-sided 5 % critical values of U (e.g. Mann &
        // Whitney's tables as reprinted in Siegel & Castellan 1988): 2 for
        // 5 and 5, 8 for 5 and 10: p ≤ 0.05 at the critical U, > 0.05 above.
        for (n1, n2, critical) in [(5usize, 5usize, 2usize), (5, 10, 8), (8, 8, 13)] {
            let at = |u: usize| rank_sum_exact_p(n1, n2, (n1 * n2 - u) as f64);
            assert!(at(critical) <= 0.05, "{n1},{n2}: {}", at(critical));
            assert!(at(critical + 1) > 0.05, "{n1},{n2}: {}", at(critical + 1));
        }
        assert!(mann_whitney(&[], &[1.0]).is_none());
        assert!(mann_whitney(&[f64::NAN], &[1.0]).is_none());
    }

    /// A JSON array of numbers.
    fn floats(v: &serde_json::Value) -> Vec<f64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect()
    }

    /// scipy's `mannwhitneyu` values for the cases of
    /// `scripts/report_fixtures.py`.
    #[test]
    fn matches_scipy_mann_whitney() {
        let fixture: serde_json::Value =
            serde_json::from_str(include_str!("../../../tests/data/mann_whitney.json")).unwrap();
        let cases = fixture["cases"].as_array().unwrap();
        assert!(cases.len() >= 8);
        for case in cases {
            let name = case["name"].as_str().unwrap();
            let t = mann_whitney(&floats(&case["a"]), &floats(&case["b"])).unwrap();
            assert_eq!(
                t.method.as_str(),
                case["method"].as_str().unwrap(),
                "{name}"
            );
            assert_eq!(t.u1, case["statistic"].as_f64().unwrap(), "{name}");
            let p = case["p_value"].as_f64().unwrap();
            assert!(
                (t.p_value - p).abs() / p < 1e-12,
                "{name}: p = {} vs scipy {p}",
                t.p_value
            );
        }
    }

    /// scipy's values for the cases of `scripts/report_fixtures.py`.
    #[test]
    fn matches_scipy_wilcoxon() {
        let fixture: serde_json::Value =
            serde_json::from_str(include_str!("../../../tests/data/wilcoxon.json")).unwrap();
        let cases = fixture["cases"].as_array().unwrap();
        assert!(cases.len() >= 15);
        let mut worst: f64 = 0.0;
        for case in cases {
            let name = case["name"].as_str().unwrap();
            let w = wilcoxon(&floats(&case["a"]), &floats(&case["b"])).unwrap();
            assert_eq!(
                w.method.as_str(),
                case["method"].as_str().unwrap(),
                "{name}"
            );
            assert_eq!(w.statistic(), case["statistic"].as_f64().unwrap(), "{name}");
            assert_eq!(
                w.rank_sum_positive,
                case["rank_sum_positive"].as_f64().unwrap(),
                "{name}"
            );
            assert_eq!(
                w.rank_sum_negative,
                case["rank_sum_negative"].as_f64().unwrap(),
                "{name}"
            );
            let want = case["rank_biserial"].as_f64().unwrap();
            assert!((w.rank_biserial() - want).abs() < 1e-15, "{name}");
            let p = case["p_value"].as_f64().unwrap();
            let relative = (w.p_value - p).abs() / p;
            worst = worst.max(relative);
            assert!(relative < 1e-12, "{name}: p = {} vs scipy {p}", w.p_value);
        }
        eprintln!("largest relative deviation of p from scipy: {worst:.3e}");
    }
}
