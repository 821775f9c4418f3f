//! The settlement of a round as one pure function of the two spells as cast and the two
//! wizards, in the order RULES gives:
//!
//! 0. Full Counter (RULES D-7, checked on the spells as cast, before the stages);
//! 1. Seal (RULES D-10, on the spells as cast);
//! 2. Void removals (RULES D-11);
//! 3. Burst: level² after removals, then Power Surge or the Full Counter doubling;
//! 4. Explosion (RULES D-12);
//!
//! then the attribute (after removals) and the wizards' favour bonuses (RULES D-13).

use serde::{Deserialize, Serialize};

use super::element::{Element, opposite};
use super::spell::{Seal, Spell, attribute_of, explosion, level_of};
use super::token::Preconditioning;
use super::wizard::Wizard;

/// How one spell fared in the settlement.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpellOutcome {
    /// The opponent's Full Counter succeeded: this spell counts as not cast.
    pub countered: bool,
    /// This spell was a Full Counter and it succeeded.
    pub counter_succeeded: bool,
    /// Element positions of this spell removed by the opponent's Voids (RULES D-11).
    pub removed: Vec<u32>,
    /// The level after removals (0 when countered).
    pub level: u32,
    /// level².
    pub base: u64,
    /// What Power Surge added (⌊base / 2⌋), or the Full Counter doubling added (base).
    pub boost: u64,
    /// The explosion bonus (RULES D-12).
    pub explosion: u64,
    /// The attribute after removals.
    pub attribute: Vec<Element>,
    /// The wizard's favour bonus (RULES D-13).
    pub favour: u64,
    /// base + boost + explosion + favour; 0 when countered.
    pub power: u64,
    /// The seal this spell lays on the opponent's next spell (none when countered).
    pub seal: Seal,
}

/// Why a Full Counter failed (the first reason, in the order RULES D-7 gives them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CounterFailure {
    /// The counter's level is below its target's (RULES D-7).
    Level {
        /// The counter's level as cast.
        counter: u32,
        /// The target's level as cast.
        target: u32,
    },
    /// At an element position of the target the counter has no opposite element (RULES D-6).
    NotOpposite {
        /// The element position, from 0.
        position: usize,
        /// The counter's element there, if it has one.
        counter: Option<Element>,
        /// The target's element there.
        target: Element,
    },
}

/// Why `caster`'s Full Counter fails against `target`, or None when it succeeds (RULES
/// D-7 with D-6: the caster's level is at least the target's and at every element
/// position of the target the caster has an opposite element). None, too, when
/// `caster` is no Full Counter.
pub fn counter_failure(caster: &Spell, target: &Spell) -> Option<CounterFailure> {
    if caster.preconditioning != Preconditioning::Counter {
        return None;
    }
    if caster.level() < target.level() {
        return Some(CounterFailure::Level { counter: caster.level(), target: target.level() });
    }
    target.elements.iter().enumerate().find_map(|(position, t)| {
        let counter = caster.elements.get(position).copied();
        (!counter.is_some_and(|c| opposite(c, *t))).then_some(CounterFailure::NotOpposite {
            position,
            counter,
            target: *t,
        })
    })
}

/// True when `caster`'s Full Counter succeeds against `target` (RULES D-7 with D-6; see
/// [`counter_failure`]).
pub fn counter_succeeds(caster: &Spell, target: &Spell) -> bool {
    caster.preconditioning == Preconditioning::Counter && counter_failure(caster, target).is_none()
}

