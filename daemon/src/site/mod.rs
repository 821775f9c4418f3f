//! The spectator site on the `[http]` listener (issue 18): read-only pages for anyone who
//! wants to follow the games without being in the room.
//!
//! - `/` lists the live tables and the recently finished ones ([`index`]), and follows
//!   `/events` (an `update` whenever a shown table changes) as table pages follow theirs;
//! - `/tables/{id}` shows one table ([`table`]): its board picture, its public state, the
//!   history of accepted actions with each dice seed, the table's dice commitments and,
//!   once revealed, its keys (RULES T-10); a small inline script follows
//!   `/tables/{id}/events` ([`events`], server-sent events: an `update` with the public
//!   state after each committed move, fed by the engine's notices through [`feed`]);
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

pub mod events;
pub mod feed;
pub mod hidden;
pub mod history;
pub mod index;
pub mod leaderboard;
pub mod markdown;
pub mod names;
pub mod page;
pub mod picture;
pub mod public;
pub mod reader;
pub mod routes;
pub mod rules;
pub mod table;
pub mod words;

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::path::Path;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use http_body_util::combinators::UnsyncBoxBody;
use hyper::body::Bytes;
use hyper::{Method, Response, StatusCode};
use spellbridge_core::{Language, NetworkId, Registry};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use self::events::Streams;
use self::feed::Feed;
use self::hidden::Hidden;
use self::reader::Reader;
use self::routes::Route;
use crate::board::Board;
use crate::identity::Scope;
use crate::journal::TableId;

/// The body of every answer the listener gives: whole, or a stream of events.
pub type Body = UnsyncBoxBody<Bytes, Infallible>;

/// Why the site could not answer from the database.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SiteError {
    /// SQLite failed.
    #[error("the site could not read {path}: {source}")]
    Sql {
        /// The database file.
        path: String,
        /// What SQLite said.
        source: rusqlite::Error,
    },
    /// A stored row does not read.
    #[error("the site could not read a stored row: {0}")]
    BadRow(String),
    /// A blocking read was cancelled (the daemon is stopping).
    #[error("the site's read was cancelled")]
    Cancelled,
}

/// The spectator site; clones share it.
#[derive(Clone)]
pub struct Site {
    inner: Arc<Inner>,
}

struct Inner {
    reader: Reader,
    registry: Registry,
    scopes: BTreeMap<NetworkId, Scope>,
    hidden: RwLock<Arc<Hidden>>,
    board: Board,
    pictures: picture::Cache,
    pages: table::Cache,
    standings: leaderboard::Cache,
    feed: Feed,
    streams: Streams,
    keepalive: Duration,
}

impl Site {
    /// The site over the database at `database` (already opened and brought up to date by
    /// the store), for the games of `registry`; ratings count identities as `scopes` say.
    /// At most `max_event_streams` live-update streams, each sent a keep-alive comment
    /// every `keepalive` (less than the listener's idle timeout).
    pub fn open(
        database: &Path,
        registry: Registry,
        scopes: BTreeMap<NetworkId, Scope>,
        hidden: Hidden,
        max_event_streams: usize,
        keepalive: Duration,
    ) -> Result<Site, SiteError> {
        let reader = Reader::open(database, registry.clone())?;
        Ok(Site {
            inner: Arc::new(Inner {
                reader,
                board: Board::of(registry.clone()),
                registry,
                scopes,
                hidden: RwLock::new(Arc::new(hidden)),
                pictures: picture::Cache::default(),
                pages: table::Cache::default(),
                standings: leaderboard::Cache::default(),
                feed: Feed::default(),
                streams: Streams::new(max_event_streams),
                keepalive,
            }),
        })
    }

    /// The keep-alive interval for a listener whose idle timeout is `idle_timeout`: half
    /// of it, between 0.5 s and 15 s.
    pub fn keepalive_for(idle_timeout: Duration) -> Duration {
        (idle_timeout / 2).clamp(Duration::from_millis(500), Duration::from_secs(15))
    }

    /// Which rooms' tables are not shown from now on (SIGHUP).
    pub fn set_hidden(&self, hidden: Hidden) {
        *self.inner.hidden.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(hidden);
        self.inner.standings.clear();
    }

    /// The rooms whose tables are not shown.
    pub fn hidden(&self) -> Arc<Hidden> {
        self.inner.hidden.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Follows the engine's notices of changed tables until `shutdown` (or the engine is
    /// gone), sending each watched table's new public state to its streams.
    pub async fn follow(self, changes: broadcast::Receiver<TableId>, shutdown: CancellationToken) {
        feed::follow(self, changes, shutdown).await;
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
                rules::page(self.registry(), game, language).unwrap_or_else(|| page::not_found(language))
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

    /// Runs `work` on the blocking pool (SQLite reads, drawing).
    async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Site) -> Result<T, SiteError> + Send + 'static,
    ) -> Result<T, SiteError> {
        let site = self.clone();
        match tokio::task::spawn_blocking(move || work(&site)).await {
            Ok(done) => done,
            Err(_) => Err(SiteError::Cancelled),
        }
    }

    fn reader(&self) -> &Reader {
        &self.inner.reader
    }

    fn registry(&self) -> &Registry {
        &self.inner.registry
    }
}

#[cfg(test)]
mod tests;
