//! Makes a large SQLite store to measure what reading it costs (issue 34: start-up's
//! journal digests and `store copy` on PostgreSQL stream their rows):
//! `cargo bench -p spellbridge --bench big_store -- PATH [ROWS]` writes ROWS (default
//! 200,000) `!coins` moves over 100 Thaum tables to the SQLite file PATH, in batches of
//! 500 per transaction, snapshots current. Then, for example:
//!
//! ```text
//! /usr/bin/time -v spellbridge store copy --from sqlite:PATH --to postgres://…
//! /usr/bin/time -v spellbridge store copy --from postgres://… --to sqlite:OTHER
//! ```
//!
//! and read "Maximum resident set size".

use spellbridge::router::{Router, RouterConfig};
use spellbridge::store::{Durability, MessageKey, OpenMode, Step, Store};
use spellbridge_core::{Inbound, NetworkId, PlayerId, Registry, RoomId, Timestamp};

const ROOMS: usize = 100;

fn say(room: usize, text: &str, id: u64) -> Inbound {
    Inbound {
        message_id: Some(id.to_string()),
        ..Inbound::new(
            NetworkId::new("bench"),
            RoomId::new(format!("#room{room}")),
            PlayerId::new("alice"),
            text.to_owned(),
        )
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let Some(path) = args.first() else {
        eprintln!("usage: cargo bench -p spellbridge --bench big_store -- PATH [ROWS]");
        std::process::exit(2);
    };
    let rows: u64 = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(200_000);
    let mut store = Store::open(std::path::Path::new(path), OpenMode::CreateIfMissing, Durability::Normal)
        .expect("store");
    let mut router = Router::new(Registry::standard(), RouterConfig::default());
    let mut steps = Vec::new();
    for id in 0..rows {
        let room = id as usize % ROOMS;
        let text = if id < ROOMS as u64 { "!new thaum" } else { "!coins alice +1" };
        let inbound = say(room, text, id);
        let outbound = router.handle(&inbound, Timestamp::CONSOLE_EPOCH);
        let message = Some(MessageKey { network: inbound.network.clone(), id: id.to_string() });
        steps.push(Step { message, records: router.take_journal(), outbound, ..Step::default() });
        if steps.len() == 500 {
            store.commit(&router, std::mem::take(&mut steps)).expect("commit");
            store
                .sent_all(&store.pending().expect("pending").iter().map(|q| q.id).collect::<Vec<_>>())
                .expect("sent");
        }
    }
    store.commit(&router, steps).expect("commit");
    store.write_snapshots(&router).expect("snapshots");
    println!("{path}: {} journal rows", store.journal().expect("journal").len());
}
