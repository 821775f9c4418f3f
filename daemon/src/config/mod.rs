//! The daemon's TOML config, in two stages: [`raw`] is exactly what the file says
//! (serde, every field optional where a default exists, unknown keys refused), and
//! [`Settings`] is the validated result with defaults filled in and secrets read. Only
//! `Settings` reaches the rest of the daemon. `spellbridge check-config` prints it.

mod bridges;
pub mod components;
pub mod http;
pub mod language;
pub mod raw;
mod sections;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use spellbridge_adapters::network::{Network, Networks};
use spellbridge_core::options::{CHALLENGE_LIFETIME_SECS, GameOptions};
use spellbridge_core::{NetworkId, PlayerId, Registry, RoomId};

use crate::store::Durability;
use crate::store::postgres::StoreUrl;
pub use http::HttpSettings;
pub use language::LanguageSettings;
pub use raw::LogFormat;
pub use spellbridge_adapters::irc::config::{IrcSettings, SaslSettings};
pub use spellbridge_adapters::matrix::config::{MatrixLogin, MatrixSettings};
pub use spellbridge_adapters::secret::{Secret, SecretSource};

/// What a config can name: the games (each one's options, `[games.<name>]`) and the
/// kinds of network (`[[irc]]`, `[[matrix]]`). The daemon uses [`Catalogue::standard`];
/// a program built on the library may add its own (`Registry::register`,
/// `Networks::register`) and read its config with [`Settings::load_with`].
#[derive(Clone, Debug)]
pub struct Catalogue {
    /// The games, with their default options.
    pub games: Registry,
    /// The kinds of network.
    pub networks: Networks,
}

impl Catalogue {
    /// Thaum and the Duel; IRC and Matrix.
    pub fn standard() -> Self {
        Catalogue { games: Registry::standard(), networks: Networks::standard() }
    }
}

impl Default for Catalogue {
    fn default() -> Self {
        Catalogue::standard()
    }
}

