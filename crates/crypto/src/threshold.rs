//! t-of-n threshold decryption (issue 15; Mouchet, Bertrand, Hubaux, "An
//! Efficient Threshold Access-Structure for RLWE-Based Multiparty Homomorphic
//! Encryption", 2022; Lattigo `multiparty` `Thresholdizer` / `Combiner`).
//!
//! | step | who | here |
//! | --- | --- | --- |
//! | 1. deal | every member i | [`Thresholdizer::deal`]: f_i(X) = s_i + Σ_{k=1}^{t−1} f_{i,k}·X^k, f_{i,k} uniform in R_q; share f_i(x_j) to member j at its [`ShamirPublicPoint`] x_j ∈ 1..n |
//! | 2. verify, aggregate | every member j | [`ShamirShare::verify`], [`ThresholdSecretShare::aggregate`]: s'_j = Σ_i f_i(x_j) |
//! | 3. decrypt | any t members A | [`ThresholdDecryptionShare::generate`]: d_j = λ_j^A·s'_j·C1 + e_j |
//! | 4. combine | anyone | [`combine_threshold`]: C0 + Σ_{j∈A} d_j = Δ·m + E |
//!
//! Evaluation is per RNS prime (x ↦ x mod p_i; the polynomials are kept in NTT
//! form, which is linear, so evaluation and Lagrange weighting commute with it).
//! With F(X) = Σ_i f_i(X), s'_j = F(x_j) and F(0) = Σ_i s_i = s, the secret of
//! the unchanged collective public key, so for any |A| ≥ t
//! Σ_{j∈A} λ_j^A·s'_j = s with λ_j^A = Π_{m∈A, m≠j} x_m / (x_m − x_j) mod q
//! (Lagrange at 0), and the combined shares equal the n-of-n ones up to the
//! flooding. The noise bound is the codec's E(n) (|A| ≤ n flooding terms).
//!
//! # Consistency check (what a recipient can verify, and what it cannot)
//!
//! The check is on a random projection of the shares, so that what a dealer
//! publishes and what each share carries beyond f_i(x_j) are scalars, not
//! ring elements. A dealer also shares a scalar masking polynomial ĝ_i of
//! degree < t with uniform coefficients (per RNS prime), and publishes a
//! [`ShamirCommitment`]: a salted BLAKE3 digest K_j of every recipient's pair
//! (f_i(x_j), ĝ_i(x_j)), then — with the projection r ∈ Z_q^N derived from
//! all digests (Fiat–Shamir) — the scalar polynomial ĥ_i = ĝ_i + ⟨r, f_i⟩,
//! where ⟨r, f_i⟩ projects every ring coefficient f_{i,k} to the scalar
//! Σ_slot r_slot·f_{i,k,slot} (per prime; NTT slots, a linear map). Recipient
//! j checks that its pair hashes to K_j and that
//! ĥ_i(x_j) = ĝ_i(x_j) + ⟨r, f_i(x_j)⟩ exactly. The commitment is t·L
//! scalars (it was t ring elements) and a share carries L mask scalars (it
//! carried a second ring element): at n = 100, T = 51 on the default set a
//! member downloads 13 MB of dealings instead of 695 MB.
//!
//! * Completeness: an honest dealing always verifies (⟨r, ·⟩ is linear, so
//!   ⟨r, f_i(x_j)⟩ = (⟨r, f_i⟩)(x_j)).
//! * Soundness (consistency): fix a prime p. If the values v_j = f_i(x_j) ∈
//!   Z_p^N of the honest recipients do not lie on one polynomial of degree
//!   < t, a dual codeword c (Σ_j c_j·q(x_j) = 0 for every q of degree < t)
//!   has w = Σ_j c_j·v_j ≠ 0. Passing every honest check needs
//!   Σ_j c_j·ĝ_i(x_j) + ⟨r, w⟩ = Σ_j c_j·ĥ_i(x_j) = 0. The digests fix the
//!   v_j and ĝ_i(x_j) before r, and ⟨r, w⟩ is uniform in Z_p for uniform r,
//!   so a dealer passes with probability ≤ 1/p ≤ 2^−61.9 per projection it
//!   tries (a hash evaluation). Shares changed in transit, sent to the wrong
//!   recipient, replayed from another ceremony or dealer, or not matching the
//!   broadcast digests fail (named [`ThresholdError::InconsistentShare`]).
//! * Hiding: ĝ_i's coefficients are uniform and independent of f_i, so ĥ_i
//!   is uniform; t − 1 colluding recipients see, for every candidate s_i,
//!   exactly one ĝ_i consistent with their pairs and ĥ_i (⟨r, f_i⟩ is then
//!   fixed by s_i and their t − 1 values) — perfect hiding of s_i (the
//!   digests of the other pairs are salted with 256 random bits).
//! * Not checked here: that f_i(0) is the s_i of the dealer's public-key share
//!   b_i = −a·s_i + e_i (a dealer sharing another value would make decryptions
//!   fail, and learn nothing). [`crate::dealing_check`] checks it with a test
//!   decryption of zero under (b_i, a) by T members. An RLWE
//!   "noisy Feldman" commitment C_k = −a·f_{i,k} + e_k with C_0 = b_i would
//!   check it, but is not hiding here: t − 1 shares fix every f_{i,k} up to
//!   β_k·s_i with public scalars β_k, so C_k − β_k·b_i (known offsets removed)
//!   is e_k − β_k·e_i, coefficient by coefficient a two-unknown search over
//!   [−η, η]² that reveals e_i and then s_i; the test decryption binds
//!   f_i(0) to b_i without that leak.

use crate::crs::derive_key;
use crate::decryption::{CombinedShare, ShareSum};
use crate::Aggregate;
use crate::{
    CeremonyId, ChannelError, CommonRandomPoly, DecryptionShare, EncryptedVector, MemberId, Params,
    PublicKeyShare, SecretKeyShare,
};
use fedhe_ring::modular::{add_mod, dot_mod, inv_mod, mul_mod, sub_mod};
use fedhe_ring::{Csprng, Poly, Representation};
use std::collections::BTreeSet;
use thiserror::Error;
use zeroize::{Zeroize, ZeroizeOnDrop, Zeroizing};

const DIGEST_CONTEXT: &str = "fedhe 2026-11 shamir share digest v2";
const CHALLENGE_CONTEXT: &str = "fedhe 2026-11 shamir projection challenge v2";
const CHALLENGE_DOMAIN: [u8; 8] = *b"fedh-prj";

