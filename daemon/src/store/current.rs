//! A table as it is now, read from the database alone: its stored snapshot with its journal
//! rows after the snapshot's point replayed onto it (snapshots are written only every few
//! entries, see [`super::SNAPSHOT_EVERY`]). For what reads the database beside or after
//! the daemon — `export`, `verify --key`, the spectator site — and needs the current state.
//!
//! Replaying needs the table's dice keys (RULES T-10): they are read into a router that
//! lives only for the call; what comes out is the table's snapshot, which shows a key only
//! once it is revealed.

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;
use spellbridge_core::Registry;
use spellbridge_core::dice::DiceKey;

use super::sql_u64;
use crate::journal::{Entry, TableId};
use crate::router::{Router, RouterConfig};

/// Table `table`'s state now ([`Router::table_snapshot`], its history included), or `None`
/// when it has no snapshot; an error says what did not read or replay.
pub fn table(connection: &Connection, registry: &Registry, table: TableId) -> Result<Option<Value>, String> {
    let stored: Option<(Vec<u8>, i64)> = connection
        .prepare_cached("SELECT CAST(snapshot AS BLOB), journal_upto FROM tables WHERE id = ?1")
        .and_then(|mut s| s.query_row([sql_u64(table)], |row| Ok((row.get(0)?, row.get(1)?))).optional())
        .map_err(|e| e.to_string())?;
    let Some((snapshot, upto)) = stored else { return Ok(None) };
    let snapshot = super::history::assemble(connection, table, &snapshot)?;
    let after = rows_after(connection, table, upto).map_err(|e| e.to_string())?;
    if after.is_empty() {
        return Ok(Some(snapshot));
    }
    let mut router = Router::new(registry.clone(), RouterConfig::default());
    router.add_keys(keys(connection, table).map_err(|e| e.to_string())?);
    router.restore_table(&snapshot).map_err(|e| e.to_string())?;
    for (id, text) in after {
        let entry: Entry = serde_json::from_str(&text).map_err(|e| format!("journal row {id}: {e}"))?;
        router.replay(&entry).map_err(|e| format!("journal row {id}: {e}"))?;
    }
    Ok(router.table_snapshot(table))
}

/// The id of table `table`'s last journal row when it has rows after its snapshot's point
/// (`None`: its snapshot is current).
pub fn behind(connection: &Connection, table: TableId) -> rusqlite::Result<Option<i64>> {
    connection
        .prepare_cached(
            "SELECT MAX(journal.id) FROM tables JOIN journal ON journal.table_id = tables.id
             WHERE tables.id = ?1 AND journal.id > tables.journal_upto",
        )?
        .query_row([sql_u64(table)], |row| row.get(0))
}

/// The table's journal rows after `upto` (a row id): id and entry text.
fn rows_after(connection: &Connection, table: TableId, upto: i64) -> rusqlite::Result<Vec<(i64, String)>> {
    connection
        .prepare_cached("SELECT id, entry FROM journal WHERE table_id = ?1 AND id > ?2 ORDER BY id")?
        .query_map(params![sql_u64(table), upto], |row| Ok((row.get(0)?, row.get(1)?)))?
        .collect()
}

/// The table's dice keys (a key that does not read is left out: the replay then says
/// which commitment it lacks).
fn keys(connection: &Connection, table: TableId) -> rusqlite::Result<Vec<(TableId, u64, DiceKey)>> {
    let rows: Vec<(i64, String)> = connection
        .prepare_cached("SELECT epoch, key FROM dice_keys WHERE table_id = ?1 ORDER BY epoch")?
        .query_map([sql_u64(table)], |row| Ok((row.get(0)?, row.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(rows
        .into_iter()
        .filter_map(|(epoch, key)| DiceKey::from_hex(&key).ok().map(|key| (table, epoch as u64, key)))
        .collect())
}
