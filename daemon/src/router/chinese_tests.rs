//! Chinese commands and full-width input at the router (issue 19): a Duel challenged,
//! accepted and cast in Chinese with `！` and `　`, and the attacker's view — a name in
//! full-width or look-alike letters never names someone else's identity.

use super::tests::bridged;
use super::*;

const T: Timestamp = Timestamp::CONSOLE_EPOCH;

fn irc(nick: &str, text: &str) -> Inbound {
    Inbound::new(NetworkId::new("irc"), RoomId::new("#magic"), PlayerId::new(nick), text)
}

fn matrix(who: &str, text: &str) -> Inbound {
    Inbound::new(NetworkId::new("matrix"), RoomId::new("!m"), PlayerId::new(who), text)
}

fn plain(out: &[Outbound]) -> Vec<String> {
    out.iter().map(|o| o.message.text.plain()).collect()
}

#[test]
fn a_duel_is_played_with_chinese_commands_and_full_width_input() {
    let mut router = bridged(Permissions::default());
    router.handle(&matrix("@bob:hs", "你好"), T);
    let challenged = plain(&router.handle(&irc("alice", "！决斗\u{3000}bob"), T));
    assert!(challenged.iter().any(|t| t.contains("challenges")), "{challenged:?}");
    let accepted = plain(&router.handle(&matrix("@bob:hs", "！接受"), T));
    assert!(accepted.iter().any(|t| t.contains("Round 1 begins")), "{accepted:?}");
    let alice = Inbound {
        private: true,
        ..Inbound::new(
            NetworkId::new("irc"),
            RoomId::new("alice"),
            PlayerId::new("alice"),
            "！施法　迸发　火　协调",
        )
    };
    let queued = plain(&router.handle(&alice, T));
    assert_eq!(queued.len(), 1, "{queued:?}");
    let bob = Inbound {
        private: true,
        ..Inbound::new(
            NetworkId::new("matrix"),
            RoomId::new("!dm"),
            PlayerId::new("@bob:hs"),
            "!施法 专注水协调",
        )
    };
    let round = plain(&router.handle(&bob, T));
    assert!(round.len() > 2, "the round is settled: {round:?}");
    let status = plain(&router.handle(&irc("alice", "！状态"), T));
    assert!(!status.is_empty() && !status[0].contains("Unknown command"), "{status:?}");
    let state = router.snapshot();
    let settled = state["tables"][0]["state"]["rounds"].as_array().map_or(0, Vec::len);
    assert_eq!(settled, 1, "{state:#}");
}

#[test]
fn stop_in_chinese_clears_a_challenge_where_no_table_plays() {
    let mut router = bridged(Permissions::default());
    router.handle(&matrix("@bob:hs", "hello"), T);
    router.handle(&irc("alice", "!duel bob"), T);
    let cleared = plain(&router.handle(&irc("alice", "！停止"), T));
    assert!(!cleared.is_empty() && !cleared[0].contains("There is no game"), "{cleared:?}");
    let accept = plain(&router.handle(&matrix("@bob:hs", "!accept"), T));
    assert!(!accept.iter().any(|t| t.contains("Round 1 begins")), "{accept:?}");
}

/// An attacker's view: alice is known by her ASCII nick. Full-width `ａｌｉｃｅ`, a
/// Cyrillic `а` or a compatibility form never name her; a trailing full-width colon
/// (what a Chinese keyboard's nick completion types) does, as `alice:` does.
#[test]
fn look_alike_names_never_name_another_players_identity() {
    let mut router = bridged(Permissions::default());
    router.handle(&irc("alice", "hello"), T);
    for name in ["ａｌｉｃｅ", "\u{0430}lice", "ＡＬＩＣＥ", "alic\u{0435}"] {
        let refused = plain(&router.handle(&matrix("@mallory:hs", &format!("！决斗 {name}")), T));
        assert!(refused[0].contains("Nobody here is called"), "{name}: {refused:?}");
    }
    assert!(router.challenges.is_empty(), "no challenge was made to alice");
    let named = plain(&router.handle(&matrix("@mallory:hs", "!决斗 alice："), T));
    assert!(named.iter().any(|t| t.contains("challenges")), "{named:?}");
    let challenge = router.challenges.values().next().expect("a challenge");
    assert_eq!(challenge.opponent, PlayerId::new("irc:alice"));
}

/// At a Thaum table a new player's name in full-width letters is refused as a look-alike
/// of an ASCII name, never taken as (or for) that name.
#[test]
fn a_new_player_cannot_be_added_under_a_full_width_name() {
    let mut router = bridged(Permissions::default());
    router.handle(&irc("alice", "!new thaum"), T);
    let refused = plain(&router.handle(&irc("alice", "！添加　ｂｏｂ"), T));
    assert!(refused[0].contains("a player's name must be"), "{refused:?}");
    let added = plain(&router.handle(&irc("alice", "！添加　bob"), T));
    assert!(!added[0].contains("a player's name must be"), "{added:?}");
    let state = router.snapshot();
    let players = state["tables"][0]["state"]["players"].to_string();
    assert!(players.contains("irc:bob") && !players.contains('ｂ'), "{state:#}");
}

/// Words that may stay Latin in a Chinese answer: the players and wizards these tests
/// name, networks, and names of things.
const LATIN_OK: &[&str] = &[
    "alice",
    "bob",
    "carol",
    "dave",
    "mallory",
    "irc",
    "Matrix",
    "matrix",
    "hs",
    "Apprentice",
    "Pyromancer",
    "Stormcaller",
    "Geomancer",
    "UTC",
    "Glicko",
];

