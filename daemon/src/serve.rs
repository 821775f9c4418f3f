//! `spellbridge run`: the network daemon. One loop owns the router and the store; each
//! network's transport runs as a supervised task that reconnects by itself.
//!
//! The loop takes inbound messages in batches (whatever has arrived, up to
//! [`BATCH`]) and gives each batch to the [`Engine`] the console also drives: it drops
//! redeliveries, lets the router handle the rest and commits the whole batch in one
//! transaction (group commit); only then are the outbound messages handed to each
//! network's courier. A courier sends its network's messages in order, retrying
//! while the network is down, and reports each one sent so the loop can delete it from
//! the outbox; game output goes before queued relayed chat ([`crate::courier`]). Timers
//! fire through the same path. Board pictures are drawn by the board painter's own
//! thread from a copy of the table's state and handed to the couriers after the text
//! ([`crate::board::post`]). On SIGTERM or SIGINT the loop stops
//! taking messages, gives the couriers a moment to drain, and the transports say QUIT.
//!
//! On PostgreSQL (`[store] url`) the store opens only once this daemon holds the lease: a
//! daemon that finds it held stands by first (`/healthz` and `/leader` answer meanwhile;
//! no network starts, [`crate::leader::standby`]). One that loses the lease stops at once
//! ([`stand_down`]): no drain, and its couriers ask the lease's end before every send.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use spellbridge_adapters::network::{Ids, Start, Transport};
use spellbridge_adapters::{SeenTransactions, StsPolicies};
use spellbridge_core::{GameTransport, Inbound, Language, NetworkId, RoomId, Timestamp};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::aliases::{self, Aliases, Found, Seen};
use crate::board::post::{Job, Painter};
use crate::config::{HttpSettings, Settings};
use crate::courier;
use crate::engine::{Engine, EngineError, Fate, RegistryFn, Saved};
use crate::games::Games;
use crate::identity::Scope;
use crate::journal::TableId;
use crate::limits::CommandLimit;
use crate::metrics::{ErrorKind, Metrics, watch_connection};
use crate::relay;
use crate::router::{Permissions, RoomMembers, RoomMembersSource, Router, RouterConfig};
use crate::secrets::Secrets;
use crate::site::hidden::Hidden;
use crate::store::appservice_txns::TxnStore;
use crate::store::startup::Policy;
use crate::store::sts::StsStore;
use crate::store::{Queued, Store};

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

/// The game registry as `settings` configure it, for the engine to rebuild the router.
fn registry_of(settings: &Settings) -> RegistryFn {
    let settings = settings.clone();
    Box::new(move || settings.registry())
}

/// Room members as each network's transport knows them.
struct TransportMembers(BTreeMap<NetworkId, Arc<dyn GameTransport>>);

impl RoomMembers for TransportMembers {
    fn is_member(&self, network: &NetworkId, room: &RoomId, name: &str) -> bool {
        self.0.get(network).is_some_and(|transport| transport.is_member(room, name))
    }

    fn named(&self, network: &NetworkId, room: &RoomId, name: &str) -> Vec<spellbridge_core::Member> {
        self.0.get(network).map(|transport| transport.members_named(room, name)).unwrap_or_default()
    }
}

/// The router's config from the config file alone (before any transport runs).
pub fn router_config(settings: &Settings) -> RouterConfig {
    router_config_with(settings, &Aliases::new(), &Transported::default())
}

/// What the running transports tell the router, beside the config file: who is in a
/// bridged room, the form of announcements each network asks for, how its players
/// whisper, and which networks show pictures. Taken once they have started, and kept in
/// every config made after ([`router_config_with`]).
#[derive(Clone, Default)]
pub struct Transported {
    room_members: RoomMembersSource,
    forms: BTreeMap<NetworkId, spellbridge_core::Form>,
    whispers: BTreeMap<NetworkId, spellbridge_core::Whisper>,
    pictures: std::collections::BTreeSet<NetworkId>,
}

