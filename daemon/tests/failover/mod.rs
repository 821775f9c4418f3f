//! Failover against the real servers (issue 34, item 5): two `spellbridge run` daemons
//! with the same config on one real PostgreSQL (`[store] lease = "2s"`), the bot on a real
//! InspIRCd and a real Synapse, a Thaum table (`#magic` ↔ a Matrix room) and a Duel table
//! (`#arena` ↔ another) in play, round 1 of the Duel with one spell queued. Then:
//!
//! - [`kill`]: SIGKILL of the active daemon: the standby takes over and play goes on;
//! - [`gap`]: a Matrix command said between that SIGKILL and the takeover is answered
//!   once by the new leader;
//! - [`pause`]: SIGSTOP of the active daemon past its lease: the standby takes over, and
//!   the old one, resumed (SIGCONT), stands down without sending anything;
//! - [`restart`]: PostgreSQL restarted: both recover, one leads, play goes on;
//! - [`regain`]: with Atheme, the standby that took over from a paused leader (whose
//!   connection still holds the nick) takes the nick back with NickServ `REGAIN`;
//! - [`appservice`]: appservice mode behind a proxy that follows `/leader`: a command
//!   said between a SIGKILL and the takeover reaches the new leader on Synapse's retry,
//!   answered once;
//! - [`cut`]: the database unreachable from the active daemon only (through a
//!   [`CutProxy`](spellbridge_tests::harness::cut_proxy::CutProxy) the test cuts): it stops
//!   acting within one lease and the standby takes over.
//!
//! All but [`regain`] and [`appservice`] (which count their own answers) check the
//! transcripts of a real IRC client and a real Matrix client: every acknowledged move
//! once, nothing lost, nothing doubled ([`support`], [`people`]). [`proxy`] checks the cut
//! proxy itself against PostgreSQL. These need InspIRCd, Synapse and PostgreSQL, and
//! [`regain`] Atheme (`bash scripts/test.sh` installs them); without them they fail with
//! the harness's message. Every wait is bounded.

mod people;
mod support;

mod appservice;
mod cut;
mod gap;
mod kill;
mod pause;
mod proxy;
mod regain;
mod restart;
