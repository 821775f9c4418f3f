//! SIGHUP reloads the config without dropping games (issue 6, Operations): rooms it adds
//! are joined, rooms it drops are left, a new bridge shares the running table and relays
//! chat, and a config with an error is refused whole while the daemon keeps going.
//! Against a real InspIRCd, with the daemon as a child process.

use std::time::{Duration, Instant};

use spellbridge_tests::harness::daemon::Daemon;
use spellbridge_tests::harness::inspircd::InspIrcd;
use spellbridge_tests::harness::irc_client::IrcClient;

const BIN: &str = env!("CARGO_BIN_EXE_spellbridge");
const BOT: &str = "reloader";
const WAIT: Duration = Duration::from_secs(15);

fn config(port: u16, channels: &[&str], bridge: &str) -> String {
    let channels: Vec<String> = channels.iter().map(|c| format!("\"{c}\"")).collect();
    format!(
        "[store]\npath = \"games.db\"\n\
         [[irc]]\nname = \"irc\"\nserver = \"127.0.0.1\"\nport = {port}\ntls = false\nnick = \"{BOT}\"\n\
         channels = [{}]\nrequire_account = false\n[irc.flood]\nenabled = false\n[irc.user_limit]\nenabled = false\n{bridge}",
        channels.join(", ")
    )
}

/// Waits until the bot is (or is not) in `channel`, as NAMES shows it.
async fn wait_membership(client: &mut IrcClient, channel: &str, present: bool, daemon: &Daemon) {
    let deadline = Instant::now() + WAIT;
    loop {
        let names = client.names(channel).await.expect("NAMES");
        if names.iter().any(|n| n.trim_start_matches(['@', '%', '+']) == BOT) == present {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the bot {} {channel} within {WAIT:?}; names {names:?}\n{}",
            if present { "did not join" } else { "did not leave" },
            daemon.log_tail(40)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn sighup_joins_and_leaves_rooms_and_bridges_the_running_table() {
    let server = InspIrcd::start().unwrap_or_else(|e| panic!("{e}"));
    let port = server.port();
    let mut daemon =
        Daemon::start(BIN, &config(port, &["#one", "#two"], "")).unwrap_or_else(|e| panic!("{e}"));
    let mut alice = IrcClient::connect(port, "alice").await.expect("alice connects");
    for channel in ["#one", "#two", "#three"] {
        alice.join(channel).await.expect("join");
    }
    wait_membership(&mut alice, "#two", true, &daemon).await;
    alice.privmsg("#two", "!new thaum").await.expect("send");
    alice
        .expect_privmsg_matching(|m| m.target == "#two" && m.text.contains("Thaum"), WAIT)
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", daemon.log_tail(40)));

    // #one dropped; #two bridged with #three.
    let bridge = "[[bridge]]\nname = \"magic\"\nrooms = [{ network = \"irc\", room = \"#two\" }, \
                  { network = \"irc\", room = \"#three\" }]\n";
    daemon.set_config(&config(port, &["#two"], bridge)).expect("new config");
    daemon.hangup().expect("SIGHUP");
    wait_membership(&mut alice, "#three", true, &daemon).await;
    wait_membership(&mut alice, "#one", false, &daemon).await;

    // The table opened in #two answers in #three, and chat is relayed between them.
    alice.privmsg("#three", "!status").await.expect("send");
    let status = alice
        .expect_privmsg_matching(|m| m.target == "#three" && m.from == BOT, WAIT)
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", daemon.log_tail(40)));
    assert!(status.text.contains("Phase"), "the Thaum table answers in #three: {status}");
    alice.privmsg("#three", "hello over there").await.expect("send");
    let relayed = alice
        .expect_privmsg_matching(|m| m.target == "#two" && m.text.contains("hello over there"), WAIT)
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", daemon.log_tail(40)));
    assert_eq!(relayed.text, "<alice> hello over there");

    // A broken config is refused whole; the daemon keeps its rooms and answers.
    daemon.set_config("this is = not [valid").expect("broken config");
    daemon.hangup().expect("SIGHUP");
    alice.privmsg("#three", "!games").await.expect("send");
    alice
        .expect_privmsg_matching(|m| m.target == "#three" && m.text.contains("Games:"), WAIT)
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", daemon.log_tail(40)));
    // The SIGHUP may be handled after `!games` is answered: wait for its log line.
    daemon.wait_for_log("config not reloaded", WAIT).unwrap_or_else(|e| panic!("{e}"));
    assert!(daemon.is_running());
    let status = daemon.terminate(Duration::from_secs(10)).expect("stops");
    assert!(status.success(), "clean exit on SIGTERM: {status:?}");
}
