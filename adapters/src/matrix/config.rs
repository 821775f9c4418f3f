//! `[[matrix]]`: one Matrix bot account's config section, read and checked into
//! [`MatrixSettings`] (defaults filled in, secrets read), and the Matrix
//! [`NetworkKind`] that the daemon's network registry lists: how the section reads, how
//! the transport starts, and how `check-config --connect` tries it once (log in to a
//! throw-away store and ask the homeserver `whoami`; a password login's new device is
//! logged out again, a configured access token is left as it is).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use matrix_sdk::ruma::RoomAliasId;
use serde::Deserialize;
use tokio::sync::watch;

use super::appservice::{self, AppserviceSettings, registration::Plan};
use super::connect::connect;
use super::options::{Login, MatrixOptions};
use super::store::StoreDir;
use super::transport::MatrixTransport;
use crate::error_chain;
use crate::network::{self, Ids, Network, NetworkKind, Resolved, Start, Transport, UserLimit};
use crate::secret::{Secret, SecretSource};
use crate::supervise::Connection;
use spellbridge_core::time::parse_duration;

/// The most relayed chat lines to one room sent as one Matrix message (a homeserver
/// takes far fewer events per second than an IRC channel carries lines).
pub const MERGE_LINES: usize = 32;

/// The Matrix kind: `[[matrix]]` sections.
#[derive(Clone, Copy, Debug, Default)]
pub struct MatrixKind;

impl NetworkKind for MatrixKind {
    fn section(&self) -> &'static str {
        "matrix"
    }

    fn configure(&self, table: toml::Table, base: &Path) -> Result<Arc<dyn Network>, String> {
        let name = network::name_of(&table, "matrix")?;
        let raw: Matrix = network::parse_table(table, &format!("[[matrix]] `{name}`: "))?;
        Ok(Arc::new(settings(raw, base)?))
    }
}

#[async_trait]
impl Transport for MatrixTransport {
    fn connection(&self) -> watch::Receiver<Connection> {
        self.connection()
    }

    fn reconnects(&self) -> u64 {
        MatrixTransport::reconnects(self)
    }

    async fn resolve_room(&self, room: &str) -> Resolved {
        MatrixTransport::resolve_room(self, room).await
    }
}

/// `[[matrix]]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Matrix {
    /// The network's name in spellbridge.
    name: String,
    /// The homeserver's URL, e.g. "https://matrix.example.org".
    homeserver: String,
    /// The bot's user id, e.g. "@spellbridge:example.org".
    user_id: String,
    /// Its password (for the first login; the session is kept afterwards).
    password: Option<SecretSource>,
    /// Or an access token.
    access_token: Option<SecretSource>,
    /// The device's display name (default "spellbridge").
    device_name: Option<String>,
    /// Where the session and the encryption keys are kept (default "matrix-<name>" beside
    /// the config). Back it up: losing it loses the bot's device and keys.
    store: Option<PathBuf>,
    /// Encrypts that store at rest.
    store_passphrase: Option<SecretSource>,
    /// Rooms to join: ids or aliases.
    #[serde(default)]
    rooms: Vec<String>,
    /// Whose invites are accepted: "@user:server", "*:server" or "*" (default: nobody's).
    #[serde(default)]
    invite_allow: Vec<String>,
    /// The first wait before reconnecting (default "1s").
    reconnect_delay: Option<String>,
    /// `[matrix.user_limit]`.
    user_limit: Option<UserLimit>,
    /// Post tables' board pictures in this account's rooms (default true).
    board_images: Option<bool>,
    /// Encrypt the direct rooms the bot creates for players who have none (default
    /// false: every client can read them).
    dm_encryption: Option<bool>,
    /// "bot" (the default: one bot account speaks for everyone) or "appservice".
    mode: Option<String>,
    /// Appservice mode: the registration file (relative to the config).
    registration: Option<PathBuf>,
    /// Appservice mode: where the appservice API listens, e.g. "127.0.0.1:9009".
    listen: Option<String>,
    /// Appservice mode: where the homeserver reaches that API (default `http://{listen}`).
    url: Option<String>,
    /// Appservice mode: the ghosts' user id template.
    ghost_user: Option<String>,
    /// Appservice mode: the ghosts' display name template.
    ghost_name: Option<String>,
    /// Appservice mode: how long the leaves of a netsplit's quits are held (default "30s").
    netsplit_hold: Option<String>,
}

