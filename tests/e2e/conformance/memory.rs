//! The conformance suite for the in-memory transport. Its "network" is the pair of
//! queues the transport keeps, so the peer models what a network would do: a room
//! message reaches the transport only in a room it has joined, and the peer sees what
//! was sent to a room it entered or to it privately, rendered with `RichText::plain`
//! (this network has no formatting). There is no server, so the reconnect check does
//! not apply.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use spellbridge_adapters::memory::MemoryTransport;
use spellbridge_core::{Destination, GameTransport, Inbound, NetworkId, PlayerId, RichText, RoomId};
use tokio::time::Instant;

use super::{Fixture, Formatting, Peer, Seen, conformance_suite, conformance_tests};

const NETWORK: &str = "memory";
const ROOM: &str = "#magic";
const PEER: &str = "alice";

/// The in-memory transport with the configured room joined, and a peer.
pub(crate) struct MemoryFixture {
    transport: Arc<MemoryTransport>,
    peer: MemoryPeer,
}

impl Fixture for MemoryFixture {
    type Transport = MemoryTransport;
    type Peer = MemoryPeer;

    const FORMATTING: Formatting = Formatting::Plain;

    async fn start() -> Self {
        let transport = Arc::new(MemoryTransport::new(NETWORK));
        // As the daemon joins its configured rooms at start.
        if let Err(error) = transport.join(&RoomId::new(ROOM)).await {
            panic!("joining {ROOM}: {error}");
        }
        let peer = MemoryPeer {
            transport: transport.clone(),
            rooms: vec![RoomId::new(ROOM)],
            unread: VecDeque::new(),
            next_id: 0,
        };
        Self { transport, peer }
    }

    fn network(&self) -> NetworkId {
        NetworkId::new(NETWORK)
    }

    fn room(&self) -> RoomId {
        RoomId::new(ROOM)
    }

    fn parts(&mut self) -> (&MemoryTransport, &mut MemoryPeer) {
        (&self.transport, &mut self.peer)
    }

    async fn restart_server(&mut self) -> Option<()> {
        None
    }
}

/// A player on the in-memory network.
pub(crate) struct MemoryPeer {
    transport: Arc<MemoryTransport>,
    /// The rooms the peer is in.
    rooms: Vec<RoomId>,
    /// Messages taken from the transport and not yet seen.
    unread: VecDeque<(Destination, RichText)>,
    next_id: u64,
}

impl MemoryPeer {
    fn inject(&mut self, room: RoomId, text: String, private: bool) {
        self.next_id += 1;
        self.transport.inject(Inbound {
            display_name: self.display_name(),
            private,
            message_id: Some(format!("memory-{}", self.next_id)),
            ..Inbound::new(NetworkId::new(NETWORK), room, self.player(), text)
        });
    }

    /// Whether the peer is meant to see a message sent there.
    fn sees(&self, to: &Destination) -> bool {
        match to {
            Destination::Room(room) => self.rooms.contains(room),
            Destination::Private(player) => *player == self.player(),
        }
    }
}

impl Peer for MemoryPeer {
    fn player(&self) -> PlayerId {
        PlayerId::new(PEER)
    }

    fn display_name(&self) -> String {
        PEER.to_owned()
    }

    fn direct_room(&self) -> RoomId {
        RoomId::new(PEER)
    }

    fn line_limit(&self) -> Option<usize> {
        None
    }

    async fn enter(&mut self, name: &str) -> RoomId {
        let room = RoomId::new(format!("#{name}"));
        if !self.rooms.contains(&room) {
            self.rooms.push(room.clone());
        }
        room
    }

    async fn say_in_room(&mut self, room: &RoomId, text: &str) {
        // As on a network: nobody hears a room the transport is not in.
        if self.transport.joined().contains(room) {
            self.inject(room.clone(), text.to_owned(), false);
        }
    }

    async fn say_formatted_in_room(&mut self, room: &RoomId, text: &RichText) {
        // This network has no formatting codes: a client sends the visible text.
        let plain = text.plain();
        self.say_in_room(room, &plain).await;
    }

    async fn say_privately(&mut self, text: &str) {
        self.inject(self.direct_room(), text.to_owned(), true);
    }

    async fn next_seen(&mut self, timeout: Duration) -> Option<Seen> {
        let deadline = Instant::now() + timeout;
        loop {
            self.unread.extend(self.transport.take_sent());
            while let Some((to, text)) = self.unread.pop_front() {
                if !self.sees(&to) {
                    continue;
                }
                let plain = text.plain();
                let (private, room) = match to {
                    Destination::Room(room) => (false, Some(room)),
                    Destination::Private(_) => (true, None),
                };
                return Some(Seen {
                    private,
                    room,
                    wire_bytes: plain.len(),
                    formatted: plain.clone(),
                    text: plain,
                });
            }
            if Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

conformance_suite!(MemoryFixture);
conformance_tests!(MemoryFixture; reconnect_does_not_apply_no_server_to_restart);
