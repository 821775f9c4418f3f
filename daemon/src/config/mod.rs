//! The daemon's TOML config, in two stages: [`raw`] is exactly what the file says
//! (serde, every field optional where a default exists, unknown keys refused), and
//! [`Settings`] is the validated result with defaults filled in and secrets read. Only
//! `Settings` reaches the rest of the daemon. `spellbridge check-config` prints it.

pub mod http;
pub mod raw;
pub mod secret;

use std::path::{Path, PathBuf};
use std::time::Duration;

use spellbridge_adapters::irc::ecdsa::EcdsaKey;
use spellbridge_adapters::irc::format::CodeStyle;
use spellbridge_adapters::irc::sasl::Mechanism;
use spellbridge_core::games::duel::{DuelOptions, DuelPlugin, Wizards};
use spellbridge_core::games::thaum::{ThaumOptions, ThaumPlugin};
use spellbridge_core::time::parse_duration;
use spellbridge_core::{NetworkId, PlayerId, Registry, RoomId};

use spellbridge_adapters::irc::tls::TlsOptions;

use crate::store::Durability;
pub use http::HttpSettings;
pub use raw::LogFormat;
pub use secret::{Secret, SecretSource};

/// Everything the daemon needs, validated.
#[derive(Clone, Debug)]
pub struct Settings {
    /// What starts a command.
    pub prefix: String,
    /// The SQLite database.
    pub database: PathBuf,
    /// How hard each commit works to survive a power cut.
    pub durability: Durability,
    /// The IRC networks.
    pub irc: Vec<IrcSettings>,
    /// The Matrix accounts.
    pub matrix: Vec<MatrixSettings>,
    /// Thaum's rule options.
    pub thaum: ThaumOptions,
    /// The Duel's options, wizards included.
    pub duel: DuelOptions,
    /// How long a Duel challenge waits for an answer, in seconds (`[duel] challenge_lifetime`).
    pub challenge_lifetime: i64,
    /// Rooms joined into bridges.
    pub bridges: Vec<BridgeSettings>,
    /// Bot admins and game masters of every table.
    pub permissions: PermissionSettings,
    /// Where `/healthz` and `/metrics` listen, if anywhere, and their limits.
    pub http: Option<HttpSettings>,
    /// How log lines are written.
    pub log_format: LogFormat,
    /// The file it was read from, to read again on SIGHUP.
    pub source: Option<PathBuf>,
}

/// One bridge: rooms on any networks that share chat and tables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BridgeSettings {
    /// Its name.
    pub name: String,
    /// Its rooms, as (network, room).
    pub rooms: Vec<(NetworkId, RoomId)>,
    /// Relay plain chat between them.
    pub relay: bool,
    /// The most lines one relayed message becomes (then a line saying how many more).
    pub relay_lines: usize,
}

/// Who may do more than play.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PermissionSettings {
    /// Bot admins: game masters of every table, and may stop any table.
    pub admins: Vec<(NetworkId, PlayerId)>,
    /// Game masters of every table.
    pub game_masters: Vec<(NetworkId, PlayerId)>,
}

impl Settings {
    /// The games, with the configured options.
    pub fn registry(&self) -> Registry {
        Registry::new(vec![
            Box::new(ThaumPlugin::new(self.thaum)),
            Box::new(DuelPlugin::new(self.duel.clone())),
        ])
    }
}

/// One IRC network.
#[derive(Clone, Debug)]
pub struct IrcSettings {
    /// Its name in spellbridge (ids, logs, metrics).
    pub name: String,
    /// Server host.
    pub server: String,
    /// Server port.
    pub port: u16,
    /// Connect with TLS.
    pub tls: bool,
    /// Whom TLS trusts, and the client certificate.
    pub tls_options: TlsOptions,
    /// The bot's nick, then the ones to try if it is taken.
    pub nicks: Vec<String>,
    /// The user name.
    pub username: String,
    /// The real name (GECOS).
    pub realname: String,
    /// The server password (PASS), if any.
    pub password: Option<Secret>,
    /// How to log in to services, if at all.
    pub sasl: Option<SaslSettings>,
    /// Channels to join.
    pub channels: Vec<String>,
    /// Only players logged in to a services account may play; `None`: where the network
    /// has accounts.
    pub require_account: Option<bool>,
    /// Answer CTCP VERSION, PING and CLIENTINFO (paced, a few per user).
    pub ctcp: bool,
    /// Rejoin a channel after being kicked.
    pub rejoin_on_kick: bool,
    /// How commands in the bot's messages are shown (`code_style`, default bold).
    pub code_style: CodeStyle,
    /// Outbound flood control: burst, then one line per interval; `None` is off.
    pub flood: Option<(u32, Duration)>,
    /// Per-player command limit: commands per window; `None` is off.
    pub user_limit: Option<(u32, Duration)>,
    /// The first wait before reconnecting (it doubles on each failure, up to 2 minutes).
    pub reconnect_delay: Duration,
}

