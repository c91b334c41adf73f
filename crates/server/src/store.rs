//! The durable store (DESIGN.md §5): an SQLite file in WAL mode with
//! `synchronous=FULL`. Every write is one transaction, so a crash never leaves
//! half an upload or half a state change behind, and a request is answered 2xx
//! only after its transaction committed. State changes are compare-and-swap on
//! a `version` column; deadlines are columns, not timers.
//!
//! Writes go through a pool of one connection (SQLite has one writer at a
//! time; queueing in the pool avoids `SQLITE_BUSY` on lock upgrades); reads
//! use a separate pool and see the last committed state.

use crate::problem::{ApiError, ApiResult};
use fedhe_api::{CeremonyPhase, RoundState, SignedUpload};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::Row;
use std::str::FromStr;
use std::time::Duration;

/// The migrations, embedded in the binary.
static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

/// The store.
#[derive(Clone, Debug)]
pub struct Store {
    write: SqlitePool,
    read: SqlitePool,
}

/// A ceremony as stored.
#[derive(Clone, Debug)]
pub struct CeremonyRow {
    /// Id.
    pub id: String,
    /// Parameter-set name.
    pub parameter_set: String,
    /// Whether an insecure set was accepted.
    pub allow_insecure: bool,
    /// Phase.
    pub phase: CeremonyPhase,
    /// Compare-and-swap version.
    pub version: i64,
    /// Deadline (unix ms).
    pub deadline_at: i64,
    /// CRS seed.
    pub crs_seed: Vec<u8>,
    /// The transcript (JSON), once complete.
    pub transcript: Option<String>,
    /// Why it failed.
    pub reason: Option<String>,
}

/// A ceremony member as stored.
#[derive(Clone, Debug)]
pub struct MemberRow {
    /// Member id.
    pub member: String,
    /// Ed25519 public key.
    pub identity_key: [u8; 32],
    /// Committed share hash.
    pub share_hash: Option<[u8; 32]>,
    /// Signature of the commitment, hex.
    pub commitment_signature: Option<String>,
    /// Whether the share is revealed.
    pub revealed: bool,
}

/// A study as stored.
#[derive(Clone, Debug)]
pub struct StudyRow {
    /// The specification as created (JSON).
    pub spec: fedhe_api::StudySpec,
}

/// A round as stored.
#[derive(Clone, Debug)]
pub struct RoundRow {
    /// Study.
    pub study: String,
    /// Round number.
    pub round: u64,
    /// State.
    pub state: RoundState,
    /// Compare-and-swap version.
    pub version: i64,
    /// Deadline of the current state (unix ms).
    pub deadline_at: i64,
    /// Why it failed.
    pub reason: Option<String>,
    /// The shape every contribution must have (encoding and length).
    pub shape: Option<String>,
    /// BLAKE3 of the aggregate.
    pub aggregate_hash: Option<[u8; 32]>,
    /// Ciphertexts in the aggregate (polynomials a decryption share must have).
    pub parts: Option<i64>,
    /// The decoded result (JSON `[f64]`).
    pub result: Option<String>,
}

/// Which upload table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UploadTable {
    /// `contributions`.
    Contributions,
    /// `decryption_shares`.
    DecryptionShares,
}

impl UploadTable {
    fn name(self) -> &'static str {
        match self {
            Self::Contributions => "contributions",
            Self::DecryptionShares => "decryption_shares",
        }
    }

    fn what(self) -> &'static str {
        match self {
            Self::Contributions => "contribution",
            Self::DecryptionShares => "decryption share",
        }
    }

    /// The round state in which uploads to this table are accepted.
    fn accepting(self) -> RoundState {
        match self {
            Self::Contributions => RoundState::Collecting,
            Self::DecryptionShares => RoundState::Decrypting,
        }
    }
}

/// The two slots of a ceremony member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CeremonySlot {
    /// The committed hash of the public-key share.
    Commitment,
    /// The revealed public-key share.
    Share,
}

