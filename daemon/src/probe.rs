//! `spellbridge check-config --connect`: tries each configured network once, as `run`
//! would connect to it, and says per network what happened: `ok (logged in as X)`, or
//! the whole chain of causes of the failure (certificate expired, unknown issuer, name
//! mismatch, connection refused, timeout…, `error_chain`).
//!
//! How a network is tried is its kind's ([`Network::check`]): IRC connects, registers
//! and logs in exactly as configured, then QUITs (an STS upgrade is followed, and not
//! stored); Matrix logs in (or restores with the access token) into a throw-away store
//! and asks the homeserver `whoami`.

use std::time::Duration;

use spellbridge_adapters::network::Network;

use crate::config::Settings;

/// How long one network may take to connect, register and log in.
pub const LIMIT: Duration = Duration::from_secs(30);

/// One network's outcome: its line (`irc libera: ok (logged in as bot)`) and whether
/// it worked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// What to print.
    pub line: String,
    /// The network could be used.
    pub ok: bool,
}

/// Tries every configured network, one after the other.
pub async fn connect_all(settings: &Settings) -> Vec<Outcome> {
    let mut outcomes = Vec::new();
    for network in &settings.networks {
        let (said, ok) = match network.check(&settings.prefix, LIMIT).await {
            Ok(what) => (format!("ok ({what})"), true),
            Err(error) => (format!("FAILED: {error}"), false),
        };
        outcomes.push(Outcome { line: format!("{} {}: {said}", network.kind(), network.name()), ok });
    }
    outcomes
}

/// The line `check-config` prints for one network (before any connection).
pub fn describe(network: &dyn Network) -> String {
    format!("{} {}: {}", network.kind(), network.name(), network.describe())
}
