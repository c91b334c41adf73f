//! The fixed-point codec (DESIGN.md §3): real vectors to scaled plaintexts and
//! back, refusing — never wrapping — anything that could overflow.
//!
//! A value x becomes X = ⌊x·2^f⌉, and a coefficient Δ·X mod q with Δ = ⌊q/t⌋.
//! The plaintext modulus t is sized from the number of members n:
//!
//! * the decryption noise of a sum is at most
//!   E(n) = n·2^b(n) + n·η·(2·N·n + 1) (n flooding terms of at most 2^b(n), plus n
//!   fresh encryptions, each with |e_pk·u + e1·s + e0| ≤ η·(2·N·n + 1) since
//!   e_pk and s are sums of n CBD(η) and ternary polynomials);
//! * decoding ⌊t·x/q⌉ is exact when Δ > 2·E(n), so t = min(2^max_bits, ⌊q/(2E(n)+1)⌋).
//!
//! Every valid sum satisfies |ΣX| ≤ n·(B·2^f + 1/2). The codec picks the largest
//! f ≤ 62 that keeps that bound [`GUARD_BITS`] bits below t/2. The guard bits
//! make an incomplete or corrupted decryption detectable: such a result is
//! uniform modulo q, so each decoded value lands inside the valid range with
//! probability 2^−8 and [`FixedPointCodec::decode`] reports it instead of
//! returning noise. The decoding error of a sum is at most n·2^−(f+1).
//!
//! The flooding b(n) grows with n ([`crate::ParameterSet::flooding_bits_for`]),
//! so t shrinks faster than it did with a fixed 2^65 beyond 13 members:
//! n8192-q124 holds at most 20 224 members (for any bound; a larger federation is refused with
//! [`CodecError::Overflow`] or [`CodecError::TooManyMembers`]), n8192-q186
//! every size up to [`MAX_MEMBERS`] = 2^20. Every codec built satisfies
//! Δ > 2·E(n), so flooding and noise always decode.
//!
//! **Two limbs** ([`Limbs::Two`], issue 17): a sum of n values keeps only
//! f fractional bits, error n·2^−(f+1), and contributions such as GP
//! summaries span orders of magnitude. The two-limb encoding spends two slots
//! per value: a coarse part h = ⌊x·2^s⌉/2^s on the grid 2^−s, which the codec
//! holds exactly when s ≤ f, and the rest r = (x − h)·2^s (|r| ≤ ½, or ≤ 1 when h
//! is pulled back inside the bound). The sum comes back as Σh + Σr·2^−s, with
//! error at most n·2^−(f+s+1). The codec picks s = min([`TWO_LIMB_SPLIT_BITS`], f)
//! and records it in [`EncodingInfo::limbs`], so the receiver joins the
//! limbs with the same s; a split finer than f (a coarse part the codec would
//! round) is refused with [`CodecError::TwoLimbPrecision`], never silently
//! rounded.

use crate::{CodecError, Params};
use fedhe_ring::modular::{mul_mod_shoup, neg_mod_if, shoup_precompute};
use fedhe_ring::{CrtBasis, Poly, Representation};
use num_bigint::BigUint;
use num_traits::ToPrimitive;
use std::sync::Arc;

/// Bits kept between the largest valid sum and the plaintext range.
pub const GUARD_BITS: u32 = 8;

/// Largest number of members a codec accepts.
pub const MAX_MEMBERS: usize = 1 << 20;

/// The split bits s a two-limb codec uses when its fractional bits allow:
/// the sum then comes back within n·2^−(f+25), close to `f64` precision for
/// the bounds fedhe uses.
pub const TWO_LIMB_SPLIT_BITS: u32 = 24;

/// How many plaintext slots hold one value (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limbs {
    /// One slot: ⌊x·2^f⌉. A sum's error is at most n·2^−(f+1).
    One,
    /// Two slots: the coarse part on the grid 2^−`split_bits` and the rest
    /// scaled by 2^`split_bits`. A sum's error is at most n·2^−(f+s+1).
    Two {
        /// The coarse grid's bits s (1 ≤ s ≤ f).
        split_bits: u32,
    },
}

impl Limbs {
    /// Slots per value.
    pub fn slots(self) -> usize {
        match self {
            Self::One => 1,
            Self::Two { .. } => 2,
        }
    }
}

/// The precision a channel asks of its codec.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Precision {
    /// [`Limbs::One`]: the most compact encoding.
    #[default]
    OneLimb,
    /// [`Limbs::Two`] with s = min([`TWO_LIMB_SPLIT_BITS`], f).
    TwoLimb,
}

