//! A compact binary encoding of the round's signed lists (issue 16), served
//! instead of JSON when a request's `Accept` names [`COMPACT_LIST`].
//!
//! Every member downloads five lists of n entries a round. In JSON each
//! hash, digest and signature is hex and each entry repeats its field
//! names: about 800 bytes an entry in all at 1,000 members, twice the fixed
//! part (aggregate, combined share, carries). Here the same values are raw
//! bytes behind LEB128 lengths, in a fixed field order, so an entry costs
//! what it holds: the five lists fit in ~330 bytes an entry. The encoding
//! carries exactly the JSON types' values (hex fields as their bytes), so a
//! decoded list is the list the JSON would have given, field for field, and
//! every check downstream is unchanged. JSON stays the default, for people
//! and older clients.
//!
//! Layout: the magic `fhl1`, a byte naming the list, the round's state,
//! the list's own fields, then its entries, each field in declaration
//! order. A string is a length then UTF-8; a hex field is a length then its
//! bytes (a hex field that is not hex cannot be encoded and is an error);
//! an optional field is a byte 0 or 1 then the value; a count is a length.
//! The decoder bounds every length by the bytes left, refuses trailing
//! bytes and non-minimal lengths (so a list has one encoding: decoding
//! then encoding gives the bytes back), and names what was wrong.

use crate::types::{
    CommitmentList, CommittedContribution, ContributionList, DecryptionShareList, RoundState,
    SignedSumDigest, SignedUpload, SumDigestList,
};

/// The media type of the compact encoding (`Accept`, `Content-Type`).
pub const COMPACT_LIST: &str = "application/vnd.fedhe.list";

const MAGIC: &[u8; 4] = b"fhl1";

/// Why a list could not be encoded or decoded.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CompactError {
    /// A field held by the list is not what its type says (encoding).
    #[error("cannot encode {field}: {reason}")]
    Encode {
        /// The field.
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// The bytes are not a compact list of the expected kind (decoding).
    #[error("compact {list} at byte {offset}: {reason}")]
    Decode {
        /// The list being decoded.
        list: &'static str,
        /// Where the decoder stopped.
        offset: usize,
        /// What was wrong.
        reason: String,
    },
}

/// A list with a compact encoding.
pub trait CompactList: Sized {
    /// The list's name in errors.
    const NAME: &'static str;
    /// The byte after the magic naming the list.
    const KIND: u8;
    /// Writes the list's fields after the header.
    fn write(&self, w: &mut Writer) -> Result<(), CompactError>;
    /// Reads them back.
    fn read(r: &mut Reader<'_>) -> Result<Self, CompactError>;

    /// The compact bytes of the list.
    fn to_compact(&self) -> Result<Vec<u8>, CompactError> {
        let mut w = Writer(Vec::with_capacity(64));
        w.0.extend_from_slice(MAGIC);
        w.0.push(Self::KIND);
        self.write(&mut w)?;
        Ok(w.0)
    }

    /// Decodes [`Self::to_compact`]'s bytes: the header, every field, and
    /// no byte after the last.
    fn from_compact(bytes: &[u8]) -> Result<Self, CompactError> {
        let mut r = Reader {
            list: Self::NAME,
            bytes,
            at: 0,
        };
        let magic = r.take(MAGIC.len(), "the magic")?;
        if magic != MAGIC {
            return Err(r.error(format!(
                "starts with {magic:?}, not the magic {MAGIC:?} (is it JSON?)"
            )));
        }
        let kind = r.take(1, "the list kind")?[0];
        if kind != Self::KIND {
            return Err(r.error(format!(
                "is a list of kind {kind}, not {} ({})",
                Self::KIND,
                Self::NAME
            )));
        }
        let list = Self::read(&mut r)?;
        if r.at != bytes.len() {
            return Err(r.error(format!(
                "{} bytes follow the last field",
                bytes.len() - r.at
            )));
        }
        Ok(list)
    }
}

/// The encoder's output.
#[derive(Debug)]
pub struct Writer(Vec<u8>);

impl Writer {
    fn length(&mut self, mut v: u64) {
        loop {
            let low = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                self.0.push(low);
                return;
            }
            self.0.push(low | 0x80);
        }
    }

