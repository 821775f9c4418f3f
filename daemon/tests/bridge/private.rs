//! A Matrix private chat is one the bot can vouch for (issue 29, item 1: an identity
//! takeover). mallory's public room, where the victim is left alone with the bot, gets
//! no link code, and mallory, back in it, reads none; a direct chat the player made
//! properly is used; and once a third person has been in it, it never is again.

use super::support::*;

/// The state event `kind` of `room`, as `client` reads it.
async fn state(client: &MatrixClient, room: &str, kind: &str) -> Value {
    let path = format!("/_matrix/client/v3/rooms/{}/state/{kind}/", encode(room));
    client.call(Method::GET, &path, None).await.unwrap_or_else(|e| panic!("reading {kind} of {room}: {e}"))
}

/// The bodies of the last 100 messages in `room` that `client` may read.
async fn history(client: &MatrixClient, room: &str) -> Vec<String> {
    let path = format!("/_matrix/client/v3/rooms/{}/messages?dir=b&limit=100", encode(room));
    let answer = client.call(Method::GET, &path, None).await.unwrap_or_else(|e| panic!("{e}"));
    answer["chunk"]
        .as_array()
        .map(|events| {
            events.iter().filter_map(|e| e["content"]["body"].as_str().map(str::to_owned)).collect()
        })
        .unwrap_or_default()
}

/// The next link code the bot sends `user` anywhere, and the room it went to.
async fn link_code(user: &mut Mx) -> MxMessage {
    let bot = bot_id();
    user.expect_where("a link code", move |m| m.sender == bot && m.body.contains("Your link code is")).await
}

/// `user` accepts the bot's invite to a new direct chat (the first one pending).
async fn accept_bots_invite(user: &mut Mx) -> String {
    let invite = user
        .client
        .wait_invite(WAIT)
        .await
        .unwrap_or_else(|| panic!("{} was not invited by the bot", user.name));
    assert_eq!((invite.inviter.as_str(), invite.is_direct), (bot_id().as_str(), true), "{invite:?}");
    user.client.accept_invite(&invite.room_id).await.unwrap_or_else(|e| panic!("{e}"));
    invite.room_id
}

/// Checks that `room` is the private chat the bot makes: made by the bot, invite-only,
/// its history for members only.
async fn is_the_bots_private_chat(client: &MatrixClient, room: &str) {
    assert_eq!(state(client, room, "m.room.join_rules").await["join_rule"], "invite");
    assert_eq!(state(client, room, "m.room.history_visibility").await["history_visibility"], "invited");
    let create = format!("/_matrix/client/v3/rooms/{}/state", encode(room));
    let events = client.call(Method::GET, &create, None).await.unwrap_or_else(|e| panic!("{e}"));
    let creator = events
        .as_array()
        .and_then(|all| all.iter().find(|e| e["type"] == "m.room.create"))
        .map(|e| e["sender"].clone());
    assert_eq!(creator, Some(Value::from(bot_id())), "{events}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_room_of_two_someone_else_made_gets_no_link_code_and_its_maker_reads_none() {
    let (irc, synapse) = servers();
    synapse.register(BOT, &password(BOT), false).unwrap_or_else(|e| panic!("{e}"));
    the_trap(&irc, &synapse, Extra::default()).await;
}

/// The same in appservice mode, where messages come pushed by the homeserver as well.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_appservice_mode_a_room_of_two_someone_else_made_gets_no_link_code() {
    let (irc, synapse, appservice) = appservice_servers();
    the_trap(&irc, &synapse, Extra { appservice: Some(appservice), ..Extra::default() }).await;
}

