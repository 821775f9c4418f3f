//! Loading the games on start, checking each table's snapshot against its seal and its
//! journal (`seal`): a table whose snapshot was changed outside spellbridge, whose journal
//! no longer hashes to the digest sealed with it, whose snapshot does not load, or that has
//! journal rows and no snapshot, is rebuilt by replaying its journal, logged as an ERROR
//! naming the table, and returned so the daemon counts it; with [`Policy::Refuse`]
//! (`spellbridge run --strict`) the start is refused instead. A table not sealed yet (a
//! database from before seals, or just upgraded) is replayed and compared with its
//! snapshot, then sealed.

use std::collections::BTreeMap;

use rusqlite::{Connection, OptionalExtension, params};
use spellbridge_core::Registry;

use super::seal::{self, Digest};
use super::{Store, StoreError, sql_u64};
use crate::journal::TableId;
use crate::router::{ReplayError, Router, RouterOptions, StoredTable};

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
    digest: Option<String>,
    seal: Option<String>,
}

impl Row {
    /// Reads `id, CAST(snapshot AS BLOB), journal_digest, seal`.
    pub(super) fn read(row: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
        Ok(Row {
            id: row.get::<_, i64>(0)? as TableId,
            snapshot: row.get::<_, Option<Vec<u8>>>(1)?.unwrap_or_default(),
            digest: row.get(2).ok(),
            seal: row.get(3).ok(),
        })
    }
}

