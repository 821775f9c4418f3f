//! How a Duel ended, for ratings and records: the winner first (RULES D-1: the track
//! reached 30 on their side; D-2: a pool ran dry and the track favours them; or the other
//! wizard conceded, or a step timed out into an idle round, D-9), both first on a draw
//! (D-2: a dry pool with the track at 0). A stopped Duel (`!stop`) ends with no result:
//! no ending. Each place's score is the track toward that player; its choice the wizard.

use serde::Deserialize;

use super::engine::{Finish, FinishReason};
use super::news::{DuelNews, DuelView};
use crate::ending::{Ending, EndingReader, Place};
use crate::event::EventRecord;

/// The ending of a duel that finished as `finish`, its public view at the end `view`
/// (`None` for a stopped duel).
pub fn of(finish: Finish, view: &DuelView) -> Option<Ending> {
    if finish.reason == FinishReason::Stopped {
        return None;
    }
    let places = (0..2)
        .map(|seat| Place {
            player: view.players[seat].clone(),
            // RULES D-2: at exactly 0 it is a draw, both first.
            place: match finish.winner {
                Some(winner) if winner != seat => 2,
                _ => 1,
            },
            score: i128::from(if seat == 0 { view.track } else { -view.track }),
            tiebreak: 0,
            choice: Some(view.wizards[seat].clone()),
        })
        .collect();
    Some(Ending {
        round: 1,
        places,
        conceded: finish.reason == FinishReason::Conceded,
        helped: Default::default(),
    })
}

/// Reads a Duel table's ending from its `finished` event.
#[derive(Clone, Debug, Default)]
pub struct DuelEndings {
    done: bool,
}

impl EndingReader for DuelEndings {
    fn read(&mut self, event: &EventRecord) -> Option<Ending> {
        let kind = event.event.get("kind").and_then(serde_json::Value::as_str)?;
        if !matches!(kind, "finished" | "stopped") {
            return None;
        }
        self.done = true;
        match DuelNews::deserialize(&event.event).ok()? {
            DuelNews::Finished { finish, view } => of(finish, &view),
            _ => None,
        }
    }

    fn done(&self) -> bool {
        self.done
    }

    fn boxed_clone(&self) -> Box<dyn EndingReader> {
        Box::new(self.clone())
    }
}
