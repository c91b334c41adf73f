//! The channel every algorithm talks to (DESIGN.md §1): members contribute
//! vectors, only the element-wise sum is revealed.

use crate::codec::{join_two_limbs, split_two_limbs, FixedPointCodec, Precision};
use crate::decryption::combine;
use crate::threshold::combine_threshold;
use crate::TWO_LIMB_SPLIT_BITS;
use crate::{
    AccessStructure, CeremonyId, ChannelError, CollectivePublicKey, CommonRandomPoly,
    DecryptionShare, EncryptedVector, MemberId, Params, PublicKeyShare, RoundId, SecretKeyShare,
    ThresholdDecryptionShare, ThresholdSecretShare, Thresholdizer,
};
use fedhe_ring::Csprng;
use fedhe_ring::Poly;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Every member contributes a vector; only the element-wise sum is revealed.
pub trait SecureSum {
    /// The element-wise sum of the contributions of one round.
    fn sum(
        &mut self,
        round: RoundId,
        contributions: Vec<(MemberId, Vec<f64>)>,
    ) -> Result<Vec<f64>, ChannelError>;

    /// The bytes `member` sends for one round in which it contributes `len`
    /// values: by default the raw little-endian `f64`s (no cryptography).
    fn bytes_per_round(&self, _member: &MemberId, len: usize) -> u64 {
        8 * len as u64
    }
}

/// Checks that contributors are distinct, known, numerous enough and agree on the length.
fn check_contributions(
    round: RoundId,
    members: Option<&[MemberId]>,
    min_contributors: usize,
    contributions: &[(MemberId, Vec<f64>)],
) -> Result<usize, ChannelError> {
    let mut seen = BTreeSet::new();
    for (m, _) in contributions {
        if let Some(members) = members {
            if members.binary_search(m).is_err() {
                return Err(ChannelError::UnknownMember(m.clone()));
            }
        }
        if !seen.insert(m) {
            return Err(ChannelError::DuplicateMember(m.clone()));
        }
    }
    if contributions.len() < min_contributors.max(1) {
        return Err(ChannelError::TooFewContributors {
            round: round.0,
            got: contributions.len(),
            required: min_contributors.max(1),
        });
    }
    let len = contributions[0].1.len();
    if let Some((m, v)) = contributions.iter().find(|(_, v)| v.len() != len) {
        return Err(ChannelError::Mismatch(format!(
            "member {m} contributed {} values, {} expected",
            v.len(),
            len
        )));
    }
    Ok(len)
}

/// No cryptography: the plain sum. For baselines and unit tests.
///
/// It sums the way a two-limb codec does with s = [`TWO_LIMB_SPLIT_BITS`]:
/// each value's coarse part and rest are summed apart, then joined. A
/// plaintext simulation thus follows an HE one (which the simulator runs with
/// [`Precision::TwoLimb`]) as closely as `f64` allows, and its results are
/// bit for bit those of the earlier channel layer, which split every vector
/// this way before the split moved into the codec.
#[derive(Clone, Debug, Default)]
pub struct PlainSum;

impl SecureSum for PlainSum {
    fn sum(
        &mut self,
        round: RoundId,
        contributions: Vec<(MemberId, Vec<f64>)>,
    ) -> Result<Vec<f64>, ChannelError> {
        let len = check_contributions(round, None, 1, &contributions)?;
        for (_, v) in &contributions {
            if let Some((index, &value)) = v.iter().enumerate().find(|(_, x)| !x.is_finite()) {
                return Err(crate::CodecError::NotFinite { index, value }.into());
            }
        }
        let mut out = vec![0.0; 2 * len];
        for (_, v) in &contributions {
            for (o, x) in out
                .iter_mut()
                .zip(split_two_limbs(v, TWO_LIMB_SPLIT_BITS, f64::INFINITY))
            {
                *o += x;
            }
        }
        Ok(join_two_limbs(&out, TWO_LIMB_SPLIT_BITS))
    }

    /// Two `f64`s per value, as the two limbs it sums.
    fn bytes_per_round(&self, _member: &MemberId, len: usize) -> u64 {
        16 * len as u64
    }
}

/// Wall-clock time of each protocol operation in one round.
#[derive(Clone, Debug, Default)]
pub struct RoundTimings {
    /// Encoding and encryption, one per contributor.
    pub encrypt: Vec<Duration>,
    /// The server's aggregation of all contributions.
    pub aggregate: Duration,
    /// One decryption share per member.
    pub decryption_share: Vec<Duration>,
    /// Combining shares and decoding.
    pub combine: Duration,
}

