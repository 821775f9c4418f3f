//! Tests of snapshots written every few entries (issue 16, [`super::SNAPSHOT_EVERY`]): a
//! store killed with tables behind their journals restarts to exactly the state a full
//! replay gives, the seal still catches edits, and older databases load.

use std::path::{Path, PathBuf};

use serde_json::Value;
use spellbridge_core::{Inbound, NetworkId, PlayerId, Registry, RoomId, Timestamp};

use super::startup::{Policy, Unsound};
use super::*;
use crate::console::Console;

fn temp_db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("spellbridge.db");
    (dir, path)
}

/// A Thaum table in play.
const THAUM: &str = include_str!("../../tests/fixtures/thaum_in_play.txt");

/// A Thaum table that ends, then a Duel left mid-round: after a round with dice, carol's
/// hidden cast is in, dave's is not.
const DUEL: &str = concat!(
    "\
alice: !new thaum
alice: !coins alice +3
alice: !stop
",
    include_str!("../../tests/fixtures/duel_mid_round.txt")
);

/// Plays `script` on a console over `db`, then drops it without a clean shutdown (as a
/// kill -9 would): the committed journal is all there is.
fn played_and_killed(db: &Path, script: &str) -> Value {
    let mut console = Console::with_store(7, db).expect("the console opens");
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
    for line in script.lines() {
        runtime.block_on(console.feed(line)).expect("the line plays");
    }
    let state = console.snapshot();
    // No Drop: no snapshot is written on the way out.
    std::mem::forget(console);
    state
}

/// Every table's state as a full replay of the journal gives it.
fn replayed(store: &Store) -> Value {
    let mut router = Router::new(Registry::standard(), RouterConfig::default());
    router.add_keys(store.dice_keys(None).expect("keys"));
    for (table, _) in store.stored_tables().expect("tables") {
        for entry in store.entries(Some(table)).expect("entries") {
            router.replay(&entry).expect("replays");
        }
    }
    router.snapshot()
}

/// How many of table `table`'s journal rows come after its snapshot's point.
fn rows_behind(store: &Store, table: TableId) -> i64 {
    store
        .connection()
        .query_row(
            "SELECT count(*) FROM journal JOIN tables ON tables.id = journal.table_id
             WHERE tables.id = ?1 AND journal.id > tables.journal_upto",
            [table as i64],
            |row| row.get(0),
        )
        .expect("count")
}

#[test]
fn a_killed_store_with_tables_behind_their_snapshots_restarts_to_the_full_replay() {
    killed_and_restarted(THAUM, 0);
    killed_and_restarted(DUEL, 1);
}

/// Plays `script`, whose table `behind` is left behind its journal, kills the console and
/// checks what the database gives.
fn killed_and_restarted(script: &str, behind: TableId) {
    let (_dir, db) = temp_db();
    let before = played_and_killed(&db, script);
    let store = Store::open(&db, OpenMode::MustExist, Durability::Full).expect("reopens");
    assert!(rows_behind(&store, behind) > 0, "table {behind}'s snapshot is behind");
    // `verify` and `export` read the database as it was left.
    let report = audit::verify(&store, Registry::standard, None).expect("verifies");
    assert_eq!(report.problems(), 0, "{report:?}");
    let exported =
        audit::export_json(&store, &Registry::standard(), behind).expect("exports").expect("a table");
    assert_eq!(exported["table"], before["tables"][behind as usize], "export shows the table as it is now");
    let full = replayed(&store);
    let loaded = store.load_checked(Registry::standard(), RouterConfig::default(), Policy::Refuse);
    let loaded = loaded.expect("a sound store");
    assert!(loaded.rebuilt.is_empty(), "{:?}", loaded.rebuilt);
    assert_eq!(loaded.router.snapshot(), full, "the same as a full replay");
    assert_eq!(loaded.router.snapshot(), before, "nothing acknowledged was lost");
    // The rows replayed on start are sealed with a snapshot written then.
    assert_eq!(rows_behind(&store, behind), 0);
    let again = store.load_checked(Registry::standard(), RouterConfig::default(), Policy::Refuse);
    assert_eq!(again.expect("sound").router.snapshot(), before);
}

