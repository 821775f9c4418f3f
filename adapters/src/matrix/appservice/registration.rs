//! The appservice registration file (issue 17, item 1): what the homeserver admin copies
//! to the homeserver and lists in `app_service_config_files`, and where the daemon reads
//! its two tokens from, so that the file is the one place they are kept.
//!
//! [`write`] makes it from the `[[matrix]]` settings with fresh tokens from the operating
//! system's generator: the id, the URL of the appservice listener, `as_token` and
//! `hs_token`, a `sender_localpart` that is not the bot's (Synapse refuses `/sync` to an
//! appservice's sender user, and the bot syncs), exclusive user namespaces for the ghosts
//! and for the bot (no alias or room namespaces: the bridge claims neither) and
//! `rate_limited: false`. It is written owner-only (0600), and never over an existing
//! file unless asked to. The file is YAML in its JSON form (with a comment on top), which
//! every YAML reader, Synapse's included, reads; [`read`] reads it back with ruma's
//! [`Registration`] type.

use std::io::Write as _;
use std::path::Path;

use matrix_sdk::ruma::api::appservice::{Namespace, Namespaces, Registration, RegistrationInit};

/// What a registration is made of, besides its tokens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The appservice's id.
    pub id: String,
    /// Where the homeserver reaches the appservice API.
    pub url: String,
    /// The appservice's sender user's localpart (not the bot: Synapse refuses `/sync`
    /// to an appservice's sender, and the bot syncs).
    pub sender_localpart: String,
    /// The user namespace's regexes, each exclusive: the ghosts' and the bot's own id.
    pub users: Vec<String>,
}

/// The tokens the daemon reads from the file.
#[derive(Clone, PartialEq, Eq)]
pub struct Tokens {
    /// What the appservice sends the homeserver.
    pub as_token: String,
    /// What the homeserver sends the appservice.
    pub hs_token: String,
    /// The bot's localpart, as the file names it.
    pub sender_localpart: String,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokens")
            .field("as_token", &"<redacted>")
            .field("hs_token", &"<redacted>")
            .field("sender_localpart", &self.sender_localpart)
            .finish()
    }
}

/// Why the registration file cannot be written or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegistrationError {
    /// It exists and `--force` was not given.
    #[error(
        "{0} exists already; give --force to replace it (the homeserver must then be given the new file)"
    )]
    Exists(String),
    /// Reading or writing failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// It is not a registration.
    #[error(
        "{path} is not an appservice registration ({reason}); write one with `spellbridge appservice-registration --config FILE`"
    )]
    Unreadable {
        /// The file.
        path: String,
        /// What did not read.
        reason: String,
    },
}

const HEADER: &str = "# spellbridge's Matrix appservice registration (YAML, in its JSON form).\n\
# Copy it to the homeserver and list it in app_service_config_files (Synapse), then restart\n\
# the homeserver. Keep it secret: its tokens let anyone act as the bridge and its ghosts.\n";

/// A fresh token: 32 bytes from the operating system's generator, in hex.
///
/// # Panics
/// If the operating system has no random source to give (a broken system).
pub fn fresh_token() -> String {
    let mut bytes = [0u8; 32];
    #[allow(clippy::expect_used)]
    getrandom::fill(&mut bytes).expect("the operating system's random generator failed");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The registration `plan` describes, with fresh tokens.
pub fn registration(plan: &Plan) -> Registration {
    let mut namespaces = Namespaces::new();
    namespaces.users = plan.users.iter().map(|regex| Namespace::new(true, regex.clone())).collect();
    RegistrationInit {
        id: plan.id.clone(),
        url: Some(plan.url.clone()),
        as_token: fresh_token(),
        hs_token: fresh_token(),
        sender_localpart: plan.sender_localpart.clone(),
        namespaces,
        rate_limited: Some(false),
        protocols: None,
    }
    .into()
}

/// Writes a new registration for `plan` to `path` (0600); refuses an existing file
/// unless `force`.
pub fn write(path: &Path, plan: &Plan, force: bool) -> Result<Registration, RegistrationError> {
    let shown = path.display().to_string();
    let io = |source| RegistrationError::Io { path: shown.clone(), source };
    let registration = registration(plan);
    let json =
        serde_json::to_string_pretty(&registration).map_err(|e| io(std::io::Error::other(e.to_string())))?;
    let mut options = std::fs::OpenOptions::new();
    options.write(true);
    if force {
        options.create(true).truncate(true);
    } else {
        options.create_new(true);
    }
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => RegistrationError::Exists(shown.clone()),
        _ => io(e),
    })?;
    // An existing file keeps its mode when truncated: make it owner-only too.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        file.set_permissions(std::fs::Permissions::from_mode(0o600)).map_err(io)?;
    }
    file.write_all(format!("{HEADER}{json}\n").as_bytes()).map_err(io)?;
    file.sync_all().map_err(io)?;
    Ok(registration)
}

