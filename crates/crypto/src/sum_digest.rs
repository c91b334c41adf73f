//! Checking an aggregate against its contributions without downloading them
//! (issue 16): a linear digest on a challenge fixed after the aggregate.
//!
//! To verify before it decrypts (DESIGN.md §2 step 4), a member used to fetch
//! every contribution and add them up: n ciphertexts per member, n² per
//! round. Instead, once the server has published the aggregate `A` and the
//! list of contributions, everybody derives the same public challenge
//! `R = H(study, round, list, A)` (Fiat–Shamir): for every polynomial of a
//! ciphertext, [`PROJECTIONS`] polynomials of uniform residues. The digest of
//! a vector of ciphertexts `c` is, per prime `p` and projection `j`,
//!
//! ```text
//! d_{p,j}(c) = Σ_k ⟨R_{k,j}, c_k⟩ mod p     (k over the polynomials of c)
//! ```
//!
//! It is linear, so `d(Σ_i c_i) = Σ_i d(c_i)`. Each contributor signs the
//! digest of its own contribution; a member checks `Σ_i d_i = d(A)` on the
//! aggregate alone.
//!
//! **Soundness.** Let `Δ = A − Σ c_i ≠ 0`. `R` is fixed only after `A` and the
//! list (it hashes both), and each `d_{p,j}(Δ)` is a non-zero linear form in
//! uniform residues wherever `Δ` has a non-zero residue mod `p`, so it vanishes
//! with probability `1/p`, independently for each projection: an aggregate
//! that is not the sum passes with probability at most `p^−PROJECTIONS`
//! (< 2^−120 at the default set, whose primes exceed 2^61) per aggregate the
//! server tries. Grinding over aggregates costs one digest each.
//!
//! **What it assumes.** The contributors' digests are honest: a contributor
//! colluding with the server could sign a false digest. A member therefore
//! also downloads a few contributions in full and checks their signed
//! digests (a false one is named), which catches a colluder with the
//! probability of sampling it; see `crates/client/src/verify.rs`.

use crate::c1_commitment::{C1Commitment, POINT_BYTES};
use crate::crs::derive_key;
use crate::threshold::project;
use crate::{ChannelError, EncryptedVector, Params};
use fedhe_ring::modular::add_mod;
use fedhe_ring::{Csprng, Poly};

/// Independent projections per prime.
pub const PROJECTIONS: usize = 2;

const CHALLENGE_CONTEXT: &str = "fedhe 2026-11 aggregate sum digest challenge v1";
/// Another derive-key context for the challenge of a combined decryption
/// share: it can never equal an aggregate's challenge.
const SHARE_CHALLENGE_CONTEXT: &str = "fedhe 2026-11 combined decryption share digest challenge v1";
const CHALLENGE_DOMAIN: [u8; 8] = *b"fedh-sum";

/// The public challenge `R` of one aggregate (module docs): a seed from which
/// the projection polynomials are expanded in a fixed order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SumChallenge {
    seed: [u8; 32],
}

impl SumChallenge {
    /// The challenge of an aggregate: BLAKE3 (derive-key mode) of the
    /// parameter set, the study, the round, the hash of the contribution list
    /// and the hash of the aggregate's wire bytes.
    pub fn derive(
        params: &Params,
        study: &str,
        round: u64,
        list_hash: &[u8; 32],
        aggregate_hash: &[u8; 32],
    ) -> Self {
        Self::derive_in(
            CHALLENGE_CONTEXT,
            params,
            study,
            round,
            &[list_hash, aggregate_hash],
        )
    }

    /// BLAKE3 (derive-key mode, `context`) of the parameter set's name, the
    /// study, the round and `hashes`.
    fn derive_in(
        context: &str,
        params: &Params,
        study: &str,
        round: u64,
        hashes: &[&[u8; 32]],
    ) -> Self {
        let round = round.to_le_bytes();
        let mut parts: Vec<&[u8]> = vec![params.set().name.as_bytes(), study.as_bytes(), &round];
        parts.extend(hashes.iter().map(|h| &h[..]));
        Self {
            seed: derive_key(context, &parts),
        }
    }

