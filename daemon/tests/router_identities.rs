//! Who is who, with no network (issue 13, findings 2, 4 and 6): the same nick on two IRC
//! networks is two players, configured role belongs to one (network, identity) pair,
//! names resolve only where a command expects a player, a new player's name must be
//! readable, and Duel challenges name a known player, expire, and can be withdrawn or
//! cleared.

use std::collections::BTreeMap;

use spellbridge::identity::Scope;
use spellbridge::journal::Entry;
use spellbridge::relay;
use spellbridge::router::{Outbound, Permissions, Router, RouterConfig};
use spellbridge_core::{Destination, Inbound, NetworkId, PlayerId, Registry, RoomId, Timestamp};

use crate::common::{MATRIX_ROOM, on, on_matrix, privately};

const T: Timestamp = Timestamp::CONSOLE_EPOCH;

/// Two IRC networks and a Matrix account, their `#magic` rooms bridged, configured as
/// the daemon configures them.
fn router(permissions: Permissions) -> Router {
    let bridge = relay::bridge(
        "magic",
        &[
            (NetworkId::new("libera"), RoomId::new("#magic")),
            (NetworkId::new("oftc"), RoomId::new("#magic")),
            (NetworkId::new("matrix"), RoomId::new(MATRIX_ROOM)),
        ],
        true,
    );
    let scopes = BTreeMap::from([
        (NetworkId::new("libera"), Scope::Network),
        (NetworkId::new("oftc"), Scope::Network),
        (NetworkId::new("matrix"), Scope::Global),
    ]);
    let options = RouterConfig { bridges: vec![bridge], permissions, scopes, ..RouterConfig::default() };
    Router::new(Registry::standard(), options)
}

/// `network to: text` of each message.
fn seen(out: &[Outbound]) -> Vec<String> {
    out.iter()
        .map(|o| {
            let to = match &o.to {
                Destination::Room(room) => room.to_string(),
                Destination::Private(player) => format!("dm:{player}"),
            };
            format!("{} {to}: {}", o.network, o.message.text.plain())
        })
        .collect()
}

fn said_on(out: &[Outbound], network: &str) -> Vec<String> {
    seen(out).into_iter().filter(|line| line.starts_with(&format!("{network} "))).collect()
}

fn state(router: &Router, table: usize) -> serde_json::Value {
    router.snapshot()["tables"][table]["state"].clone()
}

/// libera's alice and dave start a Duel; both daves have spoken.
fn duel_with_libera_dave(router: &mut Router) {
    router.handle(&on("libera", "dave", "hi"), T);
    router.handle(&on("oftc", "dave", "hello"), T);
    router.handle(&on("libera", "alice", "!duel libera:dave"), T);
    let accepted = router.handle(&on("libera", "dave", "!accept"), T);
    assert!(seen(&accepted).iter().any(|l| l.contains("Round 1 begins")), "{:?}", seen(&accepted));
}

#[test]
fn the_same_nick_on_two_irc_networks_is_two_players() {
    let mut router = router(Permissions::default());
    duel_with_libera_dave(&mut router);
    assert_eq!(state(&router, 0)["players"], serde_json::json!(["libera:alice", "libera:dave"]));
    let queued = router.handle(&privately(on("libera", "dave", "!cast surge fire end")), T);
    assert!(seen(&queued).iter().all(|l| l.starts_with("libera dm:dave")), "{:?}", seen(&queued));
    // oftc's dave cannot read libera dave's hidden queue ...
    let status = router.handle(&privately(on("oftc", "dave", "!status")), T);
    assert_eq!(seen(&status).len(), 1, "{:?}", seen(&status));
    assert!(seen(&status)[0].contains("You are not playing at any table"), "{:?}", seen(&status));
    // ... nor concede his duel.
    let conceded = router.handle(&on("oftc", "dave", "!concede"), T);
    assert!(!seen(&conceded).iter().any(|l| l.contains("wins")), "{:?}", seen(&conceded));
    assert_eq!(state(&router, 0)["finished"], serde_json::json!(false));
    // `dave` alone is ambiguous now, and the answer names both ids.
    router.handle(&on("libera", "carol", "hi"), T);
    let asked = router.handle(&on("libera", "carol", "!duel dave"), T);
    assert!(seen(&asked)[0].contains("`libera:dave` or `oftc:dave`"), "{:?}", seen(&asked));
}

