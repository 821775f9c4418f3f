//! c, d, e. A Thaum phase with players from both networks naming each other by nick and
//! display name; a person linking their IRC nick and Matrix id and playing as one
//! player; permissions (game masters from the config, the IRC channel operator's
//! `!stop`, nobody acting as someone else).

use super::support::*;

/// A link code in the bot's private message.
fn link_code(text: &str) -> String {
    let plain = strip(text);
    let code = plain
        .split(|c: char| !c.is_ascii_digit())
        .find(|word| word.len() == 8)
        .unwrap_or_else(|| panic!("no link code in {plain:?}"));
    code.to_owned()
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
    // name is ambiguous and is asked back with each one's network and what to type.
    impostor.say("!join").await;
    impostor.expect("joins the Thaum table with 1 Mana").await;
    alice.say("!bend 1 Merlin").await;
    let ambiguous = alice.expect("Which Merlin").await;
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
