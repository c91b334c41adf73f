//! The queries of request nonces (replay protection).

use super::{Backend, Store};
use crate::problem::ApiResult;
use sqlx::Executor;
use std::sync::atomic::Ordering;

/// How often [`Store::record_nonce`] prunes the expired nonces: pruning on
/// every request was a second write (and, with rows to delete, a second
/// commit on disk) per request on SQLite's single writer.
const NONCE_PRUNE_INTERVAL_MS: i64 = 1000;

impl Store {
    /// Records a request nonce of an identity; `Ok(false)` if it was seen
    /// before (a replay). Prunes nonces older than `prune_before`.
    pub async fn record_nonce(
        &self,
        identity_key: &[u8; 32],
        nonce: &str,
        now: i64,
        prune_before: i64,
    ) -> ApiResult<bool> {
        // Two statements, not one transaction: pruning is housekeeping, and
        // the insert alone decides (a concurrent insert of the same nonce by
        // another replica waits on the key and then inserts nothing). So it
        // runs at most once a second per process: a nonce kept a little
        // longer only makes a replay's refusal more certain, and a request
        // that old is refused on its timestamp anyway.
        let last = self.last_prune.load(Ordering::Relaxed);
        if now.saturating_sub(last) >= NONCE_PRUNE_INTERVAL_MS
            && self
                .last_prune
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            sqlx::query("DELETE FROM nonces WHERE seen_at < $1")
                .bind(prune_before)
                .execute(&self.write)
                .await?;
        }
        // A nonce only makes a replay within the clock-skew window
        // detectable, and a request's bytes are under TLS: its insert needs
        // no commit on disk of its own (it was one fsync per request, GETs
        // included, serialised on SQLite's single writer: 0.3 ms each here,
        // about 5,000 per round at 100 members). It still survives a crash
        // of the process (the WAL is written before the commit returns);
        // only an operating-system crash or power loss in the next moments
        // could forget it, letting a request sent just before be replayed
        // within two minutes by someone who holds its bytes. The insert runs
        // on a task of its own, so a dropped request cannot leave the
        // connection at the lower setting.
        let (pool, backend) = (self.write.clone(), self.backend);
        let (key, nonce) = (identity_key.to_vec(), nonce.to_string());
        let inserted = tokio::spawn(async move {
            let insert = sqlx::query(
                "INSERT INTO nonces (identity_key, nonce, seen_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
            )
            .bind(key)
            .bind(nonce)
            .bind(now);
            match backend {
                Backend::Sqlite => {
                    let mut conn = pool.acquire().await?;
                    conn.execute("PRAGMA synchronous = NORMAL").await?;
                    let inserted = insert.execute(&mut *conn).await;
                    // Back to a commit on disk before the connection serves
                    // anything else; if that fails, the connection is closed.
                    match conn.execute("PRAGMA synchronous = FULL").await {
                        Ok(_) => inserted,
                        Err(e) => {
                            let _ = conn.close().await;
                            Err(e)
                        }
                    }
                }
                Backend::Postgres => {
                    // SET LOCAL ends with the transaction, however it ends.
                    let mut tx = pool.begin().await?;
                    tx.execute("SET LOCAL synchronous_commit = off").await?;
                    let inserted = insert.execute(&mut *tx).await?;
                    tx.commit().await?;
                    Ok(inserted)
                }
            }
        })
        .await
        .map_err(|e| sqlx::Error::Protocol(format!("the task recording a nonce failed: {e}")))??
        .rows_affected();
        Ok(inserted == 1)
    }
}
