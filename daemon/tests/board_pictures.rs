//! Board pictures in Matrix (issue 18): `spellbridge run` as a child process against a
//! real Synapse on loopback, players as raw clients in an unencrypted room.
//!
//! - After a Thaum phase ends and on `!board` the bot sends `m.image` with its info
//!   (width, height, size, `image/png`), an `mxc://` url and a text `body`; each new
//!   picture of the table redacts the previous one, also across a restart of the daemon
//!   (the last event id is kept in the Matrix store).
//! - With `board_images = false` no picture is sent, and `!board` answers in text.
//! - A Nim table (the third game, which the daemon names nowhere) posts its picture too.
//!
//! These need Synapse (`tests/scripts/install-synapse.sh`); without it they fail with the
//! harness's message, they never skip. Every wait is bounded; a failure prints the
//! daemon's log.

use std::time::Duration;

use spellbridge_tests::harness::daemon::Daemon;
use spellbridge_tests::harness::endpoint::{free_port, get};
use spellbridge_tests::harness::matrix_client::{Event, MatrixClient};
use spellbridge_tests::harness::synapse::Synapse;
use tokio::time::Instant;

const BIN: &str = env!("CARGO_BIN_EXE_spellbridge");
const BOT: &str = "spellbridge";
/// How long one answer or picture may take.
const WAIT: Duration = Duration::from_secs(30);
/// How long the daemon may take to start, log in and answer in the room.
const STARTUP: Duration = Duration::from_secs(60);
/// How long to listen when checking that no picture comes.
const QUIET: Duration = Duration::from_secs(3);

fn password(localpart: &str) -> String {
    format!("{localpart}-password")
}

fn register(server: &Synapse, localpart: &str) -> String {
    server.register(localpart, &password(localpart), false).unwrap_or_else(|e| panic!("{e}")).0
}

/// The daemon with one `[[matrix]]` account; `board_images` as given (`None`: the default).
fn daemon(server: &Synapse, board_images: Option<bool>, http: u16) -> Daemon {
    let mut process = Daemon::new(BIN).unwrap_or_else(|e| panic!("{e}"));
    let password_file = process
        .write("bot-password", format!("{}\n", password(BOT)))
        .unwrap_or_else(|e| panic!("writing the password file: {e}"));
    let images = board_images.map(|on| format!("board_images = {on}\n")).unwrap_or_default();
    let config = format!(
        "prefix = \"!\"\n[store]\npath = \"games.db\"\n[http]\nlisten = \"127.0.0.1:{http}\"\n\
         [[matrix]]\nname = \"matrix\"\nhomeserver = \"{homeserver}\"\nuser_id = \"{user}\"\n\
         password = {{ file = {password_file:?} }}\nstore = {store:?}\n\
         invite_allow = [\"*:localhost\"]\nreconnect_delay = \"1s\"\n{images}\
         [matrix.user_limit]\nenabled = false\n",
        homeserver = server.base_url(),
        user = server.user_id(BOT),
        store = process.path("matrix-store"),
    );
    process.env("RUST_LOG", "info,spellbridge=debug");
    process.set_config(&config).unwrap_or_else(|e| panic!("{e}"));
    process.spawn().unwrap_or_else(|e| panic!("{e}"));
    process
}

/// carol in a room with the bot and alice (three members: not a direct chat), where the
/// bot has answered and carol has opened a Thaum table.
async fn thaum_room(server: &Synapse, daemon: &Daemon) -> (MatrixClient, String) {
    let (mut carol, _alice, room) = answered_room(server, daemon).await;
    carol.send_text(&room, "!new thaum").await.unwrap_or_else(|e| panic!("{e}"));
    let opened = carol.expect_message_matching(
        |m| m.sender == server.user_id(BOT) && m.body.contains("opens a Thaum table"),
        WAIT,
    );
    opened.await.unwrap_or_else(|e| panic!("{e}\n{}", daemon.log()));
    (carol, room)
}

