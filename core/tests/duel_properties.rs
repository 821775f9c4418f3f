//! Property tests of the Duel engine over random `!cast` sequences and timer firings for
//! both players: pools only ever lose what was placed, the track is the sum of the round
//! power differences, a refused command changes nothing (`!concede` and `!stop` too, the
//! latter with a random role), the same seeds give the same game, and a duel of real
//! spells always ends by RULES D-1 or D-2. Also: the command parser never panics on any
//! text.

use proptest::prelude::*;
use serde_json::Value;

use spellbridge_core::games::duel::command::parse;
use spellbridge_core::games::duel::element::conflicts;
use spellbridge_core::games::duel::{
    Duel, DuelCommand, DuelOptions, DuelPlugin, Element, Finish, FinishReason, Preconditioning, Token,
};
use spellbridge_core::{Dice, PlayerId, Role, Seat, TableSetup, Timestamp};

const T0: Timestamp = Timestamp::CONSOLE_EPOCH;
const WORDS: [&str; 11] =
    ["surge", "focus", "overspeed", "counter", "water", "fire", "thunder", "wind", "earth", "void", "end"];

fn players() -> [PlayerId; 2] {
    [PlayerId::new("alice"), PlayerId::new("bob")]
}

fn new_duel(wizards: [&str; 2]) -> Duel {
    let [a, b] = players();
    let setup = TableSetup {
        room: "#duel".into(),
        seats: vec![
            Seat { player: a, choice: Some(wizards[0].to_owned()) },
            Seat { player: b, choice: Some(wizards[1].to_owned()) },
        ],
        now: T0,
    };
    DuelPlugin::new(DuelOptions::default()).open_duel(&setup).expect("shipped wizards")
}

/// One thing a player or the clock does.
#[derive(Clone, Debug)]
enum Op {
    /// Random words after `!cast` (mostly refused).
    Junk(usize, Vec<usize>),
    /// A valid spell built from the state, driven by these choices.
    Spell(usize, Vec<u8>),
    /// The step timeout fires.
    Timer,
    /// `!status`.
    Status(usize),
    /// `!stop` by this seat or a spectator (2), with this role.
    Stop(usize, Role),
    /// `!concede` by this seat or a spectator (2).
    Concede(usize),
}

fn op() -> impl Strategy<Value = Op> {
    let role = prop_oneof![6 => Just(Role::Player), 1 => Just(Role::Operator), 1 => Just(Role::GameMaster)];
    prop_oneof![
        40 => (0..2usize, prop::collection::vec(0..WORDS.len(), 0..6)).prop_map(|(s, w)| Op::Junk(s, w)),
        60 => (0..2usize, prop::collection::vec(any::<u8>(), 1..8)).prop_map(|(s, c)| Op::Spell(s, c)),
        30 => Just(Op::Timer),
        10 => (0..2usize).prop_map(Op::Status),
        // Rare, as an accepted one ends the duel; a player's `!stop` is refused.
        2 => (0..3usize, role).prop_map(|(who, role)| Op::Stop(who, role)),
        1 => (0..3usize).prop_map(Op::Concede),
    ]
}

/// A spell that the duel accepts for `seat` now, chosen by `choices` (a pre-conditioning
/// if none is placed, then elements that respect conflicts, seal and pool, then `end`),
/// or None when the seat cannot cast.
fn valid_spell(duel: &Duel, seat: usize, choices: &[u8]) -> Option<Vec<Token>> {
    let caster = &duel.round().casters[seat];
    if caster.is_complete() || caster.queue.contains(&Token::End) {
        return None;
    }
    let mut tokens = Vec::new();
    let mut pre = caster.preconditioning.or_else(|| caster.queue.front().and_then(|t| t.preconditioning()));
    if pre.is_none() {
        let p = [
            Preconditioning::Surge,
            Preconditioning::Focus,
            Preconditioning::Overspeed,
            Preconditioning::Counter,
        ][usize::from(choices[0]) % 4];
        pre = Some(p);
        tokens.push(Token::Preconditioning(p));
    }
    let mut elements: Vec<Element> = caster.elements.clone();
    let mut pool = duel.pools()[seat];
    for token in &caster.queue {
        if let Some(e) = token.element() {
            elements.push(e);
            pool.take(e);
        }
    }
    let seal = &duel.seals()[seat];
    let wanted = 1 + usize::from(choices.get(1).copied().unwrap_or(0)) % 5;
    for choice in choices.iter().skip(2).chain(std::iter::repeat(&7)).take(wanted) {
        let position = u32::try_from(elements.len()).expect("short spells");
        let options: Vec<Element> = Element::ALL
            .into_iter()
            .filter(|e| pool.get(*e) > 0)
            .filter(|e| elements.last().is_none_or(|last| !conflicts(*last, *e)))
            .filter(|e| !seal.forbids(position, *e))
            .collect();
        let Some(e) = options.get(usize::from(*choice) % options.len().max(1)).copied() else { break };
        pool.take(e);
        elements.push(e);
        tokens.push(Token::Element(e));
    }
    let overspeed_without_element = pre == Some(Preconditioning::Overspeed)
        && elements.is_empty()
        && tokens.last().is_some_and(|t| t.element().is_none());
    if overspeed_without_element {
        // Overspeed needs an element; with none available, cast a plain Surge instead.
        if tokens.first() == Some(&Token::Preconditioning(Preconditioning::Overspeed)) {
            tokens[0] = Token::Preconditioning(Preconditioning::Surge);
        } else {
            return None;
        }
    }
    tokens.push(Token::End);
    Some(tokens)
}

