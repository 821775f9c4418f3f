//! The real-server harness against Synapse: the homeserver starts on a free port, users
//! are registered through the shared-secret admin API, raw clients create rooms, invite,
//! join and talk (a message reaches the other user by long-poll sync), and a restart
//! keeps the port, users, tokens and rooms. These tests need Synapse
//! (`tests/scripts/install-synapse.sh`); without it they fail with the harness's
//! message, they are never skipped.

use std::time::{Duration, Instant};

use spellbridge_tests::harness::HarnessError;
use spellbridge_tests::harness::matrix_client::{MatrixClient, Message, Method, encode};
use spellbridge_tests::harness::synapse::{Options, Synapse};

const WAIT: Duration = Duration::from_secs(10);

/// Unwraps a harness result, failing the test with the harness's own message.
fn ok<T>(result: Result<T, HarnessError>) -> T {
    result.unwrap_or_else(|e| panic!("{e}"))
}

/// A message as `to` should receive it from `from`.
fn expect_text(message: Option<Message>, room_id: &str, from: &str, body: &str) -> Message {
    let message = message.unwrap_or_else(|| panic!("no message {body:?} within {WAIT:?}"));
    assert_eq!((message.room_id.as_str(), message.sender.as_str()), (room_id, from), "{message}");
    assert_eq!(message.body, body);
    message
}

/// Registers alice and bob; alice creates a room and invites bob, who sees the invite by
/// sync and joins. Returns (alice, bob, room id).
async fn alice_and_bob_in_a_room(server: &Synapse) -> (MatrixClient, MatrixClient, String) {
    let (alice_id, _) = ok(server.register("alice", "alice-password", false));
    let (bob_id, bob_token) = ok(server.register("bob", "bob-password", false));
    assert_eq!(alice_id, server.user_id("alice"));
    let mut alice = ok(MatrixClient::login(&server.base_url(), "alice", "alice-password").await);
    let mut bob = ok(MatrixClient::from_token(&server.base_url(), &bob_id, &bob_token));
    assert_eq!(alice.user_id(), alice_id);

    let room_id = ok(alice.create_room("Magic", &[&bob_id], false).await);
    let invite = bob.wait_invite(WAIT).await.unwrap_or_else(|| panic!("bob saw no invite to {room_id}"));
    assert_eq!((invite.room_id.as_str(), invite.inviter.as_str()), (room_id.as_str(), alice_id.as_str()));
    assert!(!invite.is_direct);
    ok(bob.accept_invite(&room_id).await);
    assert!(bob.invites().is_empty());
    assert_eq!(ok(bob.joined_rooms().await), vec![room_id.clone()]);
    (alice, bob, room_id)
}

#[tokio::test]
async fn two_users_talk_in_a_room_by_sync() {
    let server = ok(Synapse::start());
    eprintln!("Synapse started in {:?} on port {}", server.last_start_time(), server.port());
    let (mut alice, mut bob, room_id) = alice_and_bob_in_a_room(&server).await;

    ok(alice.send_text(&room_id, "hello, bob ✨").await);
    expect_text(bob.next_message(WAIT).await, &room_id, alice.user_id(), "hello, bob ✨");

    let html = "<b>Fire</b> at <a href=\"https://matrix.to/#/@alice:localhost\">alice</a>";
    ok(bob.send_html(&room_id, "**Fire** at alice", html).await);
    let got = expect_text(alice.next_message(WAIT).await, &room_id, bob.user_id(), "**Fire** at alice");
    assert_eq!(got.formatted_body.as_deref(), Some(html));
    assert_eq!(got.msgtype, "m.text");

    // One send round trip A→B: from alice's PUT to bob's long-poll sync returning it,
    // with bob already waiting in his sync.
    ok(bob.catch_up().await);
    let mut round_trips = Vec::new();
    for i in 0..10 {
        let body = format!("ping {i}");
        let send = async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            let started = Instant::now();
            ok(alice.send_text(&room_id, &body).await);
            started
        };
        let receive = async {
            let message = bob.next_message(WAIT).await;
            (message, Instant::now())
        };
        let (started, (message, received)) = tokio::join!(send, receive);
        expect_text(message, &room_id, alice.user_id(), &body);
        round_trips.push(received - started);
    }
    round_trips.sort();
    eprintln!("send A→B by sync: median {:?}, max {:?}", round_trips[round_trips.len() / 2], round_trips[9]);

    // Nothing else was said.
    assert_eq!(bob.next_message(Duration::from_millis(200)).await, None);
}

#[tokio::test]
async fn a_direct_chat_is_marked_direct() {
    let server = ok(Synapse::start());
    let (alice_id, alice_token) = ok(server.register("alice", "pw-a", false));
    let (bob_id, bob_token) = ok(server.register("bob", "pw-b", true));
    let mut alice = ok(MatrixClient::from_token(&server.base_url(), &alice_id, &alice_token));
    let mut bob = ok(MatrixClient::from_token(&server.base_url(), &bob_id, &bob_token));

    let room_id = ok(bob.create_dm(&alice_id, false).await);
    let invite = alice.wait_invite(WAIT).await.unwrap_or_else(|| panic!("alice saw no DM invite"));
    assert_eq!(invite.room_id, room_id);
    assert!(invite.is_direct, "{invite:?}");
    ok(alice.accept_invite(&room_id).await);
    ok(bob.send_text(&room_id, "psst: !cast fire").await);
    expect_text(alice.next_message(WAIT).await, &room_id, &bob_id, "psst: !cast fire");

    // The account data records the DM on bob's side.
    let path = format!("/_matrix/client/v3/user/{}/account_data/m.direct", encode(&bob_id));
    let direct = ok(bob.call(Method::GET, &path, None).await);
    assert_eq!(direct[&alice_id], serde_json::json!([room_id]));
}

