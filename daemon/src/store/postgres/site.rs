//! The spectator site's reads on PostgreSQL (issue 34): the rows `site::reader` reads
//! from SQLite — the tables as stored, their places, journal rows and how far a table's
//! snapshot is behind its journal — through a store of the site's own that holds no
//! lease, so it reads beside the daemon's commits and never writes.

use super::super::{StoreError, sql_u64};
use super::PgStore;
use crate::journal::TableId;
use crate::site::reader::RawRow;

impl PgStore {
    /// `tables` rows as the site reads them: table `id` (with `Some`), else the newest
    /// `limit` that are `finished` or not; newest first.
    pub fn site_tables(
        &self,
        id: Option<i64>,
        finished: bool,
        limit: i64,
    ) -> Result<Vec<RawRow>, StoreError> {
        self.call("reading the tables for the site", move |client| {
            Box::pin(async move {
                let rows = client
                    .query(
                        "SELECT id, game, network, room, finished, snapshot FROM tables
                         WHERE CASE WHEN $1::bigint IS NULL THEN finished = $2 ELSE id = $1 END
                         ORDER BY id DESC LIMIT $3",
                        &[&id, &finished, &limit],
                    )
                    .await?;
                Ok(rows
                    .into_iter()
                    .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4), r.get(5)))
                    .collect())
            })
        })
    }

    /// Every table's number, network and room.
    pub fn places(&self) -> Result<Vec<(i64, String, String)>, StoreError> {
        self.call("reading the tables' places", move |client| {
            Box::pin(async move {
                let rows = client.query("SELECT id, network, room FROM tables", &[]).await?;
                Ok(rows.into_iter().map(|r| (r.get(0), r.get(1), r.get(2))).collect())
            })
        })
    }

    /// Journal rows (id, entry text) of table `table`, or with `None` all of them, in order.
    pub fn journal_rows(&self, table: Option<i64>) -> Result<Vec<(i64, String)>, StoreError> {
        self.call("reading the journal", move |client| {
            Box::pin(async move {
                let rows = client
                    .query(
                        "SELECT id, entry FROM journal WHERE $1::bigint IS NULL OR table_id = $1 ORDER BY id",
                        &[&table],
                    )
                    .await?;
                Ok(rows.into_iter().map(|r| (r.get(0), r.get(1))).collect())
            })
        })
    }

    /// The number of the journal's last row (0 when empty).
    pub fn journal_head(&self) -> Result<i64, StoreError> {
        self.call("reading the journal's head", move |client| {
            Box::pin(async move {
                Ok(client.query_one("SELECT COALESCE(MAX(id), 0)::bigint FROM journal", &[]).await?.get(0))
            })
        })
    }

    /// The id of table `table`'s last journal row when it has rows after its snapshot's
    /// point (`None`: its snapshot is current), as `store::current::behind` on SQLite.
    pub fn behind(&self, table: TableId) -> Result<Option<i64>, StoreError> {
        let id = sql_u64(table);
        self.call("reading how far a table is behind", move |client| {
            Box::pin(async move {
                let row = client
                    .query_one(
                        "SELECT MAX(journal.id) FROM tables JOIN journal ON journal.table_id = tables.id
                         WHERE tables.id = $1 AND journal.id > tables.journal_upto",
                        &[&id],
                    )
                    .await?;
                Ok(row.get(0))
            })
        })
    }
}
