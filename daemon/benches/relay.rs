//! Relay benchmark (a bench binary that prints figures): `cargo bench -p spellbridge --bench relay`.
//!
//! One InspIRCd and one Synapse on loopback (the test harness's: flood penalties off, rate
//! limits raised) and `spellbridge run` (this package's binary, built in the bench
//! profile) bridging IRC `#magic` with a Matrix room (`[[bridge]] relay = true`; flood
//! control and the per-user limit off; durability `full`, the default, so every relayed
//! line is committed to SQLite before it is sent). In that one run:
//!
//! 1. **Latency, paced.** One message at a time, [`PACE`] of idle before each, [`SAMPLES`]
//!    measured after [`WARMUP`] unmeasured, the four kinds interleaved round by round so
//!    that each relay figure and its floor see the same machine:
//!    - *IRC floor*: IRC client ian says a line in `#floor`, IRC client ivy receives it;
//!    - *Matrix floor*: Matrix user alice sends (`PUT …/send`) in a room without the bot
//!      (alice, bob and carol: as many members as the bridged room), Matrix user bob's
//!      long-poll `/sync` returns it;
//!    - *IRC → Matrix*: ian says a line in `#magic`; bob's sync returns the bot's
//!      `<ian> line` in the bridged room;
//!    - *Matrix → IRC*: alice sends in the bridged room; ivy receives the bot's
//!      `<alice> line` in `#magic`.
//!
//!    A relayed line crosses both networks: one IRC delivery and one Matrix send and
//!    delivery, in either order. So each direction's floor is the IRC floor plus the
//!    Matrix floor (p50 + p50), and the goal is a p50 within [`GOAL`] of that.
//! 2. **Sustained.** For [`SUSTAIN`], ian says numbered lines in `#magic` and alice sends
//!    numbered messages in the bridged room, each at [`RATE`] per second, at once. alice's
//!    sends overlap (up to [`MATRIX_IN_FLIGHT`] at a time, each on its own connection): one
//!    at a time, a Matrix client cannot reach the rate. Then the bench waits (bounded) for
//!    the stragglers, or until the daemon's outbox (`spellbridge_outbox_depth` on its
//!    `/metrics`) has been empty for a while, and counts, per direction: not arrived (lost,
//!    unless the outbox still holds it), duplicated, reordered (IRC → Matrix
//!    against ian's sending order; Matrix → IRC against the order of alice's messages in
//!    the room's timeline, as bob's sync saw it), and the latency from the send to the
//!    other side. In the same run, the floors under that load: ivy receiving ian's own
//!    lines, bob's sync receiving alice's own messages. At the end, the daemon's RSS and
//!    CPU time (and Synapse's CPU time during the run).
//! 3. Synapse's own ceiling, measured before the sustained run in the room without the
//!    bot: messages per second accepted with one `PUT` at a time (as one sender that
//!    awaits each send) and with [`MATRIX_IN_FLIGHT`] in flight.
//!
//! Every time is measured on the bench's clock: from just before the send to the moment
//! the receiving client read the line (IRC) or its sync returned (Matrix). Every wait is
//! bounded; the daemon and the servers are stopped at the end (SIGTERM, then SIGKILL),
//! also when the bench panics.
//!
//! Environment: `SPELLBRIDGE_RELAY_RUST_LOG` sets the daemon's `RUST_LOG` (default
//! `info`); `SPELLBRIDGE_RELAY_TRACE=DIR` copies the daemon's log to `DIR/bot.log` and
//! writes `DIR/paced.csv` (kind, n, send and receive wall-clock times in µs since the
//! epoch) to line the paced samples up with the log's timestamps, hop by hop.
//!
//! Needs InspIRCd (`tests/scripts/install-inspircd.sh`) and Synapse
//! (`tests/scripts/install-synapse.sh`).

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use spellbridge_adapters::irc::format::strip;
use spellbridge_tests::harness::inspircd::InspIrcd;
use spellbridge_tests::harness::irc_client::{IrcClient, Message};
use spellbridge_tests::harness::matrix_client::{Event, MatrixClient};
use spellbridge_tests::harness::synapse::Synapse;
use tokio::sync::{Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

mod support;
use support::process::{Process, free_port, metrics};
use support::{Listener, clock_ticks, cpu_time, ms, percentile, rss_mib};

/// The daemon: Cargo builds this package's binary for its benches and names it here.
const SPELLBRIDGE: &str = env!("CARGO_BIN_EXE_spellbridge");
/// The bridged IRC channel, and the IRC channel of the floor (not bridged).
const CHANNEL: &str = "#magic";
const FLOOR_CHANNEL: &str = "#floor";
/// The bot's IRC nick and Matrix localpart.
const BOT: &str = "spellbridge";
/// Paced latency: samples per kind, after [`WARMUP`] unmeasured rounds, [`PACE`] apart.
const SAMPLES: usize = 200;
const WARMUP: usize = 10;
const PACE: Duration = Duration::from_millis(20);
/// The goal: each direction's p50 within this of its floor's.
const GOAL: Duration = Duration::from_millis(10);
/// Sustained relay: messages per second in each direction, for this long.
const RATE: u32 = 100;
const SUSTAIN: Duration = Duration::from_secs(60);
/// Matrix sends in flight at once (each on its own connection).
const MATRIX_IN_FLIGHT: usize = 16;
/// After the sustained sends: how long to wait for the rest, at most, and without any
/// relayed message arriving.
const DRAIN_LIMIT: Duration = Duration::from_secs(240);
const DRAIN_QUIET: Duration = Duration::from_secs(20);
/// How long each of Synapse's ceilings is measured.
const CEILING_TIME: Duration = Duration::from_secs(5);
/// The longest one paced message may take before the bench gives up.
const REPLY_LIMIT: Duration = Duration::from_secs(10);
/// The longest the bot may take to relay both ways after its start.
const START_LIMIT: Duration = Duration::from_secs(120);

// ---------------------------------------------------------------------------------------
// The daemon

/// `spellbridge run` as a child process ([`Process`]: its temp dir, log and stop) and the
/// port of its `/metrics`. Dropping it stops it.
struct Bot {
    process: Process,
    /// Where its `/metrics` are served.
    http_port: u16,
}

impl Bot {
    /// The messages in its outbox (committed, not yet reported sent), from `/metrics`.
    fn outbox_depth(&self) -> Option<i64> {
        metrics(self.http_port)?
            .lines()
            .find_map(|l| l.strip_prefix("spellbridge_outbox_depth ")?.trim().parse().ok())
    }
}

/// `spellbridge run` bridging IRC [`CHANNEL`] with the Matrix room `room`: flood control
/// and the per-user limit off, durability the default (`full`).
fn start_spellbridge(irc_port: u16, http_port: u16, synapse: &Synapse, bot_id: &str, room: &str) -> Bot {
    let dir = tempfile::Builder::new().prefix("spellbridge-relay-bench-").tempdir().expect("temp dir");
    let password_file = dir.path().join("bot-password");
    std::fs::write(&password_file, format!("{}\n", password(BOT))).expect("write the password file");
    let config = format!(
        "prefix = \"!\"\n\
         [store]\npath = \"games.db\"\n\
         [[irc]]\nname = \"irc\"\nserver = \"127.0.0.1\"\nport = {irc_port}\ntls = false\n\
         nick = \"{BOT}\"\nchannels = [\"{CHANNEL}\"]\nrequire_account = false\n\
         [irc.flood]\nenabled = false\n[irc.user_limit]\nenabled = false\n\
         [[matrix]]\nname = \"matrix\"\nhomeserver = \"{homeserver}\"\nuser_id = \"{bot_id}\"\n\
         password = {{ file = {password_file:?} }}\nstore = {store:?}\n\
         rooms = [\"{room}\"]\ninvite_allow = [\"*:localhost\"]\n[matrix.user_limit]\nenabled = false\n\
         [[bridge]]\nname = \"magic\"\n\
         rooms = [{{ network = \"irc\", room = \"{CHANNEL}\" }}, {{ network = \"matrix\", room = \"{room}\" }}]\n\
         relay = true\n\
         [http]\nlisten = \"127.0.0.1:{http_port}\"\n",
        homeserver = synapse.base_url(),
        store = dir.path().join("matrix-store"),
    );
    let path = dir.path().join("spellbridge.toml");
    std::fs::write(&path, config).expect("write the spellbridge config");
    let rust_log = std::env::var("SPELLBRIDGE_RELAY_RUST_LOG").unwrap_or_else(|_| "info".to_owned());
    let mut command = Command::new(SPELLBRIDGE);
    command.args(["run", "--config"]).arg(&path).env("RUST_LOG", rust_log);
    Bot { process: Process::spawn("spellbridge", dir, &mut command), http_port }
}

fn password(localpart: &str) -> String {
    format!("{localpart}-password")
}

fn wall_us() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros())
}

