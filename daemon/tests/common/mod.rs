//! What the router tests (`router_identities`, `router_bridges`) share: messages as the
//! transports deliver them, in a bridge's IRC channel `#magic` or its Matrix room.

use spellbridge_core::{Inbound, NetworkId, PlayerId, RoomId};

/// The bridged Matrix room.
pub const MATRIX_ROOM: &str = "!magic:hs";

/// `nick` says `text` in `#magic` on `network`.
pub fn on(network: &str, nick: &str, text: &str) -> Inbound {
    Inbound::new(NetworkId::new(network), RoomId::new("#magic"), PlayerId::new(nick), text)
}

/// Matrix `user`, shown as `name`, says `text` in [`MATRIX_ROOM`].
pub fn on_matrix(user: &str, name: &str, text: &str) -> Inbound {
    Inbound {
        display_name: name.to_owned(),
        ..Inbound::new(NetworkId::new("matrix"), RoomId::new(MATRIX_ROOM), PlayerId::new(user), text)
    }
}

/// The same message, sent privately to the bot.
pub fn privately(mut inbound: Inbound) -> Inbound {
    inbound.private = true;
    inbound.room = RoomId::new(format!("dm:{}", inbound.sender));
    inbound
}
