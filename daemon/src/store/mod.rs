//! The durable store: SQLite under the router, so no acknowledged move is ever lost.
//!
//! Each batch of handled messages is committed in one transaction — the router's journal
//! entries, the message ids (so a network's redelivery is recognised), the outbound
//! messages (the outbox) and, now and then, new snapshots of the tables they touched —
//! before anything is sent. The journal is the source of truth: a table's snapshot is
//! written at most every [`SNAPSHOT_EVERY`] of its journal entries (and always when it
//! opens or ends, and on [`Store::write_snapshots`]), and covers its journal up to a point.
//! Each snapshot is sealed with a checksum of its table's journal up to that point (`seal`).
//! On start (`startup`), tables are loaded from their snapshots and the rows after each
//! one's point are replayed onto it; a snapshot that does not load, or does not match its
//! seal or its journal, is rebuilt by replaying its journal. Outbound
//! messages leave the outbox only when an adapter reports them sent; a row that cannot be
//! read is set aside (`outbox`). The files are created owner-only (`files`).
//! The ratings derived from the journal are kept in `meta` (`ratings`), and `verify`
//! derives them again to check them.
//! IRC STS policies are kept in `sts_policies`, through a connection of their own
//! (`sts`), read and written by the IRC transports.
//! The tables' secret dice keys (RULES T-10) are kept in their own table, `dice_keys`,
//! written in the same transaction as the entry that commits to them, never in the
//! journal or a snapshot.

pub mod appservice_txns;
pub mod audit;
pub mod commits;
pub mod copy;
pub mod current;
mod difference;
mod engines;
mod files;
mod history;
mod journal_rows;
pub mod latest;
pub mod outage;
pub mod outbox;
pub mod player_ids;
pub mod postgres;
pub mod ratings;
pub mod relayed;
pub mod schema;
pub mod seal;
mod sealed;
mod seen;
mod side;
pub mod startup;
pub mod sts;
pub mod sync_positions;

use std::path::{Path, PathBuf};

use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension, params};
use serde_json::Value;
use spellbridge_core::dice::DiceKey;
use spellbridge_core::{NetworkId, Registry};

use crate::journal::{Entry, TableId};
use crate::router::{Record, ReplayError, Router, RouterConfig};
use crate::turn::Outbound;
pub use engines::Store;

/// How many prepared statements the connection keeps: more than the store has.
const STATEMENTS_KEPT: usize = 64;

/// A table's snapshot is written again once this many journal entries of the table were
/// committed since its last one (issue 16): a commit writes a snapshot for about one in
/// this many actions, and a start replays at most this many entries per table (fewer
/// after a clean shutdown, which writes every snapshot). A table that opens or ends has
/// its snapshot written at once.
pub const SNAPSHOT_EVERY: usize = 32;

/// The pages SQLite keeps in memory, in KiB. Its default, 2 MiB, is less than the
/// journal's and the tables' B-tree pages a busy daemon reads: at 1,000 tables its misses
/// (`pread`) were 2 % of the daemon's CPU. The cache only grows as pages are read.
const PAGE_CACHE_KIB: i64 = 16 * 1024;

/// How hard each commit works to survive a power cut.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Durability {
    /// WAL with `synchronous=FULL`: every commit is on disk before anything is announced.
    #[default]
    Full,
    /// WAL with `synchronous=NORMAL`: survives a crash of spellbridge, may lose the last
    /// commits on a power cut.
    Normal,
}

/// Whether opening may create the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenMode {
    /// Create an empty database if the file does not exist (its directory must).
    CreateIfMissing,
    /// The file must exist (`verify`, `export`).
    MustExist,
}

