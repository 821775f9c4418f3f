//! Leadership by a lease with a fencing epoch (issue 34), against a real PostgreSQL
//! (tests/harness/postgres.rs): two contenders on one database, the holder renewing, a
//! take-over only after expiry, a paused holder fenced and told, a commit that passed the
//! fence finishing before a take-over (while a renewal does not wait for it), renewals
//! landing while commits run back to back, PostgreSQL restarted mid-lease. Leases are 2–3 s,
//! every wait is bounded.

use std::time::Duration;

use spellbridge::leader::{
    Epoch, Fence, FenceError, Holder, Leadership, Lease, LeaseError, LeaseSettings, Loss, Renewal, Term,
    fenced, keep,
};
use spellbridge_tests::harness::postgres::Postgres;
use tokio::time::{Instant, sleep, sleep_until, timeout};
use tokio_postgres::NoTls;

fn cluster() -> Postgres {
    Postgres::start_new().unwrap_or_else(|e| panic!("{e}"))
}

fn settings() -> LeaseSettings {
    LeaseSettings::new(Duration::from_secs(2), Duration::from_millis(400)).unwrap_or_else(|e| panic!("{e}"))
}

fn holder(name: &str) -> Holder {
    Holder::new(name).unwrap_or_else(|e| panic!("{e}"))
}

async fn contender(url: &str, name: &str, settings: LeaseSettings) -> Lease {
    Lease::open(url, holder(name), settings).await.unwrap_or_else(|e| panic!("{name} opens the lease: {e}"))
}

/// Connects a client of the test's own (as the store's commits will have).
async fn client(url: &str) -> tokio_postgres::Client {
    let (client, connection) =
        tokio_postgres::connect(url, NoTls).await.unwrap_or_else(|e| panic!("connect: {e}"));
    tokio::spawn(connection);
    client
        .batch_execute("CREATE TABLE IF NOT EXISTS moves (epoch bigint NOT NULL, note text NOT NULL)")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    client
}

/// A journal commit as the store will make it: the fence, a row, the commit.
async fn commit(url: &str, fence: &Fence, note: &str) -> Result<(), FenceError> {
    let mut client = client(url).await;
    let transaction = client.transaction().await?;
    fenced(&transaction, fence).await?;
    transaction.execute("INSERT INTO moves VALUES ($1, $2)", &[&fence.epoch().0, &note]).await?;
    transaction.commit().await?;
    Ok(())
}

/// How many rows were committed under `epoch`.
async fn moves_under(url: &str, epoch: Epoch) -> i64 {
    client(url)
        .await
        .query_one("SELECT count(*) FROM moves WHERE epoch = $1", &[&epoch.0])
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .get(0)
}

async fn acquire(lease: &mut Lease) -> Option<Term> {
    lease.acquire().await.unwrap_or_else(|e| panic!("acquire: {e}"))
}

/// Tries to take the lease every `every` until it succeeds or `limit` passes.
async fn take_within(lease: &mut Lease, every: Duration, limit: Duration) -> Option<(Term, Instant)> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Ok(Some(term)) = lease.acquire().await {
            return Some((term, Instant::now()));
        }
        sleep(every).await;
    }
    None
}

