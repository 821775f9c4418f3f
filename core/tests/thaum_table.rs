//! The Thaum table behind the `GamePlugin`/`Table` traits, as the router sees it: opening,
//! refusals, the history kept for audits, timers (RULES T-2), the `--state-json` snapshot
//! of CONTRACT.md and its round trip through `restore`.

use serde_json::{Value, json};
use spellbridge_core::Language;
use spellbridge_core::games::thaum::{Schedule, ThaumOptions, ThaumPlugin};
use spellbridge_core::grammar::{self, ReadError, read_for};
use spellbridge_core::text::Segment;
use spellbridge_core::time::DAY;
use spellbridge_core::{
    Action, Announcement, Audience, Dice, GamePlugin, PlayerId, Refusal, Role, RoomId, Seat, Table,
    TableSetup, Timestamp,
};

const SUNDAY: Timestamp = Timestamp::CONSOLE_EPOCH;

/// What `events` say (Thaum says the same to every destination).
fn told(events: Vec<spellbridge_core::Event>) -> Vec<Announcement> {
    ThaumPlugin::default().render(&events, &spellbridge_core::Presentation::default())
}

struct Room {
    table: Box<dyn Table>,
    now: Timestamp,
    sequence: u64,
}

impl Room {
    fn open_with(plugin: &ThaumPlugin, creator: &str) -> Room {
        let setup = TableSetup {
            room: RoomId::new("console"),
            seats: vec![Seat { player: PlayerId::new(creator), choice: Some("ignored".into()) }],
            now: SUNDAY,
        };
        let table = plugin.open(&setup).expect("a Thaum table opens");
        Room { table, now: SUNDAY, sequence: 0 }
    }

    fn open(creator: &str) -> Room {
        Room::open_with(&ThaumPlugin::default(), creator)
    }

    fn say_as(&mut self, actor: &str, typed: &str, private: bool) -> Result<Vec<Announcement>, Refusal> {
        self.act(actor, typed, private, Role::Player)
    }

    fn act(
        &mut self,
        actor: &str,
        typed: &str,
        private: bool,
        role: Role,
    ) -> Result<Vec<Announcement>, Refusal> {
        let actor = PlayerId::new(actor);
        let command = typed.trim_start_matches(['!', '.']);
        let mut dice = Dice::for_action(11, self.sequence);
        self.sequence += 1;
        // Read as the daemon reads it: against the game's grammar, refused with its usage.
        let command = &read_for(&*self.table, &actor, command)?;
        let action = Action { actor: &actor, command, typed, private, now: self.now, role };
        self.table.act(&action, &mut dice).map(told)
    }

    fn say(&mut self, actor: &str, typed: &str) -> Result<Vec<Announcement>, Refusal> {
        self.say_as(actor, typed, false)
    }

    fn ok(&mut self, actor: &str, typed: &str) -> String {
        let out = self.say(actor, typed).unwrap_or_else(|e| panic!("`{typed}` refused: {e}"));
        out.iter().map(|a| a.text.plain()).collect::<Vec<_>>().join("\n")
    }

    /// `typed` by `actor` with the daemon's `role`, accepted: what was said.
    fn ok_with(&mut self, role: Role, actor: &str, typed: &str) -> String {
        let out = self.act(actor, typed, false, role).unwrap_or_else(|e| panic!("`{typed}` refused: {e}"));
        out.iter().map(|a| a.text.plain()).collect::<Vec<_>>().join("\n")
    }

    fn refused(&mut self, actor: &str, typed: &str) -> String {
        self.refused_with(Role::Player, actor, typed)
    }

    /// `typed` by `actor` with the daemon's `role`, refused without any change: why.
    fn refused_with(&mut self, role: Role, actor: &str, typed: &str) -> String {
        let before = self.table.snapshot();
        let refusal = self.act(actor, typed, false, role).expect_err("should be refused");
        assert_eq!(self.table.snapshot(), before, "`{typed}` was refused but changed the table");
        match refusal {
            Refusal::UnknownCommand(word) => format!("unknown command {word}"),
            said => said.text(Language::En).unwrap_or_default().plain(),
        }
    }

    /// Fires every timer due by `now`, one boundary at a time, as the router does.
    fn clock(&mut self, seconds: i64) -> Vec<String> {
        self.now = self.now.plus(seconds);
        let mut said = Vec::new();
        while let Some(at) = self.table.next_timer().filter(|at| *at <= self.now) {
            let out = told(self.table.fire_timer(at, &mut Dice::from_seed(0)));
            said.extend(out.iter().map(|a| a.text.plain()));
        }
        said
    }

