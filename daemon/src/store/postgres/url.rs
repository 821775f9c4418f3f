//! `[store] url`: where the PostgreSQL store is. The URL may carry a password, so it is
//! kept whole only to connect; everything shown (errors, logs, `spellbridge check`) is the
//! user, host, port and database, never the password. Its `sslmode` and `sslrootcert`
//! are read here (libpq's words, [`super::tls`]), not by tokio-postgres, which knows
//! neither `verify-ca`, `verify-full` nor `sslrootcert`.

use std::fmt;
use std::path::PathBuf;

use tokio_postgres::Config;

use super::tls::{SslMode, Tls};

/// A PostgreSQL URL that parsed, shown without its password.
#[derive(Clone)]
pub struct StoreUrl {
    config: Config,
    tls: Tls,
    shown: String,
    /// The URL as written, password and all: only to connect.
    secret: String,
}

/// Why a `[store] url` cannot be used. The URL itself is never repeated.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum UrlError {
    /// Not a `postgres://` or `postgresql://` URL.
    #[error(
        "[store] url must start with postgres:// (a SQLite file is given as [store] path); \
         write it as url = \"postgres://USER:PASSWORD@HOST:PORT/DATABASE\""
    )]
    Scheme,
    /// PostgreSQL's parser refused it.
    #[error(
        "[store] url is not one PostgreSQL understands ({reason}); write it as \
         url = \"postgres://USER:PASSWORD@HOST:PORT/DATABASE\""
    )]
    Parse {
        /// What the parser said (it does not quote the URL).
        reason: String,
    },
    /// It names no database or no user.
    #[error(
        "[store] url names no {missing}; write it as url = \"postgres://USER:PASSWORD@HOST:PORT/DATABASE\""
    )]
    Incomplete {
        /// "database" or "user".
        missing: &'static str,
    },
    /// `sslmode=` names no mode.
    #[error("[store] url has sslmode={given}, which is not a mode; write sslmode={}", SslMode::NAMES)]
    SslMode {
        /// What it says.
        given: String,
    },
}

impl StoreUrl {
    /// Reads `url`: `postgres://USER:PASSWORD@HOST:PORT/DATABASE` (options after `?` as
    /// PostgreSQL reads them).
    pub fn parse(url: &str) -> Result<Self, UrlError> {
        let url = url.trim();
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            return Err(UrlError::Scheme);
        }
        let (rest, tls) = take_tls(url)?;
        let mut config: Config = rest
            .parse()
            .map_err(|e: tokio_postgres::Error| UrlError::Parse { reason: scrub(&e.to_string(), url) })?;
        config.ssl_mode(tls.mode().wire());
        let Some(user) = config.get_user().filter(|u| !u.is_empty()) else {
            return Err(UrlError::Incomplete { missing: "user" });
        };
        let Some(database) = config.get_dbname() else {
            return Err(UrlError::Incomplete { missing: "database" });
        };
        let host = match config.get_hosts().first() {
            Some(tokio_postgres::config::Host::Tcp(host)) => host.clone(),
            Some(tokio_postgres::config::Host::Unix(path)) => path.display().to_string(),
            None => "localhost".to_owned(),
        };
        let port = config.get_ports().first().copied().unwrap_or(5432);
        let shown = format!("postgres://{user}@{host}:{port}/{database}");
        Ok(Self { config, tls, shown, secret: url.to_owned() })
    }

    /// How each connection makes its TLS.
    pub(crate) fn tls(&self) -> Tls {
        self.tls.clone()
    }

    /// The connection settings.
    pub(crate) fn config(&self) -> &Config {
        &self.config
    }

    /// The URL as written, password and all: only to hand to a connection.
    pub(crate) fn secret(&self) -> &str {
        &self.secret
    }

    /// The URL without its password.
    pub fn shown(&self) -> &str {
        &self.shown
    }
}

/// The URL without `sslmode` and `sslrootcert`, and the TLS they ask for (`prefer`, as
/// libpq, when there is no `sslmode`).
fn take_tls(url: &str) -> Result<(String, Tls), UrlError> {
    let Some((base, query)) = url.split_once('?') else {
        return Ok((url.to_owned(), Tls::new(SslMode::Prefer, None)));
    };
    let (mut mode, mut root) = (SslMode::Prefer, None);
    let mut kept = Vec::new();
    for pair in query.split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match key {
            "sslmode" => {
                let value = decode(value);
                mode = SslMode::parse(&value).ok_or(UrlError::SslMode { given: value })?;
            }
            "sslrootcert" => root = Some(PathBuf::from(decode(value))),
            _ => kept.push(pair),
        }
    }
    let rest = if kept.is_empty() { base.to_owned() } else { format!("{base}?{}", kept.join("&")) };
    Ok((rest, Tls::new(mode, root)))
}

