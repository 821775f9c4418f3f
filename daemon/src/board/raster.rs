//! SVG to PNG: resvg (usvg's parser, tiny-skia's renderer, all pure Rust) with only the
//! shipped font loaded, so rendering reads no file and no system font.

use std::sync::Arc;

use resvg::{tiny_skia, usvg};

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

/// Turns board SVGs into PNGs; holds the parsed font, so make one and keep it.
pub struct Rasteriser {
    options: usvg::Options<'static>,
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
        let tree = usvg::Tree::from_str(svg, &self.options).map_err(|e| BoardError::Svg(e.to_string()))?;
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
