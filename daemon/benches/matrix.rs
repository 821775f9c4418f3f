//! Matrix benchmark (a bench binary that prints figures): `cargo bench -p spellbridge --bench matrix`.
//!
//! One Synapse on loopback (the test harness's, rate limits raised) serves, in the same
//! run and each in a room of its own:
//!
//! - the floor, with no bot: user A sends a message and user B's long-poll `/sync`
//!   receives it (one way); and B answers it at once, A's sync receiving that (a round
//!   trip with a bot that takes no time);
//! - spellbridge (`spellbridge run`, this package's binary, one `[[matrix]]` account that
//!   accepts invites): a Thaum table opened in the room by the measuring user, then round
//!   trips of `!status` (a question: answered, nothing written);
//! - a matrix-nio echo bot (`tests/scripts/nio_echo.py`, from the venv of
//!   `tests/scripts/install-nio.sh`): round trips of `!echo x`, answered with `x`;
//! - the resident memory of each bot idle in 1 room and in [`IDLE_ROOMS`] rooms.
//!
//! Each client is a raw client-server API client (`tests/harness/matrix_client.rs`) whose
//! own task long-polls `/sync` without pause, passing `next_batch` on; a user sends with a
//! second client on the same access token (its own connection), so the send never waits
//! behind the long poll. A time runs from just before the `PUT …/send` to the moment the
//! listening sync returned the awaited event. Two patterns: back to back (the next command
//! as soon as the reply arrived; [`BACK_TO_BACK`] measured after [`WARMUP`] unmeasured)
//! and with a [`GAP`] of idle before each of [`GAPPED`] commands. Both bots run during the
//! whole latency part and the subjects take turns, one exchange each per round, so that
//! load from elsewhere on a shared machine falls on all of them alike. Every wait is
//! bounded; the bots and the server are stopped at the end (SIGTERM, then SIGKILL), also
//! when the bench panics.
//!
//! To see where a bot's time goes: `SPELLBRIDGE_BENCH_RUST_LOG` sets the daemon's
//! `RUST_LOG` (default `info`); `SPELLBRIDGE_BENCH_KEEP_LOGS=DIR` copies each bot's log
//! there when it stops (`spellbridge-<pid>.log`, `matrix-nio-<pid>.log`), and Synapse's
//! at the end (`synapse.log`, then with a line per request);
//! `tests/scripts/matrix_bench_steps.py` splits the exchanges into steps with them;
//! `SPELLBRIDGE_BENCH_TRACE=FILE` writes one line per measured exchange there: what, round,
//! pattern, and the wall-clock times (µs since the epoch, to set beside the daemon's log)
//! of the send, the end of its `PUT`, and the awaited event's arrival.
//!
//! `SPELLBRIDGE_BENCH_QUICK=1` measures a fifth of the rounds, to try a change quickly
//! (its p99s mean little).
//!
//! Needs Synapse (`tests/scripts/install-synapse.sh`) and matrix-nio
//! (`tests/scripts/install-nio.sh`; the venv is `$SPELLBRIDGE_NIO_VENV`, default
//! `~/.cache/spellbridge/nio-venv`).

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use spellbridge_tests::harness::matrix_client::{Event, MatrixClient};
use spellbridge_tests::harness::synapse::{self, Synapse};

mod support;
use support::process::Process;
use support::{Listener, ms, percentile, rss_mib};

/// The daemon: Cargo builds this package's binary for its benches and names it here.
const SPELLBRIDGE: &str = env!("CARGO_BIN_EXE_spellbridge");
/// The matrix-nio echo bot.
const NIO_SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/scripts/nio_echo.py");
/// Round trips measured back to back, after [`WARMUP`] unmeasured ones.
const BACK_TO_BACK: usize = 200;
const WARMUP: usize = 10;
/// Round trips measured with a [`GAP`] of idle before each. With 30 the two bots' p50s
/// moved by 1–2 ms from run to run, as much as they differed (docs/benchmarks.md).
const GAPPED: usize = 60;
const GAP: Duration = Duration::from_secs(1);
/// Rooms for the memory figure.
const IDLE_ROOMS: usize = 100;
/// The longest one reply may take before the bench gives up.
const REPLY_LIMIT: Duration = Duration::from_secs(10);
/// The longest a bot may take to start answering (or to join the idle rooms).
const START_LIMIT: Duration = Duration::from_secs(120);

