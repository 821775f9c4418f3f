//! g. Issue 19: a bridged Duel with a Chinese (`zh-CN`) Matrix room and an English IRC
//! channel (the config pins the Matrix room's language): each room hears every event in
//! its own language, a player's private `!lang` changes only their private messages, and
//! Chinese commands typed full width work. Issue 31: with no room pinned, `!lang zh` said
//! by the Matrix room's operator tells the IRC channel in Chinese too, a stranger's
//! `!lang` changes nothing, and a player who never chose is answered privately in the
//! language of the room where they play.

use super::support::*;

fn has_han(text: &str) -> bool {
    text.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chinese_matrix_room_and_an_english_irc_channel_each_hear_the_duel_in_their_language() {
    let (irc, synapse) = servers();
    synapse.register(BOT, &password(BOT), false).unwrap_or_else(|e| panic!("{e}"));
    let mut watcher = Mx::new(&synapse, "watcher", "Watcher").await;
    let mut bobby = Mx::new(&synapse, "bobby", "Bobby").await;
    let room = bridge_room(&mut watcher, &mut [&mut bobby]).await;
    direct_rooms(&mut [&mut bobby]).await;
    let (mut alice, mut ircwatch) =
        tokio::join!(Irc::connect(irc.port(), "alice"), Irc::connect(irc.port(), "ircwatch"));
    let extra = Extra { matrix_language: Some("zh-CN"), ..Extra::default() };
    let _daemon = start_daemon(&irc, &synapse, &room, &extra);
    until_bot_on_irc(&mut alice).await;
    until_bot_everywhere(&room, &mut watcher, &mut [&mut bobby]).await;
    for client in [&mut alice, &mut ircwatch] {
        client.settle().await;
    }
    for user in [&mut watcher, &mut bobby] {
        user.settle().await;
    }

    // alice's private messages become Chinese; the channel stays English.
    alice.tell_bot("!lang zh").await;
    alice.expect_private("你的私信现在使用简体中文").await;
    alice.say("!duel Bobby").await;
    ircwatch.expect("alice challenges Bobby").await;
    watcher.expect_in(&room, "向 Bobby 发起决斗").await;
    bobby.say(&room, "！接受").await;
    ircwatch.expect("Round 1 begins").await;
    watcher.expect_in(&room, "第 1 回合开始").await;
    alice.tell_bot("！施法　迸发　火　协调").await;
    alice.expect_private("已记下").await;
    // Bobby never chose a language privately: he is answered in his room's (issue 31).
    bobby.tell_bot("!cast focus earth end").await;
    bobby.expect_private("已记下").await;
    ircwatch.expect("Round 1 settles").await;
    watcher.expect_in(&room, "第 1 回合结算").await;
    ircwatch.expect("Round 2 begins").await;
    watcher.expect_in(&room, "第 2 回合开始").await;
    bobby.say(&room, "!concede").await;
    ircwatch.expect("duel is over").await;
    watcher.expect_in(&room, "决斗结束").await;

    tokio::join!(ircwatch.pump(QUIET), watcher.pump(QUIET));
    let on_irc = ircwatch.bot_lines();
    let on_matrix = watcher.bot_lines(&room);
    assert!(on_irc.len() >= 5 && on_matrix.len() >= 5, "{on_irc:#?}\n{on_matrix:#?}");
    for line in &on_irc {
        assert!(!has_han(line), "Chinese in the English channel: {line:?}");
    }
    for line in &on_matrix {
        assert!(
            !line.contains("Round ") && !line.contains("Dice ") && !line.contains("challenges"),
            "English in the Chinese room: {line:?}"
        );
    }
    assert!(on_matrix.iter().filter(|l| has_han(l)).count() >= on_matrix.len() - 1, "{on_matrix:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lang_in_a_bridged_matrix_room_tells_the_irc_channel_in_it_too() {
    let (irc, synapse) = servers();
    synapse.register(BOT, &password(BOT), false).unwrap_or_else(|e| panic!("{e}"));
    // The watcher made the room: its operator (power level 100).
    let mut watcher = Mx::new(&synapse, "watcher", "Watcher").await;
    let mut bobby = Mx::new(&synapse, "bobby", "Bobby").await;
    let room = bridge_room(&mut watcher, &mut [&mut bobby]).await;
    direct_rooms(&mut [&mut bobby]).await;
    let (mut alice, mut ircwatch) =
        tokio::join!(Irc::connect(irc.port(), "alice"), Irc::connect(irc.port(), "ircwatch"));
    let _daemon = start_daemon(&irc, &synapse, &room, &Extra::default());
    until_bot_on_irc(&mut alice).await;
    until_bot_everywhere(&room, &mut watcher, &mut [&mut bobby]).await;
    for client in [&mut alice, &mut ircwatch] {
        client.settle().await;
    }
    for user in [&mut watcher, &mut bobby] {
        user.settle().await;
    }

    // A stranger (no operator, no table) cannot choose.
    bobby.say(&room, "!lang zh").await;
    bobby.expect_in(&room, "Only this room's operators").await;
    watcher.say(&room, "!lang zh").await;
    watcher.expect_in(&room, "本房间及与之桥接的房间现在使用简体中文").await;
    // The IRC channel is Chinese now: a challenge there is told in Chinese on both sides.
    alice.say("!duel Bobby").await;
    ircwatch.expect("向 Bobby 发起决斗").await;
    watcher.expect_in(&room, "向 Bobby 发起决斗").await;
    // An IRC stranger (joined after the channel was made: no operator) cannot turn it
    // back (a game in progress keeps its language).
    let mut mallory = Irc::connect(irc.port(), "mallory").await;
    mallory.settle().await;
    mallory.say("!lang en").await;
    mallory.expect("只有本房间的管理员").await;
    bobby.say(&room, "!accept").await;
    ircwatch.expect("第 1 回合开始").await;
    // alice never chose a language privately: her private answer is her room's, Chinese.
    alice.tell_bot("!cast surge fire end").await;
    alice.expect_private("已记下").await;
    bobby.say(&room, "!concede").await;
    ircwatch.expect("决斗结束").await;

    tokio::join!(ircwatch.pump(QUIET), watcher.pump(QUIET));
    let on_irc = ircwatch.bot_lines();
    let from = on_irc.iter().position(|l| l.contains("发起决斗")).unwrap_or(0);
    for line in &on_irc[from..] {
        assert!(
            !line.contains("Round ") && !line.contains("challenges") && !line.contains("Dice "),
            "English in the channel after `!lang zh`: {line:?}"
        );
    }
    assert!(on_irc[from..].iter().filter(|l| has_han(l)).count() >= 3, "{on_irc:#?}");
}
