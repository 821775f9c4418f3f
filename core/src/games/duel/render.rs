//! Duel news and refusals as rich text, one line per message, in the reader's language
//! (the catalogue `locales/*/duel.ftl`). Rendering reads only the [`DuelNews`] events
//! (never the duel), so who sees what was settled when the events were made
//! ([`super::news`]: a step's tokens reach the table only once revealed; a queue only
//! ever its owner).
//!
//! A round is told in two forms ([`Form`], a destination's [`Presentation`]). The full
//! form (Matrix, the console) gives each step its line, then the settlement's heading,
//! one line per spell with its tokens, and the track's move: about ten lines. The compact
//! form (IRC, where a real network's flood control sends a line per 2 s) says the same in
//! three: the steps revealed together on one line, both spells' results and the track's
//! move on the next, and the next round's start with the seals in force on the last.
//!
//! - [`words`]: elements, tokens, pools, the track, seals, lists.
//! - [`settlement`]: a settled round.
//! - [`status`]: `!status`, results, `!wizards`.
//! - [`refusal`]: the Duel's refusals.

mod refusal;
mod settlement;
mod status;
mod words;

pub use refusal::{error, error_in, refusal, refusal_in, with_code};
pub use words::pool;

use super::engine::{Duel, Finish, FinishReason};
use super::news::{self, DuelNews, DuelView, Revealed};
use super::token::Token;
use super::wizard::Wizards;
use crate::event::{Event, Presentation};
use crate::ids::PlayerId;
use crate::language::Language;
use crate::locale::Args;
use crate::plugin::{Announcement, Form};
use crate::text::RichText;
use words::{italic, say, seals, tokens, track, wait};

/// The message when the table opens: both players mentioned (the bot waits for both),
/// told where to cast as their network has it (`presentation.whisper`).
fn opening(presentation: &Presentation, view: &DuelView) -> RichText {
    let language = presentation.language;
    let [a, b] = &view.players;
    let [wa, wb] = &view.wizards;
    let args = whispered(presentation, Args::new())
        .mention("first", a)
        .text("first-wizard", super::wizard::name_in(wa, language))
        .mention("second", b)
        .text("second-wizard", super::wizard::name_in(wb, language))
        .text("wait", wait(language, view.step_timeout_secs));
    say(language, "duel-opened", args)
}

/// What each player is told privately when the table opens: where to cast, in the private
/// chat itself (sending it is what opens a Matrix player's direct chat with the bot).
fn opening_private(language: Language, view: &DuelView) -> Vec<Announcement> {
    (0..2)
        .map(|seat| {
            let args = Args::new()
                .name("opponent", &view.players[1 - seat])
                .text("wizard", super::wizard::name_in(&view.wizards[seat], language));
            Announcement::to(
                crate::plugin::Audience::Player(view.players[seat].clone()),
                say(language, "duel-opened-private", args),
            )
        })
        .collect()
}

/// `args` with how the reader sends the bot a private message (`$whisper`) and the bot's
/// name for `/msg` (`$bot`).
fn whispered(presentation: &Presentation, args: Args) -> Args {
    args.word("whisper", presentation.whisper.word()).bot("bot")
}

