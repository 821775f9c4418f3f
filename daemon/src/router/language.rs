//! The language each room and each player's private messages are told in (issues 19
//! and 31): the config's choice ([`LanguageSettings`](crate::config::language::LanguageSettings): a network's `language`, a room's),
//! unless `!lang` chose another. `!lang zh` in a room is for its operators and the game
//! masters of its table, and changes every room of its bridge, save the rooms whose
//! language the config pins (one table is told in one language). Said privately it
//! changes the sender's private messages, which belong to their player (linked
//! identities share it); a player who never chose is told privately in the language of
//! the room where they play. Every choice is journaled (`room_language`, one per room,
//! and `player_language`) and replayed at start; the answer goes out only once it is
//! committed, as every answer does.

use spellbridge_core::locale::Args;
use spellbridge_core::{Language, Presentation};

use super::said::said;
use super::*;

impl Router {
    /// The language `room` is told in.
    pub fn room_language(&self, room: &Place) -> Language {
        self.languages.room(room).unwrap_or_else(|| self.options.languages.room(&room.network, &room.room))
    }

    /// The language an answer to `inbound` is told in where it was said: its room's, or
    /// privately its sender's.
    pub fn language_of(&self, inbound: &Inbound) -> Language {
        if inbound.private {
            let player = self.identities.directory.player(&inbound.network, &inbound.sender);
            self.player_language(&player, &inbound.network)
        } else {
            self.room_language(&Place { network: inbound.network.clone(), room: inbound.room.clone() })
        }
    }

    /// The language `player`'s private messages are told in, on their home `network`:
    /// their own choice, else the language of the room (on `network`) of the table they
    /// play at, else their network's.
    pub(super) fn player_language(&self, player: &PlayerId, network: &NetworkId) -> Language {
        if let Some(language) = self.languages.player(player) {
            return language;
        }
        match self.playing_in(player, network) {
            Some(room) => self.room_language(&room),
            None => self.options.languages.network(network),
        }
    }

    /// The room on `network` of the latest unfinished table `player` is seated at (its
    /// bridge's room on that network, else the table's own room).
    fn playing_in(&self, player: &PlayerId, network: &NetworkId) -> Option<Place> {
        let id = self.tables.seated(player).last()?;
        let place = &self.tables.get(&id)?.place;
        let rooms = self.relay.rooms(place);
        rooms.iter().find(|room| room.network == *network).cloned().or_else(|| Some(place.clone()))
    }

    /// True when `player` is a game master of the unfinished table at `hub`.
    fn masters_table_at(&self, player: &PlayerId, hub: &Place) -> bool {
        self.tables
            .active_at(hub)
            .and_then(|id| self.tables.get(&id))
            .is_some_and(|seating| seating.table.game_masters().contains(player))
    }

    /// The rooms a `!lang` said in `room` changes: `room`, and the other rooms of its
    /// bridge whose language the config does not pin.
    fn rooms_told_with(&self, room: &Place) -> Vec<Place> {
        let pinned = |other: &Place| {
            self.options.languages.rooms.contains_key(&(other.network.clone(), other.room.clone()))
        };
        let mut rooms: Vec<Place> =
            self.relay.rooms(room).into_iter().filter(|other| other != room && !pinned(other)).collect();
        rooms.insert(0, room.clone());
        rooms
    }

    /// How `room` is shown games' events: its network's form, its own language.
    pub(super) fn room_presentation(&self, room: &Place) -> Presentation {
        self.presentation(&room.network).in_language(self.room_language(room))
    }

    /// How `player`'s private messages on their home `network` show games' events.
    pub(super) fn player_presentation(&self, player: &PlayerId, network: &NetworkId) -> Presentation {
        self.presentation(network).in_language(self.player_language(player, network))
    }

    /// Re-applies a journaled choice of a room's language.
    pub(super) fn replay_room_language(&mut self, room: Place, language: Language) {
        self.languages.choose_room(room, language);
    }

    /// Re-applies a journaled choice of a player's language.
    pub(super) fn replay_player_language(&mut self, player: PlayerId, language: Language) {
        self.languages.choose_player(player, language);
    }

