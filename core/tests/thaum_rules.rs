//! Thaum's rules, one or more tests per RULES.md id (T-1 … T-10) and every worked check,
//! played through the typed engine (`parse` + `engine::apply`).

use spellbridge_core::Dice;
use spellbridge_core::PlayerId;
use spellbridge_core::Role;
use spellbridge_core::Timestamp;
use spellbridge_core::games::thaum::engine;
use spellbridge_core::games::thaum::spells::{self, Side};
use spellbridge_core::games::thaum::state::{SeasonEnd, Thaum, ThaumState, Thaums};
use spellbridge_core::games::thaum::{PlayerSheet, Schedule, ThaumError, ThaumEvent, ThaumOptions, parse};
use spellbridge_core::time::DAY;

const SUNDAY: Timestamp = Timestamp::CONSOLE_EPOCH;

/// A table played through the engine, with a fresh seeded dice per action.
struct Game {
    state: ThaumState,
    options: ThaumOptions,
    now: Timestamp,
    sequence: u64,
}

impl Game {
    fn with_options(players: &[&str], options: ThaumOptions) -> Game {
        let (state, _) = engine::open(&id(players[0]), &options, SUNDAY);
        let mut game = Game { state, options, now: SUNDAY.plus(3600), sequence: 0 };
        for player in &players[1..] {
            game.ok(player, "join");
        }
        game
    }

    fn new(players: &[&str]) -> Game {
        Game::with_options(players, ThaumOptions::default())
    }

    fn run(&mut self, actor: &str, command: &str) -> Result<Vec<ThaumEvent>, ThaumError> {
        self.run_as(actor, Role::Player, command)
    }

    fn run_as(&mut self, actor: &str, role: Role, command: &str) -> Result<Vec<ThaumEvent>, ThaumError> {
        let command = parse(command).unwrap_or_else(|e| panic!("test command `{command}`: {e}"));
        let mut dice = Dice::for_action(7, self.sequence);
        self.sequence += 1;
        engine::apply(&mut self.state, &self.options, &id(actor), role, &command, self.now, &mut dice)
    }

    fn ok(&mut self, actor: &str, command: &str) -> Vec<ThaumEvent> {
        self.run(actor, command).unwrap_or_else(|e| panic!("`{command}` by {actor} refused: {e}"))
    }

    /// Runs a command that must be refused, and checks it changed nothing.
    fn refused(&mut self, actor: &str, command: &str) -> ThaumError {
        let before = self.state.clone();
        let err = self.run(actor, command).expect_err("should be refused");
        assert_eq!(self.state, before, "`{command}` was refused but changed the state");
        err
    }

    fn sheet(&self, player: &str) -> PlayerSheet {
        self.state.players[&id(player)]
    }

    fn edit(&mut self, player: &str, f: impl FnOnce(&mut PlayerSheet)) {
        f(self.state.players.get_mut(&id(player)).expect("a player"));
    }

    fn end_phase(&mut self) -> Vec<ThaumEvent> {
        engine::end_phase(&mut self.state, &self.options, self.now)
    }
}

fn id(name: &str) -> PlayerId {
    PlayerId::new(name)
}

fn thaums(values: [i64; 4]) -> Thaums {
    Thaums::clamped(values)
}

// ---- T-1 -------------------------------------------------------------------------------

#[test]
fn t1_new_phase_grants_every_player_one_mana_and_resets_flags() {
    // RULES T-1
    let mut g = Game::new(&["alice", "bob"]);
    g.ok("alice", "blood 0 fire");
    g.ok("alice", "tornado 0 bob");
    assert!(g.sheet("alice").blood_magic_used && g.sheet("alice").tornado_used);
    g.end_phase();
    assert_eq!(g.sheet("alice").mana, 2);
    assert_eq!(g.sheet("bob").mana, 2);
    assert!(!g.sheet("alice").blood_magic_used && !g.sheet("alice").tornado_used);
    g.ok("alice", "blood 0 fire");
}

#[test]
fn t1_mana_accumulates_across_phases_until_the_loop_ends() {
    // RULES T-1
    let mut g = Game::new(&["alice"]);
    for _ in 0..7 {
        g.end_phase();
    }
    assert_eq!((g.state.phase, g.sheet("alice").mana), (8, 8));
}

