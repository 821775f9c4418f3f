//! `spellbridge store copy --from … --to …` (issue 34): every row the store keeps — the
//! journal with its row ids (snapshots name the row they cover), the tables' snapshots
//! and history rows, message ids, outbox and rows set aside, named values (ratings,
//! names), dice keys, STS policies, appservice transactions, relayed and latest lines,
//! the Matrix `/sync` positions handled (`sync_positions`) —
//! from one engine to the other (or the same kind), in one transaction on the
//! destination. A destination that holds any of those rows is refused unless the caller
//! says to replace them (`--replace`); the leader lease is not copied (the daemon that
//! next starts on the destination takes it).

use super::{OpenMode, SqliteStore, StoreError};

/// How a column is kept: the copy reads and writes each one by its kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// A 64-bit integer (SQLite INTEGER, PostgreSQL bigint).
    Int,
    /// A 32-bit integer on PostgreSQL (`integer`).
    Int32,
    /// A text.
    Text,
    /// A truth value (SQLite INTEGER 0/1, PostgreSQL boolean).
    Bool,
}

/// One value of a row.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Cell {
    Null,
    Int(i64),
    Text(String),
    Bool(bool),
}

/// A copied table: its name, its columns (the first is the order it is read in), and
/// whether its first column is an identity PostgreSQL numbers (set explicitly here).
pub(super) struct Table {
    pub(super) name: &'static str,
    pub(super) columns: &'static [(&'static str, Kind)],
    pub(super) identity: bool,
}

use Kind::{Bool, Int, Int32, Text};

/// Every table the store keeps, in the shape both engines share.
pub(super) const TABLES: &[Table] = &[
    Table {
        name: "journal",
        columns: &[
            ("id", Int),
            ("table_id", Int),
            ("sequence", Int),
            ("kind", Text),
            ("player", Text),
            ("command", Text),
            ("network", Text),
            ("message_id", Text),
            ("dice_seed", Int),
            ("entry", Text),
            ("events", Text),
        ],
        identity: true,
    },
    Table {
        name: "tables",
        columns: &[
            ("id", Int),
            ("game", Text),
            ("network", Text),
            ("room", Text),
            ("finished", Bool),
            ("snapshot", Text),
            ("journal_digest", Text),
            ("seal", Text),
            ("journal_upto", Int),
        ],
        identity: false,
    },
    Table {
        name: "history",
        columns: &[("table_id", Int), ("position", Int), ("entry", Text)],
        identity: false,
    },
    Table {
        name: "history_heads",
        columns: &[("table_id", Int), ("history_rows", Int), ("history_digest", Text)],
        identity: false,
    },
    Table { name: "seen_messages", columns: &[("network", Text), ("message_id", Text)], identity: false },
    Table {
        name: "outbox",
        columns: &[("id", Int), ("network", Text), ("destination", Text), ("text", Text)],
        identity: true,
    },
    Table {
        name: "outbox_set_aside",
        columns: &[
            ("id", Int),
            ("network", Text),
            ("destination", Text),
            ("text", Text),
            ("reason", Text),
            ("set_aside_at", Int),
        ],
        identity: false,
    },
    Table { name: "meta", columns: &[("key", Text), ("value", Text)], identity: false },
    Table {
        name: "dice_keys",
        columns: &[("table_id", Int), ("epoch", Int), ("key", Text)],
        identity: false,
    },
    Table {
        name: "sts_policies",
        columns: &[("host", Text), ("port", Int32), ("expires", Int)],
        identity: false,
    },
    Table { name: "appservice_txns", columns: &[("network", Text), ("txn_id", Text)], identity: false },
    Table {
        name: "relayed_lines",
        columns: &[("id", Int), ("network", Text), ("message_id", Text), ("name", Text), ("words", Text)],
        identity: true,
    },
    Table {
        name: "latest_lines",
        columns: &[("network", Text), ("room", Text), ("name", Text), ("message_id", Text), ("at", Int)],
        identity: false,
    },
    Table {
        name: "matrix_sync_positions",
        columns: &[("network", Text), ("next_batch", Text)],
        identity: false,
    },
];

/// Every row of every table in [`TABLES`], in its order.
/// Rows are read and written this many at a time, so a copy's memory stays the same
/// whatever the store's size.
pub(super) const PAGE: usize = 1000;

/// Some rows of one table, in order: the table's place in [`TABLES`], and the rows.
pub(super) type Page = (usize, Vec<Vec<Cell>>);

/// What takes each page read, in order (every table's, table after table).
pub(super) type Sink<'a> = dyn FnMut(Page) -> Result<(), StoreError> + 'a;

