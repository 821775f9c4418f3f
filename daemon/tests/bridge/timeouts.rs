//! g. The scheduler: a Duel step timeout that comes due while the daemon is down is
//! applied once when it is back (RULES D-9).

use super::support::*;

/// Seconds since the epoch, as the daemon's clock reads them.
fn unix_now() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_timeout_due_while_the_daemon_is_down_is_applied_once_when_it_is_back() {
    let started = Instant::now();
    let (irc, synapse) = servers();
    synapse.register(BOT, &password(BOT), false).unwrap_or_else(|e| panic!("{e}"));
    let mut watcher = Mx::new(&synapse, "watcher", "Watcher").await;
    let mut merlin = Mx::new(&synapse, "mage", "Merlin").await;
    let room = bridge_room(&mut watcher, &mut [&mut merlin]).await;
    let (mut alice, mut ircwatch) =
        tokio::join!(Irc::connect(irc.port(), "alice"), Irc::connect(irc.port(), "ircwatch"));
    const TIMEOUT: f64 = 4.0;
    let extra = Extra { sections: "[duel]\nstep_timeout = \"4s\"\n".to_owned(), ..Extra::default() };
    let mut daemon = start_daemon(&irc, &synapse, &room, &extra);
    until_bot_on_irc(&mut alice).await;
    until_bot_in(&mut watcher, &room).await;
    for client in [&mut alice, &mut ircwatch] {
        client.settle().await;
    }
    // Merlin speaks first: a challenge names someone the bot has heard (issue 13).
    until_bot_in(&mut merlin, &room).await;
    for user in [&mut watcher, &mut merlin] {
        user.settle().await;
    }
    eprintln!("set up in {:?}", started.elapsed());

    alice.say("!duel Merlin").await;
    ircwatch.expect("alice challenges Merlin").await;
    // The round starts at a whole second S when the bot takes the accept, so its first
    // step times out at S + 4 s, after `asked + 3 s` and no later than `begun + 4 s`.
    let asked = unix_now();
    merlin.say(&room, "!accept").await;
    ircwatch.expect("Round 1 begins").await;
    let begun = unix_now();
    alice.tell_bot("!cast surge fire wind end").await;
    alice.expect_private("Queued").await;
    daemon.kill().unwrap_or_else(|e| panic!("{e}"));
    let killed = unix_now();
    assert!(
        killed < asked + TIMEOUT - 1.0,
        "the daemon had to be stopped before the step timed out ({:.1} s after the accept): the \
         machine is too slow for this test",
        killed - asked
    );
    let before = export(&daemon, 0);
    let fired = |table: &Value| -> Vec<i64> {
        table["journal"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|row| row["kind"] == "fired")
            .filter_map(|row| row["entry"]["at"].as_i64())
            .collect()
    };
    assert!(fired(&before).is_empty(), "no timer fired before the daemon stopped: {before:#}");

    // Down over the deadline, and started again well before the next one (S + 8 s).
    let wake = begun + TIMEOUT + 0.3 - unix_now();
    tokio::time::sleep(Duration::from_secs_f64(wake.max(0.0))).await;
    daemon.spawn().unwrap_or_else(|e| panic!("{e}"));
    let step0 = ircwatch.expect("Round 1, step 0").await;
    let (_, placed) =
        strip(&step0.text).split_once(" · ").map(|(a, b)| (a.to_owned(), b.to_owned())).unwrap_or_default();
    // (Names are learnt as people speak: until Merlin speaks after the restart, IRC shows
    // his Matrix id.)
    assert!(placed.ends_with("Power Surge (timed out, RULES D-9)"), "Merlin timed out: {step0}");
    assert!(!strip(&step0.text).split(" · ").next().unwrap_or_default().contains("timed out"), "{step0}");
    watcher.expect_in(&room, "Round 1, step 0").await;
    // The duel goes on live: Merlin times out again at step 1 (End), round 2 starts and,
    // as nobody casts, ends abandoned after two more timeouts. IRC has the compact form:
    // the steps that resolve together share a line (`Round 1, steps 1–2`, as many as
    // alice's concentration rolls let her spell run).
    for needle in ["Round 1, step", "Round 1 settles", "Round 2 begins", "Round 2, step 0"] {
        ircwatch.expect(needle).await;
    }
    let over = watcher.expect_in(&room, "duel is over").await;
    assert!(over.body.contains("abandoned"), "{over}");
    ircwatch.expect("duel is over").await;

    tokio::join!(ircwatch.pump(QUIET), watcher.pump(QUIET));
    let (on_irc, on_matrix) = (ircwatch.bot_lines(), watcher.bot_lines(&room));
    assert_eq!(count(&on_irc, "Round 1, step"), 2, "step 0, then the rest in one line: {on_irc:#?}");
    assert_eq!(count(&on_matrix, "Round 1, step 1"), 1, "a line per step on Matrix: {on_matrix:#?}");
    for lines in [on_irc, on_matrix] {
        for once in ["Round 1, step 0", "Round 1 settles", "Round 2, step 0", "duel is over"] {
            assert_eq!(count(&lines, once), 1, "{once:?} exactly once: {lines:#?}");
        }
        assert_eq!(count(&lines, "timed out"), 4, "four timeouts announced: {lines:#?}");
    }
    assert!(daemon.terminate(Duration::from_secs(15)).is_ok_and(|s| s.success()), "a clean stop");
    let after = export(&daemon, 0);
    let ats = fired(&after);
    assert_eq!(ats.len(), 4, "four timers fired: {after:#}");
    let first = ats[0] as f64;
    assert!(
        first > asked + TIMEOUT - 1.0 && first <= begun + TIMEOUT,
        "the first came due while down: {ats:?}"
    );
    assert!(first < killed + TIMEOUT, "{ats:?}");
    for pair in ats.windows(2) {
        assert_eq!(pair[1] - pair[0], 4, "each timer once, each step 4 s after the last: {ats:?}");
    }
    eprintln!("the test took {:?}", started.elapsed());
}
