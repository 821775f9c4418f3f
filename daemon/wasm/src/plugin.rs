//! A loaded component behind core's plugin traits: [`WasmGame`] is its
//! [`GamePlugin`], [`WasmTable`] one of its tables. A table's snapshot is the component's
//! hash and its state bytes (base64), so the journal, snapshots and replay keep working,
//! and a table restored under a different build of the game is refused by name.
//!
//! Every output is checked before it is used: a state or view too large, too many news, a
//! state the component cannot read back itself. A failed call refuses that one action
//! with what went wrong; the table keeps the state it had, and every other table goes on.

use std::sync::Arc;

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use spellbridge_core::dice::Dice;
use spellbridge_core::draw::Drawing;
use spellbridge_core::ending::{EndingReader, Place};
use spellbridge_core::event::{Event, Presentation};
use spellbridge_core::grammar::{Command, Parsed};
use spellbridge_core::locale::Args;
use spellbridge_core::plugin::{
    Action, Announcement, Audience, GamePlugin, Refusal, Role, Table, TableSetup,
};
use spellbridge_core::{Ending, EventRecord, Language, PlayerId, RichText, TableKind, Timestamp};

use crate::archive::Archive;
use crate::bindings::spellbridge::game::types as wit;
use crate::ending::Ended;
use crate::grammar::{RESUME, RESUME_HELP, VIEW, VIEW_HELP};
use crate::load::LoadError;
use crate::run::{CallError, Deadline, Runner};
use crate::texts::Texts;

/// What a component's table told, as the journal keeps it: a message of its texts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WasmNews {
    /// The message id (`nim-took`).
    pub id: String,
    /// Its arguments, by name.
    pub args: Vec<(String, String)>,
}

/// What the plugin and its tables share: the runner and what was read at load.
struct Shared {
    runner: Arc<Runner>,
    hash: String,
    imports: Vec<String>,
    name: &'static str,
    summary: &'static str,
    commands: &'static [Command],
    help: Vec<(String, String)>,
    kind: TableKind,
    texts: Texts,
}

/// A game loaded from a component, with the options its tables open with.
#[derive(Clone)]
pub struct WasmGame {
    shared: Arc<Shared>,
    /// The options of its `[[game]]` section as TOML text (`open`'s `options`).
    options: Arc<str>,
    /// Where the builds its tables were played with are kept, if anywhere.
    archive: Option<Arc<Archive>>,
}

impl std::fmt::Debug for WasmGame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "WasmGame({} {})", self.shared.name, self.shared.hash)
    }
}

fn is_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 32
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

fn language(language: Language) -> wit::Language {
    match language {
        Language::En => wit::Language::En,
        Language::ZhCn => wit::Language::ZhCn,
    }
}

impl WasmGame {
    /// Reads the component's description (info and texts) and checks it.
    pub(crate) fn new(
        runner: Arc<Runner>,
        hash: String,
        imports: Vec<String>,
    ) -> Result<WasmGame, LoadError> {
        let info = runner
            .call(|store, game| game.call_describe(store))
            .map_err(|e| LoadError::Info(e.to_string()))?;
        if !is_name(&info.name) {
            return Err(LoadError::Info(format!(
                "its name {:?} is not 1 to 32 lower-case ASCII letters, digits or `-`",
                info.name.chars().take(40).collect::<String>()
            )));
        }
        let (commands, help) = crate::grammar::commands(&info.commands).map_err(LoadError::Info)?;
        let mut sources = Vec::new();
        for lang in Language::ALL {
            let source = runner
                .call(|store, game| game.call_texts(store, language(lang)))
                .map_err(|e| LoadError::Info(e.to_string()))?;
            sources.push((lang, source));
        }
        let texts = Texts::new(sources).map_err(LoadError::Info)?;
        let kind = match info.kind {
            wit::TableKind::Open => TableKind::Open,
            wit::TableKind::Challenge(seats) => TableKind::Challenge { seats: usize::from(seats.max(2)) },
        };
        let name: &'static str = Box::leak(info.name.into_boxed_str());
        let summary: &'static str =
            Box::leak(info.summary.chars().take(400).collect::<String>().into_boxed_str());
        Ok(WasmGame {
            shared: Arc::new(Shared { runner, hash, imports, name, summary, commands, help, kind, texts }),
            options: Arc::from(""),
            archive: None,
        })
    }

