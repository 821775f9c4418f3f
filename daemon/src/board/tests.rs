//! Board pictures: the PNG decoded back (size, and pixels in each element's and Thaum's
//! colour for a known state), the SVG text of every scenario transcript's end state
//! (insta), and a Duel spell queued but not revealed never drawn.

use std::path::PathBuf;

use serde_json::{Value, json};
use spellbridge_core::Language;
use spellbridge_core::draw::Colour;
use spellbridge_core::games::duel::Element;
use spellbridge_core::games::duel::board as duel;
use spellbridge_core::games::thaum::board as thaum;

use super::*;

/// The SVG of a table's board, labelled in English.
fn svg(table: &Value) -> Result<String, BoardError> {
    Board::new().svg(table)
}

/// The SVG of a table's board, labelled in `language`.
fn svg_in(table: &Value, language: Language) -> Result<String, BoardError> {
    Board::new().svg_in(table, language)
}

/// The table entries of a scenario transcript's end state (`tests/scenarios/<name>.txt`).
fn scenario_tables(name: &str) -> Vec<Value> {
    let (script, seed) = crate::console::scenario(name);
    let (_, state) =
        crate::console::run_script(&script, seed).unwrap_or_else(|e| panic!("playing {name}: {e:#}"));
    state["tables"].as_array().cloned().unwrap_or_default()
}

/// The end state after a short console script.
fn played(script: &str) -> Vec<Value> {
    let (_, state) = crate::console::run_script(script, 7).unwrap_or_else(|e| panic!("playing: {e:#}"));
    state["tables"].as_array().cloned().unwrap_or_default()
}

/// A decoded PNG: width, height and RGBA rows.
struct Decoded {
    width: u32,
    height: u32,
    rgba: Vec<u8>,
}

impl Decoded {
    fn of(picture: &Picture) -> Decoded {
        let decoder = png::Decoder::new(std::io::Cursor::new(&picture.png));
        let mut reader = decoder.read_info().expect("the PNG's header reads");
        let mut rgba = vec![0; reader.output_buffer_size().expect("a sane size")];
        let info = reader.next_frame(&mut rgba).expect("the PNG's pixels read");
        assert_eq!(info.bit_depth, png::BitDepth::Eight);
        let rgba = match info.color_type {
            png::ColorType::Rgba => rgba,
            png::ColorType::Rgb => rgba.chunks_exact(3).flat_map(|p| [p[0], p[1], p[2], u8::MAX]).collect(),
            other => panic!("a board PNG is RGB or RGBA, not {other:?}"),
        };
        Decoded { width: info.width, height: info.height, rgba }
    }

    fn at(&self, x: f64, y: f64) -> (u8, u8, u8) {
        let (x, y) = (x.round() as usize, y.round() as usize);
        let i = (y * self.width as usize + x) * 4;
        (self.rgba[i], self.rgba[i + 1], self.rgba[i + 2])
    }

    /// How many pixels of the rectangle are not the background colour.
    fn ink(&self, (x, y, w, h): (u32, u32, u32, u32), background: (u8, u8, u8)) -> usize {
        (y..y + h)
            .flat_map(|py| (x..x + w).map(move |px| (px, py)))
            .filter(|(px, py)| self.at(f64::from(*px), f64::from(*py)) != background)
            .count()
    }
}

fn duel_state() -> Value {
    json!({
        "game": "duel",
        "state": {
            "players": ["alice", "bob"],
            "wizards": {"alice": "Apprentice", "bob": "Pyromancer"},
            "track": 7, "finished": false, "winner": null,
            "pools": {
                "alice": {"water": 8, "fire": 6, "thunder": 8, "wind": 7, "earth": 8, "void": 4},
                "bob": {"water": 7, "fire": 7, "thunder": 7, "wind": 8, "earth": 7, "void": 3}
            },
            "seals": {"alice": {"positions": 1, "elements": ["water", "thunder"]},
                      "bob": {"positions": 0, "elements": []}},
            "rounds": [{"round": 1, "track_after": 7, "spells": {
                "alice": {"tokens": ["surge", "fire", "fire", "wind"], "level": 3, "power": 13,
                          "countered": false, "interrupted": false, "removed": []},
                "bob": {"tokens": ["focus", "water", "void"], "level": 1, "power": 1,
                        "countered": false, "interrupted": false, "removed": []}}}],
            "round": {"number": 2, "step": 0, "casters": {
                "alice": {"acted": true, "queue": ["earth"]}, "bob": {"acted": false, "queue": []}}}
        }
    })
}

