//! What the bridge tests share: InspIRCd and Synapse started side by side, the daemon's
//! config (`[[bridge]]` of `#magic` and a Matrix room) and process, the people on IRC
//! ([`Irc`]) and on Matrix ([`Mx`]) with everything they received kept in order, and
//! the waits until the bot is in every room.

pub(super) use std::time::Duration;

pub(super) use serde_json::{Value, json};
pub(super) use spellbridge_adapters::irc::format::strip;
pub(super) use spellbridge_tests::harness::daemon::Daemon;
pub(super) use spellbridge_tests::harness::inspircd::InspIrcd;
pub(super) use spellbridge_tests::harness::irc_client::{IrcClient, Message as IrcMessage, MessageKind};
pub(super) use spellbridge_tests::harness::matrix_client::{
    MatrixClient, Message as MxMessage, Method, encode,
};
pub(super) use spellbridge_tests::harness::synapse::Synapse;
pub(super) use tokio::time::Instant;

pub(super) use super::inbox::{Inbox, Receiver};

pub(super) const BIN: &str = env!("CARGO_BIN_EXE_spellbridge");
pub(super) const BOT: &str = "spellbridge";
pub(super) const CHANNEL: &str = "#magic";
/// How long one expected message may take.
pub(super) const WAIT: Duration = Duration::from_secs(20);
/// How long the daemon may take to start, log in and answer on both networks.
pub(super) const STARTUP: Duration = Duration::from_secs(60);
/// How long "nothing more arrives" is watched for.
pub(super) const QUIET: Duration = Duration::from_secs(2);

pub(super) fn password(localpart: &str) -> String {
    format!("{localpart}-password")
}

pub(super) fn bot_id() -> String {
    format!("@{BOT}:localhost")
}

/// InspIRCd and Synapse, started side by side.
pub(super) fn servers() -> (InspIrcd, Synapse) {
    tokio::task::block_in_place(|| {
        std::thread::scope(|scope| {
            let synapse = scope.spawn(Synapse::start);
            let irc = InspIrcd::start().unwrap_or_else(|e| panic!("InspIRCd is needed for this test: {e}"));
            let synapse = synapse
                .join()
                .unwrap_or_else(|_| panic!("starting Synapse panicked"))
                .unwrap_or_else(|e| panic!("Synapse is needed for this test: {e}"));
            (irc, synapse)
        })
    })
}

/// What a test adds to the daemon's config.
#[derive(Default)]
pub(super) struct Extra {
    /// Tables appended to the config (`[permissions]`, `[duel]`).
    pub(super) sections: String,
    /// The IRC reconnect delay (default "1s").
    pub(super) irc_reconnect: Option<&'static str>,
    /// The body of `[irc.flood]` (default `enabled = false`).
    pub(super) irc_flood: Option<&'static str>,
    /// Run at the daemon's default log level (no `RUST_LOG`), as an operator would.
    pub(super) default_log: bool,
    /// The Matrix room's `language` in the bridge (default: none, English).
    pub(super) matrix_language: Option<&'static str>,
    /// Appservice mode (issue 17), with this registration (see [`appservice_servers`]);
    /// default: bot mode, the bot logging in with its password.
    pub(super) appservice: Option<Appservice>,
    /// A second IRC network, `two`, on this InspIRCd port: its `#magic` is in the bridge
    /// too (issue 29: the same nick on two networks).
    pub(super) second_irc: Option<u16>,
}

/// An appservice registration written by `spellbridge appservice-registration` (in a
/// directory of its own, kept while this lives) and the port of the listener it names.
pub(super) struct Appservice {
    pub(super) port: u16,
    pub(super) registration: std::path::PathBuf,
    _dir: Daemon,
}