    /// The same game whose tables open with `options` (TOML text: the `[[game]]`
    /// section's `options` table), which the component reads and may refuse at `open`.
    pub fn with_options(&self, options: &str) -> WasmGame {
        WasmGame { options: Arc::from(options), ..self.clone() }
    }

    /// The same game restoring a table played with another build from `archive`.
    pub fn with_archive(&self, archive: Arc<Archive>) -> WasmGame {
        WasmGame { archive: Some(archive), ..self.clone() }
    }

    /// The SHA-256 of the component's bytes (a table records it).
    pub fn hash(&self) -> &str {
        &self.shared.hash
    }

    /// What the component imports (each one the host gave it).
    pub fn imports(&self) -> &[String] {
        &self.shared.imports
    }

    /// The runner its calls go through.
    pub fn runner(&self) -> &Runner {
        &self.shared.runner
    }

    /// True when the game's texts have message `id` in every language.
    pub fn has_text(&self, id: &str) -> bool {
        self.shared.texts.has(id)
    }

    /// The help ids the commands name.
    pub fn help_ids(&self) -> &[(String, String)] {
        &self.shared.help
    }

    /// A table of this game at `state`, read back through the component (held to the
    /// epoch deadline or not: a state kept in a snapshot or the journal is read back
    /// without it, so a restart or a replay on a slower machine reads it all the same).
    fn table(
        &self,
        state: Vec<u8>,
        opening: Vec<Event>,
        paused: Option<String>,
        deadline: Deadline,
    ) -> Result<WasmTable, String> {
        let status = self.shared.status(&state, deadline).map_err(|unread| unread.said)?;
        Ok(WasmTable { shared: self.shared.clone(), state, status, opening, paused })
    }
}

/// A state the component did not read back: what to say, and how the call failed, if
/// it did.
struct Unread {
    said: String,
    failed: Option<CallError>,
}

impl Unread {
    fn said(said: String) -> Unread {
        Unread { said, failed: None }
    }
}

impl Shared {
    /// What `state` says of itself, through the component; refuses a state it cannot read.
    fn status(&self, state: &[u8], deadline: Deadline) -> Result<wit::Status, Unread> {
        let limits = self.runner.limits();
        match self.runner.call_within(deadline, |store, game| game.call_check_state(store, state)) {
            Err(error) => Err(Unread {
                said: format!("the {} game component failed reading its state: {error}", self.name),
                failed: Some(error),
            }),
            Ok(Err(why)) => Err(Unread::said(format!(
                "the {} game component cannot read the state it was given: {}",
                self.name,
                why.chars().take(300).collect::<String>()
            ))),
            Ok(Ok(status))
                if status.players.len() > limits.news || status.game_masters.len() > limits.news =>
            {
                let said =
                    format!("the {} game component named more than {} players", self.name, limits.news);
                Err(Unread::said(said))
            }
            Ok(Ok(status)) => Ok(status),
        }
    }

