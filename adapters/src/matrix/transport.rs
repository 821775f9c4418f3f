//! The Matrix [`GameTransport`]: one supervised matrix-sdk client for one account.
//!
//! [`MatrixTransport::start`] spawns a supervisor (the private `sync` module) that logs in or
//! restores the saved session, joins the configured rooms, accepts invites from the
//! allow-list and runs the `/sync` loop, reconnecting with backoff when the homeserver
//! goes away. This file is the handle the daemon holds: [`GameTransport::recv`] reads
//! what the sync loop delivered; [`GameTransport::send`] renders rich text to HTML with
//! pills (an `m.emote` when acted, in a thread when the message names one) and sends it
//! with its own retries (a fixed transaction id, so a retry after a
//! lost response is not a second message): rate limits are waited out, a connection
//! failure is retried with backoff while the sync loop is up and reported as
//! [`TransportError::Disconnected`] at once while it is down (the daemon's outbox holds
//! the message until the reconnect). A private message goes to a private chat with the
//! player that the bot can vouch for (`vouch`: made by the bot or the player, invite-only,
//! history for members only, nobody else ever in it): one marked as a DM with them
//! (`m.direct`, as when they opened it), else another such room that no bridge or config
//! names; when there is none, one is created (`is_direct`, invite-only, history from the
//! invite on; unencrypted, so a client without encryption reads it, unless
//! the player is in an encrypted room with the bot or `dm_encryption` asks) and
//! [`Sent::opened_private`] says so (with a `matrix.to` link), for the daemon to tell the
//! room where the player asked. [`GameTransport::send_noted`] returns the event id sent
//! (a relayed line's, which the daemon maps back to its speaker); a message naming one it
//! answers (`Message::reply_to`) goes as a Matrix reply (`m.in_reply_to`).
//! A message with a picture (a table's board) goes as `m.image` (`picture`); a later part
//! of a story (`Message::story`: a Duel round revealed step by step, a Thaum phase) edits
//! the story's message in the room (`story`).
//! In appservice mode a relayed line from another network goes as its speaker's ghost,
//! and IRC members' changes are shown by their ghosts ([`GameTransport::mirror`];
//! `appservice::haunt`).
//! [`GameTransport::leave`] leaves at once, or right after the next login when not logged
//! in; a room left is no longer among those joined after a login.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use matrix_sdk::ruma::api::client::room::create_room::v3::{Request as CreateRoom, RoomPreset};
use matrix_sdk::ruma::events::relation::{Reply, Thread};
use matrix_sdk::ruma::events::room::encryption::RoomEncryptionEventContent;
use matrix_sdk::ruma::events::room::history_visibility::{
    HistoryVisibility, RoomHistoryVisibilityEventContent,
};
use matrix_sdk::ruma::events::room::message::{
    EmoteMessageEventContent, FormattedBody, MessageType, NoticeMessageEventContent, Relation,
    RoomMessageEventContent, TextMessageEventContent,
};
use matrix_sdk::ruma::events::{InitialStateEvent, Mentions};
use matrix_sdk::ruma::{
    EventId, OwnedRoomId, OwnedTransactionId, OwnedUserId, RoomAliasId, RoomOrAliasId, TransactionId, UserId,
};
use matrix_sdk::{Client, Room, RoomState};
use spellbridge_core::text::Segment;
use spellbridge_core::{
    Destination, GameTransport, Inbound, MemberChange, Message, NetworkId, PlayerId, RoomId, Sent,
    TransportError, Voice, Whisper,
};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::answers::Sends;
use super::appservice::haunt::Haunt;
use super::appservice::server::{self, Api};
use super::appservice::txns::{InMemory, SeenTransactions};
use super::format;
use super::handed::Handed;
use super::invite::InviteAllow;
use super::options::MatrixOptions;
use super::picture::{self, Pictures};
use super::present::Present;
use super::retry::{self, RequestFailure};
use super::room_facts::RoomFacts;
use super::spoiled::SpoiledRooms;
use super::store::StoreDir;
use super::story::Stories;
use super::sync::Supervisor;
use crate::network::Resolved;

pub use crate::supervise::Connection;
use crate::supervise::{Watched, restarting};

