//! One store test suite, written once and run on both engines (issue 34): `suite` holds
//! the tests, each a function of an [`Engine`] that opens (and reopens) one database;
//! `sqlite` and `postgres` instantiate it, the second against a real PostgreSQL from
//! tests/harness/postgres.rs. Then what only PostgreSQL has: the leader's fence in every
//! journal commit, and calls from inside a tokio runtime.

use std::time::{Duration, UNIX_EPOCH};

use spellbridge::relay::replies::{LEARNED, LatestLine, REPLY_WITHIN};
use spellbridge::store::appservice_txns::TxnStore;
use spellbridge::store::audit;
use spellbridge::store::copy::{self, CopyError, Place};
use spellbridge::store::ratings::RatingsCheck;
use spellbridge::store::relayed::RelayedLine;
use spellbridge::store::sts::StsStore;
use spellbridge::turn::Place as RoomPlace;
use spellbridge_adapters::{SeenTransactions as _, StsPolicies as _, StsPolicy};
use spellbridge_core::Relayed;

use spellbridge::leader::{Fence, FenceError, Holder, Lease, LeaseSettings, Renewal};
use spellbridge::router::{Router, RouterConfig};
use spellbridge::store::postgres::StoreUrl;
use spellbridge::store::startup::{Loaded, Policy, TableProblem, Unsound};
use spellbridge::store::sync_positions::PositionStore;
use spellbridge::store::{Durability, MessageKey, OpenMode, SNAPSHOT_EVERY, Step, Store, StoreError};
use spellbridge::turn::Outbound;
use spellbridge_adapters::SyncPositions;
use spellbridge_core::{Destination, Inbound, NetworkId, PlayerId, Registry, RichText, RoomId, Timestamp};
use spellbridge_tests::harness::commit_cut::{AtCommit, CommitCut};
use spellbridge_tests::harness::postgres::Postgres;

/// One database on one engine: each call opens it again, as a restarted daemon would.
trait Engine {
    fn open(&self) -> Store;
    /// Runs `sql` on the database behind the store's back (as an operator's edit or a
    /// damaged disk would): written in the SQL both engines take.
    fn sql(&self, sql: &str);
    /// The one number `sql` answers (`SELECT count(*) …`).
    fn number(&self, sql: &str) -> i64;
}

struct Sqlite {
    dir: tempfile::TempDir,
}

impl Engine for Sqlite {
    fn open(&self) -> Store {
        Store::open(&self.dir.path().join("spellbridge.db"), OpenMode::CreateIfMissing, Durability::Full)
            .unwrap_or_else(|e| panic!("SQLite opens: {e}"))
    }

