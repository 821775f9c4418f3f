//! A healthy bridged run at the default log level (no `RUST_LOG`, as an operator starts
//! it) logs no ERROR and no WARN line (issue 17, item 8): matrix-sdk's ERRORs for the
//! 404s it expects (`m.secret_storage.default_key` account data, `m.room.encryption`
//! state of an unencrypted room) and its backup WARN on every sync stay out of the log.
//! The run covers a first login, relayed chat both ways, commands answered in the rooms
//! and privately on both networks, a restart that restores the session, and a SIGTERM.
//! (The one WARN left is the test's own config choice, `require_account = false`.)

use super::support::*;

/// The log's lines at WARN or ERROR (the text format: time, level, target, message).
fn loud_lines(log: &str) -> Vec<&str> {
    log.lines().filter(|line| matches!(line.split_whitespace().nth(1), Some("WARN" | "ERROR"))).collect()
}

#[test]
fn loud_lines_are_found_by_their_level() {
    let log = "=== start 1 ===\n\
        2026-12-02T03:00:00.000001Z  INFO spellbridge::serve: store loaded\n\
        2026-12-02T03:00:00.000002Z  WARN spellbridge::serve: a warning\n\
        2026-12-02T03:00:00.000003Z ERROR matrix_sdk::http_client: Error while sending request\n\
        2026-12-02T03:00:00.000004Z  INFO spellbridge::serve: says WARN in its text\n";
    assert_eq!(loud_lines(log).len(), 2, "{:?}", loud_lines(log));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_healthy_run_at_the_default_level_logs_no_error_or_warning() {
    let (irc, synapse) = servers();
    synapse.register(BOT, &password(BOT), false).unwrap_or_else(|e| panic!("{e}"));
    let mut watcher = Mx::new(&synapse, "watcher", "Watcher").await;
    let mut bobby = Mx::new(&synapse, "bobby", "Bobby").await;
    let room = bridge_room(&mut watcher, &mut [&mut bobby]).await;
    direct_rooms(&mut [&mut bobby]).await;
    let mut alice = Irc::connect(irc.port(), "alice").await;
    let extra = Extra { default_log: true, ..Extra::default() };
    let mut daemon = start_daemon(&irc, &synapse, &room, &extra);

    for start in 1..=2 {
        until_bot_on_irc(&mut alice).await;
        until_bot_everywhere(&room, &mut watcher, &mut [&mut bobby]).await;
        alice.settle().await;
        watcher.settle().await;
        bobby.settle().await;

        alice.say(&format!("hello from irc {start}")).await;
        watcher.expect_in(&room, &format!("<alice> hello from irc {start}")).await;
        bobby.say(&room, &format!("hello from matrix {start}")).await;
        alice.expect(&format!("<Bobby> hello from matrix {start}")).await;
        bobby.tell_bot("!games").await;
        bobby.expect_private("Games:").await;
        alice.tell_bot("!games").await;
        alice.expect_private("Games:").await;

        if start == 1 {
            daemon.restart().unwrap_or_else(|e| panic!("{e}"));
        }
    }
    let status = daemon.terminate(Duration::from_secs(15)).unwrap_or_else(|e| panic!("{e}"));
    assert!(status.success(), "spellbridge exits 0 on SIGTERM: {status}");

    let log = daemon.log();
    assert!(log.contains("restored the saved Matrix session"), "the second start restored: {log}");
    // The test's own config choice is warned about once per start, as it should be:
    // InspIRCd here has no services, so require_account = false.
    let loud: Vec<&str> =
        loud_lines(&log).into_iter().filter(|l| !l.contains("require_account = false")).collect();
    assert!(loud.is_empty(), "a healthy run logged {} ERROR or WARN lines:\n{}", loud.len(), loud.join("\n"));
}
