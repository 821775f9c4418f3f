//! The daemon's own commands (CONTRACT.md "Daemon-level"), declared once in
//! [`LOBBY_COMMANDS`] on the same grammar as the games' (their arguments, help and
//! refusals), and read into [`LobbyCommand`] before any table sees the message. A game
//! brings its own lobby commands through the registry (its challenge, `!duel`, and its
//! questions, `!wizards`: [`GamePlugin::challenge_command`], [`GamePlugin::lobby_commands`]);
//! [`add`] puts them among the lobby's, so the lobby names no game.

use spellbridge_core::grammar::{Arg, Command, Grammar, Kind, Parsed, PlayerArgument, Query, Value, Who};
use spellbridge_core::{GamePlugin, Registry};

/// A command for the daemon rather than for a table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LobbyCommand {
    /// `!help [command]`
    Help(Option<String>),
    /// `!games`
    Games,
    /// `!new <game>`
    New(String),
    /// A game's challenge (`!duel <player> [wizard]`): the game, and the words after the
    /// command, a player's name (a display name may have several) and perhaps the
    /// challenger's choice last; the router tells them apart by who is there.
    Challenge {
        /// The game challenged to (its [`GamePlugin::name`]).
        game: &'static str,
        /// The words after the command, as typed.
        words: Vec<String>,
    },
    /// `!accept [choice]`: takes the challenge given, with the choice the game asks (a
    /// Duel wizard).
    Accept(Option<String>),
    /// `!decline`
    Decline,
    /// `!withdraw`: the challenger takes their challenge back; a game master or room
    /// operator clears anyone's.
    Withdraw,
    /// A question a game answers in the lobby (`!wizards`): the game, and the command.
    Asked {
        /// The game that answers (its [`GamePlugin::name`]).
        game: &'static str,
        /// The command's name.
        command: &'static str,
    },
    /// `!link [code]`
    Link(Option<String>),
    /// `!unlink`
    Unlink,
    /// `!ignore [player]`: a bot admin drops a player's commands and chat (no player: the
    /// list).
    Ignore(Option<String>),
    /// `!unignore <player>`
    Unignore(String),
    /// `!board`: the table's picture (in Matrix rooms), or where to see it.
    Board,
    /// `!stats [player]`: a player's record (no player: the asker's).
    Stats(Option<String>),
    /// `!top [game]`: the ten best of a game, as typed (none: the first rated game's).
    Top(Option<String>),
    /// `!lang [en|zh]`: the language of this room (its operators and game masters) or,
    /// privately, of the sender's private messages; alone, which one and how to change it.
    Lang(Option<String>),
    /// `!rules [id]`: the rule ids of this room's game, or what one rule says.
    Rules(Option<String>),
}

const WORD: Kind = Kind::Word;
const KNOWN: Kind = Kind::Player(PlayerArgument::Known);

