//! The durable store (DESIGN.md §5), on sqlx's `Any` driver so one code path
//! serves both backends:
//!
//! - **SQLite** (`sqlite://PATH`, the default): a file in WAL mode with
//!   `synchronous=FULL`, so `fedhe serve` needs nothing installed. Writes go
//!   through a pool of one connection (SQLite has one writer at a time;
//!   queueing in the pool avoids `SQLITE_BUSY` on lock upgrades); reads use a
//!   separate read-only pool and see the last committed state.
//! - **PostgreSQL** (`postgres://…`), for several stateless replicas behind a
//!   load balancer: one pool for reads and writes. Everything replicas must
//!   agree on is in the database: each transaction that reads a state before
//!   changing it locks that row first (`SELECT … FOR UPDATE`), so two replicas
//!   serialise on it instead of failing a compare-and-swap; idempotent uploads
//!   rest on primary keys; nonces for replay protection are rows.
//!
//! Every write is one transaction, so a crash never leaves half an upload or
//! half a state change behind, and a request is answered 2xx only after its
//! transaction committed. State changes are compare-and-swap on a `version`
//! column; deadlines are columns, not timers.
//!
//! Queries are written once for both: `$1`-style placeholders (PostgreSQL
//! needs them and SQLite accepts them), integer columns as 64-bit integers
//! (`BIGINT` / `INTEGER`), bytes as `BYTEA` / `BLOB`, and booleans stored and
//! read as integers (the `Any` driver cannot decode an SQLite integer as a
//! `bool`). Each backend has its own migrations (`migrations/sqlite`,
//! `migrations/postgres`) with the same tables.

pub mod audit;

use crate::problem::{ApiError, ApiResult};
use audit::NewAudit;
use fedhe_api::{CeremonyPhase, CommittedContribution, RoundState, SignedUpload};
use sqlx::any::{AnyPoolOptions, AnyRow};
use sqlx::{AnyPool, Connection, Executor, Row};
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The SQLite migrations, embedded in the binary.
static SQLITE_MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");
/// The PostgreSQL migrations, embedded in the binary.
static POSTGRES_MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");

/// How long a request waits for a connection before the store is reported
/// unavailable.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(30);

/// Connections of one PostgreSQL replica (reads and writes share them).
const POSTGRES_CONNECTIONS: u32 = 8;

/// The database behind a store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// An SQLite file.
    Sqlite,
    /// A PostgreSQL server.
    Postgres,
}

impl Backend {
    /// The backend a database URL names: `sqlite://PATH` (a file, without
    /// query options: the server sets the ones it needs) or
    /// `postgres://…` / `postgresql://…`. An in-memory SQLite database is
    /// refused (reads and writes use separate connections, which would see
    /// two different databases), and so is anything else.
    pub fn of_url(url: &str) -> Result<Self, OpenError> {
        let refuse = |reason: &str| OpenError::Url {
            url: redact(url),
            reason: reason.to_string(),
        };
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            return Ok(Self::Postgres);
        }
        let Some(path) = url.strip_prefix("sqlite://") else {
            return Err(refuse(
                "expected sqlite://PATH (a file) or postgres://USER:PASSWORD@HOST:PORT/DATABASE",
            ));
        };
        if path.is_empty() || path.contains(":memory:") || path.contains("mode=memory") {
            return Err(refuse(
                "an in-memory SQLite database is not supported (reads and writes use separate connections); give a file path",
            ));
        }
        if path.contains('?') {
            return Err(refuse(
                "SQLite URL options are not supported: the server sets WAL, synchronous=FULL and the open mode itself",
            ));
        }
        Ok(Self::Sqlite)
    }

    /// Its name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Self::Sqlite => "SQLite",
            Self::Postgres => "PostgreSQL",
        }
    }
}

