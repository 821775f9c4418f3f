//! The store as one interface over two engines (issue 34): [`Store`] is what the engine,
//! `serve`, the console and the commands call, and it hands each call to SQLite
//! ([`SqliteStore`], the default: `[store] path`) or PostgreSQL ([`PgStore`],
//! `[store] url`).
//!
//! An enum, not a trait object: the callers keep calling `Store`'s methods unchanged, and
//! each method's two arms show what each engine does. Where the logic is the same on
//! both (start-up's checks, the ratings), it is written once over a small trait the two
//! engines implement (`startup::Source`, `ratings::Ratings`).

use std::path::Path;

use serde_json::Value;
use spellbridge_core::dice::DiceKey;
use spellbridge_core::{NetworkId, Registry};

use super::outbox::BadRow;
use super::postgres::{PgStore, StoreUrl};
use super::ratings::{Ratings, RatingsCheck};
use super::startup::{self, Loaded, Policy};
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

/// A second connection to a [`Store`]'s database (see [`Store::side`]).
pub(super) enum Side {
    Sqlite(super::side::Sqlite),
    /// A store of its own that holds no lease: it commits no moves.
    Postgres(Box<PgStore>),
}

enum Engine {
    Sqlite(Box<SqliteStore>),
    Postgres(Box<PgStore>),
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

    /// The fence this store commits under: the lease this daemon holds on PostgreSQL;
    /// `None` on SQLite and on a PostgreSQL store that reads only.
    pub(super) fn fence(&self) -> Option<Fence> {
        match &self.engine {
            Engine::Postgres(s) => s.fence().cloned(),
            Engine::Sqlite(_) => None,
        }
    }

