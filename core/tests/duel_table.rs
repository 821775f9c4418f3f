//! The Duel through the `Table` API, as the router drives it: a scripted game whose
//! every announcement is checked for privacy (queues never reach the table) and whose
//! snapshot survives a restore at every point.

use spellbridge_core::games::duel::{DuelOptions, DuelPlugin};
use spellbridge_core::grammar::read_for;
use spellbridge_core::{
    Action, Announcement, Audience, Dice, Event, GamePlugin, PlayerId, Presentation, Role, Seat, TableSetup,
    Timestamp,
};

const T0: Timestamp = Timestamp::CONSOLE_EPOCH;

/// What `events` say in the full form (Matrix, the console).
fn full(events: Vec<Event>) -> Vec<Announcement> {
    spellbridge_core::games::duel::render::events(&events, &Presentation::default())
}

fn line(a: &Announcement) -> String {
    match &a.to {
        Audience::Table => format!("[room] {}", a.text.plain()),
        Audience::Player(p) => format!("[dm:{p}] {}", a.text.plain()),
    }
}

#[test]
fn a_scripted_duel_plays_to_the_end() {
    let plugin = DuelPlugin::new(DuelOptions::default());
    let setup = TableSetup {
        room: "#duel".into(),
        seats: vec![
            Seat { player: PlayerId::new("alice"), choice: Some("pyromancer".into()) },
            Seat { player: PlayerId::new("bob"), choice: None },
        ],
        now: T0,
    };
    let mut table = plugin.open(&setup).expect("opens");
    let mut transcript: Vec<String> = full(table.opening()).iter().map(line).collect();
    let script: &[(&str, bool, &str)] = &[
        ("alice", true, "cast surge fire fire end"),
        ("bob", false, "status"),
        ("bob", true, "cast counter water"),
        ("bob", true, "cast thunder end"),
        ("alice", true, "cast focus wind water void thunder"),
        ("bob", true, "cast overspeed fire wind water end"),
        ("alice", true, "cast end"),
        ("alice", true, "status"),
        ("bob", false, "concede"),
    ];
    for (sequence, (who, private, command)) in script.iter().enumerate() {
        let who = PlayerId::new(*who);
        let typed = format!("!{command}");
        let command = &read_for(&*table, &who, command).expect("reads");
        let action = Action {
            actor: &who,
            command,
            typed: &typed,
            private: *private,
            now: T0.plus(60),
            role: Role::Player,
        };
        let mut dice = Dice::for_action(7, sequence as u64);
        transcript.push(format!("> {who}{}: {typed}", if *private { " (dm)" } else { "" }));
        match table.act(&action, &mut dice) {
            Ok(events) => transcript.extend(full(events).iter().map(line)),
            Err(refusal) => transcript.push(format!("refused: {refusal}")),
        }
        let restored = plugin.restore(&table.snapshot()).expect("restores");
        assert_eq!(restored.snapshot(), table.snapshot());
    }
    let text = transcript.join("\n");
    println!("{text}");
    assert!(table.is_finished());
    assert!(text.contains("alice") && text.contains("wins"));
    // Tokens queued but not yet revealed never reach the room before their step.
    let first_status = transcript.iter().position(|l| l.starts_with("> bob: !status")).expect("status");
    assert!(
        !transcript[first_status + 1..first_status + 4]
            .iter()
            .any(|l| l.starts_with("[room]") && l.contains("Fire"))
    );
}

