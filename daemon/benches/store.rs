//! Store benchmark (a bench binary that prints figures): `cargo bench -p spellbridge --bench store`.
//!
//! - one durable action: handle + commit with fsync (WAL, `synchronous=FULL`), p50/p99;
//! - a burst of 10,000 actions over 100 tables, committed one by one and with group
//!   commit (100 messages per transaction), in actions/s;
//! - restart: loading 10,000 stored tables, in seconds, and the process's RSS after it.

use std::time::{Duration, Instant};

use spellbridge::router::{Router, RouterOptions};
use spellbridge::store::{Durability, MessageKey, OpenMode, Step, Store};
use spellbridge_core::{Inbound, NetworkId, PlayerId, Registry, RoomId, Timestamp};

fn say(room: usize, text: &str, id: u64) -> Inbound {
    Inbound {
        network: NetworkId::new("bench"),
        room: RoomId::new(format!("#room{room}")),
        sender: PlayerId::new("alice"),
        display_name: "alice".into(),
        text: text.to_owned(),
        private: false,
        message_id: Some(id.to_string()),
    }
}

/// Opens a Thaum table in each of `rooms` rooms.
fn setup(rooms: usize, durability: Durability) -> (tempfile::TempDir, Store, Router, u64) {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut store = Store::open(&dir.path().join("bench.db"), OpenMode::CreateIfMissing, durability).expect("store");
    let mut router = Router::new(Registry::standard(), RouterOptions::default());
    let mut id = 0;
    let mut steps = Vec::new();
    for room in 0..rooms {
        id += 1;
        let outbound = router.handle(&say(room, "!new thaum", id), Timestamp::CONSOLE_EPOCH);
        steps.push(Step { records: router.take_journal(), outbound, ..Step::default() });
        if steps.len() == 500 {
            store.commit(&router, &steps).expect("commit");
            steps.clear();
        }
    }
    store.commit(&router, &steps).expect("commit");
    (dir, store, router, id)
}

fn handle(router: &mut Router, room: usize, id: u64) -> Step {
    let inbound = say(room, "!coins alice +1", id);
    let outbound = router.handle(&inbound, Timestamp::CONSOLE_EPOCH);
    let message = Some(MessageKey { network: inbound.network.clone(), id: id.to_string() });
    Step { message, records: router.take_journal(), outbound, ..Step::default() }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index]
}

fn single_action_latency() {
    let (_dir, mut store, mut router, mut id) = setup(1, Durability::Full);
    let mut times = Vec::new();
    for _ in 0..2_000 {
        id += 1;
        let start = Instant::now();
        let step = handle(&mut router, 0, id);
        let queued = store.commit(&router, std::slice::from_ref(&step)).expect("commit");
        times.push(start.elapsed());
        for q in queued {
            store.sent(q.id).expect("sent");
        }
    }
    times.sort();
    println!(
        "one durable action (handle + commit, synchronous=FULL): p50 {:.3} ms, p99 {:.3} ms over {} actions",
        percentile(&times, 0.5).as_secs_f64() * 1e3,
        percentile(&times, 0.99).as_secs_f64() * 1e3,
        times.len()
    );
}

fn burst(batch: usize) {
    const ACTIONS: usize = 10_000;
    const ROOMS: usize = 100;
    let (_dir, mut store, mut router, mut id) = setup(ROOMS, Durability::Full);
    let start = Instant::now();
    let mut steps = Vec::with_capacity(batch);
    for n in 0..ACTIONS {
        id += 1;
        steps.push(handle(&mut router, n % ROOMS, id));
        if steps.len() == batch {
            store.commit(&router, &steps).expect("commit");
            steps.clear();
        }
    }
    store.commit(&router, &steps).expect("commit");
    let elapsed = start.elapsed();
    println!(
        "burst of {ACTIONS} actions over {ROOMS} tables, {batch} per commit: {:.0} actions/s ({:.2} s)",
        ACTIONS as f64 / elapsed.as_secs_f64(),
        elapsed.as_secs_f64()
    );
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmRSS:")).and_then(|l| l.split_whitespace().nth(1)?.parse().ok()))
        .unwrap_or(0)
}

fn restart() {
    const TABLES: usize = 10_000;
    let (dir, store, router, _) = setup(TABLES, Durability::Normal);
    drop((store, router));
    let before = rss_kib();
    let start = Instant::now();
    let store = Store::open(&dir.path().join("bench.db"), OpenMode::MustExist, Durability::Full).expect("reopen");
    let router = store.load(Registry::standard(), RouterOptions::default()).expect("load");
    let elapsed = start.elapsed();
    let after = rss_kib();
    println!(
        "restart: loaded {} tables in {:.3} s; RSS {:.1} MB (was {:.1} MB before loading)",
        router.table_ids().count(),
        elapsed.as_secs_f64(),
        after as f64 / 1024.0,
        before as f64 / 1024.0
    );
}

fn main() {
    // `cargo test --benches` runs this with `--test`-like flags; run the figures only for bench.
    if std::env::args().any(|a| a == "--test" || a == "--list") {
        return;
    }
    single_action_latency();
    burst(1);
    burst(100);
    restart();
}
