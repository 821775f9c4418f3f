//! The Duel's public view: a spell queued before its reveal (RULES D-4, D-7) is absent
//! from the view, its board picture and its caption; once the round settles, the spells
//! are in the view.

use serde_json::{Value, json};

use super::*;
use crate::draw::{Drawing, Shape};
use crate::plugin::{GamePlugin, Role, Seat};

const T0: Timestamp = Timestamp::CONSOLE_EPOCH;

fn open() -> Duel {
    let setup = TableSetup {
        room: "#duel".into(),
        seats: vec![
            Seat { player: PlayerId::new("alice"), choice: None },
            Seat { player: PlayerId::new("bob"), choice: None },
        ],
        now: T0,
    };
    DuelPlugin::default().open_duel(&setup).expect("two apprentices")
}

fn cast(duel: &mut Duel, who: &str, tokens: &str) {
    let command = command::parse(&format!("cast {tokens}")).expect("reads");
    duel.apply(&PlayerId::new(who), Role::Player, &command, T0, &mut Dice::from_seed(1))
        .expect("cast accepted");
}

fn view(duel: &Duel) -> Value {
    DuelPlugin::default().public_view(&duel.snapshot()).expect("the Duel has a public view")
}

fn texts(drawing: &Drawing) -> String {
    drawing
        .shapes
        .iter()
        .filter_map(|shape| match shape {
            Shape::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_queued_spell_is_absent_from_the_public_view_until_the_reveal() {
    let plugin = DuelPlugin::default();
    let mut duel = open();
    let before = view(&duel);
    cast(&mut duel, "alice", "surge thunder thunder earth end");
    let snapshot = duel.snapshot();
    let queue = &snapshot["round"]["casters"]["alice"]["queue"];
    assert!(queue.as_array().is_some_and(|q| !q.is_empty()), "the state holds the queued spell: {snapshot}");
    let after = view(&duel);
    // Only *that* alice cast is new.
    let mut expected = before.clone();
    expected["round"]["casters"]["alice"]["acted"] = json!(true);
    assert_eq!(after, expected);
    let text = after.to_string();
    for secret in ["queue", "surge", "thunder\",\"thunder", "preconditioning", "checks"] {
        assert!(!text.contains(secret), "{secret:?} in the public view before the reveal: {text}");
    }
    // Whatever the hidden spell and any field the state may gain, the view is the same.
    let mut other = snapshot.clone();
    other["round"]["casters"]["alice"]["queue"] = json!(["void", "void", "fire"]);
    other["round"]["casters"]["alice"]["secret"] = json!("anything");
    other["hidden_field"] = json!("anything");
    assert_eq!(plugin.public_view(&other), Some(after.clone()));
    // The picture and its caption, drawn from the view, say no more.
    for language in Language::ALL {
        let drawn = plugin.board(&after, language).expect("a board").expect("draws");
        let (before_text, after_text) =
            (texts(&plugin.board(&before, language).expect("a board").expect("draws")), texts(&drawn));
        let cast = locale::word(language, "board-label-cast");
        let not_cast = locale::word(language, "board-label-not-cast");
        assert_eq!(after_text, before_text.replacen(not_cast.as_ref(), cast.as_ref(), 1), "{language}");
        assert_eq!(plugin.caption(0, &after, language), plugin.caption(0, &before, language));
    }
    // A view filtered again is the same view.
    assert_eq!(plugin.public_view(&after), Some(after.clone()));
    // Once bob casts, the round settles and both spells are public.
    cast(&mut duel, "bob", "surge water end");
    let settled = view(&duel).to_string();
    assert!(
        settled.contains("\"surge\",\"thunder\"") && settled.contains("\"surge\",\"water\""),
        "{settled}"
    );
}

#[test]
fn a_board_refuses_a_view_it_cannot_draw_with_a_reason() {
    let plugin = DuelPlugin::default();
    let one = plugin.board(&json!({"players": ["a"]}), Language::En).expect("a board");
    assert!(one.is_err_and(|reason| reason.contains("two players")));
    let wrong = plugin.board(&json!({"players": "nobody"}), Language::En).expect("a board");
    assert!(wrong.is_err_and(|reason| reason.contains("not a Duel state")));
}
