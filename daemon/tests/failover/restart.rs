//! PostgreSQL restarted under two daemons: both recover (the active one keeps or regains
//! the lease, or the standby takes over), play goes on, nothing is lost or doubled.
//!
//! A leader that could not renew within its lease while PostgreSQL was down stands down
//! by exiting, saying so (docs/failover.md): the test then starts it again, as its
//! supervisor would, and it must come back as the standby. Any other exit fails.

use super::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgresql_restarts_under_both_daemons_and_play_goes_on() {
    let mut world = World::start(StoreLine::Direct).await;
    world.before_fault().await;
    tokio::task::block_in_place(|| world.pg.restart()).unwrap_or_else(|e| panic!("{e}"));
    let restarted = Instant::now();
    // One leads and the other is its standby again, both still running.
    let deadline = restarted + Duration::from_secs(60);
    let settled = LEASE + Duration::from_secs(2);
    let mut started_again = [false, false];
    let leader = loop {
        for (which, again) in started_again.iter_mut().enumerate() {
            let daemon = world.pair.daemon(which);
            if !*again && !daemon.is_running() {
                assert!(
                    daemon.log().contains("this daemon's lease on PostgreSQL is gone"),
                    "daemon {which} exited during the restart without standing down:\n{}",
                    daemon.log_tail(40)
                );
                eprintln!(
                    "daemon {which} stood down during the restart; started again as a supervisor would"
                );
                daemon.spawn().unwrap_or_else(|e| panic!("daemon {which}: {e}"));
                *again = true;
            }
        }
        let roles = (world.pair.role(0).await, world.pair.role(1).await);
        match roles {
            // Only once a lease has passed: by then a leader that could not renew has
            // stood down, rather than read as active before it noticed the restart.
            (Role::Active, Role::Standby) if restarted.elapsed() > settled => break 0,
            (Role::Standby, Role::Active) if restarted.elapsed() > settled => break 1,
            _ if Instant::now() >= deadline => panic!(
                "no active daemon with its standby within 60 s of the restart: {roles:?}\n\
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
