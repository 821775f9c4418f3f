//! Two `spellbridge run` daemons on one PostgreSQL with the same config (issue 34), as
//! child processes against a real InspIRCd and a real PostgreSQL, each with its own http
//! port and data dir: the second stands by (`/healthz` says so, `/leader` is 503); when
//! the active one is killed, the standby takes over within the lease and a few seconds
//! and answers `!coins` with the right total under the configured nick, saying nothing
//! twice; when the active one is paused (SIGSTOP) past its lease, the standby takes over
//! and the old one, resumed, stands down without sending anything to the channel.

use std::process::Command;
use std::time::{Duration, Instant};

use spellbridge_adapters::irc::format::strip;
use spellbridge_tests::harness::daemon::Daemon;
use spellbridge_tests::harness::endpoint;
use spellbridge_tests::harness::inspircd::InspIrcd;
use spellbridge_tests::harness::irc_client::{IrcClient, Message};
use spellbridge_tests::harness::postgres::Postgres;

const BIN: &str = env!("CARGO_BIN_EXE_spellbridge");
const BOT: &str = "spellbridge";
const ROOM: &str = "#standby";
/// `[store] lease`: short, so the tests wait little.
const LEASE: Duration = Duration::from_secs(3);

/// Both daemons' config: the same but for the http port. With `flood`, IRC flood control
/// holds the bot's lines back (one, then one every 2 s), as on a real network.
fn config(irc: u16, url: &str, http: u16, flood: bool) -> String {
    let flood = if flood { "enabled = true\nburst = 1\ninterval = \"2s\"" } else { "enabled = false" };
    format!(
        "prefix = \"!\"\n[store]\nurl = \"{url}\"\nlease = \"{}s\"\n[http]\nlisten = \"127.0.0.1:{http}\"\n\
         [thaum]\nschedule = \"manual\"\n\
         [[irc]]\nname = \"test\"\nserver = \"127.0.0.1\"\nport = {irc}\ntls = false\nnick = \"{BOT}\"\n\
         channels = [\"{ROOM}\"]\nrequire_account = false\n\
         [irc.flood]\n{flood}\n[irc.user_limit]\nenabled = false\n",
        LEASE.as_secs()
    )
}

/// One daemon and its http port.
struct Node {
    daemon: Daemon,
    http: u16,
}

impl Node {
    fn start(irc: u16, pg: &Postgres, flood: bool) -> Node {
        let http = endpoint::free_port().unwrap_or_else(|e| panic!("{e}"));
        // The standby's following of the journal is logged at debug.
        let daemon =
            Daemon::launch(BIN, &config(irc, &pg.url(), http, flood), "info,spellbridge::leader=debug", &[])
                .unwrap_or_else(|e| panic!("{e}"));
        Node { daemon, http }
    }

    /// Waits (bounded) until `GET path` answers `status` with a body containing `want`.
    async fn wait_for(&self, path: &str, status: u16, want: &str, limit: Duration) -> String {
        endpoint::wait_for(self.http, path, limit, |s, body| s == status && body.contains(want))
            .await
            .map(|(_, body)| body)
            .unwrap_or_else(|e| panic!("{e}\nthe daemon's log:\n{}", self.daemon.log_tail(60)))
    }

    /// Sends `signal` (`STOP`, `CONT`) to the daemon's process.
    fn signal(&self, signal: &str) {
        let pid = self.daemon.pid().unwrap_or_else(|| panic!("the daemon is not running"));
        let status = Command::new("kill")
            .args([&format!("-{signal}"), &pid.to_string()])
            .status()
            .unwrap_or_else(|e| panic!("kill -{signal}: {e}"));
        assert!(status.success(), "kill -{signal} {pid} failed");
    }
}

/// Every PRIVMSG the game master's client saw in the channel, kept as the transcript.
struct Transcript {
    gm: IrcClient,
    lines: Vec<Message>,
}

