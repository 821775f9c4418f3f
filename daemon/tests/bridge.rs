//! `spellbridge run` as a child process bridging a real InspIRCd channel (`#magic`) and
//! a real Synapse room into one place (`[[bridge]]`), with raw IRC clients and raw
//! Matrix clients (no E2EE: the bridged room and the players' direct rooms with the bot
//! are unencrypted) as the people:
//!
//! - chat is relayed both ways with its formatting, emotes, edits, reactions and
//!   deletions, and never echoed back; commands (and their edits) are not relayed; a
//!   bridged Matrix room with one person in it is a room, not a direct chat;
//! - an IRC player and a Matrix player play a whole Duel at the shared table, spells by
//!   IRC PM and Matrix DM, and neither room hears a token before its step is revealed;
//! - a Thaum phase with players from both networks naming each other by nick and display
//!   name; a person linking their IRC nick and Matrix id and playing as one player;
//!   permissions (game masters from the config, the IRC channel operator's `!stop`,
//!   nobody acting as someone else);
//! - the daemon (SIGKILL), InspIRCd and Synapse each restarting mid-game: no move and
//!   no relayed line lost or doubled;
//! - a Duel step timeout that comes due while the daemon is down, applied once when it
//!   is back (RULES D-9);
//! - relayed chat cannot forge a line (every line starts with its speaker, a Matrix
//!   display name that is an IRC nick shows its Matrix id), a long Matrix message is
//!   capped and does not hold a game answer behind it, and a "direct" room a third person
//!   joined is not private (issue 13).
//!
//! These need InspIRCd and Synapse (`tests/scripts/install-inspircd.sh`,
//! `tests/scripts/install-synapse.sh`); without them they fail with the harness's message,
//! they never skip. Every wait is bounded; a failure prints the daemon's log.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::{Value, json};
use spellbridge_adapters::irc::format::strip;
use spellbridge_tests::harness::daemon::Daemon;
use spellbridge_tests::harness::inspircd::InspIrcd;
use spellbridge_tests::harness::irc_client::{IrcClient, Message as IrcMessage, MessageKind};
use spellbridge_tests::harness::matrix_client::{MatrixClient, Message as MxMessage};
use spellbridge_tests::harness::synapse::Synapse;
use tokio::time::Instant;

const BIN: &str = env!("CARGO_BIN_EXE_spellbridge");
const BOT: &str = "spellbridge";
const CHANNEL: &str = "#magic";
/// How long one expected message may take.
const WAIT: Duration = Duration::from_secs(20);
/// How long the daemon may take to start, log in and answer on both networks.
const STARTUP: Duration = Duration::from_secs(60);
/// How long "nothing more arrives" is watched for.
const QUIET: Duration = Duration::from_secs(2);

fn password(localpart: &str) -> String {
    format!("{localpart}-password")
}

fn bot_id() -> String {
    format!("@{BOT}:localhost")
}

/// InspIRCd and Synapse, started side by side.
fn servers() -> (InspIrcd, Synapse) {
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
struct Extra {
    /// Tables appended to the config (`[permissions]`, `[duel]`).
    sections: String,
    /// The IRC reconnect delay (default "1s").
    irc_reconnect: Option<&'static str>,
    /// The body of `[irc.flood]` (default `enabled = false`).
    irc_flood: Option<&'static str>,
}

/// Writes the config (IRC without flood control, Matrix with the bot's password in a
/// file, the bridge of `#magic` and `room`) and starts the daemon.
fn start_daemon(irc: &InspIrcd, synapse: &Synapse, room: &str, extra: &Extra) -> Daemon {
    let mut daemon = Daemon::new(BIN).unwrap_or_else(|e| panic!("{e}"));
    daemon.write("bot-password", format!("{}\n", password(BOT))).unwrap_or_else(|e| panic!("{e}"));
    daemon.env(
        "RUST_LOG",
        "info,spellbridge=debug,matrix_sdk=warn,matrix_sdk_base=warn,matrix_sdk_crypto=error",
    );
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

[[matrix]]
name = "matrix"
homeserver = "{homeserver}"
user_id = "{bot}"
password = {{ file = "bot-password" }}
store = "matrix-store"
invite_allow = ["*:localhost"]
reconnect_delay = "1s"

[matrix.user_limit]
enabled = false

[[bridge]]
name = "magic"
rooms = [{{ network = "irc", room = "{CHANNEL}" }}, {{ network = "matrix", room = "{room}" }}]

{sections}
"#,
        port = irc.port(),
        reconnect = extra.irc_reconnect.unwrap_or("1s"),
        flood = extra.irc_flood.unwrap_or("enabled = false"),
        homeserver = synapse.base_url(),
        bot = bot_id(),
        sections = extra.sections,
    );
    daemon.set_config(&config).unwrap_or_else(|e| panic!("{e}"));
    daemon.spawn().unwrap_or_else(|e| panic!("{e}"));
    daemon
}

// ---------------------------------------------------------------------------------------
// People on IRC.

/// An IRC client in `#magic`, with everything it received kept in order: `expect`
/// takes the first message not taken yet that matches and never loses what it skips
/// (messages may come in either order), so a test can both wait for messages and count
/// every one that arrived.
struct Irc {
    client: IrcClient,
    seen: Vec<IrcMessage>,
    /// Everything before this was expected; `taken` are the ones expected after it.
    read: usize,
    taken: BTreeSet<usize>,
}

impl Irc {
    async fn connect(port: u16, nick: &str) -> Irc {
        let mut client =
            IrcClient::connect(port, nick).await.unwrap_or_else(|e| panic!("{nick} connects: {e}"));
        client.join(CHANNEL).await.unwrap_or_else(|e| panic!("{nick} joins {CHANNEL}: {e}"));
        Irc { client, seen: Vec::new(), read: 0, taken: BTreeSet::new() }
    }

    fn nick(&self) -> &str {
        self.client.nick()
    }

    async fn say(&mut self, text: &str) {
        let nick = self.nick().to_owned();
        self.client.privmsg(CHANNEL, text).await.unwrap_or_else(|e| panic!("{nick} says {text:?}: {e}"));
    }

    async fn act(&mut self, text: &str) {
        let nick = self.nick().to_owned();
        self.client.action(CHANNEL, text).await.unwrap_or_else(|e| panic!("{nick} acts {text:?}: {e}"));
    }

    /// A private message to the bot.
    async fn tell_bot(&mut self, text: &str) {
        let nick = self.nick().to_owned();
        self.client.privmsg(BOT, text).await.unwrap_or_else(|e| panic!("{nick} tells the bot {text:?}: {e}"));
    }

    /// Reads until `quiet` passes with nothing new.
    async fn pump(&mut self, quiet: Duration) {
        while let Some(m) = self.client.next_message(quiet).await {
            self.seen.push(m);
        }
    }

    /// Forgets everything received so far (after the setup's chatter).
    async fn settle(&mut self) {
        self.pump(Duration::from_millis(300)).await;
        self.seen.clear();
        self.read = 0;
        self.taken.clear();
    }

    /// The next message (after the cursor) for which `wanted` holds, within [`WAIT`].
    /// The last 30 messages not taken by an `expect`, for failure messages.
    fn unexpected(&self) -> String {
        let left: Vec<String> = (self.read..self.seen.len())
            .filter(|i| !self.taken.contains(i))
            .map(|i| self.seen[i].to_string())
            .collect();
        left[left.len().saturating_sub(30)..].join("\n  ")
    }

