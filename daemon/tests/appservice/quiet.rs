//! Item 8 in appservice mode: a healthy run at the default log level (no `RUST_LOG`, as
//! an operator starts it) logs no ERROR and no WARN line. The bot's first login through
//! the appservice and the ghosts' client both start matrix-sdk's encryption, which reads
//! the session user's account data: under the bot's name with the `as_token` (which is
//! the appservice's sender user) the homeserver answered 403 and matrix-sdk logged two
//! ERRORs each time. The run covers the login, a ghost made and speaking, a Matrix line
//! relayed to IRC, a command answered, a restart, and a SIGTERM. (The one WARN left is
//! the test's own config choice, `require_account = false`.)

use spellbridge_tests::harness::inspircd::InspIrcd;

use super::ghosts::{Seen, irc_user, joined};
use super::support::*;

/// What the daemon logs once it has the channel's member list (it is in the channel).
const ROLL_CALL: &str = "roll call: the room's ghosts follow the channel's member list";

/// The log's lines at WARN or ERROR (the text format: time, level, target, message).
fn loud_lines(log: &str) -> Vec<&str> {
    log.lines().filter(|line| matches!(line.split_whitespace().nth(1), Some("WARN" | "ERROR"))).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_healthy_appservice_run_at_the_default_level_logs_no_error_or_warning() {
    let irc = tokio::task::block_in_place(InspIrcd::start)
        .unwrap_or_else(|e| panic!("InspIRCd is needed for this test: {e}"));
    let port = free_port();
    let mut daemon = prepared(port, "");
    daemon.env_remove("RUST_LOG");
    let synapse = synapse_for(&daemon);
    let mut watcher = person(&synapse, "watcher").await;
    let room = games_room(&synapse, &mut watcher).await;
    let mut alice = irc_user(irc.port(), "alice").await;
    start(&mut daemon, &synapse, port, &irc_sections(irc.port(), Some(&room)));
    let ghost = "@irc_irc_alice:localhost";
    let mut seen = Seen { client: watcher, room: room.clone(), events: Vec::new() };
    seen.until("alice's ghost joined", &daemon, |e| joined(e, ghost)).await;

    for start in 1..=2 {
        let line = format!("hello from irc {start}");
        alice.privmsg(CHANNEL, &line).await.unwrap_or_else(|e| panic!("{e}"));
        seen.until("alice's line from her ghost", &daemon, |events| {
            events.iter().any(|e| e.sender == ghost && e.message().is_some_and(|m| m.body == line))
        })
        .await;
        let from_matrix = format!("hello from matrix {start}");
        seen.client.send_text(&room, &from_matrix).await.unwrap_or_else(|e| panic!("{e}"));
        let relayed = format!("<watcher> {from_matrix}");
        alice
            .expect_privmsg_matching(|m| m.from == BOT && m.text == relayed, STARTUP)
            .await
            .unwrap_or_else(|e| panic!("the Matrix line reaches IRC: {e}"));
        if start == 1 {
            daemon.restart().unwrap_or_else(|e| panic!("{e}"));
            // IRC keeps no history: alice speaks once the bot is back in the channel.
            let deadline = Instant::now() + STARTUP;
            while daemon.log().matches(ROLL_CALL).count() < 2 {
                assert!(
                    Instant::now() < deadline,
                    "the bot is not back in {CHANNEL}:\n{}",
                    daemon.log_tail(40)
                );
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
    let status = daemon.terminate(Duration::from_secs(15)).unwrap_or_else(|e| panic!("{e}"));
    assert!(status.success(), "spellbridge exits 0 on SIGTERM: {status}");

    let log = daemon.log();
    let loud: Vec<&str> =
        loud_lines(&log).into_iter().filter(|l| !l.contains("require_account = false")).collect();
    assert!(loud.is_empty(), "a healthy run logged {} ERROR or WARN lines:\n{}", loud.len(), loud.join("\n"));
}
