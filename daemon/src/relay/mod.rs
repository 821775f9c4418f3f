//! Bridges: rooms on any networks joined into one place, and the relaying of plain chat
//! between them.
//!
//! A message said in one room of a bridge is relayed to the others as `<name> text`
//! with its formatting; an emote as an action; a Matrix edit as a short `s/old/new/`
//! correction, the whole new text or nothing, as the bridge's [`Edits`] say; a reaction or
//! a deletion as an action line; a reply with the name of whom it answers: the IRC
//! speaker of a relayed line too, by the network ids of relayed lines that [`replies`]
//! keeps. An IRC line addressing someone (`alice: hi`) goes into a Matrix room as a reply
//! to alice's latest line there ([`replies`]). Commands are not relayed (their answers reach every room of a
//! bridged table anyway), nor what refers to them (an edit, a reaction, a deletion), nor
//! private messages. The bot never hears its own
//! messages, so relaying cannot loop.
//!
//! A relayed line cannot pass for someone else's: every line of a message starts with
//! its speaker ([`lines`]: its line breaks and long lines make more lines, each with the
//! name, at most the bridge's `relay_lines` of them), and the name is cleaned and, where
//! another identity answers to it, shown with the speaker's id ([`speaker`]); a speaker
//! from one of two IRC networks, or not logged in where the network has accounts, is
//! marked (`alice?/libera`, [`speaker::Marks`]).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use spellbridge_core::locale::{self, Args};
use spellbridge_core::{
    Destination, Inbound, Language, Message, NetworkId, Relayed, RichText, RoomId, Said, Timestamp,
};

use crate::turn::{Outbound, Place};
use voicing::Voicing;

pub mod lines;
pub mod rate;
pub mod replies;
pub mod speaker;
mod voicing;

pub use lines::DEFAULT_LINES;

/// How many recent messages are remembered, to render edits, reactions and replies.
const REMEMBERED: usize = 2048;
/// How much of a message a reaction or reply quotes.
const EXCERPT_CHARS: usize = 40;

/// One bridge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bridge {
    /// Its name.
    pub name: String,
    /// Its rooms.
    pub rooms: Vec<Place>,
    /// Relay plain chat between them.
    pub relay: bool,
    /// The most lines one relayed message becomes (then a line saying how many more).
    pub relay_lines: usize,
    /// How a Matrix edit reaches the other rooms.
    pub edits: Edits,
    /// How fast one speaker's chat is relayed (`None`: as fast as it comes).
    pub speaker_rate: Option<rate::SpeakerRate>,
}

/// How a bridge relays an edit (`[[bridge]] edits`): users of other bridges find a flood
/// of edits the worst part, so it can be shortened or left out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Edits {
    /// A short correction in the IRC manner, `<alice> s/old/new/` (the default).
    #[default]
    Diff,
    /// The whole new text as a fresh line marked as an edit: `<alice> * new text`.
    Resend,
    /// Not relayed at all.
    Off,
}

impl Edits {
    /// The setting as written in the config: `"diff"`, `"resend"` or `"off"`.
    pub fn parse(word: &str) -> Option<Edits> {
        match word {
            "diff" => Some(Edits::Diff),
            "resend" => Some(Edits::Resend),
            "off" => Some(Edits::Off),
            _ => None,
        }
    }
}

/// A message remembered for later edits, reactions and replies.
#[derive(Clone, Debug)]
struct Remembered {
    name: String,
    text: String,
    /// It was a command: it was not relayed, so neither are its edits, reactions and
    /// deletions.
    command: bool,
}

impl Remembered {
    /// A relayed line the network knows by an id of the bot's message.
    fn relayed(line: &Relayed) -> Remembered {
        Remembered { name: line.name.clone(), text: line.text.clone(), command: false }
    }
}

/// The bridges, and what the relay remembers.
#[derive(Debug, Default)]
pub struct Relay {
    bridges: Vec<Bridge>,
    /// Which bridge each bridged room is in.
    by_place: BTreeMap<Place, usize>,
    recent: BTreeMap<(NetworkId, String), Remembered>,
    order: VecDeque<(NetworkId, String)>,
    /// Relayed lines by their network ids, and speakers' latest lines.
    replies: replies::Replies,
}

impl Relay {
    /// A relay over these bridges.
    pub fn new(bridges: Vec<Bridge>) -> Self {
        let mut relay = Self::default();
        relay.set_bridges(bridges);
        relay
    }

