//! mIRC formatting: [`render`] turns a [`RichText`] into a line with IRC formatting
//! codes (code as the network's [`CodeStyle`] says), [`strip`] removes every formatting code and control character from an inbound
//! line so the command parser sees plain text, and [`parse`] reads an inbound line into
//! [`RichText`] for relaying it to other networks.
//!
//! The codes (<https://modern.ircdocs.horse/formatting>): bold `\x02`, italic `\x1D`,
//! underline `\x1F`, strikethrough `\x1E`, monospace `\x11`, reverse `\x16`, reset
//! `\x0F`, colour `\x03[fg[,bg]]` (one or two decimal digits each) and hex colour
//! `\x04[RRGGBB[,RRGGBB]]`. The lexer and the [`FormatState`] that tracks which runs are
//! open are shared with the line splitter, which closes and re-opens runs at a cut.

use std::borrow::Cow;

use spellbridge_core::RichText;
use spellbridge_core::text::{Hue, Segment, Style};

use super::split::ENTRY;

const BOLD: char = '\x02';
const COLOUR: char = '\x03';
const HEX_COLOUR: char = '\x04';
const RESET: char = '\x0F';
const MONOSPACE: char = '\x11';
const REVERSE: char = '\x16';
const ITALIC: char = '\x1D';
const STRIKE: char = '\x1E';
const UNDERLINE: char = '\x1F';

/// How code (commands such as `!duel <player>`) is shown on an IRC network: the
/// `[[irc]] code_style` setting.
///
/// Monospace (`\x11`) is the code IRC has for it, but few clients know it: irssi shows
/// it as a reverse-video `Q` around the command (`Q!duel <player>Q`), and a command that
/// reads like that is one a player cannot copy. Bold reads well everywhere, so it is the
/// default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CodeStyle {
    /// `\x02`, as names are: every client shows it.
    #[default]
    Bold,
    /// `\x11`, for networks whose players' clients show it (WeeChat, HexChat, mIRC 7.5+).
    Monospace,
    /// No code at all: the command as plain text.
    Plain,
}

impl CodeStyle {
    /// Every style, in the order the setting's help lists them.
    pub const ALL: [CodeStyle; 3] = [CodeStyle::Bold, CodeStyle::Monospace, CodeStyle::Plain];

    /// The style's name in the config: `bold`, `monospace` or `plain`.
    pub fn name(self) -> &'static str {
        match self {
            CodeStyle::Bold => "bold",
            CodeStyle::Monospace => "monospace",
            CodeStyle::Plain => "plain",
        }
    }

    /// The style a config value names (exactly, in lower case), if any.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|style| style.name() == name)
    }

    /// The code that opens and closes a code run; `None` for plain text.
    fn code(self) -> Option<&'static str> {
        match self {
            CodeStyle::Bold => Some("\x02"),
            CodeStyle::Monospace => Some("\x11"),
            CodeStyle::Plain => None,
        }
    }
}

