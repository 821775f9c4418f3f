//! The ratings as `spellbridge ratings` prints them: for each game with records, its
//! leaderboard (a challenge game's Glicko-2 ratings, an open table's rounds won), then
//! every finished round's standings.

use std::fmt::Write as _;

use super::Summary;

/// `n` and the noun, plural when `n` is not 1 (`1 game`, `2 games`).
fn counted(n: u32, noun: &str) -> String {
    if n == 1 { format!("{n} {noun}") } else { format!("{n} {noun}s") }
}

/// The summary as plain text, one line per player or round.
pub fn text(summary: &Summary) -> String {
    let mut out = String::new();
    for game in summary.games() {
        let rated = summary.challenge_leaderboard(game);
        if summary.players.values().any(|r| r.challenges.contains_key(game)) {
            let _ = writeln!(out, "{game} ratings (Glicko-2), {} players:", rated.len());
        }
        for (place, (player, c)) in rated.iter().enumerate() {
            let _ = writeln!(
                out,
                "{:>3}. {player}  {:.0} ±{:.0}  {}: {} won, {} lost, {} drawn; longest winning streak {}; favourite choice {}",
                place + 1,
                c.rating.rating,
                c.rating.deviation,
                counted(c.games, "game"),
                c.wins,
                c.losses,
                c.draws,
                c.longest_streak,
                c.favourite,
            );
        }
        let played = summary.open_leaderboard(game);
        if summary.players.values().any(|r| r.open.contains_key(game)) {
            let _ = writeln!(out, "{game}, {} players:", played.len());
        }
        for (place, (player, o)) in played.iter().enumerate() {
            let _ =
                writeln!(out, "{:>3}. {player}  won {} of {}", place + 1, o.won, counted(o.rounds, "round"));
        }
    }
    for round in &summary.seasons {
        let places: Vec<String> = round
            .standings
            .iter()
            .map(|s| format!("{} {} (tie-break {})", s.player, s.score, s.tiebreak))
            .collect();
        let _ = writeln!(
            out,
            "{} table {} round {}: {}",
            round.game,
            round.table,
            round.round,
            places.join(", ")
        );
    }
    out
}