/// Errors of the threshold protocols. Messages name the member and the
/// setting at fault and never contain share material.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum ThresholdError {
    /// T is not in (n/2, n].
    #[error(
        "threshold {threshold} is out of range for {members} members: it must be more than half \
         of them and at most all of them ({min}..={members})"
    )]
    OutOfRange {
        /// T asked for.
        threshold: usize,
        /// n.
        members: usize,
        /// The smallest valid T, ⌊n/2⌋ + 1.
        min: usize,
    },
    /// A Shamir share does not verify against its dealer's commitment.
    #[error(
        "the Shamir share dealt by {dealer} to {recipient} does not verify against {dealer}'s \
         commitment ({reason}); the dealing of {dealer} is refused and the ceremony fails"
    )]
    InconsistentShare {
        /// The dealer named.
        dealer: MemberId,
        /// The recipient that checked.
        recipient: MemberId,
        /// Which check failed.
        reason: &'static str,
    },
    /// A share or sealed share is addressed to another member.
    #[error("a Shamir share dealt by {dealer} is addressed to {addressed}, not to {member}")]
    WrongRecipient {
        /// Its dealer.
        dealer: MemberId,
        /// The member it is addressed to.
        addressed: MemberId,
        /// The member that tried to use it.
        member: MemberId,
    },
    /// A dealer's commitment is malformed (threshold, member count, degree).
    #[error("the Shamir commitment of {dealer} is malformed: {reason}")]
    MalformedCommitment {
        /// The dealer.
        dealer: MemberId,
        /// What is wrong.
        reason: String,
    },
    /// No share or commitment from this dealer.
    #[error("no Shamir share or commitment from {0}; every member must deal")]
    MissingDealing(MemberId),
    /// Two shares or commitments from the same dealer.
    #[error("two Shamir dealings from {0}")]
    DuplicateDealing(MemberId),
    /// Fewer decrypting members than the threshold.
    #[error("{got} members decrypt but the threshold is {threshold}")]
    TooFewShares {
        /// Members in the decrypting set.
        got: usize,
        /// T.
        threshold: usize,
    },
    /// A threshold decryption share was made for another decrypting set.
    #[error(
        "the threshold decryption share of {0} was made for another set of decrypting members"
    )]
    ActiveSetMismatch(MemberId),
    /// A dealing's test decryption failed: its polynomial's constant term is
    /// not the key share of the dealer's public-key share ([`crate::dealing_check`]).
    #[error(
        "the Shamir dealing of {0} does not share the key behind its public-key share (its test \
         decryption of zero failed); the dealing is refused and the ceremony fails"
    )]
    InvalidDealing(MemberId),
    /// A member of the decrypting set gave no share.
    #[error("the decryption share of {0}, a member of the decrypting set, is missing")]
    MissingActiveShare(MemberId),
    /// A sealed share failed authenticated decryption.
    #[error(
        "the sealed Shamir share from {dealer} to {recipient} does not authenticate (tampered, \
         replayed from another ceremony, or sealed under another key)"
    )]
    Authentication {
        /// The claimed dealer.
        dealer: MemberId,
        /// The recipient.
        recipient: MemberId,
    },
    /// An identity key cannot be used for key agreement.
    #[error("the identity key of {0} cannot be used for key agreement (small-order point)")]
    WeakIdentityKey(MemberId),
}

impl ThresholdError {
    /// The dealer a ceremony error blames, if it blames one (what a member
    /// names when it refuses the shares it received).
    pub fn blamed_dealer(&self) -> Option<&MemberId> {
        match self {
            Self::InconsistentShare { dealer, .. }
            | Self::WrongRecipient { dealer, .. }
            | Self::MalformedCommitment { dealer, .. }
            | Self::Authentication { dealer, .. } => Some(dealer),
            Self::MissingDealing(d)
            | Self::DuplicateDealing(d)
            | Self::InvalidDealing(d)
            | Self::WeakIdentityKey(d) => Some(d),
            Self::OutOfRange { .. }
            | Self::TooFewShares { .. }
            | Self::ActiveSetMismatch(_)
            | Self::MissingActiveShare(_) => None,
        }
    }
}

/// A Shamir evaluation point x_j ∈ 1..n: the 1-based rank of member j among the
/// sorted members (public, fixed by the member list).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ShamirPublicPoint(pub u64);

/// The access structure of a threshold ceremony: n sorted members, their
/// points, and T with n/2 < T ≤ n.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessStructure {
    members: Vec<MemberId>,
    threshold: usize,
}

impl AccessStructure {
    /// The default threshold ⌊n/2⌋ + 1.
    pub fn default_threshold(members: usize) -> usize {
        members / 2 + 1
    }

    /// Validates T against n: T ≤ n/2 would let two disjoint halves each
    /// decrypt, T > n cannot be met. Members must be distinct.
    pub fn new(members: &[MemberId], threshold: usize) -> Result<Self, ChannelError> {
        let mut sorted = members.to_vec();
        sorted.sort();
        if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
            return Err(ChannelError::DuplicateMember(w[0].clone()));
        }
        let n = sorted.len();
        if n == 0 || threshold > n || 2 * threshold <= n {
            return Err(ThresholdError::OutOfRange {
                threshold,
                members: n,
                min: Self::default_threshold(n),
            }
            .into());
        }
        Ok(Self {
            members: sorted,
            threshold,
        })
    }

    /// The members, sorted.
    pub fn members(&self) -> &[MemberId] {
        &self.members
    }

    /// T.
    pub fn threshold(&self) -> usize {
        self.threshold
    }

    /// The evaluation point of a member.
    pub fn point(&self, member: &MemberId) -> Result<ShamirPublicPoint, ChannelError> {
        self.members
            .binary_search(member)
            .map(|i| ShamirPublicPoint(i as u64 + 1))
            .map_err(|_| ChannelError::UnknownMember(member.clone()))
    }

    /// The Lagrange coefficients at 0 of a decrypting set A (|A| ≥ T, members of
    /// this structure, distinct), per member and per prime:
    /// λ_j^A = Π_{m∈A, m≠j} x_m·(x_m − x_j)^−1 mod p_i.
    pub fn lagrange_coefficients(
        &self,
        params: &Params,
        active: &[MemberId],
    ) -> Result<Vec<(MemberId, Vec<u64>)>, ChannelError> {
        if active.len() < self.threshold {
            return Err(ThresholdError::TooFewShares {
                got: active.len(),
                threshold: self.threshold,
            }
            .into());
        }
        self.lagrange_unchecked(params, active)
    }

    /// The points of a decrypting set, refusing strangers and duplicates.
    fn points(&self, active: &[MemberId]) -> Result<Vec<u64>, ChannelError> {
        let mut seen = BTreeSet::new();
        active
            .iter()
            .map(|m| {
                if !seen.insert(m) {
                    return Err(ChannelError::DuplicateMember(m.clone()));
                }
                Ok(self.point(m)?.0)
            })
            .collect()
    }

    /// [`Self::lagrange_coefficients`] for any set size (the below-threshold
    /// experiment interpolates with t − 1 points).
    pub(crate) fn lagrange_unchecked(
        &self,
        params: &Params,
        active: &[MemberId],
    ) -> Result<Vec<(MemberId, Vec<u64>)>, ChannelError> {
        let points = self.points(active)?;
        Ok(active
            .iter()
            .zip(&points)
            .map(|(m, &xj)| (m.clone(), lagrange_at_zero(params, &points, xj)))
            .collect())
    }
}

