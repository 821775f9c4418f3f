//! The Duel engine: the whole state of one duel and the one function that changes it.
//!
//! [`Duel::apply`] makes every check before any change, so an `Err` leaves the duel
//! exactly as it was. An accepted `!cast` queues tokens; then every step whose tokens
//! are all ready resolves at once (concentration checks roll here), and a round whose
//! two spells are complete settles ([`super::settle`]) and the next round begins.
//! [`Duel::fire_timer`] is the same path for a step that waited too long (RULES D-9).
//! Time arrives as a [`Timestamp`], randomness as [`Dice`]; nothing here reads a clock.

use serde::{Deserialize, Serialize};

use super::command::DuelCommand;
use super::error::DuelError;
use super::round::{Caster, Check, Round, SpellState, Unit};
use super::settle::{SpellOutcome, settle};
use super::spell::Seal;
use super::token::{Preconditioning, Token};
use super::wizard::{Pool, Wizard};
use crate::dice::Dice;
use crate::ids::PlayerId;
use crate::plugin::Role;
use crate::time::Timestamp;

/// The table rules a duel is played with (copied into its state, so a restored duel
/// keeps them even if the configuration changes).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DuelRules {
    /// Seconds a step waits before RULES D-9 places tokens for whoever is not ready.
    pub step_timeout_secs: i64,
    /// Minimum d6 roll for concentration check k (RULES D-8: the last value repeats).
    pub concentration: Vec<u8>,
    /// The same under Focused Casting (RULES D-5).
    pub focused: Vec<u8>,
    /// End the duel (the track decides, as RULES D-2) after a round in which neither
    /// wizard queued any token, so an abandoned duel does not time out forever.
    #[serde(default = "yes")]
    pub end_when_idle: bool,
}

fn yes() -> bool {
    true
}

impl Default for DuelRules {
    fn default() -> Self {
        DuelRules {
            step_timeout_secs: 600,
            concentration: vec![4, 4, 3, 2, 2],
            focused: vec![3, 3, 2, 2, 2],
            end_when_idle: true,
        }
    }
}

impl DuelRules {
    /// The minimum roll for check `k` (from 1) of a spell, focused or not (RULES D-5, D-8).
    pub fn need(&self, focused: bool, k: usize) -> u8 {
        let sequence = if focused { &self.focused } else { &self.concentration };
        let index = k.saturating_sub(1).min(sequence.len().saturating_sub(1));
        sequence.get(index).copied().unwrap_or(if focused { 3 } else { 4 })
    }
}

/// Why the duel ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// The track reached 30 on one side (RULES D-1).
    Track,
    /// A pool ran dry (RULES D-2).
    PoolEmpty,
    /// The loser conceded.
    Conceded,
    /// A round passed with neither wizard casting (see [`DuelRules::end_when_idle`]).
    Abandoned,
    /// A room operator, game master or bot admin typed `!stop`: no winner.
    Stopped,
}

/// How the duel ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Finish {
    /// The winner's seat; None for a draw, or for no winner when the duel was stopped.
    pub winner: Option<usize>,
    /// Why.
    pub reason: FinishReason,
}

/// One spell of a settled round, as recorded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpellRecord {
    /// The spell as cast, starting with its pre-conditioning, without `end`.
    pub tokens: Vec<Token>,
    /// The concentration checks, in order.
    pub checks: Vec<Check>,
    /// True when a failed check ended the spell.
    pub interrupted: bool,
    /// The element that failed check discarded (still spent, RULES D-4).
    pub discarded: Option<super::element::Element>,
    /// Steps the wizard timed out on (RULES D-9).
    pub timeouts: u32,
    /// The settlement of the spell.
    #[serde(flatten)]
    pub outcome: SpellOutcome,
}

/// A settled round.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoundRecord {
    /// The round number.
    pub number: u32,
    /// Both spells, in seat order.
    pub spells: [SpellRecord; 2],
    /// The track after the round.
    pub track_after: i64,
    /// Seeds of the actions that rolled checks this round (RULES T-10).
    pub seeds: Vec<u64>,
}

/// What one seat did at one step.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Placement {
    /// The tokens placed (empty when the spell was already complete). A discarded
    /// element is listed here and marked by `interrupted`.
    pub tokens: Vec<Token>,
    /// True when RULES D-9 placed them.
    pub timed_out: bool,
    /// The concentration check the element needed, if any.
    pub check: Option<Check>,
    /// True when the check failed: the element is discarded and the spell ends.
    pub interrupted: bool,
    /// Queued tokens dropped (after a failed check, or a lone Overspeed at a timeout).
    pub dropped: Vec<Token>,
}