/// Why the store failed. Every message names the file and says what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The file's directory does not exist.
    #[error("{path}: the directory {} does not exist; create it, or choose another database path", .path.parent().map(Path::display).map(|d| d.to_string()).unwrap_or_default())]
    NoDirectory {
        /// The database file.
        path: PathBuf,
    },
    /// The file does not exist and may not be created.
    #[error(
        "{path} does not exist; check the path (a new database is only created by `spellbridge console --db` or `run`)"
    )]
    Missing {
        /// The database file.
        path: PathBuf,
    },
    /// The file or its directory cannot be written.
    #[error("{path} is read-only; make it and its directory writable (chmod u+w), or choose another file")]
    ReadOnly {
        /// The database file.
        path: PathBuf,
    },
    /// Another process holds the database.
    #[error(
        "{path} is locked by another process (is another spellbridge using it?); stop that process, or choose another file"
    )]
    Locked {
        /// The database file.
        path: PathBuf,
    },
    /// The file is not a database, or is damaged.
    #[error(
        "{path} is not a spellbridge database or is corrupt ({detail}); move it away and restore a backup"
    )]
    Corrupt {
        /// The database file.
        path: PathBuf,
        /// What SQLite found.
        detail: String,
    },
    /// The disk is full.
    #[error("{path}: the disk is full; free some space and try again")]
    Full {
        /// The database file.
        path: PathBuf,
    },
    /// The schema could not be brought up to date.
    #[error("{path}: {source}")]
    Schema {
        /// The database file.
        path: PathBuf,
        /// Why.
        source: schema::SchemaError,
    },
    /// A stored table could neither be loaded nor rebuilt from its journal.
    #[error("{path}: {source}")]
    Replay {
        /// The database file.
        path: PathBuf,
        /// Why.
        source: ReplayError,
    },
    /// A stored row does not read (written by a damaged or foreign program).
    #[error("{path}: a stored row does not read: {detail}")]
    BadRow {
        /// The database file.
        path: PathBuf,
        /// What was wrong.
        detail: String,
    },
    /// The file exists but is empty: a lost or truncated database, not a new one.
    #[error(
        "{path} is empty (0 bytes), not a spellbridge database: restore a backup, or delete the file to start with no games"
    )]
    Empty {
        /// The database file.
        path: PathBuf,
    },
    /// The file is an SQLite database written by another program.
    #[error(
        "{path} is an SQLite database but not spellbridge's (it has other tables and no spellbridge schema version); choose another file"
    )]
    Foreign {
        /// The database file.
        path: PathBuf,
    },
    /// Start-up found tables whose snapshots do not match their journals, and was told
    /// not to rebuild them (`spellbridge run --strict`).
    #[error(
        "{path}: {} {} not match {}: {}; `spellbridge verify {}` shows every problem, and starting without --strict rebuilds these tables from their journals",
        .problems.len(),
        if .problems.len() == 1 { "table does" } else { "tables do" },
        if .problems.len() == 1 { "its journal" } else { "their journals" },
        .problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "),
        verify_flag(.path)
    )]
    Unsound {
        /// The database file.
        path: PathBuf,
        /// Each table found unsound.
        problems: Vec<startup::TableProblem>,
    },
    /// The file could not be created.
    #[error("{path} cannot be created ({source}); check the path and its directory's permissions")]
    File {
        /// The database file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// A PostgreSQL statement failed, or the database could not be reached.
    #[error(
        "PostgreSQL at {target}, {what}: {source}; check that the database is up and reachable and the [store] url's user may use it"
    )]
    Postgres {
        /// The database, without its password.
        target: String,
        /// What the store was doing.
        what: &'static str,
        /// What PostgreSQL said.
        source: tokio_postgres::Error,
    },
    /// The PostgreSQL schema could not be brought up to date.
    #[error("PostgreSQL at {target}: {source}")]
    PostgresSchema {
        /// The database, without its password.
        target: String,
        /// Why.
        source: crate::leader::LeaseError,
    },
    /// A PostgreSQL journal does not replay.
    #[error("PostgreSQL at {target}: {source}")]
    PostgresReplay {
        /// The database, without its password.
        target: String,
        /// Why.
        source: ReplayError,
    },
    /// A PostgreSQL row does not read.
    #[error("PostgreSQL at {target}: a stored row does not read: {detail}")]
    PostgresRow {
        /// The database, without its password.
        target: String,
        /// What was wrong.
        detail: String,
    },
    /// The PostgreSQL engine's thread could not be started or has stopped.
    #[error("PostgreSQL at {target}: the store's connection thread {}", .source.as_ref().map_or("has stopped; restart spellbridge".to_owned(), |e| format!("could not start ({e})")))]
    Thread {
        /// The database, without its password.
        target: String,
        /// Why it could not start, if it did not.
        source: Option<std::io::Error>,
    },
    /// The PostgreSQL store's connection ended and could not be opened again in time; the
    /// call did nothing.
    #[error("the store is unreachable, try again shortly (PostgreSQL at {target}: {why})")]
    Unreachable {
        /// The database, without its password.
        target: String,
        /// What the last attempt to connect said.
        why: String,
    },
    /// The PostgreSQL store's connection ended during a commit and what became of it
    /// could not be learned: it is not taken as done.
    #[error(
        "the connection to the store broke while this was being saved, so it is not taken as done; try again shortly (PostgreSQL at {target})"
    )]
    CommitUnknown {
        /// The database, without its password.
        target: String,
    },
    /// This daemon's lease epoch is stale: the commit wrote nothing.
    #[error("{source}")]
    Fenced {
        /// What the fence found.
        source: crate::leader::FenceError,
    },
    /// A PostgreSQL store opened without a lease was asked to commit.
    #[error(
        "PostgreSQL at {target}: this store holds no lease, so it commits nothing (only the leading daemon writes)"
    )]
    NoLease {
        /// The database, without its password.
        target: String,
    },
    /// Any other SQLite failure.
    #[error("{path}: {source}")]
    Sql {
        /// The database file.
        path: PathBuf,
        /// What SQLite said.
        source: rusqlite::Error,
    },
}

