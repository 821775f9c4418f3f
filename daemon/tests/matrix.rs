//! `spellbridge run` as a child process against a real Synapse on loopback, with a
//! `[[matrix]]` account (password from a file, store in the test's temp dir, invites
//! accepted from `*:localhost`):
//!
//! - Matrix users play a whole Duel, their moves by encrypted direct message, and a Thaum
//!   phase, in an encrypted room one of them created; nothing is revealed early. The
//!   players are `MatrixTransport`s (they need E2EE).
//! - The daemon is stopped (SIGTERM) and started again mid-game with the same config and
//!   store: the game goes on, what was said while it was down is executed once, and no
//!   command from before the restart is executed again.
//! - Synapse restarts mid-game: the daemon reconnects and the game goes on, nothing
//!   executed twice.
//!
//! - A Matrix user sending commands faster than `[matrix.user_limit]` allows is answered
//!   up to the limit, told once privately, and holds nobody else back.
//!
//! The last three use raw clients in an unencrypted room (no E2EE needed there). These need
//! Synapse (`tests/scripts/install-synapse.sh`); without it they fail with the harness's
//! message, they never skip. Every wait is bounded; a failure prints the daemon's log.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use spellbridge_adapters::matrix::matrix_sdk::ruma::api::client::room::create_room::v3::{
    Request as CreateRoom, RoomPreset,
};
use spellbridge_adapters::matrix::matrix_sdk::ruma::events::InitialStateEvent;
use spellbridge_adapters::matrix::matrix_sdk::ruma::events::room::encryption::RoomEncryptionEventContent;
use spellbridge_adapters::matrix::matrix_sdk::ruma::events::room::member::MembershipState;
use spellbridge_adapters::matrix::matrix_sdk::ruma::{OwnedUserId, UserId};
use spellbridge_adapters::matrix::{MatrixOptions, MatrixTransport};
use spellbridge_core::{Destination, GameTransport, Inbound, PlayerId, RoomId};
use spellbridge_tests::harness::daemon::Daemon as Process;
use spellbridge_tests::harness::matrix_client::{MatrixClient, Message};
use spellbridge_tests::harness::synapse::Synapse;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

const BIN: &str = env!("CARGO_BIN_EXE_spellbridge");
const BOT: &str = "spellbridge";
/// How long one answer may take (E2EE key sharing and a cold sync take seconds).
const WAIT: Duration = Duration::from_secs(30);
/// How long the daemon may take to start, log in and answer in the room.
const STARTUP: Duration = Duration::from_secs(60);

fn password(localpart: &str) -> String {
    format!("{localpart}-password")
}

fn server() -> Synapse {
    tokio::task::block_in_place(Synapse::start)
        .unwrap_or_else(|e| panic!("Synapse is needed for this test: {e}"))
}

fn register(server: &Synapse, localpart: &str) -> String {
    server.register(localpart, &password(localpart), false).unwrap_or_else(|e| panic!("{e}")).0
}

/// The daemon, running from a config in a temp dir that outlives restarts (the harness's
/// daemon, which prints its log when a test fails).
struct Daemon(Process);

impl Daemon {
    /// Writes the config (the bot's password in a file beside it) and starts the daemon,
    /// with no per-player command limit.
    fn start(server: &Synapse) -> Daemon {
        Daemon::start_with(server, "enabled = false\n")
    }

    /// As [`Daemon::start`], with `user_limit` as the `[matrix.user_limit]` table.
    fn start_with(server: &Synapse, user_limit: &str) -> Daemon {
        let mut process = Process::new(BIN).unwrap_or_else(|e| panic!("{e}"));
        let password_file = process
            .write("bot-password", format!("{}\n", password(BOT)))
            .unwrap_or_else(|e| panic!("writing the password file: {e}"));
        let config = format!(
            "prefix = \"!\"\n[store]\npath = \"games.db\"\n\
             [[matrix]]\nname = \"matrix\"\nhomeserver = \"{homeserver}\"\nuser_id = \"{user}\"\n\
             password = {{ file = {password_file:?} }}\nstore = {store:?}\n\
             invite_allow = [\"*:localhost\"]\nreconnect_delay = \"1s\"\n[matrix.user_limit]\n{user_limit}",
            homeserver = server.base_url(),
            user = server.user_id(BOT),
            store = process.path("matrix-store"),
        );
        process.env("RUST_LOG", "info,spellbridge_adapters=debug");
        process.set_config(&config).unwrap_or_else(|e| panic!("{e}"));
        let mut daemon = Daemon(process);
        daemon.spawn();
        daemon
    }

