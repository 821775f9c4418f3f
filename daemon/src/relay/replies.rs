//! What replies and reactions across a bridge need to find their speaker (issue 17,
//! items 4 and 7): the network's ids of relayed lines, and each speaker's latest line in
//! each room.
//!
//! The bot relays a line into a Matrix room as a message of its own, so a Matrix reply or
//! reaction to it points at the bot's event. Once the line is sent, its transport says
//! which id the network gave it ([`spellbridge_core::Sent`]); the daemon hands the id and
//! the line's speaker and words ([`Relayed`]) to [`Replies::learn`] (and keeps them in the
//! store, so a restart forgets none), and the relay renders a reply to that event as
//! `nick: text` and a reaction as `reacted 👍 to nick's “first words…”`.
//!
//! The other way, an IRC line that starts by naming someone (`alice: hi`) is sent into a
//! Matrix room as a reply to alice's latest line there ([`Replies::answered`]), when she
//! said it within [`REPLY_WITHIN`]. Both are bounded: at most [`LEARNED`] ids and
//! [`LATEST`] speakers are remembered, the oldest forgotten first. The latest lines are
//! kept in the store too (each one heard is handed out by [`Replies::take_heard`], and
//! put back at start by [`Replies::recall`]), so that a restart does not make an IRC
//! `alice: hi` plain chat.

use std::collections::{BTreeMap, VecDeque};

use spellbridge_core::{NetworkId, Relayed, Timestamp};

use crate::turn::Place;

/// How many relayed lines' ids are remembered (the store keeps as many).
pub const LEARNED: usize = 4096;
/// How recent (in seconds) a Matrix user's latest line must be for an IRC `nick: text`
/// to be sent as a reply to it: ten minutes; an older line is no longer what the
/// conversation is about, and the line goes as plain chat.
pub const REPLY_WITHIN: i64 = 10 * 60;
/// How many speakers' latest lines are remembered, over every room.
pub const LATEST: usize = 4096;
/// The longest name an addressed line (`name: text`) is read for.
const NAME_CHARS: usize = 64;

/// A speaker's latest line in one room.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Latest {
    id: String,
    at: Timestamp,
}

/// A speaker's latest line in a room, as the store keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LatestLine {
    /// The room.
    pub place: Place,
    /// The speaker's name, case-folded.
    pub name: String,
    /// The network's id of the line.
    pub id: String,
    /// When it was said.
    pub at: Timestamp,
}

/// Relayed lines by their network's id, and each speaker's latest line per room.
#[derive(Debug, Default)]
pub struct Replies {
    learned: BTreeMap<(NetworkId, String), Relayed>,
    order: VecDeque<(NetworkId, String)>,
    /// By room and case-folded name.
    latest: BTreeMap<(Place, String), Latest>,
    /// The latest lines heard since the last [`Replies::take_heard`], to be kept.
    to_keep: VecDeque<LatestLine>,
}

impl Replies {
    /// Notes that the relayed line `relayed` went out on `network` as the message `id`.
    pub fn learn(&mut self, network: &NetworkId, id: &str, relayed: Relayed) {
        let key = (network.clone(), id.to_owned());
        if self.learned.insert(key.clone(), relayed).is_none() {
            self.order.push_back(key);
        }
        while self.order.len() > LEARNED {
            if let Some(oldest) = self.order.pop_front() {
                self.learned.remove(&oldest);
            }
        }
    }

    /// The relayed line that went out on `network` as the message `id`, if known.
    pub fn learned(&self, network: &NetworkId, id: &str) -> Option<&Relayed> {
        self.learned.get(&(network.clone(), id.to_owned()))
    }

    /// How many relayed lines' ids are remembered.
    pub fn learned_count(&self) -> usize {
        self.learned.len()
    }

