//! Writing a table's snapshot sealed with its journal's digest (`seal`): the one place a
//! snapshot row is written, on start-up, on an upgrade and on a commit.

use rusqlite::{Connection, OptionalExtension, params};

use super::seal::{self, Digest};
use super::sql_u64;
use crate::journal::TableId;
use crate::router::StoredTable;

/// A table's whole journal digest and the id of its last row, for sealing a snapshot of
/// it as it is now: the digest stored with its snapshot, extended by its rows after the
/// snapshot's point (in a commit, they include the rows just written). A table with no
/// snapshot yet, or one from before seals, is hashed from its first row.
pub(super) fn digest_now(connection: &Connection, table: TableId) -> rusqlite::Result<(Digest, i64)> {
    let stored: Option<(Option<String>, i64)> = connection
        .prepare_cached("SELECT journal_digest, journal_upto FROM tables WHERE id = ?1")?
        .query_row([sql_u64(table)], |row| Ok((row.get(0)?, row.get(1)?)))
        .optional()?;
    let (mut digest, mut last) = match stored {
        Some((Some(hex), upto)) => match seal::from_hex(&hex) {
            Some(digest) => (digest, upto),
            None => (seal::EMPTY, 0),
        },
        _ => (seal::EMPTY, 0),
    };
    let mut statement = connection.prepare_cached(
        "SELECT id, CAST(entry AS BLOB), CAST(events AS BLOB) FROM journal
         WHERE table_id = ?1 AND id > ?2 ORDER BY id",
    )?;
    let mut rows = statement.query(params![sql_u64(table), last])?;
    while let Some(row) = rows.next()? {
        last = row.get(0)?;
        let entry = row.get::<_, Option<Vec<u8>>>(1)?.unwrap_or_default();
        let events = row.get::<_, Option<Vec<u8>>>(2)?.unwrap_or_default();
        digest = seal::extend(&digest, &entry, &events);
    }
    Ok((digest, last))
}

/// Writes a table's snapshot with its journal digest and seal, covering the table's journal
/// up to the row `upto` (an id), and its history rows (see [`super::history`]).
pub(super) fn write_snapshot(
    connection: &Connection,
    table: TableId,
    stored: &StoredTable,
    digest: &Digest,
    upto: i64,
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
        "INSERT INTO tables (id, game, network, room, finished, snapshot, journal_digest, seal, journal_upto)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
         ON CONFLICT (id) DO UPDATE SET finished = excluded.finished, snapshot = excluded.snapshot,
             journal_digest = excluded.journal_digest, seal = excluded.seal,
             journal_upto = excluded.journal_upto",
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
        upto,
    ])?;
    Ok(())
}
