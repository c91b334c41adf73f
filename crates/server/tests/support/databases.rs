//! A database of its own for each store test, on either backend, so tests
//! run in parallel and leave nothing behind. Shared by the server's tests and
//! the CLI's process tests (`#[path]`-included).
//!
//! PostgreSQL comes from `FEDHE_TEST_POSTGRES_URL`, a role that may
//! `CREATE DATABASE`; each test creates a fresh database beside the URL's own
//! and drops it when done. Without the variable a PostgreSQL test fails (it
//! must not pass without having run) and says how to provide one.

#![allow(dead_code)]

use std::sync::atomic::{AtomicU32, Ordering};

/// The environment variable naming the PostgreSQL server of the tests.
pub const POSTGRES_URL_ENV: &str = "FEDHE_TEST_POSTGRES_URL";

/// Which database a test runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An SQLite file in a temporary folder.
    Sqlite,
    /// A fresh database on the PostgreSQL server of `FEDHE_TEST_POSTGRES_URL`.
    Postgres,
}

/// A test's database; removed when dropped.
pub enum TestDb {
    /// The folder holding the SQLite file.
    Sqlite(tempfile::TempDir),
    /// A database created for this test.
    Postgres {
        /// The URL the test's server uses.
        url: String,
        /// The URL the database was created from (and is dropped through).
        admin: String,
        /// Its name.
        name: String,
    },
}

impl TestDb {
    /// A new, empty database of `kind`.
    pub fn new(kind: Kind) -> Self {
        match kind {
            Kind::Sqlite => Self::Sqlite(tempfile::tempdir().unwrap()),
            Kind::Postgres => {
                let admin = postgres_url();
                static COUNTER: AtomicU32 = AtomicU32::new(0);
                let nanos = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .subsec_nanos();
                let name = format!(
                    "fedhe_test_{}_{}_{nanos}",
                    std::process::id(),
                    COUNTER.fetch_add(1, Ordering::Relaxed)
                );
                admin_sql(&admin, &format!("CREATE DATABASE {name}"));
                Self::Postgres {
                    url: with_database(&admin, &name),
                    admin,
                    name,
                }
            }
        }
    }

    /// The URL to give the server.
    pub fn url(&self) -> String {
        match self {
            Self::Sqlite(dir) => format!("sqlite://{}", dir.path().join("fedhe.db").display()),
            Self::Postgres { url, .. } => url.clone(),
        }
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Self::Postgres { admin, name, .. } = self {
            if !std::thread::panicking() {
                admin_sql(
                    admin,
                    &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
                );
            }
        }
    }
}

/// `FEDHE_TEST_POSTGRES_URL`, or a panic that says how to provide it.
pub fn postgres_url() -> String {
    match std::env::var(POSTGRES_URL_ENV) {
        Ok(url) if !url.is_empty() => url,
        _ => panic!(
            "{POSTGRES_URL_ENV} is not set, and the store tests run on PostgreSQL as well as SQLite. \
             Either run `source .ci/postgres && ci_postgres` in your shell before `cargo test` \
             (it installs the Debian packages if needed, starts a throwaway cluster on \
             127.0.0.1:55432 and exports the variable), or set \
             {POSTGRES_URL_ENV}=postgres://USER:PASSWORD@HOST:PORT/DATABASE for a role that may CREATE DATABASE."
        ),
    }
}

/// `url` with its database replaced by `name`.
fn with_database(url: &str, name: &str) -> String {
    let (scheme, rest) = url.split_once("://").expect("a URL with a scheme");
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let query = tail.find('?').map(|i| &tail[i..]).unwrap_or("");
    format!("{scheme}://{authority}/{name}{query}")
}

/// Runs one statement on the server of `url`, on a thread of its own (the
/// callers may be inside an async runtime, which cannot block on another).
fn admin_sql(url: &str, sql: &str) {
    let (url, sql) = (url.to_string(), sql.to_string());
    std::thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(async {
                use sqlx::{Connection, Executor};
                let mut conn = sqlx::PgConnection::connect(&url).await.unwrap_or_else(|e| {
                    panic!(
                        "cannot connect to {POSTGRES_URL_ENV} ({}): {e}",
                        fedhe_server::store::redact(&url)
                    )
                });
                // `DROP DATABASE … WITH (FORCE)` cannot terminate a backend
                // of another role, such as an autovacuum worker that has just
                // started on the fresh database: it fails with "must be a
                // member of the role whose process is being terminated".
                // Such a worker is short-lived; try again a few times.
                let mut attempt = 0;
                loop {
                    match conn.execute(sql.as_str()).await {
                        Ok(_) => break,
                        Err(e)
                            if attempt < 20
                                && e.to_string()
                                    .contains("role whose process is being terminated") =>
                        {
                            attempt += 1;
                            tokio::time::sleep(std::time::Duration::from_millis(250)).await;
                        }
                        Err(e) => panic!("{sql}: {e}"),
                    }
                }
                let _ = conn.close().await;
            })
    })
    .join()
    .unwrap();
}

/// Each scenario (a function taking a [`Kind`]) as one test per backend,
/// `sqlite::NAME` and `postgres::NAME`: `on_both_backends!(async; a, b)` for
/// `async fn`s (run on a multi-threaded runtime, so that concurrent requests
/// really overlap), `on_both_backends!(sync; a, b)` for plain ones.
macro_rules! on_both_backends {
    (async; $($name:ident),* $(,)?) => {
        on_both_backends!(@each sqlite Sqlite async $($name)*);
        on_both_backends!(@each postgres Postgres async $($name)*);
    };
    (sync; $($name:ident),* $(,)?) => {
        on_both_backends!(@each sqlite Sqlite sync $($name)*);
        on_both_backends!(@each postgres Postgres sync $($name)*);
    };
    (@each $module:ident $kind:ident async $($name:ident)*) => {
        mod $module {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $name() {
                    super::$name(super::Kind::$kind).await
                }
            )*
        }
    };
    (@each $module:ident $kind:ident sync $($name:ident)*) => {
        mod $module {
            $(
                #[test]
                fn $name() {
                    super::$name(super::Kind::$kind)
                }
            )*
        }
    };
}
