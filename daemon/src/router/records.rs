//! Ratings and records, live: the router folds every journal entry it writes into a
//! [`Ledger`] as it writes it (`Live`), so when a game ends (or a `!link` merges two
//! players' games) the new [`Summary`] is ready to be committed with that entry
//! ([`Router::take_ratings`]: the engine keeps it in `meta` in the same transaction, so
//! `spellbridge verify`, which derives it again from the journal, finds the same). On
//! start the store folds the whole journal once ([`Router::load_ratings`]).
//!
//! `!stats [player]` and `!top [game]` answer from it (the words are `stats_text` and
//! `top_text`, pure and tested here), for any game: each game is its own pool, keyed by
//! its plugin's name, worded in the game's own texts (`GamePlugin::record_words`) or the
//! generic `records-*` ones with the game's name. `!top` counts rated games only and lists a
//! player once they have [`MIN_RATED_GAMES`]; `!stats` shows the unrated ones as such
//! (`crate::ratings::unrated`).

use super::said::{joined, said};
use super::*;
use crate::ratings::words::{ranked, words_of};
use crate::ratings::{Ledger, MIN_RATED_GAMES, Record, SeasonStandings, Summary};
use spellbridge_core::{GamePlugin, TableKind, shown};

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
            Some(record) => stats_text(language, &self.registry, &player, record, &summary.seasons),
            None => said(
                language,
                "records-no-games",
                Args::new().name("player", &player).rich("ways", self.ways_to_start(false, language)),
            ),
        }
    }

    /// `!top [game]`: the ten best of `game` (by default the first challenge game), in
    /// `language`; a word that names no game is refused with the games that have one.
    pub(super) fn top(&self, game: Option<&str>, language: Language) -> RichText {
        let found = match game {
            None => ranked(&self.registry).into_iter().next(),
            Some(word) => self.registry.get(word).filter(|plugin| plugin.ending_reader().is_some()),
        };
        match (found, game) {
            (Some(plugin), _) => top_text(language, &self.ratings.summary, plugin),
            (None, word) => {
                let games = ranked(&self.registry)
                    .into_iter()
                    .map(|p| RichText::from(p.name_in(language).to_lowercase()));
                let first = ranked(&self.registry).first().map(|p| p.name_in(language)).unwrap_or_default();
                said(
                    language,
                    "records-top-unknown",
                    Args::new()
                        .text("word", shown::name(word.unwrap_or_default()))
                        .rich("games", and_list(language, games.collect()))
                        .text("first", first.to_lowercase()),
                )
            }
        }
    }
}

/// `items` as "a, b and c" in `language` (`common-and`, `common-comma`).
fn and_list(language: Language, mut items: Vec<RichText>) -> RichText {
    let Some(mut text) = items.pop() else { return RichText::new() };
    if let Some(before) = items.pop() {
        text = said(language, "common-and", Args::new().rich("first", before).rich("last", text));
    }
    while let Some(before) = items.pop() {
        text = said(language, "common-comma", Args::new().rich("first", before).rich("rest", text));
    }
    text
}

/// The arguments every record text of `plugin` may read: its name, and the word that
/// names it in a command.
fn game_args(plugin: &dyn GamePlugin, language: Language) -> Args {
    let name = plugin.name_in(language);
    Args::new().text("word", name.to_lowercase()).text("game", name)
}

/// Message `id` of a game's record words with those of `args` it reads (a game's own
/// words may read fewer than the generic ones).
fn worded(language: Language, id: &str, args: Args) -> RichText {
    said(language, id, args.read_by(id))
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

/// A player's record in words: games and wins; then, for each challenge game they played,
/// its rating ± deviation, results, favourite choice and longest winning streak; for each
/// open-table game, the rounds played and won and the best standing.
pub(super) fn stats_text(
    language: Language,
    registry: &Registry,
    player: &PlayerId,
    record: &Record,
    seasons: &[SeasonStandings],
) -> RichText {
    let mut pools = RichText::new();
    for plugin in ranked(registry) {
        let game = plugin.name();
        let words = words_of(plugin);
        if let Some(played) = record.challenges.get(game) {
            let drawn = if played.draws > 0 {
                said(language, "records-drawn", Args::new().num("draws", played.draws))
            } else {
                RichText::new()
            };
            let choice = played.favourite.as_str();
            let favourite = if choice.is_empty() {
                RichText::new()
            } else {
                said(language, "records-favourite", Args::new().text("choice", choice))
            };
            pools = pools.append(worded(
                language,
                words.record,
                game_args(plugin, language)
                    .text("rating", rounded(played.rating.rating))
                    .text("deviation", rounded(played.rating.deviation))
                    .num("games", played.games)
                    .num("won", played.wins)
                    .num("lost", played.losses)
                    .rich("drawn", drawn)
                    .text("choice", choice)
                    .rich("favourite", favourite)
                    .num("streak", played.longest_streak),
            ));
        }
        if let Some(played) = record.open.get(game) {
            let rated = seasons.iter().filter(|season| season.game == game && season.unrated.is_none());
            let places = rated.filter_map(|season| {
                let place = season.standings.iter().position(|s| &s.player == player)?;
                Some((place + 1, season.standings.len(), season.table, season.round))
            });
            // The best place; among equal places the first round it was reached in.
            let best = match places.min_by_key(|(place, ..)| *place) {
                Some((place, of, table, round)) => worded(
                    language,
                    words.best.unwrap_or("records-open-best"),
                    Args::new()
                        .text("place", ordinal(place))
                        .num("rank", place)
                        .num("of", of)
                        .num("table", table)
                        .num("round", round),
                ),
                None => RichText::new(),
            };
            pools = pools.append(worded(
                language,
                words.record,
                game_args(plugin, language)
                    .num("rounds", played.rounds)
                    .num("won", played.won)
                    .rich("best", best),
            ));
        }
    }
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
            .rich("pools", pools)
            .rich("unrated", unrated),
    )
}

