//! Replaying tables from their journal entries alone, to learn how games ended: each
//! action is given the dice of the seed recorded with it (`Dice::from_seed`), so no dice
//! key is needed (`spellbridge verify` checks those seeds against the keys separately,
//! RULES T-10). What comes out are [`Ending`]s: a Duel that finished, a Thaum season that
//! ended, read from the tables' public snapshots.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;
use serde_json::Value;
use spellbridge_core::games::duel::FinishReason;
use spellbridge_core::plugin::{Action, Table};
use spellbridge_core::{Dice, PlayerId, Registry};

use super::RatingsError;
use crate::journal::{Entry, TableId, read_command};

/// How a game ended, as the ratings need it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    /// A Duel finished with a winner or a draw (a stopped duel is not an ending).
    Duel {
        /// The table.
        table: TableId,
        /// Both wizards' players, the challenger first.
        players: [PlayerId; 2],
        /// Each player's wizard, in the same order.
        wizards: [String; 2],
        /// The winner's seat, or `None` for a draw.
        winner: Option<usize>,
        /// True when the loser conceded.
        conceded: bool,
    },
    /// A Thaum season ended (its loop ended, or a game master stopped the table).
    Season {
        /// The table.
        table: TableId,
        /// The season's number.
        season: u32,
        /// Every player with their coins (net of debt) and the sum of their Thaums when
        /// the season ended, in the table's order.
        players: Vec<(PlayerId, i128, i64)>,
        /// The players whose coins a game master's `!coins` raised during the season.
        given: BTreeSet<PlayerId>,
    },
}

/// A table being replayed.
struct Replaying {
    table: Box<dyn Table>,
    /// Thaum: the seasons already ended, and each player's Thaum sum after the last entry
    /// (a season's end resets the sheets, so the sums are read before it).
    seasons: usize,
    thaums: BTreeMap<PlayerId, i64>,
    /// Thaum: the players whose coins a game master's `!coins` raised this season.
    given: BTreeSet<PlayerId>,
}

/// The tables of a journal being replayed, in journal order.
#[derive(Default)]
pub struct Tables {
    open: BTreeMap<TableId, Replaying>,
}

impl Clone for Tables {
    fn clone(&self) -> Self {
        let open = self
            .open
            .iter()
            .map(|(id, r)| {
                (
                    *id,
                    Replaying {
                        table: r.table.boxed_clone(),
                        seasons: r.seasons,
                        thaums: r.thaums.clone(),
                        given: r.given.clone(),
                    },
                )
            })
            .collect();
        Tables { open }
    }
}

impl std::fmt::Debug for Tables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tables").field("open", &self.open.keys().collect::<Vec<_>>()).finish()
    }
}

/// The part of a Thaum snapshot the seasons need.
#[derive(Default, Deserialize)]
#[serde(default)]
struct ThaumPublic {
    players: BTreeMap<PlayerId, Sheet>,
    seasons: Vec<SeasonPublic>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Sheet {
    thaums: BTreeMap<String, i64>,
    coins: u64,
    debt: u64,
}

impl Sheet {
    fn net(&self) -> i128 {
        i128::from(self.coins) - i128::from(self.debt)
    }
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct SeasonPublic {
    season: u32,
    standings: Vec<StandingPublic>,
}

#[derive(Deserialize)]
struct StandingPublic {
    player: PlayerId,
    #[serde(default)]
    coins: u64,
    #[serde(default)]
    debt: u64,
}

/// The part of a Duel snapshot its ending needs.
#[derive(Default, Deserialize)]
#[serde(default)]
struct DuelPublic {
    players: Vec<PlayerId>,
    wizards: BTreeMap<PlayerId, String>,
    winner: Option<String>,
    finish_reason: Option<FinishReason>,
}

impl Tables {
    /// Applies one journal entry (entries of no table are ignored here) and returns the
    /// endings it caused.
    pub fn apply(&mut self, registry: &Registry, entry: &Entry) -> Result<Vec<Ending>, RatingsError> {
        match entry {
            Entry::Opened { table, game, opening, .. } => {
                let plugin = registry
                    .get(game)
                    .ok_or(RatingsError::UnknownGame { table: *table, game: game.clone() })?;
                let opened = plugin
                    .restore(opening)
                    .map_err(|reason| RatingsError::Replay { table: *table, reason })?;
                let mut replaying =
                    Replaying { table: opened, seasons: 0, thaums: BTreeMap::new(), given: BTreeSet::new() };
                let _ = thaum_endings(*table, &mut replaying);
                self.open.insert(*table, replaying);
                Ok(Vec::new())
            }
            Entry::Acted { table, actor, command, parsed, typed, private, role, now, dice_seed, .. } => {
                let Some(replaying) = self.open.get_mut(table) else { return Ok(Vec::new()) };
                // The journal keeps the command typed (before: as text), as the router's
                // replay reads it.
                let parsed =
                    read_command(replaying.table.commands(), parsed.as_ref(), command).map_err(|error| {
                        RatingsError::Replay {
                            table: *table,
                            reason: format!("the journaled `{typed}`: {error}"),
                        }
                    })?;
                let action =
                    Action { actor, command: &parsed, typed, private: *private, now: *now, role: *role };
                let mut dice = Dice::from_seed(*dice_seed);
                // A game master's `!coins` (RULES T-9): whose coins it raised is read from the
                // sheets before and after.
                let coins = replaying.table.game() == "thaum" && parsed.name() == "coins";
                let before = if coins { thaum_coins(replaying.table.as_ref()) } else { BTreeMap::new() };
                if let Err(refusal) = replaying.table.act(&action, &mut dice) {
                    return Err(RatingsError::Replay {
                        table: *table,
                        reason: format!("the journaled `{typed}` was refused: {refusal}"),
                    });
                }
                if coins {
                    let after = thaum_coins(replaying.table.as_ref());
                    let raised = after.into_iter().filter(|(p, c)| before.get(p).is_none_or(|b| c > b));
                    replaying.given.extend(raised.map(|(p, _)| p));
                }
                Ok(self.after(*table))
            }
            Entry::Fired { table, at, dice_seed, .. } => {
                let Some(replaying) = self.open.get_mut(table) else { return Ok(Vec::new()) };
                let _ = replaying.table.fire_timer(*at, &mut Dice::from_seed(*dice_seed));
                Ok(self.after(*table))
            }
            _ => Ok(Vec::new()),
        }
    }

