//! Each Matrix network's `/sync` position that the leading daemon has handled, kept in the
//! database (table `matrix_sync_positions`, migration 13; issue 34), so that a standby that
//! takes over syncs on from where the old leader left off: a command said while no daemon
//! led is handled once, after the takeover, and nothing the old leader handled comes
//! again (what it committed and comes again all the same, from the last response it had
//! not finished, is dropped by its event id, `seen_messages`). The Matrix transport reads
//! and writes it through [`SyncPositions`] from its own task, over a connection of its own
//! (as [`super::appservice_txns`]), writing under the fence of the store it was opened
//! beside (the lease this daemon holds; `postgres/positions.rs`), so a leader that stood
//! down never overwrites its successor's position. Only the daemon on PostgreSQL is given
//! one: on SQLite the transport's `store_dir` keeps the position (`sync-token`).

use rusqlite::{OptionalExtension, params};
use spellbridge_adapters::SyncPositions;

use super::engines::Side;
use super::{Store, StoreError};

/// The positions in the database of an open [`Store`].
pub struct PositionStore {
    side: Side,
    /// The database, for messages (a PostgreSQL URL without its password).
    shown: String,
}

impl PositionStore {
    /// A connection of its own to the database `store` opened (and brought up to date),
    /// writing under `store`'s fence: on PostgreSQL, a store that holds no lease writes no
    /// position.
    pub fn open(store: &Store) -> Result<PositionStore, StoreError> {
        let side = match (store.side()?, store.fence()) {
            (Side::Postgres(mut side), Some(fence)) => {
                side.set_fence(fence);
                Side::Postgres(side)
            }
            (side, _) => side,
        };
        Ok(PositionStore { side, shown: store.path().display().to_string() })
    }
}

impl SyncPositions for PositionStore {
    fn load(&self, network: &str) -> Result<Option<String>, String> {
        match &self.side {
            Side::Sqlite(side) => side
                .lock()
                .query_row(
                    "SELECT next_batch FROM matrix_sync_positions WHERE network = ?1",
                    params![network],
                    |row| row.get(0),
                )
                .optional()
                .map_err(|e| format!("{}: {e}", self.shown)),
            Side::Postgres(store) => store.sync_position(network).map_err(|e| e.to_string()),
        }
    }

    fn keep(&self, network: &str, next_batch: &str) -> Result<(), String> {
        match &self.side {
            Side::Sqlite(side) => side
                .lock()
                .execute(
                    "INSERT INTO matrix_sync_positions (network, next_batch) VALUES (?1, ?2)
                     ON CONFLICT (network) DO UPDATE SET next_batch = excluded.next_batch",
                    params![network, next_batch],
                )
                .map(drop)
                .map_err(|e| format!("{}: {e}", self.shown)),
            Side::Postgres(store) => store.keep_sync_position(network, next_batch).map_err(|e| e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Durability, OpenMode};
    use super::*;

    #[test]
    fn a_position_is_kept_per_network_and_the_latest_one_wins() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("spellbridge.db");
        let store = Store::open(&path, OpenMode::CreateIfMissing, Durability::Full).expect("store");
        let positions = PositionStore::open(&store).expect("positions");
        assert_eq!(positions.load("matrix"), Ok(None), "none before the first sync");
        positions.keep("matrix", "s1_1").expect("kept");
        positions.keep("matrix", "s2_7").expect("kept again");
        assert_eq!(positions.load("matrix"), Ok(Some("s2_7".to_owned())));
        assert_eq!(positions.load("other"), Ok(None), "per network");
    }
}