fn thaum_state() -> Value {
    json!({
        "game": "thaum",
        "state": {
            "season": 2, "phase": 3, "loop_instability": 4,
            "players": {
                "alice": {"mana": 2, "coins": 12, "thaums": {"fire": 10, "water": 5, "earth": -10, "air": 3}},
                "bob": {"mana": 0, "coins": 3, "thaums": {"fire": -4, "water": 0, "earth": 8, "air": -6}}
            },
            "phase_started_at": 1_767_484_800,
            "finished": false,
            "options": {"schedule": "cycle13"}
        }
    })
}

#[test]
fn a_duel_board_is_a_png_of_its_size_with_each_elements_colour() {
    let picture = Board::new().png(&duel_state()).expect("the duel board renders");
    assert_eq!((picture.width, picture.height), (duel::WIDTH, duel::HEIGHT));
    let decoded = Decoded::of(&picture);
    assert_eq!((decoded.width, decoded.height), (duel::WIDTH, duel::HEIGHT));
    for seat in 0..2 {
        for element in Element::ALL {
            let (x, y, ..) = duel::pool_chip(seat, element);
            assert_eq!(
                decoded.at(x + 4.0, y + 4.0),
                duel::colour(element).rgb(),
                "seat {seat}'s {element} chip"
            );
        }
    }
    // The marker sits 7 points toward alice (left of the middle), in its colour.
    assert_eq!(decoded.at(duel::marker_x(7), 118.0), Colour::Marker.rgb());
    assert!(duel::marker_x(7) < duel::marker_x(0));
}

#[test]
fn a_thaum_board_is_a_png_with_each_thaums_bar() {
    let picture = Board::new().png(&thaum_state()).expect("the thaum board renders");
    assert_eq!((picture.width, picture.height), (thaum::WIDTH, thaum::height(2)));
    let decoded = Decoded::of(&picture);
    // alice has the most coins: the first row.
    for (i, (key, _)) in thaum::THAUMS.iter().enumerate() {
        let value = thaum_state()["state"]["players"]["alice"]["thaums"][key].as_i64().unwrap_or(0);
        let (x, y, w, h) = thaum::bar(0, i, value);
        assert_eq!(decoded.at(x + w / 2.0, y + h / 2.0), thaum::colour(key).rgb(), "alice's {key}");
    }
    // bob's zero Water has no bar: the panel shows through.
    let (x, y, ..) = thaum::bar(1, 1, 5);
    assert_eq!(decoded.at(x + 8.0, y + 8.0), Colour::Panel.rgb());
}

#[test]
fn the_thaum_board_says_season_phase_instability_and_when_the_phase_ends() {
    let svg = svg(&thaum_state()).expect("draws");
    assert!(svg.contains("Season 2 · Phase III"), "{svg}");
    assert!(svg.contains("Loop Instability 4/9"), "{svg}");
    // Sunday 2026-01-04 00:00 started it: Cycle 13 ends it on Wednesday (RULES T-2).
    assert!(svg.contains("Phase III ends Wed 2026-01-07 00:00 UTC"), "{svg}");
    let alice = svg.find(">alice<").expect("alice is drawn");
    let bob = svg.find(">bob<").expect("bob is drawn");
    assert!(alice < bob, "the standings put the player with more coins first");
}

#[test]
fn the_font_draws_every_glyph_the_boards_use() {
    let rasteriser = Rasteriser::new();
    let labels = font::LABELS.chars();
    for c in font::NEEDED.chars().chain(labels).chain("Duel Thaum 0123456789".chars().filter(|c| *c != ' ')) {
        let text = svg::escape(&c.to_string());
        let doc = format!(
            r##"<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40"><rect width="40" height="40" fill="#ffffff"/><text x="8" y="30" font-size="28" font-family="{}" fill="#000000">{text}</text></svg>"##,
            font::FAMILY
        );
        let decoded = Decoded::of(&rasteriser.png(&doc).expect("renders"));
        assert!(decoded.ink((0, 0, 40, 40), (255, 255, 255)) > 10, "the shipped font has no glyph for {c:?}");
    }
}

