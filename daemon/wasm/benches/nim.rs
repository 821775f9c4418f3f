//! Nim as a component against the built-in Nim (a bench binary that prints figures):
//! `cargo bench -p spellbridge-wasm --bench nim` (builds games/nim-wasm first, so the
//! toolchain of tests/scripts/install-wasm-games.sh must be there).
//!
//! - the cost of one move (`Table::act`), p50/p99, over whole games of the same moves;
//! - loading the component: compiling it, then from the cache in a new engine (a restart);
//! - what a table holds between moves (its state bytes: each call's instance is gone).

use std::path::PathBuf;
use std::process::Command as Process;
use std::time::{Duration, Instant};

use spellbridge_core::dice::Dice;
use spellbridge_core::games::nim::NimPlugin;
use spellbridge_core::grammar::parse;
use spellbridge_core::plugin::{Action, GamePlugin, Role, Seat, TableSetup};
use spellbridge_core::{PlayerId, RoomId, Timestamp};
use spellbridge_wasm::{Limits, Loader};

/// One whole game: bob joins, then the takes of tests/scenarios/nim_complete.txt.
const GAME: &[(&str, &str)] = &[
    ("bob", "join"),
    ("alice", "take 3 a"),
    ("bob", "take 3 c"),
    ("alice", "take 3 c"),
    ("bob", "take 1 c"),
    ("alice", "take 2 b"),
    ("bob", "take 3 b"),
];

fn moves(game: &dyn GamePlugin, games: usize) -> Vec<Duration> {
    let mut took = Vec::with_capacity(games * GAME.len());
    for _ in 0..games {
        let setup = TableSetup {
            room: RoomId::new("#bench"),
            seats: vec![Seat { player: PlayerId::new("alice"), choice: None }],
            now: Timestamp(0),
        };
        let mut table = game.open(&setup).expect("opens");
        for (who, typed) in GAME {
            let words: Vec<&str> = typed.split_whitespace().collect();
            let command = game.commands().iter().find(|c| c.is_called(words[0])).expect("a command");
            let parsed = parse(command, &words).expect("parses");
            let actor = PlayerId::new(*who);
            let action = Action {
                actor: &actor,
                command: &parsed,
                typed,
                private: false,
                now: Timestamp(0),
                role: Role::Player,
            };
            let start = Instant::now();
            table.act(&action, &mut Dice::from_seed(1)).expect("played");
            took.push(start.elapsed());
        }
        assert!(table.is_finished());
    }
    took.sort();
    took
}

fn show(what: &str, took: &[Duration]) {
    let at = |q: f64| took[((took.len() - 1) as f64 * q) as usize];
    println!("{what}: p50 {:?}, p99 {:?} over {} moves", at(0.5), at(0.99), took.len());
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = std::env::temp_dir().join("spellbridge-wasm-bench");
    let status =
        Process::new("bash").arg(root.join("games/nim-wasm/build.sh")).arg(&out).status().expect("bash");
    assert!(status.success(), "games/nim-wasm/build.sh failed: run tests/scripts/install-wasm-games.sh");
    let file = out.join("nim.wasm");
    let cache = out.join("cache");
    let _ = std::fs::remove_dir_all(&cache);

    let start = Instant::now();
    let loader = Loader::new(Some(cache.clone()), Limits::default()).expect("an engine");
    let game = loader.load_file(&file).expect("loads");
    println!(
        "load with a compile: {:?} ({} bytes of component)",
        start.elapsed(),
        std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0)
    );
    let start = Instant::now();
    let restarted = Loader::new(Some(cache), Limits::default()).expect("an engine");
    let again = restarted.load_file(&file).expect("loads from the cache");
    println!("load from the cache in a new engine: {:?}", start.elapsed());

    show("built-in Nim, one move", &moves(&NimPlugin, 200));
    show("Nim component, one move", &moves(&again, 200));
    let setup = TableSetup {
        room: RoomId::new("#bench"),
        seats: vec![
            Seat { player: PlayerId::new("alice"), choice: None },
            Seat { player: PlayerId::new("bob"), choice: None },
        ],
        now: Timestamp(0),
    };
    let table = game.open(&setup).expect("opens");
    println!(
        "a component table between moves: {} bytes of state (each call's instance and memory are dropped when it returns)",
        table.snapshot().to_string().len()
    );
}
