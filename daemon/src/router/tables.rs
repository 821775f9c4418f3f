//! The hosted tables: every table ever opened, by number, with what the router keeps
//! about each (its place, dice and action count: [`Seating`]); their index by place,
//! seated player and timer ([`super::index`]); and the tables whose board picture is to
//! be posted ([`super::board`]). The lookups, snapshots and the store's rows of tables
//! live here; the router applies commands and timers to them.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::{Value, json};
use spellbridge_core::{GamePlugin, PlayerId, Table, Timestamp};

use super::index::{Facts, TableIndex};
use super::keys::TableDice;
use crate::journal::TableId;
use crate::turn::Place;

/// A table with what the router keeps about it.
#[derive(Debug)]
pub(super) struct Seating {
    pub(super) place: Place,
    /// Where every action's dice derive from: the table's dice key (RULES T-10).
    pub(super) dice: TableDice,
    /// How many actions (accepted commands and fired timers) the table has taken.
    pub(super) sequence: u64,
    pub(super) table: Box<dyn Table>,
    /// The build of its game the table plays when the registry now has another (SIGHUP
    /// loaded a new build of a component): its words come from that build.
    pub(super) build: Option<Build>,
}

/// Another build of a table's game than the registry's ([`GamePlugin::build_of`]).
#[derive(Clone)]
pub(super) struct Build(pub(super) Arc<dyn GamePlugin>);

impl std::fmt::Debug for Build {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Build({})", self.0.name())
    }
}

/// One table as the store keeps it.
#[derive(Clone, Debug)]
pub struct StoredTable {
    /// The game.
    pub game: &'static str,
    /// The network of its room.
    pub network: spellbridge_core::NetworkId,
    /// Its room.
    pub room: spellbridge_core::RoomId,
    /// True once the game is over.
    pub finished: bool,
    /// [`Tables::table_snapshot`] as JSON text, without the state's `history` when the
    /// game keeps one (see [`StoredTable::history`]).
    pub text: String,
    /// The game's history, if it keeps one: how many entries it has, the position the
    /// entries below start at, and the entries from there on, as JSON text.
    pub history: Option<StoredHistory>,
}

/// The part of a table's history the store has not written yet.
#[derive(Clone, Debug)]
pub struct StoredHistory {
    /// The position of the first entry in `entries`.
    pub from: usize,
    /// The entries from `from` on.
    pub entries: Vec<String>,
}

/// The hosted tables, their index and the pictures to post.
#[derive(Debug, Default)]
pub(super) struct Tables {
    /// Every table ever opened, by number; at most one unfinished per place.
    by_number: BTreeMap<TableId, Seating>,
    /// The tables by place, seated player and timer.
    index: TableIndex,
    /// Tables whose picture is to be posted, not yet taken by the caller.
    boards: Vec<TableId>,
}

impl Tables {
    /// A table, if it exists.
    pub(super) fn get(&self, id: &TableId) -> Option<&Seating> {
        self.by_number.get(id)
    }

    /// A table to act on, if it exists.
    pub(super) fn get_mut(&mut self, id: &TableId) -> Option<&mut Seating> {
        self.by_number.get_mut(id)
    }

