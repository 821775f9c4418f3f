//! Takeover time (issue 34, Measure): a bench binary that prints figures,
//! `cargo bench -p spellbridge --bench takeover`.
//!
//! Two `spellbridge run` daemons with the same config on one PostgreSQL (a throwaway
//! cluster from tests/harness/postgres.rs), `[store] lease = "5s"` (or
//! `$SPELLBRIDGE_BENCH_LEASE`), the bot on a real InspIRCd and a real Synapse with a Thaum
//! table in `#take` bridged to a Matrix room. Each of [`TRIALS`] trials (or
//! `$SPELLBRIDGE_BENCH_TRIALS`):
//!
//! 1. a `!coins` from each network, answered (acknowledged);
//! 2. SIGKILL of the active daemon;
//! 3. from then, an IRC client and a Matrix client each say `!games` every
//!    [`PROBE_EVERY`] until the bot answers them: the takeover time to the first answered
//!    command on IRC and on Matrix;
//! 4. the killed daemon is started again and waited for as the new standby.
//!
//! At the end every acknowledged `!coins` line is counted in a watching IRC client's and
//! a watching Matrix client's transcripts: **lost** (0 times) and **doubled** (more than
//! once). Goal: p50 ≤ 10 s with a 5 s lease, 0 lost, 0 doubled.

use std::time::Duration;

use spellbridge_adapters::irc::format::strip;
use spellbridge_tests::harness::irc_client::{IrcClient, Message as IrcMessage};
use spellbridge_tests::harness::matrix_client::{MatrixClient, Message as MxMessage};
use spellbridge_tests::harness::pair::{Pair, Role, Servers, config_head};
use tokio::time::Instant;

mod support;
use support::{ms, percentile};

const SPELLBRIDGE: &str = env!("CARGO_BIN_EXE_spellbridge");
const BOT: &str = "spellbridge";
const CHANNEL: &str = "#take";
const TRIALS: usize = 10;
/// How often the probing clients say `!games` while no daemon answers.
const PROBE_EVERY: Duration = Duration::from_millis(250);
/// The longest a takeover may take before the bench gives up.
const TAKEOVER_LIMIT: Duration = Duration::from_secs(60);
/// The longest a daemon may take to start and answer, or one reply.
const LIMIT: Duration = Duration::from_secs(60);
/// How long "nothing more arrives" is watched for at the end.
const QUIET: Duration = Duration::from_secs(3);

fn password(localpart: &str) -> String {
    format!("{localpart}-password")
}

fn config(url: &str, lease: u64, http: u16, irc: u16, synapse: &str, room: &str) -> String {
    format!(
        r#"{head}
[thaum]
schedule = "manual"
[permissions]
game_masters = ["matrix/@mage:localhost"]
[[irc]]
name = "irc"
server = "127.0.0.1"
port = {irc}
tls = false
nick = "{BOT}"
require_account = false
reconnect_delay = "1s"
[irc.flood]
enabled = false
[irc.user_limit]
enabled = false
[[matrix]]
name = "matrix"
homeserver = "{synapse}"
user_id = "@{BOT}:localhost"
access_token = {{ file = "bot-token" }}
store = "matrix-store"
invite_allow = ["*:localhost"]
reconnect_delay = "1s"
[matrix.user_limit]
enabled = false
[[bridge]]
name = "take"
rooms = [{{ network = "irc", room = "{CHANNEL}" }}, {{ network = "matrix", room = "{room}" }}]
speaker_rate = false
"#,
        head = config_head(url, Duration::from_secs(lease), http),
    )
}

fn env_number(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) if !v.is_empty() => v.parse().unwrap_or_else(|_| panic!("{name}={v:?}: write a whole number")),
        _ => default,
    }
}

/// Everything an IRC client received, kept.
struct IrcSeen {
    client: IrcClient,
    seen: Vec<IrcMessage>,
}

impl IrcSeen {
    /// Reads until [`QUIET`] passes with nothing new.
    async fn pump(&mut self) {
        while let Some(m) = self.client.next_message(QUIET).await {
            self.seen.push(m);
        }
    }

    /// Reads until a bot line in the channel containing `needle` arrives after `from`
    /// (an index into `seen`), within `limit`.
    async fn until(&mut self, from: usize, needle: &str, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            if self.seen[from..].iter().any(|m| m.from.starts_with(BOT) && strip(&m.text).contains(needle)) {
                return true;
            }
            match self.client.next_message(deadline.saturating_duration_since(Instant::now())).await {
                Some(m) => self.seen.push(m),
                None => return false,
            }
        }
    }

    fn count(&self, needle: &str) -> usize {
        self.seen.iter().filter(|m| m.from.starts_with(BOT) && strip(&m.text).contains(needle)).count()
    }
}

