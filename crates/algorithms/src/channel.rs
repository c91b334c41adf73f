//! What every algorithm's server role does with the channel: number the rounds,
//! refuse out-of-bound contributions before they are sent, keep sums at close
//! to `f64` precision, and count each member's traffic.

use crate::AlgorithmError;
use fedhe_crypto::{MemberId, RoundId, SecureSum};
use std::collections::BTreeMap;

/// Bits of the coarse part in [`split_for_precision`] when the channel keeps
/// at least as many fractional bits.
pub const SPLIT_BITS: i32 = 24;

/// The coarse part's bits for a channel with `fractional_bits` (`None`: one
/// that sums `f64`s as they are): 24, or the channel's f when it keeps fewer
/// (a large federation with a large bound), so that the coarse parts stay
/// on the channel's grid and their sum exact.
pub fn split_bits(fractional_bits: Option<u32>) -> i32 {
    fractional_bits.map_or(SPLIT_BITS, |f| SPLIT_BITS.min(f as i32))
}

/// Splits every value `v` into a coarse part `h`, a multiple of `2^−s`, and the
/// rest scaled up, `(v − h)·2^s` (`|·| ≤ ½`): `[h_1..h_n, r_1..r_n]`. A channel
/// with at least `s` fractional bits (f) encodes the coarse parts exactly, so
/// their sum is exact, and the rest loses only its own rounding divided by
/// `2^s`: the sum comes back to within n·2^−(s+f+1) instead of the channel's
/// n·2^−(f+1), close to `f64` precision at s = 24. Contributions such as GP
/// summaries span orders of magnitude, so this matters. `s` comes from
/// [`split_bits`]: a coarse grid finer than the channel's would be rounded,
/// silently losing the precision this promises.
pub fn split_for_precision(values: &[f64], s: i32) -> Vec<f64> {
    let scale = 2f64.powi(s);
    let coarse: Vec<f64> = values.iter().map(|v| (v * scale).round() / scale).collect();
    let rest = values.iter().zip(&coarse).map(|(v, h)| (v - h) * scale);
    coarse.iter().copied().chain(rest).collect()
}

/// Recombines the sum of vectors split with `s` bits: `Σh + Σr · 2^−s`.
pub fn join_after_sum(sum: &[f64], s: i32) -> Vec<f64> {
    let n = sum.len() / 2;
    let scale = 2f64.powi(-s);
    (0..n).map(|i| sum[i] + sum[n + i] * scale).collect()
}

/// The server's side of the channel for one federation: round numbering,
/// bound checks, precision splitting and traffic accounting.
pub struct Aggregator<'c> {
    channel: &'c mut dyn SecureSum,
    bound: f64,
    next_round: u64,
    aggregations: usize,
    bytes: BTreeMap<MemberId, u64>,
}

impl<'c> Aggregator<'c> {
    /// A server on `channel`, whose codec accepts values with `|v| ≤ bound`.
    pub fn new(channel: &'c mut dyn SecureSum, bound: f64) -> Self {
        Self {
            channel,
            bound,
            next_round: 1,
            aggregations: 0,
            bytes: BTreeMap::new(),
        }
    }

    /// One secure sum of the contributions (every contributor's vector has the
    /// same length). Refuses, before anything is sent, a contribution beyond the
    /// channel's bound, naming `what` it was. Each vector travels split by
    /// [`split_for_precision`] at the channel's [`split_bits`] (twice as long,
    /// still one ciphertext for up to `N/2` values), so the sum keeps close to
    /// `f64` precision.
    pub fn aggregate(
        &mut self,
        what: &'static str,
        contributions: Vec<(MemberId, Vec<f64>)>,
    ) -> Result<Vec<f64>, AlgorithmError> {
        let largest = contributions
            .iter()
            .flat_map(|(_, v)| v.iter())
            .fold(
                0.0f64,
                |m, v| if v.is_nan() { f64::NAN } else { m.max(v.abs()) },
            );
        if largest.is_nan() || largest > self.bound {
            return Err(AlgorithmError::OutOfBound {
                what,
                value: largest,
                bound: self.bound,
            });
        }
        let bits = split_bits(self.channel.fractional_bits());
        let split: Vec<(MemberId, Vec<f64>)> = contributions
            .into_iter()
            .map(|(m, v)| (m, split_for_precision(&v, bits)))
            .collect();
        for (m, v) in &split {
            *self.bytes.entry(m.clone()).or_default() += self.channel.bytes_per_round(m, v.len());
        }
        let round = RoundId(self.next_round);
        self.next_round += 1;
        self.aggregations += 1;
        Ok(join_after_sum(&self.channel.sum(round, split)?, bits))
    }

