//! How a game of Nim ended, for ratings, `!stats` and `!top`: the winner first (RULES
//! N-4: they took the last stone; N-5: the other conceded), the loser second. A stopped
//! game, or one closed before anyone joined, ends with no result: no ending. A place's
//! score is 1 for the winner, 0 for the loser.

use serde::Deserialize;

use super::news::NimNews;
use crate::ending::{Ending, EndingReader, Place};
use crate::event::EventRecord;
use crate::ids::PlayerId;

/// The ending of a game `winner` won against `loser`, the places in seat order
/// (`seats`: the opener first).
pub fn of(seats: &[PlayerId], winner: &PlayerId, conceded: bool) -> Option<Ending> {
    if seats.len() != 2 || !seats.contains(winner) {
        return None;
    }
    let places = seats
        .iter()
        .map(|player| {
            let won = player == winner;
            Place { player: player.clone(), place: if won { 1 } else { 2 }, score: i128::from(won), tiebreak: 0, choice: None }
        })
        .collect();
    Some(Ending { round: 1, places, conceded, helped: Default::default() })
}

/// Reads one table's ending from its journaled news: the seats from `joined`, the result
/// from `won` or `conceded`.
#[derive(Clone, Debug, Default)]
pub struct NimEndings {
    seats: Vec<PlayerId>,
    done: bool,
}

impl EndingReader for NimEndings {
    fn read(&mut self, event: &EventRecord) -> Option<Ending> {
        let kind = event.event.get("news").and_then(serde_json::Value::as_str)?;
        if !matches!(kind, "joined" | "won" | "conceded" | "stopped") {
            return None;
        }
        match NimNews::deserialize(&event.event).ok()? {
            NimNews::Joined { player, first, .. } => {
                self.seats = vec![first, player];
                None
            }
            NimNews::Won { player, .. } => {
                self.done = true;
                of(&self.seats, &player, false)
            }
            NimNews::Conceded { winner, .. } => {
                self.done = true;
                of(&self.seats, winner.as_ref()?, true)
            }
            _ => {
                self.done = true;
                None
            }
        }
    }

    fn done(&self) -> bool {
        self.done
    }

    fn boxed_clone(&self) -> Box<dyn EndingReader> {
        Box::new(self.clone())
    }
}
