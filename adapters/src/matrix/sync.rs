//! The supervisor of one Matrix account: log in (or restore), then the `/sync` loop.
//!
//! The loop syncs with the previous `next_batch` passed on, so events arrive as soon as
//! the homeserver returns them (matrix-sdk's `Client::sync` sleeps up to a second between
//! fast syncs; SERVERS.md). It makes `sync_once` in its two halves (vendor/README.md):
//! between the request and matrix-sdk's processing of the response, the messages of rooms
//! that changed nothing else are handed over ([`early`]). Then the response is handled in
//! order: the other timeline messages, edits, reactions and redactions ([`inbound`]) are
//! handed to the daemon, with whether they were said privately (in a private chat the
//! bot can vouch for, `vouch`) and whether the sender operates the room (power level 50
//! or more, never in a private chat), undecryptable ones wait briefly for their room key,
//! invites are accepted or declined, rooms `leave` could not leave yet are left (after a
//! login), and only then is `next_batch` saved (`sync-token`), so after a restart sync
//! continues from the last delivered position and never replays older history. On the
//! very first start there is no position: that initial sync's timelines are history, and
//! are skipped. After a command, the next long poll waits (briefly) for its answer to be
//! sent ([`answers`](super::answers)); what a message's hand-over needs to know of its
//! room and sender comes from [`room_facts`](super::room_facts).
//!
//! With a shared database ([`SyncPositions`](super::positions::SyncPositions): two
//! daemons on PostgreSQL) the position is also kept there after each response whose
//! commands were answered, while the daemon may act (and the database refuses it from a
//! daemon whose lease was taken over); a session that finds a kept position
//! other than its own `sync-token` (another daemon led meanwhile, or this one never
//! synced) starts from it, so what was said during a takeover is handed over once, by the
//! new leader.
//!
//! A room whose timeline the homeserver cut short (`limited`: more than
//! [`TIMELINE_LIMIT`] events since the last sync, say after a long stop) has its gap
//! fetched with the room messages API ([`gap`]) and handed over first, oldest first, so
//! no command or chat said meanwhile is lost (up to [`gap::MOST_PAGES`] pages of
//! [`gap::PAGE`] events per room; beyond that the oldest are lost, and logged). Gaps are
//! fetched before anything else of the response is handed over; when one cannot be
//! fetched (homeserver unreachable, rate limited) the same response is handed over again
//! after a pause, until it can. (Not the same sync made again: matrix-sdk has taken the
//! response in, and would answer a sync from the same position with nothing.)
//!
//! Failures: a rate limit is waited out (`retry_after_ms`); an unreachable homeserver is
//! retried with exponential backoff (the connection goes [`Connection::Down`] and comes back
//! [`Connection::Up`]); a rejected access token means logging in again (a new device) when a
//! password is configured. Nothing here exits before shutdown.

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use matrix_sdk::config::{SyncSettings, SyncToken};
use matrix_sdk::deserialized_responses::TimelineEvent;
use matrix_sdk::ruma::api::client::filter::{Filter as EventFilter, FilterDefinition, RoomEventFilter};
use matrix_sdk::ruma::api::client::sync::sync_events::{self, v3::Filter};
use matrix_sdk::ruma::events::AnySyncTimelineEvent;
use matrix_sdk::ruma::events::room::encrypted::OriginalSyncRoomEncryptedEvent;
use matrix_sdk::ruma::events::room::message::RoomMessageEventContent;
use matrix_sdk::ruma::serde::Raw;
use matrix_sdk::ruma::{OwnedEventId, OwnedRoomId, OwnedUserId, RoomOrAliasId, UInt, UserId};
use matrix_sdk::store::{StateStoreDataKey, StateStoreDataValue};
use matrix_sdk::sync::SyncResponse;
use matrix_sdk::{Client, EncryptionState, Room, RoomState};
use spellbridge_core::{Inbound, NetworkId, RoomId, Said};
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::connect::{self, Origin};
use super::early;
use super::gap;
use super::inbound::{self, Read, Received};
use super::options::Login;
use super::retry::{self, RequestFailure};
use super::room_facts::Sender;
use super::transport::{self, Connection, Shared, lock};

/// Timeline events asked for per room and sync: enough that a burst between two syncs,
/// or the messages sent while the bot was down, are not cut off.
const TIMELINE_LIMIT: u32 = 100;

/// The task that keeps one account logged in and syncing.
pub(super) struct Supervisor {
    shared: Arc<Shared>,
    inbound: mpsc::Sender<Inbound>,
    /// The connection has been up before (so coming up again is a reconnect).
    was_up: bool,
    /// A command was handed over since the last sync.
    commanded: AtomicBool,
}

/// Why a logged-in session ended.
enum End {
    Shutdown,
    /// The homeserver no longer accepts the access token.
    SessionGone,
}

