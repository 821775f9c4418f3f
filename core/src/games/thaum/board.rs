//! The Thaum board picture (RULES T-1 to T-9), drawn from a table's public view in the
//! [`draw`](crate::draw) vocabulary: the season, the phase, Loop Instability out of its
//! limit (T-3), when the phase ends (T-2), and every player's Mana, four Thaums (as bars
//! from −10 to 10) and coins, in the season's standings order (coins, then the sum of
//! their Thaums, then name).

use std::collections::BTreeMap;

use serde::Deserialize;

use super::Schedule;
use super::render::roman;
use crate::draw::{Anchor, Colour, Drawing, clip};
use crate::language::Language;
use crate::locale::{self, Args};
use crate::time::Timestamp;

/// A label drawn in the picture, in `language` (`locales/*/board.ftl`, `board-label-…`).
fn label(language: Language, id: &str, args: Args) -> String {
    locale::text(language, id, &args)
}

/// A Thaum's colour, by its snapshot key (`fire`, `water`, `earth`, `air`).
pub fn colour(key: &str) -> Colour {
    match key {
        "fire" => Colour::Fire,
        "water" => Colour::Water,
        "earth" => Colour::Earth,
        _ => Colour::Air,
    }
}

/// The picture's width.
pub const WIDTH: u32 = 800;
/// Loop Instability at which a season ends (RULES T-3).
const LOOP_LIMIT: u32 = 9;
/// The Thaums in the order the board shows them, by snapshot key.
pub const THAUMS: [(&str, &str); 4] =
    [("fire", "Fire"), ("water", "Water"), ("earth", "Earth"), ("air", "Air")];

/// The labels of [`THAUMS`], in its order.
const THAUM_LABELS: [&str; 4] =
    ["board-label-fire", "board-label-water", "board-label-earth", "board-label-air"];

const TABLE_Y: f64 = 120.0;
const ROW: f64 = 40.0;
const NAME_X: f64 = 20.0;
const MANA_X: f64 = 230.0;
const THAUM_X: f64 = 270.0;
const THAUM_W: f64 = 104.0;
const COINS_X: f64 = 780.0;
/// Pixels per point of a Thaum bar (10 points fill half a cell).
const BAR_PER_POINT: f64 = 3.6;

