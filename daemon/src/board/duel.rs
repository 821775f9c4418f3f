//! The Duel's board (RULES D-1 to D-13), drawn from the table's public snapshot: the
//! 30-point track with the marker and both goals, each wizard's pool, the seals in force
//! on their next spell, and the last settled round's two spells as element glyphs.
//!
//! Hidden moves never reach the picture: the current round is read only for *whether*
//! each wizard has cast (`acted`); the tokens a wizard queued and has not revealed (the
//! snapshot's `round.casters.*.queue`, and the elements placed in an unsettled round) are
//! not even read. A spell appears once its round settled and it was announced.

use std::collections::BTreeMap;

use serde::Deserialize;
use spellbridge_core::games::duel::Element;

use super::palette::{self, INK, LINE, MARKER, MUTED, ON_CHIP, PANEL, PAPER};
use super::svg::{Anchor, Svg, clip};

/// The picture's width.
pub const WIDTH: u32 = 800;
/// The picture's height.
pub const HEIGHT: u32 = 470;
/// The track's length to either side (RULES D-1).
pub const GOAL: i64 = 30;

const TRACK_LEFT: f64 = 70.0;
const TRACK_RIGHT: f64 = 730.0;
const TRACK_Y: f64 = 118.0;
const PANEL_Y: f64 = 178.0;
const PANEL_W: f64 = 370.0;
const CHIP: f64 = 50.0;
const CHIP_GAP: f64 = 8.0;

/// The public part of a Duel snapshot (CONTRACT.md `--state-json`).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Public {
    players: Vec<String>,
    wizards: BTreeMap<String, String>,
    track: i64,
    finished: bool,
    winner: Option<String>,
    finish_reason: Option<String>,
    pools: BTreeMap<String, BTreeMap<Element, u32>>,
    seals: BTreeMap<String, SealView>,
    rounds: Vec<RoundView>,
    round: CurrentRound,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct SealView {
    positions: u32,
    elements: Vec<Element>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RoundView {
    round: u32,
    spells: BTreeMap<String, SpellView>,
    track_after: i64,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct SpellView {
    tokens: Vec<String>,
    level: u32,
    power: u64,
    countered: bool,
    interrupted: bool,
    removed: Vec<u32>,
}

/// The round being played: its number, and for each wizard only whether they cast.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct CurrentRound {
    number: u32,
    casters: BTreeMap<String, Acted>,
}

/// All that is read of a wizard's casting in the current round.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Acted {
    acted: bool,
}

/// Where a seat's pool chip for `element` is drawn: x, y, width, height (tests read
/// pixels there).
pub fn pool_chip(seat: usize, element: Element) -> (f64, f64, f64, f64) {
    let index = Element::ALL.iter().position(|e| *e == element).unwrap_or(0) as f64;
    let x = panel_x(seat) + 14.0 + index * (CHIP + CHIP_GAP);
    (x, PANEL_Y + 72.0, CHIP, CHIP)
}

/// Where the track's marker is centred for a track value.
pub fn marker_x(track: i64) -> f64 {
    let middle = (TRACK_LEFT + TRACK_RIGHT) / 2.0;
    let per_point = (TRACK_RIGHT - TRACK_LEFT) / (2.0 * GOAL as f64);
    // Positive toward players[0], who sits on the left.
    middle - track.clamp(-GOAL, GOAL) as f64 * per_point
}

fn panel_x(seat: usize) -> f64 {
    if seat == 0 { 20.0 } else { WIDTH as f64 - 20.0 - PANEL_W }
}

/// The SVG of a Duel table's state (the snapshot's `state`).
pub fn svg(state: &serde_json::Value) -> Result<String, String> {
    let duel = Public::deserialize(state).map_err(|e| format!("not a Duel state: {e}"))?;
    if duel.players.len() != 2 {
        return Err(format!("a Duel state seats two players, this one {}", duel.players.len()));
    }
    let mut svg = Svg::new(WIDTH, HEIGHT, PAPER);
    heading(&mut svg, &duel);
    track(&mut svg, &duel);
    for seat in 0..2 {
        panel(&mut svg, &duel, seat);
    }
    Ok(svg.finish())
}

