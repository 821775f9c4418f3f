//! Auditing a database: `spellbridge verify` replays every table's journal from the start
//! with the table's dice keys (checking every recorded seed) and compares the result with
//! the stored snapshot and its seal, reporting every table (a bad one does not stop it),
//! the lobby's journal rows and the outbox; `verify --table N --key K` checks a revealed
//! dice key against the table's commitments and replays the table with it (RULES T-10);
//! `spellbridge export` prints a table's history and state as JSON or as MediaWiki markup
//! that a nomic can paste into its gamestate page. `verify` also derives the stored
//! ratings again from the journal (`ratings`) and reports a copy that differs.

use std::fmt::Write as _;

use serde_json::{Value, json};
use spellbridge_core::Registry;
use spellbridge_core::dice::{Commitment, DiceKey};

use std::collections::BTreeMap;

use spellbridge_core::NetworkId;

use super::difference::first_difference;
use super::outbox::BadRow;
use super::seal;
use super::startup::{self, Trust, Unsound};
use super::{Store, StoreError};
use crate::journal::{Entry, TableId};
use crate::router::{Router, RouterConfig};

/// One problem `verify` found with a table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Finding {
    /// The replayed state differs from the snapshot; the first differing path in the state.
    Differs(String),
    /// The journal could not be replayed.
    ReplayFailed(String),
    /// A journal row of the table does not read.
    BadJournalRow(String),
    /// The snapshot does not read as JSON, or there is none.
    BadSnapshot(String),
    /// The snapshot does not match its seal, or the journal the digest sealed with it.
    Seal(Unsound),
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Finding::Differs(path) => write!(f, "DIFFERS at {path}"),
            Finding::ReplayFailed(reason) => write!(f, "REPLAY FAILED: {reason}"),
            Finding::BadJournalRow(reason) => write!(f, "BAD JOURNAL ROW: {reason}"),
            Finding::BadSnapshot(reason) => write!(f, "BAD SNAPSHOT: {reason}"),
            Finding::Seal(problem) => write!(f, "CHECKSUM: {problem}"),
        }
    }
}

/// One table's line of the verify report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableReport {
    /// The table.
    pub table: TableId,
    /// Its game.
    pub game: String,
    /// How many journal entries it has.
    pub entries: usize,
    /// What was wrong with it; empty when its snapshot agrees with its journal.
    pub findings: Vec<Finding>,
}

/// Everything `verify` found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Every table, in order, whether or not it has problems.
    pub tables: Vec<TableReport>,
    /// Lobby journal rows (challenges, links) that do not read.
    pub lobby: Vec<String>,
    /// How many rows wait in the outbox.
    pub outbox_rows: usize,
    /// Outbox rows that cannot be sent.
    pub outbox: Vec<BadRow>,
    /// Outbox rows set aside at earlier starts (kept, not sent).
    pub set_aside: Vec<BadRow>,
    /// The stored ratings, derived again from the journal and compared.
    pub ratings: super::ratings::RatingsCheck,
}

impl Report {
    /// How many problems were found (rows set aside earlier are not counted: they were
    /// already reported, and are kept for the operator).
    pub fn problems(&self) -> usize {
        self.tables.iter().filter(|t| !t.findings.is_empty()).count()
            + self.lobby.len()
            + self.outbox.len()
            + usize::from(self.ratings.is_problem())
    }
}