    /// Every unfinished table, to act on.
    pub(super) fn unfinished_mut(&mut self) -> impl Iterator<Item = &mut Seating> + '_ {
        self.by_number.values_mut().filter(|seating| !seating.table.is_finished())
    }

    /// Seats a table under its number (opened, restored or replayed); the caller
    /// indexes it with [`Tables::reindex`].
    pub(super) fn insert(&mut self, id: TableId, seating: Seating) {
        self.by_number.insert(id, seating);
    }

    /// How many tables were ever opened.
    pub(super) fn len(&self) -> usize {
        self.by_number.len()
    }

    /// The number the next table opened gets.
    pub(super) fn next_number(&self) -> TableId {
        self.by_number.last_key_value().map_or(0, |(id, _)| id.saturating_add(1))
    }

    /// The tables, by number.
    pub(super) fn ids(&self) -> impl Iterator<Item = TableId> + '_ {
        self.by_number.keys().copied()
    }

    /// Whether a table's game is over, if the table exists.
    pub(super) fn finished(&self, id: TableId) -> Option<bool> {
        self.by_number.get(&id).map(|s| s.table.is_finished())
    }

    /// Indexes a table again after it may have changed, under the hub `hub` gives its
    /// place (see [`super::index`]).
    pub(super) fn reindex(&mut self, id: TableId, hub: impl Fn(&Place) -> Place) {
        let Some(s) = self.by_number.get(&id) else { return };
        let facts = Facts {
            hub: hub(&s.place),
            players: s.table.players(),
            timer: s.table.next_timer(),
            finished: s.table.is_finished(),
        };
        self.index.update(id, facts);
    }

    /// Indexes every table again (a room's hub may have moved).
    pub(super) fn reindex_all(&mut self, hub: impl Fn(&Place) -> Place) {
        self.index.clear();
        let ids: Vec<TableId> = self.ids().collect();
        for id in ids {
            self.reindex(id, &hub);
        }
    }

    /// The unfinished table in a place (a room, or a bridge's hub).
    pub(super) fn active_at(&self, hub: &Place) -> Option<TableId> {
        self.index.active_at(hub)
    }

    /// The most recent finished table in a place (a room, or a bridge's hub).
    pub(super) fn finished_at(&self, hub: &Place) -> Option<TableId> {
        self.index.finished_at(hub)
    }

    /// The unfinished tables `player` is seated at, oldest first.
    pub(super) fn seated(&self, player: &PlayerId) -> impl Iterator<Item = TableId> + '_ {
        self.index.seated(player)
    }

    /// The players seated at a table, as last indexed.
    pub(super) fn players(&self, id: TableId) -> &[PlayerId] {
        self.index.players(id)
    }

    /// The earliest timer of any table.
    pub(super) fn next_timer(&self) -> Option<Timestamp> {
        self.index.next_timer()
    }

    /// The tables with a timer due at or before `now`, by number.
    pub(super) fn due(&self, now: Timestamp) -> BTreeSet<TableId> {
        self.index.due(now)
    }

    /// Notes a table's picture to be posted.
    pub(super) fn post_board(&mut self, id: TableId) {
        self.boards.push(id);
    }

    /// Takes the tables whose picture is to be posted, each once, oldest first.
    pub(super) fn take_boards(&mut self) -> Vec<TableId> {
        let mut seen = BTreeSet::new();
        std::mem::take(&mut self.boards).into_iter().filter(|id| seen.insert(*id)).collect()
    }

    /// Every table's state, in the form of CONTRACT.md's `--state-json`.
    pub(super) fn snapshot(&self) -> Value {
        let tables: Vec<Value> = self.ids().filter_map(|id| self.table_snapshot(id)).collect();
        json!({ "tables": tables })
    }

    /// One table's entry of [`Tables::snapshot`], with its number and sequence added.
    pub(super) fn table_snapshot(&self, id: TableId) -> Option<Value> {
        let s = self.by_number.get(&id)?;
        let (dice_name, dice) = s.dice.snapshot_field();
        let mut snapshot = json!({
            "table": id,
            "room": s.place.room.as_str(),
            "network": s.place.network.as_str(),
            "game": s.table.game(),
            "sequence": s.sequence,
            "finished": s.table.is_finished(),
            "state": s.table.snapshot(),
        });
        snapshot[dice_name] = dice;
        Some(snapshot)
    }

    /// What the store keeps of one table: [`Tables::table_snapshot`] as JSON text, and the
    /// columns it is indexed by. A game's history is left out of the text: its entries from
    /// position `history_from` on (the ones the store does not have) come beside it.
    pub(super) fn stored_table(&self, id: TableId, history_from: usize) -> Option<StoredTable> {
        let s = self.by_number.get(&id)?;
        let history = s.table.history_len().map(|len| {
            let from = history_from.min(len);
            StoredHistory { from, entries: s.table.history_since(from) }
        });
        let state = match history {
            Some(_) => s.table.snapshot_text_without_history(),
            None => s.table.snapshot_text(),
        };
        let (dice_name, dice) = s.dice.snapshot_field();
        let quote = |text: &str| serde_json::to_string(text).unwrap_or_default();
        let text = format!(
            r#"{{"table":{id},"room":{},"network":{},"game":{},"{}":{},"sequence":{},"finished":{},"state":{}}}"#,
            quote(s.place.room.as_str()),
            quote(s.place.network.as_str()),
            quote(s.table.game()),
            dice_name,
            dice,
            s.sequence,
            s.table.is_finished(),
            state,
        );
        Some(StoredTable {
            game: s.table.game(),
            network: s.place.network.clone(),
            room: s.place.room.clone(),
            finished: s.table.is_finished(),
            text,
            history,
        })
    }
}

impl std::ops::Index<&TableId> for Tables {
    type Output = Seating;

    fn index(&self, id: &TableId) -> &Seating {
        &self.by_number[id]
    }
}
