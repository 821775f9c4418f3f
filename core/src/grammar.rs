//! Commands as data: each game (and the daemon's lobby) declares its commands once, as
//! [`Command`]s — name, aliases, typed arguments, whether it only asks, who may use it,
//! its help — and every command is read here, against that declaration.
//!
//! - [`Command`] and [`Arg`]: one command and its arguments ([`Kind`]: `Number`,
//!   `Signed`, a fixed [`Choice`] of words (the Thaums), `Player` (known or new;
//!   named last, it is the rest of the line, as display names have spaces),
//!   `Word`, `Rest` (the tokens to the end of the line) or a `Branch` of fixed words each
//!   with its own arguments, as `!gm add <player>`).
//! - [`Grammar`]: one lookup over several lists of commands (the lobby's and each game's),
//!   by name and alias, ignoring case.
//! - [`parse`]: the words after the prefix → a typed [`Parsed`] command, or a
//!   [`ParseError`] that says what was wrong and shows the usage line made from the
//!   declaration, with the configured prefix ([`ParseError::render`]). Every parse error
//!   of every game and of the lobby is worded here.
//!
//! Full-width input is read as its ASCII form wherever no player is named ([`width`]:
//! `！施法　火`, `１２`, `＋３`); every command has its Chinese name among its aliases
//! ([`Command::name_in`]).
//!
//! A [`Parsed`] command keeps the words as typed, so [`Parsed::text`] gives them back
//! with the players resolved (the daemon journals that text, and replays it through this
//! same parser). Nothing here resolves a name: the daemon does, and only for `Player`
//! arguments, so a player called `fire` or `end` never changes a game word.

mod error;
mod lookup;
mod parsed;
mod said;
mod width;

pub use error::{ParseError, Problem, ReadError};
pub use lookup::Grammar;
pub use parsed::{Kept, Parsed, Value};
pub use said::{PHRASES, phrase, untranslated};
pub use width::{command_word, narrow, strip_prefix};

use crate::ids::PlayerId;
use crate::language::Language;
use crate::plugin::{Refusal, Table};
use crate::words::{self, Adjustment, AmountError};

/// The player the examples name (`bend 1 bob`); shown to a player of that name, an
/// example names someone else ([`Table::example_player`]).
pub const EXAMPLE_PLAYER: &str = "bob";

/// Whether a `Player` argument names someone who plays already or someone new.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlayerArgument {
    /// Names someone who plays already (`!bend 2 bob`).
    Known,
    /// Names someone who joins by it (`!add bob`): a name nobody has yet is taken as a
    /// new player's, and must be one people can read (no control, invisible,
    /// direction-changing or look-alike characters).
    New,
}

/// A fixed set of words, each with the other words that mean the same (`fire`, `火`).
#[derive(Debug, PartialEq, Eq)]
pub struct Choice {
    /// What one of them is called (`Thaum`), or `None` for plain words (`next`).
    pub noun: Option<&'static str>,
    /// The list as a clause (`the Thaums are fire, water, earth and air`).
    pub list: &'static str,
    /// The choices, each as its word and then its other words.
    pub words: &'static [&'static [&'static str]],
}

impl Choice {
    /// The index of the choice `word` names, ignoring case and width.
    pub fn find(&self, word: &str) -> Option<usize> {
        let lower = command_word(word);
        self.words.iter().position(|names| names.iter().any(|n| *n == lower))
    }

    /// The nearest choice's word, when `word` looks like a typo of one.
    fn nearest(&self, word: &str) -> Option<&'static str> {
        words::nearest(word, self.words.iter().filter_map(|names| names.first().copied()))
    }
}

/// One word of a [`Kind::Branch`] and the arguments that follow it.
#[derive(Debug, PartialEq, Eq)]
pub struct Branch {
    /// The word (`add`).
    pub word: &'static str,
    /// Other words that mean the same (`添加`).
    pub aliases: &'static [&'static str],
    /// What follows it.
    pub args: &'static [Arg],
}

impl Branch {
    /// True when `word` (any case, ASCII or full width) is its word or an alias.
    pub fn is_called(&self, word: &str) -> bool {
        let lower = command_word(word);
        self.word == lower || self.aliases.contains(&lower.as_str())
    }
}

