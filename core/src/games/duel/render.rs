//! Duel news and refusals as rich text, one line per message. Rendering reads only the
//! [`DuelNews`] events (never the duel), so who sees what was settled when the events
//! were made ([`super::news`]: a step's tokens reach the table only once revealed; a
//! queue only ever its owner).
//!
//! A round is told in two forms ([`Form`], a destination's [`Presentation`]). The full form (Matrix, the console) gives
//! each step its line, then the settlement's heading, one line per spell with its
//! tokens, and the track's move: about ten lines. The compact form (IRC, where a real
//! network's flood control sends a line per 2 s) says the same in three: the steps
//! revealed together on one line, both spells' results and the track's move on the next,
//! and the next round's start with the seals in force on the last.

use super::element::Element;
use super::engine::{Duel, Finish, FinishReason, SpellRecord};
use super::error::DuelError;
use super::news::{self, DuelNews, DuelView, Revealed, RoundView, Settled};
use super::settle::{CounterFailure, counter_failure};
use super::spell::{Seal, Spell};
use super::token::{Preconditioning, Token};
use super::wizard::{Pool, Wizard};
use crate::event::{Event, Presentation};
use crate::ids::PlayerId;
use crate::plugin::{Announcement, Form};
use crate::text::RichText;
use crate::time::Timestamp;

/// A refusal's message, with the words between backticks shown as code and the players
/// it names as name segments (each network shows its own name for them, never a raw id).
pub fn error(error: &DuelError) -> RichText {
    match error {
        DuelError::NotAPlayer { players, .. } => RichText::new()
            .text("You are not playing in this duel (")
            .name(&players[0])
            .text(" vs ")
            .name(&players[1])
            .append(with_code(
                "), and this room holds one table: challenge someone in another room with \
                 `!duel <player>`, or wait for this duel to end (`!status` shows it).",
            )),
        DuelError::SamePlayer(player) => RichText::new()
            .name(player)
            .append(with_code(" cannot duel themselves: challenge another player with `!duel <player>`.")),
        other => with_code(&other.to_string()),
    }
}

/// A refusal of a command to `duel`: as [`error`], with the result of a finished duel
/// naming its winner by name segment.
pub fn error_in(duel: &Duel, error: &DuelError) -> RichText {
    match error {
        DuelError::Over { .. } => result(RichText::new().text("This duel is over ("), &DuelView::of(duel))
            .append(with_code("); start a new one with `!duel <player>`.")),
        other => self::error(other),
    }
}

/// `winner alice`, `a draw` or `stopped, no winner` (as [`Duel::result_text`]), the
/// winner as a name segment.
fn result(text: RichText, view: &DuelView) -> RichText {
    match view.finish {
        Some(Finish { reason: FinishReason::Stopped, .. }) => text.text("stopped, no winner"),
        Some(Finish { winner: Some(seat), .. }) => text.text("winner ").name(&view.players[seat]),
        Some(Finish { winner: None, .. }) => text.text("a draw"),
        None => text.text("not finished"),
    }
}

/// Plain text in which `…` spans become code segments.
pub fn with_code(message: &str) -> RichText {
    let mut text = RichText::new();
    for (i, part) in message.split('`').enumerate() {
        text = if i % 2 == 1 { text.code(part) } else { text.text(part) };
    }
    text
}

fn element(text: RichText, e: Element) -> RichText {
    text.coloured(format!("{}{}", e.symbol(), e.name()), e.hue())
}

fn token(text: RichText, t: Token) -> RichText {
    match t {
        Token::Element(e) => element(text, e),
        Token::Preconditioning(p) => text.bold(p.name()),
        Token::End => text.italic("End"),
    }
}

fn tokens(mut text: RichText, list: &[Token]) -> RichText {
    if list.is_empty() {
        return text.italic("nothing");
    }
    for (i, t) in list.iter().enumerate() {
        if i > 0 {
            text = text.text(" ");
        }
        text = token(text, *t);
    }
    text
}

fn elements(mut text: RichText, list: &[Element], joiner: &str) -> RichText {
    for (i, e) in list.iter().enumerate() {
        if i > 0 {
            text = text.text(joiner);
        }
        text = element(text, *e);
    }
    text
}

