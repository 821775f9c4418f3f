//! Engine and table tests: whole rounds through [`Duel::apply`] and [`Duel::fire_timer`],
//! the rules that need the casting phase (D-1, D-2, D-4, D-5, D-8, D-9), every refusal
//! (the state stays unchanged), and the table's privacy and snapshot.

use serde_json::Value;

use super::engine::WINNING_TRACK;
use super::round::{Check, SpellState};
use super::*;
use crate::event::{Event, Presentation};
use crate::plugin::{Audience, Form, Role, Seat};

const T0: Timestamp = Timestamp::CONSOLE_EPOCH;

fn alice() -> PlayerId {
    PlayerId::new("alice")
}
fn bob() -> PlayerId {
    PlayerId::new("bob")
}

fn setup(choices: [Option<&str>; 2]) -> TableSetup {
    TableSetup {
        room: "#duel".into(),
        seats: vec![
            Seat { player: alice(), choice: choices[0].map(str::to_owned) },
            Seat { player: bob(), choice: choices[1].map(str::to_owned) },
        ],
        now: T0,
    }
}

fn duel_with(options: DuelOptions) -> Duel {
    DuelPlugin::new(options).open_duel(&setup([None, None])).expect("two apprentices")
}

fn duel() -> Duel {
    duel_with(DuelOptions::default())
}

/// Checks always pass (a d6 is always ≥ 1).
fn steady() -> DuelOptions {
    DuelOptions { concentration: vec![1], focused: vec![1], ..DuelOptions::default() }
}

fn cast(duel: &mut Duel, who: &PlayerId, tokens: &str, dice: &mut Dice) -> Result<Vec<DuelEvent>, DuelError> {
    let command = command::parse(&format!("cast {tokens}"))?;
    duel.apply(who, Role::Player, &command, T0, dice)
}

fn ok(duel: &mut Duel, who: &PlayerId, tokens: &str) -> Vec<DuelEvent> {
    cast(duel, who, tokens, &mut Dice::from_seed(1)).expect("cast accepted")
}

/// Dice whose first rolls are `rolls`.
fn dice_rolling(rolls: &[u8]) -> Dice {
    (0u64..)
        .map(Dice::from_seed)
        .find(|d| {
            let mut trial = d.clone();
            rolls.iter().all(|r| trial.d6() == *r)
        })
        .expect("some seed rolls these")
}

fn last_round(duel: &Duel) -> &engine::RoundRecord {
    duel.rounds().last().expect("a settled round")
}

#[test]
fn a_round_settles_when_both_spells_are_complete() {
    let mut duel = duel();
    ok(&mut duel, &alice(), "surge fire wind end");
    assert!(duel.rounds().is_empty(), "bob has not cast yet");
    let events = ok(&mut duel, &bob(), "focus water end");
    // steps 0 and 1 reveal both; at step 2 alice places Wind while bob ends: a check.
    assert!(events.iter().any(|e| matches!(e, DuelEvent::Settled { round: 1 })));
    let record = last_round(&duel);
    assert_eq!(record.spells[1].outcome.power, 1);
    assert_eq!(duel.round().number, 2);
    assert_eq!(duel.pools()[1].water, 7);
}

#[test]
fn d1_the_track_reaching_30_wins() {
    // RULES D-1
    let mut duel = duel_with(steady());
    duel.track = 28;
    ok(&mut duel, &alice(), "surge fire wind end");
    ok(&mut duel, &bob(), "surge water end");
    // alice level 2: 4 + 2 = 6; bob 1: 1 + 0 = 1 → track 33.
    assert_eq!(duel.track(), 33);
    assert!(duel.track().unsigned_abs() >= WINNING_TRACK);
    assert_eq!(duel.finish(), Some(Finish { winner: Some(0), reason: FinishReason::Track }));
    assert_eq!(duel.next_timer(), None);
}

#[test]
fn d1_the_track_counts_toward_the_second_player_too() {
    // RULES D-1
    let mut duel = duel_with(steady());
    duel.track = -29;
    ok(&mut duel, &alice(), "surge water end");
    ok(&mut duel, &bob(), "surge fire wind end");
    assert_eq!(duel.finish(), Some(Finish { winner: Some(1), reason: FinishReason::Track }));
}

#[test]
fn d2_a_pool_running_dry_ends_the_game_for_whom_the_track_favours() {
    // RULES D-2
    let mut duel = duel_with(steady());
    duel.pools[0] = Pool { fire: 1, ..Pool::default() };
    duel.track = 5;
    ok(&mut duel, &alice(), "surge fire end");
    ok(&mut duel, &bob(), "surge water end");
    assert!(duel.pools()[0].is_empty());
    assert_eq!(duel.finish(), Some(Finish { winner: Some(0), reason: FinishReason::PoolEmpty }));
    assert_eq!(duel.snapshot()["winner"], "alice");
}