#[tokio::test]
async fn of_two_contenders_exactly_one_holds_the_lease_and_epochs_rise() {
    let pg = cluster();
    let url = pg.url();
    // Both start at once on an empty database: the migrations must not trip over each other.
    let (mut a, mut b) = tokio::join!(contender(&url, "a", settings()), contender(&url, "b", settings()));
    let mut last = Epoch(0);
    for round in 0..5 {
        let (ta, tb) = tokio::join!(a.acquire(), b.acquire());
        let (ta, tb) = (ta.unwrap_or_else(|e| panic!("{e}")), tb.unwrap_or_else(|e| panic!("{e}")));
        let (winner, loser, term) = match (ta, tb) {
            (Some(term), None) => (&mut a, &mut b, term),
            (None, Some(term)) => (&mut b, &mut a, term),
            other => panic!("round {round}: exactly one contender must win, got {other:?}"),
        };
        assert!(term.epoch > last, "round {round}: epoch {} after {last}", term.epoch);
        last = term.epoch;
        assert!(acquire(loser).await.is_none(), "round {round}: the lease is held");
        let now = loser.current().await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((now.epoch, now.holder.as_str(), now.live), (term.epoch, winner.holder().as_str(), true));
        assert!(winner.release(term.epoch).await.unwrap_or_else(|e| panic!("{e}")));
        assert!(!winner.release(term.epoch).await.unwrap_or_else(|e| panic!("{e}")), "released once only");
        assert_eq!(
            loser.renew(term.epoch).await.unwrap_or_else(|e| panic!("{e}")),
            Renewal::Lost(Loss::Superseded { by: term.epoch, holder: winner.holder().to_string() }),
            "a contender cannot renew another's epoch"
        );
    }
}

#[tokio::test]
async fn the_holder_renews_and_the_other_waits_until_it_releases() {
    let pg = cluster();
    let url = pg.url();
    let mut a = contender(&url, "a", settings()).await;
    let mut b = contender(&url, "b", settings()).await;
    let term = acquire(&mut a).await.unwrap_or_else(|| panic!("a takes the free lease"));
    let keeper = keep(a, term.clone());
    let leadership = keeper.leadership();
    // Three leases long: without renewals the lease would have run out twice over.
    let until = Instant::now() + settings().ttl() * 3;
    while Instant::now() < until {
        assert!(acquire(&mut b).await.is_none(), "b took a lease that a keeps renewing");
        sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(*leadership.borrow(), Leadership::Leading { epoch: term.epoch });
    commit(&url, keeper.fence(), "a's move").await.unwrap_or_else(|e| panic!("a leads: {e}"));
    let a_fence = keeper.fence().clone();
    assert!(keeper.release().await.unwrap_or_else(|e| panic!("{e}")), "a still held it");
    assert_eq!(*leadership.borrow(), Leadership::Lost { epoch: term.epoch, loss: Loss::Released });
    let b_term = acquire(&mut b).await.unwrap_or_else(|| panic!("a released: b takes it at once"));
    assert_eq!(b_term.epoch, Epoch(term.epoch.0 + 1));
    match commit(&url, &a_fence, "a's late move").await {
        Err(FenceError::Superseded { ours, current, holder }) => {
            assert_eq!((ours, current, holder.as_str()), (term.epoch, b_term.epoch, "b"));
        }
        other => panic!("a's commit after b took over must be fenced, got {other:?}"),
    }
    commit(&url, &b.fence(b_term.epoch), "b's move").await.unwrap_or_else(|e| panic!("b leads: {e}"));
    assert_eq!(moves_under(&url, term.epoch).await, 1, "only the move a made while leading");
}

#[tokio::test]
async fn the_other_takes_over_only_after_the_lease_expired() {
    let pg = cluster();
    let url = pg.url();
    let mut a = contender(&url, "a", settings()).await;
    let mut b = contender(&url, "b", settings()).await;
    let started = Instant::now();
    let term = acquire(&mut a).await.unwrap_or_else(|| panic!("a takes the free lease"));
    commit(&url, &a.fence(term.epoch), "a's move").await.unwrap_or_else(|e| panic!("a leads: {e}"));
    // a never renews: b keeps trying.
    let limit = settings().ttl() * 3;
    let (b_term, taken) = take_within(&mut b, Duration::from_millis(50), limit)
        .await
        .unwrap_or_else(|| panic!("b never took the expired lease within {limit:?}"));
    let waited = taken - started;
    assert!(
        waited >= settings().ttl(),
        "b took over after {waited:?}, before a's {:?} lease ran out",
        settings().ttl()
    );
    assert!(b_term.epoch > term.epoch);
    assert_eq!(
        a.renew(term.epoch).await.unwrap_or_else(|e| panic!("{e}")),
        Renewal::Lost(Loss::Superseded { by: b_term.epoch, holder: "b".to_owned() })
    );
    assert!(matches!(
        commit(&url, &a.fence(term.epoch), "a's late move").await,
        Err(FenceError::Superseded { .. })
    ));
    assert_eq!(moves_under(&url, term.epoch).await, 1);
}

/// A holder whose process stops running (here its whole runtime blocks, as under SIGSTOP)
/// past its lease: the other takes over, and when the holder runs again its watch says
/// so at once and its commits are fenced.
#[tokio::test(flavor = "current_thread")]
async fn a_paused_holder_is_fenced_and_its_watch_reports_the_loss() {
    let pg = cluster();
    let url = pg.url();
    let mut a = contender(&url, "a", settings()).await;
    let term = acquire(&mut a).await.unwrap_or_else(|| panic!("a takes the free lease"));
    let keeper = keep(a, term.clone());
    let mut leadership = keeper.leadership();
    sleep(settings().renew_every() * 2).await;
    assert!(leadership.borrow().is_leading(), "a renews while it runs");
    let b_url = url.clone();
    let limit = settings().ttl() * 4;
    let b = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        runtime.block_on(async {
            let mut b = contender(&b_url, "b", settings()).await;
            take_within(&mut b, Duration::from_millis(50), limit).await.map(|(term, _)| term)
        })
    });
    // The pause: this thread, and so a's keeper, does nothing until b has taken over.
    let b_term = b
        .join()
        .unwrap_or_else(|_| panic!("b's thread panicked"))
        .unwrap_or_else(|| panic!("b never took the lease of a paused holder within {limit:?}"));
    assert!(b_term.epoch > term.epoch);
    // a runs again: its keeper reports the loss before (or as soon as) anything else runs.
    timeout(Duration::from_secs(1), leadership.wait_for(|now| !now.is_leading()))
        .await
        .unwrap_or_else(|_| panic!("a's watch still says Leading a second after it resumed"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(*leadership.borrow(), Leadership::Lost { epoch, .. } if epoch == term.epoch));
    match commit(&url, keeper.fence(), "a's move after the pause").await {
        Err(FenceError::Superseded { ours, current, .. }) => {
            assert_eq!((ours, current), (term.epoch, b_term.epoch))
        }
        other => panic!("the paused holder's commit must be fenced, got {other:?}"),
    }
    assert_eq!(moves_under(&url, term.epoch).await, 0);
    assert!(!keeper.release().await.unwrap_or_else(|e| panic!("{e}")), "nothing left to release");
}