    /// Notes that `name` said the message `id` in `place` at `at`.
    pub fn heard(&mut self, place: &Place, name: &str, id: &str, at: Timestamp) {
        let line = LatestLine { place: place.clone(), name: fold(name), id: id.to_owned(), at };
        if self.to_keep.len() >= LATEST {
            self.to_keep.pop_front();
        }
        self.to_keep.push_back(line.clone());
        self.recall(line);
    }

    /// The latest lines heard since the last call, oldest first, for the store.
    pub fn take_heard(&mut self) -> Vec<LatestLine> {
        self.to_keep.drain(..).collect()
    }

    /// Puts back a latest line the store kept (at start); it is not handed out again.
    pub fn recall(&mut self, line: LatestLine) {
        let LatestLine { place, name, id, at } = line;
        self.latest.insert((place, fold(&name)), Latest { id, at });
        if self.latest.len() > LATEST {
            // Forget the lines too old to be answered, then, if that was not enough, the
            // oldest of the rest.
            let fresh = at.0 - REPLY_WITHIN;
            self.latest.retain(|_, latest| latest.at.0 >= fresh);
            while self.latest.len() > LATEST {
                let Some(oldest) = self.latest.iter().min_by_key(|(_, l)| l.at).map(|(k, _)| k.clone())
                else {
                    break;
                };
                self.latest.remove(&oldest);
            }
        }
    }

    /// The message a line `text` answers in `place` at `now`: when it starts by naming
    /// someone (`name: text` or `name, text`) who said something there within
    /// [`REPLY_WITHIN`], their latest line's id.
    pub fn answered(&self, place: &Place, text: &str, now: Timestamp) -> Option<&str> {
        let name = addressee(text)?;
        let latest = self.latest.get(&(place.clone(), fold(name)))?;
        (now.0 - latest.at.0 <= REPLY_WITHIN).then_some(latest.id.as_str())
    }
}

/// The name a line starts by addressing, IRC fashion: `alice: hi`, `alice, hi` (a colon
/// or comma right after the name, then a space or the end).
pub fn addressee(text: &str) -> Option<&str> {
    let end = text.find([':', ','])?;
    let (name, rest) = (&text[..end], &text[end + 1..]);
    let name = name.trim();
    let ends_well = rest.is_empty() || rest.starts_with(char::is_whitespace);
    (ends_well && !name.is_empty() && name.chars().count() <= NAME_CHARS).then_some(name)
}

/// A name as it is compared: case-folded.
fn fold(name: &str) -> String {
    name.to_lowercase()
}

#[cfg(test)]
mod tests {
    use spellbridge_core::RoomId;

    use super::*;

    fn room() -> Place {
        Place { network: NetworkId::new("matrix"), room: RoomId::new("!room:hs") }
    }

    fn line(name: &str) -> Relayed {
        Relayed { name: name.to_owned(), text: "hello".to_owned() }
    }

    #[test]
    fn a_line_addresses_the_name_before_its_colon_or_comma() {
        assert_eq!(addressee("alice: hi"), Some("alice"));
        assert_eq!(addressee("Bobby Tables, are you there?"), Some("Bobby Tables"));
        assert_eq!(addressee("alice:"), Some("alice"));
        assert_eq!(addressee("see http://example.org"), None, "a colon inside a word");
        assert_eq!(addressee("no address here"), None);
        assert_eq!(addressee(": hi"), None);
        assert_eq!(addressee(&format!("{}: hi", "x".repeat(65))), None, "too long to be a name");
    }

    #[test]
    fn an_addressed_line_answers_the_latest_line_of_that_name_while_it_is_recent() {
        let mut replies = Replies::default();
        replies.heard(&room(), "Bobby", "$1", Timestamp(1000));
        replies.heard(&room(), "Bobby", "$2", Timestamp(1010));
        assert_eq!(replies.answered(&room(), "bobby: hi", Timestamp(1020)), Some("$2"), "any case");
        assert_eq!(replies.answered(&room(), "alice: hi", Timestamp(1020)), None, "nobody of that name");
        let elsewhere = Place { room: RoomId::new("!other:hs"), ..room() };
        assert_eq!(replies.answered(&elsewhere, "Bobby: hi", Timestamp(1020)), None, "another room");
        assert_eq!(replies.answered(&room(), "Bobby: hi", Timestamp(1010 + REPLY_WITHIN)), Some("$2"));
        assert_eq!(replies.answered(&room(), "Bobby: hi", Timestamp(1011 + REPLY_WITHIN)), None, "too old");
    }