#[test]
fn opening_grants_the_creator_phase_one_mana_and_makes_them_game_master() {
    // RULES T-1, T-4
    let g = Game::new(&["alice"]);
    assert_eq!((g.state.season, g.state.phase, g.state.loop_instability), (1, 1, 0));
    assert_eq!(g.state.game_masters, vec![id("alice")]);
    assert_eq!(g.sheet("alice").mana, 1);
}

// ---- T-2 -------------------------------------------------------------------------------

#[test]
fn t2_game_master_phase_next_is_the_same_engine_call_as_the_timer() {
    // RULES T-2: both paths give the same state (apart from the history, which the table keeps).
    let mut by_timer = Game::new(&["alice", "bob"]);
    let mut by_command = Game::new(&["alice", "bob"]);
    by_timer.end_phase();
    let events = by_command.ok("alice", "phase next");
    assert_eq!(events[0], ThaumEvent::PhaseForced { by: id("alice") });
    assert_eq!(by_timer.state, by_command.state);
    assert_eq!(by_command.state.phase, 2);
    assert_eq!(by_command.state.phase_started_at, by_command.now);
}

#[test]
fn t2_phase_next_is_for_game_masters_only() {
    // RULES T-2
    let mut g = Game::new(&["alice", "bob"]);
    let err = g.refused("bob", "phase next");
    assert!(matches!(err, ThaumError::NotGameMaster { .. }), "{err}");
    assert!(err.to_string().contains("alice"), "{err}");
}

#[test]
fn t2_phase_began_says_when_the_next_boundary_is() {
    // RULES T-2
    let mut g = Game::new(&["alice"]);
    let events = g.end_phase();
    let Some(ThaumEvent::PhaseBegan { phase: 2, next_phase, .. }) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(*next_phase, Some(SUNDAY.plus(3 * DAY)));
    let mut manual =
        Game::with_options(&["alice"], ThaumOptions { schedule: Schedule::Manual, ..Default::default() });
    let events = manual.end_phase();
    assert!(matches!(events.last(), Some(ThaumEvent::PhaseBegan { next_phase: None, .. })));
}

// ---- T-3 -------------------------------------------------------------------------------

#[test]
fn t3_loop_ends_when_instability_reaches_9() {
    // RULES T-3: with no adjustments a loop is Phases I–IX; the 9th phase end rolls over.
    let mut g = Game::new(&["alice", "bob", "carol"]);
    g.edit("bob", |s| s.coins = 7);
    g.edit("carol", |s| s.coins = 7);
    g.edit("alice", |s| {
        s.coins = 3;
        s.thaums = thaums([1, 2, 3, 4]);
    });
    for phase in 1..9 {
        assert_eq!(g.state.phase, phase);
        let events = g.end_phase();
        assert!(!events.iter().any(|e| matches!(e, ThaumEvent::LoopEnded { .. })), "phase {phase}");
    }
    assert_eq!((g.state.phase, g.state.loop_instability), (9, 8));
    let events = g.end_phase();
    let standings: Vec<(&str, u64)> =
        g.state.seasons[0].standings.iter().map(|s| (s.player.as_str(), s.coins)).collect();
    assert_eq!(standings, [("bob", 7), ("carol", 7), ("alice", 3)], "most coins first, ties by name");
    assert_eq!(g.state.seasons[0].season, 1);
    assert_eq!(g.state.seasons[0].ended, SeasonEnd::LoopEnded);
    assert!(events.iter().any(|e| matches!(e, ThaumEvent::LoopEnded { season: 1, .. })));
    assert!(events.iter().any(|e| matches!(e, ThaumEvent::SeasonBegan { season: 2 })));
    assert_eq!((g.state.season, g.state.phase, g.state.loop_instability), (2, 1, 0));
    for player in ["alice", "bob", "carol"] {
        let sheet = g.sheet(player);
        assert_eq!(
            (sheet.mana, sheet.coins, sheet.thaums),
            (1, 0, Thaums::ZERO),
            "{player}: Phase I grants 1 Mana"
        );
    }
}

#[test]
fn t3_instability_is_checked_only_at_a_phases_end() {
    // RULES T-3
    let mut g = Game::new(&["alice"]);
    g.ok("alice", "instability 20");
    assert_eq!((g.state.season, g.state.loop_instability), (1, 20));
    g.ok("alice", "gather 1 fire");
    g.end_phase();
    assert_eq!((g.state.season, g.state.phase), (2, 1));
}

