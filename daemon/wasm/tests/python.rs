//! A game whose language runtime needs WASI, on a real runtime: Nim in Python
//! (games/nim-py/), built with componentize-py from PyPI (CPython and its libraries
//! linked into the component, which imports WASI 0.2), checked and played through the
//! host with the default limits. The compile takes minutes (an 18 MB component), so this
//! is one test: `game check`, which loads it, lists its WASI imports and plays the example
//! transcript.

use std::path::PathBuf;
use std::process::Command as Process;

#[test]
fn nim_in_python_gets_the_empty_wasi_and_plays_the_example_game_within_the_limits() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("wasm-games-py");
    let status =
        Process::new("bash").arg(root.join("games/nim-py/build.sh")).arg(&out).status().expect("bash runs");
    assert!(
        status.success(),
        "games/nim-py/build.sh failed: install componentize-py with tests/scripts/install-wasm-games.sh"
    );
    let report =
        spellbridge_wasm::check::check(&out.join("nim-py.wasm")).unwrap_or_else(|report| panic!("{report}"));
    assert!(report.contains("game `nim-py`"), "{report}");
    assert!(report.contains("wasi:filesystem/preopens@0.2."), "{report}");
    assert!(report.contains("14. bob !take 3 b -> ok nim-took-last nim-won ("), "{report}");
    assert!(report.contains("transcript: every step as expected"), "{report}");
    eprintln!("{report}");
}
