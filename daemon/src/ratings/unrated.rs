//! Which endings are not real games, and so do not count toward `!top`: ratings can
//! be farmed by playing against oneself. An ending is **unrated** (it is still shown,
//! as unrated, in `!stats`) when
//!
//! - a Duel had a guest at it: a player the network did not vouch for though it has
//!   accounts (`SeatRecord::guest`, journaled when the seat was taken), a bare nick
//!   anyone, an alt included, can take;
//! - a Duel was conceded less than [`QUICK_CONCESSION_SECS`] after it opened, read from
//!   the journal's own timestamps (the `opened` entry's and the conceding entry's),
//!   never from a clock;
//! - a Thaum season was won by a player whose coins a game master raised with `!coins`
//!   during that season (RULES T-9: coins are the standings' first key);
//! - a Thaum season had a single player.
//!
//! The leaderboards list only players with at least [`MIN_RATED_GAMES`] rated games.
//! All of it is a pure function of the journal, so `spellbridge verify` derives it again.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use spellbridge_core::{TableKind, Timestamp};

use super::reading::Ending;
use crate::journal::{Entry, TableId};

/// A Duel conceded sooner than this many seconds after it opened is not rated.
pub const QUICK_CONCESSION_SECS: i64 = 60;

/// The fewest rated games (Duels, or Thaum seasons) a player needs to be listed by
/// `!top` and on the site's leaderboard.
pub const MIN_RATED_GAMES: u32 = 3;

/// Why an ending is not rated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unrated {
    /// A Duel with a guest at it.
    Guest,
    /// A Duel conceded within [`QUICK_CONCESSION_SECS`] of its start.
    QuickConcession,
    /// A Thaum season won with coins a game master gave.
    GameMasterCoins,
    /// A Thaum season with one player.
    LonePlayer,
}

/// What is remembered of each open table to judge its endings.
#[derive(Clone, Debug, Default)]
pub struct Watch {
    /// Each table's opening time and whether a guest took a seat.
    opened: BTreeMap<TableId, (Timestamp, bool)>,
}

impl Watch {
    /// Notes an entry (before its endings are judged).
    pub fn note(&mut self, entry: &Entry) {
        if let Entry::Opened { table, now, seats, .. } = entry {
            self.opened.insert(*table, (*now, seats.iter().any(|s| s.guest)));
        }
    }

    /// Whether `ending`, told by `entry`, is unrated, and why.
    pub fn judge(&mut self, entry: &Entry, ending: &Ending) -> Option<Unrated> {
        let Ending { table, kind, ending, .. } = ending;
        match kind {
            TableKind::Challenge { .. } => {
                let (opened, guest) = self.opened.remove(table)?;
                if guest {
                    return Some(Unrated::Guest);
                }
                let at = match entry {
                    Entry::Acted { now, .. } => *now,
                    Entry::Fired { at, .. } => *at,
                    _ => return None,
                };
                (ending.conceded && at.0.saturating_sub(opened.0) < QUICK_CONCESSION_SECS)
                    .then_some(Unrated::QuickConcession)
            }
            TableKind::Open => {
                let places = &ending.places;
                if places.len() < 2 {
                    return Some(Unrated::LonePlayer);
                }
                let winner = places
                    .iter()
                    .max_by(|x, y| {
                        x.score.cmp(&y.score).then(x.tiebreak.cmp(&y.tiebreak)).then(y.player.cmp(&x.player))
                    })
                    .map(|place| &place.player)?;
                ending.helped.contains(winner).then_some(Unrated::GameMasterCoins)
            }
        }
    }
}
