//! A message sent again with the same outbox key (issue 34: a standby that takes over
//! sends what its dead leader had sent but not marked sent) is one event on Synapse: the
//! transport uses the key as the transaction id, and the homeserver answers a repeat from
//! the same device with the first event's id. The bot restarted on its store (the same
//! device) sends the same key again and still makes no second event; another key does.

use super::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_outbox_key_sent_twice_makes_one_event() {
    let server = start_server(Options::default());
    let store = tempfile::tempdir().expect("temp dir");
    let (bot, mut alice, _carol, room) = bot_in_a_room(&server, store.path()).await;
    let bot_id = server.user_id("spellbot");
    let to = Destination::Room(RoomId::new(&room));
    let line = |text: &str, key: &str| Message { delivery: Some(key.to_owned()), ..text.into() };

    let first = bot.transport.send_noted(&to, &line("Round 3 begins", "sb-41")).await.expect("sent");
    let again = bot.transport.send_noted(&to, &line("Round 3 begins", "sb-41")).await.expect("sent again");
    assert!(first.id.is_some(), "the event id is known");
    assert_eq!(again.id, first.id, "the repeat is answered with the first event");
    bot.stop().await;

    // The bot again, on the same store and so the same device, as after a takeover.
    let bot = Running::started(options(&server, "spellbot", store.path()), &server).await;
    until_joined(&bot.transport, &room).await;
    let later = bot.transport.send_noted(&to, &line("Round 3 begins", "sb-41")).await.expect("sent");
    assert_eq!(later.id, first.id, "the same device's repeat is the first event");
    let other = bot.transport.send_noted(&to, &line("Round 3 ends", "sb-42")).await.expect("sent");
    assert_ne!(other.id, first.id, "another outbox row is another event");

    let one = next_message_from(&mut alice, &bot_id, WAIT).await;
    assert_eq!(one.content["body"], "Round 3 begins");
    let two = next_message_from(&mut alice, &bot_id, WAIT).await;
    assert_eq!(two.content["body"], "Round 3 ends", "\"Round 3 begins\" arrived once");
    // Nothing after them.
    let deadline = Instant::now() + QUIET;
    while let Some(event) = alice.next_event(deadline.saturating_duration_since(Instant::now())).await {
        assert!(
            !(event.sender == bot_id && event.event_type == "m.room.message"),
            "nothing more from the bot, got {:?}",
            event.content
        );
    }
    bot.stop().await;
}
