//! Ghosts at scale (a bench binary that prints figures):
//! `cargo bench -p spellbridge --bench ghosts` (issue 17: "1,000 ghosts in 50 rooms: RSS
//! and CPU of the daemon idle and at 100 lines/s, no loss").
//!
//! One InspIRCd and one Synapse on loopback (the test harness's: flood penalties off,
//! every rate limit raised; Synapse with spellbridge's appservice registration, written
//! first by `spellbridge appservice-registration`, `rate_limited: false`), and one
//! `spellbridge run` in appservice mode (this package's binary, built in the bench
//! profile; flood control and the per-user limit off) bridging [`ROOMS`] IRC channels
//! `#ghostsNN` with as many Matrix rooms, one bridge each. The rooms are made by the
//! Matrix test user olive, who stays in them and watches: every figure on the Matrix side
//! is what olive's long-poll `/sync` returned, and when.
//!
//! 1. **Start**: from spawning the daemon until olive has seen its bot join every room.
//! 2. **Haunting**: [`PER_ROOM`] raw IRC clients join each channel (the scale bench's
//!    clients, `scale/load.rs`: one tokio runtime, one thread, 250 registering at once),
//!    `gNNuKK` in `#ghostsNN`. The daemon mirrors each join: the IRC user's ghost
//!    `@irc_irc_gnnukk:localhost` is registered, named, invited and joined. Measured from
//!    the first client's connect until olive has seen every ghost join its room (bounded:
//!    `GHOSTS_HAUNT_LIMIT`); then each room's members are asked of the server
//!    (`/joined_members`) and must be exactly the ghosts of its channel, the bot and olive.
//! 3. **Idle**: after a settling pause, the daemon's CPU (user + system, from
//!    `/proc/<pid>/stat`, as a share of one core) over `GHOSTS_IDLE_SECS`, and its RSS.
//! 4. **Load**: `GHOSTS_RATE` lines per second (default 100) for `GHOSTS_LOAD_SECS`
//!    (default 30), each from the next client in turn (the channels taken round-robin, so
//!    every channel and every client speaks), paced on the bench's clock whether or not
//!    the last arrived (open loop). Each line carries its number; it counts as received
//!    only when olive's sync returns it in the right room from the right ghost, with the
//!    same text (a message may hold several lines of one speaker). Reported: lines sent,
//!    received, lost (not seen within `GHOSTS_DRAIN_SECS`, default 240 s, after the last
//!    was sent), wrong (seen from another sender or room); the relay's
//!    p50/p99/max, from just before the client's write to the moment olive's sync
//!    returned it; the rate delivered (first send to last arrival) and how long the last
//!    line arrived after the last was sent (a backlog); the daemon's CPU share over the
//!    sending and its RSS (sampled each second, the largest); Synapse's beside it.
//!
//! Every wait is bounded; the daemon and the servers are stopped at the end, also when it
//! panics (`SPELLBRIDGE_BENCH_KEEP_LOGS=DIR` keeps the daemon's log).
//!
//! Environment: `GHOSTS_ROOMS` (default 50) and `GHOSTS_PER_ROOM` (20) size the crowd;
//! `GHOSTS_IDLE_SECS` (20), `GHOSTS_LOAD_SECS` (30), `GHOSTS_RATE` (100 lines/s),
//! `GHOSTS_HAUNT_LIMIT` (900 s) and `GHOSTS_DRAIN_SECS` (240 s) the phases;
//! `GHOSTS_RUST_LOG` the daemon's `RUST_LOG` (default: unset, the daemon's own filter, as
//! it runs for users). A quick run: `GHOSTS_ROOMS=5 GHOSTS_PER_ROOM=4
//! GHOSTS_IDLE_SECS=3 GHOSTS_LOAD_SECS=5`.
//!
//! Needs InspIRCd (`tests/scripts/install-inspircd.sh`) and Synapse
//! (`tests/scripts/install-synapse.sh`).

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::process::Command;
use std::time::{Duration, Instant};

