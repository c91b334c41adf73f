//! The append-only audit table (migration `20261123000002_audit.sql`): rows
//! are inserted inside the transaction of the state change they record
//! ([`insert`]: ceremony creation, commitments and shares, the ceremony's
//! completion or failure, rounds opened, uploads accepted, aggregation,
//! results, failures), or right after its commit where the store makes the
//! change in a single statement (study creation, [`Store::append_audit`]);
//! the table's triggers refuse updates and deletes. Each row joins its
//! ceremony's hash chain ([`insert`]; `fedhe_api::audit`), which members
//! verify with the heads they recorded (`fedhe audit --verify`).
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
///
/// The row joins its ceremony's hash chain (`fedhe_api::audit`): a study's
/// row names the study's ceremony, the ceremony's latest chain value is read
/// from `audit_heads` (locked `FOR UPDATE` on PostgreSQL; SQLite has one
/// writer, and every write transaction is `BEGIN IMMEDIATE`), the seq is
/// taken after that (so a ceremony's rows chain in the order of their
/// seq), and the row and the new head are written. Every action names a
/// ceremony or a study; an entry naming neither is refused. Call it as the
/// transaction's last statement: the head is then locked after every row
/// the change locks, in the same order in every transaction (no deadlock on
/// PostgreSQL), and held only until the commit.
pub async fn insert(
    conn: &mut sqlx::AnyConnection,
    entry: &NewAudit<'_>,
    at: i64,
) -> Result<(), sqlx::Error> {
    let postgres = conn.backend_name() == "PostgreSQL";
    let ceremony: String = match (entry.ceremony, entry.study) {
        (Some(c), _) => c.to_string(),
        (None, Some(s)) => sqlx::query_scalar("SELECT ceremony FROM studies WHERE id = $1")
            .bind(s)
            .fetch_optional(&mut *conn)
            .await?
            .ok_or_else(|| {
                sqlx::Error::Protocol(format!(
                    "audit entry {}: study {s:?} is not in the store",
                    entry.action
                ))
            })?,
        (None, None) => {
            return Err(sqlx::Error::Protocol(format!(
                "audit entry {} names neither a ceremony nor a study",
                entry.action
            )))
        }
    };
    let genesis = fedhe_api::audit::genesis(&ceremony);
    sqlx::query(
        "INSERT INTO audit_heads (ceremony, seq, chain) VALUES ($1, 0, $2) \
         ON CONFLICT (ceremony) DO NOTHING",
    )
    .bind(&ceremony)
    .bind(&genesis[..])
    .execute(&mut *conn)
    .await?;
    let lock = if postgres { " FOR UPDATE" } else { "" };
    let prev: Vec<u8> = sqlx::query_scalar(&format!(
        "SELECT chain FROM audit_heads WHERE ceremony = $1{lock}"
    ))
    .bind(&ceremony)
    .fetch_one(&mut *conn)
    .await?;
    let prev: [u8; 32] = prev.try_into().map_err(|_| {
        sqlx::Error::Decode(
            format!("the audit head of ceremony {ceremony:?} is not 32 bytes").into(),
        )
    })?;
    let seq: i64 = sqlx::query_scalar(if postgres {
        "SELECT nextval(pg_get_serial_sequence('audit', 'seq'))"
    } else {
        "SELECT COALESCE(MAX(seq), 0) + 1 FROM audit"
    })
    .fetch_one(&mut *conn)
    .await?;
    let row = AuditEntry {
        seq,
        at,
        actor: entry.actor.to_string(),
        action: entry.action.to_string(),
        ceremony: Some(ceremony.clone()),
        study: entry.study.map(str::to_string),
        round: entry.round,
        member: entry.member.map(str::to_string),
        hash: entry.hash.clone(),
        detail: entry.detail.clone(),
        prev: None,
        chain: None,
    };
    let chain = row.chain_value(&prev);
    sqlx::query(
        "INSERT INTO audit (seq, at, actor, action, ceremony, study, round, member, hash, detail, prev, chain) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
    )
    .bind(seq)
    .bind(at)
    .bind(entry.actor)
    .bind(entry.action)
    .bind(&ceremony)
    .bind(entry.study)
    .bind(entry.round.map(|r| r as i64))
    .bind(entry.member)
    .bind(entry.hash.as_deref())
    .bind(entry.detail.as_deref())
    .bind(&prev[..])
    .bind(&chain[..])
    .execute(&mut *conn)
    .await?;
    sqlx::query("UPDATE audit_heads SET seq = $1, chain = $2 WHERE ceremony = $3")
        .bind(seq)
        .bind(&chain[..])
        .bind(&ceremony)
        .execute(&mut *conn)
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
        let appended = async {
            let mut tx = self.begin_write().await?;
            insert(&mut tx, entry, fedhe_api::signing::now_ms()).await?;
            tx.commit().await
        };
        if let Err(e) = appended.await {
            tracing::error!(action = entry.action, error = %e, "the audit row could not be written");
        }
    }

    /// Logs `entry` and appends it on its own; a failure to append is the
    /// request's (the entry is the whole change).
    pub async fn append_audit_checked(&self, entry: &NewAudit<'_>) -> ApiResult<()> {
        let mut tx = self.begin_write().await?;
        insert(&mut tx, entry, fedhe_api::signing::now_ms()).await?;
        tx.commit().await?;
        log(entry);
        Ok(())
    }

    /// The stored chain value of the entry `seq` of `ceremony`'s trail, if
    /// there is such a chained entry.
    pub async fn audit_chain_value(&self, ceremony: &str, seq: i64) -> ApiResult<Option<[u8; 32]>> {
        let value: Option<Option<Vec<u8>>> =
            sqlx::query_scalar("SELECT chain FROM audit WHERE ceremony = $1 AND seq = $2")
                .bind(ceremony)
                .bind(seq)
                .fetch_optional(&self.read)
                .await?;
        Ok(value.flatten().and_then(|v| v.try_into().ok()))
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
            "SELECT seq, at, actor, action, ceremony, study, round, member, hash, detail, prev, chain \
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
                    prev: r.try_get::<Option<Vec<u8>>, _>("prev")?.map(hex::encode),
                    chain: r.try_get::<Option<Vec<u8>>, _>("chain")?.map(hex::encode),
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(Into::into)
    }
}
