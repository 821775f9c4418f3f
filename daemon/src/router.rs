//! The router: turns an inbound chat message into a lobby command, a table command or
//! chat to relay, applies it, and turns the resulting announcements into outbound
//! messages for every room that should hear them.
//!
//! It owns the tables (one active table per room, or per bridge: the rooms of a bridge
//! are one place), pending Duel challenges, the [directory](crate::identity) of who is
//! who across networks, and the [relay](crate::relay) of chat between bridged rooms.
//! Before a command reaches a table its sender becomes a player (linked identities act
//! as one), names typed for players are resolved, and the sender's standing (room
//! operator, configured game master) is judged. Mentions are shown per network: a pill
//! or nick where the player has an identity there, their name in bold elsewhere. It derives a
//! fresh [`Dice`] for every action from the table's seed and the action's sequence
//! number, and fires due timers through the same path as commands. Every change is also
//! written to a [`journal`](crate::journal) that the caller takes with
//! [`Router::take_journal`] and commits before delivering anything; [`Router::replay`]
//! re-applies journal entries. It performs no I/O: the caller (the console, or the
//! daemon's network loop) delivers what it returns.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use spellbridge_core::dice::mix;
use spellbridge_core::text::Segment;
use spellbridge_core::words;
use spellbridge_core::{
    Action, Announcement, Audience, Destination, Dice, Inbound, Message, NetworkId, PlayerId, Refusal,
    Registry, RichText, RoomId, Said, Seat, Standing, Table, TableSetup, Timestamp,
};

use crate::identity::{Directory, Identity, NameProblem};
use crate::journal::{Entry, SeatRecord, TableId};
use crate::lobby::{self, LOBBY_COMMANDS, LobbyCommand};
use crate::relay::{Bridge, Relay};

/// A room on a network: where a table sits and where replies go.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Place {
    /// The network.
    pub network: NetworkId,
    /// The room on it.
    pub room: RoomId,
}

/// A message the router wants delivered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outbound {
    /// The network to send it on.
    pub network: NetworkId,
    /// The room or user to send it to.
    pub to: Destination,
    /// What it says, and how.
    pub message: Message,
}

/// A table with what the router keeps about it.
#[derive(Debug)]
struct Seating {
    place: Place,
    /// The table's own seed: every action's dice derive from it (RULES T-10).
    seed: u64,
    /// How many actions (accepted commands and fired timers) the table has taken.
    sequence: u64,
    table: Box<dyn Table>,
}

/// A Duel challenge waiting for `!accept` or `!decline`.
#[derive(Clone, Debug)]
struct Challenge {
    challenger: PlayerId,
    opponent: PlayerId,
    wizard: Option<String>,
}

/// Router settings.
#[derive(Clone, Debug)]
pub struct RouterOptions {
    /// What starts a command (`!`).
    pub prefix: String,
    /// The seed every table seed (and link code) is derived from.
    pub master_seed: u64,
    /// Rooms joined into bridges.
    pub bridges: Vec<Bridge>,
    /// Who may do more than play.
    pub permissions: Permissions,
}