/// λ_j = Π_{m≠j} x_m · (Π_{m≠j} (x_m − x_j))^−1 mod p_i for every prime: one
/// inversion per prime. The points are distinct and below every prime, so the
/// inverse exists.
fn lagrange_at_zero(params: &Params, points: &[u64], xj: u64) -> Vec<u64> {
    params
        .set()
        .moduli
        .iter()
        .map(|&p| {
            let (num, den) =
                points
                    .iter()
                    .filter(|&&xm| xm != xj)
                    .fold((1u64, 1u64), |(num, den), &xm| {
                        (
                            mul_mod(num, xm % p, p),
                            mul_mod(den, sub_mod(xm % p, xj % p, p), p),
                        )
                    });
            mul_mod(num, inv_mod(den, p).unwrap_or(0), p)
        })
        .collect()
}

/// x mod p_i for every prime.
fn scalar_residues(params: &Params, x: u64) -> Vec<u64> {
    params.set().moduli.iter().map(|&p| x % p).collect()
}

/// Σ_k coeffs[k]·x^k by Horner's rule, in the coefficients' representation.
fn evaluate(params: &Params, coeffs: &[Poly], x: ShamirPublicPoint) -> Result<Poly, ChannelError> {
    let xs = scalar_residues(params, x.0);
    let mut iter = coeffs.iter().rev();
    let mut acc = iter
        .next()
        .ok_or_else(|| ChannelError::Mismatch("a polynomial of no coefficients".into()))?
        .clone();
    for c in iter {
        acc.mul_scalar_assign(&xs)?;
        acc.add_assign(c)?;
    }
    Ok(acc)
}

/// Σ_k coeffs[k]·x^k by Horner's rule for a polynomial with scalar
/// coefficients (one residue per prime each).
fn evaluate_scalars(params: &Params, coeffs: &[Vec<u64>], x: ShamirPublicPoint) -> Vec<u64> {
    let moduli = &params.set().moduli;
    moduli
        .iter()
        .enumerate()
        .map(|(i, &p)| {
            coeffs
                .iter()
                .rev()
                .fold(0u64, |acc, c| add_mod(mul_mod(acc, x.0 % p, p), c[i], p))
        })
        .collect()
}

/// The projection ⟨r, v⟩ = Σ_slot r_slot·v_slot of a ring element on r, per
/// prime (module docs).
pub(crate) fn project(params: &Params, r: &Poly, v: &Poly) -> Vec<u64> {
    params
        .set()
        .moduli
        .iter()
        .enumerate()
        .map(|(i, &p)| dot_mod(r.limb(i), v.limb(i), p))
        .collect()
}

/// a + b per prime.
fn add_scalars(params: &Params, a: &[u64], b: &[u64]) -> Vec<u64> {
    params
        .set()
        .moduli
        .iter()
        .zip(a.iter().zip(b))
        .map(|(&p, (&x, &y))| add_mod(x, y, p))
        .collect()
}

/// A member's secret Shamir polynomial f_i (f_i(0) = s_i, NTT form) and its
/// scalar masking polynomial ĝ_i. Wiped on drop; never leaves
/// [`Thresholdizer::deal`].
struct ShamirPolynomial {
    f: Vec<Poly>,
    g: Vec<Vec<u64>>,
}

impl Drop for ShamirPolynomial {
    fn drop(&mut self) {
        self.f.iter_mut().for_each(Zeroize::zeroize);
        self.g.iter_mut().for_each(Zeroize::zeroize);
    }
}

/// One member's Shamir share of one dealer's key share: f_i(x_j) (NTT form)
/// and the mask ĝ_i(x_j) (one scalar per prime), with the salt of its
/// digest. Secret; wiped on drop.
pub struct ShamirShare {
    pub(crate) dealer: MemberId,
    pub(crate) recipient: MemberId,
    pub(crate) point: ShamirPublicPoint,
    pub(crate) value: Poly,
    pub(crate) mask: Vec<u64>,
    pub(crate) salt: [u8; 32],
}

impl Drop for ShamirShare {
    fn drop(&mut self) {
        self.value.zeroize();
        self.mask.zeroize();
        self.salt.zeroize();
    }
}
impl ZeroizeOnDrop for ShamirShare {}

impl std::fmt::Debug for ShamirShare {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShamirShare")
            .field("dealer", &self.dealer)
            .field("recipient", &self.recipient)
            .field("point", &self.point)
            .finish_non_exhaustive()
    }
}

/// A dealer's public commitment: the salted digest K_j of every recipient's
/// pair, in point order, and ĥ = ĝ + ⟨r, f⟩ (t coefficients, each one scalar
/// per prime).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShamirCommitment {
    pub(crate) dealer: MemberId,
    pub(crate) threshold: usize,
    pub(crate) digests: Vec<[u8; 32]>,
    pub(crate) masked: Vec<Vec<u64>>,
}

impl ShamirCommitment {
    /// The dealer.
    pub fn dealer(&self) -> &MemberId {
        &self.dealer
    }

    /// The threshold it was dealt for.
    pub fn threshold(&self) -> usize {
        self.threshold
    }
}

/// The output of [`Thresholdizer::deal`]: one share per member (its own
/// included) and the commitment every member receives.
#[derive(Debug)]
pub struct ShamirDealing {
    /// One share per member, in member order.
    pub shares: Vec<ShamirShare>,
    /// The public commitment.
    pub commitment: ShamirCommitment,
}

/// The Thresholdizer: turns an additive key share into Shamir shares.
#[derive(Clone, Copy, Debug, Default)]
pub struct Thresholdizer;

/// K_j = BLAKE3-derive-key(ceremony ‖ set ‖ dealer ‖ recipient ‖ x_j ‖ f(x_j) ‖ ĝ(x_j) ‖ salt).
fn share_digest(params: &Params, ceremony: &CeremonyId, share: &ShamirShare) -> [u8; 32] {
    let residues = |poly: &Poly| {
        Zeroizing::new(
            poly.residues()
                .iter()
                .flat_map(|r| r.to_le_bytes())
                .collect::<Vec<u8>>(),
        )
    };
    let value = residues(&share.value);
    let mask = Zeroizing::new(
        share
            .mask
            .iter()
            .flat_map(|r| r.to_le_bytes())
            .collect::<Vec<u8>>(),
    );
    derive_key(
        DIGEST_CONTEXT,
        &[
            ceremony.as_str().as_bytes(),
            params.set().name.as_bytes(),
            share.dealer.as_str().as_bytes(),
            share.recipient.as_str().as_bytes(),
            &share.point.0.to_le_bytes(),
            &value,
            &mask,
            &share.salt,
        ],
    )
}

