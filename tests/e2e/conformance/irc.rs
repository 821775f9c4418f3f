//! The conformance suite for the IRC transport, against a real InspIRCd started by the
//! harness (each test has its own server; without InspIRCd the tests fail with the
//! harness's message, they are never skipped). The transport connects with
//! `IrcOptions::local` (flood control off); the peer is the harness's raw `IrcClient`,
//! playing a human in the same channel. The peer renders and strips mIRC formatting
//! with its own small code here, not the transport's, so the two are checked against
//! each other.

use std::sync::Arc;
use std::time::Duration;

use spellbridge_adapters::irc::options::IrcOptions;
use spellbridge_adapters::irc::transport::IrcTransport;
use spellbridge_core::text::{Hue, Segment, Style};
use spellbridge_core::{NetworkId, PlayerId, RichText, RoomId};
use spellbridge_tests::harness::HarnessError;
use spellbridge_tests::harness::inspircd::InspIrcd;
use spellbridge_tests::harness::irc_client::{IrcClient, SETUP_TIMEOUT};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::checks::until_room_is_heard;
use super::{Fixture, Formatting, Peer, REJOIN_WAIT, Seen, conformance_suite, conformance_tests};

const NETWORK: &str = "testnet";
const ROOM: &str = "#magic";
const BOT: &str = "spellbot";
const PEER: &str = "alice";
/// The host the server shows for loopback clients (the harness turns off host lookups
/// and ident, so a client's user is its USER name).
const HOST: &str = "127.0.0.1";

/// The IRC line limit, `\r\n` included.
const LINE_LIMIT: usize = 512;

/// Unwraps a harness result, failing the test with the harness's own message.
fn ok<T>(result: Result<T, HarnessError>) -> T {
    result.unwrap_or_else(|e| panic!("{e}"))
}

/// A running InspIRCd, the IRC transport connected to it and in [`ROOM`], and the peer.
pub(crate) struct IrcFixture {
    server: InspIrcd,
    transport: Arc<IrcTransport>,
    task: tokio::task::JoinHandle<()>,
    shutdown: CancellationToken,
    peer: IrcPeer,
}

impl Fixture for IrcFixture {
    type Transport = IrcTransport;
    type Peer = IrcPeer;

    const FORMATTING: Formatting = Formatting::Contains(&["\x02Fire\x02", "\x1DWater\x1D", "\x0314Steam"]);

    async fn start() -> Self {
        let server = ok(tokio::task::block_in_place(InspIrcd::start));
        let port = server.port();
        let options = IrcOptions::local(NETWORK, port, BOT, &[ROOM]);
        assert_eq!(options.flood, None, "the suite runs with flood control off");
        let shutdown = CancellationToken::new();
        let (transport, task) = IrcTransport::start(options, shutdown.clone());
        let rooms = vec![RoomId::new(ROOM)];
        let (client, up) = tokio::join!(connect_peer(port, &rooms), transport.wait_up(SETUP_TIMEOUT));
        assert!(
            up,
            "the IRC transport did not register with InspIRCd on port {port} within {SETUP_TIMEOUT:?}; \
             the server's output ends:\n{}",
            server.output_tail(20)
        );
        let peer = IrcPeer { client, port, bot_nick: transport.nick(), rooms };
        let mut fixture = Self { server, transport, task, shutdown, peer };
        // The transport joins its channels after registering: wait until it hears ROOM.
        let (transport, peer) = fixture.parts();
        until_room_is_heard(transport, peer, &RoomId::new(ROOM), REJOIN_WAIT).await;
        fixture
    }

    fn network(&self) -> NetworkId {
        NetworkId::new(NETWORK)
    }

    fn room(&self) -> RoomId {
        RoomId::new(ROOM)
    }

    fn parts(&mut self) -> (&IrcTransport, &mut IrcPeer) {
        (&self.transport, &mut self.peer)
    }

