//! A small SVG writer: a game's [`Drawing`] written as SVG, with every text escaped, in
//! the drawing's order and with rounded numbers so the same drawing gives the same text.

use std::fmt::Write as _;

use spellbridge_core::draw::{Anchor, Drawing, Shape};

use super::font::FAMILY;

/// How SVG names an anchor.
fn anchor_word(anchor: Anchor) -> &'static str {
    match anchor {
        Anchor::Start => "start",
        Anchor::Middle => "middle",
        Anchor::End => "end",
    }
}

/// A drawing as an SVG document, its text in the shipped font.
pub fn write(drawing: &Drawing) -> String {
    let mut svg = Svg::new(drawing.width, drawing.height, drawing.background.hex());
    for shape in &drawing.shapes {
        match shape {
            Shape::Rect { x, y, w, h, fill } => svg.rect(*x, *y, *w, *h, fill.hex()),
            Shape::Card { x, y, w, h, fill, stroke } => svg.card(*x, *y, *w, *h, fill.hex(), stroke.hex()),
            Shape::Line { from, to, stroke, width } => svg.line(*from, *to, stroke.hex(), *width),
            Shape::Dot { cx, cy, r, fill, stroke } => svg.dot(*cx, *cy, *r, fill.hex(), stroke.hex()),
            Shape::Text { x, y, size, fill, anchor, bold, text } => {
                svg.text_styled(*x, *y, *size, fill.hex(), *anchor, *bold, text)
            }
        }
    }
    svg.finish()
}

/// An SVG document being written.
struct Svg {
    out: String,
}

impl Svg {
    /// A `width` × `height` picture on a `background` fill.
    fn new(width: u32, height: u32, background: &str) -> Svg {
        let mut out = String::with_capacity(8 * 1024);
        let _ = write!(
            out,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="{FAMILY}">"#
        );
        out.push('\n');
        let mut svg = Svg { out };
        svg.rect(0.0, 0.0, f64::from(width), f64::from(height), background);
        svg
    }

    /// A filled rectangle.
    fn rect(&mut self, x: f64, y: f64, w: f64, h: f64, fill: &str) {
        let _ = writeln!(
            self.out,
            r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{fill}"/>"#,
            n(x),
            n(y),
            n(w),
            n(h)
        );
    }

    /// A filled rectangle with rounded corners and an outline.
    fn card(&mut self, x: f64, y: f64, w: f64, h: f64, fill: &str, stroke: &str) {
        let _ = writeln!(
            self.out,
            r#"<rect x="{}" y="{}" width="{}" height="{}" rx="6" fill="{fill}" stroke="{stroke}" stroke-width="1.5"/>"#,
            n(x),
            n(y),
            n(w),
            n(h)
        );
    }

    /// A straight line.
    fn line(&mut self, (x1, y1): (f64, f64), (x2, y2): (f64, f64), stroke: &str, width: f64) {
        let _ = writeln!(
            self.out,
            r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{stroke}" stroke-width="{}"/>"#,
            n(x1),
            n(y1),
            n(x2),
            n(y2),
            n(width)
        );
    }

    /// A filled circle (SVG `circle`).
    fn dot(&mut self, cx: f64, cy: f64, r: f64, fill: &str, stroke: &str) {
        let _ = writeln!(
            self.out,
            r#"<circle cx="{}" cy="{}" r="{}" fill="{fill}" stroke="{stroke}" stroke-width="2"/>"#,
            n(cx),
            n(cy),
            n(r)
        );
    }

    /// Text at (x, y) (y is the baseline), `size` pixels high, bold or not.
    #[allow(clippy::too_many_arguments)]
    fn text_styled(&mut self, x: f64, y: f64, size: f64, fill: &str, anchor: Anchor, bold: bool, text: &str) {
        let weight = if bold { r#" font-weight="bold""# } else { "" };
        let _ = writeln!(
            self.out,
            r#"<text x="{}" y="{}" font-size="{}" fill="{fill}" text-anchor="{}"{weight}>{}</text>"#,
            n(x),
            n(y),
            n(size),
            anchor_word(anchor),
            escape(text)
        );
    }

    /// The finished document.
    fn finish(mut self) -> String {
        self.out.push_str("</svg>\n");
        self.out
    }
}

/// A coordinate as the SVG writes it: at most one decimal, no trailing `.0`.
fn n(value: f64) -> String {
    let tenths = (value * 10.0).round() / 10.0;
    if tenths.fract() == 0.0 { format!("{}", tenths as i64) } else { format!("{tenths:.1}") }
}

/// Text made safe inside an XML element: `&`, `<`, `>` escaped, and control characters
/// (which XML 1.0 does not allow) dropped.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_control_characters_dropped() {
        assert_eq!(escape("<b>&\"x\"\u{7}"), "&lt;b&gt;&amp;&quot;x&quot;");
    }

    #[test]
    fn numbers_are_short_and_stable() {
        assert_eq!(n(3.0), "3");
        assert_eq!(n(2.25), "2.3");
        assert_eq!(n(-0.04), "0");
    }
}