/// A pool as `💧8 🔥8 ⚡8 💨8 🪨8 🕳4`.
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
fn track(text: RichText, view: &DuelView, value: i64) -> RichText {
    let players = &view.players;
    match value {
        0 => text.bold("even (0)"),
        v if v > 0 => text.bold(format!("{v} toward ")).name(&players[0]),
        v => text.bold(format!("{} toward ", v.unsigned_abs())).name(&players[1]),
    }
}

/// `alice's `, the player as a name segment.
fn possessive(text: RichText, player: &PlayerId) -> RichText {
    text.name(player).text("'s ")
}

fn seal(text: RichText, player: &PlayerId, seal: &Seal) -> RichText {
    let text =
        possessive(text, player).text(format!("first {} element position(s) may not be ", seal.positions));
    elements(text, &seal.elements, " or ")
}

/// The seals in force, as "alice's first 1 element position(s) may not be …; bob's …."
/// (None when there are none).
fn seals(mut text: RichText, view: &DuelView) -> Option<RichText> {
    let players = &view.players;
    let sealed: Vec<(usize, &Seal)> = view.seals.iter().enumerate().filter(|(_, s)| !s.is_none()).collect();
    if sealed.is_empty() {
        return None;
    }
    for (i, (seat, s)) in sealed.into_iter().enumerate() {
        if i > 0 {
            text = text.text("; ");
        }
        text = seal(text, &players[seat], s);
    }
    Some(text.text("."))
}

fn minutes(seconds: i64) -> String {
    if seconds % 60 == 0 { format!("{} min", seconds / 60) } else { format!("{seconds} s") }
}

/// The message when the table opens.
fn opening(view: &DuelView) -> RichText {
    let [a, b] = &view.players;
    let [wa, wb] = &view.wizards;
    RichText::new()
        .text("⚔ Duel! ")
        .mention(a)
        .text(format!(" ({wa}) vs "))
        .mention(b)
        .text(format!(
            " ({wb}). The track starts at 0; push it to 30 on your side to win (RULES D-1). Round 1 begins: \
             send your spell to me privately, e.g. "
        ))
        .code("/msg <bot> !cast surge fire wind end")
        .text(format!(
            " — tokens are placed one per step and revealed together; a step waits at most {}. ",
            minutes(view.step_timeout_secs)
        ))
        .code("!help cast")
        .text(" lists the tokens, ")
        .code("!status")
        .text(" shows the duel.")
}