/// Replays every table's journal and compares it with its snapshot and its seal, going on
/// past a table with problems; checks the lobby's journal rows and the outbox (with
/// `networks`, each row's network must be one of them).
pub fn verify(
    store: &Store,
    registry: impl Fn() -> Registry,
    networks: Option<&[NetworkId]>,
) -> Result<Report, StoreError> {
    // A database from before player ids named their network is brought up to date first
    // (SQLite only: PostgreSQL databases began after the change).
    if let Some(sqlite) = store.sqlite()
        && super::player_ids::needs_upgrade(sqlite)?
    {
        super::player_ids::upgrade(sqlite, registry(), RouterConfig::default())?;
    }
    let mut report = Report::default();
    let mut rows = table_rows(store)?;
    let points = rows.iter().filter_map(|(table, row)| Some((*table, row.as_ref()?.upto))).collect();
    let digests = store.journal_digests(&points)?;
    for table in digests.keys() {
        rows.entry(*table).or_insert(None);
    }
    for (table, row) in rows {
        let mut findings = Vec::new();
        let (numbered, bad) = journal(store, Some(table))?;
        findings.extend(bad.into_iter().map(Finding::BadJournalRow));
        let journal = digests.get(&table).map_or(seal::EMPTY, |covered| covered.sealed);
        let stored = match &row {
            None => {
                findings.push(Finding::BadSnapshot("there is no snapshot".into()));
                None
            }
            Some(row) => {
                if let Trust::Broken(problem) = startup::trust(row, &journal) {
                    findings.push(Finding::Seal(problem));
                }
                match store.assembled(table, &row.snapshot) {
                    Ok(value) => Some(value),
                    Err(e) => {
                        findings.push(Finding::BadSnapshot(e));
                        None
                    }
                }
            }
        };
        let game = stored.as_ref().and_then(|s| s.get("game")).and_then(Value::as_str).unwrap_or_default();
        // The snapshot is compared with the replay of the rows it covers; the rows after
        // its point must replay onto that.
        let point = row.as_ref().map_or(i64::MAX, |row| row.upto);
        let split = numbered.iter().take_while(|(id, _)| *id <= point).count();
        let entries: Vec<Entry> = numbered.into_iter().map(|(_, entry)| entry).collect();
        let mut router = keyed_router(store, registry(), table, &entries, Vec::new())?;
        match entries[..split].iter().try_for_each(|entry| router.replay(entry)) {
            Err(e) => findings.push(Finding::ReplayFailed(e.to_string())),
            Ok(()) => match (router.table_snapshot(table), &stored) {
                (None, _) => {
                    findings.push(Finding::ReplayFailed("the journal never opens this table".into()))
                }
                (Some(rebuilt), Some(stored)) => {
                    if let Some(path) = first_difference(&rebuilt, stored, String::new()) {
                        findings.push(Finding::Differs(path));
                    }
                    if let Err(e) = entries[split..].iter().try_for_each(|entry| router.replay(entry)) {
                        let reason = format!("after the snapshot's point: {e}");
                        findings.push(Finding::ReplayFailed(reason));
                    }
                }
                (Some(_), None) => {}
            },
        }
        let game = game.to_owned();
        report.tables.push(TableReport { table, game, entries: entries.len(), findings });
    }
    report.lobby = journal(store, None)?.1;
    report.outbox = store.check_outbox(networks)?;
    report.outbox_rows = store.pending_count()?;
    report.set_aside = store.set_aside_rows()?;
    report.ratings = store.check_ratings(&registry())?;
    Ok(report)
}

/// A router to replay `table` with: the store's dice keys for it, the keys its journal
/// reveals, and `offered` keys (used first, for the commitments they match).
fn keyed_router(
    store: &Store,
    registry: Registry,
    table: TableId,
    entries: &[Entry],
    offered: Vec<DiceKey>,
) -> Result<Router, StoreError> {
    let mut router = Router::new(registry, RouterConfig::default());
    router.add_keys(store.dice_keys(Some(table))?);
    router.add_keys(entries.iter().filter_map(|entry| match entry {
        Entry::Revealed { table, epoch, key } => DiceKey::from_hex(key).ok().map(|key| (*table, *epoch, key)),
        _ => None,
    }));
    router.offer_keys(offered);
    Ok(router)
}

/// What checking a table with revealed dice keys found (`verify --table N --key K`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyCheck {
    /// The database has no such table.
    NoTable,
    /// A key matches none of the commitments the table announced.
    Unmatched {
        /// The key's commitment (what its SHA-256 is).
        commitment: Commitment,
        /// The commitments the table announced, in order.
        announced: Vec<Commitment>,
    },
    /// Every key matched a commitment, and the table was replayed with them.
    Replayed {
        /// The table's game.
        game: String,
        /// The commitments the keys matched, in order of the table's epochs.
        matched: Vec<Commitment>,
        /// How many actions (commands and timers) were re-derived.
        actions: usize,
        /// What the replay found wrong: empty when every recorded dice seed was derived
        /// again from the keys and the final state equals the snapshot.
        findings: Vec<Finding>,
    },
}

