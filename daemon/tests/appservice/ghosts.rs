//! Item 3: ghosts. A real InspIRCd channel bridged (by alias) with a real Synapse room in
//! appservice mode: each IRC user in the channel is a ghost in the room, named and
//! display-named from the template; joins, parts, kicks, quits and nick changes are mirrored;
//! a netsplit of 20 users is held back and those who come back never leave; IRC lines
//! reach Matrix as their speakers' ghosts (formatting, `/me` as `m.emote`, `nick: ` as a
//! pill) and Matrix lines reach IRC through the bot as before; a renamed nick is still
//! its first ghost after a restart.
//!
//! The netsplit: the test InspIRCd sets no `prefixquit`, so a client's own QUIT reason
//! reaches the other clients, and the bot, as it was written; 20 clients quitting with
//! `hub.irc.test leaf.irc.test` are what a split looks like to the bot (the same reason
//! from the server, in a real split). The daemon is told to hold a split's leaves for
//! 20 s (`netsplit_hold`), far longer than the rejoins take.

use spellbridge_tests::harness::inspircd::InspIrcd;
use spellbridge_tests::harness::irc_client::IrcClient;
use spellbridge_tests::harness::matrix_client::Event;

use super::support::*;

const ALIAS: &str = "#magic:localhost";
const SPLIT: &str = "hub.irc.test leaf.irc.test";
/// How many users the netsplit takes, and how many of them come back.
const SPLIT_USERS: usize = 20;
const COMING_BACK: usize = 10;

/// The ghost of IRC nick `nick` on the network `irc`.
fn ghost(nick: &str) -> String {
    format!("@irc_irc_{nick}:localhost")
}

const MATRIX_KEYS: &str = "netsplit_hold = \"20s\"";

/// Everything a Matrix user saw in the room, kept in order.
pub(super) struct Seen {
    pub(super) client: MatrixClient,
    pub(super) room: String,
    pub(super) events: Vec<Event>,
}

impl Seen {
    /// Reads events until `done` holds for those seen, within [`STARTUP`]; on failure
    /// the events and the daemon's log.
    pub(super) async fn until(&mut self, what: &str, daemon: &Daemon, done: impl Fn(&[Event]) -> bool) {
        let deadline = Instant::now() + STARTUP;
        while !done(&self.events) {
            assert!(
                Instant::now() < deadline,
                "{what}: not seen within {STARTUP:?}; the room saw:\n{}\n--- the daemon's log ends:\n{}",
                self.listing(),
                daemon.log_tail(60)
            );
            if let Some(event) = self.client.next_event(Duration::from_millis(500)).await
                && event.room_id == self.room
            {
                self.events.push(event);
            }
        }
    }

    pub(super) fn listing(&self) -> String {
        self.events.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n")
    }

    /// The next message in the room from `sender`, after the `from`th event.
    pub(super) fn message_from(&self, from: usize, sender: &str) -> Option<MxMessage> {
        self.events[from..].iter().filter(|e| e.sender == sender).find_map(Event::message)
    }
}

pub(super) type MxMessage = spellbridge_tests::harness::matrix_client::Message;

/// `user`'s memberships in the room, in order (`join`, `leave`, …; a display-name
/// change is another `join`).
pub(super) fn memberships(events: &[Event], user: &str) -> Vec<String> {
    events
        .iter()
        .filter(|e| e.event_type == "m.room.member" && e.state_key.as_deref() == Some(user))
        .filter_map(|e| e.content.get("membership").and_then(Value::as_str).map(str::to_owned))
        .collect()
}

/// Whether `user` is joined now, by the last of their member events.
pub(super) fn joined(events: &[Event], user: &str) -> bool {
    memberships(events, user).last().is_some_and(|m| m == "join")
}

/// `user`'s display name now, by the last of their member events.
fn display_name(events: &[Event], user: &str) -> Option<String> {
    events
        .iter()
        .rev()
        .find(|e| e.event_type == "m.room.member" && e.state_key.as_deref() == Some(user))
        .and_then(|e| e.content.get("displayname").and_then(Value::as_str).map(str::to_owned))
}

pub(super) async fn irc_user(port: u16, nick: &str) -> IrcClient {
    let mut client = IrcClient::connect(port, nick).await.unwrap_or_else(|e| panic!("{nick} connects: {e}"));
    client.join(CHANNEL).await.unwrap_or_else(|e| panic!("{nick} joins {CHANNEL}: {e}"));
    client
}