/// Everything the daemon needs, validated.
#[derive(Clone, Debug)]
pub struct Settings {
    /// What starts a command.
    pub prefix: String,
    /// The SQLite database (unused when [`Settings::postgres`] is set).
    pub database: PathBuf,
    /// `[store] url`: the PostgreSQL database to keep the games in instead of SQLite.
    pub postgres: Option<StoreUrl>,
    /// `[store] lease`: how long the active daemon's lease on PostgreSQL lasts and how
    /// often it is renewed (a fifth of it).
    pub lease: crate::leader::LeaseSettings,
    /// How hard each commit works to survive a power cut.
    pub durability: Durability,
    /// The networks, each read by its kind: every `[[irc]]` first, then every
    /// `[[matrix]]`, then any other kind's, in the order the catalogue lists the kinds.
    pub networks: Vec<Arc<dyn Network>>,
    /// The games, with the options the config gives them: the catalogue's, then each
    /// `[[game]]` component's.
    pub games: Registry,
    /// `[[game]]`: the games loaded from WebAssembly components (also in `games`).
    pub components: Vec<components::ComponentSettings>,
    /// How long a challenge waits for an answer, in seconds (the Duel's
    /// `challenge_lifetime`).
    pub challenge_lifetime: i64,
    /// Rooms joined into bridges.
    pub bridges: Vec<BridgeSettings>,
    /// Bot admins and game masters of every table.
    pub permissions: PermissionSettings,
    /// The language each room and each network's private messages are told in.
    pub languages: LanguageSettings,
    /// Where `/healthz` and `/metrics` listen, if anywhere, and their limits.
    pub http: Option<HttpSettings>,
    /// Rooms whose tables the spectator site never shows (`[http] hidden_rooms`).
    pub hidden_rooms: Vec<(NetworkId, RoomId)>,
    /// The spectator site's address as players reach it (`[http] public_url`), without a
    /// trailing `/`.
    pub public_url: Option<String>,
    /// How log lines are written.
    pub log_format: LogFormat,
    /// The file it was read from, to read again on SIGHUP.
    pub source: Option<PathBuf>,
    /// What it was read with, to read it again the same way.
    pub catalogue: Catalogue,
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
    /// How a Matrix edit reaches the other rooms (`edits`, default "diff").
    pub edits: crate::relay::Edits,
    /// How fast one speaker's chat is relayed (`speaker_rate`; `None`: no limit).
    pub speaker_rate: Option<crate::relay::rate::SpeakerRate>,
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
        self.games.clone()
    }

    /// The configured networks of one kind, as that kind's own settings type (tests,
    /// tools): `settings.of_kind::<IrcSettings>()`.
    pub fn of_kind<T: 'static>(&self) -> Vec<&T> {
        self.networks.iter().filter_map(|n| n.as_any().downcast_ref::<T>()).collect()
    }

    /// The configured network called `name`.
    pub fn network(&self, name: &str) -> Option<&Arc<dyn Network>> {
        self.networks.iter().find(|n| n.name() == name)
    }
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
        Settings::load_with(path, &Catalogue::standard())
    }

    /// Reads and validates the config file at `path`, with games and network kinds of
    /// `catalogue`.
    pub fn load_with(path: &Path, catalogue: &Catalogue) -> Result<Settings, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| ConfigError::Read { path: path.into(), source })?;
        Settings::parse_with(&text, path, catalogue)
            .map(|settings| Settings { source: Some(path.to_owned()), ..settings })
    }

    /// Validates config text; `path` only names it in errors and anchors relative paths.
    pub fn parse(text: &str, path: &Path) -> Result<Settings, ConfigError> {
        Settings::parse_with(text, path, &Catalogue::standard())
    }

    /// [`Settings::parse`] with the games and network kinds of `catalogue`.
    pub fn parse_with(text: &str, path: &Path, catalogue: &Catalogue) -> Result<Settings, ConfigError> {
        let mut file: toml::Table = toml::from_str(text)
            .map_err(|e| ConfigError::Syntax { path: path.into(), message: e.to_string() })?;
        let invalid = |message: String| ConfigError::Invalid { path: path.into(), message };
        let kinds: Vec<&str> = catalogue.networks.iter().map(|k| k.section()).collect();
        let component_section = file.remove("game");
        let mut sections = sections::take(&mut file, &catalogue.games, &kinds).map_err(invalid)?;
        let raw: raw::Config = toml::Value::Table(file).try_into().map_err(|e: toml::de::Error| {
            ConfigError::Syntax { path: path.into(), message: e.to_string() }
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        let store = raw.store.unwrap_or_default();
        let postgres = match (&store.path, &store.url) {
            (Some(_), Some(_)) => {
                return Err(invalid(
                    "[store] has both path (a SQLite file) and url (a PostgreSQL database): keep path for \
                     SQLite on this machine, or url for PostgreSQL, and remove the other"
                        .to_owned(),
                ));
            }
            (None, Some(url)) => Some(StoreUrl::parse(url).map_err(|e| invalid(e.to_string()))?),
            _ => None,
        };
        let lease = lease(store.lease.as_deref(), postgres.is_some()).map_err(invalid)?;
        let database = store.path.unwrap_or_else(|| PathBuf::from("spellbridge.db"));
        let database = if database.is_relative() { base.join(database) } else { database };
        let prefix = prefix(raw.prefix).map_err(invalid)?;
        let (networks, names, mut languages) =
            configure_networks(catalogue, &mut sections, base).map_err(invalid)?;
        if postgres.is_some() {
            fixed_matrix_devices(&networks).map_err(invalid)?;
        }
        let mut games = configure_games(catalogue, &mut sections, base).map_err(invalid)?;
        let cache = database.with_file_name("spellbridge-compiled-games");
        let components = components::load(component_section, base, &cache, &mut games).map_err(invalid)?;
        let challenge_lifetime =
            games.iter().find_map(|g| g.challenge()).map_or(CHALLENGE_LIFETIME_SECS, |c| c.lifetime_secs);
        let (bridges, bridged) =
            bridges::read(raw.bridge, &names, &networks, &mut languages).map_err(invalid)?;
        check_language_rooms(&languages, &networks, &bridged).map_err(invalid)?;
        let permissions = permissions(raw.permissions.unwrap_or_default(), &names).map_err(invalid)?;
        let hidden_rooms =
            http::hidden_rooms(raw.http.as_ref().and_then(|h| h.hidden_rooms.as_deref()), &networks)
                .map_err(invalid)?;
        let public_url =
            http::public_url(raw.http.as_ref().and_then(|h| h.public_url.as_deref())).map_err(invalid)?;
        let http = http::settings(raw.http).map_err(invalid)?;
        Ok(Settings {
            prefix,
            database,
            postgres,
            lease,
            durability: store.durability.unwrap_or_default(),
            networks,
            games,
            components,
            challenge_lifetime,
            bridges,
            permissions,
            languages,
            http,
            hidden_rooms,
            public_url,
            log_format: raw.log.and_then(|l| l.format).unwrap_or_default(),
            source: None,
            catalogue: catalogue.clone(),
        })
    }
}

/// `prefix`: what starts a command (default `!`).
fn prefix(prefix: Option<String>) -> Result<String, String> {
    let prefix = prefix.unwrap_or_else(|| "!".to_owned());
    if prefix.is_empty() || prefix.chars().any(char::is_whitespace) {
        return Err(format!(
            "prefix `{prefix}` must be one or more non-space characters, e.g. prefix = \"!\""
        ));
    }
    Ok(prefix)
}

/// The networks, their names, and the languages they are told in.
type ConfiguredNetworks = (Vec<Arc<dyn Network>>, BTreeSet<String>, LanguageSettings);

/// Each network kind's `[[<section>]]` tables, read by their kind in the catalogue's
/// order: the networks, their names (each once), and the languages they are told in.
fn configure_networks(
    catalogue: &Catalogue,
    sections: &mut sections::Sections,
    base: &Path,
) -> Result<ConfiguredNetworks, String> {
    let mut names = BTreeSet::new();
    let mut networks: Vec<Arc<dyn Network>> = Vec::new();
    let mut languages = LanguageSettings::default();
    for kind in catalogue.networks.iter() {
        for mut table in sections.networks.remove(kind.section()).unwrap_or_default() {
            let chosen = language::take(&mut table);
            let network = kind.configure(table, base)?;
            chosen.apply(kind.section(), network.name(), &mut languages)?;
            if !names.insert(network.name().to_owned()) {
                return Err(format!(
                    "two networks are called `{}`; give each [[{}]] a different name",
                    network.name(),
                    kind.section()
                ));
            }
            networks.push(network);
        }
    }
    Ok((networks, names, languages))
}

/// Each game's options from its `[games.<name>]` section; a file an option names is
/// read relative to the config's folder `base`.
fn configure_games(
    catalogue: &Catalogue,
    sections: &mut sections::Sections,
    base: &Path,
) -> Result<Registry, String> {
    let read_file = |file: &str| -> Result<(String, String), String> {
        let file = Path::new(file);
        let file = if file.is_relative() { base.join(file) } else { file.to_owned() };
        let text =
            std::fs::read_to_string(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        Ok((file.display().to_string(), text))
    };
    catalogue.games.configured(|name| {
        sections.games.remove(name).map(|(section, table)| GameOptions {
            section,
            table,
            read_file: &read_file,
        })
    })
}

/// Every room a `languages` names is one of its network's rooms or in a bridge.
fn check_language_rooms(
    languages: &LanguageSettings,
    networks: &[Arc<dyn Network>],
    bridged: &bridges::Bridged,
) -> Result<(), String> {
    for (network, room) in languages.rooms.keys() {
        let own = networks
            .iter()
            .any(|n| n.name() == network.as_str() && n.rooms().contains(&room.as_str().to_owned()));
        if !own && !bridged.contains_key(&(network.as_str().to_owned(), room.as_str().to_owned())) {
            return Err(format!(
                "`{network}`: languages names {room}, which is neither one of its rooms nor in a [[bridge]]; \
                 add it to the network's rooms or take it out of languages"
            ));
        }
    }
    Ok(())
}

/// `[permissions]`: admins and game masters, each `network/player` on a configured network.
fn permissions(
    permissions: raw::Permissions,
    names: &BTreeSet<String>,
) -> Result<PermissionSettings, String> {
    let people = |list: Vec<String>, what: &str| -> Result<Vec<(NetworkId, PlayerId)>, String> {
        list.into_iter()
            .map(|entry| match entry.split_once('/') {
                Some((network, player)) if names.contains(network) && !player.is_empty() => {
                    Ok((NetworkId::new(network), PlayerId::new(player)))
                }
                _ => Err(format!(
                    "[permissions] {what}: `{entry}` must be network/player with a configured network, \
                     e.g. \"libera/alice\" or \"matrix/@alice:example.org\""
                )),
            })
            .collect()
    };
    Ok(PermissionSettings {
        admins: people(permissions.admins, "admins")?,
        game_masters: people(permissions.game_masters, "game_masters")?,
    })
}

#[cfg(test)]
mod tests;

/// With `[store] url` a standby may take over, and Matrix bot mode must be the same
/// device on every daemon (so a message resent by the new leader is the same event, and
/// the sync position handled is the one device's): an `access_token`, not a `password`
/// (each password login is a new device). Appservice mode logs in with the `as_token`.
fn fixed_matrix_devices(networks: &[Arc<dyn Network>]) -> Result<(), String> {
    for matrix in networks.iter().filter_map(|n| n.as_any().downcast_ref::<MatrixSettings>()) {
        if matches!(matrix.login, MatrixLogin::Password(_)) {
            return Err(format!(
                "[[matrix]] `{}`: with [store] url (PostgreSQL, where a standby daemon takes over) the \
                 bot must be one device on every daemon, and each password login is a new one: replace \
                 `password` with `access_token = {{ file = \"matrix-token\" }}`, the token of one login \
                 of {} (docs/failover.md says how to get one)",
                matrix.name, matrix.user_id
            ));
        }
    }
    Ok(())
}

/// `[store] lease = "5s"`: 1 s to 600 s, only with `url`; renewed every fifth of it.
fn lease(text: Option<&str>, on_postgres: bool) -> Result<crate::leader::LeaseSettings, String> {
    let Some(text) = text else { return Ok(crate::leader::LeaseSettings::default()) };
    if !on_postgres {
        return Err(format!(
            "[store] lease `{text}` is for daemons sharing a PostgreSQL database ([store] url); with \
             SQLite there is no lease: remove it"
        ));
    }
    let ttl = spellbridge_core::time::parse_duration(text)
        .filter(|s| (1..=600).contains(s))
        .map(|s| std::time::Duration::from_secs(s.unsigned_abs()))
        .ok_or_else(|| {
            format!("[store] lease `{text}` is not a duration from 1s to 600s; write e.g. lease = \"5s\"")
        })?;
    crate::leader::LeaseSettings::new(ttl, ttl / 5).map_err(|e| format!("[store] lease `{text}`: {e}"))
}
