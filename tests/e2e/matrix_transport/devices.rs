//! The bot's device: a restart keeps it and never replays history, and an access token
//! login uses the token's device.

use super::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_keeps_the_device_and_never_replays_history() {
    let server = start_server(Options::default());
    let store = tempfile::tempdir().expect("temp dir");
    let bot_id = register(&server, "spellbot");
    register(&server, "alice");
    let mut alice = login(&server, "alice").await;
    // Before the transport ever runs, the bot account is in a room with old commands
    // (joined by a raw client on another device).
    let mut bot_raw = login(&server, "spellbot").await;
    let room = ok(alice.create_room("History", &[&bot_id], false).await);
    ok(bot_raw.accept_invite(&room).await);
    ok(alice.send_text(&room, "!old-one").await);
    ok(alice.send_text(&room, "!old-two").await);
    let mut devices_before = device_ids(&bot_raw).await;
    devices_before.retain(|d| Some(d.as_str()) != bot_raw.device_id());
    ok(bot_raw.logout().await);

    // First start: the first sync's history is skipped.
    let first = Running::started(options(&server, "spellbot", store.path()), &server).await;
    let device = first.transport.device_id().expect("a device");
    nothing_more(&first.transport, QUIET).await;
    ok(alice.send_text(&room, "!new").await);
    assert_eq!(recv(&first.transport, WAIT).await.text, "!new");
    first.stop().await;

    // Said while the bot was down: new, so delivered after the restart; nothing older.
    ok(alice.send_text(&room, "!while-down").await);
    let second = Running::started(options(&server, "spellbot", store.path()), &server).await;
    assert_eq!(
        second.transport.device_id().as_deref(),
        Some(device.as_str()),
        "the same device after a restart"
    );
    assert_eq!(recv(&second.transport, WAIT).await.text, "!while-down");
    nothing_more(&second.transport, QUIET).await;
    ok(alice.send_text(&room, "!after").await);
    assert_eq!(recv(&second.transport, WAIT).await.text, "!after");
    let devices = second.transport.client().expect("logged in").devices().await.expect("device list");
    let mut ids: Vec<String> = devices.devices.iter().map(|d| d.device_id.to_string()).collect();
    let mut expected = devices_before;
    expected.push(device);
    ids.sort();
    expected.sort();
    assert_eq!(ids, expected, "two starts made one device (besides the one registration made)");
    second.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_access_token_login_uses_the_tokens_device() {
    let server = start_server(Options::default());
    let store = tempfile::tempdir().expect("temp dir");
    // Registration made a device with no E2EE keys yet: its token is what an operator
    // would configure.
    let (bot_id, token) = ok(server.register("spellbot", "spellbot-password", false));
    let bot_raw = ok(MatrixClient::from_token(&server.base_url(), &bot_id, &token));
    let registered = device_ids(&bot_raw).await;
    assert_eq!(registered.len(), 1, "{registered:?}");
    let mut options = options(&server, "spellbot", store.path());
    options.login = Login::AccessToken(token);
    for _ in 0..2 {
        let bot = Running::started(options.clone(), &server).await;
        assert_eq!(bot.transport.device_id().as_deref(), Some(registered[0].as_str()));
        bot.stop().await;
    }
    assert_eq!(device_ids(&bot_raw).await, registered, "no device was added");
    let saved = std::fs::read_to_string(store.path().join("session.json")).expect("session saved");
    assert!(saved.contains(&registered[0]));
}
