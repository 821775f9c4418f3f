//! What `spellbridge run` does with its store: with `[store] path`, opens SQLite; with
//! `[store] url`, takes the lease (one active daemon per database), keeps it renewed, and
//! opens the PostgreSQL store under its fence. When leadership is lost the daemon stops
//! (its shutdown token is cancelled); the fence already refuses any commit it still tries.
//! A second daemon finds the lease held and refuses to start (the standby that waits for
//! it is not built yet).

use tokio_util::sync::CancellationToken;

use super::{Holder, Keeper, Leadership, Lease, LeaseSettings, keep};
use crate::config::Settings;
use crate::store::{OpenMode, Store};

/// The store `spellbridge run` uses, and the keeper of its lease on PostgreSQL (dropping
/// it stops the renewals; [`Keeper::release`] frees the lease on a clean shutdown).
pub struct Opened {
    /// The store.
    pub store: Store,
    /// The lease's keeper, on PostgreSQL.
    pub keeper: Option<Keeper>,
}

/// Opens the store `settings` name; on PostgreSQL, leads first, and cancels `shutdown`
/// once leadership is lost.
pub async fn open_store(settings: &Settings, shutdown: &CancellationToken) -> anyhow::Result<Opened> {
    let Some(url) = settings.postgres.clone() else {
        let store = Store::open(&settings.database, OpenMode::CreateIfMissing, settings.durability)?;
        return Ok(Opened { store, keeper: None });
    };
    let holder = Holder::generate();
    let mut lease = Lease::open(url.secret(), holder.clone(), LeaseSettings::default()).await?;
    let Some(term) = lease.acquire().await? else {
        let held = lease.current().await?;
        anyhow::bail!(
            "{url}: another daemon leads on this database ({}, epoch {}); stop it first, or give this \
             one its own database (standby daemons are not built yet)",
            held.holder,
            held.epoch
        );
    };
    let epoch = term.epoch;
    let keeper = keep(lease, term);
    let fence = keeper.fence().clone();
    let opening = url.clone();
    let store = tokio::task::spawn_blocking(move || Store::open_postgres(&opening, Some(fence))).await??;
    let mut leadership = keeper.leadership();
    let stop = shutdown.clone();
    tokio::spawn(async move {
        while leadership.changed().await.is_ok() {
            let now = leadership.borrow().clone();
            if let Leadership::Lost { epoch, loss } = now {
                tracing::error!(%epoch, ?loss, "leadership lost: this daemon stops acting and shuts down");
                stop.cancel();
                break;
            }
        }
    });
    tracing::info!(%holder, %epoch, database = %url, "leading on PostgreSQL");
    Ok(Opened { store, keeper: Some(keeper) })
}
