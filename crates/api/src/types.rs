//! The JSON bodies of the REST API. Binary objects (public-key shares,
//! contributions, aggregates, decryption shares) travel as
//! `application/octet-stream` in the wire envelope of `fedhe_crypto::wire`.
//! Times are unix milliseconds; hashes are BLAKE3, hex.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A member of a ceremony and its ed25519 identity key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct MemberSpec {
    /// The member id (1-64 characters from `[A-Za-z0-9._-]`).
    pub id: String,
    /// Its ed25519 public key, 64 hex digits.
    pub identity_key: String,
}

/// What an administrator gives to create a ceremony (DESIGN.md §2 step 1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct CeremonySpec {
    /// The ceremony id.
    pub id: String,
    /// The parameter set, by name (e.g. `n8192-q124`).
    pub parameter_set: String,
    /// The members, each with its identity key.
    pub members: Vec<MemberSpec>,
    /// Seconds from creation until the ceremony must be complete.
    pub deadline_secs: u64,
    /// Accept an insecure (test-only) parameter set.
    #[serde(default)]
    pub allow_insecure: bool,
    /// The administrator's ed25519 public key, 64 hex digits: it signs every
    /// study spec of the ceremony, and it is part of the transcript (so of the
    /// fingerprint members compare out of band).
    pub admin_key: String,
    /// t-of-n decryption: any `threshold` members decrypt a round (n/2 < T ≤
    /// n). Absent: every member decrypts (n-of-n), as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<u32>,
}

/// Phases of a ceremony.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CeremonyPhase {
    /// Members commit to the hashes of their public-key shares.
    Committing,
    /// Every member has committed; members reveal their shares.
    Revealing,
    /// Every share is revealed and the collective key exists; in a threshold
    /// ceremony each member now deals Shamir shares of its key share (sealed
    /// to their recipients) and confirms the shares it received.
    Dealing,
    /// Every share is revealed; the collective key exists (and, in a
    /// threshold ceremony, every member confirmed its Shamir shares).
    Complete,
    /// The deadline passed first.
    Failed,
}

/// `GET /v1/ceremonies/{ceremony}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct CeremonyStatus {
    /// The ceremony id.
    pub id: String,
    /// The parameter set, by name.
    pub parameter_set: String,
    /// The phase.
    pub phase: CeremonyPhase,
    /// The members, sorted, with their identity keys.
    pub members: Vec<MemberSpec>,
    /// Members that have committed.
    pub committed: Vec<String>,
    /// Members whose share is revealed.
    pub revealed: Vec<String>,
    /// When the ceremony fails if not complete (unix ms).
    pub deadline_at: i64,
    /// The seed of the common reference polynomial, hex.
    pub crs_seed: String,
    /// The administrator's ed25519 public key, hex (signs the study specs).
    pub admin_key: String,
    /// BLAKE3 of the canonical transcript, once complete.
    pub transcript_hash: Option<String>,
    /// Why it failed.
    pub reason: Option<String>,
    /// T of a t-of-n ceremony; absent for n-of-n.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<u32>,
    /// Members whose dealing is uploaded (threshold ceremonies).
    #[serde(default)]
    pub dealt: Vec<String>,
    /// Members that confirmed the Shamir shares they received.
    #[serde(default)]
    pub confirmed: Vec<String>,
}

/// A member's verdict on the Shamir shares it received in a threshold
/// ceremony (`PUT /v1/ceremonies/{c}/dealing-verdicts/{member}`). A refusal
/// names the dealer whose share did not open or verify, and fails the
/// ceremony.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct DealingVerdict {
    /// Every share opened and verified against its dealer's commitment.
    pub accepted: bool,
    /// The dealer at fault, when refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dealer: Option<String>,
    /// What failed, when refused (no share material).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A member's commitment: BLAKE3 of its public-key share, signed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Commitment {
    /// BLAKE3 of the share's wire bytes, hex.
    pub share_hash: String,
    /// The member's signature of the commitment statement, hex.
    pub signature: String,
}

