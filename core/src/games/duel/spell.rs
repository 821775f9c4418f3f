//! A spell as cast (its pre-conditioning and the elements that were placed) and the
//! pure measures the settlement takes of it: level, attribute, the seal it lays
//! (RULES D-10) and its explosion bonus (RULES D-12).
//!
//! After Void removals a spell is a row of *slots*: `Some(element)` or `None` for a gap
//! left by a removed token (RULES D-11).

use serde::{Deserialize, Serialize};

use super::element::Element;
use super::token::{Preconditioning, Token};

/// A spell as cast: after an interrupted element is discarded, before Void removals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spell {
    /// Its one pre-conditioning.
    pub preconditioning: Preconditioning,
    /// The elements placed, in order (position 0 first).
    pub elements: Vec<Element>,
}

impl Spell {
    /// A spell of these parts.
    pub fn new(preconditioning: Preconditioning, elements: Vec<Element>) -> Spell {
        Spell { preconditioning, elements }
    }

    /// The level as cast: how many base elements (Void does not count).
    pub fn level(&self) -> u32 {
        count_base(self.elements.iter().copied())
    }

    /// The tokens as the snapshot lists them: the pre-conditioning, then the elements.
    pub fn tokens(&self) -> Vec<Token> {
        std::iter::once(Token::Preconditioning(self.preconditioning))
            .chain(self.elements.iter().map(|e| Token::Element(*e)))
            .collect()
    }

    /// The slots before any removal.
    pub fn slots(&self) -> Vec<Option<Element>> {
        self.elements.iter().map(|e| Some(*e)).collect()
    }

    /// The seal this spell lays on the opponent's next spell (RULES D-10).
    pub fn seal(&self) -> Seal {
        Seal::of(&self.elements)
    }
}

fn count_base(elements: impl Iterator<Item = Element>) -> u32 {
    let count = elements.filter(|e| e.is_base()).count();
    u32::try_from(count).unwrap_or(u32::MAX)
}

/// The level of a spell after removals: its remaining base elements.
pub fn level_of(slots: &[Option<Element>]) -> u32 {
    count_base(slots.iter().flatten().copied())
}

/// The attribute of a spell after removals: the base element(s) with the highest count,
/// when that count is at least 2; ties give several (circle order). Empty otherwise.
pub fn attribute_of(slots: &[Option<Element>]) -> Vec<Element> {
    let counts = Element::BASE.map(|e| slots.iter().filter(|s| **s == Some(e)).count());
    let best = counts.iter().copied().max().unwrap_or(0);
    if best < 2 {
        return Vec::new();
    }
    Element::BASE.iter().zip(counts).filter(|(_, c)| *c == best).map(|(e, _)| *e).collect()
}

/// The explosion bonus (RULES D-12): the slots split at every Void, every gap, and every
/// element equal to the one before it; each piece of length L ≥ 3 adds L².
pub fn explosion(slots: &[Option<Element>]) -> u64 {
    let mut bonus: u64 = 0;
    let mut run: u64 = 0;
    let mut previous: Option<Element> = None;
    let mut close = |run: u64| {
        if run >= 3 {
            bonus = bonus.saturating_add(run.saturating_mul(run));
        }
    };
    for slot in slots {
        match slot {
            Some(e) if e.is_base() => {
                if previous == Some(*e) {
                    close(run);
                    run = 0;
                }
                run += 1;
                previous = Some(*e);
            }
            // A Void or a gap ends the piece and starts nothing.
            _ => {
                close(run);
                run = 0;
                previous = None;
            }
        }
    }
    close(run);
    bonus
}

/// What limits a wizard's next spell (RULES D-10): no element of `elements` in its first
/// `positions` element positions (counted from 0, Voids included).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seal {
    /// How many leading element positions are sealed (P).
    pub positions: u32,
    /// The sealed elements, in circle order.
    pub elements: Vec<Element>,
}

impl Seal {
    /// No seal.
    pub fn none() -> Seal {
        Seal::default()
    }

    /// True when nothing is sealed.
    pub fn is_none(&self) -> bool {
        self.positions == 0 || self.elements.is_empty()
    }

