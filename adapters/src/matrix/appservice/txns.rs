//! The appservice transactions already taken in (issue 17, item 2): the homeserver sends
//! each transaction until it is acknowledged, so one that was handed over but whose
//! answer was lost comes again, under the same id. Its id is kept (in the daemon's
//! database, [`SeenTransactions`]) once its events are handed over, and a transaction
//! whose id is kept is acknowledged without being read again, across restarts too. The
//! events' own ids are the second guard: the daemon drops a message whose id it has
//! committed, so a transaction handed over but not yet noted is not applied twice either.

use std::collections::HashSet;
use std::sync::Mutex;

/// Where the ids of the transactions taken in are kept.
pub trait SeenTransactions: Send + Sync {
    /// Whether `network`'s transaction `txn` was taken in; an error when that cannot be
    /// read (the homeserver is then asked to send it again later).
    fn seen(&self, network: &str, txn: &str) -> Result<bool, String>;
    /// Notes that `network`'s transaction `txn` was taken in.
    fn note(&self, network: &str, txn: &str) -> Result<(), String>;
}

/// Kept in memory only (tests, and a transport started without the daemon's database).
#[derive(Debug, Default)]
pub struct InMemory(Mutex<HashSet<(String, String)>>);

impl SeenTransactions for InMemory {
    fn seen(&self, network: &str, txn: &str) -> Result<bool, String> {
        let seen = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        Ok(seen.contains(&(network.to_owned(), txn.to_owned())))
    }

    fn note(&self, network: &str, txn: &str) -> Result<(), String> {
        let mut seen = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        seen.insert((network.to_owned(), txn.to_owned()));
        Ok(())
    }
}
