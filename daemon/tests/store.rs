//! The store under real use: games split over console runs, redelivered messages, a
//! store that fails mid-game, and `spellbridge` processes killed with SIGKILL at random
//! points (RULES T-10: `verify` must still replay every table exactly); and the store
//! checking itself: `spellbridge run` on a tampered snapshot or a bad outbox row, `verify`
//! on damaged files, and the files' modes.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use spellbridge::console::{Console, run_script, run_script_with_db};
use spellbridge::store::{Durability, OpenMode, Store};
use spellbridge_core::Registry;
use spellbridge_tests::harness::daemon::{CONFIG, Daemon};

const BIN: &str = env!("CARGO_BIN_EXE_spellbridge");

/// Plays `script` through a console on the database at `db`: what it printed and the
/// tables' state.
fn run_with_db(db: &Path, seed: u64, script: &str) -> (String, Value) {
    run_script_with_db(script, seed, db).unwrap_or_else(|e| panic!("the script plays: {e:#}"))
}

fn coins(state: &Value, player: &str) -> u64 {
    state["tables"][0]["state"]["players"][player]["coins"].as_u64().unwrap_or(0)
}

const SPLIT_GAME: &str = concat!(
    include_str!("fixtures/thaum_in_play.txt"),
    "\
---
#clock +2d
bob: !blood 3 water
alice: !tornado 1 bob
alice: !stop
",
    include_str!("fixtures/duel_mid_round.txt")
);

#[test]
fn a_game_split_over_two_console_runs_ends_as_one_run_does() {
    let (first, second) = SPLIT_GAME.split_once("---\n").expect("a split point");
    let (_, whole) = run_script(&SPLIT_GAME.replace("---\n", ""), 5).expect("one run");
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("games.db");
    run_with_db(&db, 5, first);
    let (_, split) = run_with_db(&db, 5, second);
    assert_eq!(split, whole);
    assert!(whole["tables"].as_array().is_some_and(|t| t.len() == 2), "both tables are there: {whole}");
}

#[test]
fn a_redelivered_message_changes_the_state_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("games.db");
    let script =
        "@msgid=1 alice: !new thaum\n@msgid=2 alice: !coins alice +5\n@msgid=2 alice: !coins alice +5\n";
    let (printed, state) = run_with_db(&db, 1, script);
    assert_eq!(coins(&state, "alice"), 5, "{printed}");
    assert_eq!(printed.matches("coins").count(), 1, "the repeat is not answered again: {printed}");
    // Redelivered again after a restart: still once.
    let (_, state) = run_with_db(&db, 1, "@msgid=2 alice: !coins alice +5\n");
    assert_eq!(coins(&state, "alice"), 5);
}

#[test]
fn a_failed_store_write_leaves_the_table_as_it_was_and_says_so() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("games.db");
    run_with_db(&db, 1, "alice: !new thaum\nalice: !coins alice +1\n");
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
    let mut console = Console::with_store(1, &db).expect("opens");
    let holder = rusqlite::Connection::open(&db).expect("sqlite opens");
    holder.execute_batch("BEGIN EXCLUSIVE;").expect("lock the database");
    let printed = runtime.block_on(console.feed("alice: !coins alice +1")).expect("a readable line");
    assert!(printed.iter().any(|l| l.contains("was not taken")), "{printed:?}");
    assert_eq!(coins(&console.snapshot(), "alice"), 1, "the move was undone");
    holder.execute_batch("COMMIT;").expect("unlock");
    let printed = runtime.block_on(console.feed("alice: !coins alice +1")).expect("a readable line");
    assert!(printed.iter().any(|l| l.contains("1 → 2")), "{printed:?}");
}

/// A small deterministic generator for kill delays, so a failing trial can be re-run.
struct KillPoints(u64);

impl KillPoints {
    fn next_millis(&mut self, below: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % below
    }
}

