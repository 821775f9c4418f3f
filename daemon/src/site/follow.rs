//! From the engine's "table X changed" notices to the [`super::feed`]: each changed table
//! that a stream watches is read once as it is stored now ([`current`], its public entry)
//! and published; `/`'s counter counts the changes of shown tables. A notice missed (the
//! site fell behind the engine's broadcast) refreshes every watched table.

use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

use super::error::SiteError;
use super::feed::Update;
use super::public;
use super::shared::Site;
use crate::journal::TableId;

/// The `update` event of table `id` as it is stored now: `Gone` when there is no such
/// table to show.
pub fn current(site: &Site, id: TableId) -> Result<Update, SiteError> {
    let Some(row) = site.reader().table(id)? else { return Ok(Update::Gone) };
    if site.hidden().hides(&row.network, &row.room) {
        return Ok(Update::Gone);
    }
    let entry = public::entry(&site.registry(), &row);
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
            feed.count_index_change();
        }
    }
}
