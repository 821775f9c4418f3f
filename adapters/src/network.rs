//! The registry of network kinds: everything the daemon needs to know about a kind of
//! chat network, so that adding one touches only `adapters/` and one line in
//! [`Networks::standard`] (or one [`Networks::register`] for a kind kept elsewhere).
//!
//! - A [`NetworkKind`] names its config section (`irc` for `[[irc]]`) and reads one of
//!   its tables into a configured [`Network`].
//! - A [`Network`] is one configured network: its name, rooms and command limit, what
//!   `check-config` prints for it, how its transport starts, and how
//!   `check-config --connect` tries it once.
//! - A [`Transport`] is a running network: a [`GameTransport`] whose [`Connection`]
//!   state can be watched (metrics, `/healthz`).
//!
//! The daemon's config, `run` (start loop, SIGHUP reload), `check-config` and metrics
//! iterate the registry and the configured networks; none of them names a kind.

use std::fmt::Debug;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde::Deserialize;
use spellbridge_core::GameTransport;
use spellbridge_core::time::parse_duration;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::irc::sts::StsPolicies;
use crate::matrix::appservice::txns::SeenTransactions;
use crate::matrix::positions::SyncPositions;
use crate::supervise::Connection;

/// A running network's transport, whose connection can be watched.
#[async_trait]
pub trait Transport: GameTransport + 'static {
    /// Where its connection stands now, and each change.
    fn connection(&self) -> watch::Receiver<Connection>;

    /// How many times its connection came back after failing; `0` if it does not say.
    fn reconnects(&self) -> u64 {
        0
    }

    /// What a room a `[[bridge]]` names is called in the messages the transport hands
    /// over: a Matrix alias (`#magic:example.org`) is looked up to the room id it points
    /// to now; every other room is [`Resolved::Same`] (the default).
    async fn resolve_room(&self, _room: &str) -> Resolved {
        Resolved::Same
    }
}

/// What [`Transport::resolve_room`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resolved {
    /// The room is named as its messages name it.
    Same,
    /// The name stands for this room (an alias's room id).
    Room(String),
    /// It cannot be looked up now (not logged in, the server unreachable): try later.
    NotYet(String),
    /// The server says the name points nowhere: why (try later too: it may be made).
    Unknown(String),
}

/// What the daemon gives a network's transport when it starts it.
#[derive(Clone)]
pub struct Start {
    /// What starts a command (`!`).
    pub prefix: String,
    /// The rooms to be in: the network's own and those of its bridges.
    pub rooms: Vec<String>,
    /// Cancelled when the daemon stops: the transport says goodbye and ends.
    pub stop: CancellationToken,
    /// Where IRC STS policies are kept (the daemon's database); other kinds ignore it.
    pub sts: Option<Arc<dyn StsPolicies>>,
    /// Where the Matrix appservice transactions taken in are kept (the daemon's
    /// database); other kinds and bot mode ignore it.
    pub txns: Option<Arc<dyn SeenTransactions>>,
    /// Where the Matrix transport keeps the `/sync` position it handled, for a daemon
    /// that takes over (the database two daemons share); other kinds ignore it.
    pub positions: Option<Arc<dyn SyncPositions>>,
    /// The language the network's own notices are told in (its `language`; IRC's
    /// "log in first" notice).
    pub language: spellbridge_core::Language,
    /// Asked before every line the transport writes for the daemon (IRC), and before
    /// Matrix keeps its handled sync position in `positions`.
    pub may_send: MaySend,
}

/// Asked by a transport right before it writes a line the daemon handed it: false once
/// the daemon may no longer act (its lease on a shared database is gone, issue 34). The
/// lines it still holds (waiting for flood control) are then dropped, never written, and
/// their senders told the connection dropped.
#[derive(Clone, Default)]
pub struct MaySend(Option<Arc<dyn Fn() -> bool + Send + Sync>>);

impl MaySend {
    /// Always (one daemon alone, and tests).
    pub fn always() -> Self {
        Self(None)
    }

    /// While `check` says so.
    pub fn when(check: impl Fn() -> bool + Send + Sync + 'static) -> Self {
        Self(Some(Arc::new(check)))
    }

    /// True when a line may be written now.
    pub fn now(&self) -> bool {
        self.0.as_ref().is_none_or(|check| check())
    }
}

impl Debug for MaySend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "MaySend(checked)" } else { "MaySend(always)" })
    }
}

/// How the players a network names are known across networks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ids {
    /// A sender's id names someone only on this network (an IRC nick or account):
    /// player ids carry the network's name (`libera:alice`).
    Local,
    /// A sender's id is the same everywhere (a Matrix id): player ids are the id.
    Global,
}

