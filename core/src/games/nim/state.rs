//! A Nim table's whole state ([`Nim`], also its snapshot) and the rules applied to it
//! ([`Nim::apply`], RULES N-1 … N-5): pure, and a refused command changes nothing.

use serde::{Deserialize, Serialize};

use super::command::{NimCommand, Pile};
use super::news::{NimError, NimNews};
use crate::ids::PlayerId;
use crate::plugin::Role;

/// The piles at the start (RULES N-2).
pub const START: [u32; 3] = [3, 5, 7];

/// The most stones one turn takes (RULES N-3).
pub const MOST: u32 = 3;

/// Why a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// A player took the last stone (RULES N-4).
    LastStone,
    /// A player conceded (RULES N-5).
    Conceded,
    /// A room operator or game master stopped it: no winner (RULES N-5).
    Stopped,
}

/// One accepted take.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Move {
    /// Who took.
    pub player: PlayerId,
    /// How many stones.
    pub amount: u32,
    /// From which pile.
    pub pile: Pile,
}

/// A game of Nim, as its snapshot writes it (`players`, `piles` as `a`/`b`/`c`, `moves`,
/// `finished`, `winner`, `finish_reason`): everything in it is public.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Nim {
    /// The opener, then whoever joined (RULES N-1).
    pub players: Vec<PlayerId>,
    /// The stones left in each pile, in [`Pile::ALL`]'s order.
    pub piles: [u32; 3],
    /// Whose turn it is: an index into `players`.
    pub turn: usize,
    /// Every accepted take, in order.
    pub moves: Vec<Move>,
    /// True once the game is over.
    pub finished: bool,
    /// Who won, if anyone.
    pub winner: Option<PlayerId>,
    /// Why it ended.
    pub finish_reason: Option<FinishReason>,
}

impl Nim {
    /// A table `opener` opened: one seat taken, the piles full.
    pub fn new(opener: PlayerId) -> Nim {
        Nim {
            players: vec![opener],
            piles: START,
            turn: 0,
            moves: Vec::new(),
            finished: false,
            winner: None,
            finish_reason: None,
        }
    }

    /// Who moves next, once both seats are taken and while the game runs.
    pub fn to_move(&self) -> Option<&PlayerId> {
        (self.players.len() == 2 && !self.finished).then(|| &self.players[self.turn])
    }

    /// The stones left in `pile`.
    pub fn left(&self, pile: Pile) -> u32 {
        self.piles[pile.index()]
    }

    /// The other seat's player.
    fn other(&self, seat: usize) -> PlayerId {
        self.players[1 - seat].clone()
    }

    fn seat(&self, player: &PlayerId) -> Option<usize> {
        self.players.iter().position(|p| p == player)
    }

    /// Applies `command` by `actor`, whom the daemon judged to have `role`; what happened,
    /// or why not (and then nothing changed).
    pub fn apply(&mut self, actor: &PlayerId, role: Role, command: NimCommand) -> Result<Vec<NimNews>, NimError> {
        if self.finished {
            return Err(NimError::Over);
        }
        let seat = self.seat(actor);
        match command {
            NimCommand::Status => Ok(vec![self.status()]),
            NimCommand::Join => {
                if seat.is_some() {
                    return Err(NimError::AlreadySeated);
                }
                if self.players.len() == 2 {
                    return Err(NimError::SeatsTaken { players: self.players.clone() });
                }
                self.players.push(actor.clone());
                Ok(vec![NimNews::Joined {
                    player: actor.clone(),
                    first: self.players[0].clone(),
                    piles: self.piles,
                }])
            }
            NimCommand::Take { amount, pile } => {
                let seat = self.seated(seat)?;
                if self.players.len() < 2 {
                    return Err(NimError::NoOpponent);
                }
                if seat != self.turn {
                    return Err(NimError::NotYourTurn { player: self.players[self.turn].clone() });
                }
                if !(1..=MOST).contains(&amount) {
                    return Err(NimError::Amount { amount });
                }
                let left = self.left(pile);
                if left == 0 {
                    return Err(NimError::PileEmpty { pile, piles: self.piles });
                }
                if amount > left {
                    return Err(NimError::PileShort { pile, left });
                }
                // Checked: from here on nothing can fail.
                self.piles[pile.index()] -= amount;
                self.moves.push(Move { player: actor.clone(), amount, pile });
                let mut news = vec![NimNews::Took {
                    player: actor.clone(),
                    amount,
                    pile,
                    piles: self.piles,
                    next: None,
                }];
                if self.piles.iter().all(|&n| n == 0) {
                    self.finish(Some(actor.clone()), FinishReason::LastStone);
                    news.push(NimNews::Won { player: actor.clone(), loser: self.other(seat) });
                } else {
                    self.turn = 1 - seat;
                    if let Some(NimNews::Took { next, .. }) = news.first_mut() {
                        *next = Some(self.players[self.turn].clone());
                    }
                }
                Ok(news)
            }
            NimCommand::Concede => {
                let seat = self.seated(seat)?;
                let winner = (self.players.len() == 2).then(|| self.other(seat));
                self.finish(winner.clone(), FinishReason::Conceded);
                Ok(vec![NimNews::Conceded { player: actor.clone(), winner }])
            }
            // Decision (as the Duel's): a player has no say in `!stop` (they `!concede`).
            NimCommand::Stop => {
                if role == Role::Player {
                    return Err(NimError::MayNotStop);
                }
                self.finish(None, FinishReason::Stopped);
                Ok(vec![NimNews::Stopped { by: actor.clone() }])
            }
        }
    }

    /// The table as `!status` tells it.
    pub fn status(&self) -> NimNews {
        NimNews::Status { players: self.players.clone(), piles: self.piles, next: self.to_move().cloned() }
    }

    /// `seat`, or why someone not seated may not play.
    fn seated(&self, seat: Option<usize>) -> Result<usize, NimError> {
        seat.ok_or_else(|| match self.players.len() {
            2 => NimError::NotSeated { players: self.players.clone() },
            _ => NimError::NotSeatedYet,
        })
    }

    fn finish(&mut self, winner: Option<PlayerId>, reason: FinishReason) {
        self.finished = true;
        self.winner = winner;
        self.finish_reason = Some(reason);
    }
}