use spellbridge_tests::harness::inspircd::InspIrcd;
use spellbridge_tests::harness::matrix_client::{Event, MatrixClient};
use spellbridge_tests::harness::synapse::{self, Synapse};

// The scale bench's IRC clients. This bench only has them say lines (no game commands:
// their seats' roles are never used) and answer the server's PINGs.
#[allow(dead_code)]
#[path = "scale/load.rs"]
mod load;
mod support;

use load::{Fleet, Role, Seat};
use support::appservice::{matrix_table, registration};
use support::process::{Process, free_port};
use support::{Listener, clock_ticks, cpu_time, ms, percentile, rss_mib};

/// The daemon: Cargo builds this package's binary for its benches and names it here.
const SPELLBRIDGE: &str = env!("CARGO_BIN_EXE_spellbridge");
/// The appservice's bot (the registration's sender).
const BOT: &str = "spellbridge";
/// The watching Matrix user, who makes the rooms.
const OBSERVER: &str = "olive";
/// The default crowd: rooms, and IRC users (ghosts) in each.
const ROOMS: usize = 50;
const PER_ROOM: usize = 20;
/// Clients registering at once (InspIRCd registers each on its 1 s timer).
const CONNECTING_AT_ONCE: usize = 250;
/// How long the daemon may take to join its rooms after its start.
const START_LIMIT: Duration = Duration::from_secs(180);
/// The pause between the last ghost's join and the idle measurement.
const SETTLE: Duration = Duration::from_secs(5);
/// How often the RSS is sampled during the load.
const RSS_EVERY: Duration = Duration::from_secs(1);

/// What to run, from the environment.
struct Settings {
    rooms: usize,
    per_room: usize,
    idle: Duration,
    load: Duration,
    rate: u64,
    haunt_limit: Duration,
    drain_limit: Duration,
}

impl Settings {
    fn from_env() -> Settings {
        let number = |name: &str, default: u64, what: &str| -> u64 {
            match std::env::var(name) {
                Ok(text) => text.trim().parse().ok().filter(|&n| n > 0).unwrap_or_else(|| {
                    panic!("{name}={text:?} is not a positive number of {what}; write e.g. {name}={default}")
                }),
                Err(_) => default,
            }
        };
        Settings {
            rooms: number("GHOSTS_ROOMS", ROOMS as u64, "rooms") as usize,
            per_room: number("GHOSTS_PER_ROOM", PER_ROOM as u64, "IRC users") as usize,
            idle: Duration::from_secs(number("GHOSTS_IDLE_SECS", 20, "seconds")),
            load: Duration::from_secs(number("GHOSTS_LOAD_SECS", 30, "seconds")),
            rate: number("GHOSTS_RATE", 100, "lines per second"),
            haunt_limit: Duration::from_secs(number("GHOSTS_HAUNT_LIMIT", 900, "seconds")),
            drain_limit: Duration::from_secs(number("GHOSTS_DRAIN_SECS", 240, "seconds")),
        }
    }

    fn ghosts(&self) -> usize {
        self.rooms * self.per_room
    }
}

/// The IRC channel of room `r`.
fn channel(r: usize) -> String {
    format!("#ghosts{r:02}")
}

/// The IRC users: `gNNuKK` in `#ghostsNN`, room by room.
fn seats(settings: &Settings) -> Vec<Seat> {
    (0..settings.rooms)
        .flat_map(|r| {
            (0..settings.per_room).map(move |k| Seat {
                nick: format!("g{r:02}u{k:02}"),
                channel: channel(r),
                role: Role::ThaumPlayer,
            })
        })
        .collect()
}

/// The ghost of IRC user `nick` (the default template, `@irc_{network}_{nick}:{server}`).
fn ghost(nick: &str) -> String {
    format!("@irc_irc_{}:localhost", nick.to_ascii_lowercase())
}

