//! Item 3 across a restart: the roll call, and the reply index kept. A real InspIRCd
//! channel is bridged with a Synapse room in appservice mode; while the daemon is
//! stopped, one IRC user quits, another stays (and changes the case of their nick), and
//! a third's netsplit leave was being held when it stopped (a hold far longer than the
//! test, so only the restart can end it). Meanwhile a ghost of another IRC network and a
//! ghost of this one that the daemon never made (its `ghosts.json` knows nothing of it)
//! join the room. At the restart the channel's first member list is called against the
//! room, as the homeserver has it: the quitter's, the split user's and the unknown
//! ghost's ghosts leave; the stayer's, the other network's ghost, the real Matrix users
//! and the bot stay. Then an IRC line addressing a Matrix user who spoke before the
//! restart is a Matrix reply to that line (the latest-line index was kept).

use spellbridge_tests::harness::inspircd::InspIrcd;
use spellbridge_tests::harness::matrix_client::Event;

use super::ghosts::{Seen, irc_user, joined, memberships, raw};
use super::support::*;

const SPLIT: &str = "hub.irc.test leaf.irc.test";
/// Far longer than the test: a held leave that ends is ended by the restart.
const MATRIX_KEYS: &str = "netsplit_hold = \"3600s\"";
/// What the daemon logs for each roll call.
const ROLL_CALL: &str = "roll call: the room's ghosts follow the channel's member list";

/// The ghost of IRC nick `nick` (as the id writes it) on the network `irc`.
fn ghost(nick: &str) -> String {
    format!("@irc_irc_{nick}:localhost")
}

/// Registers the appservice user `localpart` and joins it to `room` (the watcher, who
/// made the room, invites it): a ghost the daemon did not make.
async fn planted(synapse: &Synapse, as_token: &str, watcher: &mut MatrixClient, room: &str, localpart: &str) {
    let bot_as =
        MatrixClient::from_token(&synapse.base_url(), &bot_id(), as_token).unwrap_or_else(|e| panic!("{e}"));
    let user = format!("@{localpart}:localhost");
    bot_as
        .call(
            Method::POST,
            "/_matrix/client/v3/register",
            Some(&json!({"type": "m.login.application_service", "username": localpart})),
        )
        .await
        .unwrap_or_else(|e| panic!("registering {user}: {e}"));
    watcher.invite(room, &user).await.unwrap_or_else(|e| panic!("inviting {user}: {e}"));
    let path = format!("/_matrix/client/v3/join/{}?user_id={}", encode(room), encode(&user));
    bot_as.call(Method::POST, &path, Some(&json!({}))).await.unwrap_or_else(|e| panic!("{user} joins: {e}"));
}

