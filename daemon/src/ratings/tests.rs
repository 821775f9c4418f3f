//! Ratings from real journals: the scenario transcripts played through the console into a
//! database, read back in journal order.

use std::collections::BTreeMap;

use spellbridge_core::{NetworkId, PlayerId, Registry};

use super::*;
use crate::console::scenario;
use crate::store::ratings::RatingsCheck;
use crate::store::{Durability, OpenMode, Store};

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

fn duel(summary: &Summary, player: &str) -> ChallengeRecord {
    summary.players[&PlayerId::new(player)]
        .challenges
        .get("duel")
        .cloned()
        .unwrap_or_else(|| panic!("{player} played a duel"))
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
    assert_eq!(alice.favourite, "Apprentice");
    // One rated Duel is fewer than MIN_RATED_GAMES: not on the leaderboard yet.
    assert!(summary.challenge_leaderboard("duel").is_empty(), "{summary:?}");
    let (_dir, store) =
        played(&[duel_between("alice", "bob"), duel_between("alice", "bob"), duel_between("alice", "bob")]);
    let summary = summary_of(&store.journal().expect("the journal reads"));
    assert_eq!(summary.challenge_leaderboard("duel").first().map(|(p, _)| p.as_str()), Some("alice"));
}

#[test]
fn streaks_and_favourites_follow_the_games() {
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
    assert_eq!(season.round, 1);
    let ranked: Vec<(i128, i64)> = season.standings.iter().map(|s| (s.score, s.tiebreak)).collect();
    let mut sorted = ranked.clone();
    sorted.sort_by(|x, y| y.0.cmp(&x.0).then(y.1.cmp(&x.1)));
    assert_eq!(ranked, sorted, "{season:?}");
    // carol wins (22 coins), and alice, the game master, gave her 4 (`!coins carol +4`):
    // the season is listed but not rated (`unrated`).
    let first = &season.standings[0].player;
    assert_eq!(first.as_str(), "carol");
    assert_eq!(season.unrated, Some(Unrated::GameMasterCoins));
    assert_eq!((summary.players[first].open.get("thaum"), summary.players[first].unrated), (None, 1));
    assert!(summary.open_leaderboard("thaum").is_empty());
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
        RatingsCheck::Differs(".summary.players.alice.challenges.duel.rating.rating".into()),
        "{report:?}"
    );
    assert_eq!(report.problems(), 1);
}

#[test]
fn the_printed_ratings_list_the_leader_first() {
    let (_dir, store) = played(&[
        duel_between("alice", "bob"),
        duel_between("alice", "bob"),
        duel_between("alice", "bob"),
        scenario("thaum_full_loop"),
    ]);
    let summary = summary_of(&store.journal().expect("the journal reads"));
    let text = report::text(&summary);
    let first = text.lines().nth(1).unwrap_or_default();
    assert!(first.starts_with("  1. alice  "), "{text}");
    assert!(first.contains("3 games: 3 won, 0 lost, 0 drawn"), "{text}");
    assert!(text.contains("thaum table 3 round 1: "), "{text}");
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
        duels += read.players.values().filter_map(|r| r.challenges.get("duel")).map(|d| d.games).sum::<u32>();
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
        "bob: No player has 3 rated Duels yet: `!top` lists a player once they have. `!stats` shows everyone's."
    );
    assert!(ask("bob", "!top thaum").contains("No Thaum season has ended yet"));
    // Every rated game is named (the shipped ones: Duel, Nim and Thaum).
    let unknown = ask("bob", "!top chess");
    assert!(unknown.contains("`chess` is not a leaderboard; the leaderboards are duel, "), "{unknown}");
    assert!(["nim", "thaum"].iter().all(|game| unknown.contains(game)), "{unknown}");
    // A hostile word is echoed shown as names are: no text reversed, no endless line.
    let hostile = ask("bob", &format!("!top \u{202e}{}", "x".repeat(300)));
    assert!(!hostile.contains('\u{202e}') && hostile.contains("\\u{202e}"), "{hostile}");
    assert!(!hostile.contains(&"x".repeat(100)), "{hostile}");
}

/// A console script of its own lines.
fn script(lines: &str) -> (String, u64) {
    (lines.to_owned(), 1)
}

/// bob accepts alice's challenge and concedes after `wait` (a `#clock` line, or none).
fn conceded_after(wait: &str) -> (String, u64) {
    script(&format!("alice: !duel bob\nbob: !accept\n{wait}\nbob: !concede\n"))
}

