//! What the vendored matrix-sdk-crypto patch promises (vendor/README.md): a sync whose
//! one-time-key counts change nothing does not write the Olm account to the crypto store,
//! and one whose counts do change it still does. Checked on matrix-sdk's own SQLite
//! crypto store, whose every write of the account a trigger counts.

use std::collections::BTreeMap;
use std::path::Path;

use matrix_sdk_crypto::{DecryptionSettings, EncryptionSyncChanges, OlmMachine, TrustRequirement};
use spellbridge_adapters::matrix::matrix_sdk::SqliteCryptoStore;
use spellbridge_adapters::matrix::matrix_sdk::ruma::api::client::sync::sync_events::DeviceLists;
use spellbridge_adapters::matrix::matrix_sdk::ruma::{OneTimeKeyAlgorithm, UInt, device_id, user_id};

const DATABASE: &str = "matrix-sdk-crypto.sqlite3";

/// Starts counting the crypto store's writes of the account (`kv` row `account`).
fn count_account_writes(dir: &Path) {
    let db = rusqlite::Connection::open(dir.join(DATABASE)).expect("open the crypto store's database");
    db.execute_batch(
        "CREATE TABLE account_writes (n INTEGER NOT NULL);
         INSERT INTO account_writes VALUES (0);
         CREATE TRIGGER account_inserted AFTER INSERT ON kv WHEN NEW.key = 'account'
         BEGIN UPDATE account_writes SET n = n + 1; END;
         CREATE TRIGGER account_updated AFTER UPDATE ON kv WHEN NEW.key = 'account'
         BEGIN UPDATE account_writes SET n = n + 1; END;",
    )
    .expect("add the counting triggers");
}

fn account_writes(dir: &Path) -> u64 {
    let db = rusqlite::Connection::open(dir.join(DATABASE)).expect("open the crypto store's database");
    db.query_row("SELECT n FROM account_writes", [], |row| row.get(0)).expect("read the count")
}

/// One sync's encryption part: no events, only `count` unused signed one-time keys.
async fn sync(machine: &OlmMachine, count: u32) {
    let counts = BTreeMap::from([(OneTimeKeyAlgorithm::SignedCurve25519, UInt::from(count))]);
    let devices = DeviceLists::default();
    let changes = EncryptionSyncChanges {
        to_device_events: Vec::new(),
        changed_devices: &devices,
        one_time_keys_counts: &counts,
        unused_fallback_keys: Some(&[]),
        next_batch_token: None,
    };
    let settings = DecryptionSettings { sender_device_trust_requirement: TrustRequirement::Untrusted };
    machine.receive_sync_changes(changes, &settings).await.expect("the sync's changes are processed");
}

#[tokio::test]
async fn unchanged_key_counts_leave_the_olm_account_unwritten_and_changed_ones_write_it() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let store =
        SqliteCryptoStore::open(dir.path(), Some("a passphrase")).await.expect("open the crypto store");
    let machine = OlmMachine::with_store(user_id!("@bot:localhost"), device_id!("BOTDEVICE"), store, None)
        .await
        .expect("a new Olm machine");
    count_account_writes(dir.path());

    // The first counts make the account generate its one-time keys: written.
    sync(&machine, 0).await;
    let after_first = account_writes(dir.path());
    assert!(after_first >= 1, "the first key counts changed the account but it was not saved");

    // The same counts again, as the server sends them with every sync: nothing to save.
    for _ in 0..5 {
        sync(&machine, 0).await;
    }
    assert_eq!(account_writes(dir.path()), after_first, "unchanged counts rewrote the Olm account");

    // New counts (the server now holds 50 keys): the account changes and is saved.
    sync(&machine, 50).await;
    assert!(account_writes(dir.path()) > after_first, "changed counts were not saved");
}
