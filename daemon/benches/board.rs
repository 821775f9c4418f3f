//! Board picture benchmark (a bench binary that prints figures):
//! `cargo bench -p spellbridge --bench board`.
//!
//! Renders the end state of two scenario transcripts (`tests/scenarios/duel_complete.txt`
//! and `thaum_full_loop.txt`, played with the console's own code) to PNG, [`SAMPLES`]
//! times each after [`WARMUP`] unmeasured, one at a time on one thread: the whole path
//! (snapshot JSON → SVG → parse → rasterise → PNG encode), and the SVG alone. Prints
//! p50 and p99 per board; the goal is a p50 of at most [`GOAL`] for each (issue 18).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::Value;
use spellbridge::board::Board;

const WARMUP: usize = 20;
const SAMPLES: usize = 300;
const GOAL: Duration = Duration::from_millis(5);

fn scenario_table(name: &str, game: &str) -> Value {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/scenarios").join(format!("{name}.txt"));
    let script = std::fs::read_to_string(&path).expect("the scenario reads");
    let seed = script
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("# seed:"))
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0);
    let (_, state) = spellbridge::console::run_script(&script, seed).expect("the scenario plays");
    state["tables"]
        .as_array()
        .and_then(|tables| tables.iter().find(|t| t["game"] == game))
        .cloned()
        .expect("the scenario has a table of the game")
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn measure(mut run: impl FnMut()) -> (Duration, Duration) {
    for _ in 0..WARMUP {
        run();
    }
    let mut times: Vec<Duration> = (0..SAMPLES)
        .map(|_| {
            let start = Instant::now();
            run();
            start.elapsed()
        })
        .collect();
    times.sort();
    (percentile(&times, 0.5), percentile(&times, 0.99))
}

fn main() {
    let board = Board::new();
    println!(
        "board pictures: {SAMPLES} renders each after {WARMUP} warm-up, one thread; goal p50 ≤ {GOAL:?}"
    );
    for (name, game) in [("duel_complete", "duel"), ("thaum_full_loop", "thaum")] {
        let table = scenario_table(name, game);
        let picture = board.png(&table).expect("the board renders");
        let (svg50, svg99) = measure(|| {
            std::hint::black_box(board.svg(&table).expect("draws"));
        });
        let (p50, p99) = measure(|| {
            std::hint::black_box(board.png(&table).expect("renders"));
        });
        let verdict = if p50 <= GOAL { "within the goal" } else { "OVER THE GOAL" };
        println!(
            "{game:5} board ({}×{} px, {} bytes PNG): PNG p50 {:.2} ms, p99 {:.2} ms ({verdict}); SVG alone p50 {:.3} ms, p99 {:.3} ms",
            picture.width,
            picture.height,
            picture.png.len(),
            p50.as_secs_f64() * 1e3,
            p99.as_secs_f64() * 1e3,
            svg50.as_secs_f64() * 1e3,
            svg99.as_secs_f64() * 1e3,
        );
    }
}