fn heading(svg: &mut Svg, duel: &Public) {
    let (a, b) = (&duel.players[0], &duel.players[1]);
    svg.bold(20.0, 36.0, 24.0, INK, Anchor::Start, "Duel");
    svg.text(90.0, 36.0, 18.0, MUTED, Anchor::Start, &format!("{} vs {}", clip(a, 24), clip(b, 24)));
    let status = match (duel.finished, duel.winner.as_deref(), duel.finish_reason.as_deref()) {
        (true, Some("draw"), _) => "Finished: a draw".to_owned(),
        (true, Some(winner), _) => format!("Finished: {} wins", clip(winner, 24)),
        (true, None, Some("stopped")) => "Stopped: no winner".to_owned(),
        (true, None, _) => "Finished".to_owned(),
        (false, _, _) => format!("Round {}", duel.round.number),
    };
    svg.bold(WIDTH as f64 - 20.0, 36.0, 20.0, INK, Anchor::End, &status);
}

fn track(svg: &mut Svg, duel: &Public) {
    let (a, b) = (&duel.players[0], &duel.players[1]);
    svg.line((TRACK_LEFT, TRACK_Y), (TRACK_RIGHT, TRACK_Y), LINE, 4.0);
    for point in (-GOAL..=GOAL).step_by(5) {
        let x = marker_x(point);
        let goal = point.abs() == GOAL;
        let half = if goal { 16.0 } else { 7.0 };
        svg.line(
            (x, TRACK_Y - half),
            (x, TRACK_Y + half),
            if goal { INK } else { LINE },
            if goal { 4.0 } else { 2.0 },
        );
        if !goal {
            svg.text(x, TRACK_Y + 24.0, 11.0, MUTED, Anchor::Middle, &point.abs().to_string());
        }
    }
    // The goals: players[0]'s on the left, players[1]'s on the right (RULES D-1).
    svg.bold(TRACK_LEFT, TRACK_Y + 38.0, 15.0, INK, Anchor::Middle, &GOAL.to_string());
    svg.text(TRACK_LEFT, TRACK_Y - 24.0, 12.0, MUTED, Anchor::Start, &format!("{}'s goal", clip(a, 20)));
    svg.bold(TRACK_RIGHT, TRACK_Y + 38.0, 15.0, INK, Anchor::Middle, &GOAL.to_string());
    svg.text(TRACK_RIGHT, TRACK_Y - 24.0, 12.0, MUTED, Anchor::End, &format!("{}'s goal", clip(b, 20)));
    let x = marker_x(duel.track);
    svg.circle(x, TRACK_Y, 11.0, MARKER, PANEL);
    let where_ = match duel.track {
        0 => "even (0)".to_owned(),
        t if t > 0 => format!("{t} toward {}", clip(a, 20)),
        t => format!("{} toward {}", -t, clip(b, 20)),
    };
    svg.bold(WIDTH as f64 / 2.0, 70.0, 16.0, MARKER, Anchor::Middle, &format!("Track: {where_}"));
}

fn panel(svg: &mut Svg, duel: &Public, seat: usize) {
    let player = &duel.players[seat];
    let x = panel_x(seat);
    svg.card(x, PANEL_Y, PANEL_W, HEIGHT as f64 - PANEL_Y - 16.0, PANEL, LINE);
    svg.bold(x + 14.0, PANEL_Y + 28.0, 18.0, INK, Anchor::Start, &clip(player, 22));
    let wizard = duel.wizards.get(player).map(String::as_str).unwrap_or("wizard");
    svg.text(x + 14.0, PANEL_Y + 48.0, 13.0, MUTED, Anchor::Start, &clip(wizard, 30));
    if !duel.finished {
        let cast = duel.round.casters.get(player).is_some_and(|c| c.acted);
        // Only *that* the wizard cast this round, never what.
        let label = if cast { "has cast" } else { "not cast yet" };
        svg.text(x + PANEL_W - 14.0, PANEL_Y + 28.0, 13.0, MUTED, Anchor::End, label);
    }
    pool(svg, duel.pools.get(player), seat);
    seal(svg, duel.seals.get(player), x);
    last_spell(svg, duel, seat, x);
}

