//! Whether the bot can vouch for a Matrix room as one player's private chat (issue 29,
//! item 1): where what is said privately (a link code, a Duel spell) may go, and where
//! what a player says is taken as said privately. Being "a room of two" is not enough: a
//! room someone else made, that anyone may join, or whose history a later member reads,
//! gives what is said there away (the room's maker leaves, a player is alone with the
//! bot, the maker comes back and reads the player's link code).
//!
//! A room is private with player P when, by its state:
//! - it was made by the bot (the direct chat the bot opens) or by P (P's own direct
//!   chat), and by nobody else (`m.room.create`'s sender and room version 12's
//!   `additional_creators`, where Synapse puts the invitee of a trusted private chat);
//! - only an invite lets anyone in (`m.room.join_rules` `invite`: not public, knock or
//!   restricted);
//! - its history is for members only, from when they were invited or joined
//!   (`m.room.history_visibility` `invited` or `joined`), or, in a room P alone made,
//!   `shared` too (what Element's "Start DM" sets): only P or the bot can invite anyone
//!   there, and the first other member spoils it; never `world_readable`;
//! - nobody but the bot and P has ever had a membership in it (a member event of any
//!   kind, a leave or a ban included, for anyone else spoils it for good); the bot has
//!   joined it and P is joined or invited.
//!
//! This is the decision alone, over facts read from matrix-sdk's store by `room_facts`;
//! a room spoiled by a third member is also remembered there (`spoiled`).

use matrix_sdk::ruma::events::room::history_visibility::HistoryVisibility;
use matrix_sdk::ruma::events::room::join_rules::JoinRule;
use matrix_sdk::ruma::events::room::member::MembershipState;
use matrix_sdk::ruma::{OwnedUserId, UserId};

/// What a room's state says, as far as vouching for it goes.
#[derive(Clone, Debug, Default)]
pub(super) struct RoomSigns {
    /// The room's creators (the `m.room.create` sender, and room version 12's
    /// `additional_creators`); `None` when the create event is unknown.
    pub(super) creators: Option<Vec<OwnedUserId>>,
    /// `m.room.join_rules`; `None` when unknown.
    pub(super) join_rule: Option<JoinRule>,
    /// `m.room.history_visibility`; `None` when unknown (the spec's default is `shared`).
    pub(super) history: Option<HistoryVisibility>,
    /// Every member event's user and membership (joined, invited, left, banned, knocking).
    pub(super) members: Vec<(OwnedUserId, MembershipState)>,
    /// Remembered as spoiled by a third member before (`spoiled`).
    pub(super) spoiled: bool,
}

/// Why the bot cannot vouch for a room.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Doubt {
    /// A third member was seen in it before (remembered).
    Spoiled,
    /// Someone other than the bot and one player made it (or who is unknown).
    Creator,
    /// Not invite-only (or the join rule is unknown).
    JoinRule,
    /// A later member, or anyone, can read its history (or the setting is unknown).
    History,
    /// The bot has not joined it.
    BotNotIn,
    /// Nobody but the bot is or was in it.
    Alone,
    /// The player has left it (or been banned).
    PlayerGone,
    /// Someone other than the bot and the player is or was a member: spoiled for good.
    Others,
}

/// The player the room is a private chat with, or why it is not one (the first doubt
/// found; the history setting is judged once the player and the room's makers are known).
pub(super) fn vouch(bot: &UserId, signs: &RoomSigns) -> Result<OwnedUserId, Doubt> {
    if signs.spoiled {
        return Err(Doubt::Spoiled);
    }
    let creators = match signs.creators.as_deref() {
        Some(creators) if !creators.is_empty() => creators,
        _ => return Err(Doubt::Creator),
    };
    if signs.join_rule != Some(JoinRule::Invite) {
        return Err(Doubt::JoinRule);
    }
    if !signs.members.iter().any(|(user, membership)| user == bot && *membership == MembershipState::Join) {
        return Err(Doubt::BotNotIn);
    }
    let mut others = signs.members.iter().filter(|(user, _)| user != bot);
    let Some((player, membership)) = others.next() else { return Err(Doubt::Alone) };
    if others.any(|(user, _)| user != player) {
        return Err(Doubt::Others);
    }
    if creators.iter().any(|creator| creator != bot && creator != player) {
        return Err(Doubt::Creator);
    }
    let players_own = !creators.iter().any(|creator| creator == bot);
    match &signs.history {
        Some(HistoryVisibility::Invited | HistoryVisibility::Joined) => {}
        Some(HistoryVisibility::Shared) if players_own => {}
        _ => return Err(Doubt::History),
    }
    if !matches!(membership, MembershipState::Join | MembershipState::Invite) {
        return Err(Doubt::PlayerGone);
    }
    Ok(player.clone())
}

#[cfg(test)]
mod tests {
    use matrix_sdk::ruma::{owned_user_id, user_id};

    use super::*;

