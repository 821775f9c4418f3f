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
use spellbridge_core::{Form, GamePlugin, Language, Presentation};

#[path = "support/replies.rs"]
mod replies;
use replies::{duel_status, thaum_events};

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