impl Store {
    /// Rebuilds the router from the database, checking every table's snapshot against its
    /// seal and journal; what happens to an unsound one is `policy`'s choice. Rebuilt and
    /// newly sealed snapshots are written back, so the next start finds them sound.
    pub fn load_checked(
        &self,
        registry: Registry,
        options: RouterOptions,
        policy: Policy,
    ) -> Result<Loaded, StoreError> {
        // A database from before player ids named their network: its journal is
        // rewritten and every table rebuilt from it (and sealed) in one step.
        if super::player_ids::needs_upgrade(self)? {
            let mut router = super::player_ids::upgrade(self, registry, options)?;
            self.load_ratings(&mut router);
            self.load_relayed(&mut router);
            return Ok(Loaded { router, rebuilt: Vec::new() });
        }
        let mut router = Router::new(registry, options);
        router.add_keys(self.dice_keys(None)?);
        let fail = |e| self.error(e);
        let mut digests = self.journal_digests()?;
        let mut statement = self
            .connection
            .prepare("SELECT id, CAST(snapshot AS BLOB), journal_digest, seal FROM tables ORDER BY id")
            .map_err(fail)?;
        let rows =
            statement.query_map([], Row::read).map_err(fail)?.collect::<Result<Vec<_>, _>>().map_err(fail)?;
        let mut problems = Vec::new();
        let mut reseal = Vec::new();
        for row in rows {
            let journal = digests.remove(&row.id).unwrap_or(seal::EMPTY);
            let problem = match trust(&row, &journal) {
                Trust::Unsealed => {
                    self.rebuild(&mut router, row.id)?;
                    let rebuilt = router.table_snapshot(row.id);
                    let stored = self.assembled(row.id, &row.snapshot);
                    match (rebuilt, stored) {
                        (_, Err(e)) => Some(Unsound::DoesNotLoad(e.to_string())),
                        (None, _) => None,
                        (Some(rebuilt), Ok(stored)) => {
                            super::audit::first_difference(&rebuilt, &stored, String::new())
                                .map(Unsound::Differs)
                        }
                    }
                }
                Trust::Broken(problem) => {
                    self.rebuild(&mut router, row.id)?;
                    Some(problem)
                }
                Trust::Sealed => {
                    let restored = self
                        .assembled(row.id, &row.snapshot)
                        .map_err(|reason| ReplayError::BadSnapshot { table: row.id, reason })
                        .and_then(|stored| router.restore_table(&stored));
                    match restored {
                        Ok(_) => None,
                        Err(e) => {
                            self.rebuild(&mut router, row.id)?;
                            Some(Unsound::DoesNotLoad(e.to_string()))
                        }
                    }
                }
            };
            if let Some(problem) = problem {
                problems.push(TableProblem { table: row.id, problem });
                reseal.push((row.id, journal));
            } else if row.seal.is_none() {
                reseal.push((row.id, journal));
            }
        }
        for (table, journal) in digests {
            self.rebuild(&mut router, table)?;
            problems.push(TableProblem { table, problem: Unsound::NoSnapshot });
            reseal.push((table, journal));
        }
        if policy == Policy::Refuse && !problems.is_empty() {
            return Err(StoreError::Unsound { path: self.path.clone(), problems });
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
        self.write_back(&router, &reseal)?;
        for entry in self.entries(None)? {
            router.replay(&entry).map_err(|source| StoreError::Replay { path: self.path.clone(), source })?;
        }
        self.load_ratings(&mut router);
        self.load_relayed(&mut router);
        Ok(Loaded { router, rebuilt: problems })
    }

    /// Folds the whole journal into the router's ratings, kept up to date from here on
    /// with each new entry; a journal that does not read leaves them off (logged;
    /// `spellbridge verify` names the row).
    fn load_ratings(&self, router: &mut Router) {
        match self.journal() {
            Ok(journal) => router.load_ratings(&journal),
            Err(error) => {
                tracing::warn!(%error, "ratings are not kept up to date: the journal does not read");
                router.stop_ratings();
            }
        }
    }

    /// Every table's journal digest, computed from its journal rows as they are now.
    pub(super) fn journal_digests(&self) -> Result<BTreeMap<TableId, Digest>, StoreError> {
        let fail = |e| self.error(e);
        let mut statement = self
            .connection
            .prepare(
                "SELECT table_id, CAST(entry AS BLOB), CAST(events AS BLOB) FROM journal
                 WHERE table_id IS NOT NULL ORDER BY table_id, id",
            )
            .map_err(fail)?;
        let mut rows = statement.query([]).map_err(fail)?;
        let mut digests = BTreeMap::new();
        while let Some(row) = rows.next().map_err(fail)? {
            let table = row.get::<_, i64>(0).map_err(fail)? as TableId;
            let entry = row.get::<_, Option<Vec<u8>>>(1).map_err(fail)?.unwrap_or_default();
            let events = row.get::<_, Option<Vec<u8>>>(2).map_err(fail)?.unwrap_or_default();
            let digest = digests.entry(table).or_insert(seal::EMPTY);
            *digest = seal::extend(digest, &entry, &events);
        }
        Ok(digests)
    }

    /// Replays one table's journal into `router`; an error if that does not make the table.
    fn rebuild(&self, router: &mut Router, table: TableId) -> Result<(), StoreError> {
        for entry in self.entries(Some(table))? {
            router.replay(&entry).map_err(|source| StoreError::Replay { path: self.path.clone(), source })?;
        }
        if router.table_snapshot(table).is_none() {
            return Err(StoreError::BadRow {
                path: self.path.clone(),
                detail: format!(
                    "table {table} cannot be rebuilt: its journal never opens it; restore a backup, or check it with `spellbridge verify`"
                ),
            });
        }
        Ok(())
    }

    /// Writes the router's snapshots of `tables`, sealed with their journal digests.
    fn write_back(&self, router: &Router, tables: &[(TableId, Digest)]) -> Result<(), StoreError> {
        if tables.is_empty() {
            return Ok(());
        }
        let fail = |e| self.error(e);
        let transaction = self.connection.unchecked_transaction().map_err(fail)?;
        for (table, digest) in tables {
            if let Some(stored) = router.stored_table(*table, 0) {
                write_snapshot(&transaction, *table, &stored, digest).map_err(fail)?;
            }
        }
        transaction.commit().map_err(fail)
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

/// The journal digest stored with a table's snapshot, for extending it with new rows; a
/// table with no row yet starts empty, and one not sealed yet is hashed from its journal.
pub(super) fn stored_digest(connection: &Connection, table: TableId) -> rusqlite::Result<Digest> {
    let stored: Option<Option<String>> = connection
        .prepare_cached("SELECT journal_digest FROM tables WHERE id = ?1")?
        .query_row([sql_u64(table)], |row| row.get(0))
        .optional()?;
    match stored {
        None => Ok(seal::EMPTY),
        Some(Some(hex)) if seal::from_hex(&hex).is_some() => Ok(seal::from_hex(&hex).unwrap_or(seal::EMPTY)),
        Some(_) => {
            // Not sealed yet (start-up seals every table before the first commit, so
            // only a store used without loading gets here): hash the rows as they are.
            let mut statement = connection.prepare(
                "SELECT CAST(entry AS BLOB), CAST(events AS BLOB) FROM journal WHERE table_id = ?1 ORDER BY id",
            )?;
            let mut rows = statement.query([sql_u64(table)])?;
            let mut digest = seal::EMPTY;
            while let Some(row) = rows.next()? {
                let entry = row.get::<_, Option<Vec<u8>>>(0)?.unwrap_or_default();
                let events = row.get::<_, Option<Vec<u8>>>(1)?.unwrap_or_default();
                digest = seal::extend(&digest, &entry, &events);
            }
            Ok(digest)
        }
    }
}

/// Writes a table's snapshot with its journal digest and seal.
pub(super) fn write_snapshot(
    connection: &Connection,
    table: TableId,
    stored: &StoredTable,
    digest: &Digest,
) -> rusqlite::Result<()> {
    // A history goes to its own rows; the snapshot names them, so the seal covers them.
    let text = match &stored.history {
        Some(history) => {
            let (rows, digest) = super::history::append(connection, table, history)?;
            super::history::named(&stored.text, rows, &digest)
        }
        None => stored.text.clone(),
    };
    let mut statement = connection.prepare_cached(
        "INSERT INTO tables (id, game, network, room, finished, snapshot, journal_digest, seal)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT (id) DO UPDATE SET finished = excluded.finished, snapshot = excluded.snapshot,
             journal_digest = excluded.journal_digest, seal = excluded.seal",
    )?;
    statement.execute(params![
        sql_u64(table),
        stored.game,
        stored.network.as_str(),
        stored.room.as_str(),
        stored.finished,
        text,
        seal::to_hex(digest),
        seal::to_hex(&seal::seal(digest, text.as_bytes())),
    ])?;
    Ok(())
}
