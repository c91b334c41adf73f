//! Group commit for SQLite's uploads (issue 16).
//!
//! With `synchronous = FULL` every commit fsyncs the WAL before it returns,
//! on SQLite's single writer: a 1,000-member round makes about 5,000 upload
//! commits, each waiting for its own fsync, and ran 3-4 s faster with the
//! database on a RAM disk. An upload's transaction instead commits at
//! `synchronous = NORMAL` (its WAL frames are written, so it survives a crash
//! of the process, but not yet synced) and is acknowledged only after an
//! fsync of the WAL file that began after its commit returned
//! ([`WalSync::wait`]): one fsync serves every commit that waited meanwhile.
//! An acknowledged upload is on disk as with `FULL`, which is `NORMAL`
//! plus that fsync after each commit (SQLite's documentation of `PRAGMA
//! synchronous` in WAL mode); one fsync now covers several commits. Unlike
//! `FULL`, other requests can read such a commit before its fsync (SQLite
//! publishes it when it commits): an operating-system crash or power loss
//! in that moment can then forget a row someone was shown but whose maker
//! was not answered, which fails the round for the members that saw it
//! (their lists no longer match), as the loss of an unanswered upload
//! would. The WAL is append-only between checkpoints, so any later commit
//! at `FULL` syncs the earlier frames too.
//!
//! An fsync that fails is not tried again for later commits: Linux reports
//! a writeback error once and then marks the lost pages clean, so a later
//! fsync could succeed over a lost commit. Every later wait fails and the
//! store reports itself unready ([`WalSync::failure`]) until the process
//! restarts (PostgreSQL does the same on a failed fsync).
//!
//! The writer connection goes back to `FULL` when it is released, whatever
//! the request did (the pool's release hook reads `lowered`), so a request
//! dropped half-way cannot leave the other writes at `NORMAL`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// The WAL of one SQLite database file, and the commits waiting for it to
/// be synced.
#[derive(Debug)]
pub(super) struct WalSync {
    /// The database file (synced instead when a checkpoint removed the WAL).
    database: PathBuf,
    /// Its `-wal` file.
    wal: PathBuf,
    /// Whether the writer connection was set to `NORMAL` since it was last
    /// released (SQLite has one writer connection).
    lowered: Arc<AtomicBool>,
    /// fsyncs made so far.
    syncs: AtomicU64,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Tickets given out, one per commit that waits (in commit order).
    tickets: u64,
    /// The commits waiting, with where their answer goes.
    waiting: Vec<(u64, tokio::sync::oneshot::Sender<Result<(), String>>)>,
    /// Whether a task is syncing.
    syncing: bool,
    /// The first failed fsync: every later wait fails with it.
    failed: Option<String>,
}

impl WalSync {
    /// The WAL of the SQLite file `database` (the path SQLite itself opened,
    /// `PRAGMA database_list`: a URL's path may differ from it by
    /// normalisation, percent-encoding or a symbolic link); `lowered` is the
    /// flag the write pool's release hook reads.
    pub(super) fn new(database: &Path, lowered: Arc<AtomicBool>) -> Self {
        let mut wal = database.as_os_str().to_owned();
        wal.push("-wal");
        Self {
            database: database.to_path_buf(),
            wal: PathBuf::from(wal),
            lowered,
            syncs: AtomicU64::new(0),
            state: Mutex::default(),
        }
    }

    /// Notes that the writer connection is about to be set to `NORMAL`
    /// (before it is, so that a request dropped in between still has it
    /// put back).
    pub(super) fn lower(&self) {
        self.lowered.store(true, Ordering::SeqCst);
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The WAL file this syncs.
    #[cfg(test)]
    pub(super) fn wal_path(&self) -> &Path {
        &self.wal
    }

    /// Why the WAL can no longer be synced, if an fsync failed.
    pub(super) fn failure(&self) -> Option<String> {
        self.lock().failed.clone()
    }

    /// Returns once the WAL has been synced by an fsync that began after
    /// this call: every commit that returned before the call is then on
    /// disk. The first waiter with no sync running starts a task that syncs
    /// until nobody waits; the others wait for its next fsync.
    pub(super) async fn wait(self: &Arc<Self>) -> std::io::Result<()> {
        let (reply, answer) = tokio::sync::oneshot::channel();
        let start = {
            let mut s = self.lock();
            if let Some(e) = &s.failed {
                return Err(std::io::Error::other(e.clone()));
            }
            s.tickets += 1;
            let ticket = s.tickets;
            s.waiting.push((ticket, reply));
            !std::mem::replace(&mut s.syncing, true)
        };
        if start {
            let sync = Arc::clone(self);
            tokio::spawn(async move { sync.run().await });
        }
        match answer.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(std::io::Error::other(e)),
            Err(_) => Err(std::io::Error::other(
                "the task syncing the SQLite WAL ended without an answer",
            )),
        }
    }

