//! What a spectator reads first about a table, as data: a few labelled [`Fact`]s and
//! perhaps one [`Grid`] (a row per player). A game gives them for a table's public view
//! ([`GamePlugin::facts`](crate::plugin::GamePlugin::facts)), in the page's language; the
//! daemon's site writes them as HTML, whatever the game. Pure data.

use serde::{Deserialize, Serialize};

/// The facts of a table, in the order they are shown.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Facts {
    /// Labelled facts (the track, the round; a player and their pool).
    pub facts: Vec<Fact>,
    /// A table of rows under them, if the game has one.
    pub grid: Option<Grid>,
}

/// One labelled fact.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fact {
    /// Its label, shown in bold.
    pub label: String,
    /// What it says.
    pub body: Vec<Bit>,
}

impl Fact {
    /// A fact that is one text.
    pub fn text(label: impl Into<String>, text: impl Into<String>) -> Fact {
        Fact { label: label.into(), body: vec![Bit::Text(text.into())] }
    }
}

/// A piece of a fact's body.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bit {
    /// Plain text.
    Text(String),
    /// A symbol (an element's name or glyph) with a longer name shown on hover.
    Glyph {
        /// What is shown.
        text: String,
        /// What hovering shows.
        title: String,
    },
    /// A short status tag; `live` marks one that is happening now.
    Tag {
        /// What it says.
        text: String,
        /// Whether it is lit.
        live: bool,
    },
    /// A line break.
    Break,
}

/// A table: its columns' headings and its rows, each a text per column.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grid {
    /// The columns.
    pub columns: Vec<Column>,
    /// The rows.
    pub rows: Vec<Vec<String>>,
}

/// A column's heading, and whether it holds numbers (set right).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Column {
    /// The heading.
    pub label: String,
    /// True for a column of numbers.
    pub numeric: bool,
}

impl Column {
    /// A column of words.
    pub fn words(label: impl Into<String>) -> Column {
        Column { label: label.into(), numeric: false }
    }

    /// A column of numbers.
    pub fn numbers(label: impl Into<String>) -> Column {
        Column { label: label.into(), numeric: true }
    }
}

/// A JSON value as a fact shows it: a string as it is, nothing for null, anything else
/// as JSON.
pub fn shown(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(text) => text.clone(),
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    }
}
