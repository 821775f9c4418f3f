//! Thaum, the nomic magic sub-game (RULES.md Game 1, T-1 … T-10), as a [`GamePlugin`].
//!
//! - `state.rs`: Thaums, the strength matrix, sheets, the table's serialisable state.
//! - `command.rs`: chat text → [`ThaumCommand`].
//! - `engine.rs`: the pure rules (`open`, `apply`, `end_phase`); `spells.rs` their arithmetic.
//! - `events.rs` / `error.rs`: what happened / why a command was refused.
//! - `schedule.rs`: the phase calendar (RULES T-2).
//! - `render.rs`: events and errors as chat text.
//!
//! This file holds the plugin, the [`ThaumTable`] that joins those pieces behind the
//! [`Table`] trait, and [`COMMANDS`], the one list of every command's help.
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

pub mod command;
pub mod engine;
pub mod error;
pub mod events;
pub mod render;
pub mod schedule;
pub mod spells;
pub mod state;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::dice::Dice;
use crate::ids::PlayerId;
use crate::plugin::{
    Action, Announcement, Audience, CommandHelp, GamePlugin, PlayerArgument, Refusal, Table, TableSetup,
};
use crate::text::RichText;
use crate::time::Timestamp;

pub use command::{ParseError, ThaumCommand, Verb, parse};
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

/// Every Thaum command's help, in the order help lists them (and [`Verb::ALL`] follows).
pub const COMMANDS: &[CommandHelp] = &[
    CommandHelp {
        name: "join",
        aliases: &[],
        usage: "",
        summary: "Join this Thaum table; you get this phase's 1 Mana (T-4).",
        players: &[],
    },
    CommandHelp {
        name: "gather",
        aliases: &["gatherpower"],
        usage: "<mana> <fire|water|earth|air>",
        summary: "Gather Power: spend Mana to raise one Thaum by that much (Thaums stay within -10..10).",
        players: &[],
    },
    CommandHelp {
        name: "blood",
        aliases: &["bloodmagic"],
        usage: "<amount> <fire|water|earth|air>",
        summary: "Blood Magic, once per phase: lower one Thaum by the amount and gain Mana equal to the actual decrease (T-5).",
        players: &[],
    },
    CommandHelp {
        name: "alchemy",
        aliases: &[],
        usage: "<mana> <thaum> <other thaum>",
        summary: "Alchemy: gain Mana × first × second coins (a negative result revokes coins), then both Thaums become 0.",
        players: &[],
    },
    CommandHelp {
        name: "bend",
        aliases: &["bending"],
        usage: "<mana> <player>",
        summary: "Bending: add Mana × (your Thaums × the strength matrix) to a player's Thaums (you may name yourself), \
                  then all yours become 0 (T-6). Fire defeats Air, Water defeats Fire, Earth defeats Water, Air defeats Earth.",
        players: &[PlayerArgument::Known(1)],
    },
    CommandHelp {
        name: "summon",
        aliases: &["summoning"],
        usage: "<mana> <player>",
        summary: "Summoning with another player: both gain N = your Thaums × strength matrix × theirs coins \
                  (negative revokes); the Mana does not scale N (T-7); then all Thaums of both become 0.",
        players: &[PlayerArgument::Known(1)],
    },
    CommandHelp {
        name: "tornado",
        aliases: &[],
        usage: "<mana> <player>",
        summary: "Tornado on another player, once per phase: for each Mana a random Thaum of you or them moves by \
                  ± your current Air (T-8); then your Air becomes 0. The dice seed is published (T-10).",
        players: &[PlayerArgument::Known(1)],
    },
    CommandHelp {
        name: "status",
        aliases: &["sheet"],
        usage: "[player|table]",
        summary: "Your sheet, another player's, or the whole table: season, phase, Loop Instability, and the strength matrix.",
        players: &[PlayerArgument::Known(0)],
    },
    CommandHelp {
        name: "phase",
        aliases: &[],
        usage: "next",
        summary: "Game master: end this phase now, as the schedule would (T-2).",
        players: &[],
    },
    CommandHelp {
        name: "instability",
        aliases: &[],
        usage: "<n|+n|-n>",
        summary: "Game master: set, raise or lower Loop Instability; at a phase's end, 9 or more ends the loop (T-3).",
        players: &[],
    },
    CommandHelp {
        name: "coins",
        aliases: &[],
        usage: "<player> <n|+n|-n>",
        summary: "Game master: set, grant or revoke a player's coins (coins stop at 0, T-9).",
        players: &[PlayerArgument::Known(0)],
    },
    CommandHelp {
        name: "add",
        aliases: &["register"],
        usage: "<player>",
        summary: "Game master: register a player, who gets this phase's 1 Mana (T-4).",
        players: &[PlayerArgument::New(0)],
    },
    CommandHelp {
        name: "gm",
        aliases: &["gamemaster"],
        usage: "[list | add <player> | remove <player>]",
        summary: "Game master: make a player at the table a game master (`!gm add bob`) or remove one \
                  (`!gm remove bob`; a table always keeps one). `!gm` alone lists them, for anyone.",
        players: &[PlayerArgument::Known(1)],
    },
    CommandHelp {
        name: "stop",
        aliases: &[],
        usage: "",
        summary: "Game master or room operator: end this table and post the final standings; \
                  the room can then host another table.",
        players: &[],
    },
];

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

    fn commands(&self) -> &'static [CommandHelp] {
        COMMANDS
    }

    fn open(&self, setup: &TableSetup) -> Result<Box<dyn Table>, Refusal> {
        let Some(seat) = setup.seats.first() else {
            return Err(Refusal::because("A Thaum table needs a player to open it."));
        };
        let (table, _) = ThaumTable::open(&seat.player, self.options, setup.now);
        Ok(Box::new(table))
    }

    fn restore(&self, snapshot: &Value) -> Result<Box<dyn Table>, String> {
        ThaumTable::restore(snapshot, self.options).map(|t| Box::new(t) as Box<dyn Table>)
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
    fn example_player(&self, verb: Verb, actor: &PlayerId) -> String {
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

/// The prefix the player typed (`!`), read off the typed message; `!` if it cannot be seen.
fn prefix_of<'a>(action: &Action<'a>) -> &'a str {
    let typed = action.typed.trim_start();
    let command = action.command.trim_start();
    let head = command.split_whitespace().next().unwrap_or("");
    let typed_head = typed.split_whitespace().next().unwrap_or("");
    match typed_head.len().checked_sub(head.len()) {
        Some(cut)
            if cut > 0
                && typed_head.is_char_boundary(cut)
                && typed_head[cut..].eq_ignore_ascii_case(head) =>
        {
            &typed_head[..cut]
        }
        _ => "!",
    }
}

