//! How games ended, read from the typed events the journal keeps with each table's
//! entries (`opened`, `acted` and `fired` carry the table's `EventRecord`s), through the
//! table's game: its plugin's [`EndingReader`](spellbridge_core::EndingReader) says what
//! each event ended, and its [`TableKind`] how the ending is rated. No table is replayed
//! and nothing here knows a game's events.
//!
//! A table opened by a journal from before events (its `opened` entry keeps none) is
//! replayed instead ([`replay`]), as before.

use std::collections::{BTreeMap, BTreeSet};

use spellbridge_core::Registry;

use super::RatingsError;
use super::reading::{Ending, Reading};
use super::replay;
use crate::journal::{Entry, TableId};

/// The tables of a journal being read, in journal order.
#[derive(Clone, Debug, Default)]
pub struct Tables {
    /// Tables read from their events.
    read: BTreeMap<TableId, Reading>,
    /// Tables from before events, replayed.
    replayed: replay::Tables,
    replaying: BTreeSet<TableId>,
}

impl Tables {
    /// Applies one journal entry (entries of no table are ignored here) and returns the
    /// endings it told.
    pub fn apply(&mut self, registry: &Registry, entry: &Entry) -> Result<Vec<Ending>, RatingsError> {
        let (table, events) = match entry {
            Entry::Opened { table, game, events, .. } => {
                if events.is_empty() {
                    self.replaying.insert(*table);
                    return self.replayed.apply(registry, entry);
                }
                if let Some(reading) = Reading::of(registry, game) {
                    self.read.insert(*table, reading);
                }
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
        let Some(reading) = self.read.get_mut(&table) else { return Ok(Vec::new()) };
        let endings = reading.read(table, events);
        // A table that finished tells nothing more: let it go.
        if reading.reader.done() {
            self.read.remove(&table);
        }
        Ok(endings)
    }
}