/// The projection r (uniform residues, one per NTT slot and prime), from the
/// dealer, T and all digests (Fiat–Shamir).
fn challenge(
    params: &Params,
    ceremony: &CeremonyId,
    dealer: &MemberId,
    threshold: usize,
    digests: &[[u8; 32]],
) -> Poly {
    let mut fields: Vec<&[u8]> = vec![
        ceremony.as_str().as_bytes(),
        params.set().name.as_bytes(),
        dealer.as_str().as_bytes(),
    ];
    let (t, n) = (
        (threshold as u64).to_le_bytes(),
        (digests.len() as u64).to_le_bytes(),
    );
    fields.extend([&t[..], &n[..]]);
    fields.extend(digests.iter().map(|d| &d[..]));
    let mut rng = Csprng::from_seed(&derive_key(CHALLENGE_CONTEXT, &fields), CHALLENGE_DOMAIN);
    rng.uniform_poly(params.ring())
}

impl Thresholdizer {
    /// Deals a member's key share s_i: samples f_i = s_i + Σ_{k<t} f_{i,k}X^k
    /// and the scalar mask ĝ_i (uniform coefficients), evaluates both at every
    /// member's point, and commits to ĥ_i = ĝ_i + ⟨r, f_i⟩ (module docs).
    pub fn deal(
        params: &Params,
        ceremony: &CeremonyId,
        access: &AccessStructure,
        secret: &SecretKeyShare,
        rng: &mut Csprng,
    ) -> Result<ShamirDealing, ChannelError> {
        let dealer = secret.member().clone();
        access.point(&dealer)?;
        let t = access.threshold();
        let uniform = |rng: &mut Csprng| rng.uniform_poly(params.ring()).into_ntt();
        let mut poly = ShamirPolynomial {
            f: Vec::with_capacity(t),
            g: Vec::with_capacity(t),
        };
        poly.f.push(secret.s_ntt().clone());
        for _ in 1..t {
            poly.f.push(uniform(rng));
        }
        let moduli = &params.set().moduli;
        for _ in 0..t {
            poly.g
                .push(moduli.iter().map(|&p| rng.uniform_below(p)).collect());
        }
        let mut shares = Vec::with_capacity(access.members().len());
        for recipient in access.members() {
            let point = access.point(recipient)?;
            shares.push(ShamirShare {
                dealer: dealer.clone(),
                recipient: recipient.clone(),
                point,
                value: evaluate(params, &poly.f, point)?,
                mask: evaluate_scalars(params, &poly.g, point),
                salt: rng.seed_bytes(),
            });
        }
        let digests: Vec<[u8; 32]> = shares
            .iter()
            .map(|s| share_digest(params, ceremony, s))
            .collect();
        let r = challenge(params, ceremony, &dealer, t, &digests);
        let masked = poly
            .f
            .iter()
            .zip(&poly.g)
            .map(|(f, g)| add_scalars(params, g, &project(params, &r, f)))
            .collect();
        Ok(ShamirDealing {
            shares,
            commitment: ShamirCommitment {
                dealer,
                threshold: t,
                digests,
                masked,
            },
        })
    }
}

/// The result of [`Thresholdizer::in_process`].
#[derive(Debug)]
pub struct InProcessCeremony {
    /// Every member's threshold key share, in sorted member order.
    pub secrets: Vec<ThresholdSecretShare>,
    /// The time each member took to deal.
    pub deal_times: Vec<std::time::Duration>,
    /// The time each member took to verify and aggregate what it received.
    pub aggregate_times: Vec<std::time::Duration>,
}

impl Thresholdizer {
    /// The whole t-of-n ceremony with every member in this process (the
    /// in-process channel, tests, benchmarks): each member deals, each member
    /// verifies and aggregates the shares and commitments addressed to it, and
    /// every dealing passes its [`crate::DealingCheck`] against the dealer's
    /// public-key share (decrypted by the first T members). `secrets` and
    /// `pk_shares` hold one key share and one public-key share per member of
    /// `access`, made against `crs`.
    pub fn in_process(
        params: &Params,
        ceremony: &CeremonyId,
        access: &AccessStructure,
        secrets: &[SecretKeyShare],
        crs: &CommonRandomPoly,
        pk_shares: &[PublicKeyShare],
        rng: &mut Csprng,
    ) -> Result<InProcessCeremony, ChannelError> {
        let mut dealings = Vec::with_capacity(secrets.len());
        let mut deal_times = Vec::with_capacity(secrets.len());
        for sk in secrets {
            let start = std::time::Instant::now();
            dealings.push(Self::deal(params, ceremony, access, sk, rng)?);
            deal_times.push(start.elapsed());
        }
        let commitments: Vec<&ShamirCommitment> = dealings.iter().map(|d| &d.commitment).collect();
        let mut out = Vec::with_capacity(access.members().len());
        let mut aggregate_times = Vec::with_capacity(access.members().len());
        for (j, me) in access.members().iter().enumerate() {
            let start = std::time::Instant::now();
            let received: Vec<&ShamirShare> = dealings.iter().map(|d| &d.shares[j]).collect();
            out.push(ThresholdSecretShare::aggregate(
                params,
                ceremony,
                access,
                me,
                &received,
                &commitments,
            )?);
            aggregate_times.push(start.elapsed());
        }
        let active = &access.members()[..access.threshold()];
        for dealing in &dealings {
            let dealer = &dealing.commitment.dealer;
            let pk = pk_shares
                .iter()
                .find(|p| p.member() == dealer)
                .ok_or_else(|| ThresholdError::MissingDealing(dealer.clone()))?;
            let check = crate::DealingCheck::new(
                params,
                ceremony,
                access,
                crs,
                pk,
                &dealing.commitment,
                active,
            )?;
            let shares = dealing.shares[..active.len()]
                .iter()
                .map(|s| check.share(params, s, rng))
                .collect::<Result<Vec<_>, _>>()?;
            check.verify(params, &shares)?;
        }
        Ok(InProcessCeremony {
            secrets: out,
            deal_times,
            aggregate_times,
        })
    }
}

impl ShamirShare {
    /// The dealer.
    pub fn dealer(&self) -> &MemberId {
        &self.dealer
    }

    /// The member it is addressed to.
    pub fn recipient(&self) -> &MemberId {
        &self.recipient
    }

    /// Its evaluation point.
    pub fn point(&self) -> ShamirPublicPoint {
        self.point
    }