/// Checks each key in `keys` against the dice commitments table `table` announced, then
/// replays the table with them: every action's seed is derived again from the keys and
/// must equal the seed recorded with it, and the final state must equal the snapshot.
pub fn verify_keys(
    store: &Store,
    registry: Registry,
    table: TableId,
    keys: &[DiceKey],
) -> Result<KeyCheck, StoreError> {
    let Some(stored) = store.current_table(&registry, table)? else {
        return Ok(KeyCheck::NoTable);
    };
    let entries = store.entries(Some(table))?;
    let announced: Vec<Commitment> = entries
        .iter()
        .filter_map(|entry| match entry {
            Entry::Opened { commitment, .. } => commitment.clone(),
            Entry::Keyed { commitment, .. } => Some(commitment.clone()),
            _ => None,
        })
        .collect();
    let mut matched = Vec::new();
    for key in keys {
        let commitment = key.commitment();
        if !announced.contains(&commitment) {
            return Ok(KeyCheck::Unmatched { commitment, announced });
        }
        matched.push(commitment);
    }
    matched.sort_by_key(|c| announced.iter().position(|a| a == c));
    let actions = entries.iter().filter(|e| matches!(e, Entry::Acted { .. } | Entry::Fired { .. })).count();
    let game = stored.get("game").and_then(Value::as_str).unwrap_or_default().to_owned();
    let mut router = keyed_router(store, registry, table, &entries, keys.to_vec())?;
    let findings = match entries.iter().try_for_each(|entry| router.replay(entry)) {
        Err(e) => vec![Finding::ReplayFailed(e.to_string())],
        Ok(()) => match router.table_snapshot(table) {
            None => vec![Finding::ReplayFailed("the journal never opens this table".into())],
            Some(rebuilt) => {
                first_difference(&rebuilt, &stored, String::new()).map(Finding::Differs).into_iter().collect()
            }
        },
    };
    Ok(KeyCheck::Replayed { game, matched, actions, findings })
}

/// Every table's stored row, by number.
fn table_rows(store: &Store) -> Result<BTreeMap<TableId, Option<startup::Row>>, StoreError> {
    Ok(store.table_rows()?.into_iter().map(|row| (row.id, Some(row))).collect())
}

/// Journal entries with their row ids.
type Numbered = Vec<(i64, Entry)>;

/// A table's (or the lobby's) journal entries that read, with their row ids, and what is
/// wrong with the others.
fn journal(store: &Store, table: Option<TableId>) -> Result<(Numbered, Vec<String>), StoreError> {
    let rows = store.journal_texts(table)?;
    let (mut entries, mut bad) = (Vec::new(), Vec::new());
    for (id, text) in rows {
        match serde_json::from_slice::<Entry>(&text) {
            Ok(entry) => entries.push((id, entry)),
            Err(e) => bad.push(format!("journal row {id} does not read: {e}")),
        }
    }
    Ok((entries, bad))
}

/// A table's history and state (as it is now, for the games of `games`) as JSON.
pub fn export_json(store: &Store, games: &Registry, table: TableId) -> Result<Option<Value>, StoreError> {
    let Some(stored) = store.current_table(games, table)? else {
        return Ok(None);
    };
    let history = store.export_rows(table)?;
    Ok(Some(json!({ "table": stored, "journal": history })))
}

/// A table's state and history as MediaWiki table markup; the state as its game in
/// `games` writes it ([`GamePlugin::wiki`](spellbridge_core::GamePlugin::wiki)), else
/// as JSON.
pub fn export_wiki(store: &Store, games: &Registry, table: TableId) -> Result<Option<String>, StoreError> {
    let Some(export) = export_json(store, games, table)? else { return Ok(None) };
    let stored = &export["table"];
    let state = &stored["state"];
    let mut out = String::new();
    let game = stored["game"].as_str().unwrap_or_default();
    let _ = writeln!(
        out,
        "== {} table {} in {} ==",
        capitalise(game),
        table,
        stored["room"].as_str().unwrap_or_default()
    );
    match games.get(game).and_then(|g| g.wiki(state)) {
        Some(markup) => out.push_str(&markup),
        None => {
            let _ = writeln!(out, "<pre>{}</pre>", serde_json::to_string_pretty(state).unwrap_or_default());
        }
    }
    let _ = writeln!(
        out,
        "\n=== History ===\n{{| class=\"wikitable\"\n! # !! Player !! Action !! Dice seed !! Result"
    );
    for (n, row) in export["journal"].as_array().into_iter().flatten().enumerate() {
        let entry = &row["entry"];
        let (player, action) = match row["kind"].as_str() {
            Some("acted") => (cell(&row["player"]), format!("<nowiki>{}</nowiki>", cell(&row["command"]))),
            Some("fired") => ("—".to_owned(), format!("timer at {}", entry["at"])),
            Some("opened") => ("—".to_owned(), "table opened".to_owned()),
            other => ("—".to_owned(), other.unwrap_or_default().to_owned()),
        };
        let seed =
            entry.get("dice_seed").filter(|_| entry.get("draws").and_then(Value::as_u64).unwrap_or(0) > 0);
        let result: Vec<&str> =
            row["events"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        let _ = writeln!(
            out,
            "|-\n| {} || {} || {} || {} || <nowiki>{}</nowiki>",
            n + 1,
            player,
            action,
            seed.map(|s| s.to_string()).unwrap_or_default(),
            result.join(" / ")
        );
    }
    out.push_str("|}\n");
    Ok(Some(out))
}

fn cell(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn capitalise(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}
