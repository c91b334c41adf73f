//! One accumulator trait for every sum a ceremony or a round adds up one
//! share at a time ([`Aggregate`], as fhe.rs's `Aggregate`), and one
//! decryption share type and one combination across n-of-n and t-of-n
//! ([`AnyDecryptionShare`], [`ShareCombination`]), so that the server and
//! the members do not fork on the ceremony's kind at every use (issue 47,
//! item 4).

use crate::decryption::{CombinedShare, DecryptionShare, ShareCombiner};
use crate::threshold::{AccessStructure, ThresholdDecryptionShare, ThresholdShareCombiner};
use crate::{ChannelError, EncryptedVector, MemberId, Params, WireObject};
use fedhe_ring::Poly;
use std::sync::Arc;

/// An accumulator of shares: each share is added (and a bad one refused,
/// by name) as it comes, so that whoever adds n shares holds one share and
/// the sum, not n of them (issue 16); [`Aggregate::finish`] refuses while
/// a share it needs is missing. The accumulators of key and decryption
/// shares are: [`crate::KeyAggregation`] (public-key shares),
/// [`crate::ShareSum`], [`ShareCombiner`] (n-of-n),
/// [`ThresholdShareCombiner`] (t-of-n) and [`ShareCombination`] (either, as
/// the ceremony makes them).
pub trait Aggregate: Sized {
    /// What is added.
    type Share;
    /// What the shares add up to.
    type Output;
    /// Adds `share`, or refuses it naming what is wrong (nothing is added).
    fn add(&mut self, share: &Self::Share) -> Result<(), ChannelError>;
    /// The aggregate of the shares added; refused while one is missing.
    fn finish(self) -> Result<Self::Output, ChannelError>;
    /// Adds every share of `shares`, then finishes.
    fn aggregate<'s>(
        mut self,
        shares: impl IntoIterator<Item = &'s Self::Share>,
    ) -> Result<Self::Output, ChannelError>
    where
        Self::Share: 's,
    {
        for share in shares {
            self.add(share)?;
        }
        self.finish()
    }
}

/// A decryption share as its ceremony makes it: a member's share of every
/// member's decryption (n-of-n), or a threshold share made for a decrypting
/// set of at least T members (t-of-n).
#[derive(Clone, Debug)]
pub enum AnyDecryptionShare {
    /// n-of-n.
    Full(DecryptionShare),
    /// t-of-n.
    Threshold(ThresholdDecryptionShare),
}

impl AnyDecryptionShare {
    /// Decodes a share of a t-of-n ceremony (`threshold`) or of an n-of-n
    /// one; bytes of the other kind are refused by their envelope.
    pub fn from_bytes(
        params: &Arc<Params>,
        bytes: &[u8],
        threshold: bool,
    ) -> Result<Self, ChannelError> {
        Ok(if threshold {
            Self::Threshold(ThresholdDecryptionShare::from_bytes(params, bytes)?)
        } else {
            Self::Full(DecryptionShare::from_bytes(params, bytes)?)
        })
    }

    /// The member that made it.
    pub fn member(&self) -> &MemberId {
        match self {
            Self::Full(s) => s.member(),
            Self::Threshold(s) => s.member(),
        }
    }

    /// One polynomial per ciphertext of the aggregate it decrypts.
    pub fn polys(&self) -> &[Poly] {
        match self {
            Self::Full(s) => s.polys(),
            Self::Threshold(s) => s.share().polys(),
        }
    }

    /// The decrypting set a threshold share was made for (sorted); `None`
    /// for an n-of-n share.
    pub fn active(&self) -> Option<&[MemberId]> {
        match self {
            Self::Full(_) => None,
            Self::Threshold(s) => Some(s.active()),
        }
    }
}

/// The combination of a round's decryption shares, of the kind its
/// ceremony makes: every member's ([`ShareCombiner`]) or a decrypting set's
/// of at least T ([`ThresholdShareCombiner`]).
#[derive(Debug)]
pub enum ShareCombination {
    /// n-of-n.
    Full(ShareCombiner),
    /// t-of-n.
    Threshold(ThresholdShareCombiner),
}

impl ShareCombination {
    /// Expects shares of `aggregate` from the ceremony's `members`: one
    /// from each (`threshold` `None`), or one from each member of a
    /// decrypting set of at least `threshold` of them.
    pub fn new(
        members: &[MemberId],
        threshold: Option<usize>,
        aggregate: &EncryptedVector,
    ) -> Result<Self, ChannelError> {
        Ok(match threshold {
            None => Self::Full(ShareCombiner::new(members, aggregate)),
            Some(t) => Self::Threshold(ThresholdShareCombiner::new(
                &AccessStructure::new(members, t)?,
                aggregate,
            )),
        })
    }

    /// Decodes a share of the kind this combination takes.
    pub fn decode(
        &self,
        params: &Arc<Params>,
        bytes: &[u8],
    ) -> Result<AnyDecryptionShare, ChannelError> {
        AnyDecryptionShare::from_bytes(params, bytes, matches!(self, Self::Threshold(_)))
    }
}

impl Aggregate for ShareCombination {
    type Share = AnyDecryptionShare;
    type Output = CombinedShare;