/// The daemon's config: appservice mode in `rooms`, the IRC channels, one bridge each.
fn config(irc_port: u16, base: &str, as_port: u16, store: &std::path::Path, rooms: &[String]) -> String {
    let mut text = matrix_table(base, BOT, as_port, store, rooms);
    let channels: Vec<String> = (0..rooms.len()).map(|r| format!("{:?}", channel(r))).collect();
    let _ = write!(
        text,
        "[[irc]]\nname = \"irc\"\nserver = \"127.0.0.1\"\nport = {irc_port}\ntls = false\n\
         nick = \"{BOT}\"\nchannels = [{}]\nrequire_account = false\n\
         [irc.flood]\nenabled = false\n[irc.user_limit]\nenabled = false\n",
        channels.join(", ")
    );
    for (r, room) in rooms.iter().enumerate() {
        let _ = write!(
            text,
            "[[bridge]]\nname = \"ghosts{r:02}\"\n\
             rooms = [{{ network = \"irc\", room = \"{}\" }}, {{ network = \"matrix\", room = \"{room}\" }}]\n\
             relay = true\n",
            channel(r)
        );
    }
    text
}

fn load_average() -> String {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    text.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
}

/// Answers the IRC server's PINGs waiting for the clients (the fleet answers them as it
/// hands on its events; nothing else is expected from IRC here).
async fn pong(fleet: &mut Fleet) {
    while fleet.next(Instant::now()).await.is_some() {}
}

/// Whether `event` is `user` joining its room.
fn joined(event: &Event) -> Option<&str> {
    let join = event.event_type == "m.room.member"
        && event.content.get("membership").and_then(|m| m.as_str()) == Some("join");
    event.state_key.as_deref().filter(|_| join)
}

/// A process's CPU share of one core, in percent, between two readings.
fn share(before: Duration, after: Duration, over: Duration) -> f64 {
    100.0 * after.saturating_sub(before).as_secs_f64() / over.as_secs_f64().max(1e-9)
}

/// What the bench measured.
struct Figures {
    rooms_made: Duration,
    start: Duration,
    irc_joined: Duration,
    haunted: Duration,
    members_checked: String,
    idle_cpu: f64,
    idle_synapse_cpu: f64,
    idle_rss: f64,
    idle_load: String,
    sent: usize,
    received: usize,
    wrong: usize,
    late_first: Vec<String>,
    times: Vec<Duration>,
    sending: Duration,
    backlog: Duration,
    throughput: f64,
    load_cpu: f64,
    load_synapse_cpu: f64,
    load_rss_max: f64,
    load_rss_end: f64,
    synapse_rss: f64,
    load_load: String,
    log_warnings: Vec<String>,
}

/// A log line without its colours (ANSI escapes).
fn plain(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            chars.by_ref().find(|c| c.is_ascii_alphabetic());
        } else {
            out.push(c);
        }
    }
    out
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // `cargo test --benches` runs this with `--test`-like flags; run the figures only for bench.
    if args.iter().any(|a| a == "--test" || a == "--list") {
        return;
    }
    let settings = Settings::from_env();
    let dir = tempfile::Builder::new().prefix("spellbridge-ghosts-bench-").tempdir().expect("temp dir");
    let as_port = free_port();
    let registration = registration(dir.path(), BOT, as_port);
    let irc = InspIrcd::start()
        .unwrap_or_else(|e| panic!("InspIRCd is needed (tests/scripts/install-inspircd.sh): {e}"));
    let options = synapse::Options { app_services: vec![registration], ..synapse::Options::default() };
    let synapse = Synapse::start_with(options)
        .unwrap_or_else(|e| panic!("Synapse is needed (tests/scripts/install-synapse.sh): {e}"));
    eprintln!(
        "ghosts bench: InspIRCd on 127.0.0.1:{}, Synapse at {}; {} rooms of {} ghosts; spellbridge is {SPELLBRIDGE}",
        irc.port(),
        synapse.base_url(),
        settings.rooms,
        settings.per_room
    );
    let load_before = load_average();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
    let figures = runtime.block_on(bench(&settings, irc.port(), &synapse, dir, as_port));
    drop(runtime);
    drop(synapse);
    drop(irc);
    print!("{}", report(&settings, &figures, &load_before));
}

