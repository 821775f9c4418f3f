//! The messages being sent, so that the sync loop can hold its next long poll until the
//! answers to the commands it just handed over are out.
//!
//! Synapse serves requests on one thread. A long poll of the bot's that is waiting while
//! an answer is being stored is woken by that very answer, and Synapse builds the bot's
//! response just when it should be telling the player; so does a long poll started as
//! soon as the answer's `PUT` returns. Holding the poll until the answer is out and
//! delivered keeps its way clear: the `PUT` and the player's sync each take about as long
//! as with no bot syncing at all, some 4–5 ms less for a command on a quiet homeserver
//! (docs/benchmarks.md, "Matrix benchmark"). The hold is short and bounded, and only
//! follows commands: whatever arrives meanwhile waits at the homeserver and comes with the
//! next sync, at once.

use std::collections::BTreeSet;
use std::time::Duration;

use tokio::sync::watch;

/// The longest the sync loop waits for the daemon to start answering a command (the
/// router's work and its commit to SQLite come first: about half a millisecond).
const START_WITHIN: Duration = Duration::from_millis(20);
/// The longest it waits for the answers to be sent.
const SENT_WITHIN: Duration = Duration::from_millis(250);
/// How much longer it waits once they are: Synapse builds the members' syncs with the
/// event as it answers the `PUT`, and the player has it 3–5 ms after (p50, on a quiet
/// homeserver; 8 ms is rare). A poll sent sooner, and matrix-sdk's work on the response
/// that brought the command, would compete with the slower of those syncs.
const DELIVERY: Duration = Duration::from_millis(12);

/// The sends in flight, each numbered in the order they started.
#[derive(Debug)]
pub(super) struct Sends {
    state: watch::Sender<State>,
}

#[derive(Debug, Default)]
struct State {
    /// How many sends have started (the number of the latest).
    started: u64,
    in_flight: BTreeSet<u64>,
}

/// One send in flight; it is over when this is dropped.
#[must_use = "the send counts as in flight until this is dropped"]
pub(super) struct Sending<'a> {
    sends: &'a Sends,
    number: u64,
}

impl Drop for Sending<'_> {
    fn drop(&mut self) {
        self.sends.state.send_modify(|state| {
            state.in_flight.remove(&self.number);
        });
    }
}

impl Default for Sends {
    fn default() -> Self {
        Sends { state: watch::Sender::new(State::default()) }
    }
}

impl Sends {
    /// How many sends have started so far: a mark to wait from.
    pub(super) fn started(&self) -> u64 {
        self.state.borrow().started
    }

    /// Counts a send in flight until the returned guard is dropped.
    pub(super) fn start(&self) -> Sending<'_> {
        let mut number = 0;
        self.state.send_modify(|state| {
            state.started += 1;
            number = state.started;
            state.in_flight.insert(number);
        });
        Sending { sends: self, number }
    }

    /// Waits until the sends started after `mark` (the answers) are over and delivered:
    /// at most [`START_WITHIN`] for the first to start, then at most [`SENT_WITHIN`] for
    /// them to be sent, then [`DELIVERY`].
    pub(super) async fn answered(&self, mark: u64) {
        self.answered_within(mark, START_WITHIN, SENT_WITHIN).await;
    }

    async fn answered_within(&self, mark: u64, start_within: Duration, sent_within: Duration) {
        let mut state = self.state.subscribe();
        let started = tokio::time::timeout(start_within, state.wait_for(|s| s.started > mark))
            .await
            .is_ok_and(|seen| seen.is_ok());
        if !started {
            return;
        }
        let sent = state.wait_for(|s| s.in_flight.range(mark + 1..).next().is_none());
        let _ = tokio::time::timeout(sent_within, sent).await;
        tokio::time::sleep(DELIVERY).await;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    const LONG: Duration = Duration::from_secs(10);

    #[tokio::test]
    async fn waits_for_the_answers_started_after_the_mark_and_not_for_older_sends() {
        let sends = Arc::new(Sends::default());
        let older = sends.start();
        let mark = sends.started();
        let answering = {
            let sends = sends.clone();
            tokio::spawn(async move {
                let answer = sends.start();
                tokio::time::sleep(Duration::from_millis(50)).await;
                drop(answer);
            })
        };
        sends.answered_within(mark, LONG, LONG).await;
        {
            let state = sends.state.borrow();
            assert_eq!(state.started, mark + 1, "returned before the answer started");
            assert!(
                state.in_flight.range(mark + 1..).next().is_none(),
                "returned before the answer was sent"
            );
            assert!(state.in_flight.contains(&mark), "the older send is still going");
        }
        answering.await.expect("the answer task");
        drop(older);
    }

    #[tokio::test]
    async fn returns_when_no_answer_starts_in_time() {
        let sends = Sends::default();
        let older = sends.start();
        let mark = sends.started();
        let waited =
            tokio::time::timeout(LONG, sends.answered_within(mark, Duration::from_millis(20), LONG)).await;
        assert!(waited.is_ok(), "waited for a send that started before the mark");
        drop(older);
    }

    #[tokio::test]
    async fn an_answer_that_never_ends_is_waited_for_only_so_long() {
        let sends = Sends::default();
        let mark = sends.started();
        let stuck = sends.start();
        let waited =
            tokio::time::timeout(LONG, sends.answered_within(mark, LONG, Duration::from_millis(20))).await;
        assert!(waited.is_ok(), "the wait for a stuck send is not bounded");
        assert_eq!(sends.started(), mark + 1);
        drop(stuck);
        assert!(sends.state.borrow().in_flight.is_empty());
    }
}
