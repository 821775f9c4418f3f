//! NickServ `REGAIN` on takeover, against a real InspIRCd with Atheme: the active daemon
//! (logged in with SASL, `regain = true`) is paused with SIGSTOP past its lease, so its IRC
//! connection still holds the bot's nick (the server would notice only at its ping
//! timeout, minutes away). The standby takes over, connects under an alternate nick, takes
//! the nick back with `REGAIN` within a few seconds and answers under it.

use spellbridge_tests::harness::atheme::Atheme;
use spellbridge_tests::harness::inspircd::{InspIrcd, Options};
use spellbridge_tests::harness::irc_client::IrcClient;

use super::support::*;

const BIN: &str = env!("CARGO_BIN_EXE_spellbridge");
/// The bot's nick and its services account (registered under that nick).
const NICK: &str = "spellbot";
const PASSWORD: &str = "correct-horse-7f3a";
const ROOM: &str = "#magic";
/// How long the new leader may take to have its nick back and answer under it: far less
/// than the server's ping timeout (`pingfreq` 120 s), so only `REGAIN` can explain it.
const REGAINED_WITHIN: Duration = Duration::from_secs(15);

fn config(url: &str, http: u16, irc: u16) -> String {
    format!(
        r#"{head}
[[irc]]
name = "irc"
server = "127.0.0.1"
port = {irc}
tls = false
nick = "{NICK}"
channels = ["{ROOM}"]
require_account = false
reconnect_delay = "1s"

[irc.sasl]
account = "{NICK}"
password = {{ file = "sasl-password" }}
regain = true

[irc.flood]
enabled = false

[irc.user_limit]
enabled = false
"#,
        head = config_head(url, LEASE, http),
    )
}

/// Says `!games` in [`ROOM`] every 2 s until a bot answers as `nick`, for at most `limit`;
/// the nicks that answered meanwhile.
async fn until_answered_as(
    alice: &mut IrcClient,
    nick: &str,
    limit: Duration,
) -> Result<Duration, Vec<String>> {
    let started = Instant::now();
    let mut others = Vec::new();
    while started.elapsed() < limit {
        alice.privmsg(ROOM, "!games").await.unwrap_or_else(|e| panic!("alice says !games: {e}"));
        let until = Instant::now() + Duration::from_secs(2);
        while let Some(m) = alice.next_message(until.saturating_duration_since(Instant::now())).await {
            if m.target == ROOM && strip(&m.text).contains("Games:") {
                if m.from == nick {
                    return Ok(started.elapsed());
                }
                others.push(m.from);
            }
        }
    }
    Err(others)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_new_leader_takes_the_nick_back_from_a_paused_leader_with_regain() {
    let ((ircd, atheme), pg) = tokio::task::block_in_place(|| {
        beside_postgres(|| {
            let ircd = InspIrcd::start_with(Options { services: true, ..Options::default() })
                .unwrap_or_else(|e| panic!("InspIRCd is needed for this test: {e}"));
            let atheme = Atheme::start(&ircd)
                .unwrap_or_else(|e| panic!("Atheme is needed for this test: {e}\n{}", ircd.output_tail(20)));
            (ircd, atheme)
        })
    });
    atheme.register(NICK, PASSWORD).await.unwrap_or_else(|e| panic!("registering {NICK}: {e}"));
    let mut alice = IrcClient::connect(ircd.port(), "alice").await.unwrap_or_else(|e| panic!("{e}"));
    alice.join(ROOM).await.unwrap_or_else(|e| panic!("{e}"));
    let (url, irc) = (pg.url(), ircd.port());
    let mut pair = Pair::new(
        BIN,
        &[("sasl-password", &format!("{PASSWORD}\n"))],
        "info,spellbridge_adapters=debug",
        |_, http| config(&url, http, irc),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    pair.start(0, Role::Active, STARTUP).await.unwrap_or_else(|e| panic!("{e}"));
    until_answered_as(&mut alice, NICK, Duration::from_secs(60)).await.unwrap_or_else(|others| {
        panic!(
            "daemon 0 never answered as {NICK} (answers from {others:?}):\n{}",
            pair.daemon(0).log_tail(40)
        )
    });
    pair.start(1, Role::Standby, STARTUP).await.unwrap_or_else(|e| panic!("{e}"));

    pair.daemon(0).pause().unwrap_or_else(|e| panic!("{e}"));
    let paused = Instant::now();
    pair.wait_role(1, Role::Active, Duration::from_secs(30)).await.unwrap_or_else(|e| panic!("{e}"));
    let took_over = paused.elapsed();
    let regained = until_answered_as(&mut alice, NICK, REGAINED_WITHIN).await.unwrap_or_else(|others| {
        panic!(
            "daemon 1 did not answer as {NICK} within {REGAINED_WITHIN:?} of its takeover (answers from \
             {others:?}); its log ends:\n{}\n--- Atheme's log ends:\n{}",
            pair.daemon(1).log_tail(60),
            atheme.log_tail(20)
        )
    });
    eprintln!("daemon 1 led {took_over:?} after the pause and answered as {NICK} {regained:?} later");
    pair.daemon(0).resume().unwrap_or_else(|e| panic!("{e}"));
}
