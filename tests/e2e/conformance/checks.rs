//! The conformance checks, each written once against a [`Fixture`] and its [`Peer`]; the
//! macros in the parent module turn each into a test per transport. Every wait is
//! bounded, and a failure lists what arrived instead of what was expected.

use std::fmt::Debug;
use std::time::Duration;

use spellbridge_core::text::Hue;
use spellbridge_core::{Destination, GameTransport, Inbound, RichText, RoomId};
use tokio::time::{Instant, timeout_at};

use super::{Fixture, Formatting, Peer, QUIET, REJOIN_WAIT, Seen, WAIT};

// ---------------------------------------------------------------------------------------
// Helpers

/// Waits up to [`WAIT`] for an inbound message that `wanted` accepts; the ones before
/// it are skipped and listed if it never comes.
async fn expect_inbound(
    transport: &impl GameTransport,
    what: &str,
    wanted: impl Fn(&Inbound) -> bool,
) -> Inbound {
    let deadline = Instant::now() + WAIT;
    let mut skipped = Vec::new();
    loop {
        match timeout_at(deadline, transport.recv()).await {
            Ok(Some(inbound)) if wanted(&inbound) => return inbound,
            Ok(Some(inbound)) => skipped.push(inbound),
            Ok(None) => {
                panic!("the transport shut down while waiting for {what}; received before:{}", list(&skipped))
            }
            Err(_) => {
                panic!("no inbound message {what} within {WAIT:?}; received instead:{}", list(&skipped))
            }
        }
    }
}

/// Listens for [`QUIET`] and fails if an inbound message that `unwanted` accepts arrives.
async fn expect_no_inbound(transport: &impl GameTransport, what: &str, unwanted: impl Fn(&Inbound) -> bool) {
    let deadline = Instant::now() + QUIET;
    let mut others = Vec::new();
    while let Ok(Some(inbound)) = timeout_at(deadline, transport.recv()).await {
        assert!(
            !unwanted(&inbound),
            "{what}, yet this arrived: {inbound:#?}\nreceived before it:{}",
            list(&others)
        );
        others.push(inbound);
    }
}

/// Waits up to [`WAIT`] for the peer to see a message that `wanted` accepts; the ones
/// before it are skipped and listed if it never comes.
async fn expect_seen(peer: &mut impl Peer, what: &str, wanted: impl Fn(&Seen) -> bool) -> Seen {
    let deadline = Instant::now() + WAIT;
    let mut skipped = Vec::new();
    loop {
        match peer.next_seen(deadline.saturating_duration_since(Instant::now())).await {
            Some(seen) if wanted(&seen) => return seen,
            Some(seen) => skipped.push(seen),
            None => panic!("the peer did not see {what} within {WAIT:?}; it saw instead:{}", list(&skipped)),
        }
    }
}

/// Sends a message, failing the test with the transport's error.
async fn send(transport: &impl GameTransport, to: &Destination, text: &RichText) {
    if let Err(error) = transport.send(to, &text.clone().into()).await {
        panic!("sending {:?} to {to:?} failed: {error}", text.plain());
    }
}

fn list<T: Debug>(items: &[T]) -> String {
    if items.is_empty() {
        return " nothing".to_owned();
    }
    items.iter().map(|item| format!("\n  {item:?}")).collect()
}

/// The peer speaks in `room` until the transport hears it: one probe per 250 ms, for at
/// most `limit`. For waiting until a transport is in a room when nothing else can tell
/// (after a start, a join or a reconnect); probes that arrive late are skipped by the
/// checks, which wait for their own texts.
pub(super) async fn until_room_is_heard(
    transport: &impl GameTransport,
    peer: &mut impl Peer,
    room: &RoomId,
    limit: Duration,
) {
    let deadline = Instant::now() + limit;
    let mut others = Vec::new();
    for probe in 1.. {
        peer.say_in_room(room, &format!("probe {probe} in {room}")).await;
        let until = (Instant::now() + Duration::from_millis(250)).min(deadline);
        while let Ok(next) = timeout_at(until, transport.recv()).await {
            match next {
                Some(inbound) if inbound.room == *room && inbound.text.starts_with("probe ") => return,
                Some(inbound) => others.push(inbound),
                None => panic!("the transport shut down while the peer probed {room}"),
            }
        }
        assert!(
            Instant::now() < deadline,
            "the transport did not hear {room} within {limit:?} ({probe} probes said there); \
             it received instead:{}",
            list(&others)
        );
    }
}

