//! Which games have records, in the order `!stats`, `!top` and the site's leaderboard
//! list them (challenge games first, then open tables, each in the registry's order), and
//! the message ids each game's records are worded in: the game's own
//! ([`GamePlugin::record_words`]) or the generic `records-*` ones, which take the game's
//! name as `$game`.

use spellbridge_core::{GamePlugin, RecordWords, Registry, TableKind};

/// The games with records, as `!stats` lists them and `!top` offers them: challenge games
/// first, then open tables, each in the registry's order.
pub fn ranked(registry: &Registry) -> Vec<&dyn GamePlugin> {
    let rated: Vec<&dyn GamePlugin> = registry.iter().filter(|p| p.ending_reader().is_some()).collect();
    let challenge = |p: &&dyn GamePlugin| matches!(p.kind(), TableKind::Challenge { .. });
    let (mut first, open): (Vec<_>, Vec<_>) = rated.into_iter().partition(challenge);
    first.extend(open);
    first
}

/// The ids `plugin`'s records are worded in: its own, or the generic ones for its kind.
pub fn words_of(plugin: &dyn GamePlugin) -> RecordWords {
    plugin.record_words().unwrap_or(match plugin.kind() {
        TableKind::Challenge { .. } => RecordWords {
            record: "records-challenge",
            best: None,
            top: "records-top-challenge",
            top_entry: "records-top-challenge-entry",
            top_none: "records-top-challenge-none",
            top_few: "records-top-challenge-few",
            board: "records-board-challenge",
        },
        TableKind::Open => RecordWords {
            record: "records-open",
            best: None,
            top: "records-top-open",
            top_entry: "records-top-open-entry",
            top_none: "records-top-open-none",
            top_few: "records-top-open-few",
            board: "records-board-open",
        },
    })
}