/// What `events` say to a destination shown `presentation`, each message to its event's
/// audience (see the module doc for the two forms). A text event is said as it is.
pub fn events(events: &[Event], presentation: &Presentation) -> Vec<Announcement> {
    let compact = presentation.form == Form::Compact;
    let news = |i: usize| events.get(i).and_then(Event::get::<DuelNews>);
    let mut out = Vec::new();
    // The steps revealed so far in a run of `Step` events, for the compact form's line.
    let mut steps: Vec<(u32, u32, &[PlayerId; 2], &[Revealed; 2])> = Vec::new();
    for (i, told) in events.iter().enumerate() {
        let to = told.to.clone();
        let Some(event) = told.get::<DuelNews>() else {
            if let Some(text) = told.get::<RichText>() {
                out.push(Announcement::to(to, text.clone()));
            }
            continue;
        };
        match event {
            DuelNews::Opened { view } => out.push(Announcement::to(to, opening(view))),
            DuelNews::Queued { round, spell } => {
                let text = RichText::new().text(format!("Queued. Your spell for round {round}: "));
                let text = tokens(text, spell);
                let text = if spell.last() == Some(&Token::End) {
                    text.text(". Your tokens are placed one per step and revealed with your opponent's.")
                } else {
                    text.text(". Add more with ")
                        .code("!cast …")
                        .text(" and finish with ")
                        .code("end")
                        .text(".")
                };
                out.push(Announcement::to(to, text));
            }
            DuelNews::Step { round, step, players, placements } => {
                if compact {
                    steps.push((*round, *step, players, placements));
                } else {
                    let mut text = RichText::new().text(format!("Round {round}, step {step}: "));
                    for (seat, placement) in placements.iter().enumerate() {
                        if seat > 0 {
                            text = text.text(" · ");
                        }
                        text = step_placement(text.name(&players[seat]).text(" "), placement);
                    }
                    out.push(Announcement::to(to, text));
                }
            }
            DuelNews::Dropped { interrupted, tokens: dropped } => {
                let why = if *interrupted {
                    "Your concentration broke and your spell ended; these queued tokens were dropped: "
                } else {
                    "The step timed out; these queued tokens were dropped: "
                };
                out.push(Announcement::to(to, tokens(RichText::new().text(why), dropped).text(".")));
            }
            DuelNews::Settled { round, view } => {
                if compact {
                    out.push(Announcement::to(to, compact_settlement(view, round)));
                } else {
                    out.extend(
                        settlement(view, round).into_iter().map(|text| Announcement::to(to.clone(), text)),
                    );
                }
            }
            DuelNews::RoundStarted { round, deadline, current, view } => {
                if compact {
                    // A step's wait rather than a timestamp (which reads badly in a chat
                    // line); the seals in force were the full form's last words of the
                    // settlement.
                    let mut text = RichText::new()
                        .text(format!("Round {round} begins: send your spell to me privately ("))
                        .code("!cast …")
                        .text(format!("); each step waits at most {}.", minutes(view.step_timeout_secs)));
                    if *current && let Some(seals) = seals(RichText::new(), view) {
                        text = text.text(" Seals (RULES D-10): ").append(seals);
                    }
                    out.push(Announcement::to(to, text));
                } else {
                    out.push(Announcement::to(to, round_started(*round, *deadline)));
                }
            }
            DuelNews::Finished { finish, view } => out.push(Announcement::to(to, finished(view, finish))),
            DuelNews::Stopped { by, view } => out.push(Announcement::to(to, stopped(view, by))),
            DuelNews::Status { view, round } => {
                out.extend(
                    status_lines(view, round).into_iter().map(|line| Announcement::to(to.clone(), line)),
                );
            }
            DuelNews::Queue { tokens: queue } => out.push(Announcement::to(
                to,
                tokens(RichText::new().text("Your queued tokens (only you see this): "), queue).text("."),
            )),
        }
        // A run of steps ends at the first news after it that is neither a step of the
        // same round nor a private note about one (the compact line comes after those).
        if let Some(&(round, ..)) = steps.last() {
            let run_goes_on = match news(i + 1) {
                Some(DuelNews::Dropped { .. }) => true,
                Some(DuelNews::Step { round: next, .. }) => *next == round,
                _ => false,
            };
            if !run_goes_on {
                out.push(Announcement::table(compact_steps(&steps)));
                steps.clear();
            }
        }
    }
    out
}

fn step_placement(text: RichText, placement: &Revealed) -> RichText {
    if placement.tokens.is_empty() {
        return text.italic("(spell complete)");
    }
    placed(text, placement)
}

/// The tokens of a placement with what happened to them (a timeout, a concentration
/// check).
fn placed(text: RichText, placement: &Revealed) -> RichText {
    let mut text = tokens(text, &placement.tokens);
    if placement.timed_out {
        text = text.italic(" (timed out, RULES D-9)");
    }
    if let Some(check) = placement.check {
        text = if check.passed {
            text.text(format!(" (concentration: rolled {}, needs {}+ ✓)", check.roll, check.need))
        } else {
            text.text(format!(
                 " (concentration: rolled {}, needed {}+ ✗ — the element is discarded but spent, and the spell ends)",
                check.roll, check.need
            ))
        };
    }
    text
}

/// The compact form of a run of steps of one round: "Round 1, steps 0–5: alice Power
/// Surge 🔥Fire End · bob Power Surge 💧Water End" (or ", step 3:" for one step), each
/// wizard's tokens in the order placed.
fn compact_steps(steps: &[(u32, u32, &[PlayerId; 2], &[Revealed; 2])]) -> RichText {
    let (Some((round, first, players, _)), Some((_, last, ..))) = (steps.first(), steps.last()) else {
        return RichText::new();
    };
    let mut text = if first == last {
        RichText::new().text(format!("Round {round}, step {first}: "))
    } else {
        RichText::new().text(format!("Round {round}, steps {first}–{last}: "))
    };
    for (seat, player) in players.iter().enumerate() {
        if seat > 0 {
            text = text.text(" · ");
        }
        text = text.name(player);
        let mut any = false;
        for placement in steps.iter().map(|(.., placements)| &placements[seat]) {
            if !placement.tokens.is_empty() {
                text = placed(text.text(" "), placement);
                any = true;
            }
        }
        if !any {
            text = text.text(" ").italic("(spell complete)");
        }
    }
    text
}