/// The ten best of `plugin`'s leaderboard in words, one line, in `language`.
pub(super) fn top_text(language: Language, summary: &Summary, plugin: &dyn GamePlugin) -> RichText {
    let game = plugin.name();
    let words = words_of(plugin);
    let args = || game_args(plugin, language);
    match plugin.kind() {
        TableKind::Challenge { .. } => {
            let board = summary.challenge_leaderboard(game);
            if board.is_empty() {
                if summary.players.values().any(|r| r.challenges.contains_key(game)) {
                    return worded(language, words.top_few, args().num("min", MIN_RATED_GAMES));
                }
                return worded(language, words.top_none, args());
            }
            let entries = board.iter().take(TOP).enumerate().map(|(place, (player, played))| {
                let drawn = if played.draws > 0 {
                    said(language, "records-top-drawn", Args::new().num("draws", played.draws))
                } else {
                    RichText::new()
                };
                worded(
                    language,
                    words.top_entry,
                    args()
                        .num("place", place + 1)
                        .name("player", player)
                        .text("rating", rounded(played.rating.rating))
                        .text("deviation", rounded(played.rating.deviation))
                        .num("won", played.wins)
                        .num("lost", played.losses)
                        .rich("drawn", drawn),
                )
            });
            let entries = joined(language, "records-top-separator", entries.collect());
            worded(language, words.top, args().num("rated", board.len()).rich("entries", entries))
        }
        TableKind::Open => {
            let board = standings(summary, game);
            let rated = summary
                .seasons
                .iter()
                .filter(|season| season.game == game && season.unrated.is_none())
                .count();
            if board.is_empty() {
                if rated > 0 {
                    return worded(language, words.top_few, args().num("min", MIN_RATED_GAMES));
                }
                return worded(language, words.top_none, args());
            }
            let entries = board.iter().take(TOP).enumerate().map(|(place, standing)| {
                worded(
                    language,
                    words.top_entry,
                    args()
                        .num("place", place + 1)
                        .name("player", &standing.player)
                        .num("score", standing.score)
                        .num("tiebreak", standing.tiebreak)
                        .num("rounds", standing.rounds),
                )
            });
            let entries = joined(language, "records-top-separator", entries.collect());
            worded(language, words.top, args().num("rated", rated).rich("entries", entries))
        }
    }
}

/// One player's finished rounds of an open-table game added up.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Standing {
    pub(super) player: PlayerId,
    pub(super) score: i128,
    pub(super) tiebreak: i64,
    pub(super) rounds: u32,
}

/// Every player of the open-table `game` with at least [`MIN_RATED_GAMES`] rated rounds,
/// by those rounds' scores, then tie-breaks (summed), then name.
pub(super) fn standings(summary: &Summary, game: &str) -> Vec<Standing> {
    let mut by_player: BTreeMap<&PlayerId, Standing> = BTreeMap::new();
    let rated = summary.seasons.iter().filter(|season| season.game == game && season.unrated.is_none());
    for place in rated.flat_map(|season| &season.standings) {
        let standing = by_player.entry(&place.player).or_insert_with(|| Standing {
            player: place.player.clone(),
            score: 0,
            tiebreak: 0,
            rounds: 0,
        });
        standing.score += place.score;
        standing.tiebreak += place.tiebreak;
        standing.rounds += 1;
    }
    let mut board: Vec<Standing> =
        by_player.into_values().filter(|standing| standing.rounds >= MIN_RATED_GAMES).collect();
    board.sort_by(|a, b| {
        b.score.cmp(&a.score).then(b.tiebreak.cmp(&a.tiebreak)).then(a.player.cmp(&b.player))
    });
    board
}

