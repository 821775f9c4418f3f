//! Tests of what only the SQLite engine has: opening a file, its migrations, bad files,
//! locks and modes, and databases from older versions. What every engine does (the outbox,
//! redelivery, snapshots and seals, ratings, verify) is tested once on both engines in
//! `daemon/tests/store_engines.rs`; games played through the daemon in
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
        let message = Outbound {
            network: NetworkId::new("irc"),
            to: Destination::Room(RoomId::new("#magic")),
            message: RichText::new().text("message").into(),
        };
        let step = Step { outbound: vec![message], meta: vec![("k".into(), "v".into())], ..Step::default() };
        let router = Router::new(Registry::standard(), RouterConfig::default());
        store.commit(&router, vec![step]).expect("commit on a migrated database");
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