impl Transported {
    /// What `transports` say.
    pub fn of(transports: &BTreeMap<NetworkId, Arc<dyn GameTransport>>) -> Transported {
        Transported {
            // The relay asks the transports who is in a bridged room (IRC member lists).
            room_members: RoomMembersSource::new(Arc::new(TransportMembers(transports.clone()))),
            // Each network is sent the form of games' announcements its transport asks for.
            forms: transports.iter().map(|(network, t)| (network.clone(), t.form())).collect(),
            // And told how its players send the bot a private message (`/msg` on IRC).
            whispers: transports.iter().map(|(network, t)| (network.clone(), t.whisper())).collect(),
            // Tables' board pictures go to the networks that show them.
            pictures: transports.iter().filter(|(_, t)| t.shows_pictures()).map(|(n, _)| n.clone()).collect(),
        }
    }
}

/// The router's config: the config file's, with the bridges' aliases that were looked up
/// replaced by their rooms ([`crate::aliases`]), and what the transports tell.
pub fn router_config_with(settings: &Settings, aliases: &Aliases, transported: &Transported) -> RouterConfig {
    let identities = |list: &[(NetworkId, spellbridge_core::PlayerId)]| list.to_vec();
    let Transported { room_members, forms, whispers, pictures } = transported.clone();
    RouterConfig {
        prefix: settings.prefix.clone(),
        secrets: Secrets::Os,
        bridges: aliases::apply(&settings.bridges, aliases)
            .iter()
            .map(|b| relay::Bridge {
                relay_lines: b.relay_lines,
                edits: b.edits,
                speaker_rate: b.speaker_rate,
                ..relay::bridge(&b.name, &b.rooms, b.relay)
            })
            .collect(),
        permissions: Permissions {
            admins: identities(&settings.permissions.admins),
            game_masters: identities(&settings.permissions.game_masters),
        },
        command_limits: command_limits(settings),
        scopes: network_scopes(settings),
        challenge_lifetime: settings.challenge_lifetime,
        room_members,
        forms,
        whispers,
        pictures,
        public_url: settings.public_url.clone(),
        languages: settings.languages.clone(),
    }
}

/// Each network's per-player command limit, from its `user_limit` table.
fn command_limits(settings: &Settings) -> BTreeMap<NetworkId, CommandLimit> {
    settings
        .networks
        .iter()
        .filter_map(|network| {
            let (commands, window) = network.user_limit()?;
            let window_secs = i64::try_from(window.as_secs()).unwrap_or(i64::MAX);
            Some((NetworkId::new(network.name()), CommandLimit { commands: commands as usize, window_secs }))
        })
        .collect()
}

/// How each configured network's identities become player ids: an IRC nick or account
/// names someone only on its network (`libera:alice`); a Matrix id is already global.
pub fn network_scopes(settings: &Settings) -> BTreeMap<NetworkId, Scope> {
    let scope = |ids| match ids {
        Ids::Local => Scope::Network,
        Ids::Global => Scope::Global,
    };
    settings.networks.iter().map(|n| (NetworkId::new(n.name()), scope(n.ids()))).collect()
}

/// The rooms to be in on one network: those configured for it and those of its bridges.
fn rooms_on(settings: &Settings, network: &str, configured: &[String]) -> Vec<String> {
    let mut rooms = configured.to_vec();
    let bridged = settings.bridges.iter().flat_map(|b| b.rooms.iter());
    for (_, room) in bridged.filter(|(n, _)| n.as_str() == network) {
        if !rooms.iter().any(|r| r == room.as_str()) {
            rooms.push(room.as_str().to_owned());
        }
    }
    rooms
}

