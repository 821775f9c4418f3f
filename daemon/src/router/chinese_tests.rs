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
        assert!(refused[0].contains("I know nobody called"), "{name}: {refused:?}");
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
