//! Nim's rules, words and snapshot, through the plugin as the daemon uses it.

use proptest::prelude::*;
use serde_json::json;

use super::*;
use crate::grammar;
use crate::ids::RoomId;
use crate::plugin::{Registry, Role, Seat};

fn p(name: &str) -> PlayerId {
    PlayerId::new(name)
}

fn table(seats: &[&str]) -> Box<dyn Table> {
    let seats = seats.iter().map(|s| Seat { player: p(s), choice: None }).collect();
    let setup = TableSetup { room: RoomId::new("#nim"), seats, now: Timestamp::CONSOLE_EPOCH };
    NimPlugin.open(&setup).expect("opens")
}

/// `line` typed by `who` at `table`, as the daemon would hand it over; the news in
/// English, one line each, or the refusal's English.
fn say(table: &mut Box<dyn Table>, who: &str, line: &str) -> Result<Vec<String>, String> {
    say_as(table, who, line, Role::Player)
}

fn say_as(table: &mut Box<dyn Table>, who: &str, line: &str, role: Role) -> Result<Vec<String>, String> {
    let actor = p(who);
    let command = grammar::read_for(table.as_ref(), &actor, line).map_err(|r| r.to_string())?;
    let action =
        Action { actor: &actor, command: &command, typed: line, private: false, now: Timestamp::CONSOLE_EPOCH, role };
    let events = table.act(&action, &mut Dice::from_seed(0)).map_err(|r| r.to_string())?;
    Ok(NimPlugin.render(&events, &Presentation::default()).into_iter().map(|a| a.text.plain()).collect())
}

#[test]
fn a_whole_game_is_played_to_the_last_stone() {
    let mut t = table(&["alice"]);
    assert_eq!(t.next_timer(), None);
    let said = say(&mut t, "bob", "join").expect("bob joins");
    assert_eq!(said, ["bob joins. alice moves first, e.g. `!take 2 b`. Piles: a 3 · b 5 · c 7."]);
    for (who, line) in [
        ("alice", "take 3 a"),
        ("bob", "take 3 c"),
        ("alice", "take 3 c"),
        ("bob", "take 1 c"),
        ("alice", "take 2 b"),
    ] {
        say(&mut t, who, line).unwrap_or_else(|e| panic!("{who} {line}: {e}"));
    }
    assert!(!t.is_finished());
    let said = say(&mut t, "bob", "TAKE 3 B").expect("the last stones");
    assert_eq!(
        said,
        [
            "bob takes 3 stones from pile b. Piles: a 0 · b 0 · c 0.",
            "🏁 bob took the last stone and wins; alice loses (RULES N-4). Start another with `!new nim`."
        ]
    );
    assert!(t.is_finished());
    let state = t.snapshot();
    assert_eq!(state["winner"], "bob");
    assert_eq!(state["finish_reason"], "last_stone");
    assert_eq!(state["piles"], json!([0, 0, 0]));
    assert_eq!(state["moves"].as_array().map(Vec::len), Some(6));
    assert_eq!(say(&mut t, "alice", "status"), Err("This game of Nim is over. Start another with `!new nim`.".into()));
}

#[test]
fn bad_takes_say_what_was_wrong_and_change_nothing() {
    let mut t = table(&["alice"]);
    assert_eq!(say(&mut t, "alice", "take 1 a"), Err("Wait for an opponent to `!join` before you take stones.".into()));
    assert_eq!(say(&mut t, "alice", "join"), Err("You are at this table already; wait for an opponent to `!join`.".into()));
    assert_eq!(
        say(&mut t, "carol", "take 1 a"),
        Err("You are not playing at this table; type `!join` to take the second seat.".into())
    );
    say(&mut t, "bob", "join").expect("joins");
    let before = t.snapshot();
    for (who, line, said) in [
        ("bob", "take 1 a", "It is alice's turn; wait for their move."),
        ("alice", "take 4 c", "You may take 1 to 3 stones, not 4 (RULES N-3): e.g. `!take 2 b`."),
        ("alice", "take 0 c", "You may take 1 to 3 stones, not 0 (RULES N-3): e.g. `!take 2 b`."),
        ("carol", "join", "Both seats are taken (alice and bob); watch, or open a table in another room with `!new nim`."),
        (
            "carol",
            "take 1 a",
            "You are not playing at this table: alice and bob are. Watch, or open a table in another room with `!new nim`.",
        ),
        ("alice", "stop", "Only a room operator, game master or bot admin may stop the game; to give up, type `!concede`."),
    ] {
        assert_eq!(say(&mut t, who, line), Err(said.to_owned()), "{who}: {line}");
        assert_eq!(t.snapshot(), before, "{line} changed nothing");
    }
    // The grammar refuses what is not a take at all, with the usage.
    let refused = say(&mut t, "alice", "take 2 d").expect_err("no pile d");
    assert!(refused.contains("the piles are a, b and c"), "{refused}");
    let refused = say(&mut t, "alice", "take 2").expect_err("no pile");
    assert!(refused.contains("the pile is missing") && refused.contains("`!take 2 b`"), "{refused}");
    let refused = say(&mut t, "alice", "take -1 a").expect_err("negative");
    assert!(refused.contains("-1"), "{refused}");
    say(&mut t, "alice", "take 3 a").expect("empties a");
    say(&mut t, "bob", "take 3 b").expect("b has 2");
    assert_eq!(
        say(&mut t, "alice", "take 3 b"),
        Err("Pile b has only 2 stones left; take at most that many, e.g. `!take 2 b`.".into())
    );
    assert_eq!(
        say(&mut t, "alice", "take 1 a"),
        Err("Pile a is empty; take from a pile that has stones: a 0 · b 2 · c 7.".into())
    );
}

