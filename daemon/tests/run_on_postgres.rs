//! `spellbridge run` with `[store] url = "postgres://…"` (issue 34), as a child process
//! against a real InspIRCd and a real PostgreSQL: a Thaum table is played, the daemon is
//! killed (SIGKILL) and started again, and the game goes on where it was; a second daemon
//! on the same database while the first leads stands by; the spectator site reads the
//! tables from PostgreSQL.

use std::time::{Duration, Instant};

use spellbridge_adapters::irc::format::strip;
use spellbridge_tests::harness::daemon::Daemon;
use spellbridge_tests::harness::endpoint;
use spellbridge_tests::harness::inspircd::InspIrcd;
use spellbridge_tests::harness::irc_client::IrcClient;
use spellbridge_tests::harness::postgres::Postgres;

const BIN: &str = env!("CARGO_BIN_EXE_spellbridge");
const BOT: &str = "spellbridge";
const ROOM: &str = "#pgplay";

fn config(irc: u16, url: &str, nick: &str) -> String {
    format!(
        "prefix = \"!\"\n[store]\nurl = \"{url}\"\n[thaum]\nschedule = \"manual\"\n\
         [[irc]]\nname = \"test\"\nserver = \"127.0.0.1\"\nport = {irc}\ntls = false\nnick = \"{nick}\"\n\
         channels = [\"{ROOM}\"]\nrequire_account = false\n\
         [irc.flood]\nenabled = false\n[irc.user_limit]\nenabled = false\n"
    )
}

/// Sends `text` until the bot answers with a line containing `want` (the bot may still be
/// joining after a start); the answer, stripped of formatting.
async fn until_answered(gm: &mut IrcClient, text: &str, want: &str, daemon: &Daemon) -> String {
    let deadline = Instant::now() + Duration::from_secs(40);
    loop {
        assert!(Instant::now() < deadline, "no answer with {want:?} to {text:?}; the log:\n{}", daemon.log());
        gm.privmsg(ROOM, text).await.unwrap_or_else(|e| panic!("send: {e}"));
        if let Ok(message) = gm
            .expect_privmsg_matching(
                |m| m.from == BOT && strip(&m.text).contains(want),
                Duration::from_secs(2),
            )
            .await
        {
            return strip(&message.text);
        }
    }
}

/// The spectator site of a daemon on PostgreSQL: on (it was off before issue 34's
/// parity), it lists the table and shows its state as PostgreSQL has it, moves included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_spectator_site_reads_the_tables_from_postgresql() {
    let irc = InspIrcd::start().unwrap_or_else(|e| panic!("InspIRCd is needed for this test: {e}"));
    let pg = Postgres::start_new().unwrap_or_else(|e| panic!("{e}"));
    let http = endpoint::free_port().unwrap_or_else(|e| panic!("{e}"));
    let config = format!("{}[http]\nlisten = \"127.0.0.1:{http}\"\n", config(irc.port(), &pg.url(), BOT));
    let daemon = Daemon::start(BIN, &config).unwrap_or_else(|e| panic!("{e}"));
    let mut gm = IrcClient::connect(irc.port(), "gm").await.unwrap_or_else(|e| panic!("gm connects: {e}"));
    gm.join(ROOM).await.unwrap_or_else(|e| panic!("gm joins: {e}"));
    until_answered(&mut gm, "!new thaum", "thaum", &daemon).await;
    until_answered(&mut gm, "!coins gm +3", "3", &daemon).await;
    assert!(!daemon.log().contains("the spectator site reads SQLite only"), "{}", daemon.log());
    let get = |path: &'static str| async move {
        endpoint::get(http, path).await.unwrap_or_else(|| panic!("GET {path}: no answer"))
    };
    let (status, index) = get("/").await;
    assert_eq!(status, 200, "{index}\n{}", daemon.log());
    assert!(index.contains("href=\"/tables/0\""), "the table is listed:\n{index}");
    let (status, page) = get("/tables/0").await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains(ROOM) && page.contains("gm"), "the table's page:\n{page}");
    assert!(!page.contains(&pg.url()), "the password is never shown");
    let (status, _) = get("/tables/7").await;
    assert_eq!(status, 404, "no such table");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_on_postgresql_plays_restarts_and_goes_on_where_it_was() {
    let irc = InspIrcd::start().unwrap_or_else(|e| panic!("InspIRCd is needed for this test: {e}"));
    let pg = Postgres::start_new().unwrap_or_else(|e| panic!("{e}"));
    let mut daemon =
        Daemon::start(BIN, &config(irc.port(), &pg.url(), BOT)).unwrap_or_else(|e| panic!("{e}"));
    let mut gm = IrcClient::connect(irc.port(), "gm").await.unwrap_or_else(|e| panic!("gm connects: {e}"));
    gm.join(ROOM).await.unwrap_or_else(|e| panic!("gm joins: {e}"));
    until_answered(&mut gm, "!new thaum", "thaum", &daemon).await;
    until_answered(&mut gm, "!coins gm +3", "3", &daemon).await;
    assert!(daemon.log().contains("leading on PostgreSQL"), "{}", daemon.log());
    // Nothing was written to a SQLite file beside the config.
    assert!(!daemon.path("spellbridge.db").exists(), "the games are in PostgreSQL");

    // A second daemon on the same database while the first leads stands by (the standby
    // tests are in `standby.rs`), and a SIGTERM stops it cleanly.
    let mut second =
        Daemon::start(BIN, &config(irc.port(), &pg.url(), "spellbridge2")).unwrap_or_else(|e| panic!("{e}"));
    second.wait_for_log("standing by", Duration::from_secs(30)).unwrap_or_else(|e| panic!("{e}"));
    let waiting = second.log();
    assert!(waiting.contains("another daemon leads on this database"), "{waiting}");
    assert!(!waiting.contains(&pg.url()), "the password is never shown: {waiting}");
    let status = second.terminate(Duration::from_secs(10)).unwrap_or_else(|e| panic!("{e}"));
    assert!(status.success(), "a standby stops cleanly: {status}\n{}", second.log());
    assert!(second.log().contains("stopped while standing by"), "{}", second.log());

    // SIGKILL mid-game, then a new start: the lease runs out (5 s) and is taken again.
    daemon.kill().unwrap_or_else(|e| panic!("{e}"));
    let deadline = Instant::now() + Duration::from_secs(30);
    while pg.query("SELECT expires_at <= now() FROM leader_lease").unwrap_or_default().trim() != "t" {
        assert!(Instant::now() < deadline, "the killed daemon's lease never ran out");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    daemon.spawn().unwrap_or_else(|e| panic!("{e}"));
    let answer = until_answered(&mut gm, "!coins gm +2", "5", &daemon).await;
    assert!(answer.contains("5"), "3 coins from before the restart plus 2: {answer}");
    let rows = pg.query("SELECT count(*) FROM journal").unwrap_or_else(|e| panic!("{e}"));
    assert!(rows.trim().parse::<u32>().unwrap_or(0) >= 3, "the moves are in PostgreSQL's journal: {rows}");
}