    /// Checks an outcome's size and turns its news into events.
    fn outcome(&self, outcome: wit::Outcome) -> Result<(Vec<u8>, Vec<Event>), CallError> {
        let limits = self.runner.limits();
        if outcome.state.len() > limits.output {
            return Err(CallError::Answer(format!(
                "a state of {} bytes (at most {})",
                outcome.state.len(),
                limits.output
            )));
        }
        if outcome.news.len() > limits.news {
            return Err(CallError::Answer(format!("{} news (at most {})", outcome.news.len(), limits.news)));
        }
        let mut events = Vec::with_capacity(outcome.news.len());
        for news in outcome.news {
            let size: usize = news.id.len() + news.args.iter().map(|(k, v)| k.len() + v.len()).sum::<usize>();
            if size > 4096 {
                return Err(CallError::Answer(format!("a news of {size} bytes (at most 4096)")));
            }
            let to = match news.to {
                wit::Audience::Table => Audience::Table,
                wit::Audience::Player(name) => Audience::Player(PlayerId::new(name)),
            };
            events.push(Event::to(to, WasmNews { id: news.id, args: news.args }));
        }
        Ok((outcome.state, events))
    }

    /// The refusal said when a call failed: the action is not applied, and the table is
    /// paused (`id` `component-failed`) or was already (`component-paused`).
    fn failed(&self, error: &CallError) -> Refusal {
        self.said("component-failed", Some(&error.to_string()))
    }

    /// The host's refusal `id`, naming the game and, for a failure, what went wrong.
    fn said(&self, id: &'static str, error: Option<&str>) -> Refusal {
        let mut args = Args::new();
        if let Some(error) = error {
            let error: String = error.chars().filter(|c| !c.is_control()).take(300).collect();
            args = args.text("game", self.name).text("error", error);
        }
        Refusal::Worded(spellbridge_core::locale::Localized::new(|language| {
            spellbridge_core::locale::rich(language, id, &args)
        }))
    }

    fn refusal(&self, refusal: wit::Refusal) -> Refusal {
        let said = spellbridge_core::locale::Localized::new(|language| {
            RichText::from(self.texts.say(language, &refusal.id, &refusal.args))
        });
        Refusal::Worded(said)
    }
}

#[derive(Serialize, Deserialize)]
struct Snapshot {
    component: String,
    state: String,
    /// What the table told when it opened, so a replay restores the same opening.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    opening: Vec<EventRecord>,
    /// Why the table is paused, if it is ([`WasmTable`]'s `paused`), so a restart keeps it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    paused: Option<String>,
}

