//! Who is in a bridged room now, as its network's transport knows it (IRC: the channel's
//! member list the adapter keeps; Matrix: the room's joined members). The relay shows a
//! speaker's name with their id when it could pass for someone there, even someone who
//! has not spoken since the start; a name typed in a command means such a member
//! (`router::names`).

use std::fmt;
use std::sync::Arc;

use spellbridge_core::{Member, NetworkId, RoomId};

/// Answers whether someone called `name` is in `room` on `network` now.
pub trait RoomMembers: Send + Sync {
    /// True when the network's transport knows a member of `room` called `name`.
    fn is_member(&self, network: &NetworkId, room: &RoomId, name: &str) -> bool;

    /// The members of `room` on `network` who answer to `name` (by default none known).
    fn named(&self, network: &NetworkId, room: &RoomId, name: &str) -> Vec<Member> {
        let _ = (network, room, name);
        Vec::new()
    }
}

/// The router's view of room members: none known (the console, tests) or a transport's.
#[derive(Clone, Default)]
pub struct RoomMembersSource(Option<Arc<dyn RoomMembers>>);

impl RoomMembersSource {
    /// Members as `members` knows them.
    pub fn new(members: Arc<dyn RoomMembers>) -> Self {
        Self(Some(members))
    }

    /// True when someone called `name` is in `room` on `network`, as far as is known.
    pub fn is_member(&self, network: &NetworkId, room: &RoomId, name: &str) -> bool {
        self.0.as_ref().is_some_and(|members| members.is_member(network, room, name))
    }

    /// The members of `room` on `network` who answer to `name`, as far as is known.
    pub fn named(&self, network: &NetworkId, room: &RoomId, name: &str) -> Vec<Member> {
        self.0.as_ref().map(|members| members.named(network, room, name)).unwrap_or_default()
    }
}

impl fmt::Debug for RoomMembersSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "RoomMembersSource(transports)"
        } else {
            "RoomMembersSource(none)"
        })
    }
}
