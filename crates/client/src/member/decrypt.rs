//! A round's decryption: verify before decrypt, upload the decryption
//! share and the sum digest, and the signed lists and downloads it checks.

use super::*;

impl MemberSession {
    /// Waits for the round's aggregate, verifies it (verify before decrypt)
    /// and uploads this member's decryption share. A share is produced at
    /// most once per round: it is recorded before it is sent, and a restarted
    /// member resends the recorded share only for the same aggregate.
    pub fn decrypt(&mut self, study: &str, round: u64) -> Result<(), ClientError> {
        self.policy.check_round(study, round)?;
        // A member that committed decrypts once it revealed (or was left
        // out, its contribution set aside): a step out of order is refused
        // by name.
        if self.journal.step(study, round) == RoundStep::Committed {
            return Err(ClientError::Usage(format!(
                "decrypt before reveal: this member committed a contribution to round {round} of study {study} and has not revealed it"
            )));
        }
        let started = Instant::now();
        // What send_digest fetched, its digest already sent, or fetch now.
        let digested = self.in_round(study, round).digested.take();
        let (aggregate, list, digest_sent) = match digested {
            Some((aggregate, list)) => {
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
        let own = self.journal.read(Record::Contribution, study, round);
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
            Err(refusal) if refusal.kind == RefusalKind::C1Check => {
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
                    Err(r) if r.kind == RefusalKind::C1Check => Refusal {
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
        match self.journal.read(Record::Verified, study, round) {
            Some(recorded) if recorded[..] != aggregate_hash.as_bytes()[..] => {
                return Err(Refusal {
                    study: study.into(),
                    round,
                    kind: RefusalKind::Own,
                    reason: "I already verified another aggregate of this round".into(),
                }
                .into())
            }
            Some(_) => {}
            // n-of-n: every member decrypts, and its share record, written
            // next, begins with this hash (Journal::verified_hash reads either).
            None if self.threshold.is_none() && may_decrypt => {}
            None => {
                self.journal
                    .record(Record::Verified, study, round, aggregate_hash.as_bytes())?
            }
        }
        self.in_round(study, round).verified_aggregate = Some(aggregate);
        if !may_decrypt {
            // Sits this attempt out: others may decrypt it (t-of-n), or it
            // fails and is retried, until an attempt sums the same set.
            self.timings.share = started.elapsed().as_secs_f64();
            return Ok(());
        }
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
        let share = match self.journal.read(Record::Share, study, round) {
            Some(recorded) => {
                // [32-byte aggregate hash][share bytes]
                if recorded.len() < 32 || recorded[..32] != aggregate_hash.as_bytes()[..] {
                    return Err(Refusal {
                        study: study.into(),
                        round,
                        kind: RefusalKind::Own,
                        reason: "I already produced a decryption share for this round, of another aggregate".into(),
                    }
                    .into());
                }
                recorded[32..].to_vec()
            }
            None => {
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
                self.journal
                    .record(Record::Contributors, study, round, &sum_set)?;
                // Fails if a share of this round was recorded meanwhile.
                self.journal.record(Record::Share, study, round, &record)?;
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
        if let Some(own) = self.journal.read(Record::Contribution, study, round) {
            self.upload_own_digest(study, round, &list, &aggregate, &own)?;
        }
        self.in_round(study, round).digested = Some((aggregate, list));
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
        kind: &'static str,
        study: &str,
        round: u64,
        fingerprint: &[u8; 32],
    ) -> Result<SignatureChecks, ClientError> {
        let checks = self.signature_checks();
        let SignatureChecks::Sampled(sample) = checks else {
            return Ok(checks);
        };
        match self
            .journal
            .pin_seed(kind, study, round, fingerprint, sample.seed)?
        {
            Some(seed) => Ok(SignatureChecks::Sampled(crate::verify::SignatureSample {
                seed,
                ..sample
            })),
            None => Err(Refusal {
                study: study.into(),
                round,
                kind: RefusalKind::Substituted,
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
    pub(super) fn with_sampled_commitment_signatures(
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
    pub(super) fn without_digest(
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
    pub(super) fn pick_downloads(
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
}
