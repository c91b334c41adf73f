//! The queries of ceremonies: creation, members and their commitments and
//! public-key shares, completion and failure, threshold dealings and the
//! members' verdicts on them.

use super::audit::{self, NewAudit};
use super::{cached, cas, hash32, keep, Store};
use crate::problem::{ApiError, ApiResult};
use fedhe_api::CeremonyPhase;
use sqlx::Row;
use std::collections::HashMap;

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
    /// The administrator's ed25519 public key, hex (none for ceremonies made
    /// before study specs were signed).
    pub admin_key: Option<String>,
    /// T of a t-of-n ceremony; none for n-of-n.
    pub threshold: Option<u32>,
}

/// A member's verdict on the Shamir shares it received, as stored.
#[derive(Clone, Debug)]
pub struct VerdictRow {
    /// The member that judged.
    pub member: String,
    /// Whether every share verified.
    pub accepted: bool,
    /// The dealer at fault, when refused.
    pub dealer: Option<String>,
    /// What failed, when refused.
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

/// The two slots of a ceremony member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CeremonySlot {
    /// The committed hash of the public-key share.
    Commitment,
    /// The revealed public-key share.
    Share,
}

/// A stored phase; anything unknown reads as failed.
fn parse_phase(s: &str) -> CeremonyPhase {
    CeremonyPhase::parse(s).unwrap_or(CeremonyPhase::Failed)
}

