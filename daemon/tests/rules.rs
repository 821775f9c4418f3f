//! Rules at hand and help that teaches (issue 31, items 5 and 6), against the real servers:
//!
//! - on InspIRCd, raw IRC clients: `!help` lists every command before any table
//!   (`!cast`, `!status`, `!lang`, `!rules`); `!rules D-10` answers; `!rules X-99` is
//!   refused with the valid ids; `!wizards` is cut into lines between entries, never
//!   inside one; a Duel's dice commitment is one short line whose whole value is on the
//!   table's page; the site serves `/rules/duel` and `/rules/thaum` with an anchor per
//!   rule id (Chinese with `?lang=zh-CN`), and the table page's history links the rules
//!   its lines cite;
//! - on Synapse, a raw client: `!rules D-10` answers in English with the id a link to the
//!   site's rules page (HTML), and in Chinese once the room's language is Chinese.
//!
//! They need InspIRCd and Synapse (`tests/scripts/install-*.sh`); without them they fail
//! with the harness's message, they never skip. Every wait is bounded.

use std::time::Duration;

use spellbridge_adapters::irc::format::strip;
use spellbridge_core::games::duel::Wizards;
use spellbridge_core::games::duel::render::wizard_list;
use spellbridge_core::text::Segment;
use spellbridge_core::{Language, RichText};
use spellbridge_tests::harness::daemon::Daemon;
use spellbridge_tests::harness::endpoint;
use spellbridge_tests::harness::irc_player::{Bot, server};
use spellbridge_tests::harness::matrix_client::MatrixClient;
use spellbridge_tests::harness::synapse::Synapse;
use tokio::time::Instant;

const BIN: &str = env!("CARGO_BIN_EXE_spellbridge");
const BOT: &str = "spellbridge";
const ROOM: &str = "#rules";
/// How long the Matrix bot may take to answer (a cold sync takes seconds).
const WAIT: Duration = Duration::from_secs(30);
/// How long the Matrix bot may take to start, log in and answer in the room.
const STARTUP: Duration = Duration::from_secs(60);

/// `GET path` on the site: status and body.
async fn get(daemon: &Daemon, http: u16, path: &str) -> (u16, String) {
    endpoint::get(http, path).await.unwrap_or_else(|| panic!("GET {path}: no answer\n{}", daemon.log()))
}

