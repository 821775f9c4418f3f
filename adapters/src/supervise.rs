//! What every transport's supervisor shares: the connection state it publishes, the
//! reconnect backoff, and [`restarting`], which runs the supervisor again when it ends or
//! panics while the daemon runs, so that a network never goes deaf with `/healthz` saying
//! all is well.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use spellbridge_core::NetworkId;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// Where a transport's connection stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Connection {
    /// Connecting, logging in, or waiting to reconnect.
    Down,
    /// Connected and ready: messages can be sent.
    Up,
    /// Not playing: a login is required and the last connection did not log in (it is
    /// retried with backoff).
    LoggedOut,
    /// Shut down for good.
    Closed,
}

/// The wait before reconnect attempt `attempt` (from 1): `first`, doubling on each
/// failure up to `most`, with ±25% jitter so reconnecting bots spread out.
pub fn backoff((first, most): (Duration, Duration), attempt: u32, network: &NetworkId) -> Duration {
    let exponent = attempt.saturating_sub(1).min(16);
    let base = first.saturating_mul(1 << exponent).min(most);
    // Jitter from the clock and the network name.
    let seed = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos())
        ^ network.as_str().bytes().fold(0u32, |h, b| h.rotate_left(5) ^ u32::from(b));
    let fraction = f64::from(seed % 1000) / 1000.0; // 0 ..< 1
    base.mul_f64(0.75 + fraction * 0.5)
}

/// What [`restarting`] keeps up to date while a supervisor is down: the connection state
/// `/healthz` and the metrics read, and the count of reconnections.
pub struct Watched<'a> {
    /// The network, for the log.
    pub network: &'a NetworkId,
    /// Set to [`Connection::Down`] when the supervisor ends early; it says
    /// [`Connection::Up`] itself once it is connected again.
    pub connection: &'a watch::Sender<Connection>,
    /// Counts each restart as a reconnection.
    pub reconnects: &'a AtomicU64,
    /// The reconnect backoff's first and longest wait.
    pub backoff: (Duration, Duration),
}

/// Runs the supervisor `supervisor()` makes as a task of its own until `stop` is
/// cancelled. A supervisor returns only when `stop` is cancelled; when it returns before,
/// or panics, that is a bug: it is logged as an ERROR, the network is shown down, and a
/// new supervisor is made and started after the reconnect backoff (a supervisor that
/// keeps failing is started less and less often).
pub async fn restarting<F>(watched: Watched<'_>, stop: CancellationToken, mut supervisor: impl FnMut() -> F)
where
    F: Future<Output = ()> + Send + 'static,
{
    let network = watched.network;
    let mut attempt = 0;
    loop {
        let ended = tokio::spawn(supervisor()).await;
        if stop.is_cancelled() {
            return;
        }
        match ended {
            Err(error) if error.is_panic() => {
                tracing::error!(network = %network, "the transport's supervisor panicked; starting it again");
            }
            _ => tracing::error!(network = %network, "the transport's supervisor ended; starting it again"),
        }
        watched.connection.send_replace(Connection::Down);
        attempt += 1;
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(backoff(watched.backoff, attempt, network)) => {}
        }
        watched.reconnects.fetch_add(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    /// Issue 32, item 4: a supervisor that panics, then one that returns early, are each
    /// started again after the backoff, the network shown down meanwhile and each restart
    /// counted; once `stop` is cancelled, a supervisor that returns is not started again.
    #[tokio::test]
    async fn a_supervisor_that_panics_or_ends_early_is_started_again() {
        let network = NetworkId::new("irc");
        let (connection, mut seen) = watch::channel(Connection::Up);
        let reconnects = AtomicU64::new(0);
        let stop = CancellationToken::new();
        let started = Arc::new(AtomicU64::new(0));
        let running = {
            let stop = stop.clone();
            let started = started.clone();
            move || {
                let stop = stop.clone();
                let number = started.fetch_add(1, Ordering::Relaxed) + 1;
                async move {
                    match number {
                        1 => panic!("a bug in the supervisor"),
                        2 => {}
                        _ => stop.cancelled().await,
                    }
                }
            }
        };
        let watched = Watched {
            network: &network,
            connection: &connection,
            reconnects: &reconnects,
            backoff: (Duration::from_millis(10), Duration::from_millis(50)),
        };
        let supervising = restarting(watched, stop.clone(), running);
        tokio::pin!(supervising);
        let third = async {
            while started.load(Ordering::Relaxed) < 3 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        };
        tokio::select! {
            () = &mut supervising => panic!("returned before stop"),
            waited = tokio::time::timeout(Duration::from_secs(5), third) => {
                waited.expect("a third supervisor within 5 s");
            }
        }
        assert_eq!(
            started.load(Ordering::Relaxed),
            3,
            "started again after the panic and after the early end"
        );
        assert_eq!(reconnects.load(Ordering::Relaxed), 2);
        assert!(seen.has_changed().unwrap_or(false), "the network was shown down");
        assert_eq!(*seen.borrow_and_update(), Connection::Down);
        stop.cancel();
        tokio::time::timeout(Duration::from_secs(1), supervising).await.expect("returns once stopped");
        assert_eq!(started.load(Ordering::Relaxed), 3, "not started again after stop");
    }

    #[test]
    fn backoff_grows_to_its_cap_with_bounded_jitter() {
        let network = NetworkId::new("matrix");
        let limits = (Duration::from_millis(200), Duration::from_secs(5));
        for attempt in 1..40 {
            let delay = backoff(limits, attempt, &network);
            let base = Duration::from_millis(200)
                .saturating_mul(1 << attempt.saturating_sub(1).min(16))
                .min(limits.1);
            assert!(delay >= base.mul_f64(0.75) && delay <= base.mul_f64(1.25), "{attempt}: {delay:?}");
        }
    }
}