    fn string(&mut self, s: &str) {
        self.length(s.len() as u64);
        self.0.extend_from_slice(s.as_bytes());
    }

    fn hex(&mut self, field: &'static str, s: &str) -> Result<(), CompactError> {
        let bytes = crate::signing::decode_hex(s).map_err(|e| CompactError::Encode {
            field,
            reason: format!("not hex ({e})"),
        })?;
        self.length(bytes.len() as u64);
        self.0.extend_from_slice(&bytes);
        Ok(())
    }

    fn optional_hex(&mut self, field: &'static str, s: Option<&str>) -> Result<(), CompactError> {
        match s {
            None => {
                self.0.push(0);
                Ok(())
            }
            Some(s) => {
                self.0.push(1);
                self.hex(field, s)
            }
        }
    }

    fn state(&mut self, state: RoundState) {
        self.string(state.as_str());
    }

    fn entries<T>(
        &mut self,
        entries: &[T],
        mut write: impl FnMut(&mut Self, &T) -> Result<(), CompactError>,
    ) -> Result<(), CompactError> {
        self.length(entries.len() as u64);
        entries.iter().try_for_each(|e| write(self, e))
    }
}

/// The decoder's position in untrusted bytes.
#[derive(Debug)]
pub struct Reader<'a> {
    list: &'static str,
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn error(&self, reason: String) -> CompactError {
        CompactError::Decode {
            list: self.list,
            offset: self.at,
            reason,
        }
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], CompactError> {
        let left = self.bytes.len() - self.at;
        if n > left {
            return Err(self.error(format!("{what} needs {n} bytes, {left} are left")));
        }
        let out = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(out)
    }

    fn length(&mut self, what: &str) -> Result<u64, CompactError> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.take(1, what)?[0];
            let bits = u64::from(b & 0x7f);
            if shift == 63 && bits > 1 {
                return Err(self.error(format!("{what}: the length overflows 64 bits")));
            }
            v |= bits << shift;
            if b & 0x80 == 0 {
                // One encoding per value: a list has exactly one byte
                // string, so its bytes can be compared and hashed.
                if b == 0 && shift > 0 {
                    return Err(self.error(format!("{what}: the length is not minimally encoded")));
                }
                return Ok(v);
            }
        }
        Err(self.error(format!("{what}: the length overflows 64 bits")))
    }

    /// A length that must fit in the bytes left (each counted item takes at
    /// least `min_item` bytes), so no allocation exceeds the input.
    fn bounded(&mut self, what: &str, min_item: usize) -> Result<usize, CompactError> {
        let n = self.length(what)?;
        let left = (self.bytes.len() - self.at) as u64;
        if n.saturating_mul(min_item.max(1) as u64) > left {
            return Err(self.error(format!(
                "{what} claims {n} items of at least {min_item} bytes, {left} bytes are left"
            )));
        }
        Ok(n as usize)
    }

    fn string(&mut self, what: &str) -> Result<String, CompactError> {
        let n = self.bounded(what, 1)?;
        let raw = self.take(n, what)?;
        String::from_utf8(raw.to_vec()).map_err(|_| self.error(format!("{what} is not UTF-8")))
    }

    fn hex(&mut self, what: &str) -> Result<String, CompactError> {
        let n = self.bounded(what, 1)?;
        Ok(hex::encode(self.take(n, what)?))
    }

    fn optional_hex(&mut self, what: &str) -> Result<Option<String>, CompactError> {
        match self.take(1, what)?[0] {
            0 => Ok(None),
            1 => self.hex(what).map(Some),
            b => Err(self.error(format!("{what}: presence byte {b}, not 0 or 1"))),
        }
    }

    fn u64(&mut self, what: &str) -> Result<u64, CompactError> {
        self.length(what)
    }

    fn state(&mut self) -> Result<RoundState, CompactError> {
        let s = self.string("the round state")?;
        RoundState::parse(&s).ok_or_else(|| self.error(format!("{s:?} is not a round state")))
    }

    /// A counted sequence whose entries take at least `min_item` bytes each.
    fn entries<T>(
        &mut self,
        what: &str,
        min_item: usize,
        mut read: impl FnMut(&mut Self) -> Result<T, CompactError>,
    ) -> Result<Vec<T>, CompactError> {
        let n = self.bounded(what, min_item)?;
        (0..n).map(|_| read(self)).collect()
    }
}

