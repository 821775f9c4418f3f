//! The `GameTransport` trait: what a chat network must offer the daemon.
//!
//! IRC, Matrix and the in-memory console transport implement it; one conformance suite
//! tests them all. The trait lives in the core so that the router can be written against
//! it without knowing any network, but nothing here performs I/O itself.

use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::event::Whisper;
use crate::ids::{NetworkId, PlayerId, RoomId};
use crate::plugin::Form;
use crate::text::RichText;

/// What an inbound event is: a message, or something done to an earlier one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Said {
    /// An ordinary message.
    #[default]
    Message,
    /// An action in the third person (IRC `/me`, a Matrix `m.emote`).
    Emote,
    /// A correction of an earlier message; the inbound's text is the new text.
    Edit {
        /// The network's id of the message corrected.
        original: String,
    },
    /// A reaction (an emoji) to an earlier message.
    Reaction {
        /// The network's id of the message reacted to.
        target: String,
        /// The reaction itself.
        key: String,
    },
    /// An earlier message was deleted.
    Redaction {
        /// The network's id of the message deleted.
        target: String,
    },
}

/// A message that arrived from a network.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inbound {
    /// The network it came from.
    pub network: NetworkId,
    /// The room it was said in; for a private message, the sender's direct room.
    pub room: RoomId,
    /// Who said it, as that network identifies them.
    pub sender: PlayerId,
    /// The name to show for the sender.
    pub display_name: String,
    /// The text, with network formatting already reduced to plain text.
    pub text: String,
    /// The same text with its formatting (bold, italic, code, colours, mentions), for
    /// relaying to other networks.
    pub rich: RichText,
    /// What kind of event it is.
    pub said: Said,
    /// The network's id of the message this one answers, if it is a reply.
    pub reply_to: Option<String>,
    /// The thread it was said in (a Matrix thread's root event), if any.
    pub thread: Option<String>,
    /// True when it was sent privately to the bot.
    pub private: bool,
    /// The network's id for this message, used to recognise redeliveries.
    pub message_id: Option<String>,
    /// True when the sender operates the room (an IRC channel operator, a Matrix power
    /// level of 50 or more).
    pub operator: bool,
    /// Who the sender was before changing their name on the network since their last
    /// message (an IRC nick change, for a sender without an account), so that limits
    /// counted under the old name carry over.
    pub formerly: Option<PlayerId>,
    /// True when the network vouches for `sender` (a Matrix user id, a services
    /// account); false for a bare IRC nick, which anyone can take once it is free.
    /// Game-master role needs it.
    pub verified: bool,
    /// True when the network has accounts (services) and the sender is not logged in to
    /// one: a bare nick that anyone can take once it is free. Relayed lines mark such a
    /// speaker (`<alice?>`, [`crate::shown::marked`]) so they cannot pass for the
    /// account's owner.
    pub guest: bool,
}

impl Inbound {
    /// An ordinary message `text` from `sender` in `room`, shown under the sender's id;
    /// set the other fields with struct update syntax.
    pub fn new(network: NetworkId, room: RoomId, sender: PlayerId, text: impl Into<String>) -> Self {
        let text = text.into();
        Self {
            network,
            room,
            display_name: sender.as_str().to_owned(),
            sender,
            rich: RichText::new().text(text.clone()),
            text,
            said: Said::Message,
            reply_to: None,
            thread: None,
            private: false,
            message_id: None,
            operator: false,
            formerly: None,
            verified: true,
            guest: false,
        }
    }
}

/// How an outbound message is voiced.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Voice {
    /// Said normally.
    #[default]
    Say,
    /// Acted in the third person (IRC `/me`, a Matrix `m.emote`).
    Act,
}

