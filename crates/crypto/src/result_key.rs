//! The members' result key: what keeps every decrypted value from the server
//! (issue 44, item 2; DESIGN.md §6).
//!
//! Collaborative decryption ([`crate::decryption`]) publishes each member's
//! share d_j, and `C0 + Σ_j d_j` decodes to the round's sum: whoever combines
//! the shares reads the result. Here every share is blinded before it leaves
//! its maker, `d'_j = d_j + r_j`, with `r_j ∈ R_q` uniform and drawn from a key
//! `K` that every member of the ceremony holds and the server does not:
//!
//! - the server adds the blinded shares as before (`D' = D + Σ_j r_j`) and
//!   checks them on digests as before (they are linear), but `C0 + D'` is
//!   uniform mod q to it: it holds no plaintext, stores none and serves none;
//! - a member recomputes `Σ_j r_j` over the shares listed (n-of-n every
//!   member, t-of-n the decrypting set; the Lagrange weights are inside `d_j`,
//!   the mask is added after them, so it is subtracted unweighted), and
//!   decodes `C0 + D' − Σ_j r_j` ([`ResultKey::unblind`]).
//!
//! `r_j` is BLAKE3-derive-key(`K` ‖ ceremony ‖ study ‖ round ‖ aggregate hash
//! ‖ member ‖ ciphertext index), each field length-prefixed, expanded to a
//! uniform polynomial by the crate's XOF-seeded AES-CTR: one mask per member,
//! round and aggregate, never reused.
//!
//! **Dealing.** `K` is 32 bytes from the CSPRNG of one member, the ceremony's
//! first member by id ([`result_key_dealer`]), sealed to every member (itself
//! included, so a dealer that restarts fetches its own key back) with
//! XChaCha20-Poly1305 under the dealer → recipient X25519 key of
//! [`crate::share_transport`], derived under its own context. The server relays
//! the sealed keys and can neither read nor forge one. A dealer that gives two
//! members different keys only makes their decodings fail (each then refuses
//! the round): a member who wants to hand results to the server can do so
//! anyway, so the dealer gains nothing the threat model does not already give
//! a member.

use crate::crs::derive_key;
use crate::decryption::{CombinedShare, DecryptionShare};
use crate::share_transport::{pairwise_aad, pairwise_key};
use crate::threshold::ThresholdDecryptionShare;
use crate::{CeremonyId, ChannelError, MemberId, Params};
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use ed25519_dalek::{SigningKey, VerifyingKey};
use fedhe_ring::{Csprng, Poly};
use zeroize::Zeroizing;

const KEY_CONTEXT: &str = "fedhe 2026-12 result key transport v1";
const MASK_CONTEXT: &str = "fedhe 2026-12 result mask v1";
const MASK_DOMAIN: [u8; 8] = *b"fedh-rmk";
const AAD_LABEL: &[u8] = b"fedhe result key v1";
const DEALING_MAGIC: &[u8; 8] = b"fedherk1";

/// The length of a key.
pub const RESULT_KEY_BYTES: usize = 32;

/// The length of a sealed key's ciphertext: the key and a 16-byte tag.
pub const SEALED_RESULT_KEY_BYTES: usize = RESULT_KEY_BYTES + 16;

/// The members' result key `K`. Wiped on drop; its `Debug` shows nothing.
#[derive(Clone, PartialEq, Eq)]
pub struct ResultKey(Zeroizing<[u8; RESULT_KEY_BYTES]>);

impl std::fmt::Debug for ResultKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ResultKey(..)")
    }
}

/// What a round's masks are drawn for: every member of the round derives
/// the same masks from the same context.
#[derive(Clone, Copy, Debug)]
pub struct BlindingContext<'a> {
    /// The ceremony whose key decrypts.
    pub ceremony: &'a CeremonyId,
    /// The study.
    pub study: &'a str,
    /// The round.
    pub round: u64,
    /// BLAKE3 of the aggregate's bytes.
    pub aggregate_hash: &'a [u8; 32],
}

/// The member that deals a ceremony's result key: the first by id.
pub fn result_key_dealer(members: &[MemberId]) -> Option<&MemberId> {
    members.iter().min()
}

impl ResultKey {
    /// A fresh key from `rng`.
    pub fn generate(rng: &mut Csprng) -> Self {
        let mut key = Zeroizing::new([0u8; RESULT_KEY_BYTES]);
        rng.fill_bytes(&mut key[..]);
        Self(key)
    }

