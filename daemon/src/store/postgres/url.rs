//! `[store] url`: where the PostgreSQL store is. The URL may carry a password, so it is
//! kept whole only to connect; everything shown (errors, logs, `spellbridge check`) is the
//! user, host, port and database, never the password.

use std::fmt;

use tokio_postgres::Config;

/// A PostgreSQL URL that parsed, shown without its password.
#[derive(Clone)]
pub struct StoreUrl {
    config: Config,
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
}

impl StoreUrl {
    /// Reads `url`: `postgres://USER:PASSWORD@HOST:PORT/DATABASE` (options after `?` as
    /// PostgreSQL reads them).
    pub fn parse(url: &str) -> Result<Self, UrlError> {
        let url = url.trim();
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            return Err(UrlError::Scheme);
        }
        let config: Config = url
            .parse()
            .map_err(|e: tokio_postgres::Error| UrlError::Parse { reason: scrub(&e.to_string(), url) })?;
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
        Ok(Self { config, shown, secret: url.to_owned() })
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
        self.shown == other.shown && self.config.get_password() == other.config.get_password()
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
}
