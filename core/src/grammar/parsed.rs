//! A command as the grammar read it: typed values in the order of its arguments, and
//! the words as typed (to give them back with the players resolved).

use super::{Command, PlayerArgument, Query, narrow};
use crate::ids::PlayerId;
use crate::words::Adjustment;

/// An argument's value, as read.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Value {
    /// An optional argument left out.
    Absent,
    /// A `Number`.
    Number(u32),
    /// A `Signed` number.
    Signed(Adjustment),
    /// A `Choice` or `Branch`: the index of the word.
    Choice(usize),
    /// A `Player`: the name as typed, or the player id the daemon resolved it to.
    Player(PlayerArgument, PlayerId),
    /// A `Word`, as typed (its full-width forms as ASCII).
    Word(String),
    /// `Rest`: the words to the end of the line, as typed (full-width forms as ASCII).
    Rest(Vec<String>),
}

/// A [`Parsed`] command as a journal keeps it (serde): its declaration's name, the words
/// as typed and the typed values (players as the daemon resolved them). Replay restores
/// it against the game's commands ([`Parsed::restore`]) without reading any text.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Kept {
    /// The declaration's name (`cast`, never an alias).
    pub name: String,
    /// The words as typed, the command word first.
    pub words: Vec<String>,
    /// Each value, with the position of its word in `words`.
    pub values: Vec<(usize, Value)>,
}

/// A command read against its declaration: typed values, in the order of its arguments
/// (a branch's arguments right after the branch's word).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parsed {
    pub(super) command: &'static Command,
    /// The words as typed, the command word first.
    pub(super) words: Vec<String>,
    /// Each value, with the position of its word in `words` (for `Player` values).
    pub(super) values: Vec<(usize, Value)>,
}

impl Parsed {
    /// The declaration it was read against.
    pub fn command(&self) -> &'static Command {
        self.command
    }

    /// The command's name (its alias, if typed so, is read as the name).
    pub fn name(&self) -> &'static str {
        self.command.name
    }

    /// The values, in order.
    pub fn values(&self) -> impl Iterator<Item = &Value> {
        self.values.iter().map(|(_, v)| v)
    }

    /// The `i`th value.
    pub fn value(&self, i: usize) -> Option<&Value> {
        self.values.get(i).map(|(_, v)| v)
    }

    /// The `i`th value, when it is a number.
    pub fn number(&self, i: usize) -> Option<u32> {
        match self.value(i) {
            Some(Value::Number(n)) => Some(*n),
            _ => None,
        }
    }

    /// The `i`th value, when it is a signed number.
    pub fn signed(&self, i: usize) -> Option<Adjustment> {
        match self.value(i) {
            Some(Value::Signed(a)) => Some(*a),
            _ => None,
        }
    }

    /// The `i`th value, when it is a choice: its index.
    pub fn choice(&self, i: usize) -> Option<usize> {
        match self.value(i) {
            Some(Value::Choice(c)) => Some(*c),
            _ => None,
        }
    }

    /// The `i`th value, when it is a player.
    pub fn player(&self, i: usize) -> Option<&PlayerId> {
        match self.value(i) {
            Some(Value::Player(_, p)) => Some(p),
            _ => None,
        }
    }

    /// The `i`th value, when it is a word.
    pub fn word(&self, i: usize) -> Option<&str> {
        match self.value(i) {
            Some(Value::Word(w)) => Some(w),
            _ => None,
        }
    }

    /// The `i`th value, when it is the rest of the line: its words (none if left out).
    pub fn rest(&self, i: usize) -> &[String] {
        match self.value(i) {
            Some(Value::Rest(words)) => words,
            _ => &[],
        }
    }

    /// The words as typed (full-width forms kept: a name is never narrowed into another
    /// one) from the `i`th value's on; none if it was left out.
    pub fn typed_from(&self, i: usize) -> &[String] {
        match self.values.get(i) {
            Some((_, Value::Absent)) | None => &[],
            Some((at, _)) => self.words.get(*at..).unwrap_or_default(),
        }
    }

    /// Every `Player` value, to resolve: what it names and the id it holds.
    pub fn players_mut(&mut self) -> impl Iterator<Item = (PlayerArgument, &mut PlayerId)> {
        self.values.iter_mut().filter_map(|(_, v)| match v {
            Value::Player(kind, id) => Some((*kind, id)),
            _ => None,
        })
    }

    /// True when it only asks (see [`Query`]).
    pub fn is_query(&self) -> bool {
        match self.command.query {
            Query::No => false,
            Query::Yes => true,
            Query::Unless(words) => match self.values.first() {
                None | Some((_, Value::Absent)) => true,
                Some((at, _)) => self
                    .words
                    .get(*at)
                    .is_some_and(|w| words.iter().any(|x| narrow(w).eq_ignore_ascii_case(x))),
            },
        }
    }

    /// The command as a journal keeps it ([`Kept`]).
    pub fn kept(&self) -> Kept {
        Kept { name: self.command.name.to_owned(), words: self.words.clone(), values: self.values.clone() }
    }

    /// A kept command, restored against `commands` (the game's declarations); `None` when
    /// none of them has its name.
    pub fn restore(commands: &'static [Command], kept: &Kept) -> Option<Parsed> {
        let command = commands.iter().find(|c| c.name == kept.name)?;
        Some(Parsed { command, words: kept.words.clone(), values: kept.values.clone() })
    }

    /// The words as typed, with each player named by the id it holds (`bend 2 irc:bob`):
    /// what the daemon journals beside the [`Kept`] command (a journal from before that
    /// is read through the grammar again on replay).
    pub fn text(&self) -> String {
        let mut words = self.words.clone();
        for (at, value) in &self.values {
            if let (Value::Player(_, id), Some(word)) = (value, words.get_mut(*at)) {
                id.as_str().clone_into(word);
            }
        }
        words.join(" ")
    }
}
