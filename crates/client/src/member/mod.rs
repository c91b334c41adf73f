//! One member's side of the protocol over the network (DESIGN.md §2): the
//! ceremony (commit, reveal, verify the collective key), and rounds
//! (encrypt and upload, verify before decrypt, upload the decryption share,
//! fetch the result). [`NetworkSum`] puts a member behind the `SecureSum`
//! trait, so algorithm code runs unchanged over the network.
//!
//! Everything a member must not do twice is recorded on its own disk before
//! it is sent: the encrypted contribution of a round (a retry after a crash
//! resends the same bytes, which the server accepts idempotently) and the
//! decryption share (never a second, different share of a round).

use crate::keys::{self, KeyDir};
use crate::policy::MemberPolicy;
use crate::verify::{
    verify_after_decrypt, verify_before_decrypt, verify_commitments, CommitmentEvidence,
    CommitmentSignatures, Evidence, IdentityKeys, Refusal, RefusalKind, ResultEvidence,
    SessionCheck, SignatureChecks, COMMITMENT_SAMPLE, CONTRIBUTION_SAMPLE,
};
use crate::{Client, ClientError, ListPart};
use fedhe_api::{
    CommitmentList, ContributionList, DecryptionShareList, MemberSpec, RoundResult, RoundState,
    StudyStatus, SumDigestList, Transcript,
};
use fedhe_crypto::share_transport::open_dealings;
use fedhe_crypto::{
    result_key_dealer, BlindingContext, C1Commitment, CeremonyId, ChannelError,
    CollectivePublicKey, CommonRandomPoly, ContributorDigest, DecryptionShare, EncryptedVector,
    FixedPointCodec, InsecurePolicy, MemberId, ParameterSet, Params, Precision, PublicKeyShare,
    ResultKey, ResultKeyDealing, RoundId, SealedResultKey, SecretKeyShare, SecureSum, SumChallenge,
    ThresholdDealing, ThresholdDecryptionShare, ThresholdSecretShare, WireObject,
};
use fedhe_ring::Csprng;
use journal::{Journal, Record, RoundStep};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

mod ceremony;
mod contribute;
mod decrypt;
mod journal;
mod network_sum;
pub mod phases;
mod result;
mod round;
#[cfg(test)]
mod round_tests;
mod transport;

pub use ceremony::{
    ceremony_roster, deal_result_key, fetch_result_key, grouped_hex, join_ceremony, params_by_name,
    verify_ceremony, VerifiedCeremony,
};
pub use network_sum::NetworkSum;
pub use transport::Transport;

/// A study whose signed spec a member accepted: the hash it signs into
/// every commitment, the spec's bound and the codec the spec fixes
/// ([`fedhe_api::StudySpec::codec`], the server's too).
#[derive(Clone, Debug)]
pub(crate) struct AcceptedStudy {
    /// The spec's hash.
    pub(crate) hash: String,
    /// The spec's bound on every |value|.
    pub(crate) bound: f64,
    /// The spec's encoding.
    pub(crate) codec: FixedPointCodec,
}

