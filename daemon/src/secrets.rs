//! Where the bot's secrets come from: link codes, dice keys (RULES T-10) and tokens.
//!
//! A secret must be unguessable by the players, so it comes from the operating system's
//! CSPRNG ([`Secrets::Os`]), never from a game seed. The console's `--seed N` is the one
//! exception: there every secret is drawn from a ChaCha20 stream seeded from `N`, so a
//! scripted game replays exactly ([`Secrets::Seeded`]). No network-facing code path may
//! choose `Seeded`.

use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};
use sha2::{Digest, Sha256};
use spellbridge_core::dice::DiceKey;

/// Which generator the router draws its secrets from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Secrets {
    /// The operating system's CSPRNG: what `spellbridge run` uses.
    #[default]
    Os,
    /// A ChaCha20 stream from a seed: only for `spellbridge console --seed N` and tests,
    /// where a script must replay exactly.
    Seeded(u64),
}

/// A generator of secrets, made from a [`Secrets`] choice.
#[derive(Debug)]
pub struct SecretSource {
    seeded: Option<ChaCha20Rng>,
    /// The seed of a [`Secrets::Seeded`] source.
    seed: Option<u64>,
}

impl SecretSource {
    /// The generator `secrets` names.
    pub fn new(secrets: &Secrets) -> Self {
        let seeded = match secrets {
            Secrets::Os => None,
            Secrets::Seeded(seed) => Some(ChaCha20Rng::seed_from_u64(*seed)),
        };
        let seed = match secrets {
            Secrets::Os => None,
            Secrets::Seeded(seed) => Some(*seed),
        };
        Self { seeded, seed }
    }

    /// Fills `buf` with secret bytes.
    ///
    /// # Panics
    /// If the operating system has no random source to give: the bot cannot run safely
    /// without one, and this happens only on a broken system.
    pub fn fill(&mut self, buf: &mut [u8]) {
        match &mut self.seeded {
            Some(stream) => stream.fill_bytes(buf),
            #[allow(clippy::expect_used)]
            None => getrandom::fill(buf).expect("the operating system's random generator failed"),
        }
    }

    /// A fresh 256-bit key.
    pub fn key(&mut self) -> [u8; 32] {
        let mut key = [0; 32];
        self.fill(&mut key);
        key
    }

    /// A fresh dice key for `table`'s dice epoch `epoch` (RULES T-10). From the operating
    /// system, unrelated to anything else; with [`Secrets::Seeded`] the SHA-256 of the seed,
    /// the table and the epoch, so a console script gets the same keys however many other
    /// secrets (link codes) it draws, and a replay can make them again.
    pub fn table_key(&mut self, table: u64, epoch: u64) -> DiceKey {
        match self.seed {
            Some(seed) => {
                let mut hash = Sha256::new();
                hash.update(b"spellbridge console dice key");
                for word in [seed, table, epoch] {
                    hash.update(word.to_be_bytes());
                }
                DiceKey::from_bytes(hash.finalize().into())
            }
            None => DiceKey::from_bytes(self.key()),
        }
    }

    /// True when secrets are seeded (a console script), so keys can be made again.
    pub fn is_seeded(&self) -> bool {
        self.seed.is_some()
    }

    /// A uniform number in `0..n` (`n` at least 1), without modulo bias.
    pub fn below(&mut self, n: u64) -> u64 {
        let n = n.max(1);
        // Reject the top partial block of u64 values so every outcome is equally likely.
        let zone = u64::MAX - (u64::MAX - n + 1) % n;
        loop {
            let mut word = [0; 8];
            self.fill(&mut word);
            let word = u64::from_le_bytes(word);
            if word <= zone {
                return word % n;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seeded_source_replays_and_the_os_does_not_repeat() {
        let mut a = SecretSource::new(&Secrets::Seeded(7));
        let mut b = SecretSource::new(&Secrets::Seeded(7));
        assert_eq!(a.key(), b.key());
        let mut os = SecretSource::new(&Secrets::Os);
        assert_ne!(os.key(), os.key());
    }

    #[test]
    fn seeded_table_keys_depend_on_table_and_epoch_only() {
        let mut a = SecretSource::new(&Secrets::Seeded(7));
        let mut b = SecretSource::new(&Secrets::Seeded(7));
        b.below(1000); // a link code drawn in between changes nothing
        assert_eq!(a.table_key(3, 1), b.table_key(3, 1));
        assert_ne!(a.table_key(3, 1), a.table_key(3, 2));
        assert_ne!(a.table_key(3, 1), a.table_key(4, 1));
        assert_ne!(a.table_key(3, 1), SecretSource::new(&Secrets::Seeded(8)).table_key(3, 1));
        let mut os = SecretSource::new(&Secrets::Os);
        assert_ne!(os.table_key(3, 1), os.table_key(3, 1));
    }

    #[test]
    fn below_stays_in_range() {
        let mut source = SecretSource::new(&Secrets::Seeded(1));
        assert!((0..1000).all(|_| source.below(10) < 10));
        assert_eq!(source.below(1), 0);
    }
}
