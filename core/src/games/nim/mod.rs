//! Nim: two players take turns taking 1 to 3 stones from one of three piles; whoever
//! takes the last stone wins (`RULES.md` in this folder, ids N-1 … N-5).
//!
//! The third game, and the proof that a game is one plugin (issue 32): everything about
//! it is in this folder and `locales/*/nim.ftl`, and it is registered by one line of the
//! list in [`crate::games`].
//!
//! - [`command`]: its grammar ([`COMMANDS`], which makes `!help`) and [`NimCommand`].
//! - [`state`]: the table's state, which is also its snapshot, and the rules.
//! - [`news`]: what a table tells and why it refuses, as data and in words.
//! - [`rules`]: the rules at hand (`!rules`) and the wiki export.
//! - [`ending`]: how a game ended, for ratings, `!stats` and `!top`.
//! - [`view`]: what a spectator sees: the public view, the board picture, its caption, the site's facts.
//!
//! This module holds the plugin: [`NimPlugin`] opens and restores [`NimTable`]s. A table
//! opens with `!new nim` (the opener's seat) and starts when a second player `!join`s.

pub mod command;
pub mod ending;
pub mod news;
pub mod rules;
pub mod state;
pub mod view;

use serde_json::Value;

pub use command::{COMMANDS, NimCommand, Pile};
pub use news::{NimError, NimNews};
pub use state::{FinishReason, Move, Nim};

use crate::dice::Dice;
use crate::ending::{Ending, EndingReader, TableKind};
use crate::event::{Event, Presentation};
use crate::games::Shipped;
use crate::grammar::Command;
use crate::ids::PlayerId;
use crate::language::Language;
use crate::locale::{self, Area};
use crate::plugin::{Action, Announcement, GamePlugin, Refusal, Table, TableSetup};
use crate::time::Timestamp;

/// The Nim game.
#[derive(Clone, Copy, Debug, Default)]
pub struct NimPlugin;

impl Shipped for NimPlugin {
    const CATALOGUE: Option<Area> = Some(Area {
        name: "nim",
        en: include_str!("../../../../locales/en/nim.ftl"),
        zh_cn: include_str!("../../../../locales/zh-CN/nim.ftl"),
    });
    const PHRASES: &'static [(&'static str, &'static str)] = command::PHRASES;
}

impl GamePlugin for NimPlugin {
    fn name(&self) -> &'static str {
        "nim"
    }

    fn summary(&self) -> &'static str {
        "two players take turns taking 1 to 3 stones from one of three piles; whoever takes the last stone wins"
    }

    fn name_in(&self, language: Language) -> String {
        locale::text(language, "nim-name", &locale::Args::new())
    }

    fn summary_in(&self, language: Language) -> String {
        locale::text(language, "nim-summary", &locale::Args::new())
    }

    fn commands(&self) -> &'static [Command] {
        COMMANDS
    }

    fn help_in(&self, command: &str, language: Language) -> Option<String> {
        command::help_id(command).map(|id| locale::text(language, id, &locale::Args::new()))
    }

    fn rules(&self) -> Vec<&'static str> {
        rules::RULES.iter().map(|(id, _)| *id).collect()
    }

    fn rule_in(&self, id: &str, language: Language) -> Option<String> {
        let (_, message) = rules::RULES.iter().find(|(rule, _)| *rule == id)?;
        Some(locale::text(language, message, &locale::Args::new()))
    }

    fn open(&self, setup: &TableSetup) -> Result<Box<dyn Table>, Refusal> {
        let mut seats = setup.seats.iter().map(|s| s.player.clone());
        let opener = seats.next().ok_or_else(|| Refusal::Worded(news::refusal(&NimError::NoOpponent)))?;
        let mut nim = Nim::new(opener);
        // A table opened with both seats (a caller that seats two) starts at once.
        if let Some(second) = seats.next().filter(|p| !nim.players.contains(p)) {
            nim.players.push(second);
        }
        Ok(Box::new(NimTable { nim }))
    }

    fn restore(&self, snapshot: &Value) -> Result<Box<dyn Table>, String> {
        let nim: Nim = serde_json::from_value(snapshot.clone()).map_err(|e| format!("a Nim table: {e}"))?;
        if nim.players.is_empty() || nim.players.len() > 2 || nim.turn >= nim.players.len() {
            return Err(format!("a Nim table: {} players, turn {}", nim.players.len(), nim.turn));
        }
        Ok(Box::new(NimTable { nim }))
    }

    fn render(&self, events: &[Event], presentation: &Presentation) -> Vec<Announcement> {
        news::render(events, presentation)
    }

    fn wiki(&self, state: &Value) -> Option<String> {
        Some(rules::wiki(state))
    }

    /// Decision: a game between two with a winner and a loser is rated pairwise, like a
    /// challenge, though its table is opened with `!new nim` and joined.
    fn kind(&self) -> TableKind {
        TableKind::Challenge { seats: 2 }
    }

    fn ending_reader(&self) -> Option<Box<dyn EndingReader>> {
        Some(Box::new(ending::NimEndings::default()))
    }

    fn public_view(&self, state: &Value) -> Option<Value> {
        view::public_view(state)
    }

    fn board(&self, public: &Value, language: Language) -> Option<Result<crate::draw::Drawing, String>> {
        Some(view::drawing(public, language))
    }

    fn caption(&self, table: u64, public: &Value, language: Language) -> Option<String> {
        Some(view::caption(table, public, language))
    }

    fn redraws(&self, events: &[Event]) -> bool {
        view::redraws(events)
    }

    fn facts(&self, public: &Value, language: Language) -> crate::facts::Facts {
        view::facts(public, language)
    }
}