#[test]
fn each_network_shows_its_own_nick_and_tells_two_daves_apart() {
    let mut router = router(Permissions::default());
    duel_with_libera_dave(&mut router);
    let conceded = router.handle(&on("libera", "dave", "!concede"), T);
    // On libera he is plainly `dave`; on oftc, where another dave is known, `dave (libera)`
    // (issue 31: one name, with where he plays only where two would look the same).
    let libera = said_on(&conceded, "libera").join(" | ");
    assert!(libera.contains("dave conceded") && libera.contains("alice wins"), "{libera}");
    assert!(!libera.contains("libera:"), "{libera}");
    let oftc = said_on(&conceded, "oftc").join(" | ");
    assert!(oftc.contains("dave (libera) conceded"), "{oftc}");
    assert!(!oftc.contains("libera:alice"), "alice is known by one name only: {oftc}");
}

#[test]
fn configured_game_master_standing_belongs_to_its_network_only() {
    let permissions = Permissions {
        admins: Vec::new(),
        game_masters: vec![(NetworkId::new("libera"), PlayerId::new("gmalice"))],
    };
    let mut router = router(permissions);
    router.handle(&on("libera", "bob", "!new thaum"), T);
    // A `gmalice` on oftc is not libera's: no game-master role.
    let refused = router.handle(&on("oftc", "gmalice", "!stop"), T);
    assert!(seen(&refused).iter().any(|l| l.contains("game master")), "{:?}", seen(&refused));
    assert!(!router.snapshot()["tables"][0]["finished"].as_bool().unwrap_or(true));
    let stopped = router.handle(&on("libera", "gmalice", "!stop"), T);
    assert!(router.snapshot()["tables"][0]["finished"].as_bool().unwrap_or(false), "{:?}", seen(&stopped));
}

#[test]
fn a_display_name_that_is_a_game_word_changes_no_game_word() {
    let mut router = router(Permissions::default());
    // A Matrix user shown as "Fire", and one whose id is `@fire:hs`.
    router.handle(&on_matrix("@trent:hs", "Fire", "hello"), T);
    router.handle(&on_matrix("@fire:hs", "Flame", "hello"), T);
    router.handle(&on("libera", "alice", "!new thaum"), T);
    let gathered = router.handle(&on("libera", "alice", "!gather 1 fire"), T);
    assert!(!seen(&gathered).iter().any(|l| l.contains("libera #magic: alice:")), "{:?}", seen(&gathered));
    assert_eq!(state(&router, 0)["players"]["libera:alice"]["thaums"]["fire"], serde_json::json!(1));
    // Where a player is expected, the name still finds them.
    router.handle(&on_matrix("@trent:hs", "Fire", "!join"), T);
    let status = router.handle(&on("libera", "alice", "!status Fire"), T);
    assert!(!seen(&status).iter().any(|l| l.contains("not a player")), "{:?}", seen(&status));
}

/// The command each accepted action journaled, in order.
fn journaled_commands(router: &mut Router) -> Vec<String> {
    router
        .take_journal()
        .into_iter()
        .filter_map(|record| match record.entry {
            Entry::Acted { command, .. } => Some(command),
            _ => None,
        })
        .collect()
}

#[test]
fn only_player_arguments_are_resolved_and_the_journal_keeps_them_as_ids() {
    let mut router = router(Permissions::default());
    router.handle(&on_matrix("@trent:hs", "Fire", "hello"), T);
    router.handle(&on("libera", "alice", "!new thaum"), T);
    router.handle(&on_matrix("@trent:hs", "Fire", "!join"), T);
    journaled_commands(&mut router);
    // `fire` as a Thaum stays a Thaum; `Fire` as a player is Trent, by id.
    router.handle(&on("libera", "alice", "!Gather Power 1 fire"), T);
    router.handle(&on("libera", "alice", "!bend 0 Fire"), T);
    assert_eq!(journaled_commands(&mut router), ["Gather Power 1 fire", "bend 0 @trent:hs"]);
    // A command that does not read never reaches the directory: the usage line answers.
    let unread = seen(&router.handle(&on("libera", "alice", "!bend Fire 0"), T)).join(" | ");
    assert!(unread.contains("the Mana amount `Fire` is not a whole number"), "{unread}");
}