/// Runs `ops`, checking after each that a refusal changed nothing. Returns the duel.
fn play(ops: &[Op], table_seed: u64) -> Duel {
    let mut duel = new_duel(["Apprentice", "Pyromancer"]);
    let [a, b] = players();
    let players = [a, b, PlayerId::new("carol")];
    let mut now = T0;
    for (sequence, op) in ops.iter().enumerate() {
        if duel.finish().is_some() {
            break;
        }
        let mut dice = Dice::for_action(table_seed, sequence as u64);
        let before: Value = duel.snapshot();
        let result = match op {
            Op::Timer => {
                if let Some(at) = duel.next_timer() {
                    now = now.max(at);
                    duel.fire_timer(now, &mut dice);
                }
                Ok(Vec::new())
            }
            Op::Status(seat) => {
                duel.apply(&players[*seat], Role::Player, &DuelCommand::Status, now, &mut dice)
            }
            Op::Stop(who, role) => {
                let result = duel.apply(&players[*who], *role, &DuelCommand::Stop, now, &mut dice);
                let stopped = duel.finish() == Some(Finish { winner: None, reason: FinishReason::Stopped });
                assert_eq!(result.is_ok(), *role != Role::Player, "{op:?}: {result:?}");
                assert_eq!(stopped, result.is_ok(), "{op:?}");
                result
            }
            Op::Concede(who) => {
                duel.apply(&players[*who], Role::Player, &DuelCommand::Concede, now, &mut dice)
            }
            Op::Junk(seat, words) => {
                let text: Vec<&str> = words.iter().map(|w| WORDS[*w]).collect();
                match parse(&format!("cast {}", text.join(" "))) {
                    Ok(command) => duel.apply(&players[*seat], Role::Player, &command, now, &mut dice),
                    Err(_) => continue,
                }
            }
            Op::Spell(seat, choices) => match valid_spell(&duel, *seat, choices) {
                Some(tokens) => {
                    let result = duel.apply(
                        &players[*seat],
                        Role::Player,
                        &DuelCommand::Cast(tokens.clone()),
                        now,
                        &mut dice,
                    );
                    assert!(result.is_ok(), "a valid spell {tokens:?} was refused: {result:?}");
                    result
                }
                None => continue,
            },
        };
        if result.is_err() {
            assert_eq!(duel.snapshot(), before, "a refused {op:?} changed the duel");
        }
        check_invariants(&duel);
    }
    duel
}

fn spent(tokens: &[Token], discarded: Option<Element>) -> u64 {
    let placed = tokens.iter().filter(|t| t.element().is_some()).count();
    u64::try_from(placed).expect("small") + u64::from(discarded.is_some())
}

fn check_invariants(duel: &Duel) {
    // The snapshot rebuilds the duel exactly.
    assert_eq!(Duel::restore(&duel.snapshot()).as_ref(), Ok(duel));
    // The track is the sum of the round power differences, and the last record's track.
    let sum: i64 = duel
        .rounds()
        .iter()
        .map(|r| {
            let p = |s: usize| i64::try_from(r.spells[s].outcome.power).expect("small power");
            p(0) - p(1)
        })
        .sum();
    assert_eq!(duel.track(), sum);
    assert_eq!(duel.rounds().last().map_or(0, |r| r.track_after), duel.track());
    // Pools lose exactly what was placed (kept or discarded), never more.
    for seat in 0..2 {
        let start = duel.wizards()[seat].pool.total();
        let recorded: u64 =
            duel.rounds().iter().map(|r| spent(&r.spells[seat].tokens, r.spells[seat].discarded)).sum();
        let caster = &duel.round().casters[seat];
        let current =
            u64::try_from(caster.elements.len()).expect("small") + u64::from(caster.discarded.is_some());
        let current =
            if duel.rounds().last().is_some_and(|r| r.number == duel.round().number) { 0 } else { current };
        assert_eq!(duel.pools()[seat].total() + recorded + current, start, "seat {seat}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn random_play_keeps_the_invariants(ops in prop::collection::vec(op(), 1..120), seed in any::<u64>()) {
        play(&ops, seed);
    }

    #[test]
    fn the_same_seeds_give_the_same_game(ops in prop::collection::vec(op(), 1..80), seed in any::<u64>()) {
        prop_assert_eq!(play(&ops, seed).snapshot(), play(&ops, seed).snapshot());
    }

    #[test]
    fn a_duel_of_real_spells_ends_by_the_track_or_a_dry_pool(
        choices in prop::collection::vec(any::<u8>(), 8..40),
        seed in any::<u64>(),
    ) {
        // Each round each wizard places at least one element (kept or discarded), so with
        // 44 elements a side the duel ends within 44 rounds (RULES D-1, D-2).
        let mut ops = Vec::new();
        for round in 0..50 {
            for seat in 0..2 {
                let at = (round * 2 + seat) % choices.len();
                let mut spell = choices[at..].to_vec();
                spell.extend_from_slice(&choices[..at]);
                spell[0] %= 2; // Surge or Focus: always castable, with or without elements
                ops.push(Op::Spell(seat, spell));
            }
        }
        let duel = play(&ops, seed);
        let finish = duel.finish();
        prop_assert!(finish.is_some(), "still running after {} rounds", duel.rounds().len());
        let reason = finish.map(|f| f.reason);
        prop_assert!(matches!(reason, Some(FinishReason::Track | FinishReason::PoolEmpty)), "{reason:?}");
    }

    #[test]
    fn parse_never_panics(text in any::<String>()) {
        let _ = parse(&text);
        let _ = parse(&format!("cast {text}"));
    }

    #[test]
    fn parse_never_panics_on_token_like_text(text in "(cast|status|concede|stop)( (surge|fire|水|火风|虚无|full|counter|end|x|,|，)){0,8}") {
        let _ = parse(&text);
    }
}