/// Splits every value x into its coarse part h (a multiple of 2^−s within
/// `bound`) and the rest (x − h)·2^s: `[h_1..h_n, r_1..r_n]`. Exact in `f64`:
/// h and x agree in every bit above 2^−s, so x − h and the power-of-two
/// scaling lose nothing.
pub fn split_two_limbs(values: &[f64], split_bits: u32, bound: f64) -> Vec<f64> {
    let scale = (split_bits as f64).exp2();
    let coarse: Vec<f64> = values
        .iter()
        .map(|v| {
            let h = (v * scale).round() / scale;
            // A bound off the grid: rounding may step past it; step back, so
            // the coarse part stays encodable and the rest is at most 1.
            if h.abs() > bound {
                h - h.signum() / scale
            } else {
                h
            }
        })
        .collect();
    let rest = values.iter().zip(&coarse).map(|(v, h)| (v - h) * scale);
    coarse.iter().copied().chain(rest).collect()
}

/// Joins a sum of split vectors: Σh + Σr·2^−s.
pub fn join_two_limbs(sum: &[f64], split_bits: u32) -> Vec<f64> {
    let n = sum.len() / 2;
    let scale = (-(split_bits as f64)).exp2();
    (0..n).map(|i| sum[i] + sum[n + i] * scale).collect()
}

/// What a receiver needs to decode a sum: fixed by the round, carried by every
/// encrypted vector so that vectors of different encodings are never added.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EncodingInfo {
    /// Number of members n (contributors and decryptors are among them).
    pub members: u32,
    /// The declared bound B on every |value|.
    pub bound: f64,
    /// Fractional bits f.
    pub fractional_bits: u32,
    /// Slots per value, and the split of a two-limb encoding.
    pub limbs: Limbs,
}

/// ⌊y⌉ with halves away from zero, exactly as `f64::round`, for |y| < 2^62.
///
/// `f64::round` is a libm call on the x86-64 baseline (no SSE4.1 `roundsd`);
/// truncation is one instruction. Both steps are exact: t = trunc(y) is an
/// integer below 2^62, hence y itself when |y| ≥ 2^52 and exactly representable
/// otherwise, and y − t is then exact as well.
fn round_half_away(y: f64) -> i64 {
    let t = y as i64;
    let frac = y - t as f64;
    t + i64::from(frac >= 0.5) - i64::from(frac <= -0.5)
}

/// Encoder and decoder for one (parameter set, members, bound).
#[derive(Clone, Debug)]
pub struct FixedPointCodec {
    params: Arc<Params>,
    info: EncodingInfo,
    t: u64,
    /// Δ mod p_i with Shoup constants, per prime.
    delta: Vec<(u64, u64)>,
    scaler: fedhe_ring::crt::ScaleAndRound,
    max_abs_sum: i128,
}

/// The decryption-noise bound E(n) = n·2^b(n) + n·η·(2·N·n + 1) of the module
/// docs, with b(n) = [`crate::ParameterSet::flooding_bits_for`] (the flooding
/// grows with n so that its statistical margin does not shrink). It holds for
/// n-of-n decryption and for threshold decryption by any t ≤ n members: the
/// Lagrange-weighted shares reconstruct s·C1 exactly, so only their t ≤ n
/// flooding terms add to the ciphertext noise.
pub fn noise_bound(params: &Params, members: usize) -> u128 {
    let n = members as u128;
    let set = params.set();
    n * (1u128 << set.flooding_bits_for(members)) + set.ciphertext_noise_bound(members)
}

impl FixedPointCodec {
    /// The codec with the most fractional bits that fit (see the module docs).
    pub fn new(params: &Arc<Params>, members: usize, bound: f64) -> Result<Self, CodecError> {
        let t = Self::plaintext_modulus(params, members, bound)?;
        let f = (0..=62u32)
            .rev()
            .find(|&f| Self::fits(members, bound, f, t))
            .ok_or_else(|| Self::overflow(params, members, bound, 0, t))?;
        Self::build(params, members, bound, f, t)
    }

    /// The codec with exactly `fractional_bits`, refused if the sum could overflow.
    pub fn with_fractional_bits(
        params: &Arc<Params>,
        members: usize,
        bound: f64,
        fractional_bits: u32,
    ) -> Result<Self, CodecError> {
        let t = Self::plaintext_modulus(params, members, bound)?;
        if fractional_bits > 62 || !Self::fits(members, bound, fractional_bits, t) {
            return Err(Self::overflow(params, members, bound, fractional_bits, t));
        }
        Self::build(params, members, bound, fractional_bits, t)
    }

