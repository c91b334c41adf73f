//! Binding a Shamir dealing to the dealer's key share (issue 15): a test
//! decryption of zero under the dealer's own public-key share, by T members
//! using only the shares that dealer sent them.
//!
//! The consistency check of [`crate::threshold`] proves that a dealer's shares
//! lie on one polynomial f_i of degree < T, not that f_i(0) is the s_i of its
//! public-key share b_i = −a·s_i + e_i, the key share the collective public key
//! was built from. Here everyone derives the same encryption of zero under
//! (b_i, a), C = (b_i·u + e0, a·u + e1), from a seed over the ceremony, the
//! dealer and the digests of its commitment (fixed by the dealing, so the
//! dealer cannot choose its polynomial after u). A decrypting set A of at least
//! T members publishes d_j = λ_j^A·f_i(x_j)·C1 + e_j (flooded like every
//! decryption share), and
//!
//! C0 + Σ_{j∈A} d_j = e_i·u + e0 + s_i·e1 + (f_i(0) − s_i)·C1 + Σ_j e_j.
//!
//! With f_i(0) = s_i every coefficient is at most η·(2N + 1) + |A|·2^b(n)
//! (|e_i·u|, |s_i·e1| ≤ N·η, |e0| ≤ η); with δ = f_i(0) − s_i ≠ 0 the term
//! δ·(a·u + e1), an RLWE sample times a fixed non-zero δ, is spread over R_q,
//! and the check fails and names the dealer ([`ThresholdError::InvalidDealing`]),
//! except with negligible probability over u. What the shares reveal is what
//! a flooded decryption of a public ciphertext reveals: nothing of s_i beyond
//! the (flooded) result (Li–Micciancio), as for every round's shares.

use crate::crs::derive_key;
use crate::threshold::{AccessStructure, ShamirCommitment, ShamirShare, ThresholdError};
use crate::{
    CeremonyId, ChannelError, Ciphertext, CollectivePublicKey, CommonRandomPoly, DecryptionShare,
    EncodingInfo, EncryptedVector, MemberId, Params, PublicKeyShare,
};
use fedhe_ring::{Csprng, Poly, Representation};
use std::collections::BTreeSet;

const CHECK_CONTEXT: &str = "fedhe 2026-11 shamir dealing check v1";
const CHECK_DOMAIN: [u8; 8] = *b"fedh-chk";

/// The test decryption of one dealer's dealing by one decrypting set.
#[derive(Clone, Debug)]
pub struct DealingCheck {
    dealer: MemberId,
    active: Vec<MemberId>,
    lambdas: Vec<(MemberId, Vec<u64>)>,
    ciphertext: EncryptedVector,
}

impl DealingCheck {
    /// The check of the dealing committed in `commitment`, whose dealer made
    /// `pk_share` for this ceremony's `crs`, decrypted by `active` (at least T
    /// members of `access`). Everyone computes the same ciphertext.
    pub fn new(
        params: &Params,
        ceremony: &CeremonyId,
        access: &AccessStructure,
        crs: &CommonRandomPoly,
        pk_share: &PublicKeyShare,
        commitment: &ShamirCommitment,
        active: &[MemberId],
    ) -> Result<Self, ChannelError> {
        let dealer = commitment.dealer().clone();
        if pk_share.member() != &dealer || pk_share.crs_seed() != crs.seed() {
            return Err(ChannelError::Mismatch(format!(
                "the public-key share given for the dealing check of {dealer} is {}'s or was \
                 made for another ceremony",
                pk_share.member()
            )));
        }
        let lambdas = access.lagrange_coefficients(params, active)?;
        let mut active = active.to_vec();
        active.sort();
        let mut fields: Vec<&[u8]> = vec![
            ceremony.as_str().as_bytes(),
            params.set().name.as_bytes(),
            dealer.as_str().as_bytes(),
        ];
        fields.extend(commitment.digests.iter().map(|d| &d[..]));
        let mut rng = Csprng::from_seed(&derive_key(CHECK_CONTEXT, &fields), CHECK_DOMAIN);
        let key = CollectivePublicKey::from_parts(
            vec![dealer.clone()],
            crs.clone(),
            pk_share.b().clone().into_ntt(),
        );
        let zero = Poly::zero(params.ring(), Representation::Coefficient);
        let ct = Ciphertext::encrypt(params, &key, &zero, &mut rng)?;
        let ciphertext = EncryptedVector {
            encoding: EncodingInfo {
                members: access.members().len() as u32,
                bound: 1.0,
                fractional_bits: 0,
                limbs: crate::codec::Limbs::One,
            },
            len: params.degree(),
            ciphertexts: vec![ct],
        };
        Ok(Self {
            dealer,
            active,
            lambdas,
            ciphertext,
        })
    }