/// The spell a record holds, as cast (its tokens start with the pre-conditioning).
fn as_cast(record: &SpellRecord) -> Option<Spell> {
    let (first, rest) = record.tokens.split_first()?;
    Some(Spell::new(first.preconditioning()?, rest.iter().filter_map(|t| t.element()).collect()))
}

/// "Full Counter fails: at position 1 💧Water is not opposite alice's 🪨Earth (RULES D-6); ".
fn counter_failed(text: RichText, opponent: &PlayerId, failure: CounterFailure) -> RichText {
    let text = text.text("Full Counter fails: ");
    match failure {
        CounterFailure::Level { counter, target } => {
            possessive(text.text(format!("level {counter} is below ")), opponent)
                .text(format!("{target} (RULES D-7); "))
        }
        CounterFailure::NotOpposite { position, counter, target } => {
            let text = text.text(format!("at position {} ", position.saturating_add(1)));
            let text = match counter {
                Some(mine) => element(text, mine).text(" is not opposite "),
                None => text.text("it has no element against "),
            };
            element(possessive(text, opponent), target).text(" (RULES D-6); ")
        }
    }
}

/// "alice's Void removes bob's ⚡Thunder at position 2 (RULES D-11); ".
fn removals(text: RichText, players: [&PlayerId; 2], spell: &SpellRecord) -> RichText {
    let [owner, remover] = players;
    let removed = &spell.outcome.removed;
    let elements: Vec<Element> = spell.tokens.iter().filter_map(|t| t.element()).collect();
    let verb = if removed.len() == 1 { "Void removes" } else { "Voids remove" };
    let mut text = possessive(possessive(text, remover).text(format!("{verb} ")), owner);
    for (i, position) in removed.iter().enumerate() {
        if i > 0 {
            text = text.text(if i + 1 == removed.len() { " and " } else { ", " });
        }
        if let Some(e) = usize::try_from(*position).ok().and_then(|p| elements.get(p)) {
            text = element(text, *e).text(" ");
        }
        text = text.text(format!("at position {}", position.saturating_add(1)));
    }
    text.text(" (RULES D-11); ")
}

fn spell_line(view: &DuelView, record: &Settled, seat: usize) -> RichText {
    let players = &view.players;
    let spell = &record.spells[seat];
    let mut text = tokens(RichText::new().name(&players[seat]).text(": "), &spell.tokens);
    if spell.interrupted {
        text = text.text(" (interrupted)");
    }
    outcome(text.text(" → "), view, record, seat).text(".")
}

/// What a seat's spell came to: "level 4: base 16 + surge 8 = power 24; attribute
/// 🔥Fire", after any Full Counter and Void, or "countered by …".
fn outcome(text: RichText, view: &DuelView, record: &Settled, seat: usize) -> RichText {
    let players = &view.players;
    let spell = &record.spells[seat];
    let o = &spell.outcome;
    let mut text = text;
    if o.countered {
        return possessive(text.text("countered by "), &players[1 - seat])
            .text("Full Counter: counts as not cast, power 0 (RULES D-7)");
    }
    if o.counter_succeeded {
        text = text.text("Full Counter succeeds (RULES D-7); ");
    } else if let (Some(mine), Some(theirs)) = (as_cast(spell), as_cast(&record.spells[1 - seat]))
        && let Some(failure) = counter_failure(&mine, &theirs)
    {
        text = counter_failed(text, &players[1 - seat], failure);
    }
    if !o.removed.is_empty() {
        text = removals(text, [&players[seat], &players[1 - seat]], spell);
    }
    text = text.text(format!("level {}: base {}", o.level, o.base));
    let pre = spell.tokens.first().and_then(|t| t.preconditioning());
    if o.boost > 0 {
        text = text.text(match pre {
            Some(Preconditioning::Counter) => " ×2 (Full Counter at equal level)".to_owned(),
            _ => format!(" + surge {}", o.boost),
        });
    }
    if o.explosion > 0 {
        text = text.text(format!(" + explosion {}", o.explosion));
    }
    if o.favour > 0 {
        text = text.text(format!(" + favour {}", o.favour));
    }
    text = text.text(" = power ").bold(o.power.to_string());
    if !o.attribute.is_empty() {
        text = elements(text.text("; attribute "), &o.attribute, "+");
    }
    text
}

