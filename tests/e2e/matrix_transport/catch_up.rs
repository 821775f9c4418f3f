//! What was said while the bot was down: every message, beyond the sync's timeline
//! limit, arrives once and in order, even when fetching the gap fails at first or the
//! bot stops before handing a sync response over.

use super::support::*;

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