    /// Records `bytes` sent in plaintext by `member` (the paper's local centres).
    pub fn record_plaintext(&mut self, member: &MemberId, bytes: u64) {
        *self.bytes.entry(member.clone()).or_default() += bytes;
    }

    /// Secure sums run so far.
    pub fn aggregations(&self) -> usize {
        self.aggregations
    }

    /// Bytes `member` has sent.
    pub fn bytes_sent(&self, member: &MemberId) -> u64 {
        self.bytes.get(member).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_parts_are_a_grid_value_and_a_small_rest() {
        let values = [1.0 / 3.0, -7.123456789012345e-3, 900.5, 0.0];
        let other = [2.0 / 3.0, 1e-9, -0.5, 5.0];
        for s in [SPLIT_BITS, 12] {
            let split = split_for_precision(&values, s);
            assert_eq!(split.len(), 8);
            let scale = 2f64.powi(s);
            for (i, v) in values.iter().enumerate() {
                let (h, r) = (split[i], split[4 + i]);
                assert_eq!((h * scale).fract(), 0.0);
                assert!(r.abs() <= 0.5);
                assert!((h + r / scale - v).abs() <= 1e-16 * v.abs().max(1.0));
            }
            // Summing split vectors and joining equals summing the values.
            let sum: Vec<f64> = split
                .iter()
                .zip(split_for_precision(&other, s))
                .map(|(a, b)| a + b)
                .collect();
            let joined = join_after_sum(&sum, s);
            for i in 0..4 {
                assert!((joined[i] - (values[i] + other[i])).abs() < 1e-13);
            }
        }
        assert_eq!(split_bits(None), SPLIT_BITS);
        assert_eq!(split_bits(Some(40)), SPLIT_BITS);
        assert_eq!(split_bits(Some(19)), 19);
    }

    /// 200 members at bound 1024 (issue 17): the codec keeps fewer than 24
    /// fractional bits there, so a fixed 2^−24 grid would be rounded by the
    /// channel. Through real HE the sum still comes back far below the
    /// channel's own resolution n·2^−(f+1): no silent loss.
    #[test]
    fn two_hundred_members_at_bound_1024_keep_the_precision() {
        use fedhe_crypto::{CeremonyId, FixedPointCodec, HeSum, InsecurePolicy, ParameterSet};
        use fedhe_ring::Csprng;
        let n = 200;
        let bound = 1024.0;
        let params = ParameterSet::TOY_N1024
            .validate(InsecurePolicy::Allow)
            .unwrap();
        let f = FixedPointCodec::new(&params, n, bound)
            .unwrap()
            .fractional_bits();
        assert!(
            f < SPLIT_BITS as u32,
            "f = {f}: the case this test is about"
        );
        let members: Vec<MemberId> = (0..n)
            .map(|i| MemberId::new(format!("m{i:03}")).unwrap())
            .collect();
        let mut he = HeSum::new(
            params,
            &CeremonyId::new("precision").unwrap(),
            members.clone(),
            bound,
            Csprng::from_u128_seed(17),
        )
        .unwrap();
        let mut server = Aggregator::new(&mut he, bound);
        // Values with detail far below 2^−f, of both signs and magnitudes.
        let value = |i: usize, k: usize| -> f64 {
            let x = ((i * 31 + k * 17) as f64 * 0.618_033_988_749_895).fract() - 0.5;
            x * [1000.0, 1.0, 1e-6][k % 3] + 1e-9 * i as f64
        };
        let contributions: Vec<(MemberId, Vec<f64>)> = members
            .iter()
            .enumerate()
            .map(|(i, m)| (m.clone(), (0..6).map(|k| value(i, k)).collect()))
            .collect();
        let got = server.aggregate("test values", contributions).unwrap();
        let resolution = n as f64 * (-(f as f64) - 1.0).exp2();
        for (k, g) in got.iter().enumerate() {
            let exact: f64 = (0..n).map(|i| value(i, k)).sum();
            let err = (g - exact).abs();
            assert!(
                err < resolution * 1e-3,
                "value {k}: error {err:e}, the channel's resolution {resolution:e} (f = {f})"
            );
        }
    }
}
