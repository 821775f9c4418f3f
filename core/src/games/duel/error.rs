//! Why the Duel refused a command or a setup. Each variant keeps the bad input, and each
//! message says what was wrong, which rule forbids it (RULES D-n) and what to type
//! instead. A refused command never changes the duel.
//!
//! Words between backticks in a message are what the player can type; the renderer shows
//! them as code.

use thiserror::Error;

use super::element::Element;
use super::spell::Seal;
use super::token::{Preconditioning, TOKEN_LIST, Token};
use crate::ids::PlayerId;

/// A refused Duel command or setup.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum DuelError {
    /// The first word is not a Duel command (the router suggests one).
    #[error("`{0}` is not a Duel command; Duel commands are `!cast`, `!status`, `!concede` and `!stop`.")]
    UnknownCommand(String),

    /// `!cast` was typed in a room, where it would reveal the spell. The tokens are
    /// deliberately not kept, so no message can echo them.
    #[error(
        "Don't reveal your spell! Send it privately: /msg the bot `!cast …` \
         (spells are hidden until both wizards place their tokens)."
    )]
    PublicCast,

    /// `!cast` with no tokens.
    #[error("`!cast` needs at least one token, e.g. `!cast surge fire wind end`. Tokens: {TOKEN_LIST}.")]
    NoTokens,

    /// A word after `!cast` is not a token.
    #[error(
        "`{word}` is not a spell token.{} Tokens: {TOKEN_LIST}.",
        suggestion.as_ref().map(|s| format!(" Did you mean `{s}`?")).unwrap_or_default()
    )]
    UnknownToken {
        /// The word as typed (lower-cased).
        word: String,
        /// The nearest token, if one is close.
        suggestion: Option<String>,
    },

    /// A command's words could not be read against the grammar (the grammar's own
    /// message, with the usage line: used where a Duel command is read without the daemon).
    #[error("{0}")]
    Unread(crate::grammar::ParseError),

    /// Someone who is not one of the two wizards tried to play.
    #[error(
        "You are not playing in this duel ({} vs {}), and this room holds one table: \
         challenge someone in another room with `!duel <player>`, or wait for this duel to end \
         (`!status` shows it).",
        players[0],
        players[1]
    )]
    NotAPlayer {
        /// Who tried.
        actor: PlayerId,
        /// The two wizards.
        players: [PlayerId; 2],
    },

    /// `!stop` from someone the daemon did not judge a room operator, game master or bot
    /// admin.
    #[error(
        "Only room operators, game masters and bot admins can stop a Duel; a player who wants \
         out can `!concede` (the opponent wins)."
    )]
    MayNotStop {
        /// Who tried.
        actor: PlayerId,
    },

    /// The duel has finished.
    #[error("This duel is over ({result}); start a new one with `!duel <player>`.")]
    Over {
        /// `winner alice`, `a draw` or `stopped, no winner`.
        result: String,
    },

    /// The spell would not start with a pre-conditioning (RULES Duel, "Spells").
    #[error(
        "A spell starts with its pre-conditioning, but `{token}` would come first (RULES Duel: \
         exactly one pre-conditioning, then elements). Begin with `surge`, `focus`, `overspeed` \
         or `counter`, e.g. `!cast surge {token}`."
    )]
    MissingPreconditioning {
        /// The token that came first.
        token: Token,
    },

    /// A second pre-conditioning in one spell.
    #[error(
        "A spell has exactly one pre-conditioning (RULES Duel); this one already has `{}`, so \
         `{}` cannot be added. Queue elements or `end` instead.",
        first.word(),
        second.word()
    )]
    SecondPreconditioning {
        /// The pre-conditioning already in the spell.
        first: Preconditioning,
        /// The one refused.
        second: Preconditioning,
    },

    /// `overspeed` directly followed by `end`.
    #[error(
        "`overspeed` places its marker together with the first element, so `end` cannot \
         follow it directly. Queue an element after it, e.g. `!cast overspeed fire end`."
    )]
    OverspeedNeedsElement,

    /// An element directly after one it conflicts with.
    #[error(
        "`{element}` cannot directly follow `{before}` (RULES D-3: an element never directly \
         follows one of its circle neighbours, and Void never follows Void). After `{before}` \
         evoke {}, or `end`.",
        super::element::may_follow(*before).iter().map(|e| format!("`{e}`")).collect::<Vec<_>>().join(" ")
    )]
    Conflict {
        /// The element right before.
        before: Element,
        /// The element refused.
        element: Element,
        /// Its element position in the spell, from 0.
        position: u32,
    },

    /// A sealed element in one of the first P positions.
    #[error(
        "`{element}` is sealed for the first {} element position(s) of your spell this round \
         (RULES D-10: sealed {}), and it would be element number {}. Evoke another element there.",
        seal.positions,
        seal.elements.iter().map(|e| e.word()).collect::<Vec<_>>().join(", "),
        position.saturating_add(1)
    )]
    Sealed {
        /// The element refused.
        element: Element,
        /// Its element position, from 0.
        position: u32,
        /// The seal in force.
        seal: Seal,
    },

    /// More of an element than the pool holds.
    #[error(
        "Your pool has no `{element}` left for this (RULES D-4: {in_pool} in your pool, \
         {queued} already queued). Evoke another element or `end`; `!status` shows your pool."
    )]
    PoolEmpty {
        /// The element refused.
        element: Element,
        /// How many the pool holds now.
        in_pool: u32,
        /// How many are already queued.
        queued: u32,
    },

    /// Tokens after the spell's `end`.
    #[error(
        "Your spell already ends with `end`, so `{}` cannot follow it. Your next spell opens \
         after this round settles.",
        extra.iter().map(|t| t.word()).collect::<Vec<_>>().join(" ")
    )]
    AfterEnd {
        /// The tokens that came after `end`.
        extra: Vec<Token>,
    },

    /// The player's spell this round is already complete.
    #[error(
        "Your spell this round is complete ({}); wait for the round to settle, then cast the next one.",
        if *interrupted { "your concentration broke" } else { "it ended with `end`" }
    )]
    SpellComplete {
        /// True when it ended by a failed concentration check.
        interrupted: bool,
    },

    /// A Duel needs exactly two seats.
    #[error(
        "A Duel is played by exactly two wizards, not {count}: challenge one player with `!duel <player> [wizard]`."
    )]
    Seats {
        /// How many seats were given.
        count: usize,
    },

    /// Both seats are the same player.
    #[error("{0} cannot duel themselves: challenge another player with `!duel <player>`.")]
    SamePlayer(PlayerId),

    /// The chosen wizard does not exist.
    #[error(
        "There is no wizard `{name}`.{} Wizards: {}; `!wizards` shows their pools.",
        suggestion.as_ref().map(|s| format!(" Did you mean `{s}`?")).unwrap_or_default(),
        known.join(", ")
    )]
    UnknownWizard {
        /// The name as typed.
        name: String,
        /// The nearest wizard name.
        suggestion: Option<String>,
        /// Every wizard's name.
        known: Vec<String>,
    },
}
