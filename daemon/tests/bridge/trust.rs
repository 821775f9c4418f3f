//! h. Trust (issue 13): relayed chat cannot forge a line (every line starts with its
//! speaker, a Matrix display name that is an IRC nick shows its Matrix id), a long
//! Matrix message is capped and does not hold a game answer behind it, and a "direct"
//! room a third person joined is not private.

use super::support::*;

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
