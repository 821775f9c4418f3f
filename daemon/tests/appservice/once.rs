//! Issue 29, item 5: in appservice mode the homeserver pushes each event in a transaction
//! and the bot's own `/sync` brings it too. A command that commits nothing (a question, a
//! refusal) was answered once per path: `!games`, `!top` and `!help duel` twice, and the
//! command limit counted double. Against a real Synapse, a whole Thaum game with
//! questions, moves and refusals is played in a room and every bot event that answers a
//! command is counted: each question and refusal is answered exactly once, and no bot
//! message is said twice.

use std::collections::BTreeMap;

use super::support::*;

/// How long the room stays quiet before a command's answers are counted: the second
/// path's copy of an event comes within a moment of the first.
const QUIET: Duration = Duration::from_secs(2);

/// Sends `command` and returns the bot's messages in the room until it was quiet for
/// [`QUIET`] after the first (bounded).
async fn answers_to(client: &mut MatrixClient, room: &str, command: &str, daemon: &Daemon) -> Vec<String> {
    client.send_text(room, command).await.unwrap_or_else(|e| panic!("{e}"));
    let bot = bot_id();
    let deadline = Instant::now() + WAIT;
    let mut said = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(!left.is_zero(), "no answer to {command}; the log ends:\n{}", daemon.log_tail(40));
        let wait = if said.is_empty() { left } else { QUIET.min(left) };
        match client.next_message(wait).await {
            Some(m) if m.sender == bot && m.room_id == room => said.push(m.body),
            Some(_) => {}
            None if said.is_empty() => {}
            None => return said,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_appservice_game_answers_every_message_exactly_once() {
    let port = free_port();
    let mut daemon = prepared(port, "");
    let synapse = synapse_for(&daemon);
    let mut alice = person(&synapse, "alice").await;
    let room_id = games_room(&synapse, &mut alice).await;
    start(&mut daemon, &synapse, port, "[thaum]\nschedule = \"manual\"\n");
    until_bot_answers(&mut alice, &room_id, &daemon, &synapse).await;
    alice.catch_up().await.unwrap_or_else(|e| panic!("{e}"));

    // Each command, and whether it only asks or is refused (one answer, exactly).
    let script = [
        ("!games", true),
        ("!help duel", true),
        ("!top", true),
        ("!new thaum", false),
        ("!join", false),
        ("!status", true),
        ("!coins alice +2", false),
        ("!coins alice lots", true),
        ("!frobnicate", true),
        ("!status", true),
        ("!stop", false),
        ("!top thaum", true),
    ];
    let mut told = Vec::new();
    for (command, once) in script {
        let said = answers_to(&mut alice, &room_id, command, &daemon).await;
        if once {
            assert_eq!(said.len(), 1, "{command} was answered {} times: {said:#?}", said.len());
        }
        told.push((command, said));
    }
    let mut bodies: BTreeMap<&str, usize> = BTreeMap::new();
    for body in told.iter().flat_map(|(_, said)| said) {
        *bodies.entry(body.as_str()).or_default() += 1;
    }
    let twice: Vec<_> = bodies.iter().filter(|(body, n)| **n > 1 && !body.contains("Mana")).collect();
    assert!(twice.is_empty(), "the bot said these more than once: {twice:#?}\nall: {told:#?}");
}