fn settlement(view: &DuelView, record: &Settled) -> Vec<RichText> {
    let mut out = vec![RichText::new().text(format!("Round {} settles.", record.number))];
    for seat in 0..2 {
        out.push(spell_line(view, record, seat));
    }
    let text = track_moves(RichText::new(), view, record).text(".");
    // After the duel's last round there is no next round to seal.
    let text = if view.finish.is_some() {
        text
    } else {
        match seals(RichText::new(), view) {
            Some(seals) => text.text(" Seals next round (RULES D-10): ").append(seals),
            None => text.text(" No seals next round."),
        }
    };
    out.push(text);
    out
}

/// "Track moves 7 toward bob (alice 33 − bob 40); now 7 toward bob".
fn track_moves(text: RichText, view: &DuelView, record: &Settled) -> RichText {
    let players = &view.players;
    let [p0, p1] = [&record.spells[0].outcome.power, &record.spells[1].outcome.power];
    let text = text.text("Track moves ");
    let text = match p0.cmp(p1) {
        std::cmp::Ordering::Greater => text.text(format!("{} toward ", p0 - p1)).name(&players[0]),
        std::cmp::Ordering::Less => text.text(format!("{} toward ", p1 - p0)).name(&players[1]),
        std::cmp::Ordering::Equal => text.text("not at all"),
    };
    let text = text
        .text(" (")
        .name(&players[0])
        .text(format!(" {p0} − "))
        .name(&players[1])
        .text(format!(" {p1}); now "));
    track(text, view, record.track_after)
}

/// The compact form of a settlement, on one line: "Round 1 settles: alice (interrupted)
/// → level 4: … = power 40 · bob → … = power 24. Track moves 16 toward alice (…); now
/// 25 toward alice." The tokens were on the steps' line; the seals come with the next
/// round's start.
fn compact_settlement(view: &DuelView, record: &Settled) -> RichText {
    let players = &view.players;
    let mut text = RichText::new().text(format!("Round {} settles: ", record.number));
    for (seat, player) in players.iter().enumerate() {
        if seat > 0 {
            text = text.text(" · ");
        }
        text = text.name(player);
        if record.spells[seat].interrupted {
            text = text.text(" (interrupted)");
        }
        text = outcome(text.text(" → "), view, record, seat);
    }
    track_moves(text.text(". "), view, record).text(".")
}

fn round_started(round: u32, deadline: Timestamp) -> RichText {
    RichText::new()
        .text(format!("Round {round} begins: send your spell to me privately ("))
        .code("!cast …")
        .text(format!("); step 0 times out at {deadline}."))
}

fn finished(view: &DuelView, finish: &Finish) -> RichText {
    let players = &view.players;
    let pools = &view.pools;
    let text = RichText::new().text("🏁 The duel is over: ");
    let text = match finish.reason {
        FinishReason::Track => track(text.text("the track reached "), view, view.track).text(" (RULES D-1)"),
        FinishReason::PoolEmpty => {
            let mut text = text;
            for (i, seat) in (0..2).filter(|s| pools[*s].is_empty()).enumerate() {
                if i > 0 {
                    text = text.text(" and ");
                }
                text = text.name(&players[seat]).text("'s");
            }
            track(text.text(" pool is empty (RULES D-2); the track is "), view, view.track)
        }
        FinishReason::Conceded => match finish.winner {
            Some(winner) => text.name(&players[1 - winner]).text(" conceded"),
            None => text.text(" conceded"),
        },
        FinishReason::Abandoned => track(
            text.text("neither wizard cast anything this round, so the duel is abandoned; the track is "),
            view,
            view.track,
        ),
        FinishReason::Stopped => track(text.text("it was stopped; the track is "), view, view.track),
    };
    let text = text.text(". ");
    let text = match (finish.reason, finish.winner) {
        (FinishReason::Stopped, _) => text.text("There is no winner."),
        (_, Some(seat)) => text.text("🏆 ").mention(&players[seat]).text(" wins!"),
        (_, None) => text.text("It is a draw."),
    };
    text.text(" Start another with ").code("!duel <player> [wizard]").text(".")
}