    fn state(&self) -> Value {
        self.table.snapshot()
    }
}

#[test]
fn the_snapshot_has_the_contract_fields() {
    let mut room = Room::open("alice");
    room.ok("alice", "!gather 1 fire");
    let state = room.state();
    let expected = json!({
        "season": 1, "phase": 1, "loop_instability": 0, "game_masters": ["alice"],
        "players": {"alice": {"mana": 0, "coins": 0,
                              "thaums": {"fire": 1, "water": 0, "earth": 0, "air": 0},
                              "blood_magic_used": false, "tornado_used": false}},
        "history": [{"player": "alice", "command": "!gather 1 fire", "draws": []}]
    });
    for (key, value) in expected.as_object().expect("an object") {
        assert_eq!(&state[key], value, "field {key}");
    }
    assert_eq!(state["phase_started_at"], json!(SUNDAY.0));
    assert_eq!(state["finished"], json!(false));
    assert_eq!(state["options"]["schedule"], json!("cycle13"));
}

#[test]
fn t10_tornado_history_records_the_seed_and_every_draw() {
    // RULES T-10
    let mut room = Room::open("alice");
    room.ok("bob", "!join");
    room.ok("alice", "!gather 1 air");
    room.clock(3 * DAY); // Phase II: alice has 1 Mana again
    let said = room.ok("alice", "!tornado 1 bob");
    let entry = &room.state()["history"][2];
    assert_eq!(entry["command"], json!("!tornado 1 bob"));
    let seed = entry["seed"].as_u64().expect("a seed");
    assert!(said.contains(&format!("seed {seed}")), "{said}");
    let draws = entry["draws"].as_array().expect("draws");
    assert_eq!(draws.len(), 1);
    let draw = draws[0].as_object().expect("a draw");
    assert_eq!(draw.keys().map(String::as_str).collect::<Vec<_>>(), ["k", "player", "thaum"]);
    assert!(["alice", "bob"].contains(&draw["player"].as_str().unwrap_or("")));
    assert!([json!(-1), json!(1)].contains(&draw["k"]));
    // Replay from the seed: same draws.
    let mut dice = Dice::from_seed(seed);
    let thaum = ["fire", "water", "earth", "air"][dice.below(4) as usize];
    let player = ["alice", "bob"][dice.below(2) as usize];
    let k = if dice.below(2) == 0 { -1 } else { 1 };
    assert_eq!(draws[0], json!({"thaum": thaum, "player": player, "k": k}));
}

#[test]
fn the_snapshot_without_its_history_and_the_history_make_the_snapshot() {
    // Issue 16: the store writes the first per action and appends the second's new entries.
    let mut room = Room::open("alice");
    room.ok("bob", "!join");
    room.ok("alice", "!gather 1 air");
    room.clock(3 * DAY);
    room.ok("alice", "!tornado 1 bob");
    let table = &room.table;
    assert_eq!(table.history_len(), Some(3));
    let mut rebuilt: Value =
        serde_json::from_str(&table.snapshot_text_without_history()).expect("the snapshot without history");
    assert!(rebuilt.get("history").is_none(), "{rebuilt}");
    let history: Vec<Value> =
        table.history_since(0).iter().map(|entry| serde_json::from_str(entry).expect("an entry")).collect();
    assert_eq!(table.history_since(2).len(), 1, "only what is new");
    assert!(table.history_since(9).is_empty());
    rebuilt["history"] = Value::Array(history);
    assert_eq!(rebuilt, table.snapshot());
}

#[test]
fn the_opening_names_the_game_master_and_how_to_join() {
    let room = Room::open("alice");
    let opening = told(room.table.opening());
    assert_eq!(opening.len(), 1);
    let text = opening[0].text.plain();
    assert!(
        text.contains("alice") && text.contains("`!join`") && text.contains("Wednesday 2026-01-07"),
        "{text}"
    );
    assert_eq!(room.table.players(), vec![PlayerId::new("alice")]);
    assert_eq!(room.table.game(), "thaum");
}