/// The fence holds the lease row (`FOR KEY SHARE`) until the commit ends: a take-over that
/// comes due meanwhile (a key update: it raises the epoch) waits for it, so the old
/// leader's last commit lands before the new leader's tenure, never inside it, and its
/// next commit is fenced. A renewal (it moves `expires_at` only) does not wait for it.
#[tokio::test]
async fn a_commit_that_passed_the_fence_ends_before_a_takeover() {
    let pg = cluster();
    let url = pg.url();
    let mut a = contender(&url, "a", settings()).await;
    let mut b = contender(&url, "b", settings()).await;
    let term = acquire(&mut a).await.unwrap_or_else(|| panic!("a takes the free lease"));
    let mut a_client = client(&url).await;
    let transaction = a_client.transaction().await.unwrap_or_else(|e| panic!("{e}"));
    fenced(&transaction, &a.fence(term.epoch)).await.unwrap_or_else(|e| panic!("a leads: {e}"));
    let renewed = timeout(Duration::from_secs(1), a.renew(term.epoch)).await;
    assert!(
        matches!(renewed, Ok(Ok(Renewal::Renewed))),
        "a's renewal must not wait for a's own open commit: {renewed:?}"
    );
    let taker =
        tokio::spawn(
            async move { take_within(&mut b, Duration::from_millis(50), settings().ttl() * 4).await },
        );
    // The lease runs out while a's transaction is still open, a second past it.
    sleep(settings().ttl() + Duration::from_secs(1)).await;
    transaction
        .execute("INSERT INTO moves VALUES ($1, 'a''s last move')", &[&term.epoch.0])
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    // b may record its take-over before a's client has read the commit's answer: the
    // server lets go of the row at the commit, so the bound is when the commit was sent.
    let committing = Instant::now();
    transaction.commit().await.unwrap_or_else(|e| panic!("{e}"));
    let (b_term, taken) =
        taker.await.unwrap_or_else(|e| panic!("{e}")).unwrap_or_else(|| panic!("b never took over"));
    assert!(taken >= committing, "b took over {:?} before a's fenced commit was sent", committing - taken);
    assert!(b_term.epoch > term.epoch);
    assert_eq!(moves_under(&url, term.epoch).await, 1);
    match commit(&url, &a.fence(term.epoch), "a's move after the take-over").await {
        Err(FenceError::Superseded { ours, current, .. }) => {
            assert_eq!((ours, current), (term.epoch, b_term.epoch))
        }
        other => panic!("the old leader's commit after the take-over must be fenced, got {other:?}"),
    }
    assert_eq!(moves_under(&url, term.epoch).await, 1);
}

