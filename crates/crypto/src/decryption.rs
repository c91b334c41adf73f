//! Collaborative decryption (DESIGN.md §2 steps 4-5; paper 004 eq. (14)):
//! every member publishes a flooded share d_j = s_j·C1 + e_j^flood, and
//! C0 + Σ_j d_j = Δ·Σ m_i + E reveals only the sum.

use crate::{Aggregate, ChannelError, EncryptedVector, MemberId, Params, SecretKeyShare};
use fedhe_ring::{Csprng, Poly, Representation, SmallDistribution};

/// A member's decryption share of an aggregate: one polynomial per ciphertext.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecryptionShare {
    pub(crate) member: MemberId,
    pub(crate) polys: Vec<Poly>,
}

impl DecryptionShare {
    /// d_j = s_j·C1 + e_j, with e_j uniform on the integers [−2^b, 2^b)
    /// (b = b(n) of [`crate::ParameterSet::flooding_bits_for`] for the
    /// aggregate's n members: 2^65 at the default set up to 13 members; the
    /// statistical distance to the ciphertext noise is always at most 2^−40). The flooding
    /// hides s_j·(noise) terms, so shares and results leak no key material
    /// (Li–Micciancio); it is drawn as exact integers.
    pub fn generate(
        params: &Params,
        secret: &SecretKeyShare,
        aggregate: &EncryptedVector,
        rng: &mut Csprng,
    ) -> Result<Self, ChannelError> {
        let bits = params
            .set()
            .flooding_bits_for(aggregate.encoding.members as usize);
        Self::generate_with_flooding(secret, aggregate, bits, rng)
    }

    pub(crate) fn generate_with_flooding(
        secret: &SecretKeyShare,
        aggregate: &EncryptedVector,
        flooding_bits: u32,
        rng: &mut Csprng,
    ) -> Result<Self, ChannelError> {
        Self::flooded(
            secret.member(),
            secret.s_ntt(),
            None,
            aggregate,
            flooding_bits,
            rng,
        )
    }

    /// d = λ·(s·C1) + e for every ciphertext, e uniform on [−2^b, 2^b): the
    /// product of eq. (14), shared by the n-of-n share (s = s_j, no λ) and the
    /// threshold share (s = s'_j and λ = λ_j its Lagrange coefficient, one
    /// residue per prime; [`crate::threshold`]). `s_ntt` is in NTT form.
    pub(crate) fn flooded(
        member: &MemberId,
        s_ntt: &Poly,
        scale: Option<&[u64]>,
        aggregate: &EncryptedVector,
        flooding_bits: u32,
        rng: &mut Csprng,
    ) -> Result<Self, ChannelError> {
        let flood = SmallDistribution::UniformInterval {
            bits: flooding_bits,
        };
        let polys = aggregate
            .ciphertexts
            .iter()
            .map(|ct| {
                let mut d = s_ntt.mul(&ct.c1)?;
                if let Some(lambda) = scale {
                    d.mul_scalar_assign(lambda)?;
                }
                rng.add_sample_assign(&mut d, flood)?;
                Ok(d)
            })
            .collect::<Result<Vec<_>, ChannelError>>()?;
        Ok(Self {
            member: member.clone(),
            polys,
        })
    }

    /// The member that produced it.
    pub fn member(&self) -> &MemberId {
        &self.member
    }

    /// One polynomial per ciphertext of the aggregate.
    pub fn polys(&self) -> &[Poly] {
        &self.polys
    }
}

/// The combined decryption share `D = Σ_j d_j` of an aggregate: the
/// polynomials that decryption adds to the aggregate's `c0` (one per
/// ciphertext). n-of-n sums every member's share; t-of-n sums the decrypting
/// set's threshold shares, whose Lagrange coefficients are already inside
/// each share ([`crate::threshold`]), so the weights are 1 in both cases.
/// The server publishes it (issue 16) so that a member can finish decryption
/// itself, `C0 + D`, and check `D` on digests instead of downloading every
/// share (`fedhe_crypto::sum_digest`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CombinedShare {
    polys: Vec<Poly>,
}

/// `Σ_j d_j` added up one share at a time, with no check of who is missing:
/// a server combining n shares holds one share and the sum, not n of them
/// (issue 16). Each share must have one polynomial per ciphertext of the
/// aggregate.
#[derive(Debug)]
pub struct ShareSum {
    parts: usize,
    polys: Option<Vec<Poly>>,
}