/// What an outbound message says and how.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// The text.
    pub text: RichText,
    /// Said or acted.
    #[serde(default)]
    pub voice: Voice,
    /// The thread to answer in (a Matrix thread's root event); networks without threads
    /// ignore it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread: Option<String>,
    /// Relayed chat: when several such lines to one room queue up, the daemon may send
    /// them as one message of several lines (a Matrix homeserver takes far fewer events
    /// per second than an IRC channel carries lines).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub chat: bool,
    /// Game output: what one action of one table says to one place shares a batch (a
    /// Duel round's steps, settlement and next round): a network where a message of
    /// several lines reads as one (Matrix) sends a batch as one message; others (IRC,
    /// where each line is its own anyway) line by line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<String>,
    /// Game output that goes on a story told over several actions (a Duel round revealed
    /// step by step, a Thaum phase; the key names the table and the part): a network that
    /// can edit a message (Matrix) edits the story's first message in that room so it
    /// holds every part so far, rather than sending one more; others send each part as
    /// it comes. `None`: a message of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub story: Option<String>,
    /// A picture to show (a table's board), the text being its fallback; only sent to
    /// networks whose transport [shows pictures](GameTransport::shows_pictures). Never
    /// kept in the outbox: a picture lost in a restart is drawn again at the next move.
    #[serde(skip)]
    pub picture: Option<Picture>,
    /// A relayed line's speaker and words ([`Relayed`]): a network that gives the line an
    /// id (a Matrix event) lets the daemon map that id back to them, so a reply or a
    /// reaction to the line names its speaker, not the bot. `None` for the bot's own words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relayed: Option<Relayed>,
    /// The network's id of the message this one answers (sent as a Matrix reply,
    /// `m.in_reply_to`); networks without replies ignore it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to: Option<String>,
    /// Relayed chat: who said it on the network it came from. A network that can show
    /// another network's people as themselves (a Matrix appservice's ghosts) sends the
    /// line as its speaker, without the head that names them; others ignore it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speaker: Option<Speaker>,
    /// The key of the outbox rows this message sends (set by the daemon's courier, the
    /// same on every daemon that sends them): a network that takes an idempotency key
    /// (a Matrix transaction id) sends it with it, so a standby that takes over and sends
    /// the rows its dead leader had sent but not marked sent makes no second message.
    /// `None`: nothing to repeat (a reply not kept in the outbox).
    #[serde(skip)]
    pub delivery: Option<String>,
}

/// Who said a relayed line, and how it starts (see [`Message::relayed`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Relayed {
    /// The speaker's name, as the relayed line shows it.
    pub name: String,
    /// The start of what they said, plain (enough to quote in a reaction's excerpt).
    pub text: String,
}

/// What sending a message brought to light ([`GameTransport::send_noted`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sent {
    /// The network's id for the message sent (a Matrix event id), where it gives one.
    pub id: Option<String>,
    /// True when a private chat had to be opened for it: the player had none with the bot
    /// (Matrix: a direct room was created and they were invited to it).
    pub opened_private: bool,
    /// Where that private chat is, for the player to find it: a link to it (Matrix: a
    /// `matrix.to` link to the direct room), where the network has one.
    pub private_link: Option<String>,
}

/// Who said a relayed line, and how much of the line's text names them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Speaker {
    /// The network the line was said on.
    pub network: NetworkId,
    /// The speaker's name there (an IRC nick).
    pub nick: String,
    /// How many bytes at the start of the text name the speaker (`<bob> `, or `bob ` for
    /// an acted line); 0 when the text has no such head.
    pub head: usize,
    /// The speaker is not logged in where the network has accounts ([`Inbound::guest`]):
    /// a ghost shows them marked as the head does ([`crate::shown::marked`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub guest: bool,
    /// The speaker's network is named after their name (`alice/libera`): the bridge joins
    /// another network where the same name is someone else ([`crate::shown::marked`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub network_named: bool,
}

impl Speaker {
    /// The speaker's nick with the marks the relay gives it (`alice?/libera`).
    pub fn marked(&self) -> String {
        crate::shown::marked(&self.nick, self.guest, self.network_named.then_some(self.network.as_str()))
    }
}

impl Message {
    /// The text without the speaker's head (the text itself when there is no speaker).
    pub fn said(&self) -> RichText {
        match &self.speaker {
            Some(speaker) => without_head(&self.text, speaker.head),
            None => self.text.clone(),
        }
    }
}