/// SIGHUP: reads the config again, joins the rooms it adds and leaves those it drops.
/// Networks cannot be added or removed without a restart; a config with errors is
/// refused whole and the running one kept.
fn reload(
    current: &Settings,
    transports: &BTreeMap<NetworkId, Arc<dyn GameTransport>>,
    tasks: &TaskTracker,
) -> Option<Settings> {
    let Some(path) = current.source.clone() else {
        tracing::warn!("SIGHUP ignored: the config was not read from a file");
        return None;
    };
    let reloaded = match Settings::load_with(&path, &current.catalogue) {
        Ok(reloaded) => reloaded,
        Err(error) => {
            tracing::error!(%error, "config not reloaded; the running config stays");
            return None;
        }
    };
    let networks = |settings: &Settings| -> BTreeMap<String, Vec<String>> {
        let rooms =
            |n: &Arc<dyn spellbridge_adapters::network::Network>| rooms_on(settings, n.name(), n.rooms());
        settings.networks.iter().map(|n| (n.name().to_owned(), rooms(n))).collect()
    };
    let (before, after) = (networks(current), networks(&reloaded));
    for (name, rooms) in &after {
        let Some(transport) = transports.get(&NetworkId::new(name.clone())) else {
            tracing::warn!(network = %name, "a network added to the config starts after a restart");
            continue;
        };
        let old = before.get(name).cloned().unwrap_or_default();
        let joins: Vec<String> = rooms.iter().filter(|r| !old.contains(r)).cloned().collect();
        let leaves: Vec<String> = old.iter().filter(|r| !rooms.contains(r)).cloned().collect();
        let transport = transport.clone();
        tasks.spawn(async move {
            for room in joins {
                match transport.join(&RoomId::new(room.clone())).await {
                    Ok(()) => {
                        tracing::info!(network = %transport.network(), %room, "joined (config reloaded)")
                    }
                    Err(error) => {
                        tracing::warn!(network = %transport.network(), %room, %error, "could not join")
                    }
                }
            }
            for room in leaves {
                match transport.leave(&RoomId::new(room.clone())).await {
                    Ok(()) => tracing::info!(network = %transport.network(), %room, "left (config reloaded)"),
                    Err(error) => {
                        tracing::warn!(network = %transport.network(), %room, %error, "could not leave")
                    }
                }
            }
        });
    }
    for name in before.keys().filter(|name| !after.contains_key(*name)) {
        tracing::warn!(network = %name, "a network removed from the config stays connected until a restart");
    }
    if reloaded.database != current.database || reloaded.prefix != current.prefix {
        tracing::warn!("the database and the prefix change only after a restart");
    }
    let components: Vec<String> =
        reloaded.components.iter().map(|c| format!("{} ({})", c.path.display(), c.game.hash())).collect();
    tracing::info!(bridges = reloaded.bridges.len(), ?components, "config reloaded");
    Some(Settings { database: current.database.clone(), prefix: current.prefix.clone(), ..reloaded })
}

/// Runs the daemon until `shutdown` is cancelled, rebuilding from its journal any table
/// whose snapshot does not match it.
pub async fn run(settings: Settings, shutdown: CancellationToken) -> anyhow::Result<()> {
    run_with(settings, Policy::Rebuild, shutdown).await
}