#[test]
fn a_queued_spell_is_never_drawn_before_the_reveal() {
    let before = played("alice: !duel bob\nbob: !accept\n");
    let after = played("alice: !duel bob\nbob: !accept\nalice (dm): !cast surge thunder thunder earth end\n");
    let (before, after) = (&before[0], &after[0]);
    let queue = &after["state"]["round"]["casters"]["alice"]["queue"];
    assert!(
        queue.as_array().is_some_and(|q| !q.is_empty()),
        "the fixture must hold a queued, unrevealed spell: {queue}"
    );
    // Drawn, the state with alice's hidden spell differs from the state before it only in
    // that she has cast.
    let (before, after_svg) = (svg(before).expect("draws"), svg(after).expect("draws"));
    assert_eq!(after_svg, before.replacen("not cast yet", "has cast", 1));
    // And whatever the hidden spell is, the picture is the same.
    let mut other = after.clone();
    other["state"]["round"]["casters"]["alice"]["queue"] = json!(["void", "void", "fire"]);
    other["state"]["round"]["casters"]["alice"]["elements"] = json!(["void"]);
    other["state"]["round"]["casters"]["alice"]["preconditioning"] = json!("counter");
    assert_eq!(svg(&other).expect("draws"), after_svg);
}

#[test]
fn a_settled_round_shows_both_spells() {
    let svg = svg(&duel_state()).expect("draws");
    // Round 1's spells, revealed: alice's two Fire and Wind, bob's Water and Void; named
    // in English on an English board (issue 31), by glyph on a Chinese one.
    for name in ["Fire", "Wind", "Water", "Void"] {
        assert!(svg.matches(&format!(">{name}<")).count() >= 3, "{name} in the pools and the spells");
    }
    assert!(!["火", "风", "水", "虚无"].iter().any(|glyph| svg.contains(&format!(">{glyph}<"))), "{svg}");
    let chinese = svg_in(&duel_state(), Language::ZhCn).expect("draws");
    for glyph in ["火", "风", "水", "虚无"] {
        assert!(chinese.matches(&format!(">{glyph}<")).count() >= 3, "{glyph} in the pools and the spells");
    }
    // The wizards by their Chinese names (issue 31).
    assert!(chinese.contains(">火法师<") && !chinese.contains("Pyromancer"), "{chinese}");
    assert!(svg.contains("Round 1: power 13 · level 3"));
    assert!(svg.contains("Sealed in the first position:"));
    assert!(svg.contains("Track: 7 toward alice"));
    // Once the game is over there is no next spell to seal (issue 31).
    let mut finished = duel_state();
    finished["state"]["finished"] = json!(true);
    finished["state"]["winner"] = json!("alice");
    let over = self::svg(&finished).expect("draws");
    assert!(!over.contains("Sealed") && !over.contains("No seal"), "{over}");
}

#[test]
fn other_games_and_broken_states_are_refused_with_a_reason() {
    assert_eq!(svg(&json!({"game": "chess", "state": {}})), Err(BoardError::UnknownGame("chess".into())));
    let Err(BoardError::BadState { game, reason }) =
        svg(&json!({"game": "duel", "state": {"players": ["a"]}}))
    else {
        panic!("a one-player duel is refused");
    };
    assert_eq!(game, "duel");
    assert!(reason.contains("two players"), "{reason}");
    let names = json!({"game": "thaum", "state": {"players": {"<script>&": {"mana": 1}}}});
    assert!(svg(&names).expect("draws").contains("&lt;script&gt;&amp;"));
}