/// How `verify` is told to read the database at `path` (a file, or a PostgreSQL URL
/// shown without its password).
fn verify_flag(path: &Path) -> String {
    match path.to_str() {
        Some(url) if url.starts_with("postgres") => format!("--store {url}"),
        _ => format!("--db {}", path.display()),
    }
}

/// A message id as networks give them: the network and its id for the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MessageKey {
    /// The network.
    pub network: NetworkId,
    /// Its id for the message.
    pub id: String,
}

/// What one handled message (or timer tick) changed, to commit as part of a batch.
#[derive(Clone, Debug, Default)]
pub struct Step {
    /// The message handled, if it had an id.
    pub message: Option<MessageKey>,
    /// The router's journal records for it.
    pub records: Vec<Record>,
    /// Everything to send because of it (replies and announcements).
    pub outbound: Vec<Outbound>,
    /// Named values to keep with it (see [`Store::meta`]).
    pub meta: Vec<(String, String)>,
    /// It changed nothing and relays nothing (a `!status`, a refusal): its answers are
    /// sent without the outbox and its message id is not kept. A crash loses at most an
    /// answer the player can ask for again, and the commit writes only what matters.
    pub fleeting: bool,
}

/// An outbound message waiting in the outbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Queued {
    /// Its place in the outbox; pass it to [`Store::sent`].
    pub id: i64,
    /// The message.
    pub outbound: Outbound,
}

/// The SQLite store.
pub struct SqliteStore {
    connection: Connection,
    path: PathBuf,
    /// Each table's journal entries committed since its snapshot was last written (a
    /// table not here: none known; start-up leaves none). Only says when to write one:
    /// what a snapshot covers is stored with it.
    since_snapshot: std::collections::HashMap<TableId, usize>,
    /// [`SNAPSHOT_EVERY`], or another count for tests and benches.
    snapshot_every: usize,
    /// The ids in `seen_messages`, for [`Store::seen`] to skip the query for new ones.
    seen: seen::Seen,
    /// How many write transactions were committed, and how many synced.
    commits: commits::Commits,
}