    /// Replaces the bridges (the config was reloaded); what is remembered stays.
    pub fn set_bridges(&mut self, bridges: Vec<Bridge>) {
        self.by_place = bridges
            .iter()
            .enumerate()
            .flat_map(|(i, bridge)| bridge.rooms.iter().map(move |place| (place.clone(), i)))
            .collect();
        self.bridges = bridges;
    }

    /// The bridge a room is in.
    pub fn bridge(&self, place: &Place) -> Option<&Bridge> {
        self.by_place.get(place).map(|i| &self.bridges[*i])
    }

    /// Every room that shares what is said in `place`: its bridge's rooms, or itself.
    pub fn rooms(&self, place: &Place) -> Vec<Place> {
        self.bridge(place).map_or_else(|| vec![place.clone()], |bridge| bridge.rooms.clone())
    }

    /// The room that stands for a whole bridge (its first), or `place` itself: two rooms
    /// are one place for tables and challenges when their hubs are equal.
    pub fn hub(&self, place: &Place) -> Place {
        self.bridge(place).and_then(|bridge| bridge.rooms.first().cloned()).unwrap_or_else(|| place.clone())
    }

    /// Notes that a relayed line went out on `network` as the message `id` (its transport
    /// said so once it was sent), so replies and reactions to it find its speaker.
    pub fn learn(&mut self, network: &NetworkId, id: &str, line: Relayed) {
        self.replies.learn(network, id, line);
    }

    /// The speakers' latest lines heard since the last call, for the store to keep.
    pub fn take_heard(&mut self) -> Vec<replies::LatestLine> {
        self.replies.take_heard()
    }

    /// Puts back the latest lines the store kept (at start).
    pub fn recall(&mut self, lines: Vec<replies::LatestLine>) {
        for line in lines {
            self.replies.recall(line);
        }
    }

    /// What to relay for a message that is not a command, said at `now`, its speaker
    /// unmarked ([`Relay::relay_marked`]).
    pub fn relay(
        &mut self,
        inbound: &Inbound,
        now: Timestamp,
        taken: impl Fn(&str) -> bool,
        language_of: impl Fn(&Place) -> Language,
    ) -> Vec<Outbound> {
        self.relay_marked(inbound, now, speaker::Marks::default(), taken, language_of)
    }

    /// What to relay for a message that is not a command, said at `now`. `taken` says
    /// whether a (clean) name also answers for another identity; the speaker is then
    /// shown with their id, as is a name that ends as a mark does
    /// ([`speaker::forges_mark`]). `marks` are added after the name (`alice?/libera`).
    pub fn relay_marked(
        &mut self,
        inbound: &Inbound,
        now: Timestamp,
        marks: speaker::Marks,
        taken: impl Fn(&str) -> bool,
        language_of: impl Fn(&Place) -> Language,
    ) -> Vec<Outbound> {
        if inbound.private {
            return Vec::new();
        }
        let place = Place { network: inbound.network.clone(), room: inbound.room.clone() };
        let id = inbound.sender.as_str();
        let clean = speaker::clean(&inbound.display_name, id);
        let forged = self
            .bridge(&place)
            .is_some_and(|b| speaker::forges_mark(&clean, b.rooms.iter().map(|p| &p.network)));
        let name = speaker::shown(&clean, id, forged || taken(&clean));
        let name = spellbridge_core::shown::marked(
            &name,
            marks.guest,
            marks.network.then_some(inbound.network.as_str()),
        );
        let (cap, edits) =
            self.bridge(&place).map_or((DEFAULT_LINES, Edits::Diff), |b| (b.relay_lines, b.edits));
        // Rendered once for each language among the rooms it goes to (RULES-free: only the
        // bot's own words in it, "3 more lines", "reacted", are translated).
        let bridge_languages: BTreeSet<Language> = self
            .bridge(&place)
            .filter(|b| b.relay)
            .map(|b| b.rooms.iter().filter(|other| **other != place).map(&language_of).collect())
            .unwrap_or_default();
        let rendered: BTreeMap<Language, Vec<Message>> = bridge_languages
            .into_iter()
            .filter_map(|language| {
                Some((language, self.render(inbound, &name, marks, cap, edits, language)?))
            })
            .collect();
        // Who said it, carried with each line so the network's id for it can be mapped back.
        let words = match inbound.said {
            Said::Message | Said::Emote => Some(inbound.text.as_str()),
            Said::Edit { .. } if edits == Edits::Resend => Some(inbound.text.as_str()),
            _ => None,
        };
        let line = words
            .map(|text| Relayed { name: name.clone(), text: text.chars().take(EXCERPT_CHARS + 1).collect() });
        if let Some(id) = &inbound.message_id
            && matches!(inbound.said, Said::Message | Said::Emote)
        {
            // Only where an addressed line from another room can answer it.
            if self.bridge(&place).is_some_and(|b| b.relay) {
                self.replies.heard(&place, &clean, id, now);
            }
            self.remember(
                &inbound.network,
                id,
                Remembered { name, text: inbound.text.clone(), command: false },
            );
        }
        if let Said::Edit { original } = &inbound.said {
            let key = (inbound.network.clone(), original.clone());
            if let Some(known) = self.recent.get_mut(&key) {
                known.text = inbound.text.clone();
            }
        }
        let Some(bridge) = self.bridge(&place).filter(|b| b.relay) else { return Vec::new() };
        // A line addressing someone (`alice: hi`) answers their latest line in each room.
        let addressed = inbound.said == Said::Message && inbound.reply_to.is_none();
        let line = line.as_ref();
        bridge
            .rooms
            .iter()
            .filter(|other| **other != place)
            .flat_map(|other| {
                let answered = addressed.then(|| self.replies.answered(other, &inbound.text, now)).flatten();
                let lines = rendered.get(&language_of(other)).map(Vec::as_slice).unwrap_or_default();
                lines.iter().enumerate().map(move |(i, message)| Outbound {
                    network: other.network.clone(),
                    to: Destination::Room(other.room.clone()),
                    message: Message {
                        relayed: line.cloned(),
                        reply_to: answered.filter(|_| i == 0).map(str::to_owned),
                        ..message.clone()
                    },
                })
            })
            .collect()
    }

