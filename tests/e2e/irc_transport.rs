//! The IRC transport's behaviour beyond the conformance suite, against a real InspIRCd:
//! a taken nick, a kick, CTCP, the account rule, and lines no client should send.

use std::io::Write as _;
use std::sync::Arc;
use std::time::Duration;

use spellbridge_adapters::irc::options::IrcOptions;
use spellbridge_adapters::irc::transport::IrcTransport;
use spellbridge_core::{GameTransport, Inbound};
use spellbridge_tests::harness::inspircd::InspIrcd;
use spellbridge_tests::harness::irc_client::{IrcClient, MessageKind};
use tokio_util::sync::CancellationToken;

const WAIT: Duration = Duration::from_secs(10);

fn server() -> InspIrcd {
    tokio::task::block_in_place(InspIrcd::start).unwrap_or_else(|e| panic!("{e}"))
}

async fn bot(options: IrcOptions) -> (Arc<IrcTransport>, CancellationToken) {
    let stop = CancellationToken::new();
    let (transport, _task) = IrcTransport::start(options, stop.clone());
    assert!(transport.wait_up(WAIT).await, "the transport registers");
    (transport, stop)
}

async fn client(port: u16, nick: &str, channel: &str) -> IrcClient {
    let mut client = IrcClient::connect(port, nick).await.unwrap_or_else(|e| panic!("{e}"));
    client.join(channel).await.unwrap_or_else(|e| panic!("{e}"));
    client
}

/// Says `text` in `channel` until the transport hears it (it may still be joining).
async fn heard(transport: &IrcTransport, peer: &mut IrcClient, channel: &str, text: &str) -> Inbound {
    for _ in 0..20 {
        peer.privmsg(channel, text).await.expect("send");
        if let Ok(Some(inbound)) = tokio::time::timeout(Duration::from_millis(500), transport.recv()).await
            && inbound.text == text
        {
            return inbound;
        }
    }
    panic!("the transport never heard {text:?} in {channel}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_taken_nick_falls_back_to_an_alternate() {
    let irc = server();
    let _squatter = client(irc.port(), "spellbot", "#magic").await;
    let (transport, stop) = bot(IrcOptions::local("test", irc.port(), "spellbot", &["#magic"])).await;
    assert_eq!(transport.nick(), "spellbot_");
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_kick_the_bot_rejoins_and_hears_the_channel_again() {
    let irc = server();
    // The first to join a channel is its operator.
    let mut op = client(irc.port(), "op", "#magic").await;
    let (transport, stop) = bot(IrcOptions::local("test", irc.port(), "spellbot", &["#magic"])).await;
    heard(&transport, &mut op, "#magic", "before the kick").await;
    op.send_raw("KICK #magic spellbot :out you go").await.expect("kick");
    tokio::time::sleep(Duration::from_secs(3)).await;
    let again = heard(&transport, &mut op, "#magic", "after the kick").await;
    assert_eq!(again.room.as_str(), "#magic");
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctcp_version_is_answered_and_not_taken_as_a_message() {
    let irc = server();
    let mut peer = client(irc.port(), "alice", "#magic").await;
    let (transport, stop) = bot(IrcOptions::local("test", irc.port(), "spellbot", &["#magic"])).await;
    peer.privmsg("spellbot", "\u{1}VERSION\u{1}").await.expect("ctcp");
    let reply = peer.next_message(WAIT).await.expect("a CTCP reply");
    assert_eq!(reply.kind, MessageKind::Notice);
    assert!(reply.text.starts_with("\u{1}VERSION spellbridge"), "{reply}");
    heard(&transport, &mut peer, "#magic", "plain text still arrives").await;
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_services_account_commands_get_a_notice_not_a_game() {
    let irc = server();
    let mut peer = client(irc.port(), "alice", "#magic").await;
    let mut options = IrcOptions::local("test", irc.port(), "spellbot", &["#magic"]);
    options.require_account = true;
    let (transport, stop) = bot(options).await;
    heard(&transport, &mut peer, "#magic", "chat is not a command").await;
    peer.privmsg("#magic", "!join").await.expect("send");
    let notice = peer.next_message(WAIT).await.expect("a notice");
    assert_eq!(notice.kind, MessageKind::Notice, "{notice}");
    assert!(notice.text.contains("logged in to services"), "{notice}");
    let marker = heard(&transport, &mut peer, "#magic", "marker").await;
    assert_eq!(marker.text, "marker", "the command itself never reached the games");
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_utf8_and_control_characters_do_not_break_the_connection() {
    let irc = server();
    let mut peer = client(irc.port(), "alice", "#magic").await;
    let (transport, stop) = bot(IrcOptions::local("test", irc.port(), "spellbot", &["#magic"])).await;
    heard(&transport, &mut peer, "#magic", "hello").await;
    // A raw socket: invalid UTF-8, a bare control character, an over-long line.
    let port = irc.port();
    tokio::task::spawn_blocking(move || {
        let mut raw = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
        raw.write_all(b"NICK mallory\r\nUSER m 0 * :m\r\n").expect("register");
        std::thread::sleep(Duration::from_millis(1500));
        raw.write_all(b"JOIN #magic\r\n").expect("join");
        raw.write_all(b"PRIVMSG #magic :!status \xff\xfe broken\r\n").expect("bad utf-8");
        raw.write_all(b"PRIVMSG #magic :!st\x07atus\r\n").expect("bell");
        let long = format!("PRIVMSG #magic :{}\r\n", "x".repeat(2_000));
        raw.write_all(long.as_bytes()).expect("long");
        std::thread::sleep(Duration::from_millis(500));
    })
    .await
    .expect("the raw client ran");
    let mut seen = Vec::new();
    while let Ok(Some(inbound)) = tokio::time::timeout(Duration::from_secs(2), transport.recv()).await {
        assert!(
            !inbound.text.chars().any(char::is_control),
            "no control characters reach the games: {inbound:?}"
        );
        seen.push(inbound.text);
    }
    assert!(seen.iter().any(|t| t == "!status"), "the bell is stripped: {seen:?}");
    let after = heard(&transport, &mut peer, "#magic", "still here").await;
    assert_eq!(after.sender.as_str(), "alice");
    assert_eq!(transport.reconnects(), 0, "no line dropped the connection");
    stop.cancel();
}
