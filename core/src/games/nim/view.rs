//! What a spectator sees of a Nim table: its public view (the whole state: nothing in
//! Nim is hidden, but only the fields of [`Nim`] pass), its board picture in core's
//! drawing vocabulary, the picture's caption, when to draw it again, and the site's
//! facts.

use serde_json::Value;

use super::command::Pile;
use super::news::NimNews;
use super::state::{Nim, START};
use crate::draw::{Anchor, Colour, Drawing, clip};
use crate::event::Event;
use crate::facts::{Fact, Facts};
use crate::language::Language;
use crate::locale::{self, Args};

/// The public view of a table's state: the state read back through its type, so a field
/// the game does not know never reaches a page.
pub fn public_view(state: &Value) -> Option<Value> {
    let nim: Nim = serde_json::from_value(state.clone()).ok()?;
    serde_json::to_value(nim).ok()
}

fn read(public: &Value) -> Result<Nim, String> {
    serde_json::from_value(public.clone()).map_err(|e| format!("a Nim table's view: {e}"))
}

/// Who moves, who won, or who waits, in `language`.
fn standing(nim: &Nim, language: Language) -> String {
    let name = |i: usize| nim.players.get(i).map(|p| p.as_str().to_owned()).unwrap_or_default();
    match (&nim.winner, nim.finished, nim.to_move()) {
        (Some(winner), _, _) => locale::text(language, "nim-board-won", &Args::new().text("player", winner.as_str())),
        (None, true, _) => locale::text(language, "nim-board-over", &Args::new()),
        (None, false, Some(next)) => locale::text(language, "nim-board-to-move", &Args::new().text("player", next.as_str())),
        (None, false, None) => locale::text(language, "nim-board-waiting", &Args::new().text("player", name(0))),
    }
}

/// The board: the three piles side by side, each stone a circle (taken ones faint),
/// the players above and who moves below.
pub fn drawing(public: &Value, language: Language) -> Result<Drawing, String> {
    let nim = read(public)?;
    let mut d = Drawing::new(480, 280, Colour::Paper);
    let players: Vec<String> = nim.players.iter().map(|p| clip(p.as_str(), 18)).collect();
    d.bold(240.0, 34.0, 18.0, Colour::Ink, Anchor::Middle, &players.join(" · "));
    for pile in Pile::ALL {
        let i = pile.index();
        let x = 90.0 + 150.0 * i as f64;
        d.card(x - 60.0, 52.0, 120.0, 170.0, Colour::Panel, Colour::Line);
        let left = nim.piles[i].min(START[i]);
        for stone in 0..START[i] {
            // Two columns, bottom up.
            let (col, row) = (f64::from(stone % 2), f64::from(stone / 2));
            let (cx, cy) = (x - 18.0 + 36.0 * col, 200.0 - 36.0 * row);
            let fill = if stone < left { Colour::Earth } else { Colour::Rule };
            d.dot(cx, cy, 14.0, fill, Colour::Line);
        }
        let label = format!("{} · {left}", locale::word(language, pile.message()));
        d.bold(x, 246.0, 16.0, Colour::Ink, Anchor::Middle, &label);
    }
    d.text(240.0, 272.0, 14.0, Colour::Muted, Anchor::Middle, &standing(&nim, language));
    Ok(d)
}

/// The picture's words, for clients that show no images.
pub fn caption(table: u64, public: &Value, language: Language) -> String {
    let Ok(nim) = read(public) else {
        return locale::text(language, "nim-board-caption-unread", &Args::new().num("table", table));
    };
    let [a, b, c] = nim.piles;
    let args = Args::new().num("table", table).num("a", a).num("b", b).num("c", c).text("standing", standing(&nim, language));
    locale::text(language, "nim-board-caption", &args)
}

/// Every take changes the board.
pub fn redraws(events: &[Event]) -> bool {
    events.iter().any(|e| matches!(e.get::<NimNews>(), Some(NimNews::Took { .. } | NimNews::Joined { .. })))
}

/// The piles, who plays and who moves, for the site's table page.
pub fn facts(public: &Value, language: Language) -> Facts {
    let Ok(nim) = read(public) else { return Facts::default() };
    let label = |id: &str| locale::text(language, id, &Args::new());
    let [a, b, c] = nim.piles;
    let piles = locale::text(language, "nim-piles-plain", &Args::new().num("a", a).num("b", b).num("c", c));
    let players: Vec<&str> = nim.players.iter().map(|p| p.as_str()).collect();
    Facts {
        facts: vec![
            Fact::text(label("nim-fact-players"), players.join(", ")),
            Fact::text(label("nim-fact-piles"), piles),
            Fact::text(label("nim-fact-standing"), standing(&nim, language)),
        ],
        grid: None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::draw::Shape;

    fn state() -> Value {
        json!({
            "players": ["alice", "bob"], "piles": [0, 2, 7], "turn": 1,
            "moves": [{"player": "alice", "amount": 3, "pile": "a"}, {"player": "bob", "amount": 3, "pile": "b"}],
            "finished": false, "winner": null, "finish_reason": null,
            "planted": "a field the game does not know"
        })
    }

    #[test]
    fn the_view_is_the_state_and_nothing_else() {
        let view = public_view(&state()).expect("a view");
        assert_eq!(view["piles"], json!([0, 2, 7]));
        assert!(view.get("planted").is_none(), "{view}");
        assert_eq!(public_view(&json!({"players": "x"})), None);
    }

    #[test]
    fn the_board_draws_every_stone_left_and_taken() {
        let view = public_view(&state()).expect("a view");
        let picture = drawing(&view, Language::En).expect("draws");
        let dots: Vec<Colour> = picture
            .shapes
            .iter()
            .filter_map(|s| match s {
                Shape::Dot { fill, .. } => Some(*fill),
                _ => None,
            })
            .collect();
        assert_eq!(dots.len(), 15);
        assert_eq!(dots.iter().filter(|c| **c == Colour::Earth).count(), 9, "2 + 7 stones left");
        let texts: Vec<&str> = picture
            .shapes
            .iter()
            .filter_map(|s| match s {
                Shape::Text { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert!(texts.contains(&"alice · bob") && texts.contains(&"bob to move"), "{texts:?}");
        let chinese = drawing(&view, Language::ZhCn).expect("draws in Chinese");
        assert!(chinese.shapes.iter().any(|s| matches!(s, Shape::Text { text, .. } if text == "乙 · 2")));
        assert!(drawing(&json!({}), Language::En).is_err());
        assert_eq!(caption(4, &view, Language::En), "Nim table 4: piles a 0, b 2, c 7; bob to move.");
        let facts = facts(&view, Language::En);
        assert_eq!(facts.facts.len(), 3);
    }
}