/// How many times `send` (or `join`, or creating a direct room) tries when the homeserver
/// cannot be reached while the sync loop is up.
const REQUEST_ATTEMPTS: u32 = 5;
/// How many rate-limit waits one request sits out before giving up.
const RATE_LIMIT_WAITS: u32 = 10;

/// State shared between the transport handle and the supervisor.
pub(super) struct Shared {
    pub(super) options: MatrixOptions,
    pub(super) allow: InviteAllow,
    pub(super) store: StoreDir,
    /// The logged-in client; `None` before the first login and while logging in again.
    pub(super) client: Mutex<Option<Client>>,
    /// Rooms to be in: the configured ones plus those joined since (ids or aliases).
    pub(super) rooms: Mutex<BTreeSet<String>>,
    /// Rooms to leave once logged in (ids or aliases): `leave` was called while logged
    /// out, or leaving failed.
    pub(super) leaving: Mutex<BTreeSet<String>>,
    /// The direct room used for each player, once found or created.
    pub(super) dms: tokio::sync::Mutex<HashMap<OwnedUserId, OwnedRoomId>>,
    /// Rooms already told that a message could not be decrypted.
    pub(super) told_undecryptable: Mutex<HashSet<OwnedRoomId>>,
    /// The messages being sent (the sync loop holds its next long poll for answers).
    pub(super) sends: Sends,
    /// What is known of rooms and their members until their state changes.
    pub(super) facts: RoomFacts,
    /// Each room's joined members, for names typed in commands.
    pub(super) present: Present,
    /// The events lately handed to the daemon (by a sync or a transaction).
    pub(super) handed: Handed,
    /// The last board picture of each table in each room (see `picture`).
    pub(super) pictures: Pictures,
    /// The message each story lately told in each room is told in (see `story`).
    pub(super) stories: Stories,
    /// Appservice mode: the ghosts (relayed lines sent as their speakers, IRC members
    /// mirrored).
    pub(super) haunt: Option<Arc<Haunt>>,
    pub(super) connection: watch::Sender<Connection>,
    /// How many sync responses matrix-sdk has processed (and sent the crypto machine's
    /// requests for): a new encrypted room waits for the one that brings it.
    pub(super) processed: watch::Sender<u64>,
    pub(super) reconnects: AtomicU64,
    pub(super) shutdown: CancellationToken,
}

/// The longest a send waits for the sync loop before it goes on all the same (matrix-sdk's
/// own wait for a pending keys query).
const KEYS_WAIT: Duration = Duration::from_secs(5);