    /// Notes a command said in a room (it is not relayed), so that what refers to it
    /// later (an edit, a reaction, a deletion) is not relayed either.
    pub fn remember_command(&mut self, inbound: &Inbound) {
        if let Some(id) = &inbound.message_id
            && !inbound.private
        {
            let name = speaker::clean(&inbound.display_name, inbound.sender.as_str());
            let message = Remembered { name, text: inbound.text.clone(), command: true };
            self.remember(&inbound.network, id, message);
        }
    }

    /// The lines to relay, each a message of its own that starts with the speaker. A
    /// message or emote also names its [`Speaker`] (its nick on its network and the
    /// head's length), for a network that shows the speaker as themselves (issue 17).
    fn render(
        &self,
        inbound: &Inbound,
        name: &str,
        marks: speaker::Marks,
        cap: usize,
        edits: Edits,
        language: Language,
    ) -> Option<Vec<Message>> {
        let voicing = Voicing { inbound, name, marks, cap, language };
        let known = |id: &str| self.known(&inbound.network, id);
        let about = match &inbound.said {
            Said::Edit { original: target } | Said::Reaction { target, .. } | Said::Redaction { target } => {
                known(target)
            }
            Said::Message | Said::Emote => None,
        };
        if about.is_some_and(|m| m.command) {
            return None;
        }
        if matches!(inbound.said, Said::Edit { .. }) && edits == Edits::Off {
            return None;
        }
        let lines = match &inbound.said {
            Said::Message => {
                let mut body = RichText::new();
                if let Some(answered) = inbound.reply_to.as_deref().and_then(known) {
                    body = body.text(format!("{}: ", answered.name));
                }
                voicing.said(body.append(inbound.rich.clone()))
            }
            Said::Emote => voicing.acted(inbound.rich.clone()),
            Said::Edit { original } if edits == Edits::Resend => {
                if known(original).is_some_and(|before| before.text.trim() == inbound.text.trim()) {
                    return None;
                }
                voicing.said(RichText::new().text("* ").append(inbound.rich.clone()))
            }
            Said::Edit { original } => {
                let correction = match known(original) {
                    Some(before) => correction(&before.text, &inbound.text)?,
                    None => format!("* {}", inbound.text),
                };
                voicing.said(RichText::new().text(correction))
            }
            Said::Reaction { target, key } => {
                voicing.acted(RichText::new().text(self.reaction(&inbound.network, target, key, language)))
            }
            Said::Redaction { target } => {
                voicing.acted(RichText::new().text(self.deletion(&inbound.network, target, name, language)))
            }
        };
        Some(lines)
    }

    /// A message said in the room, or a relayed line the bot said there (owned either way).
    fn known(&self, network: &NetworkId, id: &str) -> Option<Remembered> {
        self.recent
            .get(&(network.clone(), id.to_owned()))
            .cloned()
            .or_else(|| self.replies.learned(network, id).map(Remembered::relayed))
    }

