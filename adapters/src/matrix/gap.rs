//! Filling a room's gap: when `/sync` returns a `limited` timeline (more events arrived
//! since the previous sync than the filter's limit), the events between the previous
//! sync's position and the start of the timeline are fetched with the room messages API
//! (`/messages?dir=b&from=<prev_batch>&to=<since>`), page by page, and returned oldest
//! first, so that they are handed to the daemon before the timeline's own events.
//!
//! matrix-sdk's `Room::messages` decrypts what it can; an event it cannot decrypt comes
//! back as undecryptable, exactly like one in a sync timeline.

use matrix_sdk::Room;
use matrix_sdk::deserialized_responses::TimelineEvent;
use matrix_sdk::room::MessagesOptions;
use matrix_sdk::ruma::UInt;

/// Events asked for per page.
pub(super) const PAGE: u32 = 100;
/// The most pages fetched for one gap (so one gap is at most 2,000 events).
pub(super) const MOST_PAGES: usize = 20;

/// A room's gap, oldest first.
pub(super) struct Gap {
    pub(super) events: Vec<TimelineEvent>,
    /// The bound was hit: older events than these were not fetched.
    pub(super) truncated: bool,
}

/// Fetches the events before `prev_batch` (a timeline's) back to `since` (the previous
/// sync's `next_batch`).
pub(super) async fn fetch(room: &Room, prev_batch: &str, since: &str) -> Result<Gap, matrix_sdk::Error> {
    let mut newest_first = Vec::new();
    let mut from = prev_batch.to_owned();
    for _ in 0..MOST_PAGES {
        let mut options = MessagesOptions::backward().from(from.as_str());
        options.to = Some(since.to_owned());
        options.limit = UInt::from(PAGE);
        let page = room.messages(options).await?;
        let empty = page.chunk.is_empty();
        newest_first.extend(page.chunk);
        match page.end {
            Some(end) if !empty && end != from => from = end,
            _ => {
                newest_first.reverse();
                return Ok(Gap { events: newest_first, truncated: false });
            }
        }
    }
    newest_first.reverse();
    Ok(Gap { events: newest_first, truncated: true })
}
