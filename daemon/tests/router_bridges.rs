//! The router over a bridge, with no network: a table opened in one room of a bridge is
//! played from every room of it, chat is relayed, identities link by private code,
//! names resolve across networks, and role comes from the config and room
//! operators. The same flows run against real servers in `bridge/`.

use spellbridge::journal::Entry;
use spellbridge::relay;
use spellbridge::router::{Outbound, Permissions, Router, RouterConfig};
use spellbridge::secrets::Secrets;
use spellbridge_core::text::Segment;
use spellbridge_core::{
    Destination, Form, Inbound, NetworkId, PlayerId, Registry, RoomId, Said, Timestamp, Voice,
};

use crate::common::{MATRIX_ROOM, on, on_matrix, privately};

const T: Timestamp = Timestamp::CONSOLE_EPOCH;

fn router(permissions: Permissions) -> Router {
    let bridge = relay::bridge(
        "magic",
        &[
            (NetworkId::new("irc"), RoomId::new("#magic")),
            (NetworkId::new("matrix"), RoomId::new(MATRIX_ROOM)),
        ],
        true,
    );
    // Seeded, so a fresh router replaying the journal makes the same dice keys again (a
    // real restart reads them from the store, RULES T-10).
    let options = RouterConfig {
        bridges: vec![bridge],
        permissions,
        secrets: Secrets::Seeded(1),
        ..RouterConfig::default()
    };
    Router::new(Registry::standard(), options)
}

/// (network, destination, plain text) of each message.
fn seen(out: &[Outbound]) -> Vec<(String, String, String)> {
    out.iter()
        .map(|o| {
            let to = match &o.to {
                Destination::Room(room) => room.to_string(),
                Destination::Private(player) => format!("dm:{player}"),
            };
            (o.network.to_string(), to, o.message.text.plain())
        })
        .collect()
}

#[test]
fn a_table_opened_on_one_side_is_announced_and_played_on_both() {
    let mut router = router(Permissions::default());
    let opened = router.handle(&on("irc", "alice", "!new thaum"), T);
    let rooms: Vec<_> = seen(&opened).into_iter().map(|(n, r, _)| (n, r)).collect();
    assert!(rooms.contains(&("irc".into(), "#magic".into())), "{opened:?}");
    assert!(rooms.contains(&("matrix".into(), MATRIX_ROOM.into())), "{opened:?}");
    // The Matrix side joins the same table; its join is announced in both rooms.
    let joined = router.handle(&on_matrix("@bob:hs", "Bob", "!join"), T);
    assert_eq!(joined.iter().filter(|o| o.network.as_str() == "irc").count(), 1, "{joined:?}");
    assert_eq!(joined.iter().filter(|o| o.network.as_str() == "matrix").count(), 1, "{joined:?}");
    // On IRC the Matrix player shows by name, in bold, not as a Matrix id.
    let irc = joined.iter().find(|o| o.network.as_str() == "irc").expect("to IRC");
    assert!(
        !irc.message
            .text
            .segments()
            .iter()
            .any(|s| matches!(s, Segment::Mention(p) if p.as_str() == "@bob:hs")),
        "{irc:?}"
    );
    assert!(irc.message.text.plain().contains("Bob"), "{irc:?}");
    // A second table in the other room of the bridge is refused: one table per bridge.
    let refused = router.handle(&on_matrix("@bob:hs", "Bob", "!new thaum"), T);
    assert!(seen(&refused)[0].2.contains("already has a thaum table"), "{refused:?}");
}

#[test]
fn a_name_typed_on_irc_finds_the_matrix_player_and_ambiguity_is_asked() {
    let mut router = router(Permissions::default());
    router.handle(&on("irc", "alice", "!new thaum"), T);
    router.handle(&on_matrix("@bob:hs", "Bob", "!join"), T);
    router.handle(&on("irc", "alice", "!gather 1 earth"), T);
    let bent = router.handle(&on("irc", "alice", "!status Bob"), T);
    assert!(seen(&bent).iter().any(|(_, _, text)| text.contains("Bob")), "{bent:?}");
    // Another person shown as "bob" on IRC, at the same table, makes the name ambiguous
    // (while only one of them plays, the name means that one).
    router.handle(&on("irc", "bob", "hello"), T);
    let meant = router.handle(&on("irc", "alice", "!status bob"), T);
    assert!(seen(&meant)[0].2.contains("sheet"), "{meant:?}");
    router.handle(&on("irc", "bob", "!join"), T);
    let asked = router.handle(&on("irc", "alice", "!status bob"), T);
    let text = &seen(&asked)[0].2;
    assert!(text.contains("could be") && text.contains("@bob:hs") && text.contains("irc:bob"), "{text}");
}

