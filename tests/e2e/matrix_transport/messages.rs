//! Messages both ways: the bot accepts an allowed invite, reads commands with the right
//! fields and answers with HTML and pills; it delivers what a bridge relays (formatting
//! as rich text, edits, reactions, redactions, replies without their quote, threads,
//! emotes), answers in a thread and acts emotes.

use super::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invited_bot_reads_commands_and_answers_with_html_and_pills() {
    let server = start_server(Options::default());
    let store = tempfile::tempdir().expect("temp dir");
    let (bot, mut alice, _carol, room) = bot_in_a_room(&server, store.path()).await;
    let alice_id = alice.user_id().to_owned();

    let event_id = ok(alice.send_text(&room, "!games").await);
    let got = recv(&bot.transport, WAIT).await;
    assert_eq!(
        got,
        Inbound {
            display_name: "alice".to_owned(),
            private: false,
            message_id: Some(event_id.clone()),
            operator: true,
            ..Inbound::new(NETWORK.into(), RoomId::new(&room), PlayerId::new(&alice_id), "!games".to_owned())
        }
    );

    // An edit of the command arrives as an edit (relayed, never run); HTML-only bodies
    // are reduced.
    let edit = serde_json::json!({
        "msgtype": "m.text",
        "body": "* !games now",
        "m.new_content": {"msgtype": "m.text", "body": "!games now"},
        "m.relates_to": {"rel_type": "m.replace", "event_id": event_id},
    });
    ok(alice.send_message(&room, edit).await);
    let html_only = serde_json::json!({
        "msgtype": "m.text", "body": "", "format": "org.matrix.custom.html",
        "formatted_body": "<p><strong>!join</strong> <em>fire</em></p>",
    });
    ok(alice.send_message(&room, html_only).await);
    // Odd content and unknown events are skipped without harm.
    // (Synapse refuses an m.room.message without a string body and msgtype.)
    ok(alice.send_message(&room, serde_json::json!({"msgtype": "org.example.x", "body": "!custom"})).await);
    ok(alice.send_event(&room, "org.example.unknown", serde_json::json!({"x": 1})).await);
    ok(alice.send_text(&room, &format!("!huge {}", "x".repeat(30_000))).await);
    let edited = recv(&bot.transport, WAIT).await;
    assert_eq!(
        (edited.text.as_str(), edited.said),
        ("!games now", Said::Edit { original: event_id.clone() })
    );
    assert_eq!(recv(&bot.transport, WAIT).await.text, "!join fire");
    assert!(recv(&bot.transport, WAIT).await.text.starts_with("!huge xxx"));
    nothing_more(&bot.transport, QUIET).await;

    // Rich text reaches alice as HTML with a pill and m.mentions.
    let text = RichText::new()
        .bold("Fire")
        .text(" burns ")
        .mention(&PlayerId::new(&alice_id))
        .text(" — type ")
        .code("!join")
        .italic(" now");
    bot.transport.send(&Destination::Room(RoomId::new(&room)), &text.clone().into()).await.expect("sent");
    let event = next_message_from(&mut alice, &server.user_id("spellbot"), WAIT).await;
    let content = &event.content;
    assert_eq!(content["msgtype"], "m.text");
    assert_eq!(content["body"], "Fire burns alice — type `!join` now");
    assert_eq!(content["format"], "org.matrix.custom.html");
    assert_eq!(
        content["formatted_body"],
        "<strong>Fire</strong> burns <a href=\"https://matrix.to/#/@alice:localhost\">alice</a> — type <code>!join</code><em> now</em>"
    );
    assert_eq!(content["m.mentions"]["user_ids"], serde_json::json!([alice_id]));

    // A room the bot is not in, or a player who is not a Matrix user, is refused.
    let nowhere = bot.transport.send(&Destination::Room(RoomId::new("!nowhere")), &"hi".into()).await;
    assert!(nowhere.is_err());
    let nobody = bot.transport.send(&Destination::Private(PlayerId::new("alice")), &"hi".into()).await;
    assert!(nobody.is_err());
    bot.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn formatting_edits_reactions_redactions_and_replies_arrive_for_relaying() {
    let server = start_server(Options::default());
    let store = tempfile::tempdir().expect("temp dir");
    let (bot, mut alice, mut carol, room) = bot_in_a_room(&server, store.path()).await;
    let carol_id = carol.user_id().to_owned();

    // Formatting arrives as rich text; the text stays plain, a pill as its name.
    let html = "<b>Fire</b> <font data-mx-color=\"#ff0000\">hits</font> \
                <a href=\"https://matrix.to/#/@carol:localhost\">carol</a> for <code>3</code>";
    let formatted = ok(alice.send_html(&room, "**Fire** hits carol for `3`", html).await);
    let got = recv(&bot.transport, WAIT).await;
    assert_eq!(got.text, "Fire hits carol for 3");
    assert_eq!(
        got.rich,
        RichText::new()
            .bold("Fire")
            .text(" ")
            .coloured("hits", Hue::Red)
            .text(" ")
            .mention(&PlayerId::new(&carol_id))
            .text(" for ")
            .code("3")
    );
    assert_eq!((got.said, got.message_id.as_deref()), (Said::Message, Some(formatted.as_str())));

    // An edit names the original, carries the new text, and arrives once.
    let original = ok(alice.send_text(&room, "!cast fire").await);
    assert_eq!(recv(&bot.transport, WAIT).await.message_id.as_deref(), Some(original.as_str()));
    let edit = serde_json::json!({
        "msgtype": "m.text",
        "body": "* !cast *water*",
        "m.new_content": {"msgtype": "m.text", "body": "!cast *water*", "format": "org.matrix.custom.html", "formatted_body": "!cast <em>water</em>"},
        "m.relates_to": {"rel_type": "m.replace", "event_id": original},
    });
    let edit_id = ok(alice.send_message(&room, edit).await);
    let got = recv(&bot.transport, WAIT).await;
    assert_eq!(got.said, Said::Edit { original: original.clone() });
    assert_eq!(
        (got.text.as_str(), got.rich),
        ("!cast water", RichText::new().text("!cast ").italic("water"))
    );
    assert_eq!(got.message_id.as_deref(), Some(edit_id.as_str()), "the edit's own id");
    nothing_more(&bot.transport, QUIET).await;

    // A reaction and a redaction name the message they are about.
    let reaction = ok(carol.react(&room, &original, "🔥").await);
    let got = recv(&bot.transport, WAIT).await;
    assert_eq!(got.said, Said::Reaction { target: original.clone(), key: "🔥".to_owned() });
    assert_eq!(
        (got.text.as_str(), got.sender.as_str(), got.message_id),
        ("🔥", carol_id.as_str(), Some(reaction))
    );
    let redaction = ok(alice.redact(&room, &original, Some("typo")).await);
    let got = recv(&bot.transport, WAIT).await;
    assert_eq!(got.said, Said::Redaction { target: original.clone() });
    assert_eq!((got.text.as_str(), got.rich.is_empty(), got.message_id), ("", true, Some(redaction)));

    // A reply names the message answered and loses the quote of it, in body and HTML.
    let reply = serde_json::json!({
        "msgtype": "m.text",
        "body": "> <@alice:localhost> **Fire** hits carol for `3`\n\n!counter fire",
        "format": "org.matrix.custom.html",
        "formatted_body": format!(
            "<mx-reply><blockquote><a href=\"https://matrix.to/#/{room}/{formatted}\">In reply to</a> \
             <a href=\"https://matrix.to/#/@alice:localhost\">@alice:localhost</a><br>{html}</blockquote></mx-reply>\
             <strong>!counter</strong> fire"
        ),
        "m.relates_to": {"m.in_reply_to": {"event_id": formatted}},
    });
    ok(carol.send_message(&room, reply).await);
    let got = recv(&bot.transport, WAIT).await;
    assert_eq!(got.reply_to.as_deref(), Some(formatted.as_str()));
    assert_eq!(
        (got.text.as_str(), got.rich),
        ("!counter fire", RichText::new().bold("!counter").text(" fire"))
    );
    let plain_reply = serde_json::json!({
        "msgtype": "m.text",
        "body": "> <@alice:localhost> **Fire** hits carol for `3`\n> second line\n\nouch",
        "m.relates_to": {"m.in_reply_to": {"event_id": formatted}},
    });
    ok(carol.send_message(&room, plain_reply).await);
    let got = recv(&bot.transport, WAIT).await;
    assert_eq!((got.text.as_str(), got.reply_to.as_deref()), ("ouch", Some(formatted.as_str())));
    nothing_more(&bot.transport, QUIET).await;
    bot.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn threads_and_emotes_work_both_ways() {
    let server = start_server(Options::default());
    let store = tempfile::tempdir().expect("temp dir");
    let (bot, mut alice, _carol, room) = bot_in_a_room(&server, store.path()).await;
    let bot_id = server.user_id("spellbot");
    let to_room = Destination::Room(RoomId::new(&room));

    // A message in a thread names its root (a thread message is not a reply).
    let root = ok(alice.send_text(&room, "A duel thread").await);
    assert_eq!(recv(&bot.transport, WAIT).await.thread, None);
    let in_thread = serde_json::json!({
        "msgtype": "m.text",
        "body": "!status",
        "m.relates_to": {"rel_type": "m.thread", "event_id": root, "is_falling_back": true, "m.in_reply_to": {"event_id": root}},
    });
    ok(alice.send_message(&room, in_thread).await);
    let got = recv(&bot.transport, WAIT).await;
    assert_eq!(
        (got.text.as_str(), got.thread.as_deref(), got.reply_to),
        ("!status", Some(root.as_str()), None)
    );

    // An answer sent with that thread is in it, with the fallback clients expect.
    ok(alice.catch_up().await);
    let answer =
        Message { text: RichText::new().bold("Round 1"), thread: Some(root.clone()), ..Message::default() };
    bot.transport.send(&to_room, &answer).await.expect("sent");
    let event = next_message_from(&mut alice, &bot_id, WAIT).await;
    let expected = serde_json::json!({
        "rel_type": "m.thread",
        "event_id": root,
        "is_falling_back": true,
        "m.in_reply_to": {"event_id": root},
    });
    assert_eq!(event.content["m.relates_to"], expected, "{event}");
    assert_eq!(event.content["formatted_body"], "<strong>Round 1</strong>");
    let stored = ok(alice.event(&room, &event.event_id).await);
    assert_eq!(stored.content["m.relates_to"], expected, "as the server keeps it");

    // An emote arrives as one, and an acted message is sent as one (with its HTML).
    let emote = serde_json::json!({"msgtype": "m.emote", "body": "waves", "format": "org.matrix.custom.html", "formatted_body": "<em>waves</em>"});
    ok(alice.send_message(&room, emote).await);
    let got = recv(&bot.transport, WAIT).await;
    assert_eq!(
        (got.text.as_str(), got.said, got.rich),
        ("waves", Said::Emote, RichText::new().italic("waves"))
    );
    let act = Message {
        text: RichText::new().text("casts ").bold("Fire"),
        voice: Voice::Act,
        ..Message::default()
    };
    bot.transport.send(&to_room, &act).await.expect("sent");
    let event = next_message_from(&mut alice, &bot_id, WAIT).await;
    assert_eq!(event.content["msgtype"], "m.emote");
    assert_eq!(event.content["body"], "casts Fire");
    assert_eq!(event.content["formatted_body"], "casts <strong>Fire</strong>");
    assert!(event.content.get("m.relates_to").is_none(), "{event}");
    nothing_more(&bot.transport, QUIET).await;
    bot.stop().await;
}
