//! What the sync loop tells the daemon about where a message was said and by whom: whether
//! the room is private (exactly the bot and one other member in it, joined or invited:
//! a room marked as a direct chat that a third has joined is not), the sender's display name there,
//! and whether they operate it (power level 50 or more); and the members' display names
//! the transport writes in the pills of what it sends. All of it is room state in
//! matrix-sdk's store, a read of SQLite each; it is kept here per room until a sync brings
//! the room a state event (a member joining or leaving, a new name, new power levels), so
//! a room's chat, and the answers to it, cost no read per message.
//!
//! The bot syncs without lazy-loaded members (the homeserver works out which member
//! events to send with every sync otherwise, the larger part of its time for a bot's
//! sync), so the homeserver sends no member counts: the joined and invited members are
//! counted from the store, after fetching the room's full member list once where it is not
//! known yet.

use std::collections::HashMap;
use std::sync::Mutex;

use matrix_sdk::ruma::events::room::power_levels::UserPowerLevel;
use matrix_sdk::ruma::{Int, OwnedRoomId, OwnedUserId, RoomId, UserId};
use matrix_sdk::sync::{JoinedRoomUpdate, State};
use matrix_sdk::{Room, RoomMemberships};

use super::early;
use super::transport::{self, lock};

/// The power level from which a sender operates a room (a moderator's, in Element).
const OPERATOR_LEVEL: u8 = 50;

/// A message's sender as the daemon sees them in one room.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Sender {
    pub(super) display_name: String,
    /// Operates the room; never in a private one.
    pub(super) operator: bool,
}

/// What is known of one room since its state last changed.
#[derive(Default)]
struct Facts {
    private: Option<bool>,
    senders: HashMap<OwnedUserId, Sender>,
    /// Members' display names for pills; `None` for someone not in the room.
    names: HashMap<OwnedUserId, Option<String>>,
}

/// Rooms' facts, looked up once between state changes.
#[derive(Default)]
pub(super) struct RoomFacts {
    rooms: Mutex<HashMap<OwnedRoomId, Facts>>,
}

impl RoomFacts {
    /// Whether the room is private: exactly two are in it (joined or invited), the bot and
    /// one other. Being marked as a direct chat does not count: a third member may have
    /// joined a "DM" since, and would see what is said there.
    pub(super) async fn private(&self, room: &Room) -> bool {
        if let Some(private) = self.known(room, |f| f.private) {
            return private;
        }
        let private = is_private(active_members(room).await);
        self.keep(room, |f| f.private = Some(private));
        private
    }

    /// The sender of a message in `room`.
    pub(super) async fn sender(&self, room: &Room, user: &UserId) -> Sender {
        if let Some(known) = self.known(room, |f| f.senders.get(user).cloned()) {
            return known;
        }
        let private = self.private(room).await;
        let sender = Sender {
            display_name: transport::display_name(room, user).await,
            operator: !private && operates(room, user).await,
        };
        self.keep(room, |f| {
            f.senders.insert(user.to_owned(), sender.clone());
        });
        sender
    }

    /// The display name of `user` in `room`, for a pill in a message sent there; `None`
    /// when they are not a member (or the store cannot tell now, which is not kept).
    /// Where the store lacks the room's members they are fetched first (once per room).
    pub(super) async fn member_name(&self, room: &Room, user: &UserId) -> Option<String> {
        if let Some(known) = self.known(room, |f| f.names.get(user).cloned()) {
            return known;
        }
        let name = match room.get_member(user).await {
            Ok(member) => member.map(|m| m.name().to_owned()),
            Err(error) => {
                tracing::debug!(room = %room.room_id(), user = %user, %error, "cannot read a member's name");
                return None;
            }
        };
        self.keep(room, |f| {
            f.names.insert(user.to_owned(), name.clone());
        });
        name
    }

    /// Forgets what is known of a room when its update changed its state (its `state`
    /// section, or a state event in its timeline); matrix-sdk has stored the change by then.
    pub(super) fn update(&self, room: &RoomId, update: &JoinedRoomUpdate) {
        let (State::Before(state) | State::After(state)) = &update.state;
        let state_changed =
            !state.is_empty() || update.timeline.events.iter().any(|e| early::changes_state(e.raw()));
        if state_changed {
            self.forget(room);
        }
    }

    /// What `read` finds among the room's facts, if any are kept.
    fn known<T>(&self, room: &Room, read: impl FnOnce(&Facts) -> Option<T>) -> Option<T> {
        lock(&self.rooms).get(room.room_id()).and_then(read)
    }

    /// Keeps a fact about the room (until its state changes).
    fn keep(&self, room: &Room, write: impl FnOnce(&mut Facts)) {
        write(lock(&self.rooms).entry(room.room_id().to_owned()).or_default());
    }

    /// Forgets what is known of a room (the bot left it, or its state changed).
    pub(super) fn forget(&self, room: &RoomId) {
        lock(&self.rooms).remove(room);
    }
}

/// Whether a room with this many members (joined or invited, the bot included) is private:
/// only a room of the bot and one other is. An unknown count is not private.
pub(super) fn is_private(members: Option<usize>) -> bool {
    members == Some(2)
}

/// How many have joined the room or are invited to it, by the store; its full member
/// list is fetched first where the store does not have it yet (once per room). `None`
/// when unknown.
async fn active_members(room: &Room) -> Option<usize> {
    if !room.are_members_synced()
        && let Err(error) = room.sync_members().await
    {
        tracing::warn!(room = %room.room_id(), %error, "cannot fetch the room's members; counting those known");
    }
    match room.members_no_sync(RoomMemberships::ACTIVE).await {
        Ok(members) => Some(members.len()),
        Err(error) => {
            tracing::warn!(room = %room.room_id(), %error, "cannot count the room's members");
            None
        }
    }
}

/// Whether `user` has a power level of at least [`OPERATOR_LEVEL`] in the room, by the
/// room's `m.room.power_levels`. Unknown power levels make nobody an operator.
async fn operates(room: &Room, user: &UserId) -> bool {
    match room.power_levels().await {
        // Unbounded (a room creator, from room version 12) compares above every number.
        Ok(levels) => levels.for_user(user) >= UserPowerLevel::Int(Int::from(OPERATOR_LEVEL)),
        Err(error) => {
            tracing::debug!(room = %room.room_id(), %error, "power levels unknown; the sender is not an operator");
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::is_private;

    #[test]
    fn only_a_room_of_the_bot_and_one_other_is_private() {
        assert!(is_private(Some(2)));
        for members in [None, Some(0), Some(1), Some(3), Some(40)] {
            assert!(!is_private(members), "{members:?}");
        }
    }
}
