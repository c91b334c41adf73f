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
//! An acknowledged upload is on disk exactly as with `FULL`, which is
//! `NORMAL` plus that fsync after each commit (SQLite's documentation of
//! `PRAGMA synchronous` in WAL mode); what changes is that one fsync now
//! covers several commits.
//!
//! The writer connection goes back to `FULL` when it is released, whatever
//! the request did (the pool's release hook, [`WalSync::lowered`]), so a
//! request dropped half-way cannot leave the other writes at `NORMAL`.

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
}

impl WalSync {
    /// The WAL of the SQLite file `database`; `lowered` is the flag the
    /// write pool's release hook reads.
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

    /// Returns once the WAL has been synced by an fsync that began after
    /// this call: every commit that returned before the call is then on
    /// disk. The first waiter with no sync running starts a task that syncs
    /// until nobody waits; the others wait for its next fsync.
    pub(super) async fn wait(self: &Arc<Self>) -> std::io::Result<()> {
        let (reply, answer) = tokio::sync::oneshot::channel();
        let start = {
            let mut s = self.lock();
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
    /// before the fsync began, until none waits.
    async fn run(&self) {
        loop {
            let upto = {
                let mut s = self.lock();
                if s.waiting.is_empty() {
                    s.syncing = false;
                    return;
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
        std::fs::remove_file(&db).unwrap();
        let e = sync.wait().await.unwrap_err().to_string();
        assert!(e.contains("syncing the SQLite WAL"), "{e}");
    }
}
