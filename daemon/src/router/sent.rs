//! What the transports learn by sending, handed back to the router (issue 17, items 4,
//! 7 and 9): the network's id of a relayed line (so a reply or a reaction to it names its
//! speaker, [`crate::relay::replies`]), and a private chat opened for a player who had
//! none with the bot, which the room where they last asked is told of, in its language
//! (`router-private-opened`, with a link to the chat where the network gives one): the
//! player knows where to look.
//!
//! Where each player last asked something in a room is remembered for
//! [`ASKED_WITHIN`], for at most [`ASKED`] players (memory only: a restart forgets it).

use std::collections::BTreeMap;

use spellbridge_core::Relayed;
use spellbridge_core::locale::Args;

use super::said::said;
use super::*;

/// How long after a player's command in a room the room is told of a private chat opened
/// for them (seconds): the bot's answer comes at once; a chat opened much later is not
/// about what they asked there.
pub const ASKED_WITHIN: i64 = 10 * 60;
/// How many players' last rooms are remembered.
pub const ASKED: usize = 4096;

/// Where a player last asked something in a room.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Asked {
    room: RoomId,
    thread: Option<String>,
    at: Timestamp,
}

/// Each identity's last room asked in.
#[derive(Debug, Default)]
pub(super) struct AskedIn {
    by: BTreeMap<(NetworkId, PlayerId), Asked>,
}

impl AskedIn {
    /// Notes a command said in a room.
    pub(super) fn note(&mut self, inbound: &Inbound, now: Timestamp) {
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

impl Router {
    /// A relayed line went out on `network` as the message `id` (see
    /// [`crate::relay::Relay::learn`]).
    pub fn learn_relayed(&mut self, network: &NetworkId, id: &str, line: Relayed) {
        self.relay.learn(network, id, line);
    }

    /// The speakers' latest lines in bridged rooms heard since the last call, for the
    /// store to keep ([`crate::relay::replies`]).
    pub fn take_heard(&mut self) -> Vec<crate::relay::replies::LatestLine> {
        self.relay.take_heard()
    }

    /// Puts back the latest lines the store kept (at start).
    pub fn recall_latest(&mut self, lines: Vec<crate::relay::replies::LatestLine>) {
        self.relay.recall(lines);
    }

    /// `network` opened a private chat with `player` (who had none with the bot) to send
    /// them a message: what to tell the room where they last asked something, if that was
    /// within [`ASKED_WITHIN`] of `now`. Nothing is journaled.
    pub fn opened_private(
        &self,
        network: &NetworkId,
        player: &PlayerId,
        link: Option<&str>,
        now: Timestamp,
    ) -> Vec<Outbound> {
        let Some(asked) = self.asked.recent(network, player, now) else { return Vec::new() };
        let place = Place { network: network.clone(), room: asked.room.clone() };
        let reply_to = ReplyTo {
            network: network.clone(),
            destination: Destination::Room(asked.room.clone()),
            addressee: player.clone(),
            thread: asked.thread.clone(),
            language: self.room_language(&place),
        };
        let told = match link {
            Some(link) => {
                said(reply_to.language, "router-private-opened-link", Args::new().text("link", link))
            }
            None => said(reply_to.language, "router-private-opened", Args::new()),
        };
        vec![delivery::reply(&reply_to, told)]
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
    #[test]
    fn the_room_where_a_player_asked_is_told_of_a_private_chat_opened_in_its_language() {
        use crate::config::language::LanguageSettings;
        let t = Timestamp::CONSOLE_EPOCH;
        let mut languages = LanguageSettings::default();
        languages
            .rooms
            .insert((NetworkId::new("matrix"), RoomId::new("!zh:hs")), spellbridge_core::Language::ZhCn);
        let mut router =
            Router::new(Registry::standard(), RouterConfig { languages, ..RouterConfig::default() });
        let (matrix, carol) = (NetworkId::new("matrix"), PlayerId::new("@carol:hs"));
        assert!(router.opened_private(&matrix, &carol, None, t).is_empty(), "she asked nothing anywhere");
        let mut link = asked("matrix", "!room:hs", "@carol:hs");
        link.display_name = "Carol".into();
        let out = router.handle(&link, t);
        assert_eq!(out[0].to, Destination::Private(carol.clone()), "the code goes privately");
        let told = router.opened_private(&matrix, &carol, None, Timestamp(t.0 + 5));
        assert_eq!(told.len(), 1);
        assert_eq!(told[0].to, Destination::Room(RoomId::new("!room:hs")));
        assert_eq!(
            told[0].message.text.plain(),
            "@carol:hs: I've opened a private chat with you and sent you a message there: accept its invitation to read it."
        );
        // Asked in a Chinese room: told in Chinese.
        router.handle(&asked("matrix", "!zh:hs", "@carol:hs"), Timestamp(t.0 + 10));
        let told = router.opened_private(&matrix, &carol, None, Timestamp(t.0 + 11));
        assert!(told[0].message.text.plain().contains("我已和你开了一个私聊"), "{:?}", told[0].message.text);
        let later = Timestamp(t.0 + 11 + ASKED_WITHIN);
        assert!(router.opened_private(&matrix, &carol, None, later).is_empty(), "too long after she asked");
    }
}
