//! A small drawing vocabulary for board pictures: a [`Drawing`] is a list of
//! [`Shape`]s (rectangles, cards, lines, dots, text) on a canvas, in the named colours
//! of one [`Colour`] palette. A game draws its board in it
//! ([`GamePlugin::board`](crate::plugin::GamePlugin::board)); the daemon writes it as
//! SVG and rasterises it. Pure data: no fonts, files or pixels here.

use serde::{Deserialize, Serialize};

/// The boards' colours: the neutral ones of the paper and panels, and one per element
/// (as the chat announcements colour them) or Thaum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Colour {
    /// The picture's background.
    Paper,
    /// A panel's fill.
    Panel,
    /// Outlines and tracks.
    Line,
    /// A faint rule between rows.
    Rule,
    /// Body text.
    Ink,
    /// Secondary text.
    Muted,
    /// Text on a coloured chip.
    OnChip,
    /// A track's marker.
    Marker,
    /// Water (blue).
    Water,
    /// Fire (red).
    Fire,
    /// Thunder (gold).
    Thunder,
    /// Wind (green).
    Wind,
    /// Earth (brown).
    Earth,
    /// Void (slate).
    Void,
    /// Air (teal).
    Air,
}

impl Colour {
    /// The colour as `#rrggbb`.
    pub fn hex(self) -> &'static str {
        match self {
            Colour::Paper => "#f7f3ea",
            Colour::Panel => "#ffffff",
            Colour::Line => "#9a9184",
            Colour::Rule => "#e4ded2",
            Colour::Ink => "#222222",
            Colour::Muted => "#6b6459",
            Colour::OnChip => "#ffffff",
            Colour::Marker => "#7a2bb8",
            Colour::Water => "#2f6fd6",
            Colour::Fire => "#d63a2f",
            Colour::Thunder => "#c99a00",
            Colour::Wind => "#2f9e4f",
            Colour::Earth => "#8b5a2b",
            Colour::Void => "#5c5c6e",
            Colour::Air => "#3aa5b5",
        }
    }

    /// The (r, g, b) of the colour, for tests that read pixels back.
    pub fn rgb(self) -> (u8, u8, u8) {
        let hex = self.hex();
        let byte = |i: usize| u8::from_str_radix(hex.get(i..i + 2).unwrap_or("00"), 16).unwrap_or(0);
        (byte(1), byte(3), byte(5))
    }
}

/// How text is anchored at its x.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Anchor {
    /// x is where the text starts.
    Start,
    /// x is the text's middle.
    Middle,
    /// x is where the text ends.
    End,
}

/// One thing drawn. Coordinates are pixels from the top left; a text's y is its baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    /// A filled rectangle.
    Rect {
        /// Left.
        x: f64,
        /// Top.
        y: f64,
        /// Width.
        w: f64,
        /// Height.
        h: f64,
        /// Fill.
        fill: Colour,
    },
    /// A filled rectangle with rounded corners and an outline.
    Card {
        /// Left.
        x: f64,
        /// Top.
        y: f64,
        /// Width.
        w: f64,
        /// Height.
        h: f64,
        /// Fill.
        fill: Colour,
        /// Outline.
        stroke: Colour,
    },
    /// A straight line.
    Line {
        /// Where it starts.
        from: (f64, f64),
        /// Where it ends.
        to: (f64, f64),
        /// Its colour.
        stroke: Colour,
        /// Its width.
        width: f64,
    },
    /// A filled circle with an outline.
    Dot {
        /// Centre x.
        cx: f64,
        /// Centre y.
        cy: f64,
        /// Radius.
        r: f64,
        /// Fill.
        fill: Colour,
        /// Outline.
        stroke: Colour,
    },
    /// A line of text.
    Text {
        /// x, as `anchor` says.
        x: f64,
        /// The baseline.
        y: f64,
        /// Pixels high.
        size: f64,
        /// Its colour.
        fill: Colour,
        /// How it stands at x.
        anchor: Anchor,
        /// Bold or regular.
        bold: bool,
        /// What it says.
        text: String,
    },
}

/// A picture: its size, its background and its shapes, drawn in order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Drawing {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// The background's colour.
    pub background: Colour,
    /// The shapes, the first drawn first.
    pub shapes: Vec<Shape>,
}

impl Drawing {
    /// An empty `width` × `height` picture on `background`.
    pub fn new(width: u32, height: u32, background: Colour) -> Drawing {
        Drawing { width, height, background, shapes: Vec::new() }
    }

    /// A filled rectangle.
    pub fn rect(&mut self, x: f64, y: f64, w: f64, h: f64, fill: Colour) {
        self.shapes.push(Shape::Rect { x, y, w, h, fill });
    }

    /// A filled rectangle with rounded corners and an outline.
    pub fn card(&mut self, x: f64, y: f64, w: f64, h: f64, fill: Colour, stroke: Colour) {
        self.shapes.push(Shape::Card { x, y, w, h, fill, stroke });
    }

    /// A straight line.
    pub fn line(&mut self, from: (f64, f64), to: (f64, f64), stroke: Colour, width: f64) {
        self.shapes.push(Shape::Line { from, to, stroke, width });
    }

    /// A filled circle with an outline.
    pub fn dot(&mut self, cx: f64, cy: f64, r: f64, fill: Colour, stroke: Colour) {
        self.shapes.push(Shape::Dot { cx, cy, r, fill, stroke });
    }

    /// Regular text at (x, y), `size` pixels high.
    pub fn text(&mut self, x: f64, y: f64, size: f64, fill: Colour, anchor: Anchor, text: &str) {
        self.shapes.push(Shape::Text { x, y, size, fill, anchor, bold: false, text: text.to_owned() });
    }

    /// Bold text.
    pub fn bold(&mut self, x: f64, y: f64, size: f64, fill: Colour, anchor: Anchor, text: &str) {
        self.shapes.push(Shape::Text { x, y, size, fill, anchor, bold: true, text: text.to_owned() });
    }
}

/// Shortens a name to at most `max` characters, ending it with `…` when cut.
pub fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_are_clipped() {
        assert_eq!(clip("alice", 10), "alice");
        assert_eq!(clip("abcdefghijkl", 5), "abcd…");
    }

    #[test]
    fn colours_read_back_as_rgb() {
        assert_eq!(Colour::Fire.rgb(), (0xd6, 0x3a, 0x2f));
        assert_eq!(Colour::Panel.rgb(), (255, 255, 255));
    }
}