fn write_upload(w: &mut Writer, u: &SignedUpload) -> Result<(), CompactError> {
    w.string(&u.member);
    w.hex("an upload's hash", &u.hash)?;
    w.hex("an upload's signature", &u.signature)
}

fn read_upload(r: &mut Reader<'_>) -> Result<SignedUpload, CompactError> {
    Ok(SignedUpload {
        member: r.string("an entry's member")?,
        hash: r.hex("an upload's hash")?,
        signature: r.hex("an upload's signature")?,
    })
}

/// member, hash and signature: three lengths at least.
const MIN_UPLOAD: usize = 3;

/// The layout the contribution and decryption-share lists share: the state,
/// the optional aggregate hash, then the signed uploads.
fn write_upload_list(
    w: &mut Writer,
    state: RoundState,
    aggregate_hash: Option<&str>,
    uploads: &[SignedUpload],
) -> Result<(), CompactError> {
    w.state(state);
    w.optional_hex("the aggregate hash", aggregate_hash)?;
    w.entries(uploads, write_upload)
}

/// Reads [`write_upload_list`]'s layout; `what` names the uploads in errors.
fn read_upload_list(
    r: &mut Reader<'_>,
    what: &str,
) -> Result<(RoundState, Option<String>, Vec<SignedUpload>), CompactError> {
    let state = r.state()?;
    let aggregate_hash = r.optional_hex("the aggregate hash")?;
    let uploads = r.entries(what, MIN_UPLOAD, read_upload)?;
    Ok((state, aggregate_hash, uploads))
}

impl CompactList for ContributionList {
    const NAME: &'static str = "contribution list";
    const KIND: u8 = 1;

    fn write(&self, w: &mut Writer) -> Result<(), CompactError> {
        write_upload_list(
            w,
            self.state,
            self.aggregate_hash.as_deref(),
            &self.contributions,
        )
    }

    fn read(r: &mut Reader<'_>) -> Result<Self, CompactError> {
        let (state, aggregate_hash, contributions) = read_upload_list(r, "the contributions")?;
        Ok(Self {
            state,
            contributions,
            aggregate_hash,
        })
    }
}

impl CompactList for DecryptionShareList {
    const NAME: &'static str = "decryption-share list";
    const KIND: u8 = 2;

    fn write(&self, w: &mut Writer) -> Result<(), CompactError> {
        write_upload_list(w, self.state, self.aggregate_hash.as_deref(), &self.shares)
    }

    fn read(r: &mut Reader<'_>) -> Result<Self, CompactError> {
        let (state, aggregate_hash, shares) = read_upload_list(r, "the decryption shares")?;
        Ok(Self {
            state,
            shares,
            aggregate_hash,
        })
    }
}

impl CompactList for SumDigestList {
    const NAME: &'static str = "digest list";
    const KIND: u8 = 3;

    fn write(&self, w: &mut Writer) -> Result<(), CompactError> {
        w.state(self.state);
        w.optional_hex("the aggregate hash", self.aggregate_hash.as_deref())?;
        w.entries(&self.digests, |w, d| {
            w.string(&d.member);
            w.hex("a digest", &d.digest)?;
            w.hex("a digest's signature", &d.signature)
        })
    }

    fn read(r: &mut Reader<'_>) -> Result<Self, CompactError> {
        let state = r.state()?;
        let aggregate_hash = r.optional_hex("the aggregate hash")?;
        let digests = r.entries("the digests", 3, |r| {
            Ok(SignedSumDigest {
                member: r.string("an entry's member")?,
                digest: r.hex("a digest")?,
                signature: r.hex("a digest's signature")?,
            })
        })?;
        Ok(Self {
            state,
            digests,
            aggregate_hash,
        })
    }
}

