//! Thaum commands as typed values, and the parser from chat text (without the prefix).
//!
//! Words are case-insensitive; `gather power` and `blood magic` may be typed as two words,
//! and every alias in [`super::COMMANDS`] is accepted. Thaums are `fire water earth air`
//! (also 火 水 土 风). A first word that is no Thaum command is
//! [`ParseError::UnknownCommand`], so the router can suggest across every game; any other
//! error says exactly what was wrong and shows the usage to type instead. Player names are
//! kept as typed: the engine resolves them against the table's players.

use crate::ids::PlayerId;
use crate::plugin::CommandHelp;
use crate::words::{self, Adjustment, AmountError};

use super::COMMANDS;
use super::state::Thaum;

/// The player the examples of [`Verb::example`] name; a refusal shown to a player of that
/// name names someone else (see [`Verb::example_naming`]).
pub const EXAMPLE_PLAYER: &str = "bob";

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

    /// This command's help entry.
    pub fn help(self) -> &'static CommandHelp {
        &COMMANDS[self as usize]
    }

    /// The command word (`gather`).
    pub fn name(self) -> &'static str {
        self.help().name
    }

    /// The verb a (lower-case) word names, by name or alias.
    pub fn from_word(word: &str) -> Option<Verb> {
        Verb::ALL.into_iter().find(|v| v.name() == word || v.help().aliases.contains(&word))
    }

    /// True for the commands only a game master may use (`!gm` only to change the game
    /// masters: see [`ThaumCommand::game_master_only`]).
    pub fn game_master_only(self) -> bool {
        matches!(self, Verb::Phase | Verb::Instability | Verb::Coins | Verb::Add | Verb::Gm | Verb::Stop)
    }

    /// The second word of a two-word name (`gather power`), skipped when typed.
    fn second_word(self) -> Option<&'static str> {
        match self {
            Verb::Gather => Some("power"),
            Verb::Blood => Some("magic"),
            _ => None,
        }
    }

    /// What the command's arguments are, in words.
    fn needs(self) -> &'static str {
        match self {
            Verb::Join | Verb::Stop => "nothing after it",
            Verb::Gather => "a Mana amount and a Thaum",
            Verb::Blood => "an amount and a Thaum",
            Verb::Alchemy => "a Mana amount and two different Thaums",
            Verb::Bend => "a Mana amount and a defending player (you may name yourself)",
            Verb::Summon | Verb::Tornado => "a Mana amount and another player",
            Verb::Status => "at most one player",
            Verb::Phase => "the word `next`",
            Verb::Instability => "a number: `n` sets it, `+n` adds, `-n` takes away",
            Verb::Coins => "a player and a number: `n` sets, `+n` grants, `-n` revokes",
            Verb::Add => "one player",
            Verb::Gm => "`add <player>`, `remove <player>` or `list`",
        }
    }

    /// A complete example, with the default prefix (`!gather 2 fire`).
    pub fn example(self) -> &'static str {
        match self {
            Verb::Join => "!join",
            Verb::Gather => "!gather 2 fire",
            Verb::Blood => "!blood 3 water",
            Verb::Alchemy => "!alchemy 1 fire air",
            Verb::Bend => "!bend 1 bob",
            Verb::Summon => "!summon 0 bob",
            Verb::Tornado => "!tornado 2 bob",
            Verb::Status => "!status bob",
            Verb::Phase => "!phase next",
            Verb::Instability => "!instability +1",
            Verb::Coins => "!coins bob +5",
            Verb::Add => "!add bob",
            Verb::Gm => "!gm add bob",
            Verb::Stop => "!stop",
        }
    }

    /// True when [`Verb::example`] names a player ([`EXAMPLE_PLAYER`]).
    pub fn example_names_player(self) -> bool {
        matches!(
            self,
            Verb::Bend | Verb::Summon | Verb::Tornado | Verb::Status | Verb::Coins | Verb::Add | Verb::Gm
        )
    }

    /// [`Verb::example`] naming `player` instead of [`EXAMPLE_PLAYER`] (`!summon 0 carol`).
    pub fn example_naming(self, player: &str) -> String {
        if !self.example_names_player() {
            return self.example().to_owned();
        }
        let words: Vec<&str> =
            self.example().split(' ').map(|w| if w == EXAMPLE_PLAYER { player } else { w }).collect();
        words.join(" ")
    }

    /// `text` with this verb's example, as a code span, naming `player` instead.
    pub fn renaming_example(self, text: &str, player: &str) -> String {
        let example = format!("`{}`", self.example());
        if !self.example_names_player() || player == EXAMPLE_PLAYER || !text.contains(&example) {
            return text.to_owned();
        }
        text.replace(&example, &format!("`{}`", self.example_naming(player)))
    }

    /// "type `!gather <mana> <thaum>`, e.g. `!gather 2 fire`."
    pub fn usage_hint(self) -> String {
        let help = self.help();
        let typed = if help.usage.is_empty() {
            format!("!{}", help.name)
        } else {
            format!("!{} {}", help.name, help.usage)
        };
        if typed == self.example() {
            format!("type just `{typed}`.")
        } else {
            format!("type `{typed}`, e.g. `{}`.", self.example())
        }
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

/// Why a command could not be read. Each message says what to type instead.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// The first word is no Thaum command (the router suggests one across all games).
    #[error("`{0}` is not a Thaum command")]
    UnknownCommand(String),
    /// Arguments are missing; `missing` says which, when some were given.
    #[error("`!{}` needs {}{}: {}", .verb.name(), .verb.needs(),
        .missing.map(|m| format!(" ({m})")).unwrap_or_default(), .verb.usage_hint())]
    Missing {
        /// The command.
        verb: Verb,
        /// What is missing, as a clause (`the second Thaum is missing`), when at least
        /// one argument was given.
        missing: Option<&'static str>,
    },
    /// Words were left over after the last argument.
    #[error("`!{}` takes {}, but `{extra}` is left over: {}", .verb.name(), .verb.needs(), .verb.usage_hint())]
    Extra {
        /// The command.
        verb: Verb,
        /// The words left over, as typed.
        extra: String,
    },
    /// A number could not be read.
    #[error("`!{}`: the {what} {error}: {}", .verb.name(), .verb.usage_hint())]
    BadAmount {
        /// The command.
        verb: Verb,
        /// Which argument (`Mana amount`).
        what: &'static str,
        /// What was wrong with it, with the word as typed.
        error: AmountError,
    },
    /// A word is no Thaum.
    #[error("`!{}`: `{word}` is not a Thaum{}; the Thaums are fire, water, earth and air: {}",
        .verb.name(), .suggestion.map(|t| format!(" (did you mean `{}`?)", t.key())).unwrap_or_default(),
        .verb.usage_hint())]
    UnknownThaum {
        /// The command.
        verb: Verb,
        /// The word as typed.
        word: String,
        /// The nearest Thaum, if the word looks like a typo of one.
        suggestion: Option<Thaum>,
    },
    /// A fixed word was expected (`!phase next`).
    #[error("`!{}` takes {}, not `{word}`: {}", .verb.name(), .verb.needs(), .verb.usage_hint())]
    Expected {
        /// The command.
        verb: Verb,
        /// The word as typed.
        word: String,
    },
}

