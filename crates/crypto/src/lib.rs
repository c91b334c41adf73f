//! `fedhe-crypto`: the encrypted-sum channel.
//!
//! Multiparty RLWE, additive only (DESIGN.md §2; paper 004 eqs. (1), (14)-(18);
//! Mouchet et al.; Lattigo `multiparty`). One protocol per module, types named
//! after the protocol:
//!
//! | step | module | types |
//! | --- | --- | --- |
//! | parameters | [`params`] | [`ParameterSet`], [`Params`] |
//! | 1. ceremony | [`crs`], [`public_key`] | [`CommonRandomPoly`], [`SecretKeyShare`], [`PublicKeyShare`], [`CollectivePublicKey`] |
//! | 2-3. contribution, aggregation | [`encryption`], [`codec`] | [`Ciphertext`], [`EncryptedVector`], [`FixedPointCodec`] |
//! | 4-5. decryption shares, combine | [`decryption`] | [`DecryptionShare`], [`decryption::combine`] |
//! | t-of-n: deal, verify, aggregate, decrypt, combine | [`threshold`] | [`Thresholdizer`], [`ShamirShare`], [`ShamirCommitment`], [`ThresholdSecretShare`], [`ThresholdDecryptionShare`], [`threshold::combine_threshold`] |
//! | 1, 5. adding shares one at a time, either kind of ceremony | [`aggregate`] | [`Aggregate`], [`AnyDecryptionShare`], [`ShareCombination`] |
//! | t-of-n: binding a dealing to the dealer's key share | [`dealing_check`] | [`DealingCheck`] |
//! | t-of-n: Shamir shares in transit | [`share_transport`] | [`SealedShamirShare`] |
//! | 4. verify before decrypt, by digests | [`sum_digest`] | [`SumChallenge`], [`SumDigest`] |
//! | transport | [`wire`] | [`wire::WireObject`] |
//! | the channel | [`secure_sum`] | [`SecureSum`], [`PlainSum`], [`HeSum`] |

pub mod aggregate;
pub mod c1_commitment;
pub mod codec;
pub mod crs;
pub mod dealing_check;
pub mod decryption;
pub mod encryption;
mod error;
mod identity;
pub mod params;
pub mod public_key;
pub mod result_key;
pub mod secure_sum;
pub mod share_transport;
pub mod sum_digest;
#[cfg(test)]
mod test_ceremony;
pub mod text;
pub mod threshold;
pub mod wire;

pub use aggregate::{Aggregate, AnyDecryptionShare, ShareCombination};
pub use c1_commitment::{
    check_aggregate as check_c1_aggregate, C1Carries, C1CheckFailure, C1Commitment, C1Generators,
    CarryingSum,
};
pub use codec::{EncodingInfo, FixedPointCodec, Limbs, Precision, TWO_LIMB_SPLIT_BITS};
pub use crs::CommonRandomPoly;
pub use dealing_check::DealingCheck;
pub use decryption::{CombinedShare, DecryptionShare, ShareCombiner, ShareSum};
pub use encryption::{Ciphertext, EncryptedVector, EncryptionMask};
pub use error::{ChannelError, CodecError, WireError};
pub use identity::{CeremonyId, MemberId, RoundId};
pub use params::{InsecurePolicy, ParameterSet, Params, STATISTICAL_MARGIN_BITS};
pub use public_key::{CollectivePublicKey, KeyAggregation, PublicKeyShare, SecretKeyShare};
pub use result_key::{
    result_key_dealer, BlindingContext, ResultKey, ResultKeyDealing, SealedResultKey,
};
pub use secure_sum::{HeSum, PlainSum, RoundTimings, RoundTranscript, SecureSum};
pub use share_transport::{SealedShamirShare, ThresholdDealing};
pub use sum_digest::{ContributorDigest, ExpandedChallenge, SumChallenge, SumDigest};
pub use threshold::{
    AccessStructure, InProcessCeremony, ShamirCommitment, ShamirPublicPoint, ShamirShare,
    ThresholdDecryptionShare, ThresholdError, ThresholdSecretShare, ThresholdShareCombiner,
    Thresholdizer,
};
pub use wire::WireObject;