/// Waits until the daemon has logged `count` roll calls, within [`STARTUP`].
fn until_roll_calls(daemon: &Daemon, count: usize) {
    let deadline = Instant::now() + STARTUP;
    while daemon.log().matches(ROLL_CALL).count() < count {
        assert!(Instant::now() < deadline, "roll call {count} not logged:\n{}", daemon.log_tail(60));
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ghosts_of_those_gone_while_the_daemon_was_down_leave_at_its_restart() {
    let started = Instant::now();
    let irc = tokio::task::block_in_place(InspIrcd::start)
        .unwrap_or_else(|e| panic!("InspIRCd is needed for this test: {e}"));
    let port = free_port();
    let mut daemon = prepared(port, "");
    let (as_token, _) = tokens(&daemon);
    let synapse = synapse_for(&daemon);
    let mut watcher = person(&synapse, "watcher").await;
    let room = games_room(&synapse, &mut watcher).await;
    let mut stayer = irc_user(irc.port(), "Stayer").await;
    let mut quitter = irc_user(irc.port(), "Qu[i]tter").await;
    let mut drifter = irc_user(irc.port(), "drifter").await;
    let (stayer_ghost, quitter_ghost, drifter_ghost) =
        (ghost("stayer"), ghost("qu=5bi=5dtter"), ghost("drifter"));
    daemon
        .set_config(&config_with(
            &synapse.base_url(),
            port,
            MATRIX_KEYS,
            &irc_sections(irc.port(), Some(&room)),
        ))
        .unwrap_or_else(|e| panic!("{e}"));
    daemon.spawn().unwrap_or_else(|e| panic!("{e}"));
    let mut seen = Seen { client: watcher, room: room.clone(), events: Vec::new() };
    seen.until("the three ghosts joined", &daemon, |e| {
        [&stayer_ghost, &quitter_ghost, &drifter_ghost].iter().all(|g| joined(e, g))
    })
    .await;
    tokio::task::block_in_place(|| until_roll_calls(&daemon, 1));
    eprintln!("ghosts in after {:?}", started.elapsed());

    // The watcher speaks (the line the IRC `watcher: …` will answer after the restart).
    let asked = seen.client.send_text(&room, "anyone for a duel?").await.unwrap_or_else(|e| panic!("{e}"));
    stayer
        .expect_privmsg_matching(|m| m.from == BOT && m.text == "<watcher> anyone for a duel?", WAIT)
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", daemon.log_tail(40)));
    // The drifter is split away; the daemon holds the leave, and stops meanwhile.
    raw(&mut drifter, &format!("QUIT :{SPLIT}")).await;
    assert!(drifter.wait_closed(WAIT).await, "the server did not take the drifter's QUIT");
    tokio::task::block_in_place(|| daemon.wait_for_log("a netsplit's quit: holding the leave", WAIT))
        .unwrap_or_else(|e| panic!("{e}"));
    tokio::task::block_in_place(|| daemon.terminate(Duration::from_secs(15)))
        .unwrap_or_else(|e| panic!("{e}"));
    let members = seen.client.joined_members(&room).await.unwrap_or_else(|e| panic!("{e}"));
    assert!(members.contains(&drifter_ghost), "held, so still in the room at the stop: {members:?}");

    // While the daemon is down: the quitter quits, the stayer changes case, and two
    // ghosts the daemon never made join.
    raw(&mut quitter, "QUIT :gone fishing").await;
    assert!(quitter.wait_closed(WAIT).await, "the server did not take the quitter's QUIT");
    raw(&mut stayer, "NICK STAYER").await;
    let names = stayer.names(CHANNEL).await.unwrap_or_else(|e| panic!("{e}"));
    assert!(names.iter().any(|n| n.trim_start_matches(['@', '+']) == "STAYER"), "{names:?}");
    let (other_ghost, unknown_ghost) = ("@irc_other_zed:localhost", ghost("phantom"));
    planted(&synapse, &as_token, &mut seen.client, &room, "irc_other_zed").await;
    planted(&synapse, &as_token, &mut seen.client, &room, "irc_irc_phantom").await;
    seen.until("the planted ghosts joined", &daemon, |e| joined(e, other_ghost) && joined(e, &unknown_ghost))
        .await;

    // The restart: the roll call.
    let from = seen.events.len();
    tokio::task::block_in_place(|| daemon.spawn()).unwrap_or_else(|e| panic!("{e}"));
    seen.until("the quitter's, the drifter's and the unknown ghost left", &daemon, |e| {
        [&quitter_ghost, &drifter_ghost, &unknown_ghost].iter().all(|g| !joined(e, g))
    })
    .await;
    tokio::task::block_in_place(|| until_roll_calls(&daemon, 2));
    let members = seen.client.joined_members(&room).await.unwrap_or_else(|e| panic!("{e}"));
    for stays in [stayer_ghost.as_str(), other_ghost, "@watcher:localhost", "@bob:localhost", &bot_id()] {
        assert!(members.iter().any(|m| m == stays), "{stays} is still in the room: {members:?}");
    }
    for gone in [&quitter_ghost, &drifter_ghost, &unknown_ghost] {
        assert!(!members.contains(gone), "{gone} left: {members:?}");
        assert_eq!(memberships(&seen.events[from..], gone), ["leave"], "{gone} left once");
    }
    let stayer_after = memberships(&seen.events[from..], &stayer_ghost);
    assert!(!stayer_after.iter().any(|m| m != "join"), "the stayer never left: {stayer_after:?}");
    assert!(
        memberships(&seen.events[from..], other_ghost).is_empty(),
        "another network's ghost is untouched"
    );
    assert!(
        memberships(&seen.events[from..], "@watcher:localhost").is_empty()
            && memberships(&seen.events[from..], "@bob:localhost").is_empty(),
        "real users are untouched"
    );

    // The reply index outlived the restart: the stayer answers the watcher's line.
    let from = seen.events.len();
    stayer.privmsg(CHANNEL, "watcher: me!").await.unwrap_or_else(|e| panic!("{e}"));
    seen.until("the stayer's answer", &daemon, |e| {
        e[from..].iter().any(|e| e.sender == stayer_ghost && e.message().is_some())
    })
    .await;
    let answer: &Event = seen.events[from..]
        .iter()
        .find(|e| e.sender == stayer_ghost && e.message().is_some())
        .unwrap_or_else(|| panic!("{}", seen.listing()));
    assert_eq!(
        answer.content["m.relates_to"]["m.in_reply_to"]["event_id"].as_str(),
        Some(asked.as_str()),
        "a reply to the watcher's line from before the restart: {:?}",
        answer.content
    );
    daemon.ensure_running().unwrap_or_else(|e| panic!("{e}"));
    eprintln!("the test took {:?}", started.elapsed());
}
