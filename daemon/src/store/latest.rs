//! Each speaker's latest line in each bridged room (table `latest_lines`, migration 11;
//! issue 17, items 4 and 7): what an IRC `alice: hi` answers as a Matrix reply
//! ([`crate::relay::replies`]), kept so a restart does not forget it. Written as the
//! engine takes the lines heard from the router ([`Store::keep_latest`], without an fsync
//! of its own, as [`Store::keep_relayed`]); one row per room and speaker, and rows too old
//! to be answered ([`REPLY_WITHIN`]) or beyond the latest [`LATEST`] are deleted in the
//! same transaction; the start puts them back into the router.

use rusqlite::params;
use spellbridge_core::{NetworkId, RoomId, Timestamp};

use super::{SqliteStore, StoreError, classify};
use crate::relay::replies::{LATEST, LatestLine, REPLY_WITHIN};
use crate::router::Router;
use crate::turn::Place;

impl SqliteStore {
    /// Keeps `lines` (a later line of the same speaker in the same room replaces the
    /// earlier one) and deletes the rows no longer worth keeping, in one transaction.
    pub fn keep_latest(&mut self, lines: &[LatestLine]) -> Result<(), StoreError> {
        let Some(newest) = lines.iter().map(|line| line.at).max() else { return Ok(()) };
        self.unsynced(|store| store.keep_latest_rows(lines, newest))
    }

    fn keep_latest_rows(&mut self, lines: &[LatestLine], newest: Timestamp) -> Result<(), StoreError> {
        let path = self.path.clone();
        let fail = |e| classify(&path, e);
        let transaction = self.connection.transaction().map_err(fail)?;
        {
            let mut upsert = transaction
                .prepare_cached(
                    "INSERT INTO latest_lines (network, room, name, message_id, at) VALUES (?1, ?2, ?3, ?4, ?5)
                     ON CONFLICT (network, room, name)
                     DO UPDATE SET message_id = excluded.message_id, at = excluded.at",
                )
                .map_err(fail)?;
            for line in lines {
                let (network, room) = (line.place.network.as_str(), line.place.room.as_str());
                upsert.execute(params![network, room, line.name, line.id, line.at.0]).map_err(fail)?;
            }
        }
        transaction
            .execute("DELETE FROM latest_lines WHERE at < ?1", [newest.0 - REPLY_WITHIN])
            .map_err(fail)?;
        transaction
            .execute(
                "DELETE FROM latest_lines WHERE (network, room, name) IN
                 (SELECT network, room, name FROM latest_lines
                  ORDER BY at DESC, network, room, name LIMIT -1 OFFSET ?1)",
                [LATEST as i64],
            )
            .map_err(fail)?;
        transaction.commit().map_err(fail)
    }

    /// The latest lines kept, oldest first.
    pub fn latest(&self) -> Result<Vec<LatestLine>, StoreError> {
        let fail = |e| self.error(e);
        let mut statement = self
            .connection
            .prepare("SELECT network, room, name, message_id, at FROM latest_lines ORDER BY at, network, room, name")
            .map_err(fail)?;
        statement
            .query_map([], |row| {
                Ok(LatestLine {
                    place: Place {
                        network: NetworkId::new(row.get::<_, String>(0)?),
                        room: RoomId::new(row.get::<_, String>(1)?),
                    },
                    name: row.get(2)?,
                    id: row.get(3)?,
                    at: Timestamp(row.get(4)?),
                })
            })
            .map_err(fail)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(fail)
    }

    /// Hands the kept latest lines to `router`; a table that does not read leaves IRC
    /// lines addressing someone as plain chat until they speak again (logged).
    pub(super) fn load_latest(&self, router: &mut Router) {
        match self.latest() {
            Ok(lines) => router.recall_latest(lines),
            Err(error) => {
                tracing::warn!(%error, "the speakers' latest lines do not read; a line addressing someone by a bare name is plain chat until they speak again");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Durability, OpenMode, Store};
    use super::*;

    fn line(room: &str, name: &str, id: &str, at: i64) -> LatestLine {
        LatestLine {
            place: Place { network: NetworkId::new("matrix"), room: RoomId::new(room) },
            name: name.to_owned(),
            id: id.to_owned(),
            at: Timestamp(at),
        }
    }

    #[test]
    fn latest_lines_are_kept_across_a_reopen_one_per_speaker_and_room_and_only_fresh_ones() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("spellbridge.db");
        {
            let mut store = Store::open(&path, OpenMode::CreateIfMissing, Durability::Full).expect("store");
            store.keep_latest(&[]).expect("nothing to keep");
            store
                .keep_latest(&[line("!a:hs", "old", "$0", 100), line("!a:hs", "bob", "$1", 1000)])
                .expect("kept");
            let later = [line("!a:hs", "bob", "$2", 1000 + REPLY_WITHIN), line("!b:hs", "bob", "$3", 1001)];
            store.keep_latest(&later).expect("kept");
            let synchronous: i64 =
                store.connection().query_row("PRAGMA synchronous", [], |row| row.get(0)).expect("pragma");
            assert_eq!(synchronous, 2, "the store's own durability (FULL) is back");
        }
        let store = Store::open(&path, OpenMode::MustExist, Durability::Full).expect("reopened");
        let kept = store.latest().expect("read");
        assert_eq!(
            kept,
            [line("!b:hs", "bob", "$3", 1001), line("!a:hs", "bob", "$2", 1000 + REPLY_WITHIN)],
            "bob's newer line replaced his older one in !a; the stale line went"
        );
    }

    #[test]
    fn only_the_latest_rows_are_kept() {
        let dir = tempfile::tempdir().expect("dir");
        let mut store = Store::open(&dir.path().join("s.db"), OpenMode::CreateIfMissing, Durability::Full)
            .expect("store");
        // Ten speakers a second, all still fresh enough to be answered.
        let lines: Vec<LatestLine> =
            (0..LATEST + 3).map(|i| line("!a:hs", &format!("n{i:05}"), "$x", 5000 + i as i64 / 10)).collect();
        store.keep_latest(&lines).expect("kept");
        let kept = store.latest().expect("read");
        assert_eq!(kept.len(), LATEST);
        let first_second: Vec<&str> =
            kept.iter().filter(|l| l.at == Timestamp(5000)).map(|l| l.name.as_str()).collect();
        assert_eq!(first_second, ["n00000", "n00001", "n00002", "n00003", "n00004", "n00005", "n00006"]);
        assert_eq!(kept.last().map(|l| l.name.clone()), Some(format!("n{:05}", LATEST + 2)));
    }
}
