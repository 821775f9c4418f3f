//! A component's board picture: the SVG its `board` export returns, read element by
//! element into core's drawing vocabulary ([`Drawing`]), which the daemon writes as SVG
//! and rasterises itself, as it does a built-in game's board. Only what the vocabulary
//! has is read — `<svg width height>` holding `<rect>` (with `rx`: a card), `<line>`,
//! `<circle>` and `<text>`, in the palette's colours — and anything else is refused by
//! name, so a hostile component's SVG can carry no script, external reference, style,
//! foreign object or entity onto the site or into Matrix: none of its bytes are passed on.

use spellbridge_core::draw::{Anchor, Colour, Drawing, Shape};

/// The most bytes of SVG, shapes and pixels a side a component's board may have.
const MOST_SVG: usize = 64 << 10;
const MOST_SHAPES: usize = 2000;
const MOST_SIDE: u32 = 2000;
const LONGEST_TEXT: usize = 200;

/// Every colour of the palette, for reading a `fill` or `stroke`.
const PALETTE: [Colour; 15] = [
    Colour::Paper,
    Colour::Panel,
    Colour::Line,
    Colour::Rule,
    Colour::Ink,
    Colour::Muted,
    Colour::OnChip,
    Colour::Marker,
    Colour::Water,
    Colour::Fire,
    Colour::Thunder,
    Colour::Wind,
    Colour::Earth,
    Colour::Void,
    Colour::Air,
];

/// The component's SVG as a drawing, or what in it is not one.
pub fn drawing(svg: &str) -> Result<Drawing, String> {
    if svg.len() > MOST_SVG {
        return Err(format!("its board is {} bytes of SVG; at most {MOST_SVG}", svg.len()));
    }
    let document = roxmltree::Document::parse(svg).map_err(|e| format!("its board is not SVG: {e}"))?;
    let root = document.root_element();
    if root.tag_name().name() != "svg" {
        return Err(format!("its board is a <{}>, not an <svg>", root.tag_name().name()));
    }
    allowed(&root, &["width", "height"])?;
    let side = |name: &str| -> Result<u32, String> {
        let value = number(&root, name)?;
        if value < 1.0 || value > f64::from(MOST_SIDE) || value.fract() != 0.0 {
            return Err(format!("its board's {name} is {value}; a whole number from 1 to {MOST_SIDE}"));
        }
        Ok(value as u32)
    };
    let mut drawing = Drawing::new(side("width")?, side("height")?, Colour::Paper);
    for node in root.children() {
        if node.is_text() && node.text().is_some_and(|t| t.trim().is_empty()) || node.is_comment() {
            continue;
        }
        if !node.is_element() {
            return Err("its board has text or markup outside the shapes".to_owned());
        }
        if drawing.shapes.len() == MOST_SHAPES {
            return Err(format!("its board has more than {MOST_SHAPES} shapes"));
        }
        drawing.shapes.push(shape(&node)?);
    }
    Ok(drawing)
}

fn shape(node: &roxmltree::Node<'_, '_>) -> Result<Shape, String> {
    let name = node.tag_name().name();
    if node.tag_name().namespace().is_some_and(|ns| ns != "http://www.w3.org/2000/svg") {
        return Err(format!("its board has a <{name}> from another namespace"));
    }
    if name != "text" && node.has_children() {
        return Err(format!("its board's <{name}> has content; only <text> has (its words)"));
    }
    let n = |attribute: &str| number(node, attribute);
    Ok(match name {
        "rect" => {
            allowed(node, &["x", "y", "width", "height", "rx", "fill", "stroke"])?;
            let (x, y, w, h) = (n("x")?, n("y")?, n("width")?, n("height")?);
            let fill = colour(node, "fill")?;
            if node.has_attribute("rx") || node.has_attribute("stroke") {
                Shape::Card { x, y, w, h, fill, stroke: colour(node, "stroke")? }
            } else {
                Shape::Rect { x, y, w, h, fill }
            }
        }
        "line" => {
            allowed(node, &["x1", "y1", "x2", "y2", "stroke", "stroke-width"])?;
            let width = if node.has_attribute("stroke-width") { n("stroke-width")? } else { 1.0 };
            Shape::Line {
                from: (n("x1")?, n("y1")?),
                to: (n("x2")?, n("y2")?),
                stroke: colour(node, "stroke")?,
                width,
            }
        }
        "circle" => {
            allowed(node, &["cx", "cy", "r", "fill", "stroke"])?;
            Shape::Dot {
                cx: n("cx")?,
                cy: n("cy")?,
                r: n("r")?,
                fill: colour(node, "fill")?,
                stroke: colour(node, "stroke")?,
            }
        }
        "text" => {
            allowed(node, &["x", "y", "font-size", "fill", "text-anchor", "font-weight"])?;
            if node.children().any(|child| !child.is_text()) {
                return Err("its board's <text> holds markup; only words".to_owned());
            }
            let text: String = node.text().unwrap_or_default().chars().take(LONGEST_TEXT).collect();
            let anchor = match node.attribute("text-anchor") {
                None | Some("start") => Anchor::Start,
                Some("middle") => Anchor::Middle,
                Some("end") => Anchor::End,
                Some(other) => {
                    return Err(format!("its board's text-anchor {other:?}; start, middle or end"));
                }
            };
            let bold = match node.attribute("font-weight") {
                None | Some("normal") => false,
                Some("bold") => true,
                Some(other) => return Err(format!("its board's font-weight {other:?}; normal or bold")),
            };
            let size = if node.has_attribute("font-size") { n("font-size")? } else { 16.0 };
            Shape::Text { x: n("x")?, y: n("y")?, size, fill: colour(node, "fill")?, anchor, bold, text }
        }
        other => {
            return Err(format!("its board has a <{other}>; a board draws only rect, line, circle and text"));
        }
    })
}