/// Renders rich text with mIRC codes, code as `code` says. Each run is closed where it ends, so the text after
/// it is unformatted; a colour is closed with `\x03`, or with `\x0F` when the next
/// character is a digit or a comma (which a client would read as part of the colour
/// code). Mentions are the player's nick: a Matrix id `@user:server` becomes `user`.
///
/// Control characters in the text are dropped (a tab becomes a space) except `\n`, which
/// the splitter turns into separate IRC lines; the output therefore contains no control
/// character other than `\n`, the formatting codes this function writes and the
/// [`ENTRY`] marks around a list's separators, which the splitter removes.
pub fn render(text: &RichText, code: CodeStyle) -> String {
    let pieces: Vec<(Option<&'static str>, Cow<'_, str>)> = text
        .segments()
        .iter()
        .map(|segment| match segment {
            Segment::Text { text, style: Style::Code } => (code.code(), sanitize(text)),
            Segment::Text { text, style } => (style_code(*style), sanitize(text)),
            Segment::Coloured { text, hue } => (Some(hue_code(*hue)), sanitize(text)),
            Segment::Mention(player) => (None, sanitize(mention_nick(player.as_str()))),
            Segment::Name(player) => (style_code(Style::Bold), sanitize(mention_nick(player.as_str()))),
            // The splitter cuts a long list here first (and drops the marks).
            Segment::Separator(text) => (None, Cow::Owned(format!("{ENTRY}{}{ENTRY}", sanitize(text)))),
            // IRC has no links: the words alone (the page is a message away, `!board`).
            Segment::Link { text, .. } => (None, sanitize(text)),
            // The transport writes its nick in first (`RichText::naming_bot`).
            Segment::Bot => (None, Cow::Borrowed("me")),
        })
        .filter(|(_, body)| !body.is_empty())
        .collect();

    // Each piece's body and at most two codes and a guard around it.
    let mut out = String::with_capacity(pieces.iter().map(|(_, body)| body.len() + 8).sum());
    for (i, (code, body)) in pieces.iter().enumerate() {
        let Some(code) = code else {
            out.push_str(body);
            continue;
        };
        out.push_str(code);
        let is_colour = code.starts_with(COLOUR);
        if is_colour && body.starts_with(',') {
            // "\x0304,5" would read as background 5: an empty bold run separates them.
            out.push(BOLD);
            out.push(BOLD);
        }
        out.push_str(body);
        let next = pieces.get(i + 1).and_then(|(code, body)| match code {
            Some(code) => code.chars().next(),
            None => body.chars().next(),
        });
        if is_colour {
            let ambiguous = next.is_some_and(|c| c.is_ascii_digit() || c == ',');
            out.push(if ambiguous { RESET } else { COLOUR });
        } else {
            // A toggle code closes its own run.
            out.push_str(code);
        }
    }
    out
}

/// Removes formatting codes and control characters from an inbound line: what is left is
/// what the command parser sees. A tab becomes a space; every other control character
/// (C0, DEL and C1, including `\r`, `\n` and the CTCP `\x01`) is dropped.
pub fn strip(line: &str) -> String {
    lex(line)
        .filter_map(|piece| match piece {
            Piece::Char(c) => Some(c),
            Piece::Code { .. } => None,
        })
        .filter_map(|c| match c {
            '\t' => Some(' '),
            c if c.is_control() => None,
            c => Some(c),
        })
        .collect()
}

/// Reads an inbound line into rich text, keeping what [`RichText`] can say: bold,
/// italic, monospace (as code) and the colours close to a [`Hue`]. Underline,
/// strikethrough, reverse and the other colours become plain text; `\x0F` resets.
///
/// A segment has one style or one hue, so where runs overlap the first of code, bold,
/// italic, colour wins (every network can show a style; a colour is only a hint).
/// Characters are cleaned as [`strip`] cleans them, so the segments' text is exactly
/// `strip(line)`. IRC has no mentions: a nick is plain text.
pub fn parse(line: &str) -> RichText {
    let mut runs: Vec<(Option<Segmenter>, String)> = Vec::new();
    let mut state = FormatState::default();
    for piece in lex(line) {
        let c = match piece {
            Piece::Code { control, .. } => {
                state.apply(control);
                continue;
            }
            Piece::Char('\t') => ' ',
            Piece::Char(c) if c.is_control() => continue,
            Piece::Char(c) => c,
        };
        let kind = state.segmenter();
        match runs.last_mut() {
            Some((last, text)) if *last == kind => text.push(c),
            _ => runs.push((kind, c.to_string())),
        }
    }
    runs.into_iter().fold(RichText::new(), |rich, (kind, text)| match kind {
        None => rich.text(text),
        Some(Segmenter::Style(Style::Bold)) => rich.bold(text),
        Some(Segmenter::Style(Style::Italic)) => rich.italic(text),
        Some(Segmenter::Style(Style::Code)) => rich.code(text),
        Some(Segmenter::Style(Style::Plain)) => rich.text(text),
        Some(Segmenter::Hue(hue)) => rich.coloured(text, hue),
    })
}

/// What segment a character becomes under a formatting state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Segmenter {
    Style(Style),
    Hue(Hue),
}

/// The hue of an mIRC palette colour, where one is close: the six the renderer writes
/// and their near neighbours (navy, light green, light grey). White, black, purple,
/// orange, cyan, pink and the extended colours 16–98 have none.
fn palette_hue(colour: u8) -> Option<Hue> {
    match colour {
        4 => Some(Hue::Red),
        2 | 12 => Some(Hue::Blue),
        5 => Some(Hue::Brown),
        3 | 9 => Some(Hue::Green),
        8 => Some(Hue::Yellow),
        14 | 15 => Some(Hue::Grey),
        _ => None,
    }
}

