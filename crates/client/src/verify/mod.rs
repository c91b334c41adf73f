//! Verify before reveal and verify before decrypt (DESIGN.md §2 step 4, §6).
//!
//! Before it reveals its contribution, a member checks the round's frozen
//! commitment list ([`verify_commitments`]):
//!
//! 1. the list's hash is the canonical hash of its entries;
//! 2. every entry is a distinct ceremony member's signed commitment to
//!    (study, round, hash, value count, **the study spec's hash this member
//!    recorded**), so members shown different specs are detected;
//! 3. every entry has the list's value count, and at least
//!    `min_contributors` members committed (the member's own floor);
//! 4. its own commitment, if it made one, is listed with its hash.
//!
//! It produces a decryption share of an aggregate only if
//! ([`verify_before_decrypt`]), in addition,
//!
//! 5. the aggregate's hash is the one the server lists with the contributions;
//! 6. every listed contribution has a commitment in **the list this member
//!    checked before revealing**, with the same hash, and is signed by its
//!    member as revealed against that same list (so every contributor saw
//!    the list this member saw), and the bytes of those it fetched have that
//!    hash. The signature is the contributor's digest statement (check 7),
//!    which names the contribution's hash and that list, or, for a
//!    contributor that sent no digest, its reveal: one signature per
//!    contributor, checked in one batch
//!    ([`fedhe_api::signing::SignatureBatch`], issue 16), all of them or a
//!    random sample ("Sampled signatures" below). The list's own signatures
//!    were checked (likewise) before revealing and are not checked again
//!    when it is the list this member recorded then;
//! 7. at least `min_contributors` members contributed, its own contribution
//!    (if any) is listed byte for byte, and the aggregate is the sum of the
//!    listed contributions: its digest on a challenge fixed after it
//!    (`fedhe_crypto::sum_digest`) is the sum of the contributions' digests,
//!    each computed by this member from the bytes it fetched (its own, those
//!    whose contributor sent no digest, and a few chosen at random) or else
//!    signed by its contributor. A fetched contribution whose signed digest
//!    differs is refused naming its contributor. So a member downloads the
//!    aggregate, n small signed digests and a few contributions, not all n;
//!    an aggregate that is not the sum passes with probability below 2^−120,
//!    unless a contributor colludes with the server by signing a false
//!    digest. That the **c1 check** catches (issue 16,
//!    `fedhe_crypto::c1_commitment`), made by every member every round
//!    ([`crate::MemberSession::decrypt`]): every listed contributor's
//!    signed c1 commitment (or the one computed from bytes held, which must
//!    equal a signed one) has the hash committed in the list, and the
//!    aggregate's `c1` plus `p` times the server's carries opens their sum
//!    (`SECURITY.md`, step 5);
//! 8. it never produced a share for this round before (the share it makes is
//!    recorded in its state folder before it is sent, [`crate::MemberSession::decrypt`]).
//!
//! Once the server publishes the round's result, a member uses it only if
//! ([`verify_after_decrypt`])
//!
//! 9. every ceremony member's decryption share (t-of-n: at least T, the
//!    decrypting set, every fetched share made for that one set) is listed
//!    once, signed by its member over its hash (by its share digest
//!    statement, which names the hash, or, without a digest, its upload; one
//!    batch), and the bytes fetched have that hash;
//! 10. the published combined share `D` is the sum of the listed shares,
//!     checked on digests (issue 16) as the aggregate is in check 7: on a
//!     challenge fixed after `D` and the share list
//!     (`SumChallenge::derive_for_shares`), `D`'s digest is the sum of the
//!     shares' digests, each computed from the bytes this member holds (its
//!     own, those whose maker sent no digest, and a few chosen at random) or
//!     else signed by its maker (a fetched share whose signed digest differs
//!     is refused naming its maker); and `C0 + D − Σ r_j`, with the
//!     aggregate this member verified and the masks `r_j` of the listed
//!     makers under the members' result key (`fedhe_crypto::result_key`: the
//!     server publishes no values and cannot decode `D`), decodes by the
//!     aggregate's own encoding; that decoding is the round's result.
//!
//! **Sampled signatures** (issue 16), n-of-n only. In checks 2 and 6 a
//! member of an n-of-n ceremony verifies not every listed signature but a
//! uniformly random `k = min(L, ⌈λ·L/n⌉)` of the list's `L`
//! ([`SignatureSample`]), and always those of the contributions it
//! downloaded, with its own randomness drawn after it has the list. A
//! server that wants an aggregate other than the sum decrypted must show
//! each of the `n` members, all of whose shares it needs, a list with a
//! forged entry (check 7's bound); each misses it with probability at most
//! `1 − k/L`, independently, so all `n` do with probability at most
//! `(1 − k/L)^n ≤ e^(−kn/L) ≤ e^(−λ)`. A member downloads only the
//! sample's signatures, fetched by name after the list is pinned in its
//! state folder ([`crate::MemberSession`], SECURITY.md step 5), so the
//! server learns the sample only once it can no longer change the list
//! this member checks. In t-of-n the server fills the
//! decrypting set from the members that did not refuse, so it needs only
//! `T` that missed, and a member checks every signature
//! ([`SignatureChecks::for_decryption`]). Check 9 verifies every
//! signature: a false result need fool one member only.
//!
//! So no contribution can depend on another's (every one was committed
//! before any could be read, and the server cannot show different members
//! different lists), a server that deviates cannot have one member's
//! contribution decrypted alone or decrypt a round twice over different
//! member sets, and nobody can slip in contributions no member signed.

use ed25519_dalek::VerifyingKey;
use fedhe_api::signing::{
    contribution_statement, parse_public_key, round_commitment_statement, share_digest_statement,
    sum_digest_statement, upload_statement, SignatureBatch, SignatureError, UploadKind,
};
use fedhe_api::{CommitmentList, ContributionList, DecryptionShareList, MemberSpec, SumDigestList};
use fedhe_crypto::{
    check_c1_aggregate, AnyDecryptionShare, C1Carries, C1Commitment, CombinedShare,
    ContributorDigest, EncryptedVector, FixedPointCodec, MemberId, Params, SumChallenge, SumDigest,
    WireObject,
};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

mod aggregate;
mod commitments;
mod result;

pub use aggregate::verify_before_decrypt;
use commitments::committed_c1_hash;
pub use commitments::verify_commitments;
pub use result::{verify_after_decrypt, ResultEvidence};

/// Why a member refused to reveal its contribution, to produce a decryption
/// share or to use a result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("refusing round {round} of study {study}: {reason}")]
pub struct Refusal {
    /// The study.
    pub study: String,
    /// The round.
    pub round: u64,
    /// What kind of check failed: what a caller dispatches on.
    pub kind: RefusalKind,
    /// Which check failed, and on what entry (for people).
    pub reason: String,
}

