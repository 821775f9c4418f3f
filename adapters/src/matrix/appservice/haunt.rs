//! The ghosts at work (issue 17, item 3): each IRC member of a bridged channel is a
//! ghost user in the bridged Matrix room, and each line they say is sent as their ghost.
//!
//! A ghost is made the first time it is needed (its IRC user is found in the channel,
//! joins, speaks, or is named at the start of a line): its user id comes from the
//! [`Book`] (made from the template, kept across restarts), it is registered the
//! appservice way, its display name set from the template, invited by the bot and joined
//! to the room. What is done is remembered for the run (registered, named, joined), so a
//! ghost already in the room costs nothing more; nobody logs in: every request is the
//! appservice's `as_token` asserting the ghost's id ([`As`]). Setting ghosts up is done
//! one at a time, so one ghost is never made twice at once.
//!
//! Membership follows IRC: a join joins, a part or a kick leaves, a quit leaves (a
//! netsplit's after [`netsplit_hold`](super::AppserviceOptions::netsplit_hold) and up to
//! half of it more, and not at all for a member who rejoins meanwhile:
//! [`split`](super::split)), a nick change
//! sets the same ghost's display name from the new nick. A ghost's name carries the
//! marks of its latest relayed line (`alice?/libera (IRC)`: not logged in where the
//! network has accounts, and from one of two IRC networks in a bridge; a network once
//! named is named in all its ghosts' names). The first complete member list
//! after the bot joins the channel (at every start) is a roll call
//! ([`roll_call`](super::roll_call)): the homeserver is asked who is in the room, and
//! the network's ghosts whose IRC users are gone (they left while the daemon was down, or
//! their netsplit's hold was cut by a restart) leave.
//!
//! A line is sent as `m.text` or `m.emote` with its formatting, without the head that
//! names its speaker on other networks (the ghost is the speaker), and `nick: ` at its
//! start becomes a pill of the Matrix member or ghost of that name. In an encrypted room
//! the bot sends it as in bot mode (a ghost has no device to encrypt with).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use matrix_sdk::ruma::api::client::membership::{join_room_by_id, joined_members, leave_room};
use matrix_sdk::ruma::api::client::message::send_message_event;
use matrix_sdk::ruma::api::client::profile::set_profile_field;
use matrix_sdk::ruma::events::room::member::MembershipState;
use matrix_sdk::ruma::profile::ProfileFieldValue;
use matrix_sdk::ruma::{OwnedRoomId, OwnedUserId, UserId};
use matrix_sdk::{Client, Room, RoomMemberships};
use spellbridge_core::text::{Segment, Style};
use spellbridge_core::{MemberChange, Message, PlayerId, Presence, RichText, Speaker, TransportError};

use super::AppserviceOptions;
use super::asserted::As;
use super::book::Book;
use super::login;
use super::roll_call;
use super::split::{Held, held_for, is_netsplit};
use crate::matrix::transport::{Shared, lock};

/// A ghost in a room: the room's id and the ghost's user id.
type InRoom = (OwnedRoomId, String);

/// The ghosts of one Matrix network in appservice mode.
pub(in crate::matrix) struct Haunt {
    options: AppserviceOptions,
    book: Book,
    /// The client whose requests carry the `as_token`, made once.
    client: tokio::sync::OnceCell<Client>,
    /// Ghosts registered (and named) in this run, with the display name set.
    named: Mutex<std::collections::HashMap<String, String>>,
    /// Ghosts known to be in each room.
    joined: Mutex<HashSet<InRoom>>,
    /// Ghosts made to leave a room in this run (the bot's store may not know it yet).
    gone: Mutex<HashSet<InRoom>>,
    /// Leaves held for a netsplit.
    held: Arc<Mutex<Held<InRoom>>>,
    /// One ghost set up at a time.
    setting_up: tokio::sync::Mutex<()>,
    /// The nicks (network, lowercased nick) whose latest relayed line was a guest's (not
    /// logged in where the network has accounts): their ghosts' names are marked `?`.
    guests: Mutex<HashSet<(String, String)>>,
    /// The networks whose speakers' lines name their network (a bridge joins another IRC
    /// network): all their ghosts' names do too (`alice/libera (IRC)`).
    named_networks: Mutex<HashSet<String>>,
}

