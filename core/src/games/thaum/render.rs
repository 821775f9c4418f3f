//! Thaum events and errors as chat text in the reader's language (the catalogue
//! `locales/*/thaum.ftl`): short sentences, Thaum names in their colours (Fire red, Water
//! blue, Earth brown, Air green), players as mentions, commands as code written with the
//! table's prefix. One action's events become one message per audience. Events are
//! rendered at delivery ([`crate::GamePlugin::render`]); Thaum has one form (an action is
//! one message already), told in each destination's language.
//!
//! - [`words`]: Thaum names, values, coins, lists, standings, the strength matrix.
//! - [`refusal`]: the engine's refusals.

mod refusal;
mod words;

pub use refusal::{error, refusal};
pub use words::hue;

use crate::event::Event;
use crate::ids::PlayerId;
use crate::language::Language;
use crate::locale::Args;
use crate::plugin::Announcement;
use crate::text::{RichText, Segment, Style};
use crate::words::Adjustment;

use super::events::ThaumEvent;
use super::spells::{Side, TornadoRoll};
use super::state::LOOP_LIMIT;
use words::{change, coins, ends, joined, players, roll, say, standings, strength, thaum, vector};

/// At most this many Tornado repetitions are spelled out; the rest are in the history.
const ROLLS_SHOWN: usize = 12;

/// A phase number in Roman numerals (`IX`); past 3999, in digits.
pub fn roman(n: u32) -> String {
    if n == 0 || n > 3999 {
        return n.to_string();
    }
    const PARTS: [(u32, &str); 13] = [
        (1000, "M"),
        (900, "CM"),
        (500, "D"),
        (400, "CD"),
        (100, "C"),
        (90, "XC"),
        (50, "L"),
        (40, "XL"),
        (10, "X"),
        (9, "IX"),
        (5, "V"),
        (4, "IV"),
        (1, "I"),
    ];
    let mut rest = n;
    let mut out = String::new();
    for (value, letters) in PARTS {
        while rest >= value {
            out.push_str(letters);
            rest -= value;
        }
    }
    out
}

/// `text` with each code span's leading `!` written as `prefix`.
pub fn prefixed(text: RichText, prefix: &str) -> RichText {
    if prefix == "!" {
        return text;
    }
    text.into_segments().into_iter().fold(RichText::new(), |out, segment| match segment {
        Segment::Text { text, style: Style::Code } => {
            let text = match text.strip_prefix('!') {
                Some(rest) => format!("{prefix}{rest}"),
                None => text,
            };
            out.push(Segment::Text { text, style: Style::Code })
        }
        other => out.push(other),
    })
}

/// One action's events as messages in `language`, each to its event's audience (a
/// status answer to whoever asked, the rest to the table); consecutive sentences for the
/// same audience are joined into one message. A text event is said as it is.
pub fn announcements(events: &[Event], language: Language) -> Vec<Announcement> {
    let mut out: Vec<Announcement> = Vec::new();
    for told in events {
        let text = match (told.get::<ThaumEvent>(), told.get::<RichText>()) {
            (Some(thaum), _) => event_in(language, thaum),
            (None, Some(text)) => text.clone(),
            (None, None) => continue,
        };
        match out.last_mut() {
            Some(last) if last.to == told.to => {
                let first = std::mem::take(&mut last.text);
                let args = Args::new().rich("first", first).rich("rest", text);
                last.text = crate::locale::say(language, "common-sentences", args);
            }
            _ => out.push(Announcement::to(told.to.clone(), text)),
        }
    }
    out
}

/// One event as a sentence or two, in English, with commands written with `prefix`.
pub fn event(event: &ThaumEvent, prefix: &str) -> RichText {
    prefixed(event_in(Language::En, event), prefix)
}

/// The season, phase (in Roman numerals and in digits: each language picks one) and
/// Loop Instability of a sentence.
fn when(args: Args, season: u32, phase: u32) -> Args {
    args.num("season", season).text("roman", roman(phase)).num("phase", phase)
}