impl GamePlugin for WasmGame {
    fn name(&self) -> &'static str {
        self.shared.name
    }

    fn summary(&self) -> &'static str {
        self.shared.summary
    }

    fn commands(&self) -> &'static [Command] {
        self.shared.commands
    }

    fn help_in(&self, command: &str, language: Language) -> Option<String> {
        if command == RESUME.name {
            return Some(spellbridge_core::locale::text(language, RESUME_HELP, &Args::new()));
        }
        if command == VIEW.name {
            return Some(spellbridge_core::locale::text(language, VIEW_HELP, &Args::new()));
        }
        let (_, id) = self.shared.help.iter().find(|(name, _)| name == command)?;
        Some(self.shared.texts.say(language, id, &[]))
    }

    /// Without the table's dice (a tool's trial opening) the seed is 0.
    fn open(&self, setup: &TableSetup) -> Result<Box<dyn Table>, Refusal> {
        self.open_with_dice(setup, &mut Dice::from_seed(0))
    }

    /// The component's `open` gets the seed of the table's committed dice (RULES T-10)
    /// and the `[[game]]` options.
    fn open_with_dice(&self, setup: &TableSetup, dice: &mut Dice) -> Result<Box<dyn Table>, Refusal> {
        let players: Vec<String> = setup.seats.iter().map(|s| s.player.as_str().to_owned()).collect();
        let seed = dice.seed();
        let options = &*self.options;
        let answer = self
            .shared
            .runner
            .call(|store, game| game.call_open(store, &players, options, seed, setup.now.0));
        let outcome = match answer {
            Err(error) => return Err(self.shared.failed(&error)),
            Ok(Err(refusal)) => return Err(self.shared.refusal(refusal)),
            Ok(Ok(outcome)) => outcome,
        };
        let (state, opening) = self.shared.outcome(outcome).map_err(|e| self.shared.failed(&e))?;
        let table = self.table(state, opening, None, Deadline::Held).map_err(Refusal::because)?;
        Ok(Box::new(table))
    }

    fn restore(&self, value: &Value) -> Result<Box<dyn Table>, String> {
        let snapshot: Snapshot = serde_json::from_value(value.clone())
            .map_err(|e| format!("a {} table's snapshot: {e}", self.shared.name))?;
        if snapshot.component != self.shared.hash
            && let Some(archive) = &self.archive
        {
            // A table keeps the build it opened with (issue 33, item 3).
            let build = archive.game(&snapshot.component, &self.options)?;
            if build.name() != self.name() {
                return Err(format!(
                    "a {} table names build {}, which is the game `{}`",
                    self.shared.name,
                    snapshot.component,
                    build.name()
                ));
            }
            return build.restore(value);
        }
        if snapshot.component != self.shared.hash {
            return Err(format!(
                "a {} table was played with component {}, and the one loaded is {}: load that build to go on",
                self.shared.name, snapshot.component, self.shared.hash
            ));
        }
        let state = base64::engine::general_purpose::STANDARD
            .decode(snapshot.state)
            .map_err(|e| format!("a {} table's state: {e}", self.shared.name))?;
        let opening = snapshot
            .opening
            .into_iter()
            .map(|record| {
                let news: WasmNews = serde_json::from_value(record.event)
                    .map_err(|e| format!("a {} table's opening: {e}", self.shared.name))?;
                Ok(Event::to(record.to, news))
            })
            .collect::<Result<_, String>>()?;
        Ok(Box::new(self.table(state, opening, snapshot.paused, Deadline::Lifted)?))
    }

    /// The build a snapshot names, from the archive, as [`GamePlugin::restore`] finds it.
    fn build_of(&self, snapshot: &Value) -> Option<Arc<dyn GamePlugin>> {
        let hash = snapshot.get("component")?.as_str()?;
        if hash == self.shared.hash {
            return None;
        }
        let build = self.archive.as_ref()?.game(hash, &self.options).ok()?;
        (build.name() == self.name()).then(|| Arc::new(build) as Arc<dyn GamePlugin>)
    }

    fn render(&self, events: &[Event], presentation: &Presentation) -> Vec<Announcement> {
        events
            .iter()
            .filter_map(|event| {
                if let Some(resumed) = event.get::<Resumed>() {
                    let args = Args::new().name("player", &resumed.resumed).text("game", self.shared.name);
                    let text =
                        spellbridge_core::locale::rich(presentation.language, "component-resumed", &args);
                    return Some(Announcement::to(event.to.clone(), text));
                }
                if let Some(paused) = event.get::<Paused>() {
                    let args = Args::new().text("game", self.shared.name).text("error", &paused.paused);
                    let text =
                        spellbridge_core::locale::rich(presentation.language, "component-failed", &args);
                    return Some(Announcement::to(event.to.clone(), text));
                }
                if let Some(view) = event.get::<Viewed>() {
                    let text = match &view.said {
                        Some(said) => self.shared.texts.say(presentation.language, &said.id, &said.args),
                        None => {
                            format!("`{}`", spellbridge_core::shown::escaped(&view.view.replace('`', "'")))
                        }
                    };
                    return Some(Announcement::to(event.to.clone(), RichText::from(text)));
                }
                let news = event.get::<WasmNews>()?;
                let text = self.shared.texts.say(presentation.language, &news.id, &news.args);
                Some(Announcement::to(event.to.clone(), RichText::from(text)))
            })
            .collect()
    }

    fn kind(&self) -> TableKind {
        self.shared.kind
    }

    /// The component's `board` SVG, read into core's drawing vocabulary ([`crate::board`]):
    /// the daemon draws it as it draws a built-in game's board.
    fn board(&self, public: &Value, lang: Language) -> Option<Result<Drawing, String>> {
        let view = serde_json::to_string(public).ok()?;
        let name = self.shared.name;
        match self.shared.runner.call(|store, game| game.call_board(store, &view, language(lang))) {
            Err(error) => Some(Err(format!("the {name} game's board failed: {error}"))),
            Ok(None) => None,
            Ok(Some(svg)) => Some(
                crate::board::drawing(&svg).map_err(|e| format!("the {name} game's board was refused: {e}")),
            ),
        }
    }

    /// A new picture after anything the whole table heard.
    fn redraws(&self, events: &[Event]) -> bool {
        events
            .iter()
            .any(|e| e.to == Audience::Table && (e.get::<WasmNews>().is_some() || e.get::<Ended>().is_some()))
    }

    fn ending_reader(&self) -> Option<Box<dyn EndingReader>> {
        Some(Box::new(crate::ending::Endings::default()))
    }

    /// The component's public view of a snapshot. A value that is no snapshot (it has no
    /// `component`) is a public view already, as the site hands the board one: kept as
    /// it is, as a built-in game's view of its own view is.
    fn public_view(&self, state: &Value) -> Option<Value> {
        if state.is_object() && state.get("component").is_none() {
            return Some(state.clone());
        }
        let snapshot: Snapshot = serde_json::from_value(state.clone()).ok()?;
        let bytes = base64::engine::general_purpose::STANDARD.decode(snapshot.state).ok()?;
        let view = self.shared.runner.call(|store, game| game.call_public_view(store, &bytes)).ok()?;
        if view.len() > self.shared.runner.limits().output {
            return None;
        }
        serde_json::from_str(&view).ok()
    }
}

