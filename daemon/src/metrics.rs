//! What the daemon counts and how it is doing: [`Metrics`] (Prometheus counters, gauges
//! and the command latency histogram, on `prometheus-client`) and [`Health`] (each
//! network up or down and since when, the store ok or failing). `serve` calls one small
//! method per thing that happened (`message_in`, `committed`, `command`, …); `http`
//! serves them as `/metrics` and `/healthz`.
//!
//! Every metric is named `spellbridge_*`; docs/operations.md lists them.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use prometheus_client::encoding::{EncodeLabelSet, EncodeLabelValue, LabelValueEncoder};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};
use serde::Serialize;
use spellbridge_adapters::network::Transport;
use spellbridge_adapters::supervise::Connection;
use spellbridge_core::NetworkId;
use tokio_util::sync::CancellationToken;

use crate::store::Queued;
use crate::store::commits::Counted;
use crate::turn::{Happened, Outcome};

/// Upper bounds of the command latency buckets, in seconds: 0.1 ms to 1 s.
pub const LATENCY_BUCKETS: [f64; 13] =
    [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0];

/// What went wrong, as the `kind` label of `spellbridge_errors_total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// A batch of moves could not be committed (the moves were undone).
    Save,
    /// Fired timers could not be committed.
    SaveTimers,
    /// Sent messages could not be deleted from the outbox.
    MarkSent,
    /// After a failed commit, the games could not be reloaded from the store.
    Reload,
    /// A network refused an outbound message, which was dropped.
    SendRefused,
    /// At start, a table's snapshot did not match its journal and was rebuilt from it.
    SnapshotRebuilt,
    /// At start, an outbox row did not read and was set aside (not sent, kept).
    OutboxSetAside,
}

impl ErrorKind {
    fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Save => "save",
            ErrorKind::SaveTimers => "save_timers",
            ErrorKind::MarkSent => "mark_sent",
            ErrorKind::Reload => "reload",
            ErrorKind::SendRefused => "send_refused",
            ErrorKind::SnapshotRebuilt => "snapshot_rebuilt",
            ErrorKind::OutboxSetAside => "outbox_set_aside",
        }
    }

    /// True when it means the store is failing (what start-up repaired does not: the
    /// store works).
    fn is_store(self) -> bool {
        !matches!(self, ErrorKind::SendRefused | ErrorKind::SnapshotRebuilt | ErrorKind::OutboxSetAside)
    }
}

impl EncodeLabelValue for Outcome {
    fn encode(&self, encoder: &mut LabelValueEncoder<'_>) -> Result<(), std::fmt::Error> {
        encoder.write_str(self.as_str())
    }
}

