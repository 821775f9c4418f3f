//! Why the site could not answer from the database: the one error every reader and page
//! of the site returns (its own floor, so any part of the site can name it).

/// Why the site could not answer from the database.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SiteError {
    /// SQLite failed.
    #[error("the site could not read {path}: {source}")]
    Sql {
        /// The database file.
        path: String,
        /// What SQLite said.
        source: rusqlite::Error,
    },
    /// The PostgreSQL store failed (its message names the database, never its password).
    #[error("the site could not read the store: {0}")]
    Store(Box<crate::store::StoreError>),
    /// A stored row does not read.
    #[error("the site could not read a stored row: {0}")]
    BadRow(String),
    /// A blocking read was cancelled (the daemon is stopping).
    #[error("the site's read was cancelled")]
    Cancelled,
}
