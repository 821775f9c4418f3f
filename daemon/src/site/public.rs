//! What of a stored table the site may show: the room's knowledge, nothing more.
//!
//! A Duel's state is copied field by field from a list of what the room was told (the
//! track, pools, seals, settled rounds, wizards, rules); of the round being cast only its
//! number, step, deadline, the seeds of its revealed steps and, per wizard, *whether* they
//! have cast — never their queued tokens, placed elements, pre-conditioning or checks,
//! which the room learns only when a step is revealed (and then from the history). A
//! Thaum table has no hidden information and is shown whole. A game the site does not
//! know is shown without its state. The dice are shown as the table announced them: the
//! commitment, and the key once revealed (RULES T-10); an old table's seed, from which
//! every roll could be foreseen, is never shown.

use serde_json::{Map, Value, json};

use super::reader::TableRow;

/// The Duel's fields that the room sees as they are.
const DUEL_FIELDS: [&str; 11] = [
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

/// The fields of a Duel's current round that the room sees.
const ROUND_FIELDS: [&str; 5] = ["number", "step", "step_started", "deadline", "seeds"];

/// The public state of a table of `game`, or `None` for a game the site does not know.
pub fn state(game: &str, state: &Value) -> Option<Value> {
    match game {
        "duel" => Some(duel(state)),
        "thaum" => {
            let mut state = state.clone();
            if let Some(object) = state.as_object_mut() {
                // Kept in the journal, which the history shows.
                object.remove("history");
            }
            Some(state)
        }
        _ => None,
    }
}

fn duel(state: &Value) -> Value {
    let mut public = Map::new();
    for key in DUEL_FIELDS {
        if let Some(value) = state.get(key) {
            public.insert(key.to_owned(), value.clone());
        }
    }
    if let Some(round) = state.get("round") {
        let mut shown = Map::new();
        for key in ROUND_FIELDS {
            if let Some(value) = round.get(key) {
                shown.insert(key.to_owned(), value.clone());
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
        shown.insert("casters".to_owned(), Value::Object(casters));
        public.insert("round".to_owned(), Value::Object(shown));
    }
    Value::Object(public)
}

/// The table's dice as announced: `epoch`, `commitment`, and `key` once revealed.
pub fn dice(snapshot: &Value) -> Value {
    let dice = snapshot.get("dice").cloned().unwrap_or(Value::Null);
    let mut shown = Map::new();
    for key in ["epoch", "commitment", "key"] {
        if let Some(value) = dice.get(key) {
            shown.insert(key.to_owned(), value.clone());
        }
    }
    Value::Object(shown)
}

/// A table's public entry, as its `update` event and its board picture take it: number,
/// game, place, sequence, whether it finished, its public state and dice.
pub fn entry(row: &TableRow) -> Value {
    json!({
        "table": row.id,
        "game": row.game,
        "network": row.network.as_str(),
        "room": row.room.as_str(),
        "sequence": row.sequence(),
        "finished": row.finished,
        "state": row.snapshot.get("state").and_then(|s| state(&row.game, s)),
        "dice": dice(&row.snapshot),
    })
}
