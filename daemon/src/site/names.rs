//! The names the site shows players under: the ones the daemon keeps in the store
//! (`router::shown_names`), each made by [`crate::names::shown_among`] (the network only
//! where two players would otherwise look the same), so the index, a table's page, its
//! board.png and the leaderboard say what chat says. Ids stay in the page's JSON.

use std::collections::BTreeMap;

use serde_json::Value;
use spellbridge_core::PlayerId;

use super::error::SiteError;
use super::shared::Site;

/// The names kept for players, by player id (none kept yet: empty).
#[derive(Clone, Debug, Default)]
pub struct Names(BTreeMap<PlayerId, String>);

impl Names {
    /// The names the store keeps now.
    pub fn kept(site: &Site) -> Result<Names, SiteError> {
        let text = site.reader().meta(crate::router::SHOWN_NAMES_KEY)?;
        Ok(Names(text.and_then(|text| serde_json::from_str(&text).ok()).unwrap_or_default()))
    }

    /// How `player` is shown.
    pub fn shown(&self, player: &str) -> String {
        crate::names::shown_among(&PlayerId::new(player), &self.0)
    }

    /// A line the table told (the game writes player ids into its sentences) with each
    /// of `players`' ids written as they are shown.
    pub fn in_text(&self, text: &str, players: &[String]) -> String {
        let mut ids: Vec<&String> = players.iter().collect();
        // The longest first, so `irc:al` never cuts into `irc:alice`.
        ids.sort_by_key(|id| std::cmp::Reverse(id.len()));
        ids.iter().fold(text.to_owned(), |text, id| text.replace(id.as_str(), &self.shown(id)))
    }

    /// A table's public entry with each of its players' ids (a value or a key of its
    /// state) written as they are shown: what its facts and its picture are drawn from.
    pub fn named(&self, entry: Value, players: &[String]) -> Value {
        let names: Vec<(PlayerId, String)> =
            players.iter().map(|player| (PlayerId::new(player.as_str()), self.shown(player))).collect();
        crate::board::post::named(entry, &names)
    }
}

/// The player ids of a stored table, in its order (a Duel's list, a Thaum table's sheets).
pub fn ids(snapshot: &Value) -> Vec<String> {
    match snapshot.get("state").and_then(|state| state.get("players")) {
        Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        Some(Value::Object(sheets)) => sheets.keys().cloned().collect(),
        _ => Vec::new(),
    }
}