#[test]
fn concede_and_stop_end_the_game() {
    let mut t = table(&["alice", "bob"]);
    assert_eq!(
        say(&mut t, "bob", "resign"),
        Ok(vec!["🏳 bob concedes; alice wins. Start another with `!new nim`.".to_owned()])
    );
    assert_eq!(t.snapshot()["winner"], "alice");
    let mut t = table(&["alice", "bob"]);
    say_as(&mut t, "carol", "stop", Role::Operator).expect("an operator stops it");
    assert!(t.is_finished());
    assert_eq!(t.snapshot()["winner"], json!(null));
    assert_eq!(t.snapshot()["finish_reason"], "stopped");
    let mut alone = table(&["alice"]);
    say(&mut alone, "alice", "concede").expect("closes");
    assert!(alone.is_finished());
    assert_eq!(alone.snapshot()["winner"], json!(null));
}

#[test]
fn a_snapshot_restores_the_same_table_and_bad_ones_are_refused() {
    let mut t = table(&["alice", "bob"]);
    say(&mut t, "alice", "take 2 c").expect("takes");
    let restored = NimPlugin.restore(&t.snapshot()).expect("restores");
    assert_eq!(restored.snapshot(), t.snapshot());
    assert_eq!(serde_json::from_str::<Value>(&t.snapshot_text()).ok(), Some(t.snapshot()));
    let mut bad = t.snapshot();
    bad["piles"] = json!([-1, 5, 7]);
    assert!(NimPlugin.restore(&bad).is_err(), "no negative pile");
    let mut bad = t.snapshot();
    bad["turn"] = json!(2);
    assert!(NimPlugin.restore(&bad).is_err(), "no third seat's turn");
    let mut bad = t.snapshot();
    bad["players"] = json!([]);
    assert!(NimPlugin.restore(&bad).is_err(), "no table without players");
}

#[test]
fn nim_is_in_the_standard_registry_by_both_names_with_help_and_rules() {
    let registry = Registry::standard();
    assert_eq!(registry.iter().map(|g| g.name()).collect::<Vec<_>>(), ["thaum", "duel", "nim"]);
    assert_eq!(registry.get("取石子").map(|g| g.name()), Some("nim"));
    let nim = registry.get("NIM").expect("by name");
    assert_eq!(nim.help_in("take", Language::En).as_deref(), Some(COMMANDS[1].summary));
    for command in COMMANDS {
        assert_eq!(nim.help_in(command.name, Language::En).as_deref(), Some(command.summary), "{}", command.name);
        assert!(nim.help_in(command.name, Language::ZhCn).is_some());
    }
    assert_eq!(registry.rule("n4").map(|(g, id)| (g.name(), id)), Some(("nim", "N-4")));
    assert_eq!(nim.rule_in("N-4", Language::En).as_deref(), Some("Whoever takes the last stone wins."));
    assert!(grammar::untranslated(COMMANDS).is_empty(), "{:?}", grammar::untranslated(COMMANDS));
    for (english, id) in command::PHRASES {
        assert_eq!(locale::text(Language::En, id, &locale::Args::new()), *english, "{id}");
    }
    // The Chinese usage and example come from the game's own phrases.
    assert_eq!(COMMANDS[1].usage_line_in("!", Language::ZhCn), "!取 <数量> <甲|乙|丙>");
    assert_eq!(COMMANDS[1].example_line_in("!", "bob", Language::ZhCn).as_deref(), Some("!取 2 乙"));
}

#[test]
fn chinese_is_said_in_chinese_and_read_in_chinese() {
    let mut t = table(&["alice", "bob"]);
    let actor = p("alice");
    let command = grammar::read_for(t.as_ref(), &actor, "取 2 乙").expect("reads");
    let action = Action {
        actor: &actor,
        command: &command,
        typed: "!取 2 乙",
        private: false,
        now: Timestamp::CONSOLE_EPOCH,
        role: Role::Player,
    };
    let events = t.act(&action, &mut Dice::from_seed(0)).expect("takes");
    let zh = Presentation::default().in_language(Language::ZhCn);
    let said: Vec<String> = NimPlugin.render(&events, &zh).into_iter().map(|a| a.text.plain()).collect();
    assert_eq!(said, ["alice 从乙堆取走 2 颗石子。石子堆：甲 3 · 乙 3 · 丙 7。轮到 bob。"]);
    let refused = NimError::PileShort { pile: Pile::B, left: 1 };
    assert_eq!(news::refusal(&refused).get(Language::ZhCn).plain(), "乙堆只剩 1 颗石子；最多取这么多，例如 `!取 1 乙`。");
}

