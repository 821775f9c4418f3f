//! The journal's rows as `verify` and `export` read them (`store::audit`), on PostgreSQL:
//! the same rows as `store::journal_rows` reads from SQLite.

use serde_json::Value;

use super::super::journal_rows::export_row;
use super::super::{StoreError, sql_u64};
use super::PgStore;
use crate::journal::TableId;

impl PgStore {
    /// Table `table`'s (or with `None` the lobby's) journal rows: id and entry.
    pub(in crate::store) fn journal_texts(
        &self,
        table: Option<TableId>,
    ) -> Result<Vec<(i64, Vec<u8>)>, StoreError> {
        let table = table.map(sql_u64);
        self.call("reading the journal", move |client| {
            Box::pin(async move {
                let rows = client
                    .query(
                        "SELECT id, entry FROM journal WHERE table_id IS NOT DISTINCT FROM $1 ORDER BY id",
                        &[&table],
                    )
                    .await?;
                Ok(rows.into_iter().map(|r| (r.get(0), r.get::<_, String>(1).into_bytes())).collect())
            })
        })
    }

    /// Table `table`'s journal rows as export shows them.
    pub(in crate::store) fn export_rows(&self, table: TableId) -> Result<Vec<Value>, StoreError> {
        let table = sql_u64(table);
        self.call("reading the journal", move |client| {
            Box::pin(async move {
                let rows = client
                    .query(
                        "SELECT id, kind, player, command, network, message_id, entry, events FROM journal
                         WHERE table_id = $1 ORDER BY id",
                        &[&table],
                    )
                    .await?;
                Ok(rows
                    .into_iter()
                    .map(|r| {
                        export_row(
                            r.get(0),
                            r.get(1),
                            r.get(2),
                            r.get(3),
                            r.get(4),
                            r.get(5),
                            r.get(6),
                            r.get(7),
                        )
                    })
                    .collect())
            })
        })
    }
}
