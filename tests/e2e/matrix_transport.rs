//! The Matrix transport against a real Synapse (the harness's, on loopback): the bot
//! accepts an allowed invite, reads commands with the right fields, answers with HTML and
//! pills, delivers what a bridge relays (formatting as rich text, edits, reactions,
//! redactions, replies without their quote, threads, emotes, who operates the room),
//! answers in a thread and acts emotes, leaves a room for good, opens an encrypted direct room, works both ways in an encrypted
//! room and tells a room once when it cannot decrypt, keeps its device and does not
//! replay history across a restart (yet delivers every message said while it was down,
//! beyond the sync's timeline limit, once and in order, even when fetching the gap fails
//! at first or it stops before handing a response over), comes back after a homeserver
//! restart (or a homeserver that is down when it starts), waits out `M_LIMIT_EXCEEDED`, and its
//! latency is measured. Humans are the harness's raw client, or a second
//! `MatrixTransport` where the test needs E2EE (the raw client has none).
//!
//! Without Synapse (`tests/scripts/install-synapse.sh`) these tests fail with the
//! harness's message; they are never skipped.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use spellbridge_adapters::matrix::matrix_sdk::ruma::api::client::room::create_room::v3::{
    Request as CreateRoom, RoomPreset,
};
use spellbridge_adapters::matrix::matrix_sdk::ruma::events::InitialStateEvent;
use spellbridge_adapters::matrix::matrix_sdk::ruma::events::room::encryption::RoomEncryptionEventContent;
use spellbridge_adapters::matrix::matrix_sdk::ruma::events::room::member::MembershipState;
use spellbridge_adapters::matrix::matrix_sdk::ruma::{OwnedUserId, UserId};
use spellbridge_adapters::matrix::{Connection, Login, MatrixOptions, MatrixTransport};
use spellbridge_core::text::Hue;
use spellbridge_core::{
    Destination, GameTransport, Inbound, Message, PlayerId, RichText, RoomId, Said, Voice,
};
use spellbridge_tests::harness::HarnessError;
use spellbridge_tests::harness::fault_proxy::FaultProxy;
use spellbridge_tests::harness::matrix_client::{Event, MatrixClient, Method};
use spellbridge_tests::harness::synapse::{Options, Synapse};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// How long a message or a join may take on loopback (normally milliseconds; E2EE key
/// sharing and a cold first sync take longer).
const WAIT: Duration = Duration::from_secs(20);
/// How long to listen when checking that nothing (more) arrives.
const QUIET: Duration = Duration::from_millis(1500);
const NETWORK: &str = "matrix";

/// Unwraps a harness result, failing the test with the harness's own message.
fn ok<T>(result: Result<T, HarnessError>) -> T {
    result.unwrap_or_else(|e| panic!("{e}"))
}

fn start_server(options: Options) -> Synapse {
    ok(tokio::task::block_in_place(|| Synapse::start_with(options)))
}

/// A running transport with its task and shutdown token.
struct Running {
    transport: Arc<MatrixTransport>,
    task: tokio::task::JoinHandle<()>,
    shutdown: CancellationToken,
}

impl Running {
    fn start(options: MatrixOptions) -> Self {
        let shutdown = CancellationToken::new();
        let (transport, task) = MatrixTransport::start(options, shutdown.clone());
        Running { transport, task, shutdown }
    }

    async fn started(options: MatrixOptions, server: &Synapse) -> Self {
        let running = Self::start(options);
        assert!(
            running.transport.wait_up(WAIT).await,
            "the Matrix transport did not log in and sync within {WAIT:?}; Synapse's log ends:\n{}",
            server.log_tail(30)
        );
        running
    }

    async fn stop(self) {
        self.shutdown.cancel();
        tokio::time::timeout(WAIT, self.task)
            .await
            .expect("the transport stops on shutdown")
            .expect("no panic");
        assert_eq!(*self.transport.connection().borrow(), Connection::Closed);
    }
}

fn options(server: &Synapse, localpart: &str, store: &Path) -> MatrixOptions {
    let mut options = MatrixOptions::local(
        NETWORK,
        &server.base_url(),
        &server.user_id(localpart),
        &format!("{localpart}-password"),
        store,
    );
    options.decrypt_grace = Duration::from_secs(1);
    options
}

