//! IRC benchmark (a bench binary that prints figures): `cargo bench -p spellbridge --bench irc`.
//!
//! One InspIRCd on loopback (the test harness's, flood penalties off) serves, one after
//! the other in the same run:
//!
//! - the raw floor: client A says a line in a channel and client B receives it (one way),
//!   and B answers at once and A receives that (a round trip with no bot in it);
//! - spellbridge (`spellbridge run`, this package's binary, flood control and the per-user
//!   limit off, a Thaum table opened in the channel by the measuring client), once with
//!   `[store] durability = "full"` (the default: fsync before every move's reply) and once with
//!   `"normal"`: round trips of `!status` (read-only) and `!coins <me> +1` (the game
//!   master's command, committed before the reply), then throughput;
//! - Limnoria (`supybot` from the venv of `tests/scripts/install-limnoria.sh`, its
//!   throttle and command-flood limits off): round trips of `!echo` (Utilities, read-only)
//!   and `!bench++` (the Karma plugin, which writes its SQLite database before replying),
//!   then throughput; once as shipped (it negotiates echo-message and meets the ~40 ms
//!   delayed-ACK stall of SERVERS.md) and once at its best, without that capability;
//! - the resident memory of each bot idle in 100 channels.
//!
//! A round trip is one command at a time: the client sends, then waits for the bot's
//! reply. Throughput: [`TP_CLIENTS`] clients each send [`TP_COMMANDS`] read-only commands
//! as fast as they can and read the replies addressed to them; replies/s counts from the
//! first command sent to the last reply received. Every wait is bounded; the bots and the
//! server are stopped at the end (SIGTERM, then SIGKILL), also when the bench panics.
//!
//! With `SPELLBRIDGE_BENCH_STORE=sqlite`, `postgres` or `both`, only spellbridge's round
//! trips are measured, on that store engine or on each in turn ([`stores`], issue 34).
//!
//! Needs InspIRCd (`tests/scripts/install-inspircd.sh`) and Limnoria
//! (`tests/scripts/install-limnoria.sh`; the venv is `$SPELLBRIDGE_LIMNORIA_VENV`, default
//! `~/.cache/spellbridge/limnoria-venv`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use spellbridge_adapters::irc::format::strip;
use spellbridge_tests::harness::endpoint;
use spellbridge_tests::harness::inspircd::InspIrcd;
use spellbridge_tests::harness::irc_client::{IrcClient, Message};

mod support;
use support::process::Process;
use support::{clock_ticks, cpu_time, ms, percentile, rss_mib};

#[path = "irc/stores.rs"]
mod stores;

/// The daemon: Cargo builds this package's binary for its benches and names it here.
const SPELLBRIDGE: &str = env!("CARGO_BIN_EXE_spellbridge");
/// Round trips measured per figure, after [`WARMUP`] unmeasured ones.
const ROUND_TRIPS: usize = 500;
const WARMUP: usize = 20;
/// Throughput: clients, commands per client.
const TP_CLIENTS: usize = 4;
const TP_COMMANDS: usize = 2_000;
/// The longest a throughput run may take.
const TP_LIMIT: Duration = Duration::from_secs(120);
/// Channels for the memory figure.
const IDLE_CHANNELS: usize = 100;
/// The longest one reply may take before the bench gives up.
const REPLY_LIMIT: Duration = Duration::from_secs(10);
/// The longest a bot may take to start answering.
const START_LIMIT: Duration = Duration::from_secs(60);

// ---------------------------------------------------------------------------------------
// Child processes

/// A bot as a child process ([`Process`]: its temp dir, log and stop) and the nick it
/// answers as. Dropping it stops it.
struct Bot {
    process: Process,
    nick: &'static str,
}

fn spawn(name: &'static str, nick: &'static str, dir: tempfile::TempDir, command: &mut Command) -> Bot {
    Bot { process: Process::spawn(name, dir, command), nick }
}

/// `spellbridge run` in `channels`, with flood control and the per-user limit off, and
/// its `/metrics` on `http` (the store's synced commits: [`synced_commits`]).
fn start_spellbridge(port: u16, http: u16, channels: &[String], durability: &str) -> Bot {
    start_spellbridge_on(port, http, channels, &format!("path = \"games.db\"\ndurability = \"{durability}\""))
}

