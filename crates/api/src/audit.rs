//! The audit trail as the administrator reads it (`GET /v1/audit`).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// One state change of the server, as recorded in its append-only audit
/// table. Ids and hashes only: never a secret key, a plaintext value, a
/// passphrase or a token.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct AuditEntry {
    /// Position in the trail (increasing; gaps are possible on PostgreSQL).
    pub seq: i64,
    /// When, unix milliseconds.
    pub at: i64,
    /// Who caused it: `admin`, a member id, or `server` (deadlines,
    /// aggregation, combining).
    pub actor: String,
    /// What happened, e.g. `ceremony.created`, `contribution.accepted`,
    /// `round.aggregated`, `round.result_published`, `round.failed`.
    pub action: String,
    /// The ceremony concerned.
    pub ceremony: Option<String>,
    /// The study concerned.
    pub study: Option<String>,
    /// The round concerned.
    pub round: Option<u64>,
    /// The member concerned.
    pub member: Option<String>,
    /// BLAKE3 (hex) of the object concerned: an upload, an aggregate, a
    /// commitment, a collective key.
    pub hash: Option<String>,
    /// More about it (a failure's reason, a parameter set).
    pub detail: Option<String>,
}

/// `GET /v1/audit?study=S` (or `?ceremony=C`): the trail, oldest first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct AuditLog {
    /// The entries, by `seq`.
    pub entries: Vec<AuditEntry>,
}
