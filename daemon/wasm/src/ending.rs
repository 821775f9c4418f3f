//! How a component's game ended, for ratings, `!stats` and `!top`. When a table finishes,
//! [`WasmTable`](crate::WasmTable) adds an [`Ended`] event holding the component's
//! `ended` answer (only seated players, each once), so the ending is journaled with the
//! move that made it and [`Endings`] reads it back like a built-in game's ending reader.
//! A component's own news serialise as `{"id", "args"}`, so none can pass for one.

use serde::{Deserialize, Serialize};
use spellbridge_core::ending::{Ending, EndingReader};
use spellbridge_core::event::EventRecord;

/// The host's event for a table that has just finished: how it ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ended {
    /// The component's ending, as the host checked it.
    pub ended: Ending,
}

/// Reads one component table's ending from its journaled events.
#[derive(Clone, Debug, Default)]
pub struct Endings {
    done: bool,
}

impl EndingReader for Endings {
    fn read(&mut self, event: &EventRecord) -> Option<Ending> {
        if self.done {
            return None;
        }
        let ended = Ended::deserialize(&event.event).ok()?;
        self.done = true;
        Some(ended.ended)
    }

    fn done(&self) -> bool {
        self.done
    }

    fn boxed_clone(&self) -> Box<dyn EndingReader> {
        Box::new(self.clone())
    }
}
