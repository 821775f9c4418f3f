//! `spellbridge run` logging in to a real network and trusting its TLS (issue 14's
//! tests), against InspIRCd with Atheme services linked to it: the bot logs in with SASL
//! PLAIN, and with EXTERNAL (CertFP) over TLS with its client certificate, each seen by
//! another client's WHOIS (numeric 330); it asks for SCRAM-SHA-256, which it uses where
//! the services offer it; with a wrong password it does not play logged out, `/healthz`
//! says "not logged in" and it retries with backoff; after a services outage it logs in
//! again; with `require_account` it knows players' accounts with and without the
//! `account-tag` capability; and it trusts a server certificate through `tls_ca` or
//! `tls_pin` and refuses an expired one or one for another name, saying which.
//!
//! These need InspIRCd and Atheme (`tests/scripts/install-inspircd.sh`,
//! `tests/scripts/install-atheme.sh`); without them they fail with the harness's message,
//! they never skip.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use base64::Engine as _;
use sha2::{Digest as _, Sha256};
use spellbridge_adapters::irc::format::strip;
use spellbridge_tests::harness::HarnessError;
use spellbridge_tests::harness::atheme::Atheme;
use spellbridge_tests::harness::certs::{self, Pem, TestCa, Validity};
use spellbridge_tests::harness::daemon::Daemon;
use spellbridge_tests::harness::endpoint;
use spellbridge_tests::harness::inspircd::{InspIrcd, Options};
use spellbridge_tests::harness::irc_client::{self, IrcClient};
use spellbridge_tests::harness::irc_player::Bot;

const BIN: &str = env!("CARGO_BIN_EXE_spellbridge");
const BOT: &str = "spellbridge";
const ROOM: &str = "#magic";

/// The bot's services account, and its password.
const ACCOUNT: &str = "spellbot";
const PASSWORD: &str = "correct-horse-7f3a";

/// How long the bot may take to connect, log in (or fail to) and say so.
const LOGIN_WAIT: Duration = Duration::from_secs(30);

/// How long a WHOIS may wait for a login the server has not shown yet.
const WHOIS_WAIT: Duration = Duration::from_secs(5);

/// `[irc.sasl]` logging in as [`ACCOUNT`] with the password in the file `sasl-password`,
/// trying `mechanisms` (the bot's default order when empty).
fn sasl(mechanisms: &[&str]) -> String {
    let mut table =
        format!("[irc.sasl]\naccount = \"{ACCOUNT}\"\npassword = {{ file = \"sasl-password\" }}\n");
    if !mechanisms.is_empty() {
        let list: Vec<String> = mechanisms.iter().map(|m| format!("\"{m}\"")).collect();
        table.push_str(&format!("mechanisms = [{}]\n", list.join(", ")));
    }
    table
}

/// One `[[irc]]` network `name` on 127.0.0.1:`port`, the bot as `nick` in [`ROOM`],
/// reconnecting after 1 s at first; `extra` (its own keys, then sub-tables such as
/// `[irc.sasl]`) goes into it. Flood control and the command limit are off: these tests
/// are about logins, not pace.
fn irc(name: &str, port: u16, nick: &str, extra: &str) -> String {
    format!(
        "[[irc]]\nname = \"{name}\"\nserver = \"127.0.0.1\"\nport = {port}\nnick = \"{nick}\"\n\
         channels = [\"{ROOM}\"]\nreconnect_delay = \"1s\"\n{extra}\n\
         [irc.flood]\nenabled = false\n[irc.user_limit]\nenabled = false\n"
    )
}

/// InspIRCd set up as `options` say, with Atheme linked to it.
fn services(options: Options) -> (InspIrcd, Atheme) {
    tokio::task::block_in_place(|| {
        let ircd = InspIrcd::start_with(Options { services: true, ..options })
            .unwrap_or_else(|e| panic!("InspIRCd is needed for this test: {e}"));
        let atheme = Atheme::start(&ircd)
            .unwrap_or_else(|e| panic!("Atheme is needed for this test: {e}\n{}", ircd.output_tail(20)));
        (ircd, atheme)
    })
}