    async fn restart_server(&mut self) -> Option<()> {
        let before = self.transport.reconnects();
        let server = &mut self.server;
        ok(tokio::task::block_in_place(|| server.restart()));
        eprintln!("InspIRCd restarted on port {} in {:?}", server.port(), server.last_start_time());

        // The restart closed the peer's connection too: it comes back as a user would.
        self.peer.client = connect_peer(self.peer.port, &self.peer.rooms).await;

        let deadline = Instant::now() + REJOIN_WAIT;
        while self.transport.reconnects() <= before {
            assert!(
                Instant::now() < deadline,
                "the IRC transport did not try to reconnect within {REJOIN_WAIT:?} of the restart \
                 (reconnects() stayed at {before})"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(
            self.transport.wait_up(REJOIN_WAIT).await,
            "the IRC transport did not register again within {REJOIN_WAIT:?} of the restart \
             (reconnects() = {}); the server's output ends:\n{}",
            self.transport.reconnects(),
            self.server.output_tail(20)
        );
        eprintln!(
            "the IRC transport is up again after {} reconnect attempt(s)",
            self.transport.reconnects() - before
        );
        self.peer.bot_nick = self.transport.nick();
        Some(())
    }
}

impl Drop for IrcFixture {
    fn drop(&mut self) {
        let ended_early = self.task.is_finished();
        self.shutdown.cancel();
        if ended_early && !std::thread::panicking() {
            panic!("the IRC transport's supervisor task ended before the test shut it down");
        }
    }
}

/// Connects the peer's client and enters `rooms`.
async fn connect_peer(port: u16, rooms: &[RoomId]) -> IrcClient {
    let mut client = ok(IrcClient::connect(port, PEER).await);
    for room in rooms {
        ok(client.join(room.as_str()).await);
    }
    client
}

/// A human on the IRC network: the harness's raw client.
pub(crate) struct IrcPeer {
    client: IrcClient,
    port: u16,
    /// The transport's nick, to talk to it privately and recognise its lines.
    bot_nick: String,
    /// The channels the peer is in (rejoined after a restart).
    rooms: Vec<RoomId>,
}

impl Peer for IrcPeer {
    fn player(&self) -> PlayerId {
        // No services on the test server: a player is their nick.
        PlayerId::new(PEER)
    }

    fn display_name(&self) -> String {
        PEER.to_owned()
    }

    fn direct_room(&self) -> RoomId {
        RoomId::new(PEER)
    }

    fn line_limit(&self) -> Option<usize> {
        Some(LINE_LIMIT)
    }

    async fn enter(&mut self, name: &str) -> RoomId {
        let room = RoomId::new(format!("#{name}"));
        ok(self.client.join(room.as_str()).await);
        if !self.rooms.contains(&room) {
            self.rooms.push(room.clone());
        }
        room
    }

    async fn say_in_room(&mut self, room: &RoomId, text: &str) {
        ok(self.client.privmsg(room.as_str(), text).await);
    }

    async fn say_formatted_in_room(&mut self, room: &RoomId, text: &RichText) {
        let line = render(text);
        ok(self.client.privmsg(room.as_str(), &line).await);
    }

    async fn say_privately(&mut self, text: &str) {
        let bot = self.bot_nick.clone();
        ok(self.client.privmsg(&bot, text).await);
    }

    async fn next_seen(&mut self, timeout: Duration) -> Option<Seen> {
        let deadline = Instant::now() + timeout;
        loop {
            let message =
                self.client.next_privmsg(deadline.saturating_duration_since(Instant::now())).await?;
            if message.from != self.bot_nick {
                continue;
            }
            let private = !message.target.starts_with(['#', '&']);
            // The line as the server relayed it: `:nick!user@host PRIVMSG target :text\r\n`.
            let wire_bytes =
                format!(":{}!{BOT}@{HOST} PRIVMSG {} :{}\r\n", message.from, message.target, message.text)
                    .len();
            return Some(Seen {
                private,
                room: (!private).then(|| RoomId::new(message.target.as_str())),
                text: strip(&message.text),
                formatted: message.text,
                wire_bytes,
            });
        }
    }
}

/// Renders rich text as an IRC client sends it: each run between its mIRC codes.
fn render(text: &RichText) -> String {
    let mut line = String::new();
    for segment in text.segments() {
        let (open, body, close) = match segment {
            Segment::Text { text, style: Style::Plain } => ("", text.as_str(), ""),
            Segment::Text { text, style: Style::Bold } => ("\x02", text.as_str(), "\x02"),
            Segment::Text { text, style: Style::Italic } => ("\x1D", text.as_str(), "\x1D"),
            Segment::Text { text, style: Style::Code } => ("\x11", text.as_str(), "\x11"),
            Segment::Coloured { text, hue } => (colour(*hue), text.as_str(), "\x0F"),
            Segment::Mention(player) => ("", player.as_str(), ""),
            Segment::Name(player) => ("\x02", player.as_str(), "\x02"),
            // What a client sends has no list separators or links of the bot's: plain words.
            Segment::Separator(text) | Segment::Link { text, .. } => ("", text.as_str(), ""),
            Segment::Bot => ("", "me", ""),
        };
        line.push_str(open);
        line.push_str(body);
        line.push_str(close);
    }
    line
}

fn colour(hue: Hue) -> &'static str {
    match hue {
        Hue::Red => "\x0304",
        Hue::Blue => "\x0302",
        Hue::Brown => "\x0305",
        Hue::Green => "\x0309",
        Hue::Yellow => "\x0308",
        Hue::Grey => "\x0315",
    }
}

/// The visible text of an IRC line: every mIRC formatting code removed
/// (<https://modern.ircdocs.horse/formatting>).
fn strip(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x02' | '\x0F' | '\x11' | '\x16' | '\x1D' | '\x1E' | '\x1F' => {}
            '\x03' | '\x04' => {
                // `\x03[fg[,bg]]` with 1-2 digits each, `\x04[RRGGBB[,RRGGBB]]`.
                let (most, is_digit): (usize, fn(&char) -> bool) =
                    if c == '\x03' { (2, char::is_ascii_digit) } else { (6, char::is_ascii_hexdigit) };
                let skip_colour = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>| {
                    let mut n = 0;
                    while n < most && chars.peek().is_some_and(is_digit) {
                        chars.next();
                        n += 1;
                    }
                    n > 0
                };
                if skip_colour(&mut chars) && chars.peek() == Some(&',') {
                    let mut ahead = chars.clone();
                    ahead.next();
                    if ahead.peek().is_some_and(is_digit) {
                        chars.next();
                        skip_colour(&mut chars);
                    }
                }
            }
            c => out.push(c),
        }
    }
    out
}

conformance_suite!(IrcFixture);
conformance_tests!(IrcFixture; reconnects_after_a_server_restart);

#[test]
fn the_peer_strips_and_renders_mirc_formatting() {
    assert_eq!(
        strip("\x02Fire\x02 meets \x1DWater\x1D: \x0314Steam\x03 rises"),
        "Fire meets Water: Steam rises"
    );
    assert_eq!(
        strip("\x0304,01red\x0F \x033,5 x\x03,y \x04FF0000,00FF00hex\x04 \x1F\x1E\x11\x16u"),
        "red  x,y hex u"
    );
    assert_eq!(strip("\x0312345"), "345");
    let text = RichText::new().coloured("!cast", Hue::Red).text(" ").italic("fire").bold("!");
    assert_eq!(render(&text), "\x0304!cast\x0F \x1Dfire\x1D\x02!\x02");
    assert_eq!(strip(&render(&text)), "!cast fire!");
}
