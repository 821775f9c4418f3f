//! Scenario transcripts: each `tests/scenarios/<name>.txt` is a console script whose
//! first line may be `# seed: N`. The test plays it with `spellbridge console`'s own code
//! and snapshots the printed transcript and the final `--state-json` state. To review a
//! changed snapshot: `INSTA_UPDATE=always cargo test -p spellbridge-tests`, then read the
//! diff in `tests/e2e/snapshots/` before committing it.
//!
//! Every scenario is also played with the games told in Simplified Chinese (the
//! console's `--lang zh-CN`), snapshotted beside the English one as `<name>_zh_cn`: a
//! reviewer reads a whole Duel in Chinese there. The English snapshots never change.

use std::path::PathBuf;

use spellbridge_core::Language;

fn play(name: &str) -> (String, serde_json::Value) {
    play_in(name, Language::En)
}

fn play_in(name: &str, language: Language) -> (String, serde_json::Value) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios").join(format!("{name}.txt"));
    let script = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let seed = script
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("# seed:"))
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0);
    spellbridge::console::run_script_in(&script, seed, language)
        .unwrap_or_else(|e| panic!("playing {name} in {language}: {e:#}"))
}

macro_rules! scenario {
    ($name:ident) => {
        #[test]
        fn $name() {
            let (transcript, state) = play(stringify!($name));
            insta::assert_snapshot!(concat!(stringify!($name), "_transcript"), transcript);
            insta::assert_json_snapshot!(concat!(stringify!($name), "_state"), state);
        }

        mod $name {
            /// The same script told in Simplified Chinese: only the words differ, so the
            /// state is the English run's.
            #[test]
            fn zh_cn() {
                let (transcript, state) = super::play_in(stringify!($name), super::Language::ZhCn);
                let (_, english) = super::play(stringify!($name));
                assert_eq!(state, english, "the language changed the game");
                insta::assert_snapshot!(concat!(stringify!($name), "_zh_cn_transcript"), transcript);
            }
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
scenario!(nim_complete);
scenario!(nim_rated);