#[test]
fn console_players_named_end_do_not_break_cast() {
    let scopes = BTreeMap::from([(NetworkId::new("console"), Scope::Bare)]);
    let mut router = Router::new(Registry::standard(), RouterConfig { scopes, ..RouterConfig::default() });
    let say = |who: &str, text: &str| {
        Inbound::new(NetworkId::new("console"), RoomId::new("console"), PlayerId::new(who), text)
    };
    router.handle(&say("end", "hi"), T);
    router.handle(&say("END", "hi"), T);
    router.handle(&say("alice", "!duel bob"), T);
    router.handle(&say("bob", "hello"), T);
    router.handle(&say("alice", "!duel bob"), T);
    router.handle(&say("bob", "!accept"), T);
    let cast = router.handle(&privately(say("alice", "!cast surge fire end")), T);
    assert!(!seen(&cast).iter().any(|l| l.contains("could be")), "{:?}", seen(&cast));
    assert!(seen(&cast).iter().any(|l| l.contains("queued") || l.contains("Queued")), "{:?}", seen(&cast));
    assert_eq!(state(&router, 0)["players"], serde_json::json!(["alice", "bob"]));
}

#[test]
fn a_new_player_name_must_be_readable_and_takes_the_network() {
    let mut router = router(Permissions::default());
    router.handle(&on("libera", "alice", "!new thaum"), T);
    for hidden in ["bo\u{200B}b", "bob\u{202E}live", "\u{0430}lice"] {
        let refused = router.handle(&on("libera", "alice", &format!("!add {hidden}")), T);
        let answer = seen(&refused).join(" | ");
        assert!(answer.contains("a player's name must be"), "{hidden:?}: {answer}");
        assert!(!answer.contains('\u{200B}') && !answer.contains('\u{202E}'), "echoed escaped: {answer}");
    }
    assert_eq!(state(&router, 0)["players"].as_object().map(|p| p.len()), Some(1));
    // A readable name nobody known answers to is that nick on the sender's network.
    router.handle(&on("libera", "alice", "!add bob"), T);
    assert!(state(&router, 0)["players"].get("libera:bob").is_some(), "{}", state(&router, 0));
    // bob speaks for the first time, on libera: he is that player.
    let joined = router.handle(&on("libera", "bob", "!gather 1 fire"), T);
    assert!(seen(&joined).iter().any(|l| l.contains("bob gathers 1 Mana")), "{:?}", seen(&joined));
}

/// Issue 29, item 4: a name longer than a name may be is refused, saying how long it is
/// and what to type instead, and no player is added.
#[test]
fn a_new_player_name_longer_than_the_cap_is_refused_with_what_to_type() {
    let mut router = router(Permissions::default());
    router.handle(&on("libera", "alice", "!new thaum"), T);
    let long = "b".repeat(65);
    let refused = router.handle(&on("libera", "alice", &format!("!add {long}")), T);
    let answer = seen(&refused).join(" | ");
    assert!(answer.contains("has 65 characters, more than the 64"), "{answer}");
    assert!(answer.contains("type one of at most 64"), "{answer}");
    assert!(!answer.contains(&long), "the name is echoed cut short: {answer}");
    assert_eq!(state(&router, 0)["players"].as_object().map(|p| p.len()), Some(1));
    // 64 characters is a name.
    router.handle(&on("libera", "alice", &format!("!add {}", "b".repeat(64))), T);
    assert_eq!(state(&router, 0)["players"].as_object().map(|p| p.len()), Some(2), "{}", state(&router, 0));
}

/// Issue 29, item 3: in a bridge of two IRC networks, each alice's relayed lines name her
/// network, on the other network and in Matrix; one not logged in where the network has
/// accounts is marked `?`; a Matrix display name that copies a mark shows its id; and
/// once the two alices are linked (one player), the network is no longer named.
#[test]
fn the_same_nick_on_two_bridged_irc_networks_is_told_apart_in_relayed_lines() {
    let mut router = router(Permissions::default());
    let from_libera = router.handle(&on("libera", "alice", "I am libera's"), T);
    assert_eq!(
        seen(&from_libera),
        [
            "oftc #magic: <alice/libera> I am libera's",
            &format!("matrix {MATRIX_ROOM}: <alice/libera> I am libera's")
        ]
    );
    let from_oftc = router.handle(&on("oftc", "alice", "I am oftc's"), T);
    assert_eq!(said_on(&from_oftc, "libera"), ["libera #magic: <alice/oftc> I am oftc's"]);
    let guest = Inbound { guest: true, verified: false, ..on("oftc", "alice", "logged out") };
    let out = router.handle(&guest, T);
    assert_eq!(said_on(&out, "matrix"), [format!("matrix {MATRIX_ROOM}: <alice?/oftc> logged out")]);
    let forged = router.handle(&on_matrix("@mallory:evil.org", "alice/libera", "gg"), T);
    assert_eq!(said_on(&forged, "oftc"), ["oftc #magic: <alice/libera (@mallory:evil.org)> gg"]);
    // Linked, the two alices are one player: her name needs no network.
    let given = router.handle(&on("libera", "alice", "!link"), T);
    let code: String = seen(&given)[0].split('`').nth(1).expect("a code in backticks").to_owned();
    let linked = router.handle(&privately(on("oftc", "alice", &format!("!link {code}"))), T);
    assert!(seen(&linked)[0].contains("Linked"), "{linked:?}");
    let out = router.handle(&on("oftc", "alice", "one of me"), T);
    assert_eq!(said_on(&out, "libera"), ["libera #magic: <alice> one of me"]);
}

