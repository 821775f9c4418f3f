//! Members mirrored across bridges (issue 17): a network that reports who comes and goes
//! in its rooms (IRC: joins, parts, kicks, quits, nick changes, and the members found on
//! joining, [`GameTransport::member_change`]) has each change shown in the other rooms
//! of the room's bridge on the networks that mirror members
//! ([`GameTransport::mirrors`]: a Matrix appservice, whose ghosts join, leave and change
//! their names). Nothing here is journaled: membership is the networks' own state, and
//! a lost change is mended by the next (a ghost joins when it next speaks).
//!
//! The whole member list a network reports on joining a room (`Presence::Listed`: at
//! every start) is a roll call of the mirrored rooms' ghosts of that network; it goes
//! only to rooms bridged with no other room of the same network ([`alone_in`]), where
//! the list is all of that network's people there.
//!
//! One task per reporting network reads its changes; one per mirroring network applies
//! them in the order they came, so a ghost's join goes before its leave. The bridges are
//! the router's, followed through config reloads and alias lookups.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use spellbridge_core::{GameTransport, MemberChange, NetworkId, Presence, RoomId, TransportError};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::relay::Bridge;

/// How many times a change is tried while the mirroring network is down (about a
/// minute and a half: a daemon's start, where IRC's member lists come before the Matrix
/// login).
const ATTEMPTS: u32 = 24;

/// Starts mirroring, if any of `transports` mirrors members: a reader per transport and
/// a writer per mirroring one, on `tasks`, until `stop`.
pub fn start(
    transports: &BTreeMap<NetworkId, Arc<dyn GameTransport>>,
    bridges: watch::Receiver<Vec<Bridge>>,
    tasks: &TaskTracker,
    stop: &CancellationToken,
) {
    let mut writers = BTreeMap::new();
    for (network, transport) in transports.iter().filter(|(_, t)| t.mirrors()) {
        let (tx, rx) = mpsc::unbounded_channel();
        tasks.spawn(apply(transport.clone(), rx, stop.clone()));
        writers.insert(network.clone(), tx);
    }
    if writers.is_empty() {
        return;
    }
    let (changes_tx, changes_rx) = mpsc::unbounded_channel();
    for transport in transports.values().filter(|t| !t.mirrors()) {
        tasks.spawn(read(transport.clone(), changes_tx.clone(), stop.clone()));
    }
    tasks.spawn(route(changes_rx, writers, bridges, stop.clone()));
}

/// Moves one network's member changes into the one queue.
async fn read(
    transport: Arc<dyn GameTransport>,
    to: mpsc::UnboundedSender<MemberChange>,
    stop: CancellationToken,
) {
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            change = transport.member_change() => match change {
                Some(change) => if to.send(change).is_err() { return },
                None => return,
            },
        }
    }
}

/// Hands each change to the mirroring networks of its room's bridge.
async fn route(
    mut changes: mpsc::UnboundedReceiver<MemberChange>,
    writers: BTreeMap<NetworkId, mpsc::UnboundedSender<(RoomId, MemberChange)>>,
    bridges: watch::Receiver<Vec<Bridge>>,
    stop: CancellationToken,
) {
    loop {
        let change = tokio::select! {
            () = stop.cancelled() => return,
            change = changes.recv() => match change {
                Some(change) => change,
                None => return,
            },
        };
        let now = bridges.borrow();
        for (network, room) in mirrored_in(&now, &change) {
            if matches!(change.presence, Presence::Listed { .. }) && !alone_in(&now, &change, &room) {
                tracing::debug!(%network, %room, channel = %change.room, "another room of the same network is bridged with this one: no roll call");
                continue;
            }
            if let Some(writer) = writers.get(&network) {
                let _ = writer.send((room, change.clone()));
            }
        }
    }
}