/// Why a call to `apply` took nothing.
enum Failed {
    /// The component refused the move (the table goes on).
    Refused(Refusal),
    /// The call failed: a trap, an exhausted budget, an answer the host refused.
    Call(CallError),
}

/// The host's event when a game master resumes a paused table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resumed {
    /// Who resumed it.
    pub resumed: PlayerId,
}

/// The host's event when a call fails: the table keeps its state and is paused until a
/// game master's `!resume`. Journaled with the action that failed, so a restart or a
/// replay pauses the table again (issue 33).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Paused {
    /// What went wrong ([`CallError`]'s words).
    pub paused: String,
    /// True when the call ran past its epoch deadline ([`CallError::Time`]): wall-clock
    /// time, which a replay cannot repeat, so a replay pauses again without calling the
    /// component ([`Table::replay_act`]). Not written when false, so a journal's other
    /// pauses read as they always did.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deadline: bool,
}

impl Paused {
    /// The pause a journal recorded for an action, when the action's call ran past its
    /// epoch deadline.
    fn at_deadline(recorded: &[EventRecord]) -> Option<Paused> {
        recorded
            .iter()
            .filter(|record| record.to == Audience::Table)
            .find_map(|record| serde_json::from_value::<Paused>(record.event.clone()).ok())
            .filter(|paused| paused.deadline)
    }
}

/// A player's private view ([`VIEW`], a question: never journaled), for that player only:
/// the component's `private-view`, worded by its texts when it names a message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Viewed {
    /// The message the view names (its `said` member), if it names one of the texts.
    pub said: Option<WasmNews>,
    /// The view as JSON text, shown as it is when it names no message.
    pub view: String,
}

/// A table of a component's game: its state bytes and what the component said of them.
#[derive(Clone)]
pub struct WasmTable {
    shared: Arc<Shared>,
    state: Vec<u8>,
    status: wit::Status,
    opening: Vec<Event>,
    /// Why the table is paused: a call failed (a trap, an exhausted budget, an answer
    /// refused), and only a game master's `!resume` takes moves again. In the snapshot,
    /// and told by a journaled [`Paused`] event, so a restart keeps it.
    paused: Option<String>,
}

