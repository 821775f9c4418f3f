//! The tables by what a command looks them up by, so that finding the table in a room,
//! the table a player is seated at, or the next timer costs a lookup however many tables
//! have ever been opened (issue 16): unfinished tables by their place (a room, or a
//! bridge's hub), the latest finished table of each place, unfinished tables by seated
//! player, and every table's next timer. Finished tables leave the first, third and
//! fourth.
//!
//! The router calls [`TableIndex::update`] with a table's facts whenever it may have
//! changed them (opened, acted, fired a timer, restored, replayed) and rebuilds it when
//! the bridges change (a place's hub moves).

use std::collections::{BTreeSet, HashMap};

use spellbridge_core::{PlayerId, Timestamp};

use crate::journal::TableId;
use crate::turn::Place;

/// What a table is indexed under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Facts {
    /// Its place's hub.
    pub(super) hub: Place,
    /// Its seated players.
    pub(super) players: Vec<PlayerId>,
    /// When its next timer is due.
    pub(super) timer: Option<Timestamp>,
    /// True once the game is over.
    pub(super) finished: bool,
}

/// The tables' indexes.
#[derive(Debug, Default)]
pub(super) struct TableIndex {
    /// Each table's facts as indexed.
    facts: HashMap<TableId, Facts>,
    /// Unfinished tables by place (normally one; a reload that bridges two rooms with
    /// tables may make two, and the oldest answers).
    active: HashMap<Place, BTreeSet<TableId>>,
    /// The finished tables of each place (only its latest is asked for).
    finished: HashMap<Place, BTreeSet<TableId>>,
    /// Unfinished tables by seated player.
    seated: HashMap<PlayerId, BTreeSet<TableId>>,
    /// Every table's next timer.
    timers: BTreeSet<(Timestamp, TableId)>,
}

impl TableIndex {
    /// Indexes a table under `facts`, replacing what it was indexed under before.
    pub(super) fn update(&mut self, id: TableId, facts: Facts) {
        if self.facts.get(&id) == Some(&facts) {
            return;
        }
        self.remove(id);
        if let Some(at) = facts.timer {
            self.timers.insert((at, id));
        }
        if facts.finished {
            self.finished.entry(facts.hub.clone()).or_default().insert(id);
        } else {
            self.active.entry(facts.hub.clone()).or_default().insert(id);
            for player in &facts.players {
                self.seated.entry(player.clone()).or_default().insert(id);
            }
        }
        self.facts.insert(id, facts);
    }

    /// Forgets what a table was indexed under.
    fn remove(&mut self, id: TableId) {
        let Some(old) = self.facts.remove(&id) else { return };
        if let Some(at) = old.timer {
            self.timers.remove(&(at, id));
        }
        if old.finished {
            remove_from(&mut self.finished, &old.hub, id);
            return;
        }
        remove_from(&mut self.active, &old.hub, id);
        for player in &old.players {
            remove_from(&mut self.seated, player, id);
        }
    }

    /// Forgets everything (before the router indexes every table again).
    pub(super) fn clear(&mut self) {
        *self = TableIndex::default();
    }

    /// The unfinished table of a place.
    pub(super) fn active_at(&self, hub: &Place) -> Option<TableId> {
        self.active.get(hub).and_then(|ids| ids.first().copied())
    }

    /// The most recent finished table of a place.
    pub(super) fn finished_at(&self, hub: &Place) -> Option<TableId> {
        self.finished.get(hub).and_then(|ids| ids.last().copied())
    }

    /// The unfinished tables `player` is seated at, oldest first.
    pub(super) fn seated(&self, player: &PlayerId) -> impl Iterator<Item = TableId> + '_ {
        self.seated.get(player).into_iter().flatten().copied()
    }

    /// The players seated at a table, as last indexed.
    pub(super) fn players(&self, id: TableId) -> &[PlayerId] {
        self.facts.get(&id).map_or(&[], |facts| &facts.players)
    }

    /// The earliest timer of any table.
    pub(super) fn next_timer(&self) -> Option<Timestamp> {
        self.timers.first().map(|(at, _)| *at)
    }

    /// The tables with a timer due at or before `now`, by number.
    pub(super) fn due(&self, now: Timestamp) -> BTreeSet<TableId> {
        self.timers.iter().take_while(|(at, _)| *at <= now).map(|(_, id)| *id).collect()
    }
}

fn remove_from<K: std::hash::Hash + Eq>(map: &mut HashMap<K, BTreeSet<TableId>>, key: &K, id: TableId) {
    if let Some(ids) = map.get_mut(key) {
        ids.remove(&id);
        if ids.is_empty() {
            map.remove(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use spellbridge_core::{NetworkId, RoomId};

    use super::*;

    fn place(room: &str) -> Place {
        Place { network: NetworkId::new("irc"), room: RoomId::new(room) }
    }

    fn facts(room: &str, players: &[&str], timer: Option<i64>, finished: bool) -> Facts {
        Facts {
            hub: place(room),
            players: players.iter().map(|p| PlayerId::new(*p)).collect(),
            timer: timer.map(Timestamp),
            finished,
        }
    }

    #[test]
    fn a_table_moves_between_the_indexes_as_it_changes() {
        let mut index = TableIndex::default();
        index.update(0, facts("#a", &["alice"], Some(10), false));
        index.update(1, facts("#b", &["alice", "bob"], Some(5), false));
        assert_eq!(index.active_at(&place("#a")), Some(0));
        assert_eq!(index.seated(&PlayerId::new("alice")).collect::<Vec<_>>(), [0, 1]);
        assert_eq!(index.next_timer(), Some(Timestamp(5)));
        assert_eq!(index.due(Timestamp(10)), BTreeSet::from([0, 1]));
        // Bob leaves table 1, then it ends: out of every hot map, the latest of its room.
        index.update(1, facts("#b", &["alice"], Some(7), false));
        assert_eq!(index.seated(&PlayerId::new("bob")).count(), 0);
        index.update(1, facts("#b", &["alice"], None, true));
        assert_eq!(index.active_at(&place("#b")), None);
        assert_eq!(index.finished_at(&place("#b")), Some(1));
        assert_eq!(index.seated(&PlayerId::new("alice")).collect::<Vec<_>>(), [0]);
        assert_eq!(index.due(Timestamp(100)), BTreeSet::from([0]));
        // A newer table in the room is the one that answers there.
        index.update(2, facts("#b", &["carol"], None, false));
        assert_eq!(index.active_at(&place("#b")), Some(2));
        index.update(2, facts("#b", &["carol"], None, true));
        assert_eq!(index.finished_at(&place("#b")), Some(2));
    }
}
