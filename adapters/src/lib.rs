//! spellbridge-adapters: the [`GameTransport`](spellbridge_core::GameTransport)
//! implementations.
//!
//! - [`memory`]: an in-memory transport for the console and for unit tests.
//! - [`irc`]: the IRC transport (`irc` crate) and its pure parts: mIRC formatting, line
//!   splitting, flood control.
//! - [`matrix`]: the Matrix transport (matrix-sdk): session restore, the `/sync` loop,
//!   E2EE, invites, direct rooms, HTML formatting with pills.
//! - [`certificate_check`]: a rustls verifier with its own certificate check and rustls's
//!   signature checks, for the IRC pin and PostgreSQL's `sslmode`s.
//! - [`error_chain`]: an error with all its causes, for logging connection failures.
//! - [`network`]: the registry of network kinds (`[[irc]]`, `[[matrix]]`): config,
//!   start, `check-config --connect`, and the [`Transport`](network::Transport) trait
//!   with its connection state.
//! - [`logs`]: what the transports' libraries log that the daemon's log must filter.
//! - [`secret`]: passwords and tokens named in the config, read once, never shown.
//! - [`supervise`]: what the transports' supervisors share: the link state and backoff.
//!
//! All of them pass one conformance suite (`tests/e2e/conformance/`).

pub mod certificate_check;
mod error_chain;
pub mod irc;
pub mod logs;
pub mod matrix;
pub mod memory;
pub mod network;
pub mod secret;
pub mod supervise;

pub use error_chain::error_chain;
// What the daemon keeps or runs for a network kind without naming it (issue 32): the
// STS policies and appservice transactions it stores, and the appservice registration
// command.
pub use irc::sts::{StsPolicies, StsPolicy};
pub use matrix::appservice::registration::write_from_config as appservice_registrations;
pub use matrix::appservice::txns::SeenTransactions;
pub use matrix::positions::SyncPositions;
