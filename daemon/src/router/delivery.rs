//! Where what the router says goes, and in what words: a table's events are rendered by
//! its game once per kind of destination (a [`Presentation`]: the form its network's
//! transport asks for, a game's compact form on IRC and its full form elsewhere, and the
//! destination's language: each room's own, each player's for their private messages,
//! see [`super::language`]), then the table's go to every room of its bridge, a player's
//! to their home network, answers to where they were asked; mentions and names are
//! localized per network.

use std::collections::{BTreeMap, BTreeSet};

use spellbridge_core::{Event, Language, Presentation};

use super::*;
use crate::identity::local_part;

impl Router {
    /// How `network` is shown games' events: in the form its transport asked for (the
    /// full form when it asked for none: the console), in the network's configured
    /// language (English unless the config or the console's `--lang` names one; a room's
    /// or a player's own language is applied over it: [`super::language`]).
    pub(super) fn presentation(&self, network: &NetworkId) -> Presentation {
        let form = self.options.forms.get(network).copied().unwrap_or_default();
        let whisper = self.options.whispers.get(network).copied().unwrap_or_default();
        Presentation::of(form).whispered(whisper).in_language(self.options.languages.network(network))
    }

    /// Turns a table's events into outbound messages: the game renders them once for
    /// each presentation (form and language) that someone who hears them is shown; the
    /// table's go to every room of its bridge (or its one room), a player's to where their
    /// private messages go, each in its destination's presentation.
    pub(super) fn deliver(&self, id: TableId, events: &[Event]) -> Vec<Outbound> {
        let Some(seating) = self.tables.get(&id) else { return Vec::new() };
        let Some(game) = self.game_of(seating) else { return Vec::new() };
        let place = &seating.place;
        let rooms = self.relay.rooms(place);
        let mut shown = self.private_presentations(place, events);
        if events.iter().any(|event| event.to == Audience::Table) {
            shown.extend(rooms.iter().map(|room| self.room_presentation(room)));
            // A table's event may tell its players something privately too (a Duel's
            // opening says where to cast): rendered in each player's presentation.
            shown.extend(
                seating
                    .table
                    .players()
                    .iter()
                    .map(|player| self.player_presentation(player, &self.home_of(place, player).0)),
            );
        }
        let mut out = Vec::with_capacity(events.len() * rooms.len());
        for presentation in shown {
            for announcement in game.render(events, &presentation) {
                match announcement.to {
                    Audience::Table => out.extend(
                        rooms
                            .iter()
                            .filter(|room| self.room_presentation(room) == presentation)
                            .map(|room| self.to_room(room, announcement.text.clone())),
                    ),
                    Audience::Player(player) => {
                        let (network, identity) = self.home_of(place, &player);
                        if self.player_presentation(&player, &network) == presentation {
                            out.push(self.to_identity(network, identity, announcement.text));
                        }
                    }
                }
            }
        }
        // What goes on a story told over several actions (a Duel round, a Thaum phase) says
        // so in each room, where a network that can edit a message tells it in one.
        if let Some(story) = seating.table.story(events) {
            let story = format!("{id}.{story}");
            for outbound in out.iter_mut().filter(|o| matches!(o.to, Destination::Room(_))) {
                outbound.message.story = Some(story.clone());
            }
        }
        self.batched(id, "", out)
    }

    /// `out` marked as what table `id`'s latest action says (`Message::batch`): a network
    /// where a message of several lines reads as one (Matrix) says it to each place as one.
    fn batched(&self, id: TableId, kind: &str, mut out: Vec<Outbound>) -> Vec<Outbound> {
        let Some(seating) = self.tables.get(&id) else { return out };
        let batch = format!("{id}.{}{kind}", seating.sequence);
        for outbound in &mut out {
            outbound.message.batch = Some(batch.clone());
        }
        out
    }

    /// The presentations of the players `events` speak to privately.
    fn private_presentations(&self, place: &Place, events: &[Event]) -> BTreeSet<Presentation> {
        events
            .iter()
            .filter_map(|event| match &event.to {
                Audience::Player(player) => {
                    Some(self.player_presentation(player, &self.home_of(place, player).0))
                }
                Audience::Table => None,
            })
            .collect()
    }

    /// Turns the router's own message about a table (its dice commitment, a revealed key)
    /// into outbound messages to every room of its bridge, each in its room's language:
    /// `say` words it once per language among them.
    pub(super) fn deliver_text(&self, id: TableId, say: impl Fn(Language) -> RichText) -> Vec<Outbound> {
        let Some(place) = self.tables.get(&id).map(|s| s.place.clone()) else { return Vec::new() };
        let out = self.to_rooms(&place, say);
        self.batched(id, "", out)
    }