/// One member's entry in a ceremony transcript.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct TranscriptEntry {
    /// The member.
    pub member: String,
    /// Its identity key, hex.
    pub identity_key: String,
    /// The committed hash of its public-key share, hex.
    pub share_hash: String,
    /// Its signature of the commitment, hex.
    pub signature: String,
}

/// `GET /v1/ceremonies/{ceremony}/transcript`: everything needed to recompute
/// the CRS and the collective key (the shares themselves are fetched by hash).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Transcript {
    /// The ceremony id.
    pub ceremony: String,
    /// The parameter set.
    pub parameter_set: String,
    /// The CRS seed, hex.
    pub crs_seed: String,
    /// One entry per member, sorted by member.
    pub entries: Vec<TranscriptEntry>,
    /// BLAKE3 of the collective public key's wire bytes, hex.
    pub collective_key_hash: String,
    /// The administrator's ed25519 public key, hex: the key that signs study
    /// specs. Empty in transcripts made before study specs were signed.
    #[serde(default)]
    pub admin_key: String,
    /// T of a t-of-n ceremony (part of the fingerprint); absent for n-of-n.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<u32>,
}

impl Transcript {
    /// BLAKE3 over a canonical text rendering of the transcript (what members
    /// compare out of band).
    pub fn hash_hex(&self) -> String {
        let mut h = blake3::Hasher::new();
        h.update(b"fedhe-transcript-v1\n");
        for field in [
            &self.ceremony,
            &self.parameter_set,
            &self.crs_seed,
            &self.collective_key_hash,
        ] {
            h.update(field.as_bytes());
            h.update(b"\n");
        }
        for e in &self.entries {
            for field in [&e.member, &e.identity_key, &e.share_hash, &e.signature] {
                h.update(field.as_bytes());
                h.update(b"\n");
            }
        }
        // Appended only when present, so fingerprints of older transcripts
        // stay what their members compared.
        if !self.admin_key.is_empty() {
            h.update(b"admin\n");
            h.update(self.admin_key.as_bytes());
            h.update(b"\n");
        }
        if let Some(t) = self.threshold {
            h.update(format!("threshold\n{t}\n").as_bytes());
        }
        h.finalize().to_hex().to_string()
    }
}

/// How a study's values are encoded: one plaintext slot per value, or two
/// limbs (a coarse part and the rest), which keeps a sum close to `f64`
/// precision at twice the slots (DESIGN.md §3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ValuePrecision {
    /// One slot per value: a sum's error is at most n·2^−(f+1).
    #[default]
    OneLimb,
    /// Two slots per value: a sum's error is at most n·2^−(f+s+1).
    TwoLimb,
}

impl ValuePrecision {
    /// Whether this is the default, one limb (left out of a spec's JSON, so
    /// the hashes of specs written before two limbs existed are unchanged).
    pub fn is_one_limb(&self) -> bool {
        *self == Self::OneLimb
    }
}

impl From<ValuePrecision> for fedhe_crypto::Precision {
    fn from(p: ValuePrecision) -> Self {
        match p {
            ValuePrecision::OneLimb => Self::OneLimb,
            ValuePrecision::TwoLimb => Self::TwoLimb,
        }
    }
}

impl std::str::FromStr for ValuePrecision {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "one-limb" => Ok(Self::OneLimb),
            "two-limb" => Ok(Self::TwoLimb),
            other => Err(format!(
                "unknown precision {other:?}: expected one-limb or two-limb"
            )),
        }
    }
}