/// A message that could not be decrypted yet.
struct Pending {
    room: Room,
    raw: Raw<AnySyncTimelineEvent>,
    event_id: Option<OwnedEventId>,
    sender: Option<OwnedUserId>,
    reason: String,
    give_up_at: Instant,
}

impl Supervisor {
    pub(super) fn new(shared: Arc<Shared>, inbound: mpsc::Sender<Inbound>) -> Self {
        Supervisor { shared, inbound, was_up: false, commanded: AtomicBool::new(false) }
    }

    pub(super) async fn run(mut self) {
        let shared = self.shared.clone();
        let options = &shared.options;
        let network = options.network.clone();
        let mut attempt: u32 = 0;
        while !self.shared.shutdown.is_cancelled() {
            let connected = tokio::select! {
                () = self.shared.shutdown.cancelled() => break,
                connected = connect::connect(options, &self.shared.store) => connected,
            };
            let (client, origin) = match connected {
                Ok(ready) => ready,
                Err(error) => {
                    attempt = attempt.saturating_add(1);
                    let delay = match error.failure() {
                        RequestFailure::Connection => {
                            let delay = crate::supervise::backoff(options.backoff, attempt, &network);
                            tracing::warn!(network = %network, homeserver = %options.homeserver, error = %crate::error_chain(&error), attempt, retry_in_ms = delay.as_millis() as u64, "cannot reach the Matrix homeserver; retrying");
                            delay
                        }
                        RequestFailure::RateLimited(wait) => {
                            tracing::warn!(network = %network, wait_ms = wait.as_millis() as u64, "login rate limited by the homeserver; waiting");
                            wait
                        }
                        RequestFailure::SessionGone | RequestFailure::Refused => {
                            tracing::error!(network = %network, homeserver = %options.homeserver, user = %options.user_id, error = %crate::error_chain(&error), retry_in_ms = options.backoff.1.as_millis() as u64, "cannot log in to Matrix; retrying (check the account settings)");
                            options.backoff.1
                        }
                    };
                    if !self.shared.pause(delay).await {
                        break;
                    }
                    continue;
                }
            };
            attempt = 0;
            let device = client.device_id().map(ToString::to_string).unwrap_or_default();
            match origin {
                Origin::Restored => {
                    tracing::info!(network = %network, user = %options.user_id, device = %device, "restored the saved Matrix session")
                }
                Origin::LoggedIn => {
                    tracing::info!(network = %network, user = %options.user_id, device = %device, "logged in to Matrix as a new device")
                }
            }
            *lock(&self.shared.client) = Some(client.clone());
            match self.session(&client).await {
                End::Shutdown => break,
                End::SessionGone => {
                    self.shared.connection.send_replace(Connection::Down);
                    *lock(&self.shared.client) = None;
                    let pause = match options.login {
                        Login::Password(_) | Login::Appservice(_) => {
                            tracing::error!(network = %network, user = %options.user_id, device = %device, "the homeserver no longer accepts the saved access token; logging in again (a new device)");
                            if let Err(error) = self.shared.store.reset() {
                                tracing::error!(network = %network, %error, "cannot remove the old session");
                            }
                            options.backoff.0
                        }
                        // The same token would be refused again: keep the store (and its
                        // keys) until a new token is configured; `connect` starts over then.
                        Login::AccessToken(_) => {
                            tracing::error!(network = %network, user = %options.user_id, device = %device, retry_in_ms = options.backoff.1.as_millis() as u64, "the homeserver no longer accepts the configured access token; configure a new one");
                            options.backoff.1
                        }
                    };
                    if !self.shared.pause(pause).await {
                        break;
                    }
                }
            }
        }
        self.shared.connection.send_replace(Connection::Closed);
    }

