//! Encryption under the collective public key and homomorphic addition
//! (DESIGN.md §2 steps 2-3; paper 004 eqs. (15)-(18)).

use crate::codec::{EncodingInfo, FixedPointCodec};
use crate::{ChannelError, CollectivePublicKey, Params};
use fedhe_ring::{Csprng, Poly, SmallDistribution};
use zeroize::{Zeroize, ZeroizeOnDrop};

/// One RLWE ciphertext (c0, c1) of N plaintext slots, coefficient form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ciphertext {
    pub(crate) c0: Poly,
    pub(crate) c1: Poly,
}

/// The part of a ciphertext that does not depend on its message (paper 004
/// eq. (15) without the plaintext): `(b·u + e0, a·u + e1)` for fresh
/// u ← ternary, e0, e1 ← CBD(η). A member can make it before its values
/// exist (an offline phase: the c1 commitment of issue 16 is a function of
/// `c1` alone), and [`Ciphertext::from_mask`] then adds the plaintext.
///
/// `b·u + e0` is the one-time pad of the plaintext: whoever holds it and
/// the ciphertext reads the message. It is never serialised, is consumed by
/// the one ciphertext made from it, and is wiped on drop.
pub struct EncryptionMask {
    pad: Poly,
    c1: Poly,
}

impl EncryptionMask {
    /// A fresh mask under `pk`: the randomness [`Ciphertext::encrypt`]
    /// draws, in the same order (u, then e0, then e1).
    pub fn sample(
        params: &Params,
        pk: &CollectivePublicKey,
        rng: &mut Csprng,
    ) -> Result<Self, ChannelError> {
        let ring = params.ring();
        let error = SmallDistribution::CenteredBinomial {
            eta: params.set().error_eta,
        };
        let u = rng
            .sample_poly(ring, SmallDistribution::Ternary)?
            .into_ntt();
        // u is transformed once; c1 takes over its buffer, the pad a copy.
        let mut pad = u.clone();
        pad.mul_assign(pk.b_ntt())?;
        rng.add_sample_assign(&mut pad, error)?;
        let mut c1 = u;
        c1.mul_assign(pk.crs().a_ntt())?;
        rng.add_sample_assign(&mut c1, error)?;
        Ok(Self { pad, c1 })
    }

    /// The ciphertext's `c1 = a·u + e1` (public once the ciphertext is).
    pub fn c1(&self) -> &Poly {
        &self.c1
    }
}

impl Drop for EncryptionMask {
    fn drop(&mut self) {
        self.pad.zeroize();
    }
}
impl ZeroizeOnDrop for EncryptionMask {}

impl std::fmt::Debug for EncryptionMask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EncryptionMask").finish_non_exhaustive()
    }
}

impl Ciphertext {
    /// c = (b·u + e0 + pt, a·u + e1) with fresh u ← ternary, e0, e1 ← CBD(η)
    /// for every ciphertext (paper 004 eq. (15)). `plaintext` is the
    /// already-scaled Δ·m.
    pub fn encrypt(
        params: &Params,
        pk: &CollectivePublicKey,
        plaintext: &Poly,
        rng: &mut Csprng,
    ) -> Result<Self, ChannelError> {
        Self::from_mask(EncryptionMask::sample(params, pk, rng)?, plaintext)
    }

    /// The ciphertext of `plaintext` (Δ·m) under a mask made before it:
    /// `(pad + pt, c1)`. The mask is consumed: one mask, one message.
    pub fn from_mask(mask: EncryptionMask, plaintext: &Poly) -> Result<Self, ChannelError> {
        let mut c0 = mask.pad.clone();
        c0.add_assign(plaintext)?;
        Ok(Self {
            c0,
            c1: mask.c1.clone(),
        })
    }

    /// Homomorphic addition: (c0 + c0', c1 + c1').
    pub fn add_assign(&mut self, other: &Self) -> Result<(), ChannelError> {
        self.c0.add_assign(&other.c0)?;
        self.c1.add_assign(&other.c1)?;
        Ok(())
    }

    /// c0.
    pub fn c0(&self) -> &Poly {
        &self.c0
    }

    /// c1.
    pub fn c1(&self) -> &Poly {
        &self.c1
    }
}

/// A real vector encrypted as ⌈len/N⌉ ciphertexts, with the encoding it was
/// made under (vectors are only added when their encodings agree).
#[derive(Clone, Debug, PartialEq)]
pub struct EncryptedVector {
    pub(crate) encoding: EncodingInfo,
    pub(crate) len: usize,
    pub(crate) ciphertexts: Vec<Ciphertext>,
}

