//! The conformance suite for the Matrix transport, against a real Synapse started by the
//! harness (each test has its own server; without Synapse the tests fail with the
//! harness's message, they are never skipped). The transport logs in with
//! `MatrixOptions::local`; the peer is the harness's raw `MatrixClient` (alice), playing a
//! human. The raw client has no end-to-end encryption, so everything the peer reads is
//! unencrypted:
//!
//! - Rooms the peer enters are public rooms it creates, with a silent third member
//!   (carol): the bot is not invited (it accepts invites, so an invite would be a join),
//!   it joins by id when told to; and a public room is never taken for a direct chat
//!   (the transport calls private only a room it can vouch for: invite-only, history
//!   for members only, nobody but the bot and one player ever in it).
//! - Private messages go through an unencrypted direct room that the peer opened with
//!   the bot (`is_direct`, history for joined members) before the test: the bot
//!   accepts the invite and finds the room as its direct room with the peer. A direct
//!   room the bot creates itself is unencrypted by default (the daemon's bridge tests,
//!   `daemon/tests/bridge/replies.rs`), or encrypted with `dm_encryption`, covered by
//!   `matrix_transport::encrypted_rooms_and_direct_messages_work_both_ways` with a second
//!   transport as the human.
//! - Formatting arrives as `org.matrix.custom.html` in `formatted_body`; the peer's
//!   visible text is that HTML reduced with its own small code here (not the
//!   transport's), falling back to `body`. What the peer says formatted has the visible
//!   text as its `body`, as the spec has it for the plain fallback.
//! - Matrix has no line limit that a 2,000-character message comes near (an event may
//!   take 65,536 bytes, and the transport sends one event per message), so
//!   [`Peer::line_limit`] is `None`.
//!
//! Every check of the shared suite applies, and so does the reconnect check (Synapse is
//! restarted on the same port with the same database).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use spellbridge_adapters::matrix::matrix_sdk::ruma::UserId;
use spellbridge_adapters::matrix::{MatrixOptions, MatrixTransport};
use spellbridge_core::text::{Hue, Segment, Style};
use spellbridge_core::{NetworkId, PlayerId, RichText, RoomId};
use spellbridge_tests::harness::HarnessError;
use spellbridge_tests::harness::matrix_client::{MatrixClient, Method};
use spellbridge_tests::harness::synapse::Synapse;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::checks::until_room_is_heard;
use super::{Fixture, Formatting, Peer, REJOIN_WAIT, Seen, conformance_suite, conformance_tests};

const NETWORK: &str = "matrix";
const BOT: &str = "spellbot";
const PEER: &str = "alice";
/// A silent third member of every room the peer enters (see the module docs).
const THIRD: &str = "carol";

/// How long the bot may take to log in, sync and accept an invite at start (a cold
/// first sync and the crypto store's set-up take longer than a message).
const SETUP_WAIT: Duration = Duration::from_secs(30);

/// Unwraps a harness result, failing the test with the harness's own message.
fn ok<T>(result: Result<T, HarnessError>) -> T {
    result.unwrap_or_else(|e| panic!("{e}"))
}

fn password(localpart: &str) -> String {
    format!("{localpart}-password")
}

/// A running Synapse, the Matrix transport logged in and in a room with the peer, and
/// the peer.
pub(crate) struct MatrixFixture {
    server: Synapse,
    transport: Arc<MatrixTransport>,
    task: tokio::task::JoinHandle<()>,
    shutdown: CancellationToken,
    room: RoomId,
    peer: MatrixPeer,
    /// Kept for the store's lifetime.
    _store: tempfile::TempDir,
}

impl Fixture for MatrixFixture {
    type Transport = MatrixTransport;
    type Peer = MatrixPeer;

    const FORMATTING: Formatting =
        Formatting::Contains(&["<strong>Fire</strong>", "<em>Water</em>", "data-mx-color=", ">Steam</font>"]);

    async fn start() -> Self {
        let server = ok(tokio::task::block_in_place(Synapse::start));
        let bot_id = ok(server.register(BOT, &password(BOT), false)).0;
        for user in [PEER, THIRD] {
            ok(server.register(user, &password(user), false));
        }
        let base = server.base_url();
        let client = ok(MatrixClient::login(&base, PEER, &password(PEER)).await);
        let third = ok(MatrixClient::login(&base, THIRD, &password(THIRD)).await);
        let mut peer = MatrixPeer { client, third, bot_id: bot_id.clone(), direct_room: String::new() };

        // The room the bot is configured for (joined at start, as the daemon's `rooms`),
        // and the peer's direct room with the bot (an invite the bot accepts).
        let room = peer.enter("magic").await;
        peer.direct_room = ok(peer.client.create_dm(&bot_id, false).await);

        let store = tempfile::tempdir().expect("a temp dir for the store");
        let mut options =
            MatrixOptions::local(NETWORK, &base, &bot_id, &password(BOT), store.path().to_path_buf());
        options.rooms = vec![room.as_str().to_owned()];
        let shutdown = CancellationToken::new();
        let (transport, task) = MatrixTransport::start(options, shutdown.clone());
        assert!(
            transport.wait_up(SETUP_WAIT).await,
            "the Matrix transport did not log in and sync with Synapse at {base} within {SETUP_WAIT:?}; \
             Synapse's log ends:\n{}",
            server.log_tail(30)
        );
        let mut fixture = Self { server, transport, task, shutdown, room: room.clone(), peer, _store: store };
        fixture.until_direct_room().await;
        ok(fixture.peer.client.catch_up().await);
        let (transport, peer) = fixture.parts();
        until_room_is_heard(transport, peer, &room, SETUP_WAIT).await;
        fixture
    }

