//! What the sync loop tells the daemon about where a message was said and by whom: which
//! player, if any, the room is a private chat with (one the bot can vouch for, `vouch`:
//! made by the bot or that player, invite-only, history for members only, and nobody else
//! ever a member), the sender's display name there, and whether they operate it (power
//! level 50 or more); and the members' display names the transport writes in the pills
//! of what it sends. All of it is room state in matrix-sdk's store, a read of SQLite
//! each; it is kept here per room until a sync brings the room a state event (a member
//! joining or leaving, a new name, new power levels), so a room's chat, and the answers
//! to it, cost no read per message. A room a third member spoiled is remembered for good
//! (`spoiled`), also when an appservice transaction shows the member first.
//!
//! The bot syncs without lazy-loaded members (the homeserver works out which member
//! events to send with every sync otherwise, the larger part of its time for a bot's
//! sync), so the homeserver sends no member counts: the members, those who left or were
//! banned included, are read from the store, after fetching the room's full member list
//! once where it is not known yet.

use std::collections::HashMap;
use std::sync::Mutex;

use matrix_sdk::ruma::events::room::member::MembershipState;
use matrix_sdk::ruma::events::room::power_levels::UserPowerLevel;
use matrix_sdk::ruma::{Int, OwnedRoomId, OwnedUserId, RoomId, UserId};
use matrix_sdk::sync::{JoinedRoomUpdate, State};
use matrix_sdk::{Room, RoomMemberships};

use super::early;
use super::spoiled::SpoiledRooms;
use super::transport::{self, lock};
use super::vouch::{self, Doubt, RoomSigns};

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
    /// The player the room is a private chat with (`Some(None)`: with nobody).
    private_with: Option<Option<OwnedUserId>>,
    /// Member events an appservice transaction brought that the store may not have yet.
    pushed: Vec<(OwnedUserId, MembershipState)>,
    senders: HashMap<OwnedUserId, Sender>,
    /// Members' display names for pills; `None` for someone not in the room.
    names: HashMap<OwnedUserId, Option<String>>,
}

/// Rooms' facts, looked up once between state changes.
pub(super) struct RoomFacts {
    rooms: Mutex<HashMap<OwnedRoomId, Facts>>,
    spoiled: SpoiledRooms,
}

impl RoomFacts {
    /// The facts of no room yet; rooms spoiled as private chats are kept in `spoiled`.
    pub(super) fn new(spoiled: SpoiledRooms) -> Self {
        RoomFacts { rooms: Mutex::new(HashMap::new()), spoiled }
    }

    /// The player `room` is a private chat with, if the bot can vouch for it (`vouch`):
    /// being a room of two, or marked as a direct chat, is not enough. A room a third
    /// member has been in is remembered as spoiled.
    pub(super) async fn private_with(&self, room: &Room) -> Option<OwnedUserId> {
        if let Some(private_with) = self.known(room, |f| f.private_with.clone()) {
            return private_with;
        }
        let mut signs = signs(room, self.spoiled.contains(room.room_id())).await;
        signs.members.extend(self.known(room, |f| Some(f.pushed.clone())).unwrap_or_default());
        let private_with = match vouch::vouch(room.own_user_id(), &signs) {
            Ok(player) => Some(player),
            Err(doubt) => {
                if doubt == Doubt::Others && self.spoiled.insert(room.room_id()) {
                    tracing::info!(room = %room.room_id(), "a third member was in a private chat: it is never private again");
                }
                tracing::debug!(room = %room.room_id(), ?doubt, "not a private chat");
                None
            }
        };
        self.keep(room, |f| f.private_with = Some(private_with.clone()));
        private_with
    }

    /// Whether `room` is a private chat with anyone.
    async fn private(&self, room: &Room) -> bool {
        self.private_with(room).await.is_some()
    }

    /// A member event for `user` in `room` seen before matrix-sdk has stored it (an
    /// appservice transaction, which the homeserver may push before the bot's sync brings
    /// it): counted with the room's members from now until the sync has stored it, so a
    /// third member spoils the room before the messages after it are handed over.
    pub(super) fn member_event(&self, room: &RoomId, user: OwnedUserId, membership: MembershipState) {
        let mut rooms = lock(&self.rooms);
        let facts = rooms.entry(room.to_owned()).or_default();
        facts.pushed.push((user, membership));
        // Looked up again, with the new member.
        facts.private_with = None;
        facts.senders.clear();
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
        if state_changed(update) {
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

/// True when a sync's update of a room changed its state (its `state` section, or a
/// state event in its timeline).
pub(super) fn state_changed(update: &JoinedRoomUpdate) -> bool {
    let (State::Before(state) | State::After(state)) = &update.state;
    !state.is_empty() || update.timeline.events.iter().any(|e| early::changes_state(e.raw()))
}

/// What the room's state says for [`vouch::vouch`], by the store; its full member list
/// (every membership, leaves and bans too) is fetched first where the store does not
/// have it yet (once per room). Members that cannot be read leave the list with the bot
/// alone, which is no private chat.
async fn signs(room: &Room, spoiled: bool) -> RoomSigns {
    if !room.are_members_synced()
        && let Err(error) = room.sync_members().await
    {
        tracing::warn!(room = %room.room_id(), %error, "cannot fetch the room's members; reading those known");
    }
    // `empty()`: every membership, unknown ones too.
    let members = match room.members_no_sync(RoomMemberships::empty()).await {
        Ok(members) => members.iter().map(|m| (m.user_id().to_owned(), m.membership().clone())).collect(),
        Err(error) => {
            tracing::warn!(room = %room.room_id(), %error, "cannot read the room's members");
            Vec::new()
        }
    };
    RoomSigns {
        creators: room.creators(),
        join_rule: room.join_rule(),
        history: room.history_visibility(),
        members,
        spoiled,
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
