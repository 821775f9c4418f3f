//! The ratings the store keeps (`meta` key `ratings`): the [`Summary`] derived from the
//! whole journal, with the network scopes it was derived under, as JSON text. Nothing in
//! it is trusted: `spellbridge verify` derives it again from the journal and reports a
//! stored copy that differs (a tampered or stale rating).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use spellbridge_core::{NetworkId, Registry};

use super::{SqliteStore, StoreError};
use crate::identity::Scope;
use crate::journal::Entry;
use crate::ratings::{self, RatingsError, Summary, legacy};
use serde_json::Value;

/// The `meta` key the ratings are kept under.
pub const META_KEY: &str = "ratings";

/// What is stored: the summary and the scopes it was derived under.
#[derive(Serialize, Deserialize)]
struct Stored {
    scopes: BTreeMap<NetworkId, String>,
    summary: Summary,
}

fn scope_word(scope: Scope) -> &'static str {
    match scope {
        Scope::Network => "network",
        Scope::Global => "global",
        Scope::Bare => "bare",
    }
}

fn scope_of(word: &str) -> Option<Scope> {
    match word {
        "network" => Some(Scope::Network),
        "global" => Some(Scope::Global),
        "bare" => Some(Scope::Bare),
        _ => None,
    }
}

/// What checking the stored ratings found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum RatingsCheck {
    /// No ratings are stored.
    #[default]
    NoneStored,
    /// The stored ratings equal the ones derived from the journal.
    Match,
    /// They differ: the first differing path (e.g. `.summary.players.alice.challenges.duel.rating.rating`).
    Differs(String),
    /// The stored ratings do not read, or the journal does not derive.
    Unreadable(String),
}

impl RatingsCheck {
    /// True when the stored ratings are wrong or unreadable.
    pub fn is_problem(&self) -> bool {
        matches!(self, RatingsCheck::Differs(_) | RatingsCheck::Unreadable(_))
    }
}

impl std::fmt::Display for RatingsCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RatingsCheck::NoneStored => f.write_str("none stored"),
            RatingsCheck::Match => f.write_str("ok (derived again from the journal)"),
            RatingsCheck::Differs(path) => write!(
                f,
                "DIFFER from the journal's at {path}; they were changed outside spellbridge or are stale (the next refresh rewrites them from the journal)"
            ),
            RatingsCheck::Unreadable(reason) => write!(f, "UNREADABLE: {reason}"),
        }
    }
}

impl SqliteStore {
    /// Every journal entry, tables' and lobby's, in the order they were committed.
    pub fn journal(&self) -> Result<Vec<Entry>, StoreError> {
        self.numbered_rows("SELECT id, entry FROM journal ORDER BY id")?
            .into_iter()
            .map(|(id, text)| {
                serde_json::from_str(&text).map_err(|e| StoreError::BadRow {
                    path: self.path.clone(),
                    detail: format!("journal row {id}: {e}"),
                })
            })
            .collect()
    }
}

/// The ratings on either engine: what an engine gives ([`Ratings::entries`],
/// [`Ratings::named`], [`Ratings::keep_named`], [`Ratings::row_error`]), and the rest
/// written once on top.
pub trait Ratings {
    /// Every journal entry, in order.
    fn entries(&self) -> Result<Vec<Entry>, StoreError>;
    /// A named value (`meta`).
    fn named(&self, key: &str) -> Result<Option<String>, StoreError>;
    /// Keeps a named value (`meta`), outside any commit of moves: only for what is
    /// derived from the journal.
    fn keep_named(&self, key: &str, value: &str) -> Result<(), StoreError>;
    /// A stored row that does not read.
    fn row_error(&self, detail: String) -> StoreError;

    /// Derives the ratings from the whole journal (see [`ratings`]).
    fn derive_ratings(
        &self,
        registry: &Registry,
        scopes: &BTreeMap<NetworkId, Scope>,
    ) -> Result<Result<Summary, RatingsError>, StoreError> {
        let journal = self.entries()?;
        Ok(ratings::derive(registry, scopes.clone(), &journal))
    }

    /// Keeps `summary`, derived under `scopes`, as the stored ratings.
    fn save_ratings(&self, summary: &Summary, scopes: &BTreeMap<NetworkId, Scope>) -> Result<(), StoreError> {
        self.keep_ratings_text(&stored_text(summary, scopes))
    }

    /// Keeps `text` (as [`stored_text`] writes it) as the stored ratings.
    fn keep_ratings_text(&self, text: &str) -> Result<(), StoreError> {
        self.keep_named(META_KEY, text)
    }