/// One event as a sentence or two, in `language`.
pub fn event_in(language: Language, event: &ThaumEvent) -> RichText {
    let say = |id: &str, args: Args| say(language, id, args);
    match event {
        ThaumEvent::Opened { game_master, next_phase } => say(
            "thaum-opened",
            Args::new().mention("player", game_master).rich("ends", ends(language, *next_phase)),
        ),
        ThaumEvent::Joined { player, added_by: None, mana } => {
            say("thaum-joined", Args::new().mention("player", player).num("mana", *mana))
        }
        ThaumEvent::Joined { player, added_by: Some(gm), mana } => {
            say("thaum-added", Args::new().mention("by", gm).mention("player", player).num("mana", *mana))
        }
        ThaumEvent::Gathered { player, thaum: t, mana_spent, mana_left, before, after } => {
            let gained = u32::try_from(i32::from(*after) - i32::from(*before)).unwrap_or(0);
            let lost = mana_spent.saturating_sub(gained);
            let lost = if lost > 0 {
                say("thaum-lost-to-cap", Args::new().num("lost", lost))
            } else {
                RichText::new()
            };
            let args = Args::new()
                .mention("player", player)
                .num("spent", *mana_spent)
                .rich("thaum", thaum(language, *t))
                .rich("change", change(language, *t, *before, *after))
                .rich("lost", lost)
                .num("left", *mana_left);
            say("thaum-gathered", args)
        }
        ThaumEvent::BloodMagic { player, thaum: t, before, after, mana_granted, mana_left, .. } => {
            let args = Args::new()
                .mention("player", player)
                .rich("thaum", thaum(language, *t))
                .rich("change", change(language, *t, *before, *after))
                .num("granted", *mana_granted)
                .num("left", *mana_left);
            say("thaum-blood-magic", args)
        }
        ThaumEvent::Alchemy { player, first, second, mana_spent, mana_left, n, coins: change } => {
            let args = Args::new()
                .mention("player", player)
                .num("spent", *mana_spent)
                .rich("first", thaum(language, first.0))
                .num("first-value", first.1)
                .rich("second", thaum(language, second.0))
                .num("second-value", second.1)
                .num("n", *n)
                .rich("coins", coins(language, change))
                .num("left", *mana_left);
            say("thaum-alchemy", args)
        }
        ThaumEvent::Bending { caster, defender, mana_spent, mana_left, attack, defender_after, .. } => {
            let args = Args::new()
                .mention("caster", caster)
                .num("spent", *mana_spent)
                .rich("attack", vector(language, attack))
                .num("left", *mana_left);
            if defender == caster {
                say("thaum-bending-self", args)
            } else {
                let after = defender_after.values().map(i64::from);
                let args = args.mention("defender", defender).rich("after", vector(language, &after));
                say("thaum-bending", args)
            }
        }
        ThaumEvent::Summoning { caster, partner, mana_spent, mana_left, n, caster_coins, partner_coins } => {
            let args = Args::new()
                .mention("caster", caster)
                .mention("partner", partner)
                .num("spent", *mana_spent)
                .num("n", *n)
                .rich("caster-coins", coins(language, caster_coins))
                .rich("partner-coins", coins(language, partner_coins))
                .num("left", *mana_left);
            say("thaum-summoning", args)
        }
        ThaumEvent::Tornado {
            caster, target, mana_spent, seed, rolls, caster_after, target_after, ..
        } => {
            let draws = tornado_draws(language, caster, target, *seed, rolls);
            let args = Args::new()
                .mention("caster", caster)
                .mention("target", target)
                .num("spent", *mana_spent)
                .rich("draws", draws)
                .rich("caster-thaums", vector(language, &caster_after.values().map(i64::from)))
                .rich("target-thaums", vector(language, &target_after.values().map(i64::from)));
            say("thaum-tornado", args)
        }
        ThaumEvent::PhaseForced { by } => say("thaum-phase-forced", Args::new().mention("player", by)),
        ThaumEvent::PhaseEnded { season, phase, instability_before, instability_after } => say(
            "thaum-phase-ended",
            when(Args::new(), *season, *phase)
                .num("before", *instability_before)
                .num("after", *instability_after),
        ),
        ThaumEvent::LoopEnded { season, standings: list } => say(
            "thaum-loop-ended",
            Args::new()
                .num("limit", LOOP_LIMIT)
                .num("season", *season)
                .rich("standings", standings(language, list)),
        ),
        ThaumEvent::SeasonBegan { season } => say("thaum-season-began", Args::new().num("season", *season)),
        ThaumEvent::PhaseBegan { phase, next_phase, .. } => say(
            "thaum-phase-began",
            Args::new()
                .text("roman", roman(*phase))
                .num("phase", *phase)
                .rich("ends", ends(language, *next_phase)),
        ),
        ThaumEvent::InstabilityAdjusted { by, change: how, before, after } => {
            let how = match how {
                Adjustment::Set(_) => "set",
                Adjustment::Add(_) => "raise",
                Adjustment::Take(n) if *n > *before => "floor",
                Adjustment::Take(_) => "lower",
            };
            let args = Args::new()
                .mention("player", by)
                .word("how", how)
                .num("before", *before)
                .num("after", *after)
                .num("limit", LOOP_LIMIT);
            say("thaum-instability", args)
        }
        ThaumEvent::CoinsAdjusted { by, player, change } => say(
            "thaum-coins-adjusted",
            Args::new().mention("by", by).mention("player", player).rich("coins", coins(language, change)),
        ),
        ThaumEvent::GameMasterAdded { by, player, game_masters } => say(
            "thaum-gm-added",
            Args::new()
                .mention("by", by)
                .mention("player", player)
                .rich("game-masters", players(language, game_masters)),
        ),
        ThaumEvent::GameMasterRemoved { by, player, game_masters } => {
            let list = players(language, game_masters);
            if by == player {
                say("thaum-gm-stepped-down", Args::new().mention("player", by).rich("game-masters", list))
            } else {
                say(
                    "thaum-gm-removed",
                    Args::new().mention("by", by).mention("player", player).rich("game-masters", list),
                )
            }
        }
        ThaumEvent::GameMasters { game_masters } => {
            say("thaum-gm-list", Args::new().rich("game-masters", players(language, game_masters)))
        }
        ThaumEvent::Sheet { player, sheet, season, phase, instability } => {
            let used = |u: bool| if u { "used" } else { "ready" };
            let args = when(Args::new(), *season, *phase)
                .mention("player", player)
                .num("mana", sheet.mana)
                .num("coins", sheet.balance())
                .rich("thaums", vector(language, &sheet.thaums.values().map(i64::from)))
                .word("blood-magic", used(sheet.blood_magic_used))
                .word("tornado", used(sheet.tornado_used))
                .num("instability", *instability);
            say("thaum-sheet", args)
        }
        ThaumEvent::Summary {
            season,
            phase,
            instability,
            game_masters,
            players: seated,
            next_phase,
            finished,
        } => {
            let seated = seated
                .iter()
                .map(|(player, sheet)| {
                    let args = Args::new()
                        .mention("player", player)
                        .num("mana", sheet.mana)
                        .num("coins", sheet.balance());
                    say("thaum-summary-player", args)
                })
                .collect();
            let state = if *finished {
                say("thaum-summary-stopped", Args::new())
            } else {
                say("thaum-summary-ends", Args::new().rich("ends", ends(language, *next_phase)))
            };
            let args = when(Args::new(), *season, *phase)
                .num("instability", *instability)
                .num("limit", LOOP_LIMIT)
                .rich("game-masters", words::names(language, game_masters))
                .rich("players", joined(language, seated))
                .rich("state", state)
                .rich("strength", strength(language));
            say("thaum-summary", args)
        }
        ThaumEvent::Stopped { by, season, standings: list } => say(
            "thaum-stopped",
            Args::new()
                .mention("player", by)
                .num("season", *season)
                .rich("standings", standings(language, list)),
        ),
    }
}

