//! Snapshots, seals and history rows on PostgreSQL (issue 34), as on SQLite (`sealed`,
//! `history`, `startup`): a commit writes a table's snapshot every few of its entries,
//! sealed with the running digest of its journal, in the same fenced transaction; start-up
//! loads each sound snapshot and replays only the rows after it (`startup::load_tables`,
//! the same checks as SQLite's), and reads the tables as they are now for `verify`,
//! `export` and the site.

use std::collections::BTreeMap;

use serde_json::Value;
use tokio_postgres::Client;

use super::super::history;
use super::super::seal::{self, Digest};
use super::super::startup::{self, Covered, Loaded, Policy, Row, TableProblem};
use super::super::{StoreError, sql_u64};
use super::{Batch, PgStore, Written};
use crate::journal::{Entry, TableId};
use crate::router::{ReplayError, Router, RouterConfig, StoredTable};
use spellbridge_core::Registry;
use spellbridge_core::dice::DiceKey;

/// A snapshot to write in a commit: the table, its stored form, and the journal digest
/// and last row it covers (`None`: the table's journal as the transaction sees it).
pub(super) struct Snapshot {
    pub(super) table: TableId,
    pub(super) stored: StoredTable,
    pub(super) sealed: Option<(Digest, i64)>,
}

impl PgStore {
    /// Rebuilds the router, checking each table's snapshot against its seal and journal
    /// as SQLite does ([`startup::load_tables`]); rebuilt and newly sealed snapshots are
    /// written back when this store holds the lease.
    pub fn load_checked(
        &self,
        registry: Registry,
        options: RouterConfig,
        policy: Policy,
    ) -> Result<Loaded, StoreError> {
        let mut loaded = startup::load_tables(self, registry, options, policy)?;
        self.load_beside_tables(&mut loaded.router)?;
        Ok(loaded)
    }

    /// What start-up loads beside the tables: ratings, relayed and latest lines, shown
    /// names (also for a standby's tables, kept warm by following the journal, when it
    /// takes over: `leader::standby`).
    pub fn load_beside_tables(&self, router: &mut Router) -> Result<(), StoreError> {
        startup::load_ratings(self, router);
        self.load_relayed(router);
        if let Some(names) = self.meta(crate::router::SHOWN_NAMES_KEY)? {
            router.load_names(&names);
        }
        Ok(())
    }

    /// The stored forms of `tables` as `router` has them now, each with only the history
    /// entries the database does not have yet.
    pub(super) fn snapshots_of(
        &self,
        router: &Router,
        tables: &[TableId],
    ) -> Result<Vec<Snapshot>, StoreError> {
        if tables.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<i64> = tables.iter().map(|t| sql_u64(*t)).collect();
        let kept: BTreeMap<i64, i64> = self.call("reading the history rows kept", move |client| {
            Box::pin(async move {
                let rows = client
                    .query(
                        "SELECT table_id, history_rows FROM history_heads WHERE table_id = ANY($1)",
                        &[&ids],
                    )
                    .await?;
                Ok(rows.into_iter().map(|r| (r.get(0), r.get(1))).collect())
            })
        })?;
        Ok(tables
            .iter()
            .filter_map(|table| {
                let rows = kept.get(&sql_u64(*table)).map_or(0, |n| usize::try_from(*n).unwrap_or(0));
                router.stored_table(*table, rows).map(|stored| Snapshot {
                    table: *table,
                    stored,
                    sealed: None,
                })
            })
            .collect())
    }

    /// Every table's number with its stored snapshot (history put back), in order.
    pub fn stored_tables(&self) -> Result<Vec<(TableId, Value)>, StoreError> {
        startup::Source::table_rows(self)?
            .into_iter()
            .map(|row| {
                let value = startup::Source::assembled(self, row.id, &row.snapshot)
                    .map_err(|e| self.bad_row(format!("table {}: {e}", row.id)))?;
                Ok((row.id, value))
            })
            .collect()
    }

    /// Table `table`'s state now: its snapshot with the journal rows after it replayed;
    /// `None` when it has no snapshot.
    pub fn current_table(&self, registry: &Registry, table: TableId) -> Result<Option<Value>, StoreError> {
        let id = sql_u64(table);
        let stored: Option<(String, i64)> = self.call("reading a table", move |client| {
            Box::pin(async move {
                let row = client
                    .query_opt("SELECT snapshot, journal_upto FROM tables WHERE id = $1", &[&id])
                    .await?;
                Ok(row.map(|r| (r.get(0), r.get(1))))
            })
        })?;
        let Some((snapshot, upto)) = stored else { return Ok(None) };
        let fail = |detail: String| self.bad_row(format!("table {table}: {detail}"));
        let snapshot = startup::Source::assembled(self, table, snapshot.as_bytes()).map_err(fail)?;
        let after = startup::Source::entries_after(self, table, upto)?;
        if after.is_empty() {
            return Ok(Some(snapshot));
        }
        let mut router = Router::new(registry.clone(), RouterConfig::default());
        router.add_keys(self.dice_keys(Some(table))?);
        router.restore_table(&snapshot).map_err(|e| fail(e.to_string()))?;
        for (row, entry) in after {
            router.replay(&entry).map_err(|e| fail(format!("journal row {row}: {e}")))?;
        }
        Ok(router.table_snapshot(table))
    }