impl Haunt {
    /// The ghosts of the network whose appservice options are `options`, with which
    /// ghost each nick is kept in `book` (`None`: in memory).
    pub(in crate::matrix) fn new(options: AppserviceOptions, book: Option<std::path::PathBuf>) -> Self {
        Haunt {
            options,
            book: Book::new(book),
            client: tokio::sync::OnceCell::new(),
            named: Mutex::new(std::collections::HashMap::new()),
            joined: Mutex::new(HashSet::new()),
            gone: Mutex::new(HashSet::new()),
            held: Arc::new(Mutex::new(Held::default())),
            setting_up: tokio::sync::Mutex::new(()),
            guests: Mutex::new(HashSet::new()),
            named_networks: Mutex::new(HashSet::new()),
        }
    }

    /// The display name `nick`'s ghost (of IRC network `network`) has now: the template's,
    /// marked as its latest relayed line was (issue 29, item 3).
    fn ghost_name(&self, network: &str, nick: &str) -> String {
        let guest = lock(&self.guests).contains(&(network.to_owned(), nick.to_lowercase()));
        let named = lock(&self.named_networks).contains(network);
        self.options.ghosts.marked_name(network, nick, guest, named)
    }

    /// Notes the marks of a relayed line's speaker, for their ghost's name.
    fn note_marks(&self, speaker: &Speaker) {
        let key = (speaker.network.to_string(), speaker.nick.to_lowercase());
        if speaker.guest {
            lock(&self.guests).insert(key);
        } else {
            lock(&self.guests).remove(&key);
        }
        if speaker.network_named {
            lock(&self.named_networks).insert(speaker.network.to_string());
        }
    }

    /// The appservice's client (its requests carry the `as_token`).
    async fn client(&self, shared: &Shared) -> Result<Client, TransportError> {
        let sender = UserId::parse(&shared.options.user_id)
            .and_then(|bot| login::sender(&bot, &self.options.sender_localpart))
            .map_err(|e| refused(shared, format!("the appservice's sender user id: {e}")))?;
        self.client
            .get_or_try_init(|| {
                login::appservice_client(&shared.options.homeserver, &sender, &self.options.as_token)
            })
            .await
            .cloned()
            .map_err(|e| disconnected(shared, format!("cannot reach the homeserver for the ghosts: {e}")))
    }

    /// The ghost of `nick` (on IRC network `network`) in `room`, set up as needed
    /// (registered, named, invited and joined).
    pub(in crate::matrix) async fn ensure(
        &self,
        shared: &Shared,
        room: &Room,
        network: &str,
        nick: &str,
    ) -> Result<OwnedUserId, TransportError> {
        let found = self.book.ghost(&self.options.ghosts, network, nick);
        let ghost = UserId::parse(&found.user_id)
            .map_err(|e| refused(shared, format!("`{}` is not a user id: {e}", found.user_id)))?;
        let key = (room.room_id().to_owned(), found.user_id.clone());
        if lock(&self.joined).contains(&key) {
            return Ok(ghost);
        }
        let _one_at_a_time = self.setting_up.lock().await;
        if lock(&self.joined).contains(&key) {
            return Ok(ghost);
        }
        let client = self.client(shared).await?;
        let name = self.ghost_name(network, nick);
        if !lock(&self.named).contains_key(ghost.as_str()) {
            let register =
                || async { login::register_user(&client, ghost.localpart()).await.map_err(Into::into) };
            shared.with_retry("register a ghost", register).await?;
            if found.new {
                tracing::info!(network = %shared.options.network, ghost = %ghost, nick, "made a ghost");
            }
        }
        let member = room.get_member_no_sync(&ghost).await.ok().flatten();
        let name_there = member.as_ref().and_then(|m| m.display_name().map(str::to_owned));
        if lock(&self.named).get(ghost.as_str()) != Some(&name)
            && name_there.as_deref() != Some(name.as_str())
        {
            self.set_name(shared, &client, &ghost, &name).await?;
        }
        lock(&self.named).insert(ghost.to_string(), name);
        let joined = !lock(&self.gone).contains(&key)
            && member.is_some_and(|m| *m.membership() == MembershipState::Join);
        if !joined {
            // The bot invites (a room need not be public); an invite to someone there
            // already is refused, which is fine: the join says the rest.
            if let Err(error) = room.invite_user_by_id(&ghost).await {
                tracing::debug!(room = %room.room_id(), ghost = %ghost, %error, "the bot's invite of a ghost was refused");
            }
            let join = join_room_by_id::v3::Request::new(room.room_id().to_owned());
            let send =
                || async { client.send(As::new(ghost.clone(), join.clone())).await.map_err(Into::into) };
            shared.with_retry("join a ghost to the room", send).await?;
            tracing::debug!(room = %room.room_id(), ghost = %ghost, "a ghost joined");
        }
        lock(&self.gone).remove(&key);
        lock(&self.joined).insert(key);
        Ok(ghost)
    }

