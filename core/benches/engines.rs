//! Engine benchmarks: actions applied per second on each game's typed engine (commands are
//! parsed beforehand, as the router's hot path is the engine, not the parser).
//!
//! Run one game's group with `cargo bench -p spellbridge-core --bench engines -- thaum`.

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use spellbridge_core::games::thaum::{ThaumCommand, ThaumOptions, engine, parse};
use spellbridge_core::{Dice, PlayerId, Role, Timestamp};

/// Ten phases of a four-player Thaum table: each player gathers, bleeds, transmutes and
/// casts at the others; someone asks for status; the game master ends the phase (so Mana
/// keeps coming and the loop rolls over into a new season once).
fn thaum_script(players: &[PlayerId; 4]) -> Vec<(PlayerId, ThaumCommand)> {
    let thaums = ["fire", "water", "earth", "air"];
    let mut script = Vec::new();
    for phase in 0..10 {
        for (i, player) in players.iter().enumerate() {
            let other = &players[(i + 1 + phase) % players.len()];
            let x = thaums[(i + phase) % 4];
            let y = thaums[(i + phase + 1) % 4];
            let spell = match (i + phase) % 3 {
                0 => format!("bend 1 {other}"),
                1 => format!("summon 0 {other}"),
                _ => format!("tornado 1 {other}"),
            };
            for text in [format!("gather 1 {x}"), format!("blood 2 {y}"), format!("alchemy 1 {x} {y}"), spell]
            {
                script.push((player.clone(), text));
            }
        }
        script.push((players[phase % 4].clone(), "status".to_owned()));
        script.push((players[0].clone(), "phase next".to_owned()));
    }
    script
        .into_iter()
        .filter_map(|(player, text)| parse(&text).ok().map(|command| (player, command)))
        .collect()
}

fn thaum_benches(c: &mut Criterion) {
    let options = ThaumOptions::default();
    let now = Timestamp::CONSOLE_EPOCH;
    let players = ["alice", "bob", "carol", "dave"].map(PlayerId::new);
    let (mut start, _) = engine::open(&players[0], &options, now);
    for player in &players[1..] {
        let _ = engine::apply(
            &mut start,
            &options,
            player,
            Role::Player,
            &ThaumCommand::Join,
            now,
            &mut Dice::from_seed(0),
        );
    }
    let script = thaum_script(&players);

    // How realistic is the mix: most actions should be accepted.
    let mut state = start.clone();
    let accepted = script
        .iter()
        .enumerate()
        .filter(|(i, (actor, command))| {
            let mut dice = Dice::for_action(1, *i as u64);
            engine::apply(&mut state, &options, actor, Role::Player, command, now, &mut dice).is_ok()
        })
        .count();
    eprintln!("thaum: {accepted} of {} scripted actions accepted", script.len());

    let mut group = c.benchmark_group("thaum");
    group.throughput(Throughput::Elements(script.len() as u64));
    group.bench_function("script", |b| {
        b.iter_batched(
            || start.clone(),
            |mut state| {
                for (i, (actor, command)) in script.iter().enumerate() {
                    let mut dice = Dice::for_action(1, i as u64);
                    let _ = engine::apply(&mut state, &options, actor, Role::Player, command, now, &mut dice);
                }
                black_box(state)
            },
            BatchSize::SmallInput,
        );
    });
    group.finish();
}

/// Complete Duel rounds per second on the typed engine: both wizards queue their whole
/// spell, the steps resolve (with a concentration check on the longer spell), the round
/// settles and the next begins. A duel that ends, or whose pools can no longer cast the
/// spells, is replaced by a fresh one.
fn duel_benches(c: &mut Criterion) {
    use spellbridge_core::games::duel::token::parse_tokens;
    use spellbridge_core::games::duel::{Duel, DuelCommand, DuelOptions, DuelPlugin};
    use spellbridge_core::{Seat, TableSetup};

    let now = Timestamp::CONSOLE_EPOCH;
    let players = [PlayerId::new("alice"), PlayerId::new("bob")];
    let setup = TableSetup {
        room: "#bench".into(),
        seats: players.iter().map(|p| Seat { player: p.clone(), choice: None }).collect(),
        now,
    };
    let fresh = DuelPlugin::new(DuelOptions::default()).open_duel(&setup).expect("two apprentices");
    let cast = |text: &str| DuelCommand::Cast(parse_tokens(text).expect("valid tokens"));
    let spells = [cast("surge fire wind water end"), cast("overspeed water wind fire end")];

    let mut group = c.benchmark_group("duel");
    group.throughput(Throughput::Elements(1));
    group.bench_function("round", |b| {
        let mut duel = fresh.clone();
        let mut sequence: u64 = 0;
        let mut play_round = |duel: &mut Duel| {
            players.iter().zip(&spells).all(|(player, spell)| {
                sequence = sequence.wrapping_add(1);
                let mut dice = Dice::for_action(42, sequence);
                duel.apply(player, Role::Player, spell, now, &mut dice).is_ok()
            })
        };
        b.iter(|| {
            if duel.finish().is_some() || !play_round(&mut duel) {
                duel = fresh.clone();
                play_round(&mut duel);
            }
            black_box(duel.track())
        });
    });
    group.finish();
}

criterion_group!(benches, thaum_benches, duel_benches);
criterion_main!(benches);