/// `[irc.sasl]`: logging in to services.
#[derive(Clone, Debug)]
pub struct SaslSettings {
    /// The services account.
    pub account: String,
    /// Its password (SCRAM-SHA-256, PLAIN, IDENTIFY).
    pub password: Option<Secret>,
    /// The P-256 key file for ECDSA-NIST256P-CHALLENGE (checked when the config is read).
    pub ecdsa_key: Option<PathBuf>,
    /// Mechanisms in the order to try; empty: the strongest the config allows.
    pub mechanisms: Vec<Mechanism>,
    /// Never play logged out.
    pub required: bool,
    /// NickServ IDENTIFY where SASL is not offered or fails.
    pub identify: bool,
    /// NickServ REGAIN to take the configured nick back.
    pub regain: bool,
}

/// One Matrix bot account.
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
}

/// How the Matrix bot logs in the first time.
#[derive(Clone, Debug)]
pub enum MatrixLogin {
    /// With a password.
    Password(Secret),
    /// With an access token.
    AccessToken(Secret),
}

/// Why the config cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file cannot be read.
    #[error("cannot read the config {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not valid TOML for spellbridge.
    #[error("{path}: {message}")]
    Syntax {
        /// The file.
        path: PathBuf,
        /// What toml/serde said, with the line.
        message: String,
    },
    /// A value is out of range or inconsistent.
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong and what to write instead.
        message: String,
    },
}

