//! Flood control, computed from the times the caller passes in (no clock is read and
//! nothing sleeps here, so tests use explicit instants): [`Flood`], the token bucket for
//! one connection's outgoing lines, so the server never disconnects the bot for
//! flooding. The default is safe on large networks (Libera, OFTC): a burst of 4 lines,
//! then one line every 2 s. (The per-player command limit is the daemon's, on every
//! network: `spellbridge::limits`.)
//!
//! It takes `std::time::Instant`; a `tokio::time::Instant` converts with `into_std()`
//! (and follows tokio's paused clock in tests).

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
}
