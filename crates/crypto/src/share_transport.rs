//! Shamir shares in transit (issue 15): each share is sealed to its recipient
//! with XChaCha20-Poly1305 under a key agreed from the dealer's and the
//! recipient's ed25519 identities, so the server that relays it cannot read it
//! and nobody but the dealer (or the recipient) can make one that opens.
//!
//! Key agreement: X25519 on the identities' Montgomery forms (RFC 7748 with
//! the ed25519 secret scalar, `SigningKey::to_scalar_bytes` /
//! `VerifyingKey::to_montgomery`; the joint use of one key for ed25519 and
//! X25519 is analysed by Thormarker, ePrint 2021/509). The 32-byte shared
//! point goes through BLAKE3 in key-derivation mode with the ceremony, the
//! parameter set, and both members' ids and public keys, in the direction
//! dealer → recipient: a key never serves another ceremony, pair or direction.
//! The all-zero shared point (a small-order public key) is refused.
//!
//! The associated data binds the ceremony, the parameter set, the dealer and
//! the recipient again, and the nonce is 24 random bytes (XChaCha's extended
//! nonce makes random nonces safe). A sealed share that was tampered with,
//! replayed into another ceremony, or relabelled with another dealer or
//! recipient fails to open with [`ThresholdError::Authentication`].

use crate::crs::derive_key;
use crate::threshold::{
    AccessStructure, ShamirCommitment, ShamirPublicPoint, ShamirShare, ThresholdError,
    ThresholdSecretShare, Thresholdizer,
};
use crate::{CeremonyId, ChannelError, MemberId, Params, SecretKeyShare};
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use ed25519_dalek::{SigningKey, VerifyingKey};
use fedhe_ring::{Csprng, Poly, Representation};
use zeroize::Zeroizing;

const KEY_CONTEXT: &str = "fedhe 2026-11 shamir share transport key v1";
const AAD_LABEL: &[u8] = b"fedhe shamir share v1";

/// A Shamir share sealed to its recipient: readable only with the recipient's
/// (or the dealer's) identity key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SealedShamirShare {
    /// The dealer.
    pub dealer: MemberId,
    /// The recipient.
    pub recipient: MemberId,
    /// The XChaCha20-Poly1305 nonce.
    pub nonce: [u8; 24],
    /// The ciphertext and its 16-byte tag.
    pub ciphertext: Vec<u8>,
}

/// The dealer → recipient key: BLAKE3-derive-key(X25519(sk, pk_peer) ‖ ceremony
/// ‖ set ‖ dealer id ‖ dealer key ‖ recipient id ‖ recipient key), each field
/// length-prefixed. `mine` is the caller's identity key (the dealer's when
/// sealing, the recipient's when opening), `peer` the other member's key.
fn transport_key(
    params: &Params,
    ceremony: &CeremonyId,
    dealer: (&MemberId, &VerifyingKey),
    recipient: (&MemberId, &VerifyingKey),
    mine: &SigningKey,
    peer: (&MemberId, &VerifyingKey),
) -> Result<Zeroizing<[u8; 32]>, ChannelError> {
    pairwise_key(KEY_CONTEXT, params, ceremony, dealer, recipient, mine, peer)
}

/// [`transport_key`] under another key-derivation `context`: the key of one
/// purpose (Shamir shares, the result key of [`crate::result_key`]) never
/// serves another.
pub(crate) fn pairwise_key(
    context: &str,
    params: &Params,
    ceremony: &CeremonyId,
    dealer: (&MemberId, &VerifyingKey),
    recipient: (&MemberId, &VerifyingKey),
    mine: &SigningKey,
    peer: (&MemberId, &VerifyingKey),
) -> Result<Zeroizing<[u8; 32]>, ChannelError> {
    let scalar = Zeroizing::new(mine.to_scalar_bytes());
    let shared = Zeroizing::new(peer.1.to_montgomery().mul_clamped(*scalar).to_bytes());
    if *shared == [0u8; 32] {
        return Err(ThresholdError::WeakIdentityKey(peer.0.clone()).into());
    }
    Ok(Zeroizing::new(derive_key(
        context,
        &[
            &shared[..],
            ceremony.as_str().as_bytes(),
            params.set().name.as_bytes(),
            dealer.0.as_str().as_bytes(),
            dealer.1.as_bytes(),
            recipient.0.as_str().as_bytes(),
            recipient.1.as_bytes(),
        ],
    )))
}