/// One child run: feeds every line (a network redelivering from the start), kills it
/// with SIGKILL after `delay` (if it is still running), and returns the coin balances
/// it acknowledged.
fn killed_run(db: &Path, lines: &[String], delay: Duration) -> Vec<u64> {
    let mut child = Command::new(BIN)
        .args(["console", "--seed", "3", "--db"])
        .arg(db)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spellbridge starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let input = lines.join("\n") + "\n";
    let writer = std::thread::spawn(move || {
        // The pipe breaks when the child is killed: that is expected.
        let _ = stdin.write_all(input.as_bytes());
        stdin
    });
    let reader = std::thread::spawn(move || {
        BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .filter_map(|line| {
                let (_, after) = line.split_once("alice's coins: ")?;
                after.split_once(" → ").and_then(|(_, b)| b.trim_end_matches('.').parse().ok())
            })
            .collect::<Vec<u64>>()
    });
    std::thread::sleep(delay);
    let _ = child.kill();
    let _ = child.wait();
    drop(writer.join());
    reader.join().expect("reader")
}

fn committed(db: &Path) -> (u64, u64, u64) {
    let connection = rusqlite::Connection::open(db).expect("sqlite opens");
    let count = |sql: &str| connection.query_row(sql, [], |row| row.get::<_, i64>(0)).expect("count") as u64;
    let applied = count("SELECT COUNT(*) FROM journal WHERE kind = 'acted' AND command LIKE '%!coins%'");
    let duplicates = count(
        // One message may log bookkeeping beside its move (a player's home), never two moves.
        "SELECT COUNT(*) FROM (SELECT message_id FROM journal
         WHERE message_id IS NOT NULL AND kind IN ('opened', 'acted')
         GROUP BY network, message_id HAVING COUNT(*) > 1)",
    );
    drop(connection);
    // The table as a restart gives it: its snapshot (written every few moves) with the
    // journal rows after it replayed.
    let store = Store::open(db, OpenMode::MustExist, Durability::Full).expect("the store opens");
    let table = store.current_table(&Registry::standard(), 0).expect("table 0 reads");
    let coins = table.map_or(0, |table| table["state"]["players"]["alice"]["coins"].as_u64().unwrap_or(0));
    (applied, duplicates, coins)
}

#[test]
fn killed_with_sigkill_at_random_points_no_acknowledged_move_is_lost_or_doubled() {
    // Enough that every kill (5–305 ms) lands mid-stream: with snapshots that no longer
    // grow with history, a move commits in about a millisecond.
    const MOVES: usize = 12_000;
    const TRIALS: usize = 24;
    let deadline = Instant::now() + Duration::from_secs(240);
    let dir = tempfile::tempdir().expect("temp dir");
    let db: PathBuf = dir.path().join("crash.db");
    let mut lines = vec!["@msgid=open alice: !new thaum".to_owned()];
    lines.extend((0..MOVES).map(|k| format!("@msgid=c{k} alice: !coins alice +1")));
    let mut kill_points = KillPoints(0x5eed_cafe);
    let mut highest_ack = 0;
    let mut killed_mid_stream = 0;
    for trial in 0..TRIALS {
        assert!(Instant::now() < deadline, "the crash trials ran out of time at trial {trial}");
        let delay = Duration::from_millis(5 + kill_points.next_millis(300));
        let acked = killed_run(&db, &lines, delay);
        highest_ack = highest_ack.max(acked.iter().copied().max().unwrap_or(0));
        if !db.exists() {
            continue; // killed before the database was even created
        }
        let (applied, duplicates, coins) = committed(&db);
        assert!(
            coins >= highest_ack,
            "trial {trial} ({delay:?}): acknowledged {highest_ack} coins, stored {coins}"
        );
        assert_eq!(applied, coins, "trial {trial}: each applied move adds exactly one coin");
        assert_eq!(duplicates, 0, "trial {trial}: a message id was applied twice");
        if coins < MOVES as u64 {
            killed_mid_stream += 1;
        }
        eprintln!(
            "trial {trial}: killed after {delay:?}; {coins} moves stored, highest acknowledged {highest_ack}"
        );
    }
    assert!(
        killed_mid_stream >= 20,
        "only {killed_mid_stream} trials were killed before the end of the stream"
    );
    // A last, uninterrupted delivery of everything completes the game exactly once.
    let status = Command::new(BIN)
        .args(["console", "--seed", "3", "--db"])
        .arg(&db)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .and_then(|mut child| {
            child.stdin.take().expect("stdin").write_all((lines.join("\n") + "\n").as_bytes())?;
            child.wait()
        })
        .expect("the final run");
    assert!(status.success());
    let (applied, duplicates, coins) = committed(&db);
    assert_eq!((applied, duplicates, coins), (MOVES as u64, 0, MOVES as u64));
    let verify = Command::new(BIN).args(["verify", "--db"]).arg(&db).output().expect("verify runs");
    assert!(verify.status.success(), "verify: {}", String::from_utf8_lossy(&verify.stdout));
}

