//! `spellbridge run` as a child process against a real InspIRCd on loopback, with raw IRC
//! clients as the players: a whole Duel (spells by private message, nothing revealed
//! early) and a Thaum phase in a channel; a server restart in the middle of a duel; and
//! a client flooding commands while the others play.
//!
//! These need InspIRCd (`tests/scripts/install-inspircd.sh`); without it they fail with
//! the harness's message, they never skip.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use spellbridge_adapters::irc::format::strip;
use spellbridge_tests::harness::daemon::Daemon as Process;
use spellbridge_tests::harness::irc_client::Message;
use spellbridge_tests::harness::irc_player::{Bot, WAIT, server};

const BIN: &str = env!("CARGO_BIN_EXE_spellbridge");
const BOT: &str = "spellbridge";
const ROOM: &str = "#magic";
/// The `[[irc]]` lines that turn off flood control and the per-user command limit.
const UNTHROTTLED: &str = "[irc.flood]\nenabled = false\n[irc.user_limit]\nenabled = false\n";

/// The daemon, running from a config in its own temp dir (the harness's daemon).
struct Daemon(Process);

impl Daemon {
    /// Starts `spellbridge run` against the server on `port`; `extra` is appended to the
    /// `[[irc]]` table of the config, `games` before it.
    fn start(port: u16, games: &str, extra: &str) -> Daemon {
        let config = format!(
            "prefix = \"!\"\n[store]\npath = \"games.db\"\n{games}\n\
             [[irc]]\nname = \"test\"\nserver = \"127.0.0.1\"\nport = {port}\ntls = false\n\
             nick = \"{BOT}\"\nchannels = [\"{ROOM}\"]\nrequire_account = false\n{extra}\n"
        );
        let mut process = Process::new(BIN).unwrap_or_else(|e| panic!("{e}"));
        process.env("RUST_LOG", "info,spellbridge_adapters=debug");
        process.set_config(&config).unwrap_or_else(|e| panic!("{e}"));
        process.spawn().unwrap_or_else(|e| panic!("{e}"));
        Daemon(process)
    }

    fn database(&self) -> PathBuf {
        self.0.path("games.db")
    }

    fn log(&self) -> String {
        self.0.log()
    }

    /// SIGTERM, then waits (bounded) for a clean exit; returns whether it exited cleanly.
    fn terminate(&mut self) -> bool {
        self.0.terminate(Duration::from_secs(10)).is_ok_and(|status| status.success())
    }
}