    /// A key from its 32 bytes (a key file); refuses any other length.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, ChannelError> {
        let key: [u8; RESULT_KEY_BYTES] = bytes.try_into().map_err(|_| {
            ChannelError::Mismatch(format!(
                "a result key has {RESULT_KEY_BYTES} bytes, not {}",
                bytes.len()
            ))
        })?;
        Ok(Self(Zeroizing::new(key)))
    }

    /// The key's bytes, for its key file only.
    pub fn expose_bytes(&self) -> &[u8; RESULT_KEY_BYTES] {
        &self.0
    }

    /// `r_j`: the mask of `member`'s share in `ctx`, one uniform polynomial
    /// per ciphertext, each in the representation of `like`'s polynomial.
    fn mask(
        &self,
        params: &Params,
        ctx: &BlindingContext<'_>,
        member: &MemberId,
        like: &[Poly],
    ) -> Result<Vec<Poly>, ChannelError> {
        let round = ctx.round.to_le_bytes();
        like.iter()
            .enumerate()
            .map(|(i, p)| {
                let index = (i as u64).to_le_bytes();
                let seed = Zeroizing::new(derive_key(
                    MASK_CONTEXT,
                    &[
                        &self.0[..],
                        ctx.ceremony.as_str().as_bytes(),
                        ctx.study.as_bytes(),
                        &round,
                        &ctx.aggregate_hash[..],
                        member.as_str().as_bytes(),
                        &index,
                    ],
                ));
                let r = Csprng::from_seed(&seed, MASK_DOMAIN).uniform_poly(params.ring());
                Ok(Poly::from_residues(
                    params.ring(),
                    p.representation(),
                    r.residues().to_vec(),
                )?)
            })
            .collect()
    }

    /// `d'_j = d_j + r_j`: blinds a member's own n-of-n share.
    pub fn blind(
        &self,
        params: &Params,
        ctx: &BlindingContext<'_>,
        share: &mut DecryptionShare,
    ) -> Result<(), ChannelError> {
        let mask = self.mask(params, ctx, &share.member, &share.polys)?;
        for (d, r) in share.polys.iter_mut().zip(&mask) {
            d.add_assign(r)?;
        }
        Ok(())
    }

    /// [`Self::blind`] for a threshold share (after its Lagrange weight).
    pub fn blind_threshold(
        &self,
        params: &Params,
        ctx: &BlindingContext<'_>,
        share: &mut ThresholdDecryptionShare,
    ) -> Result<(), ChannelError> {
        self.blind(params, ctx, &mut share.share)
    }

    /// `D = D' − Σ_j r_j` over the members whose blinded shares `D'` adds
    /// (each once): the combined share whose `C0 + D` decodes.
    pub fn unblind(
        &self,
        params: &Params,
        ctx: &BlindingContext<'_>,
        makers: &[MemberId],
        combined: &mut CombinedShare,
    ) -> Result<(), ChannelError> {
        for member in makers {
            let mask = self.mask(params, ctx, member, combined.polys())?;
            for (d, r) in combined.polys_mut().iter_mut().zip(&mask) {
                d.sub_assign(r)?;
            }
        }
        Ok(())
    }

    /// Seals this key from `dealer` (whose identity key is `dealer_key`) to
    /// `recipient`.
    pub fn seal(
        &self,
        params: &Params,
        ceremony: &CeremonyId,
        dealer: &MemberId,
        dealer_key: &SigningKey,
        recipient: (&MemberId, &VerifyingKey),
        rng: &mut Csprng,
    ) -> Result<SealedResultKey, ChannelError> {
        let dealer_pk = dealer_key.verifying_key();
        let key = pairwise_key(
            KEY_CONTEXT,
            params,
            ceremony,
            (dealer, &dealer_pk),
            recipient,
            dealer_key,
            recipient,
        )?;
        let mut nonce = [0u8; 24];
        rng.fill_bytes(&mut nonce);
        let aad = associated_data(params, ceremony, dealer, recipient.0);
        let ciphertext = XChaCha20Poly1305::new((&*key).into())
            .encrypt(
                XNonce::from_slice(&nonce),
                Payload {
                    msg: &self.0[..],
                    aad: &aad,
                },
            )
            .map_err(|_| ChannelError::Mismatch("result key encryption failed".into()))?;
        Ok(SealedResultKey {
            dealer: dealer.clone(),
            recipient: recipient.0.clone(),
            nonce,
            ciphertext,
        })
    }
}

fn associated_data(
    params: &Params,
    ceremony: &CeremonyId,
    dealer: &MemberId,
    recipient: &MemberId,
) -> Vec<u8> {
    pairwise_aad(AAD_LABEL, params, ceremony, dealer, recipient)
}

