//! The `GameTransport` conformance suite (STYLE habit 9): every check is written once, in
//! [`checks`], against a transport under test and a [`Peer`] — the other side of the
//! network, a human in the room — and [`conformance_suite!`] instantiates all of them for
//! each transport's [`Fixture`], as matrix-rust-sdk's store integration tests do:
//!
//! - [`memory`]: the in-memory transport; its peer injects messages and reads what was sent.
//! - [`irc`]: the IRC transport against a real InspIRCd, with a raw IRC client as the peer.
//! - [`matrix`]: the Matrix transport against a real Synapse, with a raw Matrix client as the peer.
//!
//! Test names read `conformance::<transport>::<check>`. Everything network-specific (how
//! a peer talks, how formatting looks on the wire, how a server restarts) lives in the
//! fixture, so a Matrix fixture only has to implement [`Fixture`] and [`Peer`] and call
//! the macros. Every wait is bounded; a failure says what arrived instead.

use std::time::Duration;

use spellbridge_core::{GameTransport, NetworkId, PlayerId, RichText, RoomId};

mod checks;
mod irc;
mod matrix;
mod memory;

/// How long a message may take to arrive (loopback: milliseconds, normally).
pub(crate) const WAIT: Duration = Duration::from_secs(5);

/// How long to listen when checking that nothing (more) arrives.
pub(crate) const QUIET: Duration = Duration::from_millis(300);

/// How long a transport may take to be back in its rooms after a server restart
/// (reconnect backoff plus the server's ~1 s registration).
pub(crate) const REJOIN_WAIT: Duration = Duration::from_secs(15);

/// A message as the peer saw it arrive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Seen {
    /// True when it was sent to the peer privately.
    pub private: bool,
    /// The room it was said in; `None` when private.
    pub room: Option<RoomId>,
    /// The visible text: formatting codes stripped.
    pub text: String,
    /// The text as received, with the network's formatting.
    pub formatted: String,
    /// The bytes the network carried for this message (on IRC the whole relayed line,
    /// prefix and `\r\n` included), to check against [`Peer::line_limit`].
    pub wire_bytes: usize,
}

/// The other side of the network: a human who talks to the transport under test.
/// Failures to talk (a closed connection) panic with the harness's message.
pub(crate) trait Peer {
    /// Who the peer is, as the transport must report it in `Inbound::sender`, and as
    /// `Destination::Private` addresses it.
    fn player(&self) -> PlayerId;

    /// The name the transport must show for the peer (`Inbound::display_name`).
    fn display_name(&self) -> String;

    /// The room a private message from the peer arrives in (`Inbound::room`).
    fn direct_room(&self) -> RoomId;

    /// The most bytes one message may take on this network (see [`Seen::wire_bytes`]);
    /// `None` when the network has no limit.
    fn line_limit(&self) -> Option<usize>;

    /// Enters the room called `name` (creating it if the network needs that), so the
    /// peer hears what is said there and can speak in it; returns its id. The transport
    /// under test has not joined it.
    async fn enter(&mut self, name: &str) -> RoomId;

    /// Says plain text in a room.
    async fn say_in_room(&mut self, room: &RoomId, text: &str);

    /// Says text in a room with the network's own formatting (as a chat client would
    /// send bold or coloured text).
    async fn say_formatted_in_room(&mut self, room: &RoomId, text: &RichText);

    /// Sends plain text to the transport's user privately.
    async fn say_privately(&mut self, text: &str);

    /// The next message from the transport's user the peer sees (in a room it entered,
    /// or privately), within `timeout`.
    async fn next_seen(&mut self, timeout: Duration) -> Option<Seen>;
}

/// How a network shows [`checks::formatting_sample`].
pub(crate) enum Formatting {
    /// The network has no formatting: what arrives is exactly the visible text.
    Plain,
    /// What arrives contains each of these pieces (the network's formatting codes).
    Contains(&'static [&'static str]),
}

/// One transport under test, connected, with a [`Peer`] in [`Fixture::room`] (which the
/// transport has joined and hears).
pub(crate) trait Fixture: Sized {
    /// The transport under test.
    type Transport: GameTransport;
    /// The peer that talks to it.
    type Peer: Peer;

    /// How the formatting sample arrives on this network.
    const FORMATTING: Formatting;

    /// Starts the network (if any), the transport and the peer; panics with a clear
    /// message when that fails (a missing server fails, it is never skipped).
    async fn start() -> Self;

    /// The network the transport was configured for.
    fn network(&self) -> NetworkId;

    /// A room the transport joined at start, with the peer in it.
    fn room(&self) -> RoomId;

    /// The transport under test and the peer.
    fn parts(&mut self) -> (&Self::Transport, &mut Self::Peer);

    /// Restarts the network's server as an operator would (every connection closes), and
    /// returns once the peer is back in its rooms and the transport says it is connected
    /// again; whether the transport rejoined its rooms is for the check to find out.
    /// `None`: this transport has no server to restart.
    async fn restart_server(&mut self) -> Option<()>;
}

/// Instantiates every check that applies to all transports, as one `#[tokio::test]`
/// each, for a [`Fixture`] type. Use it inside the transport's module.
macro_rules! conformance_suite {
    ($fixture:ty) => {
        crate::conformance::conformance_tests!(
            $fixture;
            join_makes_the_rooms_messages_arrive,
            join_returns_once_the_room_is_joined,
            room_message_arrives,
            room_message_reaches_the_peer,
            private_message_arrives,
            private_message_reaches_the_peer_privately,
            long_message_arrives_complete_and_in_order,
            long_cjk_emoji_private_message_arrives_complete_and_in_order,
            formatting_arrives_with_the_right_visible_text,
            inbound_formatting_is_stripped,
        );
    };
}

/// Instantiates the named checks of [`checks`] for a fixture type (used by
/// [`conformance_suite!`], and directly for checks that apply to some transports only,
/// such as `reconnects_after_a_server_restart`).
macro_rules! conformance_tests {
    ($fixture:ty; $($check:ident),+ $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $check() {
                crate::conformance::checks::$check::<$fixture>().await;
            }
        )+
    };
}

pub(crate) use conformance_suite;
pub(crate) use conformance_tests;