#[test]
fn t2_a_week_of_clock_fires_three_boundaries_one_by_one() {
    // RULES T-2: from Sunday 00:00, +7d passes Wednesday, Friday and Sunday.
    let mut room = Room::open("alice");
    assert_eq!(room.table.next_timer(), Some(SUNDAY.plus(3 * DAY)));
    let said = room.clock(7 * DAY);
    assert_eq!(said.len(), 3, "{said:?}");
    assert!(
        said[0].contains("Phase I of season 1 ends") && said[0].contains("Phase II begins"),
        "{}",
        said[0]
    );
    assert!(said[2].contains("Phase IV begins"), "{}", said[2]);
    let state = room.state();
    assert_eq!((state["phase"].clone(), state["loop_instability"].clone()), (json!(4), json!(3)));
    assert_eq!(state["players"]["alice"]["mana"], json!(4));
    assert_eq!(state["phase_started_at"], json!(SUNDAY.plus(7 * DAY).0));
    assert_eq!(room.table.next_timer(), Some(SUNDAY.plus(10 * DAY)));
}

#[test]
fn t2_phase_next_moves_the_next_boundary_and_is_in_the_history() {
    // RULES T-2
    let mut room = Room::open("alice");
    room.now = SUNDAY.plus(DAY + 5);
    room.ok("alice", "!phase next");
    assert_eq!(room.state()["phase_started_at"], json!(SUNDAY.plus(DAY + 5).0));
    assert_eq!(room.table.next_timer(), Some(SUNDAY.plus(3 * DAY)));
    assert_eq!(room.state()["history"][0]["command"], json!("!phase next"));
    // A timer fired early does nothing.
    assert!(room.table.fire_timer(SUNDAY.plus(2 * DAY), &mut Dice::from_seed(0)).is_empty());
}

#[test]
fn t2_a_manual_schedule_has_no_timer() {
    // RULES T-2
    let plugin = ThaumPlugin::new(ThaumOptions { schedule: Schedule::Manual, ..Default::default() });
    let mut room = Room::open_with(&plugin, "alice");
    assert_eq!(room.table.next_timer(), None);
    assert!(room.clock(30 * DAY).is_empty());
}

#[test]
fn t3_nine_phases_of_clock_close_the_season() {
    // RULES T-3: three weeks of Cycle 13 is Phases I–IX; the ninth boundary ends the loop.
    let mut room = Room::open("alice");
    room.ok("bob", "!join");
    room.ok("alice", "!coins bob 12");
    assert_eq!(room.table.dice_epoch(), 1);
    let said = room.clock(21 * DAY).join("\n");
    // RULES T-10: a new season is a new dice epoch, so the router rekeys.
    assert_eq!(room.table.dice_epoch(), 2);
    assert!(said.contains("season 1 closes. Final standings: 1. bob 12 coins, 2. alice 0 coins"), "{said}");
    let state = room.state();
    assert_eq!((state["season"].clone(), state["phase"].clone()), (json!(2), json!(1)));
    assert_eq!(state["seasons"][0]["standings"][0], json!({"player": "bob", "coins": 12}));
    assert_eq!(state["players"]["bob"]["coins"], json!(0));
    assert_eq!(state["players"]["bob"]["mana"], json!(1));
}

#[test]
fn snapshots_round_trip_through_restore() {
    let mut room = Room::open("alice");
    room.ok("bob", "!join");
    room.ok("alice", "!gather 1 air");
    room.clock(3 * DAY);
    room.ok("alice", "!tornado 1 bob");
    room.ok("alice", "!instability +2");
    room.ok("alice", "!coins bob +3");
    let snapshot = room.state();
    let restored = ThaumPlugin::default().restore(&snapshot).expect("restores");
    assert_eq!(restored.snapshot(), snapshot);
    assert_eq!(restored.next_timer(), room.table.next_timer());
    // A restored table plays on exactly as the original.
    let mut copy = Room { table: restored, now: room.now, sequence: room.sequence };
    assert_eq!(copy.ok("bob", "!gather 1 fire"), room.ok("bob", "!gather 1 fire"));
    assert_eq!(copy.state(), room.state());
}

#[test]
fn restore_refuses_states_outside_the_rules() {
    let room = Room::open("alice");
    let plugin = ThaumPlugin::default();
    let mut bad = room.state();
    bad["players"]["alice"]["thaums"]["fire"] = json!(11);
    assert!(plugin.restore(&bad).is_err());
    let mut bad = room.state();
    bad["players"]["alice"]["mana"] = json!(-1);
    assert!(plugin.restore(&bad).is_err());
    assert!(plugin.restore(&json!({"season": 1})).is_err());
    let mut no_options = room.state();
    no_options.as_object_mut().expect("an object").remove("options");
    assert!(plugin.restore(&no_options).is_ok());
}