/// `spellbridge run` with its `/healthz` on a free port.
struct Spellbridge {
    daemon: Daemon,
    http: u16,
}

impl Spellbridge {
    /// Starts the daemon on `networks` (`[[irc]]` tables), with `files` beside its config.
    fn start(networks: &str, files: &[(&str, &str)]) -> Spellbridge {
        let http = endpoint::free_port().unwrap_or_else(|e| panic!("{e}"));
        let config = format!(
            "prefix = \"!\"\n[store]\npath = \"games.db\"\n[http]\nlisten = \"127.0.0.1:{http}\"\n{networks}"
        );
        let daemon = Daemon::launch(BIN, &config, "info,spellbridge_adapters=debug", files)
            .unwrap_or_else(|e| panic!("{e}"));
        Spellbridge { daemon, http }
    }

    /// Polls `/healthz` (bounded by `limit`) until `done` holds for its status and JSON.
    async fn health(
        &self,
        limit: Duration,
        done: impl Fn(u16, &serde_json::Value) -> bool,
    ) -> serde_json::Value {
        let (_, body) = endpoint::wait_for(self.http, "/healthz", limit, |status, body| {
            serde_json::from_str(body).is_ok_and(|json| done(status, &json))
        })
        .await
        .unwrap_or_else(|e| panic!("{e}\ndaemon log:\n{}", self.daemon.log_tail(60)));
        serde_json::from_str(&body).expect("/healthz is JSON")
    }

    /// The log lines about `network` (its `network=` field) that contain `needle`.
    fn lines(&self, network: &str, needle: &str) -> Vec<String> {
        let field = format!("network={network}");
        self.daemon
            .log()
            .lines()
            .filter(|line| line.contains(needle) && line.split_whitespace().any(|word| word == field))
            .map(str::to_owned)
            .collect()
    }

    /// Waits (bounded by `limit`) until at least `count` log lines about `network`
    /// contain `needle`; those lines.
    async fn wait_lines(&self, network: &str, needle: &str, count: usize, limit: Duration) -> Vec<String> {
        let deadline = Instant::now() + limit;
        loop {
            let lines = self.lines(network, needle);
            if lines.len() >= count {
                return lines;
            }
            assert!(
                Instant::now() < deadline,
                "{count} log lines about {network} saying {needle:?} within {limit:?}; the log ends:\n{}",
                self.daemon.log_tail(60)
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// The bot as the players in [`ROOM`] see it.
    fn bot(&self) -> Bot<'_> {
        Bot { nick: BOT, room: ROOM, daemon: &self.daemon }
    }
}

/// The `state` `/healthz` gives `network` ("up", "down", "not logged in").
fn state<'a>(health: &'a serde_json::Value, network: &str) -> &'a str {
    health["networks"][network]["state"].as_str().unwrap_or("(not listed)")
}

/// The services account a watcher's WHOIS shows for `nick` on the server on `port`.
async fn account_of(port: u16, nick: &str) -> Option<String> {
    // A fresh nick each time: the last watcher's QUIT may not have freed its nick yet.
    static WATCHERS: AtomicU32 = AtomicU32::new(0);
    let name = format!("watcher{}", WATCHERS.fetch_add(1, Ordering::Relaxed));
    let mut watcher = IrcClient::connect(port, &name).await.unwrap_or_else(|e| panic!("{e}"));
    let account = watcher.wait_for_account(nick, WHOIS_WAIT).await.unwrap_or_else(|e| panic!("{e}"));
    let _ = watcher.quit().await;
    account
}