impl std::fmt::Debug for WasmTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "WasmTable({}, {} bytes)", self.shared.name, self.state.len())
    }
}

impl WasmTable {
    /// When the table has just finished, adds the host's [`Ended`] event with the
    /// component's ending, so ratings read it from the journal like a built-in game's.
    fn tell_ending(&self, was_finished: bool, events: &mut Vec<Event>) {
        if !was_finished
            && self.status.finished
            && let Some(ending) = self.ending()
        {
            events.push(Event::table(Ended { ended: ending }));
        }
    }

    /// Applies `action` through the component: its events, the component's refusal, or
    /// the call's failure.
    fn call_apply(
        &mut self,
        action: &Action<'_>,
        dice: &mut Dice,
        deadline: Deadline,
    ) -> Result<Vec<Event>, Failed> {
        let parsed = action.command;
        let args = (0..parsed.command().args.len())
            .map(|i| value(parsed, i).unwrap_or(wit::Value::Absent))
            .collect();
        let role = match action.role {
            Role::Player => wit::Role::Player,
            Role::Operator => wit::Role::Operator,
            Role::GameMaster => wit::Role::GameMaster,
        };
        let command = wit::Move {
            actor: action.actor.as_str().to_owned(),
            command: parsed.name().to_owned(),
            args,
            private: action.private,
            role,
            now: action.now.0,
        };
        let seed = dice.seed();
        let answer = self
            .shared
            .runner
            .call_within(deadline, |store, game| game.call_apply(store, &self.state, &command, seed));
        let outcome = match answer {
            Err(error) => return Err(Failed::Call(error)),
            Ok(Err(refusal)) => return Err(Failed::Refused(self.shared.refusal(refusal))),
            Ok(Ok(outcome)) => outcome,
        };
        let (state, mut events) = self.shared.outcome(outcome).map_err(Failed::Call)?;
        let was_finished = self.status.finished;
        self.accept(state, deadline).map_err(Failed::Call)?;
        self.tell_ending(was_finished, &mut events);
        Ok(events)
    }

    /// `player`'s private view ([`VIEW`]), for them only. A failed call refuses the
    /// question and pauses nothing: a view changes nothing and is not journaled, so a
    /// pause from it could not be kept; moves go on.
    fn view(&self, player: &PlayerId) -> Result<Vec<Event>, Refusal> {
        let limits = self.shared.runner.limits();
        let answer = self
            .shared
            .runner
            .call(|store, game| game.call_private_view(store, &self.state, player.as_str()));
        let view = answer
            .and_then(|view| match view.len() > limits.output {
                true => Err(CallError::Answer(format!(
                    "a view of {} bytes (at most {})",
                    view.len(),
                    limits.output
                ))),
                false => Ok(view),
            })
            .map_err(|error| self.shared.said("component-view-failed", Some(&error.to_string())))?;
        let said = serde_json::from_str::<Value>(&view).ok().and_then(|value| said(&value["said"]));
        let view = if said.is_some() { String::new() } else { view.chars().take(400).collect() };
        Ok(vec![Event::to(Audience::Player(player.clone()), Viewed { said, view })])
    }

    /// Takes a new state after checking the component reads it back (a read cut off by
    /// the deadline is the deadline's, as the call's own would be).
    fn accept(&mut self, state: Vec<u8>, deadline: Deadline) -> Result<(), CallError> {
        let status = self.shared.status(&state, deadline).map_err(|unread| match unread.failed {
            Some(time @ CallError::Time(_)) => time,
            _ => CallError::Answer(unread.said),
        })?;
        self.state = state;
        self.status = status;
        Ok(())
    }

