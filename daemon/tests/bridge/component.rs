//! Issue 33, the first "Done when": the example game component (games/nim-wasm/, built
//! from source with `games/nim-wasm/build.sh`, whose toolchain
//! `tests/scripts/install-wasm-games.sh` installs) loaded from `[[game]] path` plays a
//! whole game across the bridge of a real InspIRCd channel and a real Synapse room: an IRC
//! player opens it, a Matrix player joins and wins, both rooms hear every move, the site
//! shows the table's public view and its board (drawn from the component's SVG, also posted
//! as a picture in Matrix), `!stats` and `!top` rate the finished
//! game, and `!lang zh` gets the component's own Chinese texts. A player's `!view` (the
//! component's `private-view`) reaches that player alone, privately, on either network,
//! and nothing of it reaches a room or the site.

use std::path::PathBuf;
use std::process::Command as Process;
use std::sync::OnceLock;

use spellbridge_tests::harness::endpoint;

use super::support::*;
use crate::components::game_table;

/// Builds games/nim-wasm once per run into the test's target folder; fails, naming the
/// script that installs the toolchain, when it cannot.
pub(super) fn nim_component() -> &'static PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("daemon-wasm-games");
        let built = Process::new("bash")
            .arg(root.join("games/nim-wasm/build.sh"))
            .arg(&out)
            .output()
            .unwrap_or_else(|e| panic!("bash runs games/nim-wasm/build.sh: {e}"));
        assert!(
            built.status.success(),
            "games/nim-wasm/build.sh failed: install its toolchain with tests/scripts/install-wasm-games.sh\n{}",
            String::from_utf8_lossy(&built.stderr)
        );
        out.join("nim.wasm")
    })
}

/// `GET path` on the site, the whole answer as bytes (a picture is no UTF-8).
async fn get_bytes(port: u16, path: &str) -> Vec<u8> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.expect("the site answers");
    let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("sends");
    let mut answer = Vec::new();
    tokio::time::timeout(WAIT, stream.read_to_end(&mut answer)).await.expect("in time").expect("reads");
    answer
}

/// What both tests start with: the servers; Matrix's watcher and bobby in the bridged
/// room (bobby with his direct room) and IRC's alice and ircwatch; the daemon with its site
/// on `http` and `games` added to its config, answering on both networks. Bound in this
/// order, so that the daemon is dropped first and the servers last.
struct Started {
    _irc: InspIrcd,
    _synapse: Synapse,
    watcher: Mx,
    bobby: Mx,
    room: String,
    alice: Irc,
    ircwatch: Irc,
    http: u16,
    daemon: Daemon,
}

/// Starts what [`Started`] holds, with `games` after the site's `[http]` in the config.
async fn start(games: &str) -> Started {
    let (irc, synapse) = servers();
    synapse.register(BOT, &password(BOT), false).unwrap_or_else(|e| panic!("{e}"));
    let mut watcher = Mx::new(&synapse, "watcher", "Watcher").await;
    let mut bobby = Mx::new(&synapse, "bobby", "Bobby").await;
    let room = bridge_room(&mut watcher, &mut [&mut bobby]).await;
    direct_rooms(&mut [&mut bobby]).await;
    let (mut alice, ircwatch) =
        tokio::join!(Irc::connect(irc.port(), "alice"), Irc::connect(irc.port(), "ircwatch"));
    let http = endpoint::free_port().unwrap_or_else(|e| panic!("{e}"));
    let sections = format!("[http]\nlisten = \"127.0.0.1:{http}\"\n{games}");
    let daemon = start_daemon(&irc, &synapse, &room, &Extra { sections, ..Extra::default() });
    until_bot_on_irc(&mut alice).await;
    until_bot_everywhere(&room, &mut watcher, &mut [&mut bobby]).await;
    Started { _irc: irc, _synapse: synapse, watcher, bobby, room, alice, ircwatch, http, daemon }
}