/// One Matrix bot account, checked.
#[derive(Clone, Debug)]
pub struct MatrixSettings {
    /// Its name in spellbridge.
    pub name: String,
    /// The homeserver URL.
    pub homeserver: String,
    /// The bot's user id.
    pub user_id: String,
    /// Password or access token.
    pub login: MatrixLogin,
    /// The device's display name.
    pub device_name: String,
    /// Session and key store directory.
    pub store: PathBuf,
    /// Passphrase for that store.
    pub store_passphrase: Option<Secret>,
    /// Rooms to join.
    pub rooms: Vec<String>,
    /// Whose invites are accepted.
    pub invite_allow: Vec<String>,
    /// The first wait before reconnecting.
    pub reconnect_delay: Duration,
    /// Per-player command limit: commands per window; `None` is off.
    pub user_limit: Option<(u32, Duration)>,
    /// Whether tables' board pictures are posted in this account's rooms.
    pub board_images: bool,
    /// Whether the direct rooms the bot creates are encrypted.
    pub dm_encryption: bool,
    /// Appservice mode's settings; `None` in bot mode.
    pub appservice: Option<AppserviceSettings>,
}

/// How the Matrix bot logs in the first time.
#[derive(Clone, Debug)]
pub enum MatrixLogin {
    /// With a password.
    Password(Secret),
    /// With an access token.
    AccessToken(Secret),
    /// Appservice mode: `m.login.application_service` with the registration's `as_token`.
    Appservice,
}

impl MatrixSettings {
    /// The transport's options: the settings with the prefix.
    pub fn options(&self, prefix: &str) -> MatrixOptions {
        let mut options =
            MatrixOptions::local(&self.name, &self.homeserver, &self.user_id, "", self.store.clone());
        options.login = match &self.login {
            MatrixLogin::Password(secret) => Login::Password(secret.expose().to_owned()),
            MatrixLogin::AccessToken(secret) => Login::AccessToken(secret.expose().to_owned()),
            MatrixLogin::Appservice => Login::Appservice(
                self.appservice.as_ref().map(|a| a.tokens.as_token.clone()).unwrap_or_default(),
            ),
        };
        options.appservice = self.appservice.as_ref().map(AppserviceSettings::options);
        options.device_name = self.device_name.clone();
        options.store_passphrase = self.store_passphrase.as_ref().map(|s| s.expose().to_owned());
        options.rooms = self.rooms.clone();
        options.invite_allow = self.invite_allow.clone();
        options.prefix = prefix.to_owned();
        options.backoff = (self.reconnect_delay, Duration::from_secs(120).max(self.reconnect_delay));
        options.board_images = self.board_images;
        options.dm_encryption = self.dm_encryption;
        options
    }
}

#[async_trait]
impl Network for MatrixSettings {
    fn kind(&self) -> &'static str {
        "matrix"
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn rooms(&self) -> &[String] {
        &self.rooms
    }

    fn user_limit(&self) -> Option<(u32, Duration)> {
        self.user_limit
    }

    fn ids(&self) -> Ids {
        Ids::Global
    }

    /// A room id (`!abc…`) or an alias (`#magic:example.org`, looked up when the
    /// daemon starts and on every SIGHUP, so a room the alias is moved to is followed).
    fn check_bridge_room(&self, room: &str) -> Result<(), String> {
        if room.starts_with('!') || RoomAliasId::parse(room).is_ok() {
            return Ok(());
        }
        Err(format!(
            "`{room}` on {} is neither a Matrix room id nor an alias; give the room's alias, e.g. \
             room = \"#magic:example.org\", or its id, e.g. room = \"!abc:example.org\" \
             (Element shows both under Room settings, General and Advanced)",
            self.name
        ))
    }

    fn is_alias(&self, room: &str) -> bool {
        RoomAliasId::parse(room).is_ok()
    }

    fn merge_lines(&self) -> usize {
        MERGE_LINES
    }

    fn describe(&self) -> String {
        let mode = match &self.appservice {
            Some(appservice) => format!(", {}", appservice.describe()),
            None => String::new(),
        };
        format!(
            "{} as {}, store {}, rooms {}, invites accepted from {}{}{}{mode}",
            self.homeserver,
            self.user_id,
            self.store.display(),
            self.rooms.join(" "),
            if self.invite_allow.is_empty() { "nobody".to_owned() } else { self.invite_allow.join(" ") },
            if self.board_images { "" } else { ", no board pictures" },
            if self.dm_encryption { ", the direct rooms it creates encrypted" } else { "" },
        )
    }

    fn start(&self, start: Start) -> (Arc<dyn Transport>, tokio::task::JoinHandle<()>) {
        let mut options = self.options(&start.prefix);
        options.rooms = start.rooms;
        options.positions = start.positions;
        options.may_send = start.may_send;
        let (transport, supervisor) = MatrixTransport::start_with(options, start.stop, start.txns);
        (transport, supervisor)
    }