#[test]
fn t3_lowering_instability_lengthens_the_loop() {
    // RULES T-3
    let mut g = Game::new(&["alice"]);
    for _ in 0..8 {
        g.end_phase();
    }
    g.ok("alice", "instability -5");
    assert_eq!(g.state.loop_instability, 3);
    g.end_phase();
    assert_eq!((g.state.season, g.state.phase), (1, 10));
}

#[test]
fn t3_instability_adjustments_saturate() {
    // RULES T-3
    let mut g = Game::new(&["alice"]);
    g.ok("alice", "instability -5");
    assert_eq!(g.state.loop_instability, 0);
    g.ok("alice", "instability 1000000000");
    g.ok("alice", "instability +1000000000");
    assert_eq!(g.state.loop_instability, 1_000_000_000);
    g.ok("alice", "instability +2");
    assert_eq!(g.state.loop_instability, 1_000_000_000);
}

#[test]
fn t3_players_stay_registered_across_seasons() {
    // RULES T-3
    let mut g = Game::new(&["alice", "bob"]);
    g.ok("alice", "instability 8");
    g.end_phase();
    assert_eq!(g.state.players.len(), 2);
    g.ok("bob", "gather 1 air");
}

// ---- T-4 -------------------------------------------------------------------------------

#[test]
fn t4_joining_mid_phase_gets_that_phases_mana() {
    // RULES T-4
    let mut g = Game::new(&["alice"]);
    g.end_phase();
    let events = g.ok("bob", "join");
    assert_eq!(events, vec![ThaumEvent::Joined { player: id("bob"), added_by: None, mana: 1 }]);
    assert_eq!(g.sheet("bob").mana, 1);
    assert!(matches!(g.refused("bob", "join"), ThaumError::AlreadyJoined { .. }));
}

#[test]
fn t4_the_game_master_registers_players() {
    // RULES T-4
    let mut g = Game::new(&["alice"]);
    let events = g.ok("alice", "add carol");
    assert_eq!(
        events,
        vec![ThaumEvent::Joined { player: id("carol"), added_by: Some(id("alice")), mana: 1 }]
    );
    assert!(matches!(g.refused("alice", "add Carol"), ThaumError::AlreadyPlaying { .. }));
    assert!(matches!(g.refused("carol", "add dave"), ThaumError::NotGameMaster { .. }));
}

// ---- Gather Power ----------------------------------------------------------------------

#[test]
fn worked_check_gather_fire_9_plus_3_is_10() {
    // RULES worked check: Fire 9, Gather 3 Mana into Fire → Fire 10, Mana down by 3.
    let mut g = Game::new(&["alice"]);
    g.edit("alice", |s| {
        s.thaums = thaums([9, 0, 0, 0]);
        s.mana = 5;
    });
    g.ok("alice", "gather 3 fire");
    assert_eq!(g.sheet("alice").thaums.get(Thaum::Fire), 10);
    assert_eq!(g.sheet("alice").mana, 2);
}

// ---- T-5 Blood Magic -------------------------------------------------------------------

#[test]
fn t5_worked_check_blood_magic_grants_the_actual_decrease() {
    // RULES T-5 worked check: Water −8, Blood Magic 5 on Water → Water −10, granted 2 Mana.
    let mut g = Game::new(&["alice"]);
    g.edit("alice", |s| s.thaums = thaums([0, -8, 0, 0]));
    let events = g.ok("alice", "blood 5 water");
    assert_eq!(g.sheet("alice").thaums.get(Thaum::Water), -10);
    assert_eq!(g.sheet("alice").mana, 1 + 2);
    assert!(matches!(events[0], ThaumEvent::BloodMagic { mana_granted: 2, before: -8, after: -10, .. }));
}

#[test]
fn t5_blood_magic_is_once_per_phase_and_takes_whole_numbers_only() {
    // RULES T-5
    let mut g = Game::new(&["alice"]);
    g.ok("alice", "blood 1 fire");
    let err = g.refused("alice", "blood 1 fire");
    assert_eq!(err, ThaumError::BloodMagicUsed);
    assert!(err.to_string().contains("once per phase (T-1)"));
    assert!(parse("blood -2 fire").is_err());
    assert!(parse("blood 1.5 fire").is_err());
}

