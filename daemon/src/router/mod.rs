//! The router: turns an inbound chat message into a lobby command, a table command or
//! chat to relay, applies it, and turns the table's events into outbound messages for
//! every room that should hear them (rendered by the game per destination: [`delivery`]).
//! The events are journaled with the action that made them.
//!
//! It owns the tables (one active table per room, or per bridge: the rooms of a bridge
//! are one place), pending Duel challenges, the [directory](crate::identity) of who is
//! who across networks, and the [relay](crate::relay) of chat between bridged rooms.
//! Before a command reaches a table its sender becomes a player (linked identities act
//! as one), names typed for players are resolved, and the sender's role (room
//! operator, configured game master) is judged. Mentions are shown per network: a pill
//! or nick where the player has an identity there, their name in bold elsewhere. It derives a
//! fresh [`Dice`] for every action from the table's secret dice key and the action's
//! sequence number ([`keys`]: committed when the table opens, revealed when it ends), and
//! fires due timers through the same path as commands. Every change is also
//! written to a [`journal`](crate::journal) that the caller takes with
//! [`Router::take_journal`] and commits before delivering anything; [`Router::replay`]
//! re-applies journal entries. It performs no I/O: the caller (the console, or the
//! daemon's network loop) delivers what it returns.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use spellbridge_core::dice::Commitment;
use spellbridge_core::grammar::{Grammar, ParseError, Parsed};
use spellbridge_core::locale::Args;
use spellbridge_core::plugin::OPENING_DRAW;
use spellbridge_core::text::Segment;
use spellbridge_core::words;
use spellbridge_core::{
    Action, Audience, Destination, Dice, Event, EventRecord, Form, GamePlugin, Inbound, Language, Message,
    NetworkId, PlayerId, Refusal, Registry, RichText, Role, RoomId, Said, Seat, TableSetup, Timestamp,
};

use crate::identity::{Identity, LinkCode, NameProblem, Scope};
use crate::journal::{Entry, SeatRecord, TableId};
use crate::limits::{CommandLimit, Verdict};
use crate::lobby::{LOBBY, LobbyCommand};
use crate::relay::{Bridge, Relay};
use crate::secrets::{SecretSource, Secrets};

mod answer;
mod board;
mod challenge_words;
mod challenges;
mod delivery;
mod dice_keys;
mod guards;
mod help;
mod identities;
mod ignore;
mod index;
mod keys;
mod language;
mod languages;
mod limited;
mod links;
mod marks;
mod members;
mod names;
mod prefix;
mod reader;
mod records;
mod rules;
mod said;
mod sent;
mod shown_names;
mod tables;

pub use crate::turn::{Happened, Outbound, Outcome, Place, Turn};
use answer::Answer;
pub use challenges::CHALLENGE_LIFETIME_SECS;
use delivery::reply;
use keys::TableDice;
pub use members::{RoomMembers, RoomMembersSource};
/// The store's meta key under which the names shown for players are kept.
pub use shown_names::META_KEY as SHOWN_NAMES_KEY;
use tables::{Seating, Tables};
pub use tables::{StoredHistory, StoredTable};

/// A challenge waiting for `!accept` or `!decline`.
#[derive(Clone, Debug)]
struct Challenge {
    /// The game it is to (its name in the registry).
    game: String,
    challenger: PlayerId,
    opponent: PlayerId,
    wizard: Option<String>,
    /// When it expires unanswered.
    expires: Timestamp,
    /// True when the challenger was a guest ([`SeatRecord::guest`]).
    guest: bool,
}

/// The router's config: what the daemon's config and its transports say, in one place
/// (the engine owns it and applies a new one with [`Router::reconfigure`]).
#[derive(Clone, Debug)]
pub struct RouterConfig {
    /// What starts a command (`!`).
    pub prefix: String,
    /// Where table keys and link codes come from: the operating system, except in a
    /// console replaying a script (see [`crate::secrets`]).
    pub secrets: Secrets,
    /// Rooms joined into bridges.
    pub bridges: Vec<Bridge>,
    /// Who may do more than play.
    pub permissions: Permissions,
    /// The per-player command limit of each network; a network not listed has none (the
    /// console lists none: CONTRACT.md).
    pub command_limits: BTreeMap<NetworkId, CommandLimit>,
    /// How each network's identities become player ids (IRC: `libera:alice`; Matrix ids
    /// as they are; the console's bare). A network not named here: inferred from the
    /// identity ([`Scope::infer`]).
    pub scopes: BTreeMap<NetworkId, Scope>,
    /// How long a Duel challenge waits for an answer, in seconds.
    pub challenge_lifetime: i64,
    /// Who is in the bridged rooms now, as the transports know it (none by default).
    pub room_members: RoomMembersSource,
    /// The form of games' announcements each network is sent, as its transport asks
    /// ([`GameTransport::form`](spellbridge_core::GameTransport::form)); a network not
    /// listed (the console) is sent the full form.
    pub forms: BTreeMap<NetworkId, Form>,
    /// How each network's players send the bot a private message, as its transport says
    /// ([`GameTransport::whisper`](spellbridge_core::GameTransport::whisper)), so
    /// instructions name their network's way; a network not listed: `Whisper::Privately`.
    pub whispers: BTreeMap<NetworkId, spellbridge_core::Whisper>,
    /// The networks whose transports show pictures (a Matrix account with
    /// `board_images`): tables' board pictures go to their rooms there ([`board`]).
    pub pictures: BTreeSet<NetworkId>,
    /// The spectator site's address (`[http] public_url`): `!board` elsewhere links to it.
    pub public_url: Option<String>,
    /// The language each room and each network's private messages are told in, as the
    /// config says (`!lang` overrides it: see [`language`]).
    pub languages: crate::config::language::LanguageSettings,
}

impl Default for RouterConfig {
    fn default() -> Self {
        Self {
            prefix: "!".to_owned(),
            secrets: Secrets::Os,
            bridges: Vec::new(),
            permissions: Permissions::default(),
            command_limits: BTreeMap::new(),
            scopes: BTreeMap::new(),
            challenge_lifetime: challenges::CHALLENGE_LIFETIME_SECS,
            room_members: RoomMembersSource::default(),
            forms: BTreeMap::new(),
            whispers: BTreeMap::new(),
            pictures: BTreeSet::new(),
            public_url: None,
            languages: crate::config::language::LanguageSettings::default(),
        }
    }
}

/// Who may do more than play, by identity.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Permissions {
    /// Bot admins: game masters of every table.
    pub admins: Vec<Identity>,
    /// Game masters of every table.
    pub game_masters: Vec<Identity>,
}

