//! What every algorithm's server role does with the channel: number the rounds,
//! refuse out-of-bound contributions before they are sent, keep sums at close
//! to `f64` precision, and count each member's traffic.

use crate::AlgorithmError;
use fedhe_crypto::{MemberId, RoundId, SecureSum};
use std::collections::BTreeMap;

/// Bits of the coarse part in [`split_for_precision`].
pub const SPLIT_BITS: i32 = 24;

/// Splits every value `v` into a coarse part `h`, a multiple of `2^−24`, and the
/// rest scaled up, `(v − h)·2^24` (`|·| ≤ ½`): `[h_1..h_n, r_1..r_n]`. A channel
/// with at least 24 fractional bits encodes the coarse parts exactly, so their
/// sum is exact, and the rest loses only its own rounding divided by `2^24`:
/// the sum comes back with close to `f64` precision instead of the channel's
/// `2^−f`. Contributions such as GP summaries span orders of magnitude, so this
/// matters.
pub fn split_for_precision(values: &[f64]) -> Vec<f64> {
    let scale = 2f64.powi(SPLIT_BITS);
    let coarse: Vec<f64> = values.iter().map(|v| (v * scale).round() / scale).collect();
    let rest = values.iter().zip(&coarse).map(|(v, h)| (v - h) * scale);
    coarse.iter().copied().chain(rest).collect()
}

/// Recombines the sum of split vectors: `Σh + Σr · 2^−24`.
pub fn join_after_sum(sum: &[f64]) -> Vec<f64> {
    let n = sum.len() / 2;
    let scale = 2f64.powi(-SPLIT_BITS);
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
    /// [`split_for_precision`] (twice as long, still one ciphertext for up to
    /// `N/2` values), so the sum keeps close to `f64` precision.
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
        let split: Vec<(MemberId, Vec<f64>)> = contributions
            .into_iter()
            .map(|(m, v)| (m, split_for_precision(&v)))
            .collect();
        for (m, v) in &split {
            *self.bytes.entry(m.clone()).or_default() += self.channel.bytes_per_round(m, v.len());
        }
        let round = RoundId(self.next_round);
        self.next_round += 1;
        self.aggregations += 1;
        Ok(join_after_sum(&self.channel.sum(round, split)?))
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
        let split = split_for_precision(&values);
        assert_eq!(split.len(), 8);
        let scale = 2f64.powi(SPLIT_BITS);
        for (i, v) in values.iter().enumerate() {
            let (h, r) = (split[i], split[4 + i]);
            assert_eq!((h * scale).fract(), 0.0);
            assert!(r.abs() <= 0.5);
            assert!((h + r / scale - v).abs() <= 1e-16 * v.abs().max(1.0));
        }
        // Summing split vectors and joining equals summing the values.
        let other = [2.0 / 3.0, 1e-9, -0.5, 5.0];
        let sum: Vec<f64> = split
            .iter()
            .zip(split_for_precision(&other))
            .map(|(a, b)| a + b)
            .collect();
        let joined = join_after_sum(&sum);
        for i in 0..4 {
            assert!((joined[i] - (values[i] + other[i])).abs() < 1e-13);
        }
    }
}
