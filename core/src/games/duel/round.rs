//! The casting phase of one round, seen from one wizard: what they have placed, what is
//! queued, whether the spell is complete, their concentration checks — and the
//! validation of new `!cast` tokens against all of that before anything is queued.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::element::{Element, conflicts};
use super::error::DuelError;
use super::spell::{Seal, Spell};
use super::token::{Preconditioning, Token};
use super::wizard::Pool;
use crate::time::Timestamp;

/// Where a wizard's spell stands this round.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpellState {
    /// Still being cast.
    #[default]
    Casting,
    /// Ended with the harmonize marker (placed or by timeout).
    Harmonized,
    /// Ended by a failed concentration check.
    Interrupted,
}

/// One concentration check: a d6 roll against the sequence's minimum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    /// The d6 rolled.
    pub roll: u8,
    /// The minimum roll that passes.
    pub need: u8,
    /// roll ≥ need.
    pub passed: bool,
}

/// What a wizard places at one step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Step 0: a pre-conditioning other than Overspeed.
    Preconditioning(Preconditioning),
    /// Step 0 with Overspeed: the marker and the first element together.
    Overspeed(Element),
    /// A later step: one element.
    Element(Element),
    /// The harmonize marker.
    End,
}

impl Unit {
    /// The tokens this unit places.
    pub fn tokens(self) -> Vec<Token> {
        match self {
            Unit::Preconditioning(p) => vec![Token::Preconditioning(p)],
            Unit::Overspeed(e) => {
                vec![Token::Preconditioning(Preconditioning::Overspeed), Token::Element(e)]
            }
            Unit::Element(e) => vec![Token::Element(e)],
            Unit::End => vec![Token::End],
        }
    }
}

/// One wizard's casting this round.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Caster {
    /// The pre-conditioning, once placed.
    pub preconditioning: Option<Preconditioning>,
    /// The elements placed so far (an interrupted element is not among them).
    pub elements: Vec<Element>,
    /// Casting, harmonized or interrupted.
    pub state: SpellState,
    /// Tokens queued by `!cast` and not placed yet.
    pub queue: VecDeque<Token>,
    /// The concentration checks made this round, in order.
    pub checks: Vec<Check>,
    /// The element discarded by a failed check (it was still spent, RULES D-4).
    pub discarded: Option<Element>,
    /// True once the wizard queued any token themself this round.
    pub acted: bool,
    /// How many of this round's steps the wizard timed out on (RULES D-9).
    pub timeouts: u32,
}

impl Caster {
    /// True when the spell has ended (harmonized or interrupted).
    pub fn is_complete(&self) -> bool {
        self.state != SpellState::Casting
    }

    /// What the wizard would place at the current step, if their queue has it.
    pub fn next_unit(&self) -> Option<Unit> {
        if self.is_complete() {
            return None;
        }
        match (self.preconditioning, self.queue.front()) {
            (None, Some(Token::Preconditioning(Preconditioning::Overspeed))) => match self.queue.get(1) {
                Some(Token::Element(e)) => Some(Unit::Overspeed(*e)),
                _ => None,
            },
            (None, Some(Token::Preconditioning(p))) => Some(Unit::Preconditioning(*p)),
            (Some(_), Some(Token::Element(e))) => Some(Unit::Element(*e)),
            (Some(_), Some(Token::End)) => Some(Unit::End),
            _ => None,
        }
    }

    /// True when the current step need not wait for this wizard.
    pub fn is_ready(&self) -> bool {
        self.is_complete() || self.next_unit().is_some()
    }

    /// Takes the next unit off the queue (the caller places it).
    pub fn take_unit(&mut self) -> Option<Unit> {
        let unit = self.next_unit()?;
        let n = if matches!(unit, Unit::Overspeed(_)) { 2 } else { 1 };
        self.queue.drain(..n);
        Some(unit)
    }

    /// RULES D-9: a wizard who has not placed a token in time places the harmonize
    /// marker, or at step 0 Power Surge (a lone queued Overspeed is dropped). Returns the
    /// tokens dropped from the queue.
    pub fn time_out(&mut self) -> Vec<Token> {
        let dropped: Vec<Token> = self.queue.drain(..).collect();
        let token = if self.preconditioning.is_none() {
            Token::Preconditioning(Preconditioning::Surge)
        } else {
            Token::End
        };
        self.queue.push_back(token);
        self.timeouts = self.timeouts.saturating_add(1);
        dropped
    }

    /// The spell as cast so far (Power Surge stands in for a pre-conditioning not yet
    /// placed, which a complete spell always has).
    pub fn spell(&self) -> Spell {
        Spell::new(self.preconditioning.unwrap_or(Preconditioning::Surge), self.elements.clone())
    }