    /// The codec with the most fractional bits that fit and the limbs
    /// `precision` asks for.
    pub fn with_precision(
        params: &Arc<Params>,
        members: usize,
        bound: f64,
        precision: Precision,
    ) -> Result<Self, CodecError> {
        let codec = Self::new(params, members, bound)?;
        match precision {
            Precision::OneLimb => Ok(codec),
            Precision::TwoLimb => {
                let s = TWO_LIMB_SPLIT_BITS.min(codec.info.fractional_bits);
                codec.into_two_limbs(s)
            }
        }
    }

    /// The two-limb codec with exactly `split_bits` (s), refused with
    /// [`CodecError::TwoLimbPrecision`] when it cannot keep the precision it
    /// promises: s above the fractional bits f (the coarse parts would be
    /// rounded), s = 0, or a bound below 1 (the rest, up to 1, would not fit).
    pub fn with_split_bits(
        params: &Arc<Params>,
        members: usize,
        bound: f64,
        split_bits: u32,
    ) -> Result<Self, CodecError> {
        Self::new(params, members, bound)?.into_two_limbs(split_bits)
    }

    fn into_two_limbs(mut self, split_bits: u32) -> Result<Self, CodecError> {
        let f = self.info.fractional_bits;
        if split_bits == 0 || split_bits > f || self.info.bound < 1.0 {
            return Err(CodecError::TwoLimbPrecision {
                members: self.info.members as usize,
                bound: self.info.bound,
                fractional_bits: f,
                split_bits,
                set: self.params.set().name,
            });
        }
        self.info.limbs = Limbs::Two { split_bits };
        Ok(self)
    }

    /// The codec an encrypted vector was made with.
    pub fn from_info(params: &Arc<Params>, info: &EncodingInfo) -> Result<Self, CodecError> {
        let codec = Self::with_fractional_bits(
            params,
            info.members as usize,
            info.bound,
            info.fractional_bits,
        )?;
        match info.limbs {
            Limbs::One => Ok(codec),
            Limbs::Two { split_bits } => codec.into_two_limbs(split_bits),
        }
    }

    fn plaintext_modulus(params: &Params, members: usize, bound: f64) -> Result<u64, CodecError> {
        if members == 0 {
            return Err(CodecError::NoMembers);
        }
        if !(bound.is_finite() && bound > 0.0) {
            return Err(CodecError::InvalidBound(bound));
        }
        let too_many = || CodecError::TooManyMembers {
            set: params.set().name,
            members,
        };
        if members > MAX_MEMBERS {
            return Err(too_many());
        }
        let delta_min = BigUint::from(2 * noise_bound(params, members) + 1);
        let t_noise = params.crt().modulus() / delta_min;
        let cap = BigUint::from(1u64 << params.set().max_plaintext_bits.min(62));
        let t = t_noise.min(cap).to_u64().ok_or_else(too_many)?;
        if t < 1 << (GUARD_BITS + 2) {
            return Err(too_many());
        }
        Ok(t)
    }

    /// n·(B·2^f + 1/2)·2^(guard+1) < t, evaluated with a relative safety margin
    /// far above f64 rounding.
    fn fits(members: usize, bound: f64, f: u32, t: u64) -> bool {
        let max_sum = members as f64 * (bound * (f as f64).exp2() + 0.5);
        max_sum * ((GUARD_BITS + 1) as f64).exp2() < t as f64 * (1.0 - 1e-9)
    }

    fn overflow(params: &Params, members: usize, bound: f64, f: u32, t: u64) -> CodecError {
        CodecError::Overflow {
            members,
            bound,
            fractional_bits: f,
            plaintext_bits: (t as f64).log2(),
            guard_bits: GUARD_BITS,
            set: params.set().name,
        }
    }

    fn build(
        params: &Arc<Params>,
        members: usize,
        bound: f64,
        f: u32,
        t: u64,
    ) -> Result<Self, CodecError> {
        let q = params.crt().modulus();
        let delta = q / t;
        let delta = params
            .set()
            .moduli
            .iter()
            .map(|&p| {
                let d = (&delta % p).to_u64().unwrap_or(0);
                (d, shoup_precompute(d, p))
            })
            .collect();
        let crt: &CrtBasis = params.crt();
        let max_abs_sum = (members as f64 * (bound * (f as f64).exp2() + 0.5)).ceil() as i128;
        Ok(Self {
            params: Arc::clone(params),
            info: EncodingInfo {
                members: members as u32,
                bound,
                fractional_bits: f,
                limbs: Limbs::One,
            },
            t,
            delta,
            scaler: crt.scaler(t),
            max_abs_sum,
        })
    }