#[test]
fn verify_finds_a_snapshot_that_differs_from_its_journal() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("games.db");
    run_with_db(&db, 1, "alice: !new thaum\nalice: !coins alice +3\nbob: !join\n");
    let ok = Command::new(BIN).args(["verify", "--db"]).arg(&db).output().expect("verify runs");
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stdout));
    let connection = rusqlite::Connection::open(&db).expect("sqlite opens");
    connection
        .execute(
            "UPDATE tables SET snapshot = replace(snapshot, '\"coins\":3', '\"coins\":300') WHERE id = 0",
            [],
        )
        .expect("tamper");
    let bad = Command::new(BIN).args(["verify", "--db"]).arg(&db).output().expect("verify runs");
    let report = String::from_utf8_lossy(&bad.stdout);
    assert!(!bad.status.success(), "{report}");
    assert!(report.contains("DIFFERS at .state.players.alice.coins"), "{report}");
}

#[test]
fn a_snapshot_that_does_not_load_is_rebuilt_from_the_journal() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("games.db");
    let (_, before) =
        run_with_db(&db, 1, "alice: !new thaum\nalice: !coins alice +3\nalice: !gather 1 air\n");
    let connection = rusqlite::Connection::open(&db).expect("sqlite opens");
    connection
        .execute("UPDATE tables SET snapshot = '{\"table\": 0, \"garbage\": true}' WHERE id = 0", [])
        .expect("damage");
    let (_, after) = run_with_db(&db, 1, "");
    assert_eq!(after, before);
}

#[test]
fn export_prints_json_and_wiki_markup() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("games.db");
    run_with_db(&db, 1, "alice: !new thaum\nbob: !join\nalice: !coins bob +4\nalice: !gather 1 fire\n");
    let json = Command::new(BIN).args(["export", "0", "--db"]).arg(&db).output().expect("export runs");
    assert!(json.status.success());
    let value: Value = serde_json::from_slice(&json.stdout).expect("export is JSON");
    assert_eq!(value["table"]["state"]["players"]["bob"]["coins"], 4);
    assert_eq!(value["journal"].as_array().map(Vec::len), Some(4), "opened + three actions");
    let wiki = Command::new(BIN)
        .args(["export", "0", "--format", "wiki", "--db"])
        .arg(&db)
        .output()
        .expect("export runs");
    let text = String::from_utf8_lossy(&wiki.stdout);
    assert!(text.contains("{| class=\"wikitable sortable\""), "{text}");
    assert!(text.contains("| bob || 1 || 4 || 0 || 0 || 0 || 0"), "{text}");
    assert!(text.contains("<nowiki>!gather 1 fire</nowiki>"), "{text}");
    let missing = Command::new(BIN).args(["export", "9", "--db"]).arg(&db).output().expect("export runs");
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("has no table 9"));
}

// ---------------------------------------------------------------------------------------
// The store checks itself (issue 13, finding 8): `spellbridge run` on a tampered database,
// `verify` on damaged ones, bad outbox rows, file modes.

/// A loopback port nothing listens on now.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("address").port()
}

/// A daemon (no networks) on `games.db` in its dir, with `/metrics` on `port`; not started.
fn daemon_on_games_db(port: u16) -> Daemon {
    let daemon = Daemon::new(BIN).unwrap_or_else(|e| panic!("{e}"));
    daemon
        .set_config(&format!(
            "prefix = \"!\"\n[store]\npath = \"games.db\"\n[http]\nlisten = \"127.0.0.1:{port}\"\n"
        ))
        .unwrap_or_else(|e| panic!("{e}"));
    daemon
}