/// One configured network of some kind.
#[async_trait]
pub trait Network: Send + Sync + Debug {
    /// Its kind's config section (`irc`).
    fn kind(&self) -> &'static str;

    /// Its name in spellbridge (ids, logs, metrics, bridges).
    fn name(&self) -> &str;

    /// The rooms its own section names (IRC `channels`, Matrix `rooms`).
    fn rooms(&self) -> &[String];

    /// The per-player command limit: commands per window; `None` is off.
    fn user_limit(&self) -> Option<(u32, Duration)>;

    /// How its senders' ids name players.
    fn ids(&self) -> Ids;

    /// Checks a room a `[[bridge]]` names on this network; the error says what to write.
    fn check_bridge_room(&self, _room: &str) -> Result<(), String> {
        Ok(())
    }

    /// True when `room` names one of its rooms by an alias that [`Transport::resolve_room`]
    /// looks up (a Matrix `#alias:server`), not as its messages name the room.
    fn is_alias(&self, _room: &str) -> bool {
        false
    }

    /// How many queued relayed chat lines to one room may go as one message (1: each
    /// line its own message, as on IRC).
    fn merge_lines(&self) -> usize {
        1
    }

    /// What `check-config` prints after `<kind> <name>: ` (secrets never shown).
    fn describe(&self) -> String;

    /// Starts the transport and its supervisor task.
    fn start(&self, start: Start) -> (Arc<dyn Transport>, JoinHandle<()>);

    /// `check-config --connect`: connects and logs in once, within `limit`, as `run`
    /// would; what to print after `ok`, or the failure's whole cause chain.
    async fn check(&self, prefix: &str, limit: Duration) -> Result<String, String>;

    /// The network as its own type, for tests that look at what was read.
    fn as_any(&self) -> &dyn std::any::Any;
}

/// A kind of network: its config section and how one of its tables is read.
pub trait NetworkKind: Send + Sync {
    /// The section's name: `irc` for `[[irc]]`.
    fn section(&self) -> &'static str;

    /// Reads one `[[section]]` table; `base` is the config's folder, for relative paths.
    /// The error says what is wrong and what to write.
    fn configure(&self, table: toml::Table, base: &Path) -> Result<Arc<dyn Network>, String>;
}

/// The kinds of network the daemon can run, in the order `check-config` lists them.
/// Clones share the kinds.
#[derive(Clone)]
pub struct Networks {
    kinds: Vec<Arc<dyn NetworkKind>>,
}

impl Debug for Networks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.kinds.iter().map(|k| k.section())).finish()
    }
}

impl Networks {
    /// IRC and Matrix.
    pub fn standard() -> Self {
        Networks {
            kinds: vec![Arc::new(crate::irc::config::IrcKind), Arc::new(crate::matrix::config::MatrixKind)],
        }
    }

    /// Adds a kind after the others (one line per kind kept outside the adapters).
    pub fn register(mut self, kind: impl NetworkKind + 'static) -> Self {
        self.kinds.push(Arc::new(kind));
        self
    }

    /// Every kind.
    pub fn iter(&self) -> impl Iterator<Item = &dyn NetworkKind> {
        self.kinds.iter().map(AsRef::as_ref)
    }
}

/// Reads a table into a kind's own config struct (serde, unknown keys refused by its
/// `deny_unknown_fields`); the message starts with `at`.
pub fn parse_table<T: serde::de::DeserializeOwned>(table: toml::Table, at: &str) -> Result<T, String> {
    toml::Value::Table(table)
        .try_into()
        .map_err(|e: toml::de::Error| format!("{at}{}", spellbridge_core::options::describe(&e)))
}

/// A network's name in `at` form: `[[irc]] `libera`: `, from its table (before it is
/// read, so a missing name is reported with the section).
pub fn name_of(table: &toml::Table, section: &str) -> Result<String, String> {
    match table.get("name") {
        Some(toml::Value::String(name)) => Ok(name.clone()),
        _ => Err(format!(
            "[[{section}]]: missing field `name`; give the network a name, e.g. name = \"libera\""
        )),
    }
}

/// `user_limit`: commands per player, counted across their linked identities; each
/// network's limit is judged against that one count.
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

/// A network's `user_limit` table: 8 commands per 10 s unless it says otherwise, at most
/// an hour's window (the daemon remembers a player's commands that long).
pub fn user_limit(
    raw: Option<UserLimit>,
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

/// A positive duration option (`"2s"`, `"10m"`).
pub fn duration(text: &str, what: &str, at: &dyn Fn(&str) -> String) -> Result<Duration, String> {
    parse_duration(text)
        .filter(|s| *s > 0)
        .map(|s| Duration::from_secs(s.unsigned_abs()))
        .ok_or_else(|| at(&format!("{what} `{text}` is not a duration; write e.g. \"2s\", \"10m\"")))
}