/// `spellbridge run` as [`start_spellbridge`] says, with `store` as its `[store]` table's
/// body (`url = "postgres://…"`, say).
fn start_spellbridge_on(port: u16, http: u16, channels: &[String], store: &str) -> Bot {
    let dir = tempfile::Builder::new().prefix("spellbridge-bench-").tempdir().expect("temp dir");
    let channels: Vec<String> = channels.iter().map(|c| format!("{c:?}")).collect();
    let config = format!(
        "prefix = \"!\"\n\
         [store]\n{store}\n\
         [http]\nlisten = \"127.0.0.1:{http}\"\n\
         [thaum]\nschedule = \"manual\"\n\
         [[irc]]\nname = \"bench\"\nserver = \"127.0.0.1\"\nport = {port}\ntls = false\n\
         nick = \"spellbridge\"\nchannels = [{}]\nrequire_account = false\n\
         [irc.flood]\nenabled = false\n[irc.user_limit]\nenabled = false\n",
        channels.join(", ")
    );
    let path = dir.path().join("spellbridge.toml");
    std::fs::write(&path, config).expect("write the spellbridge config");
    let mut command = Command::new(SPELLBRIDGE);
    command.args(["run", "--config"]).arg(&path).env("RUST_LOG", "info");
    spawn("spellbridge", "spellbridge", dir, &mut command)
}

/// The Limnoria venv, as `tests/scripts/install-limnoria.sh` makes it.
fn limnoria_venv() -> PathBuf {
    match std::env::var_os("SPELLBRIDGE_LIMNORIA_VENV") {
        Some(path) => PathBuf::from(path),
        None => {
            let home = std::env::var_os("HOME").expect("HOME is set");
            Path::new(&home).join(".cache/spellbridge/limnoria-venv")
        }
    }
}

/// Limnoria in `channels`: prefix `!`, throttle and command-flood limits off, the Karma
/// plugin replying, logging only warnings (its best case).
///
/// Limnoria requests echo-message and labeled-response, which InspIRCd offers; with them
/// every exchange meets the ~40 ms delayed-ACK stall of SERVERS.md. Limnoria has no
/// setting to leave them out, so with `echo_message: false` a five-line plugin written
/// beside the config takes them out of `Irc.REQUEST_CAPABILITIES` before the bot
/// connects: Limnoria at its best.
fn start_limnoria(port: u16, channels: &[String], echo_message: bool) -> Bot {
    let dir = tempfile::Builder::new().prefix("limnoria-bench-").tempdir().expect("temp dir");
    let d = dir.path().display();
    for sub in ["conf", "data", "data/tmp", "data/web", "backup", "logs", "plugins"] {
        std::fs::create_dir_all(dir.path().join(sub)).expect("Limnoria dirs");
    }
    for file in ["users.conf", "channels.conf", "networks.conf", "ignores.conf"] {
        std::fs::write(dir.path().join("conf").join(file), "").expect("Limnoria databases");
    }
    // Keys from Limnoria's src/conf.py and plugins/*/config.py.
    let config = format!(
        "supybot.nick: limnoria\n\
         supybot.ident: limnoria\n\
         supybot.user: Limnoria benchmark\n\
         supybot.networks: bench\n\
         supybot.networks.bench.servers: 127.0.0.1:{port}\n\
         supybot.networks.bench.ssl: False\n\
         supybot.networks.bench.channels: {}\n\
         supybot.reply.whenAddressedBy.chars: !\n\
         supybot.protocols.irc.throttleTime: 0.0\n\
         supybot.protocols.irc.queuing.rateLimit.join: 0.0\n\
         supybot.abuse.flood.command: False\n\
         supybot.abuse.flood.command.invalid: False\n\
         supybot.directories.conf: {d}/conf\n\
         supybot.directories.data: {d}/data\n\
         supybot.directories.data.tmp: {d}/data/tmp\n\
         supybot.directories.data.web: {d}/data/web\n\
         supybot.directories.backup: {d}/backup\n\
         supybot.directories.log: {d}/logs\n\
         supybot.directories.plugins: {d}/plugins\n\
         supybot.plugins: Admin Channel Config Karma Misc Owner User Utilities\n\
         supybot.plugins.Karma: True\n\
         supybot.plugins.Karma.response: True\n\
         supybot.plugins.Utilities: True\n\
         supybot.log.level: WARNING\n\
         supybot.log.stdout.level: WARNING\n",
        channels.join(" ")
    );
    let mut config = config;
    if !echo_message {
        let plugin = dir.path().join("plugins/NoEchoMessage");
        std::fs::create_dir_all(&plugin).expect("Limnoria plugin dir");
        for (file, text) in NO_ECHO_MESSAGE_PLUGIN {
            std::fs::write(plugin.join(file), text).expect("write the Limnoria plugin");
        }
        config = config.replace(" Utilities\n", " Utilities NoEchoMessage\n");
        config.push_str("supybot.plugins.NoEchoMessage: True\n");
    }
    let path = dir.path().join("bench.conf");
    std::fs::write(&path, config).expect("write the Limnoria config");
    let mut command = Command::new(limnoria_venv().join("bin/supybot"));
    command.arg("--allow-root").arg(&path);
    spawn("Limnoria", "limnoria", dir, &mut command)
}

