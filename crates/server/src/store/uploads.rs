//! The queries of a round's uploads: contributions, decryption shares, sum
//! and share digests (one table each, the same columns).

use super::audit::{self, NewAudit};
use super::rounds::{round_from_row, ROUND_COLUMNS};
use super::{cached, cas, final_or_read, hash32, keep, Store};
use crate::problem::{ApiError, ApiResult};
use fedhe_api::{RoundState, SignedUpload};
use std::sync::Arc;

/// Which upload table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UploadTable {
    /// `contributions`.
    Contributions,
    /// `decryption_shares`.
    DecryptionShares,
    /// `sum_digests`: contributors' signed digests of their contributions.
    SumDigests,
    /// `share_digests`: share makers' signed digests of their decryption
    /// shares, on the combined share's challenge.
    ShareDigests,
}

impl UploadTable {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Contributions => "contributions",
            Self::DecryptionShares => "decryption_shares",
            Self::SumDigests => "sum_digests",
            Self::ShareDigests => "share_digests",
        }
    }

    fn what(self) -> &'static str {
        match self {
            Self::Contributions => "contribution",
            Self::DecryptionShares => "decryption share",
            Self::SumDigests => "sum digest",
            Self::ShareDigests => "share digest",
        }
    }

    /// The round state in which uploads to this table are accepted.
    fn accepting(self) -> RoundState {
        match self {
            // Reveals of committed contributions.
            Self::Contributions => RoundState::Collecting,
            // Digests of the contributions, on the aggregate's challenge.
            Self::DecryptionShares | Self::SumDigests => RoundState::Decrypting,
            // Digests of the decryption shares, once they are combined.
            Self::ShareDigests => RoundState::Done,
        }
    }

    /// Whether a round in `state` takes no more uploads to this table, so
    /// its list is final: uploads are inserted only in
    /// [`Self::accepting`], in the transaction that reads the round's
    /// state, and a round never goes back. The digest tables are never
    /// final by state alone (a late digest is still taken); a digest list
    /// is kept once complete instead ([`Store::listed_digests`]).
    pub(crate) fn is_final(self, state: RoundState) -> bool {
        match self {
            Self::Contributions => matches!(
                state,
                RoundState::Decrypting | RoundState::Done | RoundState::Failed
            ),
            Self::DecryptionShares => matches!(state, RoundState::Done | RoundState::Failed),
            Self::SumDigests | Self::ShareDigests => false,
        }
    }
}

/// A digest as stored: its maker, its bytes and the maker's signature (hex).
pub type DigestRow = (String, Vec<u8>, String);

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

/// The query of a round's signed uploads in `table` (a list every member
/// fetches): on SQLite answered from the covering indexes
/// `contributions_listed` and `decryption_shares_listed` (the digest
/// tables' rows hold no large blob).
pub(super) fn uploads_query(table: UploadTable) -> String {
    format!(
        "SELECT member, hash, signature FROM {} WHERE study = $1 AND round = $2 ORDER BY member",
        table.name()
    )
}

impl Store {
    /// Stores an upload in its slot, in one transaction that also bumps the
    /// round's version. The same bytes again are `Ok(false)` in any state;
    /// different bytes for a filled slot are 409; a new upload is accepted only
    /// while the round is in the state that collects it. Every answer comes
    /// once what it rests on is on disk (its commit's fsync shared with
    /// other uploads', `Store::durable`; a 409 may rest on another
    /// request's commit).
    pub async fn put_upload(
        &self,
        table: UploadTable,
        u: &Upload<'_>,
        now: i64,
    ) -> ApiResult<bool> {
        let mut conn = self.acquire_grouped().await?;
        let answer = self.insert_upload(&mut conn, table, u, now).await;
        drop(conn);
        self.durable().await?;
        answer
    }

