//! Naming anyone present (issue 31, item 1): members of the bridged IRC channel and
//! Matrix room who have said nothing since the daemon started are challenged by IRC
//! nick, by Matrix user id and by a display name with a space in it.

use super::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_members_are_challenged_by_nick_by_matrix_id_and_by_a_display_name_with_a_space() {
    let started = Instant::now();
    let (irc, synapse) = servers();
    synapse.register(BOT, &password(BOT), false).unwrap_or_else(|e| panic!("{e}"));
    let mut watcher = Mx::new(&synapse, "watcher", "Watcher").await;
    let mut noah = Mx::new(&synapse, "noah", "Piet Silent").await;
    let room = bridge_room(&mut watcher, &mut [&mut noah]).await;
    let (mut alice, mut dave) =
        tokio::join!(Irc::connect(irc.port(), "alice"), Irc::connect(irc.port(), "dave"));
    let _daemon = start_daemon(&irc, &synapse, &room, &Extra::default());
    until_bot_on_irc(&mut alice).await;
    until_bot_in(&mut watcher, &room).await;
    for user in [&mut alice, &mut dave] {
        user.settle().await;
    }
    for user in [&mut watcher, &mut noah] {
        user.settle().await;
    }
    eprintln!("set up in {:?}", started.elapsed());

    // dave is in the channel and has said nothing.
    alice.say("!duel dave").await;
    dave.expect("alice challenges dave to a Duel").await;
    dave.say("!decline").await;
    alice.expect("dave declines the Duel").await;

    // noah has said nothing either: his full Matrix id names him.
    alice.say(&format!("!duel {}", noah.id())).await;
    noah.expect_in(&room, "alice challenges Piet Silent").await;
    noah.say(&room, "!decline").await;
    alice.expect("Piet Silent declines the Duel").await;

    // His display name, spaces and all, names him too; a wizard may follow it.
    alice.say("!duel Piet Silent Pyromancer").await;
    noah.expect_in(&room, "alice challenges Piet Silent").await;
    noah.say(&room, "!accept").await;
    alice.expect("Round 1 begins").await;
    for line in alice.bot_lines() {
        assert!(!line.contains("nobody called") && !line.contains("Nobody here"), "{line}");
    }
}
