//! How a Thaum season ended, for ratings and records: its final standings (RULES T-3:
//! most coins first, net of debt when the `coin_debt` option allows it, T-9), then the sum
//! of each player's four Thaums when it ended (the project's tie-break), then name. A
//! season ends when its loop ends (T-3) or a game master stops the table. Which players a
//! game master gave coins during the season (`!coins` raising them, T-9) is kept with it.
//!
//! [`ThaumEndings`] reads this from the events the journal keeps: the Thaum sums are
//! followed through every event that reports them (`gathered`, `blood_magic`, `alchemy`,
//! `bending`, `summoning`, `tornado`, a new season's reset), since a season's end resets
//! the sheets (T-3).

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;

use super::events::ThaumEvent;
use super::state::{Standing, Thaum, ThaumState, Thaums};
use crate::ending::{Ending, EndingReader, Place};
use crate::event::EventRecord;
use crate::ids::PlayerId;

/// The sum of a sheet's four Thaums.
fn sum(thaums: &Thaums) -> i64 {
    thaums.values().iter().map(|v| i64::from(*v)).sum()
}

/// A season's ending from its standings (in their order: most coins first, ties by
/// name), each player's Thaum sum by `tiebreak`.
pub fn of(
    season: u32,
    standings: &[Standing],
    tiebreak: impl Fn(&PlayerId) -> i64,
    helped: BTreeSet<PlayerId>,
) -> Ending {
    let mut places: Vec<Place> = standings
        .iter()
        .map(|s| Place {
            player: s.player.clone(),
            place: 0,
            score: i128::from(s.coins) - i128::from(s.debt),
            tiebreak: tiebreak(&s.player),
            choice: None,
        })
        .collect();
    Ending::rank(&mut places);
    Ending { round: season, places, conceded: false, helped }
}

/// A stopped table's ending: the season its stop closed, the Thaums as the stop left
/// them (a stop, unlike a loop's end, resets nothing).
pub fn of_stopped(state: &ThaumState) -> Option<Ending> {
    if !state.finished {
        return None;
    }
    let last = state.seasons.last()?;
    let tiebreak = |player: &PlayerId| state.players.get(player).map_or(0, |sheet| sum(&sheet.thaums));
    Some(of(last.season, &last.standings, tiebreak, BTreeSet::new()))
}

/// Reads a Thaum table's season endings from its events, following each player's Thaums
/// and the coins game masters gave.
#[derive(Clone, Debug, Default)]
pub struct ThaumEndings {
    thaums: BTreeMap<PlayerId, Thaums>,
    given: BTreeSet<PlayerId>,
    done: bool,
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

/// The kinds of event that end a season, change a Thaum or a game master changed coins with.
const TOLD: [&str; 10] = [
    "coins_adjusted",
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

impl ThaumEndings {
    fn now(&self, player: &PlayerId) -> Thaums {
        self.thaums.get(player).copied().unwrap_or(Thaums::ZERO)
    }
}

impl EndingReader for ThaumEndings {
    fn read(&mut self, record: &EventRecord) -> Option<Ending> {
        // Most events tell nothing here: look at their kind before reading them whole.
        let kind = record.event.get("kind").and_then(serde_json::Value::as_str)?;
        if !TOLD.contains(&kind) {
            return None;
        }
        if kind == "stopped" {
            self.done = true;
        }
        if kind == "coins_adjusted" {
            let adjusted = CoinsAdjusted::deserialize(&record.event).ok()?;
            if adjusted.change.after > adjusted.change.before {
                self.given.insert(adjusted.player);
            }
            return None;
        }
        if matches!(kind, "alchemy" | "summoning") {
            let zeroed = Zeroed::deserialize(&record.event).ok()?;
            let now = self.now(&zeroed.player);
            self.thaums.extend(zeroed.after(now));
            return None;
        }
        let changed: Vec<(PlayerId, Thaums)> = match ThaumEvent::deserialize(&record.event).ok()? {
            ThaumEvent::LoopEnded { season, standings } | ThaumEvent::Stopped { season, standings, .. } => {
                let tiebreak = |player: &PlayerId| self.thaums.get(player).map_or(0, sum);
                return Some(of(season, &standings, tiebreak, std::mem::take(&mut self.given)));
            }
            ThaumEvent::SeasonBegan { .. } => {
                self.thaums.keys().map(|player| (player.clone(), Thaums::ZERO)).collect()
            }
            ThaumEvent::Gathered { player, thaum, after, .. }
            | ThaumEvent::BloodMagic { player, thaum, after, .. } => {
                let mut sheet = self.now(&player);
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
        self.thaums.extend(changed);
        None
    }

    fn done(&self) -> bool {
        self.done
    }

    fn boxed_clone(&self) -> Box<dyn EndingReader> {
        Box::new(self.clone())
    }
}
