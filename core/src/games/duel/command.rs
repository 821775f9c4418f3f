//! The Duel's chat commands as a type: text in, [`DuelCommand`] out. The help for each
//! command is declared once, in [`COMMANDS`].

use super::error::DuelError;
use super::token::{Token, parse_tokens};
use crate::plugin::CommandHelp;
use crate::words;

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

/// Every Duel command, in the order help lists them.
pub const COMMANDS: &[CommandHelp] = &[
    CommandHelp {
        name: "cast",
        aliases: &["施法"],
        usage: "<token> [<token> …]",
        summary: "Privately to the bot: queues tokens for your spell this round, one placed per step \
                  (`!cast surge fire wind end`). Tokens: surge focus overspeed counter, \
                  water fire thunder wind earth void, end.",
        players: &[],
    },
    CommandHelp {
        name: "status",
        aliases: &[],
        usage: "",
        summary: "Shows the round, the step, the victory track, both pools and the seals; \
                  privately, also your own queued spell.",
        players: &[],
    },
    CommandHelp {
        name: "concede",
        aliases: &["resign", "surrender"],
        usage: "",
        summary: "Gives up the duel: your opponent wins.",
        players: &[],
    },
    CommandHelp {
        name: "stop",
        aliases: &[],
        usage: "",
        summary: "Room operators, game masters and bot admins: ends the duel with no winner \
                  (a player gives up with `!concede`).",
        players: &[],
    },
];

/// True when `head` (lower-cased) names the cast command, so a public cast can be
/// refused before its tokens are even read.
pub fn is_cast(head: &str) -> bool {
    is(head, "cast")
}

fn is(head: &str, name: &str) -> bool {
    COMMANDS.iter().any(|c| c.name == name && (c.name == head || c.aliases.contains(&head)))
}

/// Reads a Duel command (without the prefix). A first word that is not a Duel command
/// is [`DuelError::UnknownCommand`].
pub fn parse(command: &str) -> Result<DuelCommand, DuelError> {
    let (head, rest) = words::split(command);
    let extra = rest.join(" ");
    if is(&head, "cast") {
        let tokens = parse_tokens(&extra)?;
        if tokens.is_empty() {
            return Err(DuelError::NoTokens);
        }
        Ok(DuelCommand::Cast(tokens))
    } else if is(&head, "status") {
        // Words after `status` (a player's name, say) are harmless: there is one duel.
        Ok(DuelCommand::Status)
    } else if is(&head, "concede") {
        if !extra.is_empty() {
            return Err(DuelError::ExtraWords { command: "concede", extra });
        }
        Ok(DuelCommand::Concede)
    } else if is(&head, "stop") {
        if !extra.is_empty() {
            return Err(DuelError::ExtraWords { command: "stop", extra });
        }
        Ok(DuelCommand::Stop)
    } else {
        Err(DuelError::UnknownCommand(head))
    }
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
        assert!(matches!(parse("concede now"), Err(DuelError::ExtraWords { .. })));
        assert!(matches!(parse("stop now"), Err(DuelError::ExtraWords { command: "stop", .. })));
        assert_eq!(parse(""), Err(DuelError::UnknownCommand(String::new())));
    }
}