// ---------------------------------------------------------------------------------------
// Child processes

/// A bot as a child process ([`Process`]: its temp dir, log and stop) and the Matrix user
/// it answers as. Dropping it stops it.
struct Bot {
    process: Process,
    /// Its Matrix user id.
    user_id: String,
}

fn spawn(name: &'static str, user_id: &str, dir: tempfile::TempDir, command: &mut Command) -> Bot {
    Bot { process: Process::spawn(name, dir, command), user_id: user_id.to_owned() }
}

/// A temp dir for a bot with its password in a file.
fn bot_dir(prefix: &str, password: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new().prefix(prefix).tempdir().expect("temp dir");
    let file = dir.path().join("bot-password");
    std::fs::write(&file, format!("{password}\n")).expect("write the password file");
    (dir, file)
}

/// `spellbridge run` with one `[[matrix]]` account that accepts invites from the server's
/// users (a new store: it logs in as a new device, and skips its first sync's history).
fn start_spellbridge(synapse: &Synapse, user_id: &str) -> Bot {
    let (dir, password_file) = bot_dir("spellbridge-matrix-bench-", &password(SPELLBRIDGE_USER));
    let config = format!(
        "prefix = \"!\"\n\
         [store]\npath = \"games.db\"\n\
         [thaum]\nschedule = \"manual\"\n\
         [[matrix]]\nname = \"bench\"\nhomeserver = \"{homeserver}\"\nuser_id = \"{user_id}\"\n\
         password = {{ file = {password_file:?} }}\nstore = {store:?}\n\
         invite_allow = [\"*:localhost\"]\n[matrix.user_limit]\nenabled = false\n",
        homeserver = synapse.base_url(),
        store = dir.path().join("matrix-store"),
    );
    let path = dir.path().join("spellbridge.toml");
    std::fs::write(&path, config).expect("write the spellbridge config");
    let mut command = Command::new(SPELLBRIDGE);
    let log = std::env::var("SPELLBRIDGE_BENCH_RUST_LOG").unwrap_or_else(|_| "info".to_owned());
    command.args(["run", "--config"]).arg(&path).env("RUST_LOG", log);
    spawn("spellbridge", user_id, dir, &mut command)
}

/// The matrix-nio venv, as `tests/scripts/install-nio.sh` makes it.
fn nio_venv() -> PathBuf {
    match std::env::var_os("SPELLBRIDGE_NIO_VENV").filter(|v| !v.is_empty()) {
        Some(path) => PathBuf::from(path),
        None => {
            let home = std::env::var_os("HOME").expect("HOME is set");
            Path::new(&home).join(".cache/spellbridge/nio-venv")
        }
    }
}

/// The matrix-nio echo bot (`tests/scripts/nio_echo.py`), accepting every invite.
fn start_nio(synapse: &Synapse, user_id: &str) -> Bot {
    let (dir, password_file) = bot_dir("nio-bench-", &password(NIO_USER));
    let mut command = Command::new(nio_venv().join("bin/python"));
    command.arg(NIO_SCRIPT).arg(synapse.base_url()).arg(user_id).arg(&password_file);
    spawn("matrix-nio", user_id, dir, &mut command)
}

// ---------------------------------------------------------------------------------------
// Users

const SPELLBRIDGE_USER: &str = "spellbridge";
const NIO_USER: &str = "niobot";

fn password(localpart: &str) -> String {
    format!("{localpart}-password")
}

/// A user: a client that sends and a listener on the same access token.
struct User {
    id: String,
    sender: MatrixClient,
    listener: Listener,
}

impl User {
    async fn new(synapse: &Synapse, (id, token): &(String, String)) -> User {
        let base = synapse.base_url();
        let sender = MatrixClient::from_token(&base, id, token).unwrap_or_else(|e| panic!("{e}"));
        let listener = Listener::start(&base, id, token).await;
        User { id: id.clone(), sender, listener }
    }

    async fn say(&mut self, room: &str, text: &str) {
        self.sender.send_text(room, text).await.unwrap_or_else(|e| panic!("{} sends: {e}", self.id));
    }

