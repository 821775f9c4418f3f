//! The bot still plays in appservice mode (issue 17, item 5), with the bridge naming its
//! Matrix room by alias: a whole cross-network Duel (spells by IRC PM and Matrix DM, no
//! token heard early, every announcement in both rooms) and a short Thaum, while the IRC
//! players are ghosts in the Matrix room and their chat comes from their ghosts.

use super::duel::{TWO_ROUNDS, assert_nothing_revealed_early};
use super::support::*;

const ALIAS: &str = "#magic:localhost";

/// The ghost of IRC nick `nick` (network `irc`, the default template).
fn ghost(nick: &str) -> String {
    format!("@irc_irc_{nick}:localhost")
}

/// Points `ALIAS` at `room`.
async fn alias(user: &Mx, room: &str) {
    let path = format!("/_matrix/client/v3/directory/room/{}", encode(ALIAS));
    user.client
        .call(Method::PUT, &path, Some(&json!({"room_id": room})))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_duel_and_a_thaum_across_the_bridge_in_appservice_mode() {
    let started = Instant::now();
    let (irc, synapse, appservice) = appservice_servers();
    let mut watcher = Mx::new(&synapse, "watcher", "Watcher").await;
    let mut bobby = Mx::new(&synapse, "bobby", "Bobby").await;
    let room = bridge_room(&mut watcher, &mut [&mut bobby]).await;
    alias(&watcher, &room).await;
    direct_rooms(&mut [&mut bobby]).await;
    let (mut alice, mut ircwatch) =
        tokio::join!(Irc::connect(irc.port(), "alice"), Irc::connect(irc.port(), "ircwatch"));
    // The registration's directory lives as long as `extra`: to the end.
    let extra = Extra { appservice: Some(appservice), ..Extra::default() };
    let daemon = start_daemon(&irc, &synapse, ALIAS, &extra);
    until_bot_on_irc(&mut alice).await;
    until_bot_everywhere(&room, &mut watcher, &mut [&mut bobby]).await;
    for client in [&mut alice, &mut ircwatch] {
        client.settle().await;
    }
    for user in [&mut watcher, &mut bobby] {
        user.settle().await;
    }
    eprintln!("set up in {:?}", started.elapsed());

    // The Duel, as in bot mode, but alice's chat comes from her ghost.
    alice.say("!duel Bobby").await;
    ircwatch.expect("alice challenges Bobby").await;
    watcher.expect_in(&room, "alice challenges Bobby").await;
    bobby.say(&room, "!accept").await;
    ircwatch.expect("Round 1 begins").await;
    watcher.expect_in(&room, "Round 1 begins").await;
    alice.tell_bot("!cast surge fire wind water thunder end").await;
    alice.expect_private("Queued").await;
    alice.say("marker one").await;
    let alice_ghost = ghost("alice");
    let marker = watcher
        .expect_where("alice's marker from her ghost", |m| m.body == "marker one" && m.sender == alice_ghost)
        .await;
    assert_eq!(marker.room_id, room);
    bobby.tell_bot("!cast focus earth earth earth earth end").await;
    bobby.expect_private("Queued").await;
    // On Matrix the round is one message (issue 31).
    let round = watcher.expect_in(&room, "Round 1, step 5").await;
    for needle in ["Round 1 settles", "24 toward alice", "Round 2 begins"] {
        assert!(round.body.contains(needle), "{needle:?} in the round's message: {round}");
    }
    ircwatch.expect("Round 1, steps 0–5").await;
    ircwatch.expect("Round 2 begins").await;
    bobby.tell_bot("!cast focus earth earth earth earth end").await;
    bobby.expect_private("Queued").await;
    bobby.say(&room, "marker two").await;
    ircwatch.expect("<Bobby> marker two").await;
    alice.tell_bot("!cast surge fire earth fire earth end").await;
    alice.expect_private("Queued").await;
    let over = ircwatch.expect("duel is over").await;
    assert!(strip(&over.text).contains("alice"), "alice wins on the track (D-1): {over}");
    watcher.expect_in(&room, "duel is over").await;

    tokio::join!(ircwatch.pump(QUIET), watcher.pump(QUIET));
    assert_nothing_revealed_early(CHANNEL, &ircwatch.channel_lines(), &TWO_ROUNDS);
    assert_nothing_revealed_early("the Matrix room", &watcher.room_lines(&room), &TWO_ROUNDS);
    let matrix_lines = watcher.bot_lines(&room);
    for once in ["Round 1 settles", "Round 2 begins", "duel is over"] {
        assert_eq!(count(&matrix_lines, once), 1, "{once:?} once in the Matrix room: {matrix_lines:#?}");
        assert_eq!(count(&ircwatch.bot_lines(), once), 1, "{once:?} once on IRC");
    }
    assert!(
        !matrix_lines.iter().any(|l| l.starts_with("<alice>")),
        "the bot relays no IRC line in appservice mode: {matrix_lines:#?}"
    );

    // A short Thaum: opened from Matrix, joined from IRC, a phase and a status.
    watcher.settle().await;
    ircwatch.settle().await;
    bobby.say(&room, "!new thaum").await;
    ircwatch.expect("Bobby opens a Thaum table").await;
    watcher.expect_in(&room, "Bobby opens a Thaum table").await;
    alice.say("!join").await;
    watcher.expect_in(&room, "alice joins the Thaum table").await;
    alice.say("!gather 1 fire").await;
    watcher.expect_in(&room, "alice gathers 1 Mana into Fire: Fire 0 → 1").await;
    bobby.say(&room, "!gather 1 air").await;
    ircwatch.expect("Bobby gathers 1 Mana into Air: Air 0 → 1").await;
    bobby.say(&room, "!phase next").await;
    ircwatch.expect("Phase II begins").await;
    alice.say("!bend 1 Bobby").await;
    watcher.expect_in(&room, "alice bends Bobby with 1 Mana").await;
    bobby.say(&room, "!stop").await;
    ircwatch.expect("Bobby stops the Thaum table").await;
    watcher.expect_in(&room, "Bobby stops the Thaum table").await;
    alice.say("good game").await;
    watcher
        .expect_where("alice's last word from her ghost", |m| {
            m.body == "good game" && m.sender == alice_ghost
        })
        .await;
    drop(daemon);
    drop(extra);
    eprintln!("the test took {:?}", started.elapsed());
}