impl SqliteStore {
    /// Opens (or, with [`OpenMode::CreateIfMissing`], creates) the database at `path`,
    /// checks it, and brings its schema up to date.
    pub fn open(path: &Path, mode: OpenMode, durability: Durability) -> Result<SqliteStore, StoreError> {
        let path = path.to_path_buf();
        if !path.exists() {
            if mode == OpenMode::MustExist {
                return Err(StoreError::Missing { path });
            }
            let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
            if !dir.is_dir() {
                return Err(StoreError::NoDirectory { path });
            }
            files::create_private(&path).map_err(|e| files::classify_io(&path, e))?;
        } else if std::fs::metadata(&path).is_ok_and(|m| m.is_file() && m.len() == 0) {
            return Err(StoreError::Empty { path });
        }
        files::tighten(&path);
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut connection = Connection::open_with_flags(&path, flags).map_err(|e| classify(&path, e))?;
        let fail = |e| classify(&path, e);
        connection.busy_timeout(std::time::Duration::from_secs(2)).map_err(fail)?;
        // Every statement a command runs stays prepared (rusqlite keeps 16 by default, fewer
        // than one commit uses, so some were parsed anew each time).
        connection.set_prepared_statement_cache_capacity(STATEMENTS_KEPT);
        let check: String = connection.query_row("PRAGMA quick_check", [], |row| row.get(0)).map_err(fail)?;
        if check != "ok" {
            return Err(StoreError::Corrupt { path, detail: check });
        }
        connection.pragma_update(None, "journal_mode", "WAL").map_err(fail)?;
        let synchronous = match durability {
            Durability::Full => "FULL",
            Durability::Normal => "NORMAL",
        };
        connection.pragma_update(None, "synchronous", synchronous).map_err(fail)?;
        connection.pragma_update(None, "foreign_keys", true).map_err(fail)?;
        connection.pragma_update(None, "cache_size", -PAGE_CACHE_KIB).map_err(fail)?;
        // Take the write lock once now, so a database held by another process is reported
        // at start-up rather than at the first move.
        connection.execute_batch("BEGIN IMMEDIATE; COMMIT;").map_err(fail)?;
        if schema::is_foreign(&connection).map_err(fail)? {
            return Err(StoreError::Foreign { path });
        }
        schema::migrate(&mut connection).map_err(|source| match source {
            schema::SchemaError::Sql(e) => classify(&path, e),
            source => StoreError::Schema { path: path.clone(), source },
        })?;
        // SQLite made the -wal and -shm files with the database's mode; check them too.
        files::tighten_companions(&path);
        let seen = seen::Seen::load(&connection).map_err(|e| classify(&path, e))?;
        let commits = commits::Commits::watch(&connection, durability == Durability::Full);
        Ok(SqliteStore {
            connection,
            path,
            seen,
            commits,
            since_snapshot: Default::default(),
            snapshot_every: SNAPSHOT_EVERY,
        })
    }

    /// Writes a table's snapshot once `every` of its entries were committed since the last
    /// one, instead of [`SNAPSHOT_EVERY`] (1: at every commit, as before issue 16).
    pub fn set_snapshot_every(&mut self, every: usize) {
        self.snapshot_every = every.max(1);
    }

