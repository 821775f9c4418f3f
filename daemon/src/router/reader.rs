//! The reader: what a message asks, read once. It alone tells chat from a command
//! ([`Router::heard`]: one look at the prefix, nothing parsed for chat). The prefix is stripped once (half
//! or full width, on every network), the words split once, and the command word looked up
//! once in the lobby's and every game's commands together (any case or width) ([`Read`]).
//! Then [`Router::request`] reads it once by its owner's grammar into a [`Request`]: a
//! lobby command, a command for one table (by the commands of the build the table plays:
//! [`Read::at`]) with the players it names resolved, or the
//! answer to a command that cannot be taken (unknown, badly typed, or with no table to
//! go to). The sender's player and role were resolved once before ([`Speaker`]).

use spellbridge_core::grammar::{self, Command, Grammar, ParseError, Parsed, Problem};

use super::said::said;
use super::*;
use crate::lobby::LOBBY;

/// A command message, read.
pub(super) struct Read<'a> {
    /// Its words (split at any Unicode space).
    pub(super) words: Vec<&'a str>,
    /// The command word, normalised (lower case, full-width forms as ASCII).
    pub(super) head: String,
    /// Every owner (the lobby, a game) with a command the word names, and that command.
    found: Vec<(&'static str, &'static Command)>,
}

impl<'a> Read<'a> {
    /// Reads `text` (a message that starts with `prefix`, see [`grammar::strip_prefix`])
    /// against `grammar`.
    pub(super) fn new(text: &'a str, prefix: &str, grammar: &Grammar) -> Read<'a> {
        let text = text.trim();
        let text = grammar::strip_prefix(text, prefix).unwrap_or(text).trim();
        let words: Vec<&str> = text.split_whitespace().collect();
        let head = words.first().map(|w| grammar::command_word(w)).unwrap_or_default();
        let found = grammar.find(&head).to_vec();
        Read { words, head, found }
    }

    /// The lobby's command the word names, if any.
    pub(super) fn lobby(&self) -> Option<&'static Command> {
        self.of(LOBBY)
    }

    /// `owner`'s command the word names, if any.
    pub(super) fn of(&self, owner: &str) -> Option<&'static Command> {
        self.found.iter().find(|(o, _)| *o == owner).map(|(_, c)| *c)
    }

    /// The command the word names at `seating`'s table: the build it plays when the
    /// registry has another now ([`Seating::build`]: a renamed, removed or retyped command
    /// reads as that build declares it), else the registry's game, looked up above.
    pub(super) fn at(&self, seating: &Seating) -> Option<&'static Command> {
        match &seating.build {
            Some(build) => named(build.0.commands(), &self.head),
            None => self.of(seating.table.game()),
        }
    }

    /// True when some owner has a command the word names.
    pub(super) fn known(&self) -> bool {
        !self.found.is_empty()
    }

    /// The command's own name, however it was typed (`状态` is `status`); the word itself
    /// when nobody has it.
    pub(super) fn name(&self) -> &str {
        self.found.first().map_or(self.head.as_str(), |(_, command)| command.name)
    }
}

