//! Thaum commands as typed values, read from the game's grammar ([`super::COMMANDS`]).
//!
//! The daemon reads every command against the grammar (words are case-insensitive; `gather
//! power` and `blood magic` may be typed as two words; every alias is accepted; Thaums are
//! `fire water earth air`, also 火 水 土 风) and hands the table a [`Parsed`] command;
//! [`ThaumCommand::from_parsed`] turns it into this game's own type. Player names arrive
//! resolved by the daemon where it knows them; the engine judges them against the table's
//! players.

use crate::grammar::{self, Parsed, ReadError};
use crate::ids::PlayerId;
use crate::words::Adjustment;

use super::COMMANDS;
use super::state::Thaum;

pub use crate::grammar::EXAMPLE_PLAYER;

/// A command word, in the order of [`COMMANDS`] (which holds each one's help).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verb {
    /// `join`
    Join,
    /// `gather`
    Gather,
    /// `blood`
    Blood,
    /// `alchemy`
    Alchemy,
    /// `bend`
    Bend,
    /// `summon`
    Summon,
    /// `tornado`
    Tornado,
    /// `status`
    Status,
    /// `phase`
    Phase,
    /// `instability`
    Instability,
    /// `coins`
    Coins,
    /// `add`
    Add,
    /// `gm`
    Gm,
    /// `stop`
    Stop,
}

impl Verb {
    /// Every verb, in help order.
    pub const ALL: [Verb; 14] = [
        Verb::Join,
        Verb::Gather,
        Verb::Blood,
        Verb::Alchemy,
        Verb::Bend,
        Verb::Summon,
        Verb::Tornado,
        Verb::Status,
        Verb::Phase,
        Verb::Instability,
        Verb::Coins,
        Verb::Add,
        Verb::Gm,
        Verb::Stop,
    ];

    /// This command's declaration (its arguments and help).
    pub fn help(self) -> &'static grammar::Command {
        &COMMANDS[self as usize]
    }

    /// Its arguments as the usage line shows them (`<mana> <player>`).
    pub fn usage(self) -> String {
        self.help().usage()
    }

    /// The command word (`gather`).
    pub fn name(self) -> &'static str {
        self.help().name
    }

    /// The verb a (lower-case) word names, by name or alias.
    pub fn from_word(word: &str) -> Option<Verb> {
        Verb::ALL.into_iter().find(|v| v.help().is_called(word))
    }

    /// True for the commands only a game master may use (`!gm` only to change the game
    /// masters: see [`ThaumCommand::game_master_only`]); `!stop` also the room's operator.
    pub fn game_master_only(self) -> bool {
        matches!(self.help().who, grammar::Who::GameMaster | grammar::Who::GameMasterOrOperator)
    }

    /// A complete example, with the default prefix (`!gather 2 fire`).
    pub fn example(self) -> String {
        self.help().example_line("!", EXAMPLE_PLAYER).unwrap_or_else(|| format!("!{}", self.name()))
    }

    /// True when [`Verb::example`] names a player ([`EXAMPLE_PLAYER`]).
    pub fn example_names_player(self) -> bool {
        self.help().example.split(' ').any(|w| w == EXAMPLE_PLAYER)
    }

    /// [`Verb::example`] naming `player` instead of [`EXAMPLE_PLAYER`] (`!summon 0 carol`).
    pub fn example_naming(self, player: &str) -> String {
        self.help().example_line("!", player).unwrap_or_else(|| self.example())
    }

    /// `text` with this verb's example, as a code span, naming `player` instead.
    pub fn renaming_example(self, text: &str, player: &str) -> String {
        let example = format!("`{}`", self.example());
        if !self.example_names_player() || player == EXAMPLE_PLAYER || !text.contains(&example) {
            return text.to_owned();
        }
        text.replace(&example, &format!("`{}`", self.example_naming(player)))
    }
}

/// A Thaum command, parsed and typed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ThaumCommand {
    /// `!join` (RULES T-4).
    Join,
    /// `!gather <mana> <thaum>`: Gather Power.
    Gather {
        /// Mana to spend.
        mana: u32,
        /// The Thaum to raise.
        thaum: Thaum,
    },
    /// `!blood <amount> <thaum>`: Blood Magic (RULES T-5).
    Blood {
        /// How far to lower the Thaum.
        amount: u32,
        /// The Thaum to lower.
        thaum: Thaum,
    },
    /// `!alchemy <mana> <thaum> <thaum>`.
    Alchemy {
        /// Mana to spend.
        mana: u32,
        /// The first Thaum.
        first: Thaum,
        /// The second Thaum (must differ from the first).
        second: Thaum,
    },
    /// `!bend <mana> <player>`: Bending (RULES T-6).
    Bend {
        /// Mana to spend.
        mana: u32,
        /// The defending player as typed (may be the caster).
        defender: PlayerId,
    },
    /// `!summon <mana> <player>`: Summoning (RULES T-7).
    Summon {
        /// Mana to spend.
        mana: u32,
        /// The other player as typed.
        partner: PlayerId,
    },
    /// `!tornado <mana> <player>`: Tornado (RULES T-8, T-10).
    Tornado {
        /// Mana to spend: the number of repetitions.
        mana: u32,
        /// The other player as typed.
        target: PlayerId,
    },
    /// `!status [player]`.
    Status {
        /// Whose sheet (`table` or `all` for the whole table), if named.
        player: Option<PlayerId>,
    },
    /// `!phase next` (game master; RULES T-2).
    PhaseNext,
    /// `!instability <n|+n|-n>` (game master; RULES T-3).
    Instability(Adjustment),
    /// `!coins <player> <n|+n|-n>` (game master).
    Coins {
        /// The player as typed.
        player: PlayerId,
        /// Set, grant or revoke.
        change: Adjustment,
    },
    /// `!add <player>` (game master; RULES T-4).
    Add {
        /// The new player's name.
        player: PlayerId,
    },
    /// `!gm add <player>` (game master): makes a player at the table a game master.
    GmAdd {
        /// The player as typed.
        player: PlayerId,
    },
    /// `!gm remove <player>` (game master): a game master is one no longer (never the last).
    GmRemove {
        /// The game master as typed.
        player: PlayerId,
    },
    /// `!gm` or `!gm list`: who the game masters are (a question, open to everyone).
    GmList,
    /// `!stop` (game master, or the room's operator): ends the table.
    Stop,
}

