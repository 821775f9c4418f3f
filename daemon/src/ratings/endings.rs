//! How games ended, read from the typed events the journal keeps with each table's
//! entries (`opened`, `acted` and `fired` carry the table's `EventRecord`s): a Duel's
//! `finished` event names its players, wizards and winner; a Thaum season's `loop_ended`
//! or `stopped` event its standings. No table is replayed and no game is looked up by
//! name: each event is read as the game event type it deserialises as. Thaum's tie-break
//! (the sum of each player's Thaums when the season ended) is followed through the events
//! that report Thaums (`gathered`, `blood_magic`, `alchemy`, `bending`, `summoning`,
//! `tornado`, a new season's reset), and whose coins a game master raised (`coins_adjusted`,
//! for `unrated`).
//!
//! A table opened by a journal from before events (its `opened` entry keeps none) is
//! replayed instead ([`replay`]), as before.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;
use spellbridge_core::games::duel::{DuelNews, FinishReason};
use spellbridge_core::games::thaum::{Thaum, ThaumEvent, Thaums};
use spellbridge_core::{EventRecord, PlayerId, Registry};

use super::RatingsError;
use super::replay::{self, Ending};
use crate::journal::{Entry, TableId};

/// The tables of a journal being read, in journal order.
#[derive(Clone, Debug, Default)]
pub struct Tables {
    /// Tables read from their events: each Thaum player's Thaums so far, and the players
    /// whose coins a game master raised this season.
    read: BTreeMap<TableId, (BTreeMap<PlayerId, Thaums>, BTreeSet<PlayerId>)>,
    /// Tables from before events, replayed.
    replayed: replay::Tables,
    replaying: BTreeSet<TableId>,
}

impl Tables {
    /// Applies one journal entry (entries of no table are ignored here) and returns the
    /// endings it told.
    pub fn apply(&mut self, registry: &Registry, entry: &Entry) -> Result<Vec<Ending>, RatingsError> {
        let (table, events) = match entry {
            Entry::Opened { table, events, .. } => {
                if events.is_empty() {
                    self.replaying.insert(*table);
                    return self.replayed.apply(registry, entry);
                }
                self.read.insert(*table, Default::default());
                (*table, events)
            }
            Entry::Acted { table, events, .. } | Entry::Fired { table, events, .. } => {
                if self.replaying.contains(table) {
                    return self.replayed.apply(registry, entry);
                }
                (*table, events)
            }
            _ => return Ok(Vec::new()),
        };
        let Some((thaums, given)) = self.read.get_mut(&table) else { return Ok(Vec::new()) };
        let endings = events.iter().filter_map(|event| read(table, thaums, given, event)).collect();
        // A table that finished tells nothing more: let it go.
        if events.iter().any(|event| matches!(kind(event), "finished" | "stopped")) {
            self.read.remove(&table);
        }
        Ok(endings)
    }
}

/// What Alchemy (`player`, its two Thaums) and Summoning (`caster` and `partner`) zero.
/// They are read as this plain struct, not as [`ThaumEvent`]: their coin changes are
/// `i128`, which serde cannot read through an internally tagged enum.
#[derive(Deserialize)]
struct Zeroed {
    #[serde(alias = "caster")]
    player: PlayerId,
    partner: Option<PlayerId>,
    first: Option<(Thaum, i8)>,
    second: Option<(Thaum, i8)>,
}

impl Zeroed {
    /// The Thaums it leaves, given the player's (or caster's) `now`.
    fn after(self, mut now: Thaums) -> Vec<(PlayerId, Thaums)> {
        match (self.first, self.second) {
            (Some(first), Some(second)) => {
                now.set(first.0, 0);
                now.set(second.0, 0);
                vec![(self.player, now)]
            }
            _ => std::iter::once(self.player).chain(self.partner).map(|p| (p, Thaums::ZERO)).collect(),
        }
    }
}

