//! Thaum, the nomic magic sub-game (RULES.md Game 1, T-1 … T-10), as a [`GamePlugin`].
//!
//! - `state.rs`: Thaums, the strength matrix, sheets, the table's serialisable state.
//! - `command.rs`: a command read against [`COMMANDS`] → [`ThaumCommand`].
//! - `engine.rs`: the pure rules (`open`, `apply`, `end_phase`); `spells.rs` their arithmetic.
//! - `events.rs` / `error.rs`: what happened / why a command was refused.
//! - `schedule.rs`: the phase calendar (RULES T-2).
//! - `render.rs`: events and errors as chat text.
//! - `config.rs`: the `[games.thaum]` options, and the wiki export.
//! - `public.rs`: what a spectator sees (the state but its history), the board picture's
//!   caption and the site's facts; `board.rs`: the board picture, drawn from that view.
//!
//! This file holds the plugin, the [`ThaumTable`] that joins those pieces behind the
//! [`Table`] trait, and [`COMMANDS`], the game's grammar: every command declared once.
//!
//! Decisions where RULES.md is silent:
//! - `!status` is a question, not an action: it is not kept in the history, and asked
//!   privately it is answered privately. Every other command is an action "posted in
//!   #game-actions", so it is refused in a private message.
//! - Blood Magic of 0 and Tornado of 0 Mana still use up their once per phase; a Tornado
//!   of 0 draws nothing (and so publishes no seed) but still sets the caster's Air to 0.
//! - A player is named by id, ignoring case, and ignoring a leading `@` or a trailing `:`
//!   or `,` when that finds exactly one player. `!add` refuses a name that differs from a
//!   player's only by case.
//! - `!phase next` starts the new phase at the moment it is typed; the next scheduled
//!   boundary still comes at its usual time.
//! - `!stop` archives the running season's standings (`"ended": "stopped"`); a stopped
//!   table answers only the questions `!status` and `!gm list`.
//! - Who may use a game-master command: a game master of the table, or anyone the daemon
//!   judged [`Role::GameMaster`](crate::plugin::Role) (a game master of every
//!   table, or a bot admin); `!stop` also the room's operator. `!gm add` makes only a
//!   player at the table a game master, and `!gm remove` never removes the last one;
//!   `!gm` alone lists them, for anyone.
//! - Announced standings give tied players the same place; the archive lists them by name.
//! - The rule options are kept in the snapshot, so a restored table plays by the options it
//!   was opened with. `coin_debt` keeps a `debt` beside `coins` (only in the JSON when
//!   above 0); grants pay debt off first, and standings rank by coins net of debt.

pub mod board;
pub mod command;
pub mod config;
pub mod ending;
pub mod engine;
pub mod error;
pub mod events;
pub mod public;
pub mod render;
pub mod rules;
pub mod schedule;
pub mod spells;
pub mod state;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::dice::Dice;
use crate::ending::{Ending, EndingReader, RecordWords};
use crate::event::{Event, Presentation};
use crate::grammar::{Arg, Branch, Choice, Command, Kind, PlayerArgument, Query, Who};
use crate::ids::PlayerId;
use crate::language::Language;
use crate::locale::{self, Localized};
use crate::options::GameOptions;
use crate::plugin::{Action, Announcement, Audience, GamePlugin, Refusal, Table, TableSetup};
use crate::text::RichText;
use crate::time::Timestamp;

pub use command::{ThaumCommand, Verb, parse};
pub use error::ThaumError;
pub use events::ThaumEvent;
pub use schedule::Schedule;
pub use state::{PlayerSheet, STRENGTH, Thaum, ThaumState, Thaums};

/// The rule options a Thaum table is opened with (kept in its snapshot).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ThaumOptions {
    /// When phases end by themselves (RULES T-2). Default: Cycle 13.
    pub schedule: Schedule,
    /// RULES T-7: multiply Summoning's N by the Mana spent. Off by default (the rule as
    /// written: the Mana is revoked but does not scale N).
    pub summoning_scales_with_mana: bool,
    /// RULES T-9: a coin revoke beyond the balance becomes debt (a negative balance, paid
    /// off by later grants) instead of stopping at 0. Off by default.
    pub coin_debt: bool,
}