fn register(server: &Synapse, localpart: &str) -> String {
    ok(server.register(localpart, &format!("{localpart}-password"), false)).0
}

async fn login(server: &Synapse, localpart: &str) -> MatrixClient {
    ok(MatrixClient::login(&server.base_url(), localpart, &format!("{localpart}-password")).await)
}

/// The next message the transport delivers; panics after `limit`.
async fn recv(transport: &MatrixTransport, limit: Duration) -> Inbound {
    tokio::time::timeout(limit, transport.recv())
        .await
        .unwrap_or_else(|_| panic!("the transport delivered nothing within {limit:?}"))
        .expect("the transport is running")
}

/// Asserts the transport delivers nothing for `quiet`.
async fn nothing_more(transport: &MatrixTransport, quiet: Duration) {
    if let Ok(Some(message)) = tokio::time::timeout(quiet, transport.recv()).await {
        panic!("expected nothing more, got {message:?}");
    }
}

/// Waits until the transport is in `room`.
async fn until_joined(transport: &MatrixTransport, room: &str) {
    let deadline = Instant::now() + WAIT;
    while !transport.joined_rooms().iter().any(|r| r.as_str() == room) {
        assert!(Instant::now() < deadline, "the transport did not join {room} within {WAIT:?}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Waits until `watcher`'s client sees `user` joined in `room` (so its next encrypted
/// send shares the room key with them).
async fn until_member(watcher: &MatrixTransport, room: &str, user: &str) {
    let client = watcher.client().expect("logged in");
    let room_id =
        <&spellbridge_adapters::matrix::matrix_sdk::ruma::RoomId>::try_from(room).expect("a room id");
    let user = UserId::parse(user).expect("a user id");
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(room) = client.get_room(room_id)
            && let Ok(Some(member)) = room.get_member_no_sync(&user).await
            && *member.membership() == MembershipState::Join
        {
            return;
        }
        assert!(Instant::now() < deadline, "{:?} never saw {user} join {room}", client.user_id());
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// The ids of the devices of `client`'s account.
async fn device_ids(client: &MatrixClient) -> Vec<String> {
    let answer = ok(client.call(Method::GET, "/_matrix/client/v3/devices", None).await);
    answer["devices"]
        .as_array()
        .map(|devices| devices.iter().filter_map(|d| d["device_id"].as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

/// The next `m.room.message` from `sender`, skipping everything else.
async fn next_message_from(client: &mut MatrixClient, sender: &str, limit: Duration) -> Event {
    let deadline = Instant::now() + limit;
    loop {
        let remaining = deadline.saturating_duration_since(Instant::now());
        let event = client
            .next_event(remaining)
            .await
            .unwrap_or_else(|| panic!("{} got no message from {sender} within {limit:?}", client.user_id()));
        if event.sender == sender && event.event_type == "m.room.message" {
            return event;
        }
    }
}

/// Registers the bot, alice and carol; alice creates a room inviting the bot and carol;
/// carol joins; the bot (started with `store`) accepts the invite. Three members, so the
/// room is not taken for a direct chat.
async fn bot_in_a_room(server: &Synapse, store: &Path) -> (Running, MatrixClient, MatrixClient, String) {
    let bot_id = register(server, "spellbot");
    register(server, "alice");
    let carol_id = register(server, "carol");
    let mut alice = login(server, "alice").await;
    let mut carol = login(server, "carol").await;
    let bot = Running::started(options(server, "spellbot", store), server).await;
    let room = ok(alice.create_room("Magic", &[&bot_id, &carol_id], false).await);
    ok(carol.accept_invite(&room).await);
    until_joined(&bot.transport, &room).await;
    ok(alice.catch_up().await);
    ok(carol.catch_up().await);
    (bot, alice, carol, room)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invited_bot_reads_commands_and_answers_with_html_and_pills() {
    let server = start_server(Options::default());
    let store = tempfile::tempdir().expect("temp dir");
    let (bot, mut alice, _carol, room) = bot_in_a_room(&server, store.path()).await;
    let alice_id = alice.user_id().to_owned();

    let event_id = ok(alice.send_text(&room, "!games").await);
    let got = recv(&bot.transport, WAIT).await;
    assert_eq!(
        got,
        Inbound {
            display_name: "alice".to_owned(),
            private: false,
            message_id: Some(event_id.clone()),
            operator: true,
            ..Inbound::new(NETWORK.into(), RoomId::new(&room), PlayerId::new(&alice_id), "!games".to_owned())
        }
    );

    // An edit of the command arrives as an edit (relayed, never run); HTML-only bodies
    // are reduced.
    let edit = serde_json::json!({
        "msgtype": "m.text",
        "body": "* !games now",
        "m.new_content": {"msgtype": "m.text", "body": "!games now"},
        "m.relates_to": {"rel_type": "m.replace", "event_id": event_id},
    });
    ok(alice.send_message(&room, edit).await);
    let html_only = serde_json::json!({
        "msgtype": "m.text", "body": "", "format": "org.matrix.custom.html",
        "formatted_body": "<p><strong>!join</strong> <em>fire</em></p>",
    });
    ok(alice.send_message(&room, html_only).await);
    // Odd content and unknown events are skipped without harm.
    // (Synapse refuses an m.room.message without a string body and msgtype.)
    ok(alice.send_message(&room, serde_json::json!({"msgtype": "org.example.x", "body": "!custom"})).await);
    ok(alice.send_event(&room, "org.example.unknown", serde_json::json!({"x": 1})).await);
    ok(alice.send_text(&room, &format!("!huge {}", "x".repeat(30_000))).await);
    let edited = recv(&bot.transport, WAIT).await;
    assert_eq!(
        (edited.text.as_str(), edited.said),
        ("!games now", Said::Edit { original: event_id.clone() })
    );
    assert_eq!(recv(&bot.transport, WAIT).await.text, "!join fire");
    assert!(recv(&bot.transport, WAIT).await.text.starts_with("!huge xxx"));
    nothing_more(&bot.transport, QUIET).await;

    // Rich text reaches alice as HTML with a pill and m.mentions.
    let text = RichText::new()
        .bold("Fire")
        .text(" burns ")
        .mention(&PlayerId::new(&alice_id))
        .text(" — type ")
        .code("!join")
        .italic(" now");
    bot.transport.send(&Destination::Room(RoomId::new(&room)), &text.clone().into()).await.expect("sent");
    let event = next_message_from(&mut alice, &server.user_id("spellbot"), WAIT).await;
    let content = &event.content;
    assert_eq!(content["msgtype"], "m.text");
    assert_eq!(content["body"], "Fire burns alice — type `!join` now");
    assert_eq!(content["format"], "org.matrix.custom.html");
    assert_eq!(
        content["formatted_body"],
        "<strong>Fire</strong> burns <a href=\"https://matrix.to/#/@alice:localhost\">alice</a> — type <code>!join</code><em> now</em>"
    );
    assert_eq!(content["m.mentions"]["user_ids"], serde_json::json!([alice_id]));

    // A room the bot is not in, or a player who is not a Matrix user, is refused.
    let nowhere = bot.transport.send(&Destination::Room(RoomId::new("!nowhere")), &"hi".into()).await;
    assert!(nowhere.is_err());
    let nobody = bot.transport.send(&Destination::Private(PlayerId::new("alice")), &"hi".into()).await;
    assert!(nobody.is_err());
    bot.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn formatting_edits_reactions_redactions_and_replies_arrive_for_relaying() {
    let server = start_server(Options::default());
    let store = tempfile::tempdir().expect("temp dir");
    let (bot, mut alice, mut carol, room) = bot_in_a_room(&server, store.path()).await;
    let carol_id = carol.user_id().to_owned();

    // Formatting arrives as rich text; the text stays plain, a pill as its name.
    let html = "<b>Fire</b> <font data-mx-color=\"#ff0000\">hits</font> \
                <a href=\"https://matrix.to/#/@carol:localhost\">carol</a> for <code>3</code>";
    let formatted = ok(alice.send_html(&room, "**Fire** hits carol for `3`", html).await);
    let got = recv(&bot.transport, WAIT).await;
    assert_eq!(got.text, "Fire hits carol for 3");
    assert_eq!(
        got.rich,
        RichText::new()
            .bold("Fire")
            .text(" ")
            .coloured("hits", Hue::Red)
            .text(" ")
            .mention(&PlayerId::new(&carol_id))
            .text(" for ")
            .code("3")
    );
    assert_eq!((got.said, got.message_id.as_deref()), (Said::Message, Some(formatted.as_str())));

    // An edit names the original, carries the new text, and arrives once.
    let original = ok(alice.send_text(&room, "!cast fire").await);
    assert_eq!(recv(&bot.transport, WAIT).await.message_id.as_deref(), Some(original.as_str()));
    let edit = serde_json::json!({
        "msgtype": "m.text",
        "body": "* !cast *water*",
        "m.new_content": {"msgtype": "m.text", "body": "!cast *water*", "format": "org.matrix.custom.html", "formatted_body": "!cast <em>water</em>"},
        "m.relates_to": {"rel_type": "m.replace", "event_id": original},
    });
    let edit_id = ok(alice.send_message(&room, edit).await);
    let got = recv(&bot.transport, WAIT).await;
    assert_eq!(got.said, Said::Edit { original: original.clone() });
    assert_eq!(
        (got.text.as_str(), got.rich),
        ("!cast water", RichText::new().text("!cast ").italic("water"))
    );
    assert_eq!(got.message_id.as_deref(), Some(edit_id.as_str()), "the edit's own id");
    nothing_more(&bot.transport, QUIET).await;

    // A reaction and a redaction name the message they are about.
    let reaction = ok(carol.react(&room, &original, "🔥").await);
    let got = recv(&bot.transport, WAIT).await;
    assert_eq!(got.said, Said::Reaction { target: original.clone(), key: "🔥".to_owned() });
    assert_eq!(
        (got.text.as_str(), got.sender.as_str(), got.message_id),
        ("🔥", carol_id.as_str(), Some(reaction))
    );
    let redaction = ok(alice.redact(&room, &original, Some("typo")).await);
    let got = recv(&bot.transport, WAIT).await;
    assert_eq!(got.said, Said::Redaction { target: original.clone() });
    assert_eq!((got.text.as_str(), got.rich.is_empty(), got.message_id), ("", true, Some(redaction)));

    // A reply names the message answered and loses the quote of it, in body and HTML.
    let reply = serde_json::json!({
        "msgtype": "m.text",
        "body": "> <@alice:localhost> **Fire** hits carol for `3`\n\n!counter fire",
        "format": "org.matrix.custom.html",
        "formatted_body": format!(
            "<mx-reply><blockquote><a href=\"https://matrix.to/#/{room}/{formatted}\">In reply to</a> \
             <a href=\"https://matrix.to/#/@alice:localhost\">@alice:localhost</a><br>{html}</blockquote></mx-reply>\
             <strong>!counter</strong> fire"
        ),
        "m.relates_to": {"m.in_reply_to": {"event_id": formatted}},
    });
    ok(carol.send_message(&room, reply).await);
    let got = recv(&bot.transport, WAIT).await;
    assert_eq!(got.reply_to.as_deref(), Some(formatted.as_str()));
    assert_eq!(
        (got.text.as_str(), got.rich),
        ("!counter fire", RichText::new().bold("!counter").text(" fire"))
    );
    let plain_reply = serde_json::json!({
        "msgtype": "m.text",
        "body": "> <@alice:localhost> **Fire** hits carol for `3`\n> second line\n\nouch",
        "m.relates_to": {"m.in_reply_to": {"event_id": formatted}},
    });
    ok(carol.send_message(&room, plain_reply).await);
    let got = recv(&bot.transport, WAIT).await;
    assert_eq!((got.text.as_str(), got.reply_to.as_deref()), ("ouch", Some(formatted.as_str())));
    nothing_more(&bot.transport, QUIET).await;
    bot.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn threads_and_emotes_work_both_ways() {
    let server = start_server(Options::default());
    let store = tempfile::tempdir().expect("temp dir");
    let (bot, mut alice, _carol, room) = bot_in_a_room(&server, store.path()).await;
    let bot_id = server.user_id("spellbot");
    let to_room = Destination::Room(RoomId::new(&room));

    // A message in a thread names its root (a thread message is not a reply).
    let root = ok(alice.send_text(&room, "A duel thread").await);
    assert_eq!(recv(&bot.transport, WAIT).await.thread, None);
    let in_thread = serde_json::json!({
        "msgtype": "m.text",
        "body": "!status",
        "m.relates_to": {"rel_type": "m.thread", "event_id": root, "is_falling_back": true, "m.in_reply_to": {"event_id": root}},
    });
    ok(alice.send_message(&room, in_thread).await);
    let got = recv(&bot.transport, WAIT).await;
    assert_eq!(
        (got.text.as_str(), got.thread.as_deref(), got.reply_to),
        ("!status", Some(root.as_str()), None)
    );

    // An answer sent with that thread is in it, with the fallback clients expect.
    ok(alice.catch_up().await);
    let answer =
        Message { text: RichText::new().bold("Round 1"), thread: Some(root.clone()), ..Message::default() };
    bot.transport.send(&to_room, &answer).await.expect("sent");
    let event = next_message_from(&mut alice, &bot_id, WAIT).await;
    let expected = serde_json::json!({
        "rel_type": "m.thread",
        "event_id": root,
        "is_falling_back": true,
        "m.in_reply_to": {"event_id": root},
    });
    assert_eq!(event.content["m.relates_to"], expected, "{event}");
    assert_eq!(event.content["formatted_body"], "<strong>Round 1</strong>");
    let stored = ok(alice.event(&room, &event.event_id).await);
    assert_eq!(stored.content["m.relates_to"], expected, "as the server keeps it");

    // An emote arrives as one, and an acted message is sent as one (with its HTML).
    let emote = serde_json::json!({"msgtype": "m.emote", "body": "waves", "format": "org.matrix.custom.html", "formatted_body": "<em>waves</em>"});
    ok(alice.send_message(&room, emote).await);
    let got = recv(&bot.transport, WAIT).await;
    assert_eq!(
        (got.text.as_str(), got.said, got.rich),
        ("waves", Said::Emote, RichText::new().italic("waves"))
    );
    let act = Message {
        text: RichText::new().text("casts ").bold("Fire"),
        voice: Voice::Act,
        ..Message::default()
    };
    bot.transport.send(&to_room, &act).await.expect("sent");
    let event = next_message_from(&mut alice, &bot_id, WAIT).await;
    assert_eq!(event.content["msgtype"], "m.emote");
    assert_eq!(event.content["body"], "casts Fire");
    assert_eq!(event.content["formatted_body"], "casts <strong>Fire</strong>");
    assert!(event.content.get("m.relates_to").is_none(), "{event}");
    nothing_more(&bot.transport, QUIET).await;
    bot.stop().await;
}

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
    let (bot, alice) = tokio::join!(
        Running::started(options(&server, "spellbot", bot_store.path()), &server),
        Running::started(alice_options, &server),
    );

    // alice (a second transport, with E2EE) creates an encrypted room and invites the bot.
    let client = alice.transport.client().expect("logged in");
    let mut request = CreateRoom::new();
    request.name = Some("Secret duel".to_owned());
    request.preset = Some(RoomPreset::PrivateChat);
    request.invite = vec![OwnedUserId::try_from(bot_id.as_str()).expect("user id")];
    request.initial_state = vec![
        InitialStateEvent::with_empty_state_key(RoomEncryptionEventContent::with_recommended_defaults())
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
    assert!(got.private, "two members: a direct chat by the transport's rule");
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

    // A private message: the bot creates an encrypted direct room and invites alice,
    // whose transport accepts and decrypts; her answer uses the same room.
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

    tokio::join!(bot.stop(), alice.stop());
}

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
async fn messages_beyond_the_timeline_limit_while_down_all_arrive_once_in_order() {
    const SAID: usize = 150; // more than the sync's timeline limit (100)
    let server = start_server(Options::default());
    let store = tempfile::tempdir().expect("temp dir");
    let (bot, mut alice, _carol, room) = bot_in_a_room(&server, store.path()).await;
    ok(alice.send_text(&room, "!before").await);
    assert_eq!(recv(&bot.transport, WAIT).await.text, "!before");
    bot.stop().await;

    // Said while the bot was down: its next sync's timeline is cut short (`limited`).
    let mut sent = Vec::new();
    for i in 0..SAID {
        sent.push(ok(alice.send_text(&room, &format!("!n {i}")).await));
    }
    let bot = Running::started(options(&server, "spellbot", store.path()), &server).await;
    for (i, id) in sent.iter().enumerate() {
        let got = recv(&bot.transport, WAIT).await;
        assert_eq!(
            (got.text.as_str(), got.message_id.as_deref()),
            (format!("!n {i}").as_str(), Some(id.as_str())),
            "message {i} of {SAID}, in order"
        );
    }
    nothing_more(&bot.transport, QUIET).await;
    ok(alice.send_text(&room, "!after").await);
    assert_eq!(recv(&bot.transport, WAIT).await.text, "!after");
    bot.stop().await;
}

/// What was said while the bot was down ([`missed_while_down`]), and the proxy it syncs
/// through.
struct Missed {
    proxy: FaultProxy,
    busy: String,
    quiet: String,
    said_in_busy: Vec<String>,
    said_in_quiet: String,
}

const SAID_WHILE_DOWN: usize = 120; // more than the sync's timeline limit (100)

/// The bot in two rooms, stopped after a first message; then, while it is down, more
/// than a timeline in the busy room (its next sync is cut short there, and the gap is
/// fetched) and one message in the quiet one.
async fn missed_while_down(server: &Synapse, store: &Path) -> Missed {
    let upstream = format!("127.0.0.1:{}", server.port()).parse().expect("a loopback address");
    let proxy = ok(FaultProxy::start(upstream).await);
    let bot_id = register(server, "spellbot");
    register(server, "alice");
    let carol_id = register(server, "carol");
    let mut alice = login(server, "alice").await;
    let mut carol = login(server, "carol").await;
    let bot = Running::started(through(&proxy, server, store), server).await;
    let mut rooms = Vec::new();
    for name in ["Busy", "Quiet"] {
        let room = ok(alice.create_room(name, &[&bot_id, &carol_id], false).await);
        ok(carol.accept_invite(&room).await);
        until_joined(&bot.transport, &room).await;
        rooms.push(room);
    }
    let quiet = rooms.pop().expect("two rooms");
    let busy = rooms.pop().expect("two rooms");
    ok(alice.send_text(&quiet, "!before").await);
    assert_eq!(recv(&bot.transport, WAIT).await.text, "!before");
    bot.stop().await;
    let mut said_in_busy = Vec::new();
    for i in 0..SAID_WHILE_DOWN {
        said_in_busy.push(ok(alice.send_text(&busy, &format!("!n {i}")).await));
    }
    let said_in_quiet = ok(alice.send_text(&quiet, "!meanwhile").await);
    Missed { proxy, busy, quiet, said_in_busy, said_in_quiet }
}

/// The bot's options, syncing through `proxy`.
fn through(proxy: &FaultProxy, server: &Synapse, store: &Path) -> MatrixOptions {
    let mut options = options(server, "spellbot", store);
    options.homeserver = proxy.base_url();
    options
}

/// Receives what was missed and asserts each message came once, the busy room's in order.
async fn receive_once_each(bot: &Running, missed: &Missed) {
    let mut got = Vec::new();
    for _ in 0..=SAID_WHILE_DOWN {
        got.push(recv(&bot.transport, WAIT).await);
    }
    let id_in = |room: &str| -> Vec<String> {
        got.iter()
            .filter(|m| m.room.as_str() == room)
            .map(|m| m.message_id.clone().unwrap_or_default())
            .collect()
    };
    assert_eq!(
        id_in(&missed.quiet),
        std::slice::from_ref(&missed.said_in_quiet),
        "the quiet room's message, once"
    );
    assert_eq!(id_in(&missed.busy), missed.said_in_busy, "the busy room's messages, each once and in order");
    nothing_more(&bot.transport, QUIET).await;
}

/// A gap that cannot be fetched at first is fetched again, for the same response (which
/// matrix-sdk has taken in already: a sync made again would come back empty), and
/// nothing is lost or handed over twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gap_that_cannot_be_fetched_at_first_is_fetched_again_and_nothing_is_lost_or_doubled() {
    let server = start_server(Options::default());
    let store = tempfile::tempdir().expect("temp dir");
    let missed = missed_while_down(&server, store.path()).await;
    missed.proxy.fail("/messages", 1, 502);
    let bot = Running::started(through(&missed.proxy, &server, store.path()), &server).await;
    assert_eq!(missed.proxy.injected(), 1, "the gap fetch went through the proxy and failed once");
    receive_once_each(&bot, &missed).await;
    bot.stop().await;
}

/// A stop after matrix-sdk took a sync response in but before it was handed over (here:
/// while its gap cannot be fetched) loses nothing: the next start fetches what lies
/// between the two saved positions and hands it over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_between_taking_a_sync_in_and_handing_it_over_loses_nothing() {
    let server = start_server(Options::default());
    let store = tempfile::tempdir().expect("temp dir");
    let missed = missed_while_down(&server, store.path()).await;
    missed.proxy.fail("/messages", usize::MAX, 502);
    let stuck = Running::start(through(&missed.proxy, &server, store.path()));
    let deadline = Instant::now() + WAIT;
    while missed.proxy.injected() < 2 {
        assert!(Instant::now() < deadline, "the bot did not try to fetch the gap twice within {WAIT:?}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    stuck.stop().await;
    missed.proxy.heal();
    let bot = Running::started(through(&missed.proxy, &server, store.path()), &server).await;
    receive_once_each(&bot, &missed).await;
    bot.stop().await;
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

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let index = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[index.min(samples.len() - 1)]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn latency_both_ways_is_measured_against_the_floor() {
    const ROUNDS: usize = 50;
    let server = start_server(Options::default());
    let store = tempfile::tempdir().expect("temp dir");
    let (bot, mut alice, mut carol, room) = bot_in_a_room(&server, store.path()).await;
    let bot_id = server.user_id("spellbot");

    // human → recv(): from before alice's PUT until the transport hands the message over.
    let mut inbound = Vec::new();
    for i in 0..ROUNDS {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let started = Instant::now();
        ok(alice.send_text(&room, &format!("!ping {i}")).await);
        let got = recv(&bot.transport, WAIT).await;
        inbound.push(started.elapsed());
        assert_eq!(got.text, format!("!ping {i}"));
    }

    // send() → human: from the call until alice's long-poll sync returns it.
    ok(alice.catch_up().await);
    let to = Destination::Room(RoomId::new(&room));
    let mut outbound = Vec::new();
    for i in 0..ROUNDS {
        let body = format!("pong {i}");
        let send = async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            let started = Instant::now();
            bot.transport.send(&to, &body.as_str().into()).await.expect("sent");
            started
        };
        let receive = async {
            let event = next_message_from(&mut alice, &bot_id, WAIT).await;
            (event, Instant::now())
        };
        let (started, (event, received)) = tokio::join!(send, receive);
        assert_eq!(event.content["body"], body);
        outbound.push(received - started);
    }

    // The floor: alice's PUT until carol's raw long-poll sync returns it.
    ok(carol.catch_up().await);
    let alice_id = alice.user_id().to_owned();
    let mut floor = Vec::new();
    for i in 0..ROUNDS {
        let body = format!("floor {i}");
        let send = async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            let started = Instant::now();
            ok(alice.send_text(&room, &body).await);
            started
        };
        let receive = async {
            let event = next_message_from(&mut carol, &alice_id, WAIT).await;
            (event, Instant::now())
        };
        let (started, (event, received)) = tokio::join!(send, receive);
        assert_eq!(event.content["body"], body);
        floor.push(received - started);
    }
    // The bot saw alice's floor messages too; they are not part of the measurement.
    while tokio::time::timeout(Duration::from_millis(200), bot.transport.recv()).await.is_ok() {}

    let report = |name: &str, samples: &mut Vec<Duration>| {
        let (p50, p90, max) = (percentile(samples, 0.5), percentile(samples, 0.9), percentile(samples, 1.0));
        eprintln!(
            "matrix latency {name}: p50 {p50:?}, p90 {p90:?}, max {max:?} over {} messages",
            samples.len()
        );
        p50
    };
    let inbound_p50 = report("human→recv()", &mut inbound);
    let outbound_p50 = report("send()→human", &mut outbound);
    let floor_p50 = report("floor (raw client→raw client)", &mut floor);
    // matrix-sdk's Client::sync would add up to a second; the sync_once loop must not.
    assert!(inbound_p50 < Duration::from_millis(500), "inbound p50 {inbound_p50:?} (floor {floor_p50:?})");
    assert!(outbound_p50 < Duration::from_millis(500), "outbound p50 {outbound_p50:?} (floor {floor_p50:?})");
    bot.stop().await;
}
