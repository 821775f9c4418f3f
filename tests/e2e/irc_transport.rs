//! The IRC transport's behaviour beyond the conformance suite, against a real InspIRCd:
//! a taken nick, a kick, CTCP, the account rule, lines no client should send, and what a
//! bridge needs: formatting read into rich text, `/me` both ways, channel operators,
//! NOTICEs not delivered, and leaving a channel for good.

use std::io::Write as _;
use std::sync::Arc;
use std::time::Duration;

use spellbridge_adapters::irc::options::IrcOptions;
use spellbridge_adapters::irc::transport::{Connection, IrcTransport};
use spellbridge_core::text::Hue;
use spellbridge_core::{Destination, GameTransport, Inbound, Message, RichText, RoomId, Said, Voice};
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
    options.require_account = Some(true);
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

/// The next message the transport delivers within `limit`.
async fn next(transport: &IrcTransport, limit: Duration) -> Option<Inbound> {
    tokio::time::timeout(limit, transport.recv()).await.ok().flatten()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_formatted_message_arrives_with_its_rich_segments() {
    let irc = server();
    let mut peer = client(irc.port(), "alice", "#magic").await;
    let (transport, stop) = bot(IrcOptions::local("test", irc.port(), "spellbot", &["#magic"])).await;
    heard(&transport, &mut peer, "#magic", "ready").await;
    let line = "\x02Fire\x02 meets \x1DWater\x1D: \x0304hot\x03 \x0306violet\x03 \x1Funder\x1F \x11!cast\x11";
    peer.privmsg("#magic", line).await.expect("send");
    let inbound = next(&transport, WAIT).await.expect("the formatted message arrives");
    assert_eq!(inbound.text, "Fire meets Water: hot violet under !cast");
    let expected = RichText::new()
        .bold("Fire")
        .text(" meets ")
        .italic("Water")
        .text(": ")
        .coloured("hot", Hue::Red)
        .text(" violet under ")
        .code("!cast");
    assert_eq!(inbound.rich, expected);
    assert_eq!(inbound.said, Said::Message);
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_me_arrives_as_an_emote_and_an_act_goes_out_as_ctcp_action() {
    let irc = server();
    let mut peer = client(irc.port(), "alice", "#magic").await;
    let (transport, stop) = bot(IrcOptions::local("test", irc.port(), "spellbot", &["#magic"])).await;
    heard(&transport, &mut peer, "#magic", "ready").await;

    peer.action("#magic", "waves \x02hard\x02").await.expect("/me");
    let emote = next(&transport, WAIT).await.expect("the action arrives");
    assert_eq!((emote.said.clone(), emote.text.as_str()), (Said::Emote, "waves hard"), "{emote:?}");
    assert_eq!(emote.rich, RichText::new().text("waves ").bold("hard"));
    assert_eq!(emote.room.as_str(), "#magic");
    assert!(!emote.private);

    let room = Destination::Room(RoomId::new("#magic"));
    let act = |text: RichText| Message { text, voice: Voice::Act, ..Message::default() };
    transport.send(&room, &act(RichText::new().text("bows to ").bold("alice"))).await.expect("send");
    let bow = peer.next_privmsg(WAIT).await.expect("the action reaches the peer");
    assert_eq!(bow.text, "\u{1}ACTION bows to \x02alice\x02\u{1}", "{bow}");

    // Long enough for three lines: each is wrapped on its own and none is cut short.
    let words: Vec<String> = (0..200).map(|i| format!("spell{i}")).collect();
    transport.send(&room, &act(RichText::new().text(words.join(" ")))).await.expect("send");
    let mut inner = Vec::new();
    while inner.join(" ").split(' ').count() < words.len() {
        let line = peer.next_privmsg(WAIT).await.expect("the rest of the long action");
        let text = line.text.strip_prefix("\u{1}ACTION ").and_then(|t| t.strip_suffix('\u{1}'));
        let Some(text) = text else { panic!("a line not wrapped as an ACTION: {line}") };
        inner.push(text.to_owned());
    }
    assert!(inner.len() >= 3, "{inner:?}");
    assert_eq!(inner.join(" "), words.join(" "));

    // The action was not answered as a CTCP request.
    let stray = peer.next_message(Duration::from_millis(500)).await;
    assert_eq!(stray, None, "nothing else is said");
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operators_message_says_operator_and_a_plain_users_does_not() {
    let irc = server();
    // The first to join a channel is its operator.
    let mut op = client(irc.port(), "op", "#magic").await;
    let (transport, stop) = bot(IrcOptions::local("test", irc.port(), "spellbot", &["#magic"])).await;
    let mut bob = client(irc.port(), "bob", "#magic").await;
    assert!(heard(&transport, &mut op, "#magic", "I run this place").await.operator);
    assert!(!heard(&transport, &mut bob, "#magic", "I just play").await.operator);

    // Privately nobody operates anything.
    let private = heard(&transport, &mut op, "spellbot", "psst").await;
    assert!(private.private && !private.operator, "{private:?}");

    // Modes change it as they come; the op's own line after the MODE orders the two.
    op.send_raw("MODE #magic +o bob").await.expect("mode");
    heard(&transport, &mut op, "#magic", "bob is an op now").await;
    assert!(heard(&transport, &mut bob, "#magic", "promoted").await.operator);
    op.send_raw("MODE #magic -o+v bob bob").await.expect("mode");
    heard(&transport, &mut op, "#magic", "bob has voice only").await;
    assert!(!heard(&transport, &mut bob, "#magic", "voice is not op").await.operator);

    // A nick change keeps the prefix.
    op.send_raw("NICK boss").await.expect("nick");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let renamed = heard(&transport, &mut op, "#magic", "same op, new name").await;
    assert_eq!(renamed.display_name, "boss");
    assert!(renamed.operator);
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notices_are_never_delivered() {
    let irc = server();
    let mut peer = client(irc.port(), "alice", "#magic").await;
    let (transport, stop) = bot(IrcOptions::local("test", irc.port(), "spellbot", &["#magic"])).await;
    heard(&transport, &mut peer, "#magic", "ready").await;
    peer.notice("#magic", "!join").await.expect("notice");
    peer.notice("spellbot", "!status").await.expect("notice");
    peer.privmsg("#magic", "marker").await.expect("send");
    let first = next(&transport, WAIT).await.expect("the marker arrives");
    assert_eq!(first.text, "marker", "the notices were not delivered: {first:?}");
    assert!(next(&transport, Duration::from_millis(300)).await.is_none());
    assert!(peer.next_message(Duration::from_millis(300)).await.is_none(), "and not answered");
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_left_channel_is_parted_and_not_rejoined_after_a_restart() {
    let mut irc = server();
    // Joined in name order on every registration, so hearing #zulu means the others
    // were joined or skipped before it.
    let channels = ["#magic", "#other", "#quiet", "#zulu"];
    let port = irc.port();
    let mut peer = IrcClient::connect(port, "alice").await.unwrap_or_else(|e| panic!("{e}"));
    for channel in channels {
        peer.join(channel).await.unwrap_or_else(|e| panic!("{e}"));
    }
    let (transport, stop) = bot(IrcOptions::local("test", port, "spellbot", &channels)).await;
    heard(&transport, &mut peer, "#zulu", "ready").await;
    let listed = |names: Vec<String>| names.iter().any(|n| n.trim_start_matches(['@', '+']) == "spellbot");
    assert!(listed(peer.names("#other").await.expect("names")));

    // Connected: the bot parts at once.
    transport.leave(&RoomId::new("#other")).await.expect("leave");
    let deadline = tokio::time::Instant::now() + WAIT;
    while listed(peer.names("#other").await.expect("names")) {
        assert!(tokio::time::Instant::now() < deadline, "the bot never parted #other");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // Disconnected: a leave is only remembered.
    tokio::task::block_in_place(|| irc.stop()).unwrap_or_else(|e| panic!("{e}"));
    let mut connection = transport.connection();
    tokio::time::timeout(WAIT, connection.wait_for(|l| *l != Connection::Up))
        .await
        .expect("link down")
        .expect("link");
    transport.leave(&RoomId::new("#quiet")).await.expect("a leave while down");

    tokio::task::block_in_place(|| irc.restart()).unwrap_or_else(|e| panic!("{e}"));
    assert!(transport.wait_up(Duration::from_secs(30)).await, "the bot reconnects");
    let mut peer = IrcClient::connect(port, "alice").await.unwrap_or_else(|e| panic!("{e}"));
    for channel in channels {
        peer.join(channel).await.unwrap_or_else(|e| panic!("{e}"));
    }
    heard(&transport, &mut peer, "#zulu", "back").await;
    heard(&transport, &mut peer, "#magic", "still joined").await;
    assert!(!listed(peer.names("#other").await.expect("names")), "#other is not rejoined");
    assert!(!listed(peer.names("#quiet").await.expect("names")), "#quiet is not rejoined");
    stop.cancel();
}