#[test]
fn d2_an_even_track_when_a_pool_runs_dry_is_a_draw() {
    // RULES D-2
    let mut duel = duel_with(steady());
    duel.pools[1] = Pool { water: 1, ..Pool::default() };
    ok(&mut duel, &alice(), "surge fire end");
    ok(&mut duel, &bob(), "surge water end");
    assert_eq!(duel.finish(), Some(Finish { winner: None, reason: FinishReason::PoolEmpty }));
    let snapshot = duel.snapshot();
    assert_eq!(
        (snapshot["winner"].clone(), snapshot["finished"].clone()),
        (Value::from("draw"), Value::from(true))
    );
}

#[test]
fn d4_a_failed_check_discards_the_element_which_is_still_spent_and_ends_the_spell() {
    // RULES D-4 and the concentration rule: interruption by a failed check.
    let mut duel = duel();
    ok(&mut duel, &alice(), "surge end");
    let mut dice = dice_rolling(&[2]);
    let events = cast(&mut duel, &bob(), "surge fire wind end", &mut dice).expect("accepted");
    let record = last_round(&duel);
    let bob_spell = &record.spells[1];
    assert!(bob_spell.interrupted);
    assert_eq!(bob_spell.checks, vec![Check { roll: 2, need: 4, passed: false }]);
    assert_eq!(bob_spell.tokens, vec![Token::Preconditioning(Preconditioning::Surge)]);
    assert_eq!(bob_spell.discarded, Some(Element::Fire));
    assert_eq!(duel.pools()[1].fire, 7, "the discarded Fire was spent");
    assert_eq!(duel.pools()[1].wind, 8, "the dropped Wind was never placed");
    assert_eq!(record.seeds, vec![dice.seed()], "the roll's seed is recorded (T-10)");
    let dropped = events.iter().find_map(|e| match e {
        DuelEvent::Step { placements, .. } if placements[1].interrupted => {
            Some(placements[1].dropped.clone())
        }
        _ => None,
    });
    assert_eq!(dropped, Some(vec![Token::Element(Element::Wind), Token::End]));
}

#[test]
fn passing_checks_continue_with_the_next_value_of_the_sequence() {
    let mut duel = duel();
    ok(&mut duel, &alice(), "surge end");
    let mut dice = dice_rolling(&[4, 6]);
    cast(&mut duel, &bob(), "surge fire wind end", &mut dice).expect("accepted");
    let bob_spell = &last_round(&duel).spells[1];
    assert!(!bob_spell.interrupted);
    assert_eq!(
        bob_spell.checks,
        vec![Check { roll: 4, need: 4, passed: true }, Check { roll: 6, need: 4, passed: true }]
    );
    assert_eq!(bob_spell.outcome.level, 2);
}

#[test]
fn d5_focused_casting_uses_the_focused_sequence() {
    // RULES D-5: default [3, 3, 2, 2, 2].
    let mut duel = duel();
    ok(&mut duel, &alice(), "surge end");
    let mut dice = dice_rolling(&[3]);
    cast(&mut duel, &bob(), "focus fire end", &mut dice).expect("accepted");
    assert_eq!(last_round(&duel).spells[1].checks, vec![Check { roll: 3, need: 3, passed: true }]);
    assert_eq!(DuelRules::default().focused, vec![3, 3, 2, 2, 2]);
}

#[test]
fn d8_past_the_end_of_the_sequence_the_last_value_repeats() {
    // RULES D-8
    let rules = DuelRules::default();
    let needs: Vec<u8> = (1..=8).map(|k| rules.need(false, k)).collect();
    assert_eq!(needs, vec![4, 4, 3, 2, 2, 2, 2, 2]);
    assert_eq!(rules.need(true, 1_000_000), 2);
    // Through the engine: a one-value sequence applies to every check.
    let mut duel = duel_with(DuelOptions { concentration: vec![1], ..DuelOptions::default() });
    ok(&mut duel, &alice(), "surge end");
    ok(&mut duel, &bob(), "surge fire wind fire wind end");
    let checks = &last_round(&duel).spells[1].checks;
    assert_eq!(checks.len(), 4);
    assert!(checks.iter().all(|c| c.need == 1 && c.passed));
}

#[test]
fn both_ending_at_the_same_step_make_no_checks() {
    let mut duel = duel();
    ok(&mut duel, &alice(), "surge fire end");
    ok(&mut duel, &bob(), "surge water end");
    let record = last_round(&duel);
    assert!(record.spells.iter().all(|s| s.checks.is_empty()));
    assert!(record.seeds.is_empty());
}

#[test]
fn overspeed_takes_one_step_less() {
    let mut duel = duel_with(steady());
    ok(&mut duel, &alice(), "overspeed fire wind end");
    let events = ok(&mut duel, &bob(), "surge water wind end");
    let steps: Vec<&[engine::Placement; 2]> = events
        .iter()
        .filter_map(|e| if let DuelEvent::Step { placements, .. } = e { Some(placements) } else { None })
        .collect();
    assert_eq!(
        steps[0][0].tokens,
        vec![Token::Preconditioning(Preconditioning::Overspeed), Token::Element(Element::Fire)]
    );
    // step 2: alice ends while bob places Wind, which needs a check.
    assert_eq!(steps[2][0].tokens, vec![Token::End]);
    assert!(steps[2][1].check.is_some());
    assert_eq!(steps.len(), 4);
}

