//! Flood control, computed from the times the caller passes in (no clock is read and
//! nothing sleeps here, so tests use explicit instants):
//!
//! - [`Flood`]: the token bucket for one connection's outgoing lines, so the server
//!   never disconnects the bot for flooding. The default is safe on large networks
//!   (Libera, OFTC): a burst of 4 lines, then one line every 2 s.
//! - [`CommandLimiter`]: at most N commands per user in a sliding window, so one user
//!   cannot starve the others. The first refused command gets a polite notice; later
//!   ones in the same window are dropped silently.
//!
//! Both take `std::time::Instant`; a `tokio::time::Instant` converts with `into_std()`
//! (and follows tokio's paused clock in tests).

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;
use std::time::{Duration, Instant};

/// A token bucket for outgoing lines: `burst` lines may go at once, then one line per
/// `interval`. It is kept as the "theoretical arrival time" of the next line (GCRA),
/// which is the same bucket without fractional tokens.
#[derive(Clone, Debug)]
pub struct Flood {
    burst: u32,
    interval: Duration,
    /// When the bucket will be full again (every reserved line has drained); `None`
    /// before the first line.
    full_at: Option<Instant>,
}

impl Default for Flood {
    /// Burst 4, then one line per 2 s.
    fn default() -> Self {
        Self::new(4, Duration::from_secs(2))
    }
}

impl Flood {
    /// A bucket of `burst` lines (at least 1) refilled one line per `interval`.
    pub fn new(burst: u32, interval: Duration) -> Self {
        Self { burst: burst.max(1), interval, full_at: None }
    }

    /// No flood control: every line may go at once (tests, and servers that exempt the
    /// bot).
    pub fn off() -> Self {
        Self::new(1, Duration::ZERO)
    }

    /// True when this bucket never delays a line.
    pub fn is_off(&self) -> bool {
        self.interval.is_zero()
    }

    /// The burst size.
    pub fn burst(&self) -> u32 {
        self.burst
    }

    /// The time one line takes to drain.
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// Reserves the next line's slot and returns how long after `now` it may be sent
    /// (zero when it may go at once). Call it once per line, just before sending; lines
    /// reserved back to back get consecutive slots.
    pub fn reserve(&mut self, now: Instant) -> Duration {
        let wait = self.delay(now);
        let send_at = now + wait;
        let full_at = self.full_at.map_or(send_at, |full| full.max(send_at));
        self.full_at = Some(full_at + self.interval);
        wait
    }

    /// How long after `now` the next line could go, without reserving it.
    pub fn delay(&self, now: Instant) -> Duration {
        let Some(full_at) = self.full_at else {
            return Duration::ZERO;
        };
        // A line may go while fewer than `burst` lines are still draining, i.e. once
        // `full_at` is at most (burst - 1) intervals ahead of the send time.
        let allowance = self.interval.saturating_mul(self.burst - 1);
        full_at.saturating_duration_since(now).saturating_sub(allowance)
    }

    /// Forgets every line sent: a new connection starts with a full bucket.
    pub fn reset(&mut self) {
        self.full_at = None;
    }
}

/// What to do with a user's command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Run it.
    Accept,
    /// Drop it and send the user [`CommandLimiter::notice`] (once per window).
    DropWithNotice,
    /// Drop it silently: the user was already told.
    Drop,
}

/// Limits each user to `limit` commands in any `window` (a sliding window; refused
/// commands do not count, so a user recovers as soon as their oldest accepted command
/// leaves the window). Users are any hashable key, e.g. a `PlayerId`.
#[derive(Clone, Debug)]
pub struct CommandLimiter<K> {
    limit: usize,
    window: Duration,
    users: HashMap<K, UserWindow>,
    /// The map is pruned of idle users when it reaches this size.
    prune_at: usize,
}

#[derive(Clone, Debug, Default)]
struct UserWindow {
    /// When each command still in the window was accepted, oldest first.
    accepted: VecDeque<Instant>,
    /// When the user was last sent the notice.
    noticed_at: Option<Instant>,
}

const MIN_PRUNE_AT: usize = 64;

impl<K: Eq + Hash + Clone> Default for CommandLimiter<K> {
    /// Five commands per ten seconds.
    fn default() -> Self {
        Self::new(5, Duration::from_secs(10))
    }
}

