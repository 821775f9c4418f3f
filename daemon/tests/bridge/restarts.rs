//! f. The daemon (SIGKILL), InspIRCd and Synapse each restarting mid-game: no move and
//! no relayed line lost or doubled.

use super::support::*;

impl Irc {
    /// Connects again with the same nick (the server restarted), keeping what was seen.
    pub(super) async fn reconnect(self, port: u16) -> Irc {
        let nick = self.nick().to_owned();
        let fresh = Irc::connect(port, &nick).await;
        Irc { client: fresh.client, ..self }
    }
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