// ---- Alchemy and T-9 -------------------------------------------------------------------

#[test]
fn t9_worked_check_alchemy_revokes_24_of_30_coins() {
    // RULES T-9 worked check: 2 Mana, Fire 3, Air −4, 30 coins → N = −24, coins 6; Fire 0, Air 0.
    let mut g = Game::new(&["alice"]);
    g.edit("alice", |s| {
        s.mana = 2;
        s.coins = 30;
        s.thaums = thaums([3, 0, 0, -4]);
    });
    let events = g.ok("alice", "alchemy 2 fire air");
    let sheet = g.sheet("alice");
    assert_eq!((sheet.coins, sheet.mana, sheet.thaums), (6, 0, Thaums::ZERO));
    let ThaumEvent::Alchemy { n, coins, .. } = &events[0] else { panic!("{events:?}") };
    assert_eq!((*n, coins.not_taken), (-24, 0));
}

#[test]
fn t9_worked_check_alchemy_with_10_coins_says_14_could_not_be_taken() {
    // RULES T-9 worked check: with 10 coins → coins 0, and the reply says 14 could not be taken.
    let mut g = Game::new(&["alice"]);
    g.edit("alice", |s| {
        s.mana = 2;
        s.coins = 10;
        s.thaums = thaums([3, 0, 0, -4]);
    });
    let events = g.ok("alice", "alchemy 2 fire air");
    assert_eq!(g.sheet("alice").coins, 0);
    let ThaumEvent::Alchemy { coins, .. } = &events[0] else { panic!("{events:?}") };
    assert_eq!(coins.not_taken, 14);
    let text = spellbridge_core::games::thaum::render::event(&events[0], "!").plain();
    assert!(text.contains("14 could not be taken"), "{text}");
}

#[test]
fn t9_coin_debt_option_keeps_the_shortfall_as_debt() {
    // RULES T-9 (rule option, off by default)
    let options = ThaumOptions { coin_debt: true, ..Default::default() };
    let mut g = Game::with_options(&["alice"], options);
    g.edit("alice", |s| {
        s.mana = 2;
        s.coins = 10;
        s.thaums = thaums([3, 0, 0, -4]);
    });
    g.ok("alice", "alchemy 2 fire air");
    assert_eq!((g.sheet("alice").coins, g.sheet("alice").debt), (0, 14));
    g.ok("alice", "coins alice +20");
    assert_eq!((g.sheet("alice").coins, g.sheet("alice").debt), (6, 0));
}

#[test]
fn t9_spending_more_mana_than_held_is_refused_saying_how_much_is_held() {
    // RULES T-9
    let mut g = Game::new(&["alice", "bob"]);
    for command in ["gather 2 fire", "alchemy 2 fire air", "bend 2 bob", "summon 2 bob", "tornado 2 bob"] {
        let err = g.refused("alice", command);
        assert!(matches!(err, ThaumError::NotEnoughMana { held: 1, wanted: 2, .. }), "{command}: {err}");
        assert!(err.to_string().starts_with("you hold 1 Mana"), "{err}");
    }
    g.ok("alice", "gather 1 fire");
    assert_eq!(g.sheet("alice").mana, 0);
    g.ok("alice", "gather 0 fire");
}

#[test]
fn t9_game_master_revokes_stop_at_zero() {
    // RULES T-9
    let mut g = Game::new(&["alice", "bob"]);
    g.ok("alice", "coins bob 5");
    let events = g.ok("alice", "coins bob -8");
    assert_eq!(g.sheet("bob").coins, 0);
    let ThaumEvent::CoinsAdjusted { change, .. } = &events[0] else { panic!() };
    assert_eq!(change.not_taken, 3);
    assert!(matches!(g.refused("alice", "coins nobody +1"), ThaumError::UnknownPlayer { .. }));
}

#[test]
fn alchemy_needs_two_different_thaums() {
    let mut g = Game::new(&["alice"]);
    let err = g.refused("alice", "alchemy 1 fire fire");
    assert_eq!(err, ThaumError::SameThaum { thaum: Thaum::Fire, mana: 1 });
    assert!(err.to_string().contains("`!alchemy 1 fire air`"), "{err}");
}

