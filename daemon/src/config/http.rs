//! `[http]`: where the health and metrics endpoint listens and how much of it one client
//! may hold. The defaults are safe on a public address: 8 connections per client address,
//! 64 in all, a connection closed after 5 s without a byte either way and a request head
//! that must arrive within 10 s. The spectator site (`crate::site`) is served on the same
//! listener unless `site = false`, with at most `max_event_streams` live-update streams
//! (default: half of `connections`, so `/metrics` always has room), and never shows the
//! tables of `hidden_rooms` (`"network/room"`). `public_url` is where players
//! reach the spectator site (`!board` on IRC links to a table's page there).
//! `ops_listen` gives `/healthz` and `/metrics` a listener of their own, with its own
//! [`OPS_CONNECTIONS`], so spectators can never keep a health check or a scrape waiting;
//! the public listener still answers them when it has room.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use spellbridge_adapters::network::Network;
use spellbridge_core::time::parse_duration;
use spellbridge_core::{NetworkId, RoomId};

use super::raw;

/// The most connections served at once, by default.
pub const DEFAULT_CONNECTIONS: usize = 64;
/// The most connections from one client address, by default.
pub const DEFAULT_CONNECTIONS_PER_IP: usize = 8;
/// How long a connection may sit without a byte either way, by default.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a client may take to send a whole request head, by default.
pub const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// The most connections the operations listener (`ops_listen`) serves at once, from any
/// addresses: a health checker and a scraper or two.
pub const OPS_CONNECTIONS: usize = 16;

/// The endpoint's validated settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HttpSettings {
    /// Where it listens.
    pub listen: SocketAddr,
    /// Where `/healthz` and `/metrics` alone are served too, apart from the site.
    pub ops_listen: Option<SocketAddr>,
    /// The most connections served at once (from every address together).
    pub connections: usize,
    /// The most connections from one client address; more are refused with a 503.
    pub connections_per_ip: usize,
    /// A connection on which nothing is read or written for this long is closed
    /// (a kept-alive connection between requests, a stalled client).
    pub idle_timeout: Duration,
    /// A request head must arrive whole within this long.
    pub read_timeout: Duration,
    /// Whether the spectator site is served beside `/healthz` and `/metrics`.
    pub site: bool,
    /// The most live-update streams (`/tables/{id}/events`) open at once; more get a 503.
    pub max_event_streams: usize,
}

impl HttpSettings {
    /// The defaults, listening on `listen`.
    pub fn new(listen: SocketAddr) -> HttpSettings {
        HttpSettings {
            listen,
            ops_listen: None,
            connections: DEFAULT_CONNECTIONS,
            connections_per_ip: DEFAULT_CONNECTIONS_PER_IP,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            read_timeout: DEFAULT_READ_TIMEOUT,
            site: true,
            max_event_streams: DEFAULT_CONNECTIONS / 2,
        }
    }

    /// The settings of the operations listener on `address`: no site, at most
    /// [`OPS_CONNECTIONS`] (all from one address if need be), the same timeouts.
    pub fn ops(&self, address: SocketAddr) -> HttpSettings {
        HttpSettings {
            listen: address,
            ops_listen: None,
            connections: OPS_CONNECTIONS,
            connections_per_ip: OPS_CONNECTIONS,
            site: false,
            max_event_streams: 1,
            ..*self
        }
    }
}

