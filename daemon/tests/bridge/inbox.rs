//! What a test's chat user has received, kept in order for both networks' users.
//!
//! [`Inbox::take`] takes the first message not taken yet that matches and never loses what
//! it skips (messages may come in either order), so a test can both wait for messages
//! and count every one that arrived. [`Receiver::expect_where`] is the one waiting loop
//! over it, for an IRC client and a Matrix user alike.

use std::collections::BTreeSet;
use std::fmt::Display;
use std::time::Duration;

use tokio::time::Instant;

use super::support::WAIT;

/// Every message a user received, and which of them a test has expected.
pub(super) struct Inbox<M> {
    seen: Vec<M>,
    /// Everything before this was expected; `taken` are the ones expected after it.
    read: usize,
    taken: BTreeSet<usize>,
}

impl<M: Clone + Display> Inbox<M> {
    pub(super) fn new() -> Self {
        Inbox { seen: Vec::new(), read: 0, taken: BTreeSet::new() }
    }

    /// Keeps a message that arrived.
    pub(super) fn push(&mut self, message: M) {
        self.seen.push(message);
    }

    /// Every message received, in order.
    pub(super) fn all(&self) -> &[M] {
        &self.seen
    }

    /// Forgets everything received so far.
    pub(super) fn clear(&mut self) {
        *self = Inbox::new();
    }

    /// The first message not taken yet for which `wanted` holds, now taken.
    pub(super) fn take(&mut self, wanted: impl Fn(&M) -> bool) -> Option<M> {
        let i = (self.read..self.seen.len()).find(|i| !self.taken.contains(i) && wanted(&self.seen[*i]))?;
        self.taken.insert(i);
        while self.taken.remove(&self.read) {
            self.read += 1;
        }
        Some(self.seen[i].clone())
    }

    /// The last 30 messages not taken, for failure messages.
    pub(super) fn unexpected(&self) -> String {
        let left: Vec<String> = (self.read..self.seen.len())
            .filter(|i| !self.taken.contains(i))
            .map(|i| self.seen[i].to_string())
            .collect();
        left[left.len().saturating_sub(30)..].join("\n  ")
    }
}

/// A test's chat user: somebody with an [`Inbox`] and a way to read the next message.
pub(super) trait Receiver {
    type Message: Clone + Display;

    /// Who this is, for failure messages.
    fn who(&self) -> String;

    fn inbox(&mut self) -> &mut Inbox<Self::Message>;

    /// The next message from the network, waiting at most `wait`.
    async fn next_message(&mut self, wait: Duration) -> Option<Self::Message>;

    /// The next message (not taken yet) for which `wanted` holds, within [`WAIT`].
    async fn expect_where(&mut self, what: &str, wanted: impl Fn(&Self::Message) -> bool) -> Self::Message {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(message) = self.inbox().take(&wanted) {
                return message;
            }
            match self.next_message(deadline.saturating_duration_since(Instant::now())).await {
                Some(message) => self.inbox().push(message),
                None => panic!(
                    "{} waited {WAIT:?} for {what}; received and not expected (the last 30):\n  {}",
                    self.who(),
                    self.inbox().unexpected()
                ),
            }
        }
    }
}
