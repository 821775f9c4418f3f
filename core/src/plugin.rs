//! The `GamePlugin` and `Table` traits, and the registry that lists the games.
//!
//! A [`GamePlugin`] is a game as data: its name, its commands (declared once, as a
//! [`grammar`](crate::grammar), which also makes their help), and how to open or restore a
//! [`Table`]. A table is one running game: it takes a command already read against its
//! grammar, applies it to its pure state, and returns [`Event`]s: what happened,
//! as data, each for the table or one player. The game renders events into
//! [`Announcement`]s at delivery, once per [`Presentation`] ([`GamePlugin::render`]). A
//! refused command leaves the table exactly as it was. Timers (Thaum phases, Duel step
//! timeouts) are deadlines the table names and the caller fires, with the same code path
//! as a command.
//!
//! Adding a game touches only `core/src/games/<game>/`, its locale files and one line of
//! the list in [`crate::games`] (or, for a game kept elsewhere, one
//! [`Registry::register`]): the daemon hands it its options table
//! ([`GamePlugin::configure`]), lists it in help and `!games`, exports its tables
//! ([`GamePlugin::wiki`]) and, for a game played by challenge
//! ([`GamePlugin::challenge`]), takes its challenge command in the lobby
//! ([`GamePlugin::challenge_command`], and its questions: [`GamePlugin::lobby_commands`]),
//! and rates its tables' endings as its [`TableKind`] says ([`GamePlugin::ending_reader`],
//! [`Table::ending`], [`crate::ending`]), all through the registry.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::options::{Challenge, GameOptions};

use crate::dice::Dice;
use crate::draw::Drawing;
use crate::ending::{Ending, EndingReader, RecordWords, TableKind};
use crate::event::{Event, EventRecord, Presentation};
use crate::facts::Facts;
use crate::grammar::{Command, Parsed};
use crate::ids::{PlayerId, RoomId};
use crate::language::Language;
use crate::locale::Localized;
use crate::text::RichText;
use crate::time::Timestamp;

/// Who an event or announcement is for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Audience {
    /// Everyone at the table (every room of its bridge).
    Table,
    /// One player, privately.
    Player(PlayerId),
}

/// How many lines a network wants a game's news in (each network says which, through
/// [`GameTransport::form`](crate::GameTransport::form)); part of the [`Presentation`] a
/// game renders its events for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Form {
    /// One line per thing that happened, each explained (Matrix, the console).
    #[default]
    Full,
    /// As few lines as read well, for networks where every line costs the room time (IRC:
    /// a real network lets a bot send about one line per 2 s, so a Duel round of ten
    /// lines takes 18 s to arrive).
    Compact,
}

/// A message to send: an event rendered for one [`Presentation`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Announcement {
    /// Who should see it.
    pub to: Audience,
    /// What it says.
    pub text: RichText,
}

impl Announcement {
    /// A message for everyone at the table.
    pub fn table(text: impl Into<RichText>) -> Self {
        Self { to: Audience::Table, text: text.into() }
    }

    /// A private message for one player.
    pub fn player(player: &PlayerId, text: impl Into<RichText>) -> Self {
        Self { to: Audience::Player(player.clone()), text: text.into() }
    }

    /// A message for `to`.
    pub fn to(to: Audience, text: impl Into<RichText>) -> Self {
        Self { to, text: text.into() }
    }
}

/// A command a player typed at a table.
#[derive(Clone, Copy, Debug)]
pub struct Action<'a> {
    /// Who typed it.
    pub actor: &'a PlayerId,
    /// The command, read against the game's grammar (players already resolved).
    pub command: &'a Parsed,
    /// The whole message as typed, e.g. `!gather 3 fire` (kept in histories).
    pub typed: &'a str,
    /// True when it was sent privately to the bot.
    pub private: bool,
    /// When it happened.
    pub now: Timestamp,
    /// What the actor may do beyond playing, as the daemon judged it.
    pub role: Role,
}

/// What a player may do at a table beyond playing, granted by the daemon rather than the
/// game: tables keep their own game masters, and these widen them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// An ordinary player.
    #[default]
    Player,
    /// An operator of the table's room (IRC channel operator, Matrix power level 50 or
    /// more): may stop the table.
    Operator,
    /// A game master of every table (named in the daemon's config, or a bot admin): may
    /// use every game-master command.
    GameMaster,
}