pub(super) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    pub(super) fn client(&self) -> Option<Client> {
        lock(&self.client).clone()
    }

    /// Waits, unless shutting down; false if shutdown came first.
    pub(super) async fn pause(&self, delay: Duration) -> bool {
        tokio::select! {
            () = self.shutdown.cancelled() => false,
            () = tokio::time::sleep(delay) => true,
        }
    }

    fn refused(&self, reason: impl Into<String>) -> TransportError {
        TransportError::Refused { network: self.options.network.clone(), reason: reason.into() }
    }

    fn disconnected(&self, reason: impl Into<String>) -> TransportError {
        TransportError::Disconnected { network: self.options.network.clone(), reason: reason.into() }
    }

    /// Runs a request until it succeeds, waiting out rate limits and retrying connection
    /// failures with backoff; maps the final failure to a [`TransportError`].
    pub(super) async fn with_retry<T, F, Fut>(&self, what: &str, mut request: F) -> Result<T, TransportError>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = matrix_sdk::Result<T>>,
    {
        let network = &self.options.network;
        let (mut attempts, mut waits) = (0u32, 0u32);
        loop {
            let error = match request().await {
                Ok(value) => return Ok(value),
                Err(error) => error,
            };
            let delay = match retry::classify(&error) {
                RequestFailure::RateLimited(wait) if waits < RATE_LIMIT_WAITS => {
                    waits += 1;
                    tracing::warn!(network = %network, wait_ms = wait.as_millis() as u64, "rate limited by the homeserver ({what}); waiting");
                    wait
                }
                // While the sync loop cannot reach the homeserver either, give up at once:
                // the daemon keeps the message in its outbox and sends it after the reconnect.
                RequestFailure::Connection
                    if attempts + 1 < REQUEST_ATTEMPTS && *self.connection.borrow() == Connection::Up =>
                {
                    attempts += 1;
                    let delay = crate::supervise::backoff(self.options.backoff, attempts, network);
                    tracing::info!(network = %network, %error, attempt = attempts, delay_ms = delay.as_millis() as u64, "cannot {what}; retrying");
                    delay
                }
                RequestFailure::RateLimited(_) | RequestFailure::Connection | RequestFailure::SessionGone => {
                    return Err(self.disconnected(format!("cannot {what}: {error}")));
                }
                RequestFailure::Refused => return Err(self.refused(format!("cannot {what}: {error}"))),
            };
            if !self.pause(delay).await {
                return Err(self.disconnected("shutting down"));
            }
        }
    }

    /// The id of `room`: itself, or the room its alias names (asked of the homeserver).
    pub(super) async fn room_id_of(
        &self,
        client: &Client,
        room: &str,
    ) -> Result<OwnedRoomId, TransportError> {
        let target = RoomOrAliasId::parse(room)
            .map_err(|e| self.refused(format!("`{room}` is not a Matrix room id or alias: {e}")))?;
        match <&matrix_sdk::ruma::RoomId>::try_from(&*target) {
            Ok(id) => Ok(id.to_owned()),
            Err(alias) => {
                let resolve = || async { client.resolve_room_alias(alias).await.map_err(Into::into) };
                Ok(self.with_retry("resolve the room alias", resolve).await?.room_id)
            }
        }
    }

    /// Leaves `room` (an id, or an alias resolved first) if the bot is joined, invited or
    /// knocking there; a room it is not in is left already.
    pub(super) async fn leave_room(&self, client: &Client, room: &str) -> Result<(), TransportError> {
        let id = self.room_id_of(client, room).await?;
        let Some(joined) = client
            .get_room(&id)
            .filter(|r| matches!(r.state(), RoomState::Joined | RoomState::Invited | RoomState::Knocked))
        else {
            return Ok(());
        };
        self.with_retry("leave the room", || joined.leave()).await?;
        tracing::info!(network = %self.options.network, room = %room, room_id = %id, "left a room");
        Ok(())
    }
}

/// A handle on one Matrix account.
pub struct MatrixTransport {
    shared: Arc<Shared>,
    inbound: tokio::sync::Mutex<mpsc::Receiver<Inbound>>,
}

impl MatrixTransport {
    /// Starts the supervisor; it runs until `shutdown` is cancelled. It never gives up on
    /// its own: an unreachable homeserver or a refused login is logged and retried.
    pub fn start(
        options: MatrixOptions,
        shutdown: CancellationToken,
    ) -> (Arc<MatrixTransport>, tokio::task::JoinHandle<()>) {
        MatrixTransport::start_with(options, shutdown, None)
    }

    /// [`MatrixTransport::start`], keeping the appservice transactions taken in through
    /// `txns` (appservice mode; in memory when `None`). In appservice mode the
    /// appservice API's listener runs beside the supervisor, until `shutdown`.
    pub fn start_with(
        options: MatrixOptions,
        shutdown: CancellationToken,
        txns: Option<Arc<dyn SeenTransactions>>,
    ) -> (Arc<MatrixTransport>, tokio::task::JoinHandle<()>) {
        let (inbound_tx, inbound_rx) = mpsc::channel(1024);
        let (connection, _) = watch::channel(Connection::Down);
        let allow = options.invite_allow();
        for entry in allow.rejected() {
            tracing::warn!(network = %options.network, entry = %entry, "ignoring an invite_allow entry that is not @user:server, *:server or *");
        }
        let shared = Arc::new(Shared {
            store: StoreDir::new(&options.store_dir),
            pictures: Pictures::new(StoreDir::new(&options.store_dir).pictures_path()),
            stories: Stories::default(),
            haunt: options.appservice.clone().map(|appservice| {
                Arc::new(Haunt::new(appservice, Some(StoreDir::new(&options.store_dir).ghosts_path())))
            }),
            rooms: Mutex::new(options.rooms.iter().cloned().collect()),
            leaving: Mutex::new(BTreeSet::new()),
            client: Mutex::new(None),
            dms: tokio::sync::Mutex::new(HashMap::new()),
            told_undecryptable: Mutex::new(HashSet::new()),
            sends: Sends::default(),
            facts: RoomFacts::new(SpoiledRooms::new(Some(StoreDir::new(&options.store_dir).spoiled_path()))),
            handed: Handed::default(),
            present: Present::default(),
            connection,
            processed: watch::Sender::new(0),
            reconnects: AtomicU64::new(0),
            shutdown,
            allow,
            options,
        });
        let api = shared.options.appservice.clone().map(|options| {
            Arc::new(Api {
                shared: shared.clone(),
                inbound: inbound_tx.clone(),
                txns: txns.unwrap_or_else(|| Arc::new(InMemory::default())),
                options,
            })
        });
        // A new supervisor if one ends early or panics ([`restarting`]).
        let supervising = {
            let shared = shared.clone();
            async move {
                let watched = Watched {
                    network: &shared.options.network,
                    connection: &shared.connection,
                    reconnects: &shared.reconnects,
                    backoff: shared.options.backoff,
                };
                let stop = shared.shutdown.clone();
                restarting(watched, stop, || Supervisor::new(shared.clone(), inbound_tx.clone()).run()).await;
            }
        };
        let handle = tokio::spawn(async move {
            match api {
                Some(api) => {
                    let ((), ()) = tokio::join!(supervising, server::serve(api));
                }
                None => supervising.await,
            }
        });
        let transport = Arc::new(MatrixTransport { shared, inbound: tokio::sync::Mutex::new(inbound_rx) });
        (transport, handle)
    }

