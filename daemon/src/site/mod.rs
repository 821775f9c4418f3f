//! The spectator site on the `[http]` listener (issue 18): read-only pages for anyone who
//! wants to follow the games without being in the room.
//!
//! - `/` lists the live tables and the recently finished ones ([`index`]), and follows
//!   `/events` (an `update` whenever a shown table changes) as table pages follow theirs;
//! - `/tables/{id}` shows one table ([`table`]): its board picture, its public state, the
//!   history of accepted actions with each dice seed, the table's dice commitments and,
//!   once revealed, its keys (RULES T-10); a small inline script follows
//!   `/tables/{id}/events` ([`events`], server-sent events: an `update` with the public
//!   state after each committed move, fed by the engine's notices through [`follow`] and
//!   [`feed`]);
//! - `/tables/{id}/board.png` is the board picture ([`picture`], drawn by `crate::board`);
//! - `/leaderboard` ranks the Duel players and the Thaum players ([`leaderboard`], derived
//!   from the journal by `crate::ratings`);
//! - `/rules/{game}` (and `/rules`, every game's) lists a game's rules at hand, one anchor
//!   per rule id ([`rules`]); a rule a history line cites links there;
//! - `/font.otf` is the board font, so the element glyphs show in any browser.
//!
//! What the site reads it reads from the database through its own read-only connection
//! ([`reader`]): only what was committed, never the router's memory. Hidden information
//! never reaches it: every state passes through [`public`] (a Duel's round being cast
//! shows only *whether* each wizard has cast), the history shows a private command only as
//! "sent privately" with what the table was told ([`history`]), and the tables of the rooms
//! in `[http] hidden_rooms` are not shown at all ([`hidden`]; their pages are 404). Pages
//! are HTML written with `maud` (which escapes every value), with no cookies and no
//! external resources, under a Content-Security-Policy that allows only the page's own
//! style and script ([`page`]). Any id that is not a table's plain decimal number is 404
//! ([`routes`]). `?lang=zh-CN` shows a page in Chinese ([`words`]).

pub mod error;
pub mod events;
pub mod feed;
pub mod follow;
pub mod hidden;
pub mod history;
pub mod index;
pub mod kept;
pub mod leaderboard;
pub mod markdown;
pub mod names;
pub mod page;
pub mod picture;
pub mod public;
pub mod reader;
pub mod routes;
pub mod rules;
pub mod shared;
pub mod streams;
pub mod table;
pub mod words;

use hyper::{Method, Response, StatusCode};
use spellbridge_core::Language;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

pub use self::error::SiteError;
pub use self::page::Body;
use self::routes::Route;
pub use self::shared::Site;
use crate::journal::TableId;

/// What the listener asks of the site (the pages and streams it routes to).
impl Site {
    /// Follows the engine's notices of changed tables until `shutdown` (or the engine is
    /// gone), sending each watched table's new public state to its streams.
    pub async fn follow(self, changes: broadcast::Receiver<TableId>, shutdown: CancellationToken) {
        follow::follow(self, changes, shutdown).await;
    }

    /// The answer to `method path?query`, or `None` for a path that is not the site's
    /// (`/healthz`, `/metrics`).
    pub async fn respond(&self, method: &Method, path: &str, query: Option<&str>) -> Option<Response<Body>> {
        let route = routes::route(path)?;
        if route != Route::NotFound && method != Method::GET && method != Method::HEAD {
            return Some(page::plain(StatusCode::METHOD_NOT_ALLOWED, "only GET and HEAD\n"));
        }
        let language = words::language(query);
        Some(match route {
            Route::Index => self.page(language, move |site| index::page(site, language)).await,
            Route::Table(id) => self.page(language, move |site| table::page(site, id, language)).await,
            Route::Leaderboard => self.page(language, move |site| leaderboard::page(site, language)).await,
            Route::Board(id) => picture::answer(self, id, language).await,
            Route::Events(id) => events::answer(self, id).await,
            Route::IndexEvents => events::answer_index(self).await,
            Route::Rules(game) => {
                rules::page(&self.registry(), game, language).unwrap_or_else(|| page::not_found(language))
            }
            Route::Font => page::font(),
            Route::NotFound => page::not_found(language),
        })
    }

    /// Runs a page's reads and rendering off the async threads; `None` from it is a 404.
    async fn page(
        &self,
        language: Language,
        render: impl FnOnce(&Site) -> Result<Option<Response<Body>>, SiteError> + Send + 'static,
    ) -> Response<Body> {
        match self.blocking(render).await {
            Ok(Some(response)) => response,
            Ok(None) => page::not_found(language),
            Err(error) => page::failed(&error),
        }
    }
}

#[cfg(test)]
mod tests;