macro_rules! scenario_board {
    ($name:ident) => {
        #[test]
        fn $name() {
            let tables = scenario_tables(stringify!($name));
            assert!(!tables.is_empty(), "the scenario opens a table");
            let board = Board::new();
            for table in &tables {
                let id = &table["table"];
                let drawn = svg(table).expect("the end state draws");
                insta::assert_snapshot!(format!("{}_table_{id}", stringify!($name)), drawn);
                let picture = board.png(table).expect("and renders");
                assert!(picture.png.starts_with(b"\x89PNG\r\n\x1a\n"));
                // Issue 19: the same picture labelled in Chinese, for a Chinese room.
                let chinese = svg_in(table, Language::ZhCn).expect("the end state draws in Chinese");
                insta::assert_snapshot!(format!("{}_table_{id}_zh_cn", stringify!($name)), chinese);
                assert_drawable(&chinese);
                let zh_picture = board.png_in(table, Language::ZhCn).expect("and renders");
                // To look at the pictures: BOARD_PNG_DIR=/tmp/boards cargo test -p spellbridge --lib board::
                if let Some(dir) = std::env::var_os("BOARD_PNG_DIR") {
                    let file = PathBuf::from(&dir).join(format!("{}_table_{id}.png", stringify!($name)));
                    std::fs::write(&file, &picture.png).expect("the picture is written");
                    let file = PathBuf::from(dir).join(format!("{}_table_{id}_zh_cn.png", stringify!($name)));
                    std::fs::write(&file, &zh_picture.png).expect("the picture is written");
                }
            }
        }
    };
}

mod scenarios {
    use super::*;

    scenario_board!(thaum_full_loop);
    scenario_board!(duel_complete);
    scenario_board!(duel_interruption);
    scenario_board!(duel_full_counter);
    scenario_board!(duel_void);
    scenario_board!(duel_pool_dry);
}

#[test]
fn the_caption_tells_what_the_room_was_told_and_never_a_queued_spell() {
    let duel = scenario_tables("duel_complete");
    let duel = duel.iter().find(|t| t["game"] == "duel").expect("a duel");
    let text = Board::new().caption(duel, Language::En);
    assert!(text.starts_with("The Duel board of table 0: alice (Apprentice) against bob ("), "{text}");
    assert!(text.contains("the track is at ") && text.ends_with(" alice won."), "{text}");
    // Issue 19: a Chinese room gets the caption in Chinese (wizard names are config data).
    let text = Board::new().caption(duel, Language::ZhCn);
    assert!(text.starts_with("第 0 桌的决斗局面：alice（Apprentice） 对 bob（"), "{text}");
    assert!(text.ends_with(" alice 获胜。"), "{text}");

    let thaum = scenario_tables("thaum_full_loop");
    let thaum = thaum.iter().find(|t| t["game"] == "thaum").expect("a Thaum table");
    let text = Board::new().caption(thaum, Language::En);
    assert!(text.starts_with("The Thaum board of table 0: season "), "{text}");
    assert!(
        text.contains(", Phase ") && text.contains("Loop Instability ") && text.contains("coins: "),
        "{text}"
    );

    // A queued spell changes nothing in it.
    let before = played("alice: !duel bob\nbob: !accept\n");
    let after = played("alice: !duel bob\nbob: !accept\nalice (dm): !cast surge thunder thunder earth end\n");
    assert_eq!(Board::new().caption(&before[0], Language::En), Board::new().caption(&after[0], Language::En));
}

#[test]
fn players_are_drawn_and_captioned_by_name_not_by_id() {
    let duel = scenario_tables("duel_complete");
    let duel = duel.iter().find(|t| t["game"] == "duel").expect("a duel").clone();
    let names = [
        (spellbridge_core::PlayerId::new("alice"), "Alice A.".to_owned()),
        (spellbridge_core::PlayerId::new("bob"), "bob".to_owned()),
    ];
    let named = post::named(duel, &names);
    let text = Board::new().caption(&named, Language::En);
    assert!(
        text.contains(": Alice A. (Apprentice) against bob (") && text.ends_with(" Alice A. won."),
        "{text}"
    );
    let svg = svg(&named).expect("draws");
    assert!(svg.contains("Alice A.") && !svg.contains(">alice<"), "{svg}");
}