    fn bot() -> &'static UserId {
        user_id!("@bot:hs")
    }

    /// The direct chat the bot opened with victim, who has joined.
    fn bots_dm() -> RoomSigns {
        RoomSigns {
            creators: Some(vec![owned_user_id!("@bot:hs")]),
            join_rule: Some(JoinRule::Invite),
            history: Some(HistoryVisibility::Invited),
            members: vec![
                (owned_user_id!("@bot:hs"), MembershipState::Join),
                (owned_user_id!("@victim:hs"), MembershipState::Join),
            ],
            spoiled: false,
        }
    }

    #[test]
    fn the_bots_own_direct_chat_and_the_players_own_are_private_with_that_player() {
        let victim = owned_user_id!("@victim:hs");
        assert_eq!(vouch(bot(), &bots_dm()), Ok(victim.clone()));
        let invited_only = RoomSigns {
            members: vec![
                (owned_user_id!("@bot:hs"), MembershipState::Join),
                (victim.clone(), MembershipState::Invite),
            ],
            ..bots_dm()
        };
        assert_eq!(vouch(bot(), &invited_only), Ok(victim.clone()), "the invite is not accepted yet");
        let theirs = RoomSigns {
            creators: Some(vec![victim.clone()]),
            history: Some(HistoryVisibility::Joined),
            ..bots_dm()
        };
        assert_eq!(vouch(bot(), &theirs), Ok(victim.clone()));
        // Room version 12: the invitee of a trusted private chat is a creator too.
        let both = Some(vec![owned_user_id!("@bot:hs"), victim.clone()]);
        assert_eq!(vouch(bot(), &RoomSigns { creators: both, ..bots_dm() }), Ok(victim));
    }

    /// The trap: mallory's public room, the victim joined, mallory left.
    #[test]
    fn mallorys_public_room_she_left_is_not_private() {
        let trap = RoomSigns {
            creators: Some(vec![owned_user_id!("@mallory:hs")]),
            join_rule: Some(JoinRule::Public),
            history: Some(HistoryVisibility::Shared),
            members: vec![
                (owned_user_id!("@mallory:hs"), MembershipState::Leave),
                (owned_user_id!("@bot:hs"), MembershipState::Join),
                (owned_user_id!("@victim:hs"), MembershipState::Join),
            ],
            spoiled: false,
        };
        assert_eq!(vouch(bot(), &trap), Err(Doubt::JoinRule));
        // Even made invite-only and members-only, her membership spoils it.
        let tidied = RoomSigns {
            join_rule: Some(JoinRule::Invite),
            history: Some(HistoryVisibility::Joined),
            ..trap.clone()
        };
        assert_eq!(vouch(bot(), &tidied), Err(Doubt::Others));
        // And a room she made that she was never in (if that could be) is not the victim's.
        let made_by_her = RoomSigns { creators: Some(vec![owned_user_id!("@mallory:hs")]), ..bots_dm() };
        assert_eq!(vouch(bot(), &made_by_her), Err(Doubt::Creator));
    }

    #[test]
    fn a_third_members_event_of_any_kind_spoils_the_room() {
        for membership in [
            MembershipState::Join,
            MembershipState::Invite,
            MembershipState::Leave,
            MembershipState::Ban,
            MembershipState::Knock,
        ] {
            let mut signs = bots_dm();
            signs.members.push((owned_user_id!("@carol:hs"), membership.clone()));
            assert_eq!(vouch(bot(), &signs), Err(Doubt::Others), "{membership:?}");
        }
        assert_eq!(vouch(bot(), &RoomSigns { spoiled: true, ..bots_dm() }), Err(Doubt::Spoiled));
    }

    #[test]
    fn a_room_anyone_may_join_or_read_is_not_private() {
        for rule in [JoinRule::Public, JoinRule::Knock, JoinRule::Private] {
            let signs = RoomSigns { join_rule: Some(rule.clone()), ..bots_dm() };
            assert_eq!(vouch(bot(), &signs), Err(Doubt::JoinRule), "{rule:?}");
        }
        assert_eq!(vouch(bot(), &RoomSigns { join_rule: None, ..bots_dm() }), Err(Doubt::JoinRule));
        for history in [Some(HistoryVisibility::Shared), Some(HistoryVisibility::WorldReadable), None] {
            let signs = RoomSigns { history: history.clone(), ..bots_dm() };
            assert_eq!(vouch(bot(), &signs), Err(Doubt::History), "{history:?}");
        }
    }

    #[test]
    fn the_players_own_dm_may_share_its_history_with_members_but_never_with_the_world() {
        let victim = owned_user_id!("@victim:hs");
        let elements = RoomSigns {
            creators: Some(vec![victim.clone()]),
            history: Some(HistoryVisibility::Shared),
            ..bots_dm()
        };
        assert_eq!(vouch(bot(), &elements), Ok(victim.clone()), "Element's Start DM");
        let world = RoomSigns { history: Some(HistoryVisibility::WorldReadable), ..elements.clone() };
        assert_eq!(vouch(bot(), &world), Err(Doubt::History));
        let shared_with_bot = RoomSigns { creators: Some(vec![bot().to_owned(), victim]), ..elements };
        assert_eq!(vouch(bot(), &shared_with_bot), Err(Doubt::History), "the bot makes its own members-only");
    }

    #[test]
    fn unknown_creators_or_a_creator_besides_the_two_are_not_vouched_for() {
        assert_eq!(vouch(bot(), &RoomSigns { creators: None, ..bots_dm() }), Err(Doubt::Creator));
        let two = Some(vec![owned_user_id!("@victim:hs"), owned_user_id!("@mallory:hs")]);
        assert_eq!(vouch(bot(), &RoomSigns { creators: two, ..bots_dm() }), Err(Doubt::Creator));
        assert_eq!(vouch(bot(), &RoomSigns { creators: Some(vec![]), ..bots_dm() }), Err(Doubt::Creator));
    }

    #[test]
    fn the_bot_must_be_in_it_and_the_player_still_there() {
        let mut left = bots_dm();
        left.members[1].1 = MembershipState::Leave;
        assert_eq!(vouch(bot(), &left), Err(Doubt::PlayerGone));
        let mut bot_invited = bots_dm();
        bot_invited.members[0].1 = MembershipState::Invite;
        assert_eq!(vouch(bot(), &bot_invited), Err(Doubt::BotNotIn));
        let mut alone = bots_dm();
        alone.members.truncate(1);
        assert_eq!(vouch(bot(), &alone), Err(Doubt::Alone));
    }
}