/// The command of `commands` that `word` (normalised: [`grammar::command_word`]) names.
pub(super) fn named(commands: &'static [Command], word: &str) -> Option<&'static Command> {
    let names = |c: &&Command| {
        std::iter::once(c.name)
            .chain(c.aliases.iter().copied())
            .any(|name| grammar::command_word(name) == word)
    };
    commands.iter().find(names)
}

/// What a message asks of the router, read once ([`Router::heard`], then
/// [`Router::request`] for a command).
pub(super) enum Request {
    /// Not a command: chat, relayed to the other rooms of its bridge.
    Chat,
    /// An edit that makes a message a command: never run (nobody sees a command run
    /// from an edit days later), and like a command never relayed.
    Dropped,
    /// A lobby command; `query` when it only asks.
    Lobby { command: LobbyCommand, query: bool },
    /// A command for `table`, read by its game's grammar, the players it names resolved
    /// (the actor and their role are the [`Speaker`]'s).
    Table { table: TableId, command: Parsed },
    /// `!stop` where no table plays, by someone who may: clears the challenge waiting
    /// there.
    ClearChallenge(Challenge),
    /// A command that cannot be taken: the answer saying why and what to type instead.
    Unread(Vec<Outbound>),
}

impl Router {
    /// What `inbound` is, decided here only: [`Request::Chat`], [`Request::Dropped`], or
    /// `None` for a command (a message that starts with the prefix, half or full width,
    /// with something after it), read by [`Router::request`] once its speaker is known.
    /// Chat costs one look at its start: nothing is split or looked up.
    pub(super) fn heard(&self, inbound: &Inbound) -> Option<Request> {
        let command = || {
            grammar::strip_prefix(&inbound.text, &self.options.prefix)
                .is_some_and(|rest| !rest.trim().is_empty())
        };
        match inbound.said {
            Said::Message if command() => None,
            Said::Edit { .. } if command() => Some(Request::Dropped),
            _ => Some(Request::Chat),
        }
    }

    /// What `read` (said by `speaker`) asks: read by the lobby's grammar or by the grammar
    /// of the table it goes to, once.
    pub(super) fn request(&mut self, read: &Read<'_>, speaker: &Speaker<'_>, reply_to: &ReplyTo) -> Request {
        let Some(spec) = read.lobby() else { return self.table_request(read, speaker, reply_to) };
        match grammar::parse(spec, &read.words) {
            Err(ParseError { problem: Problem::Missing { .. }, .. }) if spec.name == "new" => {
                // `!new` alone: every game and how it starts, from the registry.
                let language = reply_to.language;
                let args = Args::new().rich("ways", self.ways_to_start(false, language));
                Request::Unread(vec![reply(reply_to, said(language, "lobby-new-which", args))])
            }
            Err(error) => {
                Request::Unread(vec![reply(reply_to, self.unread(&error, None, reply_to.language))])
            }
            Ok(parsed) => match LobbyCommand::from_parsed(&parsed, &self.registry) {
                Some(command) => Request::Lobby { command, query: parsed.is_query() },
                None => Request::Unread(Vec::new()),
            },
        }
    }

    /// A command for a table: the one in the speaker's place (privately, the one they
    /// are seated at that has the command), or the place's finished one for `!status`;
    /// read by that table's game and its players resolved.
    fn table_request(&mut self, read: &Read<'_>, speaker: &Speaker<'_>, reply_to: &ReplyTo) -> Request {
        let (place, sender, private) = (&speaker.place, &speaker.player, speaker.inbound.private);
        let table = if private { self.private_table(sender, read) } else { self.active_at(place).ok_or(()) };
        // After a game ends its room can still ask how it ended.
        let (table, finished) = match table {
            Ok(table) => (table, false),
            Err(()) => match self.finished_at(place) {
                Some(table) if read.name() == "status" => (table, true),
                _ => return self.no_table(read, speaker, reply_to),
            },
        };
        let Some(spec) = read.at(&self.tables[&table]) else {
            if finished {
                return self.no_table(read, speaker, reply_to);
            }
            let text = self.unknown_command(&read.head, Some(table), reply_to.language);
            return Request::Unread(vec![reply(reply_to, text)]);
        };
        let parsed = grammar::parse(spec, &read.words);
        if finished && !parsed.as_ref().is_ok_and(Parsed::is_query) {
            return self.no_table(read, speaker, reply_to);
        }
        let mut command = match parsed {
            Ok(command) => command,
            Err(error) => {
                let example = self.tables[&table].table.example_player(spec.name, sender);
                let unread = self.unread(&error, example.as_deref(), reply_to.language);
                return Request::Unread(vec![reply(reply_to, self.localize(&reply_to.network, unread))]);
            }
        };
        let seated = self.tables.players(table).to_vec();
        let network = &speaker.inbound.network;
        if let Err(problem) = self.resolve_players(&mut command, place, &seated, network, reply_to.language) {
            return Request::Unread(vec![reply(reply_to, problem)]);
        }
        Request::Table { table, command }
    }

    /// A table command with no table to go to: `!stop` clears a waiting challenge (for its
    /// challenger, a game master or a room operator); else what is wrong, and what to do.
    fn no_table(&self, read: &Read<'_>, speaker: &Speaker<'_>, reply_to: &ReplyTo) -> Request {
        let (place, sender, private) = (&speaker.place, &speaker.player, speaker.inbound.private);
        if read.name() == "stop"
            && !private
            && let Some(challenge) = self.challenges.get(place)
            && (speaker.role != Role::Player || &challenge.challenger == sender)
        {
            return Request::ClearChallenge(challenge.clone());
        }
        let language = reply_to.language;
        let text = if !read.known() {
            self.unknown_command(&read.head, None, language)
        } else if private {
            self.private_table_problem(sender, language)
        } else {
            said(language, "lobby-no-game", Args::new().rich("ways", self.ways_to_start(false, language)))
        };
        Request::Unread(vec![reply(reply_to, text)])
    }
}