impl Store {
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
        admin_key: &str,
        threshold: Option<u32>,
    ) -> ApiResult<bool> {
        let threshold = threshold.map(i64::from);
        let mut tx = self.begin_write().await?;
        // Insert first: of two replicas creating the same ceremony at once,
        // the second waits on the key and then inserts nothing, and compares.
        let inserted = sqlx::query(
            "INSERT INTO ceremonies (id, parameter_set, allow_insecure, phase, version, created_at, deadline_at, crs_seed, admin_key, threshold) \
             VALUES ($1, $2, $3, 'committing', 1, $4, $5, $6, $7, $8) ON CONFLICT (id) DO NOTHING",
        )
        .bind(id)
        .bind(parameter_set)
        .bind(i64::from(allow_insecure))
        .bind(now)
        .bind(deadline_at)
        .bind(&crs_seed[..])
        .bind(admin_key)
        .bind(threshold)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if inserted == 0 {
            let row = sqlx::query(
                "SELECT parameter_set, crs_seed, admin_key, threshold FROM ceremonies WHERE id = $1",
            )
            .bind(id)
            .fetch_one(&mut *tx)
            .await?;
            let same_set = row.try_get::<String, _>("parameter_set")? == parameter_set
                && row.try_get::<Option<String>, _>("admin_key")?.as_deref() == Some(admin_key)
                && row.try_get::<Option<i64>, _>("threshold")? == threshold;
            let same_seed = row.try_get::<Vec<u8>, _>("crs_seed")? == crs_seed;
            let keys: Vec<(String, Vec<u8>)> = sqlx::query_as(
                "SELECT member, identity_key FROM ceremony_members WHERE ceremony = $1 ORDER BY member",
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
        for (member, key) in members {
            sqlx::query(
                "INSERT INTO ceremony_members (ceremony, member, identity_key) VALUES ($1, $2, $3)",
            )
            .bind(id)
            .bind(member)
            .bind(&key[..])
            .execute(&mut *tx)
            .await?;
        }
        let names: Vec<&str> = members.iter().map(|(m, _)| m.as_str()).collect();
        let entry = NewAudit {
            actor: "admin",
            action: "ceremony.created",
            ceremony: Some(id),
            hash: Some(hex::encode(crs_seed)),
            detail: Some(format!(
                "parameter set {parameter_set}{}; members {}{}",
                if allow_insecure {
                    " (insecure allowed)"
                } else {
                    ""
                },
                names.join(", "),
                threshold
                    .map(|t| format!("; threshold {t}"))
                    .unwrap_or_default()
            )),
            ..NewAudit::default()
        };
        audit::insert(&mut tx, &entry, now).await?;
        tx.commit().await?;
        audit::log(&entry);
        Ok(true)
    }

    /// A ceremony.
    pub async fn ceremony(&self, id: &str) -> ApiResult<CeremonyRow> {
        let row = sqlx::query(
            "SELECT id, parameter_set, allow_insecure, phase, version, deadline_at, crs_seed, transcript, reason, admin_key, threshold \
             FROM ceremonies WHERE id = $1",
        )
        .bind(id)
        .fetch_optional(&self.read)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no ceremony {id}")))?;
        Ok(CeremonyRow {
            id: row.try_get("id")?,
            parameter_set: row.try_get("parameter_set")?,
            allow_insecure: row.try_get::<i64, _>("allow_insecure")? != 0,
            phase: parse_phase(&row.try_get::<String, _>("phase")?),
            version: row.try_get("version")?,
            deadline_at: row.try_get("deadline_at")?,
            crs_seed: row.try_get("crs_seed")?,
            transcript: row.try_get("transcript")?,
            reason: row.try_get("reason")?,
            admin_key: row.try_get("admin_key")?,
            threshold: row
                .try_get::<Option<i64>, _>("threshold")?
                .map(|t| t as u32),
        })
    }

    /// A ceremony's phase and how many members have dealt (one light query,
    /// for long polls).
    pub async fn ceremony_progress(&self, id: &str) -> ApiResult<(CeremonyPhase, usize)> {
        let (phase, dealt): (String, i64) = sqlx::query_as(
            "SELECT phase, (SELECT COUNT(*) FROM threshold_dealings WHERE ceremony = $1) FROM ceremonies WHERE id = $1",
        )
        .bind(id)
        .fetch_optional(&self.read)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no ceremony {id}")))?;
        Ok((parse_phase(&phase), dealt as usize))
    }

    /// The members of a ceremony, sorted.
    pub async fn members(&self, ceremony: &str) -> ApiResult<Vec<MemberRow>> {
        let rows = sqlx::query(
            "SELECT member, identity_key, share_hash, commitment_signature, CASE WHEN share IS NULL THEN 0 ELSE 1 END AS revealed \
             FROM ceremony_members WHERE ceremony = $1 ORDER BY member",
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
                    revealed: row.try_get::<i64, _>("revealed")? != 0,
                })
            })
            .collect()
    }

    /// The members of `ceremony` by id, sorted: their names only, read from
    /// the key's index.
    pub async fn member_names(&self, ceremony: &str) -> ApiResult<Vec<String>> {
        Ok(sqlx::query_scalar(
            "SELECT member FROM ceremony_members WHERE ceremony = $1 ORDER BY member",
        )
        .bind(ceremony)
        .fetch_all(&self.read)
        .await?)
    }

    /// The members of `ceremony` and their identity keys, read once per
    /// process ([`super::FinalLists::member_keys`]); empty if there is no
    /// such ceremony (not kept: it may be created later).
    async fn member_keys(
        &self,
        ceremony: &str,
    ) -> ApiResult<std::sync::Arc<HashMap<String, [u8; 32]>>> {
        let kept = &self.final_lists.member_keys;
        if let Some(keys) = cached(kept, &ceremony.to_string()) {
            return Ok(keys);
        }
        let rows: Vec<(String, Vec<u8>)> =
            sqlx::query_as("SELECT member, identity_key FROM ceremony_members WHERE ceremony = $1")
                .bind(ceremony)
                .fetch_all(&self.read)
                .await?;
        let keys = rows
            .into_iter()
            .map(|(member, key)| {
                let key: [u8; 32] = key
                    .try_into()
                    .map_err(|_| ApiError::internal("a stored identity key is malformed"))?;
                Ok((member, key))
            })
            .collect::<ApiResult<HashMap<_, _>>>()?;
        let keys = std::sync::Arc::new(keys);
        if !keys.is_empty() {
            keep(kept, ceremony.to_string(), keys.clone());
        }
        Ok(keys)
    }

    /// How many members `ceremony` has (0 if there is no such ceremony), for
    /// the requests that need only the number (a round's encoding, its
    /// completeness), not n rows (issue 16).
    pub async fn member_count(&self, ceremony: &str) -> ApiResult<usize> {
        Ok(self.member_keys(ceremony).await?.len())
    }

    /// The identity key of `member` in `ceremony`, if it is one.
    pub async fn member_key(&self, ceremony: &str, member: &str) -> ApiResult<Option<[u8; 32]>> {
        Ok(self.member_keys(ceremony).await?.get(member).copied())
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
        let mut tx = self.begin_write().await?;
        let (phase, version): (String, i64) = sqlx::query_as(&format!(
            "SELECT phase, version FROM ceremonies WHERE id = $1{}",
            self.for_update()
        ))
        .bind(ceremony)
        .fetch_one(&mut *tx)
        .await?;
        let existing: Option<Vec<u8>> = sqlx::query_scalar(&format!(
            "SELECT {column} FROM ceremony_members WHERE ceremony = $1 AND member = $2"
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
                "UPDATE ceremony_members SET share_hash = $1, commitment_signature = $2 WHERE ceremony = $3 AND member = $4"
            }
            CeremonySlot::Share => {
                "UPDATE ceremony_members SET share = $1, commitment_signature = COALESCE(commitment_signature, $2) WHERE ceremony = $3 AND member = $4"
            }
        };
        sqlx::query(update)
            .bind(value)
            .bind(signature)
            .bind(ceremony)
            .bind(member)
            .execute(&mut *tx)
            .await?;
        let entry = NewAudit {
            actor: member,
            action: match slot {
                CeremonySlot::Commitment => "ceremony.commitment_accepted",
                CeremonySlot::Share => "ceremony.share_accepted",
            },
            ceremony: Some(ceremony),
            member: Some(member),
            hash: Some(match slot {
                CeremonySlot::Commitment => hex::encode(value),
                CeremonySlot::Share => blake3::hash(value).to_hex().to_string(),
            }),
            ..NewAudit::default()
        };
        let missing: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM ceremony_members WHERE ceremony = $1 AND share_hash IS NULL",
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
            "UPDATE ceremonies SET phase = $1, version = version + 1 WHERE id = $2 AND version = $3",
        )
        .bind(next)
        .bind(ceremony)
        .bind(version)
        .execute(&mut *tx)
        .await?
        .rows_affected())?;
        // Last: the ceremony's audit head is locked after the rows the
        // change locks (fedhe_server::store::audit::insert).
        audit::insert(&mut tx, &entry, fedhe_api::signing::now_ms()).await?;
        tx.commit().await?;
        audit::log(&entry);
        Ok(true)
    }

    /// One member's revealed share.
    pub async fn public_key_share(&self, ceremony: &str, member: &str) -> ApiResult<Vec<u8>> {
        let share: Option<Option<Vec<u8>>> = sqlx::query_scalar(
            "SELECT share FROM ceremony_members WHERE ceremony = $1 AND member = $2",
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
            sqlx::query_scalar("SELECT collective_key FROM ceremonies WHERE id = $1")
                .bind(ceremony)
                .fetch_optional(&self.read)
                .await?;
        key.flatten().ok_or_else(|| {
            ApiError::not_found(format!("ceremony {ceremony} has no collective key yet"))
        })
    }

    /// Compare-and-swap: `revealing` at `version` → `complete` (or, for a
    /// threshold ceremony, `dealing`), with the key and transcript.
    /// `Ok(false)` if the version moved.
    pub async fn complete_ceremony(
        &self,
        ceremony: &str,
        version: i64,
        collective_key: &[u8],
        transcript: &str,
        threshold: bool,
    ) -> ApiResult<bool> {
        let next = if threshold { "dealing" } else { "complete" };
        let update = sqlx::query(
            "UPDATE ceremonies SET phase = $1, version = version + 1, collective_key = $2, transcript = $3 \
             WHERE id = $4 AND version = $5 AND phase = 'revealing'",
        )
        .bind(next)
        .bind(collective_key)
        .bind(transcript)
        .bind(ceremony)
        .bind(version);
        let entry = NewAudit {
            actor: "server",
            action: if threshold {
                "ceremony.key_complete"
            } else {
                "ceremony.complete"
            },
            ceremony: Some(ceremony),
            hash: Some(blake3::hash(collective_key).to_hex().to_string()),
            detail: Some("hash: the collective public key".into()),
            ..NewAudit::default()
        };
        self.transition(update, &entry).await
    }

    /// Compare-and-swap: a ceremony at `version` → `failed`.
    pub async fn fail_ceremony(
        &self,
        ceremony: &str,
        version: i64,
        reason: &str,
    ) -> ApiResult<bool> {
        let update = sqlx::query(
            "UPDATE ceremonies SET phase = 'failed', version = version + 1, reason = $1 \
             WHERE id = $2 AND version = $3 AND phase IN ('committing', 'revealing', 'dealing')",
        )
        .bind(reason)
        .bind(ceremony)
        .bind(version);
        let entry = NewAudit {
            actor: "server",
            action: "ceremony.failed",
            ceremony: Some(ceremony),
            detail: Some(reason.to_string()),
            ..NewAudit::default()
        };
        self.transition(update, &entry).await
    }

    /// A ceremony's phase, read with the row locked for the rest of `tx` (so
    /// an upload and a phase change cannot interleave).
    async fn locked_ceremony_phase(
        &self,
        tx: &mut sqlx::Transaction<'static, sqlx::Any>,
        ceremony: &str,
    ) -> ApiResult<String> {
        Ok(sqlx::query_scalar(&format!(
            "SELECT phase FROM ceremonies WHERE id = $1{}",
            self.for_update()
        ))
        .bind(ceremony)
        .fetch_one(&mut **tx)
        .await?)
    }

    /// Stores a member's threshold dealing while the ceremony is `dealing`:
    /// the whole upload's `hash` and `signature`, its `commitment` and each
    /// recipient's slice (`slices`: recipient, wire bytes), in one
    /// transaction (idempotent: the same hash again is `Ok(false)`, another
    /// 409).
    pub async fn put_dealing(
        &self,
        ceremony: &str,
        member: &str,
        hash: &[u8; 32],
        commitment: &[u8],
        slices: &[(String, Vec<u8>)],
        signature: &str,
    ) -> ApiResult<bool> {
        let hash = blake3::Hash::from_bytes(*hash);
        let mut tx = self.begin_write().await?;
        let phase = self.locked_ceremony_phase(&mut tx, ceremony).await?;
        let existing: Option<Vec<u8>> = sqlx::query_scalar(
            "SELECT hash FROM threshold_dealings WHERE ceremony = $1 AND member = $2",
        )
        .bind(ceremony)
        .bind(member)
        .fetch_optional(&mut *tx)
        .await?;
        if let Some(existing) = existing {
            return if existing == hash.as_bytes() {
                Ok(false)
            } else {
                Err(ApiError::conflict(format!(
                    "{member} already sent a different dealing in ceremony {ceremony}"
                )))
            };
        }
        if phase != "dealing" {
            return Err(ApiError::conflict(format!(
                "ceremony {ceremony} is {phase}, not accepting a dealing"
            )));
        }
        let now = fedhe_api::signing::now_ms();
        sqlx::query(
            "INSERT INTO threshold_dealings (ceremony, member, bytes, hash, signature, created_at) VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(ceremony)
        .bind(member)
        .bind(commitment)
        .bind(&hash.as_bytes()[..])
        .bind(signature)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        for (recipient, bytes) in slices {
            sqlx::query(
                "INSERT INTO threshold_dealing_slices (ceremony, dealer, recipient, bytes) VALUES ($1, $2, $3, $4)",
            )
            .bind(ceremony)
            .bind(member)
            .bind(recipient)
            .bind(bytes)
            .execute(&mut *tx)
            .await?;
        }
        let entry = NewAudit {
            actor: member,
            action: "ceremony.dealing_accepted",
            ceremony: Some(ceremony),
            member: Some(member),
            hash: Some(hash.to_hex().to_string()),
            ..NewAudit::default()
        };
        audit::insert(&mut tx, &entry, now).await?;
        tx.commit().await?;
        audit::log(&entry);
        Ok(true)
    }

    /// Stores a ceremony's result-key dealing (`slices`: recipient, sealed
    /// key bytes) by `dealer`, in one transaction, unless the ceremony
    /// failed (idempotent: the same dealing hash again is `Ok(false)`, another
    /// 409).
    pub async fn put_result_keys(
        &self,
        ceremony: &str,
        dealer: &str,
        hash: &[u8; 32],
        slices: &[(String, Vec<u8>)],
    ) -> ApiResult<bool> {
        let hash = blake3::Hash::from_bytes(*hash);
        let mut tx = self.begin_write().await?;
        let phase = self.locked_ceremony_phase(&mut tx, ceremony).await?;
        let existing: Option<Vec<u8>> =
            sqlx::query_scalar("SELECT dealing_hash FROM result_keys WHERE ceremony = $1 LIMIT 1")
                .bind(ceremony)
                .fetch_optional(&mut *tx)
                .await?;
        if let Some(existing) = existing {
            return if existing == hash.as_bytes() {
                Ok(false)
            } else {
                Err(ApiError::conflict(format!(
                    "the result key of ceremony {ceremony} was already dealt"
                )))
            };
        }
        if phase == "failed" {
            return Err(ApiError::conflict(format!(
                "ceremony {ceremony} failed; it takes no result key"
            )));
        }
        let now = fedhe_api::signing::now_ms();
        for (recipient, bytes) in slices {
            sqlx::query(
                "INSERT INTO result_keys (ceremony, recipient, dealer, bytes, dealing_hash, created_at) VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .bind(ceremony)
            .bind(recipient)
            .bind(dealer)
            .bind(bytes)
            .bind(&hash.as_bytes()[..])
            .bind(now)
            .execute(&mut *tx)
            .await?;
        }
        let entry = NewAudit {
            actor: dealer,
            action: "ceremony.result_key_dealt",
            ceremony: Some(ceremony),
            member: Some(dealer),
            hash: Some(hash.to_hex().to_string()),
            ..NewAudit::default()
        };
        audit::insert(&mut tx, &entry, now).await?;
        tx.commit().await?;
        audit::log(&entry);
        Ok(true)
    }

    /// The result key sealed to `recipient` (wire bytes).
    pub async fn result_key(&self, ceremony: &str, recipient: &str) -> ApiResult<Vec<u8>> {
        let bytes: Option<Vec<u8>> = sqlx::query_scalar(
            "SELECT bytes FROM result_keys WHERE ceremony = $1 AND recipient = $2",
        )
        .bind(ceremony)
        .bind(recipient)
        .fetch_optional(&self.read)
        .await?;
        bytes.ok_or_else(|| {
            ApiError::not_found(format!(
                "no result key has been dealt to {recipient} in ceremony {ceremony}"
            ))
        })
    }

    /// The BLAKE3 hash of `member`'s stored dealing, if it sent one.
    pub async fn dealing_hash(&self, ceremony: &str, member: &str) -> ApiResult<Option<Vec<u8>>> {
        Ok(sqlx::query_scalar(
            "SELECT hash FROM threshold_dealings WHERE ceremony = $1 AND member = $2",
        )
        .bind(ceremony)
        .bind(member)
        .fetch_optional(&self.read)
        .await?)
    }

    /// The members whose dealing is stored, with its upload signature, sorted.
    pub async fn dealings(&self, ceremony: &str) -> ApiResult<Vec<(String, String)>> {
        Ok(sqlx::query_as(
            "SELECT member, signature FROM threshold_dealings WHERE ceremony = $1 ORDER BY member",
        )
        .bind(ceremony)
        .fetch_all(&self.read)
        .await?)
    }

    /// A dealer's stored dealing as `recipient` receives it: the commitment
    /// with only the share sealed to `recipient` (wire bytes).
    pub async fn dealing_slice(
        &self,
        ceremony: &str,
        dealer: &str,
        recipient: &str,
    ) -> ApiResult<Vec<u8>> {
        let bytes: Option<Vec<u8>> = sqlx::query_scalar(
            "SELECT bytes FROM threshold_dealing_slices WHERE ceremony = $1 AND dealer = $2 AND recipient = $3",
        )
        .bind(ceremony)
        .bind(dealer)
        .bind(recipient)
        .fetch_optional(&self.read)
        .await?;
        bytes.ok_or_else(|| {
            ApiError::not_found(format!(
                "no dealing of {dealer} for {recipient} in ceremony {ceremony}"
            ))
        })
    }

    /// Stores a member's verdict on the shares it received while the
    /// ceremony is `dealing` (idempotent as [`Self::put_dealing`]).
    pub async fn put_dealing_verdict(
        &self,
        ceremony: &str,
        verdict: &VerdictRow,
    ) -> ApiResult<bool> {
        let mut tx = self.begin_write().await?;
        let phase = self.locked_ceremony_phase(&mut tx, ceremony).await?;
        let existing: Option<(i64, Option<String>)> = sqlx::query_as(
            "SELECT accepted, dealer FROM dealing_verdicts WHERE ceremony = $1 AND member = $2",
        )
        .bind(ceremony)
        .bind(&verdict.member)
        .fetch_optional(&mut *tx)
        .await?;
        if let Some((accepted, dealer)) = existing {
            return if (accepted != 0) == verdict.accepted && dealer == verdict.dealer {
                Ok(false)
            } else {
                Err(ApiError::conflict(format!(
                    "{} already gave a different verdict in ceremony {ceremony}",
                    verdict.member
                )))
            };
        }
        if phase != "dealing" {
            return Err(ApiError::conflict(format!(
                "ceremony {ceremony} is {phase}, not accepting a dealing verdict"
            )));
        }
        let now = fedhe_api::signing::now_ms();
        sqlx::query(
            "INSERT INTO dealing_verdicts (ceremony, member, accepted, dealer, reason, created_at) VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(ceremony)
        .bind(&verdict.member)
        .bind(i64::from(verdict.accepted))
        .bind(verdict.dealer.as_deref())
        .bind(verdict.reason.as_deref())
        .bind(now)
        .execute(&mut *tx)
        .await?;
        let detail = match (&verdict.dealer, &verdict.reason) {
            _ if verdict.accepted => "every Shamir share verified".to_string(),
            (Some(d), r) => format!("refused the dealing of {d}: {}", r.as_deref().unwrap_or("")),
            (None, r) => format!("refused: {}", r.as_deref().unwrap_or("")),
        };
        let entry = NewAudit {
            actor: &verdict.member,
            action: "ceremony.dealing_verdict",
            ceremony: Some(ceremony),
            member: Some(&verdict.member),
            detail: Some(detail),
            ..NewAudit::default()
        };
        audit::insert(&mut tx, &entry, now).await?;
        tx.commit().await?;
        audit::log(&entry);
        Ok(true)
    }

    /// Every verdict on a ceremony's dealings, sorted by member.
    pub async fn dealing_verdicts(&self, ceremony: &str) -> ApiResult<Vec<VerdictRow>> {
        let rows: Vec<(String, i64, Option<String>, Option<String>)> = sqlx::query_as(
            "SELECT member, accepted, dealer, reason FROM dealing_verdicts WHERE ceremony = $1 ORDER BY member",
        )
        .bind(ceremony)
        .fetch_all(&self.read)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(member, accepted, dealer, reason)| VerdictRow {
                member,
                accepted: accepted != 0,
                dealer,
                reason,
            })
            .collect())
    }

    /// Compare-and-swap: `dealing` at `version` → `complete` (every member
    /// confirmed its Shamir shares).
    pub async fn finish_dealing(&self, ceremony: &str, version: i64) -> ApiResult<bool> {
        let update = sqlx::query(
            "UPDATE ceremonies SET phase = 'complete', version = version + 1 \
             WHERE id = $1 AND version = $2 AND phase = 'dealing'",
        )
        .bind(ceremony)
        .bind(version);
        let entry = NewAudit {
            actor: "server",
            action: "ceremony.complete",
            ceremony: Some(ceremony),
            detail: Some("every member confirmed its Shamir shares".into()),
            ..NewAudit::default()
        };
        self.transition(update, &entry).await
    }

    /// Every ceremony with its phase, by id.
    pub async fn ceremony_list(&self) -> ApiResult<Vec<(String, String)>> {
        Ok(
            sqlx::query_as("SELECT id, phase FROM ceremonies ORDER BY id")
                .fetch_all(&self.read)
                .await?,
        )
    }

    /// Ceremonies not yet complete or failed.
    pub async fn open_ceremonies(&self) -> ApiResult<Vec<String>> {
        Ok(sqlx::query_scalar(
            "SELECT id FROM ceremonies WHERE phase IN ('committing', 'revealing', 'dealing') ORDER BY id",
        )
        .fetch_all(&self.read)
        .await?)
    }
}