impl Default for RouterOptions {
    fn default() -> Self {
        Self {
            prefix: "!".to_owned(),
            master_seed: 0,
            bridges: Vec::new(),
            permissions: Permissions::default(),
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
    options: RouterOptions,
    /// Every table ever opened, by number; at most one unfinished per place.
    tables: BTreeMap<TableId, Seating>,
    /// Challenges by the place they were made in (a bridge's hub).
    challenges: BTreeMap<Place, Challenge>,
    /// Who is who across networks.
    directory: Directory,
    /// Bridges and the chat relay.
    relay: Relay,
    /// Changes not yet taken by the caller.
    journal: Vec<Record>,
}

/// One table as the store keeps it.
#[derive(Clone, Debug)]
pub struct StoredTable {
    /// The game.
    pub game: &'static str,
    /// The network of its room.
    pub network: NetworkId,
    /// Its room.
    pub room: RoomId,
    /// True once the game is over.
    pub finished: bool,
    /// [`Router::table_snapshot`] as JSON text.
    pub text: String,
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
struct ReplyTo {
    network: NetworkId,
    destination: Destination,
    /// The sender as their network knows them, named at the start of a reply in a room.
    addressee: PlayerId,
    /// The thread the message was said in.
    thread: Option<String>,
}

/// Who sent the message being handled.
struct Speaker<'a> {
    inbound: &'a Inbound,
    /// The player they act as.
    player: PlayerId,
    /// Where they said it (a bridge's rooms are one place: see [`Relay::hub`]).
    place: Place,
    standing: Standing,
}

impl Router {
    /// A router over the given games.
    pub fn new(registry: Registry, options: RouterOptions) -> Self {
        Self {
            registry,
            relay: Relay::new(options.bridges.clone()),
            options,
            tables: BTreeMap::new(),
            challenges: BTreeMap::new(),
            directory: Directory::default(),
            journal: Vec::new(),
        }
    }

    /// Takes new bridges and permissions (the config was reloaded); tables keep playing.
    pub fn reconfigure(&mut self, bridges: Vec<Bridge>, permissions: Permissions) {
        self.relay.set_bridges(bridges.clone());
        self.options.bridges = bridges;
        self.options.permissions = permissions;
    }

    /// True when `inbound` is a command (a message starting with the prefix), not chat.
    pub fn is_command(&self, inbound: &Inbound) -> bool {
        inbound.said == Said::Message && self.looks_like_command(&inbound.text)
    }

    /// True when `text` starts with the prefix and something follows it.
    fn looks_like_command(&self, text: &str) -> bool {
        text.trim().strip_prefix(self.options.prefix.as_str()).is_some_and(|rest| !rest.trim().is_empty())
    }

    /// Takes the changes made since the last call, in order. The caller commits them
    /// before it delivers any outbound message.
    pub fn take_journal(&mut self) -> Vec<Record> {
        std::mem::take(&mut self.journal)
    }

    fn log(&mut self, entry: Entry) {
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
        self.directory.saw(&inbound.network, &inbound.sender, &inbound.display_name);
        if !self.is_command(inbound) {
            // An edit that makes a message a command is not one (it is never executed),
            // but like a command it is not relayed.
            if matches!(inbound.said, Said::Edit { .. }) && self.looks_like_command(&inbound.text) {
                return Vec::new();
            }
            return self.relay.relay(inbound);
        }
        self.relay.remember_command(inbound);
        let text = inbound.text.trim();
        let command = text.strip_prefix(self.options.prefix.as_str()).unwrap_or(text).trim();
        let player = self.directory.player(&inbound.network, &inbound.sender);
        if self.directory.set_home(&player, &inbound.network, &inbound.sender, &inbound.display_name) {
            self.log(Entry::Home {
                player: player.clone(),
                network: inbound.network.clone(),
                identity: inbound.sender.clone(),
                name: Some(inbound.display_name.clone()),
            });
        }
        let standing = self.standing(inbound, &player);
        let place = self.relay.hub(&Place { network: inbound.network.clone(), room: inbound.room.clone() });
        let speaker = Speaker { inbound, player, place, standing };
        let reply_to = ReplyTo {
            network: inbound.network.clone(),
            destination: if inbound.private {
                Destination::Private(inbound.sender.clone())
            } else {
                Destination::Room(inbound.room.clone())
            },
            addressee: inbound.sender.clone(),
            thread: inbound.thread.clone(),
        };
        match lobby::parse(command) {
            Err(error) => vec![reply(&reply_to, RichText::from(error.0))],
            Ok(Some(lobby_command)) => self.lobby(lobby_command, &speaker, &reply_to, now),
            Ok(None) => self.table_command(&speaker, command, text, &reply_to, now),
        }
    }

    /// What the sender may do beyond playing: configured admins and game masters (by any
    /// identity of their player) are game masters everywhere; a room's operators may
    /// stop its table.
    fn standing(&self, inbound: &Inbound, player: &PlayerId) -> Standing {
        let mut identities = self.directory.identities(player);
        identities.push((inbound.network.clone(), inbound.sender.clone()));
        let permissions = &self.options.permissions;
        let listed = |list: &[Identity]| identities.iter().any(|identity| list.contains(identity));
        if listed(&permissions.admins) || listed(&permissions.game_masters) {
            Standing::GameMaster
        } else if inbound.operator && !inbound.private {
            Standing::Operator
        } else {
            Standing::Player
        }
    }

    /// Fires every timer due at or before `now`, oldest first within each table.
    pub fn tick(&mut self, now: Timestamp) -> Vec<Outbound> {
        /// A bound on timers fired per table per tick, so a faulty game cannot hang us.
        const MAX_FIRINGS: usize = 100_000;
        let mut out = Vec::new();
        let ids: Vec<TableId> = self.tables.keys().copied().collect();
        for id in ids {
            for _ in 0..MAX_FIRINGS {
                let Some(seating) = self.tables.get_mut(&id) else { break };
                let Some(at) = seating.table.next_timer().filter(|at| *at <= now) else {
                    break;
                };
                let mut dice = Dice::for_action(seating.seed, seating.sequence);
                let announcements = seating.table.fire_timer(at, &mut dice);
                let entry = Entry::Fired {
                    table: id,
                    sequence: seating.sequence,
                    at,
                    dice_seed: dice.seed(),
                    draws: dice.draws(),
                };
                seating.sequence = seating.sequence.saturating_add(1);
                self.log(entry);
                let outbound = self.deliver(id, announcements);
                out.extend(self.announced(outbound));
            }
        }
        out
    }

    /// The earliest timer of any table, so a scheduler knows when to call [`Router::tick`].
    pub fn next_timer(&self) -> Option<Timestamp> {
        self.tables.values().filter_map(|s| s.table.next_timer()).min()
    }

    /// Every table's state, in the form of CONTRACT.md's `--state-json`.
    pub fn snapshot(&self) -> Value {
        let tables: Vec<Value> = self.tables.keys().filter_map(|id| self.table_snapshot(*id)).collect();
        json!({ "tables": tables })
    }

    /// One table's entry of [`Router::snapshot`], with its number and sequence added.
    pub fn table_snapshot(&self, id: TableId) -> Option<Value> {
        let s = self.tables.get(&id)?;
        Some(json!({
            "table": id,
            "room": s.place.room.as_str(),
            "network": s.place.network.as_str(),
            "game": s.table.game(),
            "seed": s.seed,
            "sequence": s.sequence,
            "finished": s.table.is_finished(),
            "state": s.table.snapshot(),
        }))
    }

    /// What the store keeps of one table: [`Router::table_snapshot`] as JSON text, and the
    /// columns it is indexed by.
    pub fn stored_table(&self, id: TableId) -> Option<StoredTable> {
        let s = self.tables.get(&id)?;
        let quote = |text: &str| serde_json::to_string(text).unwrap_or_default();
        let text = format!(
            r#"{{"table":{id},"room":{},"network":{},"game":{},"seed":{},"sequence":{},"finished":{},"state":{}}}"#,
            quote(s.place.room.as_str()),
            quote(s.place.network.as_str()),
            quote(s.table.game()),
            s.seed,
            s.sequence,
            s.table.is_finished(),
            s.table.snapshot_text(),
        );
        Some(StoredTable {
            game: s.table.game(),
            network: s.place.network.clone(),
            room: s.place.room.clone(),
            finished: s.table.is_finished(),
            text,
        })
    }

    /// The tables, by number.
    pub fn table_ids(&self) -> impl Iterator<Item = TableId> + '_ {
        self.tables.keys().copied()
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
        let seed = field("seed").as_u64().ok_or_else(|| bad("no seed"))?;
        let sequence = field("sequence").as_u64().ok_or_else(|| bad("no sequence"))?;
        let plugin =
            self.registry.get(&game).ok_or(ReplayError::UnknownGame { table: id, game: game.clone() })?;
        let table = plugin.restore(&field("state")).map_err(|reason| bad(&reason))?;
        self.tables.insert(id, Seating { place: Place { network, room }, seed, sequence, table });
        Ok(id)
    }

    /// Re-applies a journal entry, as when the entry was first made but without
    /// announcing anything. Entries of one table must come in order.
    pub fn replay(&mut self, entry: &Entry) -> Result<(), ReplayError> {
        match entry {
            Entry::Opened { table, game, network, room, seed, opening, .. } => {
                let plugin = self
                    .registry
                    .get(game)
                    .ok_or(ReplayError::UnknownGame { table: *table, game: game.clone() })?;
                let opened = plugin
                    .restore(opening)
                    .map_err(|reason| ReplayError::BadSnapshot { table: *table, reason })?;
                let place = Place { network: network.clone(), room: room.clone() };
                self.tables.insert(*table, Seating { place, seed: *seed, sequence: 0, table: opened });
            }
            Entry::Acted { table, sequence, actor, command, typed, private, now, standing, .. } => {
                let seating = self.seating_at(*table, *sequence)?;
                let action =
                    Action { actor, command, typed, private: *private, now: *now, standing: *standing };
                let mut dice = Dice::for_action(seating.seed, seating.sequence);
                seating.table.act(&action, &mut dice).map_err(|refusal| ReplayError::Diverged {
                    table: *table,
                    sequence: *sequence,
                    reason: refusal.to_string(),
                })?;
                seating.sequence = seating.sequence.saturating_add(1);
            }
            Entry::Fired { table, sequence, at, .. } => {
                let seating = self.seating_at(*table, *sequence)?;
                let mut dice = Dice::for_action(seating.seed, seating.sequence);
                seating.table.fire_timer(*at, &mut dice);
                seating.sequence = seating.sequence.saturating_add(1);
            }
            Entry::Challenged { network, room, challenger, opponent, wizard } => {
                let place = Place { network: network.clone(), room: room.clone() };
                let challenge = Challenge {
                    challenger: challenger.clone(),
                    opponent: opponent.clone(),
                    wizard: wizard.clone(),
                };
                self.challenges.insert(place, challenge);
            }
            Entry::ChallengeClosed { network, room } => {
                self.challenges.remove(&Place { network: network.clone(), room: room.clone() });
            }
            Entry::Linked { network, identity, player } => self.directory.link(network, identity, player),
            Entry::Unlinked { player } => {
                self.directory.unlink(player);
            }
            Entry::Home { player, network, identity, name } => {
                let name = name.as_deref().unwrap_or(identity.as_str());
                self.directory.set_home(player, network, identity, name);
            }
        }
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
            LobbyCommand::Help(topic) => say(self.help(place, topic.as_deref())),
            LobbyCommand::Games => say(self.games()),
            LobbyCommand::Wizards => {
                let answer = self.registry.iter().find_map(|game| game.lobby("wizards"));
                say(answer.unwrap_or_else(|| RichText::from("No game here has wizards.")))
            }
            LobbyCommand::Link(None) => self.give_link_code(speaker, reply_to, now),
            LobbyCommand::Link(Some(code)) => self.redeem_link_code(speaker, &code, reply_to, now),
            LobbyCommand::Unlink => self.unlink(speaker, reply_to),
            LobbyCommand::New(game) => {
                if private {
                    return say(RichText::from(
                        "Open a table in the room where you want to play, not in a private message.",
                    ));
                }
                let seats = vec![Seat { player: player.clone(), choice: None }];
                self.open(place, &game, seats, now, reply_to)
            }
            LobbyCommand::Duel { opponent, wizard } => {
                let opponent = match self.resolve_name(&opponent) {
                    Ok(opponent) => opponent,
                    Err(problem) => return say(problem),
                };
                self.challenge(speaker, opponent, wizard, now, reply_to)
            }
            LobbyCommand::Accept(wizard) => self.accept(place, player, wizard, now, reply_to),
            LobbyCommand::Decline => self.decline(place, player, reply_to),
        }
    }