/// Words numbered in order, joined by spaces, of at least `chars` characters.
fn numbered_words(chars: usize, word: impl Fn(usize) -> String) -> Vec<String> {
    let mut words = Vec::new();
    let mut length = 0;
    while length < chars {
        let next = word(words.len());
        // The word, and the space before it when it is not the first.
        length += next.chars().count() + usize::from(!words.is_empty());
        words.push(next);
    }
    words
}

/// Sends `words` as one message, to the fixture's room or privately to the peer, and
/// checks that the peer's lines hold exactly those words in order, each line within the
/// network's limit, and that nothing more arrives.
async fn long_message_arrives<F: Fixture>(words: Vec<String>, privately: bool) {
    let mut fixture = F::start().await;
    let room = fixture.room();
    let (transport, peer) = fixture.parts();
    let text = words.join(" ");
    assert!(text.chars().count() >= 2000);
    let (to, expected_room) = if privately {
        (Destination::Private(peer.player()), None)
    } else {
        (Destination::Room(room.clone()), Some(room))
    };
    send(transport, &to, &RichText::new().text(text.clone())).await;

    let deadline = Instant::now() + WAIT;
    let mut lines: Vec<Seen> = Vec::new();
    let mut got: Vec<String> = Vec::new();
    while got.len() < words.len() {
        let Some(seen) = peer.next_seen(deadline.saturating_duration_since(Instant::now())).await else {
            panic!(
                "{} of {} words arrived within {WAIT:?}; lines seen:{}",
                got.len(),
                words.len(),
                list(&lines)
            );
        };
        assert!(seen.room == expected_room && seen.private == privately, "a line went elsewhere: {seen:?}");
        got.extend(seen.text.split_whitespace().map(str::to_owned));
        lines.push(seen);
    }
    assert!(
        got == words,
        "the words arrived changed or out of order:\n sent: {text}\n got: {}",
        got.join(" ")
    );
    if let Some(limit) = peer.line_limit() {
        for line in &lines {
            assert!(
                line.wire_bytes <= limit,
                "a line of {} bytes is over the {limit}-byte limit: {line:?}",
                line.wire_bytes
            );
        }
        assert!(lines.len() > 1, "{} bytes should not fit one {limit}-byte line", text.len());
    }
    if let Some(extra) = peer.next_seen(QUIET).await {
        panic!("a line arrived after the whole message: {extra:?}");
    }
}

/// The rich text the formatting check sends: bold, italic and a coloured game word.
pub(super) fn formatting_sample() -> RichText {
    RichText::new()
        .bold("Fire")
        .text(" meets ")
        .italic("Water")
        .text(": ")
        .coloured("Steam", Hue::Grey)
        .text(" rises")
}

// ---------------------------------------------------------------------------------------
// The checks (one test per transport each)

/// 1. A room's messages arrive once the transport has joined it (and not before).
pub(super) async fn join_makes_the_rooms_messages_arrive<F: Fixture>() {
    let mut fixture = F::start().await;
    let network = fixture.network();
    let (transport, peer) = fixture.parts();
    let other = peer.enter("second").await;

    peer.say_in_room(&other, "said before the join").await;
    expect_no_inbound(transport, &format!("the transport has not joined {other}"), |m| m.room == other).await;

    if let Err(error) = transport.join(&other).await {
        panic!("joining {other} failed: {error}");
    }
    until_room_is_heard(transport, peer, &other, WAIT).await;
    peer.say_in_room(&other, "said after the join").await;
    let got = expect_inbound(transport, &format!("said in {other} after the join"), |m| {
        m.text == "said after the join"
    })
    .await;
    assert_eq!(
        (&got.network, &got.room, &got.sender, got.private),
        (&network, &other, &peer.player(), false)
    );
}

