//! The spectator site's shared state: [`Site`], a cheap handle whose clones share the
//! database reader, the games (a handle SIGHUP swaps), the hidden rooms, the board and what the site keeps
//! between requests ([`super::kept`]), the feed and the event streams' count. Every page
//! and stream takes a `&Site`; this file imports nothing that takes one, so the site's
//! files never import each other in a circle.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use spellbridge_core::{NetworkId, Registry};

use super::error::SiteError;
use super::feed::Feed;
use super::hidden::Hidden;
use super::kept::{Pages, Pictures, Standings};
use super::reader::Reader;
use super::streams::Streams;
use crate::board::Board;
use crate::games::Games;
use crate::identity::Scope;

/// The spectator site; clones share it.
#[derive(Clone)]
pub struct Site {
    pub(super) inner: Arc<Inner>,
}

pub(super) struct Inner {
    pub(super) reader: Reader,
    pub(super) games: Games,
    pub(super) scopes: BTreeMap<NetworkId, Scope>,
    pub(super) hidden: RwLock<Arc<Hidden>>,
    pub(super) board: Board,
    pub(super) pictures: Pictures,
    pub(super) pages: Pages,
    pub(super) standings: Standings,
    pub(super) feed: Feed,
    pub(super) streams: Streams,
    pub(super) keepalive: Duration,
}

impl Site {
    /// The site over the database at `database` (already opened and brought up to date by
    /// the store), for the games `games` holds (a handle SIGHUP swaps: [`Games`]); ratings count identities as `scopes` say.
    /// At most `max_event_streams` live-update streams, each sent a keep-alive comment
    /// every `keepalive` (less than the listener's idle timeout).
    pub fn open(
        database: &Path,
        games: impl Into<Games>,
        scopes: BTreeMap<NetworkId, Scope>,
        hidden: Hidden,
        max_event_streams: usize,
        keepalive: Duration,
    ) -> Result<Site, SiteError> {
        let games = games.into();
        let reader = Reader::open(database, games.clone())?;
        Ok(Site::over(reader, games, scopes, hidden, max_event_streams, keepalive))
    }

    /// The site over the PostgreSQL database at `url`, as [`Site::open`] over a file.
    pub fn open_postgres(
        url: &crate::store::postgres::StoreUrl,
        games: impl Into<Games>,
        scopes: BTreeMap<NetworkId, Scope>,
        hidden: Hidden,
        max_event_streams: usize,
        keepalive: Duration,
    ) -> Result<Site, SiteError> {
        let games = games.into();
        let reader = Reader::open_postgres(url, games.clone())?;
        Ok(Site::over(reader, games, scopes, hidden, max_event_streams, keepalive))
    }

    fn over(
        reader: Reader,
        games: Games,
        scopes: BTreeMap<NetworkId, Scope>,
        hidden: Hidden,
        max_event_streams: usize,
        keepalive: Duration,
    ) -> Site {
        Site {
            inner: Arc::new(Inner {
                reader,
                board: Board::over(games.clone()),
                games,
                scopes,
                hidden: RwLock::new(Arc::new(hidden)),
                pictures: Pictures::default(),
                pages: Pages::default(),
                standings: Standings::default(),
                feed: Feed::default(),
                streams: Streams::new(max_event_streams),
                keepalive,
            }),
        }
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

    /// Runs `work` on the blocking pool (SQLite reads, drawing).
    pub(super) async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Site) -> Result<T, SiteError> + Send + 'static,
    ) -> Result<T, SiteError> {
        let site = self.clone();
        match tokio::task::spawn_blocking(move || work(&site)).await {
            Ok(done) => done,
            Err(_) => Err(SiteError::Cancelled),
        }
    }

    pub(super) fn reader(&self) -> &Reader {
        &self.inner.reader
    }

    /// The games now (a SIGHUP that adds a `[[game]]` shows it from the next request on).
    pub(super) fn registry(&self) -> Arc<Registry> {
        self.inner.games.now()
    }
}
