//! The spectator site of `spellbridge run` in a real browser: a real InspIRCd, raw IRC
//! clients as the players, and Debian's headless Chromium driven over the DevTools
//! protocol (`tests/harness/chromium.rs`). The table page shows the board; a move made
//! over IRC appears on the open page through its event stream without a reload; the
//! leaderboard lists nobody after one Duel (fewer than its minimum of rated games); a Duel spell is on no page and in no event before its
//! reveal; a hidden room's table is nowhere; a Nim table (the third game) shows its piles
//! and board, and its games are ranked. Screenshots are kept under
//! `target/tmp/site/` (the path is printed).
//!
//! These need InspIRCd and Chromium (`tests/scripts/install-inspircd.sh`,
//! `tests/scripts/install-chromium.sh`); without them they fail with the harness's
//! message, they never skip.

use std::path::PathBuf;
use std::time::Duration;

use spellbridge_tests::harness::chromium::Chromium;
use spellbridge_tests::harness::daemon::Daemon;
use spellbridge_tests::harness::endpoint;
use spellbridge_tests::harness::irc_client::IrcClient;
use spellbridge_tests::harness::irc_player::{Bot, server};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

const BIN: &str = env!("CARGO_BIN_EXE_spellbridge");
const BOT: &str = "spellbridge";
const ROOM: &str = "#magic";
const SECRET: &str = "#secret";
/// How long a move may take to show on an open page (generous: no timing is asserted).
const SHOWN: Duration = Duration::from_secs(15);

/// Starts `spellbridge run` with the site on a free port, IRC on `irc_port`, and
/// `#secret` hidden.
fn start(irc_port: u16) -> (Daemon, u16) {
    let http = endpoint::free_port().unwrap_or_else(|e| panic!("{e}"));
    let config = format!(
        "prefix = \"!\"\n[store]\npath = \"games.db\"\n\
         [http]\nlisten = \"127.0.0.1:{http}\"\nconnections_per_ip = 32\nmax_event_streams = 6\nhidden_rooms = [\"test/{SECRET}\"]\n\
         [[irc]]\nname = \"test\"\nserver = \"127.0.0.1\"\nport = {irc_port}\ntls = false\nnick = \"{BOT}\"\n\
         channels = [\"{ROOM}\", \"{SECRET}\"]\nrequire_account = false\n\
         [irc.flood]\nenabled = false\n[irc.user_limit]\nenabled = false\n"
    );
    let mut daemon = Daemon::new(BIN).unwrap_or_else(|e| panic!("{e}"));
    daemon.set_config(&config).unwrap_or_else(|e| panic!("{e}"));
    daemon.spawn().unwrap_or_else(|e| panic!("{e}"));
    (daemon, http)
}

/// `GET path` on the site: status and body (panics, with the log, if nothing answers).
async fn get(daemon: &Daemon, http: u16, path: &str) -> (u16, String) {
    endpoint::get(http, path).await.unwrap_or_else(|| panic!("GET {path}: no answer\n{}", daemon.log()))
}

/// An open event stream, read raw.
struct Stream {
    socket: tokio::net::TcpStream,
    seen: String,
}

impl Stream {
    async fn open(http: u16, path: &str) -> Stream {
        let mut socket = tokio::net::TcpStream::connect(("127.0.0.1", http)).await.expect("connect");
        let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n");
        socket.write_all(request.as_bytes()).await.expect("write");
        Stream { socket, seen: String::new() }
    }

    /// Reads until `needle` has been seen (bounded by `limit`); everything read so far.
    async fn until(&mut self, needle: &str, limit: Duration) -> &str {
        let deadline = tokio::time::Instant::now() + limit;
        let mut buffer = [0u8; 8192];
        while !self.seen.contains(needle) {
            let read = tokio::time::timeout_at(deadline, self.socket.read(&mut buffer))
                .await
                .unwrap_or_else(|_| panic!("the stream never said {needle:?}; it said:\n{}", self.seen))
                .expect("read");
            assert!(read > 0, "the stream closed; it said:\n{}", self.seen);
            self.seen.push_str(&String::from_utf8_lossy(&buffer[..read]));
        }
        &self.seen
    }
}

