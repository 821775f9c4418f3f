//! A standby: a second daemon on the same PostgreSQL, with the same config, that finds
//! the lease held. It connects to the database only (no network, no appservice
//! transaction), keeps its tables warm by following the journal, and takes the lease
//! over once its holder stops renewing it.
//!
//! Following is polling by row id ([`FOLLOW_EVERY`]), not LISTEN/NOTIFY: one indexed
//! query per tick costs little, works through a transaction-mode connection pooler
//! (where LISTEN does not), and cannot stall on a notification lost with a broken
//! connection. Each new row is replayed onto the standby's router exactly as start-up
//! replays the journal (`Router::replay`, dice keys first).
//!
//! On take-over the lease is already the standby's, so the old leader's commits are
//! fenced and the journal's tail is final: the follower reads it, then what start-up
//! loads beside the tables (`Store::load_beside_tables`: ratings, relayed lines, names). If it missed a row (its count differs from the
//! journal's) or a row would not replay, the router is rebuilt from the whole journal.

use std::time::Duration;

use spellbridge_core::Registry;
use tokio_util::sync::CancellationToken;

use super::{Fence, Lease, Term};
use crate::config::Settings;
use crate::metrics::{Health, Role};
use crate::router::{Router, RouterConfig};
use crate::store::postgres::StoreUrl;
use crate::store::{Store, StoreError};

/// How often a standby reads the journal's new rows and tries the lease (at most; a
/// shorter renewal interval is used when configured).
pub const FOLLOW_EVERY: Duration = Duration::from_millis(500);

/// Journal rows read at once.
const PAGE: i64 = 1000;

/// The standby's copy of the tables, kept up with the journal.
pub struct Follower {
    store: Store,
    router: Router,
    registry: Registry,
    options: RouterConfig,
    /// The id of the last row replayed.
    last: i64,
    /// How many rows were replayed.
    applied: usize,
    /// A row would not replay: the take-over rebuilds from the whole journal.
    broken: bool,
}

impl Follower {
    /// Starts following the journal in `store` (opened without a fence: it reads only).
    pub fn start(store: Store, registry: Registry, options: RouterConfig) -> Follower {
        let router = Router::new(registry.clone(), options.clone());
        Follower { store, router, registry, options, last: 0, applied: 0, broken: false }
    }

    /// Replays the rows committed since the last call; how many.
    pub fn follow(&mut self) -> Result<usize, StoreError> {
        let mut count = 0;
        while !self.broken {
            let rows = self.store.journal_after(self.last, PAGE)?;
            if rows.is_empty() {
                break;
            }
            // The rows first, then the keys: a row's dice key is committed with it or before.
            self.router.add_keys(self.store.dice_keys(None)?);
            for (id, entry) in &rows {
                if let Err(error) = self.router.replay(entry) {
                    tracing::error!(row = id, %error, "a journal row does not replay on the standby; it rebuilds from the whole journal when it takes over");
                    self.broken = true;
                    break;
                }
                self.last = *id;
                self.applied += 1;
                count += 1;
            }
        }
        Ok(count)
    }

    /// The id of the last journal row replayed.
    pub fn last(&self) -> i64 {
        self.last
    }

    /// Takes over: commits under `fence` from now on, reads the journal's tail and returns
    /// the store and the tables as start-up would have loaded them.
    pub fn take_over(mut self, fence: Fence) -> Result<(Store, Router), StoreError> {
        self.store.set_fence(fence);
        let tail = self.follow()?;
        let journal = self.store.journal()?;
        if self.broken || journal.len() != self.applied {
            tracing::warn!(
                followed = self.applied,
                journal = journal.len(),
                "the standby's tables differ from the journal: rebuilding them from the whole journal"
            );
            let router = self.store.load(self.registry, self.options)?;
            return Ok((self.store, router));
        }
        self.store.load_beside_tables(&mut self.router)?;
        tracing::info!(rows = self.applied, tail, "the standby's tables are up to date with the journal");
        Ok((self.store, self.router))
    }
}

/// Stands by until the lease is free, then takes it: follows the journal meanwhile (its
/// router made with `options`) and says `"role": "standby"` in `health`. `None` when
/// `shutdown` came first.
pub async fn stand_by(
    lease: &mut Lease,
    url: &StoreUrl,
    settings: &Settings,
    options: RouterConfig,
    health: &Health,
    shutdown: &CancellationToken,
) -> anyhow::Result<Option<(Term, Follower)>> {
    health.set_role(Role::Standby);
    let held = lease.current().await?;
    tracing::warn!(
        holder = %held.holder,
        epoch = %held.epoch,
        database = %url,
        "standing by: another daemon leads on this database; following its journal until its lease runs out"
    );
    let opening = url.clone();
    let store = tokio::task::spawn_blocking(move || Store::open_postgres(&opening, None)).await??;
    let mut follower = Follower::start(store, settings.registry(), options);
    let every = FOLLOW_EVERY.min(lease.settings().renew_every());
    let mut failing = false;
    loop {
        match follower.follow() {
            Ok(rows) => {
                if rows > 0 {
                    tracing::debug!(rows, last = follower.last(), "the standby followed the journal");
                }
                failing = false;
            }
            Err(error) if !failing => {
                tracing::warn!(%error, "the standby cannot read the journal; it tries again");
                failing = true;
            }
            Err(_) => {}
        }
        match lease.acquire().await {
            Ok(Some(term)) => {
                tracing::warn!(epoch = %term.epoch, "the lease ran out: this standby takes over");
                return Ok(Some((term, follower)));
            }
            Ok(None) => {}
            Err(error) => tracing::warn!(%error, "the standby cannot read the lease; it tries again"),
        }
        tokio::select! {
            () = shutdown.cancelled() => return Ok(None),
            () = tokio::time::sleep(every) => {}
        }
    }
}