    async fn check(&self, prefix: &str, limit: Duration) -> Result<String, String> {
        let dir =
            std::env::temp_dir().join(format!("spellbridge-check-{}-{}", std::process::id(), self.name));
        let mut options = self.options(prefix);
        options.store_dir = dir.clone();
        let store = StoreDir::new(&dir);
        let result = tokio::time::timeout(limit, async {
            let (client, _) = connect(&options, &store).await.map_err(|e| error_chain(&e))?;
            let whoami = client.whoami().await.map_err(|e| error_chain(&e));
            if matches!(options.login, Login::Password(_) | Login::Appservice(_)) {
                // The login made a device for this check only.
                let _ = client.matrix_auth().logout().await;
            }
            whoami.map(|w| format!("logged in as {}", w.user_id))
        })
        .await
        .unwrap_or_else(|_| Err(format!("no login within {limit:?}")));
        let _ = std::fs::remove_dir_all(&dir);
        result
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

fn settings(raw: Matrix, base: &Path) -> Result<MatrixSettings, String> {
    let name = raw.name.clone();
    let at = |what: &str| format!("[[matrix]] `{name}`: {what}");
    if !(raw.homeserver.starts_with("https://") || raw.homeserver.starts_with("http://")) {
        return Err(at("`homeserver` must be a URL, e.g. homeserver = \"https://matrix.example.org\""));
    }
    if !raw.user_id.starts_with('@') || !raw.user_id.contains(':') {
        return Err(at("`user_id` must be a full Matrix id, e.g. user_id = \"@spellbridge:example.org\""));
    }
    let appservice = appservice::config::check(&appservice_keys(&raw, &name), base)
        .and_then(|checked| checked.map(appservice::config::Checked::read_tokens).transpose())
        .map_err(|e| at(&e))?;
    let login = match (raw.password, raw.access_token) {
        (None, None) if appservice.is_some() => MatrixLogin::Appservice,
        (Some(_), _) | (_, Some(_)) if appservice.is_some() => {
            return Err(at(
                "in appservice mode the bot logs in with the registration's as_token: remove `password` and `access_token`",
            ));
        }
        (Some(password), None) => {
            MatrixLogin::Password(password.read().map_err(|e| at(&format!("password: {e}")))?)
        }
        (None, Some(token)) => {
            MatrixLogin::AccessToken(token.read().map_err(|e| at(&format!("access_token: {e}")))?)
        }
        _ => {
            return Err(at(
                "give exactly one of `password` or `access_token`, e.g. password = { env = \"MATRIX_PASSWORD\" }",
            ));
        }
    };
    let store = raw.store.unwrap_or_else(|| PathBuf::from(format!("matrix-{name}")));
    let store = if store.is_relative() { base.join(store) } else { store };
    let store_passphrase = raw
        .store_passphrase
        .map(|s| s.read().map_err(|e| at(&format!("store_passphrase: {e}"))))
        .transpose()?;
    let reconnect_delay = match &raw.reconnect_delay {
        Some(text) => parse_duration(text)
            .filter(|s| *s > 0)
            .map(|s| Duration::from_secs(s.unsigned_abs()))
            .ok_or_else(|| at(&format!("reconnect_delay `{text}` is not a duration; write e.g. \"1s\"")))?,
        None => Duration::from_secs(1),
    };
    let user_limit = network::user_limit(raw.user_limit, &at)?;
    Ok(MatrixSettings {
        user_limit,
        homeserver: raw.homeserver,
        user_id: raw.user_id,
        login,
        device_name: raw.device_name.unwrap_or_else(|| "spellbridge".to_owned()),
        store,
        store_passphrase,
        rooms: raw.rooms,
        invite_allow: raw.invite_allow,
        reconnect_delay,
        board_images: raw.board_images.unwrap_or(true),
        dm_encryption: raw.dm_encryption.unwrap_or(false),
        appservice,
        name,
    })
}

/// What `spellbridge appservice-registration` writes for one `[[matrix]]` table: the
/// registration file's path and what goes in it; `None` for a network in bot mode. The
/// registration file itself is not read (it may not exist yet).
pub fn registration_plan(table: toml::Table, base: &Path) -> Result<Option<(PathBuf, Plan)>, String> {
    let name = network::name_of(&table, "matrix")?;
    let raw: Matrix = network::parse_table(table, &format!("[[matrix]] `{name}`: "))?;
    let at = |what: &str| format!("[[matrix]] `{name}`: {what}");
    let checked = appservice::config::check(&appservice_keys(&raw, &name), base).map_err(|e| at(&e))?;
    Ok(checked.map(|c| (c.registration.clone(), c.plan())))
}

/// The appservice keys of a `[[matrix]]` table, for `appservice::config::check`.
fn appservice_keys<'a>(raw: &'a Matrix, name: &'a str) -> appservice::config::Raw<'a> {
    appservice::config::Raw {
        mode: raw.mode.as_deref(),
        registration: raw.registration.as_deref(),
        listen: raw.listen.as_deref(),
        url: raw.url.as_deref(),
        ghost_user: raw.ghost_user.as_deref(),
        ghost_name: raw.ghost_name.as_deref(),
        netsplit_hold: raw.netsplit_hold.as_deref(),
        network: name,
        user_id: &raw.user_id,
    }
}