#[test]
fn timeouts_seals_voids_and_favours_are_announced() {
    let plugin = DuelPlugin::new(DuelOptions { concentration: vec![1], ..DuelOptions::default() });
    let setup = TableSetup {
        room: "#duel".into(),
        seats: vec![
            Seat { player: PlayerId::new("alice"), choice: Some("Pyromancer".into()) },
            Seat { player: PlayerId::new("bob"), choice: Some("geomancer".into()) },
        ],
        now: T0,
    };
    let mut table = plugin.open(&setup).expect("opens");
    let mut transcript = Vec::new();
    let act = |table: &mut Box<dyn spellbridge_core::Table>,
               who: &str,
               command: &str,
               transcript: &mut Vec<String>| {
        let who = PlayerId::new(who);
        let typed = format!("!{command}");
        let command = &read_for(&**table, &who, command).expect("reads");
        let action =
            Action { actor: &who, command, typed: &typed, private: true, now: T0, role: Role::Player };
        match table.act(&action, &mut Dice::from_seed(11)) {
            Ok(out) => transcript.extend(full(out).iter().map(line)),
            Err(refusal) => transcript.push(format!("refused: {refusal}")),
        }
    };
    act(&mut table, "alice", "cast surge fire fire void end", &mut transcript);
    act(&mut table, "bob", "cast focus earth earth", &mut transcript);
    // bob goes quiet: step 3 times out (End for bob, after alice's Void).
    let at = table.next_timer().expect("a step waits");
    transcript.extend(full(table.fire_timer(at, &mut Dice::from_seed(12))).iter().map(line));
    act(&mut table, "bob", "cast surge thunder", &mut transcript);
    let text = transcript.join("\n");
    println!("{text}");
    assert!(text.contains("timed out, RULES D-9"), "{text}");
    assert!(text.contains("favour 3"), "{text}");
    assert!(text.contains("Seals next round"), "{text}");
    assert!(text.contains("refused: ") && text.contains("sealed"), "{text}");
}

#[test]
fn a_failed_full_counter_says_why_and_the_last_round_lays_no_seals() {
    use spellbridge_core::games::duel::{command, news, render};
    let plugin = DuelPlugin::new(DuelOptions { concentration: vec![1], ..DuelOptions::default() });
    let setup = TableSetup {
        room: "#duel".into(),
        seats: vec![
            Seat { player: PlayerId::new("alice"), choice: None },
            Seat { player: PlayerId::new("bob"), choice: None },
        ],
        now: T0,
    };
    let mut duel = plugin.open_duel(&setup).expect("opens");
    let mut said = Vec::new();
    for (sequence, (who, typed)) in [
        ("alice", "cast surge fire fire end"),
        ("bob", "cast counter water end"),
        ("alice", "cast surge fire wind water thunder earth end"),
        ("bob", "cast focus earth earth end"),
    ]
    .into_iter()
    .enumerate()
    {
        let command = command::parse(typed).expect("parses");
        let mut dice = Dice::for_action(3, sequence as u64);
        let events =
            duel.apply(&PlayerId::new(who), Role::Player, &command, T0, &mut dice).expect("accepted");
        said.extend(full(news::told(&duel, &events, true)).iter().map(line));
    }
    let text = said.join("\n");
    println!("{text}");
    // RULES D-7: bob's level 1 is below alice's 2, and the room is told so.
    assert!(
        text.contains(
            "bob: Full Counter 💧Water → Full Counter fails: level 1 is below alice's 2 (RULES D-7); level 1"
        ),
        "{text}"
    );
    // Round 1 seals bob's next spell; round 2 ends the duel, so it announces no seals.
    assert!(text.contains("Seals next round (RULES D-10): bob's first 1"), "{text}");
    let last = said.iter().rev().find(|l| l.contains("Track moves")).expect("a track line");
    assert!(last.ends_with("toward alice."), "{last}");
    assert!(duel.finish().is_some());
    let status: Vec<String> = render::status(&duel, None).iter().map(|l| l.plain()).collect();
    assert!(status.iter().all(|l| !l.contains("Seals") && !l.ends_with(' ')), "{status:#?}");
}

/// An Apprentice duel, alice vs bob, through the `Table` API, one round played.
fn duel_in_progress() -> Box<dyn spellbridge_core::Table> {
    let plugin = DuelPlugin::new(DuelOptions::default());
    let setup = TableSetup {
        room: "#duel".into(),
        seats: vec![
            Seat { player: PlayerId::new("alice"), choice: None },
            Seat { player: PlayerId::new("bob"), choice: None },
        ],
        now: T0,
    };
    let mut table = plugin.open(&setup).expect("opens");
    for (who, command) in [("alice", "cast surge fire wind end"), ("bob", "cast surge end")] {
        act(&mut table, who, command, true, Role::Player).expect("cast");
    }
    table
}

