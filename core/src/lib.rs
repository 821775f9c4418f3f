//! spellbridge-core: everything about the games that needs no I/O.
//!
//! This crate never touches a clock, socket, file or database. Time arrives as a
//! [`Timestamp`] inside each action, randomness as a [`Dice`] seeded by the caller (the
//! seed is recorded with every action that draws), and results leave as
//! [`Announcement`]s of [`RichText`] that the adapters render per network.
//!
//! - [`ids`]: typed names of networks, rooms and players.
//! - [`text`]: the small rich-text type every announcement is written in.
//! - [`dice`]: the seeded, auditable random generator.
//! - [`time`]: timestamps and durations (plain numbers, no clock).
//! - [`plugin`]: the `GamePlugin` and `Table` traits, and the registry of games.
//! - [`transport`]: the `GameTransport` trait a chat network implements.
//! - [`words`]: shared pieces of command parsing (numbers, typo suggestions).
//! - [`games`]: the two games, Thaum and Duel.

pub mod dice;
pub mod games;
pub mod ids;
pub mod plugin;
pub mod text;
pub mod time;
pub mod transport;
pub mod words;

pub use dice::Dice;
pub use ids::{NetworkId, PlayerId, RoomId};
pub use plugin::{
    Action, Announcement, Audience, CommandHelp, Form, GamePlugin, PlayerArgument, Refusal, Registry, Role,
    Seat, Table, TableSetup,
};
pub use text::RichText;
pub use time::Timestamp;
pub use transport::{Destination, GameTransport, Inbound, Message, Said, TransportError, Voice};
