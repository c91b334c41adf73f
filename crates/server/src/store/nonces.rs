//! The queries of request nonces (replay protection).

use super::Store;
use crate::problem::ApiResult;
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
        let inserted = sqlx::query(
            "INSERT INTO nonces (identity_key, nonce, seen_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
        )
        .bind(&identity_key[..])
        .bind(nonce)
        .bind(now)
        .execute(&self.write)
        .await?
        .rows_affected();
        Ok(inserted == 1)
    }
}