#[test]
fn the_wiki_export_lists_every_take_and_keeps_names_as_words() {
    let mut t = table(&["alice", "b</nowiki>{{x}}"]);
    say(&mut t, "alice", "take 1 a").expect("takes");
    let wiki = NimPlugin.wiki(&t.snapshot()).expect("a wiki export");
    assert!(wiki.starts_with("<nowiki>alice</nowiki> vs <nowiki>b&lt;/nowiki>{{x}}</nowiki>: piles left [2,5,7]"), "{wiki}");
    assert!(wiki.contains("| 1 || <nowiki>alice</nowiki> || 1 || <nowiki>a</nowiki>"), "{wiki}");
}

/// A random line of play: who speaks (0, 1 or a stranger), and what they try.
fn moves() -> impl Strategy<Value = Vec<(usize, u32, usize)>> {
    proptest::collection::vec((0usize..3, 0u32..6, 0usize..3), 0..80)
}

proptest! {
    /// Whatever is typed, stones are never negative nor created, a refused take changes
    /// nothing, and the game ends exactly when the last stone is taken.
    #[test]
    fn stones_only_ever_go_down_and_the_last_one_ends_the_game(tries in moves()) {
        let mut nim = Nim::new(p("alice"));
        nim.players.push(p("bob"));
        let people = [p("alice"), p("bob"), p("carol")];
        for (who, amount, pile) in tries {
            let before = nim.clone();
            let taken = nim.apply(&people[who], Role::Player, NimCommand::Take { amount, pile: Pile::ALL[pile] });
            match taken {
                Ok(_) => {
                    let gone: u32 = before.piles.iter().sum::<u32>() - nim.piles.iter().sum::<u32>();
                    prop_assert_eq!(gone, amount);
                    prop_assert!((1..=state::MOST).contains(&amount));
                }
                Err(_) => prop_assert_eq!(&nim, &before),
            }
            prop_assert!(nim.piles.iter().zip(state::START).all(|(n, start)| *n <= start));
            prop_assert_eq!(nim.finished, nim.piles == [0, 0, 0]);
        }
    }

    /// Two players who always take what they may end the game within 15 turns.
    #[test]
    fn the_game_always_ends(choices in proptest::collection::vec((1u32..4, 0usize..3), 15)) {
        let mut nim = Nim::new(p("alice"));
        nim.players.push(p("bob"));
        for (amount, pile) in choices {
            let Some(actor) = nim.to_move().cloned() else { break };
            // The chosen pile if it has stones, else the first that does; at most what is left.
            let pile = Pile::ALL.into_iter().cycle().skip(pile).take(3).find(|p| nim.left(*p) > 0).expect("stones");
            let amount = amount.min(nim.left(pile));
            let taken = nim.apply(&actor, Role::Player, NimCommand::Take { amount, pile });
            prop_assert!(taken.is_ok(), "{:?}", taken);
        }
        prop_assert!(nim.finished, "{:?}", nim.piles);
        prop_assert!(nim.winner.is_some());
    }
}

/// The ending the table gives is the one its journaled news gives: the winner first.
#[test]
fn a_finished_game_ends_with_the_winner_first_and_a_stopped_one_with_none() {
    let mut t = table(&["alice"]);
    let mut reader = NimPlugin.ending_reader().expect("a reader");
    let mut read = |events: Vec<Event>| events.iter().find_map(|e| reader.read(&e.record()));
    let actor = p("bob");
    let join = grammar::read_for(t.as_ref(), &actor, "join").expect("reads");
    let action =
        Action { actor: &actor, command: &join, typed: "!join", private: false, now: Timestamp::CONSOLE_EPOCH, role: Role::Player };
    assert_eq!(read(t.act(&action, &mut Dice::from_seed(0)).expect("joins")), None);
    let alice = p("alice");
    let concede = grammar::read_for(t.as_ref(), &alice, "concede").expect("reads");
    let action = Action { actor: &alice, command: &concede, ..action };
    let read_ending = read(t.act(&action, &mut Dice::from_seed(0)).expect("concedes")).expect("an ending");
    let ending = t.ending().expect("an ending");
    assert_eq!(read_ending, ending);
    assert_eq!(ending.winners(), [&p("bob")]);
    assert_eq!(ending.places.iter().map(|p| (p.player.as_str(), p.place)).collect::<Vec<_>>(), [("alice", 2), ("bob", 1)]);
    assert!(ending.conceded);
    assert_eq!(NimPlugin.kind(), crate::ending::TableKind::Challenge { seats: 2 });
    let mut stopped = table(&["alice", "bob"]);
    say_as(&mut stopped, "carol", "stop", Role::GameMaster).expect("stops");
    assert_eq!(stopped.ending(), None);
}
