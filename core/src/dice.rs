//! The seeded, auditable random generator (RULES T-10).
//!
//! Every action that may draw gets a fresh [`Dice`] whose seed is derived from the
//! table's seed and the action's sequence number, so a table's whole history can be
//! re-derived from its log. An action that drew records [`Dice::seed`] next to its
//! outcome, and anyone can replay the draws with `Dice::from_seed(seed)`.
//!
//! The stream is ChaCha8 (`rand_chacha`, value-stable by design); a uniform choice among
//! `n` is made by rejection sampling on 32-bit words, so there is no modulo bias.

use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};

/// A seeded random generator that counts its draws.
#[derive(Clone, Debug)]
pub struct Dice {
    seed: u64,
    draws: u32,
    stream: ChaCha8Rng,
}

impl Dice {
    /// Dice that draw the stream of `seed`.
    pub fn from_seed(seed: u64) -> Self {
        Self { seed, draws: 0, stream: ChaCha8Rng::seed_from_u64(seed) }
    }

    /// The dice for action number `sequence` of a table whose seed is `table_seed`.
    pub fn for_action(table_seed: u64, sequence: u64) -> Self {
        Self::from_seed(mix(table_seed ^ mix(sequence)))
    }

    /// The seed this stream started from: publish it with any result that drew.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// How many draws were made so far.
    pub fn draws(&self) -> u32 {
        self.draws
    }

    /// A uniform draw from `0..n`. `n` must be at least 1.
    pub fn below(&mut self, n: u32) -> u32 {
        assert!(n > 0, "Dice::below needs at least one outcome");
        self.draws = self.draws.saturating_add(1);
        // Reject the top partial block of u32 values so every outcome is equally likely.
        let zone = u32::MAX - (u32::MAX - n + 1) % n;
        loop {
            let word = self.stream.next_u32();
            if word <= zone {
                return word % n;
            }
        }
    }

    /// A roll of a six-sided die, 1 to 6.
    pub fn d6(&mut self) -> u8 {
        // below(6) < 6, so the sum fits in a u8.
        (self.below(6) + 1) as u8
    }

    /// A fair coin.
    pub fn coin(&mut self) -> bool {
        self.below(2) == 1
    }
}

/// SplitMix64's finaliser: spreads nearby numbers (table seeds, sequence numbers) far apart.
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_draws() {
        let mut a = Dice::from_seed(42);
        let mut b = Dice::from_seed(42);
        let xs: Vec<u32> = (0..50).map(|_| a.below(4)).collect();
        let ys: Vec<u32> = (0..50).map(|_| b.below(4)).collect();
        assert_eq!(xs, ys);
        assert_eq!(a.draws(), 50);
    }

    #[test]
    fn every_face_of_a_d6_comes_up() {
        let mut dice = Dice::from_seed(7);
        let mut seen = [false; 6];
        for _ in 0..600 {
            seen[usize::from(dice.d6() - 1)] = true;
        }
        assert!(seen.iter().all(|s| *s));
    }

    #[test]
    fn actions_get_different_streams() {
        assert_ne!(Dice::for_action(1, 0).seed(), Dice::for_action(1, 1).seed());
        assert_ne!(Dice::for_action(1, 0).seed(), Dice::for_action(2, 0).seed());
    }
}