fn record(summary: &Summary, player: &str) -> Record {
    summary.players.get(&PlayerId::new(player)).cloned().unwrap_or_else(|| panic!("{player}: {summary:?}"))
}

/// What the router answers `who` saying `text` on the console, over the database `store`.
fn answer(store: &Store, who: &str, text: &str) -> String {
    use spellbridge_core::{Inbound, RoomId, Timestamp};
    let mut router =
        store.load(Registry::standard(), crate::console::Console::options(1)).expect("the database loads");
    let network = NetworkId::new(crate::console::CONSOLE_NETWORK);
    let inbound = Inbound::new(network, RoomId::new(crate::console::CONSOLE_ROOM), PlayerId::new(who), text);
    let out = router.handle(&inbound, Timestamp::CONSOLE_EPOCH);
    out.iter().map(|o| o.message.text.plain()).collect::<Vec<_>>().join("\n")
}

#[test]
fn a_duel_conceded_within_a_minute_of_its_start_is_unrated() {
    // Six quick concessions by an alt: no rating, no record, no place on `!top`.
    let quick = || conceded_after("#clock +59s");
    let (_dir, store) = played(&[quick(), quick(), quick(), quick(), quick(), quick()]);
    let summary = summary_of(&store.journal().expect("the journal reads"));
    let alice = record(&summary, "alice");
    assert_eq!(
        (alice.challenges.contains_key("duel"), alice.games, alice.wins, alice.unrated),
        (false, 0, 0, 6),
        "{alice:?}"
    );
    assert!(summary.challenge_leaderboard("duel").is_empty(), "{summary:?}");
    assert!(answer(&store, "bob", "!top").contains("Nobody has a Duel rating yet"));
    assert_eq!(
        answer(&store, "bob", "!stats alice"),
        "bob: alice has played 0 games and won 0. Unrated: 6 games (a Duel against a guest or conceded within a \
         minute, a Thaum season alone or won with a game master's coins), not counted toward `!top`."
    );
    // A minute or more after the start, a concession is a rated game.
    let slow = || conceded_after("#clock +60s");
    let (_dir, store) = played(&[slow(), slow(), slow()]);
    let summary = summary_of(&store.journal().expect("the journal reads"));
    let alice = record(&summary, "alice");
    assert_eq!((alice.challenges.get("duel").map(|d| d.games), alice.unrated), (Some(3), 0), "{alice:?}");
    assert!(answer(&store, "bob", "!top").starts_with("bob: Duel ratings (Glicko-2, 2 rated): 1. alice "));
}

#[test]
fn a_duel_against_a_guest_is_unrated_whichever_side_the_guest_is() {
    use spellbridge_core::{Inbound, RoomId, Timestamp};
    let (_dir, store) = played(&[script("alice: !help\n")]);
    let mut router =
        store.load(Registry::standard(), crate::console::Console::options(1)).expect("the database loads");
    let start = Timestamp::CONSOLE_EPOCH;
    let mut say = |who: &str, guest: bool, text: &str, at: i64| {
        let network = NetworkId::new(crate::console::CONSOLE_NETWORK);
        let inbound = Inbound {
            guest,
            verified: !guest,
            ..Inbound::new(network, RoomId::new(crate::console::CONSOLE_ROOM), PlayerId::new(who), text)
        };
        let out = router.handle(&inbound, Timestamp(start.0 + at));
        out.iter().map(|o| o.message.text.plain()).collect::<Vec<_>>().join("\n")
    };
    // An hour between the start and the concession: only the guest makes these unrated.
    say("alice", false, "!duel bob", 0);
    say("bob", true, "!accept", 1);
    assert!(say("bob", true, "!concede", 3600).contains("alice"), "the duel ended");
    say("bob", true, "!duel alice", 4000);
    say("alice", false, "!accept", 4001);
    say("alice", false, "!concede", 8000);
    // Neither a guest: rated.
    say("alice", false, "!duel bob", 9000);
    say("bob", false, "!accept", 9001);
    say("bob", false, "!concede", 13000);
    let summary = router.ratings().clone();
    for player in ["alice", "bob"] {
        let r = record(&summary, player);
        assert_eq!((r.unrated, r.challenges.get("duel").map(|d| d.games)), (2, Some(1)), "{player}: {r:?}");
    }
}

