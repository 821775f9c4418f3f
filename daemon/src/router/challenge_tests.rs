//! A game the daemon has never heard of is taken by challenge with no daemon change: a
//! made-up game ("marbles") brings its challenge command (`!marbles <player> [colour]`,
//! `!弹珠`) and a lobby question (`!colours`), and the lobby reads, explains, journals
//! and opens it as it does the Duel. And a challenge journaled before challenges named
//! their game is read as the Duel's.

use serde_json::{Value, json};
use spellbridge_core::grammar::{Arg, Command, Kind, Query};
use spellbridge_core::{
    Action, Dice, Event, GamePlugin, Inbound, Language, NetworkId, PlayerId, Refusal, Registry, RichText,
    RoomId, Table, TableSetup, Timestamp,
};

use super::{Router, RouterConfig};
use crate::journal::Entry;

const T: Timestamp = Timestamp::CONSOLE_EPOCH;

static CHALLENGE: Command = Command::new("marbles", "Challenges a player to a game of marbles.")
    .aliases(&["弹珠"])
    .args(&[Arg::new(Kind::Rest, "<player>"), Arg::new(Kind::Word, "[colour]").optional()], "a player")
    .lobby();

const QUESTIONS: &[Command] =
    &[Command::new("colours", "Lists the marbles' colours.").aliases(&["颜色"]).query(Query::Yes).lobby()];

/// The made-up game: two players, each with a colour.
struct Marbles;

#[derive(Clone, Debug)]
struct Ring {
    players: Vec<PlayerId>,
    colours: Vec<String>,
}

impl Table for Ring {
    fn game(&self) -> &'static str {
        "marbles"
    }

    fn commands(&self) -> &'static [Command] {
        &[]
    }

    fn act(&mut self, _action: &Action<'_>, _dice: &mut Dice) -> Result<Vec<Event>, Refusal> {
        Err(Refusal::because("not in this test"))
    }

    fn next_timer(&self) -> Option<Timestamp> {
        None
    }

    fn fire_timer(&mut self, _at: Timestamp, _dice: &mut Dice) -> Vec<Event> {
        Vec::new()
    }

    fn is_finished(&self) -> bool {
        false
    }

    fn players(&self) -> Vec<PlayerId> {
        self.players.clone()
    }

    fn snapshot(&self) -> Value {
        json!({ "players": self.players, "colours": self.colours })
    }

    fn boxed_clone(&self) -> Box<dyn Table> {
        Box::new(self.clone())
    }
}

impl GamePlugin for Marbles {
    fn name(&self) -> &'static str {
        "marbles"
    }

    fn summary(&self) -> &'static str {
        "marbles in a ring"
    }

    fn commands(&self) -> &'static [Command] {
        &[]
    }

    fn open(&self, setup: &TableSetup) -> Result<Box<dyn Table>, Refusal> {
        let colours =
            setup.seats.iter().map(|s| s.choice.clone().unwrap_or_else(|| "clear".into())).collect();
        let players = setup.seats.iter().map(|s| s.player.clone()).collect();
        Ok(Box::new(Ring { players, colours }))
    }

    fn restore(&self, _snapshot: &Value) -> Result<Box<dyn Table>, String> {
        Err("not in this test".into())
    }

    fn challenge_command(&self) -> Option<&'static Command> {
        Some(&CHALLENGE)
    }

    fn lobby_commands(&self) -> &'static [Command] {
        QUESTIONS
    }

    fn help_in(&self, command: &str, _language: Language) -> Option<String> {
        [&CHALLENGE].into_iter().chain(QUESTIONS).find(|c| c.name == command).map(|c| c.summary.to_owned())
    }

    fn lobby_in(&self, command: &str, _language: Language) -> Option<RichText> {
        (command == "colours").then(|| RichText::from("red, blue, clear"))
    }
}

fn say(router: &mut Router, who: &str, text: &str) -> String {
    let inbound = Inbound::new(NetworkId::new("console"), RoomId::new("console"), PlayerId::new(who), text);
    router.handle(&inbound, T).iter().map(|o| o.message.text.plain()).collect::<Vec<_>>().join("\n")
}

fn games_at_the_table(router: &Router) -> Vec<String> {
    let tables = router.snapshot()["tables"].as_array().cloned().unwrap_or_default();
    tables.iter().filter_map(|t| t["game"].as_str().map(str::to_owned)).collect()
}

#[test]
fn a_made_up_challenge_game_is_challenged_explained_and_opened_with_no_daemon_change() {
    let mut router = Router::new(Registry::standard().register(Marbles), RouterConfig::default());
    // Its question and its help, from the game.
    assert_eq!(say(&mut router, "alice", "!colours"), "alice: red, blue, clear");
    let help = say(&mut router, "alice", "!help marbles");
    assert!(help.contains("`!marbles <player> [colour]`") && help.contains("game of marbles"), "{help}");
    assert!(say(&mut router, "alice", "!help").contains("!marbles"), "listed in the lobby's help");
    // Its challenge, by its Chinese name, journaled with its game.
    say(&mut router, "bob", "hello");
    let challenged = say(&mut router, "alice", "!弹珠 bob Red");
    assert!(challenged.contains("bob"), "{challenged}");
    let journal = router.take_journal();
    let game = journal.iter().find_map(|r| match &r.entry {
        Entry::Challenged { game, wizard, .. } => Some((game.clone(), wizard.clone())),
        _ => None,
    });
    assert_eq!(game, Some((Some("marbles".into()), Some("Red".into()))), "{journal:?}");
    // Accepted, it opens the game's table with the choices made.
    say(&mut router, "bob", "!accept blue");
    assert_eq!(games_at_the_table(&router), ["marbles"]);
    assert_eq!(router.snapshot()["tables"][0]["state"]["colours"], json!(["Red", "blue"]));
}

#[test]
fn a_challenge_journaled_before_challenges_named_their_game_is_the_duels() {
    // The shape a journal had: no `game`.
    let old = json!({
        "kind": "challenged", "network": "console", "room": "console",
        "challenger": "console:alice", "opponent": "console:bob", "wizard": null,
        "expires": T.0 + 600,
    });
    let entry: Entry = serde_json::from_value(old).expect("an old journal entry reads");
    assert!(matches!(&entry, Entry::Challenged { game: None, .. }), "{entry:?}");
    let mut router = Router::new(Registry::standard().register(Marbles), RouterConfig::default());
    router.replay(&entry).expect("replays");
    say(&mut router, "bob", "!accept");
    assert_eq!(games_at_the_table(&router), ["duel"]);
}
