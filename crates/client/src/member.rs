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
    CommitmentSignatures, Evidence, IdentityKeys, Refusal, ResultEvidence, SessionCheck,
    SignatureChecks, C1_CHECK_FAILED, COMMITMENT_SAMPLE, CONTRIBUTION_SAMPLE,
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
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The validated parameters of a set by name.
pub fn params_by_name(name: &str, allow_insecure: bool) -> Result<Arc<Params>, ClientError> {
    let policy = if allow_insecure {
        InsecurePolicy::Allow
    } else {
        InsecurePolicy::Refuse
    };
    Ok(ParameterSet::by_name(name)?.validate(policy)?)
}

/// Joins a ceremony: samples s_i and b_i = −a·s_i + e_i, writes the secret
/// share and identity to the key folder, commits to BLAKE3(b_i), waits until
/// every member committed, then reveals b_i. `identity` must be the one the
/// ceremony was created with.
pub fn join_ceremony(
    client: &Client,
    keys: &KeyDir,
    ceremony: &str,
    allow_insecure: bool,
    force: bool,
    wait: Duration,
) -> Result<(), ClientError> {
    let member = client
        .member()
        .ok_or_else(|| ClientError::Usage("joining needs a member identity".into()))?
        .to_string();
    let status = client.ceremony(ceremony)?;
    let params = params_by_name(&status.parameter_set, allow_insecure)?;
    let ids = status
        .members
        .iter()
        .map(|m| MemberId::new(m.id.clone()))
        .collect::<Result<Vec<_>, _>>()?;
    let crs = CommonRandomPoly::for_ceremony(&params, &CeremonyId::new(ceremony)?, &ids)?;
    if hex::encode(crs.seed()) != status.crs_seed {
        return Err(ClientError::Verification(format!(
            "the server's CRS seed {} is not the one derived from the ceremony ({})",
            status.crs_seed,
            hex::encode(crs.seed())
        )));
    }
    // Resume: reuse a share already made for this ceremony.
    let share_bytes = if keys.exists(keys::SECRET_SHARE_FILE) && !force {
        let described = keys.read_member_file()?;
        if described.ceremony != ceremony {
            return Err(ClientError::Keys(format!(
                "{} holds keys of ceremony {}; use another folder or --force",
                keys.path().display(),
                described.ceremony
            )));
        }
        keys.read(keys::PUBLIC_SHARE_FILE)?.to_vec()
    } else {
        let mut rng = Csprng::from_entropy();
        let sk = SecretKeyShare::generate(&params, MemberId::new(member.clone())?, &mut rng);
        let pk = PublicKeyShare::generate(&params, &sk, &crs, &mut rng)?;
        let pk_bytes = pk.to_bytes(&params);
        keys.write_secret(keys::SECRET_SHARE_FILE, &sk.to_key_bytes(&params), force)?;
        keys.write(keys::PUBLIC_SHARE_FILE, &pk_bytes, force)?;
        let file = keys::MemberFile {
            member: member.clone(),
            ceremony: ceremony.to_string(),
            server: String::new(),
            parameter_set: status.parameter_set.clone(),
        };
        keys.write(
            keys::MEMBER_FILE,
            &serde_json::to_vec_pretty(&file).map_err(|e| ClientError::Decode(e.to_string()))?,
            force,
        )?;
        pk_bytes
    };
    let roster = ceremony_roster(&status)?;
    deal_result_key(client, ceremony, &params, &roster)?;
    client.commit(ceremony, &share_bytes)?;
    let start = Instant::now();
    wait_for_ceremony(
        client,
        ceremony,
        start,
        wait,
        "not every member committed",
        CeremonyWait {
            leaves: Some(fedhe_api::CeremonyPhase::Committing),
            dealt: None,
        },
    )?;
    client.reveal(ceremony, &share_bytes)?;
    if status.threshold.is_some() {
        deal_and_confirm(client, keys, ceremony, &params, force, start, wait)?;
    }
    receive_result_key(client, keys, ceremony, &params, &roster, force, start, wait)
}

/// A ceremony's members with their identity keys, as its status lists them.
pub fn ceremony_roster(
    status: &fedhe_api::CeremonyStatus,
) -> Result<Vec<(MemberId, ed25519_dalek::VerifyingKey)>, ClientError> {
    status
        .members
        .iter()
        .map(|m| {
            Ok((
                MemberId::new(m.id.clone())?,
                fedhe_api::signing::parse_public_key(&m.identity_key)?,
            ))
        })
        .collect()
}

/// As the ceremony's first member by id, deals the result key
/// (`fedhe_crypto::result_key`) sealed to every member of `roster`, unless
/// it was dealt already (a restarted dealer fetches its own key back in
/// [`fetch_result_key`]). Other members do nothing here.
pub fn deal_result_key(
    client: &Client,
    ceremony: &str,
    params: &Arc<Params>,
    roster: &[(MemberId, ed25519_dalek::VerifyingKey)],
) -> Result<(), ClientError> {
    let ids: Vec<MemberId> = roster.iter().map(|(m, _)| m.clone()).collect();
    let (me, identity) = client.identity()?;
    if result_key_dealer(&ids).map(MemberId::as_str) != Some(me)
        || client.result_key_for_me(ceremony)?.is_some()
    {
        return Ok(());
    }
    let mut rng = Csprng::from_entropy();
    let key = ResultKey::generate(&mut rng);
    let dealing = ResultKeyDealing::deal(
        params,
        &CeremonyId::new(ceremony)?,
        &key,
        &MemberId::new(me)?,
        identity.signing_key(),
        roster,
        &mut rng,
    )?;
    client.put_result_keys(ceremony, &dealing.to_bytes())?;
    Ok(())
}

/// [`fetch_result_key`], stored in the key folder (sealed like the secret
/// key share); a key already stored is kept unless `force`.
#[allow(clippy::too_many_arguments)]
fn receive_result_key(
    client: &Client,
    keys: &KeyDir,
    ceremony: &str,
    params: &Arc<Params>,
    roster: &[(MemberId, ed25519_dalek::VerifyingKey)],
    force: bool,
    start: Instant,
    wait: Duration,
) -> Result<(), ClientError> {
    if keys.exists(keys::RESULT_KEY_FILE) && !force {
        return Ok(());
    }
    let key = fetch_result_key(client, ceremony, params, roster, start, wait)?;
    keys.write_secret(keys::RESULT_KEY_FILE, key.expose_bytes(), force)
}

