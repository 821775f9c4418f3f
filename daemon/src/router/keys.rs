//! The tables' dice keys (RULES T-10).
//!
//! A table takes a secret 256-bit key from the router's secret source when it opens and
//! announces the key's SHA-256 commitment; action `n`'s dice are `Dice::keyed(key, n)`.
//! When the table ends (finish, concede, stop) the key is revealed, so anyone can check
//! every draw against the commitment. A table whose dice epoch changes (a Thaum season
//! rollover) reveals its key then and takes a new one. The journal records commitments
//! and revealed keys; the store keeps the keys themselves apart (see
//! [`Router::dice_keys`]), and an unrevealed key appears in no snapshot.

use serde_json::{Value, json};
use spellbridge_core::dice::{Commitment, DiceKey};
use spellbridge_core::locale::Args;
use spellbridge_core::{Dice, Language, RichText};

use super::{Outbound, ReplayError, Router, said};
use crate::journal::{Entry, TableId};

/// How a table's dice are derived.
#[derive(Clone, Debug)]
pub(super) enum TableDice {
    /// A table from before dice keys: `Dice::for_action(seed, n)` (old journals only).
    Seeded(u64),
    /// A keyed table, on the key of its dice epoch `epoch`.
    Keyed {
        /// The epoch the key is for.
        epoch: u64,
        /// The key.
        key: DiceKey,
        /// True once the key was announced (the table ended).
        revealed: bool,
    },
}

impl TableDice {
    /// The dice for action number `sequence`.
    pub(super) fn for_action(&self, sequence: u64) -> Dice {
        match self {
            TableDice::Seeded(seed) => Dice::for_action(*seed, sequence),
            TableDice::Keyed { key, .. } => Dice::keyed(key, sequence),
        }
    }

    /// The snapshot's field for the dice: `seed` for an old table, else `dice` with the
    /// epoch, the commitment and, only once revealed, the key.
    pub(super) fn snapshot_field(&self) -> (&'static str, Value) {
        match self {
            TableDice::Seeded(seed) => ("seed", json!(seed)),
            TableDice::Keyed { epoch, key, revealed: false } => {
                ("dice", json!({ "epoch": epoch, "commitment": key.commitment().as_str() }))
            }
            TableDice::Keyed { epoch, key, revealed: true } => (
                "dice",
                json!({ "epoch": epoch, "commitment": key.commitment().as_str(), "key": key.reveal() }),
            ),
        }
    }
}

impl Router {
    /// Gives the router dice keys the store kept (by table and epoch), so tables restore
    /// and journals replay with them.
    pub fn add_keys(&mut self, keys: impl IntoIterator<Item = (TableId, u64, DiceKey)>) {
        for (table, epoch, key) in keys {
            self.keys.insert((table, epoch), key);
        }
    }

    /// Keys a person gives to check a table (`spellbridge verify --key`): each is used for
    /// whichever commitment it matches, before any key the store kept.
    pub fn offer_keys(&mut self, keys: impl IntoIterator<Item = DiceKey>) {
        self.offered.extend(keys);
    }