/// Why a table did not take a command. The table is unchanged either way.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The first word is none of this game's commands; the caller suggests one.
    #[error("`{0}` is not a command of this game")]
    UnknownCommand(String),
    /// The command was understood but refused; the text says what was wrong and what to
    /// type instead.
    #[error("{}", .0.plain())]
    Refused(RichText),
    /// The command was understood but refused, the reason said in every language (a game
    /// whose words are in the [catalogues](crate::locale)).
    #[error("{}", .0.get(Language::En).plain())]
    Worded(Localized),
    /// [`Refusal::Worded`], answered to the asker privately wherever they asked: what they
    /// said in a room should have been said privately (a Duel spell), so the answer goes
    /// where they are to say it (a network opens that private chat if they have none).
    #[error("{}", .0.get(Language::En).plain())]
    Privately(Localized),
}

impl Refusal {
    /// A refusal with a plain-text reason (`backticked` runs become code).
    pub fn because(reason: impl Into<String>) -> Self {
        let reason: String = reason.into();
        Refusal::Refused(RichText::from(reason))
    }

    /// What the refusal says to a reader of `language` (`None` for an unknown command,
    /// which the caller words).
    pub fn text(&self, language: Language) -> Option<RichText> {
        match self {
            Refusal::UnknownCommand(_) => None,
            Refusal::Refused(text) => Some(text.clone()),
            Refusal::Worded(said) | Refusal::Privately(said) => Some(said.get(language).clone()),
        }
    }
}

/// One seat at a new table: the player and what they chose (a wizard name in a Duel).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seat {
    /// The player.
    pub player: PlayerId,
    /// Their choice, if the game asks for one.
    pub choice: Option<String>,
}

/// The action number whose seed a table's opening draws from (actions count up from 0,
/// so none reaches it): the dice [`GamePlugin::open_with_dice`] gets.
pub const OPENING_DRAW: u64 = u64::MAX;

/// Everything a game needs to open a table.
#[derive(Clone, Debug)]
pub struct TableSetup {
    /// The room the table was opened in.
    pub room: RoomId,
    /// The players, the opener first.
    pub seats: Vec<Seat>,
    /// When it opened.
    pub now: Timestamp,
}

/// One running game. All methods are pure: no clocks, sockets, files or databases.
pub trait Table: Send + std::fmt::Debug {
    /// The game's name (`thaum`, `duel`).
    fn game(&self) -> &'static str;

    /// What happened when the table opened (who plays, how to start).
    fn opening(&self) -> Vec<Event> {
        Vec::new()
    }

    /// The game's commands (the same as its plugin's [`GamePlugin::commands`]).
    fn commands(&self) -> &'static [Command];