    /// One table's history rows, in order.
    fn history_rows(&self, table: TableId) -> Result<Vec<String>, StoreError> {
        let id = sql_u64(table);
        self.call("reading a table's history", move |client| {
            Box::pin(async move {
                let rows = client
                    .query("SELECT entry FROM history WHERE table_id = $1 ORDER BY position", &[&id])
                    .await?;
                Ok(rows.into_iter().map(|r| r.get(0)).collect())
            })
        })
    }
}

impl startup::Source for PgStore {
    fn table_rows(&self) -> Result<Vec<Row>, StoreError> {
        self.call("reading the tables' snapshots", move |client| {
            Box::pin(async move {
                let rows = client
                    .query(
                        "SELECT id, snapshot, journal_digest, seal, journal_upto FROM tables ORDER BY id",
                        &[],
                    )
                    .await?;
                Ok(rows
                    .into_iter()
                    .map(|r| Row {
                        id: r.get::<_, i64>(0) as TableId,
                        snapshot: r.get::<_, String>(1).into_bytes(),
                        digest: r.get(2),
                        seal: r.get(3),
                        upto: r.get(4),
                    })
                    .collect())
            })
        })
    }

    fn journal_digests(
        &self,
        points: &BTreeMap<TableId, i64>,
    ) -> Result<BTreeMap<TableId, Covered>, StoreError> {
        let points = points.clone();
        self.call("reading the journal's digests", move |client| {
            Box::pin(async move {
                let rows = client
                    .query(
                        "SELECT table_id, id, entry, events FROM journal WHERE table_id IS NOT NULL
                         ORDER BY table_id, id",
                        &[],
                    )
                    .await?;
                let mut digests = BTreeMap::new();
                for r in rows {
                    let (table, id) = (r.get::<_, i64>(0) as TableId, r.get::<_, i64>(1));
                    let (entry, events) = (r.get::<_, &str>(2), r.get::<_, &str>(3));
                    Covered::fold(&mut digests, &points, table, id, entry.as_bytes(), events.as_bytes());
                }
                Ok(digests)
            })
        })
    }

    fn entries_after(&self, table: TableId, after: i64) -> Result<Vec<(i64, Entry)>, StoreError> {
        let id = sql_u64(table);
        let rows: Vec<(i64, String)> = self.call("reading a table's journal", move |client| {
            Box::pin(async move {
                let rows = client
                    .query(
                        "SELECT id, entry FROM journal WHERE table_id = $1 AND id > $2 ORDER BY id",
                        &[&id, &after],
                    )
                    .await?;
                Ok(rows.into_iter().map(|r| (r.get(0), r.get(1))).collect())
            })
        })?;
        rows.into_iter()
            .map(|(id, text)| {
                let entry = serde_json::from_str(&text)
                    .map_err(|e| self.bad_row(format!("journal row {id}: {e}")))?;
                Ok((id, entry))
            })
            .collect()
    }

    fn assembled(&self, table: TableId, snapshot: &[u8]) -> Result<Value, String> {
        history::assemble_with(snapshot, || self.history_rows(table).map_err(|e| e.to_string()))
    }

    fn write_back(&self, router: &Router, tables: &[(TableId, Covered)]) -> Result<(), StoreError> {
        if tables.is_empty() {
            return Ok(());
        }
        let Some(fence) = self.fence.clone() else {
            // A store that reads only (a standby, `verify`) leaves the snapshots as they
            // are; the leader writes them back on its own start.
            return Ok(());
        };
        let snapshots = tables
            .iter()
            .filter_map(|(table, journal)| {
                router.stored_table(*table, 0).map(|stored| Snapshot {
                    table: *table,
                    stored,
                    sealed: Some((journal.whole, journal.last)),
                })
            })
            .collect();
        let batch = Batch { snapshots, ..Batch::default() };
        self.write_batch(fence, batch, "writing snapshots back").map(drop)
    }

    fn all_dice_keys(&self) -> Result<Vec<(TableId, u64, DiceKey)>, StoreError> {
        self.dice_keys(None)
    }

    fn lobby(&self) -> Result<Vec<Entry>, StoreError> {
        self.entries(None)
    }

    fn replay_failed(&self, source: ReplayError) -> StoreError {
        StoreError::PostgresReplay { target: self.url.shown().to_owned(), source }
    }

    fn bad_row(&self, detail: String) -> StoreError {
        PgStore::bad_row(self, detail)
    }