fn act(
    table: &mut Box<dyn spellbridge_core::Table>,
    who: &str,
    command: &str,
    private: bool,
    role: Role,
) -> Result<Vec<Announcement>, spellbridge_core::Refusal> {
    let who = PlayerId::new(who);
    let typed = format!("!{command}");
    let command = &read_for(&**table, &who, command)?;
    let action = Action { actor: &who, command, typed: &typed, private, now: T0.plus(60), role };
    table.act(&action, &mut Dice::from_seed(5)).map(full)
}

#[test]
fn an_operator_stops_the_duel_with_no_winner() {
    for role in [Role::Operator, Role::GameMaster] {
        let mut table = duel_in_progress();
        let track = table.snapshot()["track"].clone();
        let said: Vec<String> =
            act(&mut table, "oscar", "stop", false, role).expect("stopped").iter().map(line).collect();
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].starts_with("[room] 🛑 oscar stopped the Duel; no winner"), "{said:?}");
        assert!(table.is_finished());
        assert_eq!(table.next_timer(), None);
        let snapshot = table.snapshot();
        assert_eq!(snapshot["finished"], true);
        assert_eq!(snapshot["winner"], serde_json::Value::Null);
        assert_eq!(snapshot["finish_reason"], "stopped");
        assert_eq!(snapshot["track"], track, "the track stays as it was");
        let restored = DuelPlugin::default().restore(&snapshot).expect("restores");
        assert!(restored.is_finished());
        assert_eq!(restored.snapshot(), snapshot);
        // `!status` still says how it ended; everything else is refused.
        let status = act(&mut table, "bob", "status", false, Role::Player).expect("answers");
        assert!(
            status[0].text.plain().contains("Finished: stopped, no winner."),
            "{}",
            status[0].text.plain()
        );
        let refusal = act(&mut table, "alice", "concede", false, Role::Player).expect_err("over");
        assert!(refusal.to_string().contains("This duel is over (stopped, no winner)"), "{refusal}");
    }
}

#[test]
fn a_player_may_not_stop_a_duel() {
    let mut table = duel_in_progress();
    let before = table.snapshot();
    for who in ["alice", "carol"] {
        let refusal = act(&mut table, who, "stop", false, Role::Player).expect_err("refused");
        assert_eq!(
            refusal.to_string(),
            "Only room operators, game masters and bot admins can stop a Duel; a player who wants out \
             can `!concede` (the opponent wins)."
        );
        assert_eq!(table.snapshot(), before, "a refused stop changes nothing");
    }
    assert!(!table.is_finished());
    assert!(!read_for(&*table, &PlayerId::new("oscar"), "stop").expect("reads").is_query());
    let refusal = act(&mut table, "oscar", "stop now", false, Role::Operator).expect_err("extra words");
    assert!(refusal.to_string().contains("type just `!stop`"), "{refusal}");
    assert_eq!(table.snapshot(), before);
}