/// Why a store did not open. Messages name the database (its URL without a
/// password) and what failed.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The URL is refused.
    #[error("database URL {url}: {reason}")]
    Url {
        /// The URL, password removed.
        url: String,
        /// Why.
        reason: String,
    },
    /// The folder of an SQLite file could not be created.
    #[error("cannot create the folder {path} for the SQLite database: {source}")]
    Folder {
        /// The folder.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// The database did not accept a connection.
    #[error("cannot connect to the {} database {url}: {source}", .backend.name())]
    Connect {
        /// The backend.
        backend: Backend,
        /// The URL, password removed.
        url: String,
        /// The error.
        source: sqlx::Error,
    },
    /// The schema migrations failed.
    #[error("the schema migrations of the {} database {url} failed: {source}", .backend.name())]
    Migrate {
        /// The backend.
        backend: Backend,
        /// The URL, password removed.
        url: String,
        /// The error.
        source: sqlx::migrate::MigrateError,
    },
}

/// `url` with the password (if any) replaced by `***`, for messages and logs.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((user_info, host)) => match user_info.split_once(':') {
            Some((user, _password)) => format!("{scheme}://{user}:***@{host}{tail}"),
            None => url.to_string(),
        },
        None => url.to_string(),
    }
}

/// The store.
#[derive(Clone, Debug)]
pub struct Store {
    backend: Backend,
    write: AnyPool,
    read: AnyPool,
    /// When this process last pruned expired nonces (unix ms; shared by
    /// the store's clones).
    last_prune: Arc<AtomicI64>,
    /// Lists that can no longer change.
    final_lists: Arc<FinalLists>,
}

/// How often [`Store::record_nonce`] prunes the expired nonces: pruning on
/// every request was a second write (and, with rows to delete, a second
/// commit on disk) per request on SQLite's single writer.
const NONCE_PRUNE_INTERVAL_MS: i64 = 1000;

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

/// A study as stored.
#[derive(Clone, Debug)]
pub struct StudyRow {
    /// The specification as created (JSON).
    pub spec: fedhe_api::StudySpec,
    /// The administrator's signature of the spec's hash, hex.
    pub admin_signature: Option<String>,
}

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
    /// The decoded result (JSON `[f64]`).
    pub result: Option<String>,
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
    fn name(self) -> &'static str {
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
    /// final (a late digest is still taken), so they are not cached.
    fn is_final(self, state: RoundState) -> bool {
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

/// How many rounds' final lists [`FinalLists`] keeps per kind before it
/// starts over (a few hundred kB per list at 1,000 members).
const FINAL_LIST_ROUNDS: usize = 16;

/// The lists of a round that can no longer change (its commitments once
/// frozen, its contributions once aggregated, its decryption shares once
/// combined), kept in memory: every member fetches each of them, and
/// reading n rows per member made a round's list requests O(n²) row reads
/// (issue 16). Shared by the store's clones. A replica's copy cannot go
/// stale: a final list is the same in the database for every replica.
#[derive(Debug, Default)]
struct FinalLists {
    uploads: Kept<(&'static str, String, u64), Vec<SignedUpload>>,
    commitments: Kept<(String, u64), Vec<CommittedContribution>>,
    /// t-of-n decrypting sets holding T members: no claim is added to a
    /// full set ([`Store::claim_decryption`]).
    decrypting_sets: Kept<(String, u64), Vec<String>>,
}

/// Values kept by key, shared between tasks.
type Kept<K, V> = std::sync::Mutex<HashMap<K, Arc<V>>>;

/// The entry of `key` in `map`, if any.
fn cached<K: Eq + std::hash::Hash, V>(map: &Kept<K, V>, key: &K) -> Option<Arc<V>> {
    map.lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(key)
        .cloned()
}

/// `read`'s value, or, for a final one (`is_final`), the one kept under
/// `key` (read and kept the first time).
async fn final_or_read<K: Eq + std::hash::Hash, V>(
    map: &Kept<K, V>,
    key: K,
    is_final: bool,
    read: impl std::future::Future<Output = ApiResult<V>>,
) -> ApiResult<Arc<V>> {
    if !is_final {
        return Ok(Arc::new(read.await?));
    }
    if let Some(value) = cached(map, &key) {
        return Ok(value);
    }
    let value = Arc::new(read.await?);
    keep(map, key, value.clone());
    Ok(value)
}

/// Keeps `value` under `key`, emptying the map first when it holds
/// [`FINAL_LIST_ROUNDS`] entries (old rounds are rarely read again).
fn keep<K: Eq + std::hash::Hash, V>(map: &Kept<K, V>, key: K, value: Arc<V>) {
    let mut map = map.lock().unwrap_or_else(|p| p.into_inner());
    if map.len() >= FINAL_LIST_ROUNDS {
        map.clear();
    }
    map.insert(key, value);
}

/// The two slots of a ceremony member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CeremonySlot {
    /// The committed hash of the public-key share.
    Commitment,
    /// The revealed public-key share.
    Share,
}

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

/// An audit entry of the server's own about round `r` (action to fill in).
fn round_entry(r: &RoundRow) -> NewAudit<'_> {
    NewAudit {
        actor: "server",
        study: Some(&r.study),
        round: Some(r.round),
        ..NewAudit::default()
    }
}

