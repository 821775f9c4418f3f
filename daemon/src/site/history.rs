//! A table's history as the site shows it, from the journal alone: each accepted action
//! (who, when, the command — or only that it was sent privately — and the seed of the
//! dice it drew from), each timer that fired, each dice key committed to and revealed
//! (RULES T-10), with what the table was told.
//!
//! What the table was told is found by replaying the table from its `Opened` entry, each
//! action given the dice of its recorded seed (as `crate::ratings::replay` does), and
//! having the game render the events it makes: only the events for the whole table, so a
//! Duel wizard's queued spell (their own, private event) never appears; the room learns
//! a spell's tokens from the step that reveals them, and so does the page.

use spellbridge_core::dice::Commitment;
use spellbridge_core::{
    Action, Audience, Dice, Event, Form, GamePlugin, Language, PlayerId, Presentation, Registry, Table,
    Timestamp,
};

use crate::games::{Played, played};
use crate::journal::{Entry, read_command};

/// One row of a table's history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// The action's number at its table (none for the opening and the dice rows).
    pub sequence: Option<u64>,
    /// When it happened (the opening, an action, a timer's due time).
    pub when: Option<Timestamp>,
    /// What it was.
    pub what: What,
    /// What the table was told, one line each.
    pub told: Vec<String>,
}

/// What a history row records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum What {
    /// The table opened with these players.
    Opened {
        /// The players, the opener first.
        seats: Vec<PlayerId>,
        /// The commitment to its first dice key.
        commitment: Option<Commitment>,
    },
    /// A player's command was accepted.
    Acted {
        /// Who.
        actor: PlayerId,
        /// The command as typed, when it was said in the room; `None` when it was sent
        /// privately (only *that* they acted is shown).
        said: Option<String>,
        /// The seed of its dice, when it drew from them.
        seed: Option<u64>,
    },
    /// A timer fired.
    Fired {
        /// The seed of its dice, when it drew from them.
        seed: Option<u64>,
    },
    /// The table took a new dice key and announced its commitment.
    Keyed {
        /// The key's epoch.
        epoch: u64,
        /// Its SHA-256.
        commitment: Commitment,
    },
    /// The table revealed a dice key.
    Revealed {
        /// The key's epoch.
        epoch: u64,
        /// The key, 64 hex digits.
        key: String,
    },
}

/// The history of one table from its journal `entries`; the second value says why the
/// replay stopped early, if it did (the rows are still listed, without what was told).
pub fn rows(registry: &Registry, entries: &[Entry], language: Language) -> (Vec<Row>, Option<String>) {
    let presentation = Presentation::of(Form::Full).in_language(language);
    let mut rows = Vec::with_capacity(entries.len());
    let mut replay = Replay { table: None, problem: None };
    for entry in entries {
        match entry {
            Entry::Opened { game, seats, now, opening, commitment, .. } => {
                let events = replay.open(registry, game, opening);
                rows.push(Row {
                    sequence: None,
                    when: Some(*now),
                    what: What::Opened {
                        seats: seats.iter().map(|seat| seat.player.clone()).collect(),
                        commitment: commitment.clone(),
                    },
                    told: replay.told(events, &presentation),
                });
            }
            Entry::Acted { sequence, actor, typed, private, now, dice_seed, draws, .. } => {
                let events = replay.act(entry);
                rows.push(Row {
                    sequence: Some(*sequence),
                    when: Some(*now),
                    what: What::Acted {
                        actor: actor.clone(),
                        said: (!*private).then(|| typed.clone()),
                        seed: (*draws > 0).then_some(*dice_seed),
                    },
                    told: replay.told(events, &presentation),
                });
            }
            Entry::Fired { sequence, at, dice_seed, draws, .. } => {
                let events = replay.fire(*at, *dice_seed);
                rows.push(Row {
                    sequence: Some(*sequence),
                    when: Some(*at),
                    what: What::Fired { seed: (*draws > 0).then_some(*dice_seed) },
                    told: replay.told(events, &presentation),
                });
            }
            Entry::Keyed { epoch, commitment, .. } => rows.push(Row {
                sequence: None,
                when: None,
                what: What::Keyed { epoch: *epoch, commitment: commitment.clone() },
                told: Vec::new(),
            }),
            Entry::Revealed { epoch, key, .. } => rows.push(Row {
                sequence: None,
                when: None,
                what: What::Revealed { epoch: *epoch, key: key.clone() },
                told: Vec::new(),
            }),
            _ => {}
        }
    }
    (rows, replay.problem)
}