/// The nick to show for a player id: `@user:server` (a Matrix id) becomes `user`;
/// anything else is shown as it is.
fn mention_nick(id: &str) -> &str {
    id.strip_prefix('@')
        .and_then(|rest| rest.split_once(':'))
        .filter(|(user, server)| !user.is_empty() && !server.is_empty())
        .map_or(id, |(user, _)| user)
}

/// The text with control characters dropped, tabs as spaces, and `\n` kept: borrowed
/// when it has none (a game's words almost never do).
fn sanitize(text: &str) -> Cow<'_, str> {
    if !has_control(text) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .filter_map(|c| match c {
                '\n' => Some('\n'),
                '\t' => Some(' '),
                c if c.is_control() => None,
                c => Some(c),
            })
            .collect(),
    )
}

/// True when `text` has a control character (C0, DEL or C1; [`char::is_control`]),
/// found byte by byte: C0 and DEL are single bytes, C1 is `\xC2` then `\x80`–`\x9F`.
pub(crate) fn has_control(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().any(|(i, &b)| {
        b < 0x20 || b == 0x7F || (b == 0xC2 && bytes.get(i + 1).is_some_and(|next| *next < 0xA0))
    })
}

fn style_code(style: Style) -> Option<&'static str> {
    match style {
        Style::Plain => None,
        Style::Bold => Some("\x02"),
        Style::Italic => Some("\x1D"),
        Style::Code => CodeStyle::Monospace.code(),
    }
}

/// The mIRC colour of a hue, always two digits so a following digit is not read as part
/// of the code.
fn hue_code(hue: Hue) -> &'static str {
    match hue {
        Hue::Red => "\x0304",
        Hue::Blue => "\x0312",
        Hue::Brown => "\x0305",
        Hue::Green => "\x0303",
        Hue::Yellow => "\x0308",
        Hue::Grey => "\x0314",
    }
}

/// One formatting control read from a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Control {
    Bold,
    Italic,
    Underline,
    Strike,
    Monospace,
    Reverse,
    Reset,
    /// `\x03` with its digits; `Colour::None` for a bare `\x03`, which resets colours.
    Colour(Colour),
}

/// A colour as set by `\x03` or `\x04`. A foreground-only code keeps the background.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Colour {
    /// No colour (the default, or after a bare `\x03` / `\x04`).
    #[default]
    None,
    /// A palette colour (`\x03fg[,bg]`).
    Palette { fg: u8, bg: Option<u8> },
    /// A hex colour (`\x04RRGGBB[,RRGGBB]`).
    Hex { fg: u32, bg: Option<u32> },
}

/// A piece of a line: a character, or a formatting code with its exact source text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Piece<'a> {
    Char(char),
    Code { raw: &'a str, control: Control },
}

impl Piece<'_> {
    /// The piece's length in bytes as it appears in the line.
    pub(crate) fn len(&self) -> usize {
        match self {
            Piece::Char(c) => c.len_utf8(),
            Piece::Code { raw, .. } => raw.len(),
        }
    }
}

/// Splits a line into characters and formatting codes. Every byte of the line belongs to
/// exactly one piece, so concatenating the pieces gives the line back.
pub(crate) fn lex(line: &str) -> impl Iterator<Item = Piece<'_>> + '_ {
    let mut rest = line;
    std::iter::from_fn(move || {
        let c = rest.chars().next()?;
        let toggle = match c {
            BOLD => Some(Control::Bold),
            ITALIC => Some(Control::Italic),
            UNDERLINE => Some(Control::Underline),
            STRIKE => Some(Control::Strike),
            MONOSPACE => Some(Control::Monospace),
            REVERSE => Some(Control::Reverse),
            RESET => Some(Control::Reset),
            _ => None,
        };
        let (len, piece_control) = match (c, toggle) {
            (_, Some(control)) => (1, Some(control)),
            (COLOUR, None) => {
                let (len, colour) = lex_palette(&rest[1..]);
                (1 + len, Some(Control::Colour(colour)))
            }
            (HEX_COLOUR, None) => {
                let (len, colour) = lex_hex(&rest[1..]);
                (1 + len, Some(Control::Colour(colour)))
            }
            _ => (c.len_utf8(), None),
        };
        let (raw, tail) = rest.split_at(len);
        rest = tail;
        Some(match piece_control {
            Some(control) => Piece::Code { raw, control },
            None => Piece::Char(c),
        })
    })
}

