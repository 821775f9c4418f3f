//! A message's arguments: numbers Fluent formats and selects plurals on, words it selects
//! on, and pieces put into the said text as they are (player names, rich text, typed
//! words).
//!
//! A piece reaches Fluent as a placeholder, one private-use character per piece, and is
//! put back after formatting, so neither its markup nor a backtick in a typed word is
//! ever read as the catalogue's.

use fluent_bundle::{FluentArgs, FluentValue};

use crate::ids::PlayerId;
use crate::text::{RichText, Segment, Style};

/// The first placeholder character (U+F0000, plane 15's private use area: no catalogue
/// writes one).
const FIRST: u32 = 0xF_0000;

/// Numbers past this are said as digits, not through Fluent (its numbers are `f64`).
const EXACT: i128 = 1 << 53;

#[derive(Clone, Debug)]
enum Value {
    /// A number Fluent formats and selects on.
    Number(i64),
    /// A word Fluent may select on (`[fire]`), said as it is.
    Word(String),
    /// A piece put in after formatting.
    Piece(RichText),
}

/// The arguments of one message, built with the chainable methods below:
/// `Args::new().num("round", 3).name("player", &alice)`.
#[derive(Clone, Debug, Default)]
pub struct Args {
    values: Vec<(&'static str, Value)>,
}

impl Args {
    /// No arguments.
    pub fn new() -> Self {
        Self::default()
    }

    /// Only the arguments message `id` reads: for a message chosen at run time (a game's
    /// own words for its records), which may read fewer than the code offers.
    pub fn read_by(mut self, id: &str) -> Self {
        let wanted = super::check::variables(id);
        self.values.retain(|(name, _)| wanted.contains(*name));
        self
    }

    /// A number (`{ $count }`, or `{ $count -> [one] … *[other] … }`).
    pub fn num(mut self, name: &'static str, value: impl Numeric) -> Self {
        let value = value.to_i128();
        let value = match i64::try_from(value) {
            Ok(exact) if value.abs() < EXACT => Value::Number(exact),
            _ => Value::Piece(RichText::new().text(value.to_string())),
        };
        self.values.push((name, value));
        self
    }

    /// A word the message may select on (`{ $kind -> [track] … *[other] … }`); said as
    /// it is otherwise. For the code's own words only: a typed word goes in [`Args::text`].
    pub fn word(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.values.push((name, Value::Word(value.into())));
        self
    }

    /// Text put in as it is, in the style of where it lands (a typed word inside a
    /// `backticked` run is code).
    pub fn text(mut self, name: &'static str, value: impl Into<String>) -> Self {
        let text: String = value.into();
        self.values.push((name, Value::Piece(RichText::new().text(text))));
        self
    }

    /// Rich text put in as it is (its own styles and segments).
    pub fn rich(mut self, name: &'static str, value: RichText) -> Self {
        self.values.push((name, Value::Piece(value)));
        self
    }

    /// A player's name, shown by each network under its own name for them, not pinging.
    pub fn name(self, name: &'static str, player: &PlayerId) -> Self {
        self.rich(name, RichText::new().name(player))
    }

    /// A player's name that pings them.
    pub fn mention(self, name: &'static str, player: &PlayerId) -> Self {
        self.rich(name, RichText::new().mention(player))
    }

    /// The bot's own name as the reading network knows it ([`Segment::Bot`]).
    pub fn bot(self, name: &'static str) -> Self {
        self.rich(name, RichText::new().bot())
    }

    /// The names given, in order.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.values.iter().map(|(name, _)| *name)
    }

    /// True when a piece is given (the formatted text has placeholders to put back).
    pub(super) fn has_pieces(&self) -> bool {
        self.values.iter().any(|(_, value)| matches!(value, Value::Piece(_)))
    }