    /// Watches the connection state (tests wait for [`Connection::Up`]).
    pub fn connection(&self) -> watch::Receiver<Connection> {
        self.shared.connection.subscribe()
    }

    /// Waits until logged in with a successful sync, at most `limit`.
    pub async fn wait_up(&self, limit: Duration) -> bool {
        let mut connection = self.connection();
        tokio::time::timeout(limit, connection.wait_for(|l| *l == Connection::Up))
            .await
            .is_ok_and(|r| r.is_ok())
    }

    /// How many times the sync came back after failing.
    pub fn reconnects(&self) -> u64 {
        self.shared.reconnects.load(Ordering::Relaxed)
    }

    /// The bot's device id, once logged in.
    pub fn device_id(&self) -> Option<String> {
        self.shared.client().and_then(|c| c.device_id().map(|d| d.to_string()))
    }

    /// The rooms the bot is in now (room ids).
    pub fn joined_rooms(&self) -> Vec<RoomId> {
        let Some(client) = self.shared.client() else { return Vec::new() };
        client.joined_rooms().iter().map(|r| RoomId::new(r.room_id().as_str())).collect()
    }

    /// The matrix-sdk client, once logged in: for tools and tests that need more than the
    /// [`GameTransport`] offers (creating rooms, inviting).
    pub fn client(&self) -> Option<Client> {
        self.shared.client()
    }

    /// The room a bridge's alias points to now (a room id is itself): asked of the
    /// homeserver once logged in; [`Resolved::NotYet`] before that or while it cannot be
    /// reached, [`Resolved::Unknown`] when it says the alias points nowhere.
    pub async fn resolve_room(&self, room: &str) -> Resolved {
        let Ok(alias) = RoomAliasId::parse(room) else { return Resolved::Same };
        let Some(client) = self.shared.client() else {
            return Resolved::NotYet("not logged in to the homeserver yet".to_owned());
        };
        match client.resolve_room_alias(&alias).await {
            Ok(answer) => Resolved::Room(answer.room_id.to_string()),
            Err(error) => match retry::classify_http(&error) {
                RequestFailure::Refused => Resolved::Unknown(error.to_string()),
                _ => Resolved::NotYet(error.to_string()),
            },
        }
    }

    fn refused(&self, reason: impl Into<String>) -> TransportError {
        self.shared.refused(reason)
    }

    fn disconnected(&self, reason: impl Into<String>) -> TransportError {
        self.shared.disconnected(reason)
    }

    fn logged_in(&self) -> Result<Client, TransportError> {
        self.shared.client().ok_or_else(|| self.disconnected("not logged in to the homeserver yet"))
    }

    /// Waits (at most [`KEYS_WAIT`]) for the session's first sync to be processed. A
    /// message sent into an encrypted room before that (the outbox after a restart) takes
    /// the crypto machine's key-claim lock and waits for a keys query that only the sync
    /// loop sends, which waits for that lock: matrix-sdk gives up after 5 s.
    async fn until_synced(&self) {
        let mut connection = self.shared.connection.subscribe();
        let _ = tokio::time::timeout(KEYS_WAIT, connection.wait_for(|c| *c != Connection::Down)).await;
    }

