//! The durable store (DESIGN.md §5), on sqlx's `Any` driver so one code path
//! serves both backends:
//!
//! - **SQLite** (`sqlite://PATH`, the default): a file in WAL mode with
//!   `synchronous=FULL`, so `fedhe serve` needs nothing installed (uploads
//!   share their fsyncs, `wal_sync`: group commit). Writes go
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
//!
//! The queries are grouped by resource, each group an `impl Store` block in
//! its own file: `ceremonies` (ceremonies, members, threshold dealings and
//! verdicts), `studies`, `rounds` (rounds, their commitments, decrypting
//! sets and state changes), `uploads` (contributions, decryption shares,
//! sum and share digests), `nonces`, and [`audit`]; `wal_sync` makes
//! uploads' commits durable in groups. This module opens the
//! store and keeps what they share: transactions, compare-and-swap, the
//! cache of final lists.

pub mod audit;
mod ceremonies;
mod migrations;
mod nonces;
mod rounds;
mod studies;
mod uploads;
mod wal_sync;

pub use ceremonies::{CeremonyRow, MemberRow, VerdictRow};
pub use rounds::RoundRow;
pub use studies::StudyRow;
pub use uploads::{Upload, UploadTable};

use crate::problem::{ApiError, ApiResult};
use audit::NewAudit;
use fedhe_api::{CommittedContribution, SignedUpload};
use sqlx::any::AnyPoolOptions;
use sqlx::{AnyPool, Connection, Executor};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

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
    /// Request nonces waiting for the next batch insert
    /// ([`Store::record_nonce`]).
    nonce_queue: Arc<nonces::NonceQueue>,
    /// Lists and rows that can no longer change.
    final_lists: Arc<FinalLists>,
    /// SQLite: the WAL uploads' commits wait for ([`Store::durable`]).
    wal_sync: Option<Arc<wal_sync::WalSync>>,
    /// PostgreSQL: the URL a `LISTEN` connection opens
    /// ([`Store::listen_for_changes`]).
    listen_url: Option<Arc<ListenUrl>>,
}

/// A PostgreSQL URL kept for `LISTEN`: its `Debug` hides the password.
struct ListenUrl(zeroize::Zeroizing<String>);

impl std::fmt::Debug for ListenUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&redact(&self.0))
    }
}

