//! The `GamePlugin` and `Table` traits, and the registry that lists the games.
//!
//! A [`GamePlugin`] is a game as data: its name, the help for each of its commands, and
//! how to open or restore a [`Table`]. A table is one running game: it parses a command
//! typed by a player, applies it to its pure state, and returns the announcements to make.
//! A refused command leaves the table exactly as it was. Timers (Thaum phases, Duel step
//! timeouts) are deadlines the table names and the caller fires, with the same code path
//! as a command.
//!
//! Adding a game touches only `core/src/games/` and one line in [`Registry::standard`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::dice::Dice;
use crate::ids::{PlayerId, RoomId};
use crate::text::RichText;
use crate::time::Timestamp;

/// One command's entry in the chat help.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommandHelp {
    /// The command word, without the prefix (`gather`).
    pub name: &'static str,
    /// Other words that mean the same (`gatherpower`).
    pub aliases: &'static [&'static str],
    /// The arguments, e.g. `<mana> <thaum>`.
    pub usage: &'static str,
    /// One sentence saying what it does.
    pub summary: &'static str,
    /// The arguments that name players. The daemon turns the names typed there (a nick,
    /// a display name) into player ids, and leaves every other word as typed, so a
    /// player called `fire` or `end` never changes a game word.
    pub players: &'static [PlayerArgument],
}

/// An argument of a command that names a player, by its position among the words after
/// the command word (0 is the first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlayerArgument {
    /// Names someone who plays already (`!bend 2 bob`).
    Known(usize),
    /// Names someone who joins by it (`!add bob`): a name nobody has yet is taken as a
    /// new player's, and must be one people can read (no control, invisible,
    /// direction-changing or look-alike characters).
    New(usize),
}

impl PlayerArgument {
    /// Its position among the words after the command word.
    pub fn position(self) -> usize {
        match self {
            PlayerArgument::Known(i) | PlayerArgument::New(i) => i,
        }
    }
}

/// Who an announcement is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Audience {
    /// Everyone at the table (every room of its bridge).
    Table,
    /// One player, privately.
    Player(PlayerId),
}

/// How many lines a network wants a game's news in (each network says which, through
/// [`GameTransport::form`](crate::GameTransport::form)).
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

/// A message a table wants sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Announcement {
    /// Who should see it.
    pub to: Audience,
    /// What it says.
    pub text: RichText,
    /// The one form it belongs to; `None` (most announcements) for every form. A game
    /// with a compact form returns both forms' announcements side by side, each marked
    /// with [`Announcement::only`], and the daemon sends each network the ones for its
    /// form.
    pub form: Option<Form>,
}

impl Announcement {
    /// A message for everyone at the table.
    pub fn table(text: impl Into<RichText>) -> Self {
        Self { to: Audience::Table, text: text.into(), form: None }
    }

    /// A private message for one player.
    pub fn player(player: &PlayerId, text: impl Into<RichText>) -> Self {
        Self { to: Audience::Player(player.clone()), text: text.into(), form: None }
    }

    /// The same announcement, for networks that show `form` only.
    pub fn only(self, form: Form) -> Self {
        Self { form: Some(form), ..self }
    }

    /// True when a network that shows `form` is sent this announcement.
    pub fn is_for(&self, form: Form) -> bool {
        self.form.is_none_or(|only| only == form)
    }
}

/// A command a player typed at a table.
#[derive(Clone, Copy, Debug)]
pub struct Action<'a> {
    /// Who typed it.
    pub actor: &'a PlayerId,
    /// The command without the prefix, e.g. `gather 3 fire`.
    pub command: &'a str,
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
}

impl Refusal {
    /// A refusal with a plain-text reason (`backticked` runs become code).
    pub fn because(reason: impl Into<String>) -> Self {
        let reason: String = reason.into();
        Refusal::Refused(RichText::from(reason))
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

    /// What to announce when the table opens (who plays, how to start).
    fn opening(&self) -> Vec<Announcement> {
        Vec::new()
    }

    /// Parses and applies a command. On `Err` the table is unchanged.
    fn act(&mut self, action: &Action<'_>, dice: &mut Dice) -> Result<Vec<Announcement>, Refusal>;

    /// True when `command` only asks (`status`): acting on it changes nothing, so the
    /// caller need not journal it.
    fn is_query(&self, _command: &str) -> bool {
        false
    }

    /// The next moment a timer is due, if any.
    fn next_timer(&self) -> Option<Timestamp>;

    /// Fires the timer due at `at` (as returned by [`Table::next_timer`]).
    fn fire_timer(&mut self, at: Timestamp, dice: &mut Dice) -> Vec<Announcement>;

    /// True when the game is over and the table takes no more commands.
    fn is_finished(&self) -> bool;

    /// Which dice key the table is on. The caller gives the table a new secret key, and
    /// reveals the old one, whenever this changes (RULES T-10: a Thaum table, which may
    /// run for seasons, rekeys at each season rollover). Most games keep one key: 0.
    fn dice_epoch(&self) -> u64 {
        0
    }

    /// The players seated at the table.
    fn players(&self) -> Vec<PlayerId>;

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
}

/// A game: its commands and how to open and restore its tables.
pub trait GamePlugin: Send + Sync {
    /// The game's name as players type it (`!new thaum`).
    fn name(&self) -> &'static str;

    /// One line saying what the game is.
    fn summary(&self) -> &'static str;

    /// Every command of the game, in the order help lists them.
    fn commands(&self) -> &'static [CommandHelp];

    /// Opens a table. Refuses setups the game cannot take (an unknown wizard, say).
    fn open(&self, setup: &TableSetup) -> Result<Box<dyn Table>, Refusal>;

    /// Rebuilds a table from its [`Table::snapshot`].
    fn restore(&self, snapshot: &Value) -> Result<Box<dyn Table>, String>;

    /// Answers a lobby command that belongs to this game (the Duel answers `wizards`).
    fn lobby(&self, _command: &str) -> Option<RichText> {
        None
    }
}

/// The games the daemon offers, in the order `!games` lists them.
pub struct Registry {
    plugins: Vec<Box<dyn GamePlugin>>,
}

impl Registry {
    /// A registry of the given games.
    pub fn new(plugins: Vec<Box<dyn GamePlugin>>) -> Self {
        Self { plugins }
    }

    /// Both games that ship with spellbridge, with their default options.
    pub fn standard() -> Self {
        Self::new(vec![
            Box::new(crate::games::thaum::ThaumPlugin::default()),
            Box::new(crate::games::duel::DuelPlugin::default()),
        ])
    }

    /// The game called `name` (case-insensitive).
    pub fn get(&self, name: &str) -> Option<&dyn GamePlugin> {
        self.plugins.iter().find(|p| p.name().eq_ignore_ascii_case(name)).map(AsRef::as_ref)
    }

    /// Every game.
    pub fn iter(&self) -> impl Iterator<Item = &dyn GamePlugin> {
        self.plugins.iter().map(AsRef::as_ref)
    }
}