    /// Syncs the WAL and answers every waiter whose ticket was given out
    /// before the fsync began, until none waits. If the task ends otherwise
    /// (aborted with its runtime), its guard answers the waiters with an
    /// error and lets the next waiter start a sync.
    async fn run(&self) {
        let mut guard = RunGuard {
            sync: self,
            finished: false,
        };
        loop {
            let upto = {
                let mut s = self.lock();
                if s.waiting.is_empty() {
                    s.syncing = false;
                    guard.finished = true;
                    return;
                }
                if let Some(e) = s.failed.clone() {
                    for (_, reply) in s.waiting.drain(..) {
                        let _ = reply.send(Err(e.clone()));
                    }
                    continue;
                }
                s.tickets
            };
            let (database, wal) = (self.database.clone(), self.wal.clone());
            self.syncs.fetch_add(1, Ordering::Relaxed);
            let synced = match tokio::task::spawn_blocking(move || sync(&database, &wal)).await {
                Ok(r) => r.map_err(|e| format!("syncing the SQLite WAL: {e}")),
                Err(e) => Err(format!("syncing the SQLite WAL: {e}")),
            };
            let done: Vec<_> = {
                let mut s = self.lock();
                if let Err(e) = &synced {
                    s.failed.get_or_insert_with(|| e.clone());
                }
                let (done, later) = std::mem::take(&mut s.waiting)
                    .into_iter()
                    .partition(|(ticket, _)| *ticket <= upto);
                s.waiting = later;
                done
            };
            for (_, reply) in done {
                let _ = reply.send(synced.clone());
            }
        }
    }
}

/// Ends [`WalSync::run`]'s turn if its task is dropped before it finished.
struct RunGuard<'a> {
    sync: &'a WalSync,
    finished: bool,
}

impl Drop for RunGuard<'_> {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        let mut s = self.sync.lock();
        s.syncing = false;
        for (_, reply) in s.waiting.drain(..) {
            let _ = reply.send(Err("the task syncing the SQLite WAL was stopped".into()));
        }
    }
}

/// fsyncs the WAL file (any descriptor syncs the file's data); without a
/// WAL (a checkpoint moved everything into the database and removed it,
/// syncing the database first) the database file.
fn sync(database: &Path, wal: &Path) -> std::io::Result<()> {
    match std::fs::File::open(wal) {
        Ok(f) => f.sync_data(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::File::open(database)?.sync_data()
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Commits that wait while a sync runs are answered together by the
    /// next one (64 waiters, one fsync); a waiter with no sync running
    /// starts one. Without a file the error is each waiter's.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn waiters_share_one_sync_and_each_is_answered() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("x.db");
        std::fs::write(&db, b"db").unwrap();
        std::fs::write(dir.path().join("x.db-wal"), b"wal").unwrap();
        let sync = Arc::new(WalSync::new(&db, Arc::default()));
        // As if a sync were running: the waiters queue behind it.
        sync.lock().syncing = true;
        let waits: Vec<_> = (0..64)
            .map(|_| {
                let s = Arc::clone(&sync);
                tokio::spawn(async move { s.wait().await })
            })
            .collect();
        while sync.lock().waiting.len() < 64 {
            tokio::task::yield_now().await;
        }
        let runner = Arc::clone(&sync);
        tokio::spawn(async move { runner.run().await });
        for w in waits {
            w.await.unwrap().unwrap();
        }
        assert_eq!(sync.syncs.load(Ordering::Relaxed), 1);
        {
            let s = sync.lock();
            assert_eq!(s.tickets, 64);
            assert!(s.waiting.is_empty() && !s.syncing);
        }
        sync.wait().await.unwrap();
        assert_eq!(sync.syncs.load(Ordering::Relaxed), 2);
        // The WAL removed by a checkpoint: the database file is synced.
        std::fs::remove_file(dir.path().join("x.db-wal")).unwrap();
        sync.wait().await.unwrap();
        assert_eq!(sync.failure(), None);
        std::fs::remove_file(&db).unwrap();
        let e = sync.wait().await.unwrap_err().to_string();
        assert!(e.contains("syncing the SQLite WAL"), "{e}");
        // A failed fsync is final: with the file back, waits still fail and
        // no fsync is tried.
        std::fs::write(&db, b"db").unwrap();
        let syncs = sync.syncs.load(Ordering::Relaxed);
        let again = sync.wait().await.unwrap_err().to_string();
        assert!(again.contains("syncing the SQLite WAL"), "{again}");
        assert_eq!(sync.syncs.load(Ordering::Relaxed), syncs);
        assert!(sync.failure().is_some());
    }

    /// A sync task dropped before it finished (its runtime shut down)
    /// answers its waiters with an error and lets the next waiter start one.
    #[tokio::test]
    async fn a_sync_task_dropped_midway_answers_its_waiters_and_lets_others_start() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("x.db");
        std::fs::write(&db, b"db").unwrap();
        let sync = Arc::new(WalSync::new(&db, Arc::default()));
        let (reply, answer) = tokio::sync::oneshot::channel();
        {
            let mut s = sync.lock();
            s.syncing = true;
            s.tickets = 1;
            s.waiting.push((1, reply));
        }
        drop(RunGuard {
            sync: &sync,
            finished: false,
        });
        let e = answer.await.unwrap().unwrap_err();
        assert!(e.contains("was stopped"), "{e}");
        assert!(!sync.lock().syncing);
        sync.wait().await.unwrap();
    }
}