/// An upload to store.
pub struct Upload<'a> {
    /// Study.
    pub study: &'a str,
    /// Round.
    pub round: u64,
    /// Member.
    pub member: &'a str,
    /// Wire bytes.
    pub bytes: &'a [u8],
    /// BLAKE3 of `bytes`.
    pub hash: [u8; 32],
    /// The member's signature of the upload statement, hex.
    pub signature: &'a str,
    /// For a contribution: the shape of the object (encoding and length), which
    /// must match the round's first contribution.
    pub shape: Option<String>,
}

fn phase_str(p: CeremonyPhase) -> &'static str {
    match p {
        CeremonyPhase::Committing => "committing",
        CeremonyPhase::Revealing => "revealing",
        CeremonyPhase::Complete => "complete",
        CeremonyPhase::Failed => "failed",
    }
}

fn parse_phase(s: &str) -> CeremonyPhase {
    match s {
        "committing" => CeremonyPhase::Committing,
        "revealing" => CeremonyPhase::Revealing,
        "complete" => CeremonyPhase::Complete,
        _ => CeremonyPhase::Failed,
    }
}

fn hash32(bytes: Option<Vec<u8>>) -> Option<[u8; 32]> {
    bytes.and_then(|b| b.try_into().ok())
}

fn round_from_row(row: &sqlx::sqlite::SqliteRow) -> Result<RoundRow, sqlx::Error> {
    let state: String = row.try_get("state")?;
    Ok(RoundRow {
        study: row.try_get("study")?,
        round: row.try_get::<i64, _>("round")? as u64,
        state: RoundState::parse(&state).ok_or_else(|| {
            sqlx::Error::Decode(format!("unknown round state {state:?} in the store").into())
        })?,
        version: row.try_get("version")?,
        deadline_at: row.try_get("deadline_at")?,
        reason: row.try_get("reason")?,
        shape: row.try_get("shape")?,
        aggregate_hash: hash32(row.try_get("aggregate_hash")?),
        parts: row.try_get("parts")?,
        result: row.try_get("result")?,
    })
}

const ROUND_COLUMNS: &str =
    "study, round, state, version, deadline_at, reason, shape, aggregate_hash, parts, result";

