//! What a Duel table tells, as data: the [`DuelNews`] events a [`DuelTable`](super::DuelTable)
//! returns, each for the table or one player, journaled as they are and rendered per
//! destination at delivery ([`super::render::events`]).
//!
//! Each event carries what rendering needs, so no renderer ever reads the duel: a
//! [`DuelView`] of what everyone may know (players, wizards, track, pools, seals, how it
//! ended). What only one wizard may know goes only into that wizard's private events: a
//! queued spell ([`DuelNews::Queued`], [`DuelNews::Queue`]) and the queued tokens a step
//! dropped ([`DuelNews::Dropped`]). A table event never holds a token before the step
//! that reveals it.

use serde::{Deserialize, Serialize};

use super::engine::{Duel, DuelEvent, Finish, Placement, RoundRecord, SpellRecord};
use super::round::Check;
use super::spell::Seal;
use super::token::Token;
use super::wizard::Pool;
use crate::event::Event;
use crate::ids::PlayerId;
use crate::plugin::Audience;
use crate::time::Timestamp;

/// What everyone at the table may know of the duel at one moment.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DuelView {
    /// The wizards' players, the challenger first.
    pub players: [PlayerId; 2],
    /// Their wizards' names.
    pub wizards: [String; 2],
    /// The track: positive toward the first player (RULES D-1).
    pub track: i64,
    /// What each wizard has left to cast.
    pub pools: [Pool; 2],
    /// The seals on each wizard's spell this round (RULES D-10).
    pub seals: [Seal; 2],
    /// How the duel ended, once it has.
    pub finish: Option<Finish>,
    /// How long a step waits (RULES D-9).
    pub step_timeout_secs: i64,
}

impl DuelView {
    /// The public view of `duel` as it is now.
    pub fn of(duel: &Duel) -> Self {
        let [a, b] = duel.wizards();
        DuelView {
            players: duel.players().clone(),
            wizards: [a.name.clone(), b.name.clone()],
            track: duel.track(),
            pools: *duel.pools(),
            seals: duel.seals().clone(),
            finish: duel.finish(),
            step_timeout_secs: duel.rules().step_timeout_secs,
        }
    }
}

/// What one wizard placed at a step, as revealed to everyone.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Revealed {
    /// The tokens placed (none when the spell was already complete).
    pub tokens: Vec<Token>,
    /// True when RULES D-9 placed them.
    pub timed_out: bool,
    /// The concentration check the element needed, if any.
    pub check: Option<Check>,
}

impl Revealed {
    fn of(placement: &Placement) -> Self {
        Revealed { tokens: placement.tokens.clone(), timed_out: placement.timed_out, check: placement.check }
    }
}

/// A settled round, as everyone saw it settle.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settled {
    /// The round number.
    pub number: u32,
    /// Both spells, in seat order.
    pub spells: [SpellRecord; 2],
    /// The track after the round.
    pub track_after: i64,
}

impl Settled {
    fn of(record: &RoundRecord) -> Self {
        Settled { number: record.number, spells: record.spells.clone(), track_after: record.track_after }
    }
}

/// The public state of the round, for `!status`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoundView {
    /// The round number.
    pub number: u32,
    /// The step being cast.
    pub step: u32,
    /// What each wizard has placed (all revealed already).
    pub placed: [Vec<Token>; 2],
    /// True for a wizard whose spell has ended.
    pub complete: [bool; 2],
    /// True for a wizard the step waits for.
    pub waiting: [bool; 2],
    /// When the step times out; none once the duel is over.
    pub deadline: Option<Timestamp>,
}

