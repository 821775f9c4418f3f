//! IRCv3 STS policies kept in the database (table `sts_policies`, migration 8), so that
//! a server's promise of TLS is honoured on later starts too (issue 14): the IRC
//! transports read and write them through [`StsPolicies`] from their own tasks, so they
//! get a connection of their own to the same file (WAL lets it write beside the store's),
//! or on PostgreSQL to the same database.
//! A policy that cannot be read or written is logged, never fatal: the transport then
//! behaves as without a stored policy for that connection.

use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use rusqlite::{OptionalExtension, params};
use spellbridge_adapters::{StsPolicies, StsPolicy};

use super::engines::Side;
use super::{Store, StoreError};

/// The policies in the database of an open [`Store`].
pub struct StsStore {
    side: Side,
    /// The database, for messages (a PostgreSQL URL without its password).
    shown: PathBuf,
}

impl StsStore {
    /// A connection of its own to the database `store` opened (and brought up to date).
    pub fn open(store: &Store) -> Result<StsStore, StoreError> {
        Ok(StsStore { side: store.side()?, shown: store.path().to_path_buf() })
    }

    fn read(&self, host: &str) -> Result<Option<StsPolicy>, String> {
        let row = match &self.side {
            Side::Sqlite(side) => side
                .lock()
                .query_row("SELECT port, expires FROM sts_policies WHERE host = ?1", [host], |row| {
                    Ok((row.get::<_, i64>(0)?, row.get::<_, i64>(1)?))
                })
                .optional()
                .map_err(|e| e.to_string())?,
            Side::Postgres(store) => store.sts_policy(host).map_err(|e| e.to_string())?,
        };
        Ok(row.and_then(|(port, expires)| {
            Some(StsPolicy {
                port: u16::try_from(port).ok()?,
                expires: UNIX_EPOCH + Duration::from_secs(u64::try_from(expires).unwrap_or(0)),
            })
        }))
    }

    fn write(&self, host: &str, policy: Option<StsPolicy>) -> Result<(), String> {
        let policy = policy.map(|policy| {
            let expires = policy.expires.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
            (policy.port, i64::try_from(expires).unwrap_or(i64::MAX))
        });
        match &self.side {
            Side::Sqlite(side) => {
                let connection = side.lock();
                match policy {
                    Some((port, expires)) => connection.execute(
                        "INSERT INTO sts_policies (host, port, expires) VALUES (?1, ?2, ?3)
                         ON CONFLICT (host) DO UPDATE SET port = excluded.port, expires = excluded.expires",
                        params![host, port, expires],
                    ),
                    None => connection.execute("DELETE FROM sts_policies WHERE host = ?1", [host]),
                }
                .map(drop)
                .map_err(|e| e.to_string())
            }
            Side::Postgres(store) => store.set_sts_policy(host, policy).map_err(|e| e.to_string()),
        }
    }

    /// The database file (or PostgreSQL URL without its password).
    pub fn path(&self) -> &Path {
        &self.shown
    }
}

impl StsPolicies for StsStore {
    fn get(&self, host: &str) -> Option<StsPolicy> {
        self.read(&host.to_lowercase()).unwrap_or_else(|error| {
            tracing::warn!(host, database = %self.shown.display(), %error, "cannot read the stored STS policy");
            None
        })
    }

    fn set(&self, host: &str, policy: Option<StsPolicy>) {
        if let Err(error) = self.write(&host.to_lowercase(), policy) {
            tracing::warn!(host, database = %self.shown.display(), %error, "cannot store the STS policy");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Durability, OpenMode};
    use super::*;

    #[test]
    fn policies_are_set_read_removed_and_survive_a_reopen() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("spellbridge.db");
        let expires = UNIX_EPOCH + Duration::from_secs(2_000_000_000);
        {
            let store = Store::open(&path, OpenMode::CreateIfMissing, Durability::Full).expect("store");
            let sts = StsStore::open(&store).expect("sts");
            assert_eq!(sts.get("irc.example.org"), None);
            sts.set("IRC.Example.org", Some(StsPolicy { port: 6697, expires }));
            sts.set("other.example.org", Some(StsPolicy { port: 7000, expires }));
            sts.set("other.example.org", None);
            assert_eq!(sts.get("other.example.org"), None, "removed");
        }
        let store = Store::open(&path, OpenMode::MustExist, Durability::Full).expect("reopened");
        let sts = StsStore::open(&store).expect("sts");
        assert_eq!(sts.get("irc.example.ORG"), Some(StsPolicy { port: 6697, expires }), "kept, any case");
        sts.set("irc.example.org", Some(StsPolicy { port: 6698, expires }));
        assert_eq!(sts.get("irc.example.org").map(|p| p.port), Some(6698), "replaced");
    }
}