impl ShareSum {
    /// An empty sum for shares of `aggregate`.
    pub fn new(aggregate: &EncryptedVector) -> Self {
        Self {
            parts: aggregate.ciphertexts.len(),
            polys: None,
        }
    }
}

impl Aggregate for ShareSum {
    type Share = DecryptionShare;
    type Output = CombinedShare;

    /// Adds `share`; refuses one of another shape than the aggregate's.
    fn add(&mut self, share: &DecryptionShare) -> Result<(), ChannelError> {
        if share.polys.len() != self.parts {
            return Err(ChannelError::Mismatch(format!(
                "the share of {} has {} polynomials for an aggregate of {} ciphertexts",
                share.member,
                share.polys.len(),
                self.parts
            )));
        }
        match &mut self.polys {
            None => self.polys = Some(share.polys.clone()),
            Some(acc) => {
                for (a, d) in acc.iter_mut().zip(&share.polys) {
                    a.add_assign(d)?;
                }
            }
        }
        Ok(())
    }

    /// The combined share; refused if no share was added.
    fn finish(self) -> Result<CombinedShare, ChannelError> {
        let polys = self
            .polys
            .ok_or_else(|| ChannelError::Mismatch("no decryption share to combine".to_string()))?;
        Ok(CombinedShare { polys })
    }
}

/// The n-of-n combination of [`combined_share`], one share at a time: every
/// share from a distinct member of the ceremony, and none missing at the end.
#[derive(Debug)]
pub struct ShareCombiner {
    members: Vec<MemberId>,
    seen: std::collections::BTreeSet<MemberId>,
    sum: ShareSum,
}

impl ShareCombiner {
    /// Expects one share of `aggregate` from each of `members`.
    pub fn new(members: &[MemberId], aggregate: &EncryptedVector) -> Self {
        Self {
            members: members.to_vec(),
            seen: Default::default(),
            sum: ShareSum::new(aggregate),
        }
    }
}

impl Aggregate for ShareCombiner {
    type Share = DecryptionShare;
    type Output = CombinedShare;

    /// Adds `share`; refuses an unknown member, a member's second share, or
    /// a share of another shape.
    fn add(&mut self, share: &DecryptionShare) -> Result<(), ChannelError> {
        if !self.members.contains(&share.member) {
            return Err(ChannelError::UnknownMember(share.member.clone()));
        }
        if self.seen.contains(&share.member) {
            return Err(ChannelError::DuplicateMember(share.member.clone()));
        }
        self.sum.add(share)?;
        self.seen.insert(share.member.clone());
        Ok(())
    }

    /// `D`, refused while a member's share is missing.
    fn finish(self) -> Result<CombinedShare, ChannelError> {
        if let Some(missing) = self.members.iter().find(|m| !self.seen.contains(*m)) {
            return Err(ChannelError::MissingShare(missing.clone()));
        }
        self.sum.finish()
    }
}

impl CombinedShare {
    /// `Σ_j d_j` of the shares given, with no check of who is missing; each
    /// share must have one polynomial per ciphertext of `aggregate`.
    pub fn sum(
        aggregate: &EncryptedVector,
        shares: &[&DecryptionShare],
    ) -> Result<Self, ChannelError> {
        ShareSum::new(aggregate).aggregate(shares.iter().copied())
    }

    /// One polynomial per ciphertext of the aggregate.
    pub fn polys(&self) -> &[Poly] {
        &self.polys
    }

    /// The polynomials, for [`crate::result_key::ResultKey::unblind`].
    pub(crate) fn polys_mut(&mut self) -> &mut [Poly] {
        &mut self.polys
    }

    /// `C0 + D` per ciphertext: the noisy scaled plaintexts for the
    /// aggregate's codec to decode.
    pub fn decrypt(&self, aggregate: &EncryptedVector) -> Result<Vec<Poly>, ChannelError> {
        if self.polys.len() != aggregate.ciphertexts.len() {
            return Err(ChannelError::Mismatch(format!(
                "the combined share has {} polynomials for an aggregate of {} ciphertexts",
                self.polys.len(),
                aggregate.ciphertexts.len()
            )));
        }
        aggregate
            .ciphertexts
            .iter()
            .zip(&self.polys)
            .map(|(ct, d)| {
                let mut p = ct.c0.clone();
                p.add_assign(d)?;
                Ok(p)
            })
            .collect()
    }