/// carol and alice in a room with the bot (three members: not a direct chat), where the
/// bot has answered carol.
async fn answered_room(server: &Synapse, daemon: &Daemon) -> (MatrixClient, MatrixClient, String) {
    let bot = server.user_id(BOT);
    register(server, "carol");
    register(server, "alice");
    let base = server.base_url();
    let mut carol =
        MatrixClient::login(&base, "carol", &password("carol")).await.unwrap_or_else(|e| panic!("{e}"));
    let mut alice =
        MatrixClient::login(&base, "alice", &password("alice")).await.unwrap_or_else(|e| panic!("{e}"));
    let invite = [bot.clone(), alice.user_id().to_owned()];
    let room = carol.create_room("Boards", &invite, false).await.unwrap_or_else(|e| panic!("{e}"));
    alice.accept_invite(&room).await.unwrap_or_else(|e| panic!("{e}"));
    let deadline = Instant::now() + STARTUP;
    'answered: loop {
        assert!(Instant::now() < deadline, "the bot never answered in {room}; its log:\n{}", daemon.log());
        carol.send_text(&room, "!games").await.unwrap_or_else(|e| panic!("{e}"));
        let until = Instant::now() + Duration::from_secs(2);
        while let Some(m) = carol.next_message(until.saturating_duration_since(Instant::now())).await {
            if m.sender == bot && m.body.contains("Games:") {
                break 'answered;
            }
        }
    }
    carol.catch_up().await.unwrap_or_else(|e| panic!("{e}"));
    (carol, alice, room)
}

/// The next event from the bot in `room` for which `wanted` holds, within [`WAIT`].
async fn next_from_bot(
    client: &mut MatrixClient,
    room: &str,
    what: &str,
    daemon: &Daemon,
    wanted: impl Fn(&Event) -> bool,
) -> Event {
    let bot = format!("@{BOT}:localhost");
    let deadline = Instant::now() + WAIT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match client.next_event(left).await {
            Some(event) if event.sender == bot && event.room_id == room && wanted(&event) => return event,
            Some(_) => {}
            None => panic!("no {what} from the bot within {WAIT:?}; the daemon's log:\n{}", daemon.log()),
        }
    }
}

fn is_image(event: &Event) -> bool {
    event.event_type == "m.room.message" && event.content["msgtype"] == "m.image"
}

/// The next board picture in `room`, checked: its info, url and text fallback.
async fn next_picture(client: &mut MatrixClient, room: &str, daemon: &Daemon) -> Event {
    let picture = next_from_bot(client, room, "board picture", daemon, is_image).await;
    let content = &picture.content;
    let info = &content["info"];
    assert_eq!(info["mimetype"], "image/png", "{picture}");
    assert_eq!(info["w"], 800, "{picture}");
    assert!(info["h"].as_u64().is_some_and(|h| h > 100), "{picture}");
    assert!(info["size"].as_u64().is_some_and(|size| size > 1000), "{picture}");
    assert!(content["url"].as_str().is_some_and(|url| url.starts_with("mxc://")), "{picture}");
    let body = content["body"].as_str().unwrap_or_default();
    assert!(body.starts_with("The Thaum board of table 0: season 1, Phase"), "{picture}");
    picture
}