    /// `!link`: a one-time code, sent privately, to say from the other network.
    fn give_link_code(&mut self, speaker: &Speaker<'_>, reply_to: &ReplyTo, now: Timestamp) -> Vec<Outbound> {
        let inbound = speaker.inbound;
        let code = self.directory.new_code(&speaker.player, &inbound.network, self.options.master_seed, now);
        let prefix = &self.options.prefix;
        let secret = Outbound {
            network: inbound.network.clone(),
            to: Destination::Private(inbound.sender.clone()),
            message: RichText::new()
                .text("Your link code is ")
                .code(code.clone())
                .text(". From your identity on the other network, send me privately ")
                .code(format!("{prefix}link {code}"))
                .text(" within ten minutes; then you play as one player from both networks.")
                .into(),
        };
        if inbound.private {
            vec![secret]
        } else {
            vec![secret, reply(reply_to, RichText::from("I sent you a link code privately."))]
        }
    }

    /// `!link <code>`: joins the sender's identity to the code's player.
    fn redeem_link_code(
        &mut self,
        speaker: &Speaker<'_>,
        code: &str,
        reply_to: &ReplyTo,
        now: Timestamp,
    ) -> Vec<Outbound> {
        let inbound = speaker.inbound;
        let say = |text: RichText| vec![reply(reply_to, text)];
        if !inbound.private {
            // Anyone in the room could use the code now: it is void.
            self.directory.void(code);
            return say(RichText::from(
                "Send link codes to me privately: anyone here could have used that one, so it no longer \
                 works. Type `!link` on your other network for a new code.",
            ));
        }
        let identity = &inbound.sender;
        if self.active_tables().any(|id| self.tables[&id].table.players().contains(identity)) {
            return say(RichText::from(
                "You are playing at a table as this identity; link once its game is over (or link \
                 first, then sit down).",
            ));
        }
        match self.directory.redeem(code, &inbound.network, identity, now) {
            Err(error) => say(RichText::from(format!("That did not link: {error}"))),
            Ok(player) => {
                self.directory.link(&inbound.network, identity, &player);
                self.log(Entry::Linked {
                    network: inbound.network.clone(),
                    identity: identity.clone(),
                    player: player.clone(),
                });
                self.directory.set_home(&player, &inbound.network, identity, &inbound.display_name);
                self.log(Entry::Home {
                    player: player.clone(),
                    network: inbound.network.clone(),
                    identity: identity.clone(),
                    name: Some(inbound.display_name.clone()),
                });
                let name = self.directory.display_name(&player);
                say(RichText::new()
                    .text(format!("Linked: here you now play as {name}, the same player as on "))
                    .text(format!("the other network. Type `{}unlink` to undo it.", self.options.prefix)))
            }
        }
    }

