//! `/healthz` while the spectator site is flooded to its limits (issue 29, item 6; the
//! goal: under 100 ms). In one process: a Thaum table in a database written by the
//! console, the site on a loopback port with the default limits (64 connections, 8 per
//! address, 32 event streams; `http::serve_site`, the daemon's own listener code) and
//! the operations listener (`[http] ops_listen`, `http::serve`) beside it. The flood: 32
//! event streams from 8 addresses and 8 slow clients from each of 80 more, each sending
//! a request head one header a second and connecting again when closed. Then `/healthz`
//! is asked, each time on a new connection from a new address, on the public listener
//! (as before `ops_listen`: `PUBLIC_SAMPLES`, default 7, one a second, each given at most 20 s) and
//! on the operations listener (`OPS_SAMPLES`, default 100, one every 50 ms); the time to the whole
//! answer, p50, p99 and max, and how many got none.
//!
//! `cargo bench -p spellbridge --bench ops`.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use spellbridge::config::HttpSettings;
use spellbridge::console::run_script_with_db;
use spellbridge::metrics::Metrics;
use spellbridge::site::Site;
use spellbridge::site::hidden::Hidden;
use spellbridge_core::Registry;
use spellbridge_tests::harness::site_flood::{connect_from, slow, stream};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

fn setting(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let index = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

/// One `GET /healthz` from `source` on a new connection: how long to its whole 200
/// answer, or `None` within `limit`.
async fn healthz(source: [u8; 4], port: u16, limit: Duration) -> Option<Duration> {
    let started = Instant::now();
    let ask = async {
        let mut socket = connect_from(source, port).await?;
        socket.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").await.ok()?;
        let mut answer = String::new();
        socket.read_to_string(&mut answer).await.ok()?;
        answer.starts_with("HTTP/1.1 200").then(|| started.elapsed())
    };
    tokio::time::timeout(limit, ask).await.ok()?
}

fn report(what: &str, mut took: Vec<Option<Duration>>) {
    let asked = took.len();
    took.retain(Option::is_some);
    let mut took: Vec<Duration> = took.into_iter().flatten().collect();
    took.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    if took.is_empty() {
        println!("ops: /healthz on {what}: {asked} asked, none answered within the limit");
        return;
    }
    println!(
        "ops: /healthz on {what}: {asked} asked, {} unanswered; p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        asked - took.len(),
        ms(percentile(&took, 0.5)),
        ms(percentile(&took, 0.99)),
        ms(took.last().copied().unwrap_or_default()),
    );
}

fn main() {
    let public_samples = setting("PUBLIC_SAMPLES", 7);
    let ops_samples = setting("OPS_SAMPLES", 100);
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("games.db");
    run_script_with_db("alice: !new thaum\nalice: !join\n", 1, &db).expect("a Thaum table");
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    runtime.block_on(async move {
        let shutdown = CancellationToken::new();
        let listener =
            spellbridge::http::bind("127.0.0.1:0".parse().expect("address"), "the site").await.expect("bind");
        let public: SocketAddr = listener.local_addr().expect("address");
        let limits = HttpSettings::new(public);
        let keepalive = Site::keepalive_for(limits.idle_timeout);
        let site = Site::open(
            &db,
            Registry::standard(),
            BTreeMap::new(),
            Hidden::default(),
            limits.max_event_streams,
            keepalive,
        )
        .expect("site");
        let metrics = Metrics::new();
        tokio::spawn(spellbridge::http::serve_site(
            listener,
            limits,
            metrics.clone(),
            Some(site),
            shutdown.clone(),
        ));
        let ops_listener =
            spellbridge::http::bind("127.0.0.1:0".parse().expect("address"), "ops").await.expect("bind");
        let ops = ops_listener.local_addr().expect("address");
        tokio::spawn(spellbridge::http::serve(ops_listener, limits.ops(ops), metrics, shutdown.clone()));

        let mut flood = JoinSet::new();
        for address in 1..=8u8 {
            for _ in 0..limits.max_event_streams / 8 {
                flood.spawn(stream([127, 0, 1, address], public.port()));
            }
        }
        for address in 1..=80u8 {
            for _ in 0..limits.connections_per_ip {
                flood.spawn(slow([127, 0, 2, address], public.port()));
            }
        }
        tokio::time::sleep(Duration::from_secs(3)).await;

        // Before: the public listener, as /healthz was served before `ops_listen`.
        let mut asked = JoinSet::new();
        for sample in 0..public_samples {
            let source = [127, 0, 3, u8::try_from(sample % 250 + 1).unwrap_or(1)];
            asked.spawn(healthz(source, public.port(), Duration::from_secs(20)));
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        report("the public listener (before)", asked.join_all().await);

        // After: the operations listener.
        let mut took = Vec::with_capacity(ops_samples);
        for sample in 0..ops_samples {
            let source = [127, 0, 4, u8::try_from(sample % 250 + 1).unwrap_or(1)];
            took.push(healthz(source, ops.port(), Duration::from_secs(20)).await);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        report("ops_listen (after)", took);
        flood.abort_all();
        shutdown.cancel();
    });
}
