//! Board pictures: a table's public state drawn as SVG in code (`duel`, `thaum`, on the
//! small writer in `svg` with the colours of `palette`) and rasterised to PNG (`raster`)
//! with the font shipped in the binary (`font`), with no browser and no system fonts.
//!
//! The input is a table's entry of the public snapshot ([`Router::table_snapshot`], the
//! CONTRACT.md `--state-json` form: `game` and `state`), never a game's internals, and the
//! boards draw only what the room was told: a Duel spell appears once its round settled.
//! `post` says when a picture is posted and draws it off the daemon's loop for the
//! Matrix rooms that show it.
//!
//! [`Router::table_snapshot`]: crate::router::Router::table_snapshot

pub mod duel;
pub mod font;
pub mod palette;
pub mod post;
pub mod raster;
pub mod svg;
pub mod thaum;

use serde_json::Value;
use spellbridge_core::Language;
use spellbridge_core::locale::{self, Args};

pub use raster::{Picture, Rasteriser};

/// A label drawn in a picture, in `language` (`locales/*/board.ftl`, `board-label-…`).
pub(crate) fn label(language: Language, id: &str, args: Args) -> String {
    locale::text(language, id, &args)
}

/// Why a board could not be drawn.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum BoardError {
    /// The table's game has no board.
    #[error("there is no board picture for the game `{0}`; boards are drawn for duel and thaum tables")]
    UnknownGame(String),
    /// The snapshot's state does not read as that game's.
    #[error("the {game} table's state cannot be drawn: {reason}")]
    BadState {
        /// The game.
        game: String,
        /// What was wrong.
        reason: String,
    },
    /// The SVG did not parse (a bug in the board's writer).
    #[error("the board's SVG does not parse: {0}")]
    Svg(String),
    /// The picture could not be rendered or encoded.
    #[error("the board could not be rendered to PNG: {0}")]
    Raster(String),
}

/// The SVG of a table's board, from its public snapshot entry (`game`, `state`),
/// labelled in English.
pub fn svg(table: &Value) -> Result<String, BoardError> {
    svg_in(table, Language::En)
}

/// The SVG of a table's board, labelled in `language` (`locales/*/board.ftl`).
pub fn svg_in(table: &Value, language: Language) -> Result<String, BoardError> {
    let game = table.get("game").and_then(Value::as_str).unwrap_or_default();
    let state = table.get("state").unwrap_or(&Value::Null);
    let drawn = match game {
        "duel" => duel::svg_in(state, language),
        "thaum" => thaum::svg_in(state, language),
        other => return Err(BoardError::UnknownGame(other.to_owned())),
    };
    drawn.map_err(|reason| BoardError::BadState { game: game.to_owned(), reason })
}

/// Draws boards: [`Board::svg`] rasterised with the shipped font.
#[derive(Default)]
pub struct Board {
    rasteriser: Rasteriser,
}

impl Board {
    /// A board drawer (loads the shipped font once).
    pub fn new() -> Board {
        Board { rasteriser: Rasteriser::new() }
    }

    /// The PNG of a table's board, from its public snapshot entry.
    pub fn png(&self, table: &Value) -> Result<Picture, BoardError> {
        self.rasteriser.png(&svg(table)?)
    }

    /// The PNG of a table's board, labelled in `language`.
    pub fn png_in(&self, table: &Value, language: Language) -> Result<Picture, BoardError> {
        self.rasteriser.png(&svg_in(table, language)?)
    }

    /// The rasteriser, for pictures of other SVGs.
    pub fn rasteriser(&self) -> &Rasteriser {
        &self.rasteriser
    }
}

#[cfg(test)]
mod tests;
