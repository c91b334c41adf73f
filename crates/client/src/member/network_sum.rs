//! [`NetworkSum`]: a member behind the `SecureSum` trait.

use super::*;

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
    /// The member's own error that ended the last sum (a refusal, a
    /// timeout, its policy), which the channel's trait can carry only as
    /// text ([`Self::take_failure`]).
    failure: Option<ClientError>,
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
            failure: None,
        }
    }

    /// Calls `report` with each failed round's number and reason, before the
    /// sum is retried under the next number (the agent prints it).
    pub fn on_retry(mut self, report: impl FnMut(u64, &str) + Send + 'static) -> Self {
        self.on_retry = Some(Box::new(report));
        self
    }

    /// The member's own error that ended the last sum, typed (a
    /// [`crate::Refusal`] with its kind, a policy refusal, a timeout), once:
    /// what the algorithm saw of it was [`ChannelError::Transport`]'s text.
    pub fn take_failure(&mut self) -> Option<ClientError> {
        self.failure.take()
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
                    return outcome.map_err(|e| {
                        let text = match &last_failure {
                            // Why the sum was being retried, with what ended it.
                            Some(f) => format!("{e} (retrying after {f})"),
                            None => e.to_string(),
                        };
                        self.failure = Some(e);
                        ChannelError::Transport(text)
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