impl Transcript {
    async fn join(irc: u16) -> Transcript {
        let mut gm = IrcClient::connect(irc, "gm").await.unwrap_or_else(|e| panic!("gm connects: {e}"));
        gm.join(ROOM).await.unwrap_or_else(|e| panic!("gm joins: {e}"));
        Transcript { gm, lines: Vec::new() }
    }

    /// Waits (bounded) until `nick` is in the channel.
    async fn wait_for_member(&mut self, nick: &str, limit: Duration) {
        self.wait_for_members(nick, None, limit).await;
    }

    /// Waits (bounded) until `nick` is in the channel, and `gone` (if any) is not.
    async fn wait_for_members(&mut self, nick: &str, gone: Option<&str>, limit: Duration) {
        let deadline = Instant::now() + limit;
        loop {
            let names = self.gm.names(ROOM).await.unwrap_or_default();
            let member = |nick: &str| names.iter().any(|n| n.trim_start_matches(['@', '+', '%']) == nick);
            if member(nick) && !gone.is_some_and(member) {
                return;
            }
            assert!(Instant::now() < deadline, "{nick} never joined {ROOM}; members: {names:?}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Says `text` once and waits (bounded) for a line from anyone but the game master
    /// containing `want`; that line.
    async fn ask(&mut self, text: &str, want: &str) -> Message {
        self.gm.privmsg(ROOM, text).await.unwrap_or_else(|e| panic!("send: {e}"));
        self.heard(text, want).await
    }

    /// Waits (bounded) for a line from anyone but the game master containing `want`, the
    /// answer to `text`; that line.
    async fn heard(&mut self, text: &str, want: &str) -> Message {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Some(message) = self.gm.next_message(left).await else {
                panic!("no answer with {want:?} to {text:?}; the channel so far:\n{}", self.shown());
            };
            self.lines.push(message.clone());
            if message.from != "gm" && strip(&message.text).contains(want) {
                return message;
            }
        }
    }

    /// Whatever is said in the channel within `window`.
    async fn listen(&mut self, window: Duration) -> Vec<Message> {
        let deadline = Instant::now() + window;
        let mut heard = Vec::new();
        while let Some(message) =
            self.gm.next_message(deadline.saturating_duration_since(Instant::now())).await
        {
            heard.push(message.clone());
            self.lines.push(message);
        }
        heard
    }

    fn shown(&self) -> String {
        self.lines.iter().map(|m| format!("  {m}")).collect::<Vec<_>>().join("\n")
    }

    /// Panics when a bot said one line twice.
    fn assert_nothing_twice(&self) {
        let said: Vec<String> =
            self.lines.iter().filter(|m| m.from != "gm").map(|m| strip(&m.text)).collect();
        for (i, line) in said.iter().enumerate() {
            assert!(!said[..i].contains(line), "said twice: {line:?}; the channel:\n{}", self.shown());
        }
    }
}

/// The active daemon `a` (leading, `/leader` 200) and the standby `b`, and a Thaum table
/// with 3 coins answered by `a`.
async fn two_daemons_and_a_table(irc: &InspIrcd, pg: &Postgres, flood: bool) -> (Node, Node, Transcript) {
    let a = Node::start(irc.port(), pg, flood);
    a.wait_for("/leader", 200, "active", Duration::from_secs(30)).await;
    let b = Node::start(irc.port(), pg, flood);
    let health = b.wait_for("/healthz", 200, "\"role\":\"standby\"", Duration::from_secs(30)).await;
    assert!(!health.contains("\"test\""), "a standby connects to no network: {health}");
    b.wait_for("/leader", 503, "standby", Duration::from_secs(5)).await;
    a.wait_for("/healthz", 200, "\"role\":\"active\"", Duration::from_secs(30)).await;
    b.daemon.wait_for_log("standing by", Duration::from_secs(10)).unwrap_or_else(|e| panic!("{e}"));

    let mut channel = Transcript::join(irc.port()).await;
    channel.wait_for_member(BOT, Duration::from_secs(30)).await;
    channel.ask("!new thaum", "opens a Thaum table").await;
    let answer = channel.ask("!coins gm +3", "→ 3.").await;
    assert_eq!(answer.from, BOT, "the active daemon answers");
    // The standby follows the journal: it has read the table's rows.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !b.daemon.log().contains("the standby followed the journal") {
        assert!(Instant::now() < deadline, "the standby never read the journal:\n{}", b.daemon.log());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The answers are marked sent in the outbox before the active one goes.
    tokio::time::sleep(Duration::from_millis(500)).await;
    (a, b, channel)
}

fn started(what: &str) -> (InspIrcd, Postgres) {
    let irc = InspIrcd::start().unwrap_or_else(|e| panic!("InspIRCd is needed for {what}: {e}"));
    let pg = Postgres::start_new().unwrap_or_else(|e| panic!("PostgreSQL is needed for {what}: {e}"));
    (irc, pg)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_daemon_stands_by_and_only_the_active_one_is_the_leader() {
    let (irc, pg) = started("the standby test");
    let a = Node::start(irc.port(), &pg, false);
    a.wait_for("/leader", 200, "active", Duration::from_secs(30)).await;
    let b = Node::start(irc.port(), &pg, false);
    let health = b.wait_for("/healthz", 200, "\"role\":\"standby\"", Duration::from_secs(30)).await;
    assert!(health.contains("\"status\":\"ok\""), "a standby is well: {health}");
    b.wait_for("/leader", 503, "standby", Duration::from_secs(5)).await;
    a.wait_for("/healthz", 200, "\"role\":\"active\"", Duration::from_secs(30)).await;
    a.wait_for("/leader", 200, "active", Duration::from_secs(5)).await;
    // `/healthz` says standby from the start on PostgreSQL; the log line follows the lease.
    b.daemon.wait_for_log("standing by", Duration::from_secs(10)).unwrap_or_else(|e| panic!("{e}"));
    let log = b.daemon.log();
    assert!(!log.contains(&pg.url()), "the password is never shown: {log}");
    // A standby connects to the database only: the channel has one bot.
    let mut channel = Transcript::join(irc.port()).await;
    channel.wait_for_member(BOT, Duration::from_secs(30)).await;
    let names = channel.gm.names(ROOM).await.unwrap_or_default();
    assert_eq!(names.len(), 2, "gm and the active daemon only: {names:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_standby_takes_over_when_the_active_daemon_is_killed_and_says_nothing_twice() {
    let (irc, pg) = started("the takeover test");
    let (mut a, b, mut channel) = two_daemons_and_a_table(&irc, &pg, false).await;

    a.daemon.kill().unwrap_or_else(|e| panic!("{e}"));
    let killed = Instant::now();
    b.wait_for("/leader", 200, "active", LEASE + Duration::from_secs(10)).await;
    let took_over = killed.elapsed();
    assert!(took_over < LEASE + Duration::from_secs(5), "took {took_over:?}");
    b.wait_for("/healthz", 200, "\"role\":\"active\"", Duration::from_secs(5)).await;
    assert!(b.daemon.log().contains("this standby takes over"), "{}", b.daemon.log());

    // The killed daemon's connection is gone: the standby has the configured nick.
    channel.wait_for_member(BOT, Duration::from_secs(30)).await;
    let answer = channel.ask("!coins gm +2", "→ 5.").await;
    assert_eq!(answer.from, BOT, "under the configured nick: {answer}");
    assert!(strip(&answer.text).contains('5'), "3 coins from before plus 2: {answer}");
    assert!(killed.elapsed() < LEASE + Duration::from_secs(30), "answered after {:?}", killed.elapsed());
    channel.listen(Duration::from_secs(3)).await;
    channel.assert_nothing_twice();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_leader_resumed_after_a_takeover_stands_down_and_sends_nothing() {
    let (irc, pg) = started("the paused-leader test");
    let (mut a, b, mut channel) = two_daemons_and_a_table(&irc, &pg, false).await;

    a.signal("STOP");
    b.wait_for("/leader", 200, "active", LEASE + Duration::from_secs(10)).await;
    // The paused daemon still holds the nick (its connection is open): the standby plays
    // under the first alternate one.
    let standby_nick = format!("{BOT}_");
    channel.wait_for_member(&standby_nick, Duration::from_secs(30)).await;
    let answer = channel.ask("!coins gm +2", "→ 5.").await;
    assert_eq!(answer.from, standby_nick, "{answer}");
    // Said while the old leader is paused: its socket holds this line for when it resumes.
    channel.ask("!coins gm +1", "→ 6.").await;

    a.signal("CONT");
    let deadline = Instant::now() + Duration::from_secs(15);
    while a.daemon.is_running() {
        assert!(Instant::now() < deadline, "the resumed daemon kept running:\n{}", a.daemon.log_tail(40));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let heard = channel.listen(Duration::from_secs(3)).await;
    assert!(heard.is_empty(), "the resumed daemon said something: {heard:?}");
    // `spellbridge: …` is main's last word on an error: it exits non-zero, for its
    // supervisor to start it again as a standby.
    let log = a.daemon.log();
    assert!(log.contains("spellbridge: this daemon's lease on PostgreSQL is gone"), "{log}");

    // The new leader takes the configured nick back once the old connection is gone (the
    // old daemon has exited: the nick is the new leader's), and the old one's lines were
    // not taken: the total goes on from 6.
    channel.wait_for_members(BOT, Some(&standby_nick), Duration::from_secs(30)).await;
    let answer = channel.ask("!coins gm +1", "→ 7.").await;
    assert_eq!(answer.from, BOT, "{answer}");
    channel.assert_nothing_twice();
    let rows = pg.query("SELECT count(*) FROM journal").unwrap_or_else(|e| panic!("{e}"));
    assert!(rows.trim().parse::<u32>().unwrap_or(0) >= 4, "{rows}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_leader_never_sends_the_lines_flood_control_held_back() {
    let (irc, pg) = started("the held-lines test");
    let (mut a, b, mut channel) = two_daemons_and_a_table(&irc, &pg, true).await;
    // Three answers at once: flood control lets the first go and holds the others in the
    // active daemon's IRC connection, 2 s apart.
    for _ in 0..3 {
        channel.gm.privmsg(ROOM, "!coins gm +1").await.unwrap_or_else(|e| panic!("send: {e}"));
    }
    let first = channel.heard("!coins gm +1", "→ 4.").await;
    assert_eq!(first.from, BOT);
    // Its send is reported and marked in the outbox; the next two still wait.
    tokio::time::sleep(Duration::from_millis(300)).await;
    a.signal("STOP");
    b.wait_for("/leader", 200, "active", LEASE + Duration::from_secs(10)).await;
    // The new leader sends what the outbox holds unsent: the two held answers, once each.
    let standby_nick = format!("{BOT}_");
    let answer = channel.heard("!coins gm +1", "→ 6.").await;
    assert_eq!(answer.from, standby_nick, "{answer}\n{}", channel.shown());

    a.signal("CONT");
    let deadline = Instant::now() + Duration::from_secs(15);
    while a.daemon.is_running() {
        assert!(Instant::now() < deadline, "the resumed daemon kept running:\n{}", a.daemon.log_tail(40));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let heard = channel.listen(Duration::from_secs(4)).await;
    assert!(heard.iter().all(|m| m.from != BOT), "the resumed daemon sent what it held: {heard:?}");
    channel.assert_nothing_twice();
    for total in ["→ 4.", "→ 5.", "→ 6."] {
        let said = channel.lines.iter().filter(|m| strip(&m.text).contains(total)).count();
        assert_eq!(said, 1, "{total} said {said} times:\n{}", channel.shown());
    }
}