    /// The residues of every polynomial (coefficient representation), as
    /// little-endian u64, polynomial after polynomial.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.polys
            .iter()
            .flat_map(|p| p.residues().iter().flat_map(|r| r.to_le_bytes()))
            .collect()
    }

    /// Decodes [`Self::to_bytes`] for an aggregate of `parts` ciphertexts,
    /// checking the length and that every residue is reduced.
    pub fn from_bytes(params: &Params, bytes: &[u8], parts: usize) -> Result<Self, ChannelError> {
        let words = params.degree() * params.set().moduli.len();
        let expected = parts
            .checked_mul(words * 8)
            .ok_or_else(|| ChannelError::Mismatch(format!("{parts} ciphertexts is too many")))?;
        if parts == 0 || bytes.len() != expected {
            return Err(ChannelError::Mismatch(format!(
                "a combined share of {parts} ciphertexts has {expected} bytes, not {}",
                bytes.len()
            )));
        }
        let polys = bytes
            .chunks_exact(words * 8)
            .map(|chunk| {
                let data = chunk
                    .chunks_exact(8)
                    .map(|c| u64::from_le_bytes(c.try_into().expect("chunks of 8")))
                    .collect();
                Poly::from_residues(params.ring(), Representation::Coefficient, data)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self { polys })
    }
}

/// C0 + Σ_j d_j for the shares given, with no check of who is missing.
///
/// With every member's share this is Δ·Σ m_i + E. Without one, the term
/// −a·u·s_k of the missing member remains and the result is uniformly random
/// mod q (paper 004, App. B) — which is what the collusion experiment measures.
pub fn add_shares_to_aggregate(
    aggregate: &EncryptedVector,
    shares: &[&DecryptionShare],
) -> Result<Vec<Poly>, ChannelError> {
    CombinedShare::sum(aggregate, shares)?.decrypt(aggregate)
}

/// Combine (n-of-n): checks that there is exactly one share from every member,
/// then returns the noisy scaled plaintexts C0 + Σ_j d_j for the codec to decode.
pub fn combine(
    members: &[MemberId],
    aggregate: &EncryptedVector,
    shares: &[DecryptionShare],
) -> Result<Vec<Poly>, ChannelError> {
    combined_share(members, aggregate, shares)?.decrypt(aggregate)
}

