//! The Duel's config section (`[games.duel]`, or the older `[duel]`) read into
//! [`DuelOptions`] and a challenge lifetime, and a table's state as MediaWiki markup
//! for `spellbridge export`.

use std::fmt::Write as _;

use serde::Deserialize;
use serde_json::Value;

use super::{DuelOptions, Wizards};
use crate::options::{CHALLENGE_LIFETIME_SECS, GameOptions};

/// The section exactly as written; every key optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Written {
    /// RULES D-9: how long a step waits for a wizard (default "10m").
    step_timeout: Option<String>,
    /// A wizards file replacing config/wizards.toml (RULES D-13).
    wizards: Option<String>,
    /// How long a challenge waits for an answer (default "10m").
    challenge_lifetime: Option<String>,
}

/// The options the section gives, and how long a challenge waits (seconds).
pub fn options(section: &GameOptions<'_>) -> Result<(DuelOptions, i64), String> {
    let written: Written = section.parse()?;
    let mut options = DuelOptions::default();
    if let Some(text) = &written.step_timeout {
        options.step_timeout_secs =
            section.duration("step_timeout", text, 1, i64::MAX, "; write e.g. \"10m\" or \"90s\"")?;
    }
    if let Some(file) = &written.wizards {
        let at = &section.section;
        let (path, text) = (section.read_file)(file).map_err(|e| format!("{at} wizards: {e}"))?;
        options.wizards = Wizards::from_toml(&text).map_err(|e| format!("{at} wizards {path}: {e}"))?;
    }
    let lifetime = match &written.challenge_lifetime {
        None => CHALLENGE_LIFETIME_SECS,
        Some(text) => {
            section.duration("challenge_lifetime", text, 60, 86_400, " from 1m to 24h; write e.g. \"10m\"")?
        }
    };
    Ok((options, lifetime))
}

/// Who plays, the track and the winner, and each round's spells, as a wiki table.
pub fn wiki(state: &Value) -> String {
    let mut out = String::new();
    let players: Vec<String> = state["players"].as_array().into_iter().flatten().map(cell).collect();
    let _ = writeln!(
        out,
        "{} vs {}: track {} (positive toward {}), winner: {}\n\n{{| class=\"wikitable\"\n! Round !! {} !! {} !! Track after",
        players.first().cloned().unwrap_or_default(),
        players.get(1).cloned().unwrap_or_default(),
        state["track"],
        players.first().cloned().unwrap_or_default(),
        match (&state["winner"], state["finished"].as_bool()) {
            (Value::Null, Some(true)) =>
                format!("none ({})", state["finish_reason"].as_str().unwrap_or("ended")),
            (Value::Null, _) => "none yet".to_owned(),
            (winner, _) => cell(winner),
        },
        players.first().cloned().unwrap_or_default(),
        players.get(1).cloned().unwrap_or_default(),
    );
    for (n, round) in state["rounds"].as_array().into_iter().flatten().enumerate() {
        let spell = |p: &str| {
            let s = &round["spells"][p];
            let tokens: Vec<String> = s["tokens"].as_array().into_iter().flatten().map(cell).collect();
            format!("{} (power {})", tokens.join(" "), s["power"])
        };
        let a = players.first().map(|p| spell(p)).unwrap_or_default();
        let b = players.get(1).map(|p| spell(p)).unwrap_or_default();
        let _ = writeln!(out, "|-\n| {} || {a} || {b} || {}", n + 1, round["track_after"]);
    }
    out.push_str("|}\n");
    out
}

/// A JSON value as a table cell: strings without quotes, null empty.
fn cell(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}