    /// Turns the answer to a question (`!status`) into outbound messages: what the table
    /// would say to everyone goes only to where it was asked, in that network's
    /// presentation.
    pub(super) fn deliver_reply(&self, id: TableId, events: &[Event], reply_to: &ReplyTo) -> Vec<Outbound> {
        let Some(seating) = self.tables.get(&id) else { return Vec::new() };
        let Some(game) = self.game_of(seating) else { return Vec::new() };
        let place = &seating.place;
        let here = self.presentation(&reply_to.network).in_language(reply_to.language);
        let mut shown = self.private_presentations(place, events);
        if events.iter().any(|event| event.to == Audience::Table) {
            shown.insert(here);
        }
        let mut out = Vec::with_capacity(events.len());
        for presentation in shown {
            for announcement in game.render(events, &presentation) {
                match announcement.to {
                    Audience::Table if presentation == here => out.push(Outbound {
                        network: reply_to.network.clone(),
                        to: reply_to.destination.clone(),
                        message: Message {
                            text: self.localize(&reply_to.network, announcement.text),
                            thread: reply_to.thread.clone(),
                            ..Message::default()
                        },
                    }),
                    Audience::Table => {}
                    Audience::Player(player) => {
                        let (network, identity) = self.home_of(place, &player);
                        if self.player_presentation(&player, &network) == presentation {
                            out.push(self.to_identity(network, identity, announcement.text));
                        }
                    }
                }
            }
        }
        // One answer, one message where a network can say it so (`Message::batch`), of
        // its own: not said with the table's last action.
        self.batched(id, "answer", out)
    }

    /// A message to every room of the bridge `place` is in (or to `place` alone), each in
    /// its room's language: `say` words it once per language among them.
    pub(super) fn to_rooms(&self, place: &Place, say: impl Fn(Language) -> RichText) -> Vec<Outbound> {
        let mut said: BTreeMap<Language, RichText> = BTreeMap::new();
        self.relay
            .rooms(place)
            .iter()
            .map(|room| {
                let language = self.room_language(room);
                let text = said.entry(language).or_insert_with(|| say(language)).clone();
                self.to_room(room, text)
            })
            .collect()
    }

    /// A message to one room.
    fn to_room(&self, room: &Place, text: RichText) -> Outbound {
        Outbound {
            to: Destination::Room(room.room.clone()),
            message: self.localize(&room.network, text).into(),
            network: room.network.clone(),
        }
    }

    /// Where a player's private messages go: the network and identity they last used
    /// (else as the table's network knows them).
    fn home_of(&self, place: &Place, player: &PlayerId) -> (NetworkId, PlayerId) {
        self.identities
            .directory
            .home(player)
            .cloned()
            .or_else(|| self.identities.directory.identities(player).into_iter().next())
            .unwrap_or_else(|| (place.network.clone(), PlayerId::new(local_part(player))))
    }

    /// A private message to `identity` on `network`.
    fn to_identity(&self, network: NetworkId, identity: PlayerId, text: RichText) -> Outbound {
        Outbound {
            message: self.localize(&network, text).into(),
            to: Destination::Private(identity),
            network,
        }
    }

    /// Shows each mentioned player as `network` can: a mention of their identity there,
    /// or, when they have none there, their name in bold; a name someone else is also
    /// known by is shown as the player id (`oftc:dave`), so two networks' `dave` at one
    /// bridged table can be told apart.
    pub(super) fn localize(&self, network: &NetworkId, text: RichText) -> RichText {
        let shown_as_written = |segment: &Segment| match segment {
            Segment::Mention(player) | Segment::Name(player) => {
                self.identities.directory.is_identity_on(player, network)
            }
            Segment::Text { text, .. } => self.scoped_ids(text).next().is_none(),
            _ => true,
        };
        if text.segments().iter().all(shown_as_written) {
            return text;
        }
        text.into_segments().into_iter().fold(RichText::new(), |out, segment| match segment {
            Segment::Mention(player) => match self.identities.directory.identity_on(&player, network) {
                Some(identity) => out.mention(&identity),
                None => out.bold(self.shown_elsewhere(&player)),
            },
            Segment::Name(player) => match self.identities.directory.identity_on(&player, network) {
                Some(identity) => out.name(&identity),
                None => out.bold(self.shown_elsewhere(&player)),
            },
            Segment::Text { text, style } => {
                let text = self.localize_ids(network, &text).unwrap_or(text);
                out.push(Segment::Text { text, style })
            }
            other => out.push(other),
        })
    }