/// A client as `nick`, logged in to the account of the same name with NickServ IDENTIFY
/// (its own WHOIS shows the login).
async fn identified(port: u16, nick: &str, password: &str) -> IrcClient {
    let mut client = IrcClient::connect(port, nick).await.unwrap_or_else(|e| panic!("{nick} connects: {e}"));
    client.privmsg("NickServ", &format!("IDENTIFY {nick} {password}")).await.expect("send");
    let account = client.wait_for_account(nick, WHOIS_WAIT).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(account.as_deref(), Some(nick), "{nick} is logged in after IDENTIFY");
    client
}

/// The certificate made, or the test fails saying why.
fn make(made: Result<Pem, HarnessError>) -> Pem {
    made.unwrap_or_else(|e| panic!("{e}"))
}

/// `tls_pin` for a certificate, as a user computes it: `sha256/` and the base64 of the
/// SHA-256 of its DER.
fn pin(pem: &Pem) -> String {
    format!("sha256/{}", base64::engine::general_purpose::STANDARD.encode(Sha256::digest(&pem.der)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bot_logs_in_with_sasl_plain() {
    let (ircd, atheme) = services(Options::default());
    atheme.register(ACCOUNT, PASSWORD).await.unwrap_or_else(|e| panic!("{e}"));
    // The default order: SCRAM-SHA-256 first, which this Atheme does not offer, then PLAIN.
    let bot = Spellbridge::start(
        &irc("test", ircd.port(), BOT, &format!("tls = false\nrequire_account = false\n{}", sasl(&[]))),
        &[("sasl-password", PASSWORD)],
    );
    let health = bot.health(LOGIN_WAIT, |status, _| status == 200).await;
    assert_eq!(state(&health, "test"), "up", "{health}");
    assert_eq!(
        account_of(ircd.port(), BOT).await.as_deref(),
        Some(ACCOUNT),
        "WHOIS 330 names the bot's account"
    );
    assert!(!bot.lines("test", "logged in with SASL").is_empty(), "{}", bot.daemon.log());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bot_logs_in_with_sasl_external_and_its_client_certificate_over_tls() {
    let ca = TestCa::new("spellbridge test CA").unwrap_or_else(|e| panic!("{e}"));
    let server = ca.sign(&["127.0.0.1"], Validity::Good).unwrap_or_else(|e| panic!("{e}"));
    let (ircd, atheme) = services(Options { tls: vec![server], ..Options::default() });
    let client = certs::self_signed(&[ACCOUNT], Validity::Good).unwrap_or_else(|e| panic!("{e}"));
    atheme
        .register_with_cert(ACCOUNT, "never-sent-2b9e", &client.fingerprint())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let port = ircd.tls_port(0).expect("a TLS port");
    let bot = Spellbridge::start(
        &irc(
            "test",
            port,
            BOT,
            &format!(
                "tls = true\ntls_ca = \"ca.pem\"\nclient_cert = \"client.pem\"\nclient_key = \"client.key\"\n\
                 require_account = false\n[irc.sasl]\naccount = \"{ACCOUNT}\"\nmechanisms = [\"EXTERNAL\"]\n"
            ),
        ),
        &[("ca.pem", &ca.pem.cert), ("client.pem", &client.cert), ("client.key", &client.key)],
    );
    let health = bot.health(LOGIN_WAIT, |status, _| status == 200).await;
    assert_eq!(state(&health, "test"), "up", "{health}");
    assert_eq!(
        account_of(ircd.port(), BOT).await.as_deref(),
        Some(ACCOUNT),
        "WHOIS 330 names the account the certificate belongs to"
    );
    let registered = bot.lines("test", "registered on IRC");
    assert!(registered.iter().all(|l| l.contains("tls=true")), "{registered:?}");
}

/// SCRAM-SHA-256 where the services offer it. Debian 12's Atheme 7.2 has no SCRAM module
/// (it offers PLAIN and EXTERNAL): then a bot told to use SCRAM-SHA-256 alone must neither
/// fall back to another mechanism nor play logged out, and its log says what the server
/// offers. (The fake-server tests check SCRAM itself with RFC 7677's test vector.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scram_sha_256_logs_in_where_offered_and_nothing_else_stands_in_for_it() {
    let (ircd, atheme) = services(Options::default());
    atheme.register(ACCOUNT, PASSWORD).await.unwrap_or_else(|e| panic!("{e}"));
    let caps = irc_client::offered_caps(ircd.port()).await.unwrap_or_else(|e| panic!("{e}"));
    let offered = caps
        .split(' ')
        .find_map(|cap| cap.strip_prefix("sasl="))
        .unwrap_or_else(|| panic!("the server lists sasl=… once services link: {caps}"))
        .to_owned();
    let scram = offered.split(',').any(|m| m == "SCRAM-SHA-256");
    eprintln!(
        "Atheme offers SASL {offered}; SCRAM-SHA-256 {}",
        if scram { "is among them" } else { "is not" }
    );
    let bot = Spellbridge::start(
        &irc(
            "test",
            ircd.port(),
            BOT,
            &format!("tls = false\nrequire_account = false\n{}", sasl(&["SCRAM-SHA-256"])),
        ),
        &[("sasl-password", PASSWORD)],
    );
    if scram {
        bot.health(LOGIN_WAIT, |status, _| status == 200).await;
        assert_eq!(account_of(ircd.port(), BOT).await.as_deref(), Some(ACCOUNT), "logged in with SCRAM");
        return;
    }
    let health =
        bot.health(LOGIN_WAIT, |status, h| status == 503 && state(h, "test") == "not logged in").await;
    assert_eq!(health["status"], "unhealthy", "{health}");
    let failed = bot.wait_lines("test", "not logged in", 1, LOGIN_WAIT).await;
    assert!(
        failed[0].contains("no SASL mechanism left") && failed[0].contains(&offered.replace(',', ", ")),
        "the log says what the server offers: {failed:?}"
    );
    let mut watcher = IrcClient::connect(ircd.port(), "watcher").await.unwrap_or_else(|e| panic!("{e}"));
    assert!(watcher.whois_account(BOT).await.is_err(), "the bot is not on the network logged out");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_wrong_password_the_bot_stays_off_says_why_and_retries_with_backoff() {
    let (ircd, atheme) = services(Options::default());
    atheme.register(ACCOUNT, PASSWORD).await.unwrap_or_else(|e| panic!("{e}"));
    // `[irc.sasl] required` is left at its default (true).
    let bot = Spellbridge::start(
        &irc("test", ircd.port(), BOT, &format!("tls = false\nrequire_account = false\n{}", sasl(&[]))),
        &[("sasl-password", "not-the-password")],
    );
    let health =
        bot.health(LOGIN_WAIT, |status, h| status == 503 && state(h, "test") == "not logged in").await;
    assert_eq!(health["status"], "unhealthy", "{health}");
    assert_eq!(health["down"], serde_json::json!(["test"]), "{health}");
    // Every attempt says why in the log, and the next one comes after a backoff.
    let failed = bot.wait_lines("test", "disconnecting to try again", 2, LOGIN_WAIT).await;
    for line in &failed {
        assert!(line.contains("PLAIN") && line.contains("authentication failed"), "the reason: {line}");
    }
    let waits = bot.lines("test", "reconnecting to IRC");
    assert!(!waits.is_empty() && waits.iter().all(|l| l.contains("delay_ms=")), "{waits:?}");
    // It never played logged out: it did not even finish registering.
    let mut watcher = IrcClient::connect(ircd.port(), "watcher").await.unwrap_or_else(|e| panic!("{e}"));
    assert!(watcher.whois_account(BOT).await.is_err(), "the bot is not on the network logged out");
    let health = bot.health(LOGIN_WAIT, |status, _| status == 503).await;
    assert_eq!(state(&health, "test"), "not logged in", "{health}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_services_outage_the_bot_logs_in_again() {
    let (mut ircd, mut atheme) = services(Options::default());
    atheme.register(ACCOUNT, PASSWORD).await.unwrap_or_else(|e| panic!("{e}"));
    let bot = Spellbridge::start(
        &irc("test", ircd.port(), BOT, &format!("tls = false\nrequire_account = false\n{}", sasl(&[]))),
        &[("sasl-password", PASSWORD)],
    );
    bot.health(LOGIN_WAIT, |status, _| status == 200).await;
    assert_eq!(account_of(ircd.port(), BOT).await.as_deref(), Some(ACCOUNT));

    // Services go away, and the server restarts while they are away: the bot comes back
    // to a server that offers no SASL.
    tokio::task::block_in_place(|| {
        atheme.stop().unwrap_or_else(|e| panic!("{e}"));
        ircd.restart().unwrap_or_else(|e| panic!("{e}"));
    });
    bot.health(LOGIN_WAIT, |status, h| status == 503 && state(h, "test") == "not logged in").await;
    bot.wait_lines("test", "does not offer SASL now", 1, LOGIN_WAIT).await;

    let back = Instant::now();
    tokio::task::block_in_place(|| atheme.restart()).unwrap_or_else(|e| panic!("{e}"));
    // The backoff starts at 1 s and doubles; the outage was a few attempts long.
    bot.health(Duration::from_secs(60), |status, _| status == 200).await;
    eprintln!("the bot was logged in again {:?} after services came back", back.elapsed());
    assert_eq!(account_of(ircd.port(), BOT).await.as_deref(), Some(ACCOUNT), "WHOIS 330 again");
    assert!(bot.lines("test", "logged in with SASL").len() >= 2, "{}", bot.daemon.log_tail(60));
}

/// The refusal a player without an account gets.
const HINT: &str = "NickServ IDENTIFY";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn require_account_with_account_tag_takes_logged_in_players_and_hints_the_others() {
    let (ircd, atheme) = services(Options::default());
    let caps = irc_client::offered_caps(ircd.port()).await.unwrap_or_else(|e| panic!("{e}"));
    assert!(caps.split(' ').any(|c| c == "account-tag"), "the server offers account-tag: {caps}");
    atheme.register("alice", "wonderland").await.unwrap_or_else(|e| panic!("{e}"));
    let daemon =
        Spellbridge::start(&irc("test", ircd.port(), BOT, "tls = false\nrequire_account = true\n"), &[]);
    let bot = daemon.bot();
    let mut alice = identified(ircd.port(), "alice", "wonderland").await;
    alice.join(ROOM).await.expect("alice joins");
    bot.wait_until_answering(&mut alice).await;
    let mut bob = bot.player(ircd.port(), "bob").await;
    bob.privmsg(ROOM, "!games").await.expect("send");
    let hint = bot.expect_said(&mut bob, HINT).await;
    assert_eq!(hint.target, "bob", "the hint goes to bob alone: {hint}");
    alice.privmsg(ROOM, "!games").await.expect("send");
    bot.expect(&mut alice, "Games:").await;
}

/// Without `account-tag` the bot learns accounts from WHOX (carol, logged in and in the
/// room before it came), `extended-join` (dave, who logs in and then joins) and
/// `account-notify` (alice, who logs in while in the room).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn require_account_without_account_tag_learns_accounts_from_whox_joins_and_notifies() {
    let (ircd, atheme) = services(Options { account_tag: false, ..Options::default() });
    let caps = irc_client::offered_caps(ircd.port()).await.unwrap_or_else(|e| panic!("{e}"));
    let listed = |name: &str| caps.split(' ').any(|c| c == name);
    assert!(!listed("account-tag"), "the server does not offer account-tag: {caps}");
    assert!(listed("account-notify") && listed("extended-join"), "{caps}");
    for nick in ["alice", "carol", "dave"] {
        atheme.register(nick, "wonderland").await.unwrap_or_else(|e| panic!("{e}"));
    }
    let mut carol = identified(ircd.port(), "carol", "wonderland").await;
    carol.join(ROOM).await.expect("carol joins");

    let daemon =
        Spellbridge::start(&irc("test", ircd.port(), BOT, "tls = false\nrequire_account = true\n"), &[]);
    let bot = daemon.bot();
    bot.wait_until_answering(&mut carol).await;

    let mut dave = identified(ircd.port(), "dave", "wonderland").await;
    dave.join(ROOM).await.expect("dave joins");
    dave.privmsg(ROOM, "!games").await.expect("send");
    bot.expect(&mut dave, "Games:").await;

    let mut alice = bot.player(ircd.port(), "alice").await;
    alice.privmsg(ROOM, "!games").await.expect("send");
    bot.expect_said(&mut alice, HINT).await;
    alice.privmsg("NickServ", "IDENTIFY alice wonderland").await.expect("send");
    let account = alice.wait_for_account("alice", WHOIS_WAIT).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(account.as_deref(), Some("alice"));
    alice.privmsg(ROOM, "!games").await.expect("send");
    bot.expect(&mut alice, "Games:").await;
}

/// Issue 31, item 1: with `require_account` on a network with `account-tag` (so the bot
/// sends no `WHO #channel` on joining), a member who was in the channel before the bot and
/// never spoke has no account the bot knows. Named in `!duel`, they are looked up with
/// WHOX (`WHO dave %tna,152`): the challenger is told the bot is asking, and named again
/// they are challenged as their account; one who is not logged in is then told to log in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn require_account_looks_up_a_silent_members_account_with_whox_when_named() {
    let (ircd, atheme) = services(Options::default());
    let caps = irc_client::offered_caps(ircd.port()).await.unwrap_or_else(|e| panic!("{e}"));
    assert!(caps.split(' ').any(|c| c == "account-tag"), "the server offers account-tag: {caps}");
    for nick in ["alice", "dave"] {
        atheme.register(nick, "wonderland").await.unwrap_or_else(|e| panic!("{e}"));
    }
    // dave (logged in) and erin (not) are in the channel before the bot, and stay silent.
    let mut dave = identified(ircd.port(), "dave", "wonderland").await;
    dave.join(ROOM).await.expect("dave joins");
    let mut erin = IrcClient::connect(ircd.port(), "erin").await.unwrap_or_else(|e| panic!("{e}"));
    erin.join(ROOM).await.expect("erin joins");
    let daemon =
        Spellbridge::start(&irc("test", ircd.port(), BOT, "tls = false\nrequire_account = true\n"), &[]);
    let bot = daemon.bot();
    let mut alice = identified(ircd.port(), "alice", "wonderland").await;
    alice.join(ROOM).await.expect("alice joins");
    bot.wait_until_answering(&mut alice).await;

    // The bot does not know dave's account yet: it asks the server, and says so.
    alice.privmsg(ROOM, "!duel dave").await.expect("send");
    bot.expect_said(&mut alice, "I am asking test which services account dave is logged in to").await;
    // Named again once the server has answered, dave is challenged.
    let mut challenged = None;
    for _ in 0..10 {
        alice.privmsg(ROOM, "!duel dave").await.expect("send");
        let said = bot.drain(&mut alice, Duration::from_secs(1)).await;
        if let Some(line) = said.iter().find(|m| strip(&m.text).contains("alice challenges dave")) {
            challenged = Some(line.clone());
            break;
        }
        assert!(
            said.iter().all(|m| !strip(&m.text).contains("not logged in")),
            "dave is logged in: {said:?}\ndaemon log:\n{}",
            daemon.daemon.log_tail(60)
        );
    }
    let challenged = challenged
        .unwrap_or_else(|| panic!("dave was never challenged; daemon log:\n{}", daemon.daemon.log_tail(60)));
    assert_eq!(challenged.target, ROOM, "{challenged}");
    bot.expect(&mut dave, "alice challenges dave").await;

    // erin is looked up too, and then the challenger is told to have her log in.
    alice.privmsg(ROOM, "!duel erin").await.expect("send");
    bot.expect_said(&mut alice, "I am asking test which services account erin is logged in to").await;
    let mut told = None;
    for _ in 0..10 {
        alice.privmsg(ROOM, "!duel erin").await.expect("send");
        let said = bot.drain(&mut alice, Duration::from_secs(1)).await;
        told = said.into_iter().find(|m| strip(&m.text).contains("erin is in the room but not logged in"));
        if told.is_some() {
            break;
        }
    }
    let told = told.unwrap_or_else(|| {
        panic!("erin's login was never told; daemon log:\n{}", daemon.daemon.log_tail(60))
    });
    assert!(strip(&told.text).contains("ask them to log in"), "{told}");
    assert!(!strip(&told.text).contains("challenges"), "{told}");
    drop(erin);
}

/// One InspIRCd, five TLS listeners, five networks in one daemon: a CA-signed certificate
/// trusted through `tls_ca`, self-signed ones pinned with `tls_pin` (one of them expired),
/// and, through the same CA file, an expired one and one for another name, refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_trusts_a_ca_file_or_a_pin_and_refuses_expired_or_misnamed_certificates() {
    let ca = TestCa::new("spellbridge test CA").unwrap_or_else(|e| panic!("{e}"));
    let signed = make(ca.sign(&["127.0.0.1"], Validity::Good));
    let own = make(certs::self_signed(&["127.0.0.1"], Validity::Good));
    let own_expired = make(certs::self_signed(&["127.0.0.1"], Validity::Expired));
    let expired = make(ca.sign(&["127.0.0.1"], Validity::Expired));
    let misnamed = make(ca.sign(&["elsewhere.example"], Validity::Good));
    let listeners = vec![signed, own.clone(), own_expired.clone(), expired, misnamed];
    let ircd = tokio::task::block_in_place(|| {
        InspIrcd::start_with(Options { tls: listeners, ..Options::default() })
            .unwrap_or_else(|e| panic!("InspIRCd is needed for this test: {e}"))
    });
    let port = |index: usize| ircd.tls_port(index).expect("a TLS port");
    let trust_ca = "tls = true\ntls_ca = \"ca.pem\"\nrequire_account = false\n";
    let pinned = |pem: &Pem| format!("tls = true\ntls_pin = \"{}\"\nrequire_account = false\n", pin(pem));
    let networks = [
        irc("ca", port(0), "botca", trust_ca),
        irc("pinned", port(1), "botpin", &pinned(&own)),
        irc("pinnedold", port(2), "botold", &pinned(&own_expired)),
        irc("stale", port(3), "botstale", trust_ca),
        irc("misnamed", port(4), "botname", trust_ca),
    ]
    .concat();
    let bot = Spellbridge::start(&networks, &[("ca.pem", &ca.pem.cert)]);

    let stale = bot.wait_lines("stale", "IRC connection lost", 1, LOGIN_WAIT).await;
    assert!(stale.iter().all(|l| l.contains("expired")), "the log names the expiry: {stale:?}");
    let misnamed = bot.wait_lines("misnamed", "IRC connection lost", 1, LOGIN_WAIT).await;
    assert!(
        misnamed.iter().all(|l| l.contains("another name") && l.contains("127.0.0.1")),
        "the log names the name mismatch: {misnamed:?}"
    );
    let health = bot
        .health(LOGIN_WAIT, |_, h| ["ca", "pinned", "pinnedold"].iter().all(|n| state(h, n) == "up"))
        .await;
    assert_eq!(health["status"], "unhealthy", "a refused TLS connection leaves /healthz unhealthy: {health}");
    assert_eq!(health["down"], serde_json::json!(["misnamed", "stale"]), "{health}");
    assert_eq!(bot.lines("stale", "registered on IRC").len(), 0);
    assert_eq!(bot.lines("misnamed", "registered on IRC").len(), 0);
    let (status, _) = endpoint::get(bot.http, "/healthz").await.expect("an answer");
    assert_eq!(status, 503);
}
