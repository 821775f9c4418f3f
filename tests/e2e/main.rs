//! spellbridge's end-to-end tests, in one test binary (STYLE: one integration-test
//! binary with a shared helper module).
//!
//! - [`scenarios`]: console scripts in `tests/scenarios/` played through the real router
//!   and games; what the bot printed and the final state are checked as insta snapshots.
//! - [`irc_harness`]: the real-server harness itself against InspIRCd: start, raw clients
//!   talking in a channel and privately, restart on the same port.

mod irc_harness;
mod scenarios;