/// A URL query value with its `%XX` escapes decoded (a path may need `%20`).
fn decode(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A parser message with any piece of the URL taken out (it has none today; this keeps a
/// future one from echoing a password).
fn scrub(message: &str, url: &str) -> String {
    let password = url
        .split_once("://")
        .and_then(|(_, rest)| rest.split_once('@'))
        .and_then(|(who, _)| who.split_once(':'))
        .map(|(_, pw)| pw);
    match password {
        Some(password) if !password.is_empty() => message.replace(password, "…"),
        _ => message.to_owned(),
    }
}

impl fmt::Debug for StoreUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown)
    }
}

impl fmt::Display for StoreUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown)
    }
}

impl PartialEq for StoreUrl {
    fn eq(&self, other: &Self) -> bool {
        self.shown == other.shown
            && self.config.get_password() == other.config.get_password()
            && self.tls.mode() == other.tls.mode()
            && self.tls.root() == other.tls.root()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_good_url_is_shown_without_its_password() {
        let url = StoreUrl::parse("postgres://bridge:s3cret-pw@127.0.0.1:5433/games").expect("parses");
        assert_eq!(url.shown(), "postgres://bridge@127.0.0.1:5433/games");
        assert_eq!(
            format!("{url} {url:?}"),
            "postgres://bridge@127.0.0.1:5433/games postgres://bridge@127.0.0.1:5433/games"
        );
    }

    #[test]
    fn a_bad_url_says_what_to_write_and_never_echoes_the_password() {
        for (bad, expected) in [
            ("sqlite:/var/lib/s3cret-pw.db", "must start with postgres://"),
            ("postgres://bridge:s3cret-pw@127.0.0.1:notaport/games", "not one PostgreSQL understands"),
            ("postgres://bridge:s3cret-pw@127.0.0.1:5432", "names no database"),
            ("postgres://:s3cret-pw@127.0.0.1:5432/games", "names no user"),
        ] {
            let error = StoreUrl::parse(bad).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(error.contains(expected), "{bad}: {error}");
            assert!(error.contains("postgres://USER:PASSWORD@HOST:PORT/DATABASE"), "{error}");
            assert!(!error.contains("s3cret"), "the password is never shown: {error}");
        }
    }

    #[test]
    fn sslmode_and_sslrootcert_are_read_as_libpq_reads_them() {
        let tls =
            |url: &str| StoreUrl::parse(url).map(|u| (u.tls().mode(), u.tls().root().map(PathBuf::from)));
        let base = "postgres://bridge:pw@db.example:5432/games";
        assert_eq!(tls(base), Ok((SslMode::Prefer, None)), "prefer, as libpq, when not said");
        for (query, mode) in [
            ("sslmode=disable", SslMode::Disable),
            ("sslmode=require", SslMode::Require),
            ("sslmode=verify-ca", SslMode::VerifyCa),
            ("application_name=x&sslmode=verify-full", SslMode::VerifyFull),
        ] {
            assert_eq!(tls(&format!("{base}?{query}")), Ok((mode, None)), "{query}");
        }
        assert_eq!(
            tls(&format!("{base}?sslmode=verify-full&sslrootcert=/etc/my%20ca.pem")),
            Ok((SslMode::VerifyFull, Some(PathBuf::from("/etc/my ca.pem"))))
        );
        assert_eq!(
            tls(&format!("{base}?sslmode=require&sslrootcert=/etc/ca.pem")),
            Ok((SslMode::VerifyCa, Some(PathBuf::from("/etc/ca.pem")))),
            "require with a CA checks it, as libpq"
        );
        let url = StoreUrl::parse(&format!("{base}?sslmode=verify-full")).expect("parses");
        assert_eq!(url.config().get_ssl_mode(), tokio_postgres::config::SslMode::Require, "never in clear");
    }

    #[test]
    fn an_unknown_sslmode_is_refused_naming_the_valid_ones() {
        let error = StoreUrl::parse("postgres://bridge:s3cret-pw@db:5432/games?sslmode=verify_full")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert_eq!(
            error,
            "[store] url has sslmode=verify_full, which is not a mode; \
             write sslmode=disable, prefer, require, verify-ca or verify-full"
        );
    }
}