    /// Sets `ghost`'s display name.
    async fn set_name(
        &self,
        shared: &Shared,
        client: &Client,
        ghost: &UserId,
        name: &str,
    ) -> Result<(), TransportError> {
        let request = set_profile_field::v3::Request::new(
            ghost.to_owned(),
            ProfileFieldValue::DisplayName(name.to_owned()),
        );
        let send =
            || async { client.send(As::new(ghost.to_owned(), request.clone())).await.map_err(Into::into) };
        shared.with_retry("set a ghost's display name", send).await?;
        lock(&self.named).insert(ghost.to_string(), name.to_owned());
        Ok(())
    }

    /// Shows an IRC member's change in `room` (see the module doc).
    pub(in crate::matrix) async fn mirror(
        self: &Arc<Self>,
        shared: &Arc<Shared>,
        room: &Room,
        change: &MemberChange,
    ) -> Result<(), TransportError> {
        let network = change.network.as_str();
        match &change.presence {
            Presence::Joined => {
                if let Some(ghost) = self.book.known(network, &change.nick) {
                    let back = lock(&self.held).release(&(room.room_id().to_owned(), ghost));
                    if back {
                        tracing::debug!(room = %room.room_id(), nick = %change.nick, "back from a netsplit before leaving");
                    }
                }
                self.ensure(shared, room, network, &change.nick).await.map(drop)
            }
            Presence::Left => self.leave(shared, room.room_id(), network, &change.nick).await,
            Presence::Quit { reason } if is_netsplit(reason) => {
                let Some(ghost) = self.book.known(network, &change.nick) else { return Ok(()) };
                let key = (room.room_id().to_owned(), ghost);
                let number = lock(&self.held).hold(key.clone());
                let (haunt, shared, nick) = (self.clone(), shared.clone(), change.nick.clone());
                let (hold, room_id) =
                    (held_for(self.options.netsplit_hold, &key.1), room.room_id().to_owned());
                tracing::debug!(room = %room_id, nick = %nick, hold_ms = hold.as_millis() as u64, "a netsplit's quit: holding the leave");
                tokio::spawn(async move {
                    if !shared.pause(hold).await || !lock(&haunt.held).fire(&key, number) {
                        return;
                    }
                    if let Err(error) = haunt.leave_as(&shared, &room_id, &key.1).await {
                        tracing::warn!(room = %room_id, nick = %nick, %error, "a ghost could not leave after a netsplit");
                    }
                });
                Ok(())
            }
            Presence::Quit { .. } => self.leave(shared, room.room_id(), network, &change.nick).await,
            Presence::Renamed { to } => match self.book.renamed(network, &change.nick, to) {
                Some(ghost) => {
                    let ghost = UserId::parse(&ghost).map_err(|e| refused(shared, e.to_string()))?;
                    let client = self.client(shared).await?;
                    let was_guest =
                        lock(&self.guests).remove(&(network.to_owned(), change.nick.to_lowercase()));
                    if was_guest {
                        lock(&self.guests).insert((network.to_owned(), to.to_lowercase()));
                    }
                    let name = self.ghost_name(network, to);
                    if lock(&self.named).get(ghost.as_str()) != Some(&name) {
                        self.set_name(shared, &client, &ghost, &name).await?;
                        tracing::debug!(ghost = %ghost, from = %change.nick, to = %to, "a ghost renamed");
                    }
                    self.ensure(shared, room, network, to).await.map(drop)
                }
                None => self.ensure(shared, room, network, to).await.map(drop),
            },
            Presence::Listed { nicks } => self.roll_call(shared, room, network, nicks).await,
        }
    }