    /// What a table's last entry ended; a finished table is let go.
    fn after(&mut self, id: TableId) -> Vec<Ending> {
        let Some(replaying) = self.open.get_mut(&id) else { return Vec::new() };
        let endings = match replaying.table.game() {
            "duel" if replaying.table.is_finished() => duel_ending(id, &replaying.table.snapshot()),
            "thaum" => thaum_endings(id, replaying),
            _ => Vec::new(),
        };
        if replaying.table.is_finished() {
            self.open.remove(&id);
        }
        endings
    }
}

fn duel_ending(table: TableId, snapshot: &Value) -> Vec<Ending> {
    let Ok(duel) = DuelPublic::deserialize(snapshot) else { return Vec::new() };
    let [a, b] = duel.players.as_slice() else { return Vec::new() };
    let wizard = |p: &PlayerId| duel.wizards.get(p).cloned().unwrap_or_default();
    let winner = match duel.winner.as_deref() {
        None => return Vec::new(),
        Some("draw") => None,
        Some(name) if name == a.as_str() => Some(0),
        Some(name) if name == b.as_str() => Some(1),
        Some(_) => return Vec::new(),
    };
    let conceded = duel.finish_reason == Some(FinishReason::Conceded);
    vec![Ending::Duel {
        table,
        players: [a.clone(), b.clone()],
        wizards: [wizard(a), wizard(b)],
        winner,
        conceded,
    }]
}

/// The seasons a Thaum table ended since it was last looked at, with the Thaum sums from
/// before; then remembers its seasons and sums.
fn thaum_endings(table: TableId, replaying: &mut Replaying) -> Vec<Ending> {
    let text = replaying.table.snapshot_text_without_history();
    let Ok(state) = serde_json::from_str::<ThaumPublic>(&text) else { return Vec::new() };
    let endings = state
        .seasons
        .iter()
        .skip(replaying.seasons)
        .map(|season| Ending::Season {
            table,
            season: season.season,
            players: season
                .standings
                .iter()
                .map(|s| {
                    let sum = replaying.thaums.get(&s.player).copied().unwrap_or(0);
                    (s.player.clone(), i128::from(s.coins) - i128::from(s.debt), sum)
                })
                .collect(),
            given: std::mem::take(&mut replaying.given),
        })
        .collect();
    replaying.seasons = state.seasons.len();
    replaying.thaums = state.players.into_iter().map(|(p, sheet)| (p, sheet.thaums.values().sum())).collect();
    endings
}

/// Each Thaum player's coins, net of debt, as the table's snapshot shows them.
fn thaum_coins(table: &dyn Table) -> BTreeMap<PlayerId, i128> {
    let text = table.snapshot_text_without_history();
    let state = serde_json::from_str::<ThaumPublic>(&text).unwrap_or_default();
    state.players.into_iter().map(|(p, sheet)| (p, sheet.net())).collect()
}
