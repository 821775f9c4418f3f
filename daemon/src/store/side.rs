//! A connection of its own to the store's database, for a transport's task that reads and
//! writes beside the store (WAL lets it): the IRC STS policies ([`super::sts`]) and the
//! Matrix appservice transactions ([`super::appservice_txns`]). On PostgreSQL the side is
//! a store of its own with no lease (`engines::Side`).

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use super::{SqliteStore, StoreError, classify};

/// A second connection to an open SQLite store's database (brought up to date by it).
pub struct Sqlite {
    connection: Mutex<Connection>,
}

impl Sqlite {
    /// Opens it, waiting up to 2 s for a lock the store holds.
    pub(super) fn open(store: &SqliteStore) -> Result<Sqlite, StoreError> {
        let path = store.path().to_path_buf();
        let fail = |e| classify(&path, e);
        let connection = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(fail)?;
        connection.busy_timeout(Duration::from_secs(2)).map_err(fail)?;
        Ok(Sqlite { connection: Mutex::new(connection) })
    }

    /// The connection, for one statement or transaction.
    pub(super) fn lock(&self) -> MutexGuard<'_, Connection> {
        self.connection.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