/// 1b. `join` returns once the room is joined: what is said there right after it returns
///    arrives. Tried in 20 rooms, as a transport that returns early loses the race
///    with the peer only now and then.
pub(super) async fn join_returns_once_the_room_is_joined<F: Fixture>() {
    const ROOMS: usize = 20;
    let mut fixture = F::start().await;
    let (transport, peer) = fixture.parts();
    let mut rooms = Vec::new();
    for i in 1..=ROOMS {
        rooms.push(peer.enter(&format!("joined{i}")).await);
    }
    for room in &rooms {
        if let Err(error) = transport.join(room).await {
            panic!("joining {room} failed: {error}");
        }
        peer.say_in_room(room, &format!("first words in {room}")).await;
    }
    let deadline = Instant::now() + WAIT;
    let mut heard = Vec::new();
    let mut others = Vec::new();
    while heard.len() < ROOMS {
        match timeout_at(deadline, transport.recv()).await {
            Ok(Some(inbound)) if inbound.text.starts_with("first words in ") => heard.push(inbound.room),
            Ok(Some(inbound)) => others.push(inbound),
            Ok(None) | Err(_) => break,
        }
    }
    let lost: Vec<&RoomId> = rooms.iter().filter(|r| !heard.contains(r)).collect();
    let Some(first_lost) = lost.first() else { return };
    // Tell a join that happened late from one that never happened.
    until_room_is_heard(transport, peer, first_lost, WAIT).await;
    let names: Vec<&str> = lost.iter().map(|r| r.as_str()).collect();
    panic!(
        "in {} of {ROOMS} rooms the message said right after join() returned never arrived: {}; \
         probes said in {first_lost} afterwards did arrive, so join() returned before the room was \
         joined; other messages received:{}",
        lost.len(),
        names.join(" "),
        list(&others)
    );
}

/// 2. The peer's room message arrives with the right network, room, sender and text.
pub(super) async fn room_message_arrives<F: Fixture>() {
    let mut fixture = F::start().await;
    let (network, room) = (fixture.network(), fixture.room());
    let (transport, peer) = fixture.parts();
    assert_eq!(transport.network(), &network);

    peer.say_in_room(&room, "hello, spellbridge ✨ !games").await;
    let got =
        expect_inbound(transport, "from the peer's room message", |m| m.text.starts_with("hello")).await;
    assert_eq!(got.network, network, "{got:#?}");
    assert_eq!(got.room, room, "{got:#?}");
    assert_eq!(got.sender, peer.player(), "{got:#?}");
    assert_eq!(got.display_name, peer.display_name(), "{got:#?}");
    assert_eq!(got.text, "hello, spellbridge ✨ !games", "{got:#?}");
    assert!(!got.private, "a room message arrived as private: {got:#?}");
}

/// 3. `send(Room)` reaches the peer in that room.
pub(super) async fn room_message_reaches_the_peer<F: Fixture>() {
    let mut fixture = F::start().await;
    let room = fixture.room();
    let (transport, peer) = fixture.parts();

    send(transport, &Destination::Room(room.clone()), &RichText::from("the table is open ✨ type `!join`"))
        .await;
    let seen = expect_seen(peer, "the room message", |_| true).await;
    assert!(!seen.private, "a room message arrived privately: {seen:?}");
    assert_eq!(seen.room.as_ref(), Some(&room), "{seen:?}");
    assert!(seen.text.starts_with("the table is open ✨ type "), "{seen:?}");
    assert!(seen.text.contains("!join"), "{seen:?}");
}

/// 4a. The peer's private message arrives as private, in the peer's direct room.
pub(super) async fn private_message_arrives<F: Fixture>() {
    let mut fixture = F::start().await;
    let network = fixture.network();
    let (transport, peer) = fixture.parts();

    peer.say_privately("psst: !cast fire").await;
    let got =
        expect_inbound(transport, "from the peer's private message", |m| m.text.starts_with("psst")).await;
    assert!(got.private, "a private message arrived as a room message: {got:#?}");
    assert_eq!(got.network, network, "{got:#?}");
    assert_eq!(got.sender, peer.player(), "{got:#?}");
    assert_eq!(got.room, peer.direct_room(), "{got:#?}");
    assert_eq!(got.text, "psst: !cast fire", "{got:#?}");
}

/// 4b. `send(Private(peer))` reaches the peer privately (the peer has not spoken yet).
pub(super) async fn private_message_reaches_the_peer_privately<F: Fixture>() {
    let mut fixture = F::start().await;
    let (transport, peer) = fixture.parts();

    send(transport, &Destination::Private(peer.player()), &RichText::from("your secret token: 7")).await;
    let seen = expect_seen(peer, "the private message", |_| true).await;
    assert!(seen.private, "a private message arrived in a room: {seen:?}");
    assert_eq!(seen.room, None, "{seen:?}");
    assert_eq!(seen.text, "your secret token: 7", "{seen:?}");
}

/// 5a. A 2,000-character message of words arrives complete and in order in a room.
pub(super) async fn long_message_arrives_complete_and_in_order<F: Fixture>() {
    long_message_arrives::<F>(numbered_words(2000, |i| format!("spell{i:04}")), false).await;
}

