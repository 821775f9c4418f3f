//! Fair, auditable dice (RULES T-10) through the console, the store and the `spellbridge`
//! binary: a table commits to a secret key when it opens and reveals it when it ends (a
//! Thaum table also at each season's end); `verify --table N --key K` checks a revealed
//! key; an unrevealed key reaches no chat, state or export; databases from before keys
//! still verify; and issue 13's seed attack predicts nothing.

use std::path::Path;
use std::process::{Command, Output};

use proptest::prelude::*;
use serde_json::Value;
use sha2::{Digest, Sha256};
use spellbridge::console::{Console, run_script, run_script_with_db};
use spellbridge_core::dice::{mix, unmix};

const BIN: &str = env!("CARGO_BIN_EXE_spellbridge");

/// Plays `script` through a console on the database at `db`: what it printed and the
/// tables' state.
fn run_with_db(db: &Path, seed: u64, script: &str) -> (String, Value) {
    run_script_with_db(script, seed, db).unwrap_or_else(|e| panic!("the script plays: {e:#}"))
}

/// `spellbridge <args…> --db <db>`.
fn spellbridge(db: &Path, args: &[&str]) -> Output {
    Command::new(BIN).args(args).arg("--db").arg(db).output().expect("spellbridge runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Every 64-hex-digit word written in backticks after `label` in `text`, in order.
fn hex_after(text: &str, label: &str) -> Vec<String> {
    text.match_indices(label)
        .filter_map(|(at, _)| {
            let rest = &text[at + label.len()..];
            let word = rest.split('`').nth(1)?;
            (word.len() == 64 && word.chars().all(|c| c.is_ascii_hexdigit())).then(|| word.to_owned())
        })
        .collect()
}

fn sha256_hex(key_hex: &str) -> String {
    let bytes: Vec<u8> = (0..key_hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&key_hex[i..i + 2], 16).expect("hex"))
        .collect();
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// The dice keys the store keeps, as hex.
fn stored_keys(db: &Path) -> Vec<String> {
    let connection = rusqlite::Connection::open(db).expect("sqlite opens");
    let mut statement =
        connection.prepare("SELECT key FROM dice_keys ORDER BY table_id, epoch").expect("query");
    statement.query_map([], |row| row.get(0)).expect("rows").collect::<Result<_, _>>().expect("keys")
}

/// A Duel played to its end; round 3 rolls a concentration check.
const DUEL: &str = "\
alice: !duel bob
bob: !accept
alice (dm): !cast surge fire fire wind water end
bob (dm): !cast surge water thunder earth fire end
alice (dm): !cast surge wind water thunder earth end
bob (dm): !cast surge fire earth earth fire end
alice (dm): !cast surge earth thunder water wind fire end
bob (dm): !cast surge thunder thunder earth earth end
alice (dm): !cast surge earth thunder water wind end
bob (dm): !cast surge wind wind fire fire end
";

#[test]
fn a_table_commits_to_its_key_at_the_start_and_reveals_it_at_the_end() {
    let (out, state) = run_script(DUEL, 4).expect("plays");
    let commitments = hex_after(&out, "Dice commitment: ");
    let keys = hex_after(&out, "Dice key revealed: ");
    assert_eq!((commitments.len(), keys.len()), (1, 1), "{out}");
    assert_eq!(sha256_hex(&keys[0]), commitments[0]);
    // The commitment comes before the first draw, the key after the game is won.
    let committed = out.find("Dice commitment").unwrap_or(usize::MAX);
    assert!(committed < out.find("concentration: rolled").unwrap_or(0), "{out}");
    assert!(out.find("Dice key revealed").unwrap_or(0) > out.rfind("wins").unwrap_or(usize::MAX), "{out}");
    assert_eq!(state["tables"][0]["dice"]["key"], keys[0].as_str());
    assert_eq!(state["tables"][0]["dice"]["commitment"], commitments[0].as_str());
}

#[test]
fn verify_accepts_the_revealed_key_and_refuses_a_wrong_one() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("games.db");
    let (out, _) = run_with_db(&db, 4, DUEL);
    let key = hex_after(&out, "Dice key revealed: ").pop().expect("the key is revealed");
    let right = spellbridge(&db, &["verify", "--table", "0", "--key", &key]);
    let report = stdout(&right);
    assert!(right.status.success(), "{report}");
    assert!(
        report.contains("key matches commitment") && report.contains("every recorded dice seed agrees"),
        "{report}"
    );

    // A well-formed key that is not this table's: its SHA-256 matches no commitment.
    let wrong = "5".repeat(64);
    let refused = spellbridge(&db, &["verify", "--table", "0", "--key", &wrong]);
    assert!(!refused.status.success());
    assert!(stdout(&refused).contains("WRONG KEY"), "{}", stdout(&refused));
    // Not a key at all: the error says what a key looks like.
    let garbled = spellbridge(&db, &["verify", "--table", "0", "--key", "12ab"]);
    assert!(!garbled.status.success());
    assert!(String::from_utf8_lossy(&garbled.stderr).contains("64 hex digits"));
}

#[test]
fn a_tampered_key_or_seed_fails_verify() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("games.db");
    run_with_db(&db, 4, DUEL);
    assert!(spellbridge(&db, &["verify"]).status.success());
    let connection = rusqlite::Connection::open(&db).expect("sqlite opens");
    // A recorded seed changed: the key no longer gives it.
    connection
        .execute(
            "UPDATE journal SET entry = json_set(entry, '$.dice_seed', 12345) WHERE kind = 'acted' AND sequence = 4",
            [],
        )
        .expect("tamper with a seed");
    let report = stdout(&spellbridge(&db, &["verify"]));
    assert!(report.contains("action 4 recorded dice seed 12345, but its key gives"), "{report}");
    // A running table's key swapped in the store: it does not match the commitment, so
    // verify fails and the table is not loaded with it.
    let running = dir.path().join("running.db");
    run_with_db(&running, 4, "alice: !new thaum\nbob: !join\n");
    let connection = rusqlite::Connection::open(&running).expect("sqlite opens");
    connection.execute("UPDATE dice_keys SET key = ?1", [&"7".repeat(64)]).expect("tamper with the key");
    let output = spellbridge(&running, &["verify"]);
    assert!(!output.status.success());
    assert!(stdout(&output).contains("does not match its commitment"), "{}", stdout(&output));
    let refused = Console::with_store(4, &running).err().map(|e| format!("{e:#}")).unwrap_or_default();
    assert!(refused.contains("does not match its commitment"), "{refused}");
}

