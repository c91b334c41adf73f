//! The binary wire format (DESIGN.md §2): an envelope — magic, format version,
//! parameter-set id, object kind, payload length — then a little-endian
//! payload, then a BLAKE3 checksum of everything before it.
//!
//! ```text
//! offset  size  field
//!      0     4  magic "FDHE"
//!      4     2  format version (1)
//!      6     2  parameter-set id
//!      8     2  object kind
//!     10     2  reserved, 0
//!     12     8  payload length L
//!     20     L  payload
//!   20+L    32  BLAKE3(bytes 0 .. 20+L)
//! ```
//!
//! An encrypted vector's payload starts with its encoding: members (u32),
//! bound (f64), then one u32 whose bits 0-7 are the fractional bits f and
//! bits 8-15 the split bits s of a two-limb encoding (0: one limb); the
//! other bits are 0. A one-limb vector is thus byte for byte what it was
//! before two limbs existed, and a decoder of that time refuses a two-limb
//! one (its f would exceed 62).
//!
//! Every decoder bounds-checks lengths before allocating, checks residues
//! `< p_i`, validates identifiers and rejects trailing bytes; none panics on
//! any input (a property test feeds it random and corrupted bytes).

use crate::codec::{EncodingInfo, FixedPointCodec, Limbs};
use crate::share_transport::ThresholdDealing;
use crate::threshold::{AccessStructure, ThresholdSecretShare};
use crate::{
    ChannelError, Ciphertext, CollectivePublicKey, CommonRandomPoly, DecryptionShare,
    EncryptedVector, InsecurePolicy, MemberId, ParameterSet, Params, PublicKeyShare,
    SealedShamirShare, SecretKeyShare, ShamirCommitment, ThresholdDecryptionShare, WireError,
};
use fedhe_ring::{Poly, Representation};
use std::sync::Arc;
use zeroize::Zeroizing;

/// The magic bytes every object starts with.
pub const MAGIC: [u8; 4] = *b"FDHE";
/// The current format version.
pub const FORMAT_VERSION: u16 = 1;
/// Header length in bytes.
pub const HEADER_LEN: usize = 20;
/// Checksum length in bytes.
pub const CHECKSUM_LEN: usize = 32;
/// The largest payload accepted (256 MiB).
pub const MAX_PAYLOAD: u64 = 256 << 20;

/// The kinds of wire object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u16)]
pub enum Kind {
    /// [`PublicKeyShare`].
    PublicKeyShare = 1,
    /// [`CollectivePublicKey`].
    CollectivePublicKey = 2,
    /// [`EncryptedVector`].
    EncryptedVector = 3,
    /// [`DecryptionShare`].
    DecryptionShare = 4,
    /// [`SecretKeyShare`] (key files only; never sent).
    SecretKeyShare = 5,
    /// [`ShamirCommitment`] (t-of-n ceremony, broadcast).
    ShamirCommitment = 6,
    /// [`SealedShamirShare`] (t-of-n ceremony, relayed to its recipient).
    SealedShamirShare = 7,
    /// [`ThresholdDecryptionShare`].
    ThresholdDecryptionShare = 8,
    /// [`ThresholdSecretShare`] (key files only; never sent).
    ThresholdSecretShare = 9,
    /// [`ThresholdDealing`] (t-of-n ceremony: a dealer's commitment and
    /// sealed shares, relayed by the server).
    ThresholdDealing = 10,
    /// [`crate::C1Carries`] (an aggregate's carries, served beside it).
    C1Carries = 11,
}

impl Kind {
    /// The kind with this code.
    pub fn from_code(code: u16) -> Option<Self> {
        [
            Self::PublicKeyShare,
            Self::CollectivePublicKey,
            Self::EncryptedVector,
            Self::DecryptionShare,
            Self::SecretKeyShare,
            Self::ShamirCommitment,
            Self::SealedShamirShare,
            Self::ThresholdDecryptionShare,
            Self::ThresholdSecretShare,
            Self::ThresholdDealing,
            Self::C1Carries,
        ]
        .into_iter()
        .find(|k| *k as u16 == code)
    }