impl Settings {
    /// Reads and validates the config file at `path`.
    pub fn load(path: &Path) -> Result<Settings, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| ConfigError::Read { path: path.into(), source })?;
        Settings::parse(&text, path).map(|settings| Settings { source: Some(path.to_owned()), ..settings })
    }

    /// Validates config text; `path` only names it in errors and anchors relative paths.
    pub fn parse(text: &str, path: &Path) -> Result<Settings, ConfigError> {
        let raw: raw::Config = toml::from_str(text)
            .map_err(|e| ConfigError::Syntax { path: path.into(), message: e.to_string() })?;
        let invalid = |message: String| ConfigError::Invalid { path: path.into(), message };
        let base = path.parent().unwrap_or(Path::new("."));
        let store = raw.store.unwrap_or_default();
        let database = store.path.unwrap_or_else(|| PathBuf::from("spellbridge.db"));
        let database = if database.is_relative() { base.join(database) } else { database };
        let prefix = raw.prefix.unwrap_or_else(|| "!".to_owned());
        if prefix.is_empty() || prefix.chars().any(char::is_whitespace) {
            return Err(invalid(format!(
                "prefix `{prefix}` must be one or more non-space characters, e.g. prefix = \"!\""
            )));
        }
        let mut names = std::collections::BTreeSet::new();
        let mut irc = Vec::new();
        for network in raw.irc {
            if !names.insert(network.name.clone()) {
                return Err(invalid(format!(
                    "two networks are called `{}`; give each [[irc]] a different name",
                    network.name
                )));
            }
            let tls_options = tls::options(&network, base).map_err(invalid)?;
            irc.push(IrcSettings { tls_options, ..irc_settings(network, base).map_err(invalid)? });
        }
        let mut matrix = Vec::new();
        let mut matrix_names = std::collections::BTreeSet::new();
        for account in raw.matrix {
            matrix_names.insert(account.name.clone());
            if !names.insert(account.name.clone()) {
                return Err(invalid(format!(
                    "two networks are called `{}`; give each a different name",
                    account.name
                )));
            }
            matrix.push(matrix_settings(account, base).map_err(invalid)?);
        }
        let thaum_raw = raw.thaum.unwrap_or_default();
        let defaults = ThaumOptions::default();
        let thaum = ThaumOptions {
            schedule: thaum_raw.schedule.unwrap_or(defaults.schedule),
            summoning_scales_with_mana: thaum_raw
                .summoning_scales_with_mana
                .unwrap_or(defaults.summoning_scales_with_mana),
            coin_debt: thaum_raw.coin_debt.unwrap_or(defaults.coin_debt),
        };
        let duel_raw = raw.duel.unwrap_or_default();
        let mut duel = DuelOptions::default();
        if let Some(text) = &duel_raw.step_timeout {
            let seconds = parse_duration(text).filter(|s| *s > 0).ok_or_else(|| {
                invalid(format!(
                    "[duel] step_timeout `{text}` is not a duration; write e.g. \"10m\" or \"90s\""
                ))
            })?;
            duel.step_timeout_secs = seconds;
        }
        if let Some(file) = &duel_raw.wizards {
            let file = if file.is_relative() { base.join(file) } else { file.clone() };
            let text = std::fs::read_to_string(&file)
                .map_err(|e| invalid(format!("[duel] wizards: cannot read {}: {e}", file.display())))?;
            duel.wizards = Wizards::from_toml(&text)
                .map_err(|e| invalid(format!("[duel] wizards {}: {e}", file.display())))?;
        }
        let challenge_lifetime = match &duel_raw.challenge_lifetime {
            None => crate::router::CHALLENGE_LIFETIME_SECS,
            Some(text) => parse_duration(text).filter(|s| (60..=86_400).contains(s)).ok_or_else(|| {
                invalid(format!(
                    "[duel] challenge_lifetime `{text}` is not a duration from 1m to 24h; write e.g. \"10m\""
                ))
            })?,
        };
        let mut bridges = Vec::new();
        let mut bridged = std::collections::BTreeMap::new();
        for bridge in raw.bridge {
            let at = |what: String| invalid(format!("[[bridge]] `{}`: {what}", bridge.name));
            if bridge.rooms.len() < 2 {
                return Err(at(
                    "a bridge links two or more rooms, e.g. rooms = [{ network = \"libera\", room = \"#magic\" }, \
                     { network = \"matrix\", room = \"!abc:example.org\" }]"
                        .to_owned(),
                ));
            }
            let mut rooms = Vec::new();
            for room in bridge.rooms {
                if !names.contains(&room.network) {
                    let known: Vec<&str> = names.iter().map(String::as_str).collect();
                    return Err(at(format!(
                        "no network is called `{}`; the networks are: {}",
                        room.network,
                        known.join(", ")
                    )));
                }
                if matrix_names.contains(&room.network) && !room.room.starts_with('!') {
                    return Err(at(format!(
                        "`{}` on {} is not a Matrix room id; give the room's id, e.g. room = \"!abc:example.org\" \
                         (Element shows it under Room settings, Advanced): aliases are not looked up in bridges",
                        room.room, room.network
                    )));
                }
                if let Some(other) =
                    bridged.insert((room.network.clone(), room.room.clone()), bridge.name.clone())
                {
                    return Err(at(format!(
                        "{} on {} is already in bridge `{other}`; a room belongs to one bridge",
                        room.room, room.network
                    )));
                }
                rooms.push((NetworkId::new(room.network), RoomId::new(room.room)));
            }
            let relay_lines = bridge.relay_lines.unwrap_or(crate::relay::DEFAULT_LINES);
            if relay_lines == 0 {
                return Err(at(
                    "relay_lines = 0 would relay nothing of a message; give at least 1 (the default is 5), \
                     or set relay = false to relay no chat"
                        .to_owned(),
                ));
            }
            bridges.push(BridgeSettings {
                name: bridge.name,
                rooms,
                relay: bridge.relay.unwrap_or(true),
                relay_lines,
            });
        }
        let permissions = raw.permissions.unwrap_or_default();
        let people = |list: Vec<String>, what: &str| -> Result<Vec<(NetworkId, PlayerId)>, ConfigError> {
            list.into_iter()
                .map(|entry| match entry.split_once('/') {
                    Some((network, player)) if names.contains(network) && !player.is_empty() => {
                        Ok((NetworkId::new(network), PlayerId::new(player)))
                    }
                    _ => Err(invalid(format!(
                        "[permissions] {what}: `{entry}` must be network/player with a configured network, \
                         e.g. \"libera/alice\" or \"matrix/@alice:example.org\""
                    ))),
                })
                .collect()
        };
        let permissions = PermissionSettings {
            admins: people(permissions.admins, "admins")?,
            game_masters: people(permissions.game_masters, "game_masters")?,
        };
        let http = http::settings(raw.http).map_err(invalid)?;
        Ok(Settings {
            prefix,
            database,
            durability: store.durability.unwrap_or_default(),
            irc,
            matrix,
            thaum,
            duel,
            challenge_lifetime,
            bridges,
            permissions,
            http,
            log_format: raw.log.and_then(|l| l.format).unwrap_or_default(),
            source: None,
        })
    }
}