    /// The encoding parameters.
    pub fn info(&self) -> &EncodingInfo {
        &self.info
    }

    /// Fractional bits f.
    pub fn fractional_bits(&self) -> u32 {
        self.info.fractional_bits
    }

    /// The plaintext modulus t.
    pub fn plaintext_modulus_value(&self) -> u64 {
        self.t
    }

    /// The slots per value, and the split of a two-limb encoding.
    pub fn limbs(&self) -> Limbs {
        self.info.limbs
    }

    /// The worst-case fixed-point error of a decoded sum of n values:
    /// n·2^−(f+1) with one limb, n·2^−(f+s+1) with two (before the one
    /// `f64` rounding of joining the limbs).
    pub fn error_bound(&self) -> f64 {
        let s = match self.info.limbs {
            Limbs::One => 0,
            Limbs::Two { split_bits } => split_bits,
        };
        self.info.members as f64 * (-((self.info.fractional_bits + s) as f64) - 1.0).exp2()
    }

    /// Number of plaintexts (and ciphertexts) a vector of `len` values needs.
    pub fn plaintext_count(&self, len: usize) -> usize {
        (len * self.info.limbs.slots())
            .div_ceil(self.params.degree())
            .max(1)
    }

    /// Encodes values into ⌈slots·len/N⌉ plaintexts Δ·⌊x·2^f⌉ (coefficient
    /// form; with two limbs, of the split values), refusing NaN, infinities
    /// and values beyond the bound. Errors name the index in `values`.
    pub fn encode(&self, values: &[f64]) -> Result<Vec<Poly>, CodecError> {
        let bound = self.info.bound;
        if let Some((index, &value)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(CodecError::NotFinite { index, value });
        }
        if let Some((index, &value)) = values.iter().enumerate().find(|(_, v)| v.abs() > bound) {
            return Err(CodecError::OutOfBound {
                index,
                value,
                bound,
            });
        }
        match self.info.limbs {
            Limbs::One => self.encode_slots(values),
            // Both parts lie within the bound by construction (bound ≥ 1).
            Limbs::Two { split_bits } => {
                self.encode_slots(&split_two_limbs(values, split_bits, bound))
            }
        }
    }

    /// Δ·⌊x·2^f⌉ of checked slot values, ⌈len/N⌉ plaintexts.
    fn encode_slots(&self, values: &[f64]) -> Result<Vec<Poly>, CodecError> {
        let n = self.params.degree();
        let scale = (self.info.fractional_bits as f64).exp2();
        let ring = self.params.ring();
        let moduli = self.params.set().moduli;
        let count = values.len().div_ceil(n).max(1);
        let mut out = Vec::with_capacity(count);
        for chunk_index in 0..count {
            let chunk = values.get(chunk_index * n..).unwrap_or(&[]);
            let chunk = &chunk[..chunk.len().min(n)];
            let mut data = vec![0u64; n * moduli.len()];
            for (limb, (&p, &(d, d_shoup))) in moduli.iter().zip(&self.delta).enumerate() {
                for (dst, &x) in data[limb * n..].iter_mut().zip(chunk) {
                    // |x·2^f| < 2^62: exact in f64 (a power-of-two scaling).
                    // mul_mod_shoup takes any 64-bit multiplicand: no reduction first.
                    let fixed = round_half_away(x * scale);
                    let product = mul_mod_shoup(fixed.unsigned_abs(), d, d_shoup, p);
                    *dst = neg_mod_if(product, fixed < 0, p);
                }
            }
            out.push(
                Poly::from_residues(ring, Representation::Coefficient, data).map_err(|_| {
                    CodecError::Length {
                        values: values.len(),
                        plaintexts: chunk_index,
                        slots: n,
                    }
                })?,
            );
        }
        Ok(out)
    }