#[test]
fn d9_a_silent_wizard_gets_power_surge_at_step_0_and_end_later() {
    // RULES D-9
    let mut duel = duel_with(steady());
    ok(&mut duel, &alice(), "surge fire end");
    assert_eq!(duel.next_timer(), Some(T0.plus(600)));
    let mut dice = Dice::from_seed(3);
    assert!(duel.fire_timer(T0.plus(599), &mut dice).is_empty(), "not due yet");
    let events = duel.fire_timer(T0.plus(600), &mut dice);
    let DuelEvent::Step { step: 0, placements, .. } = &events[0] else {
        panic!("step 0 resolves: {events:?}")
    };
    assert!(placements[1].timed_out);
    assert_eq!(placements[1].tokens, vec![Token::Preconditioning(Preconditioning::Surge)]);
    // step 1 resolves at once for alice? No: bob is still silent, so it waits again.
    assert_eq!(duel.round().step, 1);
    assert_eq!(duel.next_timer(), Some(T0.plus(1200)));
    let events = duel.fire_timer(T0.plus(1200), &mut dice);
    let DuelEvent::Step { step: 1, placements, .. } = &events[0] else {
        panic!("step 1 resolves: {events:?}")
    };
    assert_eq!(placements[1].tokens, vec![Token::End]);
    assert!(placements[1].timed_out);
    assert!(placements[0].check.is_some(), "alice's Fire faced bob's End");
    let record = last_round(&duel);
    assert_eq!(record.spells[1].timeouts, 2);
    assert_eq!(record.spells[1].tokens, vec![Token::Preconditioning(Preconditioning::Surge)]);
    assert_eq!(duel.track(), 1);
    assert_eq!(duel.finish(), None, "alice cast, so the duel goes on");
}

#[test]
fn d9_a_timeout_drops_a_lone_overspeed() {
    // RULES D-9
    let mut duel = duel();
    ok(&mut duel, &alice(), "overspeed");
    ok(&mut duel, &bob(), "surge");
    let events = duel.fire_timer(T0.plus(600), &mut Dice::from_seed(3));
    let DuelEvent::Step { placements, .. } = &events[0] else { panic!("a step: {events:?}") };
    assert_eq!(placements[0].tokens, vec![Token::Preconditioning(Preconditioning::Surge)]);
    assert_eq!(placements[0].dropped, vec![Token::Preconditioning(Preconditioning::Overspeed)]);
    assert!(!placements[1].timed_out);
}

#[test]
fn a_round_where_nobody_casts_abandons_the_duel() {
    let mut duel = duel();
    let mut dice = Dice::from_seed(3);
    duel.fire_timer(T0.plus(600), &mut dice);
    let events = duel.fire_timer(T0.plus(1200), &mut dice);
    assert!(events.contains(&DuelEvent::Finished(Finish { winner: None, reason: FinishReason::Abandoned })));
    assert!(duel.fire_timer(T0.plus(1800), &mut dice).is_empty());
}

#[test]
fn d10_a_seal_limits_the_opponents_next_spell() {
    // RULES D-10
    let mut duel = duel();
    ok(&mut duel, &alice(), "surge fire fire end");
    ok(&mut duel, &bob(), "surge water water end");
    assert_eq!(duel.seals()[1], Seal { positions: 1, elements: vec![Element::Water, Element::Thunder] });
    assert_eq!(duel.seals()[0], Seal { positions: 1, elements: vec![Element::Fire, Element::Earth] });
    let before = duel.clone();
    let refused = cast(&mut duel, &bob(), "surge thunder", &mut Dice::from_seed(1));
    assert!(matches!(refused, Err(DuelError::Sealed { element: Element::Thunder, position: 0, .. })));
    assert_eq!(duel, before);
    ok(&mut duel, &bob(), "surge earth thunder end");
}

#[test]
fn every_refusal_leaves_the_duel_unchanged() {
    let mut duel = duel();
    ok(&mut duel, &alice(), "surge fire");
    let cases: &[(&PlayerId, &str)] = &[
        (&alice(), "wind wind wind wind wind wind wind wind wind"),
        (&alice(), "water"),
        (&alice(), "focus"),
        (&alice(), "end wind"),
        (&bob(), "fire"),
        (&bob(), "overspeed end"),
        (&bob(), "surge void void"),
        (&bob(), "surge fyre"),
    ];
    for (who, tokens) in cases {
        let before = duel.clone();
        let result = cast(&mut duel, who, tokens, &mut Dice::from_seed(9));
        assert!(result.is_err(), "{who}: {tokens}");
        assert_eq!(duel, before, "{who}: {tokens}");
    }
    let before = duel.clone();
    let stranger = PlayerId::new("carol");
    assert!(matches!(
        duel.apply(&stranger, Role::Player, &DuelCommand::Concede, T0, &mut Dice::from_seed(1)),
        Err(DuelError::NotAPlayer { .. })
    ));
    assert_eq!(duel, before);
}