/// A Limnoria plugin that only removes echo-message and labeled-response from the
/// capabilities Limnoria requests (it is loaded before the connection registers).
const NO_ECHO_MESSAGE_PLUGIN: [(&str, &str); 3] = [
    ("__init__.py", "from . import config, plugin\nClass = plugin.Class\nconfigure = config.configure\n"),
    (
        "config.py",
        "import supybot.conf as conf\n\ndef configure(advanced):\n    pass\n\n\
         NoEchoMessage = conf.registerPlugin('NoEchoMessage')\n",
    ),
    (
        "plugin.py",
        "import supybot.callbacks as callbacks\nimport supybot.irclib as irclib\n\n\
         irclib.Irc.REQUEST_CAPABILITIES = irclib.Irc.REQUEST_CAPABILITIES - {'echo-message', 'labeled-response'}\n\n\
         class NoEchoMessage(callbacks.Plugin):\n    \"\"\"Requests no echo-message nor labeled-response.\"\"\"\n\n\
         Class = NoEchoMessage\n",
    ),
];

// ---------------------------------------------------------------------------------------
// Clients

/// Clients connected in parallel (each registration takes ~1 s on InspIRCd's timer).
async fn connect_all(port: u16, nicks: &[String]) -> Vec<IrcClient> {
    let tasks: Vec<_> = nicks
        .iter()
        .map(|nick| {
            let nick = nick.clone();
            tokio::spawn(async move {
                IrcClient::connect(port, &nick).await.unwrap_or_else(|e| panic!("{nick} connects: {e}"))
            })
        })
        .collect();
    let mut clients = Vec::new();
    for task in tasks {
        clients.push(task.await.expect("a client task"));
    }
    clients
}

async fn join(client: &mut IrcClient, channel: &str) {
    client.join(channel).await.unwrap_or_else(|e| panic!("{} joins {channel}: {e}", client.nick()));
}

async fn say(client: &mut IrcClient, target: &str, text: &str) {
    client.privmsg(target, text).await.unwrap_or_else(|e| panic!("{} sends: {e}", client.nick()));
}

/// Reads until a PRIVMSG that `wanted` accepts, within `limit`.
async fn wait_for(
    client: &mut IrcClient,
    limit: Duration,
    wanted: impl Fn(&Message) -> bool,
) -> Option<Message> {
    wait_or_skipped(client, limit, wanted).await.ok()
}

/// Like [`wait_for`], but on timeout returns the PRIVMSGs that were skipped (the last 10).
async fn wait_or_skipped(
    client: &mut IrcClient,
    limit: Duration,
    wanted: impl Fn(&Message) -> bool,
) -> Result<Message, Vec<String>> {
    let deadline = Instant::now() + limit;
    let mut skipped = Vec::new();
    loop {
        let Some(left) = deadline.checked_duration_since(Instant::now()) else { return Err(skipped) };
        let Some(message) = client.next_privmsg(left).await else { return Err(skipped) };
        if wanted(&message) {
            return Ok(message);
        }
        if skipped.len() == 10 {
            skipped.remove(0);
        }
        skipped.push(message.to_string());
    }
}