    /// Adds `share`; refuses one of the other kind than the ceremony's, and
    /// whatever the combination of its kind refuses.
    fn add(&mut self, share: &AnyDecryptionShare) -> Result<(), ChannelError> {
        match (self, share) {
            (Self::Full(c), AnyDecryptionShare::Full(s)) => c.add(s),
            (Self::Threshold(c), AnyDecryptionShare::Threshold(s)) => c.add(s),
            (_, share) => Err(ChannelError::Mismatch(format!(
                "the decryption share of {} is not of the ceremony's kind (n-of-n or t-of-n)",
                share.member()
            ))),
        }
    }

    fn finish(self) -> Result<CombinedShare, ChannelError> {
        match self {
            Self::Full(c) => c.finish(),
            Self::Threshold(c) => c.finish(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_ceremony::ToyCeremony;
    use crate::threshold::Thresholdizer;
    use crate::{CeremonyId, FixedPointCodec};

    /// The one combination, fed the ceremony's kind of shares, decrypts what
    /// the members encrypted: n-of-n with every member's share, t-of-n with
    /// a decrypting set of T; the same shares decode again from their bytes
    /// by the combination's kind, a share of the other kind is refused
    /// naming its maker, and a missing share is refused at the end.
    #[test]
    fn one_combination_decrypts_either_kind_and_refuses_the_other() {
        let mut c = ToyCeremony::new(&["a", "b", "c"], [7; 32], 11);
        let codec = FixedPointCodec::new(&c.params, 3, 8.0).unwrap();
        let values = [1.5, -2.25, 0.125];
        let aggregate =
            EncryptedVector::encrypt(&c.params, &c.key, &codec, &values, &mut c.rng).unwrap();
        let decode = |combined: CombinedShare| {
            let plain = combined.decrypt(&aggregate).unwrap();
            codec.decode(&plain, values.len()).unwrap()
        };

        // n-of-n: every member's share.
        let full: Vec<AnyDecryptionShare> = c
            .secrets
            .iter()
            .map(|sk| {
                AnyDecryptionShare::Full(
                    DecryptionShare::generate(&c.params, sk, &aggregate, &mut c.rng).unwrap(),
                )
            })
            .collect();
        let every = ShareCombination::new(&c.ids, None, &aggregate).unwrap();
        let bytes: Vec<Vec<u8>> = full
            .iter()
            .map(|s| match s {
                AnyDecryptionShare::Full(s) => s.to_bytes(&c.params),
                AnyDecryptionShare::Threshold(_) => unreachable!(),
            })
            .collect();
        let decoded: Vec<AnyDecryptionShare> = bytes
            .iter()
            .map(|b| every.decode(&c.params, b).unwrap())
            .collect();
        let got = decode(every.aggregate(&decoded).unwrap());
        for (g, v) in got.iter().zip(values) {
            assert!((g - v).abs() < 1e-6, "{got:?}");
        }
        // A missing member's share is refused by name.
        let two = ShareCombination::new(&c.ids, None, &aggregate).unwrap();
        match two.aggregate(&full[..2]) {
            Err(ChannelError::MissingShare(m)) => assert_eq!(m.as_str(), "c"),
            other => panic!("{other:?}"),
        }

        // t-of-n, T = 2: the decrypting set {a, c}.
        let access = AccessStructure::new(&c.ids, 2).unwrap();
        let ceremony = CeremonyId::new("agg").unwrap();
        let thr = Thresholdizer::in_process(
            &c.params, &ceremony, &access, &c.secrets, &c.crs, &c.shares, &mut c.rng,
        )
        .unwrap()
        .secrets;
        let active = vec![c.ids[0].clone(), c.ids[2].clone()];
        let threshold: Vec<AnyDecryptionShare> = [0, 2]
            .iter()
            .map(|&i| {
                AnyDecryptionShare::Threshold(
                    ThresholdDecryptionShare::generate(
                        &c.params, &thr[i], &active, &aggregate, &mut c.rng,
                    )
                    .unwrap(),
                )
            })
            .collect();
        assert_eq!(threshold[1].active(), Some(&active[..]));
        assert_eq!(full[0].active(), None);
        let set = ShareCombination::new(&c.ids, Some(2), &aggregate).unwrap();
        let got = decode(set.aggregate(&threshold).unwrap());
        for (g, v) in got.iter().zip(values) {
            assert!((g - v).abs() < 1e-6, "{got:?}");
        }
        // An n-of-n share in a t-of-n combination, and the reverse, are
        // refused naming the maker; so are its bytes decoded as the other kind.
        let mut set = ShareCombination::new(&c.ids, Some(2), &aggregate).unwrap();
        let err = set.add(&full[1]).unwrap_err().to_string();
        assert!(err.contains('b') && err.contains("kind"), "{err}");
        assert!(set.decode(&c.params, &bytes[1]).is_err());
        let mut every = ShareCombination::new(&c.ids, None, &aggregate).unwrap();
        let err = every.add(&threshold[0]).unwrap_err().to_string();
        assert!(err.contains("of a ") && err.contains("kind"), "{err}");
        // A threshold larger than the ceremony is refused when it is made.
        assert!(ShareCombination::new(&c.ids, Some(4), &aggregate).is_err());
    }
}
