//! `[http] hidden_rooms` with real Synapse rooms named by alias (issue 29, item 2): a
//! hidden room given by alias or by id, in bridges that name the Matrix room by alias or
//! by id and list IRC first or Matrix first, and a hidden Matrix room of no bridge. Every
//! table of those places is missing from `/`, `/leaderboard` and its own routes (404);
//! the open bridge's table is shown. When a hidden alias moves to another room (SIGHUP),
//! a table there is hidden too, and the old room's stays hidden.

use super::support::*;
use spellbridge_tests::harness::endpoint;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// One bridge of the test: its name, IRC channel, Matrix alias, whether Matrix is listed
/// first, whether the bridge names the Matrix room by alias (else by id), and whether
/// `hidden_rooms` names it by alias (else by id; `None`: not hidden).
struct Place {
    channel: &'static str,
    alias: &'static str,
    matrix_first: bool,
    bridge_by_alias: bool,
    hidden_by_alias: Option<bool>,
}

const PLACES: [Place; 7] = [
    Place {
        channel: "#h1",
        alias: "#h1:localhost",
        matrix_first: false,
        bridge_by_alias: true,
        hidden_by_alias: Some(true),
    },
    Place {
        channel: "#h2",
        alias: "#h2:localhost",
        matrix_first: true,
        bridge_by_alias: true,
        hidden_by_alias: Some(true),
    },
    Place {
        channel: "#h3",
        alias: "#h3:localhost",
        matrix_first: false,
        bridge_by_alias: true,
        hidden_by_alias: Some(false),
    },
    Place {
        channel: "#h4",
        alias: "#h4:localhost",
        matrix_first: true,
        bridge_by_alias: true,
        hidden_by_alias: Some(false),
    },
    Place {
        channel: "#h5",
        alias: "#h5:localhost",
        matrix_first: false,
        bridge_by_alias: false,
        hidden_by_alias: Some(true),
    },
    Place {
        channel: "#h6",
        alias: "#h6:localhost",
        matrix_first: true,
        bridge_by_alias: false,
        hidden_by_alias: Some(true),
    },
    Place {
        channel: "#open",
        alias: "#open:localhost",
        matrix_first: false,
        bridge_by_alias: true,
        hidden_by_alias: None,
    },
];
/// A hidden Matrix room of no bridge, named by alias.
const ALONE: &str = "#alone:localhost";

/// Points `alias` at `room`, replacing what it pointed to.
async fn point_alias(user: &Mx, alias: &str, room: &str) {
    let path = format!("/_matrix/client/v3/directory/room/{}", encode(alias));
    let (status, answer) =
        user.client.request(Method::DELETE, &path, None).await.unwrap_or_else(|e| panic!("{e}"));
    assert!(status == 200 || status == 404, "deleting {alias} answered {status}: {answer}");
    user.client
        .call(Method::PUT, &path, Some(&json!({"room_id": room})))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
}

/// The config: the bridges of `PLACES` (`ids[i]` the Matrix room of place i), `ALONE` in
/// the Matrix network's rooms, the site on `http`.
fn config(irc: &InspIrcd, synapse: &Synapse, http: u16, ids: &[String]) -> String {
    let mut bridges = String::new();
    let mut hidden = vec![format!("\"matrix/{ALONE}\"")];
    for (place, id) in PLACES.iter().zip(ids) {
        let matrix_room = if place.bridge_by_alias { place.alias } else { id.as_str() };
        let mut rooms = [
            format!("{{ network = \"irc\", room = \"{}\" }}", place.channel),
            format!("{{ network = \"matrix\", room = \"{matrix_room}\" }}"),
        ];
        if place.matrix_first {
            rooms.reverse();
        }
        bridges.push_str(&format!(
            "[[bridge]]\nname = \"{}\"\nrooms = [{}]\n\n",
            &place.channel[1..],
            rooms.join(", ")
        ));
        if let Some(by_alias) = place.hidden_by_alias {
            hidden.push(format!("\"matrix/{}\"", if by_alias { place.alias } else { id.as_str() }));
        }
    }
    format!(
        r#"prefix = "!"

[store]
path = "games.db"

[http]
listen = "127.0.0.1:{http}"
hidden_rooms = [{hidden}]

[[irc]]
name = "irc"
server = "127.0.0.1"
port = {port}
tls = false
nick = "{BOT}"
require_account = false
reconnect_delay = "1s"

[irc.flood]
enabled = false

[irc.user_limit]
enabled = false

[[matrix]]
name = "matrix"
homeserver = "{homeserver}"
user_id = "{bot}"
password = {{ file = "bot-password" }}
store = "matrix-store"
rooms = ["{ALONE}"]
invite_allow = ["*:localhost"]
reconnect_delay = "1s"

[matrix.user_limit]
enabled = false

{bridges}"#,
        hidden = hidden.join(", "),
        port = irc.port(),
        homeserver = synapse.base_url(),
        bot = bot_id(),
    )
}