fn associated_data(
    params: &Params,
    ceremony: &CeremonyId,
    dealer: &MemberId,
    recipient: &MemberId,
) -> Vec<u8> {
    pairwise_aad(AAD_LABEL, params, ceremony, dealer, recipient)
}

/// The associated data of a sealed object under `label` (its purpose):
/// the label, ceremony, parameter set, dealer and recipient, each
/// length-prefixed.
pub(crate) fn pairwise_aad(
    label: &[u8],
    params: &Params,
    ceremony: &CeremonyId,
    dealer: &MemberId,
    recipient: &MemberId,
) -> Vec<u8> {
    let mut aad = Vec::new();
    for field in [
        label,
        ceremony.as_str().as_bytes(),
        params.set().name.as_bytes(),
        dealer.as_str().as_bytes(),
        recipient.as_str().as_bytes(),
    ] {
        aad.extend_from_slice(&(field.len() as u64).to_le_bytes());
        aad.extend_from_slice(field);
    }
    aad
}

/// Plaintext: point (u64) ‖ f(x) residues (NTT form) ‖ ĝ(x), one residue per
/// prime ‖ salt; every residue a u64.
fn plaintext_len(params: &Params) -> usize {
    let limbs = params.set().moduli.len();
    8 + 8 * params.degree() * limbs + 8 * limbs + 32
}

/// The length of a sealed share's ciphertext: the plaintext and a 16-byte tag.
pub fn sealed_len(params: &Params) -> usize {
    plaintext_len(params) + 16
}

impl SealedShamirShare {
    /// Seals `share` (dealt by the owner of `dealer_key`) to its recipient.
    pub fn seal(
        params: &Params,
        ceremony: &CeremonyId,
        share: &ShamirShare,
        dealer_key: &SigningKey,
        recipient_key: &VerifyingKey,
        rng: &mut Csprng,
    ) -> Result<Self, ChannelError> {
        let dealer_pk = dealer_key.verifying_key();
        let key = transport_key(
            params,
            ceremony,
            (&share.dealer, &dealer_pk),
            (&share.recipient, recipient_key),
            dealer_key,
            (&share.recipient, recipient_key),
        )?;
        let mut plaintext = Zeroizing::new(Vec::with_capacity(plaintext_len(params)));
        plaintext.extend_from_slice(&share.point.0.to_le_bytes());
        for r in share.value.residues().iter().chain(&share.mask) {
            plaintext.extend_from_slice(&r.to_le_bytes());
        }
        plaintext.extend_from_slice(&share.salt);
        let mut nonce = [0u8; 24];
        rng.fill_bytes(&mut nonce);
        let aad = associated_data(params, ceremony, &share.dealer, &share.recipient);
        let ciphertext = XChaCha20Poly1305::new((&*key).into())
            .encrypt(
                XNonce::from_slice(&nonce),
                Payload {
                    msg: &plaintext,
                    aad: &aad,
                },
            )
            .map_err(|_| ChannelError::Mismatch("share encryption failed".into()))?;
        Ok(Self {
            dealer: share.dealer.clone(),
            recipient: share.recipient.clone(),
            nonce,
            ciphertext,
        })
    }