    /// The roll call of `room` against `nicks`, the complete member list of its channel
    /// on `network` (see [`roll_call`]): the homeserver says who is in the room; ghosts
    /// of the network not on the list leave, listed nicks whose ghosts are not in the
    /// room join, and the held leaves of those listed are dropped (they are back). A ghost
    /// the homeserver refuses is logged and the call goes on; a homeserver out of reach
    /// fails it (the mirror tries it again, and it starts over).
    async fn roll_call(
        &self,
        shared: &Shared,
        room: &Room,
        network: &str,
        nicks: &[String],
    ) -> Result<(), TransportError> {
        let room_id = room.room_id().to_owned();
        let client = self.client(shared).await?;
        let request = joined_members::v3::Request::new(room_id.clone());
        let ask = || async { client.send(request.clone()).await.map_err(Into::into) };
        let joined = shared.with_retry("ask the homeserver who is in the room", ask).await?.joined;
        let joined: Vec<String> = joined.into_keys().map(|user| user.to_string()).collect();
        let bot = shared.options.user_id.as_str();
        let called = roll_call::call(&self.book, &self.options.ghosts, network, bot, nicks, &joined);
        for nick in nicks {
            if let Some(ghost) = self.book.known(network, nick) {
                lock(&self.held).release(&(room_id.clone(), ghost));
            }
        }
        let mut left = 0;
        for ghost in &called.leave {
            lock(&self.held).release(&(room_id.clone(), ghost.clone()));
            match self.leave_as(shared, &room_id, ghost).await {
                Ok(()) => left += 1,
                Err(error @ TransportError::Disconnected { .. }) => return Err(error),
                Err(error) => {
                    tracing::warn!(room = %room_id, ghost = %ghost, %error, "a ghost whose IRC user is gone could not leave")
                }
            }
        }
        let mut came = 0;
        for nick in &called.join {
            if let Some(ghost) = self.book.known(network, nick) {
                // Not in the room, whatever was thought: joined again.
                let key = (room_id.clone(), ghost);
                lock(&self.joined).remove(&key);
                lock(&self.gone).insert(key);
            }
            match self.ensure(shared, room, network, nick).await {
                Ok(_) => came += 1,
                Err(error @ TransportError::Disconnected { .. }) => return Err(error),
                Err(error) => {
                    tracing::warn!(room = %room_id, nick = %nick, %error, "a ghost of someone in the channel could not join")
                }
            }
        }
        tracing::info!(
            network = %shared.options.network,
            room = %room_id,
            irc_network = network,
            listed = nicks.len(),
            left,
            joined = came,
            "roll call: the room's ghosts follow the channel's member list"
        );
        Ok(())
    }

    /// `nick`'s ghost leaves `room`, if it has one.
    async fn leave(
        &self,
        shared: &Shared,
        room: &matrix_sdk::ruma::RoomId,
        network: &str,
        nick: &str,
    ) -> Result<(), TransportError> {
        match self.book.known(network, nick) {
            Some(ghost) => {
                lock(&self.held).release(&(room.to_owned(), ghost.clone()));
                self.leave_as(shared, room, &ghost).await
            }
            None => Ok(()),
        }
    }

    /// `ghost` leaves `room`.
    async fn leave_as(
        &self,
        shared: &Shared,
        room: &matrix_sdk::ruma::RoomId,
        ghost: &str,
    ) -> Result<(), TransportError> {
        let user = UserId::parse(ghost).map_err(|e| refused(shared, e.to_string()))?;
        let key = (room.to_owned(), ghost.to_owned());
        lock(&self.joined).remove(&key);
        lock(&self.gone).insert(key);
        let client = self.client(shared).await?;
        let request = leave_room::v3::Request::new(room.to_owned());
        let send = || async { client.send(As::new(user.clone(), request.clone())).await.map_err(Into::into) };
        shared.with_retry("have a ghost leave the room", send).await?;
        tracing::debug!(room = %room, ghost, "a ghost left");
        Ok(())
    }

