//! What the appservice tests share: the daemon's config in appservice mode, its
//! registration written by `spellbridge appservice-registration`, a Synapse that reads
//! it, and raw Matrix clients as the people.

pub(super) use std::time::Duration;

pub(super) use serde_json::{Value, json};
pub(super) use spellbridge_tests::harness::daemon::Daemon;
pub(super) use spellbridge_tests::harness::matrix_client::{MatrixClient, Method, encode};
pub(super) use spellbridge_tests::harness::synapse::{Options, Synapse};
pub(super) use tokio::time::Instant;

pub(super) const BIN: &str = env!("CARGO_BIN_EXE_spellbridge");
pub(super) const BOT: &str = "spellbridge";
pub(super) const REGISTRATION: &str = "appservice.yaml";
/// How long one expected message may take.
pub(super) const WAIT: Duration = Duration::from_secs(20);
/// How long the daemon may take to start, log in and answer.
pub(super) const STARTUP: Duration = Duration::from_secs(60);

pub(super) fn bot_id() -> String {
    format!("@{BOT}:localhost")
}

/// A loopback port nobody listens on now, for the appservice listener.
pub(super) fn free_port() -> u16 {
    let listener =
        std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("binding a port: {e}"));
    listener.local_addr().unwrap_or_else(|e| panic!("{e}")).port()
}

/// The daemon's config in appservice mode: the bot without a password, the registration
/// beside the config, the appservice API on `port`.
pub(super) fn config(homeserver: &str, port: u16, sections: &str) -> String {
    config_with(homeserver, port, "", sections)
}

/// [`config`] with `matrix_keys` (lines) added to the `[[matrix]]` table.
pub(super) fn config_with(homeserver: &str, port: u16, matrix_keys: &str, sections: &str) -> String {
    format!(
        r#"prefix = "!"

[store]
path = "games.db"

[[matrix]]
name = "matrix"
homeserver = "{homeserver}"
user_id = "{bot}"
mode = "appservice"
registration = "{REGISTRATION}"
listen = "127.0.0.1:{port}"
store = "matrix-store"
invite_allow = ["*:localhost"]
reconnect_delay = "1s"
{matrix_keys}

[matrix.user_limit]
enabled = false

{sections}
"#,
        bot = bot_id(),
    )
}

/// A daemon dir with the config and the registration written by the binary; the config
/// names a homeserver that is not there yet (the registration does not depend on it).
pub(super) fn prepared(port: u16, sections: &str) -> Daemon {
    let mut daemon = Daemon::new(BIN).unwrap_or_else(|e| panic!("{e}"));
    daemon.env("RUST_LOG", "info,spellbridge=debug,spellbridge_adapters=debug");
    daemon.set_config(&config("http://127.0.0.1:1", port, sections)).unwrap_or_else(|e| panic!("{e}"));
    let output = daemon
        .command(&["appservice-registration", "--config", "spellbridge.toml"])
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        output.status.success(),
        "appservice-registration failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    daemon
}

/// The registration's tokens: (as_token, hs_token).
pub(super) fn tokens(daemon: &Daemon) -> (String, String) {
    let text = std::fs::read_to_string(daemon.path(REGISTRATION)).unwrap_or_else(|e| panic!("{e}"));
    let json: Value =
        serde_json::from_str(&text.lines().filter(|l| !l.starts_with('#')).collect::<Vec<_>>().join("\n"))
            .unwrap_or_else(|e| panic!("{e}"));
    let token = |key: &str| json[key].as_str().unwrap_or_else(|| panic!("no {key}")).to_owned();
    (token("as_token"), token("hs_token"))
}

/// Synapse with the daemon's registration in `app_service_config_files`.
pub(super) fn synapse_for(daemon: &Daemon) -> Synapse {
    let options = Options { app_services: vec![daemon.path(REGISTRATION)], ..Options::default() };
    tokio::task::block_in_place(|| Synapse::start_with(options))
        .unwrap_or_else(|e| panic!("Synapse is needed for this test: {e}"))
}