/// Declares [`RefusalKind`] with its variants' names and [`RefusalKind::ALL`]
/// from one list, so no kind can lack a name or be missing from `ALL`.
macro_rules! refusal_kinds {
    ($($(#[doc = $doc:literal])* $kind:ident => $name:literal,)*) => {
        /// What kind of check a [`Refusal`] failed. Its reason names the entry.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum RefusalKind {
            $($(#[doc = $doc])* $kind,)*
        }

        impl RefusalKind {
            /// Every kind, in declaration order.
            pub const ALL: &[Self] = &[$(Self::$kind),*];

            /// The kind's stable name, in snake case (`c1_check`): what the
            /// Python package's `Refused.kind` carries.
            pub fn name(self) -> &'static str {
                match self {
                    $(Self::$kind => $name,)*
                }
            }
        }
    };
}

refusal_kinds! {
    /// The server's answer is not in the state or form the check needs: a
    /// list not frozen or without its value count, or an aggregate, upload,
    /// hash or share that does not decode.
    Malformed => "malformed",
    /// A list names a member twice, or two members committed to the same
    /// ciphertext or the same c1 commitment.
    Duplicate => "duplicate",
    /// A signature does not verify (a commitment, a reveal, a digest, a
    /// decryption share, a share digest), or a signed value is not the one
    /// of the upload it is listed with.
    Signature => "signature",
    /// Other bytes or another entry than the ones committed, signed or
    /// listed: a list whose hash is not its entries', an aggregate other
    /// than the listed one, a contribution other than its commitment's,
    /// served bytes without the signed hash, a share naming another maker.
    Substituted => "substituted",
    /// An upload without what its check needs: by someone outside the
    /// ceremony, without a commitment in the list, neither fetched nor
    /// digested, or a share for another decrypting set.
    Unaccounted => "unaccounted",
    /// An upload of another shape than the list's or the aggregate's: its
    /// value count, encoding or polynomial count.
    Shape => "shape",
    /// Fewer distinct contributors than the study's floor, or not the
    /// decryption shares the ceremony's threshold (or every member) needs.
    TooFew => "too_few",
    /// This member's own commitment or contribution missing or replaced, or
    /// a second aggregate or result of a round it already verified.
    Own => "own",
    /// The aggregate (or the combined decryption share) is not the sum of
    /// the listed uploads: their signed digests do not add up (check 6).
    NotTheSum => "not_the_sum",
    /// The aggregate's `c1` does not open the sum of the contributors'
    /// signed c1 commitments (the c1 check, check 7).
    C1Check => "c1_check",
    /// The combined decryption shares do not decode to a result.
    Undecodable => "undecodable",
}

/// The ceremony's members with their identity keys, parsed once (from the
/// member's own verified transcript, not from the server's word of the
/// moment).
#[derive(Clone, Debug)]
pub struct IdentityKeys(BTreeMap<String, VerifyingKey>);

impl IdentityKeys {
    /// Parses every member's key; a key that is not a valid ed25519 public
    /// key, or a member listed twice, is refused by name.
    pub fn parse(members: &[MemberSpec]) -> Result<Self, String> {
        let mut keys = BTreeMap::new();
        for m in members {
            let key = parse_public_key(&m.identity_key)
                .map_err(|e| format!("identity key of {}: {e}", m.id))?;
            if keys.insert(m.id.clone(), key).is_some() {
                return Err(format!(
                    "{} is listed twice among the ceremony's members",
                    m.id
                ));
            }
        }
        Ok(Self(keys))
    }

    /// The key of ceremony member `id`.
    fn key(&self, id: &str) -> Result<VerifyingKey, String> {
        self.0
            .get(id)
            .copied()
            .ok_or_else(|| format!("{id} is not a ceremony member"))
    }

    /// Whether `id` is a ceremony member.
    pub fn contains(&self, id: &str) -> bool {
        self.0.contains_key(id)
    }

    /// The members' ids, sorted.
    fn ids(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }
}

/// How many of a listed round's signatures a member checks before it
/// reveals and before it decrypts (issue 16; module docs, "Sampled
/// signatures").
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SignatureChecks {
    /// Every entry's signature, in one batch.
    All,
    /// A random sample of the entries' signatures, in one batch.
    Sampled(SignatureSample),
}

/// A member's random choice of which listed signatures to check: of a list
/// of `L` entries, a uniformly random `k = min(L, ⌈λ·L/T⌉)` of them, so that
/// a list with a forged entry escapes every one of the `T` members a
/// decryption needs with probability at most `e^−λ` (module docs). Sound
/// only when the shares of all `T` are needed whoever refuses, that is in
/// n-of-n ([`SignatureChecks::for_decryption`]).
#[derive(Clone, PartialEq, Eq)]
pub struct SignatureSample {
    /// λ, the policy's `signature_sampling`.
    pub security: usize,
    /// T: the members every one of whose decryption shares a decryption
    /// needs (n, in n-of-n: [`SignatureChecks::for_decryption`]).
    pub decrypting: usize,
    /// This member's private randomness for the choice (never sent: a
    /// server that knew it could forge the entries not chosen).
    pub seed: [u8; 32],
}

impl std::fmt::Debug for SignatureSample {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignatureSample")
            .field("security", &self.security)
            .field("decrypting", &self.decrypting)
            .finish_non_exhaustive()
    }
}

impl SignatureSample {
    /// `k = min(L, ⌈λ·L/T⌉)` of a list of `listed` entries.
    pub fn size(&self, listed: usize) -> usize {
        if self.decrypting == 0 {
            return listed;
        }
        self.security
            .saturating_mul(listed)
            .div_ceil(self.decrypting)
            .min(listed)
    }
}

impl SignatureChecks {
    /// The checks a member of a ceremony of `members` makes of a signed list
    /// before revealing and before decrypting, with λ = `security`:
    ///
    /// - n-of-n (`threshold` `None`, or equal to `members`): a random
    ///   `⌈λ·L/n⌉` of a list's `L` ([`SignatureSample`]). Every member's share
    ///   is needed, so a forged entry must escape all n, each independently:
    ///   at most `e^−λ`.
    /// - t-of-n (`threshold < members`): **every** signature. The server
    ///   fills the decrypting set from the members that claim a place, and a
    ///   member that catches a forged entry refuses and never claims; so the
    ///   server needs only T members that missed it, not every member to
    ///   miss it. With `⌈λ·L/T⌉` sampled from two lists (commitments before
    ///   revealing, digests before decrypting), at n = 1,000 and T = 501 each
    ///   honest member would miss one forged entry with probability 0.94 and
    ///   the decrypting set would fill with members that missed it almost
    ///   surely (test
    ///   `t_of_n_checks_every_signature_for_the_server_fills_the_decrypting_set_from_members_that_did_not_refuse`).
    pub fn for_decryption(
        security: usize,
        members: usize,
        threshold: Option<usize>,
        seed: [u8; 32],
    ) -> Self {
        match threshold {
            Some(t) if t < members => SignatureChecks::All,
            _ => SignatureChecks::Sampled(SignatureSample {
                security,
                decrypting: members,
                seed,
            }),
        }
    }

    /// The members among `listed` (in the order the check walks them:
    /// sorted for a commitment list, [`COMMITMENT_SAMPLE`]; the contribution
    /// list's order, [`CONTRIBUTION_SAMPLE`]) whose signatures the check
    /// verifies: what a member fetches by name before it checks (issue 16).
    pub fn chosen_members<'a>(&self, listed: &[&'a str], list: [u8; 8]) -> Vec<&'a str> {
        listed
            .iter()
            .zip(self.chosen(listed.len(), list))
            .filter_map(|(m, chosen)| chosen.then_some(*m))
            .collect()
    }

    /// Which of `listed` entries (in the order the caller walks them) have
    /// their signature checked; `list` separates the choices for the lists
    /// one member checks with one seed.
    fn chosen(&self, listed: usize, list: [u8; 8]) -> Vec<bool> {
        let SignatureChecks::Sampled(sample) = self else {
            return vec![true; listed];
        };
        let k = sample.size(listed);
        let mut chosen = vec![false; listed];
        if k == listed {
            chosen.fill(true);
            return chosen;
        }
        // The first k of a Fisher–Yates shuffle: a uniform k-subset.
        let mut rng = fedhe_ring::Csprng::from_seed(&sample.seed, list);
        let mut order: Vec<usize> = (0..listed).collect();
        for i in 0..k {
            let left = (listed - i) as u64;
            let j = i + if left > 1 {
                rng.uniform_below(left) as usize
            } else {
                0
            };
            order.swap(i, j);
            chosen[order[i]] = true;
        }
        chosen
    }
}

/// What separates a commitment list's sample from a contribution list's
/// drawn with the same seed ([`SignatureChecks::chosen_members`]).
pub const COMMITMENT_SAMPLE: [u8; 8] = *b"fedh-cms";

/// What separates a contribution list's sample (its digests' signatures,
/// or its reveals' where a digest is missing) from a commitment list's.
pub const CONTRIBUTION_SAMPLE: [u8; 8] = *b"fedh-cts";

/// Whether [`verify_commitments`] checks the entries' signatures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CommitmentSignatures {
    /// Every entry's signature, or a random sample of them, in one batch.
    Check(SignatureChecks),
    /// None: the list is the one this member recorded before it revealed,
    /// after checking its signatures (all, or a random sample)
    /// ([`crate::MemberSession::reveal`]); its hash, shape and quorum are
    /// checked again.
    CheckedWhenRecorded,
    /// Nothing: this session checked the list (its hash, shape, quorum,
    /// this member's own entry and the signatures) before it revealed, and
    /// has kept it in memory since (a list of a thousand entries, checked
    /// again by each of a thousand members before decrypting, cost a
    /// thousandth of a second each; issue 16). A list read back from the
    /// record is [`Self::CheckedWhenRecorded`]. Only this crate makes one.
    VerifiedInThisSession(SessionCheck),
}

/// The mark of a commitment list a [`crate::MemberSession`] checked itself
/// ([`CommitmentSignatures::VerifiedInThisSession`]): made only inside this
/// crate, so no caller of [`verify_commitments`] can skip its checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionCheck(pub(crate) ());

/// A round's frozen commitment list, and what a member checks it against.
pub struct CommitmentEvidence<'a> {
    /// The study.
    pub study: &'a str,
    /// The round.
    pub round: u64,
    /// The ceremony's members with their identity keys.
    pub members: &'a IdentityKeys,
    /// The hash of the study spec this member recorded before its first
    /// contribution.
    pub spec_hash: &'a str,
    /// The member's own floor on distinct contributors.
    pub min_contributors: usize,
    /// The frozen list.
    pub list: &'a CommitmentList,
    /// This member and its own contribution, if it committed one.
    pub own: Option<(&'a str, &'a [u8])>,
    /// The hash of its own contribution's c1 commitment, if it committed
    /// one (checked against its listed entry like the contribution's hash).
    pub own_c1_commitment_hash: Option<[u8; 32]>,
    /// Whether the entries' signatures are still to be checked.
    pub signatures: CommitmentSignatures,
}

/// What a member checks before decrypting.
pub struct Evidence<'a> {
    /// The commitment list this member checked before it revealed (or, for
    /// a member that contributed nothing, the list as served now).
    pub commitments: CommitmentEvidence<'a>,
    /// The server's list of contributions.
    pub list: &'a ContributionList,
    /// The bytes of the listed contributions this member fetched (its own,
    /// those without a signed digest and its spot checks).
    pub contributions: &'a [(String, Vec<u8>)],
    /// The contributors' signed digests on this aggregate's challenge.
    pub digests: &'a SumDigestList,
    /// The aggregate's bytes, as fetched.
    pub aggregate: &'a [u8],
    /// Which contributors' signatures are checked (besides those of the
    /// contributions fetched, which always are).
    pub signatures: SignatureChecks,
    /// The aggregate's carries (`fedhe_crypto::C1Carries` bytes), with which
    /// this member checks the aggregate's c1 against the contributors' c1
    /// commitments (check 7; a member session always passes them).
    pub c1_carries: Option<&'a [u8]>,
}

/// The first of each member's entries in `items`, by member (a server that
/// lists a member twice gains nothing: the first is used, as a search would).
fn by_member<'a, T>(
    items: impl IntoIterator<Item = &'a T>,
    member: impl Fn(&'a T) -> &'a str,
) -> HashMap<&'a str, &'a T> {
    let mut map = HashMap::new();
    for item in items {
        map.entry(member(item)).or_insert(item);
    }
    map
}

