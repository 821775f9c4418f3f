//! The latency of a message each way, measured against the floor of the raw client.

use super::support::*;

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
