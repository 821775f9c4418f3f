//! Store benchmark (a bench binary that prints figures): `cargo bench -p spellbridge --bench store`.
//!
//! - one durable action: handle + commit with fsync (WAL, `synchronous=FULL`), p50/p99;
//! - a burst of 10,000 actions over 100 tables, committed one by one and with group
//!   commit (100 messages per transaction), in actions/s;
//! - restart: loading 10,000 stored tables, in seconds, and the process's RSS after it;
//! - snapshot bytes a commit writes per action as one Thaum table's history grows to
//!   10,000 entries, beside the whole snapshot with its history (what was written before
//!   the history had rows of its own, issue 16);
//! - the bursts and one action again with a snapshot written at every commit (as before
//!   snapshots were written every `SNAPSHOT_EVERY` entries, issue 16), with the bytes the
//!   process wrote per action (`/proc/self/io` wchar: WAL frames and checkpoints).

use std::time::{Duration, Instant};

use spellbridge::router::{Router, RouterConfig};
use spellbridge::store::{Durability, MessageKey, OpenMode, SNAPSHOT_EVERY, Step, Store};
use spellbridge_core::{Inbound, NetworkId, PlayerId, Registry, RoomId, Timestamp};

fn say(room: usize, text: &str, id: u64) -> Inbound {
    Inbound {
        display_name: "alice".into(),
        private: false,
        message_id: Some(id.to_string()),
        ..Inbound::new(
            NetworkId::new("bench"),
            RoomId::new(format!("#room{room}")),
            PlayerId::new("alice"),
            text.to_owned(),
        )
    }
}

/// Opens a Thaum table in each of `rooms` rooms; the store writes a table's snapshot every
/// `every` of its entries.
fn setup(rooms: usize, durability: Durability, every: usize) -> (tempfile::TempDir, Store, Router, u64) {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut store =
        Store::open(&dir.path().join("bench.db"), OpenMode::CreateIfMissing, durability).expect("store");
    store.set_snapshot_every(every);
    let mut router = Router::new(Registry::standard(), RouterConfig::default());
    let mut id = 0;
    let mut steps = Vec::new();
    for room in 0..rooms {
        id += 1;
        let outbound = router.handle(&say(room, "!new thaum", id), Timestamp::CONSOLE_EPOCH);
        steps.push(Step { records: router.take_journal(), outbound, ..Step::default() });
        if steps.len() == 500 {
            store.commit(&router, std::mem::take(&mut steps)).expect("commit");
        }
    }
    store.commit(&router, steps).expect("commit");
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

/// One action at a time on `rooms` tables in turn: with many tables each table's
/// history stays short; with one table it grows to 2,000 entries (Thaum keeps every
/// action in its state, and the whole state is written with each action).
fn single_action_latency(rooms: usize, every: usize) {
    let (_dir, mut store, mut router, mut id) = setup(rooms, Durability::Full, every);
    let written = bytes_written();
    let mut times = Vec::new();
    for n in 0..2_000 {
        id += 1;
        let start = Instant::now();
        let step = handle(&mut router, n % rooms, id);
        let queued = store.commit(&router, vec![step]).expect("commit");
        times.push(start.elapsed());
        for q in queued {
            store.sent(q.id).expect("sent");
        }
    }
    let per_action = (bytes_written() - written) / times.len() as u64;
    times.sort();
    println!(
        "one durable action (handle + commit, synchronous=FULL), {} actions over {rooms} table(s), snapshot every {every}: p50 {:.3} ms, p99 {:.3} ms, {per_action} B written per action",
        times.len(),
        percentile(&times, 0.5).as_secs_f64() * 1e3,
        percentile(&times, 0.99).as_secs_f64() * 1e3,
    );
}

fn burst(batch: usize, every: usize) {
    const ACTIONS: usize = 10_000;
    const ROOMS: usize = 100;
    let (_dir, mut store, mut router, mut id) = setup(ROOMS, Durability::Full, every);
    let written = bytes_written();
    let start = Instant::now();
    let mut steps = Vec::with_capacity(batch);
    for n in 0..ACTIONS {
        id += 1;
        steps.push(handle(&mut router, n % ROOMS, id));
        if steps.len() == batch {
            store.commit(&router, std::mem::replace(&mut steps, Vec::with_capacity(batch))).expect("commit");
        }
    }
    store.commit(&router, steps).expect("commit");
    let elapsed = start.elapsed();
    let per_action = (bytes_written() - written) / ACTIONS as u64;
    println!(
        "burst of {ACTIONS} actions over {ROOMS} tables, {batch} per commit, snapshot every {every}: {:.0} actions/s ({:.2} s), {per_action} B written per action",
        ACTIONS as f64 / elapsed.as_secs_f64(),
        elapsed.as_secs_f64()
    );
}

/// The bytes this process has written so far (`wchar` of `/proc/self/io`).
fn bytes_written() -> u64 {
    std::fs::read_to_string("/proc/self/io")
        .ok()
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("wchar:")?.trim().parse().ok()))
        .unwrap_or(0)
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// The floor under one durable action: a bare one-row insert committed with
/// `synchronous=FULL` on the same disk (what the fsync alone costs).
fn fsync_floor() {
    let dir = tempfile::tempdir().expect("temp dir");
    let connection = rusqlite::Connection::open(dir.path().join("floor.db")).expect("sqlite");
    connection.pragma_update(None, "journal_mode", "WAL").expect("wal");
    connection.pragma_update(None, "synchronous", "FULL").expect("full");
    connection.execute_batch("CREATE TABLE t (x INTEGER)").expect("table");
    let mut times = Vec::new();
    for i in 0..2_000 {
        let start = Instant::now();
        connection.execute("INSERT INTO t VALUES (?1)", [i]).expect("insert");
        times.push(start.elapsed());
    }
    times.sort();
    println!(
        "floor: bare SQLite one-row commit (synchronous=FULL): p50 {:.3} ms, p99 {:.3} ms",
        percentile(&times, 0.5).as_secs_f64() * 1e3,
        percentile(&times, 0.99).as_secs_f64() * 1e3
    );
}