    /// The challenge of a combined decryption share `D = Σ_j d_j`
    /// ([`crate::CombinedShare`]): as [`Self::derive`] under another
    /// derive-key context, of the parameter set, the study, the round, the
    /// hash of the decryption-share list (members, share hashes and, t-of-n,
    /// the decrypting set), the hash of `D`'s bytes and the aggregate's hash.
    /// Each share maker signs the digest of its own share on it, and a
    /// member checks `digest(D) = Σ_j digest(d_j)` (module docs; the same
    /// soundness, with `D` in the place of the aggregate).
    pub fn derive_for_shares(
        params: &Params,
        study: &str,
        round: u64,
        share_list_hash: &[u8; 32],
        combined_hash: &[u8; 32],
        aggregate_hash: &[u8; 32],
    ) -> Self {
        Self::derive_in(
            SHARE_CHALLENGE_CONTEXT,
            params,
            study,
            round,
            &[share_list_hash, combined_hash, aggregate_hash],
        )
    }

    /// The digest of a sequence of ring elements: per prime, [`PROJECTIONS`]
    /// sums `Σ_k ⟨R_{k,j}, v_k⟩`, laid out prime-major.
    pub fn digest_polys<'a>(
        &self,
        params: &Params,
        polys: impl IntoIterator<Item = &'a Poly>,
    ) -> SumDigest {
        let moduli = &params.set().moduli;
        let mut acc = vec![0u64; moduli.len() * PROJECTIONS];
        let mut rng = Csprng::from_seed(&self.seed, CHALLENGE_DOMAIN);
        for v in polys {
            for j in 0..PROJECTIONS {
                accumulate(params, &mut acc, j, &rng.uniform_poly(params.ring()), v);
            }
        }
        SumDigest { residues: acc }
    }

    /// The digest of an encrypted vector: its ciphertexts' `c0`, `c1` in order.
    pub fn digest(&self, params: &Params, v: &EncryptedVector) -> SumDigest {
        self.digest_polys(params, v.ciphertexts.iter().flat_map(|c| [&c.c0, &c.c1]))
    }

    /// The projection polynomials of the first `polys` ring elements, drawn
    /// once: a member digests its own contribution, its spot checks and the
    /// aggregate on one challenge, and drawing the projections dominated
    /// each digest (a uniform residue per coefficient and projection).
    pub fn expand(&self, params: &Params, polys: usize) -> ExpandedChallenge {
        let mut rng = Csprng::from_seed(&self.seed, CHALLENGE_DOMAIN);
        let projections = (0..polys * PROJECTIONS)
            .map(|_| rng.uniform_poly(params.ring()))
            .collect();
        ExpandedChallenge {
            challenge: self.clone(),
            projections,
        }
    }
}

/// A [`SumChallenge`] with the projections of its first ring elements drawn
/// ([`SumChallenge::expand`]): the same digests, each without drawing.
#[derive(Debug, Clone)]
pub struct ExpandedChallenge {
    challenge: SumChallenge,
    /// `R_{k,j}` at `k · PROJECTIONS + j`.
    projections: Vec<Poly>,
}

impl ExpandedChallenge {
    /// [`SumChallenge::digest_polys`]: from the drawn projections when there
    /// are enough for every element, else drawn again in full.
    pub fn digest_polys(&self, params: &Params, polys: &[&Poly]) -> SumDigest {
        if polys.len() * PROJECTIONS > self.projections.len() {
            return self.challenge.digest_polys(params, polys.iter().copied());
        }
        let moduli = &params.set().moduli;
        let mut acc = vec![0u64; moduli.len() * PROJECTIONS];
        for (v, rs) in polys.iter().zip(self.projections.chunks(PROJECTIONS)) {
            for (j, r) in rs.iter().enumerate() {
                accumulate(params, &mut acc, j, r, v);
            }
        }
        SumDigest { residues: acc }
    }

    /// [`SumChallenge::digest`] of an encrypted vector.
    pub fn digest(&self, params: &Params, v: &EncryptedVector) -> SumDigest {
        let polys: Vec<&Poly> = v.ciphertexts.iter().flat_map(|c| [&c.c0, &c.c1]).collect();
        self.digest_polys(params, &polys)
    }
}

/// Adds `⟨r, v⟩` per prime to projection `j` of the prime-major `acc`.
fn accumulate(params: &Params, acc: &mut [u64], j: usize, r: &Poly, v: &Poly) {
    for (i, (&p, dot)) in params
        .set()
        .moduli
        .iter()
        .zip(project(params, r, v))
        .enumerate()
    {
        let slot = &mut acc[i * PROJECTIONS + j];
        *slot = add_mod(*slot, dot, p);
    }
}