/// mallory's public room, where she leaves the victim alone with the bot: the victim's
/// `!link` there is not private, the code goes to a private chat the bot opens (and says
/// so), and mallory, back in her room, reads no code and cannot join the bot's chat.
async fn the_trap(irc: &InspIrcd, synapse: &Synapse, extra: Extra) {
    let started = Instant::now();
    let mut watcher = Mx::new(synapse, "watcher", "Watcher").await;
    let mut victim = Mx::new(synapse, "victim", "Victim").await;
    let mut mallory = Mx::new(synapse, "mallory", "Mallory").await;
    let room = bridge_room(&mut watcher, &mut []).await;
    let _daemon = start_daemon(irc, synapse, &room, &extra);
    until_bot_in(&mut watcher, &room).await;

    // The trap: mallory's public room (anyone joins, history shared), the bot and the
    // victim invited; the victim joins, mallory leaves. The bot and the victim are alone.
    let body = json!({"preset": "public_chat", "name": "Lobby", "invite": [bot_id(), victim.id()]});
    let made = mallory.client.call(Method::POST, "/_matrix/client/v3/createRoom", Some(&body)).await;
    let trap = made.unwrap_or_else(|e| panic!("{e}"))["room_id"].as_str().expect("a room id").to_owned();
    victim.client.accept_invite(&trap).await.unwrap_or_else(|e| panic!("{e}"));
    until_bot_in(&mut victim, &trap).await;
    mallory.client.leave(&trap).await.unwrap_or_else(|e| panic!("{e}"));
    // Answered after mallory's leave: the bot has seen it.
    until_bot_in(&mut victim, &trap).await;
    victim.settle().await;
    eprintln!("set up in {:?}", started.elapsed());

    victim.say(&trap, "!link").await;
    victim.expect_in(&trap, "I sent you a link code privately.").await;
    victim.expect_in(&trap, "I've opened our direct chat").await;
    let dm = accept_bots_invite(&mut victim).await;
    let code = link_code(&mut victim).await;
    assert_eq!(
        code.room_id, dm,
        "the link code went to the bot's own private chat, not mallory's room: {code}"
    );
    is_the_bots_private_chat(&victim.client, &dm).await;
    // The bot vouches for its own chat: the next code goes there too, no new room.
    victim.say(&trap, "!link").await;
    let again = link_code(&mut victim).await;
    assert_eq!(again.room_id, dm, "{again}");

    // mallory comes back to her room and reads all of it: no code. The bot's chat she
    // cannot even join.
    mallory.client.join(&trap).await.unwrap_or_else(|e| panic!("{e}"));
    let read = history(&mallory.client, &trap).await;
    assert!(
        read.iter().any(|b| b.contains("I sent you a link code privately")),
        "she reads the room: {read:?}"
    );
    assert!(!read.iter().any(|b| b.contains("link code is")), "mallory read a link code: {read:?}");
    assert!(mallory.client.join(&dm).await.is_err(), "mallory joined the victim's private chat");
    // A command typed in her room is answered there, in the open, never as if private.
    victim.pump(QUIET).await;
    assert!(
        !victim.bot_lines(&trap).iter().any(|l| l.contains("link code is")),
        "{:?}",
        victim.bot_lines(&trap)
    );
    assert!(victim.client.invites().is_empty(), "another room was opened: {:?}", victim.client.invites());
    eprintln!("the test took {:?}", started.elapsed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_players_direct_chat_is_used_until_a_third_person_has_been_in_it() {
    let started = Instant::now();
    let (irc, synapse) = servers();
    synapse.register(BOT, &password(BOT), false).unwrap_or_else(|e| panic!("{e}"));
    let mut watcher = Mx::new(&synapse, "watcher", "Watcher").await;
    let mut bobby = Mx::new(&synapse, "bobby", "Bobby").await;
    let mut carol = Mx::new(&synapse, "carol", "Carol").await;
    let room = bridge_room(&mut watcher, &mut [&mut bobby]).await;
    // bobby's direct chat with the bot: is_direct, invite-only, history for members only.
    direct_rooms(&mut [&mut bobby]).await;
    let dm = bobby.dm.clone().expect("a direct room");
    let _daemon = start_daemon(&irc, &synapse, &room, &Extra::default());
    until_bot_everywhere(&room, &mut watcher, &mut [&mut bobby]).await;
    bobby.settle().await;
    eprintln!("set up in {:?}", started.elapsed());

    // His own direct chat is private: the code comes there, and no other room is opened.
    bobby.say(&dm, "!link").await;
    let code = link_code(&mut bobby).await;
    assert_eq!(code.room_id, dm, "{code}");
    bobby.pump(QUIET).await;
    assert!(!bobby.bot_lines(&dm).iter().any(|l| l.contains("I sent you")), "{:?}", bobby.bot_lines(&dm));
    assert!(bobby.client.invites().is_empty(), "{:?}", bobby.client.invites());

    // carol is let in, and leaves: the bot and bobby are alone again, but carol could
    // come back (invited again) and read what was said after she left.
    bobby.client.invite(&dm, carol.id()).await.unwrap_or_else(|e| panic!("{e}"));
    carol.client.accept_invite(&dm).await.unwrap_or_else(|e| panic!("{e}"));
    carol.client.leave(&dm).await.unwrap_or_else(|e| panic!("{e}"));
    // Answered after carol's leave: the bot has seen it.
    until_bot_in(&mut bobby, &dm).await;
    bobby.settle().await;

    bobby.say(&dm, "!link").await;
    bobby.expect_in(&dm, "I sent you a link code privately.").await;
    let new = accept_bots_invite(&mut bobby).await;
    let code = link_code(&mut bobby).await;
    assert_eq!(code.room_id, new, "the code went to a new private chat, not the one carol was in: {code}");
    assert_ne!(new, dm);
    is_the_bots_private_chat(&bobby.client, &new).await;
    bobby.pump(QUIET).await;
    assert!(!bobby.bot_lines(&dm).iter().any(|l| l.contains("link code is")), "{:?}", bobby.bot_lines(&dm));
    eprintln!("the test took {:?}", started.elapsed());
}
