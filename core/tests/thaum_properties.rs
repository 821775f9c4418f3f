//! Property tests of the Thaum engine's invariants over random play: random actors (some
//! not players), random commands (valid, invalid, huge numbers, unicode), random clock
//! jumps that fire the phase timer, each command with a random role (player, room
//! operator, game master of every table). After every step: Thaums stay in [-10, 10],
//! counts never overflow (overflow checks are on in tests, so a wrap would panic), the
//! table keeps at least one game master and every game master plays at it, a refused
//! command leaves the snapshot unchanged, a game-master command is accepted only from
//! someone allowed to use it, and the same seed replays the same game.

use proptest::prelude::*;
use serde_json::Value;
use spellbridge_core::Language;
use spellbridge_core::games::thaum::command::parse;
use spellbridge_core::games::thaum::state::{Thaum, ThaumState};
use spellbridge_core::games::thaum::{ThaumCommand, ThaumOptions, ThaumPlugin, engine};
use spellbridge_core::grammar::read_for;
use spellbridge_core::time::DAY;
use spellbridge_core::words::Adjustment;
use spellbridge_core::{
    Action, Dice, GamePlugin, PlayerId, Refusal, Role, RoomId, Seat, TableSetup, Timestamp,
};

const ACTORS: [&str; 5] = ["alice", "bob", "carol", "dave", "zed"];

#[derive(Clone, Debug)]
enum Step {
    Say { actor: usize, text: String, role: Role },
    Clock { seconds: i64 },
}

fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        12 => (0u32..4).prop_map(|n| n.to_string()),
        1 => prop::sample::select(vec![
            "1000000000", "1000000001", "4294967296", "99999999999999999999999", "-3", "+2", "-2", "1.5",
        ])
        .prop_map(str::to_owned),
    ]
}

fn thaum_word() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => prop::sample::select(vec!["fire", "water", "earth", "air", "FIRE", "火"]).prop_map(str::to_owned),
        1 => prop::sample::select(vec!["fier", "plasma", ""]).prop_map(str::to_owned),
    ]
}

fn player_word() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => prop::sample::select(ACTORS.to_vec()).prop_map(str::to_owned),
        1 => prop::sample::select(vec!["Bob", "bob:", "@alice", "table", "ñ", "💥"]).prop_map(str::to_owned),
    ]
}

fn adjustment_word() -> impl Strategy<Value = String> {
    prop_oneof![
        (prop::sample::select(vec!["", "+", "-"]), 0u32..12).prop_map(|(sign, n)| format!("{sign}{n}")),
        number(),
    ]
}

/// Mostly well-formed commands (so spells are really cast), some malformed, some noise.
fn command_text() -> impl Strategy<Value = String> {
    let amount_and_thaum = prop::sample::select(vec!["gather", "gather power", "blood", "blood magic"]);
    let at_player = prop::sample::select(vec!["bend", "summon", "tornado"]);
    let any_word = prop_oneof![number(), thaum_word(), player_word(), Just("next".to_owned())];
    let verbs = vec![
        "join",
        "gather",
        "blood",
        "alchemy",
        "bend",
        "summon",
        "tornado",
        "status",
        "phase",
        "instability",
        "coins",
        "add",
        "gm",
        "stop",
        "sheet",
        "frobnicate",
    ];
    prop_oneof![
        4 => Just("join".to_owned()),
        12 => (amount_and_thaum, number(), thaum_word()).prop_map(|(v, n, t)| format!("{v} {n} {t}")),
        6 => (number(), thaum_word(), thaum_word()).prop_map(|(n, a, b)| format!("alchemy {n} {a} {b}")),
        12 => (at_player, number(), player_word()).prop_map(|(v, n, p)| format!("{v} {n} {p}")),
        2 => prop::option::of(player_word()).prop_map(|p| format!("status {}", p.unwrap_or_default())),
        4 => Just("phase next".to_owned()),
        2 => adjustment_word().prop_map(|a| format!("instability {a}")),
        2 => (player_word(), adjustment_word()).prop_map(|(p, a)| format!("coins {p} {a}")),
        2 => player_word().prop_map(|p| format!("add {p}")),
        3 => (prop::sample::select(vec!["add", "remove", "ADD", "Remove"]), player_word())
            .prop_map(|(v, p)| format!("gm {v} {p}")),
        1 => prop::sample::select(vec!["gm", "gm list", "gm LIST", "gm list now", "gm promote bob", "gm add"])
            .prop_map(str::to_owned),
        1 => prop::sample::select(vec!["stop", "stop now"]).prop_map(str::to_owned),
        4 => (prop::sample::select(verbs), prop::collection::vec(any_word, 0..4))
            .prop_map(|(verb, args)| format!("{verb} {}", args.join(" "))),
        1 => any::<String>(),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        10 => (0..ACTORS.len(), command_text(), role())
            .prop_map(|(actor, text, role)| Step::Say { actor, text, role }),
        1 => prop_oneof![0i64..DAY, Just(3 * DAY), Just(7 * DAY), Just(30 * DAY)].prop_map(|seconds| Step::Clock { seconds }),
    ]
}