    /// The private chat with `user`, and whether it was just created: the one used
    /// before, else one the sdk knows as a DM with them (`m.direct`: they opened it, or the
    /// bot did), else another joined room that is not one of the rooms the bot is
    /// configured or bridged into, else a new one (see
    /// [`MatrixTransport::create_direct_room`]). Each must be a private chat with `user`
    /// that the bot can vouch for (`room_facts`, `vouch`): a room someone else made, that
    /// anyone may join or read, or that a third person has ever been in is never used,
    /// for what is said privately (a link code, a Duel spell) would be read there.
    async fn direct_room(&self, client: &Client, user: &UserId) -> Result<(Room, bool), TransportError> {
        // Held across the creation so two messages to one player make one room.
        let mut dms = self.shared.dms.lock().await;
        let facts = &self.shared.facts;
        if let Some(room) =
            dms.get(user).and_then(|id| client.get_room(id)).filter(|r| r.state() == RoomState::Joined)
            && facts.private_with(&room).await.as_deref() == Some(user)
        {
            return Ok((room, false));
        }
        let named = lock(&self.shared.rooms).clone();
        let dm_rooms = client.get_dm_rooms(user);
        let others = client.joined_rooms().into_iter().filter(|room| {
            let alias = room.canonical_alias().map(|a| a.to_string());
            !named.contains(room.room_id().as_str()) && !alias.is_some_and(|a| named.contains(&a))
        });
        for room in dm_rooms.into_iter().filter(|r| r.state() == RoomState::Joined).chain(others) {
            if facts.private_with(&room).await.as_deref() == Some(user) {
                tracing::info!(network = %self.shared.options.network, player = %user, room = %room.room_id(), "using a private chat the bot can vouch for");
                dms.insert(user.to_owned(), room.room_id().to_owned());
                return Ok((room, false));
            }
        }
        let room = self.create_direct_room(client, user).await?;
        dms.insert(user.to_owned(), room.room_id().to_owned());
        Ok((room, true))
    }

    /// Creates a private chat with `user` that the bot can vouch for: `is_direct` (marked in
    /// the bot's `m.direct`), invite-only (the trusted private chat preset), its history
    /// readable from the invite on by those invited or joined only (`invited`: the player
    /// reads what was sent before they accepted; nobody reads what was sent before they were
    /// invited); encrypted when `dm_encryption` is set or the player is in an encrypted
    /// room with the bot (where the game they play likely is: what is said privately is
    /// kept as well as what is said there), else unencrypted, so a client without
    /// encryption can read it.
    async fn create_direct_room(&self, client: &Client, user: &UserId) -> Result<Room, TransportError> {
        let network = &self.shared.options.network;
        let encrypted = self.shared.options.dm_encryption || shares_encrypted_room(client, user).await;
        let create = || {
            let mut request = CreateRoom::new();
            request.invite = vec![user.to_owned()];
            request.is_direct = true;
            request.preset = Some(RoomPreset::TrustedPrivateChat);
            let history = RoomHistoryVisibilityEventContent::new(HistoryVisibility::Invited);
            request.initial_state = vec![InitialStateEvent::with_empty_state_key(history).to_raw_any()];
            if encrypted {
                let encryption = RoomEncryptionEventContent::with_recommended_defaults();
                request.initial_state.push(InitialStateEvent::with_empty_state_key(encryption).to_raw_any());
            }
            client.create_room(request)
        };
        let mut processed = self.shared.processed.subscribe();
        let room = self.with_retry("create a direct room", create).await?;
        tracing::info!(network = %network, player = %user, room = %room.room_id(), encrypted, "created a direct room");
        if encrypted {
            // Not before the sync that brings the room is processed: it queries the
            // player's keys, which the first message waits for (see `until_synced`).
            let known = async {
                while processed.changed().await.is_ok() {
                    if room.get_member_no_sync(user).await.is_ok_and(|member| member.is_some()) {
                        return;
                    }
                }
            };
            let _ = tokio::time::timeout(KEYS_WAIT, known).await;
        }
        Ok(room)
    }