/// Runs the daemon until `shutdown` is cancelled; `policy` says what start-up does with a
/// table whose snapshot does not match its journal (`--strict`: [`Policy::Refuse`]).
/// Rebuilt tables and outbox rows set aside are counted in `spellbridge_errors_total`.
pub async fn run_with(settings: Settings, policy: Policy, shutdown: CancellationToken) -> anyhow::Result<()> {
    let metrics = Metrics::new();
    let tasks = TaskTracker::new();
    // The spectator site hears of each table a commit changed (`Engine::notify_changes`).
    let changes = tokio::sync::broadcast::channel(1024).0;
    // On PostgreSQL `/healthz` and `/leader` answer while the daemon stands by, too; the
    // site on SQLite reads the database file, which the store's opening creates.
    let standing_by = settings.postgres.is_some();
    if standing_by {
        // Not active (`/leader` 503) until the lease is this daemon's.
        metrics.health().set_role(crate::metrics::Role::Standby);
    }
    // The games as the site, the board painter and the router see them: one handle, which
    // SIGHUP swaps for all (a `[[game]]` added by a reload is known everywhere at once).
    let games = Games::new(settings.registry());
    let mut site = None;
    if standing_by && let Some(limits) = settings.http {
        site = start_http(&settings, &games, limits, &metrics, &tasks, &changes, &shutdown).await?;
    }
    let Some(Opened { store, keeper, sts, txns, options, router, pending, tenure, stood_down }) =
        open_store(&settings, policy, &metrics, &shutdown).await?
    else {
        tracing::info!("stopped while standing by");
        tasks.close();
        let _ = tokio::time::timeout(Duration::from_secs(3), tasks.wait()).await;
        return Ok(());
    };
    if !standing_by && let Some(limits) = settings.http {
        site = start_http(&settings, &games, limits, &metrics, &tasks, &changes, &shutdown).await?;
    }
    let transports_stop = CancellationToken::new();
    let (inbound_tx, mut inbound_rx) = mpsc::channel::<(Inbound, Instant)>(4096);
    let (sent_tx, mut sent_rx) = mpsc::unbounded_channel::<i64>();
    // What the couriers learn by sending: relayed lines' ids, private chats opened.
    let (learned_tx, mut learned_rx) = mpsc::unbounded_channel::<courier::Learned>();
    let wiring = Wiring {
        sts,
        txns,
        inbound: inbound_tx,
        sent: sent_tx,
        learned: learned_tx,
        stop: transports_stop.clone(),
        tenure: tenure.clone(),
    };
    let Started { couriers, transports, lookups } = start_networks(&settings, &wiring, &metrics, &tasks);
    let transported = Transported::of(&transports);
    let commits = store.commits();
    let painter = Painter::start(couriers.clone(), metrics.clone(), games.clone());
    let mut engine = Engine::new(router, Some(store), registry_of(&settings), options);
    engine.reconfigure(registry_of(&settings), router_config_with(&settings, &Aliases::new(), &transported));
    // IRC members' comings and goings, shown by the networks that mirror them (a Matrix
    // appservice's ghosts), in the rooms of the bridges as they are now.
    let (bridges_tx, bridges_rx) = tokio::sync::watch::channel(engine.config().bridges.clone());
    crate::mirror::start(&transports, bridges_rx, &tasks, &transports_stop);
    if site.is_some() {
        engine.notify_changes(changes.clone());
    }
    // Only the couriers report sends: once they are done, shutdown's drain ends at once.
    drop(wiring);
    tasks.close();

    metrics.committed(&pending);
    for queued in pending {
        dispatch(&couriers, queued);
    }

    // The bridges' and the hidden rooms' aliases, looked up now and again on every SIGHUP
    // (a new lookup replaces the one before it).
    let (found_tx, mut found_rx) = mpsc::unbounded_channel::<Found>();
    let mut aliases = Aliases::new();
    let mut seen = Seen::new();
    let mut lookup = transports_stop.child_token();
    tasks.spawn(aliases::resolve(
        aliases::names(&settings.bridges, &settings.hidden_rooms),
        lookups.clone(),
        found_tx.clone(),
        lookup.clone(),
    ));

    let mut settings = settings;
    let mut hangup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())?;
    loop {
        let timer = engine
            .router()
            .next_timer()
            .map(|at| Duration::from_secs(at.0.saturating_sub(now().0).max(0).unsigned_abs()));
        tokio::select! {
            biased;
            () = stood_down.cancelled() => return Err(stand_down(&transports_stop)),
            () = shutdown.cancelled() => break,
            Some(()) = hangup.recv() => {
                if let Some(reloaded) = reload(&settings, &transports, &tasks) {
                    lookup.cancel();
                    lookup = transports_stop.child_token();
                    let names = aliases::names(&reloaded.bridges, &reloaded.hidden_rooms);
                    tasks.spawn(aliases::resolve(names, lookups.clone(), found_tx.clone(), lookup.clone()));
                    engine.reconfigure(registry_of(&reloaded), router_config_with(&reloaded, &aliases, &transported));
                    games.set(reloaded.registry());
                    bridges_tx.send_replace(engine.config().bridges.clone());
                    if let Some(site) = &site {
                        site.set_hidden(Hidden::new(&reloaded.hidden_rooms, &reloaded.bridges, &seen));
                    }
                    settings = reloaded;
                }
            }
            Some(found) = found_rx.recv() => {
                let new = found.note(&mut seen);
                if let Some(site) = &site {
                    site.set_hidden(Hidden::new(&settings.hidden_rooms, &settings.bridges, &seen));
                }
                let place = (found.network.clone(), RoomId::new(found.alias.as_str()));
                let bridged = settings.bridges.iter().any(|b| b.rooms.contains(&place));
                if !found.is_alias() || !bridged {
                    // A name standing for itself, or a hidden room's alias: only the site's.
                    if found.is_alias() && new {
                        let room = found.room.as_deref().unwrap_or_default();
                        tracing::info!(network = %found.network, alias = %found.alias, %room, "a hidden room's alias looked up");
                    }
                    continue;
                }
                let Found { network, alias, room } = found;
                let room = room.unwrap_or_default();
                let before = aliases.insert((network.clone(), alias.clone()), room.clone());
                if before.as_ref() != Some(&room) {
                    tracing::info!(network = %network, %alias, %room, moved_from = ?before, "a bridged room's alias looked up");
                    engine.reconfigure(registry_of(&settings), router_config_with(&settings, &aliases, &transported));
                    bridges_tx.send_replace(engine.config().bridges.clone());
                    // The transport joined the alias's room when it started; a room the
                    // alias moved to is joined now.
                    if before.is_some() && let Some(transport) = transports.get(&network).cloned() {
                        tasks.spawn(async move {
                            if let Err(error) = transport.join(&RoomId::new(room.clone())).await {
                                tracing::warn!(network = %transport.network(), %room, %error, "could not join the room a bridged alias moved to");
                            }
                        });
                    }
                }
            }
            Some(first) = inbound_rx.recv() => {
                // May I still answer? Not once the lease ran out by this machine's clock.
                if !tenure.holds() {
                    return Err(stand_down(&transports_stop));
                }
                let mut batch = vec![first];
                while batch.len() < BATCH {
                    match inbound_rx.try_recv() {
                        Ok(more) => batch.push(more),
                        Err(_) => break,
                    }
                }
                handle_batch(&mut engine, &couriers, batch, &metrics)?;
                post_boards(&mut engine, &painter);
            }
            Some(id) = sent_rx.recv() => {
                // Whatever else was reported sent meanwhile goes in the same transaction.
                let mut ids = vec![id];
                while let Ok(more) = sent_rx.try_recv() {
                    ids.push(more);
                }
                match engine.sent_all(&ids) {
                    Ok(()) => metrics.sent(ids.len()),
                    Err(error) => {
                        metrics.error(ErrorKind::MarkSent);
                        tracing::error!(%error, "could not mark outbox messages sent; they may be sent again after a restart");
                    }
                }
            }
            Some(news) = learned_rx.recv() => {
                let mut learned = vec![news];
                while let Ok(more) = learned_rx.try_recv() {
                    learned.push(more);
                }
                engine.learn(learned, now()).into_iter().for_each(|q| dispatch(&couriers, q));
            }
            () = sleep_for(timer), if timer.is_some() => {
                if !tenure.holds() {
                    return Err(stand_down(&transports_stop));
                }
                let (queued, saved) = engine.tick(now(), Vec::new()).inspect_err(|_| metrics.error(ErrorKind::Reload))?;
                match saved {
                    Saved::Committed => metrics.committed(&queued),
                    Saved::Failed(_) => metrics.error(ErrorKind::SaveTimers),
                    Saved::NothingToKeep => {}
                }
                queued.into_iter().for_each(|q| dispatch(&couriers, q));
                post_boards(&mut engine, &painter);
            }
        }
        metrics.store_commits(commits.counted());
    }

    drain(&mut engine, painter, couriers, sent_rx, learned_rx).await;
    transports_stop.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(3), tasks.wait()).await;
    if let Some(keeper) = keeper
        && let Err(error) = keeper.release().await
    {
        tracing::warn!(%error, "the lease could not be released; it runs out by itself");
    }
    tracing::info!("stopped");
    Ok(())
}

