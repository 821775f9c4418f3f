//! The real-server harness against InspIRCd: the server starts on a free port, raw
//! clients register in parallel and talk in a channel and privately, a restart keeps the
//! port, and the server relays lines exactly as the IRC line splitter assumes. These
//! tests need InspIRCd (`tests/scripts/install-inspircd.sh`); without it they fail with
//! the harness's message, they are never skipped.

use std::time::{Duration, Instant};

use spellbridge_adapters::irc::split::Splitter;
use spellbridge_tests::harness::HarnessError;
use spellbridge_tests::harness::inspircd::{InspIrcd, Options};
use spellbridge_tests::harness::irc_client::{IrcClient, Message, MessageKind};

const WAIT: Duration = Duration::from_secs(5);

/// Unwraps a harness result, failing the test with the harness's own message.
fn ok<T>(result: Result<T, HarnessError>) -> T {
    result.unwrap_or_else(|e| panic!("{e}"))
}

fn privmsg(from: &str, target: &str, text: &str) -> Message {
    Message { kind: MessageKind::Privmsg, from: from.into(), target: target.into(), text: text.into() }
}

#[tokio::test]
async fn two_clients_talk_in_a_channel_and_privately() {
    let server = ok(InspIrcd::start());
    let port = server.port();
    let (alice, bob) = tokio::join!(IrcClient::connect(port, "alice"), IrcClient::connect(port, "bob"));
    let (mut alice, mut bob) = (ok(alice), ok(bob));
    ok(alice.join("#magic").await);
    ok(bob.join("#magic").await);

    ok(alice.privmsg("#magic", "hello, \x02bob\x02 ✨").await);
    assert_eq!(bob.next_privmsg(WAIT).await, Some(privmsg("alice", "#magic", "hello, \x02bob\x02 ✨")));

    ok(bob.privmsg("alice", "psst: !cast fire").await);
    let got = ok(alice.expect_privmsg_matching(|m| m.from == "bob", WAIT).await);
    assert_eq!(got, privmsg("bob", "alice", "psst: !cast fire"));

    // Nothing else was said.
    assert_eq!(alice.next_privmsg(Duration::from_millis(100)).await, None);
    ok(alice.quit().await);
    ok(bob.quit().await);
}

#[tokio::test]
async fn clients_register_in_parallel() {
    let server = ok(InspIrcd::start());
    let started = Instant::now();
    let mut set = tokio::task::JoinSet::new();
    for i in 0..8 {
        let port = server.port();
        set.spawn(async move { IrcClient::connect(port, &format!("player{i}")).await });
    }
    let mut clients = Vec::new();
    while let Some(joined) = set.join_next().await {
        clients.push(ok(joined.unwrap_or_else(|e| panic!("client task: {e}"))));
    }
    let took = started.elapsed();
    eprintln!(
        "8 clients registered in parallel in {took:?}; the server started in {:?}",
        server.last_start_time()
    );
    assert_eq!(clients.len(), 8);
    // One registration takes ~1 s (the server's timer); in parallel they overlap.
    assert!(took < Duration::from_secs(4), "parallel registration took {took:?}");
}

#[tokio::test]
async fn a_restart_keeps_the_port_and_clients_reconnect() {
    let mut server = ok(InspIrcd::start());
    let port = server.port();
    let first_pid = server.pid();
    let mut alice = ok(IrcClient::connect(port, "alice").await);

    let started = Instant::now();
    ok(server.restart());
    eprintln!("restart took {:?} (start {:?})", started.elapsed(), server.last_start_time());
    assert_eq!(server.port(), port);
    assert_ne!(server.pid(), first_pid);
    assert!(alice.wait_closed(WAIT).await, "the old connection should be closed by the restart");

    let (alice, bob) = tokio::join!(IrcClient::connect(port, "alice"), IrcClient::connect(port, "bob"));
    let (mut alice, mut bob) = (ok(alice), ok(bob));
    ok(alice.privmsg("bob", "back again").await);
    assert_eq!(bob.next_privmsg(WAIT).await, Some(privmsg("alice", "bob", "back again")));
}

#[test]
fn stop_ends_the_process_and_is_idempotent() {
    let mut server = ok(InspIrcd::start());
    let pid = server.pid().unwrap_or_else(|| panic!("a started server has a pid"));
    let proc_entry = std::path::PathBuf::from(format!("/proc/{pid}"));
    assert!(proc_entry.exists());
    let started = Instant::now();
    ok(server.stop());
    eprintln!("stop (SIGTERM) took {:?}", started.elapsed());
    assert!(!proc_entry.exists(), "inspircd {pid} still running after stop");
    assert_eq!(server.pid(), None);
    ok(server.stop());
    assert!(std::net::TcpStream::connect(server.address()).is_err(), "nothing listens after stop");
}

#[tokio::test]
async fn flood_penalties_can_be_turned_on() {
    let server = ok(InspIrcd::start_with(Options { flood_penalties: true, ..Options::default() }));
    let config = std::fs::read_to_string(server.config_path()).unwrap_or_else(|e| panic!("{e}"));
    assert!(config.contains(r#"fakelag="yes""#), "{config}");
    let mut alice = ok(IrcClient::connect(server.port(), "alice").await);
    ok(alice.join("#magic").await);
}

/// The server relays `:nick!user@host PRIVMSG target :payload\r\n` and cuts it at 512
/// bytes without a word: the line splitter's budget must be exact, and it is.
#[tokio::test]
async fn the_server_cuts_relayed_lines_at_512_bytes_and_split_payloads_arrive_whole() {
    let server = ok(InspIrcd::start());
    let port = server.port();
    let (alice, bob) = tokio::join!(IrcClient::connect(port, "alice"), IrcClient::connect(port, "bob"));
    let (mut alice, mut bob) = (ok(alice), ok(bob));
    // How the server relays alice: no ident, so the user is the USER name.
    let prefix = ":alice!alice@127.0.0.1 ";
    let splitter = Splitter::new(prefix.len());
    let budget = splitter.payload_budget("bob");

    let exact = "x".repeat(budget);
    ok(alice.privmsg("bob", &exact).await);
    assert_eq!(bob.next_privmsg(WAIT).await.map(|m| m.text.len()), Some(budget));
    ok(alice.privmsg("bob", &format!("{exact}yz")).await);
    assert_eq!(
        bob.next_privmsg(WAIT).await.map(|m| m.text),
        Some(exact.clone()),
        "one byte over the limit is cut by the server"
    );

    let text = "\x0304Fire\x03 and \x02ünïcödé wörds 中文 🧙\x02 ".repeat(60);
    let lines = splitter.split("bob", &text).unwrap_or_else(|e| panic!("{e}"));
    assert!(lines.len() > 3);
    for line in &lines {
        ok(alice.privmsg("bob", line).await);
    }
    for line in &lines {
        assert_eq!(bob.next_privmsg(WAIT).await.map(|m| m.text), Some(line.clone()));
    }
}