#[test]
fn a_complete_spell_takes_no_more_tokens_until_the_round_settles() {
    let mut duel = duel_with(steady());
    ok(&mut duel, &alice(), "surge end");
    ok(&mut duel, &bob(), "surge fire");
    // step 1: alice placed End, bob placed Fire (and passed his check); step 2 waits for bob.
    assert_eq!(duel.round().casters[0].state, SpellState::Harmonized);
    let before = duel.clone();
    assert_eq!(
        cast(&mut duel, &alice(), "wind", &mut Dice::from_seed(1)),
        Err(DuelError::SpellComplete { interrupted: false })
    );
    assert_eq!(duel, before);
    ok(&mut duel, &bob(), "wind end");
    assert_eq!(last_round(&duel).spells[1].checks.len(), 2);
}

#[test]
fn an_interruption_settles_the_round_at_once() {
    // The other spell was complete, so both are now: nothing waits for the dropped queue.
    let mut duel = duel();
    ok(&mut duel, &alice(), "surge fire wind");
    let mut dice = dice_rolling(&[1]);
    cast(&mut duel, &bob(), "surge end", &mut dice).expect("accepted");
    let record = last_round(&duel);
    assert!(record.spells[0].interrupted);
    assert_eq!(record.spells[0].discarded, Some(Element::Fire));
    assert_eq!(duel.round().number, 2);
    assert!(duel.round().casters[0].queue.is_empty(), "the dropped Wind is not carried over");
}

#[test]
fn the_game_over_refuses_everything() {
    let mut duel = duel();
    duel.apply(&bob(), Role::Player, &DuelCommand::Concede, T0, &mut Dice::from_seed(1))
        .expect("bob concedes");
    assert_eq!(duel.finish(), Some(Finish { winner: Some(0), reason: FinishReason::Conceded }));
    let before = duel.clone();
    let refused = cast(&mut duel, &alice(), "surge end", &mut Dice::from_seed(1));
    assert_eq!(refused, Err(DuelError::Over { result: "winner alice".into() }));
    let message = refused.expect_err("refused").to_string();
    assert!(message.contains("`!duel <player>`"), "{message}");
    assert_eq!(duel, before);
}

fn stop(duel: &mut Duel, who: &PlayerId, role: Role) -> Result<Vec<DuelEvent>, DuelError> {
    duel.apply(who, role, &DuelCommand::Stop, T0, &mut Dice::from_seed(1))
}

#[test]
fn stop_by_an_operator_or_game_master_ends_the_duel_with_no_winner() {
    for role in [Role::Operator, Role::GameMaster] {
        let mut duel = duel();
        ok(&mut duel, &alice(), "surge fire wind end");
        ok(&mut duel, &bob(), "surge end");
        assert!(duel.track() > 0, "alice leads, yet a stop makes no winner");
        let carol = PlayerId::new("carol");
        let events = stop(&mut duel, &carol, role).expect("stopped");
        assert_eq!(events, vec![DuelEvent::Stopped { by: carol.clone() }]);
        assert_eq!(duel.finish(), Some(Finish { winner: None, reason: FinishReason::Stopped }));
        assert_eq!(duel.next_timer(), None);
        let snapshot = duel.snapshot();
        assert_eq!(
            (snapshot["finished"].clone(), snapshot["winner"].clone()),
            (Value::Bool(true), Value::Null)
        );
        assert_eq!(snapshot["finish_reason"], "stopped");
        assert_eq!(Duel::restore(&snapshot).as_ref(), Ok(&duel));
        let said: Vec<String> =
            told(&duel, &events, false, Form::Full).iter().map(|a| a.text.plain()).collect();
        assert_eq!(said.len(), 1);
        assert!(said[0].contains("carol stopped the Duel; no winner"), "{said:?}");
        let status = render::status(&duel, None)[0].plain();
        assert!(status.contains("Finished: stopped, no winner."), "{status}");
        assert_eq!(
            cast(&mut duel, &alice(), "surge end", &mut Dice::from_seed(1)),
            Err(DuelError::Over { result: "stopped, no winner".into() })
        );
    }
}

#[test]
fn a_seated_operator_may_stop_too() {
    let mut duel = duel();
    stop(&mut duel, &alice(), Role::Operator).expect("an operator who plays may stop");
    assert_eq!(duel.finish().map(|f| f.reason), Some(FinishReason::Stopped));
}

#[test]
fn stop_by_a_player_is_refused_and_points_to_concede() {
    let mut duel = duel();
    ok(&mut duel, &alice(), "surge fire");
    for who in [alice(), PlayerId::new("carol")] {
        let before = duel.clone();
        let refused = stop(&mut duel, &who, Role::Player).expect_err("refused");
        assert_eq!(refused, DuelError::MayNotStop { actor: who.clone() });
        let message = refused.to_string();
        assert!(
            message.contains("Only room operators, game masters and bot admins can stop a Duel")
                && message.contains("`!concede`"),
            "{message}"
        );
        assert_eq!(duel, before);
    }
}

