//! Matrix message formatting, with no I/O: [`render`] turns a [`RichText`] into the
//! plain `body`, the `org.matrix.custom.html` `formatted_body` and the users to list in
//! `m.mentions`; [`html_to_text`] and [`strip_reply_fallback`] reduce an inbound message
//! to the text the command parser reads.
//!
//! HTML follows the spec's allowed subset (client-server API, "m.room.message msgtypes"):
//! `<strong>`, `<em>`, `<code>`, `<br>`, `<font color data-mx-color>` for game colours,
//! and mentions as pills, `<a href="https://matrix.to/#/@user:server">name</a>`.

use matrix_sdk::ruma::UserId;
use spellbridge_core::RichText;
use spellbridge_core::text::{Hue, Segment, Style};

/// A message ready to send.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rendered {
    /// The plain `body`: mentions as display names, code in backticks.
    pub plain: String,
    /// The `formatted_body` in `org.matrix.custom.html`.
    pub html: String,
    /// The user ids mentioned, in order, each once (for `m.mentions.user_ids`).
    pub mentions: Vec<String>,
}

/// The colour a hue is drawn in: mid-tone, readable on light and dark themes.
pub fn hue_colour(hue: Hue) -> &'static str {
    match hue {
        Hue::Red => "#d23c3c",
        Hue::Blue => "#3c78d8",
        Hue::Brown => "#a0693c",
        Hue::Green => "#3c9a50",
        Hue::Yellow => "#c8a000",
        Hue::Grey => "#8c8c8c",
    }
}

/// Renders rich text. `name_of` gives the display name to show for a mentioned Matrix
/// user (the transport looks it up in the room); a mention that is not a valid Matrix
/// user id (a player from another network) is written as plain text, without a pill.
pub fn render(text: &RichText, name_of: impl Fn(&str) -> Option<String>) -> Rendered {
    let mut plain = String::new();
    let mut html = String::new();
    let mut mentions: Vec<String> = Vec::new();
    for segment in text.segments() {
        match segment {
            Segment::Text { text, style } => {
                let (open, close) = match style {
                    Style::Plain => ("", ""),
                    Style::Bold => ("<strong>", "</strong>"),
                    Style::Italic => ("<em>", "</em>"),
                    Style::Code => ("<code>", "</code>"),
                };
                if *style == Style::Code {
                    plain.push('`');
                    push_plain(&mut plain, text);
                    plain.push('`');
                } else {
                    push_plain(&mut plain, text);
                }
                html.push_str(open);
                push_escaped(&mut html, text);
                html.push_str(close);
            }
            Segment::Coloured { text, hue } => {
                let colour = hue_colour(*hue);
                push_plain(&mut plain, text);
                html.push_str(&format!("<font color=\"{colour}\" data-mx-color=\"{colour}\">"));
                push_escaped(&mut html, text);
                html.push_str("</font>");
            }
            Segment::Mention(player) => {
                let id = player.as_str();
                if UserId::parse(id).is_ok() {
                    let name = name_of(id).filter(|n| !n.trim().is_empty()).unwrap_or_else(|| id.to_owned());
                    push_plain(&mut plain, &name);
                    html.push_str("<a href=\"https://matrix.to/#/");
                    push_escaped(&mut html, id);
                    html.push_str("\">");
                    push_escaped(&mut html, &name);
                    html.push_str("</a>");
                    if !mentions.iter().any(|m| m == id) {
                        mentions.push(id.to_owned());
                    }
                } else {
                    push_plain(&mut plain, id);
                    push_escaped(&mut html, id);
                }
            }
        }
    }
    Rendered { plain, html, mentions }
}

/// Appends text to a plain body, dropping control characters other than newline and tab.
fn push_plain(out: &mut String, text: &str) {
    out.extend(text.chars().filter(|c| !c.is_control() || *c == '\n' || *c == '\t'));
}

/// Appends text to HTML: escaped, newlines as `<br>`, other control characters dropped.
fn push_escaped(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' => out.push_str("<br>"),
            '\t' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
}