    /// Opens a share addressed to `me` with `me`'s identity key, from the
    /// dealer whose identity is `dealer_key`. Refuses a share addressed to
    /// another member and any ciphertext that does not authenticate; the share
    /// still has to be verified against the dealer's commitment
    /// ([`ShamirShare::verify`]).
    pub fn open(
        &self,
        params: &Params,
        ceremony: &CeremonyId,
        me: &MemberId,
        my_key: &SigningKey,
        dealer_key: &VerifyingKey,
    ) -> Result<ShamirShare, ChannelError> {
        if &self.recipient != me {
            return Err(ThresholdError::WrongRecipient {
                dealer: self.dealer.clone(),
                addressed: self.recipient.clone(),
                member: me.clone(),
            }
            .into());
        }
        let my_pk = my_key.verifying_key();
        let key = transport_key(
            params,
            ceremony,
            (&self.dealer, dealer_key),
            (me, &my_pk),
            my_key,
            (&self.dealer, dealer_key),
        )?;
        let aad = associated_data(params, ceremony, &self.dealer, &self.recipient);
        let unauthenticated = || ThresholdError::Authentication {
            dealer: self.dealer.clone(),
            recipient: self.recipient.clone(),
        };
        let plaintext = Zeroizing::new(
            XChaCha20Poly1305::new((&*key).into())
                .decrypt(
                    XNonce::from_slice(&self.nonce),
                    Payload {
                        msg: &self.ciphertext,
                        aad: &aad,
                    },
                )
                .map_err(|_| unauthenticated())?,
        );
        // Authenticated, hence made by the dealer; still parsed defensively.
        let malformed = |reason: &str| {
            ChannelError::from(ThresholdError::MalformedCommitment {
                dealer: self.dealer.clone(),
                reason: format!("sealed share: {reason}"),
            })
        };
        if plaintext.len() != plaintext_len(params) {
            return Err(malformed("wrong length"));
        }
        let words = params.degree() * params.set().moduli.len();
        let word = |i: usize| {
            let at = 8 + 8 * i;
            u64::from_le_bytes(plaintext[at..at + 8].try_into().expect("8 bytes"))
        };
        let point = u64::from_le_bytes(plaintext[..8].try_into().expect("8 bytes"));
        let poly = |offset: usize| -> Result<Poly, ChannelError> {
            let data = (offset..offset + words).map(word).collect();
            Poly::from_residues(params.ring(), Representation::Ntt, data)
                .map_err(|_| malformed("a residue is out of range"))
        };
        let value = poly(0)?;
        let mask = params
            .set()
            .moduli
            .iter()
            .enumerate()
            .map(|(i, &p)| {
                let r = word(words + i);
                if r < p {
                    Ok(r)
                } else {
                    Err(malformed("a mask residue is out of range"))
                }
            })
            .collect::<Result<Vec<u64>, _>>()?;
        let mut salt = [0u8; 32];
        salt.copy_from_slice(&plaintext[plaintext.len() - 32..]);
        Ok(ShamirShare {
            dealer: self.dealer.clone(),
            recipient: self.recipient.clone(),
            point: ShamirPublicPoint(point),
            value,
            mask,
            salt,
        })
    }
}

/// A dealer's upload in a t-of-n ceremony over the service: its public
/// [`ShamirCommitment`] and its shares sealed one per recipient (its own
/// included, so a dealer that restarts can fetch its own share back). The
/// server relays it; a recipient downloads the commitment with only the share
/// addressed to it ([`ThresholdDealing::for_recipient`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThresholdDealing {
    /// The dealer's commitment (the same for every recipient).
    pub commitment: ShamirCommitment,
    /// Sealed shares, sorted by recipient, all from the commitment's dealer.
    pub sealed: Vec<SealedShamirShare>,
}

impl ThresholdDealing {
    /// Checks the shares are the commitment's dealer's, sorted by recipient
    /// and distinct, and at most one per committed digest.
    pub fn new(
        commitment: ShamirCommitment,
        sealed: Vec<SealedShamirShare>,
    ) -> Result<Self, ChannelError> {
        let bad = |reason: String| -> ChannelError {
            ThresholdError::MalformedCommitment {
                dealer: commitment.dealer().clone(),
                reason,
            }
            .into()
        };
        if sealed.is_empty() || sealed.len() > commitment.digests.len() {
            return Err(bad(format!(
                "{} sealed shares for {} committed recipients",
                sealed.len(),
                commitment.digests.len()
            )));
        }
        if let Some(s) = sealed.iter().find(|s| &s.dealer != commitment.dealer()) {
            return Err(bad(format!("a sealed share names the dealer {}", s.dealer)));
        }
        if sealed.windows(2).any(|w| w[0].recipient >= w[1].recipient) {
            return Err(bad(
                "the sealed shares are not sorted by distinct recipients".into(),
            ));
        }
        Ok(Self { commitment, sealed })
    }