// ---- T-6 Bending -----------------------------------------------------------------------

#[test]
fn t6_worked_check_bending() {
    // RULES T-6 worked check: a = [1, 0, 0, 2], m = 1, defender all 0 → [−2, 1, 5, 2].
    let mut g = Game::new(&["alice", "bob"]);
    g.edit("alice", |s| s.thaums = thaums([1, 0, 0, 2]));
    let events = g.ok("alice", "bend 1 bob");
    assert_eq!(g.sheet("bob").thaums.values(), [-2, 1, 5, 2]);
    assert_eq!(g.sheet("alice").thaums, Thaums::ZERO);
    assert_eq!(g.sheet("alice").mana, 0);
    assert!(matches!(events[0], ThaumEvent::Bending { attack: [-2, 1, 5, 2], .. }));
}

#[test]
fn t6_bending_yourself_adds_first_and_zeroes_last() {
    // RULES T-6
    let mut g = Game::new(&["alice"]);
    g.edit("alice", |s| s.thaums = thaums([1, 0, 0, 2]));
    let events = g.ok("alice", "bend 1 alice");
    assert_eq!(g.sheet("alice").thaums, Thaums::ZERO);
    assert!(
        matches!(&events[0], ThaumEvent::Bending { defender_after, .. } if defender_after.values() == [-1, 1, 5, 4])
    );
}

#[test]
fn t6_bending_scales_with_mana_and_clamps() {
    // RULES T-6
    let mut g = Game::new(&["alice", "bob"]);
    g.edit("alice", |s| {
        s.thaums = thaums([1, 0, 0, 2]);
        s.mana = 3;
    });
    g.ok("alice", "bend 3 bob");
    assert_eq!(g.sheet("bob").thaums.values(), [-6, 3, 10, 6]);
}

// ---- T-7 Summoning ---------------------------------------------------------------------

#[test]
fn t7_worked_check_summoning() {
    // RULES T-7 worked check: a = [1, 0, 0, 2], b = [0, 0, 1, 0] → N = 5: both +5, both zeroed.
    let mut g = Game::new(&["alice", "bob"]);
    g.edit("alice", |s| s.thaums = thaums([1, 0, 0, 2]));
    g.edit("bob", |s| s.thaums = thaums([0, 0, 1, 0]));
    g.ok("alice", "summon 1 bob");
    for player in ["alice", "bob"] {
        assert_eq!((g.sheet(player).coins, g.sheet(player).thaums), (5, Thaums::ZERO), "{player}");
    }
    assert_eq!((g.sheet("alice").mana, g.sheet("bob").mana), (0, 1));
}

#[test]
fn t7_mana_does_not_scale_summoning_unless_the_option_says_so() {
    // RULES T-7
    for (scales, expected) in [(false, 5), (true, 10)] {
        let options = ThaumOptions { summoning_scales_with_mana: scales, ..Default::default() };
        let mut g = Game::with_options(&["alice", "bob"], options);
        g.edit("alice", |s| {
            s.thaums = thaums([1, 0, 0, 2]);
            s.mana = 2;
        });
        g.edit("bob", |s| s.thaums = thaums([0, 0, 1, 0]));
        g.ok("alice", "summon 2 bob");
        assert_eq!(g.sheet("bob").coins, expected, "scales: {scales}");
    }
}

#[test]
fn t7_negative_summoning_revokes_from_both_and_zero_mana_is_allowed() {
    // RULES T-7, T-9
    let mut g = Game::new(&["alice", "bob"]);
    g.edit("alice", |s| s.thaums = thaums([1, 0, 0, 0]));
    g.edit("bob", |s| {
        s.thaums = thaums([0, 3, 0, 0]);
        s.coins = 2;
    });
    g.ok("alice", "summon 0 bob");
    assert_eq!((g.sheet("alice").coins, g.sheet("bob").coins), (0, 0));
    assert_eq!(g.sheet("alice").mana, 1);
}

#[test]
fn summoning_and_tornado_need_another_player() {
    let mut g = Game::new(&["alice", "bob"]);
    assert!(matches!(g.refused("alice", "summon 0 alice"), ThaumError::SelfTarget { .. }));
    assert!(matches!(g.refused("alice", "tornado 0 ALICE"), ThaumError::SelfTarget { .. }));
}

