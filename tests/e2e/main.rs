//! spellbridge's end-to-end tests, in one test binary (STYLE: one integration-test
//! binary with a shared helper module).
//!
//! - [`scenarios`]: console scripts in `tests/scenarios/` played through the real router
//!   and games; what the bot printed and the final state are checked as insta snapshots.
//! - [`conformance`]: the one `GameTransport` conformance suite, written once and run
//!   against every transport (in-memory, and IRC against a real InspIRCd).
//! - [`irc_transport`]: the IRC transport beyond the suite: a taken nick, a kick, CTCP,
//!   the account rule, invalid UTF-8 and control characters.
//! - [`irc_registration`]: the IRC transport's registration against a scripted fake
//!   server: split CAP LS, SASL mechanisms, a forged SCRAM server, NAK, cap-notify, STS,
//!   a nick taken back, a failed login retried, a login on `CAP NEW sasl`, ECDSA.
//! - [`irc_harness`]: the real-server harness itself against InspIRCd: start, raw clients
//!   talking in a channel and privately, restart on the same port.
//! - [`irc_services`]: the Atheme services and TLS listeners of the harness: accounts,
//!   SASL PLAIN and EXTERNAL, a services restart, each listener's certificate, and the
//!   transport's ECDSA-NIST256P-CHALLENGE login.
//! - [`matrix_transport`]: the Matrix transport against a real Synapse: invites, commands,
//!   HTML and pills, encrypted rooms and direct messages, restarts, rate limits, latency.
//! - [`synapse_harness`]: the same for Synapse: users registered through the admin API,
//!   a room, an invite, messages received by sync, restart keeping users and rooms.
//! - [`third_game`]: a third game ([`rps`], rock-paper-scissors with hidden throws) added
//!   with one `Registry::register` and played through the console, no daemon change.
//! - [`third_network`]: a third network kind ([`line`], a line protocol over loopback TCP)
//!   added with one `Networks::register`, configured from `[[line]]` and carrying a game
//!   through the daemon's `run`, no daemon change.
//! - [`quickstart`]: the README's quick start (`quickstart --check`): servers, accounts,
//!   room and daemon up, the bot answering on IRC and Matrix, all torn down.

mod conformance;
mod crypto_patch;
mod irc_harness;
mod irc_registration;
mod irc_services;
mod irc_transport;
mod line;
mod matrix_transport;
mod quickstart;
mod rps;
mod scenarios;
mod synapse_harness;
mod third_game;
mod third_network;