    /// Deals `secret` (module docs of [`crate::threshold`]) and seals one share
    /// to every member of `access`, whose identity keys are `recipients`
    /// (member, key), in any order.
    pub fn deal(
        params: &Params,
        ceremony: &CeremonyId,
        access: &AccessStructure,
        secret: &SecretKeyShare,
        identity: &SigningKey,
        recipients: &[(MemberId, VerifyingKey)],
        rng: &mut Csprng,
    ) -> Result<Self, ChannelError> {
        let dealing = Thresholdizer::deal(params, ceremony, access, secret, rng)?;
        let mut sealed = Vec::with_capacity(dealing.shares.len());
        for share in &dealing.shares {
            let key = recipients
                .iter()
                .find(|(m, _)| m == share.recipient())
                .map(|(_, k)| k)
                .ok_or_else(|| ChannelError::UnknownMember(share.recipient().clone()))?;
            sealed.push(SealedShamirShare::seal(
                params, ceremony, share, identity, key, rng,
            )?);
        }
        sealed.sort_by(|a, b| a.recipient.cmp(&b.recipient));
        Self::new(dealing.commitment, sealed)
    }

    /// The dealer.
    pub fn dealer(&self) -> &MemberId {
        self.commitment.dealer()
    }

    /// The commitment with only the share addressed to `recipient`.
    pub fn for_recipient(&self, recipient: &MemberId) -> Result<Self, ChannelError> {
        let share = self
            .sealed
            .iter()
            .find(|s| &s.recipient == recipient)
            .ok_or_else(|| ThresholdError::MissingDealing(self.dealer().clone()))?;
        Self::new(self.commitment.clone(), vec![share.clone()])
    }
}

