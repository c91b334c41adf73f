//! The queries of rounds: opening, the contributions' commitments and their
//! freezing, t-of-n decrypting sets, the aggregate, combined share and
//! result, and the compare-and-swap state changes.

use super::audit::{self, NewAudit};
use super::{cached, cas, final_or_read, hash32, keep, Store};
use crate::problem::{ApiError, ApiResult};
use fedhe_api::{CommittedContribution, RoundState};
use sqlx::any::AnyRow;
use sqlx::Row;
use std::sync::Arc;

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
    /// The value count of the round's contributions, fixed when the
    /// commitments are frozen.
    pub value_count: Option<i64>,
    /// The frozen commitment list's canonical hash, hex.
    pub commitment_list_hash: Option<String>,
    /// The aggregated contribution list's entries hash
    /// (`ContributionList::entries_hash`), stored when the round aggregates
    /// (`None` for rounds aggregated before the column existed).
    pub contribution_entries_hash: Option<[u8; 32]>,
    /// BLAKE3 of the combined decryption share, stored with the result.
    pub combined_hash: Option<[u8; 32]>,
    /// The combined decryption-share list's entries hash
    /// (`DecryptionShareList::entries_hash`), stored with the result.
    pub share_entries_hash: Option<[u8; 32]>,
}

/// An audit entry of the server's own about round `r` (action to fill in).
fn round_entry(r: &RoundRow) -> NewAudit<'_> {
    NewAudit {
        actor: "server",
        study: Some(&r.study),
        round: Some(r.round),
        ..NewAudit::default()
    }
}

pub(super) fn round_from_row(row: &AnyRow) -> Result<RoundRow, sqlx::Error> {
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
        value_count: row.try_get("value_count")?,
        commitment_list_hash: row.try_get("commitment_list_hash")?,
        contribution_entries_hash: hash32(row.try_get("contribution_entries_hash")?),
        combined_hash: hash32(row.try_get("combined_hash")?),
        share_entries_hash: hash32(row.try_get("share_entries_hash")?),
    })
}

pub(super) const ROUND_COLUMNS: &str = "study, round, state, version, deadline_at, reason, shape, aggregate_hash, parts, value_count, commitment_list_hash, contribution_entries_hash, combined_hash, share_entries_hash";

/// The query of one round's row (read on nearly every request). SQLite
/// looks it up by the primary key (a covering index over these columns is
/// not chosen for a unique lookup); the walk over the aggregate's overflow
/// pages this costs does not grow with the members.
fn round_query() -> String {
    format!("SELECT {ROUND_COLUMNS} FROM rounds WHERE study = $1 AND round = $2")
}

impl Store {
    /// The highest round number of a study (0 if none).
    pub async fn latest_round(&self, study: &str) -> ApiResult<u64> {
        let n: Option<i64> = sqlx::query_scalar("SELECT MAX(round) FROM rounds WHERE study = $1")
            .bind(study)
            .fetch_one(&self.read)
            .await?;
        Ok(n.unwrap_or(0) as u64)
    }