#[test]
fn stop_finishes_the_table_with_final_standings() {
    let mut room = Room::open("alice");
    room.ok("bob", "!join");
    assert!(room.refused("bob", "!stop").starts_with("Only a game master can use `!stop`"));
    let said = room.ok("alice", "!stop");
    assert!(said.contains("Final standings of season 1") && said.contains("`!new thaum`"), "{said}");
    assert!(room.table.is_finished());
    assert_eq!(room.table.next_timer(), None);
    assert!(room.refused("bob", "!gather 0 fire").contains("stopped"));
    assert_eq!(room.table.players(), vec![PlayerId::new("alice"), PlayerId::new("bob")]);
}

#[test]
fn unknown_words_go_back_to_the_router_and_other_errors_say_what_to_type() {
    let mut room = Room::open("alice");
    assert_eq!(room.say("alice", "!frobnicate 3"), Err(Refusal::UnknownCommand("frobnicate".into())));
    assert_eq!(
        room.refused("alice", "!gather 3"),
        "`!gather` needs a Mana amount and a Thaum (the Thaum is missing): type \
         `!gather <mana> <fire|water|earth|air>`, e.g. `!gather 2 fire`."
    );
    assert!(room.refused("alice", "!gather 3 fier").contains("did you mean `fire`?"));
    assert!(room.refused("alice", "!gather 5 fire").starts_with("You hold 1 Mana"));
    assert!(room.refused("alice", "!join now").contains("`now` is left over"));
}

#[test]
fn parse_refusals_take_the_prefix_the_daemon_renders_them_with() {
    let room = Room::open("alice");
    let Err(ReadError::Bad(error)) = grammar::read(room.table.commands(), "gather") else {
        panic!("`gather` alone does not read")
    };
    let text = error.render(".", None).plain();
    assert!(text.contains("type `.gather <mana>") && !text.contains('!'), "{text}");
}

#[test]
fn history_keeps_accepted_actions_only() {
    let mut room = Room::open("alice");
    room.refused("alice", "!gather 9 fire");
    room.ok("alice", "!status");
    room.ok("bob", "!join");
    let history = room.state()["history"].clone();
    assert_eq!(history, json!([{"player": "bob", "command": "!join", "draws": []}]));
}

#[test]
fn status_privately_answers_privately_and_actions_stay_public() {
    let mut room = Room::open("alice");
    let out = room.say_as("alice", "!status", true).expect("answers");
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].to, Audience::Player(PlayerId::new("alice")));
    let refusal = room.say_as("alice", "!gather 1 fire", true).expect_err("public only");
    assert!(refusal.to_string().contains("game room"), "{refusal}");
    let out = room.say("alice", "!status").expect("answers");
    assert_eq!(out[0].to, Audience::Table);
}

#[test]
fn the_table_status_shows_the_strength_matrix_and_colours_thaums() {
    let mut room = Room::open("alice");
    let out = room.say("zed", "!status").expect("answers");
    let text = out[0].text.plain();
    assert!(text.contains("Fire [0 -1 1 2]") && text.contains("Water defeats Fire"), "{text}");
    assert!(
        out[0].text.segments().iter().any(|s| matches!(s, Segment::Coloured { text, .. } if text == "Air"))
    );
}

#[test]
fn one_action_is_one_message() {
    let mut room = Room::open("alice");
    let out = room.say("alice", "!phase next").expect("accepted");
    assert_eq!(out.len(), 1);
    let text = out[0].text.plain();
    assert!(text.starts_with("alice ends the phase. Phase I of season 1 ends"), "{text}");
}

#[test]
fn refusal_examples_reuse_what_was_typed_and_never_name_the_actor() {
    let mut room = Room::open("alice");
    room.ok("bob", "!join");
    room.ok("alice", "!add carol");
    let text = room.refused("bob", "!tornado 2 carol");
    assert!(text.contains("spend at most 1, e.g. `!tornado 1 carol`."), "{text}");
    let text = room.refused("bob", "!summon");
    assert!(text.contains("e.g. `!summon 0 carol`."), "{text}");
    let text = room.refused("alice", "!summon 1");
    assert!(text.contains("e.g. `!summon 0 bob`."), "{text}");
    // `!add` names someone who is not at the table yet.
    let text = room.refused("alice", "!add");
    assert!(text.contains("e.g. `!add dave`."), "{text}");
}