    /// The name of the kind, in kebab case.
    pub fn name(self) -> &'static str {
        match self {
            Self::PublicKeyShare => "public-key-share",
            Self::CollectivePublicKey => "collective-public-key",
            Self::EncryptedVector => "encrypted-vector",
            Self::DecryptionShare => "decryption-share",
            Self::SecretKeyShare => "secret-key-share",
            Self::ShamirCommitment => "shamir-commitment",
            Self::SealedShamirShare => "sealed-shamir-share",
            Self::ThresholdDecryptionShare => "threshold-decryption-share",
            Self::ThresholdSecretShare => "threshold-secret-share",
            Self::ThresholdDealing => "threshold-dealing",
            Self::C1Carries => "c1-carries",
        }
    }
}

/// A bounds-checked little-endian reader.
pub struct Reader<'a> {
    bytes: &'a [u8],
    offset: usize,
}

impl<'a> Reader<'a> {
    fn new(bytes: &'a [u8], offset: usize) -> Self {
        Self { bytes, offset }
    }

    pub(crate) fn take(&mut self, needed: usize) -> Result<&'a [u8], WireError> {
        let available = self.bytes.len() - self.offset.min(self.bytes.len());
        if needed > available {
            return Err(WireError::Truncated {
                offset: self.offset,
                needed,
                available,
            });
        }
        let out = &self.bytes[self.offset..self.offset + needed];
        self.offset += needed;
        Ok(out)
    }

    fn array<const K: usize>(&mut self) -> Result<[u8; K], WireError> {
        let mut a = [0u8; K];
        a.copy_from_slice(self.take(K)?);
        Ok(a)
    }

    pub(crate) fn u8(&mut self) -> Result<u8, WireError> {
        Ok(self.array::<1>()?[0])
    }

    fn u16(&mut self) -> Result<u16, WireError> {
        Ok(u16::from_le_bytes(self.array()?))
    }

    pub(crate) fn u32(&mut self) -> Result<u32, WireError> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    fn u64(&mut self) -> Result<u64, WireError> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    fn f64(&mut self) -> Result<f64, WireError> {
        Ok(f64::from_le_bytes(self.array()?))
    }

    fn remaining(&self) -> usize {
        self.bytes.len().saturating_sub(self.offset)
    }

    fn member(&mut self) -> Result<MemberId, ChannelError> {
        let len = self.u16()? as usize;
        let raw = self.take(len)?;
        let text = std::str::from_utf8(raw).map_err(|_| WireError::InvalidField {
            field: "member id",
            reason: "not UTF-8".into(),
        })?;
        MemberId::new(text).map_err(|e| {
            WireError::InvalidField {
                field: "member id",
                reason: e.to_string(),
            }
            .into()
        })
    }

    /// A count of items of `item_bytes` each, refused if the rest cannot hold them.
    fn count(&mut self, field: &'static str, item_bytes: usize) -> Result<usize, WireError> {
        let count = self.u32()? as usize;
        if count.saturating_mul(item_bytes) > self.remaining() {
            return Err(WireError::InvalidField {
                field,
                reason: format!(
                    "{count} items of {item_bytes} bytes do not fit the {} bytes left",
                    self.remaining()
                ),
            });
        }
        Ok(count)
    }

    fn poly(&mut self, params: &Params, repr: Representation) -> Result<Poly, ChannelError> {
        let values = params.degree() * params.set().moduli.len();
        let raw = self.take(values * 8)?;
        let data: Vec<u64> = raw
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .collect();
        Ok(Poly::from_residues(params.ring(), repr, data)?)
    }

    /// One residue per prime, each reduced.
    fn scalars(&mut self, params: &Params) -> Result<Vec<u64>, ChannelError> {
        params
            .set()
            .moduli
            .iter()
            .map(|&p| {
                let v = self.u64()?;
                if v < p {
                    Ok(v)
                } else {
                    Err(WireError::InvalidField {
                        field: "mask coefficient",
                        reason: format!("residue {v} is not below its prime {p}"),
                    }
                    .into())
                }
            })
            .collect()
    }
}

