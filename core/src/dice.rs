//! The seeded, auditable random generator and the tables' dice keys (RULES T-10).
//!
//! Every table has a secret 256-bit [`DiceKey`] (made by the daemon, never here); its
//! SHA-256 [`Commitment`] is announced when the table opens. Action number `n` of the
//! table gets a fresh [`Dice`] whose seed is the first 8 bytes (big-endian) of
//! HMAC-SHA-256(key, `n` as 8 bytes big-endian): a keyed one-way function, so the seeds
//! published with results never let anyone predict a later one. When the key is revealed,
//! anyone can check it against the commitment and re-derive every seed. An action that
//! drew records [`Dice::seed`] next to its outcome, and anyone can replay its draws with
//! `Dice::from_seed(seed)`.
//!
//! Tables from before keys derive their dice with [`Dice::for_action`] from a table
//! seed; that derivation is invertible and is kept only so their journals still replay.
//!
//! The stream is ChaCha8 (`rand_chacha`, value-stable by design); a uniform choice among
//! `n` is made by rejection sampling on 32-bit words, so there is no modulo bias.

use std::fmt;

use hmac::{Hmac, Mac};
use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// A table's secret dice key: 256 bits from the daemon's secret source (RULES T-10).
///
/// Its `Debug` never shows the key; [`DiceKey::reveal`] is the one way to see it, for
/// when the table ends.
#[derive(Clone, PartialEq, Eq)]
pub struct DiceKey([u8; 32]);

/// The SHA-256 of a [`DiceKey`], as 64 lowercase hex digits: announced when the key is
/// taken, so the key revealed later can be checked against it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Commitment(String);

/// Why a dice key or commitment typed as hex was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HexError {
    /// Not 64 hex digits long.
    #[error("`{text}` has {found} characters; a dice key or commitment is 64 hex digits (0-9, a-f)")]
    Length {
        /// What was given.
        text: String,
        /// Its length in characters.
        found: usize,
    },
    /// A character that is not a hex digit.
    #[error(
        "`{text}` has `{bad}`, which is not a hex digit; a dice key or commitment is 64 hex digits (0-9, a-f)"
    )]
    Digit {
        /// What was given.
        text: String,
        /// The first character that is not a hex digit.
        bad: char,
    },
}

impl DiceKey {
    /// The key made of these bytes.
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// A key written as 64 hex digits (as [`DiceKey::reveal`] writes it; either case).
    pub fn from_hex(text: &str) -> Result<Self, HexError> {
        parse_hex(text).map(Self)
    }

    /// The key as 64 lowercase hex digits. Only for a key whose table has ended.
    pub fn reveal(&self) -> String {
        to_hex(&self.0)
    }

    /// The SHA-256 of the key: what is announced before any draw.
    pub fn commitment(&self) -> Commitment {
        Commitment(to_hex(&Sha256::digest(self.0)))
    }

    /// The seed of action number `sequence`: the first 8 bytes, read big-endian, of
    /// HMAC-SHA-256 keyed by this key over `sequence` as 8 big-endian bytes.
    pub fn seed(&self, sequence: u64) -> u64 {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.0)
            .unwrap_or_else(|_| unreachable!("HMAC takes a key of any length"));
        mac.update(&sequence.to_be_bytes());
        let tag = mac.finalize().into_bytes();
        let mut first = [0; 8];
        first.copy_from_slice(&tag[..8]);
        u64::from_be_bytes(first)
    }
}

impl fmt::Debug for DiceKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DiceKey(<secret>)")
    }
}

impl Commitment {
    /// A commitment written as 64 hex digits (either case).
    pub fn parse(text: &str) -> Result<Self, HexError> {
        parse_hex(text).map(|bytes| Self(to_hex(&bytes)))
    }

    /// The 64 lowercase hex digits.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// True when `key` is the key this commits to.
    pub fn matches(&self, key: &DiceKey) -> bool {
        key.commitment() == *self
    }
}

impl fmt::Display for Commitment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for Commitment {
    type Error = HexError;
    fn try_from(text: String) -> Result<Self, HexError> {
        Commitment::parse(&text)
    }
}