/// Refuses any attribute but `names` (no `href`, `style`, `on…`, `class`).
fn allowed(node: &roxmltree::Node<'_, '_>, names: &[&str]) -> Result<(), String> {
    for attribute in node.attributes() {
        if attribute.namespace().is_some() || !names.contains(&attribute.name()) {
            return Err(format!(
                "its board's <{}> has the attribute `{}`; it may have {}",
                node.tag_name().name(),
                attribute.name(),
                names.join(", ")
            ));
        }
    }
    Ok(())
}

fn number(node: &roxmltree::Node<'_, '_>, name: &str) -> Result<f64, String> {
    let element = node.tag_name().name();
    let text = node.attribute(name).ok_or_else(|| format!("its board's <{element}> has no {name}"))?;
    let value: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("its board's <{element}> {name} {text:?} is not a number"))?;
    if !value.is_finite() || value.abs() > 100_000.0 {
        return Err(format!("its board's <{element}> {name} {text:?} is out of range"));
    }
    Ok(value)
}

/// A `fill` or `stroke`: one of the palette's colours, by `#rrggbb` or by name (`fire`).
fn colour(node: &roxmltree::Node<'_, '_>, name: &str) -> Result<Colour, String> {
    let element = node.tag_name().name();
    let text = node.attribute(name).ok_or_else(|| format!("its board's <{element}> has no {name}"))?;
    let wanted = text.trim().to_ascii_lowercase();
    PALETTE
        .into_iter()
        .find(|c| c.hex() == wanted || serde_json::to_value(c).ok().and_then(|v| v.as_str().map(str::to_owned)).as_deref() == Some(wanted.as_str()))
        .ok_or_else(|| format!("its board's <{element}> {name} {text:?} is not one of the palette's colours (core/src/draw.rs)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_board_in_the_vocabulary_is_read_and_anything_else_is_refused_by_name() {
        let good = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100\" height=\"50\">\
                    <rect x=\"0\" y=\"0\" width=\"10\" height=\"10\" fill=\"fire\"/>\
                    <circle cx=\"5\" cy=\"5\" r=\"2\" fill=\"#8b5a2b\" stroke=\"ink\"/>\
                    <text x=\"1\" y=\"9\" fill=\"ink\" font-weight=\"bold\">a &lt;b&gt;</text></svg>";
        let read = drawing(good).expect("read");
        assert_eq!((read.width, read.height, read.shapes.len()), (100, 50, 3));
        assert!(matches!(&read.shapes[2], Shape::Text { text, bold: true, .. } if text == "a <b>"));
        let svg = |inner: &str| {
            format!("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\">{inner}</svg>")
        };
        let hostile = [
            (svg("<script>alert(1)</script>"), "<script>"),
            (svg("<foreignObject/>"), "<foreignObject>"),
            (svg("<image href=\"http://evil.example/x.png\"/>"), "<image>"),
            (svg("<rect x=\"0\" y=\"0\" width=\"1\" height=\"1\" fill=\"ink\" onload=\"x()\"/>"), "`onload`"),
            (svg("<rect x=\"0\" y=\"0\" width=\"1\" height=\"1\" fill=\"url(#g)\"/>"), "palette"),
            (svg("<rect x=\"0\" y=\"0\" width=\"1\" height=\"1\" fill=\"ink\" style=\"x\"/>"), "`style`"),
            (svg("<text x=\"0\" y=\"0\" fill=\"ink\"><a href=\"x\">hi</a></text>"), "markup"),
            ("<!DOCTYPE svg [<!ENTITY x \"y\">]><svg width=\"1\" height=\"1\"/>".to_owned(), "not SVG"),
            ("<svg width=\"99999\" height=\"1\"/>".to_owned(), "width"),
            ("<html/>".to_owned(), "not an <svg>"),
            ("x".repeat(MOST_SVG + 1), "bytes of SVG"),
        ];
        for (text, why) in hostile {
            let error = drawing(&text).expect_err("refused");
            assert!(error.contains(why), "{why}: {error}");
        }
    }
}
