//! Ratings and records, live: the router folds every journal entry it writes into a
//! [`Ledger`] as it writes it (`Live`), so when a game ends (or a `!link` merges two
//! players' games) the new [`Summary`] is ready to be committed with that entry
//! ([`Router::take_ratings`]: the engine keeps it in `meta` in the same transaction, so
//! `spellbridge verify`, which derives it again from the journal, finds the same). On
//! start the store folds the whole journal once ([`Router::load_ratings`]).
//!
//! `!stats [player]` and `!top [duel|thaum]` answer from it (the words are `stats_text`
//! and `top_text`, pure and tested here). `!top` counts rated games only and lists a
//! player once they have [`MIN_RATED_GAMES`]; `!stats` shows the unrated ones as such
//! (`crate::ratings::unrated`).

use super::said::{joined, said};
use super::*;
use crate::lobby::Ranking;
use crate::ratings::{Ledger, MIN_RATED_GAMES, Record, SeasonStandings, Summary};

/// How many players `!top` lists.
const TOP: usize = 10;

/// The ratings folded so far.
pub(super) struct Live {
    /// `None` once an entry did not fold (the ratings then wait for `spellbridge ratings`).
    ledger: Option<Ledger>,
    summary: Summary,
    scopes: BTreeMap<NetworkId, Scope>,
    /// True when `summary` changed since the last [`Router::take_ratings`].
    changed: bool,
}

impl Live {
    pub(super) fn new(scopes: BTreeMap<NetworkId, Scope>) -> Live {
        Live {
            ledger: Some(Ledger::new(scopes.clone())),
            summary: Summary::default(),
            scopes,
            changed: false,
        }
    }

    /// Folds one journal entry in; the summary is made again when a game ended or
    /// identities were linked or unlinked (which merges or separates games).
    pub(super) fn apply(&mut self, registry: &Registry, entry: &Entry) {
        let Some(ledger) = &mut self.ledger else { return };
        let before = ledger.endings().len();
        if let Err(error) = ledger.apply(registry, entry) {
            tracing::warn!(%error, "ratings are no longer kept up to date; `spellbridge ratings --db` derives them again");
            self.ledger = None;
            return;
        }
        let links = matches!(entry, Entry::Linked { .. } | Entry::Unlinked { .. });
        if ledger.endings().len() > before || (links && !ledger.endings().is_empty()) {
            self.summary = ledger.summary();
            self.changed = true;
        }
    }
}

impl Router {
    /// Folds a whole journal (in commit order) into the ratings afresh, as the store
    /// does on start; the result is not marked for saving.
    pub fn load_ratings(&mut self, journal: &[Entry]) {
        self.ratings = Live::new(self.options.scopes.clone());
        for entry in journal {
            self.ratings.apply(&self.registry, entry);
        }
        self.ratings.changed = false;
    }

    /// Stops keeping the ratings up to date (their journal did not read).
    pub fn stop_ratings(&mut self) {
        self.ratings.ledger = None;
        self.ratings.changed = false;
    }

    /// The ratings, standings and records of every game ended so far.
    pub fn ratings(&self) -> &Summary {
        &self.ratings.summary
    }

    /// The ratings as the store keeps them (`meta` key `ratings`).
    pub fn ratings_text(&self) -> String {
        crate::store::ratings::stored_text(&self.ratings.summary, &self.ratings.scopes)
    }

    /// The ratings as the store keeps them (`meta` key `ratings`), when they changed
    /// since the last call: the engine commits them with the entries that changed them.
    pub fn take_ratings(&mut self) -> Option<String> {
        if !std::mem::take(&mut self.ratings.changed) {
            return None;
        }
        Some(self.ratings_text())
    }

    /// `!stats [player]`: a player's record (the asker's without a name), in `language`.
    pub(super) fn stats(
        &mut self,
        speaker: &Speaker<'_>,
        name: Option<&str>,
        language: Language,
    ) -> RichText {
        let player = match name {
            None => speaker.player.clone(),
            Some(name) => match self.resolve_name(name, &speaker.place, &[], language) {
                Ok(Some(player)) => player,
                Ok(None) if self.ratings.summary.players.contains_key(&PlayerId::new(name)) => {
                    PlayerId::new(name)
                }
                Ok(None) => return said(language, "records-nobody", Args::new().text("name", name)),
                Err(problem) => return problem,
            },
        };
        let summary = &self.ratings.summary;
        match summary.players.get(&player) {
            Some(record) => stats_text(language, &player, record, &summary.seasons),
            None => said(
                language,
                "records-no-games",
                Args::new().name("player", &player).rich("ways", self.ways_to_start(false, language)),
            ),
        }
    }