/// `text` without its first `head` bytes, where they are the plain text that starts it
/// (as a relayed line's head is); else `text` unchanged.
fn without_head(text: &RichText, head: usize) -> RichText {
    use crate::text::{Segment, Style};
    let mut segments = text.segments().iter();
    match segments.next() {
        Some(Segment::Text { text: first, style: Style::Plain })
            if head > 0 && first.len() >= head && first.is_char_boundary(head) =>
        {
            let rest = &first[head..];
            let start = RichText::new().text(rest);
            segments.fold(start, |rich, segment| rich.push(segment.clone()))
        }
        _ => text.clone(),
    }
}

/// A change of who is in a room on a network that has members to show elsewhere (IRC:
/// JOIN, PART, KICK, QUIT, NICK, and the member list the bot finds on joining, each
/// member and then the whole list). A Matrix appservice shows them as its ghosts
/// joining, leaving and changing names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberChange {
    /// The network the member is on.
    pub network: NetworkId,
    /// The room (channel).
    pub room: RoomId,
    /// The member's name there (an IRC nick; before the change for a rename; empty for
    /// a [`Presence::Listed`]).
    pub nick: String,
    /// What happened.
    pub presence: Presence,
}

/// Someone in a room now, as the network's transport knows them without asking the
/// network, found by a name typed in a command ([`GameTransport::members_named`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// Who the network says they are: an IRC services account (or nick, where players
    /// are not their accounts), a Matrix user id.
    pub identity: PlayerId,
    /// The name they are shown under there (an IRC nick, a Matrix display name).
    pub shown: String,
    /// Whether they can play as `identity` (where players must be logged in to services).
    pub login: Login,
}

/// Whether a [`Member`] can be named as a player.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Login {
    /// Yes: their identity is known (an account, a Matrix id, or a nick where nicks play).
    Known,
    /// No: the network requires a services account and they are not logged in to one.
    LoggedOut,
    /// Not yet: the network requires an account and theirs is not known yet; the
    /// transport has asked (IRC: WHOX), so asking again in a moment will know.
    Asking,
}

/// What a [`MemberChange`] is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Presence {
    /// In the room (joined, or found there).
    Joined,
    /// Left the room (parted, or kicked).
    Left,
    /// Left the network, saying `reason` (a netsplit's reason names two servers).
    Quit {
        /// The quit message as the server relayed it.
        reason: String,
    },
    /// Now called `to`.
    Renamed {
        /// The new name.
        to: String,
    },
    /// The room's whole member list, complete (IRC: the end of the NAMES reply the bot
    /// gets on joining): members shown elsewhere whose names are not in it are gone (they
    /// left while the bot was away, or their netsplit's hold was cut by a restart).
    Listed {
        /// Everyone in the room but the bot, by the names they go by there.
        nicks: Vec<String>,
    },
}

/// A PNG picture sent with a message, such as a table's board.
#[derive(Clone, PartialEq, Eq)]
pub struct Picture {
    /// The PNG file.
    pub png: Arc<[u8]>,
    /// Its width in pixels.
    pub width: u32,
    /// Its height in pixels.
    pub height: u32,
    /// What it shows (`table 7`): a network that can takes the previous picture of the
    /// same thing in the room away, so the room keeps one.
    pub replaces: String,
}

impl std::fmt::Debug for Picture {
    /// The size and what it shows, not the bytes.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Picture")
            .field("bytes", &self.png.len())
            .field("width", &self.width)
            .field("height", &self.height)
            .field("replaces", &self.replaces)
            .finish()
    }
}

impl From<RichText> for Message {
    fn from(text: RichText) -> Self {
        Self { text, ..Self::default() }
    }
}

impl From<&str> for Message {
    fn from(text: &str) -> Self {
        Self::from(RichText::from(text))
    }
}

/// Where an outbound message goes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Destination {
    /// A room (channel) on the transport's network.
    Room(RoomId),
    /// A private message to a user.
    Private(PlayerId),
}

/// Why a transport could not do what was asked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// The connection is down; the message may be retried after reconnecting.
    #[error("not connected to {network}: {reason}")]
    Disconnected {
        /// The network.
        network: NetworkId,
        /// What the network or socket said.
        reason: String,
    },
    /// The network refused the request (banned from a room, unknown user, …).
    #[error("{network} refused: {reason}")]
    Refused {
        /// The network.
        network: NetworkId,
        /// What the network said.
        reason: String,
    },
}

