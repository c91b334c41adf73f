//! What every algorithm's server role does with the channel: number the rounds,
//! refuse out-of-bound contributions before they are sent, and count each
//! member's traffic. Precision is the channel's: it hands plain `f64`
//! vectors to a [`SecureSum`], whose codec keeps (or refuses) the precision
//! it promises (`fedhe_crypto::Precision`).

use crate::AlgorithmError;
use fedhe_crypto::{MemberId, RoundId, SecureSum};
use std::collections::BTreeMap;

/// The server's side of the channel for one federation: round numbering,
/// bound checks and traffic accounting.
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
    /// channel's bound, naming `what` it was.
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
        for (m, v) in &contributions {
            *self.bytes.entry(m.clone()).or_default() += self.channel.bytes_per_round(m, v.len());
        }
        let round = RoundId(self.next_round);
        self.next_round += 1;
        self.aggregations += 1;
        Ok(self.channel.sum(round, contributions)?)
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
