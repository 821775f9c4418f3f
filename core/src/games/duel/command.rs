//! The Duel's commands: declared once, in [`COMMANDS`] (the game's grammar, which the
//! daemon reads every command against), and as this game's type, [`DuelCommand`].

use super::error::DuelError;
use super::token::{Token, read_tokens};
use crate::grammar::{self, Arg, Command, Kind, Parsed, Query, ReadError, Who};

/// A command at a Duel table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DuelCommand {
    /// `!cast <token>…` (privately): append tokens to this round's spell.
    Cast(Vec<Token>),
    /// `!status`: the round, track, pools and seals.
    Status,
    /// `!concede`: give up; the opponent wins.
    Concede,
    /// `!stop`: a room operator, game master or bot admin ends the duel with no winner.
    Stop,
}

/// Every Duel command, declared once (arguments, help, who may use it), in the order help
/// lists them.
pub const COMMANDS: &[Command] = &[
    // The tokens are optional to the grammar: a cast in a room is refused before they are
    // read (so no reply echoes them), and no tokens at all is `DuelError::NoTokens`.
    Command::new(
        "cast",
        "Said to me privately: queues your spell's tokens for this round, one placed per step \
         (`!cast surge fire wind end`): one pre-conditioning (surge focus overspeed counter), \
         then elements (water fire thunder wind earth void), then end. Order: on the circle \
         water–fire–thunder–wind–earth, an element may not directly follow a neighbour (after \
         fire: fire, wind, earth or void), nor void follow void (RULES D-3).",
    )
    .aliases(&["施法"])
    .args(&[Arg::new(Kind::Rest, "<token> [<token> …]").optional()], "at least one token")
    .example("cast surge fire wind end")
    .private(),
    // Words after `status` (a player's name, say) are harmless: there is one duel.
    Command::new(
        "status",
        "Shows the round, the step, the victory track, both pools and the seals; \
         privately, also your own queued spell.",
    )
    .aliases(&["状态"])
    .args(&[Arg::new(Kind::Rest, "").optional()], "nothing after it")
    .query(Query::Yes)
    .example("status"),
    Command::new("concede", "Gives up the duel: your opponent wins.")
        .aliases(&["resign", "surrender", "认输"])
        .example("concede"),
    Command::new(
        "stop",
        "Room operators, game masters and bot admins: ends the duel with no winner \
         (a player gives up with `!concede`).",
    )
    .aliases(&["停止", "中止"])
    .who(Who::GameMasterOrOperator)
    .example("stop"),
];

/// The lobby's command that challenges someone to a Duel (`!duel <player> [wizard]`): the
/// daemon's lobby reads it from the plugin ([`GamePlugin::challenge_command`]), and
/// `!accept [wizard]` takes the challenge.
///
/// [`GamePlugin::challenge_command`]: crate::GamePlugin::challenge_command
pub static CHALLENGE: Command = Command::new("duel", "Challenges a player to a Duel in this room.")
    .aliases(&["challenge", "决斗", "挑战"])
    .args(
        // The player's name may have several words (a display name), then perhaps the
        // wizard: the daemon tells them apart by who is there (the wizard is never read here).
        &[Arg::new(Kind::Rest, "<player>"), Arg::new(Kind::Word, "[wizard]").optional()],
        "the player you challenge",
    )
    .lobby();

/// The Duel's questions in the lobby, before any table: `!wizards` (answered by
/// [`GamePlugin::lobby_in`](crate::GamePlugin::lobby_in)).
pub const LOBBY: &[Command] = &[Command::new("wizards", "Lists the Duel wizards and their element pools.")
    .aliases(&["魔法师"])
    .query(Query::Yes)
    .lobby()];

/// The catalogue's message for a command's help (`locales/*/duel.ftl`), which says in
/// English exactly what [`COMMANDS`] declares.
pub fn help_id(command: &str) -> Option<&'static str> {
    Some(match command {
        "cast" => "duel-help-cast",
        "status" => "duel-help-status",
        "concede" => "duel-help-concede",
        "stop" => "duel-help-stop",
        "duel" => "duel-help-challenge",
        "wizards" => "duel-help-wizards",
        _ => return None,
    })
}

impl DuelCommand {
    /// The command the grammar read, as the Duel's type: `None` when it is none of
    /// [`COMMANDS`]. A cast's tokens are read here (see [`DuelCommand::read_cast`]).
    pub fn from_parsed(parsed: &Parsed) -> Option<Result<DuelCommand, DuelError>> {
        Some(Ok(match parsed.name() {
            "cast" => return Some(DuelCommand::read_cast(parsed.rest(0))),
            "status" => DuelCommand::Status,
            "concede" => DuelCommand::Concede,
            "stop" => DuelCommand::Stop,
            _ => return None,
        }))
    }

    /// A cast's tokens, from the words typed after `!cast` as the grammar split them
    /// (read once: [`read_tokens`]); no tokens at all is refused with an example.
    pub fn read_cast(words: &[String]) -> Result<DuelCommand, DuelError> {
        let tokens = read_tokens(words)?;
        if tokens.is_empty() {
            return Err(DuelError::NoTokens);
        }
        Ok(DuelCommand::Cast(tokens))
    }
}

/// Reads a Duel command (without the prefix) through the grammar. A first word that is
/// not a Duel command is [`DuelError::UnknownCommand`]; words left over are refused with
/// the grammar's usage line.
pub fn parse(command: &str) -> Result<DuelCommand, DuelError> {
    let parsed = grammar::read(COMMANDS, command).map_err(|error| match error {
        ReadError::Unknown(word) => DuelError::UnknownCommand(word),
        ReadError::Bad(error) => DuelError::Unread(error),
    })?;
    DuelCommand::from_parsed(&parsed)
        .unwrap_or_else(|| Err(DuelError::UnknownCommand(parsed.name().to_owned())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::duel::element::Element;
    use crate::games::duel::token::Preconditioning;

    #[test]
    fn commands_parse_case_insensitively() {
        assert_eq!(
            parse("CAST surge Fire end"),
            Ok(DuelCommand::Cast(vec![
                Token::Preconditioning(Preconditioning::Surge),
                Token::Element(Element::Fire),
                Token::End
            ]))
        );
        assert_eq!(parse("Status"), Ok(DuelCommand::Status));
        assert_eq!(parse("concede"), Ok(DuelCommand::Concede));
        assert_eq!(parse("resign"), Ok(DuelCommand::Concede));
        assert_eq!(parse("STOP"), Ok(DuelCommand::Stop));
    }

    #[test]
    fn bad_commands_are_refused_with_what_was_wrong() {
        assert_eq!(parse("gather 3 fire"), Err(DuelError::UnknownCommand("gather".into())));
        assert_eq!(parse("cast"), Err(DuelError::NoTokens));
        assert!(matches!(parse("cast surge fyre"), Err(DuelError::UnknownToken { .. })));
        assert_eq!(
            parse("concede now").map_err(|e| e.to_string()),
            Err("`!concede` takes nothing after it, but `now` is left over: type just `!concede`.".into())
        );
        assert!(matches!(parse("stop now"), Err(DuelError::Unread(_))));
        assert_eq!(parse("status of the duel"), Ok(DuelCommand::Status));
        assert_eq!(parse(""), Err(DuelError::UnknownCommand(String::new())));
    }
}
