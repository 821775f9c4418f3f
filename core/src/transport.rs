//! The `GameTransport` trait: what a chat network must offer the daemon.
//!
//! IRC, Matrix and the in-memory console transport implement it; one conformance suite
//! tests them all. The trait lives in the core so that the router can be written against
//! it without knowing any network, but nothing here performs I/O itself.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::ids::{NetworkId, PlayerId, RoomId};
use crate::text::RichText;

/// A message that arrived from a network.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inbound {
    /// The network it came from.
    pub network: NetworkId,
    /// The room it was said in; for a private message, the sender's direct room.
    pub room: RoomId,
    /// Who said it, as that network identifies them.
    pub sender: PlayerId,
    /// The name to show for the sender.
    pub display_name: String,
    /// The text, with network formatting already reduced to plain text.
    pub text: String,
    /// True when it was sent privately to the bot.
    pub private: bool,
    /// The network's id for this message, used to recognise redeliveries.
    pub message_id: Option<String>,
}

/// Where an outbound message goes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Destination {
    /// A room (channel) on the transport's network.
    Room(RoomId),
    /// A private message to a user.
    Private(PlayerId),
}

/// Why a transport could not do what was asked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// The connection is down; the message may be retried after reconnecting.
    #[error("not connected to {network}: {reason}")]
    Disconnected {
        /// The network.
        network: NetworkId,
        /// What the network or socket said.
        reason: String,
    },
    /// The network refused the request (banned from a room, unknown user, …).
    #[error("{network} refused: {reason}")]
    Refused {
        /// The network.
        network: NetworkId,
        /// What the network said.
        reason: String,
    },
}

/// A chat network as the daemon sees it.
#[async_trait]
pub trait GameTransport: Send + Sync {
    /// The network's configured name.
    fn network(&self) -> &NetworkId;

    /// Waits for the next inbound message; `None` once the transport has shut down.
    async fn recv(&self) -> Option<Inbound>;

    /// Joins a room so its messages arrive and messages can be sent to it.
    async fn join(&self, room: &RoomId) -> Result<(), TransportError>;

    /// Sends a message.
    async fn send(&self, to: &Destination, text: &RichText) -> Result<(), TransportError>;
}
