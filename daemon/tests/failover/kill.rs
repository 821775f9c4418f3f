//! SIGKILL of the active daemon mid-round: the standby takes over, the game goes on, and
//! every acknowledged move is seen once on both networks.

use super::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_active_daemon_killed_mid_round_the_standby_takes_over_and_nothing_is_lost_or_doubled() {
    let mut world = World::start(StoreLine::Direct).await;
    world.before_fault().await;
    world.pair.daemon(0).kill().unwrap_or_else(|e| panic!("{e}"));
    let killed = Instant::now();
    world.pair.wait_role(1, Role::Active, Duration::from_secs(30)).await.unwrap_or_else(|e| panic!("{e}"));
    eprintln!("daemon 1 leads {:?} after the kill", killed.elapsed());
    world.after_takeover().await;
    world.check_transcripts().await;
}
