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
    let mut replay: Option<(&dyn GamePlugin, Box<dyn Table>)> = None;
    let mut problem = None;
    let told = |replay: &Option<(&dyn GamePlugin, Box<dyn Table>)>, events: Vec<Event>| -> Vec<String> {
        replay.as_ref().map(|(plugin, _)| to_table(*plugin, &events, &presentation)).unwrap_or_default()
    };
    for entry in entries {
        match entry {
            Entry::Opened { game, seats, now, opening, commitment, .. } => {
                replay = match registry.get(game).map(|plugin| (plugin, plugin.restore(opening))) {
                    Some((plugin, Ok(table))) => Some((plugin, table)),
                    Some((_, Err(reason))) => {
                        problem.get_or_insert(format!("the table does not replay: {reason}"));
                        None
                    }
                    None => {
                        problem.get_or_insert(format!("this spellbridge does not know the game `{game}`"));
                        None
                    }
                };
                let events = replay.as_ref().map(|(_, table)| table.opening()).unwrap_or_default();
                rows.push(Row {
                    sequence: None,
                    when: Some(*now),
                    what: What::Opened {
                        seats: seats.iter().map(|seat| seat.player.clone()).collect(),
                        commitment: commitment.clone(),
                    },
                    told: told(&replay, events),
                });
            }
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
                draws,
                ..
            } => {
                let events = match replay.as_mut() {
                    Some((_, table)) => match read_command(table.commands(), parsed.as_ref(), command) {
                        Ok(parsed) => {
                            let action = Action {
                                actor,
                                command: &parsed,
                                typed,
                                private: *private,
                                now: *now,
                                role: *role,
                            };
                            table.act(&action, &mut Dice::from_seed(*dice_seed)).unwrap_or_else(|refusal| {
                                problem.get_or_insert(format!(
                                    "action {sequence} was refused on replay: {refusal}"
                                ));
                                Vec::new()
                            })
                        }
                        Err(error) => {
                            problem.get_or_insert(format!("action {sequence} does not read: {error}"));
                            Vec::new()
                        }
                    },
                    None => Vec::new(),
                };
                rows.push(Row {
                    sequence: Some(*sequence),
                    when: Some(*now),
                    what: What::Acted {
                        actor: actor.clone(),
                        said: (!*private).then(|| typed.clone()),
                        seed: (*draws > 0).then_some(*dice_seed),
                    },
                    told: told(&replay, events),
                });
            }
            Entry::Fired { sequence, at, dice_seed, draws, .. } => {
                let events = match replay.as_mut() {
                    Some((_, table)) => table.fire_timer(*at, &mut Dice::from_seed(*dice_seed)),
                    None => Vec::new(),
                };
                rows.push(Row {
                    sequence: Some(*sequence),
                    when: Some(*at),
                    what: What::Fired { seed: (*draws > 0).then_some(*dice_seed) },
                    told: told(&replay, events),
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
    (rows, problem)
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
