//! The stored ratings' shape before each game had a pool of its own: a record's `duel`
//! and `thaum` fields, a season's `season`, `coins` and `thaums`. A `meta` copy written
//! by an older spellbridge is read through [`upgrade`] into today's [`Summary`](super::Summary)
//! shape (by the store and by `spellbridge verify`), so existing databases keep reading.

use serde_json::{Map, Value};

/// The challenge game and the open-table game the old shape had fields for.
const OLD_POOLS: [(&str, &str); 2] = [("duel", "challenges"), ("thaum", "open")];

/// Moves `from` to `to` in `object`, if it is there and `to` is not.
fn rename(object: &mut Map<String, Value>, from: &str, to: &str) {
    if !object.contains_key(to)
        && let Some(value) = object.remove(from)
    {
        object.insert(to.to_owned(), value);
    }
}

/// Rewrites a stored summary (JSON) of the old shape into today's, in place; one of
/// today's shape is left as it is.
pub fn upgrade(summary: &mut Value) {
    if let Some(players) = summary.get_mut("players").and_then(Value::as_object_mut) {
        for record in players.values_mut().filter_map(Value::as_object_mut) {
            for (game, pools) in OLD_POOLS {
                let Some(mut pool) = record.remove(game) else { continue };
                if let Some(fields) = pool.as_object_mut() {
                    rename(fields, "favourite_wizard", "favourite");
                    rename(fields, "seasons", "rounds");
                }
                let entry = record.entry(pools).or_insert_with(|| Value::Object(Map::new()));
                if let Some(by_game) = entry.as_object_mut() {
                    by_game.insert(game.to_owned(), pool);
                }
            }
        }
    }
    let open_game = OLD_POOLS[1].0;
    if let Some(seasons) = summary.get_mut("seasons").and_then(Value::as_array_mut) {
        for season in seasons.iter_mut().filter_map(Value::as_object_mut) {
            if season.contains_key("game") {
                continue;
            }
            // Before pools, every finished round was a Thaum season.
            season.insert("game".to_owned(), Value::String(open_game.to_owned()));
            rename(season, "season", "round");
            if let Some(standings) = season.get_mut("standings").and_then(Value::as_array_mut) {
                for place in standings.iter_mut().filter_map(Value::as_object_mut) {
                    rename(place, "coins", "score");
                    rename(place, "thaums", "tiebreak");
                }
            }
        }
    }
}
