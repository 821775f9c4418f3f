//! A homeserver that is down when the bot starts, or restarts under it, is survived, and
//! `M_LIMIT_EXCEEDED` is waited out with messages kept in order.

use super::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn homeserver_down_at_start_and_restarts_are_survived() {
    let mut server = start_server(Options::default());
    let store = tempfile::tempdir().expect("temp dir");
    register(&server, "spellbot");
    ok(server.stop());
    // Down at start: the transport keeps trying and comes up with the server.
    let bot = Running::start(options(&server, "spellbot", store.path()));
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(*bot.transport.connection().borrow(), Connection::Down);
    assert!(!bot.task.is_finished(), "the transport does not exit while the homeserver is down");
    ok(tokio::task::block_in_place(|| server.restart()));
    assert!(bot.transport.wait_up(WAIT).await, "up after the homeserver started");

    let bot_id = server.user_id("spellbot");
    register(&server, "alice");
    register(&server, "carol");
    let mut alice = login(&server, "alice").await;
    let room = ok(alice.create_room("Magic", &[&bot_id, "@carol:localhost"], false).await);
    until_joined(&bot.transport, &room).await;
    ok(alice.send_text(&room, "!before").await);
    assert_eq!(recv(&bot.transport, WAIT).await.text, "!before");

    // A restart mid-sync: the connection drops, comes back, and messages flow both ways.
    let reconnects = bot.transport.reconnects();
    ok(tokio::task::block_in_place(|| server.restart()));
    ok(alice.send_text(&room, "!after-restart").await);
    assert_eq!(recv(&bot.transport, WAIT).await.text, "!after-restart");
    assert!(bot.transport.reconnects() > reconnects, "the transport noticed and reconnected");
    ok(alice.catch_up().await);
    bot.transport.send(&Destination::Room(RoomId::new(&room)), &"still here".into()).await.expect("sent");
    assert_eq!(next_message_from(&mut alice, &bot_id, WAIT).await.content["body"], "still here");
    bot.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limits_are_waited_out_and_messages_keep_their_order() {
    let server = start_server(Options {
        rate_limited: true,
        extra_config: "rc_message: {per_second: 2, burst_count: 3}\n".to_owned(),
        ..Options::default()
    });
    let store = tempfile::tempdir().expect("temp dir");
    let (bot, mut alice, _carol, room) = bot_in_a_room(&server, store.path()).await;
    let bot_id = server.user_id("spellbot");
    let to = Destination::Room(RoomId::new(&room));
    let started = Instant::now();
    for i in 0..8 {
        bot.transport.send(&to, &format!("line {i}").as_str().into()).await.expect("sent despite the limit");
    }
    let took = started.elapsed();
    for i in 0..8 {
        assert_eq!(next_message_from(&mut alice, &bot_id, WAIT).await.content["body"], format!("line {i}"));
    }
    assert!(took >= Duration::from_millis(1500), "the limit applied (8 sends took {took:?})");
    bot.stop().await;
}
