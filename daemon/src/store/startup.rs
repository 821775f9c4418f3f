//! Loading the games on start, checking each table's snapshot against its seal and its
//! journal (`seal`): a table whose snapshot was changed outside spellbridge, whose journal
//! no longer hashes to the digest sealed with it, whose snapshot does not load, or that has
//! journal rows and no snapshot, is rebuilt by replaying its journal, logged as an ERROR
//! naming the table, and returned so the daemon counts it; with [`Policy::Refuse`]
//! (`spellbridge run --strict`) the start is refused instead. A table not sealed yet (a
//! database from before seals, or just upgraded) is replayed and compared with its
//! snapshot, then sealed.
//!
//! A snapshot covers its table's journal up to a point (`journal_upto`, the id of the last
//! row it includes): the seal covers the rows up to there, and the table's rows after it
//! (the commits since its last snapshot, see [`super::SNAPSHOT_EVERY`]) are replayed onto
//! the loaded snapshot, which is then written again, sealed up to the journal's end.

use std::collections::BTreeMap;

use rusqlite::params;
use serde_json::Value;
use spellbridge_core::Registry;
use spellbridge_core::dice::DiceKey;

use super::ratings::Ratings;
use super::seal::{self, Digest};
use super::{SqliteStore, StoreError, sql_u64};
use crate::journal::{Entry, TableId};
use crate::router::{ReplayError, Router, RouterConfig};

/// What start-up does with a table whose snapshot cannot be trusted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Rebuild it from its journal (and log and report it).
    Rebuild,
    /// Refuse to start (`--strict`).
    Refuse,
}

/// Why a table's snapshot was not trusted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unsound {
    /// The snapshot does not match the seal stored with it.
    #[error("its snapshot does not match the checksum sealed with it (changed outside spellbridge)")]
    SnapshotEdited,
    /// The table's journal rows no longer hash to the digest sealed with the snapshot.
    #[error(
        "its journal does not match the checksum sealed with its snapshot (journal rows changed or lost)"
    )]
    JournalEdited,
    /// Not sealed yet, and replaying its journal gives another state.
    #[error("its snapshot differs from its journal's replay at {0}")]
    Differs(String),
    /// The snapshot does not load.
    #[error("its snapshot does not load ({0})")]
    DoesNotLoad(String),
    /// The journal has rows for it but there is no snapshot.
    #[error("it has journal entries but no snapshot")]
    NoSnapshot,
}

/// One table found unsound at start.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("table {table}: {problem}")]
pub struct TableProblem {
    /// The table.
    pub table: TableId,
    /// What was wrong.
    pub problem: Unsound,
}

/// The games as loaded, and the tables rebuilt from their journals.
pub struct Loaded {
    /// The router with every table and the lobby.
    pub router: Router,
    /// Tables whose snapshots were not trusted and were rebuilt.
    pub rebuilt: Vec<TableProblem>,
}

/// One row of `tables` as stored.
pub(super) struct Row {
    pub(super) id: TableId,
    pub(super) snapshot: Vec<u8>,
    pub(super) digest: Option<String>,
    pub(super) seal: Option<String>,
    /// The id of the last journal row the snapshot covers.
    pub(super) upto: i64,
}

impl Row {
    /// What [`Row::read`] reads, in its order.
    pub(super) const COLUMNS: &str = "id, CAST(snapshot AS BLOB), journal_digest, seal, journal_upto";

    /// Reads [`Row::COLUMNS`].
    pub(super) fn read(row: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
        Ok(Row {
            id: row.get::<_, i64>(0)? as TableId,
            snapshot: row.get::<_, Option<Vec<u8>>>(1)?.unwrap_or_default(),
            digest: row.get(2).ok(),
            seal: row.get(3).ok(),
            upto: row.get::<_, Option<i64>>(4).ok().flatten().unwrap_or(0),
        })
    }
}

/// A table's journal as start-up and `verify` check it against its snapshot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Covered {
    /// The digest of its rows up to the snapshot's point: what the seal must match.
    pub(super) sealed: Digest,
    /// The digest of all its rows.
    pub(super) whole: Digest,
    /// The id of its last row.
    pub(super) last: i64,
    /// How many of its rows come after the snapshot's point.
    pub(super) after: usize,
}

impl Covered {
    /// A table with no journal rows.
    const NONE: Covered = Covered { sealed: seal::EMPTY, whole: seal::EMPTY, last: 0, after: 0 };

