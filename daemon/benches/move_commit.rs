//! A durable move's commit on each store engine, the same bench (issue 34, Measure): a
//! bench binary that prints figures, `cargo bench -p spellbridge --bench move_commit`.
//!
//! 100 Thaum tables are opened, then [`MOVES`] moves (`!coins alice +1`, in turn at each
//! table) are each handled and committed on their own, as the daemon does before it
//! announces a move; the figure is the time of handle + commit, p50 and p99, after
//! [`WARMUP`] unmeasured ones. The engines:
//!
//! - SQLite: a file in a temp dir, WAL, `synchronous=FULL` (`durability = "full"`, the
//!   default: fsync before the reply);
//! - PostgreSQL: a throwaway cluster from tests/harness/postgres.rs on loopback (fsync and
//!   `synchronous_commit` on, PostgreSQL's defaults), or the database at
//!   `$SPELLBRIDGE_BENCH_POSTGRES_URL` (an empty one: the bench takes its lease). Each
//!   commit checks the lease's epoch in the same transaction (the fence).
//!
//! `SPELLBRIDGE_BENCH_STORE` picks them: `sqlite`, `postgres` or `both` (the default);
//! with both, the difference of the p50s is printed last (the goal: PostgreSQL adds at
//! most 1 ms).

use std::time::{Duration, Instant};

use spellbridge::leader::{Fence, Holder, Lease, LeaseSettings};
use spellbridge::router::{Router, RouterConfig};
use spellbridge::store::postgres::StoreUrl;
use spellbridge::store::{Durability, MessageKey, OpenMode, Step, Store};
use spellbridge_core::{Inbound, NetworkId, PlayerId, Registry, RoomId, Timestamp};
use spellbridge_tests::harness::postgres::Postgres;

mod support;
use support::{ms, percentile};

/// Moves measured per engine, after [`WARMUP`] unmeasured ones.
const MOVES: usize = 2_000;
const WARMUP: usize = 100;
/// Tables the moves go to in turn.
const TABLES: usize = 100;

fn say(table: usize, text: &str, id: u64) -> Inbound {
    Inbound {
        display_name: "alice".into(),
        private: false,
        message_id: Some(id.to_string()),
        ..Inbound::new(
            NetworkId::new("bench"),
            RoomId::new(format!("#room{table}")),
            PlayerId::new("alice"),
            text.to_owned(),
        )
    }
}

/// One move handled and committed on its own; what it queued is marked sent, as the
/// daemon does once it is delivered.
fn one_move(store: &mut Store, router: &mut Router, table: usize, id: u64) -> Duration {
    let start = Instant::now();
    let inbound = say(table, "!coins alice +1", id);
    let outbound = router.handle(&inbound, Timestamp::CONSOLE_EPOCH);
    let message = Some(MessageKey { network: inbound.network.clone(), id: id.to_string() });
    let step = Step { message, records: router.take_journal(), outbound, ..Step::default() };
    let queued = store.commit(router, vec![step]).expect("commit");
    let took = start.elapsed();
    for q in queued {
        store.sent(q.id).expect("sent");
    }
    took
}

/// Opens the tables, then measures; prints the figure and returns the p50.
fn measure(engine: &str, mut store: Store) -> Duration {
    let mut router = Router::new(Registry::standard(), RouterConfig::default());
    let mut id = 0;
    let mut steps = Vec::new();
    for table in 0..TABLES {
        id += 1;
        let outbound = router.handle(&say(table, "!new thaum", id), Timestamp::CONSOLE_EPOCH);
        steps.push(Step { records: router.take_journal(), outbound, ..Step::default() });
    }
    store.commit(&router, steps).expect("opening the tables");
    let mut times = Vec::with_capacity(MOVES);
    for n in 0..WARMUP + MOVES {
        id += 1;
        let took = one_move(&mut store, &mut router, n % TABLES, id);
        if n >= WARMUP {
            times.push(took);
        }
    }
    times.sort();
    let p50 = percentile(&times, 0.5);
    println!(
        "durable move (handle + commit) on {engine}, {MOVES} moves over {TABLES} tables: p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        ms(p50),
        ms(percentile(&times, 0.99)),
        ms(*times.last().expect("a move")),
    );
    p50
}

fn sqlite() -> Duration {
    let dir = tempfile::Builder::new().prefix("spellbridge-bench-").tempdir().expect("temp dir");
    let store = Store::open(&dir.path().join("bench.db"), OpenMode::CreateIfMissing, Durability::Full)
        .expect("SQLite opens");
    measure("SQLite (synchronous=FULL)", store)
}

/// Takes the lease on `url` for the bench (long: no renewal races a commit).
fn fence(url: &str) -> Fence {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    runtime.block_on(async {
        let settings =
            LeaseSettings::new(Duration::from_secs(600), Duration::from_secs(60)).expect("lease settings");
        let holder = Holder::new("spellbridge@bench").expect("a holder");
        let mut lease = Lease::open(url, holder, settings).await.unwrap_or_else(|e| panic!("the lease: {e}"));
        let term = lease.acquire().await.unwrap_or_else(|e| panic!("the lease: {e}")).unwrap_or_else(|| {
            panic!("another daemon holds the lease on this database: give the bench an empty one")
        });
        lease.fence(term.epoch)
    })
}

fn postgres() -> Duration {
    let (cluster, url, where_) = match std::env::var("SPELLBRIDGE_BENCH_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => (None, url, "$SPELLBRIDGE_BENCH_POSTGRES_URL"),
        _ => {
            let cluster = Postgres::start_new().unwrap_or_else(|e| panic!("{e}"));
            let url = cluster.url();
            (Some(cluster), url, "a local cluster on loopback")
        }
    };
    let fence = fence(&url);
    let parsed = StoreUrl::parse(&url).unwrap_or_else(|e| panic!("{e}"));
    let store = Store::open_postgres(&parsed, Some(fence)).expect("PostgreSQL opens");
    let p50 = measure(&format!("PostgreSQL ({where_}, fenced)"), store);
    drop(cluster);
    p50
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // `cargo test --benches` runs this with `--test`-like flags; run the figures only for bench.
    if args.iter().any(|a| a == "--test" || a == "--list") {
        return;
    }
    let which = std::env::var("SPELLBRIDGE_BENCH_STORE").unwrap_or_else(|_| "both".to_owned());
    match which.as_str() {
        "sqlite" => drop(sqlite()),
        "postgres" => drop(postgres()),
        "both" | "" => {
            let (lite, pg) = (sqlite(), postgres());
            println!(
                "PostgreSQL adds {:+.3} ms to a durable move's p50 (goal: at most +1 ms)",
                ms(pg) - ms(lite)
            );
        }
        other => panic!("SPELLBRIDGE_BENCH_STORE={other:?}: write sqlite, postgres or both"),
    }
}