#[test]
fn an_unrevealed_key_reaches_no_chat_state_or_export() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("games.db");
    let (out, state) =
        run_with_db(&db, 9, "alice: !new thaum\nbob: !join\n#clock +3d\nalice: !tornado 1 bob\n");
    let keys = stored_keys(&db);
    assert_eq!(keys.len(), 1, "one key for the running season");
    let key = &keys[0];
    let json = stdout(&spellbridge(&db, &["export", "0"]));
    let wiki = stdout(&spellbridge(&db, &["export", "0", "--format", "wiki"]));
    for (name, text) in
        [("chat", out.as_str()), ("state", &state.to_string()), ("export", &json), ("wiki", &wiki)]
    {
        assert!(!text.contains(key.as_str()), "the key shows in the {name}: {text}");
    }
    assert!(json.contains(&sha256_hex(key)), "the export shows the commitment: {json}");
    // Once the table ends, the key is everyone's.
    let (out, _) = run_with_db(&db, 9, "alice: !stop\n");
    assert_eq!(hex_after(&out, "Dice key revealed: "), std::slice::from_ref(key), "{out}");
    assert!(stdout(&spellbridge(&db, &["export", "0"])).contains(key.as_str()));
}

#[test]
fn a_thaum_season_rollover_reveals_the_key_and_commits_to_a_new_one() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("games.db");
    let (out, _) = run_with_db(
        &db,
        3,
        "alice: !new thaum\nbob: !join\n#clock +3d\nalice: !tornado 1 bob\n#clock +21d\n",
    );
    let commitments = hex_after(&out, "commitment: ");
    let revealed = hex_after(&out, "Dice key revealed: ");
    assert_eq!((commitments.len(), revealed.len()), (2, 1), "{out}");
    assert_eq!(sha256_hex(&revealed[0]), commitments[0], "season 1's key matches its commitment");
    assert_ne!(commitments[0], commitments[1], "season 2 has a new key");
    let season_over = out.find("season 1 closes").expect("the season closes");
    assert!(out.find("Dice key revealed").unwrap_or(0) > season_over, "{out}");
    // A restart plays on with season 2's key, and every draw verifies.
    let (out, _) = run_with_db(&db, 3, "#clock +3d\nbob: !tornado 1 alice\nalice: !stop\n");
    let last = hex_after(&out, "Dice key revealed: ");
    assert_eq!(last.len(), 1, "{out}");
    assert_eq!(sha256_hex(&last[0]), commitments[1]);
    let both = spellbridge(&db, &["verify", "--table", "0", "--key", &revealed[0], "--key", &last[0]]);
    assert!(both.status.success(), "{}", stdout(&both));
    assert!(stdout(&both).contains(&format!("{}, {}", commitments[0], commitments[1])), "{}", stdout(&both));
}

#[test]
fn a_table_whose_snapshot_is_lost_is_rebuilt_with_its_stored_key() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("games.db");
    let (_, before) = run_with_db(&db, 2, "alice: !duel bob\nbob: !accept\nalice (dm): !cast surge fire\n");
    let connection = rusqlite::Connection::open(&db).expect("sqlite opens");
    connection.execute("UPDATE tables SET snapshot = '{}' WHERE id = 0", []).expect("damage");
    let script = "alice (dm): !cast wind end\nbob (dm): !cast surge water water water end\n#clock +10m\n";
    let (_, rebuilt) = run_with_db(&db, 2, script);
    let (_, whole) =
        run_script(&format!("alice: !duel bob\nbob: !accept\nalice (dm): !cast surge fire\n{script}"), 2)
            .expect("one run");
    assert_eq!(before["tables"][0]["dice"], rebuilt["tables"][0]["dice"]);
    assert_eq!(rebuilt, whole);
}