/// The entries of the `!wizards` list, as a player reads them (code without backticks).
fn wizard_entries() -> Vec<String> {
    let list = wizard_list(Language::En, &Wizards::default());
    let mut entries = vec![RichText::new()];
    for segment in list.segments() {
        match segment {
            Segment::Separator(_) => entries.push(RichText::new()),
            other => {
                let last = entries.pop().unwrap_or_default();
                entries.push(last.push(other.clone()));
            }
        }
    }
    entries.iter().map(|e| e.plain().replace('`', "").trim().to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rules_help_and_wizards_on_irc_and_the_rules_pages_on_the_site() {
    let irc = server();
    let http = endpoint::free_port().unwrap_or_else(|e| panic!("{e}"));
    let config = format!(
        "prefix = \"!\"\n[store]\npath = \"games.db\"\n\
         [http]\nlisten = \"127.0.0.1:{http}\"\npublic_url = \"http://127.0.0.1:{http}\"\n\
         [[irc]]\nname = \"test\"\nserver = \"127.0.0.1\"\nport = {port}\ntls = false\nnick = \"{BOT}\"\n\
         channels = [\"{ROOM}\"]\nrequire_account = false\n\
         [irc.flood]\nenabled = false\n[irc.user_limit]\nenabled = false\n",
        port = irc.port()
    );
    let mut daemon = Daemon::new(BIN).unwrap_or_else(|e| panic!("{e}"));
    daemon.set_config(&config).unwrap_or_else(|e| panic!("{e}"));
    daemon.spawn().unwrap_or_else(|e| panic!("{e}"));
    let bot = Bot { nick: BOT, room: ROOM, daemon: &daemon };
    let (mut alice, mut bob) = tokio::join!(bot.player(irc.port(), "alice"), bot.player(irc.port(), "bob"));
    bot.wait_until_answering(&mut alice).await;

    // `!help` before any table: every group, each on its own line.
    alice.privmsg(ROOM, "!help").await.expect("send");
    let lobby = strip(&bot.expect(&mut alice, "Commands:").await.text);
    assert!(lobby.contains("!lang") && lobby.contains("!rules") && lobby.contains("!duel"), "{lobby}");
    let duel = strip(&bot.expect(&mut alice, "At a duel table").await.text);
    assert!(duel.contains("!status") && duel.contains("privately to the bot: !cast"), "{duel}");
    alice.privmsg(ROOM, "!help cast").await.expect("send");
    let mut cast = strip(&bot.expect(&mut alice, "!cast <token>").await.text);
    if !cast.contains("RULES D-3") {
        cast.push_str(&strip(&bot.expect(&mut alice, "RULES D-3").await.text));
    }
    assert!(cast.contains("may not directly follow a neighbour") && cast.contains("RULES D-3"), "{cast}");

    // `!rules D-10`, and an id that is none.
    alice.privmsg(ROOM, "!rules D-10").await.expect("send");
    let d10 = strip(&bot.expect(&mut alice, "D-10 (duel)").await.text);
    assert!(d10.contains("A run of k ≥ 2 identical base elements seals its two neighbours"), "{d10}");
    alice.privmsg(ROOM, "!rules X-99").await.expect("send");
    let refused = strip(&bot.expect(&mut alice, "There is no rule").await.text);
    assert!(refused.contains("X-99") && refused.contains("thaum T-1 … T-10; duel D-1 … D-13"), "{refused}");

    // `!wizards`: every entry whole on one line.
    bob.privmsg(ROOM, "!wizards").await.expect("send");
    let mut lines = vec![strip(&bot.expect(&mut bob, "Wizards:").await.text)];
    lines.extend(bot.drain(&mut bob, Duration::from_secs(2)).await.iter().map(|m| strip(&m.text)));
    assert!(lines.len() > 1, "the list takes more than one line: {lines:#?}");
    for entry in wizard_entries() {
        assert!(lines.iter().any(|line| line.contains(&entry)), "{entry:?} is cut: {lines:#?}");
    }

    // A Duel: its commitment is one short line, whole on the table's page, whose
    // history links the rules its lines cite.
    alice.privmsg(ROOM, "!duel bob").await.expect("send");
    bot.expect(&mut bob, "challenges").await;
    bob.privmsg(ROOM, "!accept").await.expect("send");
    let committed = strip(&bot.expect(&mut alice, "Dice commitment").await.text);
    let short: String = committed
        .split('…')
        .next()
        .unwrap_or_default()
        .chars()
        .rev()
        .take(12)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    assert!(short.len() == 12 && short.chars().all(|c| c.is_ascii_hexdigit()), "{committed}");
    assert!(committed.contains(&format!("whole at http://127.0.0.1:{http}/tables/0")), "{committed}");
    let (status, table) = get(&daemon, http, "/tables/0").await;
    assert_eq!(status, 200, "{table}");
    let whole = table
        .match_indices(&short)
        .map(|(at, _)| &table[at..])
        .find(|rest| rest.len() >= 64 && rest[..64].chars().all(|c| c.is_ascii_hexdigit()));
    assert!(whole.is_some(), "the page shows the whole commitment {short}…:\n{table}");
    assert!(table.contains("<a href=\"/rules/duel#D-1\">D-1</a>"), "the history links D-1:\n{table}");

    // The rules pages.
    let (status, page) = get(&daemon, http, "/rules/duel").await;
    assert_eq!(status, 200, "{page}");
    for n in 1..=13 {
        assert!(page.contains(&format!("id=\"D-{n}\"")), "D-{n} has its anchor:\n{page}");
    }
    assert!(page.contains("identical base elements seals its two neighbours"), "{page}");
    let (status, page) = get(&daemon, http, "/rules/thaum").await;
    assert_eq!(status, 200, "{page}");
    for n in 1..=10 {
        assert!(page.contains(&format!("id=\"T-{n}\"")), "T-{n} has its anchor:\n{page}");
    }
    let (_, chinese) = get(&daemon, http, "/rules/duel?lang=zh-CN").await;
    assert!(chinese.contains("相同的基础元素连续唤起"), "{chinese}");
    let (_, every) = get(&daemon, http, "/rules").await;
    assert!(every.contains("id=\"T-10\"") && every.contains("id=\"D-13\""), "{every}");
    for path in ["/rules/chess", "/rules/Duel", "/rules/duel/x", "/rules/..%2Ftables"] {
        assert_eq!(get(&daemon, http, path).await.0, 404, "{path}");
    }
}

fn password(localpart: &str) -> String {
    format!("{localpart}-password")
}

/// The next message from the bot whose body contains `needle`.
async fn expect(
    client: &mut MatrixClient,
    needle: &str,
    daemon: &Daemon,
) -> spellbridge_tests::harness::matrix_client::Message {
    let bot = format!("@{BOT}:localhost");
    match client.expect_message_matching(|m| m.sender == bot && m.body.contains(needle), WAIT).await {
        Ok(message) => message,
        Err(e) => {
            panic!("{} waited for {needle:?}: {e}\n--- the daemon's log:\n{}", client.user_id(), daemon.log())
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rules_on_matrix_in_english_and_chinese_link_to_the_site() {
    let synapse = tokio::task::block_in_place(Synapse::start)
        .unwrap_or_else(|e| panic!("Synapse is needed for this test: {e}"));
    for name in [BOT, "alice", "bob"] {
        synapse.register(name, &password(name), false).unwrap_or_else(|e| panic!("{e}"));
    }
    let http = endpoint::free_port().unwrap_or_else(|e| panic!("{e}"));
    let mut daemon = Daemon::new(BIN).unwrap_or_else(|e| panic!("{e}"));
    let password_file =
        daemon.write("bot-password", format!("{}\n", password(BOT))).unwrap_or_else(|e| panic!("{e}"));
    let config = format!(
        "prefix = \"!\"\n[store]\npath = \"games.db\"\n\
         [http]\nlisten = \"127.0.0.1:{http}\"\npublic_url = \"http://127.0.0.1:{http}\"\n\
         [[matrix]]\nname = \"matrix\"\nhomeserver = \"{homeserver}\"\nuser_id = \"{user}\"\n\
         password = {{ file = {password_file:?} }}\nstore = {store:?}\n\
         invite_allow = [\"*:localhost\"]\n[matrix.user_limit]\nenabled = false\n",
        homeserver = synapse.base_url(),
        user = synapse.user_id(BOT),
        store = daemon.path("matrix-store"),
    );
    daemon.set_config(&config).unwrap_or_else(|e| panic!("{e}"));
    daemon.spawn().unwrap_or_else(|e| panic!("{e}"));
    let base = synapse.base_url();
    let mut alice =
        MatrixClient::login(&base, "alice", &password("alice")).await.unwrap_or_else(|e| panic!("{e}"));
    let mut bob = MatrixClient::login(&base, "bob", &password("bob")).await.unwrap_or_else(|e| panic!("{e}"));
    let bot = synapse.user_id(BOT);
    let room = alice
        .create_room("rules", &[bot.clone(), bob.user_id().to_owned()], false)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    bob.accept_invite(&room).await.unwrap_or_else(|e| panic!("{e}"));
    let deadline = Instant::now() + STARTUP;
    'answering: loop {
        assert!(Instant::now() < deadline, "the bot never answered in {room}; its log:\n{}", daemon.log());
        alice.send_text(&room, "!games").await.unwrap_or_else(|e| panic!("{e}"));
        let until = Instant::now() + Duration::from_secs(2);
        while let Some(m) = alice.next_message(until.saturating_duration_since(Instant::now())).await {
            if m.sender == bot && m.room_id == room && m.body.contains("Games:") {
                break 'answering;
            }
        }
    }

    alice.send_text(&room, "!rules D-10").await.unwrap_or_else(|e| panic!("{e}"));
    let d10 = expect(&mut alice, "D-10 (duel)", &daemon).await;
    assert!(d10.body.contains("A run of k ≥ 2 identical base elements seals"), "{}", d10.body);
    let html = d10.formatted_body.unwrap_or_default();
    let link = format!("<a href=\"http://127.0.0.1:{http}/rules/duel#D-10\">D-10</a>");
    assert!(html.contains(&link), "the id links to the site: {html}");
    alice.send_text(&room, "!help").await.unwrap_or_else(|e| panic!("{e}"));
    let help = expect(&mut alice, "Commands:", &daemon).await;
    assert!(
        help.body.contains("!cast") && help.body.contains("!lang") && help.body.contains("!rules"),
        "{}",
        help.body
    );

    // The room's creator chooses Chinese: the same rule in Chinese.
    alice.send_text(&room, "!lang zh").await.unwrap_or_else(|e| panic!("{e}"));
    expect(&mut alice, "中文", &daemon).await;
    alice.send_text(&room, "!规则 D-10").await.unwrap_or_else(|e| panic!("{e}"));
    let zh = expect(&mut alice, "D-10（决斗）", &daemon).await;
    assert!(zh.body.contains("相同的基础元素连续唤起 `k ≥ 2` 个"), "{}", zh.body);
    bob.send_text(&room, "!rules X-99").await.unwrap_or_else(|e| panic!("{e}"));
    let refused = expect(&mut bob, "没有规则", &daemon).await;
    assert!(refused.body.contains("决斗 D-1 … D-13"), "{}", refused.body);
}