/// `alice` opens a Thaum table, `joined` join it, then `then` (GM commands), then `!stop`.
fn thaum_stopped(joined: &[&str], then: &str) -> (String, u64) {
    let joins: String = joined.iter().map(|p| format!("{p}: !join\n")).collect();
    script(&format!("alice: !new thaum\n{joins}{then}alice: !stop\n"))
}

#[test]
fn a_thaum_season_alone_or_won_with_a_game_masters_coins_is_unrated() {
    let cases = [
        (thaum_stopped(&[], "alice: !coins alice +50\n"), Some(Unrated::LonePlayer)),
        (thaum_stopped(&["bob"], "alice: !coins alice +50\n"), Some(Unrated::GameMasterCoins)),
        // The game master gives coins to another player, who wins with them.
        (thaum_stopped(&["bob"], "alice: !coins bob +50\n"), Some(Unrated::GameMasterCoins)),
        // Coins given to a player who does not win (bob, back to 0; alice first by name),
        // or taken: the season is rated.
        (
            thaum_stopped(&["bob"], "alice: !coins bob +5\nalice: !coins bob -5\nalice: !coins alice -1\n"),
            None,
        ),
        (thaum_stopped(&["bob"], ""), None),
    ];
    for ((text, seed), expected) in cases {
        let (_dir, store) = played(&[(text.clone(), seed)]);
        let journal = store.journal().expect("the journal reads");
        let summary = summary_of(&journal);
        let season = summary.seasons.first().unwrap_or_else(|| panic!("a season ended: {text}"));
        assert_eq!(season.unrated, expected, "{text}");
        // Read from the events or replayed from the dice seeds, the same.
        assert_eq!(summary_of(&without_events(&journal)), summary, "{text}");
        let alice = record(&summary, "alice");
        assert_eq!(alice.open.contains_key("thaum"), expected.is_none(), "{text}: {alice:?}");
        assert_eq!(alice.unrated, u32::from(expected.is_some()), "{text}: {alice:?}");
    }
    // Three seasons alone: `!top thaum` still lists nobody.
    let lone = || thaum_stopped(&[], "alice: !coins alice +50\n");
    let (_dir, store) = played(&[lone(), lone(), lone()]);
    assert!(answer(&store, "alice", "!top thaum").contains("No Thaum season has ended yet"));
}

#[test]
fn three_rated_games_put_a_player_on_top() {
    let slow = || conceded_after("#clock +2m");
    let (_dir, store) = played(&[slow(), slow()]);
    assert!(answer(&store, "bob", "!top").contains("No player has 3 rated Duels yet"));
    let (_dir, store) = played(&[slow(), slow(), slow()]);
    let summary = summary_of(&store.journal().expect("the journal reads"));
    let board: Vec<&str> = summary.challenge_leaderboard("duel").iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(board, ["alice", "bob"]);
    let rated = || thaum_stopped(&["bob"], "");
    let (_dir, store) = played(&[rated(), rated()]);
    assert!(answer(&store, "bob", "!top thaum").contains("No player has 3 rated Thaum seasons yet"));
    let (_dir, store) = played(&[rated(), rated(), rated()]);
    assert!(answer(&store, "bob", "!top thaum").starts_with("bob: Thaum standings over 3 finished seasons"));
}

#[test]
fn verify_passes_on_a_database_with_unrated_games_and_older_ratings_are_derived_again() {
    let (_dir, store) = played(&[
        conceded_after("#clock +10s"),
        thaum_stopped(&[], "alice: !coins alice +50\n"),
        conceded_after("#clock +2m"),
    ]);
    let registry = Registry::standard();
    let stored = store.stored_ratings().expect("reads").expect("stored live");
    assert_eq!(record(&stored, "alice").unrated, 2, "{stored:?}");
    let report = crate::store::audit::verify(&store, Registry::standard, None).expect("verifies");
    assert_eq!((report.ratings.clone(), report.problems()), (RatingsCheck::Match, 0), "{report:?}");
    // Ratings kept by an older spellbridge, under older rules, differ from the journal's ...
    let mut older = stored.clone();
    older.players.values_mut().for_each(|r| r.unrated = 0);
    store.save_ratings(&older, &console_scopes()).expect("saved");
    assert!(store.check_ratings(&registry).expect("checks").is_problem());
    // ... and are derived again when the daemon loads the database.
    store.load(Registry::standard(), crate::console::Console::options(1)).expect("the database loads");
    assert_eq!(store.check_ratings(&registry).expect("checks"), RatingsCheck::Match);
    assert_eq!(store.stored_ratings().expect("reads"), Some(stored));
}

