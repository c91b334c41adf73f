//! A binding, additively homomorphic commitment to a contribution's `c1`
//! (issue 16): one member checks an aggregate against every contribution at
//! one multiscalar multiplication, whatever the number of contributors.
//!
//! The linear digest of [`crate::sum_digest`] catches a server alone, but not
//! a contributor colluding with it by signing a false digest: the digest's
//! challenge is public once the round closes and nothing ties a signed digest
//! to the bytes committed. Only a holder of the bytes could catch that, so
//! every member used to download a few contributions at random (16 in n-of-n,
//! every one in t-of-n). A Pedersen vector commitment over ristretto255 is
//! **binding** as well as homomorphic, which removes the downloads.
//!
//! Per ciphertext `j` of a contribution `c_i` (its residues as integers in
//! `[0, p_l)`, prime-major, as on the wire):
//!
//! ```text
//! P_{i,j} = Σ_{l,k} c1_{i,j,l,k} · G_{l,k}     (G hashed to the group from a public seed)
//! ```
//!
//! 1. *Commit*: with its commitment to `c_i`'s hash the contributor signs
//!    [`C1Commitment::hash`], so its `P_i` is fixed before it could see any
//!    other contribution. (A bare `P_i` chosen later would be malleable: a
//!    colluder could sign `P_col + P(Δ)` with `Δ` made from a victim's
//!    ciphertext.)
//! 2. *Reveal*: with its digest the contributor signs `P_i` itself; a
//!    checking member compares its hash with the committed one.
//! 3. *Aggregate*: the server adds the contributions modulo each `p_l` and
//!    counts, per residue, how often the sum wrapped ([`CarryingSum`]): the
//!    carries `κ`, so that `Σ_i c1_i = C1 + p·κ` over the integers.
//! 4. *Check* ([`check_aggregate`]): `P(C1 + p·κ) = Σ_i P_i` for every
//!    ciphertext, by every member before it decrypts.
//!
//! **Soundness.** An aggregate `C1' ≠ Σ c1_i mod p` that passes with some
//! carries `κ'` gives two distinct integer vectors (entries below
//! `n·p_l < 2^80` on one side; below `p_l·2^32 < 2^96` on the other, whatever
//! 32-bit carries the server claims), far below the group order
//! `ℓ ≈ 2^252`, with one commitment: a discrete-log
//! relation among the `G`s, which no one knows (each is the Elligator image
//! of a hash). A colluding contributor may sign a `P_col` that does not open
//! its own `c1` but some `x` fixed at commit time; the only aggregate that
//! then passes is `Σ c1_i + x − c1_col`, what it could have contributed
//! openly. Only `C1` needs binding: it alone enters the decryption shares
//! `s_j·C1 + e_j`, and a false `C0` only shifts the decrypted sum by what the
//! server knows.
//!
//! **Cost** (`cargo bench --bench commitment`): one multiscalar
//! multiplication over `L·N` points per ciphertext at the default set
//! (16,384 points, 62-bit scalars), for the contributor and for each
//! checking member: about 6 ms where the CPU has AVX-512 IFMA
//! (curve25519-dalek 5 with the backend cfg of `.cargo/config.toml`), 13 ms
//! on AVX2; the generators are derived once per process.

use crate::crs::derive_key;
use crate::wire::{Kind, Reader, WireObject};
use crate::{ChannelError, EncryptedVector, Params, WireError};
use curve25519_dalek::ristretto::{CompressedRistretto, RistrettoPoint};
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::VartimeMultiscalarMul;
use fedhe_ring::Poly;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

const GENERATOR_CONTEXT: &str = "fedhe 2026-11 c1 commitment generators v1";
const HASH_CONTEXT: &str = "fedhe 2026-11 c1 commitment hash v1";

/// Bytes of one compressed ristretto255 point.
pub const POINT_BYTES: usize = 32;

/// The generators `G_{l,k}` of a parameter set: `L·N` points, each the
/// Elligator image (`RistrettoPoint::from_uniform_bytes`) of 64 bytes of
/// BLAKE3's output stream keyed by the set's name, so nobody knows a
/// discrete-log relation among them.
#[derive(Debug)]
pub struct C1Generators {
    points: Vec<RistrettoPoint>,
}