/// Reads `fg[,bg]` after `\x03`: one or two digits each; a comma is part of the code
/// only when a digit follows it. Returns the bytes read and the colour.
fn lex_palette(s: &str) -> (usize, Colour) {
    let digits = |s: &str| s.bytes().take(2).take_while(u8::is_ascii_digit).count();
    let fg_len = digits(s);
    if fg_len == 0 {
        return (0, Colour::None);
    }
    let fg = number(&s[..fg_len], 10);
    let bg_digits = s[fg_len..].strip_prefix(',').unwrap_or_default();
    let bg_len = digits(bg_digits);
    if bg_len == 0 {
        return (fg_len, Colour::Palette { fg: fg as u8, bg: None });
    }
    let bg = number(&bg_digits[..bg_len], 10);
    (fg_len + 1 + bg_len, Colour::Palette { fg: fg as u8, bg: Some(bg as u8) })
}

/// Reads `RRGGBB[,RRGGBB]` after `\x04`. Returns the bytes read and the colour.
fn lex_hex(s: &str) -> (usize, Colour) {
    let is_hex = |s: &str| s.len() >= 6 && s.bytes().take(6).all(|b| b.is_ascii_hexdigit());
    if !is_hex(s) {
        return (0, Colour::None);
    }
    let fg = number(&s[..6], 16);
    if let Some(bg) = s[6..].strip_prefix(',').filter(|bg| is_hex(bg)) {
        let bg = number(&bg[..6], 16);
        return (13, Colour::Hex { fg, bg: Some(bg) });
    }
    (6, Colour::Hex { fg, bg: None })
}

/// Parses digits the lexer has already checked (at most six), so it cannot fail.
fn number(digits: &str, radix: u32) -> u32 {
    digits.chars().filter_map(|c| c.to_digit(radix)).fold(0, |n, d| n * radix + d)
}

/// Which formatting runs are open at a point of a line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct FormatState {
    bold: bool,
    italic: bool,
    underline: bool,
    strike: bool,
    monospace: bool,
    reverse: bool,
    colour: Colour,
}

impl FormatState {
    /// Applies one control to the state.
    pub(crate) fn apply(&mut self, control: Control) {
        match control {
            Control::Bold => self.bold = !self.bold,
            Control::Italic => self.italic = !self.italic,
            Control::Underline => self.underline = !self.underline,
            Control::Strike => self.strike = !self.strike,
            Control::Monospace => self.monospace = !self.monospace,
            Control::Reverse => self.reverse = !self.reverse,
            Control::Reset => *self = FormatState::default(),
            Control::Colour(colour) => {
                self.colour = match (self.colour, colour) {
                    // A foreground-only code keeps the background of the same kind.
                    (Colour::Palette { bg: old, .. }, Colour::Palette { fg, bg: None }) => {
                        Colour::Palette { fg, bg: old }
                    }
                    (Colour::Hex { bg: old, .. }, Colour::Hex { fg, bg: None }) => {
                        Colour::Hex { fg, bg: old }
                    }
                    (_, colour) => colour,
                }
            }
        }
    }

    /// The segment text in this state becomes (`None`: plain); see [`parse`].
    fn segmenter(&self) -> Option<Segmenter> {
        let hue = match self.colour {
            Colour::Palette { fg, .. } => palette_hue(fg),
            Colour::None | Colour::Hex { .. } => None,
        };
        if self.monospace {
            Some(Segmenter::Style(Style::Code))
        } else if self.bold {
            Some(Segmenter::Style(Style::Bold))
        } else if self.italic {
            Some(Segmenter::Style(Style::Italic))
        } else {
            hue.map(Segmenter::Hue)
        }
    }

    /// True when no run is open.
    pub(crate) fn is_plain(&self) -> bool {
        *self == FormatState::default()
    }