#[test]
fn a_stopped_snapshot_must_not_name_a_winner() {
    let mut duel = duel();
    stop(&mut duel, &alice(), Role::GameMaster).expect("stopped");
    let mut snapshot = duel.snapshot();
    snapshot["winner"] = Value::from("alice");
    assert!(Duel::restore(&snapshot).is_err());
    // Any other finished duel still needs its winner (or "draw").
    let mut duel = self::duel();
    duel.apply(&bob(), Role::Player, &DuelCommand::Concede, T0, &mut Dice::from_seed(1)).expect("concedes");
    let mut snapshot = duel.snapshot();
    snapshot["winner"] = Value::Null;
    assert!(Duel::restore(&snapshot).is_err());
}

#[test]
fn open_checks_seats_and_wizards() {
    let plugin = DuelPlugin::default();
    let duel = plugin.open_duel(&setup([Some("pyromancer"), None])).expect("known wizards");
    assert_eq!(duel.wizards()[0].name, "Pyromancer");
    assert_eq!(duel.wizards()[1].name, "Apprentice");
    assert_eq!(duel.pools()[0].fire, 12);
    assert!(matches!(
        plugin.open_duel(&setup([Some("pyromancr"), None])),
        Err(DuelError::UnknownWizard { suggestion: Some(s), .. }) if s == "Pyromancer"
    ));
    let mut one = setup([None, None]);
    one.seats.pop();
    assert_eq!(plugin.open_duel(&one).err(), Some(DuelError::Seats { count: 1 }));
    let mut same = setup([None, None]);
    same.seats[1].player = alice();
    assert_eq!(plugin.open_duel(&same).err(), Some(DuelError::SamePlayer(alice())));
    let refusal = plugin.open(&setup([Some("nobody"), None])).expect_err("refused");
    assert!(refusal.to_string().contains("Apprentice"), "{refusal}");
}

#[test]
fn the_snapshot_has_the_contract_fields_and_restores_exactly() {
    let mut duel = duel();
    ok(&mut duel, &alice(), "surge fire wind end");
    let mut dice = dice_rolling(&[5]);
    cast(&mut duel, &bob(), "focus water end", &mut dice).expect("accepted");
    ok(&mut duel, &alice(), "focus earth");
    let snapshot = duel.snapshot();
    assert_eq!(snapshot["players"], serde_json::json!(["alice", "bob"]));
    assert_eq!(snapshot["wizards"], serde_json::json!({"alice": "Apprentice", "bob": "Apprentice"}));
    assert_eq!(snapshot["finished"], false);
    assert_eq!(snapshot["winner"], Value::Null);
    assert_eq!(
        snapshot["pools"]["alice"],
        serde_json::json!({"water": 8, "fire": 7, "thunder": 8, "wind": 7, "earth": 8, "void": 4}),
        "queued Earth is not spent yet"
    );
    assert_eq!(snapshot["seals"]["bob"], serde_json::json!({"positions": 0, "elements": []}));
    let round = &snapshot["rounds"][0];
    let spell = &round["spells"]["alice"];
    assert_eq!(spell["tokens"], serde_json::json!(["surge", "fire", "wind"]));
    assert_eq!(spell["level"], 2);
    assert_eq!(spell["attribute"], serde_json::json!([]));
    assert_eq!(spell["power"], 6);
    assert_eq!(spell["countered"], false);
    assert_eq!(spell["checks"], serde_json::json!([{"roll": 5, "need": 4, "passed": true}]));
    assert_eq!(round["track_after"], 5);
    assert_eq!(snapshot["track"], 5);
    assert_eq!(round["seeds"], serde_json::json!([dice.seed()]));

    let restored = Duel::restore(&snapshot).expect("restores");
    assert_eq!(restored, duel);
    assert_eq!(restored.snapshot(), snapshot);
}

#[test]
fn the_table_refuses_a_public_cast_without_echoing_it() {
    let mut table = DuelPlugin::default().open(&setup([None, None])).expect("opens");
    let before = table.snapshot();
    let parsed = crate::grammar::read(COMMANDS, "cast surge fire thunderr").expect("reads");
    let action = Action {
        actor: &alice(),
        command: &parsed,
        typed: "!cast surge fire thunderr",
        private: false,
        now: T0,
        role: Role::Player,
    };
    let refusal = table.act(&action, &mut Dice::from_seed(1)).expect_err("public casts are refused");
    let text = refusal.to_string();
    assert!(text.contains("Don't reveal your spell"), "{text}");
    assert!(!text.contains("fire") && !text.contains("surge"), "no token is echoed: {text}");
    assert_eq!(table.snapshot(), before);
}

