//! The language each room and each player's private messages are told in (issue 19):
//! the config's choice ([`LanguageSettings`]: a network's `language`, a room's), unless
//! `!lang` chose another. `!lang zh` in a room is for its operators and game masters and
//! changes that room only (each room of a bridge keeps its own); said privately it
//! changes the sender's private messages, which belong to their player (linked
//! identities share it). Every choice is journaled (`room_language`,
//! `player_language`) and replayed at start; the answer goes out only once it is
//! committed, as every answer does.

use std::collections::BTreeMap;

use spellbridge_core::locale::Args;
use spellbridge_core::{Language, Presentation};

use super::said::said;
use super::*;
use crate::config::LanguageSettings;

/// What `!lang` chose, over the config's choice.
#[derive(Clone, Debug, Default)]
pub(super) struct Chosen {
    /// Rooms (each room itself, never a bridge's hub for all its rooms).
    rooms: BTreeMap<Place, Language>,
    /// Players' private messages.
    players: BTreeMap<PlayerId, Language>,
}

impl Router {
    /// Takes the config's languages again (SIGHUP); what `!lang` chose stays.
    pub fn set_languages(&mut self, languages: LanguageSettings) {
        self.options.languages = languages;
    }

    /// The language `room` is told in.
    pub fn room_language(&self, room: &Place) -> Language {
        self.chosen
            .rooms
            .get(room)
            .copied()
            .unwrap_or_else(|| self.options.languages.room(&room.network, &room.room))
    }

    /// The language an answer to `inbound` is told in where it was said: its room's, or
    /// privately its sender's.
    pub fn language_of(&self, inbound: &Inbound) -> Language {
        if inbound.private {
            let player = self.directory.player(&inbound.network, &inbound.sender);
            self.player_language(&player, &inbound.network)
        } else {
            self.room_language(&Place { network: inbound.network.clone(), room: inbound.room.clone() })
        }
    }

    /// The language `player`'s private messages are told in, on their home `network`.
    pub(super) fn player_language(&self, player: &PlayerId, network: &NetworkId) -> Language {
        self.chosen.players.get(player).copied().unwrap_or_else(|| self.options.languages.network(network))
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
        self.chosen.rooms.insert(room, language);
    }

    /// Re-applies a journaled choice of a player's language.
    pub(super) fn replay_player_language(&mut self, player: PlayerId, language: Language) {
        self.chosen.players.insert(player, language);
    }

    /// `!lang [en|zh]`: without a language, which one is spoken here and how to change
    /// it; with one, in a room (its operators and game masters) the room's, privately the
    /// sender's private messages'.
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
        if !private && speaker.role == Role::Player {
            return say(current, "lobby-lang-not-allowed", Args::new());
        }
        if language == current {
            let id = if private { "lobby-lang-private-already" } else { "lobby-lang-room-already" };
            return say(current, id, Args::new().rich("language", named(current)));
        }
        if private {
            self.chosen.players.insert(speaker.player.clone(), language);
            self.log(Entry::PlayerLanguage { player: speaker.player.clone(), language });
        } else {
            self.chosen.rooms.insert(room.clone(), language);
            self.log(Entry::RoomLanguage { network: room.network, room: room.room, language });
        }
        // Said in the language just chosen.
        let id = if private { "lobby-lang-private-chosen" } else { "lobby-lang-room-chosen" };
        say(language, id, Args::new().rich("language", named(language)))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::bridged;
    use super::*;

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
        assert!(refused[0].contains("Only this room's operators and game masters"), "{refused:?}");
        assert!(router.take_journal().iter().all(|r| !matches!(r.entry, Entry::RoomLanguage { .. })));
        let operator = Inbound { operator: true, ..said("matrix", "!m", "@mage:hs", "!语言 中文") };
        let chosen = plain(&router.handle(&operator, T));
        assert!(chosen[0].contains("本房间现在使用简体中文"), "{chosen:?}");
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
        // The other room of the bridge keeps its own.
        let matrix = Place { network: NetworkId::new("matrix"), room: RoomId::new("!m") };
        let irc = Place { network: NetworkId::new("irc"), room: RoomId::new("#magic") };
        assert_eq!(
            (router.room_language(&matrix), router.room_language(&irc)),
            (Language::ZhCn, Language::En)
        );
        let unknown =
            plain(&router.handle(&Inbound { operator: true, ..said("irc", "#magic", "op", "!lang fr") }, T));
        assert!(unknown[0].contains("I do not speak `fr`"), "{unknown:?}");
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
        router.set_languages(languages);
        let matrix = Place { network: NetworkId::new("matrix"), room: RoomId::new("!m") };
        assert_eq!(router.room_language(&matrix), Language::ZhCn);
        assert_eq!(router.player_language(&PlayerId::new("irc:bob"), &NetworkId::new("irc")), Language::ZhCn);
        router.handle(&Inbound { operator: true, ..said("matrix", "!m", "@op:hs", "!lang en") }, T);
        assert_eq!(router.room_language(&matrix), Language::En);
    }
}
