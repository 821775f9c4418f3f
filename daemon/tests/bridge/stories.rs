//! Issue 31, item 3: what is told over several actions is one Matrix message, edited in
//! place (`m.replace`). A Duel round whose steps are revealed by several casts is the
//! round's first message, each later part an edit of it whose fallback body starts `* `
//! and which mentions nobody already mentioned; a Thaum phase's actions are the phase's
//! message likewise. IRC hears each part as it comes.

use super::matrixplay::{body, is_edit, mentioned, timeline};
use super::support::*;

/// The events that edit `event` (`m.replace` relations to it).
fn edits_of<'e>(events: &'e [Value], event: &Value) -> Vec<&'e Value> {
    events
        .iter()
        .filter(|e| is_edit(e) && e["content"]["m.relates_to"]["event_id"] == event["event_id"])
        .collect()
}

/// The bot's room messages that a client shows as messages of their own (no edit, no
/// picture, no redaction).
fn shown_texts(events: &[Value]) -> Vec<&Value> {
    events
        .iter()
        .filter(|e| e["type"] == "m.room.message" && !is_edit(e) && e["content"]["msgtype"] != "m.image")
        .collect()
}

/// A listing of events for a failure message.
fn listing(events: &[Value]) -> String {
    events
        .iter()
        .map(|e| format!("{} {} {} {}", e["event_id"], e["type"], e["content"]["m.relates_to"], body(e)))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_duel_round_told_step_by_step_is_one_message_edited_in_place() {
    let (irc, synapse) = servers();
    synapse.register(BOT, &password(BOT), false).unwrap_or_else(|e| panic!("{e}"));
    let mut watcher = Mx::new(&synapse, "watcher", "Watcher").await;
    let mut noah = Mx::new(&synapse, "noah", "Noah").await;
    let room = bridge_room(&mut watcher, &mut [&mut noah]).await;
    direct_rooms(&mut [&mut noah]).await;
    let (mut alice, mut ircwatch) =
        tokio::join!(Irc::connect(irc.port(), "alice"), Irc::connect(irc.port(), "ircwatch"));
    let daemon = start_daemon(&irc, &synapse, &room, &Extra::default());
    until_bot_on_irc(&mut alice).await;
    until_bot_in(&mut noah, &room).await;
    for user in [&mut watcher, &mut noah] {
        user.settle().await;
    }
    for client in [&mut alice, &mut ircwatch] {
        client.settle().await;
    }
    alice.say("!duel Noah").await;
    watcher.expect_in(&room, "alice challenges Noah").await;
    noah.say(&room, "!accept").await;
    noah.expect_private("Your Duel against alice has begun").await;

    // Round 1 in two casts each: steps 0–1 are revealed, then steps 2–5 and the settlement.
    alice.tell_bot("!cast surge fire").await;
    alice.expect_private("Queued").await;
    noah.tell_bot("!cast focus earth").await;
    noah.expect_private("Queued").await;
    watcher.expect_in(&room, "Round 1, step 1").await;
    ircwatch.expect("Round 1, steps 0–1").await;
    alice.tell_bot("!cast wind water thunder end").await;
    alice.expect_private("Queued").await;
    noah.tell_bot("!cast earth earth earth end").await;
    noah.expect_private("Queued").await;
    watcher.expect_in(&room, "Round 2 begins").await;
    ircwatch.expect("Round 2 begins").await;
    tokio::join!(ircwatch.pump(QUIET), watcher.pump(QUIET));

    // IRC is unchanged: each cast's steps on a line of their own.
    let on_irc = ircwatch.bot_lines();
    assert_eq!(count(&on_irc, "Round 1, steps 2–5"), 1, "{on_irc:#?}");

    // Matrix: round 1 is one message, its later part an edit of it.
    let events = timeline(&watcher, &room).await;
    let all = listing(&events);
    let first = events
        .iter()
        .position(|e| body(e).contains("Round 1, step 0"))
        .unwrap_or_else(|| panic!("no round 1 in the room:\n{all}"));
    let round = &events[first..];
    let shown = shown_texts(round);
    assert!(
        shown.iter().skip(1).all(|e| !body(e).contains("Round 1, step")),
        "round 1's later steps are no message of their own:\n{all}"
    );
    assert!(!is_edit(&round[0]) && !body(&round[0]).contains("step 2"), "{all}");
    let edits = edits_of(&events, &round[0]);
    let last = edits.last().unwrap_or_else(|| panic!("round 1's message was never edited:\n{all}"));
    assert!(body(last).starts_with("* Round 1, step 0"), "the edit's fallback body is starred: {last}");
    let told = last["content"]["m.new_content"]["body"].as_str().unwrap_or_default();
    for needle in
        ["Round 1, step 0", "Round 1, step 1", "Round 1, step 5", "Round 1 settles", "Round 2 begins"]
    {
        assert!(told.contains(needle), "the round's message holds {needle:?}: {told}\n{all}");
    }
    // At most 3 events a client shows for the round (its message, picture, the previous
    // picture's removal), and Noah highlighted at most once, edits included.
    let counted = round.iter().filter(|e| !is_edit(e)).count();
    assert!(counted <= 3, "{counted} events for round 1:\n{all}");
    let noah_mentions = round.iter().filter(|e| mentioned(e).contains(&noah.id().to_owned())).count();
    assert!(noah_mentions <= 1, "Noah mentioned {noah_mentions} times:\n{all}");
    drop(daemon);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thaum_phase_is_one_message_edited_in_place() {
    let (irc, synapse) = servers();
    synapse.register(BOT, &password(BOT), false).unwrap_or_else(|e| panic!("{e}"));
    let mut watcher = Mx::new(&synapse, "watcher", "Watcher").await;
    let mut merlin = Mx::new(&synapse, "mage", "Merlin").await;
    let room = bridge_room(&mut watcher, &mut [&mut merlin]).await;
    let (mut alice, mut ircwatch) =
        tokio::join!(Irc::connect(irc.port(), "alice"), Irc::connect(irc.port(), "ircwatch"));
    let daemon = start_daemon(&irc, &synapse, &room, &Extra::default());
    until_bot_on_irc(&mut alice).await;
    until_bot_in(&mut merlin, &room).await;
    for user in [&mut watcher, &mut merlin] {
        user.settle().await;
    }
    for client in [&mut alice, &mut ircwatch] {
        client.settle().await;
    }
    alice.say("!new thaum").await;
    watcher.expect_in(&room, "alice opens a Thaum table").await;
    merlin.say(&room, "!join").await;
    ircwatch.expect("Merlin joins the Thaum table").await;

    // Phase II: its beginning, then three actions.
    alice.say("!phase next").await;
    ircwatch.expect("Phase II begins").await;
    alice.say("!coins Merlin +1").await;
    ircwatch.expect("alice changes Merlin's coins: 0 → 1").await;
    alice.say("!coins Merlin +1").await;
    ircwatch.expect("alice changes Merlin's coins: 1 → 2").await;
    alice.say("!coins alice +1").await;
    ircwatch.expect("alice changes alice's coins: 0 → 1").await;
    watcher.expect_in(&room, "alice changes alice's coins: 0 → 1").await;
    tokio::join!(ircwatch.pump(QUIET), watcher.pump(QUIET));

    let events = timeline(&watcher, &room).await;
    let all = listing(&events);
    let began = events
        .iter()
        .position(|e| !is_edit(e) && body(e).contains("Phase II begins"))
        .unwrap_or_else(|| panic!("no Phase II in the room:\n{all}"));
    let phase = &events[began..];
    let shown = shown_texts(phase);
    assert_eq!(shown.len(), 1, "phase II is one message:\n{all}");
    let edits = edits_of(&events, &phase[0]);
    let told = edits
        .last()
        .and_then(|e| e["content"]["m.new_content"]["body"].as_str())
        .unwrap_or_else(|| panic!("phase II's message was never edited:\n{all}"));
    for needle in ["Phase II begins", "0 → 1", "1 → 2", "alice's coins: 0 → 1"] {
        assert!(told.contains(needle), "phase II's message holds {needle:?}: {told}\n{all}");
    }
    drop(daemon);
}
