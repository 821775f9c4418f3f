//! Who is in a bridged room now, as its network's transport knows it (IRC: the channel's
//! member list the adapter keeps). The relay shows a speaker's name with their id when it
//! could pass for someone there, even someone who has not spoken since the start.

use std::fmt;
use std::sync::Arc;

use spellbridge_core::{NetworkId, RoomId};

/// Answers whether someone called `name` is in `room` on `network` now.
pub trait RoomMembers: Send + Sync {
    /// True when the network's transport knows a member of `room` called `name`.
    fn is_member(&self, network: &NetworkId, room: &RoomId, name: &str) -> bool;
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