/// Elements whose content is not text to read: the reply quote (`<mx-reply>`, which the
/// spec tells clients to drop) and anything a sender should not have put in.
const SKIPPED: [&str; 4] = ["mx-reply", "script", "style", "head"];

/// Elements that start and end a line.
const BLOCKS: [&str; 19] = [
    "p",
    "div",
    "li",
    "ul",
    "ol",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "blockquote",
    "pre",
    "tr",
    "table",
    "hr",
    "details",
    "summary",
    "dd",
];

/// Reduces `org.matrix.custom.html` to plain text: tags dropped (their text kept), the
/// reply quote dropped, `<br>` and block elements as line breaks, entities decoded, runs
/// of whitespace collapsed outside `<pre>`. Linear in the input; never fails (a stray `<`
/// is text).
pub fn html_to_text(html: &str) -> String {
    let mut out = Text::default();
    let mut skipping: Option<(String, usize)> = None;
    let mut pre = 0usize;
    let mut rest = html;
    while !rest.is_empty() {
        let Some(open) = rest.find('<') else {
            if skipping.is_none() {
                out.push_text(&decode_entities(rest), pre > 0);
            }
            break;
        };
        if skipping.is_none() {
            out.push_text(&decode_entities(&rest[..open]), pre > 0);
        }
        rest = &rest[open..];
        if let Some(comment) = rest.strip_prefix("<!--") {
            rest = comment.find("-->").map_or("", |end| &comment[end + 3..]);
            continue;
        }
        let Some(tag) = Tag::parse(rest) else {
            // A `<` that does not start a tag is text.
            if skipping.is_none() {
                out.push_text("<", pre > 0);
            }
            rest = &rest[1..];
            continue;
        };
        rest = &rest[tag.len..];
        if let Some((name, depth)) = &mut skipping {
            if tag.name == *name {
                if tag.closing {
                    *depth -= 1;
                    if *depth == 0 {
                        skipping = None;
                    }
                } else if !tag.self_closing {
                    *depth += 1;
                }
            }
            continue;
        }
        match tag.name.as_str() {
            name if SKIPPED.contains(&name) && !tag.closing && !tag.self_closing => {
                skipping = Some((tag.name.clone(), 1));
            }
            "br" => out.newline(true),
            name if BLOCKS.contains(&name) => {
                if name == "pre" {
                    pre = if tag.closing { pre.saturating_sub(1) } else { pre + 1 };
                }
                out.newline(false);
            }
            _ => {}
        }
    }
    out.finish()
}

/// Plain text being built from HTML.
#[derive(Default)]
struct Text {
    out: String,
    /// A collapsed space waits to be written before the next word.
    space: bool,
}

impl Text {
    fn push_text(&mut self, text: &str, preformatted: bool) {
        if preformatted {
            self.flush_space();
            self.out.push_str(text);
            return;
        }
        for c in text.chars() {
            if c.is_whitespace() {
                self.space = !self.out.is_empty() && !self.out.ends_with('\n');
            } else if !c.is_control() {
                self.flush_space();
                self.out.push(c);
            }
        }
    }

    fn flush_space(&mut self) {
        if std::mem::take(&mut self.space) {
            self.out.push(' ');
        }
    }

    /// Ends the line: always for `<br>`, only if something is on it for a block edge.
    fn newline(&mut self, always: bool) {
        self.space = false;
        if always || !(self.out.is_empty() || self.out.ends_with('\n')) {
            self.out.push('\n');
        }
    }

    fn finish(self) -> String {
        let lines: Vec<&str> = self.out.lines().map(str::trim_end).collect();
        lines.join("\n").trim().to_owned()
    }
}

/// One start or end tag.
struct Tag {
    /// Lower-case element name.
    name: String,
    closing: bool,
    self_closing: bool,
    /// Bytes from `<` to `>` inclusive.
    len: usize,
}