/// The table replayed entry by entry, for what each entry told it. Once it cannot go
/// on, it stays stopped and keeps the first reason why.
struct Replay<'r> {
    /// The game (the build the table plays: [`played`]) and the table as replayed so far;
    /// `None` before the opening or once it cannot be restored.
    table: Option<(Played<'r>, Box<dyn Table>)>,
    /// Why the replay stopped or an entry was skipped, the first time.
    problem: Option<String>,
}

impl<'r> Replay<'r> {
    /// Restores the table from its `Opened` entry's `opening`; the events it opens with.
    fn open(&mut self, registry: &'r Registry, game: &str, opening: &serde_json::Value) -> Vec<Event> {
        self.table = match played(registry, game, opening).map(|plugin| {
            let restored = plugin.restore(opening);
            (plugin, restored)
        }) {
            Some((plugin, Ok(table))) => Some((plugin, table)),
            Some((_, Err(reason))) => {
                self.problem.get_or_insert(format!("the table does not replay: {reason}"));
                None
            }
            None => {
                self.problem.get_or_insert(format!("this spellbridge does not know the game `{game}`"));
                None
            }
        };
        self.table.as_ref().map(|(_, table)| table.opening()).unwrap_or_default()
    }

    /// Plays an `Acted` entry again with the dice of its recorded seed; the events it made.
    fn act(&mut self, entry: &Entry) -> Vec<Event> {
        let (
            Some((_, table)),
            Entry::Acted {
                sequence,
                actor,
                command,
                parsed,
                typed,
                private,
                role,
                now,
                dice_seed,
                events,
                ..
            },
        ) = (self.table.as_mut(), entry)
        else {
            return Vec::new();
        };
        match read_command(table.commands(), parsed.as_ref(), command) {
            Ok(parsed) => {
                let action =
                    Action { actor, command: &parsed, typed, private: *private, now: *now, role: *role };
                let mut dice = Dice::from_seed(*dice_seed);
                table.replay_act(&action, &mut dice, events).unwrap_or_else(|refusal| {
                    self.problem.get_or_insert(format!("action {sequence} was refused on replay: {refusal}"));
                    Vec::new()
                })
            }
            Err(error) => {
                self.problem.get_or_insert(format!("action {sequence} does not read: {error}"));
                Vec::new()
            }
        }
    }

    /// Fires the table's timer due `at` with the dice of its recorded seed; the events.
    fn fire(&mut self, at: Timestamp, dice_seed: u64) -> Vec<Event> {
        match self.table.as_mut() {
            Some((_, table)) => table.fire_timer(at, &mut Dice::from_seed(dice_seed)),
            None => Vec::new(),
        }
    }

    /// What `events` told the whole table, if the table is replaying.
    fn told(&self, events: Vec<Event>, presentation: &Presentation) -> Vec<String> {
        self.table.as_ref().map(|(plugin, _)| to_table(&**plugin, &events, presentation)).unwrap_or_default()
    }
}

/// What `events` told the whole table, one line per announcement line.
fn to_table(plugin: &dyn GamePlugin, events: &[Event], presentation: &Presentation) -> Vec<String> {
    plugin
        .render(events, presentation)
        .into_iter()
        .filter(|announcement| announcement.to == Audience::Table)
        .flat_map(|announcement| announcement.text.plain().lines().map(str::to_owned).collect::<Vec<_>>())
        .filter(|line| !line.trim().is_empty())
        .collect()
}