fn put_member(out: &mut Vec<u8>, m: &MemberId) {
    out.extend_from_slice(&(m.as_str().len() as u16).to_le_bytes());
    out.extend_from_slice(m.as_str().as_bytes());
}

fn put_poly(out: &mut Vec<u8>, p: &Poly) {
    out.reserve(p.residues().len() * 8);
    for v in p.residues() {
        out.extend_from_slice(&v.to_le_bytes());
    }
}

fn poly_bytes(params: &Params) -> usize {
    params.degree() * params.set().moduli.len() * 8
}

/// The length of the wire encoding of an [`EncryptedVector`] of `len` values
/// (envelope included), without encoding one.
pub fn encrypted_vector_len(params: &Params, codec: &FixedPointCodec, len: usize) -> usize {
    HEADER_LEN + CHECKSUM_LEN + 28 + codec.plaintext_count(len) * 2 * poly_bytes(params)
}

/// The length of the wire encoding of `member`'s [`DecryptionShare`] of an
/// aggregate of `len` values (envelope included).
pub fn decryption_share_len(
    params: &Params,
    codec: &FixedPointCodec,
    member: &MemberId,
    len: usize,
) -> usize {
    HEADER_LEN
        + CHECKSUM_LEN
        + 2
        + member.as_str().len()
        + 4
        + codec.plaintext_count(len) * poly_bytes(params)
}

/// The length of the wire encoding of `member`'s [`ThresholdDecryptionShare`]
/// of an aggregate of `len` values for the decrypting set `active`
/// (envelope included).
pub fn threshold_decryption_share_len(
    params: &Params,
    codec: &FixedPointCodec,
    member: &MemberId,
    active: &[MemberId],
    len: usize,
) -> usize {
    decryption_share_len(params, codec, member, len)
        + 4
        + active.iter().map(|m| 2 + m.as_str().len()).sum::<usize>()
}

/// The length of the wire encoding of `dealer`'s full [`ThresholdDealing`]
/// (envelope included) for `members` (every recipient, the dealer included)
/// and threshold `threshold`.
pub fn threshold_dealing_len(
    params: &Params,
    dealer: &MemberId,
    members: &[MemberId],
    threshold: usize,
) -> usize {
    let id = |m: &MemberId| 2 + m.as_str().len();
    let mask_bytes = 8 * params.set().moduli.len();
    let commitment = id(dealer) + 4 + 4 + 32 * members.len() + 4 + threshold * mask_bytes;
    let sealed: usize = members
        .iter()
        .map(|r| id(dealer) + id(r) + 24 + 4 + crate::share_transport::sealed_len(params))
        .sum();
    HEADER_LEN + CHECKSUM_LEN + commitment + 4 + sealed
}

/// The length of the wire encoding of `member`'s [`PublicKeyShare`]
/// (envelope included).
pub fn public_key_share_len(params: &Params, member: &MemberId) -> usize {
    HEADER_LEN + CHECKSUM_LEN + 2 + member.as_str().len() + 32 + poly_bytes(params)
}

/// A type with a wire encoding.
pub trait WireObject: Sized {
    /// Its kind.
    const KIND: Kind;

    /// Appends the payload.
    fn encode_payload(&self, out: &mut Vec<u8>);

    /// Decodes the payload (the envelope has been checked).
    fn decode_payload(params: &Arc<Params>, reader: &mut Reader<'_>) -> Result<Self, ChannelError>;

    /// The full envelope.
    fn to_bytes(&self, params: &Params) -> Vec<u8> {
        let mut payload = Vec::new();
        self.encode_payload(&mut payload);
        seal(params.set().id, Self::KIND, &payload)
    }

    /// Decodes an envelope of this kind made for these parameters.
    fn from_bytes(params: &Arc<Params>, bytes: &[u8]) -> Result<Self, ChannelError> {
        let envelope = open_expected(bytes, Self::KIND, params)?;
        let mut reader = Reader::new(envelope.payload, 0);
        let object = Self::decode_payload(params, &mut reader)?;
        if reader.remaining() != 0 {
            return Err(WireError::TrailingBytes(reader.remaining()).into());
        }
        Ok(object)
    }
}

fn seal(params_id: u16, kind: Kind, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len() + CHECKSUM_LEN);
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&params_id.to_le_bytes());
    out.extend_from_slice(&(kind as u16).to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(payload);
    let digest = blake3::hash(&out);
    out.extend_from_slice(digest.as_bytes());
    out
}