/// Leadership lost: the daemon stops acting at once. Its transports stop, nothing
/// queued is drained (the daemon that took over sends it) and no snapshot is written;
/// the error makes `spellbridge run` exit non-zero, for its supervisor to start it again
/// as a standby.
fn stand_down(transports_stop: &CancellationToken) -> anyhow::Error {
    transports_stop.cancel();
    anyhow::anyhow!(
        "this daemon's lease on PostgreSQL is gone (another daemon took over, or it could not renew \
         it in time): it stopped acting and sent nothing more; start it again and it stands by"
    )
}

/// The store as start-up leaves it, and what was read from it.
struct Opened {
    store: Store,
    /// The lease this daemon holds on PostgreSQL (`[store] url`); none on SQLite.
    keeper: Option<crate::leader::Keeper>,
    /// IRC STS policies, written by the transports' own tasks.
    sts: Option<Arc<dyn StsPolicies>>,
    /// The Matrix appservice transactions taken in.
    txns: Option<Arc<dyn SeenTransactions>>,
    /// The config file's part of the router's config; the transports' part is added once
    /// they run (the engine's `reconfigure`).
    options: RouterConfig,
    router: Router,
    /// Outbound messages saved and not yet sent.
    pending: Vec<Queued>,
    /// Until when this daemon may send and answer (its lease, by its own clock).
    tenure: crate::leader::Tenure,
    /// Cancelled when leadership is lost.
    stood_down: CancellationToken,
}

