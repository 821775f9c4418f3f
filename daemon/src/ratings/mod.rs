//! Ratings and records, derived from the journal alone: Glicko-2 ratings of Duel players
//! (`glicko`), the standings of every finished Thaum season (coins, then the sum of the
//! Thaums, then name), and each player's record (games, wins, favourite wizard, longest
//! winning streak).
//!
//! [`Ledger`] folds journal entries in order: how each game ended is read from the typed
//! events the journal keeps with each table's entries (`endings`; a table from a journal
//! older than events is replayed from its recorded dice seeds instead, `replay`), and
//! `!link`ed identities are followed (`Linked`/`Unlinked` entries). The router folds each
//! entry as it journals it, so the ratings are committed with the game's end. [`Ledger::summary`] then counts every ending
//! under the player each seat's identity is linked to at that point, so linked identities
//! count as one player, earlier games included. The summary is a pure function of the
//! journal: feeding it in parts gives what feeding it at once gives, and `spellbridge
//! verify` recomputes it to check the copy the store keeps.
//!
//! A Duel is rated as its own rating period (see `glicko`); a stopped Duel (no winner) is
//! neither rated nor counted. A Duel draw counts as a game, rated ½, and ends a streak.
//!
//! Endings that are not real games (`unrated`: a Duel with a guest at it or conceded
//! within a minute, a Thaum season won with a game master's coins or with one player)
//! are counted only as unrated games: no rating, no record, no Thaum standings. The
//! leaderboards list players with at least [`MIN_RATED_GAMES`] rated games.

pub mod endings;
pub mod glicko;
pub mod reading;
pub mod replay;
pub mod report;
pub mod unrated;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use spellbridge_core::{NetworkId, PlayerId, Registry, TableKind};

use crate::identity::Scope;
use crate::journal::{Entry, TableId};
pub use glicko::{Rating, Score};
pub use reading::Ending;
pub use unrated::{MIN_RATED_GAMES, Unrated};

/// Why the journal could not be read into ratings.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum RatingsError {
    /// A table's game is not one this build knows.
    #[error("table {table} is a game of `{game}`, which this spellbridge does not know")]
    UnknownGame {
        /// The table.
        table: TableId,
        /// Its game.
        game: String,
    },
    /// A table could not be replayed from its journal.
    #[error("table {table} does not replay from its journal ({reason}); `spellbridge verify` says more")]
    Replay {
        /// The table.
        table: TableId,
        /// Why.
        reason: String,
    },
}

/// The journal folded so far.
#[derive(Clone, Debug)]
pub struct Ledger {
    tables: endings::Tables,
    endings: Vec<Ending>,
    /// For each ending, in the same order, why it is not rated (`None`: it is).
    unrated: Vec<Option<Unrated>>,
    watch: unrated::Watch,
    /// Identities joined to a player other than their own, as the journal left them.
    links: BTreeMap<(NetworkId, PlayerId), PlayerId>,
    scopes: BTreeMap<NetworkId, Scope>,
}

impl Ledger {
    /// An empty ledger; `scopes` says how each network's identities become player ids (as
    /// the router's; a network not listed is inferred, see [`Scope::infer`]).
    pub fn new(scopes: BTreeMap<NetworkId, Scope>) -> Ledger {
        Ledger {
            tables: endings::Tables::default(),
            endings: Vec::new(),
            unrated: Vec::new(),
            watch: unrated::Watch::default(),
            links: BTreeMap::new(),
            scopes,
        }
    }

    /// Folds in the next journal entry.
    pub fn apply(&mut self, registry: &Registry, entry: &Entry) -> Result<(), RatingsError> {
        match entry {
            Entry::Linked { network, identity, player } => {
                self.links.insert((network.clone(), identity.clone()), player.clone());
            }
            Entry::Unlinked { player } => self.links.retain(|_, to| to != player),
            _ => {
                self.watch.note(entry);
                for ending in self.tables.apply(registry, entry)? {
                    self.unrated.push(self.watch.judge(entry, &ending));
                    self.endings.push(ending);
                }
            }
        }
        Ok(())
    }