/// The PostgreSQL channel on which replicas announce state changes.
const CHANGES_CHANNEL: &str = "fedhe_changes";

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
    /// Digest lists once complete: a digest for every entry of the final
    /// list it digests ([`Store::listed_digests`]).
    digests: Kept<(&'static str, String, u64), Vec<uploads::DigestRow>>,
    commitments: Kept<(String, u64), Vec<CommittedContribution>>,
    /// t-of-n decrypting sets holding T members: no claim is added to a
    /// full set ([`Store::claim_decryption`]).
    decrypting_sets: Kept<(String, u64), Vec<String>>,
    /// Each ceremony's members and identity keys: inserted with the
    /// ceremony in one transaction and never changed, so a read that finds
    /// any finds them all. Every signed request looks up its member's key
    /// and many need the count: two of the dozen queries a request made,
    /// each a round trip to SQLite's connection thread (issue 16).
    member_keys: Kept<String, HashMap<String, [u8; 32]>>,
    /// Studies as created: a spec is never replaced (a second create with
    /// another spec is refused). Nearly every round request reads one.
    studies: Kept<String, studies::StudyRow>,
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

fn hash32(bytes: Option<Vec<u8>>) -> Option<[u8; 32]> {
    bytes.and_then(|b| b.try_into().ok())
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
        let mut probe = loop {
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
        // SQLite: the WAL that uploads' commits wait for (group commit), at
        // the path SQLite opened, and the flag by which the write pool's
        // release hook knows the writer was set below FULL for one. Without
        // WAL mode nothing is grouped (every commit stays at FULL).
        let lowered = Arc::new(AtomicBool::new(false));
        let wal_sync = match backend {
            Backend::Sqlite => {
                let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
                    .fetch_one(&mut probe)
                    .await
                    .map_err(connect_error)?;
                let file: String =
                    sqlx::query_scalar("SELECT file FROM pragma_database_list WHERE name = 'main'")
                        .fetch_one(&mut probe)
                        .await
                        .map_err(connect_error)?;
                (mode.eq_ignore_ascii_case("wal") && !file.is_empty()).then(|| {
                    Arc::new(wal_sync::WalSync::new(
                        std::path::Path::new(&file),
                        Arc::clone(&lowered),
                    ))
                })
            }
            Backend::Postgres => None,
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
            // A connection that comes back still inside a transaction is
            // closed (which rolls the transaction back), not reused. sqlx 0.8
            // leaves one so when a request is dropped just after its `BEGIN`
            // was acknowledged (launchbadge/sqlx#3932, fixed in 0.9): on
            // SQLite's single write connection every later `BEGIN` then
            // failed ("attempted to call begin_with at non-zero transaction
            // depth") and the server could write nothing more.
            //
            // A connection set below FULL for an upload ([`Store::acquire_grouped`])
            // is put back to FULL before it serves anything else; if that
            // fails, it is closed.
            .after_release(move |conn, _| {
                let clean = <<sqlx::Any as sqlx::Database>::TransactionManager as sqlx::TransactionManager>::get_transaction_depth(conn) == 0;
                if !clean {
                    tracing::warn!("a store connection came back inside a transaction; closing it");
                }
                let lowered = lowered.swap(false, Ordering::SeqCst);
                Box::pin(async move {
                    if clean && lowered {
                        return Ok(conn.execute("PRAGMA synchronous = FULL").await.is_ok());
                    }
                    Ok(clean)
                })
            })
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
            Backend::Sqlite => &*migrations::SQLITE,
            Backend::Postgres => &*migrations::POSTGRES,
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
            nonce_queue: Arc::default(),
            final_lists: Arc::default(),
            wal_sync,
            listen_url: (backend == Backend::Postgres)
                .then(|| Arc::new(ListenUrl(zeroize::Zeroizing::new(url.to_string())))),
        })
    }

    /// PostgreSQL: tells the other replicas a state changed (`NOTIFY`, sent
    /// in the background; a replica that misses it looks again within the
    /// long polls' fallback interval). SQLite: nothing (one process).
    pub fn notify_replicas(&self) {
        if self.listen_url.is_none() {
            return;
        }
        let read = self.read.clone();
        tokio::spawn(async move {
            let sent = sqlx::query("SELECT pg_notify($1, '')")
                .bind(CHANGES_CHANNEL)
                .execute(&read)
                .await;
            if let Err(e) = sent {
                tracing::warn!(error = %e, "NOTIFY of a state change failed");
            }
        });
    }

    /// PostgreSQL: wakes `changed` on every other replica's state change
    /// (`LISTEN`), for as long as the returned future runs (reconnecting
    /// after a lost connection). SQLite: returns at once.
    pub async fn listen_for_changes(&self, changed: &tokio::sync::Notify) {
        let Some(url) = self.listen_url.clone() else {
            return;
        };
        loop {
            let listening = async {
                let mut listener = sqlx::postgres::PgListener::connect(&url.0).await?;
                listener.listen(CHANGES_CHANNEL).await?;
                loop {
                    listener.recv().await?;
                    changed.notify_waiters();
                }
                #[allow(unreachable_code)]
                Ok::<(), sqlx::Error>(())
            };
            if let Err(e) = listening.await {
                tracing::warn!(error = %e, "LISTEN for other replicas' changes failed; retrying in 1 s");
            }
            // Whatever changed meanwhile: every waiter looks again.
            changed.notify_waiters();
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
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

    /// The writer's connection for one upload's transaction, whose commit
    /// [`Self::durable`] then makes durable together with others' (group
    /// commit, `wal_sync`): on SQLite it is set to `synchronous = NORMAL`
    /// (the commit writes its WAL frames without an fsync of its own) until
    /// it is released. Begin the transaction with [`Self::begin_on`].
    async fn acquire_grouped(&self) -> Result<sqlx::pool::PoolConnection<sqlx::Any>, sqlx::Error> {
        let mut conn = self.write.acquire().await?;
        if let Some(sync) = &self.wal_sync {
            sync.lower();
            conn.execute("PRAGMA synchronous = NORMAL").await?;
        }
        Ok(conn)
    }

    /// [`Self::begin_write`] on a connection of [`Self::acquire_grouped`].
    async fn begin_on<'c>(
        &self,
        conn: &'c mut sqlx::pool::PoolConnection<sqlx::Any>,
    ) -> Result<sqlx::Transaction<'c, sqlx::Any>, sqlx::Error> {
        match self.backend {
            Backend::Sqlite => conn.begin_with("BEGIN IMMEDIATE").await,
            Backend::Postgres => conn.begin().await,
        }
    }

    /// Returns once every transaction committed before the call on a
    /// connection of [`Self::acquire_grouped`] is on disk: on SQLite after
    /// an fsync of the WAL that began after the call (shared with the
    /// commits that wait meanwhile); PostgreSQL's commits are durable when
    /// they return (`synchronous_commit = on`).
    async fn durable(&self) -> Result<(), sqlx::Error> {
        match &self.wal_sync {
            Some(sync) => sync.wait().await.map_err(sqlx::Error::Io),
            None => Ok(()),
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
        // A failed fsync of the WAL is final (`wal_sync`): not ready.
        if let Some(e) = self.wal_sync.as_ref().and_then(|w| w.failure()) {
            return Err(sqlx::Error::Io(std::io::Error::other(e)));
        }
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
            audit::insert(&mut tx, entry, fedhe_api::signing::now_ms()).await?;
        }
        tx.commit().await?;
        if moved {
            audit::log(entry);
        }
        Ok(moved)
    }
}

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