/// Something that happened, for the renderer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DuelEvent {
    /// Tokens were queued; `spell` is the seat's whole spell so far (placed + queued).
    Queued {
        /// The seat.
        seat: usize,
        /// The round it is for.
        round: u32,
        /// Everything placed and queued.
        spell: Vec<Token>,
    },
    /// A step resolved and its tokens are revealed.
    Step {
        /// The round.
        round: u32,
        /// The step.
        step: u32,
        /// Both seats' placements.
        placements: [Placement; 2],
    },
    /// A round settled; its record is the last of [`Duel::rounds`].
    Settled {
        /// The round number.
        round: u32,
    },
    /// A new round began.
    RoundStarted {
        /// Its number.
        round: u32,
        /// When its first step times out.
        deadline: Timestamp,
    },
    /// The duel ended.
    Finished(Finish),
    /// `by` stopped the duel (`!stop`): it is finished, with no winner.
    Stopped {
        /// The room operator, game master or bot admin who stopped it.
        by: PlayerId,
    },
    /// Someone asked for the status.
    Status {
        /// Who asked.
        asker: PlayerId,
    },
}

/// The state of one duel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Duel {
    pub(super) players: [PlayerId; 2],
    pub(super) wizards: [Wizard; 2],
    pub(super) rules: DuelRules,
    pub(super) track: i64,
    pub(super) pools: [Pool; 2],
    pub(super) seals: [Seal; 2],
    pub(super) rounds: Vec<RoundRecord>,
    pub(super) round: Round,
    pub(super) finish: Option<Finish>,
}

/// The track distance that wins (RULES D-1).
pub const WINNING_TRACK: u64 = 30;

impl Duel {
    /// A new duel: `players[0]` challenged `players[1]`; each takes their wizard's pool.
    /// Round 1 begins at `now`.
    pub fn new(
        players: [PlayerId; 2],
        wizards: [Wizard; 2],
        rules: DuelRules,
        now: Timestamp,
    ) -> Result<Duel, DuelError> {
        if players[0] == players[1] {
            return Err(DuelError::SamePlayer(players[0].clone()));
        }
        let pools = [wizards[0].pool, wizards[1].pool];
        Ok(Duel {
            players,
            wizards,
            rules,
            track: 0,
            pools,
            seals: [Seal::none(), Seal::none()],
            rounds: Vec::new(),
            round: Round::new(1, now),
            finish: None,
        })
    }

    /// The two players, challenger first.
    pub fn players(&self) -> &[PlayerId; 2] {
        &self.players
    }
    /// The two wizards, in seat order.
    pub fn wizards(&self) -> &[Wizard; 2] {
        &self.wizards
    }
    /// The rules in force.
    pub fn rules(&self) -> &DuelRules {
        &self.rules
    }
    /// The victory track, positive toward `players[0]`.
    pub fn track(&self) -> i64 {
        self.track
    }
    /// The two pools, in seat order.
    pub fn pools(&self) -> &[Pool; 2] {
        &self.pools
    }
    /// `seals()[p]` limits seat p's spell this round.
    pub fn seals(&self) -> &[Seal; 2] {
        &self.seals
    }
    /// Every settled round.
    pub fn rounds(&self) -> &[RoundRecord] {
        &self.rounds
    }
    /// The round being cast.
    pub fn round(&self) -> &Round {
        &self.round
    }
    /// How the duel ended, once it has.
    pub fn finish(&self) -> Option<Finish> {
        self.finish
    }
    /// The seat of `player`, if they play.
    pub fn seat(&self, player: &PlayerId) -> Option<usize> {
        self.players.iter().position(|p| p == player)
    }

    /// When the current step times out (RULES D-9); None once the duel is over.
    pub fn next_timer(&self) -> Option<Timestamp> {
        if self.finish.is_some() {
            return None;
        }
        Some(self.round.step_started.plus(self.rules.step_timeout_secs))
    }

    /// `winner alice`, `a draw` or `stopped, no winner`, for messages.
    pub fn result_text(&self) -> String {
        match self.finish {
            Some(Finish { reason: FinishReason::Stopped, .. }) => "stopped, no winner".to_owned(),
            Some(Finish { winner: Some(seat), .. }) => format!("winner {}", self.players[seat]),
            Some(Finish { winner: None, .. }) => "a draw".to_owned(),
            None => "not finished".to_owned(),
        }
    }