impl Store {
    /// Opens (creating if needed) the SQLite database at `url`
    /// (`sqlite://path`) and runs the migrations.
    pub async fn open(url: &str) -> Result<Self, sqlx::Error> {
        let options = SqliteConnectOptions::from_str(url)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(10));
        let write = SqlitePoolOptions::new()
            .max_connections(1)
            .acquire_timeout(Duration::from_secs(30))
            .connect_with(options.clone())
            .await?;
        MIGRATOR.run(&write).await?;
        let read = SqlitePoolOptions::new()
            .max_connections(4)
            .acquire_timeout(Duration::from_secs(30))
            .connect_with(options.read_only(true))
            .await?;
        Ok(Self { write, read })
    }

    /// Checks that the store answers (for `/readyz`).
    pub async fn ping(&self) -> Result<(), sqlx::Error> {
        sqlx::query("SELECT 1")
            .execute(&self.read)
            .await
            .map(|_| ())
    }

    /// Closes both pools (waits for running queries).
    pub async fn close(&self) {
        self.write.close().await;
        self.read.close().await;
    }

    // ---- ceremonies ----------------------------------------------------

    /// Inserts a ceremony and its members. `Ok(false)` if one with this id
    /// exists already with the same spec (an idempotent retry); 409 if it
    /// differs.
    #[allow(clippy::too_many_arguments)]
    pub async fn create_ceremony(
        &self,
        id: &str,
        parameter_set: &str,
        allow_insecure: bool,
        now: i64,
        deadline_at: i64,
        crs_seed: &[u8; 32],
        members: &[(String, [u8; 32])],
    ) -> ApiResult<bool> {
        let mut tx = self.write.begin().await?;
        let existing = sqlx::query("SELECT parameter_set, crs_seed FROM ceremonies WHERE id = ?")
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?;
        if let Some(row) = existing {
            let same_set = row.try_get::<String, _>("parameter_set")? == parameter_set;
            let same_seed = row.try_get::<Vec<u8>, _>("crs_seed")? == crs_seed;
            let keys: Vec<(String, Vec<u8>)> = sqlx::query_as(
                "SELECT member, identity_key FROM ceremony_members WHERE ceremony = ? ORDER BY member",
            )
            .bind(id)
            .fetch_all(&mut *tx)
            .await?;
            let mut wanted: Vec<(String, Vec<u8>)> = members
                .iter()
                .map(|(m, k)| (m.clone(), k.to_vec()))
                .collect();
            wanted.sort();
            return if same_set && same_seed && keys == wanted {
                Ok(false)
            } else {
                Err(ApiError::conflict(format!(
                    "ceremony {id} exists with a different specification"
                )))
            };
        }
        sqlx::query(
            "INSERT INTO ceremonies (id, parameter_set, allow_insecure, phase, version, created_at, deadline_at, crs_seed) \
             VALUES (?, ?, ?, 'committing', 1, ?, ?, ?)",
        )
        .bind(id)
        .bind(parameter_set)
        .bind(allow_insecure)
        .bind(now)
        .bind(deadline_at)
        .bind(&crs_seed[..])
        .execute(&mut *tx)
        .await?;
        for (member, key) in members {
            sqlx::query(
                "INSERT INTO ceremony_members (ceremony, member, identity_key) VALUES (?, ?, ?)",
            )
            .bind(id)
            .bind(member)
            .bind(&key[..])
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(true)
    }

    /// A ceremony.
    pub async fn ceremony(&self, id: &str) -> ApiResult<CeremonyRow> {
        let row = sqlx::query(
            "SELECT id, parameter_set, allow_insecure, phase, version, deadline_at, crs_seed, transcript, reason \
             FROM ceremonies WHERE id = ?",
        )
        .bind(id)
        .fetch_optional(&self.read)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no ceremony {id}")))?;
        Ok(CeremonyRow {
            id: row.try_get("id")?,
            parameter_set: row.try_get("parameter_set")?,
            allow_insecure: row.try_get("allow_insecure")?,
            phase: parse_phase(&row.try_get::<String, _>("phase")?),
            version: row.try_get("version")?,
            deadline_at: row.try_get("deadline_at")?,
            crs_seed: row.try_get("crs_seed")?,
            transcript: row.try_get("transcript")?,
            reason: row.try_get("reason")?,
        })
    }

    /// The members of a ceremony, sorted.
    pub async fn members(&self, ceremony: &str) -> ApiResult<Vec<MemberRow>> {
        let rows = sqlx::query(
            "SELECT member, identity_key, share_hash, commitment_signature, share IS NOT NULL AS revealed \
             FROM ceremony_members WHERE ceremony = ? ORDER BY member",
        )
        .bind(ceremony)
        .fetch_all(&self.read)
        .await?;
        rows.iter()
            .map(|row| {
                let key: Vec<u8> = row.try_get("identity_key")?;
                Ok(MemberRow {
                    member: row.try_get("member")?,
                    identity_key: key
                        .try_into()
                        .map_err(|_| ApiError::internal("a stored identity key is malformed"))?,
                    share_hash: hash32(row.try_get("share_hash")?),
                    commitment_signature: row.try_get("commitment_signature")?,
                    revealed: row.try_get("revealed")?,
                })
            })
            .collect()
    }

    /// The identity key of `member` in `ceremony`, if it is one.
    pub async fn member_key(&self, ceremony: &str, member: &str) -> ApiResult<Option<[u8; 32]>> {
        let key: Option<Vec<u8>> = sqlx::query_scalar(
            "SELECT identity_key FROM ceremony_members WHERE ceremony = ? AND member = ?",
        )
        .bind(ceremony)
        .bind(member)
        .fetch_optional(&self.read)
        .await?;
        Ok(key.and_then(|k| k.try_into().ok()))
    }

    /// Stores a commitment (idempotent: the same hash again is `Ok(false)`, a
    /// different one 409). The last commitment moves the ceremony to
    /// `revealing` in the same transaction.
    pub async fn put_commitment(
        &self,
        ceremony: &str,
        member: &str,
        share_hash: &[u8; 32],
        signature: &str,
    ) -> ApiResult<bool> {
        self.put_ceremony_slot(
            CeremonySlot::Commitment,
            ceremony,
            member,
            share_hash,
            signature,
        )
        .await
    }

    /// Stores a revealed public-key share whose hash matched the commitment
    /// (idempotent as [`Self::put_commitment`]). Returns whether it was new.
    pub async fn put_public_key_share(
        &self,
        ceremony: &str,
        member: &str,
        bytes: &[u8],
    ) -> ApiResult<bool> {
        self.put_ceremony_slot(CeremonySlot::Share, ceremony, member, bytes, "")
            .await
    }

    /// One transaction: check the member's slot (same value: `Ok(false)`;
    /// another value: 409), check the phase, fill the slot, and bump the
    /// ceremony's version — moving it to `revealing` with the last commitment.
    async fn put_ceremony_slot(
        &self,
        slot: CeremonySlot,
        ceremony: &str,
        member: &str,
        value: &[u8],
        signature: &str,
    ) -> ApiResult<bool> {
        let (column, phase_needed, what) = match slot {
            CeremonySlot::Commitment => ("share_hash", "committing", "commitment"),
            CeremonySlot::Share => ("share", "revealing", "public-key share"),
        };
        let mut tx = self.write.begin().await?;
        let (phase, version): (String, i64) =
            sqlx::query_as("SELECT phase, version FROM ceremonies WHERE id = ?")
                .bind(ceremony)
                .fetch_one(&mut *tx)
                .await?;
        let existing: Option<Vec<u8>> = sqlx::query_scalar(&format!(
            "SELECT {column} FROM ceremony_members WHERE ceremony = ? AND member = ?"
        ))
        .bind(ceremony)
        .bind(member)
        .fetch_one(&mut *tx)
        .await?;
        if let Some(existing) = existing {
            return if existing == value {
                Ok(false)
            } else {
                Err(ApiError::conflict(format!(
                    "{member} already sent a different {what} in ceremony {ceremony}"
                )))
            };
        }
        if phase != phase_needed {
            return Err(ApiError::conflict(format!(
                "ceremony {ceremony} is {phase}, not accepting a {what}"
            )));
        }
        let update = match slot {
            CeremonySlot::Commitment => {
                "UPDATE ceremony_members SET share_hash = ?, commitment_signature = ? WHERE ceremony = ? AND member = ?"
            }
            CeremonySlot::Share => {
                "UPDATE ceremony_members SET share = ?, commitment_signature = COALESCE(commitment_signature, ?) WHERE ceremony = ? AND member = ?"
            }
        };
        sqlx::query(update)
            .bind(value)
            .bind(signature)
            .bind(ceremony)
            .bind(member)
            .execute(&mut *tx)
            .await?;
        let missing: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM ceremony_members WHERE ceremony = ? AND share_hash IS NULL",
        )
        .bind(ceremony)
        .fetch_one(&mut *tx)
        .await?;
        let next = if slot == CeremonySlot::Commitment && missing == 0 {
            "revealing"
        } else {
            phase_needed
        };
        cas(sqlx::query(
            "UPDATE ceremonies SET phase = ?, version = version + 1 WHERE id = ? AND version = ?",
        )
        .bind(next)
        .bind(ceremony)
        .bind(version)
        .execute(&mut *tx)
        .await?
        .rows_affected())?;
        tx.commit().await?;
        Ok(true)
    }

    /// The revealed public-key shares, sorted by member.
    pub async fn public_key_shares(&self, ceremony: &str) -> ApiResult<Vec<(String, Vec<u8>)>> {
        Ok(sqlx::query_as(
            "SELECT member, share FROM ceremony_members WHERE ceremony = ? AND share IS NOT NULL ORDER BY member",
        )
        .bind(ceremony)
        .fetch_all(&self.read)
        .await?)
    }

    /// One member's revealed share.
    pub async fn public_key_share(&self, ceremony: &str, member: &str) -> ApiResult<Vec<u8>> {
        let share: Option<Option<Vec<u8>>> = sqlx::query_scalar(
            "SELECT share FROM ceremony_members WHERE ceremony = ? AND member = ?",
        )
        .bind(ceremony)
        .bind(member)
        .fetch_optional(&self.read)
        .await?;
        share.flatten().ok_or_else(|| {
            ApiError::not_found(format!(
                "no revealed public-key share of {member} in ceremony {ceremony}"
            ))
        })
    }

    /// The collective key.
    pub async fn collective_key(&self, ceremony: &str) -> ApiResult<Vec<u8>> {
        let key: Option<Option<Vec<u8>>> =
            sqlx::query_scalar("SELECT collective_key FROM ceremonies WHERE id = ?")
                .bind(ceremony)
                .fetch_optional(&self.read)
                .await?;
        key.flatten().ok_or_else(|| {
            ApiError::not_found(format!("ceremony {ceremony} has no collective key yet"))
        })
    }

    /// Compare-and-swap: `revealing` at `version` → `complete`, with the key
    /// and transcript. `Ok(false)` if the version moved.
    pub async fn complete_ceremony(
        &self,
        ceremony: &str,
        version: i64,
        collective_key: &[u8],
        transcript: &str,
    ) -> ApiResult<bool> {
        let done = sqlx::query(
            "UPDATE ceremonies SET phase = 'complete', version = version + 1, collective_key = ?, transcript = ? \
             WHERE id = ? AND version = ? AND phase = 'revealing'",
        )
        .bind(collective_key)
        .bind(transcript)
        .bind(ceremony)
        .bind(version)
        .execute(&self.write)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Compare-and-swap: a ceremony at `version` → `failed`.
    pub async fn fail_ceremony(
        &self,
        ceremony: &str,
        version: i64,
        reason: &str,
    ) -> ApiResult<bool> {
        let done = sqlx::query(
            "UPDATE ceremonies SET phase = 'failed', version = version + 1, reason = ? \
             WHERE id = ? AND version = ? AND phase IN ('committing', 'revealing')",
        )
        .bind(reason)
        .bind(ceremony)
        .bind(version)
        .execute(&self.write)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Ceremonies not yet complete or failed.
    pub async fn open_ceremonies(&self) -> ApiResult<Vec<String>> {
        Ok(sqlx::query_scalar(
            "SELECT id FROM ceremonies WHERE phase IN ('committing', 'revealing') ORDER BY id",
        )
        .fetch_all(&self.read)
        .await?)
    }

    // ---- studies ---------------------------------------------------------

    /// Inserts a study (idempotent as [`Self::create_ceremony`]).
    pub async fn create_study(&self, spec: &fedhe_api::StudySpec, now: i64) -> ApiResult<bool> {
        let text = serde_json::to_string(spec)
            .map_err(|e| ApiError::bad_request(format!("study spec: {e}")))?;
        let mut tx = self.write.begin().await?;
        let existing: Option<String> = sqlx::query_scalar("SELECT spec FROM studies WHERE id = ?")
            .bind(&spec.id)
            .fetch_optional(&mut *tx)
            .await?;
        if let Some(existing) = existing {
            return if existing == text {
                Ok(false)
            } else {
                Err(ApiError::conflict(format!(
                    "study {} exists with a different specification",
                    spec.id
                )))
            };
        }
        sqlx::query(
            "INSERT INTO studies (id, ceremony, spec, min_contributors, round_timeout_ms, decrypt_timeout_ms, created_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&spec.id)
        .bind(&spec.ceremony)
        .bind(&text)
        .bind(i64::from(spec.min_contributors))
        .bind(ms(spec.round_timeout_secs))
        .bind(ms(spec.decrypt_timeout_secs))
        .bind(now)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(true)
    }

    /// A study.
    pub async fn study(&self, id: &str) -> ApiResult<StudyRow> {
        let spec: String = sqlx::query_scalar("SELECT spec FROM studies WHERE id = ?")
            .bind(id)
            .fetch_optional(&self.read)
            .await?
            .ok_or_else(|| ApiError::not_found(format!("no study {id}")))?;
        Ok(StudyRow {
            spec: serde_json::from_str(&spec)
                .map_err(|_| ApiError::internal("a stored study is malformed"))?,
        })
    }

    // ---- rounds ----------------------------------------------------------

    /// The highest round number of a study (0 if none).
    pub async fn latest_round(&self, study: &str) -> ApiResult<u64> {
        let n: Option<i64> = sqlx::query_scalar("SELECT MAX(round) FROM rounds WHERE study = ?")
            .bind(study)
            .fetch_one(&self.read)
            .await?;
        Ok(n.unwrap_or(0) as u64)
    }

    /// Opens round `round` of a study if it is the next one (the previous round
    /// done or failed), collecting until `deadline_at`. Opening the round that
    /// is already the latest one is a no-op (idempotent).
    pub async fn open_round(
        &self,
        study: &str,
        round: u64,
        now: i64,
        deadline_at: i64,
    ) -> ApiResult<RoundRow> {
        let mut tx = self.write.begin().await?;
        let latest = sqlx::query(&format!(
            "SELECT {ROUND_COLUMNS} FROM rounds WHERE study = ? ORDER BY round DESC LIMIT 1"
        ))
        .bind(study)
        .fetch_optional(&mut *tx)
        .await?
        .map(|r| round_from_row(&r))
        .transpose()?;
        match &latest {
            Some(l) if l.round == round => return Ok(l.clone()),
            Some(l) if round != l.round + 1 => {
                return Err(ApiError::conflict(format!(
                    "round {round} of study {study} cannot be opened: the latest round is {}",
                    l.round
                )))
            }
            Some(l) if !l.state.is_terminal() => {
                return Err(ApiError::conflict(format!(
                    "round {round} of study {study} cannot be opened while round {} is {}",
                    l.round,
                    l.state.as_str()
                )))
            }
            None if round != 1 => {
                return Err(ApiError::conflict(format!(
                    "round {round} of study {study} cannot be opened: the first round is 1"
                )))
            }
            _ => {}
        }
        sqlx::query(
            "INSERT INTO rounds (study, round, state, version, created_at, deadline_at) VALUES (?, ?, 'collecting', 1, ?, ?)",
        )
        .bind(study)
        .bind(round as i64)
        .bind(now)
        .bind(deadline_at)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        self.round(study, round).await
    }

    /// A round.
    pub async fn round(&self, study: &str, round: u64) -> ApiResult<RoundRow> {
        let row = sqlx::query(&format!(
            "SELECT {ROUND_COLUMNS} FROM rounds WHERE study = ? AND round = ?"
        ))
        .bind(study)
        .bind(round as i64)
        .fetch_optional(&self.read)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no round {round} in study {study}")))?;
        Ok(round_from_row(&row)?)
    }

    /// Rounds not yet done or failed, for the deadline sweeper.
    pub async fn active_rounds(&self) -> ApiResult<Vec<(String, u64)>> {
        let rows: Vec<(String, i64)> = sqlx::query_as(
            "SELECT study, round FROM rounds WHERE state IN ('collecting', 'decrypting') ORDER BY study, round",
        )
        .fetch_all(&self.read)
        .await?;
        Ok(rows.into_iter().map(|(s, r)| (s, r as u64)).collect())
    }

    /// Stores an upload in its slot, in one transaction that also bumps the
    /// round's version. The same bytes again are `Ok(false)` in any state;
    /// different bytes for a filled slot are 409; a new upload is accepted only
    /// while the round is in the state that collects it.
    pub async fn put_upload(
        &self,
        table: UploadTable,
        u: &Upload<'_>,
        now: i64,
    ) -> ApiResult<bool> {
        let mut tx = self.write.begin().await?;
        let round = sqlx::query(&format!(
            "SELECT {ROUND_COLUMNS} FROM rounds WHERE study = ? AND round = ?"
        ))
        .bind(u.study)
        .bind(u.round as i64)
        .fetch_optional(&mut *tx)
        .await?
        .map(|r| round_from_row(&r))
        .transpose()?
        .ok_or_else(|| ApiError::not_found(format!("no round {} in study {}", u.round, u.study)))?;
        let existing: Option<Vec<u8>> = sqlx::query_scalar(&format!(
            "SELECT hash FROM {} WHERE study = ? AND round = ? AND member = ?",
            table.name()
        ))
        .bind(u.study)
        .bind(u.round as i64)
        .bind(u.member)
        .fetch_optional(&mut *tx)
        .await?;
        if let Some(existing) = existing {
            return if existing == u.hash {
                Ok(false)
            } else {
                Err(ApiError::conflict(format!(
                    "{} already sent a different {} for round {} of study {}",
                    u.member,
                    table.what(),
                    u.round,
                    u.study
                )))
            };
        }
        if round.state != table.accepting() {
            return Err(ApiError::conflict(format!(
                "round {} of study {} is {}{}, not accepting {}s",
                u.round,
                u.study,
                round.state.as_str(),
                round
                    .reason
                    .as_deref()
                    .map(|r| format!(" ({r})"))
                    .unwrap_or_default(),
                table.what()
            )));
        }
        if let (Some(shape), Some(expected)) = (&u.shape, &round.shape) {
            if shape != expected {
                return Err(ApiError::unprocessable(format!(
                    "the contribution has shape {shape}, but this round's contributions have shape {expected}"
                )));
            }
        }
        sqlx::query(&format!(
            "INSERT INTO {} (study, round, member, bytes, hash, signature, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            table.name()
        ))
        .bind(u.study)
        .bind(u.round as i64)
        .bind(u.member)
        .bind(u.bytes)
        .bind(&u.hash[..])
        .bind(u.signature)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        cas(sqlx::query(
            "UPDATE rounds SET version = version + 1, shape = COALESCE(shape, ?) \
                 WHERE study = ? AND round = ? AND version = ?",
        )
        .bind(u.shape.as_deref())
        .bind(u.study)
        .bind(u.round as i64)
        .bind(round.version)
        .execute(&mut *tx)
        .await?
        .rows_affected())?;
        tx.commit().await?;
        Ok(true)
    }

    /// The signed uploads of a round in `table`, sorted by member.
    pub async fn uploads(
        &self,
        table: UploadTable,
        study: &str,
        round: u64,
    ) -> ApiResult<Vec<SignedUpload>> {
        let rows: Vec<(String, Vec<u8>, String)> = sqlx::query_as(&format!(
            "SELECT member, hash, signature FROM {} WHERE study = ? AND round = ? ORDER BY member",
            table.name()
        ))
        .bind(study)
        .bind(round as i64)
        .fetch_all(&self.read)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(member, hash, signature)| SignedUpload {
                member,
                hash: hex::encode(hash),
                signature,
            })
            .collect())
    }

    /// The bytes of one upload.
    pub async fn upload_bytes(
        &self,
        table: UploadTable,
        study: &str,
        round: u64,
        member: &str,
    ) -> ApiResult<Vec<u8>> {
        sqlx::query_scalar(&format!(
            "SELECT bytes FROM {} WHERE study = ? AND round = ? AND member = ?",
            table.name()
        ))
        .bind(study)
        .bind(round as i64)
        .bind(member)
        .fetch_optional(&self.read)
        .await?
        .ok_or_else(|| {
            ApiError::not_found(format!(
                "no {} of {member} in round {round} of study {study}",
                table.what()
            ))
        })
    }

    /// The aggregate of a round.
    pub async fn aggregate(&self, study: &str, round: u64) -> ApiResult<Vec<u8>> {
        let bytes: Option<Option<Vec<u8>>> =
            sqlx::query_scalar("SELECT aggregate FROM rounds WHERE study = ? AND round = ?")
                .bind(study)
                .bind(round as i64)
                .fetch_optional(&self.read)
                .await?;
        bytes.flatten().ok_or_else(|| {
            ApiError::not_found(format!(
                "round {round} of study {study} has no aggregate yet"
            ))
        })
    }

    /// Compare-and-swap: `collecting` at `version` → `decrypting` with the
    /// aggregate, until `deadline_at`.
    pub async fn begin_decrypting(
        &self,
        r: &RoundRow,
        aggregate: &[u8],
        parts: usize,
        deadline_at: i64,
    ) -> ApiResult<bool> {
        let done = sqlx::query(
            "UPDATE rounds SET state = 'decrypting', version = version + 1, aggregate = ?, aggregate_hash = ?, parts = ?, deadline_at = ? \
             WHERE study = ? AND round = ? AND version = ? AND state = 'collecting'",
        )
        .bind(aggregate)
        .bind(&blake3::hash(aggregate).as_bytes()[..])
        .bind(parts as i64)
        .bind(deadline_at)
        .bind(&r.study)
        .bind(r.round as i64)
        .bind(r.version)
        .execute(&self.write)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Compare-and-swap: `decrypting` at `version` → `done` with the result.
    pub async fn finish(&self, r: &RoundRow, result: &str) -> ApiResult<bool> {
        let done = sqlx::query(
            "UPDATE rounds SET state = 'done', version = version + 1, result = ? \
             WHERE study = ? AND round = ? AND version = ? AND state = 'decrypting'",
        )
        .bind(result)
        .bind(&r.study)
        .bind(r.round as i64)
        .bind(r.version)
        .execute(&self.write)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Compare-and-swap: a round at `version` → `failed` with a reason.
    pub async fn fail_round(&self, r: &RoundRow, reason: &str) -> ApiResult<bool> {
        let done = sqlx::query(
            "UPDATE rounds SET state = 'failed', version = version + 1, reason = ? \
             WHERE study = ? AND round = ? AND version = ? AND state IN ('collecting', 'decrypting')",
        )
        .bind(reason)
        .bind(&r.study)
        .bind(r.round as i64)
        .bind(r.version)
        .execute(&self.write)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    // ---- nonces ----------------------------------------------------------

    /// Records a request nonce of an identity; `Ok(false)` if it was seen
    /// before (a replay). Prunes nonces older than `prune_before`.
    pub async fn record_nonce(
        &self,
        identity_key: &[u8; 32],
        nonce: &str,
        now: i64,
        prune_before: i64,
    ) -> ApiResult<bool> {
        let mut tx = self.write.begin().await?;
        sqlx::query("DELETE FROM nonces WHERE seen_at < ?")
            .bind(prune_before)
            .execute(&mut *tx)
            .await?;
        let inserted = sqlx::query(
            "INSERT INTO nonces (identity_key, nonce, seen_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
        )
        .bind(&identity_key[..])
        .bind(nonce)
        .bind(now)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        tx.commit().await?;
        Ok(inserted == 1)
    }

    /// Counts of rounds per state, for `/metrics`.
    pub async fn round_counts(&self) -> ApiResult<Vec<(String, i64)>> {
        Ok(
            sqlx::query_as("SELECT state, COUNT(*) FROM rounds GROUP BY state ORDER BY state")
                .fetch_all(&self.read)
                .await?,
        )
    }
}

/// Fails a transaction whose compare-and-swap found the version moved.
fn cas(rows_affected: u64) -> ApiResult<()> {
    if rows_affected == 1 {
        Ok(())
    } else {
        Err(ApiError::conflict(
            "the resource changed concurrently; retry the request",
        ))
    }
}

fn ms(secs: u64) -> i64 {
    (secs.min(i64::MAX as u64 / 1000) * 1000) as i64
}

/// The phase as stored.
pub fn phase_name(p: CeremonyPhase) -> &'static str {
    phase_str(p)
}
