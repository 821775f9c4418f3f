//! Why a command's arguments could not be read, worded in one place for every game and
//! the lobby: what was wrong, and the usage line (with the configured prefix) made from
//! the command's declaration.

use super::{Command, EXAMPLE_PLAYER, Wording};
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
        let c = self.command;
        let name = c.name;
        let hint = c.usage_hint(prefix, player);
        match &self.problem {
            Problem::Missing { clause } => {
                let clause = clause.map(|m| format!(" ({m})")).unwrap_or_default();
                let hint = if c.hint.is_empty() { hint } else { c.hint.replace("`!", &format!("`{prefix}")) };
                format!("`{prefix}{name}` needs {}{clause}: {hint}", c.needs)
            }
            Problem::Extra(extra) => match c.wording {
                Wording::Game => {
                    format!("`{prefix}{name}` takes {}, but `{extra}` is left over: {hint}", c.needs)
                }
                Wording::Lobby => {
                    format!("`{prefix}{name}` does not take `{extra}`: type `{}`.", c.usage_line(prefix))
                }
            },
            Problem::BadNumber { what, error } => format!("`{prefix}{name}`: the {what} {error}: {hint}"),
            Problem::NotOne { noun, list, word, suggestion } => {
                let guess = suggestion.map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default();
                format!("`{prefix}{name}`: `{word}` is not a {noun}{guess}; {list}: {hint}")
            }
            Problem::Expected(word) => format!("`{prefix}{name}` takes {}, not `{word}`: {hint}", c.needs),
        }
    }

    /// [`ParseError::message`] as rich text: each backticked run is code.
    pub fn render(&self, prefix: &str, player: Option<&str>) -> RichText {
        let text = self.message(prefix, player.unwrap_or(EXAMPLE_PLAYER));
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