    /// How many write transactions this store committed, and how many waited for the
    /// disk (see [`commits`]); the handle keeps counting.
    pub fn commits(&self) -> commits::Commits {
        self.commits.clone()
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// True when this message was already handled (a network redelivered it).
    pub fn seen(&self, key: &MessageKey) -> Result<bool, StoreError> {
        if !self.seen.may_hold(key.network.as_str(), &key.id) {
            return Ok(false);
        }
        self.connection
            .prepare_cached("SELECT 1 FROM seen_messages WHERE network = ?1 AND message_id = ?2")
            .and_then(|mut seen| seen.query_row(params![key.network.as_str(), key.id], |_| Ok(())).optional())
            .map(|found| found.is_some())
            .map_err(|e| self.error(e))
    }

    /// Commits a batch of steps in one transaction (group commit): journal, touched
    /// tables' snapshots, message ids and outbox. Returns what to send, in order: the
    /// outbox entries, and a fleeting step's answers with id -1 (not in the outbox).
    /// Nothing may be announced before this returns `Ok`.
    pub fn commit(&mut self, router: &Router, steps: Vec<Step>) -> Result<Vec<Queued>, StoreError> {
        let path = self.path.clone();
        let fail = |e| classify(&path, e);
        let transaction = self.connection.transaction().map_err(fail)?;
        // Each touched table: how many of its entries this batch commits, and whether it
        // opened here.
        let mut touched: std::collections::BTreeMap<TableId, (usize, bool)> =
            std::collections::BTreeMap::new();
        // Tables that took a dice key in this batch: their keys are stored with it.
        let mut keyed = std::collections::BTreeSet::new();
        let mut queued = Vec::new();
        {
            let mut seen = transaction
                .prepare_cached("INSERT OR IGNORE INTO seen_messages (network, message_id) VALUES (?1, ?2)")
                .map_err(fail)?;
            let mut journal = transaction
                .prepare_cached(
                    "INSERT INTO journal (table_id, sequence, kind, player, command, network, message_id, dice_seed, entry, events)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                )
                .map_err(fail)?;
            let mut outbox = transaction
                .prepare_cached("INSERT INTO outbox (network, destination, text) VALUES (?1, ?2, ?3)")
                .map_err(fail)?;
            let mut meta = transaction
                .prepare_cached("INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value")
                .map_err(fail)?;
            for step in steps {
                for (key, value) in &step.meta {
                    meta.execute(params![key, value]).map_err(fail)?;
                }
                if step.fleeting {
                    queued.extend(step.outbound.into_iter().map(|outbound| Queued { id: -1, outbound }));
                    continue;
                }
                if let Some(key) = &step.message {
                    seen.execute(params![key.network.as_str(), key.id]).map_err(fail)?;
                    // Before the commit: if it fails, the filter only holds an id too many.
                    self.seen.insert(key.network.as_str(), &key.id);
                }
                for record in &step.records {
                    let row = JournalRow::of(&record.entry);
                    if let Entry::Opened { table, commitment: Some(_), .. } | Entry::Keyed { table, .. } =
                        &record.entry
                    {
                        keyed.insert(*table);
                    }
                    let events: Vec<String> =
                        record.announced.iter().map(|o| o.message.text.plain()).collect();
                    let (entry, events) = (to_json(&record.entry), to_json(&events));
                    if let Some(table) = record.entry.table() {
                        let (rows, opened) = touched.entry(table).or_default();
                        *rows += 1;
                        *opened |= matches!(record.entry, Entry::Opened { .. });
                    }
                    journal
                        .execute(params![
                            row.table.map(sql_u64),
                            row.sequence.map(sql_u64),
                            row.kind,
                            row.player,
                            row.command,
                            step.message.as_ref().map(|k| k.network.as_str()),
                            step.message.as_ref().map(|k| k.id.as_str()),
                            row.dice_seed.map(sql_u64),
                            entry,
                            events,
                        ])
                        .map_err(fail)?;
                }
                for outbound in step.outbound {
                    outbox
                        .execute(params![
                            outbound.network.as_str(),
                            to_json(&outbound.to),
                            to_json(&outbound.message)
                        ])
                        .map_err(fail)?;
                    queued.push(Queued { id: transaction.last_insert_rowid(), outbound });
                }
            }
            let mut keys = transaction
                .prepare_cached("INSERT OR IGNORE INTO dice_keys (table_id, epoch, key) VALUES (?1, ?2, ?3)")
                .map_err(fail)?;
            for table in keyed {
                for (epoch, key) in router.dice_keys(table) {
                    keys.execute(params![sql_u64(table), sql_u64(epoch), key.reveal()]).map_err(fail)?;
                }
            }
            for (table, (rows, opened)) in &mut touched {
                let since = self.since_snapshot.get(table).copied().unwrap_or(0) + *rows;
                let due =
                    *opened || since >= self.snapshot_every || router.table_finished(*table) == Some(true);
                *rows = since;
                if due {
                    write_current(&transaction, router, *table).map_err(fail)?;
                    *rows = 0;
                }
            }
        }
        transaction.commit().map_err(fail)?;
        for (table, (since, _)) in touched {
            self.since_snapshot.insert(table, since);
        }
        Ok(queued)
    }

    /// Writes the snapshot of every table with journal entries committed since its last
    /// one (on a clean shutdown, and before anything reads the snapshots as current), in
    /// one transaction.
    pub fn write_snapshots(&mut self, router: &Router) -> Result<(), StoreError> {
        let path = self.path.clone();
        let fail = |e| classify(&path, e);
        let behind: Vec<TableId> =
            self.since_snapshot.iter().filter(|(_, since)| **since > 0).map(|(table, _)| *table).collect();
        if behind.is_empty() {
            return Ok(());
        }
        let transaction = self.connection.transaction().map_err(fail)?;
        for table in &behind {
            write_current(&transaction, router, *table).map_err(fail)?;
        }
        transaction.commit().map_err(fail)?;
        self.since_snapshot.clear();
        Ok(())
    }

    /// Rebuilds the router from the database: tables from their snapshots (one that does
    /// not load or does not match its seal is rebuilt from its journal and logged), then
    /// the lobby. [`Store::load_checked`] also says which tables were rebuilt.
    pub fn load(&self, registry: Registry, options: RouterConfig) -> Result<Router, StoreError> {
        self.load_checked(registry, options, startup::Policy::Rebuild).map(|loaded| loaded.router)
    }

    /// The journal entries of one table (or, with `None`, the lobby's), in order.
    pub fn entries(&self, table: Option<TableId>) -> Result<Vec<Entry>, StoreError> {
        let fail = |e| self.error(e);
        // `table_id IS ?1` matches NULL when ?1 is NULL: the lobby's entries.
        let mut statement = self
            .connection
            .prepare("SELECT entry FROM journal WHERE table_id IS ?1 ORDER BY id")
            .map_err(fail)?;
        let texts = statement
            .query_map([table.map(sql_u64)], |row| row.get::<_, String>(0))
            .map_err(fail)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(fail)?;
        texts
            .iter()
            .map(|text| {
                serde_json::from_str(text).map_err(|e| StoreError::BadRow {
                    path: self.path.clone(),
                    detail: format!("journal entry: {e}"),
                })
            })
            .collect()
    }

    /// The dice keys kept for one table (or, with `None`, every table): table, epoch, key.
    pub fn dice_keys(&self, table: Option<TableId>) -> Result<Vec<(TableId, u64, DiceKey)>, StoreError> {
        let fail = |e| self.error(e);
        let mut statement = self
            .connection
            .prepare("SELECT table_id, epoch, key FROM dice_keys WHERE ?1 IS NULL OR table_id = ?1 ORDER BY table_id, epoch")
            .map_err(fail)?;
        let rows = statement
            .query_map([table.map(sql_u64)], |row| {
                Ok((row.get::<_, i64>(0)?, row.get::<_, i64>(1)?, row.get::<_, String>(2)?))
            })
            .map_err(fail)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(fail)?;
        rows.into_iter()
            .map(|(table, epoch, key)| {
                let (table, epoch) = (table as TableId, epoch as u64);
                let key = DiceKey::from_hex(&key).map_err(|e| StoreError::BadRow {
                    path: self.path.clone(),
                    detail: format!("dice key of table {table}, epoch {epoch}: {e}"),
                })?;
                Ok((table, epoch, key))
            })
            .collect()
    }

    /// A named value kept with the games, if set.
    pub fn meta(&self, key: &str) -> Result<Option<String>, StoreError> {
        self.connection
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |row| row.get(0))
            .optional()
            .map_err(|e| self.error(e))
    }

    /// Every message still waiting in the outbox, oldest first. A row that does not read
    /// is set aside and logged ([`Store::pending_checked`] also returns those).
    pub fn pending(&self) -> Result<Vec<Queued>, StoreError> {
        self.pending_checked().map(|(queued, _)| queued)
    }

    /// Removes a message from the outbox once its adapter reports it sent.
    pub fn sent(&self, id: i64) -> Result<(), StoreError> {
        self.connection
            .prepare_cached("DELETE FROM outbox WHERE id = ?1")
            .and_then(|mut delete| delete.execute([id]))
            .map(drop)
            .map_err(|e| self.error(e))
    }

    /// Removes several sent messages from the outbox in one transaction, without an fsync
    /// of its own ([`Store::unsynced`]): a power cut before the next commit of moves can
    /// only send them once more, which a crash between a send and its mark does anyway.
    pub fn sent_all(&mut self, ids: &[i64]) -> Result<(), StoreError> {
        self.unsynced(|store| store.delete_sent(ids))
    }

    fn delete_sent(&mut self, ids: &[i64]) -> Result<(), StoreError> {
        let path = self.path.clone();
        let fail = |e| classify(&path, e);
        let transaction = self.connection.transaction().map_err(fail)?;
        {
            let mut delete = transaction.prepare_cached("DELETE FROM outbox WHERE id = ?1").map_err(fail)?;
            for id in ids {
                delete.execute([id]).map_err(fail)?;
            }
        }
        transaction.commit().map_err(fail)
    }

    /// Runs `write` with `synchronous = NORMAL`, then puts the store's own setting back:
    /// the write is consistent (the WAL keeps it so) and reaches the disk with the next
    /// synced commit, but the daemon loop does not wait for a sync of its own. For what a
    /// power cut may lose at no cost to the games: outbox marks, relayed lines' ids.
    pub(crate) fn unsynced<T>(
        &mut self,
        write: impl FnOnce(&mut SqliteStore) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let path = self.path.clone();
        let fail = |e| classify(&path, e);
        let synchronous: i64 =
            self.connection.query_row("PRAGMA synchronous", [], |row| row.get(0)).map_err(fail)?;
        self.connection.pragma_update(None, "synchronous", "NORMAL").map_err(fail)?;
        self.commits.relax();
        let written = write(self);
        self.commits.strict();
        self.connection.pragma_update(None, "synchronous", synchronous).map_err(fail)?;
        written
    }

    /// The rows of `sql`, a query of a number and a text (`SELECT id, entry …`).
    pub(crate) fn numbered_rows(&self, sql: &str) -> Result<Vec<(i64, String)>, StoreError> {
        let fail = |e| self.error(e);
        let mut statement = self.connection.prepare(sql).map_err(fail)?;
        let rows = statement
            .query_map([], |row| Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?)))
            .map_err(fail)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(fail)
    }

    /// Every table's number with its stored snapshot, in order: as stored, so possibly
    /// behind its journal ([`Store::current_table`] is the table as it is now).
    pub fn stored_tables(&self) -> Result<Vec<(TableId, Value)>, StoreError> {
        self.numbered_rows("SELECT id, snapshot FROM tables ORDER BY id")?
            .into_iter()
            .map(|(id, text)| {
                let id = id as TableId;
                let value = self.assembled(id, text.as_bytes()).map_err(|e| StoreError::BadRow {
                    path: self.path.clone(),
                    detail: format!("table {id}: {e}"),
                })?;
                Ok((id, value))
            })
            .collect()
    }

    /// Table `table`'s state now: its snapshot with the journal rows after it replayed
    /// (see [`current`]); `None` when it has no snapshot.
    pub fn current_table(&self, registry: &Registry, table: TableId) -> Result<Option<Value>, StoreError> {
        current::table(&self.connection, registry, table).map_err(|detail| StoreError::BadRow {
            path: self.path.clone(),
            detail: format!("table {table}: {detail}"),
        })
    }

    /// A stored snapshot with its history rows put back (see [`history`]).
    pub(crate) fn assembled(&self, table: TableId, snapshot: &[u8]) -> Result<Value, String> {
        history::assemble(&self.connection, table, snapshot)
    }

    fn error(&self, e: rusqlite::Error) -> StoreError {
        classify(&self.path, e)
    }

    /// The connection, for the audit module and tests.
    pub(crate) fn connection(&self) -> &Connection {
        &self.connection
    }
}