    /// Applies a command by `actor`, whom the daemon judged to have `role` (only a
    /// room operator, game master or bot admin may `!stop` a duel, player or not). Every
    /// check comes before any change: on `Err` the duel is unchanged. `dice` rolls any
    /// concentration checks the command's steps need.
    pub fn apply(
        &mut self,
        actor: &PlayerId,
        role: Role,
        command: &DuelCommand,
        now: Timestamp,
        dice: &mut Dice,
    ) -> Result<Vec<DuelEvent>, DuelError> {
        // Anyone may ask, during the duel or after it (how did it end?).
        if let DuelCommand::Status = command {
            return Ok(vec![DuelEvent::Status { asker: actor.clone() }]);
        }
        if self.finish.is_some() {
            return Err(DuelError::Over { result: self.result_text() });
        }
        let seat = || {
            self.seat(actor)
                .ok_or_else(|| DuelError::NotAPlayer { actor: actor.clone(), players: self.players.clone() })
        };
        match command {
            DuelCommand::Status => Ok(vec![DuelEvent::Status { asker: actor.clone() }]),
            // Decision: a player of the duel has no say in `!stop` (they `!concede`); the
            // room's operators, game masters and bot admins have, seated or not.
            DuelCommand::Stop => {
                if role == Role::Player {
                    return Err(DuelError::MayNotStop { actor: actor.clone() });
                }
                self.finish = Some(Finish { winner: None, reason: FinishReason::Stopped });
                Ok(vec![DuelEvent::Stopped { by: actor.clone() }])
            }
            DuelCommand::Concede => {
                let finish = Finish { winner: Some(1 - seat()?), reason: FinishReason::Conceded };
                self.finish = Some(finish);
                Ok(vec![DuelEvent::Finished(finish)])
            }
            DuelCommand::Cast(tokens) => {
                let seat = seat()?;
                let caster = &self.round.casters[seat];
                caster.validate(tokens, &self.pools[seat], &self.seals[seat])?;
                // Checked: from here on nothing can fail.
                let caster = &mut self.round.casters[seat];
                caster.queue.extend(tokens.iter().copied());
                caster.acted = true;
                let mut events =
                    vec![DuelEvent::Queued { seat, round: self.round.number, spell: caster.whole_spell() }];
                self.advance(now, dice, [false, false], &mut events);
                Ok(events)
            }
        }
    }

    /// Fires the step timeout due at `at` (RULES D-9): whoever is not ready places the
    /// harmonize marker (Power Surge at step 0), then the step resolves as usual. Does
    /// nothing before the deadline or after the duel ended.
    pub fn fire_timer(&mut self, at: Timestamp, dice: &mut Dice) -> Vec<DuelEvent> {
        let mut events = Vec::new();
        match self.next_timer() {
            Some(deadline) if at >= deadline => {}
            _ => return events,
        }
        let mut timed_out = [false, false];
        let mut dropped: [Vec<Token>; 2] = [Vec::new(), Vec::new()];
        for seat in 0..2 {
            let caster = &mut self.round.casters[seat];
            if !caster.is_ready() {
                dropped[seat] = caster.time_out();
                timed_out[seat] = true;
            }
        }
        let first = events.len();
        self.advance(at, dice, timed_out, &mut events);
        // The dangling Overspeed a timeout dropped belongs to the first step it resolved.
        if let Some(DuelEvent::Step { placements, .. }) = events.get_mut(first) {
            for (placement, dropped) in placements.iter_mut().zip(dropped) {
                placement.dropped.extend(dropped);
            }
        }
        events
    }

    /// Resolves every step that is ready, settling rounds whose spells are complete.
    fn advance(
        &mut self,
        now: Timestamp,
        dice: &mut Dice,
        mut timed_out: [bool; 2],
        events: &mut Vec<DuelEvent>,
    ) {
        while self.finish.is_none() {
            if self.round.casters.iter().all(Caster::is_complete) {
                self.settle(now, events);
                continue;
            }
            if !self.round.casters.iter().all(Caster::is_ready) {
                break;
            }
            self.resolve_step(now, dice, timed_out, events);
            timed_out = [false, false];
        }
    }