    /// Applies a command read against [`Table::commands`]; returns what happened. On
    /// `Err` the table is unchanged.
    fn act(&mut self, action: &Action<'_>, dice: &mut Dice) -> Result<Vec<Event>, Refusal>;

    /// [`Table::act`] as a replay of the journal applies it (`verify`, a table rebuilt from
    /// its journal), given the events the journal `recorded` for it (none in a journal
    /// from before events). By default the same as `act`. A table whose live result may
    /// hang on what a replay cannot repeat (a game component's call cut off by the wall
    /// clock) follows the record there instead, so the replay is the same game.
    fn replay_act(
        &mut self,
        action: &Action<'_>,
        dice: &mut Dice,
        recorded: &[EventRecord],
    ) -> Result<Vec<Event>, Refusal> {
        let _ = recorded;
        self.act(action, dice)
    }

    /// Whom the usage example of `command` names when shown to `actor` in a refusal (never
    /// the actor); `None`: [`EXAMPLE_PLAYER`](crate::grammar::EXAMPLE_PLAYER).
    fn example_player(&self, _command: &str, _actor: &PlayerId) -> Option<String> {
        None
    }

    /// The next moment a timer is due, if any.
    fn next_timer(&self) -> Option<Timestamp>;

    /// Fires the timer due at `at` (as returned by [`Table::next_timer`]).
    fn fire_timer(&mut self, at: Timestamp, dice: &mut Dice) -> Vec<Event>;

    /// [`Table::fire_timer`] as a replay of the journal fires it, given the events the
    /// journal `recorded` for it; by default the same as `fire_timer`. Like
    /// [`Table::replay_act`], a table whose live result may hang on what a replay cannot
    /// repeat (a game component's call cut off by the wall clock) follows the record there.
    fn replay_fire_timer(&mut self, at: Timestamp, dice: &mut Dice, recorded: &[EventRecord]) -> Vec<Event> {
        let _ = recorded;
        self.fire_timer(at, dice)
    }

    /// True when the game is over and the table takes no more commands.
    fn is_finished(&self) -> bool;

    /// The part of the game `events` (just told by an action or a timer) go on with, when
    /// it is told over several actions and reads best as one message: a Duel round whose
    /// steps are revealed as they come, a Thaum phase. Every action of that part gives the
    /// same key; a network that can edit a message tells the part in one
    /// ([`crate::Message::story`]). `None` (the default): each action's words are their own.
    fn story(&self, _events: &[Event]) -> Option<String> {
        None
    }

    /// Which dice key the table is on. The caller gives the table a new secret key, and
    /// reveals the old one, whenever this changes (RULES T-10: a Thaum table, which may
    /// run for seasons, rekeys at each season rollover). Most games keep one key: 0.
    fn dice_epoch(&self) -> u64 {
        0
    }

    /// The players seated at the table.
    fn players(&self) -> Vec<PlayerId>;

    /// The table's game masters (Thaum's, RULES T-4); none for a game without them.
    fn game_masters(&self) -> Vec<PlayerId> {
        Vec::new()
    }

    /// The table's state as JSON, in the form of CONTRACT.md's `--state-json`.
    fn snapshot(&self) -> Value;

    /// The same state written straight to JSON text (the store writes one per action,
    /// so games whose state is one serde struct skip the `Value` tree).
    fn snapshot_text(&self) -> String {
        self.snapshot().to_string()
    }

    /// How many entries the table's history has (its snapshot's `history` list, which
    /// only ever grows: Thaum's accepted actions), or `None` for a game that keeps none.
    /// The store keeps a history in rows of its own, appending only what is new, so what
    /// it writes per action does not grow with the history.
    fn history_len(&self) -> Option<usize> {
        None
    }

    /// The history's entries from position `from` on, each as JSON text.
    fn history_since(&self, _from: usize) -> Vec<String> {
        Vec::new()
    }

    /// [`Table::snapshot_text`] without the `history` field (the whole snapshot for a
    /// game that keeps none). Putting the history back as `history` gives the snapshot.
    fn snapshot_text_without_history(&self) -> String {
        self.snapshot_text()
    }

    /// A copy of this table behind a new box.
    fn boxed_clone(&self) -> Box<dyn Table>;

    // Issue 32 item 1b (plugends): how a table ended.

    /// How the table's last game ended, once it has (a finished Duel; a Thaum table's last
    /// closed season), as the game's rules say; `None` before, or for a game ended with no
    /// result (a stopped Duel).
    fn ending(&self) -> Option<Ending> {
        None
    }

    /// What `player` chose when the table opened (a Duel wizard), as the game names it;
    /// `None` for a game that asks no choice, or someone not seated.
    fn choice(&self, _player: &PlayerId) -> Option<String> {
        None
    }
}

/// A game: its commands and how to open and restore its tables.
pub trait GamePlugin: Send + Sync {
    /// The game's name as players type it (`!new thaum`).
    fn name(&self) -> &'static str;

    /// One line saying what the game is.
    fn summary(&self) -> &'static str;

    /// The game's name in `language` (`!开局 魔素`): [`GamePlugin::name`] by default.
    /// Each name opens the game ([`Registry::get`]).
    fn name_in(&self, language: Language) -> String {
        let _ = language;
        self.name().to_owned()
    }

    /// Every command of the game, in the order help lists them.
    fn commands(&self) -> &'static [Command];

    /// [`GamePlugin::summary`] in `language`; a game whose words are in the catalogues
    /// says it in that language, others as `summary` does.
    fn summary_in(&self, language: Language) -> String {
        let _ = language;
        self.summary().to_owned()
    }