impl ParseError {
    /// The command that could not be read, when it is a Thaum command.
    pub fn verb(&self) -> Option<Verb> {
        match self {
            ParseError::UnknownCommand(_) => None,
            ParseError::Missing { verb, .. }
            | ParseError::Extra { verb, .. }
            | ParseError::BadAmount { verb, .. }
            | ParseError::UnknownThaum { verb, .. }
            | ParseError::Expected { verb, .. } => Some(*verb),
        }
    }
}

/// The Thaum a word names: `fire water earth air` in any case, or 火 水 土 风.
pub fn thaum_from_word(word: &str) -> Option<Thaum> {
    let lower = word.to_lowercase();
    Thaum::ALL.into_iter().find(|t| t.key() == lower).or(match lower.as_str() {
        "火" => Some(Thaum::Fire),
        "水" => Some(Thaum::Water),
        "土" => Some(Thaum::Earth),
        "风" | "風" => Some(Thaum::Air),
        _ => None,
    })
}

const THAUM: &str = "the Thaum is missing";

/// Reads a Thaum command (without the prefix), e.g. `gather 3 fire`.
pub fn parse(command: &str) -> Result<ThaumCommand, ParseError> {
    let (head, words) = words::split(command);
    let Some(verb) = Verb::from_word(&head) else {
        return Err(ParseError::UnknownCommand(head));
    };
    let mut rest = words.as_slice();
    if let (Some(second), Some(first)) = (verb.second_word(), rest.first())
        && first.eq_ignore_ascii_case(second)
    {
        rest = &rest[1..];
    }
    let mut args = Args { verb, words: rest, taken: 0 };
    let command = match verb {
        Verb::Join => ThaumCommand::Join,
        Verb::Gather => ThaumCommand::Gather { mana: args.amount("Mana amount")?, thaum: args.thaum(THAUM)? },
        Verb::Blood => ThaumCommand::Blood { amount: args.amount("amount")?, thaum: args.thaum(THAUM)? },
        Verb::Alchemy => ThaumCommand::Alchemy {
            mana: args.amount("Mana amount")?,
            first: args.thaum("both Thaums are missing")?,
            second: args.thaum("the second Thaum is missing")?,
        },
        Verb::Bend => ThaumCommand::Bend { mana: args.amount("Mana amount")?, defender: args.player()? },
        Verb::Summon => ThaumCommand::Summon { mana: args.amount("Mana amount")?, partner: args.player()? },
        Verb::Tornado => ThaumCommand::Tornado { mana: args.amount("Mana amount")?, target: args.player()? },
        Verb::Status => ThaumCommand::Status { player: args.optional_player() },
        Verb::Phase => {
            let word = args.next("the word `next` is missing")?;
            if !word.eq_ignore_ascii_case("next") {
                return Err(ParseError::Expected { verb, word: word.to_owned() });
            }
            ThaumCommand::PhaseNext
        }
        Verb::Instability => ThaumCommand::Instability(args.adjustment()?),
        Verb::Coins => ThaumCommand::Coins { player: args.player()?, change: args.adjustment()? },
        Verb::Add => ThaumCommand::Add { player: args.player()? },
        Verb::Gm => match args.optional_word() {
            None => ThaumCommand::GmList,
            Some(word) if word.eq_ignore_ascii_case("list") => ThaumCommand::GmList,
            Some(word) if word.eq_ignore_ascii_case("add") => ThaumCommand::GmAdd { player: args.player()? },
            Some(word) if word.eq_ignore_ascii_case("remove") => {
                ThaumCommand::GmRemove { player: args.player()? }
            }
            Some(word) => return Err(ParseError::Expected { verb, word: word.to_owned() }),
        },
        Verb::Stop => ThaumCommand::Stop,
    };
    args.finish()?;
    Ok(command)
}