/// The four Thaums as a choice of words, in the order of [`Thaum::ALL`] (also 火 水 土 风).
pub const THAUMS: Choice = Choice {
    noun: Some("Thaum"),
    list: "the Thaums are fire, water, earth and air",
    words: &[&["fire", "火"], &["water", "水"], &["earth", "土"], &["air", "风", "風"]],
};

const MANA: Arg = Arg::new(Kind::Number, "<mana>").what("Mana amount").missing("the Mana amount is missing");
const KNOWN: Kind = Kind::Player(PlayerArgument::Known);
const PLAYER: Arg = Arg::new(KNOWN, "<player>").missing("the player is missing");
const ADJUSTMENT: Arg = Arg::new(Kind::Signed, "<n|+n|-n>").what("number").missing("the number is missing");
const GM_BRANCHES: &[Branch] = &[
    Branch { word: "list", aliases: &["列表"], args: &[] },
    Branch { word: "add", aliases: &["添加"], args: &[PLAYER] },
    Branch { word: "remove", aliases: &["移除"], args: &[PLAYER] },
];

/// Every Thaum command, declared once (arguments, help, who may use it), in the order help
/// lists them (and [`Verb::ALL`] follows).
pub const COMMANDS: &[Command] = &[
    Command::new("join", "Join this Thaum table; you get this phase's 1 Mana (T-4).")
        .aliases(&["加入"])
        .example("join"),
    Command::new(
        "gather",
        "Gather Power: spend Mana to raise one Thaum by that much (Thaums stay within -10..10).",
    )
    .aliases(&["gatherpower", "聚能"])
    .second_word("power")
    .args(
        &[MANA, Arg::new(Kind::Choice(&THAUMS), "<fire|water|earth|air>").missing("the Thaum is missing")],
        "a Mana amount and a Thaum",
    )
    .example("gather 2 fire"),
    Command::new(
        "blood",
        "Blood Magic, once per phase: lower one Thaum by the amount and gain Mana equal to the actual decrease (T-5).",
    )
    .aliases(&["bloodmagic", "血魔法"])
    .second_word("magic")
    .args(
        &[
            Arg::new(Kind::Number, "<amount>").what("amount").missing("the amount is missing"),
            Arg::new(Kind::Choice(&THAUMS), "<fire|water|earth|air>").missing("the Thaum is missing"),
        ],
        "an amount and a Thaum",
    )
    .example("blood 3 water"),
    Command::new(
        "alchemy",
        "Alchemy: gain Mana × first × second coins (a negative result revokes coins), then both Thaums become 0.",
    )
    .aliases(&["炼金"])
    .args(
        &[
            MANA,
            Arg::new(Kind::Choice(&THAUMS), "<thaum>").missing("both Thaums are missing"),
            Arg::new(Kind::Choice(&THAUMS), "<other thaum>").missing("the second Thaum is missing"),
        ],
        "a Mana amount and two different Thaums",
    )
    .example("alchemy 1 fire air"),
    Command::new(
        "bend",
        "Bending: add Mana × (your Thaums × the strength matrix) to a player's Thaums (you may name yourself), \
         then all yours become 0 (T-6). Fire defeats Air, Water defeats Fire, Earth defeats Water, Air defeats Earth.",
    )
    .aliases(&["bending", "扭曲"])
    .args(&[MANA, PLAYER], "a Mana amount and a defending player (you may name yourself)")
    .example("bend 1 bob"),
    Command::new(
        "summon",
        "Summoning with another player: both gain N = your Thaums × strength matrix × theirs coins \
         (negative revokes); the Mana does not scale N (T-7); then all Thaums of both become 0.",
    )
    .aliases(&["summoning", "召唤"])
    .args(&[MANA, PLAYER], "a Mana amount and another player")
    .example("summon 0 bob"),
    Command::new(
        "tornado",
        "Tornado on another player, once per phase: for each Mana a random Thaum of you or them moves by \
         ± your current Air (T-8); then your Air becomes 0. The dice seed is published (T-10).",
    )
    .aliases(&["龙卷", "龙卷风"])
    .args(&[MANA, PLAYER], "a Mana amount and another player")
    .example("tornado 2 bob"),
    Command::new(
        "status",
        "Your sheet, another player's, or the whole table: season, phase, Loop Instability, and the strength matrix.",
    )
    .aliases(&["sheet", "状态"])
    .args(&[Arg::new(KNOWN, "[player|table]").optional()], "at most one player")
    .query(Query::Yes)
    .example("status bob"),
    Command::new("phase", "Game master: end this phase now, as the schedule would (T-2).")
        .aliases(&["阶段"])
        .args(&[Arg::new(Kind::Choice(&NEXT), "next")], "the word `next`")
        .who(Who::GameMaster)
        .example("phase next"),
    Command::new(
        "instability",
        "Game master: set, raise or lower Loop Instability; at a phase's end, 9 or more ends the loop (T-3).",
    )
    .aliases(&["不稳定"])
    .args(&[ADJUSTMENT], "a number: `n` sets it, `+n` adds, `-n` takes away")
    .who(Who::GameMaster)
    .example("instability +1"),
    Command::new("coins", "Game master: set, grant or revoke a player's coins (coins stop at 0, T-9).")
        .aliases(&["金币"])
        .args(&[PLAYER, ADJUSTMENT], "a player and a number: `n` sets, `+n` grants, `-n` revokes")
        .who(Who::GameMaster)
        .example("coins bob +5"),
    Command::new("add", "Game master: register a player, who gets this phase's 1 Mana (T-4).")
        .aliases(&["register", "添加"])
        .args(&[Arg::new(Kind::Player(PlayerArgument::New), "<player>").missing("the player is missing")], "one player")
        .who(Who::GameMaster)
        .example("add bob"),
    Command::new(
        "gm",
        "Game master: make a player at the table a game master (`!gm add bob`) or remove one \
         (`!gm remove bob`; a table always keeps one). `!gm` alone lists them, for anyone.",
    )
    .aliases(&["gamemaster", "主持"])
    .args(
        &[Arg::new(Kind::Branch(GM_BRANCHES), "[list | add <player> | remove <player>]").optional()],
        "`add <player>`, `remove <player>` or `list`",
    )
    .query(Query::Unless(&["list", "列表"]))
    .who(Who::GameMaster)
    .example("gm add bob"),
    Command::new(
        "stop",
        "Game master or room operator: end this table and post the final standings; \
         the room can then host another table.",
    )
    .aliases(&["停止"])
    .who(Who::GameMasterOrOperator)
    .example("stop"),
];