/// Every lobby command of the daemon's own, declared once (arguments, help, who may use
/// it), in the order `!help` lists them (the games' between them: [`add`]), each with its
/// Chinese name among its aliases (the first alias written in Han characters:
/// `locales/GLOSSARY.md`). The lobby's players are named as typed: each command resolves
/// its own (a challenge, say, names someone heard already).
pub const LOBBY_COMMANDS: &[Command] = &[
    Command::new("help", "Lists the commands, or explains one.")
        .aliases(&["commands", "帮助", "命令"])
        .args(&[Arg::new(WORD, "[command]").optional()], "at most a command")
        .query(Query::Yes)
        .lobby(),
    Command::new("games", "Lists the games you can play.").aliases(&["游戏"]).query(Query::Yes).lobby(),
    Command::new(
        "new",
        "Opens a table of that game in this room; you become its game master (`!new thaum`).",
    )
    .aliases(&["开局"])
    .args(&[Arg::new(WORD, "<game>")], "a game")
    .lobby(),
    Command::new("accept", "Accepts the challenge you were given.")
        .aliases(&["接受"])
        .args(&[Arg::new(WORD, "[wizard]").optional()], "at most a wizard")
        .lobby(),
    Command::new("decline", "Declines a challenge (or withdraws your own).").aliases(&["拒绝"]).lobby(),
    Command::new(
        "withdraw",
        "Withdraws the challenge you made in this room; a game master or room operator clears \
         anyone's (so does `!stop`). A challenge also expires by itself (after ten minutes \
         unless the operator set the game's `challenge_lifetime`).",
    )
    .aliases(&["撤回"])
    .lobby(),
    Command::new(
        "link",
        "Links your identities on two networks into one player: `!link` gives a code privately; \
         send `!link <code>` to the bot privately from the other network.",
    )
    .aliases(&["绑定"])
    .args(&[Arg::new(WORD, "[code]").optional()], "at most a code")
    .lobby(),
    Command::new("unlink", "Separates the identities you linked.").aliases(&["解绑"]).lobby(),
    Command::new(
        "ignore",
        "Bot admins: drop a player's commands and chat (told once); alone, lists who is ignored.",
    )
    .aliases(&["屏蔽"])
    .args(&[Arg::new(KNOWN, "[player]").optional()], "at most a player")
    .query(Query::Unless(&[]))
    .who(Who::Admin)
    .lobby(),
    Command::new("unignore", "Bot admins: take an ignored player's commands and chat again.")
        .aliases(&["取消屏蔽"])
        .args(&[Arg::new(KNOWN, "<player>")], "the player")
        .who(Who::Admin)
        .lobby(),
    Command::new(
        "board",
        "Shows the picture of this room's table in its Matrix rooms (elsewhere, says where to see it).",
    )
    .aliases(&["棋盘"])
    .query(Query::Yes)
    .lobby(),
    Command::new(
        "stats",
        "A player's record in each game they played: games, wins, rating and what the game \
         keeps besides (alone: yours).",
    )
    .aliases(&["战绩"])
    .args(&[Arg::new(KNOWN, "[player]").optional()], "at most a player")
    .query(Query::Yes)
    .lobby(),
    Command::new("top", "The ten best: Duel players by rating (`!top duel`, the default) or Thaum players by their seasons' coins (`!top thaum`). Only rated games count, and a player is listed once they have 3: a Duel against a guest (not logged in where the network has accounts) or conceded within a minute of its start, and a Thaum season with one player or won with coins a game master gave, are unrated (`!stats` shows them as such).")
        .aliases(&["排行"])
        .args(&[Arg::new(WORD, "[game]").optional()], "at most a game")
        .query(Query::Yes)
        .lobby(),
    Command::new(
        "lang",
        "Says which language this room (or, privately, your private messages) is told in; \
         `!lang zh` or `!lang en` changes it (in a room, for its operators and game masters).",
    )
    .aliases(&["language", "语言"])
    .args(&[Arg::new(WORD, "[en|zh]").optional()], "at most a language")
    .query(Query::Unless(&[]))
    .lobby(),
    Command::new(
        "rules",
        "The rule ids of this room's game (RULES.md's fixed points, cited as `(RULES D-10)`); \
         `!rules D-10` says what one rule says.",
    )
    .aliases(&["rule", "规则"])
    .args(&[Arg::new(WORD, "[id]").optional()], "at most a rule id")
    .query(Query::Yes)
    .lobby(),
];

/// The name the lobby's commands are kept under in the router's [`Grammar`](spellbridge_core::Grammar).
pub const LOBBY: &str = "lobby";

/// How many of [`LOBBY_COMMANDS`] come before the games' challenges (`!help !games !new`,
/// then `!duel`), and before the games' questions (… `!withdraw`, then `!wizards`).
const BEFORE_CHALLENGES: usize = 3;
const BEFORE_QUESTIONS: usize = 6;

