//! The config file exactly as written: serde structs, unknown keys refused. Defaults are
//! filled in by [`super::Settings::parse`], not hidden in getters.

use std::path::PathBuf;

use serde::Deserialize;

use super::SecretSource;
use crate::store::Durability;

/// The whole file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// What starts a command (default `!`).
    pub prefix: Option<String>,
    /// `[store]`.
    pub store: Option<Store>,
    /// `[thaum]`.
    pub thaum: Option<Thaum>,
    /// `[duel]`.
    pub duel: Option<Duel>,
    /// `[[irc]]`, one per network.
    #[serde(default)]
    pub irc: Vec<Irc>,
    /// `[[matrix]]`, one per bot account.
    #[serde(default)]
    pub matrix: Vec<Matrix>,
    /// `[[bridge]]`, one per set of linked rooms.
    #[serde(default)]
    pub bridge: Vec<Bridge>,
    /// `[permissions]`.
    pub permissions: Option<Permissions>,
    /// `[http]`.
    pub http: Option<Http>,
    /// `[log]`.
    pub log: Option<Log>,
}

/// `[[bridge]]`: rooms on any networks joined into one place.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bridge {
    /// The bridge's name (logs, metrics).
    pub name: String,
    /// The rooms, e.g. `{ network = "libera", room = "#magic" }`.
    pub rooms: Vec<BridgeRoom>,
    /// Relay plain chat between the rooms (default true); tables are shared either way.
    pub relay: Option<bool>,
    /// The most lines one relayed message becomes (default 5), then a line saying how
    /// many more there were.
    pub relay_lines: Option<usize>,
}

/// One room of a `[[bridge]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BridgeRoom {
    /// The network's name, as in `[[irc]]` or `[[matrix]]`.
    pub network: String,
    /// The IRC channel, or the Matrix room id (`!…`).
    pub room: String,
}

/// `[permissions]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Permissions {
    /// Bot admins, as `network/player` (`libera/alice`, `matrix/@alice:example.org`).
    #[serde(default)]
    pub admins: Vec<String>,
    /// Game masters of every table, in the same form.
    #[serde(default)]
    pub game_masters: Vec<String>,
}

/// `[http]`: the health and metrics endpoint.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Http {
    /// Where to listen, e.g. "127.0.0.1:9180" (default: no endpoint).
    pub listen: Option<String>,
    /// The most connections served at once (default 64).
    pub connections: Option<usize>,
    /// The most connections from one client address (default 8).
    pub connections_per_ip: Option<usize>,
    /// A connection without a byte either way for this long is closed (default "5s").
    pub idle_timeout: Option<String>,
    /// A request head must arrive whole within this long (default "10s").
    pub read_timeout: Option<String>,
}

/// `[log]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Log {
    /// `text` (default) or `json`.
    pub format: Option<LogFormat>,
}

/// How log lines are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogFormat {
    /// For people.
    #[default]
    Text,
    /// One JSON object per line, for log collectors.
    Json,
}

/// `[[matrix]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Matrix {
    /// The network's name in spellbridge.
    pub name: String,
    /// The homeserver's URL, e.g. "https://matrix.example.org".
    pub homeserver: String,
    /// The bot's user id, e.g. "@spellbridge:example.org".
    pub user_id: String,
    /// Its password (for the first login; the session is kept afterwards).
    pub password: Option<SecretSource>,
    /// Or an access token.
    pub access_token: Option<SecretSource>,
    /// The device's display name (default "spellbridge").
    pub device_name: Option<String>,
    /// Where the session and the encryption keys are kept (default "matrix-<name>" beside
    /// the config). Back it up: losing it loses the bot's device and keys.
    pub store: Option<PathBuf>,
    /// Encrypts that store at rest.
    pub store_passphrase: Option<SecretSource>,
    /// Rooms to join: ids or aliases.
    #[serde(default)]
    pub rooms: Vec<String>,
    /// Whose invites are accepted: "@user:server", "*:server" or "*" (default: nobody's).
    #[serde(default)]
    pub invite_allow: Vec<String>,
    /// The first wait before reconnecting (default "1s").
    pub reconnect_delay: Option<String>,
    /// `[matrix.user_limit]`.
    pub user_limit: Option<UserLimit>,
}

/// `[store]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Store {
    /// The database file (default `spellbridge.db` beside the config).
    pub path: Option<PathBuf>,
    /// `full` (default) or `normal`.
    pub durability: Option<Durability>,
}

