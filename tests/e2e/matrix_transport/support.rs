//! What the Matrix transport tests share: a Synapse started for the test, the bot's
//! options, a running transport ([`Running`]), raw clients logged in, and the waits (a
//! message, a join, a member, nothing more) bounded by [`WAIT`].

pub(super) use std::path::Path;
pub(super) use std::sync::Arc;
pub(super) use std::time::Duration;

pub(super) use spellbridge_adapters::matrix::matrix_sdk::ruma::api::client::room::create_room::v3::{
    Request as CreateRoom, RoomPreset,
};
pub(super) use spellbridge_adapters::matrix::matrix_sdk::ruma::events::InitialStateEvent;
pub(super) use spellbridge_adapters::matrix::matrix_sdk::ruma::events::room::encryption::RoomEncryptionEventContent;
pub(super) use spellbridge_adapters::matrix::matrix_sdk::ruma::events::room::history_visibility::{
    HistoryVisibility, RoomHistoryVisibilityEventContent,
};
pub(super) use spellbridge_adapters::matrix::matrix_sdk::ruma::events::room::member::MembershipState;
pub(super) use spellbridge_adapters::matrix::matrix_sdk::ruma::{OwnedUserId, UserId};
pub(super) use spellbridge_adapters::matrix::{Connection, Login, MatrixOptions, MatrixTransport};
pub(super) use spellbridge_core::text::Hue;
pub(super) use spellbridge_core::{
    Destination, GameTransport, Inbound, Message, PlayerId, RichText, RoomId, Said, Voice,
};
pub(super) use spellbridge_tests::harness::HarnessError;
pub(super) use spellbridge_tests::harness::fault_proxy::FaultProxy;
pub(super) use spellbridge_tests::harness::matrix_client::{Event, MatrixClient, Method};
pub(super) use spellbridge_tests::harness::synapse::{Options, Synapse};
pub(super) use tokio::time::Instant;
pub(super) use tokio_util::sync::CancellationToken;

/// How long a message or a join may take on loopback (normally milliseconds; E2EE key
/// sharing and a cold first sync take longer).
pub(super) const WAIT: Duration = Duration::from_secs(20);
/// How long to listen when checking that nothing (more) arrives.
pub(super) const QUIET: Duration = Duration::from_millis(1500);
pub(super) const NETWORK: &str = "matrix";

/// Unwraps a harness result, failing the test with the harness's own message.
pub(super) fn ok<T>(result: Result<T, HarnessError>) -> T {
    result.unwrap_or_else(|e| panic!("{e}"))
}

pub(super) fn start_server(options: Options) -> Synapse {
    ok(tokio::task::block_in_place(|| Synapse::start_with(options)))
}

/// A running transport with its task and shutdown token.
pub(super) struct Running {
    pub(super) transport: Arc<MatrixTransport>,
    pub(super) task: tokio::task::JoinHandle<()>,
    pub(super) shutdown: CancellationToken,
}

impl Running {
    pub(super) fn start(options: MatrixOptions) -> Self {
        let shutdown = CancellationToken::new();
        let (transport, task) = MatrixTransport::start(options, shutdown.clone());
        Running { transport, task, shutdown }
    }

    pub(super) async fn started(options: MatrixOptions, server: &Synapse) -> Self {
        let running = Self::start(options);
        assert!(
            running.transport.wait_up(WAIT).await,
            "the Matrix transport did not log in and sync within {WAIT:?}; Synapse's log ends:\n{}",
            server.log_tail(30)
        );
        running
    }

    pub(super) async fn stop(self) {
        self.shutdown.cancel();
        tokio::time::timeout(WAIT, self.task)
            .await
            .expect("the transport stops on shutdown")
            .expect("no panic");
        assert_eq!(*self.transport.connection().borrow(), Connection::Closed);
    }
}

pub(super) fn options(server: &Synapse, localpart: &str, store: &Path) -> MatrixOptions {
    let mut options = MatrixOptions::local(
        NETWORK,
        &server.base_url(),
        &server.user_id(localpart),
        &format!("{localpart}-password"),
        store,
    );
    options.decrypt_grace = Duration::from_secs(1);
    options
}