/// A digest: [`PROJECTIONS`] residues per prime of the parameter set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SumDigest {
    residues: Vec<u64>,
}

impl SumDigest {
    /// The zero digest (of an empty sum).
    pub fn zero(params: &Params) -> Self {
        Self {
            residues: vec![0; params.set().moduli.len() * PROJECTIONS],
        }
    }

    /// `self + other`, residue by residue.
    pub fn add_assign(&mut self, params: &Params, other: &SumDigest) {
        let moduli = &params.set().moduli;
        for (k, (a, b)) in self.residues.iter_mut().zip(&other.residues).enumerate() {
            *a = add_mod(*a, *b, moduli[k / PROJECTIONS]);
        }
    }

    /// The length of [`Self::to_bytes`] under `params`.
    pub fn len(params: &Params) -> usize {
        8 * PROJECTIONS * params.set().moduli.len()
    }

    /// The residues, prime-major.
    pub fn residues(&self) -> &[u64] {
        &self.residues
    }

    /// Little-endian u64 residues, prime-major (8 · PROJECTIONS · L bytes).
    pub fn to_bytes(&self) -> Vec<u8> {
        self.residues.iter().flat_map(|r| r.to_le_bytes()).collect()
    }

    /// Decodes [`Self::to_bytes`], checking the length and that every residue
    /// is reduced modulo its prime.
    pub fn from_bytes(params: &Params, bytes: &[u8]) -> Result<Self, ChannelError> {
        let moduli = &params.set().moduli;
        let expected = Self::len(params);
        if bytes.len() != expected {
            return Err(ChannelError::Mismatch(format!(
                "a sum digest of {} has {expected} bytes, not {}",
                params.set().name,
                bytes.len()
            )));
        }
        let residues: Vec<u64> = bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("chunks of 8")))
            .collect();
        for (k, &r) in residues.iter().enumerate() {
            let p = moduli[k / PROJECTIONS];
            if r >= p {
                return Err(ChannelError::Mismatch(format!(
                    "residue {k} of a sum digest is {r}, not reduced modulo {p}"
                )));
            }
        }
        Ok(Self { residues })
    }
}

/// What a contributor signs and uploads once the aggregate exists: the
/// [`SumDigest`] of its contribution on the aggregate's challenge, then the
/// [`C1Commitment`] whose hash it signed at commit time
/// (`crate::c1_commitment`). Members without the bytes check the aggregate
/// with the first always, and with the second at random (or always, t-of-n).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContributorDigest {
    /// The linear digest.
    pub sum: SumDigest,
    /// The commitment to the contribution's c1.
    pub c1: C1Commitment,
}

impl ContributorDigest {
    /// The length of [`Self::to_bytes`] for a contribution of `parts` ciphertexts.
    pub fn len(params: &Params, parts: usize) -> usize {
        SumDigest::len(params) + POINT_BYTES * parts
    }

