//! How a game ended, as each game defines it, for ratings, `!stats`, `!top` and records:
//! an [`Ending`] gives every player's [`Place`] (ties share one), score and tie-break; a
//! game's [`EndingReader`] reads its endings from the events the journal keeps, one table
//! at a time; and [`TableKind`] says whether a table is a challenge between a fixed number
//! of players (rated pairwise) or an open table people join (ranked by standings). The
//! daemon reads only these, so its ratings and records work for any game.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::event::EventRecord;
use crate::ids::PlayerId;

/// What kind of table a game runs: how it is opened and how its endings are rated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TableKind {
    /// A challenge between `seats` players, taken with the game's challenge word
    /// ([`GamePlugin::challenge`](crate::plugin::GamePlugin::challenge)); each ending is
    /// one rated game between them.
    Challenge {
        /// How many players sit at it.
        seats: usize,
    },
    /// An open table people join (`!new <game>`, then `!join`); each ending is a round of
    /// standings (a Thaum season).
    Open,
}

/// One player's place in an [`Ending`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Place {
    /// The player.
    pub player: PlayerId,
    /// Where they finished, from 1; players the game's rules cannot separate share a place.
    pub place: u32,
    /// What the game counts first (a Thaum player's coins net of debt; a Duel's track
    /// toward the player).
    pub score: i128,
    /// What the game counts next when scores tie (the sum of a Thaum player's Thaums).
    pub tiebreak: i64,
    /// What the player chose at the table's opening (a Duel wizard), if the game asks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choice: Option<String>,
}

/// How one game at a table ended: a finished Duel, a closed Thaum season.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ending {
    /// Which of the table's games this is (a Thaum season's number; 1 for a game a table
    /// plays once).
    pub round: u32,
    /// Every player, in the table's seat order (a challenge: the challenger first).
    pub places: Vec<Place>,
    /// True when a player gave the game up (a Duel conceded).
    pub conceded: bool,
    /// The players whose score a game master raised during this game (Thaum's `!coins`,
    /// RULES T-9), so an ending won with given coins can be told apart.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub helped: BTreeSet<PlayerId>,
}

impl Ending {
    /// The players in first place (more than one on a tie).
    pub fn winners(&self) -> Vec<&PlayerId> {
        let first = self.places.iter().map(|p| p.place).min();
        self.places.iter().filter(|p| Some(p.place) == first).map(|p| &p.player).collect()
    }

    /// Places from scores: the highest score first, then the highest tie-break; players
    /// equal on both share a place (competition ranking: 1, 1, 3).
    pub fn rank(places: &mut [Place]) {
        let key = |p: &Place| (p.score, p.tiebreak);
        let keys: Vec<(i128, i64)> = places.iter().map(key).collect();
        for (i, place) in places.iter_mut().enumerate() {
            let ahead = keys.iter().filter(|k| **k > keys[i]).count();
            place.place = u32::try_from(ahead).unwrap_or(u32::MAX).saturating_add(1);
        }
    }
}

/// Reads one table's endings from its events as the journal keeps them, in order: what a
/// game says ended. A game that must follow its state through the events to say it (the
/// Thaum sums behind its tie-break) keeps what it needs here. Pure.
pub trait EndingReader: Send + Sync + std::fmt::Debug {
    /// Reads the next event; the ending it told, if any.
    fn read(&mut self, event: &EventRecord) -> Option<Ending>;

    /// True once the table finished: no later event tells an ending.
    fn done(&self) -> bool;

    /// A copy of this reader behind a new box.
    fn boxed_clone(&self) -> Box<dyn EndingReader>;
}

/// The message ids a game words its records in (`!stats`, `!top`), from its own
/// catalogue; a game that gives none ([`GamePlugin::record_words`](crate::plugin::GamePlugin::record_words))
/// is worded with the daemon's generic `records-*` texts, its name as `$game`. Each id
/// reads the variables its generic text does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordWords {
    /// One player's record in the game (`!stats`).
    pub record: &'static str,
    /// An open table's best place in that record (`$place`, `$rank`, `$of`, `$table`,
    /// `$round`); `None`: the generic text (a challenge has none).
    pub best: Option<&'static str>,
    /// The leaderboard (`!top <game>`): `$rated` and `$entries`.
    pub top: &'static str,
    /// One player on it.
    pub top_entry: &'static str,
    /// Nobody has played a rated game yet.
    pub top_none: &'static str,
    /// Rated games ended, but nobody has `$min` of them yet.
    pub top_few: &'static str,
    /// The heading of the game's table on the site's leaderboard.
    pub board: &'static str,
}
