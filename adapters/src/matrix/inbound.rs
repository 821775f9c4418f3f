//! Reading one timeline event from `/sync`, with no I/O: [`read`] decides whether it is
//! something for the daemon ([`Received`]), one to skip (and why), or one that could not
//! be decrypted.
//!
//! Delivered, each with its own event id as the message id:
//! - `m.room.message` of msgtype `m.text` and `m.notice` ([`Said::Message`]) and `m.emote`
//!   ([`Said::Emote`]). The text is the HTML `formatted_body` reduced to text when there
//!   is one (what the sender saw: Element puts the Markdown source in `body`), else the
//!   plain `body`; the rich text is the HTML read as [`RichText`], else the body as plain
//!   text. A reply (`m.in_reply_to`, or a thread reply that is not a fallback) names the
//!   event answered in `reply_to` and loses its quote (`<mx-reply>` in HTML, the `> `
//!   lines of an older client's body). A message in a thread (`rel_type: m.thread`) names
//!   the thread's root in `thread`.
//! - Edits (`rel_type: m.replace`) as [`Said::Edit`] naming the edited event, with the
//!   text of `m.new_content`. **An edit is never a command**: the daemon only relays it to
//!   bridged rooms, so an edited `!cast` is not cast a second time. (An edit's own
//!   `m.relates_to` is the replacement, so it is an edit even when the message it edits
//!   is in a thread; its `thread` and `reply_to` are not known and stay `None`.)
//! - Reactions (`m.reaction`, an `m.annotation`) as [`Said::Reaction`], text the key.
//! - Redactions (`m.room.redaction`) as [`Said::Redaction`] naming the event removed, with
//!   no text. Every redaction is delivered: whether its target was a message relayed
//!   earlier is for the daemon to know.
//!
//! Skipped: the bot's own events, events already redacted, other msgtypes and event
//! types, messages with no text, and events whose content does not parse.

use matrix_sdk::deserialized_responses::{TimelineEvent, TimelineEventKind};
use matrix_sdk::ruma::events::room::message::{
    MessageFormat, MessageType, OriginalSyncRoomMessageEvent, Relation,
};
use matrix_sdk::ruma::events::room::redaction::SyncRoomRedactionEvent;
use matrix_sdk::ruma::events::{AnySyncMessageLikeEvent, AnySyncTimelineEvent, SyncMessageLikeEvent};
use matrix_sdk::ruma::{OwnedEventId, OwnedUserId, UserId};
use spellbridge_core::{RichText, Said};

use super::html;

/// What a timeline event is to the transport.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Read {
    /// Something to hand to the daemon.
    Message(Box<Received>),
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

/// A message, edit, reaction or redaction read from the timeline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Received {
    /// The event id (the daemon's message id).
    pub event_id: OwnedEventId,
    /// Who sent it.
    pub sender: OwnedUserId,
    /// Its text, reduced to plain text (a reaction's key; empty for a redaction).
    pub text: String,
    /// The same with its formatting.
    pub rich: RichText,
    /// What kind of event it is.
    pub said: Said,
    /// The event a reply answers.
    pub reply_to: Option<OwnedEventId>,
    /// The root of the thread it was said in.
    pub thread: Option<OwnedEventId>,
}

/// Why an event is not handed to the daemon.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Skip {
    /// Sent by the bot itself.
    Own,
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
        Ok(AnySyncTimelineEvent::MessageLike(event)) => read_message_like(event),
        Ok(_) => Read::Skip(Skip::NotText),
        Err(_) => Read::Skip(Skip::Malformed),
    }
}

