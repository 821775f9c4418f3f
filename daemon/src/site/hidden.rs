//! `[http] hidden_rooms`: the rooms whose tables the site never shows. A table is stored
//! under one room of its bridge (the first listed, as the router had it then), so hiding
//! any room of a bridge hides every room of it, whatever order the bridge lists them in.
//!
//! Names are matched as they were looked up ([`crate::aliases`]): an entry or a bridge
//! room given as a Matrix alias stands for the room it points to, and for every room it
//! pointed to since the daemon started (a table opened there before the alias moved stays
//! hidden until a restart), as well as for the alias's own text. Until every name on a
//! network that matters has been looked up, nothing of that network is shown, nor any
//! bridge with a room on it: the site fails closed while it cannot tell (at start, after
//! a SIGHUP that adds a name, while the homeserver cannot be asked).

use std::collections::BTreeSet;

use spellbridge_core::{NetworkId, RoomId};

use crate::aliases::Seen;
use crate::config::BridgeSettings;

/// The places (network, room) whose tables are not shown.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hidden {
    places: BTreeSet<(NetworkId, RoomId)>,
    /// Networks with a name not yet looked up: none of their rooms is shown.
    unsure: BTreeSet<NetworkId>,
}

impl Hidden {
    /// The rooms of `hidden_rooms`, with every room of a bridge that holds one of them,
    /// each name standing for the rooms `seen` says it was found to be.
    pub fn new(hidden_rooms: &[(NetworkId, RoomId)], bridges: &[BridgeSettings], seen: &Seen) -> Hidden {
        if hidden_rooms.is_empty() {
            return Hidden::default();
        }
        let mut unsure = BTreeSet::new();
        // A name and every room it stood for; a name not yet looked up makes its network unsure.
        let mut rooms_of = |(network, room): &(NetworkId, RoomId)| -> Vec<(NetworkId, RoomId)> {
            let mut rooms = vec![(network.clone(), room.clone())];
            match seen.get(&(network.clone(), room.as_str().to_owned())) {
                Some(found) => rooms.extend(found.iter().map(|r| (network.clone(), r.clone()))),
                None => {
                    unsure.insert(network.clone());
                }
            }
            rooms
        };
        let mut places: BTreeSet<(NetworkId, RoomId)> = hidden_rooms.iter().flat_map(&mut rooms_of).collect();
        let bridges: Vec<Vec<(NetworkId, RoomId)>> =
            bridges.iter().map(|bridge| bridge.rooms.iter().flat_map(&mut rooms_of).collect()).collect();
        for rooms in &bridges {
            let hidden = rooms.iter().any(|place| places.contains(place) || unsure.contains(&place.0));
            if hidden {
                places.extend(rooms.iter().cloned());
            }
        }
        Hidden { places, unsure }
    }

    /// [`Hidden::new`] with every name taken as the room it names (no lookups: tests,
    /// benches).
    pub fn named(hidden_rooms: &[(NetworkId, RoomId)], bridges: &[BridgeSettings]) -> Hidden {
        let names = crate::aliases::names(bridges, hidden_rooms);
        let seen: Seen = names
            .into_iter()
            .map(|(network, room)| {
                let rooms = BTreeSet::from([RoomId::new(room.as_str())]);
                ((network, room), rooms)
            })
            .collect();
        Hidden::new(hidden_rooms, bridges, &seen)
    }

