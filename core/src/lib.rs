//! spellbridge-core: everything about the games that needs no I/O.
//!
//! This crate never touches a clock, socket, file or database. Time arrives as a
//! [`Timestamp`] inside each action, randomness as a [`Dice`] seeded by the caller (the
//! seed is recorded with every action that draws), and results leave as typed
//! [`Event`]s that each game renders into [`Announcement`]s of [`RichText`] per
//! destination ([`Presentation`]), which the adapters show per network.
//!
//! - [`ids`]: typed names of networks, rooms and players.
//! - [`language`]: the languages a destination can be told in.
//! - [`locale`]: the message catalogues every player-visible sentence is said from.
//! - [`text`]: the small rich-text type every announcement is written in.
//! - [`dice`]: the seeded, auditable random generator.
//! - [`time`]: timestamps and durations (plain numbers, no clock).
//! - [`ending`]: how a game ended (places, scores), and what kind of table it is.
//! - [`event`]: what a table says happened, and how a destination is shown it.
//! - [`draw`]: the small drawing vocabulary a game draws its board picture in.
//! - [`facts`]: what a spectator reads first about a table, as data.
//! - [`plugin`]: the `GamePlugin` and `Table` traits, and the registry of games.
//! - [`options`]: a game's options table from the config, and how a challenge game is taken.
//! - [`transport`]: the `GameTransport` trait a chat network implements.
//! - [`grammar`]: commands as data, and the one parser that reads them.
//! - [`words`]: shared pieces of command parsing (numbers, typo suggestions).
//! - [`shown`]: names as every network shows them (hidden and reversing characters
//!   escaped, long names cut).
//! - [`games`]: the two games, Thaum and Duel.

pub mod dice;
pub mod draw;
pub mod ending;
pub mod event;
pub mod facts;
pub mod games;
pub mod grammar;
pub mod ids;
pub mod language;
pub mod locale;
pub mod options;
pub mod plugin;
pub mod shown;
pub mod text;
pub mod time;
pub mod transport;
pub mod words;

pub use dice::Dice;
pub use ending::{Ending, EndingReader, RecordWords, TableKind};
pub use event::{Event, EventRecord, Presentation, Whisper};
pub use grammar::{Command, Grammar, Parsed, PlayerArgument};
pub use ids::{NetworkId, PlayerId, RoomId};
pub use language::Language;
pub use plugin::{
    Action, Announcement, Audience, ChallengeWords, Form, GamePlugin, Refusal, Registry, Role, Seat, Table,
    TableSetup,
};
pub use text::RichText;
pub use time::Timestamp;
pub use transport::{
    Destination, GameTransport, Inbound, Login, Member, MemberChange, Message, Picture, Presence, Relayed,
    Said, Sent, Speaker, TransportError, Voice,
};