impl EncodeLabelValue for ErrorKind {
    fn encode(&self, encoder: &mut LabelValueEncoder<'_>) -> Result<(), std::fmt::Error> {
        encoder.write_str(self.as_str())
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct NetworkLabel {
    network: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabel {
    outcome: Outcome,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabel {
    kind: ErrorKind,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BridgeLabel {
    bridge: String,
}

/// A relayed line not sent, and why (`speaker_rate`: refused in the router before it was
/// committed; `queue_full`: dropped from a courier's full chat queue).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DroppedLabel {
    bridge: String,
    reason: String,
}

/// Whether a store commit waited for the disk, as the `synced` label of
/// `spellbridge_store_commits_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct SyncedLabel {
    synced: &'static str,
}

/// Where a board picture failed, as the `stage` label of `spellbridge_board_failures_total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BoardStage {
    /// It could not be drawn.
    Render,
    /// The network refused it (upload or send).
    Upload,
}

impl EncodeLabelValue for BoardStage {
    fn encode(&self, encoder: &mut LabelValueEncoder<'_>) -> Result<(), std::fmt::Error> {
        encoder.write_str(match self {
            BoardStage::Render => "render",
            BoardStage::Upload => "upload",
        })
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StageLabel {
    stage: BoardStage,
}

/// Upper bounds of the board drawing buckets, in seconds: 1 ms to 1 s.
const BOARD_BUCKETS: [f64; 9] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0];

fn network_label(network: &NetworkId) -> NetworkLabel {
    NetworkLabel { network: network.as_str().to_owned() }
}

/// The daemon's metrics and its [`Health`]; clones share them.
#[derive(Clone, Debug)]
pub struct Metrics {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    registry: Registry,
    messages_in: Family<NetworkLabel, Counter>,
    messages_out: Family<NetworkLabel, Counter>,
    commands: Family<OutcomeLabel, Counter>,
    errors: Family<KindLabel, Counter>,
    outbox: Gauge,
    reconnects: Family<NetworkLabel, Counter>,
    up: Family<NetworkLabel, Gauge>,
    relayed: Family<BridgeLabel, Counter>,
    relay_dropped: Family<DroppedLabel, Counter>,
    store_commits: Family<SyncedLabel, Counter>,
    latency: Histogram,
    queueing: Histogram,
    board_failures: Family<StageLabel, Counter>,
    board_drawing: Histogram,
    health: Health,
}

impl Inner {
    /// Messages in and out, commands by outcome (each at zero), errors and the outbox.
    fn register_traffic(&mut self) {
        let registry = &mut self.registry;
        registry.register(
            "messages_in",
            "Messages received from a network (redeliveries not counted)",
            self.messages_in.clone(),
        );
        registry.register(
            "messages_out",
            "Messages a network accepted from the daemon",
            self.messages_out.clone(),
        );
        registry.register(
            "commands",
            "Commands handled, by outcome (accepted, refused, query)",
            self.commands.clone(),
        );
        registry.register("errors", "Errors, by kind", self.errors.clone());
        registry.register(
            "outbox_depth",
            "Outbound messages saved and not yet reported sent",
            self.outbox.clone(),
        );
        for outcome in [Outcome::Accepted, Outcome::Refused, Outcome::Query] {
            let _ = self.commands.get_or_create(&OutcomeLabel { outcome });
        }
    }

    /// Each network's reconnections and whether it is up.
    fn register_networks(&mut self) {
        self.registry.register(
            "reconnects",
            "Times a network's connection came back after failing",
            self.reconnects.clone(),
        );
        self.registry.register(
            "network_up",
            "1 while a network is connected and ready, else 0",
            self.up.clone(),
        );
    }

    /// Chat relayed between a bridge's rooms, and chat lines dropped.
    fn register_relay(&mut self) {
        self.registry.register(
            "relayed",
            "Chat messages relayed between a bridge's rooms",
            self.relayed.clone(),
        );
        self.registry.register(
            "relay_dropped",
            "Relayed chat lines not sent: over the speaker's rate, or the courier's chat queue full",
            self.relay_dropped.clone(),
        );
    }

    /// The store's commits, synced or not (each at zero).
    fn register_store(&mut self) {
        self.registry.register(
            "store_commits",
            "Write transactions the store committed; synced=\"true\": those that waited for an fsync",
            self.store_commits.clone(),
        );
        for synced in ["true", "false"] {
            let _ = self.store_commits.get_or_create(&SyncedLabel { synced });
        }
    }

    /// How long a command takes to be answered, and how much of it is waiting in line.
    fn register_latency(&mut self) {
        self.registry.register_with_unit(
            "command_latency",
            "From a command's hand-over by its network's transport to its reply being handed to the network's courier",
            Unit::Seconds,
            self.latency.clone(),
        );
        self.registry.register_with_unit(
            "command_queueing",
            "From a command's hand-over by its network's transport to the daemon loop taking it (part of command_latency)",
            Unit::Seconds,
            self.queueing.clone(),
        );
    }

    /// Board pictures not posted, by stage (each at zero), and how long drawing one takes.
    fn register_board(&mut self) {
        self.registry.register(
            "board_failures",
            "Board pictures not posted, by stage (render, upload); the game went on",
            self.board_failures.clone(),
        );
        self.registry.register_with_unit(
            "board_drawing",
            "Drawing one board picture (SVG and PNG), on the painter's thread, off the daemon loop",
            Unit::Seconds,
            self.board_drawing.clone(),
        );
        for stage in [BoardStage::Render, BoardStage::Upload] {
            let _ = self.board_failures.get_or_create(&StageLabel { stage });
        }
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// Every metric at zero, the store ok and no network known yet.
    pub fn new() -> Metrics {
        let mut inner = Inner {
            registry: Registry::with_prefix("spellbridge"),
            messages_in: Family::default(),
            messages_out: Family::default(),
            commands: Family::default(),
            errors: Family::default(),
            outbox: Gauge::default(),
            reconnects: Family::default(),
            up: Family::default(),
            relayed: Family::default(),
            relay_dropped: Family::default(),
            store_commits: Family::default(),
            latency: Histogram::new(LATENCY_BUCKETS),
            queueing: Histogram::new(LATENCY_BUCKETS),
            board_failures: Family::default(),
            board_drawing: Histogram::new(BOARD_BUCKETS),
            health: Health::new(),
        };
        // Registered in this order, so exported in it.
        inner.register_traffic();
        inner.register_networks();
        inner.register_relay();
        inner.register_store();
        inner.register_latency();
        inner.register_board();
        Metrics { inner: Arc::new(inner) }
    }

    /// The daemon's health, updated through these metrics' methods and the connection watchers.
    pub fn health(&self) -> &Health {
        &self.inner.health
    }

    /// Makes `network` known: its series appear at zero, and it counts as down until its
    /// transport says otherwise.
    pub fn network(&self, network: &NetworkId) {
        // Creating a series is enough: it is exported at zero.
        let label = network_label(network);
        let _ = self.inner.messages_in.get_or_create(&label);
        let _ = self.inner.messages_out.get_or_create(&label);
        let _ = self.inner.reconnects.get_or_create(&label);
        let _ = self.inner.up.get_or_create(&label);
        self.inner.health.connection(network, false);
    }

    /// A message came in from `network` (after the redelivery check).
    pub fn message_in(&self, network: &NetworkId) {
        self.inner.messages_in.get_or_create(&network_label(network)).inc();
    }

    /// `network` accepted a message from the courier.
    pub fn message_out(&self, network: &NetworkId) {
        self.inner.messages_out.get_or_create(&network_label(network)).inc();
    }

    /// A command was handled with `outcome`; it waited `queueing` for the daemon loop, and
    /// its reply was handed on `latency` after its transport handed it over.
    pub fn command(&self, outcome: Outcome, queueing: Duration, latency: Duration) {
        self.inner.commands.get_or_create(&OutcomeLabel { outcome }).inc();
        self.inner.queueing.observe(queueing.as_secs_f64());
        self.inner.latency.observe(latency.as_secs_f64());
    }

    /// Starts timing the commands of one batch, from now.
    pub fn batch(&self) -> Batch<'_> {
        Batch { metrics: self, arrived: Instant::now(), commands: Vec::new() }
    }

    /// Something went wrong; a store failure also marks the store failing.
    pub fn error(&self, kind: ErrorKind) {
        self.inner.errors.get_or_create(&KindLabel { kind }).inc();
        if kind.is_store() {
            self.inner.health.store(false);
        }
    }

    /// The store committed: the store is ok, and `queued`'s outbox rows are waiting.
    pub fn committed(&self, queued: &[Queued]) {
        self.inner.health.store(true);
        let rows = queued.iter().filter(|q| q.id >= 0).count();
        self.inner.outbox.inc_by(i64::try_from(rows).unwrap_or(i64::MAX));
    }

    /// `rows` sent messages were deleted from the outbox.
    pub fn sent(&self, rows: usize) {
        self.inner.health.store(true);
        self.inner.outbox.dec_by(i64::try_from(rows).unwrap_or(i64::MAX));
    }

    /// A board picture failed at `stage` (it was logged; the game went on).
    pub fn board_failure(&self, stage: BoardStage) {
        self.inner.board_failures.get_or_create(&StageLabel { stage }).inc();
    }

    /// A board picture was drawn in `took`.
    pub fn board_drawn(&self, took: Duration) {
        self.inner.board_drawing.observe(took.as_secs_f64());
    }

    /// A chat message was relayed to the other rooms of `bridge`.
    pub fn relayed(&self, bridge: &str) {
        self.inner.relayed.get_or_create(&BridgeLabel { bridge: bridge.to_owned() }).inc();
    }

    /// A relayed line for `bridge` (or a courier's network) was dropped for `reason`
    /// (`speaker_rate` or `queue_full`).
    pub fn relay_dropped(&self, bridge: &str, reason: &str) {
        let label = DroppedLabel { bridge: bridge.to_owned(), reason: reason.to_owned() };
        self.inner.relay_dropped.get_or_create(&label).inc();
    }

    /// `network`'s connection is now `up` or not, after `reconnects` reconnections in all.
    pub fn connection(&self, network: &NetworkId, up: bool, reconnects: u64) {
        let label = network_label(network);
        self.inner.up.get_or_create(&label).set(i64::from(up));
        let counter = self.inner.reconnects.get_or_create(&label);
        let counted = counter.get();
        if reconnects > counted {
            counter.inc_by(reconnects - counted);
        }
        self.inner.health.connection(network, up);
    }

    /// The store's commits so far ([`Counted`]), synced and not.
    pub fn store_commits(&self, counted: Counted) {
        let unsynced = counted.all.saturating_sub(counted.synced);
        for (synced, total) in [("true", counted.synced), ("false", unsynced)] {
            let counter = self.inner.store_commits.get_or_create(&SyncedLabel { synced });
            let before = counter.get();
            if total > before {
                counter.inc_by(total - before);
            }
        }
    }

    /// The metrics in the Prometheus text format (version 0.0.4).
    pub fn encode(&self) -> String {
        let mut text = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::prometheus_text::encode(&mut text, &self.inner.registry);
        text
    }
}

/// The commands of one batch of inbound messages, each timed from when its transport
/// handed it over (it may have waited in the daemon's queue before the batch began).
#[derive(Debug)]
pub struct Batch<'a> {
    metrics: &'a Metrics,
    /// When the daemon loop took the batch.
    arrived: Instant,
    /// Each command's outcome and when its transport handed it over.
    commands: Vec<(Outcome, Instant)>,
}

impl Batch<'_> {
    /// The router handled a message into `happened`: counts it as a command, or as chat
    /// relayed over its bridge. `received` is when its transport handed it over.
    pub fn handled(&mut self, happened: &Happened, received: Instant) {
        match happened {
            Happened::Command(outcome) => self.commands.push((*outcome, received)),
            Happened::Chat { bridge: Some(bridge) } => self.metrics.relayed(bridge),
            Happened::TooFast { bridge } => self.metrics.relay_dropped(bridge, "speaker_rate"),
            Happened::Chat { bridge: None } | Happened::Dropped => {}
        }
    }

    /// The batch's replies are ready to be handed to the couriers: counts its commands.
    pub fn replied(self) {
        for (outcome, received) in self.commands {
            let queueing = self.arrived.saturating_duration_since(received);
            self.metrics.command(outcome, queueing, received.elapsed());
        }
    }
}

/// Whether the daemon is well: each network up or down (and since when), the store ok.
/// Clones share it.
#[derive(Clone, Debug)]
pub struct Health {
    state: Arc<Mutex<HealthState>>,
}

#[derive(Debug)]
struct HealthState {
    store_ok: bool,
    role: Role,
    /// Up, since when, and (when down) whether because it is not logged in.
    networks: BTreeMap<NetworkId, (bool, SystemTime, bool)>,
}

/// Whether this daemon plays or waits (issue 34: two daemons on one PostgreSQL).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// It holds the lease (or runs on SQLite) and plays.
    Active,
    /// It follows the journal and waits for the lease; it sends nothing.
    Standby,
}