/// Writes `table`'s snapshot as the router has it now, sealed with its whole journal
/// (the rows `connection` has, committed or in its transaction), with the history rows
/// it does not have yet.
fn write_current(connection: &Connection, router: &Router, table: TableId) -> rusqlite::Result<()> {
    let (history_rows, _) = history::kept(connection, table)?;
    let Some(stored) = router.stored_table(table, history_rows) else { return Ok(()) };
    let (digest, upto) = sealed::digest_now(connection, table)?;
    sealed::write_snapshot(connection, table, &stored, &digest, upto)
}

/// The queryable columns of a journal row.
struct JournalRow<'a> {
    table: Option<TableId>,
    sequence: Option<u64>,
    kind: &'static str,
    player: Option<&'a str>,
    command: Option<&'a str>,
    dice_seed: Option<u64>,
}

impl<'a> JournalRow<'a> {
    fn of(entry: &'a Entry) -> Self {
        let mut row = JournalRow {
            table: entry.table(),
            sequence: None,
            kind: "",
            player: None,
            command: None,
            dice_seed: None,
        };
        match entry {
            Entry::Opened { seed, .. } => {
                row.kind = "opened";
                row.dice_seed = *seed;
            }
            Entry::Keyed { .. } => row.kind = "keyed",
            Entry::Revealed { .. } => row.kind = "revealed",
            Entry::Acted { sequence, actor, typed, dice_seed, .. } => {
                row.kind = "acted";
                row.sequence = Some(*sequence);
                row.player = Some(actor.as_str());
                row.command = Some(typed);
                row.dice_seed = Some(*dice_seed);
            }
            Entry::Fired { sequence, dice_seed, .. } => {
                row.kind = "fired";
                row.sequence = Some(*sequence);
                row.dice_seed = Some(*dice_seed);
            }
            Entry::Challenged { challenger, .. } => {
                row.kind = "challenged";
                row.player = Some(challenger.as_str());
            }
            Entry::ChallengeClosed { .. } => row.kind = "challenge_closed",
            Entry::Linked { identity, .. } => {
                row.kind = "linked";
                row.player = Some(identity.as_str());
            }
            Entry::Unlinked { player } => {
                row.kind = "unlinked";
                row.player = Some(player.as_str());
            }
            Entry::Home { player, .. } => {
                row.kind = "home";
                row.player = Some(player.as_str());
            }
            Entry::LinkCode { player, .. } => {
                row.kind = "link_code";
                row.player = Some(player.as_str());
            }
            Entry::LinkCodeClosed { .. } => row.kind = "link_code_closed",
            Entry::Ignored { player } => {
                row.kind = "ignored";
                row.player = Some(player.as_str());
            }
            Entry::Unignored { player } => {
                row.kind = "unignored";
                row.player = Some(player.as_str());
            }
            Entry::RoomLanguage { .. } => row.kind = "room_language",
            Entry::PlayerLanguage { player, .. } => {
                row.kind = "player_language";
                row.player = Some(player.as_str());
            }
        }
        row
    }
}

/// SQLite integers are signed: store a u64 by its bits, so seeds above 2⁶³ survive.
fn sql_u64(value: u64) -> i64 {
    i64::from_ne_bytes(value.to_ne_bytes())
}

fn to_json<T: serde::Serialize>(value: &T) -> String {
    // These types serialise to JSON infallibly (plain structs, strings and numbers).
    serde_json::to_string(value).unwrap_or_default()
}

/// Turns SQLite's error into one that names the file and says what to do.
fn classify(path: &Path, e: rusqlite::Error) -> StoreError {
    let path = path.to_path_buf();
    match e.sqlite_error_code() {
        Some(ErrorCode::ReadOnly) => StoreError::ReadOnly { path },
        Some(ErrorCode::CannotOpen) if path.exists() => StoreError::ReadOnly { path },
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => StoreError::Locked { path },
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => {
            StoreError::Corrupt { path, detail: e.to_string() }
        }
        Some(ErrorCode::DiskFull) => StoreError::Full { path },
        _ => StoreError::Sql { path, source: e },
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod snapshot_tests;
