//! The Duel's refusals in words: each [`DuelError`] as the catalogue says it, in every
//! language ([`Localized`]: a refusal is made before anyone knows where it is told).
//! Words between backticks are what the player can type, shown as code; players are
//! name segments (each network shows its own name for them, never a raw id).

use super::super::error::DuelError;
use super::super::news::DuelView;
use super::status::result;
use super::words::{element, list, say};
use crate::language::Language;
use crate::locale::{Args, Localized};
use crate::text::RichText;

/// Plain text in which `…` spans become code segments.
pub fn with_code(message: &str) -> RichText {
    let mut text = RichText::new();
    for (i, part) in message.split('`').enumerate() {
        text = if i % 2 == 1 { text.code(part) } else { text.text(part) };
    }
    text
}

/// " Did you mean `fire`?" for a suggestion, else nothing.
fn did_you_mean(language: Language, suggestion: Option<&String>) -> RichText {
    match suggestion {
        Some(word) => say(language, "duel-did-you-mean", Args::new().text("word", word.as_str())),
        None => RichText::new(),
    }
}

/// `words` each as code, a space between.
fn codes<'a>(words: impl Iterator<Item = &'a str>) -> RichText {
    let mut text = RichText::new();
    for (i, word) in words.enumerate() {
        if i > 0 {
            text = text.text(" ");
        }
        text = text.code(word);
    }
    text
}

/// A refusal's message in `language`.
pub fn error(language: Language, error: &DuelError) -> RichText {
    let say = |id: &str, args: Args| say(language, id, args);
    match error {
        DuelError::UnknownCommand(word) => {
            say("duel-error-unknown-command", Args::new().text("word", word.as_str()))
        }
        DuelError::PublicCast => say("duel-error-public-cast", Args::new()),
        DuelError::NoTokens => say("duel-error-no-tokens", Args::new()),
        DuelError::UnknownToken { word, suggestion } => say(
            "duel-error-unknown-token",
            Args::new()
                .text("word", word.as_str())
                .rich("suggestion", did_you_mean(language, suggestion.as_ref())),
        ),
        DuelError::Unread(unread) => {
            let message = unread.message_in("!", crate::grammar::EXAMPLE_PLAYER, language);
            say("duel-error-unread", Args::new().rich("message", with_code(&message)))
        }
        DuelError::NotAPlayer { players, .. } => {
            say("duel-error-not-a-player", Args::new().name("first", &players[0]).name("second", &players[1]))
        }
        DuelError::MayNotStop { .. } => say("duel-error-may-not-stop", Args::new()),
        DuelError::Over { result } => say("duel-error-over", Args::new().text("result", result.as_str())),
        DuelError::MissingPreconditioning { token } => {
            say("duel-error-missing-preconditioning", Args::new().text("token", token.typed_in(language)))
        }
        DuelError::SecondPreconditioning { first, second } => say(
            "duel-error-second-preconditioning",
            Args::new().text("first", first.typed_in(language)).text("second", second.typed_in(language)),
        ),
        DuelError::OverspeedNeedsElement => say("duel-error-overspeed-needs-element", Args::new()),
        DuelError::Conflict { before, element, .. } => {
            let allowed =
                codes(super::super::element::may_follow(*before).iter().map(|e| e.typed_in(language)));
            say(
                "duel-error-conflict",
                Args::new()
                    .text("element", element.typed_in(language))
                    .text("before", before.typed_in(language))
                    .rich("allowed", allowed),
            )
        }
        DuelError::Sealed { element: element_word, position, seal } => {
            // The sealed elements as typed (English) and by name (other languages).
            let sealed: Vec<&str> = seal.elements.iter().map(|e| e.word()).collect();
            let names = seal.elements.iter().map(|e| element(language, RichText::new(), *e)).collect();
            say(
                "duel-error-sealed",
                Args::new()
                    .text("element", element_word.typed_in(language))
                    .num("positions", seal.positions)
                    .text("sealed-words", sealed.join(", "))
                    .rich("sealed-names", list(language, names))
                    .num("number", position.saturating_add(1)),
            )
        }
        DuelError::PoolEmpty { element, in_pool, queued } => say(
            "duel-error-pool-empty",
            Args::new()
                .text("element", element.typed_in(language))
                .num("in-pool", *in_pool)
                .num("queued", *queued),
        ),
        DuelError::AfterEnd { extra } => {
            let extra: Vec<&str> = extra.iter().map(|t| t.typed_in(language)).collect();
            say("duel-error-after-end", Args::new().text("extra", extra.join(" ")))
        }
        DuelError::SpellComplete { interrupted } => {
            let why = if *interrupted { "interrupted" } else { "ended" };
            say("duel-error-spell-complete", Args::new().word("why", why))
        }
        DuelError::Seats { count } => say("duel-error-seats", Args::new().num("count", *count)),
        DuelError::SamePlayer(player) => say("duel-error-same-player", Args::new().name("player", player)),
        DuelError::UnknownWizard { name, suggestion, known } => say(
            "duel-error-unknown-wizard",
            Args::new()
                .text("name", name.as_str())
                .rich("suggestion", did_you_mean(language, suggestion.as_ref()))
                .text("known", known.join(if language == Language::En { ", " } else { "、" })),
        ),
    }
}

/// A refusal of a command to the duel `view` shows: as [`error`], with the result of a
/// finished duel naming its winner by name segment.
pub fn error_in(language: Language, view: &DuelView, error: &DuelError) -> RichText {
    match error {
        DuelError::Over { .. } => {
            say(language, "duel-error-over", Args::new().rich("result", result(language, view)))
        }
        other => self::error(language, other),
    }
}

/// A refusal in every language.
pub fn refusal(error: &DuelError) -> Localized {
    Localized::new(|language| self::error(language, error))
}

/// A refusal of a command to the duel `view` shows, in every language.
pub fn refusal_in(view: &DuelView, error: &DuelError) -> Localized {
    Localized::new(|language| error_in(language, view, error))
}