/// Validates `[http]`; `None` when it names no `listen` address (no endpoint). Errors
/// say what is wrong and what to write.
pub fn settings(raw: Option<raw::Http>) -> Result<Option<HttpSettings>, String> {
    let Some(raw) = raw else { return Ok(None) };
    let Some(listen) = raw.listen else {
        let set = raw.connections.is_some()
            || raw.connections_per_ip.is_some()
            || raw.idle_timeout.is_some()
            || raw.read_timeout.is_some()
            || raw.site.is_some()
            || raw.max_event_streams.is_some()
            || raw.hidden_rooms.is_some()
            || raw.ops_listen.is_some();
        return if set {
            Err("[http] has settings but no `listen` address; add e.g. listen = \"127.0.0.1:9180\""
                .to_owned())
        } else {
            Ok(None)
        };
    };
    let listen = listen.parse::<SocketAddr>().map_err(|e| {
        format!("[http] listen `{listen}` is not an address ({e}); write e.g. \"127.0.0.1:9180\"")
    })?;
    let mut settings = HttpSettings::new(listen);
    if let Some(ops) = &raw.ops_listen {
        let ops = ops.parse::<SocketAddr>().map_err(|e| {
            format!("[http] ops_listen `{ops}` is not an address ({e}); write e.g. \"127.0.0.1:9181\"")
        })?;
        if ops == listen {
            return Err(format!(
                "[http] ops_listen is the same address as listen ({listen}); give it another port, \
                 e.g. \"127.0.0.1:{}\", or leave it out",
                listen.port().wrapping_add(1).max(1)
            ));
        }
        settings.ops_listen = Some(ops);
    }
    if let Some(connections) = raw.connections {
        if connections == 0 {
            return Err(format!(
                "[http] connections = 0 would serve nobody; give at least 1 (the default is {DEFAULT_CONNECTIONS})"
            ));
        }
        settings.connections = connections;
    }
    if let Some(per_ip) = raw.connections_per_ip {
        if per_ip == 0 || per_ip > settings.connections {
            return Err(format!(
                "[http] connections_per_ip = {per_ip} must be between 1 and connections ({}); \
                 the default is {DEFAULT_CONNECTIONS_PER_IP}",
                settings.connections
            ));
        }
        settings.connections_per_ip = per_ip;
    }
    settings.connections_per_ip = settings.connections_per_ip.min(settings.connections);
    settings.max_event_streams = (settings.connections / 2).max(1);
    if let Some(streams) = raw.max_event_streams {
        if streams == 0 || streams > settings.connections {
            return Err(format!(
                "[http] max_event_streams = {streams} must be between 1 and connections ({}); \
                 the default is half of connections",
                settings.connections
            ));
        }
        settings.max_event_streams = streams;
    }
    settings.site = raw.site.unwrap_or(true);
    if let Some(text) = &raw.idle_timeout {
        settings.idle_timeout = timeout(text, "idle_timeout", "5s")?;
    }
    if let Some(text) = &raw.read_timeout {
        settings.read_timeout = timeout(text, "read_timeout", "10s")?;
    }
    Ok(Some(settings))
}

/// Reads `[http] hidden_rooms`: each `network/room` with a configured network (the room
/// is everything after the first `/`) and a room that network can name (on Matrix a
/// room id, or an alias that is looked up like a bridge's).
pub fn hidden_rooms(
    raw: Option<&[String]>,
    networks: &[Arc<dyn Network>],
) -> Result<Vec<(NetworkId, RoomId)>, String> {
    raw.unwrap_or_default()
        .iter()
        .map(|entry| {
            let configured = entry
                .split_once('/')
                .and_then(|(name, room)| Some((networks.iter().find(|n| n.name() == name)?, room)));
            match configured {
                Some((network, room)) if !room.is_empty() => {
                    network.check_bridge_room(room).map_err(|reason| {
                        format!(
                            "[http] hidden_rooms: `{entry}`: {reason}; write it as \"{}/<room>\"",
                            network.name()
                        )
                    })?;
                    Ok((NetworkId::new(network.name()), RoomId::new(room)))
                }
                _ => Err(format!(
                    "[http] hidden_rooms: `{entry}` must be network/room with a configured network, \
                     e.g. \"libera/#secret\", \"matrix/#staff:example.org\" or \"matrix/!abc:example.org\""
                )),
            }
        })
        .collect()
}

/// `check-config`'s line for one hidden room: how it is read.
pub fn describe_hidden(network: &dyn Network, room: &RoomId) -> String {
    let how = if network.is_alias(room.as_str()) {
        "an alias: looked up when the daemon starts, on every SIGHUP and again when it moves; \
         the rooms it points to are hidden, and until it is looked up no table of that network is shown"
    } else {
        "a room as its messages name it"
    };
    format!("hidden from the site: {}/{} ({how}), with every room of its bridge", network.name(), room)
}

/// Reads `[http] public_url`: an `http://` or `https://` address, kept without a
/// trailing `/` (`!board` adds `/tables/{id}`).
pub fn public_url(raw: Option<&str>) -> Result<Option<String>, String> {
    let Some(url) = raw else { return Ok(None) };
    let trimmed = url.trim().trim_end_matches('/');
    let host = trimmed.strip_prefix("https://").or_else(|| trimmed.strip_prefix("http://"));
    match host {
        Some(host) if !host.is_empty() && !host.contains(char::is_whitespace) => Ok(Some(trimmed.to_owned())),
        _ => Err(format!(
            "[http] public_url `{url}` is not a web address; write e.g. public_url = \"https://games.example.org\""
        )),
    }
}