    /// Everything placed and queued, in order (for the private acknowledgement).
    pub fn whole_spell(&self) -> Vec<Token> {
        self.preconditioning
            .map(Token::Preconditioning)
            .into_iter()
            .chain(self.elements.iter().map(|e| Token::Element(*e)))
            .chain(self.queue.iter().copied())
            .collect()
    }

    /// Checks `new` tokens as if appended to this round's spell (placed, then queued,
    /// then new), against the pool and the seal in force. Nothing changes either way.
    pub fn validate(&self, new: &[Token], pool: &Pool, seal: &Seal) -> Result<(), DuelError> {
        match self.state {
            SpellState::Casting => {}
            SpellState::Harmonized => return Err(DuelError::SpellComplete { interrupted: false }),
            SpellState::Interrupted => return Err(DuelError::SpellComplete { interrupted: true }),
        }
        if new.is_empty() {
            return Err(DuelError::NoTokens);
        }
        let mut draft = Draft {
            preconditioning: self.preconditioning,
            last: self
                .elements
                .last()
                .map(|e| Token::Element(*e))
                .or(self.preconditioning.map(Token::Preconditioning)),
            position: u32::try_from(self.elements.len()).unwrap_or(u32::MAX),
            queued: [0; 6],
            ended: false,
        };
        for token in &self.queue {
            draft.push(*token, pool, seal)?;
        }
        for (i, token) in new.iter().enumerate() {
            if draft.ended {
                return Err(DuelError::AfterEnd { extra: new[i..].to_vec() });
            }
            draft.push(*token, pool, seal)?;
        }
        Ok(())
    }
}

/// The spell being checked, token by token.
struct Draft {
    preconditioning: Option<Preconditioning>,
    last: Option<Token>,
    position: u32,
    queued: [u32; 6],
    ended: bool,
}

impl Draft {
    fn push(&mut self, token: Token, pool: &Pool, seal: &Seal) -> Result<(), DuelError> {
        match (self.preconditioning, token) {
            (None, Token::Preconditioning(p)) => self.preconditioning = Some(p),
            (Some(first), Token::Preconditioning(second)) => {
                return Err(DuelError::SecondPreconditioning { first, second });
            }
            (None, token) => return Err(DuelError::MissingPreconditioning { token }),
            (Some(_), Token::End) => {
                if self.last == Some(Token::Preconditioning(Preconditioning::Overspeed)) {
                    return Err(DuelError::OverspeedNeedsElement);
                }
                self.ended = true;
            }
            (Some(_), Token::Element(element)) => {
                if let Some(Token::Element(before)) = self.last
                    && conflicts(before, element)
                {
                    return Err(DuelError::Conflict { before, element, position: self.position });
                }
                if seal.forbids(self.position, element) {
                    return Err(DuelError::Sealed { element, position: self.position, seal: seal.clone() });
                }
                let index = Element::ALL.iter().position(|e| *e == element).unwrap_or(0);
                let in_pool = pool.get(element);
                if self.queued[index] >= in_pool {
                    return Err(DuelError::PoolEmpty { element, in_pool, queued: self.queued[index] });
                }
                self.queued[index] += 1;
                self.position = self.position.saturating_add(1);
            }
        }
        self.last = Some(token);
        Ok(())
    }
}

/// The casting phase of the current round.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Round {
    /// Round number, from 1.
    pub number: u32,
    /// The current step, from 0 (the pre-conditioning step).
    pub step: u32,
    /// When the current step began (the round's start or the previous step's resolution).
    pub step_started: Timestamp,
    /// The two wizards' casting, in seat order.
    pub casters: [Caster; 2],
    /// The seed of every action that rolled concentration checks this round (RULES T-10).
    pub seeds: Vec<u64>,
}

impl Round {
    /// Round `number`, starting at `now`.
    pub fn new(number: u32, now: Timestamp) -> Round {
        Round { number, step: 0, step_started: now, casters: Default::default(), seeds: Vec::new() }
    }
}

#[cfg(test)]
mod tests {
    use super::Element::*;
    use super::*;
    use crate::games::duel::token::parse_tokens;

    fn tokens(text: &str) -> Vec<Token> {
        parse_tokens(text).expect("valid tokens")
    }

    fn check(caster: &Caster, text: &str) -> Result<(), DuelError> {
        caster.validate(&tokens(text), &Pool::even(8, 4), &Seal::none())
    }

    fn queued(text: &str) -> Caster {
        Caster { queue: tokens(text).into(), ..Caster::default() }
    }

