//! Issue 31, item 11: a healthy bot-mode run with encryption on logs no ERROR and no WARN
//! line — the twin of the appservice's `quiet` test. It runs at the harness's level,
//! `RUST_LOG=info` (plus the adapters' debug lines), which shows everything the default
//! level shows and matrix-sdk's own INFO and WARN lines besides: matrix-sdk-crypto warned
//! on every sync that room keys have no backup (the bot keeps its keys in its store), and
//! its HTTP client logged an ERROR for each expected 404 (account data never set, the
//! encryption state of an unencrypted room). The run covers an encrypted room, a Duel
//! round cast by encrypted direct message, a restart, and a SIGTERM.

use super::*;

/// The log's lines at WARN or ERROR (the text format: time, level, target, message).
fn loud_lines(log: &str) -> Vec<&str> {
    log.lines().filter(|line| matches!(line.split_whitespace().nth(1), Some("WARN" | "ERROR"))).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_healthy_bot_mode_run_with_encryption_logs_no_error_or_warning() {
    let synapse = server();
    let bot_id = register(&synapse, BOT);
    let mut daemon = Daemon::start(&synapse);
    let (alice, bob) = tokio::join!(Player::start(&synapse, "alice"), Player::start(&synapse, "bob"));

    // alice creates an encrypted room and invites the bot and bob.
    let room = encrypted_room(&alice, &[&bob], &bot_id, &daemon).await;
    let in_room = Destination::Room(RoomId::new(&room));

    alice.say(&in_room, &format!("!duel {}", bob.id)).await;
    bob.expect("challenges", &daemon).await;
    bob.say(&in_room, "!accept").await;
    alice.expect("Round 1 begins", &daemon).await;
    let to_bot = Destination::Private(PlayerId::new(&bot_id));
    alice.say(&to_bot, "!cast surge fire wind water thunder end").await;
    alice.expect_private("Queued", &daemon).await;
    bob.say(&to_bot, "!cast focus earth earth earth earth end").await;
    bob.expect_private("Queued", &daemon).await;
    alice.expect("Round 1 settles", &daemon).await;
    alice.drain(Duration::from_secs(1)).await;

    assert!(daemon.terminate(), "spellbridge exits 0 on SIGTERM; its log:\n{}", daemon.log());
    daemon.spawn();
    alice.until_bot_answers(&in_room, &daemon).await;
    alice.say(&in_room, "!status").await;
    alice.expect("Round 2, step 0", &daemon).await;
    assert!(daemon.terminate(), "spellbridge exits 0 on SIGTERM; its log:\n{}", daemon.log());
    for player in [&alice, &bob] {
        player.stop();
    }

    let log = daemon.log();
    let loud = loud_lines(&log);
    assert!(loud.is_empty(), "a healthy run logged {} ERROR or WARN lines:\n{}", loud.len(), loud.join("\n"));
}
