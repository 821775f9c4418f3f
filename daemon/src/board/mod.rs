//! Board pictures: each game draws its table's board in core's drawing vocabulary
//! ([`GamePlugin::board`]), written as SVG here (`svg`) and rasterised to PNG (`raster`)
//! with the font shipped in the binary (`font`), with no browser and no system fonts.
//!
//! The input is a table's entry of the public snapshot ([`Router::table_snapshot`], the
//! CONTRACT.md `--state-json` form: `game` and `state`). Its state is first passed
//! through the game's [`GamePlugin::public_view`], so a board draws only what the room
//! was told (a Duel spell appears once its round settled), whatever the entry holds.
//! `post` says when a picture is posted and draws it off the daemon's loop for the
//! Matrix rooms that show it. No game is named here: a game that draws a board gets
//! pictures.
//!
//! [`Router::table_snapshot`]: crate::router::Router::table_snapshot
//! [`GamePlugin::board`]: spellbridge_core::GamePlugin::board
//! [`GamePlugin::public_view`]: spellbridge_core::GamePlugin::public_view

pub mod font;
pub mod post;
pub mod raster;
pub mod svg;

use serde_json::Value;
use spellbridge_core::locale::{self, Args};
use spellbridge_core::{GamePlugin, Language, Registry};

use crate::games::Games;

pub use raster::{Picture, Rasteriser};

/// Why a board could not be drawn.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum BoardError {
    /// The table's game has no board.
    #[error("there is no board picture for the game `{0}`: it draws none")]
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

/// Draws boards: each game's drawing of its table's public view, as SVG, rasterised with
/// the shipped font. The games are the shared [`Games`] (a component added by SIGHUP is
/// drawn at once); a table of an older build of a component is drawn by that build.
pub struct Board {
    games: Games,
    rasteriser: Rasteriser,
}

impl Default for Board {
    fn default() -> Self {
        Board::new()
    }
}

impl Board {
    /// A board drawer for the games that ship with spellbridge (loads the shipped font
    /// once).
    pub fn new() -> Board {
        Board::of(Registry::standard())
    }

    /// A board drawer for the games of `registry`.
    pub fn of(registry: Registry) -> Board {
        Board::over(Games::new(registry))
    }

    /// A board drawer for the games `games` holds at each drawing.
    pub fn over(games: Games) -> Board {
        Board { games, rasteriser: Rasteriser::new() }
    }

    /// `work` with the game of a table's entry (the build its state names:
    /// [`crate::games::played`]) and its state's public view (`Null` for a game that
    /// shows none).
    fn with_public<T>(&self, table: &Value, work: impl FnOnce(Option<&dyn GamePlugin>, Value) -> T) -> T {
        let registry = self.games.now();
        let game = table.get("game").and_then(Value::as_str).unwrap_or_default();
        let state = table.get("state").unwrap_or(&Value::Null);
        let plugin = crate::games::played(&registry, game, state);
        let public = plugin.as_ref().and_then(|p| p.public_view(state)).unwrap_or(Value::Null);
        work(plugin.as_deref(), public)
    }

    /// The SVG of a table's board, from its public snapshot entry (`game`, `state`),
    /// labelled in English.
    pub fn svg(&self, table: &Value) -> Result<String, BoardError> {
        self.svg_in(table, Language::En)
    }

    /// The SVG of a table's board, labelled in `language` (`locales/*/board.ftl`).
    pub fn svg_in(&self, table: &Value, language: Language) -> Result<String, BoardError> {
        self.with_public(table, |plugin, public| Board::drawn(table, plugin, &public, language))
    }

    /// The SVG of a table's board drawn by `plugin` (the game playing it, which the
    /// caller found), from an entry whose state is its public view already.
    pub fn svg_by(
        &self,
        plugin: &dyn GamePlugin,
        table: &Value,
        language: Language,
    ) -> Result<String, BoardError> {
        let public = table.get("state").and_then(|state| plugin.public_view(state)).unwrap_or(Value::Null);
        Board::drawn(table, Some(plugin), &public, language)
    }

    /// The PNG of [`Board::svg_by`].
    pub fn png_by(
        &self,
        plugin: &dyn GamePlugin,
        table: &Value,
        language: Language,
    ) -> Result<Picture, BoardError> {
        self.rasteriser.png(&self.svg_by(plugin, table, language)?)
    }

    fn drawn(
        table: &Value,
        plugin: Option<&dyn GamePlugin>,
        public: &Value,
        language: Language,
    ) -> Result<String, BoardError> {
        let asked = table.get("game").and_then(Value::as_str).unwrap_or_default();
        let game = plugin.map_or("", |p| p.name());
        match plugin.and_then(|p| p.board(public, language)) {
            None => Err(BoardError::UnknownGame(asked.to_owned())),
            Some(Err(reason)) => Err(BoardError::BadState { game: game.to_owned(), reason }),
            Some(Ok(drawing)) => Ok(svg::write(&drawing)),
        }
    }

    /// The PNG of a table's board, from its public snapshot entry.
    pub fn png(&self, table: &Value) -> Result<Picture, BoardError> {
        self.rasteriser.png(&self.svg(table)?)
    }

    /// The PNG of a table's board, labelled in `language`.
    pub fn png_in(&self, table: &Value, language: Language) -> Result<Picture, BoardError> {
        self.rasteriser.png(&self.svg_in(table, language)?)
    }

    /// The text a picture is sent with, for clients that show no images (Matrix `body`),
    /// in the room's `language`, from the table's public snapshot entry: only what the
    /// room was told (the game's [`GamePlugin::caption`] of its public view).
    pub fn caption(&self, table: &Value, language: Language) -> String {
        let id = table.get("table").and_then(Value::as_u64).unwrap_or_default();
        let asked = table.get("game").and_then(Value::as_str).unwrap_or_default();
        let captioned =
            self.with_public(table, |plugin, public| plugin.and_then(|p| p.caption(id, &public, language)));
        captioned.unwrap_or_else(|| {
            let args = Args::new().text("game", asked).text("table", id.to_string());
            locale::text(language, "board-other", &args)
        })
    }

    /// The rasteriser, for pictures of other SVGs.
    pub fn rasteriser(&self) -> &Rasteriser {
        &self.rasteriser
    }
}

#[cfg(test)]
mod tests;