fn matrix_settings(raw: raw::Matrix, base: &Path) -> Result<MatrixSettings, String> {
    let name = raw.name;
    let at = |what: &str| format!("[[matrix]] `{name}`: {what}");
    if !(raw.homeserver.starts_with("https://") || raw.homeserver.starts_with("http://")) {
        return Err(at("`homeserver` must be a URL, e.g. homeserver = \"https://matrix.example.org\""));
    }
    if !raw.user_id.starts_with('@') || !raw.user_id.contains(':') {
        return Err(at("`user_id` must be a full Matrix id, e.g. user_id = \"@spellbridge:example.org\""));
    }
    let login = match (raw.password, raw.access_token) {
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
    let user_limit = user_limit(raw.user_limit, &at)?;
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
        name,
    })
}

/// A network's `user_limit` table: 8 commands per 10 s unless it says otherwise, at most
/// an hour's window (the daemon remembers a player's commands that long).
fn user_limit(
    raw: Option<raw::UserLimit>,
    at: &dyn Fn(&str) -> String,
) -> Result<Option<(u32, Duration)>, String> {
    let limit = raw.unwrap_or_default();
    if !limit.enabled.unwrap_or(true) {
        return Ok(None);
    }
    let window = match &limit.window {
        Some(text) => parse_duration(text)
            .filter(|s| (1..=3600).contains(s))
            .map(|s| Duration::from_secs(s.unsigned_abs()))
            .ok_or_else(|| {
                at(&format!("user_limit.window `{text}` is not a duration up to an hour; write e.g. \"10s\""))
            })?,
        None => Duration::from_secs(10),
    };
    Ok(Some((limit.commands.unwrap_or(8).max(1), window)))
}

/// A network's `code_style`: `bold` unless it names another style.
fn code_style(raw: Option<&str>, at: &dyn Fn(&str) -> String) -> Result<CodeStyle, String> {
    let Some(name) = raw else { return Ok(CodeStyle::default()) };
    CodeStyle::parse(name).ok_or_else(|| {
        at(&format!(
            "code_style `{name}` is not a style; write code_style = \"bold\" (the default), \"monospace\" \
             (irssi shows it as a reverse Q) or \"plain\""
        ))
    })
}

