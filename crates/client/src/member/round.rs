//! A whole round: contribute (or observe a round that went on without
//! this member), decrypt, result; waiting on the server's state.

use super::*;

/// What the phases of the round in progress hand on to its later phases
/// (issue 47, item 1), so that a later phase takes it instead of fetching or
/// computing it again. One (study, round) key for all of them: a phase of
/// another round begins a new one and drops what this one held
/// ([`MemberSession::in_round`]); a later phase looks only at the round it
/// is asked for ([`MemberSession::held`]). A restarted member holds none of
/// it, and every phase falls back on its recorded journal
/// ([`super::journal::Journal`]): this is a cache, never the only copy.
pub(super) struct RoundInProgress {
    study: String,
    round: u64,
    /// The c1 commitment of the contribution [`MemberSession::commit`] made
    /// from prepared masks.
    pub(super) c1: Option<C1Commitment>,
    /// The commitment list [`MemberSession::reveal`] checked and recorded.
    pub(super) commitments: Option<Arc<CommitmentList>>,
    /// What [`MemberSession::send_digest`] fetched (aggregate, list), its
    /// digest sent: [`MemberSession::decrypt`] takes it.
    pub(super) digested: Option<(Vec<u8>, ContributionList)>,
    /// The aggregate [`MemberSession::decrypt`] verified:
    /// [`MemberSession::result`] checks against it without fetching it
    /// again (it still compares it with the recorded hash).
    pub(super) verified_aggregate: Option<Vec<u8>>,
    /// What [`MemberSession::send_share_digest`] fetched (result, share
    /// list, combined share), its share digest sent:
    /// [`MemberSession::result`] takes it.
    pub(super) share_digested: Option<(RoundResult, DecryptionShareList, Vec<u8>)>,
}

impl RoundInProgress {
    fn new(study: &str, round: u64) -> Self {
        Self {
            study: study.to_string(),
            round,
            c1: None,
            commitments: None,
            digested: None,
            verified_aggregate: None,
            share_digested: None,
        }
    }

    fn is(&self, study: &str, round: u64) -> bool {
        self.study == study && self.round == round
    }

    /// `slot`'s round if it is `study`'s `round`, else a new one in its
    /// place (what the other round held dropped).
    fn enter<'a>(slot: &'a mut Option<Self>, study: &str, round: u64) -> &'a mut Self {
        let current = slot.take().filter(|r| r.is(study, round));
        slot.insert(current.unwrap_or_else(|| Self::new(study, round)))
    }

    /// `slot`'s round if it is `study`'s `round`.
    fn of<'a>(slot: &'a Option<Self>, study: &str, round: u64) -> Option<&'a Self> {
        slot.as_ref().filter(|r| r.is(study, round))
    }
}

impl MemberSession {
    /// The round in progress, to hand something on: `study`'s `round`,
    /// begun afresh (what another round held dropped) if the session was
    /// in another.
    pub(super) fn in_round(&mut self, study: &str, round: u64) -> &mut RoundInProgress {
        RoundInProgress::enter(&mut self.in_progress, study, round)
    }

    /// What the round in progress holds, if it is `study`'s `round`.
    pub(super) fn held(&self, study: &str, round: u64) -> Option<&RoundInProgress> {
        RoundInProgress::of(&self.in_progress, study, round)
    }

