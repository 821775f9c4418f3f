//! The journal: what the router did, as data the store can log and replay.
//!
//! Every change to the router's state (a table opened, an action accepted, a timer fired,
//! a challenge made or closed, an identity linked, a link code given or closed, a dice key
//! committed to or revealed, a room's or a player's language chosen) is one [`Entry`]. Replaying a table's entries in order
//! with the table's dice keys rebuilds it exactly (RULES T-10), which is how a table whose
//! snapshot cannot be loaded is recovered and how `spellbridge verify` audits a database.
//!
//! Entries that change a table keep what the table said happened: its events, typed and
//! as they are ([`EventRecord`]), each with its audience (a Duel wizard's queued spell is
//! that wizard's event, as the command that queued it is theirs). Journals from before
//! events have none; `verify` compares the events a replay makes with the ones kept.
//!
//! An accepted command is kept typed ([`Kept`]: its declaration's name, words and values,
//! players resolved), so replay applies it without reading text; a journal written
//! before that keeps only the text, read through the game's grammar once on replay
//! ([`read_command`]).
//!
//! The journal holds only what players may see: a dice key's commitment when the key is
//! taken, and the key itself once revealed. An unrevealed key is kept by the store apart
//! from the journal (its `dice_keys` table), so `export` cannot show it.

use serde::{Deserialize, Serialize};
use spellbridge_core::dice::Commitment;
use spellbridge_core::grammar::{self, Command, Kept, Parsed};
use spellbridge_core::{EventRecord, Language, NetworkId, PlayerId, Role, RoomId, Timestamp};

/// A table's number, unique within one router (and one database).
pub type TableId = u64;

/// One seat as it was taken when a table opened.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatRecord {
    /// The player.
    pub player: PlayerId,
    /// Their choice (a Duel wizard), if any.
    pub choice: Option<String>,
    /// True when the network has accounts and this player was not logged in to one when
    /// they took the seat ([`Inbound::guest`](spellbridge_core::Inbound::guest)): a bare
    /// nick anyone can take. A Duel against a guest is not rated (`crate::ratings::unrated`).
    /// Older journals: false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub guest: bool,
}

