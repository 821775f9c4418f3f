//! Thaum's small words in a reader's language: Thaum names in their colours, values,
//! coins, player lists, standings, Tornado's draws, the strength matrix and when a phase
//! ends. Every sentence of [`super`] is built from these and `locales/*/thaum.ftl`.

use std::borrow::Cow;

use super::super::spells::TornadoRoll;
use super::super::state::{CoinChange, STRENGTH, Standing, Thaum};
use crate::ids::PlayerId;
use crate::language::Language;
use crate::locale::{self, Args};
use crate::text::{Hue, RichText};
use crate::time::Timestamp;

/// The catalogue's message `id` as rich text.
pub(super) fn say(language: Language, id: &str, args: Args) -> RichText {
    locale::say(language, id, args)
}

/// The colour of a Thaum's name.
pub fn hue(thaum: Thaum) -> Hue {
    match thaum {
        Thaum::Fire => Hue::Red,
        Thaum::Water => Hue::Blue,
        Thaum::Earth => Hue::Brown,
        Thaum::Air => Hue::Green,
    }
}

/// A Thaum's name: Fire, 火.
pub(super) fn thaum_name(language: Language, thaum: Thaum) -> Cow<'static, str> {
    let id = match thaum {
        Thaum::Fire => "thaum-fire",
        Thaum::Water => "thaum-water",
        Thaum::Earth => "thaum-earth",
        Thaum::Air => "thaum-air",
    };
    locale::word(language, id)
}

/// A Thaum's name in its colour.
pub(super) fn thaum(language: Language, thaum: Thaum) -> RichText {
    RichText::new().coloured(thaum_name(language, thaum), hue(thaum))
}

/// "Fire 1 → 3".
pub(super) fn change(language: Language, t: Thaum, before: i8, after: i8) -> RichText {
    thaum(language, t).text(format!(" {before} → {after}"))
}

/// Items joined by the catalogue's comma: "a, b, c" (no "and").
pub(super) fn joined(language: Language, items: Vec<RichText>) -> RichText {
    items
        .into_iter()
        .rev()
        .reduce(|rest, first| {
            say(language, "thaum-more", Args::new().rich("first", first).rich("rest", rest))
        })
        .unwrap_or_default()
}

/// "Fire 1, Water 0, Earth -2, Air 3".
pub(super) fn vector(language: Language, values: &[i64; 4]) -> RichText {
    let items =
        Thaum::ALL.iter().map(|t| thaum(language, *t).text(format!(" {}", values[t.index()]))).collect();
    joined(language, items)
}

/// "30 → 6 (14 could not be taken: coins stop at 0, T-9)".
pub(super) fn coins(language: Language, change: &CoinChange) -> RichText {
    let text = RichText::new().text(format!("{} → {}", change.before, change.after));
    if change.not_taken > 0 {
        text.append(say(language, "thaum-not-taken", Args::new().num("count", change.not_taken)))
    } else {
        text
    }
}

/// "alice, bob and carol", each a mention; "nobody" for none.
pub(super) fn players(language: Language, players: &[PlayerId]) -> RichText {
    if players.is_empty() {
        return say(language, "thaum-nobody", Args::new());
    }
    locale::list(language, players.iter().map(|p| RichText::new().mention(p)).collect())
}

/// "alice, bob and carol" as plain text (as the players' ids); "nobody" for none.
pub(super) fn names(language: Language, players: &[PlayerId]) -> RichText {
    if players.is_empty() {
        return say(language, "thaum-nobody", Args::new());
    }
    locale::list(language, players.iter().map(|p| RichText::new().text(p.as_str())).collect())
}

/// "bob's Earth +3 (0 → 3)": the move is K × Air, `±0` when Air is 0.
pub(super) fn roll(language: Language, player: &PlayerId, roll: &TornadoRoll) -> RichText {
    let step = i16::from(roll.k) * i16::from(roll.air);
    let step = if step == 0 { "±0".to_owned() } else { format!("{step:+}") };
    let args = Args::new()
        .mention("player", player)
        .rich("thaum", thaum(language, roll.thaum))
        .text("step", step)
        .num("before", roll.before)
        .num("after", roll.after);
    say(language, "thaum-roll", args)
}

/// "1. bob 9 coins, 2. alice 5 coins, 2. carol 5 coins" (ties share a place).
pub(super) fn standings(language: Language, standings: &[Standing]) -> RichText {
    if standings.is_empty() {
        return say(language, "thaum-no-players", Args::new());
    }
    let mut place = 0;
    let mut items = Vec::with_capacity(standings.len());
    for (i, standing) in standings.iter().enumerate() {
        let tied =
            i > 0 && standings[i - 1].coins == standing.coins && standings[i - 1].debt == standing.debt;
        if !tied {
            place = i + 1;
        }
        let net = i128::from(standing.coins) - i128::from(standing.debt);
        let args = Args::new().num("place", place).mention("player", &standing.player).num("coins", net);
        items.push(say(language, "thaum-standing", args));
    }
    joined(language, items)
}

/// The strength matrix and what defeats what (RULES: shown in help and status).
pub(super) fn strength(language: Language) -> RichText {
    let rows = Thaum::ALL
        .iter()
        .map(|attacker| {
            let row = STRENGTH[attacker.index()].map(|v| v.to_string()).join(" ");
            thaum(language, *attacker).text(format!(" [{row}]"))
        })
        .collect();
    let defeats = Thaum::ALL
        .iter()
        .map(|attacker| {
            let args = Args::new()
                .rich("attacker", thaum(language, *attacker))
                .rich("defender", thaum(language, attacker.defeats()));
            say(language, "thaum-defeats", args)
        })
        .collect();
    let args = Args::new().rich("rows", joined(language, rows)).rich("defeats", joined(language, defeats));
    say(language, "thaum-strength", args)
}

/// "at Wednesday 2026-01-07 00:00 UTC" or "when a game master types `!phase next`".
pub(super) fn ends(language: Language, next_phase: Option<Timestamp>) -> RichText {
    let Some(t) = next_phase else {
        return say(language, "thaum-ends-by-command", Args::new());
    };
    const DAYS: [&str; 7] = [
        "thaum-sunday",
        "thaum-monday",
        "thaum-tuesday",
        "thaum-wednesday",
        "thaum-thursday",
        "thaum-friday",
        "thaum-saturday",
    ];
    let iso = t.to_string();
    let day = DAYS.get(usize::try_from(t.weekday()).unwrap_or(0)).copied().unwrap_or(DAYS[0]);
    let args = Args::new()
        .rich("day", say(language, day, Args::new()))
        .text("date", iso.get(..10).unwrap_or(&iso))
        .text("time", iso.get(11..16).unwrap_or(""));
    say(language, "thaum-ends-at", args)
}
