//! Between the engine's "table X changed" notices ([`super::follow`]) and the open event
//! streams: one `watch` per watched table holds its latest `update` event, made once per
//! change however many streams follow it. Publishing never waits for a stream: a slow
//! one sees only the latest update when it catches up.
//!
//! `/` is followed too, by one counter: how many times a shown table (not one of a hidden
//! room) changed while anyone followed `/`. Its streams say only the counter, never which
//! table, so `/` fetches itself again.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::watch;

use crate::journal::TableId;

/// An event stream's next frame: the table's latest `update` event, or
/// [`Update::Gone`] when the table may no longer be shown (its room was hidden).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Update {
    /// The whole `event: update` frame, as sent.
    Event(Arc<str>),
    /// The stream ends.
    Gone,
}

/// The watched tables, and the index's counter.
pub struct Feed {
    tables: Mutex<BTreeMap<TableId, watch::Sender<Update>>>,
    index: watch::Sender<u64>,
}

impl Default for Feed {
    fn default() -> Feed {
        Feed { tables: Mutex::default(), index: watch::channel(0).0 }
    }
}

impl Feed {
    /// Follows `id`: the receiver sees every update published from now on (what is
    /// stored now, the stream reads itself, after subscribing).
    pub fn subscribe(&self, id: TableId) -> watch::Receiver<Update> {
        let mut tables = self.tables.lock().unwrap_or_else(PoisonError::into_inner);
        tables.entry(id).or_insert_with(|| watch::channel(Update::Gone).0).subscribe()
    }

    /// True when a stream follows `id`; a table nobody follows any more is let go.
    pub fn is_watched(&self, id: TableId) -> bool {
        let mut tables = self.tables.lock().unwrap_or_else(PoisonError::into_inner);
        match tables.get(&id) {
            Some(sender) if sender.receiver_count() > 0 => true,
            Some(_) => {
                tables.remove(&id);
                false
            }
            None => false,
        }
    }

    /// The tables streams follow.
    pub fn watched(&self) -> Vec<TableId> {
        self.tables.lock().unwrap_or_else(PoisonError::into_inner).keys().copied().collect()
    }

    /// Follows `/`: the receiver sees the index's counter change.
    pub fn subscribe_index(&self) -> watch::Receiver<u64> {
        self.index.subscribe()
    }

    /// The index's counter now (written into `/`, so its stream knows what it missed).
    pub fn index_version(&self) -> u64 {
        *self.index.borrow()
    }

    /// True when a stream follows `/`.
    pub(super) fn index_watched(&self) -> bool {
        self.index.receiver_count() > 0
    }

    /// Hands `update` to every stream of `id` (never waits).
    pub fn publish(&self, id: TableId, update: Update) {
        if let Some(sender) = self.tables.lock().unwrap_or_else(PoisonError::into_inner).get(&id) {
            sender.send_replace(update);
        }
    }

    /// Tells `/`'s streams that a shown table changed.
    pub(super) fn count_index_change(&self) {
        self.index.send_modify(|version| *version += 1);
    }
}