/// A member ready to run rounds of a study.
pub struct MemberSession {
    /// Where the round's calls go ([`Transport`]; the HTTP [`Client`]).
    client: Box<dyn Transport>,
    params: Arc<Params>,
    member: MemberId,
    secret: SecretKeyShare,
    key: CollectivePublicKey,
    members: Vec<MemberSpec>,
    /// The members' identity keys, parsed once (`members`).
    identity_keys: IdentityKeys,
    /// The round records ([`journal::Journal`], in the state folder).
    journal: Journal,
    min_contributors: usize,
    policy: MemberPolicy,
    admin_key: String,
    /// T of a t-of-n ceremony (from the verified transcript), with this
    /// member's threshold key share once attached.
    threshold: Option<(usize, Option<ThresholdSecretShare>)>,
    /// The ceremony.
    ceremony: CeremonyId,
    /// The members' result key, once attached ([`Self::with_result_key_from`]):
    /// it blinds this member's decryption shares and unblinds the combined
    /// share (`fedhe_crypto::result_key`).
    result_key: Option<ResultKey>,
    /// The studies whose signed spec this member accepted, by id.
    studies: std::collections::BTreeMap<String, AcceptedStudy>,
    rng: Csprng,
    /// How long one round may take before the member gives up.
    pub round_timeout: Duration,
    /// How long [`Self::decrypt`] waits for every contributor's digest, and
    /// [`Self::result`] for every share maker's, before it downloads those
    /// whose digest is missing.
    pub digest_wait: Duration,
    /// How many contributions with a signed digest [`Self::decrypt`] also
    /// downloads, chosen at random, to check their digests (the policy's
    /// `spot_checks`; if `None`, [`crate::policy::DEFAULT_SPOT_CHECKS`]:
    /// none, for the c1 check replaced them; [`Self::effective_spot_checks`]).
    /// Decryption shares are not spot-checked ([`Self::result`]).
    pub spot_checks: Option<usize>,
    /// λ of the signatures this member checks, at random, before it reveals
    /// and before it decrypts (the policy's `signature_sampling`,
    /// [`crate::policy::DEFAULT_SIGNATURE_SAMPLING`] by default;
    /// [`crate::verify::SignatureSample`]).
    pub signature_sampling: usize,
    /// Where the latest decryption and result check spent their time.
    pub timings: PhaseTimings,
    /// What the phases of the round in progress handed on to its later
    /// phases ([`round::RoundInProgress`]).
    in_progress: Option<round::RoundInProgress>,
    /// The next contribution's offline phase ([`Self::prepare_contribution`]),
    /// made before the next round's number is known.
    prepared_contribution: Option<PreparedContribution>,
    /// The failed earlier attempts (server rounds) of the sum the current
    /// round retries ([`NetworkSum`]): [`Self::decrypt`] makes no share of a
    /// retry summing another set of contributors than an attempt this member
    /// decrypted (a second decryption over another set would give away the
    /// difference, with only its members' own noise shares).
    earlier_attempts: Vec<u64>,
}

/// A contribution's message-independent part, made before its values exist
/// ([`MemberSession::prepare_contribution`]): the encryption masks (secret,
/// wiped on drop, held in memory only and used once) and the c1 commitment
/// of their `c1`s, the multiscalar multiplication that is most of a
/// commitment's cost.
struct PreparedContribution {
    study: String,
    values: usize,
    masks: Vec<fedhe_crypto::EncryptionMask>,
    c1: C1Commitment,
}

/// A contribution's bytes as held by a verifying member, with its member.
type Download = (String, Vec<u8>);

/// Where a member's latest [`MemberSession::decrypt`] and
/// [`MemberSession::result`] spent their time, seconds (`fedhe bench
/// service` reports them).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct PhaseTimings {
    /// Waiting for the aggregate.
    pub aggregate_wait: f64,
    /// Fetching the listed contributions and verifying before decrypting.
    pub verify: f64,
    /// Making and uploading the decryption share.
    pub share: f64,
    /// Waiting for the published result.
    pub result_wait: f64,
    /// Fetching the decryption shares and verifying the result.
    pub result_verify: f64,
}

impl std::fmt::Debug for MemberSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemberSession")
            .field("member", &self.member)
            .field("state_dir", &self.journal.dir())
            .finish_non_exhaustive()
    }
}