    /// Folds in entries in order.
    pub fn extend<'a>(
        &mut self,
        registry: &Registry,
        entries: impl IntoIterator<Item = &'a Entry>,
    ) -> Result<(), RatingsError> {
        entries.into_iter().try_for_each(|entry| self.apply(registry, entry))
    }

    /// Every game ending folded so far, in order.
    pub fn endings(&self) -> &[Ending] {
        &self.endings
    }

    /// The player an id counts as: the player its identity is linked to, if any.
    fn canonical(&self, aliases: &BTreeMap<PlayerId, PlayerId>, player: &PlayerId) -> PlayerId {
        aliases.get(player).cloned().unwrap_or_else(|| player.clone())
    }

    /// Each linked identity's own player id, mapped to the player it is linked to.
    fn aliases(&self) -> BTreeMap<PlayerId, PlayerId> {
        self.links
            .iter()
            .map(|((network, identity), player)| {
                let scope = self.scopes.get(network).copied().unwrap_or_else(|| Scope::infer(identity));
                (scope.player_id(network, identity), player.clone())
            })
            .filter(|(own, player)| own != player)
            .collect()
    }

    /// The ratings, standings and records of everything folded so far.
    pub fn summary(&self) -> Summary {
        let aliases = self.aliases();
        let mut ratings: BTreeMap<PlayerId, Rating> = BTreeMap::new();
        let mut records: BTreeMap<PlayerId, Tally> = BTreeMap::new();
        let mut seasons = Vec::new();
        for (ending, unrated) in self.endings.iter().zip(&self.unrated) {
            match ending {
                Ending { kind: TableKind::Challenge { .. }, ending, .. } => {
                    // A challenge is rated between two, the challenger first.
                    let [x, y] = ending.places.as_slice() else { continue };
                    let [a, b] = [self.canonical(&aliases, &x.player), self.canonical(&aliases, &y.player)];
                    if a == b {
                        // Two identities of one person: not a rated game.
                        continue;
                    }
                    if unrated.is_some() {
                        records.entry(a).or_default().unrated += 1;
                        records.entry(b).or_default().unrated += 1;
                        continue;
                    }
                    let score = match x.place.cmp(&y.place) {
                        std::cmp::Ordering::Less => Score::Win,
                        std::cmp::Ordering::Greater => Score::Loss,
                        std::cmp::Ordering::Equal => Score::Draw,
                    };
                    let (ra, rb) = (
                        ratings.get(&a).copied().unwrap_or_default(),
                        ratings.get(&b).copied().unwrap_or_default(),
                    );
                    let (na, nb) = glicko::rate_game(ra, rb, score);
                    ratings.insert(a.clone(), na);
                    ratings.insert(b.clone(), nb);
                    let choice =
                        |place: &spellbridge_core::ending::Place| place.choice.clone().unwrap_or_default();
                    records.entry(a).or_default().duel(score, &choice(x));
                    records.entry(b).or_default().duel(score.reversed(), &choice(y));
                }
                Ending { table, kind: TableKind::Open, ending } => {
                    let mut standings: Vec<SeasonPlace> = ending
                        .places
                        .iter()
                        .map(|place| SeasonPlace {
                            player: self.canonical(&aliases, &place.player),
                            coins: place.score,
                            thaums: place.tiebreak,
                        })
                        .collect();
                    standings.sort_by(|x, y| {
                        y.coins.cmp(&x.coins).then(y.thaums.cmp(&x.thaums)).then(x.player.cmp(&y.player))
                    });
                    for (place, standing) in standings.iter().enumerate() {
                        let tally = records.entry(standing.player.clone()).or_default();
                        if unrated.is_some() {
                            tally.unrated += 1;
                            continue;
                        }
                        tally.seasons += 1;
                        if place == 0 {
                            tally.seasons_won += 1;
                        }
                    }
                    seasons.push(SeasonStandings {
                        table: *table,
                        season: ending.round,
                        standings,
                        unrated: *unrated,
                    });
                }
            }
        }
        let players = records
            .into_iter()
            .map(|(player, tally)| {
                let record = tally.record(ratings.get(&player).copied());
                (player, record)
            })
            .collect();
        Summary { players, seasons }
    }
}

/// Derives the summary of a whole journal (entries in journal order).
pub fn derive<'a>(
    registry: &Registry,
    scopes: BTreeMap<NetworkId, Scope>,
    entries: impl IntoIterator<Item = &'a Entry>,
) -> Result<Summary, RatingsError> {
    let mut ledger = Ledger::new(scopes);
    ledger.extend(registry, entries)?;
    Ok(ledger.summary())
}

/// What the journal says about every player.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Each player's record, by player id (linked identities under their player).
    pub players: BTreeMap<PlayerId, Record>,
    /// Every finished Thaum season's standings, in the order they ended.
    pub seasons: Vec<SeasonStandings>,
}

impl Summary {
    /// Duel players with at least [`MIN_RATED_GAMES`] rated Duels, by rating, highest
    /// first (ties by name).
    pub fn duel_leaderboard(&self) -> Vec<(&PlayerId, &Record)> {
        let mut rated: Vec<(&PlayerId, &Record)> = self
            .players
            .iter()
            .filter(|(_, r)| r.duel.as_ref().is_some_and(|d| d.games >= MIN_RATED_GAMES))
            .collect();
        let rating = |r: &Record| r.duel.as_ref().map_or(0.0, |d| d.rating.rating);
        rated.sort_by(|(a, x), (b, y)| rating(y).total_cmp(&rating(x)).then(a.cmp(b)));
        rated
    }

