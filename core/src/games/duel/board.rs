//! The Duel's board picture (RULES D-1 to D-13), drawn from a table's public view
//! ([`super::public::view`]) in the [`draw`](crate::draw) vocabulary: the 30-point track
//! with the marker and both goals, each wizard's pool, the seals in force on their next
//! spell, and the last settled round's two spells as element glyphs.
//!
//! Hidden moves never reach the picture: the public view holds of the current round
//! only *whether* each wizard has cast (`acted`), and this reads no more. A spell appears
//! once its round settled and it was announced.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::{Element, Token};
use crate::draw::{Anchor, Colour, Drawing, clip};
use crate::language::Language;
use crate::locale::{self, Args};

/// A label drawn in the picture, in `language` (`locales/*/board.ftl`, `board-label-…`).
fn label(language: Language, id: &str, args: Args) -> String {
    locale::text(language, id, &args)
}

/// An element's colour.
pub fn colour(element: Element) -> Colour {
    match element {
        Element::Water => Colour::Water,
        Element::Fire => Colour::Fire,
        Element::Thunder => Colour::Thunder,
        Element::Wind => Colour::Wind,
        Element::Earth => Colour::Earth,
        Element::Void => Colour::Void,
    }
}

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

/// The Duel's public view, as the board reads it.
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

/// The board of a Duel table's public view, labelled in `language`.
pub fn drawing(public: &serde_json::Value, language: Language) -> Result<Drawing, String> {
    let duel = Public::deserialize(public).map_err(|e| format!("not a Duel state: {e}"))?;
    if duel.players.len() != 2 {
        return Err(format!("a Duel state seats two players, this one {}", duel.players.len()));
    }
    let mut d = Drawing::new(WIDTH, HEIGHT, Colour::Paper);
    heading(&mut d, &duel, language);
    track(&mut d, &duel, language);
    for seat in 0..2 {
        panel(&mut d, &duel, seat, language);
    }
    Ok(d)
}

fn heading(d: &mut Drawing, duel: &Public, language: Language) {
    let (a, b) = (&duel.players[0], &duel.players[1]);
    let said = |id: &str, args: Args| label(language, id, args);
    d.bold(20.0, 36.0, 24.0, Colour::Ink, Anchor::Start, &said("board-label-duel", Args::new()));
    let versus = Args::new().text("first", clip(a, 24)).text("second", clip(b, 24));
    d.text(90.0, 36.0, 18.0, Colour::Muted, Anchor::Start, &said("board-label-versus", versus));
    let status = match (duel.finished, duel.winner.as_deref(), duel.finish_reason.as_deref()) {
        (true, Some("draw"), _) => said("board-label-draw", Args::new()),
        (true, Some(winner), _) => said("board-label-winner", Args::new().text("winner", clip(winner, 24))),
        (true, None, Some("stopped")) => said("board-label-stopped", Args::new()),
        (true, None, _) => said("board-label-finished", Args::new()),
        (false, _, _) => said("board-label-round", Args::new().num("round", duel.round.number)),
    };
    d.bold(WIDTH as f64 - 20.0, 36.0, 20.0, Colour::Ink, Anchor::End, &status);
}

fn track(d: &mut Drawing, duel: &Public, language: Language) {
    let (a, b) = (&duel.players[0], &duel.players[1]);
    let said = |id: &str, args: Args| label(language, id, args);
    let goal = |player: &str| said("board-label-goal", Args::new().text("player", clip(player, 20)));
    d.line((TRACK_LEFT, TRACK_Y), (TRACK_RIGHT, TRACK_Y), Colour::Line, 4.0);
    for point in (-GOAL..=GOAL).step_by(5) {
        let x = marker_x(point);
        let goal = point.abs() == GOAL;
        let half = if goal { 16.0 } else { 7.0 };
        d.line(
            (x, TRACK_Y - half),
            (x, TRACK_Y + half),
            if goal { Colour::Ink } else { Colour::Line },
            if goal { 4.0 } else { 2.0 },
        );
        if !goal {
            d.text(x, TRACK_Y + 24.0, 11.0, Colour::Muted, Anchor::Middle, &point.abs().to_string());
        }
    }
    // The goals: players[0]'s on the left, players[1]'s on the right (RULES D-1).
    d.bold(TRACK_LEFT, TRACK_Y + 38.0, 15.0, Colour::Ink, Anchor::Middle, &GOAL.to_string());
    d.text(TRACK_LEFT, TRACK_Y - 24.0, 12.0, Colour::Muted, Anchor::Start, &goal(a));
    d.bold(TRACK_RIGHT, TRACK_Y + 38.0, 15.0, Colour::Ink, Anchor::Middle, &GOAL.to_string());
    d.text(TRACK_RIGHT, TRACK_Y - 24.0, 12.0, Colour::Muted, Anchor::End, &goal(b));
    let x = marker_x(duel.track);
    d.dot(x, TRACK_Y, 11.0, Colour::Marker, Colour::Panel);
    let toward = |points: i64, player: &str| {
        said("board-label-toward", Args::new().num("points", points).text("player", clip(player, 20)))
    };
    let where_ = match duel.track {
        0 => said("board-label-even", Args::new()),
        t if t > 0 => toward(t, a),
        t => toward(-t, b),
    };
    let heading = said("board-label-track", Args::new().text("where", where_));
    d.bold(WIDTH as f64 / 2.0, 70.0, 16.0, Colour::Marker, Anchor::Middle, &heading);
}