// ---------------------------------------------------------------------------------------
// Clients

/// The numbers that follow the word `tag` in `text` (`<ian> i2m 17` → 17), over every line.
fn numbers(text: &str, tag: &str) -> Vec<u64> {
    let words: Vec<&str> = text.split_whitespace().collect();
    words.windows(2).filter(|w| w[0] == tag).filter_map(|w| w[1].parse().ok()).collect()
}

async fn say(client: &mut IrcClient, target: &str, text: &str) {
    client.privmsg(target, text).await.unwrap_or_else(|e| panic!("{} sends: {e}", client.nick()));
}

/// Reads until a PRIVMSG that `wanted` accepts, within `limit`; when it came.
async fn irc_wait(
    client: &mut IrcClient,
    limit: Duration,
    wanted: impl Fn(&Message) -> bool,
) -> Option<Instant> {
    let deadline = Instant::now() + limit;
    loop {
        let left = deadline.checked_duration_since(Instant::now())?;
        let message = client.next_privmsg(left).await?;
        if wanted(&message) {
            return Some(Instant::now());
        }
    }
}

/// Reads and drops whatever arrives until `quiet` passes with nothing.
async fn irc_drain(client: &mut IrcClient, quiet: Duration) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline && client.next_message(quiet).await.is_some() {}
}

/// Whether `event` is a message from `sender` in `room` whose body has `tag n`.
fn message_with(event: &Event, sender: &str, room: &str, tag: &str, n: u64) -> bool {
    event.sender == sender
        && event.room_id == room
        && event.message().is_some_and(|m| numbers(&m.body, tag).contains(&n))
}

// ---------------------------------------------------------------------------------------
// Figures

