//! Naming anyone present (issue 31, item 1) at the router: a member of the room or of a
//! room bridged with it is named by nick, Matrix id, display name (spaces and all) or
//! localpart whether or not they have spoken; two members one name could mean are asked
//! about, never guessed; one the network will not let play is told so.

use std::sync::Arc;

use serde_json::json;
use spellbridge_core::{Login, Member};

use super::tests::bridged;
use super::*;

const T: Timestamp = Timestamp::CONSOLE_EPOCH;

/// IRC `#magic` and Matrix `!m` as their transports know them: `(network, room, identity,
/// shown, login)`.
struct Rooms(Vec<(&'static str, &'static str, &'static str, &'static str, Login)>);

impl RoomMembers for Rooms {
    fn is_member(&self, network: &NetworkId, room: &RoomId, name: &str) -> bool {
        !self.named(network, room, name).is_empty()
    }

    fn named(&self, network: &NetworkId, room: &RoomId, name: &str) -> Vec<Member> {
        let localpart =
            |id: &str| id.strip_prefix('@').and_then(|id| id.split(':').next()).map(str::to_owned);
        self.0
            .iter()
            .filter(|(n, r, ..)| (*n, *r) == (network.as_str(), room.as_str()))
            .filter(|(_, _, id, shown, _)| {
                shown.eq_ignore_ascii_case(name)
                    || id.eq_ignore_ascii_case(name)
                    || localpart(id).is_some_and(|l| l.eq_ignore_ascii_case(name))
            })
            .map(|(_, _, id, shown, login)| Member {
                identity: PlayerId::new(*id),
                shown: (*shown).to_owned(),
                login: *login,
            })
            .collect()
    }
}

/// The bridged router with `members` present; nobody has spoken.
fn present(members: Vec<(&'static str, &'static str, &'static str, &'static str, Login)>) -> Router {
    let mut router = bridged(Permissions::default());
    let room_members = RoomMembersSource::new(Arc::new(Rooms(members)));
    router.reconfigure(RouterConfig { room_members, ..router.config().clone() });
    router
}

fn everyone() -> Router {
    present(vec![
        ("irc", "#magic", "dave", "dave", Login::Known),
        ("irc", "#magic", "carol", "carol", Login::Known),
        ("matrix", "!m", "@noah:hs", "Piet Silent", Login::Known),
        ("matrix", "!m", "@carol:example.org", "carol", Login::Known),
    ])
}

fn irc(nick: &str, text: &str) -> Inbound {
    Inbound::new(NetworkId::new("irc"), RoomId::new("#magic"), PlayerId::new(nick), text)
}

fn matrix(who: &str, text: &str) -> Inbound {
    Inbound::new(NetworkId::new("matrix"), RoomId::new("!m"), PlayerId::new(who), text)
}

fn plain(out: &[Outbound]) -> Vec<String> {
    out.iter().map(|o| o.message.text.plain()).collect()
}

/// The players of the one table, once a challenge was accepted.
fn seated(router: &Router) -> Value {
    router.snapshot()["tables"][0]["state"]["players"].clone()
}

#[test]
fn a_silent_irc_member_is_challenged_by_nick_and_accepts() {
    let mut router = everyone();
    let challenged = plain(&router.handle(&irc("alice", "!duel dave"), T));
    assert!(challenged.iter().any(|t| t.contains("challenges")), "{challenged:?}");
    let accepted = plain(&router.handle(&irc("dave", "!accept"), T));
    assert!(accepted.iter().any(|t| t.contains("Round 1 begins")), "{accepted:?}");
    assert_eq!(seated(&router), json!(["irc:alice", "irc:dave"]));
}

