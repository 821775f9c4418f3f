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
            self.keys.keep(table, epoch, key);
        }
    }

    /// Keys a person gives to check a table (`spellbridge verify --key`): each is used for
    /// whichever commitment it matches, before any key the store kept.
    pub fn offer_keys(&mut self, keys: impl IntoIterator<Item = DiceKey>) {
        self.keys.offer(keys);
    }

    /// Every dice key of `table` this router knows, by epoch: for the store, which keeps
    /// them apart from the journal. Never for chat, snapshots or logs.
    pub(crate) fn dice_keys(&self, table: TableId) -> impl Iterator<Item = (u64, &DiceKey)> + '_ {
        self.keys.of_table(table)
    }

    /// A new key for `table`'s `epoch`, remembered for the store.
    pub(super) fn new_key(&mut self, table: TableId, epoch: u64) -> DiceKey {
        let key = self.secrets.table_key(table, epoch);
        self.keys.keep(table, epoch, key.clone());
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
        let key = match self.keys.known(table, epoch, commitment) {
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
    /// opening, `router-dice-new-commitment` later), in `language`: with the site's address
    /// known, its first [`SHOWN`] hex digits and a link to the table's page, which shows it
    /// whole (`-short`); else the whole of it.
    pub(super) fn commitment_text(
        &self,
        table: TableId,
        language: Language,
        id: &str,
        commitment: &Commitment,
    ) -> RichText {
        match self.table_page(table, language) {
            Some(page) => {
                let args = Args::new().text("short", short(commitment.as_str())).text("page", page);
                let id = match id {
                    "router-dice-commitment" => "router-dice-commitment-short",
                    _ => "router-dice-new-commitment-short",
                };
                said::said(language, id, args)
            }
            None => said::said(language, id, Args::new().text("commitment", commitment.as_str())),
        }
    }

    /// The revealed key `key` of the commitment `commitment` (`router-dice-revealed`), short
    /// as [`Router::commitment_text`] is.
    fn revealed_text(
        &self,
        table: TableId,
        language: Language,
        key: &str,
        commitment: &Commitment,
    ) -> RichText {
        match self.table_page(table, language) {
            Some(page) => {
                let args = Args::new()
                    .text("short", short(key))
                    .text("commitment", short(commitment.as_str()))
                    .text("page", page);
                said::said(language, "router-dice-revealed-short", args)
            }
            None => {
                let args = Args::new().text("key", key).text("commitment", commitment.as_str());
                said::said(language, "router-dice-revealed", args)
            }
        }
    }

    /// The table's page on the spectator site, in `language`, when its address is known.
    fn table_page(&self, table: TableId, language: Language) -> Option<String> {
        let url = self.options.public_url.as_deref()?.trim_end_matches('/');
        let query = match language {
            Language::En => "",
            Language::ZhCn => "?lang=zh-CN",
        };
        Some(format!("{url}/tables/{table}{query}"))
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
        let (revealed, commitment) = (key.reveal(), key.commitment());
        let outbound =
            self.deliver_text(id, |language| self.revealed_text(id, language, &revealed, &commitment));
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
            self.commitment_text(id, language, "router-dice-new-commitment", &commitment)
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

/// How many hex digits of a commitment or key a room is shown when the whole is on the
/// site (issue 31: 64 of them for every table was noise).
pub const SHOWN: usize = 12;

/// The first [`SHOWN`] characters of `hex`.
fn short(hex: &str) -> &str {
    hex.get(..SHOWN).unwrap_or(hex)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::router::RouterConfig;
    use spellbridge_core::{Inbound, NetworkId, PlayerId, Registry, RoomId, Timestamp};

    const T: Timestamp = Timestamp::CONSOLE_EPOCH;

    fn said(router: &mut Router, who: &str, text: &str) -> String {
        let inbound =
            Inbound::new(NetworkId::new("console"), RoomId::new("console"), PlayerId::new(who), text);
        router.handle(&inbound, T).iter().map(|o| o.message.text.plain()).collect::<Vec<_>>().join("\n")
    }

    /// The longest run of hex digits in `text`.
    fn longest_hex(text: &str) -> usize {
        text.split(|c: char| !c.is_ascii_hexdigit()).map(str::len).max().unwrap_or(0)
    }

    #[test]
    fn with_a_site_the_room_is_shown_short_hashes_and_the_page_has_them_whole() {
        let options =
            RouterConfig { public_url: Some("https://games.example.org".into()), ..RouterConfig::default() };
        let mut router = Router::new(Registry::standard(), options);
        said(&mut router, "bob", "hello");
        said(&mut router, "alice", "!duel bob");
        let opened = said(&mut router, "bob", "!accept");
        let line = opened.lines().find(|l| l.starts_with("Dice commitment")).expect("committed");
        let whole =
            router.snapshot()["tables"][0]["dice"]["commitment"].as_str().unwrap_or_default().to_owned();
        assert_eq!(whole.len(), 64);
        assert!(line.contains(&format!("`{}…`", &whole[..SHOWN])), "{line}");
        assert!(line.contains("whole at https://games.example.org/tables/0"), "{line}");
        assert_eq!(longest_hex(&opened), SHOWN, "{opened}");
        let ended = said(&mut router, "alice", "!concede");
        let line = ended.lines().find(|l| l.starts_with("Dice key revealed")).expect("revealed");
        let key = router.snapshot()["tables"][0]["dice"]["key"].as_str().unwrap_or_default().to_owned();
        assert!(
            line.contains(&format!("`{}…`, matching commitment `{}…`", &key[..SHOWN], &whole[..SHOWN])),
            "{line}"
        );
        assert_eq!(longest_hex(&ended), SHOWN, "{ended}");

        // With no site to show them, the room gets them whole (RULES T-10: anyone checks).
        let mut console = Router::new(Registry::standard(), RouterConfig::default());
        said(&mut console, "bob", "hello");
        said(&mut console, "alice", "!duel bob");
        assert_eq!(longest_hex(&said(&mut console, "bob", "!accept")), 64);
    }
}