/// Appservice mode: the registration written first, then InspIRCd and Synapse (with the
/// registration in `app_service_config_files`) side by side.
pub(super) fn appservice_servers() -> (InspIrcd, Synapse, Appservice) {
    let dir = Daemon::new(BIN).unwrap_or_else(|e| panic!("{e}"));
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap_or_else(|e| panic!("a free port: {e}"))
        .port();
    let config = format!(
        "[store]\npath = \"games.db\"\n\n{}",
        matrix_section("http://127.0.0.1:1", Some((port, "appservice.yaml")))
    );
    dir.set_config(&config).unwrap_or_else(|e| panic!("{e}"));
    let output = dir
        .command(&["appservice-registration", "--config", "spellbridge.toml"])
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(output.status.success(), "appservice-registration: {}", String::from_utf8_lossy(&output.stderr));
    let registration = dir.path("appservice.yaml");
    let options = spellbridge_tests::harness::synapse::Options {
        app_services: vec![registration.clone()],
        ..spellbridge_tests::harness::synapse::Options::default()
    };
    let (irc, synapse) = tokio::task::block_in_place(|| {
        std::thread::scope(|scope| {
            let synapse = scope.spawn(|| Synapse::start_with(options));
            let irc = InspIrcd::start().unwrap_or_else(|e| panic!("InspIRCd is needed for this test: {e}"));
            let synapse = synapse
                .join()
                .unwrap_or_else(|_| panic!("starting Synapse panicked"))
                .unwrap_or_else(|e| panic!("Synapse is needed for this test: {e}"));
            (irc, synapse)
        })
    });
    (irc, synapse, Appservice { port, registration, _dir: dir })
}

/// The `[[matrix]]` table: the bot with its password, or in appservice mode with the
/// registration and the listener's port.
fn matrix_section(homeserver: &str, appservice: Option<(u16, &str)>) -> String {
    let login = match appservice {
        None => "password = { file = \"bot-password\" }".to_owned(),
        Some((port, registration)) => {
            format!("mode = \"appservice\"\nregistration = \"{registration}\"\nlisten = \"127.0.0.1:{port}\"")
        }
    };
    format!(
        r#"[[matrix]]
name = "matrix"
homeserver = "{homeserver}"
user_id = "{bot}"
{login}
store = "matrix-store"
invite_allow = ["*:localhost"]
reconnect_delay = "1s"

[matrix.user_limit]
enabled = false
"#,
        bot = bot_id(),
    )
}

/// Writes the config (IRC without flood control, Matrix with the bot's password in a
/// file, the bridge of `#magic` and `room`) and starts the daemon.
pub(super) fn start_daemon(irc: &InspIrcd, synapse: &Synapse, room: &str, extra: &Extra) -> Daemon {
    let mut daemon = Daemon::new(BIN).unwrap_or_else(|e| panic!("{e}"));
    daemon.write("bot-password", format!("{}\n", password(BOT))).unwrap_or_else(|e| panic!("{e}"));
    if extra.default_log {
        daemon.env_remove("RUST_LOG");
    } else {
        daemon.env(
            "RUST_LOG",
            "info,spellbridge=debug,matrix_sdk=warn,matrix_sdk_base=warn,matrix_sdk_crypto=error",
        );
    }
    let config = format!(
        r#"prefix = "!"

[store]
path = "games.db"

[[irc]]
name = "irc"
server = "127.0.0.1"
port = {port}
tls = false
nick = "{BOT}"
# The test InspIRCd has account-tag but no services: players are known by nick.
require_account = false
reconnect_delay = "{reconnect}"

[irc.flood]
{flood}

[irc.user_limit]
enabled = false

{second}
{matrix}
[[bridge]]
name = "magic"
rooms = [{{ network = "irc", room = "{CHANNEL}" }}, {{ network = "matrix", room = "{room}"{language} }}{second_room}]
# These tests script chat, edits, reactions and deletions back to back to check how each
# is relayed; the speaker rate has its own test (irc_security, a chat flood).
speaker_rate = false

{sections}
"#,
        port = irc.port(),
        reconnect = extra.irc_reconnect.unwrap_or("1s"),
        flood = extra.irc_flood.unwrap_or("enabled = false"),
        matrix = matrix_section(
            &synapse.base_url(),
            extra.appservice.as_ref().map(|a| (a.port, a.registration.to_str().unwrap_or_default()))
        ),
        sections = extra.sections,
        second = extra.second_irc.map(|port| format!(
            "[[irc]]\nname = \"two\"\nserver = \"127.0.0.1\"\nport = {port}\ntls = false\nnick = \"{BOT}\"\n\
             require_account = false\nreconnect_delay = \"1s\"\n[irc.flood]\nenabled = false\n[irc.user_limit]\nenabled = false\n"
        )).unwrap_or_default(),
        second_room = if extra.second_irc.is_some() {
            format!(", {{ network = \"two\", room = \"{CHANNEL}\" }}")
        } else {
            String::new()
        },
        language = extra.matrix_language.map(|l| format!(", language = \"{l}\"")).unwrap_or_default(),
    );
    daemon.set_config(&config).unwrap_or_else(|e| panic!("{e}"));
    daemon.spawn().unwrap_or_else(|e| panic!("{e}"));
    daemon
}