    async fn with_retry<T, F, Fut>(&self, what: &str, request: F) -> Result<T, TransportError>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = matrix_sdk::Result<T>>,
    {
        self.shared.with_retry(what, request).await
    }
}

#[async_trait]
impl GameTransport for MatrixTransport {
    fn network(&self) -> &NetworkId {
        &self.shared.options.network
    }

    fn members_named(&self, room: &RoomId, name: &str) -> Vec<spellbridge_core::Member> {
        self.shared.present.named(room.as_str(), name)
    }

    fn shows_pictures(&self) -> bool {
        self.shared.options.board_images
    }

    /// The bot opens a direct chat with a player who has none ([`MatrixTransport::direct_room`]).
    fn whisper(&self) -> Whisper {
        Whisper::Direct
    }

    async fn recv(&self) -> Option<Inbound> {
        self.inbound.lock().await.recv().await
    }

    /// Joins now when logged in; the room is also remembered and joined again after every
    /// new login. Accepts a room id (`!…`, never parsed further) or an alias (`#…:server`).
    async fn join(&self, room: &RoomId) -> Result<(), TransportError> {
        let target = RoomOrAliasId::parse(room.as_str())
            .map_err(|e| self.refused(format!("`{room}` is not a Matrix room id or alias: {e}")))?;
        lock(&self.shared.rooms).insert(room.as_str().to_owned());
        lock(&self.shared.leaving).remove(room.as_str());
        let Some(client) = self.shared.client() else { return Ok(()) };
        self.with_retry("join the room", || client.join_room_by_id_or_alias(&target, &[])).await?;
        Ok(())
    }

    /// Leaves now when logged in and synced, else right after the next login; either way the room
    /// is forgotten as one to be in, so no later login joins it again. Accepts a room id
    /// or an alias. Leaving a room the bot is not in is not an error.
    async fn leave(&self, room: &RoomId) -> Result<(), TransportError> {
        RoomOrAliasId::parse(room.as_str())
            .map_err(|e| self.refused(format!("`{room}` is not a Matrix room id or alias: {e}")))?;
        lock(&self.shared.rooms).remove(room.as_str());
        // Until a sync has loaded the bot's rooms, it cannot tell which it is in.
        let Some(client) =
            self.shared.client().filter(|_| *self.shared.connection.borrow() == Connection::Up)
        else {
            lock(&self.shared.leaving).insert(room.as_str().to_owned());
            return Ok(());
        };
        let left = self.shared.leave_room(&client, room.as_str()).await;
        if left.is_err() {
            // Tried again after the next login, unless the room is joined again first.
            lock(&self.shared.leaving).insert(room.as_str().to_owned());
        }
        left
    }

    /// Appservice mode: IRC members are ghosts in the bridged rooms.
    fn mirrors(&self) -> bool {
        self.shared.haunt.is_some()
    }

    /// Appservice mode: an IRC member's join, leave, quit or nick change, shown by their
    /// ghost in `room` (an id or an alias).
    async fn mirror(&self, room: &RoomId, change: &MemberChange) -> Result<(), TransportError> {
        let Some(haunt) = &self.shared.haunt else { return Ok(()) };
        if change.network == self.shared.options.network {
            return Ok(());
        }
        let client = self.logged_in()?;
        let id = self.shared.room_id_of(&client, room.as_str()).await?;
        let Some(joined) = client.get_room(&id).filter(|r| r.state() == RoomState::Joined) else {
            // Soon joined while the bot is starting, invited, or it is one of the rooms to
            // be in (named by its id; an alias's room is looked up once the bot is in).
            let soon = *self.shared.connection.borrow() != Connection::Up
                || client.get_room(&id).is_some_and(|r| r.state() == RoomState::Invited)
                || lock(&self.shared.rooms).contains(room.as_str());
            return Err(if soon {
                self.disconnected(format!("the bot is not in room {id} yet"))
            } else {
                self.refused(format!("the bot is not in room {id}"))
            });
        };
        haunt.mirror(&self.shared, &joined, change).await
    }

    async fn send(&self, to: &Destination, message: &Message) -> Result<(), TransportError> {
        self.send_noted(to, message).await.map(drop)
    }