#[derive(Clone, Copy)]
struct Latency {
    p50: Duration,
    p99: Duration,
    max: Duration,
}

fn latency(mut times: Vec<Duration>) -> Option<Latency> {
    if times.is_empty() {
        return None;
    }
    times.sort();
    Some(Latency { p50: percentile(&times, 0.5), p99: percentile(&times, 0.99), max: times[times.len() - 1] })
}

fn lat(l: Option<Latency>) -> String {
    match l {
        Some(l) => format!("p50 {:8.2} ms   p99 {:8.2} ms   max {:8.2} ms", ms(l.p50), ms(l.p99), ms(l.max)),
        None => "no samples".to_owned(),
    }
}

// ---------------------------------------------------------------------------------------
// 1. Paced latency

struct Paced {
    irc_floor: Latency,
    matrix_floor: Latency,
    /// alice's `PUT …/send` alone, client side.
    matrix_put: Latency,
    irc_to_matrix: Latency,
    matrix_to_irc: Latency,
}

/// The people and rooms of the run.
struct Cast {
    ian: IrcClient,
    ivy: IrcClient,
    alice_id: String,
    alice: MatrixClient,
    bob: Listener,
    bot_id: String,
    /// The bridged Matrix room, and the one without the bot.
    room: String,
    floor_room: String,
}

/// Gives up on a paced message.
fn missing(what: &str, bot: &Bot) -> ! {
    panic!("{what} did not arrive within {REPLY_LIMIT:?}; the bot's log:\n{}", bot.process.log())
}

async fn paced(cast: &mut Cast, bot: &Bot, trace: &mut Vec<String>) -> Paced {
    const KINDS: [&str; 5] = ["irc_floor", "matrix_floor", "matrix_put", "irc_to_matrix", "matrix_to_irc"];
    let mut times: [Vec<Duration>; 5] = Default::default();
    for n in 0..(WARMUP + SAMPLES) as u64 {
        // (kind, time taken, wall-clock time of the send in µs)
        let mut round: Vec<(usize, Duration, u128)> = Vec::with_capacity(5);

        // IRC floor: ian → #floor → ivy.
        tokio::time::sleep(PACE).await;
        let text = format!("ifloor {n}");
        let (wall, start) = (wall_us(), Instant::now());
        say(&mut cast.ian, FLOOR_CHANNEL, &text).await;
        let at = irc_wait(&mut cast.ivy, REPLY_LIMIT, |m| m.target == FLOOR_CHANNEL && m.text == text)
            .await
            .unwrap_or_else(|| missing("ian's line to ivy", bot));
        round.push((0, at - start, wall));

        // Matrix floor: alice's PUT → bob's sync.
        tokio::time::sleep(PACE).await;
        let (wall, start) = (wall_us(), Instant::now());
        cast.alice
            .send_text(&cast.floor_room, &format!("mfloor {n}"))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        round.push((2, start.elapsed(), wall));
        let (alice, room) = (&cast.alice_id, &cast.floor_room);
        let at = cast
            .bob
            .wait_for(REPLY_LIMIT, |e| message_with(e, alice, room, "mfloor", n))
            .await
            .unwrap_or_else(|_| missing("alice's message to bob", bot));
        round.push((1, at - start, wall));

        // IRC → Matrix: ian → #magic → bot → bridged room → bob's sync.
        tokio::time::sleep(PACE).await;
        let (wall, start) = (wall_us(), Instant::now());
        say(&mut cast.ian, CHANNEL, &format!("i2m {n}")).await;
        let (bot_id, room) = (&cast.bot_id, &cast.room);
        let at = cast
            .bob
            .wait_for(REPLY_LIMIT, |e| message_with(e, bot_id, room, "i2m", n))
            .await
            .unwrap_or_else(|_| missing("ian's line relayed to Matrix", bot));
        round.push((3, at - start, wall));

        // Matrix → IRC: alice's PUT in the bridged room → bot → #magic → ivy.
        tokio::time::sleep(PACE).await;
        let (wall, start) = (wall_us(), Instant::now());
        cast.alice.send_text(&cast.room, &format!("m2i {n}")).await.unwrap_or_else(|e| panic!("{e}"));
        let at = irc_wait(&mut cast.ivy, REPLY_LIMIT, |m| {
            m.from == BOT && m.target == CHANNEL && numbers(&strip(&m.text), "m2i").contains(&n)
        })
        .await
        .unwrap_or_else(|| missing("alice's message relayed to IRC", bot));
        round.push((4, at - start, wall));

        if n >= WARMUP as u64 {
            for (kind, took, wall) in round {
                times[kind].push(took);
                trace.push(format!("{},{n},{wall},{}", KINDS[kind], wall + took.as_micros()));
            }
        }
    }
    let [irc_floor, matrix_floor, matrix_put, irc_to_matrix, matrix_to_irc] =
        times.map(|t| latency(t).expect("samples"));
    Paced { irc_floor, matrix_floor, matrix_put, irc_to_matrix, matrix_to_irc }
}

// ---------------------------------------------------------------------------------------
// 3. Synapse's ceiling