impl ThaumCommand {
    /// The command word this command was typed with.
    pub fn verb(&self) -> Verb {
        match self {
            ThaumCommand::Join => Verb::Join,
            ThaumCommand::Gather { .. } => Verb::Gather,
            ThaumCommand::Blood { .. } => Verb::Blood,
            ThaumCommand::Alchemy { .. } => Verb::Alchemy,
            ThaumCommand::Bend { .. } => Verb::Bend,
            ThaumCommand::Summon { .. } => Verb::Summon,
            ThaumCommand::Tornado { .. } => Verb::Tornado,
            ThaumCommand::Status { .. } => Verb::Status,
            ThaumCommand::PhaseNext => Verb::Phase,
            ThaumCommand::Instability(_) => Verb::Instability,
            ThaumCommand::Coins { .. } => Verb::Coins,
            ThaumCommand::Add { .. } => Verb::Add,
            ThaumCommand::GmAdd { .. } | ThaumCommand::GmRemove { .. } | ThaumCommand::GmList => Verb::Gm,
            ThaumCommand::Stop => Verb::Stop,
        }
    }

    /// True for a question that changes nothing (`!status`, `!gm list`): not kept in the
    /// history.
    pub fn is_query(&self) -> bool {
        matches!(self, ThaumCommand::Status { .. } | ThaumCommand::GmList)
    }

    /// True for the commands only a game master may use: every game-master verb, except
    /// that anyone may ask who the game masters are (`!gm list`).
    pub fn game_master_only(&self) -> bool {
        self.verb().game_master_only() && !self.is_query()
    }
}

impl ThaumCommand {
    /// The command the grammar read, as this game's type; `None` when it is not one of
    /// [`COMMANDS`] (the grammar guarantees each command's values).
    pub fn from_parsed(parsed: &Parsed) -> Option<ThaumCommand> {
        let verb = Verb::from_word(parsed.name())?;
        let player = |i: usize| parsed.player(i).cloned();
        let thaum = |i: usize| parsed.choice(i).and_then(|t| Thaum::ALL.get(t).copied());
        Some(match verb {
            Verb::Join => ThaumCommand::Join,
            Verb::Gather => ThaumCommand::Gather { mana: parsed.number(0)?, thaum: thaum(1)? },
            Verb::Blood => ThaumCommand::Blood { amount: parsed.number(0)?, thaum: thaum(1)? },
            Verb::Alchemy => {
                ThaumCommand::Alchemy { mana: parsed.number(0)?, first: thaum(1)?, second: thaum(2)? }
            }
            Verb::Bend => ThaumCommand::Bend { mana: parsed.number(0)?, defender: player(1)? },
            Verb::Summon => ThaumCommand::Summon { mana: parsed.number(0)?, partner: player(1)? },
            Verb::Tornado => ThaumCommand::Tornado { mana: parsed.number(0)?, target: player(1)? },
            Verb::Status => ThaumCommand::Status { player: player(0) },
            Verb::Phase => ThaumCommand::PhaseNext,
            Verb::Instability => ThaumCommand::Instability(parsed.signed(0)?),
            Verb::Coins => ThaumCommand::Coins { player: player(0)?, change: parsed.signed(1)? },
            Verb::Add => ThaumCommand::Add { player: player(0)? },
            // `gm`, `gm list`, `gm add <player>`, `gm remove <player>` (the branches' order).
            Verb::Gm => match parsed.choice(0) {
                None | Some(0) => ThaumCommand::GmList,
                Some(1) => ThaumCommand::GmAdd { player: player(1)? },
                Some(_) => ThaumCommand::GmRemove { player: player(1)? },
            },
            Verb::Stop => ThaumCommand::Stop,
        })
    }
}

/// The Thaum a word names: `fire water earth air` in any case, or 火 水 土 风.
pub fn thaum_from_word(word: &str) -> Option<Thaum> {
    super::THAUMS.find(word).and_then(|i| Thaum::ALL.get(i).copied())
}

/// Reads a Thaum command (without the prefix), e.g. `gather 3 fire`, through the grammar
/// (names stay as typed: nothing resolves them here).
pub fn parse(command: &str) -> Result<ThaumCommand, ReadError> {
    let parsed = grammar::read(COMMANDS, command)?;
    ThaumCommand::from_parsed(&parsed).ok_or_else(|| ReadError::Unknown(parsed.name().to_owned()))
}