/// What an administrator gives to create a study.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct StudySpec {
    /// The study id.
    pub id: String,
    /// The ceremony whose collective key the study uses.
    pub ceremony: String,
    /// The algorithm the members run (e.g. `fbo-fedgp`).
    pub algorithm: String,
    /// Algorithm configuration, opaque to the server.
    #[serde(default)]
    #[schema(value_type = Object)]
    pub config: serde_json::Value,
    /// A round closes at its deadline only with at least this many contributors.
    pub min_contributors: u32,
    /// Seconds a round collects contributions.
    pub round_timeout_secs: u64,
    /// Seconds a round waits for decryption shares once its aggregate exists.
    pub decrypt_timeout_secs: u64,
    /// The bound B on every |value| a member encrypts: with the ceremony's
    /// member count and parameter set it fixes the encoding (fractional bits)
    /// of every contribution, so no upload can choose another one.
    pub bound: f64,
    /// The encoding's limbs, fixed for every contribution like the bound.
    #[serde(default, skip_serializing_if = "ValuePrecision::is_one_limb")]
    pub precision: ValuePrecision,
    /// The highest round number the server opens (none if absent): a round
    /// that fails is retried under the next number, so this, not a failure,
    /// ends a study that cannot finish (issue 45, item 5). Absent from the
    /// canonical JSON when absent, so specs signed before it hash the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_cap: Option<u64>,
}

impl StudySpec {
    /// The encoding this spec fixes for every contribution of its study: a
    /// ceremony of `members` under `params`, the spec's bound and precision
    /// (the codec's fractional bits and limbs for them). The one place the
    /// server and every member make it.
    pub fn codec(
        &self,
        params: &std::sync::Arc<fedhe_crypto::Params>,
        members: usize,
    ) -> Result<fedhe_crypto::FixedPointCodec, fedhe_crypto::CodecError> {
        fedhe_crypto::FixedPointCodec::with_precision(
            params,
            members,
            self.bound,
            self.precision.into(),
        )
    }

    /// BLAKE3 of the spec's canonical JSON (fields in declaration order,
    /// object keys sorted), hex: what the administrator signs, each member
    /// records before its first contribution and signs into every
    /// commitment.
    pub fn hash_hex(&self) -> String {
        let mut h = blake3::Hasher::new();
        h.update(b"fedhe-study-spec-v1\n");
        // Serialising a struct of strings, numbers and a JSON value cannot fail.
        h.update(&serde_json::to_vec(self).unwrap_or_default());
        h.finalize().to_hex().to_string()
    }
}

/// `POST /v1/studies`: a spec and the administrator's signature of
/// [`crate::signing::study_spec_statement`] of its hash.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SignedStudySpec {
    /// The specification.
    pub spec: StudySpec,
    /// The administrator's ed25519 signature, hex.
    pub signature: String,
}

impl SignedStudySpec {
    /// `spec` signed by the administrator's `identity`.
    pub fn sign(spec: StudySpec, identity: &crate::Identity) -> Self {
        let signature = identity.sign_hex(&crate::signing::study_spec_statement(&spec.hash_hex()));
        Self { spec, signature }
    }
}

/// `GET /v1/studies/{study}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct StudyStatus {
    /// The specification.
    pub spec: StudySpec,
    /// [`StudySpec::hash_hex`] of `spec`.
    pub spec_hash: String,
    /// The administrator's signature of the spec's hash, hex.
    pub admin_signature: String,
    /// The ceremony's members.
    pub members: Vec<String>,
    /// The highest round number opened so far (0 if none).
    pub latest_round: u64,
}

/// States of a round.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RoundState {
    /// Members commit to their contributions (signed hashes); no contribution
    /// can be uploaded or read yet.
    Committing,
    /// The commitment list is frozen; members reveal (upload) the committed
    /// contributions.
    Collecting,
    /// The aggregate exists; members upload decryption shares.
    Decrypting,
    /// The result is available.
    Done,
    /// Deadline passed or too few contributors; see `reason`.
    Failed,
}

