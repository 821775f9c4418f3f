//! Ratings from real journals: the scenario transcripts played through the console into a
//! database, read back in journal order.

use std::collections::BTreeMap;
use std::path::PathBuf;

use spellbridge_core::{NetworkId, PlayerId, Registry};

use super::*;
use crate::store::ratings::RatingsCheck;
use crate::store::{Durability, OpenMode, Store};

fn scenario(name: &str) -> (String, u64) {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/scenarios").join(format!("{name}.txt"));
    let script = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let seed = script
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("# seed:"))
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0);
    (script, seed)
}

/// Plays `scripts` in turn into one database (each continues the last) and returns it.
fn played(scripts: &[(String, u64)]) -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let db = dir.path().join("games.db");
    for (script, seed) in scripts {
        crate::console::run_script_with_db(script, *seed, &db).expect("the script plays");
    }
    let store = Store::open(&db, OpenMode::MustExist, Durability::Normal).expect("the database opens");
    (dir, store)
}

/// The duel_complete scenario with other players' names.
fn duel_between(challenger: &str, opponent: &str) -> (String, u64) {
    let (script, seed) = scenario("duel_complete");
    let renamed = script.replace("alice", "\u{1}").replace("bob", opponent).replace('\u{1}', challenger);
    (renamed, seed)
}

fn console_scopes() -> BTreeMap<NetworkId, Scope> {
    [(NetworkId::new(crate::console::CONSOLE_NETWORK), Scope::Bare)].into()
}

fn summary_of(journal: &[Entry]) -> Summary {
    derive(&Registry::standard(), console_scopes(), journal).expect("the journal derives")
}

fn duel(summary: &Summary, player: &str) -> DuelRecord {
    summary.players[&PlayerId::new(player)].duel.clone().unwrap_or_else(|| panic!("{player} played a duel"))
}

#[test]
fn a_finished_duel_is_rated_and_recorded() {
    let (_dir, store) = played(&[scenario("duel_complete")]);
    let summary = summary_of(&store.journal().expect("the journal reads"));
    let (alice, bob) = (duel(&summary, "alice"), duel(&summary, "bob"));
    // alice won (the scenario's end state), from 1500/350 each.
    assert_eq!((alice.games, alice.wins, alice.losses, alice.longest_streak), (1, 1, 0, 1));
    assert_eq!((bob.games, bob.wins, bob.losses, bob.longest_streak), (1, 0, 1, 0));
    let (a, b) = glicko::rate_game(Rating::default(), Rating::default(), Score::Win);
    assert_eq!((alice.rating, bob.rating), (a, b));
    assert_eq!(alice.favourite_wizard, "Apprentice");
    assert_eq!(summary.duel_leaderboard().first().map(|(p, _)| p.as_str()), Some("alice"));
}

#[test]
fn streaks_and_favourite_wizards_follow_the_games() {
    let (_dir, store) = played(&[
        duel_between("alice", "bob"),
        duel_between("alice", "carol"),
        duel_between("dave", "alice"),
        duel_between("alice", "bob"),
    ]);
    let summary = summary_of(&store.journal().expect("the journal reads"));
    let alice = duel(&summary, "alice");
    // The scenario's challenger wins: alice won, won, lost (to dave), won.
    assert_eq!((alice.games, alice.wins, alice.losses, alice.longest_streak), (4, 3, 1, 2));
    assert_eq!(summary.players[&PlayerId::new("alice")].games, 4);
    assert!(alice.rating.rating > duel(&summary, "bob").rating.rating);
}

#[test]
fn a_journal_replayed_in_two_parts_gives_what_it_gives_at_once() {
    let (_dir, store) =
        played(&[duel_between("alice", "bob"), scenario("thaum_full_loop"), duel_between("bob", "carol")]);
    let journal = store.journal().expect("the journal reads");
    let whole = summary_of(&journal);
    assert!(!whole.seasons.is_empty() && whole.players.len() >= 3, "the journal has games: {whole:?}");
    // Every split point, tables mid-game included.
    for split in [1, journal.len() / 3, journal.len() / 2, journal.len() - 1] {
        let registry = Registry::standard();
        let mut ledger = Ledger::new(console_scopes());
        ledger.extend(&registry, &journal[..split]).expect("the first part folds");
        let halfway = ledger.clone();
        ledger.extend(&registry, &journal[split..]).expect("the second part folds");
        assert_eq!(ledger.summary(), whole, "split at {split}");
        let mut resumed = halfway;
        resumed.extend(&registry, &journal[split..]).expect("a copy folds on");
        assert_eq!(resumed.summary(), whole, "split at {split}, resumed from a copy");
    }
}

