//! Reading an inbound message's `org.matrix.custom.html`, with no I/O: [`html_to_text`]
//! reduces it to the plain text the command parser reads, [`html_to_rich`] to the
//! [`RichText`] relayed to other networks, and [`strip_reply_fallback`] removes the quote
//! an older client puts before a reply's plain `body`.
//!
//! Both readers walk the same tokens: tags are recognised leniently (a stray `<` is text),
//! comments and the elements in `SKIPPED` (the reply quote `<mx-reply>` among them) are
//! dropped with their content, entities are decoded, `<br>` and block elements end a line
//! and runs of whitespace collapse outside `<pre>`. Linear in the input; never fails.

use matrix_sdk::ruma::UserId;
use spellbridge_core::text::{Hue, Style};
use spellbridge_core::{PlayerId, RichText};

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

/// Reduces `org.matrix.custom.html` to plain text: tags dropped (their text kept, a pill
/// as the name it shows), the reply quote dropped, `<br>` and block elements as line
/// breaks, entities decoded, runs of whitespace collapsed outside `<pre>`.
pub fn html_to_text(html: &str) -> String {
    let mut out = Text::default();
    let mut pre = 0usize;
    for token in Tokens::new(html) {
        match token {
            Token::Text(text) => out.push_text(&decode_entities(text), pre > 0),
            Token::Tag(tag) => match tag.name.as_str() {
                "br" => out.newline(true),
                name if BLOCKS.contains(&name) => {
                    if name == "pre" && !tag.self_closing {
                        pre = if tag.closing { pre.saturating_sub(1) } else { pre + 1 };
                    }
                    out.newline(false);
                }
                _ => {}
            },
        }
    }
    out.finish()
}

