//! A Matrix command said while no daemon leads (between the SIGKILL of the active daemon
//! and the standby's takeover) is answered once after the takeover: the new leader syncs
//! from the position the old one handled (kept in PostgreSQL), not from a position of its
//! own that skips the gap as history (on a fresh `store_dir` the first sync found the
//! rooms as invites, joined them again and handed over their recent timeline: old
//! commands were answered again, the committed ones dropped by their ids but a read-only
//! `!games` not).

use super::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_matrix_command_said_while_no_daemon_leads_is_answered_once_after_the_takeover() {
    let mut world = World::start(StoreLine::Direct).await;
    world.before_fault().await;
    // A read-only command handled before the kill: the new leader must not answer it again.
    world.games_in_the_duel_room().await;
    world.pair.daemon(0).kill().unwrap_or_else(|e| panic!("{e}"));
    let killed = Instant::now();
    // Said in the gap: nobody syncs now.
    world.coin_from_matrix().await;
    world.pair.wait_role(1, Role::Active, Duration::from_secs(30)).await.unwrap_or_else(|e| panic!("{e}"));
    eprintln!("daemon 1 leads {:?} after the kill", killed.elapsed());
    world.coin_from_matrix_answered().await;
    world.after_takeover().await;
    world.check_transcripts().await;
    world.games_in_the_duel_room_answered_once();
}
