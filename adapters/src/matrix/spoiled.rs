//! The rooms a third member has spoiled as private chats (issue 29, item 1): once someone
//! besides the bot and the player is seen in a room the bot could otherwise vouch for
//! (`vouch`), it is never private again, whatever its state says later. Kept in the store
//! directory (`spoiled-rooms.json`, written atomically like the rest of the store), so a
//! restart, or a store matrix-sdk had to start afresh, does not forget them.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Mutex;

use matrix_sdk::ruma::RoomId;

use super::store::{read_optional, write_atomically};
use super::transport::lock;

/// The room ids kept in `spoiled-rooms.json`.
pub(super) struct SpoiledRooms {
    path: Option<PathBuf>,
    /// Read from the file on first use.
    rooms: Mutex<Option<BTreeSet<String>>>,
}

impl SpoiledRooms {
    /// The rooms remembered in `path` (read when first needed; `None`: in memory only).
    pub(super) fn new(path: Option<PathBuf>) -> Self {
        SpoiledRooms { path, rooms: Mutex::new(None) }
    }

    /// Whether `room` was spoiled.
    pub(super) fn contains(&self, room: &RoomId) -> bool {
        self.with(|rooms| (rooms.contains(room.as_str()), false))
    }

    /// Remembers `room` as spoiled; true when it was not yet.
    pub(super) fn insert(&self, room: &RoomId) -> bool {
        self.with(|rooms| {
            let new = rooms.insert(room.as_str().to_owned());
            (new, new)
        })
    }

    /// Reads or changes the set; `write` (the second value) keeps it in the file.
    fn with<T>(&self, change: impl FnOnce(&mut BTreeSet<String>) -> (T, bool)) -> T {
        let mut rooms = lock(&self.rooms);
        let rooms = rooms.get_or_insert_with(|| {
            let text = self.path.as_deref().and_then(|p| read_optional(p).ok().flatten()).unwrap_or_default();
            serde_json::from_str(&text).unwrap_or_default()
        });
        let (value, write) = change(rooms);
        if write && let Some(path) = &self.path {
            let text = serde_json::to_string(&*rooms).unwrap_or_default();
            if let Err(error) = write_atomically(path, text.as_bytes()) {
                tracing::warn!(%error, "could not keep a spoiled private room in the store; its member events still keep it from being used");
            }
        }
        value
    }
}

#[cfg(test)]
mod tests {
    use matrix_sdk::ruma::room_id;

    use super::*;

    #[test]
    fn a_spoiled_room_stays_spoiled_across_a_restart() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join("spoiled-rooms.json");
        let (dm, other) = (room_id!("!dm:hs"), room_id!("!other:hs"));
        let spoiled = SpoiledRooms::new(Some(path.clone()));
        assert!(!spoiled.contains(dm));
        assert!(spoiled.insert(dm));
        assert!(!spoiled.insert(dm), "already kept");
        let restarted = SpoiledRooms::new(Some(path));
        assert!(restarted.contains(dm), "kept in the file");
        assert!(!restarted.contains(other));
    }

    #[test]
    fn an_unreadable_file_forgets_nothing_it_is_told_later() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join("spoiled-rooms.json");
        std::fs::write(&path, "not json").expect("written");
        let spoiled = SpoiledRooms::new(Some(path.clone()));
        assert!(!spoiled.contains(room_id!("!dm:hs")));
        spoiled.insert(room_id!("!dm:hs"));
        assert!(SpoiledRooms::new(Some(path)).contains(room_id!("!dm:hs")));
    }
}