impl From<Commitment> for String {
    fn from(commitment: Commitment) -> String {
        commitment.0
    }
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn parse_hex(text: &str) -> Result<[u8; 32], HexError> {
    let text = text.trim();
    if let Some(bad) = text.chars().find(|c| !c.is_ascii_hexdigit()) {
        return Err(HexError::Digit { text: text.to_owned(), bad });
    }
    if text.len() != 64 {
        return Err(HexError::Length { text: text.to_owned(), found: text.chars().count() });
    }
    let mut bytes = [0; 32];
    for (byte, pair) in bytes.iter_mut().zip(text.as_bytes().chunks_exact(2)) {
        *byte = (nibble(pair[0]) << 4) | nibble(pair[1]);
    }
    Ok(bytes)
}

/// The value of one ASCII hex digit (checked by the caller).
fn nibble(digit: u8) -> u8 {
    char::from(digit).to_digit(16).map_or(0, |d| d as u8)
}

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

    /// The dice for action number `sequence` of a table with dice key `key` (RULES T-10).
    pub fn keyed(key: &DiceKey, sequence: u64) -> Self {
        Self::from_seed(key.seed(sequence))
    }

    /// The dice for action number `sequence` of a table from before dice keys, whose seed
    /// is `table_seed`. Invertible (one published seed gives the table seed away): kept
    /// only so old journals replay; new tables use [`Dice::keyed`].
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

/// SplitMix64's finaliser: spreads nearby numbers apart. Invertible, so never a secret's
/// only protection (it is what [`Dice::for_action`] uses for tables from before keys).
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The inverse of [`mix`], undoing each xor-shift and multiplication in turn: whoever
/// sees `mix(x)` knows `x`. Kept here, beside `mix`, so the tests that replay issue 13's
/// attack on the old seeds and link codes share one copy.
pub fn unmix(mut z: u64) -> u64 {
    fn unshift(y: u64, k: u32) -> u64 {
        let mut x = y;
        for _ in 0..(64 / k + 1) {
            x = y ^ (x >> k);
        }
        x
    }
    fn inverse(a: u64) -> u64 {
        // Newton's iteration doubles the correct low bits each round (a is odd).
        let mut x = a;
        for _ in 0..6 {
            x = x.wrapping_mul(2u64.wrapping_sub(a.wrapping_mul(x)));
        }
        x
    }
    z = unshift(z, 31).wrapping_mul(inverse(0x94D0_49BB_1331_11EB));
    z = unshift(z, 27).wrapping_mul(inverse(0xBF58_476D_1CE4_E5B9));
    unshift(z, 30).wrapping_sub(0x9E37_79B9_7F4A_7C15)
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

    /// A key anyone can write down, for known-answer tests.
    fn counting_key() -> DiceKey {
        let mut bytes = [0; 32];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = i as u8;
        }
        DiceKey::from_bytes(bytes)
    }

    #[test]
    fn the_commitment_is_the_sha256_of_the_key() {
        // Python: hashlib.sha256(bytes(range(32))).hexdigest()
        let key = counting_key();
        assert_eq!(
            key.commitment().as_str(),
            "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"
        );
        assert!(key.commitment().matches(&key));
        assert!(!key.commitment().matches(&DiceKey::from_bytes([0; 32])));
    }

    #[test]
    fn an_action_seed_is_the_hmac_sha256_of_its_number() {
        // Python: int.from_bytes(hmac.new(key, n.to_bytes(8, "big"), sha256).digest()[:8], "big")
        let key = counting_key();
        assert_eq!(key.seed(0), 11_460_774_541_426_949_705);
        assert_eq!(key.seed(1), 14_137_608_856_405_602_039);
        assert_eq!(key.seed(7), 15_930_045_454_554_085_617);
        assert_eq!(Dice::keyed(&key, 7).seed(), key.seed(7));
    }