    /// Adds journal row `id` of `table` (its stored `entry` and `events` text) to
    /// `digests`, the rows read so far in order; `points` as in `journal_digests`.
    pub(super) fn fold(
        digests: &mut BTreeMap<TableId, Covered>,
        points: &BTreeMap<TableId, i64>,
        table: TableId,
        id: i64,
        entry: &[u8],
        events: &[u8],
    ) {
        let covered = digests.entry(table).or_insert(Covered::NONE);
        covered.whole = seal::extend(&covered.whole, entry, events);
        covered.last = id;
        if id <= points.get(&table).copied().unwrap_or(i64::MAX) {
            covered.sealed = covered.whole;
        } else {
            covered.after += 1;
        }
    }
}

/// What start-up reads from an engine, and writes back to it: the checks below are the
/// same on SQLite and PostgreSQL, only the rows come from different places.
pub(super) trait Source {
    /// Every row of `tables`, by id.
    fn table_rows(&self) -> Result<Vec<Row>, StoreError>;
    /// See [`SqliteStore::journal_digests`].
    fn journal_digests(
        &self,
        points: &BTreeMap<TableId, i64>,
    ) -> Result<BTreeMap<TableId, Covered>, StoreError>;
    /// One table's journal rows after `after` (a row id), with their ids, in order.
    fn entries_after(&self, table: TableId, after: i64) -> Result<Vec<(i64, Entry)>, StoreError>;
    /// A stored snapshot with its history rows put back (see `history`).
    fn assembled(&self, table: TableId, snapshot: &[u8]) -> Result<Value, String>;
    /// Writes the router's snapshots of `tables`, sealed with their whole journals.
    fn write_back(&self, router: &Router, tables: &[(TableId, Covered)]) -> Result<(), StoreError>;
    /// Every dice key kept.
    fn all_dice_keys(&self) -> Result<Vec<(TableId, u64, DiceKey)>, StoreError>;
    /// The lobby's journal entries, in order.
    fn lobby(&self) -> Result<Vec<Entry>, StoreError>;
    /// A journal entry did not replay.
    fn replay_failed(&self, source: ReplayError) -> StoreError;
    /// A stored row does not read.
    fn bad_row(&self, detail: String) -> StoreError;
    /// Start-up was told to refuse these tables.
    fn unsound(&self, problems: Vec<TableProblem>) -> StoreError;
}

/// Loads every table (from its snapshot and the journal rows after it when sound, else
/// by replaying its journal, as `policy` allows), writes back the rebuilt and newly
/// sealed snapshots, then replays the lobby.
pub(super) fn load_tables(
    source: &impl Source,
    registry: Registry,
    options: RouterConfig,
    policy: Policy,
) -> Result<Loaded, StoreError> {
    let mut router = Router::new(registry, options);
    router.add_keys(source.all_dice_keys()?);
    let rows = source.table_rows()?;
    let mut covered = source.journal_digests(&points(&rows))?;
    let mut problems = Vec::new();
    let mut reseal = Vec::new();
    for row in rows {
        let journal = covered.remove(&row.id).unwrap_or(Covered { last: row.upto, ..Covered::NONE });
        let problem = match trust(&row, &journal.sealed) {
            Trust::Unsealed => {
                let rebuilt = rebuild(source, &mut router, row.id, row.upto)?;
                let stored = source.assembled(row.id, &row.snapshot);
                match (rebuilt, stored) {
                    (_, Err(e)) => Some(Unsound::DoesNotLoad(e.to_string())),
                    (None, _) => None,
                    (Some(rebuilt), Ok(stored)) => {
                        super::difference::first_difference(&rebuilt, &stored, String::new())
                            .map(Unsound::Differs)
                    }
                }
            }
            Trust::Broken(problem) => {
                rebuild(source, &mut router, row.id, i64::MAX)?;
                Some(problem)
            }
            Trust::Sealed => match restore(source, &mut router, &row) {
                Ok(()) => None,
                Err(e) => {
                    rebuild(source, &mut router, row.id, i64::MAX)?;
                    Some(Unsound::DoesNotLoad(e.to_string()))
                }
            },
        };
        if let Some(problem) = problem {
            problems.push(TableProblem { table: row.id, problem });
            reseal.push((row.id, journal));
        } else if row.seal.is_none() || journal.after > 0 {
            reseal.push((row.id, journal));
        }
    }
    for (table, journal) in covered {
        rebuild(source, &mut router, table, i64::MAX)?;
        problems.push(TableProblem { table, problem: Unsound::NoSnapshot });
        reseal.push((table, journal));
    }
    if policy == Policy::Refuse && !problems.is_empty() {
        return Err(source.unsound(problems));
    }
    for problem in &problems {
        tracing::error!(
            table = problem.table,
            problem = %problem.problem,
            "table {} rebuilt from its journal: {}",
            problem.table,
            problem.problem
        );
    }
    source.write_back(&router, &reseal)?;
    for entry in source.lobby()? {
        router.replay(&entry).map_err(|e| source.replay_failed(e))?;
    }
    Ok(Loaded { router, rebuilt: problems })
}