impl<K: Eq + Hash + Clone> CommandLimiter<K> {
    /// At most `limit` commands (at least 1) per user in any `window`.
    pub fn new(limit: usize, window: Duration) -> Self {
        Self { limit: limit.max(1), window, users: HashMap::new(), prune_at: MIN_PRUNE_AT }
    }

    /// Decides on a command `user` issued at `now`, and records it if accepted.
    pub fn check(&mut self, user: &K, now: Instant) -> Verdict {
        if self.users.len() >= self.prune_at {
            self.forget_idle(now);
            self.prune_at = (self.users.len() * 2).max(MIN_PRUNE_AT);
        }
        let window = self.window;
        let entry = self.users.entry(user.clone()).or_default();
        while entry.accepted.front().is_some_and(|&t| now.saturating_duration_since(t) >= window) {
            entry.accepted.pop_front();
        }
        if entry.accepted.len() < self.limit {
            entry.accepted.push_back(now);
            return Verdict::Accept;
        }
        let told_recently = entry.noticed_at.is_some_and(|t| now.saturating_duration_since(t) < window);
        if told_recently {
            Verdict::Drop
        } else {
            entry.noticed_at = Some(now);
            Verdict::DropWithNotice
        }
    }

    /// The polite notice for a user whose commands were refused.
    pub fn notice(&self) -> String {
        format!(
            "Slow down, please: your commands are arriving faster than {} per {}. \
             I skipped the last ones; try again in a few seconds.",
            self.limit,
            human_duration(self.window)
        )
    }

    /// Forgets users with no command in the window and no recent notice. [`check`]
    /// calls it as the map grows; a caller may also call it from a periodic tick.
    ///
    /// [`check`]: CommandLimiter::check
    pub fn forget_idle(&mut self, now: Instant) {
        let window = self.window;
        let recent = |t: &Instant| now.saturating_duration_since(*t) < window;
        self.users.retain(|_, user| user.accepted.iter().any(recent) || user.noticed_at.iter().any(recent));
    }

    /// The number of users remembered (for tests and metrics).
    pub fn tracked_users(&self) -> usize {
        self.users.len()
    }
}