/// Everything one round produced: the wire objects and the result.
#[derive(Clone, Debug)]
pub struct RoundTranscript {
    /// The round.
    pub round: RoundId,
    /// Each contributor's encrypted vector.
    pub contributions: Vec<(MemberId, EncryptedVector)>,
    /// Their sum.
    pub aggregate: EncryptedVector,
    /// One decryption share per member.
    pub shares: Vec<DecryptionShare>,
    /// The decoded sum.
    pub sum: Vec<f64>,
    /// The codec used.
    pub codec: FixedPointCodec,
    /// Time per operation.
    pub timings: RoundTimings,
    /// The threshold decryption of a t-of-n channel (`None` for n-of-n, whose
    /// `shares` hold every member's share; for t-of-n they hold the decrypting
    /// set's shares).
    pub threshold: Option<ThresholdRound>,
}

/// What a t-of-n round adds to its transcript.
#[derive(Clone, Debug)]
pub struct ThresholdRound {
    /// The access structure (members, T).
    pub access: AccessStructure,
    /// The members that decrypted, sorted (T of them).
    pub active: Vec<MemberId>,
    /// Their threshold decryption shares.
    pub shares: Vec<ThresholdDecryptionShare>,
}

/// The threshold state of a t-of-n [`HeSum`]: every member's aggregated Shamir share.
struct ThresholdState {
    access: AccessStructure,
    secrets: Vec<ThresholdSecretShare>,
    deal_times: Vec<Duration>,
    aggregate_times: Vec<Duration>,
}

/// The real multiparty protocol with every member in one process: ceremony,
/// encryption, aggregation, one flooded decryption share per member, combine.
/// Each member refuses to decrypt a round twice.
pub struct HeSum {
    params: Arc<Params>,
    members: Vec<MemberId>,
    pub(crate) secrets: Vec<SecretKeyShare>,
    public_shares: Vec<PublicKeyShare>,
    public_key: CollectivePublicKey,
    codec: FixedPointCodec,
    min_contributors: usize,
    rng: Csprng,
    decrypted: BTreeSet<RoundId>,
    key_share_times: Vec<Duration>,
    threshold: Option<ThresholdState>,
}

impl std::fmt::Debug for HeSum {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HeSum")
            .field("params", &self.params.set().name)
            .field("members", &self.members)
            .field("encoding", self.codec.info())
            .finish_non_exhaustive()
    }
}

impl HeSum {
    /// Runs the key ceremony for `members` (all in this process) and returns
    /// the channel. Values summed through it must satisfy |x| ≤ `bound`.
    pub fn new(
        params: Arc<Params>,
        ceremony: &CeremonyId,
        members: Vec<MemberId>,
        bound: f64,
        mut rng: Csprng,
    ) -> Result<Self, ChannelError> {
        // Checks the bound and member count before any key is made.
        let codec = FixedPointCodec::new(&params, members.len(), bound)?;
        let crs = CommonRandomPoly::for_ceremony(&params, ceremony, &members)?;
        let mut members = members;
        members.sort();
        let mut secrets = Vec::with_capacity(members.len());
        let mut public_shares = Vec::with_capacity(members.len());
        let mut key_share_times = Vec::with_capacity(members.len());
        for m in &members {
            let start = Instant::now();
            let sk = SecretKeyShare::generate(&params, m.clone(), &mut rng);
            let pk = PublicKeyShare::generate(&params, &sk, &crs, &mut rng)?;
            key_share_times.push(start.elapsed());
            secrets.push(sk);
            public_shares.push(pk);
        }
        let public_key = CollectivePublicKey::aggregate(&crs, &members, &public_shares)?;
        let min_contributors = members.len();
        Ok(Self {
            params,
            members,
            secrets,
            public_shares,
            public_key,
            codec,
            min_contributors,
            rng,
            decrypted: BTreeSet::new(),
            key_share_times,
            threshold: None,
        })
    }

    /// The channel with the codec `precision` asks for (one limb unless
    /// asked): refused, naming the reason, when the codec cannot keep it.
    pub fn with_precision(mut self, precision: Precision) -> Result<Self, ChannelError> {
        self.codec = FixedPointCodec::with_precision(
            &self.params,
            self.members.len(),
            self.codec.info().bound,
            precision,
        )?;
        Ok(self)
    }

