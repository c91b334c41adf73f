//! The member's crash journal (DESIGN.md §6): what it records of a round
//! before the step that needs it, a file per record in its state folder,
//! named `{study}.{round}.{record}`. A record of what the member sent or
//! checked is never replaced by other bytes (the file system refuses:
//! `keys::write_atomic` without overwrite), so a restarted member resends
//! what it sent, and never makes a second, different contribution or
//! decryption share of a round; only the records that restate what it knows
//! (whom it summed, why a round failed, the result) are made again
//! ([`Record::restates`]). [`Journal::step`] reads how far a round got from its records:
//! the one place their order is written down.

use crate::keys;
use crate::ClientError;
use std::path::{Path, PathBuf};

/// A record of a round, in the order a round makes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Record {
    /// The encrypted contribution, recorded before its commitment is sent.
    Contribution,
    /// The c1 commitment to it (recorded with it).
    C1Commitment,
    /// The frozen commitment list, checked and recorded before revealing.
    Commitments,
    /// The contribution moved aside: the round went on without it.
    LeftOut,
    /// A signature sample's seed pinned to the list it was drawn for
    /// (`sample-commitments`, `sample-contributions`, …).
    Sample(&'static str),
    /// BLAKE3 of the aggregate this member verified (older folders have it
    /// only at the head of [`Record::Share`]: [`Journal::verified_hash`]).
    Verified,
    /// Whom this member's decryption share lets the federation sum (JSON),
    /// recorded before the share.
    Contributors,
    /// `[32-byte aggregate hash][decryption share]`.
    Share,
    /// Why the round failed (text).
    Failed,
    /// The round's verified result (JSON).
    Result,
}

impl Record {
    /// Whether the record restates what the member knows (whom it summed,
    /// why a round failed, the result), so may be made again; every other
    /// record holds what the member sent or checked, and is made once.
    fn restates(self) -> bool {
        matches!(self, Record::Contributors | Record::Failed | Record::Result)
    }

    fn name(self) -> String {
        match self {
            Record::Contribution => "contribution".into(),
            Record::C1Commitment => "c1-commitment".into(),
            Record::Commitments => "commitments".into(),
            Record::LeftOut => "left-out".into(),
            Record::Sample(kind) => format!("sample-{kind}"),
            Record::Verified => "verified".into(),
            Record::Contributors => "contributors".into(),
            Record::Share => "share".into(),
            Record::Failed => "failed".into(),
            Record::Result => "result".into(),
        }
    }
}

/// How far a member got in a round, by its journal ([`Journal::step`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum RoundStep {
    /// Nothing recorded.
    NotBegun,
    /// A contribution recorded (its commitment may have been sent).
    Committed,
    /// The contribution was left out of the round: this member observes.
    LeftOut,
    /// The frozen commitment list recorded (the contribution may have been
    /// revealed).
    Revealed,
    /// An aggregate verified, no share of it made (t-of-n, or sitting out).
    Verified,
    /// A decryption share made (it may have been sent).
    Decrypted,
    /// The round failed.
    Failed,
    /// The result verified and recorded.
    Done,
}

/// A member's round records, in its state folder.
#[derive(Clone, Debug)]
pub(super) struct Journal {
    dir: PathBuf,
}

impl Journal {
    /// The journal in `dir` (created if missing).
    pub(super) fn open(dir: PathBuf) -> Result<Self, ClientError> {
        std::fs::create_dir_all(&dir)
            .map_err(|e| ClientError::Keys(format!("{}: {e}", dir.display())))?;
        Ok(Self { dir })
    }

    /// The state folder.
    pub(super) fn dir(&self) -> &Path {
        &self.dir
    }

    fn file(record: Record, study: &str, round: u64) -> String {
        format!("{study}.{round}.{}", record.name())
    }

    /// Where `record` of `study`'s `round` lives.
    pub(super) fn path(&self, record: Record, study: &str, round: u64) -> PathBuf {
        self.dir.join(Self::file(record, study, round))
    }

