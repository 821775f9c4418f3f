//! What the router says each message was (issue 15: metrics, logs and the store read the
//! [`Happened`], never the text): chat relayed or not, a command accepted, refused or
//! asked, and what is dropped unread.

use spellbridge::relay;
use spellbridge::router::{Happened, Outcome, Router, RouterConfig};
use spellbridge_core::{NetworkId, Registry, RoomId, Said, Timestamp};

use crate::common::{MATRIX_ROOM, on, on_matrix};

const T: Timestamp = Timestamp::CONSOLE_EPOCH;

fn router(bridged: bool) -> Router {
    let bridges = if bridged {
        let rooms = [
            (NetworkId::new("libera"), RoomId::new("#magic")),
            (NetworkId::new("matrix"), RoomId::new(MATRIX_ROOM)),
        ];
        vec![relay::bridge("magic", &rooms, true)]
    } else {
        Vec::new()
    };
    Router::new(Registry::standard(), RouterConfig { bridges, ..RouterConfig::default() })
}

fn happened(router: &mut Router, nick: &str, text: &str) -> Happened {
    router.handle_turn(&on("libera", nick, text), T).happened
}

#[test]
fn chat_says_which_bridge_it_crossed() {
    let mut bridged = router(true);
    assert_eq!(happened(&mut bridged, "alice", "hello"), Happened::Chat { bridge: Some("magic".into()) });
    let mut alone = router(false);
    assert_eq!(happened(&mut alone, "alice", "hello"), Happened::Chat { bridge: None });
}

#[test]
fn commands_are_told_apart_by_what_they_did_not_by_their_words() {
    let mut router = router(false);
    let command = |outcome| Happened::Command(outcome);
    assert_eq!(happened(&mut router, "alice", "!help"), command(Outcome::Query));
    assert_eq!(happened(&mut router, "alice", "!games"), command(Outcome::Query));
    assert_eq!(happened(&mut router, "alice", "!bogus"), command(Outcome::Refused));
    assert_eq!(happened(&mut router, "alice", "!new nosuchgame"), command(Outcome::Refused));
    assert_eq!(happened(&mut router, "alice", "!new thaum"), command(Outcome::Accepted));
    assert_eq!(happened(&mut router, "alice", "!status"), command(Outcome::Query));
    // A Thaum table's game-master list is a question for anyone (it was counted refused
    // when metrics guessed from the words).
    assert_eq!(happened(&mut router, "bob", "!gm"), command(Outcome::Query));
    assert_eq!(happened(&mut router, "bob", "!join"), command(Outcome::Accepted));
    assert_eq!(happened(&mut router, "bob", "!join"), command(Outcome::Refused));
    // Asking for a link code changes the lobby (the code is journaled), so it is accepted.
    assert_eq!(happened(&mut router, "bob", "!link"), command(Outcome::Accepted));
}

#[test]
fn an_edit_that_looks_like_a_command_is_dropped_not_run() {
    let mut router = router(true);
    let mut edit = on_matrix("@alice:hs", "Alice", "!new thaum");
    edit.said = Said::Edit { original: "$1".into() };
    let turn = router.handle_turn(&edit, T);
    assert_eq!(turn.happened, Happened::Dropped);
    assert!(turn.outbound.is_empty());
    assert!(router.snapshot()["tables"].as_array().is_some_and(Vec::is_empty), "the edit opened a table");
}

#[test]
fn only_a_plain_message_with_something_after_the_prefix_is_a_command() {
    // The reader alone tells chat from a command (Router::heard): an emote or a
    // reaction is chat whatever it starts with, a lone prefix is chat, and an edit into
    // a full-width command is dropped like a half-width one.
    let mut router = router(true);
    let bridged = Happened::Chat { bridge: Some("magic".into()) };
    let mut emote = on("libera", "alice", "!new thaum");
    emote.said = Said::Emote;
    assert_eq!(router.handle_turn(&emote, T).happened, bridged);
    assert_eq!(happened(&mut router, "alice", "!   "), bridged);
    let mut edit = on("libera", "alice", "！new thaum");
    edit.said = Said::Edit { original: "1".into() };
    assert_eq!(router.handle_turn(&edit, T).happened, Happened::Dropped);
    assert!(router.snapshot()["tables"].as_array().is_some_and(Vec::is_empty), "a table was opened");
    assert_eq!(happened(&mut router, "alice", "！status"), Happened::Command(Outcome::Refused));
}
