//! The store as one interface over two engines (issue 34): [`Store`] is what the engine,
//! `serve`, the console and the commands call, and it hands each call to SQLite
//! ([`SqliteStore`], the default: `[store] path`) or PostgreSQL ([`PgStore`],
//! `[store] url`).
//!
//! An enum, not a trait object: the callers keep calling `Store`'s methods unchanged,
//! and what only SQLite does yet is one match arm that says so
//! ([`StoreError::NotOnPostgres`]) instead of a default method hidden in a trait.

use std::path::Path;

use serde_json::Value;
use spellbridge_core::dice::DiceKey;
use spellbridge_core::{NetworkId, Registry};

use super::outbox::BadRow;
use super::postgres::{PgStore, StoreUrl};
use super::ratings::RatingsCheck;
use super::startup::{Loaded, Policy};
use super::{Durability, MessageKey, OpenMode, Queued, SqliteStore, Step, StoreError, commits};
use crate::identity::Scope;
use crate::journal::{Entry, TableId};
use crate::leader::Fence;
use crate::ratings::Summary;
use crate::relay::replies::LatestLine;
use crate::router::{Router, RouterConfig};

/// The durable store, on either engine.
pub struct Store {
    engine: Engine,
}

enum Engine {
    Sqlite(Box<SqliteStore>),
    Postgres(Box<PgStore>),
}

/// Runs `$body` on SQLite; on PostgreSQL, says that `$what` is not there yet.
macro_rules! sqlite_only {
    ($self:expr, $what:literal, |$s:ident| $body:expr) => {
        match &$self.engine {
            Engine::Sqlite($s) => $body,
            Engine::Postgres(_) => Err(StoreError::NotOnPostgres { what: $what }),
        }
    };
    (mut $self:expr, $what:literal, |$s:ident| $body:expr) => {
        match &mut $self.engine {
            Engine::Sqlite($s) => $body,
            Engine::Postgres(_) => Err(StoreError::NotOnPostgres { what: $what }),
        }
    };
}

impl Store {
    /// Opens (or creates) the SQLite database at `path` (see [`SqliteStore::open`]).
    pub fn open(path: &Path, mode: OpenMode, durability: Durability) -> Result<Store, StoreError> {
        SqliteStore::open(path, mode, durability).map(|s| Store { engine: Engine::Sqlite(Box::new(s)) })
    }

    /// Connects to the PostgreSQL database at `url`; its commits pass `fence` (the lease
    /// this daemon holds), and with `None` it reads only.
    pub fn open_postgres(url: &StoreUrl, fence: Option<Fence>) -> Result<Store, StoreError> {
        PgStore::open(url, fence).map(|s| Store { engine: Engine::Postgres(Box::new(s)) })
    }

    /// Commits under `fence` from now on: a standby's read-only store once it took the
    /// lease. SQLite has no lease: nothing changes.
    pub fn set_fence(&mut self, fence: Fence) {
        if let Engine::Postgres(s) = &mut self.engine {
            s.set_fence(fence);
        }
    }

    /// The journal rows after row `id`, with their ids, at most `limit` (a standby follows
    /// them). SQLite has one daemon and no standby: none.
    pub fn journal_after(&self, id: i64, limit: i64) -> Result<Vec<(i64, Entry)>, StoreError> {
        match &self.engine {
            Engine::Postgres(s) => s.journal_after(id, limit),
            Engine::Sqlite(_) => Ok(Vec::new()),
        }
    }

    /// The SQLite store, for what only SQLite does yet (`verify`, `export`, STS).
    pub fn sqlite(&self) -> Result<&SqliteStore, StoreError> {
        sqlite_only!(self, "this", |s| Ok(s))
    }

    /// See [`SqliteStore::set_snapshot_every`] (PostgreSQL keeps no snapshots yet).
    pub fn set_snapshot_every(&mut self, every: usize) {
        if let Engine::Sqlite(s) = &mut self.engine {
            s.set_snapshot_every(every);
        }
    }

    /// How many write transactions this store committed, and how many synced.
    pub fn commits(&self) -> commits::Commits {
        match &self.engine {
            Engine::Sqlite(s) => s.commits(),
            Engine::Postgres(s) => s.commits(),
        }
    }

    /// The database file, or the PostgreSQL URL without its password.
    pub fn path(&self) -> &Path {
        match &self.engine {
            Engine::Sqlite(s) => s.path(),
            Engine::Postgres(s) => Path::new(s.url().shown()),
        }
    }