/// A checked envelope.
struct Envelope<'a> {
    params_id: u16,
    kind: u16,
    payload: &'a [u8],
}

fn open(bytes: &[u8]) -> Result<Envelope<'_>, WireError> {
    let mut r = Reader::new(bytes, 0);
    if r.array::<4>()? != MAGIC {
        return Err(WireError::BadMagic);
    }
    let version = r.u16()?;
    if version != FORMAT_VERSION {
        return Err(WireError::UnsupportedVersion(version));
    }
    let params_id = r.u16()?;
    let kind = r.u16()?;
    let reserved = r.u16()?;
    if reserved != 0 {
        return Err(WireError::InvalidField {
            field: "reserved",
            reason: format!("must be 0, is {reserved}"),
        });
    }
    let declared = r.u64()?;
    let actual = bytes.len().saturating_sub(HEADER_LEN + CHECKSUM_LEN) as u64;
    if declared > MAX_PAYLOAD || declared != actual || bytes.len() < HEADER_LEN + CHECKSUM_LEN {
        return Err(WireError::LengthMismatch { declared, actual });
    }
    let body_end = HEADER_LEN + declared as usize;
    if blake3::hash(&bytes[..body_end]).as_bytes() != &bytes[body_end..] {
        return Err(WireError::Checksum);
    }
    Ok(Envelope {
        params_id,
        kind,
        payload: &bytes[HEADER_LEN..body_end],
    })
}

/// Opens an envelope and checks it holds `kind` for these parameters.
fn open_expected<'a>(
    bytes: &'a [u8],
    kind: Kind,
    params: &Params,
) -> Result<Envelope<'a>, WireError> {
    let envelope = open(bytes)?;
    if envelope.kind != kind as u16 {
        return Err(WireError::UnexpectedKind {
            found: envelope.kind,
            expected: kind.name(),
        });
    }
    if envelope.params_id != params.set().id {
        return Err(WireError::ParameterSetMismatch {
            found: envelope.params_id,
            expected: params.set().id,
        });
    }
    Ok(envelope)
}

impl WireObject for PublicKeyShare {
    const KIND: Kind = Kind::PublicKeyShare;

    fn encode_payload(&self, out: &mut Vec<u8>) {
        put_member(out, self.member());
        out.extend_from_slice(self.crs_seed());
        put_poly(out, self.b());
    }

    fn decode_payload(params: &Arc<Params>, r: &mut Reader<'_>) -> Result<Self, ChannelError> {
        let member = r.member()?;
        let seed = r.array::<32>()?;
        let b = r.poly(params, Representation::Coefficient)?;
        Ok(Self::from_parts(member, seed, b))
    }
}

impl WireObject for CollectivePublicKey {
    const KIND: Kind = Kind::CollectivePublicKey;

    fn encode_payload(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.crs().seed());
        out.extend_from_slice(&(self.members().len() as u32).to_le_bytes());
        for m in self.members() {
            put_member(out, m);
        }
        put_poly(out, &self.b());
    }

    fn decode_payload(params: &Arc<Params>, r: &mut Reader<'_>) -> Result<Self, ChannelError> {
        let seed = r.array::<32>()?;
        let count = r.count("member count", 3)?;
        let members = (0..count)
            .map(|_| r.member())
            .collect::<Result<Vec<_>, _>>()?;
        if members.is_empty() || members.windows(2).any(|w| w[0] >= w[1]) {
            return Err(WireError::InvalidField {
                field: "members",
                reason: "must be non-empty, sorted and distinct".into(),
            }
            .into());
        }
        let b = r.poly(params, Representation::Coefficient)?;
        let crs = CommonRandomPoly::from_seed(params, seed);
        Ok(Self::from_parts(members, crs, b.into_ntt()))
    }
}

