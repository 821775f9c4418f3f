//! The task that keeps a lease: it renews every `renew_every` and puts
//! [`Leadership::Lost`] on a watch channel the moment leadership is gone, so that the
//! daemon can stop acting at once (drop its connections, answer nothing).
//!
//! Lost means one of:
//! - a renewal reached the database and found a newer epoch ([`Loss::Superseded`]) or the
//!   lease run out ([`Loss::Lapsed`]);
//! - no renewal succeeded in time: the keeper's own deadline, `ttl - renew_every` after
//!   the last successful renewal was *sent*, passed ([`Loss::Lapsed`]). The database's
//!   `now()` for that renewal was no earlier than its sending, so this deadline falls
//!   `renew_every` before any standby can take the lease: the old leader stops first.
//!   A renewal that fails (PostgreSQL restarting, a broken connection) is tried again,
//!   on a new connection, until that deadline; a process paused past it (SIGSTOP, a VM
//!   frozen) reports the loss as soon as it runs again, before anything else it does
//!   can reach the database, whose fence refuses it anyway.
//!
//! The keeper never takes the lease back by itself: after a loss the daemon decides
//! (stand down, then contend again as a standby).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;
use tokio::time::{Instant, sleep_until, timeout_at};

use super::{Epoch, Fence, Lease, LeaseError, Renewal, Tenure, Term};

/// Whether this daemon leads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Leadership {
    /// It holds the lease under this epoch.
    Leading {
        /// The tenure's epoch.
        epoch: Epoch,
    },
    /// It held the lease under `epoch` and does not any more.
    Lost {
        /// The tenure's epoch.
        epoch: Epoch,
        /// Why.
        loss: Loss,
    },
}

impl Leadership {
    /// True while it leads.
    pub fn is_leading(&self) -> bool {
        matches!(self, Self::Leading { .. })
    }
}

/// Why leadership ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Loss {
    /// Another daemon holds a newer epoch.
    Superseded {
        /// Its epoch.
        by: Epoch,
        /// Its holder name.
        holder: String,
    },
    /// The lease ran out, or no renewal succeeded before it would have.
    Lapsed,
    /// This daemon gave it up ([`Keeper::release`]).
    Released,
}

/// A running keeper. Dropping it stops the renewals (the lease then runs out); on a
/// clean shutdown, [`Keeper::release`] frees it at once.
pub struct Keeper {
    leadership: Arc<watch::Sender<Leadership>>,
    fence: Fence,
    tenure: Tenure,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<Lease>>,
}

/// Starts keeping the lease `term` that `lease` took.
pub fn keep(lease: Lease, term: Term) -> Keeper {
    let leadership = Arc::new(watch::Sender::new(Leadership::Leading { epoch: term.epoch }));
    let fence = lease.fence(term.epoch);
    let grace = lease.settings().ttl() - lease.settings().renew_every();
    let tenure = Tenure::until(term.sent + grace);
    let (stop, stopped) = oneshot::channel();
    let task = tokio::spawn(run(lease, term, Arc::clone(&leadership), tenure.clone(), stopped));
    Keeper { leadership, fence, tenure, stop: Some(stop), task: Some(task) }
}

impl Keeper {
    /// Whether this daemon leads, now and at each change.
    pub fn leadership(&self) -> watch::Receiver<Leadership> {
        self.leadership.subscribe()
    }

    /// The fence of this tenure, for the journal's commits.
    pub fn fence(&self) -> &Fence {
        &self.fence
    }

    /// Until when, by this machine's monotonic clock, this daemon may send and answer:
    /// the keeper's own deadline, ended at once when leadership is lost.
    pub fn tenure(&self) -> &Tenure {
        &self.tenure
    }

    /// Stops renewing and releases the lease (a standby may take it at once). True when it
    /// was still ours to release.
    pub async fn release(mut self) -> Result<bool, LeaseError> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let Some(task) = self.task.take() else { return Ok(false) };
        let Ok(mut lease) = task.await else { return Ok(false) };
        let epoch = self.fence.epoch();
        self.tenure.end();
        let released = lease.release(epoch).await?;
        self.leadership.send_if_modified(|now| {
            if now.is_leading() {
                *now = Leadership::Lost { epoch, loss: Loss::Released };
                true
            } else {
                false
            }
        });
        Ok(released)
    }
}

impl Drop for Keeper {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

/// The renewal loop; gives the lease back when stopped or lost.
async fn run(
    mut lease: Lease,
    term: Term,
    leadership: Arc<watch::Sender<Leadership>>,
    tenure: Tenure,
    mut stopped: oneshot::Receiver<()>,
) -> Lease {
    let settings = lease.settings();
    let renew_every = settings.renew_every();
    // The settings keep renew_every at most a third of ttl, so this is at least 2/3 of it.
    let grace = settings.ttl() - renew_every;
    let retry = renew_every.min(Duration::from_millis(200));
    let epoch = term.epoch;
    let mut deadline = Instant::from_std(term.sent) + grace;
    let mut next = Instant::now() + renew_every;
    let lost = |loss: Loss| {
        tenure.end();
        tracing::warn!(%epoch, ?loss, "leadership lost: this daemon stops acting");
        leadership.send_replace(Leadership::Lost { epoch, loss });
    };
    loop {
        tokio::select! {
            biased;
            _ = &mut stopped => return lease,
            () = sleep_until(next.min(deadline)) => {}
        }
        let sent = Instant::now();
        if sent >= deadline {
            lost(Loss::Lapsed);
            return lease;
        }
        next = sent + renew_every;
        let attempt = tokio::select! {
            biased;
            _ = &mut stopped => return lease,
            attempt = timeout_at(deadline, lease.renew(epoch)) => attempt,
        };
        match attempt {
            Ok(Ok(Renewal::Renewed)) => {
                deadline = sent + grace;
                tenure.extend(deadline.into_std());
            }
            Ok(Ok(Renewal::Lost(loss))) => {
                lost(loss);
                return lease;
            }
            Ok(Err(e)) => {
                tracing::warn!(%epoch, error = %e, "renewing the lease failed; trying again until it would run out");
                next = sent + retry;
            }
            Err(_) => {
                lost(Loss::Lapsed);
                return lease;
            }
        }
    }
}