/// The catalogue's message for a command's help (`locales/*/thaum.ftl`), which says in
/// English exactly what [`COMMANDS`] declares.
pub fn help_id(command: &str) -> Option<&'static str> {
    Some(match command {
        "join" => "thaum-help-join",
        "gather" => "thaum-help-gather",
        "blood" => "thaum-help-blood",
        "alchemy" => "thaum-help-alchemy",
        "bend" => "thaum-help-bend",
        "summon" => "thaum-help-summon",
        "tornado" => "thaum-help-tornado",
        "status" => "thaum-help-status",
        "phase" => "thaum-help-phase",
        "instability" => "thaum-help-instability",
        "coins" => "thaum-help-coins",
        "add" => "thaum-help-add",
        "gm" => "thaum-help-gm",
        "stop" => "thaum-help-stop",
        _ => return None,
    })
}

/// `!phase`'s one word.
const NEXT: Choice = Choice { noun: None, list: "", words: &[&["next", "下一", "下一个"]] };

/// The Thaum game, with the options its new tables get.
#[derive(Clone, Copy, Debug, Default)]
pub struct ThaumPlugin {
    options: ThaumOptions,
}

impl ThaumPlugin {
    /// A plugin whose new tables use `options`.
    pub fn new(options: ThaumOptions) -> Self {
        Self { options }
    }

    /// The options new tables get.
    pub fn options(&self) -> &ThaumOptions {
        &self.options
    }
}