    /// A relayed line the bot said, not a message said in the room.
    fn relayed(&self, network: &NetworkId, id: &str) -> bool {
        !self.recent.contains_key(&(network.clone(), id.to_owned()))
            && self.replies.learned(network, id).is_some()
    }

    /// What a reaction with `key` to `target` is relayed as. A reaction to a relayed line
    /// names its speaker as the line's own (`nick's`).
    fn reaction(&self, network: &NetworkId, target: &str, key: &str, language: Language) -> String {
        let args = Args::new().text("key", excerpt(key));
        match self.known(network, target) {
            Some(m) => {
                let args = args.text("name", m.name.clone()).text("quoted", excerpt(&m.text));
                let id = if self.relayed(network, target) {
                    "notice-reacted-to-line"
                } else {
                    "notice-reacted-to"
                };
                locale::text(language, id, &args)
            }
            None => locale::text(language, "notice-reacted", &args),
        }
    }

    /// What `name` deleting `target` is relayed as: their own message or another's.
    fn deletion(&self, network: &NetworkId, target: &str, name: &str, language: Language) -> String {
        match self.known(network, target) {
            Some(m) if m.name == name => locale::text(language, "notice-deleted-own", &Args::new()),
            Some(m) => locale::text(language, "notice-deleted-by", &Args::new().text("name", m.name.clone())),
            None => locale::text(language, "notice-deleted", &Args::new()),
        }
    }

    fn remember(&mut self, network: &NetworkId, id: &str, message: Remembered) {
        let key = (network.clone(), id.to_owned());
        if self.recent.insert(key.clone(), message).is_none() {
            self.order.push_back(key);
        }
        while self.order.len() > REMEMBERED {
            if let Some(oldest) = self.order.pop_front() {
                self.recent.remove(&oldest);
            }
        }
    }

    /// The rooms of every bridge, for joining them.
    pub fn all_rooms(&self) -> impl Iterator<Item = &Place> {
        self.bridges.iter().flat_map(|bridge| bridge.rooms.iter())
    }
}

/// An edit as a short correction in the IRC manner, `s/old/new/`: only the words that
/// changed. `None` when nothing changed.
pub fn correction(before: &str, after: &str) -> Option<String> {
    let old: Vec<&str> = before.split_whitespace().collect();
    let new: Vec<&str> = after.split_whitespace().collect();
    if old == new {
        return None;
    }
    let prefix = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let suffix =
        old[prefix..].iter().rev().zip(new[prefix..].iter().rev()).take_while(|(a, b)| a == b).count();
    let (mut start, mut old_end, mut new_end) = (prefix, old.len() - suffix, new.len() - suffix);
    // A pure insertion or deletion keeps one word of context so the correction can apply.
    if start == old_end || start == new_end {
        if start > 0 {
            start -= 1;
        } else {
            old_end = (old_end + 1).min(old.len());
            new_end = (new_end + 1).min(new.len());
        }
    }
    let (old_words, new_words) = (old[start..old_end].join(" "), new[start..new_end].join(" "));
    if old_words.is_empty() {
        return Some(format!("* {after}"));
    }
    Some(format!("s/{old_words}/{new_words}/"))
}

/// The start of a text, on one line (its line breaks and control characters as spaces).
fn excerpt(text: &str) -> String {
    let flat = |c: char| if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') { ' ' } else { c };
    let mut short: String = text.chars().take(EXCERPT_CHARS).map(flat).collect();
    if text.chars().count() > EXCERPT_CHARS {
        short.push('…');
    }
    short
}