    #[test]
    fn a_whole_spell_validates() {
        assert_eq!(check(&Caster::default(), "surge fire wind end"), Ok(()));
        assert_eq!(check(&Caster::default(), "overspeed"), Ok(()), "a lone Overspeed waits for its element");
        assert_eq!(check(&queued("overspeed"), "fire end"), Ok(()));
    }

    #[test]
    fn the_spell_must_start_with_one_preconditioning() {
        assert_eq!(
            check(&Caster::default(), "fire"),
            Err(DuelError::MissingPreconditioning { token: Token::Element(Fire) })
        );
        assert_eq!(
            check(&queued("surge fire"), "focus"),
            Err(DuelError::SecondPreconditioning {
                first: Preconditioning::Surge,
                second: Preconditioning::Focus
            })
        );
    }

    #[test]
    fn overspeed_cannot_be_followed_by_end() {
        assert_eq!(check(&Caster::default(), "overspeed end"), Err(DuelError::OverspeedNeedsElement));
        assert_eq!(check(&queued("overspeed"), "end"), Err(DuelError::OverspeedNeedsElement));
    }

    #[test]
    fn d3_conflicts_are_checked_across_placed_queued_and_new_tokens() {
        // RULES D-3
        let placed = Caster {
            preconditioning: Some(Preconditioning::Surge),
            elements: vec![Water],
            ..Caster::default()
        };
        assert_eq!(
            check(&placed, "fire"),
            Err(DuelError::Conflict { before: Water, element: Fire, position: 1 })
        );
        assert_eq!(
            check(&queued("surge void"), "void"),
            Err(DuelError::Conflict { before: Void, element: Void, position: 1 })
        );
        assert_eq!(check(&placed, "wind"), Ok(()));
    }

    #[test]
    fn d10_sealed_elements_are_refused_in_the_first_p_positions() {
        // RULES D-10
        let seal = Seal { positions: 2, elements: vec![Fire, Earth] };
        let pool = Pool::even(8, 4);
        assert!(matches!(
            Caster::default().validate(&tokens("surge wind fire"), &pool, &seal),
            Err(DuelError::Sealed { element: Fire, position: 1, .. })
        ));
        assert!(
            matches!(
                Caster::default().validate(&tokens("surge void earth"), &pool, &seal),
                Err(DuelError::Sealed { element: Earth, position: 1, .. })
            ),
            "Void counts as a position"
        );
        assert_eq!(Caster::default().validate(&tokens("surge wind wind fire"), &pool, &seal), Ok(()));
    }

    #[test]
    fn d4_the_pool_counts_queued_elements() {
        // RULES D-4
        let pool = Pool { fire: 1, ..Pool::default() };
        let caster = queued("surge fire");
        assert_eq!(
            caster.validate(&tokens("wind"), &pool, &Seal::none()),
            Err(DuelError::PoolEmpty { element: Wind, in_pool: 0, queued: 0 })
        );
        assert_eq!(
            caster.validate(&tokens("fire"), &pool, &Seal::none()),
            Err(DuelError::PoolEmpty { element: Fire, in_pool: 1, queued: 1 })
        );
    }

    #[test]
    fn nothing_follows_end_or_a_complete_spell() {
        assert_eq!(
            check(&Caster::default(), "surge fire end wind"),
            Err(DuelError::AfterEnd { extra: vec![Token::Element(Wind)] })
        );
        assert_eq!(
            check(&queued("surge end"), "wind"),
            Err(DuelError::AfterEnd { extra: vec![Token::Element(Wind)] })
        );
        let done = Caster { state: SpellState::Interrupted, ..Caster::default() };
        assert_eq!(check(&done, "end"), Err(DuelError::SpellComplete { interrupted: true }));
    }

    #[test]
    fn units_come_off_the_queue_one_step_at_a_time() {
        let mut caster = queued("overspeed fire wind end");
        assert_eq!(caster.take_unit(), Some(Unit::Overspeed(Fire)));
        caster.preconditioning = Some(Preconditioning::Overspeed);
        assert_eq!(caster.take_unit(), Some(Unit::Element(Wind)));
        assert_eq!(caster.take_unit(), Some(Unit::End));
        assert_eq!(caster.take_unit(), None);
        assert!(!queued("overspeed").is_ready());
    }

    #[test]
    fn d9_timing_out_places_surge_at_step_0_and_end_later() {
        // RULES D-9
        let mut lone = queued("overspeed");
        assert_eq!(lone.time_out(), tokens("overspeed"));
        assert_eq!(lone.next_unit(), Some(Unit::Preconditioning(Preconditioning::Surge)));
        let mut later = Caster { preconditioning: Some(Preconditioning::Focus), ..Caster::default() };
        later.time_out();
        assert_eq!(later.next_unit(), Some(Unit::End));
        assert_eq!(later.timeouts, 1);
    }
}
