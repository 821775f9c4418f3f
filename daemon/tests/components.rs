//! Issue 33, items 1, 3 and 5, daemon-level, against a real InspIRCd with the daemon as a
//! child process: games loaded from `[[game]] path` (components built from
//! games/nim-wasm/ by its `build.sh`; `tests/scripts/install-wasm-games.sh` installs the
//! toolchain, and without it these fail saying so):
//!
//! - a config whose component is no component, imports a file system, or names a game a
//!   built-in game or another component has is refused at start with the file and why;
//! - SIGHUP loads a new build: a new table opens with it, a table in play keeps the build
//!   it opened with (its snapshot names that build's SHA-256), also after a restart; a
//!   restart whose kept build is gone is refused naming that hash; `verify` replays such a
//!   table with its own build, and fails naming the build when it is gone; `!help` at it
//!   is its own build's, and its players' commands are read by its own build's grammar
//!   (a command the new build renamed still plays there, and is unknown at a new table);
//! - a component that traps pauses that one table for its game master or the room's
//!   operator (`!resume`), also after a restart (the pause is journaled), while
//!   another table of the same game and a built-in game's table go on;
//! - a `[game.options]` table reaches the component's `open` (Nim's `piles`), and a bad
//!   option refuses the opening saying what to write; `open`'s seed is the table's
//!   committed dice at `OPENING_DRAW`, as the revealed key shows and `verify` agrees.

use std::path::{Path, PathBuf};
use std::process::Command as Process;
use std::sync::OnceLock;
use std::time::Duration;

use sha2::{Digest, Sha256};
use spellbridge_tests::harness::daemon::Daemon;
use spellbridge_tests::harness::inspircd::InspIrcd;
use spellbridge_tests::harness::irc_client::IrcClient;

const BIN: &str = env!("CARGO_BIN_EXE_spellbridge");
const BOT: &str = "gamehost";
const WAIT: Duration = Duration::from_secs(15);

/// Builds games/nim-wasm once per run: `nim` (the example), `nim-o1` (the same game
/// compiled at -O1: another build, another hash), `trap` (`take` traps) and `echo` (its
/// opening tells the seed `open` was given).
fn built() -> &'static PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("daemon-components");
        let builds = [("nim", ""), ("nim-o1", "-O1"), ("trap", "-DHOSTILE_TRAP"), ("echo", "-DECHO_SEED")];
        build(&root, &out, &builds);
        out
    })
}

/// Builds the example game from the tree at `root` into `out` once per `(name, C flags)`
/// (`games/nim-wasm/build.sh`, `NIM_OUT_NAME`, `NIM_CFLAGS`).
fn build(root: &Path, out: &Path, builds: &[(&str, &str)]) {
    for (name, flags) in builds {
        let status = Process::new("bash")
            .arg(root.join("games/nim-wasm/build.sh"))
            .arg(out)
            .env("NIM_OUT_NAME", name)
            .env("NIM_CFLAGS", flags)
            .status()
            .unwrap_or_else(|e| panic!("bash runs games/nim-wasm/build.sh: {e}"));
        assert!(
            status.success(),
            "games/nim-wasm/build.sh failed for {name}: install its toolchain with tests/scripts/install-wasm-games.sh"
        );
    }
}

fn component(name: &str) -> PathBuf {
    built().join(format!("{name}.wasm"))
}