    /// Every dice key of `table` this router knows, by epoch: for the store, which keeps
    /// them apart from the journal. Never for chat, snapshots or logs.
    pub(crate) fn dice_keys(&self, table: TableId) -> impl Iterator<Item = (u64, &DiceKey)> + '_ {
        self.keys.range((table, 0)..=(table, u64::MAX)).map(|((_, epoch), key)| (*epoch, key))
    }

    /// A new key for `table`'s `epoch`, remembered for the store.
    pub(super) fn new_key(&mut self, table: TableId, epoch: u64) -> DiceKey {
        let key = self.secrets.table_key(table, epoch);
        self.keys.insert((table, epoch), key.clone());
        key
    }

    /// The key of `table`'s `epoch` for a replay or a restore: one offered that matches
    /// `commitment`, else one given by the store, else, in a console replaying a script,
    /// one made again from its seed. It must match `commitment`.
    pub(super) fn known_key(
        &mut self,
        table: TableId,
        epoch: u64,
        commitment: &Commitment,
    ) -> Result<DiceKey, ReplayError> {
        let offered = self.offered.iter().find(|key| commitment.matches(key));
        let key = match offered.or_else(|| self.keys.get(&(table, epoch))) {
            Some(key) => key.clone(),
            None if self.secrets.is_seeded() => self.new_key(table, epoch),
            None => return Err(ReplayError::NoKey { table, epoch }),
        };
        if !commitment.matches(&key) {
            return Err(ReplayError::KeyMismatch { table, epoch, commitment: commitment.clone() });
        }
        Ok(key)
    }

    /// The table's announcement of a key's commitment (`router-dice-commitment` at the
    /// opening, `router-dice-new-commitment` later), in `language`.
    pub(super) fn commitment_text(language: Language, id: &str, commitment: &Commitment) -> RichText {
        said::said(language, id, Args::new().text("commitment", commitment.as_str()))
    }

    /// After an accepted action or a fired timer: a table that ended reveals its key; a
    /// table whose dice epoch changed reveals the old key and takes a new one. Journals
    /// what it does and returns what to announce.
    pub(super) fn settle_dice(&mut self, id: TableId) -> Vec<Outbound> {
        let Some(seating) = self.tables.get(&id) else { return Vec::new() };
        let TableDice::Keyed { epoch, key, revealed: false } = &seating.dice else { return Vec::new() };
        let (epoch, key) = (*epoch, key.clone());
        let finished = seating.table.is_finished();
        let next_epoch = seating.table.dice_epoch();
        if !finished && next_epoch == epoch {
            return Vec::new();
        }
        self.log(Entry::Revealed { table: id, epoch, key: key.reveal() });
        let args = Args::new().text("key", key.reveal()).text("commitment", key.commitment().as_str());
        let outbound =
            self.deliver_text(id, |language| said::said(language, "router-dice-revealed", args.clone()));
        let mut out = self.announced(outbound);
        if finished {
            if let Some(seating) = self.tables.get_mut(&id) {
                seating.dice = TableDice::Keyed { epoch, key, revealed: true };
            }
            return out;
        }
        let new = self.new_key(id, next_epoch);
        let commitment = new.commitment();
        if let Some(seating) = self.tables.get_mut(&id) {
            seating.dice = TableDice::Keyed { epoch: next_epoch, key: new, revealed: false };
        }
        self.log(Entry::Keyed { table: id, epoch: next_epoch, commitment: commitment.clone() });
        let outbound = self.deliver_text(id, |language| {
            Self::commitment_text(language, "router-dice-new-commitment", &commitment)
        });
        out.extend(self.announced(outbound));
        out
    }

    /// Replays [`Entry::Keyed`]: the table moves to the key of `epoch`.
    pub(super) fn replay_keyed(
        &mut self,
        table: TableId,
        epoch: u64,
        commitment: &Commitment,
    ) -> Result<(), ReplayError> {
        let key = self.known_key(table, epoch, commitment)?;
        let seating = self.tables.get_mut(&table).ok_or(ReplayError::NoSuchTable(table))?;
        seating.dice = TableDice::Keyed { epoch, key, revealed: false };
        Ok(())
    }

    /// Replays [`Entry::Revealed`]: the revealed key must be the one the table was on.
    pub(super) fn replay_revealed(
        &mut self,
        table: TableId,
        epoch: u64,
        revealed: &str,
    ) -> Result<(), ReplayError> {
        let seating = self.tables.get_mut(&table).ok_or(ReplayError::NoSuchTable(table))?;
        let TableDice::Keyed { epoch: current, key, revealed: done } = &mut seating.dice else {
            return Err(ReplayError::NotKeyed(table));
        };
        let commitment = key.commitment();
        if *current != epoch || DiceKey::from_hex(revealed).ok().as_ref() != Some(&*key) {
            return Err(ReplayError::KeyMismatch { table, epoch, commitment });
        }
        *done = true;
        Ok(())
    }
}
