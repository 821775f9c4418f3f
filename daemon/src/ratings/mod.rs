//! Ratings and records, derived from the journal alone, each game in a pool of its own
//! (keyed by its plugin's `name()`): Glicko-2 ratings of a challenge game's players
//! (`glicko`; the Duel), the standings of every finished round of an open table (score,
//! then tie-break, then name; a Thaum season's coins, then the sum of its Thaums), and
//! each player's record (games, wins, favourite choice, longest winning streak).
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
pub mod legacy;
pub mod reading;
pub mod replay;
pub mod report;
pub mod unrated;
pub mod words;

use std::collections::{BTreeMap, BTreeSet};

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
        // Each game is its own pool: a rating is a player's in one game.
        let mut ratings: BTreeMap<(&str, PlayerId), Rating> = BTreeMap::new();
        let mut records: BTreeMap<PlayerId, Tally> = BTreeMap::new();
        let mut seasons = Vec::new();
        for (ending, unrated) in self.endings.iter().zip(&self.unrated) {
            match ending {
                Ending { game, kind: TableKind::Challenge { .. }, ending, .. } => {
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
                    let (ka, kb) = ((game.as_str(), a.clone()), (game.as_str(), b.clone()));
                    let (ra, rb) = (
                        ratings.get(&ka).copied().unwrap_or_default(),
                        ratings.get(&kb).copied().unwrap_or_default(),
                    );
                    let (na, nb) = glicko::rate_game(ra, rb, score);
                    ratings.insert(ka, na);
                    ratings.insert(kb, nb);
                    let choice =
                        |place: &spellbridge_core::ending::Place| place.choice.clone().unwrap_or_default();
                    records.entry(a).or_default().challenge(game, score, &choice(x));
                    records.entry(b).or_default().challenge(game, score.reversed(), &choice(y));
                }
                Ending { game, table, kind: TableKind::Open, ending } => {
                    let mut standings: Vec<SeasonPlace> = ending
                        .places
                        .iter()
                        .map(|place| SeasonPlace {
                            player: self.canonical(&aliases, &place.player),
                            score: place.score,
                            tiebreak: place.tiebreak,
                        })
                        .collect();
                    standings.sort_by(|x, y| {
                        y.score.cmp(&x.score).then(y.tiebreak.cmp(&x.tiebreak)).then(x.player.cmp(&y.player))
                    });
                    for (place, standing) in standings.iter().enumerate() {
                        let tally = records.entry(standing.player.clone()).or_default();
                        if unrated.is_some() {
                            tally.unrated += 1;
                            continue;
                        }
                        let open = tally.open.entry(game.clone()).or_default();
                        open.rounds += 1;
                        if place == 0 {
                            open.won += 1;
                        }
                    }
                    seasons.push(SeasonStandings {
                        game: game.clone(),
                        table: *table,
                        round: ending.round,
                        standings,
                        unrated: *unrated,
                    });
                }
            }
        }
        let players = records
            .into_iter()
            .map(|(player, tally)| {
                let record = tally.record(|game| ratings.get(&(game, player.clone())).copied());
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
    /// Every finished round of an open table (a Thaum season), in the order they ended.
    pub seasons: Vec<SeasonStandings>,
}

impl Summary {
    /// The players with at least [`MIN_RATED_GAMES`] rated games of the challenge `game`,
    /// by rating, highest first (ties by name).
    pub fn challenge_leaderboard(&self, game: &str) -> Vec<(&PlayerId, &ChallengeRecord)> {
        let mut rated: Vec<(&PlayerId, &ChallengeRecord)> = self
            .players
            .iter()
            .filter_map(|(p, r)| Some((p, r.challenges.get(game)?)))
            .filter(|(_, c)| c.games >= MIN_RATED_GAMES)
            .collect();
        rated.sort_by(|(a, x), (b, y)| y.rating.rating.total_cmp(&x.rating.rating).then(a.cmp(b)));
        rated
    }

    /// The players with at least [`MIN_RATED_GAMES`] rated rounds of the open-table `game`,
    /// by rounds won, then rounds played (ties by name).
    pub fn open_leaderboard(&self, game: &str) -> Vec<(&PlayerId, &OpenRecord)> {
        let mut played: Vec<(&PlayerId, &OpenRecord)> = self
            .players
            .iter()
            .filter_map(|(p, r)| Some((p, r.open.get(game)?)))
            .filter(|(_, o)| o.rounds >= MIN_RATED_GAMES)
            .collect();
        played.sort_by(|(a, x), (b, y)| (y.won, y.rounds).cmp(&(x.won, x.rounds)).then(a.cmp(b)));
        played
    }

    /// The games anyone has a record in, each once, by name.
    pub fn games(&self) -> BTreeSet<&str> {
        let records = self.players.values();
        records.flat_map(|r| r.challenges.keys().chain(r.open.keys())).map(String::as_str).collect()
    }
}

/// One player's record.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Games played: rated challenges and rounds of open tables, of every game.
    pub games: u32,
    /// Games won: challenges won and rounds finished first.
    pub wins: u32,
    /// Their record in each challenge game they played, by the game's name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub challenges: BTreeMap<String, ChallengeRecord>,
    /// Their record in each open-table game a rated round of ended with them, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub open: BTreeMap<String, OpenRecord>,
    /// Games that ended but are not rated (see `unrated`); counted in no other field.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unrated: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A player's games of one challenge game (a Duel).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChallengeRecord {
    /// Their Glicko-2 rating in this game.
    pub rating: Rating,
    /// Games finished.
    pub games: u32,
    /// Won.
    pub wins: u32,
    /// Lost.
    pub losses: u32,
    /// Drawn.
    pub draws: u32,
    /// The most games won in a row.
    pub longest_streak: u32,
    /// What they chose most at the opening (a Duel wizard; ties: the one chosen most
    /// recently); empty when the game asks nothing.
    pub favourite: String,
}

