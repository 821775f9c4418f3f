//! Duel: two wizards cast element spells in hidden steps and push a shared victory track
//! (RULES.md Game 2, ids D-1 … D-13).
//!
//! - [`element`]: the six elements, the circle, conflicts (D-3) and opposites (D-6).
//! - [`token`] and [`command`]: what players type, parsed into types.
//! - [`wizard`]: wizards and their pools as data (D-13), from `config/wizards.toml`.
//! - [`spell`]: a spell as cast and its measures: level, attribute, seal (D-10),
//!   explosion (D-12).
//! - [`settle`]: the pure settlement of a round, in RULES order.
//! - [`round`]: one round's casting per wizard: queue, validation, concentration checks.
//! - [`engine`]: the duel's state and [`Duel::apply`] / [`Duel::fire_timer`].
//! - [`snapshot`]: the state as CONTRACT.md's JSON, and back.
//! - [`news`]: what a table tells ([`DuelNews`]), each event for the table or one player.
//! - [`render`]: news and refusals as rich text, per destination.
//! - [`public`]: what a spectator may see: the public view (hidden moves left out), the
//!   board picture's caption, the site's facts.
//! - [`board`]: the board picture, drawn from the public view.
//! - [`config`]: the `[games.duel]` options (and the challenge lifetime), and the wiki export.
//!
//! This module holds the plugin: [`DuelPlugin`] opens and restores [`DuelTable`]s.
//!
//! Decisions where RULES is silent are marked `Decision` in the code; the main ones:
//! a wizard's level for a Full Counter is the level as cast; a countered spell records
//! level 0; both Full Counters succeeding cancel both spells; `!status` is open to
//! spectators (it shows only what has been revealed); a round in which neither wizard
//! queued anything ends the duel as abandoned (the track decides, like D-2); `!stop` is
//! for the room's operators, game masters and bot admins (as the daemon judges the
//! actor's [`Role`](crate::plugin::Role)) and ends the duel with no winner
//! (`winner` null, `finish_reason` `stopped`); a player leaves with `!concede`.

pub mod board;
pub mod command;
pub mod config;
pub mod element;
pub mod ending;
pub mod engine;
pub mod error;
pub mod news;
pub mod public;
pub mod render;
pub mod round;
pub mod rules;
pub mod settle;
pub mod snapshot;
pub mod spell;
pub mod token;
pub mod wizard;

use serde_json::Value;

pub use command::{COMMANDS, DuelCommand};
pub use element::Element;
pub use engine::{Duel, DuelEvent, DuelRules, Finish, FinishReason};
pub use error::DuelError;
pub use news::{DuelNews, DuelView};
pub use spell::{Seal, Spell};
pub use token::{Preconditioning, Token};
pub use wizard::{Favour, Pool, Wizard, WizardError, Wizards};

use crate::dice::Dice;
use crate::ending::{Ending, EndingReader, RecordWords, TableKind};
use crate::event::{Event, Presentation};
use crate::grammar::Command;
use crate::ids::PlayerId;
use crate::language::Language;
use crate::locale;
use crate::options::{CHALLENGE_LIFETIME_SECS, Challenge, GameOptions};
use crate::plugin::{Action, Announcement, ChallengeWords, GamePlugin, Refusal, Table, TableSetup};
use crate::text::RichText;
use crate::time::Timestamp;
use crate::words;

/// How Duel tables are played on this bot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DuelOptions {
    /// Seconds a step waits before RULES D-9 places tokens for a wizard (default 600).
    pub step_timeout_secs: i64,
    /// The concentration sequence (default `[4, 4, 3, 2, 2]`; RULES D-8).
    pub concentration: Vec<u8>,
    /// The sequence under Focused Casting (default `[3, 3, 2, 2, 2]`; RULES D-5).
    pub focused: Vec<u8>,
    /// End a duel after a round in which neither wizard cast anything (default true).
    pub end_when_idle: bool,
    /// The wizards players may choose (RULES D-13).
    pub wizards: Wizards,
}

impl Default for DuelOptions {
    fn default() -> Self {
        let rules = DuelRules::default();
        DuelOptions {
            step_timeout_secs: rules.step_timeout_secs,
            concentration: rules.concentration,
            focused: rules.focused,
            end_when_idle: rules.end_when_idle,
            wizards: Wizards::default(),
        }
    }
}

impl DuelOptions {
    /// The rules a new table copies into its state. An empty sequence falls back to the
    /// default one; a timeout below one second becomes one second.
    pub fn rules(&self) -> DuelRules {
        let defaults = DuelRules::default();
        let sequence = |given: &Vec<u8>, default: Vec<u8>| {
            if given.is_empty() { default } else { given.iter().map(|n| (*n).clamp(1, 7)).collect() }
        };
        DuelRules {
            step_timeout_secs: self.step_timeout_secs.max(1),
            concentration: sequence(&self.concentration, defaults.concentration),
            focused: sequence(&self.focused, defaults.focused),
            end_when_idle: self.end_when_idle,
        }
    }
}

