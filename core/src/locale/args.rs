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

    /// The names given, in order.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.values.iter().map(|(name, _)| *name)
    }

    /// The arguments as Fluent takes them: pieces as placeholders.
    pub(super) fn fluent(&self) -> FluentArgs<'_> {
        let mut args = FluentArgs::with_capacity(self.values.len());
        for (i, (name, value)) in self.values.iter().enumerate() {
            match value {
                Value::Number(n) => args.set(*name, FluentValue::from(*n)),
                Value::Word(word) => args.set(*name, FluentValue::from(word.as_str())),
                Value::Piece(_) => args.set(*name, FluentValue::from(placeholder(i).to_string())),
            }
        }
        args
    }

    fn piece(&self, c: char) -> Option<&RichText> {
        let index = usize::try_from(u32::from(c).checked_sub(FIRST)?).ok()?;
        match self.values.get(index) {
            Some((_, Value::Piece(piece))) => Some(piece),
            _ => None,
        }
    }

    /// Formatted text with each placeholder as its piece's plain text.
    pub(super) fn said_plain(&self, said: &str) -> String {
        let mut out = String::with_capacity(said.len());
        for c in said.chars() {
            match self.piece(c) {
                Some(piece) => out.push_str(&piece.plain()),
                None => out.push(c),
            }
        }
        out
    }

    /// Formatted text as rich text: `backticked` runs as code, each placeholder as its
    /// piece (plain text takes the style it lands in).
    pub(super) fn said_rich(&self, said: &str) -> RichText {
        let mut out = RichText::new();
        let mut run = String::new();
        let mut code = false;
        let style = |code: bool| if code { Style::Code } else { Style::Plain };
        for c in said.chars() {
            if c == '`' {
                out = flush(out, &mut run, style(code));
                code = !code;
                continue;
            }
            let Some(piece) = self.piece(c) else {
                run.push(c);
                continue;
            };
            for segment in piece.segments() {
                match segment {
                    Segment::Text { text, style: Style::Plain } => run.push_str(text),
                    other => {
                        out = flush(out, &mut run, style(code));
                        out = out.push(other.clone());
                    }
                }
            }
        }
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