    #[test]
    fn a_revealed_key_reads_back_and_bad_hex_says_what_is_wrong() {
        let key = counting_key();
        assert_eq!(DiceKey::from_hex(&key.reveal()), Ok(key.clone()));
        assert_eq!(DiceKey::from_hex(&key.reveal().to_uppercase()), Ok(key.clone()));
        let short = DiceKey::from_hex("abc").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(short.contains("3 characters") && short.contains("64 hex digits"), "{short}");
        let bad = Commitment::parse(&"g".repeat(64)).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(bad.contains("`g`") && bad.contains("64 hex digits"), "{bad}");
        let commitment = key.commitment();
        assert_eq!(Commitment::parse(&commitment.as_str().to_uppercase()), Ok(commitment));
    }

    #[test]
    fn a_key_never_shows_in_debug_output() {
        let key = counting_key();
        let shown = format!("{key:?} {:?}", Some(&key));
        assert!(!shown.contains(&key.reveal()[..16]), "{shown}");
        assert!(shown.contains("<secret>"), "{shown}");
    }

    #[test]
    fn unmix_undoes_mix() {
        for z in [0, 1, 42, u64::MAX, 0x9E37_79B9_7F4A_7C15] {
            assert_eq!(unmix(mix(z)), z);
            assert_eq!(mix(unmix(z)), z);
        }
    }

    /// Issue 13's attack: from the seed published for action `n`, recover the table seed
    /// by inverting `mix`, and predict the seed of action `n + 1`.
    fn attack(published: u64, n: u64) -> u64 {
        let table_seed = unmix(published) ^ mix(n);
        mix(table_seed ^ mix(n + 1))
    }

    #[test]
    fn issue_13_attack_predicts_old_seeds_but_not_keyed_ones() {
        // The attack works on the old derivation (so this test can fail)...
        for (table_seed, n) in [(298_632_664_300_155_871, 3), (1, 0), (u64::MAX, 41)] {
            let published = Dice::for_action(table_seed, n).seed();
            assert_eq!(attack(published, n), Dice::for_action(table_seed, n + 1).seed());
        }
        // ...and predicts nothing once seeds come from a keyed one-way function.
        let key = counting_key();
        for n in 0..200 {
            assert_ne!(attack(key.seed(n), n), key.seed(n + 1), "action {n}");
        }
    }

    #[test]
    fn no_bit_of_the_next_seed_follows_from_the_published_ones() {
        // Over many keys and action numbers, the attack and two naive guesses each get
        // about half of the next seed's bits right: no better than a coin (RULES T-10).
        let mut keys = ChaCha8Rng::seed_from_u64(13);
        let samples: u32 = 2000;
        let mut right = [0u32; 3];
        for i in 0..samples {
            let mut bytes = [0; 32];
            keys.fill_bytes(&mut bytes);
            let key = DiceKey::from_bytes(bytes);
            let n = u64::from(i % 50) + 1;
            let (before, now, next) = (key.seed(n - 1), key.seed(n), key.seed(n + 1));
            for (guess, count) in [attack(now, n), now, before ^ now].into_iter().zip(&mut right) {
                *count += 64 - (guess ^ next).count_ones();
            }
        }
        let bits = f64::from(samples * 64);
        // Four standard deviations of a fair coin over `bits` tosses.
        let slack = 4.0 * (0.25 / bits).sqrt();
        for (name, count) in ["attack", "previous seed", "xor of two"].iter().zip(right) {
            let share = f64::from(count) / bits;
            assert!((share - 0.5).abs() < slack, "{name} guessed {share:.4} of the bits");
        }
    }

    proptest::proptest! {
        #[test]
        fn published_seeds_never_give_the_next_one_away(bytes in proptest::array::uniform32(0u8..), n in 0u64..1_000_000) {
            let key = DiceKey::from_bytes(bytes);
            let published = key.seed(n);
            proptest::prop_assert_ne!(attack(published, n), key.seed(n + 1));
            // Nor is the next seed the same as the last, or one apart from it.
            proptest::prop_assert!(key.seed(n + 1).abs_diff(published) > 1);
        }
    }

    #[test]
    fn actions_get_different_streams() {
        assert_ne!(Dice::for_action(1, 0).seed(), Dice::for_action(1, 1).seed());
        assert_ne!(Dice::for_action(1, 0).seed(), Dice::for_action(2, 0).seed());
    }
}
