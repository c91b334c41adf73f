//! A round's phases as types (DESIGN.md §6): a round is begun, this
//! member's contribution committed to and revealed (or the round only
//! observed), then decrypted, then its result checked. Each phase is a
//! method of the type the one before returns, so a phase cannot be called
//! out of its order: it does not compile.
//!
//! ```compile_fail
//! # fn f(session: &mut fedhe_client::MemberSession) {
//! // No decryption before this member's part of the round is done.
//! session.begin("s1", 1).decrypt();
//! # }
//! ```
//!
//! ```no_run
//! # fn f(session: &mut fedhe_client::MemberSession) -> Result<Vec<f64>, fedhe_client::ClientError> {
//! let sum = session
//!     .begin("s1", 1)
//!     .commit(&[0.5, 1.5], 10.0)?
//!     .reveal()?
//!     .decrypt()?
//!     .result()?;
//! # Ok(sum)
//! # }
//! ```
//!
//! A restarted member begins the round again and runs its phases again:
//! each resumes from its journal's records (`member/journal.rs`), and a
//! resent upload is the same bytes. The session's own `commit`, `reveal`,
//! `decrypt` and `result` stay for callers that drive one phase across
//! many members (`fedhe bench service`); out of order, the journal refuses
//! them by name.

use super::MemberSession;
use crate::ClientError;
use std::marker::PhantomData;

/// A round of a study, at the phase `P`, for one member.
pub struct Round<'s, P> {
    session: &'s mut MemberSession,
    study: &'s str,
    round: u64,
    phase: PhantomData<P>,
}

/// Begun: nothing sent yet.
pub struct Begun;
/// This member's contribution committed to (its signed hash sent).
pub struct Committed;
/// This member's part before decryption done: its contribution revealed,
/// or none (an observer, or a contribution the round went on without).
pub struct Ready;
/// This member's decryption share sent (or, t-of-n, left to others).
pub struct Decrypted;

impl MemberSession {
    /// `study`'s `round`, begun: its phases follow from here
    /// ([`Round::commit`] or [`Round::observe`], …, [`Round::result`]).
    pub fn begin<'s>(&'s mut self, study: &'s str, round: u64) -> Round<'s, Begun> {
        Round {
            session: self,
            study,
            round,
            phase: PhantomData,
        }
    }
}

impl<'s, P> Round<'s, P> {
    fn next<Q>(self) -> Round<'s, Q> {
        Round {
            session: self.session,
            study: self.study,
            round: self.round,
            phase: PhantomData,
        }
    }
}

impl<'s> Round<'s, Begun> {
    /// Encrypts `values` and commits to them ([`MemberSession::commit`]).
    pub fn commit(self, values: &[f64], bound: f64) -> Result<Round<'s, Committed>, ClientError> {
        self.session.commit(self.study, self.round, values, bound)?;
        Ok(self.next())
    }

    /// Takes part without a contribution (opening the round if needed).
    pub fn observe(self) -> Result<Round<'s, Ready>, ClientError> {
        self.session.ensure_round(self.study, self.round)?;
        Ok(self.next())
    }

    /// Commits to `values` and reveals them; or, when the round went on
    /// without this member's contribution, sets it aside and observes
    /// (`MemberSession::contribute_or_observe`).
    pub fn contribute(self, values: &[f64], bound: f64) -> Result<Round<'s, Ready>, ClientError> {
        self.session
            .contribute_or_observe(self.study, self.round, values, bound)?;
        Ok(self.next())
    }
}

impl<'s> Round<'s, Committed> {
    /// Reveals the committed contribution once the commitment list is
    /// frozen and checked ([`MemberSession::reveal`]).
    pub fn reveal(self) -> Result<Round<'s, Ready>, ClientError> {
        self.session.reveal(self.study, self.round)?;
        Ok(self.next())
    }
}

impl<'s> Round<'s, Ready> {
    /// Verifies the aggregate and sends this member's decryption share
    /// ([`MemberSession::decrypt`]).
    pub fn decrypt(self) -> Result<Round<'s, Decrypted>, ClientError> {
        self.session.decrypt(self.study, self.round)?;
        Ok(self.next())
    }
}

impl Round<'_, Decrypted> {
    /// The session, while the others' shares come in (for the next
    /// contribution's offline phase, [`MemberSession::prepare_contribution`]).
    pub fn session(&mut self) -> &mut MemberSession {
        self.session
    }

    /// The round's result, checked ([`MemberSession::result`]).
    pub fn result(self) -> Result<Vec<f64>, ClientError> {
        self.session.result(self.study, self.round)
    }
}
