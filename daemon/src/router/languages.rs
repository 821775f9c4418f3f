//! Who is told where, kept by the router: the languages `!lang` chose for rooms and for
//! players' private messages (journaled; [`super::language`] has the command and the
//! config's defaults), and the room each player last asked something in (memory only: a
//! restart forgets it), where a private chat the network opened for them is announced
//! ([`super::sent`]).

use std::collections::BTreeMap;

use spellbridge_core::{Inbound, Language, NetworkId, PlayerId, RoomId, Timestamp};

use crate::turn::Place;

/// How long after a player's command in a room the room is told of a private chat opened
/// for them (seconds): the bot's answer comes at once; a chat opened much later is not
/// about what they asked there.
pub const ASKED_WITHIN: i64 = 10 * 60;
/// How many players' last rooms are remembered.
pub const ASKED: usize = 4096;

/// Where a player last asked something in a room.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Asked {
    /// The room.
    pub room: RoomId,
    /// The thread asked in, if any.
    pub thread: Option<String>,
    /// When.
    at: Timestamp,
}

/// Each identity's last room asked in.
#[derive(Debug, Default)]
struct AskedIn {
    by: BTreeMap<(NetworkId, PlayerId), Asked>,
}

impl AskedIn {
    /// Notes a command said in a room.
    fn note(&mut self, inbound: &Inbound, now: Timestamp) {
        if inbound.private {
            return;
        }
        let asked = Asked { room: inbound.room.clone(), thread: inbound.thread.clone(), at: now };
        self.by.insert((inbound.network.clone(), inbound.sender.clone()), asked);
        if self.by.len() > ASKED {
            self.by.retain(|_, asked| now.0 - asked.at.0 <= ASKED_WITHIN);
            while self.by.len() > ASKED {
                let Some(oldest) = self.by.iter().min_by_key(|(_, a)| a.at).map(|(k, _)| k.clone()) else {
                    break;
                };
                self.by.remove(&oldest);
            }
        }
    }

    fn recent(&self, network: &NetworkId, player: &PlayerId, now: Timestamp) -> Option<&Asked> {
        let asked = self.by.get(&(network.clone(), player.clone()))?;
        (now.0 - asked.at.0 <= ASKED_WITHIN).then_some(asked)
    }
}

/// The languages chosen, and where players last asked.
#[derive(Debug, Default)]
pub struct Languages {
    /// Rooms' choices (each room itself, never a bridge's hub for all its rooms).
    rooms: BTreeMap<Place, Language>,
    /// Players' choices for their private messages.
    players: BTreeMap<PlayerId, Language>,
    /// Each identity's last room asked in.
    asked: AskedIn,
}

impl Languages {
    /// The language `!lang` chose for `room`, if any.
    pub fn room(&self, room: &Place) -> Option<Language> {
        self.rooms.get(room).copied()
    }

    /// The language `!lang` chose for `player`'s private messages, if any.
    pub fn player(&self, player: &PlayerId) -> Option<Language> {
        self.players.get(player).copied()
    }

    /// `room` is told in `language` from now on.
    pub fn choose_room(&mut self, room: Place, language: Language) {
        self.rooms.insert(room, language);
    }

    /// `player`'s private messages are told in `language` from now on.
    pub fn choose_player(&mut self, player: PlayerId, language: Language) {
        self.players.insert(player, language);
    }

    /// Notes a command said in a room (a private one is not noted).
    pub fn note_asked(&mut self, inbound: &Inbound, now: Timestamp) {
        self.asked.note(inbound, now);
    }

    /// Where `player` on `network` last asked something in a room, if within
    /// [`ASKED_WITHIN`] of `now`.
    pub fn asked(&self, network: &NetworkId, player: &PlayerId, now: Timestamp) -> Option<&Asked> {
        self.asked.recent(network, player, now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(network: &str, room: &str, sender: &str) -> Inbound {
        Inbound::new(NetworkId::new(network), RoomId::new(room), PlayerId::new(sender), "!link")
    }

    #[test]
    fn the_room_last_asked_in_is_remembered_while_recent_and_bounded() {
        let mut by = AskedIn::default();
        let (matrix, alice) = (NetworkId::new("matrix"), PlayerId::new("@alice:hs"));
        by.note(&asked("matrix", "!one:hs", "@alice:hs"), Timestamp(100));
        by.note(&asked("matrix", "!two:hs", "@alice:hs"), Timestamp(110));
        let private = Inbound { private: true, ..asked("matrix", "!dm:hs", "@alice:hs") };
        by.note(&private, Timestamp(120));
        assert_eq!(by.recent(&matrix, &alice, Timestamp(130)).map(|a| a.room.as_str()), Some("!two:hs"));
        assert_eq!(by.recent(&NetworkId::new("irc"), &alice, Timestamp(130)), None, "per network");
        assert_eq!(by.recent(&matrix, &alice, Timestamp(110 + ASKED_WITHIN + 1)), None, "too long ago");
        for i in 0..ASKED + 1 {
            by.note(&asked("matrix", "!r:hs", &format!("@p{i}:hs")), Timestamp(200));
        }
        assert_eq!(by.by.len(), ASKED);
        assert_eq!(by.recent(&matrix, &alice, Timestamp(300)), None, "the oldest went first");
    }
}
