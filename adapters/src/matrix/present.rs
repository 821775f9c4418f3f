//! Who is joined to each room the bot is in, by user id and display name, kept beside
//! matrix-sdk's store so that a name typed in a command (`!duel Piet Silent`,
//! `!duel @noah:example.org`) is matched against the room's members at once
//! ([`GameTransport::members_named`](spellbridge_core::GameTransport::members_named) does
//! not wait). A room's list is read from the store again whenever a sync brings the room
//! a state change, before that sync's messages are handed over, so a member who joined
//! and a command naming them in the same sync are seen in that order; a member event an
//! appservice transaction brings first changes the list at once.

use std::collections::HashMap;
use std::sync::Mutex;

use matrix_sdk::ruma::events::room::member::MembershipState;
use matrix_sdk::ruma::{OwnedRoomId, OwnedUserId, RoomId, UserId};
use matrix_sdk::{Room, RoomMemberships};
use spellbridge_core::{Login, Member, PlayerId};

use super::transport::lock;

/// The joined members of each room: user id and display name (the localpart where none
/// is set), the bot left out.
#[derive(Default)]
pub(super) struct Present {
    rooms: Mutex<HashMap<OwnedRoomId, Vec<(OwnedUserId, String)>>>,
}

impl Present {
    /// Reads `room`'s joined members from the store when its state changed or they were
    /// never read. The bot syncs without lazy-loaded members, so the store has them all;
    /// nothing is fetched here (fetching the member list inside the sync loop made
    /// `e2e matrix_transport::encryption` fail).
    pub(super) async fn update(&self, room: &Room, state_changed: bool) {
        if !state_changed && lock(&self.rooms).contains_key(room.room_id()) {
            return;
        }
        let members = match room.members_no_sync(RoomMemberships::JOIN).await {
            Ok(members) => members,
            Err(error) => {
                tracing::debug!(room = %room.room_id(), %error, "cannot read the room's members");
                return;
            }
        };
        let own = room.own_user_id();
        let joined = members
            .iter()
            .filter(|m| m.user_id() != own)
            .map(|m| (m.user_id().to_owned(), m.name().to_owned()))
            .collect();
        lock(&self.rooms).insert(room.room_id().to_owned(), joined);
    }

    /// A member event seen before the store has it (an appservice transaction): `user`
    /// joined as `name`, or left.
    pub(super) fn member_event(
        &self,
        room: &RoomId,
        user: &UserId,
        membership: &MembershipState,
        name: Option<&str>,
    ) {
        let mut rooms = lock(&self.rooms);
        let Some(joined) = rooms.get_mut(room) else { return };
        joined.retain(|(id, _)| id != user);
        if *membership == MembershipState::Join {
            joined.push((user.to_owned(), name.unwrap_or(user.localpart()).to_owned()));
        }
    }

    /// Forgets a room the bot left.
    pub(super) fn forget(&self, room: &RoomId) {
        lock(&self.rooms).remove(room);
    }

    /// The members of `room` who answer to `name`: by full user id, display name or
    /// localpart, ignoring case (a leading `@` or trailing `:` of a typed nick aside).
    pub(super) fn named(&self, room: &str, name: &str) -> Vec<Member> {
        let rooms = lock(&self.rooms);
        let Some(joined) = RoomId::parse(room).ok().and_then(|room| rooms.get(&room)) else {
            return Vec::new();
        };
        joined
            .iter()
            .filter(|(user, shown)| answers_to(user, shown, name))
            .map(|(user, shown)| Member {
                identity: PlayerId::new(user.as_str()),
                shown: shown.clone(),
                login: Login::Known,
            })
            .collect()
    }
}

/// True when a member with id `user`, shown as `shown`, answers to the typed `name`.
fn answers_to(user: &UserId, shown: &str, name: &str) -> bool {
    let name = name.trim();
    if name.eq_ignore_ascii_case(user.as_str()) {
        return true;
    }
    let plain = name.trim_start_matches('@').trim_end_matches([':', ',', '：', '，']);
    !plain.is_empty()
        && (same(shown, name) || same(shown, plain) || plain.eq_ignore_ascii_case(user.localpart()))
}

/// Two names the same ignoring case (any script's).
fn same(a: &str, b: &str) -> bool {
    a == b || a.to_lowercase() == b.to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_member_answers_to_their_id_display_name_and_localpart() {
        let user = UserId::parse("@noah:localhost").expect("an id");
        for typed in [
            "@noah:localhost",
            "@NOAH:localhost",
            "noah",
            "Noah",
            "@noah",
            "noah:",
            "Piet Silent",
            "piet silent",
        ] {
            assert!(answers_to(&user, "Piet Silent", typed), "{typed}");
        }
        for typed in ["Piet", "Silent", "@noah:other", "noa", "", "@"] {
            assert!(!answers_to(&user, "Piet Silent", typed), "{typed}");
        }
    }
}
