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
use spellbridge_core::Language;
use spellbridge_core::games::duel::{Element, Token};
use spellbridge_core::locale::Args;

use super::label;
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

/// The SVG of a Duel table's state (the snapshot's `state`), labelled in English.
pub fn svg(state: &serde_json::Value) -> Result<String, String> {
    svg_in(state, Language::En)
}

/// The SVG of a Duel table's state, labelled in `language`.
pub fn svg_in(state: &serde_json::Value, language: Language) -> Result<String, String> {
    let duel = Public::deserialize(state).map_err(|e| format!("not a Duel state: {e}"))?;
    if duel.players.len() != 2 {
        return Err(format!("a Duel state seats two players, this one {}", duel.players.len()));
    }
    let mut svg = Svg::new(WIDTH, HEIGHT, PAPER);
    heading(&mut svg, &duel, language);
    track(&mut svg, &duel, language);
    for seat in 0..2 {
        panel(&mut svg, &duel, seat, language);
    }
    Ok(svg.finish())
}

fn heading(svg: &mut Svg, duel: &Public, language: Language) {
    let (a, b) = (&duel.players[0], &duel.players[1]);
    let said = |id: &str, args: Args| label(language, id, args);
    svg.bold(20.0, 36.0, 24.0, INK, Anchor::Start, &said("board-label-duel", Args::new()));
    let versus = Args::new().text("first", clip(a, 24)).text("second", clip(b, 24));
    svg.text(90.0, 36.0, 18.0, MUTED, Anchor::Start, &said("board-label-versus", versus));
    let status = match (duel.finished, duel.winner.as_deref(), duel.finish_reason.as_deref()) {
        (true, Some("draw"), _) => said("board-label-draw", Args::new()),
        (true, Some(winner), _) => said("board-label-winner", Args::new().text("winner", clip(winner, 24))),
        (true, None, Some("stopped")) => said("board-label-stopped", Args::new()),
        (true, None, _) => said("board-label-finished", Args::new()),
        (false, _, _) => said("board-label-round", Args::new().num("round", duel.round.number)),
    };
    svg.bold(WIDTH as f64 - 20.0, 36.0, 20.0, INK, Anchor::End, &status);
}

fn track(svg: &mut Svg, duel: &Public, language: Language) {
    let (a, b) = (&duel.players[0], &duel.players[1]);
    let said = |id: &str, args: Args| label(language, id, args);
    let goal = |player: &str| said("board-label-goal", Args::new().text("player", clip(player, 20)));
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
    svg.text(TRACK_LEFT, TRACK_Y - 24.0, 12.0, MUTED, Anchor::Start, &goal(a));
    svg.bold(TRACK_RIGHT, TRACK_Y + 38.0, 15.0, INK, Anchor::Middle, &GOAL.to_string());
    svg.text(TRACK_RIGHT, TRACK_Y - 24.0, 12.0, MUTED, Anchor::End, &goal(b));
    let x = marker_x(duel.track);
    svg.circle(x, TRACK_Y, 11.0, MARKER, PANEL);
    let toward = |points: i64, player: &str| {
        said("board-label-toward", Args::new().num("points", points).text("player", clip(player, 20)))
    };
    let where_ = match duel.track {
        0 => said("board-label-even", Args::new()),
        t if t > 0 => toward(t, a),
        t => toward(-t, b),
    };
    let heading = said("board-label-track", Args::new().text("where", where_));
    svg.bold(WIDTH as f64 / 2.0, 70.0, 16.0, MARKER, Anchor::Middle, &heading);
}

fn panel(svg: &mut Svg, duel: &Public, seat: usize, language: Language) {
    let player = &duel.players[seat];
    let x = panel_x(seat);
    svg.card(x, PANEL_Y, PANEL_W, HEIGHT as f64 - PANEL_Y - 16.0, PANEL, LINE);
    svg.bold(x + 14.0, PANEL_Y + 28.0, 18.0, INK, Anchor::Start, &clip(player, 22));
    let wizard = match duel.wizards.get(player) {
        Some(wizard) => spellbridge_core::games::duel::wizard::name_in(wizard, language),
        None => label(language, "board-label-wizard", Args::new()),
    };
    svg.text(x + 14.0, PANEL_Y + 48.0, 13.0, MUTED, Anchor::Start, &clip(&wizard, 30));
    if !duel.finished {
        let cast = duel.round.casters.get(player).is_some_and(|c| c.acted);
        // Only *that* the wizard cast this round, never what.
        let cast =
            label(language, if cast { "board-label-cast" } else { "board-label-not-cast" }, Args::new());
        svg.text(x + PANEL_W - 14.0, PANEL_Y + 28.0, 13.0, MUTED, Anchor::End, &cast);
    }
    pool(svg, duel.pools.get(player), seat, language);
    // A finished game has no next spell to seal (issue 31: no stale seals).
    if !duel.finished {
        seal(svg, duel.seals.get(player), x, language);
    }
    last_spell(svg, duel, seat, x, language);
}