    /// The record's bytes, if it was made.
    pub(super) fn read(&self, record: Record, study: &str, round: u64) -> Option<Vec<u8>> {
        std::fs::read(self.path(record, study, round)).ok()
    }

    /// A record the journal holds ([`Self::step`] saw it), or why it
    /// cannot be read.
    pub(super) fn read_existing(
        &self,
        record: Record,
        study: &str,
        round: u64,
    ) -> Result<Vec<u8>, ClientError> {
        let path = self.path(record, study, round);
        std::fs::read(&path).map_err(|e| ClientError::Keys(format!("{}: {e}", path.display())))
    }

    /// Whether the record was made.
    pub(super) fn has(&self, record: Record, study: &str, round: u64) -> bool {
        self.path(record, study, round).exists()
    }

    /// Makes the record, synced. A record of what the member sent or
    /// checked is made once: refused if it exists ([`Record::restates`]
    /// says which may be made again).
    pub(super) fn record(
        &self,
        record: Record,
        study: &str,
        round: u64,
        bytes: &[u8],
    ) -> Result<(), ClientError> {
        let file = Self::file(record, study, round);
        keys::write_atomic(&self.dir, &file, bytes, record.restates())
    }

    /// Moves the round's contribution aside as [`Record::LeftOut`]: the
    /// round went on without it, and this member (or itself restarted)
    /// observes the round instead.
    pub(super) fn set_contribution_aside(
        &self,
        study: &str,
        round: u64,
    ) -> Result<(), ClientError> {
        let from = self.path(Record::Contribution, study, round);
        std::fs::rename(&from, self.path(Record::LeftOut, study, round)).map_err(|e| {
            ClientError::Keys(format!(
                "cannot move the unsent contribution {} aside: {e}",
                from.display()
            ))
        })
    }

