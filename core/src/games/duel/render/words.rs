//! The Duel's small words in a reader's language: elements (coloured, with their
//! symbols), tokens, pools, the track, seals, lists and waits. Every sentence of
//! [`super`] is built from these and the catalogue (`locales/*/duel.ftl`).

use std::borrow::Cow;

use super::super::element::Element;
use super::super::news::DuelView;
use super::super::spell::Seal;
use super::super::token::{Preconditioning, Token};
use super::super::wizard::Pool;
use crate::ids::PlayerId;
use crate::language::Language;
use crate::locale::{self, Args};
use crate::text::{RichText, Segment, Style};

/// The catalogue's message `id` as rich text.
pub(super) fn say(language: Language, id: &str, args: Args) -> RichText {
    locale::say(language, id, args)
}

/// The catalogue's message `id` as plain text.
pub(super) fn word(language: Language, id: &str) -> Cow<'static, str> {
    locale::word(language, id)
}

/// `text` with its plain runs in bold (names and other segments as they are).
pub(super) fn bold(text: RichText) -> RichText {
    restyle(text, Style::Bold)
}

/// `text` with its plain runs in italics.
pub(super) fn italic(text: RichText) -> RichText {
    restyle(text, Style::Italic)
}

fn restyle(text: RichText, to: Style) -> RichText {
    text.into_segments().into_iter().fold(RichText::new(), |out, segment| match segment {
        Segment::Text { text, style: Style::Plain } => out.push(Segment::Text { text, style: to }),
        other => out.push(other),
    })
}

/// An element's name: Water, 水.
pub(super) fn element_name(language: Language, e: Element) -> Cow<'static, str> {
    let id = match e {
        Element::Water => "duel-element-water",
        Element::Fire => "duel-element-fire",
        Element::Thunder => "duel-element-thunder",
        Element::Wind => "duel-element-wind",
        Element::Earth => "duel-element-earth",
        Element::Void => "duel-element-void",
    };
    word(language, id)
}

/// A pre-conditioning's name: Power Surge, 魔力迸发.
pub(super) fn preconditioning_name(language: Language, p: Preconditioning) -> Cow<'static, str> {
    let id = match p {
        Preconditioning::Surge => "duel-token-surge",
        Preconditioning::Focus => "duel-token-focus",
        Preconditioning::Overspeed => "duel-token-overspeed",
        Preconditioning::Counter => "duel-token-counter",
    };
    word(language, id)
}

/// An element with its symbol, in its colour: `🔥Fire`.
pub(super) fn element(language: Language, text: RichText, e: Element) -> RichText {
    let name = element_name(language, e);
    let mut word = String::with_capacity(e.symbol().len() + name.len());
    word.push_str(e.symbol());
    word.push_str(&name);
    text.coloured(word, e.hue())
}

fn token(language: Language, text: RichText, t: Token) -> RichText {
    match t {
        Token::Element(e) => element(language, text, e),
        Token::Preconditioning(p) => text.bold(preconditioning_name(language, p)),
        Token::End => text.italic(word(language, "duel-token-end")),
    }
}

/// Tokens in the order placed, a space between (`nothing` for none).
pub(super) fn tokens(language: Language, mut text: RichText, list: &[Token]) -> RichText {
    if list.is_empty() {
        return text.italic(word(language, "duel-nothing"));
    }
    for (i, t) in list.iter().enumerate() {
        if i > 0 {
            text = text.text(" ");
        }
        text = token(language, text, *t);
    }
    text
}

/// Elements joined by `+` (an attribute).
pub(super) fn elements_joined(language: Language, mut text: RichText, list: &[Element]) -> RichText {
    for (i, e) in list.iter().enumerate() {
        if i > 0 {
            text = text.text("+");
        }
        text = element(language, text, *e);
    }
    text
}

/// Elements as alternatives: "💧Water or 🔥Fire or 💨Wind" (in Chinese "💧水、🔥火 或 💨风").
fn elements_or(language: Language, list: &[Element]) -> RichText {
    let mut items: Vec<RichText> = list.iter().map(|e| element(language, RichText::new(), *e)).collect();
    let Some(last) = items.pop() else { return RichText::new() };
    let Some(before) = items.pop() else { return last };
    let mut out = say(language, "common-or", Args::new().rich("first", before).rich("last", last));
    while let Some(item) = items.pop() {
        out = say(language, "common-or-more", Args::new().rich("first", item).rich("rest", out));
    }
    out
}

/// Items as a list: "a", "a and b", "a, b and c".
pub(super) fn list(language: Language, items: Vec<RichText>) -> RichText {
    locale::list(language, items)
}

/// A pool as `💧8 🔥8 ⚡8 💨8 🪨8 🕳4` (symbols only: the same in every language).
pub fn pool(mut text: RichText, pool: &Pool) -> RichText {
    for (i, e) in Element::ALL.iter().enumerate() {
        if i > 0 {
            text = text.text(" ");
        }
        text = text.coloured(format!("{}{}", e.symbol(), pool.get(*e)), e.hue());
    }
    text
}

/// The track in bold, `even (0)` or `13 toward alice` (the player as a name segment).
pub(super) fn track(language: Language, view: &DuelView, value: i64) -> RichText {
    let players = &view.players;
    let toward = |points: u64, player: &PlayerId| {
        bold(say(language, "duel-track-toward", Args::new().num("points", points).name("player", player)))
    };
    match value {
        0 => bold(say(language, "duel-track-even", Args::new())),
        v if v > 0 => toward(v.unsigned_abs(), &players[0]),
        v => toward(v.unsigned_abs(), &players[1]),
    }
}

fn seal(language: Language, player: &PlayerId, seal: &Seal) -> RichText {
    let args = Args::new()
        .name("player", player)
        .num("positions", seal.positions)
        .rich("elements", elements_or(language, &seal.elements));
    say(language, "duel-seal", args)
}

/// The seals in force, as "alice's first 1 element position(s) may not be …; bob's …."
/// (None when there are none).
pub(super) fn seals(language: Language, view: &DuelView) -> Option<RichText> {
    let players = &view.players;
    let sealed: Vec<RichText> = view
        .seals
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.is_none())
        .map(|(seat, s)| seal(language, &players[seat], s))
        .collect();
    let joined = sealed.into_iter().reduce(|first, rest| {
        say(language, "duel-seals-more", Args::new().rich("first", first).rich("rest", rest))
    })?;
    Some(say(language, "duel-seals", Args::new().rich("seals", joined)))
}

/// How long a step waits: `5 min`, `90 s`.
pub(super) fn wait(language: Language, seconds: i64) -> String {
    if seconds % 60 == 0 {
        locale::text(language, "duel-minutes", &Args::new().num("minutes", seconds / 60))
    } else {
        locale::text(language, "duel-seconds", &Args::new().num("seconds", seconds))
    }
}

/// A deadline as `language` writes it: ISO 8601 in English (`2026-01-04T00:10:00Z`),
/// `2026-01-04 00:10:00 UTC` in Chinese (`duel-when`).
pub(super) fn when(language: Language, at: crate::time::Timestamp) -> String {
    let iso = at.to_string();
    match (iso.get(..10), iso.get(11..19)) {
        (Some(date), Some(time)) => {
            say(language, "duel-when", Args::new().text("date", date).text("time", time)).plain()
        }
        _ => iso,
    }
}
