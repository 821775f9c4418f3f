//! The spellbridge daemon as a library: the binary in `main.rs` is a thin command line
//! over these modules, and the end-to-end tests drive them directly.
//!
//! - [`aliases`]: bridged Matrix rooms named by alias, looked up at start and on SIGHUP.
//! - [`board`]: board pictures (SVG drawn in code, PNG by resvg) from a table's public state.
//! - [`lobby`]: the daemon's own commands (`!help`, `!new`, `!duel`, …).
//! - [`router`]: inbound message → lobby, table or relay → outbound messages.
//! - [`identity`]: who is who across networks: linked identities, names, homes.
//! - [`relay`]: bridges, and chat relayed between their rooms.
//! - [`mirror`]: IRC members' joins, leaves and renames shown in bridged rooms (appservice ghosts).
//! - [`journal`]: the router's changes as data, for the store to log and replay.
//! - [`ratings`]: Glicko-2 ratings, Thaum season standings and records, derived from the journal.
//! - [`store`]: the SQLite store: journal, snapshots, outbox, audit.
//! - [`engine`]: the one commit path both drivers use (redelivery, commit, apology).
//! - [`console`]: `spellbridge console`, the router over stdin/stdout.
//! - [`serve`]: `spellbridge run`, the router over the configured networks.
//! - [`config`]: the TOML config, validated.
//! - [`metrics`]: what the daemon counts (Prometheus) and its health.
//! - [`http`]: `/healthz` and `/metrics` on `[http] listen`.
//! - [`site`]: the read-only spectator site on the same listener (pages, board pictures,
//!   live updates by server-sent events).
//! - [`logging`]: the log subscriber, which never shows the `irc` crate's raw lines.

pub mod aliases;
pub mod board;
pub mod config;
pub mod console;
pub mod courier;
pub mod engine;
pub mod games;
pub mod http;
pub mod identity;
pub mod journal;
pub mod leader;
pub mod limits;
pub mod lobby;
pub mod logging;
pub mod metrics;
pub mod mirror;
pub mod names;
pub mod probe;
pub mod ratings;
pub mod relay;
pub mod router;
pub mod secrets;
pub mod serve;
pub mod site;
pub mod store;
pub mod turn;
