//! The events lately handed to the daemon, so that each is handed over once (issue 29,
//! item 5). An event can reach the transport by more than one path: in appservice mode
//! the homeserver pushes it in a transaction *and* the bot's own `/sync` brings it (the
//! sync still runs, for encryption and the bot's session), and a sync may fetch a gap
//! that overlaps what it already read. The daemon drops a redelivered event only once it
//! committed it, so a question or a refusal, which commits nothing, was answered once per
//! path, and the command limit and the link guesses counted it twice.
//!
//! The first path to hand an event over wins; the others find its id here and drop it.
//! The ids are kept in the order they came and the oldest forgotten past [`REMEMBERED`]:
//! the paths deliver an event within seconds of each other, far fewer events than that.

use std::collections::{HashSet, VecDeque};
use std::sync::Mutex;

use matrix_sdk::ruma::{EventId, OwnedEventId};

use super::transport::lock;

/// How many event ids are remembered.
pub(super) const REMEMBERED: usize = 8192;

/// The ids of the events handed over lately.
#[derive(Debug, Default)]
pub(super) struct Handed {
    recent: Mutex<Recent>,
}

#[derive(Debug, Default)]
struct Recent {
    order: VecDeque<OwnedEventId>,
    ids: HashSet<OwnedEventId>,
}

impl Handed {
    /// True the first time `event` is offered (it is to be handed over), false after.
    pub(super) fn first_time(&self, event: &EventId) -> bool {
        let mut recent = lock(&self.recent);
        if recent.ids.contains(event) {
            return false;
        }
        if recent.order.len() == REMEMBERED
            && let Some(oldest) = recent.order.pop_front()
        {
            recent.ids.remove(&oldest);
        }
        recent.order.push_back(event.to_owned());
        recent.ids.insert(event.to_owned());
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: usize) -> OwnedEventId {
        EventId::parse(format!("$event{n}:localhost")).expect("an event id")
    }

    #[test]
    fn an_event_is_handed_over_once_whichever_path_brings_it_first() {
        let handed = Handed::default();
        assert!(handed.first_time(&id(1)), "the transaction brings it first");
        assert!(!handed.first_time(&id(1)), "the sync brings it again: dropped");
        assert!(handed.first_time(&id(2)));
        assert!(!handed.first_time(&id(2)));
    }

    #[test]
    fn only_the_latest_ids_are_remembered() {
        let handed = Handed::default();
        for n in 0..=REMEMBERED {
            assert!(handed.first_time(&id(n)));
        }
        assert!(handed.first_time(&id(0)), "the oldest was forgotten");
        assert!(!handed.first_time(&id(REMEMBERED)), "the newest is still known");
        let recent = lock(&handed.recent);
        assert_eq!((recent.order.len(), recent.ids.len()), (REMEMBERED, REMEMBERED));
    }
}
