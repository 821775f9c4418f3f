//! What the appservice benches share (issue 17): the `[[matrix]]` table of a daemon in
//! appservice mode, and its registration, written by `spellbridge appservice-registration`
//! before the homeserver starts (Synapse reads it from `app_service_config_files`).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The daemon: Cargo builds this package's binary for its benches and names it here.
const SPELLBRIDGE: &str = env!("CARGO_BIN_EXE_spellbridge");

/// The `[[matrix]]` table (with the top-level keys before it) of a daemon in appservice
/// mode whose bot is `@{bot}:localhost`, listening on `port`, in `rooms`; the
/// registration is `appservice.yaml` beside the config; the per-user limit off.
pub fn matrix_table(homeserver: &str, bot: &str, port: u16, store: &Path, rooms: &[String]) -> String {
    let rooms: Vec<String> = rooms.iter().map(|r| format!("{r:?}")).collect();
    format!(
        "prefix = \"!\"\n[store]\npath = \"games.db\"\n\
         [[matrix]]\nname = \"matrix\"\nhomeserver = \"{homeserver}\"\nuser_id = \"@{bot}:localhost\"\n\
         mode = \"appservice\"\nregistration = \"appservice.yaml\"\nlisten = \"127.0.0.1:{port}\"\n\
         store = {store:?}\nrooms = [{}]\ninvite_allow = [\"*:localhost\"]\n\
         [matrix.user_limit]\nenabled = false\n",
        rooms.join(", ")
    )
}

/// Writes the registration of a daemon whose bot is `@{bot}:localhost`, listening on
/// `port`, in `dir` (the config written for it names no room and no homeserver yet;
/// the daemon's own config replaces it); the registration's path.
pub fn registration(dir: &Path, bot: &str, port: u16) -> PathBuf {
    let config = dir.join("spellbridge.toml");
    let rooms = ["!none:localhost".to_owned()];
    let text = matrix_table("http://127.0.0.1:1", bot, port, &dir.join("matrix-store"), &rooms);
    std::fs::write(&config, text).expect("write the config");
    let output = Command::new(SPELLBRIDGE)
        .args(["appservice-registration", "--config"])
        .arg(&config)
        .output()
        .expect("run appservice-registration");
    assert!(output.status.success(), "appservice-registration: {}", String::from_utf8_lossy(&output.stderr));
    dir.join("appservice.yaml")
}