/// A running game of Nim at a table.
#[derive(Clone, Debug)]
pub struct NimTable {
    nim: Nim,
}

impl NimTable {
    /// The state.
    pub fn nim(&self) -> &Nim {
        &self.nim
    }
}

impl Table for NimTable {
    fn game(&self) -> &'static str {
        "nim"
    }

    fn opening(&self) -> Vec<Event> {
        let player = self.nim.players[0].clone();
        let mut news = vec![Event::table(NimNews::Opened { player, piles: self.nim.piles })];
        if let [first, second] = self.nim.players.as_slice() {
            let joined = NimNews::Joined { player: second.clone(), first: first.clone(), piles: self.nim.piles };
            news.push(Event::table(joined));
        }
        news
    }

    fn commands(&self) -> &'static [Command] {
        COMMANDS
    }

    fn act(&mut self, action: &Action<'_>, _dice: &mut Dice) -> Result<Vec<Event>, Refusal> {
        let command = NimCommand::from_parsed(action.command)
            .ok_or_else(|| Refusal::UnknownCommand(action.command.name().to_owned()))?;
        let news = self
            .nim
            .apply(action.actor, action.role, command)
            .map_err(|error| Refusal::Worded(news::refusal(&error)))?;
        Ok(news.into_iter().map(Event::table).collect())
    }

    fn next_timer(&self) -> Option<Timestamp> {
        None
    }

    fn fire_timer(&mut self, _at: Timestamp, _dice: &mut Dice) -> Vec<Event> {
        Vec::new()
    }

    fn is_finished(&self) -> bool {
        self.nim.finished
    }

    fn players(&self) -> Vec<PlayerId> {
        self.nim.players.clone()
    }

    fn ending(&self) -> Option<Ending> {
        let conceded = self.nim.finish_reason == Some(FinishReason::Conceded);
        ending::of(&self.nim.players, self.nim.winner.as_ref()?, conceded)
    }

    fn snapshot(&self) -> Value {
        serde_json::to_value(&self.nim).unwrap_or(Value::Null)
    }

    fn snapshot_text(&self) -> String {
        serde_json::to_string(&self.nim).unwrap_or_default()
    }

    fn boxed_clone(&self) -> Box<dyn Table> {
        Box::new(self.clone())
    }
}

#[cfg(test)]
mod tests;