impl C1Generators {
    /// Derives the generators of `params` (about 12 µs a point: 0.2 s at
    /// the default set; [`Self::of`] caches them).
    pub fn derive(params: &Params) -> Self {
        let count = params.degree() * params.set().moduli.len();
        let key = derive_key(GENERATOR_CONTEXT, &[params.set().name.as_bytes()]);
        let mut xof = blake3::Hasher::new_keyed(&key).finalize_xof();
        let points = (0..count)
            .map(|_| {
                let mut wide = [0u8; 64];
                xof.fill(&mut wide);
                RistrettoPoint::from_uniform_bytes(&wide)
            })
            .collect();
        Self { points }
    }

    /// The generators of `params`, derived once per process and parameter set.
    pub fn of(params: &Params) -> Arc<Self> {
        type Cell = Arc<OnceLock<Arc<C1Generators>>>;
        static CACHE: OnceLock<Mutex<HashMap<&'static str, Cell>>> = OnceLock::new();
        let cell = CACHE
            .get_or_init(|| Mutex::new(HashMap::new()))
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(params.set().name)
            .or_default()
            .clone();
        // One caller derives, outside the map's lock; the others of the same
        // set wait for it (many members starting at once in one process, as
        // `fedhe bench service` runs them, would each derive 0.2 s of points).
        cell.get_or_init(|| Arc::new(Self::derive(params))).clone()
    }

    /// The points, prime-major (`G_{l,k}` at `l·N + k`).
    pub fn points(&self) -> &[RistrettoPoint] {
        &self.points
    }

    /// `Σ_t scalars_t · G_t` (variable time: every scalar here is public).
    fn commit_scalars(&self, scalars: impl IntoIterator<Item = Scalar>) -> RistrettoPoint {
        RistrettoPoint::vartime_multiscalar_mul(scalars, self.points.iter())
    }
}

/// A contribution's commitment: one point per ciphertext (module docs).
///
/// Kept both compressed (what is hashed and sent) and decoded (what
/// [`check_aggregate`] adds): a member checking an aggregate of n
/// contributors decodes each point once, in [`Self::from_bytes`], rather
/// than again for the sum (a ristretto255 decompression is a field
/// exponentiation, ~3.4 µs: at 1,000 contributors 3.4 ms per member).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct C1Commitment {
    points: Vec<CompressedRistretto>,
    decoded: Vec<RistrettoPoint>,
}

impl C1Commitment {
    /// `P_j = Σ_{l,k} c1_{j,l,k} · G_{l,k}` for every ciphertext `j` of `v`.
    pub fn commit(params: &Params, v: &EncryptedVector) -> Self {
        Self::of_c1s(params, v.ciphertexts.iter().map(|c| &c.c1))
    }

    /// [`Self::commit`] of the ciphertexts that will carry these `c1`s, in
    /// order: a contribution's commitment made from its encryption masks
    /// before its values exist (`crate::EncryptionMask`, an offline phase).
    pub fn of_c1s<'a>(params: &Params, c1s: impl IntoIterator<Item = &'a Poly>) -> Self {
        let generators = C1Generators::of(params);
        let decoded: Vec<RistrettoPoint> = c1s
            .into_iter()
            .map(|c1| generators.commit_scalars(c1.residues().iter().map(|&r| Scalar::from(r))))
            .collect();
        Self {
            points: decoded.iter().map(RistrettoPoint::compress).collect(),
            decoded,
        }
    }

    /// The number of ciphertexts committed to.
    pub fn parts(&self) -> usize {
        self.points.len()
    }

    /// What a contributor signs at commit time: BLAKE3 (derive-key mode) of
    /// [`Self::to_bytes`].
    pub fn hash(&self) -> [u8; 32] {
        derive_key(HASH_CONTEXT, &[&self.to_bytes()])
    }

    /// The compressed points, 32 bytes each, in ciphertext order.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.points.iter().flat_map(|p| p.to_bytes()).collect()
    }

    /// Decodes [`Self::to_bytes`]: at least one point, a whole number of
    /// 32-byte points, each a valid ristretto255 encoding.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, ChannelError> {
        if bytes.is_empty() || !bytes.len().is_multiple_of(POINT_BYTES) {
            return Err(ChannelError::Mismatch(format!(
                "a c1 commitment is a non-empty sequence of {POINT_BYTES}-byte points, not {} bytes",
                bytes.len()
            )));
        }
        let (points, decoded) = bytes
            .chunks_exact(POINT_BYTES)
            .enumerate()
            .map(|(j, chunk)| {
                let p = CompressedRistretto::from_slice(chunk).map_err(|_| {
                    ChannelError::Mismatch(format!("point {j} of a c1 commitment has no 32 bytes"))
                })?;
                p.decompress().map(|d| (p, d)).ok_or_else(|| {
                    ChannelError::Mismatch(format!(
                        "point {j} of a c1 commitment is not a ristretto255 encoding"
                    ))
                })
            })
            .collect::<Result<(Vec<_>, Vec<_>), _>>()?;
        Ok(Self { points, decoded })
    }
}

