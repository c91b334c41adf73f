//! Collective public-key generation (DESIGN.md §2 step 1; paper 004 eq. (1);
//! Mouchet et al.'s CKG protocol): each member generates a share, the shares
//! aggregate into the collective public key.

use crate::{Aggregate, ChannelError, CommonRandomPoly, MemberId, Params};
use fedhe_ring::{Csprng, Poly, SmallDistribution};
use std::sync::Arc;
use zeroize::{Zeroize, ZeroizeOnDrop};

/// A member's share s_i of the collective secret s = Σ s_i: a uniform ternary
/// polynomial, kept in NTT form. Wiped on drop; `Debug` shows only the member.
pub struct SecretKeyShare {
    member: MemberId,
    s_ntt: Poly,
}

impl Drop for SecretKeyShare {
    fn drop(&mut self) {
        self.s_ntt.zeroize();
    }
}
impl ZeroizeOnDrop for SecretKeyShare {}

impl std::fmt::Debug for SecretKeyShare {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecretKeyShare")
            .field("member", &self.member)
            .finish_non_exhaustive()
    }
}

impl SecretKeyShare {
    /// Samples s_i uniform in {−1, 0, 1}^N.
    pub fn generate(params: &Params, member: MemberId, rng: &mut Csprng) -> Self {
        let s = rng
            .sample_poly(params.ring(), SmallDistribution::Ternary)
            .expect("sampled polynomials have the ring's degree");
        Self {
            member,
            s_ntt: s.into_ntt(),
        }
    }

    pub(crate) fn from_parts(member: MemberId, s_ntt: Poly) -> Self {
        Self { member, s_ntt }
    }

    /// The member holding this share.
    pub fn member(&self) -> &MemberId {
        &self.member
    }

    /// s_i in NTT form. Secret: for the protocol's own products only.
    pub(crate) fn s_ntt(&self) -> &Poly {
        &self.s_ntt
    }
}

/// A member's public-key share b_i = −a·s_i + e_i, e_i ← CBD(η).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublicKeyShare {
    member: MemberId,
    crs_seed: [u8; 32],
    b: Poly,
}

impl PublicKeyShare {
    /// GenShare: b_i = −a·s_i + e_i.
    pub fn generate(
        params: &Params,
        secret: &SecretKeyShare,
        crs: &CommonRandomPoly,
        rng: &mut Csprng,
    ) -> Result<Self, ChannelError> {
        let mut b = crs.a_ntt().mul(secret.s_ntt())?;
        b.neg_assign();
        rng.add_sample_assign(
            &mut b,
            SmallDistribution::CenteredBinomial {
                eta: params.set().error_eta,
            },
        )?;
        Ok(Self {
            member: secret.member.clone(),
            crs_seed: *crs.seed(),
            b,
        })
    }

    pub(crate) fn from_parts(member: MemberId, crs_seed: [u8; 32], b: Poly) -> Self {
        Self {
            member,
            crs_seed,
            b,
        }
    }

    /// The member that generated it.
    pub fn member(&self) -> &MemberId {
        &self.member
    }

    /// The seed of the common reference polynomial it was generated against.
    pub fn crs_seed(&self) -> &[u8; 32] {
        &self.crs_seed
    }

    /// b_i, coefficient form.
    pub fn b(&self) -> &Poly {
        &self.b
    }
}

/// [`CollectivePublicKey::aggregate`] one share at a time: a server
/// aggregating n shares holds one share and the sum, not n of them
/// (issue 16).
#[derive(Debug)]
pub struct KeyAggregation {
    members: Vec<MemberId>,
    crs: CommonRandomPoly,
    seen: std::collections::BTreeSet<MemberId>,
    b: Poly,
}

impl KeyAggregation {
    /// Expects one share from each of `members`, made against `crs`.
    pub fn new(crs: &CommonRandomPoly, members: &[MemberId]) -> Self {
        let mut members = members.to_vec();
        members.sort();
        Self {
            members,
            crs: crs.clone(),
            seen: Default::default(),
            b: Poly::zero(crs.ring(), fedhe_ring::Representation::Coefficient),
        }
    }
}

impl Aggregate for KeyAggregation {
    type Share = PublicKeyShare;
    type Output = CollectivePublicKey;

    /// Adds `share`; refuses an unknown member, a member's second share, or
    /// a share made against another ceremony's polynomial.
    fn add(&mut self, share: &PublicKeyShare) -> Result<(), ChannelError> {
        if self.members.binary_search(&share.member).is_err() {
            return Err(ChannelError::UnknownMember(share.member.clone()));
        }
        if self.seen.contains(&share.member) {
            return Err(ChannelError::DuplicateMember(share.member.clone()));
        }
        if share.crs_seed != *self.crs.seed() {
            return Err(ChannelError::Mismatch(format!(
                "the public-key share of {} was made for another ceremony",
                share.member
            )));
        }
        self.b.add_assign(&share.b)?;
        self.seen.insert(share.member.clone());
        Ok(())
    }