/// AggregateShares over the service: opens the share addressed to `me` in
/// every dealing (one per member of `access`; `identities` gives each
/// dealer's identity key), verifies each against its dealer's commitment and
/// sums them. The first share that does not open or verify names its dealer
/// and nothing is aggregated.
pub fn open_dealings(
    params: &Params,
    ceremony: &CeremonyId,
    access: &AccessStructure,
    me: &MemberId,
    my_key: &SigningKey,
    identities: &[(MemberId, VerifyingKey)],
    dealings: &[ThresholdDealing],
) -> Result<ThresholdSecretShare, ChannelError> {
    let mut shares = Vec::with_capacity(dealings.len());
    for dealing in dealings {
        let dealer = dealing.dealer();
        let dealer_key = identities
            .iter()
            .find(|(m, _)| m == dealer)
            .map(|(_, k)| k)
            .ok_or_else(|| ChannelError::UnknownMember(dealer.clone()))?;
        let sealed = dealing
            .sealed
            .iter()
            .find(|s| &s.recipient == me)
            .ok_or_else(|| ThresholdError::WrongRecipient {
                dealer: dealer.clone(),
                addressed: dealing.sealed[0].recipient.clone(),
                member: me.clone(),
            })?;
        shares.push(sealed.open(params, ceremony, me, my_key, dealer_key)?);
    }
    let share_refs: Vec<&ShamirShare> = shares.iter().collect();
    let commitments: Vec<&ShamirCommitment> = dealings.iter().map(|d| &d.commitment).collect();
    ThresholdSecretShare::aggregate(params, ceremony, access, me, &share_refs, &commitments)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::threshold::{AccessStructure, ShamirDealing, Thresholdizer};
    use crate::{InsecurePolicy, ParameterSet, SecretKeyShare};
    use std::sync::Arc;

    struct Fixture {
        params: Arc<Params>,
        ceremony: CeremonyId,
        access: AccessStructure,
        keys: Vec<SigningKey>,
        dealing: ShamirDealing,
        rng: Csprng,
    }

    fn fixture() -> Fixture {
        let params = ParameterSet::TOY_N1024
            .validate(InsecurePolicy::Allow)
            .unwrap();
        let members: Vec<MemberId> = ["a", "b", "c"]
            .iter()
            .map(|m| MemberId::new(*m).unwrap())
            .collect();
        let ceremony = CeremonyId::new("sealed").unwrap();
        let access = AccessStructure::new(&members, 2).unwrap();
        let mut rng = Csprng::from_u128_seed(77);
        let keys = (0..3)
            .map(|_| SigningKey::from_bytes(&rng.seed_bytes()))
            .collect();
        let sk = SecretKeyShare::generate(&params, members[0].clone(), &mut rng);
        let dealing = Thresholdizer::deal(&params, &ceremony, &access, &sk, &mut rng).unwrap();
        Fixture {
            params,
            ceremony,
            access,
            keys,
            dealing,
            rng,
        }
    }

    fn auth_failed(e: ChannelError) -> bool {
        matches!(
            e,
            ChannelError::Threshold(ThresholdError::Authentication { .. })
        )
    }

    #[test]
    fn sealed_shares_open_for_their_recipient_only() {
        let mut fx = fixture();
        let (a, b, c) = (&fx.keys[0], &fx.keys[1], &fx.keys[2]);
        let share = &fx.dealing.shares[1]; // a → b
        let sealed = SealedShamirShare::seal(
            &fx.params,
            &fx.ceremony,
            share,
            a,
            &b.verifying_key(),
            &mut fx.rng,
        )
        .unwrap();
        // The ciphertext does not contain the share's residues.
        let first = share.value.residues()[0].to_le_bytes();
        assert!(!sealed.ciphertext.windows(8).any(|w| w == first));
        let me = fx.access.members()[1].clone();
        let opened = sealed
            .open(&fx.params, &fx.ceremony, &me, b, &a.verifying_key())
            .unwrap();
        assert_eq!(opened.value, share.value);
        assert_eq!(opened.mask, share.mask);
        assert_eq!(opened.point, share.point);
        opened
            .verify(
                &fx.params,
                &fx.ceremony,
                &fx.access,
                &me,
                &fx.dealing.commitment,
            )
            .unwrap();

        // c cannot open it, as b or as itself.
        let c_id = fx.access.members()[2].clone();
        assert!(auth_failed(
            sealed
                .open(&fx.params, &fx.ceremony, &me, c, &a.verifying_key())
                .unwrap_err()
        ));
        assert!(matches!(
            sealed.open(&fx.params, &fx.ceremony, &c_id, c, &a.verifying_key()),
            Err(ChannelError::Threshold(
                ThresholdError::WrongRecipient { .. }
            ))
        ));
        // A flipped bit, another ceremony, a relabelled dealer, another
        // claimed dealer key: all fail to authenticate.
        let mut flipped = sealed.clone();
        flipped.ciphertext[10] ^= 1;
        assert!(auth_failed(
            flipped
                .open(&fx.params, &fx.ceremony, &me, b, &a.verifying_key())
                .unwrap_err()
        ));
        let other = CeremonyId::new("sealed-2").unwrap();
        assert!(auth_failed(
            sealed
                .open(&fx.params, &other, &me, b, &a.verifying_key())
                .unwrap_err()
        ));
        let mut relabelled = sealed.clone();
        relabelled.dealer = c_id.clone();
        assert!(auth_failed(
            relabelled
                .open(&fx.params, &fx.ceremony, &me, b, &c.verifying_key())
                .unwrap_err()
        ));
        assert!(auth_failed(
            sealed
                .open(&fx.params, &fx.ceremony, &me, b, &c.verifying_key())
                .unwrap_err()
        ));
        let mut nonce = sealed.clone();
        nonce.nonce[0] ^= 1;
        let err = nonce
            .open(&fx.params, &fx.ceremony, &me, b, &a.verifying_key())
            .unwrap_err();
        assert!(
            err.to_string().contains("from a to b") && err.to_string().contains("authenticate"),
            "{err}"
        );
    }

    #[test]
    fn keys_are_directional_and_small_order_keys_refused() {
        let fx = fixture();
        let (a, b) = (&fx.keys[0], &fx.keys[1]);
        let (ida, idb) = (&fx.access.members()[0], &fx.access.members()[1]);
        let (pa, pb) = (a.verifying_key(), b.verifying_key());
        // Both ends derive the same dealer → recipient key…
        let k_ab = transport_key(
            &fx.params,
            &fx.ceremony,
            (ida, &pa),
            (idb, &pb),
            a,
            (idb, &pb),
        )
        .unwrap();
        let k_ab2 = transport_key(
            &fx.params,
            &fx.ceremony,
            (ida, &pa),
            (idb, &pb),
            b,
            (ida, &pa),
        )
        .unwrap();
        assert_eq!(*k_ab, *k_ab2);
        // …and another one for the other direction.
        let k_ba = transport_key(
            &fx.params,
            &fx.ceremony,
            (idb, &pb),
            (ida, &pa),
            b,
            (ida, &pa),
        )
        .unwrap();
        assert_ne!(*k_ab, *k_ba);
        // The identity point (a small-order key) gives the all-zero shared point.
        let mut identity = [0u8; 32];
        identity[0] = 1;
        let weak = VerifyingKey::from_bytes(&identity).unwrap();
        let err = transport_key(
            &fx.params,
            &fx.ceremony,
            (ida, &pa),
            (idb, &weak),
            a,
            (idb, &weak),
        )
        .unwrap_err();
        assert_eq!(err, ThresholdError::WeakIdentityKey(idb.clone()).into());
    }

    /// The service path end to end: five members deal through the wire
    /// format, each downloads only its slice of every dealing, opens and
    /// aggregates, and stores its share as a key file; any three reloaded
    /// shares decrypt an encryption under the unchanged collective key to the
    /// plaintext (the reference), a set of two is refused, and a tampered
    /// slice names its dealer.
    #[test]
    fn dealings_relayed_as_wire_objects_give_shares_that_decrypt_at_threshold() {
        use crate::codec::FixedPointCodec;
        use crate::threshold::combine_threshold;
        use crate::wire::WireObject;
        use crate::{
            CollectivePublicKey, CommonRandomPoly, EncryptedVector, PublicKeyShare,
            ThresholdDecryptionShare,
        };
        let params = ParameterSet::TOY_N1024
            .validate(InsecurePolicy::Allow)
            .unwrap();
        let members: Vec<MemberId> = (1..=5)
            .map(|i| MemberId::new(format!("m{i}")).unwrap())
            .collect();
        let ceremony = CeremonyId::new("relay").unwrap();
        let access = AccessStructure::new(&members, 3).unwrap();
        let mut rng = Csprng::from_u128_seed(21);
        let keys: Vec<SigningKey> = (0..5u8)
            .map(|i| SigningKey::from_bytes(&[i + 40; 32]))
            .collect();
        let identities: Vec<(MemberId, VerifyingKey)> = members
            .iter()
            .cloned()
            .zip(keys.iter().map(|k| k.verifying_key()))
            .collect();
        let secrets: Vec<SecretKeyShare> = members
            .iter()
            .map(|m| SecretKeyShare::generate(&params, m.clone(), &mut rng))
            .collect();
        let crs = CommonRandomPoly::for_ceremony(&params, &ceremony, &members).unwrap();
        let pk_shares: Vec<PublicKeyShare> = secrets
            .iter()
            .map(|sk| PublicKeyShare::generate(&params, sk, &crs, &mut rng).unwrap())
            .collect();
        let pk = CollectivePublicKey::aggregate(&crs, &members, &pk_shares).unwrap();
        // What each dealer uploads, as bytes.
        let uploads: Vec<Vec<u8>> = secrets
            .iter()
            .zip(&keys)
            .map(|(sk, key)| {
                ThresholdDealing::deal(&params, &ceremony, &access, sk, key, &identities, &mut rng)
                    .unwrap()
                    .to_bytes(&params)
            })
            .collect();
        for (bytes, dealer) in uploads.iter().zip(&members) {
            assert_eq!(
                bytes.len(),
                crate::wire::threshold_dealing_len(&params, dealer, &members, 3)
            );
        }
        // What the server serves member j: each dealing's slice for j.
        let slices = |j: usize| -> Vec<ThresholdDealing> {
            uploads
                .iter()
                .map(|b| {
                    ThresholdDealing::from_bytes(&params, b)
                        .unwrap()
                        .for_recipient(&members[j])
                        .unwrap()
                })
                .collect()
        };
        let key_files: Vec<Vec<u8>> = (0..5)
            .map(|j| {
                let slices = slices(j);
                assert!(slices.iter().all(|d| d.sealed.len() == 1));
                open_dealings(
                    &params,
                    &ceremony,
                    &access,
                    &members[j],
                    &keys[j],
                    &identities,
                    &slices,
                )
                .unwrap()
                .to_key_bytes(&params)
                .to_vec()
            })
            .collect();
        let shares: Vec<ThresholdSecretShare> = key_files
            .iter()
            .map(|b| ThresholdSecretShare::from_key_bytes(&params, b).unwrap())
            .collect();
        let values: Vec<f64> = (0..40).map(|i| i as f64 * 0.25 - 3.0).collect();
        let codec = FixedPointCodec::new(&params, 5, 100.0).unwrap();
        let aggregate = EncryptedVector::encrypt(&params, &pk, &codec, &values, &mut rng).unwrap();
        let decrypt = |set: &[usize], rng: &mut Csprng| {
            let active: Vec<MemberId> = set.iter().map(|&j| members[j].clone()).collect();
            let tshares: Vec<ThresholdDecryptionShare> = set
                .iter()
                .map(|&j| {
                    ThresholdDecryptionShare::generate(
                        &params, &shares[j], &active, &aggregate, rng,
                    )
                    .unwrap()
                })
                .collect();
            combine_threshold(&access, &aggregate, &tshares)
        };
        for set in [[0, 1, 2], [0, 2, 4], [1, 3, 4]] {
            let got = codec
                .decode(&decrypt(&set, &mut rng).unwrap(), values.len())
                .unwrap();
            for (g, v) in got.iter().zip(&values) {
                assert!((g - v).abs() < 1e-9, "set {set:?}: {g} vs {v}");
            }
        }
        // A decrypting set below T is refused before any share is made.
        let pair = [members[0].clone(), members[1].clone()];
        assert_eq!(
            ThresholdDecryptionShare::generate(&params, &shares[0], &pair, &aggregate, &mut rng)
                .unwrap_err(),
            ThresholdError::TooFewShares {
                got: 2,
                threshold: 3
            }
            .into()
        );
        // A slice whose sealed share was changed in transit names its dealer.
        let mut bad = slices(1);
        bad[3].sealed[0].ciphertext[5] ^= 1;
        let err = open_dealings(
            &params,
            &ceremony,
            &access,
            &members[1],
            &keys[1],
            &identities,
            &bad,
        )
        .unwrap_err();
        assert_eq!(
            err,
            ThresholdError::Authentication {
                dealer: members[3].clone(),
                recipient: members[1].clone(),
            }
            .into()
        );
        // A key file of the wrong kind or cut short is refused.
        assert!(ThresholdSecretShare::from_key_bytes(&params, &uploads[0]).is_err());
        assert!(ThresholdSecretShare::from_key_bytes(
            &params,
            &key_files[0][..key_files[0].len() - 1]
        )
        .is_err());
    }
}