    fn sql(&self, sql: &str) {
        let connection = rusqlite::Connection::open(self.dir.path().join("spellbridge.db"))
            .unwrap_or_else(|e| panic!("SQLite opens: {e}"));
        connection.execute_batch(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    fn number(&self, sql: &str) -> i64 {
        let connection = rusqlite::Connection::open(self.dir.path().join("spellbridge.db"))
            .unwrap_or_else(|e| panic!("SQLite opens: {e}"));
        connection.query_row(sql, [], |row| row.get(0)).unwrap_or_else(|e| panic!("{sql}: {e}"))
    }
}

fn sqlite() -> Sqlite {
    Sqlite { dir: tempfile::tempdir().unwrap_or_else(|e| panic!("a temporary directory: {e}")) }
}

struct Pg {
    cluster: Postgres,
    fence: Fence,
}

impl Engine for Pg {
    fn open(&self) -> Store {
        Store::open_postgres(&url(&self.cluster), Some(self.fence.clone()))
            .unwrap_or_else(|e| panic!("PostgreSQL opens: {e}"))
    }

    fn sql(&self, sql: &str) {
        self.cluster.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    fn number(&self, sql: &str) -> i64 {
        let answer = self.cluster.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
        answer.trim().parse().unwrap_or_else(|e| panic!("{sql} answered {answer:?}: {e}"))
    }
}

fn url(cluster: &Postgres) -> StoreUrl {
    StoreUrl::parse(&cluster.url()).unwrap_or_else(|e| panic!("{e}"))
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap_or_else(|e| panic!("{e}"))
}

/// Takes the lease as `name` (a long one: the suite's commits never race a renewal).
fn lease(cluster: &Postgres, name: &str) -> (Lease, Fence) {
    let settings = LeaseSettings::new(Duration::from_secs(600), Duration::from_secs(60))
        .unwrap_or_else(|e| panic!("{e}"));
    runtime().block_on(async {
        let holder = Holder::new(name).unwrap_or_else(|e| panic!("{e}"));
        let mut lease = Lease::open(&cluster.url(), holder, settings).await.unwrap_or_else(|e| panic!("{e}"));
        let term = lease
            .acquire()
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_else(|| panic!("{name} takes the free lease"));
        let fence = lease.fence(term.epoch);
        (lease, fence)
    })
}

fn postgres() -> Pg {
    let cluster = Postgres::start_new().unwrap_or_else(|e| panic!("{e}"));
    let (_, fence) = lease(&cluster, "spellbridge@suite");
    Pg { cluster, fence }
}

fn message(n: usize) -> Outbound {
    Outbound {
        network: NetworkId::new("irc"),
        to: Destination::Room(RoomId::new("#magic")),
        message: RichText::new().text(format!("message {n}")).into(),
    }
}

fn router() -> Router {
    Router::new(Registry::standard(), RouterConfig::default())
}

fn texts(store: &Store) -> Vec<String> {
    let pending = store.pending().unwrap_or_else(|e| panic!("pending: {e}"));
    pending.into_iter().map(|q| q.outbound.message.text.plain()).collect()
}

/// Plays `lines` as alice in #magic through the store, one commit each.
fn play(store: &mut Store, lines: &[&str], first_id: usize) -> Router {
    let mut router =
        store.load(Registry::standard(), RouterConfig::default()).unwrap_or_else(|e| panic!("loads: {e}"));
    for (n, text) in lines.iter().enumerate() {
        let inbound = Inbound {
            message_id: Some(format!("m{}", first_id + n)),
            ..Inbound::new(NetworkId::new("irc"), RoomId::new("#magic"), PlayerId::new("alice"), *text)
        };
        let outbound = router.handle(&inbound, Timestamp(1_000));
        let step = Step {
            message: Some(MessageKey { network: NetworkId::new("irc"), id: format!("m{}", first_id + n) }),
            records: router.take_journal(),
            outbound,
            ..Step::default()
        };
        store.commit(&router, vec![step]).unwrap_or_else(|e| panic!("commit {text}: {e}"));
    }
    router
}

/// The Thaum table's state as the router has it, without its dice (whose field name
/// differs between a fresh table and a reloaded one only in key order, never in value).
fn table(router: &Router) -> serde_json::Value {
    router.table_snapshot(0).unwrap_or_else(|| panic!("table 0 is open"))["state"].clone()
}

/// The coins of table 0's one player (alice, under whatever id the router gives her).
fn alice_coins(router: &Router) -> serde_json::Value {
    coins_in(&router.table_snapshot(0).unwrap_or_else(|| panic!("table 0 is open")))
}

fn coins_in(snapshot: &serde_json::Value) -> serde_json::Value {
    let players = snapshot["state"]["players"].as_object().cloned().unwrap_or_default();
    players.values().next().map(|sheet| sheet["coins"].clone()).unwrap_or_default()
}

/// A Thaum table with alice's 3 coins, shut down cleanly (its snapshot current).
fn played(engine: &dyn Engine) -> Store {
    let mut store = engine.open();
    let router = play(&mut store, &["!new thaum", "!coins alice +3", "!gather 1 fire"], 0);
    store.write_snapshots(&router).unwrap_or_else(|e| panic!("snapshots written: {e}"));
    store
}

fn load_checked(store: &Store, policy: Policy) -> Result<Loaded, StoreError> {
    store.load_checked(Registry::standard(), RouterConfig::default(), policy)
}

/// The tests, each written once for any engine.
mod suite {
    use super::*;

    fn relayed_line(i: usize) -> RelayedLine {
        let relayed = Relayed { name: format!("nick{i}"), text: format!("line {i}") };
        (NetworkId::new("matrix"), format!("$e{i}"), relayed)
    }

    fn latest_line(room: &str, name: &str, id: &str, at: i64) -> LatestLine {
        LatestLine {
            place: RoomPlace { network: NetworkId::new("matrix"), room: RoomId::new(room) },
            name: name.to_owned(),
            id: id.to_owned(),
            at: Timestamp(at),
        }
    }

    pub fn relayed_and_latest_lines_are_kept_across_a_restart(engine: &dyn Engine) {
        let mut store = engine.open();
        let lines: Vec<RelayedLine> = (0..LEARNED + 5).map(relayed_line).collect();
        store.keep_relayed(&lines[..10]).unwrap_or_else(|e| panic!("kept: {e}"));
        store.keep_relayed(&lines[10..]).unwrap_or_else(|e| panic!("kept: {e}"));
        store
            .keep_latest(&[latest_line("!a:hs", "old", "$0", 100), latest_line("!a:hs", "bob", "$1", 1000)])
            .unwrap_or_else(|e| panic!("kept: {e}"));
        let later =
            [latest_line("!a:hs", "bob", "$2", 1000 + REPLY_WITHIN), latest_line("!b:hs", "bob", "$3", 1001)];
        store.keep_latest(&later).unwrap_or_else(|e| panic!("kept: {e}"));
        drop(store);
        let store = engine.open();
        let kept = store.relayed().unwrap_or_else(|e| panic!("read: {e}"));
        assert_eq!(kept.len(), LEARNED, "pruned to the latest");
        assert_eq!(kept.first().map(|(_, id, _)| id.as_str()), Some("$e5"), "the oldest rows went");
        assert_eq!(kept.last(), lines.last());
        assert_eq!(
            store.latest().unwrap_or_else(|e| panic!("read: {e}")),
            [latest_line("!b:hs", "bob", "$3", 1001), latest_line("!a:hs", "bob", "$2", 1000 + REPLY_WITHIN)],
            "bob's newer line replaced his older one in !a; the stale line went"
        );
    }

    pub fn sts_policies_and_appservice_transactions_are_kept(engine: &dyn Engine) {
        let expires = UNIX_EPOCH + Duration::from_secs(2_000_000_000);
        {
            let store = engine.open();
            let sts = StsStore::open(&store).unwrap_or_else(|e| panic!("sts: {e}"));
            assert_eq!(sts.get("irc.example.org"), None);
            sts.set("IRC.Example.org", Some(StsPolicy { port: 6697, expires }));
            sts.set("other.example.org", Some(StsPolicy { port: 7000, expires }));
            sts.set("other.example.org", None);
            assert_eq!(sts.get("other.example.org"), None, "removed");
            let txns = TxnStore::open(&store).unwrap_or_else(|e| panic!("txns: {e}"));
            assert_eq!(txns.seen("matrix", "t1"), Ok(false));
            txns.note("matrix", "t1").unwrap_or_else(|e| panic!("noted: {e}"));
            txns.note("matrix", "t1").unwrap_or_else(|e| panic!("noted twice is fine: {e}"));
            assert_eq!(txns.seen("other", "t1"), Ok(false), "per network");
        }
        let store = engine.open();
        let sts = StsStore::open(&store).unwrap_or_else(|e| panic!("sts: {e}"));
        assert_eq!(sts.get("irc.example.ORG"), Some(StsPolicy { port: 6697, expires }), "kept, any case");
        let txns = TxnStore::open(&store).unwrap_or_else(|e| panic!("txns: {e}"));
        assert_eq!(txns.seen("matrix", "t1"), Ok(true), "kept");
    }

    pub fn ratings_are_kept_and_an_edited_copy_is_found(engine: &dyn Engine) {
        let store = played(engine);
        let scopes = Default::default();
        let summary = store
            .refresh_ratings(&Registry::standard(), &scopes)
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_else(|e| panic!("derived: {e}"));
        assert_eq!(store.stored_ratings().unwrap_or_else(|e| panic!("{e}")), Some(summary));
        assert_eq!(
            store.check_ratings(&Registry::standard()).unwrap_or_else(|e| panic!("{e}")),
            RatingsCheck::Match
        );
        engine
            .sql(r#"UPDATE meta SET value = replace(value, '"summary"', '"edited"') WHERE key = 'ratings'"#);
        let check = store.check_ratings(&Registry::standard()).unwrap_or_else(|e| panic!("{e}"));
        assert!(check.is_problem(), "{check}");
    }

    pub fn verify_and_export_read_the_tables_and_find_an_edit(engine: &dyn Engine) {
        let store = played(engine);
        let clean =
            audit::verify(&store, Registry::standard, None).unwrap_or_else(|e| panic!("verifies: {e}"));
        assert_eq!(clean.problems(), 0, "{clean:?}");
        assert_eq!(clean.tables.len(), 1);
        assert_eq!(clean.tables[0].game, "thaum");
        let exported = audit::export_json(&store, &Registry::standard(), 0)
            .unwrap_or_else(|e| panic!("exports: {e}"))
            .unwrap_or_else(|| panic!("table 0"));
        assert_eq!(coins_in(&exported["table"]), 3);
        let rows = exported["journal"].as_array().cloned().unwrap_or_default();
        assert_eq!(rows.len(), 3, "its three journal rows: {rows:?}");
        assert_eq!(rows[1]["command"], "!coins alice +3");
        let wiki = audit::export_wiki(&store, &Registry::standard(), 0).unwrap_or_else(|e| panic!("{e}"));
        assert!(wiki.is_some_and(|w| w.contains("!coins alice +3")));
        assert!(
            audit::export_json(&store, &Registry::standard(), 9).unwrap_or_else(|e| panic!("{e}")).is_none()
        );
        engine.sql(r#"UPDATE tables SET snapshot = replace(snapshot, '"coins":3', '"coins":300')"#);
        let report =
            audit::verify(&store, Registry::standard, None).unwrap_or_else(|e| panic!("verifies: {e}"));
        assert!(report.problems() > 0, "the edit is found: {report:?}");
    }

    pub fn a_bad_outbox_row_is_set_aside_not_sent_and_the_good_ones_stay(engine: &dyn Engine) {
        let mut store = engine.open();
        store
            .commit(&router(), vec![Step { outbound: vec![message(1)], ..Step::default() }])
            .unwrap_or_else(|e| panic!("{e}"));
        engine.sql("INSERT INTO outbox (network, destination, text) VALUES ('irc', 'not json', '{}')");
        engine.sql(r#"INSERT INTO outbox (network, destination, text) VALUES ('irc', '{"room":""}', '{}')"#);
        store
            .commit(&router(), vec![Step { outbound: vec![message(2)], ..Step::default() }])
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(store.check_outbox(None).unwrap_or_else(|e| panic!("{e}")).len(), 2, "verify sees both");
        assert_eq!(store.pending_count().unwrap_or_else(|e| panic!("{e}")), 4, "checking moves nothing");
        let (queued, bad) = store.pending_checked().unwrap_or_else(|e| panic!("start goes on: {e}"));
        let texts: Vec<String> = queued.iter().map(|q| q.outbound.message.text.plain()).collect();
        assert_eq!(texts, ["message 1", "message 2"]);
        assert_eq!(bad.iter().map(|b| b.id).collect::<Vec<_>>(), [2, 3]);
        assert!(bad[0].reason.contains("destination does not read"), "{bad:?}");
        assert!(bad[1].reason.contains("names no room or player"), "{bad:?}");
        drop(store);
        // Kept, as stored, and listed; no longer in the outbox.
        let store = engine.open();
        assert_eq!(store.set_aside_rows().unwrap_or_else(|e| panic!("{e}")), bad);
        assert_eq!(engine.number("SELECT count(*) FROM outbox_set_aside WHERE destination = 'not json'"), 1);
        assert!(store.check_outbox(None).unwrap_or_else(|e| panic!("{e}")).is_empty());
        let unknown = store.check_outbox(Some(&[NetworkId::new("matrix")])).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            unknown.len(),
            2,
            "with a config, rows for unconfigured networks are problems: {unknown:?}"
        );
    }

    /// How many of table `table`'s journal rows come after its snapshot's point.
    fn rows_behind(engine: &dyn Engine, table: u64) -> i64 {
        engine.number(&format!(
            "SELECT count(*) FROM journal JOIN tables ON tables.id = journal.table_id
             WHERE tables.id = {table} AND journal.id > tables.journal_upto"
        ))
    }

    pub fn a_snapshot_is_written_once_every_k_entries(engine: &dyn Engine) {
        let mut store = engine.open();
        let mut texts = vec!["!new thaum"];
        texts.extend(std::iter::repeat_n("!coins alice +1", SNAPSHOT_EVERY - 1));
        play(&mut store, &texts, 0);
        assert_eq!(rows_behind(engine, 0), (SNAPSHOT_EVERY - 1) as i64, "written at the opening only");
        let router = play(&mut store, &["!coins alice +1"], SNAPSHOT_EVERY);
        assert_eq!(rows_behind(engine, 0), 0, "the K-th entry wrote it");
        let stored = store.current_table(&Registry::standard(), 0).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(stored, router.table_snapshot(0));
    }

    pub fn the_snapshot_written_per_action_does_not_grow_with_the_history(engine: &dyn Engine) {
        // Issue 16, finding 3: each action rewrote the whole snapshot, history and all.
        let mut store = engine.open();
        let bytes = |store: &mut Store, first: usize, actions: usize| {
            let router = play(store, &vec!["!coins alice +1"; actions], first);
            store.write_snapshots(&router).unwrap_or_else(|e| panic!("{e}"));
            (engine.number("SELECT length(snapshot) FROM tables WHERE id = 0"), router)
        };
        play(&mut store, &["!new thaum"], 0);
        let (short, _) = bytes(&mut store, 1, 10);
        let (long, router) = bytes(&mut store, 11, 290);
        // The coins count has one more digit; nothing else may grow.
        assert!(long <= short + 4, "{short} bytes after 10 actions, {long} after 300");
        assert_eq!(
            engine.number("SELECT count(*) FROM history"),
            300,
            "one row per entry, each written once"
        );
        // Loaded again, and as `verify` and `export` see it, the whole history is there.
        let loaded = load_checked(&store, Policy::Refuse).unwrap_or_else(|e| panic!("a sound store: {e}"));
        assert_eq!(loaded.router.table_snapshot(0), router.table_snapshot(0));
        let history = &router.table_snapshot(0).unwrap_or_else(|| panic!("table 0"))["state"]["history"];
        assert_eq!(history.as_array().map(Vec::len), Some(300));
        let report = audit::verify(&store, Registry::standard, None).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(report.problems(), 0, "{report:?}");
        let exported = audit::export_json(&store, &Registry::standard(), 0).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(exported.map(|e| e["table"]["state"]["history"].clone()).as_ref(), Some(history));
    }

    pub fn a_table_behind_its_snapshot_restarts_to_where_it_was(engine: &dyn Engine) {
        let mut store = engine.open();
        // A snapshot only when the table opens: the moves after it are in the journal only.
        store.set_snapshot_every(100);
        let before = play(&mut store, &["!new thaum", "!coins alice +3", "!gather 1 fire"], 0);
        drop(store); // killed: no clean shutdown writes the snapshot
        let store = engine.open();
        let stored = store.stored_tables().unwrap_or_else(|e| panic!("stored snapshots: {e}"));
        assert_eq!(stored.len(), 1, "table 0's snapshot, written when it opened");
        assert_eq!(coins_in(&stored[0].1), 0, "the snapshot is behind its journal");
        let now = store.current_table(&Registry::standard(), 0).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(now.map(|t| coins_in(&t)), Some(3.into()), "the rows after it replayed onto it");
        let loaded = load_checked(&store, Policy::Refuse).unwrap_or_else(|e| panic!("a sound start: {e}"));
        assert!(loaded.rebuilt.is_empty(), "nothing rebuilt: {:?}", loaded.rebuilt);
        assert_eq!(table(&loaded.router), table(&before), "the snapshot and the rows after it");
        // Start-up sealed the snapshot up to the journal's end.
        let stored = store.stored_tables().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(coins_in(&stored[0].1), 3, "written back at start-up");
    }

    pub fn a_snapshot_edited_in_sql_is_rebuilt_from_the_journal_and_reported(engine: &dyn Engine) {
        let store = played(engine);
        let honest = load_checked(&store, Policy::Refuse).unwrap_or_else(|e| panic!("sound: {e}"));
        assert!(honest.rebuilt.is_empty(), "an untouched store is sound");
        assert_eq!(alice_coins(&honest.router), 3);
        engine.sql(r#"UPDATE tables SET snapshot = replace(snapshot, '"coins":3', '"coins":300')"#);
        let error = load_checked(&store, Policy::Refuse).err().unwrap_or_else(|| panic!("--strict refuses"));
        assert!(matches!(error, StoreError::Unsound { .. }), "{error}");
        assert!(error.to_string().contains("table 0: its snapshot does not match the checksum"), "{error}");
        let loaded = load_checked(&store, Policy::Rebuild).unwrap_or_else(|e| panic!("rebuilds: {e}"));
        assert_eq!(alice_coins(&loaded.router), 3, "the journal's state, not the edit");
        assert_eq!(loaded.rebuilt, [TableProblem { table: 0, problem: Unsound::SnapshotEdited }]);
        // The rebuilt snapshot was written back: the next start finds it sound.
        let again = load_checked(&store, Policy::Refuse).unwrap_or_else(|e| panic!("sound now: {e}"));
        assert!(again.rebuilt.is_empty());
    }

    pub fn a_journal_edited_in_sql_no_longer_matches_its_seal(engine: &dyn Engine) {
        let store = played(engine);
        engine.sql(
            r#"UPDATE journal SET events = '["forged"]' WHERE kind = 'acted' AND command LIKE '!coins%'"#,
        );
        let loaded = load_checked(&store, Policy::Rebuild).unwrap_or_else(|e| panic!("rebuilds: {e}"));
        assert_eq!(loaded.rebuilt, [TableProblem { table: 0, problem: Unsound::JournalEdited }]);
    }

    pub fn a_snapshot_whose_row_was_deleted_is_rebuilt_not_forgotten(engine: &dyn Engine) {
        let store = played(engine);
        engine.sql("DELETE FROM tables");
        let loaded = load_checked(&store, Policy::Rebuild).unwrap_or_else(|e| panic!("rebuilds: {e}"));
        assert_eq!(loaded.rebuilt, [TableProblem { table: 0, problem: Unsound::NoSnapshot }]);
        assert_eq!(alice_coins(&loaded.router), 3);
    }

    pub fn a_history_row_edited_in_sql_is_caught_by_the_seal(engine: &dyn Engine) {
        let store = played(engine);
        let kept = store.stored_tables().unwrap_or_else(|e| panic!("{e}"));
        let history = kept[0].1["state"]["history"].as_array().map_or(0, Vec::len);
        assert!(history > 0, "Thaum keeps a history: {}", kept[0].1);
        engine.sql("UPDATE history SET entry = replace(entry, '+3', '+9')");
        assert!(store.stored_tables().is_err(), "the history rows no longer match the snapshot");
        let report = audit::verify(&store, Registry::standard, None).unwrap_or_else(|e| panic!("{e}"));
        assert!(report.problems() > 0, "verify finds it: {report:?}");
        let refused =
            load_checked(&store, Policy::Refuse).err().unwrap_or_else(|| panic!("--strict refuses"));
        assert!(refused.to_string().contains("history rows"), "{refused}");
        let loaded = load_checked(&store, Policy::Rebuild).unwrap_or_else(|e| panic!("rebuilds: {e}"));
        assert!(
            matches!(
                loaded.rebuilt.as_slice(),
                [TableProblem { table: 0, problem: Unsound::DoesNotLoad(_) }]
            ),
            "{:?}",
            loaded.rebuilt
        );
        assert_eq!(alice_coins(&loaded.router), 3);
    }

    pub fn the_outbox_keeps_order_and_forgets_only_what_was_sent(engine: &dyn Engine) {
        let mut store = engine.open();
        let step = Step { outbound: (0..5).map(message).collect(), ..Step::default() };
        let queued = store.commit(&router(), vec![step]).unwrap_or_else(|e| panic!("commit: {e}"));
        assert_eq!(queued.len(), 5);
        store.sent(queued[0].id).unwrap_or_else(|e| panic!("sent: {e}"));
        store.sent_all(&[queued[2].id]).unwrap_or_else(|e| panic!("sent: {e}"));
        drop(store);
        assert_eq!(texts(&engine.open()), ["message 1", "message 3", "message 4"]);
    }

    pub fn a_message_id_is_remembered_across_restarts(engine: &dyn Engine) {
        let key = MessageKey { network: NetworkId::new("irc"), id: "abc".into() };
        let mut store = engine.open();
        assert!(!store.seen(&key).unwrap_or_else(|e| panic!("{e}")));
        store
            .commit(&router(), vec![Step { message: Some(key.clone()), ..Step::default() }])
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(store.seen(&key).unwrap_or_else(|e| panic!("{e}")), "seen as soon as committed");
        drop(store);
        let store = engine.open();
        assert!(store.seen(&key).unwrap_or_else(|e| panic!("{e}")));
        let other = MessageKey { network: NetworkId::new("matrix"), id: "abc".into() };
        assert!(!store.seen(&other).unwrap_or_else(|e| panic!("{e}")), "ids are per network");
    }

    pub fn private_destinations_round_trip_through_the_outbox(engine: &dyn Engine) {
        let mut store = engine.open();
        let dm = Outbound {
            network: NetworkId::new("matrix"),
            to: Destination::Private(PlayerId::new("@alice:localhost")),
            message: RichText::new().bold("Fire").text(" and ").code("!cast").into(),
        };
        store
            .commit(&router(), vec![Step { outbound: vec![dm.clone()], ..Step::default() }])
            .unwrap_or_else(|e| panic!("{e}"));
        drop(store);
        assert_eq!(engine.open().pending().unwrap_or_else(|e| panic!("{e}"))[0].outbound, dm);
    }

    pub fn a_fleeting_step_is_answered_and_keeps_nothing(engine: &dyn Engine) {
        let mut store = engine.open();
        let key = MessageKey { network: NetworkId::new("irc"), id: "status".into() };
        let step = Step {
            message: Some(key.clone()),
            outbound: vec![message(7)],
            fleeting: true,
            ..Step::default()
        };
        let queued = store.commit(&router(), vec![step]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(queued.iter().map(|q| q.id).collect::<Vec<_>>(), [-1], "answered outside the outbox");
        assert!(texts(&store).is_empty());
        assert!(!store.seen(&key).unwrap_or_else(|e| panic!("{e}")), "its id is not kept");
    }

    pub fn named_values_are_kept_and_replaced(engine: &dyn Engine) {
        let mut store = engine.open();
        for value in ["1", "2"] {
            let step = Step { meta: vec![("clock".into(), value.into())], ..Step::default() };
            store.commit(&router(), vec![step]).unwrap_or_else(|e| panic!("{e}"));
        }
        drop(store);
        let store = engine.open();
        assert_eq!(store.meta("clock").unwrap_or_else(|e| panic!("{e}")).as_deref(), Some("2"));
        assert_eq!(store.meta("nothing").unwrap_or_else(|e| panic!("{e}")), None);
    }

    pub fn a_game_goes_on_after_a_restart_where_it_was(engine: &dyn Engine) {
        let mut store = engine.open();
        let before = play(&mut store, &["!new thaum", "!coins alice +3", "!gather 1 fire"], 0);
        drop(store);
        let mut store = engine.open();
        let reloaded =
            store.load(Registry::standard(), RouterConfig::default()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(table(&reloaded), table(&before), "the table is as it was");
        let after = play(&mut store, &["!coins alice +2"], 3);
        let coins = |router: &Router| {
            let players = table(router)["players"].as_object().cloned().unwrap_or_default();
            players.values().next().map(|sheet| sheet["coins"].clone()).unwrap_or_default()
        };
        assert_eq!(coins(&after), 5, "the new move applies on top of the old ones");
        drop(store);
        let store = engine.open();
        let journal = store.journal().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            journal.len(),
            store.entries(Some(0)).unwrap_or_else(|e| panic!("{e}")).len()
                + store.entries(None).unwrap_or_else(|e| panic!("{e}")).len()
        );
        assert!(journal.len() >= 4, "every move is in the journal: {}", journal.len());
        let loaded =
            store.load(Registry::standard(), RouterConfig::default()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(coins(&loaded), 5);
    }
}

/// Instantiates every test of `suite` for one engine.
macro_rules! instantiate {
    ($engine:ident, $make:expr) => {
        mod $engine {
            use super::*;
            #[test]
            fn the_outbox_keeps_order_and_forgets_only_what_was_sent() {
                suite::the_outbox_keeps_order_and_forgets_only_what_was_sent(&$make);
            }
            #[test]
            fn a_message_id_is_remembered_across_restarts() {
                suite::a_message_id_is_remembered_across_restarts(&$make);
            }
            #[test]
            fn private_destinations_round_trip_through_the_outbox() {
                suite::private_destinations_round_trip_through_the_outbox(&$make);
            }
            #[test]
            fn a_fleeting_step_is_answered_and_keeps_nothing() {
                suite::a_fleeting_step_is_answered_and_keeps_nothing(&$make);
            }
            #[test]
            fn named_values_are_kept_and_replaced() {
                suite::named_values_are_kept_and_replaced(&$make);
            }
            #[test]
            fn a_game_goes_on_after_a_restart_where_it_was() {
                suite::a_game_goes_on_after_a_restart_where_it_was(&$make);
            }
            #[test]
            fn a_table_behind_its_snapshot_restarts_to_where_it_was() {
                suite::a_table_behind_its_snapshot_restarts_to_where_it_was(&$make);
            }
            #[test]
            fn a_snapshot_edited_in_sql_is_rebuilt_from_the_journal_and_reported() {
                suite::a_snapshot_edited_in_sql_is_rebuilt_from_the_journal_and_reported(&$make);
            }
            #[test]
            fn a_journal_edited_in_sql_no_longer_matches_its_seal() {
                suite::a_journal_edited_in_sql_no_longer_matches_its_seal(&$make);
            }
            #[test]
            fn a_snapshot_whose_row_was_deleted_is_rebuilt_not_forgotten() {
                suite::a_snapshot_whose_row_was_deleted_is_rebuilt_not_forgotten(&$make);
            }
            #[test]
            fn a_history_row_edited_in_sql_is_caught_by_the_seal() {
                suite::a_history_row_edited_in_sql_is_caught_by_the_seal(&$make);
            }
            #[test]
            fn relayed_and_latest_lines_are_kept_across_a_restart() {
                suite::relayed_and_latest_lines_are_kept_across_a_restart(&$make);
            }
            #[test]
            fn sts_policies_and_appservice_transactions_are_kept() {
                suite::sts_policies_and_appservice_transactions_are_kept(&$make);
            }
            #[test]
            fn ratings_are_kept_and_an_edited_copy_is_found() {
                suite::ratings_are_kept_and_an_edited_copy_is_found(&$make);
            }
            #[test]
            fn verify_and_export_read_the_tables_and_find_an_edit() {
                suite::verify_and_export_read_the_tables_and_find_an_edit(&$make);
            }
            #[test]
            fn a_bad_outbox_row_is_set_aside_not_sent_and_the_good_ones_stay() {
                suite::a_bad_outbox_row_is_set_aside_not_sent_and_the_good_ones_stay(&$make);
            }
            #[test]
            fn a_snapshot_is_written_once_every_k_entries() {
                suite::a_snapshot_is_written_once_every_k_entries(&$make);
            }
            #[test]
            fn the_snapshot_written_per_action_does_not_grow_with_the_history() {
                suite::the_snapshot_written_per_action_does_not_grow_with_the_history(&$make);
            }
        }
    };
}

instantiate!(on_sqlite, sqlite());
instantiate!(on_postgres, postgres());
instantiate!(on_postgres_from_version_2, postgres_from_version_2());

/// A cluster whose database stop 31's spellbridge made: schema version 2
/// (fixtures/postgres_schema_v2.sql, its SQL from git), not migrated yet.
fn postgres_version_2() -> Postgres {
    let cluster = Postgres::start_new().unwrap_or_else(|e| panic!("{e}"));
    cluster
        .query(include_str!("fixtures/postgres_schema_v2.sql"))
        .unwrap_or_else(|e| panic!("version 2: {e}"));
    cluster
}

/// A version-2 database as today's spellbridge finds it: the lease's start migrates it.
fn postgres_from_version_2() -> Pg {
    let cluster = postgres_version_2();
    let (_, fence) = lease(&cluster, "spellbridge@suite");
    Pg { cluster, fence }
}

/// Each row of `sql` on an SQLite database, as a PostgreSQL `VALUES` tuple.
fn sqlite_rows(db: &std::path::Path, sql: &str) -> Vec<String> {
    use rusqlite::types::Value;
    let connection = rusqlite::Connection::open(db).unwrap_or_else(|e| panic!("{e}"));
    let mut statement = connection.prepare(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    let columns = statement.column_count();
    let rows = statement
        .query_map([], |row| {
            (0..columns)
                .map(|i| {
                    Ok(match row.get::<_, Value>(i)? {
                        Value::Null => "NULL".to_owned(),
                        Value::Integer(n) => n.to_string(),
                        Value::Text(text) => {
                            assert!(!text.contains("$v$"), "{text}");
                            format!("$v${text}$v$")
                        }
                        other => panic!("{sql}: {other:?}"),
                    })
                })
                .collect::<Result<Vec<_>, _>>()
                .map(|values| format!("({})", values.join(", ")))
        })
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    rows.collect::<Result<_, _>>().unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// The shape of the database at `url`: every column, index and constraint.
fn shape(url: &str) -> Vec<String> {
    runtime().block_on(async {
        let (client, connection) =
            tokio_postgres::connect(url, tokio_postgres::NoTls).await.unwrap_or_else(|e| panic!("{e}"));
        tokio::spawn(connection);
        let rows = client
            .query(
                "SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' '
                        || coalesce(column_default, '') || ' ' || is_identity
                   FROM information_schema.columns WHERE table_schema = 'public'
                 UNION ALL SELECT indexdef FROM pg_indexes WHERE schemaname = 'public'
                 UNION ALL SELECT conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid)
                   FROM pg_constraint WHERE connamespace = 'public'::regnamespace
                 ORDER BY 1",
                &[],
            )
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        rows.iter().map(|row| row.get(0)).collect()
    })
}

#[test]
fn a_version_2_database_with_rows_is_migrated_to_the_whole_shape_and_plays_on() {
    // What a daemon of stop 31 wrote: its rows are the rows today's SQLite store writes
    // for the same moves (the same columns), put into the version-2 tables.
    let source = sqlite();
    let mut store = source.open();
    let router = play(&mut store, &["!new thaum", "!coins alice +3", "!gather 1 fire"], 0);
    store
        .commit(&router, vec![Step { outbound: vec![message(7)], ..Step::default() }])
        .unwrap_or_else(|e| panic!("{e}"));
    let (journal, outbox) = (store.journal().unwrap_or_else(|e| panic!("{e}")), texts(&store));
    drop(store);
    let db = source.dir.path().join("spellbridge.db");
    let cluster = postgres_version_2();
    for (table, columns) in [
        (
            "journal",
            "table_id, sequence, kind, player, command, network, message_id, dice_seed, entry, events",
        ),
        ("seen_messages", "network, message_id"),
        ("outbox", "network, destination, text"),
        ("meta", "key, value"),
        ("dice_keys", "table_id, epoch, key"),
    ] {
        let order = if matches!(table, "journal" | "outbox") { "id" } else { "1" };
        let rows = sqlite_rows(&db, &format!("SELECT {columns} FROM {table} ORDER BY {order}"));
        assert!(!rows.is_empty() || table == "meta", "{table} has rows");
        if !rows.is_empty() {
            cluster
                .query(&format!("INSERT INTO {table} ({columns}) VALUES {}", rows.join(", ")))
                .unwrap_or_else(|e| panic!("{table}: {e}"));
        }
    }

    let (_lease, fence) = lease(&cluster, "spellbridge@upgraded");
    let pg = Pg { cluster, fence };
    let current = i64::from(spellbridge::leader::schema::current_version());
    assert_eq!(pg.number("SELECT version FROM spellbridge_schema"), current);
    let mut store = pg.open();
    assert_eq!(store.journal().unwrap_or_else(|e| panic!("{e}")), journal, "every journal row");
    assert_eq!(texts(&store), outbox, "the outbox, in order");
    let key = MessageKey { network: NetworkId::new("irc"), id: "m1".into() };
    assert!(store.seen(&key).unwrap_or_else(|e| panic!("{e}")), "the message ids seen");
    let loaded = load_checked(&store, Policy::Rebuild).unwrap_or_else(|e| panic!("loads: {e}"));
    assert_eq!(table(&loaded.router), table(&router), "the game as it was");
    let after = play(&mut store, &["!coins alice +2"], 3);
    assert_eq!(alice_coins(&after), 5, "and it plays on");
    store.write_snapshots(&after).unwrap_or_else(|e| panic!("{e}"));
    let report = audit::verify(&store, Registry::standard, None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.problems(), 0, "verify passes: {report:?}");
    drop(store);
    let loaded = load_checked(&pg.open(), Policy::Refuse).unwrap_or_else(|e| panic!("sound: {e}"));
    assert_eq!(alice_coins(&loaded.router), 5);

    // The whole shape: what a database made by today's spellbridge has.
    pg.cluster.query("CREATE DATABASE fresh").unwrap_or_else(|e| panic!("{e}"));
    let fresh = pg.cluster.url().replace("/spellbridge", "/fresh");
    drop(Store::open_postgres(&StoreUrl::parse(&fresh).unwrap_or_else(|e| panic!("{e}")), None));
    assert_eq!(shape(&pg.cluster.url()), shape(&fresh), "the migrated shape is today's");
}

/// The journal rows, outbox rows and message ids in the database, read by a store that
/// holds no lease.
fn counts(cluster: &Postgres) -> (usize, usize, bool) {
    let reader = Store::open_postgres(&url(cluster), None).unwrap_or_else(|e| panic!("{e}"));
    let journal = reader.journal().unwrap_or_else(|e| panic!("{e}")).len();
    let pending = reader.pending().unwrap_or_else(|e| panic!("{e}")).len();
    let key = MessageKey { network: NetworkId::new("irc"), id: "late".into() };
    (journal, pending, reader.seen(&key).unwrap_or_else(|e| panic!("{e}")))
}

/// A late commit: a new table, a message id and an outbox row.
fn late_commit(store: &mut Store) -> Result<(), StoreError> {
    let mut router = store.load(Registry::standard(), RouterConfig::default())?;
    let inbound =
        Inbound::new(NetworkId::new("irc"), RoomId::new("#late"), PlayerId::new("bob"), "!new thaum");
    let outbound = router.handle(&inbound, Timestamp(2_000));
    let step = Step {
        message: Some(MessageKey { network: NetworkId::new("irc"), id: "late".into() }),
        records: router.take_journal(),
        outbound,
        ..Step::default()
    };
    store.commit(&router, vec![step]).map(drop)
}

#[test]
fn a_commit_under_a_stale_epoch_is_fenced_and_writes_nothing() {
    let cluster = Postgres::start_new().unwrap_or_else(|e| panic!("{e}"));
    let (mut old_lease, old_fence) = lease(&cluster, "spellbridge@old");
    let mut old =
        Store::open_postgres(&url(&cluster), Some(old_fence.clone())).unwrap_or_else(|e| panic!("{e}"));
    play(&mut old, &["!new thaum", "!coins alice +3"], 0);
    let before = counts(&cluster);
    assert!(!before.2, "no late message id yet");
    // The old leader's lease ends (as if it ran out) and a new daemon takes it over.
    runtime().block_on(async {
        assert!(old_lease.release(old_fence.epoch()).await.unwrap_or_else(|e| panic!("{e}")));
    });
    let error = late_commit(&mut old).err().unwrap_or_else(|| panic!("a lapsed lease commits nothing"));
    assert!(matches!(error, StoreError::Fenced { source: FenceError::Lapsed { .. } }), "{error}");
    assert_eq!(counts(&cluster), before, "nothing written");
    let (_new_lease, new_fence) = lease(&cluster, "spellbridge@new");
    assert!(new_fence.epoch() > old_fence.epoch());
    let error = late_commit(&mut old).err().unwrap_or_else(|| panic!("a superseded leader commits nothing"));
    match &error {
        StoreError::Fenced { source: FenceError::Superseded { ours, current, holder } } => {
            assert_eq!(
                (*ours, *current, holder.as_str()),
                (old_fence.epoch(), new_fence.epoch(), "spellbridge@new")
            );
        }
        other => panic!("expected Superseded, got {other}"),
    }
    assert!(error.to_string().contains("stops acting and commits nothing"), "{error}");
    assert_eq!(counts(&cluster), before, "nothing written");
    // The new leader commits, and sees the old one's moves.
    let mut new = Store::open_postgres(&url(&cluster), Some(new_fence)).unwrap_or_else(|e| panic!("{e}"));
    late_commit(&mut new).unwrap_or_else(|e| panic!("the new leader commits: {e}"));
    let after = counts(&cluster);
    assert!(after.0 > before.0 && after.2, "{after:?}");
}

#[test]
fn a_store_that_holds_no_lease_commits_nothing() {
    let cluster = Postgres::start_new().unwrap_or_else(|e| panic!("{e}"));
    let mut reader = Store::open_postgres(&url(&cluster), None).unwrap_or_else(|e| panic!("{e}"));
    let error = late_commit(&mut reader).err().unwrap_or_else(|| panic!("no lease, no commit"));
    assert!(matches!(error, StoreError::NoLease { .. }), "{error}");
    assert!(!error.to_string().contains(&cluster.url()), "the URL with its password is never shown: {error}");
    assert_eq!(counts(&cluster), (0, 0, false));
}

#[test]
fn a_bad_password_is_refused_without_echoing_it() {
    let cluster = Postgres::start_new().unwrap_or_else(|e| panic!("{e}"));
    let good = cluster.url();
    let (who, rest) = good.split_once('@').unwrap_or_else(|| panic!("{good}"));
    let (user, _) = who.rsplit_once(':').unwrap_or_else(|| panic!("{good}"));
    let bad = format!("{user}:wrong-s3cret@{rest}");
    let error = Store::open_postgres(&StoreUrl::parse(&bad).unwrap_or_else(|e| panic!("{e}")), None)
        .err()
        .unwrap_or_else(|| panic!("a wrong password is refused"))
        .to_string();
    assert!(error.contains("connecting"), "{error}");
    assert!(!error.contains("wrong-s3cret"), "{error}");
}

/// The store is synchronous, PostgreSQL's client is not: a call from inside either kind
/// of tokio runtime must neither panic ("a runtime within a runtime") nor hang.
#[test]
fn the_postgres_store_works_when_called_inside_a_runtime() {
    let engine = postgres();
    for multi in [false, true] {
        let runtime = if multi {
            tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()
        } else {
            tokio::runtime::Builder::new_current_thread().enable_all().build()
        }
        .unwrap_or_else(|e| panic!("{e}"));
        runtime.block_on(async {
            let task = tokio::spawn(async move {});
            let mut store = engine.open();
            let step = Step { outbound: vec![message(usize::from(multi))], ..Step::default() };
            store.commit(&router(), vec![step]).unwrap_or_else(|e| panic!("{e}"));
            drop(store);
            tokio::time::timeout(Duration::from_secs(10), task)
                .await
                .unwrap_or_else(|e| panic!("{e}"))
                .unwrap_or_else(|e| panic!("{e}"));
        });
    }
    assert_eq!(texts(&engine.open()), ["message 0", "message 1"]);
}

/// One list of numbered migrations for both engines: a new database of either kind is at
/// the same version, recorded in SQLite's `user_version` and PostgreSQL's
/// `spellbridge_schema`.
#[test]
fn both_engines_record_the_same_schema_version() {
    let sqlite = sqlite();
    drop(sqlite.open());
    let pg = postgres();
    drop(pg.open());
    let on_sqlite = sqlite.number("PRAGMA user_version");
    let on_postgres = pg.number("SELECT version FROM spellbridge_schema");
    assert_eq!(on_sqlite, i64::from(spellbridge::store::schema::current_version()));
    assert_eq!(on_postgres, on_sqlite, "the same number names the same tables on both");
}

/// `store copy` from SQLite to PostgreSQL and back: every row goes, with its ids (the
/// snapshot covers the same rows, so `verify` passes on the copy and the games load as
/// they were), a destination with rows is refused unless told to replace them, and new
/// rows on the copy take new ids.
#[test]
fn a_store_copied_between_the_engines_verifies_and_plays_on() {
    let source = sqlite();
    let mut store = source.open();
    let router = play(&mut store, &["!new thaum", "!coins alice +3", "!gather 1 fire"], 0);
    store
        .keep_relayed(&[(
            NetworkId::new("matrix"),
            "$r".into(),
            Relayed { name: "n".into(), text: "t".into() },
        )])
        .unwrap_or_else(|e| panic!("{e}"));
    store.refresh_ratings(&Registry::standard(), &Default::default()).unwrap_or_else(|e| panic!("{e}")).ok();
    let step = Step { outbound: vec![message(7)], ..Step::default() };
    store.commit(&router, vec![step]).unwrap_or_else(|e| panic!("{e}"));
    let (journal, outbox) = (store.journal().unwrap_or_else(|e| panic!("{e}")), texts(&store));
    drop(store); // killed: the snapshot is behind its journal, as a live database's may be
    // The Matrix sync positions handled, which a daemon that takes over syncs on from.
    source.sql("INSERT INTO matrix_sync_positions VALUES ('matrix', 's72_9_0'), ('work', 's3_1')");
    let from = Place::Sqlite(source.dir.path().join("spellbridge.db"));
    let cluster = Postgres::start_new().unwrap_or_else(|e| panic!("{e}"));
    let to = Place::parse(&cluster.url()).unwrap_or_else(|e| panic!("{e}"));
    let copied = copy::copy(&from, &to, false).unwrap_or_else(|e| panic!("copies: {e}"));
    assert!(
        copied.contains(&("journal", journal.len()))
            && copied.contains(&("outbox", outbox.len()))
            && copied.contains(&("matrix_sync_positions", 2)),
        "{copied:?}"
    );
    assert_eq!(pg_rows(&cluster.url(), "matrix_sync_positions"), ["(matrix,s72_9_0)", "(work,s3_1)"]);

    let reader = Store::open_postgres(&url(&cluster), None).unwrap_or_else(|e| panic!("{e}"));
    let report = audit::verify(&reader, Registry::standard, None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.problems(), 0, "verify passes on the copy: {report:?}");
    assert_eq!(texts(&reader), outbox, "the outbox, in order");
    assert_eq!(reader.journal().unwrap_or_else(|e| panic!("{e}")), journal);
    assert_eq!(reader.relayed().unwrap_or_else(|e| panic!("{e}")).len(), 1);
    assert_eq!(
        reader.check_ratings(&Registry::standard()).unwrap_or_else(|e| panic!("{e}")),
        RatingsCheck::Match
    );
    let loaded = load_checked(&reader, Policy::Refuse).unwrap_or_else(|e| panic!("a sound copy: {e}"));
    assert_eq!(table(&loaded.router), table(&router), "the game as it was");
    drop(reader);

    // Again into the copy: refused, and nothing changes.
    let error =
        copy::copy(&from, &to, false).err().unwrap_or_else(|| panic!("a non-empty destination is refused"));
    assert!(matches!(error, CopyError::NotEmpty { .. }), "{error}");
    assert!(error.to_string().contains("--replace"), "says how: {error}");
    let password =
        cluster.url().rsplit_once('@').and_then(|(user, _)| user.rsplit_once(':').map(|(_, p)| p.to_owned()));
    assert!(password.is_some_and(|p| !error.to_string().contains(&p)), "never the password: {error}");
    copy::copy(&from, &to, true).unwrap_or_else(|e| panic!("--replace copies: {e}"));

    // The copy plays on: new journal rows take ids after the copied ones.
    let (_lease, fence) = lease(&cluster, "spellbridge@copy");
    let pg = Pg { cluster, fence };
    let mut store = pg.open();
    let after = play(&mut store, &["!coins alice +2"], 3);
    assert_eq!(alice_coins(&after), 5);
    drop(store);
    // A database a daemon leads on is not copied into, even with --replace.
    let error = copy::copy(&from, &to, true).err().unwrap_or_else(|| panic!("refused while a daemon leads"));
    assert!(
        error.to_string().contains("spellbridge@copy") && error.to_string().contains("stop it"),
        "{error}"
    );

    // And back to a new SQLite file, which verifies too.
    let back = sqlite();
    let back_place = Place::parse(&format!("sqlite:{}", back.dir.path().join("spellbridge.db").display()))
        .unwrap_or_else(|e| panic!("{e}"));
    let copied = copy::copy(&to, &back_place, false).unwrap_or_else(|e| panic!("copies back: {e}"));
    assert!(copied.contains(&("matrix_sync_positions", 2)), "{copied:?}");
    let kept = "SELECT count(*) FROM matrix_sync_positions
                 WHERE (network, next_batch) IN (VALUES ('matrix', 's72_9_0'), ('work', 's3_1'))";
    assert_eq!(back.number(kept), 2, "the sync positions, back in SQLite");
    let store = back.open();
    let report = audit::verify(&store, Registry::standard, None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.problems(), 0, "{report:?}");
    let loaded = load_checked(&store, Policy::Refuse).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(alice_coins(&loaded.router), 5);
}

/// What `store copy` is given is checked before anything is read, and a URL's password is
/// never repeated.
#[test]
fn a_copy_to_or_from_a_bad_place_is_refused_and_says_what_to_write() {
    for bad in ["", "spellbridge.db", "sqlite:", "mysql://u:hunter2@h/db", "postgres://u:hunter2@h:99999/db"]
    {
        let error = Place::parse(bad).err().unwrap_or_else(|| panic!("{bad:?} is refused"));
        assert!(!error.contains("hunter2"), "{error}");
        assert!(!error.is_empty());
    }
    assert!(Place::parse("mysql://u:p@h/db").err().unwrap_or_default().contains("sqlite:PATH"));
    let same = Place::parse("sqlite:/tmp/x.db").unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(copy::copy(&same, &same, false), Err(CopyError::Same)));
}

/// The commands over a PostgreSQL store: `store copy` into it, then `verify --store` and
/// `export --store` read it; nothing they print shows the password, and a second copy is
/// refused with what to do.
#[test]
fn the_commands_copy_verify_and_export_a_postgresql_store_without_its_password() {
    const BIN: &str = env!("CARGO_BIN_EXE_spellbridge");
    let run = |args: &[&str]| {
        let output = std::process::Command::new(BIN).args(args).output().unwrap_or_else(|e| panic!("{e}"));
        let text =
            format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        (output.status.success(), text)
    };
    let source = sqlite();
    let mut store = source.open();
    play(&mut store, &["!new thaum", "!coins alice +3"], 0);
    drop(store);
    let cluster = Postgres::start_new().unwrap_or_else(|e| panic!("{e}"));
    let url = cluster.url();
    let password =
        url.rsplit_once('@').and_then(|(user, _)| user.rsplit_once(':').map(|(_, p)| p.to_owned()));
    let password = password.unwrap_or_else(|| panic!("the harness's URL has a password"));
    let from = format!("sqlite:{}", source.dir.path().join("spellbridge.db").display());

    let (ok, copied) = run(&["store", "copy", "--from", &from, "--to", &url]);
    assert!(ok, "{copied}");
    assert!(
        copied.contains("journal: ") && copied.contains("spellbridge verify --store postgres://"),
        "{copied}"
    );
    let (ok, verified) = run(&["verify", "--store", &url]);
    assert!(ok, "{verified}");
    assert!(
        verified.contains("table 0 (thaum, ") && verified.contains("1 tables checked, 0 with problems"),
        "{verified}"
    );
    let (ok, exported) = run(&["export", "0", "--store", &url]);
    assert!(ok && exported.contains("!coins alice +3"), "{exported}");
    let (ok, missing) = run(&["export", "9", "--store", &url]);
    assert!(!ok && missing.contains("has no table 9"), "{missing}");
    let (ok, again) = run(&["store", "copy", "--from", &from, "--to", &url]);
    assert!(!ok && again.contains("is not empty") && again.contains("--replace"), "{again}");
    let (ok, bad) = run(&["verify", "--store", &format!("postgres://postgres:{password}@127.0.0.1/")]);
    assert!(!ok && bad.contains("--store"), "a URL without a database is refused: {bad}");
    let (ok, both) = run(&["verify", "--db", "x.db", "--store", &url]);
    assert!(!ok && both.contains("cannot be used with"), "{both}");
    for text in [copied, verified, exported, missing, again, bad, both] {
        assert!(!text.contains(&password), "the password is never printed: {text}");
    }
}

/// PostgreSQL stopped and started again under an open store (issue 34): a commit while it
/// is down fails at once with "the store is unreachable, try again shortly" and writes
/// nothing; once it is back, the same store commits again (on a new connection, fenced),
/// and a restart between two commits is not even seen.
#[test]
fn the_postgres_store_commits_again_after_the_database_restarts() {
    let mut cluster = Postgres::start_new().unwrap_or_else(|e| panic!("{e}"));
    let (_lease, fence) = lease(&cluster, "spellbridge@restart");
    let mut store = Store::open_postgres(&url(&cluster), Some(fence)).unwrap_or_else(|e| panic!("{e}"));
    let mut router = play(&mut store, &["!new thaum", "!coins alice +3"], 0);
    let before = counts(&cluster);
    let coins = |router: &mut Router, n: usize, text: &str| {
        let inbound = Inbound {
            message_id: Some(format!("c{n}")),
            ..Inbound::new(NetworkId::new("irc"), RoomId::new("#magic"), PlayerId::new("alice"), text)
        };
        let outbound = router.handle(&inbound, Timestamp(3_000));
        let records = router.take_journal();
        assert!(!records.is_empty(), "{text} is a move");
        let message = Some(MessageKey { network: NetworkId::new("irc"), id: format!("c{n}") });
        vec![Step { message, records, outbound, ..Step::default() }]
    };

    cluster.stop().unwrap_or_else(|e| panic!("{e}"));
    let steps = coins(&mut router, 1, "!coins alice +1");
    let asked = std::time::Instant::now();
    let error = store
        .commit(&router, steps)
        .err()
        .unwrap_or_else(|| panic!("nothing commits while PostgreSQL is down"));
    let waited = asked.elapsed();
    assert!(matches!(error, StoreError::Unreachable { .. }), "expected Unreachable, got {error}");
    let said = error.to_string();
    assert!(said.starts_with("the store is unreachable, try again shortly"), "{said}");
    assert!(!said.contains(&cluster.url()), "the URL with its password is never shown: {said}");
    assert!(waited < Duration::from_secs(10), "the answer came after {waited:?}");

    cluster.start().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(counts(&cluster), before, "nothing of the refused commit was written");
    // The router the players see is the store's again (as the engine reloads it after a
    // failed write), and the move is made anew.
    let mut router =
        store.load(Registry::standard(), RouterConfig::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(alice_coins(&router), serde_json::json!(3));
    let steps = coins(&mut router, 2, "!coins alice +1");
    store.commit(&router, steps).unwrap_or_else(|e| panic!("commits again after PostgreSQL is back: {e}"));

    // Restarted between two commits: the next one simply goes on a new connection.
    cluster.restart().unwrap_or_else(|e| panic!("{e}"));
    let steps = coins(&mut router, 3, "!coins alice +1");
    store.commit(&router, steps).unwrap_or_else(|e| panic!("commits after a restart between commits: {e}"));

    let reloaded = Store::open_postgres(&url(&cluster), None).unwrap_or_else(|e| panic!("{e}"));
    let router =
        reloaded.load(Registry::standard(), RouterConfig::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(alice_coins(&router), serde_json::json!(5), "3, and the two moves made after the outage");
    let seen = |id: &str| {
        reloaded
            .seen(&MessageKey { network: NetworkId::new("irc"), id: id.into() })
            .unwrap_or_else(|e| panic!("{e}"))
    };
    assert_eq!((seen("c1"), seen("c2"), seen("c3")), (false, true, true));
}

/// A store whose connection to `cluster` goes through a proxy that cuts it at a `COMMIT`,
/// with the lease taken directly, and a Thaum table where alice has 3 coins.
fn cut_at_commit(cluster: &Postgres) -> (Lease, CommitCut, Store, Router) {
    let (lease, fence) = lease(cluster, "spellbridge@cut");
    let proxy = CommitCut::start(([127, 0, 0, 1], cluster.port()).into()).unwrap_or_else(|e| panic!("{e}"));
    let through = cluster.url().replace(&format!(":{}/", cluster.port()), &format!(":{}/", proxy.port()));
    let through = StoreUrl::parse(&through).unwrap_or_else(|e| panic!("{e}"));
    let mut store = Store::open_postgres(&through, Some(fence)).unwrap_or_else(|e| panic!("{e}"));
    let router = play(&mut store, &["!new thaum", "!coins alice +3"], 0);
    (lease, proxy, store, router)
}

/// `!coins alice +1` as message `id`, committed on its own.
fn one_coin(store: &mut Store, router: &mut Router, id: &str) -> Result<Vec<i64>, StoreError> {
    let inbound = Inbound {
        message_id: Some(id.to_owned()),
        ..Inbound::new(
            NetworkId::new("irc"),
            RoomId::new("#magic"),
            PlayerId::new("alice"),
            "!coins alice +1",
        )
    };
    let outbound = router.handle(&inbound, Timestamp(3_000));
    let step = Step {
        message: Some(MessageKey { network: NetworkId::new("irc"), id: id.to_owned() }),
        records: router.take_journal(),
        outbound,
        ..Step::default()
    };
    store.commit(router, vec![step]).map(|queued| queued.into_iter().map(|q| q.id).collect())
}

/// How many journal rows message `id` has in the database.
fn journal_rows(cluster: &Postgres, id: &str) -> i64 {
    let sql = format!("SELECT count(*) FROM journal WHERE message_id = '{id}'");
    let answer = cluster.query(&sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    answer.trim().parse().unwrap_or_else(|e| panic!("{sql} answered {answer:?}: {e}"))
}

/// Alice's coins as the database has them, loaded by a store that holds no lease.
fn stored_coins(cluster: &Postgres) -> serde_json::Value {
    let reader = Store::open_postgres(&url(cluster), None).unwrap_or_else(|e| panic!("{e}"));
    alice_coins(&reader.load(Registry::standard(), RouterConfig::default()).unwrap_or_else(|e| panic!("{e}")))
}

/// The connection cut after PostgreSQL made the commit, before its answer came (issue
/// 34): the store asks what became of the transaction on a new connection, finds it
/// committed, and acknowledges the move once: not refused, not written twice.
#[test]
fn a_commit_made_whose_answer_was_cut_off_is_acknowledged_once() {
    let cluster = Postgres::start_new().unwrap_or_else(|e| panic!("{e}"));
    let (_lease, proxy, mut store, mut router) = cut_at_commit(&cluster);
    proxy.cut_next(1, AtCommit::Made);
    let ids = one_coin(&mut store, &mut router, "made")
        .unwrap_or_else(|e| panic!("a commit PostgreSQL made is acknowledged: {e}"));
    assert_eq!(proxy.cuts(), 1, "the COMMIT's answer was cut off");
    assert_eq!(journal_rows(&cluster, "made"), 1, "the move is in the journal exactly once");
    assert!(!ids.is_empty() && ids.iter().all(|id| *id > 0), "the outbox rows to send: {ids:?}");
    let listed = ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
    let kept = cluster
        .query(&format!("SELECT count(*) FROM outbox WHERE id IN ({listed})"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(kept.trim(), ids.len().to_string(), "the acknowledged ids are the committed outbox rows");
    assert_eq!(stored_coins(&cluster), serde_json::json!(4));
    // The store goes on, on a new connection.
    one_coin(&mut store, &mut router, "after").unwrap_or_else(|e| panic!("the next move commits: {e}"));
    assert_eq!((journal_rows(&cluster, "made"), stored_coins(&cluster)), (1, serde_json::json!(5)));
}

/// The connection cut before PostgreSQL got the `COMMIT` (issue 34): the transaction is
/// found aborted and the batch written again on a new connection; cut once more, the move
/// is refused with the try-again message and nothing of it is in the database.
#[test]
fn a_commit_not_made_is_written_again_once_and_then_refused_with_try_again() {
    let cluster = Postgres::start_new().unwrap_or_else(|e| panic!("{e}"));
    let (_lease, proxy, mut store, mut router) = cut_at_commit(&cluster);
    proxy.cut_next(1, AtCommit::Dropped);
    one_coin(&mut store, &mut router, "again")
        .unwrap_or_else(|e| panic!("written again on a new connection: {e}"));
    assert_eq!(proxy.cuts(), 1);
    assert_eq!((journal_rows(&cluster, "again"), stored_coins(&cluster)), (1, serde_json::json!(4)));

    proxy.cut_next(2, AtCommit::Dropped);
    let error = one_coin(&mut store, &mut router, "refused")
        .err()
        .unwrap_or_else(|| panic!("a commit PostgreSQL did not make, twice, is not acknowledged"));
    assert_eq!(proxy.cuts(), 3, "the commit and its one retry were both cut");
    assert!(matches!(error, StoreError::CommitUnknown { .. }), "{error}");
    let said = error.to_string();
    assert!(said.contains("it is not taken as done; try again shortly"), "{said}");
    assert!(!said.contains(&cluster.url()), "the URL with its password is never shown: {said}");
    assert_eq!(journal_rows(&cluster, "refused"), 0, "nothing of the refused move was written");
    assert_eq!(stored_coins(&cluster), serde_json::json!(4));
}

/// A move committed by a leader whose lease was taken over since, with its tables loaded
/// before (issue 34): its rows go out pipelined with the fence, the fence's answer is
/// judged before `COMMIT`, and the transaction is rolled back: nothing of it is in the
/// database, and the lease row's lock is let go (the next take-over, a key update that
/// waits for any commit's fence, goes through at once).
#[test]
fn a_stale_leaders_pipelined_move_writes_nothing() {
    let cluster = Postgres::start_new().unwrap_or_else(|e| panic!("{e}"));
    let (mut old_lease, old_fence) = lease(&cluster, "spellbridge@old");
    let mut old =
        Store::open_postgres(&url(&cluster), Some(old_fence.clone())).unwrap_or_else(|e| panic!("{e}"));
    let mut router = play(&mut old, &["!new thaum", "!coins alice +3"], 0);
    let before = counts(&cluster);
    runtime().block_on(async {
        assert!(old_lease.release(old_fence.epoch()).await.unwrap_or_else(|e| panic!("{e}")));
    });
    let (mut new_lease, new_fence) = lease(&cluster, "spellbridge@new");
    let error = one_coin(&mut old, &mut router, "late")
        .err()
        .unwrap_or_else(|| panic!("a superseded leader's move is not committed"));
    assert!(matches!(error, StoreError::Fenced { source: FenceError::Superseded { .. } }), "{error}");
    assert_eq!(counts(&cluster), before, "nothing of the move was written");
    assert_eq!(journal_rows(&cluster, "late"), 0);
    assert_eq!(stored_coins(&cluster), serde_json::json!(3));
    let renewed = runtime().block_on(async {
        tokio::time::timeout(Duration::from_secs(5), new_lease.renew(new_fence.epoch())).await
    });
    assert!(matches!(renewed, Ok(Ok(Renewal::Renewed))), "the new leader renews at once: {renewed:?}");
    let taken = runtime().block_on(async {
        assert!(new_lease.release(new_fence.epoch()).await.unwrap_or_else(|e| panic!("{e}")));
        let holder = Holder::new("spellbridge@next").unwrap_or_else(|e| panic!("{e}"));
        let settings = LeaseSettings::new(Duration::from_secs(600), Duration::from_secs(60))
            .unwrap_or_else(|e| panic!("{e}"));
        let mut next = Lease::open(&cluster.url(), holder, settings).await.unwrap_or_else(|e| panic!("{e}"));
        tokio::time::timeout(Duration::from_secs(5), next.acquire()).await
    });
    assert!(
        matches!(taken, Ok(Ok(Some(_)))),
        "the stale leader's rolled-back commit left no lock a take-over waits for: {taken:?}"
    );
}

/// Every row of `table` on PostgreSQL (the database `url`), as text, in order; or of the
/// rows a statement in parentheses returns.
fn pg_rows(url: &str, table: &str) -> Vec<String> {
    runtime().block_on(async {
        let (client, connection) =
            tokio_postgres::connect(url, tokio_postgres::NoTls).await.unwrap_or_else(|e| panic!("{e}"));
        tokio::spawn(connection);
        let sql = if table.starts_with('(') {
            format!("WITH t AS {table} SELECT t::text FROM t")
        } else {
            format!("SELECT t::text FROM {table} t ORDER BY 1")
        };
        client.query(&sql, &[]).await.unwrap_or_else(|e| panic!("{e}")).iter().map(|r| r.get(0)).collect()
    })
}

#[test]
fn a_copy_of_a_store_of_many_pages_is_whole_and_equal_both_ways() {
    // More rows than fit in one page (store::copy::PAGE, 1000) in several tables, and
    // counts that do not end on a page's edge.
    let cluster = Postgres::start_new().unwrap_or_else(|e| panic!("{e}"));
    drop(Store::open_postgres(&url(&cluster), None).unwrap_or_else(|e| panic!("{e}")));
    cluster
        .query(
            "INSERT INTO journal (table_id, sequence, kind, player, entry, events)
               SELECT i % 7, i, 'acted', 'irc/alice', '{\"n\": ' || i || ', \"pad\": \"' || repeat('x', i % 50) || '\"}', '[]'
               FROM generate_series(1, 2501) i;
             INSERT INTO seen_messages SELECT 'irc', 'm' || i FROM generate_series(1, 1000) i;
             INSERT INTO outbox (network, destination, text)
               SELECT 'irc', '{\"room\": \"#magic\"}', '\"line ' || i || '\"' FROM generate_series(1, 1001) i;
             DELETE FROM outbox WHERE id % 10 = 0;
             INSERT INTO history SELECT i % 3, i, 'entry ' || i FROM generate_series(0, 1998) i;
             INSERT INTO matrix_sync_positions SELECT 'matrix' || i, 's' || i || '_7' FROM generate_series(1, 1001) i;",
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let from = Place::parse(&cluster.url()).unwrap_or_else(|e| panic!("{e}"));
    let sqlite = sqlite();
    let middle = Place::Sqlite(sqlite.dir.path().join("spellbridge.db"));
    let copied = copy::copy(&from, &middle, false).unwrap_or_else(|e| panic!("to SQLite: {e}"));
    for expected in [
        ("journal", 2501),
        ("seen_messages", 1000),
        ("outbox", 901),
        ("history", 1999),
        ("matrix_sync_positions", 1001),
    ] {
        assert!(copied.contains(&expected), "{expected:?} in {copied:?}");
    }
    cluster.query("CREATE DATABASE back").unwrap_or_else(|e| panic!("{e}"));
    let back_url = cluster.url().replace("/spellbridge", "/back");
    let back = Place::parse(&back_url).unwrap_or_else(|e| panic!("{e}"));
    let again = copy::copy(&middle, &back, false).unwrap_or_else(|e| panic!("back to PostgreSQL: {e}"));
    assert_eq!(again, copied, "the same rows both ways");
    for table in ["journal", "seen_messages", "outbox", "history", "matrix_sync_positions"] {
        let (before, after) = (pg_rows(&cluster.url(), table), pg_rows(&back_url, table));
        assert!(before == after, "{table}: {} rows, {} after two copies", before.len(), after.len());
        let n = sqlite.number(&format!("SELECT count(*) FROM {table}"));
        assert_eq!(usize::try_from(n).ok(), Some(before.len()), "{table} in SQLite");
    }
    // New rows take ids after the copied ones.
    let next = pg_rows(
        &back_url,
        "(INSERT INTO journal (kind, entry, events) VALUES ('x', '{}', '[]') RETURNING id)",
    );
    assert_eq!(next, ["(2502)"]);
}

/// The Matrix sync position is written under the lease's fence (issue 34): a leader that
/// stood down — here, one paused between its own lease check and the write, which lands
/// after the take-over — cannot overwrite the position its successor handled; the write is
/// refused and says why. A store opened without a lease writes none.
#[test]
fn a_stood_down_leaders_sync_position_is_refused() {
    let cluster = Postgres::start_new().unwrap_or_else(|e| panic!("{e}"));
    let (mut old_lease, old_fence) = lease(&cluster, "spellbridge@old");
    let old = Store::open_postgres(&url(&cluster), Some(old_fence.clone())).unwrap_or_else(|e| panic!("{e}"));
    let old_positions = PositionStore::open(&old).unwrap_or_else(|e| panic!("{e}"));
    old_positions.keep("matrix", "s1_1").unwrap_or_else(|e| panic!("the leader keeps its position: {e}"));
    runtime().block_on(async {
        assert!(old_lease.release(old_fence.epoch()).await.unwrap_or_else(|e| panic!("{e}")));
    });
    let (_new_lease, new_fence) = lease(&cluster, "spellbridge@new");
    let new = Store::open_postgres(&url(&cluster), Some(new_fence)).unwrap_or_else(|e| panic!("{e}"));
    let new_positions = PositionStore::open(&new).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(new_positions.load("matrix"), Ok(Some("s1_1".to_owned())), "the new leader syncs on from it");
    new_positions.keep("matrix", "s9_4").unwrap_or_else(|e| panic!("the new leader keeps its position: {e}"));

    let error = old_positions
        .keep("matrix", "s5_2")
        .err()
        .unwrap_or_else(|| panic!("the old leader's position was written after the take-over"));
    assert!(error.contains("fenced") && error.contains("spellbridge@new"), "says why: {error}");
    assert!(!error.contains(&cluster.url()), "never the URL with its password: {error}");
    assert_eq!(new_positions.load("matrix"), Ok(Some("s9_4".to_owned())), "the newer position stands");
    old_positions
        .keep("other", "s1_0")
        .err()
        .unwrap_or_else(|| panic!("nor a network the new leader has not synced yet"));
    assert_eq!(new_positions.load("other"), Ok(None));

    let reader = Store::open_postgres(&url(&cluster), None).unwrap_or_else(|e| panic!("{e}"));
    let error = PositionStore::open(&reader)
        .unwrap_or_else(|e| panic!("{e}"))
        .keep("matrix", "s0_0")
        .err()
        .unwrap_or_else(|| panic!("a store without a lease keeps no position"));
    assert!(error.contains("holds no lease"), "{error}");
    assert_eq!(pg_rows(&cluster.url(), "matrix_sync_positions"), ["(matrix,s9_4)"]);
}