impl WireObject for EncryptedVector {
    const KIND: Kind = Kind::EncryptedVector;

    fn encode_payload(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.encoding.members.to_le_bytes());
        out.extend_from_slice(&self.encoding.bound.to_le_bytes());
        let split = match self.encoding.limbs {
            Limbs::One => 0,
            Limbs::Two { split_bits } => split_bits,
        };
        out.extend_from_slice(&(self.encoding.fractional_bits | split << 8).to_le_bytes());
        out.extend_from_slice(&(self.len as u64).to_le_bytes());
        out.extend_from_slice(&(self.ciphertexts.len() as u32).to_le_bytes());
        for ct in &self.ciphertexts {
            put_poly(out, &ct.c0);
            put_poly(out, &ct.c1);
        }
    }

    fn decode_payload(params: &Arc<Params>, r: &mut Reader<'_>) -> Result<Self, ChannelError> {
        let members = r.u32()?;
        let bound = r.f64()?;
        let bits = r.u32()?;
        if bits >> 16 != 0 {
            return Err(WireError::InvalidField {
                field: "encoding",
                reason: format!("bits 16-31 of the fractional-bits word must be 0, got {bits:#x}"),
            }
            .into());
        }
        let encoding = EncodingInfo {
            members,
            bound,
            fractional_bits: bits & 0xff,
            limbs: match bits >> 8 {
                0 => Limbs::One,
                split_bits => Limbs::Two { split_bits },
            },
        };
        let codec =
            FixedPointCodec::from_info(params, &encoding).map_err(|e| WireError::InvalidField {
                field: "encoding",
                reason: e.to_string(),
            })?;
        let len = r.u64()?;
        let count = r.count("ciphertext count", 2 * poly_bytes(params))?;
        // len is bounded before it is multiplied by the slots per value.
        let expected = (len <= u32::MAX as u64).then(|| codec.plaintext_count(len as usize));
        if expected != Some(count) {
            let expected = expected.map_or("at most 2^32 - 1 values".into(), |e| e.to_string());
            return Err(WireError::InvalidField {
                field: "ciphertext count",
                reason: format!("{count} ciphertexts for {len} values (expected {expected})"),
            }
            .into());
        }
        let ciphertexts = (0..count)
            .map(|_| {
                Ok(Ciphertext {
                    c0: r.poly(params, Representation::Coefficient)?,
                    c1: r.poly(params, Representation::Coefficient)?,
                })
            })
            .collect::<Result<Vec<_>, ChannelError>>()?;
        Ok(Self {
            encoding,
            len: len as usize,
            ciphertexts,
        })
    }
}

impl WireObject for DecryptionShare {
    const KIND: Kind = Kind::DecryptionShare;

    fn encode_payload(&self, out: &mut Vec<u8>) {
        put_member(out, &self.member);
        out.extend_from_slice(&(self.polys.len() as u32).to_le_bytes());
        for p in &self.polys {
            put_poly(out, p);
        }
    }

    fn decode_payload(params: &Arc<Params>, r: &mut Reader<'_>) -> Result<Self, ChannelError> {
        let member = r.member()?;
        let count = r.count("polynomial count", poly_bytes(params))?;
        if count == 0 {
            return Err(WireError::InvalidField {
                field: "polynomial count",
                reason: "a share holds at least one polynomial".into(),
            }
            .into());
        }
        let polys = (0..count)
            .map(|_| r.poly(params, Representation::Coefficient))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self { member, polys })
    }
}

/// Members, sorted and distinct (a decrypting set).
fn members_sorted(r: &mut Reader<'_>, field: &'static str) -> Result<Vec<MemberId>, ChannelError> {
    let count = r.count(field, 3)?;
    let members = (0..count)
        .map(|_| r.member())
        .collect::<Result<Vec<_>, _>>()?;
    if members.is_empty() || members.windows(2).any(|w| w[0] >= w[1]) {
        return Err(WireError::InvalidField {
            field,
            reason: "must be non-empty, sorted and distinct".into(),
        }
        .into());
    }
    Ok(members)
}