    /// The seal laid by a spell's elements as cast: each run of k ≥ 2 identical
    /// consecutive base elements seals that element's two circle neighbours and adds
    /// k − 1 positions.
    pub fn of(elements: &[Element]) -> Seal {
        let mut positions: u32 = 0;
        let mut sealed = [false; 5];
        for pair in elements.windows(2) {
            if pair[0] == pair[1] && pair[0].is_base() {
                positions = positions.saturating_add(1);
                for n in pair[0].neighbours().into_iter().flatten() {
                    if let Some(place) = Element::BASE.iter().position(|b| *b == n) {
                        sealed[place] = true;
                    }
                }
            }
        }
        let elements = Element::BASE.iter().zip(sealed).filter(|(_, s)| *s).map(|(e, _)| *e).collect();
        Seal { positions, elements }
    }

    /// True when `element` may not be evoked at element position `position`.
    pub fn forbids(&self, position: u32, element: Element) -> bool {
        position < self.positions && self.elements.contains(&element)
    }
}

#[cfg(test)]
mod tests {
    use super::Element::*;
    use super::*;

    fn slots(elements: &[Element]) -> Vec<Option<Element>> {
        elements.iter().map(|e| Some(*e)).collect()
    }

    #[test]
    fn d10_runs_seal_neighbours_for_p_positions() {
        // RULES D-10, the seed's three examples.
        assert_eq!(Seal::of(&[Fire, Fire]), Seal { positions: 1, elements: vec![Water, Thunder] });
        assert_eq!(Seal::of(&[Water, Water, Water]), Seal { positions: 2, elements: vec![Fire, Earth] });
        assert_eq!(
            Seal::of(&[Wind, Wind, Water, Water]),
            Seal { positions: 2, elements: vec![Fire, Thunder, Earth] }
        );
    }

    #[test]
    fn d10_no_run_no_seal_and_positions_limit_the_seal() {
        // RULES D-10
        assert!(Seal::of(&[Fire, Wind, Fire]).is_none());
        let seal = Seal::of(&[Fire, Fire]);
        assert!(seal.forbids(0, Water));
        assert!(!seal.forbids(1, Water));
        assert!(!seal.forbids(0, Wind));
    }

    #[test]
    fn level_counts_base_elements_only() {
        let spell = Spell::new(Preconditioning::Surge, vec![Fire, Void, Wind]);
        assert_eq!(spell.level(), 2);
        assert_eq!(level_of(&[Some(Fire), None, Some(Void)]), 1);
    }

    #[test]
    fn attribute_needs_a_count_of_two_and_ties_give_several() {
        assert_eq!(attribute_of(&slots(&[Fire, Wind])), vec![]);
        assert_eq!(attribute_of(&slots(&[Fire, Fire, Wind])), vec![Fire]);
        assert_eq!(attribute_of(&slots(&[Wind, Wind, Water, Water])), vec![Water, Wind]);
        assert_eq!(attribute_of(&[Some(Fire), None, Some(Fire), Some(Void), Some(Void)]), vec![Fire]);
    }

    #[test]
    fn d12_explosion_seed_examples() {
        // RULES D-12: base power level² plus the explosion bonus.
        let a = slots(&[Fire, Wind, Water, Thunder]);
        assert_eq!(u64::from(level_of(&a).pow(2)) + explosion(&a), 32);
        let b = slots(&[Fire, Wind, Water, Water, Thunder, Earth]);
        assert_eq!(explosion(&b), 18);
        assert_eq!(u64::from(level_of(&b).pow(2)) + explosion(&b), 54);
        let c = slots(&[Fire, Wind, Water, Void, Thunder, Earth]);
        assert_eq!(explosion(&c), 9);
        assert_eq!(u64::from(level_of(&c).pow(2)) + explosion(&c), 34);
    }

    #[test]
    fn d11_a_gap_breaks_a_piece() {
        // RULES D-11: tokens either side of a gap are not consecutive.
        assert_eq!(explosion(&[Some(Fire), Some(Wind), None, Some(Water), Some(Thunder)]), 0);
        assert_eq!(explosion(&[Some(Fire), Some(Wind), Some(Water), None, Some(Thunder)]), 9);
    }
}