#[tokio::test]
async fn a_restart_keeps_users_tokens_and_rooms() {
    let mut server = ok(Synapse::start());
    let port = server.port();
    let first_pid = server.pid();
    let (mut alice, mut bob, room_id) = alice_and_bob_in_a_room(&server).await;
    ok(alice.send_text(&room_id, "before").await);
    expect_text(bob.next_message(WAIT).await, &room_id, alice.user_id(), "before");

    let started = Instant::now();
    ok(server.restart());
    eprintln!("restart took {:?} (start {:?})", started.elapsed(), server.last_start_time());
    assert_eq!(server.port(), port);
    assert_ne!(server.pid(), first_pid);

    // Tokens, rooms and the sync position survive: the old clients go on.
    ok(alice.send_text(&room_id, "after the restart").await);
    expect_text(bob.next_message(WAIT).await, &room_id, alice.user_id(), "after the restart");
    // Passwords too: a new login works, and its first sync returns the history.
    let mut bob2 = ok(MatrixClient::login(&server.base_url(), "bob", "bob-password").await);
    assert_eq!(ok(bob2.joined_rooms().await), vec![room_id.clone()]);
    let history: Vec<String> =
        ok(bob2.sync_once(0).await).iter().filter_map(|e| e.message()).map(|m| m.body).collect();
    assert_eq!(history, ["before", "after the restart"]);
    ok(bob2.send_text(&room_id, "bob is back").await);
    expect_text(alice.next_message(WAIT).await, &room_id, bob2.user_id(), "bob is back");
}

#[tokio::test]
async fn a_sync_waiting_across_a_restart_picks_up_afterwards() {
    let mut server = ok(Synapse::start());
    let (mut alice, mut bob, room_id) = alice_and_bob_in_a_room(&server).await;
    ok(bob.catch_up().await);
    // Bob's long poll is cut by the restart; next_message retries until its deadline.
    let waiting = tokio::spawn(async move {
        let message = bob.next_message(Duration::from_secs(30)).await;
        (bob, message)
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    ok(server.restart());
    ok(alice.send_text(&room_id, "still there?").await);
    let (_bob, message) = waiting.await.unwrap_or_else(|e| panic!("bob's task: {e}"));
    expect_text(message, &room_id, alice.user_id(), "still there?");
}

#[test]
fn stop_ends_the_process_and_is_idempotent() {
    let mut server = ok(Synapse::start());
    let pid = server.pid().unwrap_or_else(|| panic!("a started server has a pid"));
    let proc_entry = std::path::PathBuf::from(format!("/proc/{pid}"));
    assert!(proc_entry.exists());
    let started = Instant::now();
    ok(server.stop());
    eprintln!("stop (SIGTERM) took {:?}", started.elapsed());
    assert!(!proc_entry.exists(), "synapse {pid} still running after stop");
    assert_eq!(server.pid(), None);
    ok(server.stop());
    assert!(std::net::TcpStream::connect(server.address()).is_err(), "nothing listens after stop");
}

#[test]
fn a_name_can_be_registered_once_and_as_admin() {
    let server = ok(Synapse::start());
    let (admin_id, token) = ok(server.register("root", "pw", true));
    assert_eq!(admin_id, "@root:localhost");
    assert!(!token.is_empty());
    let again = server.register("root", "pw", false).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(again.contains("M_USER_IN_USE"), "{again}");
}

#[test]
fn the_access_log_has_a_line_per_request_when_asked_for() {
    let server = ok(Synapse::start_with(Options { access_log: true, ..Options::default() }));
    ok(server.register("alice", "alice-password", false));
    let log = std::fs::read_to_string(server.dir().join("homeserver.log")).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        log.lines().any(|l| l.contains("Processed request") && l.contains("/_synapse/admin/v1/register")),
        "no access line for the registration in:\n{log}"
    );
}

#[tokio::test]
async fn rate_limits_apply_only_when_asked_for() {
    let server = ok(Synapse::start_with(Options { rate_limited: true, ..Options::default() }));
    let config = std::fs::read_to_string(server.config_path()).unwrap_or_else(|e| panic!("{e}"));
    assert!(!config.contains("rc_message"), "{config}");
    let (alice_id, token) = ok(server.register("alice", "pw", false));
    let mut alice = ok(MatrixClient::from_token(&server.base_url(), &alice_id, &token));
    let room_id = ok(alice.create_room("flood", &[] as &[&str], false).await);
    // Synapse's default rc_message is 0.2/s with a burst of 10.
    let mut limited = None;
    for i in 0..30 {
        let path = format!("/_matrix/client/v3/rooms/{}/send/m.room.message/flood{i}", encode(&room_id));
        let (status, answer) = ok(alice
            .request(Method::PUT, &path, Some(&serde_json::json!({"msgtype": "m.text", "body": "x"})))
            .await);
        if status == 429 {
            limited = Some(answer);
            break;
        }
    }
    let answer = limited.unwrap_or_else(|| panic!("30 fast sends were never rate limited"));
    assert_eq!(answer["errcode"], "M_LIMIT_EXCEEDED", "{answer}");
    assert!(answer["retry_after_ms"].as_u64().is_some(), "{answer}");
}

#[test]
fn a_missing_venv_says_how_to_install_it() {
    let venv = std::path::PathBuf::from("/nonexistent/spellbridge-synapse-venv");
    let Err(err) = Synapse::start_with(Options { venv, ..Options::default() }) else {
        panic!("a start without a venv should fail");
    };
    let message = err.to_string();
    assert!(message.contains("Synapse is not installed"), "{message}");
    assert!(message.contains("run tests/scripts/install-synapse.sh"), "{message}");
}