#[test]
fn a_database_from_before_dice_keys_still_loads_verifies_and_plays_on() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("old.db");
    let fixture = include_str!("fixtures/seed_journal_v3.sql");
    rusqlite::Connection::open(&db).expect("sqlite opens").execute_batch(fixture).expect("the fixture loads");
    let verified = spellbridge(&db, &["verify"]);
    assert!(verified.status.success(), "{}", stdout(&verified));
    assert!(stdout(&verified).contains("2 tables checked, 0 with problems"), "{}", stdout(&verified));
    // The old Thaum table plays on with its old seed; no key is made for it.
    let (out, state) = run_with_db(&db, 4, "#clock +3d\nbob: !tornado 1 alice\n");
    assert!(out.contains("casts Tornado") && !out.contains("Dice commitment"), "{out}");
    assert!(state["tables"][1]["seed"].is_u64(), "{state}");
    assert!(stored_keys(&db).is_empty());
    let verified = spellbridge(&db, &["verify"]);
    assert!(verified.status.success(), "{}", stdout(&verified));
    // Asking for a key of an old table says there is none to check.
    let keyless = spellbridge(&db, &["verify", "--table", "0", "--key", &"a".repeat(64)]);
    assert!(stdout(&keyless).contains("from before dice keys"), "{}", stdout(&keyless));
}

/// What the attacker guessed the next seeds to be from one published seed: the
/// table seed recovered for every action number it might have been, and the next seed.
fn guesses(published: u64) -> Vec<u64> {
    (0..64u64).map(|n| mix((unmix(published) ^ mix(n)) ^ mix(n + 1))).collect()
}

/// What the attacker guessed alice's link code to be from one published seed and
/// their own codes: the master seed recovered for every table and action number the seed
/// might have come from (old scheme: seed = mix(master ^ mix(table)) mixed with the action,
/// code n = mix(master ^ mix(n)) % 10^8), then the next few codes.
fn code_guesses(published: u64) -> Vec<String> {
    let mut guesses = Vec::new();
    for action in 0..64u64 {
        let table_seed = unmix(published) ^ mix(action);
        for table in 0..4u64 {
            let master = unmix(table_seed) ^ mix(table);
            guesses.extend((1..8u64).map(|n| format!("{:08}", mix(master ^ mix(n)) % 100_000_000)));
        }
    }
    guesses
}

/// Two Tornados one after the other (consecutive action numbers), each publishing its seed;
/// eve asks for two link codes, then alice for one.
const TORNADOS: &str = "\
alice: !new thaum
bob: !join
alice: !gather 1 air
#clock +3d
alice: !tornado 1 bob
bob: !tornado 1 alice
eve (dm): !link
eve (dm): !link
alice (dm): !link
";

/// The link codes the console's output shows `who`, in order.
fn codes_to(out: &str, who: &str) -> Vec<String> {
    out.lines()
        .filter(|line| line.starts_with(&format!("[dm:{who}] Your link code is")))
        .filter_map(|line| line.split('`').nth(1).map(str::to_owned))
        .collect()
}

fn published_seeds(state: &Value) -> Vec<u64> {
    state["tables"][0]["state"]["history"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|entry| entry["seed"].as_u64())
        .collect()
}

#[test]
fn the_attack_would_have_worked_on_the_old_derivation() {
    // So the property below can fail: with old-style seeds and codes the guesses hit.
    let table_seed = 0x1234_5678_9abc_def0;
    let published = spellbridge_core::Dice::for_action(table_seed, 3).seed();
    assert!(guesses(published).contains(&spellbridge_core::Dice::for_action(table_seed, 4).seed()));
    let master = 0x0fed_cba9_8765_4321;
    let old_table_seed = mix(master ^ mix(1));
    let old_code = |n: u64| format!("{:08}", mix(master ^ mix(n)) % 100_000_000);
    let guessed = code_guesses(spellbridge_core::Dice::for_action(old_table_seed, 5).seed());
    assert!(guessed.contains(&old_code(3)), "the old scheme's third code is guessed");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Issue 13: from a Tornado's published seed (and their own link codes), the
    /// attacker's inversion gives neither the next Tornado's seed nor alice's link code,
    /// whatever the console's seed.
    #[test]
    fn published_seeds_and_codes_predict_neither_the_next_seed_nor_a_code(seed in any::<u64>()) {
        let (out, state) = run_script(TORNADOS, seed).expect("plays");
        let seeds = published_seeds(&state);
        prop_assert_eq!(seeds.len(), 2, "{}", out);
        prop_assert!(!guesses(seeds[0]).contains(&seeds[1]));
        let (eves, alices) = (codes_to(&out, "eve"), codes_to(&out, "alice"));
        prop_assert_eq!((eves.len(), alices.len()), (2, 1), "{}", out);
        for published in &seeds {
            let guessed = code_guesses(*published);
            prop_assert!(!guessed.contains(&alices[0]), "alice's code was predicted");
            // The same inversion does not explain eve's own codes either.
            prop_assert!(!eves.iter().all(|code| guessed.contains(code)));
        }
    }
}
