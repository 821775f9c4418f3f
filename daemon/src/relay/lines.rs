//! The lines one relayed message becomes: every line starts with its speaker, and there
//! are at most a bridge's `relay_lines` of them.
//!
//! The message's own line breaks (`\n`, `\r`, and the other characters a client shows as
//! one) each start a new line, and a line longer than [`LINE_BYTES`] is wrapped at a
//! space (or, for a word longer than that, between characters), so that each line is one
//! IRC line and a break the sender chose, or one they provoked with padding, can never
//! begin a line that looks said by someone else. Past the cap, one more line says how
//! many were left out: `<bob> … (135 more lines)`.

use spellbridge_core::locale::{self, Args};
use spellbridge_core::text::{Hue, Segment, Style};
use spellbridge_core::{Language, RichText};

/// How many lines of one message are relayed when the bridge does not say.
pub const DEFAULT_LINES: usize = 5;

/// The longest relayed line in bytes as IRC shows it, speaker and formatting codes
/// included (each change of look counted as [`LOOK_BYTES`]). An IRC line leaves at least
/// 328 bytes for text (512 less a 110-byte `:nick!user@host ` with a 63-byte host, a
/// 64-byte channel, `PRIVMSG`, the separators and `\r\n`), and an acted line's CTCP
/// wrapper takes 9: a relayed line is never broken again by the IRC transport, so no piece
/// of it goes without its speaker.
pub const LINE_BYTES: usize = 300;

/// The fewest bytes of the message a line carries, however long the speaker's name (a
/// speaker's head is at most 134 bytes: two names of [`NAME_BYTES`](super::speaker::NAME_BYTES)).
const MIN_TEXT: usize = 60;

/// What a change of look may cost in formatting codes: a colour's `\x03NN` and its close,
/// or a style's toggles, with room to spare.
const LOOK_BYTES: usize = 8;

/// How a character looks: a style, or a game word's colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Look {
    Styled(Style),
    Hued(Hue),
}

/// One piece that is never split: a character with its look, or a whole mention.
#[derive(Clone, Debug)]
enum Unit {
    Char(char, Look),
    Whole(Segment),
}

impl Unit {
    /// Its bytes as IRC shows it after `before`: its text, and [`LOOK_BYTES`] where it
    /// starts a formatted run (a mention, a style, a colour).
    fn bytes(&self, before: Option<&Unit>) -> usize {
        match self {
            Unit::Char(c, look) => {
                let starts_run = *look != Look::Styled(Style::Plain)
                    && !matches!(before, Some(Unit::Char(_, previous)) if previous == look);
                c.len_utf8() + if starts_run { LOOK_BYTES } else { 0 }
            }
            Unit::Whole(segment) => RichText::new().push(segment.clone()).plain().len() + LOOK_BYTES,
        }
    }

    fn is_space(&self) -> bool {
        matches!(self, Unit::Char(' ', _))
    }
}