/// What `events` say to a destination shown `presentation`, each message to its event's
/// audience (see the module doc for the two forms). A text event is said as it is.
pub fn events(events: &[Event], presentation: &Presentation) -> Vec<Announcement> {
    let compact = presentation.form == Form::Compact;
    let language = presentation.language;
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
            DuelNews::Opened { view } => {
                out.push(Announcement::to(to, opening(presentation, view)));
                out.extend(opening_private(language, view));
            }
            DuelNews::Queued { round, spell } => {
                let id = if spell.last() == Some(&Token::End) {
                    "duel-queued-complete"
                } else {
                    "duel-queued-open"
                };
                let args =
                    Args::new().num("round", *round).rich("tokens", tokens(language, RichText::new(), spell));
                out.push(Announcement::to(to, say(language, id, args)));
            }
            DuelNews::Step { round, step, players, placements } => {
                if compact {
                    steps.push((*round, *step, players, placements));
                } else {
                    let mut placed = RichText::new();
                    for (seat, placement) in placements.iter().enumerate() {
                        if seat > 0 {
                            placed = placed.text(" · ");
                        }
                        placed = step_placement(language, placed.name(&players[seat]).text(" "), placement);
                    }
                    let args = Args::new().num("round", *round).num("step", *step).rich("placed", placed);
                    out.push(Announcement::to(to, say(language, "duel-step", args)));
                }
            }
            DuelNews::Dropped { interrupted, tokens: dropped } => {
                let id = if *interrupted { "duel-dropped-interrupted" } else { "duel-dropped-timed-out" };
                let args = Args::new().rich("tokens", tokens(language, RichText::new(), dropped));
                out.push(Announcement::to(to, say(language, id, args)));
            }
            DuelNews::Settled { round, view } => {
                if compact {
                    out.push(Announcement::to(to, settlement::compact_settlement(language, view, round)));
                } else {
                    out.extend(
                        settlement::settlement(language, view, round)
                            .into_iter()
                            .map(|text| Announcement::to(to.clone(), text)),
                    );
                }
            }
            DuelNews::RoundStarted { round, current, view, .. } => {
                if compact {
                    // A step's wait rather than a timestamp (which reads badly in a chat
                    // line); the seals in force were the full form's last words of the
                    // settlement.
                    let sealed = match seals(language, view) {
                        Some(seals) if *current => {
                            say(language, "duel-round-seals", Args::new().rich("seals", seals))
                        }
                        _ => RichText::new(),
                    };
                    let args = whispered(presentation, Args::new())
                        .num("round", *round)
                        .text("wait", wait(language, view.step_timeout_secs))
                        .rich("seals", sealed);
                    out.push(Announcement::to(to, say(language, "duel-round-begins-compact", args)));
                } else {
                    out.push(Announcement::to(to, round_started(presentation, *round, view)));
                }
            }
            DuelNews::Finished { finish, view } => {
                out.push(Announcement::to(to, finished(language, view, finish)))
            }
            DuelNews::Stopped { by, view } => out.push(Announcement::to(to, stopped(language, view, by))),
            DuelNews::Status { view, round } => {
                out.extend(
                    status::status_lines(language, view, round)
                        .into_iter()
                        .map(|line| Announcement::to(to.clone(), line)),
                );
            }
            DuelNews::Queue { tokens: queue } => {
                let args = Args::new().rich("tokens", tokens(language, RichText::new(), queue));
                out.push(Announcement::to(to, say(language, "duel-queue", args)));
            }
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
                out.push(Announcement::table(compact_steps(language, &steps)));
                steps.clear();
            }
        }
    }
    out
}

fn spell_complete(language: Language, text: RichText) -> RichText {
    text.append(italic(say(language, "duel-spell-complete", Args::new())))
}

fn step_placement(language: Language, text: RichText, placement: &Revealed) -> RichText {
    if placement.tokens.is_empty() {
        return spell_complete(language, text);
    }
    placed(language, text, placement)
}

/// The tokens of a placement with what happened to them (a timeout, a concentration
/// check).
fn placed(language: Language, text: RichText, placement: &Revealed) -> RichText {
    let mut text = tokens(language, text, &placement.tokens);
    if placement.timed_out {
        text = text.append(italic(say(language, "duel-timed-out", Args::new())));
    }
    if let Some(check) = placement.check {
        let id = if check.passed { "duel-check-passed" } else { "duel-check-failed" };
        text = text.append(say(language, id, Args::new().num("roll", check.roll).num("need", check.need)));
    }
    text
}