impl CeremonyPhase {
    /// The phase as stored and served.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Committing => "committing",
            Self::Revealing => "revealing",
            Self::Dealing => "dealing",
            Self::Complete => "complete",
            Self::Failed => "failed",
        }
    }

    /// Parses [`Self::as_str`].
    pub fn parse(s: &str) -> Option<Self> {
        [
            Self::Committing,
            Self::Revealing,
            Self::Dealing,
            Self::Complete,
            Self::Failed,
        ]
        .into_iter()
        .find(|x| x.as_str() == s)
    }
}

impl RoundState {
    /// The state as stored and served.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Committing => "committing",
            Self::Collecting => "collecting",
            Self::Decrypting => "decrypting",
            Self::Done => "done",
            Self::Failed => "failed",
        }
    }

    /// Parses [`Self::as_str`].
    pub fn parse(s: &str) -> Option<Self> {
        [
            Self::Committing,
            Self::Collecting,
            Self::Decrypting,
            Self::Done,
            Self::Failed,
        ]
        .into_iter()
        .find(|x| x.as_str() == s)
    }

    /// Whether no further transition happens.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Done | Self::Failed)
    }
}

/// `GET /v1/studies/{study}/rounds/{round}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct RoundStatus {
    /// The study.
    pub study: String,
    /// The round number (from 1).
    pub round: u64,
    /// The state.
    pub state: RoundState,
    /// Contributions received.
    pub received: u32,
    /// Contributions required for the round to close at its deadline.
    pub required: u32,
    /// Members of the ceremony (a round closes early once all contributed;
    /// every member's decryption share is needed).
    pub members: u32,
    /// Members that contributed.
    pub contributors: Vec<String>,
    /// Members whose decryption share is in.
    pub shares: Vec<String>,
    /// When the current state times out (unix ms).
    pub deadline_at: i64,
    /// Bumped by every change (compare-and-swap column).
    pub version: i64,
    /// Why the round failed.
    pub reason: Option<String>,
    /// t-of-n: the members that claimed a place in the decrypting set, in
    /// claim order; the set is fixed once it holds T members, and only they
    /// decrypt. Empty for n-of-n.
    #[serde(default)]
    pub decrypting_set: Vec<String>,
    /// t-of-n: T (absent for n-of-n, where every member decrypts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<u32>,
}

/// One signed upload as listed with an aggregate or a result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct SignedUpload {
    /// The member.
    pub member: String,
    /// BLAKE3 of the uploaded bytes, hex.
    pub hash: String,
    /// The member's signature of the upload statement, hex; empty (and left
    /// out of the JSON) where the request's `?signatures=` selection left
    /// it out (a member needs it only where the maker sent no signed
    /// digest, issue 16).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub signature: String,
}

/// `GET /v1/studies/{study}/rounds/{round}/contributions`: the contributions
/// an aggregate sums, each with its member's signature.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ContributionList {
    /// The round's state.
    pub state: RoundState,
    /// The contributions, sorted by member.
    pub contributions: Vec<SignedUpload>,
    /// BLAKE3 of the aggregate's wire bytes, once it exists.
    pub aggregate_hash: Option<String>,
}

impl ContributionList {
    /// BLAKE3 over a canonical rendering of the listed (member, hash) pairs
    /// in their order: what a sum digest's challenge and statement name, so
    /// that digests made against one list do not verify against another.
    pub fn entries_hash(&self, study: &str, round: u64) -> [u8; 32] {
        Self::entries_hash_of(study, round, &self.contributions)
    }

    /// [`Self::entries_hash`] of a list's entries (the server computes it
    /// once, when it aggregates).
    pub fn entries_hash_of(study: &str, round: u64, contributions: &[SignedUpload]) -> [u8; 32] {
        let mut h = blake3::Hasher::new();
        h.update(format!("fedhe-contribution-list-v1\n{study}\n{round}\n").as_bytes());
        for u in contributions {
            h.update(u.member.as_bytes());
            h.update(b" ");
            h.update(u.hash.as_bytes());
            h.update(b"\n");
        }
        *h.finalize().as_bytes()
    }
}