fn challenge_entries(router: &mut Router) -> Vec<&'static str> {
    router
        .take_journal()
        .into_iter()
        .filter_map(|record| match record.entry {
            Entry::Challenged { .. } => Some("challenged"),
            Entry::ChallengeClosed { .. } => Some("closed"),
            _ => None,
        })
        .collect()
}

#[test]
fn a_challenge_to_nobody_known_is_refused_with_what_to_type() {
    let mut router = router(Permissions::default());
    let refused = router.handle(&on("libera", "alice", "!duel dave"), T);
    assert_eq!(seen(&refused).len(), 1, "{:?}", seen(&refused));
    assert!(seen(&refused)[0].contains("Nobody here is called `dave`"), "{:?}", seen(&refused));
    assert!(seen(&refused)[0].contains("!duel <"), "{:?}", seen(&refused));
    assert!(challenge_entries(&mut router).is_empty());
    // So a dave who turns up later cannot accept anything.
    let accepted = router.handle(&on("oftc", "dave", "!accept"), T);
    assert!(seen(&accepted)[0].contains("Nobody has challenged you"), "{:?}", seen(&accepted));
}

#[test]
fn a_challenge_expires_after_ten_minutes() {
    let mut router = router(Permissions::default());
    router.handle(&on("libera", "bob", "hi"), T);
    router.handle(&on("libera", "alice", "!duel bob"), T);
    assert_eq!(challenge_entries(&mut router), ["challenged"]);
    assert_eq!(router.next_timer(), Some(T.plus(600)));
    assert!(router.tick(T.plus(599)).is_empty());
    let expired = router.tick(T.plus(600));
    assert_eq!(said_on(&expired, "libera").len(), 1, "{:?}", seen(&expired));
    assert!(seen(&expired)[0].contains("expired unanswered"), "{:?}", seen(&expired));
    assert_eq!(challenge_entries(&mut router), ["closed"]);
    let late = router.handle(&on("libera", "bob", "!accept"), T.plus(601));
    assert!(seen(&late)[0].contains("Nobody has challenged you"), "{:?}", seen(&late));
    // The room is free for a new challenge.
    let again = router.handle(&on("libera", "alice", "!duel bob"), T.plus(602));
    assert!(seen(&again).iter().any(|l| l.contains("challenges")), "{:?}", seen(&again));
}

#[test]
fn a_configured_challenge_lifetime_is_the_one_kept_and_told() {
    let settings = spellbridge::config::Settings::parse(
        "[duel]\nchallenge_lifetime = \"2m\"\n",
        std::path::Path::new("spellbridge.toml"),
    )
    .expect("valid config");
    let options = spellbridge::serve::router_config(&settings);
    assert_eq!(options.challenge_lifetime, 120);
    let mut router = Router::new(Registry::standard(), options);
    router.handle(&on("libera", "bob", "hi"), T);
    router.handle(&on("libera", "carol", "hi"), T);
    router.handle(&on("libera", "alice", "!duel bob"), T);
    assert_eq!(router.next_timer(), Some(T.plus(120)));
    let refused = router.handle(&on("libera", "carol", "!withdraw"), T);
    assert!(seen(&refused)[0].contains("expires by itself 2 minutes after"), "{:?}", seen(&refused));
    assert!(router.tick(T.plus(119)).is_empty());
    let expired = router.tick(T.plus(120));
    assert!(seen(&expired)[0].contains("expired unanswered"), "{:?}", seen(&expired));
}

#[test]
fn a_challenge_past_its_time_is_gone_before_a_command_answers_it() {
    let mut router = router(Permissions::default());
    router.handle(&on("libera", "bob", "hi"), T);
    router.handle(&on("libera", "alice", "!duel bob"), T);
    // No tick ran (the daemon was busy): the message itself finds it expired.
    let late = router.handle(&on("libera", "bob", "!accept"), T.plus(11 * 60));
    let answer = seen(&late).join(" | ");
    assert!(
        answer.contains("expired unanswered") && answer.contains("Nobody has challenged you"),
        "{answer}"
    );
}