/// Routes messages to the lobby or to tables.
pub struct Router {
    registry: Registry,
    options: RouterConfig,
    /// The hosted tables, their index and the pictures to post ([`tables`]).
    tables: Tables,
    /// Challenges by the place they were made in (a bridge's hub).
    challenges: BTreeMap<Place, Challenge>,
    /// Who is who, the wrong link codes and the kept names ([`identities`]).
    identities: identities::Identities,
    /// Bridges and the chat relay.
    relay: Relay,
    /// Changes not yet taken by the caller.
    journal: Vec<Record>,
    /// Dice keys and link codes: never derived from anything a player can see.
    secrets: SecretSource,
    /// The command limit's counts, speakers' buckets and ignored players ([`guards`]).
    guards: guards::Guards,
    /// Every dice key made or given, and those given to check a table with ([`dice_keys`]).
    keys: dice_keys::DiceKeys,
    /// Rewrites the commands the texts suggest to the configured prefix (none for `!`).
    prefixer: Option<prefix::Prefixer>,
    /// Every command of the lobby and of every game, in one lookup.
    grammar: Grammar,
    /// Ratings and records kept up to date with the journal ([`records`]).
    ratings: records::Live,
    /// The languages `!lang` chose, and where players last asked ([`languages`]).
    languages: languages::Languages,
}

/// A journal entry with what was announced because of it.
#[derive(Clone, Debug)]
pub struct Record {
    /// The change.
    pub entry: Entry,
    /// The messages it caused, in order.
    pub announced: Vec<Outbound>,
}

/// Why a journal entry or a stored table could not be re-applied.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The entry names a game this build does not have.
    #[error("table {table}: no game called `{game}` in this build")]
    UnknownGame {
        /// The table.
        table: TableId,
        /// The game named.
        game: String,
    },
    /// The entry names a table that was never opened.
    #[error("table {0} has entries but was never opened")]
    NoSuchTable(TableId),
    /// The entry is out of order.
    #[error("table {table}: expected action {expected}, the log has {found}")]
    OutOfOrder {
        /// The table.
        table: TableId,
        /// The sequence number the table is at.
        expected: u64,
        /// The one the entry has.
        found: u64,
    },
    /// The game refused what it accepted the first time: the log and the code disagree.
    #[error("table {table}: action {sequence} was refused on replay: {reason}")]
    Diverged {
        /// The table.
        table: TableId,
        /// The action.
        sequence: u64,
        /// The game's reason.
        reason: String,
    },
    /// No dice key is known for a keyed table's epoch.
    #[error(
        "table {table}: no dice key for epoch {epoch} (the store's dice_keys table lacks it); give the key with `spellbridge verify --table {table} --key <64 hex digits>`"
    )]
    NoKey {
        /// The table.
        table: TableId,
        /// The epoch.
        epoch: u64,
    },
    /// A dice key does not match the commitment announced for it.
    #[error("table {table}: the dice key for epoch {epoch} does not match its commitment {commitment}")]
    KeyMismatch {
        /// The table.
        table: TableId,
        /// The epoch.
        epoch: u64,
        /// The commitment announced.
        commitment: Commitment,
    },
    /// A key was revealed for a table from before dice keys.
    #[error("table {0}: a dice key was revealed, but the table has a seed and no key")]
    NotKeyed(TableId),
    /// The dice derived for an action are not the ones recorded with it.
    #[error("table {table}: action {sequence} recorded dice seed {recorded}, but its key gives {derived}")]
    SeedDiffers {
        /// The table.
        table: TableId,
        /// The action.
        sequence: u64,
        /// The seed in the journal.
        recorded: u64,
        /// The seed the table's key (or seed) gives.
        derived: u64,
    },
    /// Replay made other events than the journal kept for an action: the log and the
    /// code disagree about what happened.
    #[error(
        "table {table}: action {sequence} told other events on replay than the journal kept (from event {at} on)"
    )]
    EventsDiffer {
        /// The table.
        table: TableId,
        /// The action (0 for the opening).
        sequence: u64,
        /// The first event that differs.
        at: usize,
    },
    /// A stored snapshot could not be loaded.
    #[error("table {table}: snapshot does not load: {reason}")]
    BadSnapshot {
        /// The table.
        table: TableId,
        /// Why.
        reason: String,
    },
}

/// Where a reply to the message being handled goes.
#[derive(Clone)]
struct ReplyTo {
    network: NetworkId,
    destination: Destination,
    /// The sender as their network knows them, named at the start of a reply in a room.
    addressee: PlayerId,
    /// The thread the message was said in.
    thread: Option<String>,
    /// The language the answer is told in: the room's, or privately the sender's.
    language: spellbridge_core::Language,
}

/// Who sent the message being handled.
struct Speaker<'a> {
    inbound: &'a Inbound,
    /// The player they act as.
    player: PlayerId,
    /// Where they said it (a bridge's rooms are one place: see [`Relay::hub`]).
    place: Place,
    role: Role,
}

impl Router {
    /// A router over the given games.
    pub fn new(registry: Registry, options: RouterConfig) -> Self {
        let secrets = SecretSource::new(&options.secrets);
        let identities = identities::Identities::new(options.scopes.clone());
        let mut grammar = Grammar::new();
        crate::lobby::add(&mut grammar, &registry);
        for game in registry.iter() {
            grammar.add(game.name(), game.commands());
        }
        let prefixer = prefix::Prefixer::new(&options.prefix, &grammar);
        let options_scopes = options.scopes.clone();
        Self {
            grammar,
            registry,
            relay: Relay::new(options.bridges.clone()),
            options,
            tables: Tables::default(),
            challenges: BTreeMap::new(),
            identities,
            journal: Vec::new(),
            secrets,
            guards: guards::Guards::default(),
            keys: dice_keys::DiceKeys::default(),
            prefixer,
            ratings: records::Live::new(options_scopes),
            languages: languages::Languages::default(),
        }
    }

    /// Takes a new config (the daemon's engine, once the transports have started, after
    /// a SIGHUP and when a bridge's alias is looked up); tables keep playing. What the
    /// router derived when it was made stays as it was until the next load: the prefix
    /// (the transports were started with it), how identities become player ids, and
    /// where secrets come from.
    pub fn reconfigure(&mut self, config: RouterConfig) {
        let kept = RouterConfig {
            prefix: std::mem::take(&mut self.options.prefix),
            secrets: self.options.secrets.clone(),
            scopes: std::mem::take(&mut self.options.scopes),
            ..config
        };
        self.relay.set_bridges(kept.bridges.clone());
        self.options = kept;
        // A room's hub may have moved: index every table again.
        let relay = &self.relay;
        self.tables.reindex_all(|place| relay.hub(place));
    }

    /// Takes the games a reloaded config offers (SIGHUP: `[[game]]` components loaded
    /// again): new tables open with them, and the grammar knows their commands. A table in
    /// play keeps the game it opened with (a component's table keeps its own build).
    pub fn set_games(&mut self, registry: Registry) {
        let mut grammar = Grammar::new();
        crate::lobby::add(&mut grammar, &registry);
        for game in registry.iter() {
            grammar.add(game.name(), game.commands());
        }
        self.prefixer = prefix::Prefixer::new(&self.options.prefix, &grammar);
        self.grammar = grammar;
        // A table in play of a game whose build changed keeps its own build's words.
        for seating in self.tables.unfinished_mut() {
            seating.build = registry
                .get(seating.table.game())
                .and_then(|game| game.build_of(&seating.table.snapshot()))
                .map(tables::Build);
            if let (Some(prefixer), Some(build)) = (&mut self.prefixer, &seating.build) {
                prefixer.add(build.0.commands());
            }
        }
        self.registry = registry;
    }