    /// Starts the daemon (again) from the same config and store; the log is appended to.
    fn spawn(&mut self) {
        self.0.spawn().unwrap_or_else(|e| panic!("{e}"));
    }

    fn log(&self) -> String {
        self.0.log()
    }

    fn database(&self) -> PathBuf {
        self.0.path("games.db")
    }

    fn store(&self) -> &Path {
        self.0.dir()
    }

    /// SIGTERM, then waits (bounded) for the exit; returns whether it exited cleanly.
    fn terminate(&mut self) -> bool {
        self.0.terminate(Duration::from_secs(15)).is_ok_and(|status| status.success())
    }
}

// ---------------------------------------------------------------------------------------
// Players with E2EE: a `MatrixTransport` each.

struct Player {
    name: &'static str,
    id: String,
    transport: Arc<MatrixTransport>,
    shutdown: CancellationToken,
    _store: tempfile::TempDir,
}

impl Player {
    async fn start(server: &Synapse, name: &'static str) -> Player {
        let id = register(server, name);
        let store = tempfile::tempdir().expect("temp dir");
        let mut options = MatrixOptions::local(name, &server.base_url(), &id, &password(name), store.path());
        // A player must not tell the room it cannot decrypt something: it is no bot.
        options.decrypt_grace = Duration::from_secs(3600);
        // Its client encrypts the direct rooms it opens, as Element does.
        options.dm_encryption = true;
        let shutdown = CancellationToken::new();
        let (transport, _task) = MatrixTransport::start(options, shutdown.clone());
        assert!(transport.wait_up(WAIT).await, "{name}'s client did not log in and sync within {WAIT:?}");
        Player { name, id, transport, shutdown, _store: store }
    }

    async fn say(&self, to: &Destination, text: &str) {
        if let Err(error) = self.transport.send(to, &text.into()).await {
            panic!("{} could not send {text:?}: {error}", self.name);
        }
    }

    /// The next message from the bot (in the room or privately) for which `wanted`
    /// holds, within [`WAIT`]; the ones skipped are listed if none comes.
    async fn expect_where(&self, what: &str, daemon: &Daemon, wanted: impl Fn(&Inbound) -> bool) -> Inbound {
        let bot = format!("@{BOT}:localhost");
        let deadline = Instant::now() + WAIT;
        let mut skipped = Vec::new();
        loop {
            match tokio::time::timeout_at(deadline, self.transport.recv()).await {
                Ok(Some(m)) if m.sender.as_str() == bot && wanted(&m) => return m,
                Ok(Some(m)) => skipped.push(format!(
                    "{}{}: {:?}",
                    m.sender,
                    if m.private { " (private)" } else { "" },
                    m.text
                )),
                Ok(None) | Err(_) => panic!(
                    "{} waited {WAIT:?} for {what}; skipped:\n  {}\n--- the daemon's log ends:\n{}",
                    self.name,
                    skipped.join("\n  "),
                    tail(&daemon.log(), 60)
                ),
            }
        }
    }

    async fn expect(&self, needle: &str, daemon: &Daemon) -> Inbound {
        self.expect_where(&format!("{needle:?}"), daemon, |m| m.text.contains(needle)).await
    }

    async fn expect_private(&self, needle: &str, daemon: &Daemon) -> Inbound {
        self.expect_where(&format!("a private {needle:?}"), daemon, |m| m.private && m.text.contains(needle))
            .await
    }

    /// Everything the bot says to this player until `quiet` passes with nothing new.
    async fn drain(&self, quiet: Duration) -> Vec<Inbound> {
        let mut seen = Vec::new();
        while let Ok(Some(m)) = tokio::time::timeout(quiet, self.transport.recv()).await {
            if m.sender.as_str() == format!("@{BOT}:localhost") {
                seen.push(m);
            }
        }
        seen
    }