/// The compact form of a run of steps of one round: "Round 1, steps 0–5: alice Power
/// Surge 🔥Fire End · bob Power Surge 💧Water End" (or ", step 3:" for one step), each
/// wizard's tokens in the order placed.
fn compact_steps(language: Language, steps: &[(u32, u32, &[PlayerId; 2], &[Revealed; 2])]) -> RichText {
    let (Some((round, first, players, _)), Some((_, last, ..))) = (steps.first(), steps.last()) else {
        return RichText::new();
    };
    let mut placed_all = RichText::new();
    for (seat, player) in players.iter().enumerate() {
        if seat > 0 {
            placed_all = placed_all.text(" · ");
        }
        placed_all = placed_all.name(player);
        let mut any = false;
        for placement in steps.iter().map(|(.., placements)| &placements[seat]) {
            if !placement.tokens.is_empty() {
                placed_all = placed(language, placed_all.text(" "), placement);
                any = true;
            }
        }
        if !any {
            placed_all = spell_complete(language, placed_all.text(" "));
        }
    }
    let args = Args::new().num("round", *round).rich("placed", placed_all);
    if first == last {
        say(language, "duel-step", args.num("step", *first))
    } else {
        say(language, "duel-steps", args.num("first", *first).num("last", *last))
    }
}

/// "Round 2 begins: alice, bob, send your spell …": the one line of a round that
/// mentions the players, for the bot waits for both.
fn round_started(presentation: &Presentation, round: u32, view: &DuelView) -> RichText {
    let language = presentation.language;
    let args = whispered(presentation, Args::new())
        .num("round", round)
        .text("wait", wait(language, view.step_timeout_secs))
        .mention("first", &view.players[0])
        .mention("second", &view.players[1]);
    say(language, "duel-round-begins", args)
}

fn finished(language: Language, view: &DuelView, finish: &Finish) -> RichText {
    let players = &view.players;
    let pools = &view.pools;
    let the_track = || track(language, view, view.track);
    let reason = match finish.reason {
        FinishReason::Track => say(language, "duel-over-track", Args::new().rich("track", the_track())),
        FinishReason::PoolEmpty => {
            let dry: Vec<&PlayerId> = (0..2).filter(|s| pools[*s].is_empty()).map(|s| &players[s]).collect();
            match dry.as_slice() {
                [one] => say(
                    language,
                    "duel-over-pool",
                    Args::new().name("player", one).rich("track", the_track()),
                ),
                _ => say(
                    language,
                    "duel-over-pools",
                    Args::new()
                        .name("first", &players[0])
                        .name("second", &players[1])
                        .rich("track", the_track()),
                ),
            }
        }
        FinishReason::Conceded => {
            let loser = match finish.winner {
                Some(winner) => RichText::new().name(&players[1 - winner]),
                None => RichText::new(),
            };
            say(language, "duel-over-conceded", Args::new().rich("player", loser))
        }
        FinishReason::Abandoned => {
            say(language, "duel-over-abandoned", Args::new().rich("track", the_track()))
        }
        FinishReason::Stopped => say(language, "duel-over-stopped", Args::new().rich("track", the_track())),
    };
    let result = match (finish.reason, finish.winner) {
        (FinishReason::Stopped, _) => say(language, "duel-no-winner", Args::new()),
        (_, Some(seat)) => say(language, "duel-wins", Args::new().mention("player", &players[seat])),
        (_, None) => say(language, "duel-draw", Args::new()),
    };
    say(language, "duel-over", Args::new().rich("reason", reason).rich("result", result))
}

/// "🛑 carol stopped the Duel; no winner. …"
fn stopped(language: Language, view: &DuelView, by: &PlayerId) -> RichText {
    let args = Args::new().mention("player", by).rich("track", track(language, view, view.track));
    say(language, "duel-stopped", args)
}

/// The status lines of `duel` in English: public facts only, plus (privately) the
/// asker's own queue.
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

/// The wizard list for `!wizards`, in `language`.
pub fn wizard_list(language: Language, wizards: &Wizards) -> RichText {
    status::wizard_list(language, wizards)
}
