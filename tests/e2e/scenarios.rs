//! Scenario transcripts: each `tests/scenarios/<name>.txt` is a console script whose
//! first line may be `# seed: N`. The test plays it with `spellbridge console`'s own code
//! and snapshots the printed transcript and the final `--state-json` state. To review a
//! changed snapshot: `INSTA_UPDATE=always cargo test -p spellbridge-tests`, then read the
//! diff in `tests/e2e/snapshots/` before committing it.

use std::path::PathBuf;

fn play(name: &str) -> (String, serde_json::Value) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios").join(format!("{name}.txt"));
    let script = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let seed = script
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("# seed:"))
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0);
    spellbridge::console::run_script(&script, seed).unwrap_or_else(|e| panic!("playing {name}: {e:#}"))
}

macro_rules! scenario {
    ($name:ident) => {
        #[test]
        fn $name() {
            let (transcript, state) = play(stringify!($name));
            insta::assert_snapshot!(concat!(stringify!($name), "_transcript"), transcript);
            insta::assert_json_snapshot!(concat!(stringify!($name), "_state"), state);
        }
    };
}

scenario!(lobby_and_bad_input);
scenario!(thaum_full_loop);
scenario!(thaum_bad_input);
scenario!(duel_complete);
scenario!(duel_interruption);
scenario!(duel_full_counter);
scenario!(duel_void);
scenario!(duel_pool_dry);
scenario!(duel_bad_input);