    /// True when this message was already handled (a network redelivered it).
    pub fn seen(&self, key: &MessageKey) -> Result<bool, StoreError> {
        match &self.engine {
            Engine::Sqlite(s) => s.seen(key),
            Engine::Postgres(s) => s.seen(key),
        }
    }

    /// Commits a batch of steps in one transaction; nothing may be announced before this
    /// returns `Ok` (see [`SqliteStore::commit`]; on PostgreSQL it also passes the fence).
    pub fn commit(&mut self, router: &Router, steps: Vec<Step>) -> Result<Vec<Queued>, StoreError> {
        match &mut self.engine {
            Engine::Sqlite(s) => s.commit(router, steps),
            Engine::Postgres(s) => s.commit(router, steps),
        }
    }

    /// Writes the snapshots of the tables behind their journals (PostgreSQL: none kept).
    pub fn write_snapshots(&mut self, router: &Router) -> Result<(), StoreError> {
        match &mut self.engine {
            Engine::Sqlite(s) => s.write_snapshots(router),
            Engine::Postgres(_) => Ok(()),
        }
    }

    /// Rebuilds the router from the database.
    pub fn load(&self, registry: Registry, options: RouterConfig) -> Result<Router, StoreError> {
        match &self.engine {
            Engine::Sqlite(s) => s.load(registry, options),
            Engine::Postgres(s) => s.load(registry, options),
        }
    }

    /// Rebuilds the router, checking snapshots against their journals (PostgreSQL replays
    /// its whole journal, so nothing is ever rebuilt there).
    pub fn load_checked(
        &self,
        registry: Registry,
        options: RouterConfig,
        policy: Policy,
    ) -> Result<Loaded, StoreError> {
        match &self.engine {
            Engine::Sqlite(s) => s.load_checked(registry, options, policy),
            Engine::Postgres(s) => Ok(Loaded { router: s.load(registry, options)?, rebuilt: Vec::new() }),
        }
    }

    /// The journal entries of one table (or, with `None`, the lobby's), in order.
    pub fn entries(&self, table: Option<TableId>) -> Result<Vec<Entry>, StoreError> {
        match &self.engine {
            Engine::Sqlite(s) => s.entries(table),
            Engine::Postgres(s) => s.entries(table),
        }
    }

    /// Every journal entry, in the order committed.
    pub fn journal(&self) -> Result<Vec<Entry>, StoreError> {
        match &self.engine {
            Engine::Sqlite(s) => s.journal(),
            Engine::Postgres(s) => s.journal(),
        }
    }

    /// The dice keys kept for one table (or every table): table, epoch, key.
    pub fn dice_keys(&self, table: Option<TableId>) -> Result<Vec<(TableId, u64, DiceKey)>, StoreError> {
        match &self.engine {
            Engine::Sqlite(s) => s.dice_keys(table),
            Engine::Postgres(s) => s.dice_keys(table),
        }
    }

    /// A named value kept with the games, if set.
    pub fn meta(&self, key: &str) -> Result<Option<String>, StoreError> {
        match &self.engine {
            Engine::Sqlite(s) => s.meta(key),
            Engine::Postgres(s) => s.meta(key),
        }
    }

    /// Every message still waiting in the outbox, oldest first.
    pub fn pending(&self) -> Result<Vec<Queued>, StoreError> {
        self.pending_checked().map(|(queued, _)| queued)
    }

    /// The outbox, and the rows that do not read.
    pub fn pending_checked(&self) -> Result<(Vec<Queued>, Vec<BadRow>), StoreError> {
        match &self.engine {
            Engine::Sqlite(s) => s.pending_checked(),
            Engine::Postgres(s) => s.pending_checked(),
        }
    }

    /// Removes a message from the outbox once its adapter reports it sent.
    pub fn sent(&self, id: i64) -> Result<(), StoreError> {
        match &self.engine {
            Engine::Sqlite(s) => s.sent(id),
            Engine::Postgres(s) => s.sent_all(&[id]),
        }
    }

    /// Removes several sent messages from the outbox.
    pub fn sent_all(&mut self, ids: &[i64]) -> Result<(), StoreError> {
        match &mut self.engine {
            Engine::Sqlite(s) => s.sent_all(ids),
            Engine::Postgres(s) => s.sent_all(ids),
        }
    }

