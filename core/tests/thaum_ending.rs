//! How a Thaum season ends, as the game tells ratings and records (issue 32): its final
//! standings, most coins first (RULES T-3), net of debt (T-9), then the sum of each
//! player's Thaums when it ended; read from the season's events as the journal keeps
//! them, and from a stopped table.

use spellbridge_core::ending::{Ending, Place};
use spellbridge_core::games::thaum::state::Thaums;
use spellbridge_core::games::thaum::{ThaumEvent, ThaumOptions, ThaumPlugin, engine, parse};
use spellbridge_core::plugin::GamePlugin;
use spellbridge_core::{Dice, Event, EventRecord, PlayerId, Role, TableKind, Timestamp};

const SUNDAY: Timestamp = Timestamp::CONSOLE_EPOCH;

fn id(name: &str) -> PlayerId {
    PlayerId::new(name)
}

fn records(events: Vec<ThaumEvent>) -> Vec<EventRecord> {
    events.into_iter().map(|e| Event::table(e).record()).collect()
}

fn place(player: &str, place: u32, score: i128, tiebreak: i64) -> Place {
    Place { player: id(player), place, score, tiebreak, choice: None }
}

/// Alice opens, bob and carol join; the events so far, as the journal keeps them.
fn table() -> (spellbridge_core::games::thaum::ThaumState, ThaumOptions, Vec<EventRecord>) {
    let options = ThaumOptions::default();
    let (mut state, opened) = engine::open(&id("alice"), &options, SUNDAY);
    let mut told = records(opened);
    for (n, player) in ["bob", "carol"].into_iter().enumerate() {
        let join = parse("join").expect("join");
        let mut dice = Dice::for_action(7, n as u64);
        let events = engine::apply(&mut state, &options, &id(player), Role::Player, &join, SUNDAY, &mut dice)
            .expect("joins");
        told.extend(records(events));
    }
    (state, options, told)
}

#[test]
fn t3_a_season_that_ends_with_its_loop_tells_its_standings_coins_first_then_thaums() {
    // RULES T-3: the loop ends at the 9th phase end; standings most coins first.
    let (mut state, options, mut told) = table();
    let at = SUNDAY.plus(3600);
    // Bob and carol tie on coins; carol's Thaums sum higher (5 against 1), so she places
    // second by the tie-break though bob is ahead of her by name in the game's standings.
    let gather = |state: &mut spellbridge_core::games::thaum::ThaumState, who: &str, what: &str, n: u64| {
        let command = parse(what).expect("gather");
        let mut dice = Dice::for_action(7, 100 + n);
        engine::apply(state, &options, &id(who), Role::Player, &command, at, &mut dice).expect("gathered")
    };
    told.extend(records(gather(&mut state, "bob", "gather 1 fire", 1)));
    for n in 0..5 {
        told.extend(records(engine::end_phase(&mut state, &options, at)));
        told.extend(records(gather(&mut state, "carol", "gather 1 water", 2 + n)));
    }
    for player in ["alice", "bob", "carol"] {
        let sheet = state.players.get_mut(&id(player)).expect("seated");
        sheet.coins = if player == "alice" { 12 } else { 7 };
    }
    let mut endings = Vec::new();
    let mut reader = ThaumPlugin::default().ending_reader().expect("Thaum seasons end with standings");
    for _ in 0..4 {
        told.extend(records(engine::end_phase(&mut state, &options, at)));
    }
    for event in &told {
        endings.extend(reader.read(event));
    }
    assert_eq!(state.seasons.len(), 1, "the 9th phase end closed season 1");
    assert_eq!(
        endings,
        vec![Ending {
            round: 1,
            // In the game's standings' order (most coins, ties by name); places by
            // coins, then the Thaum sums.
            places: vec![place("alice", 1, 12, 0), place("bob", 3, 7, 1), place("carol", 2, 7, 5)],
            conceded: false,
            helped: Default::default(),
        }]
    );
    assert!(!reader.done(), "the table plays on into season 2");
    assert_eq!(endings[0].winners(), vec![&id("alice")]);
    assert_eq!(ThaumPlugin::default().kind(), TableKind::Open);
    assert_eq!(state.players[&id("carol")].thaums, Thaums::ZERO, "T-3: the new season starts at 0");
}

#[test]
fn t9_a_stopped_table_tells_its_season_with_the_coins_a_game_master_gave() {
    // RULES T-9: `!coins` raising bob's coins is kept with the season, so the ratings can
    // tell a season won with given coins; a stop ends the table (no later ending).
    let (mut state, options, mut told) = table();
    let run = |state: &mut spellbridge_core::games::thaum::ThaumState, who: &str, what: &str, n: u64| {
        let command = parse(what).expect("a command");
        let mut dice = Dice::for_action(7, 200 + n);
        engine::apply(state, &options, &id(who), Role::GameMaster, &command, SUNDAY, &mut dice)
            .expect("taken")
    };
    told.extend(records(run(&mut state, "alice", "coins bob +9", 0)));
    told.extend(records(run(&mut state, "carol", "gather 1 air", 1)));
    told.extend(records(run(&mut state, "alice", "stop", 2)));
    let mut reader = ThaumPlugin::default().ending_reader().expect("a reader");
    let endings: Vec<Ending> = told.iter().filter_map(|event| reader.read(event)).collect();
    // The standings keep ties by name (alice before carol); carol places second by her Air.
    let places = vec![place("bob", 1, 9, 0), place("alice", 3, 0, 0), place("carol", 2, 0, 1)];
    assert_eq!(
        endings,
        vec![Ending { round: 1, places: places.clone(), conceded: false, helped: [id("bob")].into() }]
    );
    assert!(reader.done(), "a stopped table tells nothing more");
    assert_eq!(endings[0].winners(), vec![&id("bob")]);
    // The table says the same of itself (who was given coins is the journal's to tell).
    let table =
        ThaumPlugin::default().restore(&serde_json::to_value(&state).expect("a snapshot")).expect("restores");
    assert_eq!(
        table.ending(),
        Some(Ending { round: 1, places, conceded: false, helped: Default::default() })
    );
}