    /// Sends `message` to `room` as `speaker`'s ghost (see the module doc); returns the
    /// event id, which the daemon maps back to the line's speaker (replies, reactions).
    pub(in crate::matrix) async fn send(
        &self,
        shared: &Shared,
        room: &Room,
        message: &Message,
        speaker: &Speaker,
    ) -> Result<String, TransportError> {
        let network = speaker.network.as_str();
        self.note_marks(speaker);
        let ghost = self.ensure(shared, room, network, &speaker.nick).await?;
        // A ghost already in the room takes the marks of this line (logged in or out).
        let name = self.ghost_name(network, &speaker.nick);
        if lock(&self.named).get(ghost.as_str()) != Some(&name) {
            let client = self.client(shared).await?;
            self.set_name(shared, &client, &ghost, &name).await?;
        }
        let text = self.pilled(shared, room, network, message.said()).await;
        let said = Message { text, speaker: None, ..message.clone() };
        let content = crate::matrix::transport::message_content(room, &said, &shared.facts).await;
        let request = send_message_event::v3::Request::new(
            room.room_id().to_owned(),
            crate::matrix::transport::transaction_id(message),
            &content,
        )
        .map_err(|e| refused(shared, format!("cannot write the message: {e}")))?;
        let client = self.client(shared).await?;
        let send =
            || async { client.send(As::new(ghost.clone(), request.clone())).await.map_err(Into::into) };
        let sent = shared.with_retry("send a message as a ghost", send).await?;
        Ok(sent.event_id.to_string())
    }

    /// `text` with a `nick: ` that starts it made a mention of the Matrix member (by
    /// display name or localpart) or the ghost (by IRC nick, on the speaker's network)
    /// of that name; unchanged when nobody is called so.
    async fn pilled(&self, shared: &Shared, room: &Room, network: &str, text: RichText) -> RichText {
        let Some((name, rest)) = addressed(&text) else { return text };
        let Some(user) = self.named_user(shared, room, network, name).await else { return text };
        let mut pilled = RichText::new().mention(&PlayerId::new(user.as_str())).text(format!(":{rest}"));
        for segment in &text.segments()[1..] {
            pilled = pilled.push(segment.clone());
        }
        pilled
    }

    /// Who `name` is in `room`: a Matrix member of that display name or localpart (not a
    /// ghost), else the ghost of that IRC nick (set up in the room if it is not yet).
    async fn named_user(
        &self,
        shared: &Shared,
        room: &Room,
        network: &str,
        name: &str,
    ) -> Option<OwnedUserId> {
        if !room.are_members_synced()
            && let Err(error) = room.sync_members().await
        {
            tracing::debug!(room = %room.room_id(), %error, "cannot fetch the room's members; looking among those known");
        }
        let members = room.members_no_sync(RoomMemberships::JOIN).await.unwrap_or_default();
        let is_ghost = |user: &UserId| self.options.ghosts.is_ghost(user.as_str());
        let member = members.iter().find(|m| {
            !is_ghost(m.user_id())
                && (m.display_name().is_some_and(|d| d.eq_ignore_ascii_case(name))
                    || m.user_id().localpart().eq_ignore_ascii_case(name))
        });
        if let Some(member) = member {
            return Some(member.user_id().to_owned());
        }
        self.book.known(network, name)?;
        self.ensure(shared, room, network, name).await.ok()
    }
}

/// The name a line starts by addressing (`nick: …`, or a bare `nick:`), and what
/// follows the colon; `None` when it does not start so (in plain text).
fn addressed(text: &RichText) -> Option<(&str, &str)> {
    let Some(Segment::Text { text: first, style: Style::Plain }) = text.segments().first() else {
        return None;
    };
    let (name, rest) = first.split_once(':')?;
    let word = !name.is_empty() && !name.contains(char::is_whitespace);
    (word && (rest.is_empty() || rest.starts_with(' '))).then_some((name, rest))
}

fn refused(shared: &Shared, reason: impl Into<String>) -> TransportError {
    TransportError::Refused { network: shared.options.network.clone(), reason: reason.into() }
}

fn disconnected(shared: &Shared, reason: impl Into<String>) -> TransportError {
    TransportError::Disconnected { network: shared.options.network.clone(), reason: reason.into() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_addresses_a_name_only_with_a_word_and_a_colon_at_its_start() {
        let plain = |t: &str| RichText::new().text(t);
        assert_eq!(addressed(&plain("alice: hi there")), Some(("alice", " hi there")));
        assert_eq!(addressed(&plain("Bo[b]:")), Some(("Bo[b]", "")));
        assert_eq!(addressed(&RichText::new().text("alice: ").bold("hi")), Some(("alice", " ")));
        for not in ["hi alice: there", "http://example.org", ": hi", "no colon", "time:12"] {
            assert_eq!(addressed(&plain(not)), None, "{not}");
        }
        assert_eq!(addressed(&RichText::new().bold("alice: hi")), None, "bold is not plain");
    }
}