    /// `!top [duel|thaum]`: the ten best, in `language`.
    pub(super) fn top(&self, ranking: Ranking, language: Language) -> RichText {
        top_text(language, &self.ratings.summary, ranking)
    }
}

/// `1st`, `2nd`, `3rd`, `4th`, … `11th`, `21st`.
fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// A rating or its deviation as said: rounded to a whole number.
fn rounded(value: f64) -> String {
    format!("{value:.0}")
}

/// A player's record in words: games and wins; the Duel's rating ± deviation, results,
/// favourite wizard and longest winning streak; Thaum seasons and the best standing.
pub(super) fn stats_text(
    language: Language,
    player: &PlayerId,
    record: &Record,
    seasons: &[SeasonStandings],
) -> RichText {
    let duel = match &record.duel {
        Some(duel) => {
            let drawn = if duel.draws > 0 {
                said(language, "records-drawn", Args::new().num("draws", duel.draws))
            } else {
                RichText::new()
            };
            said(
                language,
                "records-duel",
                Args::new()
                    .text("rating", rounded(duel.rating.rating))
                    .text("deviation", rounded(duel.rating.deviation))
                    .num("duels", duel.games)
                    .num("won", duel.wins)
                    .num("lost", duel.losses)
                    .rich("drawn", drawn)
                    .text("wizard", duel.favourite_wizard.as_str())
                    .num("streak", duel.longest_streak),
            )
        }
        None => RichText::new(),
    };
    let thaum = match &record.thaum {
        Some(thaum) => {
            let places = seasons.iter().filter(|season| season.unrated.is_none()).filter_map(|season| {
                let place = season.standings.iter().position(|s| &s.player == player)?;
                Some((place + 1, season.standings.len(), season.table, season.season))
            });
            // The best place; among equal places the first season it was reached in.
            let best = match places.min_by_key(|(place, ..)| *place) {
                Some((place, of, table, season)) => said(
                    language,
                    "records-best",
                    Args::new()
                        .text("place", ordinal(place))
                        .num("rank", place)
                        .num("of", of)
                        .num("table", table)
                        .num("season", season),
                ),
                None => RichText::new(),
            };
            said(
                language,
                "records-thaum",
                Args::new().num("seasons", thaum.seasons).num("won", thaum.won).rich("best", best),
            )
        }
        None => RichText::new(),
    };
    let unrated = if record.unrated > 0 {
        said(language, "records-unrated", Args::new().num("unrated", record.unrated))
    } else {
        RichText::new()
    };
    said(
        language,
        "records-played",
        Args::new()
            .name("player", player)
            .num("games", record.games)
            .num("wins", record.wins)
            .rich("duel", duel)
            .rich("thaum", thaum)
            .rich("unrated", unrated),
    )
}

/// The ten best of a leaderboard in words, one line, in `language`.
pub(super) fn top_text(language: Language, summary: &Summary, ranking: Ranking) -> RichText {
    match ranking {
        Ranking::Duel => {
            let board = summary.duel_leaderboard();
            if board.is_empty() {
                if summary.players.values().any(|r| r.duel.is_some()) {
                    return said(language, "records-top-duel-few", Args::new().num("min", MIN_RATED_GAMES));
                }
                return said(language, "records-top-duel-none", Args::new());
            }
            let entries = board.iter().take(TOP).enumerate().filter_map(|(place, (player, record))| {
                let duel = record.duel.as_ref()?;
                let drawn = if duel.draws > 0 {
                    said(language, "records-top-drawn", Args::new().num("draws", duel.draws))
                } else {
                    RichText::new()
                };
                Some(said(
                    language,
                    "records-top-duel-entry",
                    Args::new()
                        .num("place", place + 1)
                        .name("player", player)
                        .text("rating", rounded(duel.rating.rating))
                        .text("deviation", rounded(duel.rating.deviation))
                        .num("won", duel.wins)
                        .num("lost", duel.losses)
                        .rich("drawn", drawn),
                ))
            });
            let entries = joined(language, "records-top-separator", entries.collect());
            said(language, "records-top-duel", Args::new().num("rated", board.len()).rich("entries", entries))
        }
        Ranking::Thaum => {
            let board = thaum_standings(summary);
            let rated = summary.seasons.iter().filter(|season| season.unrated.is_none()).count();
            if board.is_empty() {
                if rated > 0 {
                    return said(language, "records-top-thaum-few", Args::new().num("min", MIN_RATED_GAMES));
                }
                return said(language, "records-top-thaum-none", Args::new());
            }
            let entries = board.iter().take(TOP).enumerate().map(|(place, standing)| {
                said(
                    language,
                    "records-top-thaum-entry",
                    Args::new()
                        .num("place", place + 1)
                        .name("player", &standing.player)
                        .num("coins", standing.coins)
                        .num("thaums", standing.thaums)
                        .num("seasons", standing.seasons),
                )
            });
            let entries = joined(language, "records-top-separator", entries.collect());
            said(language, "records-top-thaum", Args::new().num("seasons", rated).rich("entries", entries))
        }
    }
}