/// A stored phase; anything unknown reads as failed.
fn parse_phase(s: &str) -> CeremonyPhase {
    CeremonyPhase::parse(s).unwrap_or(CeremonyPhase::Failed)
}

fn hash32(bytes: Option<Vec<u8>>) -> Option<[u8; 32]> {
    bytes.and_then(|b| b.try_into().ok())
}

fn round_from_row(row: &AnyRow) -> Result<RoundRow, sqlx::Error> {
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
        result: row.try_get("result")?,
        value_count: row.try_get("value_count")?,
        commitment_list_hash: row.try_get("commitment_list_hash")?,
        contribution_entries_hash: hash32(row.try_get("contribution_entries_hash")?),
        combined_hash: hash32(row.try_get("combined_hash")?),
        share_entries_hash: hash32(row.try_get("share_entries_hash")?),
    })
}

const ROUND_COLUMNS: &str = "study, round, state, version, deadline_at, reason, shape, aggregate_hash, parts, result, value_count, commitment_list_hash, contribution_entries_hash, combined_hash, share_entries_hash";

/// The query of one round's row (read on nearly every request). SQLite
/// looks it up by the primary key (a covering index over these columns is
/// not chosen for a unique lookup); the walk over the aggregate's overflow
/// pages this costs does not grow with the members.
fn round_query() -> String {
    format!("SELECT {ROUND_COLUMNS} FROM rounds WHERE study = $1 AND round = $2")
}

/// The query of a round's signed uploads in `table` (a list every member
/// fetches): on SQLite answered from the covering indexes
/// `contributions_listed` and `decryption_shares_listed` (the digest
/// tables' rows hold no large blob).
fn uploads_query(table: UploadTable) -> String {
    format!(
        "SELECT member, hash, signature FROM {} WHERE study = $1 AND round = $2 ORDER BY member",
        table.name()
    )
}

