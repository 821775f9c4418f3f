//! The daemon's own commands (CONTRACT.md "Daemon-level"), declared once in
//! [`LOBBY_COMMANDS`] on the same grammar as the games' (their arguments, help and
//! refusals), and read into [`LobbyCommand`] before any table sees the message.

use spellbridge_core::grammar::{
    self, Arg, Command, Kind, Parsed, PlayerArgument, Query, ReadError, Value, Who,
};

/// A command for the daemon rather than for a table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LobbyCommand {
    /// `!help [command]`
    Help(Option<String>),
    /// `!games`
    Games,
    /// `!new <game>`
    New(String),
    /// `!duel <player> [wizard]`: the words after the command, a player's name (a display
    /// name may have several) and perhaps the challenger's wizard last; the router tells
    /// them apart by who is there.
    Duel(Vec<String>),
    /// `!accept [wizard]`
    Accept(Option<String>),
    /// `!decline`
    Decline,
    /// `!withdraw`: the challenger takes their challenge back; a game master or room
    /// operator clears anyone's.
    Withdraw,
    /// `!wizards`
    Wizards,
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
    /// `!top [game]`: the ten best of a game, as typed (none: the first challenge game's).
    Top(Option<String>),
    /// `!lang [en|zh]`: the language of this room (its operators and game masters) or,
    /// privately, of the sender's private messages; alone, which one and how to change it.
    Lang(Option<String>),
    /// `!rules [id]`: the rule ids of this room's game, or what one rule says.
    Rules(Option<String>),
}

const WORD: Kind = Kind::Word;
const KNOWN: Kind = Kind::Player(PlayerArgument::Known);

/// Every lobby command, declared once (arguments, help, who may use it), in the order
/// `!help` lists them, each with its Chinese name among its aliases (the first alias
/// written in Han characters: `locales/GLOSSARY.md`). The lobby's players are named as
/// typed: each command resolves its own (a challenge, say, names someone heard already).
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
    .hint("type `!new thaum` (for a Duel, `!duel <player>`).")
    .lobby(),
    Command::new("duel", "Challenges a player to a Duel in this room.")
        .aliases(&["challenge", "决斗", "挑战"])
        .args(
            // The player's name may have several words (a display name), then perhaps
            // the wizard: the router tells them apart (the wizard is never read here).
            &[Arg::new(Kind::Rest, "<player>"), Arg::new(WORD, "[wizard]").optional()],
            "the player you challenge",
        )
        .lobby(),
    Command::new("accept", "Accepts the Duel you were challenged to.")
        .aliases(&["接受"])
        .args(&[Arg::new(WORD, "[wizard]").optional()], "at most a wizard")
        .lobby(),
    Command::new("decline", "Declines a challenge (or withdraws your own).").aliases(&["拒绝"]).lobby(),
    Command::new(
        "withdraw",
        "Withdraws the challenge you made in this room; a game master or room operator clears \
         anyone's (so does `!stop`). A challenge also expires by itself (after ten minutes \
         unless the operator set `[duel] challenge_lifetime`).",
    )
    .aliases(&["撤回"])
    .lobby(),
    Command::new("wizards", "Lists the Duel wizards and their element pools.")
        .aliases(&["魔法师"])
        .query(Query::Yes)
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
        "A player's record: games, wins, Duel rating, favourite wizard, longest winning streak, \
         Thaum seasons (alone: yours).",
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

/// Why a lobby command could not be read (the grammar's message, with `!`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct LobbyError(pub String);

impl LobbyCommand {
    /// The command the grammar read, as the lobby's type (`None`: not a lobby command).
    pub fn from_parsed(parsed: &Parsed) -> Option<LobbyCommand> {
        let word = |i: usize| match parsed.value(i) {
            Some(Value::Word(w)) => Some(w.clone()),
            Some(Value::Player(_, p)) => Some(p.as_str().to_owned()),
            _ => None,
        };
        Some(match parsed.name() {
            "help" => LobbyCommand::Help(word(0).map(|c| c.trim_start_matches('!').to_lowercase())),
            "games" => LobbyCommand::Games,
            "new" => LobbyCommand::New(word(0)?.to_lowercase()),
            "duel" => LobbyCommand::Duel(parsed.typed_from(0).to_vec()),
            "accept" => LobbyCommand::Accept(word(0)),
            "decline" => LobbyCommand::Decline,
            "withdraw" => LobbyCommand::Withdraw,
            "wizards" => LobbyCommand::Wizards,
            "link" => LobbyCommand::Link(word(0)),
            "unlink" => LobbyCommand::Unlink,
            "ignore" => LobbyCommand::Ignore(word(0)),
            "unignore" => LobbyCommand::Unignore(word(0)?),
            "board" => LobbyCommand::Board,
            "stats" => LobbyCommand::Stats(word(0)),
            "top" => LobbyCommand::Top(word(0)),
            "lang" => LobbyCommand::Lang(word(0)),
            "rules" => LobbyCommand::Rules(word(0)),
            _ => return None,
        })
    }
}

/// Reads a lobby command (without the prefix) through the grammar; `Ok(None)` when the
/// first word is not one.
pub fn parse(command: &str) -> Result<Option<LobbyCommand>, LobbyError> {
    match grammar::read(LOBBY_COMMANDS, command) {
        Err(ReadError::Unknown(_)) => Ok(None),
        Err(ReadError::Bad(error)) => Err(LobbyError(error.to_string())),
        Ok(parsed) => Ok(LobbyCommand::from_parsed(&parsed)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lobby_commands_parse_case_insensitively() {
        assert_eq!(parse("NEW Thaum"), Ok(Some(LobbyCommand::New("thaum".into()))));
        assert_eq!(
            parse("duel bob Pyromancer"),
            Ok(Some(LobbyCommand::Duel(vec!["bob".into(), "Pyromancer".into()])))
        );
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
        assert!(extra.0.contains("!top [game]"), "{extra}");
        // A player named last is the rest of the line (display names have spaces).
        assert_eq!(parse("stats Piet Silent"), Ok(Some(LobbyCommand::Stats(Some("Piet Silent".into())))));
    }

    #[test]
    fn missing_and_extra_arguments_say_what_to_type() {
        let missing = parse("duel").expect_err("a player is needed");
        assert!(missing.0.contains("!duel <player>"), "{missing}");
        let extra = parse("games now please").expect_err("no arguments");
        assert!(extra.0.contains("does not take `now please`"), "{extra}");
    }

    /// Issue 19: every command of the lobby and of both games has a Chinese name, and no
    /// word (English or Chinese) names a lobby command and a game's.
    #[test]
    fn every_command_has_a_chinese_name_and_no_word_is_two_commands() {
        use spellbridge_core::{Language, Registry};
        let registry = Registry::standard();
        let words = |commands: &'static [Command]| -> Vec<&'static str> {
            commands.iter().flat_map(|c| std::iter::once(c.name).chain(c.aliases.iter().copied())).collect()
        };
        let lobby = words(LOBBY_COMMANDS);
        for game in registry.iter() {
            for command in LOBBY_COMMANDS.iter().chain(game.commands()) {
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
        assert_eq!(parse("决斗 bob"), Ok(Some(LobbyCommand::Duel(vec!["bob".into()]))));
        assert_eq!(parse("接受"), Ok(Some(LobbyCommand::Accept(None))));
        assert_eq!(parse("语言 zh"), Ok(Some(LobbyCommand::Lang(Some("zh".into())))));
        assert_eq!(parse("ｌａｎｇ"), Ok(Some(LobbyCommand::Lang(None))));
    }
}