    /// The arguments as Fluent takes them: pieces as placeholders.
    pub(super) fn fluent(&self) -> FluentArgs<'_> {
        let mut args = FluentArgs::with_capacity(self.values.len());
        for (i, (name, value)) in self.values.iter().enumerate() {
            match value {
                Value::Number(n) => args.set(*name, FluentValue::from(*n)),
                Value::Word(word) => args.set(*name, FluentValue::from(word.as_str())),
                Value::Piece(_) => match placeholder_str(i) {
                    Some(placeholder) => args.set(*name, FluentValue::from(placeholder)),
                    None => args.set(*name, FluentValue::from(placeholder(i).to_string())),
                },
            }
        }
        args
    }

    /// The index of the piece `c` stands for, if it is one of this message's placeholders.
    fn piece_index(&self, c: char) -> Option<usize> {
        let index = usize::try_from(u32::from(c).checked_sub(FIRST)?).ok()?;
        matches!(self.values.get(index), Some((_, Value::Piece(_)))).then_some(index)
    }

    fn piece(&self, c: char) -> Option<&RichText> {
        match &self.values.get(self.piece_index(c)?)?.1 {
            Value::Piece(piece) => Some(piece),
            _ => None,
        }
    }

    /// The piece `c` stands for, taken out of the arguments unless `rest` says it again
    /// (then cloned, so its next placeholder finds it).
    fn take_piece(&mut self, c: char, rest: &str) -> Option<RichText> {
        let index = self.piece_index(c)?;
        let Value::Piece(piece) = &mut self.values[index].1 else { return None };
        Some(if rest.contains(c) { piece.clone() } else { std::mem::take(piece) })
    }

    /// Formatted text with each placeholder as its piece's plain text.
    pub(super) fn said_plain(&self, said: &str) -> String {
        let mut out = String::with_capacity(said.len());
        let mut rest = said;
        while let Some(at) = memchr::memchr(PLACEHOLDER_LEAD, rest.as_bytes()) {
            out.push_str(&rest[..at]);
            let Some(c) = rest[at..].chars().next() else { break };
            match self.piece(c) {
                Some(piece) => piece.write_plain(&mut out),
                None => out.push(c),
            }
            rest = &rest[at + c.len_utf8()..];
        }
        out.push_str(rest);
        out
    }

    /// Formatted text as rich text: `backticked` runs as code, each placeholder as its
    /// piece (plain text takes the style it lands in). The pieces are moved into the
    /// result, not copied.
    pub(super) fn into_rich(mut self, said: &str) -> RichText {
        let mut out = RichText::new();
        let mut run = String::new();
        let mut code = false;
        let style = |code: bool| if code { Style::Code } else { Style::Plain };
        let mut rest = said;
        // Only a backtick or a placeholder's first byte stops the copy: every other
        // character goes into the run as it is.
        while let Some(at) = memchr::memchr2(b'`', PLACEHOLDER_LEAD, rest.as_bytes()) {
            run.push_str(&rest[..at]);
            rest = &rest[at..];
            if let Some(after) = rest.strip_prefix('`') {
                out = flush(out, &mut run, style(code));
                code = !code;
                rest = after;
                continue;
            }
            let Some(c) = rest.chars().next() else { break };
            rest = &rest[c.len_utf8()..];
            let Some(piece) = self.take_piece(c, rest) else {
                run.push(c);
                continue;
            };
            for segment in piece.into_segments() {
                match segment {
                    Segment::Text { text, style: Style::Plain } if run.is_empty() => run = text,
                    Segment::Text { text, style: Style::Plain } => run.push_str(&text),
                    other => {
                        out = flush(out, &mut run, style(code));
                        out = out.push(other);
                    }
                }
            }
        }
        run.push_str(rest);
        flush(out, &mut run, style(code))
    }
}

fn flush(out: RichText, run: &mut String, style: Style) -> RichText {
    if run.is_empty() {
        return out;
    }
    out.push(Segment::Text { text: std::mem::take(run), style })
}

fn placeholder(index: usize) -> char {
    u32::try_from(index).ok().and_then(|i| char::from_u32(FIRST + i)).unwrap_or('\u{FFFD}')
}

/// The first byte of every placeholder in UTF-8 (of every character from U+C0000 to
/// U+FFFFF): no other character's encoding has it, so a byte search finds them.
const PLACEHOLDER_LEAD: u8 = 0xF3;

