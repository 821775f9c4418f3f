//! Appservice mode through a proxy that follows `/leader` (issue 34): two daemons in
//! appservice mode on one PostgreSQL, the real Synapse pushing its transactions to a
//! [`LeaderProxy`] that routes each connection to the daemon whose `/leader` answers 200.
//! A Matrix player's command said after the active daemon's SIGKILL, before the standby
//! took over, reaches the new leader when Synapse sends that transaction again, and is
//! answered once; so is the next one.

use spellbridge_tests::harness::daemon::Daemon;
use spellbridge_tests::harness::endpoint;
use spellbridge_tests::harness::leader_proxy::{Backend, LeaderProxy};
use spellbridge_tests::harness::matrix_client::{MatrixClient, Message};
use spellbridge_tests::harness::synapse::{Options, Synapse};

use super::support::*;

const BIN: &str = env!("CARGO_BIN_EXE_spellbridge");
const REGISTRATION: &str = "appservice.yaml";
/// How long one expected answer may take (a takeover and Synapse's retry backoff of
/// 2, 4, 8 s included).
const WAIT: Duration = Duration::from_secs(40);

fn bot() -> String {
    matrix_id(BOT)
}

/// Daemon `http`'s config: appservice mode, its listener on `listen`, the homeserver told
/// to reach it through the proxy on `proxy`.
fn config(url: &str, http: u16, homeserver: &str, listen: u16, proxy: u16) -> String {
    format!(
        r#"{head}
[thaum]
schedule = "manual"

[[matrix]]
name = "matrix"
homeserver = "{homeserver}"
user_id = "{bot}"
mode = "appservice"
registration = "{REGISTRATION}"
listen = "127.0.0.1:{listen}"
url = "http://127.0.0.1:{proxy}"
store = "matrix-store"
invite_allow = ["*:localhost"]
reconnect_delay = "1s"

[matrix.user_limit]
enabled = false
"#,
        head = config_head(url, LEASE, http),
        bot = bot(),
    )
}

/// Every message `client` receives within `quiet` of the last one, kept in `seen`.
async fn pump(client: &mut MatrixClient, seen: &mut Vec<Message>, quiet: Duration) {
    while let Some(m) = client.next_message(quiet).await {
        seen.push(m);
    }
}

/// Waits (within [`WAIT`]) until the bot said something containing `needle` in `room`.
async fn expect(client: &mut MatrixClient, seen: &mut Vec<Message>, room: &str, needle: &str, why: &str) {
    let deadline = Instant::now() + WAIT;
    let bot = bot();
    while !seen.iter().any(|m| m.sender == bot && m.room_id == room && m.body.contains(needle)) {
        match client.next_message(deadline.saturating_duration_since(Instant::now())).await {
            Some(m) => seen.push(m),
            None => panic!("{why}: the bot never said {needle:?} in {room} within {WAIT:?}"),
        }
    }
}