impl GamePlugin for ThaumPlugin {
    fn name(&self) -> &'static str {
        "thaum"
    }

    fn summary(&self) -> &'static str {
        "Nomic magic: turn each phase's Mana into Fire, Water, Earth and Air and cast spells for coins"
    }

    fn name_in(&self, language: Language) -> String {
        locale::text(language, "thaum-name", &locale::Args::new())
    }

    fn summary_in(&self, language: Language) -> String {
        locale::text(language, "thaum-summary-line", &locale::Args::new())
    }

    fn help_in(&self, command: &str, language: Language) -> Option<String> {
        help_id(command).map(|id| locale::text(language, id, &locale::Args::new()))
    }

    fn commands(&self) -> &'static [Command] {
        COMMANDS
    }

    fn rules(&self) -> Vec<&'static str> {
        rules::RULES.iter().map(|(id, _)| *id).collect()
    }

    fn rule_in(&self, id: &str, language: Language) -> Option<String> {
        let (_, message) = rules::RULES.iter().find(|(rule, _)| *rule == id)?;
        Some(locale::text(language, message, &locale::Args::new()))
    }

    fn open(&self, setup: &TableSetup) -> Result<Box<dyn Table>, Refusal> {
        let Some(seat) = setup.seats.first() else {
            return Err(Refusal::Worded(Localized::new(|language| {
                locale::rich(language, "thaum-error-no-opener", &locale::Args::new())
            })));
        };
        let (table, _) = ThaumTable::open(&seat.player, self.options, setup.now);
        Ok(Box::new(table))
    }

    fn restore(&self, snapshot: &Value) -> Result<Box<dyn Table>, String> {
        ThaumTable::restore(snapshot, self.options).map(|t| Box::new(t) as Box<dyn Table>)
    }

    /// Every destination hears the same in its language: Thaum has one form. Commands
    /// are written with `!`; the daemon writes them with its configured prefix.
    fn render(&self, events: &[Event], presentation: &Presentation) -> Vec<Announcement> {
        render::announcements(events, presentation.language)
    }

    fn configure(&self, options: &GameOptions<'_>) -> Result<Option<Box<dyn GamePlugin>>, String> {
        Ok(Some(Box::new(ThaumPlugin::new(config::options(options)?))))
    }

    fn wiki(&self, state: &Value) -> Option<String> {
        Some(config::wiki(state))
    }

    fn ending_reader(&self) -> Option<Box<dyn EndingReader>> {
        Some(Box::new(ending::ThaumEndings::default()))
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
        events.iter().filter(|event| event.to == Audience::Table).any(|event| {
            matches!(
                event.get::<ThaumEvent>(),
                Some(ThaumEvent::PhaseEnded { .. } | ThaumEvent::Stopped { .. })
            )
        })
    }

    fn facts(&self, public: &Value, language: Language) -> crate::facts::Facts {
        public::facts(public, language)
    }

    fn record_words(&self) -> Option<RecordWords> {
        Some(RecordWords {
            record: "thaum-record",
            best: Some("thaum-record-best"),
            top: "thaum-top",
            top_entry: "thaum-top-entry",
            top_none: "thaum-top-none",
            top_few: "thaum-top-few",
            board: "thaum-board",
        })
    }
}

/// A running Thaum table: its state, and the options it was opened with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThaumTable {
    state: ThaumState,
    options: ThaumOptions,
}

/// The snapshot's form: the state's fields with the options beside them.
#[derive(Serialize)]
struct SnapshotOut<'a> {
    #[serde(flatten)]
    state: &'a ThaumState,
    options: &'a ThaumOptions,
}

/// The snapshot's form without the history (see [`Table::snapshot_text_without_history`]):
/// every field of [`ThaumState`] but `history`, borrowed.
#[derive(Serialize)]
struct WithoutHistory<'a> {
    season: u32,
    phase: u32,
    loop_instability: u32,
    game_masters: &'a [PlayerId],
    players: &'a std::collections::BTreeMap<PlayerId, state::PlayerSheet>,
    seasons: &'a [state::SeasonRecord],
    phase_started_at: Timestamp,
    finished: bool,
    options: &'a ThaumOptions,
}