impl CompactList for CommitmentList {
    const NAME: &'static str = "commitment list";
    const KIND: u8 = 4;

    fn write(&self, w: &mut Writer) -> Result<(), CompactError> {
        w.state(self.state);
        match self.values {
            None => w.0.push(0),
            Some(v) => {
                w.0.push(1);
                w.length(v);
            }
        }
        w.optional_hex("the list hash", self.list_hash.as_deref())?;
        w.entries(&self.commitments, |w, c| {
            w.string(&c.member);
            w.hex("a commitment's hash", &c.hash)?;
            w.length(c.values);
            w.hex("a commitment's c1 commitment hash", &c.c1_commitment_hash)?;
            w.hex("a commitment's signature", &c.signature)
        })
    }

    fn read(r: &mut Reader<'_>) -> Result<Self, CompactError> {
        let state = r.state()?;
        let values = match r.take(1, "the list's value count")?[0] {
            0 => None,
            1 => Some(r.u64("the list's value count")?),
            b => {
                return Err(r.error(format!(
                    "the list's value count: presence byte {b}, not 0 or 1"
                )))
            }
        };
        let list_hash = r.optional_hex("the list hash")?;
        let commitments = r.entries("the commitments", 5, |r| {
            Ok(CommittedContribution {
                member: r.string("an entry's member")?,
                hash: r.hex("a commitment's hash")?,
                values: r.u64("a commitment's value count")?,
                c1_commitment_hash: r.hex("a commitment's c1 commitment hash")?,
                signature: r.hex("a commitment's signature")?,
            })
        })?;
        Ok(Self {
            state,
            values,
            commitments,
            list_hash,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(b: u8) -> String {
        hex::encode([b; 32])
    }

    fn contributions() -> ContributionList {
        ContributionList {
            state: RoundState::Decrypting,
            contributions: vec![
                SignedUpload {
                    member: "alpha".into(),
                    hash: h(1),
                    signature: hex::encode([7u8; 64]),
                },
                SignedUpload {
                    member: "beta".into(),
                    hash: h(2),
                    signature: String::new(),
                },
            ],
            aggregate_hash: Some(h(3)),
        }
    }

    fn commitments() -> CommitmentList {
        CommitmentList {
            state: RoundState::Collecting,
            values: Some(300),
            commitments: vec![CommittedContribution {
                member: "m0001".into(),
                hash: h(4),
                values: 300,
                c1_commitment_hash: String::new(),
                signature: hex::encode([9u8; 64]),
            }],
            list_hash: Some(h(5)),
        }
    }

    #[test]
    fn every_list_decodes_to_the_value_its_json_gives() {
        // The reference is the JSON encoding: the compact bytes must carry
        // the same list, field for field.
        fn same<T>(list: &T)
        where
            T: CompactList
                + serde::Serialize
                + serde::de::DeserializeOwned
                + PartialEq
                + std::fmt::Debug,
        {
            let via_json: T = serde_json::from_slice(&serde_json::to_vec(list).unwrap()).unwrap();
            let via_compact = T::from_compact(&list.to_compact().unwrap()).unwrap();
            assert_eq!(via_compact, via_json);
        }
        same(&contributions());
        same(&DecryptionShareList {
            state: RoundState::Done,
            shares: contributions().contributions,
            aggregate_hash: None,
        });
        same(&SumDigestList {
            state: RoundState::Failed,
            digests: vec![SignedSumDigest {
                member: "gamma".into(),
                digest: hex::encode([0xabu8; 64]),
                signature: hex::encode([1u8; 64]),
            }],
            aggregate_hash: Some(h(6)),
        });
        same(&commitments());
        same(&CommitmentList {
            state: RoundState::Committing,
            values: None,
            commitments: vec![],
            list_hash: None,
        });
    }

    #[test]
    fn the_layout_is_the_documented_one_byte_for_byte() {
        // Written out by hand from the module docs, not by the encoder.
        let list = ContributionList {
            state: RoundState::Done,
            contributions: vec![SignedUpload {
                member: "ab".into(),
                hash: "0102".into(),
                signature: String::new(),
            }],
            aggregate_hash: None,
        };
        let mut expected = b"fhl1\x01".to_vec();
        expected.push(4);
        expected.extend_from_slice(b"done");
        expected.extend_from_slice(&[0, 1, 2, b'a', b'b', 2, 1, 2, 0]);
        assert_eq!(list.to_compact().unwrap(), expected);
        // A length of 300 is two LEB128 bytes.
        let mut w = Writer(Vec::new());
        w.length(300);
        assert_eq!(w.0, vec![0xac, 0x02]);
    }

    #[test]
    fn an_entry_costs_what_it_holds() {
        // A 1,000-member round's contribution entry without its signature:
        // a 5-byte member id and a 32-byte hash, with three length bytes.
        let one = ContributionList {
            contributions: vec![contributions().contributions[1].clone()],
            ..contributions()
        };
        let none = ContributionList {
            contributions: vec![],
            ..contributions()
        };
        let per_entry = one.to_compact().unwrap().len() - none.to_compact().unwrap().len();
        assert_eq!(per_entry, 4 + 32 + 3);
        let json =
            serde_json::to_vec(&one).unwrap().len() - serde_json::to_vec(&none).unwrap().len();
        assert!(json > 2 * per_entry, "json {json} vs compact {per_entry}");
    }

    #[test]
    fn truncated_or_altered_bytes_are_refused_naming_what_was_wrong() {
        let bytes = commitments().to_compact().unwrap();
        // Every strict prefix fails with an error, never a panic.
        for cut in 0..bytes.len() {
            let err = CommitmentList::from_compact(&bytes[..cut]).unwrap_err();
            assert!(matches!(err, CompactError::Decode { .. }), "{cut}: {err}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(CommitmentList::from_compact(&longer)
            .unwrap_err()
            .to_string()
            .contains("1 bytes follow the last field"));
        // Another list's bytes, JSON, a bad state, a huge count.
        let err = ContributionList::from_compact(&bytes)
            .unwrap_err()
            .to_string();
        assert!(err.contains("kind 4, not 1"), "{err}");
        let err = ContributionList::from_compact(b"{\"state\":\"done\"}")
            .unwrap_err()
            .to_string();
        assert!(err.contains("is it JSON?"), "{err}");
        let mut bad_state = b"fhl1\x01\x04dune".to_vec();
        bad_state.push(0);
        let err = ContributionList::from_compact(&bad_state)
            .unwrap_err()
            .to_string();
        assert!(err.contains("\"dune\" is not a round state"), "{err}");
        let mut huge = b"fhl1\x01\x04done\x00".to_vec();
        huge.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x0f]);
        let err = ContributionList::from_compact(&huge)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("the contributions claims 4294967295 items"),
            "{err}"
        );
        let mut padded = b"fhl1\x01\x04done\x00".to_vec();
        padded.extend_from_slice(&[0x80, 0x00]);
        let err = ContributionList::from_compact(&padded)
            .unwrap_err()
            .to_string();
        assert!(err.contains("not minimally encoded"), "{err}");
        let mut overflow = b"fhl1\x01\x04done\x00".to_vec();
        overflow.extend_from_slice(&[0xff; 11]);
        let err = ContributionList::from_compact(&overflow)
            .unwrap_err()
            .to_string();
        assert!(err.contains("overflows 64 bits"), "{err}");
    }

    #[test]
    fn a_field_that_is_not_hex_is_an_encoding_error_naming_it() {
        let mut list = contributions();
        list.contributions[0].hash = "xyz".into();
        let err = list.to_compact().unwrap_err();
        assert!(
            matches!(
                err,
                CompactError::Encode {
                    field: "an upload's hash",
                    ..
                }
            ),
            "{err}"
        );
    }
}
