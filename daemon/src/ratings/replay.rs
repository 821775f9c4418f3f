//! Replaying tables from their journal entries alone, to learn how games ended (a
//! journal from before events kept none to read): each action is given the dice of the
//! seed recorded with it (`Dice::from_seed`), so no dice key is needed (`spellbridge
//! verify` checks those seeds against the keys separately, RULES T-10). Each table is
//! restored through its game's plugin (`restore`), and the events the replay makes again
//! are read by the game's own ending reader, as the journaled ones are (`endings`).

use std::collections::BTreeMap;

use spellbridge_core::plugin::{Action, Table};
use spellbridge_core::{Dice, Event, Registry};

use super::RatingsError;
use super::reading::{Ending, Reading};
use crate::journal::{Entry, TableId, read_command};

/// A table being replayed, and the reader of its endings.
struct Replaying {
    table: Box<dyn Table>,
    reading: Reading,
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
            .map(|(id, r)| (*id, Replaying { table: r.table.boxed_clone(), reading: r.reading.clone() }))
            .collect();
        Tables { open }
    }
}

impl std::fmt::Debug for Tables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tables").field("open", &self.open.keys().collect::<Vec<_>>()).finish()
    }
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
                // A game whose tables end with nothing to rate need not be replayed.
                if let Some(reading) = Reading::of(registry, game) {
                    self.open.insert(*table, Replaying { table: opened, reading });
                }
                Ok(Vec::new())
            }
            Entry::Acted {
                table,
                actor,
                command,
                parsed,
                typed,
                private,
                role,
                now,
                dice_seed,
                events,
                ..
            } => {
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
                let events = replaying.table.replay_act(&action, &mut dice, events).map_err(|refusal| {
                    RatingsError::Replay {
                        table: *table,
                        reason: format!("the journaled `{typed}` was refused: {refusal}"),
                    }
                })?;
                Ok(self.after(*table, &events))
            }
            Entry::Fired { table, at, dice_seed, .. } => {
                let Some(replaying) = self.open.get_mut(table) else { return Ok(Vec::new()) };
                let events = replaying.table.fire_timer(*at, &mut Dice::from_seed(*dice_seed));
                Ok(self.after(*table, &events))
            }
            _ => Ok(Vec::new()),
        }
    }

    /// What a table's replayed `events` ended; a finished table is let go.
    fn after(&mut self, id: TableId, events: &[Event]) -> Vec<Ending> {
        let Some(replaying) = self.open.get_mut(&id) else { return Vec::new() };
        let records: Vec<_> = events.iter().map(Event::record).collect();
        let endings = replaying.reading.read(id, &records);
        if replaying.table.is_finished() {
            self.open.remove(&id);
        }
        endings
    }
}