    /// Thaum players with at least [`MIN_RATED_GAMES`] rated seasons, by seasons won, then
    /// seasons played (ties by name).
    pub fn thaum_leaderboard(&self) -> Vec<(&PlayerId, &Record)> {
        let mut played: Vec<(&PlayerId, &Record)> = self
            .players
            .iter()
            .filter(|(_, r)| r.thaum.as_ref().is_some_and(|t| t.seasons >= MIN_RATED_GAMES))
            .collect();
        let key = |r: &Record| r.thaum.as_ref().map_or((0, 0), |t| (t.won, t.seasons));
        played.sort_by(|(a, x), (b, y)| key(y).cmp(&key(x)).then(a.cmp(b)));
        played
    }
}

/// One player's record.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Games played: Duels (rated) and Thaum seasons.
    pub games: u32,
    /// Games won: Duels won and Thaum seasons finished first.
    pub wins: u32,
    /// The Duel record, if they played one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duel: Option<DuelRecord>,
    /// The Thaum record, if a rated season they played in ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thaum: Option<ThaumRecord>,
    /// Games that ended but are not rated (see `unrated`); counted in no other field.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unrated: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A player's Duels.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DuelRecord {
    /// Their Glicko-2 rating.
    pub rating: Rating,
    /// Duels finished.
    pub games: u32,
    /// Won.
    pub wins: u32,
    /// Lost.
    pub losses: u32,
    /// Drawn.
    pub draws: u32,
    /// The most Duels won in a row.
    pub longest_streak: u32,
    /// The wizard they played most (ties: the one played most recently).
    pub favourite_wizard: String,
}

/// A player's Thaum seasons.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThaumRecord {
    /// Seasons that ended with them at a table.
    pub seasons: u32,
    /// Seasons they finished first in.
    pub won: u32,
}

/// One player's place in a finished Thaum season.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeasonPlace {
    /// The player.
    pub player: PlayerId,
    /// Coins at the season's end, net of debt.
    pub coins: i128,
    /// The sum of their four Thaums at the season's end (the tie-break after coins).
    pub thaums: i64,
}

/// A finished Thaum season's standings: coins, then Thaums, then name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeasonStandings {
    /// The table.
    pub table: TableId,
    /// The season.
    pub season: u32,
    /// First place first.
    pub standings: Vec<SeasonPlace>,
    /// Why the season is not rated, if it is not (it then counts toward no standings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unrated: Option<Unrated>,
}

/// A player's counts while the endings are summed.
#[derive(Default)]
struct Tally {
    duels: u32,
    wins: u32,
    losses: u32,
    draws: u32,
    streak: u32,
    longest_streak: u32,
    /// Wizard → (games, the last duel's number it was played in).
    wizards: BTreeMap<String, (u32, u32)>,
    seasons: u32,
    seasons_won: u32,
    unrated: u32,
}

impl Tally {
    fn duel(&mut self, score: Score, wizard: &str) {
        self.duels += 1;
        match score {
            Score::Win => {
                self.wins += 1;
                self.streak += 1;
                self.longest_streak = self.longest_streak.max(self.streak);
            }
            Score::Loss => {
                self.losses += 1;
                self.streak = 0;
            }
            Score::Draw => {
                self.draws += 1;
                self.streak = 0;
            }
        }
        let duels = self.duels;
        let used = self.wizards.entry(wizard.to_owned()).or_default();
        used.0 += 1;
        used.1 = duels;
    }

    fn record(self, rating: Option<Rating>) -> Record {
        let favourite = self
            .wizards
            .iter()
            .max_by_key(|(_, (games, last))| (*games, *last))
            .map(|(wizard, _)| wizard.clone())
            .unwrap_or_default();
        let duel = (self.duels > 0).then(|| DuelRecord {
            rating: rating.unwrap_or_default(),
            games: self.duels,
            wins: self.wins,
            losses: self.losses,
            draws: self.draws,
            longest_streak: self.longest_streak,
            favourite_wizard: favourite,
        });
        let thaum =
            (self.seasons > 0).then_some(ThaumRecord { seasons: self.seasons, won: self.seasons_won });
        Record {
            games: self.duels + self.seasons,
            wins: self.wins + self.seasons_won,
            duel,
            thaum,
            unrated: self.unrated,
        }
    }
}

#[cfg(test)]
mod tests;