fn pool(svg: &mut Svg, pool: Option<&BTreeMap<Element, u32>>, seat: usize, language: Language) {
    for element in Element::ALL {
        let (cx, cy, w, h) = pool_chip(seat, element);
        svg.rect(cx, cy, w, h, palette::element(element));
        // A glyph (水) fills the chip; a name (Thunder) must fit its 50 pixels.
        let size = match language {
            Language::ZhCn if element == Element::Void => 15.0,
            Language::ZhCn => 20.0,
            Language::En => 11.0,
        };
        svg.text(cx + w / 2.0, cy + 24.0, size, ON_CHIP, Anchor::Middle, element.name_in(language));
        let count = pool.and_then(|p| p.get(&element)).copied().unwrap_or(0);
        svg.bold(cx + w / 2.0, cy + h - 7.0, 14.0, ON_CHIP, Anchor::Middle, &count.to_string());
    }
}

/// A small chip with an element's name in `language` (a glyph in Chinese, a word in
/// English), for seals and spells; returns its width.
fn glyph_chip(svg: &mut Svg, x: f64, y: f64, element: Element, language: Language) -> f64 {
    let name = element.name_in(language);
    let (width, size) = match language {
        Language::ZhCn => (28.0, if element == Element::Void { 11.0 } else { 17.0 }),
        // About 7 pixels a letter at 12 pixels.
        Language::En => (10.0 + 7.0 * name.chars().count() as f64, 12.0),
    };
    svg.rect(x, y, width, 28.0, palette::element(element));
    svg.text(x + width / 2.0, y + 19.0, size, ON_CHIP, Anchor::Middle, name);
    width
}

fn seal(svg: &mut Svg, seal: Option<&SealView>, x: f64, language: Language) {
    let y = PANEL_Y + 150.0;
    match seal.filter(|s| s.positions > 0 && !s.elements.is_empty()) {
        None => {
            let none = label(language, "board-label-no-seal", Args::new());
            svg.text(x + 14.0, y, 13.0, MUTED, Anchor::Start, &none);
        }
        Some(seal) => {
            let sealed = label(language, "board-label-sealed", Args::new().num("positions", seal.positions));
            svg.text(x + 14.0, y, 13.0, INK, Anchor::Start, &sealed);
            let mut cx = x + 200.0;
            for element in &seal.elements {
                cx += glyph_chip(svg, cx, y - 20.0, *element, language) + 4.0;
            }
        }
    }
}

fn last_spell(svg: &mut Svg, duel: &Public, seat: usize, x: f64, language: Language) {
    let y = PANEL_Y + 192.0;
    let said = |id: &str, args: Args| label(language, id, args);
    let Some(round) = duel.rounds.last() else {
        svg.text(x + 14.0, y, 13.0, MUTED, Anchor::Start, &said("board-label-no-round", Args::new()));
        return;
    };
    let player = &duel.players[seat];
    let Some(spell) = round.spells.get(player) else { return };
    let mut words =
        vec![said("board-label-spell", Args::new().num("round", round.round).num("power", spell.power))];
    if spell.level > 0 {
        words.push(said("board-label-level", Args::new().num("level", spell.level)));
    }
    if spell.countered {
        words.push(said("board-label-countered", Args::new()));
    }
    if spell.interrupted {
        words.push(said("board-label-interrupted", Args::new()));
    }
    svg.text(x + 14.0, y, 13.0, INK, Anchor::Start, &words.join(&said("board-label-separator", Args::new())));
    let mut cx = x + 14.0;
    let mut position = 0u32;
    for token in &spell.tokens {
        match serde_json::from_value::<Element>(serde_json::Value::String(token.clone())) {
            Ok(element) => {
                let width = glyph_chip(svg, cx, y + 10.0, element, language);
                if spell.removed.contains(&position) {
                    // Removed by the opponent's Void (RULES D-11).
                    svg.line((cx - 2.0, y + 40.0), (cx + width + 2.0, y + 8.0), INK, 3.0);
                }
                position += 1;
                cx += width + 4.0;
            }
            Err(_) => {
                let shown = typed(token, language);
                svg.text(cx, y + 30.0, 12.0, MUTED, Anchor::Start, shown);
                // A Latin letter is about 8 pixels wide here, a Chinese character 12.
                let width: f64 = shown.chars().map(|c| if c.is_ascii() { 8.0 } else { 12.0 }).sum();
                cx += width + 10.0;
            }
        }
        if cx > x + PANEL_W - 40.0 {
            break;
        }
    }
    if seat == 0 {
        let toward = |points: i64, player: &str| {
            said("board-label-toward", Args::new().num("points", points).text("player", clip(player, 16)))
        };
        let after = match round.track_after {
            0 => said("board-label-after-even", Args::new()),
            t if t > 0 => toward(t, &duel.players[0]),
            t => toward(-t, &duel.players[1]),
        };
        let after = said("board-label-after", Args::new().num("round", round.round).text("where", after));
        svg.text(WIDTH as f64 / 2.0, HEIGHT as f64 - 2.0, 11.0, MUTED, Anchor::Middle, &after);
    }
}

/// A token of a spell that is not an element (`surge`, `end`) as a player of `language`
/// types it (`迸发`, `协调`); an unknown word as it is.
fn typed(token: &str, language: Language) -> &str {
    Token::from_word(token).map_or(token, |t| t.typed_in(language))
}
