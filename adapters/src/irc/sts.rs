//! IRCv3 Strict Transport Security (<https://ircv3.net/specs/extensions/sts>): a server
//! that offers `sts=port=N` on a plaintext connection wants TLS on port N; over TLS,
//! `sts=duration=S` is a promise that TLS works for S seconds, kept across restarts by
//! whoever implements [`StsPolicies`] (the daemon, in its database). While a policy
//! holds, the bot connects with TLS only: a failing TLS connection is never retried in
//! plaintext.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// A stored policy for one host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StsPolicy {
    /// The TLS port.
    pub port: u16,
    /// Until when TLS is required.
    pub expires: SystemTime,
}

/// Where policies are kept between starts.
pub trait StsPolicies: Send + Sync {
    /// The policy stored for `host`, if any (expired or not).
    fn get(&self, host: &str) -> Option<StsPolicy>;
    /// Stores `policy` for `host`; `None` removes it (a `duration=0`).
    fn set(&self, host: &str, policy: Option<StsPolicy>);
}

/// Policies in memory only (tests, and `check-config`).
#[derive(Debug, Default)]
pub struct InMemory(Mutex<HashMap<String, StsPolicy>>);

impl StsPolicies for InMemory {
    fn get(&self, host: &str) -> Option<StsPolicy> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(&host.to_lowercase()).copied()
    }
    fn set(&self, host: &str, policy: Option<StsPolicy>) {
        let mut map = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match policy {
            Some(policy) => map.insert(host.to_lowercase(), policy),
            None => map.remove(&host.to_lowercase()),
        };
    }
}

/// The `sts` capability's value, read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Offer {
    /// `port=N`: where TLS is (meaningful on plaintext).
    pub port: Option<u16>,
    /// `duration=S`: how long to keep the policy (meaningful over TLS).
    pub duration: Option<Duration>,
}

/// Reads `port=6697,duration=2592000` (unknown keys ignored, as the spec says).
pub fn parse(value: &str) -> Offer {
    let mut offer = Offer::default();
    for field in value.split(',') {
        match field.split_once('=') {
            Some(("port", port)) => offer.port = port.parse().ok(),
            Some(("duration", seconds)) => offer.duration = seconds.parse().ok().map(Duration::from_secs),
            _ => {}
        }
    }
    offer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_read_and_unknown_keys_ignored() {
        assert_eq!(
            parse("port=6697,duration=300,preload"),
            Offer { port: Some(6697), duration: Some(Duration::from_secs(300)) }
        );
        assert_eq!(parse("duration=0").duration, Some(Duration::ZERO));
        assert_eq!(parse("port=x"), Offer::default());
    }
}
