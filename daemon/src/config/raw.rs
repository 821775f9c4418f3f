//! The daemon's own part of the config file exactly as written: serde structs, unknown
//! keys refused. Defaults are filled in by [`super::Settings::parse`], not hidden in
//! getters. The games' sections (`[games.<name>]`, `[thaum]`, `[duel]`) and the
//! networks' (`[[irc]]`, `[[matrix]]`) are taken out first and read by their own game or
//! network kind ([`super::sections`]).

use std::path::PathBuf;

use serde::Deserialize;

use crate::store::Durability;

/// The whole file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// What starts a command (default `!`).
    pub prefix: Option<String>,
    /// `[store]`.
    pub store: Option<Store>,
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
    /// How a Matrix edit is relayed: "diff" (default, `s/old/new/`), "resend" (the whole
    /// new text, `<alice> * new text`) or "off".
    pub edits: Option<String>,
    /// How fast one speaker's chat is relayed: `{ burst = 5, every = 1 }` (the default:
    /// five lines at once, then one a second), or `false` for no limit.
    pub speaker_rate: Option<SpeakerRate>,
}

/// A bridge's `speaker_rate`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum SpeakerRate {
    /// `false`: no limit (`true`: the default).
    On(bool),
    /// Lines at once, and seconds for one more.
    Rate {
        /// Lines a speaker may send at once.
        burst: u32,
        /// Seconds for one more line.
        every: i64,
    },
}

/// One room of a `[[bridge]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BridgeRoom {
    /// The network's name, as in `[[irc]]` or `[[matrix]]`.
    pub network: String,
    /// The IRC channel, or the Matrix room id (`!…`).
    pub room: String,
    /// The language the room is told in (`"en"`, the default, or `"zh-CN"`); read by
    /// [`super::language`].
    pub language: Option<toml::Value>,
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
    /// The spectator site's address as players reach it, e.g. "https://games.example.org":
    /// `!board` on IRC answers with the table's page there (default: none).
    pub public_url: Option<String>,
    /// The most connections served at once (default 64).
    pub connections: Option<usize>,
    /// The most connections from one client address (default 8).
    pub connections_per_ip: Option<usize>,
    /// A connection without a byte either way for this long is closed (default "5s").
    pub idle_timeout: Option<String>,
    /// A request head must arrive whole within this long (default "10s").
    pub read_timeout: Option<String>,
    /// Serve the spectator site (`/`, `/tables/…`, `/leaderboard`) beside `/metrics`
    /// (default true).
    pub site: Option<bool>,
    /// The most live-update streams (`/tables/{id}/events`) open at once (default: half
    /// of `connections`).
    pub max_event_streams: Option<usize>,
    /// Rooms whose tables the site never shows, as `network/room` (default none).
    pub hidden_rooms: Option<Vec<String>>,
    /// A listener of its own for `/healthz` and `/metrics` (default none).
    pub ops_listen: Option<String>,
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

/// `[store]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Store {
    /// The database file (default `spellbridge.db` beside the config).
    pub path: Option<PathBuf>,
    /// A PostgreSQL database instead (`postgres://USER:PASSWORD@HOST:PORT/DATABASE`).
    pub url: Option<String>,
    /// With `url`: how long the active daemon's lease lasts (default `5s`).
    pub lease: Option<String>,
    /// `full` (default) or `normal`.
    pub durability: Option<Durability>,
}
