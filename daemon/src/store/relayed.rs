//! The network's ids of relayed lines (table `relayed_lines`, migration 10; issue 17,
//! items 4 and 7): which speaker and words each id of the bot's relayed messages stands
//! for, so a reply or a reaction to one names its speaker after a restart too
//! ([`crate::relay::replies`]). Written as the couriers report their sends
//! ([`Store::keep_relayed`]); only the latest [`LEARNED`] rows are kept, older ones are
//! deleted in the same transaction; the start loads them into the router.

use rusqlite::params;
use spellbridge_core::{NetworkId, Relayed};

use super::{SqliteStore, StoreError, classify};
use crate::relay::replies::LEARNED;
use crate::router::Router;

/// One relayed line's network id: the network, the id, and what the line was.
pub type RelayedLine = (NetworkId, String, Relayed);

impl SqliteStore {
    /// Keeps `lines` (a later row for the same id replaces the earlier one) and deletes
    /// all but the latest [`LEARNED`] rows, in one transaction, without an fsync of its own
    /// ([`Store::unsynced`]): a power cut before the next commit of moves only leaves
    /// replies to the last lines unnamed.
    pub fn keep_relayed(&mut self, lines: &[RelayedLine]) -> Result<(), StoreError> {
        self.unsynced(|store| store.keep_relayed_rows(lines))
    }

    fn keep_relayed_rows(&mut self, lines: &[RelayedLine]) -> Result<(), StoreError> {
        let path = self.path.clone();
        let fail = |e| classify(&path, e);
        let transaction = self.connection.transaction().map_err(fail)?;
        {
            let mut insert = transaction
                .prepare_cached(
                    "INSERT OR REPLACE INTO relayed_lines (network, message_id, name, words)
                     VALUES (?1, ?2, ?3, ?4)",
                )
                .map_err(fail)?;
            for (network, id, line) in lines {
                insert.execute(params![network.as_str(), id, line.name, line.text]).map_err(fail)?;
            }
        }
        transaction
            .execute(
                "DELETE FROM relayed_lines WHERE id <= (SELECT MAX(id) FROM relayed_lines) - ?1",
                [LEARNED as i64],
            )
            .map_err(fail)?;
        transaction.commit().map_err(fail)
    }

    /// The relayed lines kept, oldest first.
    pub fn relayed(&self) -> Result<Vec<RelayedLine>, StoreError> {
        let fail = |e| self.error(e);
        let mut statement = self
            .connection
            .prepare("SELECT network, message_id, name, words FROM relayed_lines ORDER BY id")
            .map_err(fail)?;
        statement
            .query_map([], |row| {
                Ok((
                    NetworkId::new(row.get::<_, String>(0)?),
                    row.get::<_, String>(1)?,
                    Relayed { name: row.get(2)?, text: row.get(3)? },
                ))
            })
            .map_err(fail)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(fail)
    }

    /// Hands the kept relayed lines, and the speakers' latest lines
    /// ([`Store::load_latest`]), to `router`; a table that does not read leaves replies to
    /// earlier lines unnamed (logged), and the start goes on.
    pub(super) fn load_relayed(&self, router: &mut Router) {
        self.load_latest(router);
        match self.relayed() {
            Ok(lines) => {
                for (network, id, line) in lines {
                    router.learn_relayed(&network, &id, line);
                }
            }
            Err(error) => {
                tracing::warn!(%error, "the relayed lines' ids do not read; replies to earlier lines will not name their speaker");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Durability, OpenMode, Store};
    use super::*;

    fn line(i: usize) -> RelayedLine {
        let relayed = Relayed { name: format!("nick{i}"), text: format!("line {i}") };
        (NetworkId::new("matrix"), format!("$e{i}"), relayed)
    }

    #[test]
    fn relayed_lines_are_kept_across_a_reopen_and_only_the_latest() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("spellbridge.db");
        {
            let mut store = Store::open(&path, OpenMode::CreateIfMissing, Durability::Full).expect("store");
            let lines: Vec<RelayedLine> = (0..LEARNED + 5).map(line).collect();
            store.keep_relayed(&lines[..10]).expect("kept");
            store.keep_relayed(&lines[10..]).expect("kept");
            let kept = store.relayed().expect("read");
            assert_eq!(kept.len(), LEARNED, "pruned to the latest");
            assert_eq!(kept.first().map(|(_, id, _)| id.as_str()), Some("$e5"), "the oldest rows went");
            // The same id again replaces its row.
            let again =
                (NetworkId::new("matrix"), "$e20".to_owned(), Relayed { name: "x".into(), text: "y".into() });
            store.keep_relayed(&[again]).expect("kept");
            let synchronous: i64 =
                store.connection().query_row("PRAGMA synchronous", [], |row| row.get(0)).expect("pragma");
            assert_eq!(synchronous, 2, "the store's own durability (FULL) is back");
        }
        let store = Store::open(&path, OpenMode::MustExist, Durability::Full).expect("reopened");
        let kept = store.relayed().expect("read");
        assert!(kept.len() <= LEARNED, "still at most the latest");
        assert_eq!(kept.first().map(|(_, id, _)| id.as_str()), Some("$e6"));
        assert_eq!(kept.last().map(|(_, id, line)| (id.as_str(), line.name.as_str())), Some(("$e20", "x")));
        assert!(kept.iter().all(|(network, _, _)| network.as_str() == "matrix"));
    }
}
