//! Shared helpers for spellbridge's end-to-end tests (the tests themselves are in `e2e/`).
//!
//! - [`harness`]: real servers (InspIRCd) started on loopback by the tests, and a raw
//!   IRC client that plays a human user.

pub mod harness;
