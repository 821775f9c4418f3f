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
use spellbridge_core::{Event, Form, GamePlugin, Language, Presentation, RichText};

#[path = "../../core/benches/support/replies.rs"]
mod replies;

/// `:nick!user@host ` of a typical bot.
const PREFIX: &str = ":spellbot!~bot@127.0.0.1 ";

/// The lines of a Duel wizard's private `!status` in its second round, a step revealed.
fn duel_status(language: Language) -> Vec<RichText> {
    let compact = Presentation::of(Form::Compact).in_language(language);
    DuelPlugin::default().render(&replies::duel_status(), &compact).into_iter().map(|a| a.text).collect()
}

/// The lines of a Thaum table's `!status` and of `!coins alice +1`.
fn thaum_lines(language: Language) -> (Vec<RichText>, Vec<RichText>) {
    let (status, coins) = replies::thaum_events();
    let shown = Presentation::of(Form::Compact).in_language(language);
    let plugin = ThaumPlugin::default();
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
