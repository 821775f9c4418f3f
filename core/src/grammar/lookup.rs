//! One lookup over the commands of the lobby and of every game, by name and alias.

use std::collections::BTreeMap;

use super::{Command, command_word};

/// One lookup over several lists of commands (the lobby's and each game's), by name and
/// alias, ignoring case and width (`ＣＡＳＴ`).
#[derive(Clone, Debug, Default)]
pub struct Grammar {
    /// Every name and alias, lower case → each owner's command of that name.
    by_word: BTreeMap<String, Vec<(&'static str, &'static Command)>>,
    /// The owners, in the order they were added, with their commands.
    lists: Vec<(&'static str, &'static [Command])>,
}

impl Grammar {
    /// An empty grammar.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `owner`'s commands (the lobby, or a game by name).
    pub fn add(&mut self, owner: &'static str, commands: &'static [Command]) {
        for command in commands {
            for word in std::iter::once(command.name).chain(command.aliases.iter().copied()) {
                self.by_word.entry(command_word(word)).or_default().push((owner, command));
            }
        }
        self.lists.push((owner, commands));
    }

    /// Every owner's command that `word` (any case or width) names.
    pub fn find(&self, word: &str) -> &[(&'static str, &'static Command)] {
        self.by_word.get(&command_word(word)).map_or(&[], Vec::as_slice)
    }

    /// `owner`'s command that `word` names.
    pub fn find_in(&self, owner: &str, word: &str) -> Option<&'static Command> {
        self.find(word).iter().find(|(o, _)| *o == owner).map(|(_, c)| *c)
    }

    /// `owner`'s commands, in help order: every list added for it, in the order added
    /// (the lobby's own commands with the games' challenges and questions between them).
    pub fn commands<'a>(&'a self, owner: &'a str) -> impl Iterator<Item = &'static Command> + 'a {
        self.lists.iter().filter(move |(o, _)| *o == owner).flat_map(|(_, commands)| commands.iter())
    }

    /// Every name and alias of every owner (or of `only` those), for suggestions.
    pub fn words<'a>(&'a self, only: impl Fn(&str) -> bool + 'a) -> impl Iterator<Item = &'static str> + 'a {
        self.lists
            .iter()
            .filter(move |(owner, _)| only(owner))
            .flat_map(|(_, commands)| commands.iter())
            .flat_map(|c| std::iter::once(c.name).chain(c.aliases.iter().copied()))
    }
}