/// Issue 15: every Duel line names its players by name segment, never by writing their
/// id into the text, so each network shows its own name (a Matrix player's display name,
/// not `@mia:localhost`). Tracks, seals, Voids, failed counters, timeouts, the finish,
/// a stop, `!status` in the room and privately, and refusals naming the wizards.
#[test]
fn no_duel_line_writes_a_player_id_into_its_text() {
    use spellbridge_core::RichText;
    use spellbridge_core::text::Segment;
    let [mia, leo] = ["@mia:localhost", "@leo:localhost"];
    let ids_in_text = |text: &RichText| -> Vec<String> {
        text.segments()
            .iter()
            .filter_map(|segment| match segment {
                Segment::Text { text, .. } | Segment::Coloured { text, .. } => Some(text.clone()),
                _ => None,
            })
            .filter(|text| text.contains("mia") || text.contains("leo") || text.contains("oscar"))
            .collect()
    };
    type Script = &'static [(&'static str, bool, &'static str)];
    let scripts: [(&[u8], Script); 3] = [
        (
            &[1],
            &[
                ("mia", true, "cast surge fire fire void end"),
                ("leo", false, "status"),
                ("leo", true, "cast focus earth earth"),
                ("timer", false, ""),
                ("mia", true, "status"),
                ("leo", true, "cast surge thunder"),
                ("carol", true, "cast surge fire end"),
                ("leo", false, "concede"),
                ("mia", false, "concede"),
                ("mia", false, "status"),
            ],
        ),
        (
            &[1],
            &[
                ("mia", true, "cast surge fire fire end"),
                ("leo", true, "cast counter water end"),
                ("mia", true, "cast surge fire wind water thunder earth end"),
                ("leo", true, "cast focus earth earth end"),
                ("leo", false, "status"),
            ],
        ),
        (
            &[1],
            &[
                ("mia", true, "cast surge fire wind water thunder earth end"),
                ("leo", true, "cast focus earth earth void earth earth end"),
                ("mia", false, "status"),
                ("oscar", false, "stop"),
                ("leo", false, "status"),
            ],
        ),
    ];
    let mut plain = Vec::new();
    for (concentration, script) in scripts {
        let plugin =
            DuelPlugin::new(DuelOptions { concentration: concentration.to_vec(), ..DuelOptions::default() });
        let setup = TableSetup {
            room: "#duel".into(),
            seats: vec![
                Seat { player: PlayerId::new(mia), choice: Some("pyromancer".into()) },
                Seat { player: PlayerId::new(leo), choice: Some("geomancer".into()) },
            ],
            now: T0,
        };
        let mut table = plugin.open(&setup).expect("opens");
        let mut said: Vec<RichText> = full(table.opening()).into_iter().map(|a| a.text).collect();
        for (sequence, (who, private, command)) in script.iter().enumerate() {
            let mut dice = Dice::for_action(9, sequence as u64);
            if *who == "timer" {
                let at = table.next_timer().expect("a step waits");
                said.extend(full(table.fire_timer(at, &mut dice)).into_iter().map(|a| a.text));
                continue;
            }
            let who = PlayerId::new(match *who {
                "mia" => mia,
                "leo" => leo,
                other => other,
            });
            let typed = format!("!{command}");
            let role = if who.as_str() == "oscar" { Role::Operator } else { Role::Player };
            let command = &match read_for(&*table, &who, command) {
                Ok(command) => command,
                Err(refusal @ spellbridge_core::Refusal::Refused(_)) => {
                    said.extend(refusal.text(spellbridge_core::Language::En));
                    continue;
                }
                Err(other) => panic!("{command}: {other}"),
            };
            let action = Action { actor: &who, command, typed: &typed, private: *private, now: T0, role };
            match table.act(&action, &mut dice) {
                Ok(out) => said.extend(full(out).into_iter().map(|a| a.text)),
                Err(refusal @ spellbridge_core::Refusal::Worded(_)) => {
                    said.extend(refusal.text(spellbridge_core::Language::En));
                }
                Err(other) => panic!("{}: {other}", command.name()),
            }
        }
        let leaks: Vec<String> = said.iter().flat_map(ids_in_text).collect();
        let text: Vec<String> = said.iter().map(RichText::plain).collect();
        assert!(leaks.is_empty(), "player ids written as text: {leaks:#?}\nin:\n{}", text.join("\n"));
        plain.extend(text);
    }
    // The lines that name players were all said (as plain text they show the ids).
    let plain = plain.join("\n");
    for needle in [
        "Duel: @mia:localhost (Pyromancer) vs @leo:localhost",
        "toward @",
        "@leo:localhost's first",
        "Void removes",
        "Full Counter fails: level 1 is below @mia:localhost's",
        "Step 0 waits for @leo:localhost",
        "@leo:localhost conceded",
        "This duel is over (winner @mia:localhost)",
        "Finished: winner @mia:localhost.",
        "not playing in this duel (@mia:localhost vs @leo:localhost)",
        "stopped the Duel; no winner (the track was",
        "Finished: stopped, no winner.",
    ] {
        assert!(plain.contains(needle), "{needle:?} was not said:\n{plain}");
    }
}