    async fn until_joined(&self, room: &str) {
        let deadline = Instant::now() + WAIT;
        while !self.transport.joined_rooms().iter().any(|r| r.as_str() == room) {
            assert!(Instant::now() < deadline, "{} did not join {room} within {WAIT:?}", self.name);
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// Waits until this player's client sees `user` joined in `room` (so its next
    /// encrypted message there is shared with them).
    async fn until_member(&self, room: &str, user: &str, daemon: &Daemon) {
        let client = self.transport.client().expect("logged in");
        let room_id =
            <&spellbridge_adapters::matrix::matrix_sdk::ruma::RoomId>::try_from(room).expect("a room id");
        let user = UserId::parse(user).expect("a user id");
        let deadline = Instant::now() + STARTUP;
        loop {
            if let Some(room) = client.get_room(room_id)
                && let Ok(Some(member)) = room.get_member_no_sync(&user).await
                && *member.membership() == MembershipState::Join
            {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{} never saw {user} join {room} within {STARTUP:?}; the daemon's log ends:\n{}",
                self.name,
                tail(&daemon.log(), 60)
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Says `!games` in the room until the bot answers (it has joined, and the two can
    /// read each other's encrypted messages), within [`STARTUP`].
    async fn until_bot_answers(&self, room: &Destination, daemon: &Daemon) {
        let deadline = Instant::now() + STARTUP;
        while Instant::now() < deadline {
            self.say(room, "!games").await;
            let until = (Instant::now() + Duration::from_secs(3)).min(deadline);
            while let Ok(Some(m)) = tokio::time::timeout_at(until, self.transport.recv()).await {
                if m.sender.as_str() == format!("@{BOT}:localhost") && m.text.contains("Games:") {
                    return;
                }
            }
        }
        panic!("the bot never answered {} within {STARTUP:?}; its log:\n{}", self.name, daemon.log());
    }

    fn stop(&self) {
        self.shutdown.cancel();
    }
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn matrix_players_play_a_duel_by_encrypted_dm_and_a_thaum_phase_in_an_encrypted_room() {
    let started = Instant::now();
    let synapse = server();
    let bot_id = register(&synapse, BOT);
    let daemon = Daemon::start(&synapse);
    let (alice, bob, carol) = tokio::join!(
        Player::start(&synapse, "alice"),
        Player::start(&synapse, "bob"),
        Player::start(&synapse, "carol")
    );

    // carol creates an encrypted room and invites the bot and the two duellists.
    let room = encrypted_room(&carol, &[&alice, &bob], &bot_id, &daemon).await;
    let in_room = Destination::Room(RoomId::new(&room));
    for player in [&alice, &bob, &carol] {
        player.drain(Duration::from_millis(500)).await;
    }
    eprintln!("set up in {:?}", started.elapsed());

    alice.say(&in_room, &format!("!duel {}", bob.id)).await;
    bob.expect("challenges", &daemon).await;
    bob.say(&in_room, "!accept").await;
    carol.expect("Round 1 begins", &daemon).await;

    // Round 1: alice's spell goes by encrypted DM; the room hears nothing until bob casts.
    let to_bot = Destination::Private(PlayerId::new(&bot_id));
    alice.say(&to_bot, "!cast surge fire wind water thunder end").await;
    let queued = alice.expect_private("Queued", &daemon).await;
    assert_ne!(queued.room.as_str(), room, "the answer came in a direct room: {queued:?}");
    let dm = client_room_encrypted(&alice, queued.room.as_str()).await;
    assert!(dm, "alice's direct room with the bot is encrypted");
    // The table's dice commitment (RULES T-10) is public, and where the bot opened each
    // player's direct chat (issue 31); nothing of the spell is.
    let mut early = carol.drain(Duration::from_secs(2)).await;
    early.retain(|m| {
        !m.text.starts_with("Dice commitment") && !m.text.contains("I've opened our direct chat")
    });
    assert!(early.is_empty(), "the room heard something before bob cast: {early:#?}");
    bob.say(&to_bot, "!cast focus earth earth earth earth end").await;
    bob.expect_private("Queued", &daemon).await;
    // The round is one message (issue 31), a line per step, then the settlement.
    let step0 = carol.expect("Round 1, step 0", &daemon).await;
    assert_eq!(step0.room.as_str(), room);
    let first = step0.text.lines().next().unwrap_or_default();
    assert!(!first.contains("Fire"), "step 0 reveals only the pre-conditionings: {step0:?}");
    for needle in ["Round 1, step 1", "Round 1 settles"] {
        assert!(step0.text.contains(needle), "{needle:?} in the round's message: {step0:?}");
    }
    // Fire Wind Water Thunder: 16 + surge 8 + explosion 16 = 40; Earth×4 focused: 16. Track 24.
    // Players are named by display name, never by Matrix id (issue 15).
    assert!(step0.text.contains("now 24 toward alice."), "{step0:?}");

    // Round 2: bob's Earth run sealed Wind and Water for alice's first 3 positions (D-10).
    alice.say(&to_bot, "!cast surge fire wind end").await;
    let refused = alice.expect_private("sealed", &daemon).await;
    assert!(
        refused.text.to_lowercase().contains("wind"),
        "the sealed Wind is refused privately: {refused:?}"
    );
    alice.say(&to_bot, "!cast surge fire earth fire earth end").await;
    alice.expect_private("Queued", &daemon).await;
    bob.say(&to_bot, "!cast focus earth earth earth earth end").await;
    let over = carol.expect("duel is over", &daemon).await;
    assert!(over.text.contains("alice"), "alice wins on the track (D-1): {over:?}");
    assert!(over.text.contains("48"), "at 48: {over:?}");

    // A Thaum phase in the same encrypted room, now that the duel table is finished.
    carol.say(&in_room, "!new thaum").await;
    alice.expect("opens a Thaum table", &daemon).await;
    alice.say(&in_room, "!join").await;
    carol.expect("alice", &daemon).await;
    bob.say(&in_room, "!join").await;
    alice.say(&in_room, "!gather 1 fire").await;
    bob.expect("Fire 0 → 1", &daemon).await;
    bob.say(&in_room, "!phase next").await;
    let not_gm = bob.expect("game master", &daemon).await;
    assert!(not_gm.text.starts_with("bob"), "the refusal names bob: {not_gm:?}");
    carol.say(&in_room, "!phase next").await;
    alice.expect("Phase II", &daemon).await;
    alice.say(&in_room, "!status").await;
    let status = alice.expect("Mana 1", &daemon).await;
    assert!(status.text.contains("Fire 1"), "{status:?}");

    assert!(
        !daemon.log().contains("could not decrypt"),
        "the bot decrypted everything; log:\n{}",
        daemon.log()
    );
    for player in [&alice, &bob, &carol] {
        player.stop();
    }
    eprintln!("the whole game took {:?}", started.elapsed());
}

/// `creator` makes an encrypted invite-only room, invites the bot and `guests`, and returns
/// its id once everyone has joined, each sees every member, and the bot answers each there.
async fn encrypted_room(creator: &Player, guests: &[&Player], bot_id: &str, daemon: &Daemon) -> String {
    let mut request = CreateRoom::new();
    request.preset = Some(RoomPreset::PrivateChat);
    request.invite = std::iter::once(bot_id)
        .chain(guests.iter().map(|guest| guest.id.as_str()))
        .map(|id| OwnedUserId::try_from(id).expect("user id"))
        .collect();
    request.initial_state = vec![
        InitialStateEvent::with_empty_state_key(RoomEncryptionEventContent::with_recommended_defaults())
            .to_raw_any(),
    ];
    let client = creator.transport.client().expect("logged in");
    let room = client.create_room(request).await.expect("room created").room_id().to_string();
    for guest in guests {
        guest.until_joined(&room).await;
    }
    let everyone: Vec<&Player> = std::iter::once(creator).chain(guests.iter().copied()).collect();
    let members: Vec<&str> = std::iter::once(bot_id).chain(everyone.iter().map(|p| p.id.as_str())).collect();
    for player in &everyone {
        for member in &members {
            player.until_member(&room, member, daemon).await;
        }
    }
    let in_room = Destination::Room(RoomId::new(&room));
    for player in &everyone {
        player.until_bot_answers(&in_room, daemon).await;
    }
    room
}

async fn client_room_encrypted(player: &Player, room: &str) -> bool {
    let client = player.transport.client().expect("logged in");
    let room = client.get_room(<&_>::try_from(room).expect("room id")).expect("in the room");
    room.latest_encryption_state().await.expect("state").is_encrypted()
}

// ---------------------------------------------------------------------------------------
// Players without E2EE: raw clients in an unencrypted room.

/// carol (the game master to be), alice and bob in an unencrypted room with the bot,
/// which has answered there.
async fn thaum_table(
    synapse: &Synapse,
    daemon: &Daemon,
) -> (MatrixClient, MatrixClient, MatrixClient, String) {
    let base = synapse.base_url();
    let bot_id = synapse.user_id(BOT);
    let mut clients = Vec::new();
    for name in ["carol", "alice", "bob"] {
        register(synapse, name);
        let client =
            MatrixClient::login(&base, name, &password(name)).await.unwrap_or_else(|e| panic!("{e}"));
        clients.push(client);
    }
    let (mut carol, mut alice, mut bob) = {
        let mut it = clients.into_iter();
        (it.next().expect("carol"), it.next().expect("alice"), it.next().expect("bob"))
    };
    let invite = [bot_id.as_str(), alice.user_id(), bob.user_id()].map(str::to_owned);
    let room = carol.create_room("Thaum", &invite, false).await.unwrap_or_else(|e| panic!("{e}"));
    alice.accept_invite(&room).await.unwrap_or_else(|e| panic!("{e}"));
    bob.accept_invite(&room).await.unwrap_or_else(|e| panic!("{e}"));

    until_bot_answers_raw(&mut carol, &room, daemon).await;
    for client in [&mut carol, &mut alice, &mut bob] {
        client.catch_up().await.unwrap_or_else(|e| panic!("{e}"));
    }

    carol.send_text(&room, "!new thaum").await.unwrap_or_else(|e| panic!("{e}"));
    expect_raw(&mut alice, "opens a Thaum table", daemon).await;
    alice.send_text(&room, "!join").await.unwrap_or_else(|e| panic!("{e}"));
    expect_raw(&mut alice, "alice", daemon).await;
    bob.send_text(&room, "!join").await.unwrap_or_else(|e| panic!("{e}"));
    expect_raw(&mut bob, "bob", daemon).await;
    (carol, alice, bob, room)
}

/// Says `!games` in `room` until the bot (which accepts its invite) answers there,
/// within [`STARTUP`].
async fn until_bot_answers_raw(client: &mut MatrixClient, room: &str, daemon: &Daemon) {
    let bot = format!("@{BOT}:localhost");
    let deadline = Instant::now() + STARTUP;
    loop {
        assert!(Instant::now() < deadline, "the bot never answered in {room}; its log:\n{}", daemon.log());
        client.send_text(room, "!games").await.unwrap_or_else(|e| panic!("{e}"));
        let until = Instant::now() + Duration::from_secs(2);
        while let Some(m) = client.next_message(until.saturating_duration_since(Instant::now())).await {
            if m.sender == bot && m.room_id == room && m.body.contains("Games:") {
                return;
            }
        }
    }
}

/// A direct room of `client`'s with the bot, once the bot has joined it.
async fn direct_room_with_bot(client: &mut MatrixClient, daemon: &Daemon) -> String {
    let bot = format!("@{BOT}:localhost");
    let room = client.create_dm(&bot, false).await.unwrap_or_else(|e| panic!("{e}"));
    let deadline = Instant::now() + STARTUP;
    while !client.joined_members(&room).await.unwrap_or_else(|e| panic!("{e}")).contains(&bot) {
        assert!(Instant::now() < deadline, "the bot never joined {room}; its log:\n{}", daemon.log());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    room
}

/// The next message from the bot whose body contains `needle`, within [`WAIT`].
async fn expect_raw(client: &mut MatrixClient, needle: &str, daemon: &Daemon) -> Message {
    let bot = format!("@{BOT}:localhost");
    match client.expect_message_matching(|m| m.sender == bot && m.body.contains(needle), WAIT).await {
        Ok(message) => message,
        Err(e) => {
            panic!("{} waited for {needle:?}: {e}\n--- the daemon's log:\n{}", client.user_id(), daemon.log())
        }
    }
}

/// As [`expect_raw`], keeping in `seen` every message of the bot's that came on the way.
async fn expect_seen(
    client: &mut MatrixClient,
    seen: &mut Vec<Message>,
    needle: &str,
    daemon: &Daemon,
) -> Message {
    let bot = format!("@{BOT}:localhost");
    let found = client
        .expect_message_matching(
            |m| {
                if m.sender == bot {
                    seen.push(m.clone());
                }
                m.sender == bot && m.body.contains(needle)
            },
            WAIT,
        )
        .await;
    found.unwrap_or_else(|e| {
        panic!("{} waited for {needle:?}: {e}\n--- the daemon's log:\n{}", client.user_id(), daemon.log())
    })
}

/// Everything the bot says until `quiet` passes with nothing new.
async fn drain_raw(client: &mut MatrixClient, quiet: Duration) -> Vec<Message> {
    let bot = format!("@{BOT}:localhost");
    let mut seen = Vec::new();
    while let Some(m) = client.next_message(quiet).await {
        if m.sender == bot {
            seen.push(m);
        }
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_restart_mid_game_replays_nothing_and_loses_nothing() {
    let started = Instant::now();
    let synapse = server();
    register(&synapse, BOT);
    let mut daemon = Daemon::start(&synapse);
    let (mut carol, mut alice, mut bob, room) = thaum_table(&synapse, &daemon).await;
    let alice_id = alice.user_id().to_owned();

    carol.send_text(&room, &format!("!coins {alice_id} +1")).await.unwrap_or_else(|e| panic!("{e}"));
    expect_raw(&mut alice, "coins: 0 → 1", &daemon).await;
    alice.send_text(&room, "!gather 1 fire").await.unwrap_or_else(|e| panic!("{e}"));
    expect_raw(&mut alice, "Fire 0 → 1", &daemon).await;

    assert!(daemon.terminate(), "spellbridge exits 0 on SIGTERM; log:\n{}", daemon.log());
    // Said while the daemon is down: executed once it is back.
    bob.send_text(&room, "!gather 1 water").await.unwrap_or_else(|e| panic!("{e}"));
    let restarted = Instant::now();
    daemon.spawn();
    let back = expect_raw(&mut bob, "Water 0 → 1", &daemon).await;
    eprintln!(
        "the command said while the daemon was down was answered {:?} after its restart",
        restarted.elapsed()
    );
    assert!(back.body.contains("bob"), "{back}");

    // Nothing from before the restart is executed again.
    let mut after = drain_raw(&mut alice, Duration::from_secs(3)).await;
    alice.send_text(&room, "!status").await.unwrap_or_else(|e| panic!("{e}"));
    let status = expect_raw(&mut alice, "Coins", &daemon).await;
    assert!(
        status.body.contains("Coins 1") && status.body.contains("Fire 1"),
        "the coin and the gather are counted once: {status}"
    );
    carol.send_text(&room, &format!("!coins {alice_id} +1")).await.unwrap_or_else(|e| panic!("{e}"));
    expect_raw(&mut alice, "coins: 1 → 2", &daemon).await;
    after.extend(drain_raw(&mut bob, Duration::from_secs(1)).await);
    for old in ["coins: 0 → 1", "Fire 0 → 1", "Fire 1 → 2", "opens a Thaum table", "Water 1 → 2"] {
        let replays: Vec<&Message> = after.iter().filter(|m| m.body.contains(old)).collect();
        assert!(replays.is_empty(), "{old:?} was executed again after the restart: {replays:#?}");
    }

    assert!(daemon.terminate(), "spellbridge exits 0 on SIGTERM; log:\n{}", daemon.log());
    assert!(daemon.store().join("matrix-store").exists(), "the Matrix store is in the temp dir");
    let connection = rusqlite::Connection::open(daemon.database()).expect("sqlite opens");
    let unsent: i64 = connection.query_row("SELECT COUNT(*) FROM outbox", [], |r| r.get(0)).expect("count");
    assert_eq!(unsent, 0, "every queued answer was sent");
    eprintln!("the test took {:?}", started.elapsed());
}

/// Issue 13 (finding 9): the database and the Matrix store (login token, E2EE keys) are
/// owner-only after a run: files 0600, directories 0700.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_database_and_the_matrix_store_are_owner_only_after_a_run() {
    use std::os::unix::fs::PermissionsExt as _;
    let synapse = server();
    register(&synapse, BOT);
    let mut daemon = Daemon::start(&synapse);
    let deadline = Instant::now() + Duration::from_secs(60);
    while !daemon.log().contains("first sync") && !daemon.log().contains("restored the saved Matrix session")
    {
        assert!(Instant::now() < deadline, "the bot never logged in; log:\n{}", daemon.log());
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(daemon.terminate(), "spellbridge exits 0 on SIGTERM; log:\n{}", daemon.log());
    let mut paths = vec![daemon.database()];
    let mut dirs = vec![daemon.store().join("matrix-store")];
    let mut seen_sdk_files = 0;
    while let Some(dir) = dirs.pop() {
        paths.push(dir.clone());
        for entry in std::fs::read_dir(&dir).expect("the store is there").flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                seen_sdk_files += usize::from(path.to_string_lossy().contains("sqlite3"));
                paths.push(path);
            }
        }
    }
    assert!(seen_sdk_files > 0, "matrix-sdk's SQLite files are among those checked: {paths:?}");
    for path in paths {
        let mode = std::fs::metadata(&path).expect("exists").permissions().mode() & 0o777;
        let want = if path.is_dir() { 0o700 } else { 0o600 };
        assert_eq!(mode, want, "{} is {mode:o}", path.display());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_homeserver_restart_mid_game_is_survived() {
    let started = Instant::now();
    let mut synapse = server();
    register(&synapse, BOT);
    let mut daemon = Daemon::start(&synapse);
    let (mut carol, mut alice, mut bob, room) = thaum_table(&synapse, &daemon).await;
    let alice_id = alice.user_id().to_owned();
    carol.send_text(&room, &format!("!coins {alice_id} +1")).await.unwrap_or_else(|e| panic!("{e}"));
    expect_raw(&mut alice, "coins: 0 → 1", &daemon).await;
    alice.send_text(&room, "!gather 1 fire").await.unwrap_or_else(|e| panic!("{e}"));
    expect_raw(&mut alice, "Fire 0 → 1", &daemon).await;

    let restarted = Instant::now();
    tokio::task::block_in_place(|| synapse.restart()).unwrap_or_else(|e| panic!("{e}"));
    bob.send_text(&room, "!gather 1 water").await.unwrap_or_else(|e| panic!("{e}"));
    expect_raw(&mut bob, "Water 0 → 1", &daemon).await;
    eprintln!("the game went on {:?} after the homeserver restart began", restarted.elapsed());
    assert!(
        daemon.log().contains("reconnected to the Matrix homeserver"),
        "the daemon reconnected by itself; log:\n{}",
        daemon.log()
    );
    carol.send_text(&room, &format!("!coins {alice_id} +1")).await.unwrap_or_else(|e| panic!("{e}"));
    expect_raw(&mut alice, "coins: 1 → 2", &daemon).await;

    let mut after = drain_raw(&mut alice, Duration::from_secs(2)).await;
    after.extend(drain_raw(&mut bob, Duration::from_millis(500)).await);
    alice.send_text(&room, "!status").await.unwrap_or_else(|e| panic!("{e}"));
    let status = expect_raw(&mut alice, "Coins", &daemon).await;
    assert!(
        status.body.contains("Coins 2") && status.body.contains("Fire 1"),
        "each command counted once: {status}"
    );
    for old in ["coins: 0 → 1", "Fire 0 → 1", "Fire 1 → 2", "Water 1 → 2", "coins: 2 → 3"] {
        let replays: Vec<&Message> = after.iter().filter(|m| m.body.contains(old)).collect();
        assert!(replays.is_empty(), "{old:?} was executed again after the restart: {replays:#?}");
    }
    carol.send_text(&room, "!phase next").await.unwrap_or_else(|e| panic!("{e}"));
    expect_raw(&mut alice, "Phase II", &daemon).await;

    assert!(daemon.terminate(), "spellbridge exits 0 on SIGTERM; log:\n{}", daemon.log());
    eprintln!("the test took {:?}", started.elapsed());
}

/// Issue 13, finding 9: the per-player command limit holds on Matrix too, against a real
/// Synapse (before, `!link` guesses and commands from one account were unlimited there).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_matrix_user_over_the_command_limit_is_told_once_and_holds_nobody_back() {
    let synapse = server();
    register(&synapse, BOT);
    let daemon = Daemon::start_with(&synapse, "commands = 3\nwindow = \"60s\"\n");
    let (base, bot) = (synapse.base_url(), synapse.user_id(BOT));
    let mut clients = Vec::new();
    for name in ["flood", "bob"] {
        register(&synapse, name);
        clients
            .push(MatrixClient::login(&base, name, &password(name)).await.unwrap_or_else(|e| panic!("{e}")));
    }
    let (mut flood, mut bob) = {
        let mut it = clients.into_iter();
        (it.next().expect("flood"), it.next().expect("bob"))
    };
    let room = flood
        .create_room("limits", &[bot.clone(), bob.user_id().to_owned()], false)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    bob.accept_invite(&room).await.unwrap_or_else(|e| panic!("{e}"));
    let dm = flood.create_dm(&bot, false).await.unwrap_or_else(|e| panic!("{e}"));
    // Wait for the bot's joins without sending commands (they would count).
    let deadline = Instant::now() + STARTUP;
    for joined in [&room, &dm] {
        while !flood.joined_members(joined).await.unwrap_or_default().contains(&bot) {
            assert!(Instant::now() < deadline, "the bot never joined {joined}; its log:\n{}", daemon.log());
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    flood.catch_up().await.unwrap_or_else(|e| panic!("{e}"));

    for _ in 0..10 {
        flood.send_text(&room, "!games").await.unwrap_or_else(|e| panic!("{e}"));
    }
    // Everything the bot says: until the notice and three answers came (or time is up),
    // then 3 s more in case more answers follow.
    let deadline = Instant::now() + WAIT;
    let mut seen = Vec::new();
    let count = |seen: &[Message], room: &str, needle: &str| {
        seen.iter().filter(|m| m.room_id == room && m.body.contains(needle)).count()
    };
    while count(&seen, &dm, "Slow down") == 0 || count(&seen, &room, "Games:") < 3 {
        let left = deadline.saturating_duration_since(Instant::now());
        match flood.next_message(left).await {
            Some(m) if m.sender == bot => seen.push(m),
            Some(_) => {}
            None => panic!("no notice and three answers within {WAIT:?}: {seen:#?}\n{}", daemon.log()),
        }
    }
    seen.extend(drain_raw(&mut flood, Duration::from_secs(3)).await);
    let notice = seen.iter().find(|m| m.body.contains("Slow down")).expect("the notice");
    assert_eq!(notice.room_id, dm, "the notice is private: {notice}");
    assert!(notice.body.contains("faster than 3 per 60 s"), "{notice}");
    let answers = seen.iter().filter(|m| m.room_id == room && m.body.contains("Games:")).count();
    let notices = seen.iter().filter(|m| m.body.contains("Slow down")).count();
    assert_eq!((answers, notices), (3, 1), "three answered, told once: {seen:#?}");

    // Another player is answered at once.
    bob.catch_up().await.unwrap_or_else(|e| panic!("{e}"));
    bob.send_text(&room, "!games").await.unwrap_or_else(|e| panic!("{e}"));
    let answer = expect_raw(&mut bob, "Games:", &daemon).await;
    assert_eq!(answer.room_id, room);
}

/// Issue 15: alice and bob, seated at a Thaum table, duel in a second room. Their spells,
/// cast privately, reach the Duel (only the Duel takes `!cast`; before, a private `!cast`
/// was asked back as ambiguous and a public one refused, so only the step timeout moved
/// the duel). And no Duel line nor `!status` shows a raw Matrix id in its body
/// (`now 24 toward @alice:localhost`): players are shown by their display name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_player_at_a_thaum_table_and_a_duel_casts_privately_and_sees_names_not_ids() {
    let started = Instant::now();
    let synapse = server();
    let bot_id = register(&synapse, BOT);
    let daemon = Daemon::start(&synapse);
    let (_carol, mut alice, mut bob, _thaum) = thaum_table(&synapse, &daemon).await;
    let (alice_id, bob_id) = (alice.user_id().to_owned(), bob.user_id().to_owned());
    let mut seen = Vec::new();

    let duel_room =
        alice.create_room("Duel", &[bot_id.as_str(), &bob_id], false).await.unwrap_or_else(|e| panic!("{e}"));
    bob.accept_invite(&duel_room).await.unwrap_or_else(|e| panic!("{e}"));
    until_bot_answers_raw(&mut alice, &duel_room, &daemon).await;
    let (alice_dm, bob_dm) =
        (direct_room_with_bot(&mut alice, &daemon).await, direct_room_with_bot(&mut bob, &daemon).await);
    for client in [&mut alice, &mut bob] {
        client.catch_up().await.unwrap_or_else(|e| panic!("{e}"));
    }

    alice.send_text(&duel_room, &format!("!duel {bob_id}")).await.unwrap_or_else(|e| panic!("{e}"));
    expect_seen(&mut bob, &mut seen, "challenges", &daemon).await;
    bob.send_text(&duel_room, "!accept").await.unwrap_or_else(|e| panic!("{e}"));
    expect_seen(&mut alice, &mut seen, "Round 1 begins", &daemon).await;

    // Round 1, by private message: 40 against 16, the track 24 toward alice.
    alice
        .send_text(&alice_dm, "!cast surge fire wind water thunder end")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let queued = expect_seen(&mut alice, &mut seen, "Queued", &daemon).await;
    assert_eq!(queued.room_id, alice_dm, "answered privately: {queued}");
    bob.send_text(&bob_dm, "!cast focus earth earth earth earth end").await.unwrap_or_else(|e| panic!("{e}"));
    let track = expect_seen(&mut alice, &mut seen, "24 toward", &daemon).await;
    assert!(track.body.contains("now 24 toward alice."), "{track}");
    // Round 2 (Wind and Water sealed for alice, RULES D-10): alice reaches 48 and wins.
    alice
        .send_text(&alice_dm, "!cast surge fire earth fire earth end")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    expect_seen(&mut alice, &mut seen, "Queued", &daemon).await;
    bob.send_text(&bob_dm, "!cast focus earth earth earth earth end").await.unwrap_or_else(|e| panic!("{e}"));
    let over = expect_seen(&mut alice, &mut seen, "duel is over", &daemon).await;
    assert!(over.body.contains("the track reached 48 toward alice"), "{over}");
    alice.send_text(&duel_room, "!status").await.unwrap_or_else(|e| panic!("{e}"));
    let status = expect_seen(&mut alice, &mut seen, "Finished:", &daemon).await;
    assert!(
        status.body.contains("Duel: alice (Apprentice) vs bob (Apprentice). Finished: winner alice."),
        "{status}"
    );

    // Nothing the bot said to either shows a player's Matrix id (their pills link to it).
    seen.extend(drain_raw(&mut alice, Duration::from_secs(2)).await);
    seen.extend(drain_raw(&mut bob, Duration::from_secs(1)).await);
    for needle in ["Round 1, step 1", "Round 1 settles", "Seals next round", "Pools: "] {
        assert!(seen.iter().any(|m| m.body.contains(needle)), "{needle:?} was said: {seen:#?}");
    }
    for message in &seen {
        assert!(
            !message.body.contains(&alice_id) && !message.body.contains(&bob_id),
            "a raw Matrix id in what the bot said: {message}"
        );
    }
    eprintln!("the test took {:?}", started.elapsed());
}

mod quiet;