#[test]
fn the_table_reveals_steps_to_all_and_queues_only_to_their_owner() {
    let plugin = DuelPlugin::new(steady());
    let mut table = plugin.open(&setup([None, None])).expect("opens");
    assert!(!table.opening().is_empty());
    let act = |table: &mut Box<dyn Table>, who: &PlayerId, command: &str, private: bool| {
        let typed = format!("!{command}");
        let command = &crate::grammar::read(COMMANDS, command).expect("reads");
        let action = Action { actor: who, command, typed: &typed, private, now: T0, role: Role::Player };
        let events = table.act(&action, &mut Dice::from_seed(5)).expect("accepted");
        plugin.render(&events, &Presentation::default())
    };
    let acks = act(&mut table, &alice(), "cast surge fire wind end", true);
    assert_eq!(acks.len(), 1);
    assert_eq!(acks[0].to, Audience::Player(alice()));
    assert!(acks[0].text.plain().contains("Fire"));

    let public = act(&mut table, &bob(), "status", false);
    assert!(public.iter().all(|a| a.to == Audience::Table));
    assert!(public.iter().all(|a| !a.text.plain().contains("Fire")), "alice's queue stays hidden");
    let private = act(&mut table, &alice(), "status", true);
    assert!(private.iter().all(|a| a.to == Audience::Player(alice())));
    assert!(private.iter().any(|a| a.text.plain().contains("Fire")), "alice sees her own queue");

    let reveal = act(&mut table, &bob(), "cast surge water end", true);
    let lines: Vec<String> =
        reveal.iter().filter(|a| a.to == Audience::Table).map(|a| a.text.plain()).collect();
    assert!(lines.iter().any(|l| l.starts_with("Round 1, step 1: alice 🔥Fire · bob 💧Water")), "{lines:#?}");
    assert!(lines.iter().any(|l| l.contains("Round 1 settles")), "{lines:#?}");
    assert!(lines.iter().any(|l| l.contains("Round 2 begins")), "{lines:#?}");
}

#[test]
fn lobby_lists_the_wizards_with_pools_and_favours() {
    let plugin = DuelPlugin::default();
    let text = plugin.lobby("wizards").expect("the Duel answers !wizards").plain();
    assert!(text.contains("Apprentice") && text.contains("Pyromancer") && text.contains("+3"), "{text}");
    assert!(plugin.lobby("games").is_none());
}

/// What `events`, which `duel` has just gone through, say in `form`.
fn told(duel: &Duel, events: &[DuelEvent], private: bool, form: Form) -> Vec<Announcement> {
    render::events(&news::told(duel, events, private), &Presentation::of(form))
}

/// The plain text of what the table hears of `events` in `form`.
fn heard(duel: &Duel, events: &[DuelEvent], form: Form) -> Vec<String> {
    told(duel, events, true, form)
        .iter()
        .filter(|a| a.to == Audience::Table)
        .map(|a| a.text.plain())
        .collect()
}

#[test]
fn a_round_is_three_lines_in_the_compact_form_and_the_full_form_keeps_every_step() {
    let mut duel = duel();
    let queued = ok(&mut duel, &alice(), "surge fire fire wind water end");
    let said = told(&duel, &queued, true, Form::Full);
    assert_eq!(said.len(), 1, "the queue is private: {said:?}");
    assert_eq!(said[0].to, Audience::Player(alice()));
    assert_eq!(said, told(&duel, &queued, true, Form::Compact), "the same in both forms");
    let events = ok(&mut duel, &bob(), "surge water thunder earth fire end");

    let full = heard(&duel, &events, Form::Full);
    assert_eq!(full.len(), 11, "six steps, the settlement's four lines, the next round: {full:#?}");
    assert_eq!(full[1], "Round 1, step 1: alice 🔥Fire · bob 💧Water");
    assert!(full[10].starts_with("Round 2 begins"), "{full:#?}");

    let compact = heard(&duel, &events, Form::Compact);
    assert_eq!(
        compact,
        [
            "Round 1, steps 0–5: alice Power Surge 🔥Fire 🔥Fire 💨Wind 💧Water End · \
             bob Power Surge 💧Water ⚡Thunder 🪨Earth 🔥Fire End",
            "Round 1 settles: alice → level 4: base 16 + surge 8 + explosion 9 = power 33; attribute 🔥Fire · \
             bob → level 4: base 16 + surge 8 + explosion 16 = power 40. \
             Track moves 7 toward bob (alice 33 − bob 40); now 7 toward bob.",
            "Round 2 begins: send your spell to me privately (`!cast …`); each step waits at most \
             10 min. Seals (RULES D-10): bob's first 1 element position(s) may not be 💧Water or \
             ⚡Thunder.",
        ]
    );
    // Each line fits one IRC line (about 400 bytes of text on a real network) with room
    // for its formatting codes.
    for line in &compact {
        assert!(line.len() <= 300, "{} bytes: {line}", line.len());
    }
    // Nothing private is in either form twice or left out of one.
    let private = |form| -> Vec<Announcement> {
        told(&duel, &events, true, form).into_iter().filter(|a| a.to != Audience::Table).collect()
    };
    assert_eq!(private(Form::Full), private(Form::Compact));
}