    /// The collective key; refused while a member's share is missing.
    fn finish(self) -> Result<CollectivePublicKey, ChannelError> {
        if let Some(missing) = self.members.iter().find(|m| !self.seen.contains(*m)) {
            return Err(ChannelError::MissingShare(missing.clone()));
        }
        Ok(CollectivePublicKey {
            members: self.members,
            crs: self.crs,
            b_ntt: self.b.into_ntt(),
        })
    }
}

/// The collective public key pk = (b, a) = (Σ b_i, a) = (−a·s + Σ e_i, a).
/// Both halves are cached in NTT form: every encryption multiplies by them.
#[derive(Clone, Debug)]
pub struct CollectivePublicKey {
    members: Vec<MemberId>,
    crs: CommonRandomPoly,
    b_ntt: Poly,
}

impl CollectivePublicKey {
    /// Aggregate: b = Σ_i b_i over exactly one share per member, all made
    /// against this ceremony's common reference polynomial.
    pub fn aggregate(
        crs: &CommonRandomPoly,
        members: &[MemberId],
        shares: &[PublicKeyShare],
    ) -> Result<Self, ChannelError> {
        KeyAggregation::new(crs, members).aggregate(shares)
    }

    /// The members, sorted.
    pub fn members(&self) -> &[MemberId] {
        &self.members
    }

    /// The common reference polynomial a.
    pub fn crs(&self) -> &CommonRandomPoly {
        &self.crs
    }

    /// b in NTT form.
    pub fn b_ntt(&self) -> &Poly {
        &self.b_ntt
    }

    /// b in coefficient form.
    pub fn b(&self) -> Poly {
        let mut b = self.b_ntt.clone();
        b.to_coefficient();
        b
    }

    pub(crate) fn from_parts(members: Vec<MemberId>, crs: CommonRandomPoly, b_ntt: Poly) -> Self {
        Self {
            members,
            crs,
            b_ntt,
        }
    }

    /// The ring.
    pub fn ring(&self) -> &Arc<fedhe_ring::RingContext> {
        self.b_ntt.context()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decryption::combined_share;
    use crate::test_ceremony::ToyCeremony;
    use crate::WireObject;
    use crate::{DecryptionShare, EncryptedVector, FixedPointCodec};

    /// Shares aggregated one at a time make the key of the one-shot
    /// aggregation in any order, a key under which the members decrypt what
    /// was encrypted; and each refusal is named.
    #[test]
    fn a_key_aggregated_one_share_at_a_time_decrypts_and_refuses_by_name() {
        let ToyCeremony {
            params,
            ids,
            crs,
            secrets,
            shares,
            mut rng,
            ..
        } = ToyCeremony::new(&["a", "b", "c"], [3; 32], 4);
        let reference = CollectivePublicKey::aggregate(&crs, &ids, &shares)
            .unwrap()
            .to_bytes(&params);
        let mut aggregation = KeyAggregation::new(&crs, &ids);
        for k in [2, 0, 1] {
            aggregation.add(&shares[k]).unwrap();
        }
        let key = aggregation.finish().unwrap();
        assert_eq!(key.to_bytes(&params), reference);
        let codec = FixedPointCodec::new(&params, 3, 10.0).unwrap();
        let v = EncryptedVector::encrypt(&params, &key, &codec, &[2.5, -1.25], &mut rng).unwrap();
        let parts: Vec<DecryptionShare> = secrets
            .iter()
            .map(|sk| DecryptionShare::generate(&params, sk, &v, &mut rng).unwrap())
            .collect();
        let plain = combined_share(&ids, &v, &parts)
            .unwrap()
            .decrypt(&v)
            .unwrap();
        let values = codec.decode(&plain, 2).unwrap();
        assert!((values[0] - 2.5).abs() <= codec.error_bound(), "{values:?}");
        assert!(
            (values[1] + 1.25).abs() <= codec.error_bound(),
            "{values:?}"
        );

        let mut twice = KeyAggregation::new(&crs, &ids);
        twice.add(&shares[1]).unwrap();
        assert_eq!(
            twice.add(&shares[1]).unwrap_err(),
            ChannelError::DuplicateMember(ids[1].clone())
        );
        let mut strangers = KeyAggregation::new(&crs, &ids[..2]);
        assert_eq!(
            strangers.add(&shares[2]).unwrap_err(),
            ChannelError::UnknownMember(ids[2].clone())
        );
        let other_crs = CommonRandomPoly::from_seed(&params, [4; 32]);
        let foreign = PublicKeyShare::generate(&params, &secrets[0], &other_crs, &mut rng).unwrap();
        let e = KeyAggregation::new(&crs, &ids)
            .add(&foreign)
            .unwrap_err()
            .to_string();
        assert!(e.contains("made for another ceremony"), "{e}");
        let mut short = KeyAggregation::new(&crs, &ids);
        short.add(&shares[0]).unwrap();
        short.add(&shares[2]).unwrap();
        assert_eq!(
            short.finish().unwrap_err(),
            ChannelError::MissingShare(ids[1].clone())
        );
    }
}
