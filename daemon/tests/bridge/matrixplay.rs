//! Issue 31, items 2 and 3: a Matrix player who never opened a direct chat with the bot
//! plays a whole Duel against an IRC player. The bot opens the direct chat itself when
//! the duel starts (`is_direct`, invite-only, history from the invite on, unencrypted as
//! the bridged room is) and the room is told where it is; a `!cast` typed in the room is
//! answered there privately; every instruction names the reader's network's way (`/msg
//! spellbridge` on IRC, "our direct chat" on Matrix). On Matrix a round is one message
//! (its steps, settlement and the next round's start), the board picture and the removal
//! of the previous one: at most 3 events, and the player is mentioned (`m.mentions`) at
//! most once per round; IRC keeps its three compact lines.

use super::support::*;

/// The bot's events in `room` in timeline order, as `/messages` gives them.
pub(super) async fn timeline(user: &Mx, room: &str) -> Vec<Value> {
    let path = format!("/_matrix/client/v3/rooms/{}/messages?dir=b&limit=1000", encode(room));
    let answer = user.client.call(Method::GET, &path, None).await.unwrap_or_else(|e| panic!("{e}"));
    let mut events: Vec<Value> = answer["chunk"].as_array().cloned().unwrap_or_default();
    events.reverse();
    events.into_iter().filter(|e| e["sender"] == bot_id().as_str()).collect()
}

/// The body an event shows (an edit's new content where it has one).
pub(super) fn body(event: &Value) -> String {
    event["content"]["body"].as_str().unwrap_or_default().to_owned()
}

/// Whether an event is an edit (`m.replace`), which a client shows in place of the event it
/// edits rather than as one more.
pub(super) fn is_edit(event: &Value) -> bool {
    event["content"]["m.relates_to"]["rel_type"] == "m.replace"
}