/// Waits until `event` has been redacted (its content emptied), within [`WAIT`].
async fn until_redacted(client: &MatrixClient, room: &str, event: &Event, daemon: &Daemon) {
    let deadline = Instant::now() + WAIT;
    loop {
        let now = client.event(room, &event.event_id).await.unwrap_or_else(|e| panic!("{e}"));
        if now.content.get("url").is_none() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the previous picture {} was not redacted within {WAIT:?}; the daemon's log:\n{}",
            event.event_id,
            daemon.log()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_phase_end_and_board_post_a_picture_that_replaces_the_last_even_after_a_restart() {
    let synapse = tokio::task::block_in_place(Synapse::start)
        .unwrap_or_else(|e| panic!("Synapse is needed for this test: {e}"));
    register(&synapse, BOT);
    let http = free_port().unwrap_or_else(|e| panic!("{e}"));
    let mut daemon = daemon(&synapse, None, http);
    let (mut carol, room) = thaum_room(&synapse, &daemon).await;

    carol.send_text(&room, "!phase next").await.unwrap_or_else(|e| panic!("{e}"));
    let first = next_picture(&mut carol, &room, &daemon).await;
    assert!(first.content["body"].as_str().unwrap_or_default().contains("Phase II"), "{first}");

    // `!board` is answered by the picture alone; the first one is taken away.
    carol.send_text(&room, "!board").await.unwrap_or_else(|e| panic!("{e}"));
    let second = next_picture(&mut carol, &room, &daemon).await;
    until_redacted(&carol, &room, &first, &daemon).await;

    // After a restart the bot still knows which picture to take away.
    assert!(
        daemon.terminate(Duration::from_secs(15)).is_ok_and(|status| status.success()),
        "spellbridge exits 0 on SIGTERM; log:\n{}",
        daemon.log()
    );
    daemon.spawn().unwrap_or_else(|e| panic!("{e}"));
    carol.send_text(&room, "!board").await.unwrap_or_else(|e| panic!("{e}"));
    let third = next_picture(&mut carol, &room, &daemon).await;
    until_redacted(&carol, &room, &second, &daemon).await;
    let still = carol.event(&room, &third.event_id).await.unwrap_or_else(|e| panic!("{e}"));
    assert!(still.content.get("url").is_some(), "the newest picture stays: {still}");

    // Nothing failed, and what drawing cost (on the painter's thread) and the loop's part.
    let (_, metrics) =
        get(http, "/metrics").await.unwrap_or_else(|| panic!("no /metrics; log:\n{}", daemon.log()));
    for stage in ["render", "upload"] {
        let line = format!("spellbridge_board_failures_total{{stage=\"{stage}\"}} 0");
        assert!(metrics.contains(&line), "{line} in:\n{metrics}");
    }
    for line in metrics.lines().filter(|l| l.starts_with("spellbridge_board_drawing_seconds_")) {
        eprintln!("{line}");
    }
    for line in daemon.log().lines().filter(|l| l.contains("handed to the painter")) {
        eprintln!("{line}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_board_images_off_no_picture_is_sent_and_board_answers_in_text() {
    let synapse = tokio::task::block_in_place(Synapse::start)
        .unwrap_or_else(|e| panic!("Synapse is needed for this test: {e}"));
    register(&synapse, BOT);
    let http = free_port().unwrap_or_else(|e| panic!("{e}"));
    let daemon = daemon(&synapse, Some(false), http);
    let (mut carol, room) = thaum_room(&synapse, &daemon).await;

    carol.send_text(&room, "!phase next").await.unwrap_or_else(|e| panic!("{e}"));
    carol.send_text(&room, "!board").await.unwrap_or_else(|e| panic!("{e}"));
    let text = |event: &Event| {
        event.content["body"].as_str().unwrap_or_default().contains("Board pictures are shown")
    };
    next_from_bot(&mut carol, &room, "text answer to !board", &daemon, text).await;
    let bot = format!("@{BOT}:localhost");
    let until = Instant::now() + QUIET;
    while let Some(event) = carol.next_event(until.saturating_duration_since(Instant::now())).await {
        assert!(
            !(event.sender == bot && is_image(&event)),
            "a picture was sent with board_images = false: {event}"
        );
    }
}

/// Issue 32 item 6, daemon-level: a Nim table (the third game, which the daemon names
/// nowhere) posts its board picture when a player joins and after each take, captioned
/// with its piles and who moves, each new one taking the last one's place.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nim_table_posts_its_board_picture_after_a_join_and_a_take() {
    let synapse = tokio::task::block_in_place(Synapse::start)
        .unwrap_or_else(|e| panic!("Synapse is needed for this test: {e}"));
    register(&synapse, BOT);
    let http = free_port().unwrap_or_else(|e| panic!("{e}"));
    let daemon = daemon(&synapse, None, http);
    let (mut carol, mut alice, room) = answered_room(&synapse, &daemon).await;
    alice.catch_up().await.unwrap_or_else(|e| panic!("{e}"));
    carol.send_text(&room, "!new nim").await.unwrap_or_else(|e| panic!("{e}"));
    let opened = carol.expect_message_matching(
        |m| m.sender == synapse.user_id(BOT) && m.body.contains("opens a game of Nim"),
        WAIT,
    );
    opened.await.unwrap_or_else(|e| panic!("{e}\n{}", daemon.log()));

    alice.send_text(&room, "!join").await.unwrap_or_else(|e| panic!("{e}"));
    let joined = next_from_bot(&mut carol, &room, "Nim board picture", &daemon, is_image).await;
    let body = joined.content["body"].as_str().unwrap_or_default();
    assert!(body.starts_with("Nim table 0: piles a 3, b 5, c 7;") && body.contains("to move"), "{joined}");
    assert_eq!(joined.content["info"]["mimetype"], "image/png", "{joined}");
    assert_eq!(joined.content["info"]["w"], 480, "the Nim board is 480 × 280: {joined}");
    assert_eq!(joined.content["info"]["h"], 280, "the Nim board is 480 × 280: {joined}");

    carol.send_text(&room, "!take 3 a").await.unwrap_or_else(|e| panic!("{e}"));
    let taken = next_from_bot(&mut carol, &room, "Nim board picture", &daemon, is_image).await;
    let body = taken.content["body"].as_str().unwrap_or_default();
    assert!(body.starts_with("Nim table 0: piles a 0, b 5, c 7;"), "{taken}");
    assert!(taken.content["url"].as_str().is_some_and(|url| url.starts_with("mxc://")), "{taken}");
    until_redacted(&carol, &room, &joined, &daemon).await;
}