/// `GET /metrics`, polled (bounded) until it has `sample` at `value`; the whole text.
fn wait_for_metric(daemon: &Daemon, port: u16, sample: &str, value: f64) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut last = String::new();
    while Instant::now() < deadline {
        if let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) {
            let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
            let _ =
                stream.write_all(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut stream, &mut text);
            let found = text
                .lines()
                .find_map(|line| line.strip_prefix(sample)?.strip_prefix(' ')?.trim().parse().ok());
            if found == Some(value) {
                return text;
            }
            last = text;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("{sample} never reached {value}; last /metrics:\n{last}\ndaemon log:\n{}", daemon.log());
}

/// `spellbridge verify --db games.db` in the daemon's dir: success and what it printed.
fn verify_in(daemon: &Daemon) -> (bool, String) {
    let output = daemon.command(&["verify", "--db", "games.db"]).unwrap_or_else(|e| panic!("{e}"));
    let text =
        format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.success(), text)
}

fn sql(db: &Path, statement: &str) {
    let connection = rusqlite::Connection::open(db).expect("sqlite opens");
    connection.execute_batch(statement).unwrap_or_else(|e| panic!("{statement}: {e}"));
}

const TAMPER_COINS: &str =
    "UPDATE tables SET snapshot = replace(snapshot, '\"coins\":3', '\"coins\":300') WHERE id = 0";

#[test]
fn a_tampered_snapshot_is_rebuilt_by_run_with_an_error_and_a_metric_and_strict_refuses() {
    let port = free_port();
    let mut daemon = daemon_on_games_db(port);
    let db = daemon.path("games.db");
    let (_, before) = run_with_db(&db, 1, "alice: !new thaum\nalice: !coins alice +3\nbob: !join\n");
    sql(&db, TAMPER_COINS);

    // --strict refuses, names the table and says what to do, and changes nothing.
    let strict = daemon.command(&["run", "--config", CONFIG, "--strict"]).unwrap_or_else(|e| panic!("{e}"));
    let said = String::from_utf8_lossy(&strict.stderr);
    assert!(!strict.status.success(), "--strict must refuse: {said}");
    assert!(said.contains("table 0: its snapshot does not match the checksum"), "{said}");
    assert!(said.contains("without --strict"), "{said}");
    assert!(!verify_in(&daemon).0, "the tampered snapshot is still there after --strict");

    // Without it the table is rebuilt from the journal, logged and counted.
    daemon.spawn().unwrap_or_else(|e| panic!("{e}"));
    wait_for_metric(&daemon, port, "spellbridge_errors_total{kind=\"snapshot_rebuilt\"}", 1.0);
    let log = daemon.log();
    assert!(
        log.lines().any(|l| l.contains("ERROR") && l.contains("table 0 rebuilt from its journal")),
        "{log}"
    );
    daemon.terminate(Duration::from_secs(10)).unwrap_or_else(|e| panic!("{e}"));
    let (ok, report) = verify_in(&daemon);
    assert!(ok, "rebuilt and written back: {report}");
    // (The daemon's real clock has fired the table's timers since, so only the edit is
    // looked for: it is gone.)
    let connection = rusqlite::Connection::open(&db).expect("sqlite opens");
    let snapshot: String = connection
        .query_row("SELECT snapshot FROM tables WHERE id = 0", [], |row| row.get(0))
        .expect("table 0");
    assert!(!snapshot.contains("\"coins\":300"), "the edit survived: {snapshot}");
    assert!(before["tables"][0]["state"].to_string().contains("\"coins\":3"), "{before}");
}

#[test]
fn a_bad_outbox_row_is_set_aside_at_start_and_verify_reports_it() {
    let port = free_port();
    let mut daemon = daemon_on_games_db(port);
    let db = daemon.path("games.db");
    run_with_db(&db, 1, "alice: !new thaum\n");
    sql(&db, "INSERT INTO outbox (network, destination, text) VALUES ('console', 'not json', '{}')");
    let (ok, report) = verify_in(&daemon);
    assert!(!ok, "{report}");
    assert!(report.contains(": BAD: its destination does not read"), "{report}");

    daemon.spawn().unwrap_or_else(|e| panic!("{e}"));
    wait_for_metric(&daemon, port, "spellbridge_errors_total{kind=\"outbox_set_aside\"}", 1.0);
    daemon.ensure_running().unwrap_or_else(|e| panic!("{e}"));
    assert!(
        daemon.log().lines().any(|l| l.contains("ERROR") && l.contains("set aside, not sent")),
        "{}",
        daemon.log()
    );
    daemon.terminate(Duration::from_secs(10)).unwrap_or_else(|e| panic!("{e}"));
    let (ok, report) = verify_in(&daemon);
    assert!(ok, "set aside, the outbox is sound: {report}");
    assert!(report.contains(": set aside at an earlier start"), "kept and listed: {report}");
}