/// `[irc.sasl]`, checked: known mechanisms, a password for those that need one.
fn sasl_settings(raw: raw::Sasl, base: &Path, at: &dyn Fn(&str) -> String) -> Result<SaslSettings, String> {
    let password =
        raw.password.map(|s| s.read().map_err(|e| at(&format!("sasl password: {e}")))).transpose()?;
    let ecdsa_key = raw.ecdsa_key.map(|path| if path.is_relative() { base.join(path) } else { path });
    if let Some(path) = &ecdsa_key {
        // Read now, so that a wrong path or file is reported by `check-config`.
        EcdsaKey::load(path).map_err(|e| at(&format!("sasl.ecdsa_key: {e}")))?;
    }
    let names: Vec<&str> = Mechanism::ALL.iter().map(|m| m.name()).collect();
    let mechanisms = raw
        .mechanisms
        .unwrap_or_default()
        .iter()
        .map(|name| {
            Mechanism::parse(name).ok_or_else(|| {
                at(&format!(
                    "sasl.mechanisms: `{name}` is not one spellbridge speaks; write some of {}",
                    names.join(", ")
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let needs_password = if mechanisms.is_empty() {
        ecdsa_key.is_none()
    } else {
        mechanisms.iter().any(|m| matches!(m, Mechanism::ScramSha256 | Mechanism::Plain))
    };
    if password.is_none() && needs_password {
        return Err(at(
            "[irc.sasl] has no password; add password = { env = \"…\" }, or mechanisms = [\"EXTERNAL\"] to log in with the client certificate, or ecdsa_key = \"bot.pem\" to log in with ECDSA-NIST256P-CHALLENGE",
        ));
    }
    if ecdsa_key.is_none() && mechanisms.contains(&Mechanism::EcdsaNist256pChallenge) {
        return Err(at(
            "sasl.mechanisms lists ECDSA-NIST256P-CHALLENGE but [irc.sasl] has no key; add ecdsa_key = \"bot.pem\" (a PEM P-256 private key)",
        ));
    }
    let identify = raw.identify.unwrap_or(false);
    if identify && password.is_none() {
        return Err(at("sasl.identify = true needs the sasl password (NickServ IDENTIFY sends it)"));
    }
    Ok(SaslSettings {
        account: raw.account,
        password,
        ecdsa_key,
        mechanisms,
        required: raw.required.unwrap_or(true),
        identify,
        regain: raw.regain.unwrap_or(false),
    })
}

fn irc_settings(raw: raw::Irc, base: &Path) -> Result<IrcSettings, String> {
    let name = raw.name;
    let at = |what: &str| format!("[[irc]] `{name}`: {what}");
    if raw.server.trim().is_empty() {
        return Err(at("`server` is empty; write the server's host name, e.g. server = \"irc.libera.chat\""));
    }
    if raw.nick.trim().is_empty() || raw.nick.contains(' ') {
        return Err(at("`nick` must be one word, e.g. nick = \"spellbridge\""));
    }
    for channel in &raw.channels {
        if !channel.starts_with(['#', '&']) || channel.contains([' ', ',', '\x07']) {
            return Err(at(&format!(
                "`{channel}` is not a channel name; channels start with # and have no spaces or commas"
            )));
        }
    }
    let tls = raw.tls.unwrap_or(true);
    let mut nicks = vec![raw.nick.clone()];
    nicks.extend(raw.alt_nicks.unwrap_or_else(|| vec![format!("{}_", raw.nick), format!("{}__", raw.nick)]));
    let password = raw.password.map(|s| s.read().map_err(|e| at(&format!("password: {e}")))).transpose()?;
    let sasl = raw.sasl.map(|s| sasl_settings(s, base, &at)).transpose()?;
    let duration = |text: &str, what: &str| -> Result<Duration, String> {
        parse_duration(text)
            .filter(|s| *s > 0)
            .map(|s| Duration::from_secs(s.unsigned_abs()))
            .ok_or_else(|| at(&format!("{what} `{text}` is not a duration; write e.g. \"2s\", \"10m\"")))
    };
    let flood = raw.flood.unwrap_or_default();
    let flood = if flood.enabled.unwrap_or(true) {
        let burst = flood.burst.unwrap_or(4);
        let interval = match &flood.interval {
            Some(text) => duration(text, "flood.interval")?,
            None => Duration::from_secs(2),
        };
        Some((burst.max(1), interval))
    } else {
        None
    };
    let reconnect_delay = match &raw.reconnect_delay {
        Some(text) => duration(text, "reconnect_delay")?,
        None => Duration::from_secs(1),
    };
    let user_limit = user_limit(raw.user_limit, &at)?;
    let code_style = code_style(raw.code_style.as_deref(), &at)?;
    Ok(IrcSettings {
        port: raw.port.unwrap_or(if tls { 6697 } else { 6667 }),
        server: raw.server,
        tls,
        tls_options: TlsOptions::default(),
        username: raw.username.unwrap_or_else(|| raw.nick.clone()),
        realname: raw.realname.unwrap_or_else(|| "spellbridge chat games".to_owned()),
        nicks,
        password,
        sasl,
        channels: raw.channels,
        require_account: raw.require_account,
        ctcp: raw.ctcp.unwrap_or(true),
        rejoin_on_kick: raw.rejoin_on_kick.unwrap_or(true),
        code_style,
        flood,
        user_limit,
        reconnect_delay,
        name,
    })
}

#[cfg(test)]
mod tests;
mod tls;