/// Mostly players; now and then a room operator or a game master of every table.
fn role() -> impl Strategy<Value = Role> {
    prop_oneof![8 => Just(Role::Player), 1 => Just(Role::Operator), 1 => Just(Role::GameMaster)]
}

/// Plays `steps` on a fresh table; returns every message said and the final snapshot.
fn play(steps: &[Step], seed: u64, options: ThaumOptions) -> Result<(Vec<String>, Value), TestCaseError> {
    let start = Timestamp::CONSOLE_EPOCH;
    let setup = TableSetup {
        room: RoomId::new("r"),
        seats: vec![Seat { player: PlayerId::new("alice"), choice: None }],
        now: start,
    };
    let mut table = ThaumPlugin::new(options).open(&setup).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let mut now = start;
    let mut said = Vec::new();
    let mut accepted = 0usize;
    for (sequence, step) in steps.iter().enumerate() {
        let mut dice = Dice::for_action(seed, sequence as u64);
        match step {
            Step::Say { actor, text, role } => {
                let actor = PlayerId::new(ACTORS[*actor]);
                let typed = format!("!{text}");
                let before = table.snapshot();
                // Read as the daemon reads it; a command that does not read is refused.
                let acted = read_for(&*table, &actor, text).and_then(|command| {
                    let action = Action {
                        actor: &actor,
                        command: &command,
                        typed: &typed,
                        private: false,
                        now,
                        role: *role,
                    };
                    table.act(&action, &mut dice)
                });
                match acted {
                    Ok(out) => {
                        let command = parse(text).map_err(|e| TestCaseError::fail(e.to_string()))?;
                        let state: ThaumState =
                            serde_json::from_value(before).map_err(|e| TestCaseError::fail(e.to_string()))?;
                        prop_assert!(
                            engine::may_use(&state, &actor, *role, &command),
                            "`{}` by {} ({:?}) was accepted",
                            text,
                            actor,
                            role
                        );
                        if !command.is_query() {
                            accepted += 1;
                        }
                        said.extend(rendered(&out));
                    }
                    Err(refusal) => {
                        prop_assert_eq!(&table.snapshot(), &before, "refused `{}` changed the state", text);
                        let text = match refusal {
                            Refusal::UnknownCommand(word) => format!("unknown {word}"),
                            said => said.text(Language::En).unwrap_or_default().plain(),
                        };
                        prop_assert!(!text.is_empty());
                        said.push(text);
                    }
                }
            }
            Step::Clock { seconds } => {
                now = now.plus(*seconds);
                while let Some(at) = table.next_timer().filter(|at| *at <= now) {
                    said.extend(rendered(&table.fire_timer(at, &mut dice)));
                }
            }
        }
        check_invariants(&table.snapshot())?;
    }
    let snapshot = table.snapshot();
    prop_assert_eq!(snapshot["history"].as_array().map(Vec::len), Some(accepted));
    Ok((said, snapshot))
}