    /// Sends, and says the event id sent and whether a direct room was created for it.
    async fn send_noted(&self, to: &Destination, message: &Message) -> Result<Sent, TransportError> {
        let text = &message.text;
        if text.is_empty() {
            return Ok(Sent::default());
        }
        let _sending = self.shared.sends.start();
        let client = self.logged_in()?;
        self.until_synced().await;
        let mut opened_private = false;
        let mut private_link = None;
        let room = match to {
            Destination::Room(id) => {
                let id = matrix_sdk::ruma::RoomId::parse(id.as_str())
                    .map_err(|e| self.refused(format!("`{id}` is not a Matrix room id: {e}")))?;
                client
                    .get_room(&id)
                    .filter(|r| r.state() == RoomState::Joined)
                    .ok_or_else(|| self.refused(format!("the bot is not in room {id}")))?
            }
            Destination::Private(player) => {
                let user = UserId::parse(player.as_str())
                    .map_err(|e| self.refused(format!("`{player}` is not a Matrix user id: {e}")))?;
                let (room, created) = self.direct_room(&client, &user).await?;
                opened_private = created;
                // Where the player finds it: told in the room where they asked.
                private_link = created.then(|| format!("https://matrix.to/#/{}", room.room_id()));
                room
            }
        };
        if let Some(shown) = &message.picture {
            picture::send(&self.shared, &room, message, shown).await?;
            return Ok(Sent { id: None, opened_private, private_link });
        }
        // Appservice mode: another network's line goes as its speaker's ghost (not in an
        // encrypted room, where only the bot has a device to encrypt with).
        if let (Some(haunt), Some(speaker), Destination::Room(_)) = (&self.shared.haunt, &message.speaker, to)
            && speaker.network != self.shared.options.network
            && !room.encryption_state().is_encrypted()
        {
            match haunt.send(&self.shared, &room, message, speaker).await {
                // The ghost cannot speak (the homeserver refused it): the bot says the
                // line as in bot mode, so it is not lost.
                Err(TransportError::Refused { reason, .. }) => {
                    tracing::warn!(network = %self.shared.options.network, room = %room.room_id(), nick = %speaker.nick, %reason, "a ghost could not say a line; the bot says it");
                }
                Err(error) => return Err(error),
                Ok(id) => return Ok(Sent { id: Some(id), opened_private, private_link }),
            }
        }
        // `/msg`-free, but a text may still name the bot: by its localpart.
        let message = &Message {
            text: text.clone().naming_bot(client.user_id().map_or("me", |u| u.localpart())),
            ..message.clone()
        };
        // A later part of a story edits the story's message in this room (`story`).
        let story = message.story.as_deref().filter(|_| matches!(to, Destination::Room(_)));
        let room_id = room.room_id().as_str();
        let part = match story {
            Some(story) => Some(
                self.shared.stories.part(room_id, story, message).unless_interrupted(&room, message).await,
            ),
            None => None,
        };
        let shown = part.as_ref().map_or(message, |part| &part.message);
        let whole = message_content(&room, shown, &self.shared.facts).await;
        let content = part.as_ref().map_or_else(|| whole.clone(), |part| part.content(whole.clone()));
        // One transaction id for every attempt: the homeserver drops repeats of it. For
        // outbox rows, their key: a standby that takes over and sends them again (its dead
        // leader sent them but had not marked them sent) makes no second event.
        let transaction = transaction_id(message);
        let sent = self
            .with_retry("send the message", || {
                room.send(content.clone()).with_transaction_id(transaction.clone()).into_future()
            })
            .await?;
        let event = sent.response.event_id;
        if let (Some(story), Some(part)) = (story, part) {
            self.shared.stories.told(room_id, story, part, event.clone(), &whole);
        }
        Ok(Sent { id: Some(event.to_string()), opened_private, private_link })
    }
}

/// The transaction id to send `message` with: its outbox rows' key, the same on every
/// daemon (the homeserver drops a repeat from the same device, or in appservice mode the
/// same appservice), or a new random one.
pub(super) fn transaction_id(message: &Message) -> OwnedTransactionId {
    message.delivery.as_deref().map_or_else(TransactionId::new, OwnedTransactionId::from)
}