fn sha256(file: &Path) -> String {
    let bytes = std::fs::read(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

fn config(port: u16, games: &str) -> String {
    format!(
        "[store]\npath = \"games.db\"\n\
         [[irc]]\nname = \"irc\"\nserver = \"127.0.0.1\"\nport = {port}\ntls = false\nnick = \"{BOT}\"\n\
         channels = [\"#one\", \"#two\", \"#three\"]\nrequire_account = false\n\
         [irc.flood]\nenabled = false\n[irc.user_limit]\nenabled = false\n{games}"
    )
}

/// The `[[game]]` table loading the component at `path`.
pub(crate) fn game_table(path: &Path) -> String {
    format!("[[game]]\npath = {:?}\n", path.display().to_string())
}

/// `spellbridge check-config` on `games` (the `[[game]]` tables): its exit and stderr.
fn check_config(games: &str) -> (bool, String) {
    let daemon = Daemon::new(BIN).unwrap_or_else(|e| panic!("{e}"));
    daemon.set_config(&config(6667, games)).unwrap_or_else(|e| panic!("{e}"));
    let output =
        daemon.command(&["check-config", "--config", "spellbridge.toml"]).unwrap_or_else(|e| panic!("{e}"));
    let said =
        format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.success(), said)
}

#[test]
fn a_config_with_a_component_the_host_refuses_names_the_file_and_why() {
    let nim = component("nim");
    let (ok, said) = check_config(&game_table(&nim));
    assert!(ok, "the example loads: {said}");
    assert!(
        said.contains("game nim-wasm: ") && said.contains("(component, sha256 "),
        "named with its hash: {said}"
    );

    let dir = tempfile::tempdir().expect("a folder");
    // An import neither the world nor the empty WASI gives (a runtime's WASI files are
    // given, empty: see daemon/wasm/src/wasi.rs).
    let http = dir.path().join("http.wat");
    std::fs::write(&http, "(component (import \"wasi:http/outgoing-handler@0.2.0\" (instance)))")
        .expect("writes");
    let not_one = dir.path().join("not-one.wasm");
    std::fs::write(&not_one, "MZ this is no component").expect("writes");
    let cases = [
        (game_table(&http), "wasi:http/outgoing-handler@0.2.0"),
        (game_table(&not_one), "not a WebAssembly component"),
        (game_table(&dir.path().join("gone.wasm")), "cannot read"),
        (
            format!("{}{}", game_table(&nim), game_table(&component("nim-o1"))),
            "is the game `nim-wasm`, and so is",
        ),
        (game_table(&nim) + "seats = 3\n", "unknown field `seats`"),
        ("[game]\npath = \"nim.wasm\"\n".to_owned(), "must be written [[game]]"),
    ];
    for (games, why) in cases {
        let (ok, said) = check_config(&games);
        assert!(!ok && said.contains(why), "{games}: refused saying {why:?}, said:\n{said}");
    }
}

/// The daemon on the InspIRCd at `port` with `games` (its `[[game]]` tables), started;
/// `copied`, if given, is first copied to `games/nim.wasm` in its folder.
fn start(port: u16, games: &str, copied: Option<&Path>) -> Daemon {
    let mut daemon = Daemon::new(BIN).unwrap_or_else(|e| panic!("{e}"));
    if let Some(build) = copied {
        std::fs::create_dir_all(daemon.path("games")).expect("games/");
        std::fs::copy(build, daemon.path("games/nim.wasm")).expect("copies");
    }
    daemon.set_config(&config(port, games)).expect("config");
    daemon.spawn().unwrap_or_else(|e| panic!("{e}"));
    daemon
}

/// alice and bob in the channels, once the bot answers there.
async fn players(port: u16, daemon: &mut Daemon) -> (IrcClient, IrcClient) {
    let (mut alice, bob) = tokio::join!(player(port, "alice"), player(port, "bob"));
    until_answering(&mut alice, daemon).await;
    (alice, bob)
}

/// A player in `#one`, `#two` and `#three`.
async fn player(port: u16, nick: &str) -> IrcClient {
    let mut client = IrcClient::connect(port, nick).await.unwrap_or_else(|e| panic!("{nick} connects: {e}"));
    for channel in ["#one", "#two", "#three"] {
        client.join(channel).await.unwrap_or_else(|e| panic!("{nick} joins {channel}: {e}"));
    }
    client
}

/// `who` says `text` in `channel`; the bot's next line there containing `needle`.
async fn says(who: &mut IrcClient, channel: &str, text: &str, needle: &str, daemon: &Daemon) -> String {
    who.privmsg(channel, text).await.unwrap_or_else(|e| panic!("send: {e}"));
    let answer = who
        .expect_privmsg_matching(|m| m.from == BOT && m.target == channel && m.text.contains(needle), WAIT)
        .await
        .unwrap_or_else(|e| panic!("{text:?} in {channel}: no {needle:?}: {e}\n{}", daemon.log_tail(200)));
    answer.text
}

/// Says `!games` in `#one` until the bot answers (it has joined), or fails with its log.
async fn until_answering(client: &mut IrcClient, daemon: &mut Daemon) {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        daemon.ensure_running().unwrap_or_else(|e| panic!("{e}"));
        client.privmsg("#one", "!games").await.unwrap_or_else(|e| panic!("{e}"));
        let answered = client
            .expect_privmsg_matching(|m| m.from == BOT && m.text.contains("Games:"), Duration::from_secs(1))
            .await;
        if answered.is_ok() {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "the bot never answered\n{}", daemon.log_tail(60));
    }
}

