//! The quick start (`scripts/quickstart.sh`, the README's first command) in its `--check`
//! mode: the `quickstart` binary starts InspIRCd and Synapse, registers the accounts,
//! creates the room, runs the `spellbridge` daemon bridging them, sees the bot answer
//! `!games` on IRC and on Matrix, and tears everything down. It runs on free ports and in
//! a temp dir, so it cannot clash with a real quick start on 6667/8008.
//!
//! The daemon binary belongs to another package, so its path is not in this crate's
//! `CARGO_BIN_EXE_*`: the test builds it (`cargo test --workspace --no-run`, a no-op after
//! `cargo test --workspace`) into the same target dir and profile as `quickstart`.

use std::net::{Ipv4Addr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const QUICKSTART: &str = env!("CARGO_BIN_EXE_quickstart");

/// The whole check may take this long (server starts, the daemon's first Matrix login).
const TIMEOUT: Duration = Duration::from_secs(240);

/// The `spellbridge` binary beside `quickstart`, built (or found up to date) first.
fn daemon_binary() -> PathBuf {
    let profile_dir = Path::new(QUICKSTART).parent().expect("the quickstart binary is in a directory");
    let binary = profile_dir.join("spellbridge");
    if let (Some(cargo), Some(target_dir), Some(profile)) =
        (std::env::var_os("CARGO"), profile_dir.parent(), profile_dir.file_name().and_then(|p| p.to_str()))
    {
        let mut build = Command::new(cargo);
        // The same build `cargo test --workspace` made (a no-op after it): `-p spellbridge`
        // alone would unify dependency features differently and rebuild matrix-sdk.
        build.args(["test", "--workspace", "--no-run", "--quiet", "--target-dir"]);
        build.arg(target_dir).current_dir(env!("CARGO_MANIFEST_DIR"));
        match profile {
            "debug" => {}
            "release" => {
                build.arg("--release");
            }
            other => {
                build.args(["--profile", other]);
            }
        }
        match build.status() {
            Ok(status) if status.success() => {}
            other => eprintln!(
                "building spellbridge failed ({other:?}); using {} if it is there",
                binary.display()
            ),
        }
    }
    assert!(
        binary.is_file(),
        "the spellbridge binary is missing at {}: build it with `cargo build -p spellbridge`",
        binary.display()
    );
    binary
}

fn free_port() -> u16 {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind 127.0.0.1:0");
    listener.local_addr().expect("local address").port()
}

#[test]
fn the_quick_start_check_answers_on_irc_and_matrix_and_tears_down() {
    let daemon = daemon_binary();
    let dir = tempfile::tempdir().expect("temp dir");
    let (out_path, err_path) = (dir.path().join("stdout"), dir.path().join("stderr"));
    let [irc, matrix, http] = [free_port(), free_port(), free_port()];
    let started = Instant::now();
    let mut child = Command::new(QUICKSTART)
        .arg("--check")
        .arg("--dir")
        .arg(dir.path().join("work"))
        .arg("--spellbridge")
        .arg(&daemon)
        .args(["--irc-port", &irc.to_string(), "--matrix-port", &matrix.to_string()])
        .args(["--http-port", &http.to_string()])
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).expect("stdout file"))
        .stderr(std::fs::File::create(&err_path).expect("stderr file"))
        .spawn()
        .expect("quickstart starts");
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for quickstart") {
            break Some(status);
        }
        if started.elapsed() > TIMEOUT {
            // SIGTERM first, so it stops its servers and the daemon.
            let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
            std::thread::sleep(Duration::from_secs(20));
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    let report = format!("--- stdout:\n{stdout}\n--- stderr:\n{stderr}");
    let status = status.unwrap_or_else(|| panic!("quickstart --check took over {TIMEOUT:?}\n{report}"));
    assert!(status.success(), "quickstart --check failed ({status})\n{report}");
    for line in ["IRC: the bot answered !games", "Matrix: the bot answered", "quickstart OK"] {
        assert!(stdout.contains(line), "quickstart --check did not print {line:?}\n{report}");
    }
    assert!(stdout.contains("spellbridge stopped\n"), "the daemon exited cleanly\n{report}");
    let config = std::fs::read_to_string(dir.path().join("work").join("spellbridge.toml")).expect("config");
    assert!(config.contains("[[bridge]]") && config.contains("name = \"magic\""), "{config}");
    // `!board` on IRC links to the site only when the config says where it is (issue 31).
    assert!(config.contains("public_url = \"http://127.0.0.1:"), "{config}");
    eprintln!("quickstart --check took {:?}", started.elapsed());
}