impl Table for ThaumTable {
    fn game(&self) -> &'static str {
        "thaum"
    }

    fn opening(&self) -> Vec<Announcement> {
        vec![Announcement::table(self.welcome())]
    }

    fn is_query(&self, command: &str) -> bool {
        parse(command).is_ok_and(|c| c.is_query())
    }

    fn act(&mut self, action: &Action<'_>, dice: &mut Dice) -> Result<Vec<Announcement>, Refusal> {
        let prefix = prefix_of(action);
        let command = command::parse(action.command).map_err(|e| match e {
            ParseError::UnknownCommand(word) => Refusal::UnknownCommand(word),
            other => {
                let name = other.verb().map(|verb| self.example_player(verb, action.actor));
                let name = name.as_deref().unwrap_or(command::EXAMPLE_PLAYER);
                Refusal::Refused(render::parse_error(&other, prefix, name))
            }
        })?;
        if action.private && !command.is_query() {
            return Err(Refusal::Refused(render::marked(
                "Thaum actions are posted in the game room, where everyone sees them: type it there. \
                 Only `!status` answers privately.",
                prefix,
            )));
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
            let name = self.example_player(Verb::Add, action.actor);
            Refusal::Refused(render::error(&e, prefix, &name))
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
        let reply_to = if action.private { Audience::Player(action.actor.clone()) } else { Audience::Table };
        Ok(render::announcements(&events, &reply_to, prefix))
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
    fn fire_timer(&mut self, at: Timestamp, _dice: &mut Dice) -> Vec<Announcement> {
        match self.next_timer() {
            Some(due) if due <= at => {
                let events = engine::end_phase(&mut self.state, &self.options, due);
                render::announcements(&events, &Audience::Table, "!")
            }
            _ => Vec::new(),
        }
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
}