    /// The game playing table `seating`: the build it opened with when the registry has
    /// another now ([`GamePlugin::build_of`]), else the registry's.
    fn game_of<'a>(&'a self, seating: &'a Seating) -> Option<&'a dyn GamePlugin> {
        match &seating.build {
            Some(build) => Some(build.0.as_ref()),
            None => self.registry.get(seating.table.game()),
        }
    }

    /// The configured prefix given also to the commands of `build`, a table's older build
    /// (its hints name words the registry's build may not have).
    fn prefix_build(&mut self, build: Option<&tables::Build>) {
        if let (Some(prefixer), Some(build)) = (&mut self.prefixer, build) {
            prefixer.add(build.0.commands());
        }
    }

    /// The config the router works by.
    pub fn config(&self) -> &RouterConfig {
        &self.options
    }

    /// Indexes a table again after it may have changed (see [`index`]).
    fn reindex(&mut self, id: TableId) {
        let relay = &self.relay;
        self.tables.reindex(id, |place| relay.hub(place));
    }

    /// Takes the changes made since the last call, in order. The caller commits them
    /// before it delivers any outbound message.
    pub fn take_journal(&mut self) -> Vec<Record> {
        std::mem::take(&mut self.journal)
    }

    fn log(&mut self, entry: Entry) {
        self.ratings.apply(&self.registry, &entry);
        self.journal.push(Record { entry, announced: Vec::new() });
    }

    /// Notes what the latest entry announced, and passes it on.
    fn announced(&mut self, outbound: Vec<Outbound>) -> Vec<Outbound> {
        if let Some(record) = self.journal.last_mut() {
            record.announced.extend(outbound.iter().cloned());
        }
        outbound
    }

    /// Handles one inbound message at time `now`; returns what to send. A message that is
    /// not a command is relayed to the other rooms of its bridge, if any.
    pub fn handle(&mut self, inbound: &Inbound, now: Timestamp) -> Vec<Outbound> {
        self.handle_turn(inbound, now).outbound
    }

    /// [`Router::handle`], saying also what the message was ([`Happened`]): chat, a
    /// command accepted (it was journaled), refused or answered as a question, or dropped.
    pub fn handle_turn(&mut self, inbound: &Inbound, now: Timestamp) -> Turn {
        // A bridged room is a room whatever its size: to the Matrix transport a room of
        // two (the bot and one person) looks like a direct chat.
        let in_a_bridge;
        let inbound = if inbound.private
            && self
                .relay
                .bridge(&Place { network: inbound.network.clone(), room: inbound.room.clone() })
                .is_some()
        {
            in_a_bridge = Inbound { private: false, ..inbound.clone() };
            &in_a_bridge
        } else {
            inbound
        };
        self.identities.directory.saw(&inbound.network, &inbound.sender, &inbound.display_name);
        if let Some(formerly) = &inbound.formerly {
            // A nick change: the count of commands, the wrong link codes and an ignore go
            // with the new nick (with an account the id does not change: nothing to carry).
            let (before, now_called) = self.identities.renamed(&inbound.network, formerly, &inbound.sender);
            self.guards.follow_nick(&before, &now_called, now);
        }
        if let Some(told) = self.ignoring(inbound, now) {
            return Turn::new(Happened::Dropped, told);
        }
        match self.heard(inbound) {
            Some(reader::Request::Chat) => self.chat(inbound, now),
            Some(_) => Turn::new(Happened::Dropped, Vec::new()),
            None => self.command(inbound, now),
        }
    }

    /// A message that is not a command: relayed to the other rooms of its bridge, if any.
    fn chat(&mut self, inbound: &Inbound, now: Timestamp) -> Turn {
        // A name that answers for anyone else (a nick, a display name, a Matrix
        // localpart), or that someone in another of the bridge's rooms goes by now (an IRC
        // nick in the channel, heard or not), is shown with the speaker's id.
        let me = self.identities.directory.player(&inbound.network, &inbound.sender);
        let here = Place { network: inbound.network.clone(), room: inbound.room.clone() };
        if let Some(refused) = self.too_fast(inbound, &here, &me, now) {
            return refused;
        }
        let directory = &self.identities.directory;
        let elsewhere: Vec<Place> = self.relay.rooms(&here).into_iter().filter(|p| *p != here).collect();
        let members = &self.options.room_members;
        let taken = |name: &str| {
            let known = match directory.resolve(name) {
                Ok(Some(player)) => player != me,
                Ok(None) => false,
                Err(_) => true,
            };
            known || elsewhere.iter().any(|p| members.is_member(&p.network, &p.room, name))
        };
        let languages: BTreeMap<Place, Language> =
            elsewhere.iter().map(|p| (p.clone(), self.room_language(p))).collect();
        let language_of = |p: &Place| languages.get(p).copied().unwrap_or_default();
        let marks = self.speaker_marks(inbound, &me, &here);
        let relayed = self.relay.relay_marked(inbound, now, marks, taken, language_of);
        let bridge =
            (!relayed.is_empty()).then(|| self.relay.bridge(&here).map(|b| b.name.clone())).flatten();
        Turn::new(Happened::Chat { bridge }, relayed)
    }

    /// A command: read once ([`reader`]: its words, the sender's player and role, then
    /// the [`Request`](reader::Request)), and done.
    fn command(&mut self, inbound: &Inbound, now: Timestamp) -> Turn {
        self.relay.remember_command(inbound);
        self.languages.note_asked(inbound, now);
        let text = inbound.text.trim();
        let read = reader::Read::new(text, &self.options.prefix, &self.grammar);
        let player = self.identities.directory.player(&inbound.network, &inbound.sender);
        if let Err(instead) = self.within_limits(inbound, &player, now) {
            return Turn::new(Happened::Command(Outcome::Refused), instead);
        }
        // A challenge whose time ran out is gone before any command can answer it.
        let expired = self.expire_challenges(now);
        if self.identities.directory.set_home(
            &player,
            &inbound.network,
            &inbound.sender,
            &inbound.display_name,
        ) {
            self.log(Entry::Home {
                player: player.clone(),
                network: inbound.network.clone(),
                identity: inbound.sender.clone(),
                name: Some(inbound.display_name.clone()),
            });
        }
        let role = self.role(inbound, &player);
        let place = self.relay.hub(&Place { network: inbound.network.clone(), room: inbound.room.clone() });
        let speaker = Speaker { inbound, player, place, role };
        let reply_to = self.reply_to(&speaker, &read);
        // Everything journaled from here on is the command's doing (the player's home
        // network above is bookkeeping).
        let journaled = self.journal.len();
        let answer = match self.request(&read, &speaker, &reply_to) {
            reader::Request::Lobby { command, query } => {
                Answer { outbound: self.lobby(command, &speaker, &reply_to, now), query }
            }
            reader::Request::Table { table, command } => {
                self.table_command(table, &command, &speaker, text, &reply_to, now)
            }
            reader::Request::ClearChallenge(challenge) => {
                self.clear_challenge(&speaker.place, &speaker.player, &challenge).into()
            }
            reader::Request::Unread(answer) => answer.into(),
            // Told apart by `heard` before any command is read: never a command's request.
            reader::Request::Chat | reader::Request::Dropped => Vec::new().into(),
        };
        let outcome = if self.journal.len() > journaled {
            Outcome::Accepted
        } else if answer.query {
            Outcome::Query
        } else {
            Outcome::Refused
        };
        let outbound = if expired.is_empty() {
            answer.outbound
        } else {
            expired.into_iter().chain(answer.outbound).collect()
        };
        Turn::new(Happened::Command(outcome), self.prefixed(outbound))
    }