impl MemberSession {
    /// A session from a verified ceremony. `min_contributors` is this member's
    /// own floor on distinct contributors before it decrypts.
    pub fn new(
        client: impl Transport + 'static,
        verified: &VerifiedCeremony,
        secret: SecretKeyShare,
        state_dir: impl Into<PathBuf>,
        min_contributors: usize,
    ) -> Result<Self, ClientError> {
        let member = secret.member().clone();
        let journal = Journal::open(state_dir.into())?;
        let members: Vec<MemberSpec> = verified
            .transcript
            .entries
            .iter()
            .map(|e| MemberSpec {
                id: e.member.clone(),
                identity_key: e.identity_key.clone(),
            })
            .collect();
        let identity_keys = IdentityKeys::parse(&members).map_err(ClientError::Verification)?;
        let ceremony = CeremonyId::new(verified.transcript.ceremony.clone())?;
        Ok(Self {
            ceremony,
            result_key: None,
            client: Box::new(client),
            params: verified.params.clone(),
            member,
            secret,
            key: verified.key.clone(),
            members,
            identity_keys,
            journal,
            min_contributors,
            policy: MemberPolicy::default(),
            admin_key: verified.transcript.admin_key.clone(),
            threshold: verified.transcript.threshold.map(|t| (t as usize, None)),
            studies: Default::default(),
            rng: Csprng::from_entropy(),
            round_timeout: Duration::from_secs(600),
            digest_wait: Duration::from_secs(5),
            spot_checks: None,
            signature_sampling: crate::policy::DEFAULT_SIGNATURE_SAMPLING,
            timings: PhaseTimings::default(),
            in_progress: None,
            prepared_contribution: None,
            earlier_attempts: Vec::new(),
        })
    }

    /// This session under the member's own policy: the ceremony's parameter
    /// set is checked now, every study's quorum when it is accepted, every
    /// round's number before a decryption share is made, and the quorum this
    /// member checks before decrypting is raised to the policy's floor.
    pub fn with_policy(mut self, policy: MemberPolicy) -> Result<Self, ClientError> {
        policy.check_parameter_set(self.params.set().name)?;
        self.min_contributors = self
            .min_contributors
            .max(policy.min_contributors.unwrap_or(0) as usize);
        if let Some(k) = policy.spot_checks {
            self.spot_checks = Some(k);
        }
        if let Some(lambda) = policy.signature_sampling {
            self.signature_sampling = lambda;
        }
        self.policy = policy;
        Ok(self)
    }

    /// The contributions [`Self::decrypt`] spot-checks: [`Self::spot_checks`]
    /// if set, else [`crate::policy::DEFAULT_SPOT_CHECKS`].
    pub fn effective_spot_checks(&self) -> usize {
        self.spot_checks
            .unwrap_or(crate::policy::DEFAULT_SPOT_CHECKS)
    }

    /// This member's c1 commitment to its contribution to a round (recorded
    /// at commit time; made from the recorded contribution if an older state
    /// folder has none).
    fn own_c1_commitment(
        &self,
        study: &str,
        round: u64,
        contribution: &[u8],
    ) -> Result<C1Commitment, ClientError> {
        if let Some(c1) = self.held(study, round).and_then(|r| r.c1.as_ref()) {
            return Ok(c1.clone());
        }
        if let Some(bytes) = self.journal.read(Record::C1Commitment, study, round) {
            return Ok(C1Commitment::from_bytes(&bytes)?);
        }
        let v = EncryptedVector::from_bytes(&self.params, contribution)?;
        let c1 = C1Commitment::commit(&self.params, &v);
        self.journal
            .record(Record::C1Commitment, study, round, &c1.to_bytes())?;
        Ok(c1)
    }

    /// Which listed signatures to check ([`SignatureChecks::for_decryption`]):
    /// in n-of-n a fresh random choice with λ = [`Self::signature_sampling`],
    /// in t-of-n every one.
    fn signature_checks(&mut self) -> SignatureChecks {
        SignatureChecks::for_decryption(
            self.signature_sampling,
            self.members.len(),
            self.threshold.as_ref().map(|(t, _)| *t),
            self.rng.seed_bytes(),
        )
    }

    /// Loads the secret key share from a key folder; a sealed share is
    /// decrypted with the folder's passphrase ([`KeyDir::with_passphrase`]).
    pub fn load_secret(keys: &KeyDir, params: &Arc<Params>) -> Result<SecretKeyShare, ClientError> {
        Ok(SecretKeyShare::from_key_bytes(
            params,
            &keys.read(keys::SECRET_SHARE_FILE)?,
        )?)
    }

