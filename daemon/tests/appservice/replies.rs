//! Item 4 in appservice mode: a bridge of a real InspIRCd channel and a Synapse room, with
//! the daemon as the homeserver's appservice. A Matrix reply and a reaction to an IRC
//! user's relayed line name that user on IRC (`watcher: alice: …` is never what IRC
//! sees); an IRC line addressing a Matrix user by name is sent as a Matrix reply to that
//! user's latest line. The relayed line is found by its words, whoever sends it into the
//! room (the bot, or the IRC user's ghost).

use spellbridge_tests::harness::inspircd::InspIrcd;
use spellbridge_tests::harness::irc_client::{IrcClient, Message as IrcMessage};

use super::support::*;

/// The next PRIVMSG from the bot in the channel whose text (formatting stripped)
/// contains `needle`, within [`WAIT`].
async fn irc_expect(client: &mut IrcClient, needle: &str, daemon: &Daemon) -> IrcMessage {
    let wanted = |m: &IrcMessage| {
        m.from == BOT
            && m.target == CHANNEL
            && spellbridge_adapters::irc::format::strip(&m.text).contains(needle)
    };
    client
        .expect_privmsg_matching(wanted, WAIT)
        .await
        .unwrap_or_else(|e| panic!("{e}\n--- the daemon's log ends:\n{}", daemon.log_tail(40)))
}

/// The next message in `room` (from anyone but `client`) whose body contains `needle`.
async fn matrix_expect(client: &mut MatrixClient, room: &str, needle: &str) -> (String, String) {
    let me = client.user_id().to_owned();
    let message = client
        .expect_message_matching(|m| m.room_id == room && m.sender != me && m.body.contains(needle), WAIT)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    (message.event_id, message.body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replies_and_reactions_find_their_speakers_in_appservice_mode() {
    let started = Instant::now();
    let irc = tokio::task::block_in_place(InspIrcd::start)
        .unwrap_or_else(|e| panic!("InspIRCd is needed for this test: {e}"));
    let port = free_port();
    let mut daemon = prepared(port, &irc_sections(irc.port(), None));
    let synapse = synapse_for(&daemon);
    start(&mut daemon, &synapse, port, &irc_sections(irc.port(), None));
    let mut watcher = person(&synapse, "watcher").await;
    let room = games_room(&synapse, &mut watcher).await;
    until_bot_answers(&mut watcher, &room, &daemon, &synapse).await;
    // Now the bridge of the room the bot is in (SIGHUP).
    daemon
        .set_config(&config(&synapse.base_url(), port, &irc_sections(irc.port(), Some(&room))))
        .unwrap_or_else(|e| panic!("{e}"));
    daemon.hangup().unwrap_or_else(|e| panic!("{e}"));
    daemon.wait_for_log("config reloaded", WAIT).unwrap_or_else(|e| panic!("{e}"));
    let mut alice = IrcClient::connect(irc.port(), "alice").await.unwrap_or_else(|e| panic!("{e}"));
    alice.join(CHANNEL).await.unwrap_or_else(|e| panic!("{e}"));
    let deadline = Instant::now() + STARTUP;
    loop {
        assert!(Instant::now() < deadline, "the bot never answered in {CHANNEL}:\n{}", daemon.log_tail(40));
        alice.privmsg(CHANNEL, "!games").await.unwrap_or_else(|e| panic!("{e}"));
        let answered = alice
            .expect_privmsg_matching(
                |m| m.from == BOT && m.target == CHANNEL && m.text.contains("Games:"),
                Duration::from_secs(2),
            )
            .await;
        if answered.is_ok() {
            break;
        }
    }
    watcher.catch_up().await.unwrap_or_else(|e| panic!("{e}"));
    eprintln!("set up in {:?}", started.elapsed());

    // A reply and a reaction to alice's relayed line name alice on IRC.
    let words = "the first words of a line long enough to be cut short";
    alice.privmsg(CHANNEL, words).await.unwrap_or_else(|e| panic!("{e}"));
    let (line, _) = matrix_expect(&mut watcher, &room, words).await;
    let reply = json!({
        "msgtype": "m.text",
        "body": "indeed",
        "m.relates_to": {"m.in_reply_to": {"event_id": line}},
    });
    watcher.send_message(&room, reply).await.unwrap_or_else(|e| panic!("{e}"));
    let answer = irc_expect(&mut alice, "indeed", &daemon).await;
    assert_eq!(answer.text, "<watcher> alice: indeed", "{answer}");
    watcher.react(&room, &line, "👍").await.unwrap_or_else(|e| panic!("{e}"));
    let reaction = irc_expect(&mut alice, "reacted", &daemon).await;
    assert_eq!(
        reaction.text,
        "\u{1}ACTION watcher reacted 👍 to alice's \u{201c}the first words of a line long enough to…\u{201d}\u{1}"
    );

    // alice answers the watcher by name: a Matrix reply to the watcher's latest line.
    let asked = watcher.send_text(&room, "anyone for a duel?").await.unwrap_or_else(|e| panic!("{e}"));
    irc_expect(&mut alice, "anyone for a duel?", &daemon).await;
    alice.privmsg(CHANNEL, "watcher: me!").await.unwrap_or_else(|e| panic!("{e}"));
    let (addressed, _) = matrix_expect(&mut watcher, &room, "watcher: me!").await;
    let event = watcher.event(&room, &addressed).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        event.content["m.relates_to"]["m.in_reply_to"]["event_id"].as_str(),
        Some(asked.as_str()),
        "{:?}",
        event.content
    );
    daemon.ensure_running().unwrap_or_else(|e| panic!("{e}"));
    eprintln!("the test took {:?}", started.elapsed());
}
