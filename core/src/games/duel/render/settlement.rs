//! A settled round in words: each spell's line (its tokens, a Full Counter's fate, the
//! Voids' removals, level, base, surge, explosion, favour, power, attribute), the track's
//! move, and the seals of the next round; in full (a line each) or compactly (one line).

use super::super::element::Element;
use super::super::engine::SpellRecord;
use super::super::news::{DuelView, Settled};
use super::super::settle::{CounterFailure, counter_failure};
use super::super::spell::Spell;
use super::super::token::Preconditioning;
use super::words::{element, elements_joined, list, say, seals, tokens, track};
use crate::ids::PlayerId;
use crate::language::Language;
use crate::locale::Args;
use crate::text::RichText;

/// The spell a record holds, as cast (its tokens start with the pre-conditioning).
fn as_cast(record: &SpellRecord) -> Option<Spell> {
    let (first, rest) = record.tokens.split_first()?;
    Some(Spell::new(first.preconditioning()?, rest.iter().filter_map(|t| t.element()).collect()))
}

/// "Full Counter fails: at position 1 💧Water is not opposite alice's 🪨Earth (RULES D-6); ".
fn counter_failed(language: Language, opponent: &PlayerId, failure: CounterFailure) -> RichText {
    match failure {
        CounterFailure::Level { counter, target } => say(
            language,
            "duel-counter-fails-level",
            Args::new().num("counter", counter).name("opponent", opponent).num("target", target),
        ),
        CounterFailure::NotOpposite { position, counter, target } => {
            let args = Args::new()
                .num("position", position.saturating_add(1))
                .name("opponent", opponent)
                .rich("theirs", element(language, RichText::new(), target));
            match counter {
                Some(mine) => say(
                    language,
                    "duel-counter-fails-opposite",
                    args.rich("mine", element(language, RichText::new(), mine)),
                ),
                None => say(language, "duel-counter-fails-missing", args),
            }
        }
    }
}

/// "alice's Void removes bob's ⚡Thunder at position 2 (RULES D-11); ".
fn removals(language: Language, players: [&PlayerId; 2], spell: &SpellRecord) -> RichText {
    let [owner, remover] = players;
    let removed = &spell.outcome.removed;
    let elements: Vec<Element> = spell.tokens.iter().filter_map(|t| t.element()).collect();
    let items = removed
        .iter()
        .map(|position| {
            let at = Args::new().num("position", position.saturating_add(1));
            match usize::try_from(*position).ok().and_then(|p| elements.get(p)) {
                Some(e) => say(
                    language,
                    "duel-removal-element",
                    at.rich("element", element(language, RichText::new(), *e)),
                ),
                None => say(language, "duel-removal-position", at),
            }
        })
        .collect();
    let args = Args::new()
        .name("remover", remover)
        .name("owner", owner)
        .num("count", removed.len())
        .rich("removed", list(language, items));
    say(language, "duel-removals", args)
}

fn spell_line(language: Language, view: &DuelView, record: &Settled, seat: usize) -> RichText {
    let spell = &record.spells[seat];
    let args = Args::new()
        .name("player", &view.players[seat])
        .rich("tokens", tokens(language, RichText::new(), &spell.tokens))
        .rich("interrupted", interrupted(language, spell))
        .rich("outcome", outcome(language, view, record, seat));
    say(language, "duel-spell-line", args)
}

/// " (interrupted)" for a spell a failed concentration check ended, else nothing.
fn interrupted(language: Language, spell: &SpellRecord) -> RichText {
    if spell.interrupted { say(language, "duel-interrupted", Args::new()) } else { RichText::new() }
}