    /// Attaches this member's threshold key share (t-of-n ceremonies): it
    /// must be of this member and of the verified transcript's members and T.
    pub fn with_threshold_share(
        mut self,
        share: ThresholdSecretShare,
    ) -> Result<Self, ClientError> {
        let Some((t, slot)) = &mut self.threshold else {
            return Err(ClientError::Keys(
                "the ceremony is n-of-n: a threshold key share has no use here".into(),
            ));
        };
        let ids = self
            .members
            .iter()
            .map(|m| MemberId::new(m.id.clone()))
            .collect::<Result<Vec<_>, _>>()?;
        if share.member() != &self.member
            || share.access() != &fedhe_crypto::AccessStructure::new(&ids, *t)?
        {
            return Err(ClientError::Keys(format!(
                "{} is not {}'s share of this ceremony's {} of {} members",
                keys::THRESHOLD_SHARE_FILE,
                self.member,
                t,
                ids.len()
            )));
        }
        *slot = Some(share);
        Ok(self)
    }

    /// Loads and attaches the threshold key share from `keys` when the
    /// ceremony is t-of-n (n-of-n: unchanged).
    pub fn with_threshold_share_from(self, keys: &KeyDir) -> Result<Self, ClientError> {
        if self.threshold.is_none() {
            return Ok(self);
        }
        let share = ThresholdSecretShare::from_key_bytes(
            &self.params,
            &keys.read(keys::THRESHOLD_SHARE_FILE)?,
        )?;
        self.with_threshold_share(share)
    }

    /// Loads and attaches the members' result key from `keys` (stored by
    /// [`join_ceremony`]). A folder without one (a ceremony joined before
    /// result keys existed) is refused: this member could not decode a
    /// round without handing its values to the server.
    pub fn with_result_key_from(mut self, keys: &KeyDir) -> Result<Self, ClientError> {
        if !keys.exists(keys::RESULT_KEY_FILE) {
            return Err(ClientError::Keys(format!(
                "{} holds no {}: the ceremony {} dealt no result key to this member (it was joined before the server was blinded); join a new ceremony",
                keys.path().display(),
                keys::RESULT_KEY_FILE,
                self.ceremony
            )));
        }
        self.result_key = Some(ResultKey::from_bytes(&keys.read(keys::RESULT_KEY_FILE)?)?);
        Ok(self)
    }

    /// Attaches the members' result key (as [`Self::with_result_key_from`]).
    pub fn with_result_key(mut self, key: ResultKey) -> Self {
        self.result_key = Some(key);
        self
    }

    /// The result key, or a refusal naming what is missing.
    fn result_key(&self) -> Result<&ResultKey, ClientError> {
        self.result_key.as_ref().ok_or_else(|| {
            ClientError::Keys(format!(
                "no result key is attached for ceremony {}: a decryption share would give the server the round's values",
                self.ceremony
            ))
        })
    }

    /// Where this session's round calls go.
    pub fn transport(&self) -> &dyn Transport {
        self.client.as_ref()
    }

    /// The ceremony's parameters.
    pub fn params(&self) -> &Arc<Params> {
        &self.params
    }

    /// The offline phase of this member's next contribution to `study`, of
    /// `values` values: samples its encryption masks and commits to their
    /// `c1`s (one multiscalar multiplication per ciphertext), so that the
    /// next [`Self::commit`] of `study` with that many values only adds the
    /// encoded values and signs. A member calls it while it waits (before a
    /// round's values exist, after its previous round); the masks stay in
    /// memory, replace any prepared before, and are used by one commitment.
    /// Returns the seconds it took.
    pub fn prepare_contribution(&mut self, study: &str, values: usize) -> Result<f64, ClientError> {
        let started = Instant::now();
        let codec = self.study_terms(study)?.codec.clone();
        let masks = (0..codec.plaintext_count(values))
            .map(|_| fedhe_crypto::EncryptionMask::sample(&self.params, &self.key, &mut self.rng))
            .collect::<Result<Vec<_>, _>>()?;
        let c1 = C1Commitment::of_c1s(&self.params, masks.iter().map(|m| m.c1()));
        self.prepared_contribution = Some(PreparedContribution {
            study: study.to_string(),
            values,
            masks,
            c1,
        });
        Ok(started.elapsed().as_secs_f64())
    }

