//! A story told in one Matrix message ([`Message::story`]: a Duel round revealed step by
//! step, a Thaum phase). Its first part is sent as a message; each later part to the same
//! room edits that message (`m.replace`, the whole story so far in `m.new_content`, the
//! edit's own body the fallback prefixed `* `), so a client shows one message holding every
//! part. An edit mentions (`m.mentions`) only who the story had not mentioned yet, so a
//! player is not highlighted again for what they were already told.
//!
//! A story's message is edited only while it is still the room's last word: when anyone
//! has said anything there since (a player's command, relayed chat; the bot's own board
//! pictures, their removals and edits do not count), an edit far up the room would go
//! unseen, so the part starts a new message of the story, which later parts edit.
//!
//! What each room's recent stories said is kept in memory only: after a restart the next
//! part of a story starts a new message (which later parts edit).

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use matrix_sdk::Room;
use matrix_sdk::room::MessagesOptions;
use matrix_sdk::ruma::events::Mentions;
use matrix_sdk::ruma::events::room::message::{ReplacementMetadata, RoomMessageEventContent};
use matrix_sdk::ruma::{EventId, OwnedEventId, UInt, UserId};
use serde::Deserialize;
use serde_json::Value;
use spellbridge_core::{Message, RichText};

use super::transport::lock;

/// How many stories are remembered per room (the latest ones: a table's current round or
/// phase, for each table there).
const PER_ROOM: usize = 16;
/// How many of a room's latest events are looked through for a story's message.
const LOOK_BACK: u32 = 20;

/// A story's message in one room: the event a client shows, what it says so far and whom
/// it mentions.
#[derive(Clone)]
struct Told {
    story: String,
    event: OwnedEventId,
    text: RichText,
    mentions: Mentions,
}

/// The stories lately told in each room (room id → the latest last).
#[derive(Default)]
pub(super) struct Stories {
    rooms: Mutex<HashMap<String, VecDeque<Told>>>,
}

/// How to send one part of a story: the message to render (the story so far with this
/// part), and the event it edits, if the story has one in the room yet.
pub(super) struct Part {
    /// The message as a client is to show it: every part so far, this one last.
    pub(super) message: Message,
    edits: Option<(OwnedEventId, Mentions)>,
}

impl Part {
    /// `content` (rendered from [`Part::message`]) as sent: an edit of the story's message
    /// when it has one, mentioning only those not mentioned before; else as it is.
    pub(super) fn content(&self, content: RoomMessageEventContent) -> RoomMessageEventContent {
        match &self.edits {
            Some((event, mentions)) => {
                content.make_replacement(ReplacementMetadata::new(event.clone(), Some(mentions.clone())))
            }
            None => content,
        }
    }
}

impl Part {
    /// This part as it goes to `room`: an edit of the story's message while that is still
    /// the room's last word (see the module doc), else `message` alone, a new message of
    /// the story.
    pub(super) async fn unless_interrupted(self, room: &Room, message: &Message) -> Part {
        let Some((event, _)) = &self.edits else { return self };
        if last_word(room, event).await {
            return self;
        }
        Part { message: message.clone(), edits: None }
    }
}

/// An event as `/messages` gives it, as far as [`last_word`] reads it.
#[derive(Deserialize)]
struct Seen {
    event_id: String,
    sender: String,
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    content: Value,
}

/// True when `event` is among `room`'s latest events and nothing came after it but the
/// bot's own pictures, their removals (a removed picture reads as an empty message) and
/// edits. Asked of the homeserver (`/messages`), which knows of what the sync has not
/// brought yet; when it cannot be asked, false.
async fn last_word(room: &Room, event: &EventId) -> bool {
    let mut options = MessagesOptions::backward();
    options.limit = UInt::from(LOOK_BACK);
    let Ok(page) = room.messages(options).await else { return false };
    let bot = room.own_user_id();
    for seen in page.chunk.iter().filter_map(|e| e.raw().deserialize_as_unchecked::<Seen>().ok()) {
        if seen.event_id == event.as_str() {
            return true;
        }
        if !quiet(&seen, bot) {
            return false;
        }
    }
    false
}

/// True for what does not break a story: the bot's board pictures, its redactions and
/// what they removed, and its edits.
fn quiet(seen: &Seen, bot: &UserId) -> bool {
    let content = &seen.content;
    seen.sender == bot.as_str()
        && match seen.kind.as_str() {
            "m.room.redaction" => true,
            "m.room.message" => {
                content["msgtype"] == "m.image"
                    || content["m.relates_to"]["rel_type"] == "m.replace"
                    || content.as_object().is_none_or(serde_json::Map::is_empty)
            }
            _ => false,
        }
}