impl EncryptedVector {
    /// Encodes `values` with `codec` and encrypts each plaintext with fresh randomness.
    pub fn encrypt(
        params: &Params,
        pk: &CollectivePublicKey,
        codec: &FixedPointCodec,
        values: &[f64],
        rng: &mut Csprng,
    ) -> Result<Self, ChannelError> {
        let ciphertexts = codec
            .encode(values)?
            .iter()
            .map(|pt| Ciphertext::encrypt(params, pk, pt, rng))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            encoding: *codec.info(),
            len: values.len(),
            ciphertexts,
        })
    }

    /// [`Self::encrypt`] under masks made before the values existed
    /// ([`EncryptionMask`]), one per plaintext: `masks` must hold exactly
    /// `codec.plaintext_count(values.len())` of them (else an error naming
    /// both counts, and nothing is encrypted).
    pub fn encrypt_with_masks(
        codec: &FixedPointCodec,
        values: &[f64],
        masks: Vec<EncryptionMask>,
    ) -> Result<Self, ChannelError> {
        let plaintexts = codec.encode(values)?;
        if plaintexts.len() != masks.len() {
            return Err(ChannelError::Mismatch(format!(
                "{} values need {} ciphertexts; {} encryption masks were made",
                values.len(),
                plaintexts.len(),
                masks.len()
            )));
        }
        let ciphertexts = masks
            .into_iter()
            .zip(&plaintexts)
            .map(|(mask, pt)| Ciphertext::from_mask(mask, pt))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            encoding: *codec.info(),
            len: values.len(),
            ciphertexts,
        })
    }

    /// The number of values.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no values.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The encoding (members, bound, fractional bits).
    pub fn encoding(&self) -> &EncodingInfo {
        &self.encoding
    }

    /// The ciphertexts.
    pub fn ciphertexts(&self) -> &[Ciphertext] {
        &self.ciphertexts
    }

    /// Homomorphic addition of a vector of the same length and encoding.
    pub fn add_assign(&mut self, other: &Self) -> Result<(), ChannelError> {
        if self.encoding != other.encoding || self.len != other.len {
            return Err(ChannelError::Mismatch(format!(
                "cannot add an encrypted vector of {} values ({:?}) to one of {} values ({:?})",
                other.len, other.encoding, self.len, self.encoding
            )));
        }
        for (a, b) in self.ciphertexts.iter_mut().zip(&other.ciphertexts) {
            a.add_assign(b)?;
        }
        Ok(())
    }

    /// The sum of several encrypted vectors (the server's aggregation, O(n·N)).
    pub fn sum<'a>(vectors: impl IntoIterator<Item = &'a Self>) -> Result<Self, ChannelError> {
        let mut it = vectors.into_iter();
        let mut acc = it
            .next()
            .ok_or_else(|| ChannelError::Mismatch("nothing to aggregate".into()))?
            .clone();
        for v in it {
            acc.add_assign(v)?;
        }
        Ok(acc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decryption::{CombinedShare, DecryptionShare};
    use crate::test_ceremony::ToyCeremony;

    /// A vector encrypted under masks made before its values (the offline
    /// phase) is, bit for bit, the one `encrypt` makes from the same
    /// randomness, and the members' decryption shares open it to its
    /// values (`c0 + Σ s_i·c1`, an independent check of eq. (15)); the mask's
    /// `c1` is the ciphertext's.
    #[test]
    fn a_vector_encrypted_under_earlier_masks_equals_encrypts_and_decrypts() {
        let ToyCeremony {
            params,
            secrets,
            key,
            mut rng,
            ..
        } = ToyCeremony::new(&["a", "b", "c"], [3; 32], 11);
        let codec = FixedPointCodec::new(&params, 3, 10.0).unwrap();
        // 1,500 values: two ciphertexts of N = 1024 slots.
        let values: Vec<f64> = (0..1500).map(|i| (i as f64 * 0.37).sin() * 9.0).collect();
        let parts = codec.plaintext_count(values.len());
        assert_eq!(parts, 2);
        // Two generators with one seed: the same randomness twice.
        let (mut ahead, mut twin) = (Csprng::from_u128_seed(77), Csprng::from_u128_seed(77));
        let masks: Vec<EncryptionMask> = (0..parts)
            .map(|_| EncryptionMask::sample(&params, &key, &mut ahead).unwrap())
            .collect();
        let c1s: Vec<Poly> = masks.iter().map(|m| m.c1().clone()).collect();
        let v = EncryptedVector::encrypt_with_masks(&codec, &values, masks).unwrap();
        let direct = EncryptedVector::encrypt(&params, &key, &codec, &values, &mut twin).unwrap();
        assert_eq!(v, direct);
        for (c, c1) in v.ciphertexts().iter().zip(&c1s) {
            assert_eq!(c.c1(), c1);
        }
        let shares: Vec<DecryptionShare> = secrets
            .iter()
            .map(|sk| DecryptionShare::generate(&params, sk, &v, &mut rng).unwrap())
            .collect();
        let combined = CombinedShare::sum(&v, &shares.iter().collect::<Vec<_>>()).unwrap();
        let decoded = codec
            .decode(&combined.decrypt(&v).unwrap(), values.len())
            .unwrap();
        let worst = decoded
            .iter()
            .zip(&values)
            .map(|(d, x)| (d - x).abs())
            .fold(0.0, f64::max);
        assert!(worst <= codec.error_bound(), "{worst}");
    }

    /// Masks for another number of ciphertexts than the values need are
    /// refused, naming both counts; a mask's `Debug` shows nothing of it.
    #[test]
    fn masks_of_another_count_are_refused_and_a_mask_prints_nothing() {
        let ToyCeremony {
            params,
            key,
            mut rng,
            ..
        } = ToyCeremony::new(&["a", "b"], [4; 32], 12);
        let codec = FixedPointCodec::new(&params, 2, 1.0).unwrap();
        let masks: Vec<EncryptionMask> = (0..2)
            .map(|_| EncryptionMask::sample(&params, &key, &mut rng).unwrap())
            .collect();
        assert_eq!(format!("{:?}", masks[0]), "EncryptionMask { .. }");
        let err = EncryptedVector::encrypt_with_masks(&codec, &[0.5; 10], masks).unwrap_err();
        assert!(
            err.to_string()
                .contains("10 values need 1 ciphertexts; 2 encryption masks were made"),
            "{err}"
        );
    }
}
