//! `[[matrix]] mode = "appservice"`: the appservice keys of a `[[matrix]]` section,
//! checked ([`check`]) and then completed with the tokens of the registration file
//! ([`Checked::read_tokens`]). `spellbridge appservice-registration` needs only the
//! first step (the file is what it writes).
//!
//! ```toml
//! [[matrix]]
//! name = "matrix"
//! homeserver = "https://matrix.example.org"
//! user_id = "@spellbridge:example.org"   # the bot: a user of the appservice, no password
//! mode = "appservice"
//! registration = "appservice.yaml"       # relative to the config
//! listen = "127.0.0.1:9009"              # the appservice API's own listener
//! # url = "http://127.0.0.1:9009"        # how the homeserver reaches it (default)
//! # ghost_user = "@irc_{network}_{nick}:{server}"
//! # ghost_name = "{nick} (IRC)"
//! # netsplit_hold = "30s"                # how long a netsplit's quits wait for a rejoin
//! ```

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::AppserviceSettings;
use super::ghost::{DEFAULT_NAME, DEFAULT_USER, Ghosts};
use super::registration::{self, Plan};

/// The appservice keys as written, with what they are checked against.
#[derive(Clone, Copy, Debug)]
pub struct Raw<'a> {
    /// `mode`.
    pub mode: Option<&'a str>,
    /// `registration`.
    pub registration: Option<&'a Path>,
    /// `listen`.
    pub listen: Option<&'a str>,
    /// `url`.
    pub url: Option<&'a str>,
    /// `ghost_user`.
    pub ghost_user: Option<&'a str>,
    /// `ghost_name`.
    pub ghost_name: Option<&'a str>,
    /// `netsplit_hold`.
    pub netsplit_hold: Option<&'a str>,
    /// The network's name.
    pub network: &'a str,
    /// The bot's user id.
    pub user_id: &'a str,
}

/// The appservice keys, checked; the tokens not read yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checked {
    /// The registration file.
    pub registration: PathBuf,
    /// The appservice API's listener.
    pub listen: SocketAddr,
    /// Where the homeserver reaches it.
    pub url: String,
    /// The appservice's id in the registration.
    pub id: String,
    /// The appservice's sender user's localpart: the bot's with `-appservice` (Synapse
    /// refuses `/sync` to an appservice's sender user, so the bot is not it: the bot is a
    /// user of the appservice's namespace).
    pub sender_localpart: String,
    /// The bot's user id.
    pub bot: String,
    /// The ghosts' names.
    pub ghosts: Ghosts,
    /// How long the ghosts' leaves for a netsplit's quits are held: a member who comes
    /// back within it never leaves.
    pub netsplit_hold: Duration,
}

/// How long a netsplit's leaves are held by default (matrix-appservice-irc's order of
/// magnitude: most splits heal within seconds).
pub const NETSPLIT_HOLD: Duration = Duration::from_secs(30);

impl Checked {
    /// What the registration file says besides its tokens.
    pub fn plan(&self) -> Plan {
        Plan {
            id: self.id.clone(),
            url: self.url.clone(),
            sender_localpart: self.sender_localpart.clone(),
            users: vec![self.ghosts.namespace(), format!("^{}$", super::ghost::regex_escape(&self.bot))],
        }
    }

    /// Reads the tokens from the registration file; the error says how to make one.
    pub fn read_tokens(self) -> Result<AppserviceSettings, String> {
        let tokens = registration::read(&self.registration).map_err(|e| match e {
            registration::RegistrationError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                format!(
                    "the registration file {} does not exist; write it with `spellbridge appservice-registration --config <this config>` \
                     and give it to the homeserver (app_service_config_files)",
                    self.registration.display()
                )
            }
            other => other.to_string(),
        })?;
        if tokens.sender_localpart != self.sender_localpart {
            return Err(format!(
                "the registration {} is for the sender `{}`, but this user_id's is `{}`; write a new one with \
                 `spellbridge appservice-registration --config <this config> --force`",
                self.registration.display(),
                tokens.sender_localpart,
                self.sender_localpart
            ));
        }
        Ok(AppserviceSettings { checked: self, tokens })
    }
}

/// Checks the appservice keys: `None` in bot mode (where they are refused), the
/// settings in appservice mode. The error says what to write.
pub fn check(raw: &Raw<'_>, base: &Path) -> Result<Option<Checked>, String> {
    match raw.mode.unwrap_or("bot") {
        "bot" => {
            let stray = [
                ("registration", raw.registration.is_some()),
                ("listen", raw.listen.is_some()),
                ("url", raw.url.is_some()),
                ("ghost_user", raw.ghost_user.is_some()),
                ("ghost_name", raw.ghost_name.is_some()),
                ("netsplit_hold", raw.netsplit_hold.is_some()),
            ];
            match stray.iter().find(|(_, given)| *given) {
                Some((key, _)) => Err(format!(
                    "`{key}` is an appservice setting: add mode = \"appservice\" (with registration and listen), or remove it"
                )),
                None => Ok(None),
            }
        }
        "appservice" => appservice(raw, base).map(Some),
        other => Err(format!("mode `{other}` is not a mode; write mode = \"bot\" or mode = \"appservice\"")),
    }
}