    /// The seed pinned to the list with `fingerprint` for the signature
    /// sample `kind` of the round ([`Record::Sample`];
    /// `MemberSession::pinned_checks`): `fresh`, recorded with the
    /// fingerprint, if nothing is pinned yet; the recorded seed if the same
    /// list is; `None` if another list is (a damaged pin too: never a fresh
    /// start).
    pub(super) fn pin_seed(
        &self,
        kind: &'static str,
        study: &str,
        round: u64,
        fingerprint: &[u8; 32],
        fresh: [u8; 32],
    ) -> Result<Option<[u8; 32]>, ClientError> {
        let file = Self::file(Record::Sample(kind), study, round);
        match std::fs::read(self.dir.join(&file)) {
            Ok(pin) if pin.len() == 64 && pin[32..] == fingerprint[..] => {
                Ok(Some(pin[..32].try_into().expect("32 bytes")))
            }
            Ok(_) => Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let mut pin = fresh.to_vec();
                pin.extend_from_slice(fingerprint);
                keys::write_atomic(&self.dir, &file, &pin, false)?;
                Ok(Some(fresh))
            }
            Err(e) => Err(ClientError::Keys(format!("state record {file}: {e}"))),
        }
    }

    /// The hash of the aggregate this member verified in the round: its
    /// [`Record::Verified`], or, in folders of older versions (which
    /// recorded it only there), the head of its [`Record::Share`].
    pub(super) fn verified_hash(&self, study: &str, round: u64) -> Option<[u8; 32]> {
        self.read(Record::Verified, study, round)
            .or_else(|| self.read(Record::Share, study, round))
            .and_then(|bytes| bytes.get(..32)?.try_into().ok())
    }

    /// How far this member got in the round, by what it recorded.
    pub(super) fn step(&self, study: &str, round: u64) -> RoundStep {
        let has = |record| self.has(record, study, round);
        if has(Record::Result) {
            RoundStep::Done
        } else if has(Record::Failed) {
            RoundStep::Failed
        } else if has(Record::Share) {
            RoundStep::Decrypted
        } else if has(Record::Verified) {
            RoundStep::Verified
        } else if has(Record::Commitments) && has(Record::Contribution) {
            RoundStep::Revealed
        } else if has(Record::LeftOut) {
            RoundStep::LeftOut
        } else if has(Record::Contribution) {
            RoundStep::Committed
        } else {
            RoundStep::NotBegun
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A retry of a round's signature sample draws the seed it drew before
    /// for the same list, and another list (or a damaged pin) gets none.
    #[test]
    fn a_pinned_sample_serves_only_its_own_list_with_its_own_seed() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open(dir.path().to_path_buf()).unwrap();
        let (list, other) = ([7u8; 32], [8u8; 32]);
        let first = j.pin_seed("digests", "s", 1, &list, [1; 32]).unwrap();
        assert_eq!(first, Some([1; 32]));
        let again = j.pin_seed("digests", "s", 1, &list, [2; 32]).unwrap();
        assert_eq!(again, Some([1; 32]), "a retry draws again");
        let forged = j.pin_seed("digests", "s", 1, &other, [3; 32]).unwrap();
        assert_eq!(forged, None, "another list passes the pin");
        // Pins are per record: another kind or round is its own.
        let commitments = j.pin_seed("commitments", "s", 1, &other, [4; 32]).unwrap();
        assert_eq!(commitments, Some([4; 32]));
        // A damaged pin is another list's, never a fresh start.
        std::fs::write(dir.path().join("s.2.sample-digests"), [0u8; 10]).unwrap();
        let damaged = j.pin_seed("digests", "s", 2, &list, [5; 32]).unwrap();
        assert_eq!(damaged, None);
    }

    /// The journal's steps follow its records in the order a round makes
    /// them, a record once made is not replaced by other bytes, and the
    /// verified aggregate's hash is read from either layout.
    #[test]
    fn a_rounds_step_is_read_from_its_records_and_records_are_made_once() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open(dir.path().join("state")).unwrap();
        let step = |j: &Journal| j.step("s", 3);
        assert_eq!(step(&j), RoundStep::NotBegun);
        j.record(Record::Contribution, "s", 3, b"ct").unwrap();
        assert_eq!(step(&j), RoundStep::Committed);
        assert!(j.record(Record::Contribution, "s", 3, b"other").is_err());
        assert_eq!(j.read(Record::Contribution, "s", 3).unwrap(), b"ct");
        j.record(Record::Commitments, "s", 3, b"{}").unwrap();
        assert_eq!(step(&j), RoundStep::Revealed);
        // Another round and another study are apart.
        assert_eq!(j.step("s", 4), RoundStep::NotBegun);
        assert_eq!(j.step("t", 3), RoundStep::NotBegun);
        // An older folder: the verified hash at the head of the share.
        let mut share = [9u8; 32].to_vec();
        share.extend_from_slice(b"share");
        j.record(Record::Share, "s", 3, &share).unwrap();
        assert_eq!(step(&j), RoundStep::Decrypted);
        // Never a second, different share of a round.
        assert!(j.record(Record::Share, "s", 3, b"another").is_err());
        assert_eq!(j.verified_hash("s", 3), Some([9u8; 32]));
        j.record(Record::Verified, "s", 3, &[7u8; 32]).unwrap();
        assert_eq!(j.verified_hash("s", 3), Some([7u8; 32]));
        j.record(Record::Result, "s", 3, b"[1.0]").unwrap();
        j.record(Record::Result, "s", 3, b"[1.0]").unwrap();
        assert_eq!(step(&j), RoundStep::Done);
        // Left out: the contribution set aside.
        j.record(Record::Contribution, "s", 5, b"ct").unwrap();
        j.set_contribution_aside("s", 5).unwrap();
        assert_eq!(j.step("s", 5), RoundStep::LeftOut);
        assert!(!j.has(Record::Contribution, "s", 5));
        assert_eq!(
            dir.path().join("state/s.5.left-out"),
            j.path(Record::LeftOut, "s", 5)
        );
    }
}
