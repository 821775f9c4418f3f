//! `spellbridge run` as a child process bridging a real InspIRCd channel (`#magic`) and
//! a real Synapse room into one place (`[[bridge]]`), with raw IRC clients and raw
//! Matrix clients (no E2EE: the bridged room and the players' direct rooms with the bot
//! are unencrypted) as the people:
//!
//! - chat is relayed both ways with its formatting, emotes, edits, reactions and
//!   deletions, and never echoed back; commands (and their edits) are not relayed; a
//!   bridged Matrix room with one person in it is a room, not a direct chat;
//! - an IRC player and a Matrix player play a whole Duel at the shared table, spells by
//!   IRC PM and Matrix DM, and neither room hears a token before its step is revealed;
//! - a Thaum phase with players from both networks naming each other by nick and display
//!   name; a person linking their IRC nick and Matrix id and playing as one player;
//!   permissions (game masters from the config, the IRC channel operator's `!stop`,
//!   nobody acting as someone else);
//! - the daemon (SIGKILL), InspIRCd and Synapse each restarting mid-game: no move and
//!   no relayed line lost or doubled;
//! - a Duel step timeout that comes due while the daemon is down, applied once when it
//!   is back (RULES D-9);
//! - relayed chat cannot forge a line (every line starts with its speaker, a Matrix
//!   display name that is an IRC nick shows its Matrix id), a long Matrix message is
//!   capped and does not hold a game answer behind it, and a "direct" room a third person
//!   joined is not private (issue 13);
//! - a Matrix private chat is one the bot can vouch for: a room of two someone else made
//!   gets no link code, a player's own direct chat is used until a third person has been
//!   in it ([`private`]; issue 29, item 1).
//!
//! - a healthy run at the default log level logs no ERROR or WARN ([`quiet`]); a bridge
//!   may name its Matrix room by alias, looked up at start and followed to the room it
//!   moves to on SIGHUP ([`aliases`]) (issue 17, items 8 and 6).
//!
//! - a Chinese Matrix room and an English IRC channel each hear a Duel in their own
//!   language; a player's private `!lang` changes only their private messages.
//!
//! - a Matrix reply or reaction to an IRC user's relayed line names that user on IRC (and
//!   still does after a restart), an IRC `Bobby: hi` is a Matrix reply to Bobby's latest
//!   line, edits follow `[[bridge]] edits`; a private message to a Matrix user with no
//!   direct chat opens an unencrypted one and the room is told ([`replies`]; issue 17,
//!   items 4, 7 and 9).
//! - in Matrix appservice mode, with the bridge naming its room by alias, a whole Duel
//!   and a short Thaum across the bridge, IRC players' chat coming from their ghosts
//!   ([`appservice`]; issue 17, item 5).
//!
//! - `[http] hidden_rooms` by alias or id, in bridges listing either network first: no
//!   table of theirs on the site, and an alias that moves takes the hiding along
//!   ([`hidden`]; issue 29, item 2).
//! - the same nick on two bridged IRC networks is told apart (`<alice/two>`), and a Matrix
//!   display name with a bidi override or a zero-width space is escaped in announcements
//!   ([`names`]; issue 29, items 3 and 4).
//!
//! - members who have said nothing are challenged by IRC nick, Matrix id and a display
//!   name with a space ([`present`]; issue 31, item 1).
//!
//! - a Duel round revealed by several casts, and a Thaum phase's actions, are one Matrix
//!   message edited in place ([`stories`]); the bot's direct chat with a Matrix player is
//!   used again after a restart ([`directchat`]) (issue 31, items 2 and 3).
//!
//! - the example game component loaded from `[[game]] path` plays a whole game across
//!   the bridge, is on the site, is rated and speaks Chinese ([`component`]; issue 33).
//!
//! One file per feature ([`chat`], [`duel`], [`hidden`], [`language`], [`names`], [`present`], [`thaum`], [`restarts`], [`timeouts`],
//! [`trust`], [`private`], [`quiet`], [`aliases`], [`replies`]); what they share (the servers, the daemon's config, the people on each
//! network) is in [`support`].
//!
//! These need InspIRCd and Synapse (`tests/scripts/install-inspircd.sh`,
//! `tests/scripts/install-synapse.sh`); without them they fail with the harness's message,
//! they never skip. Every wait is bounded; a failure prints the daemon's log.

mod inbox;
mod support;

mod aliases;
mod appservice;
mod chat;
mod component;
mod directchat;
mod duel;
mod hidden;
mod language;
mod matrixplay;
mod names;
mod present;
mod private;
mod quiet;
mod replies;
mod restarts;
mod stories;
mod thaum;
mod timeouts;
mod trust;