/// The `component` (build hash) a table's snapshot names, from `spellbridge export`.
fn build_of(daemon: &Daemon, table: u64) -> String {
    let output = daemon
        .command(&["export", &table.to_string(), "--db", "games.db", "--config", "spellbridge.toml"])
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(output.status.success(), "export {table}: {}", String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8_lossy(&output.stdout);
    let at = text.find("\"component\": \"").unwrap_or_else(|| panic!("no component in the export:\n{text}"));
    text[at + 14..at + 14 + 64].to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_in_play_keeps_its_build_across_a_reload_and_a_restart() {
    let (first, second) = (component("nim"), component("nim-o1"));
    let (first_hash, second_hash) = (sha256(&first), sha256(&second));
    assert_ne!(first_hash, second_hash, "two builds");
    let server = InspIrcd::start().unwrap_or_else(|e| panic!("InspIRCd is needed for this test: {e}"));
    let port = server.port();
    let mut daemon = start(port, "[[game]]\npath = \"games/nim.wasm\"\n", Some(&first));
    let (mut alice, mut bob) = players(port, &mut daemon).await;

    says(&mut alice, "#one", "!new nim-wasm", "opens a game of Nim", &daemon).await;
    says(&mut bob, "#one", "!join", "moves first", &daemon).await;
    says(&mut alice, "#one", "!take 1 a", "takes 1 stone", &daemon).await;

    // A new build under the same path, and SIGHUP.
    std::fs::copy(&second, daemon.path("games/nim.wasm")).expect("copies");
    daemon.hangup().unwrap_or_else(|e| panic!("{e}"));
    daemon.wait_for_log("config reloaded", WAIT).unwrap_or_else(|e| panic!("{e}"));
    says(&mut alice, "#two", "!new nim-wasm", "opens a game of Nim", &daemon).await;
    says(&mut bob, "#one", "!take 1 a", "takes 1 stone", &daemon).await;
    assert_eq!(build_of(&daemon, 0), first_hash, "the table in play kept its build");
    assert_eq!(build_of(&daemon, 1), second_hash, "the new table opened with the new build");

    // After a restart, table 0 is restored with its own build (kept by hash) and plays on.
    daemon.restart().unwrap_or_else(|e| panic!("{e}"));
    until_answering(&mut alice, &mut daemon).await;
    says(&mut alice, "#one", "!take 1 a", "takes 1 stone", &daemon).await;
    assert_eq!(build_of(&daemon, 0), first_hash, "still its build after a restart");

    // Its build gone from the archive: the start is refused, naming the hash.
    daemon.terminate(Duration::from_secs(15)).unwrap_or_else(|e| panic!("{e}"));
    let kept = daemon.path(format!("spellbridge-compiled-games/{first_hash}.wasm"));
    std::fs::remove_file(&kept).unwrap_or_else(|e| panic!("{}: {e}", kept.display()));
    daemon.spawn().unwrap_or_else(|e| panic!("{e}"));
    let deadline = std::time::Instant::now() + WAIT;
    while daemon.is_running() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let log = daemon.log();
    assert!(!daemon.is_running(), "the start is refused:\n{log}");
    assert!(
        log.contains(&first_hash) && log.contains("not available"),
        "the refusal names the build:\n{log}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trapping_component_pauses_its_table_for_its_game_master_and_the_others_go_on() {
    let trap = component("trap");
    let server = InspIrcd::start().unwrap_or_else(|e| panic!("InspIRCd is needed for this test: {e}"));
    let port = server.port();
    // gm joins the channels first, before the bot: their operator (the test InspIRCd has
    // no services, so a configured game master's bare nick would have no standing).
    let mut gm = player(port, "gm").await;
    let mut daemon = start(port, &game_table(&trap), None);
    let (mut alice, mut bob) = players(port, &mut daemon).await;

    for room in ["#one", "#two"] {
        says(&mut alice, room, "!new nim-wasm", "opens a game of Nim", &daemon).await;
        says(&mut bob, room, "!join", "moves first", &daemon).await;
    }
    says(&mut alice, "#three", "!new nim", "opens a game of Nim", &daemon).await;

    // The trap refuses that one move and pauses that one table.
    let failed = says(&mut alice, "#one", "!take 1 a", "failed", &daemon).await;
    assert!(
        failed.contains("Nothing changed") && failed.contains("paused") && failed.contains("!resume"),
        "{failed}"
    );
    let paused = says(&mut bob, "#one", "!status", "paused", &daemon).await;
    assert!(paused.contains("a game master can"), "{paused}");
    // The same game's other table and the built-in Nim go on.
    says(&mut alice, "#two", "!status", "to move", &daemon).await;
    says(&mut bob, "#three", "!join", "moves first", &daemon).await;
    says(&mut alice, "#three", "!take 1 a", "takes 1 stone", &daemon).await;

    // A restart keeps the pause: it was journaled, and the table's snapshot holds it.
    daemon.restart().unwrap_or_else(|e| panic!("{e}"));
    until_answering(&mut alice, &mut daemon).await;
    let paused = says(&mut bob, "#one", "!status", "paused", &daemon).await;
    assert!(paused.contains("stopped with an error"), "still paused after a restart: {paused}");
    says(&mut alice, "#two", "!status", "to move", &daemon).await;

    // A player may not resume it; the room's operator may, and the table answers again.
    says(&mut bob, "#one", "!resume", "Only a game master", &daemon).await;
    says(&mut gm, "#one", "!resume", "resumes the nim-wasm table", &daemon).await;
    says(&mut bob, "#one", "!status", "to move", &daemon).await;
    assert!(daemon.is_running(), "the daemon goes on:\n{}", daemon.log_tail(40));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_game_options_reach_open_and_a_bad_one_is_refused_saying_what_to_write() {
    let nim = component("nim");
    let server = InspIrcd::start().unwrap_or_else(|e| panic!("InspIRCd is needed for this test: {e}"));
    let port = server.port();
    let games = |options: &str| format!("{}[game.options]\n{options}\n", game_table(&nim));
    let mut daemon = start(port, &games("piles = [1, 2, 9]"), None);
    let (mut alice, mut bob) = players(port, &mut daemon).await;

    let opened = says(&mut alice, "#one", "!new nim-wasm", "opens a game of Nim", &daemon).await;
    assert!(opened.contains("a 1 · b 2 · c 9"), "the options' piles: {opened}");
    says(&mut bob, "#one", "!join", "moves first", &daemon).await;
    says(&mut alice, "#one", "!take 1 a", "takes 1 stone", &daemon).await;
    let status = says(&mut bob, "#one", "!status", "to move", &daemon).await;
    assert!(status.contains("a 0 · b 2 · c 9"), "{status}");

    // A bad option, loaded on SIGHUP: a new table is refused saying what to write.
    daemon.set_config(&config(port, &games("piles = [3, 5, 70]"))).expect("config");
    daemon.hangup().unwrap_or_else(|e| panic!("{e}"));
    daemon.wait_for_log("config reloaded", WAIT).unwrap_or_else(|e| panic!("{e}"));
    let refused = says(&mut alice, "#two", "!new nim-wasm", "piles", &daemon).await;
    assert!(
        refused.contains("piles = [3, 5, 70]")
            && refused.contains("is not three piles of 1 to 10 stones")
            && refused.contains("piles = [3, 5, 7]"),
        "{refused}"
    );
    // The table in play goes on with its piles.
    let took = says(&mut bob, "#one", "!take 1 b", "takes 1 stone", &daemon).await;
    assert!(took.contains("a 0 · b 1 · c 9"), "{took}");
}

/// Every journal row of `kind` in the daemon's database: its entry and its events, as
/// JSON text.
fn journaled(daemon: &Daemon, kind: &str) -> Vec<String> {
    let connection = rusqlite::Connection::open(daemon.path("games.db")).expect("sqlite opens");
    let mut rows =
        connection.prepare("SELECT entry || events FROM journal WHERE kind = ?1 ORDER BY id").expect("query");
    rows.query_map([kind], |row| row.get(0)).expect("rows").collect::<Result<_, _>>().expect("rows")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_gets_the_seed_of_the_tables_committed_dice_and_verify_agrees() {
    let echo = component("echo");
    let server = InspIrcd::start().unwrap_or_else(|e| panic!("InspIRCd is needed for this test: {e}"));
    let port = server.port();
    let mut daemon = start(port, &game_table(&echo), None);
    let (mut alice, mut bob) = players(port, &mut daemon).await;
    says(&mut alice, "#one", "!new nim-wasm", "opens a game of Nim", &daemon).await;
    says(&mut bob, "#one", "!join", "moves first", &daemon).await;
    says(&mut alice, "#one", "!concede", "Dice key revealed", &daemon).await;
    daemon.terminate(Duration::from_secs(15)).unwrap_or_else(|e| panic!("{e}"));

    // The key revealed at the end gives the seed the opening told.
    let revealed = journaled(&daemon, "revealed");
    let key = revealed.first().and_then(|row| row.split("\"key\":\"").nth(1)).map(|rest| &rest[..64]);
    let key = key.unwrap_or_else(|| panic!("a revealed key: {revealed:?}"));
    let key = spellbridge_core::dice::DiceKey::from_hex(key).expect("64 hex digits");
    let opened = journaled(&daemon, "opened");
    let told = opened
        .first()
        .and_then(|row| row.split("[\"seed\",\"").nth(1))
        .and_then(|rest| rest.split('"').next());
    let seed = key.seed(spellbridge_core::plugin::OPENING_DRAW);
    assert_eq!(told, Some(seed.to_string().as_str()), "the opening: {opened:?}");
    // `verify` replays the table with the component and agrees with the journal.
    let output = daemon
        .command(&["verify", "--db", "games.db", "--config", "spellbridge.toml"])
        .unwrap_or_else(|e| panic!("{e}"));
    let report = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{report}{}", String::from_utf8_lossy(&output.stderr));
}

/// The example built from a copy of the repository's sources whose English `nim-took`
/// says `{ $next } plays next.` instead of `{ $next } to move.` and whose `nim-help-take`
/// begins `When it is your turn:` instead of `On your turn:`: another build that differs
/// from `nim` in those texts.
fn reworded() -> PathBuf {
    reworded_builds().join("nim.wasm")
}

/// [`reworded`]'s build that also traps at `take` (`-DHOSTILE_TRAP`): a table's moves
/// replayed with it would not be the moves played.
fn reworded_trap() -> PathBuf {
    reworded_builds().join("trap.wasm")
}

/// [`reworded`]'s build whose `take` is called `pick` (`-DTAKE_IS_PICK`).
fn renamed() -> PathBuf {
    reworded_builds().join("pick.wasm")
}

/// Builds [`reworded`], [`reworded_trap`] and [`renamed`] once per run, into the folder
/// returned.
fn reworded_builds() -> &'static PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
        let tree = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("daemon-components-reworded");
        let _ = std::fs::remove_dir_all(&tree);
        let copy = |from: &str| {
            let to = tree.join(from);
            std::fs::create_dir_all(to.parent().expect("a folder")).expect("makes the folder");
            std::fs::copy(root.join(from), &to).unwrap_or_else(|e| panic!("copies {from}: {e}"));
        };
        for file in [
            "games/nim-wasm/build.sh",
            "games/nim-wasm/game.c",
            "games/nim-wasm/rules.c",
            "games/nim-wasm/options.c",
        ] {
            copy(file);
        }
        for file in ["games/nim-wasm/rules.h", "games/nim-wasm/nim.transcript", "locales/zh-CN/nim.ftl"] {
            copy(file);
        }
        for file in ["games/nim-wasm/texts/en.ftl", "games/nim-wasm/texts/zh-CN.ftl"] {
            copy(file);
        }
        for wit in std::fs::read_dir(root.join("wit")).expect("wit/") {
            let name = wit.expect("an entry").file_name();
            copy(&format!("wit/{}", name.to_string_lossy()));
        }
        let english = std::fs::read_to_string(root.join("locales/en/nim.ftl")).expect("nim.ftl");
        let old = "from pile { $pile }. Piles: { $piles }. { $next } to move.";
        assert_eq!(english.matches(old).count(), 1, "nim-took ends {old:?} in locales/en/nim.ftl");
        let help = "nim-help-take = On your turn:";
        assert_eq!(english.matches(help).count(), 1, "{help:?} in locales/en/nim.ftl");
        std::fs::create_dir_all(tree.join("locales/en")).expect("locales/en");
        std::fs::write(
            tree.join("locales/en/nim.ftl"),
            english
                .replace(old, "from pile { $pile }. Piles: { $piles }. { $next } plays next.")
                .replace(help, "nim-help-take = When it is your turn:"),
        )
        .expect("writes");
        let out = tree.join("out");
        build(&tree, &out, &[("nim", ""), ("trap", "-DHOSTILE_TRAP"), ("pick", "-DTAKE_IS_PICK")]);
        out
    })
}

/// Issue 33 (reload): after SIGHUP loads a build whose texts differ, a table that opened
/// on the old build is still worded by it, and a new table by the new one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_of_an_old_build_keeps_its_own_words_after_a_reload() {
    let (first, second) = (component("nim"), reworded());
    assert_ne!(sha256(&first), sha256(&second), "two builds");
    let server = InspIrcd::start().unwrap_or_else(|e| panic!("InspIRCd is needed for this test: {e}"));
    let port = server.port();
    let mut daemon = start(port, "[[game]]\npath = \"games/nim.wasm\"\n", Some(&first));
    let (mut alice, mut bob) = players(port, &mut daemon).await;

    says(&mut alice, "#one", "!new nim-wasm", "opens a game of Nim", &daemon).await;
    says(&mut bob, "#one", "!join", "moves first", &daemon).await;
    let before = says(&mut alice, "#one", "!take 1 a", "takes 1 stone", &daemon).await;
    assert!(before.contains("bob to move"), "{before}");

    std::fs::copy(&second, daemon.path("games/nim.wasm")).expect("copies");
    daemon.hangup().unwrap_or_else(|e| panic!("{e}"));
    daemon.wait_for_log("config reloaded", WAIT).unwrap_or_else(|e| panic!("{e}"));

    // The new build's table, worded by the new build.
    says(&mut alice, "#two", "!new nim-wasm", "opens a game of Nim", &daemon).await;
    says(&mut bob, "#two", "!join", "moves first", &daemon).await;
    let new = says(&mut alice, "#two", "!take 1 a", "takes 1 stone", &daemon).await;
    assert!(new.contains("bob plays next"), "the new table speaks the new build's words: {new}");
    // The old table, worded by its own build.
    let old = says(&mut bob, "#one", "!take 1 b", "takes 1 stone", &daemon).await;
    assert!(
        old.contains("alice to move") && !old.contains("plays next"),
        "the old table keeps its words: {old}"
    );
    // And so after a restart (restored by its build's hash).
    daemon.restart().unwrap_or_else(|e| panic!("{e}"));
    until_answering(&mut alice, &mut daemon).await;
    let restored = says(&mut alice, "#one", "!take 1 c", "takes 1 stone", &daemon).await;
    assert!(restored.contains("bob to move"), "after a restart too: {restored}");
    let new = says(&mut bob, "#two", "!take 1 b", "takes 1 stone", &daemon).await;
    assert!(new.contains("alice plays next"), "{new}");
}

/// Issue 33: after SIGHUP loads a build that calls `take` `pick`, the table that opened
/// on the old build still takes `!take` (read by its own build's commands, not called
/// unknown), also after a restart; a new table takes `!pick` and does not know `!take`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_old_builds_table_reads_its_players_commands_by_its_own_build() {
    let (first, second) = (component("nim"), renamed());
    let server = InspIrcd::start().unwrap_or_else(|e| panic!("InspIRCd is needed for this test: {e}"));
    let port = server.port();
    let mut daemon = Daemon::new(BIN).unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(daemon.path("games")).expect("games/");
    std::fs::copy(&first, daemon.path("games/nim.wasm")).expect("copies");
    daemon.set_config(&config(port, "[[game]]\npath = \"games/nim.wasm\"\n")).expect("config");
    daemon.spawn().unwrap_or_else(|e| panic!("{e}"));
    let (mut alice, mut bob) = tokio::join!(player(port, "alice"), player(port, "bob"));
    until_answering(&mut alice, &mut daemon).await;
    says(&mut alice, "#one", "!new nim-wasm", "opens a game of Nim", &daemon).await;
    says(&mut bob, "#one", "!join", "moves first", &daemon).await;

    std::fs::copy(&second, daemon.path("games/nim.wasm")).expect("copies");
    daemon.hangup().unwrap_or_else(|e| panic!("{e}"));
    daemon.wait_for_log("config reloaded", WAIT).unwrap_or_else(|e| panic!("{e}"));
    says(&mut alice, "#one", "!take 1 a", "alice takes 1 stone from pile a", &daemon).await;
    says(&mut alice, "#two", "!new nim-wasm", "opens a game of Nim", &daemon).await;
    says(&mut bob, "#two", "!join", "moves first", &daemon).await;
    let unknown = says(&mut alice, "#two", "!take 1 a", "Unknown command", &daemon).await;
    assert!(unknown.contains("!take"), "{unknown}");
    says(&mut alice, "#two", "!pick 1 a", "alice takes 1 stone from pile a", &daemon).await;
    let unknown = says(&mut bob, "#one", "!pick 1 b", "Unknown command", &daemon).await;
    assert!(unknown.contains("!pick"), "{unknown}");

    // Restored at a restart by its build's hash, it reads them the same.
    daemon.restart().unwrap_or_else(|e| panic!("{e}"));
    until_answering(&mut alice, &mut daemon).await;
    says(&mut bob, "#one", "!take 1 b", "bob takes 1 stone from pile b", &daemon).await;
    daemon.terminate(Duration::from_secs(15)).unwrap_or_else(|e| panic!("{e}"));
    let (ok, said) = verify(&daemon);
    assert!(ok, "verify agrees:\n{said}");
}

