//! Reading one timeline event from `/sync`, with no I/O: [`read`] decides whether it is a
//! message for the daemon, one to skip (and why), or one that could not be decrypted.
//!
//! Only `m.room.message` events of msgtype `m.text`, `m.notice` and `m.emote` are
//! messages. Skipped: the bot's own events, edits (`m.replace`: an edited command is not
//! executed a second time), redacted events, other msgtypes and event types, and events
//! whose content does not parse. The text is the plain `body` (with an older client's
//! reply quote removed); when the body is empty, the HTML `formatted_body` reduced to text.

use matrix_sdk::deserialized_responses::{TimelineEvent, TimelineEventKind};
use matrix_sdk::ruma::events::room::message::{
    MessageFormat, MessageType, OriginalSyncRoomMessageEvent, Relation, RoomMessageEventContent,
};
use matrix_sdk::ruma::events::{AnySyncMessageLikeEvent, AnySyncTimelineEvent, SyncMessageLikeEvent};
use matrix_sdk::ruma::{OwnedEventId, OwnedUserId, UserId};

use super::format;

/// What a timeline event is to the transport.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Read {
    /// A message to hand to the daemon.
    Message {
        /// The event id (the daemon's message id).
        event_id: OwnedEventId,
        /// Who sent it.
        sender: OwnedUserId,
        /// Its text, reduced to plain text.
        text: String,
    },
    /// An encrypted event whose room key the bot does not have (yet).
    Undecryptable {
        /// The event id, when the event has one.
        event_id: Option<OwnedEventId>,
        /// Who sent it, when known.
        sender: Option<OwnedUserId>,
        /// The Megolm session it needs.
        session_id: Option<String>,
        /// matrix-sdk's reason.
        reason: String,
    },
    /// Not for the daemon.
    Skip(Skip),
}

/// Why an event is not handed to the daemon.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Skip {
    /// Sent by the bot itself.
    Own,
    /// An edit of an earlier message.
    Edit,
    /// Redacted, or a message with no text.
    Empty,
    /// Another event type or msgtype.
    NotText,
    /// The event does not parse (missing or odd content).
    Malformed,
}

/// Reads a timeline event as the sync returned it (already decrypted when possible).
pub fn read(event: &TimelineEvent, own: &UserId) -> Read {
    if event.sender().as_deref() == Some(own) {
        return Read::Skip(Skip::Own);
    }
    if let TimelineEventKind::UnableToDecrypt { utd_info, .. } = &event.kind {
        return Read::Undecryptable {
            event_id: event.event_id(),
            sender: event.sender(),
            session_id: utd_info.session_id.clone(),
            reason: format!("{:?}", utd_info.reason),
        };
    }
    match event.raw().deserialize() {
        Ok(AnySyncTimelineEvent::MessageLike(AnySyncMessageLikeEvent::RoomMessage(message))) => match message
        {
            SyncMessageLikeEvent::Original(message) => read_message(&message),
            SyncMessageLikeEvent::Redacted(_) => Read::Skip(Skip::Empty),
        },
        Ok(_) => Read::Skip(Skip::NotText),
        Err(_) => Read::Skip(Skip::Malformed),
    }
}

fn read_message(message: &OriginalSyncRoomMessageEvent) -> Read {
    if matches!(message.content.relates_to, Some(Relation::Replacement(_))) {
        return Read::Skip(Skip::Edit);
    }
    match message_text(&message.content) {
        Some(text) => {
            Read::Message { event_id: message.event_id.clone(), sender: message.sender.clone(), text }
        }
        None if is_text(&message.content.msgtype) => Read::Skip(Skip::Empty),
        None => Read::Skip(Skip::NotText),
    }
}

fn is_text(msgtype: &MessageType) -> bool {
    matches!(msgtype, MessageType::Text(_) | MessageType::Notice(_) | MessageType::Emote(_))
}

/// The text of an `m.text`, `m.notice` or `m.emote` message; `None` for other msgtypes
/// or when there is no text at all.
pub fn message_text(content: &RoomMessageEventContent) -> Option<String> {
    let (body, formatted) = match &content.msgtype {
        MessageType::Text(c) => (&c.body, &c.formatted),
        MessageType::Notice(c) => (&c.body, &c.formatted),
        MessageType::Emote(c) => (&c.body, &c.formatted),
        _ => return None,
    };
    let is_reply = match &content.relates_to {
        Some(Relation::Reply(_)) => true,
        Some(Relation::Thread(thread)) => thread.in_reply_to.is_some() && !thread.is_falling_back,
        _ => false,
    };
    // The HTML, reduced to text, is what the sender saw: clients such as Element put the
    // Markdown source in `body` (`**!status**`), so a formatted command is read from it.
    if let Some(html) = formatted.as_ref().filter(|f| f.format == MessageFormat::Html) {
        let text = format::html_to_text(&html.body);
        let text = text.trim();
        if !text.is_empty() {
            return Some(text.to_owned());
        }
    }
    let body = if is_reply { format::strip_reply_fallback(body) } else { body.as_str() };
    Some(body.trim().to_owned()).filter(|t| !t.is_empty())
}

