//! The schema migrations of each backend, embedded in the binary.
//!
//! `sqlx::migrate!` would embed them too, but its procedural macro builds
//! sqlx's PostgreSQL and SQLite drivers, tokio and regex a second time for
//! the compiler (about 3 minutes of CPU in CI's clippy step). Here each file
//! is `include_str!`ed and turned into a [`Migration`] exactly as sqlx's own
//! resolver does (`sqlx::migrate::resolve_blocking`, which the macro calls):
//! version and description from the file name, the type from its suffix,
//! the checksum from the SQL. The test below checks the list against that
//! resolver on the migration folders, so a file added there and not here
//! fails it.

use sqlx::migrate::{Migration, MigrationType, Migrator};
use std::borrow::Cow;
use std::sync::LazyLock;

/// `(file name, SQL)` of every migration in `migrations/<dir>`, in order.
macro_rules! embedded {
    ($dir:literal: $($file:literal),* $(,)?) => {
        &[$((
            $file,
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations/", $dir, "/", $file)),
        )),*]
    };
}

/// The migrations of both backends: the two folders hold files of the same
/// names (each backend's own SQL), so one list embeds both.
macro_rules! backends {
    ($($file:literal),* $(,)?) => {
        const SQLITE_FILES: &[(&str, &str)] = embedded!("sqlite": $($file),*);
        const POSTGRES_FILES: &[(&str, &str)] = embedded!("postgres": $($file),*);
    };
}

backends!(
    "20260101000001_init.sql",
    "20261123000001_commit_reveal.sql",
    "20261123000002_audit.sql",
    "20261124000001_threshold.sql",
    "20261124000002_dealing_slices.sql",
    "20261124000003_sum_digests.sql",
    "20261124000004_round_entries_hash.sql",
    "20261124000005_share_digests.sql",
    "20261124000006_list_indexes.sql",
    "20261128000001_c1_commitments.sql",
    "20261202000001_result_keys.sql",
    "20261202000002_audit_chain.sql",
);

/// The SQLite migrations.
pub(super) static SQLITE: LazyLock<Migrator> = LazyLock::new(|| migrator(SQLITE_FILES));

/// The PostgreSQL migrations.
pub(super) static POSTGRES: LazyLock<Migrator> = LazyLock::new(|| migrator(POSTGRES_FILES));

/// A migrator with sqlx's defaults (locking, no missing migrations allowed)
/// over `files`.
fn migrator(files: &'static [(&'static str, &'static str)]) -> Migrator {
    let mut migrations: Vec<Migration> = files
        .iter()
        .map(|&(name, sql)| migration(name, sql))
        .collect();
    migrations.sort_by_key(|m| m.version);
    Migrator {
        migrations: Cow::Owned(migrations),
        ..Migrator::DEFAULT
    }
}

/// The migration of file `name` holding `sql`, as `resolve_blocking` makes
/// it: `<version>_<description>.sql`, underscores of the description read as
/// spaces, no transaction when the SQL starts with `-- no-transaction`.
fn migration(name: &'static str, sql: &'static str) -> Migration {
    // The names are the constants above, checked by the test against the
    // folders: a malformed one cannot reach a build that passed it.
    let (version, rest) = name
        .split_once('_')
        .expect("a migration file is named <version>_<description>.sql");
    let version: i64 = version
        .parse()
        .expect("a migration file name starts with an integer version");
    let migration_type = MigrationType::from_filename(rest);
    let description = rest
        .trim_end_matches(migration_type.suffix())
        .replace('_', " ");
    Migration::new(
        version,
        Cow::Owned(description),
        migration_type,
        Cow::Borrowed(sql),
        sql.starts_with("-- no-transaction"),
    )
}

#[cfg(test)]
mod tests {
    use super::{POSTGRES, SQLITE};
    use sqlx::migrate::{resolve_blocking, Migrator};
    use std::path::Path;

    /// Each embedded migrator holds what sqlx's own resolver (the one
    /// `sqlx::migrate!` runs at compile time) reads from its folder: every
    /// file, with the same version, description, type, SQL, checksum and
    /// transaction mode, in the same order.
    #[test]
    fn the_embedded_migrations_are_what_sqlx_resolves_from_the_folders() {
        for (dir, migrator) in [("sqlite", &*SQLITE), ("postgres", &*POSTGRES)] {
            let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("migrations")
                .join(dir);
            let want = resolve_blocking(&path).expect("the migration folder resolves");
            assert!(!want.is_empty(), "{dir}: no migrations found");
            let key = |m: &sqlx::migrate::Migration| {
                (
                    m.version,
                    m.description.to_string(),
                    m.migration_type,
                    m.sql.to_string(),
                    m.checksum.to_vec(),
                    m.no_tx,
                )
            };
            let got: Vec<_> = migrator.iter().map(key).collect();
            let want: Vec<_> = want.iter().map(|(m, _)| key(m)).collect();
            assert_eq!(got.len(), want.len(), "{dir}: a file is not embedded");
            assert_eq!(got, want, "{dir}");
            let defaults = Migrator::DEFAULT;
            assert_eq!(
                (migrator.ignore_missing, migrator.locking, migrator.no_tx),
                (defaults.ignore_missing, defaults.locking, defaults.no_tx)
            );
        }
    }
}