    /// The recipient's check against the dealer's commitment (module docs):
    /// addressed to `me` at `me`'s point, the digest matches K_me, and
    /// ĥ(x_me) = ĝ(x_me) + ⟨r, f(x_me)⟩.
    pub fn verify(
        &self,
        params: &Params,
        ceremony: &CeremonyId,
        access: &AccessStructure,
        me: &MemberId,
        commitment: &ShamirCommitment,
    ) -> Result<(), ChannelError> {
        if &self.recipient != me {
            return Err(ThresholdError::WrongRecipient {
                dealer: self.dealer.clone(),
                addressed: self.recipient.clone(),
                member: me.clone(),
            }
            .into());
        }
        let fail = |reason| ThresholdError::InconsistentShare {
            dealer: commitment.dealer.clone(),
            recipient: me.clone(),
            reason,
        };
        if commitment.dealer != self.dealer {
            return Err(fail("the share and the commitment name different dealers").into());
        }
        access.point(&self.dealer)?;
        let n = access.members().len();
        let bad = |reason: String| -> ChannelError {
            ThresholdError::MalformedCommitment {
                dealer: commitment.dealer.clone(),
                reason,
            }
            .into()
        };
        if commitment.threshold != access.threshold() {
            return Err(bad(format!(
                "dealt for threshold {}, the ceremony's is {}",
                commitment.threshold,
                access.threshold()
            )));
        }
        if commitment.digests.len() != n || commitment.masked.len() != commitment.threshold {
            return Err(bad(format!(
                "{} digests and {} mask coefficients for {n} members and threshold {}",
                commitment.digests.len(),
                commitment.masked.len(),
                commitment.threshold
            )));
        }
        let point = access.point(me)?;
        if self.point != point {
            return Err(fail("the share was evaluated at another member's point").into());
        }
        let ring = params.ring();
        let moduli = &params.set().moduli;
        let reduced = |s: &Vec<u64>| {
            s.len() == moduli.len() && s.iter().zip(moduli.iter()).all(|(&v, &p)| v < p)
        };
        if self.value.context() != ring
            || self.value.representation() != Representation::Ntt
            || !commitment.masked.iter().all(reduced)
            || !reduced(&self.mask)
        {
            return Err(bad(
                "a share or mask is not in this parameter set's NTT form".into(),
            ));
        }
        let digest = share_digest(params, ceremony, self);
        if commitment.digests[point.0 as usize - 1] != digest {
            return Err(fail("its digest differs from the committed one").into());
        }
        let r = challenge(
            params,
            ceremony,
            &commitment.dealer,
            commitment.threshold,
            &commitment.digests,
        );
        let expected = evaluate_scalars(params, &commitment.masked, point);
        let got = add_scalars(params, &self.mask, &project(params, &r, &self.value));
        if got != expected {
            return Err(
                fail("h(x) differs from g(x) + <r, f(x)>: the shares are inconsistent").into(),
            );
        }
        Ok(())
    }
}

/// A member's threshold key share s'_j = Σ_i f_i(x_j) (Lattigo's aggregated
/// `ShamirSecretShare`), NTT form. Wiped on drop; `Debug` shows only the member.
pub struct ThresholdSecretShare {
    member: MemberId,
    access: AccessStructure,
    s_ntt: Poly,
}

impl Drop for ThresholdSecretShare {
    fn drop(&mut self) {
        self.s_ntt.zeroize();
    }
}
impl ZeroizeOnDrop for ThresholdSecretShare {}

impl std::fmt::Debug for ThresholdSecretShare {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ThresholdSecretShare")
            .field("member", &self.member)
            .field("threshold", &self.access.threshold)
            .finish_non_exhaustive()
    }
}

impl ThresholdSecretShare {
    /// AggregateShares: verifies one share and one commitment from every member
    /// (its own included) and sums the shares. Any share that does not verify
    /// names its dealer and nothing is aggregated.
    pub fn aggregate(
        params: &Params,
        ceremony: &CeremonyId,
        access: &AccessStructure,
        me: &MemberId,
        shares: &[&ShamirShare],
        commitments: &[&ShamirCommitment],
    ) -> Result<Self, ChannelError> {
        access.point(me)?;
        let by_dealer =
            |dealer: &MemberId| -> Result<(&ShamirShare, &ShamirCommitment), ChannelError> {
                let mut s = shares.iter().filter(|s| &s.dealer == dealer);
                let mut c = commitments.iter().filter(|c| &c.dealer == dealer);
                match (s.next(), c.next(), s.next(), c.next()) {
                    (Some(s), Some(c), None, None) => Ok((*s, *c)),
                    (None, _, _, _) | (_, None, _, _) => {
                        Err(ThresholdError::MissingDealing(dealer.clone()).into())
                    }
                    _ => Err(ThresholdError::DuplicateDealing(dealer.clone()).into()),
                }
            };
        for x in shares
            .iter()
            .map(|s| &s.dealer)
            .chain(commitments.iter().map(|c| &c.dealer))
        {
            access.point(x)?;
        }
        let mut sum = Poly::zero(params.ring(), Representation::Ntt);
        for dealer in access.members() {
            let (share, commitment) = by_dealer(dealer)?;
            share.verify(params, ceremony, access, me, commitment)?;
            sum.add_assign(&share.value)?;
        }
        Ok(Self {
            member: me.clone(),
            access: access.clone(),
            s_ntt: sum,
        })
    }

    /// Reassembles a share read from a key file (the access structure is
    /// already validated and holds `member`).
    pub(crate) fn from_parts(member: MemberId, access: AccessStructure, s_ntt: Poly) -> Self {
        Self {
            member,
            access,
            s_ntt,
        }
    }

    /// s'_j, NTT form.
    pub(crate) fn s_ntt(&self) -> &Poly {
        &self.s_ntt
    }

    /// The member holding it.
    pub fn member(&self) -> &MemberId {
        &self.member
    }

    /// The access structure it belongs to.
    pub fn access(&self) -> &AccessStructure {
        &self.access
    }
}

/// A threshold decryption share: d_j = λ_j^A·s'_j·C1 + e_j for the decrypting
/// set A it names (Lattigo's `Combiner.GenAdditiveShare` followed by the n-of-n
/// decryption share, eq. (14) with s_j replaced by λ_j^A·s'_j).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThresholdDecryptionShare {
    pub(crate) active: Vec<MemberId>,
    pub(crate) share: DecryptionShare,
}