/// The other rooms of the bridges the change's room is in.
pub fn mirrored_in(bridges: &[Bridge], change: &MemberChange) -> Vec<(NetworkId, RoomId)> {
    let here = |network: &NetworkId, room: &RoomId| {
        *network == change.network && room.as_str().eq_ignore_ascii_case(change.room.as_str())
    };
    bridges
        .iter()
        .filter(|bridge| bridge.rooms.iter().any(|p| here(&p.network, &p.room)))
        .flat_map(|bridge| bridge.rooms.iter())
        .filter(|p| !here(&p.network, &p.room) && p.network != change.network)
        .map(|p| (p.network.clone(), p.room.clone()))
        .collect()
}

/// Whether `change`'s room is the only room of its network in the bridges `target` is in.
pub fn alone_in(bridges: &[Bridge], change: &MemberChange, target: &RoomId) -> bool {
    let mut rooms: Vec<String> = bridges
        .iter()
        .filter(|bridge| bridge.rooms.iter().any(|p| p.room == *target && p.network != change.network))
        .flat_map(|bridge| bridge.rooms.iter())
        .filter(|p| p.network == change.network)
        .map(|p| p.room.as_str().to_ascii_lowercase())
        .collect();
    rooms.sort();
    rooms.dedup();
    rooms.len() <= 1
}

/// Applies one mirroring network's changes in order; while it is down a change is tried
/// again a few times, then given up (the next change of that member mends it).
async fn apply(
    transport: Arc<dyn GameTransport>,
    mut queue: mpsc::UnboundedReceiver<(RoomId, MemberChange)>,
    stop: CancellationToken,
) {
    while let Some((room, change)) = tokio::select! {
        () = stop.cancelled() => None,
        next = queue.recv() => next,
    } {
        let mut wait = Duration::from_millis(200);
        for attempt in 1..=ATTEMPTS {
            match transport.mirror(&room, &change).await {
                Ok(()) => break,
                Err(TransportError::Disconnected { reason, .. }) if attempt < ATTEMPTS => {
                    tracing::debug!(network = %transport.network(), %room, %reason, "cannot mirror a member change yet");
                    tokio::select! {
                        () = stop.cancelled() => return,
                        () = tokio::time::sleep(wait) => {}
                    }
                    wait = (wait * 2).min(Duration::from_secs(5));
                }
                Err(error) => {
                    tracing::warn!(network = %transport.network(), %room, nick = %change.nick, %error, "a member change was not mirrored");
                    break;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use spellbridge_core::Presence;

    use super::*;
    use crate::turn::Place;

    fn place(network: &str, room: &str) -> Place {
        Place { network: NetworkId::new(network), room: RoomId::new(room) }
    }

    #[test]
    fn a_change_goes_to_the_other_networks_rooms_of_its_bridges() {
        let bridges = vec![
            crate::relay::Bridge {
                name: "magic".into(),
                rooms: vec![place("irc", "#magic"), place("matrix", "!m:hs"), place("irc", "#other")],
                relay: true,
                relay_lines: 5,
                edits: crate::relay::Edits::default(),
                speaker_rate: None,
            },
            crate::relay::Bridge {
                name: "else".into(),
                rooms: vec![place("irc", "#else"), place("matrix", "!e:hs")],
                relay: true,
                relay_lines: 5,
                edits: crate::relay::Edits::default(),
                speaker_rate: None,
            },
        ];
        let change = MemberChange {
            network: NetworkId::new("irc"),
            room: RoomId::new("#Magic"),
            nick: "alice".into(),
            presence: Presence::Joined,
        };
        assert_eq!(mirrored_in(&bridges, &change), [(NetworkId::new("matrix"), RoomId::new("!m:hs"))]);
        let unbridged = MemberChange { room: RoomId::new("#lonely"), ..change.clone() };
        assert!(mirrored_in(&bridges, &unbridged).is_empty());
        // A roll call only where the channel is its network's one room in the bridges.
        let listed = MemberChange { presence: Presence::Listed { nicks: vec!["alice".into()] }, ..change };
        assert!(!alone_in(&bridges, &listed, &RoomId::new("!m:hs")), "#other is bridged there too");
        let elsewhere = MemberChange { room: RoomId::new("#ELSE"), ..listed };
        assert!(alone_in(&bridges, &elsewhere, &RoomId::new("!e:hs")));
    }
}