/// A timeout of 1 s to 1 h.
fn timeout(text: &str, key: &str, example: &str) -> Result<Duration, String> {
    parse_duration(text)
        .filter(|s| (1..=3600).contains(s))
        .map(|s| Duration::from_secs(s.unsigned_abs()))
        .ok_or_else(|| {
            format!("[http] {key} `{text}` is not a duration from 1s to 1h; write e.g. \"{example}\"")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http(text: &str) -> Result<Option<HttpSettings>, String> {
        let raw: raw::Http = toml::from_str(text).expect("toml");
        settings(Some(raw))
    }

    #[test]
    fn a_listen_address_alone_gets_the_safe_defaults() {
        let settings = http("listen = \"127.0.0.1:9180\"").expect("valid").expect("endpoint");
        assert_eq!(settings, HttpSettings::new("127.0.0.1:9180".parse().expect("address")));
        assert_eq!((settings.connections, settings.connections_per_ip), (64, 8));
        assert_eq!(
            (settings.idle_timeout, settings.read_timeout),
            (Duration::from_secs(5), Duration::from_secs(10))
        );
        assert_eq!(super::settings(None), Ok(None));
    }

    #[test]
    fn the_site_is_on_by_default_with_half_the_connections_for_event_streams() {
        let settings =
            http("listen = \"127.0.0.1:9180\"\nconnections = 10").expect("valid").expect("endpoint");
        assert!(settings.site);
        assert_eq!(settings.max_event_streams, 5);
        let settings = http("listen = \"127.0.0.1:9180\"\nsite = false\nmax_event_streams = 3")
            .expect("valid")
            .expect("endpoint");
        assert!(!settings.site);
        assert_eq!(settings.max_event_streams, 3);
    }

    #[test]
    fn the_operations_listener_has_its_own_address_and_connections() {
        let settings = http("listen = \"0.0.0.0:80\"\nops_listen = \"127.0.0.1:9181\"\nconnections = 10\nidle_timeout = \"2s\"")
            .expect("valid")
            .expect("endpoint");
        let address: SocketAddr = "127.0.0.1:9181".parse().expect("address");
        assert_eq!(settings.ops_listen, Some(address));
        let ops = settings.ops(address);
        assert_eq!(
            (ops.listen, ops.connections, ops.connections_per_ip, ops.site),
            (address, OPS_CONNECTIONS, OPS_CONNECTIONS, false)
        );
        assert_eq!(ops.idle_timeout, Duration::from_secs(2), "the same timeouts");
        assert_eq!(http("listen = \"127.0.0.1:1\"").expect("valid").expect("endpoint").ops_listen, None);
    }

    #[test]
    fn the_public_url_is_a_web_address_kept_without_its_last_slash() {
        assert_eq!(public_url(None), Ok(None));
        assert_eq!(
            public_url(Some("https://games.example.org/")),
            Ok(Some("https://games.example.org".into()))
        );
        assert_eq!(public_url(Some("http://127.0.0.1:9180")), Ok(Some("http://127.0.0.1:9180".into())));
        for bad in ["games.example.org", "https://", "ftp://x", "https://a b"] {
            let error = public_url(Some(bad)).expect_err(bad);
            assert!(error.contains("e.g. public_url = \"https://games.example.org\""), "{error}");
        }
    }

    #[test]
    fn limits_and_timeouts_are_read_and_bad_ones_refused_with_the_fix() {
        let settings = http(
            "listen = \"[::1]:80\"\nconnections = 10\nconnections_per_ip = 2\nidle_timeout = \"1s\"\nread_timeout = \"2m\"",
        )
        .expect("valid")
        .expect("endpoint");
        assert_eq!((settings.connections, settings.connections_per_ip), (10, 2));
        assert_eq!(
            (settings.idle_timeout, settings.read_timeout),
            (Duration::from_secs(1), Duration::from_secs(120))
        );
        let small = http("listen = \"127.0.0.1:1\"\nconnections = 4").expect("valid").expect("endpoint");
        assert_eq!(small.connections_per_ip, 4, "the per-address cap never exceeds the whole cap");
        for (text, fix) in [
            ("listen = \"here\"", "e.g. \"127.0.0.1:9180\""),
            ("listen = \"127.0.0.1:1\"\nconnections = 0", "at least 1"),
            ("listen = \"127.0.0.1:1\"\nconnections_per_ip = 0", "between 1 and connections (64)"),
            (
                "listen = \"127.0.0.1:1\"\nconnections = 4\nconnections_per_ip = 5",
                "between 1 and connections (4)",
            ),
            ("listen = \"127.0.0.1:1\"\nidle_timeout = \"0s\"", "e.g. \"5s\""),
            ("listen = \"127.0.0.1:1\"\nread_timeout = \"soon\"", "e.g. \"10s\""),
            ("idle_timeout = \"5s\"", "add e.g. listen"),
            ("hidden_rooms = []", "add e.g. listen"),
            ("ops_listen = \"127.0.0.1:9181\"", "add e.g. listen"),
            ("listen = \"127.0.0.1:1\"\nops_listen = \"9181\"", "e.g. \"127.0.0.1:9181\""),
            ("listen = \"127.0.0.1:1\"\nops_listen = \"127.0.0.1:1\"", "another port, e.g. \"127.0.0.1:2\""),
            ("listen = \"127.0.0.1:1\"\nmax_event_streams = 0", "between 1 and connections (64)"),
            (
                "listen = \"127.0.0.1:1\"\nconnections = 4\nmax_event_streams = 5",
                "between 1 and connections (4)",
            ),
        ] {
            let error = http(text).expect_err(text);
            assert!(error.contains(fix), "{text}: {error}");
        }
    }
}
