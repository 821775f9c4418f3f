//! What `spellbridge run` does with its store: with `[store] path`, opens SQLite; with
//! `[store] url`, takes the lease (one active daemon per database), keeps it renewed, and
//! opens the PostgreSQL store under its fence. A daemon that finds the lease held stands
//! by ([`super::standby`]) and takes over once it runs out.
//!
//! When leadership is lost (a renewal found the lease gone or taken, or none succeeded
//! in time) the tenure ends at once, so nothing more is sent or answered
//! ([`super::Tenure`]), and [`Opened::stood_down`] is cancelled: the daemon drops its
//! connections without draining and exits non-zero, for its supervisor to start it again
//! as a standby.

use tokio_util::sync::CancellationToken;

use super::{Holder, Keeper, Leadership, Lease, Tenure, keep, standby};
use crate::config::Settings;
use crate::metrics::{Health, Role};
use crate::router::{Router, RouterConfig};
use crate::store::{OpenMode, Store};

/// The store `spellbridge run` uses, and the keeper of its lease on PostgreSQL (dropping
/// it stops the renewals; [`Keeper::release`] frees the lease on a clean shutdown).
pub struct Opened {
    /// The store.
    pub store: Store,
    /// The lease's keeper, on PostgreSQL.
    pub keeper: Option<Keeper>,
    /// The tables a standby kept warm, when this daemon took over as one (otherwise
    /// start-up loads them).
    pub warm: Option<Router>,
    /// Until when this daemon may send and answer.
    pub tenure: Tenure,
    /// Cancelled when leadership is lost: the daemon stops acting and exits.
    pub stood_down: CancellationToken,
}

/// Opens the store `settings` name; on PostgreSQL, leads first, standing by (`health`
/// says `"role": "standby"`, its router made with `options`) while another daemon leads.
/// `None` when `shutdown` came while standing by.
pub async fn open_store(
    settings: &Settings,
    options: RouterConfig,
    health: &Health,
    shutdown: &CancellationToken,
) -> anyhow::Result<Option<Opened>> {
    let stood_down = CancellationToken::new();
    let Some(url) = settings.postgres.clone() else {
        let store = Store::open(&settings.database, OpenMode::CreateIfMissing, settings.durability)?;
        return Ok(Some(Opened { store, keeper: None, warm: None, tenure: Tenure::unbounded(), stood_down }));
    };
    let holder = Holder::generate();
    let mut lease = Lease::open(url.secret(), holder.clone(), settings.lease).await?;
    let (term, follower) = match lease.acquire().await? {
        Some(term) => (term, None),
        None => match standby::stand_by(&mut lease, &url, settings, options, health, shutdown).await? {
            Some((term, follower)) => (term, Some(follower)),
            None => return Ok(None),
        },
    };
    let epoch = term.epoch;
    let keeper = keep(lease, term);
    let fence = keeper.fence().clone();
    let (store, warm) = match follower {
        Some(follower) => {
            let (store, router) = follower.take_over(fence)?;
            (store, Some(router))
        }
        None => {
            let opening = url.clone();
            (tokio::task::spawn_blocking(move || Store::open_postgres(&opening, Some(fence))).await??, None)
        }
    };
    let mut leadership = keeper.leadership();
    let (down, health_now) = (stood_down.clone(), health.clone());
    tokio::spawn(async move {
        while leadership.changed().await.is_ok() {
            let now = leadership.borrow().clone();
            if let Leadership::Lost { epoch, loss } = now {
                health_now.set_role(Role::Standby);
                if loss != super::Loss::Released {
                    tracing::error!(%epoch, ?loss, "leadership lost: this daemon stops acting at once, sends nothing more and exits");
                    down.cancel();
                }
                break;
            }
        }
    });
    health.set_role(Role::Active);
    tracing::info!(%holder, %epoch, database = %url, took_over = warm.is_some(), "leading on PostgreSQL: active");
    let tenure = keeper.tenure().clone();
    Ok(Some(Opened { store, keeper: Some(keeper), warm, tenure, stood_down }))
}