impl<'a> WithoutHistory<'a> {
    fn of(table: &'a ThaumTable) -> Self {
        let ThaumState {
            season,
            phase,
            loop_instability,
            game_masters,
            players,
            history: _,
            seasons,
            phase_started_at,
            finished,
        } = &table.state;
        WithoutHistory {
            season: *season,
            phase: *phase,
            loop_instability: *loop_instability,
            game_masters,
            players,
            seasons,
            phase_started_at: *phase_started_at,
            finished: *finished,
            options: &table.options,
        }
    }
}

#[derive(Deserialize)]
struct SnapshotIn {
    #[serde(flatten)]
    state: ThaumState,
    #[serde(default)]
    options: Option<ThaumOptions>,
}

impl ThaumTable {
    /// Opens a table (see [`engine::open`]), with the opening announcement's events.
    pub fn open(creator: &PlayerId, options: ThaumOptions, now: Timestamp) -> (ThaumTable, Vec<ThaumEvent>) {
        let (state, events) = engine::open(creator, &options, now);
        (ThaumTable { state, options }, events)
    }

    /// The message that announces a newly opened table (see [`Table::opening`]).
    pub fn welcome(&self) -> RichText {
        let game_master = self.state.game_masters.first().cloned().unwrap_or_else(|| PlayerId::new("?"));
        let next_phase = self.next_timer();
        render::event(&ThaumEvent::Opened { game_master, next_phase }, "!")
    }

    /// Rebuilds a table from [`Table::snapshot`]. A snapshot without options gets `fallback`.
    pub fn restore(snapshot: &Value, fallback: ThaumOptions) -> Result<ThaumTable, String> {
        let SnapshotIn { state, options } =
            SnapshotIn::deserialize(snapshot).map_err(|e| format!("not a Thaum snapshot: {e}"))?;
        state.validate()?;
        Ok(ThaumTable { state, options: options.unwrap_or(fallback) })
    }

    /// The state, read-only.
    pub fn state(&self) -> &ThaumState {
        &self.state
    }

    /// The options this table plays by.
    pub fn options(&self) -> &ThaumOptions {
        &self.options
    }

    /// Whom a usage example for `verb` names when shown to `actor`: never the actor. For
    /// `!add`, someone not at the table; otherwise another player at the table if there is
    /// one. The default [`command::EXAMPLE_PLAYER`] whenever it fits.
    fn example_player_for(&self, verb: Verb, actor: &PlayerId) -> String {
        const NAMES: [&str; 4] = [command::EXAMPLE_PLAYER, "carol", "alice", "dave"];
        let not_actor = |name: &str| !name.eq_ignore_ascii_case(actor.as_str());
        let seated = |name: &str| self.state.resolve_player(name).is_some();
        let fits = |name: &str| not_actor(name) && (verb == Verb::Add) != seated(name);
        if let Some(name) = NAMES.into_iter().find(|n| fits(n)) {
            return name.to_owned();
        }
        let other = self.state.players.keys().map(PlayerId::as_str).find(|p| not_actor(p));
        match other {
            Some(player) if verb != Verb::Add => player.to_owned(),
            _ => NAMES.into_iter().find(|n| not_actor(n)).unwrap_or("carol").to_owned(),
        }
    }
}

