//! Why a command's arguments could not be read, worded in one place for every game and
//! the lobby: what was wrong, and the usage line (with the configured prefix) made from
//! the command's declaration.

use super::said::{self, said};
use super::{Command, EXAMPLE_PLAYER, Wording};
use crate::language::Language;
use crate::locale::Args;
use crate::text::RichText;
use crate::words::AmountError;

/// Why a command's arguments could not be read. [`ParseError::render`] says it with the
/// usage line made from the declaration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// The command.
    pub command: &'static Command,
    /// What was wrong.
    pub problem: Problem,
}

/// What was wrong with a command's arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// An argument is missing; `clause` says which, when others were given before it.
    Missing {
        /// `the Thaum is missing`, or `None` when nothing was given.
        clause: Option<&'static str>,
    },
    /// Words were left over after the last argument.
    Extra(String),
    /// A number could not be read.
    BadNumber {
        /// Which argument (`Mana amount`).
        what: &'static str,
        /// What was wrong, with the word as typed.
        error: AmountError,
    },
    /// A word is none of a named choice's (`fier` is not a Thaum).
    NotOne {
        /// What the choices are called (`Thaum`).
        noun: &'static str,
        /// The list as a clause.
        list: &'static str,
        /// The word as typed.
        word: String,
        /// The nearest choice, if the word looks like a typo of one.
        suggestion: Option<&'static str>,
    },
    /// A fixed word was expected (`!phase next`).
    Expected(String),
}

impl ParseError {
    pub(super) fn new(command: &'static Command, problem: Problem) -> Self {
        ParseError { command, problem }
    }

    /// What was wrong and what to type instead, with `prefix`, the example naming
    /// `player` (backticked runs are what to type).
    pub fn message(&self, prefix: &str, player: &str) -> String {
        self.message_in(prefix, player, Language::En)
    }

    /// [`ParseError::message`] in `language` (`locales/*/grammar.ftl`; the command's own
    /// phrases as [`said::phrase`] says them).
    pub fn message_in(&self, prefix: &str, player: &str, language: Language) -> String {
        let c = self.command;
        let phrase = |english: &'static str| said::phrase(language, english);
        let hint = c.usage_hint_in(prefix, player, language);
        let args = Args::new().text("command", format!("{prefix}{}", c.name_in(language)));
        match &self.problem {
            Problem::Missing { clause } => {
                let args = args.text("needs", phrase(c.needs)).text("hint", hint);
                match clause {
                    Some(clause) => {
                        said(language, "grammar-missing-clause", args.text("clause", phrase(clause)))
                    }
                    None => said(language, "grammar-missing", args),
                }
            }
            Problem::Extra(extra) => {
                let args = args.text("extra", extra.as_str());
                match c.wording {
                    Wording::Game if c.needs == NOTHING => {
                        said(language, "grammar-extra-nothing", args.text("hint", hint))
                    }
                    Wording::Game => said(
                        language,
                        "grammar-extra",
                        args.text("needs", phrase(c.needs)).text("hint", hint),
                    ),
                    Wording::Lobby => said(
                        language,
                        "grammar-extra-lobby",
                        args.text("usage", c.usage_line_in(prefix, language)),
                    ),
                }
            }
            Problem::BadNumber { what, error } => said(
                language,
                "grammar-bad-number",
                args.text("what", phrase(what))
                    .text("error", amount_error(language, error))
                    .text("hint", hint),
            ),
            Problem::NotOne { noun, list, word, suggestion } => {
                let args = args
                    .text("word", word.as_str())
                    .text("noun", phrase(noun))
                    .text("list", phrase(list))
                    .text("hint", hint);
                match suggestion {
                    Some(guess) => said(language, "grammar-not-one-guess", args.text("guess", *guess)),
                    None => said(language, "grammar-not-one", args),
                }
            }
            Problem::Expected(word) => said(
                language,
                "grammar-expected",
                args.text("needs", phrase(c.needs)).text("word", word.as_str()).text("hint", hint),
            ),
        }
    }

    /// [`ParseError::message`] as rich text: each backticked run is code.
    pub fn render(&self, prefix: &str, player: Option<&str>) -> RichText {
        self.render_in(prefix, player, Language::En)
    }

    /// [`ParseError::render`] in `language`.
    pub fn render_in(&self, prefix: &str, player: Option<&str>, language: Language) -> RichText {
        let text = self.message_in(prefix, player.unwrap_or(EXAMPLE_PLAYER), language);
        match self.command.wording {
            Wording::Lobby => RichText::from(text),
            Wording::Game => {
                let mut chars = text.chars();
                let capitalised: String = match chars.next() {
                    Some(first) => first.to_uppercase().chain(chars).collect(),
                    None => String::new(),
                };
                capitalised.split('`').enumerate().fold(RichText::new(), |rich, (i, part)| {
                    if i % 2 == 1 { rich.code(part) } else { rich.text(part) }
                })
            }
        }
    }
}

/// What a command needs when it takes no arguments ([`Command::new`]'s).
pub(super) const NOTHING: &str = "nothing after it";

/// Why a number could not be read, in `language`.
fn amount_error(language: Language, error: &AmountError) -> String {
    match error {
        AmountError::NotANumber(word) => {
            said(language, "grammar-not-a-number", Args::new().text("word", word.as_str()))
        }
        AmountError::Negative(word) => {
            said(language, "grammar-negative", Args::new().text("word", word.as_str()))
        }
        AmountError::TooLarge { word, max } => said(
            language,
            "grammar-too-large",
            Args::new().text("word", word.as_str()).text("max", max.to_string()),
        ),
    }
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message("!", EXAMPLE_PLAYER))
    }
}

impl std::error::Error for ParseError {}

/// Why a line could not be read as a command of a list.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// The first word (lower-cased) is none of the list's commands.
    #[error("`{0}` is not a command here")]
    Unknown(String),
    /// The command's arguments could not be read.
    #[error(transparent)]
    Bad(#[from] ParseError),
}
