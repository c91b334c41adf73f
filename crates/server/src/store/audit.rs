//! The append-only audit table (migration `20261123000002_audit.sql`): rows
//! are inserted inside the transaction of the state change they record
//! ([`insert`]: ceremony creation, commitments and shares, the ceremony's
//! completion or failure, rounds opened, uploads accepted, aggregation,
//! results, failures), or right after its commit where the store makes the
//! change in a single statement (study creation, [`Store::append_audit`]);
//! the table's triggers refuse updates and deletes.
//! Every row is also logged ([`log`]).

use super::Store;
use crate::problem::ApiResult;
use fedhe_api::AuditEntry;
use sqlx::Row;

/// A state change to record. Ids and hashes only.
#[derive(Clone, Debug, Default)]
pub struct NewAudit<'a> {
    /// `admin`, a member id, or `server`.
    pub actor: &'a str,
    /// What happened (`ceremony.created`, `contribution.accepted`, …).
    pub action: &'a str,
    /// The ceremony concerned.
    pub ceremony: Option<&'a str>,
    /// The study concerned.
    pub study: Option<&'a str>,
    /// The round concerned.
    pub round: Option<u64>,
    /// The member concerned.
    pub member: Option<&'a str>,
    /// BLAKE3 (hex) of the object concerned.
    pub hash: Option<String>,
    /// More about it (never a secret or a plaintext value).
    pub detail: Option<String>,
}

/// Inserts `entry` (at `at`, unix ms) through `conn`: a transaction's
/// connection, so the row commits or rolls back with the change it records.
pub async fn insert<'c, E>(conn: E, entry: &NewAudit<'_>, at: i64) -> Result<(), sqlx::Error>
where
    E: sqlx::Executor<'c, Database = sqlx::Any>,
{
    sqlx::query(
        "INSERT INTO audit (at, actor, action, ceremony, study, round, member, hash, detail) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    )
    .bind(at)
    .bind(entry.actor)
    .bind(entry.action)
    .bind(entry.ceremony)
    .bind(entry.study)
    .bind(entry.round.map(|r| r as i64))
    .bind(entry.member)
    .bind(entry.hash.as_deref())
    .bind(entry.detail.as_deref())
    .execute(conn)
    .await?;
    Ok(())
}

/// Which rows [`Store::audit`] returns.
#[derive(Clone, Copy, Debug)]
pub enum AuditFilter<'a> {
    /// Rows of this study.
    Study(&'a str),
    /// Rows of this ceremony (its studies' rows name it too).
    Ceremony(&'a str),
}

/// Logs `entry` (the `fedhe_server::audit` target, level info) once the
/// change it records committed.
pub fn log(entry: &NewAudit<'_>) {
    tracing::info!(
        target: "fedhe_server::audit",
        action = entry.action,
        actor = entry.actor,
        ceremony = entry.ceremony,
        study = entry.study,
        round = entry.round,
        member = entry.member,
        hash = entry.hash.as_deref(),
        detail = entry.detail.as_deref(),
        "state change"
    );
}

impl Store {
    /// Logs `entry` and appends it on its own, after the change it records
    /// committed. A failure to append is logged (the change stands, and the
    /// log line holds the record); it is not the request's failure.
    pub async fn append_audit(&self, entry: &NewAudit<'_>) {
        log(entry);
        if let Err(e) = insert(&self.write, entry, fedhe_api::signing::now_ms()).await {
            tracing::error!(action = entry.action, error = %e, "the audit row could not be written");
        }
    }

    /// The rows `filter` selects with `seq > after`, oldest first, at most
    /// `limit`.
    pub async fn audit(
        &self,
        filter: AuditFilter<'_>,
        after: i64,
        limit: i64,
    ) -> ApiResult<Vec<AuditEntry>> {
        let (column, value) = match filter {
            AuditFilter::Study(s) => ("study", s),
            AuditFilter::Ceremony(c) => ("ceremony", c),
        };
        let rows = sqlx::query(&format!(
            "SELECT seq, at, actor, action, ceremony, study, round, member, hash, detail \
             FROM audit WHERE {column} = $1 AND seq > $2 ORDER BY seq LIMIT $3"
        ))
        .bind(value)
        .bind(after)
        .bind(limit)
        .fetch_all(&self.read)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(AuditEntry {
                    seq: r.try_get("seq")?,
                    at: r.try_get("at")?,
                    actor: r.try_get("actor")?,
                    action: r.try_get("action")?,
                    ceremony: r.try_get("ceremony")?,
                    study: r.try_get("study")?,
                    round: r.try_get::<Option<i64>, _>("round")?.map(|r| r as u64),
                    member: r.try_get("member")?,
                    hash: r.try_get("hash")?,
                    detail: r.try_get("detail")?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(Into::into)
    }
}