/// What would show alice's queued spell (`surge fire wind water thunder end`) before it
/// is revealed: its rendered form, her private acknowledgement, the snapshot's queue.
/// (`surge` alone is in the opening's example, `!cast surge fire wind end`.)
const SECRETS: [&str; 5] = ["Power Surge", "Your spell", "Queued", "\"queue\"", "🔥Fire 💨Wind"];

fn assert_hidden(what: &str, text: &str) {
    for secret in SECRETS {
        assert!(!text.contains(secret), "{what} shows {secret:?} before the reveal:\n{text}");
    }
}

/// Runs a blocking browser call.
fn browse<T>(call: impl FnOnce() -> T) -> T {
    tokio::task::block_in_place(call)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_over_irc_shows_on_the_open_page_and_nothing_hidden_leaks() {
    let irc = server();
    let mut browser = browse(|| Chromium::start(1100, 1500))
        .unwrap_or_else(|e| panic!("Chromium is needed for this test: {e}"));
    let (daemon, http) = start(irc.port());
    let bot = Bot { nick: BOT, room: ROOM, daemon: &daemon };
    let (mut alice, mut bob, mut carol) = tokio::join!(
        bot.player(irc.port(), "alice"),
        bot.player(irc.port(), "bob"),
        bot.player(irc.port(), "carol")
    );
    bot.wait_until_answering(&mut alice).await;
    bob.privmsg(ROOM, "!games").await.expect("send");
    bot.expect(&mut bob, "Games:").await;

    // A Duel in #magic (table 0); a Thaum table in the hidden #secret (table 1).
    alice.privmsg(ROOM, "!duel bob").await.expect("send");
    bot.expect(&mut bob, "challenges").await;
    bob.privmsg(ROOM, "!accept").await.expect("send");
    bot.expect(&mut alice, "Round 1 begins").await;
    carol.join(SECRET).await.expect("carol joins");
    let secret = Bot { room: SECRET, ..bot };
    secret.wait_until_answering(&mut carol).await;
    carol.privmsg(SECRET, "!new thaum").await.expect("send");
    secret.expect(&mut carol, "opens a Thaum table").await;

    let (status, index) = get(&daemon, http, "/").await;
    assert_eq!(status, 200, "{index}");
    assert!(index.contains("href=\"/tables/0\""), "the Duel is listed:\n{index}");
    assert!(!index.contains("/tables/1") && !index.contains(SECRET), "the hidden table is not:\n{index}");
    for path in
        ["/tables/1", "/tables/1/board.png", "/tables/1/events", "/tables/2", "/tables/..%2F0", "/tables/x"]
    {
        assert_eq!(get(&daemon, http, path).await.0, 404, "{path}");
    }

    // The table page in the browser: the board is drawn, the stream is open.
    let url = format!("http://127.0.0.1:{http}/tables/0");
    browse(|| browser.navigate(&url)).unwrap_or_else(|e| panic!("{e}\n{}", daemon.log()));
    browse(|| browser.wait_for("document.getElementById('board').complete", SHOWN)).expect("the board loads");
    let width = browse(|| browser.evaluate("document.getElementById('board').naturalWidth")).expect("width");
    assert_eq!(width, 800, "the board picture is drawn");
    browse(|| browser.wait_for("document.body.dataset.live === 'on'", SHOWN))
        .expect("the page follows the table");
    browse(|| browser.evaluate("window.kept = 42")).expect("mark the page");
    let before: u64 = browse(|| browser.evaluate("Number(document.querySelector('main').dataset.sequence)"))
        .expect("sequence")
        .as_u64()
        .expect("a number");
    let mut stream = Stream::open(http, "/tables/0/events").await;
    stream.until("event: update", SHOWN).await;

    // alice casts privately: the page learns that she cast, never what.
    alice.privmsg(BOT, "!cast surge fire wind water thunder end").await.expect("send");
    bot.expect_private(&mut alice, "Queued").await;
    let after = format!("Number(document.querySelector('main').dataset.sequence) === {}", before + 1);
    browse(|| browser.wait_for(&after, SHOWN)).expect("alice's move reaches the open page");
    let html = browse(|| browser.evaluate("document.documentElement.outerHTML")).expect("html");
    let html = html.as_str().unwrap_or_default().to_owned();
    assert!(html.contains("has cast"), "{html}");
    assert_hidden("the table page", &html);
    let events = stream.until(&format!("\"sequence\":{}", before + 1), SHOWN).await.to_owned();
    assert_hidden("the event stream", &events);
    for path in ["/", "/tables/0", "/leaderboard"] {
        assert_hidden(path, &get(&daemon, http, path).await.1);
    }

    // bob casts: the round is revealed in the room, and on the same page, without a reload.
    bob.privmsg(BOT, "!cast focus earth earth earth earth end").await.expect("send");
    bot.expect(&mut carol, "Round 1 settles").await;
    browse(|| browser.wait_for("document.querySelector('main').innerText.includes('Power Surge')", SHOWN))
        .expect("the revealed spell reaches the open page");
    assert_eq!(
        browse(|| browser.evaluate("window.kept")).expect("kept"),
        42,
        "updated in place, not reloaded"
    );
    let drawn =
        "document.getElementById('board').complete && document.getElementById('board').naturalWidth === 800";
    browse(|| browser.wait_for(drawn, SHOWN)).expect("the new board picture is shown");
    let shots = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("site");
    let table_shot = shots.join("table.png");
    browse(|| browser.screenshot(&table_shot)).expect("screenshot");
    println!("screenshot of the table page: {}", table_shot.display());

    // alice wins in round 2 (as in irc.rs).
    alice.privmsg(BOT, "!cast surge fire earth fire earth end").await.expect("send");
    bot.expect(&mut alice, "Queued").await;
    bob.privmsg(BOT, "!cast focus earth earth earth earth end").await.expect("send");
    bot.expect(&mut carol, "duel is over").await;
    browse(|| browser.wait_for("document.querySelector('main').dataset.finished === 'true'", SHOWN))
        .expect("the page shows the duel finished");
    let board_url = format!("http://127.0.0.1:{http}/leaderboard");
    browse(|| browser.navigate(&board_url)).expect("the leaderboard opens");
    // One rated Duel is fewer than the leaderboard's minimum (`ratings::MIN_RATED_GAMES`):
    // nobody is listed yet, as `!top` lists nobody.
    let ranking = browse(|| browser.evaluate("document.querySelector('main').innerText")).expect("ranking");
    let ranking = ranking.as_str().unwrap_or_default();
    assert!(!ranking.contains("alice") && !ranking.contains("bob"), "{ranking}");
    let board_shot = shots.join("leaderboard.png");
    browse(|| browser.screenshot(&board_shot)).expect("screenshot");
    println!("screenshot of the leaderboard: {}", board_shot.display());

    // The same table in Chinese.
    let chinese = format!("http://127.0.0.1:{http}/tables/0?lang=zh-CN");
    browse(|| browser.navigate(&chinese)).expect("the Chinese page opens");
    browse(|| {
        browser.wait_for(
            "document.documentElement.lang === 'zh-CN' && document.body.innerText.includes('历史')",
            SHOWN,
        )
    })
    .expect("the page is in Chinese");
    let zh_shot = shots.join("table-zh.png");
    browse(|| browser.screenshot(&zh_shot)).expect("screenshot");
    println!("screenshot of the table page in Chinese: {}", zh_shot.display());
}

/// The widest a page may be at a phone's 390 pixels: no sideways scrolling (issue 31).
const PHONE: u32 = 390;

/// `path` opened in `browser`: its `scrollWidth`, its `scrollHeight` and the text of its
/// `<main>`, after a screenshot kept as `shot`.
fn measure(browser: &mut Chromium, http: u16, path: &str, shot: &str) -> (u64, u64, String) {
    browser.navigate(&format!("http://127.0.0.1:{http}{path}")).unwrap_or_else(|e| panic!("{path}: {e}"));
    if path.starts_with("/tables/") {
        browser.wait_for("document.getElementById('board').complete", SHOWN).expect("the board loads");
    }
    let size = browser
        .evaluate(
            "[document.documentElement.scrollWidth, document.documentElement.scrollHeight, \
             document.querySelector('main').innerText]",
        )
        .expect("measured");
    let file = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("site").join(shot);
    browser.screenshot(&file).expect("screenshot");
    println!("{path} at {PHONE} px: {} × {} ({})", size[0], size[1], file.display());
    let text = size[2].as_str().unwrap_or_default().to_owned();
    (size[0].as_u64().unwrap_or(u64::MAX), size[1].as_u64().unwrap_or(u64::MAX), text)
}

/// Issue 31 item 8: at a phone's width no page scrolls sideways (a finished Duel, a Thaum
/// table with a long name), `/` follows the tables live, the history shows its Markdown
/// rendered (no raw backticks), and the table's cards and labels are in the page's
/// language (English element names, Chinese wizard and game names).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_site_fits_a_phone_and_its_index_is_live() {
    let irc = server();
    let mut browser = browse(|| Chromium::start(PHONE, 900))
        .unwrap_or_else(|e| panic!("Chromium is needed for this test: {e}"));
    // Headless Chromium keeps a window at least 500 pixels wide: the phone's viewport is
    // emulated, as its DevTools' device mode does.
    let phone = serde_json::json!({ "width": PHONE, "height": 900, "deviceScaleFactor": 1, "mobile": true });
    browse(|| browser.call("Emulation.setDeviceMetricsOverride", phone)).expect("a phone's viewport");
    let (daemon, http) = start(irc.port());
    let bot = Bot { nick: BOT, room: ROOM, daemon: &daemon };
    let long = "Wolfgang_Amadeus_Mozart_1756";
    let (mut alice, mut bob, mut carol, mut mozart) = tokio::join!(
        bot.player(irc.port(), "alice"),
        bot.player(irc.port(), "bob"),
        bot.player(irc.port(), "carol"),
        bot.player(irc.port(), long)
    );
    bot.wait_until_answering(&mut alice).await;
    bob.privmsg(ROOM, "!games").await.expect("send");
    bot.expect(&mut bob, "Games:").await;

    // `/` is open before any table: each new one appears on it without a reload.
    browse(|| browser.navigate(&format!("http://127.0.0.1:{http}/"))).unwrap_or_else(|e| panic!("{e}"));
    browse(|| browser.wait_for("document.body.dataset.live === 'on'", SHOWN)).expect("/ follows the tables");
    browse(|| browser.evaluate("window.kept = 7")).expect("mark the page");
    alice.privmsg(ROOM, "!duel bob").await.expect("send");
    bot.expect(&mut bob, "challenges").await;
    bob.privmsg(ROOM, "!accept").await.expect("send");
    bot.expect(&mut alice, "Round 1 begins").await;
    browse(|| browser.wait_for("document.querySelector('main').innerText.includes('#0')", SHOWN))
        .unwrap_or_else(|e| panic!("the new Duel reaches the open index: {e}\n{}", daemon.log()));

    // alice wins in round 2 (as above).
    alice.privmsg(BOT, "!cast surge fire wind water thunder end").await.expect("send");
    bot.expect_private(&mut alice, "Queued").await;
    bob.privmsg(BOT, "!cast focus earth earth earth earth end").await.expect("send");
    bot.expect(&mut carol, "Round 1 settles").await;
    alice.privmsg(BOT, "!cast surge fire earth fire earth end").await.expect("send");
    bot.expect(&mut alice, "Queued").await;
    bob.privmsg(BOT, "!cast focus earth earth earth earth end").await.expect("send");
    bot.expect(&mut carol, "duel is over").await;

    // A Thaum table with a long name at it.
    carol.privmsg(ROOM, "!new thaum").await.expect("send");
    bot.expect(&mut carol, "opens a Thaum table").await;
    mozart.privmsg(ROOM, "!join").await.expect("send");
    bot.expect(&mut carol, long).await;
    browse(|| browser.wait_for("document.querySelector('main').innerText.includes('#1')", SHOWN))
        .expect("the Thaum table reaches the open index");
    assert_eq!(
        browse(|| browser.evaluate("window.kept")).expect("kept"),
        7,
        "updated in place, not reloaded"
    );

    let mut texts = std::collections::BTreeMap::new();
    for (path, shot) in [
        ("/", "phone-index.png"),
        ("/leaderboard", "phone-leaderboard.png"),
        ("/tables/1", "phone-thaum.png"),
        ("/tables/0?lang=zh-CN", "phone-duel-zh.png"),
        ("/?lang=zh-CN", "phone-index-zh.png"),
        // Last: the history is read on it below.
        ("/tables/0", "phone-duel.png"),
    ] {
        let (width, height, text) = browse(|| measure(&mut browser, http, path, shot));
        assert!(width <= u64::from(PHONE), "{path} is {width} px wide at {PHONE} px");
        assert!(height <= 3000, "{path} is {height} px tall at {PHONE} px");
        texts.insert(path, text);
    }

    // The finished Duel in English: cards name the elements, history has no raw Markdown.
    let text = &texts["/tables/0"];
    for name in ["Water", "Fire", "Thunder", "Wind", "Earth", "Void"] {
        assert!(text.contains(name), "the cards name {name}:\n{text}");
    }
    assert!(
        !["水", "虚无", "雷"].iter().any(|glyph| text.contains(glyph)),
        "Chinese on an English page:\n{text}"
    );
    let history = browse(|| {
        browser.evaluate(
            "[...document.querySelectorAll('table.history')].map(t => t.innerText).join('\\n') + \
             '|' + document.querySelectorAll('table.history code').length",
        )
    })
    .expect("history");
    let history = history.as_str().unwrap_or_default();
    assert!(!history.contains('`') && !history.contains("&lt;"), "raw Markdown in the history:\n{history}");
    assert!(!history.ends_with("|0"), "the history's code spans are code:\n{history}");
    // Only the page's own script runs.
    assert_eq!(browse(|| browser.evaluate("document.scripts.length")).expect("scripts"), 1);

    // In Chinese: the game's and the wizards' names too.
    let text = &texts["/tables/0?lang=zh-CN"];
    assert!(text.contains("决斗 #0") && !text.contains("Duel #0"), "{text}");
    assert!(text.contains("法师") && !text.contains("Apprentice"), "{text}");
    assert!(text.contains("水") && !text.contains("Water"), "{text}");
}

