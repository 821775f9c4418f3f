//! What a spectator may see of a Thaum table: its public view, the caption of its board
//! picture, and the facts its site page shows first.
//!
//! A Thaum table has no hidden information (every action is announced, RULES T-1 to
//! T-9): the view is the whole state but its `history`, which the journal keeps and the
//! site shows row by row.

use serde_json::Value;

use super::render::roman;
use crate::facts::{Column, Fact, Facts, Grid, shown};
use crate::language::Language;
use crate::locale::{self, Args};

/// The Thaums in the order the site's table lists them, by state key.
const THAUMS: [(&str, &str); 4] = [
    ("fire", "thaum-fact-fire"),
    ("water", "thaum-fact-water"),
    ("earth", "thaum-fact-earth"),
    ("air", "thaum-fact-air"),
];

/// The public view of a Thaum table's state: all of it but its history.
pub fn view(state: &Value) -> Value {
    let mut state = state.clone();
    if let Some(object) = state.as_object_mut() {
        object.remove("history");
    }
    state
}

/// The text a picture of table `table` is sent with, from its public view: the season,
/// phase, Loop Instability and everyone's coins, most first.
pub fn caption(table: u64, public: &Value, language: Language) -> String {
    let say = |id: &str, args: Args| locale::text(language, id, &args);
    let mut coins: Vec<(String, u64)> = public["players"]
        .as_object()
        .map(|p| p.iter().map(|(name, sheet)| (name.clone(), sheet["coins"].as_u64().unwrap_or(0))).collect())
        .unwrap_or_default();
    coins.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let coins: Vec<String> = coins
        .iter()
        .map(|(name, n)| {
            say("board-thaum-coins", Args::new().text("player", name.as_str()).text("coins", n.to_string()))
        })
        .collect();
    let number = |key: &str| public[key].as_u64().unwrap_or(0);
    // RULES: Phases are Roman numerals in English; the glossary writes digits in Chinese.
    let phase = match language {
        Language::En => roman(u32::try_from(number("phase")).unwrap_or(0)),
        _ => number("phase").to_string(),
    };
    let args = Args::new()
        .text("table", table.to_string())
        .text("season", number("season").to_string())
        .text("phase", phase)
        .text("instability", number("loop_instability").to_string())
        .text("coins", coins.join(&say("board-thaum-separator", Args::new())));
    say("board-thaum", args)
}

/// The facts of a Thaum table's public view, in `language`: the season, the phase, Loop
/// Instability, and a row per player of Mana, Thaums and coins.
pub fn facts(public: &Value, language: Language) -> Facts {
    let word = |id: &str| locale::word(language, id).into_owned();
    let facts = vec![
        Fact::text(word("thaum-fact-season"), shown(&public["season"])),
        Fact::text(word("thaum-fact-phase"), shown(&public["phase"])),
        Fact::text(word("thaum-fact-instability"), format!("{} / 9", shown(&public["loop_instability"]))),
    ];
    let mut columns =
        vec![Column::words(word("thaum-fact-players")), Column::numbers(word("thaum-fact-mana"))];
    columns.extend(THAUMS.iter().map(|(_, id)| Column::numbers(word(id))));
    columns.push(Column::numbers(word("thaum-fact-coins")));
    let rows = public["players"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(player, sheet)| {
            let mut row = vec![crate::shown::name(player), shown(&sheet["mana"])];
            row.extend(THAUMS.iter().map(|(key, _)| shown(&sheet["thaums"][key])));
            row.push(shown(&sheet["coins"]));
            row
        })
        .collect();
    Facts { facts, grid: Some(Grid { columns, rows }) }
}
