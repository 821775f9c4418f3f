//! `[http] hidden_rooms`: the rooms whose tables the site never shows. A table belongs to
//! every room of its bridge (it is stored under the bridge's first room), so hiding any
//! room of a bridge hides the bridge's tables.

use std::collections::BTreeSet;

use spellbridge_core::{NetworkId, RoomId};

use crate::config::BridgeSettings;

/// The places (network, room) whose tables are not shown.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hidden {
    places: BTreeSet<(NetworkId, RoomId)>,
}

impl Hidden {
    /// The rooms of `hidden_rooms`, with every room of a bridge that holds one of them.
    pub fn new(hidden_rooms: &[(NetworkId, RoomId)], bridges: &[BridgeSettings]) -> Hidden {
        let mut places: BTreeSet<(NetworkId, RoomId)> = hidden_rooms.iter().cloned().collect();
        for bridge in bridges {
            if bridge.rooms.iter().any(|room| places.contains(room)) {
                places.extend(bridge.rooms.iter().cloned());
            }
        }
        Hidden { places }
    }

    /// True when the tables of `room` on `network` are not shown.
    pub fn hides(&self, network: &NetworkId, room: &RoomId) -> bool {
        self.places.contains(&(network.clone(), room.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(network: &str, room: &str) -> (NetworkId, RoomId) {
        (NetworkId::new(network), RoomId::new(room))
    }

    #[test]
    fn a_hidden_room_hides_its_whole_bridge_and_nothing_else() {
        let bridge = BridgeSettings {
            name: "magic".into(),
            rooms: vec![place("libera", "#magic"), place("matrix", "!magic:example.org")],
            relay: true,
            relay_lines: 5,
            edits: crate::relay::Edits::Diff,
        };
        let other = BridgeSettings {
            name: "open".into(),
            rooms: vec![place("libera", "#open"), place("matrix", "!open:example.org")],
            relay: true,
            relay_lines: 5,
            edits: crate::relay::Edits::Diff,
        };
        let hidden = Hidden::new(
            &[place("matrix", "!magic:example.org"), place("libera", "#secret")],
            &[bridge, other],
        );
        assert!(hidden.hides(&NetworkId::new("libera"), &RoomId::new("#magic")), "the bridge's hub");
        assert!(hidden.hides(&NetworkId::new("libera"), &RoomId::new("#secret")));
        assert!(!hidden.hides(&NetworkId::new("libera"), &RoomId::new("#open")));
        assert!(!hidden.hides(&NetworkId::new("oftc"), &RoomId::new("#secret")), "another network's room");
        assert!(!Hidden::default().hides(&NetworkId::new("libera"), &RoomId::new("#magic")));
    }
}
