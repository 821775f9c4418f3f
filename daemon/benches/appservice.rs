//! Appservice relay benchmark (a bench binary that prints figures):
//! `cargo bench -p spellbridge --bench appservice` (issue 17).
//!
//! One InspIRCd and one Synapse on loopback (the test harness's: flood penalties off, rate
//! limits raised; Synapse with spellbridge's appservice registration, written first by
//! `spellbridge appservice-registration`), and two `spellbridge run` daemons (this
//! package's binary, built in the bench profile), each bridging its own IRC channel with
//! its own Matrix room (flood control and the per-user limit off):
//!
//! - bot mode: `@botmode:localhost` logs in with its password and relays IRC `#plain`
//!   into its room as `<ian> line`;
//! - appservice mode: `@spellbridge:localhost` (the registration's) relays IRC `#ghosts`
//!   into its room as ian's ghost `@irc_irc_ian:localhost` saying `line`.
//!
//! Latency, paced: one message at a time, [`PACE`] of idle before each, [`SAMPLES`]
//! measured after [`WARMUP`] unmeasured, the kinds interleaved round by round so
//! that each figure sees the same machine:
//! - *IRC floor*: IRC client ian says a line in `#floor`, IRC client ivy receives it;
//! - *Matrix floor*: Matrix user alice sends (`PUT …/send`) in a room without a bot
//!   (alice, bob and carol: as many members as a bridged room), bob's long-poll `/sync`
//!   returns it;
//! - *IRC → Matrix, bot mode*: ian says a line in `#plain`; bob's sync returns the bot's
//!   `<ian> line`;
//! - *IRC → Matrix, appservice mode*: ian says a line in `#ghosts`; bob's sync returns
//!   the ghost's `line`;
//! - *Matrix floor in the appservice's room*: alice sends in the appservice's bridged
//!   room, bob's sync returns it (Synapse pushes every event of that room to the
//!   appservice too, which the floor's room is spared; and the daemon relays it to IRC);
//! - *Matrix → IRC*: alice says a line in each daemon's room, ian reads `<alice> line` in
//!   its channel (bot mode learns of it by `/sync`; appservice mode by the homeserver's
//!   pushed transaction, or its bot's `/sync` if that is first);
//! - *a command's round trip*: alice's `!status` in each daemon's room, bob's sync returns
//!   the bot's answer.
//!
//! A relayed line crosses both networks, so each relay's floor is the IRC floor plus the
//! Matrix floor (p50 + p50); the goal is appservice mode within 3 ms of it.
//! Every time is measured on the bench's clock, from just before the send to the moment
//! the receiving client read the line (IRC) or its sync returned (Matrix). Every wait is
//! bounded; the daemons and the servers are stopped at the end, also when it panics.
//!
//! Environment: `SPELLBRIDGE_APPSERVICE_RUST_LOG` sets the daemons' `RUST_LOG` (default
//! `info`); `SPELLBRIDGE_BENCH_QUICK=1` measures a fifth of the samples.
//!
//! Needs InspIRCd (`tests/scripts/install-inspircd.sh`) and Synapse
//! (`tests/scripts/install-synapse.sh`).

use std::fmt::Write as _;
use std::process::Command;
use std::time::{Duration, Instant};

use spellbridge_tests::harness::inspircd::InspIrcd;
use spellbridge_tests::harness::irc_client::IrcClient;
use spellbridge_tests::harness::matrix_client::{Event, MatrixClient};
use spellbridge_tests::harness::synapse::{self, Synapse};

mod support;
use support::appservice::{matrix_table, registration};
use support::process::{Process, free_port};
use support::{Listener, ms, percentile};

