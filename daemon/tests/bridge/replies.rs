//! h. Replies, reactions and edits find their speaker both ways (issue 17, items 4 and
//! 7, bot mode): a Matrix reply to an IRC user's relayed line reaches IRC as `nick:
//! text` and a reaction to it as `reacted 👍 to nick's “…”`, after a restart of the
//! daemon too (the ids of relayed lines are kept in its database); an IRC `Bobby: hi` is
//! sent into Matrix as a reply to Bobby's latest line; a Matrix edit reaches IRC as each
//! `[[bridge]] edits` setting says (`diff`, `resend`, `off`, changed by SIGHUP).
//!
//! i. Private messages a player can read (item 9): a `!link` asked in the room by someone
//! with no direct chat with the bot opens an unencrypted one, and the room is told where
//! to look; someone who opened a direct chat with the bot gets the code there, with no new
//! room and no such notice.

use super::support::*;

/// The daemon's log says "config reloaded" `times` times, within [`WAIT`].
fn until_reloaded(daemon: &Daemon, times: usize) {
    let deadline = std::time::Instant::now() + WAIT;
    while daemon.log().matches("config reloaded").count() < times {
        assert!(
            std::time::Instant::now() < deadline,
            "the config was not reloaded within {WAIT:?}; the log ends:\n{}",
            daemon.log_tail(40)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The config file with `edits = "…"` in the bridge (replacing any earlier setting).
fn with_edits(daemon: &Daemon, edits: &str) -> String {
    let config = std::fs::read_to_string(daemon.config_path()).unwrap_or_else(|e| panic!("{e}"));
    let kept: Vec<&str> = config.lines().filter(|l| !l.starts_with("edits = ")).collect();
    let mut out = String::new();
    for line in kept {
        out.push_str(line);
        out.push('\n');
        if line.starts_with("rooms = [{ network = \"irc\"") {
            out.push_str(&format!("edits = \"{edits}\"\n"));
        }
    }
    out
}

/// Bobby edits his message `original` in `room` to `text`.
async fn edit(bobby: &mut Mx, room: &str, original: &str, text: &str) {
    let edit = json!({
        "msgtype": "m.text",
        "body": format!("* {text}"),
        "m.new_content": {"msgtype": "m.text", "body": text},
        "m.relates_to": {"rel_type": "m.replace", "event_id": original},
    });
    bobby.client.send_message(room, edit).await.unwrap_or_else(|e| panic!("{e}"));
}

/// Bobby replies to `event` in `room`.
async fn reply(bobby: &mut Mx, room: &str, event: &str, text: &str) {
    let content = json!({
        "msgtype": "m.text",
        "body": text,
        "m.relates_to": {"m.in_reply_to": {"event_id": event}},
    });
    bobby.client.send_message(room, content).await.unwrap_or_else(|e| panic!("{e}"));
}

/// The event a Matrix message answers (`m.in_reply_to`), as the homeserver has it.
async fn answers(user: &Mx, room: &str, event: &str) -> Option<String> {
    let event = user.client.event(room, event).await.unwrap_or_else(|e| panic!("{e}"));
    event.content["m.relates_to"]["m.in_reply_to"]["event_id"].as_str().map(str::to_owned)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replies_reactions_and_edits_find_their_speakers_both_ways_and_across_a_restart() {
    let started = Instant::now();
    let (irc, synapse) = servers();
    synapse.register(BOT, &password(BOT), false).unwrap_or_else(|e| panic!("{e}"));
    let mut watcher = Mx::new(&synapse, "watcher", "Watcher").await;
    let mut bobby = Mx::new(&synapse, "bobby", "Bobby").await;
    let room = bridge_room(&mut watcher, &mut [&mut bobby]).await;
    let (mut alice, mut ircwatch) =
        tokio::join!(Irc::connect(irc.port(), "alice"), Irc::connect(irc.port(), "ircwatch"));
    let mut daemon = start_daemon(&irc, &synapse, &room, &Extra::default());
    until_bot_on_irc(&mut alice).await;
    until_bot_in(&mut watcher, &room).await;
    for client in [&mut alice, &mut ircwatch] {
        client.settle().await;
    }
    for user in [&mut watcher, &mut bobby] {
        user.settle().await;
    }
    eprintln!("set up in {:?}", started.elapsed());

    // An IRC line relayed into Matrix; Bobby replies to it and reacts to it there.
    let words = "the first words of a line long enough to be cut short";
    alice.say(words).await;
    let relayed = bobby.expect_in(&room, &format!("<alice> {words}")).await;
    reply(&mut bobby, &room, &relayed.event_id, "indeed").await;
    let answer = ircwatch.expect("<Bobby> ").await;
    assert_eq!(strip(&answer.text), "<Bobby> alice: indeed", "a reply names the IRC speaker, not the bot");
    bobby.client.react(&room, &relayed.event_id, "👍").await.unwrap_or_else(|e| panic!("{e}"));
    let reaction = ircwatch.expect("Bobby reacted 👍").await;
    assert_eq!(
        reaction.text,
        "\u{1}ACTION Bobby reacted 👍 to alice's \u{201c}the first words of a line long enough to…\u{201d}\u{1}",
        "{reaction}"
    );

    // IRC addresses Bobby by name: the line goes into Matrix as a reply to his latest line.
    bobby.say(&room, "anyone for a duel?").await;
    let asked = bobby.say(&room, "anyone at all?").await;
    ircwatch.expect("<Bobby> anyone at all?").await;
    alice.say("Bobby: me!").await;
    let addressed = watcher.expect_in(&room, "<alice> Bobby: me!").await;
    assert_eq!(answers(&watcher, &room, &addressed.event_id).await, Some(asked.clone()), "{addressed}");
    alice.say("nobody: is anyone there?").await;
    let plain = watcher.expect_in(&room, "<alice> nobody: is anyone there?").await;
    assert_eq!(answers(&watcher, &room, &plain.event_id).await, None, "nobody of that name spoke");

    // Edits, as each setting says: a correction, the whole new text, nothing.
    let first = bobby.say(&room, "the spell is wrold-class").await;
    ircwatch.expect("<Bobby> the spell is wrold-class").await;
    edit(&mut bobby, &room, &first, "the spell is world-class").await;
    let diff = ircwatch.expect("<Bobby> s/").await;
    assert_eq!(strip(&diff.text), "<Bobby> s/wrold-class/world-class/");
    daemon.set_config(&with_edits(&daemon, "resend")).unwrap_or_else(|e| panic!("{e}"));
    daemon.hangup().unwrap_or_else(|e| panic!("{e}"));
    until_reloaded(&daemon, 1);
    let second = bobby.say(&room, "a second wrold").await;
    ircwatch.expect("<Bobby> a second wrold").await;
    edit(&mut bobby, &room, &second, "a second world").await;
    let resent = ircwatch.expect("<Bobby> * ").await;
    assert_eq!(strip(&resent.text), "<Bobby> * a second world");
    daemon.set_config(&with_edits(&daemon, "off")).unwrap_or_else(|e| panic!("{e}"));
    daemon.hangup().unwrap_or_else(|e| panic!("{e}"));
    until_reloaded(&daemon, 2);
    let third = bobby.say(&room, "a third wrold").await;
    ircwatch.expect("<Bobby> a third wrold").await;
    edit(&mut bobby, &room, &third, "a third world").await;
    bobby.say(&room, "after the edit").await;
    ircwatch.expect("<Bobby> after the edit").await;

    // The daemon restarts: replies and reactions to the line relayed before still name
    // alice (the id is kept in the database).
    assert!(daemon.terminate(Duration::from_secs(15)).is_ok_and(|s| s.success()), "a clean stop");
    daemon.spawn().unwrap_or_else(|e| panic!("{e}"));
    until_bot_on_irc(&mut alice).await;
    until_bot_in(&mut watcher, &room).await;
    reply(&mut bobby, &room, &relayed.event_id, "still true").await;
    let again = ircwatch.expect("<Bobby> alice: still true").await;
    assert_eq!(strip(&again.text), "<Bobby> alice: still true", "{again}");
    bobby.client.react(&room, &relayed.event_id, "🎉").await.unwrap_or_else(|e| panic!("{e}"));
    ircwatch.expect("Bobby reacted 🎉 to alice's \u{201c}the first words").await;

    // Everything IRC heard from Matrix, once each; the edit made while edits were off
    // never came.
    ircwatch.pump(QUIET).await;
    // (The bot's answers to `!games` on IRC, asked to see it back after the restart, aside.)
    let heard: Vec<String> = ircwatch
        .bot_lines()
        .into_iter()
        .filter(|l| l.starts_with("<Bobby>") || l.starts_with("ACTION Bobby"))
        .collect();
    assert_eq!(
        heard,
        [
            "<Bobby> alice: indeed",
            "ACTION Bobby reacted 👍 to alice's \u{201c}the first words of a line long enough to…\u{201d}",
            "<Bobby> anyone for a duel?",
            "<Bobby> anyone at all?",
            "<Bobby> the spell is wrold-class",
            "<Bobby> s/wrold-class/world-class/",
            "<Bobby> a second wrold",
            "<Bobby> * a second world",
            "<Bobby> a third wrold",
            "<Bobby> after the edit",
            "<Bobby> alice: still true",
            "ACTION Bobby reacted 🎉 to alice's \u{201c}the first words of a line long enough to…\u{201d}",
        ],
        "IRC heard each Matrix line once, as its setting said"
    );
    daemon.ensure_running().unwrap_or_else(|e| panic!("{e}"));
    eprintln!("the test took {:?}", started.elapsed());
}

/// The room's `m.room.encryption` state, as `user` may read it (`None`: unencrypted).
async fn encryption(user: &Mx, room: &str) -> Option<Value> {
    let path = format!("/_matrix/client/v3/rooms/{}/state/m.room.encryption/", encode(room));
    match user.client.request(Method::GET, &path, None).await.unwrap_or_else(|e| panic!("{e}")) {
        (200, state) => Some(state),
        (404, _) => None,
        (status, answer) => panic!("reading {room}'s encryption answered {status}: {answer}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_private_message_goes_where_the_player_can_read_it() {
    let started = Instant::now();
    let (irc, synapse) = servers();
    synapse.register(BOT, &password(BOT), false).unwrap_or_else(|e| panic!("{e}"));
    let mut watcher = Mx::new(&synapse, "watcher", "Watcher").await;
    let mut carol = Mx::new(&synapse, "carol", "Carol").await;
    let mut dave = Mx::new(&synapse, "dave", "Dave").await;
    let room = bridge_room(&mut watcher, &mut [&mut carol, &mut dave]).await;
    // dave opened a direct chat with the bot; carol has none.
    direct_rooms(&mut [&mut dave]).await;
    let mut alice = Irc::connect(irc.port(), "alice").await;
    let mut daemon = start_daemon(&irc, &synapse, &room, &Extra::default());
    until_bot_on_irc(&mut alice).await;
    until_bot_everywhere(&room, &mut watcher, &mut [&mut dave]).await;
    for user in [&mut watcher, &mut carol, &mut dave] {
        user.settle().await;
    }
    eprintln!("set up in {:?}", started.elapsed());

    // carol asks for a link code in the room: the bot opens an unencrypted direct chat
    // with her and says so in the room.
    carol.say(&room, "!link").await;
    watcher.expect_in(&room, "Carol: I sent you a link code privately.").await;
    let told = watcher.expect_in(&room, "Carol: I've opened our direct chat").await;
    let invite = carol.client.wait_invite(WAIT).await.unwrap_or_else(|| panic!("carol was not invited"));
    // The room is told where it is: a link to it (issue 31).
    assert_eq!(
        told.body,
        format!(
            "Carol: I've opened our direct chat (https://matrix.to/#/{}) and written to you there: accept its \
             invitation, then type there.",
            invite.room_id
        )
    );
    assert_eq!((invite.inviter.as_str(), invite.is_direct), (bot_id().as_str(), true), "{invite:?}");
    carol.client.accept_invite(&invite.room_id).await.unwrap_or_else(|e| panic!("{e}"));
    carol.dm = Some(invite.room_id.clone());
    let code = carol.expect_private("Your link code is").await;
    assert_eq!(code.msgtype, "m.notice", "a plain message any client reads, the bot's words: {code}");
    assert_eq!(encryption(&carol, &invite.room_id).await, None, "the direct room is not encrypted");
    // Her next private message goes to the same room, with no new notice.
    carol.say(&room, "!link").await;
    carol.expect_private("Your link code is").await;

    // dave asks too: the code goes to the direct chat he opened, and the room hears only
    // the usual answer.
    dave.say(&room, "!link").await;
    watcher.expect_in(&room, "Dave: I sent you a link code privately.").await;
    dave.expect_private("Your link code is").await;

    watcher.pump(QUIET).await;
    let opened = count(&watcher.bot_lines(&room), "I've opened our direct chat");
    assert_eq!(opened, 1, "only carol's first code opened a chat: {:?}", watcher.bot_lines(&room));
    dave.pump(QUIET).await;
    carol.pump(QUIET).await;
    let dm = invite.room_id.as_str();
    let others: Vec<_> =
        dave.client.invites().iter().chain(carol.client.invites()).filter(|i| i.room_id != dm).collect();
    assert!(others.is_empty(), "no other room was opened: {others:?}");
    daemon.ensure_running().unwrap_or_else(|e| panic!("{e}"));
    eprintln!("the test took {:?}", started.elapsed());
}