/// A result key sealed to one member: readable only with the recipient's (or
/// the dealer's) identity key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SealedResultKey {
    /// The dealer.
    pub dealer: MemberId,
    /// The recipient.
    pub recipient: MemberId,
    /// The XChaCha20-Poly1305 nonce.
    pub nonce: [u8; 24],
    /// The key and its 16-byte tag.
    pub ciphertext: Vec<u8>,
}

impl SealedResultKey {
    /// Opens a key addressed to `me` with `me`'s identity key, from the
    /// dealer whose identity is `dealer_key`; refuses a key addressed to
    /// another member and any ciphertext that does not authenticate.
    pub fn open(
        &self,
        params: &Params,
        ceremony: &CeremonyId,
        me: &MemberId,
        my_key: &SigningKey,
        dealer_key: &VerifyingKey,
    ) -> Result<ResultKey, ChannelError> {
        if &self.recipient != me {
            return Err(ChannelError::Mismatch(format!(
                "the result key is addressed to {}, not to {me}",
                self.recipient
            )));
        }
        let my_pk = my_key.verifying_key();
        let key = pairwise_key(
            KEY_CONTEXT,
            params,
            ceremony,
            (&self.dealer, dealer_key),
            (me, &my_pk),
            my_key,
            (&self.dealer, dealer_key),
        )?;
        let aad = associated_data(params, ceremony, &self.dealer, &self.recipient);
        let plain = Zeroizing::new(
            XChaCha20Poly1305::new((&*key).into())
                .decrypt(
                    XNonce::from_slice(&self.nonce),
                    Payload {
                        msg: &self.ciphertext,
                        aad: &aad,
                    },
                )
                .map_err(|_| {
                    ChannelError::Mismatch(format!(
                        "the result key sealed by {} to {me} does not authenticate",
                        self.dealer
                    ))
                })?,
        );
        ResultKey::from_bytes(&plain)
    }

    /// dealer ‖ recipient (each a length byte and the id) ‖ nonce ‖ ciphertext.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        put_id(&mut out, &self.dealer);
        self.put_entry(&mut out);
        out
    }

    fn put_entry(&self, out: &mut Vec<u8>) {
        put_id(out, &self.recipient);
        out.extend_from_slice(&self.nonce);
        out.extend_from_slice(&self.ciphertext);
    }

    /// Decodes [`Self::to_bytes`], bounds-checked, with nothing left over.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, ChannelError> {
        let mut r = bytes;
        let dealer = take_id(&mut r)?;
        let key = take_entry(&mut r, &dealer)?;
        if !r.is_empty() {
            return Err(malformed("bytes after the sealed key"));
        }
        Ok(key)
    }
}

/// The dealer's upload: the key sealed once to every member of the ceremony.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResultKeyDealing {
    /// The dealer.
    pub dealer: MemberId,
    /// One sealed key per member, in the order dealt.
    pub sealed: Vec<SealedResultKey>,
}

impl ResultKeyDealing {
    /// `key` sealed by `dealer` to every member of `members` (ids with their
    /// identity keys), itself included.
    pub fn deal(
        params: &Params,
        ceremony: &CeremonyId,
        key: &ResultKey,
        dealer: &MemberId,
        dealer_key: &SigningKey,
        members: &[(MemberId, VerifyingKey)],
        rng: &mut Csprng,
    ) -> Result<Self, ChannelError> {
        let sealed = members
            .iter()
            .map(|(m, pk)| key.seal(params, ceremony, dealer, dealer_key, (m, pk), rng))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            dealer: dealer.clone(),
            sealed,
        })
    }

    /// The sealed key addressed to `recipient`.
    pub fn for_recipient(&self, recipient: &MemberId) -> Option<&SealedResultKey> {
        self.sealed.iter().find(|s| &s.recipient == recipient)
    }

    /// magic ‖ dealer ‖ count (u32) ‖ entries (recipient ‖ nonce ‖ ciphertext).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = DEALING_MAGIC.to_vec();
        put_id(&mut out, &self.dealer);
        out.extend_from_slice(&(self.sealed.len() as u32).to_le_bytes());
        for s in &self.sealed {
            s.put_entry(&mut out);
        }
        out
    }

    /// Decodes [`Self::to_bytes`]: bounds-checked, at most `max_members`
    /// entries, every entry from the one dealer, no recipient twice, nothing
    /// left over.
    pub fn from_bytes(bytes: &[u8], max_members: usize) -> Result<Self, ChannelError> {
        let mut r = bytes;
        if r.len() < DEALING_MAGIC.len() || &r[..DEALING_MAGIC.len()] != DEALING_MAGIC {
            return Err(malformed("not a result-key dealing"));
        }
        r = &r[DEALING_MAGIC.len()..];
        let dealer = take_id(&mut r)?;
        let count = u32::from_le_bytes(take(&mut r, 4)?.try_into().expect("4 bytes")) as usize;
        if count > max_members {
            return Err(malformed(&format!(
                "{count} sealed keys for at most {max_members} members"
            )));
        }
        let mut sealed: Vec<SealedResultKey> = Vec::with_capacity(count);
        for _ in 0..count {
            let s = take_entry(&mut r, &dealer)?;
            if sealed.iter().any(|o| o.recipient == s.recipient) {
                return Err(malformed(&format!(
                    "{} is sent two sealed keys",
                    s.recipient
                )));
            }
            sealed.push(s);
        }
        if !r.is_empty() {
            return Err(malformed("bytes after the last sealed key"));
        }
        Ok(Self { dealer, sealed })
    }
}