#[test]
fn verify_lists_every_bad_table_and_refuses_an_empty_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("games.db");
    run_with_db(
        &db,
        1,
        "alice: !new thaum\nalice: !coins alice +3\nalice: !stop\nalice: !new thaum\nalice: !coins alice +1\ncarol: !duel dave\n",
    );
    sql(&db, TAMPER_COINS);
    sql(
        &db,
        "UPDATE journal SET entry = '{broken' WHERE id = (SELECT max(id) FROM journal WHERE table_id = 1)",
    );
    let output = Command::new(BIN).args(["verify", "--db"]).arg(&db).output().expect("verify runs");
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(!output.status.success(), "{report}");
    let line = |n: u64| {
        report.lines().find(|l| l.starts_with(&format!("table {n} "))).unwrap_or_default().to_owned()
    };
    assert!(line(0).contains("DIFFERS at .state.players.") && line(0).contains("CHECKSUM"), "{report}");
    assert!(line(1).contains("BAD JOURNAL ROW"), "the second bad table is reported too: {report}");
    assert!(report.contains("2 tables checked, 2 with problems"), "{report}");

    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, b"").expect("write");
    let output = Command::new(BIN).args(["verify", "--db"]).arg(&empty).output().expect("verify runs");
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{said}");
    assert!(said.contains("is empty (0 bytes), not a spellbridge database"), "{said}");
    assert_eq!(std::fs::metadata(&empty).expect("exists").len(), 0, "verify wrote nothing into it");
}

#[cfg(unix)]
#[test]
fn the_database_files_are_owner_only_after_a_run_and_a_wider_one_is_tightened_with_a_warning() {
    use std::os::unix::fs::PermissionsExt as _;
    let mode = |path: &Path| std::fs::metadata(path).expect("exists").permissions().mode() & 0o777;
    let port = free_port();
    let mut daemon = daemon_on_games_db(port);
    daemon.spawn().unwrap_or_else(|e| panic!("{e}"));
    wait_for_metric(&daemon, port, "spellbridge_outbox_depth", 0.0);
    let files = ["games.db", "games.db-wal", "games.db-shm"].map(|name| daemon.path(name));
    for file in &files {
        assert_eq!(mode(file), 0o600, "{}", file.display());
    }
    daemon.terminate(Duration::from_secs(10)).unwrap_or_else(|e| panic!("{e}"));
    std::fs::set_permissions(&files[0], std::fs::Permissions::from_mode(0o644)).expect("chmod");
    daemon.spawn().unwrap_or_else(|e| panic!("{e}"));
    wait_for_metric(&daemon, port, "spellbridge_outbox_depth", 0.0);
    assert_eq!(mode(&files[0]), 0o600);
    assert!(
        daemon.log().lines().any(|l| l.contains("WARN") && l.contains("its mode is now 600")),
        "{}",
        daemon.log()
    );
}

/// The `console` binary on a script with a line that is not UTF-8 (issue 13): the line is
/// skipped with a message on stderr, and the lines after it are played.
#[test]
fn the_console_skips_a_line_that_is_not_utf8_and_plays_on() {
    let mut child = Command::new(BIN)
        .args(["console", "--seed", "1"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spellbridge starts");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin
        .write_all(b"alice: !games\nbob: \xff\xfe!new thaum\nalice: !new thaum\n")
        .expect("the script is written");
    drop(stdin);
    let output = child.wait_with_output().expect("spellbridge ends");
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "{}\n{stdout}\n{stderr}", output.status);
    assert!(stderr.contains("line 2: not UTF-8 text"), "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "the games, the opening and its dice commitment: {stdout}");
    assert!(lines[0].starts_with("[console] alice: Games:"), "{stdout}");
    assert!(
        lines[1].starts_with("[console] alice opens a Thaum table"),
        "the line after it was played: {stdout}"
    );
}