#[test]
fn chat_is_relayed_commands_are_not() {
    let mut router = router(Permissions::default());
    let chat = router.handle(&on("irc", "alice", "hi all"), T);
    assert_eq!(seen(&chat), [("matrix".into(), MATRIX_ROOM.into(), "<alice> hi all".into())]);
    let emote = Inbound { said: Said::Emote, ..on_matrix("@bob:hs", "Bob", "waves") };
    let out = router.handle(&emote, T);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].network.as_str(), out[0].message.voice), ("irc", Voice::Act));
    let command = router.handle(&on("irc", "alice", "!games"), T);
    assert!(command.iter().all(|o| o.network.as_str() == "irc"), "the answer only: {command:?}");
}

#[test]
fn a_linked_identity_acts_as_the_same_player_and_codes_must_be_private() {
    let mut router = router(Permissions::default());
    let given = router.handle(&on("irc", "alice", "!link"), T);
    let (_, to, text) = &seen(&given)[0];
    assert_eq!(to, "dm:alice");
    let code: String = text.split('`').nth(1).expect("a code in backticks").to_owned();
    // Said in a room, the code is void.
    let public = router.handle(&on_matrix("@alice:hs", "Alice", &format!("!link {code}")), T);
    assert!(seen(&public)[0].2.contains("privately"), "{public:?}");
    let late = router.handle(&privately(on_matrix("@alice:hs", "Alice", &format!("!link {code}"))), T);
    assert!(seen(&late)[0].2.contains("does not work here"), "{late:?}");
    // A fresh code, privately, links.
    let given = router.handle(&on("irc", "alice", "!link"), T);
    let code: String = seen(&given)[0].2.split('`').nth(1).expect("code").to_owned();
    let linked = router.handle(&privately(on_matrix("@alice:hs", "Alice", &format!("!link {code}"))), T);
    assert!(seen(&linked)[0].2.starts_with("Linked"), "{linked:?}");
    let journal = router.take_journal();
    assert!(
        journal
            .iter()
            .any(|r| matches!(&r.entry, Entry::Linked { player, .. } if player.as_str() == "irc:alice"))
    );
    // Now the Matrix identity acts as alice at alice's table.
    router.handle(&on("irc", "alice", "!new thaum"), T);
    let gathered = router.handle(&on_matrix("@alice:hs", "Alice", "!gather 1 fire"), T);
    assert!(!seen(&gathered).iter().any(|(_, _, t)| t.contains("not playing")), "{gathered:?}");
    let snapshot = router.snapshot();
    let players = &snapshot["tables"][0]["state"]["players"];
    assert_eq!(players["irc:alice"]["thaums"]["fire"], 1, "{snapshot}");
    assert!(players.get("@alice:hs").is_none(), "{snapshot}");
    // An IRC nick that looks like the Matrix id cannot act for it.
    let impostor = router.handle(&on("irc", "Alice", "!gather 1 fire"), T);
    assert!(seen(&impostor)[0].2.contains("not"), "{impostor:?}");
}

#[test]
fn configured_game_masters_and_room_operators_have_their_standing() {
    let permissions = Permissions {
        admins: Vec::new(),
        game_masters: vec![(NetworkId::new("matrix"), PlayerId::new("@gm:hs"))],
    };
    let mut router = router(permissions);
    router.handle(&on("irc", "alice", "!new thaum"), T);
    router.handle(&on("irc", "carol", "!join"), T);
    let refused = router.handle(&on("irc", "carol", "!coins carol +5"), T);
    assert!(seen(&refused)[0].2.contains("Only a game master"), "{refused:?}");
    let allowed = router.handle(&on_matrix("@gm:hs", "GM", "!coins carol +5"), T);
    assert!(seen(&allowed).iter().any(|(_, _, t)| t.contains("carol")), "{allowed:?}");
    assert_eq!(router.snapshot()["tables"][0]["state"]["players"]["irc:carol"]["coins"], 5);
    let operator = Inbound { operator: true, ..on("irc", "dave", "!stop") };
    router.handle(&operator, T);
    assert_eq!(router.snapshot()["tables"][0]["finished"], true);
}

