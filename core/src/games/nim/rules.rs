//! Nim's rules at hand (`!rules`, the site's rules page): each rule of `RULES.md` in this
//! folder by id, with its short form in each language (`locales/*/nim.ftl`), and a
//! table's state as MediaWiki markup for `spellbridge export`.

use std::fmt::Write as _;

use serde_json::Value;

/// Every rule id, in order, with its catalogue message.
pub const RULES: &[(&str, &str)] = &[
    ("N-1", "nim-rule-n1"),
    ("N-2", "nim-rule-n2"),
    ("N-3", "nim-rule-n3"),
    ("N-4", "nim-rule-n4"),
    ("N-5", "nim-rule-n5"),
];

/// Who plays, the winner and every take, as a wiki table.
pub fn wiki(state: &Value) -> String {
    let players: Vec<String> = state["players"].as_array().into_iter().flatten().map(cell).collect();
    let winner = match (&state["winner"], state["finished"].as_bool()) {
        (Value::Null, Some(true)) => format!("none ({})", cell(&state["finish_reason"])),
        (Value::Null, _) => "none yet".to_owned(),
        (winner, _) => cell(winner),
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: piles left {}, winner: {winner}\n\n{{| class=\"wikitable\"\n! Move !! Player !! Took !! From pile",
        players.join(" vs "),
        state["piles"],
    );
    for (n, taken) in state["moves"].as_array().into_iter().flatten().enumerate() {
        let _ = writeln!(
            out,
            "|-\n| {} || {} || {} || {}",
            n + 1,
            cell(&taken["player"]),
            taken["amount"],
            cell(&taken["pile"])
        );
    }
    out.push_str("|}\n");
    out
}

/// A JSON value as a table cell: strings without quotes, null empty. A string (a
/// player's name) is shown as typed, never read as markup: inside `<nowiki>`, with `<`
/// as an entity so no tag in it can end that.
fn cell(value: &Value) -> String {
    match value {
        Value::String(s) => format!("<nowiki>{}</nowiki>", s.replace('<', "&lt;")),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}
