//! The journal's rows as `verify` and `export` read them (`audit`), on SQLite; the same
//! on PostgreSQL is `postgres::audit`.

use rusqlite::params;
use serde_json::{Value, json};

use super::{SqliteStore, StoreError, classify, sql_u64};
use crate::journal::TableId;

impl SqliteStore {
    /// Table `table`'s (or with `None` the lobby's) journal rows: id and entry, as stored
    /// (bytes: a row that is not UTF-8 is reported, not skipped).
    pub(super) fn journal_texts(&self, table: Option<TableId>) -> Result<Vec<(i64, Vec<u8>)>, StoreError> {
        let fail = |e| classify(self.path(), e);
        let mut statement = self
            .connection()
            .prepare("SELECT id, CAST(entry AS BLOB) FROM journal WHERE table_id IS ?1 ORDER BY id")
            .map_err(fail)?;
        statement
            .query_map([table.map(sql_u64)], |row| {
                Ok((row.get::<_, i64>(0)?, row.get::<_, Option<Vec<u8>>>(1)?.unwrap_or_default()))
            })
            .map_err(fail)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(fail)
    }

    /// Table `table`'s journal rows as export shows them.
    pub(super) fn export_rows(&self, table: TableId) -> Result<Vec<Value>, StoreError> {
        let fail = |e| classify(self.path(), e);
        let mut statement = self
            .connection()
            .prepare(
                "SELECT id, kind, player, command, network, message_id, entry, events FROM journal
                 WHERE table_id = ?1 ORDER BY id",
            )
            .map_err(fail)?;
        statement
            .query_map(params![sql_u64(table)], |row| {
                Ok(export_row(
                    row.get(0)?,
                    row.get(1)?,
                    row.get(2)?,
                    row.get(3)?,
                    row.get(4)?,
                    row.get(5)?,
                    &row.get::<_, String>(6)?,
                    &row.get::<_, String>(7)?,
                ))
            })
            .map_err(fail)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(fail)
    }
}

/// One journal row as export shows it (either engine's columns).
#[allow(clippy::too_many_arguments)]
pub(super) fn export_row(
    id: i64,
    kind: String,
    player: Option<String>,
    command: Option<String>,
    network: Option<String>,
    message_id: Option<String>,
    entry: &str,
    events: &str,
) -> Value {
    json!({
        "id": id,
        "kind": kind,
        "player": player,
        "command": command,
        "network": network,
        "message_id": message_id,
        "entry": serde_json::from_str::<Value>(entry).unwrap_or(Value::Null),
        "events": serde_json::from_str::<Value>(events).unwrap_or(Value::Null),
    })
}