    /// Opens round `round` of a study if it is the next one (the previous round
    /// done or failed), committing until `deadline_at`. Opening the round that
    /// is already the latest one is a no-op (idempotent). Opening is audited
    /// in the same transaction, as done by `opened_by`.
    pub async fn open_round(
        &self,
        study: &str,
        round: u64,
        now: i64,
        deadline_at: i64,
        opened_by: &str,
    ) -> ApiResult<RoundRow> {
        // The study's latest round, if it is this one, is the answer: read
        // without the single writer, which every member opening the round
        // would otherwise take in turn (issue 16). (Rounds are never
        // removed, so a latest round stays this one until the next opens,
        // when the answer is the same as under the writer's lock below.)
        let latest_query = format!(
            "SELECT {ROUND_COLUMNS} FROM rounds WHERE study = $1 ORDER BY round DESC LIMIT 1"
        );
        if let Some(l) = sqlx::query(&latest_query)
            .bind(study)
            .fetch_optional(&self.read)
            .await?
            .map(|r| round_from_row(&r))
            .transpose()?
            .filter(|l| l.round == round)
        {
            return Ok(l);
        }
        let mut tx = self.begin_write().await?;
        let latest = sqlx::query(&format!(
            "SELECT {ROUND_COLUMNS} FROM rounds WHERE study = $1 ORDER BY round DESC LIMIT 1{}",
            self.for_update()
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
        let inserted = sqlx::query(
            // A replica that opened the same first round at the same time
            // inserted it already: nothing to do.
            "INSERT INTO rounds (study, round, state, version, created_at, deadline_at) VALUES ($1, $2, 'committing', 1, $3, $4) \
             ON CONFLICT (study, round) DO NOTHING",
        )
        .bind(study)
        .bind(round as i64)
        .bind(now)
        .bind(deadline_at)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if inserted == 1 {
            let entry = NewAudit {
                actor: opened_by,
                action: "round.opened",
                study: Some(study),
                round: Some(round),
                detail: Some(format!("deadline {deadline_at}")),
                ..NewAudit::default()
            };
            audit::insert(&mut tx, &entry, now).await?;
            tx.commit().await?;
            audit::log(&entry);
        } else {
            tx.commit().await?;
        }
        self.round(study, round).await
    }

    /// A round.
    pub async fn round(&self, study: &str, round: u64) -> ApiResult<RoundRow> {
        let row = sqlx::query(&round_query())
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
            "SELECT study, round FROM rounds WHERE state IN ('committing', 'collecting', 'decrypting') ORDER BY study, round",
        )
        .fetch_all(&self.read)
        .await?;
        Ok(rows.into_iter().map(|(s, r)| (s, r as u64)).collect())
    }

    /// Stores a member's commitment to its contribution while the round is
    /// `committing` (idempotent: the same commitment again is `Ok(false)` in
    /// any state; a different one is 409). Every answer comes once what it
    /// rests on is on disk (its commit's fsync shared with uploads',
    /// `Store::durable`).
    pub async fn put_round_commitment(
        &self,
        study: &str,
        round: u64,
        c: &CommittedContribution,
        hash: &[u8; 32],
        now: i64,
    ) -> ApiResult<bool> {
        let mut conn = self.acquire_grouped().await?;
        let answer = self
            .insert_round_commitment(&mut conn, study, round, c, hash, now)
            .await;
        drop(conn);
        self.durable().await?;
        answer
    }

    /// [`Self::put_round_commitment`]'s transaction, on the writer `conn`.
    async fn insert_round_commitment(
        &self,
        conn: &mut sqlx::pool::PoolConnection<sqlx::Any>,
        study: &str,
        round: u64,
        c: &CommittedContribution,
        hash: &[u8; 32],
        now: i64,
    ) -> ApiResult<bool> {
        let mut tx = self.begin_on(conn).await?;
        let r = sqlx::query(&format!(
            "SELECT {ROUND_COLUMNS} FROM rounds WHERE study = $1 AND round = $2{}",
            self.for_update()
        ))
        .bind(study)
        .bind(round as i64)
        .fetch_optional(&mut *tx)
        .await?
        .map(|r| round_from_row(&r))
        .transpose()?
        .ok_or_else(|| ApiError::not_found(format!("no round {round} in study {study}")))?;
        let existing: Option<(Vec<u8>, i64)> = sqlx::query_as(
            "SELECT hash, value_count FROM round_commitments WHERE study = $1 AND round = $2 AND member = $3",
        )
        .bind(study)
        .bind(round as i64)
        .bind(&c.member)
        .fetch_optional(&mut *tx)
        .await?;
        if let Some((h, values)) = existing {
            return if h == hash && values as u64 == c.values {
                Ok(false)
            } else {
                Err(ApiError::conflict(format!(
                    "{} already committed to a different contribution in round {round} of study {study}",
                    c.member
                ))
                .in_round(r.state, r.reason.as_deref(), true))
            };
        }
        if r.state != RoundState::Committing {
            return Err(ApiError::conflict(format!(
                "round {round} of study {study} is {}, not accepting commitments",
                r.state.as_str()
            ))
            .in_round(r.state, r.reason.as_deref(), false));
        }
        let c1_hash = fedhe_api::signing::decode_hex(&c.c1_commitment_hash)
            .map_err(|_| ApiError::bad_request("c1_commitment_hash is not hex"))?;
        // One ciphertext under two names would be summed twice (issue 45).
        let duplicate: Option<(String,)> = sqlx::query_as(
            "SELECT member FROM round_commitments WHERE study = $1 AND round = $2 AND member <> $3 \
             AND (hash = $4 OR c1_commitment_hash = $5) LIMIT 1",
        )
        .bind(study)
        .bind(round as i64)
        .bind(&c.member)
        .bind(&hash[..])
        .bind(&c1_hash[..])
        .fetch_optional(&mut *tx)
        .await?;
        if let Some((other,)) = duplicate {
            return Err(ApiError::conflict(format!(
                "{other} already committed to this ciphertext (or its c1 commitment) in round {round} of study {study}"
            ))
            .in_round(r.state, r.reason.as_deref(), false));
        }
        sqlx::query(
            "INSERT INTO round_commitments (study, round, member, hash, value_count, signature, created_at, c1_commitment_hash) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(study)
        .bind(round as i64)
        .bind(&c.member)
        .bind(&hash[..])
        .bind(c.values as i64)
        .bind(&c.signature)
        .bind(now)
        .bind(&c1_hash[..])
        .execute(&mut *tx)
        .await?;
        let entry = NewAudit {
            actor: &c.member,
            action: "round.commitment_accepted",
            study: Some(study),
            round: Some(round),
            member: Some(&c.member),
            hash: Some(c.hash.clone()),
            detail: Some(format!("{} values", c.values)),
            ..NewAudit::default()
        };
        cas(sqlx::query(
            "UPDATE rounds SET version = version + 1 WHERE study = $1 AND round = $2 AND version = $3",
        )
        .bind(study)
        .bind(round as i64)
        .bind(r.version)
        .execute(&mut *tx)
        .await?
        .rows_affected())?;
        // Last, as everywhere: the ceremony's audit head is locked after
        // the rows the change locks, in one order (no deadlock on PostgreSQL).
        audit::insert(&mut tx, &entry, now).await?;
        tx.commit().await?;
        audit::log(&entry);
        Ok(true)
    }

    /// A round's commitments, sorted by member; only those of `values` when
    /// given (the frozen list).
    pub async fn round_commitments(
        &self,
        study: &str,
        round: u64,
        values: Option<i64>,
    ) -> ApiResult<Vec<CommittedContribution>> {
        let columns = "SELECT member, hash, value_count, signature, c1_commitment_hash FROM round_commitments WHERE study = $1 AND round = $2";
        /// member, hash, value count, signature, c1 commitment hash.
        type Row = (String, Vec<u8>, i64, String, Option<Vec<u8>>);
        let rows: Vec<Row> = match values {
            Some(v) => {
                sqlx::query_as(&format!("{columns} AND value_count = $3 ORDER BY member"))
                    .bind(study)
                    .bind(round as i64)
                    .bind(v)
                    .fetch_all(&self.read)
                    .await?
            }
            None => {
                sqlx::query_as(&format!("{columns} ORDER BY member"))
                    .bind(study)
                    .bind(round as i64)
                    .fetch_all(&self.read)
                    .await?
            }
        };
        Ok(rows
            .into_iter()
            .map(
                |(member, hash, values, signature, c1_hash)| CommittedContribution {
                    member,
                    hash: hex::encode(hash),
                    values: values as u64,
                    c1_commitment_hash: c1_hash.map(hex::encode).unwrap_or_default(),
                    signature,
                },
            )
            .collect())
    }

    /// How many commitments a round has (of `values` values, if given), as
    /// [`Self::round_commitments`] would list.
    pub async fn round_commitment_count(
        &self,
        study: &str,
        round: u64,
        values: Option<i64>,
    ) -> ApiResult<usize> {
        let n: i64 = match values {
            Some(v) => sqlx::query_scalar(
                "SELECT COUNT(*) FROM round_commitments WHERE study = $1 AND round = $2 AND value_count = $3",
            )
            .bind(study)
            .bind(round as i64)
            .bind(v)
            .fetch_one(&self.read)
            .await?,
            None => sqlx::query_scalar(
                "SELECT COUNT(*) FROM round_commitments WHERE study = $1 AND round = $2",
            )
            .bind(study)
            .bind(round as i64)
            .fetch_one(&self.read)
            .await?,
        };
        Ok(n as usize)
    }

    /// Compare-and-swap: `committing` at `version` → `collecting`, freezing
    /// the commitments of `values` values (whose canonical hash is
    /// `list_hash`) and the contributions' `shape`, until `deadline_at`.
    pub async fn freeze_commitments(
        &self,
        r: &RoundRow,
        values: i64,
        list_hash: &str,
        shape: &str,
        deadline_at: i64,
    ) -> ApiResult<bool> {
        let update = sqlx::query(
            "UPDATE rounds SET state = 'collecting', version = version + 1, value_count = $1, commitment_list_hash = $2, shape = $3, deadline_at = $4 \
             WHERE study = $5 AND round = $6 AND version = $7 AND state = 'committing'",
        )
        .bind(values)
        .bind(list_hash)
        .bind(shape)
        .bind(deadline_at)
        .bind(&r.study)
        .bind(r.round as i64)
        .bind(r.version);
        let entry = NewAudit {
            action: "round.commitments_frozen",
            hash: Some(list_hash.to_string()),
            detail: Some(format!("{values} values per contribution")),
            ..round_entry(r)
        };
        self.transition(update, &entry).await
    }

    /// [`Self::round_commitments`] of the frozen value count for a round
    /// whose state, read before, was `state` (and `values` its frozen value
    /// count): once the round has left `committing` the list is final and
    /// kept in memory.
    pub async fn listed_commitments(
        &self,
        study: &str,
        round: u64,
        values: Option<i64>,
        state: RoundState,
    ) -> ApiResult<Arc<Vec<CommittedContribution>>> {
        final_or_read(
            &self.final_lists.commitments,
            (study.to_string(), round),
            state != RoundState::Committing,
            self.round_commitments(study, round, values),
        )
        .await
    }

    /// Claims a place for `member` in a t-of-n round's decrypting set while
    /// the round is `decrypting`: the first `threshold` claimants form the
    /// set. Returns the set so far, in claim order (the caller is in it
    /// unless it was already full).
    pub async fn claim_decryption(
        &self,
        study: &str,
        round: u64,
        member: &str,
        threshold: usize,
    ) -> ApiResult<Vec<String>> {
        // A full set takes no more claims: answered without a write.
        if let Some(set) = cached(
            &self.final_lists.decrypting_sets,
            &(study.to_string(), round),
        ) {
            if set.len() >= threshold {
                return Ok(set.to_vec());
            }
        }
        let mut tx = self.begin_write().await?;
        let state: String = sqlx::query_scalar(&format!(
            "SELECT state FROM rounds WHERE study = $1 AND round = $2{}",
            self.for_update()
        ))
        .bind(study)
        .bind(round as i64)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no round {round} of study {study}")))?;
        let mut set: Vec<String> = sqlx::query_scalar(
            "SELECT member FROM decryption_claims WHERE study = $1 AND round = $2 ORDER BY position",
        )
        .bind(study)
        .bind(round as i64)
        .fetch_all(&mut *tx)
        .await?;
        if set.iter().any(|m| m == member) || set.len() >= threshold {
            return Ok(set);
        }
        if state != "decrypting" {
            return Err(ApiError::conflict(format!(
                "round {round} of study {study} is {state}: a decrypting set is formed only while it is decrypting"
            )));
        }
        let now = fedhe_api::signing::now_ms();
        sqlx::query(
            "INSERT INTO decryption_claims (study, round, member, position, created_at) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(study)
        .bind(round as i64)
        .bind(member)
        .bind(set.len() as i64)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        set.push(member.to_string());
        if set.len() == threshold {
            let entry = NewAudit {
                actor: "server",
                action: "round.decrypting_set_fixed",
                study: Some(study),
                round: Some(round),
                detail: Some(set.join(", ")),
                ..NewAudit::default()
            };
            audit::insert(&mut tx, &entry, now).await?;
            tx.commit().await?;
            audit::log(&entry);
        } else {
            tx.commit().await?;
        }
        Ok(set)
    }

    /// A t-of-n round's decrypting set so far, in claim order, for a
    /// ceremony of threshold `threshold` (none for n-of-n: the set is
    /// empty). Once the set holds T members it cannot change, and it is
    /// kept in memory: share makers, share digests and status requests read
    /// it, T rows each time (issue 16).
    pub async fn decrypting_set(
        &self,
        study: &str,
        round: u64,
        threshold: Option<u32>,
    ) -> ApiResult<Vec<String>> {
        let key = (study.to_string(), round);
        if let Some(set) = cached(&self.final_lists.decrypting_sets, &key) {
            return Ok(set.to_vec());
        }
        let set: Vec<String> = sqlx::query_scalar(
            "SELECT member FROM decryption_claims WHERE study = $1 AND round = $2 ORDER BY position",
        )
        .bind(study)
        .bind(round as i64)
        .fetch_all(&self.read)
        .await?;
        if threshold.is_some_and(|t| set.len() >= t as usize) {
            keep(
                &self.final_lists.decrypting_sets,
                key,
                Arc::new(set.clone()),
            );
        }
        Ok(set)
    }

    /// The aggregate of a round.
    pub async fn aggregate(&self, study: &str, round: u64) -> ApiResult<Vec<u8>> {
        self.round_bytes("aggregate", "aggregate", study, round)
            .await
    }

    /// The carries of a round's aggregate (`fedhe_crypto::C1Carries` bytes).
    pub async fn aggregate_carries(&self, study: &str, round: u64) -> ApiResult<Vec<u8>> {
        self.round_bytes("aggregate_carries", "aggregate's carries", study, round)
            .await
    }

    /// The combined decryption share of a finished round.
    pub async fn combined(&self, study: &str, round: u64) -> ApiResult<Vec<u8>> {
        self.round_bytes("combined", "combined decryption share", study, round)
            .await
    }

    /// A bytes column of a round (`column` is one of this file's names).
    async fn round_bytes(
        &self,
        column: &str,
        what: &str,
        study: &str,
        round: u64,
    ) -> ApiResult<Vec<u8>> {
        let bytes: Option<Option<Vec<u8>>> = sqlx::query_scalar(&format!(
            "SELECT {column} FROM rounds WHERE study = $1 AND round = $2"
        ))
        .bind(study)
        .bind(round as i64)
        .fetch_optional(&self.read)
        .await?;
        bytes.flatten().ok_or_else(|| {
            ApiError::not_found(format!("round {round} of study {study} has no {what} yet"))
        })
    }

    /// Compare-and-swap: `collecting` at `version` → `decrypting` with the
    /// aggregate and the entries hash of the list it sums, until
    /// `deadline_at`.
    pub async fn begin_decrypting(
        &self,
        r: &RoundRow,
        aggregate: &[u8],
        carries: &[u8],
        entries_hash: &[u8; 32],
        parts: usize,
        deadline_at: i64,
    ) -> ApiResult<bool> {
        let hash = blake3::hash(aggregate);
        let update = sqlx::query(
            "UPDATE rounds SET state = 'decrypting', version = version + 1, aggregate = $1, aggregate_hash = $2, parts = $3, deadline_at = $4, contribution_entries_hash = $5, aggregate_carries = $9 \
             WHERE study = $6 AND round = $7 AND version = $8 AND state = 'collecting'",
        )
        .bind(aggregate)
        .bind(&hash.as_bytes()[..])
        .bind(parts as i64)
        .bind(deadline_at)
        .bind(&entries_hash[..])
        .bind(&r.study)
        .bind(r.round as i64)
        .bind(r.version)
        .bind(carries);
        let entry = NewAudit {
            action: "round.aggregated",
            hash: Some(hash.to_hex().to_string()),
            detail: Some(format!("{parts} ciphertexts")),
            ..round_entry(r)
        };
        self.transition(update, &entry).await
    }

    /// Compare-and-swap: `decrypting` at `version` → `done` with the
    /// combined (blinded) decryption share's bytes and the entries hash of the
    /// share list combined.
    pub async fn finish(
        &self,
        r: &RoundRow,
        combined: &[u8],
        share_entries_hash: &[u8; 32],
    ) -> ApiResult<bool> {
        let combined_hash = blake3::hash(combined);
        // No result column is written: the combined share is blinded
        // (fedhe_crypto::result_key) and the server holds no decoded value.
        let update = sqlx::query(
            "UPDATE rounds SET state = 'done', version = version + 1, combined = $1, combined_hash = $2, share_entries_hash = $3 \
             WHERE study = $4 AND round = $5 AND version = $6 AND state = 'decrypting'",
        )
        .bind(combined)
        .bind(&combined_hash.as_bytes()[..])
        .bind(&share_entries_hash[..])
        .bind(&r.study)
        .bind(r.round as i64)
        .bind(r.version);
        let entry = NewAudit {
            action: "round.result_published",
            hash: r.aggregate_hash.map(hex::encode),
            ..round_entry(r)
        };
        self.transition(update, &entry).await
    }

    /// Compare-and-swap: a round at `version` → `failed` with a reason.
    pub async fn fail_round(&self, r: &RoundRow, reason: &str) -> ApiResult<bool> {
        let update = sqlx::query(
            "UPDATE rounds SET state = 'failed', version = version + 1, reason = $1 \
             WHERE study = $2 AND round = $3 AND version = $4 AND state IN ('committing', 'collecting', 'decrypting')",
        )
        .bind(reason)
        .bind(&r.study)
        .bind(r.round as i64)
        .bind(r.version);
        let entry = NewAudit {
            action: "round.failed",
            detail: Some(reason.to_string()),
            ..round_entry(r)
        };
        self.transition(update, &entry).await
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