/// Loads a sealed table's snapshot into `router` and replays the table's journal rows
/// after its point onto it; an error says why it would not.
fn restore(source: &impl Source, router: &mut Router, row: &Row) -> Result<(), String> {
    let stored = source.assembled(row.id, &row.snapshot)?;
    router.restore_table(&stored).map_err(|e| e.to_string())?;
    for (id, entry) in source.entries_after(row.id, row.upto).map_err(|e| e.to_string())? {
        router
            .replay(&entry)
            .map_err(|e| format!("journal row {id}, after the snapshot, does not replay onto it: {e}"))?;
    }
    Ok(())
}

/// Replays one table's journal into `router`; an error if that does not make the table.
/// Returns the table as it was after its last row up to `upto` (a row id), to compare
/// with a snapshot that covers the journal up to there.
fn rebuild(
    source: &impl Source,
    router: &mut Router,
    table: TableId,
    upto: i64,
) -> Result<Option<Value>, StoreError> {
    let mut at_point = None;
    for (id, entry) in source.entries_after(table, 0)? {
        if id > upto && at_point.is_none() {
            at_point = Some(router.table_snapshot(table));
        }
        router.replay(&entry).map_err(|e| source.replay_failed(e))?;
    }
    let now = router.table_snapshot(table);
    if now.is_none() {
        return Err(source.bad_row(format!(
            "table {table} cannot be rebuilt: its journal never opens it; restore a backup, or check it with `spellbridge verify`"
        )));
    }
    Ok(at_point.unwrap_or(now))
}

impl Source for SqliteStore {
    fn table_rows(&self) -> Result<Vec<Row>, StoreError> {
        let fail = |e| self.error(e);
        let mut statement = self
            .connection
            .prepare(&format!("SELECT {} FROM tables ORDER BY id", Row::COLUMNS))
            .map_err(fail)?;
        statement.query_map([], Row::read).map_err(fail)?.collect::<Result<Vec<_>, _>>().map_err(fail)
    }

    fn journal_digests(
        &self,
        points: &BTreeMap<TableId, i64>,
    ) -> Result<BTreeMap<TableId, Covered>, StoreError> {
        SqliteStore::journal_digests(self, points)
    }

    fn entries_after(&self, table: TableId, after: i64) -> Result<Vec<(i64, Entry)>, StoreError> {
        SqliteStore::entries_after(self, table, after)
    }

    fn assembled(&self, table: TableId, snapshot: &[u8]) -> Result<Value, String> {
        SqliteStore::assembled(self, table, snapshot)
    }

    fn write_back(&self, router: &Router, tables: &[(TableId, Covered)]) -> Result<(), StoreError> {
        if tables.is_empty() {
            return Ok(());
        }
        let fail = |e| self.error(e);
        let transaction = self.connection.unchecked_transaction().map_err(fail)?;
        for (table, journal) in tables {
            if let Some(stored) = router.stored_table(*table, 0) {
                super::sealed::write_snapshot(&transaction, *table, &stored, &journal.whole, journal.last)
                    .map_err(fail)?;
            }
        }
        transaction.commit().map_err(fail)
    }

    fn all_dice_keys(&self) -> Result<Vec<(TableId, u64, DiceKey)>, StoreError> {
        self.dice_keys(None)
    }

    fn lobby(&self) -> Result<Vec<Entry>, StoreError> {
        self.entries(None)
    }

    fn replay_failed(&self, source: ReplayError) -> StoreError {
        StoreError::Replay { path: self.path.clone(), source }
    }

    fn bad_row(&self, detail: String) -> StoreError {
        StoreError::BadRow { path: self.path.clone(), detail }
    }

    fn unsound(&self, problems: Vec<TableProblem>) -> StoreError {
        StoreError::Unsound { path: self.path.clone(), problems }
    }
}

impl SqliteStore {
    /// Rebuilds the router from the database, checking every table's snapshot against its
    /// seal and journal; what happens to an unsound one is `policy`'s choice. Rebuilt and
    /// newly sealed snapshots are written back, so the next start finds them sound.
    pub fn load_checked(
        &self,
        registry: Registry,
        options: RouterConfig,
        policy: Policy,
    ) -> Result<Loaded, StoreError> {
        // A database from before player ids named their network: its journal is
        // rewritten and every table rebuilt from it (and sealed) in one step.
        if super::player_ids::needs_upgrade(self)? {
            let mut router = super::player_ids::upgrade(self, registry, options)?;
            load_ratings(self, &mut router);
            self.load_relayed(&mut router);
            return Ok(Loaded { router, rebuilt: Vec::new() });
        }
        let mut loaded = load_tables(self, registry, options, policy)?;
        load_ratings(self, &mut loaded.router);
        self.load_relayed(&mut loaded.router);
        if let Ok(Some(names)) = self.meta(crate::router::SHOWN_NAMES_KEY) {
            loaded.router.load_names(&names);
        }
        Ok(loaded)
    }

