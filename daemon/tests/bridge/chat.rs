//! a. Chat relayed both ways with its formatting, emotes, edits, reactions and deletions,
//! never echoed back; commands (and their edits) are not relayed; a bridged Matrix room
//! with one person in it is a room, not a direct chat.

use super::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_is_relayed_both_ways_with_formatting_and_never_echoed() {
    let started = Instant::now();
    let (irc, synapse) = servers();
    synapse.register(BOT, &password(BOT), false).unwrap_or_else(|e| panic!("{e}"));
    let mut watcher = Mx::new(&synapse, "watcher", "Watcher").await;
    let mut bobby = Mx::new(&synapse, "bobby", "Bobby").await;
    let room = bridge_room(&mut watcher, &mut [&mut bobby]).await;
    // A second bridge, whose Matrix room has only bobby and the bot in it: a room of two,
    // but a bridged room, not a direct chat.
    let solo = bobby.client.create_room("solo", &[bot_id()], false).await.unwrap_or_else(|e| panic!("{e}"));
    let (mut alice, mut ircwatch) =
        tokio::join!(Irc::connect(irc.port(), "alice"), Irc::connect(irc.port(), "ircwatch"));
    ircwatch.client.join("#solo").await.unwrap_or_else(|e| panic!("{e}"));
    let extra = Extra {
        sections: format!(
            "[[bridge]]\nname = \"solo\"\n\
             rooms = [{{ network = \"irc\", room = \"#solo\" }}, {{ network = \"matrix\", room = \"{solo}\" }}]\n"
        ),
        ..Extra::default()
    };
    let mut daemon = start_daemon(&irc, &synapse, &room, &extra);
    until_bot_on_irc(&mut alice).await;
    until_bot_in(&mut watcher, &room).await;
    let deadline = Instant::now() + STARTUP;
    while !bobby.client.joined_members(&solo).await.unwrap_or_default().contains(&bot_id()) {
        assert!(Instant::now() < deadline, "the bot did not join {solo} within {STARTUP:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for client in [&mut alice, &mut ircwatch] {
        client.settle().await;
    }
    for user in [&mut watcher, &mut bobby] {
        user.settle().await;
    }
    eprintln!("set up in {:?}", started.elapsed());

    // IRC bold arrives in Matrix as HTML, after the speaker's name.
    alice.say("hello \x02bold\x02 world").await;
    let relayed = watcher.expect_in(&room, "<alice> hello bold world").await;
    assert_eq!(relayed.msgtype, "m.text", "{relayed}");
    let html = relayed.formatted_body.clone().unwrap_or_default();
    assert!(
        html == "&lt;alice&gt; hello <strong>bold</strong> world"
            || html == "&lt;alice&gt; hello <b>bold</b> world",
        "the bold survives as HTML: {relayed}"
    );

    // Matrix HTML bold arrives on IRC with \x02.
    bobby
        .client
        .send_html(&room, "**strong** words", "<b>strong</b> words")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let line = ircwatch.expect("<Bobby> strong words").await;
    assert_eq!(line.text, "<Bobby> \x02strong\x02 words", "{line}");

    // An IRC /me arrives as an m.emote.
    alice.act("waves at Bobby").await;
    let emote = watcher.expect_in(&room, "alice waves at Bobby").await;
    assert_eq!((emote.msgtype.as_str(), emote.body.as_str()), ("m.emote", "alice waves at Bobby"), "{emote}");

    // A Matrix edit arrives on IRC as a short correction; a reaction as an action.
    let original = bobby.say(&room, "the spell is wrold-class").await;
    ircwatch.expect("<Bobby> the spell is wrold-class").await;
    let edit = json!({
        "msgtype": "m.text",
        "body": "* the spell is world-class",
        "m.new_content": {"msgtype": "m.text", "body": "the spell is world-class"},
        "m.relates_to": {"rel_type": "m.replace", "event_id": original},
    });
    bobby.client.send_message(&room, edit).await.unwrap_or_else(|e| panic!("{e}"));
    let correction = ircwatch.expect("<Bobby> s/").await;
    assert_eq!(strip(&correction.text), "<Bobby> s/wrold-class/world-class/", "{correction}");
    bobby.client.react(&room, &original, "👍").await.unwrap_or_else(|e| panic!("{e}"));
    let reaction = ircwatch.expect("Bobby reacted 👍").await;
    assert_eq!(
        reaction.text, "\u{1}ACTION Bobby reacted 👍 to Bobby: \u{201c}the spell is world-class\u{201d}\u{1}",
        "a reaction is an action line quoting what it reacts to: {reaction}"
    );

    // A Matrix emote arrives as an IRC action; a deletion as an action line.
    bobby
        .client
        .send_message(&room, json!({"msgtype": "m.emote", "body": "casts a glance"}))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let acted = ircwatch.expect("Bobby casts a glance").await;
    assert_eq!(acted.text, "\u{1}ACTION Bobby casts a glance\u{1}", "{acted}");
    bobby.client.redact(&room, &original, None).await.unwrap_or_else(|e| panic!("{e}"));
    ircwatch.expect("Bobby deleted their message").await;

    // A command is not relayed (its answer stays where it was asked), nor is its edit.
    let command = bobby.say(&room, "!decline").await;
    bobby.expect_in(&room, "Bobby: There is no challenge for you to decline").await;
    let edit = json!({
        "msgtype": "m.text",
        "body": "* !decline now",
        "m.new_content": {"msgtype": "m.text", "body": "!decline now"},
        "m.relates_to": {"rel_type": "m.replace", "event_id": command},
    });
    bobby.client.send_message(&room, edit).await.unwrap_or_else(|e| panic!("{e}"));

    // In the bridged room of two, chat is relayed and commands are answered there: it is
    // no direct chat.
    bobby.say(&solo, "solo hello").await;
    ircwatch
        .expect_where("bobby's line in #solo", |m| {
            m.from == BOT && m.target == "#solo" && m.text == "<Bobby> solo hello"
        })
        .await;
    bobby.say(&solo, "!games").await;
    bobby.expect_in(&solo, "Bobby: Games:").await;

    // Each relayed message arrives exactly once, and nothing comes back where it was said.
    let quiet = Instant::now();
    tokio::join!(ircwatch.pump(Duration::from_secs(3)), watcher.pump(Duration::from_secs(3)));
    eprintln!("watched {:?} for echoes", quiet.elapsed());
    let on_irc = ircwatch.bot_lines();
    let on_matrix = watcher.bot_lines(&room);
    assert_eq!(
        on_irc,
        [
            "<Bobby> strong words",
            "<Bobby> the spell is wrold-class",
            "<Bobby> s/wrold-class/world-class/",
            "ACTION Bobby reacted 👍 to Bobby: \u{201c}the spell is world-class\u{201d}",
            "ACTION Bobby casts a glance",
            "ACTION Bobby deleted their message",
        ],
        "IRC got each Matrix line once and none of its own back"
    );
    assert_eq!(
        on_matrix,
        [
            "<alice> hello bold world",
            "alice waves at Bobby",
            "Bobby: There is no challenge for you to decline in this room."
        ],
        "Matrix got each IRC line once and none of its own back"
    );
    daemon.ensure_running().unwrap_or_else(|e| panic!("{e}"));
    eprintln!("the test took {:?}", started.elapsed());
}