#[cfg(test)]
#[path = "any_game_tests.rs"]
mod any_game_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ratings::{ChallengeRecord, OpenRecord, Rating, SeasonPlace};
    use std::sync::LazyLock;

    static STANDARD: LazyLock<Registry> = LazyLock::new(Registry::standard);

    fn game(name: &str) -> &'static dyn GamePlugin {
        STANDARD.get(name).unwrap_or_else(|| panic!("{name} is a standard game"))
    }

    fn player(name: &str) -> PlayerId {
        PlayerId::new(name)
    }

    fn duel(rating: f64, wins: u32, losses: u32) -> Record {
        Record {
            games: wins + losses,
            wins,
            challenges: BTreeMap::from([(
                "duel".into(),
                ChallengeRecord {
                    rating: Rating { rating, deviation: 200.4, volatility: 0.06 },
                    games: wins + losses,
                    wins,
                    losses,
                    draws: 0,
                    longest_streak: wins,
                    favourite: "Pyromancer".into(),
                },
            )]),
            open: BTreeMap::new(),
            unrated: 0,
        }
    }

    fn season(table: TableId, places: &[(&str, i128, i64)]) -> SeasonStandings {
        SeasonStandings {
            game: "thaum".into(),
            table,
            round: 1,
            standings: places
                .iter()
                .map(|(p, coins, thaums)| SeasonPlace { player: player(p), score: *coins, tiebreak: *thaums })
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
        record.open.insert("thaum".into(), OpenRecord { rounds: 2, won: 1 });
        assert_eq!(
            stats_text(Language::En, &STANDARD, &player("alice"), &record, &seasons).plain(),
            "alice has played 6 games and won 4. Duel: rating 1613 ± 200 after 4 duels (3 won, 1 lost); favourite wizard \
             Pyromancer; longest winning streak 3. Thaum: 2 seasons played, 1 won; best standing 1st of 1 \
             (table 7, season 1)."
        );
        let one = Record {
            games: 1,
            wins: 0,
            challenges: BTreeMap::new(),
            open: BTreeMap::from([("thaum".into(), OpenRecord { rounds: 1, won: 0 })]),
            unrated: 0,
        };
        assert_eq!(
            stats_text(Language::En, &STANDARD, &player("alice"), &one, &seasons[..1]).plain(),
            "alice has played 1 game and won 0. Thaum: 1 season played, 0 won; best standing 2nd of 2 (table 4, season 1)."
        );
    }

    #[test]
    fn top_lists_the_ten_best_by_rating_or_by_coins_then_thaums() {
        let mut summary = Summary::default();
        assert!(
            top_text(Language::En, &summary, game("duel")).plain().contains("Nobody has a Duel rating yet")
        );
        assert!(
            top_text(Language::En, &summary, game("thaum")).plain().contains("No Thaum season has ended yet")
        );
        for i in 0..14u32 {
            summary.players.insert(player(&format!("p{i:02}")), duel(1400.0 + f64::from(i) * 10.0, i, 1));
        }
        let text = top_text(Language::En, &summary, game("duel")).plain();
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
        let text = top_text(Language::En, &summary, game("thaum")).plain();
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
            top_text(Language::En, &summary, game("duel")).plain(),
            "No player has 3 rated Duels yet: `!top` lists a player once they have. `!stats` shows everyone's."
        );
        // An unrated season counts toward nobody's standings, even with three of them.
        let mut unrated = season(1, &[("alice", 50, 0)]);
        unrated.unrated = Some(crate::ratings::Unrated::LonePlayer);
        summary.seasons = vec![unrated.clone(), unrated.clone(), unrated];
        assert!(
            top_text(Language::En, &summary, game("thaum")).plain().contains("No Thaum season has ended yet")
        );
        summary.seasons.push(season(2, &[("alice", 1, 0), ("bob", 0, 0)]));
        assert_eq!(
            top_text(Language::ZhCn, &summary, game("thaum")).plain(),
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
            challenges: BTreeMap::new(),
            open: BTreeMap::from([("thaum".into(), OpenRecord { rounds: 1, won: 0 })]),
            unrated: 1,
        };
        assert_eq!(
            stats_text(Language::En, &STANDARD, &player("alice"), &record, &seasons).plain(),
            "alice has played 1 game and won 0. Thaum: 1 season played, 0 won; best standing 2nd of 2 (table 8, \
             season 1). Unrated: 1 game (a Duel against a guest or conceded within a minute, a Thaum season alone \
             or won with a game master's coins), not counted toward `!top`."
        );
    }
}