    /// A game's plain text with each player id in it (`libera:dave`, written by a game
    /// into a sentence) shown as the player is shown on `network`; `None` when there is
    /// none.
    fn localize_ids(&self, network: &NetworkId, text: &str) -> Option<String> {
        let mut ids = self.scoped_ids(text).peekable();
        ids.peek()?;
        let mut out = String::with_capacity(text.len());
        let mut copied = 0;
        for (start, id) in ids {
            out.push_str(&text[copied..start]);
            let player = PlayerId::new(id);
            match self.identities.directory.identity_on(&player, network) {
                Some(identity) => out.push_str(identity.as_str()),
                None => out.push_str(&self.shown_elsewhere(&player)),
            }
            copied = start + id.len();
        }
        out.push_str(&text[copied..]);
        Some(out)
    }

    /// The player ids in `text` (words of nick characters that name a player with their
    /// network, a trailing colon not counted), each with where it starts.
    fn scoped_ids<'t>(&'t self, text: &'t str) -> impl Iterator<Item = (usize, &'t str)> + 't {
        let in_id = |c: char| {
            c.is_alphanumeric()
                || matches!(c, '[' | ']' | '\\' | '`' | '_' | '^' | '{' | '|' | '}' | '-' | ':')
        };
        // A player id has a colon (`network:name`): text without one has none.
        let mut at = if text.contains(':') { 0 } else { text.len() };
        std::iter::from_fn(move || {
            loop {
                let start = at + text[at..].find(in_id)?;
                let word = &text[start..];
                let end = word.find(|c: char| !in_id(c)).unwrap_or(word.len());
                at = start + end;
                let id = word[..end].trim_end_matches(':');
                if self.identities.directory.is_scoped_id(id) {
                    return Some((start, id));
                }
            }
        })
    }

    /// How a player is written on a network where they have no identity: their one name
    /// ([`Router::shown_name`]).
    fn shown_elsewhere(&self, player: &PlayerId) -> String {
        self.shown_name(player)
    }
}

