//! The font every board picture is drawn in, shipped inside the binary so a picture looks
//! the same on every machine (no system fonts are read).
//!
//! `NotoSansSC-board.otf` is a subset of Noto Sans CJK SC Regular (SIL Open Font License
//! 1.1, `font/OFL.txt`): Latin-1, digits, common punctuation, arrows, the element
//! glyphs 水 火 雷 风 土 虚 无, and the characters of the Chinese labels
//! (`locales/zh-CN/board.ftl`, [`LABELS`]). `scripts/subset-font.sh` regenerates it; add
//! a glyph there before drawing it (a glyph the font lacks is drawn as a stand-in and
//! logged once: [`super::raster`]).

/// The font file (OpenType, CFF outlines).
pub const DATA: &[u8] = include_bytes!("font/NotoSansSC-board.otf");

/// The family name the SVG asks for; the font's own name.
pub const FAMILY: &str = "Noto Sans CJK SC";

/// Every character the font has besides ASCII that the boards draw, so a test can check
/// the font still has them after it is regenerated.
pub const NEEDED: &str = "水火雷风土虚无·–—…→←×";

/// Every character of the Chinese pictures' labels (`locales/zh-CN/board.ftl`, and the
/// Duel's tokens as Chinese players type them), so a test can check the font has each
/// and that no label uses one it lacks. The same list is `EXTRA` in
/// `scripts/subset-font.sh`.
pub const LABELS: &str = "一三下不专个中主二于五人位偏停元入六决利制前力加协印反发合后向四回土威子季定家对封尚局已币师平度张循打持数斗断施无日时星有期未本术束条桌止段水没法注火点玩环的稳第算素级终结置者胜获虚被调赛超输过还这迸速金阶雷风魔（）：";
