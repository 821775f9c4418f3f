//! Property tests of the router over random conversations: no input panics; a message
//! that changes nothing leaves every table as it was; and replaying the journal in a
//! fresh router rebuilds exactly the same tables (RULES T-10: results can be re-derived).

use proptest::prelude::*;
use spellbridge::router::{Router, RouterConfig};
use spellbridge::secrets::Secrets;
use spellbridge_core::{Inbound, NetworkId, PlayerId, Registry, RoomId, Timestamp};

const PLAYERS: [&str; 4] = ["alice", "bob", "carol", "dave"];

fn command() -> impl Strategy<Value = String> {
    let known = prop::sample::select(vec![
        "!new thaum",
        "!join",
        "!gather 1 fire",
        "!gather 2 air",
        "!blood 3 water",
        "!alchemy 1 fire air",
        "!bend 1 bob",
        "!summon 0 alice",
        "!tornado 1 carol",
        "!status",
        "!phase next",
        "!instability +3",
        "!coins bob -5",
        "!add dave",
        "!stop",
        "!duel bob",
        "!duel alice Pyromancer",
        "!accept",
        "!accept Geomancer",
        "!decline",
        "!cast surge fire wind end",
        "!cast overspeed water water end",
        "!cast focus earth earth void end",
        "!cast counter thunder end",
        "!cast end",
        "!concede",
        "!help",
        "!games",
        "!wizards",
        "!gather -1 fire",
        "!gather 99999999999999999999 fire",
        "!tornado 1 alice",
        "hello",
    ]);
    prop_oneof![4 => known.prop_map(str::to_owned), 1 => "!?[ -~]{0,30}", 1 => "\\PC{0,20}"]
}

fn conversation() -> impl Strategy<Value = Vec<(usize, bool, String, u32)>> {
    // (speaker, in private?, text, minutes that pass before it)
    prop::collection::vec(
        (
            0..PLAYERS.len(),
            prop::bool::weighted(0.3),
            command(),
            prop_oneof![5 => Just(0u32), 1 => 0u32..5000],
        ),
        1..60,
    )
}

fn message(speaker: usize, private: bool, text: String) -> Inbound {
    let player = PLAYERS[speaker];
    Inbound {
        display_name: player.to_owned(),
        private,
        message_id: None,
        ..Inbound::new(
            NetworkId::new("test"),
            RoomId::new(if private { format!("dm:{player}") } else { "#magic".to_owned() }),
            PlayerId::new(player),
            text,
        )
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn conversations_never_panic_and_the_journal_replays_exactly(talk in conversation(), seed in any::<u64>()) {
        let mut router = Router::new(Registry::standard(), RouterConfig { secrets: Secrets::Seeded(seed), ..RouterConfig::default() });
        let mut journal = Vec::new();
        let mut now = Timestamp::CONSOLE_EPOCH;
        for (speaker, private, text, minutes) in talk {
            now = now.plus(i64::from(minutes) * 60);
            journal.extend(router.take_journal());
            let _ = router.tick(now);
            journal.extend(router.take_journal());
            let before = router.snapshot();
            let _ = router.handle(&message(speaker, private, text), now);
            let records = router.take_journal();
            if records.is_empty() {
                prop_assert_eq!(&router.snapshot(), &before, "a message that changed nothing was not journaled");
            }
            journal.extend(records);
        }
        let mut replayed = Router::new(Registry::standard(), RouterConfig { secrets: Secrets::Seeded(seed), ..RouterConfig::default() });
        for record in &journal {
            replayed.replay(&record.entry).map_err(|e| TestCaseError::fail(e.to_string()))?;
        }
        prop_assert_eq!(replayed.snapshot(), router.snapshot());
    }
}