/// Everything a Matrix client received, kept.
struct MxSeen {
    client: MatrixClient,
    seen: Vec<MxMessage>,
}

impl MxSeen {
    /// Reads until [`QUIET`] passes with nothing new.
    async fn pump(&mut self) {
        while let Some(m) = self.client.next_message(QUIET).await {
            self.seen.push(m);
        }
    }

    async fn until(&mut self, from: usize, needle: &str, limit: Duration) -> bool {
        let bot = format!("@{BOT}:localhost");
        let deadline = Instant::now() + limit;
        loop {
            if self.seen[from..].iter().any(|m| m.sender == bot && m.body.contains(needle)) {
                return true;
            }
            match self.client.next_message(deadline.saturating_duration_since(Instant::now())).await {
                Some(m) => self.seen.push(m),
                None => return false,
            }
        }
    }

    /// How many lines of the bot's messages contain `needle`, as a client shows them: an
    /// edit's new body in place of the message it edits (a Thaum phase's actions are one
    /// Matrix message edited as they come).
    fn count(&self, needle: &str) -> usize {
        let bot = format!("@{BOT}:localhost");
        let mut shown: Vec<(&str, String)> = Vec::new();
        for m in self.seen.iter().filter(|m| m.sender == bot) {
            let edited = m.replaces.as_deref().and_then(|id| shown.iter_mut().find(|(e, _)| *e == id));
            match (edited, &m.new_body) {
                (Some(original), Some(body)) => original.1 = body.clone(),
                _ => shown.push((&m.event_id, m.body.clone())),
            }
        }
        shown.iter().flat_map(|(_, body)| body.lines()).filter(|l| l.contains(needle)).count()
    }
}

/// Says `!games` every [`PROBE_EVERY`] on IRC until the bot answers; when it answered.
async fn probe_irc(who: &mut IrcSeen) -> Option<Instant> {
    let deadline = Instant::now() + TAKEOVER_LIMIT;
    while Instant::now() < deadline {
        let mark = who.seen.len();
        who.client.privmsg(CHANNEL, "!games").await.ok()?;
        if who.until(mark, "Games:", PROBE_EVERY).await {
            return Some(Instant::now());
        }
    }
    None
}

/// The same on Matrix.
async fn probe_matrix(who: &mut MxSeen, room: &str) -> Option<Instant> {
    let deadline = Instant::now() + TAKEOVER_LIMIT;
    while Instant::now() < deadline {
        let mark = who.seen.len();
        who.client.send_text(room, "!games").await.ok()?;
        if who.until(mark, "Games:", PROBE_EVERY).await {
            return Some(Instant::now());
        }
    }
    None
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // `cargo test --benches` runs this with `--test`-like flags; run the figures only for bench.
    if args.iter().any(|a| a == "--test" || a == "--list") {
        return;
    }
    let lease = env_number("SPELLBRIDGE_BENCH_LEASE", 5);
    let trials = env_number("SPELLBRIDGE_BENCH_TRIALS", TRIALS as u64) as usize;
    let servers = Servers::start();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(bench(&servers, lease, trials));
}

