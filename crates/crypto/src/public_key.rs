//! Collective public-key generation (DESIGN.md §2 step 1; paper 004 eq. (1);
//! Mouchet et al.'s CKG protocol): each member generates a share, the shares
//! aggregate into the collective public key.

use crate::{ChannelError, CommonRandomPoly, MemberId, Params};
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
        let mut sorted_members = members.to_vec();
        sorted_members.sort();
        let mut b = Poly::zero(crs.ring(), fedhe_ring::Representation::Coefficient);
        let mut seen = std::collections::BTreeSet::new();
        for share in shares {
            if sorted_members.binary_search(&share.member).is_err() {
                return Err(ChannelError::UnknownMember(share.member.clone()));
            }
            if !seen.insert(share.member.clone()) {
                return Err(ChannelError::DuplicateMember(share.member.clone()));
            }
            if share.crs_seed != *crs.seed() {
                return Err(ChannelError::Mismatch(format!(
                    "the public-key share of {} was made for another ceremony",
                    share.member
                )));
            }
            b.add_assign(&share.b)?;
        }
        if let Some(missing) = sorted_members.iter().find(|m| !seen.contains(*m)) {
            return Err(ChannelError::MissingShare(missing.clone()));
        }
        Ok(Self {
            members: sorted_members,
            crs: crs.clone(),
            b_ntt: b.into_ntt(),
        })
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