fn panel(d: &mut Drawing, duel: &Public, seat: usize, language: Language) {
    let player = &duel.players[seat];
    let x = panel_x(seat);
    d.card(x, PANEL_Y, PANEL_W, HEIGHT as f64 - PANEL_Y - 16.0, Colour::Panel, Colour::Line);
    d.bold(x + 14.0, PANEL_Y + 28.0, 18.0, Colour::Ink, Anchor::Start, &clip(player, 22));
    let wizard = match duel.wizards.get(player) {
        Some(wizard) => super::wizard::name_in(wizard, language),
        None => label(language, "board-label-wizard", Args::new()),
    };
    d.text(x + 14.0, PANEL_Y + 48.0, 13.0, Colour::Muted, Anchor::Start, &clip(&wizard, 30));
    if !duel.finished {
        let cast = duel.round.casters.get(player).is_some_and(|c| c.acted);
        // Only *that* the wizard cast this round, never what.
        let cast =
            label(language, if cast { "board-label-cast" } else { "board-label-not-cast" }, Args::new());
        d.text(x + PANEL_W - 14.0, PANEL_Y + 28.0, 13.0, Colour::Muted, Anchor::End, &cast);
    }
    pool(d, duel.pools.get(player), seat, language);
    // A finished game has no next spell to seal (issue 31: no stale seals).
    if !duel.finished {
        seal(d, duel.seals.get(player), x, language);
    }
    last_spell(d, duel, seat, x, language);
}

fn pool(d: &mut Drawing, pool: Option<&BTreeMap<Element, u32>>, seat: usize, language: Language) {
    for element in Element::ALL {
        let (cx, cy, w, h) = pool_chip(seat, element);
        d.rect(cx, cy, w, h, colour(element));
        // A glyph (水) fills the chip; a name (Thunder) must fit its 50 pixels.
        let size = match language {
            Language::ZhCn if element == Element::Void => 15.0,
            Language::ZhCn => 20.0,
            Language::En => 11.0,
        };
        d.text(cx + w / 2.0, cy + 24.0, size, Colour::OnChip, Anchor::Middle, element.name_in(language));
        let count = pool.and_then(|p| p.get(&element)).copied().unwrap_or(0);
        d.bold(cx + w / 2.0, cy + h - 7.0, 14.0, Colour::OnChip, Anchor::Middle, &count.to_string());
    }
}

/// A small chip with an element's name in `language` (a glyph in Chinese, a word in
/// English), for seals and spells; returns its width.
fn glyph_chip(d: &mut Drawing, x: f64, y: f64, element: Element, language: Language) -> f64 {
    let name = element.name_in(language);
    let (width, size) = match language {
        Language::ZhCn => (28.0, if element == Element::Void { 11.0 } else { 17.0 }),
        // About 7 pixels a letter at 12 pixels.
        Language::En => (10.0 + 7.0 * name.chars().count() as f64, 12.0),
    };
    d.rect(x, y, width, 28.0, colour(element));
    d.text(x + width / 2.0, y + 19.0, size, Colour::OnChip, Anchor::Middle, name);
    width
}

fn seal(d: &mut Drawing, seal: Option<&SealView>, x: f64, language: Language) {
    let y = PANEL_Y + 150.0;
    match seal.filter(|s| s.positions > 0 && !s.elements.is_empty()) {
        None => {
            let none = label(language, "board-label-no-seal", Args::new());
            d.text(x + 14.0, y, 13.0, Colour::Muted, Anchor::Start, &none);
        }
        Some(seal) => {
            let sealed = label(language, "board-label-sealed", Args::new().num("positions", seal.positions));
            d.text(x + 14.0, y, 13.0, Colour::Ink, Anchor::Start, &sealed);
            let mut cx = x + 200.0;
            for element in &seal.elements {
                cx += glyph_chip(d, cx, y - 20.0, *element, language) + 4.0;
            }
        }
    }
}

fn last_spell(d: &mut Drawing, duel: &Public, seat: usize, x: f64, language: Language) {
    let y = PANEL_Y + 192.0;
    let said = |id: &str, args: Args| label(language, id, args);
    let Some(round) = duel.rounds.last() else {
        d.text(x + 14.0, y, 13.0, Colour::Muted, Anchor::Start, &said("board-label-no-round", Args::new()));
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
    d.text(
        x + 14.0,
        y,
        13.0,
        Colour::Ink,
        Anchor::Start,
        &words.join(&said("board-label-separator", Args::new())),
    );
    let mut cx = x + 14.0;
    let mut position = 0u32;
    for token in &spell.tokens {
        match serde_json::from_value::<Element>(serde_json::Value::String(token.clone())) {
            Ok(element) => {
                let width = glyph_chip(d, cx, y + 10.0, element, language);
                if spell.removed.contains(&position) {
                    // Removed by the opponent's Void (RULES D-11).
                    d.line((cx - 2.0, y + 40.0), (cx + width + 2.0, y + 8.0), Colour::Ink, 3.0);
                }
                position += 1;
                cx += width + 4.0;
            }
            Err(_) => {
                let shown = typed(token, language);
                d.text(cx, y + 30.0, 12.0, Colour::Muted, Anchor::Start, shown);
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
        d.text(WIDTH as f64 / 2.0, HEIGHT as f64 - 2.0, 11.0, Colour::Muted, Anchor::Middle, &after);
    }
}

/// A token of a spell that is not an element (`surge`, `end`) as a player of `language`
/// types it (`迸发`, `协调`); an unknown word as it is.
fn typed(token: &str, language: Language) -> &str {
    Token::from_word(token).map_or(token, |t| t.typed_in(language))
}
