//! The ratings as `spellbridge ratings` prints them: the Duel leaderboard (Glicko-2), the
//! Thaum leaderboard (seasons won), and every finished season's standings.

use std::fmt::Write as _;

use super::Summary;

/// The summary as plain text, one line per player or season.
pub fn text(summary: &Summary) -> String {
    let mut out = String::new();
    let duel = summary.duel_leaderboard();
    let _ = writeln!(out, "Duel ratings (Glicko-2), {} players:", duel.len());
    for (place, (player, record)) in duel.iter().enumerate() {
        let Some(d) = &record.duel else { continue };
        let _ = writeln!(
            out,
            "{:>3}. {player}  {:.0} ±{:.0}  {} {}: {} won, {} lost, {} drawn; longest winning streak {}; favourite wizard {}",
            place + 1,
            d.rating.rating,
            d.rating.deviation,
            d.games,
            if d.games == 1 { "duel" } else { "duels" },
            d.wins,
            d.losses,
            d.draws,
            d.longest_streak,
            d.favourite_wizard,
        );
    }
    let thaum = summary.thaum_leaderboard();
    let _ = writeln!(out, "Thaum, {} players:", thaum.len());
    for (place, (player, record)) in thaum.iter().enumerate() {
        let Some(t) = &record.thaum else { continue };
        let _ = writeln!(
            out,
            "{:>3}. {player}  won {} of {} {}",
            place + 1,
            t.won,
            t.seasons,
            if t.seasons == 1 { "season" } else { "seasons" }
        );
    }
    for season in &summary.seasons {
        let places: Vec<String> = season
            .standings
            .iter()
            .map(|s| format!("{} {} coins (Thaums {})", s.player, s.coins, s.thaums))
            .collect();
        let _ = writeln!(out, "table {} season {}: {}", season.table, season.season, places.join(", "));
    }
    out
}
