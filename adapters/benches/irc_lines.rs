//! IRC line benchmarks (issue 16): the replies the scale bench asks for most (a Duel
//! wizard's private `!status` sheet, a Thaum `!status`, a Thaum `!coins <me> +1`), each
//! line rendered with mIRC codes and split into PRIVMSG payloads, as the IRC writer does
//! per reply. The game's rendering to rich text is `cargo bench -p spellbridge-core --bench render`.
//!
//! Run with `cargo bench -p spellbridge-adapters --bench irc_lines`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use spellbridge_adapters::irc::format::{CodeStyle, render};
use spellbridge_adapters::irc::split::Splitter;
use spellbridge_core::games::duel::DuelPlugin;
use spellbridge_core::games::thaum::ThaumPlugin;
use spellbridge_core::grammar::read_for;
use spellbridge_core::{
    Action, Dice, Event, Form, GamePlugin, Language, PlayerId, Presentation, RichText, Role, Seat, Table,
    TableSetup, Timestamp,
};

const T0: Timestamp = Timestamp::CONSOLE_EPOCH;

/// `:nick!user@host ` of a typical bot.
const PREFIX: &str = ":spellbot!~bot@127.0.0.1 ";

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

/// The lines of a Duel wizard's private `!status` in its second round, a step revealed.
fn duel_status(language: Language) -> Vec<RichText> {
    let setup = TableSetup {
        room: "#duel".into(),
        seats: vec![seat("alice", Some("pyromancer")), seat("bob", None)],
        now: T0,
    };
    let plugin = DuelPlugin::default();
    let mut table = plugin.open(&setup).expect("a Duel opens");
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
    let events = act(&mut *table, "alice", "!status", true, 9);
    let compact = Presentation::of(Form::Compact).in_language(language);
    plugin.render(&events, &compact).into_iter().map(|a| a.text).collect()
}

/// The lines of a Thaum table's `!status` and of `!coins alice +1`.
fn thaum_lines(language: Language) -> (Vec<RichText>, Vec<RichText>) {
    let setup = TableSetup { room: "#thaum".into(), seats: vec![seat("alice", None)], now: T0 };
    let plugin = ThaumPlugin::default();
    let mut table = plugin.open(&setup).expect("a Thaum table opens");
    act(&mut *table, "bob", "!join", false, 1);
    act(&mut *table, "alice", "!coins bob 5", false, 2);
    let status = act(&mut *table, "bob", "!status", false, 3);
    let coins = act(&mut *table, "alice", "!coins alice +1", false, 4);
    let shown = Presentation::of(Form::Compact).in_language(language);
    let lines = |events: &[Event]| plugin.render(events, &shown).into_iter().map(|a| a.text).collect();
    (lines(&status), lines(&coins))
}

/// What the IRC writer does with a reply: each line in mIRC codes, split into payloads.
fn irc_lines(splitter: &Splitter, target: &str, lines: &[RichText]) -> usize {
    lines
        .iter()
        .map(|line| {
            splitter.split(target, &render(line, CodeStyle::Bold)).map_or(0, |payloads| payloads.len())
        })
        .sum()
}

fn irc_benches(c: &mut Criterion) {
    let splitter = Splitter::new(PREFIX.len());
    let mut group = c.benchmark_group("irc_lines");
    group.warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    for (code, language) in [("en", Language::En), ("zh", Language::ZhCn)] {
        let duel = duel_status(language);
        let (status, coins) = thaum_lines(language);
        for (name, lines, target) in [
            ("duel_status", duel, "alice"),
            ("thaum_status", status, "#thaum"),
            ("thaum_coins", coins, "#thaum"),
        ] {
            group.bench_function(format!("{name}/{code}"), |b| {
                b.iter(|| black_box(irc_lines(&splitter, target, black_box(&lines))))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, irc_benches);
criterion_main!(benches);