async fn bench(servers: &Servers, lease: u64, trials: usize) {
    let Servers { irc, synapse, pg } = servers;
    let bot_token = servers.bot_token(BOT, &password(BOT));
    let (merlin_id, token) =
        synapse.register("mage", &password("mage"), false).unwrap_or_else(|e| panic!("{e}"));
    let mut merlin =
        MatrixClient::from_token(&synapse.base_url(), &merlin_id, &token).unwrap_or_else(|e| panic!("{e}"));
    merlin.set_display_name("Merlin").await.unwrap_or_else(|e| panic!("{e}"));
    let room = merlin
        .create_room("take", &[format!("@{BOT}:localhost")], false)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let mut merlin = MxSeen { client: merlin, seen: Vec::new() };
    let mut alice = IrcClient::connect(irc.port(), "alice").await.unwrap_or_else(|e| panic!("{e}"));
    alice.join(CHANNEL).await.unwrap_or_else(|e| panic!("{e}"));
    let mut alice = IrcSeen { client: alice, seen: Vec::new() };
    let (url, port, base) = (pg.url(), irc.port(), synapse.base_url());
    let mut pair = Pair::new(SPELLBRIDGE, &[("bot-token", &bot_token)], "info", |_, http| {
        config(&url, lease, http, port, &base, &room)
    })
    .unwrap_or_else(|e| panic!("{e}"));
    pair.start(0, Role::Active, LIMIT).await.unwrap_or_else(|e| panic!("{e}"));
    probe_irc(&mut alice).await.unwrap_or_else(|| panic!("the bot never answered on IRC"));
    probe_matrix(&mut merlin, &room).await.unwrap_or_else(|| panic!("the bot never answered on Matrix"));
    pair.start(1, Role::Standby, LIMIT).await.unwrap_or_else(|e| panic!("{e}"));
    let mark = alice.seen.len();
    alice.client.privmsg(CHANNEL, "!new thaum").await.unwrap_or_else(|e| panic!("{e}"));
    assert!(alice.until(mark, "opens a Thaum table", LIMIT).await, "no Thaum table opened");
    let mark = merlin.seen.len();
    merlin.client.send_text(&room, "!join").await.unwrap_or_else(|e| panic!("{e}"));
    assert!(merlin.until(mark, "joins the Thaum table", LIMIT).await, "Merlin could not join");

    let (mut to_irc, mut to_matrix, mut acknowledged) = (Vec::new(), Vec::new(), Vec::new());
    let mut active = 0;
    for trial in 1..=trials {
        // 1. A move from each network, acknowledged.
        let n = acknowledged.len() / 2;
        let line = format!("alice changes alice's coins: {n} → {}", n + 1);
        let mark = alice.seen.len();
        alice.client.privmsg(CHANNEL, "!coins alice +1").await.unwrap_or_else(|e| panic!("{e}"));
        assert!(alice.until(mark, &line, LIMIT).await, "trial {trial}: {line:?} was not answered");
        acknowledged.push(line);
        let line = format!("Merlin changes Merlin's coins: {n} → {}", n + 1);
        let mark = merlin.seen.len();
        merlin.client.send_text(&room, "!coins Merlin +1").await.unwrap_or_else(|e| panic!("{e}"));
        assert!(merlin.until(mark, &line, LIMIT).await, "trial {trial}: {line:?} was not answered");
        acknowledged.push(line);
        // 2. SIGKILL; 3. both networks probed until answered.
        pair.daemon(active).kill().unwrap_or_else(|e| panic!("{e}"));
        let killed = Instant::now();
        let (on_irc, on_matrix) = tokio::join!(probe_irc(&mut alice), probe_matrix(&mut merlin, &room));
        let on_irc =
            on_irc.unwrap_or_else(|| panic!("trial {trial}: no answer on IRC within {TAKEOVER_LIMIT:?}"));
        let on_matrix = on_matrix
            .unwrap_or_else(|| panic!("trial {trial}: no answer on Matrix within {TAKEOVER_LIMIT:?}"));
        to_irc.push(on_irc - killed);
        to_matrix.push(on_matrix - killed);
        eprintln!(
            "takeover bench: trial {trial}: answered on IRC after {:.2} s, on Matrix after {:.2} s",
            (on_irc - killed).as_secs_f64(),
            (on_matrix - killed).as_secs_f64()
        );
        // 4. The killed one comes back as the standby.
        let standby = active;
        active = 1 - active;
        assert_eq!(pair.role(active).await, Role::Active, "trial {trial}: daemon {active} leads");
        pair.start(standby, Role::Standby, LIMIT).await.unwrap_or_else(|e| panic!("{e}"));
    }
    // What is still on its way arrives.
    tokio::join!(alice.pump(), merlin.pump());
    let (mut lost, mut doubled) = (0, 0);
    for line in &acknowledged {
        for (network, seen) in [("IRC", alice.count(line)), ("Matrix", merlin.count(line))] {
            match seen {
                0 => lost += 1,
                1 => continue,
                _ => doubled += 1,
            }
            println!("  {line:?} seen {seen} times on {network}");
            if network == "Matrix" {
                for m in merlin.seen.iter().filter(|m| m.body.contains(line.as_str())) {
                    let lines = m.body.lines().count();
                    println!("    in {} ({lines} lines, edits {:?})", m.event_id, m.replaces);
                }
            }
        }
    }
    to_irc.sort();
    to_matrix.sort();
    println!(
        "takeover after SIGKILL of the active daemon, lease {lease} s, {trials} trials, probes every {} ms:",
        PROBE_EVERY.as_millis()
    );
    for (network, times) in [("IRC", &to_irc), ("Matrix", &to_matrix)] {
        println!(
            "  to the first answered command on {network}: p50 {:.2} s, max {:.2} s (min {:.2} s)",
            ms(percentile(times, 0.5)) / 1e3,
            ms(*times.last().expect("a trial")) / 1e3,
            ms(times[0]) / 1e3,
        );
    }
    println!(
        "  acknowledged moves: {} ({} lines looked for on both networks): {lost} lost, {doubled} doubled",
        acknowledged.len(),
        acknowledged.len() * 2
    );
    let worst = to_irc[to_irc.len() / 2].max(to_matrix[to_matrix.len() / 2]);
    let met = worst <= Duration::from_secs(10) && lost == 0 && doubled == 0;
    println!(
        "  goal (p50 ≤ 10 s with a 5 s lease, 0 lost, 0 doubled): {}",
        if met { "met" } else { "MISSED" }
    );
}