/// Settles a round: `spells[i]` was cast by the wizard `wizards[i]`.
pub fn settle(spells: [&Spell; 2], wizards: [&Wizard; 2]) -> [SpellOutcome; 2] {
    // RULES D-7: Full Counter first, on the spells as cast.
    let succeeded = [counter_succeeds(spells[0], spells[1]), counter_succeeds(spells[1], spells[0])];
    // Decision (RULES D-7 is silent): when both Full Counters succeed (equal levels, every
    // position opposite both ways) each cancels the other, so both spells count as not
    // cast and both powers are 0; neither caster's doubling applies.
    let countered = [succeeded[1], succeeded[0]];

    // Stage 2, Void (RULES D-11): the opponent's Voids remove this spell's tokens at the
    // same positions, leaving gaps; a countered spell's Voids have no effect. Both sides
    // are read from the spells as cast, so Void against Void removes both.
    let mut slots = [spells[0].slots(), spells[1].slots()];
    let mut removed: [Vec<u32>; 2] = [Vec::new(), Vec::new()];
    for me in 0..2 {
        let them = 1 - me;
        if countered[them] {
            continue;
        }
        for (position, element) in spells[them].elements.iter().enumerate() {
            if *element == Element::Void
                && let Some(slot) = slots[me].get_mut(position)
            {
                *slot = None;
                removed[me].push(u32::try_from(position).unwrap_or(u32::MAX));
            }
        }
    }

    [0, 1].map(|me| {
        let them = 1 - me;
        if countered[me] {
            return SpellOutcome { countered: true, ..SpellOutcome::default() };
        }
        let spell = spells[me];
        // Stage 1, Seal (RULES D-10), on the spell as cast.
        let seal = spell.seal();
        // Stage 3, Burst.
        let level = level_of(&slots[me]);
        let base = u64::from(level).saturating_mul(u64::from(level));
        let doubled = succeeded[me] && spell.level() == spells[them].level();
        let boost = match spell.preconditioning {
            Preconditioning::Surge => base / 2,
            Preconditioning::Counter if doubled => base,
            _ => 0,
        };
        // Stage 4, Explosion.
        let explosion = explosion(&slots[me]);
        let attribute = attribute_of(&slots[me]);
        let favour = wizards[me].favour_bonus(&attribute);
        let power = base.saturating_add(boost).saturating_add(explosion).saturating_add(favour);
        SpellOutcome {
            countered: false,
            counter_succeeded: succeeded[me],
            removed: std::mem::take(&mut removed[me]),
            level,
            base,
            boost,
            explosion,
            attribute,
            favour,
            power,
            seal,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::Element::*;
    use super::Preconditioning::*;
    use super::*;
    use crate::games::duel::wizard::Favour;

    fn spell(pre: Preconditioning, elements: &[Element]) -> Spell {
        Spell::new(pre, elements.to_vec())
    }

    fn apprentices(a: &Spell, b: &Spell) -> [SpellOutcome; 2] {
        let w = Wizard::apprentice();
        settle([a, b], [&w, &w])
    }

    #[test]
    fn seed_examples_settle_to_32_54_and_34() {
        // RULES D-12 seed examples, against an empty Focus spell.
        let nothing = spell(Focus, &[]);
        for (elements, power) in [
            (&[Fire, Wind, Water, Thunder][..], 32),
            (&[Fire, Wind, Water, Water, Thunder, Earth][..], 54),
            (&[Fire, Wind, Water, Void, Thunder, Earth][..], 34),
        ] {
            let [out, _] = apprentices(&spell(Focus, elements), &nothing);
            assert_eq!(out.power, power, "{elements:?}");
        }
    }

    #[test]
    fn surge_adds_half_the_base_rounded_down() {
        let [out, _] = apprentices(&spell(Surge, &[Fire, Wind, Fire]), &spell(Focus, &[]));
        // level 3: base 9 + surge 4 + explosion 9
        assert_eq!((out.base, out.boost, out.explosion, out.power), (9, 4, 9, 22));
        assert_eq!(out.attribute, vec![Fire]);
    }

    #[test]
    fn d7_full_counter_succeeds_on_opposites_and_doubles_at_equal_level() {
        // RULES D-7 with D-6: Water–Fire and Thunder–Wind are opposite.
        let target = spell(Surge, &[Fire, Fire, Wind]);
        let counter = spell(Counter, &[Water, Thunder, Thunder]);
        let [c, t] = apprentices(&counter, &target);
        assert!(c.counter_succeeded && t.countered);
        assert_eq!((t.power, t.seal.clone()), (0, Seal::none()), "countered: no power, no seal");
        // equal level 3: base 9 doubled to 18, no explosion (Thunder Thunder splits), attribute Thunder.
        assert_eq!((c.base, c.boost, c.explosion, c.power), (9, 9, 0, 18));
    }

    #[test]
    fn d7_full_counter_at_a_higher_level_succeeds_without_doubling() {
        // RULES D-7
        let target = spell(Surge, &[Fire]);
        let counter = spell(Counter, &[Water, Wind]);
        let [c, t] = apprentices(&counter, &target);
        assert!(c.counter_succeeded && t.countered);
        assert_eq!((c.base, c.boost, c.power), (4, 0, 4));
    }

    #[test]
    fn d7_full_counter_fails_on_a_lower_level_a_missing_position_or_a_void() {
        // RULES D-7, D-6
        let lower = apprentices(&spell(Counter, &[Water]), &spell(Surge, &[Fire, Fire]));
        assert!(!lower[0].counter_succeeded && !lower[1].countered);
        let not_opposite = apprentices(&spell(Counter, &[Water, Wind]), &spell(Surge, &[Fire, Fire]));
        assert!(!not_opposite[0].counter_succeeded);
        let void = apprentices(&spell(Counter, &[Water, Void]), &spell(Surge, &[Fire, Void]));
        assert!(!void[0].counter_succeeded, "Void is opposite to nothing");
        // A failed counter is an ordinary spell with no boost.
        assert_eq!(lower[0].power, 1);
        // What failed, first by level, then by position (from 0).
        let failure = |c: &[Element], t: &[Element]| counter_failure(&spell(Counter, c), &spell(Surge, t));
        assert_eq!(failure(&[Water], &[Fire, Fire]), Some(CounterFailure::Level { counter: 1, target: 2 }));
        assert_eq!(
            failure(&[Water, Wind], &[Fire, Fire]),
            Some(CounterFailure::NotOpposite { position: 1, counter: Some(Wind), target: Fire })
        );
        assert_eq!(
            failure(&[Water, Void, Wind], &[Fire, Thunder]),
            Some(CounterFailure::NotOpposite { position: 1, counter: Some(Void), target: Thunder })
        );
        assert_eq!(failure(&[Water, Thunder], &[Fire, Wind]), None);
        assert_eq!(counter_failure(&spell(Surge, &[]), &spell(Surge, &[Fire])), None, "no counter");
    }

    #[test]
    fn d7_both_counters_succeeding_cancel_both_spells() {
        // RULES D-7 (decision): both count as not cast.
        let [a, b] = apprentices(&spell(Counter, &[Water, Thunder]), &spell(Counter, &[Fire, Wind]));
        assert!(a.countered && b.countered);
        assert_eq!((a.power, b.power), (0, 0));
    }

    #[test]
    fn d11_void_removes_the_token_opposite_and_voids_remove_each_other() {
        // RULES D-11
        let a = spell(Surge, &[Fire, Void, Wind, Water]);
        let b = spell(Focus, &[Earth, Fire, Void, Water]);
        let [oa, ob] = apprentices(&a, &b);
        assert_eq!(ob.removed, vec![1]);
        assert_eq!(oa.removed, vec![2]);
        // a: Fire Void _ Water → level 2, base 4 + surge 2, no piece ≥ 3.
        assert_eq!((oa.level, oa.power), (2, 6));
        // b: Earth _ Void Water → level 2, base 4.
        assert_eq!((ob.level, ob.power), (2, 4));

        let both = apprentices(&spell(Focus, &[Fire, Void, Fire]), &spell(Focus, &[Wind, Void, Wind]));
        assert_eq!((both[0].removed.clone(), both[1].removed.clone()), (vec![1], vec![1]));
        // Fire _ Fire: the gap splits; level 2, attribute Fire.
        assert_eq!((both[0].level, both[0].explosion, both[0].attribute.clone()), (2, 0, vec![Fire]));
    }

    #[test]
    fn d11_void_beyond_the_opponents_spell_removes_nothing() {
        // RULES D-11
        let [_, ob] = apprentices(&spell(Focus, &[Fire, Wind, Void]), &spell(Focus, &[Fire]));
        assert!(ob.removed.is_empty());
    }

    #[test]
    fn d13_favour_bonus_adds_to_spells_with_that_attribute() {
        // RULES D-13
        let pyro = Wizard { favours: vec![Favour { attribute: Fire, bonus: 3 }], ..Wizard::apprentice() };
        let plain = Wizard::apprentice();
        let fire = spell(Focus, &[Fire, Fire]);
        let [a, _] = settle([&fire, &spell(Focus, &[])], [&pyro, &plain]);
        assert_eq!((a.favour, a.power), (3, 7));
        let wind = spell(Focus, &[Wind, Wind]);
        let [b, _] = settle([&wind, &spell(Focus, &[])], [&pyro, &plain]);
        assert_eq!((b.favour, b.power), (0, 4));
    }

    #[test]
    fn d10_seals_come_from_the_spells_as_cast_even_when_voids_remove_them() {
        // RULES D-10: computed on the spell as cast, before Void removals.
        let [a, _] = apprentices(&spell(Focus, &[Fire, Fire]), &spell(Focus, &[Void]));
        assert_eq!(a.seal, Seal { positions: 1, elements: vec![Water, Thunder] });
        assert_eq!(a.level, 1);
    }
}
