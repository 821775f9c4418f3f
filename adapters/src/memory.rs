//! An in-memory [`GameTransport`]: messages are injected by the caller and everything
//! sent is kept in order for the caller to read. The console plays through it, and unit
//! tests use it where a real network would be too slow.

use std::sync::Mutex;

use async_trait::async_trait;
use spellbridge_core::{
    Destination, GameTransport, Inbound, Message, NetworkId, RichText, RoomId, TransportError,
};
use tokio::sync::mpsc;

/// A transport whose "network" is a pair of in-process queues.
pub struct MemoryTransport {
    network: NetworkId,
    inbound_tx: mpsc::UnboundedSender<Inbound>,
    inbound_rx: tokio::sync::Mutex<mpsc::UnboundedReceiver<Inbound>>,
    sent: Mutex<Vec<(Destination, RichText)>>,
    joined: Mutex<Vec<RoomId>>,
}

impl MemoryTransport {
    /// A transport for the named network.
    pub fn new(network: impl Into<NetworkId>) -> Self {
        let (inbound_tx, inbound_rx) = mpsc::unbounded_channel();
        Self {
            network: network.into(),
            inbound_tx,
            inbound_rx: tokio::sync::Mutex::new(inbound_rx),
            sent: Mutex::new(Vec::new()),
            joined: Mutex::new(Vec::new()),
        }
    }

    /// Delivers a message as if it came from the network.
    pub fn inject(&self, inbound: Inbound) {
        // The receiver lives as long as `self`, so sending cannot fail.
        let _ = self.inbound_tx.send(inbound);
    }

    /// Takes every message sent so far, in order.
    pub fn take_sent(&self) -> Vec<(Destination, RichText)> {
        std::mem::take(&mut *lock(&self.sent))
    }

    /// The rooms joined so far.
    pub fn joined(&self) -> Vec<RoomId> {
        lock(&self.joined).clone()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while holding this lock cannot leave the Vec half-written; carry on.
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[async_trait]
impl GameTransport for MemoryTransport {
    fn network(&self) -> &NetworkId {
        &self.network
    }

    async fn recv(&self) -> Option<Inbound> {
        self.inbound_rx.lock().await.recv().await
    }

    async fn join(&self, room: &RoomId) -> Result<(), TransportError> {
        let mut joined = lock(&self.joined);
        if !joined.contains(room) {
            joined.push(room.clone());
        }
        Ok(())
    }

    async fn leave(&self, room: &RoomId) -> Result<(), TransportError> {
        lock(&self.joined).retain(|joined| joined != room);
        Ok(())
    }

    async fn send(&self, to: &Destination, message: &Message) -> Result<(), TransportError> {
        lock(&self.sent).push((to.clone(), message.text.clone()));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spellbridge_core::PlayerId;

    #[tokio::test]
    async fn injected_messages_arrive_and_sent_ones_are_kept_in_order() {
        let transport = MemoryTransport::new(NetworkId::new("test"));
        transport.inject(Inbound {
            message_id: Some("1".into()),
            ..Inbound::new(NetworkId::new("test"), RoomId::new("#magic"), PlayerId::new("alice"), "!games")
        });
        let got = transport.recv().await.expect("an injected message");
        assert_eq!(got.text, "!games");
        let room = Destination::Room(RoomId::new("#magic"));
        transport.send(&room, &"one".into()).await.expect("send");
        transport.send(&room, &"two".into()).await.expect("send");
        let sent: Vec<String> = transport.take_sent().into_iter().map(|(_, t)| t.plain()).collect();
        assert_eq!(sent, ["one", "two"]);
        assert!(transport.take_sent().is_empty());
    }
}
