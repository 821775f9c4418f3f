//! Tests of the store that need no game: opening, migrations, bad files, the outbox and
//! redelivery detection. Tests that play games through the store are in
//! `daemon/tests/store.rs`.

use rusqlite::Connection;
use spellbridge_core::{Destination, NetworkId, PlayerId, RichText, RoomId};

use super::*;

fn temp_db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("spellbridge.db");
    (dir, path)
}

fn open(path: &Path) -> Result<Store, StoreError> {
    Store::open(path, OpenMode::CreateIfMissing, Durability::Full)
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

#[test]
fn an_empty_file_is_migrated_to_the_current_version() {
    let (_dir, path) = temp_db();
    let store = open(&path).expect("opens");
    assert_eq!(schema::version(store.connection()).expect("version"), schema::current_version());
}

#[test]
fn each_earlier_schema_version_is_migrated() {
    for version in 0..schema::current_version() {
        let (_dir, path) = temp_db();
        {
            let mut connection = Connection::open(&path).expect("sqlite opens");
            schema::migrate_to(&mut connection, version).expect("older schema");
        }
        let store = open(&path).unwrap_or_else(|e| panic!("version {version} migrates: {e}"));
        assert_eq!(schema::version(store.connection()).expect("version"), schema::current_version());
        // The migrated schema works: the outbox (version 2) and meta (version 3) take rows.
        let mut store = store;
        let step =
            Step { outbound: vec![message(1)], meta: vec![("k".into(), "v".into())], ..Step::default() };
        store.commit(&router(), vec![step]).expect("commit on a migrated database");
    }
}

#[test]
fn a_database_from_a_newer_spellbridge_is_refused() {
    let (_dir, path) = temp_db();
    {
        let connection = Connection::open(&path).expect("sqlite opens");
        connection.pragma_update(None, "user_version", 99).expect("set version");
    }
    let error = open(&path).err().expect("refused");
    assert!(matches!(error, StoreError::Schema { .. }), "{error}");
    assert!(error.to_string().contains("newer than this spellbridge knows"), "{error}");
}

#[test]
fn a_corrupt_file_is_refused_with_its_name() {
    let (_dir, path) = temp_db();
    std::fs::write(
        &path,
        b"this is not a database, just some bytes that are long enough to look like a header",
    )
    .expect("write");
    let error = open(&path).err().expect("refused");
    assert!(matches!(error, StoreError::Corrupt { .. }), "{error}");
    assert!(error.to_string().contains(&path.display().to_string()), "{error}");
}

#[test]
fn a_missing_directory_or_file_is_refused_not_started_empty() {
    let (dir, _) = temp_db();
    let nowhere = dir.path().join("no/such/dir/x.db");
    assert!(matches!(open(&nowhere), Err(StoreError::NoDirectory { .. })));
    let missing = dir.path().join("missing.db");
    let error = Store::open(&missing, OpenMode::MustExist, Durability::Full).err().expect("refused");
    assert!(matches!(error, StoreError::Missing { .. }), "{error}");
    assert!(!missing.exists(), "MustExist must not create the file");
}

#[test]
fn a_database_locked_by_another_process_is_reported() {
    let (_dir, path) = temp_db();
    drop(open(&path).expect("create"));
    let holder = Connection::open(&path).expect("sqlite opens");
    holder.execute_batch("BEGIN EXCLUSIVE;").expect("take the lock");
    let error = open(&path).err().expect("refused while locked");
    assert!(matches!(error, StoreError::Locked { .. }), "{error}");
    holder.execute_batch("COMMIT;").expect("release");
    open(&path).expect("opens once released");
}

#[test]
fn the_outbox_keeps_order_and_forgets_only_what_was_sent() {
    let (_dir, path) = temp_db();
    let mut store = open(&path).expect("opens");
    let step = Step { outbound: (0..5).map(message).collect(), ..Step::default() };
    let queued = store.commit(&router(), vec![step]).expect("commit");
    assert_eq!(queued.len(), 5);
    store.sent(queued[0].id).expect("sent");
    store.sent(queued[2].id).expect("sent");
    drop(store);
    let store = open(&path).expect("reopens");
    let texts: Vec<String> =
        store.pending().expect("pending").into_iter().map(|q| q.outbound.message.text.plain()).collect();
    assert_eq!(texts, ["message 1", "message 3", "message 4"]);
}

#[test]
fn a_message_id_is_remembered_across_restarts() {
    let (_dir, path) = temp_db();
    let key = MessageKey { network: NetworkId::new("irc"), id: "abc".into() };
    let mut store = open(&path).expect("opens");
    assert!(!store.seen(&key).expect("seen"));
    store.commit(&router(), vec![Step { message: Some(key.clone()), ..Step::default() }]).expect("commit");
    assert!(store.seen(&key).expect("seen"), "seen as soon as committed");
    drop(store);
    let store = open(&path).expect("reopens");
    assert!(store.seen(&key).expect("seen"));
    let other = MessageKey { network: NetworkId::new("matrix"), id: "abc".into() };
    assert!(!store.seen(&other).expect("seen"), "ids are per network");
}

#[test]
fn private_destinations_round_trip_through_the_outbox() {
    let (_dir, path) = temp_db();
    let mut store = open(&path).expect("opens");
    let dm = Outbound {
        network: NetworkId::new("matrix"),
        to: Destination::Private(PlayerId::new("@alice:localhost")),
        message: RichText::new().bold("Fire").text(" and ").code("!cast").into(),
    };
    store.commit(&router(), vec![Step { outbound: vec![dm.clone()], ..Step::default() }]).expect("commit");
    assert_eq!(store.pending().expect("pending")[0].outbound, dm);
}

/// A store with a Thaum table (table 0) where alice has 3 coins, played through the router.
fn played(path: &Path) -> Store {
    let mut store = open(path).expect("opens");
    let mut router = store.load(Registry::standard(), RouterConfig::default()).expect("loads");
    let room = RoomId::new("#magic");
    for (n, text) in ["!new thaum", "!coins alice +3", "!gather 1 fire"].into_iter().enumerate() {
        let inbound = spellbridge_core::Inbound {
            message_id: Some(format!("m{n}")),
            ..spellbridge_core::Inbound::new(
                NetworkId::new("irc"),
                room.clone(),
                PlayerId::new("alice"),
                text,
            )
        };
        let outbound = router.handle(&inbound, spellbridge_core::Timestamp(1_000));
        let step = Step { records: router.take_journal(), outbound, ..Step::default() };
        store.commit(&router, vec![step]).expect("commit");
    }
    // A clean shutdown: the snapshot is current, as the tampering tests need.
    store.write_snapshots(&router).expect("snapshots written");
    store
}

/// The coins of table 0's one player (alice, under whatever id the router gives her).
fn alice_coins(router: &Router) -> serde_json::Value {
    let snapshot = router.table_snapshot(0).expect("table 0");
    let players = snapshot["state"]["players"].as_object().cloned().unwrap_or_default();
    players.values().next().map(|sheet| sheet["coins"].clone()).unwrap_or_default()
}

#[test]
fn a_snapshot_edited_in_sql_is_rebuilt_from_the_journal_and_reported() {
    let (_dir, path) = temp_db();
    let store = played(&path);
    let honest = alice_coins(&store.load(Registry::standard(), RouterConfig::default()).expect("loads"));
    assert_eq!(honest, 3);
    let loaded = store.load_checked(Registry::standard(), RouterConfig::default(), startup::Policy::Rebuild);
    assert!(loaded.expect("loads").rebuilt.is_empty(), "an untouched store is sound");
    store
        .connection()
        .execute("UPDATE tables SET snapshot = replace(snapshot, '\"coins\":3', '\"coins\":300')", [])
        .expect("tamper");
    let refused = store.load_checked(Registry::standard(), RouterConfig::default(), startup::Policy::Refuse);
    let error = refused.err().expect("--strict refuses");
    assert!(matches!(error, StoreError::Unsound { .. }), "{error}");
    assert!(error.to_string().contains("table 0: its snapshot does not match the checksum"), "{error}");
    let loaded = store
        .load_checked(Registry::standard(), RouterConfig::default(), startup::Policy::Rebuild)
        .expect("rebuilds");
    assert_eq!(alice_coins(&loaded.router), 3, "the journal's state, not the edit");
    assert_eq!(
        loaded.rebuilt,
        [startup::TableProblem { table: 0, problem: startup::Unsound::SnapshotEdited }]
    );
    // The rebuilt snapshot was written back: the next start finds it sound.
    let again = store.load_checked(Registry::standard(), RouterConfig::default(), startup::Policy::Refuse);
    assert!(again.expect("sound now").rebuilt.is_empty());
}

#[test]
fn a_journal_edited_in_sql_no_longer_matches_its_seal() {
    let (_dir, path) = temp_db();
    let store = played(&path);
    store
        .connection()
        .execute(
            "UPDATE journal SET events = '[\"forged\"]' WHERE kind = 'acted' AND command LIKE '!coins%'",
            [],
        )
        .expect("tamper");
    let loaded = store
        .load_checked(Registry::standard(), RouterConfig::default(), startup::Policy::Rebuild)
        .expect("rebuilds");
    assert_eq!(loaded.rebuilt[0].problem, startup::Unsound::JournalEdited);
}

#[test]
fn a_snapshot_whose_row_was_deleted_is_rebuilt_not_forgotten() {
    let (_dir, path) = temp_db();
    let store = played(&path);
    store.connection().execute("DELETE FROM tables", []).expect("delete");
    let loaded = store
        .load_checked(Registry::standard(), RouterConfig::default(), startup::Policy::Rebuild)
        .expect("rebuilds");
    assert_eq!(loaded.rebuilt[0].problem, startup::Unsound::NoSnapshot);
    assert_eq!(alice_coins(&loaded.router), 3);
}

#[test]
fn an_unsealed_table_from_an_older_database_is_checked_by_replay_then_sealed() {
    let (_dir, path) = temp_db();
    let store = played(&path);
    store.connection().execute("UPDATE tables SET seal = NULL, journal_digest = NULL", []).expect("unseal");
    let loaded = store
        .load_checked(Registry::standard(), RouterConfig::default(), startup::Policy::Refuse)
        .expect("an honest unsealed table loads");
    assert!(loaded.rebuilt.is_empty());
    let sealed: Option<String> =
        store.connection().query_row("SELECT seal FROM tables", [], |row| row.get(0)).expect("row");
    assert!(sealed.is_some(), "sealed on load");
    // Unsealed and edited: the replay finds the difference.
    store
        .connection()
        .execute(
            "UPDATE tables SET seal = NULL, snapshot = replace(snapshot, '\"coins\":3', '\"coins\":300')",
            [],
        )
        .expect("tamper");
    let loaded = store
        .load_checked(Registry::standard(), RouterConfig::default(), startup::Policy::Rebuild)
        .expect("rebuilds");
    assert!(
        matches!(&loaded.rebuilt[0].problem, startup::Unsound::Differs(path) if path.contains("coins")),
        "{:?}",
        loaded.rebuilt
    );
    assert_eq!(alice_coins(&loaded.router), 3);
}

#[test]
fn an_empty_file_or_another_programs_database_is_refused_and_left_alone() {
    let (dir, path) = temp_db();
    std::fs::write(&path, b"").expect("write");
    for mode in [OpenMode::MustExist, OpenMode::CreateIfMissing] {
        let error = Store::open(&path, mode, Durability::Full).err().expect("refused");
        assert!(matches!(error, StoreError::Empty { .. }), "{error}");
        assert!(error.to_string().contains("is empty (0 bytes)"), "{error}");
    }
    assert_eq!(std::fs::metadata(&path).expect("exists").len(), 0, "not written to");
    let foreign = dir.path().join("foreign.db");
    Connection::open(&foreign).expect("sqlite").execute_batch("CREATE TABLE notes (x);").expect("table");
    let error = Store::open(&foreign, OpenMode::MustExist, Durability::Full).err().expect("refused");
    assert!(matches!(error, StoreError::Foreign { .. }), "{error}");
}

#[test]
fn a_bad_outbox_row_is_set_aside_not_sent_and_the_good_ones_stay() {
    let (_dir, path) = temp_db();
    let mut store = open(&path).expect("opens");
    store.commit(&router(), vec![Step { outbound: vec![message(1)], ..Step::default() }]).expect("commit");
    store
        .connection()
        .execute("INSERT INTO outbox (network, destination, text) VALUES ('irc', 'not json', '{}')", [])
        .expect("bad row");
    store
        .connection()
        .execute(
            "INSERT INTO outbox (network, destination, text) VALUES ('irc', '{\"room\":\"\"}', '{}')",
            [],
        )
        .expect("row to nowhere");
    store.commit(&router(), vec![Step { outbound: vec![message(2)], ..Step::default() }]).expect("commit");
    assert_eq!(store.check_outbox(None).expect("checks").len(), 2, "verify sees both");
    let (queued, bad) = store.pending_checked().expect("start goes on");
    let texts: Vec<String> = queued.iter().map(|q| q.outbound.message.text.plain()).collect();
    assert_eq!(texts, ["message 1", "message 2"]);
    assert_eq!(bad.iter().map(|b| b.id).collect::<Vec<_>>(), [2, 3]);
    assert!(bad[0].reason.contains("destination does not read"), "{bad:?}");
    assert!(bad[1].reason.contains("names no room or player"), "{bad:?}");
    // Kept, as stored, and listed; no longer in the outbox.
    assert_eq!(store.set_aside_rows().expect("listed"), bad);
    let kept: String = store
        .connection()
        .query_row("SELECT destination FROM outbox_set_aside WHERE id = 2", [], |row| row.get(0))
        .expect("kept");
    assert_eq!(kept, "not json");
    assert!(store.check_outbox(None).expect("checks").is_empty());
    let unknown = store.check_outbox(Some(&[NetworkId::new("matrix")])).expect("checks");
    assert_eq!(unknown.len(), 2, "with a config, rows for unconfigured networks are problems: {unknown:?}");
}

#[cfg(unix)]
#[test]
fn the_database_and_its_wal_are_created_owner_only() {
    use std::os::unix::fs::PermissionsExt as _;
    let (_dir, path) = temp_db();
    let store = played(&path);
    for file in [path.clone(), PathBuf::from(format!("{}-wal", path.display()))] {
        let mode = std::fs::metadata(&file).expect("exists").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", file.display());
    }
    drop(store);
}

/// A database as the release before scoped player ids wrote it: bare IRC nicks as player
/// ids (made here by a router whose IRC network keeps identities bare), schema version 4.
fn database_with_bare_ids(path: &Path) {
    use crate::identity::Scope;
    use spellbridge_core::Inbound;
    let libera = NetworkId::new("libera");
    let scopes = [(libera.clone(), Scope::Bare), (NetworkId::new("matrix"), Scope::Global)].into();
    let mut old = Router::new(Registry::standard(), RouterConfig { scopes, ..RouterConfig::default() });
    let mut store = open(path).expect("opens");
    let say = |nick: &str, text: &str| {
        Inbound::new(libera.clone(), RoomId::new("#magic"), PlayerId::new(nick), text)
    };
    // A player called `fire`: a game word that must stay one in the commands.
    let t = spellbridge_core::Timestamp::CONSOLE_EPOCH;
    for (nick, text) in [
        ("alice", "!new thaum"),
        ("fire", "!join"),
        ("fire", "!gather 1 fire"),
        ("alice", "!coins fire +5"),
        ("alice", "!gm add fire"),
    ] {
        old.handle(&say(nick, text), t);
        let records = old.take_journal();
        store.commit(&old, vec![Step { records, ..Step::default() }]).expect("commit");
    }
    // A Matrix user speaks in another room (no table there): a Matrix id stays as it is.
    let matrix = Inbound::new(NetworkId::new("matrix"), RoomId::new("!m"), PlayerId::new("@bob:hs"), "!join");
    old.handle(&matrix, t);
    let records = old.take_journal();
    store.commit(&old, vec![Step { records, ..Step::default() }]).expect("commit");
    drop(store);
    let connection = Connection::open(path).expect("reopens");
    // The version before migration 5 (player ids), as the release before wrote it.
    connection.execute_batch("ALTER TABLE tables DROP COLUMN journal_upto").expect("no snapshot points yet");
    connection.pragma_update(None, "user_version", 4).expect("back to version 4");
}

#[test]
fn a_database_with_bare_player_ids_verifies_and_loads_with_their_network() {
    let (_dir, path) = temp_db();
    database_with_bare_ids(&path);
    let store = open(&path).expect("opens and migrates");
    assert!(
        player_ids::needs_upgrade(store.sqlite().expect("SQLite")).expect("meta"),
        "migration 4 marks a database with games"
    );
    let report = audit::verify(&store, Registry::standard, None).expect("verifies");
    assert_eq!(report.tables.len(), 1);
    assert_eq!(report.problems(), 0, "{report:?}");
    assert!(!player_ids::needs_upgrade(store.sqlite().expect("SQLite")).expect("meta"), "the mark is gone");
    let loaded = store.load_checked(Registry::standard(), RouterConfig::default(), startup::Policy::Refuse);
    let router = loaded.expect("loads, every snapshot sealed anew").router;
    let state = &router.snapshot()["tables"][0]["state"];
    let players: Vec<&String> = state["players"].as_object().expect("players").keys().collect();
    assert_eq!(players, ["libera:alice", "libera:fire"], "{state}");
    assert_eq!(state["players"]["libera:fire"]["coins"], 5, "{state}");
    assert_eq!(state["players"]["libera:fire"]["thaums"]["fire"], 1, "{state}");
    assert_eq!(state["game_masters"], serde_json::json!(["libera:alice", "libera:fire"]), "{state}");
    let commands: Vec<String> = store
        .entries(Some(0))
        .expect("entries")
        .into_iter()
        .filter_map(|e| match e {
            Entry::Acted { actor, command, .. } => Some(format!("{actor}: {command}")),
            _ => None,
        })
        .collect();
    assert_eq!(
        commands,
        [
            "libera:fire: join",
            "libera:fire: gather 1 fire",
            "libera:alice: coins libera:fire +5",
            "libera:alice: gm add libera:fire",
        ]
    );
    // A second load and verify find nothing left to do, and still agree.
    let report = audit::verify(&store, Registry::standard, None).expect("verifies again");
    assert_eq!(report.problems(), 0, "{report:?}");
}

#[test]
fn a_new_database_needs_no_player_id_upgrade() {
    let (_dir, path) = temp_db();
    let store = open(&path).expect("opens");
    assert!(!player_ids::needs_upgrade(store.sqlite().expect("SQLite")).expect("meta"));
}

/// A store with a Thaum table where alice, its game master, has given herself a coin
/// `actions` times: a history of `actions + 1` entries (her `!coins`, and `!new`'s none).
fn coins_given(path: &Path, actions: usize) -> (Store, Router) {
    let mut store = open(path).expect("opens");
    let mut router = store.load(Registry::standard(), RouterConfig::default()).expect("loads");
    let texts = std::iter::once("!new thaum").chain(std::iter::repeat_n("!coins alice +1", actions));
    for (n, text) in texts.enumerate() {
        let inbound = spellbridge_core::Inbound {
            message_id: Some(format!("m{n}")),
            ..spellbridge_core::Inbound::new(
                NetworkId::new("irc"),
                RoomId::new("#magic"),
                PlayerId::new("alice"),
                text,
            )
        };
        let outbound = router.handle(&inbound, spellbridge_core::Timestamp(1_000));
        let step = Step { records: router.take_journal(), outbound, ..Step::default() };
        store.commit(&router, vec![step]).expect("commit");
    }
    store.write_snapshots(&router).expect("snapshots written");
    (store, router)
}

fn snapshot_bytes(store: &Store) -> i64 {
    store.connection().query_row("SELECT length(snapshot) FROM tables", [], |row| row.get(0)).expect("a row")
}

#[test]
fn the_snapshot_written_per_action_does_not_grow_with_the_history() {
    // Issue 16, finding 3: each action rewrote the whole snapshot, history and all.
    let (_dir, short_path) = temp_db();
    let (short, _) = coins_given(&short_path, 10);
    let (_dir2, long_path) = temp_db();
    let (long, router) = coins_given(&long_path, 300);
    let (short_bytes, long_bytes) = (snapshot_bytes(&short), snapshot_bytes(&long));
    // The coins count has one more digit; nothing else may grow.
    assert!(long_bytes <= short_bytes + 4, "{short_bytes} bytes after 10 actions, {long_bytes} after 300");
    let rows: i64 =
        long.connection().query_row("SELECT count(*) FROM history", [], |row| row.get(0)).expect("count");
    assert_eq!(rows, 300, "one row per entry, each written once");
    // Loaded again, and as `verify` and `export` see it, the whole history is there.
    let loaded = long
        .load_checked(Registry::standard(), RouterConfig::default(), startup::Policy::Refuse)
        .expect("a sound store");
    assert!(loaded.rebuilt.is_empty());
    assert_eq!(loaded.router.table_snapshot(0), router.table_snapshot(0));
    let history = &router.table_snapshot(0).expect("table 0")["state"]["history"];
    assert_eq!(history.as_array().map(Vec::len), Some(300));
    let report = audit::verify(&long, Registry::standard, None).expect("verifies");
    assert_eq!(report.problems(), 0, "{report:?}");
    let exported = audit::export_json(&long, &Registry::standard(), 0).expect("exports").expect("table 0");
    assert_eq!(exported["table"]["state"]["history"], *history);
}

#[test]
fn a_history_row_edited_in_sql_is_caught_by_the_seal_and_verify() {
    let (_dir, path) = temp_db();
    let (store, _) = coins_given(&path, 5);
    store
        .connection()
        .execute("UPDATE history SET entry = replace(entry, '+1', '+9') WHERE position = 2", [])
        .expect("tamper");
    let report = audit::verify(&store, Registry::standard, None).expect("verifies");
    assert!(report.problems() > 0, "{report:?}");
    let refused = store.load_checked(Registry::standard(), RouterConfig::default(), startup::Policy::Refuse);
    let error = refused.err().expect("--strict refuses");
    assert!(error.to_string().contains("history rows"), "{error}");
    let loaded = store
        .load_checked(Registry::standard(), RouterConfig::default(), startup::Policy::Rebuild)
        .expect("rebuilds from the journal");
    let history = &loaded.router.table_snapshot(0).expect("table 0")["state"]["history"];
    assert_eq!(history[2]["command"], "!coins alice +1");
    let again = store.load_checked(Registry::standard(), RouterConfig::default(), startup::Policy::Refuse);
    assert!(again.expect("sound after the rebuild").rebuilt.is_empty());
}

/// The journal keeps each action's events as the table made them (issue 15), and
/// `verify` replays the actions and compares: an event edited in the database is found
/// even where the state it leads to is the same.
#[test]
fn verify_compares_the_events_replay_makes_with_the_journaled_ones() {
    let (_dir, path) = temp_db();
    let store = played(&path);
    let clean = audit::verify(&store, Registry::standard, None).expect("verifies");
    assert_eq!(clean.problems(), 0, "{clean:?}");
    let kept: String = store
        .connection()
        .query_row("SELECT entry FROM journal WHERE kind = 'acted' AND command LIKE '!coins%'", [], |row| {
            row.get(0)
        })
        .expect("the coins action");
    assert!(
        kept.contains(r#""events":[{"to":"table","event":{"#) && kept.contains(r#""kind":"coins_adjusted""#),
        "{kept}"
    );
    // The text says alice got 3 coins; the forged event says 30, the state stays 3.
    store
        .connection()
        .execute(
            r#"UPDATE journal SET entry = replace(entry, '"after":3,', '"after":30,') WHERE kind = 'acted' AND command LIKE '!coins%'"#,
            [],
        )
        .expect("tamper");
    let report = audit::verify(&store, Registry::standard, None).expect("verifies");
    let findings: Vec<String> = report.tables[0].findings.iter().map(ToString::to_string).collect();
    assert!(
        findings.iter().any(|f| f.contains("action 0 told other events on replay than the journal kept")),
        "{findings:#?}"
    );
    // A journal from before events (none kept) replays as it did.
    store
        .connection()
        .execute(r#"UPDATE journal SET entry = json_remove(entry, '$.events')"#, [])
        .expect("older form");
    let report = audit::verify(&store, Registry::standard, None).expect("verifies");
    let findings: Vec<String> = report.tables[0].findings.iter().map(ToString::to_string).collect();
    assert!(findings.iter().all(|f| f.starts_with("CHECKSUM")), "only the seal sees the edit: {findings:#?}");
}