/// Which signature of a listed entry failed: names the entry in a refusal.
enum Signed<'a> {
    /// A contribution's reveal (no digest was sent for it).
    Reveal(&'a str),
    /// A contributor's digest statement.
    SumDigest(&'a str),
    /// A decryption share's upload (no share digest was sent for it).
    Share(&'a str),
    /// A share maker's share-digest statement.
    ShareDigest(&'a str),
}

impl Signed<'_> {
    fn refusal(&self, e: SignatureError) -> String {
        match self {
            Signed::Reveal(m) => format!(
                "the contribution listed for {m} was not revealed against the commitment list I saw: {e}"
            ),
            Signed::SumDigest(m) => format!(
                "the digest listed for {m} was not signed by it for this aggregate and list: {e}"
            ),
            Signed::Share(m) => {
                format!("the decryption share listed for {m} is not signed by it: {e}")
            }
            Signed::ShareDigest(m) => format!(
                "the share digest listed for {m} was not signed by it for this combined share and list: {e}"
            ),
        }
    }
}

/// How the reason of a [`RefusalKind::C1Check`] refusal of
/// [`verify_before_decrypt`] begins (the aggregate's `c1` does not open the
/// sum of the contributors' c1 commitments): [`crate::MemberSession::decrypt`]
/// then downloads every contribution to name the contributor whose bytes do
/// not open its own.
pub const C1_CHECK_FAILED: &str = "the aggregate is not the sum of the committed contributions";

#[cfg(test)]
mod tests {
    use super::*;
    use fedhe_api::{CommittedContribution, Identity, RoundState, SignedSumDigest, SignedUpload};
    use fedhe_crypto::decryption::combine;
    use fedhe_crypto::threshold::{combine_threshold, ThresholdSecretShare, Thresholdizer};
    use fedhe_crypto::AccessStructure;
    use fedhe_crypto::CarryingSum;
    use fedhe_crypto::{
        CeremonyId, CollectivePublicKey, CommonRandomPoly, FixedPointCodec, InsecurePolicy,
        MemberId, ParameterSet, PublicKeyShare, SecretKeyShare,
    };
    use fedhe_crypto::{DecryptionShare, ThresholdDecryptionShare};
    use fedhe_ring::Csprng;

    #[test]
    fn every_refusal_kind_has_a_name_of_its_own_in_snake_case() {
        let names: BTreeSet<&str> = RefusalKind::ALL.iter().map(|k| k.name()).collect();
        assert_eq!(names.len(), RefusalKind::ALL.len(), "{names:?}");
        for kind in RefusalKind::ALL {
            let name = kind.name();
            assert!(
                !name.is_empty()
                    && name
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
                "{kind:?}: {name}"
            );
            // The name is the variant's, split at its capitals.
            let variant = format!("{kind:?}");
            assert_eq!(
                name.replace('_', ""),
                variant.to_ascii_lowercase(),
                "{kind:?}"
            );
        }
    }

    struct World {
        params: Arc<Params>,
        members: Vec<MemberSpec>,
        keys: IdentityKeys,
        identities: Vec<Identity>,
        secrets: Vec<SecretKeyShare>,
        contributions: Vec<(String, Vec<u8>)>,
        crs: CommonRandomPoly,
        pk_shares: Vec<PublicKeyShare>,
        /// c1 commitments made so far, by the BLAKE3 of the bytes (one
        /// multiscalar multiplication each, so made once per test).
        c1_memo: std::cell::RefCell<HashMap<[u8; 32], C1Commitment>>,
    }

    /// Three members, each with a signed contribution of one value.
    fn world() -> World {
        world_of(&["a", "b", "c"])
    }

    /// A ceremony of the members `names`, each with a contribution.
    fn world_of(names: &[&str]) -> World {
        let params = ParameterSet::TOY_N1024
            .validate(InsecurePolicy::Allow)
            .unwrap();
        let ids: Vec<MemberId> = names.iter().map(|n| MemberId::new(*n).unwrap()).collect();
        let crs =
            CommonRandomPoly::for_ceremony(&params, &CeremonyId::new("c").unwrap(), &ids).unwrap();
        let mut rng = Csprng::from_u128_seed(3);
        let secrets: Vec<SecretKeyShare> = ids
            .iter()
            .map(|m| SecretKeyShare::generate(&params, m.clone(), &mut rng))
            .collect();
        let shares: Vec<PublicKeyShare> = secrets
            .iter()
            .map(|sk| PublicKeyShare::generate(&params, sk, &crs, &mut rng).unwrap())
            .collect();
        let key = CollectivePublicKey::aggregate(&crs, &ids, &shares).unwrap();
        let codec = FixedPointCodec::new(&params, 3, 10.0).unwrap();
        let identities: Vec<Identity> = names.iter().map(|_| Identity::generate()).collect();
        let contributions = names
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let v =
                    EncryptedVector::encrypt(&params, &key, &codec, &[(i % 4) as f64], &mut rng)
                        .unwrap();
                (n.to_string(), v.to_bytes(&params))
            })
            .collect();
        let members: Vec<MemberSpec> = names
            .iter()
            .zip(&identities)
            .map(|(n, id)| MemberSpec {
                id: n.to_string(),
                identity_key: id.public_key_hex(),
            })
            .collect();
        World {
            keys: IdentityKeys::parse(&members).unwrap(),
            members,
            params,
            identities,
            secrets,
            contributions,
            crs,
            pk_shares: shares,
            c1_memo: Default::default(),
        }
    }

    const SPEC: &str = "spec-hash";

    impl World {
        /// Member i's commitment to `bytes` under `spec` (with the hash of
        /// their c1 commitment, or of a stand-in if they are no contribution).
        fn committed(&self, i: usize, bytes: &[u8], spec: &str) -> CommittedContribution {
            let hash = blake3::hash(bytes);
            let c1_hash = match EncryptedVector::from_bytes(&self.params, bytes) {
                Ok(_) => self.c1_of(bytes).hash(),
                Err(_) => *blake3::hash(&[b"c1 ", bytes].concat()).as_bytes(),
            };
            CommittedContribution {
                member: self.members[i].id.clone(),
                hash: hash.to_hex().to_string(),
                values: 1,
                c1_commitment_hash: hex::encode(c1_hash),
                signature: self.identities[i].sign_hex(&round_commitment_statement(
                    "s",
                    &self.members[i].id,
                    1,
                    hash.as_bytes(),
                    1,
                    spec,
                    &c1_hash,
                )),
            }
        }

        /// The c1 commitment to a contribution's bytes.
        fn c1_of(&self, bytes: &[u8]) -> C1Commitment {
            let key = *blake3::hash(bytes).as_bytes();
            self.c1_memo
                .borrow_mut()
                .entry(key)
                .or_insert_with(|| {
                    let v = EncryptedVector::from_bytes(&self.params, bytes).unwrap();
                    C1Commitment::commit(&self.params, &v)
                })
                .clone()
        }

        /// The carries of the server's sum of the contributions `which`.
        fn carries(&self, which: &[usize]) -> Vec<u8> {
            let mut vs = which.iter().map(|i| {
                EncryptedVector::from_bytes(&self.params, &self.contributions[*i].1).unwrap()
            });
            let mut sum = CarryingSum::new(&self.params, vs.next().unwrap());
            for v in vs {
                sum.add(&self.params, &v).unwrap();
            }
            sum.into_parts().1.to_bytes(&self.params)
        }

        /// The frozen list of every member's commitment to its contribution.
        fn commitments(&self) -> CommitmentList {
            let entries: Vec<_> = (0..self.members.len())
                .map(|i| self.committed(i, &self.contributions[i].1, SPEC))
                .collect();
            frozen(entries)
        }

        /// Member i's reveal of `bytes` against the list of hash `list_hash`.
        fn revealed(&self, i: usize, bytes: &[u8], list_hash: &str) -> SignedUpload {
            let hash = blake3::hash(bytes);
            SignedUpload {
                member: self.members[i].id.clone(),
                hash: hash.to_hex().to_string(),
                signature: self.identities[i].sign_hex(&contribution_statement(
                    "s",
                    &self.members[i].id,
                    1,
                    hash.as_bytes(),
                    list_hash,
                )),
            }
        }

        fn signed(&self, i: usize, bytes: &[u8]) -> SignedUpload {
            let list = self.commitments();
            self.revealed(i, bytes, list.list_hash.as_deref().unwrap())
        }

        fn sum(&self, which: &[usize]) -> Vec<u8> {
            let vs: Vec<EncryptedVector> = which
                .iter()
                .map(|i| {
                    EncryptedVector::from_bytes(&self.params, &self.contributions[*i].1).unwrap()
                })
                .collect();
            EncryptedVector::sum(vs.iter())
                .unwrap()
                .to_bytes(&self.params)
        }

        /// Every contribution fetched, no digests.
        fn check(
            &self,
            list: Vec<SignedUpload>,
            aggregate: &[u8],
            min: usize,
            own: Option<usize>,
        ) -> Result<EncryptedVector, Refusal> {
            self.check_with(list, aggregate, min, own, &[0, 1, 2], &[])
        }

        /// The contributor's signed digest of `bytes` on the challenge of
        /// `aggregate` and the list `uploads` (`bytes` need not be what it
        /// contributed: a colluding contributor's false digest).
        fn digest(
            &self,
            i: usize,
            bytes: &[u8],
            uploads: &[SignedUpload],
            aggregate: &[u8],
        ) -> SignedSumDigest {
            let list = self.commitments();
            self.digest_naming(
                i,
                bytes,
                uploads,
                aggregate,
                list.list_hash.as_deref().unwrap(),
            )
        }

        /// [`Self::digest`], its statement naming the commitment list
        /// `commitment_list_hash`.
        fn digest_naming(
            &self,
            i: usize,
            bytes: &[u8],
            uploads: &[SignedUpload],
            aggregate: &[u8],
            commitment_list_hash: &str,
        ) -> SignedSumDigest {
            let list = self.listed(uploads.to_vec(), aggregate);
            let entries = list.entries_hash("s", 1);
            let aggregate_hash = blake3::hash(aggregate);
            let v = EncryptedVector::from_bytes(&self.params, bytes).unwrap();
            let digest = ContributorDigest {
                sum: SumChallenge::derive(
                    &self.params,
                    "s",
                    1,
                    &entries,
                    aggregate_hash.as_bytes(),
                )
                .digest(&self.params, &v),
                c1: self.c1_of(bytes),
            }
            .to_bytes();
            self.sign_digest_naming(i, &digest, uploads, aggregate, commitment_list_hash)
        }

        /// Contributor i's signature of the digest bytes `digest` (whatever
        /// they are) on the challenge of `aggregate` and `uploads`.
        fn sign_digest(
            &self,
            i: usize,
            digest: &[u8],
            uploads: &[SignedUpload],
            aggregate: &[u8],
        ) -> SignedSumDigest {
            let list = self.commitments();
            self.sign_digest_naming(
                i,
                digest,
                uploads,
                aggregate,
                list.list_hash.as_deref().unwrap(),
            )
        }

        /// [`Self::sign_digest`] naming the commitment list `commitment_list_hash`.
        fn sign_digest_naming(
            &self,
            i: usize,
            digest: &[u8],
            uploads: &[SignedUpload],
            aggregate: &[u8],
            commitment_list_hash: &str,
        ) -> SignedSumDigest {
            let list = self.listed(uploads.to_vec(), aggregate);
            let entries = list.entries_hash("s", 1);
            let aggregate_hash = blake3::hash(aggregate);
            let own_hash = blake3::hash(&self.contributions[i].1);
            SignedSumDigest {
                member: self.members[i].id.clone(),
                digest: hex::encode(digest),
                signature: self.identities[i].sign_hex(&sum_digest_statement(
                    "s",
                    &self.members[i].id,
                    1,
                    own_hash.as_bytes(),
                    commitment_list_hash,
                    &entries,
                    aggregate_hash.as_bytes(),
                    digest,
                )),
            }
        }

        fn listed(&self, list: Vec<SignedUpload>, aggregate: &[u8]) -> ContributionList {
            ContributionList {
                state: RoundState::Decrypting,
                contributions: list,
                aggregate_hash: Some(blake3::hash(aggregate).to_hex().to_string()),
            }
        }

        /// The contributions `fetched` downloaded, `digests` signed.
        fn check_with(
            &self,
            list: Vec<SignedUpload>,
            aggregate: &[u8],
            min: usize,
            own: Option<usize>,
            fetched: &[usize],
            digests: &[SignedSumDigest],
        ) -> Result<EncryptedVector, Refusal> {
            self.check_signatures(
                list,
                aggregate,
                min,
                own,
                fetched,
                digests,
                SignatureChecks::All,
                None,
            )
        }

        /// [`Self::check_with`], checking the contributors' `signatures`.
        #[allow(clippy::too_many_arguments)]
        fn check_signatures(
            &self,
            list: Vec<SignedUpload>,
            aggregate: &[u8],
            min: usize,
            own: Option<usize>,
            fetched: &[usize],
            digests: &[SignedSumDigest],
            signatures: SignatureChecks,
            c1_carries: Option<&[u8]>,
        ) -> Result<EncryptedVector, Refusal> {
            let list = self.listed(list, aggregate);
            let contributions: Vec<(String, Vec<u8>)> = fetched
                .iter()
                .map(|i| self.contributions[*i].clone())
                .collect();
            let digests = SumDigestList {
                state: RoundState::Decrypting,
                digests: digests.to_vec(),
                aggregate_hash: list.aggregate_hash.clone(),
            };
            let own = own.map(|i| {
                (
                    self.members[i].id.as_str(),
                    self.contributions[i].1.as_slice(),
                )
            });
            let commitments = self.commitments();
            verify_before_decrypt(
                &self.params,
                &Evidence {
                    commitments: CommitmentEvidence {
                        study: "s",
                        round: 1,
                        members: &self.keys,
                        spec_hash: SPEC,
                        min_contributors: min,
                        list: &commitments,
                        own,
                        own_c1_commitment_hash: None,
                        signatures: CommitmentSignatures::Check(SignatureChecks::All),
                    },
                    list: &list,
                    contributions: &contributions,
                    digests: &digests,
                    aggregate,
                    signatures,
                    c1_carries,
                },
            )
        }
    }

    fn frozen(mut entries: Vec<CommittedContribution>) -> CommitmentList {
        entries.sort_by(|a, b| a.member.cmp(&b.member));
        CommitmentList {
            state: RoundState::Collecting,
            values: Some(1),
            list_hash: Some(CommitmentList::canonical_hash("s", 1, &entries)),
            commitments: entries,
        }
    }

    fn reason(r: Result<EncryptedVector, Refusal>) -> String {
        r.err()
            .map(|e| e.to_string())
            .unwrap_or_else(|| "accepted".into())
    }

    /// The reason of a refusal of `kind` (what a caller dispatches on);
    /// panics on acceptance or on another kind.
    fn refused_as<T: std::fmt::Debug>(r: Result<T, Refusal>, kind: RefusalKind) -> String {
        let e = r.expect_err("refused");
        assert_eq!(e.kind, kind, "{e}");
        e.to_string()
    }

    fn sampled(security: usize, decrypting: usize, trial: u64) -> SignatureChecks {
        let mut seed = [0u8; 32];
        seed[..8].copy_from_slice(&trial.to_le_bytes());
        SignatureChecks::Sampled(SignatureSample {
            security,
            decrypting,
            seed,
        })
    }

    /// k = min(L, ⌈λ·L/T⌉) on hand-computed cases, and the bound it is
    /// chosen for: T members with independent samples all miss one forged
    /// entry of L with probability (1 − k/L)^T ≤ e^−λ.
    #[test]
    fn the_sample_size_bounds_a_forgerys_escape_by_e_to_the_minus_lambda() {
        let size = |security, decrypting, listed| {
            SignatureSample {
                security,
                decrypting,
                seed: [0; 32],
            }
            .size(listed)
        };
        assert_eq!(size(16, 1000, 1000), 16);
        assert_eq!(size(16, 501, 1000), 32); // 16000/501 = 31.9
        assert_eq!(size(16, 100, 100), 16);
        assert_eq!(size(16, 10, 10), 10);
        assert_eq!(size(16, 60, 40), 11); // 640/60 = 10.7
        assert_eq!(size(usize::MAX, 3, 5), 5);
        assert_eq!(size(16, 0, 7), 7);
        assert_eq!(size(16, 5, 0), 0);
        for security in [1usize, 4, 16] {
            for listed in 1..=200usize {
                for decrypting in 1..=250usize {
                    let k = size(security, decrypting, listed);
                    let escape = (1.0 - k as f64 / listed as f64).powi(decrypting as i32);
                    assert!(
                        escape <= (-(security as f64)).exp() * (1.0 + 1e-12),
                        "λ {security}, L {listed}, T {decrypting}: k {k} escapes with {escape}"
                    );
                }
            }
        }
    }

    /// P(X ≥ t) for X ~ Binomial(n, q), summed in logs.
    fn binomial_tail(n: usize, q: f64, t: usize) -> f64 {
        let ln_choose = |k: usize| -> f64 {
            (1..=k)
                .map(|i| ((n - k + i) as f64).ln() - (i as f64).ln())
                .sum()
        };
        (t..=n)
            .map(|k| (ln_choose(k) + k as f64 * q.ln() + (n - k) as f64 * (1.0 - q).ln()).exp())
            .sum()
    }

    /// Sampling is sound in n-of-n only. In t-of-n a member that catches a
    /// forged entry refuses and never claims a place in the decrypting set,
    /// which the server fills with T of those that did not: so every
    /// signature is checked there.
    #[test]
    fn t_of_n_checks_every_signature_for_the_server_fills_the_decrypting_set_from_members_that_did_not_refuse(
    ) {
        let seed = [7u8; 32];
        for (members, threshold) in [(100, None), (100, Some(100)), (7, None)] {
            match SignatureChecks::for_decryption(16, members, threshold, seed) {
                SignatureChecks::Sampled(s) => {
                    assert_eq!((s.security, s.decrypting, s.seed), (16, members, seed))
                }
                SignatureChecks::All => panic!("n-of-n ({members}, {threshold:?}) samples"),
            }
        }
        for (members, threshold) in [(100, 51), (1000, 501), (5, 3), (5, 4)] {
            let checks = SignatureChecks::for_decryption(16, members, Some(threshold), seed);
            assert_eq!(checks, SignatureChecks::All, "{threshold}-of-{members}");
            assert!(checks.chosen(members, *b"fedh-tst").iter().all(|c| *c));
        }
        // Why. Had a t-of-n member sampled ⌈λ·L/T⌉ of each of the two lists
        // (commitments before revealing, digests before decrypting) with no
        // spot checks (`spot_checks = 0`; 16 of 999 barely change the
        // second), one forged entry of a server alone would pass the T
        // members it needs with these probabilities, where n-of-n's is below
        // e^−16:
        for (members, threshold, at_least) in [(100usize, 51usize, 0.1), (1000, 501, 0.999)] {
            let k = size_of(16, threshold, members);
            let miss = (1.0 - k as f64 / members as f64).powi(2);
            // The forged member itself sees its own entry; the other n − 1
            // are honest.
            let escape = binomial_tail(members - 1, miss, threshold);
            assert!(
                escape > at_least,
                "{threshold}-of-{members}: k {k}, a member misses with {miss}, escape {escape}"
            );
        }
        let n_of_n = binomial_tail(1000, (1.0 - 16.0 / 1000.0f64).powi(2), 1000);
        assert!(n_of_n < (-16.0f64).exp(), "{n_of_n}");
    }

    fn size_of(security: usize, decrypting: usize, listed: usize) -> usize {
        SignatureSample {
            security,
            decrypting,
            seed: [0; 32],
        }
        .size(listed)
    }

    #[test]
    fn a_sample_is_a_uniform_subset_of_its_size() {
        let (listed, trials) = (20usize, 4000u64);
        let mut counts = [0u64; 20];
        for trial in 0..trials {
            let chosen = sampled(5, 20, trial).chosen(listed, *b"fedh-tst");
            assert_eq!(chosen.iter().filter(|c| **c).count(), 5);
            for (i, c) in chosen.iter().enumerate() {
                counts[i] += *c as u64;
            }
        }
        // Each position is chosen with probability 5/20: 1000 times expected.
        let chi2: f64 = counts
            .iter()
            .map(|&c| (c as f64 - 1000.0).powi(2) / 1000.0)
            .sum();
        assert!(
            chi2 < 43.8,
            "χ²(19) {chi2} beyond its 99.9% point: {counts:?}"
        );
        // Another list, or another seed, is another choice.
        let a = sampled(5, 20, 1).chosen(listed, *b"fedh-tst");
        assert_ne!(a, sampled(5, 20, 1).chosen(listed, *b"fedh-oth"));
        assert_ne!(a, sampled(5, 20, 2).chosen(listed, *b"fedh-tst"));
        assert_eq!(SignatureChecks::All.chosen(3, *b"fedh-tst"), vec![true; 3]);
    }

    /// A server's forged signature in a list of 40 escapes a member that
    /// checks a sample of k = 4 with probability 1 − 4/40: it is refused,
    /// by name, in about one trial in ten, always when the member checks
    /// every signature or fetched that contribution, and an honest list is
    /// never refused. Likewise for a forged commitment.
    #[test]
    fn a_forged_signature_is_caught_at_the_rate_of_the_sample() {
        let names: Vec<String> = (0..40).map(|i| format!("m{i:02}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let w = world_of(&names);
        let everyone: Vec<usize> = (0..40).collect();
        let all: Vec<SignedUpload> = (0..40)
            .map(|i| w.signed(i, &w.contributions[i].1))
            .collect();
        let aggregate = w.sum(&everyone);
        let honest: Vec<SignedSumDigest> = (1..40)
            .map(|i| w.digest(i, &w.contributions[i].1, &all, &aggregate))
            .collect();
        // m07's digest carrying m08's signature (on m08's own statement).
        let mut forged = honest.clone();
        forged[6].signature = honest[7].signature.clone();
        let check = |digests: &[SignedSumDigest], fetched: &[usize], signatures| {
            w.check_signatures(
                all.clone(),
                &aggregate,
                40,
                Some(0),
                fetched,
                digests,
                signatures,
                None,
            )
        };
        let trials = 300;
        let mut caught = 0;
        for trial in 0..trials {
            assert!(check(&honest, &[0], sampled(4, 40, trial)).is_ok());
            match check(&forged, &[0], sampled(4, 40, trial)) {
                Ok(_) => {}
                Err(r) => {
                    assert!(
                        r.reason
                            .contains("the digest listed for m07 was not signed by it"),
                        "{r}"
                    );
                    caught += 1;
                }
            }
            let r = check(&forged, &[0, 7], sampled(4, 40, trial));
            assert!(
                reason(r).contains("m07"),
                "a fetched contribution's signature went unchecked"
            );
        }
        // Binomial(300, 0.1): mean 30, sd 5.2.
        assert!((12..=50).contains(&caught), "caught {caught} of {trials}");
        assert!(reason(check(&forged, &[0], SignatureChecks::All)).contains("m07"));

        // A forged commitment (m07's entry signed by m08) in a list an
        // observer checks as served.
        let mut list = w.commitments();
        let m08 = list.commitments[8].signature.clone();
        list.commitments[7].signature = m08;
        list.list_hash = Some(CommitmentList::canonical_hash("s", 1, &list.commitments));
        let mut caught = 0;
        for trial in 0..trials {
            let r = verify_commitments(&CommitmentEvidence {
                study: "s",
                round: 1,
                members: &w.keys,
                spec_hash: SPEC,
                min_contributors: 40,
                list: &list,
                own: None,
                own_c1_commitment_hash: None,
                signatures: CommitmentSignatures::Check(sampled(4, 40, trial)),
            });
            if let Err(r) = r {
                assert!(
                    r.reason.contains("the commitment of m07 does not verify"),
                    "{r}"
                );
                caught += 1;
            }
        }
        assert!((12..=50).contains(&caught), "caught {caught} of {trials}");
    }

    #[test]
    fn an_honest_aggregate_is_accepted() {
        let w = world();
        let list = (0..3).map(|i| w.signed(i, &w.contributions[i].1)).collect();
        assert!(w.check(list, &w.sum(&[0, 1, 2]), 3, Some(0)).is_ok());
    }

    #[test]
    fn an_honest_aggregate_is_accepted_on_digests_and_one_download() {
        let w = world();
        let all: Vec<SignedUpload> = (0..3).map(|i| w.signed(i, &w.contributions[i].1)).collect();
        let aggregate = w.sum(&[0, 1, 2]);
        let digests: Vec<SignedSumDigest> = (1..3)
            .map(|i| w.digest(i, &w.contributions[i].1, &all, &aggregate))
            .collect();
        // Member a holds its own contribution; b and c count by their digests.
        let decoded = w
            .check_with(all.clone(), &aggregate, 3, Some(0), &[0], &digests)
            .unwrap();
        assert_eq!(decoded.to_bytes(&w.params), aggregate);
        // An observer that downloaded c alone (a spot check) and holds no
        // digest of a is refused: a is neither fetched nor digested.
        let r = w.check_with(all.clone(), &aggregate, 3, None, &[2], &digests);
        assert!(refused_as(r, RefusalKind::Unaccounted)
            .contains("the contribution of a was neither fetched nor digested"));
        // Digests only, nothing downloaded: the encoding is unchecked.
        let mut every = digests.clone();
        every.push(w.digest(0, &w.contributions[0].1, &all, &aggregate));
        let r = w.check_with(all, &aggregate, 3, None, &[], &every);
        assert!(
            refused_as(r, RefusalKind::Unaccounted).contains("no listed contribution was fetched")
        );
    }

    /// The conflict issue 16 left: a contributor colluding with the server
    /// signs a digest that makes a substituted aggregate pass the linear
    /// check, which only a download of its bytes caught. The c1 check
    /// catches it with no download: the colluder's signed c1 commitment is
    /// either the one it committed to before it could see anything (then the
    /// equation fails) or not (then its hash differs from the committed one).
    #[test]
    fn a_colluding_contributors_false_digest_is_caught_by_the_c1_check_without_a_download() {
        let w = world();
        let all: Vec<SignedUpload> = (0..3).map(|i| w.signed(i, &w.contributions[i].1)).collect();
        // b's contribution counted twice, c's not at all; the server's
        // carries are the true ones of that sum.
        let forged = w.sum(&[0, 1, 1]);
        let forged_carries = w.carries(&[0, 1, 1]);
        let b = w.digest(1, &w.contributions[1].1, &all, &forged);
        // c signs the digest (and c1 commitment) of b's bytes.
        let lying = vec![b.clone(), w.digest(2, &w.contributions[1].1, &all, &forged)];
        let check = |digests: &[SignedSumDigest], carries: Option<&[u8]>| {
            reason(w.check_signatures(
                all.clone(),
                &forged,
                3,
                Some(0),
                &[0],
                digests,
                SignatureChecks::All,
                carries,
            ))
        };
        // Without the c1 check, holding only its own: the lie passes.
        assert_eq!(check(&lying, None), "accepted");
        assert!(
            check(&lying, Some(&forged_carries))
                .contains("the c1 commitment of c is not the one it committed to"),
            "{}",
            check(&lying, Some(&forged_carries))
        );
        // c's linear digest lies, its c1 commitment is its own: the sum of
        // the committed c1 does not open the forged aggregate, whatever the
        // carries.
        let own_c1 = w.c1_of(&w.contributions[2].1);
        let mut mixed = lying.clone();
        let bytes = hex::decode(&mixed[1].digest).unwrap();
        let mut d = ContributorDigest::from_bytes(&w.params, &bytes).unwrap();
        d.c1 = own_c1;
        mixed[1] = w.sign_digest(2, &d.to_bytes(), &all, &forged);
        assert_eq!(check(&mixed, None), "accepted");
        for carries in [forged_carries.clone(), w.carries(&[0, 1, 2])] {
            let r = check(&mixed, Some(&carries));
            assert!(r.contains(C1_CHECK_FAILED), "{r}");
            // What `MemberSession::decrypt` dispatches on to fetch every
            // contribution and name the contributor.
            let kind = w
                .check_signatures(
                    all.clone(),
                    &forged,
                    3,
                    Some(0),
                    &[0],
                    &mixed,
                    SignatureChecks::All,
                    Some(&carries),
                )
                .map_err(|e| e.kind);
            assert_eq!(kind.err(), Some(RefusalKind::C1Check));
        }
        // The honest aggregate, digests and carries pass the c1 check.
        let aggregate = w.sum(&[0, 1, 2]);
        let honest: Vec<SignedSumDigest> = (1..3)
            .map(|i| w.digest(i, &w.contributions[i].1, &all, &aggregate))
            .collect();
        let carries = w.carries(&[0, 1, 2]);
        let decoded = w
            .check_signatures(
                all.clone(),
                &aggregate,
                3,
                Some(0),
                &[0],
                &honest,
                SignatureChecks::All,
                Some(&carries),
            )
            .unwrap();
        assert_eq!(decoded.to_bytes(&w.params), aggregate);
        // A fetched contribution whose signed c1 commitment is not of its
        // bytes is named.
        let mut false_c1 = honest.clone();
        let bytes = hex::decode(&false_c1[1].digest).unwrap();
        let mut d = ContributorDigest::from_bytes(&w.params, &bytes).unwrap();
        d.c1 = w.c1_of(&w.contributions[1].1);
        false_c1[1] = w.sign_digest(2, &d.to_bytes(), &all, &aggregate);
        let r = refused_as(
            w.check_signatures(
                all.clone(),
                &aggregate,
                3,
                Some(0),
                &[0, 2],
                &false_c1,
                SignatureChecks::All,
                Some(&carries),
            ),
            RefusalKind::Signature,
        );
        assert!(
            r.contains("c signed a c1 commitment that is not its contribution's"),
            "{r}"
        );
    }

    #[test]
    fn a_substituted_contribution_is_refused_on_digests() {
        // The server signs nothing but serves the list; after the list was
        // fixed it sums another encryption in place of c's contribution.
        let w = world();
        let all: Vec<SignedUpload> = (0..3).map(|i| w.signed(i, &w.contributions[i].1)).collect();
        // b's contribution counted twice, c's not at all.
        let substitute = w.sum(&[0, 1, 1]);
        let digests: Vec<SignedSumDigest> = (1..3)
            .map(|i| w.digest(i, &w.contributions[i].1, &all, &substitute))
            .collect();
        let r = w.check_with(all, &substitute, 3, Some(0), &[0], &digests);
        assert!(refused_as(r, RefusalKind::NotTheSum).contains("not the sum of the listed"));
    }

    /// The digest statement names the commitment list its contributor
    /// revealed against, so one signature per contributor says what the
    /// digest and the reveal said: a digest signed naming another list is
    /// refused, as a reveal against another list is.
    #[test]
    fn a_digest_naming_another_commitment_list_is_refused() {
        let w = world();
        let all: Vec<SignedUpload> = (0..3).map(|i| w.signed(i, &w.contributions[i].1)).collect();
        let aggregate = w.sum(&[0, 1, 2]);
        let honest: Vec<SignedSumDigest> = (1..3)
            .map(|i| w.digest(i, &w.contributions[i].1, &all, &aggregate))
            .collect();
        assert!(w
            .check_with(all.clone(), &aggregate, 3, Some(0), &[0], &honest)
            .is_ok());
        let mut split = honest.clone();
        split[0] = w.digest_naming(1, &w.contributions[1].1, &all, &aggregate, &"0".repeat(64));
        let r = w.check_with(all, &aggregate, 3, Some(0), &[0], &split);
        assert!(
            refused_as(r, RefusalKind::Signature)
                .contains("the digest listed for b was not signed by it"),
            "a digest naming another commitment list was not refused"
        );
    }

    /// A list this member recorded after checking it is checked again for
    /// its hash, shape and quorum, not for its signatures; a list served now
    /// is checked in full; the list this session checked and kept in memory
    /// is not checked again (the member passes only that one so).
    #[test]
    fn a_recorded_commitment_list_is_rechecked_but_for_its_signatures() {
        let w = world();
        let mut entries = w.commitments().commitments;
        entries[1].signature = entries[2].signature.clone();
        let forged = frozen(entries);
        let check = |list: &CommitmentList, signatures| {
            verify_commitments(&CommitmentEvidence {
                study: "s",
                round: 1,
                members: &w.keys,
                spec_hash: SPEC,
                min_contributors: 3,
                list,
                own: Some(("a", w.contributions[0].1.as_slice())),
                own_c1_commitment_hash: None,
                signatures,
            })
            .map_err(|e| e.reason)
        };
        assert!(
            check(&forged, CommitmentSignatures::Check(SignatureChecks::All))
                .unwrap_err()
                .contains("the commitment of b does not verify")
        );
        assert_eq!(
            check(&forged, CommitmentSignatures::CheckedWhenRecorded),
            Ok(forged.list_hash.clone().unwrap())
        );
        let mut rehashed = w.commitments();
        rehashed.list_hash = Some("0".repeat(64));
        let mut short = w.commitments();
        short.commitments.truncate(2);
        short.list_hash = Some(CommitmentList::canonical_hash("s", 1, &short.commitments));
        for signatures in [
            CommitmentSignatures::Check(SignatureChecks::All),
            CommitmentSignatures::CheckedWhenRecorded,
        ] {
            assert!(check(&rehashed, signatures.clone())
                .unwrap_err()
                .contains("is not the hash of its entries"));
            assert!(check(&short, signatures)
                .unwrap_err()
                .contains("at least 3 are required"));
        }
        assert_eq!(
            check(
                &rehashed,
                CommitmentSignatures::VerifiedInThisSession(SessionCheck(()))
            ),
            Ok("0".repeat(64))
        );
    }

    #[test]
    fn false_or_misdirected_digests_are_refused() {
        let w = world();
        let all: Vec<SignedUpload> = (0..3).map(|i| w.signed(i, &w.contributions[i].1)).collect();
        let aggregate = w.sum(&[0, 1, 2]);
        // c signs the digest of b's contribution as its own: caught when a
        // member downloads c's contribution (a spot check), naming c.
        let lying = vec![
            w.digest(1, &w.contributions[1].1, &all, &aggregate),
            w.digest(2, &w.contributions[1].1, &all, &aggregate),
        ];
        let r = w.check_with(all.clone(), &aggregate, 3, Some(0), &[0, 2], &lying);
        assert!(refused_as(r, RefusalKind::Signature)
            .contains("c signed a digest that is not its contribution's"));
        // A digest made on another aggregate's challenge does not verify.
        let other = w.sum(&[0, 1]);
        let stale = vec![
            w.digest(1, &w.contributions[1].1, &all, &aggregate),
            w.digest(2, &w.contributions[2].1, &all, &other),
        ];
        let r = w.check_with(all.clone(), &aggregate, 3, Some(0), &[0], &stale);
        assert!(refused_as(r, RefusalKind::Signature)
            .contains("the digest listed for c was not signed by it for this aggregate"));
        // A digest signed by another member's key.
        let mut forged = vec![
            w.digest(1, &w.contributions[1].1, &all, &aggregate),
            w.digest(2, &w.contributions[2].1, &all, &aggregate),
        ];
        forged[1].signature = forged[0].signature.clone();
        let r = w.check_with(all, &aggregate, 3, Some(0), &[0], &forged);
        assert!(refused_as(r, RefusalKind::Signature)
            .contains("the digest listed for c was not signed by it"));
    }

    #[test]
    fn a_deviating_server_is_refused() {
        let w = world();
        let all: Vec<SignedUpload> = (0..3).map(|i| w.signed(i, &w.contributions[i].1)).collect();
        // A share of one member's contribution alone.
        let r = w.check(vec![all[1].clone()], &w.sum(&[1]), 2, None);
        assert!(refused_as(r, RefusalKind::TooFew)
            .contains("1 distinct members contributed; at least 2"));
        // A contribution revealed against another commitment list than mine.
        let mut other = all.clone();
        other[2] = w.revealed(2, &w.contributions[2].1, &"11".repeat(32));
        let r = w.check(other, &w.sum(&[0, 1, 2]), 2, Some(0));
        assert!(refused_as(r, RefusalKind::Signature)
            .contains("not revealed against the commitment list I saw"));
        // My own contribution dropped.
        let r = w.check(all[1..].to_vec(), &w.sum(&[1, 2]), 2, Some(0));
        assert!(refused_as(r, RefusalKind::Own).contains("my own contribution (a) is not included"));
        // An aggregate over other contributions than the listed ones.
        let r = w.check(all[..2].to_vec(), &w.sum(&[0, 1, 2]), 2, None);
        assert!(refused_as(r, RefusalKind::NotTheSum).contains("not the sum of the listed"));
        // Impersonation: b's contribution signed by c's key.
        let mut forged = all.clone();
        forged[1].signature = w.identities[2].sign_hex(b"anything");
        let r = w.check(forged, &w.sum(&[0, 1, 2]), 2, None);
        assert!(
            refused_as(r, RefusalKind::Signature).contains("does not verify"),
            "{}",
            reason(w.check(vec![], &[], 1, None))
        );
        // The same member listed twice.
        let twice = vec![all[0].clone(), all[0].clone()];
        let r = w.check(twice, &w.sum(&[0, 0]), 1, None);
        assert!(refused_as(r, RefusalKind::Duplicate).contains("listed twice"));
        // A member outside the ceremony.
        let mut stranger = all.clone();
        stranger[2].member = "mallory".into();
        assert!(
            reason(w.check(stranger.clone(), &w.sum(&[0, 1, 2]), 2, None))
                .contains("not a ceremony member")
        );
        let mut stranger = all.clone();
        stranger[2].member = "mallory".into();
        assert!(reason(w.check(stranger, &w.sum(&[0, 1, 2]), 2, None))
            .contains("not a ceremony member"));
        // An aggregate other than the listed hash.
        let list = ContributionList {
            state: RoundState::Decrypting,
            contributions: all,
            aggregate_hash: Some("00".repeat(32)),
        };
        let aggregate = w.sum(&[0, 1, 2]);
        let commitments = w.commitments();
        let r = verify_before_decrypt(
            &w.params,
            &Evidence {
                commitments: CommitmentEvidence {
                    study: "s",
                    round: 1,
                    members: &w.keys,
                    spec_hash: SPEC,
                    min_contributors: 2,
                    list: &commitments,
                    own: None,
                    own_c1_commitment_hash: None,
                    signatures: CommitmentSignatures::Check(SignatureChecks::All),
                },
                list: &list,
                contributions: &w.contributions,
                digests: &SumDigestList {
                    state: RoundState::Decrypting,
                    digests: vec![],
                    aggregate_hash: None,
                },
                aggregate: &aggregate,
                signatures: SignatureChecks::All,
                c1_carries: None,
            },
        );
        assert!(refused_as(r, RefusalKind::Substituted).contains("is not the listed"));
    }

    fn check_list(w: &World, list: &CommitmentList, own: Option<usize>) -> String {
        let own = own.map(|i| (w.members[i].id.as_str(), w.contributions[i].1.as_slice()));
        match verify_commitments(&CommitmentEvidence {
            study: "s",
            round: 1,
            members: &w.keys,
            spec_hash: SPEC,
            min_contributors: 2,
            list,
            own,
            own_c1_commitment_hash: None,
            signatures: CommitmentSignatures::Check(SignatureChecks::All),
        }) {
            Ok(h) => format!("accepted {h}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_commitment_list_is_checked_before_revealing() {
        let w = world();
        let honest = w.commitments();
        assert_eq!(
            check_list(&w, &honest, Some(0)),
            format!("accepted {}", honest.list_hash.clone().unwrap())
        );
        // A member shown another study spec signed its commitment for it.
        let split = frozen(vec![
            w.committed(0, &w.contributions[0].1, SPEC),
            w.committed(1, &w.contributions[1].1, "another-spec"),
        ]);
        assert!(check_list(&w, &split, Some(0)).contains("for the study spec I recorded"));
        // My commitment left out, or replaced.
        let without_me = frozen(vec![
            w.committed(1, &w.contributions[1].1, SPEC),
            w.committed(2, &w.contributions[2].1, SPEC),
        ]);
        assert!(
            check_list(&w, &without_me, Some(0)).contains("my own commitment (a) is not listed")
        );
        let replaced = frozen(vec![
            w.committed(0, &w.contributions[1].1, SPEC),
            w.committed(2, &w.contributions[2].1, SPEC),
        ]);
        assert!(check_list(&w, &replaced, Some(0)).contains("is not the one I made"));
        // A list whose hash is not of its entries.
        let mut tampered = honest.clone();
        tampered.commitments.pop();
        assert!(check_list(&w, &tampered, None).contains("not the hash of its entries"));
        // Too few committers for my floor.
        let one = frozen(vec![w.committed(0, &w.contributions[0].1, SPEC)]);
        assert!(check_list(&w, &one, None).contains("1 distinct members committed"));
        // Not frozen yet.
        let mut open = honest.clone();
        open.list_hash = None;
        assert!(check_list(&w, &open, None).contains("not frozen"));
        // One ciphertext under two names (issue 45): b's entry names a's
        // ciphertext, signed by b; then a's c1 commitment only.
        let twice = frozen(vec![
            w.committed(0, &w.contributions[0].1, SPEC),
            w.committed(1, &w.contributions[0].1, SPEC),
            w.committed(2, &w.contributions[2].1, SPEC),
        ]);
        let refused = check_list(&w, &twice, Some(0));
        assert!(
            refused.contains("committed to the same ciphertext"),
            "{refused}"
        );
        let mut same_c1 = w.committed(1, &w.contributions[1].1, SPEC);
        same_c1.c1_commitment_hash = w
            .committed(0, &w.contributions[0].1, SPEC)
            .c1_commitment_hash;
        let twice_c1 = frozen(vec![
            w.committed(0, &w.contributions[0].1, SPEC),
            same_c1,
            w.committed(2, &w.contributions[2].1, SPEC),
        ]);
        let refused = check_list(&w, &twice_c1, None);
        assert!(
            refused.contains("committed to the same c1 commitment"),
            "{refused}"
        );
    }

    /// A share list, the bytes of each share, and the published values.
    /// A round decrypted by the members `makers`: the signed share list,
    /// every share's bytes, the values a server combining all of them would
    /// publish (the full `combine` / `combine_threshold`, the independent
    /// reference), `D` summed here polynomial by polynomial, and the makers'
    /// signed share digests on `D`'s challenge.
    #[derive(Clone)]
    struct Decrypted {
        /// The members' result key every share is blinded with.
        key: fedhe_crypto::ResultKey,
        list: DecryptionShareList,
        fetched: Vec<(String, Vec<u8>)>,
        published: Vec<f64>,
        combined: Vec<u8>,
        digests: SumDigestList,
        set: Vec<String>,
        aggregate_hash: [u8; 32],
    }

    /// n-of-n (`tshares` None, every member) or t-of-n (the threshold key
    /// shares, `makers` the decrypting set).
    fn decrypted(
        w: &World,
        aggregate: &EncryptedVector,
        makers: &[usize],
        tshares: Option<&[ThresholdSecretShare]>,
    ) -> Decrypted {
        let mut rng = Csprng::from_u128_seed(9);
        let ids: Vec<MemberId> = w
            .members
            .iter()
            .map(|m| MemberId::new(m.id.clone()).unwrap())
            .collect();
        let active: Vec<MemberId> = makers.iter().map(|&i| ids[i].clone()).collect();
        // Every share is blinded with the members' result key, as a member
        // makes it (the server's combination cannot decode).
        let key = fedhe_crypto::ResultKey::from_bytes(&[42; 32]).unwrap();
        let aggregate_hash = *blake3::hash(&aggregate.to_bytes(&w.params)).as_bytes();
        let ceremony = CeremonyId::new("c").unwrap();
        let ctx = fedhe_crypto::BlindingContext {
            ceremony: &ceremony,
            study: "s",
            round: 1,
            aggregate_hash: &aggregate_hash,
        };
        let mut list = Vec::new();
        let mut fetched = Vec::new();
        let mut polys: Vec<Vec<fedhe_ring::Poly>> = Vec::new();
        let mut full = Vec::new();
        let mut partial = Vec::new();
        for &i in makers {
            let bytes = match tshares {
                None => {
                    let mut share =
                        DecryptionShare::generate(&w.params, &w.secrets[i], aggregate, &mut rng)
                            .unwrap();
                    full.push(share.clone());
                    key.blind(&w.params, &ctx, &mut share).unwrap();
                    polys.push(share.polys().to_vec());
                    share.to_bytes(&w.params)
                }
                Some(t) => {
                    let mut share = ThresholdDecryptionShare::generate(
                        &w.params, &t[i], &active, aggregate, &mut rng,
                    )
                    .unwrap();
                    partial.push(share.clone());
                    key.blind_threshold(&w.params, &ctx, &mut share).unwrap();
                    polys.push(share.share().polys().to_vec());
                    share.to_bytes(&w.params)
                }
            };
            let hash = blake3::hash(&bytes);
            list.push(SignedUpload {
                member: w.members[i].id.clone(),
                hash: hash.to_hex().to_string(),
                signature: w.identities[i].sign_hex(&upload_statement(
                    UploadKind::DecryptionShare,
                    "s",
                    &w.members[i].id,
                    1,
                    hash.as_bytes(),
                )),
            });
            fetched.push((w.members[i].id.clone(), bytes));
        }
        let codec = FixedPointCodec::from_info(&w.params, aggregate.encoding()).unwrap();
        let plaintexts = match tshares {
            None if makers.len() < ids.len() => None,
            None => Some(combine(&ids, aggregate, &full).unwrap()),
            Some(_) => {
                let access = AccessStructure::new(&ids, 2).unwrap();
                Some(combine_threshold(&access, aggregate, &partial).unwrap())
            }
        };
        // No reference for a part of the n-of-n shares (they do not decode).
        let published = plaintexts
            .map(|p| codec.decode(&p, aggregate.len()).unwrap())
            .unwrap_or_default();
        // D = Σ d_j, summed here, and its bytes laid out by hand.
        let mut d = polys[0].clone();
        for p in &polys[1..] {
            for (a, b) in d.iter_mut().zip(p) {
                a.add_assign(b).unwrap();
            }
        }
        let combined: Vec<u8> = d
            .iter()
            .flat_map(|p| p.residues().iter().flat_map(|r| r.to_le_bytes()))
            .collect();
        let list = DecryptionShareList {
            state: RoundState::Done,
            shares: list,
            aggregate_hash: Some(hex::encode(aggregate_hash)),
        };
        let set: Vec<String> = match tshares {
            None => Vec::new(),
            Some(_) => makers.iter().map(|&i| w.members[i].id.clone()).collect(),
        };
        let mut out = Decrypted {
            key,
            list,
            fetched,
            published,
            combined,
            digests: SumDigestList {
                state: RoundState::Done,
                digests: Vec::new(),
                aggregate_hash: None,
            },
            set,
            aggregate_hash,
        };
        for (k, &i) in makers.iter().enumerate() {
            let digest = out.share_digest(w, &polys[k]);
            out.sign_digest(w, i, digest);
        }
        out
    }

    impl Decrypted {
        fn challenge(&self, w: &World) -> SumChallenge {
            SumChallenge::derive_for_shares(
                &w.params,
                "s",
                1,
                &self.list.entries_hash("s", 1, &self.set),
                blake3::hash(&self.combined).as_bytes(),
                &self.aggregate_hash,
            )
        }

        fn share_digest(&self, w: &World, polys: &[fedhe_ring::Poly]) -> Vec<u8> {
            self.challenge(w).digest_polys(&w.params, polys).to_bytes()
        }

        /// Member i's signed digest (replacing any it had).
        fn sign_digest(&mut self, w: &World, i: usize, digest: Vec<u8>) {
            let member = w.members[i].id.clone();
            let hash: [u8; 32] = fedhe_api::signing::decode_fixed(
                &self
                    .list
                    .shares
                    .iter()
                    .find(|u| u.member == member)
                    .unwrap()
                    .hash,
                "hash",
            )
            .unwrap();
            let signature = w.identities[i].sign_hex(&share_digest_statement(
                "s",
                &member,
                1,
                &hash,
                &self.list.entries_hash("s", 1, &self.set),
                blake3::hash(&self.combined).as_bytes(),
                &self.aggregate_hash,
                &self.set,
                &digest,
            ));
            self.digests.digests.retain(|d| d.member != member);
            self.digests.digests.push(SignedSumDigest {
                member,
                digest: hex::encode(digest),
                signature,
            });
        }

        /// The shares of `members` only, as a member holding those.
        fn held(&self, members: &[&str]) -> Vec<(String, Vec<u8>)> {
            self.fetched
                .iter()
                .filter(|(m, _)| members.contains(&m.as_str()))
                .cloned()
                .collect()
        }

        fn check(
            &self,
            w: &World,
            aggregate: &EncryptedVector,
            held: &[(String, Vec<u8>)],
            threshold: Option<usize>,
        ) -> Result<Vec<f64>, Refusal> {
            verify_after_decrypt(
                &w.params,
                &ResultEvidence {
                    study: "s",
                    round: 1,
                    members: &w.keys,
                    aggregate,
                    aggregate_hash: &self.aggregate_hash,
                    list: &self.list,
                    shares: held,
                    combined: &self.combined,
                    digests: &self.digests,
                    result_key: &self.key,
                    ceremony: &CeremonyId::new("c").unwrap(),
                    threshold,
                },
            )
        }
    }

    #[test]
    fn a_published_result_is_checked_against_the_signed_shares() {
        let w = world();
        let aggregate = EncryptedVector::from_bytes(&w.params, &w.sum(&[0, 1, 2])).unwrap();
        let dec = decrypted(&w, &aggregate, &[0, 1, 2], None);
        // Every share held (the full check).
        let check = |d: &Decrypted| d.check(&w, &aggregate, &d.fetched, None);
        // Honest: the member's own decoding is the plaintext sum 0 + 1 + 2.
        let values = check(&dec).unwrap();
        let bound = FixedPointCodec::from_info(&w.params, aggregate.encoding())
            .unwrap()
            .error_bound();
        assert!((values[0] - 3.0).abs() <= bound, "{values:?}");
        let refused = |r: Result<Vec<f64>, Refusal>| r.unwrap_err().reason;
        // The member's decoding is the unblinded combination's, bit for bit.
        assert_eq!(
            values.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            dec.published
                .iter()
                .map(|v| v.to_bits())
                .collect::<Vec<_>>()
        );
        // Without the result key (another key), the combination does not
        // decode: what the server holds is blinded.
        let mut keyless = dec.clone();
        keyless.key = fedhe_crypto::ResultKey::from_bytes(&[7; 32]).unwrap();
        assert!(refused(check(&keyless)).contains("do not decode"));
        // A share left out: the rest do not combine (n-of-n).
        let mut short = dec.clone();
        short.list.shares.pop();
        assert!(refused(check(&short)).contains("do not combine"));
        // A share signed by someone else, its maker having sent no digest
        // (a maker's share digest names its share's hash, so it is the one
        // signature checked for a share with a digest).
        let mut forged = dec.clone();
        forged.list.shares[1].signature = forged.list.shares[0].signature.clone();
        let maker = forged.list.shares[1].member.clone();
        forged.digests.digests.retain(|d| d.member != maker);
        assert!(refused(check(&forged)).contains(&format!(
            "the decryption share listed for {maker} is not signed by it"
        )));
        // Bytes other than the signed ones.
        let mut swapped = dec.clone();
        swapped.fetched[2].1 = dec.fetched[1].1.clone();
        assert!(refused(check(&swapped)).contains("signed hash"));
        // A share listed twice.
        let mut twice = dec.clone();
        twice.list.shares.push(dec.list.shares[0].clone());
        assert!(refused(check(&twice)).contains("listed twice"));
        // Shares of another aggregate (the server decrypted something else).
        let other = EncryptedVector::from_bytes(&w.params, &w.sum(&[0, 1])).unwrap();
        let mut foreign = decrypted(&w, &other, &[0, 1, 2], None);
        foreign.aggregate_hash = dec.aggregate_hash;
        for i in 0..3 {
            let polys = DecryptionShare::from_bytes(&w.params, &foreign.fetched[i].1)
                .unwrap()
                .polys()
                .to_vec();
            let digest = foreign.share_digest(&w, &polys);
            foreign.sign_digest(&w, i, digest);
        }
        let reason = refused_as(check(&foreign), RefusalKind::Undecodable);
        assert!(reason.contains("do not decode"), "{reason}");
    }

    #[test]
    fn a_result_is_checked_on_share_digests_with_one_download() {
        let w = world();
        let aggregate = EncryptedVector::from_bytes(&w.params, &w.sum(&[0, 1, 2])).unwrap();
        let dec = decrypted(&w, &aggregate, &[0, 1, 2], None);
        // Member a holds its own share only: accepted, and its decoding is
        // the full combine of every share, bit for bit.
        let own = dec.held(&["a"]);
        let values = dec.check(&w, &aggregate, &own, None).unwrap();
        assert_eq!(
            values.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            dec.published
                .iter()
                .map(|v| v.to_bits())
                .collect::<Vec<_>>()
        );
        let refused = |r: Result<Vec<f64>, Refusal>| r.unwrap_err().reason;
        // The server combines a substituted share of c (another flooding)
        // and publishes that decoding, listing c's signed share and digest:
        // D is not the sum of the listed shares.
        let substitute = decrypted(&w, &aggregate, &[2], None);
        let mut d: Vec<fedhe_ring::Poly> = Vec::new();
        for (m, bytes) in [&dec.fetched[0], &dec.fetched[1], &substitute.fetched[0]] {
            let polys = DecryptionShare::from_bytes(&w.params, bytes).unwrap();
            assert!(m == "a" || m == "b" || m == "c");
            if d.is_empty() {
                d = polys.polys().to_vec();
            } else {
                for (a, b) in d.iter_mut().zip(polys.polys()) {
                    a.add_assign(b).unwrap();
                }
            }
        }
        let mut wrong = dec.clone();
        wrong.combined = d
            .iter()
            .flat_map(|p| p.residues().iter().flat_map(|r| r.to_le_bytes()))
            .collect();
        // Honest makers sign digests on the challenge of the served D.
        for i in 0..3 {
            let polys = DecryptionShare::from_bytes(&w.params, &dec.fetched[i].1)
                .unwrap()
                .polys()
                .to_vec();
            let digest = wrong.share_digest(&w, &polys);
            wrong.sign_digest(&w, i, digest);
        }
        assert_ne!(wrong.combined, dec.combined);
        assert!(
            refused(wrong.check(&w, &aggregate, &own, None)).contains("not the sum"),
            "substituted share"
        );
        // A D that was never signed on: the makers' digests name another.
        let mut unsigned = dec.clone();
        unsigned.combined = wrong.combined.clone();
        assert!(refused(unsigned.check(&w, &aggregate, &own, None)).contains("not signed by it"));
        // A D that does not decode as one of this aggregate's: refused.
        let mut short = dec.clone();
        short.combined.truncate(8);
        assert!(
            refused(short.check(&w, &aggregate, &own, None)).contains("combined decryption share")
        );
    }

    #[test]
    fn false_or_misdirected_share_digests_are_refused_naming_the_member() {
        let w = world();
        let aggregate = EncryptedVector::from_bytes(&w.params, &w.sum(&[0, 1, 2])).unwrap();
        let dec = decrypted(&w, &aggregate, &[0, 1, 2], None);
        let refused = |r: Result<Vec<f64>, Refusal>| r.unwrap_err().reason;
        // b signs the digest of c's share, and member a spot-checks b.
        let mut false_digest = dec.clone();
        let c_polys = DecryptionShare::from_bytes(&w.params, &dec.fetched[2].1)
            .unwrap()
            .polys()
            .to_vec();
        let digest = false_digest.share_digest(&w, &c_polys);
        false_digest.sign_digest(&w, 1, digest);
        let held = dec.held(&["a", "b"]);
        let reason = refused(false_digest.check(&w, &aggregate, &held, None));
        assert!(
            reason.contains("b signed a digest that is not its decryption share"),
            "{reason}"
        );
        // A digest signed on another combined share (misdirected).
        let mut misdirected = dec.clone();
        let b_polys = DecryptionShare::from_bytes(&w.params, &dec.fetched[1].1)
            .unwrap()
            .polys()
            .to_vec();
        let keep = misdirected.combined.clone();
        misdirected.combined[0] ^= 1;
        let digest = misdirected.share_digest(&w, &b_polys);
        misdirected.sign_digest(&w, 1, digest);
        misdirected.combined = keep;
        let reason = refused(misdirected.check(&w, &aggregate, &dec.held(&["a"]), None));
        assert!(
            reason.contains("share digest listed for b was not signed by it"),
            "{reason}"
        );
        // A digest signed by another member.
        let mut forged = dec.clone();
        forged.digests.digests[1].signature = forged.digests.digests[0].signature.clone();
        let reason = refused(forged.check(&w, &aggregate, &dec.held(&["a"]), None));
        assert!(reason.contains("share digest listed for b"), "{reason}");
        // No digest from c, and c's share not fetched.
        let mut missing = dec.clone();
        missing.digests.digests.retain(|d| d.member != "c");
        let reason = refused_as(
            missing.check(&w, &aggregate, &dec.held(&["a"]), None),
            RefusalKind::Unaccounted,
        );
        assert!(
            reason.contains("of c was neither fetched nor digested"),
            "{reason}"
        );
        // ... but fetched in full it counts by its bytes.
        missing
            .check(&w, &aggregate, &dec.held(&["a", "c"]), None)
            .unwrap();
    }

    #[test]
    fn a_threshold_result_is_checked_on_share_digests() {
        let w = world();
        let ids: Vec<MemberId> = ["a", "b", "c"]
            .iter()
            .map(|m| MemberId::new(*m).unwrap())
            .collect();
        let access = AccessStructure::new(&ids, 2).unwrap();
        let mut rng = Csprng::from_u128_seed(11);
        let ceremony = Thresholdizer::in_process(
            &w.params,
            &CeremonyId::new("c").unwrap(),
            &access,
            &w.secrets,
            &w.crs,
            &w.pk_shares,
            &mut rng,
        )
        .unwrap();
        let aggregate = EncryptedVector::from_bytes(&w.params, &w.sum(&[0, 1, 2])).unwrap();
        // The decrypting set {a, c}; member b (not in it) holds no share and
        // fetches only a's.
        let dec = decrypted(&w, &aggregate, &[0, 2], Some(&ceremony.secrets));
        let values = dec
            .check(&w, &aggregate, &dec.held(&["a"]), Some(2))
            .unwrap();
        assert_eq!(values, dec.published);
        let bound = FixedPointCodec::from_info(&w.params, aggregate.encoding())
            .unwrap()
            .error_bound();
        assert!((values[0] - 3.0).abs() <= bound, "{values:?}");
        let refused = |r: Result<Vec<f64>, Refusal>| match r {
            Ok(v) => panic!("accepted: {v:?}"),
            Err(e) => e.reason,
        };
        // Fewer than T listed.
        let mut short = dec.clone();
        short.list.shares.pop();
        assert!(
            refused(short.check(&w, &aggregate, &dec.held(&["a"]), Some(2)))
                .contains("threshold is 2")
        );
        // A digest signed for another decrypting set is refused naming c.
        let mut other_set = dec.clone();
        other_set.set = vec!["a".into(), "b".into(), "c".into()];
        let c_polys = ThresholdDecryptionShare::from_bytes(&w.params, &dec.fetched[1].1)
            .unwrap()
            .share()
            .polys()
            .to_vec();
        let digest = other_set.share_digest(&w, &c_polys);
        other_set.sign_digest(&w, 2, digest);
        other_set.set = dec.set.clone();
        let reason = refused(other_set.check(&w, &aggregate, &dec.held(&["a"]), Some(2)));
        assert!(
            reason.contains("share digest listed for c was not signed"),
            "{reason}"
        );
        // The set {a, b} with the same flooding gives the same D exactly
        // once unblinded (the Lagrange-weighted key shares sum to the same
        // key), and so the same values bit for bit; blinded, the two D' differ
        // (each maker's mask is its own).
        let ab = decrypted(&w, &aggregate, &[0, 1], Some(&ceremony.secrets));
        assert_ne!(ab.combined, dec.combined);
        assert_eq!(
            ab.check(&w, &aggregate, &ab.held(&["a"]), Some(2)).unwrap(),
            values
        );
        // A wrong D, off by one in one residue (which may well decode to the
        // same values), with the makers' digests signed on its challenge.
        let mut wrong = dec.clone();
        wrong.combined[0] ^= 1;
        for (k, i) in [(0usize, 0usize), (1, 2)] {
            let polys = ThresholdDecryptionShare::from_bytes(&w.params, &dec.fetched[k].1)
                .unwrap()
                .share()
                .polys()
                .to_vec();
            let digest = wrong.share_digest(&w, &polys);
            wrong.sign_digest(&w, i, digest);
        }
        let reason = refused_as(
            wrong.check(&w, &aggregate, &dec.held(&["a"]), Some(2)),
            RefusalKind::NotTheSum,
        );
        assert!(reason.contains("not the sum"), "{reason}");
    }
}