/// Reads the tokens from a registration file.
pub fn read(path: &Path) -> Result<Tokens, RegistrationError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|source| RegistrationError::Io { path: shown.clone(), source })?;
    let json: String =
        text.lines().filter(|line| !line.trim_start().starts_with('#')).collect::<Vec<_>>().join("\n");
    let registration: Registration =
        serde_json::from_str(&json).map_err(|e| RegistrationError::Unreadable {
            path: shown.clone(),
            reason: format!("{e}; spellbridge reads the JSON form it writes"),
        })?;
    Ok(Tokens {
        as_token: registration.as_token,
        hs_token: registration.hs_token,
        sender_localpart: registration.sender_localpart,
    })
}

/// `spellbridge appservice-registration`: writes the registration of every `[[matrix]]`
/// section of the config `file` (read from `config`) with `mode = "appservice"`, and
/// returns their paths; reads only those sections (the rest of the config is checked by
/// `run` and `check-config`), since the registration file the full check reads does not
/// exist yet. Refuses when no section is an appservice, saying what to add.
pub fn write_from_config(
    mut file: toml::Table,
    config: &Path,
    force: bool,
) -> Result<Vec<std::path::PathBuf>, String> {
    let base = config.parent().unwrap_or(Path::new("."));
    let tables = match file.remove("matrix") {
        Some(toml::Value::Array(items)) => items,
        _ => Vec::new(),
    };
    let mut written = Vec::new();
    for item in tables {
        let toml::Value::Table(table) = item else { continue };
        let plan = crate::matrix::config::registration_plan(table, base)
            .map_err(|e| format!("{}: {e}", config.display()))?;
        if let Some((path, plan)) = plan {
            write(&path, &plan, force).map_err(|e| e.to_string())?;
            written.push(path);
        }
    }
    if written.is_empty() {
        return Err(format!(
            "{}: no [[matrix]] has mode = \"appservice\"; add mode = \"appservice\", \
             registration = \"appservice.yaml\" and listen = \"127.0.0.1:9009\" to one",
            config.display()
        ));
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> Plan {
        Plan {
            id: "spellbridge-matrix".into(),
            url: "http://127.0.0.1:9009".into(),
            sender_localpart: "spellbridge".into(),
            users: vec!["^@irc_.+:hs$".into(), "^@bot:hs$".into()],
        }
    }

    #[test]
    fn a_registration_is_written_owner_only_once_and_read_back() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("registration.yaml");
        let written = write(&path, &plan(), false).expect("written");
        assert_eq!(written.as_token.len(), 64);
        assert_ne!(written.as_token, written.hs_token, "two tokens");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path).expect("meta").permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        let text = std::fs::read_to_string(&path).expect("read");
        let json: serde_json::Value = serde_json::from_str(
            &text.lines().filter(|l| !l.starts_with('#')).collect::<Vec<_>>().join("\n"),
        )
        .expect("json");
        assert_eq!(json["namespaces"]["users"][0]["exclusive"], true);
        assert_eq!(json["namespaces"]["users"][0]["regex"], "^@irc_.+:hs$");
        assert_eq!(json["namespaces"]["users"][1]["exclusive"], true);
        assert!(json["namespaces"].get("aliases").is_none() && json["namespaces"].get("rooms").is_none());
        assert_eq!(json["rate_limited"], false);
        assert_eq!(json["url"], "http://127.0.0.1:9009");
        assert_eq!(json["sender_localpart"], "spellbridge");
        let tokens = read(&path).expect("read back");
        assert_eq!(
            (tokens.as_token.as_str(), tokens.hs_token.as_str()),
            (written.as_token.as_str(), written.hs_token.as_str())
        );
        assert!(!format!("{tokens:?}").contains(&tokens.as_token), "Debug hides the tokens");

        let again = write(&path, &plan(), false).expect_err("exists");
        assert!(
            matches!(again, RegistrationError::Exists(_)) && again.to_string().contains("--force"),
            "{again}"
        );
        assert_eq!(read(&path).expect("unchanged").as_token, written.as_token);
        let forced = write(&path, &plan(), true).expect("forced");
        assert_ne!(forced.as_token, written.as_token, "fresh tokens");
        assert_eq!(read(&path).expect("replaced").as_token, forced.as_token);
    }

    #[test]
    fn a_file_that_is_not_a_registration_says_how_to_make_one() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("r.yaml");
        std::fs::write(&path, "id: x\n").expect("write");
        let error = read(&path).expect_err("not json");
        assert!(error.to_string().contains("spellbridge appservice-registration"), "{error}");
        let missing = read(&dir.path().join("nothing")).expect_err("missing");
        assert!(matches!(missing, RegistrationError::Io { .. }), "{missing}");
    }
}