impl ThresholdDecryptionShare {
    /// The share of `secret`'s member for the decrypting set `active` (at least
    /// T members, including this one), flooded with b(n) bits like the n-of-n
    /// share ([`crate::ParameterSet::flooding_bits_for`]).
    pub fn generate(
        params: &Params,
        secret: &ThresholdSecretShare,
        active: &[MemberId],
        aggregate: &EncryptedVector,
        rng: &mut Csprng,
    ) -> Result<Self, ChannelError> {
        if active.len() < secret.access.threshold {
            return Err(ThresholdError::TooFewShares {
                got: active.len(),
                threshold: secret.access.threshold,
            }
            .into());
        }
        let points = secret.access.points(active)?;
        let own = secret.access.point(&secret.member)?.0;
        if !points.contains(&own) {
            return Err(ChannelError::Mismatch(format!(
                "member {} is not in the decrypting set",
                secret.member
            )));
        }
        let lambda = lagrange_at_zero(params, &points, own);
        Self::with_coefficient(params, secret, active, &lambda, aggregate, rng)
    }

    /// As [`Self::generate`] with the set's coefficients already computed
    /// (any set size: the below-threshold experiment uses t − 1).
    pub(crate) fn with_coefficients(
        params: &Params,
        secret: &ThresholdSecretShare,
        active: &[MemberId],
        lambdas: &[(MemberId, Vec<u64>)],
        aggregate: &EncryptedVector,
        rng: &mut Csprng,
    ) -> Result<Self, ChannelError> {
        let lambda = lambdas
            .iter()
            .find(|(m, _)| m == &secret.member)
            .map(|(_, l)| l)
            .ok_or_else(|| {
                ChannelError::Mismatch(format!(
                    "member {} is not in the decrypting set",
                    secret.member
                ))
            })?;
        Self::with_coefficient(params, secret, active, lambda, aggregate, rng)
    }

    /// d = λ·(s'_j·C1) + e: the scalar λ is applied to the product rather
    /// than to s'_j, so no weighted copy of the secret is made.
    fn with_coefficient(
        params: &Params,
        secret: &ThresholdSecretShare,
        active: &[MemberId],
        lambda: &[u64],
        aggregate: &EncryptedVector,
        rng: &mut Csprng,
    ) -> Result<Self, ChannelError> {
        let bits = params
            .set()
            .flooding_bits_for(aggregate.encoding.members as usize);
        let share = DecryptionShare::flooded(
            &secret.member,
            &secret.s_ntt,
            Some(lambda),
            aggregate,
            bits,
            rng,
        )?;
        let mut active = active.to_vec();
        active.sort();
        Ok(Self { active, share })
    }

    /// The member that produced it.
    pub fn member(&self) -> &MemberId {
        self.share.member()
    }

    /// The decrypting set it was made for, sorted.
    pub fn active(&self) -> &[MemberId] {
        &self.active
    }

    /// The decryption share proper (one polynomial per ciphertext).
    pub fn share(&self) -> &DecryptionShare {
        &self.share
    }
}

/// Combine (t-of-n): checks that every share names the same decrypting set A
/// of at least T members of `access`, and that there is exactly one share from
/// each member of A; returns C0 + Σ_{j∈A} d_j for the codec to decode.
pub fn combine_threshold(
    access: &AccessStructure,
    aggregate: &EncryptedVector,
    shares: &[ThresholdDecryptionShare],
) -> Result<Vec<Poly>, ChannelError> {
    combined_threshold_share(access, aggregate, shares)?.decrypt(aggregate)
}

/// [`combine_threshold`]'s checks, then `D = Σ_{j∈A} d_j`
/// ([`CombinedShare`]; each `d_j` already carries its Lagrange coefficient).
pub fn combined_threshold_share(
    access: &AccessStructure,
    aggregate: &EncryptedVector,
    shares: &[ThresholdDecryptionShare],
) -> Result<CombinedShare, ChannelError> {
    ThresholdShareCombiner::new(access, aggregate).aggregate(shares)
}

/// The t-of-n combination of [`combined_threshold_share`], one share at a
/// time (issue 16: a server holds one share and the sum, not T of them):
/// every share made for the decrypting set of the first, which holds at
/// least T ceremony members, each from a distinct member of that set, and
/// none of the set missing at the end.
#[derive(Debug)]
pub struct ThresholdShareCombiner {
    access: AccessStructure,
    active: Option<Vec<MemberId>>,
    seen: BTreeSet<MemberId>,
    sum: ShareSum,
}

impl ThresholdShareCombiner {
    /// Expects threshold shares of `aggregate` under `access`.
    pub fn new(access: &AccessStructure, aggregate: &EncryptedVector) -> Self {
        Self {
            access: access.clone(),
            active: None,
            seen: BTreeSet::new(),
            sum: ShareSum::new(aggregate),
        }
    }
}

impl Aggregate for ThresholdShareCombiner {
    type Share = ThresholdDecryptionShare;
    type Output = CombinedShare;

    /// Adds `share`; refuses a decrypting set below T or with a stranger (on
    /// the first share), a share made for another set or by a member outside
    /// it, a member's second share, or a share of another shape.
    fn add(&mut self, share: &ThresholdDecryptionShare) -> Result<(), ChannelError> {
        let active = match &self.active {
            Some(active) => active,
            None => {
                if share.active.len() < self.access.threshold {
                    return Err(ThresholdError::TooFewShares {
                        got: share.active.len(),
                        threshold: self.access.threshold,
                    }
                    .into());
                }
                for m in &share.active {
                    self.access.point(m)?;
                }
                self.active.insert(share.active.clone())
            }
        };
        if &share.active != active || active.binary_search(share.member()).is_err() {
            return Err(ThresholdError::ActiveSetMismatch(share.member().clone()).into());
        }
        if self.seen.contains(share.member()) {
            return Err(ChannelError::DuplicateMember(share.member().clone()));
        }
        self.sum.add(&share.share)?;
        self.seen.insert(share.member().clone());
        Ok(())
    }

