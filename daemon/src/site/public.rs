//! What of a stored table the site may show: the room's knowledge, nothing more.
//!
//! A table's state is shown only through its game's public view
//! ([`GamePlugin::public_view`]), where each game leaves out its hidden moves (a Duel's
//! queued spell before the reveal); a game that gives none is shown without its state.
//! The dice are shown as the table announced them: the commitment, and the key once
//! revealed (RULES T-10); an old table's seed, from which every roll could be foreseen,
//! is never shown.
//!
//! [`GamePlugin::public_view`]: spellbridge_core::GamePlugin::public_view

use serde_json::{Map, Value, json};
use spellbridge_core::Registry;

use super::reader::TableRow;

/// The public state of a table of `game` whose snapshot state is `state`, as the build
/// playing it shows it ([`crate::games::played`]), or `None` for a game that shows none.
pub fn state(registry: &Registry, game: &str, state: &Value) -> Option<Value> {
    crate::games::played(registry, game, state).and_then(|plugin| plugin.public_view(state))
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
pub fn entry(registry: &Registry, row: &TableRow) -> Value {
    json!({
        "table": row.id,
        "game": row.game,
        "network": row.network.as_str(),
        "room": row.room.as_str(),
        "sequence": row.sequence(),
        "finished": row.finished,
        "state": row.snapshot.get("state").and_then(|s| state(registry, &row.game, s)),
        "dice": dice(&row.snapshot),
    })
}