/// The bot as the players see it.
fn bot(daemon: &Daemon) -> Bot<'_> {
    Bot { nick: BOT, room: ROOM, daemon: &daemon.0 }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_players_play_a_whole_duel_and_a_thaum_phase() {
    let irc = server();
    let daemon = Daemon::start(irc.port(), "", UNTHROTTLED);
    let bot = bot(&daemon);
    let (mut alice, mut bob, mut carol) = tokio::join!(
        bot.player(irc.port(), "alice"),
        bot.player(irc.port(), "bob"),
        bot.player(irc.port(), "carol")
    );
    bot.wait_until_answering(&mut carol).await;
    bot.drain(&mut alice, Duration::from_millis(300)).await;
    bot.drain(&mut bob, Duration::from_millis(300)).await;

    // bob speaks first: a challenge names someone the bot has heard (issue 13).
    bob.privmsg(ROOM, "!games").await.expect("send");
    bot.expect(&mut bob, "Games:").await;
    alice.privmsg(ROOM, "!duel bob").await.expect("send");
    bot.expect(&mut bob, "challenges").await;
    bob.privmsg(ROOM, "!accept").await.expect("send");
    bot.expect(&mut carol, "Round 1 begins").await;

    // Round 1: alice's spell goes privately; the room hears nothing of it until bob casts.
    alice.privmsg(BOT, "!cast surge fire wind water thunder end").await.expect("send");
    bot.expect_private(&mut alice, "Queued").await;
    // The table's dice commitment (RULES T-10) is public; nothing of the spell is.
    let mut early = bot.drain(&mut carol, Duration::from_secs(1)).await;
    early.retain(|m| !m.text.starts_with("Dice commitment"));
    assert!(early.is_empty(), "the room heard something before bob cast: {early:?}");
    bob.privmsg(BOT, "!cast focus earth earth earth earth end").await.expect("send");
    // On IRC the steps revealed together are one line (the compact form).
    let steps = bot.expect(&mut carol, "Round 1, steps 0–").await;
    assert_eq!(steps.target, ROOM);
    let steps = strip(&steps.text);
    assert!(steps.contains("alice Power Surge 🔥Fire 💨Wind 💧Water ⚡Thunder"), "{steps}");
    assert!(steps.contains("bob Focused Casting 🪨Earth 🪨Earth 🪨Earth 🪨Earth"), "{steps}");
    let settles = bot.expect(&mut carol, "Round 1 settles").await;
    // Fire Wind Water Thunder: 16 + surge 8 + explosion 16 = 40; Earth×4 focused: 16. Track 24.
    assert!(strip(&settles.text).contains("now 24 toward alice"), "{settles}");

    // Round 2: bob's Earth run sealed Wind and Water for alice's first 3 positions (D-10).
    alice.privmsg(BOT, "!cast surge fire wind end").await.expect("send");
    let refused = bot.expect_private(&mut alice, "sealed").await;
    assert!(refused.text.contains("wind"), "the sealed Wind is refused privately: {refused}");
    alice.privmsg(BOT, "!cast surge fire earth fire earth end").await.expect("send");
    bot.expect(&mut alice, "Queued").await;
    bob.privmsg(BOT, "!cast focus earth earth earth earth end").await.expect("send");
    let over = bot.expect(&mut carol, "duel is over").await;
    assert!(over.text.contains("alice"), "alice wins on the track (D-1): {over}");

    // A Thaum phase in the same channel, now that the duel table is finished.
    carol.privmsg(ROOM, "!new thaum").await.expect("send");
    bot.expect(&mut alice, "opens a Thaum table").await;
    alice.privmsg(ROOM, "!join").await.expect("send");
    bot.expect(&mut carol, "alice").await;
    bob.privmsg(ROOM, "!join").await.expect("send");
    alice.privmsg(ROOM, "!gather 1 fire").await.expect("send");
    bot.expect(&mut bob, "Fire 0 → 1").await;
    bob.privmsg(ROOM, "!phase next").await.expect("send");
    let not_gm = bot.expect(&mut bob, "game master").await;
    assert!(not_gm.text.starts_with("bob"), "the refusal names bob: {not_gm}");
    carol.privmsg(ROOM, "!phase next").await.expect("send");
    bot.expect(&mut alice, "Phase II").await;
    alice.privmsg(ROOM, "!status").await.expect("send");
    let status = bot.expect(&mut alice, "Mana 1").await;
    assert!(strip(&status.text).contains("Fire 1"), "{status}");
}

/// A Duel round on IRC is the compact form: at most four lines in the room (a real
/// network's flood control sends one line per 2 s), and commands in bold, not the
/// monospace code irssi shows as a reverse `Q`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_duel_round_reaches_the_channel_in_at_most_four_lines() {
    let irc = server();
    let daemon = Daemon::start(irc.port(), "", UNTHROTTLED);
    let bot = bot(&daemon);
    let (mut alice, mut bob, mut carol) = tokio::join!(
        bot.player(irc.port(), "alice"),
        bot.player(irc.port(), "bob"),
        bot.player(irc.port(), "carol")
    );
    bot.wait_until_answering(&mut carol).await;
    bob.privmsg(ROOM, "!games").await.expect("send");
    bot.expect(&mut bob, "Games:").await;
    alice.privmsg(ROOM, "!duel bob").await.expect("send");
    bot.expect(&mut bob, "challenges").await;
    bob.privmsg(ROOM, "!accept").await.expect("send");
    let opening = bot.expect(&mut carol, "Round 1 begins").await;
    assert!(opening.text.contains("\x02!help cast\x02"), "code is bold by default: {opening}");
    alice.privmsg(BOT, "!cast surge fire fire wind water end").await.expect("send");
    bot.expect_private(&mut alice, "Queued").await;
    // Whatever the room heard before the round (the dice commitment) is not the round.
    bot.drain(&mut carol, Duration::from_millis(500)).await;

    bob.privmsg(BOT, "!cast surge water thunder earth fire end").await.expect("send");
    let mut round = Vec::new();
    let deadline = Instant::now() + WAIT;
    while Instant::now() < deadline && !round.iter().any(|m: &Message| m.text.contains("Round 2 begins")) {
        round.extend(bot.drain(&mut carol, Duration::from_millis(300)).await);
    }
    // Anything the bot still had to say about the round arrives within a second.
    round.extend(bot.drain(&mut carol, Duration::from_secs(1)).await);
    let lines: Vec<String> = round.iter().filter(|m| m.target == ROOM).map(|m| strip(&m.text)).collect();
    assert!(lines.iter().any(|l| l.starts_with("Round 2 begins")), "the round ended: {lines:#?}");
    assert!(lines.len() <= 4, "a Duel round took {} lines in the channel: {lines:#?}", lines.len());
    let said = lines.join("\n");
    for piece in [
        "alice Power Surge 🔥Fire 🔥Fire 💨Wind 💧Water End",
        "bob Power Surge 💧Water ⚡Thunder 🪨Earth 🔥Fire End",
        "= power 33",
        "= power 40",
        "now 7 toward bob",
        "Seals (RULES D-10): bob's first 1 element position(s) may not be 💧Water or ⚡Thunder",
    ] {
        assert!(said.contains(piece), "{piece:?} is missing from the round:\n{said}");
    }
    assert!(
        round.iter().all(|m| !m.text.contains('\x11')),
        "no monospace code on IRC by default: {round:#?}"
    );
}