// ---- T-8 Tornado -----------------------------------------------------------------------

#[test]
fn t8_tornado_moves_by_the_casters_current_air_and_zeroes_it() {
    // RULES T-8: replay every roll by hand and check each used the caster's Air at that moment.
    let mut g = Game::new(&["alice", "bob"]);
    g.edit("alice", |s| {
        s.mana = 30;
        s.thaums = thaums([0, 0, 0, 4]);
    });
    let events = g.ok("alice", "tornado 30 bob");
    let ThaumEvent::Tornado { rolls, .. } = &events[0] else { panic!() };
    let (mut caster, mut target) = (thaums([0, 0, 0, 4]), Thaums::ZERO);
    for roll in rolls {
        assert_eq!(roll.air, caster.get(Thaum::Air), "Air read at each repetition");
        let side = if roll.side == Side::Caster { &mut caster } else { &mut target };
        side.add(roll.thaum, i64::from(roll.k) * i64::from(roll.air));
    }
    caster.set(Thaum::Air, 0);
    assert_eq!((g.sheet("alice").thaums, g.sheet("bob").thaums), (caster, target));
    assert_eq!(g.sheet("alice").thaums.get(Thaum::Air), 0);
    assert!(matches!(g.refused("alice", "tornado 0 bob"), ThaumError::TornadoUsed));
}

// ---- T-10 ------------------------------------------------------------------------------

#[test]
fn t10_tornado_publishes_its_seed_and_the_draws_replay_from_it() {
    // RULES T-10
    let mut g = Game::new(&["alice", "bob"]);
    g.edit("alice", |s| {
        s.mana = 12;
        s.thaums = thaums([2, -3, 1, 5]);
    });
    g.edit("bob", |s| s.thaums = thaums([-1, 0, 4, 2]));
    let events = g.ok("alice", "tornado 12 bob");
    let ThaumEvent::Tornado { seed: Some(seed), rolls, caster_after, target_after, .. } = &events[0] else {
        panic!("{events:?}")
    };
    let replay =
        spells::tornado(thaums([2, -3, 1, 5]), thaums([-1, 0, 4, 2]), 12, &mut Dice::from_seed(*seed));
    assert_eq!(&replay.rolls, rolls);
    assert_eq!((&replay.caster, &replay.target), (caster_after, target_after));
    let text = spellbridge_core::games::thaum::render::event(&events[0], "!").plain();
    assert!(text.contains(&format!("seed {seed}")), "{text}");
}

// ---- Refusals --------------------------------------------------------------------------

#[test]
fn non_players_are_told_to_join_first() {
    let mut g = Game::new(&["alice"]);
    let err = g.refused("mallory", "gather 0 fire");
    assert!(err.to_string().contains("`!join` first"), "{err}");
}

#[test]
fn unknown_players_are_listed_with_a_suggestion() {
    let mut g = Game::new(&["alice", "bob"]);
    let err = g.refused("alice", "bend 1 bbo");
    let text = err.to_string();
    assert!(text.contains("did you mean `bob`?") && text.contains("alice and bob"), "{text}");
}

#[test]
fn a_stopped_table_takes_no_commands_but_answers_status() {
    let mut g = Game::new(&["alice", "bob"]);
    g.edit("bob", |s| s.coins = 4);
    let events = g.ok("alice", "stop");
    assert!(matches!(&events[0], ThaumEvent::Stopped { standings, .. } if standings[0].player == id("bob")));
    assert!(g.state.finished);
    assert_eq!(g.state.seasons[0].ended, SeasonEnd::Stopped);
    assert_eq!(g.refused("bob", "gather 0 fire"), ThaumError::TableStopped);
    assert_eq!(g.refused("alice", "phase next"), ThaumError::TableStopped);
    g.ok("bob", "status");
}

#[test]
fn status_shows_a_sheet_or_the_table() {
    let mut g = Game::new(&["alice", "bob"]);
    assert!(
        matches!(&g.ok("alice", "status")[0], ThaumEvent::Sheet { player, .. } if *player == id("alice"))
    );
    assert!(
        matches!(&g.ok("alice", "status BOB")[0], ThaumEvent::Sheet { player, .. } if *player == id("bob"))
    );
    assert!(matches!(&g.ok("zed", "status")[0], ThaumEvent::Summary { .. }));
    assert!(matches!(&g.ok("alice", "status table")[0], ThaumEvent::Summary { .. }));
    assert!(matches!(g.refused("alice", "status zed"), ThaumError::UnknownPlayer { .. }));
}