/// The carries `κ` of an aggregate: per ciphertext, prime and coefficient,
/// how often the server's sum of the contributions' `c1` wrapped modulo the
/// prime, so that `Σ_i c1_i = C1 + p·κ` over the integers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct C1Carries {
    /// `κ_{j,l,k}` at `(j·L + l)·N + k`.
    counts: Vec<u32>,
}

impl C1Carries {
    /// The counts, ciphertext-major then prime-major.
    pub fn counts(&self) -> &[u32] {
        &self.counts
    }

    /// Bytes per count on the wire: the fewest of 1, 2 or 4 that hold the
    /// largest (fewer than 256 contributors: one byte).
    fn width(&self) -> u8 {
        match self.counts.iter().copied().max().unwrap_or(0) {
            0..=0xff => 1,
            0x100..=0xffff => 2,
            _ => 4,
        }
    }
}

/// The server's running sum of contributions with the carries of its `c1`
/// (module docs, step 3).
#[derive(Debug, Clone)]
pub struct CarryingSum {
    sum: EncryptedVector,
    carries: C1Carries,
}

impl CarryingSum {
    /// The sum of one contribution: no carries yet.
    pub fn new(params: &Params, first: EncryptedVector) -> Self {
        let per = params.degree() * params.set().moduli.len();
        let counts = vec![0; first.ciphertexts.len() * per];
        Self {
            sum: first,
            carries: C1Carries { counts },
        }
    }

    /// Adds `v`, counting every residue of `c1` whose sum wraps its prime.
    pub fn add(&mut self, params: &Params, v: &EncryptedVector) -> Result<(), ChannelError> {
        if v.ciphertexts.len() != self.sum.ciphertexts.len() {
            return Err(ChannelError::Mismatch(format!(
                "cannot add a contribution of {} ciphertexts to a sum of {}",
                v.ciphertexts.len(),
                self.sum.ciphertexts.len()
            )));
        }
        let n = params.degree();
        let moduli = &params.set().moduli;
        let per = n * moduli.len();
        // Counted before adding (add_assign checks the encodings match and
        // changes nothing if they do not; then no count is kept either).
        let mut wraps = Vec::with_capacity(self.carries.counts.len());
        for (a, b) in self.sum.ciphertexts.iter().zip(&v.ciphertexts) {
            let (a, b) = (a.c1.residues(), b.c1.residues());
            if a.len() != per || b.len() != per {
                return Err(ChannelError::Mismatch(
                    "a ciphertext's c1 does not have N residues per prime".into(),
                ));
            }
            wraps.extend(
                a.iter()
                    .zip(b)
                    .enumerate()
                    .map(|(t, (&x, &y))| u32::from(y >= moduli[t / n] - x)),
            );
        }
        self.sum.add_assign(v)?;
        for (count, w) in self.carries.counts.iter_mut().zip(wraps) {
            *count = count.checked_add(w).ok_or_else(|| {
                ChannelError::Mismatch("more than 2^32 contributions in one sum".into())
            })?;
        }
        Ok(())
    }