#[test]
fn a_thaum_season_ranks_by_coins_then_thaums() {
    let (_dir, store) = played(&[scenario("thaum_full_loop")]);
    let summary = summary_of(&store.journal().expect("the journal reads"));
    let season = summary.seasons.first().expect("the loop ended a season");
    assert_eq!(season.season, 1);
    let ranked: Vec<(i128, i64)> = season.standings.iter().map(|s| (s.coins, s.thaums)).collect();
    let mut sorted = ranked.clone();
    sorted.sort_by(|x, y| y.0.cmp(&x.0).then(y.1.cmp(&x.1)));
    assert_eq!(ranked, sorted, "{season:?}");
    let first = &season.standings[0].player;
    assert_eq!(summary.players[first].thaum.as_ref().map(|t| t.won), Some(1));
    assert_eq!(summary.thaum_leaderboard().first().map(|(p, _)| *p), Some(first));
}

#[test]
fn linked_identities_count_as_one_player() {
    let (_dir, store) = played(&[duel_between("alice", "bob"), duel_between("carol", "bob")]);
    let mut journal = store.journal().expect("the journal reads");
    let separate = summary_of(&journal);
    assert_eq!(duel(&separate, "carol").games, 1);
    // carol's identity is then linked to alice (`!link`): her games are alice's.
    journal.push(Entry::Linked {
        network: NetworkId::new(crate::console::CONSOLE_NETWORK),
        identity: PlayerId::new("carol"),
        player: PlayerId::new("alice"),
    });
    let linked = summary_of(&journal);
    assert!(!linked.players.contains_key(&PlayerId::new("carol")), "{linked:?}");
    let alice = duel(&linked, "alice");
    assert_eq!((alice.games, alice.wins, alice.longest_streak), (2, 2, 2));
    // bob lost twice to the one player.
    assert_eq!(duel(&linked, "bob").games, 2);
    // Unlinked, they are two again.
    journal.push(Entry::Unlinked { player: PlayerId::new("alice") });
    assert_eq!(summary_of(&journal), separate);
}

#[test]
fn verify_catches_a_tampered_rating() {
    let (_dir, store) = played(&[duel_between("alice", "bob")]);
    let registry = Registry::standard();
    // The engine stored them live, in the commit that ended the duel.
    assert_eq!(store.check_ratings(&registry).expect("checks"), RatingsCheck::Match);
    let summary = store.refresh_ratings(&registry, &console_scopes()).expect("reads").expect("derives");
    assert_eq!(store.stored_ratings().expect("reads"), Some(summary));
    assert_eq!(store.check_ratings(&registry).expect("checks"), RatingsCheck::Match);
    let report = crate::store::audit::verify(&store, Registry::standard, None).expect("verifies");
    assert_eq!(report.ratings, RatingsCheck::Match);
    assert_eq!(report.problems(), 0, "{report:?}");

    // Someone gives alice 100 more rating points in the database.
    let text = store.meta(crate::store::ratings::META_KEY).expect("reads").expect("stored");
    let rating = duel(&store.stored_ratings().expect("reads").expect("stored"), "alice").rating.rating;
    let tampered =
        text.replacen(&format!("\"rating\":{rating}"), &format!("\"rating\":{}", rating + 100.0), 1);
    assert_ne!(tampered, text, "the rating was found in the stored text");
    store
        .connection()
        .execute("UPDATE meta SET value = ?1 WHERE key = 'ratings'", [&tampered])
        .expect("the row is changed");
    let report = crate::store::audit::verify(&store, Registry::standard, None).expect("verifies");
    assert_eq!(
        report.ratings,
        RatingsCheck::Differs(".summary.players.alice.duel.rating.rating".into()),
        "{report:?}"
    );
    assert_eq!(report.problems(), 1);
}