    /// Where the answer to `speaker`'s command goes, and in which language.
    fn reply_to(&self, speaker: &Speaker<'_>, read: &reader::Read<'_>) -> ReplyTo {
        let inbound = speaker.inbound;
        let here = Place { network: inbound.network.clone(), room: inbound.room.clone() };
        ReplyTo {
            network: inbound.network.clone(),
            destination: if inbound.private {
                Destination::Private(inbound.sender.clone())
            } else {
                Destination::Room(inbound.room.clone())
            },
            addressee: inbound.sender.clone(),
            thread: inbound.thread.clone(),
            // Help asked in Chinese (`!帮助`) is answered in Chinese.
            language: if !read.head.is_ascii() && read.lobby().is_some_and(|c| c.name == "help") {
                spellbridge_core::Language::ZhCn
            } else if inbound.private {
                self.player_language(&speaker.player, &inbound.network)
            } else {
                self.room_language(&here)
            },
        }
    }

    /// What the sender may do beyond playing: configured admins and game masters (by any
    /// identity of their player, speaking as an identity the network vouches for:
    /// [`Inbound::verified`]) are game masters everywhere; a room's operators may stop
    /// its table.
    fn role(&self, inbound: &Inbound, player: &PlayerId) -> Role {
        let permissions = &self.options.permissions;
        let listed = || {
            // Every command passes here: look the player's identities up only when the
            // config names anyone.
            let mut identities = self.identities.directory.identities(player);
            identities.push((inbound.network.clone(), inbound.sender.clone()));
            identities.iter().any(|identity| {
                permissions.admins.contains(identity) || permissions.game_masters.contains(identity)
            })
        };
        let anyone_listed = !permissions.admins.is_empty() || !permissions.game_masters.is_empty();
        // A bare IRC nick is whoever holds it now: never a configured game master.
        if anyone_listed && inbound.verified && listed() {
            Role::GameMaster
        } else if inbound.operator && !inbound.private {
            Role::Operator
        } else {
            Role::Player
        }
    }

    /// Fires every timer due at or before `now`, oldest first within each table.
    pub fn tick(&mut self, now: Timestamp) -> Vec<Outbound> {
        /// A bound on timers fired per table per tick, so a faulty game cannot hang us.
        const MAX_FIRINGS: usize = 100_000;
        let mut out = self.expire_challenges(now);
        for id in self.tables.due(now) {
            for _ in 0..MAX_FIRINGS {
                let Some(seating) = self.tables.get_mut(&id) else { break };
                let Some(at) = seating.table.next_timer().filter(|at| *at <= now) else {
                    break;
                };
                let mut dice = seating.dice.for_action(seating.sequence);
                let events = seating.table.fire_timer(at, &mut dice);
                let entry = Entry::Fired {
                    table: id,
                    sequence: seating.sequence,
                    at,
                    dice_seed: dice.seed(),
                    draws: dice.draws(),
                    events: records(&events),
                };
                seating.sequence = seating.sequence.saturating_add(1);
                self.log(entry);
                let outbound = self.deliver(id, &events);
                self.board_after(id, &events);
                out.extend(self.announced(outbound));
                out.extend(self.settle_dice(id));
            }
            self.reindex(id);
        }
        self.prefixed(out)
    }

    /// `outbound` with the commands it suggests written with the configured prefix, and
    /// the rules it cites linked to the site ([`Router::rules_linked`]).
    fn prefixed(&self, mut outbound: Vec<Outbound>) -> Vec<Outbound> {
        for out in &mut outbound {
            let mut text = std::mem::take(&mut out.message.text);
            if let Some(prefixer) = &self.prefixer {
                text = prefixer.apply(text);
            }
            out.message.text = self.rules_linked(text);
        }
        outbound
    }

    /// The earliest timer of any table, so a scheduler knows when to call [`Router::tick`].
    pub fn next_timer(&self) -> Option<Timestamp> {
        self.tables.next_timer().into_iter().chain(self.next_expiry()).min()
    }

    /// Every table's state, in the form of CONTRACT.md's `--state-json`.
    pub fn snapshot(&self) -> Value {
        self.tables.snapshot()
    }

    /// One table's entry of [`Router::snapshot`], with its number and sequence added.
    pub fn table_snapshot(&self, id: TableId) -> Option<Value> {
        self.tables.table_snapshot(id)
    }

    /// What the store keeps of one table: [`Router::table_snapshot`] as JSON text, and the
    /// columns it is indexed by. A game's history is left out of the text: its entries from
    /// position `history_from` on (the ones the store does not have) come beside it.
    pub fn stored_table(&self, id: TableId, history_from: usize) -> Option<StoredTable> {
        self.tables.stored_table(id, history_from)
    }

    /// Whether a table's game is over, if the table exists.
    pub fn table_finished(&self, id: TableId) -> Option<bool> {
        self.tables.finished(id)
    }