    /// True when the tables of `room` on `network` are not shown.
    pub fn hides(&self, network: &NetworkId, room: &RoomId) -> bool {
        self.unsure.contains(network) || self.places.contains(&(network.clone(), room.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(network: &str, room: &str) -> (NetworkId, RoomId) {
        (NetworkId::new(network), RoomId::new(room))
    }

    fn bridge(name: &str, rooms: &[(&str, &str)]) -> BridgeSettings {
        BridgeSettings {
            name: name.into(),
            rooms: rooms.iter().map(|(n, r)| place(n, r)).collect(),
            relay: true,
            relay_lines: 5,
            edits: crate::relay::Edits::Diff,
            speaker_rate: None,
        }
    }

    fn hides(hidden: &Hidden, network: &str, room: &str) -> bool {
        hidden.hides(&NetworkId::new(network), &RoomId::new(room))
    }

    /// `seen` with each (network, name, rooms).
    fn seen(entries: &[(&str, &str, &[&str])]) -> Seen {
        entries
            .iter()
            .map(|(n, name, rooms)| {
                ((NetworkId::new(*n), (*name).to_owned()), rooms.iter().map(|r| RoomId::new(*r)).collect())
            })
            .collect()
    }

    #[test]
    fn a_hidden_room_hides_its_whole_bridge_and_nothing_else() {
        let magic = bridge("magic", &[("libera", "#magic"), ("matrix", "!magic:example.org")]);
        let open = bridge("open", &[("libera", "#open"), ("matrix", "!open:example.org")]);
        let hidden = Hidden::named(
            &[place("matrix", "!magic:example.org"), place("libera", "#secret")],
            &[magic, open],
        );
        assert!(hides(&hidden, "libera", "#magic"), "the bridge's hub");
        assert!(hides(&hidden, "libera", "#secret"));
        assert!(!hides(&hidden, "libera", "#open"));
        assert!(!hides(&hidden, "oftc", "#secret"), "another network's room");
        assert!(!hides(&Hidden::default(), "libera", "#magic"));
    }

    #[test]
    fn an_alias_hides_the_room_it_points_to_in_either_order_of_the_bridge() {
        // The bridge names the alias, hidden_rooms the id, or the other way round; the
        // bridge lists IRC first or Matrix first: the table's room is hidden each time.
        let found = seen(&[
            ("irc", "#staff", &["#staff"]),
            ("matrix", "#staff:hs", &["!abc"]),
            ("matrix", "!abc", &["!abc"]),
            ("irc", "#open", &["#open"]),
            ("matrix", "#open:hs", &["!open"]),
        ]);
        let open = bridge("open", &[("irc", "#open"), ("matrix", "#open:hs")]);
        for entry in ["#staff:hs", "!abc"] {
            for named in ["#staff:hs", "!abc"] {
                for matrix_first in [false, true] {
                    let mut rooms = vec![("irc", "#staff"), ("matrix", named)];
                    if matrix_first {
                        rooms.reverse();
                    }
                    let staff = bridge("staff", &rooms);
                    let hidden = Hidden::new(&[place("matrix", entry)], &[staff, open.clone()], &found);
                    let case = format!("hidden {entry}, bridge names {named}, Matrix first: {matrix_first}");
                    assert!(hides(&hidden, "irc", "#staff"), "{case}");
                    assert!(hides(&hidden, "matrix", "!abc"), "{case}");
                    if entry.starts_with('#') || named.starts_with('#') {
                        assert!(hides(&hidden, "matrix", "#staff:hs"), "{case}: the alias's own text");
                    }
                    assert!(!hides(&hidden, "irc", "#open") && !hides(&hidden, "matrix", "!open"), "{case}");
                }
            }
        }
        // A hidden alias that is no bridge's room hides the room it points to.
        let alone = seen(&[("matrix", "#alone:hs", &["!alone"])]);
        let hidden = Hidden::new(&[place("matrix", "#alone:hs")], &[], &alone);
        assert!(hides(&hidden, "matrix", "!alone"));
        assert!(!hides(&hidden, "matrix", "!other"));
    }

    #[test]
    fn a_room_an_alias_pointed_to_stays_hidden_after_it_moves() {
        let mut found = seen(&[("matrix", "#staff:hs", &["!old"])]);
        let before = Hidden::new(&[place("matrix", "#staff:hs")], &[], &found);
        assert!(hides(&before, "matrix", "!old") && !hides(&before, "matrix", "!new"));
        // The alias moved: the rebuild (after the next lookup) hides both rooms.
        found
            .get_mut(&(NetworkId::new("matrix"), "#staff:hs".to_owned()))
            .expect("seen")
            .insert(RoomId::new("!new"));
        let after = Hidden::new(&[place("matrix", "#staff:hs")], &[], &found);
        assert!(hides(&after, "matrix", "!old") && hides(&after, "matrix", "!new"));
        assert!(!hides(&after, "matrix", "!other"));
    }

    #[test]
    fn until_a_name_is_looked_up_its_network_and_bridges_are_not_shown() {
        let staff = bridge("staff", &[("irc", "#staff"), ("matrix", "#staff:hs")]);
        let other = bridge("other", &[("irc", "#other"), ("matrix", "!other")]);
        let irc_only = bridge("irc only", &[("irc", "#a"), ("irc", "#b")]);
        let bridges = [staff, other, irc_only];
        let hidden_rooms = [place("matrix", "!abc")];
        // Nothing looked up yet: Matrix is unsure, and so is every bridge with a Matrix room.
        let hidden = Hidden::new(&hidden_rooms, &bridges, &Seen::new());
        for (network, room) in [("matrix", "!anything"), ("irc", "#staff"), ("irc", "#other")] {
            assert!(hides(&hidden, network, room), "{network}/{room}");
        }
        // IRC too is unsure until its names are read back.
        assert!(hides(&hidden, "irc", "#a"));
        let mut found = seen(&[
            ("irc", "#staff", &["#staff"]),
            ("irc", "#other", &["#other"]),
            ("irc", "#a", &["#a"]),
            ("irc", "#b", &["#b"]),
            ("matrix", "!other", &["!other"]),
            ("matrix", "!abc", &["!abc"]),
        ]);
        let hidden = Hidden::new(&hidden_rooms, &bridges, &found);
        assert!(
            hides(&hidden, "irc", "#other") && hides(&hidden, "matrix", "!zzz"),
            "the alias is still unread"
        );
        assert!(!hides(&hidden, "irc", "#a"), "an IRC-only bridge is not in doubt");
        // The homeserver says the alias points nowhere: looked up, it stands for no room.
        found.insert((NetworkId::new("matrix"), "#staff:hs".to_owned()), BTreeSet::new());
        let hidden = Hidden::new(&hidden_rooms, &bridges, &found);
        assert!(!hides(&hidden, "irc", "#other") && !hides(&hidden, "matrix", "!zzz"));
        assert!(!hides(&hidden, "irc", "#staff"), "the alias's room is not !abc");
        assert!(hides(&hidden, "matrix", "!abc"));
        // No hidden rooms: nothing is in doubt.
        assert_eq!(Hidden::new(&[], &bridges, &Seen::new()), Hidden::default());
    }
}
