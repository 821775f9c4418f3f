//! The Matrix appservice transactions taken in, kept in the database (table
//! `appservice_txns`, migration 9; issue 17), so that one the homeserver sends again after
//! a lost acknowledgement is acknowledged without being read, after a restart too. The
//! Matrix transport's appservice listener reads and writes them through
//! [`SeenTransactions`] from its own task, over a connection of its own to the same file
//! (as the STS policies, [`super::sts`]), or on PostgreSQL a connection of its own.

use rusqlite::{OptionalExtension, params};
use spellbridge_adapters::SeenTransactions;

use super::engines::Side;
use super::{Store, StoreError};

/// The transactions in the database of an open [`Store`].
pub struct TxnStore {
    side: Side,
    /// The database, for messages (a PostgreSQL URL without its password).
    shown: String,
}

impl TxnStore {
    /// A connection of its own to the database `store` opened (and brought up to date).
    pub fn open(store: &Store) -> Result<TxnStore, StoreError> {
        Ok(TxnStore { side: store.side()?, shown: store.path().display().to_string() })
    }
}

impl SeenTransactions for TxnStore {
    fn seen(&self, network: &str, txn: &str) -> Result<bool, String> {
        match &self.side {
            Side::Sqlite(side) => side
                .lock()
                .query_row(
                    "SELECT 1 FROM appservice_txns WHERE network = ?1 AND txn_id = ?2",
                    params![network, txn],
                    |_| Ok(()),
                )
                .optional()
                .map(|row| row.is_some())
                .map_err(|e| format!("{}: {e}", self.shown)),
            Side::Postgres(store) => store.txn_seen(network, txn).map_err(|e| e.to_string()),
        }
    }

    fn note(&self, network: &str, txn: &str) -> Result<(), String> {
        match &self.side {
            Side::Sqlite(side) => side
                .lock()
                .execute(
                    "INSERT OR IGNORE INTO appservice_txns (network, txn_id) VALUES (?1, ?2)",
                    params![network, txn],
                )
                .map(drop)
                .map_err(|e| format!("{}: {e}", self.shown)),
            Side::Postgres(store) => store.note_txn(network, txn).map_err(|e| e.to_string()),
        }
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