fn read_message_like(event: AnySyncMessageLikeEvent) -> Read {
    match event {
        AnySyncMessageLikeEvent::RoomMessage(SyncMessageLikeEvent::Original(message)) => {
            read_message(&message)
        }
        AnySyncMessageLikeEvent::Reaction(SyncMessageLikeEvent::Original(reaction)) => {
            let annotation = reaction.content.relates_to;
            Read::Message(Box::new(Received {
                event_id: reaction.event_id,
                sender: reaction.sender,
                text: annotation.key.clone(),
                rich: RichText::new().text(annotation.key.clone()),
                said: Said::Reaction { target: annotation.event_id.to_string(), key: annotation.key },
                reply_to: None,
                thread: None,
            }))
        }
        AnySyncMessageLikeEvent::RoomRedaction(SyncRoomRedactionEvent::Original(redaction)) => {
            // Room versions 11 and later carry the target in the content, older ones beside it.
            let Some(target) = redaction.content.redacts.or(redaction.redacts) else {
                return Read::Skip(Skip::Malformed);
            };
            Read::Message(Box::new(Received {
                event_id: redaction.event_id,
                sender: redaction.sender,
                text: String::new(),
                rich: RichText::new(),
                said: Said::Redaction { target: target.to_string() },
                reply_to: None,
                thread: None,
            }))
        }
        AnySyncMessageLikeEvent::RoomMessage(SyncMessageLikeEvent::Redacted(_))
        | AnySyncMessageLikeEvent::Reaction(SyncMessageLikeEvent::Redacted(_))
        | AnySyncMessageLikeEvent::RoomRedaction(SyncRoomRedactionEvent::Redacted(_)) => {
            Read::Skip(Skip::Empty)
        }
        _ => Read::Skip(Skip::NotText),
    }
}

fn read_message(message: &OriginalSyncRoomMessageEvent) -> Read {
    let content = &message.content;
    let received = |body: Body, said, reply_to, thread| {
        Read::Message(Box::new(Received {
            event_id: message.event_id.clone(),
            sender: message.sender.clone(),
            text: body.text,
            rich: body.rich,
            said,
            reply_to,
            thread,
        }))
    };
    let unreadable =
        |msgtype| if is_text(msgtype) { Read::Skip(Skip::Empty) } else { Read::Skip(Skip::NotText) };
    if let Some(Relation::Replacement(replacement)) = &content.relates_to {
        let new = &replacement.new_content.msgtype;
        let Some(body) = body(new, false) else { return unreadable(new) };
        return received(body, Said::Edit { original: replacement.event_id.to_string() }, None, None);
    }
    let (reply_to, thread) = match &content.relates_to {
        Some(Relation::Reply(reply)) => (Some(reply.in_reply_to.event_id.clone()), None),
        Some(Relation::Thread(thread)) => {
            // `m.in_reply_to` in a thread is a real reply only when not a fallback.
            let reply = thread.in_reply_to.as_ref().filter(|_| !thread.is_falling_back);
            (reply.map(|r| r.event_id.clone()), Some(thread.event_id.clone()))
        }
        _ => (None, None),
    };
    let Some(body) = body(&content.msgtype, reply_to.is_some()) else { return unreadable(&content.msgtype) };
    let said = if matches!(content.msgtype, MessageType::Emote(_)) { Said::Emote } else { Said::Message };
    received(body, said, reply_to, thread)
}

fn is_text(msgtype: &MessageType) -> bool {
    matches!(msgtype, MessageType::Text(_) | MessageType::Notice(_) | MessageType::Emote(_))
}

/// A message's text, plain and rich.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Body {
    /// Plain text, for commands.
    pub text: String,
    /// With its formatting, for relaying.
    pub rich: RichText,
}

/// The text of an `m.text`, `m.notice` or `m.emote` message (a reply's quote removed when
/// `is_reply`); `None` for other msgtypes or when there is no text at all.
pub fn body(msgtype: &MessageType, is_reply: bool) -> Option<Body> {
    let (body, formatted) = match msgtype {
        MessageType::Text(c) => (&c.body, &c.formatted),
        MessageType::Notice(c) => (&c.body, &c.formatted),
        MessageType::Emote(c) => (&c.body, &c.formatted),
        _ => return None,
    };
    // The HTML, reduced to text, is what the sender saw: clients such as Element put the
    // Markdown source in `body` (`**!status**`), so a formatted command is read from it.
    // (Its reply quote, `<mx-reply>`, is always dropped.)
    if let Some(html) = formatted.as_ref().filter(|f| f.format == MessageFormat::Html) {
        let text = html::html_to_text(&html.body);
        if !text.is_empty() {
            return Some(Body { text, rich: html::html_to_rich(&html.body) });
        }
    }
    let body = if is_reply { html::strip_reply_fallback(body) } else { body.as_str() };
    let text = body.trim();
    (!text.is_empty()).then(|| Body { text: text.to_owned(), rich: RichText::new().text(text) })
}

