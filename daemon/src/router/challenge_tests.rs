//! A game the daemon has never heard of is taken by challenge with no daemon change: a
//! made-up game ("marbles") brings its challenge command (`!marbles <player> [colour]`,
//! `!弹珠`) and a lobby question (`!colours`), and the lobby reads, explains, journals
//! and opens it as it does the Duel, told in its own name and accept usage (never the
//! Duel's words), while the Duel's challenges read word for word as they did, in both
//! languages; `!new` alone names it among the ways to start. And a challenge journaled
//! before challenges named their game is read as the Duel's.

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
    // `!new` alone names every game's way to start, its challenge among them.
    let which = say(&mut router, "alice", "!new");
    assert_eq!(
        which,
        "alice: `!new` needs a game: start one with `!new thaum`, `!duel <player>`, `!new nim` or \
         `!marbles <player>`."
    );
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

/// A router with the Duel and marbles whose rooms are told in `language`; on `libera`
/// (where a name must be someone heard) as well as the console.
fn router_in(language: Language) -> Router {
    let options = RouterConfig {
        languages: crate::config::LanguageSettings::all(language),
        scopes: [(NetworkId::new("libera"), crate::identity::Scope::Network)].into(),
        ..RouterConfig::default()
    };
    Router::new(Registry::standard().register(Marbles), options)
}

/// Everything a challenge to `game` (its command as typed in the router's language, e.g.
/// `marbles`, `弹珠`) is told with, in order: challenged privately, to nobody heard (on
/// `libera`, by carol), to
/// oneself, plainly, then declined; with a choice, then expired; `!accept` and
/// `!withdraw` with no challenge (which name every challenge game).
fn every_challenge_sentence(language: Language, game: &str, choice: &str) -> Vec<String> {
    let (accept, withdraw) = match language {
        Language::En => ("!accept", "!withdraw"),
        Language::ZhCn => ("!接受", "!撤回"),
    };
    let mut router = router_in(language);
    let mut told = Vec::new();
    let plain = |out: Vec<crate::router::Outbound>| {
        out.iter().map(|o| o.message.text.plain()).collect::<Vec<_>>().join("\n")
    };
    let text = format!("!{game} bob");
    let mut private =
        Inbound::new(NetworkId::new("console"), RoomId::new("console"), PlayerId::new("alice"), text);
    private.private = true;
    told.push(plain(router.handle(&private, T)));
    let text = format!("!{game} zed");
    let nobody = Inbound::new(NetworkId::new("libera"), RoomId::new("#magic"), PlayerId::new("carol"), text);
    told.push(plain(router.handle(&nobody, T)));
    say(&mut router, "bob", "hello");
    told.push(say(&mut router, "alice", &format!("!{game} alice")));
    told.push(say(&mut router, "alice", &format!("!{game} bob")));
    told.push(say(
        &mut router,
        "bob",
        &format!("!{}", if language == Language::En { "decline" } else { "拒绝" }),
    ));
    told.push(say(&mut router, "alice", &format!("!{game} bob {choice}")));
    told.push(plain(router.tick(T.plus(spellbridge_core::options::CHALLENGE_LIFETIME_SECS))));
    told.push(say(&mut router, "bob", accept));
    told.push(say(&mut router, "bob", withdraw));
    told
}