/// The daemon: Cargo builds this package's binary for its benches and names it here.
const SPELLBRIDGE: &str = env!("CARGO_BIN_EXE_spellbridge");
/// The appservice daemon's bot (the registration's), and the bot-mode daemon's.
const AS_BOT: &str = "spellbridge";
const BOT_MODE: &str = "botmode";
/// The channels: bot mode's, appservice mode's, and the floor's (not bridged).
const PLAIN: &str = "#plain";
const GHOSTS: &str = "#ghosts";
const FLOOR_CHANNEL: &str = "#floor";
/// Paced latency: samples per kind, after [`WARMUP`] unmeasured rounds, [`PACE`] apart.
const SAMPLES: usize = 200;
const WARMUP: usize = 10;
const PACE: Duration = Duration::from_millis(20);
/// The goal: appservice mode's p50 within this of the floor.
const GOAL: Duration = Duration::from_millis(3);
/// How long one message may take before the bench gives up.
const REPLY_LIMIT: Duration = Duration::from_secs(10);
/// How long a daemon may take to relay its first line.
const START_LIMIT: Duration = Duration::from_secs(120);

fn password(localpart: &str) -> String {
    format!("{localpart}-password")
}

/// The `[[irc]]` network (in `channel`) and the bridge of `channel` with `room`.
fn irc_and_bridge(irc_port: u16, nick: &str, channel: &str, room: &str) -> String {
    format!(
        "[[irc]]\nname = \"irc\"\nserver = \"127.0.0.1\"\nport = {irc_port}\ntls = false\n\
         nick = \"{nick}\"\nchannels = [\"{channel}\"]\nrequire_account = false\n\
         [irc.flood]\nenabled = false\n[irc.user_limit]\nenabled = false\n\
         [[bridge]]\nname = \"magic\"\n\
         rooms = [{{ network = \"irc\", room = \"{channel}\" }}, {{ network = \"matrix\", room = \"{room}\" }}]\n\
         relay = true\n"
    )
}

fn spawn(name: &'static str, dir: tempfile::TempDir, config: String) -> Process {
    let path = dir.path().join("spellbridge.toml");
    std::fs::write(&path, config).expect("write the spellbridge config");
    let rust_log = std::env::var("SPELLBRIDGE_APPSERVICE_RUST_LOG").unwrap_or_else(|_| "info".to_owned());
    let mut command = Command::new(SPELLBRIDGE);
    command.args(["run", "--config"]).arg(&path).env("RUST_LOG", rust_log);
    Process::spawn(name, dir, &mut command)
}

/// Reads until ivy (or ian) reads `text` in `channel`, within `limit`; when.
async fn irc_wait(client: &mut IrcClient, channel: &str, text: &str, limit: Duration) -> Option<Instant> {
    let deadline = Instant::now() + limit;
    loop {
        let left = deadline.checked_duration_since(Instant::now())?;
        let message = client.next_privmsg(left).await?;
        if message.target == channel && message.text == text {
            return Some(Instant::now());
        }
    }
}

/// Reads until `client` reads a line in `channel` containing `text`, within `limit`; when.
async fn irc_wait_for(client: &mut IrcClient, channel: &str, text: &str, limit: Duration) -> Option<Instant> {
    let deadline = Instant::now() + limit;
    loop {
        let left = deadline.checked_duration_since(Instant::now())?;
        let message = client.next_privmsg(left).await?;
        if message.target == channel && message.text.contains(text) {
            return Some(Instant::now());
        }
    }
}

/// Whether `event` is a message in `room` from `sender` whose body is `body`.
fn said(event: &Event, sender: &str, room: &str, body: &str) -> bool {
    event.sender == sender && event.room_id == room && event.message().is_some_and(|m| m.body == body)
}

#[derive(Clone, Copy)]
struct Latency {
    p50: Duration,
    p99: Duration,
}

fn latency(mut times: Vec<Duration>) -> Latency {
    times.sort();
    Latency { p50: percentile(&times, 0.5), p99: percentile(&times, 0.99) }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // `cargo test --benches` runs this with `--test`-like flags; run the figures only for bench.
    if args.iter().any(|a| a == "--test" || a == "--list") {
        return;
    }
    let as_dir =
        tempfile::Builder::new().prefix("spellbridge-appservice-bench-").tempdir().expect("temp dir");
    let as_port = free_port();
    let registration = registration(as_dir.path(), AS_BOT, as_port);
    let irc = InspIrcd::start()
        .unwrap_or_else(|e| panic!("InspIRCd is needed (tests/scripts/install-inspircd.sh): {e}"));
    let options = synapse::Options { app_services: vec![registration], ..synapse::Options::default() };
    let synapse = Synapse::start_with(options)
        .unwrap_or_else(|e| panic!("Synapse is needed (tests/scripts/install-synapse.sh): {e}"));
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
    let report = runtime.block_on(bench(irc.port(), &synapse, as_dir, as_port));
    drop(runtime);
    drop(synapse);
    drop(irc);
    print!("{report}");
}