#[cfg(test)]
mod tests {
    use matrix_sdk::ruma::serde::Raw;
    use matrix_sdk::ruma::{owned_event_id, user_id};
    use serde_json::json;
    use spellbridge_core::PlayerId;
    use spellbridge_core::text::Hue;

    use super::*;

    fn event_of_type(event_type: &str, content: serde_json::Value, sender: &str) -> TimelineEvent {
        let json = json!({
            "type": event_type,
            "event_id": "$ev1",
            "sender": sender,
            "origin_server_ts": 1,
            "content": content,
        });
        TimelineEvent::from_plaintext(Raw::new(&json).expect("serializes").cast_unchecked())
    }

    fn event(content: serde_json::Value, sender: &str) -> TimelineEvent {
        event_of_type("m.room.message", content, sender)
    }

    fn bot() -> &'static UserId {
        user_id!("@bot:localhost")
    }

    fn received(read: Read) -> Received {
        match read {
            Read::Message(received) => *received,
            other => panic!("expected something delivered, got {other:?}"),
        }
    }

    fn alice(content: serde_json::Value) -> Received {
        received(read(&event(content, "@alice:localhost"), bot()))
    }

    fn text_of(read: Read) -> Option<String> {
        match read {
            Read::Message(received) => Some(received.text),
            _ => None,
        }
    }

    #[test]
    fn text_and_notice_messages_are_read_and_emotes_are_emotes() {
        for (msgtype, said) in
            [("m.text", Said::Message), ("m.notice", Said::Message), ("m.emote", Said::Emote)]
        {
            let read =
                read(&event(json!({"msgtype": msgtype, "body": " !games "}), "@alice:localhost"), bot());
            assert_eq!(
                read,
                Read::Message(Box::new(Received {
                    event_id: owned_event_id!("$ev1"),
                    sender: "@alice:localhost".try_into().expect("valid"),
                    text: "!games".to_owned(),
                    rich: RichText::new().text("!games"),
                    said,
                    reply_to: None,
                    thread: None,
                })),
                "{msgtype}"
            );
        }
        let emote = alice(
            json!({"msgtype": "m.emote", "body": "waves", "format": "org.matrix.custom.html", "formatted_body": "waves <em>grandly</em>"}),
        );
        assert_eq!((emote.text.as_str(), emote.said), ("waves grandly", Said::Emote));
        assert_eq!(emote.rich, RichText::new().text("waves ").italic("grandly"));
    }

    #[test]
    fn own_events_and_other_events_are_skipped() {
        let own = event(json!({"msgtype": "m.text", "body": "!games"}), "@bot:localhost");
        assert_eq!(read(&own, bot()), Read::Skip(Skip::Own));
        let own_reaction = event_of_type(
            "m.reaction",
            json!({"m.relates_to": {"rel_type": "m.annotation", "event_id": "$orig", "key": "👍"}}),
            "@bot:localhost",
        );
        assert_eq!(read(&own_reaction, bot()), Read::Skip(Skip::Own));
        let own_edit = event(
            json!({"msgtype": "m.text", "body": "* x", "m.new_content": {"msgtype": "m.text", "body": "x"},
                   "m.relates_to": {"rel_type": "m.replace", "event_id": "$orig"}}),
            "@bot:localhost",
        );
        assert_eq!(read(&own_edit, bot()), Read::Skip(Skip::Own));
        let image =
            event(json!({"msgtype": "m.image", "body": "cat.png", "url": "mxc://x/y"}), "@alice:localhost");
        assert_eq!(read(&image, bot()), Read::Skip(Skip::NotText));
        let empty = event(json!({"msgtype": "m.text", "body": "   "}), "@alice:localhost");
        assert_eq!(read(&empty, bot()), Read::Skip(Skip::Empty));
        let topic = event_of_type("m.room.topic", json!({"topic": "x"}), "@alice:localhost");
        assert_eq!(read(&topic, bot()), Read::Skip(Skip::NotText));
    }

    #[test]
    fn edits_are_edits_of_the_original_with_the_new_text_never_commands() {
        let edit = alice(json!({
            "msgtype": "m.text",
            "body": "* !cast fire",
            "m.new_content": {"msgtype": "m.text", "body": "!cast **fire**", "format": "org.matrix.custom.html", "formatted_body": "!cast <strong>fire</strong>"},
            "m.relates_to": {"rel_type": "m.replace", "event_id": "$orig"},
        }));
        assert_eq!(edit.said, Said::Edit { original: "$orig".to_owned() });
        assert_eq!(edit.event_id, owned_event_id!("$ev1"), "the edit's own id is the message id");
        assert_eq!(edit.text, "!cast fire");
        assert_eq!(edit.rich, RichText::new().text("!cast ").bold("fire"));
        assert_eq!((edit.reply_to, edit.thread), (None, None));
        // An edit of a message in a thread is still an edit (its relation is the replacement).
        let threaded = alice(json!({
            "msgtype": "m.text",
            "body": "* fixed",
            "m.new_content": {"msgtype": "m.text", "body": "fixed", "m.relates_to": {"rel_type": "m.thread", "event_id": "$root"}},
            "m.relates_to": {"rel_type": "m.replace", "event_id": "$in-thread"},
        }));
        assert_eq!(
            (threaded.said, threaded.text.as_str()),
            (Said::Edit { original: "$in-thread".to_owned() }, "fixed")
        );
        // An edit to nothing readable is skipped.
        let to_image = event(
            json!({"msgtype": "m.text", "body": "* x", "m.new_content": {"msgtype": "m.image", "body": "x.png", "url": "mxc://x/y"},
                   "m.relates_to": {"rel_type": "m.replace", "event_id": "$orig"}}),
            "@alice:localhost",
        );
        assert_eq!(read(&to_image, bot()), Read::Skip(Skip::NotText));
    }

    #[test]
    fn reactions_name_their_target_and_key() {
        let reaction = event_of_type(
            "m.reaction",
            json!({"m.relates_to": {"rel_type": "m.annotation", "event_id": "$orig", "key": "🔥"}}),
            "@alice:localhost",
        );
        let got = received(read(&reaction, bot()));
        assert_eq!(got.said, Said::Reaction { target: "$orig".to_owned(), key: "🔥".to_owned() });
        assert_eq!((got.text.as_str(), got.rich), ("🔥", RichText::new().text("🔥")));
        let broken =
            event_of_type("m.reaction", json!({"m.relates_to": {"event_id": 3}}), "@alice:localhost");
        assert!(matches!(read(&broken, bot()), Read::Skip(_)));
    }

    #[test]
    fn redactions_name_their_target_in_any_room_version() {
        let v11 = event_of_type(
            "m.room.redaction",
            json!({"redacts": "$orig", "reason": "oops"}),
            "@alice:localhost",
        );
        let got = received(read(&v11, bot()));
        assert_eq!(got.said, Said::Redaction { target: "$orig".to_owned() });
        assert_eq!((got.text.as_str(), got.rich.is_empty()), ("", true));
        let old = TimelineEvent::from_plaintext(
            Raw::new(&json!({"type": "m.room.redaction", "event_id": "$r", "sender": "@alice:localhost",
                             "origin_server_ts": 1, "redacts": "$older", "content": {}}))
            .expect("serializes")
            .cast_unchecked(),
        );
        assert_eq!(received(read(&old, bot())).said, Said::Redaction { target: "$older".to_owned() });
        // A message already redacted has nothing left to deliver.
        let redacted = TimelineEvent::from_plaintext(
            Raw::new(&json!({"type": "m.room.message", "event_id": "$gone", "sender": "@alice:localhost",
                             "origin_server_ts": 1, "content": {},
                             "unsigned": {"redacted_because": {"type": "m.room.redaction", "event_id": "$r",
                                 "sender": "@alice:localhost", "origin_server_ts": 2, "redacts": "$gone", "content": {"redacts": "$gone"}}}}))
            .expect("serializes")
            .cast_unchecked(),
        );
        assert_eq!(read(&redacted, bot()), Read::Skip(Skip::Empty));
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
    fn html_becomes_rich_text_and_a_plain_body_plain_rich_text() {
        let got = alice(json!({
            "msgtype": "m.text",
            "body": "Fire hits Bob",
            "format": "org.matrix.custom.html",
            "formatted_body": "<b>Fire</b> <font data-mx-color=\"#ff0000\">hits</font> <a href=\"https://matrix.to/#/@bob:localhost\">Bob</a> <code>3</code>",
        }));
        assert_eq!(got.text, "Fire hits Bob 3");
        assert_eq!(
            got.rich,
            RichText::new()
                .bold("Fire")
                .text(" ")
                .coloured("hits", Hue::Red)
                .text(" ")
                .mention(&PlayerId::new("@bob:localhost"))
                .text(" ")
                .code("3")
        );
        // A plain body is plain, backticks and all.
        let plain = alice(json!({"msgtype": "m.text", "body": "type `!join` *now*"}));
        assert_eq!(plain.rich, RichText::new().text("type `!join` *now*"));
    }

    #[test]
    fn replies_name_the_event_answered_and_lose_their_fallback() {
        let reply = alice(json!({
            "msgtype": "m.text",
            "body": "> <@bot:localhost> Duel begins\n> second line\n\n!cast fire",
            "format": "org.matrix.custom.html",
            "formatted_body": "<mx-reply><blockquote><a href=\"https://matrix.to/#/!r/$orig\">In reply to</a> <a href=\"https://matrix.to/#/@bot:localhost\">@bot</a><br>Duel begins</blockquote></mx-reply><em>!cast</em> fire",
            "m.relates_to": {"m.in_reply_to": {"event_id": "$orig"}},
        }));
        assert_eq!(reply.reply_to, Some(owned_event_id!("$orig")));
        assert_eq!((reply.text.as_str(), reply.said, reply.thread), ("!cast fire", Said::Message, None));
        assert_eq!(reply.rich, RichText::new().italic("!cast").text(" fire"));
        let plain_reply = alice(json!({
            "msgtype": "m.text",
            "body": "> <@bot:localhost> Duel begins\n\n!cast fire",
            "m.relates_to": {"m.in_reply_to": {"event_id": "$orig"}},
        }));
        assert_eq!(
            (plain_reply.text.as_str(), plain_reply.rich),
            ("!cast fire", RichText::new().text("!cast fire"))
        );
        // Without a reply relation a quote is the message.
        let quote = event(json!({"msgtype": "m.text", "body": "> quoted\n\ntext"}), "@alice:localhost");
        assert_eq!(text_of(read(&quote, bot())).as_deref(), Some("> quoted\n\ntext"));
    }

    #[test]
    fn thread_messages_name_their_root_and_thread_replies_what_they_answer() {
        let in_thread = alice(json!({
            "msgtype": "m.text",
            "body": "!status",
            "m.relates_to": {"rel_type": "m.thread", "event_id": "$root", "is_falling_back": true, "m.in_reply_to": {"event_id": "$latest"}},
        }));
        assert_eq!(in_thread.thread, Some(owned_event_id!("$root")));
        assert_eq!((in_thread.reply_to, in_thread.text.as_str()), (None, "!status"));
        let reply_in_thread = alice(json!({
            "msgtype": "m.emote",
            "body": "> <@bob:localhost> hi\n\nnods",
            "m.relates_to": {"rel_type": "m.thread", "event_id": "$root", "m.in_reply_to": {"event_id": "$bobs"}},
        }));
        assert_eq!(reply_in_thread.thread, Some(owned_event_id!("$root")));
        assert_eq!(reply_in_thread.reply_to, Some(owned_event_id!("$bobs")));
        assert_eq!((reply_in_thread.text.as_str(), reply_in_thread.said), ("nods", Said::Emote));
    }
}
