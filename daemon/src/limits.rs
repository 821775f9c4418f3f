//! How much one player or identity may ask of the bot in a while, counted on the
//! router's clock (no clock is read here: every call passes the time).
//!
//! - [`CommandLimits`]: at most N commands per player in a sliding window, on every
//!   network, with linked identities counted as their one player; a nick change carries
//!   the count over ([`CommandLimits::carry_over`]). The first command refused gets a
//!   notice, later ones in the same window are dropped silently.
//! - [`GuessLimits`]: at most [`WRONG_CODES_PER_HOUR`] link codes that did not work per
//!   identity in any hour; after that the identity's `!link <code>` is refused unread. A
//!   nick change carries the count over ([`GuessLimits::carry_over`]), as for commands.
//!
//! The console applies no command limit (CONTRACT.md): its router has no
//! [`CommandLimit`] for any network.

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;

use spellbridge_core::locale::{self, Args};
use spellbridge_core::{Language, Timestamp};

/// Wrong link codes an identity may send in any hour.
pub const WRONG_CODES_PER_HOUR: usize = 5;

/// Failed redemptions that void a code, whoever made them.
pub const WRONG_TRIES_PER_CODE: u32 = 5;

const HOUR: i64 = 60 * 60;

/// The per-player command limit: `commands` in any `window_secs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommandLimit {
    /// Commands allowed in the window (at least 1).
    pub commands: usize,
    /// The window, in seconds (at least 1).
    pub window_secs: i64,
}

impl Default for CommandLimit {
    /// Eight commands per ten seconds.
    fn default() -> Self {
        Self { commands: 8, window_secs: 10 }
    }
}

/// What to do with a player's command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Run it.
    Accept,
    /// Drop it and tell the player [`CommandLimits::notice`] (once per window).
    DropWithNotice,
    /// Drop it silently: the player was already told.
    Drop,
}

/// Times of recent events per key, oldest first, pruned as the map grows.
#[derive(Clone, Debug)]
struct Recent<K> {
    window_secs: i64,
    events: HashMap<K, VecDeque<Timestamp>>,
    prune_at: usize,
}

const MIN_PRUNE_AT: usize = 64;

impl<K: Eq + Hash + Clone> Recent<K> {
    fn new(window_secs: i64) -> Self {
        Self { window_secs: window_secs.max(1), events: HashMap::new(), prune_at: MIN_PRUNE_AT }
    }

    /// The events of `key` still in the window at `now`.
    fn count(&mut self, key: &K, now: Timestamp) -> usize {
        self.count_within(key, self.window_secs, now)
    }

    /// The events of `key` in the last `window` seconds (at most the map's own window).
    fn count_within(&mut self, key: &K, window: i64, now: Timestamp) -> usize {
        self.prune(now);
        let kept = self.window_secs;
        let Some(times) = self.events.get_mut(key) else { return 0 };
        while times.front().is_some_and(|t| now.0.saturating_sub(t.0) >= kept) {
            times.pop_front();
        }
        times.iter().filter(|t| now.0.saturating_sub(t.0) < window).count()
    }

    fn record(&mut self, key: &K, now: Timestamp) {
        self.events.entry(key.clone()).or_default().push_back(now);
    }

    /// The oldest event of `key` in the window, if any.
    fn oldest(&self, key: &K) -> Option<Timestamp> {
        self.events.get(key).and_then(|times| times.front().copied())
    }

    /// Moves `from`'s events to `to`, kept in time order.
    fn merge(&mut self, from: &K, to: &K) {
        if from == to {
            return;
        }
        let Some(moved) = self.events.remove(from) else { return };
        let times = self.events.entry(to.clone()).or_default();
        times.extend(moved);
        times.make_contiguous().sort_unstable();
    }

    /// Forgets keys with nothing in the window, when the map has grown.
    fn prune(&mut self, now: Timestamp) {
        if self.events.len() < self.prune_at {
            return;
        }
        let window = self.window_secs;
        self.events.retain(|_, times| times.back().is_some_and(|t| now.0.saturating_sub(t.0) < window));
        self.prune_at = (self.events.len() * 2).max(MIN_PRUNE_AT);
    }
}

/// The per-player command limit (see the module documentation). One count per player
/// whichever network a command came from; each network's [`CommandLimit`] is judged
/// against it.
#[derive(Clone, Debug)]
pub struct CommandLimits<K> {
    accepted: Recent<K>,
    /// When each player was last told to slow down.
    noticed: Recent<K>,
}

/// How long a player's commands are remembered: the longest window a network may set.
const LONGEST_WINDOW_SECS: i64 = 60 * 60;

impl<K: Eq + Hash + Clone> Default for CommandLimits<K> {
    fn default() -> Self {
        Self { accepted: Recent::new(LONGEST_WINDOW_SECS), noticed: Recent::new(LONGEST_WINDOW_SECS) }
    }
}

impl<K: Eq + Hash + Clone> CommandLimits<K> {
    /// Decides on a command `player` sent at `now` where `limit` applies, and counts it if
    /// accepted.
    pub fn check(&mut self, player: &K, limit: CommandLimit, now: Timestamp) -> Verdict {
        let window = limit.window_secs.clamp(1, LONGEST_WINDOW_SECS);
        if self.accepted.count_within(player, window, now) < limit.commands.max(1) {
            self.accepted.record(player, now);
            return Verdict::Accept;
        }
        if self.noticed.count_within(player, window, now) > 0 {
            Verdict::Drop
        } else {
            self.noticed.record(player, now);
            Verdict::DropWithNotice
        }
    }

