//! The daemon's shared vocabulary of one message's turn, on the ground floor so relay,
//! metrics, the board, the store's outbox and the router all speak it without importing
//! one another: a [`Place`] (a room on a network), an [`Outbound`] message to deliver,
//! and what one inbound message came to ([`Turn`]): chat relayed over a bridge, a
//! command accepted, refused or answered as a question, or nothing. The router says it
//! as it handles the message, so metrics, logs and the store read it instead of guessing
//! from the text.

use spellbridge_core::{Destination, Message, NetworkId, RoomId};

/// A room on a network: where a table sits and where replies go.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Place {
    /// The network.
    pub network: NetworkId,
    /// The room on it.
    pub room: RoomId,
}

/// A message the router wants delivered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outbound {
    /// The network to send it on.
    pub network: NetworkId,
    /// The room or user to send it to.
    pub to: Destination,
    /// What it says, and how.
    pub message: Message,
}

/// What became of a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// It changed a table or the lobby (and was journaled).
    Accepted,
    /// It was refused (unknown, illegal, malformed, not allowed, over the command limit)
    /// and changed nothing.
    Refused,
    /// A question (`!status`, `!help`, a list): answered, nothing changed.
    Query,
}

impl Outcome {
    /// The name metrics and logs use.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Accepted => "accepted",
            Outcome::Refused => "refused",
            Outcome::Query => "query",
        }
    }
}

/// What one inbound message was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Happened {
    /// Ordinary chat; `bridge` names the bridge it was relayed over, if it was.
    Chat {
        /// The bridge, when the message went to its other rooms.
        bridge: Option<String>,
    },
    /// A command, and how it ended.
    Command(Outcome),
    /// Chat over its speaker's rate on `bridge`: not relayed, not committed.
    TooFast {
        /// The bridge it would have crossed.
        bridge: String,
    },
    /// Dropped unread: an ignored player's message, or an edit that looks like a command
    /// (edits are never run).
    Dropped,
}

impl Happened {
    /// True for a command, whatever its outcome.
    pub fn is_command(&self) -> bool {
        matches!(self, Happened::Command(_))
    }
}

/// One message handled: what it was, and what to send because of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Turn {
    /// What the message was.
    pub happened: Happened,
    /// What to deliver.
    pub outbound: Vec<Outbound>,
}

impl Turn {
    /// A turn that sends `outbound`.
    pub(crate) fn new(happened: Happened, outbound: Vec<Outbound>) -> Turn {
        Turn { happened, outbound }
    }
}
