//! A game the daemon has never heard of is rated in a pool of its own and answered by
//! `!stats`, `!top` and the printed report with no daemon change: a made-up challenge game
//! ("coinflip"), defined here as a plugin with nothing but a name, a kind and an ending
//! reader, finishes tables in a journal beside Duels.

use std::collections::BTreeMap;

use serde_json::json;
use spellbridge_core::ending::Place;
use spellbridge_core::{
    Ending as GameEnding, EndingReader, EventRecord, GamePlugin, Language, NetworkId, PlayerId, Refusal,
    Registry, Table, TableKind, TableSetup,
};

use super::{stats_text, top_text};
use crate::journal::Entry;
use crate::ratings::{derive, report};

/// Reads `{"winner": …, "loser": …}` as a finished game, the winner first.
#[derive(Clone, Debug, Default)]
struct Flips {
    done: bool,
}

impl EndingReader for Flips {
    fn read(&mut self, event: &EventRecord) -> Option<GameEnding> {
        let [winner, loser] = ["winner", "loser"].map(|k| event.event.get(k).and_then(|v| v.as_str()));
        let (winner, loser) = (winner?, loser?);
        self.done = true;
        let place = |player: &str, place| Place {
            player: PlayerId::new(player),
            place,
            score: 0,
            tiebreak: 0,
            choice: None,
        };
        Some(GameEnding {
            round: 1,
            places: vec![place(winner, 1), place(loser, 2)],
            conceded: false,
            helped: Default::default(),
        })
    }

    fn done(&self) -> bool {
        self.done
    }

    fn boxed_clone(&self) -> Box<dyn EndingReader> {
        Box::new(self.clone())
    }
}

/// The made-up game: a challenge between two whose tables are never opened here (the
/// journal below is written by hand).
struct Coinflip;

impl GamePlugin for Coinflip {
    fn name(&self) -> &'static str {
        "coinflip"
    }

    fn summary(&self) -> &'static str {
        "A coin decides."
    }

    fn commands(&self) -> &'static [spellbridge_core::Command] {
        &[]
    }

    fn open(&self, _setup: &TableSetup) -> Result<Box<dyn Table>, Refusal> {
        Err(Refusal::because("not in this test"))
    }

    fn restore(&self, _snapshot: &serde_json::Value) -> Result<Box<dyn Table>, String> {
        Err("not in this test".into())
    }

    fn kind(&self) -> TableKind {
        TableKind::Challenge { seats: 2 }
    }

    fn ending_reader(&self) -> Option<Box<dyn EndingReader>> {
        Some(Box::new(Flips::default()))
    }
}

/// A table of `game` opened at `now` and finished by one event saying who won.
fn finished(table: u64, game: &str, winner: &str, loser: &str, now: i64) -> [Entry; 2] {
    let opened = json!({
        "kind": "opened", "table": table, "game": game, "network": "console", "room": "#room",
        "seats": [], "now": now, "opening": {},
        "events": [{"to": "table", "event": {"opened": true}}],
    });
    let acted = json!({
        "kind": "acted", "table": table, "sequence": 1, "actor": winner, "command": "flip",
        "typed": "!flip", "private": false, "now": now + 600, "dice_seed": 0, "draws": 0,
        "events": [{"to": "table", "event": {"winner": winner, "loser": loser}}],
    });
    [opened, acted].map(|entry| serde_json::from_value(entry).expect("a journal entry"))
}

#[test]
fn a_third_game_is_rated_in_its_own_pool_and_shows_in_stats_top_and_the_report() {
    let registry = Registry::standard().register(Coinflip);
    let mut journal = Vec::new();
    for table in 1..=3 {
        journal.extend(finished(table, "coinflip", "alice", "bob", 1_000 * table as i64));
    }
    let scopes: BTreeMap<NetworkId, crate::identity::Scope> = BTreeMap::new();
    let summary = derive(&registry, scopes, &journal).expect("the journal derives");
    let alice = &summary.players[&PlayerId::new("alice")];
    // Its own pool: not the Duel's, though it is a challenge with an ending reader.
    assert_eq!(alice.challenges.keys().collect::<Vec<_>>(), ["coinflip"], "{alice:?}");
    assert_eq!((alice.games, alice.wins, alice.challenges["coinflip"].wins), (3, 3, 3));
    assert!(summary.challenge_leaderboard("duel").is_empty());
    let board: Vec<&str> =
        summary.challenge_leaderboard("coinflip").iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(board, ["alice", "bob"]);

    let coinflip = registry.get("coinflip").expect("registered");
    let top = top_text(Language::En, &summary, coinflip).plain();
    assert!(top.starts_with("coinflip ratings (Glicko-2, 2 rated): 1. alice "), "{top}");
    let bob = PlayerId::new("bob");
    let stats = stats_text(Language::En, &registry, &bob, &summary.players[&bob], &summary.seasons).plain();
    assert!(stats.starts_with("bob has played 3 games and won 0. coinflip: rating "), "{stats}");
    assert!(stats.contains("after 3 games (0 won, 3 lost); longest winning streak 0."), "{stats}");
    let chinese = top_text(Language::ZhCn, &summary, coinflip).plain();
    assert!(chinese.starts_with("coinflip等级分（Glicko-2，共 2 人）："), "{chinese}");
    let printed = report::text(&summary);
    assert!(printed.contains("coinflip ratings (Glicko-2), 2 players:\n  1. alice "), "{printed}");
}