    /// The aggregate and its carries.
    pub fn into_parts(self) -> (EncryptedVector, C1Carries) {
        (self.sum, self.carries)
    }
}

/// Why an aggregate failed [`check_aggregate`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum C1CheckFailure {
    /// The carries or a commitment do not have the aggregate's shape.
    #[error("{0}")]
    Shape(String),
    /// The commitment equation does not hold for this ciphertext.
    #[error("ciphertext {0} of the aggregate: c1 + p·carries does not open the sum of the contributors' c1 commitments")]
    NotTheSum(usize),
}

/// Checks `P(C1_j + p·κ_j) = Σ_i P_{i,j}` for every ciphertext `j` of
/// `aggregate` (module docs, step 4): the aggregate's `c1` is the sum of the
/// `c1` the contributors committed to, or a discrete-log relation among the
/// generators is known.
pub fn check_aggregate(
    params: &Params,
    aggregate: &EncryptedVector,
    carries: &C1Carries,
    commitments: &[C1Commitment],
) -> Result<(), C1CheckFailure> {
    let parts = aggregate.ciphertexts.len();
    let n = params.degree();
    let moduli = &params.set().moduli;
    let per = n * moduli.len();
    if carries.counts.len() != parts * per {
        return Err(C1CheckFailure::Shape(format!(
            "the carries cover {} residues; the aggregate has {}",
            carries.counts.len(),
            parts * per
        )));
    }
    if commitments.is_empty() {
        return Err(C1CheckFailure::Shape(
            "no contributor's c1 commitment".into(),
        ));
    }
    if let Some(c) = commitments.iter().find(|c| c.parts() != parts) {
        return Err(C1CheckFailure::Shape(format!(
            "a c1 commitment covers {} ciphertexts; the aggregate has {parts}",
            c.parts()
        )));
    }
    let generators = C1Generators::of(params);
    for (j, c) in aggregate.ciphertexts.iter().enumerate() {
        let counts = &carries.counts[j * per..(j + 1) * per];
        let opened = generators.commit_scalars(c.c1.residues().iter().zip(counts).enumerate().map(
            |(t, (&r, &kappa))| {
                Scalar::from(u128::from(r) + u128::from(moduli[t / n]) * u128::from(kappa))
            },
        ));
        // Each point was decoded once, by from_bytes or commit.
        let sum: RistrettoPoint = commitments.iter().map(|c| c.decoded[j]).sum();
        if opened != sum {
            return Err(C1CheckFailure::NotTheSum(j));
        }
    }
    Ok(())
}

impl WireObject for C1Carries {
    const KIND: Kind = Kind::C1Carries;

    /// The number of counts (u32, a multiple of L·N), bytes per count (u8:
    /// 1, 2 or 4), then the counts, little-endian at that width.
    fn encode_payload(&self, out: &mut Vec<u8>) {
        let width = self.width();
        let per = self.counts.len();
        out.extend_from_slice(&(per as u32).to_le_bytes());
        out.push(width);
        out.reserve(per * width as usize);
        for &c in &self.counts {
            out.extend_from_slice(&c.to_le_bytes()[..width as usize]);
        }
    }