/// Opens the store (SQLite, or PostgreSQL under the lease this daemon takes, standing by
/// while another daemon holds it) and loads every table (checked by `policy`; a standby
/// that took over has them already) and the outbox; rebuilt tables and outbox rows set
/// aside are counted in `metrics`. `None` when `shutdown` came while standing by.
async fn open_store(
    settings: &Settings,
    policy: Policy,
    metrics: &Metrics,
    shutdown: &CancellationToken,
) -> anyhow::Result<Option<Opened>> {
    let Some(crate::leader::lead::Opened { store, keeper, warm, tenure, stood_down }) =
        crate::leader::lead::open_store(settings, router_config(settings), metrics.health(), shutdown)
            .await?
    else {
        return Ok(None);
    };
    // IRC STS policies live in the same database, written by the transports' own tasks.
    let sts: Option<Arc<dyn StsPolicies>> = Some(Arc::new(StsStore::open(&store)?));
    // So do the Matrix appservice transactions taken in.
    let txns: Option<Arc<dyn SeenTransactions>> = Some(Arc::new(TxnStore::open(&store)?));
    let options = router_config(settings);
    let loaded = match warm {
        Some(router) => crate::store::startup::Loaded { router, rebuilt: Vec::new() },
        None => store.load_checked(settings.registry(), options.clone(), policy)?,
    };
    let router = loaded.router;
    for _ in &loaded.rebuilt {
        metrics.error(ErrorKind::SnapshotRebuilt);
    }
    let (pending, set_aside) = store.pending_checked()?;
    for _ in &set_aside {
        metrics.error(ErrorKind::OutboxSetAside);
    }
    tracing::info!(
        database = %store.path().display(),
        tables = router.table_ids().count(),
        rebuilt = loaded.rebuilt.len(),
        outbox_set_aside = set_aside.len(),
        "store loaded"
    );
    Ok(Some(Opened { store, keeper, sts, txns, options, router, pending, tenure, stood_down }))
}

/// Serves `/healthz` and `/metrics` (apart, on `ops_listen`, when configured) and the
/// spectator site when it is on; the site, which follows the tables in `changes`.
async fn start_http(
    settings: &Settings,
    games: &Games,
    limits: HttpSettings,
    metrics: &Metrics,
    tasks: &TaskTracker,
    changes: &tokio::sync::broadcast::Sender<TableId>,
    shutdown: &CancellationToken,
) -> anyhow::Result<Option<crate::site::Site>> {
    let mut site = None;
    let listener = crate::http::bind(
        limits.listen,
        if limits.site { "/healthz and /metrics, and the spectator site" } else { "/healthz and /metrics" },
    )
    .await?;
    if let Some(ops) = limits.ops_listen {
        // `/healthz` and `/metrics` apart from the spectators (`[http] ops_listen`).
        let ops_listener = crate::http::bind(ops, "/healthz and /metrics (ops_listen)").await?;
        tasks.spawn(crate::http::serve(ops_listener, limits.ops(ops), metrics.clone(), shutdown.clone()));
    }
    if limits.site {
        // The site reads the store's database (SQLite's file, or PostgreSQL) on its own.
        let (streams, keepalive) =
            (limits.max_event_streams, crate::site::Site::keepalive_for(limits.idle_timeout));
        // Until the config's names are looked up, the site fails closed.
        let hidden = Hidden::new(&settings.hidden_rooms, &settings.bridges, &Seen::new());
        let (games, scopes) = (games.clone(), network_scopes(settings));
        let opened = match &settings.postgres {
            None => crate::site::Site::open(&settings.database, games, scopes, hidden, streams, keepalive)?,
            Some(url) => crate::site::Site::open_postgres(url, games, scopes, hidden, streams, keepalive)?,
        };
        tasks.spawn(opened.clone().follow(changes.subscribe(), shutdown.clone()));
        site = Some(opened);
    }
    tasks.spawn(crate::http::serve_site(listener, limits, metrics.clone(), site.clone(), shutdown.clone()));
    Ok(site)
}

