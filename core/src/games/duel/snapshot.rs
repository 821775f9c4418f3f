//! The duel's state as JSON, in the form of CONTRACT.md's `--state-json` (maps keyed by
//! player name), and back. [`Duel::snapshot`] then [`Duel::restore`] rebuilds the duel
//! exactly; the fields beyond the contract (the current round with its queues, the
//! wizard cards, the rules) are what makes that possible.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::engine::{Duel, DuelRules, Finish, FinishReason, RoundRecord, SpellRecord};
use super::round::{Caster, Round};
use super::spell::Seal;
use super::wizard::{Pool, Wizard};
use crate::ids::PlayerId;
use crate::time::Timestamp;

#[derive(Serialize, Deserialize)]
struct DuelSnapshot {
    players: [PlayerId; 2],
    wizards: BTreeMap<PlayerId, String>,
    track: i64,
    finished: bool,
    winner: Option<String>,
    pools: BTreeMap<PlayerId, Pool>,
    seals: BTreeMap<PlayerId, Seal>,
    rounds: Vec<RoundSnapshot>,
    #[serde(default)]
    finish_reason: Option<FinishReason>,
    round: CurrentRound,
    wizard_cards: BTreeMap<PlayerId, Wizard>,
    rules: DuelRules,
}

#[derive(Serialize, Deserialize)]
struct RoundSnapshot {
    round: u32,
    spells: BTreeMap<PlayerId, SpellRecord>,
    track_after: i64,
    #[serde(default)]
    seeds: Vec<u64>,
}

#[derive(Serialize, Deserialize)]
struct CurrentRound {
    number: u32,
    step: u32,
    step_started: Timestamp,
    /// Derived (step_started + timeout); written for readers, ignored on restore.
    #[serde(default)]
    deadline: Option<Timestamp>,
    casters: BTreeMap<PlayerId, Caster>,
    #[serde(default)]
    seeds: Vec<u64>,
}

fn by_name<T: Clone>(players: &[PlayerId; 2], values: [&T; 2]) -> BTreeMap<PlayerId, T> {
    players.iter().cloned().zip(values.into_iter().cloned()).collect()
}

fn take<T>(map: &mut BTreeMap<PlayerId, T>, player: &PlayerId, what: &str) -> Result<T, String> {
    map.remove(player).ok_or_else(|| format!("the duel snapshot has no {what} for {player}"))
}

impl Duel {
    /// The state as JSON (CONTRACT.md `--state-json`, plus what restoring needs).
    pub fn snapshot(&self) -> Value {
        let p = &self.players;
        let rounds = self
            .rounds
            .iter()
            .map(|r| RoundSnapshot {
                round: r.number,
                spells: by_name(p, [&r.spells[0], &r.spells[1]]),
                track_after: r.track_after,
                seeds: r.seeds.clone(),
            })
            .collect();
        // A stopped duel has no winner: `winner` is null, as before it finished, and
        // `finish_reason` says why.
        let winner = self.finish.and_then(|f| match (f.reason, f.winner) {
            (FinishReason::Stopped, _) => None,
            (_, Some(seat)) => Some(p[seat].to_string()),
            (_, None) => Some("draw".to_owned()),
        });
        let snapshot = DuelSnapshot {
            players: p.clone(),
            wizards: by_name(p, [&self.wizards[0].name, &self.wizards[1].name]),
            track: self.track,
            finished: self.finish.is_some(),
            winner,
            pools: by_name(p, [&self.pools[0], &self.pools[1]]),
            seals: by_name(p, [&self.seals[0], &self.seals[1]]),
            rounds,
            finish_reason: self.finish.map(|f| f.reason),
            round: CurrentRound {
                number: self.round.number,
                step: self.round.step,
                step_started: self.round.step_started,
                deadline: self.next_timer(),
                casters: by_name(p, [&self.round.casters[0], &self.round.casters[1]]),
                seeds: self.round.seeds.clone(),
            },
            wizard_cards: by_name(p, [&self.wizards[0], &self.wizards[1]]),
            rules: self.rules.clone(),
        };
        // Plain structs and maps with string keys always serialise.
        serde_json::to_value(snapshot).unwrap_or(Value::Null)
    }

    /// Rebuilds a duel from [`Duel::snapshot`].
    pub fn restore(snapshot: &Value) -> Result<Duel, String> {
        let mut s: DuelSnapshot =
            serde_json::from_value(snapshot.clone()).map_err(|e| format!("not a duel snapshot: {e}"))?;
        let players = s.players.clone();
        if players[0] == players[1] {
            return Err(format!("the duel snapshot seats {} twice", players[0]));
        }
        let [a, b] = &players;
        let seat = |name: &str| -> Result<Option<usize>, String> {
            match name {
                "draw" => Ok(None),
                name => players
                    .iter()
                    .position(|p| p.as_str() == name)
                    .map(Some)
                    .ok_or_else(|| format!("the duel snapshot's winner {name} is not a player")),
            }
        };
        let finish = match (s.finished, s.finish_reason, s.winner.as_deref()) {
            (false, _, _) => None,
            (true, Some(FinishReason::Stopped), None) => {
                Some(Finish { winner: None, reason: FinishReason::Stopped })
            }
            (true, Some(FinishReason::Stopped), Some(name)) => {
                return Err(format!(
                    "the duel snapshot was stopped, so it has no winner, but it names {name}"
                ));
            }
            (true, _, None) => return Err("the duel snapshot is finished but names no winner".to_owned()),
            (true, reason, Some(name)) => {
                Some(Finish { winner: seat(name)?, reason: reason.unwrap_or(FinishReason::Track) })
            }
        };
        let mut rounds = Vec::with_capacity(s.rounds.len());
        for mut r in s.rounds {
            rounds.push(RoundRecord {
                number: r.round,
                spells: [take(&mut r.spells, a, "spell")?, take(&mut r.spells, b, "spell")?],
                track_after: r.track_after,
                seeds: r.seeds,
            });
        }
        let mut casters = s.round.casters;
        // A hand-edited timeout below one second would fire the step timer in a loop.
        s.rules.step_timeout_secs = s.rules.step_timeout_secs.max(1);
        Ok(Duel {
            wizards: [take(&mut s.wizard_cards, a, "wizard")?, take(&mut s.wizard_cards, b, "wizard")?],
            rules: s.rules,
            track: s.track,
            pools: [take(&mut s.pools, a, "pool")?, take(&mut s.pools, b, "pool")?],
            seals: [take(&mut s.seals, a, "seal")?, take(&mut s.seals, b, "seal")?],
            rounds,
            round: Round {
                number: s.round.number,
                step: s.round.step,
                step_started: s.round.step_started,
                casters: [take(&mut casters, a, "casting")?, take(&mut casters, b, "casting")?],
                seeds: s.round.seeds,
            },
            finish,
            players,
        })
    }
}
