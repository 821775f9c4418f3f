//! What the transports learn by sending, handed back to the router (issue 17, items 4,
//! 7 and 9): the network's id of a relayed line (so a reply or a reaction to it names its
//! speaker, [`crate::relay::replies`]), and a private chat opened for a player who had
//! none with the bot, which the room where they last asked is told of, in its language
//! (`router-private-opened`, with a link to the chat where the network gives one): the
//! player knows where to look.
//!
//! Where each player last asked something in a room is remembered by
//! [`super::languages`].

use spellbridge_core::Relayed;
use spellbridge_core::locale::Args;

use super::said::said;
use super::*;

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
    /// within [`ASKED_WITHIN`](super::languages::ASKED_WITHIN) of `now`. Nothing is journaled.
    pub fn opened_private(
        &self,
        network: &NetworkId,
        player: &PlayerId,
        link: Option<&str>,
        now: Timestamp,
    ) -> Vec<Outbound> {
        let Some(asked) = self.languages.asked(network, player, now) else { return Vec::new() };
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
    use crate::router::languages::ASKED_WITHIN;

    fn asked(network: &str, room: &str, sender: &str) -> Inbound {
        Inbound::new(NetworkId::new(network), RoomId::new(room), PlayerId::new(sender), "!link")
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
