//! The queries of request nonces (replay protection).

use super::{Backend, Store};
use crate::problem::ApiResult;
use sqlx::{Executor, Row};
use std::collections::HashSet;
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
        // within two minutes by someone who holds its bytes.
        //
        // Nonces are inserted in batches (group commit): every request,
        // GETs included, records one, and each insert took SQLite's single
        // writer for three statements, behind every upload's transaction
        // (issue 16: a 1,000-member round spent 3.5 s of its 33 s there).
        // A request queues its nonce; if no batch is running it starts one,
        // on a task of its own (so a dropped request cannot leave the writer
        // at the lower setting), which inserts everything queued meanwhile
        // in one statement, and again until the queue is empty.
        let (reply, answer) = tokio::sync::oneshot::channel();
        let start = {
            let mut q = self.nonce_queue.lock();
            q.pending.push(PendingNonce {
                key: *identity_key,
                nonce: nonce.to_string(),
                now,
                reply,
            });
            !std::mem::replace(&mut q.flushing, true)
        };
        if start {
            let store = self.clone();
            tokio::spawn(async move { store.flush_nonces().await });
        }
        match answer.await {
            Ok(Ok(inserted)) => Ok(inserted),
            Ok(Err(e)) => Err(sqlx::Error::Protocol(e).into()),
            Err(_) => Err(sqlx::Error::Protocol(
                "the task recording nonces ended without an answer".into(),
            )
            .into()),
        }
    }

    /// Inserts the queued nonces, a batch at a time, until none is left;
    /// answers each request whether its nonce was new.
    async fn flush_nonces(&self) {
        loop {
            let batch: Vec<PendingNonce> = {
                let mut q = self.nonce_queue.lock();
                if q.pending.is_empty() {
                    q.flushing = false;
                    return;
                }
                let take = q.pending.len().min(NONCE_BATCH);
                q.pending.drain(..take).collect()
            };
            match self.insert_nonces(&batch).await {
                Ok(new) => {
                    for (p, new) in batch.into_iter().zip(new) {
                        let _ = p.reply.send(Ok(new));
                    }
                }
                Err(e) => {
                    let e = format!("recording request nonces: {e}");
                    for p in batch {
                        let _ = p.reply.send(Err(e.clone()));
                    }
                }
            }
        }
    }

    /// One statement for the batch; which of its nonces were new (a nonce
    /// seen before, or twice in the batch, is new at most once).
    async fn insert_nonces(&self, batch: &[PendingNonce]) -> Result<Vec<bool>, sqlx::Error> {
        let rows = (0..batch.len())
            .map(|i| format!("(${}, ${}, ${})", 3 * i + 1, 3 * i + 2, 3 * i + 3))
            .collect::<Vec<_>>()
            .join(", ");
        let sql = format!(
            "INSERT INTO nonces (identity_key, nonce, seen_at) VALUES {rows} ON CONFLICT DO NOTHING RETURNING identity_key, nonce"
        );
        let mut insert = sqlx::query(&sql);
        for p in batch {
            insert = insert
                .bind(p.key.to_vec())
                .bind(p.nonce.clone())
                .bind(p.now);
        }
        let inserted = match self.backend {
            Backend::Sqlite => {
                let mut conn = self.write.acquire().await?;
                conn.execute("PRAGMA synchronous = NORMAL").await?;
                let inserted = insert.fetch_all(&mut *conn).await;
                // Back to a commit on disk before the connection serves
                // anything else; if that fails, the connection is closed.
                match conn.execute("PRAGMA synchronous = FULL").await {
                    Ok(_) => inserted?,
                    Err(e) => {
                        let _ = conn.close().await;
                        return Err(e);
                    }
                }
            }
            Backend::Postgres => {
                // SET LOCAL ends with the transaction, however it ends.
                let mut tx = self.write.begin().await?;
                tx.execute("SET LOCAL synchronous_commit = off").await?;
                let inserted = insert.fetch_all(&mut *tx).await?;
                tx.commit().await?;
                inserted
            }
        };
        let mut new: HashSet<(Vec<u8>, String)> = inserted
            .iter()
            .map(|r| Ok((r.try_get::<Vec<u8>, _>(0)?, r.try_get::<String, _>(1)?)))
            .collect::<Result<_, sqlx::Error>>()?;
        Ok(batch
            .iter()
            .map(|p| new.remove(&(p.key.to_vec(), p.nonce.clone())))
            .collect())
    }
}

/// At most this many nonces in one insert (three parameters each).
const NONCE_BATCH: usize = 256;

/// A request's nonce waiting for the next batch, and where its answer goes.
struct PendingNonce {
    key: [u8; 32],
    nonce: String,
    now: i64,
    reply: tokio::sync::oneshot::Sender<Result<bool, String>>,
}

/// The nonces waiting to be inserted, and whether a task is inserting.
#[derive(Default)]
pub(super) struct NonceQueue(std::sync::Mutex<QueueState>);

#[derive(Default)]
struct QueueState {
    pending: Vec<PendingNonce>,
    flushing: bool,
}

impl NonceQueue {
    fn lock(&self) -> std::sync::MutexGuard<'_, QueueState> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl std::fmt::Debug for NonceQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NonceQueue").finish_non_exhaustive()
    }
}
