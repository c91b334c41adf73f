//! A round's result: combine and verify after decrypt, the share digest,
//! and the decrypting set of a t-of-n round.

use super::*;

impl MemberSession {
    /// Waits for a round's result and checks it before it is used (verify
    /// after decrypt, [`crate::verify::verify_after_decrypt`]): it must be of
    /// the aggregate this member verified when it decrypted, and exactly the
    /// combination of every member's signed decryption share with that
    /// aggregate. Then records and signs the ceremony's audit-trail head
    /// ([`crate::audit::observe_head`]). Returns this member's own decoding.
    pub fn result(&mut self, study: &str, round: u64) -> Result<Vec<f64>, ClientError> {
        let started = Instant::now();
        // A result is checked against the aggregate this member verified:
        // asked for before decrypt, it is refused by name before any wait.
        let recorded = self.journal.verified_hash(study, round).ok_or_else(|| {
            ClientError::from(Refusal {
                study: study.into(),
                round,
                kind: RefusalKind::Own,
                reason: format!(
                    "result before decrypt: I verified no aggregate of this round to check its result against (the round's step is {:?})",
                    self.journal.step(study, round)
                ),
            })
        })?;
        // What send_share_digest fetched, its digest already sent, or fetch
        // now (and send this member's share digest below).
        let digested = self.in_round(study, round).share_digested.take();
        let (r, prepared) = match digested {
            Some((r, list, combined)) => (r, Some((list, combined))),
            None => {
                let r = self.wait_for(study, round, "result", |c| {
                    c.result(study, round, Duration::from_secs(20))
                })?;
                (r, None)
            }
        };
        self.timings.result_wait = started.elapsed().as_secs_f64();
        let started = Instant::now();
        let refuse = |kind: RefusalKind, reason: &str| -> ClientError {
            Refusal {
                study: study.into(),
                round,
                kind,
                reason: reason.into(),
            }
            .into()
        };
        if hex::encode(recorded) != r.aggregate_hash {
            return Err(ClientError::Verification(format!(
                "the result of round {round} is not of the aggregate I decrypted"
            )));
        }
        let held = self.in_round(study, round).verified_aggregate.take();
        let aggregate = match held {
            Some(bytes) => bytes,
            None => self.client.aggregate(study, round, Duration::ZERO)?,
        };
        if blake3::hash(&aggregate).as_bytes() != &recorded {
            return Err(refuse(
                RefusalKind::Substituted,
                "the aggregate served now is not the one I decrypted",
            ));
        }
        let aggregate = EncryptedVector::from_bytes(&self.params, &aggregate)?;
        let aggregate_hash = recorded;
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
        crate::audit::observe_head(
            self.client.as_ref(),
            self.ceremony.as_str(),
            self.journal.dir(),
        )?;
        Ok(values)
    }

    /// The decryption share this member recorded for the aggregate with hash
    /// `aggregate_hash`, if it made one.
    fn own_share(&self, study: &str, round: u64, aggregate_hash: &[u8; 32]) -> Option<Vec<u8>> {
        let recorded = self.journal.read(Record::Share, study, round)?;
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
        self.in_round(study, round).share_digested = Some((r, list, combined));
        Ok(())
    }

    /// Long-polls `fetch` until it succeeds; a 409 (not ready) is retried
    /// unless the round failed, until the round timeout.
    /// Claims a place in a t-of-n round's decrypting set and waits until
    /// the set holds T members; returns it, sorted.
    pub(super) fn decrypting_set(
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
                        kind: RefusalKind::TooFew,
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
}