async fn bench(
    settings: &Settings,
    irc_port: u16,
    synapse: &Synapse,
    dir: tempfile::TempDir,
    as_port: u16,
) -> Figures {
    let base = synapse.base_url();
    let ticks = clock_ticks();
    let synapse_pid = synapse.pid().expect("Synapse runs");
    let bot = format!("@{BOT}:localhost");
    let (olive_id, olive_token) = synapse
        .register(OBSERVER, "olive-password", false)
        .unwrap_or_else(|e| panic!("registering {OBSERVER}: {e}"));
    let mut olive =
        MatrixClient::from_token(&base, &olive_id, &olive_token).unwrap_or_else(|e| panic!("{e}"));

    // The rooms, olive's, the bot invited; olive watches from now on.
    let making = Instant::now();
    let mut rooms = Vec::with_capacity(settings.rooms);
    for r in 0..settings.rooms {
        let name = format!("ghosts {r:02}");
        rooms.push(olive.create_room(&name, &[&bot], false).await.unwrap_or_else(|e| panic!("{e}")));
    }
    let rooms_made = making.elapsed();
    eprintln!("ghosts bench: {} rooms made in {:.1} s", rooms.len(), rooms_made.as_secs_f64());
    let room_of: HashMap<&str, usize> = rooms.iter().enumerate().map(|(r, id)| (id.as_str(), r)).collect();
    let mut listener = Listener::start(&base, &olive_id, &olive_token).await;

    // 1. Start: until the bot has joined every room.
    let config_text = config(irc_port, &base, as_port, &dir.path().join("matrix-store"), &rooms);
    let config_path = dir.path().join("spellbridge.toml");
    std::fs::write(&config_path, config_text).expect("write the spellbridge config");
    let mut command = Command::new(SPELLBRIDGE);
    command.args(["run", "--config"]).arg(&config_path);
    // The daemon's own default filter (the matrix-sdk's expected errors kept out), unless asked.
    match std::env::var("GHOSTS_RUST_LOG") {
        Ok(filter) => command.env("RUST_LOG", filter),
        Err(_) => command.env_remove("RUST_LOG"),
    };
    let spawned = Instant::now();
    let mut daemon = Process::spawn("spellbridge-ghosts", dir, &mut command);
    let pid = daemon.pid();
    let mut bot_in: HashSet<usize> = HashSet::new();
    while bot_in.len() < rooms.len() {
        let left = (spawned + START_LIMIT).checked_duration_since(Instant::now());
        let event = match left {
            Some(left) if !daemon.exited() => {
                tokio::time::timeout(left.min(Duration::from_secs(1)), listener.events.recv()).await
            }
            _ => panic!(
                "the daemon joined {} of {} rooms within {START_LIMIT:?}; its log:\n{}",
                bot_in.len(),
                rooms.len(),
                daemon.log()
            ),
        };
        if let Ok(Some((_, event))) = event
            && joined(&event) == Some(bot.as_str())
            && let Some(&r) = room_of.get(event.room_id.as_str())
        {
            bot_in.insert(r);
        }
    }
    let start = spawned.elapsed();
    eprintln!(
        "ghosts bench: the bot is in all {} rooms {:.1} s after its start",
        rooms.len(),
        start.as_secs_f64()
    );

    // 2. Haunting: the IRC users join; until every ghost has joined its room.
    let seats = seats(settings);
    let expected: HashMap<(usize, String), usize> =
        seats.iter().enumerate().map(|(i, s)| ((i / settings.per_room, ghost(&s.nick)), i)).collect();
    let connecting = Instant::now();
    let mut fleet = Fleet::connect(irc_port, BOT, &seats, CONNECTING_AT_ONCE).await;
    let irc_joined = connecting.elapsed();
    eprintln!(
        "ghosts bench: {} IRC clients joined their channels in {:.1} s",
        fleet.len(),
        irc_joined.as_secs_f64()
    );
    let mut haunted_at: HashMap<usize, Instant> = HashMap::new();
    let haunt_deadline = connecting + settings.haunt_limit;
    let mut progress = Instant::now();
    while haunted_at.len() < expected.len() {
        pong(&mut fleet).await;
        if Instant::now() >= haunt_deadline || daemon.exited() {
            let missing: Vec<&str> = seats
                .iter()
                .enumerate()
                .filter(|(i, _)| !haunted_at.contains_key(i))
                .take(10)
                .map(|(_, s)| s.nick.as_str())
                .collect();
            panic!(
                "only {} of {} ghosts joined their rooms within {:?} (missing e.g. the ghosts of {missing:?}); \
                 the daemon's log:\n{}",
                haunted_at.len(),
                expected.len(),
                settings.haunt_limit,
                daemon.log()
            );
        }
        if progress.elapsed() >= Duration::from_secs(10) {
            progress = Instant::now();
            eprintln!(
                "ghosts bench: {} of {} ghosts in their rooms after {:.0} s",
                haunted_at.len(),
                expected.len(),
                connecting.elapsed().as_secs_f64()
            );
        }
        let Ok(Some((at, event))) =
            tokio::time::timeout(Duration::from_secs(1), listener.events.recv()).await
        else {
            continue;
        };
        if let Some(user) = joined(&event)
            && let Some(&r) = room_of.get(event.room_id.as_str())
            && let Some(&seat) = expected.get(&(r, user.to_owned()))
        {
            haunted_at.entry(seat).or_insert(at);
        }
    }
    let haunted = haunted_at.values().max().map_or(Duration::ZERO, |last| *last - connecting);
    eprintln!(
        "ghosts bench: all {} ghosts joined {:.1} s after the first IRC client connected ({:.1} ghosts/s)",
        expected.len(),
        haunted.as_secs_f64(),
        expected.len() as f64 / haunted.as_secs_f64().max(1e-9)
    );
    // The server's word on each room's members: exactly its channel's ghosts, the bot and olive.
    let mut wrong_rooms = Vec::new();
    for (r, room) in rooms.iter().enumerate() {
        pong(&mut fleet).await;
        let members: HashSet<String> =
            olive.joined_members(room).await.unwrap_or_else(|e| panic!("{e}")).into_iter().collect();
        let want: HashSet<String> = seats[r * settings.per_room..(r + 1) * settings.per_room]
            .iter()
            .map(|s| ghost(&s.nick))
            .chain([bot.clone(), olive_id.clone()])
            .collect();
        if members != want {
            let extra: Vec<&String> = members.difference(&want).take(3).collect();
            let absent: Vec<&String> = want.difference(&members).take(3).collect();
            wrong_rooms.push(format!("{}: extra {extra:?}, absent {absent:?}", channel(r)));
        }
    }
    assert!(wrong_rooms.is_empty(), "rooms whose members are not their channel's ghosts: {wrong_rooms:?}");
    let members_checked =
        format!("each room's /joined_members is its {} ghosts, the bot and olive", settings.per_room);

    // 3. Idle.
    let settle_end = Instant::now() + SETTLE;
    while Instant::now() < settle_end {
        pong(&mut fleet).await;
        listener.drain(Duration::from_millis(200)).await;
    }
    let idle_load = load_average();
    let (cpu_before, synapse_before, idle_start) =
        (cpu_time(pid, ticks), cpu_time(synapse_pid, ticks), Instant::now());
    while idle_start.elapsed() < settings.idle {
        let end = (Instant::now() + Duration::from_secs(1)).min(idle_start + settings.idle);
        let _ = fleet.next(end).await;
        while listener.events.try_recv().is_ok() {}
    }
    let idle_wall = idle_start.elapsed();
    let idle_cpu = share(cpu_before, cpu_time(pid, ticks), idle_wall);
    let idle_synapse_cpu = share(synapse_before, cpu_time(synapse_pid, ticks), idle_wall);
    let idle_rss = rss_mib(pid);
    eprintln!("ghosts bench: idle {idle_cpu:.1} % CPU, RSS {idle_rss:.1} MiB");

    // 4. Load: lines paced on the bench's clock, the channels round-robin.
    let load_load_before = load_average();
    let period = Duration::from_secs(1) / settings.rate as u32;
    let lines = (settings.load.as_secs() * settings.rate) as usize;
    let client_of = |n: usize| {
        let r = n % settings.rooms;
        let k = (n / settings.rooms) % settings.per_room;
        r * settings.per_room + k
    };
    let mut sent_at: Vec<Instant> = Vec::with_capacity(lines);
    let mut arrived: Vec<Option<Instant>> = vec![None; lines];
    let mut wrong = 0usize;
    let text = |n: usize| format!("ghost line {n} of the load");
    let line_of = |body: &str| -> Option<usize> {
        body.strip_prefix("ghost line ")?.strip_suffix(" of the load")?.parse().ok()
    };
    // A message may hold several lines of one speaker (the courier's `merge_lines`).
    let take = |at: Instant, event: &Event, arrived: &mut Vec<Option<Instant>>, wrong: &mut usize| {
        let Some(message) = event.message() else { return };
        for n in message.body.lines().filter_map(line_of) {
            let Some(slot) = arrived.get_mut(n) else { continue };
            let seat = &seats[client_of(n)];
            let right_room = room_of.get(event.room_id.as_str()) == Some(&(client_of(n) / settings.per_room));
            if event.sender == ghost(&seat.nick) && right_room && slot.is_none() {
                *slot = Some(at);
            } else {
                *wrong += 1;
            }
        }
    };
    let (cpu_before, synapse_before) = (cpu_time(pid, ticks), cpu_time(synapse_pid, ticks));
    let load_start = Instant::now();
    let mut next_rss = load_start;
    let mut rss_max: f64 = 0.0;
    for n in 0..lines {
        let due = load_start + period * n as u32;
        loop {
            let now = Instant::now();
            if now >= next_rss {
                rss_max = rss_max.max(rss_mib(pid));
                next_rss += RSS_EVERY;
            }
            while let Ok((at, event)) = listener.events.try_recv() {
                take(at, &event, &mut arrived, &mut wrong);
            }
            if now >= due {
                break;
            }
            let _ = fleet.next(due.min(next_rss)).await;
        }
        sent_at.push(Instant::now());
        fleet.say(client_of(n), false, &text(n)).await;
    }
    let sending = load_start.elapsed();
    let load_cpu = share(cpu_before, cpu_time(pid, ticks), sending);
    let load_synapse_cpu = share(synapse_before, cpu_time(synapse_pid, ticks), sending);
    let load_rss_end = rss_mib(pid);
    rss_max = rss_max.max(load_rss_end);
    let synapse_rss = rss_mib(synapse_pid);
    let load_load = format!("{load_load_before} before, {} after", load_average());
    let sent_end = Instant::now();
    let drain_end = sent_end + settings.drain_limit;
    let mut received = arrived.iter().filter(|a| a.is_some()).count();
    while received < lines && Instant::now() < drain_end {
        pong(&mut fleet).await;
        if let Ok(Some((at, event))) =
            tokio::time::timeout(Duration::from_millis(500), listener.events.recv()).await
        {
            take(at, &event, &mut arrived, &mut wrong);
            received = arrived.iter().filter(|a| a.is_some()).count();
        }
    }
    let late_first: Vec<String> = (0..lines)
        .filter(|&n| arrived[n].is_none())
        .take(5)
        .map(|n| format!("{} in {}: {:?}", seats[client_of(n)].nick, seats[client_of(n)].channel, text(n)))
        .collect();
    let times: Vec<Duration> = arrived
        .iter()
        .zip(&sent_at)
        .filter_map(|(a, s)| Some(a.as_ref()?.saturating_duration_since(*s)))
        .collect();
    let last_arrival = arrived.iter().flatten().max().copied().unwrap_or(load_start);
    let backlog = last_arrival.saturating_duration_since(sent_end);
    let throughput =
        received as f64 / last_arrival.saturating_duration_since(load_start).as_secs_f64().max(1e-9);
    eprintln!("ghosts bench: load: {lines} sent, {received} received, {wrong} wrong");

    daemon.stop();
    let log = std::fs::read_to_string(daemon.log_path()).unwrap_or_default();
    let log_warnings: Vec<String> = log
        .lines()
        .map(plain)
        .filter(|l| l.split_whitespace().nth(1).is_some_and(|level| level == "WARN" || level == "ERROR"))
        .collect();
    fleet.quit().await;
    Figures {
        rooms_made,
        start,
        irc_joined,
        haunted,
        members_checked,
        idle_cpu,
        idle_synapse_cpu,
        idle_rss,
        idle_load,
        sent: lines,
        received,
        wrong,
        late_first,
        times,
        sending,
        backlog,
        throughput,
        load_cpu,
        load_synapse_cpu,
        load_rss_max: rss_max,
        load_rss_end,
        synapse_rss,
        load_load,
        log_warnings,
    }
}