/// One contributor's signed digest of its own contribution (issue 16;
/// `fedhe_crypto::sum_digest`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct SignedSumDigest {
    /// The contributor.
    pub member: String,
    /// The digest's bytes, hex: the contribution's `SumDigest`, then its c1
    /// commitment (`fedhe_crypto::ContributorDigest`).
    pub digest: String,
    /// The contributor's signature of
    /// [`crate::signing::sum_digest_statement`], hex; empty (and left out
    /// of the JSON) where the request's `?signatures=` selection left it out.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub signature: String,
}

/// `GET /v1/studies/{study}/rounds/{round}/sum-digests`: the contributors'
/// signed digests of their contributions, from which a member checks the
/// aggregate without downloading every contribution.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SumDigestList {
    /// The round's state.
    pub state: RoundState,
    /// The digests received, sorted by member.
    pub digests: Vec<SignedSumDigest>,
    /// BLAKE3 of the aggregate's wire bytes, once it exists.
    pub aggregate_hash: Option<String>,
}

/// `GET /v1/studies/{study}/rounds/{round}/decryption-shares`: the decryption
/// shares received for a round's aggregate, each with its member's signature,
/// from which every member recomputes the result (verify after decrypt).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct DecryptionShareList {
    /// The round's state.
    pub state: RoundState,
    /// The shares, sorted by member.
    pub shares: Vec<SignedUpload>,
    /// BLAKE3 of the aggregate's wire bytes, once it exists.
    pub aggregate_hash: Option<String>,
}

impl DecryptionShareList {
    /// BLAKE3 over a canonical rendering of the listed (member, hash) pairs
    /// in their order and of the decrypting set (t-of-n: its members, sorted;
    /// empty for n-of-n): what a share digest's challenge and statement name.
    pub fn entries_hash(&self, study: &str, round: u64, decrypting_set: &[String]) -> [u8; 32] {
        Self::entries_hash_of(study, round, &self.shares, decrypting_set)
    }

    /// [`Self::entries_hash`] of a list's entries (the server computes it
    /// once, when it publishes the result).
    pub fn entries_hash_of(
        study: &str,
        round: u64,
        shares: &[SignedUpload],
        decrypting_set: &[String],
    ) -> [u8; 32] {
        let mut h = blake3::Hasher::new();
        h.update(format!("fedhe-decryption-share-list-v1\n{study}\n{round}\n").as_bytes());
        h.update(format!("{}\n", decrypting_set.join(",")).as_bytes());
        for u in shares {
            h.update(u.member.as_bytes());
            h.update(b" ");
            h.update(u.hash.as_bytes());
            h.update(b"\n");
        }
        *h.finalize().as_bytes()
    }
}

/// `PUT /v1/studies/{study}/rounds/{round}/commitments/{member}`: a member's
/// commitment to its contribution, made before any contribution of the round
/// can be read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct RoundCommitment {
    /// BLAKE3 of the contribution's wire bytes, hex.
    pub hash: String,
    /// How many values the contribution holds.
    pub values: u64,
    /// `fedhe_crypto::C1Commitment::hash` of the contribution's c1
    /// commitment, hex (issue 16: what the aggregate's c1 is checked against).
    pub c1_commitment_hash: String,
    /// The member's signature of
    /// [`crate::signing::round_commitment_statement`], hex.
    pub signature: String,
}

/// One entry of a round's commitment list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct CommittedContribution {
    /// The member.
    pub member: String,
    /// BLAKE3 of the contribution it will reveal, hex.
    pub hash: String,
    /// How many values it holds.
    pub values: u64,
    /// The hash of its c1 commitment, hex (empty for a commitment stored
    /// before c1 commitments existed).
    #[serde(default)]
    pub c1_commitment_hash: String,
    /// The member's signature of the commitment statement, hex; empty (and
    /// left out of the JSON) where the request's `?signatures=` selection
    /// left it out (the list's hash does not cover it).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub signature: String,
}