/// An IRC person in some channels.
struct Person(IrcClient);

impl Person {
    async fn connect(irc: &InspIrcd, nick: &str, channels: &[&str]) -> Person {
        let mut client = IrcClient::connect(irc.port(), nick).await.unwrap_or_else(|e| panic!("{nick}: {e}"));
        for channel in channels {
            client.join(channel).await.unwrap_or_else(|e| panic!("{nick} joins {channel}: {e}"));
        }
        Person(client)
    }

    /// Says `text` in `channel` and waits for the bot to say `needle` there.
    async fn ask(&mut self, channel: &str, text: &str, needle: &str) {
        self.0.privmsg(channel, text).await.unwrap_or_else(|e| panic!("{text}: {e}"));
        self.expect(channel, needle).await;
    }

    async fn expect(&mut self, channel: &str, needle: &str) {
        let deadline = Instant::now() + WAIT;
        let mut said = Vec::new();
        while let Some(m) = self.0.next_message(deadline.saturating_duration_since(Instant::now())).await {
            if m.from == BOT && strip(&m.text).contains(needle) && m.target == channel {
                return;
            }
            said.push(m.to_string());
        }
        panic!("the bot never said {needle:?} in {channel}; {} heard: {said:#?}", self.0.nick());
    }

    /// Says `!games` in `channel` until the bot answers there.
    async fn until_bot_in(&mut self, channel: &str) {
        let deadline = Instant::now() + STARTUP;
        while Instant::now() < deadline {
            self.0.privmsg(channel, "!games").await.unwrap_or_else(|e| panic!("{e}"));
            let until = Instant::now() + Duration::from_secs(1);
            while let Some(m) = self.0.next_message(until.saturating_duration_since(Instant::now())).await {
                if m.from == BOT && m.target == channel && m.text.contains("Games:") {
                    return;
                }
            }
        }
        panic!("the bot never answered in {channel} within {STARTUP:?}");
    }
}

/// A Duel in `channel` between `a` and `b`, conceded (it counts on the leaderboard), then
/// a Thaum table left open.
async fn play(a: &mut Person, b: &mut Person, channel: &str) {
    // The bot knows who is challenged once they have spoken.
    b.ask(channel, "!games", "Games:").await;
    let challenged = b.0.nick().to_owned();
    a.ask(channel, &format!("!duel {challenged}"), "challenges").await;
    b.ask(channel, "!accept", "Round 1 begins").await;
    a.ask(channel, "!concede", "conceded").await;
    a.ask(channel, "!new thaum", "opens a Thaum table").await;
}

/// The status of `GET path` on the site, read from the status line alone (an event stream
/// never ends).
async fn status(http: u16, path: &str) -> u16 {
    let mut socket = tokio::net::TcpStream::connect(("127.0.0.1", http)).await.expect("connect");
    let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    socket.write_all(request.as_bytes()).await.expect("write");
    let mut head = Vec::new();
    let mut byte = [0u8; 256];
    while !head.windows(2).any(|w| w == b"\r\n") {
        let read = tokio::time::timeout(WAIT, socket.read(&mut byte))
            .await
            .unwrap_or_else(|_| panic!("GET {path}: no status line"))
            .expect("read");
        assert!(read > 0, "GET {path}: closed without an answer");
        head.extend_from_slice(&byte[..read]);
    }
    let line = String::from_utf8_lossy(&head).to_string();
    line.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("GET {path}: {line}"))
}