fn report(settings: &Settings, f: &Figures, load_before: &str) -> String {
    let mut out = String::new();
    let ghosts = settings.ghosts();
    let _ = writeln!(
        out,
        "Ghosts at scale: {ghosts} IRC users in {} channels bridged to {} Matrix rooms (appservice mode)",
        settings.rooms, settings.rooms
    );
    let _ = writeln!(
        out,
        "  {} rooms made in {:.1} s; the daemon in all of them {:.1} s after its start",
        settings.rooms,
        f.rooms_made.as_secs_f64(),
        f.start.as_secs_f64()
    );
    let _ = writeln!(
        out,
        "  haunting: {ghosts} IRC clients joined in {:.1} s; every ghost in its room {:.1} s after the first connect: {:.1} ghosts/s",
        f.irc_joined.as_secs_f64(),
        f.haunted.as_secs_f64(),
        ghosts as f64 / f.haunted.as_secs_f64().max(1e-9)
    );
    let _ = writeln!(out, "  checked: {}", f.members_checked);
    let _ = writeln!(
        out,
        "  idle, {} s: daemon CPU {:.2} % of a core, RSS {:.1} MiB (Synapse CPU {:.1} %); load average {}",
        settings.idle.as_secs(),
        f.idle_cpu,
        f.idle_rss,
        f.idle_synapse_cpu,
        f.idle_load
    );
    let mut times = f.times.clone();
    times.sort();
    let (p50, p99, max) = if times.is_empty() {
        (Duration::ZERO, Duration::ZERO, Duration::ZERO)
    } else {
        (percentile(&times, 0.5), percentile(&times, 0.99), times[times.len() - 1])
    };
    let _ = writeln!(
        out,
        "  load, {} lines/s for {:.1} s: sent {}, received {}, lost {}, wrong {} (no loss: {})",
        settings.rate,
        f.sending.as_secs_f64(),
        f.sent,
        f.received,
        f.sent - f.received,
        f.wrong,
        if f.received == f.sent && f.wrong == 0 { "met" } else { "MISSED" }
    );
    let _ = writeln!(
        out,
        "    relay IRC → Matrix (write → olive's sync)  p50 {:8.2} ms   p99 {:8.2} ms   max {:8.2} ms",
        ms(p50),
        ms(p99),
        ms(max)
    );
    let _ = writeln!(
        out,
        "    delivered {:.1} lines/s (first send to last arrival); the last arrived {:.1} s after the last was sent",
        f.throughput,
        f.backlog.as_secs_f64()
    );
    let _ = writeln!(
        out,
        "    daemon CPU {:.1} % of a core, RSS {:.1} MiB at most ({:.1} MiB at the end); Synapse CPU {:.1} %, RSS {:.1} MiB",
        f.load_cpu, f.load_rss_max, f.load_rss_end, f.load_synapse_cpu, f.synapse_rss
    );
    let _ = writeln!(out, "    load average {}", f.load_load);
    for line in &f.late_first {
        let _ = writeln!(out, "    never arrived: {line}");
    }
    let _ = writeln!(
        out,
        "  the daemon's log: {} WARN or ERROR lines; load average {load_before} at the bench's start",
        f.log_warnings.len()
    );
    for line in f.log_warnings.iter().take(3) {
        let _ = writeln!(out, "    {line}");
    }
    out
}
