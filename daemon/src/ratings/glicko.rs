//! Glicko-2 (Mark Glickman, "Example of the Glicko-2 system", 2013) on the `skillratings`
//! crate, with the paper's constants: a new player is 1500 with deviation 350 and
//! volatility 0.06, τ = 0.5.
//!
//! spellbridge rates a Duel as its own rating period for both wizards, each against the
//! other's rating from before the duel, so a rating moves as soon as a duel ends.

use serde::{Deserialize, Serialize};
use skillratings::Outcomes;
use skillratings::glicko2::{Glicko2Config, Glicko2Rating, glicko2_rating_period};

/// A player's Glicko-2 rating.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rating {
    /// The rating (1500 for a new player).
    pub rating: f64,
    /// The rating deviation (350 for a new player).
    pub deviation: f64,
    /// The volatility (0.06 for a new player).
    pub volatility: f64,
}

impl Default for Rating {
    fn default() -> Self {
        Rating { rating: 1500.0, deviation: 350.0, volatility: 0.06 }
    }
}

/// One game's result for the player rated: 1 a win, 0.5 a draw, 0 a loss.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    /// The player won.
    Win,
    /// Neither won.
    Draw,
    /// The player lost.
    Loss,
}

impl Score {
    /// The same game from the opponent's side.
    pub fn reversed(self) -> Score {
        match self {
            Score::Win => Score::Loss,
            Score::Draw => Score::Draw,
            Score::Loss => Score::Win,
        }
    }

    fn outcome(self) -> Outcomes {
        match self {
            Score::Win => Outcomes::WIN,
            Score::Draw => Outcomes::DRAW,
            Score::Loss => Outcomes::LOSS,
        }
    }
}

fn to_crate(rating: Rating) -> Glicko2Rating {
    Glicko2Rating { rating: rating.rating, deviation: rating.deviation, volatility: rating.volatility }
}

/// A player's rating after one rating period with these games (each against the
/// opponent's rating at the period's start); with no games, only the deviation grows.
pub fn rate_period(player: Rating, games: &[(Rating, Score)]) -> Rating {
    let results: Vec<(Glicko2Rating, Outcomes)> =
        games.iter().map(|(opponent, score)| (to_crate(*opponent), score.outcome())).collect();
    let config = Glicko2Config { tau: 0.5, convergence_tolerance: 0.000_001 };
    let new = glicko2_rating_period(&to_crate(player), &results, &config);
    Rating { rating: new.rating, deviation: new.deviation, volatility: new.volatility }
}

/// Both players' ratings after one game between them, each its own rating period.
pub fn rate_game(a: Rating, b: Rating, score_of_a: Score) -> (Rating, Rating) {
    (rate_period(a, &[(b, score_of_a)]), rate_period(b, &[(a, score_of_a.reversed())]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rating(rating: f64, deviation: f64) -> Rating {
        Rating { rating, deviation, volatility: 0.06 }
    }

    #[test]
    fn glickmans_worked_example() {
        // Glickman, "Example of the Glicko-2 system", §"Example calculation": a 1500/200
        // player beats a 1400/30 and loses to a 1550/100 and a 1700/300 in one period.
        let games = [
            (rating(1400.0, 30.0), Score::Win),
            (rating(1550.0, 100.0), Score::Loss),
            (rating(1700.0, 300.0), Score::Loss),
        ];
        let after = rate_period(rating(1500.0, 200.0), &games);
        assert!((after.rating - 1464.06).abs() < 0.01, "rating {}", after.rating);
        assert!((after.deviation - 151.52).abs() < 0.01, "deviation {}", after.deviation);
        assert!((after.volatility - 0.05999).abs() < 0.00001, "volatility {}", after.volatility);
    }

    #[test]
    fn a_period_without_games_only_widens_the_deviation() {
        let after = rate_period(rating(1500.0, 200.0), &[]);
        assert_eq!(after.rating, 1500.0);
        assert!(after.deviation > 200.0);
    }

    #[test]
    fn a_game_moves_both_ratings_by_the_same_amount_between_equals() {
        let (a, b) = rate_game(Rating::default(), Rating::default(), Score::Win);
        assert!(a.rating > 1500.0 && b.rating < 1500.0);
        assert!(((a.rating - 1500.0) - (1500.0 - b.rating)).abs() < 1e-9);
        let (c, d) = rate_game(Rating::default(), Rating::default(), Score::Draw);
        assert_eq!((c.rating, d.rating), (1500.0, 1500.0));
    }
}