/// The Duel game.
#[derive(Debug)]
pub struct DuelPlugin {
    options: DuelOptions,
    /// How long a `!duel` challenge waits for an answer, in seconds.
    challenge_lifetime: i64,
}

impl Default for DuelPlugin {
    fn default() -> Self {
        DuelPlugin::new(DuelOptions::default())
    }
}

impl DuelPlugin {
    /// The Duel with these options.
    pub fn new(options: DuelOptions) -> Self {
        DuelPlugin { options, challenge_lifetime: CHALLENGE_LIFETIME_SECS }
    }

    /// The options in force.
    pub fn options(&self) -> &DuelOptions {
        &self.options
    }

    /// Opens a duel as the typed engine (what [`GamePlugin::open`] wraps).
    pub fn open_duel(&self, setup: &TableSetup) -> Result<Duel, DuelError> {
        let [first, second] = match setup.seats.as_slice() {
            [a, b] => [a, b],
            seats => return Err(DuelError::Seats { count: seats.len() }),
        };
        if first.player == second.player {
            return Err(DuelError::SamePlayer(first.player.clone()));
        }
        let wizards = &self.options.wizards;
        let choose = |choice: &Option<String>| -> Result<Wizard, DuelError> {
            match choice.as_deref().map(str::trim).filter(|c| !c.is_empty()) {
                None => Ok(wizards.apprentice()),
                Some(name) => wizards.get(name).cloned().ok_or_else(|| DuelError::UnknownWizard {
                    name: name.to_owned(),
                    suggestion: wizards.nearest(name).map(str::to_owned),
                    known: wizards.iter().map(|w| w.name.clone()).collect(),
                }),
            }
        };
        let chosen = [choose(&first.choice)?, choose(&second.choice)?];
        Duel::new([first.player.clone(), second.player.clone()], chosen, self.options.rules(), setup.now)
    }
}

fn refusal(error: DuelError) -> Refusal {
    match error {
        DuelError::UnknownCommand(word) => Refusal::UnknownCommand(word),
        other => Refusal::Worded(render::refusal(&other)),
    }
}

impl GamePlugin for DuelPlugin {
    fn name(&self) -> &'static str {
        "duel"
    }

    fn summary(&self) -> &'static str {
        "two wizards cast element spells in hidden steps and push a shared victory track to 30"
    }

    fn commands(&self) -> &'static [Command] {
        COMMANDS
    }

    fn name_in(&self, language: Language) -> String {
        locale::text(language, "duel-name", &locale::Args::new())
    }

    fn summary_in(&self, language: Language) -> String {
        locale::text(language, "duel-summary", &locale::Args::new())
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
        let duel = self.open_duel(setup).map_err(refusal)?;
        Ok(Box::new(DuelTable { duel }))
    }

    fn restore(&self, snapshot: &Value) -> Result<Box<dyn Table>, String> {
        Ok(Box::new(DuelTable { duel: Duel::restore(snapshot)? }))
    }

    fn render(&self, events: &[Event], presentation: &Presentation) -> Vec<Announcement> {
        render::events(events, presentation)
    }

    fn lobby(&self, command: &str) -> Option<RichText> {
        self.lobby_in(command, Language::En)
    }

    fn lobby_in(&self, command: &str, language: Language) -> Option<RichText> {
        let (head, _) = words::split(command);
        (head == "wizards").then(|| render::wizard_list(language, &self.options.wizards))
    }

    fn configure(&self, options: &GameOptions<'_>) -> Result<Option<Box<dyn GamePlugin>>, String> {
        let (options, challenge_lifetime) = config::options(options)?;
        Ok(Some(Box::new(DuelPlugin { options, challenge_lifetime })))
    }

    fn challenge(&self) -> Option<Challenge> {
        Some(Challenge { lifetime_secs: self.challenge_lifetime })
    }

    fn challenge_command(&self) -> Option<&'static Command> {
        Some(&command::CHALLENGE)
    }

    fn lobby_commands(&self) -> &'static [Command] {
        command::LOBBY
    }

    fn challenge_words(&self) -> Option<ChallengeWords> {
        Some(ChallengeWords {
            challenge: "duel-challenge",
            challenge_as: "duel-challenge-as",
            declined: "duel-challenge-declined",
            yourself: "duel-challenge-self",
        })
    }

    fn wiki(&self, state: &Value) -> Option<String> {
        Some(config::wiki(state))
    }

    fn kind(&self) -> TableKind {
        TableKind::Challenge { seats: 2 }
    }

    fn ending_reader(&self) -> Option<Box<dyn EndingReader>> {
        Some(Box::new(ending::DuelEndings::default()))
    }

    fn choice_in(&self, choice: &str, language: Language) -> String {
        wizard::name_in(choice, language)
    }

    fn public_view(&self, state: &Value) -> Option<Value> {
        Some(public::view(state))
    }

    fn board(&self, public: &Value, language: Language) -> Option<Result<crate::draw::Drawing, String>> {
        Some(board::drawing(public, language))
    }

    fn caption(&self, table: u64, public: &Value, language: Language) -> Option<String> {
        Some(public::caption(table, public, language))
    }

    fn redraws(&self, events: &[Event]) -> bool {
        events.iter().filter(|event| event.to == crate::plugin::Audience::Table).any(|event| {
            matches!(
                event.get::<DuelNews>(),
                Some(DuelNews::Settled { .. } | DuelNews::Finished { .. } | DuelNews::Stopped { .. })
            )
        })
    }

    fn facts(&self, public: &Value, language: Language) -> crate::facts::Facts {
        public::facts(public, language)
    }

    fn record_words(&self) -> Option<RecordWords> {
        Some(RecordWords {
            record: "duel-record",
            best: None,
            top: "duel-top",
            top_entry: "duel-top-entry",
            top_none: "duel-top-none",
            top_few: "duel-top-few",
            board: "duel-board",
        })
    }
}