#[test]
fn withdraw_takes_back_your_own_challenge_only() {
    let mut router = router(Permissions::default());
    router.handle(&on("libera", "bob", "hi"), T);
    router.handle(&on("libera", "carol", "hi"), T);
    router.handle(&on("libera", "alice", "!duel bob"), T);
    challenge_entries(&mut router);
    let refused = router.handle(&on("libera", "carol", "!withdraw"), T);
    assert!(seen(&refused)[0].contains("who made the challenge"), "{:?}", seen(&refused));
    assert!(challenge_entries(&mut router).is_empty());
    let withdrawn = router.handle(&on("libera", "alice", "!withdraw"), T);
    assert!(seen(&withdrawn)[0].contains("alice withdraws the challenge to bob"), "{:?}", seen(&withdrawn));
    assert_eq!(challenge_entries(&mut router), ["closed"]);
    let nothing = router.handle(&on("libera", "alice", "!withdraw"), T);
    assert!(seen(&nothing)[0].contains("There is no challenge to withdraw"), "{:?}", seen(&nothing));
}

#[test]
fn a_room_operator_or_game_master_clears_a_challenge_and_stop_does_too() {
    let permissions =
        Permissions { admins: Vec::new(), game_masters: vec![(NetworkId::new("oftc"), PlayerId::new("gm"))] };
    let mut router = router(permissions);
    router.handle(&on("libera", "bob", "hi"), T);
    router.handle(&on("libera", "alice", "!duel bob"), T);
    let operator = Inbound { operator: true, ..on("libera", "op", "!withdraw") };
    let cleared = router.handle(&operator, T);
    assert!(seen(&cleared)[0].contains("op clears the challenge from alice to bob"), "{:?}", seen(&cleared));
    // `!stop` where no table plays: a player who is not party to it cannot, a GM can.
    router.handle(&on("libera", "alice", "!duel bob"), T);
    challenge_entries(&mut router);
    let refused = router.handle(&on("libera", "carol", "!stop"), T);
    assert!(challenge_entries(&mut router).is_empty(), "{:?}", seen(&refused));
    let stopped = router.handle(&on("oftc", "gm", "!stop"), T);
    assert!(seen(&stopped).iter().any(|l| l.contains("clears the challenge")), "{:?}", seen(&stopped));
    assert_eq!(challenge_entries(&mut router), ["closed"]);
    let free = router.handle(&on("libera", "alice", "!duel bob"), T);
    assert!(seen(&free).iter().any(|l| l.contains("challenges")), "{:?}", seen(&free));
}

#[test]
fn help_lists_withdraw() {
    let mut router = router(Permissions::default());
    let help = router.handle(&on("libera", "alice", "!help"), T);
    assert!(seen(&help)[0].contains("!withdraw"), "{:?}", seen(&help));
    let one = router.handle(&on("libera", "alice", "!help withdraw"), T);
    assert!(seen(&one)[0].contains("expires"), "{:?}", seen(&one));
}

/// Issue 13, finding 3: alice, a configured game master, quits; a thief takes the nick
/// "alice" without her services account. The IRC transport delivers the thief as the
/// bare nick, not verified: no `!coins`, no `!stop` as a game master.
#[test]
fn a_nick_thief_without_the_account_gets_no_game_master_standing() {
    let permissions = Permissions {
        admins: Vec::new(),
        game_masters: vec![(NetworkId::new("libera"), PlayerId::new("alice"))],
    };
    let mut router = router(permissions);
    router.handle(&on("libera", "bob", "!new thaum"), T);
    router.handle(&on("libera", "bob", "!join"), T);
    let thief = |text: &str| Inbound { verified: false, ..on("libera", "alice", text) };
    let coins = router.handle(&thief("!coins bob +1000"), T);
    assert!(seen(&coins).iter().any(|l| l.contains("game master")), "{:?}", seen(&coins));
    assert_ne!(state(&router, 0)["players"]["libera:bob"]["coins"], serde_json::json!(1000));
    let stop = router.handle(&thief("!stop"), T);
    assert!(seen(&stop).iter().any(|l| l.contains("game master")), "{:?}", seen(&stop));
    assert!(!router.snapshot()["tables"][0]["finished"].as_bool().unwrap_or(true));
    // alice herself, logged in to her account, still is one.
    router.handle(&on("libera", "alice", "!stop"), T);
    assert!(router.snapshot()["tables"][0]["finished"].as_bool().unwrap_or(false));
}
