//! Thaum's refusals in words: each [`ThaumError`] as the catalogue says it, in every
//! language ([`Localized`]). Each says what was wrong, names the rule (RULES T-n) where
//! one applies, and what to type instead; commands are code written with `!`, which the
//! daemon shows with its prefix.

use super::super::command::Verb;
use super::super::error::ThaumError;
use super::super::state::Thaum;
use super::words::{names, say, thaum_name};
use crate::language::Language;
use crate::locale::{Args, Localized};
use crate::text::RichText;

/// " (did you mean `bob`?)" for a suggestion, else nothing.
fn did_you_mean(language: Language, suggestion: Option<&crate::ids::PlayerId>) -> RichText {
    match suggestion {
        Some(player) => say(language, "thaum-did-you-mean", Args::new().text("player", player.as_str())),
        None => RichText::new(),
    }
}

/// A spell's name for "… needs another player": Summoning, Tornado, Bending.
fn spell(language: Language, verb: Verb) -> RichText {
    let id = match verb {
        Verb::Summon => "thaum-spell-summoning",
        Verb::Tornado => "thaum-spell-tornado",
        Verb::Bend => "thaum-spell-bending",
        _ => "thaum-spell-other",
    };
    say(language, id, Args::new())
}

/// The other Thaum of the example for Alchemy on one Thaum twice.
fn other(thaum: Thaum) -> Thaum {
    if thaum == Thaum::Air { Thaum::Fire } else { Thaum::Air }
}

/// A Thaum as a player types it in `language` (`fire`, `火`): the first of its words
/// written in that language's script.
fn typed(language: Language, thaum: Thaum) -> &'static str {
    let words = Thaum::ALL.iter().position(|t| *t == thaum).and_then(|i| super::super::THAUMS.words.get(i));
    let chinese = words.and_then(|words| words.iter().copied().find(|w| !w.is_ascii()));
    match (language, chinese) {
        (Language::ZhCn, Some(word)) => word,
        _ => thaum.key(),
    }
}

/// A refusal from the engine in `language`; a usage example in it names
/// `example_player` (see [`Verb::example_naming`]).
pub fn error(language: Language, err: &ThaumError, example_player: &str) -> RichText {
    let say = |id: &str, args: Args| say(language, id, args);
    match err {
        ThaumError::TableStopped => say("thaum-error-stopped", Args::new()),
        ThaumError::NotAPlayer { .. } => say("thaum-error-not-a-player", Args::new()),
        ThaumError::AlreadyJoined { .. } => say("thaum-error-already-joined", Args::new()),
        ThaumError::AlreadyPlaying { player } => {
            say("thaum-error-already-playing", Args::new().text("player", player.as_str()))
        }
        ThaumError::BadName { typed } if language != Language::En => {
            let example = Verb::Add.help().example_line_in("!", example_player, language).unwrap_or_default();
            say("thaum-error-bad-name", Args::new().text("typed", typed.as_str()).text("example", example))
        }
        ThaumError::BadName { typed } => {
            let example = format!("`{}`", Verb::Add.example());
            let example = Verb::Add.renaming_example(&example, example_player);
            say(
                "thaum-error-bad-name",
                Args::new().text("typed", typed.as_str()).text("example", example.trim_matches('`')),
            )
        }
        ThaumError::UnknownPlayer { typed, suggestion, players, verb } => say(
            "thaum-error-unknown-player",
            Args::new()
                .text("typed", typed.as_str())
                .rich("suggestion", did_you_mean(language, suggestion.as_ref()))
                .rich("players", names(language, players))
                .text("command", verb.help().name_in(language))
                .text("usage", verb.help().usage_in(language)),
        ),
        ThaumError::NotGameMaster { verb, game_masters, .. } => say(
            "thaum-error-not-game-master",
            Args::new()
                .text("command", verb.help().name_in(language))
                .rich("game-masters", names(language, game_masters)),
        ),
        ThaumError::NotSeated { typed, suggestion } => say(
            "thaum-error-not-seated",
            Args::new()
                .text("typed", typed.as_str())
                .rich("suggestion", did_you_mean(language, suggestion.as_ref())),
        ),
        ThaumError::AlreadyGameMaster { player, game_masters } => say(
            "thaum-error-already-game-master",
            Args::new().text("player", player.as_str()).rich("game-masters", names(language, game_masters)),
        ),
        ThaumError::NotAmongGameMasters { typed, game_masters } => say(
            "thaum-error-not-among-game-masters",
            Args::new().text("typed", typed.as_str()).rich("game-masters", names(language, game_masters)),
        ),
        ThaumError::LastGameMaster { player } => {
            say("thaum-error-last-game-master", Args::new().text("player", player.as_str()))
        }
        ThaumError::NotEnoughMana { verb, held, wanted, args } => say(
            "thaum-error-not-enough-mana",
            Args::new()
                .num("held", *held)
                .num("wanted", *wanted)
                .text("command", verb.help().name_in(language))
                .text("args", args.as_str()),
        ),
        ThaumError::BloodMagicUsed => say("thaum-error-blood-magic-used", Args::new()),
        ThaumError::TornadoUsed => say("thaum-error-tornado-used", Args::new()),
        ThaumError::SameThaum { thaum, mana } => say(
            "thaum-error-same-thaum",
            Args::new()
                .text("thaum", thaum_name(language, *thaum))
                .num("mana", *mana)
                .text("first", typed(language, *thaum))
                .text("second", typed(language, other(*thaum))),
        ),
        ThaumError::SelfTarget { verb } => say(
            "thaum-error-self-target",
            Args::new().rich("spell", spell(language, *verb)).text("command", verb.help().name_in(language)),
        ),
    }
}

/// A refusal from the engine in every language.
pub fn refusal(err: &ThaumError, example_player: &str) -> Localized {
    Localized::new(|language| error(language, err, example_player))
}