// ---------------------------------------------------------------------------------------
// People on IRC.

/// An IRC client in `#magic`, with everything it received kept in order (an [`Inbox`]).
pub(super) struct Irc {
    pub(super) client: IrcClient,
    pub(super) inbox: Inbox<IrcMessage>,
}

impl Receiver for Irc {
    type Message = IrcMessage;

    fn who(&self) -> String {
        self.nick().to_owned()
    }

    fn inbox(&mut self) -> &mut Inbox<IrcMessage> {
        &mut self.inbox
    }

    async fn next_message(&mut self, wait: Duration) -> Option<IrcMessage> {
        self.client.next_message(wait).await
    }
}

impl Irc {
    pub(super) async fn connect(port: u16, nick: &str) -> Irc {
        let mut client =
            IrcClient::connect(port, nick).await.unwrap_or_else(|e| panic!("{nick} connects: {e}"));
        client.join(CHANNEL).await.unwrap_or_else(|e| panic!("{nick} joins {CHANNEL}: {e}"));
        Irc { client, inbox: Inbox::new() }
    }

    pub(super) fn nick(&self) -> &str {
        self.client.nick()
    }

    pub(super) async fn say(&mut self, text: &str) {
        let nick = self.nick().to_owned();
        self.client.privmsg(CHANNEL, text).await.unwrap_or_else(|e| panic!("{nick} says {text:?}: {e}"));
    }

    pub(super) async fn act(&mut self, text: &str) {
        let nick = self.nick().to_owned();
        self.client.action(CHANNEL, text).await.unwrap_or_else(|e| panic!("{nick} acts {text:?}: {e}"));
    }

    /// A private message to the bot.
    pub(super) async fn tell_bot(&mut self, text: &str) {
        let nick = self.nick().to_owned();
        self.client.privmsg(BOT, text).await.unwrap_or_else(|e| panic!("{nick} tells the bot {text:?}: {e}"));
    }

    /// Reads until `quiet` passes with nothing new.
    pub(super) async fn pump(&mut self, quiet: Duration) {
        while let Some(m) = self.client.next_message(quiet).await {
            self.inbox.push(m);
        }
    }

    /// Forgets everything received so far (after the setup's chatter).
    pub(super) async fn settle(&mut self) {
        self.pump(Duration::from_millis(300)).await;
        self.inbox.clear();
    }

    /// The next message from the bot in the channel containing `needle` (formatting
    /// stripped).
    pub(super) async fn expect(&mut self, needle: &str) -> IrcMessage {
        self.expect_where(&format!("{needle:?} in {CHANNEL}"), |m| {
            m.from == BOT && m.target == CHANNEL && strip(&m.text).contains(needle)
        })
        .await
    }

    /// The next private message from the bot containing `needle`.
    pub(super) async fn expect_private(&mut self, needle: &str) -> IrcMessage {
        let nick = self.nick().to_owned();
        self.expect_where(&format!("a private {needle:?}"), move |m| {
            m.from == BOT && m.target == nick && strip(&m.text).contains(needle)
        })
        .await
    }

    /// The bot's messages in the channel, formatting stripped, in order.
    pub(super) fn bot_lines(&self) -> Vec<String> {
        self.inbox
            .all()
            .iter()
            .filter(|m| m.from == BOT && m.target == CHANNEL && m.kind == MessageKind::Privmsg)
            .map(|m| strip(&m.text))
            .collect()
    }