/// Builds a database of 10,000 tables, then loads it in a fresh process (this binary
/// again, with `--load`) so the RSS figure is the loaded daemon's alone.
fn restart() {
    const TABLES: usize = 10_000;
    let (dir, store, router, _) = setup(TABLES, Durability::Normal, SNAPSHOT_EVERY);
    drop((store, router));
    let path = dir.path().join("bench.db");
    let output = std::process::Command::new(std::env::current_exe().expect("this binary"))
        .arg("--load")
        .arg(&path)
        .output()
        .expect("the loader runs");
    print!("{}", String::from_utf8_lossy(&output.stdout));
}

fn load(path: &std::path::Path) {
    let before = rss_kib();
    let start = Instant::now();
    let store = Store::open(path, OpenMode::MustExist, Durability::Full).expect("reopen");
    let router = store.load(Registry::standard(), RouterConfig::default()).expect("load");
    let elapsed = start.elapsed();
    println!(
        "restart: loaded {} tables in {:.3} s; RSS {:.1} MB after loading ({:.1} MB at process start)",
        router.table_ids().count(),
        elapsed.as_secs_f64(),
        rss_kib() as f64 / 1024.0,
        before as f64 / 1024.0
    );
}

/// The bytes one action makes the store write for its table (the snapshot's text without
/// its history, and the history entries that are new), as one Thaum table's history grows,
/// beside the snapshot with the whole history inside.
fn snapshot_bytes() {
    const CHECKPOINTS: [usize; 4] = [10, 100, 1_000, 10_000];
    let mut router = Router::new(Registry::standard(), RouterConfig::default());
    router.handle(&say(0, "!new thaum", 0), Timestamp::CONSOLE_EPOCH);
    let table = router.table_ids().next().expect("the table");
    let mut stored = 0;
    for id in 1..=*CHECKPOINTS.last().expect("a checkpoint") as u64 {
        router.handle(&say(0, "!coins alice +1", id), Timestamp::CONSOLE_EPOCH);
        router.take_journal();
        let written = router.stored_table(table, stored).expect("stored");
        let history = written.history.expect("Thaum keeps a history");
        let new: usize = history.entries.iter().map(String::len).sum();
        stored = history.from + history.entries.len();
        if CHECKPOINTS.contains(&(id as usize)) {
            let whole = router.table_snapshot(table).expect("snapshot").to_string().len();
            println!(
                "snapshot bytes per action at history {stored:>6}: {:>5} B written ({} B snapshot + {new} B new history); whole snapshot with history {whole} B",
                written.text.len() + new,
                written.text.len(),
            );
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // `cargo test --benches` runs this with `--test`-like flags; run the figures only for bench.
    if args.iter().any(|a| a == "--test" || a == "--list") {
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--load") {
        load(std::path::Path::new(&args[i + 1]));
        return;
    }
    fsync_floor();
    for every in [SNAPSHOT_EVERY, 1] {
        single_action_latency(100, every);
        single_action_latency(1, every);
        burst(1, every);
        burst(100, every);
    }
    restart();
    snapshot_bytes();
}