    /// What `command` does, for `!help`, in `language`: by default its declaration's
    /// summary (`None` for a command the game does not have).
    fn help_in(&self, command: &str, language: Language) -> Option<String> {
        let _ = language;
        self.commands().iter().find(|c| c.name == command).map(|c| c.summary.to_owned())
    }

    /// The ids of the rules the game's texts cite (`(RULES D-10)`), in order, for `!rules`
    /// and the site's rules page: RULES.md's fixed points. None by default.
    fn rules(&self) -> Vec<&'static str> {
        Vec::new()
    }

    /// What rule `id` (as [`GamePlugin::rules`] writes it) says, in one or two lines, in
    /// `language`; `None` for an id the game does not have.
    fn rule_in(&self, id: &str, language: Language) -> Option<String> {
        let _ = (id, language);
        None
    }

    /// Opens a table. Refuses setups the game cannot take (an unknown wizard, say).
    fn open(&self, setup: &TableSetup) -> Result<Box<dyn Table>, Refusal>;

    /// Opens a table with `dice` for a chance the opening itself needs: the daemon's are
    /// the table's committed dice at [`OPENING_DRAW`] (RULES T-10), so the opening is
    /// audited like any action. The default ignores them and calls [`GamePlugin::open`].
    fn open_with_dice(&self, setup: &TableSetup, dice: &mut Dice) -> Result<Box<dyn Table>, Refusal> {
        let _ = dice;
        self.open(setup)
    }

    /// Rebuilds a table from its [`Table::snapshot`].
    fn restore(&self, snapshot: &Value) -> Result<Box<dyn Table>, String>;

    /// The game as the build that plays the table whose [`Table::snapshot`] is `snapshot`,
    /// when that is another build than this one (a game loaded from a component keeps
    /// each table on the build it opened with, and its words, views and board with it);
    /// `None` (the default): this game.
    fn build_of(&self, snapshot: &Value) -> Option<Arc<dyn GamePlugin>> {
        let _ = snapshot;
        None
    }

    /// What `events` (one action's, or an opening's, in order) say to readers shown
    /// `presentation`: the game's words for them, each to its event's audience. Pure: it
    /// reads only the events, never a table. The default renders text events
    /// ([`crate::event::render_text`]).
    fn render(&self, events: &[Event], presentation: &Presentation) -> Vec<Announcement> {
        let _ = presentation;
        crate::event::render_text(events)
    }

    /// Answers a lobby command that belongs to this game (one of its
    /// [`GamePlugin::lobby_commands`]: the Duel answers `wizards`).
    fn lobby(&self, _command: &str) -> Option<RichText> {
        None
    }

    /// [`GamePlugin::lobby`] in `language`; a game whose words are in the catalogues
    /// answers in it, others as `lobby` does.
    fn lobby_in(&self, command: &str, language: Language) -> Option<RichText> {
        let _ = language;
        self.lobby(command)
    }

    /// The same game with the options its config section gives (`[games.<name>]`), or
    /// `None` to keep it as it is. Refuses what it does not know, with the fix. By
    /// default a game has no options: an empty section keeps it, anything else is
    /// refused.
    fn configure(&self, options: &GameOptions<'_>) -> Result<Option<Box<dyn GamePlugin>>, String> {
        match options.table.keys().next() {
            None => Ok(None),
            Some(key) => {
                Err(format!("{}: `{key}` is not an option; {} takes none", options.section, self.name()))
            }
        }
    }

    /// How the game is taken by challenge (the Duel: `!duel <player>`), if it is; such a
    /// game is not opened with `!new`.
    fn challenge(&self) -> Option<Challenge> {
        None
    }

    /// A table's state (its [`Table::snapshot`]) as MediaWiki markup, for `spellbridge
    /// export --format wiki`; `None` shows the JSON as it is.
    fn wiki(&self, _state: &Value) -> Option<String> {
        None
    }

    // Issue 32 item 1b (plugends): what kind of table, and how its games ended.

    /// What kind of table the game runs. By default a game taken by challenge
    /// ([`GamePlugin::challenge`]) is a challenge between two, any other an open table.
    fn kind(&self) -> TableKind {
        match self.challenge() {
            Some(_) => TableKind::Challenge { seats: 2 },
            None => TableKind::Open,
        }
    }