/// Every stored table: (id, network, room), read from the daemon's database.
fn tables(daemon: &Daemon) -> Vec<(u64, String, String)> {
    let db = rusqlite::Connection::open_with_flags(
        daemon.path("games.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .expect("the database");
    let mut query = db.prepare("SELECT id, network, room FROM tables ORDER BY id").expect("query");
    query
        .query_map([], |row| Ok((row.get::<_, i64>(0)? as u64, row.get(1)?, row.get(2)?)))
        .expect("rows")
        .collect::<Result<_, _>>()
        .expect("rows")
}

/// Each of `hidden` tables is nowhere on the site; each of `shown` is listed and answers.
async fn check(daemon: &Daemon, http: u16, hidden: &[u64], shown: &[u64]) {
    let (code, index) =
        endpoint::get(http, "/").await.unwrap_or_else(|| panic!("GET /\n{}", daemon.log_tail(40)));
    assert_eq!(code, 200, "{index}");
    for id in hidden {
        assert!(!index.contains(&format!("href=\"/tables/{id}\"")), "hidden table {id} is listed:\n{index}");
        for route in ["", "/events", "/board.png"] {
            let path = format!("/tables/{id}{route}");
            assert_eq!(status(http, &path).await, 404, "{path} of a hidden table");
        }
    }
    for hub in ["#h1", "#h2", "#h3", "#h4", "#h5", "#h6", "!", "#alone"] {
        assert!(!index.contains(&format!(">{hub}")), "a hidden room shows on /:\n{index}");
    }
    for id in shown {
        assert!(index.contains(&format!("href=\"/tables/{id}\"")), "table {id} is not listed:\n{index}");
        for route in ["", "/events", "/board.png"] {
            let path = format!("/tables/{id}{route}");
            assert_eq!(status(http, &path).await, 200, "{path} of a shown table");
        }
    }
    // One quick Duel is unrated (issue 29, item 9: conceded within a minute, and fewer
    // than three rated games), so the leaderboard ranks nobody here; what is checked is
    // that the hidden duel's players are nowhere on it.
    let (code, ranking) = endpoint::get(http, "/leaderboard").await.expect("GET /leaderboard");
    assert_eq!(code, 200);
    assert!(!ranking.contains("alice") && !ranking.contains("bob"), "a hidden duel counts:\n{ranking}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hidden_rooms_hide_their_tables_by_alias_or_id_in_either_order_of_the_bridge() {
    let (irc, synapse) = servers();
    synapse.register(BOT, &password(BOT), false).unwrap_or_else(|e| panic!("{e}"));
    let mut owner = Mx::new(&synapse, "owner", "Owner").await;
    let mut ids = Vec::new();
    for place in &PLACES {
        let room =
            owner.client.create_room(place.alias, &[bot_id()], false).await.unwrap_or_else(|e| panic!("{e}"));
        point_alias(&owner, place.alias, &room).await;
        ids.push(room);
    }
    // Two people and the bot: a room, not a private chat with the bot.
    let mut member = Mx::new(&synapse, "member", "Member").await;
    let alone = bridge_room(&mut owner, &mut [&mut member]).await;
    point_alias(&owner, ALONE, &alone).await;

    let http = endpoint::free_port().unwrap_or_else(|e| panic!("{e}"));
    let mut daemon = Daemon::new(BIN).unwrap_or_else(|e| panic!("{e}"));
    daemon.write("bot-password", format!("{}\n", password(BOT))).unwrap_or_else(|e| panic!("{e}"));
    daemon.env(
        "RUST_LOG",
        "info,spellbridge=debug,matrix_sdk=warn,matrix_sdk_base=warn,matrix_sdk_crypto=error",
    );
    daemon.set_config(&config(&irc, &synapse, http, &ids)).unwrap_or_else(|e| panic!("{e}"));
    let check_config =
        daemon.command(&["check-config", "--config", "spellbridge.toml"]).expect("check-config");
    let said = String::from_utf8_lossy(&check_config.stdout);
    assert!(check_config.status.success(), "{said}{}", String::from_utf8_lossy(&check_config.stderr));
    assert!(said.contains(&format!("hidden from the site: matrix/{ALONE} (an alias: looked up")), "{said}");
    daemon.spawn().unwrap_or_else(|e| panic!("{e}"));

    let hidden_channels: Vec<&str> =
        PLACES.iter().filter(|p| p.hidden_by_alias.is_some()).map(|p| p.channel).collect();
    let (mut alice, mut bob, mut carol, mut dave) = tokio::join!(
        Person::connect(&irc, "alice", &hidden_channels),
        Person::connect(&irc, "bob", &hidden_channels),
        Person::connect(&irc, "carol", &["#open"]),
        Person::connect(&irc, "dave", &["#open"]),
    );
    for channel in &hidden_channels {
        alice.until_bot_in(channel).await;
    }
    carol.until_bot_in("#open").await;
    until_bot_in(&mut owner, &alone).await;
    // The bridges' aliases are looked up, so their tables go where they will stay.
    for (place, id) in PLACES.iter().zip(&ids).filter(|(p, _)| p.bridge_by_alias) {
        let looked_up = |line: &str| line.contains("alias looked up") && line.contains(id.as_str());
        let deadline = Instant::now() + STARTUP;
        while !daemon.log().lines().any(looked_up) {
            assert!(Instant::now() < deadline, "{} was not looked up:\n{}", place.alias, daemon.log_tail(40));
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    for channel in &hidden_channels {
        play(&mut alice, &mut bob, channel).await;
    }
    play(&mut carol, &mut dave, "#open").await;
    owner.say(&alone, "!new thaum").await;
    owner.expect_in(&alone, "opens a Thaum table").await;

    let all = tables(&daemon);
    let open = ["#open", ids[6].as_str()];
    let (shown, hidden): (Vec<_>, Vec<_>) =
        all.iter().partition(|(_, _, room)| open.contains(&room.as_str()));
    let shown: Vec<u64> = shown.iter().map(|t| t.0).collect();
    let hidden: Vec<u64> = hidden.iter().map(|t| t.0).collect();
    assert_eq!((shown.len(), hidden.len()), (2, 13), "two tables in each bridge and one alone: {all:?}");
    // The site fails closed until every name is looked up: wait for the open bridge.
    endpoint::wait_for(http, "/", STARTUP, |code, body| {
        code == 200 && shown.iter().all(|id| body.contains(&format!("href=\"/tables/{id}\"")))
    })
    .await
    .unwrap_or_else(|e| panic!("{e}\n{}", daemon.log_tail(40)));
    check(&daemon, http, &hidden, &shown).await;

    // The hidden alias moves to a new room: a table there is hidden, the old one still is.
    let moved = bridge_room(&mut owner, &mut [&mut member]).await;
    point_alias(&owner, ALONE, &moved).await;
    daemon.hangup().unwrap_or_else(|e| panic!("{e}"));
    let looked_up =
        |line: &str| line.contains("hidden room's alias looked up") && line.contains(moved.as_str());
    let deadline = Instant::now() + STARTUP;
    while !daemon.log().lines().any(looked_up) {
        assert!(Instant::now() < deadline, "the moved alias was not looked up:\n{}", daemon.log_tail(40));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    until_bot_in(&mut owner, &moved).await;
    owner.say(&moved, "!new thaum").await;
    owner.expect_in(&moved, "opens a Thaum table").await;
    let newest = tables(&daemon).last().cloned().expect("a table");
    assert_eq!(newest.2, moved, "the new table is in the room the alias moved to");
    let hidden: Vec<u64> = hidden.into_iter().chain([newest.0]).collect();
    check(&daemon, http, &hidden, &shown).await;
    daemon.ensure_running().unwrap_or_else(|e| panic!("{e}"));
}