/// One change to the router's state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Entry {
    /// A table opened.
    Opened {
        /// Its number.
        table: TableId,
        /// The game.
        game: String,
        /// The network of its room.
        network: NetworkId,
        /// Its room.
        room: RoomId,
        /// Tables from before dice keys: the table's seed, every action's dice derive from
        /// it (`Dice::for_action`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seed: Option<u64>,
        /// The commitment to the table's first dice key, for the opening table's
        /// `dice_epoch` (absent in journals from before keys).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        commitment: Option<Commitment>,
        /// The players, the opener first.
        seats: Vec<SeatRecord>,
        /// When it opened.
        now: Timestamp,
        /// The table as it opened, rule options included: replay starts from this, so a
        /// later change of the daemon's config cannot change a replayed game.
        opening: serde_json::Value,
        /// What the table said as it opened (journals from before events: none).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        events: Vec<EventRecord>,
    },
    /// A table accepted a player's command.
    Acted {
        /// The table.
        table: TableId,
        /// The action's number at this table (0 is the first action after opening).
        sequence: u64,
        /// Who acted.
        actor: PlayerId,
        /// The command without the prefix, players resolved ([`Parsed::text`]): for people
        /// (export, history); replay reads [`Entry::Acted::parsed`] when there is one.
        command: String,
        /// The command as the grammar read it, typed (players resolved): what replay
        /// applies, reading no text. Journals from before it: none, and replay reads
        /// `command` through the game's grammar once ([`read_command`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parsed: Option<Kept>,
        /// The message as typed.
        typed: String,
        /// True when sent privately.
        private: bool,
        /// What the actor could do beyond playing (older journals: a player).
        #[serde(default)]
        #[serde(rename = "standing")]
        role: Role,
        /// When.
        now: Timestamp,
        /// The seed of the dice the action was given.
        dice_seed: u64,
        /// How many draws it made from them.
        draws: u32,
        /// What the table said happened (journals from before events: none).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        events: Vec<EventRecord>,
    },
    /// A table's timer fired.
    Fired {
        /// The table.
        table: TableId,
        /// The action's number at this table.
        sequence: u64,
        /// The time the timer was due.
        at: Timestamp,
        /// The seed of the dice the firing was given.
        dice_seed: u64,
        /// How many draws it made from them.
        draws: u32,
        /// What the table said happened (journals from before events: none).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        events: Vec<EventRecord>,
    },
    /// A table took a new dice key, for its new dice epoch (a Thaum season), and
    /// announced its commitment (RULES T-10).
    Keyed {
        /// The table.
        table: TableId,
        /// The epoch the key is for.
        epoch: u64,
        /// The SHA-256 of the key.
        commitment: Commitment,
    },
    /// A table revealed its dice key: the table ended, or its epoch did.
    Revealed {
        /// The table.
        table: TableId,
        /// The epoch the key was for.
        epoch: u64,
        /// The key, as 64 hex digits.
        key: String,
    },
    /// A challenge was made (`!duel <player>`).
    Challenged {
        /// The network of the room.
        network: NetworkId,
        /// The room.
        room: RoomId,
        /// Who challenged.
        challenger: PlayerId,
        /// Who was challenged.
        opponent: PlayerId,
        /// The challenger's wizard.
        wizard: Option<String>,
        /// When it expires unanswered (older journals: none; such a challenge expires at
        /// the first tick after the upgrade).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expires: Option<Timestamp>,
        /// True when the challenger was a guest (see [`SeatRecord::guest`]).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        guest: bool,
        /// The game challenged to, by name (older journals: none, read as the registry's
        /// first game taken by challenge, the only one there was).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        game: Option<String>,
    },
    /// A challenge was accepted, declined, withdrawn, cleared or expired.
    ChallengeClosed {
        /// The network of the room.
        network: NetworkId,
        /// The room.
        room: RoomId,
    },
    /// An identity was joined to a player (`!link <code>`).
    Linked {
        /// The identity's network.
        network: NetworkId,
        /// The identity.
        identity: PlayerId,
        /// The player it now acts as.
        player: PlayerId,
    },
    /// Every identity joined to a player was separated from it (`!unlink`).
    Unlinked {
        /// The player.
        player: PlayerId,
    },
    /// A player's private messages go to a new network and identity (they spoke there).
    Home {
        /// The player.
        player: PlayerId,
        /// The network.
        network: NetworkId,
        /// Their identity there.
        identity: PlayerId,
        /// The name they are shown under there, so a restart still shows and finds them
        /// by it (older journals: none).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    /// `!link` gave a code; kept so that a restart does not lose it.
    LinkCode {
        /// The eight digits.
        code: String,
        /// The player it joins an identity to.
        player: PlayerId,
        /// The network of the identity that asked for it.
        network: NetworkId,
        /// The identity that asked for it.
        identity: PlayerId,
        /// When it stops working.
        expires: Timestamp,
    },
    /// A link code was used, or voided (said in a room, or tried wrongly too often).
    LinkCodeClosed {
        /// The eight digits.
        code: String,
    },
    /// A bot admin ignores a player (`!ignore`).
    Ignored {
        /// The player.
        player: PlayerId,
    },
    /// A bot admin takes a player back (`!unignore`).
    Unignored {
        /// The player.
        player: PlayerId,
    },
    /// A room's operator or game master chose the language the room is told in
    /// (`!lang zh`); each room of a bridge has its own.
    RoomLanguage {
        /// The room's network.
        network: NetworkId,
        /// The room itself (not its bridge's hub).
        room: RoomId,
        /// The language (`en`, `zh-CN`).
        language: Language,
    },
    /// A player chose the language of their private messages (`!lang zh`, privately).
    PlayerLanguage {
        /// The player (linked identities share it).
        player: PlayerId,
        /// The language (`en`, `zh-CN`).
        language: Language,
    },
}