#[test]
fn the_printed_ratings_list_the_leader_first() {
    let (_dir, store) = played(&[duel_between("alice", "bob"), scenario("thaum_full_loop")]);
    let summary = summary_of(&store.journal().expect("the journal reads"));
    let text = report::text(&summary);
    let first = text.lines().nth(1).unwrap_or_default();
    assert!(first.starts_with("  1. alice  1662 ±290  1 duel: 1 won, 0 lost, 0 drawn"), "{text}");
    assert!(text.contains("table 1 season 1: "), "{text}");
}

/// The journal with every table's events left out, as a journal from before events.
fn without_events(journal: &[Entry]) -> Vec<Entry> {
    let mut old = journal.to_vec();
    for entry in &mut old {
        if let Entry::Opened { events, .. } | Entry::Acted { events, .. } | Entry::Fired { events, .. } =
            entry
        {
            events.clear();
        }
    }
    old
}

#[test]
fn the_journaled_events_tell_what_replaying_the_tables_tells() {
    let names = [
        "duel_complete",
        "duel_interruption",
        "duel_full_counter",
        "duel_void",
        "duel_pool_dry",
        "duel_bad_input",
        "thaum_full_loop",
        "thaum_bad_input",
        "lobby_and_bad_input",
    ];
    let (mut duels, mut seasons) = (0, 0);
    for name in names {
        let (_dir, store) = played(&[scenario(name)]);
        let journal = store.journal().expect("the journal reads");
        let read = summary_of(&journal);
        assert_eq!(read, summary_of(&without_events(&journal)), "{name}");
        // Events and replay mixed (an old journal that went on under a newer spellbridge).
        let half = journal.len() / 2;
        let mut mixed = without_events(&journal[..half]);
        mixed.extend_from_slice(&journal[half..]);
        assert_eq!(summary_of(&mixed), read, "{name}, its first half without events");
        duels += read.players.values().filter_map(|r| r.duel.as_ref()).map(|d| d.games).sum::<u32>();
        seasons += read.seasons.len();
    }
    assert!(duels >= 10 && seasons >= 1, "the scenarios end games: {duels} duel seats, {seasons} seasons");
}

#[test]
fn the_ratings_are_stored_live_with_the_game_that_changed_them() {
    let (_dir, store) = played(&[duel_between("alice", "bob"), scenario("thaum_full_loop")]);
    let derived = summary_of(&store.journal().expect("the journal reads"));
    assert_eq!(store.stored_ratings().expect("reads"), Some(derived.clone()));
    // Each ending's commit kept them: the row that ended the duel is in the same
    // transaction as the ratings that count it (the duel's alone, before the season).
    assert_eq!(derived.seasons.len(), 1);
    assert_eq!(duel(&derived, "alice").games, 1);
    let registry = Registry::standard();
    assert_eq!(store.check_ratings(&registry).expect("checks"), RatingsCheck::Match);
}

#[test]
fn stats_and_top_answer_from_the_ratings_folded_on_load_and_live() {
    use spellbridge_core::{Inbound, RoomId, Timestamp};
    let (_dir, store) = played(&[duel_between("alice", "bob")]);
    let options = crate::console::Console::options(1);
    let mut router = store.load(Registry::standard(), options).expect("the database loads");
    let mut ask = |who: &str, text: &str| -> String {
        let network = NetworkId::new(crate::console::CONSOLE_NETWORK);
        let inbound =
            Inbound::new(network, RoomId::new(crate::console::CONSOLE_ROOM), PlayerId::new(who), text);
        let out = router.handle(&inbound, Timestamp::CONSOLE_EPOCH);
        out.iter().map(|o| o.message.text.plain()).collect::<Vec<_>>().join("\n")
    };
    assert_eq!(
        ask("alice", "!stats"),
        "alice: alice has played 1 game and won 1. Duel: rating 1662 ± 290 after 1 duel (1 won, 0 lost); \
         favourite wizard Apprentice; longest winning streak 1."
    );
    assert!(
        ask("alice", "!stats bob").starts_with("alice: bob has played 1 game and won 0. Duel: rating 1338")
    );
    assert!(ask("bob", "!stats carol").contains("I know nobody called `carol`"));
    assert_eq!(
        ask("bob", "!top"),
        "bob: Duel ratings (Glicko-2, 2 rated): 1. alice 1662 ± 290 (1–0); 2. bob 1338 ± 290 (0–1)."
    );
    assert!(ask("bob", "!top thaum").contains("No Thaum season has ended yet"));
    assert!(ask("bob", "!top chess").contains("the leaderboards are duel and thaum"));
}
