//! The store's own count of its write transactions (issue 30): how many it committed and
//! how many of those waited for the disk (`synchronous = FULL` in WAL mode syncs the WAL
//! at every commit). A read-only command must cost no synced commit; the count is how a
//! test, `/metrics` (`spellbridge_store_commits_total`) and the IRC bench see that it
//! does not, without timing anything.
//!
//! The count is taken by SQLite's commit hook, so it sees every write transaction of the
//! store's connection, whichever method ran it (an autocommit statement too). A commit
//! made inside [`Store::unsynced`](super::Store::unsynced) is counted as unsynced.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rusqlite::Connection;

/// The counts, shared between the connection's hook and whoever reads them.
#[derive(Debug, Default)]
struct Counts {
    all: AtomicU64,
    synced: AtomicU64,
    /// True while [`Store::unsynced`](super::Store::unsynced) runs.
    relaxed: AtomicBool,
}

/// A handle on one connection's commit counts; clones read the same counts.
#[derive(Clone, Debug, Default)]
pub struct Commits(Arc<Counts>);

/// The counts at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counted {
    /// Write transactions committed.
    pub all: u64,
    /// Of those, the ones that waited for an fsync.
    pub synced: u64,
}

impl Commits {
    /// Counts the commits of `connection`; `synced` says whether its commits sync (the
    /// store's durability).
    pub(super) fn watch(connection: &Connection, synced: bool) -> Commits {
        let commits = Commits::default();
        let counts = commits.0.clone();
        connection.commit_hook(Some(move || {
            counts.all.fetch_add(1, Ordering::Relaxed);
            if synced && !counts.relaxed.load(Ordering::Relaxed) {
                counts.synced.fetch_add(1, Ordering::Relaxed);
            }
            // Go on with the commit.
            false
        }));
        commits
    }

    /// The counts now.
    pub fn counted(&self) -> Counted {
        Counted { all: self.0.all.load(Ordering::Relaxed), synced: self.0.synced.load(Ordering::Relaxed) }
    }

    /// Counts one commit made outside SQLite's hook (the PostgreSQL engine's).
    pub(super) fn count(&self, synced: bool) {
        self.0.all.fetch_add(1, Ordering::Relaxed);
        if synced {
            self.0.synced.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Marks the commits made until [`Commits::strict`] as unsynced.
    pub(super) fn relax(&self) {
        self.0.relaxed.store(true, Ordering::Relaxed);
    }

    /// Back to counting commits by the store's durability.
    pub(super) fn strict(&self) {
        self.0.relaxed.store(false, Ordering::Relaxed);
    }
}