    /// A reader of one table's endings from its journaled events (one per table, fed in
    /// order); `None` for a game whose tables end without a result to rate.
    fn ending_reader(&self) -> Option<Box<dyn EndingReader>> {
        None
    }

    /// A seat's choice (as [`Table::choice`] gives it) said in `language` (a wizard's
    /// name in Chinese); as it is by default.
    fn choice_in(&self, choice: &str, language: Language) -> String {
        let _ = language;
        choice.to_owned()
    }

    // Issue 32 (plugview): what a spectator sees of a table, drawn and told by the game.

    /// The public view of a table's state (its [`Table::snapshot`], or the `state` the
    /// store keeps): what a spectator may see, every hidden move left out. The one filter
    /// between a table and anything public (the site, board pictures and their captions);
    /// `None` (the default) shows nothing of the state, so a game that does not say what
    /// is public leaks nothing. A view passed through again is the same view (a board
    /// drawn from the site's entry filters it once more).
    fn public_view(&self, _state: &Value) -> Option<Value> {
        None
    }

    /// The board picture of a table, from its [`GamePlugin::public_view`], labelled in
    /// `language`; `None` for a game without a board, `Some(Err)` with what was wrong for
    /// a view it cannot draw.
    fn board(&self, _public: &Value, _language: Language) -> Option<Result<Drawing, String>> {
        None
    }

    /// The text a board picture of table `table` is sent with, for clients that show no
    /// images, from its public view; `None`: a line naming the game and the table.
    fn caption(&self, _table: u64, _public: &Value, _language: Language) -> Option<String> {
        None
    }

    /// True when a table's `events` end a part of the game worth a new picture (a Duel
    /// round settled, a Thaum phase ended). False for events of other games.
    fn redraws(&self, _events: &[Event]) -> bool {
        false
    }

    /// What a spectator reads first about a table (the site's table page), from its
    /// public view, in `language`. None by default.
    fn facts(&self, _public: &Value, _language: Language) -> Facts {
        Facts::default()
    }

    // Issue 32 (lobby32): the lobby commands a game brings, so the lobby names no game.

    /// The lobby command that challenges someone to this game (the Duel's
    /// `!duel <player> [wizard]`, worded as the lobby words its refusals), for a game
    /// taken by challenge ([`GamePlugin::challenge`]); its first argument is the player
    /// challenged, the rest the challenger's choice. `!help` explains it with
    /// [`GamePlugin::help_in`]. `None` (the default): the game is opened with `!new`.
    fn challenge_command(&self) -> Option<&'static Command> {
        None
    }

    /// Questions about the game asked in the lobby, before any table (the Duel's
    /// `!wizards`), answered by [`GamePlugin::lobby_in`] and explained by
    /// [`GamePlugin::help_in`]. None by default.
    fn lobby_commands(&self) -> &'static [Command] {
        &[]
    }

    /// The message ids, from its own catalogue, of the sentences a challenge to the game
    /// is told in where it needs its own (the Duel's "challenges bob to a Duel!", with its
    /// `!wizards`); `None` (the default): the lobby's game-neutral sentences, which name
    /// the game and how to accept it from its declarations.
    fn challenge_words(&self) -> Option<ChallengeWords> {
        None
    }

    // Issue 32 item 1b (records): how the game's records are worded.

    /// The message ids its records (`!stats`, `!top`) are worded in, from its own
    /// catalogue; `None` (the default) words them with the daemon's generic texts.
    fn record_words(&self) -> Option<RecordWords> {
        None
    }
}

/// The message ids a game taken by challenge tells its challenges in, from its own
/// catalogue ([`GamePlugin::challenge_words`]). Each reads what the lobby's game-neutral
/// text of the same name does (`lobby-challenge`, …): `$challenger`, `$opponent`,
/// `$choice` (the challenger's, as [`GamePlugin::choice_in`] says it), `$player`,
/// `$other`, and the words the lobby derives from the game: `$game` (its
/// [`GamePlugin::name_in`]), `$accept` (`!accept` with the choices of its
/// [`GamePlugin::challenge_command`]) and `$usage` (that command with the player only,
/// `!duel <player>`); a message may leave out any of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChallengeWords {
    /// A challenge made (`$challenger`, `$opponent`, `$game`, `$accept`).
    pub challenge: &'static str,
    /// A challenge made with the challenger's choice (and `$choice`).
    pub challenge_as: &'static str,
    /// The one challenged declines it (`$player` declines, `$other` challenged; `$game`).
    pub declined: &'static str,
    /// Someone challenged themselves (`$game`, `$usage`).
    pub yourself: &'static str,
}

