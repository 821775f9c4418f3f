//! `spellbridge run`: the network daemon. One loop owns the router and the store; each
//! network's transport runs as a supervised task that reconnects by itself.
//!
//! The loop takes inbound messages in batches (whatever has arrived, up to
//! [`BATCH`]), drops redeliveries, lets the router handle the rest, commits the whole
//! batch in one transaction (group commit), and only then hands the outbound messages to
//! each network's courier. A courier sends its network's messages in order, retrying
//! while the network is down, and reports each one sent so the loop can delete it from
//! the outbox. Timers fire through the same path. On SIGTERM or SIGINT the loop stops
//! taking messages, gives the couriers a moment to drain, and the transports say QUIT.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use spellbridge_adapters::irc::options::IrcOptions;
use spellbridge_adapters::irc::transport::IrcTransport;
use spellbridge_adapters::matrix::options::{Login, MatrixOptions};
use spellbridge_adapters::matrix::transport::MatrixTransport;
use spellbridge_core::{GameTransport, Inbound, NetworkId, RichText, Timestamp, TransportError};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::config::{IrcSettings, MatrixLogin, MatrixSettings, Settings};
use crate::router::{Outbound, Router, RouterOptions};
use crate::store::{MessageKey, OpenMode, Queued, Step, Store};

/// The most inbound messages committed together.
const BATCH: usize = 256;
/// How long shutdown waits for the couriers to send what is queued.
const DRAIN: Duration = Duration::from_secs(5);

/// The current time as a game [`Timestamp`].
pub fn now() -> Timestamp {
    let seconds =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    Timestamp(i64::try_from(seconds).unwrap_or(i64::MAX))
}

/// The transport options for one configured IRC network.
pub fn irc_options(settings: &IrcSettings, prefix: &str) -> IrcOptions {
    IrcOptions {
        network: NetworkId::new(settings.name.clone()),
        server: settings.server.clone(),
        port: settings.port,
        tls: settings.tls,
        nicks: settings.nicks.clone(),
        username: settings.username.clone(),
        realname: settings.realname.clone(),
        password: settings.password.as_ref().map(|s| s.expose().to_owned()),
        sasl: settings
            .sasl
            .as_ref()
            .map(|(account, password)| (account.clone(), password.expose().to_owned())),
        channels: settings.channels.clone(),
        require_account: settings.require_account,
        rejoin_on_kick: settings.rejoin_on_kick,
        flood: settings.flood,
        user_limit: settings.user_limit,
        prefix: prefix.to_owned(),
        backoff: (settings.reconnect_delay, Duration::from_secs(120).max(settings.reconnect_delay)),
        ping: (Duration::from_secs(120), Duration::from_secs(60)),
    }
}

/// The transport options for one configured Matrix account.
pub fn matrix_options(settings: &MatrixSettings, prefix: &str) -> MatrixOptions {
    let mut options = MatrixOptions::local(
        &settings.name,
        &settings.homeserver,
        &settings.user_id,
        "",
        settings.store.clone(),
    );
    options.login = match &settings.login {
        MatrixLogin::Password(secret) => Login::Password(secret.expose().to_owned()),
        MatrixLogin::AccessToken(secret) => Login::AccessToken(secret.expose().to_owned()),
    };
    options.device_name = settings.device_name.clone();
    options.store_passphrase = settings.store_passphrase.as_ref().map(|s| s.expose().to_owned());
    options.rooms = settings.rooms.clone();
    options.invite_allow = settings.invite_allow.clone();
    options.prefix = prefix.to_owned();
    options.backoff = (settings.reconnect_delay, Duration::from_secs(120).max(settings.reconnect_delay));
    options
}