/// [`combine`]'s checks, then `D = Σ_j d_j` ([`CombinedShare`]).
pub fn combined_share(
    members: &[MemberId],
    aggregate: &EncryptedVector,
    shares: &[DecryptionShare],
) -> Result<CombinedShare, ChannelError> {
    ShareCombiner::new(members, aggregate).aggregate(shares)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CeremonyId, HeSum, InsecurePolicy, ParameterSet, RoundId};
    use num_traits::ToPrimitive;

    /// Pearson's χ² over 16 equal buckets of [−2^b, 2^b) for the flooding terms
    /// e_j = d_j − s_j·C1 (recovered with the secret share, which a test may hold).
    fn flooding_chi_square(flooding_bits: u32) -> f64 {
        let params = ParameterSet::TOY_N1024
            .validate(InsecurePolicy::Allow)
            .unwrap();
        let members: Vec<MemberId> = ["a", "b"]
            .iter()
            .map(|m| MemberId::new(*m).unwrap())
            .collect();
        let mut channel = HeSum::new(
            params.clone(),
            &CeremonyId::new("flood").unwrap(),
            members.clone(),
            1.0,
            Csprng::from_u128_seed(1),
        )
        .unwrap();
        let transcript = channel
            .run_round(
                RoundId(1),
                members.iter().map(|m| (m.clone(), vec![0.5; 10])).collect(),
            )
            .unwrap();
        let mut rng = Csprng::from_u128_seed(2);
        let mut counts = [0u64; 16];
        let half = 1i128 << params.set().flooding_bits;
        for _ in 0..8 {
            let share = DecryptionShare::generate_with_flooding(
                &channel.secrets[0],
                &transcript.aggregate,
                flooding_bits,
                &mut rng,
            )
            .unwrap();
            let mut e = share.polys[0].clone();
            e.sub_assign(
                &channel.secrets[0]
                    .s_ntt()
                    .mul(&transcript.aggregate.ciphertexts[0].c1)
                    .unwrap(),
            )
            .unwrap();
            for j in 0..params.degree() {
                let residues: Vec<u64> = (0..2).map(|l| e.limb(l)[j]).collect();
                let v = params
                    .crt()
                    .reconstruct_centered(&residues)
                    .to_i128()
                    .unwrap();
                let bucket = ((v + half).clamp(0, 2 * half - 1) * 16 / (2 * half)) as usize;
                counts[bucket] += 1;
            }
        }
        let total: u64 = counts.iter().sum();
        let expected = total as f64 / 16.0;
        counts
            .iter()
            .map(|&c| (c as f64 - expected).powi(2) / expected)
            .sum()
    }

    /// The streaming combiner against the plain sum it replaces: the same
    /// `D`, whose decryption is the contributions' sum (decoded), in any
    /// order; and each refusal of `combined_share` named as before.
    #[test]
    fn shares_combined_one_at_a_time_decrypt_the_sum_and_refuse_by_name() {
        use crate::test_ceremony::ToyCeremony;
        use crate::FixedPointCodec;
        let ToyCeremony {
            params,
            ids,
            secrets,
            key,
            mut rng,
            ..
        } = ToyCeremony::new(&["a", "b", "c"], [5; 32], 9);
        let codec = FixedPointCodec::new(&params, 3, 10.0).unwrap();
        let inputs = [[1.5, -2.0], [0.25, 3.0], [-1.0, 0.5]];
        let mut aggregate =
            EncryptedVector::encrypt(&params, &key, &codec, &inputs[0], &mut rng).unwrap();
        for x in &inputs[1..] {
            let v = EncryptedVector::encrypt(&params, &key, &codec, x, &mut rng).unwrap();
            aggregate.add_assign(&v).unwrap();
        }
        let shares: Vec<DecryptionShare> = secrets
            .iter()
            .map(|sk| DecryptionShare::generate(&params, sk, &aggregate, &mut rng).unwrap())
            .collect();
        let reference = CombinedShare::sum(&aggregate, &shares.iter().collect::<Vec<_>>()).unwrap();
        for order in [[0, 1, 2], [2, 0, 1]] {
            let mut combiner = ShareCombiner::new(&ids, &aggregate);
            for k in order {
                combiner.add(&shares[k]).unwrap();
            }
            let combined = combiner.finish().unwrap();
            assert_eq!(combined, reference);
            let values = codec
                .decode(&combined.decrypt(&aggregate).unwrap(), 2)
                .unwrap();
            for (k, v) in values.iter().enumerate() {
                let expected: f64 = inputs.iter().map(|x| x[k]).sum();
                assert!(
                    (v - expected).abs() <= codec.error_bound(),
                    "{v} vs {expected}"
                );
            }
        }
        let mut twice = ShareCombiner::new(&ids, &aggregate);
        twice.add(&shares[0]).unwrap();
        assert_eq!(
            twice.add(&shares[0]).unwrap_err(),
            ChannelError::DuplicateMember(ids[0].clone())
        );
        let mut short = ShareCombiner::new(&ids, &aggregate);
        short.add(&shares[0]).unwrap();
        short.add(&shares[2]).unwrap();
        assert_eq!(
            short.finish().unwrap_err(),
            ChannelError::MissingShare(ids[1].clone())
        );
        let mut strangers = ShareCombiner::new(&ids[..2], &aggregate);
        assert_eq!(
            strangers.add(&shares[2]).unwrap_err(),
            ChannelError::UnknownMember(ids[2].clone())
        );
        let mut other_shape = shares[1].clone();
        other_shape.polys.push(other_shape.polys[0].clone());
        let mut shaped = ShareCombiner::new(&ids, &aggregate);
        let e = shaped.add(&other_shape).unwrap_err().to_string();
        assert!(e.contains("2 polynomials for an aggregate of 1"), "{e}");
        assert!(ShareCombiner::new(&ids, &aggregate).finish().is_err());
    }

    #[test]
    fn flooding_noise_is_uniform_over_its_range() {
        // χ²(15) 99.9% quantile 37.7: the flooded share passes…
        let flooded = flooding_chi_square(ParameterSet::TOY_N1024.flooding_bits);
        assert!(flooded < 37.7, "flooded share: χ² = {flooded}");
        // …and the same statistic rejects an unflooded share (e ∈ {−1, 0}).
        let unflooded = flooding_chi_square(0);
        assert!(unflooded > 1000.0, "unflooded share: χ² = {unflooded}");
    }
}
