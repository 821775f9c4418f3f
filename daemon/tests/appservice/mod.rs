//! `spellbridge` in Matrix appservice mode (issue 17) against a real Synapse that has the
//! registration in `app_service_config_files`:
//!
//! - `spellbridge appservice-registration` writes the registration (owner-only, fresh
//!   tokens, the ghosts' exclusive namespace), refuses to overwrite it without `--force`;
//!   the daemon reads its tokens from it, and the bot, which has no password, logs in
//!   with `m.login.application_service` and keeps its device across restarts
//!   ([`registration`]);
//! - the appservice API: transactions repeated, out of order, unauthorised, or sent again
//!   after a restart are applied once; Synapse's own transactions and ping reach the
//!   listener; ghosts are registered when the homeserver asks ([`transactions`]);
//! - a bridge with a real InspIRCd channel: Matrix replies and reactions to an IRC user's
//!   relayed line name that user on IRC, and an IRC line addressing a Matrix user is a
//!   Matrix reply to their latest line ([`replies`], item 4).
//! - IRC people as ghosts in a room bridged by alias: named from the template, joining,
//!   leaving, renamed, a netsplit of 20 held back, and speaking as themselves
//!   ([`ghosts`]);
//! - a restart: the ghosts of IRC users who left while the daemon was down, or whose
//!   netsplit leave it held when it stopped, leave at the channel's first member list;
//!   everyone else stays; an IRC line addressing a Matrix user is still a reply to their
//!   line from before the restart ([`roll_call`]);
//! - a healthy run at the default log level logs no ERROR or WARN ([`quiet`], item 8);
//! - a whole game answers every message exactly once, though each event comes by a
//!   transaction and by the bot's sync ([`once`], issue 29 item 5);
//! - the listener serves at most 32 connections, refuses more at once and closes one
//!   that sends no whole request within a few seconds ([`limits`]; issue 29, item 6).
//!
//! What they share is in [`support`]. These need Synapse (`tests/scripts/install-synapse.sh`);
//! without it they fail with the harness's message, they never skip. Every wait is bounded.

mod support;

mod ghosts;
mod limits;
mod once;
mod quiet;
mod registration;
mod replies;
mod roll_call;
mod transactions;