/// PostgreSQL restarts under a holder that keeps renewing while another contends: the
/// holder either keeps the lease or loses it cleanly (its watch says so before the other
/// can take it), never two holders, epochs only rise, and both work again afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_restarted_mid_lease_never_makes_two_holders() {
    let settings = LeaseSettings::new(Duration::from_secs(3), Duration::from_millis(500))
        .unwrap_or_else(|e| panic!("{e}"));
    let mut pg = cluster();
    let url = pg.url();
    let mut a = contender(&url, "a", settings).await;
    let mut b = contender(&url, "b", settings).await;
    let term = acquire(&mut a).await.unwrap_or_else(|| panic!("a takes the free lease"));
    let keeper = keep(a, term.clone());
    let leadership = keeper.leadership();
    let watched = leadership.clone();
    let contending = tokio::spawn(async move {
        let deadline = Instant::now() + settings.ttl() * 4;
        while Instant::now() < deadline {
            // Errors while PostgreSQL is down are expected: b tries again.
            if let Ok(Some(b_term)) = b.acquire().await {
                // The moment b holds it, a must already know it does not.
                return (b, Some((b_term, watched.borrow().clone())));
            }
            sleep(Duration::from_millis(100)).await;
        }
        (b, None)
    });
    sleep(settings.renew_every()).await;
    let mut pg = tokio::task::spawn_blocking(move || {
        pg.restart().unwrap_or_else(|e| panic!("restarting PostgreSQL: {e}"));
        pg
    })
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let (mut b, taken) = contending.await.unwrap_or_else(|e| panic!("{e}"));
    match taken {
        Some((b_term, a_then)) => {
            eprintln!("PostgreSQL restarted: a lost the lease, b took epoch {}", b_term.epoch);
            assert!(b_term.epoch > term.epoch, "epochs only rise");
            assert!(!a_then.is_leading(), "two holders: b took the lease while a's watch said {a_then:?}");
            assert!(matches!(commit(&url, keeper.fence(), "a").await, Err(FenceError::Superseded { .. })));
            commit(&url, &b.fence(b_term.epoch), "b")
                .await
                .unwrap_or_else(|e| panic!("b leads after the restart: {e}"));
        }
        None => {
            eprintln!("PostgreSQL restarted: a kept the lease");
            assert_eq!(*leadership.borrow(), Leadership::Leading { epoch: term.epoch });
            commit(&url, keeper.fence(), "a")
                .await
                .unwrap_or_else(|e| panic!("a leads after the restart: {e}"));
            assert!(acquire(&mut b).await.is_none(), "a still holds it");
        }
    }
    let now = b.current().await.unwrap_or_else(|e| panic!("{e}"));
    assert!(now.live, "someone holds the lease after the restart: {now:?}");
    drop(keeper);
    // A crash this time (no checkpoint): the row comes back from the write-ahead log.
    let pg = tokio::task::spawn_blocking(move || {
        pg.stop_immediately().unwrap_or_else(|e| panic!("{e}"));
        pg.start().unwrap_or_else(|e| panic!("starting PostgreSQL again: {e}"));
        pg
    })
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    // b's old connection died with the server: the first call may see that, the next reconnects.
    let mut after = b.current().await;
    for _ in 0..20 {
        if after.is_ok() {
            break;
        }
        sleep(Duration::from_millis(100)).await;
        after = b.current().await;
    }
    let after = after.unwrap_or_else(|e| panic!("the lease is readable after PostgreSQL's crash: {e}"));
    assert_eq!(after.epoch, now.epoch, "the lease's epoch survived a crash of PostgreSQL");
    drop(pg);
}

