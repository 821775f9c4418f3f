//! Reading the outbox: each row must parse into a message for a network and a destination
//! (a room or a player, named by a non-empty name without control characters). At start a
//! row that does not is *set aside*: moved, exactly as stored, to `outbox_set_aside` with
//! the reason, logged as an ERROR, and returned so the daemon counts it; it is never sent
//! and never silently dropped, and it does not stop the start. `spellbridge verify`
//! checks the rows without moving them and lists those set aside earlier.

use rusqlite::types::ValueRef;
use rusqlite::{Connection, params};
use spellbridge_core::{Destination, Message, NetworkId, RichText};

use super::{Queued, SqliteStore, StoreError};
use crate::turn::Outbound;

/// An outbox row that cannot be sent.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("outbox row {id}: {reason}")]
pub struct BadRow {
    /// Its id in the outbox.
    pub id: i64,
    /// Why it cannot be sent.
    pub reason: String,
}

impl SqliteStore {
    /// Every message waiting in the outbox, oldest first, and the rows that could not be
    /// read, which are set aside (see the module's documentation).
    pub fn pending_checked(&self) -> Result<(Vec<Queued>, Vec<BadRow>), StoreError> {
        let (queued, bad) = self.read_outbox(None)?;
        if bad.is_empty() {
            return Ok((queued, bad));
        }
        let fail = |e| self.error(e);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
        let transaction = self.connection.unchecked_transaction().map_err(fail)?;
        for row in &bad {
            set_aside(&transaction, row, now).map_err(fail)?;
        }
        transaction.commit().map_err(fail)?;
        tell_set_aside(&bad);
        Ok((queued, bad))
    }

    /// Checks every outbox row without changing anything; with `networks`, a row for a
    /// network not among them is a problem too.
    pub fn check_outbox(&self, networks: Option<&[NetworkId]>) -> Result<Vec<BadRow>, StoreError> {
        self.read_outbox(networks).map(|(_, bad)| bad)
    }

    /// How many rows wait in the outbox.
    pub fn pending_count(&self) -> Result<usize, StoreError> {
        self.connection
            .query_row("SELECT count(*) FROM outbox", [], |row| row.get::<_, i64>(0))
            .map(|n| usize::try_from(n).unwrap_or(0))
            .map_err(|e| self.error(e))
    }

    /// The rows set aside at earlier starts, with why.
    pub fn set_aside_rows(&self) -> Result<Vec<BadRow>, StoreError> {
        let fail = |e| self.error(e);
        let mut statement =
            self.connection.prepare("SELECT id, reason FROM outbox_set_aside ORDER BY id").map_err(fail)?;
        statement
            .query_map([], |row| Ok(BadRow { id: row.get(0)?, reason: row.get(1)? }))
            .map_err(fail)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(fail)
    }

    fn read_outbox(&self, networks: Option<&[NetworkId]>) -> Result<(Vec<Queued>, Vec<BadRow>), StoreError> {
        let fail = |e| self.error(e);
        let mut statement = self
            .connection
            .prepare("SELECT id, network, destination, text FROM outbox ORDER BY id")
            .map_err(fail)?;
        let mut rows = statement.query([]).map_err(fail)?;
        let (mut queued, mut bad) = (Vec::new(), Vec::new());
        while let Some(row) = rows.next().map_err(fail)? {
            let id: i64 = row.get(0).map_err(fail)?;
            let parsed = (|| {
                let value = |i| row.get_ref(i).map_err(|e| e.to_string());
                known(parse(value(1)?, value(2)?, value(3)?)?, networks)
            })();
            match parsed {
                Ok(outbound) => queued.push(Queued { id, outbound }),
                Err(reason) => bad.push(BadRow { id, reason }),
            }
        }
        Ok((queued, bad))
    }
}

/// `outbound`, or why it is not for one of `networks` (with `None`, any network).
pub(super) fn known(outbound: Outbound, networks: Option<&[NetworkId]>) -> Result<Outbound, String> {
    match networks {
        Some(known) if !known.contains(&outbound.network) => Err(format!(
            "its network `{}` is not in the config (known: {})",
            outbound.network,
            known.iter().map(NetworkId::as_str).collect::<Vec<_>>().join(", ")
        )),
        _ => Ok(outbound),
    }
}

/// One outbox row's columns as a message to send, or why they are not one.
/// Logs each row set aside (either engine), saying where it is kept.
pub(crate) fn tell_set_aside(rows: &[BadRow]) {
    for row in rows {
        tracing::error!(
            outbox_id = row.id,
            reason = %row.reason,
            "outbox row {} set aside, not sent: {}; it is kept in the table outbox_set_aside",
            row.id,
            row.reason
        );
    }
}

fn parse(network: ValueRef<'_>, destination: ValueRef<'_>, text: ValueRef<'_>) -> Result<Outbound, String> {
    parse_text(as_text(network, "network")?, as_text(destination, "destination")?, as_text(text, "text")?)
}

/// One outbox row's text columns as a message to send, or why they are not one (either
/// engine's rows).
pub(super) fn parse_text(network: &str, destination: &str, text: &str) -> Result<Outbound, String> {
    if network.is_empty() || network.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(format!("its network {network:?} is not a network name"));
    }
    let to: Destination =
        serde_json::from_str(destination).map_err(|e| format!("its destination does not read: {e}"))?;
    let name = match &to {
        Destination::Room(room) => room.as_str(),
        Destination::Private(player) => player.as_str(),
    };
    if name.is_empty() || name.chars().any(char::is_control) {
        return Err(format!("its destination {name:?} names no room or player"));
    }
    // Version 2 rows hold only the text; later ones the whole message.
    let message = match serde_json::from_str::<Message>(text) {
        Ok(message) => message,
        Err(_) => Message::from(
            serde_json::from_str::<RichText>(text).map_err(|e| format!("its message does not read: {e}"))?,
        ),
    };
    Ok(Outbound { network: NetworkId::new(network), to, message })
}

fn as_text<'a>(value: ValueRef<'a>, column: &str) -> Result<&'a str, String> {
    match value {
        ValueRef::Text(bytes) => std::str::from_utf8(bytes).map_err(|_| format!("its {column} is not UTF-8")),
        other => Err(format!("its {column} is {:?}, not text", other.data_type())),
    }
}

fn set_aside(connection: &Connection, row: &BadRow, now: i64) -> rusqlite::Result<()> {
    connection.execute(
        "INSERT OR REPLACE INTO outbox_set_aside (id, network, destination, text, reason, set_aside_at)
         SELECT id, network, destination, text, ?2, ?3 FROM outbox WHERE id = ?1",
        params![row.id, row.reason, now],
    )?;
    connection.execute("DELETE FROM outbox WHERE id = ?1", [row.id])?;
    Ok(())
}