#[test]
fn links_and_homes_replay_from_the_journal() {
    let mut router = router(Permissions::default());
    let given = router.handle(&on("irc", "alice", "!link"), T);
    let code: String = seen(&given)[0].2.split('`').nth(1).expect("code").to_owned();
    router.handle(&privately(on_matrix("@alice:hs", "Alice", &format!("!link {code}"))), T);
    router.handle(&on("irc", "alice", "!new thaum"), T);
    let journal = router.take_journal();
    let mut fresh = self::router(Permissions::default());
    for record in &journal {
        fresh.replay(&record.entry).expect("replays");
    }
    let gathered = fresh.handle(&on_matrix("@alice:hs", "Alice", "!gather 1 air"), T);
    assert!(!seen(&gathered).iter().any(|(_, _, t)| t.contains("not playing")), "{gathered:?}");
    assert_eq!(fresh.snapshot()["tables"][0]["state"]["players"]["irc:alice"]["thaums"]["air"], 1);
}

#[test]
fn names_of_players_who_acted_survive_a_restart() {
    let mut router = router(Permissions::default());
    router.handle(&on("irc", "alice", "!new thaum"), T);
    router.handle(&on_matrix("@bob:hs", "Bob", "!join"), T);
    let journal = router.take_journal();
    let mut fresh = self::router(Permissions::default());
    for record in &journal {
        fresh.replay(&record.entry).expect("replays");
    }
    // Bob has not spoken since the restart: IRC still finds and shows him by name.
    let status = fresh.handle(&on("irc", "alice", "!status Bob"), T);
    let irc = status.iter().find(|o| o.network.as_str() == "irc").expect("an answer on IRC");
    assert!(irc.message.text.plain().contains("Bob"), "{status:?}");
    assert!(!irc.message.text.plain().contains("@bob:hs"), "{status:?}");
}

#[test]
fn a_command_said_in_a_thread_is_answered_in_that_thread() {
    let mut router = router(Permissions::default());
    let asked = Inbound { thread: Some("$root".into()), ..on_matrix("@bob:hs", "Bob", "!games") };
    let answer = router.handle(&asked, T);
    assert_eq!(answer.len(), 1, "{answer:?}");
    assert_eq!(answer[0].message.thread.as_deref(), Some("$root"));
    // Announcements to the whole table are not threaded.
    let opened =
        router.handle(&Inbound { thread: Some("$root".into()), ..on("irc", "alice", "!new thaum") }, T);
    assert!(opened.iter().all(|o| o.message.thread.is_none()), "{opened:?}");
}