    /// Syncs until shutdown or until the access token is rejected.
    async fn session(&mut self, client: &Client) -> End {
        let shared = self.shared.clone();
        let options = &shared.options;
        let network = &options.network;
        let Some(own) = client.user_id().map(ToOwned::to_owned) else { return End::SessionGone };
        let mut attempt: u32 = 0;
        let mut up = false;
        // The reconnect of this session was counted (a sync whose gap could not be
        // fetched is made again; it is still the same reconnect).
        let mut reconnect_counted = false;
        let mut pending: Vec<Pending> = Vec::new();
        // The events handed over early from the response being handled ([`early`]).
        let mut early: HashSet<OwnedEventId> = HashSet::new();
        // The filter's id once uploaded (tried once a session; inline when that failed).
        let (mut filter_id, mut filter_tried) = (None, false);
        let mut token = match self.resume_position(client, &own, &mut pending).await {
            Ok(token) => token,
            Err(end) => return end,
        };
        loop {
            if token.is_some() && !filter_tried {
                filter_tried = true;
                filter_id = upload_filter(client, network).await;
            }
            let settings = sync_settings(options.sync_timeout, up, &pending, &token, &filter_id);
            let result = tokio::select! {
                () = shared.shutdown.cancelled() => return End::Shutdown,
                result = client.sync_once_request(settings) => result,
            };
            let since = token.as_deref();
            let mark = shared.sends.started();
            let first_of_session = !up;
            let response = match result {
                Ok(response) => {
                    if first_of_session && self.was_up && !reconnect_counted {
                        reconnect_counted = true;
                        // Counted before the messages are handed over, so whoever reads one knows.
                        shared.reconnects.fetch_add(1, Ordering::Relaxed);
                        tracing::info!(network = %network, "reconnected to the Matrix homeserver");
                    }
                    // The first sync's history is skipped ([`Self::deliver`]).
                    if since.is_some() {
                        self.deliver_early(client, &own, &response, &mut early).await;
                    }
                    // A command handed over early is answered before matrix-sdk's work on
                    // the response (CPU and SQLite) competes with the homeserver for the
                    // machine ([`answers`]). Neither this bounded wait nor that work is
                    // cut short by a shutdown: what was handed over early is only safe
                    // once the position after it is saved.
                    if self.commanded.swap(false, Ordering::Relaxed) {
                        shared.sends.answered(mark).await;
                    }
                    let processed = client.sync_once_process(response).await;
                    shared.processed.send_modify(|count| *count += 1);
                    processed
                }
                Err(error) => Err(error),
            };
            let response = match response {
                Ok(response) => response,
                Err(error) => {
                    let delay = match self.wait_after(&error, &mut attempt, up) {
                        Ok(delay) => delay,
                        Err(end) => return end,
                    };
                    if up {
                        up = false;
                        reconnect_counted = false;
                        shared.connection.send_replace(Connection::Down);
                    }
                    if !shared.pause(delay).await {
                        return End::Shutdown;
                    }
                    continue;
                }
            };
            // Answers from here on are to what the rest of the response hands over.
            let mark = shared.sends.started();
            let handled = async {
                self.deliver(client, &own, &response, since, &early, &mut pending).await?;
                self.retry_pending(client, &own, &mut pending).await;
                self.invites(client, &response, first_of_session).await;
                self.forget_left(&response, since).await;
                if first_of_session {
                    self.join_configured(client).await;
                    self.leave_pending(client).await;
                }
                Ok(())
            };
            let handled = tokio::select! {
                () = shared.shutdown.cancelled() => return End::Shutdown,
                handled = handled => handled,
            };
            if let Err(end) = handled {
                return end;
            }
            // The daemon's task that reads what was handed over was woken on this thread
            // and waits behind this one: let it run first (not a point where shutdown
            // can cut in, so the position below is saved whatever happens meanwhile).
            tokio::task::yield_now().await;
            if let Err(error) = shared.store.save_sync_token(&response.next_batch) {
                tracing::error!(network = %network, %error, "cannot save the sync position; a restart may deliver recent messages again");
            }
            token = Some(response.next_batch);
            early.clear();
            // A command's answer goes out before the next long poll ([`answers`]).
            if self.commanded.swap(false, Ordering::Relaxed) {
                tokio::select! {
                    () = shared.shutdown.cancelled() => return End::Shutdown,
                    () = shared.sends.answered(mark) => {}
                }
            }
            self.keep_shared_position(token.as_deref()).await;
            attempt = 0;
            if first_of_session {
                up = true;
                self.was_up = true;
                shared.connection.send_replace(Connection::Up);
            }
        }
    }

    /// Where this session's syncs start: the saved position (`None`: none saved, so the
    /// first sync's history is skipped), moved on to where matrix-sdk's own store is when
    /// that is ahead, after catching up on what lies between.
    async fn resume_position(
        &self,
        client: &Client,
        own: &UserId,
        pending: &mut Vec<Pending>,
    ) -> Result<Option<String>, End> {
        let shared = &self.shared;
        let network = &shared.options.network;
        let token = shared.store.load_sync_token().unwrap_or_else(|error| {
            tracing::error!(network = %network, %error, "cannot read the sync position; starting from now");
            None
        });
        // Another daemon led since this one last synced (or this one never did): go on
        // from the position it handled, not from this `store_dir`'s own.
        if let Some(kept) = self.shared_position().await?
            && token.as_ref() != Some(&kept)
        {
            tracing::info!(network = %network, "going on from the sync position the last leading daemon handled");
            if let Err(error) = shared.store.save_sync_token(&kept) {
                tracing::error!(network = %network, %error, "cannot save the sync position; a restart may deliver recent messages again");
            }
            return Ok(Some(kept));
        }
        if token.is_none() {
            tracing::info!(network = %network, "no sync position saved: the first sync's history is skipped");
        }
        if let Some(ours) = token.clone()
            && let Some(theirs) = processed_position(client).await
            && theirs != ours
        {
            self.catch_up(client, own, &ours, &theirs, pending).await?;
            if let Err(error) = shared.store.save_sync_token(&theirs) {
                tracing::error!(network = %network, %error, "cannot save the sync position; a restart may deliver recent messages again");
            }
            return Ok(Some(theirs));
        }
        Ok(token)
    }