impl WireObject for ShamirCommitment {
    const KIND: Kind = Kind::ShamirCommitment;

    fn encode_payload(&self, out: &mut Vec<u8>) {
        put_member(out, &self.dealer);
        out.extend_from_slice(&(self.threshold as u32).to_le_bytes());
        out.extend_from_slice(&(self.digests.len() as u32).to_le_bytes());
        for d in &self.digests {
            out.extend_from_slice(d);
        }
        out.extend_from_slice(&(self.masked.len() as u32).to_le_bytes());
        for r in self.masked.iter().flatten() {
            out.extend_from_slice(&r.to_le_bytes());
        }
    }

    fn decode_payload(params: &Arc<Params>, r: &mut Reader<'_>) -> Result<Self, ChannelError> {
        let dealer = r.member()?;
        let threshold = r.u32()? as usize;
        let digest_count = r.count("digest count", 32)?;
        let digests = (0..digest_count)
            .map(|_| r.array::<32>())
            .collect::<Result<Vec<_>, _>>()?;
        let moduli = &params.set().moduli;
        let mask_count = r.count("mask coefficient count", 8 * moduli.len())?;
        if threshold == 0 || mask_count != threshold || digest_count < threshold {
            return Err(WireError::InvalidField {
                field: "threshold",
                reason: format!(
                    "threshold {threshold} with {mask_count} mask coefficients and {digest_count} digests"
                ),
            }
            .into());
        }
        let masked = (0..mask_count)
            .map(|_| r.scalars(params))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            dealer,
            threshold,
            digests,
            masked,
        })
    }
}

impl WireObject for SealedShamirShare {
    const KIND: Kind = Kind::SealedShamirShare;

    fn encode_payload(&self, out: &mut Vec<u8>) {
        put_member(out, &self.dealer);
        put_member(out, &self.recipient);
        out.extend_from_slice(&self.nonce);
        out.extend_from_slice(&(self.ciphertext.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.ciphertext);
    }

    fn decode_payload(params: &Arc<Params>, r: &mut Reader<'_>) -> Result<Self, ChannelError> {
        let dealer = r.member()?;
        let recipient = r.member()?;
        let nonce = r.array::<24>()?;
        let len = r.count("ciphertext length", 1)?;
        let expected = crate::share_transport::sealed_len(params);
        if len != expected {
            return Err(WireError::InvalidField {
                field: "ciphertext length",
                reason: format!("{len} bytes, a sealed share has {expected}"),
            }
            .into());
        }
        let ciphertext = r.take(len)?.to_vec();
        Ok(Self {
            dealer,
            recipient,
            nonce,
            ciphertext,
        })
    }
}

impl WireObject for ThresholdDecryptionShare {
    const KIND: Kind = Kind::ThresholdDecryptionShare;

    fn encode_payload(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&(self.active.len() as u32).to_le_bytes());
        for m in &self.active {
            put_member(out, m);
        }
        self.share.encode_payload(out);
    }

    fn decode_payload(params: &Arc<Params>, r: &mut Reader<'_>) -> Result<Self, ChannelError> {
        let active = members_sorted(r, "decrypting set")?;
        let share = DecryptionShare::decode_payload(params, r)?;
        if active.binary_search(&share.member).is_err() {
            return Err(WireError::InvalidField {
                field: "member",
                reason: format!("{} is not in the decrypting set", share.member),
            }
            .into());
        }
        Ok(Self { active, share })
    }
}

impl SecretKeyShare {
    /// The key-file encoding (an envelope of kind `secret-key-share`), in a
    /// buffer wiped on drop.
    pub fn to_key_bytes(&self, params: &Params) -> Zeroizing<Vec<u8>> {
        let mut payload = Zeroizing::new(Vec::new());
        put_member(&mut payload, self.member());
        put_poly(&mut payload, self.s_ntt());
        Zeroizing::new(seal(params.set().id, Kind::SecretKeyShare, &payload))
    }