/// Reads every page into the sink it is given.
pub(super) type Read<'a> = dyn FnMut(&mut Sink<'_>) -> Result<(), StoreError> + 'a;

/// Where a copy reads or writes: an SQLite file or a PostgreSQL database.
#[derive(Clone, Debug)]
pub enum Place {
    /// `sqlite:PATH` (or a bare path).
    Sqlite(std::path::PathBuf),
    /// `postgres://…` (shown without its password).
    Postgres(Box<super::postgres::StoreUrl>),
}

impl Place {
    /// Reads `sqlite:PATH`, `postgres://…` or `postgresql://…`; an error says what to
    /// write instead, and never repeats a password.
    pub fn parse(text: &str) -> Result<Place, String> {
        if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            return super::postgres::StoreUrl::parse(text)
                .map(|url| Place::Postgres(Box::new(url)))
                .map_err(|e| e.to_string());
        }
        match text.strip_prefix("sqlite:") {
            Some(path) if !path.is_empty() => Ok(Place::Sqlite(path.into())),
            _ => Err(format!(
                "`{}` is not a store: write sqlite:PATH (an SQLite file) or postgres://USER:PASSWORD@HOST:PORT/DATABASE",
                if text.contains("://") { "that URL" } else { text }
            )),
        }
    }
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Place::Sqlite(path) => write!(f, "sqlite:{}", path.display()),
            Place::Postgres(url) => f.write_str(url.shown()),
        }
    }
}

/// What was copied: each table's name and row count.
pub type Copied = Vec<(&'static str, usize)>;

/// Why a copy did not happen.
#[derive(Debug, thiserror::Error)]
pub enum CopyError {
    /// The destination already keeps rows.
    #[error(
        "{to} is not empty ({rows} rows in {table}, …); copy into an empty database, or add --replace to delete what it holds first"
    )]
    NotEmpty {
        /// The destination.
        to: String,
        /// A table with rows.
        table: &'static str,
        /// How many.
        rows: usize,
    },
    /// The source needs the player-id upgrade a start or `verify` makes first.
    #[error(
        "{from} holds player ids from before they named their network; run `spellbridge verify --db {path}` once (it upgrades them), then copy"
    )]
    NeedsUpgrade {
        /// The source.
        from: String,
        /// Its file.
        path: String,
    },
    /// A daemon leads on the destination.
    #[error("a daemon ({holder}) leads on {to}; stop it before copying into its database")]
    Leading {
        /// The destination.
        to: String,
        /// Who holds its lease.
        holder: String,
    },
    /// The source and the destination are the same.
    #[error("--from and --to are the same database; name another destination")]
    Same,
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Copies every row from `from` to `to`; with `replace`, what `to` holds is deleted first
/// (in the same transaction), else a `to` with rows is refused and left as it was.
pub fn copy(from: &Place, to: &Place, replace: bool) -> Result<Copied, CopyError> {
    if from.to_string() == to.to_string() {
        return Err(CopyError::Same);
    }
    let source = match from {
        Place::Sqlite(path) => {
            let store = SqliteStore::open(path, OpenMode::MustExist, super::Durability::Full)?;
            if super::player_ids::needs_upgrade(&store)? {
                let path = path.display().to_string();
                return Err(CopyError::NeedsUpgrade { from: from.to_string(), path });
            }
            Source::Sqlite(store)
        }
        Place::Postgres(url) => Source::Postgres(super::postgres::PgStore::open(url, None)?),
    };
    let mut counts = vec![0; TABLES.len()];
    let mut read = |sink: &mut Sink<'_>| -> Result<(), StoreError> {
        let mut counted = |page: Page| {
            counts[page.0] += page.1.len();
            sink(page)
        };
        match &source {
            Source::Sqlite(store) => store.pages(&mut counted),
            Source::Postgres(store) => store.pages(&mut counted),
        }
    };
    let held = match to {
        Place::Sqlite(path) => {
            let store = SqliteStore::open(path, OpenMode::CreateIfMissing, super::Durability::Full)?;
            store.load_pages(replace, &mut read)?
        }
        Place::Postgres(url) => {
            let store = super::postgres::PgStore::open(url, None)?;
            if let Some(holder) = store.leader()? {
                return Err(CopyError::Leading { to: to.to_string(), holder });
            }
            store.load_pages(replace, &mut read)?
        }
    };
    if let Some((table, rows)) = held {
        return Err(CopyError::NotEmpty { to: to.to_string(), table, rows });
    }
    Ok(TABLES.iter().zip(counts).map(|(table, rows)| (table.name, rows)).collect())
}