    /// What start-up loads beside the tables (ratings, relayed lines, shown names), into
    /// `router`: a standby's warm tables when it takes over. On SQLite, nothing (no standby).
    pub fn load_beside_tables(&self, router: &mut Router) -> Result<(), StoreError> {
        match &self.engine {
            Engine::Postgres(s) => s.load_beside_tables(router),
            Engine::Sqlite(_) => Ok(()),
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

    /// The SQLite store, for what only SQLite has: the player-id upgrade of databases
    /// from before ids named their network.
    pub fn sqlite(&self) -> Option<&SqliteStore> {
        match &self.engine {
            Engine::Sqlite(s) => Some(s),
            Engine::Postgres(_) => None,
        }
    }

    /// A second connection to the same database, for a transport's task that reads and
    /// writes beside the store (STS policies, appservice transactions).
    pub(super) fn side(&self) -> Result<Side, StoreError> {
        match &self.engine {
            Engine::Sqlite(s) => super::side::Sqlite::open(s).map(Side::Sqlite),
            Engine::Postgres(s) => PgStore::open(s.url(), None).map(|s| Side::Postgres(Box::new(s))),
        }
    }

    /// See [`SqliteStore::set_snapshot_every`].
    pub fn set_snapshot_every(&mut self, every: usize) {
        match &mut self.engine {
            Engine::Sqlite(s) => s.set_snapshot_every(every),
            Engine::Postgres(s) => s.set_snapshot_every(every),
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

    /// Writes the snapshots of the tables behind their journals.
    pub fn write_snapshots(&mut self, router: &Router) -> Result<(), StoreError> {
        match &mut self.engine {
            Engine::Sqlite(s) => s.write_snapshots(router),
            Engine::Postgres(s) => s.write_snapshots(router),
        }
    }

    /// Rebuilds the router from the database.
    pub fn load(&self, registry: Registry, options: RouterConfig) -> Result<Router, StoreError> {
        match &self.engine {
            Engine::Sqlite(s) => s.load(registry, options),
            Engine::Postgres(s) => s.load(registry, options),
        }
    }

    /// Rebuilds the router, checking snapshots against their journals.
    pub fn load_checked(
        &self,
        registry: Registry,
        options: RouterConfig,
        policy: Policy,
    ) -> Result<Loaded, StoreError> {
        match &self.engine {
            Engine::Sqlite(s) => s.load_checked(registry, options, policy),
            Engine::Postgres(s) => s.load_checked(registry, options, policy),
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
        match &self.engine {
            Engine::Sqlite(s) => s.check_outbox(networks),
            Engine::Postgres(s) => s.check_outbox(networks),
        }
    }

    /// See [`SqliteStore::pending_count`].
    pub fn pending_count(&self) -> Result<usize, StoreError> {
        match &self.engine {
            Engine::Sqlite(s) => s.pending_count(),
            Engine::Postgres(s) => s.pending_count(),
        }
    }

    /// See [`SqliteStore::set_aside_rows`].
    pub fn set_aside_rows(&self) -> Result<Vec<BadRow>, StoreError> {
        match &self.engine {
            Engine::Sqlite(s) => s.set_aside_rows(),
            Engine::Postgres(s) => s.set_aside_rows(),
        }
    }

    /// See [`SqliteStore::stored_tables`].
    pub fn stored_tables(&self) -> Result<Vec<(TableId, Value)>, StoreError> {
        match &self.engine {
            Engine::Sqlite(s) => s.stored_tables(),
            Engine::Postgres(s) => s.stored_tables(),
        }
    }

    /// See [`SqliteStore::current_table`].
    pub fn current_table(&self, registry: &Registry, table: TableId) -> Result<Option<Value>, StoreError> {
        match &self.engine {
            Engine::Sqlite(s) => s.current_table(registry, table),
            Engine::Postgres(s) => s.current_table(registry, table),
        }
    }

    /// See [`SqliteStore::derive_ratings`].
    pub fn derive_ratings(
        &self,
        registry: &Registry,
        scopes: &std::collections::BTreeMap<NetworkId, Scope>,
    ) -> Result<Result<Summary, crate::ratings::RatingsError>, StoreError> {
        match &self.engine {
            Engine::Sqlite(s) => Ratings::derive_ratings(&**s, registry, scopes),
            Engine::Postgres(s) => Ratings::derive_ratings(&**s, registry, scopes),
        }
    }

    /// See [`SqliteStore::refresh_ratings`].
    pub fn refresh_ratings(
        &self,
        registry: &Registry,
        scopes: &std::collections::BTreeMap<NetworkId, Scope>,
    ) -> Result<Result<Summary, crate::ratings::RatingsError>, StoreError> {
        match &self.engine {
            Engine::Sqlite(s) => Ratings::refresh_ratings(&**s, registry, scopes),
            Engine::Postgres(s) => Ratings::refresh_ratings(&**s, registry, scopes),
        }
    }

    /// See [`SqliteStore::save_ratings`].
    pub fn save_ratings(
        &self,
        summary: &Summary,
        scopes: &std::collections::BTreeMap<NetworkId, Scope>,
    ) -> Result<(), StoreError> {
        match &self.engine {
            Engine::Sqlite(s) => Ratings::save_ratings(&**s, summary, scopes),
            Engine::Postgres(s) => Ratings::save_ratings(&**s, summary, scopes),
        }
    }

    /// See [`SqliteStore::stored_ratings`].
    pub fn stored_ratings(&self) -> Result<Option<Summary>, StoreError> {
        match &self.engine {
            Engine::Sqlite(s) => Ratings::stored_ratings(&**s),
            Engine::Postgres(s) => Ratings::stored_ratings(&**s),
        }
    }

    /// See [`SqliteStore::check_ratings`].
    pub fn check_ratings(&self, registry: &Registry) -> Result<RatingsCheck, StoreError> {
        match &self.engine {
            Engine::Sqlite(s) => Ratings::check_ratings(&**s, registry),
            Engine::Postgres(s) => Ratings::check_ratings(&**s, registry),
        }
    }

    /// See [`SqliteStore::keep_relayed`].
    pub fn keep_relayed(&mut self, lines: &[super::relayed::RelayedLine]) -> Result<(), StoreError> {
        match &mut self.engine {
            Engine::Sqlite(s) => s.keep_relayed(lines),
            Engine::Postgres(s) => s.keep_relayed(lines),
        }
    }

    /// See [`SqliteStore::keep_latest`].
    pub fn keep_latest(&mut self, lines: &[LatestLine]) -> Result<(), StoreError> {
        match &mut self.engine {
            Engine::Sqlite(s) => s.keep_latest(lines),
            Engine::Postgres(s) => s.keep_latest(lines),
        }
    }

    /// See [`SqliteStore::relayed`].
    pub fn relayed(&self) -> Result<Vec<super::relayed::RelayedLine>, StoreError> {
        match &self.engine {
            Engine::Sqlite(s) => s.relayed(),
            Engine::Postgres(s) => s.relayed(),
        }
    }

    /// See [`SqliteStore::latest`].
    pub fn latest(&self) -> Result<Vec<LatestLine>, StoreError> {
        match &self.engine {
            Engine::Sqlite(s) => s.latest(),
            Engine::Postgres(s) => s.latest(),
        }
    }

    /// Every stored table row (for `verify`).
    pub(super) fn table_rows(&self) -> Result<Vec<startup::Row>, StoreError> {
        match &self.engine {
            Engine::Sqlite(s) => startup::Source::table_rows(&**s),
            Engine::Postgres(s) => startup::Source::table_rows(&**s),
        }
    }

    /// See [`SqliteStore::journal_digests`].
    pub(super) fn journal_digests(
        &self,
        points: &std::collections::BTreeMap<TableId, i64>,
    ) -> Result<std::collections::BTreeMap<TableId, startup::Covered>, StoreError> {
        match &self.engine {
            Engine::Sqlite(s) => s.journal_digests(points),
            Engine::Postgres(s) => startup::Source::journal_digests(&**s, points),
        }
    }

    /// A stored snapshot with its history rows put back.
    pub(super) fn assembled(&self, table: TableId, snapshot: &[u8]) -> Result<Value, String> {
        match &self.engine {
            Engine::Sqlite(s) => s.assembled(table, snapshot),
            Engine::Postgres(s) => startup::Source::assembled(&**s, table, snapshot),
        }
    }

    /// Table `table`'s (or the lobby's) journal rows as stored: id and entry.
    pub(super) fn journal_texts(&self, table: Option<TableId>) -> Result<Vec<(i64, Vec<u8>)>, StoreError> {
        match &self.engine {
            Engine::Sqlite(s) => s.journal_texts(table),
            Engine::Postgres(s) => s.journal_texts(table),
        }
    }

    /// Table `table`'s journal rows as export shows them.
    pub(super) fn export_rows(&self, table: TableId) -> Result<Vec<Value>, StoreError> {
        match &self.engine {
            Engine::Sqlite(s) => s.export_rows(table),
            Engine::Postgres(s) => s.export_rows(table),
        }
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
