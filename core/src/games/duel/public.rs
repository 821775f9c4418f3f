//! What a spectator may see of a Duel table: its public view, the caption of its board
//! picture, and the facts its site page shows first.
//!
//! The view copies, field by field, what the room was told (the track, pools, seals,
//! settled rounds, wizards, rules); of the round being cast only its number, step,
//! deadline, the seeds of its revealed steps and, per wizard, *whether* they have cast —
//! never their queued tokens, placed elements, pre-conditioning or checks, which the room
//! learns only when a step is revealed (RULES D-4, D-7). A field added to the state is
//! left out until it is named here.

use serde_json::{Map, Value, json};

use super::{Element, wizard};
use crate::facts::{Bit, Fact, Facts, shown};
use crate::language::Language;
use crate::locale::{self, Args};

/// The state's fields that the room sees as they are.
const SHOWN: [&str; 11] = [
    "players",
    "wizards",
    "track",
    "finished",
    "winner",
    "finish_reason",
    "pools",
    "seals",
    "rounds",
    "wizard_cards",
    "rules",
];

/// The fields of the current round that the room sees.
const ROUND_SHOWN: [&str; 5] = ["number", "step", "step_started", "deadline", "seeds"];

/// The public view of a Duel's state (its snapshot, CONTRACT.md `--state-json`).
pub fn view(state: &Value) -> Value {
    let mut public = Map::new();
    for key in SHOWN {
        if let Some(value) = state.get(key) {
            public.insert(key.to_owned(), value.clone());
        }
    }
    if let Some(round) = state.get("round") {
        let mut seen = Map::new();
        for key in ROUND_SHOWN {
            if let Some(value) = round.get(key) {
                seen.insert(key.to_owned(), value.clone());
            }
        }
        let casters: Map<String, Value> = round
            .get("casters")
            .and_then(Value::as_object)
            .map(|casters| {
                casters
                    .iter()
                    .map(|(player, caster)| {
                        let acted = caster.get("acted").and_then(Value::as_bool).unwrap_or(false);
                        (player.clone(), json!({ "acted": acted }))
                    })
                    .collect()
            })
            .unwrap_or_default();
        seen.insert("casters".to_owned(), Value::Object(casters));
        public.insert("round".to_owned(), Value::Object(seen));
    }
    Value::Object(public)
}

/// The text a picture of table `table` is sent with, from its public view: who plays
/// which wizard, where the track is, and who won.
pub fn caption(table: u64, public: &Value, language: Language) -> String {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let say = |id: &str, args: Args| locale::text(language, id, &args);
    let players: Vec<String> =
        public["players"].as_array().map(|p| p.iter().map(text).collect()).unwrap_or_default();
    let seated: Vec<String> = players
        .iter()
        .map(|p| {
            let args = Args::new().text("player", p.as_str()).text("wizard", text(&public["wizards"][p]));
            say("board-duel-seat", args)
        })
        .collect();
    let seated = seated.join(&say("board-duel-against", Args::new()));
    let track = public["track"].as_i64().unwrap_or_default();
    let args = Args::new()
        .text("table", table.to_string())
        .text("seated", seated)
        .text("track", track.abs().to_string());
    let leader = match track.signum() {
        1 => players.first(),
        -1 => players.get(1),
        _ => None,
    };
    let board = match leader {
        Some(leader) => say("board-duel-toward", args.text("leader", leader.as_str())),
        None => say("board-duel", args),
    };
    match public["winner"].as_str() {
        Some("draw") => format!("{board} {}", say("board-duel-draw", Args::new())),
        Some(winner) => format!("{board} {}", say("board-duel-won", Args::new().text("winner", winner))),
        None => board,
    }
}

/// The facts of a Duel's public view, in `language`: the track, the winner or the round,
/// and each wizard's pool and whether they have cast.
pub fn facts(public: &Value, language: Language) -> Facts {
    let word = |id: &str| locale::word(language, id).into_owned();
    let finished = public["finished"].as_bool().unwrap_or(false);
    let players: Vec<String> = public["players"].as_array().into_iter().flatten().map(shown).collect();
    let track = public["track"].as_i64().unwrap_or(0);
    let toward = match (track.signum(), players.first(), players.get(1)) {
        (1, Some(first), _) => format!("{track} → {first}"),
        (-1, _, Some(second)) => format!("{} → {second}", -track),
        _ => "0".to_owned(),
    };
    let mut facts = vec![Fact::text(word("duel-fact-track"), format!("{toward} / 30"))];
    if let Some(winner) = public["winner"].as_str() {
        facts.push(Fact::text(word("duel-fact-winner"), winner));
    }
    if !finished {
        facts.push(Fact::text(word("duel-fact-round"), shown(&public["round"]["number"])));
    }
    for player in &players {
        let wizard = wizard::name_in(&shown(&public["wizards"][player]), language);
        let label = format!("{} · {wizard}", crate::shown::name(player));
        let mut body = Vec::new();
        for element in Element::ALL {
            if let Some(count) = public["pools"][player].get(element.word()) {
                let glyph = element.name_in(language).to_owned();
                body.push(Bit::Glyph { text: glyph, title: element.name().to_owned() });
                body.push(Bit::Text(format!(" {} ", shown(count))));
            }
        }
        if !finished {
            body.push(Bit::Break);
            let live = public["round"]["casters"][player]["acted"].as_bool().unwrap_or(false);
            let text = word(if live { "duel-fact-cast" } else { "duel-fact-not-cast" });
            body.push(Bit::Tag { text, live });
        }
        facts.push(Fact { label, body });
    }
    Facts { facts, grid: None }
}
