//! The Matrix appservice transactions taken in, kept in the database (table
//! `appservice_txns`, migration 9; issue 17), so that one the homeserver sends again after
//! a lost acknowledgement is acknowledged without being read, after a restart too. The
//! Matrix transport's appservice listener reads and writes them through
//! [`SeenTransactions`] from its own task, over a connection of its own to the same file
//! (as the STS policies, [`super::sts`]).

use rusqlite::{OptionalExtension, params};
use spellbridge_adapters::SeenTransactions;

use super::side::Side;
use super::{Store, StoreError};

/// The transactions in the database of an open [`Store`].
pub struct TxnStore {
    side: Side,
}

impl TxnStore {
    /// A connection of its own to the database `store` opened (and brought up to date).
    pub fn open(store: &Store) -> Result<TxnStore, StoreError> {
        Ok(TxnStore { side: Side::open(store)? })
    }
}

impl SeenTransactions for TxnStore {
    fn seen(&self, network: &str, txn: &str) -> Result<bool, String> {
        let connection = self.side.lock();
        connection
            .query_row(
                "SELECT 1 FROM appservice_txns WHERE network = ?1 AND txn_id = ?2",
                params![network, txn],
                |_| Ok(()),
            )
            .optional()
            .map(|row| row.is_some())
            .map_err(|e| format!("{}: {e}", self.side.path().display()))
    }

    fn note(&self, network: &str, txn: &str) -> Result<(), String> {
        let connection = self.side.lock();
        connection
            .execute(
                "INSERT OR IGNORE INTO appservice_txns (network, txn_id) VALUES (?1, ?2)",
                params![network, txn],
            )
            .map(drop)
            .map_err(|e| format!("{}: {e}", self.side.path().display()))
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Durability, OpenMode};
    use super::*;

    #[test]
    fn transactions_are_noted_per_network_and_survive_a_reopen() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("spellbridge.db");
        {
            let store = Store::open(&path, OpenMode::CreateIfMissing, Durability::Full).expect("store");
            let txns = TxnStore::open(&store).expect("txns");
            assert_eq!(txns.seen("matrix", "t1"), Ok(false));
            txns.note("matrix", "t1").expect("noted");
            txns.note("matrix", "t1").expect("noted twice is fine");
            assert_eq!(txns.seen("matrix", "t1"), Ok(true));
            assert_eq!(txns.seen("other", "t1"), Ok(false), "per network");
        }
        let store = Store::open(&path, OpenMode::MustExist, Durability::Full).expect("reopened");
        let txns = TxnStore::open(&store).expect("txns");
        assert_eq!(txns.seen("matrix", "t1"), Ok(true), "kept");
    }
}