/// Waits (until `wait` from `start`) for the result key sealed to this
/// member by the ceremony's dealer and opens it with this member's identity
/// key; refuses a key dealt by another member or that does not authenticate.
pub fn fetch_result_key(
    client: &Client,
    ceremony: &str,
    params: &Arc<Params>,
    roster: &[(MemberId, ed25519_dalek::VerifyingKey)],
    start: Instant,
    wait: Duration,
) -> Result<ResultKey, ClientError> {
    let ids: Vec<MemberId> = roster.iter().map(|(m, _)| m.clone()).collect();
    let dealer = result_key_dealer(&ids)
        .ok_or_else(|| ClientError::Verification(format!("ceremony {ceremony} has no members")))?;
    let dealer_key = roster
        .iter()
        .find(|(m, _)| m == dealer)
        .map(|(_, k)| *k)
        .expect("the dealer is in the roster");
    let (me, identity) = client.identity()?;
    let bytes = loop {
        if let Some(bytes) = client.result_key_for_me(ceremony)? {
            break bytes;
        }
        if start.elapsed() > wait {
            return Err(ClientError::Timeout(format!(
                "ceremony {ceremony}: {dealer} dealt no result key within {wait:?}"
            )));
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let sealed = SealedResultKey::from_bytes(&bytes)?;
    if &sealed.dealer != dealer {
        return Err(ClientError::Verification(format!(
            "the result key served was dealt by {}, not by the ceremony's dealer {dealer}",
            sealed.dealer
        )));
    }
    Ok(sealed.open(
        params,
        &CeremonyId::new(ceremony)?,
        &MemberId::new(me)?,
        identity.signing_key(),
        &dealer_key,
    )?)
}

/// What a member waits for in a ceremony, as the server's long poll takes
/// it: the ceremony leaving a phase, or a number of members having dealt.
#[derive(Clone, Copy, Debug)]
struct CeremonyWait {
    /// Done once the ceremony is no longer in this phase.
    leaves: Option<fedhe_api::CeremonyPhase>,
    /// Done once at least this many members have dealt.
    dealt: Option<usize>,
}

impl CeremonyWait {
    /// Whether `status` is what this waits for.
    fn holds(&self, status: &fedhe_api::CeremonyStatus) -> bool {
        self.leaves.is_some_and(|p| status.phase != p)
            || self.dealt.is_some_and(|k| status.dealt.len() >= k)
    }
}

/// Waits (long polls) until `until` holds of a ceremony's status, failing
/// on a failed ceremony or after `wait` from `start`.
fn wait_for_ceremony(
    client: &Client,
    ceremony: &str,
    start: Instant,
    wait: Duration,
    what: &str,
    until: CeremonyWait,
) -> Result<fedhe_api::CeremonyStatus, ClientError> {
    loop {
        let asked = Instant::now();
        let poll = wait
            .saturating_sub(start.elapsed())
            .min(Duration::from_secs(20));
        let s = client.ceremony_wait(ceremony, poll, until.leaves, until.dealt)?;
        if s.phase == fedhe_api::CeremonyPhase::Failed {
            return Err(ClientError::Verification(format!(
                "ceremony {ceremony} failed: {}",
                fedhe_crypto::text::escape_controls(&s.reason.unwrap_or_default())
            )));
        }
        if until.holds(&s) {
            return Ok(s);
        }
        if start.elapsed() > wait {
            return Err(ClientError::Timeout(format!(
                "ceremony {ceremony}: {what} within {wait:?}"
            )));
        }
        // A server that answers at once (no long poll) is polled gently.
        if asked.elapsed() < Duration::from_millis(100) {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// The threshold step of a t-of-n ceremony, after the reveal (issue 15):
/// deal Shamir shares of the secret key share, each sealed to its recipient
/// (its own included, so a member that restarts fetches it back); once every
/// member dealt, open and verify the share addressed to this member in every
/// dealing, store s'_j (sealed like the secret key share) and confirm. A share
/// that does not open or verify is refused naming its dealer, which fails the
/// ceremony. Resumable: a stored dealing is not dealt again, a stored
/// threshold share is only confirmed.
fn deal_and_confirm(
    client: &Client,
    keys: &KeyDir,
    ceremony: &str,
    params: &Arc<Params>,
    force: bool,
    start: Instant,
    wait: Duration,
) -> Result<(), ClientError> {
    let me = client
        .member()
        .ok_or_else(|| ClientError::Usage("dealing needs a member identity".into()))?
        .to_string();
    let me_id = MemberId::new(me.clone())?;
    let status = wait_for_ceremony(
        client,
        ceremony,
        start,
        wait,
        "not every member revealed",
        CeremonyWait {
            leaves: Some(fedhe_api::CeremonyPhase::Revealing),
            dealt: None,
        },
    )?;
    let threshold = status.threshold.ok_or_else(|| {
        ClientError::Verification(format!("ceremony {ceremony} lost its threshold"))
    })? as usize;
    let cid = CeremonyId::new(ceremony)?;
    let identities = status
        .members
        .iter()
        .map(|m| {
            Ok((
                MemberId::new(m.id.clone())?,
                fedhe_api::signing::parse_public_key(&m.identity_key)?,
            ))
        })
        .collect::<Result<Vec<_>, ClientError>>()?;
    let ids: Vec<MemberId> = identities.iter().map(|(m, _)| m.clone()).collect();
    let access = fedhe_crypto::AccessStructure::new(&ids, threshold)?;
    let accept = fedhe_api::DealingVerdict {
        accepted: true,
        dealer: None,
        reason: None,
    };
    if keys.exists(keys::THRESHOLD_SHARE_FILE) && !force {
        let held =
            ThresholdSecretShare::from_key_bytes(params, &keys.read(keys::THRESHOLD_SHARE_FILE)?)?;
        if held.access() != &access || held.member() != &me_id {
            return Err(ClientError::Keys(format!(
                "{} holds a threshold share of another access structure; use --force",
                keys::THRESHOLD_SHARE_FILE
            )));
        }
        if status.phase == fedhe_api::CeremonyPhase::Dealing {
            confirm(client, ceremony, &accept)?;
        }
        return Ok(());
    }
    let (_, identity) = client.identity()?;
    if !status.dealt.contains(&me) {
        let secret = MemberSession::load_secret(keys, params)?;
        let mut rng = Csprng::from_entropy();
        let dealing = ThresholdDealing::deal(
            params,
            &cid,
            &access,
            &secret,
            identity.signing_key(),
            &identities,
            &mut rng,
        )?;
        client.put_dealing(ceremony, &dealing.to_bytes(params))?;
    }
    wait_for_ceremony(
        client,
        ceremony,
        start,
        wait,
        "not every member dealt",
        CeremonyWait {
            leaves: Some(fedhe_api::CeremonyPhase::Dealing),
            dealt: Some(ids.len()),
        },
    )?;
    let mut dealings = Vec::with_capacity(ids.len());
    for dealer in &ids {
        let bytes = client.dealing_for_me(ceremony, dealer.as_str())?;
        let dealing = ThresholdDealing::from_bytes(params, &bytes).and_then(|d| {
            if d.dealer() == dealer {
                Ok(d)
            } else {
                Err(fedhe_crypto::ThresholdError::MalformedCommitment {
                    dealer: dealer.clone(),
                    reason: format!("the server served a dealing of {}", d.dealer()),
                }
                .into())
            }
        });
        match dealing {
            Ok(d) => dealings.push(d),
            Err(e) => return Err(refuse(client, ceremony, dealer, e)),
        }
    }
    let share = match open_dealings(
        params,
        &cid,
        &access,
        &me_id,
        identity.signing_key(),
        &identities,
        &dealings,
    ) {
        Ok(share) => share,
        Err(e) => {
            let blamed = match &e {
                ChannelError::Threshold(t) => t.blamed_dealer().cloned(),
                _ => None,
            };
            return Err(match blamed {
                Some(dealer) => refuse(client, ceremony, &dealer, e),
                None => e.into(),
            });
        }
    };
    keys.write_secret(
        keys::THRESHOLD_SHARE_FILE,
        &share.to_key_bytes(params),
        force,
    )?;
    confirm(client, ceremony, &accept)?;
    // Done only when every member confirmed: a refusal by another member
    // fails the ceremony, and this member must hear of it.
    wait_for_ceremony(
        client,
        ceremony,
        start,
        wait,
        "not every member confirmed its Shamir shares",
        CeremonyWait {
            leaves: Some(fedhe_api::CeremonyPhase::Dealing),
            dealt: None,
        },
    )?;
    Ok(())
}

/// Sends this member's acceptance; a ceremony that failed meanwhile (another
/// member refused a dealing) is reported with its reason.
fn confirm(
    client: &Client,
    ceremony: &str,
    accept: &fedhe_api::DealingVerdict,
) -> Result<(), ClientError> {
    match client.put_dealing_verdict(ceremony, accept) {
        Ok(_) => Ok(()),
        Err(e @ ClientError::Problem { .. }) => {
            let s = client.ceremony(ceremony)?;
            if s.phase == fedhe_api::CeremonyPhase::Failed {
                Err(ClientError::Verification(format!(
                    "ceremony {ceremony} failed: {}",
                    fedhe_crypto::text::escape_controls(&s.reason.unwrap_or_default())
                )))
            } else {
                Err(e)
            }
        }
        Err(e) => Err(e),
    }
}

/// Refuses the shares received, naming `dealer` (the server fails the
/// ceremony), and returns the error to report.
fn refuse(client: &Client, ceremony: &str, dealer: &MemberId, e: ChannelError) -> ClientError {
    let verdict = fedhe_api::DealingVerdict {
        accepted: false,
        dealer: Some(dealer.to_string()),
        reason: Some(e.to_string()),
    };
    match client.put_dealing_verdict(ceremony, &verdict) {
        Ok(_) => ClientError::Verification(format!(
            "the Shamir share dealt by {dealer} was refused: {e}"
        )),
        Err(sent) => ClientError::Verification(format!(
            "the Shamir share dealt by {dealer} was refused: {e} (the refusal could not be sent: {sent})"
        )),
    }
}

/// What `verify_ceremony` established.
#[derive(Debug, Clone)]
pub struct VerifiedCeremony {
    /// The transcript.
    pub transcript: Transcript,
    /// Its fingerprint, to compare out of band.
    pub fingerprint: String,
    /// The collective key, recomputed from the shares.
    pub key: CollectivePublicKey,
    /// The parameters.
    pub params: Arc<Params>,
}

/// Recomputes the CRS and the collective key from the transcript and the
/// revealed shares, checks the member's own share is in it byte for byte and
/// every commitment is signed by its member, and that the server's collective
/// key is the recomputed one.
pub fn verify_ceremony(
    client: &Client,
    ceremony: &str,
    own_share: Option<(&str, &[u8])>,
    allow_insecure: bool,
) -> Result<VerifiedCeremony, ClientError> {
    let transcript = client.transcript(ceremony)?;
    let params = params_by_name(&transcript.parameter_set, allow_insecure)?;
    let ids = transcript
        .entries
        .iter()
        .map(|e| MemberId::new(e.member.clone()))
        .collect::<Result<Vec<_>, _>>()?;
    let crs = CommonRandomPoly::for_ceremony(&params, &CeremonyId::new(ceremony)?, &ids)?;
    if hex::encode(crs.seed()) != transcript.crs_seed {
        return Err(ClientError::Verification(
            "the transcript's CRS seed is not derived from the ceremony's id, parameters and members".into(),
        ));
    }
    let mut shares = Vec::with_capacity(ids.len());
    for entry in &transcript.entries {
        let bytes = client.public_key_share(ceremony, &entry.member)?;
        let hash = blake3::hash(&bytes);
        if hash.to_hex().as_str() != entry.share_hash {
            return Err(ClientError::Verification(format!(
                "the share served for {} is not the committed one",
                entry.member
            )));
        }
        let key = fedhe_api::signing::parse_public_key(&entry.identity_key)?;
        fedhe_api::signing::verify_hex(
            &key,
            &fedhe_api::signing::upload_statement(
                fedhe_api::UploadKind::Commitment,
                ceremony,
                &entry.member,
                0,
                hash.as_bytes(),
            ),
            &entry.signature,
            "commitment",
        )?;
        shares.push(PublicKeyShare::from_bytes(&params, &bytes)?);
    }
    if let Some((me, own)) = own_share {
        let entry = transcript
            .entries
            .iter()
            .find(|e| e.member == me)
            .ok_or_else(|| ClientError::Verification(format!("{me} is not in the transcript")))?;
        if entry.share_hash != blake3::hash(own).to_hex().as_str() {
            return Err(ClientError::Verification(format!(
                "the transcript does not hold my ({me}) public-key share"
            )));
        }
    }
    let key = CollectivePublicKey::aggregate(&crs, &ids, &shares)?;
    let served = client.collective_key(ceremony)?;
    let bytes = key.to_bytes(&params);
    if served != bytes || blake3::hash(&bytes).to_hex().as_str() != transcript.collective_key_hash {
        return Err(ClientError::Verification(
            "the server's collective key is not the sum of the revealed shares".into(),
        ));
    }
    let fingerprint = grouped_hex(&transcript.hash_hex());
    Ok(VerifiedCeremony {
        transcript,
        fingerprint,
        key,
        params,
    })
}

/// Hex in groups of four, for reading aloud.
pub fn grouped_hex(hex: &str) -> String {
    hex.as_bytes()
        .chunks(4)
        .map(|c| String::from_utf8_lossy(c).into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

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
    client: Client,
    params: Arc<Params>,
    member: MemberId,
    secret: SecretKeyShare,
    key: CollectivePublicKey,
    members: Vec<MemberSpec>,
    /// The members' identity keys, parsed once (`members`).
    identity_keys: IdentityKeys,
    state_dir: PathBuf,
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
    /// What [`Self::send_digest`] fetched (study, round, aggregate, list),
    /// its digest sent: [`Self::decrypt`] of that round takes it instead of
    /// fetching and digesting again.
    prepared: Option<(String, u64, Vec<u8>, ContributionList)>,
    /// What [`Self::send_share_digest`] fetched (study, round, result, share
    /// list, combined share), its share digest sent: [`Self::result`] takes
    /// it.
    prepared_result: Option<(String, u64, RoundResult, DecryptionShareList, Vec<u8>)>,
    /// The aggregate [`Self::decrypt`] verified (study, round, bytes):
    /// [`Self::result`] of that round checks against it without fetching it
    /// again (it still compares it with the recorded hash).
    verified_aggregate: Option<(String, u64, Vec<u8>)>,
    /// The next contribution's offline phase ([`Self::prepare_contribution`]).
    prepared_contribution: Option<PreparedContribution>,
    /// The commitment list [`Self::reveal`] recorded (study, round, list).
    recorded_list: Option<(String, u64, Arc<CommitmentList>)>,
    /// The c1 commitment of the contribution [`Self::commit`] made from
    /// prepared masks (study, round, commitment).
    prepared_c1: Option<(String, u64, C1Commitment)>,
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
            .field("state_dir", &self.state_dir)
            .finish_non_exhaustive()
    }
}

impl MemberSession {
    /// A session from a verified ceremony. `min_contributors` is this member's
    /// own floor on distinct contributors before it decrypts.
    pub fn new(
        client: Client,
        verified: &VerifiedCeremony,
        secret: SecretKeyShare,
        state_dir: impl Into<PathBuf>,
        min_contributors: usize,
    ) -> Result<Self, ClientError> {
        let member = secret.member().clone();
        let state_dir = state_dir.into();
        std::fs::create_dir_all(&state_dir)
            .map_err(|e| ClientError::Keys(format!("{}: {e}", state_dir.display())))?;
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
            client,
            params: verified.params.clone(),
            member,
            secret,
            key: verified.key.clone(),
            members,
            identity_keys,
            state_dir,
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
            prepared: None,
            prepared_result: None,
            prepared_contribution: None,
            recorded_list: None,
            prepared_c1: None,
            earlier_attempts: Vec::new(),
            verified_aggregate: None,
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
        if let Some((_, _, c1)) = self
            .prepared_c1
            .as_ref()
            .filter(|(s, r, _)| s == study && *r == round)
        {
            return Ok(c1.clone());
        }
        let path = self.record("c1-commitment", study, round);
        if let Ok(bytes) = std::fs::read(&path) {
            return Ok(C1Commitment::from_bytes(&bytes)?);
        }
        let v = EncryptedVector::from_bytes(&self.params, contribution)?;
        let c1 = C1Commitment::commit(&self.params, &v);
        keys::write_atomic(&self.state_dir, &file_name(&path), &c1.to_bytes(), false)?;
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

    /// The HTTP client.
    pub fn client(&self) -> &Client {
        &self.client
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

    fn record(&self, kind: &str, study: &str, round: u64) -> PathBuf {
        self.state_dir.join(format!("{study}.{round}.{kind}"))
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
        let path = self.state_dir.join(format!("{id}.spec"));
        match std::fs::read_to_string(&path) {
            Ok(recorded) if recorded.trim() == hash => {}
            Ok(recorded) => {
                return Err(ClientError::Verification(format!(
                    "the spec of study {id} is not the one I recorded (hash {}, now {hash}): refusing its rounds",
                    recorded.trim()
                )))
            }
            Err(_) => keys::write_atomic(&self.state_dir, &file_name(&path), hash.as_bytes(), false)?,
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

    /// Encrypts this member's contribution to a round (opening the round if
    /// needed), commits to it, waits for the frozen commitment list, checks
    /// it ([`verify_commitments`]), records it, and only then reveals the
    /// contribution ([`Self::commit`], then [`Self::reveal`]). `bound` must be
    /// the study's.
    pub fn contribute(
        &mut self,
        study: &str,
        round: u64,
        values: &[f64],
        bound: f64,
    ) -> Result<Vec<u8>, ClientError> {
        self.commit(study, round, values, bound)?;
        self.reveal(study, round)
    }

    /// Encrypts this member's contribution (opening the round if needed) and
    /// commits to it (DESIGN.md §6). The ciphertext is recorded before it is
    /// sent, so a restarted member commits to and reveals the same bytes.
    pub fn commit(
        &mut self,
        study: &str,
        round: u64,
        values: &[f64],
        bound: f64,
    ) -> Result<Vec<u8>, ClientError> {
        let AcceptedStudy {
            hash: spec_hash,
            bound: spec_bound,
            codec,
        } = self.study_terms(study)?.clone();
        if bound != spec_bound {
            return Err(ClientError::Usage(format!(
                "the bound {bound} is not study {study}'s bound {spec_bound}"
            )));
        }
        self.ensure_round(study, round)?;
        let path = self.record("contribution", study, round);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(_) => {
                let prepared = self
                    .prepared_contribution
                    .take()
                    .filter(|p| p.study == study && p.values == values.len());
                let (bytes, c1) = match prepared {
                    Some(p) => {
                        let v = EncryptedVector::encrypt_with_masks(&codec, values, p.masks)?;
                        (v.to_bytes(&self.params), Some(p.c1))
                    }
                    None => {
                        let v = EncryptedVector::encrypt(
                            &self.params,
                            &self.key,
                            &codec,
                            values,
                            &mut self.rng,
                        )?;
                        (v.to_bytes(&self.params), None)
                    }
                };
                keys::write_atomic(&self.state_dir, &file_name(&path), &bytes, false)?;
                // The commitment made with the masks is that of these bytes'
                // c1s: kept in memory for this round (a restarted member
                // computes it from the recorded bytes: the same point).
                if let Some(c1) = c1 {
                    self.prepared_c1 = Some((study.to_string(), round, c1));
                }
                bytes
            }
        };
        let c1 = self.own_c1_commitment(study, round, &bytes)?;
        self.client.put_round_commitment(
            study,
            round,
            &bytes,
            values.len() as u64,
            &spec_hash,
            &c1.hash(),
        )?;
        Ok(bytes)
    }

    /// Waits until the round's commitments are frozen, checks the list
    /// ([`verify_commitments`]) and records it, then reveals (uploads) the
    /// committed contribution, signed with the list's hash.
    pub fn reveal(&mut self, study: &str, round: u64) -> Result<Vec<u8>, ClientError> {
        let spec_hash = self.study_terms(study)?.hash.clone();
        let path = self.record("contribution", study, round);
        let bytes = std::fs::read(&path).map_err(|e| {
            ClientError::Usage(format!(
                "no committed contribution to reveal for round {round} of study {study} ({}: {e})",
                path.display()
            ))
        })?;
        let list = self.frozen_commitments(study, round)?;
        let (list, checks) = self.with_sampled_commitment_signatures(study, round, list)?;
        let own_c1 = self.own_c1_commitment(study, round, &bytes)?.hash();
        let list_hash = verify_commitments(&CommitmentEvidence {
            study,
            round,
            members: &self.identity_keys,
            spec_hash: &spec_hash,
            min_contributors: self.min_contributors,
            list: &list,
            own: Some((self.member.as_str(), &bytes)),
            own_c1_commitment_hash: Some(own_c1),
            signatures: CommitmentSignatures::Check(checks),
        })?;
        // Recorded before the reveal: decryption checks against this list.
        let list_path = self.record("commitments", study, round);
        let text = serde_json::to_vec(&list).map_err(|e| ClientError::Decode(e.to_string()))?;
        let same_list = |recorded: &[u8]| {
            serde_json::from_slice::<CommitmentList>(recorded)
                .is_ok_and(|r| r.list_hash == list.list_hash && r.commitments == list.commitments)
        };
        match std::fs::read(&list_path) {
            Ok(recorded) if same_list(&recorded) => {}
            Ok(_) => {
                return Err(Refusal {
                    study: study.into(),
                    round,
                    reason: "the server now shows another commitment list than the one I recorded"
                        .into(),
                }
                .into())
            }
            Err(_) => keys::write_atomic(&self.state_dir, &file_name(&list_path), &text, false)?,
        }
        self.recorded_list = Some((study.to_string(), round, Arc::new(list)));
        self.client
            .put_contribution(study, round, &bytes, &list_hash)?;
        Ok(bytes)
    }

    /// The commitment list this member checked and recorded before it
    /// revealed its contribution to this round ([`Self::reveal`]), if it did.
    /// (The copy this session recorded is kept in memory: at 1,000 members
    /// the record is 170 kB of JSON, read twice a round.)
    /// With it, whether this session verified it ([`Self::reveal`] keeps
    /// the list it verified in memory) or it was read from the record (a
    /// restarted member, whose record is verified again).
    fn recorded_commitments(
        &self,
        study: &str,
        round: u64,
    ) -> Result<Option<(Arc<CommitmentList>, bool)>, ClientError> {
        if let Some((_, _, list)) = self
            .recorded_list
            .as_ref()
            .filter(|(s, r, _)| s == study && *r == round)
        {
            return Ok(Some((Arc::clone(list), true)));
        }
        match std::fs::read(self.record("commitments", study, round)) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map(|list| Some((Arc::new(list), false)))
                .map_err(|e| ClientError::Decode(format!("recorded commitment list: {e}"))),
            Err(_) => Ok(None),
        }
    }

    fn no_recorded_list(&self, study: &str, round: u64) -> ClientError {
        Refusal {
            study: study.into(),
            round,
            reason: "I sent a contribution but recorded no commitment list".into(),
        }
        .into()
    }

    /// Waits until the round's commitments are frozen and returns the list.
    /// The list names the round's state, so it is asked for first: frozen
    /// (the round left `committing`), it is the answer, and only a member
    /// early to reveal waits on the round's status (one request fewer a
    /// round for the others, issue 16).
    fn frozen_commitments(&self, study: &str, round: u64) -> Result<CommitmentList, ClientError> {
        let start = Instant::now();
        let mut since = None;
        loop {
            let list =
                self.client
                    .round_commitments_part(study, round, ListPart::WithoutSignatures)?;
            if list.state != RoundState::Committing && list.state != RoundState::Failed {
                return Ok(list);
            }
            let st = self
                .client
                .round(study, round, Duration::from_secs(20), since)?;
            match st.state {
                RoundState::Committing => since = Some(st.version),
                RoundState::Failed => {
                    return Err(ClientError::RoundFailed {
                        round,
                        reason: st.reason.unwrap_or_default(),
                    })
                }
                // Frozen meanwhile: the list is read again.
                _ => {}
            }
            if start.elapsed() > self.round_timeout {
                return Err(ClientError::Timeout(format!(
                    "the commitments of round {round} of study {study} were not frozen within {:?}",
                    self.round_timeout
                )));
            }
        }
    }

    /// Waits for the round's aggregate, verifies it (verify before decrypt)
    /// and uploads this member's decryption share. A share is produced at
    /// most once per round: it is recorded before it is sent, and a restarted
    /// member resends the recorded share only for the same aggregate.
    pub fn decrypt(&mut self, study: &str, round: u64) -> Result<(), ClientError> {
        self.policy.check_round(study, round)?;
        let started = Instant::now();
        // What send_digest fetched, its digest already sent, or fetch now.
        let prepared = self
            .prepared
            .take()
            .filter(|(s, r, _, _)| s == study && *r == round);
        let (aggregate, list, digest_sent) = match prepared {
            Some((_, _, aggregate, list)) => {
                self.timings.aggregate_wait = 0.0;
                (aggregate, list, true)
            }
            None => {
                let aggregate = self.wait_for(study, round, "aggregate", |c| {
                    c.aggregate(study, round, Duration::from_secs(20))
                })?;
                self.timings.aggregate_wait = started.elapsed().as_secs_f64();
                let list =
                    self.client
                        .contributions_part(study, round, ListPart::WithoutSignatures)?;
                (aggregate, list, false)
            }
        };
        let mut list = list;
        let started = Instant::now();
        let own_path = self.record("contribution", study, round);
        let own = std::fs::read(&own_path).ok();
        let (digests, fetched) = self.digests_and_downloads(
            study,
            round,
            &list,
            &aggregate,
            own.as_deref(),
            digest_sent,
        )?;
        // The list came without upload signatures: only a contributor that
        // sent no signed digest needs its own (verify, check 6).
        let unsigned = self.without_digest(&list.contributions, &digests);
        if !unsigned.is_empty() {
            let signed =
                self.client
                    .contributions_part(study, round, ListPart::Entries(&unsigned))?;
            fill_signatures(&mut list.contributions, &signed.contributions);
        }
        let spec_hash = self.study_terms(study)?.hash.clone();
        // A contributor checks against the list it recorded before revealing;
        // a member that contributed nothing has only the list served now.
        // (Its signatures were checked before it was recorded.)
        let (commitments, commitment_signatures) = match self.recorded_commitments(study, round)? {
            Some((list, true)) => (
                list,
                CommitmentSignatures::VerifiedInThisSession(SessionCheck(())),
            ),
            Some((list, false)) => (list, CommitmentSignatures::CheckedWhenRecorded),
            None if own.is_none() => {
                let list = self.client.round_commitments_part(
                    study,
                    round,
                    ListPart::WithoutSignatures,
                )?;
                let (list, checks) = self.with_sampled_commitment_signatures(study, round, list)?;
                (Arc::new(list), CommitmentSignatures::Check(checks))
            }
            None => return Err(self.no_recorded_list(study, round)),
        };
        let (digests, contribution_checks) =
            self.with_sampled_digest_signatures(study, round, &list, digests, &fetched)?;
        let own_c1 = match &own {
            Some(bytes) => Some(self.own_c1_commitment(study, round, bytes)?.hash()),
            None => None,
        };
        // Every member makes the c1 check every round (SECURITY.md step 5):
        // the victim of a forged aggregate is among them, and a check drawn
        // at random would show the server, by this request, who checks.
        let carries = self.client.aggregate_carries(study, round)?;
        let evidence = Evidence {
            commitments: CommitmentEvidence {
                study,
                round,
                members: &self.identity_keys,
                spec_hash: &spec_hash,
                min_contributors: self.min_contributors,
                list: &commitments,
                own: own.as_deref().map(|b| (self.member.as_str(), b)),
                own_c1_commitment_hash: own_c1,
                signatures: commitment_signatures,
            },
            list: &list,
            contributions: &fetched,
            digests: &digests,
            aggregate: &aggregate,
            signatures: contribution_checks,
            c1_carries: Some(&carries),
        };
        let decoded = match verify_before_decrypt(&self.params, &evidence) {
            // The c1 check failed on signed commitments: a contributor whose
            // bytes do not open the commitment it signed, or a false
            // aggregate. Only every contribution's bytes tell which; fetched
            // now (n downloads, on this failure only), the check names the
            // contributor, or finds every one honest and the server's
            // aggregate or carries false.
            Err(refusal) if refusal.reason.starts_with(C1_CHECK_FAILED) => {
                // Every contribution fetched is checked on its signed digest:
                // every digest's signature too, not only the sample's.
                let mut signed_digests = digests.clone();
                fill_signatures(
                    &mut signed_digests.digests,
                    &self
                        .client
                        .sum_digests_part(study, round, 0, Duration::ZERO, ListPart::All)?
                        .digests,
                );
                let mut all = fetched.clone();
                for u in &list.contributions {
                    let held = all.iter().any(|(m, _)| *m == u.member);
                    if !held && self.identity_keys.contains(&u.member) {
                        all.push((
                            u.member.clone(),
                            self.client.contribution(study, round, &u.member)?,
                        ));
                    }
                }
                let again = verify_before_decrypt(
                    &self.params,
                    &Evidence {
                        contributions: &all,
                        digests: &signed_digests,
                        ..evidence
                    },
                );
                return Err(match again {
                    Err(r) if r.reason.starts_with(C1_CHECK_FAILED) => Refusal {
                        reason: format!(
                            "{} (every contribution's bytes open the c1 commitment its contributor signed: the server's aggregate or carries are false)",
                            r.reason
                        ),
                        ..r
                    },
                    Err(named) => named,
                    Ok(_) => refusal,
                }
                .into());
            }
            other => other?,
        };
        self.timings.verify = started.elapsed().as_secs_f64();
        let started = Instant::now();
        let contributors: Vec<String> = {
            let mut set: Vec<String> = list
                .contributions
                .iter()
                .map(|u| u.member.clone())
                .collect();
            set.sort();
            set
        };
        let may_decrypt = self.may_decrypt_retry(study, &contributors)?;
        let aggregate_hash = blake3::hash(&aggregate);
        // The aggregate this member verified: its result is checked against
        // it, whether or not this member decrypts (t-of-n).
        let verified_path = self.record("verified", study, round);
        match std::fs::read(&verified_path) {
            Ok(recorded) if recorded[..] != aggregate_hash.as_bytes()[..] => {
                return Err(Refusal {
                    study: study.into(),
                    round,
                    reason: "I already verified another aggregate of this round".into(),
                }
                .into())
            }
            Ok(_) => {}
            // n-of-n: every member decrypts, and its share record, written
            // next, begins with this hash (Self::result reads either).
            Err(_) if self.threshold.is_none() && may_decrypt => {}
            Err(_) => keys::write_atomic(
                &self.state_dir,
                &file_name(&verified_path),
                aggregate_hash.as_bytes(),
                false,
            )?,
        }
        self.verified_aggregate = Some((study.to_string(), round, aggregate));
        if !may_decrypt {
            // Sits this attempt out: others may decrypt it (t-of-n), or it
            // fails and is retried, until an attempt sums the same set.
            self.timings.share = started.elapsed().as_secs_f64();
            return Ok(());
        }
        let share_path = self.record("share", study, round);
        let active = match &self.threshold {
            None => None,
            Some((t, share)) => {
                if share.is_none() {
                    return Err(ClientError::Keys(format!(
                        "the ceremony is {t}-of-{}, and no threshold key share is loaded",
                        self.members.len()
                    )));
                }
                let set = self.decrypting_set(study, round, *t)?;
                if !set.contains(&self.member) {
                    // Not among the first T claimants: others decrypt.
                    self.timings.share = started.elapsed().as_secs_f64();
                    return Ok(());
                }
                Some(set)
            }
        };
        let share = match std::fs::read(&share_path) {
            Ok(recorded) => {
                // [32-byte aggregate hash][share bytes]
                if recorded.len() < 32 || recorded[..32] != aggregate_hash.as_bytes()[..] {
                    return Err(Refusal {
                        study: study.into(),
                        round,
                        reason: "I already produced a decryption share for this round, of another aggregate".into(),
                    }
                    .into());
                }
                recorded[32..].to_vec()
            }
            Err(_) => {
                // Blinded with the members' result key before it leaves:
                // the server combines shares it cannot decode.
                let blind = self.result_key()?.clone();
                let ctx = BlindingContext {
                    ceremony: &self.ceremony,
                    study,
                    round,
                    aggregate_hash: aggregate_hash.as_bytes(),
                };
                let bytes = match (&active, &self.threshold) {
                    (Some(set), Some((_, Some(tshare)))) => {
                        let mut share = ThresholdDecryptionShare::generate(
                            &self.params,
                            tshare,
                            set,
                            &decoded,
                            &mut self.rng,
                        )?;
                        blind.blind_threshold(&self.params, &ctx, &mut share)?;
                        share.to_bytes(&self.params)
                    }
                    _ => {
                        let mut share = DecryptionShare::generate(
                            &self.params,
                            &self.secret,
                            &decoded,
                            &mut self.rng,
                        )?;
                        blind.blind(&self.params, &ctx, &mut share)?;
                        share.to_bytes(&self.params)
                    }
                };
                let mut record = aggregate_hash.as_bytes().to_vec();
                record.extend_from_slice(&bytes);
                // Who this share lets the federation sum (a retry of the
                // round is held to it: Self::check_retry_contributors),
                // recorded before the share can exist.
                let sum_set = serde_json::to_vec(&contributors)
                    .map_err(|e| ClientError::Decode(e.to_string()))?;
                keys::write_atomic(
                    &self.state_dir,
                    &file_name(&self.record("contributors", study, round)),
                    &sum_set,
                    true,
                )?;
                // Fails if a share of this round was recorded meanwhile.
                keys::write_atomic(&self.state_dir, &file_name(&share_path), &record, false)?;
                bytes
            }
        };
        self.client.put_decryption_share(study, round, &share)?;
        self.timings.share = started.elapsed().as_secs_f64();
        Ok(())
    }

    /// As a contributor listed with `own`, signs and uploads the digest of
    /// its contribution on the challenge of `aggregate` and `list`
    /// (`fedhe_crypto::sum_digest`; idempotent: the digest is deterministic).
    /// A 409 (the round went on without waiting for it, t-of-n) is not an
    /// error: the others then download this contribution.
    fn upload_own_digest(
        &self,
        study: &str,
        round: u64,
        list: &ContributionList,
        aggregate: &[u8],
        own: &[u8],
    ) -> Result<(), ClientError> {
        let own_hash = blake3::hash(own);
        if !list
            .contributions
            .iter()
            .any(|u| u.member == self.member.as_str() && u.hash == own_hash.to_hex().as_str())
        {
            return Ok(());
        }
        let commitment_list_hash = self
            .recorded_commitments(study, round)?
            .and_then(|(l, _)| l.list_hash.clone())
            .ok_or_else(|| self.no_recorded_list(study, round))?;
        let aggregate_hash = blake3::hash(aggregate);
        let entries_hash = list.entries_hash(study, round);
        let v = EncryptedVector::from_bytes(&self.params, own)?;
        let digest = ContributorDigest {
            sum: SumChallenge::derive(
                &self.params,
                study,
                round,
                &entries_hash,
                aggregate_hash.as_bytes(),
            )
            .digest(&self.params, &v),
            c1: self.own_c1_commitment(study, round, own)?,
        };
        match self.client.put_sum_digest(
            study,
            round,
            own_hash.as_bytes(),
            &commitment_list_hash,
            &entries_hash,
            aggregate_hash.as_bytes(),
            &digest.to_bytes(),
        ) {
            Ok(_) => Ok(()),
            Err(ClientError::Problem { problem, .. }) if problem.status == 409 => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Waits for the round's aggregate and, if this member contributed,
    /// uploads the digest of its contribution ([`Self::decrypt`] does this
    /// itself otherwise). A caller driving many members in turn (`fedhe bench
    /// service`) sends every digest before any member waits for the others';
    /// the next [`Self::decrypt`] of this round then reuses the aggregate and
    /// list fetched here instead of fetching and digesting again.
    pub fn send_digest(&mut self, study: &str, round: u64) -> Result<(), ClientError> {
        let aggregate = self.wait_for(study, round, "aggregate", |c| {
            c.aggregate(study, round, Duration::from_secs(20))
        })?;
        let list = self
            .client
            .contributions_part(study, round, ListPart::WithoutSignatures)?;
        if let Ok(own) = std::fs::read(self.record("contribution", study, round)) {
            self.upload_own_digest(study, round, &list, &aggregate, &own)?;
        }
        self.prepared = Some((study.to_string(), round, aggregate, list));
        Ok(())
    }

    /// What [`Self::decrypt`] checks the aggregate with (`fedhe_crypto::sum_digest`):
    /// as a contributor, first signs and uploads the digest of its own
    /// contribution on the aggregate's challenge (unless `digest_sent`); then waits up to
    /// [`Self::digest_wait`] for every listed contributor's digest and
    /// downloads in full the contributions without one, plus
    /// [`Self::spot_checks`] others chosen at random (their signed digests are
    /// checked against their bytes). Returns the digests and the bytes held,
    /// its own contribution's included.
    fn digests_and_downloads(
        &mut self,
        study: &str,
        round: u64,
        list: &ContributionList,
        aggregate: &[u8],
        own: Option<&[u8]>,
        digest_sent: bool,
    ) -> Result<(SumDigestList, Vec<Download>), ClientError> {
        let me = self.member.as_str();
        let mut held = Vec::new();
        if let Some(own) = own {
            if !digest_sent {
                self.upload_own_digest(study, round, list, aggregate, own)?;
            }
            held.push((me.to_string(), own.to_vec()));
        }
        let digests = self.client.sum_digests_part(
            study,
            round,
            list.contributions.len(),
            self.digest_wait,
            ListPart::WithoutSignatures,
        )?;
        let listed: Vec<&str> = list
            .contributions
            .iter()
            .map(|u| u.member.as_str())
            .collect();
        // A member that holds no contribution fetches one at least: the
        // aggregate's encoding is checked against a contribution's.
        let spot_checks = match own {
            Some(_) => self.effective_spot_checks(),
            None => self.effective_spot_checks().max(1),
        };
        for m in self.pick_downloads(&listed, &digests, spot_checks) {
            held.push((m.clone(), self.client.contribution(study, round, &m)?));
        }
        Ok((digests, held))
    }

    /// Which signatures of a list to check ([`Self::signature_checks`]),
    /// pinned to the list (issue 16): a member that samples fetches its
    /// sample's signatures by name, which shows the server the sample, so
    /// before asking it records the seed with the list's `fingerprint`
    /// (`sample-{kind}` in its state folder) and from then on checks no
    /// other list of that kind for the round, with no other sample. A server
    /// that failed the request to learn the sample, then showed a list
    /// forged outside it, is refused; an honest server's frozen or complete
    /// lists never change. t-of-n checks every signature: nothing to pin.
    fn pinned_checks(
        &mut self,
        kind: &str,
        study: &str,
        round: u64,
        fingerprint: &[u8; 32],
    ) -> Result<SignatureChecks, ClientError> {
        let checks = self.signature_checks();
        let SignatureChecks::Sampled(sample) = checks else {
            return Ok(checks);
        };
        let path = self.record(&format!("sample-{kind}"), study, round);
        match pinned_seed(&self.state_dir, &file_name(&path), fingerprint, sample.seed)? {
            Some(seed) => Ok(SignatureChecks::Sampled(crate::verify::SignatureSample {
                seed,
                ..sample
            })),
            None => Err(Refusal {
                study: study.into(),
                round,
                reason: format!(
                    "the server now shows another {kind} list than the one whose signatures I sampled"
                ),
            }
            .into()),
        }
    }

    /// A commitment list fetched without signatures, with those this member
    /// checks fetched by name and copied in (all of them in t-of-n), and the
    /// checks to make ([`Self::pinned_checks`]).
    fn with_sampled_commitment_signatures(
        &mut self,
        study: &str,
        round: u64,
        mut list: CommitmentList,
    ) -> Result<(CommitmentList, SignatureChecks), ClientError> {
        let fingerprint = blake3::hash(list.list_hash.as_deref().unwrap_or("").as_bytes());
        let checks = self.pinned_checks("commitments", study, round, fingerprint.as_bytes())?;
        let mut sorted: Vec<&str> = list.commitments.iter().map(|c| c.member.as_str()).collect();
        sorted.sort();
        let wanted: Vec<String> = checks
            .chosen_members(&sorted, COMMITMENT_SAMPLE)
            .into_iter()
            .filter(|m| self.identity_keys.contains(m))
            .map(str::to_string)
            .collect();
        if !wanted.is_empty() {
            let part = match checks {
                SignatureChecks::All => ListPart::All,
                SignatureChecks::Sampled(_) => ListPart::Entries(&wanted),
            };
            let signed = self.client.round_commitments_part(study, round, part)?;
            fill_signatures(&mut list.commitments, &signed.commitments);
        }
        Ok((list, checks))
    }

    /// The contributors' digests (fetched without signatures) with the
    /// signatures this member checks fetched by name and copied in, and the
    /// checks to make. A member samples a complete list only, pinned to it
    /// ([`Self::pinned_checks`]); a list missing digests may yet grow, so it
    /// fetches every signature and samples without telling the server.
    fn with_sampled_digest_signatures(
        &mut self,
        study: &str,
        round: u64,
        list: &ContributionList,
        mut digests: SumDigestList,
        fetched: &[(String, Vec<u8>)],
    ) -> Result<(SumDigestList, SignatureChecks), ClientError> {
        let listed: Vec<&str> = list
            .contributions
            .iter()
            .map(|u| u.member.as_str())
            .collect();
        let digested: std::collections::HashSet<&str> =
            digests.digests.iter().map(|d| d.member.as_str()).collect();
        let complete = listed.iter().all(|m| digested.contains(m));
        let checks = if complete {
            let mut h = blake3::Hasher::new();
            h.update(&list.entries_hash(study, round));
            for d in &digests.digests {
                h.update(format!("{}\n{}\n", d.member, d.digest).as_bytes());
            }
            self.pinned_checks("digests", study, round, h.finalize().as_bytes())?
        } else {
            self.signature_checks()
        };
        let wanted: Option<Vec<String>> = match &checks {
            SignatureChecks::Sampled(_) if complete => {
                let mut wanted: Vec<&str> = checks.chosen_members(&listed, CONTRIBUTION_SAMPLE);
                wanted.extend(fetched.iter().map(|(m, _)| m.as_str()));
                wanted.sort();
                wanted.dedup();
                Some(
                    wanted
                        .into_iter()
                        .filter(|m| digested.contains(m) && self.identity_keys.contains(m))
                        .map(str::to_string)
                        .collect(),
                )
            }
            _ => None,
        };
        let signed = match &wanted {
            Some(w) if w.is_empty() => None,
            Some(w) => Some(self.client.sum_digests_part(
                study,
                round,
                0,
                Duration::ZERO,
                ListPart::Entries(w),
            )?),
            None => Some(self.client.sum_digests_part(
                study,
                round,
                0,
                Duration::ZERO,
                ListPart::All,
            )?),
        };
        if let Some(signed) = signed {
            fill_signatures(&mut digests.digests, &signed.digests);
        }
        Ok((digests, checks))
    }

    /// The ceremony members listed in `list` without a signed digest in
    /// `digests`: whose upload signatures this member checks instead
    /// (issue 16). Others listed are refused by the check itself, and are
    /// not named to the server in a query.
    fn without_digest(
        &self,
        list: &[fedhe_api::SignedUpload],
        digests: &SumDigestList,
    ) -> Vec<String> {
        let digested: std::collections::HashSet<&str> =
            digests.digests.iter().map(|d| d.member.as_str()).collect();
        list.iter()
            .map(|u| u.member.as_str())
            .filter(|m| !digested.contains(m) && self.identity_keys.contains(m))
            .map(str::to_string)
            .collect()
    }

    /// Which of the `listed` members' objects to download in full, besides
    /// this member's own: those without a digest in `digests`, and
    /// `spot_checks` of the others chosen at random.
    fn pick_downloads(
        &mut self,
        listed: &[&str],
        digests: &SumDigestList,
        spot_checks: usize,
    ) -> Vec<String> {
        let me = self.member.as_str();
        let digested_members: std::collections::HashSet<&str> =
            digests.digests.iter().map(|d| d.member.as_str()).collect();
        let (mut download, mut digested): (Vec<&str>, Vec<&str>) = listed
            .iter()
            .filter(|m| **m != me)
            .partition(|m| !digested_members.contains(**m));
        for _ in 0..spot_checks {
            if digested.is_empty() {
                break;
            }
            let k = (self.rng.next_u64() % digested.len() as u64) as usize;
            download.push(digested.swap_remove(k));
        }
        download.into_iter().map(str::to_string).collect()
    }

    /// Waits for a round's result and checks it before it is used (verify
    /// after decrypt, [`crate::verify::verify_after_decrypt`]): it must be of
    /// the aggregate this member verified when it decrypted, and exactly the
    /// combination of every member's signed decryption share with that
    /// aggregate. Then records and signs the ceremony's audit-trail head
    /// ([`crate::audit::observe_head`]). Returns this member's own decoding.
    pub fn result(&mut self, study: &str, round: u64) -> Result<Vec<f64>, ClientError> {
        let started = Instant::now();
        // What send_share_digest fetched, its digest already sent, or fetch
        // now (and send this member's share digest below).
        let prepared = self
            .prepared_result
            .take()
            .filter(|(s, r, ..)| s == study && *r == round);
        let (r, prepared) = match prepared {
            Some((_, _, r, list, combined)) => (r, Some((list, combined))),
            None => {
                let r = self.wait_for(study, round, "result", |c| {
                    c.result(study, round, Duration::from_secs(20))
                })?;
                (r, None)
            }
        };
        self.timings.result_wait = started.elapsed().as_secs_f64();
        let started = Instant::now();
        let refuse = |reason: &str| -> ClientError {
            Refusal {
                study: study.into(),
                round,
                reason: reason.into(),
            }
            .into()
        };
        // Older state folders recorded the verified aggregate's hash only
        // at the head of the share record.
        let recorded = std::fs::read(self.record("verified", study, round))
            .or_else(|_| std::fs::read(self.record("share", study, round)))
            .map_err(|_| {
                refuse("I verified no aggregate of this round to check its result against")
            })?;
        if recorded.len() < 32 || hex::encode(&recorded[..32]) != r.aggregate_hash {
            return Err(ClientError::Verification(format!(
                "the result of round {round} is not of the aggregate I decrypted"
            )));
        }
        let held = self
            .verified_aggregate
            .take()
            .filter(|(s, r, _)| s == study && *r == round);
        let aggregate = match held {
            Some((_, _, bytes)) => bytes,
            None => self.client.aggregate(study, round, Duration::ZERO)?,
        };
        if blake3::hash(&aggregate).as_bytes()[..] != recorded[..32] {
            return Err(refuse(
                "the aggregate served now is not the one I decrypted",
            ));
        }
        let aggregate = EncryptedVector::from_bytes(&self.params, &aggregate)?;
        let aggregate_hash: [u8; 32] = recorded[..32].try_into().expect("32 bytes");
        let (list, combined) = match prepared {
            Some((list, combined)) => (list, combined),
            None => {
                let list = self.client.decryption_shares_part(
                    study,
                    round,
                    ListPart::WithoutSignatures,
                )?;
                let combined = self.client.combined_share(study, round)?;
                self.upload_own_share_digest(study, round, &list, &combined, &aggregate_hash)?;
                (list, combined)
            }
        };
        let mut list = list;
        let digests =
            self.client
                .share_digests(study, round, list.shares.len(), self.digest_wait)?;
        // As for contributions: a share's upload signature only where its
        // maker sent no signed digest (verify, check 9).
        let unsigned = self.without_digest(&list.shares, &digests);
        if !unsigned.is_empty() {
            let signed =
                self.client
                    .decryption_shares_part(study, round, ListPart::Entries(&unsigned))?;
            fill_signatures(&mut list.shares, &signed.shares);
        }
        let mut fetched = Vec::new();
        if let Some(own) = self.own_share(study, round, &aggregate_hash) {
            fetched.push((self.member.to_string(), own));
        }
        let listed: Vec<&str> = list.shares.iter().map(|u| u.member.as_str()).collect();
        // No share is spot-checked: a maker that signed a false digest with
        // the server's help could as well have uploaded the share the
        // server wanted (shares are not committed before they are seen, and
        // nothing proves a share correct), so a download would catch
        // nothing a maker cannot do unseen (SECURITY.md, step 6).
        for m in self.pick_downloads(&listed, &digests, 0) {
            fetched.push((m.clone(), self.client.decryption_share(study, round, &m)?));
        }
        let values = verify_after_decrypt(
            &self.params,
            &ResultEvidence {
                study,
                round,
                members: &self.identity_keys,
                aggregate: &aggregate,
                aggregate_hash: &aggregate_hash,
                list: &list,
                shares: &fetched,
                combined: &combined,
                digests: &digests,
                result_key: self.result_key()?,
                ceremony: &self.ceremony,
                threshold: self.threshold.as_ref().map(|(t, _)| *t),
            },
        )?;
        self.timings.result_verify = started.elapsed().as_secs_f64();
        // The trail's head after this round, verified to chain on from the
        // last one recorded, journaled and signed to the server (issue 45,
        // item 9; `fedhe audit --verify` checks them all later).
        crate::audit::observe_head(&self.client, self.ceremony.as_str(), &self.state_dir)?;
        Ok(values)
    }

    /// The decryption share this member recorded for the aggregate with hash
    /// `aggregate_hash`, if it made one.
    fn own_share(&self, study: &str, round: u64, aggregate_hash: &[u8; 32]) -> Option<Vec<u8>> {
        let recorded = std::fs::read(self.record("share", study, round)).ok()?;
        (recorded.len() > 32 && recorded[..32] == aggregate_hash[..])
            .then(|| recorded[32..].to_vec())
    }

    /// As a share maker listed with its recorded share, signs and uploads the
    /// digest of its share on the challenge of the combined share `combined`
    /// and the share list (`SumChallenge::derive_for_shares`; idempotent).
    fn upload_own_share_digest(
        &self,
        study: &str,
        round: u64,
        list: &DecryptionShareList,
        combined: &[u8],
        aggregate_hash: &[u8; 32],
    ) -> Result<(), ClientError> {
        let Some(own) = self.own_share(study, round, aggregate_hash) else {
            return Ok(());
        };
        let own_hash = blake3::hash(&own);
        if !list
            .shares
            .iter()
            .any(|u| u.member == self.member.as_str() && u.hash == own_hash.to_hex().as_str())
        {
            return Ok(());
        }
        let (set, polys) = match &self.threshold {
            None => (
                Vec::new(),
                DecryptionShare::from_bytes(&self.params, &own)?
                    .polys()
                    .to_vec(),
            ),
            Some(_) => {
                let mut set: Vec<String> = list.shares.iter().map(|u| u.member.clone()).collect();
                set.sort();
                (
                    set,
                    ThresholdDecryptionShare::from_bytes(&self.params, &own)?
                        .share()
                        .polys()
                        .to_vec(),
                )
            }
        };
        let entries_hash = list.entries_hash(study, round, &set);
        let combined_hash = blake3::hash(combined);
        let digest = SumChallenge::derive_for_shares(
            &self.params,
            study,
            round,
            &entries_hash,
            combined_hash.as_bytes(),
            aggregate_hash,
        )
        .digest_polys(&self.params, &polys);
        self.client.put_share_digest(
            study,
            round,
            own_hash.as_bytes(),
            &entries_hash,
            combined_hash.as_bytes(),
            aggregate_hash,
            &set,
            &digest.to_bytes(),
        )?;
        Ok(())
    }

    /// Waits for the round's result and, if this member made a decryption
    /// share, uploads its digest ([`Self::result`] does this itself
    /// otherwise). A caller driving many members in turn (`fedhe bench
    /// service`) sends every share digest before any member waits for the
    /// others'; the next [`Self::result`] of this round then reuses the share
    /// list and combined share fetched here.
    pub fn send_share_digest(&mut self, study: &str, round: u64) -> Result<(), ClientError> {
        let r = self.wait_for(study, round, "result", |c| {
            c.result(study, round, Duration::from_secs(20))
        })?;
        let aggregate_hash: [u8; 32] = fedhe_api::signing::decode_fixed(&r.aggregate_hash, "hash")
            .map_err(|e| ClientError::Decode(e.to_string()))?;
        let list = self
            .client
            .decryption_shares_part(study, round, ListPart::WithoutSignatures)?;
        let combined = self.client.combined_share(study, round)?;
        self.upload_own_share_digest(study, round, &list, &combined, &aggregate_hash)?;
        self.prepared_result = Some((study.to_string(), round, r, list, combined));
        Ok(())
    }

    /// Long-polls `fetch` until it succeeds; a 409 (not ready) is retried
    /// unless the round failed, until the round timeout.
    /// Claims a place in a t-of-n round's decrypting set and waits until
    /// the set holds T members; returns it, sorted.
    fn decrypting_set(
        &self,
        study: &str,
        round: u64,
        threshold: usize,
    ) -> Result<Vec<MemberId>, ClientError> {
        let start = Instant::now();
        loop {
            let st = self.client.claim_decryption(study, round)?;
            if st.decrypting_set.len() >= threshold {
                let mut set = st
                    .decrypting_set
                    .iter()
                    .map(|m| MemberId::new(m.clone()))
                    .collect::<Result<Vec<_>, _>>()?;
                set.sort();
                set.dedup();
                if set.len() != threshold {
                    return Err(Refusal {
                        study: study.into(),
                        round,
                        reason: format!(
                            "the server's decrypting set has {} distinct members; the threshold is {threshold}",
                            set.len()
                        ),
                    }
                    .into());
                }
                return Ok(set);
            }
            if st.state == RoundState::Failed {
                return Err(ClientError::RoundFailed {
                    round,
                    reason: st.reason.unwrap_or_default(),
                });
            }
            if start.elapsed() > self.round_timeout {
                return Err(ClientError::Timeout(format!(
                    "the decrypting set of round {round} of study {study} was not filled within {:?}",
                    self.round_timeout
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn wait_for<T>(
        &self,
        study: &str,
        round: u64,
        what: &str,
        fetch: impl Fn(&Client) -> Result<T, ClientError>,
    ) -> Result<T, ClientError> {
        let start = Instant::now();
        loop {
            match fetch(&self.client) {
                Ok(v) => return Ok(v),
                // The answer says the round's state (issue 47): no GET of
                // the round after it.
                Err(ClientError::Problem { problem, .. })
                    if problem.status == 409 && problem.round.is_some() =>
                {
                    if let Some(r) = problem.round.filter(|r| r.state == RoundState::Failed) {
                        return Err(ClientError::RoundFailed {
                            round,
                            reason: r.reason.unwrap_or_default(),
                        });
                    }
                }
                Err(e) => return Err(e),
            }
            if start.elapsed() > self.round_timeout {
                return Err(ClientError::Timeout(format!(
                    "no {what} for round {round} of study {study} within {:?}",
                    self.round_timeout
                )));
            }
        }
    }

    /// Whether the step of this member's contribution refused with `refusal`
    /// was refused because the round went on without it: its commitments
    /// froze without this member's (it was offline, e.g. restarted from its
    /// journal after the study moved on, or the freeze came between its look
    /// at the round and its commitment), or its contributions were aggregated
    /// before this member revealed. The server answers an upload it already
    /// holds idempotently in any phase, so a 409 for a round past that step
    /// whose list does not name this member means the contribution was never
    /// committed, or never revealed: the member then takes part as an
    /// observer, verifying the aggregate and the result (and decrypting if a
    /// t-of-n decrypting set still has room), and contributes again from the
    /// next round.
    fn left_out(step: ContributionStep, refusal: &ClientError) -> bool {
        // The 409 says the round's state and whether the round holds this
        // member's own upload for the slot (issue 47): nothing is asked
        // again. A refusal without it (the round's opening refused, e.g.
        // past the study's round cap) stands.
        let ClientError::Problem { problem, .. } = refusal else {
            return false;
        };
        let Some(conflict) = problem.round.as_ref().filter(|_| problem.status == 409) else {
            return false;
        };
        match (step, conflict.state) {
            // Observing a failed round reports its failure (`decrypt`).
            (_, RoundState::Failed) => true,
            (_, RoundState::Committing) | (ContributionStep::Reveal, RoundState::Collecting) => {
                false
            }
            _ => !conflict.holds_yours,
        }
    }

    /// Whether this member may decrypt `round`: not when it retries a sum
    /// ([`Self::set_earlier_attempts`]) that this member decrypted in an
    /// earlier, failed attempt over another set of contributors (it then
    /// sits the attempt out, [`Self::decrypt`]). The retry
    /// carries the same (noised) values: two decryptions over sets that
    /// differ would release the difference, the values of the members in one
    /// set and not the other with only their own noise shares, which no
    /// privacy budget covers. Over the same set the second decryption
    /// releases nothing new. (An attempt this member did not decrypt could
    /// be decrypted only with the shares of others: n-of-n, never; t-of-n,
    /// with T of them, each holding itself to the same rule.)
    fn may_decrypt_retry(&self, study: &str, contributors: &[String]) -> Result<bool, ClientError> {
        for &earlier in &self.earlier_attempts {
            if !self.record("share", study, earlier).exists() {
                continue;
            }
            let path = self.record("contributors", study, earlier);
            let recorded: Vec<String> = std::fs::read(&path)
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok())
                .ok_or_else(|| {
                    ClientError::Keys(format!(
                        "{} is missing or unreadable: this member decrypted round {earlier} \
                         and cannot tell whom it summed",
                        path.display()
                    ))
                })?;
            if recorded != contributors {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The failed earlier attempts (server rounds) of the sum the next
    /// [`Self::run_round`] retries; empty for a first attempt.
    pub fn set_earlier_attempts(&mut self, attempts: Vec<u64>) {
        self.earlier_attempts = attempts;
    }

    /// Sends this member's contribution to a round (commit, then reveal),
    /// or, when the round went on without it ([`Self::left_out`]), moves the
    /// contribution's record aside to a `left-out` record, so that this
    /// member (and itself restarted) observes the round instead.
    fn contribute_or_observe(
        &mut self,
        study: &str,
        round: u64,
        values: &[f64],
        bound: f64,
    ) -> Result<(), ClientError> {
        let left_out_path = self.record("left-out", study, round);
        if left_out_path.exists() {
            return self.ensure_round(study, round);
        }
        let sent = self
            .commit(study, round, values, bound)
            .map_err(|e| (ContributionStep::Commit, e))
            .and_then(|_| {
                self.reveal(study, round)
                    .map_err(|e| (ContributionStep::Reveal, e))
            });
        match sent {
            Ok(_) => Ok(()),
            Err((step, refusal)) if Self::left_out(step, &refusal) => {
                let path = self.record("contribution", study, round);
                std::fs::rename(&path, &left_out_path).map_err(|e| {
                    ClientError::Keys(format!(
                        "cannot move the unsent contribution {} aside: {e}",
                        path.display()
                    ))
                })
            }
            Err((_, e)) => Err(e),
        }
    }

    /// One whole round: contribute (if `values`), decrypt, and the result.
    /// A round whose result this member already holds returns it without a
    /// request (a restarted agent replays its finished rounds this way).
    pub fn run_round(
        &mut self,
        study: &str,
        round: u64,
        values: Option<&[f64]>,
        bound: f64,
    ) -> Result<Vec<f64>, ClientError> {
        let result_path = self.record("result", study, round);
        if let Ok(bytes) = std::fs::read(&result_path) {
            return serde_json::from_slice(&bytes)
                .map_err(|e| ClientError::Decode(format!("{}: {e}", result_path.display())));
        }
        // A round seen failing is recorded as failed, so that a restarted
        // member replays the same retries ([`NetworkSum`]) without asking.
        let failed_path = self.record("failed", study, round);
        if let Ok(reason) = std::fs::read_to_string(&failed_path) {
            return Err(ClientError::RoundFailed { round, reason });
        }
        let outcome = match values {
            Some(v) => self.contribute_or_observe(study, round, v, bound),
            None => self.ensure_round(study, round),
        }
        .and_then(|_| self.decrypt(study, round))
        .and_then(|_| {
            // While the others' shares come in, the next contribution's
            // offline phase (its masks and c1 commitment); a failure only
            // means the next commitment makes its own.
            if let Some(v) = values {
                self.prepare_contribution(study, v.len()).ok();
            }
            self.result(study, round)
        });
        if let Err(ClientError::RoundFailed { round: r, reason }) = &outcome {
            if *r == round {
                keys::write_atomic(
                    &self.state_dir,
                    &file_name(&failed_path),
                    reason.as_bytes(),
                    true,
                )?;
            }
        }
        let values = outcome?;
        let bytes = serde_json::to_vec(&values).map_err(|e| ClientError::Decode(e.to_string()))?;
        keys::write_atomic(&self.state_dir, &file_name(&result_path), &bytes, true)?;
        Ok(values)
    }
}

/// The two steps of sending a contribution (DESIGN.md §6).
#[derive(Clone, Copy, Debug)]
enum ContributionStep {
    /// The signed hash, before any contribution of the round can be read.
    Commit,
    /// The contribution itself, once the commitment list is frozen.
    Reveal,
}

/// The seed pinned in `file` of `dir` to a list with `fingerprint`
/// ([`MemberSession::pinned_checks`]): `fresh`, recorded with the
/// fingerprint, if nothing is pinned yet; the recorded seed if the same list
/// is; `None` if another list is.
fn pinned_seed(
    dir: &std::path::Path,
    file: &str,
    fingerprint: &[u8; 32],
    fresh: [u8; 32],
) -> Result<Option<[u8; 32]>, ClientError> {
    match std::fs::read(dir.join(file)) {
        Ok(pin) if pin.len() == 64 && pin[32..] == fingerprint[..] => {
            Ok(Some(pin[..32].try_into().expect("32 bytes")))
        }
        Ok(_) => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let mut pin = fresh.to_vec();
            pin.extend_from_slice(fingerprint);
            keys::write_atomic(dir, file, &pin, false)?;
            Ok(Some(fresh))
        }
        Err(e) => Err(ClientError::Keys(format!("state record {file}: {e}"))),
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

fn file_name(path: &std::path::Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// One member's networked channel: `SecureSum::sum` contributes this member's
/// vector (the entry with its id; others are not this process's to send),
/// and returns the federation's sum. Channel round `r` is server round
/// `r + offset` of the study, `offset` counting the failed rounds so far.
///
/// # Liveness (issue 45, item 5)
///
/// A server round that fails (its commitment, collection or decryption
/// deadline passed without enough members, or too few commitments agreed on
/// a shape) is retried under the next round number, with the same values:
/// every member sees the same failed state, records it (`STUDY.R.failed`)
/// and moves on, so members (and each one restarted) agree which server
/// round carries which sum. Any member may open the next round once the
/// latest is done or failed, so a member opening a round early and going
/// silent costs one deadline, not the study. A study ends at its round cap
/// (`StudySpec::round_cap`), not at a failure. A retry of a sum this member
/// decrypted over another set of contributors is sat out
/// ([`MemberSession::decrypt`]): a member that claims a place in the
/// decrypting set and goes silent can still stall a t-of-n study, round
/// after round, until the cap (SECURITY.md).
pub struct NetworkSum {
    session: MemberSession,
    study: String,
    bound: f64,
    offset: u64,
    /// Told each failed round (its number and the server's reason) before
    /// the sum is retried under the next one ([`Self::on_retry`]).
    on_retry: Option<RetryReport>,
}

/// What [`NetworkSum::on_retry`] calls: a failed round's number and reason.
type RetryReport = Box<dyn FnMut(u64, &str) + Send>;

impl NetworkSum {
    /// A channel for `study` whose values satisfy |x| ≤ `bound`.
    pub fn new(session: MemberSession, study: impl Into<String>, bound: f64, offset: u64) -> Self {
        Self {
            session,
            study: study.into(),
            bound,
            offset,
            on_retry: None,
        }
    }

    /// Calls `report` with each failed round's number and reason, before the
    /// sum is retried under the next number (the agent prints it).
    pub fn on_retry(mut self, report: impl FnMut(u64, &str) + Send + 'static) -> Self {
        self.on_retry = Some(Box::new(report));
        self
    }

    /// The session.
    pub fn session(&self) -> &MemberSession {
        &self.session
    }

    /// The study's encoding, as every member of the ceremony makes it: the
    /// accepted spec's precision (one limb before the spec is accepted).
    fn codec(&self) -> Result<FixedPointCodec, fedhe_crypto::CodecError> {
        match self.session.study_terms(&self.study) {
            Ok(accepted) => Ok(accepted.codec.clone()),
            Err(_) => FixedPointCodec::with_precision(
                &self.session.params,
                self.session.members.len(),
                self.bound,
                Precision::OneLimb,
            ),
        }
    }
}

impl SecureSum for NetworkSum {
    fn sum(
        &mut self,
        round: RoundId,
        contributions: Vec<(MemberId, Vec<f64>)>,
    ) -> Result<Vec<f64>, ChannelError> {
        let me = self.session.member.clone();
        let own = contributions
            .into_iter()
            .find(|(m, _)| *m == me)
            .map(|(_, v)| v);
        let study = self.study.clone();
        let mut failed = Vec::new();
        let mut last_failure = None;
        loop {
            let server_round = round.0 + self.offset;
            self.session.set_earlier_attempts(failed.clone());
            match self
                .session
                .run_round(&study, server_round, own.as_deref(), self.bound)
            {
                Err(ClientError::RoundFailed { round: r, reason }) if r == server_round => {
                    if let Some(report) = self.on_retry.as_mut() {
                        report(r, &reason);
                    }
                    failed.push(server_round);
                    last_failure = Some(ClientError::RoundFailed { round: r, reason });
                    self.offset += 1;
                }
                outcome => {
                    self.session.set_earlier_attempts(Vec::new());
                    return outcome.map_err(|e| match &last_failure {
                        // Why the sum was being retried, with what ended it.
                        Some(f) => ChannelError::Transport(format!("{e} (retrying after {f})")),
                        None => ChannelError::Transport(e.to_string()),
                    });
                }
            }
        }
    }

    fn bytes_per_round(&self, member: &MemberId, len: usize) -> u64 {
        match self.codec() {
            Ok(codec) => {
                (fedhe_crypto::wire::encrypted_vector_len(&self.session.params, &codec, len)
                    + fedhe_crypto::wire::decryption_share_len(
                        &self.session.params,
                        &codec,
                        member,
                        len,
                    )) as u64
            }
            Err(_) => 0,
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
        use ContributionStep::{Commit, Reveal};
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

    /// A sample's seed is pinned to the first list it is drawn for: the same
    /// list gets the same seed back whatever fresh seed is offered (a
    /// retry cannot draw again), another list gets none (refused).
    #[test]
    fn a_pinned_sample_serves_only_its_own_list_with_its_own_seed() {
        let dir = tempfile::tempdir().unwrap();
        let (list, other) = ([7u8; 32], [8u8; 32]);
        let first = pinned_seed(dir.path(), "s.1.sample-digests", &list, [1; 32]).unwrap();
        assert_eq!(first, Some([1; 32]));
        let again = pinned_seed(dir.path(), "s.1.sample-digests", &list, [2; 32]).unwrap();
        assert_eq!(again, Some([1; 32]), "a retry draws again");
        let forged = pinned_seed(dir.path(), "s.1.sample-digests", &other, [3; 32]).unwrap();
        assert_eq!(forged, None, "another list passes the pin");
        // Pins are per file: another kind or round is its own.
        let commitments =
            pinned_seed(dir.path(), "s.1.sample-commitments", &other, [4; 32]).unwrap();
        assert_eq!(commitments, Some([4; 32]));
        // A damaged pin is another list's, never a fresh start.
        std::fs::write(dir.path().join("s.2.sample-digests"), [0u8; 10]).unwrap();
        let damaged = pinned_seed(dir.path(), "s.2.sample-digests", &list, [5; 32]).unwrap();
        assert_eq!(damaged, None);
    }
}