/// An event's kind (`finished`, `gathered`, …): the tag every game event is written with.
fn kind(record: &EventRecord) -> &str {
    record.event.get("kind").and_then(serde_json::Value::as_str).unwrap_or_default()
}

/// A game master's change of a player's coins, read as a plain struct (its `i128`s, as
/// [`Zeroed`]'s).
#[derive(Deserialize)]
struct CoinsAdjusted {
    player: PlayerId,
    change: Change,
}

#[derive(Deserialize)]
struct Change {
    before: i128,
    after: i128,
}

/// The kinds of event that end a game, change a Thaum or a game master changed coins with.
const TOLD: [&str; 11] = [
    "coins_adjusted",
    "finished",
    "loop_ended",
    "stopped",
    "season_began",
    "gathered",
    "blood_magic",
    "alchemy",
    "bending",
    "summoning",
    "tornado",
];

/// What one event tells: an ending, or (Thaum) a change of someone's Thaums, noted in
/// `thaums`, or coins a game master raised, noted in `given` until the season ends.
fn read(
    table: TableId,
    thaums: &mut BTreeMap<PlayerId, Thaums>,
    given: &mut BTreeSet<PlayerId>,
    record: &EventRecord,
) -> Option<Ending> {
    // Most events tell nothing here: look at their kind before reading them whole.
    if !TOLD.contains(&kind(record)) {
        return None;
    }
    if kind(record) == "coins_adjusted" {
        let adjusted = CoinsAdjusted::deserialize(&record.event).ok()?;
        if adjusted.change.after > adjusted.change.before {
            given.insert(adjusted.player);
        }
        return None;
    }
    if let Ok(DuelNews::Finished { finish, view }) = DuelNews::deserialize(&record.event) {
        if finish.reason == FinishReason::Stopped {
            return None;
        }
        return Some(Ending::Duel {
            table,
            players: view.players,
            wizards: view.wizards,
            winner: finish.winner,
            conceded: finish.reason == FinishReason::Conceded,
        });
    }
    if matches!(kind(record), "alchemy" | "summoning") {
        let zeroed = Zeroed::deserialize(&record.event).ok()?;
        let now = thaums.get(&zeroed.player).copied().unwrap_or(Thaums::ZERO);
        thaums.extend(zeroed.after(now));
        return None;
    }
    let event = ThaumEvent::deserialize(&record.event).ok()?;
    let now = |thaums: &BTreeMap<PlayerId, Thaums>, player: &PlayerId| {
        thaums.get(player).copied().unwrap_or(Thaums::ZERO)
    };
    let changed: Vec<(PlayerId, Thaums)> = match event {
        ThaumEvent::LoopEnded { season, standings } | ThaumEvent::Stopped { season, standings, .. } => {
            let sum = |player: &PlayerId| {
                thaums.get(player).map_or(0, |t| t.values().iter().map(|v| i64::from(*v)).sum())
            };
            let players = standings
                .iter()
                .map(|s| (s.player.clone(), i128::from(s.coins) - i128::from(s.debt), sum(&s.player)))
                .collect();
            return Some(Ending::Season { table, season, players, given: std::mem::take(given) });
        }
        ThaumEvent::SeasonBegan { .. } => {
            thaums.keys().map(|player| (player.clone(), Thaums::ZERO)).collect()
        }
        ThaumEvent::Gathered { player, thaum, after, .. }
        | ThaumEvent::BloodMagic { player, thaum, after, .. } => {
            let mut sheet = now(thaums, &player);
            sheet.set(thaum, i64::from(after));
            vec![(player, sheet)]
        }
        // The attack lands first, then the caster is zeroed (a self-bend leaves 0).
        ThaumEvent::Bending { caster, defender, defender_after, .. } => {
            vec![(defender, defender_after), (caster, Thaums::ZERO)]
        }
        ThaumEvent::Tornado { caster, target, caster_after, target_after, .. } => {
            vec![(caster, caster_after), (target, target_after)]
        }
        _ => Vec::new(),
    };
    thaums.extend(changed);
    None
}
