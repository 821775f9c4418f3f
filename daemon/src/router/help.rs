//! `!help`, `!games`, and the answer to a command nobody knows: all made from the
//! commands' declarations (the router's one [`Grammar`](spellbridge_core::Grammar)), with
//! the configured prefix.

use spellbridge_core::Language;

use super::*;

/// Lobby commands `!help` does not list in English: its list is fixed by CONTRACT.md and
/// every transcript (issue 19: English output does not change).
const UNLISTED: &[&str] = &["lang"];

impl Router {
    pub(super) fn unknown_command(&self, word: &str, game: Option<&str>) -> RichText {
        // The lobby's names (not its aliases), and every name and alias of the game (or of
        // every game, when no table is in question).
        let mut names: Vec<&str> = self.grammar.commands(LOBBY).iter().map(|c| c.name).collect();
        names.extend(self.grammar.words(|owner| owner != LOBBY && game.is_none_or(|name| owner == name)));
        let prefix = &self.options.prefix;
        let mut text = RichText::new().text("Unknown command ").code(format!("{prefix}{word}")).text(".");
        if let Some(guess) = words::nearest(word, names) {
            text = text.text(" Did you mean ").code(format!("{prefix}{guess}")).text("?");
        }
        text.text(" Type ").code("!help").text(" for the list.")
    }

    pub(super) fn games(&self) -> RichText {
        let mut text = RichText::new().text("Games:");
        for (i, game) in self.registry.iter().enumerate() {
            text = text
                .text(if i == 0 { " " } else { "; " })
                .bold(game.name())
                .text(format!(" — {}", game.summary()));
        }
        self.ways_to_start(text.text(". Start one with "), true).text(".")
    }

    /// `text` followed by how each game starts, from the registry: `!new thaum` for a
    /// game opened with `!new`, `!duel <player> [wizard]` for one taken by challenge
    /// (`!duel <player>` without its choices unless `choices`), joined by commas and `or`.
    pub(super) fn ways_to_start(&self, mut text: RichText, choices: bool) -> RichText {
        let ways: Vec<String> = self
            .registry
            .iter()
            .map(|game| match game.challenge() {
                Some(challenge) if choices => format!("!{} {}", challenge.word, challenge.usage),
                Some(challenge) => {
                    let first = challenge.usage.split_whitespace().next().unwrap_or_default();
                    format!("!{} {first}", challenge.word).trim_end().to_owned()
                }
                None => format!("!new {}", game.name()),
            })
            .collect();
        for (i, way) in ways.iter().enumerate() {
            if i > 0 {
                text = text.text(if i + 1 == ways.len() { " or " } else { ", " });
            }
            text = text.code(way.clone());
        }
        text
    }

    pub(super) fn help(&self, place: &Place, topic: Option<&str>, language: Language) -> RichText {
        let game = self.active_at(place).map(|i| self.tables[&i].table.game());
        if let Some(topic) = topic {
            let found = self.grammar.find(topic);
            if found.is_empty() {
                return self.unknown_command(topic, None);
            }
            let mut text = RichText::new();
            for (i, (_, c)) in found.iter().enumerate() {
                // The summary's `code` is code here too (and takes the configured prefix).
                text = text
                    .text(if i == 0 { "" } else { " | " })
                    .code(c.usage_line(&self.options.prefix))
                    .append(RichText::from(format!(" — {}", c.summary)));
            }
            return text;
        }
        let prefix = &self.options.prefix;
        // English lists each command by its name (CONTRACT.md's list: `!lang`, added
        // since, is explained by `!help lang`); Chinese by its Chinese name.
        let list = |commands: &[spellbridge_core::Command]| {
            commands
                .iter()
                .filter(|c| language != Language::En || !UNLISTED.contains(&c.name))
                .map(|c| format!("{prefix}{}", c.name_in(language)))
                .collect::<Vec<_>>()
                .join(" ")
        };
        if language == Language::ZhCn {
            let mut text = RichText::new().text(format!("命令：{}", list(self.grammar.commands(LOBBY))));
            if let Some(game) = game {
                text = text.text(format!("。本房间的 {game} 桌：{}", list(self.grammar.commands(game))));
            }
            return text.text("。").code("!帮助 <命令>").text(" 解释一条命令。");
        }
        let mut text = RichText::new().text(format!("Commands: {}", list(self.grammar.commands(LOBBY))));
        if let Some(game) = game {
            text = text.text(format!(". At this room's {game} table: {}", list(self.grammar.commands(game))));
        }
        text.text(". ").code("!help <command>").text(" explains one.")
    }
}
