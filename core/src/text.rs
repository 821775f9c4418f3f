//! The rich text every announcement is written in. It has just what chat networks share:
//! plain, bold, italic and code runs, mentions of players, a colour hint for game words
//! (elements, Thaums), links, and the separators between a list's entries (where IRC cuts
//! a long list into lines). Adapters render it per network (mIRC codes, Matrix HTML);
//! [`RichText::plain`] renders it as text with no markup, as the console prints it.

use serde::{Deserialize, Serialize};

use crate::ids::PlayerId;

/// How a run of text is emphasised.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Style {
    /// No emphasis.
    Plain,
    /// Bold.
    Bold,
    /// Italic.
    Italic,
    /// Monospace, for commands the player can type.
    Code,
}

/// A colour hint for a game word; networks without colour ignore it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Hue {
    /// Fire.
    Red,
    /// Water.
    Blue,
    /// Earth.
    Brown,
    /// Air and Wind.
    Green,
    /// Thunder.
    Yellow,
    /// Void.
    Grey,
}

/// One piece of a message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Segment {
    /// A run of text in one style.
    Text {
        /// The words.
        text: String,
        /// Their emphasis.
        style: Style,
    },
    /// A game word shown in its colour where the network has colours.
    Coloured {
        /// The word.
        text: String,
        /// Its colour.
        hue: Hue,
    },
    /// A player, rendered so the network pings them (a Matrix pill, an IRC nick).
    Mention(PlayerId),
    /// A player named without pinging them, in bold, under the name the network shows
    /// for them (a Matrix display name, an IRC nick): for lines that name players often,
    /// such as a Duel's step reveals.
    Name(PlayerId),
    /// The separator between two entries of a list (` · `): where a network that cuts long
    /// messages into lines (IRC) cuts this one, so no entry is split across two lines when
    /// it fits on one. Shown as its text where the message is not cut there, and dropped
    /// where it is.
    Separator(String),
    /// Words that link to a page (a rule's entry on the spectator site): a link where the
    /// network has them (Matrix HTML), the words alone elsewhere.
    Link {
        /// The words shown.
        text: String,
        /// The page's address.
        url: String,
    },
    /// The bot itself, named as the network that reads the text knows it now (IRC: its
    /// current nick, for `/msg spellbot …`); only written where that network is known to
    /// name the bot (`Whisper::Msg`), elsewhere said as `me`.
    Bot,
}

/// A message: a list of segments, built with the chainable methods below.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RichText {
    segments: Vec<Segment>,
}

impl RichText {
    /// An empty message.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends plain text.
    pub fn text(self, text: impl Into<String>) -> Self {
        self.styled(text, Style::Plain)
    }

    /// Appends bold text.
    pub fn bold(self, text: impl Into<String>) -> Self {
        self.styled(text, Style::Bold)
    }

    /// Appends italic text.
    pub fn italic(self, text: impl Into<String>) -> Self {
        self.styled(text, Style::Italic)
    }

    /// Appends a command or other literal the player can type.
    pub fn code(self, text: impl Into<String>) -> Self {
        self.styled(text, Style::Code)
    }

    /// Appends a coloured game word.
    pub fn coloured(mut self, text: impl Into<String>, hue: Hue) -> Self {
        self.segments.push(Segment::Coloured { text: text.into(), hue });
        self
    }

    /// Appends a mention of a player.
    pub fn mention(mut self, player: &PlayerId) -> Self {
        self.segments.push(Segment::Mention(player.clone()));
        self
    }

    /// Appends a player's name, in bold, without pinging them.
    pub fn name(mut self, player: &PlayerId) -> Self {
        self.segments.push(Segment::Name(player.clone()));
        self
    }

    /// Appends the separator between two entries of a list ([`Segment::Separator`]).
    pub fn separator(mut self, text: impl Into<String>) -> Self {
        self.segments.push(Segment::Separator(text.into()));
        self
    }

    /// Appends words that link to `url` ([`Segment::Link`]).
    pub fn link(mut self, text: impl Into<String>, url: impl Into<String>) -> Self {
        self.segments.push(Segment::Link { text: text.into(), url: url.into() });
        self
    }

    /// Appends the bot's own name on the network that reads the text ([`Segment::Bot`]).
    pub fn bot(mut self) -> Self {
        self.segments.push(Segment::Bot);
        self
    }