    /// `!unlink`: separates every identity joined to the sender's player.
    fn unlink(&mut self, speaker: &Speaker<'_>, reply_to: &ReplyTo) -> Vec<Outbound> {
        let separated = self.directory.unlink(&speaker.player);
        if separated.is_empty() {
            return vec![reply(
                reply_to,
                RichText::from("You have no linked identities; `!link` links one."),
            )];
        }
        self.log(Entry::Unlinked { player: speaker.player.clone() });
        let list: Vec<String> =
            separated.iter().map(|(network, identity)| format!("{identity} on {network}")).collect();
        vec![reply(reply_to, RichText::from(format!("Unlinked {}.", list.join(", "))))]
    }

    fn open(
        &mut self,
        place: &Place,
        game: &str,
        seats: Vec<Seat>,
        now: Timestamp,
        reply_to: &ReplyTo,
    ) -> Vec<Outbound> {
        let Some(plugin) = self.registry.get(game) else {
            let names: Vec<&str> = self.registry.iter().map(|g| g.name()).collect();
            let hint = words::nearest(game, names.iter().copied())
                .map(|n| format!(" Did you mean `!new {n}`?"))
                .unwrap_or_default();
            return vec![reply(
                reply_to,
                RichText::from(format!(
                    "There is no game called `{game}`.{hint} Games: {}.",
                    names.join(", ")
                )),
            )];
        };
        if let Some(busy) = self.active_at(place) {
            let game = self.tables[&busy].table.game();
            return vec![reply(
                reply_to,
                RichText::from(format!(
                    "This room already has a {game} table; one table per room. Finish it first \
                 (its game master types `!stop`; in a Duel, `!concede`), or play in another room."
                )),
            )];
        }
        let setup = TableSetup { room: place.room.clone(), seats, now };
        match plugin.open(&setup) {
            Err(refusal) => vec![reply(reply_to, refusal_text(refusal))],
            Ok(table) => {
                let id = self.tables.last_key_value().map_or(0, |(id, _)| id.saturating_add(1));
                let seed = mix(self.options.master_seed ^ mix(id));
                let opening = table.opening();
                let opened_as = table.snapshot();
                self.log(Entry::Opened {
                    table: id,
                    game: plugin.name().to_owned(),
                    network: place.network.clone(),
                    room: place.room.clone(),
                    seed,
                    seats: setup
                        .seats
                        .iter()
                        .map(|s| SeatRecord { player: s.player.clone(), choice: s.choice.clone() })
                        .collect(),
                    now,
                    opening: opened_as,
                });
                self.tables.insert(id, Seating { place: place.clone(), seed, sequence: 0, table });
                let outbound = self.deliver(id, opening);
                self.announced(outbound)
            }
        }
    }