    /// The centred integers ⌊t·x/q⌉ of the slots of the first `len` values.
    fn decode_integers(&self, plaintexts: &[Poly], len: usize) -> Result<Vec<i128>, CodecError> {
        let n = self.params.degree();
        let values = len;
        let len = len * self.info.limbs.slots();
        if len > plaintexts.len() * n {
            return Err(CodecError::Length {
                values,
                plaintexts: plaintexts.len(),
                slots: n,
            });
        }
        let t = self.t as i128;
        let k = self.params.set().moduli.len();
        Ok((0..len)
            .map(|i| {
                let (poly, j) = (&plaintexts[i / n], i % n);
                debug_assert_eq!(poly.representation(), Representation::Coefficient);
                let m = self.scaler.apply((0..k).map(|limb| poly.limb(limb)[j])) as i128;
                if m >= (t + 1) / 2 {
                    m - t
                } else {
                    m
                }
            })
            .collect())
    }

    /// Decodes a sum, checking that every value lies in the range of a valid sum
    /// (see the guard bits in the module docs).
    pub fn decode(&self, plaintexts: &[Poly], len: usize) -> Result<Vec<f64>, CodecError> {
        let integers = self.decode_integers(plaintexts, len)?;
        if let Some(index) = integers.iter().position(|m| m.abs() > self.max_abs_sum) {
            return Err(CodecError::DecodedOutOfRange { index });
        }
        Ok(self.to_reals(&integers))
    }

    /// Decodes without the range check: for measuring what an incomplete
    /// decryption yields (the collusion experiment), never for results.
    pub fn decode_unchecked(
        &self,
        plaintexts: &[Poly],
        len: usize,
    ) -> Result<Vec<f64>, CodecError> {
        Ok(self.to_reals(&self.decode_integers(plaintexts, len)?))
    }

    fn to_reals(&self, integers: &[i128]) -> Vec<f64> {
        let inv_scale = (-(self.info.fractional_bits as f64)).exp2();
        let slots: Vec<f64> = integers.iter().map(|&m| m as f64 * inv_scale).collect();
        match self.info.limbs {
            Limbs::One => slots,
            Limbs::Two { split_bits } => join_two_limbs(&slots, split_bits),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::round_half_away;
    use super::*;
    use crate::{InsecurePolicy, ParameterSet};

    #[test]
    fn every_accepted_size_keeps_flooding_and_noise_below_half_delta() {
        let q124 = ParameterSet::N8192_Q124
            .validate(InsecurePolicy::Refuse)
            .unwrap();
        let q186 = ParameterSet::N8192_Q186
            .validate(InsecurePolicy::Refuse)
            .unwrap();
        for (params, n) in [
            (&q124, 1),
            (&q124, 10),
            (&q124, 1000),
            (&q124, 20_224),
            (&q186, 20_225),
            (&q186, MAX_MEMBERS),
        ] {
            let codec = FixedPointCodec::new(params, n, 1e-6).unwrap();
            // Independent check in big integers: Δ = ⌊q/t⌋ > 2·E(n).
            let q = params.crt().modulus();
            let delta = q / BigUint::from(codec.plaintext_modulus_value());
            let e = BigUint::from(n as u64)
                * (BigUint::from(1u32) << params.set().flooding_bits_for(n))
                + BigUint::from(params.set().ciphertext_noise_bound(n));
            assert!(delta > e * 2u32, "{} n = {n}", params.set().name);
        }
        // One more member than the default set holds is refused, by name.
        let err = FixedPointCodec::new(&q124, 20_225, 1e-6).unwrap_err();
        assert!(
            matches!(
                err,
                CodecError::Overflow {
                    members: 20_225,
                    ..
                }
            ) || matches!(
                err,
                CodecError::TooManyMembers {
                    members: 20_225,
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("n8192-q124"), "{err}");
    }

    #[test]
    fn rounding_matches_f64_round() {
        let edges = [
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.5,
            -1.5,
            2.5,
            -2.5,
            0.499_999_999_999_999_94,
            -0.499_999_999_999_999_94,
            4_503_599_627_370_495.5, // 2^52 − 1/2
            -4_503_599_627_370_495.5,
            9_007_199_254_740_993.0, // rounds to 2^53 on parsing
            (1u64 << 61) as f64 * 1.75,
            -((1u64 << 61) as f64) * 1.75,
        ];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let random = (0..100_000).map(|i| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            // Uniform mantissas at scales from 2^−4 to 2^61, both signs, and
            // exact halves.
            let scale = (i % 66) - 4;
            let v = (x >> 11) as f64 / (1u64 << 53) as f64 * 2f64.powi(scale);
            let v = if i % 7 == 0 {
                (v * 2.0).round() / 2.0
            } else {
                v
            };
            if x & 1 == 0 {
                v
            } else {
                -v
            }
        });
        for y in edges.into_iter().chain(random) {
            assert_eq!(round_half_away(y), y.round() as i64, "y = {y:e}");
        }
    }
}