/// The Latin words of an answer outside code (code segments, and backticked runs of a
/// plain answer), names and [`LATIN_OK`].
fn english(text: &RichText) -> Vec<String> {
    let mut found = Vec::new();
    for segment in text.segments() {
        let Segment::Text { text, style: spellbridge_core::text::Style::Plain } = segment else { continue };
        for (i, part) in text.split('`').enumerate() {
            if i % 2 == 1 {
                continue;
            }
            for token in part.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')) {
                let id = token.chars().any(|c| c.is_ascii_digit());
                if token.chars().any(|c| c.is_ascii_alphabetic()) && !id && !LATIN_OK.contains(&token) {
                    found.push(token.to_owned());
                }
            }
        }
    }
    found
}

/// A room, its players' private messages and its network all in Chinese: every refusal
/// the router, the grammar, the names, the records, the command limit and the games
/// give is Chinese (issue 19: no player-visible English literal).
#[test]
fn every_refusal_in_a_chinese_room_is_chinese() {
    let limit = CommandLimit { commands: 200, window_secs: 10 };
    let options = RouterConfig {
        languages: crate::config::LanguageSettings::all(Language::ZhCn),
        command_limits: [(NetworkId::new("irc"), limit)].into(),
        ..RouterConfig::default()
    };
    let mut router = Router::new(Registry::standard(), options);
    let dm = |nick: &str, text: &str| Inbound {
        private: true,
        ..Inbound::new(NetworkId::new("irc"), RoomId::new(nick), PlayerId::new(nick), text)
    };
    let said = [
        // The lobby's grammar, names, records.
        "!duel",
        "!accept a b",
        "!new",
        "!new chess",
        "!top x",
        "!help a b",
        "!stats nobody",
        "!stats",
        "!top",
        "!top 魔素",
        "!duel ｂｏｂ",
        "!frob",
        "!status",
        // A Thaum table, opened by its Chinese name, and its grammar's refusals.
        "!开局 魔素",
        "!help",
        "!board",
        "!new 魔素",
        "!gather",
        "!gather x fire",
        "!gather 1",
        "!gather 1 fier",
        "!gather 1 zzz",
        "!gather -1 fire",
        "!gather 99999999999 fire",
        "!phase x",
        "!gm x",
        "!join now",
        "!coins bob ++1",
        "!add ｂｏｂ",
        "!add bob",
        "!status nobody",
        "!主持 列表",
        "!主持 添加 dave",
        "!主持 移除 carol",
        "!bend 1",
        "!alchemy 1 fire fire",
        "!tornado 5 bob",
        "!stop",
    ]
    .into_iter()
    .map(|text| irc("alice", text));
    // A Duel and its refusals (bob speaks first, so his name is known).
    let said: Vec<Inbound> = std::iter::once(irc("bob", "你好"))
        .chain(said)
        .chain([
            irc("alice", "!决斗 bob"),
            irc("bob", "!接受"),
            irc("alice", "!cast fire"),
            dm("alice", "!cast"),
            dm("alice", "!cast lava"),
            dm("alice", "!cast fire"),
            dm("alice", "!cast surge water water"),
            dm("alice", "!cast surge end fire"),
            dm("alice", "!cast overspeed end"),
            dm("alice", "!concede now"),
            irc("carol", "!concede"),
            irc("carol", "!stop"),
            dm("carol", "!cast fire"),
            dm("dave", "!link nonsense"),
        ])
        .collect();
    let mut bad = Vec::new();
    let mut answers = 0;
    let mut all = Vec::new();
    for inbound in &said {
        for out in router.handle(inbound, T) {
            answers += 1;
            all.push(out.message.text.plain());
            let words = english(&out.message.text);
            if !words.is_empty() {
                bad.push(format!("{}: {words:?} in {}", inbound.text, out.message.text.plain()));
            }
        }
    }
    assert!(answers > said.len(), "every line is answered");
    assert!(bad.is_empty(), "English in a Chinese room:\n{}", bad.join("\n"));
    if std::env::var_os("SHOW_ANSWERS").is_some() {
        eprintln!("{}", all.join("\n"));
    }
    // Each kind was met: the grammar's refusals, a name refused, the records, the games.
    for expected in [
        "`!决斗` 需要你要挑战的玩家：请输入 `!决斗 <玩家> [魔法师]`。",
        "`!聚能`：`fier` 不是魔素（你是想输入 `fire` 吗？）；魔素有 火、水、土、风",
        "`!聚能`：法力数量 `-1` 是负数",
        "`!阶段` 需要 `下一` 这个词，而不是 `x`",
        "`!加入` 后面不接任何内容，但多出了 `now`：直接输入 `!加入` 即可。",
        "玩家名字只能由",
        "我不认识叫 `nobody` 的人",
        "还没有人有决斗等级分",
        "还没有结束的魔素赛季",
        "这里的主持人是",
        "别在房间里暴露你的法术",
        "`lava` 不是法术标记",
        "局面图显示在本桌的 Matrix 房间",
    ] {
        assert!(all.iter().any(|t| t.contains(expected)), "no answer says {expected:?}:\n{}", all.join("\n"));
    }
    // The command limit's notice, to a player who floods.
    let mut flooded = Router::new(
        Registry::standard(),
        RouterConfig {
            languages: crate::config::LanguageSettings::all(Language::ZhCn),
            command_limits: [(NetworkId::new("irc"), CommandLimit { commands: 1, window_secs: 10 })].into(),
            ..RouterConfig::default()
        },
    );
    let notices: Vec<RichText> =
        (0..3).flat_map(|_| flooded.handle(&irc("alice", "!games"), T)).map(|o| o.message.text).collect();
    let notice = notices.last().expect("a notice");
    assert!(notice.plain().contains("请慢一点"), "{}", notice.plain());
    assert!(english(notice).is_empty(), "{}", notice.plain());
}