/// What every network's tasks are handed: the stores they write, where they send what
/// they hear and what their couriers report, and when to stop.
struct Wiring {
    sts: Option<Arc<dyn StsPolicies>>,
    txns: Option<Arc<dyn SeenTransactions>>,
    inbound: mpsc::Sender<(Inbound, Instant)>,
    sent: mpsc::UnboundedSender<i64>,
    learned: mpsc::UnboundedSender<courier::Learned>,
    stop: CancellationToken,
    /// Asked by each courier before every send.
    tenure: crate::leader::Tenure,
}

/// The networks as started.
struct Started {
    /// Each network's courier's queue.
    couriers: BTreeMap<NetworkId, mpsc::UnboundedSender<Queued>>,
    transports: BTreeMap<NetworkId, Arc<dyn GameTransport>>,
    /// The same transports as `Transport`s, for looking up the bridges' aliases.
    lookups: BTreeMap<NetworkId, Arc<dyn Transport>>,
}

/// Starts each configured network: its supervised transport, the watch on its
/// connection, the task forwarding what it hears, and its courier.
fn start_networks(settings: &Settings, wiring: &Wiring, metrics: &Metrics, tasks: &TaskTracker) -> Started {
    let mut started =
        Started { couriers: BTreeMap::new(), transports: BTreeMap::new(), lookups: BTreeMap::new() };
    for configured in &settings.networks {
        let (transport, supervisor): (Arc<dyn Transport>, _) = configured.start(Start {
            prefix: settings.prefix.clone(),
            rooms: rooms_on(settings, configured.name(), configured.rooms()),
            stop: wiring.stop.clone(),
            sts: wiring.sts.clone(),
            txns: wiring.txns.clone(),
            language: settings.languages.network(&NetworkId::new(configured.name())),
            may_send: {
                let tenure = wiring.tenure.clone();
                spellbridge_adapters::network::MaySend::when(move || tenure.holds())
            },
        });
        tasks.spawn(watch_connection(transport.clone(), metrics.clone(), wiring.stop.clone()));
        started.lookups.insert(NetworkId::new(configured.name()), transport.clone());
        let transport: Arc<dyn GameTransport> = transport;
        let network = transport.network().clone();
        started.transports.insert(network.clone(), transport.clone());
        tasks.spawn(async move {
            if let Err(error) = supervisor.await {
                tracing::error!(network = %network, %error, "a transport's supervisor task failed");
            }
        });
        tasks.spawn(forward(transport.clone(), wiring.inbound.clone(), wiring.stop.clone()));
        let (courier_tx, courier_rx) = mpsc::unbounded_channel();
        // On IRC each line is its own PRIVMSG: merging lines would only hold game output
        // behind them; Matrix merges relayed chat.
        let merge_lines = configured.merge_lines();
        tasks.spawn(courier::run(
            transport.clone(),
            courier_rx,
            wiring.sent.clone(),
            wiring.learned.clone(),
            courier::Until { stop: wiring.stop.clone(), tenure: wiring.tenure.clone() },
            metrics.clone(),
            merge_lines,
        ));
        started.couriers.insert(transport.network().clone(), courier_tx);
    }
    started
}

