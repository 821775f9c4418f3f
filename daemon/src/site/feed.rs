//! From the engine's "table X changed" notices to the open event streams: one `watch`
//! per watched table holds its latest `update` event, made once per change however many
//! streams follow it. Publishing never waits for a stream: a slow one sees only the
//! latest update when it catches up. A notice the feed missed (it fell behind the
//! engine's broadcast) refreshes every watched table.
//!
//! `/` is followed too, by one counter: how many times a shown table (not one of a hidden
//! room) changed while anyone followed `/`. Its streams say only the counter, never which
//! table, so `/` fetches itself again.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::broadcast::error::RecvError;
use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;

use super::{Site, SiteError, public};
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
    fn index_watched(&self) -> bool {
        self.index.receiver_count() > 0
    }

    /// Hands `update` to every stream of `id` (never waits).
    pub fn publish(&self, id: TableId, update: Update) {
        if let Some(sender) = self.tables.lock().unwrap_or_else(PoisonError::into_inner).get(&id) {
            sender.send_replace(update);
        }
    }
}

/// The `update` event of table `id` as it is stored now: `Gone` when there is no such
/// table to show.
pub fn current(site: &Site, id: TableId) -> Result<Update, SiteError> {
    let Some(row) = site.reader().table(id)? else { return Ok(Update::Gone) };
    if site.hidden().hides(&row.network, &row.room) {
        return Ok(Update::Gone);
    }
    let entry = public::entry(site.registry(), &row);
    // JSON text has no raw line break, so it is one `data:` line.
    Ok(Update::Event(format!("event: update\nid: {}\ndata: {entry}\n\n", row.sequence()).into()))
}

/// Runs until `shutdown` or until the engine's broadcast closes.
pub async fn follow(site: Site, mut changes: broadcast::Receiver<TableId>, shutdown: CancellationToken) {
    loop {
        let changed = tokio::select! {
            () = shutdown.cancelled() => return,
            changed = changes.recv() => changed,
        };
        let tables = match changed {
            Ok(id) => vec![id],
            Err(RecvError::Lagged(missed)) => {
                tracing::debug!(missed, "the site's feed fell behind; refreshing every watched table");
                site.inner.feed.watched()
            }
            Err(RecvError::Closed) => return,
        };
        let feed = &site.inner.feed;
        let index = feed.index_watched();
        let mut shown = false;
        for id in tables {
            let watched = feed.is_watched(id);
            if !watched && !index {
                continue;
            }
            match site.blocking(move |site| current(site, id)).await {
                Ok(update) => {
                    // `Gone`: no such table, or one of a hidden room; `/` is not told.
                    shown |= matches!(update, Update::Event(_));
                    if watched {
                        feed.publish(id, update);
                    }
                }
                Err(error) => tracing::warn!(table = id, %error, "the site could not read a changed table"),
            }
        }
        if index && shown {
            feed.index.send_modify(|version| *version += 1);
        }
    }
}