/// A Tornado's draws: its seed, then the first [`ROLLS_SHOWN`] rolls and how many more
/// there were (or only that nothing was drawn, without a seed).
fn tornado_draws(
    language: Language,
    caster: &PlayerId,
    target: &PlayerId,
    seed: Option<u64>,
    rolls: &[TornadoRoll],
) -> RichText {
    let say = |id: &str, args: Args| say(language, id, args);
    let shown = rolls
        .iter()
        .take(ROLLS_SHOWN)
        .map(|r| {
            let player = match r.side {
                Side::Caster => caster,
                Side::Target => target,
            };
            roll(language, player, r)
        })
        .collect::<Vec<_>>();
    let shown = shown
        .into_iter()
        .rev()
        .reduce(|rest, first| {
            say("thaum-rolls-more", Args::new().rich("first", first).rich("rest", rest))
        })
        .unwrap_or_default();
    let more = if rolls.len() > ROLLS_SHOWN {
        say("thaum-tornado-more", Args::new().num("count", rolls.len() - ROLLS_SHOWN))
    } else {
        RichText::new()
    };
    match seed {
        Some(seed) => say(
            "thaum-tornado-seed",
            Args::new().text("seed", seed.to_string()).rich("rolls", shown).rich("more", more),
        ),
        None => say("thaum-tornado-nothing", Args::new()).append(shown).append(more),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_are_roman() {
        let shown: Vec<String> = [1, 4, 9, 10, 14, 40, 1994].into_iter().map(roman).collect();
        assert_eq!(shown, ["I", "IV", "IX", "X", "XIV", "XL", "MCMXCIV"]);
        assert_eq!(roman(0), "0");
        assert_eq!(roman(4000), "4000");
    }

    #[test]
    fn code_spans_take_the_tables_prefix() {
        let text = prefixed(RichText::from("type `!join` first"), ".");
        assert_eq!(text.plain(), "type `.join` first");
        assert_eq!(text.segments()[1], Segment::Text { text: ".join".into(), style: Style::Code });
    }

    #[test]
    fn thaum_names_are_coloured() {
        let text = thaum(Language::En, super::super::state::Thaum::Earth);
        assert!(matches!(&text.segments()[0], Segment::Coloured { hue: crate::text::Hue::Brown, .. }));
    }

    #[test]
    fn phase_ends_are_given_as_weekday_and_time() {
        let at = Some(crate::time::Timestamp::CONSOLE_EPOCH);
        assert_eq!(ends(Language::En, at).plain(), "at Sunday 2026-01-04 00:00 UTC");
        assert_eq!(ends(Language::ZhCn, at).plain(), "于 2026-01-04（星期日）00:00 UTC ");
    }
}
