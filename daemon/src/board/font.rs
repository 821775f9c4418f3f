//! The font every board picture is drawn in, shipped inside the binary so a picture looks
//! the same on every machine (no system fonts are read).
//!
//! `NotoSansSC-board.otf` is a subset of Noto Sans CJK SC Regular (SIL Open Font License
//! 1.1, `font/OFL.txt`): Latin-1, digits, common punctuation, arrows and the element
//! glyphs 水 火 雷 风 土 虚 无. `scripts/subset-font.sh` regenerates it; add a glyph there
//! before drawing it (a glyph the font lacks is drawn as nothing).

/// The font file (OpenType, CFF outlines).
pub const DATA: &[u8] = include_bytes!("font/NotoSansSC-board.otf");

/// The family name the SVG asks for; the font's own name.
pub const FAMILY: &str = "Noto Sans CJK SC";

/// Every character the font has besides ASCII that the boards draw, so a test can check
/// the font still has them after it is regenerated.
pub const NEEDED: &str = "水火雷风土虚无·–—…→←×";
