//! The site's own read-only connection to the database: the tables' stored snapshots and
//! their journal entries, only as committed (WAL lets it read beside the store's writes;
//! on PostgreSQL it is a connection of its own, `store::postgres::site`).
//! A snapshot is read without its history rows (a Thaum table's accepted actions, which
//! the site takes from the journal instead). A table whose snapshot is behind its journal
//! (snapshots are written every few entries) is shown as it is now: the journal rows after
//! its snapshot are replayed onto it (`store::current`), once per new journal row — the
//! result is kept until the table moves again, so watchers and page views do not repeat
//! the replay.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension};
use serde_json::Value;
use spellbridge_core::{NetworkId, RoomId};

use super::error::SiteError;
use crate::games::Games;
use crate::journal::{Entry, TableId};
use crate::store::StoreError;
use crate::store::postgres::{PgStore, StoreUrl};

/// How many rows of each kind the index looks at.
pub const LISTED: usize = 200;

/// How many brought-up-to-date tables are kept at most (the whole set is dropped beyond:
/// a table is then replayed again at its next view).
const CAUGHT_UP_KEPT: usize = 4096;

/// One stored table.
#[derive(Clone, Debug)]
pub struct TableRow {
    /// Its number.
    pub id: TableId,
    /// Its game.
    pub game: String,
    /// The network of its room (a bridged table's first room).
    pub network: NetworkId,
    /// Its room.
    pub room: RoomId,
    /// Whether it has ended.
    pub finished: bool,
    /// Its stored snapshot (`Router::table_snapshot`, without history rows).
    pub snapshot: Value,
}

impl TableRow {
    /// How many actions the table has taken (its snapshot's `sequence`).
    pub fn sequence(&self) -> u64 {
        self.snapshot.get("sequence").and_then(Value::as_u64).unwrap_or(0)
    }
}

/// A read-only connection.
pub struct Reader {
    source: Source,
    /// The games (as SIGHUP leaves them), to replay a table's journal rows after its
    /// snapshot.
    games: Games,
    /// Tables behind their journal as last brought up to date: the journal row they were
    /// replayed up to, and their snapshot then.
    caught_up: Mutex<HashMap<TableId, (i64, Value)>>,
}

/// Where the site reads: the SQLite file, or PostgreSQL through a store of its own that
/// holds no lease (it commits nothing).
enum Source {
    Sqlite { connection: Box<Mutex<Connection>>, path: PathBuf },
    Postgres(Box<PgStore>),
}

impl Reader {
    /// Connects to the PostgreSQL database at `url` (brought up to date by the store),
    /// reading only, for the games `games` holds.
    pub fn open_postgres(url: &StoreUrl, games: Games) -> Result<Reader, SiteError> {
        let store = PgStore::open(url, None).map_err(|e| SiteError::Store(Box::new(e)))?;
        Ok(Reader { source: Source::Postgres(Box::new(store)), games, caught_up: Mutex::default() })
    }

    /// Opens `path` read-only, for the games `games` holds.
    pub fn open(path: &Path, games: Games) -> Result<Reader, SiteError> {
        let fail = |source| SiteError::Sql { path: path.display().to_string(), source };
        let connection = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(fail)?;
        connection.busy_timeout(Duration::from_secs(2)).map_err(fail)?;
        let source = Source::Sqlite { connection: Box::new(Mutex::new(connection)), path: path.to_owned() };
        Ok(Reader { source, games, caught_up: Mutex::default() })
    }

    /// Runs `sqlite` on the SQLite connection, or `postgres` on the PostgreSQL store.
    fn with<T>(
        &self,
        sqlite: impl FnOnce(&Connection) -> rusqlite::Result<T>,
        postgres: impl FnOnce(&PgStore) -> Result<T, StoreError>,
    ) -> Result<T, SiteError> {
        match &self.source {
            Source::Sqlite { connection, path } => {
                let connection = connection.lock().unwrap_or_else(PoisonError::into_inner);
                sqlite(&connection)
                    .map_err(|source| SiteError::Sql { path: path.display().to_string(), source })
            }
            Source::Postgres(store) => postgres(store).map_err(|e| SiteError::Store(Box::new(e))),
        }
    }

    /// A value of the store's `meta` table, if set (the names kept for players).
    pub fn meta(&self, key: &str) -> Result<Option<String>, SiteError> {
        self.with(
            |c| {
                c.prepare_cached("SELECT value FROM meta WHERE key = ?1")?
                    .query_row([key], |row| row.get(0))
                    .optional()
            },
            |pg| pg.meta(key),
        )
    }

    /// One table, if it exists.
    pub fn table(&self, id: TableId) -> Result<Option<TableRow>, SiteError> {
        let Ok(key) = i64::try_from(id) else { return Ok(None) };
        let row = self.with(
            |c| {
                c.prepare_cached(
                    "SELECT id, game, network, room, finished, snapshot FROM tables WHERE id = ?1",
                )?
                .query_row([key], raw_row)
                .optional()
            },
            |pg| Ok(pg.site_tables(Some(key), false, 1)?.pop()),
        )?;
        row.map(|row| self.current(row)).transpose()
    }