fn count(seen: &[Message], room: &str, needle: &str) -> usize {
    let bot = bot();
    seen.iter().filter(|m| m.sender == bot && m.room_id == room && m.body.contains(needle)).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn appservice_transactions_follow_leader_to_the_new_daemon_and_are_answered_once() {
    let pg = tokio::task::block_in_place(Postgres::start_new)
        .unwrap_or_else(|e| panic!("PostgreSQL is needed for this test: {e}"));
    let proxy = LeaderProxy::start().unwrap_or_else(|e| panic!("{e}"));
    let listen = [0, 1].map(|_| endpoint::free_port().unwrap_or_else(|e| panic!("{e}")));
    let url = pg.url();
    // One registration (one as_token and hs_token) for both daemons, naming the proxy.
    let maker = Daemon::new(BIN).unwrap_or_else(|e| panic!("{e}"));
    maker
        .set_config(&config(&url, 1, "http://127.0.0.1:1", listen[0], proxy.port()))
        .unwrap_or_else(|e| panic!("{e}"));
    let output = maker
        .command(&["appservice-registration", "--config", "spellbridge.toml"])
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(output.status.success(), "appservice-registration: {}", String::from_utf8_lossy(&output.stderr));
    let registration = std::fs::read_to_string(maker.path(REGISTRATION)).unwrap_or_else(|e| panic!("{e}"));
    let options = Options { app_services: vec![maker.path(REGISTRATION)], ..Options::default() };
    let synapse = tokio::task::block_in_place(|| Synapse::start_with(options))
        .unwrap_or_else(|e| panic!("Synapse is needed for this test: {e}"));
    let homeserver = synapse.base_url();
    let mut pair = Pair::new(
        BIN,
        &[(REGISTRATION, &registration)],
        "info,spellbridge=debug,spellbridge_adapters=debug,matrix_sdk=warn",
        |which, http| config(&url, http, &homeserver, listen[which], proxy.port()),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    proxy.route_to(&[0, 1].map(|which| Backend { http: pair.http(which), target: listen[which] }));

    let (alice_id, token) =
        synapse.register("alice", &password("alice"), false).unwrap_or_else(|e| panic!("{e}"));
    let mut alice =
        MatrixClient::from_token(&homeserver, &alice_id, &token).unwrap_or_else(|e| panic!("{e}"));
    alice.set_display_name("alice").await.unwrap_or_else(|e| panic!("{e}"));
    let (bob_id, token) = synapse.register("bob", &password("bob"), false).unwrap_or_else(|e| panic!("{e}"));
    let mut bob = MatrixClient::from_token(&homeserver, &bob_id, &token).unwrap_or_else(|e| panic!("{e}"));
    // Three members: not a private chat.
    let room =
        alice.create_room("games", &[bot(), bob_id.clone()], false).await.unwrap_or_else(|e| panic!("{e}"));
    bob.join(&room).await.unwrap_or_else(|e| panic!("{e}"));

    pair.start(0, Role::Active, STARTUP).await.unwrap_or_else(|e| panic!("{e}"));
    let mut seen = Vec::new();
    let started = Instant::now();
    while count(&seen, &room, "Games:") == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "daemon 0 never answered through the proxy; its log ends:\n{}\n--- Synapse's:\n{}",
            pair.daemon(0).log_tail(40),
            synapse.log_tail(30)
        );
        alice.send_text(&room, "!games").await.unwrap_or_else(|e| panic!("{e}"));
        pump(&mut alice, &mut seen, Duration::from_secs(2)).await;
    }
    assert!(proxy.passed(0) > 0, "Synapse reached daemon 0 through the proxy");
    pair.start(1, Role::Standby, STARTUP).await.unwrap_or_else(|e| panic!("{e}"));
    pump(&mut alice, &mut seen, Duration::from_secs(1)).await;
    seen.clear();

    pair.daemon(0).kill().unwrap_or_else(|e| panic!("{e}"));
    let killed = Instant::now();
    // Said while no daemon leads: Synapse's transaction finds nobody behind the proxy.
    alice.send_text(&room, "!new thaum").await.unwrap_or_else(|e| panic!("{e}"));
    pair.wait_role(1, Role::Active, Duration::from_secs(30)).await.unwrap_or_else(|e| panic!("{e}"));
    eprintln!("daemon 1 leads {:?} after the kill", killed.elapsed());
    expect(&mut alice, &mut seen, &room, "opens a Thaum table", "the command said in the gap").await;
    eprintln!("the gap's command answered {:?} after the kill", killed.elapsed());
    alice.send_text(&room, "!status alice").await.unwrap_or_else(|e| panic!("{e}"));
    expect(&mut alice, &mut seen, &room, "alice's sheet", "a command after the takeover").await;
    // Time for a second copy of either answer to arrive (Synapse's next retry, say).
    pump(&mut alice, &mut seen, Duration::from_secs(10)).await;
    // Synapse's transactions now go to daemon 1 (its retry of the one that found nobody,
    // then the next): `/leader` routes them there.
    let deadline = Instant::now() + WAIT;
    while proxy.passed(1) == 0 {
        assert!(Instant::now() < deadline, "Synapse never reached daemon 1 through the proxy");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let said: Vec<&str> = seen.iter().filter(|m| m.sender == bot()).map(|m| m.body.as_str()).collect();
    assert_eq!(count(&seen, &room, "opens a Thaum table"), 1, "the table opened once: {said:#?}");
    assert_eq!(count(&seen, &room, "alice's sheet"), 1, "the sheet shown once: {said:#?}");
    eprintln!("{} connection(s) refused while no daemon led", proxy.refused());
}