/// Messages per second Synapse accepted in the room without the bot, `in_flight` sends
/// at a time for [`CEILING_TIME`].
async fn synapse_ceiling(base: &str, alice_id: &str, token: &str, room: &str, in_flight: usize) -> f64 {
    let start = Instant::now();
    let tasks: Vec<_> = (0..in_flight)
        .map(|worker| {
            let mut client =
                MatrixClient::from_token(base, alice_id, token).unwrap_or_else(|e| panic!("{e}"));
            let room = room.to_owned();
            tokio::spawn(async move {
                let mut sent = 0_u64;
                while start.elapsed() < CEILING_TIME {
                    if client.send_text(&room, &format!("ceiling {worker} {sent}")).await.is_ok() {
                        sent += 1;
                    }
                }
                sent
            })
        })
        .collect();
    let mut sent = 0;
    for task in tasks {
        sent += task.await.expect("a ceiling sender");
    }
    sent as f64 / start.elapsed().as_secs_f64()
}

// ---------------------------------------------------------------------------------------
// 2. Sustained relay

/// What one direction of the sustained run delivered.
struct Direction {
    /// Messages sent (successfully: a refused Matrix send is counted in `send_failed`).
    sent: usize,
    send_failed: usize,
    /// Sent messages that arrived at least once.
    arrived: usize,
    lost: usize,
    duplicated: usize,
    /// Arrivals behind one that came later in the reference order.
    reordered: usize,
    latency: Option<Latency>,
    /// Arrived in the sending window (the first [`SUSTAIN`] after the first send).
    in_window: usize,
    /// The last first arrival, after the first send.
    last_arrival: Duration,
}

/// Tallies one direction. `sent[n]` is when message `n` was sent (`None`: not sent);
/// `arrivals` the numbers received in order with their time; `rank(n)` the position of
/// `n` in the order the relay must keep (`None`: unknown, not checked).
fn tally(
    sent: &[Option<Instant>],
    send_failed: usize,
    arrivals: &[(u64, Instant)],
    rank: impl Fn(u64) -> Option<usize>,
    t0: Instant,
) -> Direction {
    let mut seen = HashSet::new();
    let (mut duplicated, mut reordered, mut in_window) = (0, 0, 0);
    let mut highest: Option<usize> = None;
    let mut times = Vec::new();
    let mut last_arrival = Duration::ZERO;
    for &(n, at) in arrivals {
        let Some(Some(sent_at)) = sent.get(n as usize) else { continue };
        if !seen.insert(n) {
            duplicated += 1;
            continue;
        }
        times.push(at.saturating_duration_since(*sent_at));
        last_arrival = last_arrival.max(at.saturating_duration_since(t0));
        if at.saturating_duration_since(t0) <= SUSTAIN {
            in_window += 1;
        }
        if let Some(r) = rank(n) {
            if highest.is_some_and(|h| r < h) {
                reordered += 1;
            }
            highest = highest.max(Some(r));
        }
    }
    let sent_count = sent.iter().flatten().count();
    Direction {
        sent: sent_count,
        send_failed,
        arrived: seen.len(),
        lost: sent_count - seen.len(),
        duplicated,
        reordered,
        latency: latency(times),
        in_window,
        last_arrival,
    }
}

struct Sustained {
    irc_to_matrix: Direction,
    matrix_to_irc: Direction,
    /// Under the same load: ivy receiving ian's own lines, bob's sync receiving alice's
    /// own messages.
    irc_floor: Option<Latency>,
    matrix_floor: Option<Latency>,
    /// alice's PUTs, client side.
    matrix_put: Option<Latency>,
    /// alice's messages that bob's sync never returned (the reference order misses them).
    matrix_unseen: usize,
    /// How long the sends took (behind schedule when longer than [`SUSTAIN`]).
    irc_send_time: Duration,
    matrix_send_time: Duration,
    /// After the last send, how long the bench waited for the rest.
    drained_after: Duration,
    /// The daemon's outbox when the bench stopped waiting: committed, not yet sent.
    outbox_left: Option<i64>,
    /// From the first send to the end of the wait.
    elapsed: Duration,
    bot_cpu: Duration,
    bot_cpu_total: Duration,
    bot_rss: f64,
    synapse_cpu: Duration,
}

type Arrivals = Arc<Mutex<Vec<(u64, Instant)>>>;