    /// The handled position kept in the daemon's shared database
    /// ([`SyncPositions`](super::positions::SyncPositions)), when
    /// it has one: read until it can be (a takeover must not start from a position of its
    /// own), or until shutdown.
    async fn shared_position(&self) -> Result<Option<String>, End> {
        let shared = &self.shared;
        let Some(positions) = shared.options.positions.clone() else { return Ok(None) };
        let network = shared.options.network.to_string();
        let mut attempt: u32 = 0;
        loop {
            let (positions, name) = (positions.clone(), network.clone());
            let read = tokio::task::spawn_blocking(move || positions.load(&name))
                .await
                .unwrap_or_else(|e| Err(e.to_string()));
            match read {
                Ok(kept) => return Ok(kept),
                Err(error) => {
                    attempt = attempt.saturating_add(1);
                    let delay =
                        crate::supervise::backoff(shared.options.backoff, attempt, &shared.options.network);
                    tracing::error!(network = %network, %error, retry_in_ms = delay.as_millis() as u64, "cannot read the sync position kept in the database; trying again");
                    if !shared.pause(delay).await {
                        return Err(End::Shutdown);
                    }
                }
            }
        }
    }

    /// Keeps `token` (the position after a response whose messages were handed over and
    /// whose commands were answered) in the daemon's shared database, when it has one and
    /// this daemon still leads. A failure is logged: a takeover would then go on from an
    /// older position (what the old leader committed is not applied twice; see
    /// `seen_messages`).
    async fn keep_shared_position(&self, token: Option<&str>) {
        let options = &self.shared.options;
        let (Some(positions), Some(token)) = (options.positions.clone(), token) else { return };
        if !options.may_send.now() {
            return;
        }
        let (network, token) = (options.network.to_string(), token.to_owned());
        // The daemon's database answers in a millisecond or two; off this task's thread,
        // and waited for, so the positions are kept in order.
        let kept =
            tokio::task::spawn_blocking(move || positions.keep(&network, &token).map_err(|e| (network, e)))
                .await;
        if let Ok(Err((network, error))) = kept {
            tracing::error!(network = %network, %error, "cannot keep the sync position in the database; a takeover would go on from an older one");
        }
    }

    /// How long to wait after a failed sync, logged; `attempt` counts the failures in a
    /// row (a rate limit is not one). A session the homeserver ended ends here.
    fn wait_after(&self, error: &matrix_sdk::Error, attempt: &mut u32, up: bool) -> Result<Duration, End> {
        let options = &self.shared.options;
        let network = &options.network;
        match retry::classify(error) {
            RequestFailure::SessionGone => Err(End::SessionGone),
            RequestFailure::RateLimited(wait) => {
                tracing::warn!(network = %network, wait_ms = wait.as_millis() as u64, "sync rate limited by the homeserver; waiting");
                Ok(wait)
            }
            failure => {
                *attempt = attempt.saturating_add(1);
                let attempt = *attempt;
                let delay = crate::supervise::backoff(options.backoff, attempt, network);
                if up {
                    tracing::warn!(network = %network, error = %crate::error_chain(error), "lost the Matrix homeserver; reconnecting");
                }
                if failure == RequestFailure::Connection {
                    tracing::info!(network = %network, error = %crate::error_chain(error), attempt, retry_in_ms = delay.as_millis() as u64, "cannot reach the Matrix homeserver; retrying");
                } else {
                    tracing::error!(network = %network, error = %crate::error_chain(error), attempt, retry_in_ms = delay.as_millis() as u64, "sync failed; retrying");
                }
                Ok(delay)
            }
        }
    }

    /// Forgets the rooms the bot is no longer in: their direct chats and what was known
    /// of them.
    async fn forget_left(&self, response: &SyncResponse, since: Option<&str>) {
        for room in response.rooms.left.keys() {
            if since.is_some() {
                tracing::info!(network = %self.shared.options.network, room = %room, "no longer in a room");
            }
            self.shared.dms.lock().await.retain(|_, dm| dm != room);
            self.shared.facts.forget(room);
            self.shared.present.forget(room);
        }
    }

    /// Hands over the messages of every room whose update is nothing but plain messages
    /// ([`early`]), from the response as the homeserver sent it, before matrix-sdk
    /// processes it. Each is noted in `early`, so that [`Self::deliver`] (and a sync
    /// made again from the same position) skips it.
    async fn deliver_early(
        &self,
        client: &Client,
        own: &UserId,
        response: &sync_events::v3::Response,
        early: &mut HashSet<OwnedEventId>,
    ) {
        for (room_id, update) in &response.rooms.join {
            if !early::plain_messages_only(update) {
                continue;
            }
            let Some(room) = client.get_room(room_id).filter(|room| {
                room.state() == RoomState::Joined
                    && matches!(room.encryption_state(), EncryptionState::NotEncrypted)
            }) else {
                continue;
            };
            for raw in &update.timeline.events {
                let event = TimelineEvent::from_plaintext(raw.clone());
                let Some(id) = event.event_id() else { continue };
                if early.insert(id)
                    && let Read::Message(received) = inbound::read(&event, own)
                {
                    self.hand_over(&room, *received).await;
                }
            }
        }
    }

