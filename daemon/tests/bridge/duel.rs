//! b. An IRC player and a Matrix player play a whole Duel at the shared table, spells by
//! IRC PM and Matrix DM, and neither room hears a token before its step is revealed
//! (with a test of the hidden-information check itself).

use super::support::*;

/// The names a Duel token is shown by in the rooms (case matters: the help text's
/// `!cast surge fire …` is not a token shown).
const TOKEN_NAMES: &[&str] = &[
    "Power Surge",
    "Focused Casting",
    "Overspeed",
    "Full Counter",
    "Fire",
    "Water",
    "Thunder",
    "Wind",
    "Earth",
    "Void",
];

/// One round as the rooms must see it: the chat line said after the first caster
/// queued and before the second cast, and each step's tokens (first player, second).
pub(super) struct RoundPlan {
    pub(super) number: u32,
    pub(super) marker: &'static str,
    pub(super) steps: &'static [(&'static str, &'static str)],
}

/// The two rounds both cross-network Duels play (here and in appservice mode): alice's
/// surges against bobby's focused casting, each round marked by bobby's chat line.
pub(super) const TWO_ROUNDS: [RoundPlan; 2] = [
    RoundPlan {
        number: 1,
        marker: "marker one",
        steps: &[
            ("Power Surge", "Focused Casting"),
            ("Fire", "Earth"),
            ("Wind", "Earth"),
            ("Water", "Earth"),
            ("Thunder", "Earth"),
            ("End", "End"),
        ],
    },
    RoundPlan {
        number: 2,
        marker: "marker two",
        steps: &[
            ("Power Surge", "Focused Casting"),
            ("Fire", "Earth"),
            ("Earth", "Earth"),
            ("Fire", "Earth"),
            ("Earth", "Earth"),
            ("End", "End"),
        ],
    },
];