async fn sustained(cast: Cast, bot: &Bot, synapse: &Synapse, alice_token: &str, ticks: f64) -> Sustained {
    let Cast { mut ian, mut ivy, alice_id, alice: _, mut bob, bot_id, room, floor_room: _ } = cast;
    let count = (RATE as u64 * SUSTAIN.as_secs()) as usize;
    let interval = Duration::from_secs(1) / RATE;
    let stop = CancellationToken::new();
    let synapse_pid = synapse.pid().unwrap_or(0);
    let (bot_cpu_before, synapse_cpu_before) =
        (cpu_time(bot.process.pid(), ticks), cpu_time(synapse_pid, ticks));

    // Receivers. ivy: the bot's relayed `sm2i n` and ian's own `si2m n` (the IRC floor).
    let relayed_to_irc: Arrivals = Arc::default();
    let irc_floor: Arrivals = Arc::default();
    let ivy_task = {
        let (relayed, floor, stop) = (relayed_to_irc.clone(), irc_floor.clone(), stop.clone());
        tokio::spawn(async move {
            while !stop.is_cancelled() {
                let Some(m) = ivy.next_privmsg(Duration::from_millis(200)).await else { continue };
                let now = Instant::now();
                if m.target != CHANNEL {
                    continue;
                }
                let (list, tag) = match m.from.as_str() {
                    BOT => (&relayed, "sm2i"),
                    "ian" => (&floor, "si2m"),
                    _ => continue,
                };
                let found = numbers(&strip(&m.text), tag);
                list.lock().expect("arrivals").extend(found.into_iter().map(|n| (n, now)));
            }
            ivy
        })
    };
    // bob: the bot's relayed `si2m n`, and alice's own `sm2i n` (the Matrix floor, and
    // the timeline's order of alice's messages).
    let relayed_to_matrix: Arrivals = Arc::default();
    let matrix_floor: Arrivals = Arc::default();
    let bob_task = {
        let (relayed, floor, stop) = (relayed_to_matrix.clone(), matrix_floor.clone(), stop.clone());
        let (bot_id, alice_id, room) = (bot_id.clone(), alice_id.clone(), room.clone());
        tokio::spawn(async move {
            while !stop.is_cancelled() {
                let Ok(Some((at, event))) =
                    tokio::time::timeout(Duration::from_millis(200), bob.events.recv()).await
                else {
                    continue;
                };
                if event.room_id != room {
                    continue;
                }
                let Some(message) = event.message() else { continue };
                let (list, tag) = if event.sender == bot_id {
                    (&relayed, "si2m")
                } else if event.sender == alice_id {
                    (&floor, "sm2i")
                } else {
                    continue;
                };
                let found = numbers(&message.body, tag);
                list.lock().expect("arrivals").extend(found.into_iter().map(|n| (n, at)));
            }
            bob
        })
    };

    let t0 = Instant::now() + Duration::from_millis(100);
    // ian: one line every `interval`, reading (and answering PINGs) in between.
    let ian_task = tokio::spawn(async move {
        let mut sent = vec![None; count];
        for (n, slot) in sent.iter_mut().enumerate() {
            let due = t0 + interval * n as u32;
            while let Some(left) = due.checked_duration_since(Instant::now()).filter(|d| !d.is_zero()) {
                if ian.next_message(left).await.is_none() {
                    break;
                }
            }
            *slot = Some(Instant::now());
            say(&mut ian, CHANNEL, &format!("si2m {n}")).await;
        }
        (ian, sent, t0.elapsed())
    });
    // alice: one message every `interval`, up to MATRIX_IN_FLIGHT PUTs at a time.
    let base = synapse.base_url();
    let (alice_id2, token, room2) = (alice_id.clone(), alice_token.to_owned(), room.clone());
    let alice_task = tokio::spawn(async move {
        let permits = Arc::new(Semaphore::new(MATRIX_IN_FLIGHT));
        let pool: Arc<Mutex<Vec<MatrixClient>>> = Arc::new(Mutex::new(
            (0..MATRIX_IN_FLIGHT)
                .map(|_| {
                    MatrixClient::from_token(&base, &alice_id2, &token).unwrap_or_else(|e| panic!("{e}"))
                })
                .collect(),
        ));
        let (done_tx, mut done_rx) = mpsc::unbounded_channel();
        for n in 0..count {
            tokio::time::sleep_until((t0 + interval * n as u32).into()).await;
            let permit = permits.clone().acquire_owned().await.expect("the semaphore");
            let mut client = pool.lock().expect("pool").pop().expect("a free client");
            let (pool, done, room) = (pool.clone(), done_tx.clone(), room2.clone());
            tokio::spawn(async move {
                let start = Instant::now();
                let ok = client.send_text(&room, &format!("sm2i {n}")).await;
                let put = start.elapsed();
                if let Err(e) = &ok {
                    eprintln!("relay bench: alice's send {n} failed: {e}");
                }
                pool.lock().expect("pool").push(client);
                drop(permit);
                let _ = done.send((n, start, put, ok.is_ok()));
            });
        }
        drop(done_tx);
        let mut sent = vec![None; count];
        let (mut puts, mut failed) = (Vec::new(), 0);
        while let Some((n, start, put, ok)) = done_rx.recv().await {
            if ok {
                sent[n] = Some(start);
                puts.push(put);
            } else {
                failed += 1;
            }
        }
        (sent, failed, puts, t0.elapsed())
    });

    let (ian, irc_sent, irc_send_time) = ian_task.await.expect("ian's sends");
    let (matrix_sent, matrix_failed, puts, matrix_send_time) = alice_task.await.expect("alice's sends");
    let sends_done = Instant::now();
    eprintln!(
        "relay bench: sustained sends done (IRC {:.1} s, Matrix {:.1} s); waiting for the rest",
        irc_send_time.as_secs_f64(),
        matrix_send_time.as_secs_f64()
    );

    // Waits for the rest: until everything sent has arrived both ways, nothing relayed
    // arrived for DRAIN_QUIET, or DRAIN_LIMIT.
    let wanted = |sent: &[Option<Instant>], arrivals: &Arrivals| {
        let sent: HashSet<u64> = (0..sent.len() as u64).filter(|&n| sent[n as usize].is_some()).collect();
        let got: HashSet<u64> = arrivals.lock().expect("arrivals").iter().map(|a| a.0).collect();
        sent.difference(&got).count()
    };
    let (mut last_total, mut last_change) = (usize::MAX, Instant::now());
    let mut outbox_empty_since: Option<Instant> = None;
    loop {
        let missing = wanted(&irc_sent, &relayed_to_matrix) + wanted(&matrix_sent, &relayed_to_irc);
        let total = relayed_to_matrix.lock().expect("arrivals").len()
            + relayed_to_irc.lock().expect("arrivals").len();
        if total != last_total {
            (last_total, last_change) = (total, Instant::now());
        }
        // An empty outbox: whatever is missing a few seconds later is lost.
        if bot.outbox_depth() == Some(0) {
            outbox_empty_since.get_or_insert_with(Instant::now);
        } else {
            outbox_empty_since = None;
        }
        let settled = outbox_empty_since.is_some_and(|t| t.elapsed() >= Duration::from_secs(5));
        if missing == 0
            || settled
            || last_change.elapsed() >= DRAIN_QUIET
            || sends_done.elapsed() >= DRAIN_LIMIT
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let drained_after = sends_done.elapsed();
    let outbox_left = bot.outbox_depth();
    // Let any duplicates still on their way in arrive.
    tokio::time::sleep(Duration::from_secs(2)).await;
    stop.cancel();
    let _ivy = ivy_task.await.expect("ivy");
    let _bob = bob_task.await.expect("bob");
    drop(ian);

    let bot_cpu_total = cpu_time(bot.process.pid(), ticks);
    let bot_cpu = bot_cpu_total.saturating_sub(bot_cpu_before);
    let synapse_cpu = cpu_time(synapse_pid, ticks).saturating_sub(synapse_cpu_before);
    let bot_rss = rss_mib(bot.process.pid());
    let elapsed = t0.elapsed();

    let take = |a: &Arrivals| std::mem::take(&mut *a.lock().expect("arrivals"));
    let (relayed_to_matrix, relayed_to_irc) = (take(&relayed_to_matrix), take(&relayed_to_irc));
    let (irc_floor, matrix_floor) = (take(&irc_floor), take(&matrix_floor));
    // The order the relay must keep towards IRC: alice's messages as the room has them.
    let mut timeline = vec![None; count];
    for (position, &(n, _)) in matrix_floor.iter().enumerate() {
        if let Some(slot) = timeline.get_mut(n as usize) {
            slot.get_or_insert(position);
        }
    }
    let matrix_unseen = (0..count).filter(|&n| matrix_sent[n].is_some() && timeline[n].is_none()).count();
    let irc_to_matrix = tally(&irc_sent, 0, &relayed_to_matrix, |n| Some(n as usize), t0);
    let matrix_to_irc = tally(
        &matrix_sent,
        matrix_failed,
        &relayed_to_irc,
        |n| timeline.get(n as usize).copied().flatten(),
        t0,
    );
    let floor = |sent: &[Option<Instant>], arrivals: &[(u64, Instant)]| {
        tally(sent, 0, arrivals, |_| None, t0).latency
    };
    Sustained {
        irc_to_matrix,
        matrix_to_irc,
        irc_floor: floor(&irc_sent, &irc_floor),
        matrix_floor: floor(&matrix_sent, &matrix_floor),
        matrix_put: latency(puts),
        matrix_unseen,
        irc_send_time,
        matrix_send_time,
        drained_after,
        outbox_left,
        elapsed,
        bot_cpu,
        bot_cpu_total,
        bot_rss,
        synapse_cpu,
    }
}

// ---------------------------------------------------------------------------------------

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // `cargo test --benches` runs this with `--test`-like flags; run the figures only for bench.
    if args.iter().any(|a| a == "--test" || a == "--list") {
        return;
    }
    let irc = InspIrcd::start()
        .unwrap_or_else(|e| panic!("InspIRCd is needed (tests/scripts/install-inspircd.sh): {e}"));
    let synapse = Synapse::start()
        .unwrap_or_else(|e| panic!("Synapse is needed (tests/scripts/install-synapse.sh): {e}"));
    let register = |name: &str| {
        synapse.register(name, &password(name), false).unwrap_or_else(|e| panic!("registering {name}: {e}"))
    };
    let (alice, bob, carol, bot) = (register("alice"), register("bob"), register("carol"), register(BOT));
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
    let report = runtime.block_on(bench(irc.port(), &synapse, [alice, bob, carol], bot.0));
    drop(runtime);
    drop(synapse);
    drop(irc);
    print!("{report}");
}