#[test]
fn instability_changes_say_whether_they_set_raise_or_lower_it() {
    let mut room = Room::open("alice");
    assert!(room.ok("alice", "!instability 5").starts_with("alice sets Loop Instability 0 → 5 ("));
    let lowered = room.ok("alice", "!instability -2");
    assert!(lowered.starts_with("alice lowers Loop Instability from 5 to 3 ("), "{lowered}");
    let raised = room.ok("alice", "!instability +1");
    assert!(raised.starts_with("alice raises Loop Instability from 3 to 4 ("), "{raised}");
    let floored = room.ok("alice", "!instability -9");
    assert!(floored.starts_with("alice lowers Loop Instability from 4 to 0, as it stops at 0"), "{floored}");
}

#[test]
fn tornado_moves_show_k_times_the_air_read() {
    use spellbridge_core::games::thaum::spells::{Side, TornadoRoll};
    use spellbridge_core::games::thaum::{Thaum, ThaumEvent, Thaums, render};
    let roll = |k: i8, air: i8, before: i8, after: i8| TornadoRoll {
        thaum: Thaum::Fire,
        side: Side::Target,
        k,
        air,
        before,
        after,
    };
    let event = ThaumEvent::Tornado {
        caster: PlayerId::new("bob"),
        target: PlayerId::new("carol"),
        mana_spent: 3,
        mana_left: 0,
        seed: Some(1),
        rolls: vec![roll(-1, 0, 2, 2), roll(1, -3, 2, -1), roll(-1, -2, -1, 1)],
        caster_after: Thaums::ZERO,
        target_after: Thaums::ZERO,
    };
    let text = render::event(&event, "!").plain();
    assert!(
        text.contains("carol's Fire ±0 (2 → 2); carol's Fire -3 (2 → -1); carol's Fire +2 (-1 → 1)"),
        "{text}"
    );
}

#[test]
fn a_game_master_of_every_table_may_use_every_game_master_command() {
    let mut room = Room::open("alice");
    room.ok("bob", "!join");
    // zed masters no table here, and need not even play, but the daemon made him a game
    // master of every table (config or bot admin).
    let said = room.ok_with(Role::GameMaster, "zed", "!coins bob +5");
    assert!(said.starts_with("zed changes bob's coins: 0 → 5"), "{said}");
    let said = room.ok_with(Role::GameMaster, "zed", "!phase next");
    assert!(said.starts_with("zed ends the phase. Phase I of season 1 ends"), "{said}");
    room.ok_with(Role::GameMaster, "zed", "!instability +1");
    room.ok_with(Role::GameMaster, "zed", "!add carol");
    room.ok_with(Role::GameMaster, "zed", "!gm add bob");
    let state = room.state();
    assert_eq!(state["players"]["bob"]["coins"], json!(5));
    assert_eq!(state["game_masters"], json!(["alice", "bob"]), "the standing is not written into the table");
    let history: Vec<&str> =
        state["history"].as_array().expect("a list").iter().filter_map(|h| h["command"].as_str()).collect();
    assert_eq!(history[..3], ["!join", "!coins bob +5", "!phase next"]);
    room.ok_with(Role::GameMaster, "zed", "!stop");
    assert!(room.table.is_finished());
}

#[test]
fn a_room_operator_may_stop_the_table_but_nothing_else() {
    let mut room = Room::open("alice");
    room.ok("bob", "!join");
    for typed in ["!coins bob +5", "!phase next", "!instability +1", "!add carol", "!gm add bob"] {
        let text = room.refused_with(Role::Operator, "bob", typed);
        assert!(text.contains("the game masters here are alice."), "{typed}: {text}");
    }
    let said = room.ok_with(Role::Operator, "oscar", "!stop");
    assert!(said.starts_with("oscar stops the Thaum table. Final standings of season 1"), "{said}");
    assert!(room.table.is_finished());
    assert_eq!(room.state()["seasons"][0]["ended"], json!("stopped"));
}

#[test]
fn a_player_is_refused_game_master_commands_naming_the_game_masters() {
    let mut room = Room::open("alice");
    room.ok("bob", "!join");
    for typed in ["!coins bob +5", "!phase next", "!stop", "!gm add bob", "!gm remove alice"] {
        let verb = typed.split_whitespace().next().unwrap_or_default();
        assert_eq!(
            room.refused("bob", typed),
            format!("Only a game master can use `{verb}`; the game masters here are alice."),
            "{typed}"
        );
    }
    assert!(!room.table.is_finished());
}