    /// The digest's bytes, then the commitment's.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = self.sum.to_bytes();
        out.extend_from_slice(&self.c1.to_bytes());
        out
    }

    /// Decodes [`Self::to_bytes`], checking both parts.
    pub fn from_bytes(params: &Params, bytes: &[u8]) -> Result<Self, ChannelError> {
        let split = SumDigest::len(params);
        if bytes.len() <= split {
            return Err(ChannelError::Mismatch(format!(
                "a contributor's digest of {} has more than {split} bytes (a sum digest and a c1 commitment), not {}",
                params.set().name,
                bytes.len()
            )));
        }
        Ok(Self {
            sum: SumDigest::from_bytes(params, &bytes[..split])?,
            c1: C1Commitment::from_bytes(&bytes[split..])?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        CollectivePublicKey, CommonRandomPoly, FixedPointCodec, InsecurePolicy, MemberId,
        ParameterSet, PublicKeyShare, SecretKeyShare,
    };
    use std::sync::Arc;

    fn setup() -> (Arc<Params>, CollectivePublicKey, FixedPointCodec, Csprng) {
        let params = ParameterSet::TOY_N1024
            .validate(InsecurePolicy::Allow)
            .unwrap();
        let crs = CommonRandomPoly::from_seed(&params, [7; 32]);
        let mut rng = Csprng::from_u128_seed(1);
        let members: Vec<MemberId> = ["a", "b"]
            .iter()
            .map(|m| MemberId::new(*m).unwrap())
            .collect();
        let shares: Vec<PublicKeyShare> = members
            .iter()
            .map(|m| {
                let sk = SecretKeyShare::generate(&params, m.clone(), &mut rng);
                PublicKeyShare::generate(&params, &sk, &crs, &mut rng).unwrap()
            })
            .collect();
        let pk = CollectivePublicKey::aggregate(&crs, &members, &shares).unwrap();
        let codec = FixedPointCodec::new(&params, 2, 8.0).unwrap();
        (params, pk, codec, rng)
    }

    fn challenge(params: &Params, tag: u8) -> SumChallenge {
        SumChallenge::derive(params, "study", 3, &[tag; 32], &[9; 32])
    }

    /// The projection recomputed independently: the challenge stream drawn
    /// again, products summed in u128 and reduced once at the end.
    fn reference(params: &Params, ch: &SumChallenge, polys: &[&Poly]) -> Vec<u64> {
        let moduli = &params.set().moduli;
        let mut rng = Csprng::from_seed(&ch.seed, CHALLENGE_DOMAIN);
        let mut out = vec![0u128; moduli.len() * PROJECTIONS];
        for v in polys {
            for j in 0..PROJECTIONS {
                let r = rng.uniform_poly(params.ring());
                for (i, &p) in moduli.iter().enumerate() {
                    for (&a, &b) in r.limb(i).iter().zip(v.limb(i)) {
                        let k = i * PROJECTIONS + j;
                        out[k] = (out[k] + (a as u128) * (b as u128)) % p as u128;
                    }
                }
            }
        }
        out.into_iter().map(|x| x as u64).collect()
    }

    #[test]
    fn the_digest_is_the_projection_and_is_linear() {
        let (params, pk, codec, mut rng) = setup();
        let a =
            EncryptedVector::encrypt(&params, &pk, &codec, &[1.5, -2.0, 0.25], &mut rng).unwrap();
        let b =
            EncryptedVector::encrypt(&params, &pk, &codec, &[0.5, 3.0, -1.0], &mut rng).unwrap();
        let ch = challenge(&params, 1);
        let polys: Vec<&Poly> = a.ciphertexts.iter().flat_map(|c| [&c.c0, &c.c1]).collect();
        assert_eq!(
            ch.digest(&params, &a).residues(),
            &reference(&params, &ch, &polys)[..]
        );
        // Drawn once, for as many elements as `a` has, fewer, or more.
        for expanded in [polys.len(), polys.len() - 1, polys.len() + 3] {
            let ex = ch.expand(&params, expanded);
            assert_eq!(
                ex.digest(&params, &a).residues(),
                &reference(&params, &ch, &polys)[..],
                "{expanded} expanded"
            );
            assert_eq!(
                ex.digest_polys(&params, &polys[..1]).residues(),
                &reference(&params, &ch, &polys[..1])[..],
                "{expanded} expanded"
            );
        }
        let mut sum = a.clone();
        sum.add_assign(&b).unwrap();
        let mut digests = ch.digest(&params, &a);
        digests.add_assign(&params, &ch.digest(&params, &b));
        assert_eq!(ch.digest(&params, &sum), digests);
        // Another challenge gives another digest.
        assert_ne!(challenge(&params, 2).digest(&params, &sum), digests);
    }

    #[test]
    fn one_changed_coefficient_changes_every_projection() {
        let (params, pk, codec, mut rng) = setup();
        let a = EncryptedVector::encrypt(&params, &pk, &codec, &[1.0, 2.0], &mut rng).unwrap();
        let ch = challenge(&params, 1);
        let before = ch.digest(&params, &a);
        for (ct, which) in [(0usize, 0usize), (0, 1)] {
            let mut b = a.clone();
            let p = params.set().moduli[1];
            let poly = if which == 0 {
                &mut b.ciphertexts[ct].c0
            } else {
                &mut b.ciphertexts[ct].c1
            };
            let mut data = poly.residues().to_vec();
            let n = params.ring().degree();
            data[n + 17] = (data[n + 17] + 1) % p;
            *poly = Poly::from_residues(params.ring(), poly.representation(), data).unwrap();
            let after = ch.digest(&params, &b);
            // Unchanged modulo the first prime, changed in both projections
            // modulo the second.
            assert_eq!(
                after.residues()[..PROJECTIONS],
                before.residues()[..PROJECTIONS]
            );
            for j in 0..PROJECTIONS {
                assert_ne!(
                    after.residues()[PROJECTIONS + j],
                    before.residues()[PROJECTIONS + j]
                );
            }
        }
    }

    #[test]
    fn the_share_challenge_is_separated_and_digests_combined_shares_linearly() {
        use crate::{CombinedShare, DecryptionShare};
        let (params, pk, codec, mut rng) = setup();
        let a = EncryptedVector::encrypt(&params, &pk, &codec, &[1.0, 2.0], &mut rng).unwrap();
        // The same hashes under the two contexts give different challenges.
        let sum = SumChallenge::derive(&params, "study", 3, &[1; 32], &[9; 32]);
        let share =
            SumChallenge::derive_for_shares(&params, "study", 3, &[1; 32], &[9; 32], &[9; 32]);
        assert_ne!(sum, share);
        assert_ne!(
            share,
            SumChallenge::derive_for_shares(&params, "study", 3, &[1; 32], &[8; 32], &[9; 32])
        );
        let shares: Vec<DecryptionShare> = ["a", "b"]
            .iter()
            .map(|m| {
                let sk = SecretKeyShare::generate(&params, MemberId::new(*m).unwrap(), &mut rng);
                DecryptionShare::generate(&params, &sk, &a, &mut rng).unwrap()
            })
            .collect();
        let d = CombinedShare::sum(&a, &shares.iter().collect::<Vec<_>>()).unwrap();
        let mut total = SumDigest::zero(&params);
        for s in &shares {
            total.add_assign(&params, &share.digest_polys(&params, s.polys()));
        }
        assert_eq!(share.digest_polys(&params, d.polys()), total);
        // Against the u128 reference of D's polynomials.
        let polys: Vec<&Poly> = d.polys().iter().collect();
        assert_eq!(total.residues(), &reference(&params, &share, &polys)[..]);
        // D's bytes round-trip; a wrong length, a wrong ciphertext count or
        // an unreduced residue is refused.
        let bytes = d.to_bytes();
        let parts = a.ciphertexts().len();
        assert_eq!(
            CombinedShare::from_bytes(&params, &bytes, parts).unwrap(),
            d
        );
        assert!(CombinedShare::from_bytes(&params, &bytes[1..], parts).is_err());
        assert!(CombinedShare::from_bytes(&params, &bytes, parts + 1).is_err());
        assert!(CombinedShare::from_bytes(&params, &[], 0).is_err());
        let mut unreduced = bytes.clone();
        unreduced[..8].copy_from_slice(&params.set().moduli[0].to_le_bytes());
        let e = CombinedShare::from_bytes(&params, &unreduced, parts).unwrap_err();
        assert!(
            e.to_string().contains("range") || e.to_string().contains("modul"),
            "{e}"
        );
        // C0 + D is what the n-of-n combine gives.
        let ids: Vec<MemberId> = ["a", "b"]
            .iter()
            .map(|m| MemberId::new(*m).unwrap())
            .collect();
        assert_eq!(
            d.decrypt(&a).unwrap(),
            crate::decryption::combine(&ids, &a, &shares).unwrap()
        );
    }

    #[test]
    fn bytes_round_trip_and_bad_bytes_are_refused() {
        let (params, pk, codec, mut rng) = setup();
        let a = EncryptedVector::encrypt(&params, &pk, &codec, &[1.0], &mut rng).unwrap();
        let d = challenge(&params, 1).digest(&params, &a);
        let bytes = d.to_bytes();
        assert_eq!(bytes.len(), 8 * PROJECTIONS * params.set().moduli.len());
        assert_eq!(SumDigest::from_bytes(&params, &bytes).unwrap(), d);
        let short = SumDigest::from_bytes(&params, &bytes[1..]).unwrap_err();
        assert!(short.to_string().contains("bytes"), "{short}");
        let mut unreduced = bytes.clone();
        unreduced[..8].copy_from_slice(&params.set().moduli[0].to_le_bytes());
        let e = SumDigest::from_bytes(&params, &unreduced).unwrap_err();
        assert!(e.to_string().contains("not reduced"), "{e}");
    }
}