    /// Hands every new message in the response to the daemon, in timeline order per room,
    /// each cut-short timeline preceded by its gap, but those in `early` (handed over
    /// already). `since` is the position the response was synced from (none: the first
    /// sync, whose history is skipped). Gaps are all fetched before anything is handed
    /// over; while one cannot be, they are fetched again after a pause, for the same
    /// response: matrix-sdk has processed it, and answers a sync made again from the same
    /// position with nothing ("Got the same sync response twice"). Ends only when all is
    /// handed over, the session is gone or the daemon shuts down.
    async fn deliver(
        &self,
        client: &Client,
        own: &UserId,
        response: &SyncResponse,
        since: Option<&str>,
        early: &HashSet<OwnedEventId>,
        pending: &mut Vec<Pending>,
    ) -> Result<(), End> {
        let network = &self.shared.options.network;
        let Some(since) = since else {
            let skipped: usize = response.rooms.joined.values().map(|u| u.timeline.events.len()).sum();
            tracing::debug!(network = %network, skipped, "skipped the first sync's history");
            return Ok(());
        };
        let mut attempt: u32 = 0;
        let rooms = 'fetch: loop {
            let mut rooms = Vec::new();
            for (room_id, update) in &response.rooms.joined {
                self.shared.facts.update(room_id, update);
                let Some(room) = client.get_room(room_id) else { continue };
                self.shared.present.update(&room, super::room_facts::state_changed(update)).await;
                let gap = if update.timeline.limited {
                    match self.gap(&room, update.timeline.prev_batch.as_deref(), since).await {
                        Ok(gap) => gap,
                        Err(failure) => {
                            self.pause_after(failure, &mut attempt).await?;
                            continue 'fetch;
                        }
                    }
                } else {
                    Vec::new()
                };
                rooms.push((room, gap));
            }
            break rooms;
        };
        for (room, gap) in rooms {
            let timeline = &response.rooms.joined[room.room_id()].timeline.events;
            for event in gap.iter().chain(timeline) {
                if !event.event_id().is_some_and(|id| early.contains(&id)) {
                    self.deliver_event(&room, own, event, pending).await;
                }
            }
        }
        Ok(())
    }

    /// Hands over what matrix-sdk took in but this loop did not: matrix-sdk saves its
    /// position (`theirs`) as it processes a response, this loop its own (`ours`) only
    /// once the response is handed over, so a stop in between leaves matrix-sdk ahead,
    /// and it would answer a sync from `ours` with nothing. Each joined room's events
    /// between the two are fetched ([`gap`]) and handed over; the daemon drops the moves
    /// it already has by event id. Ends when all is handed over, the session is gone or
    /// the daemon shuts down.
    async fn catch_up(
        &self,
        client: &Client,
        own: &UserId,
        ours: &str,
        theirs: &str,
        pending: &mut Vec<Pending>,
    ) -> Result<(), End> {
        let network = &self.shared.options.network;
        let mut attempt: u32 = 0;
        'again: loop {
            let mut rooms = Vec::new();
            for room in client.joined_rooms() {
                match gap::fetch(&room, theirs, ours).await {
                    Ok(gap) => {
                        if gap.truncated {
                            tracing::error!(network = %network, room = %room.room_id(), fetched = gap.events.len(), "too many messages from just before the last stop: only the newest were fetched; older ones were not delivered");
                        }
                        rooms.push((room, gap.events));
                    }
                    Err(error) => match retry::classify(&error) {
                        RequestFailure::Refused => {
                            tracing::error!(network = %network, room = %room.room_id(), %error, "the homeserver refused the messages from just before the last stop; they were not delivered");
                        }
                        failure => {
                            tracing::warn!(network = %network, room = %room.room_id(), %error, "cannot fetch the messages from just before the last stop yet; trying again");
                            self.pause_after(failure, &mut attempt).await?;
                            continue 'again;
                        }
                    },
                }
            }
            let messages: usize = rooms.iter().map(|(_, events)| events.len()).sum();
            tracing::info!(network = %network, messages, "handing over what came in just before the last stop (taken in, not yet handed over)");
            for (room, events) in rooms {
                for event in &events {
                    self.deliver_event(&room, own, event, pending).await;
                }
            }
            return Ok(());
        }
    }

    /// Waits before trying again after `failure`: what a rate limit asks, or the next
    /// step of the backoff (`attempt` counts them). Ends the session instead when the
    /// access token is gone or the daemon shuts down.
    async fn pause_after(&self, failure: RequestFailure, attempt: &mut u32) -> Result<(), End> {
        let options = &self.shared.options;
        let delay = match failure {
            RequestFailure::SessionGone => return Err(End::SessionGone),
            RequestFailure::RateLimited(wait) => wait,
            RequestFailure::Connection | RequestFailure::Refused => {
                *attempt = attempt.saturating_add(1);
                crate::supervise::backoff(options.backoff, *attempt, &options.network)
            }
        };
        if self.shared.pause(delay).await { Ok(()) } else { Err(End::Shutdown) }
    }

    /// The events of a room's gap, oldest first. A gap the homeserver refuses to give is
    /// logged and left out; one it cannot give now fails the delivery.
    async fn gap(
        &self,
        room: &Room,
        prev_batch: Option<&str>,
        since: &str,
    ) -> Result<Vec<TimelineEvent>, RequestFailure> {
        let network = &self.shared.options.network;
        let room_id = room.room_id();
        let Some(prev_batch) = prev_batch else {
            tracing::error!(network = %network, room = %room_id, limit = TIMELINE_LIMIT, "the homeserver cut this room's timeline short and gave no prev_batch; older messages since the last sync were not delivered");
            return Ok(Vec::new());
        };
        match gap::fetch(room, prev_batch, since).await {
            Ok(gap) => {
                if gap.truncated {
                    tracing::error!(network = %network, room = %room_id, fetched = gap.events.len(), most_pages = gap::MOST_PAGES, page = gap::PAGE, "too many messages since the last sync: only the newest were fetched; older ones were not delivered");
                } else {
                    tracing::info!(network = %network, room = %room_id, fetched = gap.events.len(), "the homeserver cut this room's timeline short; fetched the gap since the last sync");
                }
                Ok(gap.events)
            }
            Err(error) => match retry::classify(&error) {
                RequestFailure::Refused => {
                    tracing::error!(network = %network, room = %room_id, %error, "the homeserver cut this room's timeline short and refused the messages before it; older messages since the last sync were not delivered");
                    Ok(Vec::new())
                }
                failure => {
                    tracing::warn!(network = %network, room = %room_id, %error, "cannot fetch the messages the homeserver left out of this room's timeline; syncing again");
                    Err(failure)
                }
            },
        }
    }

    /// Hands one timeline event over, or keeps it for later when it cannot be decrypted yet.
    async fn deliver_event(
        &self,
        room: &Room,
        own: &UserId,
        event: &TimelineEvent,
        pending: &mut Vec<Pending>,
    ) {
        let network = &self.shared.options.network;
        let room_id = room.room_id();
        match inbound::read(event, own) {
            Read::Message(received) => self.hand_over(room, *received).await,
            Read::Undecryptable { event_id, sender, session_id, reason } => {
                let grace = self.shared.options.decrypt_grace;
                tracing::warn!(network = %network, room = %room_id, event = ?event_id, sender = ?sender, session = ?session_id, reason = %reason, grace_ms = grace.as_millis() as u64, "cannot decrypt a message yet; waiting for its room key");
                pending.push(Pending {
                    room: room.clone(),
                    raw: event.raw().clone(),
                    event_id,
                    sender,
                    reason,
                    give_up_at: Instant::now() + grace,
                });
            }
            Read::Skip(why) => {
                tracing::trace!(network = %network, room = %room_id, event = ?event.event_id(), ?why, "skipped an event");
            }
        }
    }

    /// Hands one message, edit, reaction or redaction to the daemon ([`hand_over`]).
    async fn hand_over(&self, room: &Room, received: Received) {
        if hand_over(&self.shared, &self.inbound, room, received).await {
            self.commanded.store(true, Ordering::Relaxed);
        }
    }

    /// Tries again to decrypt messages waiting for their room key; gives up on those whose
    /// time is up, telling their room once.
    async fn retry_pending(&self, client: &Client, own: &UserId, pending: &mut Vec<Pending>) {
        let network = &self.shared.options.network;
        let mut waiting = Vec::new();
        for item in std::mem::take(pending) {
            let encrypted: &Raw<OriginalSyncRoomEncryptedEvent> = item.raw.cast_ref_unchecked();
            match item.room.decrypt_event(encrypted, None).await {
                Ok(event) if !event.kind.is_utd() => {
                    tracing::info!(network = %network, room = %item.room.room_id(), event = ?item.event_id, "decrypted a message once its room key arrived");
                    if let Read::Message(received) = inbound::read(&event, own) {
                        self.hand_over(&item.room, *received).await;
                    }
                }
                _ if Instant::now() >= item.give_up_at => self.give_up(client, item).await,
                _ => waiting.push(item),
            }
        }
        *pending = waiting;
    }

    async fn give_up(&self, client: &Client, item: Pending) {
        let network = &self.shared.options.network;
        let room_id = item.room.room_id().to_owned();
        tracing::error!(network = %network, room = %room_id, event = ?item.event_id, sender = ?item.sender, reason = %item.reason, device = ?client.device_id(), "cannot decrypt a message: the sender's device never shared its room key with this bot's device");
        if !lock(&self.shared.told_undecryptable).insert(room_id.clone()) {
            return;
        }
        let who = item.sender.as_ref().map_or_else(|| "someone".to_owned(), ToString::to_string);
        let prefix = &self.shared.options.prefix;
        let note = format!(
            "I could not decrypt a message from {who}: the key for it never reached my device. \
             If it was a command ({prefix}…), please send it again. (I say this once per room.)"
        );
        if let Err(error) = item.room.send(RoomMessageEventContent::notice_plain(note)).await {
            tracing::warn!(network = %network, room = %room_id, %error, "cannot tell the room about an undecryptable message");
        }
    }

    /// Accepts invites from the allow-list and declines the rest. On the first sync of a
    /// session every pending invite is looked at (one that failed before gets another go).
    async fn invites(&self, client: &Client, response: &SyncResponse, all_pending: bool) {
        let mut rooms: BTreeSet<OwnedRoomId> = response.rooms.invited.keys().cloned().collect();
        if all_pending {
            rooms.extend(client.invited_rooms().iter().map(|r| r.room_id().to_owned()));
        }
        for room_id in rooms {
            let Some(room) = client.get_room(&room_id).filter(|r| r.state() == RoomState::Invited) else {
                continue;
            };
            self.answer_invite(&room).await;
        }
    }

    async fn answer_invite(&self, room: &Room) {
        let network = &self.shared.options.network;
        let inviter = match room.invite_details().await {
            Ok(invite) => invite.inviter_id,
            Err(error) => {
                tracing::warn!(network = %network, room = %room.room_id(), %error, "cannot read an invite; ignoring it");
                return;
            }
        };
        let accept = self.shared.allow.allows(inviter.as_str());
        for attempt in 1..=3u32 {
            let result = if accept { room.join().await } else { room.leave().await };
            let Err(error) = result else {
                if accept {
                    tracing::info!(network = %network, room = %room.room_id(), inviter = %inviter, "accepted an invite");
                } else {
                    tracing::warn!(network = %network, room = %room.room_id(), inviter = %inviter, "declined an invite from someone not in invite_allow");
                }
                return;
            };
            let delay = match retry::classify(&error) {
                RequestFailure::RateLimited(wait) => wait,
                RequestFailure::Connection => {
                    crate::supervise::backoff(self.shared.options.backoff, attempt, network)
                }
                RequestFailure::SessionGone | RequestFailure::Refused => {
                    tracing::warn!(network = %network, room = %room.room_id(), inviter = %inviter, %error, accept, "cannot answer an invite");
                    return;
                }
            };
            if !self.shared.pause(delay).await {
                return;
            }
        }
        tracing::warn!(network = %network, room = %room.room_id(), inviter = %inviter, accept, "cannot answer an invite now; trying again after the next reconnect");
    }

    /// Joins every configured room the bot is not in (after each login or reconnect).
    async fn join_configured(&self, client: &Client) {
        let network = &self.shared.options.network;
        let rooms: Vec<String> = lock(&self.shared.rooms).iter().cloned().collect();
        for room in rooms {
            let Ok(target) = RoomOrAliasId::parse(&room) else {
                tracing::error!(network = %network, room = %room, "not a Matrix room id or alias; not joining");
                continue;
            };
            let joined = <&matrix_sdk::ruma::RoomId>::try_from(&*target)
                .ok()
                .and_then(|id| client.get_room(id))
                .is_some_and(|r| r.state() == RoomState::Joined);
            // Left (by `leave`) since the list was read: not joined again.
            if joined || !lock(&self.shared.rooms).contains(&room) {
                continue;
            }
            match client.join_room_by_id_or_alias(&target, &[]).await {
                Ok(joined) => {
                    tracing::info!(network = %network, room = %room, room_id = %joined.room_id(), "joined a configured room")
                }
                Err(error) => {
                    tracing::warn!(network = %network, room = %room, %error, "cannot join a configured room; trying again after the next reconnect")
                }
            }
        }
    }

    /// Leaves the rooms `leave` was asked to leave while logged out (or failed to leave).
    /// A room that still cannot be left is tried again after the next reconnect.
    async fn leave_pending(&self, client: &Client) {
        let rooms: Vec<String> = lock(&self.shared.leaving).iter().cloned().collect();
        for room in rooms {
            match self.shared.leave_room(client, &room).await {
                Ok(()) => {
                    lock(&self.shared.leaving).remove(&room);
                }
                Err(error) => {
                    tracing::warn!(network = %self.shared.options.network, room = %room, %error, "cannot leave a room; trying again after the next reconnect")
                }
            }
        }
    }
}