/// A Thaum table's public view, as the board reads it.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Public {
    season: u32,
    phase: u32,
    loop_instability: u32,
    players: BTreeMap<String, Sheet>,
    phase_started_at: Option<Timestamp>,
    finished: bool,
    options: Options,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Sheet {
    mana: u32,
    coins: u64,
    debt: u64,
    thaums: BTreeMap<String, i64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Options {
    schedule: Schedule,
}

/// The picture's height for `players` players.
pub fn height(players: usize) -> u32 {
    (TABLE_Y + ROW * (players.max(1) as f64) + 40.0) as u32
}

/// Where a Thaum bar of the row `row` (0 is the top) is drawn for `value`: x, y, width,
/// height (tests read pixels there). A value of 0 has no bar.
pub fn bar(row: usize, thaum: usize, value: i64) -> (f64, f64, f64, f64) {
    let centre = THAUM_X + thaum as f64 * THAUM_W + 40.0;
    let length = value.clamp(-10, 10) as f64 * BAR_PER_POINT;
    let y = TABLE_Y + 14.0 + row as f64 * ROW;
    if length >= 0.0 { (centre, y, length, 16.0) } else { (centre + length, y, -length, 16.0) }
}

/// The board of a Thaum table's public view, labelled in `language`.
pub fn drawing(public: &serde_json::Value, language: Language) -> Result<Drawing, String> {
    let thaum = Public::deserialize(public).map_err(|e| format!("not a Thaum state: {e}"))?;
    let said = |id: &str| label(language, id, Args::new());
    let height = height(thaum.players.len());
    let mut d = Drawing::new(WIDTH, height, Colour::Paper);
    heading(&mut d, &thaum, language);
    d.card(
        10.0,
        TABLE_Y - 34.0,
        WIDTH as f64 - 20.0,
        height as f64 - TABLE_Y + 24.0,
        Colour::Panel,
        Colour::Line,
    );
    d.text(NAME_X, TABLE_Y - 12.0, 13.0, Colour::Muted, Anchor::Start, &said("board-label-player"));
    d.text(MANA_X, TABLE_Y - 12.0, 13.0, Colour::Muted, Anchor::End, &said("board-label-mana"));
    for (i, (key, _)) in THAUMS.iter().enumerate() {
        let (x, ..) = bar(0, i, 0);
        let name = said(THAUM_LABELS[i]);
        d.text(x, TABLE_Y - 12.0, 13.0, colour(key), Anchor::Middle, &name);
    }
    d.text(COINS_X, TABLE_Y - 12.0, 13.0, Colour::Muted, Anchor::End, &said("board-label-coins"));
    if thaum.players.is_empty() {
        d.text(NAME_X, TABLE_Y + 28.0, 14.0, Colour::Muted, Anchor::Start, &said("board-label-no-players"));
    }
    for (row, (player, sheet)) in standings(&thaum.players).into_iter().enumerate() {
        player_row(&mut d, row, player, sheet);
    }
    Ok(d)
}

/// The players in standings order: most coins (net of debt) first, then the highest sum
/// of Thaums, then by name.
fn standings(players: &BTreeMap<String, Sheet>) -> Vec<(&String, &Sheet)> {
    let mut rows: Vec<(&String, &Sheet)> = players.iter().collect();
    let net = |s: &Sheet| i128::from(s.coins) - i128::from(s.debt);
    let sum = |s: &Sheet| s.thaums.values().sum::<i64>();
    rows.sort_by(|(a, x), (b, y)| net(y).cmp(&net(x)).then(sum(y).cmp(&sum(x))).then(a.cmp(b)));
    rows
}

/// A phase's number as `language` writes it: Roman numerals in English, digits in
/// Chinese (`locales/GLOSSARY.md`).
fn phase(language: Language, phase: u32) -> String {
    match language {
        Language::En => roman(phase),
        _ => phase.to_string(),
    }
}

fn heading(d: &mut Drawing, thaum: &Public, language: Language) {
    let said = |id: &str, args: Args| label(language, id, args);
    d.bold(20.0, 36.0, 24.0, Colour::Ink, Anchor::Start, &said("board-label-thaum", Args::new()));
    let season = Args::new().num("season", thaum.season).text("phase", phase(language, thaum.phase));
    d.text(110.0, 36.0, 18.0, Colour::Muted, Anchor::Start, &said("board-label-season", season));
    // Loop Instability as nine boxes, the filled ones in the Fire colour (RULES T-3).
    let label_x = WIDTH as f64 - 20.0 - LOOP_LIMIT as f64 * 16.0 - 8.0;
    d.text(
        label_x,
        36.0,
        14.0,
        Colour::Ink,
        Anchor::End,
        &said(
            "board-label-instability",
            Args::new().num("instability", thaum.loop_instability).num("limit", LOOP_LIMIT),
        ),
    );
    for i in 0..LOOP_LIMIT {
        let fill = if i < thaum.loop_instability { Colour::Fire } else { Colour::Paper };
        d.card(label_x + 8.0 + f64::from(i) * 16.0, 22.0, 12.0, 16.0, fill, Colour::Line);
    }
    let ends = match (thaum.finished, thaum.options.schedule, thaum.phase_started_at) {
        (true, _, _) => said("board-label-table-stopped", Args::new()),
        (false, Schedule::Manual, _) => said("board-label-manual", Args::new()),
        (false, schedule, Some(started)) => match schedule.next_boundary_after(started) {
            Some(end) => said(
                "board-label-phase-ends",
                Args::new().text("phase", phase(language, thaum.phase)).text("when", when(end, language)),
            ),
            None => String::new(),
        },
        (false, _, None) => String::new(),
    };
    d.text(20.0, 64.0, 15.0, Colour::Ink, Anchor::Start, &ends);
}

fn player_row(d: &mut Drawing, row: usize, player: &str, sheet: &Sheet) {
    let y = TABLE_Y + row as f64 * ROW;
    if row > 0 {
        d.line((20.0, y + 2.0), (WIDTH as f64 - 20.0, y + 2.0), Colour::Rule, 1.0);
    }
    let baseline = y + 28.0;
    d.bold(NAME_X, baseline, 15.0, Colour::Ink, Anchor::Start, &clip(player, 22));
    d.text(MANA_X, baseline, 15.0, Colour::Ink, Anchor::End, &sheet.mana.to_string());
    for (i, (key, _)) in THAUMS.iter().enumerate() {
        let value = sheet.thaums.get(*key).copied().unwrap_or(0);
        let (zero, ..) = bar(row, i, 0);
        d.line((zero, y + 10.0), (zero, y + 34.0), Colour::Line, 1.0);
        if value != 0 {
            let (bx, by, bw, bh) = bar(row, i, value);
            d.rect(bx, by, bw, bh, colour(key));
        }
        d.text(zero + 60.0, baseline, 13.0, Colour::Ink, Anchor::End, &value.to_string());
    }
    let coins = if sheet.debt > 0 { format!("−{}", sheet.debt) } else { sheet.coins.to_string() };
    d.bold(COINS_X, baseline, 15.0, Colour::Ink, Anchor::End, &coins);
}

/// A phase's end as people read it: `Wed 2026-01-07 00:00 UTC`, `2026-01-07（星期三）00:00 UTC`.
fn when(at: Timestamp, language: Language) -> String {
    let iso = at.to_string();
    let day = label(language, "board-label-day", Args::new().num("day", at.weekday().rem_euclid(7)));
    // ISO 8601 is `YYYY-MM-DDTHH:MM:SSZ`.
    match (iso.get(..10), iso.get(11..16)) {
        (Some(date), Some(time)) => label(
            language,
            "board-label-when",
            Args::new().text("day", day).text("date", date).text("time", time),
        ),
        _ => iso,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_are_roman_and_ends_are_readable() {
        assert_eq!(roman(1), "I");
        assert_eq!(roman(14), "XIV");
        assert_eq!(when(Timestamp::CONSOLE_EPOCH.plus(3 * 86_400), Language::En), "Wed 2026-01-07 00:00 UTC");
        assert_eq!(
            when(Timestamp::CONSOLE_EPOCH.plus(3 * 86_400), Language::ZhCn),
            "2026-01-07（星期三）00:00 UTC"
        );
    }
}