    /// The tables, by number.
    pub fn table_ids(&self) -> impl Iterator<Item = TableId> + '_ {
        self.tables.ids()
    }

    /// Puts back a table from its [`Router::table_snapshot`] (on restart).
    pub fn restore_table(&mut self, stored: &Value) -> Result<TableId, ReplayError> {
        let field = |name: &str| stored.get(name).cloned().unwrap_or(Value::Null);
        let id = field("table")
            .as_u64()
            .ok_or(ReplayError::BadSnapshot { table: 0, reason: "no table number".into() })?;
        let bad = |reason: &str| ReplayError::BadSnapshot { table: id, reason: reason.to_owned() };
        let game = field("game").as_str().map(str::to_owned).ok_or_else(|| bad("no game"))?;
        let network = field("network").as_str().map(NetworkId::new).ok_or_else(|| bad("no network"))?;
        let room = field("room").as_str().map(RoomId::new).ok_or_else(|| bad("no room"))?;
        let sequence = field("sequence").as_u64().ok_or_else(|| bad("no sequence"))?;
        let dice = match (field("seed").as_u64(), field("dice")) {
            (Some(seed), Value::Null) => TableDice::Seeded(seed),
            (None, dice) => {
                let epoch = dice["epoch"].as_u64().ok_or_else(|| bad("no dice epoch"))?;
                let commitment = dice["commitment"].as_str().ok_or_else(|| bad("no dice commitment"))?;
                let commitment = Commitment::parse(commitment).map_err(|e| bad(&e.to_string()))?;
                let key = self.known_key(id, epoch, &commitment).map_err(|e| bad(&e.to_string()))?;
                TableDice::Keyed { epoch, key, revealed: dice.get("key").is_some() }
            }
            (Some(_), _) => return Err(bad("both a seed and a dice key")),
        };
        let plugin =
            self.registry.get(&game).ok_or(ReplayError::UnknownGame { table: id, game: game.clone() })?;
        let table = plugin.restore(&field("state")).map_err(|reason| bad(&reason))?;
        let build = plugin.build_of(&field("state")).map(tables::Build);
        self.prefix_build(build.as_ref());
        self.tables.insert(id, Seating { place: Place { network, room }, dice, sequence, table, build });
        self.reindex(id);
        Ok(id)
    }

    /// Re-applies a journal entry, as when the entry was first made but without
    /// announcing anything. Entries of one table must come in order.
    pub fn replay(&mut self, entry: &Entry) -> Result<(), ReplayError> {
        match entry {
            Entry::Opened { .. } => self.replay_opened(entry)?,
            Entry::Acted { .. } => self.replay_acted(entry)?,
            Entry::Fired { table, sequence, at, dice_seed, events, .. } => {
                let seating = self.seating_at(*table, *sequence)?;
                let mut dice = seating.dice.for_action(seating.sequence);
                same_seed(*table, *sequence, *dice_seed, &dice)?;
                // As the journal recorded it where the live result was the machine's
                // ([`Table::replay_fire_timer`]).
                let told = seating.table.replay_fire_timer(*at, &mut dice, events);
                same_events(*table, *sequence, events, &told)?;
                seating.sequence = seating.sequence.saturating_add(1);
                self.reindex(*table);
            }
            Entry::Keyed { table, epoch, commitment } => self.replay_keyed(*table, *epoch, commitment)?,
            Entry::Revealed { table, epoch, key } => self.replay_revealed(*table, *epoch, key)?,
            Entry::Challenged { network, room, challenger, opponent, wizard, expires, guest, game } => {
                let place = Place { network: network.clone(), room: room.clone() };
                // An older journal's challenge names no game: it was to the one game taken by
                // challenge there was, the registry's first.
                let first = || self.registry.iter().find_map(|g| g.challenge_command().map(|_| g.name()));
                let Some(game) = game.clone().or_else(|| first().map(str::to_owned)) else {
                    return Ok(());
                };
                let challenge = Challenge {
                    game,
                    challenger: challenger.clone(),
                    opponent: opponent.clone(),
                    wizard: wizard.clone(),
                    guest: *guest,
                    // An older journal's challenge never expired: it does at the next tick.
                    expires: expires.unwrap_or(Timestamp(0)),
                };
                self.challenges.insert(place, challenge);
            }
            Entry::ChallengeClosed { network, room } => {
                self.challenges.remove(&Place { network: network.clone(), room: room.clone() });
            }
            Entry::Linked { network, identity, player } => {
                self.identities.directory.link(network, identity, player)
            }
            Entry::Unlinked { player } => {
                self.identities.directory.unlink(player);
            }
            Entry::Home { player, network, identity, name } => {
                let name = name.as_deref().unwrap_or(identity.as_str());
                self.identities.directory.set_home(player, network, identity, name);
            }
            Entry::LinkCode { code, player, network, identity, expires } => {
                self.identities.directory.restore_code(&LinkCode {
                    code: code.clone(),
                    player: player.clone(),
                    owner: (network.clone(), identity.clone()),
                    expires: *expires,
                });
            }
            Entry::LinkCodeClosed { code } => self.identities.directory.void(code),
            Entry::Ignored { player } => {
                self.guards.ignore(player);
            }
            Entry::Unignored { player } => {
                self.guards.unignore(player);
            }
            Entry::RoomLanguage { network, room, language } => {
                self.replay_room_language(Place { network: network.clone(), room: room.clone() }, *language);
            }
            Entry::PlayerLanguage { player, language } => {
                self.replay_player_language(player.clone(), *language)
            }
        }
        Ok(())
    }

    /// Re-applies an `acted` entry: the command read as it was kept, acted with the
    /// dice the journal recorded.
    fn replay_acted(&mut self, entry: &Entry) -> Result<(), ReplayError> {
        let Entry::Acted {
            table,
            sequence,
            actor,
            command,
            parsed,
            typed,
            private,
            now,
            role,
            dice_seed,
            events,
            ..
        } = entry
        else {
            return Ok(());
        };
        let seating = self.seating_at(*table, *sequence)?;
        // The journal keeps the command typed (a journal from before: as text,
        // read through the same grammar once).
        let diverged = |reason: String| ReplayError::Diverged { table: *table, sequence: *sequence, reason };
        let parsed = crate::journal::read_command(seating.table.commands(), parsed.as_ref(), command)
            .map_err(diverged)?;
        let action = Action { actor, command: &parsed, typed, private: *private, now: *now, role: *role };
        let mut dice = seating.dice.for_action(seating.sequence);
        same_seed(*table, *sequence, *dice_seed, &dice)?;
        // As the journal recorded it where the live result was the machine's, not the
        // game's (a component's call cut off by the wall clock: [`Table::replay_act`]).
        let told = seating.table.replay_act(&action, &mut dice, events).map_err(|refusal| {
            ReplayError::Diverged { table: *table, sequence: *sequence, reason: refusal.to_string() }
        })?;
        same_events(*table, *sequence, events, &told)?;
        seating.sequence = seating.sequence.saturating_add(1);
        self.reindex(*table);
        Ok(())
    }

    /// Re-applies an `opened` entry: the table as it opened, its dice keyed or seeded.
    fn replay_opened(&mut self, entry: &Entry) -> Result<(), ReplayError> {
        let Entry::Opened { table, game, network, room, seed, commitment, opening, events, .. } = entry
        else {
            return Ok(());
        };
        let plugin =
            self.registry.get(game).ok_or(ReplayError::UnknownGame { table: *table, game: game.clone() })?;
        let opened =
            plugin.restore(opening).map_err(|reason| ReplayError::BadSnapshot { table: *table, reason })?;
        // A component's table opened with an older build is worded by that build, as
        // `restore_table` does for a table restored from its snapshot.
        let build = plugin.build_of(opening).map(tables::Build);
        self.prefix_build(build.as_ref());
        let dice = match (seed, commitment) {
            (_, Some(commitment)) => {
                let epoch = opened.dice_epoch();
                TableDice::Keyed { epoch, key: self.known_key(*table, epoch, commitment)?, revealed: false }
            }
            (Some(seed), None) => TableDice::Seeded(*seed),
            (None, None) => {
                return Err(ReplayError::BadSnapshot {
                    table: *table,
                    reason: "it opened with neither a seed nor a dice commitment".into(),
                });
            }
        };
        same_events(*table, 0, events, &opened.opening())?;
        let place = Place { network: network.clone(), room: room.clone() };
        self.tables.insert(*table, Seating { place, dice, sequence: 0, table: opened, build });
        self.reindex(*table);
        Ok(())
    }

    fn seating_at(&mut self, table: TableId, sequence: u64) -> Result<&mut Seating, ReplayError> {
        let seating = self.tables.get_mut(&table).ok_or(ReplayError::NoSuchTable(table))?;
        if seating.sequence != sequence {
            return Err(ReplayError::OutOfOrder { table, expected: seating.sequence, found: sequence });
        }
        Ok(seating)
    }

    fn lobby(
        &mut self,
        command: LobbyCommand,
        speaker: &Speaker<'_>,
        reply_to: &ReplyTo,
        now: Timestamp,
    ) -> Vec<Outbound> {
        let say = |text: RichText| vec![reply(reply_to, text)];
        let (place, player, private) = (&speaker.place, &speaker.player, speaker.inbound.private);
        match command {
            LobbyCommand::Help(topic) => {
                say(self.help(place, topic.as_deref(), speaker.role, reply_to.language))
            }
            LobbyCommand::Games => say(self.games(reply_to.language)),
            LobbyCommand::Asked { game, command } => {
                let answer =
                    self.registry.get(game).and_then(|game| game.lobby_in(command, reply_to.language));
                answer.map_or_else(Vec::new, say)
            }
            LobbyCommand::Link(None) => self.give_link_code(speaker, reply_to, now),
            LobbyCommand::Link(Some(code)) => self.redeem_link_code(speaker, &code, reply_to, now),
            LobbyCommand::Unlink => self.unlink(speaker, reply_to),
            LobbyCommand::Ignore(name) => self.ignore(speaker, name.as_deref(), reply_to),
            LobbyCommand::Unignore(name) => self.unignore(speaker, &name, reply_to),
            LobbyCommand::New(game) => {
                if private {
                    return say(said::said(reply_to.language, "lobby-new-private", Args::new()));
                }
                let seats = vec![Seat { player: player.clone(), choice: None }];
                self.open(place, &game, seats, &[speaker.inbound.guest], now, reply_to)
            }
            LobbyCommand::Challenge { game, words } => self.challenge(speaker, game, &words, now, reply_to),
            LobbyCommand::Accept(wizard) => {
                self.accept(place, player, speaker.inbound.guest, wizard, now, reply_to)
            }
            LobbyCommand::Decline => self.decline(place, player, reply_to),
            LobbyCommand::Withdraw => self.withdraw(speaker, reply_to),
            LobbyCommand::Board => self.board(place, reply_to),
            // Players named as the asker's network shows them (their one name elsewhere).
            LobbyCommand::Stats(name) => {
                let stats = self.stats(speaker, name.as_deref(), reply_to.language);
                say(self.localize(&reply_to.network, stats))
            }
            LobbyCommand::Top(game) => {
                let top = self.top(game.as_deref(), reply_to.language);
                say(self.localize(&reply_to.network, top))
            }
            LobbyCommand::Lang(word) => self.choose_language(speaker, word.as_deref(), reply_to),
            LobbyCommand::Rules(id) => say(self.rules(place, id.as_deref(), reply_to.language)),
        }
    }

    fn open(
        &mut self,
        place: &Place,
        game: &str,
        seats: Vec<Seat>,
        guests: &[bool],
        now: Timestamp,
        reply_to: &ReplyTo,
    ) -> Vec<Outbound> {
        let language = reply_to.language;
        let Some(plugin) = self.registry.get(game) else {
            let names: Vec<String> = self.registry.iter().map(|g| g.name_in(language)).collect();
            let separator = if language == Language::En { ", " } else { "、" };
            let args = Args::new().text("game", game).text("games", names.join(separator));
            let text = match words::nearest(game, names.iter().map(String::as_str)) {
                Some(guess) => said::said(language, "lobby-new-unknown-guess", args.text("guess", guess)),
                None => said::said(language, "lobby-new-unknown", args),
            };
            return vec![reply(reply_to, text)];
        };
        if let Some(busy) = self.active_at(place) {
            let game = self.tables[&busy].table.game();
            return vec![reply(
                reply_to,
                said::said(
                    language,
                    "lobby-new-busy",
                    Args::new().text("game", self.game_name(game, language)),
                ),
            )];
        }
        let setup = TableSetup { room: place.room.clone(), seats, now };
        let id = self.tables.next_number();
        // RULES T-10: the opening draws from the committed key too (epoch 0: the one a
        // table keeps unless it says otherwise), at an action number no move reaches.
        let first_key = self.secrets.table_key(id, 0);
        let mut opening_dice = Dice::keyed(&first_key, OPENING_DRAW);
        match plugin.open_with_dice(&setup, &mut opening_dice) {
            Err(refusal) => {
                let language = reply_to.language;
                vec![reply(reply_to, refusal_text(refusal, language))]
            }
            Ok(table) => {
                // RULES T-10: a secret key, committed to now and revealed when the table ends.
                let epoch = table.dice_epoch();
                let key = if epoch == 0 { first_key } else { self.secrets.table_key(id, epoch) };
                self.keys.keep(id, epoch, key.clone());
                let commitment = key.commitment();
                let opening = table.opening();
                let committed = commitment.clone();
                let opened_as = table.snapshot();
                self.log(Entry::Opened {
                    table: id,
                    game: plugin.name().to_owned(),
                    network: place.network.clone(),
                    room: place.room.clone(),
                    seed: None,
                    commitment: Some(commitment),
                    seats: setup
                        .seats
                        .iter()
                        .enumerate()
                        .map(|(i, s)| SeatRecord {
                            player: s.player.clone(),
                            choice: s.choice.clone(),
                            guest: guests.get(i).copied().unwrap_or(false),
                        })
                        .collect(),
                    now,
                    opening: opened_as,
                    events: records(&opening),
                });
                let dice = TableDice::Keyed { epoch, key, revealed: false };
                self.tables
                    .insert(id, Seating { place: place.clone(), dice, sequence: 0, table, build: None });
                self.reindex(id);
                let mut outbound = self.deliver(id, &opening);
                outbound.extend(self.deliver_text(id, |language| {
                    self.commitment_text(id, language, "router-dice-commitment", &committed)
                }));
                self.announced(outbound)
            }
        }
    }

    /// Applies `command` (read for `index`'s game: [`Router::request`]) at table `index`,
    /// said by `speaker` as `typed`: a question is answered, an action journaled and told,
    /// a refusal answered where it should be.
    fn table_command(
        &mut self,
        index: TableId,
        command: &Parsed,
        speaker: &Speaker<'_>,
        typed: &str,
        reply_to: &ReplyTo,
        now: Timestamp,
    ) -> Answer {
        let (sender, private, role) = (&speaker.player, speaker.inbound.private, speaker.role);
        let Some(seating) = self.tables.get_mut(&index) else { return Vec::new().into() };
        let action = Action { actor: sender, command, typed, private, now, role };
        let mut dice = seating.dice.for_action(seating.sequence);
        let query = command.is_query();
        let span = tracing::debug_span!(
            "table",
            table = index,
            game = seating.table.game(),
            outcome = tracing::field::Empty
        );
        let _in_table = span.enter();
        let acted = seating.table.act(&action, &mut dice);
        let outcome = match &acted {
            Ok(_) if query => Outcome::Query,
            Ok(_) => Outcome::Accepted,
            Err(_) => Outcome::Refused,
        };
        span.record("outcome", outcome.as_str());
        tracing::debug!(sequence = seating.sequence, "table acted");
        match acted {
            // A question changes nothing: answer it without journaling it.
            Ok(events) if query => Answer { outbound: self.deliver_reply(index, &events, reply_to), query },
            Ok(events) => {
                let entry = Entry::Acted {
                    table: index,
                    sequence: seating.sequence,
                    actor: sender.clone(),
                    command: command.text(),
                    parsed: Some(command.kept()),
                    typed: typed.to_owned(),
                    private,
                    now,
                    role,
                    dice_seed: dice.seed(),
                    draws: dice.draws(),
                    events: records(&events),
                };
                seating.sequence = seating.sequence.saturating_add(1);
                self.log(entry);
                self.reindex(index);
                let outbound = self.deliver(index, &events);
                self.board_after(index, &events);
                let mut out = self.announced(outbound);
                out.extend(self.settle_dice(index));
                out.into()
            }
            Err(refusal) => self.refused(index, refusal, reply_to).into(),
        }
    }

    /// What a table's refusal answers, and where: an unknown command with a guess among
    /// its game's; one said where it should not have been (a Duel spell typed in a room)
    /// to the asker privately (a Matrix network opens a direct chat for it, and the room
    /// is told where it is: `sent`); any other where it was said.
    fn refused(&self, index: TableId, refusal: Refusal, reply_to: &ReplyTo) -> Vec<Outbound> {
        let language = reply_to.language;
        if let Refusal::UnknownCommand(word) = &refusal {
            return vec![reply(reply_to, self.unknown_command(word, Some(index), language))];
        }
        let privately = matches!(refusal, Refusal::Privately(_));
        let text = self.localize(&reply_to.network, refusal_text(refusal, language));
        if privately {
            let private = ReplyTo {
                destination: Destination::Private(reply_to.addressee.clone()),
                thread: None,
                ..reply_to.clone()
            };
            return vec![reply(&private, text)];
        }
        vec![reply(reply_to, text)]
    }

    /// A command whose arguments could not be read, answered with the usage line from its
    /// declaration and the configured prefix (every parse error is worded by the grammar).
    fn unread(&self, error: &ParseError, example_player: Option<&str>, language: Language) -> RichText {
        refusal_text(
            Refusal::Refused(error.render_in(&self.options.prefix, example_player, language)),
            language,
        )
    }

    /// The unfinished table a private `command` of `player`'s goes to: the one table
    /// where they are seated, else the one of those whose game has that command (only
    /// a Duel takes `!cast`, so a player at a Thaum table and a Duel casts privately).
    fn private_table(&self, player: &PlayerId, read: &reader::Read<'_>) -> Result<TableId, ()> {
        let seated: Vec<TableId> = self.tables.seated(player).collect();
        let only = |tables: &[TableId]| match tables {
            [index] => Ok(*index),
            _ => Err(()),
        };
        only(&seated).or_else(|()| {
            let taking: Vec<TableId> =
                seated.into_iter().filter(|i| read.at(&self.tables[i]).is_some()).collect();
            only(&taking)
        })
    }

    fn private_table_problem(&self, player: &PlayerId, language: Language) -> RichText {
        let tables: Vec<String> = self
            .tables
            .seated(player)
            .map(|i| {
                let args = Args::new()
                    .text("game", self.game_name(self.tables[&i].table.game(), language))
                    .text("room", self.tables[&i].place.room.as_str());
                said::said(language, "router-table-in-room", args).plain()
            })
            .collect();
        if tables.is_empty() {
            said::said(language, "router-no-table", Args::new())
        } else {
            let separator = if language == Language::En { ", " } else { "、" };
            said::said(language, "router-several-tables", Args::new().text("tables", tables.join(separator)))
        }
    }

    /// The most recent finished table in a place (a room, or a bridge's hub).
    fn finished_at(&self, place: &Place) -> Option<TableId> {
        self.tables.finished_at(place)
    }

    /// The unfinished table in a place (a room, or a bridge's hub).
    fn active_at(&self, place: &Place) -> Option<TableId> {
        self.tables.active_at(place)
    }
}