impl Table for ThaumTable {
    fn game(&self) -> &'static str {
        "thaum"
    }

    fn opening(&self) -> Vec<Event> {
        let game_master = self.state.game_masters.first().cloned().unwrap_or_else(|| PlayerId::new("?"));
        vec![Event::table(ThaumEvent::Opened { game_master, next_phase: self.next_timer() })]
    }

    fn commands(&self) -> &'static [Command] {
        COMMANDS
    }

    fn game_masters(&self) -> Vec<PlayerId> {
        self.state.game_masters.clone()
    }

    fn example_player(&self, command: &str, actor: &PlayerId) -> Option<String> {
        Verb::from_word(command).map(|verb| self.example_player_for(verb, actor))
    }

    fn act(&mut self, action: &Action<'_>, dice: &mut Dice) -> Result<Vec<Event>, Refusal> {
        // Commands are written with `!`; the daemon shows them with its configured prefix.
        let command = ThaumCommand::from_parsed(action.command)
            .ok_or_else(|| Refusal::UnknownCommand(action.command.name().to_owned()))?;
        if action.private && !command.is_query() {
            return Err(Refusal::Worded(Localized::new(|language| {
                locale::rich(language, "thaum-error-private", &locale::Args::new())
            })));
        }
        let draws_before = dice.draws();
        let events = engine::apply(
            &mut self.state,
            &self.options,
            action.actor,
            action.role,
            &command,
            action.now,
            dice,
        )
        .map_err(|e| {
            let name = self.example_player_for(Verb::Add, action.actor);
            Refusal::Worded(render::refusal(&e, &name))
        })?;
        if !command.is_query() {
            let draws = events.iter().flat_map(ThaumEvent::draws).collect();
            let seed = (dice.draws() > draws_before).then(|| dice.seed());
            self.state.history.push(state::HistoryEntry {
                player: action.actor.clone(),
                command: action.typed.trim().to_owned(),
                draws,
                seed,
            });
        }
        // A status answer goes to whoever asked (privately when asked privately).
        let reply_to = if action.private { Audience::Player(action.actor.clone()) } else { Audience::Table };
        Ok(events
            .into_iter()
            .map(|event| {
                let to = if event.is_reply() { reply_to.clone() } else { Audience::Table };
                Event::to(to, event)
            })
            .collect())
    }

    /// The next schedule boundary after the current phase began (RULES T-2).
    fn next_timer(&self) -> Option<Timestamp> {
        if self.state.finished {
            return None;
        }
        self.options.schedule.next_boundary_after(self.state.phase_started_at)
    }

    /// Ends the phase at the boundary that is due (the boundary's own time, so a caller
    /// that catches up several boundaries fires each one in turn). Not yet due: nothing.
    fn fire_timer(&mut self, at: Timestamp, _dice: &mut Dice) -> Vec<Event> {
        match self.next_timer() {
            Some(due) if due <= at => {
                let events = engine::end_phase(&mut self.state, &self.options, due);
                events.into_iter().map(Event::table).collect()
            }
            _ => Vec::new(),
        }
    }

    /// The phase the table is in once `events` are told: a phase's actions (and the
    /// boundary that began it) are one story. An answer to a question (`!status`) is not
    /// part of it.
    fn story(&self, events: &[Event]) -> Option<String> {
        let acted = events.iter().filter_map(Event::get::<ThaumEvent>).any(|event| !event.is_reply());
        acted.then(|| format!("season {} phase {}", self.state.season, self.state.phase))
    }

    fn is_finished(&self) -> bool {
        self.state.finished
    }

    /// One dice key per season (RULES T-10): a new season takes a new key.
    fn dice_epoch(&self) -> u64 {
        u64::from(self.state.season)
    }

    fn players(&self) -> Vec<PlayerId> {
        self.state.players.keys().cloned().collect()
    }

    fn snapshot(&self) -> Value {
        serde_json::to_value(SnapshotOut { state: &self.state, options: &self.options })
            .unwrap_or_else(|e| serde_json::json!({ "error": e.to_string() }))
    }

    fn snapshot_text(&self) -> String {
        serde_json::to_string(&SnapshotOut { state: &self.state, options: &self.options })
            .unwrap_or_else(|_| self.snapshot().to_string())
    }

    fn history_len(&self) -> Option<usize> {
        Some(self.state.history.len())
    }

    fn history_since(&self, from: usize) -> Vec<String> {
        let entries = self.state.history.get(from..).unwrap_or_default();
        entries.iter().map(|entry| serde_json::to_string(entry).unwrap_or_default()).collect()
    }

    fn snapshot_text_without_history(&self) -> String {
        serde_json::to_string(&WithoutHistory::of(self)).unwrap_or_else(|_| self.snapshot_text())
    }

    fn boxed_clone(&self) -> Box<dyn Table> {
        Box::new(self.clone())
    }

    fn ending(&self) -> Option<Ending> {
        ending::of_stopped(&self.state)
    }
}

#[cfg(test)]
mod public_tests;