/// PostgreSQL down for longer than the lease: the holder cannot renew, so it reports the
/// loss by its own clock while the database is still down, before anyone could take over;
/// once PostgreSQL is back the other takes the lease under a higher epoch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_down_past_the_lease_makes_the_holder_stand_down_first() {
    let mut pg = cluster();
    let url = pg.url();
    let mut a = contender(&url, "a", settings()).await;
    let mut b = contender(&url, "b", settings()).await;
    let term = acquire(&mut a).await.unwrap_or_else(|| panic!("a takes the free lease"));
    let keeper = keep(a, term.clone());
    let leadership = keeper.leadership();
    let stopped_at = Instant::now();
    let mut pg = tokio::task::spawn_blocking(move || {
        pg.stop().unwrap_or_else(|e| panic!("stopping PostgreSQL: {e}"));
        pg
    })
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let lease_end = stopped_at + settings().ttl();
    sleep_until(lease_end).await;
    assert_eq!(
        *leadership.borrow(),
        Leadership::Lost { epoch: term.epoch, loss: Loss::Lapsed },
        "a lease's worth after PostgreSQL went down, a must have stood down by its own clock"
    );
    let pg = tokio::task::spawn_blocking(move || {
        pg.start().unwrap_or_else(|e| panic!("starting PostgreSQL again: {e}"));
        pg
    })
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let (b_term, _) = take_within(&mut b, Duration::from_millis(100), settings().ttl() * 2)
        .await
        .unwrap_or_else(|| panic!("b never took the lease a could not renew"));
    assert!(b_term.epoch > term.epoch);
    assert!(matches!(commit(&url, keeper.fence(), "a").await, Err(FenceError::Superseded { .. })));
    commit(&url, &b.fence(b_term.epoch), "b").await.unwrap_or_else(|e| panic!("b leads: {e}"));
    drop(pg);
}

#[tokio::test]
async fn bad_urls_and_wrong_passwords_say_what_to_do_and_never_show_the_password() {
    let pg = cluster();
    match Lease::open("postgres://u:s3cret-word@127.0.0.1:notaport/db", holder("a"), settings()).await {
        Err(e @ LeaseError::Url { .. }) => {
            let text = e.to_string();
            assert!(text.contains("postgres://USER:PASSWORD@HOST:PORT/DATABASE"), "{text}");
            assert!(!text.contains("s3cret-word"), "{text}");
        }
        Err(e) => panic!("a bad URL is a URL error, got {e}"),
        Ok(_) => panic!("a bad URL was accepted"),
    }
    let wrong = format!("postgres://postgres:not-the-s3cret@127.0.0.1:{}/spellbridge", pg.port());
    match Lease::open(&wrong, holder("a"), settings()).await {
        Err(e @ LeaseError::Connect { .. }) => {
            let text = e.to_string();
            assert!(text.contains(&format!("127.0.0.1:{}/spellbridge", pg.port())), "{text}");
            assert!(!text.contains("not-the-s3cret"), "{text}");
        }
        Err(e) => panic!("a wrong password is a connect error, got {e}"),
        Ok(_) => panic!("a wrong password was accepted"),
    }
}