#[test]
fn steps_revealed_one_at_a_time_are_one_line_each_in_both_forms() {
    let mut duel = duel();
    ok(&mut duel, &alice(), "surge fire end");
    let events = ok(&mut duel, &bob(), "surge");
    let only_step = ["Round 1, step 0: alice Power Surge · bob Power Surge"];
    assert_eq!(heard(&duel, &events, Form::Full), only_step);
    assert_eq!(heard(&duel, &events, Form::Compact), only_step);
}

#[test]
fn an_interrupted_spell_keeps_its_check_and_mark_in_the_compact_form() {
    let mut duel = duel_with(DuelOptions { concentration: vec![6], ..DuelOptions::default() });
    ok(&mut duel, &alice(), "surge fire wind end");
    let command = command::parse("cast surge water end").expect("parses");
    // bob ends at step 2 while alice places Wind: her check needs 6+, and a 1 fails.
    let events = duel.apply(&bob(), Role::Player, &command, T0, &mut dice_rolling(&[1])).expect("accepted");
    let said = told(&duel, &events, true, Form::Compact);
    let compact = heard(&duel, &events, Form::Compact);
    assert_eq!(compact.len(), 3, "{compact:#?}");
    assert!(
        compact[0].starts_with(
            "Round 1, steps 0–2: alice Power Surge 🔥Fire 💨Wind (concentration: rolled 1, needed 6+ ✗"
        ),
        "{compact:#?}"
    );
    assert!(compact[1].starts_with("Round 1 settles: alice (interrupted) → level 1"), "{compact:#?}");
    // Her dropped End is told to her alone, once, in either form.
    let dropped: Vec<&Announcement> =
        said.iter().filter(|a| a.text.plain().contains("concentration broke")).collect();
    assert_eq!(dropped.len(), 1, "{said:#?}");
    assert_eq!(dropped[0].to, Audience::Player(alice()));
    let full = told(&duel, &events, true, Form::Full);
    assert_eq!(full.iter().filter(|a| a.text.plain().contains("concentration broke")).count(), 1);
}

/// A token as it is written in JSON (`wind`, `surge`, `end`).
fn word(token: &Token) -> String {
    serde_json::to_value(token).ok().and_then(|v| v.as_str().map(str::to_owned)).expect("a token is a word")
}

/// Every string value in a JSON tree (not its keys: a pool's element names are keys).
fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(fields) => fields.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

/// Hidden moves stay hidden in the events themselves, not just in their text: a whole
/// duel is played through the `Table` API (alice queues each spell at once, bob casts a
/// token at a time and asks the room's `!status` meanwhile), and after each action
/// every table-audience event, serialised, is searched for the tokens alice still has
/// queued (and any a step dropped). A token word the room has not seen yet must not be
/// in it; her own private events do hold them.
#[test]
fn a_queued_token_never_reaches_a_table_event_before_its_reveal() {
    let plugin = DuelPlugin::new(DuelOptions::default());
    let mut table = plugin.open(&setup([None, None])).expect("opens");
    let mut sequence = 0;
    let mut act = |table: &mut Box<dyn Table>, who: &PlayerId, command: &str, private: bool| -> Vec<Event> {
        let typed = format!("!{command}");
        let command = &crate::grammar::read(COMMANDS, command).expect("reads");
        let action = Action { actor: who, command, typed: &typed, private, now: T0, role: Role::Player };
        sequence += 1;
        table.act(&action, &mut Dice::for_action(17, sequence)).unwrap_or_else(|e| panic!("{typed}: {e}"))
    };
    let queue = |table: &dyn Table| -> Vec<String> {
        let duel = Duel::restore(&table.snapshot()).expect("restores");
        duel.round().casters[0].queue.iter().map(word).collect()
    };
    let mut seen: Vec<String> = Vec::new();
    let mut checked = 0;
    let mut check = |told: &[Event], hidden: &[String]| {
        let mut public = Vec::new();
        for event in told {
            let json = serde_json::to_value(event).expect("serialisable");
            if event.to == Audience::Table {
                strings(&json["event"], &mut public);
            } else if event.to == Audience::Player(alice()) && !hidden.is_empty() {
                let mut own = Vec::new();
                strings(&json["event"], &mut own);
                if let Some(DuelNews::Queued { .. } | DuelNews::Queue { .. }) = event.get::<DuelNews>() {
                    assert!(hidden.iter().all(|t| own.contains(t)), "her queue {hidden:?} in {own:?}");
                }
            }
        }
        for token in hidden.iter().filter(|t| !seen.contains(t)) {
            assert!(!public.contains(token), "queued `{token}` reached the table: {public:?}");
            checked += 1;
        }
        seen.extend(public);
    };
    check(&table.opening(), &[]);
    for round in 0..8 {
        if table.is_finished() {
            break;
        }
        // Her spell in an order the seals allow (RULES D-10).
        let orders = ["wind water thunder", "thunder wind water", "water thunder wind", "thunder water wind"];
        let told = orders
            .iter()
            .find_map(|order| {
                let typed = format!("!cast surge {order} end");
                let command = crate::grammar::read(COMMANDS, &typed[1..]).expect("reads");
                let action = Action {
                    actor: &alice(),
                    command: &command,
                    typed: &typed,
                    private: true,
                    now: T0,
                    role: Role::Player,
                };
                table.act(&action, &mut Dice::from_seed(1)).ok()
            })
            .expect("some order is not sealed");
        check(&told, &queue(table.as_ref()));
        let element = if round < 4 { "earth" } else { "fire" };
        for token in ["focus", element, element, "end"] {
            let told = act(&mut table, &bob(), "status", false);
            check(&told, &queue(table.as_ref()));
            let told = act(&mut table, &alice(), "status", true);
            check(&told, &queue(table.as_ref()));
            let told = act(&mut table, &bob(), &format!("cast {token}"), true);
            // Queued tokens a failed check dropped are never revealed (but for `end`: bob
            // places his in that very step).
            let mut hidden = queue(table.as_ref());
            for event in &told {
                if let Some(DuelNews::Dropped { tokens, .. }) = event.get::<DuelNews>() {
                    hidden.extend(tokens.iter().filter(|t| **t != Token::End).map(word));
                }
            }
            check(&told, &hidden);
            if table.is_finished() {
                break;
            }
        }
    }
    if !table.is_finished() {
        act(&mut table, &bob(), "concede", false);
    }
    assert!(table.is_finished());
    assert!(checked >= 10, "only {checked} hidden tokens were checked");
}