/// The arguments after the command word, read left to right.
struct Args<'a> {
    verb: Verb,
    words: &'a [&'a str],
    taken: usize,
}

impl<'a> Args<'a> {
    /// The next word; `missing` says what is missing if there is none
    /// (`the Thaum is missing`).
    fn next(&mut self, missing: &'static str) -> Result<&'a str, ParseError> {
        let Some((first, rest)) = self.words.split_first() else {
            let missing = (self.taken > 0).then_some(missing);
            return Err(ParseError::Missing { verb: self.verb, missing });
        };
        self.words = rest;
        self.taken += 1;
        Ok(first)
    }

    fn amount(&mut self, what: &'static str) -> Result<u32, ParseError> {
        let missing =
            if what == "Mana amount" { "the Mana amount is missing" } else { "the amount is missing" };
        let word = self.next(missing)?;
        words::amount(word).map_err(|error| ParseError::BadAmount { verb: self.verb, what, error })
    }

    fn adjustment(&mut self) -> Result<Adjustment, ParseError> {
        let what = "number";
        let word = self.next("the number is missing")?;
        // `words::adjustment` reads the sign, then an amount that may carry its own `+`:
        // one sign is enough, so `++2` and `-+2` are not numbers.
        let unsigned = word.strip_prefix(['+', '-']).unwrap_or(word);
        if unsigned.starts_with(['+', '-']) {
            let error = AmountError::NotANumber(word.to_owned());
            return Err(ParseError::BadAmount { verb: self.verb, what, error });
        }
        words::adjustment(word).map_err(|error| ParseError::BadAmount {
            verb: self.verb,
            what,
            error: reword(word, error),
        })
    }

    fn thaum(&mut self, missing: &'static str) -> Result<Thaum, ParseError> {
        let word = self.next(missing)?;
        thaum_from_word(word).ok_or_else(|| ParseError::UnknownThaum {
            verb: self.verb,
            word: word.to_owned(),
            suggestion: words::nearest(word, Thaum::ALL.map(Thaum::key)).and_then(thaum_from_word),
        })
    }

    fn player(&mut self) -> Result<PlayerId, ParseError> {
        self.next("the player is missing").map(PlayerId::new)
    }

    fn optional_player(&mut self) -> Option<PlayerId> {
        self.optional_word().map(PlayerId::new)
    }

    fn optional_word(&mut self) -> Option<&'a str> {
        self.next("nothing is missing").ok()
    }

    fn finish(self) -> Result<(), ParseError> {
        if self.words.is_empty() {
            Ok(())
        } else {
            Err(ParseError::Extra { verb: self.verb, extra: self.words.join(" ") })
        }
    }
}

/// An adjustment's error names the word without its sign; name the whole word instead
/// (`+x`, not `x`), and call `--2` what it is: not a number.
fn reword(word: &str, error: AmountError) -> AmountError {
    match error {
        AmountError::TooLarge { max, .. } => AmountError::TooLarge { word: word.to_owned(), max },
        AmountError::NotANumber(_) | AmountError::Negative(_) => AmountError::NotANumber(word.to_owned()),
    }
}
