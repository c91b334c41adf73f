//! The ceremony's member side: join (commit, reveal, deal the threshold
//! shares and the result key, confirm), and verify the collective key.

use super::*;

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
