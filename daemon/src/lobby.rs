//! The daemon's own commands (CONTRACT.md "Daemon-level"): parsed into [`LobbyCommand`]
//! before any table sees the message. Each command's help text is declared once, in
//! [`LOBBY_COMMANDS`].

use spellbridge_core::words;
use spellbridge_core::{CommandHelp, PlayerArgument};

/// A command for the daemon rather than for a table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LobbyCommand {
    /// `!help [command]`
    Help(Option<String>),
    /// `!games`
    Games,
    /// `!new <game>`
    New(String),
    /// `!duel <player> [wizard]`
    Duel {
        /// Who is challenged.
        opponent: String,
        /// The challenger's wizard.
        wizard: Option<String>,
    },
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
}

impl LobbyCommand {
    /// True for the commands that only ask (help, the lists): answered, nothing changes.
    pub fn is_query(&self) -> bool {
        matches!(
            self,
            LobbyCommand::Help(_) | LobbyCommand::Games | LobbyCommand::Wizards | LobbyCommand::Ignore(None)
        )
    }
}

/// Help for every lobby command, in the order `!help` lists them.
pub const LOBBY_COMMANDS: &[CommandHelp] = &[
    CommandHelp {
        name: "help",
        aliases: &[],
        usage: "[command]",
        summary: "Lists the commands, or explains one.",
        players: &[],
    },
    CommandHelp {
        name: "games",
        aliases: &[],
        usage: "",
        summary: "Lists the games you can play.",
        players: &[],
    },
    CommandHelp {
        name: "new",
        aliases: &[],
        usage: "<game>",
        summary: "Opens a table of that game in this room; you become its game master (`!new thaum`).",
        players: &[],
    },
    CommandHelp {
        name: "duel",
        aliases: &[],
        usage: "<player> [wizard]",
        summary: "Challenges a player to a Duel in this room.",
        players: &[PlayerArgument::Known(0)],
    },
    CommandHelp {
        name: "accept",
        aliases: &[],
        usage: "[wizard]",
        summary: "Accepts the Duel you were challenged to.",
        players: &[],
    },
    CommandHelp {
        name: "decline",
        aliases: &[],
        usage: "",
        summary: "Declines a challenge (or withdraws your own).",
        players: &[],
    },
    CommandHelp {
        name: "withdraw",
        aliases: &[],
        usage: "",
        summary: "Withdraws the challenge you made in this room; a game master or room operator clears \
                  anyone's (so does `!stop`). A challenge also expires by itself (after ten minutes \
                  unless the operator set `[duel] challenge_lifetime`).",
        players: &[],
    },
    CommandHelp {
        name: "wizards",
        aliases: &[],
        usage: "",
        summary: "Lists the Duel wizards and their element pools.",
        players: &[],
    },
    CommandHelp {
        name: "link",
        aliases: &[],
        usage: "[code]",
        summary: "Links your identities on two networks into one player: `!link` gives a code privately; \
                  send `!link <code>` to the bot privately from the other network.",
        players: &[],
    },
    CommandHelp {
        name: "unlink",
        aliases: &[],
        usage: "",
        summary: "Separates the identities you linked.",
        players: &[],
    },
    CommandHelp {
        name: "ignore",
        aliases: &[],
        usage: "[player]",
        summary: "Bot admins: drop a player's commands and chat (told once); alone, lists who is ignored.",
        players: &[PlayerArgument::Known(0)],
    },
    CommandHelp {
        name: "unignore",
        aliases: &[],
        usage: "<player>",
        summary: "Bot admins: take an ignored player's commands and chat again.",
        players: &[PlayerArgument::Known(0)],
    },
];

/// Why a lobby command could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct LobbyError(pub String);

/// Reads a lobby command; `Ok(None)` when the first word is not one.
pub fn parse(command: &str) -> Result<Option<LobbyCommand>, LobbyError> {
    let (head, args) = words::split(command);
    let usage = |name: &str| -> LobbyError {
        let help = LOBBY_COMMANDS.iter().find(|c| c.name == name);
        let usage = help.map(|c| c.usage).unwrap_or_default();
        let typed = format!("!{name} {usage}");
        LobbyError(format!("type `{}`.", typed.trim_end()))
    };
    let at_most = |n: usize, name: &str| -> Result<(), LobbyError> {
        if args.len() > n {
            let extra = args[n..].join(" ");
            let LobbyError(hint) = usage(name);
            return Err(LobbyError(format!("`!{name}` does not take `{extra}`: {hint}")));
        }
        Ok(())
    };
    let optional = |i: usize| args.get(i).map(|s| (*s).to_owned());
    let command = match head.as_str() {
        "help" | "commands" => {
            at_most(1, "help")?;
            LobbyCommand::Help(optional(0).map(|c| c.trim_start_matches('!').to_lowercase()))
        }
        "games" => {
            at_most(0, "games")?;
            LobbyCommand::Games
        }
        "new" => {
            at_most(1, "new")?;
            let Some(game) = optional(0) else {
                return Err(LobbyError(
                    "`!new` needs a game: type `!new thaum` (for a Duel, `!duel <player>`).".into(),
                ));
            };
            LobbyCommand::New(game.to_lowercase())
        }
        "duel" | "challenge" => {
            at_most(2, "duel")?;
            let Some(opponent) = optional(0) else {
                return Err(LobbyError(
                    "`!duel` needs the player you challenge: type `!duel <player> [wizard]`.".into(),
                ));
            };
            LobbyCommand::Duel { opponent, wizard: optional(1) }
        }
        "accept" => {
            at_most(1, "accept")?;
            LobbyCommand::Accept(optional(0))
        }
        "decline" => {
            at_most(0, "decline")?;
            LobbyCommand::Decline
        }
        "withdraw" => {
            at_most(0, "withdraw")?;
            LobbyCommand::Withdraw
        }
        "wizards" => {
            at_most(0, "wizards")?;
            LobbyCommand::Wizards
        }
        "link" => {
            at_most(1, "link")?;
            LobbyCommand::Link(optional(0))
        }
        "unlink" => {
            at_most(0, "unlink")?;
            LobbyCommand::Unlink
        }
        "ignore" => {
            at_most(1, "ignore")?;
            LobbyCommand::Ignore(optional(0))
        }
        "unignore" => {
            at_most(1, "unignore")?;
            let Some(player) = optional(0) else {
                return Err(LobbyError("`!unignore` needs the player: type `!unignore <player>`.".into()));
            };
            LobbyCommand::Unignore(player)
        }
        _ => return Ok(None),
    };
    Ok(Some(command))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lobby_commands_parse_case_insensitively() {
        assert_eq!(parse("NEW Thaum"), Ok(Some(LobbyCommand::New("thaum".into()))));
        assert_eq!(
            parse("duel bob Pyromancer"),
            Ok(Some(LobbyCommand::Duel { opponent: "bob".into(), wizard: Some("Pyromancer".into()) }))
        );
        assert_eq!(parse("help !gather"), Ok(Some(LobbyCommand::Help(Some("gather".into())))));
        assert_eq!(parse("gather 1 fire"), Ok(None));
    }

    #[test]
    fn missing_and_extra_arguments_say_what_to_type() {
        let missing = parse("duel").expect_err("a player is needed");
        assert!(missing.0.contains("!duel <player>"), "{missing}");
        let extra = parse("games now please").expect_err("no arguments");
        assert!(extra.0.contains("does not take `now please`"), "{extra}");
    }
}