/// Points the config at `synapse` and starts the daemon.
pub(super) fn start(daemon: &mut Daemon, synapse: &Synapse, port: u16, sections: &str) {
    daemon.set_config(&config(&synapse.base_url(), port, sections)).unwrap_or_else(|e| panic!("{e}"));
    daemon.spawn().unwrap_or_else(|e| panic!("{e}"));
}

/// Registers `localpart` (password `<localpart>-password`) and returns its client.
pub(super) async fn person(synapse: &Synapse, localpart: &str) -> MatrixClient {
    let (user_id, token) = synapse
        .register(localpart, &format!("{localpart}-password"), false)
        .unwrap_or_else(|e| panic!("registering {localpart}: {e}"));
    MatrixClient::from_token(&synapse.base_url(), &user_id, &token).unwrap_or_else(|e| panic!("{e}"))
}

/// A room `creator` makes with the bot and a second person (bob, who joins): a room of
/// two would be a direct chat, answered privately.
pub(super) async fn games_room(synapse: &Synapse, creator: &mut MatrixClient) -> String {
    let mut bob = person(synapse, "bob").await;
    let room = creator
        .create_room("games", &[bot_id(), bob.user_id().to_owned()], false)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    bob.join(&room).await.unwrap_or_else(|e| panic!("{e}"));
    room
}

/// Says `!games` in `room` until the bot answers there, within [`STARTUP`].
pub(super) async fn until_bot_answers(
    client: &mut MatrixClient,
    room: &str,
    daemon: &Daemon,
    synapse: &Synapse,
) {
    let bot = bot_id();
    let deadline = Instant::now() + STARTUP;
    loop {
        assert!(
            Instant::now() < deadline,
            "the bot never answered in {room}; its log ends:\n{}\n--- Synapse's log ends:\n{}",
            daemon.log_tail(60),
            synapse.log_tail(40)
        );
        client.send_text(room, "!games").await.unwrap_or_else(|e| panic!("{e}"));
        let until = Instant::now() + Duration::from_secs(2);
        while let Some(m) = client.next_message(until.saturating_duration_since(Instant::now())).await {
            if m.sender == bot && m.room_id == room && m.body.contains("Games:") {
                return;
            }
        }
    }
}

/// The device the daemon's log says the bot logged in or restored with, the last time.
pub(super) fn bot_device(daemon: &Daemon) -> Option<String> {
    let log = daemon.log();
    let line = log.lines().rev().find(|l| {
        l.contains("logged in to Matrix as a new device") || l.contains("restored the saved Matrix session")
    })?;
    let start = line.find("device=")? + "device=".len();
    Some(line[start..].split_whitespace().next()?.to_owned())
}

/// The IRC channel the bridges of these tests bridge.
pub(super) const CHANNEL: &str = "#magic";

/// The `[[irc]]` table for the test InspIRCd (no flood control, no services account
/// needed) and, with `room` (an id or an alias), the bridge of [`CHANNEL`] and that room.
pub(super) fn irc_sections(irc_port: u16, room: Option<&str>) -> String {
    let mut text = format!(
        "[[irc]]\nname = \"irc\"\nserver = \"127.0.0.1\"\nport = {irc_port}\ntls = false\nnick = \"{BOT}\"\n\
         require_account = false\nreconnect_delay = \"1s\"\n\n[irc.flood]\nenabled = false\n\n\
         [irc.user_limit]\nenabled = false\n"
    );
    if let Some(room) = room {
        text.push_str(&format!(
            "\n[[bridge]]\nname = \"magic\"\n\
             rooms = [{{ network = \"irc\", room = \"{CHANNEL}\" }}, {{ network = \"matrix\", room = \"{room}\" }}]\n"
        ));
    }
    text
}