/// `GET /v1/studies/{study}/rounds/{round}/commitments`: the round's signed
/// commitments. Once the round leaves `committing` the list is frozen: it
/// holds only the commitments of the round's shape (`values`), and
/// `list_hash` is [`CommitmentList::canonical_hash`] of it, which every
/// member signs into its reveal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct CommitmentList {
    /// The round's state.
    pub state: RoundState,
    /// The value count of the round's contributions, once frozen.
    pub values: Option<u64>,
    /// The commitments, sorted by member.
    pub commitments: Vec<CommittedContribution>,
    /// The frozen list's canonical hash, hex.
    pub list_hash: Option<String>,
}

impl CommitmentList {
    /// BLAKE3 over a canonical rendering of a round's commitment entries
    /// (which must be sorted by member), hex. It covers what each entry
    /// commits to, not its signature (`v3`, issue 16): a member that checks
    /// a sample of the signatures downloads only those, and a list whose
    /// entries are all genuine is the same list whatever bytes sign them
    /// (an entry nobody signed is what the signature checks catch).
    pub fn canonical_hash(study: &str, round: u64, entries: &[CommittedContribution]) -> String {
        let mut h = blake3::Hasher::new();
        h.update(format!("fedhe-commitment-list-v3\n{study}\n{round}\n").as_bytes());
        // One buffer for every entry's line (a list of a thousand entries is
        // hashed by every member; issue 16).
        let mut line = String::new();
        for e in entries {
            use std::fmt::Write as _;
            line.clear();
            line.push_str(&e.member);
            line.push('\n');
            line.push_str(&e.hash);
            let _ = write!(line, "\n{}\n", e.values);
            line.push_str(&e.c1_commitment_hash);
            line.push('\n');
            h.update(line.as_bytes());
        }
        h.finalize().to_hex().to_string()
    }
}

/// `GET /v1/studies/{study}/rounds/{round}/result`: what a finished round
/// produced, without its values. The server never decodes a round: the
/// combined share it publishes is blinded by the members' result key
/// (`fedhe_crypto::result_key`), and each member unblinds and decodes it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct RoundResult {
    /// The round.
    pub round: u64,
    /// BLAKE3 of the aggregate, hex.
    pub aggregate_hash: String,
    /// [`ContributionList::entries_hash`] of the contributions it sums
    /// (listed at `GET .../contributions`), hex. Only the hash: every member
    /// fetches the list anyway to check the aggregate, and a result that
    /// listed the n contributions and n shares to each of n members made the
    /// round's result requests quadratic in n (issue 16). Absent for rounds
    /// aggregated before it was stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contribution_entries_hash: Option<String>,
    /// [`DecryptionShareList::entries_hash`] of the decryption shares
    /// combined, with the decrypting set (t-of-n), hex; the list is at
    /// `GET .../decryption-shares`. Absent for rounds finished before it was
    /// stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share_entries_hash: Option<String>,
    /// BLAKE3 of the combined decryption share `D = Σ_j d_j`
    /// (`GET .../combined-share`), hex: a member decodes `C0 + D` itself
    /// and checks `D` on the share makers' signed digests. Absent for rounds
    /// finished before it was stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub combined_hash: Option<String>,
}

/// An answer to a successful upload.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct UploadReceipt {
    /// BLAKE3 of the stored bytes, hex.
    pub hash: String,
    /// `false` when the same bytes were already stored (an idempotent retry).
    pub created: bool,
}

/// An RFC 9457 problem report (`application/problem+json`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Problem {
    /// A URI reference naming the problem type.
    #[serde(rename = "type")]
    pub kind: String,
    /// A short summary of the problem type.
    pub title: String,
    /// The HTTP status.
    pub status: u16,
    /// What exactly went wrong, for this request.
    pub detail: String,
    /// On a 409 of a round's route: the round's state, so that the caller
    /// goes on without asking for the round again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<RoundConflict>,
}