    /// `from` is now called `to` (an IRC nick change): the count goes with them.
    pub fn carry_over(&mut self, from: &K, to: &K) {
        self.accepted.merge(from, to);
        self.noticed.merge(from, to);
    }
}

impl CommandLimit {
    /// The notice for a player whose commands were refused.
    pub fn notice(&self) -> String {
        self.notice_in(Language::En)
    }

    /// [`CommandLimit::notice`] in `language`.
    pub fn notice_in(&self, language: Language) -> String {
        let args = Args::new().num("commands", self.commands).num("seconds", self.window_secs);
        locale::text(language, "notice-slow-down", &args)
    }
}

/// Wrong link codes per identity (see the module documentation).
#[derive(Clone, Debug)]
pub struct GuessLimits<K> {
    wrong: Recent<K>,
}

impl<K: Eq + Hash + Clone> Default for GuessLimits<K> {
    fn default() -> Self {
        Self { wrong: Recent::new(HOUR) }
    }
}

impl<K: Eq + Hash + Clone> GuessLimits<K> {
    /// `None` when `identity` may send a code at `now`; else when it may again.
    pub fn blocked_until(&mut self, identity: &K, now: Timestamp) -> Option<Timestamp> {
        if self.wrong.count(identity, now) < WRONG_CODES_PER_HOUR {
            return None;
        }
        self.wrong.oldest(identity).map(|oldest| oldest.plus(HOUR))
    }

    /// Counts a code from `identity` that did not work.
    pub fn wrong(&mut self, identity: &K, now: Timestamp) {
        self.wrong.record(identity, now);
    }

    /// `from` is now called `to` (an IRC nick change): the wrong codes go with them.
    pub fn carry_over(&mut self, from: &K, to: &K) {
        self.wrong.merge(from, to);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Timestamp = Timestamp::CONSOLE_EPOCH;

    #[test]
    fn a_player_over_the_limit_is_told_once_then_dropped_until_the_window_moves() {
        let two = CommandLimit { commands: 2, window_secs: 10 };
        let mut limits = CommandLimits::default();
        use Verdict::*;
        let verdicts: Vec<Verdict> = (0..4).map(|_| limits.check(&"alice", two, T)).collect();
        assert_eq!(verdicts, [Accept, Accept, DropWithNotice, Drop]);
        assert_eq!(limits.check(&"bob", two, T), Accept);
        assert_eq!(limits.check(&"alice", two, T.plus(9)), Drop);
        assert_eq!(limits.check(&"alice", two, T.plus(10)), Accept);
        assert!(two.notice().contains("faster than 2 per 10 s"), "{}", two.notice());
    }

    #[test]
    fn the_count_follows_a_new_name() {
        let two = CommandLimit { commands: 2, window_secs: 10 };
        let mut limits = CommandLimits::default();
        limits.check(&"alice", two, T);
        limits.check(&"alice", two, T);
        limits.carry_over(&"alice", &"alice2");
        assert_eq!(limits.check(&"alice2", two, T.plus(1)), Verdict::DropWithNotice);
    }

    #[test]
    fn each_network_judges_the_one_count_by_its_own_limit() {
        let strict = CommandLimit { commands: 1, window_secs: 60 };
        let loose = CommandLimit { commands: 3, window_secs: 10 };
        let mut limits = CommandLimits::default();
        assert_eq!(limits.check(&"alice", loose, T), Verdict::Accept);
        assert_eq!(limits.check(&"alice", strict, T.plus(20)), Verdict::DropWithNotice);
        assert_eq!(limits.check(&"alice", loose, T.plus(20)), Verdict::Accept);
    }

    #[test]
    fn five_wrong_codes_block_an_identity_for_an_hour_from_the_first() {
        let mut guesses = GuessLimits::default();
        for minute in 0..5 {
            assert_eq!(guesses.blocked_until(&"eve", T.plus(minute * 60)), None);
            guesses.wrong(&"eve", T.plus(minute * 60));
        }
        assert_eq!(guesses.blocked_until(&"eve", T.plus(300)), Some(T.plus(HOUR)));
        assert_eq!(guesses.blocked_until(&"bob", T.plus(300)), None);
        assert_eq!(guesses.blocked_until(&"eve", T.plus(HOUR)), None);
    }

    #[test]
    fn wrong_codes_follow_a_new_name() {
        let mut guesses = GuessLimits::default();
        (0..5).for_each(|_| guesses.wrong(&"eve", T));
        guesses.carry_over(&"eve", &"eve2");
        assert_eq!(guesses.blocked_until(&"eve2", T.plus(60)), Some(T.plus(HOUR)));
        assert_eq!(guesses.blocked_until(&"eve", T.plus(60)), None, "the old nick is someone else's now");
    }

    #[test]
    fn the_maps_stay_bounded() {
        let one = CommandLimit { commands: 1, window_secs: 1 };
        let mut limits = CommandLimits::default();
        // A new player every 10 s: about 360 are remembered at any time (an hour's worth).
        for user in 0..10_000i64 {
            limits.check(&user, one, T.plus(10 * user));
            assert!(limits.accepted.events.len() <= 2 * 361 + MIN_PRUNE_AT);
        }
    }
}
