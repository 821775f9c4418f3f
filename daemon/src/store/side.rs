//! A connection of its own to the store's database, for a transport's task that reads and
//! writes beside the store (WAL lets it): the IRC STS policies ([`super::sts`]) and the
//! Matrix appservice transactions ([`super::appservice_txns`]).

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use super::{Store, StoreError, classify};

/// A second connection to an open [`Store`]'s database (brought up to date by the store).
pub struct Side {
    connection: Mutex<Connection>,
    path: PathBuf,
}

impl Side {
    /// Opens it, waiting up to 2 s for a lock the store holds.
    pub(super) fn open(store: &Store) -> Result<Side, StoreError> {
        let path = store.sqlite()?.path().to_path_buf();
        let fail = |e| classify(&path, e);
        let connection = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(fail)?;
        connection.busy_timeout(Duration::from_secs(2)).map_err(fail)?;
        Ok(Side { connection: Mutex::new(connection), path })
    }

    /// The connection, for one statement or transaction.
    pub(super) fn lock(&self) -> MutexGuard<'_, Connection> {
        self.connection.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The database file, for messages.
    pub(super) fn path(&self) -> &Path {
        &self.path
    }
}