/// The settings of a new connection.
///
/// SQLite: WAL (a property of the file, set by the writer), a commit on disk
/// before it returns (`synchronous = FULL`, per connection; only a request
/// nonce is recorded without one, `Store::record_nonce`), foreign keys
/// enforced, and a wait rather than an error while another connection holds
/// a lock.
///
/// PostgreSQL: `synchronous_commit = on`, so a server-wide `off` cannot make
/// a commit (and its 2xx) precede the write reaching the disk.
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

#[cfg(test)]
mod tests {
    use super::uploads::uploads_query;
    use super::*;

    /// Polls `fut` up to `polls` times, yielding between polls, and drops
    /// it (finished or not): a request its client hung up on at that point.
    async fn poll_then_drop<F: std::future::Future>(fut: F, polls: usize) {
        let mut fut = Box::pin(fut);
        for _ in 0..polls {
            let poll = std::future::poll_fn(|cx| {
                std::task::Poll::Ready(std::future::Future::poll(fut.as_mut(), cx).is_ready())
            });
            if poll.await {
                break;
            }
            tokio::task::yield_now().await;
        }
    }

    /// What a request dropped just after its `BEGIN` was acknowledged leaves
    /// behind with sqlx 0.8 (launchbadge/sqlx#3932): the pool's connection
    /// at transaction depth 1 with no transaction object to end it. The
    /// store must not reuse it: the next write begins on a fresh connection.
    #[tokio::test]
    async fn a_connection_returned_inside_a_transaction_is_not_reused() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&format!("sqlite://{}/fedhe.db", dir.path().display()))
            .await
            .unwrap();
        {
            let mut conn = store.write.acquire().await.unwrap();
            <<sqlx::Any as sqlx::Database>::TransactionManager as sqlx::TransactionManager>::begin(
                &mut conn,
                Some("BEGIN IMMEDIATE".into()),
            )
            .await
            .unwrap();
            assert_eq!(
                <<sqlx::Any as sqlx::Database>::TransactionManager as sqlx::TransactionManager>::get_transaction_depth(&conn),
                1
            );
        }
        for _ in 0..2 {
            let tx = store.begin_write().await.expect("a write can begin");
            tx.commit().await.unwrap();
        }
    }

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

    /// A ceremony's member keys and a study are read once and then served
    /// from memory (they never change); a miss is not kept, so what is
    /// created after it is found.
    #[tokio::test]
    async fn member_keys_and_studies_are_read_once_and_a_miss_is_not_kept() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("fedhe.db").display());
        let store = Store::open(&url).await.unwrap();
        assert_eq!(store.member_key("c", "m1").await.unwrap(), None);
        assert_eq!(store.member_count("c").await.unwrap(), 0);
        assert!(store.study("s").await.is_err());
        let members = vec![("m1".to_string(), [1u8; 32]), ("m2".to_string(), [2u8; 32])];
        store
            .create_ceremony(
                "c",
                "toy-n1024",
                true,
                0,
                i64::MAX / 2,
                &[7; 32],
                &members,
                &"ab".repeat(32),
                None,
            )
            .await
            .unwrap();
        let spec = fedhe_api::StudySpec {
            id: "s".into(),
            ceremony: "c".into(),
            algorithm: "sum".into(),
            config: serde_json::json!({}),
            min_contributors: 2,
            round_timeout_secs: 60,
            decrypt_timeout_secs: 60,
            bound: 1.0,
            precision: Default::default(),
            round_cap: None,
        };
        store
            .create_study(&spec, &"cd".repeat(64), 0)
            .await
            .unwrap();
        assert_eq!(store.member_key("c", "m1").await.unwrap(), Some([1; 32]));
        assert_eq!(store.member_key("c", "m3").await.unwrap(), None);
        assert_eq!(store.member_count("c").await.unwrap(), 2);
        assert_eq!(store.study("s").await.unwrap().spec.min_contributors, 2);
        // Changed behind the server's back (nothing in it does): the kept
        // values are served, without a query.
        sqlx::query("UPDATE ceremony_members SET identity_key = $1 WHERE member = 'm1'")
            .bind(&[9u8; 32][..])
            .execute(&store.write)
            .await
            .unwrap();
        sqlx::query("UPDATE studies SET spec = 'not json'")
            .execute(&store.write)
            .await
            .unwrap();
        assert_eq!(store.member_key("c", "m1").await.unwrap(), Some([1; 32]));
        assert_eq!(store.study("s").await.unwrap().spec.min_contributors, 2);
        store.close().await;
    }

    /// Nonces recorded at once go in batches (group commit): of 200
    /// concurrent requests, two for each of 100 nonces, exactly one of each
    /// pair is new, duplicates in one batch included, and a later replay of
    /// any of them is refused; the table holds each nonce once.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_nonces_are_recorded_in_batches_and_each_is_new_once() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("fedhe.db").display());
        let store = Store::open(&url).await.unwrap();
        let key = [5u8; 32];
        let tasks: Vec<_> = (0..200)
            .map(|i| {
                let store = store.clone();
                tokio::spawn(async move {
                    let nonce = format!("{:032x}", i % 100);
                    (
                        i % 100,
                        store.record_nonce(&key, &nonce, 10, 0).await.unwrap(),
                    )
                })
            })
            .collect();
        let mut new = vec![0; 100];
        for t in tasks {
            let (n, fresh) = t.await.unwrap();
            new[n] += usize::from(fresh);
        }
        assert!(new.iter().all(|&k| k == 1), "{new:?}");
        for n in [0, 57, 99] {
            let nonce = format!("{n:032x}");
            assert!(!store.record_nonce(&key, &nonce, 11, 0).await.unwrap());
        }
        let stored: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM nonces")
            .fetch_one(&store.read)
            .await
            .unwrap();
        assert_eq!(stored, 100);
        store.close().await;
    }

    /// An upload's transaction (group commit, `wal_sync`) runs with the
    /// writer at NORMAL and is acknowledged after a WAL fsync shared with
    /// others; the writer is back at FULL after it, also when the request is
    /// dropped at any point, and what was acknowledged is in the file.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn grouped_writes_run_at_normal_and_leave_the_writer_at_full() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("fedhe.db").display());
        let store = Store::open(&url).await.unwrap();
        let write = |n: usize| {
            let store = store.clone();
            async move {
                let mut conn = store.acquire_grouped().await?;
                let level: i64 = sqlx::query_scalar("PRAGMA synchronous")
                    .fetch_one(&mut *conn)
                    .await?;
                let mut tx = store.begin_on(&mut conn).await?;
                sqlx::query("INSERT INTO nonces (identity_key, nonce, seen_at) VALUES ($1, $2, 0)")
                    .bind(vec![5u8; 32])
                    .bind(format!("{n:032}"))
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                drop(conn);
                store.durable().await?;
                Ok::<i64, sqlx::Error>(level)
            }
        };
        let tasks: Vec<_> = (0..32).map(|n| tokio::spawn(write(n))).collect();
        for t in tasks {
            // 1 = NORMAL inside an upload's transaction.
            assert_eq!(t.await.unwrap().unwrap(), 1);
        }
        let writer_level = || async {
            sqlx::query_scalar::<_, i64>("PRAGMA synchronous")
                .fetch_one(&store.write)
                .await
                .unwrap()
        };
        assert_eq!(writer_level().await, 2, "the writer was left below FULL");
        for polls in 1..40 {
            poll_then_drop(write(100 + polls), polls).await;
            assert_eq!(
                writer_level().await,
                2,
                "the writer was left below FULL by a write dropped after {polls} polls"
            );
        }
        store.close().await;
        let store = Store::open(&url).await.unwrap();
        let kept: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM nonces WHERE nonce < $1")
            .bind(format!("{:032}", 32))
            .fetch_one(&store.read)
            .await
            .unwrap();
        assert_eq!(kept, 32);
        store.close().await;
    }

    /// The WAL that uploads wait for is the one SQLite writes, also when the
    /// database is opened through a symbolic link (SQLite names the WAL
    /// after the link's target, not after the URL's path).
    #[tokio::test]
    async fn the_synced_wal_is_the_one_sqlite_writes() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real/fedhe.db");
        Store::open(&format!("sqlite://{}", real.display()))
            .await
            .unwrap()
            .close()
            .await;
        let alias = dir.path().join("alias.db");
        std::os::unix::fs::symlink(&real, &alias).unwrap();
        let store = Store::open(&format!("sqlite://{}", alias.display()))
            .await
            .unwrap();
        let sync = store.wal_sync.clone().expect("WAL mode");
        assert!(
            std::fs::metadata(sync.wal_path()).is_ok(),
            "{:?}",
            sync.wal_path()
        );
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
        // A nonce is recorded without a commit on disk of its own, and the
        // writer is back at FULL after it, also when a nonce is a replay and
        // when the request recording it is dropped at any point.
        let key = [3u8; 32];
        assert!(store
            .record_nonce(&key, &"a".repeat(32), 1, 0)
            .await
            .unwrap());
        assert!(!store
            .record_nonce(&key, &"a".repeat(32), 2, 0)
            .await
            .unwrap());
        for polls in 1..40 {
            let nonce = format!("{polls:032}");
            poll_then_drop(store.record_nonce(&key, &nonce, 3, 0), polls).await;
        }
        let sync: i64 = sqlx::query_scalar("PRAGMA synchronous")
            .fetch_one(&store.write)
            .await
            .unwrap();
        assert_eq!(sync, 2, "the writer was left below FULL");
        store.close().await;
    }
}