    /// `values` encrypted under the collective key with the codec of `bound`
    /// and `precision` for the ceremony's member count (the wire bytes);
    /// records nothing.
    pub fn encrypt_contribution(
        &mut self,
        values: &[f64],
        bound: f64,
        precision: Precision,
    ) -> Result<Vec<u8>, ClientError> {
        let codec = self.contribution_codec(bound, precision)?;
        let v = EncryptedVector::encrypt(&self.params, &self.key, &codec, values, &mut self.rng)?;
        Ok(v.to_bytes(&self.params))
    }

    /// The codec of a contribution with `bound` and `precision` for the
    /// ceremony's member count.
    fn contribution_codec(
        &self,
        bound: f64,
        precision: Precision,
    ) -> Result<FixedPointCodec, ClientError> {
        Ok(
            FixedPointCodec::with_precision(&self.params, self.members.len(), bound, precision)
                .map_err(fedhe_crypto::ChannelError::from)?,
        )
    }

    /// The members of the ceremony.
    pub fn members(&self) -> &[MemberSpec] {
        &self.members
    }

    /// Accepts a study's spec before any round of it (DESIGN.md §5, §6):
    /// checks the administrator's signature under the key in this member's
    /// verified transcript, and records the spec's hash in the state folder.
    /// A spec whose hash differs from the one recorded earlier is refused, so
    /// the server cannot change a study under a member, and every commitment
    /// this member signs names the recorded hash, so members shown different
    /// specs refuse each other's rounds.
    pub fn accept_study(&mut self, study: &StudyStatus) -> Result<String, ClientError> {
        let id = &study.spec.id;
        if study.spec.ceremony.is_empty() {
            return Err(ClientError::Verification(format!(
                "study {id} names no ceremony"
            )));
        }
        if self.admin_key.is_empty() {
            return Err(ClientError::Verification(format!(
                "the ceremony of study {id} has no administrator key, so its study specs cannot be checked; \
                 run the study under a ceremony created with an administrator key"
            )));
        }
        self.policy.check_study(id, study.spec.min_contributors)?;
        let codec = study
            .spec
            .codec(&self.params, self.members.len())
            .map_err(fedhe_crypto::ChannelError::from)?;
        let hash = study.spec.hash_hex();
        let key = fedhe_api::signing::parse_public_key(&self.admin_key)?;
        fedhe_api::signing::verify_hex(
            &key,
            &fedhe_api::signing::study_spec_statement(&hash),
            &study.admin_signature,
            "study spec",
        )
        .map_err(|e| {
            ClientError::Verification(format!(
                "the spec of study {id} is not signed by the ceremony's administrator: {e}"
            ))
        })?;
        let file = format!("{id}.spec");
        match std::fs::read_to_string(self.journal.dir().join(&file)) {
            Ok(recorded) if recorded.trim() == hash => {}
            Ok(recorded) => {
                return Err(ClientError::Verification(format!(
                    "the spec of study {id} is not the one I recorded (hash {}, now {hash}): refusing its rounds",
                    recorded.trim()
                )))
            }
            Err(_) => keys::write_atomic(self.journal.dir(), &file, hash.as_bytes(), false)?,
        }
        self.studies.insert(
            id.clone(),
            AcceptedStudy {
                hash: hash.clone(),
                bound: study.spec.bound,
                codec,
            },
        );
        Ok(hash)
    }

    /// An accepted study's terms: its spec hash, bound and codec.
    pub(crate) fn study_terms(&self, study: &str) -> Result<&AcceptedStudy, ClientError> {
        self.studies.get(study).ok_or_else(|| {
            ClientError::Usage(format!(
                "study {study}'s spec has not been accepted (MemberSession::accept_study)"
            ))
        })
    }

    /// Opens `round`, or accepts that it exists already: only the latest round
    /// can be opened, and a member restarted after a crash may replay a round
    /// the others have finished and moved past (its recorded contribution and
    /// share are then resent, which the server accepts, and the result fetched).
    fn ensure_round(&self, study: &str, round: u64) -> Result<(), ClientError> {
        match self.client.open_round(study, round) {
            Ok(_) => Ok(()),
            Err(refused @ ClientError::Problem { .. }) => {
                match self.client.round(study, round, Duration::ZERO, None) {
                    Ok(_) => Ok(()),
                    Err(_) => Err(refused),
                }
            }
            Err(e) => Err(e),
        }
    }
}