    #[test]
    fn latest_lines_heard_are_handed_out_once_and_recalled_ones_answer_as_before() {
        let mut replies = Replies::default();
        replies.heard(&room(), "Bobby", "$1", Timestamp(1000));
        replies.heard(&room(), "ALICE", "$2", Timestamp(1005));
        let heard = replies.take_heard();
        let line = |name: &str, id: &str, at| LatestLine {
            place: room(),
            name: name.to_owned(),
            id: id.to_owned(),
            at: Timestamp(at),
        };
        assert_eq!(heard, [line("bobby", "$1", 1000), line("alice", "$2", 1005)]);
        assert!(replies.take_heard().is_empty(), "once");
        // A restart: a new index from what the store kept.
        let mut restarted = Replies::default();
        for line in heard {
            restarted.recall(line);
        }
        assert!(restarted.take_heard().is_empty(), "recalled lines are kept already");
        assert_eq!(restarted.answered(&room(), "Alice: hi", Timestamp(1010)), Some("$2"));
        assert_eq!(restarted.answered(&room(), "bobby, hi", Timestamp(1010)), Some("$1"));
        // Lines not taken yet are bounded too.
        for i in 0..LATEST + 5 {
            replies.heard(&room(), &format!("n{i}"), "$n", Timestamp(2000));
        }
        let heard = replies.take_heard();
        assert_eq!(heard.len(), LATEST);
        assert_eq!(heard[0].name, "n5", "the oldest went");
    }

    #[test]
    fn learned_ids_are_bounded_and_the_oldest_go_first() {
        let mut replies = Replies::default();
        let matrix = NetworkId::new("matrix");
        for i in 0..LEARNED + 10 {
            replies.learn(&matrix, &format!("${i}"), line(&format!("nick{i}")));
        }
        assert_eq!(replies.learned_count(), LEARNED);
        assert_eq!(replies.learned(&matrix, "$0"), None, "the oldest is forgotten");
        assert_eq!(replies.learned(&matrix, "$9"), None);
        assert_eq!(replies.learned(&matrix, "$10").map(|r| r.name.as_str()), Some("nick10"));
        let last = format!("${}", LEARNED + 9);
        assert!(replies.learned(&matrix, &last).is_some());
        assert_eq!(replies.learned(&NetworkId::new("other"), &last), None, "per network");
        // Learning an id again replaces what it says, and does not count twice.
        replies.learn(&matrix, &last, line("again"));
        assert_eq!(replies.learned_count(), LEARNED);
        assert_eq!(replies.learned(&matrix, &last).map(|r| r.name.as_str()), Some("again"));
    }

    #[test]
    fn speakers_latest_lines_are_bounded_stale_ones_first() {
        let mut replies = Replies::default();
        for i in 0..LATEST {
            replies.heard(&room(), &format!("old{i}"), "$old", Timestamp(0));
        }
        replies.heard(&room(), "fresh", "$new", Timestamp(REPLY_WITHIN + 1));
        assert_eq!(replies.latest.len(), 1, "every stale line is forgotten at once");
        for i in 0..=LATEST {
            replies.heard(&room(), &format!("n{i}"), "$n", Timestamp(REPLY_WITHIN + 2));
        }
        assert_eq!(replies.latest.len(), LATEST);
        assert_eq!(
            replies.answered(&room(), "fresh: hi", Timestamp(REPLY_WITHIN + 2)),
            None,
            "the oldest went"
        );
    }
}