    async fn expect_where(&mut self, what: &str, wanted: impl Fn(&IrcMessage) -> bool) -> IrcMessage {
        let deadline = Instant::now() + WAIT;
        loop {
            let taken = &self.taken;
            if let Some(i) =
                (self.read..self.seen.len()).find(|i| !taken.contains(i) && wanted(&self.seen[*i]))
            {
                self.taken.insert(i);
                while self.taken.remove(&self.read) {
                    self.read += 1;
                }
                return self.seen[i].clone();
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.client.next_message(left).await {
                Some(m) => self.seen.push(m),
                None => panic!(
                    "{} waited {WAIT:?} for {what}; received and not expected (the last 30):\n  {}",
                    self.nick(),
                    self.unexpected()
                ),
            }
        }
    }

    /// The next message from the bot in the channel containing `needle` (formatting
    /// stripped).
    async fn expect(&mut self, needle: &str) -> IrcMessage {
        self.expect_where(&format!("{needle:?} in {CHANNEL}"), |m| {
            m.from == BOT && m.target == CHANNEL && strip(&m.text).contains(needle)
        })
        .await
    }

    /// The next private message from the bot containing `needle`.
    async fn expect_private(&mut self, needle: &str) -> IrcMessage {
        let nick = self.nick().to_owned();
        self.expect_where(&format!("a private {needle:?}"), move |m| {
            m.from == BOT && m.target == nick && strip(&m.text).contains(needle)
        })
        .await
    }

    /// The bot's messages in the channel, formatting stripped, in order.
    fn bot_lines(&self) -> Vec<String> {
        self.seen
            .iter()
            .filter(|m| m.from == BOT && m.target == CHANNEL && m.kind == MessageKind::Privmsg)
            .map(|m| strip(&m.text))
            .collect()
    }

    /// Every message in the channel (anyone's), formatting stripped, in order.
    fn channel_lines(&self) -> Vec<(String, String)> {
        self.seen.iter().filter(|m| m.target == CHANNEL).map(|m| (m.from.clone(), strip(&m.text))).collect()
    }
}

/// Says `!games` until the bot answers in the channel (it has joined), within [`STARTUP`].
async fn until_bot_on_irc(client: &mut Irc) {
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
struct Mx {
    client: MatrixClient,
    name: &'static str,
    dm: Option<String>,
    seen: Vec<MxMessage>,
    read: usize,
    taken: BTreeSet<usize>,
}

impl Mx {
    /// Registers `localpart` and sets its display name.
    async fn new(synapse: &Synapse, localpart: &str, name: &'static str) -> Mx {
        let (user_id, token) = synapse
            .register(localpart, &password(localpart), false)
            .unwrap_or_else(|e| panic!("registering {localpart}: {e}"));
        let mut client = MatrixClient::from_token(&synapse.base_url(), &user_id, &token)
            .unwrap_or_else(|e| panic!("{localpart}'s client: {e}"));
        client.set_display_name(name).await.unwrap_or_else(|e| panic!("{e}"));
        Mx { client, name, dm: None, seen: Vec::new(), read: 0, taken: BTreeSet::new() }
    }

    fn id(&self) -> &str {
        self.client.user_id()
    }

    async fn say(&mut self, room: &str, text: &str) -> String {
        self.client.send_text(room, text).await.unwrap_or_else(|e| panic!("{} says {text:?}: {e}", self.name))
    }

    /// A message in this user's direct room with the bot.
    async fn tell_bot(&mut self, text: &str) {
        let dm = self.dm.clone().unwrap_or_else(|| panic!("{} has no direct room with the bot", self.name));
        self.say(&dm, text).await;
    }

    async fn pump(&mut self, quiet: Duration) {
        while let Some(m) = self.client.next_message(quiet).await {
            self.seen.push(m);
        }
    }

    async fn settle(&mut self) {
        self.client.catch_up().await.unwrap_or_else(|e| panic!("{e}"));
        self.seen.clear();
        self.read = 0;
        self.taken.clear();
    }

    /// The last 30 messages not taken by an `expect`, for failure messages.
    fn unexpected(&self) -> String {
        let left: Vec<String> = (self.read..self.seen.len())
            .filter(|i| !self.taken.contains(i))
            .map(|i| self.seen[i].to_string())
            .collect();
        left[left.len().saturating_sub(30)..].join("\n  ")
    }

    async fn expect_where(&mut self, what: &str, wanted: impl Fn(&MxMessage) -> bool) -> MxMessage {
        let deadline = Instant::now() + WAIT;
        loop {
            let taken = &self.taken;
            if let Some(i) =
                (self.read..self.seen.len()).find(|i| !taken.contains(i) && wanted(&self.seen[*i]))
            {
                self.taken.insert(i);
                while self.taken.remove(&self.read) {
                    self.read += 1;
                }
                return self.seen[i].clone();
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.client.next_message(left).await {
                Some(m) => self.seen.push(m),
                None => panic!(
                    "{} waited {WAIT:?} for {what}; received and not expected (the last 30):\n  {}",
                    self.name,
                    self.unexpected()
                ),
            }
        }
    }

    /// The next message from the bot in `room` containing `needle`.
    async fn expect_in(&mut self, room: &str, needle: &str) -> MxMessage {
        let (bot, room_id) = (bot_id(), room.to_owned());
        self.expect_where(&format!("{needle:?} in {room}"), move |m| {
            m.sender == bot && m.room_id == room_id && m.body.contains(needle)
        })
        .await
    }

    /// The next message from the bot in the direct room containing `needle`.
    async fn expect_private(&mut self, needle: &str) -> MxMessage {
        let dm = self.dm.clone().unwrap_or_else(|| panic!("{} has no direct room with the bot", self.name));
        self.expect_in(&dm, needle).await
    }

    /// The bot's messages in `room`, in order.
    fn bot_lines(&self, room: &str) -> Vec<String> {
        let bot = bot_id();
        self.seen.iter().filter(|m| m.sender == bot && m.room_id == room).map(|m| m.body.clone()).collect()
    }

    /// Every message in `room` (anyone's but this user's own), in order.
    fn room_lines(&self, room: &str) -> Vec<(String, String)> {
        self.seen.iter().filter(|m| m.room_id == room).map(|m| (m.sender.clone(), m.body.clone())).collect()
    }
}

/// `creator` makes the bridged room (unencrypted) with the bot and `members` invited;
/// the members join. Returns the room id.
async fn bridge_room(creator: &mut Mx, members: &mut [&mut Mx]) -> String {
    let mut invite = vec![bot_id()];
    invite.extend(members.iter().map(|m| m.id().to_owned()));
    let room = creator.client.create_room("magic", &invite, false).await.unwrap_or_else(|e| panic!("{e}"));
    for member in members.iter_mut() {
        member.client.accept_invite(&room).await.unwrap_or_else(|e| panic!("{e}"));
    }
    room
}

/// Each user opens an unencrypted direct room with the bot (an invite the daemon accepts).
async fn direct_rooms(users: &mut [&mut Mx]) {
    for user in users.iter_mut() {
        let dm = user.client.create_dm(&bot_id(), false).await.unwrap_or_else(|e| panic!("{e}"));
        user.dm = Some(dm);
    }
}

/// Says `!games` in `room` until the bot answers there, within [`STARTUP`].
async fn until_bot_in(user: &mut Mx, room: &str) {
    let bot = bot_id();
    let deadline = Instant::now() + STARTUP;
    while Instant::now() < deadline {
        user.say(room, "!games").await;
        let until = Instant::now() + Duration::from_secs(3);
        while let Some(m) = user.client.next_message(until.saturating_duration_since(Instant::now())).await {
            if m.sender == bot && m.room_id == room && m.body.contains("Games:") {
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
async fn until_bot_everywhere(room: &str, in_room: &mut Mx, with_dms: &mut [&mut Mx]) {
    until_bot_in(in_room, room).await;
    for user in with_dms.iter_mut() {
        let dm = user.dm.clone().expect("a direct room");
        until_bot_in(user, &dm).await;
    }
}

/// `count` of `needle` among `lines`.
fn count(lines: &[String], needle: &str) -> usize {
    lines.iter().filter(|l| l.contains(needle)).count()
}

// ---------------------------------------------------------------------------------------
// a. Chat.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_is_relayed_both_ways_with_formatting_and_never_echoed() {
    let started = Instant::now();
    let (irc, synapse) = servers();
    synapse.register(BOT, &password(BOT), false).unwrap_or_else(|e| panic!("{e}"));
    let mut watcher = Mx::new(&synapse, "watcher", "Watcher").await;
    let mut bobby = Mx::new(&synapse, "bobby", "Bobby").await;
    let room = bridge_room(&mut watcher, &mut [&mut bobby]).await;
    // A second bridge, whose Matrix room has only bobby and the bot in it: a room of two,
    // but a bridged room, not a direct chat.
    let solo = bobby.client.create_room("solo", &[bot_id()], false).await.unwrap_or_else(|e| panic!("{e}"));
    let (mut alice, mut ircwatch) =
        tokio::join!(Irc::connect(irc.port(), "alice"), Irc::connect(irc.port(), "ircwatch"));
    ircwatch.client.join("#solo").await.unwrap_or_else(|e| panic!("{e}"));
    let extra = Extra {
        sections: format!(
            "[[bridge]]\nname = \"solo\"\n\
             rooms = [{{ network = \"irc\", room = \"#solo\" }}, {{ network = \"matrix\", room = \"{solo}\" }}]\n"
        ),
        ..Extra::default()
    };
    let mut daemon = start_daemon(&irc, &synapse, &room, &extra);
    until_bot_on_irc(&mut alice).await;
    until_bot_in(&mut watcher, &room).await;
    let deadline = Instant::now() + STARTUP;
    while !bobby.client.joined_members(&solo).await.unwrap_or_default().contains(&bot_id()) {
        assert!(Instant::now() < deadline, "the bot did not join {solo} within {STARTUP:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for client in [&mut alice, &mut ircwatch] {
        client.settle().await;
    }
    for user in [&mut watcher, &mut bobby] {
        user.settle().await;
    }
    eprintln!("set up in {:?}", started.elapsed());

    // IRC bold arrives in Matrix as HTML, after the speaker's name.
    alice.say("hello \x02bold\x02 world").await;
    let relayed = watcher.expect_in(&room, "<alice> hello bold world").await;
    assert_eq!(relayed.msgtype, "m.text", "{relayed}");
    let html = relayed.formatted_body.clone().unwrap_or_default();
    assert!(
        html == "&lt;alice&gt; hello <strong>bold</strong> world"
            || html == "&lt;alice&gt; hello <b>bold</b> world",
        "the bold survives as HTML: {relayed}"
    );

    // Matrix HTML bold arrives on IRC with \x02.
    bobby
        .client
        .send_html(&room, "**strong** words", "<b>strong</b> words")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let line = ircwatch.expect("<Bobby> strong words").await;
    assert_eq!(line.text, "<Bobby> \x02strong\x02 words", "{line}");

    // An IRC /me arrives as an m.emote.
    alice.act("waves at Bobby").await;
    let emote = watcher.expect_in(&room, "alice waves at Bobby").await;
    assert_eq!((emote.msgtype.as_str(), emote.body.as_str()), ("m.emote", "alice waves at Bobby"), "{emote}");

    // A Matrix edit arrives on IRC as a short correction; a reaction as an action.
    let original = bobby.say(&room, "the spell is wrold-class").await;
    ircwatch.expect("<Bobby> the spell is wrold-class").await;
    let edit = json!({
        "msgtype": "m.text",
        "body": "* the spell is world-class",
        "m.new_content": {"msgtype": "m.text", "body": "the spell is world-class"},
        "m.relates_to": {"rel_type": "m.replace", "event_id": original},
    });
    bobby.client.send_message(&room, edit).await.unwrap_or_else(|e| panic!("{e}"));
    let correction = ircwatch.expect("<Bobby> s/").await;
    assert_eq!(strip(&correction.text), "<Bobby> s/wrold-class/world-class/", "{correction}");
    bobby.client.react(&room, &original, "👍").await.unwrap_or_else(|e| panic!("{e}"));
    let reaction = ircwatch.expect("Bobby reacted 👍").await;
    assert_eq!(
        reaction.text, "\u{1}ACTION Bobby reacted 👍 to Bobby: \u{201c}the spell is world-class\u{201d}\u{1}",
        "a reaction is an action line quoting what it reacts to: {reaction}"
    );

    // A Matrix emote arrives as an IRC action; a deletion as an action line.
    bobby
        .client
        .send_message(&room, json!({"msgtype": "m.emote", "body": "casts a glance"}))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let acted = ircwatch.expect("Bobby casts a glance").await;
    assert_eq!(acted.text, "\u{1}ACTION Bobby casts a glance\u{1}", "{acted}");
    bobby.client.redact(&room, &original, None).await.unwrap_or_else(|e| panic!("{e}"));
    ircwatch.expect("Bobby deleted their message").await;

    // A command is not relayed (its answer stays where it was asked), nor is its edit.
    let command = bobby.say(&room, "!decline").await;
    bobby.expect_in(&room, "Bobby: There is no challenge for you to decline").await;
    let edit = json!({
        "msgtype": "m.text",
        "body": "* !decline now",
        "m.new_content": {"msgtype": "m.text", "body": "!decline now"},
        "m.relates_to": {"rel_type": "m.replace", "event_id": command},
    });
    bobby.client.send_message(&room, edit).await.unwrap_or_else(|e| panic!("{e}"));

    // In the bridged room of two, chat is relayed and commands are answered there: it is
    // no direct chat.
    bobby.say(&solo, "solo hello").await;
    ircwatch
        .expect_where("bobby's line in #solo", |m| {
            m.from == BOT && m.target == "#solo" && m.text == "<Bobby> solo hello"
        })
        .await;
    bobby.say(&solo, "!games").await;
    bobby.expect_in(&solo, "Bobby: Games:").await;

    // Each relayed message arrives exactly once, and nothing comes back where it was said.
    let quiet = Instant::now();
    tokio::join!(ircwatch.pump(Duration::from_secs(3)), watcher.pump(Duration::from_secs(3)));
    eprintln!("watched {:?} for echoes", quiet.elapsed());
    let on_irc = ircwatch.bot_lines();
    let on_matrix = watcher.bot_lines(&room);
    assert_eq!(
        on_irc,
        [
            "<Bobby> strong words",
            "<Bobby> the spell is wrold-class",
            "<Bobby> s/wrold-class/world-class/",
            "ACTION Bobby reacted 👍 to Bobby: \u{201c}the spell is world-class\u{201d}",
            "ACTION Bobby casts a glance",
            "ACTION Bobby deleted their message",
        ],
        "IRC got each Matrix line once and none of its own back"
    );
    assert_eq!(
        on_matrix,
        [
            "<alice> hello bold world",
            "alice waves at Bobby",
            "Bobby: There is no challenge for you to decline in this room."
        ],
        "Matrix got each IRC line once and none of its own back"
    );
    daemon.ensure_running().unwrap_or_else(|e| panic!("{e}"));
    eprintln!("the test took {:?}", started.elapsed());
}

// ---------------------------------------------------------------------------------------
// b. A Duel between the networks, with nothing revealed early.

/// The names a Duel token is shown by in the rooms (case matters: the help text's
/// `!cast surge fire …` is not a token shown).
const TOKEN_NAMES: &[&str] = &[
    "Power Surge",
    "Focused Casting",
    "Overspeed",
    "Full Counter",
    "Fire",
    "Water",
    "Thunder",
    "Wind",
    "Earth",
    "Void",
];

/// One round as the rooms must see it: the chat line said after the first caster
/// queued and before the second cast, and each step's tokens (first player, second).
struct RoundPlan {
    number: u32,
    marker: &'static str,
    steps: &'static [(&'static str, &'static str)],
}

/// Checks one room's transcript (every message in order, anyone's): between `Round n
/// begins` and `Round n settles`, no token is shown before the marker, the step lines
/// come in order 0, 1, 2… showing exactly the planned tokens, and no other message names
/// a token. Nowhere does a private answer (`Queued`, a sealed refusal) show up.
fn assert_nothing_revealed_early(room: &str, transcript: &[(String, String)], rounds: &[RoundPlan]) {
    let listing = || {
        transcript
            .iter()
            .enumerate()
            .map(|(i, (from, text))| format!("{i:3} {from}: {text}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    for (_, text) in transcript {
        for private in ["Queued", "Your spell", "is sealed for the first"] {
            assert!(
                !text.contains(private),
                "{room}: a private answer reached the room: {text:?}\n{}",
                listing()
            );
        }
    }
    for round in rounds {
        let n = round.number;
        let find = |needle: &str| transcript.iter().position(|(_, text)| text.contains(needle));
        let begins = find(&format!("Round {n} begins"))
            .unwrap_or_else(|| panic!("{room}: no `Round {n} begins`\n{}", listing()));
        let settles = find(&format!("Round {n} settles"))
            .unwrap_or_else(|| panic!("{room}: no `Round {n} settles`\n{}", listing()));
        let marker = find(round.marker)
            .unwrap_or_else(|| panic!("{room}: no marker {:?}\n{}", round.marker, listing()));
        assert!(begins < marker && marker < settles, "{room}: round {n} out of order\n{}", listing());
        let step_prefix = format!("Round {n}, step");
        let mut next_step = 0;
        for (i, (from, text)) in transcript.iter().enumerate().take(settles).skip(begins + 1) {
            if let Some(rest) = text.strip_prefix(&step_prefix) {
                assert!(
                    i > marker,
                    "{room}: step line {i} came before the second spell was cast\n{}",
                    listing()
                );
                let (steps, shown) =
                    rest.split_once(": ").unwrap_or_else(|| panic!("{room}: odd step line {text:?}"));
                // One step (`step 3`), or several on one line in the compact form
                // (`steps 0–5`, each wizard's tokens in order).
                let (first_step, last_step) = match (steps.strip_prefix("s "), steps.strip_prefix(' ')) {
                    (Some(range), _) => {
                        range.split_once('–').unwrap_or_else(|| panic!("{room}: odd step line {text:?}"))
                    }
                    (None, Some(step)) => (step, step),
                    (None, None) => panic!("{room}: odd step line {text:?}"),
                };
                assert_eq!(
                    first_step,
                    next_step.to_string(),
                    "{room}: steps out of order at line {i}\n{}",
                    listing()
                );
                let last_step: usize =
                    last_step.parse().unwrap_or_else(|_| panic!("{room}: odd step line {text:?}"));
                let (mut left, mut right) =
                    shown.split_once(" · ").unwrap_or_else(|| panic!("{room}: odd step line {text:?}"));
                for step in next_step..=last_step {
                    let (first, second) = round.steps[step];
                    let (Some(l), Some(r)) = (left.find(first), right.find(second)) else {
                        panic!("{room}: round {n} step {step} shows {shown:?}, planned {first} · {second}");
                    };
                    (left, right) = (&left[l + first.len()..], &right[r + second.len()..]);
                }
                next_step = last_step + 1;
            } else if let Some(name) = TOKEN_NAMES.iter().find(|name| text.contains(*name)) {
                panic!("{room}: line {i} from {from} names {name} in the middle of round {n}\n{}", listing());
            }
        }
        assert_eq!(
            next_step,
            round.steps.len(),
            "{room}: round {n} revealed {next_step} steps\n{}",
            listing()
        );
    }
}

/// The check itself: a clean transcript passes, and each kind of leak is caught.
#[test]
fn the_hidden_information_check_catches_leaks() {
    const PLAN: [RoundPlan; 1] =
        [RoundPlan { number: 1, marker: "marker", steps: &[("Power Surge", "Power Surge"), ("End", "End")] }];
    let transcript = |lines: &[&str]| -> Vec<(String, String)> {
        lines.iter().map(|l| ("bot".to_owned(), (*l).to_owned())).collect()
    };
    let clean = [
        "Round 1 begins: send your spell",
        "<alice> marker",
        "Round 1, step 0: alice Power Surge · bob Power Surge",
        "Round 1, step 1: alice End · bob End",
        "Round 1 settles.",
    ];
    assert_nothing_revealed_early("clean", &transcript(&clean), &PLAN);
    let compact =
        [clean[0], clean[1], "Round 1, steps 0–1: alice Power Surge End · bob Power Surge End", clean[4]];
    assert_nothing_revealed_early("compact", &transcript(&compact), &PLAN);
    let leaks: [&[&str]; 6] = [
        // A token named before the step is revealed.
        &[clean[0], "alice: Queued surge", clean[1], clean[2], clean[3], clean[4]],
        &[clean[0], "alice prepares Power Surge", clean[1], clean[2], clean[3], clean[4]],
        // A step revealed before the second wizard cast.
        &[clean[0], clean[2], clean[1], clean[3], clean[4]],
        // Steps out of order.
        &[clean[0], clean[1], clean[3], clean[2], clean[4]],
        // The compact line before the second wizard cast, or missing a token.
        &[clean[0], compact[2], clean[1], clean[4]],
        &[clean[0], clean[1], "Round 1, steps 0–1: alice Power Surge · bob Power Surge End", clean[4]],
    ];
    for leak in leaks {
        let caught =
            std::panic::catch_unwind(|| assert_nothing_revealed_early("leaky", &transcript(leak), &PLAN));
        assert!(caught.is_err(), "not caught: {leak:#?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_irc_player_and_a_matrix_player_duel_and_no_room_hears_a_token_early() {
    let started = Instant::now();
    let (irc, synapse) = servers();
    synapse.register(BOT, &password(BOT), false).unwrap_or_else(|e| panic!("{e}"));
    let mut watcher = Mx::new(&synapse, "watcher", "Watcher").await;
    let mut bobby = Mx::new(&synapse, "bobby", "Bobby").await;
    let room = bridge_room(&mut watcher, &mut [&mut bobby]).await;
    direct_rooms(&mut [&mut bobby]).await;
    let (mut alice, mut ircwatch) =
        tokio::join!(Irc::connect(irc.port(), "alice"), Irc::connect(irc.port(), "ircwatch"));
    let _daemon = start_daemon(&irc, &synapse, &room, &Extra::default());
    until_bot_on_irc(&mut alice).await;
    until_bot_everywhere(&room, &mut watcher, &mut [&mut bobby]).await;
    for client in [&mut alice, &mut ircwatch] {
        client.settle().await;
    }
    for user in [&mut watcher, &mut bobby] {
        user.settle().await;
    }
    eprintln!("set up in {:?}", started.elapsed());

    // The IRC player challenges the Matrix player by display name; the answer comes from
    // Matrix; both rooms hear both.
    alice.say("!duel Bobby").await;
    ircwatch.expect("alice challenges Bobby").await;
    watcher.expect_in(&room, "alice challenges Bobby").await;
    bobby.say(&room, "!accept").await;
    ircwatch.expect("Round 1 begins").await;
    watcher.expect_in(&room, "Round 1 begins").await;

    // Round 1: alice casts by IRC PM first; bobby asks for the status in the Matrix room
    // (the answer stays there and shows nothing of alice's spell); then bobby casts by DM.
    alice.tell_bot("!cast surge fire wind water thunder end").await;
    alice.expect_private("Queued").await;
    bobby.say(&room, "!status").await;
    let status = bobby.expect_in(&room, "Duel:").await;
    assert!(!status.body.contains("Fire"), "{status}");
    alice.say("marker one").await;
    watcher.expect_where("the relayed marker", |m| m.body == "<alice> marker one").await;
    bobby.tell_bot("!cast focus earth earth earth earth end").await;
    bobby.expect_private("Queued").await;
    for needle in ["Round 1, step 5", "Round 1 settles", "24 toward alice", "Round 2 begins"] {
        watcher.expect_in(&room, needle).await;
    }
    // IRC hears the round in its compact form: the steps on one line, the settlement and
    // the track's move on the next.
    ircwatch.expect("Round 1, steps 0–5").await;
    let settles = ircwatch.expect("Round 1 settles").await;
    assert!(strip(&settles.text).contains("now 24 toward alice"), "{settles}");
    ircwatch.expect("Round 2 begins").await;

    // Round 2: bobby first this time; alice's first try is refused privately (bobby's
    // Earth run sealed Wind, RULES D-10).
    bobby.tell_bot("!cast focus earth earth earth earth end").await;
    bobby.expect_private("Queued").await;
    bobby.say(&room, "marker two").await;
    ircwatch.expect("<Bobby> marker two").await;
    alice.tell_bot("!cast surge fire wind end").await;
    let refused = alice.expect_private("sealed").await;
    assert!(refused.text.contains("wind"), "{refused}");
    alice.tell_bot("!cast surge fire earth fire earth end").await;
    alice.expect_private("Queued").await;
    let over = ircwatch.expect("duel is over").await;
    assert!(strip(&over.text).contains("alice"), "alice wins on the track (D-1): {over}");
    watcher.expect_in(&room, "duel is over").await;

    tokio::join!(ircwatch.pump(QUIET), watcher.pump(QUIET));
    let rounds = [
        RoundPlan {
            number: 1,
            marker: "marker one",
            steps: &[
                ("Power Surge", "Focused Casting"),
                ("Fire", "Earth"),
                ("Wind", "Earth"),
                ("Water", "Earth"),
                ("Thunder", "Earth"),
                ("End", "End"),
            ],
        },
        RoundPlan {
            number: 2,
            marker: "marker two",
            steps: &[
                ("Power Surge", "Focused Casting"),
                ("Fire", "Earth"),
                ("Earth", "Earth"),
                ("Fire", "Earth"),
                ("Earth", "Earth"),
                ("End", "End"),
            ],
        },
    ];
    assert_nothing_revealed_early(CHANNEL, &ircwatch.channel_lines(), &rounds);
    assert_nothing_revealed_early("the Matrix room", &watcher.room_lines(&room), &rounds);

    // Every announcement reached both rooms, the same (bobby's status answer only where
    // he asked, relayed chat only on the other side).
    let table_lines = |lines: Vec<String>| -> Vec<String> {
        lines
            .into_iter()
            .filter(|l| !l.starts_with('<'))
            .filter(|l| {
                !["Duel:", "Pools:", "Seals this round", "This round so far"].iter().any(|s| l.starts_with(s))
            })
            .collect()
    };
    let on_irc = table_lines(ircwatch.bot_lines());
    // Code is shown in backticks in a Matrix body and plain on IRC.
    let on_matrix: Vec<String> =
        table_lines(watcher.bot_lines(&room)).iter().map(|l| l.replace('`', "")).collect();
    // A round is told in the full form on Matrix and in the compact form on IRC (the
    // steps, the settlement, the next round: three lines); everything else is the same.
    let is_round = |l: &String| l.starts_with("Round ") || l.starts_with("Track moves") || l.contains(" → ");
    let (irc_rounds, irc_rest): (Vec<String>, Vec<String>) = on_irc.iter().cloned().partition(is_round);
    let (matrix_rounds, matrix_rest): (Vec<String>, Vec<String>) =
        on_matrix.iter().cloned().partition(is_round);
    assert!(irc_rest.len() >= 5, "{on_irc:#?}");
    assert_eq!(irc_rest, matrix_rest, "both rooms heard the same announcements besides the rounds");
    // Round 1's steps and settlement, round 2's start, steps and settlement (round 1's
    // start is in the duel's opening line, the same on both).
    assert_eq!(irc_rounds.len(), 5, "{irc_rounds:#?}");
    assert!(matrix_rounds.len() >= 20, "{matrix_rounds:#?}");
    for once in ["Round 1 settles", "Round 2 begins", "duel is over"] {
        assert_eq!(count(&on_irc, once), 1, "{once:?} once on IRC: {on_irc:#?}");
    }
    eprintln!("the test took {:?}", started.elapsed());
}

// ---------------------------------------------------------------------------------------
// c, d, e. Thaum across the bridge, linked identities, permissions.

/// A link code in the bot's private message.
fn link_code(text: &str) -> String {
    let plain = strip(text);
    let code = plain
        .split(|c: char| !c.is_ascii_digit())
        .find(|word| word.len() == 8)
        .unwrap_or_else(|| panic!("no link code in {plain:?}"));
    code.to_owned()
}

/// A table's state from `spellbridge export`, run on the daemon's database.
fn export(daemon: &Daemon, table: u64) -> Value {
    let output =
        daemon.command(&["export", &table.to_string(), "--db", "games.db"]).unwrap_or_else(|e| panic!("{e}"));
    assert!(output.status.success(), "export failed: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("export is not JSON ({e})"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thaum_links_and_permissions_across_the_bridge() {
    let started = Instant::now();
    let (irc, synapse) = servers();
    synapse.register(BOT, &password(BOT), false).unwrap_or_else(|e| panic!("{e}"));
    let mut watcher = Mx::new(&synapse, "watcher", "Watcher").await;
    let mut merlin = Mx::new(&synapse, "mage", "Merlin").await;
    let mut danam = Mx::new(&synapse, "dana", "DanaM").await;
    let room = bridge_room(&mut watcher, &mut [&mut merlin, &mut danam]).await;
    direct_rooms(&mut [&mut danam]).await;
    // opal is first in the channel, so InspIRCd makes her its operator.
    let mut opal = Irc::connect(irc.port(), "opal").await;
    let (mut alice, mut carol, mut dana, mut gm) = tokio::join!(
        Irc::connect(irc.port(), "alice"),
        Irc::connect(irc.port(), "carol"),
        Irc::connect(irc.port(), "dana"),
        Irc::connect(irc.port(), "gm"),
    );
    let extra = Extra {
        sections: "[permissions]\ngame_masters = [\"irc/gm\", \"matrix/@mage:localhost\"]\n".to_owned(),
        ..Extra::default()
    };
    let mut daemon = start_daemon(&irc, &synapse, &room, &extra);
    until_bot_on_irc(&mut opal).await;
    let names = opal.client.names(CHANNEL).await.unwrap_or_else(|e| panic!("{e}"));
    assert!(names.iter().any(|n| n == "@opal"), "opal operates {CHANNEL}: {names:?}");
    until_bot_everywhere(&room, &mut watcher, &mut [&mut danam]).await;
    for client in [&mut opal, &mut alice, &mut carol, &mut dana, &mut gm] {
        client.settle().await;
    }
    for user in [&mut watcher, &mut merlin, &mut danam] {
        user.settle().await;
    }
    eprintln!("set up in {:?}", started.elapsed());

    // c. A Thaum table opened from Matrix; players from both networks; spells naming a
    // player of the other network by nick and by display name.
    merlin.say(&room, "!new thaum").await;
    alice.expect("Merlin opens a Thaum table").await;
    watcher.expect_in(&room, "Merlin opens a Thaum table").await;
    alice.say("!join").await;
    watcher.expect_in(&room, "alice joins the Thaum table").await;
    carol.say("!join").await;
    watcher.expect_in(&room, "carol joins the Thaum table").await;
    merlin.say(&room, "!gather 1 air").await;
    alice.expect("Merlin gathers 1 Mana into Air: Air 0 → 1").await;
    carol.say("!gather 1 earth").await;
    watcher.expect_in(&room, "carol gathers 1 Mana into Earth: Earth 0 → 1").await;
    merlin.say(&room, "!summon 0 carol").await;
    let summoned = alice.expect("Merlin summons with carol").await;
    assert!(strip(&summoned.text).contains("N = 2"), "Air attacks Earth for 2: {summoned}");
    watcher.expect_in(&room, "Merlin summons with carol").await;
    merlin.say(&room, "!phase next").await;
    alice.expect("Phase II begins").await;
    alice.say("!gather 1 fire").await;
    watcher.expect_in(&room, "alice gathers 1 Mana into Fire: Fire 0 → 1").await;
    alice.say("!bend 1 Merlin").await;
    let bent = watcher.expect_in(&room, "alice bends Merlin with 1 Mana").await;
    assert!(bent.body.contains("Merlin now has Fire 0, Water -1, Earth 1, Air 2"), "{bent}");
    alice.expect("alice bends Merlin with 1 Mana").await;
    carol.say("!status Merlin").await;
    let sheet = carol.expect("Merlin's sheet").await;
    assert!(
        strip(&sheet.text).contains("Mana 1, Coins 2; Fire 0, Water -1, Earth 1, Air 2"),
        "the Matrix player's sheet, asked for from IRC by display name: {sheet}"
    );

    // d. dana links her IRC nick and her Matrix id. A code said in a room is void.
    dana.say("!link").await;
    dana.expect("dana: I sent you a link code privately").await;
    let code = link_code(&dana.expect_private("Your link code is").await.text);
    danam.say(&room, &format!("!link {code}")).await;
    danam.expect_in(&room, "Send link codes to me privately").await;
    danam.tell_bot(&format!("!link {code}")).await;
    danam.expect_private("does not work here").await;
    dana.tell_bot("!link").await;
    let code = link_code(&dana.expect_private("Your link code is").await.text);
    danam.tell_bot(&format!("!link {code}")).await;
    danam.expect_private("Linked: here you now play as dana").await;
    // One player from both sides: joined from IRC, casting from Matrix.
    dana.say("!join").await;
    alice.expect("dana joins the Thaum table").await;
    let joined = watcher.expect_in(&room, "joins the Thaum table").await;
    assert!(joined.body.starts_with("DanaM joins"), "on Matrix she is shown by her Matrix name: {joined}");
    danam.say(&room, "!gather 1 water").await;
    alice.expect("dana gathers 1 Mana into Water: Water 0 → 1; 0 Mana left").await;
    danam.say(&room, "!join").await;
    danam.expect_in(&room, "You already play Thaum here").await;

    // e. Permissions: players who are not game masters are refused (on both networks);
    // the configured game master may; the channel operator may `!stop` but not more.
    carol.say("!coins alice +5").await;
    let refused = carol.expect("nly a game master can use").await;
    assert!(strip(&refused.text).starts_with("carol: "), "{refused}");
    danam.say(&room, "!phase next").await;
    danam.expect_in(&room, "nly a game master can use").await;
    opal.say("!coins alice +1").await;
    opal.expect("opal: Only a game master can use").await;
    // A game master configured by a bare IRC nick (this server runs no services, so no
    // account vouches for it) is not one: anyone may hold that nick (issue 13).
    gm.say("!coins alice +1").await;
    gm.expect("gm: Only a game master can use").await;
    merlin.say(&room, "!coins alice +1").await;
    watcher.expect_in(&room, "changes alice's coins: 0 → 1").await;
    merlin.say(&room, "!phase next").await;
    watcher.expect_in(&room, "Phase III begins").await;

    // Nobody acts as someone else: an IRC nick equal to the Matrix player's display name
    // is another player, and the name now needs an id.
    let mut impostor = Irc::connect(irc.port(), "Merlin").await;
    impostor.say("!gather 1 fire").await;
    impostor.expect("Merlin: You are not playing Thaum here yet").await;
    // A name fits the one seated player it names; once the impostor sits down too, the
    // name is ambiguous and is asked back with the ids.
    impostor.say("!join").await;
    impostor.expect("joins the Thaum table with 1 Mana").await;
    alice.say("!bend 1 Merlin").await;
    let ambiguous = alice.expect("could be").await;
    assert!(strip(&ambiguous.text).contains("@mage:localhost"), "{ambiguous}");
    alice.say("!status @mage:localhost").await;
    let sheet = alice.expect("Phase III, Loop Instability 2").await;
    assert!(
        strip(&sheet.text).contains("Mana 2, Coins 2; Fire 0, Water -1, Earth 1, Air 2"),
        "the impostor changed nothing of Merlin's: {sheet}"
    );

    opal.say("!stop").await;
    let stopped = watcher.expect_in(&room, "opal stops the Thaum table").await;
    alice.expect("opal stops the Thaum table").await;
    eprintln!("{}", stopped.body);

    tokio::join!(watcher.pump(QUIET), alice.pump(QUIET));
    assert_eq!(count(&watcher.bot_lines(&room), "stops the Thaum table"), 1);
    assert!(daemon.terminate(Duration::from_secs(15)).is_ok_and(|s| s.success()), "a clean stop");
    let table = export(&daemon, 0);
    let state = &table["table"]["state"];
    let players: Vec<&String> = state["players"].as_object().map(|p| p.keys().collect()).unwrap_or_default();
    // IRC players' ids name their network (issue 13); the impostor sat down as irc:Merlin.
    assert_eq!(players, ["@mage:localhost", "irc:Merlin", "irc:alice", "irc:carol", "irc:dana"], "{state:#}");
    assert_eq!(state["players"]["irc:alice"]["coins"], 1, "{state:#}");
    assert_eq!(state["players"]["irc:dana"]["thaums"]["water"], 1, "{state:#}");
    assert_eq!(table["table"]["finished"], true, "{table:#}");
    eprintln!("the test took {:?}", started.elapsed());
}

// ---------------------------------------------------------------------------------------
// f. Restarts mid-game.

impl Irc {
    /// Connects again with the same nick (the server restarted), keeping what was seen.
    async fn reconnect(self, port: u16) -> Irc {
        let nick = self.nick().to_owned();
        let fresh = Irc::connect(port, &nick).await;
        Irc { client: fresh.client, ..self }
    }
}

/// Seconds since the epoch, as the daemon's clock reads them.
fn unix_now() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_daemon_inspircd_and_synapse_each_restart_mid_game_and_nothing_is_lost_or_doubled() {
    let started = Instant::now();
    let (mut irc, mut synapse) = servers();
    synapse.register(BOT, &password(BOT), false).unwrap_or_else(|e| panic!("{e}"));
    let mut watcher = Mx::new(&synapse, "watcher", "Watcher").await;
    let mut merlin = Mx::new(&synapse, "mage", "Merlin").await;
    let room = bridge_room(&mut watcher, &mut [&mut merlin]).await;
    let (mut alice, mut ircwatch) =
        tokio::join!(Irc::connect(irc.port(), "alice"), Irc::connect(irc.port(), "ircwatch"));
    // The bot's first reconnect to IRC comes 7.5-12.5 s after it lost the server: by
    // then the people are back in the channel, so they see what it queued meanwhile.
    let extra = Extra {
        sections: "[permissions]\ngame_masters = [\"matrix/@mage:localhost\"]\n".to_owned(),
        irc_reconnect: Some("10s"),
        ..Extra::default()
    };
    let mut daemon = start_daemon(&irc, &synapse, &room, &extra);
    until_bot_on_irc(&mut alice).await;
    until_bot_in(&mut watcher, &room).await;
    for client in [&mut alice, &mut ircwatch] {
        client.settle().await;
    }
    for user in [&mut watcher, &mut merlin] {
        user.settle().await;
    }
    alice.say("!new thaum").await;
    watcher.expect_in(&room, "alice opens a Thaum table").await;
    merlin.say(&room, "!join").await;
    ircwatch.expect("Merlin joins the Thaum table").await;
    eprintln!("set up in {:?}", started.elapsed());

    // Each coin command moves a count by one, so the final counts show every command
    // applied exactly once; each chat line is numbered.
    // 1. Everything up.
    alice.say("!coins Merlin +1").await;
    merlin.say(&room, "!coins alice +1").await;
    alice.say("irc chat 1").await;
    merlin.say(&room, "matrix chat 1").await;
    ircwatch.expect("Merlin changes alice's coins: 0 → 1").await;
    ircwatch.expect("<Merlin> matrix chat 1").await;
    watcher.expect_in(&room, "alice changes Merlin's coins: 0 → 1").await;
    watcher.expect_in(&room, "<alice> irc chat 1").await;

    // 2. The daemon is killed (SIGKILL) and started again on the same database; what
    // Matrix said meanwhile is taken once it is back.
    tokio::time::sleep(Duration::from_millis(500)).await;
    daemon.kill().unwrap_or_else(|e| panic!("{e}"));
    merlin.say(&room, "matrix chat 2").await;
    merlin.say(&room, "!coins alice +1").await;
    daemon.spawn().unwrap_or_else(|e| panic!("{e}"));
    ircwatch.expect("<Merlin> matrix chat 2").await;
    ircwatch.expect("Merlin changes alice's coins: 1 → 2").await;
    alice.say("!coins Merlin +1").await;
    alice.say("irc chat 2").await;
    watcher.expect_in(&room, "alice changes Merlin's coins: 1 → 2").await;
    watcher.expect_in(&room, "<alice> irc chat 2").await;
    eprintln!("daemon restarted at {:?}", started.elapsed());

    // 3. InspIRCd restarts: Matrix goes on meanwhile, and IRC hears what it missed once
    // the bot is back.
    alice.say("irc chat 3").await;
    merlin.say(&room, "matrix chat 3").await;
    watcher.expect_in(&room, "<alice> irc chat 3").await;
    ircwatch.expect("<Merlin> matrix chat 3").await;
    tokio::task::block_in_place(|| irc.stop()).unwrap_or_else(|e| panic!("{e}"));
    merlin.say(&room, "matrix chat 4").await;
    merlin.say(&room, "!coins alice +1").await;
    watcher.expect_in(&room, "Merlin changes alice's coins: 2 → 3").await;
    tokio::task::block_in_place(|| irc.restart()).unwrap_or_else(|e| panic!("{e}"));
    let (a, w) = tokio::join!(alice.reconnect(irc.port()), ircwatch.reconnect(irc.port()));
    (alice, ircwatch) = (a, w);
    ircwatch.expect("<Merlin> matrix chat 4").await;
    ircwatch.expect("Merlin changes alice's coins: 2 → 3").await;
    alice.say("!coins Merlin +1").await;
    alice.say("irc chat 4").await;
    watcher.expect_in(&room, "alice changes Merlin's coins: 2 → 3").await;
    watcher.expect_in(&room, "<alice> irc chat 4").await;
    eprintln!("InspIRCd restarted at {:?}", started.elapsed());

    // 4. Synapse restarts: IRC goes on meanwhile, and Matrix hears what it missed.
    alice.say("irc chat 5").await;
    merlin.say(&room, "matrix chat 5").await;
    watcher.expect_in(&room, "<alice> irc chat 5").await;
    ircwatch.expect("<Merlin> matrix chat 5").await;
    tokio::task::block_in_place(|| synapse.stop()).unwrap_or_else(|e| panic!("{e}"));
    alice.say("!coins Merlin +1").await;
    alice.say("irc chat 6").await;
    ircwatch.expect("alice changes Merlin's coins: 3 → 4").await;
    tokio::task::block_in_place(|| synapse.restart()).unwrap_or_else(|e| panic!("{e}"));
    watcher.expect_in(&room, "alice changes Merlin's coins: 3 → 4").await;
    watcher.expect_in(&room, "<alice> irc chat 6").await;
    merlin.say(&room, "!coins alice +1").await;
    merlin.say(&room, "matrix chat 6").await;
    ircwatch.expect("Merlin changes alice's coins: 3 → 4").await;
    ircwatch.expect("<Merlin> matrix chat 6").await;
    eprintln!("Synapse restarted at {:?}", started.elapsed());

    // Nothing lost, nothing twice: every numbered line and every announcement of a coin
    // arrived exactly once on each side.
    tokio::join!(ircwatch.pump(QUIET), watcher.pump(QUIET));
    let on_irc = ircwatch.bot_lines();
    let on_matrix = watcher.bot_lines(&room);
    for n in 1..=6 {
        assert_eq!(count(&on_irc, &format!("<Merlin> matrix chat {n}")), 1, "line {n} on IRC: {on_irc:#?}");
        assert_eq!(
            count(&on_matrix, &format!("<alice> irc chat {n}")),
            1,
            "line {n} on Matrix: {on_matrix:#?}"
        );
    }
    for k in 1..=4 {
        for giver in ["alice changes Merlin's", "Merlin changes alice's"] {
            let line = format!("{giver} coins: {} → {k}", k - 1);
            assert_eq!(count(&on_irc, &line), 1, "{line:?} on IRC: {on_irc:#?}");
            assert_eq!(count(&on_matrix, &line), 1, "{line:?} on Matrix: {on_matrix:#?}");
        }
    }
    assert!(!on_irc.iter().any(|l| l.contains("<alice>")), "no IRC line came back to IRC: {on_irc:#?}");
    assert!(!on_matrix.iter().any(|l| l.contains("<Merlin>")), "no Matrix line came back: {on_matrix:#?}");
    alice.say("!status alice").await;
    let sheet = alice.expect("alice's sheet").await;
    assert!(strip(&sheet.text).contains("Coins 4"), "{sheet}");
    merlin.say(&room, "!status Merlin").await;
    let sheet = merlin.expect_in(&room, "Merlin's sheet").await;
    assert!(sheet.body.contains("Coins 4"), "{sheet}");

    assert!(daemon.terminate(Duration::from_secs(15)).is_ok_and(|s| s.success()), "a clean stop");
    let table = export(&daemon, 0);
    let state = &table["table"]["state"];
    assert_eq!(state["players"]["irc:alice"]["coins"], 4, "{state:#}");
    assert_eq!(state["players"]["@mage:localhost"]["coins"], 4, "{state:#}");
    let coins = table["journal"].as_array().map(|rows| {
        rows.iter().filter(|r| r["command"].as_str().is_some_and(|c| c.starts_with("!coins"))).count()
    });
    assert_eq!(coins, Some(8), "eight coin commands journaled: {table:#}");
    let verified = daemon.command(&["verify", "--db", "games.db"]).unwrap_or_else(|e| panic!("{e}"));
    assert!(verified.status.success(), "{}", String::from_utf8_lossy(&verified.stdout));
    let log = daemon.log();
    assert!(log.contains("=== start 2 ==="), "the daemon was started twice");
    eprintln!("the test took {:?}", started.elapsed());
}

// ---------------------------------------------------------------------------------------
// g. The scheduler: a step timeout that came due while the daemon was down.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_timeout_due_while_the_daemon_is_down_is_applied_once_when_it_is_back() {
    let started = Instant::now();
    let (irc, synapse) = servers();
    synapse.register(BOT, &password(BOT), false).unwrap_or_else(|e| panic!("{e}"));
    let mut watcher = Mx::new(&synapse, "watcher", "Watcher").await;
    let mut merlin = Mx::new(&synapse, "mage", "Merlin").await;
    let room = bridge_room(&mut watcher, &mut [&mut merlin]).await;
    let (mut alice, mut ircwatch) =
        tokio::join!(Irc::connect(irc.port(), "alice"), Irc::connect(irc.port(), "ircwatch"));
    const TIMEOUT: f64 = 4.0;
    let extra = Extra { sections: "[duel]\nstep_timeout = \"4s\"\n".to_owned(), ..Extra::default() };
    let mut daemon = start_daemon(&irc, &synapse, &room, &extra);
    until_bot_on_irc(&mut alice).await;
    until_bot_in(&mut watcher, &room).await;
    for client in [&mut alice, &mut ircwatch] {
        client.settle().await;
    }
    // Merlin speaks first: a challenge names someone the bot has heard (issue 13).
    until_bot_in(&mut merlin, &room).await;
    for user in [&mut watcher, &mut merlin] {
        user.settle().await;
    }
    eprintln!("set up in {:?}", started.elapsed());

    alice.say("!duel Merlin").await;
    ircwatch.expect("alice challenges Merlin").await;
    // The round starts at a whole second S when the bot takes the accept, so its first
    // step times out at S + 4 s, after `asked + 3 s` and no later than `begun + 4 s`.
    let asked = unix_now();
    merlin.say(&room, "!accept").await;
    ircwatch.expect("Round 1 begins").await;
    let begun = unix_now();
    alice.tell_bot("!cast surge fire wind end").await;
    alice.expect_private("Queued").await;
    daemon.kill().unwrap_or_else(|e| panic!("{e}"));
    let killed = unix_now();
    assert!(
        killed < asked + TIMEOUT - 1.0,
        "the daemon had to be stopped before the step timed out ({:.1} s after the accept): the \
         machine is too slow for this test",
        killed - asked
    );
    let before = export(&daemon, 0);
    let fired = |table: &Value| -> Vec<i64> {
        table["journal"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|row| row["kind"] == "fired")
            .filter_map(|row| row["entry"]["at"].as_i64())
            .collect()
    };
    assert!(fired(&before).is_empty(), "no timer fired before the daemon stopped: {before:#}");

    // Down over the deadline, and started again well before the next one (S + 8 s).
    let wake = begun + TIMEOUT + 0.3 - unix_now();
    tokio::time::sleep(Duration::from_secs_f64(wake.max(0.0))).await;
    daemon.spawn().unwrap_or_else(|e| panic!("{e}"));
    let step0 = ircwatch.expect("Round 1, step 0").await;
    let (_, placed) =
        strip(&step0.text).split_once(" · ").map(|(a, b)| (a.to_owned(), b.to_owned())).unwrap_or_default();
    // (Names are learnt as people speak: until Merlin speaks after the restart, IRC shows
    // his Matrix id.)
    assert!(placed.ends_with("Power Surge (timed out, RULES D-9)"), "Merlin timed out: {step0}");
    assert!(!strip(&step0.text).split(" · ").next().unwrap_or_default().contains("timed out"), "{step0}");
    watcher.expect_in(&room, "Round 1, step 0").await;
    // The duel goes on live: Merlin times out again at step 1 (End), round 2 starts and,
    // as nobody casts, ends abandoned after two more timeouts. IRC has the compact form:
    // the steps that resolve together share a line (`Round 1, steps 1–2`, as many as
    // alice's concentration rolls let her spell run).
    for needle in ["Round 1, step", "Round 1 settles", "Round 2 begins", "Round 2, step 0"] {
        ircwatch.expect(needle).await;
    }
    let over = watcher.expect_in(&room, "duel is over").await;
    assert!(over.body.contains("abandoned"), "{over}");
    ircwatch.expect("duel is over").await;

    tokio::join!(ircwatch.pump(QUIET), watcher.pump(QUIET));
    let (on_irc, on_matrix) = (ircwatch.bot_lines(), watcher.bot_lines(&room));
    assert_eq!(count(&on_irc, "Round 1, step"), 2, "step 0, then the rest in one line: {on_irc:#?}");
    assert_eq!(count(&on_matrix, "Round 1, step 1"), 1, "a line per step on Matrix: {on_matrix:#?}");
    for lines in [on_irc, on_matrix] {
        for once in ["Round 1, step 0", "Round 1 settles", "Round 2, step 0", "duel is over"] {
            assert_eq!(count(&lines, once), 1, "{once:?} exactly once: {lines:#?}");
        }
        assert_eq!(count(&lines, "timed out"), 4, "four timeouts announced: {lines:#?}");
    }
    assert!(daemon.terminate(Duration::from_secs(15)).is_ok_and(|s| s.success()), "a clean stop");
    let after = export(&daemon, 0);
    let ats = fired(&after);
    assert_eq!(ats.len(), 4, "four timers fired: {after:#}");
    let first = ats[0] as f64;
    assert!(
        first > asked + TIMEOUT - 1.0 && first <= begun + TIMEOUT,
        "the first came due while down: {ats:?}"
    );
    assert!(first < killed + TIMEOUT, "{ats:?}");
    for pair in ats.windows(2) {
        assert_eq!(pair[1] - pair[0], 4, "each timer once, each step 4 s after the last: {ats:?}");
    }
    eprintln!("the test took {:?}", started.elapsed());
}

// ---------------------------------------------------------------------------------------
// f. Trust (issue 13): forged lines, floods of chat, "direct" rooms that are not.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relayed_chat_cannot_forge_a_line_nor_hold_a_game_answer_behind_it() {
    let started = Instant::now();
    let (irc, synapse) = servers();
    synapse.register(BOT, &password(BOT), false).unwrap_or_else(|e| panic!("{e}"));
    let mut watcher = Mx::new(&synapse, "watcher", "Watcher").await;
    // mallory calls herself "alice" on Matrix, as the IRC player alice is called.
    let mut mallory = Mx::new(&synapse, "mallory", "alice").await;
    let mut bobby = Mx::new(&synapse, "bobby", "Bobby").await;
    // copycat takes the nick of ircwatch, who is in the IRC channel but never speaks.
    let mut copycat = Mx::new(&synapse, "copycat", "ircwatch").await;
    let room = bridge_room(&mut watcher, &mut [&mut mallory, &mut bobby, &mut copycat]).await;
    let (mut alice, mut ircwatch) =
        tokio::join!(Irc::connect(irc.port(), "alice"), Irc::connect(irc.port(), "ircwatch"));
    // Flood control as on a real network: 4 lines at once, then one a second.
    let extra = Extra { irc_flood: Some("burst = 4\ninterval = \"1s\""), ..Extra::default() };
    let _daemon = start_daemon(&irc, &synapse, &room, &extra);
    until_bot_on_irc(&mut alice).await;
    until_bot_in(&mut watcher, &room).await;
    for client in [&mut alice, &mut ircwatch] {
        client.settle().await;
    }
    for user in [&mut watcher, &mut mallory, &mut bobby, &mut copycat] {
        user.settle().await;
    }
    eprintln!("set up in {:?}", started.elapsed());

    // A ~62 KB message (an event's limit is 64 KB) with no line breaks: 5 lines and a
    // count of the rest, and alice's question, asked while they go out one a second, is
    // answered before them.
    let long = "spell ".repeat(10_300);
    bobby.say(&room, &long).await;
    ircwatch.expect("<Bobby> spell spell").await;
    let asked = Instant::now();
    alice.say("!games").await;
    ircwatch.expect("Games:").await;
    let answered = asked.elapsed();
    let more = ircwatch.expect("<Bobby> … (").await;
    ircwatch.pump(QUIET).await;
    assert!(answered < Duration::from_secs(10), "the game answer took {answered:?}");
    let relayed: Vec<String> =
        ircwatch.bot_lines().into_iter().filter(|l| l.starts_with("<Bobby> ")).collect();
    assert_eq!(relayed.len(), 6, "{relayed:?}");
    assert!(relayed[..5].iter().all(|l| l.starts_with("<Bobby> spell spell")), "{relayed:?}");
    let left_out: usize = strip(&more.text)
        .trim_start_matches("<Bobby> … (")
        .trim_end_matches(" more lines)")
        .parse()
        .unwrap_or_else(|e| panic!("the count of lines left out in {more}: {e}"));
    assert!(left_out > 100, "{more}");
    eprintln!("game answer after {answered:?} behind a ~62 KB message; {left_out} lines left out");
    ircwatch.settle().await;

    // The real alice speaks on IRC.
    alice.say("hello from the real alice").await;
    watcher.expect_in(&room, "<alice> hello from the real alice").await;

    // The impostor's message has a line break before a line made to look like bob's.
    mallory.say(&room, "gg\n<bob> I concede").await;
    let impostor = "<alice (@mallory:localhost)> ";
    ircwatch.expect(&format!("{impostor}gg")).await;
    ircwatch.expect(&format!("{impostor}<bob> I concede")).await;
    ircwatch.pump(QUIET).await;
    let lines = ircwatch.bot_lines();
    assert_eq!(lines.len(), 2, "{lines:?}");
    for line in &lines {
        assert!(line.starts_with(impostor), "every relayed line starts with the marked speaker: {lines:?}");
    }

    // A display name that is the nick of someone in the channel is marked though that
    // someone has never spoken (the IRC member list).
    ircwatch.settle().await;
    copycat.say(&room, "it is me, the watcher").await;
    ircwatch.expect("<ircwatch (@copycat:localhost)> it is me, the watcher").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_direct_room_a_third_person_joined_is_not_private() {
    let started = Instant::now();
    let (irc, synapse) = servers();
    synapse.register(BOT, &password(BOT), false).unwrap_or_else(|e| panic!("{e}"));
    let mut watcher = Mx::new(&synapse, "watcher", "Watcher").await;
    let mut bobby = Mx::new(&synapse, "bobby", "Bobby").await;
    let mut carol = Mx::new(&synapse, "carol", "Carol").await;
    let room = bridge_room(&mut watcher, &mut [&mut bobby]).await;
    direct_rooms(&mut [&mut bobby]).await;
    let mut alice = Irc::connect(irc.port(), "alice").await;
    let _daemon = start_daemon(&irc, &synapse, &room, &Extra::default());
    until_bot_on_irc(&mut alice).await;
    until_bot_everywhere(&room, &mut watcher, &mut [&mut bobby]).await;
    alice.settle().await;
    for user in [&mut watcher, &mut bobby] {
        user.settle().await;
    }
    eprintln!("set up in {:?}", started.elapsed());

    alice.say("!duel Bobby").await;
    watcher.expect_in(&room, "alice challenges Bobby").await;
    bobby.say(&room, "!accept").await;
    watcher.expect_in(&room, "Round 1 begins").await;

    // carol joins bobby's direct room with the bot: three are in it now.
    let dm = bobby.dm.clone().expect("a direct room");
    bobby.client.invite(&dm, carol.id()).await.unwrap_or_else(|e| panic!("{e}"));
    carol.client.accept_invite(&dm).await.unwrap_or_else(|e| panic!("{e}"));
    let members = bobby.client.joined_members(&dm).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(members.len(), 3, "{members:?}");

    // A spell said there is refused as in any room with others in it, and not queued.
    bobby.tell_bot("!cast surge fire wind water thunder end").await;
    bobby.expect_private("There is no game in this room yet").await;
    carol.pump(QUIET).await;
    bobby.pump(QUIET).await;
    for lines in [carol.bot_lines(&dm), bobby.bot_lines(&dm)] {
        assert!(
            !lines.iter().any(|l| l.contains("Queued")),
            "a spell was taken where carol reads: {lines:?}"
        );
    }
}