/// Replay re-derives each action's dice: they must be the ones the journal recorded.
fn same_seed(table: TableId, sequence: u64, recorded: u64, dice: &Dice) -> Result<(), ReplayError> {
    if dice.seed() == recorded {
        Ok(())
    } else {
        Err(ReplayError::SeedDiffers { table, sequence, recorded, derived: dice.seed() })
    }
}

/// Events as the journal keeps them.
fn records(events: &[Event]) -> Vec<EventRecord> {
    events.iter().map(Event::record).collect()
}

/// Replay makes each action's events again: they must be the ones the journal kept (a
/// journal from before events kept none, and is not compared).
fn same_events(
    table: TableId,
    sequence: u64,
    kept: &[EventRecord],
    made: &[Event],
) -> Result<(), ReplayError> {
    if kept.is_empty() || kept.len() == made.len() && kept.iter().zip(made).all(|(k, m)| *k == m.record()) {
        return Ok(());
    }
    let at = kept.iter().zip(made).position(|(k, m)| *k != m.record()).unwrap_or(kept.len().min(made.len()));
    Err(ReplayError::EventsDiffer { table, sequence, at })
}

/// A refusal as it is answered. A name echoed in it is escaped, so a hidden or reversing
/// character in what someone typed is seen, not obeyed. A game's refusal is told in
/// `language`.
fn refusal_text(refusal: Refusal, language: Language) -> RichText {
    let text = match refusal {
        Refusal::UnknownCommand(word) => {
            said::said(language, "router-unknown-command", Args::new().text("word", word))
        }
        said => said.text(language).unwrap_or_default(),
    };
    text.into_segments().into_iter().fold(RichText::new(), |out, segment| match segment {
        Segment::Text { text, style } => {
            out.push(Segment::Text { text: crate::names::escaped(&text), style })
        }
        other => out.push(other),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const T: Timestamp = Timestamp::CONSOLE_EPOCH;

    fn router() -> Router {
        bridged(Permissions::default())
    }

    /// A router whose IRC `#magic` and Matrix `!m` are bridged, with `permissions` (the
    /// router tests of this module and its children share it).
    pub(super) fn bridged(permissions: Permissions) -> Router {
        let rooms =
            [(NetworkId::new("irc"), RoomId::new("#magic")), (NetworkId::new("matrix"), RoomId::new("!m"))];
        let bridges = vec![crate::relay::bridge("magic", &rooms, true)];
        Router::new(Registry::standard(), RouterConfig { bridges, permissions, ..RouterConfig::default() })
    }

    fn irc(nick: &str, text: &str) -> Inbound {
        Inbound {
            message_id: Some(format!("irc-{text}")),
            ..Inbound::new(NetworkId::new("irc"), RoomId::new("#magic"), PlayerId::new(nick), text)
        }
    }

    fn matrix(said: Said, text: &str) -> Inbound {
        Inbound {
            display_name: "Merlin".into(),
            said,
            message_id: Some(format!("${text}")),
            ..Inbound::new(NetworkId::new("matrix"), RoomId::new("!m"), PlayerId::new("@mage:hs"), text)
        }
    }

    fn texts(out: &[Outbound]) -> Vec<String> {
        out.iter().map(|o| format!("{} {}", o.network, o.message.text.plain())).collect()
    }

    /// Issue 32: an accepted command is journaled typed, and replay applies that reading
    /// no text: a journal whose text was changed still replays to the same state. A
    /// journal from before (text only) replays to the same state too, its text read once
    /// through the game's grammar.
    #[test]
    fn replay_applies_the_typed_command_and_reads_an_old_text_journal_alike() {
        let seeded = || {
            let config = RouterConfig { secrets: Secrets::Seeded(3), ..RouterConfig::default() };
            Router::new(Registry::standard(), config)
        };
        let mut router = seeded();
        for (nick, text) in [("alice", "!new thaum"), ("bob", "!join"), ("alice", "!coins bob +5")] {
            router.handle(&irc(nick, text), T);
        }
        let journal = router.take_journal();
        let typed = |entry: &Entry| matches!(entry, Entry::Acted { parsed: Some(_), .. });
        assert_eq!(journal.iter().filter(|r| typed(&r.entry)).count(), 2, "both moves are typed");

        let mut replayed = seeded();
        for record in &journal {
            let mut entry = record.entry.clone();
            if let Entry::Acted { command, .. } = &mut entry {
                "coins bob +900".clone_into(command);
            }
            replayed.replay(&entry).expect("replays from the typed command");
        }
        assert_eq!(replayed.snapshot(), router.snapshot());

        let mut old = seeded();
        for record in &journal {
            let mut json = serde_json::to_value(&record.entry).expect("json");
            json.as_object_mut().expect("an object").remove("parsed");
            let entry: Entry = serde_json::from_value(json).expect("an old entry reads");
            assert!(!typed(&entry));
            old.replay(&entry).expect("an old text journal replays");
        }
        assert_eq!(old.snapshot(), router.snapshot());
    }

    /// IRC `#magic` as its transport knows it: merlin is there (he has not spoken).
    struct Channel;

    impl RoomMembers for Channel {
        fn is_member(&self, network: &NetworkId, room: &RoomId, name: &str) -> bool {
            (network.as_str(), room.as_str()) == ("irc", "#magic") && name.eq_ignore_ascii_case("merlin")
        }
    }

    #[test]
    fn a_display_name_that_is_the_nick_of_someone_in_the_channel_is_shown_with_its_id() {
        let mut router = router();
        let before = router.handle(&matrix(Said::Message, "hello"), T);
        assert_eq!(texts(&before), ["irc <Merlin> hello"], "no member list: nobody to pass for");
        let room_members = RoomMembersSource::new(std::sync::Arc::new(Channel));
        router.reconfigure(RouterConfig { room_members, ..router.config().clone() });
        let marked = router.handle(&matrix(Said::Message, "I concede"), T);
        assert_eq!(texts(&marked), ["irc <Merlin (@mage:hs)> I concede"]);
        // An IRC speaker is shown by nick as ever.
        let irc_side = router.handle(&irc("merlin", "hi"), T);
        assert_eq!(texts(&irc_side), ["matrix <merlin> hi"]);
    }

    #[test]
    fn a_challenge_names_a_player_heard_already_and_only_they_accept() {
        let mut router = router();
        // Merlin has not spoken since the start: nobody by that name is known (issue 13,
        // finding 6: whoever took the name later could accept).
        let refused = router.handle(&irc("alice", "!duel Merlin"), T);
        assert!(texts(&refused)[0].contains("Nobody here is called `Merlin`"), "{:?}", texts(&refused));
        router.handle(&matrix(Said::Message, "hello"), T);
        router.handle(&irc("alice", "!duel Merlin"), T);
        let accepted = router.handle(&matrix(Said::Message, "!accept"), T);
        assert!(texts(&accepted).iter().any(|t| t.contains("Round 1 begins")), "{:?}", texts(&accepted));
        let snapshot = router.snapshot();
        assert_eq!(
            snapshot["tables"][0]["state"]["players"],
            json!(["irc:alice", "@mage:hs"]),
            "{snapshot:#}"
        );
    }

    #[test]
    fn a_bridged_room_of_two_is_a_room_not_a_direct_chat() {
        let mut router = router();
        let mut chat = matrix(Said::Message, "hello");
        chat.private = true; // as the Matrix transport would say of a bridged room it vouched for as private
        assert_eq!(texts(&router.handle(&chat, T)), ["irc <Merlin> hello"]);
        let mut command = matrix(Said::Message, "!new thaum");
        command.private = true;
        let out = texts(&router.handle(&command, T));
        // The opening and the dice commitment, each in both rooms of the bridge.
        assert!(out.len() == 4 && out[0].contains("opens a Thaum table"), "{out:?}");
        assert_eq!(out.iter().filter(|t| t.contains("Dice commitment")).count(), 2, "{out:?}");
    }

    #[test]
    fn edits_reactions_and_deletions_of_commands_are_not_relayed() {
        let mut router = router();
        let command = matrix(Said::Message, "!games");
        router.handle(&command, T);
        let edit = matrix(Said::Edit { original: "$!games".into() }, "!help");
        assert!(router.handle(&edit, T).is_empty());
        let reaction = matrix(Said::Reaction { target: "$!games".into(), key: "👍".into() }, "👍");
        assert!(router.handle(&reaction, T).is_empty());
        // Nor is a chat line edited into a command.
        router.handle(&matrix(Said::Message, "hello"), T);
        let edit = matrix(Said::Edit { original: "$hello".into() }, "!gather 1 fire");
        assert!(router.handle(&edit, T).is_empty());
    }
}

#[cfg(test)]
mod build_tests;
#[cfg(test)]
mod chinese_tests;
#[cfg(test)]
mod present_tests;
#[cfg(test)]
mod scale_tests;