/// Issue 31: `[[irc]] form = "full"` opts a network out of the compact form: a Duel round
/// is told a line per step, as on Matrix; and the opening says how to cast with the bot's
/// real nick (`/msg spellbridge …`, never a `<bot>` placeholder).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_full_form_a_duel_round_is_told_a_line_per_step() {
    let irc = server();
    let daemon = Daemon::start(irc.port(), "", &format!("form = \"full\"\n{UNTHROTTLED}"));
    let bot = bot(&daemon);
    let (mut alice, mut bob, mut carol) = tokio::join!(
        bot.player(irc.port(), "alice"),
        bot.player(irc.port(), "bob"),
        bot.player(irc.port(), "carol")
    );
    bot.wait_until_answering(&mut carol).await;
    bob.privmsg(ROOM, "!games").await.expect("send");
    bot.expect(&mut bob, "Games:").await;
    alice.privmsg(ROOM, "!duel bob").await.expect("send");
    bot.expect(&mut bob, "challenges").await;
    bob.privmsg(ROOM, "!accept").await.expect("send");
    let opening = strip(&bot.expect(&mut carol, "Round 1 begins").await.text);
    assert!(opening.contains(&format!("/msg {BOT} !cast surge fire wind end")), "{opening}");
    alice.privmsg(BOT, "!cast surge fire fire wind water end").await.expect("send");
    bot.expect_private(&mut alice, "Queued").await;
    bot.drain(&mut carol, Duration::from_millis(500)).await;

    bob.privmsg(BOT, "!cast surge water thunder earth fire end").await.expect("send");
    let mut round = Vec::new();
    let deadline = Instant::now() + WAIT;
    while Instant::now() < deadline && !round.iter().any(|m: &Message| m.text.contains("Round 2 begins")) {
        round.extend(bot.drain(&mut carol, Duration::from_millis(300)).await);
    }
    let lines: Vec<String> = round.iter().filter(|m| m.target == ROOM).map(|m| strip(&m.text)).collect();
    for step in 0..=5 {
        let line = format!("Round 1, step {step}: ");
        assert_eq!(lines.iter().filter(|l| l.starts_with(&line)).count(), 1, "{line:?}: {lines:#?}");
    }
    assert!(lines.iter().any(|l| l == "Round 1 settles."), "the settlement's heading: {lines:#?}");
    assert!(!lines.iter().any(|l| l.starts_with("Round 1, steps")), "no compact line: {lines:#?}");
    let begins = lines.iter().find(|l| l.starts_with("Round 2 begins")).expect("the next round");
    assert!(begins.contains(&format!("/msg {BOT} !cast …")), "{begins}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_restart_mid_duel_loses_and_repeats_no_announcement() {
    let mut irc = server();
    // Timeline (seconds from the stop): bob's step times out at ~12 while the server is
    // down, so the bot queues the settlement; the server is back at ~13 and the players
    // rejoin by ~15; the bot's first reconnect comes 15-25 s after it lost the server,
    // so the players are there to see what it queued.
    let mut daemon = Daemon::start(
        irc.port(),
        "[duel]\nstep_timeout = \"12s\"\n",
        "reconnect_delay = \"20s\"\n[irc.flood]\nenabled = false\n[irc.user_limit]\nenabled = false\n",
    );
    let bot = bot(&daemon);
    let (mut alice, mut bob) = tokio::join!(bot.player(irc.port(), "alice"), bot.player(irc.port(), "bob"));
    bot.wait_until_answering(&mut alice).await;
    bob.privmsg(ROOM, "!games").await.expect("send");
    bot.expect(&mut bob, "Games:").await;
    alice.privmsg(ROOM, "!duel bob").await.expect("send");
    bot.expect(&mut bob, "challenges").await;
    bob.privmsg(ROOM, "!accept").await.expect("send");
    bot.expect(&mut alice, "Round 1 begins").await;
    alice.privmsg(BOT, "!cast surge fire end").await.expect("send");
    bot.expect(&mut alice, "Queued").await;
    bob.privmsg(BOT, "!cast surge").await.expect("send");
    bot.expect(&mut alice, "Round 1, step 0: alice Power Surge · bob Power Surge").await;

    irc.stop().expect("stop the server");
    tokio::time::sleep(Duration::from_secs(13)).await;
    irc.restart().expect("start the server again");
    let (mut alice, mut bob) = tokio::join!(bot.player(irc.port(), "alice"), bot.player(irc.port(), "bob"));

    // What the bot queued while cut off arrives once it is back (the steps that timed
    // out as one line: `step 1:` or `steps 1–2:`).
    bot.expect(&mut alice, "Round 1, step").await;
    bot.expect(&mut alice, "Round 1 settles").await;
    bot.expect(&mut alice, "Round 2 begins").await;
    assert!(daemon.log().contains("reconnecting"), "the daemon reconnected by itself");

    // The duel goes on. If round 2's first step already timed out, Power Surge was
    // placed for the players (D-9) and they go on from step 1.
    for (client, spell) in [(&mut alice, "fire end"), (&mut bob, "water end")] {
        client.privmsg(BOT, &format!("!cast surge {spell}")).await.expect("send");
        let answer = bot.expect_private(client, "").await;
        if !answer.text.contains("Queued") {
            client.privmsg(BOT, &format!("!cast {spell}")).await.expect("send");
            bot.expect_private(client, "Queued").await;
        }
    }
    let mut after = Vec::new();
    let deadline = Instant::now() + WAIT;
    while Instant::now() < deadline && !after.iter().any(|m: &Message| m.text.contains("Round 2 settles")) {
        after.extend(bot.drain(&mut alice, Duration::from_millis(500)).await);
    }
    assert!(after.iter().any(|m| m.text.contains("Round 2 settles")), "round 2 settled: {after:#?}");
    for once in ["Round 1 settles", "Round 2 begins"] {
        let repeats = after.iter().filter(|m| m.text.contains(once)).count();
        assert_eq!(repeats, 0, "{once:?} was announced again after it arrived: {after:#?}");
    }
    let settled: Vec<&Message> = after.iter().filter(|m| m.text.contains("Round 2 settles")).collect();
    assert_eq!(settled.len(), 1, "round 2 settled once: {after:#?}");
    drop(bob);

    // And it stops cleanly on SIGTERM, with nothing left unsent.
    assert!(daemon.terminate(), "spellbridge exits 0 on SIGTERM; log:\n{}", daemon.log());
    let connection = rusqlite::Connection::open(daemon.database()).expect("sqlite opens");
    let unsent: i64 = connection.query_row("SELECT COUNT(*) FROM outbox", [], |r| r.get(0)).expect("count");
    assert_eq!(unsent, 0, "every queued announcement was sent");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_player_flooding_commands_does_not_starve_the_others() {
    let irc = server();
    // Default flood control and per-user limit, as on a large network.
    let daemon = Daemon::start(irc.port(), "", "");
    let bot = bot(&daemon);
    let (mut alice, mut spammer) =
        tokio::join!(bot.player(irc.port(), "alice"), bot.player(irc.port(), "spammer"));
    bot.wait_until_answering(&mut alice).await;
    // The readiness probe's replies take the bucket's burst; let it refill.
    tokio::time::sleep(Duration::from_secs(8)).await;
    bot.drain(&mut alice, Duration::from_millis(300)).await;
    for _ in 0..1_000 {
        spammer.privmsg(ROOM, "!games").await.expect("send");
    }
    let asked = Instant::now();
    alice.privmsg(ROOM, "!help duel").await.expect("send");
    let answer = bot.expect(&mut alice, "Challenges a player").await;
    let waited = asked.elapsed();
    assert!(answer.text.starts_with("alice"), "{answer}");
    assert!(waited < Duration::from_secs(15), "alice waited {waited:?} behind the flood");
    // The daemon's command limit tells the flooder privately, once (daemon/src/limits.rs).
    let notices: Vec<Message> = bot
        .drain(&mut spammer, Duration::from_secs(2))
        .await
        .into_iter()
        .filter(|m| m.text.starts_with("Slow down"))
        .collect();
    assert_eq!(notices.len(), 1, "the flooder is told once, politely: {notices:?}");
    eprintln!("alice's answer came {waited:?} after 1,000 commands from another user");
}
