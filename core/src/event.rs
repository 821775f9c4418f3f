//! What a table says happened, and how each destination is shown it.
//!
//! A table answers a command, a timer or its opening with [`Event`]s: one game's typed
//! event (Thaum's `ThaumEvent`, the Duel's `DuelNews`) with its [`Audience`], the whole
//! table or one player. Events are data: the journal keeps them as they are
//! ([`Event::record`]), and nothing in them is English. A game turns them into words
//! only at delivery, once per kind of destination ([`Presentation`]: today a network's
//! [`Form`] and its [`Language`]), with [`GamePlugin::render`](crate::GamePlugin::render).
//! So a table bridged between IRC and Matrix acts once and is told twice, compactly and
//! in full, and a private event (a Duel wizard's queued spell) is only ever the one
//! player's.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use crate::language::Language;
use crate::plugin::{Announcement, Audience, Form};
use crate::text::RichText;

/// How one kind of destination is shown a game's events: how many lines it wants them in,
/// and in which language. The console and Matrix have the default, the full form in
/// English.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Presentation {
    /// Full (a line per thing that happened) or compact (IRC: as few lines as read well).
    pub form: Form,
    /// The language the destination is told in.
    pub language: Language,
    /// How a reader there sends the bot a private message ([`Whisper`]).
    pub whisper: Whisper,
}

/// How a reader sends the bot a private message, so an instruction names the way their
/// own network has: `/msg spellbot …` on IRC, "in our direct chat" on Matrix (where the
/// bot opens that chat itself), "privately" where neither is known (the console, the
/// site). A message selects on it as `$whisper` (`msg`, `direct`, `privately`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Whisper {
    /// Said with no network's way (the console, the site).
    #[default]
    Privately,
    /// A command that names the bot: IRC's `/msg <nick>`.
    Msg,
    /// A direct chat the bot opens with the player (Matrix).
    Direct,
}

impl Whisper {
    /// The word a message selects on (`{ $whisper -> [msg] … [direct] … *[privately] … }`).
    pub fn word(self) -> &'static str {
        match self {
            Whisper::Privately => "privately",
            Whisper::Msg => "msg",
            Whisper::Direct => "direct",
        }
    }
}

impl Presentation {
    /// The presentation of a network that asks for `form`, in English.
    pub fn of(form: Form) -> Self {
        Presentation { form, language: Language::En, whisper: Whisper::Privately }
    }

    /// This presentation for readers who send the bot private messages as `whisper` says.
    pub fn whispered(self, whisper: Whisper) -> Self {
        Presentation { whisper, ..self }
    }

    /// This presentation in `language`.
    pub fn in_language(self, language: Language) -> Self {
        Presentation { language, ..self }
    }
}

/// A game's event: any serialisable value. Every `Serialize + Debug + Send + Sync` type
/// is one; a game's renderer gets its own type back with [`Event::get`].
pub trait GameEvent: Any + fmt::Debug + Send + Sync {
    /// The event as JSON, as the journal keeps it.
    fn to_json(&self) -> Value;
    /// The event as [`Any`], for [`Event::get`].
    fn as_any(&self) -> &dyn Any;
}

impl<T: Serialize + fmt::Debug + Send + Sync + 'static> GameEvent for T {
    fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or_else(|e| Value::String(format!("unserialisable event: {e}")))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// One thing that happened at a table, and who may hear of it.
#[derive(Clone, Debug)]
pub struct Event {
    /// Who it is for: the whole table, or one player privately.
    pub to: Audience,
    what: Arc<dyn GameEvent>,
}

impl Event {
    /// An event for everyone at the table.
    pub fn table(what: impl GameEvent) -> Self {
        Event { to: Audience::Table, what: Arc::new(what) }
    }

    /// An event for one player only.
    pub fn player(player: &crate::PlayerId, what: impl GameEvent) -> Self {
        Event { to: Audience::Player(player.clone()), what: Arc::new(what) }
    }

    /// An event for `to`.
    pub fn to(to: Audience, what: impl GameEvent) -> Self {
        Event { to, what: Arc::new(what) }
    }

    /// The game's event, if it is a `T`.
    pub fn get<T: 'static>(&self) -> Option<&T> {
        self.what.as_any().downcast_ref()
    }

    /// The event as the journal keeps it.
    pub fn record(&self) -> EventRecord {
        EventRecord { to: self.to.clone(), event: self.what.to_json() }
    }
}

/// Two events are equal when they say the same (as JSON) to the same audience.
impl PartialEq for Event {
    fn eq(&self, other: &Self) -> bool {
        self.to == other.to && self.what.to_json() == other.what.to_json()
    }
}

impl Serialize for Event {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.record().serialize(serializer)
    }
}

/// An [`Event`] as the journal keeps it: its audience and the game's event as JSON.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventRecord {
    /// Who it was for.
    pub to: Audience,
    /// The game's event.
    pub event: Value,
}

/// Renders the events that are already text (a [`RichText`] event, for a game that has
/// no words to choose per destination): each as it is, to its audience. What a game's
/// own renderer does with events it does not know.
pub fn render_text(events: &[Event]) -> Vec<Announcement> {
    events
        .iter()
        .filter_map(|event| {
            event.get::<RichText>().map(|text| Announcement::to(event.to.clone(), text.clone()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PlayerId;

    #[derive(Debug, Serialize)]
    struct Knock {
        times: u32,
    }

    #[test]
    fn an_event_is_journaled_as_json_and_read_back_as_its_type() {
        let event = Event::player(&PlayerId::new("alice"), Knock { times: 3 });
        assert_eq!(event.get::<Knock>().map(|k| k.times), Some(3));
        assert!(event.get::<RichText>().is_none());
        let record = serde_json::to_value(&event).expect("serialises");
        assert_eq!(record, serde_json::json!({ "to": { "player": "alice" }, "event": { "times": 3 } }));
        let back: EventRecord = serde_json::from_value(record).expect("reads back");
        assert_eq!(back, event.record());
    }

    #[test]
    fn text_events_render_as_they_are() {
        let events = [Event::table(RichText::from("hello")), Event::table(Knock { times: 1 })];
        let said = render_text(&events);
        assert_eq!(said.len(), 1);
        assert_eq!(said[0].text.plain(), "hello");
    }
}
