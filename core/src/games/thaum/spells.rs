//! The arithmetic of the spells that combine Thaums, as pure functions on values:
//! Alchemy's N, Bending's attack (RULES T-6), Summoning's N (T-7) and the Tornado's
//! repetitions (T-8, T-10). The engine checks a spell may be cast, calls these, then
//! stores the results; tests and auditors can call them directly.

use crate::dice::Dice;

use super::state::{Thaum, Thaums};

/// Alchemy: N = m · X · Y. At most 10⁹ · 100 in size, so it fits an i64.
pub fn alchemy_coins(mana: u32, first: i8, second: i8) -> i64 {
    i64::from(mana) * i64::from(first) * i64::from(second)
}

/// Bending (RULES T-6): the attack r = Sᵀa of the caster's Thaums `a`, and the defender's
/// Thaums after `D[j] ← clamp(D[j] + m · r[j])`. (Zeroing the caster is the caller's.)
pub fn bending(caster: &Thaums, defender: &Thaums, mana: u32) -> ([i64; 4], Thaums) {
    let attack = caster.attack();
    let mut after = *defender;
    for thaum in Thaum::ALL {
        // |m · r[j]| ≤ 10⁹ · 40, far inside an i64.
        after.add(thaum, i64::from(mana) * attack[thaum.index()]);
    }
    (attack, after)
}

/// Summoning: N = aᵀ S b = Σⱼ r[j] · b[j]. At most 3,200 in size.
pub fn summoning_coins(caster: &Thaums, partner: &Thaums) -> i64 {
    let attack = caster.attack();
    Thaum::ALL.iter().map(|t| attack[t.index()] * i64::from(partner.get(*t))).sum()
}

/// Whose Thaum a Tornado repetition moved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// The caster's.
    Caster,
    /// The other player's.
    Target,
}

/// One Tornado repetition: what was drawn and what it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TornadoRoll {
    /// The Thaum drawn.
    pub thaum: Thaum,
    /// The player drawn.
    pub side: Side,
    /// The sign drawn, −1 or +1.
    pub k: i8,
    /// The caster's Air as read for this repetition (RULES T-8).
    pub air: i8,
    /// The selected Thaum before.
    pub before: i8,
    /// The selected Thaum after.
    pub after: i8,
}

/// Both players' Thaums after a Tornado, and each repetition in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TornadoOutcome {
    /// Every repetition, in the order drawn.
    pub rolls: Vec<TornadoRoll>,
    /// The caster's Thaums at the end (Air 0).
    pub caster: Thaums,
    /// The other player's Thaums at the end.
    pub target: Thaums,
}

/// Tornado: `mana` times, draw a Thaum (`below(4)`, in vector order), a player
/// (`below(2)`: 0 the caster, 1 the target) and K (`below(2)`: 0 → −1, 1 → +1), then
/// selected ← clamp(selected + K · the caster's Air read now (RULES T-8)). Then the
/// caster's Air ← 0. Replaying with `Dice::from_seed(seed)` gives the same rolls (T-10).
pub fn tornado(caster: Thaums, target: Thaums, mana: u32, dice: &mut Dice) -> TornadoOutcome {
    let mut caster = caster;
    let mut target = target;
    let mut rolls = Vec::with_capacity(usize::try_from(mana).unwrap_or(0).min(1 << 16));
    for _ in 0..mana {
        let thaum = Thaum::from_index(dice.below(4) as usize).unwrap_or(Thaum::Fire);
        let side = if dice.below(2) == 0 { Side::Caster } else { Side::Target };
        let k: i8 = if dice.below(2) == 0 { -1 } else { 1 };
        let air = caster.get(Thaum::Air);
        let selected = match side {
            Side::Caster => &mut caster,
            Side::Target => &mut target,
        };
        let before = selected.get(thaum);
        let after = selected.add(thaum, i64::from(k) * i64::from(air));
        rolls.push(TornadoRoll { thaum, side, k, air, before, after });
    }
    caster.set(Thaum::Air, 0);
    TornadoOutcome { rolls, caster, target }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worked_check_alchemy_n_is_minus_24() {
        // RULES worked check: 2 Mana, Fire 3, Air −4 → N = −24.
        assert_eq!(alchemy_coins(2, 3, -4), -24);
    }

    #[test]
    fn t6_worked_check_bending_attack_vector() {
        // RULES T-6 worked check: a = [1, 0, 0, 2], m = 1, defender all 0.
        let caster = Thaums::clamped([1, 0, 0, 2]);
        let (attack, defender) = bending(&caster, &Thaums::ZERO, 1);
        assert_eq!(attack, [-2, 1, 5, 2]);
        assert_eq!(defender.values(), [-2, 1, 5, 2]);
    }

    #[test]
    fn bending_with_huge_mana_clamps_without_overflow() {
        let caster = Thaums::clamped([10, 10, 10, 10]);
        let (_, defender) = bending(&caster, &Thaums::clamped([-10, 10, 0, 3]), 1_000_000_000);
        assert!(defender.values().iter().all(|v| (-10..=10).contains(v)));
    }

    #[test]
    fn worked_check_summoning_n_is_five() {
        // RULES worked check: a = [1, 0, 0, 2], b = [0, 0, 1, 0] → N = r[Earth] = 5.
        assert_eq!(summoning_coins(&Thaums::clamped([1, 0, 0, 2]), &Thaums::clamped([0, 0, 1, 0])), 5);
    }

    #[test]
    fn summoning_extremes_fit() {
        let max = Thaums::clamped([10, 10, 10, 10]);
        let min = Thaums::clamped([-10, -10, -10, -10]);
        assert_eq!(summoning_coins(&max, &max), 100 * 8);
        assert_eq!(summoning_coins(&max, &min), -800);
    }

    #[test]
    fn t8_tornado_reads_the_casters_air_at_each_repetition() {
        // RULES T-8: find a seed whose first roll changes the caster's own Air, then check
        // the second roll used the new Air.
        for seed in 0..500 {
            let mut dice = Dice::from_seed(seed);
            let out = tornado(Thaums::clamped([0, 0, 0, 3]), Thaums::ZERO, 2, &mut dice);
            let first = out.rolls[0];
            if first.side == Side::Caster && first.thaum == Thaum::Air {
                assert_eq!(out.rolls[1].air, first.after);
                assert_eq!(out.caster.get(Thaum::Air), 0);
                return;
            }
        }
        panic!("no seed in 0..500 moved the caster's Air first");
    }

    #[test]
    fn t10_tornado_replays_from_its_seed() {
        // RULES T-10
        let caster = Thaums::clamped([1, -2, 3, 5]);
        let target = Thaums::clamped([0, 4, -4, 1]);
        let first = tornado(caster, target, 20, &mut Dice::from_seed(99));
        let again = tornado(caster, target, 20, &mut Dice::from_seed(99));
        assert_eq!(first, again);
        assert_eq!(first.rolls.len(), 20);
    }
}