/// The places of a bridge given as network and room names.
pub fn bridge(name: &str, rooms: &[(NetworkId, RoomId)], relay: bool) -> Bridge {
    Bridge {
        name: name.to_owned(),
        rooms: rooms
            .iter()
            .map(|(network, room)| Place { network: network.clone(), room: room.clone() })
            .collect(),
        relay,
        relay_lines: DEFAULT_LINES,
        edits: Edits::Diff,
        speaker_rate: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spellbridge_core::{PlayerId, Voice};

    fn place(network: &str, room: &str) -> Place {
        Place { network: NetworkId::new(network), room: RoomId::new(room) }
    }

    fn relay() -> Relay {
        Relay::new(vec![Bridge {
            name: "magic".into(),
            rooms: vec![place("irc", "#magic"), place("matrix", "!room:hs")],
            relay: true,
            relay_lines: DEFAULT_LINES,
            edits: Edits::Diff,
            speaker_rate: None,
        }])
    }

    fn from_matrix(id: &str, text: &str, said: Said) -> Inbound {
        Inbound {
            display_name: "Bob".into(),
            said,
            message_id: Some(id.into()),
            ..Inbound::new(NetworkId::new("matrix"), RoomId::new("!room:hs"), PlayerId::new("@bob:hs"), text)
        }
    }

    /// What is relayed when no name is taken by someone else.
    fn untaken(relay: &mut Relay, inbound: &Inbound) -> Vec<Outbound> {
        relay.relay(inbound, Timestamp(0), |_| false, |_| Language::En)
    }

    fn texts(out: &[Outbound]) -> Vec<(String, Voice, String)> {
        out.iter().map(|o| (o.network.to_string(), o.message.voice, o.message.text.plain())).collect()
    }

    #[test]
    fn chat_goes_to_the_other_rooms_with_the_name_and_formatting() {
        let mut relay = relay();
        let mut inbound = from_matrix("$1", "hello there", Said::Message);
        inbound.rich = RichText::new().bold("hello").text(" there");
        let out = untaken(&mut relay, &inbound);
        assert_eq!(texts(&out), [("irc".to_owned(), Voice::Say, "<Bob> hello there".to_owned())]);
        assert_eq!(out[0].message.text, RichText::new().text("<Bob> ").bold("hello").text(" there"));
        let speaker = out[0].message.speaker.clone().expect("a speaker");
        assert_eq!((speaker.network.as_str(), speaker.nick.as_str()), ("matrix", "Bob"));
        assert_eq!(
            out[0].message.said(),
            RichText::new().bold("hello").text(" there"),
            "said by the speaker"
        );
        assert_eq!(out[0].to, Destination::Room(RoomId::new("#magic")));
    }

    #[test]
    fn each_room_hears_the_bots_own_words_of_a_relayed_line_in_its_language() {
        let mut relay = relay();
        let chinese_irc = |p: &Place| if p.network.as_str() == "irc" { Language::ZhCn } else { Language::En };
        relay.relay(&from_matrix("$1", "你好", Said::Message), Timestamp(0), |_| false, chinese_irc);
        let reaction = from_matrix("$2", "👍", Said::Reaction { target: "$1".into(), key: "👍".into() });
        let out = relay.relay(&reaction, Timestamp(0), |_| false, chinese_irc);
        assert_eq!(texts(&out), [("irc".into(), Voice::Act, "Bob 对 Bob 的“你好”回应了 👍".into())]);
        let deleted = from_matrix("$3", "", Said::Redaction { target: "$1".into() });
        let out = relay.relay(&deleted, Timestamp(0), |_| false, chinese_irc);
        assert_eq!(texts(&out)[0].2, "Bob 删除了自己的一条消息");
        // A long message's last line says what was left out, in the room's language.
        let long = (1..=12).map(|n| format!("第 {n} 行")).collect::<Vec<_>>().join("\n");
        let out = relay.relay(&from_matrix("$4", &long, Said::Message), Timestamp(0), |_| false, chinese_irc);
        let last = texts(&out).pop().expect("lines").2;
        assert!(last.contains("还有") && !last.contains("more"), "{last}");
    }

    #[test]
    fn edits_reactions_deletions_and_replies_become_short_irc_lines() {
        let mut relay = relay();
        untaken(&mut relay, &from_matrix("$1", "hello wrold, how are you", Said::Message));
        let edit = untaken(
            &mut relay,
            &from_matrix("$2", "hello world, how are you", Said::Edit { original: "$1".into() }),
        );
        assert_eq!(texts(&edit)[0].2, "<Bob> s/wrold,/world,/");
        let reaction = from_matrix("$3", "👍", Said::Reaction { target: "$1".into(), key: "👍".into() });
        let out = untaken(&mut relay, &reaction);
        assert_eq!(
            texts(&out)[0],
            ("irc".into(), Voice::Act, "Bob reacted 👍 to Bob: “hello world, how are you”".into())
        );
        let out = untaken(&mut relay, &from_matrix("$4", "", Said::Redaction { target: "$1".into() }));
        assert_eq!(texts(&out)[0].2, "Bob deleted their message");
        let mut reply = from_matrix("$5", "fine", Said::Message);
        reply.reply_to = Some("$1".into());
        assert_eq!(texts(&untaken(&mut relay, &reply))[0].2, "<Bob> Bob: fine");
        let out = untaken(&mut relay, &from_matrix("$6", "waves", Said::Emote));
        assert_eq!(texts(&out)[0], ("irc".into(), Voice::Act, "Bob waves".into()));
        assert_eq!(out[0].message.said().plain(), "waves", "an emote's speaker is its subject");
        assert_eq!(edit[0].message.speaker, None, "a correction is the bridge's report, not a line said");
    }

    #[test]
    fn nothing_is_relayed_from_unbridged_rooms_private_messages_or_quiet_bridges() {
        let mut relay = relay();
        let mut private = from_matrix("$1", "secret", Said::Message);
        private.private = true;
        assert!(untaken(&mut relay, &private).is_empty());
        let mut elsewhere = from_matrix("$2", "hi", Said::Message);
        elsewhere.room = RoomId::new("!other:hs");
        assert!(untaken(&mut relay, &elsewhere).is_empty());
        relay.set_bridges(vec![Bridge { relay: false, ..relay.bridges[0].clone() }]);
        assert!(untaken(&mut relay, &from_matrix("$3", "hi", Said::Message)).is_empty());
    }

    #[test]
    fn what_refers_to_a_command_is_not_relayed() {
        let mut relay = relay();
        relay.remember_command(&from_matrix("$1", "!gather 1 fire", Said::Message));
        for said in [
            Said::Edit { original: "$1".into() },
            Said::Reaction { target: "$1".into(), key: "👍".into() },
            Said::Redaction { target: "$1".into() },
        ] {
            assert!(
                untaken(&mut relay, &from_matrix("$2", "!gather 2 fire", said.clone())).is_empty(),
                "{said:?}"
            );
        }
    }

    #[test]
    fn corrections_name_only_the_changed_words() {
        assert_eq!(correction("a b c", "a x c").as_deref(), Some("s/b/x/"));
        assert_eq!(correction("a b c", "a b c d").as_deref(), Some("s/c/c d/"));
        assert_eq!(correction("a b", "b").as_deref(), Some("s/a b/b/"));
        assert_eq!(correction("same", "same"), None);
    }

    #[test]
    fn a_newline_in_a_body_or_a_name_cannot_start_a_line_without_the_speaker() {
        let mut relay = relay();
        let mut forged = from_matrix("$1", "gg\n<bob> I concede", Said::Message);
        forged.rich = RichText::new().text("gg\n<bob> I concede");
        forged.display_name = "mallory\r\n<alice> I concede\u{202e}".into();
        let out = untaken(&mut relay, &forged);
        assert_eq!(
            texts(&out).into_iter().map(|(_, _, text)| text).collect::<Vec<_>>(),
            ["<mallory alice I concede> gg", "<mallory alice I concede> <bob> I concede"]
        );
        let mut emote = from_matrix("$2", "waves\nbob concedes", Said::Emote);
        emote.rich = RichText::new().text("waves\nbob concedes");
        let out = untaken(&mut relay, &emote);
        assert_eq!(texts(&out)[1], ("irc".into(), Voice::Act, "Bob bob concedes".into()));
        let reaction =
            from_matrix("$3", "x", Said::Reaction { target: "$1".into(), key: "👍\n<bob> hi".into() });
        let out = untaken(&mut relay, &reaction);
        assert_eq!(out.len(), 1, "{:?}", texts(&out));
        assert!(texts(&out)[0].2.starts_with("Bob reacted 👍 <bob> hi to mallory"), "{:?}", texts(&out));
    }

    #[test]
    fn a_name_another_identity_answers_to_is_shown_with_the_speakers_id() {
        let mut relay = relay();
        let mut impostor = from_matrix("$1", "I concede", Said::Message);
        impostor.display_name = "alice".into();
        impostor.sender = PlayerId::new("@alice:evil.org");
        let out =
            relay.relay(&impostor, Timestamp(0), |name| name.eq_ignore_ascii_case("alice"), |_| Language::En);
        assert_eq!(texts(&out)[0].2, "<alice (@alice:evil.org)> I concede");
        let out = relay.relay(
            &from_matrix("$2", "hi", Said::Message),
            Timestamp(0),
            |name| name == "alice",
            |_| Language::En,
        );
        assert_eq!(texts(&out)[0].2, "<Bob> hi", "a name nobody else uses is shown alone");
    }

    /// Issue 29, item 3: a speaker marked as from another network, not logged in, or
    /// both, is shown so in every line's head, and carries the marks to a ghost; a
    /// Matrix display name that ends as a mark does is shown with its id.
    #[test]
    fn marked_speakers_show_their_marks_and_a_name_forging_one_shows_its_id() {
        let mut relay = relay();
        let both = speaker::Marks { guest: true, network: true };
        let out =
            relay.relay_marked(&from_irc("alice", "hi"), Timestamp(0), both, |_| false, |_| Language::En);
        assert_eq!(texts(&out)[0].2, "<alice?/irc> hi");
        let speaker = out[0].message.speaker.clone().expect("a speaker");
        assert!(speaker.guest && speaker.network_named, "{speaker:?}");
        assert_eq!(speaker.marked(), "alice?/irc");
        assert_eq!(out[0].message.said().plain(), "hi", "the head with its marks is cut for a ghost");
        assert_eq!(out[0].message.relayed.as_ref().map(|r| r.name.as_str()), Some("alice?/irc"));
        let network = speaker::Marks { guest: false, network: true };
        let mut emote = from_irc("alice", "waves");
        emote.said = Said::Emote;
        let out = relay.relay_marked(&emote, Timestamp(0), network, |_| false, |_| Language::En);
        assert_eq!(texts(&out)[0].2, "alice/irc waves");
        let out = untaken(&mut relay, &from_irc("alice", "plain"));
        assert_eq!(texts(&out)[0].2, "<alice> plain", "no marks: the name alone");
        for forged in ["alice/irc", "alice?"] {
            let mut impostor = from_matrix("$f", "I concede", Said::Message);
            impostor.display_name = forged.into();
            impostor.sender = PlayerId::new("@mallory:evil.org");
            let out = untaken(&mut relay, &impostor);
            assert_eq!(texts(&out)[0].2, format!("<{forged} (@mallory:evil.org)> I concede"));
        }
    }

    #[test]
    fn a_long_message_is_capped_at_the_bridges_lines() {
        let mut relay = relay();
        relay.set_bridges(vec![Bridge { relay_lines: 3, ..relay.bridges[0].clone() }]);
        let text = "word ".repeat(64 * 1024 / 5);
        let mut long = from_matrix("$1", &text, Said::Message);
        long.rich = RichText::new().text(text.as_str());
        let out = untaken(&mut relay, &long);
        let lines: Vec<String> = texts(&out).into_iter().map(|(_, _, text)| text).collect();
        assert_eq!(lines.len(), 4, "{lines:?}");
        assert!(lines[..3].iter().all(|l| l.starts_with("<Bob> word") && l.len() <= lines::LINE_BYTES));
        assert!(lines[3].starts_with("<Bob> … (") && lines[3].ends_with(" more lines)"), "{}", lines[3]);
        assert!(out.iter().all(|o| o.message.chat), "relayed lines are chat, behind game output");
    }
    fn from_irc(nick: &str, text: &str) -> Inbound {
        Inbound {
            display_name: nick.into(),
            verified: false,
            ..Inbound::new(
                NetworkId::new("irc"),
                RoomId::new("#magic"),
                PlayerId::new(format!("irc:{nick}")),
                text,
            )
        }
    }

    #[test]
    fn each_relayed_line_carries_its_speaker_and_the_start_of_their_words() {
        let mut relay = relay();
        let long = "the first words of a line long enough to be cut short somewhere";
        let out = untaken(&mut relay, &from_irc("alice", long));
        let carried = out[0].message.relayed.clone().expect("carried");
        assert_eq!(carried.name, "alice");
        assert_eq!(carried.text.chars().count(), EXCERPT_CHARS + 1, "only what an excerpt needs");
        assert!(long.starts_with(&carried.text));
        let reaction = untaken(
            &mut relay,
            &from_matrix("$9", "x", Said::Reaction { target: "$1".into(), key: "👍".into() }),
        );
        assert_eq!(reaction[0].message.relayed, None, "a reaction line is nobody's words");
    }

    #[test]
    fn a_reply_or_reaction_to_a_relayed_line_names_its_irc_speaker() {
        let mut relay = relay();
        let matrix = NetworkId::new("matrix");
        let out =
            untaken(&mut relay, &from_irc("alice", "the first words of a long line, and then some more"));
        // The Matrix transport sent it as the bot's event `$bot1`.
        relay.learn(&matrix, "$bot1", out[0].message.relayed.clone().expect("carried"));
        let mut reply = from_matrix("$2", "indeed", Said::Message);
        reply.reply_to = Some("$bot1".into());
        assert_eq!(texts(&untaken(&mut relay, &reply))[0].2, "<Bob> alice: indeed");
        let reaction = from_matrix("$3", "👍", Said::Reaction { target: "$bot1".into(), key: "👍".into() });
        assert_eq!(
            texts(&untaken(&mut relay, &reaction))[0],
            (
                "irc".into(),
                Voice::Act,
                "Bob reacted 👍 to alice's “the first words of a long line, and then…”".into()
            )
        );
        // A reply to a line the bot never relayed (or forgot) reads as before.
        let mut unknown = from_matrix("$4", "what?", Said::Message);
        unknown.reply_to = Some("$unknown".into());
        assert_eq!(texts(&untaken(&mut relay, &unknown))[0].2, "<Bob> what?");
    }

    #[test]
    fn an_irc_line_addressing_a_matrix_user_answers_their_latest_recent_line() {
        let mut relay = relay();
        relay.relay(
            &from_matrix("$1", "anyone for a duel?", Said::Message),
            Timestamp(100),
            |_| false,
            |_| Language::En,
        );
        relay.relay(
            &from_matrix("$2", "anyone at all?", Said::Message),
            Timestamp(110),
            |_| false,
            |_| Language::En,
        );
        let out = relay.relay(&from_irc("alice", "bob: me!"), Timestamp(120), |_| false, |_| Language::En);
        assert_eq!(texts(&out)[0].2, "<alice> bob: me!");
        assert_eq!(out[0].message.reply_to.as_deref(), Some("$2"), "Bob's latest line, any case");
        let out = relay.relay(&from_irc("alice", "carol: hi"), Timestamp(120), |_| false, |_| Language::En);
        assert_eq!(out[0].message.reply_to, None, "nobody called carol spoke in the room");
        let late = Timestamp(110 + replies::REPLY_WITHIN + 1);
        let out = relay.relay(&from_irc("alice", "Bob: still there?"), late, |_| false, |_| Language::En);
        assert_eq!(out[0].message.reply_to, None, "too long ago: plain chat");
        // Only the first line of a message is the reply.
        let mut two = from_irc("alice", "Bob: one\ntwo");
        two.rich = RichText::new().text("Bob: one\ntwo");
        let out = relay.relay(&two, Timestamp(130), |_| false, |_| Language::En);
        let answers: Vec<Option<&str>> = out.iter().map(|o| o.message.reply_to.as_deref()).collect();
        assert_eq!(answers, [Some("$2"), None]);
    }

    #[test]
    fn edits_are_relayed_as_a_correction_the_whole_new_text_or_not_at_all() {
        let edit = || from_matrix("$2", "hello world, how are you", Said::Edit { original: "$1".into() });
        let mut relay = relay();
        for (edits, expected) in [
            (Edits::Diff, vec!["<Bob> s/wrold,/world,/".to_owned()]),
            (Edits::Resend, vec!["<Bob> * hello world, how are you".to_owned()]),
            (Edits::Off, vec![]),
        ] {
            relay.set_bridges(vec![Bridge { edits, ..relay.bridges[0].clone() }]);
            untaken(&mut relay, &from_matrix("$1", "hello wrold, how are you", Said::Message));
            let out = untaken(&mut relay, &edit());
            let lines: Vec<String> = texts(&out).into_iter().map(|(_, _, text)| text).collect();
            assert_eq!(lines, expected, "{edits:?}");
        }
        // A resent edit keeps its formatting, and one that changes nothing is not resent.
        relay.set_bridges(vec![Bridge { edits: Edits::Resend, ..relay.bridges[0].clone() }]);
        untaken(&mut relay, &from_matrix("$1", "hello world", Said::Message));
        let mut bold = from_matrix("$3", "hello world", Said::Edit { original: "$1".into() });
        bold.rich = RichText::new().bold("hello").text(" world");
        assert!(untaken(&mut relay, &bold).is_empty(), "the same words");
        bold.text = "hello world!".into();
        let out = untaken(&mut relay, &bold);
        assert_eq!(out[0].message.text.plain(), "<Bob> * hello world");
        let bolded = out[0].message.text.segments().iter().any(|segment| {
            matches!(segment, spellbridge_core::text::Segment::Text { text, style: spellbridge_core::text::Style::Bold } if text == "hello")
        });
        assert!(bolded, "{:?}", out[0].message.text);
        assert_eq!(Edits::parse("resend"), Some(Edits::Resend));
        assert_eq!(Edits::parse("Diff"), None);
    }
}