pub(super) async fn raw(client: &mut IrcClient, line: &str) {
    client.send_raw(line).await.unwrap_or_else(|e| panic!("{line:?}: {e}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn irc_people_are_ghosts_that_join_leave_rename_and_speak_as_themselves() {
    let started = Instant::now();
    let irc = tokio::task::block_in_place(InspIrcd::start)
        .unwrap_or_else(|e| panic!("InspIRCd is needed for this test: {e}"));
    let port = free_port();
    let mut daemon = prepared(port, "");
    let synapse = synapse_for(&daemon);
    let mut watcher = person(&synapse, "watcher").await;
    let room = games_room(&synapse, &mut watcher).await;
    let path = format!("/_matrix/client/v3/directory/room/{}", encode(ALIAS));
    watcher.call(Method::PUT, &path, Some(&json!({"room_id": room}))).await.unwrap_or_else(|e| panic!("{e}"));
    // Alice (a capital, lowered in the ghost's id) and Bo[b] (escaped) are in the
    // channel before the bot.
    let mut alice = irc_user(irc.port(), "Alice").await;
    let mut bob = irc_user(irc.port(), "Bo[b]").await;
    let bob_ghost = ghost("bo=5bb=5d");
    daemon
        .set_config(&config_with(
            &synapse.base_url(),
            port,
            MATRIX_KEYS,
            &irc_sections(irc.port(), Some(ALIAS)),
        ))
        .unwrap_or_else(|e| panic!("{e}"));
    daemon.spawn().unwrap_or_else(|e| panic!("{e}"));
    let mut seen = Seen { client: watcher, room: room.clone(), events: Vec::new() };

    // A ghost per IRC user in the room, named from the template.
    seen.until("alice's and bob's ghosts joined", &daemon, |e| {
        joined(e, &ghost("alice")) && joined(e, &bob_ghost)
    })
    .await;
    assert_eq!(display_name(&seen.events, &ghost("alice")).as_deref(), Some("Alice (IRC)"));
    assert_eq!(display_name(&seen.events, &bob_ghost).as_deref(), Some("Bo[b] (IRC)"));
    assert!(!joined(&seen.events, &ghost(BOT)), "the bot's own IRC nick has no ghost");
    eprintln!("ghosts in after {:?}", started.elapsed());

    // IRC lines as their ghosts: formatting, an emote, a pill for `nick: `.
    let from = seen.events.len();
    alice.privmsg(CHANNEL, "hello \x02brave\x02 world").await.unwrap_or_else(|e| panic!("{e}"));
    seen.until("alice's line", &daemon, |e| e[from..].iter().any(|e| e.message().is_some())).await;
    let line = seen
        .message_from(from, &ghost("alice"))
        .unwrap_or_else(|| panic!("not alice's ghost:\n{}", seen.listing()));
    assert_eq!((line.msgtype.as_str(), line.body.as_str()), ("m.text", "hello brave world"));
    assert!(line.formatted_body.as_deref().is_some_and(|h| h.contains("<strong>brave</strong>")), "{line}");
    assert!(seen.message_from(from, &bot_id()).is_none(), "the bot did not say it");
    let from = seen.events.len();
    alice.action(CHANNEL, "waves").await.unwrap_or_else(|e| panic!("{e}"));
    bob.privmsg(CHANNEL, "watcher: and Alice: hi both").await.unwrap_or_else(|e| panic!("{e}"));
    seen.until("the emote and bob's line", &daemon, |e| {
        e[from..].iter().filter(|e| e.message().is_some()).count() >= 2
    })
    .await;
    let emote = seen.message_from(from, &ghost("alice")).unwrap_or_else(|| panic!("{}", seen.listing()));
    assert_eq!((emote.msgtype.as_str(), emote.body.as_str()), ("m.emote", "waves"));
    let pill = seen.message_from(from, &bob_ghost).unwrap_or_else(|| panic!("{}", seen.listing()));
    let html = pill.formatted_body.clone().unwrap_or_default();
    assert!(html.starts_with("<a href=\"https://matrix.to/#/@watcher:localhost\">"), "{pill}");
    assert!(html.ends_with(": and Alice: hi both"), "only the start is a pill: {pill}");
    let from = seen.events.len();
    bob.privmsg(CHANNEL, "Alice: over to you").await.unwrap_or_else(|e| panic!("{e}"));
    seen.until("bob's line to alice", &daemon, |e| e[from..].iter().any(|e| e.message().is_some())).await;
    let pill = seen.message_from(from, &bob_ghost).unwrap_or_else(|| panic!("{}", seen.listing()));
    let wanted = format!("<a href=\"https://matrix.to/#/{}\">", ghost("alice"));
    assert!(pill.formatted_body.as_deref().is_some_and(|h| h.starts_with(&wanted)), "a ghost's pill: {pill}");

    // Matrix to IRC through the bot, as before.
    seen.client.send_text(&room, "hi irc").await.unwrap_or_else(|e| panic!("{e}"));
    alice
        .expect_privmsg_matching(|m| m.from == BOT && m.text == "<watcher> hi irc", WAIT)
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", daemon.log_tail(40)));

    // Join, part, nick change, quit.
    let mut carol = irc_user(irc.port(), "carol").await;
    seen.until("carol's ghost joined", &daemon, |e| joined(e, &ghost("carol"))).await;
    raw(&mut carol, &format!("PART {CHANNEL} :bye")).await;
    seen.until("carol's ghost left", &daemon, |e| !joined(e, &ghost("carol"))).await;
    // Alice came first, so she operates the channel: she kicks carol once back.
    raw(&mut carol, &format!("JOIN {CHANNEL}")).await;
    seen.until("carol's ghost back", &daemon, |e| joined(e, &ghost("carol"))).await;
    raw(&mut alice, &format!("KICK {CHANNEL} carol :out")).await;
    seen.until("carol's ghost kicked out", &daemon, |e| !joined(e, &ghost("carol"))).await;
    assert_eq!(
        memberships(&seen.events, &ghost("carol")),
        ["invite", "join", "leave", "invite", "join", "leave"]
    );
    raw(&mut alice, "NICK Alicia").await;
    seen.until("alice's ghost renamed", &daemon, |e| {
        display_name(e, &ghost("alice")).as_deref() == Some("Alicia (IRC)")
    })
    .await;
    assert!(joined(&seen.events, &ghost("alice")), "the same ghost, still in the room");
    assert!(memberships(&seen.events, &ghost("alicia")).is_empty(), "no new ghost for the new nick");
    let from = seen.events.len();
    alice.privmsg(CHANNEL, "still me").await.unwrap_or_else(|e| panic!("{e}"));
    seen.until("alicia's line", &daemon, |e| e[from..].iter().any(|e| e.message().is_some())).await;
    assert!(
        seen.message_from(from, &ghost("alice")).is_some_and(|m| m.body == "still me"),
        "{}",
        seen.listing()
    );
    // Which ghost a renamed nick is outlives a restart (the store directory keeps it).
    daemon.restart().unwrap_or_else(|e| panic!("{e}"));
    let deadline = Instant::now() + STARTUP;
    let mut n = 0;
    loop {
        assert!(Instant::now() < deadline, "no line after the restart:\n{}", daemon.log_tail(60));
        let from = seen.events.len();
        let line = format!("back {n}");
        alice.privmsg(CHANNEL, &line).await.unwrap_or_else(|e| panic!("{e}"));
        let until = Instant::now() + Duration::from_secs(2);
        while Instant::now() < until && !seen.events[from..].iter().any(|e| e.message().is_some()) {
            if let Some(event) = seen.client.next_event(Duration::from_millis(200)).await
                && event.room_id == room
            {
                seen.events.push(event);
            }
        }
        if let Some(said) = seen.events[from..].iter().find_map(Event::message) {
            // The line of this try or of an earlier one that arrived late.
            assert_eq!(said.sender, ghost("alice"), "{said}");
            assert!(said.body.starts_with("back "), "{said}");
            break;
        }
        n += 1;
    }
    assert!(memberships(&seen.events, &ghost("alicia")).is_empty(), "still no ghost for the new nick");
    raw(&mut bob, "QUIT :gone fishing").await;
    seen.until("bob's ghost left", &daemon, |e| !joined(e, &bob_ghost)).await;

    // A netsplit of 20: their leaves are held; the 10 who come back never leave, the
    // others leave once the hold is over.
    let mut split = Vec::new();
    for i in 0..SPLIT_USERS {
        split.push(irc_user(irc.port(), &format!("split{i:02}")).await);
    }
    let nicks: Vec<String> = (0..SPLIT_USERS).map(|i| format!("split{i:02}")).collect();
    seen.until("the 20 ghosts joined", &daemon, |e| nicks.iter().all(|n| joined(e, &ghost(n)))).await;
    let from = seen.events.len();
    for client in &mut split {
        raw(client, &format!("QUIT :{SPLIT}")).await;
    }
    // Gone once the server has closed them: their nicks are free again.
    for client in &mut split {
        assert!(client.wait_closed(WAIT).await, "the server did not take the QUIT");
    }
    let mut back = Vec::new();
    for nick in &nicks[..COMING_BACK] {
        back.push(irc_user(irc.port(), nick).await);
    }
    seen.until("the 10 who stayed away left", &daemon, |e| {
        nicks[COMING_BACK..].iter().all(|n| !joined(e, &ghost(n)))
    })
    .await;
    for nick in &nicks[..COMING_BACK] {
        let after = memberships(&seen.events[from..], &ghost(nick));
        assert!(
            !after.iter().any(|m| m == "leave"),
            "{nick} came back within the hold and never left: {after:?}"
        );
        assert!(joined(&seen.events, &ghost(nick)), "{nick}");
    }
    for nick in &nicks[COMING_BACK..] {
        let after = memberships(&seen.events[from..], &ghost(nick));
        assert_eq!(after, ["leave"], "{nick} left once");
    }
    assert!(
        daemon.log().contains("a netsplit's quit: holding the leave"),
        "the split was seen as one: {}",
        daemon.log_tail(40)
    );
    drop(back);
    daemon.ensure_running().unwrap_or_else(|e| panic!("{e}"));
    eprintln!("the test took {:?}", started.elapsed());
}
