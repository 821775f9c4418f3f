//! What every transport's supervisor shares: the connection state it publishes, and the
//! reconnect backoff.

use std::time::{Duration, SystemTime};

use spellbridge_core::NetworkId;

/// Where a transport's connection stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Connection {
    /// Connecting, logging in, or waiting to reconnect.
    Down,
    /// Connected and ready: messages can be sent.
    Up,
    /// Not playing: a login is required and the last connection did not log in (it is
    /// retried with backoff).
    LoggedOut,
    /// Shut down for good.
    Closed,
}

/// The wait before reconnect attempt `attempt` (from 1): `first`, doubling on each
/// failure up to `most`, with ±25% jitter so reconnecting bots spread out.
pub fn backoff((first, most): (Duration, Duration), attempt: u32, network: &NetworkId) -> Duration {
    let exponent = attempt.saturating_sub(1).min(16);
    let base = first.saturating_mul(1 << exponent).min(most);
    // Jitter from the clock and the network name.
    let seed = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos())
        ^ network.as_str().bytes().fold(0u32, |h, b| h.rotate_left(5) ^ u32::from(b));
    let fraction = f64::from(seed % 1000) / 1000.0; // 0 ..< 1
    base.mul_f64(0.75 + fraction * 0.5)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_to_its_cap_with_bounded_jitter() {
        let network = NetworkId::new("matrix");
        let limits = (Duration::from_millis(200), Duration::from_secs(5));
        for attempt in 1..40 {
            let delay = backoff(limits, attempt, &network);
            let base = Duration::from_millis(200)
                .saturating_mul(1 << attempt.saturating_sub(1).min(16))
                .min(limits.1);
            assert!(delay >= base.mul_f64(0.75) && delay <= base.mul_f64(1.25), "{attempt}: {delay:?}");
        }
    }
}
