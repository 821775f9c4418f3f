//! Why the Thaum engine refused a command. Each variant keeps the input that was wrong,
//! and its message says what was wrong, names the rule (RULES.md id) where one applies,
//! and says what to type instead. Text in backticks is rendered as code, and `!` there
//! stands for the table's command prefix. A refused command changes nothing.

use crate::ids::PlayerId;

use super::command::Verb;
use super::state::Thaum;

/// The engine's result.
pub type Result<T, E = ThaumError> = std::result::Result<T, E>;

/// Why a command was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ThaumError {
    /// The table was stopped; only the questions (`!status`, `!gm list`) still answer.
    #[error("this Thaum table was stopped: open a new one with `!new thaum`.")]
    TableStopped,
    /// The actor has not joined.
    #[error("you are not playing Thaum here yet: type `!join` first.")]
    NotAPlayer {
        /// The actor.
        player: PlayerId,
    },
    /// `!join` by a player.
    #[error("you already play Thaum here (T-4): type `!status` to see your sheet.")]
    AlreadyJoined {
        /// The actor.
        player: PlayerId,
    },
    /// `!add` of a player who plays already.
    #[error("this table already has {player} as a player (T-4): type `!status {player}` to see their sheet.")]
    AlreadyPlaying {
        /// The player as registered.
        player: PlayerId,
    },
    /// `!add` of a name that cannot be a player.
    #[error("`{typed}` cannot be a player's name: type `!add <player>`, e.g. `!add bob`.")]
    BadName {
        /// The name as typed.
        typed: String,
    },
    /// A named player is not at the table.
    #[error("`{typed}` is not a player at this table{}; the players are {}: type `!{} {}` with one of those names.",
        .suggestion.as_ref().map(|p| format!(" (did you mean `{p}`?)")).unwrap_or_default(),
        list(.players), .verb.name(), .verb.usage())]
    UnknownPlayer {
        /// The name as typed.
        typed: String,
        /// The nearest player's name, if the typed one looks like a typo of it.
        suggestion: Option<PlayerId>,
        /// Every player.
        players: Vec<PlayerId>,
        /// The command it was typed in.
        verb: Verb,
    },
    /// A game-master command from someone else.
    #[error("only a game master can use `!{}`; the game masters here are {}.", .verb.name(), list(.game_masters))]
    NotGameMaster {
        /// The actor.
        player: PlayerId,
        /// The command.
        verb: Verb,
        /// Who may use it.
        game_masters: Vec<PlayerId>,
    },
    /// `!gm add` of a name that is not a player at the table.
    #[error("`{typed}` is not at this table{}, and only a player at the table can be a game master: \
        seat them first with `!add {typed}`, then type `!gm add {typed}`.",
        .suggestion.as_ref().map(|p| format!(" (did you mean `{p}`?)")).unwrap_or_default())]
    NotSeated {
        /// The name as typed.
        typed: String,
        /// The nearest player's name, if the typed one looks like a typo of it.
        suggestion: Option<PlayerId>,
    },
    /// `!gm add` of a game master.
    #[error("the game masters here already include {player} (they are {}).", list(.game_masters))]
    AlreadyGameMaster {
        /// The player as registered.
        player: PlayerId,
        /// Every game master.
        game_masters: Vec<PlayerId>,
    },
    /// `!gm remove` of someone who is not a game master.
    #[error("`{typed}` is not a game master here; the game masters are {}: type `!gm remove <player>` \
        with one of those names.", list(.game_masters))]
    NotAmongGameMasters {
        /// The name as typed.
        typed: String,
        /// Every game master.
        game_masters: Vec<PlayerId>,
    },
    /// `!gm remove` of the only game master.
    #[error(
        "a Thaum table always keeps a game master, and {player} is the only one here: make another \
        player a game master first (`!gm add <player>`), then remove {player}."
    )]
    LastGameMaster {
        /// The game master.
        player: PlayerId,
    },
    /// Spending more Mana than held (RULES T-9). The example is the command as typed,
    /// spending what is held.
    #[error("you hold {held} Mana, so you cannot spend {wanted} (T-9): spend at most {held}, e.g. `!{} {held} {args}`.",
        .verb.name())]
    NotEnoughMana {
        /// The command.
        verb: Verb,
        /// Mana held.
        held: u32,
        /// Mana asked to spend.
        wanted: u32,
        /// The arguments after the Mana amount (`fire air`, `carol`).
        args: String,
    },
    /// Blood Magic a second time in a phase.
    #[error(
        "Blood Magic is once per phase (T-1) and you have cast it in this phase: \
             cast it again when the next phase begins."
    )]
    BloodMagicUsed,
    /// Tornado a second time in a phase.
    #[error(
        "Tornado is once per phase (T-1) and you have cast it in this phase: \
             cast it again when the next phase begins."
    )]
    TornadoUsed,
    /// Alchemy on one Thaum twice.
    #[error("Alchemy needs two different Thaums, not {thaum} twice: type e.g. `!alchemy {mana} {} {}`.",
        .thaum.key(), other(*.thaum).key())]
    SameThaum {
        /// The Thaum named twice.
        thaum: Thaum,
        /// The Mana typed.
        mana: u32,
    },
    /// Summoning or Tornado aimed at the caster.
    #[error("{} needs another player, not yourself: type `!{} <mana> <player>` with another player's name.",
        spell_name(*.verb), .verb.name())]
    SelfTarget {
        /// The command.
        verb: Verb,
    },
}

/// "alice, bob and carol".
pub(crate) fn list(players: &[PlayerId]) -> String {
    match players {
        [] => "nobody".to_owned(),
        [one] => one.to_string(),
        [init @ .., last] => {
            let init: Vec<&str> = init.iter().map(PlayerId::as_str).collect();
            format!("{} and {last}", init.join(", "))
        }
    }
}

fn other(thaum: Thaum) -> Thaum {
    if thaum == Thaum::Air { Thaum::Fire } else { Thaum::Air }
}

fn spell_name(verb: Verb) -> &'static str {
    match verb {
        Verb::Summon => "Summoning",
        Verb::Tornado => "Tornado",
        Verb::Bend => "Bending",
        _ => "This spell",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_read_as_english() {
        let names = |n: &[&str]| n.iter().map(|s| PlayerId::new(*s)).collect::<Vec<_>>();
        assert_eq!(list(&names(&[])), "nobody");
        assert_eq!(list(&names(&["alice"])), "alice");
        assert_eq!(list(&names(&["alice", "bob", "carol"])), "alice, bob and carol");
    }

    #[test]
    fn mana_errors_say_what_is_held_and_repeat_the_command_with_it() {
        let err = ThaumError::NotEnoughMana { verb: Verb::Tornado, held: 1, wanted: 2, args: "carol".into() };
        assert_eq!(
            err.to_string(),
            "you hold 1 Mana, so you cannot spend 2 (T-9): spend at most 1, e.g. `!tornado 1 carol`."
        );
    }
}
