//! The spectator site's live updates at scale (issue 18's goals: a move's update reaches
//! 1,000 open event streams with p50 ≤ 50 ms after the commit; RSS with 1,000 streams
//! ≤ 100 MB above idle).
//!
//! In one process: a Thaum table in a database written by the console, the site served
//! on a loopback port (`http::serve_site`, the daemon's own listener code), the engine
//! over the same database with its change notices going to the site, and `STREAMS` raw
//! TCP clients each holding `/tables/0/events` open. Each round, the game master's
//! `!coins alice +1` is handled and committed by the engine; the clock starts when the
//! commit returns, and stops, per client, when its `update` with the new sequence has
//! been read. RSS is read from /proc before the streams open and with all of them open
//! (the clients' own memory, a small buffer each, is included).
//!
//! `cargo bench -p spellbridge --bench site` (`SITE_STREAMS`, `SITE_ROUNDS` change the
//! defaults of 1000 and 30).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use spellbridge::config::HttpSettings;
use spellbridge::console::{CONSOLE_NETWORK, CONSOLE_ROOM, Console, run_script_with_db};
use spellbridge::engine::Engine;
use spellbridge::metrics::Metrics;
use spellbridge::site::Site;
use spellbridge::site::hidden::Hidden;
use spellbridge::store::{Durability, OpenMode, Store};
use spellbridge_core::{Inbound, NetworkId, PlayerId, Registry, RoomId, Timestamp};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::sync::{broadcast, mpsc};
use tokio_util::sync::CancellationToken;

fn setting(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// This process's resident memory, in kB.
fn rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("VmRSS:")?.trim().strip_suffix("kB")?.trim().parse().ok())
        })
        .unwrap_or(0)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let index = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

/// One client: opens the stream, then reports each new sequence it reads.
async fn client(port: u16, index: usize, seen: mpsc::UnboundedSender<(usize, u64, Instant)>) {
    let mut socket = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.expect("connect");
    socket
        .write_all(b"GET /tables/0/events HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n\r\n")
        .await
        .expect("write");
    let mut buffer = vec![0u8; 4096];
    let mut last = None;
    loop {
        let Ok(read) = socket.read(&mut buffer).await else { return };
        if read == 0 {
            return;
        }
        let at = Instant::now();
        let text = String::from_utf8_lossy(&buffer[..read]);
        // `id: N` is each update's sequence.
        for sequence in text.lines().filter_map(|line| line.strip_prefix("id: ")?.trim().parse::<u64>().ok())
        {
            if last.is_none_or(|last| sequence > last) {
                last = Some(sequence);
                let _ = seen.send((index, sequence, at));
            }
        }
    }
}

fn main() {
    let streams = setting("SITE_STREAMS", 1000);
    let rounds = setting("SITE_ROUNDS", 30);
    // The console plays on its own runtime: the table is made before the bench's starts.
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("games.db");
    run_script_with_db("alice: !new thaum\nalice: !join\n", 1, &db).expect("a Thaum table");
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    runtime.block_on(async move {
        let store = Store::open(&db, OpenMode::MustExist, Durability::Normal).expect("store");
        let options = Console::options(1);
        let router = store.load(Registry::standard(), options.clone()).expect("loads");
        let mut engine = Engine::new(router, Some(store), Box::new(Registry::standard), options);
        let keepalive = Duration::from_secs(15);
        let site = Site::open(&db, Registry::standard(), BTreeMap::new(), Hidden::default(), streams, keepalive)
            .expect("site");
        let (changes, _) = broadcast::channel(1024);
        engine.notify_changes(changes.clone());
        let shutdown = CancellationToken::new();
        tokio::spawn(site.clone().follow(changes.subscribe(), shutdown.clone()));
        let listener = spellbridge::http::bind("127.0.0.1:0".parse().expect("address"), "the bench").await.expect("bind");
        let port = listener.local_addr().expect("address").port();
        let mut limits = HttpSettings::new(listener.local_addr().expect("address"));
        limits.connections = streams + 16;
        limits.connections_per_ip = streams + 16;
        limits.max_event_streams = streams;
        limits.idle_timeout = Duration::from_secs(60);
        tokio::spawn(spellbridge::http::serve_site(listener, limits, Metrics::new(), Some(site.clone()), shutdown.clone()));
        tokio::time::sleep(Duration::from_millis(200)).await;

        let idle = rss_kb();
        let (seen_tx, mut seen) = mpsc::unbounded_channel();
        for index in 0..streams {
            tokio::spawn(client(port, index, seen_tx.clone()));
        }
        let mut opened = 0;
        let mut base = 0;
        let deadline = Instant::now() + Duration::from_secs(120);
        while opened < streams && Instant::now() < deadline {
            if let Ok(Some((_, seq, _))) = tokio::time::timeout(Duration::from_secs(5), seen.recv()).await {
                opened += 1;
                base = base.max(seq);
            }
        }
        assert_eq!(opened, streams, "every stream got its first update");
        assert_eq!(site.event_streams(), streams);
        tokio::time::sleep(Duration::from_millis(500)).await;
        let full = rss_kb();

        let mut delays = Vec::with_capacity(streams * rounds);
        let mut lasts = Vec::with_capacity(rounds);
        for round in 0..rounds {
            let expected = base + round as u64 + 1;
            let inbound = Inbound {
                message_id: Some(format!("bench-{round}")),
                ..Inbound::new(
                    NetworkId::new(CONSOLE_NETWORK),
                    RoomId::new(CONSOLE_ROOM),
                    PlayerId::new("alice"),
                    "!coins alice +1",
                )
            };
            engine.handle_batch(&[inbound], Timestamp::CONSOLE_EPOCH, Vec::new()).expect("handled");
            let committed = Instant::now();
            let mut reached = 0;
            let mut last = Duration::ZERO;
            let round_deadline = Instant::now() + Duration::from_secs(60);
            while reached < streams && Instant::now() < round_deadline {
                let Ok(Some((_, seq, at))) = tokio::time::timeout(Duration::from_secs(10), seen.recv()).await else {
                    break;
                };
                if seq == expected {
                    reached += 1;
                    let delay = at.saturating_duration_since(committed);
                    last = last.max(delay);
                    delays.push(delay);
                }
            }
            assert_eq!(reached, streams, "round {round}: every stream got the update");
            lasts.push(last);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        delays.sort();
        lasts.sort();
        println!(
            "site: {streams} event streams, {rounds} moves: update after the commit p50 {:.2} ms, p99 {:.2} ms; \
             the last stream of a move p50 {:.2} ms",
            percentile(&delays, 0.5).as_secs_f64() * 1e3,
            percentile(&delays, 0.99).as_secs_f64() * 1e3,
            percentile(&lasts, 0.5).as_secs_f64() * 1e3,
        );
        println!(
            "site: RSS idle {} MB, with {streams} streams {} MB: {} MB above idle",
            idle / 1024,
            full / 1024,
            full.saturating_sub(idle) / 1024
        );
        shutdown.cancel();
    });
}