#[test]
fn help_top_says_the_rule_in_both_languages() {
    let (_dir, store) = played(&[script("alice: !help\n")]);
    let english = answer(&store, "alice", "!help top");
    for words in [
        "Only rated games count",
        "once they have 3",
        "a guest",
        "within a minute",
        "one player",
        "coins a game master gave",
    ] {
        assert!(english.contains(words), "{words}: {english}");
    }
    let chinese = answer(&store, "alice", "!帮助 排行");
    for words in ["只计入评分局", "满 3 局", "访客", "一分钟内认输", "只有一名玩家", "游戏主持人给的金币"]
    {
        assert!(chinese.contains(words), "{words}: {chinese}");
    }
}

/// `value` (today's stored shape) written back the way spellbridge wrote it before each
/// game had a pool: `duel` and `thaum` fields, seasons of coins and Thaums.
fn in_the_old_shape(value: &mut serde_json::Value) {
    let summary = &mut value["summary"];
    for record in summary["players"].as_object_mut().expect("players").values_mut() {
        let record = record.as_object_mut().expect("a record");
        if let Some(mut duel) = record.remove("challenges").and_then(|mut c| c["duel"].take().into()) {
            duel["favourite_wizard"] = duel["favourite"].take();
            duel.as_object_mut().expect("a duel record").remove("favourite");
            record.insert("duel".into(), duel);
        }
        if let Some(mut thaum) = record.remove("open").map(|mut o| o["thaum"].take()) {
            thaum["seasons"] = thaum["rounds"].take();
            thaum.as_object_mut().expect("a thaum record").remove("rounds");
            record.insert("thaum".into(), thaum);
        }
    }
    for season in summary["seasons"].as_array_mut().expect("seasons") {
        let season = season.as_object_mut().expect("a season");
        season.remove("game");
        let round = season.remove("round").expect("a round");
        season.insert("season".into(), round);
        for place in season["standings"].as_array_mut().expect("standings") {
            let place = place.as_object_mut().expect("a place");
            let (score, tiebreak) = (place.remove("score"), place.remove("tiebreak"));
            place.insert("coins".into(), score.expect("a score"));
            place.insert("thaums".into(), tiebreak.expect("a tie-break"));
        }
    }
}

#[test]
fn ratings_an_older_spellbridge_stored_still_read_and_verify() {
    let (dir, store) = played(&[duel_between("alice", "bob"), scenario("thaum_full_loop")]);
    let derived =
        store.refresh_ratings(&Registry::standard(), &console_scopes()).expect("stored").expect("derived");
    let text = store.meta(crate::store::ratings::META_KEY).expect("meta reads").expect("stored");
    let mut old: serde_json::Value = serde_json::from_str(&text).expect("json");
    in_the_old_shape(&mut old);
    let old = old.to_string();
    assert!(
        old.contains("\"favourite_wizard\"") && old.contains("\"thaums\"") && !old.contains("\"challenges\"")
    );
    let db = rusqlite::Connection::open(dir.path().join("games.db")).expect("the database opens");
    db.execute("UPDATE meta SET value = ?1 WHERE key = 'ratings'", [&old]).expect("the old copy is written");
    drop(db);
    assert_eq!(store.stored_ratings().expect("the old copy reads"), Some(derived), "upgraded on load");
    assert_eq!(store.check_ratings(&Registry::standard()).expect("checked"), RatingsCheck::Match);
    // A tampered old copy is still caught, at its place in today's shape.
    let tampered = old.replace("\"losses\":0", "\"losses\":5");
    assert_ne!(tampered, old, "the old copy has alice's Duel record to tamper with");
    let db = rusqlite::Connection::open(dir.path().join("games.db")).expect("the database opens");
    db.execute("UPDATE meta SET value = ?1 WHERE key = 'ratings'", [&tampered]).expect("written");
    drop(db);
    let check = store.check_ratings(&Registry::standard()).expect("checked");
    assert!(
        matches!(&check, RatingsCheck::Differs(path) if path == ".summary.players.alice.challenges.duel.losses"),
        "{check:?}"
    );
}