pub(super) fn register(server: &Synapse, localpart: &str) -> String {
    ok(server.register(localpart, &format!("{localpart}-password"), false)).0
}

pub(super) async fn login(server: &Synapse, localpart: &str) -> MatrixClient {
    ok(MatrixClient::login(&server.base_url(), localpart, &format!("{localpart}-password")).await)
}

/// The next message the transport delivers; panics after `limit`.
pub(super) async fn recv(transport: &MatrixTransport, limit: Duration) -> Inbound {
    tokio::time::timeout(limit, transport.recv())
        .await
        .unwrap_or_else(|_| panic!("the transport delivered nothing within {limit:?}"))
        .expect("the transport is running")
}

/// Asserts the transport delivers nothing for `quiet`.
pub(super) async fn nothing_more(transport: &MatrixTransport, quiet: Duration) {
    if let Ok(Some(message)) = tokio::time::timeout(quiet, transport.recv()).await {
        panic!("expected nothing more, got {message:?}");
    }
}

/// Waits until the transport is in `room`.
pub(super) async fn until_joined(transport: &MatrixTransport, room: &str) {
    let deadline = Instant::now() + WAIT;
    while !transport.joined_rooms().iter().any(|r| r.as_str() == room) {
        assert!(Instant::now() < deadline, "the transport did not join {room} within {WAIT:?}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Waits until `watcher`'s client sees `user` joined in `room` (so its next encrypted
/// send shares the room key with them).
pub(super) async fn until_member(watcher: &MatrixTransport, room: &str, user: &str) {
    let client = watcher.client().expect("logged in");
    let room_id =
        <&spellbridge_adapters::matrix::matrix_sdk::ruma::RoomId>::try_from(room).expect("a room id");
    let user = UserId::parse(user).expect("a user id");
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(room) = client.get_room(room_id)
            && let Ok(Some(member)) = room.get_member_no_sync(&user).await
            && *member.membership() == MembershipState::Join
        {
            return;
        }
        assert!(Instant::now() < deadline, "{:?} never saw {user} join {room}", client.user_id());
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// The ids of the devices of `client`'s account.
pub(super) async fn device_ids(client: &MatrixClient) -> Vec<String> {
    let answer = ok(client.call(Method::GET, "/_matrix/client/v3/devices", None).await);
    answer["devices"]
        .as_array()
        .map(|devices| devices.iter().filter_map(|d| d["device_id"].as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

/// The next `m.room.message` from `sender`, skipping everything else.
pub(super) async fn next_message_from(client: &mut MatrixClient, sender: &str, limit: Duration) -> Event {
    let deadline = Instant::now() + limit;
    loop {
        let remaining = deadline.saturating_duration_since(Instant::now());
        let event = client
            .next_event(remaining)
            .await
            .unwrap_or_else(|| panic!("{} got no message from {sender} within {limit:?}", client.user_id()));
        if event.sender == sender && event.event_type == "m.room.message" {
            return event;
        }
    }
}

/// Registers the bot, alice and carol; alice creates a room inviting the bot and carol;
/// carol joins; the bot (started with `store`) accepts the invite. Three members, so the
/// room is not taken for a direct chat.
pub(super) async fn bot_in_a_room(
    server: &Synapse,
    store: &Path,
) -> (Running, MatrixClient, MatrixClient, String) {
    let bot_id = register(server, "spellbot");
    register(server, "alice");
    let carol_id = register(server, "carol");
    let mut alice = login(server, "alice").await;
    let mut carol = login(server, "carol").await;
    let bot = Running::started(options(server, "spellbot", store), server).await;
    let room = ok(alice.create_room("Magic", &[&bot_id, &carol_id], false).await);
    ok(carol.accept_invite(&room).await);
    until_joined(&bot.transport, &room).await;
    ok(alice.catch_up().await);
    ok(carol.catch_up().await);
    (bot, alice, carol, room)
}

/// The `p` quantile of `samples` (sorted in place), nearest rank.
pub(super) fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let index = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[index.min(samples.len() - 1)]
}