/// What a seat's spell came to: "level 4: base 16 + surge 8 = power 24; attribute
/// 🔥Fire", after any Full Counter and Void, or "countered by …".
fn outcome(language: Language, view: &DuelView, record: &Settled, seat: usize) -> RichText {
    let players = &view.players;
    let spell = &record.spells[seat];
    let o = &spell.outcome;
    let part = |id: &str, args: Args| say(language, id, args);
    if o.countered {
        return part("duel-outcome-countered", Args::new().name("opponent", &players[1 - seat]));
    }
    let mut text = RichText::new();
    if o.counter_succeeded {
        text = text.append(part("duel-counter-succeeds", Args::new()));
    } else if let (Some(mine), Some(theirs)) = (as_cast(spell), as_cast(&record.spells[1 - seat]))
        && let Some(failure) = counter_failure(&mine, &theirs)
    {
        text = text.append(counter_failed(language, &players[1 - seat], failure));
    }
    if !o.removed.is_empty() {
        text = text.append(removals(language, [&players[seat], &players[1 - seat]], spell));
    }
    text = text.append(part("duel-outcome-level", Args::new().num("level", o.level).num("base", o.base)));
    let pre = spell.tokens.first().and_then(|t| t.preconditioning());
    if o.boost > 0 {
        text = text.append(match pre {
            Some(Preconditioning::Counter) => part("duel-outcome-doubled", Args::new()),
            _ => part("duel-outcome-surge", Args::new().num("boost", o.boost)),
        });
    }
    if o.explosion > 0 {
        text = text.append(part("duel-outcome-explosion", Args::new().num("explosion", o.explosion)));
    }
    if o.favour > 0 {
        text = text.append(part("duel-outcome-favour", Args::new().num("favour", o.favour)));
    }
    let power = RichText::new().bold(o.power.to_string());
    text = text.append(part("duel-outcome-power", Args::new().rich("power", power)));
    if !o.attribute.is_empty() {
        let attribute = elements_joined(language, RichText::new(), &o.attribute);
        text = text.append(part("duel-outcome-attribute", Args::new().rich("elements", attribute)));
    }
    text
}

/// The full form: the heading, a line per spell, the track's move and the next seals.
pub(super) fn settlement(language: Language, view: &DuelView, record: &Settled) -> Vec<RichText> {
    let mut out = vec![say(language, "duel-settles", Args::new().num("round", record.number))];
    for seat in 0..2 {
        out.push(spell_line(language, view, record, seat));
    }
    let moves = track_moves(language, view, record);
    // After the duel's last round there is no next round to seal.
    let next = if view.finish.is_some() {
        RichText::new()
    } else {
        match seals(language, view) {
            Some(seals) => say(language, "duel-seals-next", Args::new().rich("seals", seals)),
            None => say(language, "duel-no-seals-next", Args::new()),
        }
    };
    out.push(say(language, "duel-track-line", Args::new().rich("moves", moves).rich("seals", next)));
    out
}

/// "Track moves 7 toward bob (alice 33 − bob 40); now 7 toward bob".
fn track_moves(language: Language, view: &DuelView, record: &Settled) -> RichText {
    let players = &view.players;
    let [p0, p1] = [record.spells[0].outcome.power, record.spells[1].outcome.power];
    let args = Args::new()
        .name("first", &players[0])
        .num("first-power", p0)
        .name("second", &players[1])
        .num("second-power", p1)
        .rich("track", track(language, view, record.track_after));
    match p0.cmp(&p1) {
        std::cmp::Ordering::Greater => {
            say(language, "duel-track-moves", args.num("points", p0 - p1).name("player", &players[0]))
        }
        std::cmp::Ordering::Less => {
            say(language, "duel-track-moves", args.num("points", p1 - p0).name("player", &players[1]))
        }
        std::cmp::Ordering::Equal => say(language, "duel-track-still", args),
    }
}

/// The compact form of a settlement, on one line: "Round 1 settles: alice (interrupted)
/// → level 4: … = power 40 · bob → … = power 24. Track moves 16 toward alice (…); now
/// 25 toward alice." The tokens were on the steps' line; the seals come with the next
/// round's start.
pub(super) fn compact_settlement(language: Language, view: &DuelView, record: &Settled) -> RichText {
    let mut spells = RichText::new();
    for (seat, player) in view.players.iter().enumerate() {
        if seat > 0 {
            spells = spells.text(" · ");
        }
        let spell = &record.spells[seat];
        let args = Args::new()
            .name("player", player)
            .rich("interrupted", interrupted(language, spell))
            .rich("outcome", outcome(language, view, record, seat));
        spells = spells.append(say(language, "duel-compact-spell", args));
    }
    let args = Args::new()
        .num("round", record.number)
        .rich("spells", spells)
        .rich("moves", track_moves(language, view, record));
    say(language, "duel-compact-settles", args)
}