/// Reads `org.matrix.custom.html` as rich text, with the same lines and spacing as
/// [`html_to_text`]: `<b>`/`<strong>` bold, `<i>`/`<em>` italic, `<code>`/`<pre>` code,
/// `<font>`/`<span>` with `data-mx-color` (or a font's `color`) as the nearest game
/// [`Hue`] when one is close (plain otherwise), and a user pill
/// (`<a href="https://matrix.to/#/@user:server">name</a>`, or a `matrix:u/…` URI) as a
/// mention of that user, its shown name dropped. One run has one style: code wins over a
/// colour, a colour over bold, bold over italic. Every other element keeps its text.
pub fn html_to_rich(html: &str) -> RichText {
    let mut out = Rich::default();
    let (mut bold, mut italic, mut code, mut pre) = (0usize, 0usize, 0usize, 0usize);
    let mut colours: Vec<Option<Hue>> = Vec::new();
    let mut in_pill = false;
    for token in Tokens::new(html) {
        let tag = match token {
            Token::Text(text) => {
                if !in_pill {
                    let hue = colours.iter().rev().find_map(|c| *c);
                    let run = match (code + pre > 0, hue, bold > 0, italic > 0) {
                        (true, ..) => Run::Styled(Style::Code),
                        (false, Some(hue), ..) => Run::Coloured(hue),
                        (false, None, true, _) => Run::Styled(Style::Bold),
                        (false, None, false, true) => Run::Styled(Style::Italic),
                        (false, None, false, false) => Run::Styled(Style::Plain),
                    };
                    out.push_text(&decode_entities(text), pre > 0, run);
                }
                continue;
            }
            Token::Tag(tag) => tag,
        };
        if tag.self_closing {
            if tag.name == "br" || BLOCKS.contains(&tag.name.as_str()) {
                out.newline(tag.name == "br");
            }
            continue;
        }
        let nest = |depth: &mut usize| {
            *depth = if tag.closing { depth.saturating_sub(1) } else { *depth + 1 };
        };
        match tag.name.as_str() {
            "b" | "strong" => nest(&mut bold),
            "i" | "em" => nest(&mut italic),
            "code" => nest(&mut code),
            "font" | "span" if tag.closing => {
                colours.pop();
            }
            "font" | "span" => {
                let colour = tag
                    .attribute("data-mx-color")
                    .or_else(|| if tag.name == "font" { tag.attribute("color") } else { None });
                colours.push(colour.as_deref().and_then(nearest_hue));
            }
            "a" if tag.closing => in_pill = false,
            "a" => {
                if let Some(user) = tag.attribute("href").as_deref().and_then(pill_user) {
                    out.mention(user);
                    in_pill = true;
                }
            }
            "br" => out.newline(true),
            name if BLOCKS.contains(&name) => {
                if name == "pre" {
                    nest(&mut pre);
                }
                out.newline(false);
            }
            _ => {}
        }
    }
    out.finish()
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

/// The user a pill links to: `https://matrix.to/#/@user:server` (percent-encoded or not,
/// a `?via=` query ignored) or `matrix:u/user:server`; `None` for any other link (rooms,
/// events, web pages) or an invalid user id.
fn pill_user(href: &str) -> Option<PlayerId> {
    let id = if let Some(rest) = href.strip_prefix("https://matrix.to/#/") {
        percent_decode(rest.split('?').next().unwrap_or(rest))?
    } else {
        let rest = href.strip_prefix("matrix:u/")?;
        format!("@{}", percent_decode(rest.split(['?', '/']).next().unwrap_or(rest))?)
    };
    UserId::parse(&id).ok().map(|user| PlayerId::new(user.as_str()))
}

/// Decodes `%XX` escapes; `None` when they do not make UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%')
            .then(|| text.get(i + 1..i + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(byte) => {
                out.push(byte);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// Colours that stand for each hue: the ones `format::render` draws, and the plain
/// colours other clients and bridges pick for the same words.
const HUE_COLOURS: [(Hue, [u8; 3]); 18] = [
    (Hue::Red, [0xd2, 0x3c, 0x3c]),
    (Hue::Red, [0xff, 0x00, 0x00]),
    (Hue::Red, [0xb2, 0x22, 0x22]),
    (Hue::Blue, [0x3c, 0x78, 0xd8]),
    (Hue::Blue, [0x00, 0x00, 0xff]),
    (Hue::Blue, [0x00, 0x00, 0x7f]),
    (Hue::Brown, [0xa0, 0x69, 0x3c]),
    (Hue::Brown, [0xa5, 0x2a, 0x2a]),
    (Hue::Brown, [0x8b, 0x45, 0x13]),
    (Hue::Green, [0x3c, 0x9a, 0x50]),
    (Hue::Green, [0x00, 0xff, 0x00]),
    (Hue::Green, [0x00, 0x80, 0x00]),
    (Hue::Yellow, [0xc8, 0xa0, 0x00]),
    (Hue::Yellow, [0xff, 0xff, 0x00]),
    (Hue::Yellow, [0xff, 0xd7, 0x00]),
    (Hue::Grey, [0x8c, 0x8c, 0x8c]),
    (Hue::Grey, [0x80, 0x80, 0x80]),
    (Hue::Grey, [0xa9, 0xa9, 0xa9]),
];

/// How far (Euclidean, in RGB) a colour may be from a hue's colour to count as that hue;
/// black, white, purple and the like are further from every one and stay plain.
const HUE_DISTANCE: u32 = 110;

/// The game hue nearest to a CSS colour (`#rrggbb`, `#rgb` or a basic colour name), if
/// one is near enough.
fn nearest_hue(colour: &str) -> Option<Hue> {
    let rgb = parse_colour(colour.trim())?;
    let distance = |c: &[u8; 3]| -> u32 {
        rgb.iter().zip(c).map(|(a, b)| (i32::from(*a) - i32::from(*b)).unsigned_abs().pow(2)).sum()
    };
    let (hue, colour) = HUE_COLOURS.iter().min_by_key(|(_, c)| distance(c))?;
    (distance(colour) <= HUE_DISTANCE * HUE_DISTANCE).then_some(*hue)
}

fn parse_colour(colour: &str) -> Option<[u8; 3]> {
    let named = match colour.to_ascii_lowercase().as_str() {
        "red" => Some([0xff, 0, 0]),
        "blue" => Some([0, 0, 0xff]),
        "green" => Some([0, 0x80, 0]),
        "lime" => Some([0, 0xff, 0]),
        "yellow" => Some([0xff, 0xff, 0]),
        "brown" => Some([0xa5, 0x2a, 0x2a]),
        "grey" | "gray" => Some([0x80, 0x80, 0x80]),
        "black" => Some([0, 0, 0]),
        "white" => Some([0xff, 0xff, 0xff]),
        _ => None,
    };
    if named.is_some() {
        return named;
    }
    let hex = colour.strip_prefix('#')?;
    if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let digit = |i: usize, width: usize| u8::from_str_radix(&hex[i * width..(i + 1) * width], 16).ok();
    match hex.len() {
        6 => Some([digit(0, 2)?, digit(1, 2)?, digit(2, 2)?]),
        3 => {
            let short = |i| digit(i, 1).map(|d| d * 17);
            Some([short(0)?, short(1)?, short(2)?])
        }
        _ => None,
    }
}

/// A piece of HTML to read.
enum Token<'a> {
    /// Text between tags, entities not decoded yet.
    Text(&'a str),
    /// A start or end tag that is not skipped.
    Tag(Tag<'a>),
}

/// The tokens of an HTML string, with comments and skipped elements (and everything in
/// them) left out.
struct Tokens<'a> {
    rest: &'a str,
    /// Inside a skipped element: its name and how deeply it is nested in itself.
    skipping: Option<(String, usize)>,
}

impl<'a> Tokens<'a> {
    fn new(html: &'a str) -> Self {
        Tokens { rest: html, skipping: None }
    }
}

impl<'a> Iterator for Tokens<'a> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        loop {
            if self.rest.is_empty() {
                return None;
            }
            let open = self.rest.find('<').unwrap_or(self.rest.len());
            if open > 0 {
                let (text, rest) = self.rest.split_at(open);
                self.rest = rest;
                if self.skipping.is_none() {
                    return Some(Token::Text(text));
                }
                continue;
            }
            if let Some(comment) = self.rest.strip_prefix("<!--") {
                self.rest = comment.find("-->").map_or("", |end| &comment[end + 3..]);
                continue;
            }
            let Some(tag) = Tag::parse(self.rest) else {
                // A `<` that does not start a tag is text.
                let (text, rest) = self.rest.split_at(1);
                self.rest = rest;
                if self.skipping.is_none() {
                    return Some(Token::Text(text));
                }
                continue;
            };
            self.rest = &self.rest[tag.len..];
            if let Some((name, depth)) = &mut self.skipping {
                if tag.name == *name {
                    if tag.closing {
                        *depth -= 1;
                        if *depth == 0 {
                            self.skipping = None;
                        }
                    } else if !tag.self_closing {
                        *depth += 1;
                    }
                }
                continue;
            }
            if SKIPPED.contains(&tag.name.as_str()) && !tag.closing && !tag.self_closing {
                self.skipping = Some((tag.name, 1));
                continue;
            }
            return Some(Token::Tag(tag));
        }
    }
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

/// How a character of rich text is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Run {
    Styled(Style),
    Coloured(Hue),
}

/// One piece of rich text being built: a character in its run, or a mention.
enum Piece {
    Char(char, Run),
    Mention(PlayerId),
}

impl Piece {
    fn is_newline(&self) -> bool {
        matches!(self, Piece::Char('\n', _))
    }

    fn is_space(&self) -> bool {
        matches!(self, Piece::Char(c, _) if c.is_whitespace() && *c != '\n')
    }
}

/// Rich text being built from HTML, spaced and broken into lines as [`Text`] does.
#[derive(Default)]
struct Rich {
    pieces: Vec<Piece>,
    /// A collapsed space (in the run it was written in) waits before the next word.
    space: Option<Run>,
}

impl Rich {
    fn at_line_start(&self) -> bool {
        self.pieces.last().is_none_or(Piece::is_newline)
    }

    fn push_text(&mut self, text: &str, preformatted: bool, run: Run) {
        if preformatted {
            self.flush_space();
            self.pieces
                .extend(text.chars().filter(|c| !c.is_control() || *c == '\n').map(|c| Piece::Char(c, run)));
            return;
        }
        for c in text.chars() {
            if c.is_whitespace() {
                // A run of spaces across elements keeps the run it started in.
                if self.space.is_none() && !self.at_line_start() {
                    self.space = Some(run);
                }
            } else if !c.is_control() {
                self.flush_space();
                self.pieces.push(Piece::Char(c, run));
            }
        }
    }

    fn mention(&mut self, player: PlayerId) {
        self.flush_space();
        self.pieces.push(Piece::Mention(player));
    }

    fn flush_space(&mut self) {
        if let Some(run) = self.space.take() {
            self.pieces.push(Piece::Char(' ', run));
        }
    }

    fn newline(&mut self, always: bool) {
        self.space = None;
        if always || !self.at_line_start() {
            self.pieces.push(Piece::Char('\n', Run::Styled(Style::Plain)));
        }
    }

    /// The rich text: each line's trailing spaces and the whole text's leading and
    /// trailing whitespace dropped, then characters of one run joined into a segment.
    fn finish(self) -> RichText {
        let mut kept: Vec<Piece> = Vec::with_capacity(self.pieces.len());
        for piece in self.pieces {
            if piece.is_newline() {
                while kept.last().is_some_and(Piece::is_space) {
                    kept.pop();
                }
            }
            if kept.is_empty() && (piece.is_space() || piece.is_newline()) {
                continue;
            }
            kept.push(piece);
        }
        while kept.last().is_some_and(|p| p.is_space() || p.is_newline()) {
            kept.pop();
        }
        let mut rich = RichText::new();
        let mut run: Option<(Run, String)> = None;
        for piece in kept {
            match piece {
                Piece::Char(c, r) => match &mut run {
                    Some((current, text)) if *current == r => text.push(c),
                    _ => {
                        rich = append_run(rich, run.take());
                        run = Some((r, c.to_string()));
                    }
                },
                Piece::Mention(player) => {
                    rich = append_run(rich, run.take()).mention(&player);
                }
            }
        }
        append_run(rich, run)
    }
}

fn append_run(rich: RichText, run: Option<(Run, String)>) -> RichText {
    match run {
        None => rich,
        Some((Run::Styled(Style::Plain), text)) => rich.text(text),
        Some((Run::Styled(Style::Bold), text)) => rich.bold(text),
        Some((Run::Styled(Style::Italic), text)) => rich.italic(text),
        Some((Run::Styled(Style::Code), text)) => rich.code(text),
        Some((Run::Coloured(hue), text)) => rich.coloured(text, hue),
    }
}

/// One start or end tag.
struct Tag<'a> {
    /// Lower-case element name.
    name: String,
    closing: bool,
    self_closing: bool,
    /// What follows the name up to the closing `>`: the attributes.
    attributes: &'a str,
    /// Bytes from `<` to `>` inclusive.
    len: usize,
}

impl<'a> Tag<'a> {
    /// Reads a tag at the start of `text` (which starts with `<`); `None` if it is not
    /// one (no name right after `<` or `</`, or no closing `>`).
    fn parse(text: &'a str) -> Option<Tag<'a>> {
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
            attributes: body,
            len: 1 + usize::from(closing) + name_len + end + 1,
        })
    }

    /// The value of an attribute (name compared case-insensitively), entities decoded;
    /// `None` when the tag does not have it. A bare attribute has the empty value.
    fn attribute(&self, wanted: &str) -> Option<String> {
        let mut rest = self.attributes;
        loop {
            rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '/');
            if rest.is_empty() {
                return None;
            }
            let name_end =
                rest.find(|c: char| c.is_whitespace() || c == '=' || c == '/').unwrap_or(rest.len());
            let name = &rest[..name_end];
            rest = rest[name_end..].trim_start();
            let mut value = "";
            if let Some(after) = rest.strip_prefix('=') {
                let after = after.trim_start();
                let (found, remaining) = match after.chars().next() {
                    Some(quote @ ('"' | '\'')) => {
                        let inner = &after[1..];
                        let end = inner.find(quote).unwrap_or(inner.len());
                        (&inner[..end], inner.get(end + 1..).unwrap_or(""))
                    }
                    _ => {
                        let end = after.find(char::is_whitespace).unwrap_or(after.len());
                        after.split_at(end)
                    }
                };
                value = found;
                rest = remaining;
            }
            // Each pass consumes a name or a stray `=`, so the loop ends.
            if !name.is_empty() && name.eq_ignore_ascii_case(wanted) {
                return Some(decode_entities(value));
            }
        }
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

#[cfg(test)]
mod tests {
    use spellbridge_core::text::Segment;

    use super::super::format;
    use super::*;

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
        assert_eq!(html_to_rich(html), RichText::new().text("!join"));
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

    #[test]
    fn styles_become_rich_runs() {
        let rich = html_to_rich(
            "<b>Fire</b> and <strong>more</strong>, <i>Water</i> <em>too</em>: <code>!cast x</code>",
        );
        assert_eq!(
            rich,
            RichText::new()
                .bold("Fire")
                .text(" and ")
                .bold("more")
                .text(", ")
                .italic("Water")
                .text(" ")
                .italic("too")
                .text(": ")
                .code("!cast x")
        );
        let pre = html_to_rich("<p>run</p><pre><code>a  b\n c</code></pre>");
        assert_eq!(pre, RichText::new().text("run\n").code("a  b\n c"));
        // Code wins over bold; bold inside italic is bold.
        let nested = html_to_rich("<strong><code>x</code></strong> <em>a <b>b</b></em>");
        assert_eq!(nested, RichText::new().code("x").text(" ").italic("a ").bold("b"));
    }

    #[test]
    fn colours_become_the_nearest_hue_or_stay_plain() {
        let rich = html_to_rich(
            "<font color=\"#ff0000\" data-mx-color=\"#ff0000\">Fire</font> \
             <span data-mx-color=\"#3C78D8\">Water</span> <font color=\"green\">Air</font> \
             <span data-mx-color=\"#000000\">ink</span> <font data-mx-color=\"#ff0\">Bolt</font> \
             <span>bare</span>",
        );
        assert_eq!(
            rich,
            RichText::new()
                .coloured("Fire", Hue::Red)
                .text(" ")
                .coloured("Water", Hue::Blue)
                .text(" ")
                .coloured("Air", Hue::Green)
                .text(" ink ")
                .coloured("Bolt", Hue::Yellow)
                .text(" bare")
        );
        // A colour inside a colourless span still applies; nesting unwinds.
        let nested = html_to_rich("<font data-mx-color=\"#8c8c8c\">a <span>b</span></font> c");
        assert_eq!(nested, RichText::new().coloured("a b", Hue::Grey).text(" c"));
    }

    #[test]
    fn pills_become_mentions_and_other_links_keep_their_text() {
        let rich = html_to_rich(
            "<a href=\"https://matrix.to/#/@bob:localhost\">Bob</a>, <a href='https://matrix.to/#/%40carol%3Alocalhost?via=x'>Carol</a> \
             and <a href=\"matrix:u/dave:localhost\">Dave</a>: see <a href=\"https://example.org\">this</a> \
             in <a href=\"https://matrix.to/#/#room:localhost\">#room</a>",
        );
        assert_eq!(
            rich.segments(),
            &[
                Segment::Mention(PlayerId::new("@bob:localhost")),
                Segment::Text { text: ", ".into(), style: Style::Plain },
                Segment::Mention(PlayerId::new("@carol:localhost")),
                Segment::Text { text: " and ".into(), style: Style::Plain },
                Segment::Mention(PlayerId::new("@dave:localhost")),
                Segment::Text { text: ": see this in #room".into(), style: Style::Plain },
            ]
        );
        assert_eq!(rich.plain(), "@bob:localhost, @carol:localhost and @dave:localhost: see this in #room");
    }

    #[test]
    fn rich_text_has_the_same_lines_and_spacing_as_plain_text() {
        let html = "  <p> one <b> two </b></p><p>three&amp;<br/>four </p>  ";
        let rich = html_to_rich(html);
        assert_eq!(rich.plain(), html_to_text(html));
        assert_eq!(rich, RichText::new().text("one ").bold("two").text("\nthree&\nfour"));
        assert!(html_to_rich("  <p> </p> ").is_empty());
    }

    #[test]
    fn what_the_bot_renders_reads_back_as_the_same_rich_text() {
        let text = RichText::new()
            .bold("Fire")
            .text(" burns ")
            .mention(&PlayerId::new("@bob:localhost"))
            .text(": type ")
            .code("!cast <x>")
            .text(" ")
            .italic("now")
            .text(" ")
            .coloured("Thunder", Hue::Yellow)
            .text(" ")
            .coloured("Earth", Hue::Brown);
        let rendered = format::render(&text, |_| Some("Bob".to_owned()));
        assert_eq!(html_to_rich(&rendered.html), text);
        for hue in [Hue::Red, Hue::Blue, Hue::Brown, Hue::Green, Hue::Yellow, Hue::Grey] {
            assert_eq!(nearest_hue(format::hue_colour(hue)), Some(hue));
        }
    }

    #[test]
    fn attributes_are_read_leniently() {
        let tag = Tag::parse("<a HREF = 'x&amp;y' title=plain data-x>").expect("a tag");
        assert_eq!(tag.attribute("href").as_deref(), Some("x&y"));
        assert_eq!(tag.attribute("title").as_deref(), Some("plain"));
        assert_eq!(tag.attribute("data-x").as_deref(), Some(""));
        assert_eq!(tag.attribute("missing"), None);
        let odd = Tag::parse("<a = =x / href=y>").expect("a tag");
        assert_eq!(odd.attribute("href").as_deref(), Some("y"));
        assert_eq!(odd.attribute("").as_deref(), None);
    }

    proptest::proptest! {
        #[test]
        fn html_to_text_never_panics(text in "[a-z!<>&;#/ \"'=-]{0,200}") {
            let _ = html_to_text(&text);
        }

        #[test]
        fn html_to_rich_never_panics_and_reads_as_the_text(text in "[a-z!<>&;#/ \"'=%:@-]{0,200}") {
            let rich = html_to_rich(&text);
            // Without pills (whose text differs: the id, not the shown name) the two agree.
            if !text.contains("href") {
                proptest::prop_assert_eq!(rich.plain().replace('`', ""), html_to_text(&text).replace('`', ""));
            }
        }
    }
}
