//! `!help`, `!games`, and the answer to a command nobody knows: all made from the
//! commands' declarations (the router's one [`Grammar`](spellbridge_core::Grammar)), with
//! the configured prefix, in the language of where they are asked (`!帮助` lists the
//! commands by their Chinese names).

use spellbridge_core::locale::Args;

use super::said::{joined, lobby_summary, or_list, said};
use super::*;

/// Lobby commands `!help` does not list in English: its list is fixed by CONTRACT.md and
/// every transcript (issue 19: English output does not change). `!help lang` explains it.
const UNLISTED: &[&str] = &["lang"];

/// One argument of a usage line (`<player>`) as `language` shows it (`<玩家>`).
fn said_shown(shown: &str, language: Language) -> String {
    match spellbridge_core::grammar::PHRASES.iter().find(|(phrase, _)| *phrase == shown) {
        Some((phrase, _)) => spellbridge_core::grammar::phrase(language, phrase),
        None => shown.to_owned(),
    }
}

impl Router {
    pub(super) fn unknown_command(&self, word: &str, game: Option<&str>, language: Language) -> RichText {
        // The lobby's names (not its aliases), and every name and alias of the game (or of
        // every game, when no table is in question).
        let mut names: Vec<&str> = self.grammar.commands(LOBBY).iter().map(|c| c.name).collect();
        names.extend(self.grammar.words(|owner| owner != LOBBY && game.is_none_or(|name| owner == name)));
        // A word typed in Latin letters is guessed among the Latin names, a Chinese one
        // among the Chinese (`!foo` never suggests `!血魔法`).
        names.retain(|name| name.is_ascii() == word.is_ascii());
        let prefix = &self.options.prefix;
        let args = Args::new().text("command", format!("{prefix}{word}"));
        // A guess shares most of its letters with what was typed (`!foo` is not `!top`).
        let plausible = |guess: &&str| {
            let typed = word.to_lowercase();
            2 * guess.chars().filter(|c| typed.contains(*c)).count() > guess.chars().count()
        };
        match words::nearest(word, names).filter(plausible) {
            Some(guess) => {
                said(language, "lobby-unknown-guess", args.text("guess", format!("{prefix}{guess}")))
            }
            None => said(language, "lobby-unknown", args),
        }
    }

    pub(super) fn games(&self, language: Language) -> RichText {
        let games = self
            .registry
            .iter()
            .map(|game| {
                let args = Args::new()
                    .rich("game", RichText::new().bold(game.name_in(language)))
                    .text("summary", game.summary_in(language));
                said(language, "lobby-games-entry", args)
            })
            .collect();
        let args = Args::new()
            .rich("games", joined(language, "lobby-games-separator", games))
            .rich("ways", self.ways_to_start(true, language));
        said(language, "lobby-games", args)
    }

    /// How each game starts, from the registry: `!new thaum` for a game opened with
    /// `!new`, `!duel <player> [wizard]` for one taken by challenge (`!duel <player>`
    /// without its choices unless `choices`), joined by commas and `or`.
    pub(super) fn ways_to_start(&self, choices: bool, language: Language) -> RichText {
        let ways: Vec<RichText> = self
            .registry
            .iter()
            .map(|game| match game.challenge() {
                Some(challenge) => {
                    let word = self.lobby_name(challenge.word, language);
                    let shown = challenge.usage.split_whitespace().take(if choices { usize::MAX } else { 1 });
                    let usage: Vec<String> = shown.map(|shown| said_shown(shown, language)).collect();
                    format!("!{word} {}", usage.join(" ")).trim_end().to_owned()
                }
                None => format!("!{} {}", self.lobby_name("new", language), game.name_in(language)),
            })
            .map(|way| RichText::new().code(way))
            .collect();
        or_list(language, ways)
    }

    /// A lobby command's name in `language` (`new`, `开局`).
    fn lobby_name(&self, name: &str, language: Language) -> String {
        let command = self.grammar.commands(LOBBY).iter().find(|c| c.name == name);
        command.map_or(name, |c| c.name_in(language)).to_owned()
    }

    /// A game's name in `language` (`thaum`, `魔素`).
    pub(super) fn game_name(&self, game: &str, language: Language) -> String {
        self.registry.get(game).map_or_else(|| game.to_owned(), |g| g.name_in(language))
    }

    pub(super) fn help(&self, place: &Place, topic: Option<&str>, language: Language) -> RichText {
        let game = self.active_at(place).map(|i| self.tables[&i].table.game());
        let prefix = &self.options.prefix;
        if let Some(topic) = topic {
            let found = self.grammar.find(topic);
            if found.is_empty() {
                return self.unknown_command(topic, None, language);
            }
            let explained = found
                .iter()
                .map(|(owner, c)| {
                    // The summary's `code` is code here too (and takes the configured prefix).
                    let summary = if *owner == LOBBY {
                        lobby_summary(c.name).map(|id| said(language, id, Args::new()))
                    } else {
                        self.registry.get(owner).and_then(|g| g.help_in(c.name, language)).map(RichText::from)
                    };
                    let usage = c.usage_line_in(prefix, language);
                    let args = Args::new()
                        .text("usage", usage)
                        .rich("summary", summary.unwrap_or_else(|| RichText::from(c.summary)));
                    said(language, "lobby-help-topic", args)
                })
                .collect();
            return joined(language, "lobby-help-topic-separator", explained);
        }
        // English lists each command by its name (CONTRACT.md's list); Chinese by its
        // Chinese name.
        let list = |commands: &[spellbridge_core::Command]| {
            commands
                .iter()
                .filter(|c| language != Language::En || !UNLISTED.contains(&c.name))
                .map(|c| format!("{prefix}{}", c.name_in(language)))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let commands = list(self.grammar.commands(LOBBY));
        match game {
            Some(game) => said(
                language,
                "lobby-help-at-table",
                Args::new()
                    .text("commands", commands)
                    .text("game", self.game_name(game, language))
                    .text("table", list(self.grammar.commands(game))),
            ),
            None => said(language, "lobby-help", Args::new().text("commands", commands)),
        }
    }
}