    fn unsound(&self, problems: Vec<TableProblem>) -> StoreError {
        StoreError::Unsound { path: self.url.shown().into(), problems }
    }
}

/// Writes `snapshot` in the commit's transaction, open on `transaction` (after the
/// commit's journal rows), sealed with its table's journal digest.
pub(super) async fn write(transaction: &Client, snapshot: &Snapshot) -> Result<(), Written> {
    let table = sql_u64(snapshot.table);
    let (digest, upto) = match snapshot.sealed {
        Some(sealed) => sealed,
        None => digest_now(transaction, table).await.map_err(Written::Sql)?,
    };
    let stored = &snapshot.stored;
    // A history goes to its own rows; the snapshot names them, so the seal covers them.
    let text = match &stored.history {
        Some(entries) => {
            let (rows, digest) = append_history(transaction, table, entries).await?;
            history::named(&stored.text, rows, &digest)
        }
        None => stored.text.clone(),
    };
    transaction
        .execute(
            "INSERT INTO tables (id, game, network, room, finished, snapshot, journal_digest, seal, journal_upto)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
             ON CONFLICT (id) DO UPDATE SET finished = excluded.finished, snapshot = excluded.snapshot,
                 journal_digest = excluded.journal_digest, seal = excluded.seal,
                 journal_upto = excluded.journal_upto",
            &[
                &table,
                &stored.game,
                &stored.network.as_str(),
                &stored.room.as_str(),
                &stored.finished,
                &text,
                &seal::to_hex(&digest),
                &seal::to_hex(&seal::seal(&digest, text.as_bytes())),
                &upto,
            ],
        )
        .await
        .map_err(Written::Sql)?;
    Ok(())
}

/// The table's whole journal digest and last row id, as the transaction sees them: the
/// digest sealed with its snapshot extended by the rows after the snapshot's point.
async fn digest_now(transaction: &Client, table: i64) -> Result<(Digest, i64), tokio_postgres::Error> {
    let stored = transaction
        .query_opt("SELECT journal_digest, journal_upto FROM tables WHERE id = $1", &[&table])
        .await?
        .map(|r| (r.get::<_, Option<String>>(0), r.get::<_, i64>(1)));
    let (mut digest, mut last) = match stored {
        Some((Some(hex), upto)) => seal::from_hex(&hex).map_or((seal::EMPTY, 0), |digest| (digest, upto)),
        _ => (seal::EMPTY, 0),
    };
    let rows = transaction
        .query(
            "SELECT id, entry, events FROM journal WHERE table_id = $1 AND id > $2 ORDER BY id",
            &[&table, &last],
        )
        .await?;
    for r in rows {
        last = r.get(0);
        digest = seal::extend(&digest, r.get::<_, &str>(1).as_bytes(), r.get::<_, &str>(2).as_bytes());
    }
    Ok((digest, last))
}

/// Writes the history entries the database lacks (all of them, replacing the table's
/// rows, when they start at 0); returns the row count and digest to name in the snapshot.
async fn append_history(
    transaction: &Client,
    table: i64,
    entries: &crate::router::StoredHistory,
) -> Result<(usize, Digest), Written> {
    let sql = Written::Sql;
    let (mut rows, mut digest) = if entries.from == 0 {
        transaction.execute("DELETE FROM history WHERE table_id = $1", &[&table]).await.map_err(sql)?;
        (0, seal::EMPTY)
    } else {
        let head = transaction
            .query_opt(
                "SELECT history_rows, history_digest FROM history_heads WHERE table_id = $1",
                &[&table],
            )
            .await
            .map_err(sql)?;
        match head.map(|r| (r.get::<_, i64>(0), seal::from_hex(r.get(1)))) {
            Some((rows, Some(digest))) => (usize::try_from(rows).unwrap_or(0), digest),
            _ => (0, seal::EMPTY),
        }
    };
    if rows != entries.from {
        // The router was asked for the entries from another position than the store has:
        // a caller's mistake, never silently a gap in the history.
        return Err(Written::Row(format!(
            "table {table}: history entries from {} given, the store has {rows}",
            entries.from
        )));
    }
    let insert = transaction
        .prepare("INSERT INTO history (table_id, position, entry) VALUES ($1, $2, $3)")
        .await
        .map_err(sql)?;
    for entry in &entries.entries {
        transaction.execute(&insert, &[&table, &(rows as i64), entry]).await.map_err(sql)?;
        digest = history::extend(&digest, entry);
        rows += 1;
    }
    transaction
        .execute(
            "INSERT INTO history_heads (table_id, history_rows, history_digest) VALUES ($1, $2, $3)
             ON CONFLICT (table_id) DO UPDATE SET history_rows = excluded.history_rows,
                 history_digest = excluded.history_digest",
            &[&table, &(rows as i64), &seal::to_hex(&digest)],
        )
        .await
        .map_err(sql)?;
    Ok((rows, digest))
}
