//! The database unreachable from the active daemon only (its `[store] url` goes through a
//! cut proxy, the standby's straight to PostgreSQL): within one lease it stops acting
//! (no more leading, nothing more said), and the standby takes over.

use super::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_active_daemon_cut_from_the_database_stops_within_a_lease_and_the_standby_takes_over() {
    let mut world = World::start(StoreLine::ThroughProxy).await;
    world.before_fault().await;
    let old_nick = world.bot_nick().to_owned();
    let proxy = world.proxy.as_ref().unwrap_or_else(|| panic!("daemon 0 goes through the proxy"));
    assert!(proxy.passed() > 0, "daemon 0's database connection went through the proxy");
    proxy.cut();
    let cut = Instant::now();
    // Within one lease (and a second for the check itself) it no longer says it leads.
    tokio::time::sleep(LEASE + Duration::from_secs(1)).await;
    let role = world.pair.role(0).await;
    assert_ne!(role, Role::Active, "daemon 0 still leads {:?} after the cut", cut.elapsed());
    let mark = world.irc_mark().await;
    world.pair.wait_role(1, Role::Active, Duration::from_secs(30)).await.unwrap_or_else(|e| panic!("{e}"));
    eprintln!("daemon 1 leads {:?} after the cut", cut.elapsed());
    world.after_takeover().await;
    let said = world.unexpected_irc_lines_from(&old_nick, mark).await;
    assert!(said.is_empty(), "the cut-off daemon ({old_nick}) still said on IRC: {said:#?}");
    world.check_transcripts().await;
}