    /// Makes the channel t-of-n (issue 15): every member deals its key share
    /// with [`Thresholdizer::deal`], every member verifies the shares it
    /// receives and aggregates them; the collective public key is unchanged.
    /// Each round is then decrypted by T members only, a different set each
    /// round ([`Self::decrypting_set`]). Refuses T outside (n/2, n].
    pub fn with_threshold(
        mut self,
        ceremony: &CeremonyId,
        threshold: usize,
    ) -> Result<Self, ChannelError> {
        let access = AccessStructure::new(&self.members, threshold)?;
        let done = Thresholdizer::in_process(
            &self.params,
            ceremony,
            &access,
            &self.secrets,
            self.public_key.crs(),
            &self.public_shares,
            &mut self.rng,
        )?;
        self.threshold = Some(ThresholdState {
            access,
            secrets: done.secrets,
            deal_times: done.deal_times,
            aggregate_times: done.aggregate_times,
        });
        Ok(self)
    }

    /// The access structure of a t-of-n channel.
    pub fn access_structure(&self) -> Option<&AccessStructure> {
        self.threshold.as_ref().map(|t| &t.access)
    }

    /// Time each member took to deal its Shamir shares, and to verify and
    /// aggregate the shares it received (t-of-n only; empty otherwise).
    pub fn threshold_ceremony_times(&self) -> (&[Duration], &[Duration]) {
        self.threshold
            .as_ref()
            .map(|t| (&t.deal_times[..], &t.aggregate_times[..]))
            .unwrap_or((&[], &[]))
    }

    /// The members that decrypt `round` in a t-of-n channel: T consecutive
    /// members (in sorted order, wrapping) starting at round mod n, so the
    /// others are treated as offline and successive rounds use different sets.
    pub fn decrypting_set(&self, round: RoundId) -> Option<Vec<MemberId>> {
        let t = self.threshold.as_ref()?.access.threshold();
        let n = self.members.len();
        let mut set: Vec<MemberId> = (0..t)
            .map(|k| self.members[(round.0 as usize + k) % n].clone())
            .collect();
        set.sort();
        Some(set)
    }

    /// The below-threshold experiment: the first T − 1 members of the round's
    /// decrypting set interpolate with their own Lagrange coefficients (those
    /// of a (T − 1)-set) and decode; returns the median |decoded − sum|. With
    /// fewer than T Shamir shares the key is not determined, so this is noise.
    pub fn median_deviation_below_threshold(
        &mut self,
        transcript: &RoundTranscript,
    ) -> Result<f64, ChannelError> {
        let round = transcript
            .threshold
            .as_ref()
            .ok_or_else(|| ChannelError::Mismatch("not a threshold round".into()))?;
        let state = self
            .threshold
            .as_ref()
            .ok_or_else(|| ChannelError::Mismatch("not a threshold channel".into()))?;
        let below: Vec<MemberId> = round.active[1..].to_vec();
        let lambdas = state.access.lagrange_unchecked(&self.params, &below)?;
        let mut shares = Vec::with_capacity(below.len());
        for m in &below {
            let j = self
                .members
                .binary_search(m)
                .map_err(|_| ChannelError::UnknownMember(m.clone()))?;
            shares.push(ThresholdDecryptionShare::with_coefficients(
                &self.params,
                &state.secrets[j],
                &below,
                &lambdas,
                &transcript.aggregate,
                &mut self.rng,
            )?);
        }
        let partial: Vec<&DecryptionShare> = shares.iter().map(|s| s.share()).collect();
        transcript.median_deviation_of(&crate::decryption::add_shares_to_aggregate(
            &transcript.aggregate,
            &partial,
        )?)
    }

    /// Accept rounds with at least `k` contributors (default: every member).
    pub fn with_min_contributors(mut self, k: usize) -> Self {
        self.min_contributors = k.clamp(1, self.members.len());
        self
    }

    /// The parameters.
    pub fn params(&self) -> &Arc<Params> {
        &self.params
    }

    /// The members, sorted.
    pub fn members(&self) -> &[MemberId] {
        &self.members
    }

    /// The ceremony's public-key shares.
    pub fn public_key_shares(&self) -> &[PublicKeyShare] {
        &self.public_shares
    }

    /// The collective public key.
    pub fn public_key(&self) -> &CollectivePublicKey {
        &self.public_key
    }

    /// Time each member took to generate its key share.
    pub fn key_share_times(&self) -> &[Duration] {
        &self.key_share_times
    }

    /// The codec of this channel (fixed by the members and the bound).
    pub fn codec(&self) -> &FixedPointCodec {
        &self.codec
    }