/// The games the daemon offers, in the order `!games` lists them. Clones share the games.
#[derive(Clone)]
pub struct Registry {
    plugins: Vec<Arc<dyn GamePlugin>>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.plugins.iter().map(|p| p.name())).finish()
    }
}

impl Registry {
    /// A registry of the given games.
    pub fn new(plugins: Vec<Box<dyn GamePlugin>>) -> Self {
        Self { plugins: plugins.into_iter().map(Arc::from).collect() }
    }

    /// Adds a game after the others (one line per game kept outside the core).
    pub fn register(mut self, plugin: impl GamePlugin + 'static) -> Self {
        self.plugins.push(Arc::new(plugin));
        self
    }

    /// The games configured: each game whose name `options` gives a section for gets it
    /// ([`GamePlugin::configure`]); the others keep their defaults.
    pub fn configured<'a>(
        &self,
        mut options: impl FnMut(&str) -> Option<GameOptions<'a>>,
    ) -> Result<Registry, String> {
        let mut plugins = Vec::with_capacity(self.plugins.len());
        for plugin in &self.plugins {
            let configured = match options(plugin.name()) {
                Some(options) => plugin.configure(&options)?.map(Arc::from),
                None => None,
            };
            plugins.push(configured.unwrap_or_else(|| plugin.clone()));
        }
        Ok(Registry { plugins })
    }

    /// The games that ship with spellbridge (the list in [`crate::games`]), with their
    /// default options.
    pub fn standard() -> Self {
        Self::new(crate::games::standard())
    }

    /// The game called `name` (case-insensitive), by its name in any language.
    pub fn get(&self, name: &str) -> Option<&dyn GamePlugin> {
        self.plugins
            .iter()
            .find(|p| {
                p.name().eq_ignore_ascii_case(name)
                    || Language::ALL
                        .into_iter()
                        .any(|language| p.name_in(language).eq_ignore_ascii_case(name))
            })
            .map(AsRef::as_ref)
    }

    /// The game whose rule `typed` names, with the rule's id as the game writes it: any
    /// case, full-width letters and digits, with or without the hyphen (`d10`, `Ｄ－１０`).
    pub fn rule(&self, typed: &str) -> Option<(&dyn GamePlugin, &'static str)> {
        let wanted = rule_key(typed);
        if wanted.is_empty() {
            return None;
        }
        self.iter()
            .find_map(|game| game.rules().into_iter().find(|id| rule_key(id) == wanted).map(|id| (game, id)))
    }

    /// The first rule `text` cites (`RULES D-10`, `规则 D-10`) that a game has: where its
    /// id starts and ends in `text`, and the game's name.
    pub fn cited_rule(&self, text: &str) -> Option<(usize, usize, &'static str)> {
        let mut from = 0;
        loop {
            let (at, cite) = ["RULES ", "规则 "]
                .iter()
                .filter_map(|cite| text[from..].find(cite).map(|at| (from + at, cite.len())))
                .min()?;
            let start = at + cite;
            let end = text[start..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .map_or(text.len(), |n| start + n);
            let id = &text[start..end];
            let game = self.iter().find(|g| g.rules().contains(&id)).map(|g| g.name());
            if let Some(game) = game {
                return Some((start, end, game));
            }
            from = start;
        }
    }

    /// Every game.
    pub fn iter(&self) -> impl Iterator<Item = &dyn GamePlugin> {
        self.plugins.iter().map(AsRef::as_ref)
    }
}

/// A rule id as compared: ASCII upper case, full-width forms folded, hyphens and spaces
/// dropped (`D-10`, `d10` and `Ｄ－１０` are one id).
fn rule_key(id: &str) -> String {
    id.chars()
        .map(|c| match c {
            '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
            c => c,
        })
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_uppercase())
        .collect()
}