/// A chat network as the daemon sees it.
#[async_trait]
pub trait GameTransport: Send + Sync {
    /// The network's configured name.
    fn network(&self) -> &NetworkId;

    /// Waits for the next inbound message; `None` once the transport has shut down.
    async fn recv(&self) -> Option<Inbound>;

    /// Joins a room so its messages arrive and messages can be sent to it.
    async fn join(&self, room: &RoomId) -> Result<(), TransportError>;

    /// Leaves a room (the config no longer names it).
    async fn leave(&self, room: &RoomId) -> Result<(), TransportError>;

    /// Sends a message.
    async fn send(&self, to: &Destination, message: &Message) -> Result<(), TransportError>;

    /// [`GameTransport::send`], saying also what the network made of it ([`Sent`]: the
    /// message's id, a private chat opened for it). By default nothing is learned.
    async fn send_noted(&self, to: &Destination, message: &Message) -> Result<Sent, TransportError> {
        self.send(to, message).await.map(|()| Sent::default())
    }

    /// The form of games' announcements this network is sent: [`Form::Compact`] where
    /// lines are expensive (IRC's flood control), [`Form::Full`] (the default) elsewhere.
    fn form(&self) -> Form {
        Form::Full
    }

    /// How a player here sends the bot a private message ([`Whisper`]), so instructions
    /// name their network's way: by default none is named.
    fn whisper(&self) -> Whisper {
        Whisper::Privately
    }

    /// True when this network is sent pictures ([`Message::picture`]): a Matrix account
    /// with `board_images` on. By default it is not.
    fn shows_pictures(&self) -> bool {
        false
    }

    /// True when someone called `name` is in `room` now, as far as the transport knows
    /// without asking the network (IRC: the channel's member list it keeps). The relay
    /// marks a name that could pass for such a member. By default nobody is known.
    fn is_member(&self, room: &RoomId, name: &str) -> bool {
        let _ = (room, name);
        false
    }

    /// The members of `room` now who answer to `name`, as far as the transport knows
    /// without waiting for the network: an IRC nick (IRC case rules); a Matrix user id,
    /// display name or localpart (ignoring case). By default nobody is known.
    fn members_named(&self, room: &RoomId, name: &str) -> Vec<Member> {
        let _ = (room, name);
        Vec::new()
    }

    /// Waits for the next change of a room's members that this network reports (IRC);
    /// `None` once there will be none (by default at once: none are reported).
    async fn member_change(&self) -> Option<MemberChange> {
        None
    }

    /// True when this network shows other networks' people as themselves: their changes
    /// of membership are [mirrored](GameTransport::mirror) and relayed lines are sent as
    /// their [`Speaker`] (a Matrix appservice). By default it does not.
    fn mirrors(&self) -> bool {
        false
    }

    /// Shows, in `room` (a room bridged with the change's room), another network's member
    /// change. By default nothing is done.
    async fn mirror(&self, room: &RoomId, change: &MemberChange) -> Result<(), TransportError> {
        let _ = (room, change);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relayed_line_said_by_its_speaker_loses_only_its_head() {
        let text = RichText::new().text("<bob> ").bold("hi").text(" there");
        let speaker = Speaker {
            network: NetworkId::new("irc"),
            nick: "bob".into(),
            head: "<bob> ".len(),
            guest: false,
            network_named: false,
        };
        let message =
            Message { text: text.clone(), chat: true, speaker: Some(speaker.clone()), ..Message::default() };
        assert_eq!(message.said(), RichText::new().bold("hi").text(" there"));
        let merged = RichText::new().text("<bob> one");
        let message = Message { text: merged, speaker: Some(speaker.clone()), ..Message::default() };
        assert_eq!(message.said().plain(), "one");
        let no_head = Message {
            text: text.clone(),
            speaker: Some(Speaker { head: 0, ..speaker }),
            ..Message::default()
        };
        assert_eq!(no_head.said(), text, "no head: the text as it is");
        assert_eq!(Message::from(text.clone()).said(), text, "no speaker: the text as it is");
    }
}