    /// Every message in the channel (anyone's), formatting stripped, in order.
    pub(super) fn channel_lines(&self) -> Vec<(String, String)> {
        self.inbox
            .all()
            .iter()
            .filter(|m| m.target == CHANNEL)
            .map(|m| (m.from.clone(), strip(&m.text)))
            .collect()
    }
}

/// Says `!games` until the bot answers in the channel (it has joined), within [`STARTUP`].
pub(super) async fn until_bot_on_irc(client: &mut Irc) {
    let deadline = Instant::now() + STARTUP;
    while Instant::now() < deadline {
        client.say("!games").await;
        let until = Instant::now() + Duration::from_secs(1);
        while let Some(m) = client.client.next_message(until.saturating_duration_since(Instant::now())).await
        {
            if m.from == BOT && m.target == CHANNEL && m.text.contains("Games:") {
                return;
            }
        }
    }
    panic!("the bot never answered in {CHANNEL} within {STARTUP:?}");
}

// ---------------------------------------------------------------------------------------
// People on Matrix.

/// A Matrix user with a display name, maybe a direct room with the bot, and everything
/// it received kept in order (as [`Irc`]).
pub(super) struct Mx {
    pub(super) client: MatrixClient,
    pub(super) name: &'static str,
    pub(super) dm: Option<String>,
    pub(super) inbox: Inbox<MxMessage>,
}

impl Receiver for Mx {
    type Message = MxMessage;

    fn who(&self) -> String {
        self.name.to_owned()
    }

    fn inbox(&mut self) -> &mut Inbox<MxMessage> {
        &mut self.inbox
    }

    async fn next_message(&mut self, wait: Duration) -> Option<MxMessage> {
        self.client.next_message(wait).await
    }
}

impl Mx {
    /// Registers `localpart` and sets its display name.
    pub(super) async fn new(synapse: &Synapse, localpart: &str, name: &'static str) -> Mx {
        let (user_id, token) = synapse
            .register(localpart, &password(localpart), false)
            .unwrap_or_else(|e| panic!("registering {localpart}: {e}"));
        let mut client = MatrixClient::from_token(&synapse.base_url(), &user_id, &token)
            .unwrap_or_else(|e| panic!("{localpart}'s client: {e}"));
        client.set_display_name(name).await.unwrap_or_else(|e| panic!("{e}"));
        Mx { client, name, dm: None, inbox: Inbox::new() }
    }

    pub(super) fn id(&self) -> &str {
        self.client.user_id()
    }

    pub(super) async fn say(&mut self, room: &str, text: &str) -> String {
        self.client.send_text(room, text).await.unwrap_or_else(|e| panic!("{} says {text:?}: {e}", self.name))
    }

    /// A message in this user's direct room with the bot.
    pub(super) async fn tell_bot(&mut self, text: &str) {
        let dm = self.dm.clone().unwrap_or_else(|| panic!("{} has no direct room with the bot", self.name));
        self.say(&dm, text).await;
    }

    pub(super) async fn pump(&mut self, quiet: Duration) {
        while let Some(m) = self.client.next_message(quiet).await {
            self.inbox.push(m);
        }
    }

    pub(super) async fn settle(&mut self) {
        self.client.catch_up().await.unwrap_or_else(|e| panic!("{e}"));
        self.inbox.clear();
    }

    /// The next message from the bot in `room` containing `needle`.
    pub(super) async fn expect_in(&mut self, room: &str, needle: &str) -> MxMessage {
        let (bot, room_id) = (bot_id(), room.to_owned());
        self.expect_where(&format!("{needle:?} in {room}"), move |m| {
            m.sender == bot && m.room_id == room_id && m.body.contains(needle)
        })
        .await
    }

    /// The next message from the bot in the direct room containing `needle`.
    pub(super) async fn expect_private(&mut self, needle: &str) -> MxMessage {
        let dm = self.dm.clone().unwrap_or_else(|| panic!("{} has no direct room with the bot", self.name));
        self.expect_in(&dm, needle).await
    }