/// Runs the daemon until `shutdown` is cancelled.
pub async fn run(settings: Settings, shutdown: CancellationToken) -> anyhow::Result<()> {
    let mut store = Store::open(&settings.database, OpenMode::CreateIfMissing, settings.durability)?;
    let options = RouterOptions { prefix: settings.prefix.clone(), master_seed: fresh_seed() };
    let mut router = store.load(settings.registry(), options.clone())?;
    tracing::info!(database = %settings.database.display(), tables = router.table_ids().count(), "store loaded");

    let tasks = TaskTracker::new();
    let transports_stop = CancellationToken::new();
    let (inbound_tx, mut inbound_rx) = mpsc::channel::<Inbound>(4096);
    let (sent_tx, mut sent_rx) = mpsc::unbounded_channel::<i64>();
    let mut couriers: BTreeMap<NetworkId, mpsc::UnboundedSender<Queued>> = BTreeMap::new();
    let mut started: Vec<(Arc<dyn GameTransport>, tokio::task::JoinHandle<()>)> = Vec::new();
    for network in &settings.irc {
        let (transport, supervisor) =
            IrcTransport::start(irc_options(network, &settings.prefix), transports_stop.clone());
        started.push((transport, supervisor));
    }
    for account in &settings.matrix {
        let (transport, supervisor) =
            MatrixTransport::start(matrix_options(account, &settings.prefix), transports_stop.clone());
        started.push((transport, supervisor));
    }
    for (transport, supervisor) in started {
        let network = transport.network().clone();
        tasks.spawn(async move {
            if let Err(error) = supervisor.await {
                tracing::error!(network = %network, %error, "a transport's supervisor task failed");
            }
        });
        tasks.spawn(forward(transport.clone(), inbound_tx.clone(), transports_stop.clone()));
        let (courier_tx, courier_rx) = mpsc::unbounded_channel();
        tasks.spawn(courier(transport.clone(), courier_rx, sent_tx.clone(), transports_stop.clone()));
        couriers.insert(transport.network().clone(), courier_tx);
    }
    drop(inbound_tx);
    tasks.close();

    for queued in store.pending()? {
        dispatch(&couriers, queued);
    }

    loop {
        let timer = router
            .next_timer()
            .map(|at| Duration::from_secs(at.0.saturating_sub(now().0).max(0).unsigned_abs()));
        tokio::select! {
            () = shutdown.cancelled() => break,
            Some(first) = inbound_rx.recv() => {
                let mut batch = vec![first];
                while batch.len() < BATCH {
                    match inbound_rx.try_recv() {
                        Ok(more) => batch.push(more),
                        Err(_) => break,
                    }
                }
                handle_batch(&mut store, &mut router, &settings, &options, &couriers, batch);
            }
            Some(id) = sent_rx.recv() => {
                // Whatever else was reported sent meanwhile goes in the same transaction.
                let mut ids = vec![id];
                while let Ok(more) = sent_rx.try_recv() {
                    ids.push(more);
                }
                if let Err(error) = store.sent_all(&ids) {
                    tracing::error!(%error, "could not mark outbox messages sent; they may be sent again after a restart");
                }
            }
            () = sleep_for(timer), if timer.is_some() => {
                let outbound = router.tick(now());
                let step = Step { records: router.take_journal(), outbound, ..Step::default() };
                match store.commit(&router, std::slice::from_ref(&step)) {
                    Ok(queued) => queued.into_iter().for_each(|q| dispatch(&couriers, q)),
                    Err(error) => {
                        tracing::error!(%error, "could not save fired timers; reloading the games from the store");
                        router = store.load(settings.registry(), options.clone())?;
                    }
                }
            }
        }
    }

    tracing::info!("shutting down: sending what is queued");
    drop(couriers);
    let drained = tokio::time::timeout(DRAIN, async {
        while let Some(id) = sent_rx.recv().await {
            let _ = store.sent(id);
        }
    });
    let _ = drained.await;
    transports_stop.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(3), tasks.wait()).await;
    tracing::info!("stopped");
    Ok(())
}