/// Checks one room's transcript (every message in order, anyone's): between `Round n
/// begins` and `Round n settles`, no token is shown before the marker, the step lines
/// come in order 0, 1, 2… showing exactly the planned tokens, and no other message names
/// a token. Nowhere does a private answer (`Queued`, a sealed refusal) show up.
pub(super) fn assert_nothing_revealed_early(
    room: &str,
    transcript: &[(String, String)],
    rounds: &[RoundPlan],
) {
    let listing = || {
        transcript
            .iter()
            .enumerate()
            .map(|(i, (from, text))| format!("{i:3} {from}: {text}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    for (_, text) in transcript {
        for private in ["Queued", "Your spell", "is sealed for the first"] {
            assert!(
                !text.contains(private),
                "{room}: a private answer reached the room: {text:?}\n{}",
                listing()
            );
        }
    }
    for round in rounds {
        let n = round.number;
        let find = |needle: &str| transcript.iter().position(|(_, text)| text.contains(needle));
        let begins = find(&format!("Round {n} begins"))
            .unwrap_or_else(|| panic!("{room}: no `Round {n} begins`\n{}", listing()));
        let settles = find(&format!("Round {n} settles"))
            .unwrap_or_else(|| panic!("{room}: no `Round {n} settles`\n{}", listing()));
        let marker = find(round.marker)
            .unwrap_or_else(|| panic!("{room}: no marker {:?}\n{}", round.marker, listing()));
        assert!(begins < marker && marker < settles, "{room}: round {n} out of order\n{}", listing());
        let step_prefix = format!("Round {n}, step");
        let mut next_step = 0;
        for (i, (from, text)) in transcript.iter().enumerate().take(settles).skip(begins + 1) {
            if let Some(rest) = text.strip_prefix(&step_prefix) {
                assert!(
                    i > marker,
                    "{room}: step line {i} came before the second spell was cast\n{}",
                    listing()
                );
                let (steps, shown) =
                    rest.split_once(": ").unwrap_or_else(|| panic!("{room}: odd step line {text:?}"));
                // One step (`step 3`), or several on one line in the compact form
                // (`steps 0–5`, each wizard's tokens in order).
                let (first_step, last_step) = match (steps.strip_prefix("s "), steps.strip_prefix(' ')) {
                    (Some(range), _) => {
                        range.split_once('–').unwrap_or_else(|| panic!("{room}: odd step line {text:?}"))
                    }
                    (None, Some(step)) => (step, step),
                    (None, None) => panic!("{room}: odd step line {text:?}"),
                };
                assert_eq!(
                    first_step,
                    next_step.to_string(),
                    "{room}: steps out of order at line {i}\n{}",
                    listing()
                );
                let last_step: usize =
                    last_step.parse().unwrap_or_else(|_| panic!("{room}: odd step line {text:?}"));
                let (mut left, mut right) =
                    shown.split_once(" · ").unwrap_or_else(|| panic!("{room}: odd step line {text:?}"));
                for step in next_step..=last_step {
                    let (first, second) = round.steps[step];
                    let (Some(l), Some(r)) = (left.find(first), right.find(second)) else {
                        panic!("{room}: round {n} step {step} shows {shown:?}, planned {first} · {second}");
                    };
                    (left, right) = (&left[l + first.len()..], &right[r + second.len()..]);
                }
                next_step = last_step + 1;
            } else if let Some(name) = TOKEN_NAMES.iter().find(|name| text.contains(*name)) {
                panic!("{room}: line {i} from {from} names {name} in the middle of round {n}\n{}", listing());
            }
        }
        assert_eq!(
            next_step,
            round.steps.len(),
            "{room}: round {n} revealed {next_step} steps\n{}",
            listing()
        );
    }
}

/// The check itself: a clean transcript passes, and each kind of leak is caught.
#[test]
fn the_hidden_information_check_catches_leaks() {
    const PLAN: [RoundPlan; 1] =
        [RoundPlan { number: 1, marker: "marker", steps: &[("Power Surge", "Power Surge"), ("End", "End")] }];
    let transcript = |lines: &[&str]| -> Vec<(String, String)> {
        lines.iter().map(|l| ("bot".to_owned(), (*l).to_owned())).collect()
    };
    let clean = [
        "Round 1 begins: send your spell",
        "<alice> marker",
        "Round 1, step 0: alice Power Surge · bob Power Surge",
        "Round 1, step 1: alice End · bob End",
        "Round 1 settles.",
    ];
    assert_nothing_revealed_early("clean", &transcript(&clean), &PLAN);
    let compact =
        [clean[0], clean[1], "Round 1, steps 0–1: alice Power Surge End · bob Power Surge End", clean[4]];
    assert_nothing_revealed_early("compact", &transcript(&compact), &PLAN);
    let leaks: [&[&str]; 6] = [
        // A token named before the step is revealed.
        &[clean[0], "alice: Queued surge", clean[1], clean[2], clean[3], clean[4]],
        &[clean[0], "alice prepares Power Surge", clean[1], clean[2], clean[3], clean[4]],
        // A step revealed before the second wizard cast.
        &[clean[0], clean[2], clean[1], clean[3], clean[4]],
        // Steps out of order.
        &[clean[0], clean[1], clean[3], clean[2], clean[4]],
        // The compact line before the second wizard cast, or missing a token.
        &[clean[0], compact[2], clean[1], clean[4]],
        &[clean[0], clean[1], "Round 1, steps 0–1: alice Power Surge · bob Power Surge End", clean[4]],
    ];
    for leak in leaks {
        let caught =
            std::panic::catch_unwind(|| assert_nothing_revealed_early("leaky", &transcript(leak), &PLAN));
        assert!(caught.is_err(), "not caught: {leak:#?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_irc_player_and_a_matrix_player_duel_and_no_room_hears_a_token_early() {
    let started = Instant::now();
    let (irc, synapse) = servers();
    synapse.register(BOT, &password(BOT), false).unwrap_or_else(|e| panic!("{e}"));
    let mut watcher = Mx::new(&synapse, "watcher", "Watcher").await;
    let mut bobby = Mx::new(&synapse, "bobby", "Bobby").await;
    let room = bridge_room(&mut watcher, &mut [&mut bobby]).await;
    direct_rooms(&mut [&mut bobby]).await;
    let (mut alice, mut ircwatch) =
        tokio::join!(Irc::connect(irc.port(), "alice"), Irc::connect(irc.port(), "ircwatch"));
    let _daemon = start_daemon(&irc, &synapse, &room, &Extra::default());
    until_bot_on_irc(&mut alice).await;
    until_bot_everywhere(&room, &mut watcher, &mut [&mut bobby]).await;
    for client in [&mut alice, &mut ircwatch] {
        client.settle().await;
    }
    for user in [&mut watcher, &mut bobby] {
        user.settle().await;
    }
    eprintln!("set up in {:?}", started.elapsed());

    // The IRC player challenges the Matrix player by display name; the answer comes from
    // Matrix; both rooms hear both.
    alice.say("!duel Bobby").await;
    ircwatch.expect("alice challenges Bobby").await;
    watcher.expect_in(&room, "alice challenges Bobby").await;
    bobby.say(&room, "!accept").await;
    ircwatch.expect("Round 1 begins").await;
    watcher.expect_in(&room, "Round 1 begins").await;

    // Round 1: alice casts by IRC PM first; bobby asks for the status in the Matrix room
    // (the answer stays there and shows nothing of alice's spell); then bobby casts by DM.
    alice.tell_bot("!cast surge fire wind water thunder end").await;
    alice.expect_private("Queued").await;
    bobby.say(&room, "!status").await;
    let status = bobby.expect_in(&room, "Duel:").await;
    assert!(!status.body.contains("Fire"), "{status}");
    alice.say("marker one").await;
    watcher.expect_where("the relayed marker", |m| m.body == "<alice> marker one").await;
    bobby.tell_bot("!cast focus earth earth earth earth end").await;
    bobby.expect_private("Queued").await;
    // On Matrix the round is one message (issue 31).
    let round = watcher.expect_in(&room, "Round 1, step 5").await;
    for needle in ["Round 1 settles", "24 toward alice", "Round 2 begins"] {
        assert!(round.body.contains(needle), "{needle:?} in the round's message: {round}");
    }
    // IRC hears the round in its compact form: the steps on one line, the settlement and
    // the track's move on the next.
    ircwatch.expect("Round 1, steps 0–5").await;
    let settles = ircwatch.expect("Round 1 settles").await;
    assert!(strip(&settles.text).contains("now 24 toward alice"), "{settles}");
    ircwatch.expect("Round 2 begins").await;

    // Round 2: bobby first this time; alice's first try is refused privately (bobby's
    // Earth run sealed Wind, RULES D-10).
    bobby.tell_bot("!cast focus earth earth earth earth end").await;
    bobby.expect_private("Queued").await;
    bobby.say(&room, "marker two").await;
    ircwatch.expect("<Bobby> marker two").await;
    alice.tell_bot("!cast surge fire wind end").await;
    let refused = alice.expect_private("sealed").await;
    assert!(refused.text.contains("wind"), "{refused}");
    alice.tell_bot("!cast surge fire earth fire earth end").await;
    alice.expect_private("Queued").await;
    let over = ircwatch.expect("duel is over").await;
    assert!(strip(&over.text).contains("alice"), "alice wins on the track (D-1): {over}");
    watcher.expect_in(&room, "duel is over").await;

    tokio::join!(ircwatch.pump(QUIET), watcher.pump(QUIET));
    assert_nothing_revealed_early(CHANNEL, &ircwatch.channel_lines(), &TWO_ROUNDS);
    assert_nothing_revealed_early("the Matrix room", &watcher.room_lines(&room), &TWO_ROUNDS);

    // Every announcement reached both rooms, the same (bobby's status answer only where
    // he asked, relayed chat only on the other side, board pictures only in Matrix: their
    // text is "The Duel board of table …").
    let table_lines = |lines: Vec<String>| -> Vec<String> {
        lines
            .into_iter()
            .filter(|l| !l.starts_with('<'))
            .filter(|l| {
                !["Duel:", "Pools:", "Seals this round", "This round so far", "The Duel board of table"]
                    .iter()
                    .any(|s| l.starts_with(s))
            })
            .collect()
    };
    let on_irc = table_lines(ircwatch.bot_lines());
    // Code is shown in backticks in a Matrix body and plain on IRC.
    let on_matrix: Vec<String> =
        table_lines(watcher.bot_lines(&room)).iter().map(|l| l.replace('`', "")).collect();
    // A round is told in the full form on Matrix and in the compact form on IRC (the
    // steps, the settlement, the next round: three lines); everything else is the same.
    let is_round = |l: &String| l.starts_with("Round ") || l.starts_with("Track moves") || l.contains(" → ");
    let (irc_rounds, irc_rest): (Vec<String>, Vec<String>) = on_irc.iter().cloned().partition(is_round);
    let (matrix_rounds, matrix_rest): (Vec<String>, Vec<String>) =
        on_matrix.iter().cloned().partition(is_round);
    assert!(irc_rest.len() >= 5, "{on_irc:#?}");
    // The opening tells each network how to cast its own way (issue 31).
    let opening =
        |lines: &[String]| lines.iter().find(|l| l.starts_with("⚔ Duel!")).cloned().unwrap_or_default();
    assert!(opening(&irc_rest).contains(&format!("/msg {BOT} !cast surge fire wind end")), "{irc_rest:#?}");
    assert!(opening(&matrix_rest).contains("in our direct chat"), "{matrix_rest:#?}");
    let others = |lines: Vec<String>| -> Vec<String> {
        lines.into_iter().filter(|l| !l.starts_with("⚔ Duel!")).collect()
    };
    assert_eq!(
        others(irc_rest),
        others(matrix_rest),
        "both rooms heard the same announcements besides the rounds"
    );
    // Round 1's steps and settlement, round 2's start, steps and settlement (round 1's
    // start is in the duel's opening line, the same on both).
    assert_eq!(irc_rounds.len(), 5, "{irc_rounds:#?}");
    assert!(matrix_rounds.len() >= 20, "{matrix_rounds:#?}");
    for once in ["Round 1 settles", "Round 2 begins", "duel is over"] {
        assert_eq!(count(&on_irc, once), 1, "{once:?} once on IRC: {on_irc:#?}");
    }
    eprintln!("the test took {:?}", started.elapsed());
}