/// Issue 15: a player seated at a Thaum table and in a Duel casts privately and it
/// reaches the Duel (only the Duel takes `!cast`); a command both games take is still
/// asked back. And no Duel line or `!status` writes the Matrix player's id into its text
/// on either network: the track, pools and status name him by name segment.
#[test]
fn a_player_at_a_thaum_table_and_a_duel_casts_privately_and_no_duel_line_shows_a_matrix_id() {
    let mut router = router(Permissions::default());
    let in_thaum_room = |nick: &str, text: &str| {
        Inbound::new(NetworkId::new("irc"), RoomId::new("#thaum"), PlayerId::new(nick), text)
    };
    router.handle(&in_thaum_room("carol", "!new thaum"), T);
    let joined = seen(&router.handle(&in_thaum_room("alice", "!join"), T));
    assert!(joined.iter().any(|(_, _, t)| t.contains("joins")), "{joined:?}");
    router.handle(&on_matrix("@bob:hs", "Bob", "hello"), T);
    router.handle(&on("irc", "alice", "!duel Bob"), T);
    let mut said = router.handle(&on_matrix("@bob:hs", "Bob", "!accept"), T);
    assert!(seen(&said).iter().any(|(_, _, t)| t.contains("Round 1 begins")), "{:?}", seen(&said));

    let cast = router.handle(&privately(on("irc", "alice", "!cast surge fire wind water thunder end")), T);
    assert_eq!(
        seen(&cast),
        [(
            "irc".into(),
            "dm:alice".into(),
            "Queued. Your spell for round 1: Power Surge 🔥Fire 💨Wind 💧Water ⚡Thunder End. Your \
             tokens are placed one per step and revealed with your opponent's."
                .into()
        )]
    );
    let asked = seen(&router.handle(&privately(on("irc", "alice", "!status")), T));
    assert!(asked[0].2.contains("You play at several tables"), "{asked:?}");
    said.extend(router.handle(&privately(on_matrix("@bob:hs", "Bob", "!cast focus earth earth end")), T));
    said.extend(router.handle(&on_matrix("@bob:hs", "Bob", "!status"), T));
    said.extend(router.handle(&on("irc", "alice", "!status"), T));
    let plain: Vec<String> = seen(&said).into_iter().map(|(_, _, t)| t).collect();
    let plain = plain.join("\n");
    for line in ["Round 1 settles", "Track moves", "Duel: ", "Pools: "] {
        assert!(plain.contains(line), "{line:?} was not said:\n{plain}");
    }
    for message in &said {
        for segment in message.message.text.segments() {
            if let Segment::Text { text, .. } | Segment::Coloured { text, .. } = segment {
                assert!(!text.contains("@bob:hs"), "{} was told {text:?}", message.network);
            }
        }
    }
}

/// A Duel round at a bridged table reaches each room in its network's form: IRC (whose
/// transport asks for the compact form) hears the round in three lines, Matrix hears
/// every step; private messages are the same in both.
#[test]
fn a_duel_round_is_compact_on_irc_and_full_on_matrix() {
    let mut router = router(Permissions::default());
    let forms = [(NetworkId::new("irc"), Form::Compact)].into();
    router.reconfigure(RouterConfig { forms, ..router.config().clone() });
    router.handle(&on_matrix("@bob:hs", "Bob", "hello"), T);
    router.handle(&on("irc", "alice", "!duel Bob"), T);
    router.handle(&on_matrix("@bob:hs", "Bob", "!accept"), T);
    let mut said =
        router.handle(&privately(on("irc", "alice", "!cast surge fire wind water thunder end")), T);
    said.extend(router.handle(&privately(on_matrix("@bob:hs", "Bob", "!cast focus earth earth end")), T));
    let heard = |network: &str| -> Vec<String> {
        seen(&said)
            .into_iter()
            .filter(|(n, to, _)| n == network && !to.starts_with("dm:"))
            .map(|(_, _, t)| t)
            .collect()
    };
    let irc = heard("irc");
    assert_eq!(irc.len(), 3, "{irc:#?}");
    assert!(
        irc[0].starts_with("Round 1, steps 0–") && irc[0].contains("alice Power Surge 🔥Fire 💨Wind"),
        "{irc:#?}"
    );
    assert!(irc[0].contains(" · Bob Focused Casting 🪨Earth 🪨Earth End"), "{irc:#?}");
    assert!(irc[1].starts_with("Round 1 settles: alice ") && irc[1].contains("Track moves"), "{irc:#?}");
    assert!(irc[2].starts_with("Round 2 begins"), "{irc:#?}");
    let matrix = heard("matrix");
    assert!(matrix.len() >= 9, "{matrix:#?}");
    assert!(matrix.iter().any(|t| t.starts_with("Round 1, step 1: ")), "{matrix:#?}");
    assert!(!matrix.iter().any(|t| t.starts_with("Round 1, steps")), "{matrix:#?}");
    assert_eq!(matrix.last().map(|t| t.starts_with("Round 2 begins")), Some(true), "{matrix:#?}");
    // What goes privately goes once, whatever the form.
    let private: Vec<_> = seen(&said).into_iter().filter(|(_, to, _)| to.starts_with("dm:")).collect();
    assert!(private.iter().any(|(_, to, t)| to == "dm:@bob:hs" && t.starts_with("Queued")), "{private:#?}");
    let mut once = private.clone();
    once.dedup();
    assert_eq!(once, private, "a private message was sent twice");
}