/// Hands one message, edit, reaction or redaction to the daemon (from a sync, or from an
/// appservice transaction); true when it is a command. It is private only when said by
/// the player of a private chat the bot can vouch for (`room_facts`, `vouch`): a room
/// that is merely of two, which someone else made or may read, is not, so a command
/// typed there gets no private answer there. A private chat has no operators; elsewhere
/// the sender operates the room with a power level of 50 or more (a room creator's is
/// unbounded).
pub(super) async fn hand_over(
    shared: &Shared,
    inbound: &mpsc::Sender<Inbound>,
    room: &Room,
    received: Received,
) -> bool {
    let Received { event_id, sender, text, rich, said, reply_to, thread } = received;
    // A ghost speaks for IRC: what it says came from the bridge (no echo, no loop).
    if shared.options.appservice.as_ref().is_some_and(|a| a.ghosts.is_ghost(sender.as_str())) {
        return false;
    }
    // A transaction and the sync both bring an appservice's events: the first one counts.
    if !shared.handed.first_time(&event_id) {
        tracing::trace!(network = %shared.options.network, event = %event_id, "an event already handed over");
        return false;
    }
    let private = shared.facts.private_with(room).await.as_deref() == Some(&*sender);
    let Sender { display_name, operator } = shared.facts.sender(room, &sender).await;
    // The prefix typed full width (`！`) starts a command too, as the daemon reads it.
    let command = said == Said::Message
        && spellbridge_core::grammar::strip_prefix(&text, &shared.options.prefix).is_some();
    let message = Inbound {
        display_name,
        private,
        operator,
        message_id: Some(event_id.to_string()),
        rich,
        said,
        reply_to: reply_to.map(|id| id.to_string()),
        thread: thread.map(|id| id.to_string()),
        ..Inbound::new(
            shared.options.network.clone(),
            RoomId::new(room.room_id().as_str()),
            transport::player(&sender),
            text,
        )
    };
    if inbound.send(message).await.is_err() {
        tracing::debug!("nobody reads inbound Matrix messages any more");
    }
    command
}

