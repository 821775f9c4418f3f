//! Issue 31, item 2: the direct chat the bot opened with a Matrix player is used again
//! after the daemon restarts: the next private word goes to the same room, and the bot
//! neither creates another nor invites the player again.

use super::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bots_direct_chat_is_used_again_after_a_restart() {
    let (irc, synapse) = servers();
    synapse.register(BOT, &password(BOT), false).unwrap_or_else(|e| panic!("{e}"));
    let mut watcher = Mx::new(&synapse, "watcher", "Watcher").await;
    let mut noah = Mx::new(&synapse, "noah", "Noah").await;
    let room = bridge_room(&mut watcher, &mut [&mut noah]).await;
    let mut alice = Irc::connect(irc.port(), "alice").await;
    let mut daemon = start_daemon(&irc, &synapse, &room, &Extra::default());
    until_bot_on_irc(&mut alice).await;
    until_bot_in(&mut noah, &room).await;
    for user in [&mut watcher, &mut noah] {
        user.settle().await;
    }
    alice.settle().await;

    // The duel starts: the bot opens a direct chat with Noah, who joins it.
    alice.say("!duel Noah").await;
    watcher.expect_in(&room, "alice challenges Noah").await;
    noah.say(&room, "!accept").await;
    let invite = noah.client.wait_invite(WAIT).await.unwrap_or_else(|| {
        panic!("Noah was not invited to a direct chat; the daemon's log:\n{}", daemon.log())
    });
    assert_eq!((invite.inviter.as_str(), invite.is_direct), (bot_id().as_str(), true), "{invite:?}");
    noah.client.accept_invite(&invite.room_id).await.unwrap_or_else(|e| panic!("{e}"));
    noah.dm = Some(invite.room_id.clone());
    noah.expect_private("Your Duel against alice has begun").await;

    // The daemon stops (SIGTERM) and starts again on the same store.
    tokio::task::block_in_place(|| daemon.restart()).unwrap_or_else(|e| panic!("{e}"));
    until_bot_in(&mut watcher, &room).await;

    // A spell typed in the room is answered privately: in the same direct chat.
    noah.say(&room, "!cast focus earth earth earth earth end").await;
    noah.expect_private("Don't reveal your spell in the room").await;
    // And the bot reads that chat: a spell sent there is queued, answered there.
    noah.tell_bot("!cast focus earth earth earth earth end").await;
    noah.expect_private("Queued").await;
    noah.pump(QUIET).await;
    assert!(noah.client.invites().is_empty(), "no second invite: {:?}", noah.client.invites());
    let log = daemon.log();
    let created = log.lines().filter(|l| l.contains("created a direct room")).count();
    assert_eq!(created, 1, "one direct room created in both runs; the daemon's log:\n{log}");
}
