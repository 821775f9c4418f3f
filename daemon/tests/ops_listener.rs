//! `[http] ops_listen` (issue 29, item 6): `/healthz` and `/metrics` on a listener of
//! their own, so spectators cannot keep them waiting. `spellbridge run` serves a table's
//! site with the default limits (64 connections, 8 per address, 32 event streams) on its
//! public listener; the test fills it from 88 loopback addresses with 32 event streams and
//! hundreds of slow connections that trickle a request head, and `/healthz` and `/metrics`
//! still answer on the operations listener. Once the flood stops, the public listener
//! answers `/healthz` again too. (Timing is for `cargo bench --bench ops`.)

use std::time::Duration;

use spellbridge_tests::harness::daemon::Daemon;
use spellbridge_tests::harness::endpoint;
use spellbridge_tests::harness::site_flood::{slow, stream};
use tokio::task::JoinSet;

const BIN: &str = env!("CARGO_BIN_EXE_spellbridge");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthz_and_metrics_answer_on_their_own_listener_while_the_site_is_flooded() {
    let (public, ops) = (
        endpoint::free_port().unwrap_or_else(|e| panic!("{e}")),
        endpoint::free_port().unwrap_or_else(|e| panic!("{e}")),
    );
    let mut daemon = Daemon::new(BIN).unwrap_or_else(|e| panic!("{e}"));
    // A table to follow: the console writes it to the database the daemon then serves.
    let console = std::process::Command::new(BIN)
        .args(["console", "--db", "games.db"])
        .current_dir(daemon.dir())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write as _;
            child.stdin.take().expect("stdin").write_all(b"alice: !new thaum\nalice: !join\n")?;
            child.wait()
        })
        .expect("spellbridge console");
    assert!(console.success(), "the console made no table");
    let config = format!(
        "[store]\npath = \"games.db\"\n[http]\nlisten = \"127.0.0.1:{public}\"\nops_listen = \"127.0.0.1:{ops}\"\n"
    );
    daemon.set_config(&config).unwrap_or_else(|e| panic!("{e}"));
    daemon.spawn().unwrap_or_else(|e| panic!("{e}"));
    endpoint::wait_for(public, "/tables/0", Duration::from_secs(30), |status, _| status == 200)
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", daemon.log()));
    endpoint::wait_for(ops, "/healthz", Duration::from_secs(30), |status, _| status == 200)
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", daemon.log()));

    // 32 event streams (4 from each of 8 addresses) and 8 slow clients from each of 80
    // more addresses: ten times the listener's 64 places.
    let mut flood = JoinSet::new();
    for address in 1..=8u8 {
        for _ in 0..4 {
            flood.spawn(stream([127, 0, 1, address], public));
        }
    }
    for address in 1..=80u8 {
        for _ in 0..8 {
            flood.spawn(slow([127, 0, 2, address], public));
        }
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    // The flood holds the public listener: a new client waits behind hundreds of others.
    let flooded = tokio::time::timeout(Duration::from_secs(2), endpoint::get(public, "/healthz")).await;
    assert!(flooded.is_err(), "the flood did not fill the public listener: {flooded:?}");

    for _ in 0..5 {
        let health = endpoint::get(ops, "/healthz").await;
        let (status, body) = health
            .unwrap_or_else(|| panic!("/healthz on ops_listen gave no answer\n{}", daemon.log_tail(30)));
        assert_eq!(status, 200, "{body}");
        let json: serde_json::Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
        assert_eq!((json["status"].as_str(), json["store"].as_str()), (Some("ok"), Some("ok")), "{body}");
        let (status, metrics) = endpoint::get(ops, "/metrics").await.expect("/metrics on ops_listen");
        assert_eq!(status, 200);
        assert!(metrics.contains("spellbridge_outbox_depth"), "{metrics}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert_eq!(endpoint::get(ops, "/").await.map(|(status, _)| status), Some(404), "no site on ops_listen");

    flood.abort_all();
    while flood.join_next().await.is_some() {}
    endpoint::wait_for(public, "/healthz", Duration::from_secs(30), |status, _| status == 200)
        .await
        .unwrap_or_else(|e| {
            panic!("the public listener answers /healthz again: {e}\n{}", daemon.log_tail(30))
        });
    daemon.ensure_running().unwrap_or_else(|e| panic!("{e}"));
}