/// Shutdown: gives the couriers a moment to send what is queued, then keeps every
/// table's snapshot and the ids of the last relayed lines sent.
async fn drain(
    engine: &mut Engine,
    painter: Painter,
    couriers: BTreeMap<NetworkId, mpsc::UnboundedSender<Queued>>,
    mut sent_rx: mpsc::UnboundedReceiver<i64>,
    mut learned_rx: mpsc::UnboundedReceiver<courier::Learned>,
) {
    tracing::info!("shutting down: sending what is queued");
    // The painter holds the couriers' queues too: it lets go of them once its job is done.
    drop(painter);
    // Closing the couriers' queues ends each courier once it has sent what it holds; the
    // reports of their sends end with the last of them, so this waits for the queued
    // messages and no longer (at most DRAIN, for a network that is down).
    drop(couriers);
    let drained = tokio::time::timeout(DRAIN, async {
        while let Some(id) = sent_rx.recv().await {
            if let Some(store) = engine.store() {
                let _ = store.sent(id);
            }
        }
    });
    let _ = drained.await;
    // Every table's snapshot up to date, so the next start has no journal rows to replay.
    if let Err(error) = engine.write_snapshots() {
        tracing::warn!(%error, "could not write the tables' snapshots; the next start replays their latest moves");
    }
    // The ids of the last relayed lines sent are kept too.
    let mut learned = Vec::new();
    while let Ok(news) = learned_rx.try_recv() {
        learned.push(news);
    }
    let _ = engine.learn(learned, now());
}

/// Handles a batch of inbound messages through the [`Engine`] (one transaction) and
/// hands what is to be sent to the couriers. An error means the daemon must stop.
pub(crate) fn handle_batch(
    engine: &mut Engine,
    couriers: &BTreeMap<NetworkId, mpsc::UnboundedSender<Queued>>,
    batch: Vec<(Inbound, Instant)>,
    metrics: &Metrics,
) -> Result<(), EngineError> {
    let mut commands = metrics.batch();
    let (inbound, received): (Vec<Inbound>, Vec<Instant>) = batch.into_iter().unzip();
    let done =
        engine.handle_batch(&inbound, now(), Vec::new()).inspect_err(|_| metrics.error(ErrorKind::Reload))?;
    for ((message, fate), received) in inbound.iter().zip(&done.fates).zip(received) {
        match fate {
            Fate::Redelivered => {}
            Fate::Unchecked => metrics.message_in(&message.network),
            Fate::Handled(happened) => {
                metrics.message_in(&message.network);
                commands.handled(happened, received);
            }
        }
    }
    match done.saved {
        Saved::Committed => metrics.committed(&done.queued),
        Saved::Failed(_) => metrics.error(ErrorKind::Save),
        Saved::NothingToKeep => {}
    }
    // Counted before the replies go: whoever has seen a reply finds its command counted.
    commands.replied();
    done.queued.into_iter().for_each(|q| dispatch(couriers, q));
    Ok(())
}

/// Hands the painter the tables whose picture is to be posted: each one's public snapshot
/// entry (without its history) and its rooms that show pictures. Drawing happens on the
/// painter's thread; this takes a copy of the state and returns.
fn post_boards(engine: &mut Engine, painter: &Painter) {
    for table in engine.take_boards() {
        let router = engine.router();
        let rooms: Vec<(NetworkId, RoomId, Language)> = router
            .picture_rooms(table)
            .into_iter()
            .map(|place| {
                let language = router.room_language(&place);
                (place.network, place.room, language)
            })
            .collect();
        let started = Instant::now();
        let Some(stored) = router.stored_table(table, usize::MAX) else { continue };
        if !rooms.is_empty() {
            painter.post(Job { table, entry: stored.text, rooms, names: router.picture_names(table) });
            let micros = started.elapsed().as_micros() as u64;
            tracing::debug!(table, micros, "board picture handed to the painter (the loop's part)");
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

/// Moves a transport's inbound messages into the daemon's one queue, each with when its
/// transport handed it over (the command latency metric counts from there). A transport
/// hands messages over until the daemon stops (its supervisor is started again if it
/// fails: `spellbridge_adapters::supervise::restarting`); one that stops before is a
/// bug, logged.
async fn forward(
    transport: Arc<dyn GameTransport>,
    to: mpsc::Sender<(Inbound, Instant)>,
    stop: CancellationToken,
) {
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            message = transport.recv() => match message {
                Some(message) => if to.send((message, Instant::now())).await.is_err() { return },
                None => {
                    if !stop.is_cancelled() {
                        tracing::error!(network = %transport.network(), "the transport stopped handing messages over while the daemon runs");
                    }
                    return;
                }
            },
        }
    }
}