impl Stories {
    /// How to send `message`, a part of `story` in `room`.
    pub(super) fn part(&self, room: &str, story: &str, message: &Message) -> Part {
        let rooms = lock(&self.rooms);
        let told = rooms.get(room).and_then(|told| told.iter().find(|t| t.story == story));
        match told {
            Some(told) => Part {
                message: Message {
                    text: told.text.clone().text("\n").append(message.text.clone()),
                    ..message.clone()
                },
                edits: Some((told.event.clone(), told.mentions.clone())),
            },
            None => Part { message: message.clone(), edits: None },
        }
    }

    /// Notes that `part` of `story` was sent to `room` as `event`, with `content` (before
    /// it was made an edit: its mentions are the whole story's).
    pub(super) fn told(
        &self,
        room: &str,
        story: &str,
        part: Part,
        event: OwnedEventId,
        content: &RoomMessageEventContent,
    ) {
        let mut rooms = lock(&self.rooms);
        let told = rooms.entry(room.to_owned()).or_default();
        told.retain(|t| t.story != story);
        told.push_back(Told {
            story: story.to_owned(),
            event: part.edits.map_or(event, |(first, _)| first),
            text: part.message.text,
            mentions: content.mentions.clone().unwrap_or_default(),
        });
        while told.len() > PER_ROOM {
            told.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use matrix_sdk::ruma::events::room::message::Relation;
    use matrix_sdk::ruma::{OwnedUserId, owned_event_id};
    use serde_json::json;

    use super::*;

    fn content(text: &str, mentioned: &[&str]) -> RoomMessageEventContent {
        let users = mentioned.iter().map(|u| OwnedUserId::try_from(*u).expect("a user id"));
        RoomMessageEventContent::notice_plain(text).add_mentions(Mentions::with_user_ids(users))
    }

    /// The first part is a message; the second edits it with both parts, its fallback body
    /// starred, mentioning only who the first did not; another room's story is its own.
    #[test]
    fn a_later_part_edits_the_first_message_and_mentions_only_the_new() {
        let stories = Stories::default();
        let first = Message { text: RichText::new().text("Round 1, step 0"), ..Message::default() };
        let part = stories.part("!r", "7.round 1", &first);
        let sent = content("Round 1, step 0", &["@noah:hs"]);
        assert!(part.content(sent.clone()).relates_to.is_none());
        stories.told("!r", "7.round 1", part, owned_event_id!("$first"), &sent);

        let second = Message { text: RichText::new().text("Round 1, step 1"), ..Message::default() };
        let part = stories.part("!r", "7.round 1", &second);
        assert_eq!(part.message.text.plain(), "Round 1, step 0\nRound 1, step 1");
        let whole = content(&part.message.text.plain(), &["@noah:hs", "@alice:hs"]);
        let edit = serde_json::to_value(part.content(whole.clone())).expect("json");
        assert_eq!(edit["m.relates_to"], json!({"rel_type": "m.replace", "event_id": "$first"}));
        assert_eq!(edit["body"], "* Round 1, step 0\nRound 1, step 1");
        assert_eq!(edit["m.new_content"]["body"], "Round 1, step 0\nRound 1, step 1");
        assert_eq!(edit["m.mentions"]["user_ids"], json!(["@alice:hs"]), "{edit}");
        assert!(matches!(part.content(whole.clone()).relates_to, Some(Relation::Replacement(_))));
        stories.told("!r", "7.round 1", part, owned_event_id!("$edit"), &whole);

        // A third part still edits the first message, and mentions nobody again.
        let third = Message { text: RichText::new().text("Round 1 settles"), ..Message::default() };
        let part = stories.part("!r", "7.round 1", &third);
        let again = content(&part.message.text.plain(), &["@noah:hs", "@alice:hs"]);
        let edit = serde_json::to_value(part.content(again)).expect("json");
        assert_eq!(edit["m.relates_to"]["event_id"], "$first");
        assert!(edit["m.mentions"]["user_ids"].as_array().is_none_or(Vec::is_empty), "{edit}");

        // The same story in another room, and another story here, start messages.
        assert!(stories.part("!other", "7.round 1", &third).edits.is_none());
        assert!(stories.part("!r", "7.round 2", &third).edits.is_none());
    }
}