/// What a 409 on a round's route says of the round: its state (and why it
/// failed), and whether the round holds the caller's own upload for the
/// refused slot. A member whose commitment or contribution is refused tells
/// from it whether the round went on without it (`holds_yours` false past
/// that step) or holds other bytes of its own (a conflict it must not
/// paper over).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct RoundConflict {
    /// The round's state when the request was refused.
    pub state: RoundState,
    /// Why the round failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Whether the round holds an upload of the caller's for the refused
    /// slot (its commitment, contribution, digest or share); `false` for a
    /// download.
    #[serde(default)]
    pub holds_yours: bool,
}

/// The media type of [`Problem`].
pub const PROBLEM_JSON: &str = "application/problem+json";

/// `POST /v1/ui-tickets`: a link that opens the server's `/ui` pages in a
/// browser (administrator).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct UiTicket {
    /// The path to open on the server (valid for five minutes; opening it
    /// starts a browser session).
    pub path: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The commitment list's hash (`v3`, issue 16) changes with every
    /// committed field of every entry and with the study and round, and not
    /// with a signature: a member that fetched only its sample's signatures
    /// computes the same hash as one that fetched them all.
    #[test]
    fn the_commitment_list_hash_covers_what_is_committed_and_not_the_signatures() {
        let entry = |m: &str| CommittedContribution {
            member: m.into(),
            hash: "aa".repeat(32),
            values: 512,
            c1_commitment_hash: "bb".repeat(32),
            signature: "cc".repeat(64),
        };
        let list = vec![entry("a"), entry("b")];
        let hash = CommitmentList::canonical_hash("s", 1, &list);
        let changed: [fn(&mut CommittedContribution); 4] = [
            |e| e.member = "c".into(),
            |e| e.hash = "ab".repeat(32),
            |e| e.values = 513,
            |e| e.c1_commitment_hash = "ab".repeat(32),
        ];
        for change in changed {
            for i in 0..2 {
                let mut other = list.clone();
                change(&mut other[i]);
                assert_ne!(CommitmentList::canonical_hash("s", 1, &other), hash);
            }
        }
        assert_ne!(CommitmentList::canonical_hash("t", 1, &list), hash);
        assert_ne!(CommitmentList::canonical_hash("s", 2, &list), hash);
        assert_ne!(CommitmentList::canonical_hash("s", 1, &list[..1]), hash);
        let mut unsigned = list.clone();
        unsigned[0].signature.clear();
        unsigned[1].signature = "dd".repeat(64);
        assert_eq!(CommitmentList::canonical_hash("s", 1, &unsigned), hash);
    }

    /// The rendering `v3` fixes (the server and every member must agree on
    /// it byte for byte): the header, then per entry its member, hash, value
    /// count and c1 commitment hash, each on its own line. The reference is
    /// written here independently of the one-buffer rendering.
    #[test]
    fn the_commitment_list_hash_is_blake3_of_the_v3_rendering() {
        let list: Vec<CommittedContribution> = (0..3)
            .map(|i| CommittedContribution {
                member: format!("member-{i}"),
                hash: format!("{i:02x}").repeat(32),
                values: 500 + i,
                c1_commitment_hash: format!("{:02x}", 0xf0 + i).repeat(32),
                signature: String::new(),
            })
            .collect();
        let mut text = String::from("fedhe-commitment-list-v3\nstudy-x\n7\n");
        for e in &list {
            text += &format!(
                "{}\n{}\n{}\n{}\n",
                e.member, e.hash, e.values, e.c1_commitment_hash
            );
        }
        assert_eq!(
            CommitmentList::canonical_hash("study-x", 7, &list),
            blake3::hash(text.as_bytes()).to_hex().as_str()
        );
    }
}
