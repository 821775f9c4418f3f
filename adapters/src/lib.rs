//! spellbridge-adapters: the [`GameTransport`](spellbridge_core::GameTransport)
//! implementations.
//!
//! - [`memory`]: an in-memory transport for the console and for unit tests.
//! - [`irc`]: the IRC transport's parts: mIRC formatting, line splitting, flood control.
//! - [`matrix`]: the Matrix transport (matrix-sdk): session restore, the `/sync` loop,
//!   E2EE, invites, direct rooms, HTML formatting with pills.
//!
//! The IRC (`irc` crate) and Matrix (`matrix-sdk`) transports join this crate in later
//! issues; all of them pass one conformance suite.

pub mod irc;
pub mod matrix;
pub mod memory;