/// Issue 31, item 4: the site and `!stats` name players as chat does (`alice`), never by
/// their network's id (`test:alice`), outside the page's raw JSON.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_site_and_stats_show_players_names_not_network_ids() {
    let irc = server();
    let (daemon, http) = start(irc.port());
    let bot = Bot { nick: BOT, room: ROOM, daemon: &daemon };
    let (mut alice, mut bob) = tokio::join!(bot.player(irc.port(), "alice"), bot.player(irc.port(), "bob"));
    bot.wait_until_answering(&mut alice).await;
    bob.privmsg(ROOM, "!games").await.expect("send");
    bot.expect(&mut bob, "Games:").await;
    alice.privmsg(ROOM, "!duel bob").await.expect("send");
    bot.expect(&mut bob, "challenges").await;
    bob.privmsg(ROOM, "!accept").await.expect("send");
    bot.expect(&mut alice, "Round 1 begins").await;
    alice.privmsg(ROOM, "!concede").await.expect("send");
    bot.expect(&mut bob, "conceded").await;

    let (status, index) = get(&daemon, http, "/").await;
    assert_eq!(status, 200, "{index}");
    assert!(index.contains("alice, bob") && !index.contains("test:"), "{index}");
    let (status, page) = get(&daemon, http, "/tables/0").await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("<b>alice · Apprentice</b>"), "the state names alice:\n{page}");
    // Outside the raw JSON (which keeps ids), no player is named by id.
    let json = page.find("<details>").unwrap_or(page.len());
    let (before, after) = page.split_at(json);
    let after = after.split_once("</details>").map_or("", |(_, rest)| rest);
    assert!(!before.contains("test:") && !after.contains("test:"), "{page}");

    alice.privmsg(ROOM, "!stats bob").await.expect("send");
    let stats = bot.expect(&mut alice, "has played").await;
    let stats = spellbridge_adapters::irc::format::strip(&stats.text);
    assert!(stats.contains("alice: bob has played") && !stats.contains("test:"), "{stats}");
}