/// What an argument is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A whole number from 0 to [`words::MAX_AMOUNT`].
    Number,
    /// `n`, `+n` or `-n`: set, add or take away.
    Signed,
    /// One of a fixed set of words.
    Choice(&'static Choice),
    /// A player, by a name the daemon resolves.
    Player(PlayerArgument),
    /// Any one word, as typed.
    Word,
    /// Every word to the end of the line (`Token…`).
    Rest,
    /// One of a few words, each with arguments of its own.
    Branch(&'static [Branch]),
}

/// One argument of a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arg {
    /// What it is.
    pub kind: Kind,
    /// How the usage line shows it (`<mana>`, `[player|table]`); empty: not shown.
    pub shown: &'static str,
    /// True when it may be left out.
    pub optional: bool,
    /// What a bad number is called in a refusal (`Mana amount`).
    pub what: &'static str,
    /// The clause a refusal adds when it is missing after others were given
    /// (`the Thaum is missing`).
    pub missing: &'static str,
}

impl Arg {
    /// An argument of `kind`, shown as `shown` in the usage line.
    pub const fn new(kind: Kind, shown: &'static str) -> Arg {
        Arg { kind, shown, optional: false, what: "", missing: "" }
    }

    /// The same argument, which may be left out.
    pub const fn optional(self) -> Arg {
        Arg { optional: true, ..self }
    }

    /// The same argument, called `what` when it is a bad number.
    pub const fn what(self, what: &'static str) -> Arg {
        Arg { what, ..self }
    }

    /// The same argument, with the clause said when it alone is missing.
    pub const fn missing(self, missing: &'static str) -> Arg {
        Arg { missing, ..self }
    }
}

/// Whether a command only asks (it changes nothing, so nothing is journaled).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Query {
    /// It acts.
    No,
    /// It only asks.
    Yes,
    /// It only asks when its first argument is left out or is one of these words
    /// (`!gm` and `!gm list` ask; `!gm add bob` acts).
    Unless(&'static [&'static str]),
}

/// Who may use a command (the game or the daemon enforces it; help says it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Who {
    /// Anyone.
    Anyone,
    /// A game master of the table (or of every table).
    GameMaster,
    /// A game master, or an operator of the table's room.
    GameMasterOrOperator,
    /// A bot admin.
    Admin,
}

/// How a family of commands words a refusal for words left over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wording {
    /// "`!stop` takes nothing after it, but `now` is left over: type just `!stop`."
    Game,
    /// "`!games` does not take `now`: type `!games`."
    Lobby,
}

/// One command, declared once: how it is typed, read, explained and allowed.
#[derive(Debug, PartialEq, Eq)]
pub struct Command {
    /// The command word, without the prefix (`gather`).
    pub name: &'static str,
    /// Other words that mean the same (`gatherpower`).
    pub aliases: &'static [&'static str],
    /// A second word that may follow the name and is skipped (`gather power`).
    pub second_word: Option<&'static str>,
    /// The arguments, in order.
    pub args: &'static [Arg],
    /// Whether it only asks.
    pub query: Query,
    /// Who may use it.
    pub who: Who,
    /// One sentence saying what it does (the help).
    pub summary: &'static str,
    /// What its arguments are, in words (`a Mana amount and a Thaum`).
    pub needs: &'static str,
    /// A complete example without the prefix (`gather 2 fire`); empty: none.
    pub example: &'static str,
    /// How a refusal for words left over is worded.
    pub wording: Wording,
    /// Typed privately to the bot (a Duel's `!cast`): `!help` lists it apart.
    pub private: bool,
}

impl Command {
    /// A command that takes nothing and acts, for anyone.
    pub const fn new(name: &'static str, summary: &'static str) -> Command {
        Command {
            name,
            aliases: &[],
            second_word: None,
            args: &[],
            query: Query::No,
            who: Who::Anyone,
            summary,
            needs: error::NOTHING,
            example: "",
            wording: Wording::Game,
            private: false,
        }
    }

