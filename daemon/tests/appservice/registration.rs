//! Item 1: the registration file, Synapse reading it, and the bot's login with the
//! `as_token` (`m.login.application_service`).

use super::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_registration_is_written_once_and_the_bot_logs_in_with_its_as_token() {
    let port = free_port();
    let mut daemon = prepared(port, "");
    let path = daemon.path(REGISTRATION);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&path).unwrap_or_else(|e| panic!("{e}")).permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the registration is owner-only");
    }
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
    let json: Value =
        serde_json::from_str(&text.lines().filter(|l| !l.starts_with('#')).collect::<Vec<_>>().join("\n"))
            .unwrap_or_else(|e| panic!("the registration is YAML's JSON form ({e}): {text}"));
    assert_eq!(json["url"], format!("http://127.0.0.1:{port}"));
    assert_eq!(
        json["sender_localpart"],
        format!("{BOT}-appservice"),
        "not the bot: Synapse refuses /sync to the sender"
    );
    assert_eq!(json["rate_limited"], false);
    assert_eq!(
        json["namespaces"]["users"],
        json!([
            {"exclusive": true, "regex": "^@irc_[a-z0-9._=/+-]+_[a-z0-9._=/+-]+:localhost$"},
            {"exclusive": true, "regex": "^@spellbridge:localhost$"},
        ])
    );
    assert!(
        json["namespaces"].get("aliases").is_none() && json["namespaces"].get("rooms").is_none(),
        "{json}"
    );
    let as_token = json["as_token"].as_str().unwrap_or_default().to_owned();
    assert!(
        as_token.len() == 64 && json["hs_token"].as_str().is_some_and(|t| t.len() == 64 && t != as_token),
        "{json}"
    );

    // Not overwritten without --force; replaced, with new tokens, with it.
    let again = daemon
        .command(&["appservice-registration", "--config", "spellbridge.toml"])
        .unwrap_or_else(|e| panic!("{e}"));
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(!again.status.success() && stderr.contains("--force"), "a second run refuses: {stderr}");
    assert_eq!(std::fs::read_to_string(&path).unwrap_or_default(), text, "the file is untouched");
    let forced = daemon
        .command(&["appservice-registration", "--config", "spellbridge.toml", "--force"])
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(forced.status.success(), "{}", String::from_utf8_lossy(&forced.stderr));
    let printed = String::from_utf8_lossy(&forced.stdout);
    assert!(printed.trim().ends_with(REGISTRATION), "it prints the path: {printed}");
    assert!(!std::fs::read_to_string(&path).unwrap_or_default().contains(&as_token), "new tokens");

    // Synapse reads it; the bot logs in with the as_token and plays.
    let synapse = synapse_for(&daemon);
    start(&mut daemon, &synapse, port, "");
    let mut alice = person(&synapse, "alice").await;
    let room = games_room(&synapse, &mut alice).await;
    until_bot_answers(&mut alice, &room, &daemon, &synapse).await;
    assert!(daemon.log().contains("logged in to Matrix as a new device"), "{}", daemon.log_tail(40));
    let device =
        bot_device(&daemon).unwrap_or_else(|| panic!("no device in the log:\n{}", daemon.log_tail(40)));

    // A restart restores the same session and device.
    daemon.restart().unwrap_or_else(|e| panic!("{e}"));
    alice.catch_up().await.unwrap_or_else(|e| panic!("{e}"));
    until_bot_answers(&mut alice, &room, &daemon, &synapse).await;
    assert!(daemon.log().contains("restored the saved Matrix session"), "{}", daemon.log_tail(40));
    assert_eq!(bot_device(&daemon).as_deref(), Some(device.as_str()), "the same device after a restart");
    daemon.ensure_running().unwrap_or_else(|e| panic!("{e}"));
}