    fn challenge(
        &mut self,
        speaker: &Speaker<'_>,
        opponent: PlayerId,
        wizard: Option<String>,
        now: Timestamp,
        reply_to: &ReplyTo,
    ) -> Vec<Outbound> {
        let (place, challenger) = (&speaker.place, &speaker.player);
        let say = |text: &str| vec![reply(reply_to, RichText::from(text))];
        if speaker.inbound.private {
            return say("Challenge in the room where you want to play: `!duel <player> [wizard]` there.");
        }
        if &opponent == challenger {
            return say("You cannot duel yourself: type `!duel <player>` with another player's name.");
        }
        if self.active_at(place).is_some() {
            return say(
                "This room already has a table; one table per room. Finish it first, or challenge in another room.",
            );
        }
        if let Some(pending) = self.challenges.get(place) {
            let text = RichText::new()
                .mention(&pending.challenger)
                .text(" has already challenged ")
                .mention(&pending.opponent)
                .text(" here; wait for `!accept` or `!decline`.");
            let text = self.localize(&reply_to.network, text);
            return vec![reply(reply_to, text)];
        }
        let Some(duel) = self.registry.get("duel") else {
            return say("The Duel game is not enabled on this bot.");
        };
        // Check the challenger's wizard now, so a typo is caught before the opponent answers.
        let trial = TableSetup {
            room: place.room.clone(),
            seats: vec![
                Seat { player: challenger.clone(), choice: wizard.clone() },
                Seat { player: opponent.clone(), choice: None },
            ],
            now,
        };
        if let Err(refusal) = duel.open(&trial) {
            return vec![reply(reply_to, refusal_text(refusal))];
        }
        let text = RichText::new()
            .mention(challenger)
            .text(" challenges ")
            .mention(&opponent)
            .text(" to a Duel")
            .text(wizard.as_deref().map(|w| format!(" as {w}")).unwrap_or_default())
            .text("! ")
            .mention(&opponent)
            .text(": type ")
            .code("!accept [wizard]")
            .text(" or ")
            .code("!decline")
            .text(" (")
            .code("!wizards")
            .text(" lists the wizards).");
        self.log(Entry::Challenged {
            network: place.network.clone(),
            room: place.room.clone(),
            challenger: challenger.clone(),
            opponent: opponent.clone(),
            wizard: wizard.clone(),
        });
        self.challenges.insert(place.clone(), Challenge { challenger: challenger.clone(), opponent, wizard });
        let outbound = self.to_rooms(place, text);
        self.announced(outbound)
    }

    fn accept(
        &mut self,
        place: &Place,
        sender: &PlayerId,
        wizard: Option<String>,
        now: Timestamp,
        reply_to: &ReplyTo,
    ) -> Vec<Outbound> {
        let Some(challenge) = self.challenges.get(place).filter(|c| self.challenged(c, sender)).cloned()
        else {
            return vec![reply(
                reply_to,
                RichText::from(
                    "Nobody has challenged you in this room. Challenge someone with `!duel <player> [wizard]`.",
                ),
            )];
        };
        let seats = vec![
            Seat { player: challenge.challenger.clone(), choice: challenge.wizard.clone() },
            Seat { player: sender.clone(), choice: wizard },
        ];
        let before = self.tables.len();
        let out = self.open(place, "duel", seats, now, reply_to);
        if self.tables.len() > before {
            self.close_challenge(place);
        }
        out
    }

    /// Whether `player` is the one a challenge was made to: its opponent, or the one
    /// player its opponent's name names now. A name typed in `!duel` that named nobody
    /// the bot had heard yet (a Matrix display name, say, of someone who has not spoken
    /// since the start) is kept as typed; once that person speaks, it names them.
    fn challenged(&self, challenge: &Challenge, player: &PlayerId) -> bool {
        &challenge.opponent == player
            || self.directory.resolve(challenge.opponent.as_str()).is_ok_and(|p| p.as_ref() == Some(player))
    }