/// 5b. The same with CJK and emoji words (multi-byte characters, a ZWJ sequence), sent
///    privately (another target, so another line budget).
pub(super) async fn long_cjk_emoji_private_message_arrives_complete_and_in_order<F: Fixture>() {
    const PIECES: [&str; 8] = ["火", "水の魔法", "土", "風🌬", "雷⚡", "🔥", "🧙\u{200D}♂\u{FE0F}", "中文✨"];
    let words = numbered_words(2000, |i| format!("{}{i:03}", PIECES[i % PIECES.len()]));
    long_message_arrives::<F>(words, true).await;
}

/// 6. Rich text arrives in the network's formatting, with the right visible text.
pub(super) async fn formatting_arrives_with_the_right_visible_text<F: Fixture>() {
    let mut fixture = F::start().await;
    let room = fixture.room();
    let (transport, peer) = fixture.parts();

    send(transport, &Destination::Room(room), &formatting_sample()).await;
    let seen = expect_seen(peer, "the formatted message", |_| true).await;
    assert_eq!(seen.text, "Fire meets Water: Steam rises", "{seen:?}");
    match F::FORMATTING {
        Formatting::Plain => assert_eq!(seen.formatted, seen.text, "{seen:?}"),
        Formatting::Contains(pieces) => {
            for piece in pieces {
                assert!(seen.formatted.contains(piece), "{piece:?} is missing from {:?}", seen.formatted);
            }
        }
    }
}

/// 7. Formatting in what the peer says is stripped before the text reaches the bot.
pub(super) async fn inbound_formatting_is_stripped<F: Fixture>() {
    let mut fixture = F::start().await;
    let room = fixture.room();
    let (transport, peer) = fixture.parts();

    peer.say_formatted_in_room(&room, &RichText::new().bold("!status")).await;
    let got = expect_inbound(transport, "from the bold !status", |m| m.room == room).await;
    assert_eq!(got.text, "!status", "{got:#?}");

    let cast = RichText::new().coloured("!cast", Hue::Red).text(" ").italic("fire").text(" at ").bold("bob");
    peer.say_formatted_in_room(&room, &cast).await;
    let got = expect_inbound(transport, "from the coloured !cast", |m| m.room == room).await;
    assert_eq!(got.text, "!cast fire at bob", "{got:#?}");
}

/// 8. After the server restarts, the transport reconnects by itself, rejoins its rooms
///    (also one joined at runtime) and messages flow both ways again. Instantiated only
///    for transports with a server to restart.
pub(super) async fn reconnects_after_a_server_restart<F: Fixture>() {
    let mut fixture = F::start().await;
    let room = fixture.room();
    let other = {
        let (transport, peer) = fixture.parts();
        let other = peer.enter("second").await;
        if let Err(error) = transport.join(&other).await {
            panic!("joining {other} failed: {error}");
        }
        until_room_is_heard(transport, peer, &other, WAIT).await;
        other
    };

    let restarted = Instant::now();
    if fixture.restart_server().await.is_none() {
        panic!(
            "this fixture has no server to restart: instantiate `reconnects_after_a_server_restart` only \
             for transports that have one"
        );
    }
    let (transport, peer) = fixture.parts();
    until_room_is_heard(transport, peer, &room, REJOIN_WAIT).await;
    until_room_is_heard(transport, peer, &other, REJOIN_WAIT).await;
    eprintln!("back in both rooms {:?} after the restart began", restarted.elapsed());

    peer.say_in_room(&room, "back again").await;
    let got =
        expect_inbound(transport, "said in the room after the restart", |m| m.text == "back again").await;
    assert_eq!((got.room, got.sender, got.private), (room.clone(), peer.player(), false));

    send(transport, &Destination::Room(room.clone()), &RichText::from("the game goes on")).await;
    let seen =
        expect_seen(peer, "the room message after the restart", |s| s.text == "the game goes on").await;
    assert_eq!(seen.room, Some(room));

    peer.say_privately("still there?").await;
    let got =
        expect_inbound(transport, "said privately after the restart", |m| m.text == "still there?").await;
    assert!(got.private, "{got:#?}");

    send(transport, &Destination::Private(peer.player()), &RichText::from("yes")).await;
    let seen = expect_seen(peer, "the private message after the restart", |s| s.text == "yes").await;
    assert!(seen.private, "{seen:?}");
}

/// 8, for transports without a server: the fixture says so (the test name tells the
/// reader that the reconnect check does not apply).
pub(super) async fn reconnect_does_not_apply_no_server_to_restart<F: Fixture>() {
    let mut fixture = F::start().await;
    assert!(
        fixture.restart_server().await.is_none(),
        "this fixture can restart its server: instantiate `reconnects_after_a_server_restart` for it"
    );
}