    /// Creates an unencrypted private room inviting `invite`; returns its id.
    async fn room(&mut self, name: &str, invite: &[&str]) -> String {
        self.sender.create_room(name, invite, false).await.unwrap_or_else(|e| panic!("{e}"))
    }
}

/// Whether `event` is a message from `sender` in `room` whose body `body` accepts.
fn message_from(event: &Event, sender: &str, room: &str, body: impl Fn(&str) -> bool) -> bool {
    event.sender == sender && event.room_id == room && event.message().is_some_and(|m| body(&m.body))
}

// ---------------------------------------------------------------------------------------
// Figures

#[derive(Clone, Copy)]
struct Latency {
    p50: Duration,
    p99: Duration,
}

fn latency(mut times: Vec<Duration>) -> Latency {
    times.sort();
    Latency { p50: percentile(&times, 0.5), p99: percentile(&times, 0.99) }
}

/// The file of `SPELLBRIDGE_BENCH_TRACE`, if set, and the moment [`Instant`]s are
/// counted from on the wall clock.
type TraceSink = Option<(Mutex<std::fs::File>, Instant, SystemTime)>;

fn trace_sink() -> &'static TraceSink {
    static SINK: OnceLock<TraceSink> = OnceLock::new();
    SINK.get_or_init(|| {
        let path = std::env::var_os("SPELLBRIDGE_BENCH_TRACE").filter(|p| !p.is_empty())?;
        let file = std::fs::File::create(&path).expect("the SPELLBRIDGE_BENCH_TRACE file");
        Some((Mutex::new(file), Instant::now(), SystemTime::now()))
    })
}

/// Writes one exchange to the `SPELLBRIDGE_BENCH_TRACE` file (when set).
fn trace(what: &str, n: usize, pattern: Pattern, times: [Instant; 3]) {
    let Some((file, instant, wall)) = trace_sink() else { return };
    let micros = |t: Instant| {
        let at = *wall + t.saturating_duration_since(*instant);
        at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros())
    };
    let pattern = if pattern == Pattern::Gapped { "gapped" } else { "back-to-back" };
    let [sent, put, arrived] = times.map(micros);
    if let Ok(mut file) = file.lock() {
        use std::io::Write as _;
        let _ = writeln!(file, "{what} {n} {pattern} {sent} {put} {arrived}");
    }
}

/// How commands follow each other.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pattern {
    /// The next as soon as the reply arrived.
    BackToBack,
    /// [`GAP`] of idle before each.
    Gapped,
}

/// Both patterns' figures of one thing measured.
#[derive(Clone, Copy)]
struct Figures {
    back_to_back: Latency,
    gapped: Latency,
}

/// The things measured, each round in turn (so that a machine shared with other work
/// loads them alike): A's `PUT /send` alone (timed inside the next), the one-way floor,
/// the round-trip floor, spellbridge's `!status`, matrix-nio's `!echo x`.
const SUBJECTS: usize = 5;

/// The rooms and bots measured.
struct Setup<'a> {
    floor_room: &'a str,
    spellbridge: &'a Bot,
    spellbridge_room: &'a str,
    nio: &'a Bot,
    nio_room: &'a str,
}

/// One round of each subject, one after the other; the times in [`SUBJECTS`]' order.
async fn round(
    a: &mut User,
    b: &mut User,
    setup: &Setup<'_>,
    pattern: Pattern,
    n: usize,
) -> [Duration; SUBJECTS] {
    let gap = async || {
        if pattern == Pattern::Gapped {
            tokio::time::sleep(GAP).await;
        }
    };
    gap().await;
    let [start, put, arrived] = floor_one_way(a, b, setup.floor_room, n).await;
    trace("one-way", n, pattern, [start, put, arrived]);
    gap().await;
    let round_trip = floor_round_trip(a, b, setup.floor_room, n).await;
    trace("round-trip", n, pattern, round_trip);
    gap().await;
    let spellbridge =
        command_round_trip(a, setup.spellbridge, setup.spellbridge_room, "!status", |t| t.contains("Mana"))
            .await;
    trace("spellbridge", n, pattern, spellbridge);
    gap().await;
    let nio = command_round_trip(a, setup.nio, setup.nio_room, "!echo x", |t| t == "x").await;
    trace("nio", n, pattern, nio);
    let took = |[start, _, end]: [Instant; 3]| end - start;
    [put - start, arrived - start, took(round_trip), took(spellbridge), took(nio)]
}