    fn decline(&mut self, place: &Place, sender: &PlayerId, reply_to: &ReplyTo) -> Vec<Outbound> {
        match self.challenges.get(place) {
            Some(c) if self.challenged(c, sender) || &c.challenger == sender => {
                let mut c = c.clone();
                if self.challenged(&c, sender) {
                    c.opponent = sender.clone();
                }
                self.close_challenge(place);
                let verb = if &c.opponent == sender {
                    " declines the Duel with "
                } else {
                    " withdraws the challenge to "
                };
                let other = if &c.opponent == sender { &c.challenger } else { &c.opponent };
                let text = RichText::new().mention(sender).text(verb).mention(other).text(".");
                let outbound = self.to_rooms(place, text);
                self.announced(outbound)
            }
            _ => vec![reply(
                reply_to,
                RichText::from("There is no challenge for you to decline in this room."),
            )],
        }
    }

    fn close_challenge(&mut self, place: &Place) {
        if self.challenges.remove(place).is_some() {
            self.log(Entry::ChallengeClosed { network: place.network.clone(), room: place.room.clone() });
        }
    }

    fn table_command(
        &mut self,
        speaker: &Speaker<'_>,
        command: &str,
        typed: &str,
        reply_to: &ReplyTo,
        now: Timestamp,
    ) -> Vec<Outbound> {
        let (place, sender, private) = (&speaker.place, &speaker.player, speaker.inbound.private);
        let (head, _) = words::split(command);
        let index = if private { self.private_table(sender) } else { self.active_at(place).ok_or(()) };
        // After a game ends its room can still ask how it ended.
        let index = index.or_else(|()| {
            self.finished_at(place)
                .filter(|i| head == "status" && self.tables[i].table.is_query(command))
                .ok_or(())
        });
        let index = match index {
            Ok(index) => index,
            Err(()) => {
                let known = self.registry.iter().any(|g| {
                    g.commands().iter().any(|c| c.name == head || c.aliases.contains(&head.as_str()))
                });
                let text = if !known {
                    self.unknown_command(&head, None)
                } else if private {
                    RichText::from(self.private_table_problem(sender))
                } else {
                    RichText::new()
                        .text("There is no game in this room yet. Start one with ")
                        .code("!new thaum")
                        .text(" or ")
                        .code("!duel <player>")
                        .text(".")
                };
                return vec![reply(reply_to, text)];
            }
        };
        let seated = self.tables[&index].table.players();
        let command = match self.resolve_names(command, &seated) {
            Ok(command) => command,
            Err(problem) => return vec![reply(reply_to, problem)],
        };
        let command = command.as_str();
        let Some(seating) = self.tables.get_mut(&index) else { return Vec::new() };
        let standing = speaker.standing;
        let action = Action { actor: sender, command, typed, private, now, standing };
        let mut dice = Dice::for_action(seating.seed, seating.sequence);
        let query = seating.table.is_query(command);
        match seating.table.act(&action, &mut dice) {
            // A question changes nothing: answer it without journaling it.
            Ok(announcements) if query => self.deliver_reply(index, announcements, reply_to),
            Ok(announcements) => {
                let entry = Entry::Acted {
                    table: index,
                    sequence: seating.sequence,
                    actor: sender.clone(),
                    command: command.to_owned(),
                    typed: typed.to_owned(),
                    private,
                    now,
                    standing,
                    dice_seed: dice.seed(),
                    draws: dice.draws(),
                };
                seating.sequence = seating.sequence.saturating_add(1);
                self.log(entry);
                let outbound = self.deliver(index, announcements);
                self.announced(outbound)
            }
            Err(Refusal::UnknownCommand(word)) => {
                let game = self.tables[&index].table.game();
                vec![reply(reply_to, self.unknown_command(&word, Some(game)))]
            }
            Err(refusal) => {
                let text = self.localize(&reply_to.network, refusal_text(refusal));
                vec![reply(reply_to, text)]
            }
        }
    }

    /// The player a name typed in a command means: a player id as it is, else a nick,
    /// display name or linked name the directory knows (RULES-independent: CONTRACT.md
    /// "A player is named in a command by …"). Several candidates are an error that
    /// lists them.
    fn resolve_name(&self, word: &str) -> Result<PlayerId, RichText> {
        match self.directory.resolve(word) {
            Ok(found) => Ok(found.unwrap_or_else(|| PlayerId::new(word))),
            Err(NameProblem::Ambiguous(players)) => {
                let mut text = RichText::new().code(word).text(" could be ");
                for (i, player) in players.iter().enumerate() {
                    text = text.text(if i == 0 { "" } else { " or " }).code(player.as_str());
                }
                Err(text.text("; name them by one of those ids."))
            }
        }
    }

    /// Rewrites the names in a table command to player ids. Numbers and the ids of
    /// seated players are left alone, so game words and exact ids never change.
    fn resolve_names(&self, command: &str, seated: &[PlayerId]) -> Result<String, RichText> {
        let mut words = command.split_whitespace();
        let mut out: Vec<String> = words.next().map(str::to_owned).into_iter().collect();
        for word in words {
            let plain = word.trim_start_matches('@').trim_end_matches([':', ',']);
            let keep = plain.chars().all(|c| c.is_ascii_digit() || c == '+' || c == '-')
                || seated.iter().any(|p| p.as_str() == plain);
            let resolved = if keep { word.to_owned() } else { self.resolve_name(word)?.as_str().to_owned() };
            // A word that named nobody known stays as typed, for the game to judge.
            out.push(if resolved == plain { word.to_owned() } else { resolved });
        }
        Ok(out.join(" "))
    }

