//! What the Matrix transport needs to know about one account (the daemon builds it from
//! its validated config).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use spellbridge_core::NetworkId;

use super::appservice::AppserviceOptions;
use super::invite::InviteAllow;
use super::positions::SyncPositions;
use crate::network::MaySend;

/// How the bot proves who it is the first time it starts with an empty `store_dir`.
/// Later starts restore the session saved there and use neither.
#[derive(Clone, PartialEq, Eq)]
pub enum Login {
    /// `m.login.password`: creates a new device on the homeserver.
    Password(String),
    /// An access token issued for a device that has not uploaded E2EE keys yet (for
    /// example from a `/login` done with curl); the device id is read with `/whoami`.
    AccessToken(String),
    /// `m.login.application_service` with the appservice's `as_token` (appservice mode:
    /// the bot is the appservice's sender user and has no password); a new device.
    Appservice(String),
}

impl std::fmt::Debug for Login {
    /// Names the kind of login, never the secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Login::Password(_) => f.write_str("Password(<redacted>)"),
            Login::AccessToken(_) => f.write_str("AccessToken(<redacted>)"),
            Login::Appservice(_) => f.write_str("Appservice(<redacted>)"),
        }
    }
}

/// One Matrix account's connection settings.
#[derive(Clone)]
pub struct MatrixOptions {
    /// The network's name in spellbridge.
    pub network: NetworkId,
    /// The homeserver's client-server API base URL (`https://matrix.example.org`).
    pub homeserver: String,
    /// The bot's full user id (`@spellbridge:example.org`).
    pub user_id: String,
    /// How to log in when no saved session exists.
    pub login: Login,
    /// The display name given to the device created at the first login.
    pub device_name: String,
    /// Where the saved session, the sync position and matrix-sdk's SQLite state and crypto
    /// stores live. One directory per account; losing it means a new device (and the keys
    /// of old encrypted messages).
    pub store_dir: PathBuf,
    /// Encrypts matrix-sdk's SQLite stores at rest with this passphrase; `None` leaves them
    /// plain (protect `store_dir` with file permissions then).
    pub store_passphrase: Option<String>,
    /// Rooms to be in: room ids (`!abc…`) or aliases (`#games:example.org`).
    pub rooms: Vec<String>,
    /// Whose invites are accepted: user ids, `*:server` for anyone on a server, or `*`.
    /// Invites from anyone else are declined.
    pub invite_allow: Vec<String>,
    /// What starts a command. The transport hands over every message (the router parses
    /// commands); it names the prefix when it asks a room to resend an undecryptable one.
    pub prefix: String,
    /// Reconnect backoff: first delay and the most it grows to.
    pub backoff: (Duration, Duration),
    /// How long one `/sync` long-poll waits on the server for new events.
    pub sync_timeout: Duration,
    /// How long an undecryptable message waits for its room key before the room is told.
    pub decrypt_grace: Duration,
    /// Whether tables' board pictures are posted (`m.image`, the previous one of the same
    /// table redacted): `board_images` in `[[matrix]]`, on by default.
    pub board_images: bool,
    /// Whether a direct room the bot creates (for a player who has none with it) is
    /// encrypted: `dm_encryption` in `[[matrix]]`, off by default so that every client can
    /// read it (a room the player opened is used as it is, encrypted or not).
    pub dm_encryption: bool,
    /// Appservice mode (issue 17): the appservice API's listener, tokens and ghosts;
    /// `None` in bot mode.
    pub appservice: Option<AppserviceOptions>,
    /// Where the `/sync` position handled is kept for a daemon that takes over (the
    /// database two daemons share, issue 34); `None`: only in `store_dir`.
    pub positions: Option<Arc<dyn SyncPositions>>,
    /// Asked before the handled position is kept there: false once the daemon may no
    /// longer act (its lease is gone), so a stood-down daemon never moves it.
    pub may_send: MaySend,
}

impl std::fmt::Debug for MatrixOptions {
    /// Shows everything but the secrets.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MatrixOptions")
            .field("network", &self.network)
            .field("homeserver", &self.homeserver)
            .field("user_id", &self.user_id)
            .field("login", &self.login)
            .field("device_name", &self.device_name)
            .field("store_dir", &self.store_dir)
            .field("store_passphrase", &self.store_passphrase.as_ref().map(|_| "<redacted>"))
            .field("rooms", &self.rooms)
            .field("invite_allow", &self.invite_allow)
            .field("prefix", &self.prefix)
            .field("backoff", &self.backoff)
            .field("sync_timeout", &self.sync_timeout)
            .field("decrypt_grace", &self.decrypt_grace)
            .field("board_images", &self.board_images)
            .field("dm_encryption", &self.dm_encryption)
            .field("appservice", &self.appservice)
            .field("positions", &self.positions.as_ref().map(|_| "shared"))
            .field("may_send", &self.may_send)
            .finish()
    }
}

impl MatrixOptions {
    /// Options for a local test homeserver: password login, no rooms, invites accepted
    /// from anyone on the bot's own server, fast reconnects.
    pub fn local(
        network: &str,
        homeserver: &str,
        user_id: &str,
        password: &str,
        store_dir: impl Into<PathBuf>,
    ) -> Self {
        let server = user_id.split_once(':').map_or("localhost", |(_, server)| server);
        MatrixOptions {
            network: NetworkId::new(network),
            homeserver: homeserver.to_owned(),
            user_id: user_id.to_owned(),
            login: Login::Password(password.to_owned()),
            device_name: "spellbridge".to_owned(),
            store_dir: store_dir.into(),
            store_passphrase: None,
            rooms: Vec::new(),
            invite_allow: vec![format!("*:{server}")],
            prefix: "!".to_owned(),
            backoff: (Duration::from_millis(200), Duration::from_secs(5)),
            sync_timeout: Duration::from_secs(30),
            decrypt_grace: Duration::from_secs(5),
            board_images: true,
            dm_encryption: false,
            appservice: None,
            positions: None,
            may_send: MaySend::always(),
        }
    }

    /// The invite allow-list, parsed.
    pub fn invite_allow(&self) -> InviteAllow {
        InviteAllow::new(&self.invite_allow)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_output_never_shows_secrets() {
        let mut options =
            MatrixOptions::local("m", "http://127.0.0.1:1", "@bot:localhost", "hunter2", "/tmp/x");
        options.store_passphrase = Some("sesame".to_owned());
        let shown = format!("{options:?}");
        assert!(!shown.contains("hunter2") && !shown.contains("sesame"), "{shown}");
        assert!(shown.contains("Password(<redacted>)"));
        let token = format!("{:?}", Login::AccessToken("syt_secret".to_owned()));
        assert!(!token.contains("syt_secret"));
    }

    #[test]
    fn local_options_allow_invites_from_the_bots_server() {
        let options = MatrixOptions::local("m", "http://h", "@bot:example.org", "p", "/tmp/x");
        assert_eq!(options.invite_allow, vec!["*:example.org".to_owned()]);
        assert!(options.invite_allow().allows("@alice:example.org"));
        assert!(!options.invite_allow().allows("@mallory:evil.example"));
    }
}