async fn bench(
    irc_port: u16,
    synapse: &Synapse,
    [(alice_id, alice_token), (bob_id, bob_token), (carol_id, carol_token)]: [(String, String); 3],
    bot_id: String,
) -> String {
    let ticks = clock_ticks();
    let base = synapse.base_url();
    eprintln!(
        "relay bench: InspIRCd on 127.0.0.1:{irc_port}, Synapse on {base}; spellbridge is {SPELLBRIDGE}"
    );

    // IRC: ian speaks, ivy listens; both in the bridged channel and the floor's.
    let connect = |nick: &'static str| async move {
        IrcClient::connect(irc_port, nick).await.unwrap_or_else(|e| panic!("{nick} connects: {e}"))
    };
    let (mut ian, mut ivy) = tokio::join!(connect("ian"), connect("ivy"));
    for client in [&mut ian, &mut ivy] {
        for channel in [CHANNEL, FLOOR_CHANNEL] {
            client.join(channel).await.unwrap_or_else(|e| panic!("joining {channel}: {e}"));
        }
    }

    // Matrix: alice speaks, bob listens. The bridged room has alice, bob and the bot (a
    // room of two would be a direct chat, whose messages are not relayed); the floor's
    // room has alice, bob and carol instead of the bot (Synapse's work per message grows
    // with the members).
    let mut alice =
        MatrixClient::from_token(&base, &alice_id, &alice_token).unwrap_or_else(|e| panic!("{e}"));
    let mut bob_client =
        MatrixClient::from_token(&base, &bob_id, &bob_token).unwrap_or_else(|e| panic!("{e}"));
    let room = alice
        .create_room("magic", &[bob_id.as_str(), bot_id.as_str()], false)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let floor_room = alice
        .create_room("floor", &[bob_id.as_str(), carol_id.as_str()], false)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    for r in [&room, &floor_room] {
        bob_client.accept_invite(r).await.unwrap_or_else(|e| panic!("{e}"));
    }
    let mut carol =
        MatrixClient::from_token(&base, &carol_id, &carol_token).unwrap_or_else(|e| panic!("{e}"));
    carol.accept_invite(&floor_room).await.unwrap_or_else(|e| panic!("{e}"));
    let mut bob = Listener::start(&base, &bob_id, &bob_token).await;

    // The bot, until it relays both ways.
    let mut bot = start_spellbridge(irc_port, free_port(), synapse, &bot_id, &room);
    let started = Instant::now();
    let (mut to_matrix, mut to_irc) = (false, false);
    for probe in 0.. {
        if started.elapsed() > START_LIMIT {
            panic!(
                "spellbridge did not relay both ways within {START_LIMIT:?}; its log:\n{}",
                bot.process.log()
            );
        }
        if bot.process.exited() {
            panic!("spellbridge exited while starting; its log:\n{}", bot.process.log());
        }
        if !to_matrix {
            say(&mut ian, CHANNEL, &format!("probe {probe}")).await;
            to_matrix = bob
                .wait_for(Duration::from_secs(1), |e| message_with(e, &bot_id, &room, "probe", probe))
                .await
                .is_ok();
        }
        if !to_irc {
            alice.send_text(&room, &format!("probe {probe}")).await.unwrap_or_else(|e| panic!("{e}"));
            to_irc = irc_wait(&mut ivy, Duration::from_secs(1), |m| {
                m.from == BOT && numbers(&strip(&m.text), "probe").contains(&probe)
            })
            .await
            .is_some();
        }
        if to_matrix && to_irc {
            break;
        }
    }
    eprintln!(
        "relay bench: spellbridge relays both ways {:.1} s after its start",
        started.elapsed().as_secs_f64()
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    irc_drain(&mut ivy, Duration::from_millis(300)).await;
    irc_drain(&mut ian, Duration::from_millis(100)).await;
    bob.drain(Duration::from_millis(500)).await;
    let rss_idle = rss_mib(bot.process.pid());

    let mut cast = Cast { ian, ivy, alice_id: alice_id.clone(), alice, bob, bot_id, room, floor_room };
    let mut trace = vec!["kind,n,sent_us,received_us".to_owned()];
    let paced = paced(&mut cast, &bot, &mut trace).await;
    eprintln!(
        "relay bench: paced: IRC→Matrix {}, Matrix→IRC {}",
        lat(Some(paced.irc_to_matrix)),
        lat(Some(paced.matrix_to_irc))
    );

    let serial = synapse_ceiling(&base, &alice_id, &alice_token, &cast.floor_room, 1).await;
    let parallel = synapse_ceiling(&base, &alice_id, &alice_token, &cast.floor_room, MATRIX_IN_FLIGHT).await;
    eprintln!(
        "relay bench: Synapse accepts {serial:.0} messages/s one at a time, {parallel:.0}/s {MATRIX_IN_FLIGHT} at a time"
    );
    cast.bob.drain(Duration::from_millis(500)).await;

    eprintln!("relay bench: sustained, {RATE}/s each way for {SUSTAIN:?}");
    let sustained = sustained(cast, &bot, synapse, &alice_token, ticks).await;
    bot.process.stop();
    if let Some(dir) = std::env::var_os("SPELLBRIDGE_RELAY_TRACE") {
        let dir = PathBuf::from(dir);
        let _ = std::fs::create_dir_all(&dir);
        let _ = std::fs::copy(bot.process.log_path(), dir.join("bot.log"));
        let _ = std::fs::write(dir.join("paced.csv"), trace.join("\n") + "\n");
    }
    report(&paced, serial, parallel, &sustained, rss_idle)
}