/// A player's rounds of one open-table game (Thaum seasons).
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct OpenRecord {
    /// Rounds that ended with them at a table.
    pub rounds: u32,
    /// Rounds they finished first in.
    pub won: u32,
}

/// One player's place in a finished round of an open table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeasonPlace {
    /// The player.
    pub player: PlayerId,
    /// What the game counts first (Thaum: coins at the season's end, net of debt).
    pub score: i128,
    /// What it counts next (Thaum: the sum of their four Thaums).
    pub tiebreak: i64,
}

/// A finished round's standings: score, then tie-break, then name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeasonStandings {
    /// The table's game.
    pub game: String,
    /// The table.
    pub table: TableId,
    /// The round (a Thaum season).
    pub round: u32,
    /// First place first.
    pub standings: Vec<SeasonPlace>,
    /// Why the round is not rated, if it is not (it then counts toward no standings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unrated: Option<Unrated>,
}

/// A player's counts in one challenge game while the endings are summed.
#[derive(Default)]
struct ChallengeTally {
    games: u32,
    wins: u32,
    losses: u32,
    draws: u32,
    streak: u32,
    longest_streak: u32,
    /// Choice → (games, the last game's number it was chosen in).
    choices: BTreeMap<String, (u32, u32)>,
}

/// A player's counts while the endings are summed.
#[derive(Default)]
struct Tally {
    challenges: BTreeMap<String, ChallengeTally>,
    open: BTreeMap<String, OpenRecord>,
    unrated: u32,
}

impl Tally {
    fn challenge(&mut self, game: &str, score: Score, choice: &str) {
        let tally = self.challenges.entry(game.to_owned()).or_default();
        tally.games += 1;
        match score {
            Score::Win => {
                tally.wins += 1;
                tally.streak += 1;
                tally.longest_streak = tally.longest_streak.max(tally.streak);
            }
            Score::Loss => {
                tally.losses += 1;
                tally.streak = 0;
            }
            Score::Draw => {
                tally.draws += 1;
                tally.streak = 0;
            }
        }
        let games = tally.games;
        let used = tally.choices.entry(choice.to_owned()).or_default();
        used.0 += 1;
        used.1 = games;
    }

    fn record(self, rating: impl Fn(&str) -> Option<Rating>) -> Record {
        let challenges: BTreeMap<String, ChallengeRecord> = self
            .challenges
            .into_iter()
            .map(|(game, tally)| {
                let favourite = tally
                    .choices
                    .iter()
                    .max_by_key(|(_, (games, last))| (*games, *last))
                    .map(|(choice, _)| choice.clone())
                    .unwrap_or_default();
                let record = ChallengeRecord {
                    rating: rating(&game).unwrap_or_default(),
                    games: tally.games,
                    wins: tally.wins,
                    losses: tally.losses,
                    draws: tally.draws,
                    longest_streak: tally.longest_streak,
                    favourite,
                };
                (game, record)
            })
            .collect();
        let games = challenges.values().map(|c| c.games).chain(self.open.values().map(|o| o.rounds)).sum();
        let wins = challenges.values().map(|c| c.wins).chain(self.open.values().map(|o| o.won)).sum();
        Record { games, wins, challenges, open: self.open, unrated: self.unrated }
    }
}

#[cfg(test)]
mod tests;
