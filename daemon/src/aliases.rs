//! Bridged rooms named by alias (issue 17, item 6): a `[[bridge]]` may name a Matrix room
//! `#magic:example.org` instead of its id. Messages name their room by id, so each alias
//! is looked up ([`Transport::resolve_room`]) when the daemon starts and again on every
//! SIGHUP, and the bridges the router is given name the room the alias points to then
//! ([`apply`]). An alias the room's admins moved to another room is followed on the next
//! SIGHUP: the bridge names the new room and the bot joins it.
//!
//! The rooms of `[http] hidden_rooms` are looked up the same way, so the site hides the
//! room an alias points to ([`crate::site::hidden`]); every answer, a name that needs no
//! lookup included, is reported, so the site knows when each name has been read.
//!
//! Until an alias is looked up (the bot logs in first) its room is not yet bridged: what
//! is said there meanwhile is handled as in any room, not relayed. A lookup that cannot
//! be made now is tried again with a growing pause, one that the homeserver refuses (the
//! alias points nowhere) is logged once and tried again slowly, until the next SIGHUP or
//! shutdown starts over.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use spellbridge_adapters::network::{Resolved, Transport};
use spellbridge_core::{NetworkId, RoomId};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::config::BridgeSettings;

/// What each alias a bridge names points to: (network, alias) → room id.
pub type Aliases = BTreeMap<(NetworkId, String), String>;

/// Every room each name of the config has been found to stand for since the daemon
/// started: (network, name) → rooms. A name needing no lookup stands for itself; an alias
/// the homeserver says points nowhere has been looked up and stands for no room (yet).
pub type Seen = BTreeMap<(NetworkId, String), BTreeSet<RoomId>>;

/// One lookup's answer: on `network`, `alias` points to `room`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// The alias's network.
    pub network: NetworkId,
    /// The alias as the config gives it.
    pub alias: String,
    /// The room id it points to (the name itself when it needs no lookup), or `None`
    /// when the homeserver says it points to no room (the lookup goes on).
    pub room: Option<String>,
}

impl Found {
    /// True when this is an alias's room, not a name standing for itself or for nothing.
    pub fn is_alias(&self) -> bool {
        self.room.as_ref().is_some_and(|room| *room != self.alias)
    }

    /// Notes what was found in `seen`; true when it is news (a name read for the first
    /// time, or a room it had not stood for).
    pub fn note(&self, seen: &mut Seen) -> bool {
        let key = (self.network.clone(), self.alias.clone());
        let first = !seen.contains_key(&key);
        let rooms = seen.entry(key).or_default();
        let room = self.room.as_deref().map(RoomId::new);
        room.is_some_and(|room| rooms.insert(room)) || first
    }
}

/// The first pause before a lookup is tried again, and the most it grows to.
const RETRY: (Duration, Duration) = (Duration::from_millis(500), Duration::from_secs(30));

/// The bridges with every alias that has been looked up replaced by its room.
pub fn apply(bridges: &[BridgeSettings], aliases: &Aliases) -> Vec<BridgeSettings> {
    bridges
        .iter()
        .map(|bridge| BridgeSettings {
            rooms: bridge
                .rooms
                .iter()
                .map(|(network, room)| {
                    let key = (network.clone(), room.as_str().to_owned());
                    let room = aliases.get(&key).map_or_else(|| room.clone(), |id| RoomId::new(id.as_str()));
                    (network.clone(), room)
                })
                .collect(),
            ..bridge.clone()
        })
        .collect()
}

/// Every room name to look up: the bridges' rooms and the hidden rooms.
pub fn names(
    bridges: &[BridgeSettings],
    hidden_rooms: &[(NetworkId, RoomId)],
) -> BTreeSet<(NetworkId, String)> {
    bridges
        .iter()
        .flat_map(|b| b.rooms.iter())
        .chain(hidden_rooms)
        .map(|(n, r)| (n.clone(), r.as_str().to_owned()))
        .collect()
}

/// Looks up every room of `rooms` ([`names`]) on `transports`, each until it is found (or
/// needs no lookup) or `stop` is cancelled, and sends what each name stands for.
pub async fn resolve(
    rooms: BTreeSet<(NetworkId, String)>,
    transports: BTreeMap<NetworkId, Arc<dyn Transport>>,
    found: mpsc::UnboundedSender<Found>,
    stop: CancellationToken,
) {
    let mut lookups = tokio::task::JoinSet::new();
    for (network, room) in rooms {
        let Some(transport) = transports.get(&network).cloned() else { continue };
        lookups.spawn(resolve_one(transport, network, room, found.clone(), stop.clone()));
    }
    while lookups.join_next().await.is_some() {}
}

async fn resolve_one(
    transport: Arc<dyn Transport>,
    network: NetworkId,
    alias: String,
    found: mpsc::UnboundedSender<Found>,
    stop: CancellationToken,
) {
    let mut pause = RETRY.0;
    let mut told = false;
    loop {
        let answer = tokio::select! {
            () = stop.cancelled() => return,
            answer = transport.resolve_room(&alias) => answer,
        };
        match answer {
            Resolved::Same => {
                let _ = found.send(Found { room: Some(alias.clone()), network, alias });
                return;
            }
            Resolved::Room(room) => {
                let _ = found.send(Found { network, alias, room: Some(room) });
                return;
            }
            Resolved::NotYet(why) => {
                tracing::debug!(network = %network, %alias, %why, "cannot look up a bridged room's alias yet");
            }
            Resolved::Unknown(why) if !told => {
                told = true;
                let _ = found.send(Found { network: network.clone(), alias: alias.clone(), room: None });
                tracing::warn!(network = %network, %alias, %why, "the config names an alias that points to no room; \
                    trying again (create the alias, or give the room's id in [[bridge]] or [http] hidden_rooms)");
            }
            Resolved::Unknown(_) => {}
        }
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(pause) => {}
        }
        pause = (pause * 2).min(RETRY.1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bridge(rooms: &[(&str, &str)]) -> BridgeSettings {
        BridgeSettings {
            name: "magic".into(),
            rooms: rooms.iter().map(|(n, r)| (NetworkId::new(*n), RoomId::new(*r))).collect(),
            relay: true,
            relay_lines: 5,
            edits: crate::relay::Edits::Diff,
            speaker_rate: None,
        }
    }

    #[test]
    fn looked_up_aliases_are_replaced_and_the_rest_kept() {
        let bridges = vec![bridge(&[("irc", "#magic"), ("matrix", "#magic:hs"), ("other", "#magic:hs")])];
        let mut aliases = Aliases::new();
        assert_eq!(apply(&bridges, &aliases), bridges, "nothing looked up yet");
        aliases.insert((NetworkId::new("matrix"), "#magic:hs".into()), "!abc".into());
        let applied = apply(&bridges, &aliases);
        let rooms: Vec<&str> = applied[0].rooms.iter().map(|(_, r)| r.as_str()).collect();
        assert_eq!(rooms, ["#magic", "!abc", "#magic:hs"], "only that network's alias");
    }
}