/// Issue 29, item 4: a name with glyphs the font lacks (two CJK Extension B ideographs
/// that no other test draws) is drawn with stand-ins, and the lack is logged once a run
/// however many pictures draw it, not once per glyph per picture.
#[test]
fn a_name_with_glyphs_the_font_lacks_is_drawn_with_stand_ins_and_logged_once() {
    use std::sync::{Arc, Mutex, PoisonError};
    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Buffer {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap_or_else(PoisonError::into_inner).extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut state = thaum_state();
    let players = state["state"]["players"].as_object_mut().expect("players");
    let sheet = players.remove("alice").expect("alice");
    players.insert("\u{2A6A5}\u{2A6B2} alice".to_owned(), sheet);
    let buffer = Buffer::default();
    let writer = buffer.clone();
    let subscriber = tracing_subscriber::fmt().with_writer(move || writer.clone()).finish();
    let board = Board::new();
    tracing::subscriber::with_default(subscriber, || {
        for _ in 0..3 {
            let picture = board.png(&state).expect("a name the font cannot draw still renders");
            assert_eq!(picture.width, thaum::WIDTH);
        }
    });
    let log = String::from_utf8_lossy(&buffer.0.lock().unwrap_or_else(PoisonError::into_inner)).into_owned();
    let lines: Vec<&str> = log.lines().filter(|l| l.contains("the board font lacks")).collect();
    assert_eq!(lines.len(), 1, "{log}");
    assert!(lines[0].contains("U+2A6A5") && lines[0].contains("U+2A6B2"), "{log}");
    // What usvg is given: the name with a stand-in for each glyph the font lacks.
    let (drawn, _) = raster::with_tofu(&svg(&state).expect("draws"));
    let stand_in = raster::stand_in();
    assert!(
        drawn.contains(&format!("{stand_in}{stand_in} alice")) && !drawn.contains('\u{2A6A5}'),
        "{drawn}"
    );
}

/// The players and wizards the tests' states name: their characters are theirs, not the
/// labels'.
const NAMED: &str = "alicebob carol Apprentice Pyromancer Stormcaller Geomancer";

/// Every character of a drawn text is one the shipped font has: ASCII, or in
/// [`font::NEEDED`] or [`font::LABELS`].
fn assert_drawable(svg: &str) {
    let texts = svg
        .split("<text")
        .skip(1)
        .filter_map(|t| t.split_once('>'))
        .map(|(_, rest)| rest.split_once("</text>").map_or(rest, |(text, _)| text));
    for text in texts {
        for c in text.chars().filter(|c| !c.is_ascii() && !NAMED.contains(*c)) {
            assert!(
                font::NEEDED.contains(c) || font::LABELS.contains(c),
                "`{c}` in `{text}` is not in the shipped font: add it to font::LABELS and scripts/subset-font.sh EXTRA"
            );
        }
    }
}

/// Every Chinese label, in every variant, uses only characters the font has (read from
/// the catalogue itself, so a label added there is checked before any state draws it).
#[test]
fn every_chinese_label_is_in_the_font() {
    let area = spellbridge_core::locale::AREAS.iter().find(|a| a.name == "board").expect("the board area");
    let mut in_label = false;
    for line in area.source(Language::ZhCn).lines() {
        if line.starts_with('#') {
            continue;
        }
        if let Some((id, _)) = line.split_once(" = ") {
            in_label = id.starts_with("board-label-");
        } else if !line.starts_with(' ') && !line.starts_with('}') {
            in_label = false;
        }
        if !in_label {
            continue;
        }
        let text = line.split_once(" = ").map_or(line, |(_, value)| value);
        let mut depth = 0;
        for c in text.chars() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                c if depth == 0 && !c.is_ascii() => assert!(
                    font::NEEDED.contains(c) || font::LABELS.contains(c),
                    "`{c}` of `{line}` is not in the shipped font: add it to font::LABELS and scripts/subset-font.sh EXTRA"
                ),
                _ => {}
            }
        }
        // A variant's text: `[3] 星期三`.
        if let Some((_, variant)) = line.trim_start().trim_start_matches('*').split_once("] ") {
            for c in variant.chars().filter(|c| !c.is_ascii()) {
                assert!(font::NEEDED.contains(c) || font::LABELS.contains(c), "`{c}` of `{line}`");
            }
        }
    }
}