    /// The codes that open this state on a fresh line: the colour first (always with
    /// two-digit numbers), then the toggles. Empty for the plain state.
    pub(crate) fn reopen(&self) -> String {
        let mut out = String::new();
        match self.colour {
            Colour::None => {}
            Colour::Palette { fg, bg } => {
                out.push_str(&format!("\x03{fg:02}"));
                if let Some(bg) = bg {
                    out.push_str(&format!(",{bg:02}"));
                }
            }
            Colour::Hex { fg, bg } => {
                out.push_str(&format!("\x04{fg:06X}"));
                if let Some(bg) = bg {
                    out.push_str(&format!(",{bg:06X}"));
                }
            }
        }
        for (open, code) in [
            (self.bold, BOLD),
            (self.italic, ITALIC),
            (self.underline, UNDERLINE),
            (self.strike, STRIKE),
            (self.monospace, MONOSPACE),
            (self.reverse, REVERSE),
        ] {
            if open {
                out.push(code);
            }
        }
        out
    }

    /// True when [`FormatState::reopen`] ends with a colour code, so a comma written
    /// right after it would be read as part of the code.
    pub(crate) fn reopen_ends_with_colour(&self) -> bool {
        self.colour != Colour::None
            && !(self.bold || self.italic || self.underline || self.strike || self.monospace || self.reverse)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use spellbridge_core::PlayerId;

    use super::*;

    /// The style that round-trips: code stays code.
    const MONO: CodeStyle = CodeStyle::Monospace;

    #[test]
    fn styles_and_hues_become_closed_runs() {
        let text = RichText::new()
            .bold("Fire")
            .text(" and ")
            .italic("Water")
            .text(": ")
            .code("!cast")
            .text(" ")
            .coloured("Earth", Hue::Brown);
        assert_eq!(render(&text, MONO), "\x02Fire\x02 and \x1DWater\x1D: \x11!cast\x11 \x0305Earth\x03");
    }

    #[test]
    fn code_is_bold_monospace_or_plain_as_the_network_says() {
        let text = RichText::new().text("Type ").code("!duel <player>").text(" to play.");
        assert_eq!(render(&text, CodeStyle::Bold), "Type \x02!duel <player>\x02 to play.");
        assert_eq!(render(&text, CodeStyle::Monospace), "Type \x11!duel <player>\x11 to play.");
        assert_eq!(render(&text, CodeStyle::Plain), "Type !duel <player> to play.");
        assert_eq!(CodeStyle::default(), CodeStyle::Bold, "irssi shows \\x11 as a reverse Q");
        // Every style reads back as the same words; only monospace reads back as code.
        for style in CodeStyle::ALL {
            assert_eq!(strip(&render(&text, style)), "Type !duel <player> to play.", "{style:?}");
        }
        assert_eq!(parse(&render(&text, CodeStyle::Monospace)), text);
        let bold = RichText::new().text("Type ").bold("!duel <player>").text(" to play.");
        assert_eq!(parse(&render(&text, CodeStyle::Bold)), bold);
    }

    #[test]
    fn bold_code_next_to_a_name_or_a_colour_keeps_both_runs_closed() {
        let text =
            RichText::new().name(&PlayerId::new("alice")).code("!cast").coloured("Fire", Hue::Red).code("3");
        assert_eq!(render(&text, CodeStyle::Bold), "\x02alice\x02\x02!cast\x02\x0304Fire\x03\x023\x02");
        assert_eq!(render(&text, CodeStyle::Plain), "\x02alice\x02!cast\x0304Fire\x0F3");
    }

    #[test]
    fn code_style_names_are_the_config_words() {
        for style in CodeStyle::ALL {
            assert_eq!(CodeStyle::parse(style.name()), Some(style));
        }
        assert_eq!(CodeStyle::parse("Bold"), None);
        assert_eq!(CodeStyle::parse("mono"), None);
    }

    #[test]
    fn every_hue_has_its_two_digit_colour() {
        let cases = [
            (Hue::Red, "04"),
            (Hue::Blue, "12"),
            (Hue::Brown, "05"),
            (Hue::Green, "03"),
            (Hue::Yellow, "08"),
            (Hue::Grey, "14"),
        ];
        for (hue, digits) in cases {
            let text = RichText::new().coloured("x", hue);
            assert_eq!(render(&text, MONO), format!("\x03{digits}x\x03"));
        }
    }

    #[test]
    fn a_colour_followed_by_a_digit_or_comma_closes_with_reset() {
        let digit = RichText::new().coloured("Fire", Hue::Red).text("3 damage");
        assert_eq!(render(&digit, MONO), "\x0304Fire\x0F3 damage");
        let comma = RichText::new().coloured("Fire", Hue::Red).text(",5");
        assert_eq!(render(&comma, MONO), "\x0304Fire\x0F,5");
        let letter = RichText::new().coloured("Fire", Hue::Red).text(" hits");
        assert_eq!(render(&letter, MONO), "\x0304Fire\x03 hits");
    }

    #[test]
    fn a_coloured_word_starting_with_a_comma_is_not_read_as_background() {
        let text = RichText::new().coloured(",5", Hue::Blue);
        let rendered = render(&text, MONO);
        assert_eq!(rendered, "\x0312\x02\x02,5\x03");
        assert_eq!(strip(&rendered), ",5");
    }

    #[test]
    fn names_are_bold_nicks() {
        let text = RichText::new().name(&PlayerId::new("alice")).text(": surge fire");
        assert_eq!(render(&text, MONO), "\x02alice\x02: surge fire");
    }

    #[test]
    fn mentions_are_nicks() {
        let render_one = |id: &str| render(&RichText::new().mention(&PlayerId::new(id)), MONO);
        assert_eq!(render_one("alice"), "alice");
        assert_eq!(render_one("@alice:example.org"), "alice");
        assert_eq!(render_one("@alice"), "@alice");
        assert_eq!(render_one("@:example.org"), "@:example.org");
        assert_eq!(render_one("@alice:"), "@alice:");
        assert_eq!(render_one("bob:work"), "bob:work");
    }

    #[test]
    fn control_characters_in_text_are_dropped_but_newlines_kept() {
        let text = RichText::new().bold("a\x02b\x03c\r\n\td\x01");
        assert_eq!(render(&text, MONO), "\x02abc\n d\x02");
    }

    #[test]
    fn strip_removes_every_code_and_control() {
        let line = "\x02b\x02 \x1Di\x1D \x1Fu\x1F \x1Es\x1E \x11m\x11 \x16r\x16 \x0Fx";
        assert_eq!(strip(line), "b i u s m r x");
        assert_eq!(strip("\x034red\x03 \x0304,12on blue\x03"), "red on blue");
        assert_eq!(strip("\x03,5 not a colour"), ",5 not a colour");
        assert_eq!(strip("\x0312,x"), ",x");
        assert_eq!(strip("\x03123"), "3");
        assert_eq!(strip("\x04FF0000red\x04 \x04FF0000,00ff00both\x04"), "red both");
        assert_eq!(strip("\x04FF00short"), "FF00short");
        assert_eq!(strip("\x01ACTION waves\x01"), "ACTION waves");
        assert_eq!(strip("!cast\tfire\r\n\x00\x7f\u{85}"), "!cast fire");
    }

    #[test]
    fn the_lexer_keeps_every_byte() {
        let line = "a\x0304,05b\x04ABCDEF,012345c\x03,\x02é";
        let joined: String = lex(line)
            .map(|p| match p {
                Piece::Char(c) => c.to_string(),
                Piece::Code { raw, .. } => raw.to_owned(),
            })
            .collect();
        assert_eq!(joined, line);
    }

    #[test]
    fn state_tracks_toggles_colours_and_reset() {
        let mut state = FormatState::default();
        for piece in lex("\x02\x0304,05\x0307\x1D") {
            if let Piece::Code { control, .. } = piece {
                state.apply(control);
            }
        }
        assert_eq!(state.reopen(), "\x0307,05\x02\x1D");
        assert!(!state.reopen_ends_with_colour());
        state.apply(Control::Reset);
        assert!(state.is_plain());
        assert_eq!(state.reopen(), "");
    }

    #[test]
    fn parse_reads_styles_and_colours() {
        let line = "\x02Fire\x02 and \x1DWater\x1D: \x11!cast\x11 \x0305Earth\x03 \x034,1red\x03.";
        let expected = RichText::new()
            .bold("Fire")
            .text(" and ")
            .italic("Water")
            .text(": ")
            .code("!cast")
            .text(" ")
            .coloured("Earth", Hue::Brown)
            .text(" ")
            .coloured("red", Hue::Red)
            .text(".");
        assert_eq!(parse(line), expected);
    }

    #[test]
    fn parse_maps_near_colours_to_hues_and_others_to_plain() {
        let hue = |code: &str| parse(&format!("\x03{code}x")).segments().first().cloned();
        let coloured = |hue| Some(Segment::Coloured { text: "x".into(), hue });
        let plain = Some(Segment::Text { text: "x".into(), style: Style::Plain });
        for (code, expected) in [
            ("04", Hue::Red),
            ("02", Hue::Blue),
            ("12", Hue::Blue),
            ("05", Hue::Brown),
            ("03", Hue::Green),
            ("9", Hue::Green),
            ("08", Hue::Yellow),
            ("14", Hue::Grey),
            ("15", Hue::Grey),
        ] {
            assert_eq!(hue(code), coloured(expected), "colour {code}");
        }
        for code in ["00", "01", "06", "07", "10", "11", "13", "52", "99"] {
            assert_eq!(hue(code), plain, "colour {code}");
        }
        assert_eq!(parse("\x04FF0000x"), RichText::new().text("x"), "hex colours are plain");
        // The foreground decides, not the background.
        assert_eq!(parse("\x0301,04x"), RichText::new().text("x"));
    }

    #[test]
    fn parse_drops_underline_strike_reverse_and_resets() {
        let line = "\x1Fu\x1F \x1Es\x1E \x16r\x16 \x02\x1Fbold under\x0F plain \x0304red\x0F!";
        let expected = RichText::new()
            .text("u s r ")
            .bold("bold under")
            .text(" plain ")
            .coloured("red", Hue::Red)
            .text("!");
        assert_eq!(parse(line), expected);
    }

    #[test]
    fn parse_prefers_code_then_bold_then_italic_then_colour() {
        assert_eq!(parse("\x0304\x1D\x02\x11x"), RichText::new().code("x"));
        assert_eq!(parse("\x0304\x1D\x02x"), RichText::new().bold("x"));
        assert_eq!(parse("\x0304\x1Dx"), RichText::new().italic("x"));
        // An unclosed run ends with the line; adjacent runs of one kind merge.
        assert_eq!(parse("a\x02b\x02\x02c"), RichText::new().text("a").bold("bc"));
    }

    #[test]
    fn parse_cleans_text_as_strip_does() {
        let line = "!cast\tfire\x01\x07 \x03,5 not a colour\x0312,x";
        assert_eq!(parse(line).plain(), strip(line));
        assert_eq!(parse(""), RichText::new());
        assert_eq!(parse("\x02\x02\x0304\x03"), RichText::new());
    }

    #[test]
    fn parse_of_render_gives_the_rich_text_back() {
        let text = RichText::new()
            .bold("Fire")
            .text(" deals ")
            .coloured("3", Hue::Red)
            .text("3 damage to ")
            .coloured(",5", Hue::Blue)
            .text(", ")
            .italic("ouch")
            .text(" ")
            .code("!status");
        assert_eq!(parse(&render(&text, MONO)), text);
    }

    fn any_segment() -> impl Strategy<Value = (u8, String)> {
        (0u8..11, any::<String>())
    }

    fn segments() -> impl Strategy<Value = Vec<(u8, String)>> {
        prop::collection::vec(any_segment(), 0..8)
    }

    fn code_style() -> impl Strategy<Value = CodeStyle> {
        prop::sample::select(CodeStyle::ALL.to_vec())
    }

    fn build(segments: &[(u8, String)]) -> RichText {
        let hues = [Hue::Red, Hue::Blue, Hue::Brown, Hue::Green, Hue::Yellow, Hue::Grey];
        segments.iter().fold(RichText::new(), |text, (kind, body)| match kind {
            0 => text.text(body.as_str()),
            1 => text.bold(body.as_str()),
            2 => text.italic(body.as_str()),
            3 => text.code(body.as_str()),
            4 => text.mention(&PlayerId::new(body.as_str())),
            k => text.coloured(body.as_str(), hues[usize::from(k - 5) % hues.len()]),
        })
    }

    /// What a player reads: the words of every segment, mentions as nicks, code without
    /// backticks, control characters dropped and tabs as spaces.
    fn visible(segments: &[(u8, String)]) -> String {
        segments
            .iter()
            .map(|(kind, body)| if *kind == 4 { mention_nick(body) } else { body.as_str() })
            .flat_map(str::chars)
            .filter_map(|c| match c {
                '\t' => Some(' '),
                c if c.is_control() => None,
                c => Some(c),
            })
            .collect()
    }

    const FORMATTING: [char; 9] =
        [BOLD, COLOUR, HEX_COLOUR, RESET, MONOSPACE, REVERSE, ITALIC, STRIKE, UNDERLINE];

    /// Each character of rich text with the segment kind it is in; mentions are their
    /// nick in plain text.
    fn styled(text: &RichText) -> Vec<(char, Option<Segmenter>)> {
        let mut out = Vec::new();
        for segment in text.segments() {
            let (body, kind) = match segment {
                Segment::Text { text, style: Style::Plain } => (text.as_str(), None),
                Segment::Text { text, style } => (text.as_str(), Some(Segmenter::Style(*style))),
                Segment::Coloured { text, hue } => (text.as_str(), Some(Segmenter::Hue(*hue))),
                Segment::Mention(player) => (mention_nick(player.as_str()), None),
                Segment::Name(player) => (mention_nick(player.as_str()), Some(Segmenter::Style(Style::Bold))),
                Segment::Separator(text) | Segment::Link { text, .. } => (text.as_str(), None),
                Segment::Bot => ("me", None),
            };
            out.extend(body.chars().filter(|c| !c.is_control()).map(|c| (c, kind)));
        }
        out
    }

    #[test]
    fn text_without_controls_is_borrowed_and_with_them_cleaned() {
        for clean in ["Fire · 火 \u{a0}\u{F0000}", "", "\u{c2a0}"] {
            assert!(matches!(sanitize(clean), Cow::Borrowed(_)), "{clean:?}");
        }
        assert_eq!(sanitize("a\x01b\x02\r\n\tc\x7f\u{85}\u{9f}d"), "ab\n cd");
    }

    proptest! {
        #[test]
        fn has_control_is_any_control_character(text in any::<String>()) {
            prop_assert_eq!(has_control(&text), text.chars().any(char::is_control));
        }

        #[test]
        fn strip_of_render_is_the_visible_text(segments in segments(), style in code_style()) {
            let rich = build(&segments);
            prop_assert_eq!(strip(&render(&rich, style)), visible(&segments));
        }

        #[test]
        fn render_writes_no_control_but_codes_and_newlines(segments in segments(), style in code_style()) {
            let rendered = render(&build(&segments), style);
            for c in rendered.chars() {
                prop_assert!(!c.is_control() || c == '\n' || FORMATTING.contains(&c), "{:?}", c);
            }
            // Every run is closed: the line ends in the plain state.
            let mut state = FormatState::default();
            for piece in lex(&rendered) {
                if let Piece::Code { control, .. } = piece {
                    state.apply(control);
                }
            }
            prop_assert!(state.is_plain());
        }

        #[test]
        fn parse_of_render_keeps_every_character_in_its_style(segments in segments()) {
            // Inbound lines carry no control characters but codes; tabs are spaces.
            let clean: Vec<(u8, String)> = segments
                .iter()
                .map(|(kind, body)| (*kind, body.chars().filter(|c| !c.is_control()).collect()))
                .collect();
            let rich = build(&clean);
            prop_assert_eq!(styled(&parse(&render(&rich, MONO))), styled(&rich));
        }

        #[test]
        fn render_of_parse_keeps_the_styles(line in "[\\x02\\x03\\x04\\x0F\\x11\\x16\\x1D\\x1E\\x1F,0-9a-f \u{e9}]{0,60}") {
            let rich = parse(&line);
            prop_assert_eq!(parse(&render(&rich, MONO)), rich.clone());
            prop_assert_eq!(strip(&render(&rich, MONO)), strip(&line));
        }

        #[test]
        fn strip_never_leaves_a_control_char(line in any::<String>()) {
            let stripped = strip(&line);
            prop_assert!(stripped.chars().all(|c| !c.is_control()));
        }

        #[test]
        fn strip_handles_dense_codes(line in "[\\x00-\\x20,0-9a-fA-F\u{e9}\u{4e2d}]{0,40}") {
            let stripped = strip(&line);
            prop_assert!(stripped.chars().all(|c| !c.is_control()));
            prop_assert_eq!(strip(&stripped), stripped.clone());
        }
    }
}
