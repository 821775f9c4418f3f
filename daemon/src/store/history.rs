//! A table's history (a Thaum table's accepted actions: its snapshot's `history` list) in
//! rows of its own, `history` (migration 7), so that what a commit writes per action does
//! not grow with the history (issue 16): the snapshot is written without it, and only
//! the entries the store does not have yet are appended.
//!
//! The snapshot text names how many rows there are and a running SHA-256 over them
//! (`history_rows`, `history_digest`), so the snapshot's seal covers the rows: rows
//! changed or lost outside spellbridge make the snapshot not load, and start-up rebuilds
//! the table from its journal. [`assemble`] puts the rows back, so everything that reads
//! a stored snapshot (start-up, `verify`, `export`) sees the whole state. A snapshot from
//! before (its history inside, no `history_rows`) reads as it is.

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use super::seal::{self, Digest};
use super::sql_u64;
use crate::journal::TableId;
use crate::router::StoredHistory;

/// The fields a snapshot names its history rows by.
const ROWS: &str = "history_rows";
const DIGEST: &str = "history_digest";

/// The history digest after one more row.
pub(super) fn extend(digest: &Digest, entry: &str) -> Digest {
    seal::extend(digest, entry.as_bytes(), b"")
}

/// How many history rows the store has for `table`, and their digest.
pub(super) fn kept(connection: &Connection, table: TableId) -> rusqlite::Result<(usize, Digest)> {
    let stored: Option<(i64, String)> = connection
        .prepare_cached("SELECT history_rows, history_digest FROM history_heads WHERE table_id = ?1")?
        .query_row([sql_u64(table)], |row| Ok((row.get(0)?, row.get(1)?)))
        .optional()?;
    Ok(match stored {
        Some((rows, digest)) => match seal::from_hex(&digest) {
            Some(digest) => (usize::try_from(rows).unwrap_or(0), digest),
            None => (0, seal::EMPTY),
        },
        None => (0, seal::EMPTY),
    })
}

/// Writes `history`'s new entries (all of them, replacing the table's rows, when it starts
/// at 0) and returns the row count and digest to store and name in the snapshot.
pub(super) fn append(
    connection: &Connection,
    table: TableId,
    history: &StoredHistory,
) -> rusqlite::Result<(usize, Digest)> {
    let (mut rows, mut digest) = if history.from == 0 {
        connection.execute("DELETE FROM history WHERE table_id = ?1", [sql_u64(table)])?;
        (0, seal::EMPTY)
    } else {
        kept(connection, table)?
    };
    if rows != history.from {
        // The router was asked for the entries from another position than the store has:
        // a caller's mistake, never silently a gap in the history.
        return Err(rusqlite::Error::InvalidParameterName(format!(
            "table {table}: history entries from {} given, the store has {rows}",
            history.from
        )));
    }
    let mut insert =
        connection.prepare_cached("INSERT INTO history (table_id, position, entry) VALUES (?1, ?2, ?3)")?;
    for entry in &history.entries {
        insert.execute(params![sql_u64(table), rows as i64, entry])?;
        digest = extend(&digest, entry);
        rows += 1;
    }
    connection
        .prepare_cached(
            "INSERT INTO history_heads (table_id, history_rows, history_digest) VALUES (?1, ?2, ?3)
             ON CONFLICT (table_id) DO UPDATE SET history_rows = excluded.history_rows,
                 history_digest = excluded.history_digest",
        )?
        .execute(params![sql_u64(table), rows as i64, seal::to_hex(&digest)])?;
    Ok((rows, digest))
}

/// A snapshot's text naming its history rows: `text` is a JSON object.
pub(super) fn named(text: &str, rows: usize, digest: &Digest) -> String {
    let body = text.strip_suffix('}').unwrap_or(text);
    format!(r#"{body},"{ROWS}":{rows},"{DIGEST}":"{}"}}"#, seal::to_hex(digest))
}

/// A stored snapshot as the whole table's state: its history rows put back into
/// `state.history`. An error says why the rows do not match what the snapshot names.
pub(super) fn assemble(connection: &Connection, table: TableId, snapshot: &[u8]) -> Result<Value, String> {
    assemble_with(snapshot, || read(connection, table).map_err(|e| e.to_string()))
}

/// [`assemble`] with the table's history rows read by `read_rows` (on either engine), only
/// when the snapshot names some.
pub(super) fn assemble_with(
    snapshot: &[u8],
    read_rows: impl FnOnce() -> Result<Vec<String>, String>,
) -> Result<Value, String> {
    let mut value: Value = serde_json::from_slice(snapshot).map_err(|e| e.to_string())?;
    let Some(object) = value.as_object_mut() else { return Err("not a JSON object".into()) };
    let Some(rows) = object.remove(ROWS) else { return Ok(value) };
    let named_rows = rows.as_u64().ok_or("its history_rows is not a number")?;
    let named_digest = object.remove(DIGEST).and_then(|d| d.as_str().and_then(seal::from_hex));
    let named_digest = named_digest.ok_or("its history_digest is not a digest")?;
    let entries = read_rows()?;
    let digest = entries.iter().fold(seal::EMPTY, |digest, entry| extend(&digest, entry));
    if entries.len() as u64 != named_rows || digest != named_digest {
        return Err(format!(
            "its history rows ({} found) do not match the {named_rows} sealed with the snapshot",
            entries.len()
        ));
    }
    let history = entries
        .iter()
        .map(|entry| serde_json::from_str(entry).map_err(|e| format!("a history row: {e}")))
        .collect::<Result<Vec<Value>, String>>()?;
    match value.get_mut("state").and_then(Value::as_object_mut) {
        Some(state) => {
            state.insert("history".to_owned(), Value::Array(history));
            Ok(value)
        }
        None => Err("it has no state".into()),
    }
}

/// The table's history rows, in order.
fn read(connection: &Connection, table: TableId) -> rusqlite::Result<Vec<String>> {
    let mut statement =
        connection.prepare_cached("SELECT entry FROM history WHERE table_id = ?1 ORDER BY position")?;
    let rows = statement.query_map([sql_u64(table)], |row| row.get::<_, String>(0))?;
    rows.collect()
}