    /// [`Table::fire_timer`] and [`Table::replay_fire_timer`], as [`WasmTable::play`] is
    /// for moves. A timer cut off by the epoch `deadline` (wall clock, which a replay
    /// cannot repeat) pauses the table for its game master, marked as the deadline's, so a
    /// replay whose journal `recorded` that pause pauses again without calling; the timer
    /// waits for `!resume`, as it does after a restart ([`Table::next_timer`] is none while
    /// paused). Any other failure (the same on every machine) tells nothing and drops the
    /// timer: the state is kept and its next timer forgotten until a move gives a new one,
    /// so a broken timer is not fired again at every tick.
    fn fire(
        &mut self,
        at: Timestamp,
        dice: &mut Dice,
        deadline: Deadline,
        recorded: Option<Paused>,
    ) -> Vec<Event> {
        if let Some(paused) = recorded {
            self.paused = Some(paused.paused.clone());
            return vec![Event::table(paused)];
        }
        let seed = dice.seed();
        let answer = self
            .shared
            .runner
            .call_within(deadline, |store, game| game.call_fire_timer(store, &self.state, at.0, seed));
        let fired =
            answer.and_then(|outcome| self.shared.outcome(outcome)).and_then(|(state, mut events)| {
                let was_finished = self.status.finished;
                self.accept(state, deadline)?;
                self.tell_ending(was_finished, &mut events);
                Ok(events)
            });
        fired.unwrap_or_else(|error| {
            if !matches!(error, CallError::Time(_)) {
                self.status.next_timer = None;
                return Vec::new();
            }
            let paused = error.to_string();
            self.paused = Some(paused.clone());
            vec![Event::table(Paused { paused, deadline: true })]
        })
    }

    /// [`Table::act`] and [`Table::replay_act`]: the call held to the epoch `deadline` or
    /// not, or, when a replay's journal `recorded` a deadline's pause, not made at all.
    fn play(
        &mut self,
        action: &Action<'_>,
        dice: &mut Dice,
        deadline: Deadline,
        recorded: Option<Paused>,
    ) -> Result<Vec<Event>, Refusal> {
        let parsed = action.command;
        if parsed.name() == RESUME.name {
            if action.role == Role::Player {
                return Err(self.shared.said("component-resume-not-allowed", None));
            }
            // Accepted paused or not, so a replay of the journal takes it the same.
            self.paused = None;
            return Ok(vec![Event::table(Resumed { resumed: action.actor.clone() })]);
        }
        if parsed.name() == VIEW.name {
            return self.view(action.actor);
        }
        if let Some(why) = &self.paused {
            return Err(self.shared.said("component-paused", Some(why)));
        }
        if let Some(paused) = recorded {
            // How far the call got in its wall-clock time was the machine's, not the
            // game's: the journal says it ran out, and so it did.
            self.paused = Some(paused.paused.clone());
            return Ok(vec![Event::table(paused)]);
        }
        match self.call_apply(action, dice, deadline) {
            Ok(events) => Ok(events),
            Err(Failed::Refused(refusal)) => Err(refusal),
            Err(Failed::Call(error)) => {
                // A trap or an exhausted budget: the move is not played (the state is
                // kept), and the table waits for its game master. Accepted as a pause, so
                // the journal keeps it and a restart or replay pauses the table again.
                let paused = error.to_string();
                self.paused = Some(paused.clone());
                let deadline = matches!(error, CallError::Time(_));
                Ok(vec![Event::table(Paused { paused, deadline })])
            }
        }
    }
}

/// The message a view names: `{"id": "<message of the game's texts>", "args": {"name":
/// "value", ...}}` (each argument text, at most 16 of 4096 bytes in all).
fn said(said: &Value) -> Option<WasmNews> {
    let id = said.get("id")?.as_str()?.to_owned();
    let mut args = Vec::new();
    if let Some(given) = said.get("args") {
        for (name, value) in given.as_object()?.iter().take(16) {
            args.push((name.clone(), value.as_str()?.to_owned()));
        }
    }
    let size: usize = id.len() + args.iter().map(|(k, v)| k.len() + v.len()).sum::<usize>();
    (size <= 4096).then_some(WasmNews { id, args })
}