/// One player's finished Thaum seasons added up.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct ThaumStanding {
    pub(super) player: PlayerId,
    pub(super) coins: i128,
    pub(super) thaums: i64,
    pub(super) seasons: u32,
}

/// Every Thaum player with at least [`MIN_RATED_GAMES`] rated seasons, by those seasons'
/// coins, then Thaums (summed), then name.
pub(super) fn thaum_standings(summary: &Summary) -> Vec<ThaumStanding> {
    let mut by_player: BTreeMap<&PlayerId, ThaumStanding> = BTreeMap::new();
    let rated = summary.seasons.iter().filter(|season| season.unrated.is_none());
    for place in rated.flat_map(|season| &season.standings) {
        let standing = by_player.entry(&place.player).or_insert_with(|| ThaumStanding {
            player: place.player.clone(),
            coins: 0,
            thaums: 0,
            seasons: 0,
        });
        standing.coins += place.coins;
        standing.thaums += place.thaums;
        standing.seasons += 1;
    }
    let mut board: Vec<ThaumStanding> =
        by_player.into_values().filter(|standing| standing.seasons >= MIN_RATED_GAMES).collect();
    board.sort_by(|a, b| b.coins.cmp(&a.coins).then(b.thaums.cmp(&a.thaums)).then(a.player.cmp(&b.player)));
    board
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ratings::{DuelRecord, Rating, SeasonPlace, ThaumRecord};

    fn player(name: &str) -> PlayerId {
        PlayerId::new(name)
    }

    fn duel(rating: f64, wins: u32, losses: u32) -> Record {
        Record {
            games: wins + losses,
            wins,
            duel: Some(DuelRecord {
                rating: Rating { rating, deviation: 200.4, volatility: 0.06 },
                games: wins + losses,
                wins,
                losses,
                draws: 0,
                longest_streak: wins,
                favourite_wizard: "Pyromancer".into(),
            }),
            thaum: None,
            unrated: 0,
        }
    }

    fn season(table: TableId, places: &[(&str, i128, i64)]) -> SeasonStandings {
        SeasonStandings {
            table,
            season: 1,
            standings: places
                .iter()
                .map(|(p, coins, thaums)| SeasonPlace { player: player(p), coins: *coins, thaums: *thaums })
                .collect(),
            unrated: None,
        }
    }

    #[test]
    fn stats_say_games_rating_wizard_streak_and_best_standing() {
        let seasons = [season(4, &[("bob", 9, 1), ("alice", 3, 2)]), season(7, &[("alice", 5, 0)])];
        let mut record = duel(1612.6, 3, 1);
        record.games += 2;
        record.wins += 1;
        record.thaum = Some(ThaumRecord { seasons: 2, won: 1 });
        assert_eq!(
            stats_text(Language::En, &player("alice"), &record, &seasons).plain(),
            "alice has played 6 games and won 4. Duel: rating 1613 ± 200 after 4 duels (3 won, 1 lost); favourite wizard \
             Pyromancer; longest winning streak 3. Thaum: 2 seasons played, 1 won; best standing 1st of 1 \
             (table 7, season 1)."
        );
        let one = Record {
            games: 1,
            wins: 0,
            thaum: Some(ThaumRecord { seasons: 1, won: 0 }),
            duel: None,
            unrated: 0,
        };
        assert_eq!(
            stats_text(Language::En, &player("alice"), &one, &seasons[..1]).plain(),
            "alice has played 1 game and won 0. Thaum: 1 season played, 0 won; best standing 2nd of 2 (table 4, season 1)."
        );
    }

    #[test]
    fn top_lists_the_ten_best_by_rating_or_by_coins_then_thaums() {
        let mut summary = Summary::default();
        assert!(
            top_text(Language::En, &summary, Ranking::Duel).plain().contains("Nobody has a Duel rating yet")
        );
        assert!(
            top_text(Language::En, &summary, Ranking::Thaum)
                .plain()
                .contains("No Thaum season has ended yet")
        );
        for i in 0..14u32 {
            summary.players.insert(player(&format!("p{i:02}")), duel(1400.0 + f64::from(i) * 10.0, i, 1));
        }
        let text = top_text(Language::En, &summary, Ranking::Duel).plain();
        // p00 and p01 have fewer than MIN_RATED_GAMES (3) rated Duels: not listed, not counted.
        assert!(
            text.starts_with("Duel ratings (Glicko-2, 12 rated): 1. p13 1530 ± 200 (13–1); 2. p12 1520"),
            "{text}"
        );
        assert!(text.ends_with("10. p04 1440 ± 200 (4–1)."), "{text}");
        assert!(!text.contains("p03"), "only ten: {text}");

        summary.seasons = vec![
            season(1, &[("carol", 5, 1), ("alice", 5, 0), ("bob", 2, 9)]),
            season(2, &[("bob", 4, 0), ("alice", 1, 3)]),
            season(3, &[("bob", 0, 0), ("alice", 0, 0), ("carol", 0, 0)]),
        ];
        let text = top_text(Language::En, &summary, Ranking::Thaum).plain();
        assert_eq!(
            text,
            "Thaum standings over 3 finished seasons (coins, then Thaums): 1. bob 6 coins, Thaums 9 (3 seasons); \
             2. alice 6 coins, Thaums 3 (3 seasons).",
            "carol, with 2 seasons, is not listed"
        );
    }

    #[test]
    fn ordinals_read_as_english() {
        let read: Vec<String> = [1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111].map(ordinal).to_vec();
        assert_eq!(
            read,
            ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st", "111th"]
        );
    }

    #[test]
    fn top_lists_only_players_with_enough_rated_games() {
        let mut summary = Summary::default();
        summary.players.insert(player("alice"), duel(1700.0, 2, 0));
        assert_eq!(
            top_text(Language::En, &summary, Ranking::Duel).plain(),
            "No player has 3 rated Duels yet: `!top` lists a player once they have. `!stats` shows everyone's."
        );
        // An unrated season counts toward nobody's standings, even with three of them.
        let mut unrated = season(1, &[("alice", 50, 0)]);
        unrated.unrated = Some(crate::ratings::Unrated::LonePlayer);
        summary.seasons = vec![unrated.clone(), unrated.clone(), unrated];
        assert!(
            top_text(Language::En, &summary, Ranking::Thaum)
                .plain()
                .contains("No Thaum season has ended yet")
        );
        summary.seasons.push(season(2, &[("alice", 1, 0), ("bob", 0, 0)]));
        assert_eq!(
            top_text(Language::ZhCn, &summary, Ranking::Thaum).plain(),
            "还没有玩家打满 3 个评分魔素赛季：满了才会上 `!排行 魔素`。`!战绩` 可以查看每个人的战绩。"
        );
    }

    #[test]
    fn stats_show_unrated_games_and_leave_unrated_seasons_out_of_the_best_standing() {
        let mut first = season(7, &[("alice", 50, 0)]);
        first.unrated = Some(crate::ratings::Unrated::LonePlayer);
        let seasons = [first, season(8, &[("bob", 9, 0), ("alice", 3, 0)])];
        let record = Record {
            games: 1,
            wins: 0,
            thaum: Some(ThaumRecord { seasons: 1, won: 0 }),
            duel: None,
            unrated: 1,
        };
        assert_eq!(
            stats_text(Language::En, &player("alice"), &record, &seasons).plain(),
            "alice has played 1 game and won 0. Thaum: 1 season played, 0 won; best standing 2nd of 2 (table 8, \
             season 1). Unrated: 1 game (a Duel against a guest or conceded within a minute, a Thaum season alone \
             or won with a game master's coins), not counted toward `!top`."
        );
    }
}