    /// Every table's journal digests, computed from its journal rows as they are now: up to
    /// the point its snapshot covers (`points`; a table not in it, all its rows), and whole.
    pub(super) fn journal_digests(
        &self,
        points: &BTreeMap<TableId, i64>,
    ) -> Result<BTreeMap<TableId, Covered>, StoreError> {
        let fail = |e| self.error(e);
        let mut statement = self
            .connection
            .prepare(
                "SELECT table_id, id, CAST(entry AS BLOB), CAST(events AS BLOB) FROM journal
                 WHERE table_id IS NOT NULL ORDER BY table_id, id",
            )
            .map_err(fail)?;
        let mut rows = statement.query([]).map_err(fail)?;
        let mut digests = BTreeMap::new();
        while let Some(row) = rows.next().map_err(fail)? {
            let table = row.get::<_, i64>(0).map_err(fail)? as TableId;
            let id = row.get::<_, i64>(1).map_err(fail)?;
            let entry = row.get::<_, Option<Vec<u8>>>(2).map_err(fail)?.unwrap_or_default();
            let events = row.get::<_, Option<Vec<u8>>>(3).map_err(fail)?.unwrap_or_default();
            Covered::fold(&mut digests, points, table, id, &entry, &events);
        }
        Ok(digests)
    }

    /// One table's journal rows after `after` (a row id), with their ids, in order.
    pub(super) fn entries_after(&self, table: TableId, after: i64) -> Result<Vec<(i64, Entry)>, StoreError> {
        let fail = |e| self.error(e);
        let mut statement = self
            .connection
            .prepare_cached("SELECT id, entry FROM journal WHERE table_id = ?1 AND id > ?2 ORDER BY id")
            .map_err(fail)?;
        let rows = statement
            .query_map(params![sql_u64(table), after], |row| {
                Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
            })
            .map_err(fail)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(fail)?;
        rows.into_iter()
            .map(|(id, text)| {
                let entry = serde_json::from_str(&text).map_err(|e| StoreError::BadRow {
                    path: self.path.clone(),
                    detail: format!("journal row {id}: {e}"),
                })?;
                Ok((id, entry))
            })
            .collect()
    }
}

/// Folds the whole journal into the router's ratings, kept up to date from here on
/// with each new entry; a journal that does not read leaves them off (logged;
/// `spellbridge verify` names the row).
pub(super) fn load_ratings(store: &impl Ratings, router: &mut Router) {
    match store.entries() {
        Ok(journal) => {
            router.load_ratings(&journal);
            // Ratings kept by an older spellbridge (derived by older rules, e.g. before
            // unrated games) are replaced by the ones derived now, so `verify` agrees.
            let derived = router.ratings_text();
            if store.named(super::ratings::META_KEY).ok().flatten().is_some_and(|kept| kept != derived)
                && let Err(error) = store.keep_ratings_text(&derived)
            {
                tracing::warn!(%error, "the ratings derived again could not be kept");
            }
        }
        Err(error) => {
            tracing::warn!(%error, "ratings are not kept up to date: the journal does not read");
            router.stop_ratings();
        }
    }
}

/// How far a table's snapshot can be trusted before loading it.
pub(super) enum Trust {
    /// Its seal and journal digest match.
    Sealed,
    /// It has no seal yet.
    Unsealed,
    /// Its seal or journal does not match.
    Broken(Unsound),
}

pub(super) fn trust(row: &Row, journal: &Digest) -> Trust {
    let Some(stored_seal) = &row.seal else { return Trust::Unsealed };
    let stored_digest = row.digest.as_deref().and_then(seal::from_hex);
    match (seal::from_hex(stored_seal), stored_digest) {
        (Some(stored_seal), Some(stored_digest))
            if stored_seal == seal::seal(&stored_digest, &row.snapshot) =>
        {
            if stored_digest == *journal {
                Trust::Sealed
            } else {
                Trust::Broken(Unsound::JournalEdited)
            }
        }
        _ => Trust::Broken(Unsound::SnapshotEdited),
    }
}

/// Each stored table's point: the id of the last journal row its snapshot covers.
pub(super) fn points(rows: &[Row]) -> BTreeMap<TableId, i64> {
    rows.iter().map(|row| (row.id, row.upto)).collect()
}