    pub(super) fn wait_for<T>(
        &self,
        study: &str,
        round: u64,
        what: &str,
        fetch: impl Fn(&dyn Transport) -> Result<T, ClientError>,
    ) -> Result<T, ClientError> {
        let start = Instant::now();
        loop {
            match fetch(self.client.as_ref()) {
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
    pub(super) fn left_out(step: ContributionStep, refusal: &ClientError) -> bool {
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
    pub(super) fn may_decrypt_retry(
        &self,
        study: &str,
        contributors: &[String],
    ) -> Result<bool, ClientError> {
        for &earlier in &self.earlier_attempts {
            if !self.journal.has(Record::Share, study, earlier) {
                continue;
            }
            let path = self.journal.path(Record::Contributors, study, earlier);
            let recorded: Vec<String> = self
                .journal
                .read(Record::Contributors, study, earlier)
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
    pub(super) fn contribute_or_observe(
        &mut self,
        study: &str,
        round: u64,
        values: &[f64],
        bound: f64,
    ) -> Result<(), ClientError> {
        // Left out before (whatever it did since): it observes.
        if self.journal.has(Record::LeftOut, study, round) {
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
                self.journal.set_contribution_aside(study, round)
            }
            Err((_, e)) => Err(e),
        }
    }

    /// One whole round: contribute (if `values`), decrypt, and the result.
    /// A round the journal says is done returns its recorded result without
    /// a request (a restarted agent replays its finished rounds this way),
    /// and one it says failed fails again without one (by the records of
    /// its journal, `member/journal.rs`); any other round runs every step
    /// again, each resuming from its own records (a resent upload is the
    /// same bytes, which the server takes idempotently).
    pub fn run_round(
        &mut self,
        study: &str,
        round: u64,
        values: Option<&[f64]>,
        bound: f64,
    ) -> Result<Vec<f64>, ClientError> {
        match self.journal.step(study, round) {
            RoundStep::Done => {
                let bytes = self.journal.read_existing(Record::Result, study, round)?;
                return serde_json::from_slice(&bytes).map_err(|e| {
                    let path = self.journal.path(Record::Result, study, round);
                    ClientError::Decode(format!("{}: {e}", path.display()))
                });
            }
            // Recorded as failed, so that a restarted member replays the
            // same retries ([`NetworkSum`]) without asking.
            RoundStep::Failed => {
                let reason = self.journal.read_existing(Record::Failed, study, round)?;
                return Err(ClientError::RoundFailed {
                    round,
                    reason: String::from_utf8_lossy(&reason).into_owned(),
                });
            }
            _ => {}
        }
        // The phases in their order ([`super::phases`]).
        let begun = self.begin(study, round);
        let outcome = match values {
            Some(v) => begun.contribute(v, bound),
            None => begun.observe(),
        }
        .and_then(|ready| ready.decrypt())
        .and_then(|mut decrypted| {
            // While the others' shares come in, the next contribution's
            // offline phase (its masks and c1 commitment); a failure only
            // means the next commitment makes its own.
            if let Some(v) = values {
                decrypted
                    .session()
                    .prepare_contribution(study, v.len())
                    .ok();
            }
            decrypted.result()
        });
        if let Err(ClientError::RoundFailed { round: r, reason }) = &outcome {
            if *r == round {
                self.journal
                    .record(Record::Failed, study, round, reason.as_bytes())?;
            }
        }
        let values = outcome?;
        let bytes = serde_json::to_vec(&values).map_err(|e| ClientError::Decode(e.to_string()))?;
        self.journal.record(Record::Result, study, round, &bytes)?;
        Ok(values)
    }
}

/// The two steps of sending a contribution (DESIGN.md §6).
#[derive(Clone, Copy, Debug)]
pub(super) enum ContributionStep {
    /// The signed hash, before any contribution of the round can be read.
    Commit,
    /// The contribution itself, once the commitment list is frozen.
    Reveal,
}

#[cfg(test)]
mod tests {
    use super::RoundInProgress;

    /// What a round hands on is seen only by that round's later phases, and
    /// a phase of another round (the next one, a retry, another study) drops
    /// it rather than letting it stand beside the new round's.
    #[test]
    fn a_round_in_progress_hands_on_only_within_its_own_round() {
        let mut slot = None;
        RoundInProgress::enter(&mut slot, "s", 1).verified_aggregate = Some(vec![7]);
        let held = |slot: &Option<RoundInProgress>, study, round| {
            RoundInProgress::of(slot, study, round).and_then(|r| r.verified_aggregate.clone())
        };
        assert_eq!(held(&slot, "s", 1), Some(vec![7]));
        assert_eq!(held(&slot, "s", 2), None);
        assert_eq!(held(&slot, "t", 1), None);
        // Entering the same round again keeps what it holds.
        RoundInProgress::enter(&mut slot, "s", 1).digested = None;
        assert_eq!(held(&slot, "s", 1), Some(vec![7]));
        // Another study's round 1, then round 1 again: begun afresh.
        assert!(RoundInProgress::enter(&mut slot, "t", 1)
            .verified_aggregate
            .is_none());
        assert_eq!(held(&slot, "s", 1), None);
        RoundInProgress::enter(&mut slot, "s", 1).verified_aggregate = Some(vec![8]);
        assert!(RoundInProgress::enter(&mut slot, "s", 2)
            .verified_aggregate
            .is_none());
        assert_eq!(held(&slot, "s", 1), None);
    }
}
