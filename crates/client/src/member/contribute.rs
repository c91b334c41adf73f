//! A round's contribution: open the round, commit to the contribution,
//! reveal it, and the commitment lists the member recorded.

use super::*;

impl MemberSession {
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
        let bytes = match self.journal.read(Record::Contribution, study, round) {
            Some(b) => b,
            None => {
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
                self.journal
                    .record(Record::Contribution, study, round, &bytes)?;
                // The commitment made with the masks is that of these bytes'
                // c1s: kept in memory for this round (a restarted member
                // computes it from the recorded bytes: the same point).
                if let Some(c1) = c1 {
                    self.in_round(study, round).c1 = Some(c1);
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
        // A step out of order is refused by name: the journal says where
        // the round is.
        let step = self.journal.step(study, round);
        let bytes = match self.journal.read(Record::Contribution, study, round) {
            Some(bytes) => bytes,
            None => {
                return Err(ClientError::Usage(format!(
                    "reveal before commit: no committed contribution to reveal for round {round} of study {study} (the round's step is {step:?})"
                )))
            }
        };
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
        let text = serde_json::to_vec(&list).map_err(|e| ClientError::Decode(e.to_string()))?;
        let same_list = |recorded: &[u8]| {
            serde_json::from_slice::<CommitmentList>(recorded)
                .is_ok_and(|r| r.list_hash == list.list_hash && r.commitments == list.commitments)
        };
        match self.journal.read(Record::Commitments, study, round) {
            Some(recorded) if same_list(&recorded) => {}
            Some(_) => {
                return Err(Refusal {
                    study: study.into(),
                    round,
                    kind: RefusalKind::Substituted,
                    reason: "the server now shows another commitment list than the one I recorded"
                        .into(),
                }
                .into())
            }
            None => self
                .journal
                .record(Record::Commitments, study, round, &text)?,
        }
        self.in_round(study, round).commitments = Some(Arc::new(list));
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
    pub(super) fn recorded_commitments(
        &self,
        study: &str,
        round: u64,
    ) -> Result<Option<(Arc<CommitmentList>, bool)>, ClientError> {
        if let Some(list) = self.held(study, round).and_then(|r| r.commitments.as_ref()) {
            return Ok(Some((Arc::clone(list), true)));
        }
        match self.journal.read(Record::Commitments, study, round) {
            Some(bytes) => serde_json::from_slice(&bytes)
                .map(|list| Some((Arc::new(list), false)))
                .map_err(|e| ClientError::Decode(format!("recorded commitment list: {e}"))),
            None => Ok(None),
        }
    }

    pub(super) fn no_recorded_list(&self, study: &str, round: u64) -> ClientError {
        Refusal {
            study: study.into(),
            round,
            kind: RefusalKind::Own,
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
}