    /// Decodes a key file.
    pub fn from_key_bytes(params: &Arc<Params>, bytes: &[u8]) -> Result<Self, ChannelError> {
        let envelope = open_expected(bytes, Kind::SecretKeyShare, params)?;
        let mut r = Reader::new(envelope.payload, 0);
        let member = r.member()?;
        let s = r.poly(params, Representation::Ntt)?;
        if r.remaining() != 0 {
            return Err(WireError::TrailingBytes(r.remaining()).into());
        }
        Ok(Self::from_parts(member, s))
    }
}

impl ThresholdSecretShare {
    /// The key-file encoding (an envelope of kind `threshold-secret-share`:
    /// the member, T, the sorted members, s'_j), in a buffer wiped on drop.
    pub fn to_key_bytes(&self, params: &Params) -> Zeroizing<Vec<u8>> {
        let mut payload = Zeroizing::new(Vec::new());
        put_member(&mut payload, self.member());
        payload.extend_from_slice(&(self.access().threshold() as u32).to_le_bytes());
        payload.extend_from_slice(&(self.access().members().len() as u32).to_le_bytes());
        for m in self.access().members() {
            put_member(&mut payload, m);
        }
        put_poly(&mut payload, self.s_ntt());
        Zeroizing::new(seal(params.set().id, Kind::ThresholdSecretShare, &payload))
    }

    /// Decodes a key file, validating the access structure and that the
    /// member is in it.
    pub fn from_key_bytes(params: &Arc<Params>, bytes: &[u8]) -> Result<Self, ChannelError> {
        let envelope = open_expected(bytes, Kind::ThresholdSecretShare, params)?;
        let mut r = Reader::new(envelope.payload, 0);
        let member = r.member()?;
        let threshold = r.u32()? as usize;
        let members = members_sorted(&mut r, "members")?;
        let s = Zeroizing::new(r.poly(params, Representation::Ntt)?);
        if r.remaining() != 0 {
            return Err(WireError::TrailingBytes(r.remaining()).into());
        }
        let access = AccessStructure::new(&members, threshold)?;
        access.point(&member)?;
        Ok(Self::from_parts(member, access, (*s).clone()))
    }
}

impl WireObject for ThresholdDealing {
    const KIND: Kind = Kind::ThresholdDealing;

    fn encode_payload(&self, out: &mut Vec<u8>) {
        self.commitment.encode_payload(out);
        out.extend_from_slice(&(self.sealed.len() as u32).to_le_bytes());
        for s in &self.sealed {
            s.encode_payload(out);
        }
    }

    fn decode_payload(params: &Arc<Params>, r: &mut Reader<'_>) -> Result<Self, ChannelError> {
        let commitment = ShamirCommitment::decode_payload(params, r)?;
        let count = r.count(
            "sealed share count",
            crate::share_transport::sealed_len(params),
        )?;
        let sealed = (0..count)
            .map(|_| SealedShamirShare::decode_payload(params, r))
            .collect::<Result<Vec<_>, _>>()?;
        Self::new(commitment, sealed)
    }
}

/// What `fedhe inspect` reports about a wire object.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Description {
    /// Kind name.
    pub kind: &'static str,
    /// Parameter-set name.
    pub params: &'static str,
    /// Security level of the set (0 = below 128 bits, insecure).
    pub security_bits: u32,
    /// Format version.
    pub format_version: u16,
    /// Total bytes.
    pub bytes: usize,
    /// Payload bytes.
    pub payload_bytes: usize,
    /// First 16 bytes of BLAKE3 of the whole object, hex.
    pub fingerprint: String,
    /// Kind-specific facts (member, counts, encoding).
    pub details: Vec<(String, String)>,
}