    /// A member's share of the check: λ_j^A·f_i(x_j)·C1 + flooding, from the
    /// (verified) Shamir share it received from the dealer.
    pub fn share(
        &self,
        params: &Params,
        received: &ShamirShare,
        rng: &mut Csprng,
    ) -> Result<DecryptionShare, ChannelError> {
        if received.dealer() != &self.dealer {
            return Err(ChannelError::Mismatch(format!(
                "a share dealt by {} cannot answer the dealing check of {}",
                received.dealer(),
                self.dealer
            )));
        }
        let lambda = self
            .lambdas
            .iter()
            .find(|(m, _)| m == received.recipient())
            .map(|(_, l)| l)
            .ok_or_else(|| ChannelError::UnknownMember(received.recipient().clone()))?;
        let bits = params
            .set()
            .flooding_bits_for(self.ciphertext.encoding.members as usize);
        DecryptionShare::flooded(
            received.recipient(),
            &received.value,
            Some(lambda),
            &self.ciphertext,
            bits,
            rng,
        )
    }

    /// Combines one share from every member of the decrypting set and checks
    /// that the result is the noise of a zero: refuses the dealing, naming its
    /// dealer, otherwise.
    pub fn verify(&self, params: &Params, shares: &[DecryptionShare]) -> Result<(), ChannelError> {
        let mut seen = BTreeSet::new();
        for s in shares {
            if self.active.binary_search(s.member()).is_err() {
                return Err(ThresholdError::ActiveSetMismatch(s.member().clone()).into());
            }
            if !seen.insert(s.member()) {
                return Err(ChannelError::DuplicateMember(s.member().clone()));
            }
        }
        if let Some(m) = self.active.iter().find(|m| !seen.contains(m)) {
            return Err(ThresholdError::MissingActiveShare(m.clone()).into());
        }
        let refs: Vec<&DecryptionShare> = shares.iter().collect();
        let combined = crate::decryption::add_shares_to_aggregate(&self.ciphertext, &refs)?;
        let set = params.set();
        let bound = set.error_eta as i128 * (2 * set.degree as i128 + 1)
            + self.active.len() as i128
                * (1i128 << set.flooding_bits_for(self.ciphertext.encoding.members as usize));
        let limbs = set.moduli.len();
        let small = (0..params.degree()).all(|j| {
            let residues: Vec<u64> = (0..limbs).map(|l| combined[0].limb(l)[j]).collect();
            params
                .crt()
                .reconstruct_centered_i128(&residues)
                .is_some_and(|v| v.abs() <= bound)
        });
        if small {
            Ok(())
        } else {
            Err(ThresholdError::InvalidDealing(self.dealer.clone()).into())
        }
    }

    /// The dealer checked.
    pub fn dealer(&self) -> &MemberId {
        &self.dealer
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::threshold::Thresholdizer;
    use crate::{InsecurePolicy, ParameterSet, SecretKeyShare};

    #[test]
    fn an_honest_dealing_passes_and_a_dealing_of_another_secret_names_its_dealer() {
        let params = ParameterSet::TOY_N1024
            .validate(InsecurePolicy::Allow)
            .unwrap();
        let members: Vec<MemberId> = (1..=5)
            .map(|i| MemberId::new(format!("m{i}")).unwrap())
            .collect();
        let ceremony = CeremonyId::new("check").unwrap();
        let access = AccessStructure::new(&members, 3).unwrap();
        let crs = CommonRandomPoly::for_ceremony(&params, &ceremony, &members).unwrap();
        let mut rng = Csprng::from_u128_seed(91);
        let sk = SecretKeyShare::generate(&params, members[0].clone(), &mut rng);
        let pk = PublicKeyShare::generate(&params, &sk, &crs, &mut rng).unwrap();
        let honest = Thresholdizer::deal(&params, &ceremony, &access, &sk, &mut rng).unwrap();
        // A dealer that shares another ternary secret (consistently: every
        // share verifies) while its public-key share is of sk.
        let other = SecretKeyShare::generate(&params, members[0].clone(), &mut rng);
        let cheat = Thresholdizer::deal(&params, &ceremony, &access, &other, &mut rng).unwrap();
        for (share, me) in cheat.shares.iter().zip(&members) {
            share
                .verify(&params, &ceremony, &access, me, &cheat.commitment)
                .unwrap();
        }
        for active in [&members[..3], &members[1..5], &members[2..5]] {
            for (dealing, ok) in [(&honest, true), (&cheat, false)] {
                let check = DealingCheck::new(
                    &params,
                    &ceremony,
                    &access,
                    &crs,
                    &pk,
                    &dealing.commitment,
                    active,
                )
                .unwrap();
                let shares: Vec<DecryptionShare> = active
                    .iter()
                    .map(|m| {
                        let j = members.iter().position(|x| x == m).unwrap();
                        check.share(&params, &dealing.shares[j], &mut rng).unwrap()
                    })
                    .collect();
                let result = check.verify(&params, &shares);
                if ok {
                    result.unwrap();
                } else {
                    let err = result.unwrap_err();
                    assert_eq!(
                        err,
                        ThresholdError::InvalidDealing(members[0].clone()).into()
                    );
                    assert!(err.to_string().contains("m1"), "{err}");
                }
                // One share short is refused, not judged.
                assert!(matches!(
                    check.verify(&params, &shares[1..]),
                    Err(ChannelError::Threshold(ThresholdError::MissingActiveShare(
                        _
                    )))
                ));
            }
        }
        // Fewer than T members cannot run the check.
        assert!(DealingCheck::new(
            &params,
            &ceremony,
            &access,
            &crs,
            &pk,
            &honest.commitment,
            &members[..2]
        )
        .is_err());
    }
}
