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
    Router::new(Registry::standard(), RouterOptions::default())
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
        store.commit(&router(), &[step]).expect("commit on a migrated database");
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
    let queued = store.commit(&router(), &[step]).expect("commit");
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
    store.commit(&router(), &[Step { message: Some(key.clone()), ..Step::default() }]).expect("commit");
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
    store.commit(&router(), &[Step { outbound: vec![dm.clone()], ..Step::default() }]).expect("commit");
    assert_eq!(store.pending().expect("pending")[0].outbound, dm);
}