/// alice (who opened) and bob play one whole game of Nim in `#magic`; bob takes the last
/// stone (as in `tests/scenarios/nim_rated.txt`).
async fn nim_game(bot: &Bot<'_>, alice: &mut IrcClient, bob: &mut IrcClient) {
    alice.privmsg(ROOM, "!new nim").await.expect("send");
    bot.expect(bob, "opens a game of Nim").await;
    bob.privmsg(ROOM, "!join").await.expect("send");
    bot.expect(alice, "bob joins").await;
    let moves = [
        ("alice", "3 a"),
        ("bob", "3 c"),
        ("alice", "3 c"),
        ("bob", "1 c"),
        ("alice", "2 b"),
        ("bob", "3 b"),
    ];
    for (who, take) in moves {
        let (mover, watcher) =
            if who == "alice" { (&mut *alice, &mut *bob) } else { (&mut *bob, &mut *alice) };
        mover.privmsg(ROOM, &format!("!take {take}")).await.expect("send");
        bot.expect(watcher, &format!("{who} takes")).await;
    }
    bot.expect(alice, "bob took the last stone and wins").await;
}

/// Issue 32 item 6, daemon-level: a Nim table (the third game, which the daemon names
/// nowhere) is on the site with its public view — its piles and who moves — with its
/// board picture, in a browser at a desktop's 1280 px and a phone's 390 px without
/// sideways scrolling (screenshots under `target/tmp/site/`); after three finished games
/// `!stats`, `!top nim` and the leaderboard rank its players.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nim_table_shows_its_piles_and_board_on_the_site_and_its_games_are_ranked() {
    let irc = server();
    let mut browser = browse(|| Chromium::start(1280, 900))
        .unwrap_or_else(|e| panic!("Chromium is needed for this test: {e}"));
    let (daemon, http) = start(irc.port());
    let bot = Bot { nick: BOT, room: ROOM, daemon: &daemon };
    let (mut alice, mut bob) = tokio::join!(bot.player(irc.port(), "alice"), bot.player(irc.port(), "bob"));
    bot.wait_until_answering(&mut alice).await;
    alice.privmsg(ROOM, "!new nim").await.expect("send");
    bot.expect(&mut bob, "opens a game of Nim").await;
    bob.privmsg(ROOM, "!join").await.expect("send");
    bot.expect(&mut alice, "bob joins").await;
    alice.privmsg(ROOM, "!take 3 a").await.expect("send");
    bot.expect(&mut bob, "alice takes").await;

    // The page: the game's facts from its public view, and the view itself.
    let (status, page) = get(&daemon, http, "/tables/0").await;
    assert_eq!(status, 200, "{page}\n{}", daemon.log());
    for shown in ["Piles", "a 0 · b 5 · c 7", "bob to move", "alice, bob"] {
        assert!(page.contains(shown), "the Nim page shows {shown:?}:\n{page}");
    }
    let json: String = page.replace("&quot;", "\"").split_whitespace().collect();
    assert!(json.contains("\"piles\":[0,5,7]"), "the page holds the public view:\n{page}");
    let (status, index) = get(&daemon, http, "/").await;
    assert_eq!(status, 200, "{index}");
    assert!(index.contains("href=\"/tables/0\""), "the Nim table is listed:\n{index}");

    // In a browser, at a desktop's width and at a phone's: the board picture loads (a PNG
    // the browser decodes), nothing scrolls sideways.
    let shots = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("site");
    for (width, shot) in [(1280u32, "nim-1280.png"), (PHONE, "nim-390.png")] {
        if width == PHONE {
            let phone =
                serde_json::json!({ "width": PHONE, "height": 900, "deviceScaleFactor": 1, "mobile": true });
            browse(|| browser.call("Emulation.setDeviceMetricsOverride", phone)).expect("a phone's viewport");
        }
        let url = format!("http://127.0.0.1:{http}/tables/0");
        browse(|| browser.navigate(&url)).unwrap_or_else(|e| panic!("{e}\n{}", daemon.log()));
        browse(|| browser.wait_for("document.getElementById('board').complete", SHOWN))
            .expect("the board loads");
        let measured = browse(|| {
            browser.evaluate(
                "[document.getElementById('board').naturalWidth, document.documentElement.scrollWidth, \
                 document.querySelector('main').innerText]",
            )
        })
        .expect("measured");
        let file = shots.join(shot);
        browse(|| browser.screenshot(&file)).expect("screenshot");
        println!("the Nim table at {width} px: {} ({})", measured[1], file.display());
        assert_eq!(measured[0], 480, "the Nim board picture (480 × 280) is drawn at {width} px");
        assert!(measured[1].as_u64().is_some_and(|w| w <= u64::from(width)), "{measured} at {width} px");
        assert!(measured[2].as_str().is_some_and(|text| text.contains("b 5")), "{measured}");
    }

    // The first game played out, and two more: bob has won three, enough to be ranked.
    for (who, take) in [("bob", "3 c"), ("alice", "3 c"), ("bob", "1 c"), ("alice", "2 b"), ("bob", "3 b")] {
        let (mover, watcher) = if who == "alice" { (&mut alice, &mut bob) } else { (&mut bob, &mut alice) };
        mover.privmsg(ROOM, &format!("!take {take}")).await.expect("send");
        bot.expect(watcher, &format!("{who} takes")).await;
    }
    bot.expect(&mut alice, "bob took the last stone and wins").await;
    let (_, page) = get(&daemon, http, "/tables/0").await;
    assert!(page.contains("bob took the last stone and won"), "the finished page says who won:\n{page}");
    nim_game(&bot, &mut alice, &mut bob).await;
    nim_game(&bot, &mut alice, &mut bob).await;

    alice.privmsg(ROOM, "!stats bob").await.expect("send");
    let stats = bot.expect(&mut alice, "has played").await;
    let stats = spellbridge_adapters::irc::format::strip(&stats.text);
    assert!(stats.contains("bob has played 3 games and won 3") && stats.contains("nim: rating"), "{stats}");
    alice.privmsg(ROOM, "!top nim").await.expect("send");
    let top = bot.expect(&mut alice, "nim ratings").await;
    let top = spellbridge_adapters::irc::format::strip(&top.text);
    assert!(top.contains("1. bob") && top.contains("2. alice"), "{top}");
    let (status, leaderboard) = get(&daemon, http, "/leaderboard").await;
    assert_eq!(status, 200, "{leaderboard}");
    assert!(
        leaderboard.contains("bob") && leaderboard.contains("alice"),
        "Nim's players are ranked:\n{leaderboard}"
    );
}