    /// With these aliases.
    pub const fn aliases(self, aliases: &'static [&'static str]) -> Command {
        Command { aliases, ..self }
    }

    /// With a second word of its name that may be typed (`gather power`).
    pub const fn second_word(self, word: &'static str) -> Command {
        Command { second_word: Some(word), ..self }
    }

    /// With these arguments, described as `needs`.
    pub const fn args(self, args: &'static [Arg], needs: &'static str) -> Command {
        Command { args, needs, ..self }
    }

    /// Asking or acting.
    pub const fn query(self, query: Query) -> Command {
        Command { query, ..self }
    }

    /// For whom.
    pub const fn who(self, who: Who) -> Command {
        Command { who, ..self }
    }

    /// With an example (without the prefix).
    pub const fn example(self, example: &'static str) -> Command {
        Command { example, ..self }
    }

    /// Typed privately to the bot.
    pub const fn private(self) -> Command {
        Command { private: true, ..self }
    }

    /// Worded as the lobby words its refusals.
    pub const fn lobby(self) -> Command {
        Command { wording: Wording::Lobby, ..self }
    }

    /// True when `word` (any case, ASCII or full width) is its name or an alias.
    pub fn is_called(&self, word: &str) -> bool {
        let lower = command_word(word);
        self.name == lower || self.aliases.contains(&lower.as_str())
    }

    /// What it is called in `language`: its name in English, its first alias written in
    /// Han characters in Chinese (`施法` for `cast`), else its name.
    pub fn name_in(&self, language: Language) -> &'static str {
        match language {
            Language::En => self.name,
            Language::ZhCn => self.aliases.iter().copied().find(|a| is_han(a)).unwrap_or(self.name),
        }
    }

    /// The arguments as the usage line shows them (`<mana> <fire|water|earth|air>`).
    pub fn usage(&self) -> String {
        self.args.iter().map(|a| a.shown).filter(|s| !s.is_empty()).collect::<Vec<_>>().join(" ")
    }

    /// The usage line with `prefix` (`!gather <mana> <fire|water|earth|air>`).
    pub fn usage_line(&self, prefix: &str) -> String {
        let usage = self.usage();
        if usage.is_empty() {
            format!("{prefix}{}", self.name)
        } else {
            format!("{prefix}{} {usage}", self.name)
        }
    }

    /// The example with `prefix`, naming `player` instead of [`EXAMPLE_PLAYER`].
    pub fn example_line(&self, prefix: &str, player: &str) -> Option<String> {
        if self.example.is_empty() {
            return None;
        }
        let words: Vec<&str> =
            self.example.split(' ').map(|w| if w == EXAMPLE_PLAYER { player } else { w }).collect();
        Some(format!("{prefix}{}", words.join(" ")))
    }

    /// "type `!gather <mana> <thaum>`, e.g. `!gather 2 fire`." (or "type just `!join`.").
    pub fn usage_hint(&self, prefix: &str, player: &str) -> String {
        let typed = self.usage_line(prefix);
        match self.example_line(prefix, player) {
            Some(example) if example == typed => format!("type just `{typed}`."),
            Some(example) => format!("type `{typed}`, e.g. `{example}`."),
            None => format!("type `{typed}`."),
        }
    }
}

/// True when `word` is written in Han characters (a Chinese alias).
fn is_han(word: &str) -> bool {
    word.chars().next().is_some_and(|c| matches!(c, '\u{3400}'..='\u{4DBF}' | '\u{4E00}'..='\u{9FFF}'))
}

/// Reads `words` (the command word first) as `command`.
pub fn parse<S: AsRef<str>>(command: &'static Command, words: &[S]) -> Result<Parsed, ParseError> {
    let words: Vec<String> = words.iter().map(|w| w.as_ref().to_owned()).collect();
    let mut reader =
        Reader { command, words: &words, at: 1, taken: 0, values: Vec::new(), spans_to_end: None };
    if let (Some(second), Some(next)) = (command.second_word, words.get(1))
        && narrow(next).eq_ignore_ascii_case(second)
    {
        reader.at = 2;
    }
    reader.args(command.args)?;
    if reader.at < words.len() {
        return Err(ParseError::new(command, Problem::Extra(words[reader.at..].join(" "))));
    }
    let (values, spans_to_end) = (reader.values, reader.spans_to_end);
    let mut words = words;
    // A player named in several words (`Piet Silent`) is one word of the command, so its
    // resolved id takes its place whole (`Parsed::text`).
    if let Some(at) = spans_to_end
        && at + 1 < words.len()
    {
        let name = words.split_off(at).join(" ");
        words.push(name);
    }
    Ok(Parsed { command, words, values })
}

/// Reads a line (without the prefix) as one of `commands`.
pub fn read(commands: &'static [Command], line: &str) -> Result<Parsed, ReadError> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let head = words.first().map(|w| command_word(w)).unwrap_or_default();
    let command = commands.iter().find(|c| c.is_called(&head)).ok_or(ReadError::Unknown(head))?;
    Ok(parse(command, &words)?)
}