#[test]
fn huge_mana_amounts_never_overflow() {
    let mut g = Game::new(&["alice", "bob"]);
    g.edit("alice", |s| {
        s.mana = u32::MAX;
        s.thaums = thaums([10, -10, 10, -10]);
        s.coins = u64::MAX - 5;
    });
    g.ok("alice", "alchemy 1000000000 fire earth");
    assert_eq!(g.sheet("alice").coins, u64::MAX);
    g.edit("alice", |s| s.thaums = thaums([10, 10, 10, 10]));
    g.ok("alice", "bend 1000000000 bob");
    assert!(g.sheet("bob").thaums.values().iter().all(|v| (-10..=10).contains(v)));
    g.ok("alice", "gather 1000000000 water");
    assert_eq!(g.sheet("alice").thaums.get(Thaum::Water), 10);
}

#[test]
fn who_may_use_game_master_commands() {
    // The table's game masters, or whoever the daemon judged a game master of every table;
    // `!stop` also the room's operator. The role never enters the state.
    let mut g = Game::new(&["alice", "bob"]);
    let not_gm = |e: ThaumError| matches!(e, ThaumError::NotGameMaster { .. });
    for command in ["coins bob +1", "phase next", "instability +1", "add carol", "gm add bob", "stop"] {
        let state = g.state.clone();
        let parsed = parse(command).expect("parses");
        assert!(engine::may_use(&state, &id("alice"), Role::Player, &parsed), "{command}");
        assert!(engine::may_use(&state, &id("zed"), Role::GameMaster, &parsed), "{command}");
        assert!(!engine::may_use(&state, &id("bob"), Role::Player, &parsed), "{command}");
        assert_eq!(
            engine::may_use(&state, &id("bob"), Role::Operator, &parsed),
            command == "stop",
            "{command}"
        );
    }
    assert!(not_gm(g.run_as("bob", Role::Operator, "coins bob +1").expect_err("refused")));
    let events = g.run_as("zed", Role::GameMaster, "coins bob +4").expect("accepted");
    assert!(matches!(&events[0], ThaumEvent::CoinsAdjusted { by, .. } if *by == id("zed")));
    assert_eq!(g.sheet("bob").coins, 4);
    assert_eq!(g.state.game_masters, [id("alice")]);
    // Asking is open to everyone.
    let events = g.ok("bob", "gm list");
    assert_eq!(events, [ThaumEvent::GameMasters { game_masters: vec![id("alice")] }]);
    assert!(events[0].is_reply());
}

#[test]
fn gm_add_and_remove_keep_at_least_one_game_master() {
    let mut g = Game::new(&["alice", "bob"]);
    let events = g.ok("alice", "gm add bob:");
    assert_eq!(
        events,
        [ThaumEvent::GameMasterAdded {
            by: id("alice"),
            player: id("bob"),
            game_masters: vec![id("alice"), id("bob")]
        }]
    );
    assert_eq!(
        g.refused("bob", "gm add alice"),
        ThaumError::AlreadyGameMaster { player: id("alice"), game_masters: vec![id("alice"), id("bob")] }
    );
    assert_eq!(
        g.refused("bob", "gm add carol"),
        ThaumError::NotSeated { typed: "carol".into(), suggestion: None }
    );
    let events = g.ok("bob", "gm remove ALICE");
    assert_eq!(
        events,
        [ThaumEvent::GameMasterRemoved { by: id("bob"), player: id("alice"), game_masters: vec![id("bob")] }]
    );
    assert_eq!(g.refused("bob", "gm remove bob"), ThaumError::LastGameMaster { player: id("bob") });
    assert_eq!(
        g.refused("bob", "gm remove alice"),
        ThaumError::NotAmongGameMasters { typed: "alice".into(), game_masters: vec![id("bob")] }
    );
    // A game master of every table is bound by the same floor.
    assert_eq!(
        g.run_as("zed", Role::GameMaster, "gm remove bob"),
        Err(ThaumError::LastGameMaster { player: id("bob") })
    );
    assert_eq!(g.state.game_masters, [id("bob")]);
}