impl Tag {
    /// Reads a tag at the start of `text` (which starts with `<`); `None` if it is not
    /// one (no name right after `<` or `</`, or no closing `>`).
    fn parse(text: &str) -> Option<Tag> {
        let inner = &text[1..];
        let (closing, inner) = match inner.strip_prefix('/') {
            Some(after) => (true, after),
            None => (false, inner),
        };
        let name_len = inner.find(|c: char| !(c.is_ascii_alphanumeric() || c == '-')).unwrap_or(inner.len());
        if name_len == 0 || !inner.starts_with(|c: char| c.is_ascii_alphabetic()) {
            return None;
        }
        let end = quoted_aware_end(&inner[name_len..])?;
        let body = &inner[name_len..name_len + end];
        Some(Tag {
            name: inner[..name_len].to_ascii_lowercase(),
            closing,
            self_closing: body.trim_end().ends_with('/'),
            len: 1 + usize::from(closing) + name_len + end + 1,
        })
    }
}

/// Where the `>` that ends a tag's attributes is, skipping `>` inside quoted values.
fn quoted_aware_end(attributes: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    for (i, c) in attributes.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '>') => return Some(i),
            (None, '<') => return None,
            (None, _) => {}
        }
    }
    None
}

/// Decodes the HTML entities a Matrix client writes (`&amp;` `&lt;` `&gt;` `&quot;`
/// `&apos;` `&nbsp;` and numeric ones); anything else stays as written.
fn decode_entities(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let decoded = rest.get(1..).and_then(|after| {
            let semi = after.find(';').filter(|&s| s > 0 && s <= 10)?;
            let entity = &after[..semi];
            let c = match entity {
                "amp" => '&',
                "lt" => '<',
                "gt" => '>',
                "quot" => '"',
                "apos" => '\'',
                "nbsp" => ' ',
                _ => {
                    let number = entity.strip_prefix('#')?;
                    let code = match number.strip_prefix(['x', 'X']) {
                        Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                        None => number.parse().ok()?,
                    };
                    char::from_u32(code).filter(|c| !c.is_control() || *c == '\n')?
                }
            };
            Some((c, semi + 2))
        });
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Removes the quoted fallback an older client puts before a reply's own text
/// (`> <@alice:example.org> original\n> more\n\nthe reply`). Call it only for messages
/// that are replies: a message that merely starts with `>` is left alone otherwise.
pub fn strip_reply_fallback(body: &str) -> &str {
    if !body.starts_with("> ") {
        return body;
    }
    let mut rest = body;
    while rest.starts_with('>') {
        rest = rest.split_once('\n').map_or("", |(_, after)| after);
    }
    rest.strip_prefix('\n').unwrap_or(rest)
}

#[cfg(test)]
mod tests {
    use spellbridge_core::PlayerId;

    use super::*;

    fn names(id: &str) -> Option<String> {
        (id == "@bob:localhost").then(|| "Bob <the Bold>".to_owned())
    }

    #[test]
    fn styles_become_their_html_elements_and_code_keeps_backticks_in_plain() {
        let text = RichText::new().bold("Fire").text(" & ").italic("Water").text(": type ").code("!cast <x>");
        let out = render(&text, names);
        assert_eq!(out.plain, "Fire & Water: type `!cast <x>`");
        assert_eq!(out.html, "<strong>Fire</strong> &amp; <em>Water</em>: type <code>!cast &lt;x&gt;</code>");
        assert!(out.mentions.is_empty());
    }

    #[test]
    fn colours_are_font_tags_with_both_colour_attributes() {
        let out = render(&RichText::new().coloured("Thunder", Hue::Yellow), names);
        assert_eq!(out.plain, "Thunder");
        assert_eq!(out.html, "<font color=\"#c8a000\" data-mx-color=\"#c8a000\">Thunder</font>");
    }

    #[test]
    fn mentions_are_pills_with_the_display_name_and_are_listed_once() {
        let bob = PlayerId::new("@bob:localhost");
        let text = RichText::new().mention(&bob).text(", your move. ").mention(&bob);
        let out = render(&text, names);
        assert_eq!(out.plain, "Bob <the Bold>, your move. Bob <the Bold>");
        let pill = "<a href=\"https://matrix.to/#/@bob:localhost\">Bob &lt;the Bold&gt;</a>";
        assert_eq!(out.html, format!("{pill}, your move. {pill}"));
        assert_eq!(out.mentions, ["@bob:localhost"]);
    }

    #[test]
    fn mentions_without_a_name_show_the_id_and_non_matrix_players_are_plain() {
        let text = RichText::new()
            .mention(&PlayerId::new("@carol:localhost"))
            .text(" and ")
            .mention(&PlayerId::new("dave"));
        let out = render(&text, names);
        assert_eq!(out.plain, "@carol:localhost and dave");
        assert_eq!(
            out.html,
            "<a href=\"https://matrix.to/#/@carol:localhost\">@carol:localhost</a> and dave"
        );
        assert_eq!(out.mentions, ["@carol:localhost"]);
    }

    #[test]
    fn newlines_become_breaks_and_control_characters_are_dropped() {
        let out = render(&RichText::new().text("a\nb\u{7}c\rd"), names);
        assert_eq!(out.plain, "a\nbcd");
        assert_eq!(out.html, "a<br>bcd");
    }

    #[test]
    fn html_is_reduced_to_its_text() {
        assert_eq!(html_to_text("<p>!games</p>"), "!games");
        assert_eq!(html_to_text("<strong>!cast</strong>   <em>fire</em>"), "!cast fire");
        assert_eq!(html_to_text("a<br>b<br/>c"), "a\nb\nc");
        assert_eq!(html_to_text("<p>one</p><p>two</p>"), "one\ntwo");
        assert_eq!(html_to_text("<ul><li>x</li><li>y</li></ul>"), "x\ny");
        assert_eq!(html_to_text("!duel <a href=\"https://matrix.to/#/@bob:localhost\">Bob</a>"), "!duel Bob");
        assert_eq!(html_to_text("<pre><code>a  b\n c</code></pre>"), "a  b\n c");
    }

    #[test]
    fn entities_are_decoded_and_unknown_ones_kept() {
        assert_eq!(html_to_text("&lt;x&gt; &amp; &quot;y&quot; &#39;z&#x27; &nbsp;"), "<x> & \"y\" 'z'");
        assert_eq!(html_to_text("&bogus; &; & &#xZZ; &#1114112;"), "&bogus; &; & &#xZZ; &#1114112;");
    }

    #[test]
    fn reply_quotes_comments_and_scripts_are_dropped() {
        let html = "<mx-reply><blockquote><a href=\"x\">In reply to</a> <mx-reply>nested</mx-reply>hi</blockquote></mx-reply>!join";
        assert_eq!(html_to_text(html), "!join");
        assert_eq!(html_to_text("<!-- hidden -->!a<script>alert(1)</script>"), "!a");
    }

    #[test]
    fn stray_angle_brackets_are_text() {
        assert_eq!(html_to_text("1 < 2 and 3 > 2"), "1 < 2 and 3 > 2");
        assert_eq!(html_to_text("<3 you"), "<3 you");
        assert_eq!(html_to_text("a <b"), "a <b");
        assert_eq!(html_to_text("<a title=\"x>y\">link</a>"), "link");
        assert_eq!(html_to_text("<!-- never closed"), "");
    }

    #[test]
    fn reply_fallbacks_are_stripped_from_plain_bodies() {
        assert_eq!(strip_reply_fallback("> <@a:b> !games\n> more\n\n!join"), "!join");
        assert_eq!(strip_reply_fallback("> <@a:b> only a quote"), "");
        assert_eq!(strip_reply_fallback("!join"), "!join");
        assert_eq!(strip_reply_fallback(">not a fallback"), ">not a fallback");
    }

    proptest::proptest! {
        #[test]
        fn html_to_text_never_panics(text in "[a-z!<>&;#/ \"'=-]{0,200}") {
            let _ = html_to_text(&text);
        }

        #[test]
        fn rendered_html_reads_back_as_the_plain_body(words in "[a-zA-Z0-9!<>&\"' ]{1,60}") {
            let text = RichText::new().bold(words.clone());
            let out = render(&text, names);
            let collapsed = words.split_whitespace().collect::<Vec<_>>().join(" ");
            proptest::prop_assert_eq!(html_to_text(&out.html), collapsed);
        }
    }
}