fn value(parsed: &Parsed, i: usize) -> Option<wit::Value> {
    use spellbridge_core::grammar::Value as V;
    Some(match parsed.value(i)? {
        V::Absent => wit::Value::Absent,
        V::Number(n) => wit::Value::Number(*n),
        V::Choice(c) => wit::Value::Choice(u32::try_from(*c).ok()?),
        V::Player(_, player) => wit::Value::Player(player.as_str().to_owned()),
        V::Word(word) => wit::Value::Word(word.clone()),
        V::Signed(_) | V::Rest(_) => return None,
    })
}

impl Table for WasmTable {
    fn game(&self) -> &'static str {
        self.shared.name
    }

    fn opening(&self) -> Vec<Event> {
        self.opening.clone()
    }

    fn commands(&self) -> &'static [Command] {
        self.shared.commands
    }

    fn act(&mut self, action: &Action<'_>, dice: &mut Dice) -> Result<Vec<Event>, Refusal> {
        self.play(action, dice, Deadline::Held, None)
    }

    /// A replay's call has no epoch deadline (fuel still bounds it), and a pause the
    /// journal recorded at the deadline is a pause again, without a call: a replay on a
    /// faster or slower machine is the same game ([`Deadline`]).
    fn replay_act(
        &mut self,
        action: &Action<'_>,
        dice: &mut Dice,
        recorded: &[EventRecord],
    ) -> Result<Vec<Event>, Refusal> {
        self.play(action, dice, Deadline::Lifted, Paused::at_deadline(recorded))
    }

    /// None while paused: a paused table's timers wait for its game master's `!resume`.
    fn next_timer(&self) -> Option<Timestamp> {
        self.paused.is_none().then_some(self.status.next_timer).flatten().map(Timestamp)
    }

    fn fire_timer(&mut self, at: Timestamp, dice: &mut Dice) -> Vec<Event> {
        self.fire(at, dice, Deadline::Held, None)
    }

    fn replay_fire_timer(&mut self, at: Timestamp, dice: &mut Dice, recorded: &[EventRecord]) -> Vec<Event> {
        self.fire(at, dice, Deadline::Lifted, Paused::at_deadline(recorded))
    }

    fn is_finished(&self) -> bool {
        self.status.finished
    }

    fn players(&self) -> Vec<PlayerId> {
        self.status.players.iter().map(PlayerId::new).collect()
    }

    fn game_masters(&self) -> Vec<PlayerId> {
        self.status.game_masters.iter().map(PlayerId::new).collect()
    }

    fn snapshot(&self) -> Value {
        let state = base64::engine::general_purpose::STANDARD.encode(&self.state);
        let opening = self.opening.iter().map(Event::record).collect();
        let paused = self.paused.clone();
        serde_json::to_value(Snapshot { component: self.shared.hash.clone(), state, opening, paused })
            .unwrap_or(Value::Null)
    }

    fn boxed_clone(&self) -> Box<dyn Table> {
        Box::new(self.clone())
    }

    fn ending(&self) -> Option<Ending> {
        let ending = self.shared.runner.call(|store, game| game.call_ended(store, &self.state)).ok()??;
        // Only players seated at the table, each once: a component cannot rate anyone else.
        let mut places: Vec<Place> = Vec::new();
        for p in ending.places {
            let seated = self.status.players.contains(&p.player);
            if seated && !places.iter().any(|q| q.player.as_str() == p.player) {
                let won = p.place == 1;
                places.push(Place {
                    player: PlayerId::new(p.player),
                    place: p.place.clamp(1, 1000),
                    score: i128::from(won),
                    tiebreak: 0,
                    choice: None,
                });
            }
        }
        if places.len() < 2 {
            return None;
        }
        Some(Ending { round: 1, places, conceded: ending.conceded, helped: Default::default() })
    }
}