/// Characters that end a line where chat clients show them.
fn breaks_line(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{0B}' | '\u{0C}' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// The lines of a relayed message: `head` (the speaker, e.g. `<bob> `) then a piece of
/// `body`, at most `cap` of them (at least one) and then, if any were left out, a line
/// saying how many. Empty when the body has no visible text.
pub fn lines(head: &str, body: &RichText, cap: usize) -> Vec<RichText> {
    lines_in(head, body, cap, Language::En)
}

/// [`lines`] with the line saying how many were left out in `language` (the room's the
/// lines go to).
pub fn lines_in(head: &str, body: &RichText, cap: usize, language: Language) -> Vec<RichText> {
    let budget = LINE_BYTES.saturating_sub(head.len()).max(MIN_TEXT);
    let all: Vec<Vec<Unit>> = source_lines(body).into_iter().flat_map(|line| wrap(&line, budget)).collect();
    let cap = cap.max(1);
    let left_out = all.len().saturating_sub(cap);
    let mut lines: Vec<RichText> =
        all.into_iter().take(cap).map(|line| RichText::new().text(head).append(rebuild(&line))).collect();
    if left_out > 0 {
        let args = Args::new().text("head", head).num("count", left_out);
        lines.push(RichText::new().text(locale::text(language, "notice-more-lines", &args)));
    }
    lines
}

/// The body cut at its line breaks, tabs as spaces, other control characters dropped;
/// lines with nothing but spaces are left out.
fn source_lines(body: &RichText) -> Vec<Vec<Unit>> {
    let mut lines: Vec<Vec<Unit>> = vec![Vec::new()];
    for segment in body.segments() {
        let (text, look) = match segment {
            Segment::Text { text, style } => (text, Look::Styled(*style)),
            Segment::Coloured { text, hue } => (text, Look::Hued(*hue)),
            whole => {
                if let Some(line) = lines.last_mut() {
                    line.push(Unit::Whole(whole.clone()));
                }
                continue;
            }
        };
        for c in text.chars() {
            if breaks_line(c) {
                lines.push(Vec::new());
            } else if let Some(line) = lines.last_mut() {
                match c {
                    '\t' => line.push(Unit::Char(' ', look)),
                    c if c.is_control() => {}
                    c => line.push(Unit::Char(c, look)),
                }
            }
        }
    }
    lines.retain(|line| line.iter().any(|unit| !unit.is_space()));
    lines
}

/// One line as pieces of at most `budget` bytes as IRC shows them ([`Unit::bytes`]),
/// broken at spaces where it can be (the spaces at a break are dropped); a unit longer
/// than the budget goes alone.
fn wrap(line: &[Unit], budget: usize) -> Vec<Vec<Unit>> {
    let mut pieces = Vec::new();
    let mut start = 0;
    while start < line.len() {
        while line.get(start).is_some_and(Unit::is_space) {
            start += 1;
        }
        if start == line.len() {
            break;
        }
        let (mut end, mut used) = (start, 0);
        while let Some(unit) = line.get(end) {
            let before = if end == start { None } else { line.get(end - 1) };
            let bytes = unit.bytes(before);
            if used + bytes > budget {
                break;
            }
            used += bytes;
            end += 1;
        }
        end = end.max(start + 1);
        if line.get(end).is_some_and(|unit| !unit.is_space())
            && let Some(space) = (start + 1..end).rev().find(|i| line[*i].is_space())
        {
            end = space;
        }
        let mut piece = line[start..end].to_vec();
        while piece.last().is_some_and(Unit::is_space) {
            piece.pop();
        }
        pieces.push(piece);
        start = end;
    }
    pieces
}

/// Rich text again from units: neighbouring characters that look alike are one run.
fn rebuild(units: &[Unit]) -> RichText {
    let mut text = RichText::new();
    let mut run = String::new();
    let mut look = None;
    let flush = |text: RichText, run: &mut String, look: Option<Look>| match look {
        Some(_) if run.is_empty() => text,
        Some(Look::Styled(style)) => text.push(Segment::Text { text: std::mem::take(run), style }),
        Some(Look::Hued(hue)) => text.push(Segment::Coloured { text: std::mem::take(run), hue }),
        None => text,
    };
    for unit in units {
        match unit {
            Unit::Char(c, this) => {
                if look != Some(*this) {
                    text = flush(text, &mut run, look);
                    look = Some(*this);
                }
                run.push(*c);
            }
            Unit::Whole(segment) => {
                text = flush(text, &mut run, look);
                look = None;
                text = text.push(segment.clone());
            }
        }
    }
    flush(text, &mut run, look)
}

#[cfg(test)]
mod tests {
    use spellbridge_core::PlayerId;

    use super::*;

    fn plain(lines: &[RichText]) -> Vec<String> {
        lines.iter().map(RichText::plain).collect()
    }

    #[test]
    fn every_line_break_starts_a_line_that_starts_with_the_speaker() {
        let body = RichText::new().text("hi\n<alice> I concede\r\n\nok\u{2028}bye\rend");
        assert_eq!(
            plain(&lines("<bob> ", &body, 10)),
            ["<bob> hi", "<bob> <alice> I concede", "<bob> ok", "<bob> bye", "<bob> end"]
        );
    }

    #[test]
    fn a_long_line_wraps_at_spaces_and_each_piece_starts_with_the_speaker() {
        let padding = "x".repeat(LINE_BYTES - "<bob> ".len() - 1);
        let body = RichText::new().text(format!("{padding} <alice> I concede"));
        let out = plain(&lines("<bob> ", &body, 10));
        assert_eq!(out, [format!("<bob> {padding}"), "<bob> <alice> I concede".to_owned()]);
        let word = "y".repeat(2 * LINE_BYTES);
        for line in plain(&lines("<bob> ", &RichText::new().text(word), 10)) {
            assert!(line.starts_with("<bob> y") && line.len() <= LINE_BYTES, "{line}");
        }
    }

    #[test]
    fn formatting_and_mentions_survive_the_cuts() {
        let body = RichText::new().bold("strong\nwords").text(" to ").mention(&PlayerId::new("@al:hs"));
        let out = lines("<bob> ", &body, 10);
        assert_eq!(out[0], RichText::new().text("<bob> ").bold("strong"));
        assert_eq!(
            out[1],
            RichText::new().text("<bob> ").bold("words").text(" to ").mention(&PlayerId::new("@al:hs"))
        );
    }

    #[test]
    fn no_line_is_longer_than_an_irc_line_has_room_for_however_it_is_formatted() {
        use spellbridge_adapters::irc::format::{CodeStyle, render};
        /// The least room for text an IRC line leaves (see [`LINE_BYTES`]), less the
        /// CTCP ACTION wrapper.
        const IRC_TEXT: usize = 512 - 110 - "PRIVMSG ".len() - 64 - " :".len() - 2 - 9;
        let mut body = RichText::new();
        for i in 0..400 {
            body = match i % 4 {
                0 => body.bold("b"),
                1 => body.italic("é"),
                2 => body.coloured("1", Hue::Red),
                _ => body.text(" ").mention(&PlayerId::new("@someone:example.org")),
            };
        }
        let head = format!("<{} ({})> ", "名".repeat(21), "@x".repeat(32));
        for line in lines(&head, &body, 100) {
            // Every code style writes the same bytes or fewer than monospace.
            let rendered = render(&line, CodeStyle::Monospace);
            assert!(rendered.len() <= IRC_TEXT, "{} bytes: {rendered:?}", rendered.len());
            assert!(line.plain().starts_with(&head), "{}", line.plain());
        }
    }

    #[test]
    fn past_the_cap_one_line_says_how_many_were_left_out() {
        let body =
            RichText::new().text((1..=140).map(|n| format!("line {n}")).collect::<Vec<_>>().join("\n"));
        let out = plain(&lines("<bob> ", &body, 5));
        assert_eq!(out.len(), 6);
        assert_eq!(out[4], "<bob> line 5");
        assert_eq!(out[5], "<bob> … (135 more lines)");
        let two = plain(&lines("bob ", &RichText::new().text("a\nb\nc"), 2));
        assert_eq!(two, ["bob a", "bob b", "bob … (1 more line)"]);
        // In a Chinese room (issue 19).
        let zh = plain(&lines_in("<bob> ", &body, 5, Language::ZhCn));
        assert_eq!(zh[5], "<bob> ……（还有 135 行）");
    }

    #[test]
    fn a_body_of_nothing_visible_gives_no_lines() {
        assert!(lines("<bob> ", &RichText::new().text(" \n\t\r\n "), 5).is_empty());
    }
}