/// Fully decodes any wire object (of any known parameter set, including the
/// toy set: decoding is harmless) and describes it.
pub fn inspect(bytes: &[u8]) -> Result<Description, ChannelError> {
    let envelope = open(bytes)?;
    let set = ParameterSet::by_id(envelope.params_id)?;
    let params = set.validate(InsecurePolicy::Allow)?;
    let kind = Kind::from_code(envelope.kind).ok_or(WireError::UnexpectedKind {
        found: envelope.kind,
        expected: "a known kind",
    })?;
    let mut details: Vec<(String, String)> = Vec::new();
    let mut d = |k: &str, v: String| details.push((k.to_string(), v));
    match kind {
        Kind::PublicKeyShare => {
            let o = PublicKeyShare::from_bytes(&params, bytes)?;
            d("member", o.member().to_string());
            d("crs_seed", hex(&o.crs_seed()[..8]));
        }
        Kind::CollectivePublicKey => {
            let o = CollectivePublicKey::from_bytes(&params, bytes)?;
            d("members", o.members().len().to_string());
            d("crs_seed", hex(&o.crs().seed()[..8]));
        }
        Kind::EncryptedVector => {
            let o = EncryptedVector::from_bytes(&params, bytes)?;
            d("values", o.len().to_string());
            d("ciphertexts", o.ciphertexts().len().to_string());
            d("encoding_members", o.encoding().members.to_string());
            d("encoding_bound", o.encoding().bound.to_string());
            d("fractional_bits", o.encoding().fractional_bits.to_string());
            if let Limbs::Two { split_bits } = o.encoding().limbs {
                d("split_bits", split_bits.to_string());
            }
        }
        Kind::DecryptionShare => {
            let o = DecryptionShare::from_bytes(&params, bytes)?;
            d("member", o.member().to_string());
            d("polynomials", o.polys().len().to_string());
        }
        Kind::SecretKeyShare => {
            let o = SecretKeyShare::from_key_bytes(&params, bytes)?;
            d("member", o.member().to_string());
        }
        Kind::ShamirCommitment => {
            let o = ShamirCommitment::from_bytes(&params, bytes)?;
            d("dealer", o.dealer.to_string());
            d("threshold", o.threshold.to_string());
            d("members", o.digests.len().to_string());
        }
        Kind::SealedShamirShare => {
            let o = SealedShamirShare::from_bytes(&params, bytes)?;
            d("dealer", o.dealer.to_string());
            d("recipient", o.recipient.to_string());
        }
        Kind::ThresholdSecretShare => {
            let o = ThresholdSecretShare::from_key_bytes(&params, bytes)?;
            d("member", o.member().to_string());
            d("threshold", o.access().threshold().to_string());
            d("members", o.access().members().len().to_string());
        }
        Kind::ThresholdDealing => {
            let o = ThresholdDealing::from_bytes(&params, bytes)?;
            d("dealer", o.commitment.dealer.to_string());
            d("threshold", o.commitment.threshold.to_string());
            d("sealed_shares", o.sealed.len().to_string());
        }
        Kind::ThresholdDecryptionShare => {
            let o = ThresholdDecryptionShare::from_bytes(&params, bytes)?;
            d("member", o.member().to_string());
            d("decrypting_members", o.active.len().to_string());
            d("polynomials", o.share.polys().len().to_string());
        }
        Kind::C1Carries => {
            let o = crate::C1Carries::from_bytes(&params, bytes)?;
            let per = params.degree() * params.set().moduli.len();
            d("ciphertexts", (o.counts().len() / per).to_string());
            let max = o.counts().iter().max().copied().unwrap_or(0);
            d("largest_carry", max.to_string());
        }
    }
    Ok(Description {
        kind: kind.name(),
        params: set.name,
        security_bits: set.security_bits(),
        format_version: FORMAT_VERSION,
        bytes: bytes.len(),
        payload_bytes: envelope.payload.len(),
        fingerprint: fingerprint(bytes),
        details,
    })
}

/// The first 16 bytes of BLAKE3 of an object, as hex.
pub fn fingerprint(bytes: &[u8]) -> String {
    hex(&blake3::hash(bytes).as_bytes()[..16])
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