/// Reads and drops whatever arrives until `quiet` passes with nothing.
async fn drain(client: &mut IrcClient, quiet: Duration) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline && client.next_message(quiet).await.is_some() {}
}

/// Asks (bounded) until the bot answers in `channel`: it has joined and is ready.
async fn wait_until_answering(client: &mut IrcClient, bot: &mut Bot, channel: &str, probe: &str) -> Duration {
    let started = Instant::now();
    while started.elapsed() < START_LIMIT {
        if bot.process.exited() {
            panic!("{} exited while starting; its log:\n{}", bot.process.name, bot.process.log());
        }
        say(client, channel, probe).await;
        let nick = bot.nick;
        if wait_for(client, Duration::from_millis(500), |m| m.from == nick && m.target == channel)
            .await
            .is_some()
        {
            drain(client, Duration::from_millis(300)).await;
            return started.elapsed();
        }
    }
    panic!(
        "{} never answered in {channel} within {START_LIMIT:?}; its log:\n{}",
        bot.process.name,
        bot.process.log()
    );
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

/// One way: A says a line in the channel, B receives it.
async fn floor_one_way(a: &mut IrcClient, b: &mut IrcClient, channel: &str) -> Latency {
    let mut times = Vec::with_capacity(ROUND_TRIPS);
    for n in 0..WARMUP + ROUND_TRIPS {
        let text = format!("floor {n}");
        let start = Instant::now();
        say(a, channel, &text).await;
        wait_for(b, REPLY_LIMIT, |m| m.text == text).await.expect("B receives A's line");
        if n >= WARMUP {
            times.push(start.elapsed());
        }
    }
    latency(times)
}

/// A round trip with no bot: A says a line, B answers it at once, A receives the answer.
async fn floor_round_trip(a: &mut IrcClient, b: &mut IrcClient, channel: &str) -> Latency {
    let mut times = Vec::with_capacity(ROUND_TRIPS);
    for n in 0..WARMUP + ROUND_TRIPS {
        let text = format!("ping {n}");
        let answer = format!("pong {n}");
        let start = Instant::now();
        say(a, channel, &text).await;
        wait_for(b, REPLY_LIMIT, |m| m.text == text).await.expect("B receives A's line");
        say(b, channel, &answer).await;
        wait_for(a, REPLY_LIMIT, |m| m.text == answer).await.expect("A receives B's answer");
        if n >= WARMUP {
            times.push(start.elapsed());
        }
    }
    latency(times)
}

/// Command round trips, one at a time: send, wait for the bot's reply that `is_reply`
/// accepts. Also returns the p50 of the first and the last 50 (state that grows shows).
async fn round_trips(
    client: &mut IrcClient,
    bot: &Bot,
    channel: &str,
    command: &str,
    is_reply: impl Fn(&str) -> bool,
) -> (Latency, Duration, Duration) {
    let mut times = Vec::with_capacity(ROUND_TRIPS);
    for n in 0..WARMUP + ROUND_TRIPS {
        let start = Instant::now();
        say(client, channel, command).await;
        let reply = wait_or_skipped(client, REPLY_LIMIT, |m| {
            m.from == bot.nick && m.target == channel && is_reply(&strip(&m.text))
        })
        .await;
        if let Err(skipped) = reply {
            panic!(
                "{} did not answer {command:?} within {REPLY_LIMIT:?}; messages skipped:\n  {}\nits log:\n{}",
                bot.process.name,
                skipped.join("\n  "),
                bot.process.log()
            );
        }
        if n >= WARMUP {
            times.push(start.elapsed());
        }
    }
    let ends = |part: &[Duration]| latency(part.to_vec()).p50;
    let (first, last) = (ends(&times[..50]), ends(&times[times.len() - 50..]));
    (latency(times), first, last)
}

/// Whether a reply starts with `nick` as a word (`alice: …`, `alice's sheet: …`).
fn about(nick: &str, text: &str) -> bool {
    text.strip_prefix(nick).is_some_and(|rest| !rest.starts_with(|c: char| c.is_alphanumeric()))
}

struct Throughput {
    replies: usize,
    elapsed: Duration,
    cpu: Duration,
}

impl Throughput {
    fn per_second(&self) -> f64 {
        self.replies as f64 / self.elapsed.as_secs_f64()
    }
}

/// Each client sends [`TP_COMMANDS`] commands (`command_for(nick)`) as fast as it can,
/// then reads until it has that many replies addressed to it (`is_reply(nick, text)`) or
/// the run's time is up.
async fn throughput(
    clients: Vec<IrcClient>,
    bot: &Bot,
    channel: &'static str,
    command_for: fn(&str) -> String,
    is_reply: fn(&str, &str) -> bool,
    ticks: f64,
) -> (Vec<IrcClient>, Throughput) {
    let cpu_before = cpu_time(bot.process.pid(), ticks);
    let start = Instant::now();
    let deadline = start + TP_LIMIT;
    let nick = bot.nick;
    let tasks: Vec<_> = clients
        .into_iter()
        .map(|mut client| {
            tokio::spawn(async move {
                let command = command_for(client.nick());
                for _ in 0..TP_COMMANDS {
                    say(&mut client, channel, &command).await;
                }
                let me = client.nick().to_owned();
                let mut replies = 0;
                let mut last = Instant::now();
                while replies < TP_COMMANDS {
                    let Some(left) = deadline.checked_duration_since(Instant::now()) else { break };
                    let Some(message) = client.next_privmsg(left.min(REPLY_LIMIT)).await else { break };
                    if message.from == nick
                        && message.target == channel
                        && is_reply(&me, &strip(&message.text))
                    {
                        replies += 1;
                        last = Instant::now();
                    }
                }
                (client, replies, last)
            })
        })
        .collect();
    let mut clients = Vec::new();
    let mut replies = 0;
    let mut end = start;
    for task in tasks {
        let (client, got, last) = task.await.expect("a throughput client");
        clients.push(client);
        replies += got;
        end = end.max(last);
    }
    let cpu = cpu_time(bot.process.pid(), ticks).saturating_sub(cpu_before);
    if replies < TP_CLIENTS * TP_COMMANDS {
        eprintln!(
            "irc bench: {} answered {replies} of {} commands within {TP_LIMIT:?}",
            bot.process.name,
            TP_CLIENTS * TP_COMMANDS
        );
    }
    for client in &mut clients {
        drain(client, Duration::from_millis(300)).await;
    }
    (clients, Throughput { replies, elapsed: end - start, cpu })
}

/// The bot idle in [`IDLE_CHANNELS`] channels: its RSS once a client in the last channel
/// gets an answer and a second has passed.
async fn idle_rss(
    client: &mut IrcClient,
    start: impl FnOnce(&[String]) -> Bot,
    probe: &str,
    prefix: &str,
) -> (f64, Duration) {
    let channels: Vec<String> = (1..=IDLE_CHANNELS).map(|n| format!("#{prefix}{n}")).collect();
    let last = channels[IDLE_CHANNELS - 1].clone();
    join(client, &last).await;
    let mut bot = start(&channels);
    let joined = wait_until_answering(client, &mut bot, &last, probe).await;
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
    format!("p50 {:7.3} ms   p99 {:7.3} ms", ms(l.p50), ms(l.p99))
}

fn tp(t: &Throughput) -> String {
    format!(
        "{:7.0} replies/s  ({} in {:.2} s; bot CPU {:.0} µs/reply)",
        t.per_second(),
        t.replies,
        t.elapsed.as_secs_f64(),
        t.cpu.as_secs_f64() * 1e6 / t.replies.max(1) as f64
    )
}

/// spellbridge's figures with one durability setting.
struct SpellbridgeRun {
    status: (Latency, Duration, Duration),
    coins: (Latency, Duration, Duration),
    throughput: Throughput,
    /// The store's synced commits during the throughput run (issue 30: read-only
    /// commands must make none).
    synced: u64,
    rss_one_channel: f64,
}

/// The daemon's count of store commits that waited for the disk, from its `/metrics`.
async fn synced_commits(http: u16) -> u64 {
    const SAMPLE: &str = "spellbridge_store_commits_total{synced=\"true\"} ";
    let (_, body) = endpoint::get(http, "/metrics").await.expect("spellbridge's /metrics answers");
    body.lines()
        .find_map(|line| line.strip_prefix(SAMPLE)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no synced commit count in /metrics:\n{body}"))
}

async fn spellbridge_run(
    port: u16,
    player: &mut IrcClient,
    crowd: Vec<IrcClient>,
    channel: &'static str,
    durability: &str,
    ticks: f64,
) -> (Vec<IrcClient>, SpellbridgeRun) {
    let mut crowd = crowd;
    join(player, channel).await;
    for client in &mut crowd {
        join(client, channel).await;
    }
    let http = endpoint::free_port().expect("a free port for /metrics");
    let mut bot = start_spellbridge(port, http, &[channel.to_owned()], durability);
    let ready = wait_until_answering(player, &mut bot, channel, "!games").await;
    eprintln!(
        "irc bench: spellbridge ({durability}) answered in {channel} after {:.1} s",
        ready.as_secs_f64()
    );
    let rss_one_channel = rss_mib(bot.process.pid());

    // The measuring client opens a Thaum table (and so is its game master and a player);
    // the crowd joins it, so each one's `!status` is one short line addressed to them.
    say(player, channel, "!new thaum").await;
    wait_for(player, REPLY_LIMIT, |m| m.from == bot.nick && m.text.contains("opens a Thaum table"))
        .await
        .unwrap_or_else(|| panic!("no Thaum table opened; log:\n{}", bot.process.log()));
    for client in &mut crowd {
        say(client, channel, "!join").await;
        let nick = client.nick().to_owned();
        wait_for(client, REPLY_LIMIT, |m| m.from == bot.nick && m.text.contains(&nick))
            .await
            .unwrap_or_else(|| panic!("{nick} could not join the table; log:\n{}", bot.process.log()));
    }
    drain(player, Duration::from_millis(300)).await;
    for client in &mut crowd {
        drain(client, Duration::from_millis(100)).await;
    }

    let me = player.nick().to_owned();
    let status = round_trips(player, &bot, channel, "!status", |t| about(&me, t) && t.contains("Mana")).await;
    let coins =
        round_trips(player, &bot, channel, &format!("!coins {me} +1"), |t| t.contains("coins:")).await;
    let synced_before = synced_commits(http).await;
    let (crowd, throughput) = throughput(
        crowd,
        &bot,
        channel,
        |_| "!status".to_owned(),
        |nick, text| about(nick, text) && text.contains("Mana"),
        ticks,
    )
    .await;
    let synced = synced_commits(http).await - synced_before;
    bot.process.stop();
    (crowd, SpellbridgeRun { status, coins, throughput, synced, rss_one_channel })
}

/// Limnoria's figures, with or without echo-message.
struct LimnoriaRun {
    echo: (Latency, Duration, Duration),
    karma: (Latency, Duration, Duration),
    throughput: Throughput,
    rss_one_channel: f64,
}

async fn limnoria_run(
    port: u16,
    player: &mut IrcClient,
    crowd: Vec<IrcClient>,
    channel: &'static str,
    echo_message: bool,
    ticks: f64,
) -> (Vec<IrcClient>, LimnoriaRun) {
    let mut crowd = crowd;
    join(player, channel).await;
    for client in &mut crowd {
        join(client, channel).await;
    }
    let mut bot = start_limnoria(port, &[channel.to_owned()], echo_message);
    let ready = wait_until_answering(player, &mut bot, channel, "!echo ready").await;
    eprintln!(
        "irc bench: Limnoria (echo-message {echo_message}) answered in {channel} after {:.1} s",
        ready.as_secs_f64()
    );
    let rss_one_channel = rss_mib(bot.process.pid());
    let echo = round_trips(player, &bot, channel, "!echo x", |t| t == "x").await;
    let karma = round_trips(player, &bot, channel, "!bench++", |t| t.contains("karma is now")).await;
    eprintln!(
        "irc bench: Limnoria (echo-message {echo_message}) !echo {}, !bench++ {}",
        lat(echo.0),
        lat(karma.0)
    );
    let (crowd, throughput) =
        throughput(crowd, &bot, channel, |nick| format!("!echo {nick}"), |nick, text| text == nick, ticks)
            .await;
    bot.process.stop();
    (crowd, LimnoriaRun { echo, karma, throughput, rss_one_channel })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // `cargo test --benches` runs this with `--test`-like flags; run the figures only for bench.
    if args.iter().any(|a| a == "--test" || a == "--list") {
        return;
    }
    if let Ok(which) = std::env::var("SPELLBRIDGE_BENCH_STORE") {
        stores::main(&which);
        return;
    }
    let supybot = limnoria_venv().join("bin/supybot");
    assert!(
        supybot.exists(),
        "Limnoria is needed: {} is missing; run tests/scripts/install-limnoria.sh",
        supybot.display()
    );
    let irc = InspIrcd::start()
        .unwrap_or_else(|e| panic!("InspIRCd is needed (tests/scripts/install-inspircd.sh): {e}"));
    let port = irc.port();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
    let report = runtime.block_on(bench(port));
    drop(irc);
    print!("{report}");
}

async fn bench(port: u16) -> String {
    let ticks = clock_ticks();
    eprintln!("irc bench: InspIRCd on 127.0.0.1:{port}; spellbridge is {SPELLBRIDGE}");
    let mut nicks: Vec<String> = ["alice", "bob", "player"].iter().map(|s| s.to_string()).collect();
    nicks.extend((0..TP_CLIENTS).map(|n| format!("crowd{n}")));
    let mut clients = connect_all(port, &nicks).await;
    let crowd: Vec<IrcClient> = clients.split_off(3);
    let mut player = clients.pop().expect("player");
    let mut b = clients.pop().expect("bob");
    let mut a = clients.pop().expect("alice");

    // The raw floor.
    join(&mut a, "#floor").await;
    join(&mut b, "#floor").await;
    drain(&mut a, Duration::from_millis(200)).await;
    let one_way = floor_one_way(&mut a, &mut b, "#floor").await;
    let floor = floor_round_trip(&mut a, &mut b, "#floor").await;
    eprintln!("irc bench: floor one way {}, round trip {}", lat(one_way), lat(floor));

    // spellbridge, durable (fsync before each move's reply) and with durability "normal".
    let (crowd, full) = spellbridge_run(port, &mut player, crowd, "#sb-full", "full", ticks).await;
    eprintln!("irc bench: spellbridge (full) !status {}, !coins {}", lat(full.status.0), lat(full.coins.0));
    let (crowd, normal) = spellbridge_run(port, &mut player, crowd, "#sb-normal", "normal", ticks).await;
    eprintln!(
        "irc bench: spellbridge (normal) !status {}, !coins {}",
        lat(normal.status.0),
        lat(normal.coins.0)
    );

    // Limnoria as shipped (it negotiates echo-message), then at its best (without).
    let (crowd, shipped) = limnoria_run(port, &mut player, crowd, "#lim-shipped", true, ticks).await;
    let (crowd, best) = limnoria_run(port, &mut player, crowd, "#lim-best", false, ticks).await;
    drop(crowd);

    // Memory, idle in 100 channels.
    let (sb_rss, sb_joined) = idle_rss(
        &mut player,
        |channels| start_spellbridge(port, endpoint::free_port().expect("a free port"), channels, "full"),
        "!games",
        "sb-idle-",
    )
    .await;
    let (lim_rss, lim_joined) =
        idle_rss(&mut player, |channels| start_limnoria(port, channels, false), "!echo ready", "lim-idle-")
            .await;

    // The table.
    let mut rows = Vec::new();
    row(&mut rows, "raw floor, one way (A → #chan → B)", lat(one_way));
    row(&mut rows, "raw floor, round trip (A → B, B answers → A)", lat(floor));
    for (name, run) in [("full", &full), ("normal", &normal)] {
        row(&mut rows, format!("spellbridge !status (durability {name})"), lat(run.status.0));
        row(&mut rows, format!("spellbridge !coins <me> +1 (durability {name})"), lat(run.coins.0));
    }
    for (name, run) in [("best: no echo-message", &best), ("as shipped", &shipped)] {
        row(&mut rows, format!("Limnoria !echo x ({name})"), lat(run.echo.0));
        row(&mut rows, format!("Limnoria !bench++ Karma ({name})"), lat(run.karma.0));
    }
    for (name, run) in [("full", &full), ("normal", &normal)] {
        let synced = run.synced as f64 * 1000.0 / run.throughput.replies.max(1) as f64;
        let figure = format!("{}; {synced:.1} synced commits per 1,000 replies", tp(&run.throughput));
        row(&mut rows, format!("spellbridge throughput, !status ({name})"), figure);
    }
    row(&mut rows, "Limnoria throughput, !echo (best)", tp(&best.throughput));
    row(&mut rows, "Limnoria throughput, !echo (as shipped)", tp(&shipped.throughput));
    row(&mut rows, "spellbridge RSS, idle in 1 channel", format!("{:.1} MiB", full.rss_one_channel));
    row(
        &mut rows,
        format!("spellbridge RSS, idle in {IDLE_CHANNELS} channels"),
        format!("{sb_rss:.1} MiB (answered in the last one {:.1} s after start)", sb_joined.as_secs_f64()),
    );
    row(&mut rows, "Limnoria RSS, idle in 1 channel", format!("{:.1} MiB", best.rss_one_channel));
    row(
        &mut rows,
        format!("Limnoria RSS, idle in {IDLE_CHANNELS} channels"),
        format!("{lim_rss:.1} MiB (answered in the last one {:.1} s after start)", lim_joined.as_secs_f64()),
    );

    let width = rows.iter().map(|r| r.what.chars().count()).max().unwrap_or(0);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "IRC benchmark: one InspIRCd on 127.0.0.1; {ROUND_TRIPS} round trips per latency figure, one at a time \
         (after {WARMUP} unmeasured); throughput {TP_CLIENTS} clients × {TP_COMMANDS} commands, flood control off"
    );
    for r in &rows {
        let pad = width - r.what.chars().count();
        let _ = writeln!(out, "  {}{}  {}", r.what, " ".repeat(pad), r.figure);
    }
    let _ = writeln!(out, "state growth (p50 of the first → the last 50 round trips):");
    for (name, l) in [
        ("spellbridge !coins (full)", full.coins),
        ("spellbridge !coins (normal)", normal.coins),
        ("spellbridge !status (full)", full.status),
        ("Limnoria !bench++ (best)", best.karma),
    ] {
        let _ = writeln!(out, "  {name}: {:.3} → {:.3} ms", ms(l.1), ms(l.2));
    }
    let verdict = |ok: bool| if ok { "met" } else { "MISSED" };
    let (status, coins, echo, karma) =
        (full.status.0.p50, full.coins.0.p50, best.echo.0.p50, best.karma.0.p50);
    let _ = writeln!(out, "goals (issue 4), against Limnoria at its best:");
    let _ = writeln!(
        out,
        "  !status p50 below Limnoria's read-only p50 ({:.3} < {:.3} ms): {}",
        ms(status),
        ms(echo),
        verdict(status < echo)
    );
    let _ = writeln!(
        out,
        "  !coins p50 (durability full) below Limnoria's state-changing p50 ({:.3} < {:.3} ms): {}",
        ms(coins),
        ms(karma),
        verdict(coins < karma)
    );
    let _ = writeln!(
        out,
        "  !coins p50 (durability full) below Limnoria's read-only p50 too ({:.3} < {:.3} ms): {}",
        ms(coins),
        ms(echo),
        verdict(coins < echo)
    );
    let over = status.saturating_sub(floor.p50);
    let _ = writeln!(
        out,
        "  !status p50 within 0.2 ms of the round-trip floor (+{:.3} ms): {}",
        ms(over),
        verdict(over <= Duration::from_micros(200))
    );
    let ratio = |t: &Throughput| t.per_second() / best.throughput.per_second();
    let _ = writeln!(
        out,
        "  throughput ≥ 10× Limnoria's (durability full {:.1}×, normal {:.1}×): {}",
        ratio(&full.throughput),
        ratio(&normal.throughput),
        verdict(ratio(&full.throughput) >= 10.0)
    );
    out
}