    /// The lines of the bot's messages in `room`, in order (a message of several lines,
    /// such as a Duel round's, gives each), as a client shows them (an edit's new body in
    /// place of the message it edits).
    pub(super) fn bot_lines(&self, room: &str) -> Vec<String> {
        let bot = bot_id();
        self.room_lines(room).into_iter().filter(|(sender, _)| *sender == bot).map(|(_, line)| line).collect()
    }

    /// Every line of every message in `room` (anyone's but this user's own), in order, as
    /// a client shows them (an edit's new body in place of the message it edits).
    pub(super) fn room_lines(&self, room: &str) -> Vec<(String, String)> {
        let mut shown: Vec<(&str, String, String)> = Vec::new();
        for m in self.inbox.all().iter().filter(|m| m.room_id == room) {
            let edited = m.replaces.as_deref().and_then(|id| shown.iter_mut().find(|(e, ..)| *e == id));
            match (edited, &m.new_body) {
                (Some(original), Some(body)) => original.2 = body.clone(),
                _ => shown.push((&m.event_id, m.sender.clone(), m.body.clone())),
            }
        }
        shown
            .into_iter()
            .flat_map(|(_, sender, body)| {
                body.lines().map(|line| (sender.clone(), line.to_owned())).collect::<Vec<_>>()
            })
            .collect()
    }
}

/// `creator` makes the bridged room (unencrypted) with the bot and `members` invited;
/// the members join. Returns the room id.
pub(super) async fn bridge_room(creator: &mut Mx, members: &mut [&mut Mx]) -> String {
    let mut invite = vec![bot_id()];
    invite.extend(members.iter().map(|m| m.id().to_owned()));
    let room = creator.client.create_room("magic", &invite, false).await.unwrap_or_else(|e| panic!("{e}"));
    for member in members.iter_mut() {
        member.client.accept_invite(&room).await.unwrap_or_else(|e| panic!("{e}"));
    }
    room
}

/// Each user opens an unencrypted direct room with the bot (an invite the daemon accepts).
pub(super) async fn direct_rooms(users: &mut [&mut Mx]) {
    for user in users.iter_mut() {
        let dm = user.client.create_dm(&bot_id(), false).await.unwrap_or_else(|e| panic!("{e}"));
        user.dm = Some(dm);
    }
}

/// Says `!games` in `room` until the bot answers there, within [`STARTUP`].
pub(super) async fn until_bot_in(user: &mut Mx, room: &str) {
    let bot = bot_id();
    let deadline = Instant::now() + STARTUP;
    while Instant::now() < deadline {
        user.say(room, "!games").await;
        let until = Instant::now() + Duration::from_secs(3);
        while let Some(m) = user.client.next_message(until.saturating_duration_since(Instant::now())).await {
            // `!games` is answered in the room's language.
            if m.sender == bot
                && m.room_id == room
                && (m.body.contains("Games:") || m.body.contains("游戏："))
            {
                return;
            }
        }
        // An answer meant for this room that went to a new (encrypted) direct room shows
        // up as an invite from the bot.
        if let Some(invite) = user.client.invites().iter().find(|i| i.inviter == bot) {
            panic!("{} asked in {room} and the bot invited them to another room: {invite:?}", user.name);
        }
    }
    panic!("the bot never answered {} in {room} within {STARTUP:?}", user.name);
}

/// The bot has joined the bridged room (it answers there) and each user's direct room.
pub(super) async fn until_bot_everywhere(room: &str, in_room: &mut Mx, with_dms: &mut [&mut Mx]) {
    until_bot_in(in_room, room).await;
    for user in with_dms.iter_mut() {
        let dm = user.dm.clone().expect("a direct room");
        until_bot_in(user, &dm).await;
    }
}

/// `count` of `needle` among `lines`.
pub(super) fn count(lines: &[String], needle: &str) -> usize {
    lines.iter().filter(|l| l.contains(needle)).count()
}

/// A table's state from `spellbridge export`, run on the daemon's database.
pub(super) fn export(daemon: &Daemon, table: u64) -> Value {
    let output =
        daemon.command(&["export", &table.to_string(), "--db", "games.db"]).unwrap_or_else(|e| panic!("{e}"));
    assert!(output.status.success(), "export failed: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("export is not JSON ({e})"))
}
