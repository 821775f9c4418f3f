//! One table's endings as the ratings read them: the game's own
//! [`EndingReader`] (its plugin's `ending_reader`) and what kind of table it is, shared by
//! the tables read from their journaled events (`endings`) and the ones replayed
//! (`replay`).

use spellbridge_core::{EndingReader, EventRecord, Registry, TableKind};

use crate::journal::TableId;

/// How one game at a table ended, as the ratings need it: what the game says
/// ([`spellbridge_core::Ending`]), with the table and what kind of table it was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ending {
    /// The table's game (its plugin's `name()`): the pool the ending is rated in.
    pub game: String,
    /// The table.
    pub table: TableId,
    /// What kind of table (a challenge is rated pairwise, an open table by standings).
    pub kind: TableKind,
    /// What the game says ended.
    pub ending: spellbridge_core::Ending,
}

/// One table's reader and what kind of table it is.
#[derive(Debug)]
pub struct Reading {
    /// The table's game (its plugin's `name()`).
    pub game: String,
    /// What kind of table it is.
    pub kind: TableKind,
    /// The game's reader of its endings.
    pub reader: Box<dyn EndingReader>,
}

impl Clone for Reading {
    fn clone(&self) -> Self {
        Reading { game: self.game.clone(), kind: self.kind, reader: self.reader.boxed_clone() }
    }
}

impl Reading {
    /// A reader for a table of `game`, if this build knows the game and it rates endings.
    pub fn of(registry: &Registry, game: &str) -> Option<Reading> {
        let plugin = registry.get(game)?;
        plugin.ending_reader().map(|reader| Reading {
            game: plugin.name().to_owned(),
            kind: plugin.kind(),
            reader,
        })
    }

    /// The endings `events` tell, in order.
    pub fn read<'a>(
        &mut self,
        table: TableId,
        events: impl IntoIterator<Item = &'a EventRecord>,
    ) -> Vec<Ending> {
        let kind = self.kind;
        let game = &self.game;
        events
            .into_iter()
            .filter_map(|event| self.reader.read(event))
            .map(|ending| Ending { game: game.clone(), table, kind, ending })
            .collect()
    }
}