/// A duel's ending as the table says it, and as its plugin's reader reads it from the
/// events the journal keeps: the same.
fn ending_told(duel: &Duel, events: &[DuelEvent]) -> Option<crate::ending::Ending> {
    let mut reader = DuelPlugin::default().ending_reader().expect("a Duel ends with a result");
    let read: Vec<_> =
        news::told(duel, events, false).iter().filter_map(|event| reader.read(&event.record())).collect();
    let table = DuelTable { duel: duel.clone() };
    assert_eq!(read.first(), table.ending().as_ref(), "the reader and the table agree");
    assert_eq!(read.len(), usize::from(table.ending().is_some()));
    assert_eq!(reader.done(), duel.finish().is_some(), "a finished duel tells nothing more");
    table.ending()
}

fn place(player: PlayerId, place: u32, score: i128) -> crate::ending::Place {
    crate::ending::Place { player, place, score, tiebreak: 0, choice: Some("Apprentice".into()) }
}

#[test]
fn d1_d12_an_explosion_that_pushes_the_track_past_30_wins_first_place() {
    // RULES D-12: Fire Wind Water Thunder is 16 + 16 = 32; against bob's 1 the track
    // moves 31 toward alice: D-1, she wins, first; bob second.
    let mut duel = duel_with(steady());
    ok(&mut duel, &alice(), "focus fire wind water thunder end");
    let events = ok(&mut duel, &bob(), "surge water end");
    assert_eq!(last_round(&duel).spells[0].outcome.power, 32, "the explosion");
    assert_eq!(duel.finish(), Some(Finish { winner: Some(0), reason: FinishReason::Track }));
    let ending = ending_told(&duel, &events).expect("a won duel has an ending");
    assert_eq!(ending.places, vec![place(alice(), 1, 31), place(bob(), 2, -31)]);
    assert_eq!((ending.round, ending.conceded), (1, false));
    assert_eq!(ending.winners(), vec![&alice()]);
    assert_eq!(DuelPlugin::default().kind(), crate::ending::TableKind::Challenge { seats: 2 });
}

#[test]
fn d2_a_dry_pool_with_the_track_at_0_is_a_draw_both_first() {
    // RULES D-2
    let mut duel = duel_with(steady());
    duel.pools[1] = Pool { water: 1, ..Pool::default() };
    ok(&mut duel, &alice(), "surge fire end");
    let events = ok(&mut duel, &bob(), "surge water end");
    let ending = ending_told(&duel, &events).expect("a draw is a result");
    assert_eq!(ending.places, vec![place(alice(), 1, 0), place(bob(), 1, 0)]);
    assert_eq!(ending.winners(), vec![&alice(), &bob()]);
}

#[test]
fn a_conceded_duel_is_won_by_the_other_wizard_and_a_stopped_one_has_no_ending() {
    let mut conceded = duel();
    let events = conceded
        .apply(&alice(), Role::Player, &DuelCommand::Concede, T0, &mut Dice::from_seed(1))
        .expect("alice concedes");
    let ending = ending_told(&conceded, &events).expect("a conceded duel has a result");
    assert_eq!(ending.places, vec![place(alice(), 2, 0), place(bob(), 1, 0)]);
    assert!(ending.conceded);
    let mut stopped = duel();
    let events = stop(&mut stopped, &PlayerId::new("carol"), Role::Operator).expect("stopped");
    assert_eq!(ending_told(&stopped, &events), None, "`!stop` ends it with no result");
    let running = duel();
    assert_eq!(ending_told(&running, &[]), None);
}
