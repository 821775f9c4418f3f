//! The words a challenge is told in (issue 32: everything about a game lives with the
//! game). The lobby's sentences (`lobby-challenge`, …, in `locales/*/lobby.ftl`) are
//! game-neutral; what is the game's comes from the game: its name
//! ([`GamePlugin::name_in`]), its challenge command as typed and how to accept with its
//! choice (both read from [`GamePlugin::challenge_command`]'s declaration), and, where a
//! game tells a challenge in a sentence of its own (the Duel's "to a Duel!", with its
//! `!wizards`), that sentence's id in its own catalogue ([`GamePlugin::challenge_words`]).

use spellbridge_core::grammar::phrase;
use spellbridge_core::locale::Args;
use spellbridge_core::{ChallengeWords, Command};

use super::said::{or_list, said};
use super::*;

/// The lobby's game-neutral sentences, for a game that brings none of its own.
const LOBBY_WORDS: ChallengeWords = ChallengeWords {
    challenge: "lobby-challenge",
    challenge_as: "lobby-challenge-as",
    declined: "lobby-declined",
    yourself: "lobby-challenge-self",
};

/// A challenge command as typed in `language`, written with `!` (the router gives it the
/// configured prefix): the whole usage with `choices` (`!duel <player> [wizard]`), else
/// with the player only (`!duel <player>`).
pub(super) fn usage(command: &Command, language: Language, choices: bool) -> String {
    if choices {
        return command.usage_line_in("!", language);
    }
    let player = command.args.first().map(|arg| phrase(language, arg.shown)).unwrap_or_default();
    format!("!{} {player}", command.name_in(language)).trim_end().to_owned()
}

impl Router {
    /// Sentence `which` of a challenge to the game called `game`, in `language`: the
    /// game's own ([`GamePlugin::challenge_words`]) or the lobby's, given `args` and the
    /// words derived from the game (`$game`, `$accept`, `$usage`) that it reads. A game
    /// no longer in the registry (a challenge replayed from an older configuration) is
    /// told in the lobby's words with its name as journaled.
    pub(super) fn challenge_said(
        &self,
        game: &str,
        which: fn(&ChallengeWords) -> &'static str,
        args: Args,
        language: Language,
    ) -> RichText {
        let plugin = self.registry.get(game);
        let id = which(&plugin.and_then(|g| g.challenge_words()).unwrap_or(LOBBY_WORDS));
        let mut args = args.text("game", self.game_name(game, language));
        if let Some(command) = plugin.and_then(|g| g.challenge_command()) {
            args = args
                .text("accept", self.accept_usage(command, language))
                .text("usage", usage(command, language, false));
        }
        said(language, id, args.read_by(id))
    }

    /// How to accept a challenge made with `command`: the lobby's `!accept` with the
    /// choices `command` takes after the player (`!accept [wizard]`), in `language`.
    fn accept_usage(&self, command: &Command, language: Language) -> String {
        let accept = self.lobby_name("accept", language);
        let choices = command.args.iter().skip(1).map(|arg| phrase(language, arg.shown));
        std::iter::once(format!("!{accept}")).chain(choices).collect::<Vec<_>>().join(" ")
    }

    /// Every game's challenge command, as code joined by commas and `or`, for a hint where
    /// no game is in question (`!accept` with nobody challenging): the whole usage with
    /// `choices`, else with the player only.
    pub(super) fn challenge_usages(&self, choices: bool, language: Language) -> RichText {
        let usages = self
            .registry
            .iter()
            .filter_map(|g| g.challenge_command())
            .map(|command| RichText::new().code(usage(command, language, choices)))
            .collect();
        or_list(language, usages)
    }

    /// A challenge to the game called `game`, as code (`!duel <player>`): its own command,
    /// or, for a game no longer in the registry, every game's.
    pub(super) fn challenge_usage_of(&self, game: &str, language: Language) -> RichText {
        match self.registry.get(game).and_then(|g| g.challenge_command()) {
            Some(command) => RichText::new().code(usage(command, language, false)),
            None => self.challenge_usages(false, language),
        }
    }
}