/// One thing that happened at a Duel table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DuelNews {
    /// The table opened; round 1 begins.
    Opened {
        /// The duel as it opened.
        view: DuelView,
    },
    /// Private: the wizard's spell for the round so far, placed and queued.
    Queued {
        /// The round it is for.
        round: u32,
        /// Everything placed and queued.
        spell: Vec<Token>,
    },
    /// A step resolved: both wizards' tokens for it are revealed.
    Step {
        /// The round.
        round: u32,
        /// The step.
        step: u32,
        /// The players, in seat order.
        players: [PlayerId; 2],
        /// What each placed.
        placements: [Revealed; 2],
    },
    /// Private: queued tokens a step dropped (a broken concentration, a timeout).
    Dropped {
        /// True when a failed concentration check ended the spell; else a timeout.
        interrupted: bool,
        /// The tokens dropped, never placed.
        tokens: Vec<Token>,
    },
    /// A round settled.
    Settled {
        /// The round (boxed: it is the largest event by far).
        round: Box<Settled>,
        /// The duel after it (its seals are the next round's).
        view: DuelView,
    },
    /// A round began.
    RoundStarted {
        /// Its number.
        round: u32,
        /// When its first step times out.
        deadline: Timestamp,
        /// True when it is the round being played once the action is done (its seals
        /// are `view`'s).
        current: bool,
        /// The duel as the action left it.
        view: DuelView,
    },
    /// The duel ended.
    Finished {
        /// How.
        finish: Finish,
        /// The duel at its end.
        view: DuelView,
    },
    /// `by` stopped the duel (`!stop`): no winner.
    Stopped {
        /// The room operator, game master or bot admin.
        by: PlayerId,
        /// The duel at its end.
        view: DuelView,
    },
    /// The answer to `!status`: public facts only.
    Status {
        /// The duel.
        view: DuelView,
        /// The round being cast.
        round: RoundView,
    },
    /// Private: the asker's own queued tokens, with a `!status` asked privately.
    Queue {
        /// The tokens queued and not placed.
        tokens: Vec<Token>,
    },
}

/// The public status of `duel`.
pub fn status(duel: &Duel) -> DuelNews {
    let round = duel.round();
    let seat = |s: usize| &round.casters[s];
    let placed = |s: usize| -> Vec<Token> {
        let caster = seat(s);
        caster
            .preconditioning
            .map(Token::Preconditioning)
            .into_iter()
            .chain(caster.elements.iter().map(|e| Token::Element(*e)))
            .collect()
    };
    let complete = [seat(0).is_complete(), seat(1).is_complete()];
    let waiting = [0, 1].map(|s| !complete[s] && !seat(s).is_ready());
    DuelNews::Status {
        view: DuelView::of(duel),
        round: RoundView {
            number: round.number,
            step: round.step,
            placed: [placed(0), placed(1)],
            complete,
            waiting,
            deadline: duel.next_timer(),
        },
    }
}

/// The events `duel` has just gone through, as news for their audiences. `private` says
/// whether the command came privately (a status then answers privately, with the
/// asker's own queue).
pub fn told(duel: &Duel, events: &[DuelEvent], private: bool) -> Vec<Event> {
    let players = duel.players();
    let mut out = Vec::with_capacity(events.len() + 2);
    for event in events {
        match event {
            DuelEvent::Queued { seat, round, spell } => out.push(Event::player(
                &players[*seat],
                DuelNews::Queued { round: *round, spell: spell.clone() },
            )),
            DuelEvent::Step { round, step, placements } => {
                out.push(Event::table(DuelNews::Step {
                    round: *round,
                    step: *step,
                    players: players.clone(),
                    placements: [Revealed::of(&placements[0]), Revealed::of(&placements[1])],
                }));
                for (seat, placement) in placements.iter().enumerate() {
                    if !placement.dropped.is_empty() {
                        out.push(Event::player(
                            &players[seat],
                            DuelNews::Dropped {
                                interrupted: placement.interrupted,
                                tokens: placement.dropped.clone(),
                            },
                        ));
                    }
                }
            }
            DuelEvent::Settled { round } => {
                if let Some(record) = duel.rounds().iter().rev().find(|r| r.number == *round) {
                    out.push(Event::table(DuelNews::Settled {
                        round: Box::new(Settled::of(record)),
                        view: DuelView::of(duel),
                    }));
                }
            }
            DuelEvent::RoundStarted { round, deadline } => out.push(Event::table(DuelNews::RoundStarted {
                round: *round,
                deadline: *deadline,
                current: duel.round().number == *round,
                view: DuelView::of(duel),
            })),
            DuelEvent::Finished(finish) => {
                out.push(Event::table(DuelNews::Finished { finish: *finish, view: DuelView::of(duel) }));
            }
            DuelEvent::Stopped { by } => {
                out.push(Event::table(DuelNews::Stopped { by: by.clone(), view: DuelView::of(duel) }));
            }
            DuelEvent::Status { asker } => {
                let to = if private { Audience::Player(asker.clone()) } else { Audience::Table };
                out.push(Event::to(to, status(duel)));
                if private && let Some(seat) = duel.seat(asker) {
                    let tokens = duel.round().casters[seat].queue.iter().copied().collect();
                    out.push(Event::player(asker, DuelNews::Queue { tokens }));
                }
            }
        }
    }
    out
}
