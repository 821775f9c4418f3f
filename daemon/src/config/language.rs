//! Which language each room and each player's private messages are told in, as the
//! config chooses it (issue 19): a network's `language` (its rooms, and the private
//! messages of players whose home it is), a network's `languages` (single rooms:
//! `languages = { "#mofa" = "zh-CN" }`) and a bridge room's `language`
//! (`rooms = [{ network = "matrix", room = "!abc:hs", language = "zh-CN" }]`). English
//! where nothing is said. `!lang` in a room or privately overrides these (the router
//! journals it).
//!
//! The keys are taken out of each network's table before its kind reads it, so every
//! kind of network (`[[irc]]`, `[[matrix]]`, a kind kept elsewhere) takes them alike.

use std::collections::BTreeMap;

use spellbridge_core::{Language, NetworkId, RoomId};

/// The languages the config chooses.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LanguageSettings {
    /// Where neither the network nor the room says (English; the console's `--lang`).
    pub default: Language,
    /// Each network's `language`: its rooms, and its players' private messages.
    pub networks: BTreeMap<NetworkId, Language>,
    /// Single rooms: a network's `languages`, a bridge room's `language`.
    pub rooms: BTreeMap<(NetworkId, RoomId), Language>,
}

impl LanguageSettings {
    /// Everything in `language` (the console's `--lang`).
    pub fn all(language: Language) -> Self {
        LanguageSettings { default: language, ..LanguageSettings::default() }
    }

    /// The language of `network`'s rooms and its players' private messages, unless a room
    /// says otherwise.
    pub fn network(&self, network: &NetworkId) -> Language {
        self.networks.get(network).copied().unwrap_or(self.default)
    }

    /// The language `room` on `network` is told in, as configured.
    pub fn room(&self, network: &NetworkId, room: &RoomId) -> Language {
        self.rooms.get(&(network.clone(), room.clone())).copied().unwrap_or_else(|| self.network(network))
    }
}

impl LanguageSettings {
    /// `check-config`'s line: each network and room given a language
    /// (`libera zh-CN, matrix !abc:hs zh-CN`); `None` when the config chooses none.
    pub fn describe(&self) -> Option<String> {
        let networks = self.networks.iter().map(|(network, language)| format!("{network} {language}"));
        let rooms =
            self.rooms.iter().map(|((network, room), language)| format!("{network} {room} {language}"));
        let all: Vec<String> = networks.chain(rooms).collect();
        (!all.is_empty()).then(|| all.join(", "))
    }
}

/// A network table's language keys, taken out before its kind reads the rest.
#[derive(Debug, Default)]
pub(super) struct Taken {
    language: Option<toml::Value>,
    languages: Option<toml::Value>,
}

/// Takes `language` and `languages` out of a network's table.
pub(super) fn take(table: &mut toml::Table) -> Taken {
    Taken { language: table.remove("language"), languages: table.remove("languages") }
}

/// Reads one language value; `at` names where it was written (`[[irc]] libera: language`).
pub(super) fn read(value: &toml::Value, at: &str) -> Result<Language, String> {
    let wrong = |written: String| {
        format!(
            "{at} = {written} is not a language spellbridge speaks; write \"en\" (English, the default) \
             or \"zh-CN\" (Simplified Chinese)"
        )
    };
    match value {
        toml::Value::String(text) => text.parse().map_err(|_| wrong(format!("{text:?}"))),
        other => Err(wrong(other.to_string())),
    }
}

impl Taken {
    /// Adds what the network called `network` (a `[[section]]`) said to `settings`.
    pub(super) fn apply(
        self,
        section: &str,
        network: &str,
        settings: &mut LanguageSettings,
    ) -> Result<(), String> {
        let id = NetworkId::new(network);
        if let Some(value) = &self.language {
            let language = read(value, &format!("[[{section}]] `{network}`: language"))?;
            settings.networks.insert(id.clone(), language);
        }
        let Some(value) = self.languages else { return Ok(()) };
        let toml::Value::Table(rooms) = value else {
            return Err(format!(
                "[[{section}]] `{network}`: languages must be a table of rooms, e.g. \
                 languages = {{ \"#mofa\" = \"zh-CN\" }}"
            ));
        };
        for (room, value) in rooms {
            let language = read(&value, &format!("[[{section}]] `{network}`: languages.\"{room}\""))?;
            settings.rooms.insert((id.clone(), RoomId::new(room)), language);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_room_says_first_then_its_network_then_the_default() {
        let libera = NetworkId::new("libera");
        let mut settings = LanguageSettings::default();
        assert_eq!(settings.room(&libera, &RoomId::new("#magic")), Language::En);
        settings.networks.insert(libera.clone(), Language::ZhCn);
        settings.rooms.insert((libera.clone(), RoomId::new("#en")), Language::En);
        assert_eq!(settings.room(&libera, &RoomId::new("#magic")), Language::ZhCn);
        assert_eq!(settings.room(&libera, &RoomId::new("#en")), Language::En);
        assert_eq!(LanguageSettings::all(Language::ZhCn).network(&libera), Language::ZhCn);
    }

    #[test]
    fn a_bad_value_says_what_to_write() {
        let error =
            read(&toml::Value::String("fr".into()), "[[irc]] `libera`: language").expect_err("French");
        assert!(error.contains("\"fr\" is not a language") && error.contains("\"zh-CN\""), "{error}");
        let error = read(&toml::Value::Integer(1), "x").expect_err("a number");
        assert!(error.contains("x = 1 is not"), "{error}");
    }
}