/// The next sync's request: at once until the session is up; then a long poll, but one
/// that wakes in time to give up on a message still waiting for its room key. With a
/// position, the uploaded filter (inline when it could not be uploaded).
fn sync_settings(
    long_poll: Duration,
    up: bool,
    pending: &[Pending],
    token: &Option<String>,
    filter_id: &Option<String>,
) -> SyncSettings {
    let mut timeout = if up { long_poll } else { Duration::ZERO };
    if let Some(first) = pending.iter().map(|p| p.give_up_at).min() {
        timeout = timeout.min(first.saturating_duration_since(Instant::now()));
    }
    let filter = match (token, filter_id) {
        (Some(_), Some(id)) => Filter::FilterId(id.clone()),
        _ => Filter::FilterDefinition(filter_definition(token.is_none())),
    };
    SyncSettings::new()
        .timeout(timeout)
        .filter(filter)
        .token(token.clone().map_or(SyncToken::NoToken, SyncToken::Specific))
}

/// The position matrix-sdk has processed responses up to (its store's sync token).
async fn processed_position(client: &Client) -> Option<String> {
    match client.state_store().get_kv_data(StateStoreDataKey::SyncToken).await {
        Ok(Some(StateStoreDataValue::SyncToken(token))) => Some(token),
        _ => None,
    }
}

