//! A `[[bridge]]` names its Matrix room by alias (issue 17, item 6): the daemon looks it
//! up when it starts and relays both ways through the room it points to; when the room's
//! admins point the alias at another room, a SIGHUP makes the bridge follow it (the bot
//! joins the new room, and chat goes there instead).

use super::support::*;

const ALIAS: &str = "#magic:localhost";

/// Points `ALIAS` at `room` (removing what it pointed to before).
async fn point_alias(user: &Mx, room: &str) {
    let path = format!("/_matrix/client/v3/directory/room/{}", encode(ALIAS));
    let (status, answer) =
        user.client.request(Method::DELETE, &path, None).await.unwrap_or_else(|e| panic!("{e}"));
    assert!(status == 200 || status == 404, "deleting the alias answered {status}: {answer}");
    user.client
        .call(Method::PUT, &path, Some(&json!({"room_id": room})))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
}

/// Waits until the daemon's log says `alias` was looked up to `room`.
fn until_looked_up(daemon: &Daemon, room: &str) {
    let deadline = Instant::now() + STARTUP;
    loop {
        let log = daemon.log();
        if log.lines().any(|l| l.contains("alias looked up") && l.contains(room)) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the alias was not looked up to {room}; the log ends:\n{}",
            daemon.log_tail(40)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bridge_named_by_alias_relays_and_follows_the_alias_to_a_new_room() {
    let (irc, synapse) = servers();
    synapse.register(BOT, &password(BOT), false).unwrap_or_else(|e| panic!("{e}"));
    let mut watcher = Mx::new(&synapse, "watcher", "Watcher").await;
    let first = bridge_room(&mut watcher, &mut []).await;
    point_alias(&watcher, &first).await;
    let mut alice = Irc::connect(irc.port(), "alice").await;
    let mut daemon = start_daemon(&irc, &synapse, ALIAS, &Extra::default());
    until_bot_on_irc(&mut alice).await;
    until_bot_in(&mut watcher, &first).await;
    tokio::task::block_in_place(|| until_looked_up(&daemon, &first));
    alice.settle().await;
    watcher.settle().await;

    alice.say("hello through the alias").await;
    watcher.expect_in(&first, "<alice> hello through the alias").await;
    watcher.say(&first, "hello back").await;
    alice.expect("<Watcher> hello back").await;

    // The room's admins make a new room and move the alias to it; the config is unchanged.
    let second =
        watcher.client.create_room("magic 2", &[bot_id()], false).await.unwrap_or_else(|e| panic!("{e}"));
    point_alias(&watcher, &second).await;
    daemon.hangup().unwrap_or_else(|e| panic!("{e}"));
    tokio::task::block_in_place(|| until_looked_up(&daemon, &second));
    until_bot_in(&mut watcher, &second).await;
    alice.settle().await;
    watcher.settle().await;

    alice.say("hello in the new room").await;
    watcher.expect_in(&second, "<alice> hello in the new room").await;
    watcher.say(&second, "the new room answers").await;
    alice.expect("<Watcher> the new room answers").await;
    watcher.say(&first, "the old room is no longer bridged").await;
    alice.pump(QUIET).await;
    watcher.pump(QUIET).await;
    let relayed = alice.channel_lines();
    assert!(
        !relayed.iter().any(|(_, text)| text.contains("no longer bridged")),
        "the old room is still relayed: {relayed:?}"
    );
    assert!(
        !watcher.room_lines(&first).iter().any(|(_, text)| text.contains("hello in the new room")),
        "IRC chat still went to the old room"
    );
    daemon.ensure_running().unwrap_or_else(|e| panic!("{e}"));
}

/// Issue 32: the router's config is one, applied through the engine. With the bridge's
/// room named by alias (looked up after start), a store write that fails (another
/// connection holds the database) reloads the router from the store with that config,
/// and board pictures still go to the bridged Matrix room (before, the alias's lookup
/// rebuilt the config without the networks that show pictures).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_an_alias_lookup_and_a_failed_write_board_pictures_still_post() {
    let (irc, synapse) = servers();
    synapse.register(BOT, &password(BOT), false).unwrap_or_else(|e| panic!("{e}"));
    let mut watcher = Mx::new(&synapse, "watcher", "Watcher").await;
    let room = bridge_room(&mut watcher, &mut []).await;
    point_alias(&watcher, &room).await;
    let mut alice = Irc::connect(irc.port(), "alice").await;
    let mut daemon = start_daemon(&irc, &synapse, ALIAS, &Extra::default());
    until_bot_on_irc(&mut alice).await;
    until_bot_in(&mut watcher, &room).await;
    tokio::task::block_in_place(|| until_looked_up(&daemon, &room));
    watcher.settle().await;

    watcher.say(&room, "!new thaum").await;
    watcher.expect_in(&room, "opens a Thaum table").await;
    // A write fails: another connection holds the database until the move is refused.
    let holder = rusqlite::Connection::open(daemon.path("games.db")).unwrap_or_else(|e| panic!("{e}"));
    holder.execute_batch("BEGIN EXCLUSIVE;").unwrap_or_else(|e| panic!("locking the database: {e}"));
    watcher.say(&room, "!phase next").await;
    watcher.expect_in(&room, "that was not taken").await;
    holder.execute_batch("COMMIT;").unwrap_or_else(|e| panic!("{e}"));
    assert!(
        daemon.log().contains("could not save"),
        "the write failed; the log ends:\n{}",
        daemon.log_tail(40)
    );

    // The reloaded router still sends the table's board as a picture.
    watcher.settle().await;
    watcher.say(&room, "!board").await;
    let bot = bot_id();
    let deadline = Instant::now() + WAIT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let Some(event) = watcher.client.next_event(left).await else {
            panic!(
                "no board picture within {WAIT:?} after the reload; the log ends:\n{}",
                daemon.log_tail(60)
            );
        };
        let picture = event.event_type == "m.room.message" && event.content["msgtype"] == "m.image";
        if event.sender == bot && event.room_id == room && picture {
            break;
        }
    }
    daemon.ensure_running().unwrap_or_else(|e| panic!("{e}"));
}