    /// The text with the bot's own name ([`Segment::Bot`]) written as `name` (a network's
    /// transport, which knows it: IRC's current nick), in the style around it.
    pub fn naming_bot(self, name: &str) -> RichText {
        if !self.segments.contains(&Segment::Bot) {
            return self;
        }
        let mut out = RichText::new();
        let mut style = Style::Plain;
        for segment in self.segments {
            match segment {
                Segment::Bot => out = out.styled(name, style),
                Segment::Text { text, style: s } => {
                    style = s;
                    out = out.push(Segment::Text { text, style: s });
                }
                other => out = out.push(other),
            }
        }
        out
    }

    /// Appends every segment of another message.
    pub fn append(mut self, other: RichText) -> Self {
        self.segments.extend(other.segments);
        self
    }

    fn styled(mut self, text: impl Into<String>, style: Style) -> Self {
        let text = text.into();
        if !text.is_empty() {
            self.segments.push(Segment::Text { text, style });
        }
        self
    }

    /// The segments, for adapters that render them.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// The segments, owned, for rewriting a message piece by piece.
    pub fn into_segments(self) -> Vec<Segment> {
        self.segments
    }

    /// Appends one segment as it is.
    pub fn push(mut self, segment: Segment) -> Self {
        self.segments.push(segment);
        self
    }

    /// True when the message has nothing in it.
    pub fn is_empty(&self) -> bool {
        self.segments.is_empty()
    }

    /// The message as text with no markup: mentions as the player's name, code in
    /// backticks (the form [`RichText::from`] reads back).
    pub fn plain(&self) -> String {
        let mut out = String::new();
        self.write_plain(&mut out);
        out
    }

    /// Appends [`RichText::plain`] to `out`.
    pub fn write_plain(&self, out: &mut String) {
        for segment in &self.segments {
            match segment {
                Segment::Text { text, style: Style::Code } => {
                    out.push('`');
                    out.push_str(text);
                    out.push('`');
                }
                Segment::Text { text, .. }
                | Segment::Coloured { text, .. }
                | Segment::Separator(text)
                | Segment::Link { text, .. } => out.push_str(text),
                Segment::Mention(player) | Segment::Name(player) => out.push_str(player.as_str()),
                Segment::Bot => out.push_str("me"),
            }
        }
    }
}

/// Plain text where each `backticked` run becomes code, so messages can be written as
/// ordinary strings: "type `!join` to play". An unpaired backtick stays as it is.
impl From<&str> for RichText {
    fn from(text: &str) -> Self {
        let pieces: Vec<&str> = text.split('`').collect();
        let paired = pieces.len() % 2 == 1;
        let mut rich = RichText::new();
        for (i, piece) in pieces.iter().enumerate() {
            let last = i + 1 == pieces.len();
            rich = match (i % 2 == 1, paired || !last) {
                (true, true) => rich.code(*piece),
                (true, false) => rich.text(format!("`{piece}")),
                (false, _) => rich.text(*piece),
            };
        }
        rich
    }
}

impl From<String> for RichText {
    fn from(text: String) -> Self {
        RichText::from(text.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_rendering_drops_markup_and_keeps_order() {
        let text = RichText::new()
            .bold("Fire")
            .text(" hits ")
            .mention(&PlayerId::new("bob"))
            .text(" for ")
            .code("3");
        assert_eq!(text.plain(), "Fire hits bob for `3`");
    }

    #[test]
    fn backticks_in_strings_become_code() {
        let text = RichText::from("type `!join` to play");
        assert_eq!(text.segments()[1], Segment::Text { text: "!join".into(), style: Style::Code });
        assert_eq!(text.plain(), "type `!join` to play");
        assert_eq!(RichText::from("a ` b").plain(), "a ` b");
    }

    #[test]
    fn the_bot_is_named_as_the_network_knows_it_in_the_style_around_it() {
        let text = RichText::new().text("e.g. ").code("/msg ").bot().code(" !cast …").text(".");
        let named = text.clone().naming_bot("spellbot2");
        assert_eq!(named.plain(), "e.g. `/msg ``spellbot2`` !cast …`.");
        assert_eq!(named.segments()[2], Segment::Text { text: "spellbot2".into(), style: Style::Code });
        assert!(!named.segments().contains(&Segment::Bot));
        assert_eq!(RichText::from("no bot").naming_bot("x"), RichText::from("no bot"));
    }
}