/// Every subject in one pattern: the figures in [`SUBJECTS`]' order.
async fn measure(a: &mut User, b: &mut User, setup: &Setup<'_>, pattern: Pattern) -> [Latency; SUBJECTS] {
    let (warmup, measured) = match pattern {
        Pattern::BackToBack => (WARMUP, BACK_TO_BACK),
        Pattern::Gapped => (0, GAPPED),
    };
    let measured = measured / rounds_divisor();
    let mut times: [Vec<Duration>; SUBJECTS] = Default::default();
    for n in 0..warmup + measured {
        let round = round(a, b, setup, pattern, n).await;
        if n >= warmup {
            for (all, time) in times.iter_mut().zip(round) {
                all.push(time);
            }
        }
    }
    times.map(latency)
}

/// 5 with `SPELLBRIDGE_BENCH_QUICK` set, else 1.
fn rounds_divisor() -> usize {
    if std::env::var_os("SPELLBRIDGE_BENCH_QUICK").is_some() { 5 } else { 1 }
}

/// One way: A sends a message, B's sync receives it. Returns when A sent, when A's
/// `PUT` returned and when B had it.
async fn floor_one_way(a: &mut User, b: &mut User, room: &str, n: usize) -> [Instant; 3] {
    let text = format!("floor {n}");
    let start = Instant::now();
    a.say(room, &text).await;
    let put = Instant::now();
    let at = b
        .listener
        .wait_for(REPLY_LIMIT, |e| message_from(e, &a.id, room, |t| t == text))
        .await
        .unwrap_or_else(|skipped| panic!("B never received A's message; skipped: {skipped:#?}"));
    [start, put, at]
}

/// A round trip with a bot that takes no time: A sends, B's sync receives it, B answers
/// at once, A's sync receives the answer. Returns when A sent, when A's `PUT` returned
/// and when A had the answer.
async fn floor_round_trip(a: &mut User, b: &mut User, room: &str, n: usize) -> [Instant; 3] {
    let (ping, pong) = (format!("ping {n}"), format!("pong {n}"));
    let start = Instant::now();
    a.say(room, &ping).await;
    let put = Instant::now();
    b.listener
        .wait_for(REPLY_LIMIT, |e| message_from(e, &a.id, room, |t| t == ping))
        .await
        .unwrap_or_else(|skipped| panic!("B never received A's ping; skipped: {skipped:#?}"));
    b.say(room, &pong).await;
    let at = a
        .listener
        .wait_for(REPLY_LIMIT, |e| message_from(e, &b.id, room, |t| t == pong))
        .await
        .unwrap_or_else(|skipped| panic!("A never received B's pong; skipped: {skipped:#?}"));
    [start, put, at]
}

/// A command round trip: the user sends `command`, its sync receives the bot's reply
/// that `is_reply` accepts. Returns when the user sent, when its `PUT` returned and when
/// it had the reply.
async fn command_round_trip(
    user: &mut User,
    bot: &Bot,
    room: &str,
    command: &str,
    is_reply: impl Fn(&str) -> bool,
) -> [Instant; 3] {
    let start = Instant::now();
    user.say(room, command).await;
    let put = Instant::now();
    match user.listener.wait_for(REPLY_LIMIT, |e| message_from(e, &bot.user_id, room, &is_reply)).await {
        Ok(at) => [start, put, at],
        Err(skipped) => panic!(
            "{} did not answer {command:?} within {REPLY_LIMIT:?}; events skipped:\n  {}\nits log:\n{}",
            bot.process.name,
            skipped.join("\n  "),
            bot.process.log()
        ),
    }
}