/// `[thaum]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Thaum {
    /// `cycle13` (default: phases end Sun, Wed, Fri 00:00 UTC) or `manual`.
    pub schedule: Option<spellbridge_core::games::thaum::Schedule>,
    /// RULES T-7: Summoning's N is multiplied by the Mana spent (default false).
    pub summoning_scales_with_mana: Option<bool>,
    /// RULES T-9: coin revokes beyond the balance become debt (default false).
    pub coin_debt: Option<bool>,
}

/// `[duel]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Duel {
    /// RULES D-9: how long a step waits for a wizard (default "10m").
    pub step_timeout: Option<String>,
    /// A wizards file replacing config/wizards.toml (RULES D-13).
    pub wizards: Option<PathBuf>,
    /// How long a challenge waits for an answer (default "10m").
    pub challenge_lifetime: Option<String>,
}

/// `[[irc]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Irc {
    /// The network's name in spellbridge.
    pub name: String,
    /// Server host.
    pub server: String,
    /// Port (default 6697 with TLS, 6667 without).
    pub port: Option<u16>,
    /// TLS (default true).
    pub tls: Option<bool>,
    /// A PEM file of CA certificates trusted besides the system's (relative to the config).
    pub tls_ca: Option<PathBuf>,
    /// Trust only `tls_ca` (default false).
    pub tls_ca_only: Option<bool>,
    /// `sha256/BASE64` of the server's certificate or public key: accept exactly it.
    pub tls_pin: Option<String>,
    /// A PEM client certificate, for SASL EXTERNAL (CertFP).
    pub client_cert: Option<PathBuf>,
    /// Its PEM private key.
    pub client_key: Option<PathBuf>,
    /// The bot's nick.
    pub nick: String,
    /// Nicks to try when it is taken (default nick_ and nick__).
    pub alt_nicks: Option<Vec<String>>,
    /// User name (default: the nick).
    pub username: Option<String>,
    /// Real name.
    pub realname: Option<String>,
    /// Server password.
    pub password: Option<SecretSource>,
    /// Logging in to services.
    pub sasl: Option<Sasl>,
    /// Channels to join.
    #[serde(default)]
    pub channels: Vec<String>,
    /// Only players with a services account may play (default: true where the network
    /// has accounts).
    pub require_account: Option<bool>,
    /// Answer CTCP VERSION, PING and CLIENTINFO through the bot's flood control, a few
    /// per user (default true); false answers no CTCP request.
    pub ctcp: Option<bool>,
    /// Rejoin after a kick (default true).
    pub rejoin_on_kick: Option<bool>,
    /// How commands in the bot's messages are shown: `bold` (default), `monospace`
    /// (`\x11`, which irssi shows as a reverse `Q`) or `plain`.
    pub code_style: Option<String>,
    /// The first wait before reconnecting; it doubles on each failure, up to 2 minutes
    /// (default "1s").
    pub reconnect_delay: Option<String>,
    /// `[irc.flood]`.
    pub flood: Option<Flood>,
    /// `[irc.user_limit]`.
    pub user_limit: Option<UserLimit>,
}

/// `[irc.sasl]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sasl {
    /// The services account.
    pub account: String,
    /// Its password (not needed for EXTERNAL alone).
    pub password: Option<SecretSource>,
    /// A PEM P-256 private key for ECDSA-NIST256P-CHALLENGE (relative to the config).
    pub ecdsa_key: Option<PathBuf>,
    /// Mechanisms to try, in order (default: the strongest the config allows).
    pub mechanisms: Option<Vec<String>>,
    /// Never play logged out (default true).
    pub required: Option<bool>,
    /// NickServ IDENTIFY where SASL is not offered (default false).
    pub identify: Option<bool>,
    /// Take the configured nick back with NickServ REGAIN (default false).
    pub regain: Option<bool>,
}

/// `[irc.flood]`: outbound lines.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Flood {
    /// Off only for test servers (default true).
    pub enabled: Option<bool>,
    /// Lines that may go at once (default 4).
    pub burst: Option<u32>,
    /// Then one line per this long (default "2s").
    pub interval: Option<String>,
}

/// `[irc.user_limit]`, `[matrix.user_limit]`: commands per player, counted across their
/// linked identities; each network's limit is judged against that one count.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserLimit {
    /// Default true.
    pub enabled: Option<bool>,
    /// Commands per window (default 8).
    pub commands: Option<u32>,
    /// The window (default "10s").
    pub window: Option<String>,
}
