//! Failover against the real servers (issue 34, item 5): two `spellbridge run` daemons
//! with the same config on one real PostgreSQL (`[store] lease = "2s"`), the bot on a real
//! InspIRCd and a real Synapse, a Thaum table (`#magic` ↔ a Matrix room) and a Duel table
//! (`#arena` ↔ another) in play, round 1 of the Duel with one spell queued. Then:
//!
//! - [`kill`]: SIGKILL of the active daemon: the standby takes over and play goes on;
//! - [`pause`]: SIGSTOP of the active daemon past its lease: the standby takes over, and
//!   the old one, resumed (SIGCONT), stands down without sending anything;
//! - [`restart`]: PostgreSQL restarted: both recover, one leads, play goes on;
//! - [`cut`]: the database unreachable from the active daemon only (through a
//!   [`CutProxy`](spellbridge_tests::harness::cut_proxy::CutProxy) the test cuts): it stops
//!   acting within one lease and the standby takes over.
//!
//! Each checks the transcripts of a real IRC client and a real Matrix client: every
//! acknowledged move once, nothing lost, nothing doubled ([`support`], [`people`]). [`proxy`] checks
//! the cut proxy itself against PostgreSQL. These need InspIRCd, Synapse and PostgreSQL
//! (`bash scripts/test.sh` installs them); without them they fail with the harness's
//! message. Every wait is bounded.

mod people;
mod support;

mod cut;
mod kill;
mod pause;
mod proxy;
mod restart;