    /// The one unfinished table where `player` is seated, for a private message.
    fn private_table(&self, player: &PlayerId) -> Result<TableId, ()> {
        let mut seated = self.active_tables().filter(|i| self.tables[i].table.players().contains(player));
        match (seated.next(), seated.next()) {
            (Some(index), None) => Ok(index),
            _ => Err(()),
        }
    }

    fn private_table_problem(&self, player: &PlayerId) -> String {
        let rooms: Vec<String> = self
            .active_tables()
            .filter(|i| self.tables[i].table.players().contains(player))
            .map(|i| format!("{} in {}", self.tables[&i].table.game(), self.tables[&i].place.room))
            .collect();
        if rooms.is_empty() {
            "You are not playing at any table. Join one in its room (`!join`, or accept a `!duel`)."
                .to_owned()
        } else {
            format!(
                "You play at several tables ({}); send this command in the table's room instead.",
                rooms.join(", ")
            )
        }
    }

    fn active_tables(&self) -> impl Iterator<Item = TableId> + '_ {
        self.tables.iter().filter(|(_, s)| !s.table.is_finished()).map(|(id, _)| *id)
    }

    /// The most recent finished table in a place (a room, or a bridge's hub).
    fn finished_at(&self, place: &Place) -> Option<TableId> {
        self.tables
            .iter()
            .rev()
            .find(|(_, s)| self.relay.hub(&s.place) == *place && s.table.is_finished())
            .map(|(id, _)| *id)
    }

    /// The unfinished table in a place (a room, or a bridge's hub).
    fn active_at(&self, place: &Place) -> Option<TableId> {
        self.active_tables().find(|i| self.relay.hub(&self.tables[i].place) == *place)
    }

    fn unknown_command(&self, word: &str, game: Option<&str>) -> RichText {
        let mut names: Vec<&str> = LOBBY_COMMANDS.iter().map(|c| c.name).collect();
        for plugin in self.registry.iter().filter(|g| game.is_none_or(|name| g.name() == name)) {
            names.extend(
                plugin
                    .commands()
                    .iter()
                    .flat_map(|c| std::iter::once(c.name).chain(c.aliases.iter().copied())),
            );
        }
        let mut text = RichText::new().text("Unknown command ").code(format!("!{word}")).text(".");
        if let Some(guess) = words::nearest(word, names) {
            text = text.text(" Did you mean ").code(format!("!{guess}")).text("?");
        }
        text.text(" Type ").code("!help").text(" for the list.")
    }

    fn games(&self) -> RichText {
        let mut text = RichText::new().text("Games:");
        for (i, game) in self.registry.iter().enumerate() {
            text = text
                .text(if i == 0 { " " } else { "; " })
                .bold(game.name())
                .text(format!(" — {}", game.summary()));
        }
        text.text(". Start one with ")
            .code("!new thaum")
            .text(" or ")
            .code("!duel <player> [wizard]")
            .text(".")
    }

    fn help(&self, place: &Place, topic: Option<&str>) -> RichText {
        let game = self.active_at(place).map(|i| self.tables[&i].table.game());
        if let Some(topic) = topic {
            let all = LOBBY_COMMANDS.iter().chain(self.registry.iter().flat_map(|g| g.commands().iter()));
            let mut found = all.filter(|c| c.name == topic || c.aliases.contains(&topic)).peekable();
            if found.peek().is_none() {
                return self.unknown_command(topic, None);
            }
            let mut text = RichText::new();
            for (i, c) in found.enumerate() {
                let usage = format!("!{} {}", c.name, c.usage);
                text = text
                    .text(if i == 0 { "" } else { " | " })
                    .code(usage.trim_end())
                    .text(format!(" — {}", c.summary));
            }
            return text;
        }
        let list = |commands: &[spellbridge_core::CommandHelp]| {
            commands.iter().map(|c| format!("!{}", c.name)).collect::<Vec<_>>().join(" ")
        };
        let mut text = RichText::new().text(format!("Commands: {}", list(LOBBY_COMMANDS)));
        if let Some(plugin) = game.and_then(|g| self.registry.get(g)) {
            text =
                text.text(format!(". At this room's {} table: {}", plugin.name(), list(plugin.commands())));
        }
        text.text(". ").code("!help <command>").text(" explains one.")
    }

    /// Turns a table's announcements into outbound messages: the table's to every room of
    /// its bridge (or its one room), a player's to where their private messages go.
    fn deliver(&self, id: TableId, announcements: Vec<Announcement>) -> Vec<Outbound> {
        let Some(place) = self.tables.get(&id).map(|s| s.place.clone()) else { return Vec::new() };
        let mut out = Vec::with_capacity(announcements.len());
        for announcement in announcements {
            match announcement.to {
                Audience::Table => out.extend(self.to_rooms(&place, announcement.text)),
                Audience::Player(player) => out.push(self.to_player(&place, &player, announcement.text)),
            }
        }
        out
    }

    /// Turns the answer to a question (`!status`) into outbound messages: what the table
    /// would say to everyone goes only to where it was asked.
    fn deliver_reply(
        &self,
        id: TableId,
        announcements: Vec<Announcement>,
        reply_to: &ReplyTo,
    ) -> Vec<Outbound> {
        let Some(place) = self.tables.get(&id).map(|s| s.place.clone()) else { return Vec::new() };
        announcements
            .into_iter()
            .map(|announcement| match announcement.to {
                Audience::Table => Outbound {
                    network: reply_to.network.clone(),
                    to: reply_to.destination.clone(),
                    message: Message {
                        text: self.localize(&reply_to.network, announcement.text),
                        thread: reply_to.thread.clone(),
                        ..Message::default()
                    },
                },
                Audience::Player(player) => self.to_player(&place, &player, announcement.text),
            })
            .collect()
    }

    /// A message to every room of the bridge `place` is in (or to `place` alone).
    fn to_rooms(&self, place: &Place, text: RichText) -> Vec<Outbound> {
        self.relay
            .rooms(place)
            .into_iter()
            .map(|room| Outbound {
                to: Destination::Room(room.room),
                message: self.localize(&room.network, text.clone()).into(),
                network: room.network,
            })
            .collect()
    }

    /// A private message to a player, on the network and identity they last used (else
    /// as the table's network knows them).
    fn to_player(&self, place: &Place, player: &PlayerId, text: RichText) -> Outbound {
        let (network, identity) =
            self.directory.home(player).cloned().unwrap_or_else(|| (place.network.clone(), player.clone()));
        Outbound {
            message: self.localize(&network, text).into(),
            to: Destination::Private(identity),
            network,
        }
    }

    /// Shows each mentioned player as `network` can: a mention of their identity there,
    /// or, when they only have identities elsewhere, their name in bold.
    fn localize(&self, network: &NetworkId, text: RichText) -> RichText {
        let needs_work = text.segments().iter().any(|segment| match segment {
            Segment::Mention(player) | Segment::Name(player) => {
                self.directory.identity_on(player, network).as_ref() != Some(player)
            }
            _ => false,
        });
        if !needs_work {
            return text;
        }
        text.into_segments().into_iter().fold(RichText::new(), |out, segment| match segment {
            Segment::Mention(player) => match self.directory.identity_on(&player, network) {
                Some(identity) => out.mention(&identity),
                None if self.directory.identities(&player).is_empty() => out.mention(&player),
                None => out.bold(self.directory.display_name(&player)),
            },
            Segment::Name(player) => match self.directory.identity_on(&player, network) {
                Some(identity) => out.name(&identity),
                None if self.directory.identities(&player).is_empty() => out.name(&player),
                None => out.bold(self.directory.display_name(&player)),
            },
            other => out.push(other),
        })
    }
}