/// "10 s", "1.5 s", "1 min", "250 ms".
fn human_duration(d: Duration) -> String {
    let millis = d.as_millis();
    if millis < 1000 {
        format!("{millis} ms")
    } else if millis.is_multiple_of(60_000) {
        format!("{} min", millis / 60_000)
    } else if millis.is_multiple_of(1000) {
        format!("{} s", millis / 1000)
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    #[test]
    fn default_bucket_allows_a_burst_of_four_then_one_line_per_two_seconds() {
        let t0 = Instant::now();
        let mut flood = Flood::default();
        let waits: Vec<Duration> = (0..7).map(|_| flood.reserve(t0)).collect();
        assert_eq!(waits, [0, 0, 0, 0, 2, 4, 6].map(Duration::from_secs).to_vec(), "lines reserved at once");
    }

    #[test]
    fn the_bucket_refills_while_idle() {
        let t0 = Instant::now();
        let mut flood = Flood::default();
        for _ in 0..4 {
            assert_eq!(flood.reserve(t0), Duration::ZERO);
        }
        assert_eq!(flood.delay(t0 + SECOND), SECOND);
        // After 2 s one line has drained; after 8 s all four.
        assert_eq!(flood.delay(t0 + 2 * SECOND), Duration::ZERO);
        let t8 = t0 + 8 * SECOND;
        for _ in 0..4 {
            assert_eq!(flood.reserve(t8), Duration::ZERO);
        }
        assert_eq!(flood.reserve(t8), 2 * SECOND);
        // Never more than the burst, however long the bot was idle.
        let later = t0 + 3600 * SECOND;
        let waits: Vec<Duration> = (0..5).map(|_| flood.reserve(later)).collect();
        assert_eq!(waits[3], Duration::ZERO);
        assert_eq!(waits[4], 2 * SECOND);
    }

    #[test]
    fn a_line_sent_after_its_wait_does_not_shift_the_schedule() {
        let t0 = Instant::now();
        let mut flood = Flood::new(2, SECOND);
        assert_eq!(flood.reserve(t0), Duration::ZERO);
        assert_eq!(flood.reserve(t0), Duration::ZERO);
        let wait = flood.reserve(t0);
        assert_eq!(wait, SECOND);
        // The caller slept exactly `wait` and asks again: the next slot is 1 s later.
        assert_eq!(flood.reserve(t0 + wait), SECOND);
    }

    #[test]
    fn off_never_waits_and_reset_refills() {
        let t0 = Instant::now();
        let mut off = Flood::off();
        assert!(off.is_off());
        assert!((0..1000).all(|_| off.reserve(t0).is_zero()));

        let mut flood = Flood::new(1, SECOND);
        assert_eq!(flood.reserve(t0), Duration::ZERO);
        assert_eq!(flood.delay(t0), SECOND);
        flood.reset();
        assert_eq!(flood.reserve(t0), Duration::ZERO);
        assert_eq!(Flood::new(0, SECOND).burst(), 1);
    }

    #[test]
    fn a_user_over_the_limit_is_told_once_then_dropped_silently() {
        let t0 = Instant::now();
        let mut limiter = CommandLimiter::new(3, 10 * SECOND);
        let verdicts: Vec<Verdict> = (0..6).map(|_| limiter.check(&"alice", t0)).collect();
        use Verdict::*;
        assert_eq!(verdicts, [Accept, Accept, Accept, DropWithNotice, Drop, Drop]);
    }

    #[test]
    fn other_users_are_not_affected() {
        let t0 = Instant::now();
        let mut limiter = CommandLimiter::new(2, 10 * SECOND);
        for _ in 0..1000 {
            limiter.check(&"flooder", t0);
        }
        assert_eq!(limiter.check(&"bob", t0), Verdict::Accept);
        assert_eq!(limiter.check(&"carol", t0 + SECOND), Verdict::Accept);
    }

    #[test]
    fn a_user_recovers_as_old_commands_leave_the_window() {
        let t0 = Instant::now();
        let mut limiter = CommandLimiter::new(2, 10 * SECOND);
        assert_eq!(limiter.check(&"a", t0), Verdict::Accept);
        assert_eq!(limiter.check(&"a", t0 + 5 * SECOND), Verdict::Accept);
        assert_eq!(limiter.check(&"a", t0 + 6 * SECOND), Verdict::DropWithNotice);
        assert_eq!(limiter.check(&"a", t0 + 9 * SECOND), Verdict::Drop);
        // The first command leaves the window at t0 + 10 s: one slot is free.
        assert_eq!(limiter.check(&"a", t0 + 10 * SECOND), Verdict::Accept);
        // Full again, but the notice went out 4 s ago: still silent.
        assert_eq!(limiter.check(&"a", t0 + 10 * SECOND), Verdict::Drop);
        // A window after the notice the user may be told again.
        assert_eq!(limiter.check(&"a", t0 + 14 * SECOND), Verdict::Drop);
        assert_eq!(limiter.check(&"a", t0 + 15 * SECOND), Verdict::Accept);
        assert_eq!(limiter.check(&"a", t0 + 16 * SECOND), Verdict::DropWithNotice);
    }

    #[test]
    fn idle_users_are_forgotten() {
        let t0 = Instant::now();
        let mut limiter = CommandLimiter::new(1, SECOND);
        for user in 0..1000u32 {
            limiter.check(&user, t0);
        }
        assert_eq!(limiter.tracked_users(), 1000);
        limiter.forget_idle(t0 + 2 * SECOND);
        assert_eq!(limiter.tracked_users(), 0);
    }

    #[test]
    fn the_map_stays_bounded_as_users_come_and_go() {
        let t0 = Instant::now();
        let mut limiter = CommandLimiter::new(1, SECOND);
        // A new user every 10 ms: about 100 are active at any time.
        for user in 0..10_000u32 {
            limiter.check(&user, t0 + Duration::from_millis(10 * u64::from(user)));
            assert!(limiter.tracked_users() <= 4 * 100 + MIN_PRUNE_AT);
        }
    }

    #[test]
    fn the_notice_names_the_limit() {
        let limiter: CommandLimiter<String> = CommandLimiter::default();
        assert!(limiter.notice().contains("faster than 5 per 10 s"), "{}", limiter.notice());
        assert_eq!(human_duration(Duration::from_millis(1500)), "1.5 s");
        assert_eq!(human_duration(Duration::from_secs(120)), "2 min");
        assert_eq!(human_duration(Duration::from_millis(250)), "250 ms");
    }
}