fn pool(svg: &mut Svg, pool: Option<&BTreeMap<Element, u32>>, seat: usize) {
    for element in Element::ALL {
        let (cx, cy, w, h) = pool_chip(seat, element);
        svg.rect(cx, cy, w, h, palette::element(element));
        let size = if element == Element::Void { 15.0 } else { 20.0 };
        svg.text(cx + w / 2.0, cy + 24.0, size, ON_CHIP, Anchor::Middle, element.chinese());
        let count = pool.and_then(|p| p.get(&element)).copied().unwrap_or(0);
        svg.bold(cx + w / 2.0, cy + h - 7.0, 14.0, ON_CHIP, Anchor::Middle, &count.to_string());
    }
}

/// A small chip with an element's glyph, for seals and spells.
fn glyph_chip(svg: &mut Svg, x: f64, y: f64, element: Element) {
    svg.rect(x, y, 28.0, 28.0, palette::element(element));
    let size = if element == Element::Void { 11.0 } else { 17.0 };
    svg.text(x + 14.0, y + 20.0, size, ON_CHIP, Anchor::Middle, element.chinese());
}

fn seal(svg: &mut Svg, seal: Option<&SealView>, x: f64) {
    let y = PANEL_Y + 150.0;
    match seal.filter(|s| s.positions > 0 && !s.elements.is_empty()) {
        None => svg.text(x + 14.0, y, 13.0, MUTED, Anchor::Start, "No seal on the next spell"),
        Some(seal) => {
            let positions = if seal.positions == 1 {
                "the first position".to_owned()
            } else {
                format!("the first {} positions", seal.positions)
            };
            svg.text(x + 14.0, y, 13.0, INK, Anchor::Start, &format!("Sealed in {positions}:"));
            for (i, element) in seal.elements.iter().enumerate() {
                glyph_chip(svg, x + 200.0 + i as f64 * 32.0, y - 20.0, *element);
            }
        }
    }
}

fn last_spell(svg: &mut Svg, duel: &Public, seat: usize, x: f64) {
    let y = PANEL_Y + 192.0;
    let Some(round) = duel.rounds.last() else {
        svg.text(x + 14.0, y, 13.0, MUTED, Anchor::Start, "No round settled yet");
        return;
    };
    let player = &duel.players[seat];
    let Some(spell) = round.spells.get(player) else { return };
    let mut words = vec![format!("Round {}: power {}", round.round, spell.power)];
    if spell.level > 0 {
        words.push(format!("level {}", spell.level));
    }
    if spell.countered {
        words.push("countered".to_owned());
    }
    if spell.interrupted {
        words.push("interrupted".to_owned());
    }
    svg.text(x + 14.0, y, 13.0, INK, Anchor::Start, &words.join(" · "));
    let mut cx = x + 14.0;
    let mut position = 0u32;
    for token in &spell.tokens {
        match serde_json::from_value::<Element>(serde_json::Value::String(token.clone())) {
            Ok(element) => {
                glyph_chip(svg, cx, y + 10.0, element);
                if spell.removed.contains(&position) {
                    // Removed by the opponent's Void (RULES D-11).
                    svg.line((cx - 2.0, y + 40.0), (cx + 30.0, y + 8.0), INK, 3.0);
                }
                position += 1;
                cx += 32.0;
            }
            Err(_) => {
                svg.text(cx, y + 30.0, 12.0, MUTED, Anchor::Start, token);
                cx += 8.0 * token.chars().count() as f64 + 10.0;
            }
        }
        if cx > x + PANEL_W - 40.0 {
            break;
        }
    }
    if seat == 0 {
        let after = match round.track_after {
            0 => "even".to_owned(),
            t if t > 0 => format!("{t} toward {}", clip(&duel.players[0], 16)),
            t => format!("{} toward {}", -t, clip(&duel.players[1], 16)),
        };
        svg.text(
            WIDTH as f64 / 2.0,
            HEIGHT as f64 - 2.0,
            11.0,
            MUTED,
            Anchor::Middle,
            &format!("after round {}: {after}", round.round),
        );
    }
}
