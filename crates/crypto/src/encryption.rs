//! Encryption under the collective public key and homomorphic addition
//! (DESIGN.md §2 steps 2-3; paper 004 eqs. (15)-(18)).

use crate::codec::{EncodingInfo, FixedPointCodec};
use crate::{ChannelError, CollectivePublicKey, Params};
use fedhe_ring::{Csprng, Poly, SmallDistribution};

/// One RLWE ciphertext (c0, c1) of N plaintext slots, coefficient form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ciphertext {
    pub(crate) c0: Poly,
    pub(crate) c1: Poly,
}

impl Ciphertext {
    /// c = (b·u + e0 + pt, a·u + e1) with fresh u ← ternary, e0, e1 ← CBD(η)
    /// for every ciphertext. `plaintext` is the already-scaled Δ·m.
    pub fn encrypt(
        params: &Params,
        pk: &CollectivePublicKey,
        plaintext: &Poly,
        rng: &mut Csprng,
    ) -> Result<Self, ChannelError> {
        let ring = params.ring();
        let error = SmallDistribution::CenteredBinomial {
            eta: params.set().error_eta,
        };
        let u = rng
            .sample_poly(ring, SmallDistribution::Ternary)?
            .into_ntt();
        // u is transformed once; c1 takes over its buffer, c0 a copy.
        let mut c0 = u.clone();
        c0.mul_assign(pk.b_ntt())?;
        rng.add_sample_assign(&mut c0, error)?;
        c0.add_assign(plaintext)?;
        let mut c1 = u;
        c1.mul_assign(pk.crs().a_ntt())?;
        rng.add_sample_assign(&mut c1, error)?;
        Ok(Self { c0, c1 })
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