fn check_invariants(snapshot: &Value) -> Result<(), TestCaseError> {
    let state: ThaumState =
        serde_json::from_value(snapshot.clone()).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert!(state.validate().is_ok());
    prop_assert!(state.phase >= 1 && state.season >= 1);
    for (player, sheet) in &state.players {
        for thaum in Thaum::ALL {
            let v = sheet.thaums.get(thaum);
            prop_assert!((-10..=10).contains(&v), "{}'s {} is {}", player, thaum, v);
        }
        prop_assert!(sheet.coins == 0 || sheet.debt == 0);
    }
    for (i, game_master) in state.game_masters.iter().enumerate() {
        prop_assert!(state.players.contains_key(game_master), "game master {} plays here", game_master);
        prop_assert!(!state.game_masters[..i].contains(game_master), "{} listed twice", game_master);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_play_keeps_the_invariants_and_replays_exactly(
        steps in prop::collection::vec(step(), 1..80),
        seed in any::<u64>(),
        debt in any::<bool>(),
        scales in any::<bool>(),
    ) {
        let options = ThaumOptions { coin_debt: debt, summoning_scales_with_mana: scales, ..ThaumOptions::default() };
        let first = play(&steps, seed, options)?;
        let again = play(&steps, seed, options)?;
        prop_assert_eq!(&first, &again, "same seed, same game");
        // The final snapshot restores to the same table.
        let restored = ThaumPlugin::default().restore(&first.1).map_err(TestCaseError::fail)?;
        prop_assert_eq!(restored.snapshot(), first.1);
    }

    #[test]
    fn parse_never_panics(text in any::<String>()) {
        let _ = parse(&text);
    }

    #[test]
    fn parse_never_panics_on_near_commands(verb in "(?i)(gather|blood|alchemy|bend|summon|tornado|coins|instability|phase|status|add|gm)", rest in "\\PC{0,30}") {
        let _ = parse(&format!("{verb} {rest}"));
    }
}

fn typed_command() -> impl Strategy<Value = ThaumCommand> {
    let mana = prop_oneof![4 => 0u32..5, 1 => any::<u32>()];
    let thaum = prop::sample::select(Thaum::ALL.to_vec());
    let player = prop::sample::select(vec!["alice", "bob", "carol", "zed", "ALICE"]).prop_map(PlayerId::new);
    let adjustment = prop_oneof![
        any::<u32>().prop_map(Adjustment::Set),
        any::<u32>().prop_map(Adjustment::Add),
        any::<u32>().prop_map(Adjustment::Take),
        (0u32..12).prop_map(Adjustment::Set),
    ];
    prop_oneof![
        4 => Just(ThaumCommand::Join),
        4 => (mana.clone(), thaum.clone()).prop_map(|(mana, thaum)| ThaumCommand::Gather { mana, thaum }),
        4 => (mana.clone(), thaum.clone()).prop_map(|(amount, thaum)| ThaumCommand::Blood { amount, thaum }),
        4 => (mana.clone(), thaum.clone(), thaum).prop_map(|(mana, first, second)| ThaumCommand::Alchemy {
            mana,
            first,
            second
        }),
        4 => (mana.clone(), player.clone()).prop_map(|(mana, defender)| ThaumCommand::Bend { mana, defender }),
        4 => (mana.clone(), player.clone()).prop_map(|(mana, partner)| ThaumCommand::Summon { mana, partner }),
        4 => (mana, player.clone()).prop_map(|(mana, target)| ThaumCommand::Tornado { mana, target }),
        4 => Just(ThaumCommand::PhaseNext),
        4 => adjustment.clone().prop_map(ThaumCommand::Instability),
        4 => (player.clone(), adjustment).prop_map(|(player, change)| ThaumCommand::Coins { player, change }),
        4 => player.clone().prop_map(|player| ThaumCommand::Add { player }),
        4 => player.clone().prop_map(|player| ThaumCommand::GmAdd { player }),
        4 => player.prop_map(|player| ThaumCommand::GmRemove { player }),
        2 => Just(ThaumCommand::GmList),
        1 => Just(ThaumCommand::Stop),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// The typed engine, with numbers no parser would produce (up to u32::MAX).
    #[test]
    fn typed_engine_refusals_change_nothing(
        steps in prop::collection::vec((prop::sample::select(vec!["alice", "bob", "carol", "zed"]), role(), typed_command()), 1..60),
        debt in any::<bool>(),
    ) {
        let options = ThaumOptions { coin_debt: debt, ..ThaumOptions::default() };
        let (mut state, _) = engine::open(&PlayerId::new("alice"), &options, Timestamp::CONSOLE_EPOCH);
        for (i, (actor, role, command)) in steps.iter().enumerate() {
            let before = state.clone();
            let actor = PlayerId::new(*actor);
            let mut dice = Dice::from_seed(i as u64);
            let result = engine::apply(&mut state, &options, &actor, *role, command, Timestamp::CONSOLE_EPOCH, &mut dice);
            if result.is_err() {
                prop_assert_eq!(&state, &before, "refused {:?} changed the state", command);
            } else if command.game_master_only() {
                // Only a game master of the table or of every table; `!stop` also an operator.
                let operator_stop = *role == Role::Operator && *command == ThaumCommand::Stop;
                prop_assert!(
                    before.is_game_master(&actor) || *role == Role::GameMaster || operator_stop,
                    "{:?} by {} ({:?}) was accepted", command, actor, role
                );
            }
            prop_assert!(!state.game_masters.is_empty());
            for sheet in state.players.values() {
                prop_assert!(sheet.thaums.values().iter().all(|v| (-10..=10).contains(v)));
            }
        }
    }
}

/// What `events` say, as plain text.
fn rendered(events: &[spellbridge_core::Event]) -> Vec<String> {
    use spellbridge_core::GamePlugin;
    let plugin = spellbridge_core::games::thaum::ThaumPlugin::default();
    plugin.render(events, &spellbridge_core::Presentation::default()).iter().map(|a| a.text.plain()).collect()
}