/// alice (IRC) and bobby (Matrix) move in turn; both rooms hear each take.
async fn take(who: &str, amount_pile: &str, alice: &mut Irc, bobby: &mut Mx, ircwatch: &mut Irc, room: &str) {
    if who == "alice" {
        alice.say(&format!("!take {amount_pile}")).await;
    } else {
        bobby.say(room, &format!("!take {amount_pile}")).await;
    }
    let (amount, pile) = amount_pile.split_once(' ').unwrap_or_default();
    let said = format!("from pile {pile}");
    ircwatch.expect(&said).await;
    let heard = bobby.expect_in(room, &said).await;
    assert!(heard.body.contains(&format!("takes {amount}")), "{heard}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_nim_component_plays_a_whole_game_across_irc_and_matrix_and_is_rated() {
    let games = format!("\n{}[game.options]\npiles = [3, 5, 7]\n", game_table(nim_component()));
    let Started { _irc, _synapse, mut watcher, mut bobby, room, mut alice, mut ircwatch, http, daemon } =
        start(&games).await;
    for client in [&mut alice, &mut ircwatch] {
        client.settle().await;
    }
    for user in [&mut watcher, &mut bobby] {
        user.settle().await;
    }

    // The component is a game like the built-in ones: listed, helped, opened by name.
    alice.say("!games").await;
    let games = ircwatch.expect("Games:").await;
    assert!(strip(&games.text).contains("nim-wasm"), "{games:?}");
    alice.say("!help take").await;
    ircwatch.expect("takes 1 to 3 stones from one pile").await;
    alice.say("!new nim-wasm").await;
    ircwatch.expect("opens a game of Nim").await;
    bobby.expect_in(&room, "opens a game of Nim").await;
    bobby.say(&room, "!join").await;
    ircwatch.expect("moves first").await;
    bobby.expect_in(&room, "moves first").await;
    // A move out of turn is refused by the component, in the mover's room.
    bobby.say(&room, "!take 1 a").await;
    bobby.expect_in(&room, "turn").await;

    // Each player's private view, told to them alone: asked privately, or in the room.
    alice.tell_bot("!view").await;
    let view = alice.expect_private("Your turn at Nim").await;
    assert!(strip(&view.text).contains("!take 3 a"), "{view:?}");
    alice.say("!view").await;
    alice.expect_private("Your turn at Nim").await;
    bobby.tell_bot("!view").await;
    bobby.expect_private("yours comes next").await;

    for (who, move_) in [("alice", "3 a"), ("bobby", "3 c"), ("alice", "3 c"), ("bobby", "1 c")] {
        take(who, move_, &mut alice, &mut bobby, &mut ircwatch, &room).await;
    }

    // The site shows the table with the component's public view.
    let (status, page) = endpoint::get(http, "/tables/0")
        .await
        .unwrap_or_else(|| panic!("GET /tables/0: no answer\n{}", daemon.log()));
    assert_eq!(status, 200, "{page}\n{}", daemon.log());
    let json: String = page.replace("&quot;", "\"").split_whitespace().collect();
    assert!(json.contains("\"piles\":[0,5,0]"), "the page holds the component's public view:\n{page}");
    // Nothing of a private view reached the rooms (moves were told since) or the site.
    let private = ["Your turn at Nim", "yours comes next"];
    let mut said: Vec<String> = ircwatch.bot_lines();
    said.extend(bobby.bot_lines(&room));
    said.extend(watcher.bot_lines(&room));
    said.push(page.clone());
    assert!(
        said.iter().all(|s| !private.iter().any(|p| s.contains(p))),
        "a private view was told:\n{said:#?}"
    );

    // Its board, drawn from the component's SVG: a picture posted in Matrix, and the
    // site's board picture (a PNG the daemon drew; none of the component's bytes).
    let bot = bot_id();
    let picture =
        watcher.expect_where("a board picture", |m| m.sender == bot && m.msgtype == "m.image").await;
    assert!(picture.body.contains("nim-wasm"), "{picture}");
    let png = get_bytes(http, "/tables/0/board.png").await;
    let head = String::from_utf8_lossy(&png[..png.len().min(200)]).into_owned();
    assert!(head.starts_with("HTTP/1.1 200") && head.contains("image/png"), "{head}\n{}", daemon.log());
    assert!(png.windows(4).any(|w| w == b"\x89PNG"), "a PNG: {head}");

    take("alice", "2 b", &mut alice, &mut bobby, &mut ircwatch, &room).await;
    bobby.say(&room, "!take 3 b").await;
    ircwatch.expect("took the last stone and wins").await;
    bobby.expect_in(&room, "took the last stone and wins").await;

    // The finished game is rated, on both networks.
    alice.say("!stats").await;
    let stats = ircwatch.expect("has played").await;
    let stats = strip(&stats.text);
    assert!(stats.contains("played 1 game and won 0") && stats.contains("nim-wasm: rating"), "{stats}");
    bobby.say(&room, "!stats").await;
    let stats = bobby.expect_in(&room, "has played").await;
    assert!(stats.body.contains("won 1") && stats.body.contains("nim-wasm: rating"), "{stats}");

    alice.say("!top nim-wasm").await;
    ircwatch.expect("rated games of nim-wasm").await;

    // In Chinese: the component's own zh-CN texts.
    watcher.say(&room, "!lang zh").await;
    watcher.expect_in(&room, "简体中文").await;
    alice.say("!new nim-wasm").await;
    let opened = ircwatch.expect("开了一局取石子").await;
    assert!(!strip(&opened.text).contains("opens a game"), "{opened:?}");
    bobby.expect_in(&room, "开了一局取石子").await;
}

/// Issue 33 (reload): a component first added by SIGHUP reaches the site and the board
/// pictures at once, as the router: its table's page holds its public view and its board
/// is drawn, on the site and as a picture in the Matrix room (before, the site and the
/// painter kept the games of the start, and said they did not know `nim-wasm`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_component_added_on_sighup_reaches_the_site_and_the_matrix_board_at_once() {
    let component = nim_component();
    // No component at start.
    let Started { _irc, _synapse, mut watcher, mut bobby, room, mut alice, mut ircwatch, http, daemon } =
        start("").await;
    alice.say("!new nim-wasm").await;
    ircwatch.expect("no game called").await;

    // SIGHUP with a [[game]] added.
    let config = std::fs::read_to_string(daemon.config_path()).unwrap_or_else(|e| panic!("{e}"));
    let added = format!("{config}\n{}", game_table(component));
    daemon.set_config(&added).unwrap_or_else(|e| panic!("{e}"));
    daemon.hangup().unwrap_or_else(|e| panic!("{e}"));
    let deadline = std::time::Instant::now() + WAIT;
    while !daemon.log().contains("config reloaded") {
        assert!(std::time::Instant::now() < deadline, "not reloaded:\n{}", daemon.log_tail(40));
        std::thread::sleep(Duration::from_millis(50));
    }

    alice.say("!new nim-wasm").await;
    ircwatch.expect("opens a game of Nim").await;
    bobby.say(&room, "!join").await;
    ircwatch.expect("moves first").await;
    take("alice", "3 a", &mut alice, &mut bobby, &mut ircwatch, &room).await;

    // The board picture in Matrix, drawn by the painter from the component's SVG.
    let bot = bot_id();
    let picture =
        watcher.expect_where("a board picture", |m| m.sender == bot && m.msgtype == "m.image").await;
    assert!(picture.body.contains("nim-wasm"), "{picture}");

    // The site's table page: the game's name and its public view, no "does not know".
    let (status, page) = endpoint::get(http, "/tables/0")
        .await
        .unwrap_or_else(|| panic!("GET /tables/0: no answer\n{}", daemon.log()));
    assert_eq!(status, 200, "{page}\n{}", daemon.log_tail(40));
    assert!(page.contains("nim-wasm"), "the page names the game:\n{page}");
    assert!(!page.contains("does not know the game"), "the site knows the game:\n{page}");
    let json: String = page.replace("&quot;", "\"").split_whitespace().collect();
    assert!(json.contains("\"piles\":[0,5,7]"), "the page holds the component's public view:\n{page}");
    assert!(page.contains("/tables/0/board.png"), "the page shows the board:\n{page}");
    let png = get_bytes(http, "/tables/0/board.png").await;
    let head = String::from_utf8_lossy(&png[..png.len().min(200)]).into_owned();
    assert!(
        head.starts_with("HTTP/1.1 200") && head.contains("image/png"),
        "{head}\n{}",
        daemon.log_tail(40)
    );
    assert!(png.windows(4).any(|w| w == b"\x89PNG"), "a PNG: {head}");
}