/// A reply to the sender: in a room it names them first, as chat bots do; in the thread
/// they wrote in, if any.
fn reply(reply_to: &ReplyTo, text: RichText) -> Outbound {
    let text = match reply_to.destination {
        Destination::Room(_) => RichText::new().mention(&reply_to.addressee).text(": ").append(text),
        Destination::Private(_) => text,
    };
    Outbound {
        network: reply_to.network.clone(),
        to: reply_to.destination.clone(),
        message: Message { text, thread: reply_to.thread.clone(), ..Message::default() },
    }
}

fn refusal_text(refusal: Refusal) -> RichText {
    match refusal {
        Refusal::Refused(text) => text,
        Refusal::UnknownCommand(word) => RichText::from(format!("Unknown command `!{word}`.")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Timestamp = Timestamp::CONSOLE_EPOCH;

    fn router() -> Router {
        let rooms =
            [(NetworkId::new("irc"), RoomId::new("#magic")), (NetworkId::new("matrix"), RoomId::new("!m"))];
        let bridges = vec![crate::relay::bridge("magic", &rooms, true)];
        Router::new(Registry::standard(), RouterOptions { bridges, ..RouterOptions::default() })
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

    #[test]
    fn a_challenge_to_a_name_not_heard_yet_is_accepted_by_the_one_it_names() {
        let mut router = router();
        // Merlin has not spoken since the start: the name is kept as typed.
        router.handle(&irc("alice", "!duel Merlin"), T);
        let accepted = router.handle(&matrix(Said::Message, "!accept"), T);
        assert!(texts(&accepted).iter().any(|t| t.contains("Round 1 begins")), "{:?}", texts(&accepted));
        let snapshot = router.snapshot();
        assert_eq!(snapshot["tables"][0]["state"]["players"], json!(["alice", "@mage:hs"]), "{snapshot:#}");
    }

    #[test]
    fn a_bridged_room_of_two_is_a_room_not_a_direct_chat() {
        let mut router = router();
        let mut chat = matrix(Said::Message, "hello");
        chat.private = true; // what the Matrix transport says of a room of two
        assert_eq!(texts(&router.handle(&chat, T)), ["irc <Merlin> hello"]);
        let mut command = matrix(Said::Message, "!new thaum");
        command.private = true;
        let out = router.handle(&command, T);
        assert!(out.len() == 2 && texts(&out)[0].contains("opens a Thaum table"), "{:?}", texts(&out));
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
