//! The queries of studies.

use super::{cached, keep, Store};
use crate::problem::{ApiError, ApiResult};

/// A study as stored.
#[derive(Clone, Debug)]
pub struct StudyRow {
    /// The specification as created (JSON).
    pub spec: fedhe_api::StudySpec,
    /// The administrator's signature of the spec's hash, hex.
    pub admin_signature: Option<String>,
}

impl Store {
    /// Inserts a study (idempotent as [`Self::create_ceremony`]).
    pub async fn create_study(
        &self,
        spec: &fedhe_api::StudySpec,
        admin_signature: &str,
        now: i64,
    ) -> ApiResult<bool> {
        let text = serde_json::to_string(spec)
            .map_err(|e| ApiError::bad_request(format!("study spec: {e}")))?;
        // Insert first, as in `create_ceremony`: a concurrent creation of the
        // same study waits on the key, inserts nothing and compares.
        let inserted = sqlx::query(
            "INSERT INTO studies (id, ceremony, spec, min_contributors, round_timeout_ms, decrypt_timeout_ms, created_at, admin_signature) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (id) DO NOTHING",
        )
        .bind(&spec.id)
        .bind(&spec.ceremony)
        .bind(&text)
        .bind(i64::from(spec.min_contributors))
        .bind(ms(spec.round_timeout_secs))
        .bind(ms(spec.decrypt_timeout_secs))
        .bind(now)
        .bind(admin_signature)
        .execute(&self.write)
        .await?
        .rows_affected();
        if inserted == 1 {
            return Ok(true);
        }
        let existing: String = sqlx::query_scalar("SELECT spec FROM studies WHERE id = $1")
            .bind(&spec.id)
            .fetch_one(&self.write)
            .await?;
        if existing == text {
            Ok(false)
        } else {
            Err(ApiError::conflict(format!(
                "study {} exists with a different specification",
                spec.id
            )))
        }
    }

    /// A study (read once per process: a study's spec never changes,
    /// `FinalLists::studies`).
    pub async fn study(&self, id: &str) -> ApiResult<StudyRow> {
        let kept = &self.final_lists.studies;
        if let Some(row) = cached(kept, &id.to_string()) {
            return Ok((*row).clone());
        }
        let (spec, admin_signature): (String, Option<String>) =
            sqlx::query_as("SELECT spec, admin_signature FROM studies WHERE id = $1")
                .bind(id)
                .fetch_optional(&self.read)
                .await?
                .ok_or_else(|| ApiError::not_found(format!("no study {id}")))?;
        let row = StudyRow {
            spec: serde_json::from_str(&spec)
                .map_err(|_| ApiError::internal("a stored study is malformed"))?,
            admin_signature,
        };
        keep(kept, id.to_string(), std::sync::Arc::new(row.clone()));
        Ok(row)
    }

    /// Every study with its ceremony, by id.
    pub async fn study_list(&self) -> ApiResult<Vec<(String, String)>> {
        Ok(
            sqlx::query_as("SELECT id, ceremony FROM studies ORDER BY id")
                .fetch_all(&self.read)
                .await?,
        )
    }
}

fn ms(secs: u64) -> i64 {
    (secs.min(i64::MAX as u64 / 1000) * 1000) as i64
}
