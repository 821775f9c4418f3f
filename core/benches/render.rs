//! Rendering benchmarks (issue 16): the replies the scale bench asks for most, rendered
//! from a table's events to [`RichText`] as the router does at delivery: a Duel wizard's
//! private `!status` sheet (compact form, as IRC is shown it), a Thaum `!status` and a
//! Thaum `!coins <me> +1` announcement, each in English and in Chinese. The IRC side
//! (mIRC codes and line splitting) is `cargo bench -p spellbridge-adapters --bench irc_lines`.
//!
//! Run with `cargo bench -p spellbridge-core --bench render`. On a busy machine, count
//! instructions instead of time: `RENDER_COUNT=100000 perf stat -e instructions:u <bench
//! binary>` renders each case that many times and exits (run it with `RENDER_COUNT=0`
//! too and subtract, for the setup).

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group};
use spellbridge_core::games::duel::DuelPlugin;
use spellbridge_core::games::thaum::ThaumPlugin;
use spellbridge_core::grammar::read_for;
use spellbridge_core::{
    Action, Dice, Event, Form, GamePlugin, Language, PlayerId, Presentation, Role, Seat, Table, TableSetup,
    Timestamp,
};

const T0: Timestamp = Timestamp::CONSOLE_EPOCH;

/// `typed` (with its `!`) by `who` at `table`: the events it makes.
fn act(table: &mut dyn Table, who: &str, typed: &str, private: bool, sequence: u64) -> Vec<Event> {
    let actor = PlayerId::new(who);
    let command = read_for(table, &actor, typed.trim_start_matches('!')).expect("the command reads");
    let action =
        Action { actor: &actor, command: &command, typed, private, now: T0.plus(60), role: Role::Player };
    table.act(&action, &mut Dice::for_action(7, sequence)).expect("the command is accepted")
}

fn seat(player: &str, choice: Option<&str>) -> Seat {
    Seat { player: PlayerId::new(player), choice: choice.map(str::to_owned) }
}

/// A Duel in its second round, a step revealed, alice's own queue waiting: her private
/// `!status`.
fn duel_status() -> Vec<Event> {
    let setup = TableSetup {
        room: "#duel".into(),
        seats: vec![seat("alice", Some("pyromancer")), seat("bob", None)],
        now: T0,
    };
    let mut table = DuelPlugin::default().open(&setup).expect("a Duel opens");
    for (i, (who, typed)) in [
        ("alice", "!cast surge fire fire end"),
        ("bob", "!cast counter water end"),
        ("alice", "!cast focus wind water"),
        ("bob", "!cast overspeed thunder"),
    ]
    .into_iter()
    .enumerate()
    {
        act(&mut *table, who, typed, true, i as u64);
    }
    act(&mut *table, "alice", "!status", true, 9)
}

/// A Thaum table of two, alice its game master: bob's `!status` and alice's
/// `!coins alice +1`.
fn thaum_events() -> (Vec<Event>, Vec<Event>) {
    let setup = TableSetup { room: "#thaum".into(), seats: vec![seat("alice", None)], now: T0 };
    let mut table = ThaumPlugin::default().open(&setup).expect("a Thaum table opens");
    act(&mut *table, "bob", "!join", false, 1);
    act(&mut *table, "alice", "!coins bob 5", false, 2);
    let status = act(&mut *table, "bob", "!status", false, 3);
    let coins = act(&mut *table, "alice", "!coins alice +1", false, 4);
    (status, coins)
}

/// Each case `count` times, without criterion (see the module doc).
fn render_count(count: usize) {
    let duel = DuelPlugin::default();
    let thaum = ThaumPlugin::default();
    let duel_status = duel_status();
    let (thaum_status, thaum_coins) = thaum_events();
    for language in [Language::En, Language::ZhCn] {
        let compact = Presentation::of(Form::Compact).in_language(language);
        for _ in 0..count {
            black_box(duel.render(black_box(&duel_status), &compact));
            black_box(thaum.render(black_box(&thaum_status), &compact));
            black_box(thaum.render(black_box(&thaum_coins), &compact));
        }
    }
}

fn render_benches(c: &mut Criterion) {
    let duel = DuelPlugin::default();
    let thaum = ThaumPlugin::default();
    let duel_status = duel_status();
    let (thaum_status, thaum_coins) = thaum_events();
    let mut group = c.benchmark_group("render");
    group.warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    for (code, language) in [("en", Language::En), ("zh", Language::ZhCn)] {
        let compact = Presentation::of(Form::Compact).in_language(language);
        group.bench_function(format!("duel_status/{code}"), |b| {
            b.iter(|| black_box(duel.render(black_box(&duel_status), &compact)))
        });
        group.bench_function(format!("thaum_status/{code}"), |b| {
            b.iter(|| black_box(thaum.render(black_box(&thaum_status), &compact)))
        });
        group.bench_function(format!("thaum_coins/{code}"), |b| {
            b.iter(|| black_box(thaum.render(black_box(&thaum_coins), &compact)))
        });
    }
    group.finish();
}

criterion_group!(benches, render_benches);

fn main() {
    match std::env::var("RENDER_COUNT").ok().and_then(|count| count.parse().ok()) {
        Some(count) => render_count(count),
        None => {
            benches();
            Criterion::default().configure_from_args().final_summary();
        }
    }
}