    fn network(&self) -> NetworkId {
        NetworkId::new(NETWORK)
    }

    fn room(&self) -> RoomId {
        self.room.clone()
    }

    fn parts(&mut self) -> (&MatrixTransport, &mut MatrixPeer) {
        (&self.transport, &mut self.peer)
    }

    async fn restart_server(&mut self) -> Option<()> {
        let before = self.transport.reconnects();
        let server = &mut self.server;
        ok(tokio::task::block_in_place(|| server.restart()));
        eprintln!("Synapse restarted on port {} in {:?}", server.port(), server.last_start_time());
        // The peer's client has no connection to renew: its next request (or sync)
        // reaches the new server.
        let deadline = Instant::now() + REJOIN_WAIT;
        while self.transport.reconnects() <= before {
            assert!(
                Instant::now() < deadline,
                "the Matrix transport did not sync again within {REJOIN_WAIT:?} of the restart \
                 (reconnects() stayed at {before}); Synapse's log ends:\n{}",
                self.server.log_tail(30)
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(
            self.transport.wait_up(REJOIN_WAIT).await,
            "the Matrix transport is not up again within {REJOIN_WAIT:?} of the restart"
        );
        eprintln!(
            "the Matrix transport is up again after {} reconnect(s)",
            self.transport.reconnects() - before
        );
        Some(())
    }
}

impl MatrixFixture {
    /// Waits until the bot has accepted the peer's direct-room invite and knows the room
    /// as its direct room with the peer (from its `m.direct`), so `send(Private)` uses it.
    async fn until_direct_room(&self) {
        let wanted = self.peer.direct_room.as_str();
        let peer = UserId::parse(self.peer.player().as_str()).expect("the peer's user id");
        let deadline = Instant::now() + SETUP_WAIT;
        loop {
            let joined = self.transport.joined_rooms().iter().any(|r| r.as_str() == wanted);
            let direct = self
                .transport
                .client()
                .is_some_and(|c| c.get_dm_rooms(&peer).any(|r| r.room_id().as_str() == wanted));
            if joined && direct {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "within {SETUP_WAIT:?} the bot did not take {wanted} as its direct room with {peer} \
                 (joined: {joined}, in its m.direct: {direct}); Synapse's log ends:\n{}",
                self.server.log_tail(20)
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }
}

impl Drop for MatrixFixture {
    fn drop(&mut self) {
        let ended_early = self.task.is_finished();
        self.shutdown.cancel();
        if ended_early && !std::thread::panicking() {
            panic!("the Matrix transport's supervisor task ended before the test shut it down");
        }
    }
}

/// A human on the homeserver: the harness's raw client, with a silent friend who joins
/// every room it enters.
pub(crate) struct MatrixPeer {
    client: MatrixClient,
    third: MatrixClient,
    bot_id: String,
    /// The unencrypted direct room the peer opened with the bot.
    direct_room: String,
}

impl Peer for MatrixPeer {
    fn player(&self) -> PlayerId {
        PlayerId::new(self.client.user_id())
    }

    fn display_name(&self) -> String {
        // Registration gives a user its localpart as display name.
        PEER.to_owned()
    }

    fn direct_room(&self) -> RoomId {
        RoomId::new(&self.direct_room)
    }

    fn line_limit(&self) -> Option<usize> {
        None
    }

    async fn enter(&mut self, name: &str) -> RoomId {
        // Public, so the bot can join by id without an invite (which it would accept).
        let body = json!({"name": name, "preset": "public_chat"});
        let answer = ok(self.client.call(Method::POST, "/_matrix/client/v3/createRoom", Some(&body)).await);
        let Some(room) = answer.get("room_id").and_then(Value::as_str) else {
            panic!("createRoom answered without a room_id: {answer}");
        };
        ok(self.third.join(room).await);
        RoomId::new(room)
    }

    async fn say_in_room(&mut self, room: &RoomId, text: &str) {
        ok(self.client.send_text(room.as_str(), text).await);
    }

    async fn say_formatted_in_room(&mut self, room: &RoomId, text: &RichText) {
        ok(self.client.send_html(room.as_str(), &text.plain(), &render(text)).await);
    }

    async fn say_privately(&mut self, text: &str) {
        let room = self.direct_room.clone();
        ok(self.client.send_text(&room, text).await);
    }

    async fn next_seen(&mut self, timeout: Duration) -> Option<Seen> {
        let deadline = Instant::now() + timeout;
        loop {
            let event = self.client.next_event(deadline.saturating_duration_since(Instant::now())).await?;
            if event.sender != self.bot_id {
                continue;
            }
            let Some(message) = event.message() else {
                // The bot's membership and other state; an `m.room.encrypted` event here
                // would mean a message the raw client cannot read: say so.
                assert_ne!(
                    event.event_type, "m.room.encrypted",
                    "the bot sent an encrypted event the peer cannot read: {event}"
                );
                continue;
            };
            let private = message.room_id == self.direct_room;
            let formatted = message.formatted_body.clone().unwrap_or_else(|| message.body.clone());
            let text = message.formatted_body.as_deref().map_or_else(|| message.body.clone(), visible_text);
            return Some(Seen {
                private,
                room: (!private).then(|| RoomId::new(&message.room_id)),
                text,
                formatted,
                wire_bytes: event.content.to_string().len(),
            });
        }
    }
}

/// Renders rich text as a Matrix client sends it in `formatted_body`.
fn render(text: &RichText) -> String {
    let mut html = String::new();
    for segment in text.segments() {
        match segment {
            Segment::Text { text, style } => {
                let (open, close) = match style {
                    Style::Plain => ("", ""),
                    Style::Bold => ("<strong>", "</strong>"),
                    Style::Italic => ("<em>", "</em>"),
                    Style::Code => ("<code>", "</code>"),
                };
                html.push_str(open);
                html.push_str(&escape(text));
                html.push_str(close);
            }
            Segment::Coloured { text, hue } => {
                let colour = colour(*hue);
                html.push_str(&format!("<font data-mx-color=\"{colour}\">{}</font>", escape(text)));
            }
            Segment::Mention(player) => {
                let id = escape(player.as_str());
                html.push_str(&format!("<a href=\"https://matrix.to/#/{id}\">{id}</a>"));
            }
            Segment::Name(player) => html.push_str(&format!("<strong>{}</strong>", escape(player.as_str()))),
            // What a client sends has no list separators or links of the bot's: plain words.
            Segment::Separator(text) | Segment::Link { text, .. } => html.push_str(&escape(text)),
            Segment::Bot => html.push_str("me"),
        }
    }
    html
}

fn colour(hue: Hue) -> &'static str {
    match hue {
        Hue::Red => "#ff0000",
        Hue::Blue => "#0000ff",
        Hue::Brown => "#8b4513",
        Hue::Green => "#00aa00",
        Hue::Yellow => "#ffff00",
        Hue::Grey => "#808080",
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The visible text of `org.matrix.custom.html`: tags dropped (`<br>` as a newline),
/// the usual entities decoded.
fn visible_text(html: &str) -> String {
    let mut out = String::new();
    let mut rest = html;
    while let Some(start) = rest.find('<') {
        out.push_str(&decode(&rest[..start]));
        let Some(end) = rest[start..].find('>') else {
            out.push_str(&decode(&rest[start..]));
            return out;
        };
        let tag = &rest[start + 1..start + end];
        if tag.trim_end_matches('/').trim().eq_ignore_ascii_case("br") {
            out.push('\n');
        }
        rest = &rest[start + end + 1..];
    }
    out.push_str(&decode(rest));
    out
}

fn decode(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find('&') {
        out.push_str(&rest[..start]);
        let after = &rest[start..];
        let entity = after.find(';').filter(|end| *end <= 10).map(|end| &after[..=end]);
        let decoded = entity.and_then(|e| match e {
            "&amp;" => Some('&'),
            "&lt;" => Some('<'),
            "&gt;" => Some('>'),
            "&quot;" => Some('"'),
            "&#39;" | "&apos;" => Some('\''),
            _ => {
                let number = e.strip_prefix("&#")?.strip_suffix(';')?;
                let code = match number.strip_prefix(['x', 'X']) {
                    Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                    None => number.parse().ok()?,
                };
                char::from_u32(code)
            }
        });
        match (entity, decoded) {
            (Some(e), Some(c)) => {
                out.push(c);
                rest = &after[e.len()..];
            }
            _ => {
                out.push('&');
                rest = &after[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

conformance_suite!(MatrixFixture);
conformance_tests!(MatrixFixture; reconnects_after_a_server_restart);

#[test]
fn the_peer_renders_and_reads_html() {
    let text = RichText::new().coloured("!cast", Hue::Red).text(" ").italic("a<b").bold("&");
    let html = render(&text);
    assert_eq!(html, "<font data-mx-color=\"#ff0000\">!cast</font> <em>a&lt;b</em><strong>&amp;</strong>");
    assert_eq!(visible_text(&html), "!cast a<b&");
    assert_eq!(visible_text("x<br>y &#39;z&#x27; &nope; 5 &lt 6"), "x\ny 'z' &nope; 5 &lt 6");
}