/// The store copied from.
enum Source {
    Sqlite(SqliteStore),
    Postgres(super::postgres::PgStore),
}

pub(super) fn first_held(counts: &[usize]) -> Option<(&'static str, usize)> {
    TABLES.iter().zip(counts).find(|(_, n)| **n > 0).map(|(table, n)| (table.name, *n))
}

impl SqliteStore {
    /// Every row of every table in [`TABLES`].
    /// Every row of every table in [`TABLES`], [`PAGE`] at a time, as of one moment.
    fn pages(&self, sink: &mut Sink<'_>) -> Result<(), StoreError> {
        let fail = |e| super::classify(self.path(), e);
        // One read transaction: every table as of one moment, even beside a writer.
        let reading = self.connection().unchecked_transaction().map_err(fail)?;
        for (place, table) in TABLES.iter().enumerate() {
            let names: Vec<&str> = table.columns.iter().map(|(name, _)| *name).collect();
            let sql = format!("SELECT {} FROM {} ORDER BY 1", names.join(", "), table.name);
            let mut statement = reading.prepare(&sql).map_err(fail)?;
            let mut rows = statement.query([]).map_err(fail)?;
            let mut page = Vec::with_capacity(PAGE);
            while let Some(row) = rows.next().map_err(fail)? {
                let mut values = Vec::with_capacity(table.columns.len());
                for (i, (column, kind)) in table.columns.iter().enumerate() {
                    let value = row.get_ref(i).map_err(fail)?;
                    values.push(sqlite_cell(value, *kind).ok_or_else(|| StoreError::BadRow {
                        path: self.path().to_path_buf(),
                        detail: format!("a row of {}: its {column} is not {kind:?}", table.name),
                    })?);
                }
                page.push(values);
                if page.len() == PAGE {
                    sink((place, std::mem::replace(&mut page, Vec::with_capacity(PAGE))))?;
                }
            }
            if !page.is_empty() {
                sink((place, page))?;
            }
        }
        Ok(())
    }

    /// Writes every page `read` gives in one transaction; returns the first table that
    /// holds rows (and writes nothing) unless `replace`, which deletes them first.
    fn load_pages(
        &self,
        replace: bool,
        read: &mut Read<'_>,
    ) -> Result<Option<(&'static str, usize)>, StoreError> {
        let fail = |e| super::classify(self.path(), e);
        let transaction = self.connection().unchecked_transaction().map_err(fail)?;
        let mut counts = Vec::new();
        for table in TABLES {
            let n: i64 = transaction
                .query_row(&format!("SELECT count(*) FROM {}", table.name), [], |row| row.get(0))
                .map_err(fail)?;
            counts.push(usize::try_from(n).unwrap_or(0));
        }
        if let Some(held) = first_held(&counts).filter(|_| !replace) {
            return Ok(Some(held));
        }
        for table in TABLES {
            transaction.execute(&format!("DELETE FROM {}", table.name), []).map_err(fail)?;
        }
        read(&mut |(place, rows): Page| {
            let table = &TABLES[place];
            let names: Vec<&str> = table.columns.iter().map(|(name, _)| *name).collect();
            let marks: Vec<String> = (1..=names.len()).map(|i| format!("?{i}")).collect();
            let sql =
                format!("INSERT INTO {} ({}) VALUES ({})", table.name, names.join(", "), marks.join(", "));
            let mut insert = transaction.prepare_cached(&sql).map_err(fail)?;
            for row in rows {
                let values: Vec<rusqlite::types::Value> = row.iter().map(sqlite_value).collect();
                insert.execute(rusqlite::params_from_iter(values)).map_err(fail)?;
            }
            Ok(())
        })?;
        transaction.commit().map_err(fail)?;
        Ok(None)
    }
}

fn sqlite_cell(value: rusqlite::types::ValueRef<'_>, kind: Kind) -> Option<Cell> {
    use rusqlite::types::ValueRef;
    Some(match (value, kind) {
        (ValueRef::Null, _) => Cell::Null,
        (ValueRef::Integer(n), Int | Int32) => Cell::Int(n),
        (ValueRef::Integer(n), Bool) => Cell::Bool(n != 0),
        (ValueRef::Text(bytes), Text) => Cell::Text(String::from_utf8(bytes.to_vec()).ok()?),
        _ => return None,
    })
}

fn sqlite_value(cell: &Cell) -> rusqlite::types::Value {
    use rusqlite::types::Value;
    match cell {
        Cell::Null => Value::Null,
        Cell::Int(n) => Value::Integer(*n),
        Cell::Text(text) => Value::Text(text.clone()),
        Cell::Bool(b) => Value::Integer(i64::from(*b)),
    }
}
