//! `!help`, `!games`, and the answer to a command nobody knows: all made from the
//! commands' declarations (the router's one [`Grammar`](spellbridge_core::Grammar)), with
//! the configured prefix, in the language of where they are asked (`!帮助` lists the
//! commands by their Chinese names). `!help` says a line per group: the lobby's commands
//! (a bot admin's only to those who may use them), then each game's table commands (the
//! room's game once a table is open), those typed privately and those for game masters
//! apart, so `!cast` and `!status` are known before any table exists.

use spellbridge_core::grammar::Who;
use spellbridge_core::locale::{self, Args};

use super::said::{joined, lobby_summary, or_list, said};
use super::*;

/// One argument of a usage line (`<player>`) as `language` shows it (`<玩家>`).
fn said_shown(shown: &str, language: Language) -> String {
    match spellbridge_core::grammar::PHRASES.iter().find(|(phrase, _)| *phrase == shown) {
        Some((phrase, _)) => spellbridge_core::grammar::phrase(language, phrase),
        None => shown.to_owned(),
    }
}

impl Router {
    /// The answer to `word`, which no command of the lobby or of `table` (none: of any
    /// game) is called: a guess among those commands when one is close.
    pub(super) fn unknown_command(&self, word: &str, table: Option<TableId>, language: Language) -> RichText {
        // The lobby's names (not its aliases), and every name and alias of the table's
        // build (or of every game, when no table is in question).
        let mut names: Vec<&str> = self.grammar.commands(LOBBY).map(|c| c.name).collect();
        match table.map(|table| &self.tables[&table]) {
            Some(Seating { build: Some(build), .. }) => names.extend(
                build
                    .0
                    .commands()
                    .iter()
                    .flat_map(|c| std::iter::once(c.name).chain(c.aliases.iter().copied())),
            ),
            Some(seating) => names.extend(self.grammar.words(|owner| owner == seating.table.game())),
            None => names.extend(self.grammar.words(|owner| owner != LOBBY)),
        }
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
            .map(|game| match game.challenge_command() {
                Some(challenge) => {
                    let word = challenge.name_in(language);
                    let shown = challenge.args.iter().map(|arg| arg.shown).filter(|shown| !shown.is_empty());
                    let shown = shown.take(if choices { usize::MAX } else { 1 });
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
    pub(super) fn lobby_name(&self, name: &str, language: Language) -> String {
        let command = self.grammar.commands(LOBBY).find(|c| c.name == name);
        command.map_or(name, |c| c.name_in(language)).to_owned()
    }

    /// Game `name` as it is played at `place`: the build of the room's table when that
    /// plays `name` (the build it opened with, after a reload: [`Router::game_of`]), else
    /// the registry's.
    fn game_at(&self, place: &Place, name: &str) -> Option<&dyn GamePlugin> {
        let here = self.active_at(place).map(|id| &self.tables[&id]).filter(|s| s.table.game() == name);
        here.and_then(|seating| self.game_of(seating)).or_else(|| self.registry.get(name))
    }

    /// Every owner's command `topic` names, as played at `place`: the room's table's by
    /// the build it plays (an older build's words, after a reload: [`Seating::build`]),
    /// every other owner's by the registry.
    fn topic_at(
        &self,
        place: &Place,
        topic: &str,
    ) -> Vec<(&'static str, &'static spellbridge_core::Command)> {
        let here = self.active_at(place).map(|id| &self.tables[&id]).filter(|s| s.build.is_some());
        let registry = self.grammar.find(topic).iter().copied();
        let mut found: Vec<_> =
            registry.filter(|(owner, _)| here.is_none_or(|s| *owner != s.table.game())).collect();
        if let Some(seating) = here {
            let word = spellbridge_core::grammar::command_word(topic);
            let built =
                seating.build.as_ref().and_then(|build| super::reader::named(build.0.commands(), &word));
            found.extend(built.map(|command| (seating.table.game(), command)));
        }
        found
    }

    /// A game's name in `language` (`thaum`, `魔素`).
    pub(super) fn game_name(&self, game: &str, language: Language) -> String {
        self.registry.get(game).map_or_else(|| game.to_owned(), |g| g.name_in(language))
    }

    pub(super) fn help(
        &self,
        place: &Place,
        topic: Option<&str>,
        role: Role,
        language: Language,
    ) -> RichText {
        let game = self.active_at(place).map(|i| self.tables[&i].table.game());
        let prefix = &self.options.prefix;
        if let Some(topic) = topic {
            let found = self.topic_at(place, topic);
            if found.is_empty() {
                return self.unknown_command(topic, None, language);
            }
            let explained = found
                .iter()
                .map(|(owner, c)| {
                    // The summary's `code` is code here too (and takes the configured prefix).
                    let summary = if *owner == LOBBY {
                        lobby_summary(c.name).map(|id| said(language, id, Args::new())).or_else(|| {
                            let game = crate::lobby::game_of(&self.registry, c.name)?;
                            game.help_in(c.name, language).map(RichText::from)
                        })
                    } else {
                        let game = self.game_at(place, owner);
                        game.and_then(|g| g.help_in(c.name, language)).map(RichText::from)
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
        // Each group on a line of its own: the lobby's, then the table's game (with no
        // table, every game's), each command by its name in `language`; a bot admin's
        // commands only for those who may use them.
        let names = |commands: &mut dyn Iterator<Item = &spellbridge_core::Command>| {
            commands.map(|c| format!("{prefix}{}", c.name_in(language))).collect::<Vec<_>>().join(" ")
        };
        let lobby = names(
            &mut self.grammar.commands(LOBBY).filter(|c| c.who != Who::Admin || role == Role::GameMaster),
        );
        let mut lines = vec![said(language, "lobby-help", Args::new().text("commands", lobby))];
        let games: Vec<&str> = match game {
            Some(game) => vec![game],
            None => self.registry.iter().map(|g| g.name()).collect(),
        };
        for name in games {
            let commands: Vec<&spellbridge_core::Command> = match game {
                // The table's own build's commands (an older build's, after a reload).
                Some(_) => {
                    self.game_at(place, name).map(|g| g.commands().iter().collect()).unwrap_or_default()
                }
                None => self.grammar.commands(name).collect(),
            };
            let mut table =
                names(&mut commands.iter().copied().filter(|c| c.who == Who::Anyone && !c.private));
            let private = names(&mut commands.iter().copied().filter(|c| c.private));
            if !private.is_empty() {
                table = locale::text(
                    language,
                    "lobby-help-private",
                    &Args::new().text("commands", table).text("private", private),
                );
            }
            let masters = names(&mut commands.iter().copied().filter(|c| c.who != Who::Anyone));
            if !masters.is_empty() {
                table = locale::text(
                    language,
                    "lobby-help-masters",
                    &Args::new().text("commands", table).text("masters", masters),
                );
            }
            let id = if game.is_some() { "lobby-help-at-table" } else { "lobby-help-game" };
            let args = Args::new().text("game", self.game_name(name, language)).text("table", table);
            lines.push(said(language, id, args));
        }
        lines.push(said(language, "lobby-help-explain", Args::new()));
        joined_lines(lines)
    }
}

/// `lines`, one after another, each on a line of its own.
fn joined_lines(lines: Vec<RichText>) -> RichText {
    lines.into_iter().enumerate().fold(RichText::new(), |text, (i, line)| {
        if i == 0 { text.append(line) } else { text.text("\n").append(line) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Timestamp = Timestamp::CONSOLE_EPOCH;

    fn said(router: &mut Router, text: &str) -> String {
        let inbound =
            Inbound::new(NetworkId::new("console"), RoomId::new("console"), PlayerId::new("alice"), text);
        router.handle(&inbound, T).iter().map(|o| o.message.text.plain()).collect::<Vec<_>>().join("\n")
    }

    #[test]
    fn help_lists_every_command_before_any_table_grouped() {
        let mut router = Router::new(Registry::standard(), RouterConfig::default());
        let help = said(&mut router, "!help");
        let lines: Vec<&str> = help.lines().collect();
        // The lobby's line, one per game, and how to learn more.
        assert!(lines.len() <= 2 + Registry::standard().iter().count(), "{help}");
        assert!(
            lines[0].contains("!lang") && lines[0].contains("!rules") && lines[0].contains("!duel"),
            "{help}"
        );
        assert!(!lines[0].contains("!ignore"), "a bot admin's commands only for admins: {help}");
        let duel = lines.iter().find(|l| l.contains("duel table")).expect("the Duel's line");
        assert!(duel.contains("!status") && duel.contains("privately to the bot: !cast"), "{duel}");
        assert!(help.contains("At a thaum table: !join !gather"), "{help}");
        let chinese = said(&mut router, "!帮助");
        assert!(
            chinese.contains("!语言") && chinese.contains("!规则") && chinese.contains("私信机器人：!施法"),
            "{chinese}"
        );
        // At a table: its game's only.
        said(&mut router, "!new thaum");
        let at_table = said(&mut router, "!help");
        assert!(at_table.contains("At this room's thaum table: !join"), "{at_table}");
        assert!(!at_table.contains("!cast"), "{at_table}");
    }

    #[test]
    fn help_cast_teaches_the_order_rule_before_it_is_broken() {
        let mut router = Router::new(Registry::standard(), RouterConfig::default());
        let cast = said(&mut router, "!help cast");
        assert!(cast.contains("may not directly follow a neighbour") && cast.contains("RULES D-3"), "{cast}");
        assert!(cast.contains("surge focus overspeed counter") && cast.contains("then end."), "{cast}");
        let chinese = said(&mut router, "!帮助 施法");
        assert!(chinese.contains("不能紧接着唤起") && chinese.contains("规则 D-3"), "{chinese}");
    }
}