    /// One full round, returning every object it produced.
    pub fn run_round(
        &mut self,
        round: RoundId,
        contributions: Vec<(MemberId, Vec<f64>)>,
    ) -> Result<RoundTranscript, ChannelError> {
        let len = check_contributions(
            round,
            Some(&self.members),
            self.min_contributors,
            &contributions,
        )?;
        if self.decrypted.contains(&round) {
            return Err(ChannelError::AlreadyDecrypted {
                member: self.members[0].clone(),
                round: round.0,
            });
        }
        let codec = self.codec.clone();
        let mut timings = RoundTimings::default();
        let mut encrypted = Vec::with_capacity(contributions.len());
        for (member, values) in &contributions {
            let start = Instant::now();
            let vector = EncryptedVector::encrypt(
                &self.params,
                &self.public_key,
                &codec,
                values,
                &mut self.rng,
            )?;
            timings.encrypt.push(start.elapsed());
            encrypted.push((member.clone(), vector));
        }
        let start = Instant::now();
        let aggregate = EncryptedVector::sum(encrypted.iter().map(|(_, v)| v))?;
        timings.aggregate = start.elapsed();
        let mut shares = Vec::with_capacity(self.secrets.len());
        let mut threshold = None;
        let plaintexts: Vec<Poly>;
        if let (Some(state), Some(active)) = (&self.threshold, self.decrypting_set(round)) {
            let mut tshares = Vec::with_capacity(active.len());
            for m in &active {
                let j = self
                    .members
                    .binary_search(m)
                    .map_err(|_| ChannelError::UnknownMember(m.clone()))?;
                let start = Instant::now();
                tshares.push(ThresholdDecryptionShare::generate(
                    &self.params,
                    &state.secrets[j],
                    &active,
                    &aggregate,
                    &mut self.rng,
                )?);
                timings.decryption_share.push(start.elapsed());
            }
            self.decrypted.insert(round);
            let start = Instant::now();
            plaintexts = combine_threshold(&state.access, &aggregate, &tshares)?;
            timings.combine = start.elapsed();
            shares.extend(tshares.iter().map(|s| s.share().clone()));
            threshold = Some(ThresholdRound {
                access: state.access.clone(),
                active,
                shares: tshares,
            });
        } else {
            for sk in &self.secrets {
                let start = Instant::now();
                shares.push(DecryptionShare::generate(
                    &self.params,
                    sk,
                    &aggregate,
                    &mut self.rng,
                )?);
                timings.decryption_share.push(start.elapsed());
            }
            self.decrypted.insert(round);
            let start = Instant::now();
            plaintexts = combine(&self.members, &aggregate, &shares)?;
            timings.combine = start.elapsed();
        }
        let start = Instant::now();
        let sum = codec.decode(&plaintexts, len)?;
        timings.combine += start.elapsed();
        Ok(RoundTranscript {
            round,
            contributions: encrypted,
            aggregate,
            shares,
            sum,
            codec,
            timings,
            threshold,
        })
    }
}

impl RoundTranscript {
    /// The collusion experiment (paper 004, App. B): decrypt with every share
    /// but `omitted`'s and return the median |decoded − sum| over the values.
    /// Without one share the result is uniform mod q, so this is large. In a
    /// t-of-n round the shares are the decrypting set's, so this is T − 1 of them.
    pub fn median_deviation_without(&self, omitted: &MemberId) -> Result<f64, ChannelError> {
        let partial: Vec<&DecryptionShare> = self
            .shares
            .iter()
            .filter(|s| s.member() != omitted)
            .collect();
        if partial.len() == self.shares.len() {
            return Err(ChannelError::UnknownMember(omitted.clone()));
        }
        self.median_deviation_of(&crate::decryption::add_shares_to_aggregate(
            &self.aggregate,
            &partial,
        )?)
    }

    /// The median |decoded − sum| of plaintexts combined from some shares.
    fn median_deviation_of(&self, plaintexts: &[Poly]) -> Result<f64, ChannelError> {
        let garbage = self.codec.decode_unchecked(plaintexts, self.sum.len())?;
        let mut deviations: Vec<f64> = garbage
            .iter()
            .zip(&self.sum)
            .map(|(g, s)| (g - s).abs())
            .collect();
        deviations.sort_by(f64::total_cmp);
        Ok(deviations
            .get(deviations.len() / 2)
            .copied()
            .unwrap_or(f64::NAN))
    }
}

impl SecureSum for HeSum {
    fn sum(
        &mut self,
        round: RoundId,
        contributions: Vec<(MemberId, Vec<f64>)>,
    ) -> Result<Vec<f64>, ChannelError> {
        Ok(self.run_round(round, contributions)?.sum)
    }

    /// Its encrypted vector and its decryption share, as wire objects.
    fn bytes_per_round(&self, member: &MemberId, len: usize) -> u64 {
        (crate::wire::encrypted_vector_len(&self.params, &self.codec, len)
            + crate::wire::decryption_share_len(&self.params, &self.codec, member, len))
            as u64
    }
}