    /// The newest `LISTED` tables that are still playing, or that have finished; newest first.
    pub fn tables(&self, finished: bool) -> Result<Vec<TableRow>, SiteError> {
        let rows = self.with(
            |c| {
                c.prepare_cached(
                    "SELECT id, game, network, room, finished, snapshot FROM tables
                     WHERE finished = ?1 ORDER BY id DESC LIMIT ?2",
                )?
                .query_map(rusqlite::params![finished, LISTED as i64], raw_row)?
                .collect::<rusqlite::Result<Vec<_>>>()
            },
            |pg| pg.site_tables(None, finished, LISTED as i64),
        )?;
        rows.into_iter().map(|row| self.current(row)).collect()
    }

    /// A stored row as its table is now: a snapshot behind its journal is brought up to
    /// date (its history still left out).
    fn current(&self, row: RawRow) -> Result<TableRow, SiteError> {
        let mut table = table_row(row)?;
        let mut caught_up = self.caught_up.lock().unwrap_or_else(PoisonError::into_inner);
        let id = table.id;
        let Some(head) = self.with(|c| crate::store::current::behind(c, id), |pg| pg.behind(id))? else {
            caught_up.remove(&table.id);
            return Ok(table);
        };
        if let Some((upto, snapshot)) = caught_up.get(&table.id)
            && *upto == head
        {
            table.snapshot = snapshot.clone();
            return Ok(table);
        }
        let now = match &self.source {
            Source::Sqlite { connection, .. } => {
                let connection = connection.lock().unwrap_or_else(PoisonError::into_inner);
                crate::store::current::table(&connection, &self.games.now(), id)
                    .map_err(|e| SiteError::BadRow(format!("table {id}: {e}")))?
            }
            Source::Postgres(pg) => {
                pg.current_table(&self.games.now(), id).map_err(|e| SiteError::Store(Box::new(e)))?
            }
        };
        let Some(mut now) = now else { return Ok(table) };
        let kept_apart = table.snapshot.pointer("/state/history").is_none();
        if let (true, Some(state)) = (kept_apart, now.get_mut("state").and_then(Value::as_object_mut)) {
            state.remove("history");
        }
        if caught_up.len() >= CAUGHT_UP_KEPT {
            caught_up.clear();
        }
        caught_up.insert(table.id, (head, now.clone()));
        table.snapshot = now;
        Ok(table)
    }

    /// Every table's place: its number, network and room.
    pub fn places(&self) -> Result<Vec<(TableId, NetworkId, RoomId)>, SiteError> {
        let rows = self.with(
            |c| {
                c.prepare_cached("SELECT id, network, room FROM tables")?
                    .query_map([], |row| Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?, row.get(2)?)))?
                    .collect::<rusqlite::Result<Vec<(i64, String, String)>>>()
            },
            PgStore::places,
        )?;
        Ok(rows
            .into_iter()
            .map(|(id, network, room)| (id as TableId, NetworkId::new(network), RoomId::new(room)))
            .collect())
    }

    /// One table's journal entries, in order.
    pub fn entries(&self, id: TableId) -> Result<Vec<Entry>, SiteError> {
        let Ok(key) = i64::try_from(id) else { return Ok(Vec::new()) };
        let rows = self.with(
            |c| {
                c.prepare_cached("SELECT id, entry FROM journal WHERE table_id = ?1 ORDER BY id")?
                    .query_map([key], |row| Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?)))?
                    .collect::<rusqlite::Result<Vec<_>>>()
            },
            |pg| pg.journal_rows(Some(key)),
        )?;
        rows.iter().map(|(_, text)| entry(text)).collect()
    }

    /// Every journal entry, in commit order, with the number of the last row.
    pub fn journal(&self) -> Result<(i64, Vec<Entry>), SiteError> {
        let rows = self.with(
            |c| {
                c.prepare_cached("SELECT id, entry FROM journal ORDER BY id")?
                    .query_map([], |row| Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?)))?
                    .collect::<rusqlite::Result<Vec<_>>>()
            },
            |pg| pg.journal_rows(None),
        )?;
        let last = rows.last().map_or(0, |(id, _)| *id);
        let entries = rows.iter().map(|(_, text)| entry(text)).collect::<Result<_, _>>()?;
        Ok((last, entries))
    }

    /// The number of the journal's last row (0 when empty).
    pub fn journal_head(&self) -> Result<i64, SiteError> {
        self.with(
            |c| c.query_row("SELECT COALESCE(MAX(id), 0) FROM journal", [], |row| row.get(0)),
            PgStore::journal_head,
        )
    }
}

/// A `tables` row as the site reads it: id, game, network, room, finished, snapshot.
pub(crate) type RawRow = (i64, String, String, String, bool, String);

fn raw_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<RawRow> {
    Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?, row.get(4)?, row.get(5)?))
}

fn table_row((id, game, network, room, finished, snapshot): RawRow) -> Result<TableRow, SiteError> {
    let mut snapshot: Value = serde_json::from_str(&snapshot)
        .map_err(|e| SiteError::BadRow(format!("the snapshot of table {id}: {e}")))?;
    if let Some(object) = snapshot.as_object_mut() {
        object.remove("history_rows");
        object.remove("history_digest");
    }
    Ok(TableRow {
        id: id as TableId,
        game,
        network: NetworkId::new(network),
        room: RoomId::new(room),
        finished,
        snapshot,
    })
}

fn entry(text: &str) -> Result<Entry, SiteError> {
    serde_json::from_str(text).map_err(|e| SiteError::BadRow(format!("a journal entry: {e}")))
}