/// How many placeholders are kept written out, for Fluent to borrow.
const WRITTEN: usize = 32;

/// The first [`WRITTEN`] placeholders in UTF-8.
static PLACEHOLDERS: [[u8; 4]; WRITTEN] = {
    let mut out = [[0; 4]; WRITTEN];
    let mut i = 0;
    while i < WRITTEN {
        if let Some(c) = char::from_u32(FIRST + i as u32) {
            c.encode_utf8(&mut out[i]);
        }
        i += 1;
    }
    out
};

/// Placeholder `index` as a string Fluent can borrow (`None` past [`WRITTEN`]).
fn placeholder_str(index: usize) -> Option<&'static str> {
    std::str::from_utf8(PLACEHOLDERS.get(index)?).ok()
}

/// A number a message can take (any integer).
pub trait Numeric {
    /// The number as an `i128` (a `u128` past `i128::MAX` saturates).
    fn to_i128(self) -> i128;
}

macro_rules! numeric {
    ($($t:ty)*) => {$(
        impl Numeric for $t {
            fn to_i128(self) -> i128 {
                i128::from(self)
            }
        }
    )*};
}

numeric!(i8 i16 i32 i64 u8 u16 u32 u64);

impl Numeric for i128 {
    fn to_i128(self) -> i128 {
        self
    }
}

impl Numeric for u128 {
    fn to_i128(self) -> i128 {
        i128::try_from(self).unwrap_or(i128::MAX)
    }
}

impl Numeric for usize {
    fn to_i128(self) -> i128 {
        i128::try_from(self).unwrap_or(i128::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn placeholder_text(index: usize) -> String {
        placeholder(index).to_string()
    }

    #[test]
    fn written_placeholders_are_the_placeholder_characters() {
        for index in 0..WRITTEN {
            assert_eq!(placeholder_str(index), Some(placeholder_text(index).as_str()));
        }
        assert_eq!(placeholder_str(WRITTEN), None);
    }

    #[test]
    fn pieces_are_moved_in_and_a_piece_said_twice_is_there_twice() {
        let alice = PlayerId::new("alice");
        let args = Args::new().name("player", &alice).text("word", "x");
        let p0 = placeholder_text(0);
        let p1 = placeholder_text(1);
        let said = args.into_rich(&format!("{p0} typed `{p1}`, {p0} said."));
        let expected =
            RichText::new().name(&alice).text(" typed ").code("x").text(", ").name(&alice).text(" said.");
        assert_eq!(said, expected);
    }

    /// Characters a player types from the placeholder range (U+F0000…), backticks, IRC
    /// codes, CTCP and line breaks, and Chinese, are put in as they are: never read as
    /// another argument or as the catalogue's markup.
    #[test]
    fn typed_placeholder_characters_and_markup_stay_text() {
        let typed = "\u{F0000}\u{F0001}\u{F0002}`a`\x01\x02\r\n火\u{FFFFD}\u{C0000}";
        let args = Args::new().text("word", typed).num("count", 3);
        let p0 = placeholder_text(0);
        let said = args.clone().into_rich(&format!("«{p0}» `{p0}` \u{F0001}\u{F0005}"));
        let expected = RichText::new().text(format!("«{typed}» ")).code(typed).text(" \u{F0001}\u{F0005}");
        assert_eq!(said, expected);
        assert_eq!(
            args.said_plain(&format!("{p0}|\u{F0001}|\u{F0000}")),
            format!("{typed}|\u{F0001}|{typed}")
        );
    }

    #[test]
    fn a_lone_lead_byte_character_and_the_end_of_text_are_kept() {
        let args = Args::new();
        assert_eq!(args.said_plain("a\u{F3FFF}b\u{F0000}"), "a\u{F3FFF}b\u{F0000}");
        assert_eq!(args.clone().into_rich("`\u{F0000}"), RichText::new().code("\u{F0000}"));
        assert_eq!(args.into_rich(""), RichText::new());
    }
}