    /// Places both seats' next units, rolling a concentration check for an element
    /// placed while the other spell is complete.
    fn resolve_step(
        &mut self,
        now: Timestamp,
        dice: &mut Dice,
        timed_out: [bool; 2],
        events: &mut Vec<DuelEvent>,
    ) {
        let complete_before = [self.round.casters[0].is_complete(), self.round.casters[1].is_complete()];
        let units = [self.round.casters[0].take_unit(), self.round.casters[1].take_unit()];
        let ends_now = units.map(|u| u == Some(Unit::End));
        let mut placements = [Placement::default(), Placement::default()];
        for me in 0..2 {
            let Some(unit) = units[me] else { continue };
            let them = 1 - me;
            let placement = &mut placements[me];
            placement.timed_out = timed_out[me];
            placement.tokens = unit.tokens();
            let element = match unit {
                Unit::Preconditioning(p) => {
                    self.round.casters[me].preconditioning = Some(p);
                    continue;
                }
                Unit::End => {
                    self.round.casters[me].state = SpellState::Harmonized;
                    continue;
                }
                Unit::Overspeed(e) => {
                    self.round.casters[me].preconditioning = Some(Preconditioning::Overspeed);
                    e
                }
                Unit::Element(e) => e,
            };
            // RULES D-4: the element leaves the pool when placed, kept or not.
            let taken = self.pools[me].take(element);
            debug_assert!(taken, "validation keeps queued elements within the pool");
            let caster = &mut self.round.casters[me];
            if complete_before[them] || ends_now[them] {
                let k = caster.checks.len().saturating_add(1);
                let focused = caster.preconditioning == Some(Preconditioning::Focus);
                let need = self.rules.need(focused, k);
                let roll = dice.d6();
                if self.round.seeds.last() != Some(&dice.seed()) {
                    self.round.seeds.push(dice.seed());
                }
                let check = Check { roll, need, passed: roll >= need };
                caster.checks.push(check);
                placement.check = Some(check);
                if !check.passed {
                    caster.state = SpellState::Interrupted;
                    caster.discarded = Some(element);
                    placement.interrupted = true;
                    placement.dropped = caster.queue.drain(..).collect();
                    continue;
                }
            }
            caster.elements.push(element);
        }
        events.push(DuelEvent::Step { round: self.round.number, step: self.round.step, placements });
        self.round.step = self.round.step.saturating_add(1);
        self.round.step_started = now;
    }

    /// Settles the round, moves the track, lays the seals, decides the end (RULES D-1,
    /// D-2) or begins the next round.
    fn settle(&mut self, now: Timestamp, events: &mut Vec<DuelEvent>) {
        let casters = &self.round.casters;
        let spells = [casters[0].spell(), casters[1].spell()];
        let outcomes = settle([&spells[0], &spells[1]], [&self.wizards[0], &self.wizards[1]]);
        let power = |o: &SpellOutcome| i64::try_from(o.power).unwrap_or(i64::MAX);
        self.track = self.track.saturating_add(power(&outcomes[0]).saturating_sub(power(&outcomes[1])));
        // Each spell's seal limits the other wizard's next spell.
        self.seals = [outcomes[1].seal.clone(), outcomes[0].seal.clone()];
        let idle = casters.iter().all(|c| !c.acted);
        let [first, second] = outcomes;
        let record = |seat: usize, outcome: SpellOutcome| SpellRecord {
            tokens: spells[seat].tokens(),
            checks: casters[seat].checks.clone(),
            interrupted: casters[seat].state == SpellState::Interrupted,
            discarded: casters[seat].discarded,
            timeouts: casters[seat].timeouts,
            outcome,
        };
        let number = self.round.number;
        self.rounds.push(RoundRecord {
            number,
            spells: [record(0, first), record(1, second)],
            track_after: self.track,
            seeds: std::mem::take(&mut self.round.seeds),
        });
        events.push(DuelEvent::Settled { round: number });

        let by_track = match self.track {
            t if t > 0 => Some(0),
            t if t < 0 => Some(1),
            _ => None,
        };
        let reason = if self.track.unsigned_abs() >= WINNING_TRACK {
            Some(FinishReason::Track)
        } else if self.pools.iter().any(Pool::is_empty) {
            Some(FinishReason::PoolEmpty)
        } else if idle && self.rules.end_when_idle {
            Some(FinishReason::Abandoned)
        } else {
            None
        };
        if let Some(reason) = reason {
            let finish = Finish { winner: by_track, reason };
            self.finish = Some(finish);
            events.push(DuelEvent::Finished(finish));
        } else {
            self.round = Round::new(number.saturating_add(1), now);
            let deadline = now.plus(self.rules.step_timeout_secs);
            events.push(DuelEvent::RoundStarted { round: self.round.number, deadline });
        }
    }
}
