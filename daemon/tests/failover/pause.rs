//! SIGSTOP of the active daemon past its lease (paused, not dead: its sockets stay open):
//! the standby takes over; resumed (SIGCONT), the old one stands down without sending
//! anything, though commands reached its IRC connection while it was paused.

use super::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_leader_is_replaced_and_once_resumed_stands_down_without_a_word() {
    let mut world = World::start(StoreLine::Direct).await;
    world.before_fault().await;
    let old_nick = world.bot_nick().to_owned();
    world.pair.daemon(0).pause().unwrap_or_else(|e| panic!("{e}"));
    let paused = Instant::now();
    world.pair.wait_role(1, Role::Active, Duration::from_secs(30)).await.unwrap_or_else(|e| panic!("{e}"));
    eprintln!("daemon 1 leads {:?} after the pause", paused.elapsed());
    // Commands said in the channels now reach the paused daemon's socket too.
    world.after_takeover().await;
    let mark = world.irc_mark().await;
    world.pair.daemon(0).resume().unwrap_or_else(|e| panic!("{e}"));
    // Two leases: time to notice its epoch is stale (and to misbehave, if it would).
    tokio::time::sleep(LEASE * 2 + Duration::from_secs(1)).await;
    let role = world.pair.role(0).await;
    assert_ne!(role, Role::Active, "the resumed daemon does not lead: {}", world.pair.daemon(0).log_tail(40));
    world.more_coins().await;
    let said = world.unexpected_irc_lines_from(&old_nick, mark).await;
    assert!(said.is_empty(), "the resumed daemon ({old_nick}) said on IRC: {said:#?}");
    world.check_transcripts().await;
}