/// Adds the lobby's commands to `grammar`, under [`LOBBY`], with each game's challenge
/// and questions among them (from the registry), in the order `!help` lists them.
pub fn add(grammar: &mut Grammar, registry: &Registry) {
    let (opening, rest) = LOBBY_COMMANDS.split_at(BEFORE_CHALLENGES);
    let (answers, rest) = rest.split_at(BEFORE_QUESTIONS - BEFORE_CHALLENGES);
    grammar.add(LOBBY, opening);
    for challenge in registry.iter().filter_map(|game| game.challenge_command()) {
        grammar.add(LOBBY, std::slice::from_ref(challenge));
    }
    grammar.add(LOBBY, answers);
    for game in registry.iter() {
        grammar.add(LOBBY, game.lobby_commands());
    }
    grammar.add(LOBBY, rest);
}

/// The game a lobby command named `command` belongs to (its challenge or one of its
/// questions), if a game's it is.
pub fn game_of<'a>(registry: &'a Registry, command: &str) -> Option<&'a dyn GamePlugin> {
    registry.iter().find(|game| {
        game.challenge_command().is_some_and(|c| c.name == command)
            || game.lobby_commands().iter().any(|c| c.name == command)
    })
}

impl LobbyCommand {
    /// The command the grammar read, as the lobby's type (`None`: not a lobby command);
    /// a game's lobby command is found in `registry`.
    pub fn from_parsed(parsed: &Parsed, registry: &Registry) -> Option<LobbyCommand> {
        let word = |i: usize| match parsed.value(i) {
            Some(Value::Word(w)) => Some(w.clone()),
            Some(Value::Player(_, p)) => Some(p.as_str().to_owned()),
            _ => None,
        };
        Some(match parsed.name() {
            "help" => LobbyCommand::Help(word(0).map(|c| c.trim_start_matches('!').to_lowercase())),
            "games" => LobbyCommand::Games,
            "new" => LobbyCommand::New(word(0)?.to_lowercase()),
            "accept" => LobbyCommand::Accept(word(0)),
            "decline" => LobbyCommand::Decline,
            "withdraw" => LobbyCommand::Withdraw,
            "link" => LobbyCommand::Link(word(0)),
            "unlink" => LobbyCommand::Unlink,
            "ignore" => LobbyCommand::Ignore(word(0)),
            "unignore" => LobbyCommand::Unignore(word(0)?),
            "board" => LobbyCommand::Board,
            "stats" => LobbyCommand::Stats(word(0)),
            "top" => LobbyCommand::Top(word(0)),
            "lang" => LobbyCommand::Lang(word(0)),
            "rules" => LobbyCommand::Rules(word(0)),
            name => {
                let game = game_of(registry, name)?;
                if game.challenge_command().is_some_and(|c| c.name == name) {
                    LobbyCommand::Challenge { game: game.name(), words: parsed.typed_from(0).to_vec() }
                } else {
                    LobbyCommand::Asked { game: game.name(), command: parsed.command().name }
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use spellbridge_core::grammar::{self, ReadError};

    use super::*;

    /// Reads a lobby command (without the prefix) as the router's grammar does, with the
    /// standard games' lobby commands; `Ok(None)` when the first word is not one, `Err`
    /// the grammar's refusal.
    fn parse(command: &str) -> Result<Option<LobbyCommand>, String> {
        let registry = Registry::standard();
        let mut grammar = Grammar::new();
        add(&mut grammar, &registry);
        let words: Vec<&str> = command.split_whitespace().collect();
        let head = words.first().copied().unwrap_or_default();
        let Some(spec) = grammar.find_in(LOBBY, head) else {
            return Ok(None);
        };
        match grammar::parse(spec, &words) {
            Err(error) => Err(ReadError::Bad(error).to_string()),
            Ok(parsed) => Ok(LobbyCommand::from_parsed(&parsed, &registry)),
        }
    }

    fn challenge(words: &[&str]) -> LobbyCommand {
        LobbyCommand::Challenge { game: "duel", words: words.iter().map(|w| (*w).to_owned()).collect() }
    }

    #[test]
    fn lobby_commands_parse_case_insensitively() {
        assert_eq!(parse("NEW Thaum"), Ok(Some(LobbyCommand::New("thaum".into()))));
        assert_eq!(parse("duel bob Pyromancer"), Ok(Some(challenge(&["bob", "Pyromancer"]))));
        assert_eq!(parse("WIZARDS"), Ok(Some(LobbyCommand::Asked { game: "duel", command: "wizards" })));
        assert_eq!(parse("help !gather"), Ok(Some(LobbyCommand::Help(Some("gather".into())))));
        assert_eq!(parse("gather 1 fire"), Ok(None));
        assert_eq!(parse("top"), Ok(Some(LobbyCommand::Top(None))));
        assert_eq!(parse("TOP Thaum"), Ok(Some(LobbyCommand::Top(Some("Thaum".into())))));
        assert_eq!(parse("stats"), Ok(Some(LobbyCommand::Stats(None))));
        assert_eq!(parse("stats bob"), Ok(Some(LobbyCommand::Stats(Some("bob".into())))));
        assert_eq!(parse("board"), Ok(Some(LobbyCommand::Board)));
    }

    #[test]
    fn a_leaderboard_is_named_by_its_game_and_the_rest_of_a_stats_line_is_the_player() {
        // The game is looked up in the registry by the router (`records`), which says
        // which leaderboards there are when none matches.
        assert_eq!(parse("top chess"), Ok(Some(LobbyCommand::Top(Some("chess".into())))));
        let extra = parse("top duel thaum").expect_err("one game at most");
        assert!(extra.contains("!top [game]"), "{extra}");
        // A player named last is the rest of the line (display names have spaces).
        assert_eq!(parse("stats Piet Silent"), Ok(Some(LobbyCommand::Stats(Some("Piet Silent".into())))));
    }

    #[test]
    fn missing_and_extra_arguments_say_what_to_type() {
        let missing = parse("duel").expect_err("a player is needed");
        assert!(missing.contains("!duel <player>"), "{missing}");
        let extra = parse("games now please").expect_err("no arguments");
        assert!(extra.contains("does not take `now please`"), "{extra}");
    }

    /// Issue 19: every command of the lobby and of both games has a Chinese name, and no
    /// word (English or Chinese) names a lobby command and a game's.
    #[test]
    fn every_command_has_a_chinese_name_and_no_word_is_two_commands() {
        use spellbridge_core::Language;
        let registry = Registry::standard();
        let mut grammar = Grammar::new();
        add(&mut grammar, &registry);
        let words = |commands: &'static [Command]| -> Vec<&'static str> {
            commands.iter().flat_map(|c| std::iter::once(c.name).chain(c.aliases.iter().copied())).collect()
        };
        // The lobby's own commands and the games' lobby commands, each word once.
        let lobby: Vec<&str> = grammar.words(|owner| owner == LOBBY).collect();
        let mut once = lobby.clone();
        once.sort_unstable();
        once.dedup();
        assert_eq!(once.len(), lobby.len(), "a lobby word names two commands: {lobby:?}");
        for game in registry.iter() {
            for command in grammar.commands(LOBBY).chain(game.commands()) {
                assert_ne!(
                    command.name_in(Language::ZhCn),
                    command.name,
                    "{} has no Chinese name",
                    command.name
                );
            }
            for word in words(game.commands()) {
                assert!(!lobby.contains(&word), "`{word}` is a lobby command and a {} one", game.name());
            }
        }
        assert_eq!(parse("决斗 bob"), Ok(Some(challenge(&["bob"]))));
        assert_eq!(parse("接受"), Ok(Some(LobbyCommand::Accept(None))));
        assert_eq!(parse("语言 zh"), Ok(Some(LobbyCommand::Lang(Some("zh".into())))));
        assert_eq!(parse("ｌａｎｇ"), Ok(Some(LobbyCommand::Lang(None))));
    }
}
