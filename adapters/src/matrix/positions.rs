//! Where the daemon keeps a Matrix network's `/sync` position apart from the transport's
//! own `store_dir` (issue 34): in the database two daemons share, so that the one that
//! takes over syncs on from the position the old leader handled, not from a position of
//! its own (a fresh one would skip what was said meanwhile as history; an old one would
//! hand over again what the old leader answered).
//!
//! The sync loop reads it once a session, before its first sync, and writes it after each
//! response whose messages were handed over and whose commands were answered.

/// Where a network's handled `/sync` position is kept.
pub trait SyncPositions: Send + Sync {
    /// The position last kept for `network`; `None` before any was; an error when it
    /// cannot be read.
    fn load(&self, network: &str) -> Result<Option<String>, String>;
    /// Keeps `next_batch` as `network`'s handled position; an error when it cannot be
    /// kept, or when this daemon no longer leads (the daemon's store writes it under its
    /// lease's fence, so a stood-down leader never overwrites its successor's).
    fn keep(&self, network: &str, next_batch: &str) -> Result<(), String>;
}