impl Store {
    /// Opens the database at `url` (see [`Backend::of_url`]), creating an
    /// SQLite file and its folder if needed, and runs the migrations. Several
    /// replicas may open one PostgreSQL database at once: the migrations take
    /// an advisory lock.
    pub async fn open(url: &str) -> Result<Self, OpenError> {
        let backend = Backend::of_url(url)?;
        sqlx::any::install_default_drivers();
        let connect_error = |source| OpenError::Connect {
            backend,
            url: redact(url),
            source,
        };
        let (write_url, read_url) = match backend {
            Backend::Sqlite => {
                let path = url.trim_start_matches("sqlite://");
                if let Some(dir) = std::path::Path::new(path).parent() {
                    if !dir.as_os_str().is_empty() {
                        std::fs::create_dir_all(dir).map_err(|source| OpenError::Folder {
                            path: dir.display().to_string(),
                            source,
                        })?;
                    }
                }
                (format!("{url}?mode=rwc"), Some(format!("{url}?mode=ro")))
            }
            Backend::Postgres => (url.to_string(), None),
        };
        // One connection first, outside any pool: a pool retries a refused
        // connection and a failing session set-up until its acquire timeout
        // and then reports only "timed out", where this reports the cause.
        // On SQLite, a replica starting while another one switches the new
        // file to WAL (an exclusive lock that no busy handler waits for) is
        // told "database is locked"; it tries again for a few seconds.
        let mut busy_retries = match backend {
            Backend::Sqlite => SQLITE_OPEN_BUSY_RETRIES,
            Backend::Postgres => 0,
        };
        let probe = loop {
            let attempt = async {
                let mut conn = sqlx::AnyConnection::connect(&write_url).await?;
                session(backend, &mut conn, true).await?;
                Ok::<_, sqlx::Error>(conn)
            };
            match attempt.await {
                Ok(conn) => break conn,
                Err(e) if busy_retries > 0 && is_sqlite_busy(&e) => {
                    busy_retries -= 1;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => return Err(connect_error(e)),
            }
        };
        let _ = probe.close().await;
        let write_connections = match backend {
            Backend::Sqlite => 1,
            Backend::Postgres => POSTGRES_CONNECTIONS,
        };
        let write = AnyPoolOptions::new()
            .max_connections(write_connections)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .after_connect(move |conn, _| Box::pin(session(backend, conn, true)))
            .connect_lazy(&write_url)
            .map_err(connect_error)?;
        let read = match read_url {
            Some(read_url) => AnyPoolOptions::new()
                .max_connections(4)
                .acquire_timeout(ACQUIRE_TIMEOUT)
                .after_connect(move |conn, _| Box::pin(session(backend, conn, false)))
                .connect_lazy(&read_url)
                .map_err(connect_error)?,
            None => write.clone(),
        };
        let migrator = match backend {
            Backend::Sqlite => &SQLITE_MIGRATOR,
            Backend::Postgres => &POSTGRES_MIGRATOR,
        };
        // PostgreSQL serialises replicas migrating at once with an advisory
        // lock; SQLite has none, so a second process migrating the same new
        // file waits for the first one's transaction, fails on the tables it
        // created, and finds the migration applied when it tries again.
        let attempts = match backend {
            Backend::Sqlite => 3,
            Backend::Postgres => 1,
        };
        let mut attempt = 0;
        while let Err(source) = migrator.run(&write).await {
            attempt += 1;
            if attempt >= attempts {
                return Err(OpenError::Migrate {
                    backend,
                    url: redact(url),
                    source,
                });
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Ok(Self {
            backend,
            write,
            read,
            last_prune: Arc::new(AtomicI64::new(i64::MIN)),
            final_lists: Arc::default(),
        })
    }

    /// The database behind this store.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Begins a transaction that reads state and then writes. On SQLite it
    /// takes the write lock at once (`BEGIN IMMEDIATE`): a deferred
    /// transaction that read before another connection (another process on
    /// the same file) committed could not upgrade to a writer, and would fail
    /// with `SQLITE_BUSY` rather than wait. PostgreSQL locks the rows it reads
    /// instead ([`Self::for_update`]).
    async fn begin_write(&self) -> Result<sqlx::Transaction<'static, sqlx::Any>, sqlx::Error> {
        match self.backend {
            Backend::Sqlite => self.write.begin_with("BEGIN IMMEDIATE").await,
            Backend::Postgres => self.write.begin().await,
        }
    }

    /// What a `SELECT` that reads a row before a transaction changes it must
    /// append: on PostgreSQL a row lock, so that concurrent transactions (of
    /// other replicas too) wait for each other instead of both acting on the
    /// same version; SQLite has a single writer and needs none (nor has the
    /// syntax).
    fn for_update(&self) -> &'static str {
        match self.backend {
            Backend::Sqlite => "",
            Backend::Postgres => " FOR UPDATE",
        }
    }

    /// Checks that the store answers (for `/readyz`).
    pub async fn ping(&self) -> Result<(), sqlx::Error> {
        sqlx::query("SELECT 1")
            .execute(&self.read)
            .await
            .map(|_| ())
    }

    /// Closes both pools (waits for running queries).
    pub async fn close(&self) {
        self.write.close().await;
        self.read.close().await;
    }

    // ---- ceremonies ----------------------------------------------------

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
        audit::insert(&mut *tx, &entry, now).await?;
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

    /// How many members `ceremony` has: one count from the key's index, for
    /// the requests that need only the number (a round's encoding, its
    /// completeness), not n rows (issue 16).
    pub async fn member_count(&self, ceremony: &str) -> ApiResult<usize> {
        let n: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM ceremony_members WHERE ceremony = $1")
                .bind(ceremony)
                .fetch_one(&self.read)
                .await?;
        Ok(n as usize)
    }

    /// The identity key of `member` in `ceremony`, if it is one.
    pub async fn member_key(&self, ceremony: &str, member: &str) -> ApiResult<Option<[u8; 32]>> {
        let key: Option<Vec<u8>> = sqlx::query_scalar(
            "SELECT identity_key FROM ceremony_members WHERE ceremony = $1 AND member = $2",
        )
        .bind(ceremony)
        .bind(member)
        .fetch_optional(&self.read)
        .await?;
        Ok(key.and_then(|k| k.try_into().ok()))
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
        audit::insert(&mut *tx, &entry, fedhe_api::signing::now_ms()).await?;
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
        tx.commit().await?;
        audit::log(&entry);
        Ok(true)
    }

    /// The revealed public-key shares, sorted by member.
    pub async fn public_key_shares(&self, ceremony: &str) -> ApiResult<Vec<(String, Vec<u8>)>> {
        Ok(sqlx::query_as(
            "SELECT member, share FROM ceremony_members WHERE ceremony = $1 AND share IS NOT NULL ORDER BY member",
        )
        .bind(ceremony)
        .fetch_all(&self.read)
        .await?)
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
        audit::insert(&mut *tx, &entry, now).await?;
        tx.commit().await?;
        audit::log(&entry);
        Ok(true)
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
        audit::insert(&mut *tx, &entry, now).await?;
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
            audit::insert(&mut *tx, &entry, now).await?;
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

    /// Every ceremony with its phase, by id.
    pub async fn ceremony_list(&self) -> ApiResult<Vec<(String, String)>> {
        Ok(
            sqlx::query_as("SELECT id, phase FROM ceremonies ORDER BY id")
                .fetch_all(&self.read)
                .await?,
        )
    }

    /// Every study with its ceremony, by id.
    pub async fn study_list(&self) -> ApiResult<Vec<(String, String)>> {
        Ok(
            sqlx::query_as("SELECT id, ceremony FROM studies ORDER BY id")
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

    // ---- studies ---------------------------------------------------------

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

    /// A study.
    pub async fn study(&self, id: &str) -> ApiResult<StudyRow> {
        let (spec, admin_signature): (String, Option<String>) =
            sqlx::query_as("SELECT spec, admin_signature FROM studies WHERE id = $1")
                .bind(id)
                .fetch_optional(&self.read)
                .await?
                .ok_or_else(|| ApiError::not_found(format!("no study {id}")))?;
        Ok(StudyRow {
            spec: serde_json::from_str(&spec)
                .map_err(|_| ApiError::internal("a stored study is malformed"))?,
            admin_signature,
        })
    }

    // ---- rounds ----------------------------------------------------------

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
            audit::insert(&mut *tx, &entry, now).await?;
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

    /// Stores an upload in its slot, in one transaction that also bumps the
    /// round's version. The same bytes again are `Ok(false)` in any state;
    /// different bytes for a filled slot are 409; a new upload is accepted only
    /// while the round is in the state that collects it.
    pub async fn put_upload(
        &self,
        table: UploadTable,
        u: &Upload<'_>,
        now: i64,
    ) -> ApiResult<bool> {
        let mut tx = self.begin_write().await?;
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
                )))
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
            )));
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
                )))
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
        audit::insert(&mut *tx, &entry, now).await?;
        tx.commit().await?;
        audit::log(&entry);
        Ok(true)
    }

    /// Stores a member's commitment to its contribution while the round is
    /// `committing` (idempotent: the same commitment again is `Ok(false)` in
    /// any state; a different one is 409).
    pub async fn put_round_commitment(
        &self,
        study: &str,
        round: u64,
        c: &CommittedContribution,
        hash: &[u8; 32],
        now: i64,
    ) -> ApiResult<bool> {
        let mut tx = self.begin_write().await?;
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
                )))
            };
        }
        if r.state != RoundState::Committing {
            return Err(ApiError::conflict(format!(
                "round {round} of study {study} is {}, not accepting commitments",
                r.state.as_str()
            )));
        }
        sqlx::query(
            "INSERT INTO round_commitments (study, round, member, hash, value_count, signature, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(study)
        .bind(round as i64)
        .bind(&c.member)
        .bind(&hash[..])
        .bind(c.values as i64)
        .bind(&c.signature)
        .bind(now)
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
        audit::insert(&mut *tx, &entry, now).await?;
        cas(sqlx::query(
            "UPDATE rounds SET version = version + 1 WHERE study = $1 AND round = $2 AND version = $3",
        )
        .bind(study)
        .bind(round as i64)
        .bind(r.version)
        .execute(&mut *tx)
        .await?
        .rows_affected())?;
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
        let columns = "SELECT member, hash, value_count, signature FROM round_commitments WHERE study = $1 AND round = $2";
        let rows: Vec<(String, Vec<u8>, i64, String)> = match values {
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
            .map(|(member, hash, values, signature)| CommittedContribution {
                member,
                hash: hex::encode(hash),
                values: values as u64,
                signature,
            })
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
    /// once the list is final ([`UploadTable::is_final`]) it is read from
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

    /// The uploads of a round in `table` with their bytes and signatures,
    /// sorted by member (for small objects such as sum digests).
    pub async fn uploads_with_bytes(
        &self,
        table: UploadTable,
        study: &str,
        round: u64,
    ) -> ApiResult<Vec<(String, Vec<u8>, String)>> {
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

    /// The aggregate of a round.
    pub async fn aggregate(&self, study: &str, round: u64) -> ApiResult<Vec<u8>> {
        self.round_bytes("aggregate", "aggregate", study, round)
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
        entries_hash: &[u8; 32],
        parts: usize,
        deadline_at: i64,
    ) -> ApiResult<bool> {
        let hash = blake3::hash(aggregate);
        let update = sqlx::query(
            "UPDATE rounds SET state = 'decrypting', version = version + 1, aggregate = $1, aggregate_hash = $2, parts = $3, deadline_at = $4, contribution_entries_hash = $5 \
             WHERE study = $6 AND round = $7 AND version = $8 AND state = 'collecting'",
        )
        .bind(aggregate)
        .bind(&hash.as_bytes()[..])
        .bind(parts as i64)
        .bind(deadline_at)
        .bind(&entries_hash[..])
        .bind(&r.study)
        .bind(r.round as i64)
        .bind(r.version);
        let entry = NewAudit {
            action: "round.aggregated",
            hash: Some(hash.to_hex().to_string()),
            detail: Some(format!("{parts} ciphertexts")),
            ..round_entry(r)
        };
        self.transition(update, &entry).await
    }

    /// Compare-and-swap: `decrypting` at `version` → `done` with the result,
    /// the combined decryption share's bytes and the entries hash of the
    /// share list combined.
    pub async fn finish(
        &self,
        r: &RoundRow,
        result: &str,
        combined: &[u8],
        share_entries_hash: &[u8; 32],
    ) -> ApiResult<bool> {
        let combined_hash = blake3::hash(combined);
        let update = sqlx::query(
            "UPDATE rounds SET state = 'done', version = version + 1, result = $1, combined = $2, combined_hash = $3, share_entries_hash = $4 \
             WHERE study = $5 AND round = $6 AND version = $7 AND state = 'decrypting'",
        )
        .bind(result)
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

    /// Runs a compare-and-swap `update` and, if it moved the row, inserts
    /// `entry` in the same transaction (and logs it after the commit).
    async fn transition<'q>(
        &self,
        update: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>,
        entry: &NewAudit<'_>,
    ) -> ApiResult<bool> {
        let mut tx = self.begin_write().await?;
        let moved = update.execute(&mut *tx).await?.rows_affected() == 1;
        if moved {
            audit::insert(&mut *tx, entry, fedhe_api::signing::now_ms()).await?;
        }
        tx.commit().await?;
        if moved {
            audit::log(entry);
        }
        Ok(moved)
    }

    // ---- nonces ----------------------------------------------------------

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

    /// Counts of rounds per state, for `/metrics`.
    pub async fn round_counts(&self) -> ApiResult<Vec<(String, i64)>> {
        Ok(
            sqlx::query_as("SELECT state, COUNT(*) FROM rounds GROUP BY state ORDER BY state")
                .fetch_all(&self.read)
                .await?,
        )
    }
}

/// The settings of a new connection.
///
/// SQLite: WAL (a property of the file, set by the writer), a commit on disk
/// before it returns (`synchronous = FULL`, per connection), foreign keys
/// enforced, and a wait rather than an error while another connection holds
/// a lock.
///
/// PostgreSQL: `synchronous_commit = on`, so a server-wide `off` cannot make
/// a commit (and its 2xx) precede the write reaching the disk.
/// How many times [`Store::open`] retries, 100 ms apart, a SQLite connection
/// refused with "database is locked".
const SQLITE_OPEN_BUSY_RETRIES: u32 = 50;

/// Whether `e` is SQLite's `SQLITE_BUSY` ("database is locked", primary code 5
/// with any extended code).
fn is_sqlite_busy(e: &sqlx::Error) -> bool {
    e.as_database_error()
        .and_then(|d| d.code())
        .and_then(|code| code.parse::<i64>().ok())
        .is_some_and(|code| code & 0xff == 5)
}

async fn session(
    backend: Backend,
    conn: &mut sqlx::AnyConnection,
    writer: bool,
) -> Result<(), sqlx::Error> {
    match backend {
        Backend::Sqlite => {
            // The busy timeout first, so the pragmas after it wait for a lock
            // another process holds instead of failing at once.
            conn.execute("PRAGMA busy_timeout = 10000").await?;
            if writer {
                conn.execute("PRAGMA journal_mode = WAL").await?;
            }
            conn.execute("PRAGMA synchronous = FULL").await?;
            conn.execute("PRAGMA foreign_keys = ON").await?;
        }
        Backend::Postgres => {
            conn.execute("SET synchronous_commit = on").await?;
        }
    }
    Ok(())
}

/// Fails a transaction whose compare-and-swap found the version moved.
fn cas(rows_affected: u64) -> ApiResult<()> {
    if rows_affected == 1 {
        Ok(())
    } else {
        Err(ApiError::conflict(
            "the resource changed concurrently; retry the request",
        ))
    }
}

fn ms(secs: u64) -> i64 {
    (secs.min(i64::MAX as u64 / 1000) * 1000) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_checked_and_passwords_redacted() {
        assert_eq!(
            Backend::of_url("sqlite://data/fedhe.db").unwrap(),
            Backend::Sqlite
        );
        for url in ["postgres://u:p@h:5432/d", "postgresql://h/d"] {
            assert_eq!(Backend::of_url(url).unwrap(), Backend::Postgres, "{url}");
        }
        for (url, needle) in [
            ("sqlite::memory:", "expected sqlite://PATH"),
            ("sqlite://:memory:", "in-memory"),
            ("sqlite://", "in-memory"),
            ("sqlite://x.db?mode=memory", "in-memory"),
            ("sqlite://x.db?cache=shared", "options are not supported"),
            ("mysql://u:secret@h/d", "expected sqlite://PATH"),
            ("data/fedhe.db", "or postgres://"),
        ] {
            let e = Backend::of_url(url).unwrap_err().to_string();
            assert!(e.contains(needle), "{url}: {e}");
            assert!(!e.contains("secret"), "{url}: {e}");
        }
        assert_eq!(
            redact("postgres://fedhe:s3cret@db:5432/fedhe?sslmode=require"),
            "postgres://fedhe:***@db:5432/fedhe?sslmode=require"
        );
        assert_eq!(
            redact("postgres://fedhe@db/fedhe"),
            "postgres://fedhe@db/fedhe"
        );
        assert_eq!(redact("sqlite://a@b/c.db"), "sqlite://a@b/c.db");
    }

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

    /// The lists every member reads come from covering indexes on SQLite.
    #[tokio::test]
    async fn sqlite_upload_lists_are_read_from_covering_indexes() {
        // Without them a list of n contributions walked n × 64 overflow
        // pages of their bytes (issue 16): the plan must not touch the rows.
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("fedhe.db").display());
        let store = Store::open(&url).await.unwrap();
        let plan = |sql: String| {
            let store = &store;
            async move {
                let rows: Vec<(i64, i64, i64, String)> =
                    sqlx::query_as(&format!("EXPLAIN QUERY PLAN {sql}"))
                        .bind("s")
                        .bind(1_i64)
                        .fetch_all(&store.read)
                        .await
                        .unwrap();
                rows.into_iter().map(|r| r.3).collect::<Vec<_>>().join("; ")
            }
        };
        for (sql, index) in [
            (
                uploads_query(UploadTable::Contributions),
                "contributions_listed",
            ),
            (
                uploads_query(UploadTable::DecryptionShares),
                "decryption_shares_listed",
            ),
        ] {
            let detail = plan(sql.clone()).await;
            assert!(
                detail.contains(&format!("USING COVERING INDEX {index}")),
                "{sql}: {detail}"
            );
            assert!(!detail.contains("TEMP B-TREE"), "{sql} sorts: {detail}");
        }
        store.close().await;
    }

    /// The durability settings are in force on every SQLite connection,
    /// readers and the writer (they are per connection, so a pool that lost
    /// its set-up would silently run with the defaults).
    #[tokio::test]
    async fn sqlite_connections_run_wal_with_synchronous_full() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("nested/fedhe.db").display());
        let store = Store::open(&url).await.unwrap();
        assert_eq!(store.backend(), Backend::Sqlite);
        for pool in [&store.write, &store.read] {
            let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
                .fetch_one(pool)
                .await
                .unwrap();
            assert_eq!(mode, "wal");
            // 2 = FULL.
            let sync: i64 = sqlx::query_scalar("PRAGMA synchronous")
                .fetch_one(pool)
                .await
                .unwrap();
            assert_eq!(sync, 2);
            let fk: i64 = sqlx::query_scalar("PRAGMA foreign_keys")
                .fetch_one(pool)
                .await
                .unwrap();
            assert_eq!(fk, 1);
        }
        // The read pool cannot write.
        assert!(sqlx::query("DELETE FROM nonces")
            .execute(&store.read)
            .await
            .is_err());
        store.close().await;
    }
}
