//! Rooms: who operates a room (power level 50, nobody in a direct chat), a room left for
//! good is not joined again by a later login, and invites from outside the allow list
//! are declined.

use super::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operators_are_those_with_power_level_50_and_nobody_in_a_direct_chat() {
    let server = start_server(Options::default());
    let store = tempfile::tempdir().expect("temp dir");
    let (bot, mut alice, mut carol, room) = bot_in_a_room(&server, store.path()).await;
    let bot_id = server.user_id("spellbot");
    let carol_id = carol.user_id().to_owned();

    // alice created the room (power level 100, unbounded in room version 12); carol is a
    // plain member until alice makes her a moderator.
    ok(alice.send_text(&room, "!stop").await);
    let got = recv(&bot.transport, WAIT).await;
    assert!(got.operator && !got.private, "{got:?}");
    ok(carol.send_text(&room, "!stop").await);
    let got = recv(&bot.transport, WAIT).await;
    assert!(!got.operator, "{got:?}");
    ok(alice.set_power_level(&room, &carol_id, 50).await);
    ok(carol.send_text(&room, "!stop").await);
    let got = recv(&bot.transport, WAIT).await;
    assert!(got.operator, "a moderator: {got:?}");

    // In a direct chat nobody operates, not even its creator.
    let dm = ok(alice.create_dm(&bot_id, false).await);
    until_joined(&bot.transport, &dm).await;
    ok(alice.send_text(&dm, "!stop").await);
    let got = recv(&bot.transport, WAIT).await;
    assert_eq!(got.room.as_str(), dm);
    assert!(got.private && !got.operator, "{got:?}");
    bot.stop().await;
}

/// Waits until the server no longer has `user` joined to `room`.
async fn until_not_member(watcher: &MatrixClient, room: &str, user: &str) {
    let deadline = Instant::now() + WAIT;
    while ok(watcher.joined_members(room).await).iter().any(|m| m == user) {
        assert!(Instant::now() < deadline, "{user} is still in {room} after {WAIT:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_room_left_is_not_joined_again_by_a_later_login() {
    let server = start_server(Options::default());
    let store = tempfile::tempdir().expect("temp dir");
    let (bot, mut alice, _carol, room) = bot_in_a_room(&server, store.path()).await;
    let bot_id = server.user_id("spellbot");
    let room_id = RoomId::new(&room);
    // Joined as a configured room would be, then left.
    bot.transport.join(&room_id).await.expect("joined");
    bot.transport.leave(&room_id).await.expect("left");
    until_not_member(&alice, &room, &bot_id).await;
    assert!(!bot.transport.joined_rooms().contains(&room_id));

    // The homeserver drops the session: the transport logs in again (a new device) and
    // joins its rooms again, but not this one.
    let device = bot.transport.device_id().expect("a device");
    let token = bot.transport.client().and_then(|c| c.access_token()).expect("a token");
    ok(ok(MatrixClient::from_token(&server.base_url(), &bot_id, &token)).logout().await);
    let deadline = Instant::now() + WAIT;
    while bot.transport.device_id().is_none_or(|d| d == device)
        || *bot.transport.connection().borrow() != Connection::Up
    {
        assert!(Instant::now() < deadline, "the transport did not log in again within {WAIT:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(QUIET).await;
    assert!(!ok(alice.joined_members(&room).await).contains(&bot_id), "joined again after a new login");
    bot.stop().await;

    // Back in the room (invited again), then configured at start but left before the
    // first login: it leaves once logged in and stays out.
    ok(alice.invite(&room, &bot_id).await);
    let again = Running::started(options(&server, "spellbot", store.path()), &server).await;
    until_joined(&again.transport, &room).await;
    again.stop().await;
    let mut configured = options(&server, "spellbot", store.path());
    configured.rooms = vec![room.clone()];
    let restarted = Running::start(configured);
    restarted.transport.leave(&room_id).await.expect("left (after the login)");
    assert!(restarted.transport.wait_up(WAIT).await, "up");
    until_not_member(&alice, &room, &bot_id).await;
    tokio::time::sleep(QUIET).await;
    assert!(!ok(alice.joined_members(&room).await).contains(&bot_id), "joined again after leaving");
    assert!(!restarted.transport.joined_rooms().contains(&room_id));
    restarted.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invites_from_outside_the_allow_list_are_declined() {
    let server = start_server(Options::default());
    let store = tempfile::tempdir().expect("temp dir");
    let bot_id = register(&server, "spellbot");
    register(&server, "mallory");
    let mut mallory = login(&server, "mallory").await;
    let mut options = options(&server, "spellbot", store.path());
    options.invite_allow = vec!["@alice:localhost".to_owned()];
    let bot = Running::started(options, &server).await;
    let room = ok(mallory.create_room("Trap", &[&bot_id], false).await);
    // The decline shows up as the bot leaving; it never joins.
    let deadline = Instant::now() + WAIT;
    loop {
        let event = ok(mallory.sync_once(1000).await).into_iter().find(|e| {
            e.event_type == "m.room.member"
                && e.state_key.as_deref() == Some(bot_id.as_str())
                && e.content["membership"] == "leave"
        });
        if event.is_some() {
            break;
        }
        assert!(Instant::now() < deadline, "the bot did not decline mallory's invite");
    }
    assert!(!bot.transport.joined_rooms().iter().any(|r| r.as_str() == room));
    bot.stop().await;
}