#[test]
fn a_challenge_game_that_is_not_the_duel_is_told_in_its_own_name_and_accept_usage() {
    let told = every_challenge_sentence(Language::En, "marbles", "Red");
    assert_eq!(
        told,
        [
            "Challenge in the room where you want to play: `!marbles <player> [colour]` there.",
            "carol: Nobody here is called `zed`. Challenge someone in this room (or a room bridged with it) \
             by nick, display name or Matrix id: `!marbles <player> [colour]`.",
            "alice: You cannot challenge yourself: type `!marbles <player>` with another player's name.",
            "alice challenges bob to a game of marbles! bob: type `!accept [colour]` or `!decline`.",
            "bob declines the game of marbles with alice.",
            "alice challenges bob to a game of marbles, choosing Red! bob: type `!accept [colour]` or `!decline`.",
            "The challenge from alice to bob expired unanswered; `!marbles <player>` makes a new one.",
            // No challenge, so no game in question: every challenge game's.
            "bob: Nobody has challenged you in this room. Challenge someone with \
             `!duel <player> [wizard]` or `!marbles <player> [colour]`.",
            "bob: There is no challenge to withdraw in this room; `!duel <player>` or `!marbles <player>` \
             makes one.",
        ]
    );
    let chinese = every_challenge_sentence(Language::ZhCn, "弹珠", "Red");
    assert_eq!(
        chinese,
        [
            "请在你想玩的房间里发起挑战：在那里输入 `!弹珠 <玩家> [colour]`。",
            "carol: 这里没有叫 `zed` 的人。请按昵称、显示名或 Matrix 用户标识挑战本房间（或与之桥接的房间）里的人：\
             `!弹珠 <玩家> [colour]`。",
            "alice: 你不能挑战自己：输入 `!弹珠 <玩家>`，写上另一名玩家的名字。",
            "alice 向 bob 发起marbles挑战！bob：输入 `!接受 [colour]` 或 `!拒绝`。",
            "bob 拒绝了 alice 的marbles挑战。",
            "alice 选了 Red，向 bob 发起marbles挑战！bob：输入 `!接受 [colour]` 或 `!拒绝`。",
            "alice 对 bob 的挑战无人回应，已经过期；`!弹珠 <玩家>` 可以发起新的挑战。",
            "bob: 本房间里没有人向你发起挑战。用 `!决斗 <玩家> [魔法师]` 或 `!弹珠 <玩家> [colour]` 挑战别人。",
            "bob: 本房间里没有可以撤回的挑战；`!决斗 <玩家>` 或 `!弹珠 <玩家>` 可以发起一个。",
        ]
    );
    // Nothing of the Duel's in what is the marbles' alone (the last two name every game).
    for text in told.iter().chain(&chinese).filter(|t| !t.contains("!duel") && !t.contains("!决斗")) {
        for duel in ["Duel", "duel", "wizard", "决斗", "魔法师"] {
            assert!(!text.contains(duel), "{duel} in {text}");
        }
    }
}

#[test]
fn the_duels_challenges_are_told_word_for_word_as_before_in_both_languages() {
    let told = every_challenge_sentence(Language::En, "duel", "Pyromancer");
    assert_eq!(
        told,
        [
            "Challenge in the room where you want to play: `!duel <player> [wizard]` there.",
            "carol: Nobody here is called `zed`. Challenge someone in this room (or a room bridged with it) \
             by nick, display name or Matrix id: `!duel <player> [wizard]`.",
            "alice: You cannot duel yourself: type `!duel <player>` with another player's name.",
            "alice challenges bob to a Duel! bob: type `!accept [wizard]` or `!decline` (`!wizards` lists the wizards).",
            "bob declines the Duel with alice.",
            "alice challenges bob to a Duel as Pyromancer! bob: type `!accept [wizard]` or `!decline` \
             (`!wizards` lists the wizards).",
            "The challenge from alice to bob expired unanswered; `!duel <player>` makes a new one.",
            "bob: Nobody has challenged you in this room. Challenge someone with `!duel <player> [wizard]` or \
             `!marbles <player> [colour]`.",
            "bob: There is no challenge to withdraw in this room; `!duel <player>` or `!marbles <player>` \
             makes one.",
        ]
    );
    let chinese = every_challenge_sentence(Language::ZhCn, "决斗", "火法师");
    assert_eq!(
        chinese,
        [
            "请在你想玩的房间里发起挑战：在那里输入 `!决斗 <玩家> [魔法师]`。",
            "carol: 这里没有叫 `zed` 的人。请按昵称、显示名或 Matrix 用户标识挑战本房间（或与之桥接的房间）里的人：\
             `!决斗 <玩家> [魔法师]`。",
            "alice: 你不能和自己决斗：输入 `!决斗 <玩家>`，写上另一名玩家的名字。",
            "alice 向 bob 发起决斗！bob：输入 `!接受 [魔法师]` 或 `!拒绝`（`!魔法师` 列出所有魔法师）。",
            "bob 拒绝了与 alice 的决斗。",
            "alice 以 火法师 向 bob 发起决斗！bob：输入 `!接受 [魔法师]` 或 `!拒绝`（`!魔法师` 列出所有魔法师）。",
            "alice 对 bob 的挑战无人回应，已经过期；`!决斗 <玩家>` 可以发起新的挑战。",
            "bob: 本房间里没有人向你发起挑战。用 `!决斗 <玩家> [魔法师]` 或 `!弹珠 <玩家> [colour]` 挑战别人。",
            "bob: 本房间里没有可以撤回的挑战；`!决斗 <玩家>` 或 `!弹珠 <玩家>` 可以发起一个。",
        ]
    );
}

#[test]
fn a_choice_kept_as_typed_is_shown_escaped_in_the_challenge() {
    let mut router = router_in(Language::En);
    say(&mut router, "bob", "hello");
    let challenged = say(&mut router, "alice", "!marbles bob \u{202e}deR");
    assert!(challenged.contains("choosing \\u{202e}deR!"), "{challenged}");
    assert!(!challenged.contains('\u{202e}'), "{challenged}");
}
