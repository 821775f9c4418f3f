//! Every hint shows the configured prefix (issue 15): the games and the lobby write the
//! commands they suggest as code with `!` (`!new thaum`, `!cast <spell>`). Where the
//! config sets another prefix, the router rewrites those, and only those: a code segment
//! whose first word is `!` and a command of the lobby or of a game. Relayed chat is
//! never rewritten, nor anything else in code (a Matrix room id such as `!abc:hs`).

use std::collections::BTreeSet;

use spellbridge_core::text::{Segment, Style};
use spellbridge_core::{Command, Grammar, RichText};

/// How the games write a command in their texts.
const WRITTEN: &str = "!";

/// Rewrites the commands in a text to the configured prefix.
#[derive(Debug)]
pub(super) struct Prefixer {
    prefix: String,
    /// Every command name and alias, lower case.
    commands: BTreeSet<String>,
}

impl Prefixer {
    /// A prefixer for `prefix`, or `None` when it is the one the texts are written with.
    /// Its commands are every name and alias in `grammar` (the lobby's and the games').
    pub(super) fn new(prefix: &str, grammar: &Grammar) -> Option<Prefixer> {
        if prefix == WRITTEN {
            return None;
        }
        let commands = grammar.words(|_| true).map(str::to_lowercase).collect();
        Some(Prefixer { prefix: prefix.to_owned(), commands })
    }

    /// Rewrites `commands` too (a table's older build's, which the registry's may lack).
    pub(super) fn add(&mut self, commands: &[Command]) {
        let words = commands.iter().flat_map(|c| std::iter::once(c.name).chain(c.aliases.iter().copied()));
        self.commands.extend(words.map(str::to_lowercase));
    }

    /// `text` with each command written in code given the configured prefix.
    pub(super) fn apply(&self, text: RichText) -> RichText {
        if !text.segments().iter().any(|s| self.rewrites(s)) {
            return text;
        }
        text.into_segments().into_iter().fold(RichText::new(), |rich, segment| match segment {
            Segment::Text { text, style: Style::Code } if self.is_command(&text) => {
                rich.code(format!("{}{}", self.prefix, &text[WRITTEN.len()..]))
            }
            other => rich.push(other),
        })
    }

    fn rewrites(&self, segment: &Segment) -> bool {
        matches!(segment, Segment::Text { text, style: Style::Code } if self.is_command(text))
    }

    fn is_command(&self, code: &str) -> bool {
        code.strip_prefix(WRITTEN)
            .and_then(|rest| rest.split_whitespace().next())
            .is_some_and(|word| self.commands.contains(&word.to_lowercase()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spellbridge_core::Registry;

    fn grammar() -> Grammar {
        let mut grammar = Grammar::new();
        crate::lobby::add(&mut grammar, &Registry::standard());
        for game in Registry::standard().iter() {
            grammar.add(game.name(), game.commands());
        }
        grammar
    }

    fn codes(text: &RichText) -> Vec<String> {
        text.segments()
            .iter()
            .filter_map(|s| match s {
                Segment::Text { text, style: Style::Code } => Some(text.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn the_default_prefix_needs_no_rewriting() {
        assert!(Prefixer::new("!", &grammar()).is_none());
    }

    #[test]
    fn commands_in_code_take_the_configured_prefix_and_nothing_else_does() {
        let prefixer = Prefixer::new("?", &grammar()).expect("a prefixer for ?");
        let text =
            RichText::from("Type `!new thaum`, `!duel <player>` or `!Cast fire`; the room is `!abc:hs`!")
                .text(" Not code: !join.");
        let rewritten = prefixer.apply(text);
        assert_eq!(codes(&rewritten), ["?new thaum", "?duel <player>", "?Cast fire", "!abc:hs"]);
        assert!(rewritten.plain().ends_with("Not code: !join."), "{}", rewritten.plain());
    }

    #[test]
    fn a_longer_prefix_replaces_the_bang_whole() {
        let prefixer = Prefixer::new("sb:", &grammar()).expect("a prefixer for sb:");
        assert_eq!(codes(&prefixer.apply(RichText::new().code("!help"))), ["sb:help"]);
    }
}
