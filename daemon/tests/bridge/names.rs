//! Names nobody can forge (issue 29, items 3 and 4): the same nick on two bridged IRC
//! networks is told apart on each network and in Matrix (`<alice/two>`), and a Matrix
//! display name holding a bidi override or a zero-width space is shown escaped in the
//! bot's announcements in the Matrix room.

use super::support::*;

/// InspIRCd twice (networks `irc` and `two`) and Synapse, side by side.
fn three_servers() -> (InspIrcd, InspIrcd, Synapse) {
    tokio::task::block_in_place(|| {
        std::thread::scope(|scope| {
            let synapse = scope.spawn(Synapse::start);
            let one = InspIrcd::start().unwrap_or_else(|e| panic!("InspIRCd is needed for this test: {e}"));
            let two = InspIrcd::start()
                .unwrap_or_else(|e| panic!("a second InspIRCd is needed for this test: {e}"));
            let synapse = synapse
                .join()
                .unwrap_or_else(|_| panic!("starting Synapse panicked"))
                .unwrap_or_else(|e| panic!("Synapse is needed for this test: {e}"));
            (one, two, synapse)
        })
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_nick_on_two_bridged_irc_networks_is_told_apart_on_each_and_in_matrix() {
    let started = Instant::now();
    let (one, two, synapse) = three_servers();
    synapse.register(BOT, &password(BOT), false).unwrap_or_else(|e| panic!("{e}"));
    let mut watcher = Mx::new(&synapse, "watcher", "Watcher").await;
    let room = bridge_room(&mut watcher, &mut []).await;
    let (mut alice, mut other_alice) =
        tokio::join!(Irc::connect(one.port(), "alice"), Irc::connect(two.port(), "alice"));
    let extra = Extra { second_irc: Some(two.port()), ..Extra::default() };
    let _daemon = start_daemon(&one, &synapse, &room, &extra);
    until_bot_on_irc(&mut alice).await;
    until_bot_on_irc(&mut other_alice).await;
    until_bot_in(&mut watcher, &room).await;
    alice.settle().await;
    other_alice.settle().await;
    watcher.settle().await;
    eprintln!("set up in {:?}", started.elapsed());

    alice.say("I am the first network's alice").await;
    other_alice.expect("<alice/irc> I am the first network's alice").await;
    watcher.expect_in(&room, "<alice/irc> I am the first network's alice").await;
    other_alice.say("and I am the second's").await;
    alice.expect("<alice/two> and I am the second's").await;
    watcher.expect_in(&room, "<alice/two> and I am the second's").await;
    // No line of either came through as a bare `<alice>`.
    for lines in [alice.bot_lines(), other_alice.bot_lines(), watcher.bot_lines(&room)] {
        assert!(!lines.iter().any(|l| l.starts_with("<alice>")), "{lines:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_display_name_that_reverses_or_hides_text_is_shown_escaped_in_announcements() {
    let started = Instant::now();
    let (irc, synapse) = servers();
    synapse.register(BOT, &password(BOT), false).unwrap_or_else(|e| panic!("{e}"));
    let mut watcher = Mx::new(&synapse, "watcher", "Watcher").await;
    let mut mallory = Mx::new(&synapse, "mallory", "\u{202E}niw bob").await;
    let mut carol = Mx::new(&synapse, "carol", "carol\u{200B}").await;
    let room = bridge_room(&mut watcher, &mut [&mut mallory, &mut carol]).await;
    let mut alice = Irc::connect(irc.port(), "alice").await;
    let _daemon = start_daemon(&irc, &synapse, &room, &Extra::default());
    until_bot_on_irc(&mut alice).await;
    until_bot_in(&mut watcher, &room).await;
    alice.settle().await;
    for user in [&mut watcher, &mut mallory, &mut carol] {
        user.settle().await;
    }
    eprintln!("set up in {:?}", started.elapsed());

    // The challenger is named by their display name in the Matrix room's announcement.
    mallory.say(&room, "!duel alice").await;
    let challenge = watcher.expect_in(&room, "challenges").await;
    assert!(challenge.body.contains("\\u{202e}niw bob challenges"), "{}", challenge.body);
    alice.expect("challenges alice").await;
    alice.say("!decline").await;
    watcher.expect_in(&room, "declines the Duel").await;
    carol.say(&room, "!duel alice").await;
    let challenge = watcher.expect_in(&room, "challenges").await;
    assert!(challenge.body.contains("carol\\u{200b} challenges"), "{}", challenge.body);
    for line in watcher.bot_lines(&room) {
        assert!(!line.contains('\u{202E}') && !line.contains('\u{200B}'), "shown raw: {line:?}");
    }
}
