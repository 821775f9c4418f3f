//! Secrets in the config (for every network kind's section): a password or token is never written in the TOML itself but
//! named as `{ env = "NAME" }` or `{ file = "/run/secrets/x" }`, read once at start-up,
//! and never shown by `Debug` or in logs.

use std::fmt;
use std::path::PathBuf;

use serde::Deserialize;

/// Where a secret comes from, as written in the config.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(untagged, deny_unknown_fields)]
pub enum SecretSource {
    /// An environment variable.
    Env {
        /// Its name.
        env: String,
    },
    /// A file whose contents (trailing newline trimmed) are the secret.
    File {
        /// Its path.
        file: PathBuf,
    },
}

/// A secret's value. `Debug` and `Display` show `<redacted>`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// The value, for the one place that sends it to a server.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl SecretSource {
    /// Reads the secret; the error says which variable or file and what to do.
    pub fn read(&self) -> Result<Secret, String> {
        let value = match self {
            SecretSource::Env { env } => std::env::var(env).map_err(|_| {
                format!("the environment variable {env} is not set; export it before starting spellbridge")
            })?,
            SecretSource::File { file } => std::fs::read_to_string(file)
                .map_err(|e| format!("cannot read the secret file {}: {e}", file.display()))?
                .trim_end_matches(['\r', '\n'])
                .to_owned(),
        };
        if value.is_empty() {
            return Err(match self {
                SecretSource::Env { env } => format!("the environment variable {env} is empty"),
                SecretSource::File { file } => format!("the secret file {} is empty", file.display()),
            });
        }
        Ok(Secret(value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_show_in_debug_output() {
        let secret = Secret("hunter2".into());
        assert_eq!(format!("{secret:?}"), "<redacted>");
    }

    #[test]
    fn a_missing_variable_says_which_one() {
        let source = SecretSource::Env { env: "SPELLBRIDGE_TEST_SURELY_UNSET".into() };
        let error = source.read().expect_err("unset");
        assert!(error.contains("SPELLBRIDGE_TEST_SURELY_UNSET"), "{error}");
    }

    #[test]
    fn a_file_secret_loses_its_trailing_newline() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("pw");
        std::fs::write(&path, "s3cret\n").expect("write");
        assert_eq!(SecretSource::File { file: path }.read().expect("reads").expose(), "s3cret");
    }
}