/// "🛑 carol stopped the Duel; no winner. …"
fn stopped(view: &DuelView, by: &PlayerId) -> RichText {
    let text = RichText::new().text("🛑 ").mention(by).text(" stopped the Duel; no winner (the track was ");
    track(text, view, view.track).text("). Start another with ").code("!duel <player> [wizard]").text(".")
}

/// The status lines of `duel`: public facts only, plus (privately) the asker's own
/// queue.
pub fn status(duel: &Duel, private_to: Option<&PlayerId>) -> Vec<RichText> {
    let mut told = vec![Event::table(news::status(duel))];
    if let Some(asker) = private_to
        && let Some(seat) = duel.seat(asker)
    {
        let tokens = duel.round().casters[seat].queue.iter().copied().collect();
        told.push(Event::player(asker, DuelNews::Queue { tokens }));
    }
    events(&told, &Presentation::default()).into_iter().map(|a| a.text).collect()
}

/// The public status lines.
fn status_lines(view: &DuelView, round: &RoundView) -> Vec<RichText> {
    let players = &view.players;
    let wizards = &view.wizards;
    let mut lines = Vec::new();
    let mut head = RichText::new()
        .text("Duel: ")
        .name(&players[0])
        .text(format!(" ({}) vs ", wizards[0]))
        .name(&players[1])
        .text(format!(" ({}). ", wizards[1]));
    if view.finish.is_some() {
        head = result(head.text("Finished: "), view).text(". ");
    } else {
        head = head.text(format!("Round {}, step {}. ", round.number, round.step));
    }
    lines.push(track(head.text("Track: "), view, view.track).text(" (30 wins)."));

    let mut pools = RichText::new().text("Pools: ");
    for (seat, (player, held)) in players.iter().zip(&view.pools).enumerate() {
        if seat > 0 {
            pools = pools.text(" · ");
        }
        pools = pool(pools.name(player).text(" "), held);
    }
    lines.push(pools.text("."));

    if view.finish.is_none()
        && let Some(seals) = seals(RichText::new().text("Seals this round (RULES D-10): "), view)
    {
        lines.push(seals);
    }

    if view.finish.is_none() {
        // What has been placed was revealed step by step, so it may be shown to all.
        let mut text = RichText::new().text("This round so far: ");
        let mut waiting = Vec::new();
        for (seat, placed) in round.placed.iter().enumerate() {
            if seat > 0 {
                text = text.text(" · ");
            }
            text = tokens(text.name(&players[seat]).text(" "), placed);
            if round.complete[seat] {
                text = text.italic(" (complete)");
            } else if round.waiting[seat] {
                waiting.push(&players[seat]);
            }
        }
        if let Some(deadline) = round.deadline {
            text = text.text(format!(". Step {} waits for ", round.step));
            for (i, player) in waiting.into_iter().enumerate() {
                if i > 0 {
                    text = text.text(" and ");
                }
                text = text.name(player);
            }
            text = text.text(format!(" (times out at {deadline})."));
        }
        lines.push(text);
    }
    lines
}

/// The wizard list for `!wizards`.
pub fn wizard_list<'a>(wizards: impl Iterator<Item = &'a Wizard>) -> RichText {
    let mut text = RichText::new().text("Wizards: ");
    for (i, wizard) in wizards.enumerate() {
        if i > 0 {
            text = text.text(" · ");
        }
        text = text.bold(wizard.name.as_str());
        if wizard.house {
            text = text.italic(" (house)");
        }
        text = pool(text.text(" "), &wizard.pool);
        if wizard.favours.is_empty() {
            text = text.text(", no favours");
        } else {
            text = text.text(", favours");
            for favour in &wizard.favours {
                text = element(text.text(" "), favour.attribute).text(format!(" +{}", favour.bonus));
            }
        }
        if !wizard.description.is_empty() {
            text = text.text(format!(" — {}", wizard.description));
        }
    }
    // A description may end its own sentence.
    let stop = if text.plain().ends_with(['.', '!', '?']) { " " } else { ". " };
    text.text(stop)
        .text("Choose with ")
        .code("!duel <player> <wizard>")
        .text(" or ")
        .code("!accept <wizard>")
        .text(".")
}