fn appservice(raw: &Raw<'_>, base: &Path) -> Result<Checked, String> {
    let registration = raw.registration.ok_or(
        "appservice mode needs the registration file, e.g. registration = \"appservice.yaml\" \
         (write it with `spellbridge appservice-registration`)",
    )?;
    let registration =
        if registration.is_relative() { base.join(registration) } else { registration.to_owned() };
    let listen = raw.listen.ok_or("appservice mode needs its listener, e.g. listen = \"127.0.0.1:9009\"")?;
    let listen: SocketAddr = listen.parse().map_err(|_| {
        format!("listen `{listen}` is not an address and port; write e.g. listen = \"127.0.0.1:9009\"")
    })?;
    let url = match raw.url {
        Some(url) if url.starts_with("http://") || url.starts_with("https://") => {
            url.trim_end_matches('/').to_owned()
        }
        Some(url) => return Err(format!("url `{url}` must be a URL, e.g. url = \"http://127.0.0.1:9009\"")),
        None => format!("http://{listen}"),
    };
    let (localpart, server) = raw
        .user_id
        .strip_prefix('@')
        .and_then(|rest| rest.split_once(':'))
        .ok_or("`user_id` must be a full Matrix id, e.g. user_id = \"@spellbridge:example.org\"")?;
    let ghosts =
        Ghosts::new(raw.ghost_user.unwrap_or(DEFAULT_USER), raw.ghost_name.unwrap_or(DEFAULT_NAME), server)?;
    if ghosts.is_ghost(raw.user_id) {
        return Err(format!(
            "user_id `{}` would be one of the ghosts (ghost_user `{}`): give the bot another name",
            raw.user_id,
            raw.ghost_user.unwrap_or(DEFAULT_USER)
        ));
    }
    let netsplit_hold = match raw.netsplit_hold {
        None => NETSPLIT_HOLD,
        Some(text) => spellbridge_core::time::parse_duration(text)
            .and_then(|secs| u64::try_from(secs).ok())
            .map(Duration::from_secs)
            .ok_or_else(|| {
                format!("netsplit_hold `{text}` is not a duration; write e.g. netsplit_hold = \"30s\"")
            })?,
    };
    Ok(Checked {
        netsplit_hold,
        registration,
        listen,
        url,
        id: format!("spellbridge-{}", super::ghost::escape(raw.network)),
        sender_localpart: format!("{localpart}-appservice"),
        bot: raw.user_id.to_owned(),
        ghosts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw<'a>(mode: Option<&'a str>, listen: Option<&'a str>) -> Raw<'a> {
        Raw {
            mode,
            registration: Some(Path::new("as.yaml")),
            listen,
            url: None,
            ghost_user: None,
            ghost_name: None,
            netsplit_hold: None,
            network: "matrix",
            user_id: "@spellbridge:example.org",
        }
    }

    #[test]
    fn appservice_mode_fills_in_its_defaults() {
        let checked = check(&raw(Some("appservice"), Some("127.0.0.1:9009")), Path::new("/etc/sb"))
            .expect("valid")
            .expect("appservice mode");
        assert_eq!(checked.registration, Path::new("/etc/sb/as.yaml"));
        assert_eq!(checked.url, "http://127.0.0.1:9009");
        assert_eq!(checked.sender_localpart, "spellbridge-appservice");
        assert_eq!(checked.netsplit_hold, NETSPLIT_HOLD);
        assert_eq!(checked.id, "spellbridge-matrix");
        assert_eq!(checked.ghosts.user_id("libera", "Bob"), "@irc_libera_bob:example.org");
        assert_eq!(
            checked.plan().users,
            [checked.ghosts.namespace(), "^@spellbridge:example\\.org$".to_owned()]
        );
    }

    #[test]
    fn mistakes_are_refused_with_what_to_write() {
        let base = Path::new(".");
        let bot_with_listen = check(&raw(None, Some("127.0.0.1:1")), base).expect_err("listen in bot mode");
        assert!(bot_with_listen.contains("mode = \"appservice\""), "{bot_with_listen}");
        let no_listen = check(&raw(Some("appservice"), None), base).expect_err("no listen");
        assert!(no_listen.contains("listen = \"127.0.0.1:9009\""), "{no_listen}");
        let bad_listen = check(&raw(Some("appservice"), Some("localhost")), base).expect_err("no port");
        assert!(bad_listen.contains("not an address and port"), "{bad_listen}");
        let bad_mode = check(&raw(Some("bridge"), None), base).expect_err("no such mode");
        assert!(bad_mode.contains("mode = \"appservice\""), "{bad_mode}");
        let mut ghostly = raw(Some("appservice"), Some("127.0.0.1:1"));
        ghostly.user_id = "@irc_x_bot:example.org";
        let error = check(&ghostly, base).expect_err("the bot is a ghost");
        assert!(error.contains("one of the ghosts"), "{error}");
        let missing = check(&raw(Some("appservice"), Some("127.0.0.1:1")), Path::new("/nonexistent"))
            .expect("checks")
            .expect("appservice")
            .read_tokens()
            .expect_err("no file");
        assert!(missing.contains("spellbridge appservice-registration"), "{missing}");
    }
}