fn report(paced: &Paced, serial: f64, parallel: f64, s: &Sustained, rss_idle: f64) -> String {
    let mut out = String::new();
    let floor_p50 = paced.irc_floor.p50 + paced.matrix_floor.p50;
    let floor_p99 = paced.irc_floor.p99 + paced.matrix_floor.p99;
    let _ = writeln!(
        out,
        "Relay benchmark: one InspIRCd and one Synapse on 127.0.0.1, spellbridge bridging {CHANNEL} and a \
         Matrix room (durability full, IRC flood control off)"
    );
    let _ = writeln!(
        out,
        "1. paced latency: {SAMPLES} messages per figure, one at a time, {PACE:?} apart (after {WARMUP} unmeasured)"
    );
    let rows = [
        ("IRC floor (ian → #floor → ivy)", Some(paced.irc_floor)),
        ("Matrix floor (alice PUT → bob's /sync)", Some(paced.matrix_floor)),
        ("  (alice's PUT alone, client side)", Some(paced.matrix_put)),
        ("IRC → Matrix (ian → bot → bob's /sync)", Some(paced.irc_to_matrix)),
        ("Matrix → IRC (alice PUT → bot → ivy)", Some(paced.matrix_to_irc)),
    ];
    for (what, l) in rows {
        let _ = writeln!(out, "  {what:<42} {}", lat(l));
    }
    let _ = writeln!(
        out,
        "  floor of either direction = IRC floor + Matrix floor: p50 {:.2} ms, p99 {:.2} ms",
        ms(floor_p50),
        ms(floor_p99)
    );
    let verdict = |ok: bool| if ok { "met" } else { "MISSED" };
    for (what, l) in [("IRC → Matrix", paced.irc_to_matrix), ("Matrix → IRC", paced.matrix_to_irc)] {
        let over = ms(l.p50) - ms(floor_p50);
        let _ = writeln!(
            out,
            "  goal: {what} p50 within {} ms of the floor ({over:+.2} ms; p99 {:+.2} ms): {}",
            GOAL.as_millis(),
            ms(l.p99) - ms(floor_p99),
            verdict(l.p50 <= floor_p50 + GOAL)
        );
    }
    let _ = writeln!(
        out,
        "Synapse's ceiling (room without the bot, {CEILING_TIME:?} each): {serial:.0} messages/s one PUT at a time, \
         {parallel:.0} messages/s with {MATRIX_IN_FLIGHT} in flight"
    );
    let _ = writeln!(
        out,
        "2. sustained: {RATE} messages/s each way at once for {SUSTAIN:?} (alice: up to {MATRIX_IN_FLIGHT} PUTs in \
         flight); sends took IRC {:.1} s, Matrix {:.1} s; waited {:.1} s after the last send",
        s.irc_send_time.as_secs_f64(),
        s.matrix_send_time.as_secs_f64(),
        s.drained_after.as_secs_f64()
    );
    for (what, d) in [("IRC → Matrix", &s.irc_to_matrix), ("Matrix → IRC", &s.matrix_to_irc)] {
        let failed =
            if d.send_failed > 0 { format!(" ({} sends refused)", d.send_failed) } else { String::new() };
        let _ = writeln!(
            out,
            "  {what}: sent {}{failed}, arrived {}, not arrived {}, duplicated {}, reordered {}; {} arrived within \
             the {} s ({:.0}/s), the last {:.1} s after the first send",
            d.sent,
            d.arrived,
            d.lost,
            d.duplicated,
            d.reordered,
            d.in_window,
            SUSTAIN.as_secs(),
            d.in_window as f64 / SUSTAIN.as_secs_f64(),
            d.last_arrival.as_secs_f64()
        );
        let _ = writeln!(out, "    latency {}", lat(d.latency));
    }
    let _ = writeln!(out, "  under the same load: IRC floor (ian → ivy)      {}", lat(s.irc_floor));
    let _ = writeln!(out, "                       Matrix floor (alice → bob) {}", lat(s.matrix_floor));
    let _ = writeln!(out, "                       alice's PUTs               {}", lat(s.matrix_put));
    if s.matrix_unseen > 0 {
        let _ = writeln!(
            out,
            "  ({} of alice's messages never came through bob's sync: not checked for order)",
            s.matrix_unseen
        );
    }
    let outbox = s.outbox_left.map_or_else(|| "unknown".to_owned(), |n| n.to_string());
    let _ = writeln!(
        out,
        "  the daemon's outbox held {outbox} messages (committed, not yet sent) when the wait ended"
    );
    let run = s.elapsed.as_secs_f64();
    let _ = writeln!(
        out,
        "  spellbridge: RSS {rss_idle:.1} MiB idle before, {:.1} MiB at the end; CPU {:.2} s over the {run:.0} s \
         run ({:.0}% of a core; {:.2} s since its start). Synapse: CPU {:.2} s ({:.0}% of a core)",
        s.bot_rss,
        s.bot_cpu.as_secs_f64(),
        100.0 * s.bot_cpu.as_secs_f64() / run,
        s.bot_cpu_total.as_secs_f64(),
        s.synapse_cpu.as_secs_f64(),
        100.0 * s.synapse_cpu.as_secs_f64() / run
    );
    let queued = usize::try_from(s.outbox_left.unwrap_or(0)).unwrap_or(0);
    let not_arrived = s.irc_to_matrix.lost + s.matrix_to_irc.lost;
    for (what, d) in [("IRC → Matrix", &s.irc_to_matrix), ("Matrix → IRC", &s.matrix_to_irc)] {
        // What has not arrived is lost, unless the outbox still holds it (committed and
        // queued: it would still be sent).
        let outcome = if d.duplicated > 0 || (d.lost > 0 && queued < not_arrived) {
            "MISSED"
        } else if d.lost > 0 {
            "not settled: still queued in the outbox when the wait ended"
        } else {
            "met"
        };
        let _ = writeln!(
            out,
            "  goal: {what} none lost or duplicated ({} not arrived, {} duplicated): {outcome}",
            d.lost, d.duplicated,
        );
    }
    out
}