/// A reply to the sender: in a room it names them first, as chat bots do; in the thread
/// they wrote in, if any.
pub(super) fn reply(reply_to: &ReplyTo, text: RichText) -> Outbound {
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

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use serde_json::Value;
    use spellbridge_core::games::duel::DuelPlugin;
    use spellbridge_core::options::Challenge;
    use spellbridge_core::{Announcement, Command, GamePlugin, Language, Table, TableSetup};

    use super::*;

    /// The Duel, noting each presentation it is asked to render for.
    struct Rendering {
        duel: DuelPlugin,
        asked: Arc<Mutex<Vec<Presentation>>>,
    }

    impl GamePlugin for Rendering {
        fn name(&self) -> &'static str {
            self.duel.name()
        }
        fn summary(&self) -> &'static str {
            self.duel.summary()
        }
        fn commands(&self) -> &'static [Command] {
            self.duel.commands()
        }
        fn open(&self, setup: &TableSetup) -> Result<Box<dyn Table>, Refusal> {
            self.duel.open(setup)
        }
        fn restore(&self, snapshot: &Value) -> Result<Box<dyn Table>, String> {
            self.duel.restore(snapshot)
        }
        fn challenge(&self) -> Option<Challenge> {
            self.duel.challenge()
        }
        fn challenge_command(&self) -> Option<&'static Command> {
            self.duel.challenge_command()
        }
        fn render(&self, events: &[Event], presentation: &Presentation) -> Vec<Announcement> {
            self.asked.lock().expect("not poisoned").push(*presentation);
            self.duel.render(events, presentation)
        }
    }

    fn said(network: &str, room: &str, who: &str, text: &str) -> Inbound {
        Inbound::new(NetworkId::new(network), RoomId::new(room), PlayerId::new(who), text)
    }

    /// A Duel bridged over two IRC channels (compact) and a Matrix room (full) is
    /// rendered once per kind of destination, not once per room; a private event once,
    /// for its player's network.
    #[test]
    fn a_bridged_table_renders_each_action_once_per_presentation() {
        let asked = Arc::new(Mutex::new(Vec::new()));
        let rooms = [
            (NetworkId::new("libera"), RoomId::new("#magic")),
            (NetworkId::new("matrix"), RoomId::new("!m")),
            (NetworkId::new("oftc"), RoomId::new("#magic")),
        ];
        let forms =
            [(NetworkId::new("libera"), Form::Compact), (NetworkId::new("oftc"), Form::Compact)].into();
        let options = RouterConfig {
            bridges: vec![crate::relay::bridge("magic", &rooms, true)],
            forms,
            ..RouterConfig::default()
        };
        let plugin = Rendering { duel: DuelPlugin::default(), asked: asked.clone() };
        let mut router = Router::new(Registry::new(vec![Box::new(plugin)]), options);
        let t = Timestamp::CONSOLE_EPOCH;
        let mut asked_for = |inbound: Inbound| -> (Vec<Presentation>, Vec<Outbound>) {
            let out = router.handle(&inbound, t);
            (std::mem::take(&mut *asked.lock().expect("not poisoned")), out)
        };
        asked_for(said("matrix", "!m", "@bob:hs", "hello"));
        asked_for(said("libera", "#magic", "alice", "!duel bob"));
        let (opening, out) = asked_for(said("matrix", "!m", "@bob:hs", "!accept"));
        let compact = Presentation::of(Form::Compact);
        let full = Presentation::of(Form::Full);
        assert_eq!(opening, [full, compact], "{out:#?}");
        // The opening and the dice commitment reach all three rooms.
        assert_eq!(out.iter().filter(|o| matches!(o.to, Destination::Room(_))).count(), 6, "{out:#?}");
        // alice's queue is hers alone: rendered once, for her IRC network.
        let (queued, out) =
            asked_for(Inbound { private: true, ..said("libera", "alice", "alice", "!cast surge fire end") });
        assert_eq!(queued, [compact], "{out:#?}");
        assert_eq!(out.len(), 1, "{out:#?}");
        // bob's cast reveals the round: each presentation once, whatever the rooms.
        let (round, out) =
            asked_for(Inbound { private: true, ..said("matrix", "!dm", "@bob:hs", "!cast surge water end") });
        assert_eq!(round, [full, compact], "{out:#?}");
        let heard = |network: &str| out.iter().filter(|o| o.network.as_str() == network).count();
        assert_eq!(heard("libera"), heard("oftc"), "{out:#?}");
        assert!(heard("matrix") > heard("libera"), "the full form has more lines: {out:#?}");
    }

    /// Issue 19: a Duel bridged over an English IRC channel and a Chinese Matrix room is
    /// rendered once per form and language; a player's private `!lang` changes only how
    /// their own private events are rendered.
    #[test]
    fn each_room_and_each_players_messages_are_rendered_in_their_language() {
        let asked = Arc::new(Mutex::new(Vec::new()));
        let rooms = [
            (NetworkId::new("libera"), RoomId::new("#magic")),
            (NetworkId::new("matrix"), RoomId::new("!m")),
        ];
        let mut languages = crate::config::LanguageSettings::default();
        languages.rooms.insert((NetworkId::new("matrix"), RoomId::new("!m")), Language::ZhCn);
        let options = RouterConfig {
            bridges: vec![crate::relay::bridge("magic", &rooms, true)],
            forms: [(NetworkId::new("libera"), Form::Compact)].into(),
            languages,
            ..RouterConfig::default()
        };
        let plugin = Rendering { duel: DuelPlugin::default(), asked: asked.clone() };
        let mut router = Router::new(Registry::new(vec![Box::new(plugin)]), options);
        let t = Timestamp::CONSOLE_EPOCH;
        let mut asked_for = |inbound: Inbound| -> (Vec<Presentation>, Vec<Outbound>) {
            let out = router.handle(&inbound, t);
            (std::mem::take(&mut *asked.lock().expect("not poisoned")), out)
        };
        let compact_en = Presentation::of(Form::Compact);
        let full_zh = Presentation::of(Form::Full).in_language(Language::ZhCn);
        let full_en = Presentation::of(Form::Full);
        asked_for(said("matrix", "!m", "@bob:hs", "hello"));
        asked_for(said("libera", "#magic", "alice", "!duel bob"));
        let (opening, out) = asked_for(said("matrix", "!m", "@bob:hs", "!接受"));
        // bob's private word of where to cast is in his room's language: no other form.
        assert_eq!(opening, [full_zh, compact_en], "{out:#?}");
        // bob's private messages are in the language of the room where he plays (issue
        // 31), not Matrix's default, until he says otherwise.
        let (queued, _) =
            asked_for(Inbound { private: true, ..said("matrix", "!dm", "@bob:hs", "!cast surge water end") });
        assert_eq!(queued, [full_zh]);
        let (_, told) = asked_for(Inbound { private: true, ..said("matrix", "!dm", "@bob:hs", "!lang zh") });
        assert_eq!(told.len(), 1, "{told:#?}");
        // alice's cast reveals the round: each room in its own language, bob's private
        // events (if any) in his; alice queued in English.
        let (round, out) = asked_for(Inbound {
            private: true,
            ..said("libera", "alice", "alice", "！施法　迸发　火　协调")
        });
        assert!(round.contains(&compact_en) && round.contains(&full_zh), "{round:?} {out:#?}");
        assert!(!round.contains(&full_en), "nobody reads the full form in English: {round:?}");
        let rooms_told: Vec<&str> =
            out.iter().filter(|o| matches!(o.to, Destination::Room(_))).map(|o| o.network.as_str()).collect();
        assert!(rooms_told.contains(&"libera") && rooms_told.contains(&"matrix"), "{out:#?}");
    }
}