#[cfg(test)]
mod tests {
    use matrix_sdk::ruma::serde::Raw;
    use matrix_sdk::ruma::user_id;
    use serde_json::json;

    use super::*;

    fn event(content: serde_json::Value, sender: &str) -> TimelineEvent {
        let json = json!({
            "type": "m.room.message",
            "event_id": "$ev1",
            "sender": sender,
            "origin_server_ts": 1,
            "content": content,
        });
        TimelineEvent::from_plaintext(Raw::new(&json).expect("serializes").cast_unchecked())
    }

    fn bot() -> &'static UserId {
        user_id!("@bot:localhost")
    }

    fn text_of(read: Read) -> Option<String> {
        match read {
            Read::Message { text, .. } => Some(text),
            _ => None,
        }
    }

    #[test]
    fn text_notice_and_emote_messages_are_read() {
        for msgtype in ["m.text", "m.notice", "m.emote"] {
            let read =
                read(&event(json!({"msgtype": msgtype, "body": " !games "}), "@alice:localhost"), bot());
            assert_eq!(
                read,
                Read::Message {
                    event_id: "$ev1".try_into().expect("valid"),
                    sender: "@alice:localhost".try_into().expect("valid"),
                    text: "!games".to_owned(),
                },
                "{msgtype}"
            );
        }
    }

    #[test]
    fn own_messages_edits_and_other_events_are_skipped() {
        let own = event(json!({"msgtype": "m.text", "body": "!games"}), "@bot:localhost");
        assert_eq!(read(&own, bot()), Read::Skip(Skip::Own));
        let edit = event(
            json!({
                "msgtype": "m.text",
                "body": "* !cast fire",
                "m.new_content": {"msgtype": "m.text", "body": "!cast fire"},
                "m.relates_to": {"rel_type": "m.replace", "event_id": "$orig"},
            }),
            "@alice:localhost",
        );
        assert_eq!(read(&edit, bot()), Read::Skip(Skip::Edit));
        let image =
            event(json!({"msgtype": "m.image", "body": "cat.png", "url": "mxc://x/y"}), "@alice:localhost");
        assert_eq!(read(&image, bot()), Read::Skip(Skip::NotText));
        let empty = event(json!({"msgtype": "m.text", "body": "   "}), "@alice:localhost");
        assert_eq!(read(&empty, bot()), Read::Skip(Skip::Empty));
    }

    #[test]
    fn odd_content_is_skipped_not_a_crash() {
        let no_body = event(json!({"msgtype": "m.text"}), "@alice:localhost");
        assert!(matches!(read(&no_body, bot()), Read::Skip(_)));
        let wrong_type = event(json!({"msgtype": "m.text", "body": 42}), "@alice:localhost");
        assert!(matches!(read(&wrong_type, bot()), Read::Skip(_)));
        let not_an_object = event(json!("hello"), "@alice:localhost");
        assert!(matches!(read(&not_an_object, bot()), Read::Skip(_)));
        let unknown = TimelineEvent::from_plaintext(
            Raw::new(&json!({"type": "org.example.game", "event_id": "$e", "sender": "@a:b", "origin_server_ts": 1, "content": {}}))
                .expect("serializes")
                .cast_unchecked(),
        );
        assert_eq!(read(&unknown, bot()), Read::Skip(Skip::NotText));
    }

    #[test]
    fn the_html_is_read_when_there_is_some_as_the_sender_saw_it() {
        // Element puts the Markdown source in `body`.
        let both = event(
            json!({"msgtype": "m.text", "body": "**!join**", "format": "org.matrix.custom.html", "formatted_body": "<strong>!join</strong>"}),
            "@alice:localhost",
        );
        assert_eq!(text_of(read(&both, bot())).as_deref(), Some("!join"));
        let html_only = event(
            json!({"msgtype": "m.text", "body": "", "format": "org.matrix.custom.html", "formatted_body": "<p><code>!games</code></p>"}),
            "@alice:localhost",
        );
        assert_eq!(text_of(read(&html_only, bot())).as_deref(), Some("!games"));
    }

    #[test]
    fn reply_fallbacks_are_removed_from_replies_only() {
        let reply = event(
            json!({
                "msgtype": "m.text",
                "body": "> <@bot:localhost> Duel begins\n\n!cast fire",
                "m.relates_to": {"m.in_reply_to": {"event_id": "$orig"}},
            }),
            "@alice:localhost",
        );
        assert_eq!(text_of(read(&reply, bot())).as_deref(), Some("!cast fire"));
        let quote = event(json!({"msgtype": "m.text", "body": "> quoted\n\ntext"}), "@alice:localhost");
        assert_eq!(text_of(read(&quote, bot())).as_deref(), Some("> quoted\n\ntext"));
    }
}
