//! The dice keys the router knows (RULES T-10), kept apart from everything a player can
//! see: each key made at a table's opening or new epoch, or given back by the store, by
//! table and epoch; and the keys a person gives to check a table with (`spellbridge
//! verify --key`), used for whichever commitment they match. Making a key is
//! [`super::keys`]' (from the router's secret source); this only keeps them.

use std::collections::BTreeMap;

use spellbridge_core::dice::{Commitment, DiceKey};

use crate::journal::TableId;

/// The known keys and the offered ones.
#[derive(Default)]
pub struct DiceKeys {
    /// Every key made or given, by table and epoch.
    kept: BTreeMap<(TableId, u64), DiceKey>,
    /// Keys given to check a table with.
    offered: Vec<DiceKey>,
}

impl DiceKeys {
    /// Keeps `key` as `table`'s key for `epoch`.
    pub fn keep(&mut self, table: TableId, epoch: u64, key: DiceKey) {
        self.kept.insert((table, epoch), key);
    }

    /// Keys to try first for any commitment they match.
    pub fn offer(&mut self, keys: impl IntoIterator<Item = DiceKey>) {
        self.offered.extend(keys);
    }

    /// Every key of `table`, by epoch.
    pub fn of_table(&self, table: TableId) -> impl Iterator<Item = (u64, &DiceKey)> + '_ {
        self.kept.range((table, 0)..=(table, u64::MAX)).map(|((_, epoch), key)| (*epoch, key))
    }

    /// The key for `table`'s `epoch`: an offered one matching `commitment`, else the one
    /// kept (which the caller still checks against `commitment`).
    pub fn known(&self, table: TableId, epoch: u64, commitment: &Commitment) -> Option<&DiceKey> {
        self.offered.iter().find(|key| commitment.matches(key)).or_else(|| self.kept.get(&(table, epoch)))
    }
}