/// Reads a line (without the prefix) for `table` as the daemon does, with the default
/// prefix: the typed command, or the refusal the daemon would answer (for tests and
/// tools that drive a table without the daemon).
pub fn read_for(table: &dyn Table, actor: &PlayerId, line: &str) -> Result<Parsed, Refusal> {
    read(table.commands(), line).map_err(|error| match error {
        ReadError::Unknown(word) => Refusal::UnknownCommand(word),
        ReadError::Bad(error) => {
            let player = table.example_player(error.command.name, actor);
            Refusal::Refused(error.render("!", player.as_deref()))
        }
    })
}

/// The arguments after the command word, read left to right.
struct Reader<'a> {
    command: &'static Command,
    words: &'a [String],
    /// The next word's position.
    at: usize,
    /// How many arguments were given so far.
    taken: usize,
    values: Vec<(usize, Value)>,
    /// Where a player named by the rest of the line starts.
    spans_to_end: Option<usize>,
}

impl Reader<'_> {
    fn args(&mut self, args: &'static [Arg]) -> Result<(), ParseError> {
        for (i, arg) in args.iter().enumerate() {
            self.arg(arg, i + 1 == args.len())?;
        }
        Ok(())
    }

    fn fail(&self, problem: Problem) -> ParseError {
        ParseError::new(self.command, problem)
    }

    /// Reads one argument; `last` when no other follows it (a player named last takes the
    /// rest of the line: display names have spaces).
    fn arg(&mut self, arg: &'static Arg, last: bool) -> Result<(), ParseError> {
        let at = self.at;
        let Some(word) = self.words.get(at) else {
            if arg.optional {
                self.values.push((at, Value::Absent));
                return Ok(());
            }
            let clause = (self.taken > 0 && !arg.missing.is_empty()).then_some(arg.missing);
            return Err(self.fail(Problem::Missing { clause }));
        };
        self.at += 1;
        self.taken += 1;
        let value = match arg.kind {
            Kind::Number => Value::Number(
                words::amount(&narrow(word))
                    .map_err(|error| self.fail(Problem::BadNumber { what: arg.what, error }))?,
            ),
            Kind::Signed => Value::Signed(
                signed(&narrow(word))
                    .map_err(|error| self.fail(Problem::BadNumber { what: arg.what, error }))?,
            ),
            Kind::Choice(choice) => match (choice.find(word), choice.noun) {
                (Some(i), _) => Value::Choice(i),
                (None, Some(noun)) => {
                    let suggestion = choice.nearest(word);
                    return Err(self.fail(Problem::NotOne {
                        noun,
                        list: choice.list,
                        word: word.clone(),
                        suggestion,
                    }));
                }
                (None, None) => return Err(self.fail(Problem::Expected(word.clone()))),
            },
            Kind::Player(kind) if last => {
                self.at = self.words.len();
                self.spans_to_end = Some(at);
                Value::Player(kind, PlayerId::new(self.words[at..].join(" ")))
            }
            Kind::Player(kind) => Value::Player(kind, PlayerId::new(word.as_str())),
            Kind::Word => Value::Word(narrow(word).into_owned()),
            Kind::Rest => {
                self.at = self.words.len();
                Value::Rest(self.words[at..].iter().map(|w| narrow(w).into_owned()).collect())
            }
            Kind::Branch(branches) => {
                let Some(i) = branches.iter().position(|b| b.is_called(word)) else {
                    return Err(self.fail(Problem::Expected(word.clone())));
                };
                self.values.push((at, Value::Choice(i)));
                return self.args(branches[i].args);
            }
        };
        self.values.push((at, value));
        Ok(())
    }
}

/// Reads `n`, `+n` or `-n`; one sign only (`++2` and `-+2` are not numbers), and an
/// error names the whole word as typed.
fn signed(word: &str) -> Result<Adjustment, AmountError> {
    let unsigned = word.strip_prefix(['+', '-']).unwrap_or(word);
    if unsigned.starts_with(['+', '-']) {
        return Err(AmountError::NotANumber(word.to_owned()));
    }
    words::adjustment(word).map_err(|error| match error {
        AmountError::TooLarge { max, .. } => AmountError::TooLarge { word: word.to_owned(), max },
        AmountError::NotANumber(_) | AmountError::Negative(_) => AmountError::NotANumber(word.to_owned()),
    })
}

#[cfg(test)]
mod tests;