    /// [`Self::put_upload`]'s transaction, on the writer `conn`.
    async fn insert_upload(
        &self,
        conn: &mut sqlx::pool::PoolConnection<sqlx::Any>,
        table: UploadTable,
        u: &Upload<'_>,
        now: i64,
    ) -> ApiResult<bool> {
        let mut tx = self.begin_on(conn).await?;
        let round = sqlx::query(&format!(
            "SELECT {ROUND_COLUMNS} FROM rounds WHERE study = $1 AND round = $2{}",
            self.for_update()
        ))
        .bind(u.study)
        .bind(u.round as i64)
        .fetch_optional(&mut *tx)
        .await?
        .map(|r| round_from_row(&r))
        .transpose()?
        .ok_or_else(|| ApiError::not_found(format!("no round {} in study {}", u.round, u.study)))?;
        let existing: Option<Vec<u8>> = sqlx::query_scalar(&format!(
            "SELECT hash FROM {} WHERE study = $1 AND round = $2 AND member = $3",
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
                ))
                .in_round(round.state, round.reason.as_deref(), true))
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
            ))
            .in_round(round.state, round.reason.as_deref(), false));
        }
        if let (Some(shape), Some(expected)) = (&u.shape, &round.shape) {
            if shape != expected {
                return Err(ApiError::unprocessable(format!(
                    "the contribution has shape {shape}, but this round's contributions have shape {expected}"
                )));
            }
        }
        if table == UploadTable::Contributions {
            // Only a committed contribution of the frozen list is revealed.
            let committed: Option<Vec<u8>> = sqlx::query_scalar(
                "SELECT hash FROM round_commitments WHERE study = $1 AND round = $2 AND member = $3 AND value_count = $4",
            )
            .bind(u.study)
            .bind(u.round as i64)
            .bind(u.member)
            .bind(round.value_count.unwrap_or(-1))
            .fetch_optional(&mut *tx)
            .await?;
            match committed {
                None => {
                    return Err(ApiError::conflict(format!(
                    "{} has no commitment in the frozen commitment list of round {} of study {}",
                    u.member, u.round, u.study
                ))
                    .in_round(round.state, round.reason.as_deref(), false))
                }
                Some(h) if h != u.hash => {
                    return Err(ApiError::unprocessable(format!(
                    "the contribution of {} is not the one it committed to in round {} of study {}",
                    u.member, u.round, u.study
                )))
                }
                Some(_) => {}
            }
        }
        sqlx::query(&format!(
            "INSERT INTO {} (study, round, member, bytes, hash, signature, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
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
            "UPDATE rounds SET version = version + 1, shape = COALESCE(shape, $1) \
                 WHERE study = $2 AND round = $3 AND version = $4",
        )
        .bind(u.shape.as_deref())
        .bind(u.study)
        .bind(u.round as i64)
        .bind(round.version)
        .execute(&mut *tx)
        .await?
        .rows_affected())?;
        let entry = NewAudit {
            actor: u.member,
            action: match table {
                UploadTable::Contributions => "contribution.accepted",
                UploadTable::DecryptionShares => "decryption_share.accepted",
                UploadTable::SumDigests => "sum_digest.accepted",
                UploadTable::ShareDigests => "share_digest.accepted",
            },
            study: Some(u.study),
            round: Some(u.round),
            member: Some(u.member),
            hash: Some(hex::encode(u.hash)),
            detail: Some(format!("{} bytes", u.bytes.len())),
            ..NewAudit::default()
        };
        audit::insert(&mut tx, &entry, now).await?;
        tx.commit().await?;
        audit::log(&entry);
        Ok(true)
    }

    /// The signed uploads of a round in `table`, sorted by member.
    pub async fn uploads(
        &self,
        table: UploadTable,
        study: &str,
        round: u64,
    ) -> ApiResult<Vec<SignedUpload>> {
        let rows: Vec<(String, Vec<u8>, String)> = sqlx::query_as(&uploads_query(table))
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

    /// [`Self::uploads`] for a round whose state, read before, was `state`:
    /// once the list is final (`UploadTable::is_final`) it is read from
    /// the database once and then kept in memory.
    pub async fn listed_uploads(
        &self,
        table: UploadTable,
        study: &str,
        round: u64,
        state: RoundState,
    ) -> ApiResult<Arc<Vec<SignedUpload>>> {
        final_or_read(
            &self.final_lists.uploads,
            (table.name(), study.to_string(), round),
            table.is_final(state),
            self.uploads(table, study, round),
        )
        .await
    }

    /// How many uploads a round has in `table`: what a round's step checks
    /// after every upload before it reads the list, counted on the table's
    /// index instead of n rows (issue 16).
    pub async fn upload_count(
        &self,
        table: UploadTable,
        study: &str,
        round: u64,
    ) -> ApiResult<usize> {
        let n: i64 = sqlx::query_scalar(&format!(
            "SELECT COUNT(*) FROM {} WHERE study = $1 AND round = $2",
            table.name()
        ))
        .bind(study)
        .bind(round as i64)
        .fetch_one(&self.read)
        .await?;
        Ok(n as usize)
    }

    /// The digests of a round in `table` (sum or share digests) for a round
    /// whose state, read before, was `state`, sorted by member. A digest
    /// list is complete once every entry of the list it digests (the
    /// contributions, or the decryption shares) has its digest, and that
    /// list is final: each maker sends one digest, only of its own listed
    /// upload, so a complete list can no longer change; it is then read
    /// once and kept in memory (every member reads it, issue 16). Returns
    /// the rows and whether the list is complete.
    pub async fn listed_digests(
        &self,
        table: UploadTable,
        study: &str,
        round: u64,
        state: RoundState,
    ) -> ApiResult<(Arc<Vec<DigestRow>>, bool)> {
        let key = (table.name(), study.to_string(), round);
        if let Some(rows) = cached(&self.final_lists.digests, &key) {
            return Ok((rows, true));
        }
        let rows = Arc::new(self.uploads_with_bytes(table, study, round).await?);
        let digested = match table {
            UploadTable::SumDigests => Some(UploadTable::Contributions),
            UploadTable::ShareDigests => Some(UploadTable::DecryptionShares),
            _ => None,
        };
        if let Some(base) = digested.filter(|b| b.is_final(state)) {
            let listed = self.listed_uploads(base, study, round, state).await?;
            let complete = rows.len() == listed.len()
                && rows.iter().zip(listed.iter()).all(|(d, u)| d.0 == u.member);
            if complete {
                keep(&self.final_lists.digests, key, rows.clone());
                return Ok((rows, true));
            }
        }
        Ok((rows, false))
    }

    /// The uploads of a round in `table` with their bytes and signatures,
    /// sorted by member (for small objects such as sum digests).
    pub async fn uploads_with_bytes(
        &self,
        table: UploadTable,
        study: &str,
        round: u64,
    ) -> ApiResult<Vec<DigestRow>> {
        Ok(sqlx::query_as(&format!(
            "SELECT member, bytes, signature FROM {} WHERE study = $1 AND round = $2 ORDER BY member",
            table.name()
        ))
        .bind(study)
        .bind(round as i64)
        .fetch_all(&self.read)
        .await?)
    }

    /// The hash of one upload, if it exists.
    pub async fn upload_hash(
        &self,
        table: UploadTable,
        study: &str,
        round: u64,
        member: &str,
    ) -> ApiResult<Option<[u8; 32]>> {
        let hash: Option<Vec<u8>> = sqlx::query_scalar(&format!(
            "SELECT hash FROM {} WHERE study = $1 AND round = $2 AND member = $3",
            table.name()
        ))
        .bind(study)
        .bind(round as i64)
        .bind(member)
        .fetch_optional(&self.read)
        .await?;
        Ok(hash32(hash))
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
            "SELECT bytes FROM {} WHERE study = $1 AND round = $2 AND member = $3",
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
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A list is cached only once its round takes no more of its uploads.
    #[test]
    fn a_list_is_final_only_once_its_round_takes_no_more_uploads() {
        use RoundState::*;
        let tables = [
            UploadTable::Contributions,
            UploadTable::DecryptionShares,
            UploadTable::SumDigests,
            UploadTable::ShareDigests,
        ];
        for table in tables {
            assert!(!table.is_final(Committing), "{table:?}");
            assert!(!table.is_final(table.accepting()), "{table:?}");
        }
        assert!(!UploadTable::DecryptionShares.is_final(Collecting));
        for state in [Decrypting, Done, Failed] {
            assert!(UploadTable::Contributions.is_final(state), "{state:?}");
        }
        for state in [Done, Failed] {
            assert!(UploadTable::DecryptionShares.is_final(state), "{state:?}");
        }
        // Digests are taken late (after the round moved on): never final.
        for state in [Decrypting, Done, Failed] {
            assert!(!UploadTable::SumDigests.is_final(state));
            assert!(!UploadTable::ShareDigests.is_final(state));
        }
    }
}