    /// `D`, refused without shares or while a share of the set is missing.
    fn finish(self) -> Result<CombinedShare, ChannelError> {
        let active = self.active.ok_or(ThresholdError::TooFewShares {
            got: 0,
            threshold: self.access.threshold,
        })?;
        if let Some(missing) = active.iter().find(|m| !self.seen.contains(*m)) {
            return Err(ThresholdError::MissingActiveShare(missing.clone()).into());
        }
        self.sum.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{InsecurePolicy, ParameterSet};
    use num_bigint::BigUint;
    use std::sync::Arc;

    struct Fixture {
        params: Arc<Params>,
        ceremony: CeremonyId,
        access: AccessStructure,
        dealings: Vec<ShamirDealing>,
    }

    fn fixture(n: usize, t: usize, seed: u128) -> Fixture {
        let params = ParameterSet::TOY_N1024
            .validate(InsecurePolicy::Allow)
            .unwrap();
        let members: Vec<MemberId> = (1..=n)
            .map(|i| MemberId::new(format!("m{i:02}")).unwrap())
            .collect();
        let ceremony = CeremonyId::new("thr").unwrap();
        let access = AccessStructure::new(&members, t).unwrap();
        let mut rng = Csprng::from_u128_seed(seed);
        let dealings = members
            .iter()
            .map(|m| {
                let sk = SecretKeyShare::generate(&params, m.clone(), &mut rng);
                Thresholdizer::deal(&params, &ceremony, &access, &sk, &mut rng).unwrap()
            })
            .collect();
        Fixture {
            params,
            ceremony,
            access,
            dealings,
        }
    }

    fn verify(fx: &Fixture, dealer: usize, recipient: usize) -> Result<(), ChannelError> {
        let me = fx.access.members()[recipient].clone();
        fx.dealings[dealer].shares[recipient].verify(
            &fx.params,
            &fx.ceremony,
            &fx.access,
            &me,
            &fx.dealings[dealer].commitment,
        )
    }

    fn inconsistent_dealer(err: ChannelError) -> MemberId {
        match err {
            ChannelError::Threshold(ThresholdError::InconsistentShare { dealer, .. }) => dealer,
            other => panic!("expected an inconsistent share, got {other:?}"),
        }
    }

    #[test]
    fn honest_dealings_verify_and_evaluate_like_a_schoolbook_polynomial() {
        let fx = fixture(5, 3, 1);
        for d in 0..5 {
            for r in 0..5 {
                verify(&fx, d, r).unwrap();
            }
        }
        // Independent reference for Horner's rule: Σ c_k·x^k in big integers,
        // slot by slot, modulo each prime.
        let mut rng = Csprng::from_u128_seed(2);
        let coeffs: Vec<Poly> = (0..4).map(|_| rng.uniform_poly(fx.params.ring())).collect();
        for x in [1u64, 2, 7, 1000] {
            let got = evaluate(&fx.params, &coeffs, ShamirPublicPoint(x)).unwrap();
            for (limb, &p) in fx.params.set().moduli.iter().enumerate() {
                for slot in [0, 1, 511, 1023] {
                    let want: BigUint = coeffs
                        .iter()
                        .enumerate()
                        .map(|(k, c)| {
                            BigUint::from(c.limb(limb)[slot]) * BigUint::from(x).pow(k as u32)
                        })
                        .sum::<BigUint>()
                        % p;
                    assert_eq!(BigUint::from(got.limb(limb)[slot]), want);
                }
            }
        }
    }

    #[test]
    fn tampered_misrouted_and_foreign_shares_name_the_dealer() {
        let mut fx = fixture(5, 3, 3);
        // A share changed after dealing (one residue): the digest no longer matches.
        let v = fx.dealings[1].shares[2].value.residues()[5];
        let mut data = fx.dealings[1].shares[2].value.residues().to_vec();
        data[5] = (v + 1) % fx.params.set().moduli[0];
        fx.dealings[1].shares[2].value =
            Poly::from_residues(fx.params.ring(), Representation::Ntt, data).unwrap();
        let err = verify(&fx, 1, 2).unwrap_err();
        assert!(err.to_string().contains("dealt by m02 to m03"), "{err}");
        assert_eq!(inconsistent_dealer(err), fx.access.members()[1]);
        // The salt too.
        fx.dealings[3].shares[0].salt[0] ^= 1;
        assert_eq!(
            inconsistent_dealer(verify(&fx, 3, 0).unwrap_err()),
            fx.access.members()[3]
        );
        // A share addressed to m01 used by m02.
        let me = fx.access.members()[1].clone();
        let err = fx.dealings[0].shares[0]
            .verify(
                &fx.params,
                &fx.ceremony,
                &fx.access,
                &me,
                &fx.dealings[0].commitment,
            )
            .unwrap_err();
        assert!(
            matches!(
                err,
                ChannelError::Threshold(ThresholdError::WrongRecipient { .. })
            ),
            "{err}"
        );
        // A share checked against another dealer's commitment.
        let err = fx.dealings[0].shares[4]
            .verify(
                &fx.params,
                &fx.ceremony,
                &fx.access,
                &fx.access.members()[4].clone(),
                &fx.dealings[2].commitment,
            )
            .unwrap_err();
        assert_eq!(inconsistent_dealer(err), fx.access.members()[2]);
        // A share replayed into another ceremony: the digest binds the ceremony id.
        let other = CeremonyId::new("thr-2").unwrap();
        let me = fx.access.members()[4].clone();
        let err = fx.dealings[0].shares[4]
            .verify(
                &fx.params,
                &other,
                &fx.access,
                &me,
                &fx.dealings[0].commitment,
            )
            .unwrap_err();
        assert_eq!(inconsistent_dealer(err), fx.access.members()[0]);
        // A commitment for another threshold is malformed.
        let mut c = fx.dealings[0].commitment.clone();
        c.threshold = 4;
        let err = fx.dealings[0].shares[4]
            .verify(&fx.params, &fx.ceremony, &fx.access, &me, &c)
            .unwrap_err();
        assert!(
            err.to_string().contains("malformed") && err.to_string().contains("m01"),
            "{err}"
        );
        // A commitment whose masked polynomial was changed.
        let mut c = fx.dealings[0].commitment.clone();
        c.masked[1] = c.masked[0].clone();
        assert_eq!(
            inconsistent_dealer(
                fx.dealings[0].shares[4]
                    .verify(&fx.params, &fx.ceremony, &fx.access, &me, &c)
                    .unwrap_err()
            ),
            fx.access.members()[0]
        );
    }

    /// Coefficients of the scalar polynomial of degree < k through
    /// (x_j, v_j), per prime, by the Lagrange basis (a test-only reference
    /// interpolator).
    fn interpolate(params: &Params, xs: &[u64], values: &[Vec<u64>]) -> Vec<Vec<u64>> {
        let k = xs.len();
        let moduli = &params.set().moduli;
        let mut out = vec![vec![0u64; moduli.len()]; k];
        for (j, v) in values.iter().enumerate() {
            for (limb, &p) in moduli.iter().enumerate() {
                // Coefficients of ℓ_j(X) modulo p.
                let mut num = vec![1u64];
                let mut den = 1u64;
                for (m, &xm) in xs.iter().enumerate() {
                    if m == j {
                        continue;
                    }
                    let mut next = vec![0u64; num.len() + 1];
                    for (c, &a) in num.iter().enumerate() {
                        next[c + 1] = (next[c + 1] + a) % p;
                        next[c] = sub_mod(next[c], mul_mod(a, xm % p, p), p);
                    }
                    num = next;
                    den = mul_mod(den, sub_mod(xs[j] % p, xm % p, p), p);
                }
                let inv = inv_mod(den, p).unwrap();
                for (c, acc) in out.iter_mut().enumerate() {
                    let term = mul_mod(mul_mod(num[c], inv, p), v[limb], p);
                    acc[limb] = add_mod(acc[limb], term, p);
                }
            }
        }
        out
    }

    /// ĝ(x_j) + ⟨r, f(x_j)⟩ of a share, by a schoolbook inner product
    /// (u128 sums, one reduction per prime: independent of `project`).
    fn masked_value(params: &Params, r: &Poly, share: &ShamirShare) -> Vec<u64> {
        let n = params.degree();
        params
            .set()
            .moduli
            .iter()
            .enumerate()
            .map(|(i, &p)| {
                let (rs, vs) = (
                    &r.residues()[i * n..(i + 1) * n],
                    &share.value.residues()[i * n..(i + 1) * n],
                );
                let dot = rs.iter().zip(vs).fold(0u128, |acc, (&a, &b)| {
                    (acc + a as u128 * b as u128) % p as u128
                });
                ((dot + share.mask[i] as u128) % p as u128) as u64
            })
            .collect()
    }

    #[test]
    fn a_dealer_whose_shares_lie_on_no_polynomial_is_caught_by_the_other_recipients() {
        // The cheating dealer m01 changes m01's own share by δ, recomputes
        // every digest and the projection, and publishes the ĥ of degree < t
        // through the first t recipients' ĝ + ⟨r, f'⟩. Those t pass; the
        // others do not. δ is uniform, or one slot of one prime (the change
        // a projection could most plausibly miss).
        let (n, t) = (6, 4);
        let mut rng = Csprng::from_u128_seed(6);
        for sparse in [false, true] {
            let mut fx = fixture(n, t, 5);
            let params = fx.params.clone();
            let delta = if sparse {
                let mut residues = vec![0u64; params.degree() * params.set().moduli.len()];
                residues[params.degree() + 17] = 1;
                Poly::from_residues(params.ring(), Representation::Ntt, residues).unwrap()
            } else {
                rng.uniform_poly(params.ring()).into_ntt()
            };
            let dealing = &mut fx.dealings[0];
            dealing.shares[0].value.add_assign(&delta).unwrap();
            let digests: Vec<[u8; 32]> = dealing
                .shares
                .iter()
                .map(|s| share_digest(&params, &fx.ceremony, s))
                .collect();
            let r = challenge(
                &params,
                &fx.ceremony,
                &dealing.commitment.dealer,
                t,
                &digests,
            );
            let through: Vec<Vec<u64>> = dealing.shares[..t]
                .iter()
                .map(|s| masked_value(&params, &r, s))
                .collect();
            let xs: Vec<u64> = (1..=t as u64).collect();
            dealing.commitment.digests = digests;
            dealing.commitment.masked = interpolate(&params, &xs, &through);
            for recipient in 0..t {
                verify(&fx, 0, recipient).unwrap();
            }
            for recipient in t..n {
                assert_eq!(
                    inconsistent_dealer(verify(&fx, 0, recipient).unwrap_err()),
                    fx.access.members()[0],
                    "sparse δ: {sparse}"
                );
            }
        }
        // And an honest dealing's ĥ is what the reference interpolator finds
        // through any t of its shares.
        let fx = fixture(n, t, 5);
        let honest = &fx.dealings[1];
        let r = challenge(
            &fx.params,
            &fx.ceremony,
            &honest.commitment.dealer,
            t,
            &honest.commitment.digests,
        );
        for first in [0, n - t] {
            let through: Vec<Vec<u64>> = honest.shares[first..first + t]
                .iter()
                .map(|s| masked_value(&fx.params, &r, s))
                .collect();
            let xs: Vec<u64> = (first as u64 + 1..=(first + t) as u64).collect();
            assert_eq!(
                interpolate(&fx.params, &xs, &through),
                honest.commitment.masked
            );
        }
    }

    #[test]
    fn aggregation_needs_one_verified_dealing_from_every_member() {
        let fx = fixture(4, 3, 7);
        let me = fx.access.members()[2].clone();
        let shares: Vec<&ShamirShare> = fx.dealings.iter().map(|d| &d.shares[2]).collect();
        let commitments: Vec<&ShamirCommitment> =
            fx.dealings.iter().map(|d| &d.commitment).collect();
        ThresholdSecretShare::aggregate(
            &fx.params,
            &fx.ceremony,
            &fx.access,
            &me,
            &shares,
            &commitments,
        )
        .unwrap();
        let err = ThresholdSecretShare::aggregate(
            &fx.params,
            &fx.ceremony,
            &fx.access,
            &me,
            &shares[1..],
            &commitments,
        )
        .unwrap_err();
        assert_eq!(
            err,
            ThresholdError::MissingDealing(fx.access.members()[0].clone()).into()
        );
        let mut dup = shares.clone();
        dup.push(shares[3]);
        let err = ThresholdSecretShare::aggregate(
            &fx.params,
            &fx.ceremony,
            &fx.access,
            &me,
            &dup,
            &commitments,
        )
        .unwrap_err();
        assert_eq!(
            err,
            ThresholdError::DuplicateDealing(fx.access.members()[3].clone()).into()
        );
        // Shares addressed to another member.
        let theirs: Vec<&ShamirShare> = fx.dealings.iter().map(|d| &d.shares[1]).collect();
        let err = ThresholdSecretShare::aggregate(
            &fx.params,
            &fx.ceremony,
            &fx.access,
            &me,
            &theirs,
            &commitments,
        )
        .unwrap_err();
        assert!(
            matches!(
                err,
                ChannelError::Threshold(ThresholdError::WrongRecipient { .. })
            ),
            "{err}"
        );
    }

    #[test]
    fn thresholds_outside_the_majority_range_are_refused() {
        let members: Vec<MemberId> = (1..=6)
            .map(|i| MemberId::new(format!("m{i}")).unwrap())
            .collect();
        assert_eq!(AccessStructure::default_threshold(6), 4);
        assert_eq!(AccessStructure::default_threshold(5), 3);
        assert!(AccessStructure::new(&members, 4).is_ok());
        assert!(AccessStructure::new(&members, 6).is_ok());
        for t in [0, 1, 3, 7] {
            let err = AccessStructure::new(&members, t).unwrap_err();
            assert_eq!(
                err,
                ThresholdError::OutOfRange {
                    threshold: t,
                    members: 6,
                    min: 4
                }
                .into()
            );
            assert!(err.to_string().contains("4..=6"), "{err}");
        }
        assert!(AccessStructure::new(&members[..1], 1).is_ok());
        let mut dup = members.clone();
        dup.push(members[0].clone());
        assert!(matches!(
            AccessStructure::new(&dup, 4),
            Err(ChannelError::DuplicateMember(_))
        ));
    }

    #[test]
    fn secret_types_print_nothing_secret() {
        let fx = fixture(3, 2, 9);
        let s = &fx.dealings[0].shares[1];
        let shown = format!("{s:?}");
        assert!(
            shown.contains("m01") && !shown.contains(&s.value.residues()[0].to_string()),
            "{shown}"
        );
    }
}