/// The `m.room.message` for a message in a room: `m.notice`, the bot's own words, which
/// clients show quieter and push rules never notify of; `m.text` where it mentions someone
/// (a player it waits for or answers: the mention must reach them, and a notice's would
/// not) and for relayed chat; `m.emote` when acted; HTML with
/// pills named by each player's display name in that room (from `facts`), and
/// `m.mentions` listing them. A message for a thread is sent in it, with the thread's
/// reply fallback pointing at the root, as clients without threads expect; a thread id
/// that is not an event id is ignored (the message goes to the room). A message that
/// answers another (`Message::reply_to`) is a reply to it (in its thread, if any).
pub(super) async fn message_content(
    room: &Room,
    message: &Message,
    facts: &RoomFacts,
) -> RoomMessageEventContent {
    let text = &message.text;
    let mut names = HashMap::new();
    for segment in text.segments() {
        if let Segment::Mention(player) | Segment::Name(player) = segment
            && !names.contains_key(player.as_str())
            && let Ok(user) = UserId::parse(player.as_str())
            && let Some(name) = shown_name(room, &user, facts).await
        {
            names.insert(player.as_str().to_owned(), name);
        }
    }
    let rendered = format::render(text, |id| names.get(id).cloned());
    let mentioned = rendered.mentions.iter().filter_map(|id| UserId::parse(id.as_str()).ok());
    let formatted = rendered.marked_up.then(|| FormattedBody::html(rendered.html));
    let msgtype = match message.voice {
        // The bot's words are notices (clients show them quieter, and push rules never
        // notify of them), except where it mentions someone: it waits for them, or answers
        // them, and the mention must reach them; relayed chat is people talking.
        Voice::Say if rendered.mentions.is_empty() && !message.chat => {
            let mut notice = NoticeMessageEventContent::plain(rendered.plain);
            notice.formatted = formatted;
            MessageType::Notice(notice)
        }
        Voice::Say => {
            let mut text = TextMessageEventContent::plain(rendered.plain);
            text.formatted = formatted;
            MessageType::Text(text)
        }
        Voice::Act => {
            let mut emote = EmoteMessageEventContent::plain(rendered.plain);
            emote.formatted = formatted;
            MessageType::Emote(emote)
        }
    };
    let mut content = RoomMessageEventContent::new(msgtype).add_mentions(Mentions::with_user_ids(mentioned));
    let answered = message.reply_to.as_deref().and_then(|id| match EventId::parse(id) {
        Ok(id) => Some(id),
        Err(error) => {
            tracing::warn!(room = %room.room_id(), reply_to = %id, %error, "not an event id; sending as no reply");
            None
        }
    });
    if let Some(root) = &message.thread {
        match EventId::parse(root) {
            Ok(root) => {
                let thread = match answered {
                    Some(answered) => Thread::reply(root, answered),
                    None => Thread::plain(root.clone(), root),
                };
                content.relates_to = Some(Relation::Thread(thread));
            }
            Err(error) => {
                tracing::warn!(room = %room.room_id(), thread = %root, %error, "not an event id; sending outside the thread");
            }
        }
    } else if let Some(answered) = answered {
        content.relates_to = Some(Relation::Reply(Reply::with_event_id(answered)));
    }
    content
}

/// What `user` is called in `room`, else in another room the bot shares with them (a
/// private chat names the opponent, who is not in it), else `None` (their id is shown).
async fn shown_name(room: &Room, user: &UserId, facts: &RoomFacts) -> Option<String> {
    if let Some(name) = facts.member_name(room, user).await {
        return Some(name);
    }
    for other in room.client().joined_rooms() {
        if other.room_id() != room.room_id()
            && let Some(name) = facts.member_name(&other, user).await
        {
            return Some(name);
        }
    }
    None
}

/// Whether `user` is joined to an encrypted room the bot is in.
async fn shares_encrypted_room(client: &Client, user: &UserId) -> bool {
    for room in client.joined_rooms() {
        if room.encryption_state().is_encrypted()
            && let Ok(Some(member)) = room.get_member_no_sync(user).await
            && *member.membership() == matrix_sdk::ruma::events::room::member::MembershipState::Join
        {
            return true;
        }
    }
    false
}

/// What an inbound message's sender is called in a room.
pub(super) async fn display_name(room: &Room, user: &UserId) -> String {
    match room.get_member_no_sync(user).await {
        Ok(Some(member)) => member.name().to_owned(),
        _ => user.localpart().to_owned(),
    }
}

/// The player id of a Matrix user.
pub(super) fn player(user: &UserId) -> PlayerId {
    PlayerId::new(user.as_str())
}