    fn decode_payload(params: &Arc<Params>, r: &mut Reader<'_>) -> Result<Self, ChannelError> {
        let count = r.u32()? as usize;
        let per = params.degree() * params.set().moduli.len();
        if count == 0 || !count.is_multiple_of(per) {
            return Err(WireError::InvalidField {
                field: "carry count",
                reason: format!("{count} is not a positive multiple of L·N = {per}"),
            }
            .into());
        }
        let width = r.u8()?;
        if !matches!(width, 1 | 2 | 4) {
            return Err(WireError::InvalidField {
                field: "carry width",
                reason: format!("{width} bytes; 1, 2 or 4 expected"),
            }
            .into());
        }
        let raw = r.take(count.saturating_mul(width as usize))?;
        let counts = raw
            .chunks_exact(width as usize)
            .map(|c| {
                let mut b = [0u8; 4];
                b[..c.len()].copy_from_slice(c);
                u32::from_le_bytes(b)
            })
            .collect();
        Ok(Self { counts })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_ceremony::ToyCeremony;
    use crate::FixedPointCodec;
    use curve25519_dalek::traits::Identity;

    const GENERATOR_0_HEX: &str =
        "16d20f8455e9faabfa2e2e4917c23eebfa9bb46889b0452811aa504edc479155";
    const COMMITMENT_HEX: &str = "1e076f256ee2b4a6ed2775eabfe361a70d2383d79ce1d236ee9fefc3a0c9465d";

    fn to_hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// `count` contributions of `values` values each under one toy key.
    fn contributions(count: usize, values: usize) -> (Arc<Params>, Vec<EncryptedVector>) {
        let mut c = ToyCeremony::new(&["a", "b"], [5; 32], 9);
        let codec = FixedPointCodec::new(&c.params, count, 64.0).unwrap();
        let vs = (0..count)
            .map(|i| {
                let x: Vec<f64> = (0..values)
                    .map(|k| ((i + k) % 7) as f64 * 0.5 - 1.5)
                    .collect();
                EncryptedVector::encrypt(&c.params, &c.key, &codec, &x, &mut c.rng).unwrap()
            })
            .collect();
        (c.params, vs)
    }

    /// Independent reference: the commitment as a plain sum of scalar
    /// multiples, one point at a time (no multiscalar algorithm).
    fn schoolbook(params: &Params, scalars: &[u128]) -> RistrettoPoint {
        let g = C1Generators::derive(params);
        scalars
            .iter()
            .zip(g.points())
            .fold(RistrettoPoint::identity(), |acc, (&s, p)| {
                acc + p * Scalar::from(s)
            })
    }

    #[test]
    fn a_commitment_equals_the_schoolbook_sum_of_scalar_multiples_of_the_generators() {
        let (params, vs) = contributions(1, 3);
        let v = &vs[0];
        let c = C1Commitment::commit(&params, v);
        assert_eq!(c.parts(), v.ciphertexts.len());
        for (j, ct) in v.ciphertexts.iter().enumerate() {
            let scalars: Vec<u128> = ct.c1.residues().iter().map(|&r| r.into()).collect();
            assert_eq!(c.points[j], schoolbook(&params, &scalars).compress());
        }
        // The generators are a function of the set's name only, and distinct.
        let g = C1Generators::of(&params);
        assert_eq!(C1Generators::derive(&params).points()[..4], g.points()[..4]);
        assert_eq!(
            g.points().len(),
            params.degree() * params.set().moduli.len()
        );
        assert_ne!(g.points()[0], g.points()[1]);
    }

    /// Known answer on the default set: generators, scalars and the sum pinned
    /// as bytes. Members with different builds must agree on every `P_i`; the
    /// constant was computed by the curve25519-dalek 4.1.3 build (AVX2
    /// backend) that members ran before the move to 5.0 (AVX-512 IFMA where
    /// the CPU has it, `.cargo/config.toml`), and both give it.
    #[test]
    fn the_default_sets_commitment_of_a_fixed_vector_is_the_pinned_point() {
        let params = crate::ParameterSet::DEFAULT
            .validate(crate::InsecurePolicy::Refuse)
            .unwrap();
        let g = C1Generators::derive(&params);
        assert_eq!(to_hex(g.points()[0].compress().as_bytes()), GENERATOR_0_HEX);
        // Residue-sized scalars below 2^62 from a fixed odd multiplier.
        let scalars: Vec<u64> = (1..=g.points().len() as u64)
            .map(|t| t.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 2)
            .collect();
        let p = g.commit_scalars(scalars.iter().map(|&s| Scalar::from(s)));
        assert_eq!(to_hex(p.compress().as_bytes()), COMMITMENT_HEX);
    }

    #[test]
    fn the_carries_are_the_integer_sum_of_the_residues_and_the_sum_of_commitments_opens_the_aggregate(
    ) {
        let (params, contributions) = contributions(5, 2);
        let mut sum = CarryingSum::new(&params, contributions[0].clone());
        for v in &contributions[1..] {
            sum.add(&params, v).unwrap();
        }
        let (aggregate, carries) = sum.into_parts();
        assert_eq!(aggregate, EncryptedVector::sum(&contributions).unwrap());
        // Reference: the integer sum of every residue, in u128.
        let n = params.degree();
        let moduli = &params.set().moduli;
        let per = n * moduli.len();
        for (j, ct) in aggregate.ciphertexts.iter().enumerate() {
            for (t, &r) in ct.c1.residues().iter().enumerate() {
                let integer: u128 = contributions
                    .iter()
                    .map(|v| u128::from(v.ciphertexts[j].c1.residues()[t]))
                    .sum();
                let kappa = carries.counts[j * per + t];
                assert_eq!(
                    integer,
                    u128::from(r) + u128::from(moduli[t / n]) * u128::from(kappa)
                );
            }
        }
        assert!(
            carries.counts.iter().any(|&k| k > 0),
            "five uniform summands wrap somewhere"
        );
        let commitments: Vec<C1Commitment> = contributions
            .iter()
            .map(|v| C1Commitment::commit(&params, v))
            .collect();
        check_aggregate(&params, &aggregate, &carries, &commitments).unwrap();

        // A server that changes one residue fails, whatever carry it claims there.
        let mut forged = aggregate.clone();
        let mut residues = forged.ciphertexts[0].c1.residues().to_vec();
        residues[5] = (residues[5] + 1) % moduli[0];
        forged.ciphertexts[0].c1 = fedhe_ring::Poly::from_residues(
            params.ring(),
            forged.ciphertexts[0].c1.representation(),
            residues,
        )
        .unwrap();
        for claimed_carry in [carries.counts[5].saturating_sub(1), carries.counts[5]] {
            let mut claimed = carries.clone();
            claimed.counts[5] = claimed_carry;
            assert_eq!(
                check_aggregate(&params, &forged, &claimed, &commitments),
                Err(C1CheckFailure::NotTheSum(0))
            );
        }
        // So does a carry off by one, or a sum without one contribution.
        let mut off = carries.clone();
        off.counts[0] += 1;
        assert_eq!(
            check_aggregate(&params, &aggregate, &off, &commitments),
            Err(C1CheckFailure::NotTheSum(0))
        );
        assert_eq!(
            check_aggregate(&params, &aggregate, &carries, &commitments[1..]),
            Err(C1CheckFailure::NotTheSum(0))
        );
    }

    #[test]
    fn carries_and_commitments_round_trip_and_malformed_bytes_are_refused_by_name() {
        let (params, vs) = contributions(2, 1);
        let mut sum = CarryingSum::new(&params, vs[0].clone());
        sum.add(&params, &vs[1]).unwrap();
        let (_, carries) = sum.into_parts();
        let bytes = carries.to_bytes(&params);
        assert_eq!(C1Carries::from_bytes(&params, &bytes).unwrap(), carries);
        for cut in [0, 10, bytes.len() / 2, bytes.len() - 1] {
            assert!(C1Carries::from_bytes(&params, &bytes[..cut]).is_err());
        }
        let c = C1Commitment::commit(&params, &vs[0]);
        assert_eq!(C1Commitment::from_bytes(&c.to_bytes()).unwrap(), c);
        assert_ne!(c.hash(), C1Commitment::commit(&params, &vs[1]).hash());
        let e = C1Commitment::from_bytes(&[0u8; 31])
            .unwrap_err()
            .to_string();
        assert!(e.contains("c1 commitment"), "{e}");
        // 0xff..ff is not a canonical field element, so not a ristretto encoding.
        let e = C1Commitment::from_bytes(&[0xff; 32])
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a ristretto255 encoding"), "{e}");
        let mut wide = carries.clone();
        wide.counts[0] = 70_000;
        assert_eq!(wide.width(), 4);
        assert_eq!(
            C1Carries::from_bytes(&params, &wide.to_bytes(&params)).unwrap(),
            wide
        );
        // A sum of a different shape is refused and left as it was.
        let (_, other) = contributions(1, 2000);
        let mut s = CarryingSum::new(&params, vs[0].clone());
        assert!(s.add(&params, &other[0]).is_err());
        assert_eq!(s.into_parts().0, vs[0]);
    }
}
