//! The reader: what a command message says, read once. The prefix is stripped once (half
//! or full width, on every network), the words split once, and the command word looked up
//! once in the lobby's and every game's commands together (any case or width); the lobby,
//! a table's game and the "unknown command" answer all take what that one lookup found.

use spellbridge_core::grammar::{self, Command, Grammar};

use crate::lobby::LOBBY;

/// A command message, read.
pub(super) struct Read<'a> {
    /// Its words (split at any Unicode space).
    pub(super) words: Vec<&'a str>,
    /// The command word, normalised (lower case, full-width forms as ASCII).
    pub(super) head: String,
    /// Every owner (the lobby, a game) with a command the word names, and that command.
    found: Vec<(&'static str, &'static Command)>,
}

impl<'a> Read<'a> {
    /// Reads `text` (a message that starts with `prefix`, see [`grammar::strip_prefix`])
    /// against `grammar`.
    pub(super) fn new(text: &'a str, prefix: &str, grammar: &Grammar) -> Read<'a> {
        let text = text.trim();
        let text = grammar::strip_prefix(text, prefix).unwrap_or(text).trim();
        let words: Vec<&str> = text.split_whitespace().collect();
        let head = words.first().map(|w| grammar::command_word(w)).unwrap_or_default();
        let found = grammar.find(&head).to_vec();
        Read { words, head, found }
    }

    /// The lobby's command the word names, if any.
    pub(super) fn lobby(&self) -> Option<&'static Command> {
        self.of(LOBBY)
    }

    /// `owner`'s command the word names, if any.
    pub(super) fn of(&self, owner: &str) -> Option<&'static Command> {
        self.found.iter().find(|(o, _)| *o == owner).map(|(_, c)| *c)
    }

    /// True when some owner has a command the word names.
    pub(super) fn known(&self) -> bool {
        !self.found.is_empty()
    }

    /// The command's own name, however it was typed (`状态` is `status`); the word itself
    /// when nobody has it.
    pub(super) fn name(&self) -> &str {
        self.found.first().map_or(self.head.as_str(), |(_, command)| command.name)
    }
}