    /// `!lang [en|zh]`: without a language, which one is spoken here and how to change
    /// it; with one, in a room (its operators and its table's game masters) the language
    /// of the room and of the unpinned rooms of its bridge, privately the sender's
    /// private messages'.
    pub(super) fn choose_language(
        &mut self,
        speaker: &Speaker<'_>,
        word: Option<&str>,
        reply_to: &ReplyTo,
    ) -> Vec<Outbound> {
        let inbound = speaker.inbound;
        let room = Place { network: inbound.network.clone(), room: inbound.room.clone() };
        let private = inbound.private;
        let current = if private {
            self.player_language(&speaker.player, &inbound.network)
        } else {
            self.room_language(&room)
        };
        let say = |language: Language, id: &str, args: Args| vec![reply(reply_to, said(language, id, args))];
        let named =
            |language: Language| said(language, "lobby-language", Args::new().word("code", language.code()));
        let Some(word) = word else {
            let id = if private { "lobby-lang-private" } else { "lobby-lang-room" };
            return say(current, id, Args::new().rich("language", named(current)));
        };
        let Ok(language) = word.parse::<Language>() else {
            return say(current, "lobby-lang-unknown", Args::new().text("word", word));
        };
        if !private && speaker.role == Role::Player && !self.masters_table_at(&speaker.player, &speaker.place)
        {
            return say(current, "lobby-lang-not-allowed", Args::new());
        }
        if private {
            if language == current && self.languages.player(&speaker.player).is_some() {
                return say(
                    current,
                    "lobby-lang-private-already",
                    Args::new().rich("language", named(current)),
                );
            }
            self.languages.choose_player(speaker.player.clone(), language);
            self.log(Entry::PlayerLanguage { player: speaker.player.clone(), language });
            // Said in the language just chosen.
            return say(language, "lobby-lang-private-chosen", Args::new().rich("language", named(language)));
        }
        let rooms = self.rooms_told_with(&room);
        let changed: Vec<Place> =
            rooms.into_iter().filter(|other| self.room_language(other) != language).collect();
        if changed.is_empty() {
            return say(current, "lobby-lang-room-already", Args::new().rich("language", named(current)));
        }
        let bridged = changed.iter().any(|other| *other != room);
        for other in changed {
            self.languages.choose_room(other.clone(), language);
            self.log(Entry::RoomLanguage { network: other.network, room: other.room, language });
        }
        let id = if bridged { "lobby-lang-bridge-chosen" } else { "lobby-lang-room-chosen" };
        say(language, id, Args::new().rich("language", named(language)))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::bridged;
    use super::*;
    use crate::config::language::LanguageSettings;

    const T: Timestamp = Timestamp::CONSOLE_EPOCH;

    fn said(network: &str, room: &str, who: &str, text: &str) -> Inbound {
        Inbound::new(NetworkId::new(network), RoomId::new(room), PlayerId::new(who), text)
    }

    fn private(network: &str, who: &str, text: &str) -> Inbound {
        Inbound { private: true, ..said(network, who, who, text) }
    }

    fn plain(out: &[Outbound]) -> Vec<String> {
        out.iter().map(|o| o.message.text.plain()).collect()
    }

    #[test]
    fn only_operators_and_game_masters_choose_a_rooms_language() {
        let mut router = bridged(Permissions::default());
        let asked = plain(&router.handle(&said("matrix", "!m", "@mage:hs", "!lang"), T));
        assert!(asked[0].contains("This room is told in English (en)"), "{asked:?}");
        let zh = plain(&router.handle(&said("matrix", "!m", "@mage:hs", "!帮助"), T));
        assert!(zh[0].contains("命令：!帮助 !游戏 !开局 !决斗"), "{zh:?}");
        let refused = plain(&router.handle(&said("matrix", "!m", "@mage:hs", "!lang zh"), T));
        assert!(refused[0].contains("Only this room's operators and the game masters"), "{refused:?}");
        assert!(router.take_journal().iter().all(|r| !matches!(r.entry, Entry::RoomLanguage { .. })));
        let operator = Inbound { operator: true, ..said("matrix", "!m", "@mage:hs", "!语言 中文") };
        let chosen = plain(&router.handle(&operator, T));
        assert!(chosen[0].contains("现在使用简体中文"), "{chosen:?}");
        let journal = router.take_journal();
        assert!(
            journal.iter().any(|r| r.entry
                == Entry::RoomLanguage {
                    network: NetworkId::new("matrix"),
                    room: RoomId::new("!m"),
                    language: Language::ZhCn
                }),
            "{journal:?}"
        );
        // Issue 31: the other room of the bridge is told in it too (one table, one language).
        let matrix = Place { network: NetworkId::new("matrix"), room: RoomId::new("!m") };
        let irc = Place { network: NetworkId::new("irc"), room: RoomId::new("#magic") };
        assert_eq!(
            (router.room_language(&matrix), router.room_language(&irc)),
            (Language::ZhCn, Language::ZhCn)
        );
        let unknown =
            plain(&router.handle(&Inbound { operator: true, ..said("irc", "#magic", "op", "!lang fr") }, T));
        assert!(unknown[0].contains("我不会说 `fr`"), "{unknown:?}");
    }

    /// Issue 31: `!lang` in a bridged room tells the whole bridge in it, each room
    /// journaled; a room the config pins keeps its language.
    #[test]
    fn a_rooms_choice_is_its_bridges_save_the_rooms_the_config_pins() {
        let matrix = Place { network: NetworkId::new("matrix"), room: RoomId::new("!m") };
        let irc = Place { network: NetworkId::new("irc"), room: RoomId::new("#magic") };
        let mut router = bridged(Permissions::default());
        let chosen =
            plain(&router.handle(&Inbound { operator: true, ..said("irc", "#magic", "op", "!lang zh") }, T));
        assert!(chosen[0].contains("本房间及与之桥接的房间现在使用简体中文"), "{chosen:?}");
        assert_eq!(
            (router.room_language(&matrix), router.room_language(&irc)),
            (Language::ZhCn, Language::ZhCn)
        );
        let journal = router.take_journal();
        let rooms: Vec<String> = journal
            .iter()
            .filter_map(|r| match &r.entry {
                Entry::RoomLanguage { network, room, .. } => Some(format!("{network} {room}")),
                _ => None,
            })
            .collect();
        assert_eq!(rooms, ["irc #magic", "matrix !m"]);
        // A restart tells both rooms in it again.
        let mut replayed = bridged(Permissions::default());
        for record in &journal {
            replayed.replay(&record.entry).expect("replays");
        }
        assert_eq!(
            (replayed.room_language(&matrix), replayed.room_language(&irc)),
            (Language::ZhCn, Language::ZhCn)
        );
        // Pinned: the IRC channel is English by the config.
        let mut pinned = bridged(Permissions::default());
        let mut languages = LanguageSettings::default();
        languages.rooms.insert((NetworkId::new("irc"), RoomId::new("#magic")), Language::En);
        pinned.reconfigure(RouterConfig { languages, ..pinned.config().clone() });
        let chosen = plain(
            &pinned.handle(&Inbound { operator: true, ..said("matrix", "!m", "@op:hs", "!lang zh") }, T),
        );
        assert!(chosen[0].contains("本房间现在使用简体中文"), "{chosen:?}");
        assert_eq!(
            (pinned.room_language(&matrix), pinned.room_language(&irc)),
            (Language::ZhCn, Language::En)
        );
    }

    /// Issue 31: the game master of the room's table may choose its language; a stranger
    /// in the room (or a player of another room's table) may not, and changes nothing.
    #[test]
    fn the_game_master_of_the_rooms_table_chooses_its_language_and_a_stranger_cannot() {
        let matrix = Place { network: NetworkId::new("matrix"), room: RoomId::new("!m") };
        let mut router = bridged(Permissions::default());
        let opened = plain(&router.handle(&said("matrix", "!m", "@gm:hs", "!new thaum"), T));
        assert!(!opened.is_empty(), "{opened:?}");
        router.take_journal();
        for stranger in ["@mallory:hs", "@gm:evil"] {
            let refused = plain(&router.handle(&said("matrix", "!m", stranger, "!lang zh"), T));
            assert!(refused[0].contains("Only this room's operators and the game masters"), "{refused:?}");
        }
        // The game master of a table elsewhere is a stranger here.
        let elsewhere = plain(&router.handle(&said("matrix", "!other", "@gm2:hs", "!new thaum"), T));
        assert!(!elsewhere.is_empty());
        let refused = plain(&router.handle(&said("matrix", "!m", "@gm2:hs", "!lang zh"), T));
        assert!(refused[0].contains("Only this room's operators"), "{refused:?}");
        assert!(router.take_journal().iter().all(|r| !matches!(r.entry, Entry::RoomLanguage { .. })));
        assert_eq!(router.room_language(&matrix), Language::En);
        let chosen = plain(&router.handle(&said("matrix", "!m", "@gm:hs", "!lang zh"), T));
        assert!(chosen[0].contains("现在使用简体中文"), "{chosen:?}");
        assert_eq!(router.room_language(&matrix), Language::ZhCn);
    }

    /// Issue 31: a player who never chose a language privately is answered privately in
    /// the language of the room where they play; their own choice wins.
    #[test]
    fn a_private_answer_is_in_the_language_of_the_room_where_the_player_plays() {
        let mut router = bridged(Permissions::default());
        router.handle(&Inbound { operator: true, ..said("matrix", "!m", "@op:hs", "!lang zh") }, T);
        router.handle(&said("matrix", "!m", "@bob:hs", "你好"), T);
        router.handle(&said("irc", "#magic", "alice", "!决斗 bob"), T);
        let accepted = plain(&router.handle(&said("matrix", "!m", "@bob:hs", "!接受"), T));
        assert!(accepted.iter().any(|t| t.contains("第 1 回合")), "{accepted:?}");
        let cast = plain(&router.handle(&private("irc", "alice", "!施法 迸发 火 协调"), T));
        assert!(
            cast[0].chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)),
            "answered in Chinese: {cast:?}"
        );
        let wrong = plain(&router.handle(&private("irc", "alice", "!施法 迸发"), T));
        assert!(
            wrong[0].chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)),
            "refused in Chinese: {wrong:?}"
        );
        // Her own choice wins.
        router.handle(&private("irc", "alice", "!lang en"), T);
        let status = plain(&router.handle(&private("irc", "alice", "!status"), T));
        assert!(status[0].is_ascii() || !status[0].contains("第"), "{status:?}");
        // Someone who plays nowhere keeps their network's language.
        assert_eq!(router.player_language(&PlayerId::new("irc:carol"), &NetworkId::new("irc")), Language::En);
    }

    #[test]
    fn a_private_choice_is_the_players_and_survives_a_replay() {
        let mut router = bridged(Permissions::default());
        router.handle(&private("irc", "alice", "！ｌａｎｇ　ｚｈ"), T);
        let alice = PlayerId::new("irc:alice");
        assert_eq!(router.player_language(&alice, &NetworkId::new("irc")), Language::ZhCn);
        // A room's language is not the player's.
        let irc = Place { network: NetworkId::new("irc"), room: RoomId::new("#magic") };
        assert_eq!(router.room_language(&irc), Language::En);
        let journal = router.take_journal();
        let mut replayed = bridged(Permissions::default());
        for record in &journal {
            replayed.replay(&record.entry).expect("replays");
        }
        assert_eq!(replayed.player_language(&alice, &NetworkId::new("irc")), Language::ZhCn);
        // Saying it again changes nothing and journals nothing.
        let again = plain(&replayed.handle(&private("irc", "alice", "!lang zh-CN"), T));
        assert!(again[0].contains("已经在使用简体中文"), "{again:?}");
        assert!(replayed.take_journal().iter().all(|r| !matches!(r.entry, Entry::PlayerLanguage { .. })));
    }

    #[test]
    fn the_config_chooses_until_lang_does() {
        let mut router = bridged(Permissions::default());
        let mut languages = LanguageSettings::default();
        languages.rooms.insert((NetworkId::new("matrix"), RoomId::new("!m")), Language::ZhCn);
        languages.networks.insert(NetworkId::new("irc"), Language::ZhCn);
        router.reconfigure(RouterConfig { languages, ..router.config().clone() });
        let matrix = Place { network: NetworkId::new("matrix"), room: RoomId::new("!m") };
        assert_eq!(router.room_language(&matrix), Language::ZhCn);
        assert_eq!(router.player_language(&PlayerId::new("irc:bob"), &NetworkId::new("irc")), Language::ZhCn);
        router.handle(&Inbound { operator: true, ..said("matrix", "!m", "@op:hs", "!lang en") }, T);
        assert_eq!(router.room_language(&matrix), Language::En);
    }
}