/// Sends `probe` (bounded) until the bot answers it in `room`: it has joined and is
/// ready. Then lets late answers to earlier probes pass.
async fn wait_until_answering(
    user: &mut User,
    bot: &mut Bot,
    room: &str,
    probe: &str,
    is_reply: impl Fn(&str) -> bool,
) -> Duration {
    let started = Instant::now();
    while started.elapsed() < START_LIMIT {
        if bot.process.exited() {
            panic!("{} exited while starting; its log:\n{}", bot.process.name, bot.process.log());
        }
        user.say(room, probe).await;
        let answer = user
            .listener
            .wait_for(Duration::from_secs(2), |e| message_from(e, &bot.user_id, room, &is_reply))
            .await;
        if answer.is_ok() {
            let ready = started.elapsed();
            user.listener.drain(Duration::from_secs(1)).await;
            return ready;
        }
    }
    panic!(
        "{} never answered in {room} within {START_LIMIT:?}; its log:\n{}",
        bot.process.name,
        bot.process.log()
    );
}

/// Waits (bounded) until the bot's account has joined every room in `rooms`, as the
/// server sees it (`/joined_rooms` with a token of the bot's account).
async fn wait_until_joined(bot: &mut Bot, account: &mut MatrixClient, rooms: &[String]) -> Duration {
    let started = Instant::now();
    let wanted: HashSet<&String> = rooms.iter().collect();
    while started.elapsed() < START_LIMIT {
        if bot.process.exited() {
            panic!("{} exited while joining; its log:\n{}", bot.process.name, bot.process.log());
        }
        let joined = account.joined_rooms().await.unwrap_or_else(|e| panic!("{e}"));
        if joined.iter().filter(|r| wanted.contains(r)).count() == wanted.len() {
            return started.elapsed();
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    panic!(
        "{} did not join {} rooms within {START_LIMIT:?}; its log:\n{}",
        bot.process.name,
        rooms.len(),
        bot.process.log()
    );
}

/// The bot idle in `rooms`: its RSS once the server lists it in all of them, it answered
/// in the last one, and a second has passed.
async fn idle_rss(
    user: &mut User,
    account: &mut MatrixClient,
    mut bot: Bot,
    rooms: &[String],
    probe: &str,
    is_reply: impl Fn(&str) -> bool,
) -> (f64, Duration) {
    let joined = wait_until_joined(&mut bot, account, rooms).await;
    let last = rooms.last().expect("rooms");
    wait_until_answering(user, &mut bot, last, probe, is_reply).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss = rss_mib(bot.process.pid());
    bot.process.stop();
    (rss, joined)
}

struct Row {
    what: String,
    figure: String,
}

fn row(rows: &mut Vec<Row>, what: impl Into<String>, figure: impl Into<String>) {
    rows.push(Row { what: what.into(), figure: figure.into() });
}

fn lat(l: Latency) -> String {
    format!("p50 {:7.2} ms   p99 {:7.2} ms", ms(l.p50), ms(l.p99))
}

// ---------------------------------------------------------------------------------------

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // `cargo test --benches` runs this with `--test`-like flags; run the figures only for bench.
    if args.iter().any(|a| a == "--test" || a == "--list") {
        return;
    }
    let python = nio_venv().join("bin/python");
    assert!(
        python.exists(),
        "matrix-nio is needed: {} is missing; run tests/scripts/install-nio.sh",
        python.display()
    );
    let keep_logs = std::env::var_os("SPELLBRIDGE_BENCH_KEEP_LOGS").filter(|d| !d.is_empty());
    // With the logs kept, Synapse's log has a line per request (its own steps).
    let synapse =
        Synapse::start_with(synapse::Options { access_log: keep_logs.is_some(), ..Default::default() })
            .unwrap_or_else(|e| panic!("Synapse is needed (tests/scripts/install-synapse.sh): {e}"));
    let register = |name: &str| {
        synapse.register(name, &password(name), false).unwrap_or_else(|e| panic!("registering {name}: {e}"))
    };
    let accounts = Accounts {
        alice: register("alice"),
        bob: register("bob"),
        spellbridge: register(SPELLBRIDGE_USER),
        nio: register(NIO_USER),
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
    let report = runtime.block_on(bench(&synapse, &accounts));
    drop(runtime);
    if let Some(dir) = keep_logs {
        let to = Path::new(&dir).join("synapse.log");
        match std::fs::copy(synapse.dir().join("homeserver.log"), &to) {
            Ok(_) => eprintln!("matrix bench: Synapse's log kept as {}", to.display()),
            Err(e) => eprintln!("matrix bench: cannot keep Synapse's log as {}: {e}", to.display()),
        }
    }
    drop(synapse);
    print!("{report}");
}

/// Each account's user id and an access token (a device of its own).
struct Accounts {
    alice: (String, String),
    bob: (String, String),
    spellbridge: (String, String),
    nio: (String, String),
}

async fn bench(synapse: &Synapse, accounts: &Accounts) -> String {
    eprintln!("matrix bench: Synapse on {}; spellbridge is {SPELLBRIDGE}", synapse.base_url());
    let mut a = User::new(synapse, &accounts.alice).await;
    let mut b = User::new(synapse, &accounts.bob).await;
    let (sb_id, nio_id) = (accounts.spellbridge.0.as_str(), accounts.nio.0.as_str());

    // A room for each: the floor (A and B), spellbridge's and matrix-nio's. B is in the
    // bots' rooms too: to spellbridge a room of two is a direct chat, answered privately.
    let floor_room = a.room("floor", &[b.id.as_str()]).await;
    let sb_room = a.room("spellbridge", &[sb_id, b.id.as_str()]).await;
    let nio_room = a.room("nio", &[nio_id, b.id.as_str()]).await;
    for room in [&floor_room, &sb_room, &nio_room] {
        b.sender.accept_invite(room).await.unwrap_or_else(|e| panic!("{e}"));
    }

    // Both bots run from here to the end of the latency figures (idle while the others
    // are measured).
    let mut spellbridge = start_spellbridge(synapse, sb_id);
    let ready =
        wait_until_answering(&mut a, &mut spellbridge, &sb_room, "!games", |t| t.contains("Games:")).await;
    eprintln!("matrix bench: spellbridge answered after {:.1} s", ready.as_secs_f64());
    let sb_rss_one = rss_mib(spellbridge.process.pid());
    // A Thaum table opened by the measuring user: `!status` shows its sheet.
    a.say(&sb_room, "!new thaum").await;
    a.listener
        .wait_for(REPLY_LIMIT, |e| message_from(e, sb_id, &sb_room, |t| t.contains("opens a Thaum table")))
        .await
        .unwrap_or_else(|_| panic!("no Thaum table opened; log:\n{}", spellbridge.process.log()));
    let mut nio = start_nio(synapse, nio_id);
    let ready = wait_until_answering(&mut a, &mut nio, &nio_room, "!echo ready", |t| t == "ready").await;
    eprintln!("matrix bench: matrix-nio answered after {:.1} s", ready.as_secs_f64());
    let nio_rss_one = rss_mib(nio.process.pid());
    a.listener.drain(Duration::from_millis(500)).await;
    b.listener.drain(Duration::from_millis(100)).await;

    let setup = Setup {
        floor_room: &floor_room,
        spellbridge: &spellbridge,
        spellbridge_room: &sb_room,
        nio: &nio,
        nio_room: &nio_room,
    };
    let back_to_back = measure(&mut a, &mut b, &setup, Pattern::BackToBack).await;
    eprintln!("matrix bench: back to back done");
    let gapped = measure(&mut a, &mut b, &setup, Pattern::Gapped).await;
    let figures: Vec<Figures> = back_to_back
        .into_iter()
        .zip(gapped)
        .map(|(back_to_back, gapped)| Figures { back_to_back, gapped })
        .collect();
    let [puts, one_way, floor, sb, nio_figures] = [0, 1, 2, 3, 4].map(|i| figures[i]);
    spellbridge.process.stop();
    nio.process.stop();
    a.listener.drain(Duration::from_millis(300)).await;

    // Memory, idle in 100 rooms (both bots invited to each; one bot runs at a time).
    let mut rooms = Vec::with_capacity(IDLE_ROOMS);
    for n in 1..=IDLE_ROOMS {
        rooms.push(a.room(&format!("idle {n}"), &[sb_id, nio_id]).await);
    }
    // bob in the last one too, where the bots are asked: a room of three, not a DM.
    let last = rooms.last().expect("rooms");
    a.sender.invite(last, &b.id).await.unwrap_or_else(|e| panic!("{e}"));
    b.sender.accept_invite(last).await.unwrap_or_else(|e| panic!("{e}"));
    a.listener.drain(Duration::from_millis(500)).await;
    let base = synapse.base_url();
    let mut sb_account =
        MatrixClient::from_token(&base, sb_id, &accounts.spellbridge.1).unwrap_or_else(|e| panic!("{e}"));
    let mut nio_account =
        MatrixClient::from_token(&base, nio_id, &accounts.nio.1).unwrap_or_else(|e| panic!("{e}"));
    let (sb_rss, sb_joined) =
        idle_rss(&mut a, &mut sb_account, start_spellbridge(synapse, sb_id), &rooms, "!games", |t| {
            t.contains("Games:")
        })
        .await;
    let (nio_rss, nio_joined) =
        idle_rss(&mut a, &mut nio_account, start_nio(synapse, nio_id), &rooms, "!echo ready", |t| {
            t == "ready"
        })
        .await;

    // The table.
    let mut rows = Vec::new();
    for (name, f) in [
        ("floor, one way (A sends → B's sync)", one_way),
        ("floor, round trip (A → B, B answers → A)", floor),
        ("spellbridge !status", sb),
        ("matrix-nio !echo x", nio_figures),
        ("(A's PUT /send alone, client side)", puts),
    ] {
        row(&mut rows, format!("{name}, back to back"), lat(f.back_to_back));
        row(&mut rows, format!("{name}, 1 s gaps"), lat(f.gapped));
    }
    row(&mut rows, "spellbridge RSS, idle in 1 room", format!("{sb_rss_one:.1} MiB"));
    row(
        &mut rows,
        format!("spellbridge RSS, idle in {IDLE_ROOMS} rooms"),
        format!("{sb_rss:.1} MiB (joined them all {:.1} s after start)", sb_joined.as_secs_f64()),
    );
    row(&mut rows, "matrix-nio RSS, idle in 1 room", format!("{nio_rss_one:.1} MiB"));
    row(
        &mut rows,
        format!("matrix-nio RSS, idle in {IDLE_ROOMS} rooms"),
        format!("{nio_rss:.1} MiB (joined them all {:.1} s after start)", nio_joined.as_secs_f64()),
    );

    let width = rows.iter().map(|r| r.what.chars().count()).max().unwrap_or(0);
    let mut out = String::new();
    let gapped = GAPPED / rounds_divisor();
    let _ = writeln!(
        out,
        "Matrix benchmark: one Synapse on 127.0.0.1, rate limits raised; per figure {} round trips \
         back to back (after {WARMUP} unmeasured) and {gapped} with {GAP:?} of idle before each \
         (so their p99 is one of the slowest few)",
        BACK_TO_BACK / rounds_divisor()
    );
    for r in &rows {
        let pad = width - r.what.chars().count();
        let _ = writeln!(out, "  {}{}  {}", r.what, " ".repeat(pad), r.figure);
    }
    let verdict = |ok: bool| if ok { "met" } else { "MISSED" };
    let _ = writeln!(out, "goals (issue 5):");
    for (name, sb, fl, ow, ni) in [
        ("back to back", sb.back_to_back, floor.back_to_back, one_way.back_to_back, nio_figures.back_to_back),
        ("1 s gaps", sb.gapped, floor.gapped, one_way.gapped, nio_figures.gapped),
    ] {
        let over = ms(sb.p50) - ms(fl.p50);
        let _ = writeln!(
            out,
            "  {name}: !status p50 within 10 ms of the round-trip floor ({:+.2} ms): {}",
            over,
            verdict(over <= 10.0)
        );
        let _ = writeln!(
            out,
            "  {name}: (against the one-way floor, {:+.2} ms: {})",
            ms(sb.p50) - ms(ow.p50),
            verdict(ms(sb.p50) - ms(ow.p50) <= 10.0)
        );
        let _ = writeln!(
            out,
            "  {name}: !status p50 below matrix-nio's ({:.2} < {:.2} ms): {}",
            ms(sb.p50),
            ms(ni.p50),
            verdict(sb.p50 < ni.p50)
        );
    }
    out
}