/// What `/healthz` says, as JSON.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HealthReport {
    /// `ok`, or `unhealthy` when the store fails or a network is down.
    pub status: &'static str,
    /// `active` or `standby`.
    pub role: Role,
    /// `ok` or `failing`.
    pub store: &'static str,
    /// Each network, by name.
    pub networks: BTreeMap<String, NetworkHealth>,
    /// The networks that are down, by name.
    pub down: Vec<String>,
}

/// One network in a [`HealthReport`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NetworkHealth {
    /// Connected and ready.
    pub up: bool,
    /// `up`, `down`, or `not logged in` (connected, but a required services login
    /// failed or is not offered: the bot does not play there and retries).
    pub state: &'static str,
    /// Since when (Unix seconds).
    pub since: u64,
}

impl HealthReport {
    /// True when the store is ok and every network is up.
    pub fn healthy(&self) -> bool {
        self.status == "ok"
    }
}

impl Default for Health {
    fn default() -> Self {
        Health::new()
    }
}

impl Health {
    /// The store ok, no network known.
    pub fn new() -> Health {
        Health {
            state: Arc::new(Mutex::new(HealthState {
                store_ok: true,
                role: Role::Active,
                networks: BTreeMap::new(),
            })),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HealthState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `network` is up or down; the time is kept only when that changes.
    pub fn connection(&self, network: &NetworkId, up: bool) {
        let mut state = self.lock();
        match state.networks.get_mut(network) {
            Some((was, _, _)) if *was == up => {}
            Some(entry) => *entry = (up, SystemTime::now(), false),
            None => {
                state.networks.insert(network.clone(), (up, SystemTime::now(), false));
            }
        }
    }

    /// `network` is down because its required login failed (or back to plain down).
    pub fn logged_out(&self, network: &NetworkId, logged_out: bool) {
        if let Some(entry) = self.lock().networks.get_mut(network) {
            entry.2 = logged_out && !entry.0;
        }
    }

    /// This daemon is active or standing by (`/healthz`'s `role`, `/leader`).
    pub fn set_role(&self, role: Role) {
        self.lock().role = role;
    }

    /// Whether this daemon is active or standing by.
    pub fn role(&self) -> Role {
        self.lock().role
    }

    /// The store's last operation worked (`true`) or failed.
    pub fn store(&self, ok: bool) {
        self.lock().store_ok = ok;
    }

    /// How things stand now.
    pub fn report(&self) -> HealthReport {
        let state = self.lock();
        let networks: BTreeMap<String, NetworkHealth> = state
            .networks
            .iter()
            .map(|(network, (up, since, logged_out))| {
                let since = since.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs());
                let state = match (up, logged_out) {
                    (true, _) => "up",
                    (false, true) => "not logged in",
                    (false, false) => "down",
                };
                (network.as_str().to_owned(), NetworkHealth { up: *up, state, since })
            })
            .collect();
        let down: Vec<String> =
            networks.iter().filter(|(_, n)| !n.up).map(|(name, _)| name.clone()).collect();
        let healthy = state.store_ok && down.is_empty();
        HealthReport {
            status: if healthy { "ok" } else { "unhealthy" },
            role: state.role,
            store: if state.store_ok { "ok" } else { "failing" },
            networks,
            down,
        }
    }
}

/// Makes the transport's network known to `metrics` now (down until it connects), and
/// returns the task that follows its connection into `metrics` and their health until `stop`
/// or the transport closes.
pub fn watch_connection(
    transport: Arc<dyn Transport>,
    metrics: Metrics,
    stop: CancellationToken,
) -> impl Future<Output = ()> + Send + 'static {
    let network = transport.network().clone();
    metrics.network(&network);
    let mut connection = transport.connection();
    async move {
        loop {
            let state = *connection.borrow_and_update();
            metrics.connection(&network, state == Connection::Up, transport.reconnects());
            metrics.health().logged_out(&network, state == Connection::LoggedOut);
            tracing::debug!(network = %network, link = ?state, "network link");
            if state == Connection::Closed {
                return;
            }
            tokio::select! {
                () = stop.cancelled() => return,
                changed = connection.changed() => if changed.is_err() { return },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_counter_appears_with_its_labels_and_counts() {
        let metrics = Metrics::new();
        let network = NetworkId::new("libera");
        metrics.network(&network);
        metrics.message_in(&network);
        metrics.message_in(&network);
        metrics.message_out(&network);
        metrics.error(ErrorKind::SendRefused);
        let text = metrics.encode();
        assert!(text.contains("# TYPE spellbridge_messages_in_total counter"), "{text}");
        assert!(text.contains("spellbridge_messages_in_total{network=\"libera\"} 2\n"), "{text}");
        assert!(text.contains("spellbridge_messages_out_total{network=\"libera\"} 1\n"), "{text}");
        assert!(text.contains("spellbridge_reconnects_total{network=\"libera\"} 0\n"), "{text}");
        assert!(text.contains("spellbridge_errors_total{kind=\"send_refused\"} 1\n"), "{text}");
        assert!(text.contains("spellbridge_commands_total{outcome=\"refused\"} 0\n"), "{text}");
    }

    #[test]
    fn the_latency_histogram_has_its_buckets_and_counts_commands() {
        let metrics = Metrics::new();
        metrics.command(Outcome::Accepted, Duration::ZERO, Duration::from_micros(300));
        metrics.command(Outcome::Query, Duration::ZERO, Duration::from_secs(2));
        let text = metrics.encode();
        assert!(text.contains("# TYPE spellbridge_command_latency_seconds histogram"), "{text}");
        assert!(text.contains("spellbridge_command_latency_seconds_bucket{le=\"0.0001\"} 0\n"), "{text}");
        assert!(text.contains("spellbridge_command_latency_seconds_bucket{le=\"0.0005\"} 1\n"), "{text}");
        assert!(text.contains("spellbridge_command_latency_seconds_bucket{le=\"1\"} 1\n"), "{text}");
        assert!(text.contains("spellbridge_command_latency_seconds_bucket{le=\"+Inf\"} 2\n"), "{text}");
        assert!(text.contains("spellbridge_command_latency_seconds_count 2\n"), "{text}");
        assert!(text.contains("spellbridge_commands_total{outcome=\"accepted\"} 1\n"), "{text}");
        assert!(text.contains("spellbridge_commands_total{outcome=\"query\"} 1\n"), "{text}");
    }

    #[test]
    fn the_outbox_depth_follows_commits_and_sends() {
        let metrics = Metrics::new();
        let queued = |id| Queued {
            id,
            outbound: crate::turn::Outbound {
                network: NetworkId::new("n"),
                to: spellbridge_core::Destination::Room(spellbridge_core::RoomId::new("#r")),
                message: spellbridge_core::RichText::from("hi").into(),
            },
        };
        metrics.committed(&[queued(1), queued(2), queued(-1)]);
        assert!(metrics.encode().contains("spellbridge_outbox_depth 2\n"));
        metrics.sent(1);
        assert!(metrics.encode().contains("spellbridge_outbox_depth 1\n"));
    }

    #[test]
    fn reconnects_count_up_to_the_transports_total() {
        let metrics = Metrics::new();
        let network = NetworkId::new("libera");
        metrics.connection(&network, true, 0);
        metrics.connection(&network, false, 0);
        metrics.connection(&network, true, 3);
        metrics.connection(&network, true, 3);
        let text = metrics.encode();
        assert!(text.contains("spellbridge_reconnects_total{network=\"libera\"} 3\n"), "{text}");
        assert!(text.contains("spellbridge_network_up{network=\"libera\"} 1\n"), "{text}");
    }

    #[test]
    fn a_batch_counts_its_commands_and_relayed_chat() {
        let metrics = Metrics::new();
        let mut batch = metrics.batch();
        let now = Instant::now();
        batch.handled(&Happened::Chat { bridge: Some("magic".to_owned()) }, now);
        batch.handled(&Happened::Command(Outcome::Query), now);
        batch.handled(&Happened::Command(Outcome::Refused), now);
        batch.handled(&Happened::Chat { bridge: None }, now);
        batch.handled(&Happened::Dropped, now);
        batch.replied();
        let text = metrics.encode();
        assert!(text.contains("spellbridge_relayed_total{bridge=\"magic\"} 1\n"), "{text}");
        assert!(text.contains("spellbridge_commands_total{outcome=\"query\"} 1\n"), "{text}");
        assert!(text.contains("spellbridge_commands_total{outcome=\"refused\"} 1\n"), "{text}");
        assert!(text.contains("spellbridge_command_latency_seconds_count 2\n"), "{text}");
    }

    #[test]
    fn a_command_is_timed_from_its_hand_over_not_from_its_batch() {
        // Issue 16, finding 4: a command that waited in the daemon's queue was timed from
        // the start of its batch, so /metrics hid the wait players felt.
        let metrics = Metrics::new();
        let waited = Duration::from_millis(60);
        let received = Instant::now().checked_sub(waited).expect("an instant 60 ms ago");
        let mut batch = metrics.batch();
        batch.handled(&Happened::Command(Outcome::Query), received);
        batch.replied();
        let text = metrics.encode();
        for histogram in ["latency", "queueing"] {
            let under_50ms = format!("spellbridge_command_{histogram}_seconds_bucket{{le=\"0.05\"}} 0\n");
            assert!(text.contains(&under_50ms), "{histogram} counts the 60 ms wait: {text}");
            let counted = format!("spellbridge_command_{histogram}_seconds_count 1\n");
            assert!(text.contains(&counted), "{text}");
        }
    }

    #[test]
    fn health_is_ok_only_with_the_store_ok_and_every_network_up() {
        let metrics = Metrics::new();
        let health = metrics.health();
        assert!(health.report().healthy(), "no network, store ok");
        metrics.network(&NetworkId::new("libera"));
        metrics.network(&NetworkId::new("matrix"));
        let report = health.report();
        assert!(!report.healthy());
        assert_eq!(report.down, ["libera", "matrix"]);
        metrics.connection(&NetworkId::new("libera"), true, 0);
        metrics.connection(&NetworkId::new("matrix"), true, 0);
        let report = health.report();
        assert!(report.healthy());
        let json = serde_json::to_value(&report).expect("json");
        assert_eq!(json["status"], "ok");
        assert_eq!(json["store"], "ok");
        assert_eq!(json["networks"]["libera"]["up"], true);
        assert!(json["networks"]["libera"]["since"].as_u64().is_some_and(|s| s > 1_600_000_000));
        assert_eq!(json["down"], serde_json::json!([]));

        metrics.error(ErrorKind::Save);
        metrics.connection(&NetworkId::new("matrix"), false, 0);
        let json = serde_json::to_value(health.report()).expect("json");
        assert_eq!(json["status"], "unhealthy");
        assert_eq!(json["store"], "failing");
        assert_eq!(json["down"], serde_json::json!(["matrix"]));
        metrics.committed(&[]);
        assert_eq!(health.report().store, "ok");
    }

    #[test]
    fn a_network_whose_required_login_failed_reads_not_logged_in() {
        let metrics = Metrics::new();
        let health = metrics.health();
        let libera = NetworkId::new("libera");
        metrics.network(&libera);
        assert_eq!(health.report().networks["libera"].state, "down");
        // As `watch_connection` reports a transport's `Connection::LoggedOut`.
        metrics.connection(&libera, false, 1);
        health.logged_out(&libera, true);
        let report = health.report();
        assert!(!report.healthy());
        assert_eq!(report.down, ["libera"]);
        let json = serde_json::to_value(&report).expect("json");
        assert_eq!(json["networks"]["libera"]["state"], "not logged in");
        metrics.connection(&libera, true, 1);
        health.logged_out(&libera, false);
        assert_eq!(health.report().networks["libera"].state, "up");
        assert!(health.report().healthy());
    }
}