/// Handles a batch of inbound messages and commits it in one transaction.
fn handle_batch(
    store: &mut Store,
    router: &mut Router,
    settings: &Settings,
    options: &RouterOptions,
    couriers: &BTreeMap<NetworkId, mpsc::UnboundedSender<Queued>>,
    batch: Vec<Inbound>,
) {
    let mut seen_here = HashSet::new();
    let mut steps = Vec::with_capacity(batch.len());
    let mut handled = Vec::with_capacity(batch.len());
    for inbound in batch {
        let key = inbound.message_id.clone().map(|id| MessageKey { network: inbound.network.clone(), id });
        if let Some(key) = &key {
            let again =
                !seen_here.insert((key.network.clone(), key.id.clone())) || store.seen(key).unwrap_or(false);
            if again {
                tracing::debug!(network = %key.network, id = %key.id, "redelivered message ignored");
                continue;
            }
        }
        tracing::debug!(network = %inbound.network, room = %inbound.room, player = %inbound.sender, "message in");
        let outbound = router.handle(&inbound, now());
        steps.push(Step { message: key, records: router.take_journal(), outbound, ..Step::default() });
        handled.push(inbound);
    }
    // A batch that changed nothing (questions such as `!status`, refusals) has nothing
    // to keep: it is answered at once, without the outbox's fsync. Its message ids are not
    // recorded either, so a redelivered question may be answered twice, which is harmless.
    if steps.iter().all(|step| step.records.is_empty()) {
        for step in steps {
            for message in step.outbound {
                dispatch(couriers, Queued { id: -1, outbound: message });
            }
        }
        return;
    }
    match store.commit(router, &steps) {
        Ok(queued) => queued.into_iter().for_each(|q| dispatch(couriers, q)),
        Err(error) => {
            tracing::error!(%error, "could not save a batch of moves; they are undone and the players told");
            match store.load(settings.registry(), options.clone()) {
                Ok(reloaded) => *router = reloaded,
                Err(error) => tracing::error!(%error, "could not reload the games from the store either"),
            }
            for inbound in
                handled.iter().filter(|i| !steps.is_empty() && i.text.starts_with(options.prefix.as_str()))
            {
                let text = RichText::new().mention(&inbound.sender).text(format!(
                    ": that was not taken, because it could not be saved ({error}). Try again in a moment."
                ));
                let to = if inbound.private {
                    spellbridge_core::Destination::Private(inbound.sender.clone())
                } else {
                    spellbridge_core::Destination::Room(inbound.room.clone())
                };
                dispatch(
                    couriers,
                    Queued {
                        id: -1,
                        outbound: Outbound { network: inbound.network.clone(), to, message: text.into() },
                    },
                );
            }
        }
    }
}

fn dispatch(couriers: &BTreeMap<NetworkId, mpsc::UnboundedSender<Queued>>, queued: Queued) {
    match couriers.get(&queued.outbound.network) {
        Some(courier) => {
            let _ = courier.send(queued);
        }
        None => {
            tracing::warn!(network = %queued.outbound.network, "a message for a network that is not configured stays in the outbox")
        }
    }
}

async fn sleep_for(duration: Option<Duration>) {
    if let Some(duration) = duration {
        tokio::time::sleep(duration).await;
    }
}

/// Moves a transport's inbound messages into the daemon's one queue.
async fn forward(transport: Arc<dyn GameTransport>, to: mpsc::Sender<Inbound>, stop: CancellationToken) {
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            message = transport.recv() => match message {
                Some(message) => if to.send(message).await.is_err() { return },
                None => return,
            },
        }
    }
}

/// Sends one network's messages in order; while the network is down it waits and retries,
/// so a disconnect loses nothing. Reports each sent message's outbox id.
async fn courier(
    transport: Arc<dyn GameTransport>,
    mut queue: mpsc::UnboundedReceiver<Queued>,
    sent: mpsc::UnboundedSender<i64>,
    stop: CancellationToken,
) {
    while let Some(queued) = queue.recv().await {
        let mut wait = Duration::from_millis(100);
        loop {
            match transport.send(&queued.outbound.to, &queued.outbound.message).await {
                Ok(()) => {
                    tracing::debug!(network = %transport.network(), to = ?queued.outbound.to, "message out");
                    break;
                }
                Err(TransportError::Disconnected { .. }) => {
                    tokio::select! {
                        () = stop.cancelled() => return,
                        () = tokio::time::sleep(wait) => {}
                    }
                    wait = (wait * 2).min(Duration::from_secs(5));
                }
                Err(error) => {
                    tracing::warn!(%error, "a message was refused by the network and is dropped");
                    break;
                }
            }
        }
        if queued.id >= 0 {
            let _ = sent.send(queued.id);
        }
    }
}

/// A seed for new tables' seeds (each table's own seed is stored with it).
fn fresh_seed() -> u64 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(std::time::SystemTime::now())
}
