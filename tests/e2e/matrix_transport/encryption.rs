//! E2EE: an encrypted direct room and an encrypted room work both ways, an invite-only
//! room the player made, with its history for members only and nobody but the player and
//! the bot in it, is their private chat until a third joins, and a room is told
//! once when the bot cannot decrypt a message. The other side is a second
//! `MatrixTransport` (the raw client has no E2EE).

use super::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn encrypted_rooms_and_direct_messages_work_both_ways() {
    let server = start_server(Options::default());
    let bot_store = tempfile::tempdir().expect("temp dir");
    let alice_store = tempfile::tempdir().expect("temp dir");
    let bot_id = register(&server, "spellbot");
    let alice_id = register(&server, "alice");
    let carol_id = register(&server, "carol");
    // alice's transport is a bot too: it must not tell the room about carol's garbage.
    let mut alice_options = options(&server, "alice", alice_store.path());
    alice_options.decrypt_grace = Duration::from_secs(3600);
    // The bot is configured to encrypt the direct rooms it creates (`dm_encryption`).
    let mut bot_options = options(&server, "spellbot", bot_store.path());
    bot_options.dm_encryption = true;
    let (bot, alice) =
        tokio::join!(Running::started(bot_options, &server), Running::started(alice_options, &server),);

    // alice (a second transport, with E2EE) creates an encrypted room and invites the bot.
    let client = alice.transport.client().expect("logged in");
    let mut request = CreateRoom::new();
    request.name = Some("Secret duel".to_owned());
    request.preset = Some(RoomPreset::PrivateChat);
    request.invite = vec![OwnedUserId::try_from(bot_id.as_str()).expect("user id")];
    // Its history for joined members only: a room the bot can vouch for as private.
    request.initial_state = vec![
        InitialStateEvent::with_empty_state_key(RoomEncryptionEventContent::with_recommended_defaults())
            .to_raw_any(),
        InitialStateEvent::with_empty_state_key(RoomHistoryVisibilityEventContent::new(
            HistoryVisibility::Joined,
        ))
        .to_raw_any(),
    ];
    let room = client.create_room(request).await.expect("room created").room_id().to_string();
    until_joined(&bot.transport, &room).await;
    until_member(&alice.transport, &room, &bot_id).await;

    let to_room = Destination::Room(RoomId::new(&room));
    alice.transport.send(&to_room, &"!games".into()).await.expect("sent");
    let got = recv(&bot.transport, WAIT).await;
    assert_eq!((got.text.as_str(), got.sender.as_str()), ("!games", alice_id.as_str()), "{got:?}");
    assert_eq!(got.room.as_str(), room);
    assert!(got.private, "alice's invite-only room, only she and the bot ever in it: private");
    until_member(&bot.transport, &room, &alice_id).await;
    bot.transport.send(&to_room, &RichText::new().bold("Duel").text(" begins").into()).await.expect("sent");
    let answer = recv(&alice.transport, WAIT).await;
    assert_eq!((answer.text.as_str(), answer.sender.as_str()), ("Duel begins", bot_id.as_str()));

    // Latency in the encrypted room, transport to transport, both ways.
    let (mut to_bot, mut to_alice) = (Vec::new(), Vec::new());
    for i in 0..30 {
        let started = Instant::now();
        alice.transport.send(&to_room, &format!("!e2e {i}").as_str().into()).await.expect("sent");
        assert_eq!(recv(&bot.transport, WAIT).await.text, format!("!e2e {i}"));
        to_bot.push(started.elapsed());
        let started = Instant::now();
        bot.transport.send(&to_room, &format!("e2e {i}").as_str().into()).await.expect("sent");
        assert_eq!(recv(&alice.transport, WAIT).await.text, format!("e2e {i}"));
        to_alice.push(started.elapsed());
    }
    for (name, samples) in [("alice→bot", &mut to_bot), ("bot→alice", &mut to_alice)] {
        let (p50, p90) = (percentile(samples, 0.5), percentile(samples, 0.9));
        eprintln!("matrix latency, encrypted room, send()→recv() {name}: p50 {p50:?}, p90 {p90:?} over 30");
    }

    // While the room alice made has just the two of them, it is her private chat with
    // the bot: a private message goes there (no new room).
    bot.transport.send(&Destination::Private(PlayerId::new(&alice_id)), &"psst".into()).await.expect("sent");
    let psst = recv(&alice.transport, WAIT).await;
    assert_eq!((psst.text.as_str(), psst.room.as_str(), psst.private), ("psst", room.as_str(), true));

    // carol (raw client, no E2EE) joins and sends what nobody can decrypt: the bot waits
    // briefly for a key, then tells the room once (alice reads the notice).
    let mut carol = login(&server, "carol").await;
    let alice_client = alice.transport.client().expect("logged in");
    let alice_room =
        alice_client.get_room(<&_>::try_from(room.as_str()).expect("room id")).expect("in the room");
    alice_room
        .invite_user_by_id(&OwnedUserId::try_from(carol_id.as_str()).expect("user id"))
        .await
        .expect("invited");
    ok(carol.accept_invite(&room).await);
    let garbage = serde_json::json!({
        "algorithm": "m.megolm.v1.aes-sha2",
        "ciphertext": "AwgAEnB1bm5pbmc",
        "sender_key": "wqzGCNoyV9ELj6k6PA5E9/nUM0tKU5ojYVzKo8vh0RE",
        "device_id": "NOSUCHDEVICE",
        "session_id": "nosuchsession",
    });
    ok(carol.send_event(&room, "m.room.encrypted", garbage.clone()).await);
    let notice = recv(&alice.transport, WAIT).await;
    assert_eq!(notice.sender.as_str(), bot_id);
    assert!(notice.text.contains("could not decrypt a message from @carol:localhost"), "{notice:?}");
    ok(carol.send_event(&room, "m.room.encrypted", garbage).await);
    nothing_more(&alice.transport, Duration::from_secs(3)).await;
    nothing_more(&bot.transport, Duration::ZERO).await;

    // Now that carol is in that room it is no private chat: a private message makes the
    // bot create a direct room, encrypted as `dm_encryption` asks, and invite alice, whose
    // transport accepts and decrypts; her answer uses the same room.
    let secret = RichText::new().text("Your hidden move, ").mention(&PlayerId::new(&alice_id));
    bot.transport
        .send(&Destination::Private(PlayerId::new(&alice_id)), &secret.clone().into())
        .await
        .expect("sent");
    let dm = recv(&alice.transport, WAIT).await;
    assert_eq!(dm.text, "Your hidden move, alice");
    assert!(dm.private && dm.room.as_str() != room, "{dm:?}");
    let dm_room = alice
        .transport
        .client()
        .and_then(|c| c.get_room(<&_>::try_from(dm.room.as_str()).expect("room id")))
        .expect("alice is in the direct room");
    assert!(dm_room.latest_encryption_state().await.expect("state").is_encrypted());
    until_member(&bot.transport, dm.room.as_str(), &alice_id).await;
    alice
        .transport
        .send(&Destination::Private(PlayerId::new(&bot_id)), &"!move fire".into())
        .await
        .expect("sent");
    let reply = recv(&bot.transport, WAIT).await;
    assert_eq!(
        (reply.text.as_str(), reply.room.as_str(), reply.private),
        ("!move fire", dm.room.as_str(), true)
    );
    // A second private message reuses the room.
    bot.transport.send(&Destination::Private(PlayerId::new(&alice_id)), &"again".into()).await.expect("sent");
    let again = recv(&alice.transport, WAIT).await;
    assert_eq!((again.text.as_str(), again.room.as_str()), ("again", dm.room.as_str()));

    tokio::join!(bot.stop(), alice.stop());
}