#[test]
fn a_clean_shutdown_and_a_table_that_ends_write_their_snapshots() {
    let (_dir, db) = temp_db();
    let ended = "alice: !new thaum\nalice: !coins alice +3\nalice: !stop\ncarol: !duel dave\ndave: !accept\n\
                 carol (dm): !cast surge fire wind end\n";
    played_and_killed(&db, ended);
    let store = Store::open(&db, OpenMode::MustExist, Durability::Full).expect("reopens");
    assert_eq!(rows_behind(&store, 0), 0, "the table that ended wrote its final snapshot");
    assert!(rows_behind(&store, 1) > 0, "the Duel in play is behind");
    drop(store);
    // A console that ends cleanly writes every snapshot.
    let more = "dave (dm): !cast focus water thunder end\n";
    let (_, state) = crate::console::run_script_with_db(more, 7, &db).expect("plays");
    let store = Store::open(&db, OpenMode::MustExist, Durability::Full).expect("reopens");
    assert_eq!(rows_behind(&store, 1), 0, "written on the way out");
    assert_eq!(replayed(&store), state);
}

#[test]
fn the_seal_still_catches_an_edited_snapshot_or_covered_journal_row_of_a_table_behind() {
    let (_dir, db) = temp_db();
    played_and_killed(&db, THAUM);
    let store = Store::open(&db, OpenMode::MustExist, Durability::Full).expect("reopens");
    let tamper = |sql: &str| store.connection().execute(sql, []).expect("tamper");
    let load = || store.load_checked(Registry::standard(), RouterConfig::default(), Policy::Rebuild);
    // The first row, the Thaum table's opening, is covered by its snapshot.
    let first: i64 = store
        .connection()
        .query_row("SELECT min(id) FROM journal WHERE table_id = 0", [], |r| r.get(0))
        .expect("row");
    tamper(&format!("UPDATE journal SET events = '[\"forged\"]' WHERE id = {first}"));
    let loaded = load().expect("rebuilds");
    assert_eq!(loaded.rebuilt[0].problem, Unsound::JournalEdited, "{:?}", loaded.rebuilt);
    played_and_killed(&db, "alice: !coins alice +1\n");
    assert!(rows_behind(&store, 0) > 0);
    tamper("UPDATE tables SET snapshot = replace(snapshot, '\"sequence\":', '\"sequence\": ') WHERE id = 0");
    let loaded = load().expect("rebuilds");
    assert_eq!(loaded.rebuilt[0].problem, Unsound::SnapshotEdited, "{:?}", loaded.rebuilt);
    assert_eq!(loaded.router.snapshot(), replayed(&store));
}

/// Plays Thaum actions straight through the router and the store.
fn commit_all(store: &mut Store, texts: &[&str]) -> Router {
    let mut router = store.load(Registry::standard(), RouterConfig::default()).expect("loads");
    for (n, text) in texts.iter().enumerate() {
        let inbound = Inbound {
            message_id: Some(format!("m{n}")),
            ..Inbound::new(NetworkId::new("irc"), RoomId::new("#magic"), PlayerId::new("alice"), *text)
        };
        let outbound = router.handle(&inbound, Timestamp(1_000));
        let step = Step { records: router.take_journal(), outbound, ..Step::default() };
        store.commit(&router, vec![step]).expect("commit");
    }
    router
}

#[test]
fn a_database_written_before_the_change_loads_and_verifies() {
    let (_dir, db) = temp_db();
    let mut store = Store::open(&db, OpenMode::CreateIfMissing, Durability::Full).expect("opens");
    // As the release before issue 16 wrote: every snapshot at every commit.
    store.set_snapshot_every(1);
    let router = commit_all(&mut store, &["!new thaum", "!coins alice +3", "!gather 1 fire"]);
    store
        .connection()
        .execute_batch("ALTER TABLE tables DROP COLUMN journal_upto; PRAGMA user_version = 11;")
        .expect("back to schema 11");
    drop(store);
    let store = Store::open(&db, OpenMode::MustExist, Durability::Full).expect("migrates");
    let report = audit::verify(&store, Registry::standard, None).expect("verifies");
    assert_eq!(report.problems(), 0, "{report:?}");
    let loaded = store.load_checked(Registry::standard(), RouterConfig::default(), Policy::Refuse);
    assert_eq!(loaded.expect("loads").router.snapshot(), router.snapshot());
}