#[test]
fn a_silent_matrix_member_is_named_by_id_by_display_name_with_spaces_and_with_a_wizard() {
    for (typed, wizard) in
        [("@noah:hs", "Apprentice"), ("Piet Silent", "Apprentice"), ("piet silent Pyromancer", "Pyromancer")]
    {
        let mut router = everyone();
        let challenged = plain(&router.handle(&irc("alice", &format!("!duel {typed}")), T));
        assert!(challenged.iter().any(|t| t.contains("challenges")), "{typed}: {challenged:?}");
        let accepted = plain(&router.handle(&matrix("@noah:hs", "!accept"), T));
        assert!(accepted.iter().any(|t| t.contains("Round 1 begins")), "{typed}: {accepted:?}");
        assert_eq!(seated(&router), json!(["irc:alice", "@noah:hs"]), "{typed}");
        let wizards = &router.snapshot()["tables"][0]["state"]["wizards"];
        assert_eq!(wizards["irc:alice"], json!(wizard), "{typed}");
    }
}

/// A nick that is a Matrix localpart, and a display name set to another member's nick:
/// the bot asks which, naming each with their network and what to type, and challenges
/// nobody until told.
#[test]
fn one_name_for_two_members_is_asked_about_never_guessed() {
    let mut router = everyone();
    let asked = plain(&router.handle(&irc("alice", "!duel carol"), T));
    assert_eq!(asked.len(), 1, "{asked:?}");
    let expected =
        "Which `carol`: carol (on irc, type `irc:carol`) or carol (on matrix, type `@carol:example.org`)?";
    assert!(asked[0].contains(expected), "{asked:?}");
    assert!(router.challenges.is_empty());
    plain(&router.handle(&irc("alice", "!duel @carol:example.org"), T));
    assert_eq!(router.challenges.values().next().map(|c| c.opponent.as_str()), Some("@carol:example.org"));
    let mut router = everyone();
    plain(&router.handle(&matrix("@noah:hs", "!duel irc:carol"), T));
    assert_eq!(router.challenges.values().next().map(|c| c.opponent.as_str()), Some("irc:carol"));

    let mut router = present(vec![
        ("irc", "#magic", "dave", "dave", Login::Known),
        ("matrix", "!m", "@mallory:hs", "dave", Login::Known),
    ]);
    let asked = plain(&router.handle(&irc("alice", "!duel dave"), T));
    assert!(asked[0].contains("Which `dave`") && asked[0].contains("@mallory:hs"), "{asked:?}");
    assert!(router.challenges.is_empty());
}

#[test]
fn a_member_who_must_log_in_first_is_told_so_and_not_challenged() {
    let mut router = present(vec![
        ("irc", "#magic", "dave", "dave", Login::LoggedOut),
        ("irc", "#magic", "erin", "erin", Login::Asking),
    ]);
    let refused = plain(&router.handle(&matrix("@bob:hs", "!duel dave"), T));
    assert!(refused[0].contains("dave is in the room but not logged in to services on irc"), "{refused:?}");
    let asking = plain(&router.handle(&matrix("@bob:hs", "!duel erin"), T));
    assert!(asking[0].contains("name them again in a moment"), "{asking:?}");
    assert!(router.challenges.is_empty());
}

#[test]
fn stats_and_a_tables_player_arguments_name_silent_members_too() {
    let mut router = everyone();
    let stats = plain(&router.handle(&irc("alice", "!stats Piet Silent"), T));
    assert!(stats[0].contains("has not finished a game yet"), "{stats:?}");
    router.handle(&irc("alice", "!new thaum"), T);
    let added = plain(&router.handle(&irc("alice", "!add Piet Silent"), T));
    assert!(!added.is_empty(), "{added:?}");
    let players = &router.snapshot()["tables"][0]["state"]["players"];
    assert!(players.get("@noah:hs").is_some(), "{players:#}");
    // A name of several words nobody here has is no new player's id.
    let refused = plain(&router.handle(&irc("alice", "!add Nobody Here"), T));
    assert!(refused[0].contains("Nobody in this room is called `Nobody Here`"), "{refused:?}");
    assert!(router.snapshot()["tables"][0]["state"]["players"].get("irc:Nobody Here").is_none());
}