/// An entry of a signed list, for [`fill_signatures`].
trait SignedEntry {
    /// The entry's member.
    fn member(&self) -> &str;
    /// Whether `other` lists what this entry lists (all but the signature).
    fn same_content(&self, other: &Self) -> bool;
    /// The entry's signature, hex (empty when left out).
    fn signature(&self) -> &str;
    /// Sets the entry's signature.
    fn set_signature(&mut self, signature: &str);
}

macro_rules! signed_entry {
    ($t:ty, |$a:ident, $b:ident| $same:expr) => {
        impl SignedEntry for $t {
            fn member(&self) -> &str {
                &self.member
            }
            fn same_content(&self, other: &Self) -> bool {
                let ($a, $b) = (self, other);
                $same
            }
            fn signature(&self) -> &str {
                &self.signature
            }
            fn set_signature(&mut self, signature: &str) {
                self.signature = signature.to_string();
            }
        }
    };
}

signed_entry!(fedhe_api::SignedUpload, |a, b| a.hash == b.hash);
signed_entry!(fedhe_api::SignedSumDigest, |a, b| a.digest == b.digest);
signed_entry!(fedhe_api::CommittedContribution, |a, b| a.hash == b.hash
    && a.values == b.values
    && a.c1_commitment_hash == b.c1_commitment_hash);

/// Copies into `list` the signatures of `signed` (the same list fetched
/// with some signatures), entry by entry where member and content agree; an
/// entry the second answer differs on keeps no signature and is refused by
/// the check that needs it.
fn fill_signatures<T: SignedEntry>(list: &mut [T], signed: &[T]) {
    let by_member: std::collections::HashMap<&str, &T> =
        signed.iter().map(|e| (e.member(), e)).collect();
    for e in list.iter_mut() {
        if let Some(s) = by_member.get(e.member()) {
            if s.same_content(e) && !s.signature().is_empty() {
                let signature = s.signature().to_string();
                e.set_signature(&signature);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A refusal of this member's commitment or contribution is read from
    /// the 409's own round state (issue 47): the member was left out only
    /// when the round went past that step without its upload, or failed;
    /// other bytes of its own, a round still at that step, an answer
    /// without the round's state and any other status keep the refusal.
    #[test]
    fn left_out_is_read_from_the_conflicts_round_state() {
        let refusal =
            |status: u16, state: Option<RoundState>, holds_yours: bool| ClientError::Problem {
                method: "PUT".into(),
                path: "/v1/studies/s/rounds/1/commitments/m".into(),
                problem: Box::new(fedhe_api::Problem {
                    kind: "https://fedhe.invalid/problems/conflict".into(),
                    title: "Conflict".into(),
                    status,
                    detail: "refused".into(),
                    round: state.map(|state| fedhe_api::RoundConflict {
                        state,
                        reason: None,
                        holds_yours,
                    }),
                }),
            };
        use super::round::ContributionStep::{Commit, Reveal};
        use RoundState::{Collecting, Committing, Decrypting, Failed};
        let cases = [
            (Commit, 409, Some(Collecting), false, true),
            (Commit, 409, Some(Decrypting), false, true),
            (Reveal, 409, Some(Decrypting), false, true),
            (Commit, 409, Some(Failed), true, true),
            (Commit, 409, Some(Collecting), true, false),
            (Reveal, 409, Some(Decrypting), true, false),
            (Commit, 409, Some(Committing), false, false),
            (Reveal, 409, Some(Collecting), false, false),
            (Commit, 409, None, false, false),
            (Commit, 422, Some(Collecting), false, false),
        ];
        for (step, status, state, holds, left) in cases {
            assert_eq!(
                MemberSession::left_out(step, &refusal(status, state, holds)),
                left,
                "{step:?} {status} {state:?} holds {holds}"
            );
        }
        assert!(!MemberSession::left_out(
            Commit,
            &ClientError::Timeout("t".into())
        ));
    }
}