async fn bench(irc_port: u16, synapse: &Synapse, as_dir: tempfile::TempDir, as_port: u16) -> String {
    let base = synapse.base_url();
    let register = |name: &str| {
        synapse.register(name, &password(name), false).unwrap_or_else(|e| panic!("registering {name}: {e}"))
    };
    let [(alice_id, alice_token), (bob_id, bob_token), (carol_id, carol_token), (bot_id, _)] =
        [register("alice"), register("bob"), register("carol"), register(BOT_MODE)];
    let as_bot = format!("@{AS_BOT}:localhost");
    let ghost = "@irc_irc_ian:localhost".to_owned();

    let connect = |nick: &'static str| async move {
        IrcClient::connect(irc_port, nick).await.unwrap_or_else(|e| panic!("{nick} connects: {e}"))
    };
    let (mut ian, mut ivy) = tokio::join!(connect("ian"), connect("ivy"));
    for channel in [PLAIN, GHOSTS, FLOOR_CHANNEL] {
        ian.join(channel).await.unwrap_or_else(|e| panic!("joining {channel}: {e}"));
    }
    ivy.join(FLOOR_CHANNEL).await.unwrap_or_else(|e| panic!("joining {FLOOR_CHANNEL}: {e}"));

    // Three rooms of three: each bot's, and the floor's.
    let mut alice =
        MatrixClient::from_token(&base, &alice_id, &alice_token).unwrap_or_else(|e| panic!("{e}"));
    let mut bob_client =
        MatrixClient::from_token(&base, &bob_id, &bob_token).unwrap_or_else(|e| panic!("{e}"));
    let mut carol =
        MatrixClient::from_token(&base, &carol_id, &carol_token).unwrap_or_else(|e| panic!("{e}"));
    let create = |with: String| [bob_id.clone(), with];
    let plain_room =
        alice.create_room("plain", &create(bot_id.clone()), false).await.unwrap_or_else(|e| panic!("{e}"));
    let ghost_room =
        alice.create_room("ghosts", &create(as_bot.clone()), false).await.unwrap_or_else(|e| panic!("{e}"));
    let floor_room =
        alice.create_room("floor", &create(carol_id.clone()), false).await.unwrap_or_else(|e| panic!("{e}"));
    for room in [&plain_room, &ghost_room, &floor_room] {
        bob_client.accept_invite(room).await.unwrap_or_else(|e| panic!("{e}"));
    }
    carol.accept_invite(&floor_room).await.unwrap_or_else(|e| panic!("{e}"));
    let mut bob = Listener::start(&base, &bob_id, &bob_token).await;

    // The daemons.
    let plain_dir =
        tempfile::Builder::new().prefix("spellbridge-botmode-bench-").tempdir().expect("temp dir");
    std::fs::write(plain_dir.path().join("bot-password"), format!("{}\n", password(BOT_MODE)))
        .expect("password");
    let plain_config = format!(
        "prefix = \"!\"\n[store]\npath = \"games.db\"\n\
         [[matrix]]\nname = \"matrix\"\nhomeserver = \"{base}\"\nuser_id = \"{bot_id}\"\n\
         password = {{ file = {password:?} }}\nstore = {store:?}\nrooms = [\"{plain_room}\"]\n\
         invite_allow = [\"*:localhost\"]\n[matrix.user_limit]\nenabled = false\n{irc}",
        password = plain_dir.path().join("bot-password"),
        store = plain_dir.path().join("matrix-store"),
        irc = irc_and_bridge(irc_port, BOT_MODE, PLAIN, &plain_room),
    );
    let as_config = format!(
        "{}{}",
        matrix_table(
            &base,
            AS_BOT,
            as_port,
            &as_dir.path().join("matrix-store"),
            std::slice::from_ref(&ghost_room)
        ),
        irc_and_bridge(irc_port, AS_BOT, GHOSTS, &ghost_room)
    );
    let mut plain_bot = spawn("spellbridge-bot-mode", plain_dir, plain_config);
    let mut as_bot_process = spawn("spellbridge-appservice", as_dir, as_config);
    let started = Instant::now();
    for (channel, sender, room, process) in
        [(PLAIN, &bot_id, &plain_room, &mut plain_bot), (GHOSTS, &ghost, &ghost_room, &mut as_bot_process)]
    {
        for probe in 0.. {
            assert!(
                started.elapsed() < START_LIMIT && !process.exited(),
                "the daemon of {channel} did not relay within {START_LIMIT:?}; its log:\n{}",
                process.log()
            );
            let line = format!("probe {probe}");
            ian.privmsg(channel, &line).await.unwrap_or_else(|e| panic!("{e}"));
            let shown = if channel == PLAIN { format!("<ian> {line}") } else { line.clone() };
            if bob.wait_for(Duration::from_secs(1), |e| said(e, sender, room, &shown)).await.is_ok() {
                break;
            }
        }
    }
    eprintln!(
        "appservice bench: both daemons relay, {:.1} s after their start",
        started.elapsed().as_secs_f64()
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    bob.drain(Duration::from_millis(500)).await;

    let quick = std::env::var_os("SPELLBRIDGE_BENCH_QUICK").is_some();
    let samples = if quick { SAMPLES / 5 } else { SAMPLES };
    let mut times: [Vec<Duration>; 9] = Default::default();
    for n in 0..(WARMUP + samples) {
        let mut round = [Duration::ZERO; 9];
        // IRC floor: ian → #floor → ivy.
        tokio::time::sleep(PACE).await;
        let text = format!("ifloor {n}");
        let start = Instant::now();
        ian.privmsg(FLOOR_CHANNEL, &text).await.unwrap_or_else(|e| panic!("{e}"));
        let at = irc_wait(&mut ivy, FLOOR_CHANNEL, &text, REPLY_LIMIT).await.expect("ian's line to ivy");
        round[0] = at - start;
        // Matrix floor: alice's PUT → bob's sync.
        tokio::time::sleep(PACE).await;
        let text = format!("mfloor {n}");
        let start = Instant::now();
        alice.send_text(&floor_room, &text).await.unwrap_or_else(|e| panic!("{e}"));
        let at = bob
            .wait_for(REPLY_LIMIT, |e| said(e, &alice_id, &floor_room, &text))
            .await
            .unwrap_or_else(|skipped| panic!("alice's message to bob; skipped {skipped:?}"));
        round[1] = at - start;
        // IRC → Matrix in bot mode, then in appservice mode.
        for (kind, channel, sender, room, process) in
            [(2, PLAIN, &bot_id, &plain_room, &plain_bot), (3, GHOSTS, &ghost, &ghost_room, &as_bot_process)]
        {
            tokio::time::sleep(PACE).await;
            let text = format!("i2m {n}");
            let shown = if kind == 2 { format!("<ian> {text}") } else { text.clone() };
            let start = Instant::now();
            ian.privmsg(channel, &text).await.unwrap_or_else(|e| panic!("{e}"));
            let at = bob.wait_for(REPLY_LIMIT, |e| said(e, sender, room, &shown)).await.unwrap_or_else(
                |skipped| {
                    panic!(
                        "ian's line in {channel} did not arrive ({skipped:?}); the daemon's log:\n{}",
                        process.log()
                    )
                },
            );
            round[kind] = at - start;
        }
        // Matrix floor in the appservice's room.
        tokio::time::sleep(PACE).await;
        let text = format!("asfloor {n}");
        let start = Instant::now();
        alice.send_text(&ghost_room, &text).await.unwrap_or_else(|e| panic!("{e}"));
        let at = bob.wait_for(REPLY_LIMIT, |e| said(e, &alice_id, &ghost_room, &text)).await.unwrap_or_else(
            |skipped| panic!("alice's message in the appservice's room; skipped {skipped:?}"),
        );
        round[4] = at - start;
        // Matrix → IRC: bot mode hears alice through its /sync; appservice mode through
        // the homeserver's pushed transaction (and its bot's /sync, whichever is first).
        for (kind, channel, room, process) in
            [(5, PLAIN, &plain_room, &plain_bot), (6, GHOSTS, &ghost_room, &as_bot_process)]
        {
            tokio::time::sleep(PACE).await;
            let text = format!("m2i-{n}-end");
            let start = Instant::now();
            alice.send_text(room, &text).await.unwrap_or_else(|e| panic!("{e}"));
            let at = irc_wait_for(&mut ian, channel, &format!("<alice> {text}"), REPLY_LIMIT).await;
            let at = at.unwrap_or_else(|| {
                panic!("alice's line did not reach {channel}; the daemon's log:\n{}", process.log())
            });
            round[kind] = at - start;
        }
        // A command's round trip: alice's `!status` in a room without a table, the bot's
        // answer read by bob's sync.
        for (kind, sender, room, process) in
            [(7, &bot_id, &plain_room, &plain_bot), (8, &as_bot, &ghost_room, &as_bot_process)]
        {
            tokio::time::sleep(PACE).await;
            let start = Instant::now();
            alice.send_text(room, "!status").await.unwrap_or_else(|e| panic!("{e}"));
            let answered = |e: &Event| {
                e.sender == *sender
                    && e.room_id == *room
                    && e.message().is_some_and(|m| m.body.contains("There is no game"))
            };
            let at = bob.wait_for(REPLY_LIMIT, answered).await.unwrap_or_else(|skipped| {
                panic!("no answer to !status ({skipped:?}); the daemon's log:\n{}", process.log())
            });
            round[kind] = at - start;
        }
        if n >= WARMUP {
            for (kind, took) in round.into_iter().enumerate() {
                times[kind].push(took);
            }
        }
    }
    plain_bot.stop();
    as_bot_process.stop();
    let [
        irc_floor,
        matrix_floor,
        bot_mode,
        appservice,
        pushed_floor,
        m2i_bot,
        m2i_appservice,
        command_bot,
        command_appservice,
    ] = times.map(latency);
    let floor = irc_floor.p50 + matrix_floor.p50;
    let mut report = String::new();
    let _ = writeln!(report, "IRC → Matrix relay, {samples} paced samples each ({PACE:?} apart):");
    for (what, l) in [
        ("IRC floor (ian → ivy)", irc_floor),
        ("Matrix floor (PUT → long poll)", matrix_floor),
        ("bot mode (<ian> line)", bot_mode),
        ("appservice mode (ghost)", appservice),
        ("Matrix floor, appservice's room", pushed_floor),
    ] {
        let _ = writeln!(report, "  {what:32} p50 {:8.2} ms   p99 {:8.2} ms", ms(l.p50), ms(l.p99));
    }
    let over = ms(appservice.p50) - ms(floor);
    let _ = writeln!(
        report,
        "  floor (IRC p50 + Matrix p50) {:.2} ms; appservice p50 is {over:+.2} ms from it (goal ≤ +{:.0} ms: {}); bot mode {:+.2} ms",
        ms(floor),
        ms(GOAL),
        if appservice.p50 <= floor + GOAL { "met" } else { "not met" },
        ms(bot_mode.p50) - ms(floor),
    );
    let _ = writeln!(
        report,
        "  against the floor of its own room (IRC p50 + Matrix p50 there) {:.2} ms: appservice p50 {:+.2} ms",
        ms(irc_floor.p50 + pushed_floor.p50),
        ms(appservice.p50) - ms(irc_floor.p50 + pushed_floor.p50),
    );
    let _ = writeln!(report, "Matrix → IRC relay and a command round trip, the same samples:");
    for (what, l) in [
        ("Matrix → IRC, bot mode (/sync)", m2i_bot),
        ("Matrix → IRC, appservice (push)", m2i_appservice),
        ("!status round trip, bot mode", command_bot),
        ("!status round trip, appservice", command_appservice),
    ] {
        let _ = writeln!(report, "  {what:32} p50 {:8.2} ms   p99 {:8.2} ms", ms(l.p50), ms(l.p99));
    }
    report
}