    /// Derives the ratings from the journal and keeps them; returns them.
    fn refresh_ratings(
        &self,
        registry: &Registry,
        scopes: &BTreeMap<NetworkId, Scope>,
    ) -> Result<Result<Summary, RatingsError>, StoreError> {
        let derived = self.derive_ratings(registry, scopes)?;
        if let Ok(summary) = &derived {
            self.save_ratings(summary, scopes)?;
        }
        Ok(derived)
    }

    /// The stored ratings, if any (as they were stored; see [`Store::check_ratings`]).
    fn stored_ratings(&self) -> Result<Option<Summary>, StoreError> {
        let Some(text) = self.named(META_KEY)? else { return Ok(None) };
        read_stored(&text)
            .map(|stored| Some(stored.summary))
            .map_err(|e| self.row_error(format!("the stored ratings: {e}")))
    }

    /// Derives the ratings from the journal again, under the scopes they were stored
    /// with, and compares them with the stored ones.
    fn check_ratings(&self, registry: &Registry) -> Result<RatingsCheck, StoreError> {
        let Some(text) = self.named(META_KEY)? else { return Ok(RatingsCheck::NoneStored) };
        let stored: Stored = match read_stored(&text) {
            Ok(stored) => stored,
            Err(e) => return Ok(RatingsCheck::Unreadable(format!("the stored ratings do not read: {e}"))),
        };
        let mut scopes = BTreeMap::new();
        for (network, word) in &stored.scopes {
            match scope_of(word) {
                Some(scope) => scopes.insert(network.clone(), scope),
                None => {
                    return Ok(RatingsCheck::Unreadable(format!(
                        "the stored ratings name an unknown scope `{word}` for {network}"
                    )));
                }
            };
        }
        let derived = match self.derive_ratings(registry, &scopes) {
            Ok(Ok(summary)) => summary,
            Ok(Err(e)) => return Ok(RatingsCheck::Unreadable(e.to_string())),
            // A journal row that does not read is reported with its table; the ratings
            // cannot be checked then.
            Err(e) => return Ok(RatingsCheck::Unreadable(format!("the journal does not read: {e}"))),
        };
        // The text is compared, so no float is read back: the derived summary written the
        // same way must give the same bytes.
        let fresh = stored_text(&derived, &scopes);
        if fresh == text {
            return Ok(RatingsCheck::Match);
        }
        // A copy an older spellbridge wrote is compared in today's shape.
        let path = match (serde_json::from_str(&fresh), serde_json::from_str::<Value>(&text)) {
            (Ok(fresh), Ok(mut stored)) => {
                if let Some(summary) = stored.get_mut("summary") {
                    legacy::upgrade(summary);
                }
                match super::difference::first_difference(&fresh, &stored, String::new()) {
                    None => return Ok(RatingsCheck::Match),
                    difference => difference,
                }
            }
            _ => None,
        };
        Ok(RatingsCheck::Differs(path.unwrap_or_else(|| "(the text)".to_owned())))
    }
}

/// Reads a stored copy; one of the shape before per-game pools is upgraded first
/// ([`legacy`]).
fn read_stored(text: &str) -> Result<Stored, serde_json::Error> {
    let mut value: Value = serde_json::from_str(text)?;
    if let Some(summary) = value.get_mut("summary") {
        legacy::upgrade(summary);
    }
    serde_json::from_value(value)
}

/// The ratings as they are kept: `summary` and the `scopes` it was derived under, as JSON text.
pub fn stored_text(summary: &Summary, scopes: &BTreeMap<NetworkId, Scope>) -> String {
    let scopes = scopes.iter().map(|(n, s)| (n.clone(), scope_word(*s).to_owned())).collect();
    // Plain structs and maps with string keys always serialise.
    serde_json::to_string(&Stored { scopes, summary: summary.clone() }).unwrap_or_default()
}

impl Ratings for SqliteStore {
    fn entries(&self) -> Result<Vec<Entry>, StoreError> {
        self.journal()
    }

    fn named(&self, key: &str) -> Result<Option<String>, StoreError> {
        self.meta(key)
    }

    fn keep_named(&self, key: &str, value: &str) -> Result<(), StoreError> {
        self.connection
            .execute(
                "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                rusqlite::params![key, value],
            )
            .map(drop)
            .map_err(|e| self.error(e))
    }

    fn row_error(&self, detail: String) -> StoreError {
        StoreError::BadRow { path: self.path.clone(), detail }
    }
}