/// `spellbridge verify` of the daemon's database: whether it passed, and what it said.
fn verify(daemon: &Daemon) -> (bool, String) {
    let output = daemon
        .command(&["verify", "--db", "games.db", "--config", "spellbridge.toml"])
        .unwrap_or_else(|e| panic!("{e}"));
    let said =
        format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.success(), said)
}

/// Issue 33, item 3 (replay): a table opened on one build and played on after a reload
/// to another (which traps at `take`, so a replay with it would not be the game played,
/// and words its news and help otherwise) is replayed by `verify` with its own build, kept
/// by hash, and agrees; `!help take` at it is its build's, at a new table the new one's;
/// rebuilt from its journal at a start (its snapshot damaged), it is still worded by its
/// own build; and with that build gone from the compiled-games folder, `verify` fails
/// naming the build and where to put it back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_old_builds_table_replays_verifies_and_is_helped_by_its_own_build() {
    let (first, second) = (component("nim"), reworded_trap());
    let first_hash = sha256(&first);
    assert_ne!(first_hash, sha256(&second), "two builds");
    let server = InspIrcd::start().unwrap_or_else(|e| panic!("InspIRCd is needed for this test: {e}"));
    let port = server.port();
    let mut daemon = Daemon::new(BIN).unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(daemon.path("games")).expect("games/");
    std::fs::copy(&first, daemon.path("games/nim.wasm")).expect("copies");
    daemon.set_config(&config(port, "[[game]]\npath = \"games/nim.wasm\"\n")).expect("config");
    daemon.spawn().unwrap_or_else(|e| panic!("{e}"));
    let (mut alice, mut bob) = tokio::join!(player(port, "alice"), player(port, "bob"));
    until_answering(&mut alice, &mut daemon).await;

    says(&mut alice, "#one", "!new nim-wasm", "opens a game of Nim", &daemon).await;
    says(&mut bob, "#one", "!join", "moves first", &daemon).await;
    says(&mut alice, "#one", "!take 1 a", "takes 1 stone", &daemon).await;

    std::fs::copy(&second, daemon.path("games/nim.wasm")).expect("copies");
    daemon.hangup().unwrap_or_else(|e| panic!("{e}"));
    daemon.wait_for_log("config reloaded", WAIT).unwrap_or_else(|e| panic!("{e}"));
    // The old table plays on with its build, and is helped by it; a new table by the new.
    let took = says(&mut bob, "#one", "!take 1 b", "bob takes 1 stone", &daemon).await;
    assert!(took.contains("alice to move"), "{took}");
    says(&mut alice, "#two", "!new nim-wasm", "opens a game of Nim", &daemon).await;
    // (`!help take` explains the built-in Nim's `take` too, in the old words.)
    let help = says(&mut alice, "#one", "!help take", "your turn:", &daemon).await;
    assert!(help.contains("On your turn:") && !help.contains("When it is"), "the old build's help: {help}");
    let help = says(&mut alice, "#two", "!help take", "your turn:", &daemon).await;
    assert!(help.contains("When it is your turn:"), "the new build's help: {help}");
    says(&mut alice, "#one", "!take 1 c", "alice takes 1 stone from pile c", &daemon).await;
    daemon.terminate(Duration::from_secs(15)).unwrap_or_else(|e| panic!("{e}"));

    // `verify` replays table 0 with the build it opened with, and agrees.
    let (ok, said) = verify(&daemon);
    assert!(ok, "verify agrees:\n{said}");

    // Its snapshot damaged, a start rebuilds it from its journal: still its own build's.
    let connection = rusqlite::Connection::open(daemon.path("games.db")).expect("sqlite opens");
    connection.execute("UPDATE tables SET snapshot = '{}' WHERE id = 0", []).expect("damage");
    drop(connection);
    daemon.spawn().unwrap_or_else(|e| panic!("{e}"));
    until_answering(&mut alice, &mut daemon).await;
    assert!(daemon.log().contains("rebuilt from its journal"), "{}", daemon.log_tail(60));
    let took = says(&mut bob, "#one", "!take 1 a", "bob takes 1 stone from pile a", &daemon).await;
    assert!(took.contains("alice to move") && !took.contains("plays next"), "its own words: {took}");
    let help = says(&mut alice, "#one", "!help take", "your turn:", &daemon).await;
    assert!(help.contains("On your turn:") && !help.contains("When it is"), "its own help: {help}");
    daemon.terminate(Duration::from_secs(15)).unwrap_or_else(|e| panic!("{e}"));

    // Its build gone: `verify` fails, naming it and where to put it back.
    let kept = daemon.path(format!("spellbridge-compiled-games/{first_hash}.wasm"));
    std::fs::remove_file(&kept).unwrap_or_else(|e| panic!("{}: {e}", kept.display()));
    let (ok, said) = verify(&daemon);
    assert!(!ok, "verify fails without the build:\n{said}");
    assert!(
        said.contains(&first_hash) && said.contains("not available") && said.contains("put that build back"),
        "names the build and what to do:\n{said}"
    );
}
