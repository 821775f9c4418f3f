//! A game's options as the operator wrote them: the TOML table of its section
//! (`[games.duel]`, or the older `[duel]`), handed to [`GamePlugin::configure`]
//! together with the way to read a file an option names. The core reads no files
//! itself: the daemon passes [`GameOptions::read_file`], which reads relative to the
//! config's folder.
//!
//! [`GamePlugin::configure`]: crate::GamePlugin::configure

use crate::time::parse_duration;

/// Reads a file an option names (as written, relative paths against the config's
/// folder): the path as it was read, and its text; or a message naming the path and
/// what went wrong.
pub type ReadFile<'a> = dyn Fn(&str) -> Result<(String, String), String> + 'a;

/// One game's options.
pub struct GameOptions<'a> {
    /// The section as written, for messages: `[duel]` or `[games.duel]`.
    pub section: String,
    /// What it says.
    pub table: toml::Table,
    /// Reads a file an option names.
    pub read_file: &'a ReadFile<'a>,
}

impl GameOptions<'_> {
    /// Reads the table into a game's own options struct (serde, unknown keys refused by
    /// the struct's `deny_unknown_fields`); the message names the section.
    pub fn parse<T: serde::de::DeserializeOwned>(&self) -> Result<T, String> {
        toml::Value::Table(self.table.clone())
            .try_into()
            .map_err(|e: toml::de::Error| format!("{}: {}", self.section, describe(&e)))
    }

    /// A duration option (`"10m"`, `"90s"`) in seconds, from `least` to `most`; `hint`
    /// is what to write instead, e.g. `write e.g. "10m" or "90s"`.
    pub fn duration(&self, key: &str, text: &str, least: i64, most: i64, what: &str) -> Result<i64, String> {
        parse_duration(text)
            .filter(|s| (least..=most).contains(s))
            .ok_or_else(|| format!("{} {key} `{text}` is not a duration{what}", self.section))
    }
}

/// A config value that did not read, with the key it was read for: `` `port`: invalid
/// type: string "six", expected u16 `` (serde names the key only in its `Display`, as a
/// last line `` in `port` ``).
pub fn describe(error: &toml::de::Error) -> String {
    let text = error.to_string();
    match text.trim_end().rsplit_once("\nin `") {
        Some((message, key)) => format!("`{}`: {}", key.trim_end_matches('`'), message.trim_end()),
        None => error.message().trim_end().to_owned(),
    }
}

/// A game taken by challenge (`!duel <player>`) rather than opened with `!new`; the
/// command that makes one is the game's [`GamePlugin::challenge_command`].
///
/// [`GamePlugin::challenge_command`]: crate::GamePlugin::challenge_command
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Challenge {
    /// How long a challenge waits for an answer, in seconds.
    pub lifetime_secs: i64,
}

/// How long a challenge waits for an answer unless the game's options say otherwise.
pub const CHALLENGE_LIFETIME_SECS: i64 = 10 * 60;
