//! The spellbridge daemon as a library: the binary in `main.rs` is a thin command line
//! over these modules, and the end-to-end tests drive them directly.
//!
//! - [`lobby`]: the daemon's own commands (`!help`, `!new`, `!duel`, …).
//! - [`router`]: inbound message → lobby or table → outbound messages.
//! - [`journal`]: the router's changes as data, for the store to log and replay.
//! - [`store`]: the SQLite store: journal, snapshots, outbox, audit.
//! - [`console`]: `spellbridge console`, the router over stdin/stdout.
//! - [`serve`]: `spellbridge run`, the router over the configured networks.
//! - [`config`]: the TOML config, validated.

pub mod config;
pub mod console;
pub mod journal;
pub mod lobby;
pub mod router;
pub mod serve;
pub mod store;
