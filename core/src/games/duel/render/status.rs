//! The Duel's sheets: `!status` (public facts only, and privately the asker's own
//! queue), a finished duel's result, and the wizard list of `!wizards`.

use super::super::engine::{Finish, FinishReason};
use super::super::news::{DuelView, RoundView};
use super::super::wizard::{Wizards, name_in};
use super::words::{element, italic, list, pool, say, seals, tokens, track};
use crate::language::Language;
use crate::locale::Args;
use crate::text::RichText;

/// `winner alice`, `a draw` or `stopped, no winner` (as [`Duel::result_text`](super::super::Duel)),
/// the winner as a name segment.
pub(super) fn result(language: Language, view: &DuelView) -> RichText {
    match view.finish {
        Some(Finish { reason: FinishReason::Stopped, .. }) => {
            say(language, "duel-result-stopped", Args::new())
        }
        Some(Finish { winner: Some(seat), .. }) => {
            say(language, "duel-result-winner", Args::new().name("player", &view.players[seat]))
        }
        Some(Finish { winner: None, .. }) => say(language, "duel-result-draw", Args::new()),
        None => say(language, "duel-result-unfinished", Args::new()),
    }
}

/// The public status lines.
pub(super) fn status_lines(language: Language, view: &DuelView, round: &RoundView) -> Vec<RichText> {
    let players = &view.players;
    let state = if view.finish.is_some() {
        say(language, "duel-status-finished", Args::new().rich("result", result(language, view)))
    } else {
        say(language, "duel-status-round", Args::new().num("round", round.number).num("step", round.step))
    };
    let head = Args::new()
        .name("first", &players[0])
        .text("first-wizard", name_in(&view.wizards[0], language))
        .name("second", &players[1])
        .text("second-wizard", name_in(&view.wizards[1], language))
        .rich("state", state)
        .rich("track", track(language, view, view.track));
    let mut lines = vec![say(language, "duel-status-head", head)];

    let mut pools = RichText::new();
    for (seat, (player, held)) in players.iter().zip(&view.pools).enumerate() {
        if seat > 0 {
            pools = pools.text(" · ");
        }
        pools = pool(pools.name(player).text(" "), held);
    }
    lines.push(say(language, "duel-status-pools", Args::new().rich("pools", pools)));

    if view.finish.is_some() {
        return lines;
    }
    if let Some(seals) = seals(language, view) {
        lines.push(say(language, "duel-status-seals", Args::new().rich("seals", seals)));
    }
    // What has been placed was revealed step by step, so it may be shown to all.
    let mut placed = RichText::new();
    let mut waiting = Vec::new();
    for (seat, tokens_placed) in round.placed.iter().enumerate() {
        if seat > 0 {
            placed = placed.text(" · ");
        }
        placed = tokens(language, placed.name(&players[seat]).text(" "), tokens_placed);
        if round.complete[seat] {
            placed = placed.append(italic(say(language, "duel-status-complete", Args::new())));
        } else if round.waiting[seat] {
            waiting.push(RichText::new().name(&players[seat]));
        }
    }
    let waits = match round.deadline {
        Some(deadline) => say(
            language,
            "duel-status-waits",
            Args::new()
                .num("step", round.step)
                .rich("players", list(language, waiting))
                .text("deadline", super::words::when(language, deadline)),
        ),
        None => RichText::new(),
    };
    lines.push(say(language, "duel-status-so-far", Args::new().rich("placed", placed).rich("waits", waits)));
    lines
}

/// The wizard list for `!wizards`. A wizard's name and description are the config's own
/// words, said as they are (the description in `language` where the config gives one).
pub(super) fn wizard_list(language: Language, wizards: &Wizards) -> RichText {
    let mut text = RichText::new();
    for (i, wizard) in wizards.iter().enumerate() {
        if i > 0 {
            text = text.text(" · ");
        }
        text = text.bold(name_in(&wizard.name, language));
        if wizard.house {
            text = text.append(italic(say(language, "duel-wizard-house", Args::new())));
        }
        text = pool(text.text(" "), &wizard.pool);
        if wizard.favours.is_empty() {
            text = text.append(say(language, "duel-wizard-no-favours", Args::new()));
        } else {
            text = text.append(say(language, "duel-wizard-favours", Args::new()));
            for favour in &wizard.favours {
                text =
                    element(language, text.text(" "), favour.attribute).text(format!(" +{}", favour.bonus));
            }
        }
        let description = wizards.description_in(wizard, language);
        if !description.is_empty() {
            text = text.text(format!(" — {description}"));
        }
    }
    // A description may end its own sentence.
    let ended = if text.plain().ends_with(['.', '!', '?', '。', '！', '？']) { "yes" } else { "no" };
    say(language, "duel-wizards", Args::new().rich("wizards", text).word("ended", ended))
}
