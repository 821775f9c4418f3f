//! How fast one speaker's chat is relayed across a bridge: a token bucket per player (a
//! burst of a few lines, then one line every few seconds), counted on the router's clock
//! (no clock is read here: every call passes the time). A line over the rate is refused
//! before it is committed to the outbox, so a flood from one speaker never backs up the
//! bridge for everyone else. The first line refused in a flood gets a notice; later ones
//! are dropped silently until a line is relayed again.

use std::collections::HashMap;
use std::hash::Hash;

use spellbridge_core::Timestamp;

/// A bridge's `speaker_rate`: `burst` lines at once, then one every `every_secs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpeakerRate {
    /// Lines a speaker may send at once (at least 1).
    pub burst: u32,
    /// Seconds for one more line (at least 1).
    pub every_secs: i64,
}

impl Default for SpeakerRate {
    /// Five lines at once, then one a second.
    fn default() -> Self {
        Self { burst: 5, every_secs: 1 }
    }
}

/// What to do with one chat line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pace {
    /// Relay it.
    Relay,
    /// Drop it and tell the speaker (the first line refused in a flood).
    DropWithNotice,
    /// Drop it silently: the speaker was told.
    Drop,
}

/// One speaker's bucket: lines in hand (as of `at`), and whether they were told.
#[derive(Clone, Copy, Debug)]
struct Bucket {
    lines: u32,
    at: Timestamp,
    told: bool,
}

/// The buckets of every speaker heard lately (see the module documentation).
#[derive(Clone, Debug)]
pub struct SpeakerBuckets<K> {
    buckets: HashMap<K, Bucket>,
    prune_at: usize,
}

const MIN_PRUNE_AT: usize = 64;

impl<K> Default for SpeakerBuckets<K> {
    fn default() -> Self {
        Self { buckets: HashMap::new(), prune_at: MIN_PRUNE_AT }
    }
}

impl<K: Eq + Hash + Clone> SpeakerBuckets<K> {
    /// Decides on a line `speaker` said at `now` where `rate` applies, and spends a line
    /// from their bucket if it is relayed.
    pub fn check(&mut self, speaker: &K, rate: SpeakerRate, now: Timestamp) -> Pace {
        let (burst, every) = (rate.burst.max(1), rate.every_secs.max(1));
        self.prune(now, burst, every);
        let bucket =
            self.buckets.entry(speaker.clone()).or_insert(Bucket { lines: burst, at: now, told: false });
        let refilled = now.0.saturating_sub(bucket.at.0).max(0) / every;
        if refilled > 0 {
            let lines = i64::from(bucket.lines).saturating_add(refilled).min(i64::from(burst));
            bucket.lines = u32::try_from(lines).unwrap_or(burst);
            bucket.at = Timestamp(bucket.at.0.saturating_add(refilled.saturating_mul(every)));
        }
        if bucket.lines == burst {
            bucket.at = now; // a full bucket does not bank time
        }
        if bucket.lines > 0 {
            bucket.lines -= 1;
            bucket.told = false;
            return Pace::Relay;
        }
        if std::mem::replace(&mut bucket.told, true) { Pace::Drop } else { Pace::DropWithNotice }
    }

    /// Forgets speakers whose buckets are full again, when the map has grown.
    fn prune(&mut self, now: Timestamp, burst: u32, every: i64) {
        if self.buckets.len() < self.prune_at {
            return;
        }
        let full = i64::from(burst).saturating_mul(every);
        self.buckets.retain(|_, b| now.0.saturating_sub(b.at.0) < full);
        self.prune_at = (self.buckets.len() * 2).max(MIN_PRUNE_AT);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Timestamp = Timestamp::CONSOLE_EPOCH;
    const RATE: SpeakerRate = SpeakerRate { burst: 3, every_secs: 2 };

    #[test]
    fn a_burst_then_one_line_per_interval_and_one_notice_per_flood() {
        let mut buckets = SpeakerBuckets::default();
        use Pace::*;
        let paces: Vec<Pace> = (0..6).map(|_| buckets.check(&"bob", RATE, T)).collect();
        assert_eq!(paces, [Relay, Relay, Relay, DropWithNotice, Drop, Drop]);
        assert_eq!(buckets.check(&"carol", RATE, T), Relay, "another speaker is not held back");
        assert_eq!(buckets.check(&"bob", RATE, T.plus(1)), Drop);
        assert_eq!(buckets.check(&"bob", RATE, T.plus(2)), Relay);
        assert_eq!(buckets.check(&"bob", RATE, T.plus(2)), DropWithNotice, "a new flood, a new notice");
        // After a quiet spell the whole burst is back, no more.
        let later = T.plus(100);
        let paces: Vec<Pace> = (0..4).map(|_| buckets.check(&"bob", RATE, later)).collect();
        assert_eq!(paces, [Relay, Relay, Relay, DropWithNotice]);
    }

    #[test]
    fn the_map_stays_bounded() {
        let mut buckets = SpeakerBuckets::default();
        for user in 0..10_000i64 {
            buckets.check(&user, RATE, T.plus(user));
            assert!(buckets.buckets.len() <= 2 * 7 + MIN_PRUNE_AT);
        }
    }
}
