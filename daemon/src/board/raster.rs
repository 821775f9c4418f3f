//! SVG to PNG: resvg (usvg's parser, tiny-skia's renderer, all pure Rust) with only the
//! shipped font loaded, so rendering reads no file and no system font.
//!
//! A character the font lacks (a rare CJK ideograph in a player's name) is drawn as a
//! stand-in ([`stand_in`]: the box [`TOFU`] once the font has it, `?` until then) and
//! logged once per run with the others first seen in the same picture, never once per
//! glyph per picture (usvg would warn for every one it cannot draw, every time).

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use resvg::{tiny_skia, usvg};
use skrifa::MetadataProvider as _;

use super::BoardError;
use super::font;

/// A rendered picture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Picture {
    /// The PNG file.
    pub png: Vec<u8>,
    /// Its width in pixels.
    pub width: u32,
    /// Its height in pixels.
    pub height: u32,
}

/// What a character the font lacks is drawn as where the font has it: a white square.
/// The shipped subset does not have it yet (`scripts/subset-font.sh` adds it when the font
/// is next made); until then [`stand_in`] is `?`.
pub const TOFU: char = '□';

/// What a character the font lacks is drawn as: [`TOFU`] if the font has it, else `?`.
pub fn stand_in() -> char {
    if covered().contains(&TOFU) { TOFU } else { '?' }
}

/// Turns board SVGs into PNGs; holds the parsed font, so make one and keep it.
pub struct Rasteriser {
    options: usvg::Options<'static>,
}

/// The characters the shipped font has (its character map, read once).
fn covered() -> &'static BTreeSet<char> {
    static COVERED: OnceLock<BTreeSet<char>> = OnceLock::new();
    COVERED.get_or_init(|| {
        skrifa::FontRef::new(font::DATA)
            .map(|font| font.charmap().mappings().filter_map(|(code, _)| char::from_u32(code)).collect())
            .unwrap_or_default()
    })
}

/// The characters found missing from the font in this run, each logged once.
fn missing_seen() -> &'static Mutex<BTreeSet<char>> {
    static SEEN: OnceLock<Mutex<BTreeSet<char>>> = OnceLock::new();
    SEEN.get_or_init(|| Mutex::new(BTreeSet::new()))
}

/// `svg` with every character the font lacks as [`stand_in`] (markup is ASCII, which the font
/// has, so only text changes), and the characters of those not seen before in this run
/// (to log).
pub fn with_tofu(svg: &str) -> (String, BTreeSet<char>) {
    let covered = covered();
    let lacks = |c: char| !c.is_ascii_graphic() && !c.is_ascii_whitespace() && !covered.contains(&c);
    if !svg.chars().any(lacks) {
        return (svg.to_owned(), BTreeSet::new());
    }
    let mut missing = BTreeSet::new();
    let stand_in = stand_in();
    let drawn = svg
        .chars()
        .map(|c| {
            if lacks(c) {
                missing.insert(c);
                stand_in
            } else {
                c
            }
        })
        .collect();
    let mut seen = missing_seen().lock().unwrap_or_else(PoisonError::into_inner);
    missing.retain(|c| seen.insert(*c));
    (drawn, missing)
}

impl Default for Rasteriser {
    fn default() -> Self {
        Self::new()
    }
}

impl Rasteriser {
    /// A rasteriser with the shipped font as its only font.
    pub fn new() -> Rasteriser {
        let mut fonts = usvg::fontdb::Database::new();
        fonts.load_font_data(font::DATA.to_vec());
        fonts.set_sans_serif_family(font::FAMILY);
        let options = usvg::Options {
            font_family: font::FAMILY.to_owned(),
            fontdb: Arc::new(fonts),
            ..usvg::Options::default()
        };
        Rasteriser { options }
    }

    /// The PNG of an SVG document.
    pub fn png(&self, svg: &str) -> Result<Picture, BoardError> {
        let (svg, new_missing) = with_tofu(svg);
        if !new_missing.is_empty() {
            let characters: String =
                new_missing.iter().map(|c| format!("{c} (U+{:04X}) ", u32::from(*c))).collect();
            tracing::info!(
                count = new_missing.len(),
                characters = characters.trim_end(),
                "the board font lacks these characters; they are drawn as {} (logged once a run)",
                stand_in()
            );
        }
        let tree = usvg::Tree::from_str(&svg, &self.options).map_err(|e| BoardError::Svg(e.to_string()))?;
        let size = tree.size().to_int_size();
        let (width, height) = (size.width(), size.height());
        let mut pixmap = tiny_skia::Pixmap::new(width, height)
            .ok_or_else(|| BoardError::Raster(format!("a {width}×{height} picture cannot be made")))?;
        resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
        let png = encode(&pixmap).map_err(|e| BoardError::Raster(e.to_string()))?;
        Ok(Picture { png, width, height })
    }
}

/// The PNG of a rendered board: RGB with fdeflate's fast compression (a board is opaque,
/// drawn on a full background; tiny-skia's own encoder writes RGBA at the default level,
/// several times slower for a board). A picture with any transparency keeps its alpha.
fn encode(pixmap: &tiny_skia::Pixmap) -> Result<Vec<u8>, png::EncodingError> {
    if !pixmap.data().chunks_exact(4).all(|p| p[3] == u8::MAX) {
        return pixmap.encode_png();
    }
    // Opaque, so premultiplied and straight colours are the same.
    let mut rgb = Vec::with_capacity(pixmap.data().len() / 4 * 3);
    for pixel in pixmap.data().chunks_exact(4) {
        rgb.extend_from_slice(&pixel[..3]);
    }
    let mut out = Vec::with_capacity(rgb.len() / 8);
    {
        let mut encoder = png::Encoder::new(&mut out, pixmap.width(), pixmap.height());
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_compression(png::Compression::Fast);
        let mut writer = encoder.write_header()?;
        writer.write_image_data(&rgb)?;
        writer.finish()?;
    }
    Ok(out)
}