fn malformed(reason: &str) -> ChannelError {
    ChannelError::Mismatch(format!("result-key dealing: {reason}"))
}

fn put_id(out: &mut Vec<u8>, id: &MemberId) {
    // Ids have 1 to 64 characters.
    out.push(id.as_str().len() as u8);
    out.extend_from_slice(id.as_str().as_bytes());
}

fn take<'a>(r: &mut &'a [u8], n: usize) -> Result<&'a [u8], ChannelError> {
    if r.len() < n {
        return Err(malformed("truncated"));
    }
    let (head, tail) = r.split_at(n);
    *r = tail;
    Ok(head)
}

fn take_id(r: &mut &[u8]) -> Result<MemberId, ChannelError> {
    let len = take(r, 1)?[0] as usize;
    let bytes = take(r, len)?;
    let text = std::str::from_utf8(bytes).map_err(|_| malformed("a member id is not UTF-8"))?;
    MemberId::new(text)
}

fn take_entry(r: &mut &[u8], dealer: &MemberId) -> Result<SealedResultKey, ChannelError> {
    let recipient = take_id(r)?;
    let nonce: [u8; 24] = take(r, 24)?.try_into().expect("24 bytes");
    let ciphertext = take(r, SEALED_RESULT_KEY_BYTES)?.to_vec();
    Ok(SealedResultKey {
        dealer: dealer.clone(),
        recipient,
        nonce,
        ciphertext,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_ceremony::ToyCeremony;
    use crate::{EncryptedVector, FixedPointCodec};

    fn signing(seed: u8) -> SigningKey {
        SigningKey::from_bytes(&[seed; 32])
    }

    /// Blinded shares combine to a `D'` whose decryption is no longer the
    /// sum (it is off by a uniform element, far outside the codec's range),
    /// and unblinding over the makers gives back exactly the `D` of the
    /// unblinded shares, which decodes to the sum.
    #[test]
    fn blinded_shares_hide_the_sum_until_unblinded_with_the_key() {
        let ToyCeremony {
            params,
            ids,
            secrets,
            key,
            mut rng,
            ..
        } = ToyCeremony::new(&["a", "b", "c"], [7; 32], 4);
        let codec = FixedPointCodec::new(&params, 3, 10.0).unwrap();
        let inputs = [[1.5, -2.0], [0.25, 3.0], [-1.0, 0.5]];
        let mut aggregate =
            EncryptedVector::encrypt(&params, &key, &codec, &inputs[0], &mut rng).unwrap();
        for x in &inputs[1..] {
            let v = EncryptedVector::encrypt(&params, &key, &codec, x, &mut rng).unwrap();
            aggregate.add_assign(&v).unwrap();
        }
        let shares: Vec<DecryptionShare> = secrets
            .iter()
            .map(|s| DecryptionShare::generate(&params, s, &aggregate, &mut rng).unwrap())
            .collect();
        let plain = CombinedShare::sum(&aggregate, &shares.iter().collect::<Vec<_>>()).unwrap();
        let k = ResultKey::generate(&mut rng);
        let ceremony = CeremonyId::new("c").unwrap();
        let ctx = BlindingContext {
            ceremony: &ceremony,
            study: "s",
            round: 3,
            aggregate_hash: &[9; 32],
        };
        let blinded: Vec<DecryptionShare> = shares
            .iter()
            .map(|s| {
                let mut s = s.clone();
                k.blind(&params, &ctx, &mut s).unwrap();
                s
            })
            .collect();
        let mut combined =
            CombinedShare::sum(&aggregate, &blinded.iter().collect::<Vec<_>>()).unwrap();
        assert_ne!(combined, plain);
        assert!(
            codec
                .decode(&combined.decrypt(&aggregate).unwrap(), 2)
                .is_err(),
            "a blinded combination must not decode"
        );
        // Another key, or another round's masks, do not unblind it.
        let mut wrong = combined.clone();
        ResultKey::generate(&mut rng)
            .unblind(&params, &ctx, &ids, &mut wrong)
            .unwrap();
        assert!(codec
            .decode(&wrong.decrypt(&aggregate).unwrap(), 2)
            .is_err());
        let mut other_round = combined.clone();
        k.unblind(
            &params,
            &BlindingContext { round: 4, ..ctx },
            &ids,
            &mut other_round,
        )
        .unwrap();
        assert!(codec
            .decode(&other_round.decrypt(&aggregate).unwrap(), 2)
            .is_err());
        k.unblind(&params, &ctx, &ids, &mut combined).unwrap();
        assert_eq!(combined, plain);
        let values = codec
            .decode(&combined.decrypt(&aggregate).unwrap(), 2)
            .unwrap();
        assert!((values[0] - 0.75).abs() < 1e-9 && (values[1] - 1.5).abs() < 1e-9);
    }

    /// A dealing round-trips through its bytes, each member opens its own key
    /// (the same key), and nobody opens another's: a wrong recipient, a
    /// tampered byte, another ceremony or a third party's identity key fail.
    #[test]
    fn a_dealt_key_opens_only_for_its_recipient() {
        let params = crate::ParameterSet::TOY_N1024
            .validate(crate::InsecurePolicy::Allow)
            .unwrap();
        let ceremony = CeremonyId::new("c1").unwrap();
        let ids: Vec<MemberId> = ["alpha", "beta", "gamma"]
            .iter()
            .map(|m| MemberId::new(*m).unwrap())
            .collect();
        let sks: Vec<SigningKey> = (1..=3).map(signing).collect();
        let roster: Vec<(MemberId, VerifyingKey)> = ids
            .iter()
            .cloned()
            .zip(sks.iter().map(|k| k.verifying_key()))
            .collect();
        let mut rng = Csprng::from_u128_seed(5);
        let key = ResultKey::generate(&mut rng);
        let dealer = result_key_dealer(&ids).unwrap().clone();
        assert_eq!(dealer.as_str(), "alpha");
        let dealing = ResultKeyDealing::deal(
            &params, &ceremony, &key, &dealer, &sks[0], &roster, &mut rng,
        )
        .unwrap();
        let bytes = dealing.to_bytes();
        let back = ResultKeyDealing::from_bytes(&bytes, 3).unwrap();
        assert_eq!(back, dealing);
        for (i, id) in ids.iter().enumerate() {
            let sealed =
                SealedResultKey::from_bytes(&back.for_recipient(id).unwrap().to_bytes()).unwrap();
            let opened = sealed
                .open(&params, &ceremony, id, &sks[i], &sks[0].verifying_key())
                .unwrap();
            assert_eq!(opened, key);
        }
        let to_beta = back.for_recipient(&ids[1]).unwrap();
        assert!(to_beta
            .open(
                &params,
                &ceremony,
                &ids[2],
                &sks[2],
                &sks[0].verifying_key()
            )
            .is_err());
        assert!(to_beta
            .open(
                &params,
                &ceremony,
                &ids[1],
                &signing(9),
                &sks[0].verifying_key()
            )
            .is_err());
        assert!(to_beta
            .open(
                &params,
                &CeremonyId::new("c2").unwrap(),
                &ids[1],
                &sks[1],
                &sks[0].verifying_key()
            )
            .is_err());
        let mut tampered = to_beta.clone();
        tampered.ciphertext[0] ^= 1;
        assert!(tampered
            .open(
                &params,
                &ceremony,
                &ids[1],
                &sks[1],
                &sks[0].verifying_key()
            )
            .is_err());
        // Bounds: too many entries for the ceremony, truncation, trailing bytes.
        assert!(ResultKeyDealing::from_bytes(&bytes, 2).is_err());
        assert!(ResultKeyDealing::from_bytes(&bytes[..bytes.len() - 1], 3).is_err());
        let mut long = bytes.clone();
        long.push(0);
        assert!(ResultKeyDealing::from_bytes(&long, 3).is_err());
        assert!(ResultKeyDealing::from_bytes(&[], 3).is_err());
        assert_eq!(format!("{key:?}"), "ResultKey(..)");
    }
}
