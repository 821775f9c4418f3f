//! Issue 30: with `[store] durability = "full"` (the default) a move is synced before it
//! is announced, and a question is not. `spellbridge run` as a child process against a
//! real InspIRCd: a crowd floods `!status` (and a refusal now and then) as the IRC bench
//! does, and the store's own count of synced commits (`spellbridge_store_commits_total`
//! on `/metrics`) must not move; one `!coins`, a move, must move it.
//!
//! Needs InspIRCd (`tests/scripts/install-inspircd.sh`); without it the test fails with
//! the harness's message, it never skips.

use std::time::{Duration, Instant};

use spellbridge_adapters::irc::format::strip;
use spellbridge_tests::harness::daemon::Daemon;
use spellbridge_tests::harness::endpoint;
use spellbridge_tests::harness::inspircd::InspIrcd;
use spellbridge_tests::harness::irc_client::IrcClient;

const BIN: &str = env!("CARGO_BIN_EXE_spellbridge");
const BOT: &str = "spellbridge";
const ROOM: &str = "#durable";
/// Nicks flooding, and the commands each sends.
const CROWD: usize = 4;
const EACH: usize = 50;
const MOVES: usize = 100;
const SYNCED: &str = "spellbridge_store_commits_total{synced=\"true\"}";

/// The value of `name` (labels as written) in a metrics text.
fn sample(metrics: &str, name: &str) -> Option<u64> {
    metrics.lines().find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
}

async fn synced_commits(http: u16) -> u64 {
    let (status, body) = endpoint::get(http, "/metrics").await.expect("the endpoint answers");
    assert_eq!(status, 200, "{body}");
    sample(&body, SYNCED).unwrap_or_else(|| panic!("no {SYNCED} in:\n{body}"))
}

/// Reads replies to `nick` until `count` came (bounded); panics with what is missing.
async fn replies(client: &mut IrcClient, count: usize, daemon: &Daemon) {
    let nick = client.nick().to_owned();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut got = 0;
    while got < count {
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(!left.is_zero(), "{nick} got {got} of {count} replies; the log:\n{}", daemon.log());
        if let Some(message) = client.next_privmsg(left.min(Duration::from_secs(5))).await
            && message.from == BOT
            && strip(&message.text).contains(nick.as_str())
        {
            got += 1;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_questions_makes_no_synced_commit_and_a_move_does() {
    let irc = InspIrcd::start().unwrap_or_else(|e| panic!("InspIRCd is needed for this test: {e}"));
    let http = endpoint::free_port().unwrap_or_else(|e| panic!("{e}"));
    let config = format!(
        "prefix = \"!\"\n[store]\npath = \"games.db\"\ndurability = \"full\"\n[thaum]\nschedule = \"manual\"\n\
         [http]\nlisten = \"127.0.0.1:{http}\"\n\
         [[irc]]\nname = \"test\"\nserver = \"127.0.0.1\"\nport = {}\ntls = false\nnick = \"{BOT}\"\n\
         channels = [\"{ROOM}\"]\nrequire_account = false\n\
         [irc.flood]\nenabled = false\n[irc.user_limit]\nenabled = false\n",
        irc.port()
    );
    let daemon = Daemon::start(BIN, &config).unwrap_or_else(|e| panic!("{e}"));
    let mut gm = IrcClient::connect(irc.port(), "gm").await.expect("gm connects");
    gm.join(ROOM).await.expect("gm joins");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        assert!(Instant::now() < deadline, "the bot never opened the table; its log:\n{}", daemon.log());
        gm.privmsg(ROOM, "!new thaum").await.expect("send");
        if gm
            .expect_privmsg_matching(|m| m.from == BOT && m.text.contains("thaum"), Duration::from_secs(1))
            .await
            .is_ok()
        {
            break;
        }
    }
    let mut crowd = Vec::new();
    for n in 0..CROWD {
        let mut client = IrcClient::connect(irc.port(), &format!("crowd{n}")).await.expect("connects");
        client.join(ROOM).await.expect("joins");
        // Joining the table is a move (and the nick's first command sets its home).
        client.privmsg(ROOM, "!join").await.expect("send");
        replies(&mut client, 1, &daemon).await;
        crowd.push(client);
    }
    // The game master's moves, one at a time, as the bench's round trips make them.
    for _ in 0..MOVES {
        gm.privmsg(ROOM, "!coins gm +1").await.expect("send");
        gm.expect_privmsg_matching(
            |m| m.from == BOT && strip(&m.text).starts_with("gm"),
            Duration::from_secs(10),
        )
        .await
        .unwrap_or_else(|e| panic!("no answer to !coins: {e}; the log:\n{}", daemon.log()));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = synced_commits(http).await;

    for client in &mut crowd {
        for i in 0..EACH {
            // A refusal (the game master's command from a player) now and then.
            let text = if i % 10 == 9 { "!coins crowd0 +1" } else { "!status" };
            client.privmsg(ROOM, text).await.expect("send");
        }
    }
    for client in &mut crowd {
        replies(client, EACH, &daemon).await;
    }
    let after = synced_commits(http).await;
    assert_eq!(
        after - before,
        0,
        "{} questions and refusals made {} synced commits; the log:\n{}",
        CROWD * EACH,
        after - before,
        daemon.log()
    );

    // A move still waits for the disk before it is announced.
    gm.privmsg(ROOM, "!coins gm +1").await.expect("send");
    let answer = gm
        .expect_privmsg_matching(
            |m| m.from == BOT && strip(&m.text).starts_with("gm"),
            Duration::from_secs(10),
        )
        .await
        .unwrap_or_else(|e| panic!("no answer to !coins: {e}; the log:\n{}", daemon.log()));
    assert!(strip(&answer.text).contains("coins"), "{answer:?}");
    let moved = synced_commits(http).await;
    assert!(moved > after, "the move was committed with a sync ({after} → {moved})");
}