/// The name the long-poll filter is saved under (matrix-sdk keeps the homeserver's id for
/// it in its store); a new definition needs a new name.
const FILTER_NAME: &str = "spellbridge-sync-1";

/// Uploads the long-poll filter (or finds its id from an earlier login), so that each
/// `/sync` names it by id and the homeserver need not parse and check it every time.
/// `None` (the filter then goes inline) when the homeserver would not take it.
async fn upload_filter(client: &Client, network: &NetworkId) -> Option<String> {
    match client.get_or_upload_filter(FILTER_NAME, filter_definition(false)).await {
        Ok(id) => Some(id),
        Err(error) => {
            tracing::warn!(network = %network, %error, "cannot upload the sync filter; sending it with every sync");
            None
        }
    }
}

/// The sync filter: a long timeline per room, except on the very first sync, whose
/// history is skipped anyway (one event per room keeps it small). Members are not
/// lazy-loaded: with lazy loading the homeserver works out, for every sync, which member
/// events to send along (Synapse: about 2.5 ms of each sync that brings the bot a
/// message, docs/benchmarks.md); without it a room's members come once, with its full
/// state, and then as they change. [`room_facts`](super::room_facts) counts them.
///
/// Presence, typing notices and read receipts are left out: the bot uses none of them,
/// and each would end its long poll for nothing.
fn filter_definition(first_ever: bool) -> FilterDefinition {
    let mut definition = FilterDefinition::default();
    definition.presence = EventFilter::ignore_all();
    definition.room.ephemeral = RoomEventFilter::ignore_all();
    let limit = if first_ever { 1 } else { TIMELINE_LIMIT };
    definition.room.timeline.limit = Some(UInt::from(limit));
    definition
}