    /// See [`SqliteStore::check_outbox`].
    pub fn check_outbox(&self, networks: Option<&[NetworkId]>) -> Result<Vec<BadRow>, StoreError> {
        sqlite_only!(self, "checking the outbox", |s| s.check_outbox(networks))
    }

    /// See [`SqliteStore::pending_count`].
    pub fn pending_count(&self) -> Result<usize, StoreError> {
        match &self.engine {
            Engine::Sqlite(s) => s.pending_count(),
            Engine::Postgres(s) => s.pending_checked().map(|(q, b)| q.len() + b.len()),
        }
    }

    /// See [`SqliteStore::set_aside_rows`].
    pub fn set_aside_rows(&self) -> Result<Vec<BadRow>, StoreError> {
        sqlite_only!(self, "listing outbox rows set aside", |s| s.set_aside_rows())
    }

    /// See [`SqliteStore::stored_tables`].
    pub fn stored_tables(&self) -> Result<Vec<(TableId, Value)>, StoreError> {
        sqlite_only!(self, "reading stored snapshots", |s| s.stored_tables())
    }

    /// See [`SqliteStore::current_table`].
    pub fn current_table(&self, registry: &Registry, table: TableId) -> Result<Option<Value>, StoreError> {
        sqlite_only!(self, "reading a table", |s| s.current_table(registry, table))
    }

    /// See [`SqliteStore::derive_ratings`].
    pub fn derive_ratings(
        &self,
        registry: &Registry,
        scopes: &std::collections::BTreeMap<NetworkId, Scope>,
    ) -> Result<Result<Summary, crate::ratings::RatingsError>, StoreError> {
        sqlite_only!(self, "deriving the ratings", |s| s.derive_ratings(registry, scopes))
    }

    /// See [`SqliteStore::refresh_ratings`].
    pub fn refresh_ratings(
        &self,
        registry: &Registry,
        scopes: &std::collections::BTreeMap<NetworkId, Scope>,
    ) -> Result<Result<Summary, crate::ratings::RatingsError>, StoreError> {
        sqlite_only!(self, "refreshing the ratings", |s| s.refresh_ratings(registry, scopes))
    }

    /// See [`SqliteStore::save_ratings`].
    pub fn save_ratings(
        &self,
        summary: &Summary,
        scopes: &std::collections::BTreeMap<NetworkId, Scope>,
    ) -> Result<(), StoreError> {
        sqlite_only!(self, "saving the ratings", |s| s.save_ratings(summary, scopes))
    }

    /// See [`SqliteStore::stored_ratings`].
    pub fn stored_ratings(&self) -> Result<Option<Summary>, StoreError> {
        sqlite_only!(self, "reading the ratings", |s| s.stored_ratings())
    }

    /// See [`SqliteStore::check_ratings`].
    pub fn check_ratings(&self, registry: &Registry) -> Result<RatingsCheck, StoreError> {
        sqlite_only!(self, "checking the ratings", |s| s.check_ratings(registry))
    }

    /// See [`SqliteStore::keep_relayed`] (not kept on PostgreSQL yet).
    pub fn keep_relayed(&mut self, lines: &[super::relayed::RelayedLine]) -> Result<(), StoreError> {
        sqlite_only!(mut self, "keeping relayed lines' ids", |s| s.keep_relayed(lines))
    }

    /// See [`SqliteStore::keep_latest`] (not kept on PostgreSQL yet).
    pub fn keep_latest(&mut self, lines: &[LatestLine]) -> Result<(), StoreError> {
        sqlite_only!(mut self, "keeping speakers' latest lines", |s| s.keep_latest(lines))
    }

    /// See [`SqliteStore::relayed`].
    pub fn relayed(&self) -> Result<Vec<super::relayed::RelayedLine>, StoreError> {
        sqlite_only!(self, "reading relayed lines' ids", |s| s.relayed())
    }

    /// See [`SqliteStore::latest`].
    pub fn latest(&self) -> Result<Vec<LatestLine>, StoreError> {
        sqlite_only!(self, "reading speakers' latest lines", |s| s.latest())
    }

    /// The SQLite connection, for tests.
    #[cfg(test)]
    pub(crate) fn connection(&self) -> &rusqlite::Connection {
        match &self.engine {
            Engine::Sqlite(s) => s.connection(),
            Engine::Postgres(_) => panic!("a PostgreSQL store has no SQLite connection"),
        }
    }
}