/// Commits that overlap without a gap, from several connections, each holding its fence
/// for 20 ms: the lease row is fenced by one commit or another at every moment. The
/// keeper's renewals must still land every `renew_every` or so (a renewal only moves
/// `expires_at` and waits for no commit), so the holder keeps leading and none of the
/// commits is fenced. (With the fence `FOR SHARE` the renewals starved and the lease ran
/// out within two seconds.) Bounded: three leases long.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_keeper_renews_while_commits_run_back_to_back() {
    const COMMITTERS: usize = 12;
    let pg = cluster();
    let url = pg.url();
    let mut a = contender(&url, "a", settings()).await;
    let term = acquire(&mut a).await.unwrap_or_else(|| panic!("a takes the free lease"));
    let keeper = keep(a, term.clone());
    let leadership = keeper.leadership();
    // Made before the committers start, so that they do not race to create `moves`.
    let observer = client(&url).await;
    let until = Instant::now() + settings().ttl() * 3;
    let mut committers = Vec::new();
    for n in 0..COMMITTERS {
        let (url, fence) = (url.clone(), keeper.fence().clone());
        committers.push(tokio::spawn(async move {
            let mut client = client(&url).await;
            let mut made = 0u32;
            while Instant::now() < until {
                let transaction = client.transaction().await.unwrap_or_else(|e| panic!("{e}"));
                if let Err(e) = fenced(&transaction, &fence).await {
                    return Err(format!("committer {n}'s commit {made} was fenced: {e}"));
                }
                // A commit's other round trips, with the fence held meanwhile.
                transaction
                    .execute("INSERT INTO moves SELECT $1, 'move' FROM pg_sleep(0.02)", &[&fence.epoch().0])
                    .await
                    .unwrap_or_else(|e| panic!("{e}"));
                transaction.commit().await.unwrap_or_else(|e| panic!("{e}"));
                made += 1;
            }
            Ok(made)
        }));
    }
    // Watches the renewals land: each moves expires_at on.
    let (mut renewals, mut last, mut longest, mut since) = (0u32, None, Duration::ZERO, Instant::now());
    while Instant::now() < until {
        let row = observer.query_one("SELECT expires_at FROM leader_lease", &[]).await;
        let expires: std::time::SystemTime = row.unwrap_or_else(|e| panic!("{e}")).get(0);
        if last != Some(expires) {
            if last.is_some() {
                renewals += 1;
                longest = longest.max(since.elapsed());
            }
            (last, since) = (Some(expires), Instant::now());
        }
        sleep(Duration::from_millis(20)).await;
    }
    longest = longest.max(since.elapsed());
    let mut made = 0;
    for committer in committers {
        made += committer.await.unwrap_or_else(|e| panic!("{e}")).unwrap_or_else(|e| panic!("{e}"));
    }
    assert_eq!(
        *leadership.borrow(),
        Leadership::Leading { epoch: term.epoch },
        "a lost the lease while its commits ran ({renewals} renewals seen, the longest gap {longest:?})"
    );
    // Renewals every 400 ms for 6 s: about 15, however many commits run.
    assert!(renewals >= 6, "only {renewals} renewals landed in 6 s while {made} commits ran");
    assert!(longest < settings().ttl() - settings().renew_every(), "a renewal waited {longest:?}");
    assert!(made > 100, "the commits did not run back to back: only {made} in 6 s");
    eprintln!("{made} commits, {renewals} renewals, the longest gap between two {longest:?}");
    assert_eq!(moves_under(&url, term.epoch).await, i64::from(made));
}