impl Entry {
    /// The table this entry belongs to, if it belongs to one.
    pub fn table(&self) -> Option<TableId> {
        match self {
            Entry::Opened { table, .. }
            | Entry::Acted { table, .. }
            | Entry::Fired { table, .. }
            | Entry::Keyed { table, .. }
            | Entry::Revealed { table, .. } => Some(*table),
            Entry::Challenged { .. }
            | Entry::ChallengeClosed { .. }
            | Entry::Linked { .. }
            | Entry::Unlinked { .. }
            | Entry::Home { .. }
            | Entry::LinkCode { .. }
            | Entry::LinkCodeClosed { .. }
            | Entry::Ignored { .. }
            | Entry::Unignored { .. }
            | Entry::RoomLanguage { .. }
            | Entry::PlayerLanguage { .. } => None,
        }
    }
}

/// The command of an [`Entry::Acted`], for replay against `commands` (the table's game's):
/// the typed command when the journal kept it, else (a journal from before) its `text`
/// read through the grammar. `Err` says why it cannot be had.
pub fn read_command(
    commands: &'static [Command],
    parsed: Option<&Kept>,
    text: &str,
) -> Result<Parsed, String> {
    match parsed {
        Some(kept) => Parsed::restore(commands, kept)
            .ok_or_else(|| format!("the game has no command `{}` any more", kept.name)),
        None => grammar::read(commands, text).map_err(|error| error.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The actor's [`Role`] is journaled under its JSON name from before the rename
    /// (`standing`), so journals written by earlier releases and by this one read alike.
    #[test]
    fn an_action_keeps_the_actors_role_under_the_json_name_standing() {
        let entry = Entry::Acted {
            table: 1,
            sequence: 0,
            actor: PlayerId::new("alice"),
            command: "stop".to_owned(),
            parsed: None,
            typed: "!stop".to_owned(),
            private: false,
            role: Role::Operator,
            now: Timestamp(0),
            dice_seed: 7,
            draws: 0,
            events: Vec::new(),
        };
        let json = serde_json::to_value(&entry).expect("json");
        assert_eq!(json["standing"], "operator", "{json}");
        assert!(json.get("role").is_none(), "{json}");
        let older = r#"{"kind":"acted","table":1,"sequence":0,"actor":"alice","command":"stop",
            "typed":"!stop","private":false,"standing":"game_master","now":0,"dice_seed":7,"draws":0}"#;
        let read: Entry = serde_json::from_str(older).expect("an older entry reads");
        assert!(matches!(read, Entry::Acted { role: Role::GameMaster, .. }), "{read:?}");
        assert_eq!(serde_json::from_value::<Entry>(json).expect("reads back"), entry);
    }

    /// `!lang`'s choices are journaled with the language as the config writes it.
    #[test]
    fn a_language_choice_is_journaled_by_its_tag() {
        let room = Entry::RoomLanguage {
            network: NetworkId::new("matrix"),
            room: RoomId::new("!m:hs"),
            language: Language::ZhCn,
        };
        let json = serde_json::to_string(&room).expect("json");
        assert_eq!(json, r#"{"kind":"room_language","network":"matrix","room":"!m:hs","language":"zh-CN"}"#);
        assert_eq!(serde_json::from_str::<Entry>(&json).expect("reads back"), room);
        let player = Entry::PlayerLanguage { player: PlayerId::new("libera:alice"), language: Language::En };
        let json = serde_json::to_string(&player).expect("json");
        assert_eq!(json, r#"{"kind":"player_language","player":"libera:alice","language":"en"}"#);
        assert_eq!(player.table(), None);
    }
}