/// The users an event mentions (`m.mentions`).
pub(super) fn mentioned(event: &Value) -> Vec<String> {
    event["content"]["m.mentions"]["user_ids"]
        .as_array()
        .map(|ids| ids.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_matrix_player_with_no_direct_chat_plays_a_duel_and_a_round_is_one_message() {
    let started = Instant::now();
    let (irc, synapse) = servers();
    synapse.register(BOT, &password(BOT), false).unwrap_or_else(|e| panic!("{e}"));
    let mut watcher = Mx::new(&synapse, "watcher", "Watcher").await;
    let mut noah = Mx::new(&synapse, "noah", "Noah").await;
    let room = bridge_room(&mut watcher, &mut [&mut noah]).await;
    let (mut alice, mut ircwatch) =
        tokio::join!(Irc::connect(irc.port(), "alice"), Irc::connect(irc.port(), "ircwatch"));
    let daemon = start_daemon(&irc, &synapse, &room, &Extra::default());
    until_bot_on_irc(&mut alice).await;
    // Noah speaks in the room (so alice can name him); he has no direct chat with the bot.
    until_bot_in(&mut noah, &room).await;
    for user in [&mut watcher, &mut noah] {
        user.settle().await;
    }
    for client in [&mut alice, &mut ircwatch] {
        client.settle().await;
    }
    assert!(noah.client.invites().is_empty(), "no invite before the duel: {:?}", noah.client.invites());

    alice.say("!duel Noah").await;
    watcher.expect_in(&room, "alice challenges Noah").await;
    noah.say(&room, "!accept").await;
    // Each network is told where to cast in its own way, with the bot's real nick on IRC.
    let opened = ircwatch.expect("⚔ Duel!").await;
    let opened = strip(&opened.text);
    assert!(opened.contains(&format!("/msg {BOT} !cast surge fire wind end")), "{opened}");
    let told = watcher.expect_in(&room, "⚔ Duel!").await;
    assert!(told.body.contains("in our direct chat"), "{told}");
    for text in [&opened, &told.body] {
        assert!(!text.contains("<bot>") && !text.contains("the bot"), "{text}");
    }
    alice.expect_private("Your Duel against Noah has begun").await;

    // The bot opens the direct chat: Noah is invited to a direct, invite-only room whose
    // history starts at the invite, and the room is told where it is, with a link.
    let invite = noah.client.wait_invite(WAIT).await.unwrap_or_else(|| {
        panic!("Noah was not invited to a direct chat; the daemon's log:\n{}", daemon.log())
    });
    assert_eq!((invite.inviter.as_str(), invite.is_direct), (bot_id().as_str(), true), "{invite:?}");
    let where_ = watcher.expect_in(&room, "I've opened our direct chat").await;
    assert!(where_.body.contains(&format!("https://matrix.to/#/{}", invite.room_id)), "{where_}");
    noah.client.accept_invite(&invite.room_id).await.unwrap_or_else(|e| panic!("{e}"));
    noah.dm = Some(invite.room_id.clone());
    let state = |kind: &str| format!("/_matrix/client/v3/rooms/{}/state/{kind}/", encode(&invite.room_id));
    let rules = noah.client.call(Method::GET, &state("m.room.join_rules"), None).await;
    assert_eq!(rules.unwrap_or_else(|e| panic!("{e}"))["join_rule"], "invite");
    let history = noah.client.call(Method::GET, &state("m.room.history_visibility"), None).await;
    assert_eq!(history.unwrap_or_else(|e| panic!("{e}"))["history_visibility"], "invited");
    let (status, _) = noah
        .client
        .request(Method::GET, &state("m.room.encryption"), None)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(status, 404, "unencrypted, as the bridged room is");
    let welcome = noah.expect_private("Your Duel against alice has begun").await;
    assert!(welcome.body.contains("Send your spell here"), "{welcome}");

    // A spell typed in the room is answered privately, and nothing of it is echoed.
    noah.say(&room, "!cast focus earth earth earth earth end").await;
    noah.expect_private("Don't reveal your spell in the room").await;

    // Round 1 (24 toward alice), then round 2, where alice wins on the track (RULES D-1).
    alice.tell_bot("!cast surge fire wind water thunder end").await;
    alice.expect_private("Queued").await;
    noah.tell_bot("!cast focus earth earth earth earth end").await;
    noah.expect_private("Queued").await;
    watcher.expect_in(&room, "Round 2 begins").await;
    ircwatch.expect("Round 2 begins").await;
    alice.tell_bot("!cast surge fire earth fire earth end").await;
    alice.expect_private("Queued").await;
    noah.tell_bot("!cast focus earth earth earth earth end").await;
    noah.expect_private("Queued").await;
    watcher.expect_in(&room, "duel is over").await;
    ircwatch.expect("duel is over").await;
    tokio::join!(ircwatch.pump(QUIET), watcher.pump(QUIET));

    // IRC keeps its compact form: per round the steps on one line, the settlement on the
    // next, the next round (or the end) on the last.
    let on_irc = ircwatch.bot_lines();
    for line in ["Round 1, steps 0–5", "Round 2, steps 0–5"] {
        assert_eq!(count(&on_irc, line), 1, "{line:?} on IRC: {on_irc:#?}");
    }
    assert_eq!(count(&on_irc, "Round 1, step "), 0, "no step on a line of its own: {on_irc:#?}");
    // The room heard no spell before it was revealed, and no refusal of Noah's.
    let lines = watcher.bot_lines(&room);
    assert!(!lines.iter().any(|l| l.contains("reveal your spell")), "{lines:#?}");

    // Matrix: each round is its message, the picture and the previous picture's removal.
    let events = timeline(&watcher, &room).await;
    let listing = events
        .iter()
        .map(|e| format!("{} {} {} {}", e["event_id"], e["type"], e["redacts"], body(e)))
        .collect::<Vec<_>>()
        .join("\n");
    let starts = |n: u32| {
        let needle = format!("Round {n}, step 0");
        events
            .iter()
            .position(|e| body(e).contains(&needle))
            .unwrap_or_else(|| panic!("no {needle:?} in the room:\n{listing}"))
    };
    // Each round adds at most 3 events: its message (steps, settlement, what comes next;
    // the last round's also reveals the dice key), its board picture and the removal of
    // the previous picture (a picture is drawn after the round, so it may land after the
    // next round's message: counted over the rounds, not per window).
    let rounds = [(1, starts(1), starts(2)), (2, starts(2), events.len())];
    let shown: Vec<&Value> = events[starts(1)..].iter().filter(|e| !is_edit(e)).collect();
    assert!(
        shown.len() <= 3 * rounds.len(),
        "{} events for {} rounds:\n{listing}",
        shown.len(),
        rounds.len()
    );
    for (n, from, to) in rounds {
        let round: Vec<&Value> = events[from..to].iter().filter(|e| !is_edit(e)).collect();
        let told = body(round[0]);
        for needle in [format!("Round {n}, step 5"), format!("Round {n} settles"), "Track moves".to_owned()] {
            assert!(told.contains(&needle), "round {n}'s one message has {needle:?}:\n{listing}");
        }
        let noah_mentions = round.iter().filter(|e| mentioned(e).contains(&noah.id().to_owned())).count();
        assert!(noah_mentions <= 1, "Noah was mentioned {noah_mentions} times in round {n}:\n{listing}");
        for event in &round {
            if event["content"]["msgtype"] == "m.text" {
                assert!(
                    !mentioned(event).is_empty(),
                    "the bot's words are notices unless it mentions: {event}"
                );
            }
            if event["type"] == "m.room.redaction" {
                assert!(event["content"]["reason"].is_null(), "no reason shown beside the picture: {event}");
            }
        }
    }
    // Round 1's message waits for round 2: Noah is mentioned there.
    let round_one = &events[starts(1)];
    assert!(body(round_one).contains("Round 2 begins"), "{round_one}");
    assert_eq!(mentioned(round_one), [noah.id().to_owned()], "{round_one}");
    eprintln!("the room's events:\n{listing}\nthe test took {:?}", started.elapsed());
}