#[test]
fn a_chinese_room_sees_chinese_labels() {
    let duel = svg_in(&duel_state(), Language::ZhCn).expect("draws");
    for label in [
        "决斗",
        "alice 对 bob",
        "第 2 回合",
        "胜利点数条：偏向 alice 7 点",
        "已施法",
        "尚未施法",
        "前 1 个元素位置被封印：",
        "第 1 回合：威力 13 · 3 级",
        "迸发",
        "专注",
    ] {
        assert!(duel.contains(label), "{label} in {duel}");
    }
    assert_drawable(&duel);
    let thaum = svg_in(&thaum_state(), Language::ZhCn).expect("draws");
    for label in [
        "魔素",
        "第 2 赛季 · 第 3 阶段",
        "循环不稳定度 4/9",
        "第 3 阶段于 2026-01-07（星期三）00:00 UTC 结束",
        "玩家",
        "法力",
        "金币",
    ] {
        assert!(thaum.contains(label), "{label} in {thaum}");
    }
    assert_drawable(&thaum);
    // English stays as it was.
    assert_eq!(svg(&duel_state()), svg_in(&duel_state(), Language::En));
    // No English word is drawn in the Chinese pictures but names.
    for drawn in [&duel, &thaum] {
        let words: Vec<&str> = drawn
            .split("<text")
            .skip(1)
            .filter_map(|t| {
                t.split_once('>').and_then(|(_, rest)| rest.split_once("</text>")).map(|(t, _)| t)
            })
            .flat_map(|t| t.split(|c: char| !c.is_ascii_alphabetic()))
            .filter(|w| !w.is_empty() && !NAMED.split(' ').any(|n| n.contains(w)) && *w != "UTC")
            .collect();
        assert!(words.is_empty(), "English in a Chinese picture: {words:?}");
    }
}

/// A game the daemon has never heard of: its public view keeps only `score`, and its
/// board is one text saying it.
struct Tally;

impl spellbridge_core::GamePlugin for Tally {
    fn name(&self) -> &'static str {
        "tally"
    }
    fn summary(&self) -> &'static str {
        "counts"
    }
    fn commands(&self) -> &'static [spellbridge_core::Command] {
        &[]
    }
    fn open(
        &self,
        _setup: &spellbridge_core::TableSetup,
    ) -> Result<Box<dyn spellbridge_core::Table>, spellbridge_core::Refusal> {
        Err(spellbridge_core::Refusal::because("not in this test"))
    }
    fn restore(&self, _snapshot: &Value) -> Result<Box<dyn spellbridge_core::Table>, String> {
        Err("not in this test".to_owned())
    }
    fn public_view(&self, state: &Value) -> Option<Value> {
        Some(json!({ "score": state["score"] }))
    }
    fn board(
        &self,
        public: &Value,
        _language: Language,
    ) -> Option<Result<spellbridge_core::draw::Drawing, String>> {
        let mut drawing = spellbridge_core::draw::Drawing::new(100, 40, Colour::Paper);
        drawing.text(
            4.0,
            30.0,
            20.0,
            Colour::Ink,
            spellbridge_core::draw::Anchor::Start,
            &public.to_string(),
        );
        Some(Ok(drawing))
    }
}

/// Issue 32: a game added to the registry gets a picture and a caption with no change
/// here, drawn from its public view only.
#[test]
fn a_new_game_is_drawn_from_its_public_view_with_no_daemon_change() {
    let board = Board::of(spellbridge_core::Registry::standard().register(Tally));
    let table = json!({"table": 4, "game": "tally", "state": {"score": 3, "secret": "hidden"}});
    let drawn = board.svg(&table).expect("the new game draws");
    assert!(drawn.contains(r#"{&quot;score&quot;:3}"#) && !drawn.contains("hidden"), "{drawn}");
    let picture = board.png(&table).expect("and renders");
    assert_eq!((picture.width, picture.height), (100, 40));
    assert_eq!(board.caption(&table, Language::En), "The tally board of table 4.");
    // The standard games' board does not know it.
    assert_eq!(svg(&table), Err(BoardError::UnknownGame("tally".into())));
}
