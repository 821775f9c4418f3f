//! The Matrix transport ([`transport`], with its [`options`], read from `[[matrix]]` by
//! [`config`], the Matrix kind of the network registry), built on matrix-sdk 0.18:
//! login and session restore ([`connect`]), the `/sync` loop and invites (`sync`), with
//! plain messages read before matrix-sdk's own work on a response (`early`), the gaps
//! of cut-short timelines filled (`gap`) and what is known of rooms and
//! senders kept between state changes (`room_facts`: which player a room is a private
//! chat with, decided by `vouch`, the rooms a third member spoiled kept by `spoiled`),
//! each event handed to the daemon once whichever path brings it (`handed`), the next
//! long poll held for a
//! command's answers (`answers`), board pictures sent as `m.image` (`picture`), a story told over several actions in one message edited in place (`story`), each room's joined members for names typed in commands (`present`), the files kept in the store directory ([`store`]), the handled sync position kept for a standby ([`positions`]), and the parts that do no I/O:
//! formatting outbound rich text ([`format`](mod@format)), reading inbound HTML ([`html`]),
//! reading timeline events ([`inbound`]), the invite allow-list ([`invite`]) and retry
//! decisions ([`retry`]). Appservice mode (registration, ghosts, the bot's login with the
//! `as_token`) is in [`appservice`].

mod answers;
pub mod appservice;
pub mod config;
pub mod connect;
mod early;
pub mod format;
mod gap;
mod handed;
pub mod html;
pub mod inbound;
pub mod invite;
pub mod options;
mod picture;
pub mod positions;
mod present;
pub mod retry;
mod room_facts;
mod spoiled;
pub mod store;
mod story;
mod sync;
pub mod transport;
mod vouch;

pub use options::{Login, MatrixOptions};
pub use transport::{Connection, MatrixTransport};

/// The matrix-sdk this transport is built on, for tools and tests that reach past the
/// [`GameTransport`](spellbridge_core::GameTransport) through
/// [`MatrixTransport::client`] (creating rooms, inviting) without a second copy.
pub use matrix_sdk;
