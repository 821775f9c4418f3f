//! PostgreSQL restarted under two daemons: both recover (the active one keeps or regains
//! the lease, or the standby takes over), play goes on, nothing is lost or doubled.

use super::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgresql_restarts_under_both_daemons_and_play_goes_on() {
    let mut world = World::start(StoreLine::Direct).await;
    world.before_fault().await;
    tokio::task::block_in_place(|| world.pg.restart()).unwrap_or_else(|e| panic!("{e}"));
    let restarted = Instant::now();
    // One leads and the other is its standby again, both still running.
    let deadline = restarted + Duration::from_secs(40);
    let leader = loop {
        let roles = (world.pair.role(0).await, world.pair.role(1).await);
        match roles {
            (Role::Active, Role::Standby) => break 0,
            (Role::Standby, Role::Active) => break 1,
            _ if Instant::now() >= deadline => panic!(
                "no active daemon with its standby within 40 s of the restart: {roles:?}\n\
                 --- daemon 0:\n{}\n--- daemon 1:\n{}",
                world.pair.daemon(0).log_tail(40),
                world.pair.daemon(1).log_tail(40)
            ),
            _ => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    };
    eprintln!("daemon {leader} leads {:?} after the restart", restarted.elapsed());
    world.after_takeover().await;
    for which in 0..2 {
        world.pair.daemon(which).ensure_running().unwrap_or_else(|e| panic!("daemon {which}: {e}"));
    }
    world.check_transcripts().await;
}