/// A running duel at a table.
#[derive(Clone, Debug)]
pub struct DuelTable {
    duel: Duel,
}

impl DuelTable {
    /// The engine state.
    pub fn duel(&self) -> &Duel {
        &self.duel
    }
}

impl Table for DuelTable {
    fn game(&self) -> &'static str {
        "duel"
    }

    fn opening(&self) -> Vec<Event> {
        vec![Event::table(DuelNews::Opened { view: DuelView::of(&self.duel) })]
    }

    fn commands(&self) -> &'static [Command] {
        COMMANDS
    }

    fn act(&mut self, action: &Action<'_>, dice: &mut Dice) -> Result<Vec<Event>, Refusal> {
        // A cast in a room is refused before its tokens are read, so no reply echoes them
        // (the grammar declares it typed privately: the name is not compared again).
        if action.command.command().private && !action.private {
            // Answered privately: where the player is to cast (a Matrix player who has no
            // direct chat with the bot gets one opened by this answer).
            return Err(Refusal::Privately(render::refusal(&DuelError::PublicCast)));
        }
        let command = DuelCommand::from_parsed(action.command)
            .ok_or_else(|| Refusal::UnknownCommand(action.command.name().to_owned()))?
            .map_err(refusal)?;
        let events =
            self.duel.apply(action.actor, action.role, &command, action.now, dice).map_err(|error| {
                match error {
                    DuelError::UnknownCommand(word) => Refusal::UnknownCommand(word),
                    other => Refusal::Worded(render::refusal_in(&DuelView::of(&self.duel), &other)),
                }
            })?;
        Ok(news::told(&self.duel, &events, action.private))
    }

    fn next_timer(&self) -> Option<Timestamp> {
        self.duel.next_timer()
    }

    fn fire_timer(&mut self, at: Timestamp, dice: &mut Dice) -> Vec<Event> {
        let events = self.duel.fire_timer(at, dice);
        news::told(&self.duel, &events, false)
    }

    /// The round whose steps `events` reveal or settle (its first): one round's steps,
    /// settlement and the next round's start are one story, however many casts reveal them.
    fn story(&self, events: &[Event]) -> Option<String> {
        events.iter().find_map(|event| match event.get::<DuelNews>()? {
            DuelNews::Step { round, .. } => Some(format!("round {round}")),
            DuelNews::Settled { round, .. } => Some(format!("round {}", round.number)),
            _ => None,
        })
    }

    fn is_finished(&self) -> bool {
        self.duel.finish().is_some()
    }

    fn players(&self) -> Vec<PlayerId> {
        self.duel.players().to_vec()
    }

    fn snapshot(&self) -> Value {
        self.duel.snapshot()
    }

    fn boxed_clone(&self) -> Box<dyn Table> {
        Box::new(self.clone())
    }

    fn ending(&self) -> Option<Ending> {
        ending::of(self.duel.finish()?, &DuelView::of(&self.duel))
    }

    fn choice(&self, player: &PlayerId) -> Option<String> {
        self.duel.seat(player).map(|seat| self.duel.wizards()[seat].name.clone())
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod public_tests;
