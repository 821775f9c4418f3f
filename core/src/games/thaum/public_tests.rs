//! A Thaum table's public view: the whole state but its history (RULES T-1 to T-9 hide
//! nothing; the journal shows the history), drawn and captioned from that view.

use serde_json::json;

use super::*;
use crate::draw::Shape;

#[test]
fn the_public_view_is_the_state_without_its_history() {
    let plugin = ThaumPlugin::default();
    let state = json!({
        "season": 1, "phase": 2, "loop_instability": 3,
        "players": {"alice": {"mana": 2, "coins": 5, "thaums": {"fire": 1}}},
        "history": [{"actor": "alice", "command": "!channel fire"}],
        "phase_started_at": 0, "finished": false
    });
    let view = plugin.public_view(&state).expect("Thaum has a public view");
    assert!(view.get("history").is_none(), "{view}");
    let mut without = state.clone();
    without.as_object_mut().map(|o| o.remove("history"));
    assert_eq!(view, without);
    let drawn = plugin.board(&view, Language::En).expect("a board").expect("draws");
    assert!(drawn.shapes.iter().any(|s| matches!(s, Shape::Text { text, .. } if text == "alice")));
    let caption = plugin.caption(3, &view, Language::En).expect("a caption");
    assert_eq!(
        caption,
        "The Thaum board of table 3: season 1, Phase II, Loop Instability 3/9; coins: alice 5."
    );
}