#[test]
fn gm_add_and_remove_change_the_game_masters() {
    let mut room = Room::open("alice");
    room.ok("bob", "!join");
    room.ok("carol", "!join");
    assert_eq!(
        room.ok("alice", "!gm add Bob"),
        "alice makes bob a game master of this table; the game masters are now alice and bob."
    );
    // bob may now use the game-master commands.
    room.ok("bob", "!coins carol +2");
    room.ok("bob", "!gm add carol");
    assert_eq!(room.state()["game_masters"], json!(["alice", "bob", "carol"]));
    assert_eq!(
        room.ok("carol", "!gm remove alice"),
        "carol removes alice as a game master of this table; the game masters are now bob and carol."
    );
    assert_eq!(
        room.ok("bob", "!gm remove bob"),
        "bob steps down as a game master of this table; the game masters are now carol."
    );
    assert_eq!(room.state()["game_masters"], json!(["carol"]));
    assert!(room.refused("alice", "!coins carol +1").contains("the game masters here are carol."));
    // Both are actions: in the history, and replayed like every other.
    let history: Vec<Value> = room.state()["history"].as_array().expect("a list").clone();
    let commands: Vec<&str> = history.iter().filter_map(|h| h["command"].as_str()).collect();
    assert_eq!(
        commands,
        [
            "!join",
            "!join",
            "!gm add Bob",
            "!coins carol +2",
            "!gm add carol",
            "!gm remove alice",
            "!gm remove bob"
        ]
    );
    let restored = ThaumPlugin::default().restore(&room.state()).expect("restores");
    assert_eq!(restored.snapshot(), room.state());
}

#[test]
fn gm_list_is_a_question_for_anyone() {
    let mut room = Room::open("alice");
    room.ok("bob", "!join");
    room.ok("alice", "!gm add bob");
    let is_query =
        |line: &str| read_for(&*room.table, &PlayerId::new("zed"), line).expect("reads").is_query();
    assert!(is_query("gm") && is_query("gm list") && is_query("GM LIST"));
    assert!(!is_query("gm add bob") && !is_query("gm remove bob"));
    let before = room.state();
    for typed in ["!gm", "!gm list"] {
        let said = room.ok("zed", typed);
        assert!(said.starts_with("The game masters here are alice and bob."), "{said}");
        assert!(said.contains("`!gm add <player>`"), "{said}");
    }
    assert_eq!(room.state(), before, "a question changes nothing, not even the history");
    // Privately it is answered privately, and it still answers after the table stopped.
    room.ok("alice", "!stop");
    let out = room.say_as("zed", "!gm list", true).expect("answers");
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].to, Audience::Player(PlayerId::new("zed")));
}

#[test]
fn gm_refusals_say_what_to_type_and_change_nothing() {
    let mut room = Room::open("alice");
    room.ok("bob", "!join");
    assert_eq!(
        room.refused("alice", "!gm add carol"),
        "`carol` is not at this table, and only a player at the table can be a game master: \
         seat them first with `!add carol`, then type `!gm add carol`."
    );
    assert!(room.refused("alice", "!gm add bbo").contains("(did you mean `bob`?)"));
    assert_eq!(
        room.refused("alice", "!gm add ALICE"),
        "The game masters here already include alice (they are alice)."
    );
    // The last game master stays.
    let last = "A Thaum table always keeps a game master, and alice is the only one here: make another \
                player a game master first (`!gm add <player>`), then remove alice.";
    assert_eq!(room.refused("alice", "!gm remove alice"), last);
    assert_eq!(room.refused_with(Role::GameMaster, "zed", "!gm remove alice"), last);
    assert_eq!(
        room.refused("alice", "!gm remove bob"),
        "`bob` is not a game master here; the game masters are alice: type `!gm remove <player>` \
         with one of those names."
    );
    // What could not be read says what to type.
    assert_eq!(
        room.refused("alice", "!gm promote bob"),
        "`!gm` takes `add <player>`, `remove <player>` or `list`, not `promote`: \
         type `!gm [list | add <player> | remove <player>]`, e.g. `!gm add bob`."
    );
    let text = room.refused("alice", "!gm add");
    assert!(text.contains("(the player is missing)") && text.ends_with("e.g. `!gm add bob`."), "{text}");
    assert!(room.refused("alice", "!gm list now").contains("`now` is left over"));
    // The player named last takes the rest of the line (issue 31: names with spaces), and
    // nobody at the table is called `bob carol`.
    let text = room.refused("alice", "!gm add bob carol");
    assert!(text.contains("bob carol"), "{text}");
    // An action, so not privately.
    let refusal = room.say_as("alice", "!gm add bob", true).expect_err("public only");
    assert!(refusal.to_string().contains("game room"), "{refusal}");
}
